"""MNIST-style datasets read from IDX files (the C reader, ember._C._read_idx).

Samples are (image, target): the image a (28, 28) uint8 tensor (torchvision
gives a PIL image; Ember has no PIL dependency), the target an int, each
passed through transform / target_transform when given."""
import os

from ember import _C
from .dataset import Dataset

__all__ = ['MNIST', 'FashionMNIST']


class MNIST(Dataset):
    """MNIST from its four IDX files (raw or .gz) in root, or in
    root/<ClassName>/raw as torchvision lays them out."""
    default_root = None
    install_hint = "download the MNIST IDX files into root"
    classes = ['0 - zero', '1 - one', '2 - two', '3 - three', '4 - four', '5 - five', '6 - six', '7 - seven',
               '8 - eight', '9 - nine']

    def __init__(self, root=None, train=True, transform=None, target_transform=None):
        if root is None:
            root = self.default_root
        if root is None:
            raise ValueError(f"{type(self).__name__}: root is required ({self.install_hint})")
        self.root = os.path.expanduser(root)
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        prefix = 'train' if train else 't10k'
        self.data = _C._read_idx(self._find(f'{prefix}-images-idx3-ubyte'))
        self.targets = _C._read_idx(self._find(f'{prefix}-labels-idx1-ubyte')).long()
        if self.data.dim() != 3 or self.targets.dim() != 1 or self.data.shape[0] != self.targets.shape[0]:
            raise RuntimeError(f"{type(self).__name__}: images {tuple(self.data.shape)} and labels "
                               f"{tuple(self.targets.shape)} in {self.root} do not match")

    def _find(self, name):
        folders = (self.root, os.path.join(self.root, type(self).__name__, 'raw'))
        for folder in folders:
            for suffix in ('', '.gz'):
                path = os.path.join(folder, name + suffix)
                if os.path.isfile(path):
                    return path
        raise RuntimeError(f"Dataset not found: {type(self).__name__} needs {name}[.gz] in "
                           f"{' or '.join(folders)}; {self.install_hint}")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        split = 'Train' if self.train else 'Test'
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n"
                f"    Root location: {self.root}\n    Split: {split}")


class FashionMNIST(MNIST):
    """Fashion-MNIST; by default from Debian's dataset-fashion-mnist package."""
    default_root = '/usr/share/datasets/fashion-mnist'
    install_hint = "install it with: apt-get install dataset-fashion-mnist"
    classes = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag',
               'Ankle boot']
