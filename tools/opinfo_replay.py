"""Replay PyTorch 1.13's OpInfo database (op_db) on Ember and compare with torch.

For every OpInfo entry: each variant (function, method, in-place, aliases and
their method/in-place forms) runs on each sample input in float32 and float64
(int64/bool for ops without floating dtypes), once in torch and once in Ember
on the same values (non-contiguous samples keep their strides). Compared:
values (torch.testing.assert_close's tolerances for the dtype, dtypes must
match), gradients of the function variant (backward of its outputs against the
same random cotangent),
a float64 gradcheck on the first differentiable sample, and for each error
input the exception type torch documents.

Note [Accuracy against float64]: a float32 value or gradient outside torch's
tolerance still passes when its largest error against torch's own float64
result for the same sample is at most twice torch's float32 error plus four
float32 ulps of the result's largest magnitude.
Two correct libraries sum in different orders (blocked GEMMs, oneDNN, pairwise
reductions); what the comparison must catch is an answer less accurate than
torch's, not a different rounding. Float64 results get no such allowance.

Note [Torch's own errors]: where an OpInfo names a reference implementation
(`ref`, NumPy or SciPy), a value that differs from torch's but matches the
reference within torch's tolerance passes: torch 1.13's float64 Bessel J/Y and
Airy Ai are off by up to 6e-7 where SciPy and mpmath agree to 1e-15. Error
inputs on which torch itself raises nothing are not counted. An op is "passing" when every check
of every variant passes; the first failure is kept as the reason.

Used two ways: `python3 tools/opinfo_replay.py WORKER FIRST LAST [--sampled]`
is the worker tools/opinfo_report.py runs per chunk of ops (one JSON line per
op on stdout, preceded by a "start" line so that a crash names its op), and
`python3 tools/opinfo_replay.py OPS ID [ID ...] [--sampled]` replays the named
ops (ids as the report lists them, e.g. `linalg.svd`, `polygamma.polygamma_n_0`)
and prints every failure of each, not only the first: the loop for fixing an op.

Importing op_db needs the `expecttest` module, which Debian does not ship; a
stub lives in tests/python/opinfo_stub/ and is put on sys.path here.
"""
import functools
import json
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python", "opinfo_stub"))
sys.path.append(os.path.join(ROOT, "python"))  # PYTHONPATH, when set, wins

# Families Ember does not aim for, with the reason listed in the report.
EXCLUDED_PREFIXES = {
    "masked.": "torch.masked prototype (masked tensors)",
    "_masked.": "torch._masked prototype",
    "sparse.": "sparse layouts",
    "jiterator_": "CUDA jiterator",
}
EXCLUDED_NAMES = {"to_sparse": "sparse layouts"}

# Ops whose outputs are random or uninitialised: only shape and dtype compare.
RANDOM_OPS = {
    "bernoulli", "normal", "multinomial", "rand_like", "randn_like", "randint_like",
    "uniform", "exponential", "geometric", "log_normal", "cauchy", "empty", "empty_like",
    "new_empty", "new_empty_strided", "nn.functional.dropout", "nn.functional.dropout2d",
    "nn.functional.dropout3d", "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout",
    "nn.functional.rrelu", "randint", "randn", "rand", "empty_permuted", "normal_", "random_",
    "svd_lowrank", "pca_lowrank",  # random projections: Ember's generator is not torch's
    "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",  # random windows
}


_LOW_PRECISION = ()  # torch's float32 and complex64, set by load_op_db
_FLOAT32_EPS = 2.0 ** -23


def _random_sample(op, s):
    """A sample whose result is random though the op is not (dropout inside attention)."""
    return op.name == "nn.functional._scaled_dot_product_attention" and s.kwargs.get("dropout_p", 0) > 0


def _unsorted_unique(op, s):
    """unique whose order is not a specification: sorted=False (unspecified), and slices
    along a dim (torch 1.13 does not give them in lexicographic order, Ember does)."""
    return op.name == "unique" and (s.kwargs.get("sorted", True) is False or s.kwargs.get("dim") is not None)


def _canonical_unique(out, kwargs):
    """unique's (values, inverse?, counts?) with the values in ascending order."""
    import torch
    parts = list(out) if isinstance(out, (list, tuple)) else [out]
    import numpy as np
    vals, dim = parts[0], kwargs.get("dim")
    if dim is None:
        order = torch.argsort(vals, stable=True)
    else:  # slices along dim, in lexicographic order
        if vals.numel() == 0:
            order = torch.arange(vals.shape[dim])
        else:
            rows = vals.movedim(dim, 0).reshape(vals.shape[dim], -1).double().numpy()
            order = torch.from_numpy(np.lexsort(rows.T[::-1]).astype(np.int64))
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel())
    canon, k = [vals[order] if dim is None else vals.index_select(dim, order)], 1
    if kwargs.get("return_inverse", False):
        canon.append(rank[parts[k]])
        k += 1
    if kwargs.get("return_counts", False):
        canon.append(parts[k][order])
    return canon


def gradcheck_waived(op):
    """Whether op_db itself skips or expects to fail the CPU float64 gradcheck of the
    op (TestGradients.test_fn_grad: max_unpool with duplicate indices, ctc_loss)."""
    import torch
    for d in op.decorators:
        if getattr(d, "cls_name", None) != "TestGradients" or d.test_name != "test_fn_grad" or not d.active_if:
            continue
        if d.device_type not in (None, "cpu") or (d.dtypes is not None and torch.float64 not in d.dtypes):
            continue
        if any("skip" in getattr(f, "__qualname__", "") or getattr(f, "__name__", "") == "expectedFailure"
               for f in d.decorators):
            return True
    return False


def load_op_db():
    import warnings
    import torch
    global _LOW_PRECISION
    _LOW_PRECISION = (torch.float32, torch.complex64)
    warnings.filterwarnings("ignore")
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


def op_id(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def namespace_of(op):
    import torch
    name = op.name
    for ns in ("nn.functional", "linalg", "fft", "special", "masked", "_masked", "sparse", "signal"):
        if name.startswith(ns + "."):
            return ns
    if hasattr(torch, name):
        return "torch"
    return "Tensor"


def exclusion_reason(op):
    for prefix, why in EXCLUDED_PREFIXES.items():
        if op.name.startswith(prefix):
            return why
    if op.name in EXCLUDED_NAMES:
        return EXCLUDED_NAMES[op.name]
    if not op.supported_dtypes("cpu"):
        return "CUDA-only in torch 1.13"
    return None


def test_dtypes(op):
    import torch
    have = op.supported_dtypes("cpu")
    floats = [d for d in (torch.float32, torch.float64) if d in have]
    if floats:
        return floats
    complexes = [d for d in (torch.complex64, torch.complex128) if d in have]
    if complexes:  # complex-only ops (view_as_real, imag, ...)
        return complexes
    for d in (torch.int64, torch.bool, torch.int32, torch.uint8):
        if d in have:
            return [d]
    return []


# ---- torch -> ember conversion ------------------------------------------------

class Unconvertible(Exception):
    pass


def _ember_dtype(em, d):
    return getattr(em, str(d).split(".")[-1])


def to_ember(em, x, grad_leaves=None, memo=None):
    """Torch values (nested) to Ember's; tensors keep strides and requires_grad.
    With `memo` (a dict shared by one call's arguments), a tensor passed twice
    (an input that is also out=) becomes one Ember tensor."""
    import torch
    if memo is not None and isinstance(x, torch.Tensor):
        if id(x) not in memo:
            memo[id(x)] = (x, to_ember(em, x, grad_leaves))
        return memo[id(x)][1]
    if isinstance(x, torch.nn.Module):  # a parameterless module (a distance function): Ember's own
        cls = getattr(em.nn, type(x).__name__, None)
        if cls is None or any(True for _ in x.parameters()):
            raise Unconvertible(f"a torch module argument ({type(x).__name__})")
        m = cls()
        for k, v in vars(x).items():
            if not k.startswith("_") and isinstance(v, (bool, int, float, str, type(None))):
                setattr(m, k, v)
        return m
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided or x.dtype is torch.complex32 or x.is_quantized:
            raise Unconvertible(f"{x.layout} {x.dtype} tensor")
        t = x.detach()
        if t.is_conj():  # the lazy bits cross as bits (NumPy cannot see them)
            return to_ember(em, t.conj()).conj()
        if t.is_neg():
            return to_ember(em, t._neg_view())._neg_view()
        dt = t.dtype
        wide = t.float() if dt in (torch.bfloat16,) else t
        if t.is_contiguous() or t.numel() == 0:
            e = em.from_numpy(wide.contiguous().numpy().copy())
        else:
            base = torch.empty(0, dtype=wide.dtype).set_(wide.storage())
            e = em.from_numpy(base.numpy().copy()).as_strided(
                tuple(t.shape), t.stride(), t.storage_offset())
            if dt is torch.bfloat16:
                e = e.contiguous()
        if dt is torch.bfloat16:
            e = e.to(em.bfloat16)
        if x.requires_grad:
            e = e.detach().requires_grad_(True)
            if grad_leaves is not None:
                grad_leaves.append((x, e))
        return e
    if isinstance(x, torch.dtype):
        return _ember_dtype(em, x)
    if isinstance(x, torch.device):
        return str(x)
    if isinstance(x, torch.memory_format):
        return getattr(em, str(x).split(".")[-1])
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.Generator):
        raise Unconvertible("torch.Generator argument")
    if isinstance(x, (list, tuple)):
        out = [to_ember(em, v, grad_leaves, memo) for v in x]
        return type(x)(out) if not hasattr(x, "_fields") else type(x)(*out)
    if isinstance(x, dict):
        return {k: to_ember(em, v, grad_leaves, memo) for k, v in x.items()}
    if isinstance(x, slice):
        return slice(to_ember(em, x.start), to_ember(em, x.stop), to_ember(em, x.step))
    return x


def to_torch(em, x):
    import torch
    if isinstance(x, em.Tensor):
        t = x.detach()
        if t.is_conj():
            return to_torch(em, t.conj()).conj()
        if t.is_neg():
            return to_torch(em, t._neg_view())._neg_view()
        name = str(t.dtype).split(".")[-1]
        if name == "bfloat16":
            return torch.from_numpy(t.float().numpy().copy()).to(torch.bfloat16)
        if name in ("complex32", "chalf"):  # NumPy has no complex32: through complex64
            return torch.from_numpy(t.cfloat().numpy().copy()).to(torch.complex32)
        return torch.from_numpy(t.numpy().copy())
    if isinstance(x, (list, tuple)):  # named tuples and ember.Size too
        return [to_torch(em, v) for v in x]
    if isinstance(x, em.dtype):
        return getattr(torch, str(x).split(".")[-1])
    return x


# ---- resolving an OpInfo callable to Ember's ----------------------------------

def _path(em, dotted):
    obj = em
    if dotted.startswith("torch."):  # some aliases are spelled in full (torch.special.gammainc)
        dotted = dotted[len("torch."):]
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _rebind(em, fn):
    """A lambda from the database, with `torch` in its globals meaning Ember."""
    g = dict(fn.__globals__)
    g["torch"] = em
    out = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    out.__kwdefaults__ = fn.__kwdefaults__
    return out


def resolve(em, fn, name=None, kind="function"):
    """Ember's counterpart of a torch callable of `kind`, or None when missing."""
    if fn is None:
        return None
    if isinstance(fn, functools.partial):  # e.g. partial(F.hardsigmoid, inplace=True)
        inner = resolve(em, fn.func)
        return inner and functools.partial(inner, *to_ember(em, fn.args), **to_ember(em, fn.keywords))
    if isinstance(fn, types.FunctionType) and (
            fn.__name__ == "<lambda>" or "testing._internal" in (fn.__module__ or "")):
        return _rebind(em, fn)
    fname = getattr(fn, "__name__", None)
    if kind != "function":
        return getattr(em.Tensor, fname, None) if fname else None
    if name is not None:
        hit = _path(em, name)
        if hit is not None:
            return hit
    objclass = getattr(fn, "__objclass__", None)
    if objclass is not None or (getattr(fn, "__qualname__", "") or "").startswith(("Tensor.", "_TensorBase.")):
        m = getattr(em.Tensor, fname, None)
        return (lambda m: lambda x, *a, **k: m(x, *a, **k))(m) if m is not None else None
    mod = getattr(fn, "__module__", None) or ""
    if mod.startswith("torch.") and fname:
        sub = mod[len("torch."):].replace("_C._", "")
        hit = _path(em, sub + "." + fname) if sub else None
        if hit is not None:
            return hit
    return getattr(em, fname, None) if fname else None


def variants(em, op):
    """(label, torch callable, ember callable or None, inplace?) per variant."""
    out = [("function", op.op, resolve(em, op.op, op.name), False)]
    if op.method_variant is not None:
        out.append(("method", op.method_variant, resolve(em, op.method_variant, None, "method"), False))
    if op.inplace_variant is not None:
        out.append(("inplace", op.inplace_variant, resolve(em, op.inplace_variant, None, "method"), True))
    for a in op.aliases:
        if a.op is not None:
            out.append((f"alias {a.name}", a.op, resolve(em, a.op, a.name), False))
        if a.method_variant is not None:
            out.append((f"alias {a.name} method", a.method_variant,
                        resolve(em, a.method_variant, None, "method"), False))
        if a.inplace_variant is not None:
            out.append((f"alias {a.name} inplace", a.inplace_variant,
                        resolve(em, a.inplace_variant, None, "method"), True))
    return out


# ---- comparing ------------------------------------------------------------------

def _flat(x):
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _flat(v)]
    return [x]


def _max_err(x, ref):
    """Largest |x - ref| in float64, NaN where both are NaN counting as equal."""
    import torch
    d = (x.to(ref.dtype) - ref).abs()
    d = torch.where(torch.isnan(x.to(ref.dtype)) & torch.isnan(ref), torch.zeros_like(d), d)
    d = torch.where(x.to(ref.dtype) == ref, torch.zeros_like(d), d)  # equal infinities
    return float(d.max()) if d.numel() else 0.0


def as_accurate_as_torch(a, b, ref):
    """Float32 results that miss torch's tolerance still pass when Ember is no
    farther than twice torch's own float32 error from the float64 answer `ref`:
    accumulation order differs between any two libraries (see Note [Accuracy
    against float64] in the module docstring)."""
    import torch
    if not isinstance(ref, torch.Tensor) or a.dtype not in _LOW_PRECISION or ref.shape != a.shape:
        return False
    scale = float(ref.abs().nan_to_num(0.0, 0.0, 0.0).max()) if ref.numel() else 0.0
    return _max_err(a, ref) <= 2.0 * _max_err(b, ref) + 4 * _FLOAT32_EPS * scale


def _matches_oracle(a, oracle, k):
    """Whether Ember's a matches output k of the OpInfo's own reference
    implementation (NumPy/SciPy), where torch disagrees with it."""
    import numpy as np
    import torch
    try:
        r = _flat(oracle())[k]
        r = torch.as_tensor(np.asarray(r)).to(a.dtype)
        torch.testing.assert_close(a, r, equal_nan=True, check_stride=False, check_dtype=False)
        return True
    except Exception:
        return False


def compare(em, got, want, random_op, reference=None, oracle=None):
    """None when Ember's result `got` matches torch's `want`, else a short reason.
    `reference`, when given, returns torch's outputs for the sample in float64;
    `oracle` the OpInfo's reference implementation's (Note [Torch's own errors])."""
    import torch
    g, w = _flat(to_torch(em, got)), _flat(want)
    if len(g) != len(w):
        return f"returned {len(g)} values, torch {len(w)}"
    refs = None
    for k, (a, b) in enumerate(zip(g, w)):
        if isinstance(b, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                return f"returned {type(a).__name__}, torch a tensor"
            if a.dtype != b.dtype:
                return f"dtype {a.dtype}, torch {b.dtype}"
            if a.shape != b.shape:
                return f"shape {tuple(a.shape)}, torch {tuple(b.shape)}"
            if random_op:
                continue
            try:
                torch.testing.assert_close(a, b, equal_nan=True, check_stride=False)
            except AssertionError as e:
                if a.dtype in _LOW_PRECISION and reference is not None:
                    if refs is None:
                        ref = reference()
                        refs = [] if ref is None else _flat(ref)
                    if k < len(refs) and as_accurate_as_torch(a, b, refs[k]):
                        continue
                if oracle is not None and _matches_oracle(a, oracle, k):
                    continue
                lines = [ln.strip() for ln in str(e).splitlines() if "Greatest absolute" in ln]
                return "values differ" + (": " + lines[0] if lines else "")
        elif isinstance(b, (bool, int, float)) and not random_op:
            try:  # a tensor where torch returns a Python number is a failure
                close = not isinstance(a, torch.Tensor) and (
                    a == b or (a != a and b != b) or abs(float(a) - float(b)) <= 1e-5 * (1 + abs(float(b))))
            except (TypeError, ValueError):
                close = False
            if not close:
                return f"returned {a!r}, torch {b!r}"
    return None


def _processed(em, process, out):
    """A sample's output_process_fn_grad (e.g. |V| of eig: its gradient is defined,
    V's phase is not) applied to torch's output, or rebound to Ember for Ember's."""
    if process is None:
        return out
    fn = _rebind(em, process) if em is not None and isinstance(process, types.FunctionType) else process
    return fn(out)


def compare_grads(em, t_out, e_out, leaves, seed, double_run=None, process=None):
    """Backward of both outputs against the same cotangents; None or a reason.
    `double_run`, when given, reruns torch on the sample in float64 and returns
    (outputs, leaves): float32 gradients are then judged as values are."""
    import torch
    t_out, e_out = _processed(None, process, t_out), _processed(em, process, e_out)
    tflat = _flat(t_out)
    picked = [i for i, t in enumerate(tflat) if isinstance(t, torch.Tensor) and t.requires_grad
              and (t.dtype.is_floating_point or t.is_complex())]
    if not picked or not leaves:
        return None
    touts = [tflat[i] for i in picked]
    eouts_all = _flat(e_out)
    eouts = [eouts_all[i] for i in picked]
    gen = torch.Generator().manual_seed(seed)
    cot = [torch.randn(t.shape, generator=gen, dtype=t.dtype) for t in touts]
    tin, ein = [t for t, _ in leaves], [e for _, e in leaves]
    tg = torch.autograd.grad(touts, tin, cot, allow_unused=True)
    for e in eouts:
        if not isinstance(e, em.Tensor) or not e.requires_grad:
            return "output does not require grad"
    eg = em.autograd.grad(eouts, ein, [to_ember(em, c) for c in cot], allow_unused=True)
    refs = None
    for i, (a, b) in enumerate(zip(eg, tg)):
        if b is None:
            continue
        a = torch.zeros_like(b) if a is None else to_torch(em, a)
        try:
            torch.testing.assert_close(a, b, equal_nan=True, check_stride=False)
        except AssertionError as e:
            if a.dtype in _LOW_PRECISION and double_run is not None:
                if refs is None:
                    refs = _reference_grads(double_run, picked, cot, process)
                if refs is not None and as_accurate_as_torch(a, b, refs[i]):
                    continue
            lines = [ln.strip() for ln in str(e).splitlines() if "Greatest absolute" in ln]
            return f"gradient of input {i} differs" + (": " + lines[0] if lines else "")
    return None


def _reference_grads(double_run, picked, cot, process=None):
    """torch's float64 gradients of the sample against the same cotangents."""
    import torch
    try:
        outs, dleaves = double_run()
        flat = _flat(_processed(None, process, outs))
        douts = [flat[i] for i in picked]
        grads = torch.autograd.grad(douts, dleaves, [c.to(o.dtype) for c, o in zip(cot, douts)],
                                    allow_unused=True)
    except Exception:
        return None
    return [g if g is None else g.detach() for g in grads]


def to_double(x, leaves):
    """A float32 torch sample (nested) in float64, complex64 in complex128; leaves
    that require grad are collected in the order to_ember visits them."""
    import torch
    if isinstance(x, torch.Tensor):
        wide = {torch.float32: torch.float64, torch.complex64: torch.complex128}.get(x.dtype)
        t = x.detach().to(wide) if wide else x.detach()
        if x.requires_grad:
            t.requires_grad_(True)
            leaves.append(t)
        return t
    if isinstance(x, (list, tuple)):
        out = [to_double(v, leaves) for v in x]
        return type(x)(out) if not hasattr(x, "_fields") else type(x)(*out)
    if isinstance(x, dict):
        return {k: to_double(v, leaves) for k, v in x.items()}
    return x


def _try(fn):
    """fn() or None when it raises (a reference torch cannot compute)."""
    try:
        return fn()
    except Exception:
        return None


def _short(e):
    msg = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {msg[:120]}"


# ---- one op ---------------------------------------------------------------------

def replay_op(em, op, sampled=False):
    """{'id', 'ns', 'pass', 'reason', 'errors_ok', 'errors_total', 'checks'}."""
    import torch
    res = {"id": op_id(op), "ns": namespace_of(op), "pass": True, "reason": None,
           "errors_ok": 0, "errors_total": 0, "checks": 0, "error_fails": [], "failures": []}

    def fail(why):
        if res["pass"]:
            res["pass"], res["reason"] = False, why
        res["failures"].append(why)

    random_op = op.name in RANDOM_OPS
    vs = variants(em, op)
    for label, tfn, efn, _ in vs:
        if efn is None:
            what = op.name if label == "function" else label if label.count(" ") == 1 else \
                f"{label} {getattr(tfn, '__name__', '')}"
            fail(f"missing in Ember: {what}")
    dtypes = test_dtypes(op)
    if not dtypes:
        fail("no dtype Ember can test")
    gradchecked = False
    for dt in dtypes:
        grad = op.supports_autograd and dt.is_floating_point and not random_op
        try:
            samples = list(op.sample_inputs("cpu", dt, requires_grad=grad))
        except Exception as e:  # the database's own generator failed: not Ember's fault
            res.setdefault("notes", []).append(f"sample_inputs failed: {_short(e)}")
            continue
        if sampled:
            samples = samples[:1]
        for si, s in enumerate(samples):
            rnd = random_op or _random_sample(op, s)
            for label, tfn, efn, inplace in vs:
                if efn is None:
                    continue
                where = f"{label} {str(dt)[6:]} sample {si}"
                if inplace:
                    conv_t = lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v
                    try:
                        want = tfn(conv_t(s.input), *s.args, **s.kwargs)
                    except Exception:
                        want = None  # torch refuses this in-place form: Ember must too
                    try:
                        e_in = to_ember(em, s.input).detach().clone()
                        got = efn(e_in, *to_ember(em, s.args), **to_ember(em, s.kwargs))
                    except Unconvertible:
                        continue
                    except Exception as e:
                        if want is not None:
                            fail(f"{where}: raised {_short(e)}")
                        continue
                    res["checks"] += 1
                    if want is None:
                        fail(f"{where}: torch raises, Ember does not")
                        continue
                    why = compare(em, got, want, rnd)
                    if why:
                        fail(f"{where}: {why}")
                    continue
                try:
                    want = tfn(s.input, *s.args, **s.kwargs)
                except Exception:
                    continue  # sample torch itself rejects for this variant
                leaves = []
                try:
                    memo = {}
                    e_args = (to_ember(em, s.input, leaves, memo), to_ember(em, s.args, leaves, memo),
                              to_ember(em, s.kwargs, leaves, memo))
                except Unconvertible:
                    continue
                res["checks"] += 1
                try:
                    got = efn(e_args[0], *e_args[1], **e_args[2])
                except Exception as e:
                    fail(f"{where}: raised {_short(e)}")
                    continue
                double_run = None
                if dt is torch.float32 and not rnd:
                    def double_run(tfn=tfn, s=s):
                        dleaves = []
                        d = to_double((s.input, s.args, s.kwargs), dleaves)
                        return tfn(d[0], *d[1], **d[2]), dleaves
                reference = double_run and (lambda run=double_run: _try(lambda: run()[0]))
                oracle = None
                if getattr(op, "ref", None) is not None and not rnd:
                    def oracle(s=s):
                        n = s.numpy()
                        return op.ref(n.input, *n.args, **n.kwargs)
                if _unsorted_unique(op, s):
                    got, want = _canonical_unique(to_torch(em, got), s.kwargs), _canonical_unique(want, s.kwargs)
                    reference = oracle = None
                why = compare(em, got, want, rnd, reference, oracle)
                if why:
                    fail(f"{where}: {why}")
                    continue
                if grad and not rnd and label == "function":
                    try:
                        why = compare_grads(em, want, got, leaves, si, double_run, s.output_process_fn_grad)
                    except Unconvertible:  # a complex32 cotangent: no gradient to compare
                        why = None
                    except Exception as e:
                        why = f"backward raised {_short(e)}"
                    if why:
                        fail(f"{where}: {why}")
                        continue
                    if dt is torch.float64 and not gradchecked and leaves and not gradcheck_waived(op):
                        gradchecked = True
                        why = _gradcheck(em, efn, e_args, leaves, op.gradcheck_wrapper, s.output_process_fn_grad)
                        if why:
                            fail(f"{where}: {why}")
    if res["checks"] == 0:
        fail("no sample input could be replayed")
    _replay_errors(em, op, res)
    return res


def _gradcheck(em, efn, e_args, leaves, wrapper=None, process=None):
    """Ember's float64 gradcheck on one sample (its differentiable tensor inputs vary),
    through the OpInfo's gradcheck wrapper as torch's own test does (it makes the
    perturbed input valid: symmetric for eigh, triangular for cholesky_inverse...)."""
    call = _rebind(em, wrapper) if isinstance(wrapper, types.FunctionType) else None
    leaf_ids = {id(e) for _, e in leaves}
    flat_positions = [e for _, e in leaves]

    def fn(*xs):
        m = dict(zip(map(id, flat_positions), xs))

        def sub(v):
            if isinstance(v, em.Tensor) and id(v) in leaf_ids:
                return m[id(v)]
            if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
                return type(v)(sub(u) for u in v)
            if isinstance(v, dict):
                return {k: sub(u) for k, u in v.items()}
            return v
        args = (sub(e_args[0]), *sub(e_args[1]))
        out = call(efn, *args, **sub(e_args[2])) if call else efn(*args, **sub(e_args[2]))
        outs = [o for o in _flat(_processed(em, process, out)) if isinstance(o, em.Tensor) and o.requires_grad
                and o.dtype in (em.float64, em.complex128)]
        return tuple(outs)
    try:
        ok = em.autograd.gradcheck(fn, tuple(flat_positions), raise_exception=False,
                                   check_undefined_grad=False, check_batched_grad=False,
                                   nondet_tol=1e-10)
    except TypeError:
        ok = em.autograd.gradcheck(fn, tuple(flat_positions), raise_exception=False)
    except Exception as e:
        return f"gradcheck raised {_short(e)}"
    return None if ok else "gradcheck failed"


def _replay_errors(em, op, res):
    if op.error_inputs_func is None:
        return
    try:
        errs = list(op.error_inputs("cpu"))
    except Exception as e:
        res.setdefault("notes", []).append(f"error_inputs failed: {_short(e)}")
        return
    efn = resolve(em, op.op, op.name)
    for i, ei in enumerate(errs):
        res["errors_total"] += 1
        want = ei.error_type
        if efn is None:
            res["error_fails"].append(f"error input {i}: op missing")
            continue
        s = ei.sample_input
        try:  # an error input torch itself accepts specifies nothing: not counted
            op.op(s.input, *s.args, **s.kwargs)
            res["errors_total"] -= 1
            continue
        except Exception:
            pass
        try:  # a value the harness cannot convert (65 dims for NumPy, meta tensors) is not counted
            memo = {}
            e_args = (to_ember(em, s.input, None, memo), to_ember(em, s.args, None, memo),
                      to_ember(em, s.kwargs, None, memo))
        except Exception:
            res["errors_total"] -= 1
            continue
        try:
            efn(e_args[0], *e_args[1], **e_args[2])
        except Exception as e:
            if isinstance(e, want):
                res["errors_ok"] += 1
            else:
                res["error_fails"].append(
                    f"error input {i}: raised {type(e).__name__}, torch {want.__name__}")
            continue
        res["error_fails"].append(f"error input {i}: no error, torch {want.__name__}")


def op_entries():
    """(op, exclusion reason or None) for every entry of op_db, in order."""
    return [(op, exclusion_reason(op)) for op in load_op_db()]


OP_TIMEOUT = 600  # seconds one op may take before its worker exits as hung


def worker(first, last, sampled):
    """Replay op_db[first:last], one JSON line per op; 'start' lines name a crash."""
    import faulthandler
    import torch
    import ember as em
    torch.manual_seed(0)
    entries = op_entries()
    for i in range(first, min(last, len(entries))):
        op, why = entries[i]
        print(json.dumps({"start": i}), flush=True)
        faulthandler.dump_traceback_later(OP_TIMEOUT, exit=True)  # a hang in C code too
        if why:
            r = {"id": op_id(op), "ns": namespace_of(op), "excluded": why}
        else:
            torch.manual_seed(i)
            em.manual_seed(i)
            try:
                r = replay_op(em, op, sampled)
            except Exception as e:  # a bug of this harness, reported, never hidden
                r = {"id": op_id(op), "ns": namespace_of(op), "pass": False,
                     "reason": f"harness error {_short(e)}", "errors_ok": 0,
                     "errors_total": 0, "error_fails": []}
        faulthandler.cancel_dump_traceback_later()
        r["index"] = i
        print(json.dumps(r), flush=True)


def replay_named(ids, sampled):
    """Replay the ops named by id and print each failure; exit status 1 if any fails."""
    import torch
    import ember as em
    entries = {op_id(op): (i, op) for i, op in enumerate(load_op_db())}
    unknown = [n for n in ids if n not in entries]
    if unknown:
        sys.exit(f"not in op_db: {', '.join(unknown)}")
    failed = False
    for name in ids:
        i, op = entries[name]
        torch.manual_seed(i)
        em.manual_seed(i)
        r = replay_op(em, op, sampled)
        failed |= not r["pass"]
        print(f"{name}: {'PASS' if r['pass'] else 'FAIL'} ({r['checks']} checks, "
              f"errors {r['errors_ok']}/{r['errors_total']})")
        for why in r["failures"] + r["error_fails"]:
            print(f"    {why}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "WORKER":
        worker(int(sys.argv[2]), int(sys.argv[3]), "--sampled" in sys.argv)
    elif len(sys.argv) >= 3 and sys.argv[1] == "OPS":
        replay_named([a for a in sys.argv[2:] if a != "--sampled"], "--sampled" in sys.argv)
    else:
        sys.exit("usage: opinfo_replay.py WORKER FIRST LAST [--sampled] (run tools/opinfo_report.py)\n"
                 "       opinfo_replay.py OPS ID [ID ...] [--sampled]")
