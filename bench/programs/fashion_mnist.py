"""The README's Fashion-MNIST demo (examples/train_fashion_mnist.py, which
is written against `ember`) as a PyTorch program: the same LeNet-style
network, normalisation and recipe (SGD, lr 0.01, momentum 0.9, batch 64,
3 epochs, whole-batch loading), so that PyTorch runs what the demo runs.

    python3 fashion_mnist.py [--epochs 3] [--limit N] ...

Prints the test accuracy after each epoch and, last, one line `RESULT {json}`."""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler, TensorDataset

import _data


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(x.flatten(1)))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def loader(train, args):
    images, labels = _data.fashion_mnist(train, args.limit, args.data_root)
    dataset = TensorDataset(torch.from_numpy(images).unsqueeze(1), torch.from_numpy(labels))
    order = RandomSampler(dataset) if train else SequentialSampler(dataset)
    return DataLoader(dataset, batch_size=None, num_workers=args.workers,
                      sampler=BatchSampler(order, args.batch_size if train else 1000, drop_last=False))


def normalize(images):
    return (images.float() / 255 - _data.MEAN) / _data.STD


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--epochs', type=int, default=3)
    p.add_argument('--batch-size', type=int, default=64)
    p.add_argument('--lr', type=float, default=0.01)
    p.add_argument('--workers', type=int, default=0, help='DataLoader worker processes')
    p.add_argument('--limit', type=int, default=None, help='use only the first N samples of each set')
    p.add_argument('--data-root', default=_data.FASHION_ROOT)
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    train_loader, test_loader = loader(True, args), loader(False, args)
    model = LeNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    train_seconds = 0.0
    for epoch in range(1, args.epochs + 1):
        model.train()
        start = time.perf_counter()
        for images, labels in train_loader:
            loss = F.cross_entropy(model(normalize(images)), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        train_seconds += time.perf_counter() - start
        model.eval()
        correct, total_loss = 0, 0.0
        with torch.no_grad():
            for images, labels in test_loader:
                out = model(normalize(images))
                total_loss += F.cross_entropy(out, labels, reduction='sum').item()
                correct += (out.argmax(1) == labels).sum().item()
        accuracy = correct / len(test_loader.dataset)
        print(f'epoch {epoch}: test accuracy {accuracy:.4f}')
    print('RESULT ' + json.dumps({'loss': total_loss / len(test_loader.dataset), 'accuracy': accuracy,
                                  'seconds_per_epoch': train_seconds / args.epochs}))


if __name__ == '__main__':
    main()
