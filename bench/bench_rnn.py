"""A 2-layer LSTM language model training step, Ember vs PyTorch 1.13, each
in its own process: embedding 10000x256 (index_select of a weight; the
Embedding module is another family's), nn.LSTM(256, 256, 2), a Linear
decoder 256 -> 10000, cross-entropy (log_softmax + gather), backward and an
SGD update; sequence 35, batch 20. Prints sequences/s at 1 and 2 threads and
the ratio (> 1: Ember is faster), then where the step's time goes: the LSTM
alone (forward + backward), the decoder + loss alone, the LSTM's GEMMs run
bare, and (Ember) the fused recurrence (all steps of both layers: hidden
GEMMs and gates) and its backward (backpropagation through time) run bare.
Run: PYTHONPATH=python /usr/bin/python3 bench/bench_rnn.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import cli, figure, run_lib  # noqa: E402

# argv[1]: threads. The same program for both libraries (`torch` is Ember's
# module on Ember's side).
SCRIPT = r'''
threads = int(sys.argv[1])
torch.set_num_threads(threads)
torch.manual_seed(0)
V, E, H, T, B = 10000, 256, 256, 35, 20
emb = (torch.randn(V, E) * 0.1).requires_grad_()
lstm = torch.nn.LSTM(E, H, 2)
dec_w = (torch.randn(V, H) * H ** -0.5).requires_grad_()
dec_b = torch.zeros(V).requires_grad_()
params = [emb, dec_w, dec_b] + list(lstm.parameters())
tokens = torch.randint(0, V, (T, B))
target = torch.randint(0, V, (T * B,))

def embed():
    return emb.index_select(0, tokens.reshape(-1)).reshape(T, B, E)

def decode_loss(h):
    logits = torch.addmm(dec_b, h.reshape(T * B, H), dec_w.t())
    return -torch.log_softmax(logits, 1).gather(1, target.reshape(-1, 1)).mean()

def zero():
    for p in params: p.grad = None

def step():
    out, _ = lstm(embed())
    decode_loss(out).backward()
    with torch.no_grad():
        for p in params: p.sub_(p.grad * 0.01)
    zero()

x_lstm = torch.randn(T, B, E)
g_lstm = torch.randn(T, B, H)
def lstm_only():
    out, _ = lstm(x_lstm)
    (out * g_lstm).sum().backward()
    zero()

h_dec = torch.randn(T, B, H, requires_grad=True)
def decoder_only():
    decode_loss(h_dec).backward()
    zero(); h_dec.grad = None

# the LSTM's GEMMs, bare: per layer one input projection (T*B, E) x (E, 4H)
# and T hidden ones (B, H) x (H, 4H); backward is about twice that
w4 = torch.randn(4 * H, H)
xin = torch.randn(T * B, E); hin = torch.randn(B, H)
def gemms_fwd():
    for _ in range(2):
        torch.mm(xin, w4.t())
        for _ in range(T): torch.mm(hin, w4.t())

def emit(case, fn, budget):
    print(json.dumps({"case": case, "us": best(fn, budget, 3)}), flush=True)
step()
emit("train step", step, 2.0)
emit("lstm fwd+bwd", lstm_only, 1.0)
emit("decoder+loss fwd+bwd", decoder_only, 1.0)
emit("lstm gemms fwd (bare)", gemms_fwd, 0.5)
if hasattr(torch, "_C") and hasattr(torch._C, "_nn") and hasattr(torch._C._nn, "rnn_recurrence"):
    nn_ = torch._C._nn
    ig = torch.randn(T * B, 4 * H); h0 = torch.zeros(B, H); c0 = torch.zeros(B, H)
    w_hh = lstm.weight_hh_l0.detach()
    r_out, _, _, r_ws = nn_.rnn_recurrence(2, ig, None, h0, c0, w_hh, None, None)
    g_out = torch.randn(T * B, H)
    def recurrence_fwd():
        for _ in range(2): nn_.rnn_recurrence(2, ig, None, h0, c0, w_hh, None, None)
    def recurrence_bwd():
        for _ in range(2):
            nn_.rnn_recurrence_backward(2, g_out, None, None, r_out, r_ws, None, (h0, c0), w_hh, False, None)
    emit("recurrence fwd (bare, 2 layers)", recurrence_fwd, 0.3)
    emit("recurrence bwd (bare, 2 layers)", recurrence_bwd, 0.3)
'''


def figures(args):
    rows = []
    batch = 20
    for threads in (1, 2):
        e = {r["case"]: r["us"] for r in run_lib("ember", SCRIPT, threads)}
        t = {r["case"]: r["us"] for r in run_lib("torch", SCRIPT, threads)}
        rows.append(figure(__file__, "train step (seq 35, batch 20)", "seq/s", threads,
                           batch / (e["train step"] * 1e-6), batch / (t["train step"] * 1e-6)))
        rows += [figure(__file__, case, "ms", threads, us / 1e3, t[case] / 1e3 if case in t else None,
                        note=None if case in t else "Ember only")
                 for case, us in e.items() if case != "train step"]
    return rows


if __name__ == "__main__":
    cli(__file__, figures)
