"""Hostile-argument sweep: every public callable Ember shares with PyTorch 1.13
(top level, Tensor methods, nn.functional, linalg, nn module constructors),
called with hostile arguments in crash-isolated worker processes, each call
also made on PyTorch with objects built from the same description.

How the calls are made, deterministically from a seed:
  1. probes: each callable with a list of plain argument patterns; those
     PyTorch accepts become the callable's templates (at most TEMPLATES);
  2. mutations: one argument of a template replaced by a hostile value
     (None, wrong types, huge and negative ints, NaN/inf, empty and 0-d
     tensors, every dtype, an expanded tensor), or a hostile keyword added
     (dim=, out= expanded or overlapping, layout=, memory_format=, dtype=).

A worker (this file with --worker) runs calls one at a time, told them on
stdin; before each library's call it says which one it starts, so a crash
(the worker dies) or a hang (no answer within TIMEOUT) is pinned to the call
and the library. Calls after it go to a fresh worker.

Figures: calls, ember crashes and hangs, silent acceptances (a huge or
negative int given where PyTorch raises IndexError/RuntimeError and Ember
returns), and the rate of the same exception type where both raise.

    python3 tests/hostile/sweep.py            # the full sweep (make test-hostile)
    python3 tests/hostile/sweep.py --sample 20 --show 30
"""
import argparse
import json
import os
import random
import select
import subprocess
import sys
import time

TIMEOUT = 20.0      # seconds one call (both libraries) may take before it counts as a hang
TEMPLATES = 2       # templates kept per callable
MUTATIONS = 48      # mutated calls per template (sampled from all of them)
MEMORY_LIMIT = 6 << 30  # address space of a worker: a huge allocation fails instead of swapping

# Never called: global state, files, the process (one call would change every later one).
EXCLUDED = {
    'save', 'load', 'from_file', 'manual_seed', 'seed', 'set_rng_state', 'set_default_dtype',
    'set_default_tensor_type', 'set_printoptions', 'set_num_threads', 'set_num_interop_threads',
    'set_grad_enabled', 'use_deterministic_algorithms', 'set_flush_denormal', 'set_anomaly_enabled',
    'set_warn_always', 'set_deterministic_debug_mode', 'set_float32_matmul_precision', 'compile',
    'share_memory_', 'register_hook', 'pin_memory', 'is_pinned',
}
# Where PyTorch 1.13 itself crashes (SIGFPE: r * r overflows, groups is 0) or hangs (pools looping over a huge
# kernel or output size) on a huge or negative int: those mutations are not made (found by this sweep).
TORCH_UNSAFE_BIG_INT = {
    ('fn', 'max_pool1d'), ('F', 'max_pool1d'), ('F', 'max_pool1d_with_indices'), ('fn', 'pixel_shuffle'),
    ('F', 'pixel_shuffle'), ('fn', 'pixel_unshuffle'), ('F', 'pixel_unshuffle'), ('fn', 'native_channel_shuffle'),
    ('F', 'native_channel_shuffle'), ('fn', 'channel_shuffle'), ('F', 'channel_shuffle'),
    ('F', 'adaptive_max_pool2d_with_indices'), ('F', 'adaptive_max_pool2d'), ('fn', 'adaptive_max_pool1d'),
    ('F', 'adaptive_max_pool1d'), ('F', 'adaptive_max_pool3d'), ('F', 'adaptive_max_pool1d_with_indices'),
    ('F', 'adaptive_max_pool3d_with_indices'), ('fn', 'tensor_split'), ('method', 'tensor_split'),
    ('module', 'ChannelShuffle'), ('module', 'PixelShuffle'), ('module', 'PixelUnshuffle'),
    # diag of a matrix with an offset past its corner: torch 1.13 fails ("numel: integer multiplication
    # overflow", even for -5) where the diagonal is simply empty; Ember returns it empty
    ('fn', 'diag'), ('method', 'diag'),
    # slice_scatter with end=None: torch 1.13 takes a one-element slice (a.slice_scatter(a, dim=1) on a
    # (2, 3) tensor fails: "slice size = [2, 1]"); Ember scatters the whole dim, as the default means
    ('fn', 'slice_scatter'), ('method', 'slice_scatter'),
}

# ---- values: JSON descriptions, built into ember and torch objects alike --------------------------
SHAPES = {'A': [2, 3], 'V': [3], 'S': [3, 3], 'B': [2, 3, 3], 'I': [1, 2, 4, 4], 'W': [3, 2, 2, 2], 'Z': [],
          'E': [0], 'E2': [0, 3]}


def T(role, dtype='float32', fill='randn'):
    return {'t': role, 'dtype': dtype, 'fill': fill}


A, V, S, B, I, W, Z, L = T('A'), T('V'), T('S'), T('B'), T('I'), T('W'), T('Z'), T('V', 'int64', 'index')

# Argument patterns tried on each callable (for Tensor methods: the rest after self).
PATTERNS = [
    [], [A], [V], [S], [B], [I], [Z], [A, A], [V, V], [S, S], [B, B], [I, W], [A, 0], [A, 1], [A, -1],
    [V, 0], [A, 0, 1], [A, 1, 0], [A, 2], [A, A, A], [S, S, S], [B, B, B], [A, 0.5], [A, A, 0.5],
    [[A, A]], [[A, A], 0], [A, [3, 2]], [A, [0, 1]], [2, 3], [3], [3, 4], [3, 4, 2], [A, 0, L], [I, 2],
    [I, [2, 2]], [V, L], [A, 1, L], [0], [1], [0.5], [2], [-1], [[3, 2]], [[0, 1]], [L], ['mean'],
]
SELVES = [A, V, S, B, I, Z]

BIG_INTS = [2 ** 31, 2 ** 32, 2 ** 62, 2 ** 63, -2 ** 63 - 1, -2 ** 31 - 1, -1, -5]
HOSTILE = (
    [None, 'abc', {}, [1, 'a'], 1.5, True, float('nan'), float('inf'), float('-inf'), {'obj': 'object'}]
    + BIG_INTS + [[2 ** 31, 0], [-1], [2 ** 63], [1.5], []]
    + [T('E'), T('E2'), T('Z'), T('A', fill='nan'), T('A', fill='inf'), T('A', fill='expanded'),
       T('A', fill='ones'), T('V', 'int64', 'big')]
    + [T('A', d) for d in ('uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float64', 'bool')]
)
HOSTILE_KW = (
    [('dim', v) for v in BIG_INTS + [None, 1.5, 'x']]
    + [('out', T('A', fill='expanded')), ('out', T('A', fill='overlap')), ('out', T('A')), ('out', 3),
       ('out', T('A', 'int64'))]
    + [('layout', {'obj': 'strided'}), ('layout', 'x'), ('layout', 3), ('memory_format', {'obj': 'contiguous_format'}),
       ('memory_format', 'x'), ('memory_format', 3), ('dtype', 'float'), ('dtype', 3), ('keepdim', A),
       ('size', [2 ** 62, 2 ** 62]), ('size', [-2]), ('inplace', A)]
)


def is_big_int(v):
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return v in BIG_INTS
    return isinstance(v, list) and any(is_big_int(x) for x in v)


# ---- the worker ---------------------------------------------------------------------------------
def build(lib, desc, np):
    """The library object for a value description."""
    if isinstance(desc, list):
        return [build(lib, d, np) for d in desc]
    if isinstance(desc, dict) and 'obj' in desc:
        return {} if desc['obj'] == 'object' else getattr(lib, desc['obj'])
    if not (isinstance(desc, dict) and 't' in desc):
        return desc
    shape, dtype, fill = SHAPES[desc['t']], desc['dtype'], desc['fill']
    rng = np.random.default_rng(len(shape) * 7 + len(dtype))
    if fill == 'index':
        a = np.array([0, 1, 0][:shape[0]] if shape else 0, dtype=np.int64)
    elif fill == 'big':
        a = np.array([2 ** 40, -2 ** 40, 3], dtype=np.int64)
    elif fill in ('nan', 'inf'):
        a = np.full(shape, float(fill), dtype=np.float32)
    elif fill == 'ones':
        a = np.ones(shape, dtype=np.float32)
    else:
        a = rng.standard_normal(shape).astype(np.float32)
    if dtype in ('uint8', 'int8', 'int16', 'int32', 'int64', 'bool'):
        a = np.abs(a * 3).astype(getattr(np, dtype if dtype != 'bool' else 'bool_')) if fill != 'index' else a
    t = lib.tensor(a.tolist() if a.ndim else a.item(), dtype=getattr(lib, dtype))
    if fill == 'expanded':  # stride 0
        t = t[:1].expand(*shape)
    elif fill == 'overlap':  # elements sharing memory
        t = lib.zeros(4).as_strided(shape, [1, 1])
    return t


def resolve(lib, ns, name):
    if ns == 'fn':
        return getattr(lib, name)
    if ns == 'method':
        return getattr(lib.Tensor, name)
    if ns == 'F':
        return getattr(lib.nn.functional, name)
    if ns == 'linalg':
        return getattr(lib.linalg, name)
    return getattr(lib.nn, name)


def outcome(fn, args, kwargs):
    try:
        fn(*args, **kwargs)
        return 'ok'
    except BaseException as e:  # noqa: B902 - every exception is data here
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            return type(e).__name__
        return exc_kind(e)


def exc_kind(e):
    """The standard exception class an error belongs to (torch's subclasses, such as LinAlgError, map to
    their standard base)."""
    for cls in type(e).__mro__:
        if cls.__module__ == 'builtins':
            return cls.__name__
    return 'Exception'


def worker():
    import warnings
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    proto = os.fdopen(os.dup(1), 'w', buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    warnings.simplefilter('ignore')
    import numpy as np
    import ember
    import ember.nn.functional  # noqa: F401
    import ember.linalg  # noqa: F401
    import torch
    import torch.nn.functional  # noqa: F401
    libs = (('T', torch), ('E', ember))  # torch first: where it crashes or hangs, the call is excluded
    proto.write('ready\n')
    for line in sys.stdin:
        call = json.loads(line)
        res = {}
        for tag, lib in libs:
            if call.get('probe') and tag == 'E':
                continue
            proto.write(tag + '\n')
            try:
                fn = resolve(lib, call['ns'], call['name'])
                args = [build(lib, d, np) for d in call['args']]
                kwargs = {k: build(lib, d, np) for k, d in call['kwargs'].items()}
            except BaseException as e:  # noqa: B902
                res[tag] = 'build:' + exc_kind(e)
                continue
            res[tag] = outcome(fn, args, kwargs)
        proto.write('R ' + json.dumps(res) + '\n')


# ---- the driver ---------------------------------------------------------------------------------
def callables():
    """(namespace, name) of every public callable Ember shares with torch 1.13."""
    import ember
    import ember.nn
    import ember.nn.functional
    import ember.linalg
    import torch
    import torch.nn.functional
    out = []

    def add(ns, emod, tmod, want=callable):
        for name in sorted(dir(emod)):
            if name.startswith('_') or name in EXCLUDED or not hasattr(tmod, name):
                continue
            try:
                e, t = getattr(emod, name), getattr(tmod, name)
            except Exception:
                continue
            if want(e) and want(t):
                out.append((ns, name))
    add('fn', ember, torch, lambda f: callable(f) and not isinstance(f, type(ember)))
    add('method', ember.Tensor, torch.Tensor)
    add('F', ember.nn.functional, torch.nn.functional)
    add('linalg', ember.linalg, torch.linalg)
    add('module', ember.nn, torch.nn, lambda c: isinstance(c, type) and c.__name__ not in ('Module', 'Parameter'))
    return [c for c in out if not (c[0] == 'fn' and c[1][0].isupper() and c[1] not in ('Generator',))]


class Runner:
    """Runs calls through workers, restarting one after a crash or hang."""

    def __init__(self, verbose=False):
        self.proc = None
        self.verbose = verbose
        self.events = []  # (kind, lib, call)

    def start(self):
        env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), '--worker'], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True)
        self.buf = b''
        if self.readline(600) != 'ready':
            raise RuntimeError('the sweep worker did not start')

    def readline(self, timeout):
        """A line from the worker (unbuffered reads, so that select sees every byte), '' at its death,
        None after timeout seconds of silence."""
        while b'\n' not in self.buf:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return ''
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b'\n')
        return line.decode()

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, call):
        """{'E': outcome, 'T': outcome}, with 'crash'/'hang' for the library that died or stalled."""
        if self.proc is None:
            self.start()
        self.proc.stdin.write(json.dumps(call) + '\n')
        self.proc.stdin.flush()
        side, deadline = None, time.monotonic() + TIMEOUT
        while True:
            line = self.readline(max(deadline - time.monotonic(), 0))
            if line is None or line == '':
                kind = 'hang' if line is None else 'crash'
                self.stop()
                self.events.append((kind, side, call))
                if self.verbose:
                    print(f'  {kind} in {side}: {describe(call)}', file=sys.stderr)
                return {'E': kind if side == 'E' else 'skipped', 'T': kind if side == 'T' else 'skipped'}
            if line in ('E', 'T'):
                side = line
            elif line.startswith('R '):
                return json.loads(line[2:])


def mutations(call, rng):
    """Every hostile variant of a template call, then a sample of them."""
    first = 1 if call['ns'] == 'method' else 0
    out = []
    for pos in range(first, len(call['args']) + 1):
        for value in HOSTILE:
            args = list(call['args'])
            if pos == len(args):
                args.append(value)
            else:
                args[pos] = value
            out.append(dict(call, args=args, mutated=value))
    if call['ns'] == 'method':  # self of every dtype, empty, 0-d, expanded
        for value in HOSTILE:
            if isinstance(value, dict) and 't' in value:
                out.append(dict(call, args=[value] + call['args'][1:], mutated=value))
    for key, value in HOSTILE_KW:
        out.append(dict(call, kwargs=dict(call['kwargs'], **{key: value}), mutated=value))
    if (call['ns'], call['name']) in TORCH_UNSAFE_BIG_INT:  # (native_channel_shuffle dies on groups=0 too)
        out = [c for c in out if not is_big_int(c['mutated']) and c['mutated'] != 0]
    rng.shuffle(out)
    return out[:MUTATIONS]


def sweep(sample=1, seed=0, show=20, verbose=False, dump=None):
    rng = random.Random(seed)
    targets = callables()
    if sample > 1:  # a fixed sample of the callables
        targets = [c for k, c in enumerate(targets) if k % sample == seed % sample]
    runner = Runner(verbose)
    results = []
    t0 = time.monotonic()
    try:
        for ns, name in targets:
            templates = []
            selves = SELVES if ns == 'method' else [None]
            for self_desc in selves:
                for pattern in PATTERNS:
                    args = ([self_desc] if self_desc else []) + pattern
                    call = {'ns': ns, 'name': name, 'args': args, 'kwargs': {}, 'probe': True}
                    if runner.run(call)['T'] == 'ok':
                        templates.append(dict(call, probe=False))
                        if len(templates) == TEMPLATES:
                            break
                if len(templates) == TEMPLATES:
                    break
            if not templates:  # nothing torch accepts: the plain patterns, compared as they are
                templates = [{'ns': ns, 'name': name, 'args': ([A] if ns == 'method' else []) + p, 'kwargs': {}}
                             for p in PATTERNS[:6]]
            calls = list(templates)
            for tpl in templates:
                calls += mutations(tpl, rng)
            for call in calls:
                r = runner.run(call)
                results.append((call, r))
            if verbose:
                print(f'{ns}.{name}: {len(calls)} calls, {time.monotonic() - t0:.0f} s', file=sys.stderr)
    finally:
        runner.stop()
    return summarize(results, runner.events, show, dump)


def describe(call):
    return '{}.{}({})'.format(call['ns'], call['name'], ', '.join(
        [json.dumps(a) for a in call['args']] + [f'{k}={json.dumps(v)}' for k, v in call['kwargs'].items()]))


def summarize(results, events, show, dump=None):
    both = same = torch_only = 0
    silent, mismatches, accepted, accepted_calls = [], {}, 0, []
    crashes = [e for e in events if e[0] == 'crash' and e[1] == 'E']
    hangs = [e for e in events if e[0] == 'hang' and e[1] == 'E']
    torch_faults = [e for e in events if e[1] == 'T']
    for call, r in results:
        e, t = r.get('E'), r.get('T')
        if e in ('crash', 'hang', 'skipped') or t in ('crash', 'hang', 'skipped') or str(e).startswith('build'):
            continue
        if e != 'ok' and t != 'ok':
            if e == 'NotImplementedError':
                continue  # a feature Ember lacks, not a wrong error
            both += 1
            if e == t:
                same += 1
            else:
                mismatches.setdefault((e, t), []).append(call)
        elif e == 'ok' and t != 'ok':
            accepted += 1
            accepted_calls.append((call, t))
            if t in ('IndexError', 'RuntimeError') and is_big_int(call.get('mutated')):
                silent.append((call, t))
        elif t == 'ok':
            torch_only += 1
    if dump:  # every mismatch and silent acceptance, one JSON line each
        with open(dump, 'w') as f:
            for (e, t), calls in mismatches.items():
                for call in calls:
                    f.write(json.dumps({'ember': e, 'torch': t, 'call': describe(call)}) + '\n')
            for call, t in accepted_calls:
                f.write(json.dumps({'ember': 'ok', 'torch': t, 'silent': is_big_int(call.get('mutated')),
                                    'call': describe(call)}) + '\n')
    rate = same / both if both else 1.0
    fig = {'calls': len(results), 'crashes': len(crashes), 'hangs': len(hangs), 'silent': len(silent),
           'both_raise': both, 'same_type': same, 'same_type_rate': rate, 'ember_accepts_torch_raises': accepted,
           'torch_crashes_or_hangs': len(torch_faults)}
    lines = [f"calls {fig['calls']}, ember crashes {fig['crashes']}, hangs {fig['hangs']}, "
             f"silent acceptances {fig['silent']}, same exception type {same}/{both} = {100 * rate:.2f}%, "
             f"ember accepts where torch raises {accepted}, torch crashes/hangs (excluded) {len(torch_faults)}"]
    for kind, side, call in events:
        lines.append(f'  {kind} in {"ember" if side == "E" else "torch"}: {describe(call)}')
    for call, t in silent[:show]:
        lines.append(f'  silent (torch {t}): {describe(call)}')
    ranked = sorted(mismatches.items(), key=lambda kv: -len(kv[1]))
    for (e, t), calls in ranked[:show]:
        lines.append(f'  ember {e} / torch {t}: {len(calls)}, e.g. {describe(calls[0])}')
    return fig, '\n'.join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--worker', action='store_true')
    ap.add_argument('--sample', type=int, default=1, help='run every N-th callable')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--show', type=int, default=20)
    ap.add_argument('--json', help='write the figures here')
    ap.add_argument('--dump', help='write every mismatch here (JSON lines)')
    ap.add_argument('-v', '--verbose', action='store_true')
    opt = ap.parse_args()
    if opt.worker:
        return worker()
    fig, text = sweep(opt.sample, opt.seed, opt.show, opt.verbose, opt.dump)
    print(text)
    if opt.json:
        with open(opt.json, 'w') as f:
            json.dump(fig, f)
    return 1 if fig['crashes'] or fig['hangs'] or fig['silent'] or fig['same_type_rate'] < 0.97 else 0


if __name__ == '__main__':
    sys.exit(main())
