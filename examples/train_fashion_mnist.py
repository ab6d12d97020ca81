"""Trains a LeNet-style CNN on Fashion-MNIST with Ember: the README's first demo.

It is ordinary PyTorch code with `import ember` in place of `import torch`:
a Module, a DataLoader, SGD with momentum, a checkpoint and a plot. Run it with
`make demo`, or from a checkout:

    PYTHONPATH=python /usr/bin/python3 examples/train_fashion_mnist.py --epochs 3

The data comes from Debian's dataset-fashion-mnist package (IDX files in
/usr/share/datasets/fashion-mnist). examples/train_fashion_mnist.c trains the
same network through the C API.
"""
import argparse
import os
import sys
import time

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler, TensorDataset
from ember.utils.data.datasets import FashionMNIST

MEAN, STD = 0.2860, 0.3530  # of the training images scaled to [0, 1]


class LeNet(nn.Module):
    """conv 5x5 (1->6, pad 2) - relu - pool 2, conv 5x5 (6->16) - relu - pool 2, fc 400-120-84-10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):                           # (N, 1, 28, 28)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)  # (N, 6, 14, 14)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # (N, 16, 5, 5)
        x = x.flatten(1)                            # (N, 400)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)                          # (N, 10) logits


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--epochs', type=int, default=3)
    p.add_argument('--batch-size', type=int, default=64)
    p.add_argument('--lr', type=float, default=0.01)
    p.add_argument('--threads', type=int, default=None, help="Ember's intra-op threads (default: all cores)")
    p.add_argument('--workers', type=int, default=0, help='DataLoader worker processes')
    p.add_argument('--data-root', default=FashionMNIST.default_root)
    p.add_argument('--out', default=default_out_dir(), help='folder for the checkpoint and the plot')
    p.add_argument('--limit', type=int, default=None, help='use only the first N samples of each set')
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args(argv)
    if args.epochs < 1 or args.batch_size < 1:
        p.error('--epochs and --batch-size must be positive')
    return args


def default_out_dir():
    """build/demo in a checkout (beside the build), else a folder in /tmp."""
    build = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'build')
    return os.path.normpath(os.path.join(build, 'demo')) if os.path.isdir(build) else '/tmp/ember-demo'


def load_split(args, train):
    """A DataLoader of whole (uint8 images, labels) batches: the sampler yields
    lists of indices and the dataset gathers each batch with one indexing op,
    instead of 64 per-sample fetches and a collate."""
    raw = FashionMNIST(args.data_root, train=train)
    images, labels = raw.data[:args.limit].unsqueeze(1), raw.targets[:args.limit]  # (N, 1, 28, 28), (N)
    dataset = TensorDataset(images, labels)
    order = RandomSampler(dataset) if train else SequentialSampler(dataset)
    batches = BatchSampler(order, args.batch_size if train else 1000, drop_last=False)
    return DataLoader(dataset, batch_size=None, sampler=batches, num_workers=args.workers)


def normalize(images):
    return (images.float() / 255 - MEAN) / STD


class Progress:
    """A live bar for one epoch: tqdm when it is installed, else one line
    rewritten in place (carriage return) at most ten times a second."""

    def __init__(self, total, desc):
        self.total, self.desc, self.done = total, desc, 0
        self.start = self.shown = time.perf_counter()
        try:
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc=desc, unit='img', unit_scale=True, leave=True)
        except ImportError:
            self.bar = None

    def update(self, n, loss):
        self.done += n
        if self.bar is not None:
            self.bar.set_postfix(loss=f'{loss:.4f}', refresh=False)
            self.bar.update(n)
            return
        now = time.perf_counter()
        if now - self.shown >= 0.1 or self.done == self.total:
            self.shown = now
            rate = self.done / max(now - self.start, 1e-9)
            sys.stderr.write(f'\r{self.desc}: {self.done:6d}/{self.total} '
                             f'{100 * self.done / self.total:3.0f}% {rate:7.0f} samples/s loss {loss:.4f}')
            sys.stderr.flush()

    def close(self):
        if self.bar is not None:
            self.bar.close()
        else:
            sys.stderr.write('\n')


def train_epoch(model, loader, optimizer, epoch, losses):
    """One pass over the training set; appends the running loss to `losses`
    every 50 batches. Returns seconds spent in data / forward+backward / step."""
    model.train()
    times = dict(data=0.0, forward_backward=0.0, step=0.0)
    progress = Progress(len(loader.dataset), f'epoch {epoch}')
    running, count = 0.0, 0
    t0 = time.perf_counter()
    for images, labels in loader:
        x = normalize(images)
        t1 = time.perf_counter()
        loss = F.cross_entropy(model(x), labels)
        optimizer.zero_grad()
        loss.backward()
        t2 = time.perf_counter()
        optimizer.step()
        t3 = time.perf_counter()
        running, count = running + loss.item(), count + 1
        progress.update(len(labels), running / count)
        if count % 50 == 0 or count == len(loader):
            losses.append((epoch - 1 + count / len(loader), running / count))
        times['data'] += t1 - t0
        times['forward_backward'] += t2 - t1
        times['step'] += t3 - t2
        t0 = time.perf_counter()
    progress.close()
    return times


@ember.no_grad()
def evaluate(model, loader):
    """Fraction of correctly classified samples."""
    model.eval()
    correct = 0
    for images, labels in loader:
        correct += int((model(normalize(images)).argmax(1) == labels).sum())
    return correct / len(loader.dataset)


def save_plot(path, losses, accuracies):
    """Loss and accuracy curves as a PNG; False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(*zip(*losses))
    left.set(xlabel='epoch', ylabel='training loss (running mean)', title='Loss')
    right.plot(range(1, len(accuracies) + 1), accuracies, marker='o')
    right.set(xlabel='epoch', ylabel='test accuracy', title='Accuracy')
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        ember.set_num_threads(args.threads)
    ember.manual_seed(args.seed)
    try:
        train_loader, test_loader = load_split(args, True), load_split(args, False)
    except RuntimeError as e:  # the dataset is missing: say how to get it
        print(f'error: {e}', file=sys.stderr)
        return 1
    model = LeNet()
    optimizer = ember.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    os.makedirs(args.out, exist_ok=True)
    checkpoint = os.path.join(args.out, 'fashion_mnist.safetensors')
    print(f'Fashion-MNIST: {len(train_loader.dataset)} training, {len(test_loader.dataset)} test images; '
          f'{ember.get_num_threads()} thread(s), batch {args.batch_size}')

    losses, accuracies, start = [], [], time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        t = time.perf_counter()
        times = train_epoch(model, train_loader, optimizer, epoch, losses)
        train_s = time.perf_counter() - t
        accuracies.append(evaluate(model, test_loader))
        print(f'epoch {epoch}: test accuracy {accuracies[-1]:.4f}, {train_s:.2f} s training '
              f'(data {times["data"]:.2f} s, forward+backward {times["forward_backward"]:.2f} s, '
              f'step {times["step"]:.2f} s)')
        ember.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'epoch': epoch}, checkpoint)

    plot = os.path.join(args.out, 'fashion_mnist.png')
    plotted = save_plot(plot, losses, accuracies)
    print(f'checkpoint: {checkpoint}')
    print(f'plot: {plot}' if plotted else 'plot: skipped (matplotlib is not installed: apt-get install python3-matplotlib)')
    print(f'final test accuracy {accuracies[-1]:.4f} after {args.epochs} epoch(s), '
          f'total time {time.perf_counter() - start:.1f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
