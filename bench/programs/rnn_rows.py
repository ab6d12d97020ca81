"""An LSTM that reads Fashion-MNIST images row by row (28 steps of 28
pixels) and classifies them from its last output, fed by a DataLoader with
worker processes: the structure of PyTorch's mnist_rnn example, written as
PyTorch code.

    python3 rnn_rows.py [--epochs 1] [--num-workers 2] [--train-size 4000] ...

Prints the test loss and accuracy after each epoch and, last, one line
`RESULT {json}`."""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset

import _data
from _example import add_common_args, test, train


class FashionRows(Dataset):
    """Fashion-MNIST images as (28, 28) float tensors, normalized, one sample
    at a time (the collate stacks them), as a torchvision dataset would."""

    def __init__(self, train, limit, root):
        self.images, self.labels = _data.fashion_mnist(train, limit, root)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        image = torch.from_numpy(self.images[index]).float().div(255)
        return (image - _data.MEAN) / _data.STD, int(self.labels[index])


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.rnn = nn.LSTM(input_size=28, hidden_size=64, batch_first=True)
        self.batchnorm = nn.BatchNorm1d(64)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, input):
        # Shape of input is (batch_size, 28, 28): each image is a sequence of 28 rows
        output, hidden = self.rnn(input)

        # RNN output shape is (batch, seq_len, hidden): keep the last step's
        output = output[:, -1, :]
        output = self.batchnorm(output)
        output = self.dropout1(output)
        output = self.fc1(output)
        output = F.relu(output)
        output = self.dropout2(output)
        output = self.fc2(output)
        output = F.log_softmax(output, dim=1)
        return output


def main():
    parser = argparse.ArgumentParser(description='PyTorch row-by-row RNN example on Fashion-MNIST')
    parser.add_argument('--batch-size', type=int, default=64, metavar='N',
                        help='input batch size for training (default: 64)')
    parser.add_argument('--test-batch-size', type=int, default=1000, metavar='N',
                        help='input batch size for testing (default: 1000)')
    parser.add_argument('--epochs', type=int, default=1, metavar='N',
                        help='number of epochs to train (default: 1)')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR',
                        help='learning rate (default: 1.0; the example: 0.1 over 14 epochs)')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M',
                        help='learning rate step gamma (default: 0.7)')
    parser.add_argument('--num-workers', type=int, default=2, help='DataLoader worker processes (default: 2)')
    parser.add_argument('--cuda', action='store_true', default=False,
                        help='enables CUDA training')
    parser.add_argument('--dry-run', action='store_true', default=False,
                        help='quickly check a single pass')
    add_common_args(parser, train_size=4000)
    parser.add_argument('--save-model', action='store_true', default=False,
                        help='for Saving the current Model')
    parser.add_argument('--save-path', default='rnn_rows.pt', help='where --save-model writes')
    args = parser.parse_args()

    device = torch.device('cuda' if args.cuda and torch.cuda.is_available() else 'cpu')
    torch.manual_seed(args.seed)

    kwargs = {'num_workers': args.num_workers, 'pin_memory': True} if args.cuda else {'num_workers': args.num_workers}
    train_loader = DataLoader(FashionRows(True, args.train_size, args.data_root),
                              batch_size=args.batch_size, shuffle=True, **kwargs)
    test_loader = DataLoader(FashionRows(False, args.test_size, args.data_root),
                             batch_size=args.test_batch_size, shuffle=False, **kwargs)

    model = Net().to(device)
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
    print('RESULT ' + json.dumps({'loss': loss, 'accuracy': accuracy,
                                  'seconds_per_epoch': train_seconds / args.epochs}))


if __name__ == '__main__':
    main()
