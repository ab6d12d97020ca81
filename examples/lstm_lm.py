"""A character-level LSTM language model (embedding, 2-layer LSTM, linear
decoder) trained with truncated backpropagation through time on fortune
cookies (Debian's `fortunes` package): the hidden state is carried from one
chunk to the next but detached, and gradients are clipped. Prints perplexity.

    /usr/bin/python3 examples/lstm_lm.py [--text PATH] [--epochs 2] [--hidden 128] ...

Replacing `import ember as torch` by `import torch` runs it on PyTorch."""
import argparse
import math
import time

import ember as torch
from _corpus import load_text

nn = torch.nn
F = torch.nn.functional


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab, embed, hidden, layers, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, layers, dropout=dropout)
        self.drop = nn.Dropout(dropout)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, x, state):                         # x: (T, B) character ids
        out, state = self.lstm(self.drop(self.embed(x)), state)
        return self.decoder(self.drop(out)), state       # (T, B, vocab)


def batchify(data, batch):
    """(N,) ids -> (N // batch, batch): each column a contiguous stream."""
    n = len(data) // batch
    return data[:n * batch].view(batch, n).t().contiguous()


def detach(state):
    """Keep the values, cut the graph: backprop stops at the chunk boundary."""
    return tuple(s.detach() for s in state)


def evaluate(model, data, bptt, batch):
    model.eval()
    total, count, state = 0.0, 0, None
    with torch.no_grad():
        for i in range(0, data.size(0) - 1, bptt):
            x, y = data[i:i + bptt], data[i + 1:i + 1 + bptt]
            x = x[:len(y)]
            logits, state = model(x, state)
            total += F.cross_entropy(logits.view(-1, logits.size(-1)), y.reshape(-1)).item() * y.numel()
            count += y.numel()
    model.train()
    return total / count


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--text', help='train on this text file instead of the fortunes')
    p.add_argument('--max-chars', type=int, default=40000, help='use at most this much text')
    p.add_argument('--epochs', type=int, default=2)
    p.add_argument('--batch', type=int, default=32)
    p.add_argument('--bptt', type=int, default=50, help='truncated BPTT length')
    p.add_argument('--embed', type=int, default=32)
    p.add_argument('--hidden', type=int, default=128)
    p.add_argument('--layers', type=int, default=2)
    p.add_argument('--dropout', type=float, default=0.1)
    p.add_argument('--lr', type=float, default=5e-3)
    p.add_argument('--clip', type=float, default=1.0, help='gradient norm clip')
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)

    text = load_text(args.text, args.max_chars)
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.int64)
    n_train = int(0.9 * len(data))
    train = batchify(data[:n_train], args.batch)
    val = batchify(data[n_train:], args.batch)
    print(f'corpus: {len(text)} characters, vocabulary {len(chars)}; '
          f'{train.size(0) // args.bptt} chunks of {args.bptt} x {args.batch} per epoch')

    model = LSTMLanguageModel(len(chars), args.embed, args.hidden, args.layers, args.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    first = evaluate(model, val, args.bptt, args.batch)
    print(f'epoch 0  val perplexity {math.exp(first):8.2f}')
    start = time.time()
    for epoch in range(1, args.epochs + 1):
        state = None
        for i in range(0, train.size(0) - 1, args.bptt):
            x, y = train[i:i + args.bptt], train[i + 1:i + 1 + args.bptt]
            x = x[:len(y)]
            if state is not None:
                state = detach(state)
            logits, state = model(x, state)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            opt.step()
        val_loss = evaluate(model, val, args.bptt, args.batch)
        print(f'epoch {epoch}  train perplexity {math.exp(loss.item()):8.2f}  '
              f'val perplexity {math.exp(val_loss):8.2f}  grad norm {float(norm):.2f}  '
              f'({time.time() - start:.1f} s)')
    print(f'val perplexity {math.exp(first):.2f} -> {math.exp(val_loss):.2f}')


if __name__ == '__main__':
    main()
