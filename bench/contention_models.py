"""Two small models whose speed depends on how threads behave when a core is
busy (issue 16): an LSTMCell sequence model in float64 (two nn.LSTMCell of 51
units, batch 97, 100 steps, forward + backward) and a character-level
Transformer language model step. Run with one library and print seconds:

    /usr/bin/python3 bench/contention_models.py ember|torch lstmcell|charlm [repeats]

Each library runs with its own defaults (no thread settings). bench_threads.py
runs this beside a spinning process for the contended figures."""
import sys
import time


def lstmcell(torch):
    nn = torch.nn
    torch.manual_seed(0)

    class Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.LSTMCell(1, 51)
            self.c2 = nn.LSTMCell(51, 51)
            self.lin = nn.Linear(51, 1)

        def forward(self, x):
            n = x.size(0)
            h = torch.zeros(n, 51, dtype=torch.double)
            c = torch.zeros(n, 51, dtype=torch.double)
            h2 = torch.zeros(n, 51, dtype=torch.double)
            c2 = torch.zeros(n, 51, dtype=torch.double)
            outs = []
            for t in range(x.size(1)):
                h, c = self.c1(x[:, t:t + 1], (h, c))
                h2, c2 = self.c2(h, (h2, c2))
                outs.append(self.lin(h2))
            return torch.cat(outs, dim=1)

    model = Seq().double()
    x = torch.sin(torch.arange(97 * 101, dtype=torch.double).reshape(97, 101) / 20.0)
    inp, target = x[:, :-1], x[:, 1:]

    def step():
        model.zero_grad()
        loss = nn.functional.mse_loss(model(inp), target)
        loss.backward()
    return step


def charlm(torch):
    nn = torch.nn
    torch.manual_seed(0)
    V, D, T, B = 65, 128, 64, 16

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, D)
            self.pos = nn.Parameter(torch.zeros(1, T, D))
            layer = nn.TransformerEncoderLayer(D, 4, 4 * D, dropout=0.1, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2)
            self.head = nn.Linear(D, V)

        def forward(self, x):
            mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
            return self.head(self.enc(self.emb(x) + self.pos, mask=mask))

    model = LM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.randint(0, V, (B, T + 1))

    def step():
        opt.zero_grad()
        out = model(data[:, :-1])
        loss = nn.functional.cross_entropy(out.reshape(-1, V), data[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
    return step


def main():
    lib, model = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    torch = __import__(lib)
    step = {"lstmcell": lstmcell, "charlm": charlm}[model](torch)
    step()  # warm up
    best = float("inf")
    n = 1 if model == "lstmcell" else 10
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            step()
        best = min(best, (time.perf_counter() - t) / n)
    print("%.6f" % best)


if __name__ == "__main__":
    main()
