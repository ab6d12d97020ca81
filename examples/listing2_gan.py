"""Listing 2 of the PyTorch paper (Paszke et al., 2019): a GAN training loop,
two models and two optimizers updated in turn. The generator learns to draw
points from a ring of 8 Gaussians in the plane.

    /usr/bin/python3 examples/listing2_gan.py [--steps 1500] [--batch 128] [--hidden 64]

Replacing `import ember as torch` by `import torch` runs it on PyTorch."""
import argparse
import math

import ember as torch

nn = torch.nn
optim = torch.optim


def mlp(n_in, hidden, n_out, last=None):
    layers = [nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
              nn.Linear(hidden, n_out)]
    return nn.Sequential(*(layers + ([last] if last else [])))


def ring_of_gaussians(n, modes=8, radius=2.0, std=0.05):
    """(n, 2) points around a circle, clustered at `modes` angles."""
    angles = torch.randint(modes, (n,)).double() * (2 * math.pi / modes)
    centers = torch.stack([angles.cos(), angles.sin()], dim=1) * radius
    return (centers + std * torch.randn(n, 2, dtype=torch.float64)).float()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--steps', type=int, default=1500)
    p.add_argument('--batch', type=int, default=128)
    p.add_argument('--hidden', type=int, default=64)
    p.add_argument('--noise', type=int, default=8, help='dimension of the generator input')
    p.add_argument('--lr', type=float, default=1e-3)
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)

    discriminator = mlp(2, args.hidden, 1, nn.Sigmoid())
    generator = mlp(args.noise, args.hidden, 2)
    optimD = optim.Adam(discriminator.parameters(), lr=args.lr, betas=(0.5, 0.999))
    optimG = optim.Adam(generator.parameters(), lr=args.lr, betas=(0.5, 0.999))
    loss = nn.BCELoss()
    real_label = torch.ones(args.batch, 1)
    fake_label = torch.zeros(args.batch, 1)

    def get_noise():
        return torch.randn(args.batch, args.noise)

    def step(real_sample):
        # (1) Update Discriminator
        discriminator.zero_grad()
        errD_real = loss(discriminator(real_sample), real_label)
        errD_real.backward()
        fake = generator(get_noise())
        errD_fake = loss(discriminator(fake.detach()), fake_label)
        errD_fake.backward()
        optimD.step()
        # (2) Update Generator
        generator.zero_grad()
        errG = loss(discriminator(fake), real_label)
        errG.backward()
        optimG.step()
        return (errD_real + errD_fake).item(), errG.item()

    def radius_error():
        """How far generated points lie from the ring (radius 2), on average."""
        with torch.no_grad():
            fake = generator(torch.randn(1000, args.noise))
            return (fake.norm(dim=1) - 2.0).abs().mean().item()

    print(f'GAN on a ring of 8 Gaussians: MLPs of width {args.hidden}, batch {args.batch}')
    before = radius_error()
    for i in range(1, args.steps + 1):
        errD, errG = step(ring_of_gaussians(args.batch))
        if i % max(1, args.steps // 5) == 0 or i == args.steps:
            print(f'step {i:5d}  loss_D {errD:.3f}  loss_G {errG:.3f}  '
                  f'distance of fakes to the ring {radius_error():.3f}')
    print(f'distance of fakes to the ring {before:.3f} -> {radius_error():.3f}')


if __name__ == '__main__':
    main()
