"""A variational autoencoder on Fashion-MNIST: the model and loss of
PyTorch's VAE example (784-400-20 encoder, 20-400-784 decoder, Adam,
binary cross-entropy + KL divergence), written as PyTorch code.

    python3 vae.py [--epochs 2] [--train-size 4000] ...

Prints the average loss per image after each epoch and, last, one line
`RESULT {json}`."""
import argparse
import json
import time

import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F

import _data
from _example import add_common_args

parser = argparse.ArgumentParser(description='VAE Fashion-MNIST Example')
parser.add_argument('--batch-size', type=int, default=128, metavar='N',
                    help='input batch size for training (default: 128)')
parser.add_argument('--epochs', type=int, default=2, metavar='N',
                    help='number of epochs to train (default: 2)')
parser.add_argument('--no-cuda', action='store_true', default=False,
                    help='disables CUDA training')
add_common_args(parser, train_size=4000)
parser.add_argument('--init', metavar='PATH', help='start from this state_dict')
parser.add_argument('--save-init', metavar='PATH', help='save the initial state_dict here')
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()

torch.manual_seed(args.seed)

device = torch.device("cuda" if args.cuda else "cpu")

kwargs = {'num_workers': 1, 'pin_memory': True} if args.cuda else {}


def images(train, limit):
    x, _ = _data.fashion_mnist(train, limit, args.data_root)
    return torch.utils.data.TensorDataset(torch.from_numpy(x).float().div(255).unsqueeze(1))


train_loader = torch.utils.data.DataLoader(images(True, args.train_size),
                                           batch_size=args.batch_size, shuffle=True, **kwargs)
test_loader = torch.utils.data.DataLoader(images(False, args.test_size),
                                          batch_size=args.batch_size, shuffle=False, **kwargs)


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5*logvar)
        eps = torch.randn_like(std)
        return mu + eps*std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


model = VAE().to(device)
if args.init:
    model.load_state_dict(torch.load(args.init))
if args.save_init:
    torch.save(model.state_dict(), args.save_init)
optimizer = optim.Adam(model.parameters(), lr=1e-3)


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')

    # see Appendix B from VAE paper:
    # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # https://arxiv.org/abs/1312.6114
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, (data,) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader),
                loss.item() / len(data)))

    print('====> Epoch: {} Average loss: {:.4f}'.format(
          epoch, train_loss / len(train_loader.dataset)))
    return train_loss / len(train_loader.dataset)


def test(epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for i, (data,) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()

    test_loss /= len(test_loader.dataset)
    print('====> Test set loss: {:.4f}'.format(test_loss))
    return test_loss


if __name__ == "__main__":
    result = {}
    if args.init or args.save_init:  # the initial weights' test loss with z = mu (no
        model.reparameterize = lambda mu, logvar: mu  # sampling): the same on any library
        result['init_test_loss'] = test(0)
        del model.reparameterize
    train_seconds = 0.0
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        train_loss = train(epoch)
        train_seconds += time.perf_counter() - start
        test_loss = test(epoch)
        with torch.no_grad():
            sample = torch.randn(64, 20).to(device)
            sample = model.decode(sample).cpu()
    result.update(loss=test_loss, train_loss=train_loss, seconds_per_epoch=train_seconds / args.epochs,
                  sample_mean=sample.mean().item())
    print('RESULT ' + json.dumps(result))
