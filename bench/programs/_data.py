"""Data for the programs in bench/programs, as NumPy arrays (so that the
programs stay plain PyTorch and need no torchvision): Fashion-MNIST from
Debian's dataset-fashion-mnist IDX files, words from Debian's `fortunes`,
sine waves, and generated images."""
import gzip
import os
import sys

import numpy as np

FASHION_ROOT = '/usr/share/datasets/fashion-mnist'
FORTUNES_DIR = '/usr/share/games/fortunes'
FORTUNE_FILES = ('fortunes', 'goedel', 'science', 'wisdom', 'computers')
MEAN, STD = 0.2860, 0.3530  # of Fashion-MNIST's training images scaled to [0, 1]


def _idx(path):
    """An IDX file (gzip-compressed) as an array: magic 0 0 type ndim, then
    ndim big-endian uint32 sizes, then the data (here always uint8)."""
    with gzip.open(path, 'rb') as f:
        raw = f.read()
    if raw[:2] != b'\0\0' or raw[2] != 0x08:
        raise ValueError('%s: not an IDX file of unsigned bytes' % path)
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i:8 + 4 * i], 'big') for i in range(ndim))
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape).copy()  # writable


def fashion_mnist(train, limit=None, root=FASHION_ROOT):
    """(images uint8 (N, 28, 28), labels int64 (N,)), the first `limit` of them."""
    split = 'train' if train else 't10k'
    try:
        images = _idx(os.path.join(root, split + '-images-idx3-ubyte.gz'))
        labels = _idx(os.path.join(root, split + '-labels-idx1-ubyte.gz'))
    except FileNotFoundError as e:
        sys.exit('error: %s (install the Debian package dataset-fashion-mnist, or pass --data-root)' % e)
    return images[:limit], labels[:limit].astype(np.int64)


def fortune_words(max_chars=None, root=FORTUNES_DIR):
    """The fortunes' text as lines of words, at most max_chars characters."""
    paths = [os.path.join(root, f) for f in FORTUNE_FILES if os.path.isfile(os.path.join(root, f))]
    if not paths:
        sys.exit('error: %s is missing: install the Debian package fortunes (tools/deps.sh)' % root)
    text = ''.join(open(p, encoding='utf-8', errors='replace').read() for p in paths)
    text = text[:max_chars] if max_chars else text
    return [line.split() for line in text.splitlines() if line.strip() and line.strip() != '%']


def sine_waves(n=100, length=1000, period=20, seed=2):
    """n sine waves of `length` samples, each shifted by a random phase (float64)."""
    rng = np.random.RandomState(seed)
    x = np.arange(length)[None, :] + rng.randint(-4 * period, 4 * period, n)[:, None]
    return np.sin(x / 1.0 / period)


def blob_images(n, size=32, channels=3, seed=0):
    """n images (float32 in [-1, 1], (n, channels, size, size)) of one soft
    coloured disc each, at a random place, radius and colour: a small data
    set with structure for a GAN to learn."""
    rng = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    cy, cx = (rng.uniform(0.3, 0.7, (2, n, 1, 1)) * size).astype(np.float32)
    r = rng.uniform(0.15, 0.3, (n, 1, 1)).astype(np.float32) * size
    disc = 1 / (1 + np.exp((np.sqrt((yy - cy) ** 2 + (xx - cx) ** 2) - r) * 1.5))  # (n, size, size)
    colour = rng.uniform(0.2, 1.0, (n, channels, 1, 1)).astype(np.float32)
    return (disc[:, None] * colour * 2 - 1).astype(np.float32)
