"""A convolutional classifier trained with Adadelta and a StepLR schedule, on
Fashion-MNIST: the recipe of PyTorch's MNIST example, written as PyTorch code.

    python3 mnist_cnn.py [--epochs 1] [--train-size 2000] [--save-model] ...

Prints the test loss and accuracy after each epoch and, last, one line
`RESULT {json}`. Reads Debian's dataset-fashion-mnist with bench/programs/_data.py."""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

import _data
from _example import add_common_args, test, train


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def dataset(train, limit, root):
    images, labels = _data.fashion_mnist(train, limit, root)
    x = torch.from_numpy(images).float().div(255).sub(_data.MEAN).div(_data.STD).unsqueeze(1)
    return TensorDataset(x, torch.from_numpy(labels))


def main():
    parser = argparse.ArgumentParser(description='PyTorch MNIST-style example on Fashion-MNIST')
    parser.add_argument('--batch-size', type=int, default=64, metavar='N',
                        help='input batch size for training (default: 64)')
    parser.add_argument('--test-batch-size', type=int, default=1000, metavar='N',
                        help='input batch size for testing (default: 1000)')
    parser.add_argument('--epochs', type=int, default=1, metavar='N',
                        help='number of epochs to train (default: 1)')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR',
                        help='learning rate (default: 1.0)')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M',
                        help='Learning rate step gamma (default: 0.7)')
    parser.add_argument('--no-cuda', action='store_true', default=False,
                        help='disables CUDA training')
    parser.add_argument('--no-mps', action='store_true', default=False,
                        help='disables macOS GPU training')
    parser.add_argument('--dry-run', action='store_true', default=False,
                        help='quickly check a single pass')
    add_common_args(parser, train_size=2000)
    parser.add_argument('--init', metavar='PATH', help='start from this state_dict')
    parser.add_argument('--save-init', metavar='PATH', help='save the initial state_dict here')
    parser.add_argument('--save-model', action='store_true', default=False,
                        help='For Saving the current Model')
    parser.add_argument('--save-path', default='mnist_cnn.pt', help='where --save-model writes')
    args = parser.parse_args()
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    use_mps = not args.no_mps and torch.backends.mps.is_available()

    torch.manual_seed(args.seed)

    if use_cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device("cpu")

    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_cuda:
        cuda_kwargs = {'num_workers': 1,
                       'pin_memory': True,
                       'shuffle': True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)

    train_loader = DataLoader(dataset(True, args.train_size, args.data_root), shuffle=True, **train_kwargs)
    test_loader = DataLoader(dataset(False, args.test_size, args.data_root), **test_kwargs)

    model = Net().to(device)
    if args.init:
        model.load_state_dict(torch.load(args.init))
    if args.save_init:
        torch.save(model.state_dict(), args.save_init)
    result = {}
    if args.init or args.save_init:  # the initial weights' test loss: the same on any library
        result['init_test_loss'], _ = test(model, device, test_loader)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    train_seconds = 0.0
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        train(args, model, device, train_loader, optimizer, epoch)
        train_seconds += time.perf_counter() - start
        loss, accuracy = test(model, device, test_loader)
        scheduler.step()

    if args.save_model:
        torch.save(model.state_dict(), args.save_path)
    result.update(loss=loss, accuracy=accuracy, seconds_per_epoch=train_seconds / args.epochs,
                  lr=optimizer.param_groups[0]['lr'])
    print('RESULT ' + json.dumps(result))


if __name__ == '__main__':
    main()
