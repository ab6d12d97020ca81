"""A character-level GPT: token and position embeddings, causal self-attention
blocks (LayerNorm, multi-head attention, MLP, residuals), trained with AdamW on
fortune cookies (Debian's `fortunes` package), then sampled.

    /usr/bin/python3 examples/char_gpt.py [--text PATH] [--steps 300] [--layers 2] ...

Replacing `import ember as torch` by `import torch` runs it on PyTorch."""
import argparse
import math
import time

import ember as torch
from _corpus import load_text

nn = torch.nn
F = torch.nn.functional


def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(d) + causal mask) v on (B, H, T, D) tensors."""
    if hasattr(F, 'scaled_dot_product_attention'):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    T = q.size(-2)
    att = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))         # (B, H, T, T)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    att = att.masked_fill(future, float('-inf'))
    return F.softmax(att, dim=-1) @ v


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = causal_attention(q, k, v)                                  # (B, H, T, D)
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, context, dim, heads, layers):
        super().__init__()
        self.context = context
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(context, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx, targets=None):
        T = idx.size(1)
        x = self.tok(idx) + self.pos(torch.arange(T))                  # (B, T, C)
        logits = self.head(self.ln(self.blocks(x)))                    # (B, T, vocab)
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    @torch.no_grad()
    def generate(self, idx, n, temperature=0.8):
        for _ in range(n):
            logits = self(idx[:, -self.context:])[:, -1] / temperature
            nxt = torch.multinomial(F.softmax(logits, dim=-1), 1)
            idx = torch.cat([idx, nxt], dim=1)
        return idx


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--text', help='train on this text file instead of the fortunes')
    p.add_argument('--max-chars', type=int, default=200000, help='use at most this much text')
    p.add_argument('--steps', type=int, default=300)
    p.add_argument('--batch', type=int, default=16)
    p.add_argument('--context', type=int, default=64)
    p.add_argument('--dim', type=int, default=64)
    p.add_argument('--heads', type=int, default=4)
    p.add_argument('--layers', type=int, default=2)
    p.add_argument('--lr', type=float, default=3e-3)
    p.add_argument('--sample', type=int, default=200, help='characters to sample at the end')
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)

    text = load_text(args.text, args.max_chars)
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.int64)
    n_train = int(0.9 * len(data))
    splits = {'train': data[:n_train], 'val': data[n_train:]}
    print(f'corpus: {len(text)} characters, vocabulary {len(chars)}')

    def batch(split):
        d = splits[split]
        starts = torch.randint(len(d) - args.context - 1, (args.batch,))
        x = torch.stack([d[s:s + args.context] for s in starts.tolist()])
        y = torch.stack([d[s + 1:s + 1 + args.context] for s in starts.tolist()])
        return x, y

    model = GPT(len(chars), args.context, args.dim, args.heads, args.layers)
    n_params = sum(p.numel() for p in model.parameters())
    print(f'model: {args.layers} blocks, {args.heads} heads, dim {args.dim}: {n_params} parameters; '
          f'attention: {"F.scaled_dot_product_attention" if hasattr(F, "scaled_dot_product_attention") else "written out"}')
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    @torch.no_grad()
    def val_loss():
        model.eval()
        loss = sum(model(*batch('val')).item() for _ in range(4)) / 4
        model.train()
        return loss

    first = val_loss()
    print(f'step     0  val loss {first:.3f}  (uniform: {math.log(len(chars)):.3f})')
    start = time.time()
    for step in range(1, args.steps + 1):
        loss = model(*batch('train'))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % max(1, args.steps // 5) == 0 or step == args.steps:
            print(f'step {step:5d}  train loss {loss.item():.3f}  val loss {val_loss():.3f}  '
                  f'({time.time() - start:.1f} s)')
    last = val_loss()
    print(f'val loss {first:.3f} -> {last:.3f}')

    prompt = torch.tensor([[stoi.get('\n', 0)]])
    sample = model.generate(prompt, args.sample)[0].tolist()
    print('sample:\n' + ''.join(chars[i] for i in sample))


if __name__ == '__main__':
    main()
