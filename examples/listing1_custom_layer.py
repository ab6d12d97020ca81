"""Listing 1 of the PyTorch paper (Paszke et al., 2019): a custom layer with
its own Parameters, and a model that uses it after a convolution; trained a
few steps to classify synthetic images (noisy copies of 10 random patterns).

    /usr/bin/python3 examples/listing1_custom_layer.py [--steps 100] [--channels 128] [--size 12]

Replacing `import ember as torch` by `import torch` runs it on PyTorch.
Two fixes to the listing as printed: the linear layer reads the relu's output
(t2, not t1), and the convolution's output is averaged over the image so that
its 128 channels feed the 128 inputs of the custom layer."""
import argparse

import ember as torch

nn = torch.nn


class LinearLayer(nn.Module):
    def __init__(self, in_sz, out_sz):
        super().__init__()
        t1 = torch.randn(in_sz, out_sz) / in_sz ** 0.5   # the listing's randn, scaled
        self.w = nn.Parameter(t1)
        t2 = torch.randn(out_sz)
        self.b = nn.Parameter(t2)

    def forward(self, activations):
        t = torch.mm(activations, self.w)
        return t + self.b


class FullBasicModel(nn.Module):
    def __init__(self, channels=128, classes=10):
        super().__init__()
        self.conv = nn.Conv2d(1, channels, 3)
        self.fc = LinearLayer(channels, classes)

    def forward(self, x):
        t1 = self.conv(x)
        t2 = nn.functional.relu(t1)
        t3 = self.fc(t2.mean((2, 3)))          # (N, channels, H, W) -> (N, channels)
        return nn.functional.softmax(t3, dim=1)


def synthetic_images(patterns, n, noise):
    """n noisy copies of randomly chosen patterns, with their labels."""
    labels = torch.randint(patterns.size(0), (n,))
    return patterns[labels] + noise * torch.randn(n, *patterns.shape[1:]), labels


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--steps', type=int, default=100)
    p.add_argument('--batch', type=int, default=64)
    p.add_argument('--channels', type=int, default=128)
    p.add_argument('--size', type=int, default=12, help='images are size x size')
    p.add_argument('--noise', type=float, default=0.5)
    p.add_argument('--lr', type=float, default=0.5)
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)

    patterns = torch.randn(10, 1, args.size, args.size)
    model = FullBasicModel(args.channels)
    print(model)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for step in range(1, args.steps + 1):
        x, y = synthetic_images(patterns, args.batch, args.noise)
        probs = model(x)
        # negative log-likelihood of the right class, read off the softmax
        loss = -probs.gather(1, y[:, None]).clamp_min(1e-8).log().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == 1:
            first = loss.item()
        if step % max(1, args.steps // 6) == 0 or step == args.steps:
            acc = (probs.argmax(1) == y).float().mean().item()
            print(f'step {step:4d}  loss {loss.item():.3f}  batch accuracy {acc:.2f}')
    print(f'loss {first:.3f} -> {loss.item():.3f}')


if __name__ == '__main__':
    main()
