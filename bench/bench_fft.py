"""torch.fft, Ember vs PyTorch 1.13 (pocketfft): fft, ifft, rfft and fftn
forward in float64 (complex128) and float32 (complex64) on a batch of 64
lines of 4096, a 256x256 plane, and batches of 64 odd lengths (1000 =
2^3 5^3, 2310 = 2 3 5 7 11, 1001 = 7 11 13 real, and the prime 4099, which
Ember runs through Bluestein's algorithm). The same script runs in a
process per library (Ember's with `import ember as torch`), the two
alternating --repeat times, each side's best kept. Prints both times and
PyTorch time / Ember time (> 1: Ember is faster). Run through `make bench`
or directly."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import alternating_rows, cli, run_lib  # noqa: E402

SCRIPT = r'''
torch.set_num_threads(int(sys.argv[1]))
torch.manual_seed(0)
F = torch.fft
CASES = (("fft", "64x4096", (64, 4096)), ("ifft", "64x4096", (64, 4096)), ("rfft", "64x4096", (64, 4096)),
         ("fftn", "256x256", (256, 256)), ("fft", "64x1000", (64, 1000)), ("fft", "64x2310", (64, 2310)),
         ("rfft", "64x1001", (64, 1001)), ("fft", "64x4099", (64, 4099)))
for real, cplx in ((torch.float64, torch.complex128), (torch.float32, torch.complex64)):
    for fn, name, shape in CASES:
        x = torch.randn(*shape, dtype=real if fn == "rfft" else cplx)
        f = getattr(F, fn)
        us = best(lambda: f(x), 0.3)
        print(json.dumps({"case": "%s %s %s" % (fn, name, str(real).split(".")[-1]), "us": us}), flush=True)
'''


def figures(args):
    return alternating_rows(__file__, lambda lib, threads: run_lib(lib, SCRIPT, threads), args.threads, args.repeat)


def add_arguments(ap):
    ap.add_argument("--repeat", type=int, default=2, help="runs of each library, alternating (default 2)")
    ap.add_argument("--threads", nargs="+", type=int, default=[1], help="thread counts (default: 1)")


if __name__ == "__main__":
    cli(__file__, figures, add_arguments)
