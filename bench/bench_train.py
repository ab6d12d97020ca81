"""Training steps, Ember vs PyTorch 1.13, the same model code on both sides
(`import ember as torch` in Ember's process): zero_grad, forward, loss,
backward, optimizer step. Models (issue 5's table): MLP 784-512-512-10
(batch 128), LeNet-5 on 28x28 (batch 64), ResNet-18 on 32x32 (batch 32,
torchvision's layout, 10 classes), a 2-layer LSTM language model (hidden
256, seq 35, batch 20, vocab 10000) and a 6-layer GPT (d 256, 4 heads, seq
128, batch 8, vocab 10000); LeNet and the GPT also with forward and loss
under bfloat16 CPU autocast (`torch.autocast('cpu', dtype=torch.bfloat16)`). Each library runs in its own process per
thread count (1 and 2); prints samples/s and Ember / PyTorch's best.
bench/run.py puts these rows in the README's headline table.

    /usr/bin/python3 bench/bench_train.py [model ...] [--steps N] [--threads 1,2] [--quick]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import PYTHON, BenchError, cli, ember_env, figure, quick, run_json  # noqa: E402

# model: its row's case (the README's model column, batch included)
MODELS = {'mlp': 'MLP 784-512-512-10, SGD, batch 128',
          'lenet': 'LeNet-5 28×28, SGD, batch 64',
          'resnet18': 'ResNet-18 32×32, SGD, batch 32',
          'lstm': 'LSTM LM 2×256, seq 35, vocab 10k, SGD, batch 20',
          'gpt': 'GPT 6 layers d256, seq 128, vocab 10k, AdamW, batch 8',
          'lenet_bf16': 'LeNet-5 28×28, SGD, batch 64, bfloat16 autocast',
          'gpt_bf16': 'GPT 6 layers d256, seq 128, vocab 10k, AdamW, batch 8, bfloat16 autocast'}

# The timed program: argv = library, model, steps. Prints one JSON line.
# Quick (EMBER_BENCH_QUICK=1): one warm-up step and one round.
WORKER = r'''
import json, os, sys, time
lib, name, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
if lib == 'ember':
    import ember as torch
else:
    import torch
nn, F = torch.nn, torch.nn.functional
torch.manual_seed(0)


def mlp():
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    return model, torch.randn(128, 784), torch.randint(0, 10, (128,)), 'sgd'


def lenet():
    model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
    return model, torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,)), 'sgd'


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.down is None else self.down(x)))


def resnet18():
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
    return nn.Sequential(*layers), torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,)), 'sgd'


class LSTMLM(nn.Module):
    def __init__(self, vocab=10000, hidden=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, 2)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x):
        h, _ = self.lstm(self.emb(x))
        return self.out(h).reshape(-1, self.out.out_features)


def lstm():
    x = torch.randint(0, 10000, (35, 20))
    return LSTMLM(), x, torch.randint(0, 10000, (35 * 20,)), 'sgd'


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        if hasattr(F, 'scaled_dot_product_attention'):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # PyTorch 1.13: the same math, written out
            att = (q @ k.transpose(-2, -1)) * (1.0 / (C // self.heads) ** 0.5)
            mask = torch.ones(T, T, dtype=torch.bool).tril()
            y = att.masked_fill(~mask, float('-inf')).softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class GPTBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=10000, d=256, heads=4, layers=6, seq=128):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.Sequential(*[GPTBlock(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        return self.head(self.ln(self.blocks(x))).reshape(-1, self.head.out_features)


def gpt():
    return GPT(), torch.randint(0, 10000, (8, 128)), torch.randint(0, 10000, (8 * 128,)), 'adamw'


# name_bf16: the same model, forward and loss under CPU bfloat16 autocast
autocast = name.endswith('_bf16')
model, x, y, opt_name = globals()[name[:-5] if autocast else name]()
if opt_name == 'sgd':
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
else:
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
batch = x.shape[1] if name == 'lstm' else x.shape[0]


def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast('cpu', dtype=torch.bfloat16, enabled=autocast):
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


rounds = 1 if os.environ.get('EMBER_BENCH_QUICK') == '1' else 3
for _ in range(rounds):
    step()
best = float('inf')
for _ in range(rounds):
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    float(loss)
    best = min(best, (time.perf_counter() - t0) / steps)
print(json.dumps({'samples_per_s': batch / best, 'loss': float(loss)}))
'''

STEPS = {'mlp': 20, 'lenet': 20, 'resnet18': 3, 'lstm': 5, 'gpt': 2, 'lenet_bf16': 20, 'gpt_bf16': 2}


def run(lib, model, threads, steps):
    """Samples/s of one library's process, and None or its error."""
    code = WORKER if lib == 'ember' else 'import torch; torch.set_num_threads(%d)\n' % threads + WORKER
    try:
        return run_json([PYTHON, '-c', code, lib, model, str(steps)], ember_env(threads))[-1]['samples_per_s'], None
    except BenchError as e:
        return None, '%s: %s' % (lib, e)


def add_arguments(ap):
    ap.add_argument('models', nargs='*', default=list(MODELS), help=' '.join(MODELS))
    ap.add_argument('--steps', type=int, default=0, help='timed steps per round (default: per model)')
    ap.add_argument('--threads', default='1,2')


def figures(args):
    rows = []
    for model in args.models:
        steps = 1 if quick() else args.steps or STEPS[model]
        for t in (int(t) for t in args.threads.split(',')):
            e, err = run('ember', model, t, steps)
            p, perr = run('torch', model, t, steps)
            rows.append(figure(__file__, MODELS[model], 'samples/s', t, e, p, note=err or perr))
    return rows


if __name__ == '__main__':
    cli(__file__, figures, add_arguments, best=True)
