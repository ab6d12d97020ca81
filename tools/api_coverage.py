"""Which public names of PyTorch 1.13 Ember has, per namespace: writes docs/api_coverage.md.

    /usr/bin/python3 tools/api_coverage.py            # rewrite docs/api_coverage.md
    /usr/bin/python3 tools/api_coverage.py --check    # exit 1 if the file is out of date

The reference is the torch installed beside this Python (Debian's 1.13).
A namespace's public names are those of dir() that
  - do not start with '_' (private),
  - are not modules (a subpackage is its own namespace, or out of scope),
  - are not re-exports from outside torch (typing.Any, contextlib.contextmanager...: the
    object's __module__ is not torch's), nor in LEFTOVERS (loop variables and build
    switches torch/__init__.py leaves behind).
Names in an out-of-scope family (OUT_OF_SCOPE: a rule and the reason) are listed apart and
not counted. A name is present when Ember has it and it is not a stub that only raises
NotImplementedError (marked __ember_not_implemented__, see ember/_stubs.py); ember.cuda's
calls that need a GPU count as present (they raise PyTorch's no-CUDA error, as torch does).
"""
import importlib
import os
import re
import sys
import types
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'docs', 'api_coverage.md')

# (label, torch object path, ember object path); Tensor is a class, the rest modules.
TARGETS = [
    ('torch', 'torch', 'ember'),
    ('Tensor', 'torch.Tensor', 'ember.Tensor'),
    ('nn', 'torch.nn', 'ember.nn'),
    ('nn.functional', 'torch.nn.functional', 'ember.nn.functional'),
    ('nn.init', 'torch.nn.init', 'ember.nn.init'),
    ('nn.utils', 'torch.nn.utils', 'ember.nn.utils'),
    ('nn.parallel', 'torch.nn.parallel', 'ember.nn.parallel'),
    ('optim', 'torch.optim', 'ember.optim'),
    ('optim.lr_scheduler', 'torch.optim.lr_scheduler', 'ember.optim.lr_scheduler'),
    ('utils.data', 'torch.utils.data', 'ember.utils.data'),
    ('utils.checkpoint', 'torch.utils.checkpoint', 'ember.utils.checkpoint'),
    ('autograd', 'torch.autograd', 'ember.autograd'),
    ('cuda', 'torch.cuda', 'ember.cuda'),
    ('cuda.amp', 'torch.cuda.amp', 'ember.cuda.amp'),
    ('backends', 'torch.backends', 'ember.backends'),
    ('random', 'torch.random', 'ember.random'),
    ('testing', 'torch.testing', 'ember.testing'),
    ('profiler', 'torch.profiler', 'ember.profiler'),
    ('amp', 'torch.amp', 'ember.amp'),
]
# counted and listed, but not goals of issue 14
INFORMATIONAL = [
    ('linalg', 'torch.linalg', 'ember.linalg'),
    ('fft', 'torch.fft', 'ember.fft'),
    ('special', 'torch.special', 'ember.special'),
    ('distributions', 'torch.distributions', 'ember.distributions'),
    ('distributed', 'torch.distributed', 'ember.distributed'),
    ('jit', 'torch.jit', 'ember.jit'),
    ('hub', 'torch.hub', 'ember.hub'),
]
BACKENDS = ('cudnn', 'cuda', 'mkldnn', 'opt_einsum', 'mkl', 'mps', 'openmp')
LEFTOVERS = {'PRIVATE_OPS', 'TYPE_CHECKING', 'USE_GLOBAL_DEPS', 'USE_RTLD_GLOBAL_WITH_LIBTORCH', 'attr', 'name',
             'obj', 'candidate', 'classproperty', 'lru_cache',
             'tqdm'}  # torch.hub's: the tqdm package's class, or torch's stand-in where tqdm is not installed

_QUANT = re.compile(r'quantiz|^q_|qint|quint|qscheme|qparams|fake_quant|fbgemm|per_channel|per_tensor|int_repr|'
                    r'^dequantize|^ScriptModule|^Q[A-Z].*Storage$')
_SPARSE = re.compile(r'sparse|^to_dense$|coalesce|^(indices|values)(_copy)?$|crow_indices|col_indices|row_indices|'
                     r'ccol_indices|^smm$|^hspmm$|^hsmm$|^sspaddmm$|^spmm$|^dsmm$|^saddmm$|^nnz$|^dense_dim$|^sparse_dim$|^_nnz$')
_NAMED = re.compile(r'^(names|rename|rename_|refine_names|align_to|align_as|align_tensors|has_names)$')
_BACKEND_KERNELS = re.compile(r'^(cudnn_|miopen_|mkldnn_|native_|fbgemm_|to_mkldnn$|is_mkldnn$|'
                              r'batch_norm_(elemt|gather|stats|update|backward)|quantized_|segment_reduce$)')

_TORCHSCRIPT = {'import_ir_module', 'import_ir_module_from_buffer', 'parse_ir', 'parse_schema', 'parse_type_comment',
                'merge_type_from_type_comment', 'unify_type_list', 'fork', 'wait', 'JITException',
                'read_vitals', 'set_vital', 'vitals_enabled', 'CONV_BN_FUSION', 'FUSE_ADD_RELU',
                'HOIST_CONV_PACKED_PARAMS', 'INSERT_FOLD_PREPACK_OPS'}


def _pybind(v):
    """A class bound with pybind11 (torch._C's JIT classes), or an instance of one (their enums)."""
    return type(v).__name__ == 'pybind11_type' or type(type(v)).__name__ == 'pybind11_type'


def _in_torch_top_level(v):
    """Whether v is one of torch._C's JIT bindings re-exported at torch's top level (the profiler's
    and autograd's pybind11 enums are real API, not these)."""
    import torch
    return any(getattr(torch, n, None) is v for n in ('AggregationType', 'MobileOptimizerType', 'Tag', 'AVG',
                                                      'SUM', 'REMOVE_DROPOUT')) or \
        (isinstance(v, type) and getattr(torch, v.__name__, None) is v and not hasattr(torch.autograd, v.__name__))


# (reason, predicate(name, torch value)) in order; the first that matches decides
OUT_OF_SCOPE = [
    ('TorchScript compiler internals (IR graphs, JIT types and enums, script classes, vitals): Ember runs eagerly',
     lambda n, v: n in _TORCHSCRIPT or n == 'FileCheck' or (_pybind(v) and _in_torch_top_level(v))),
    ('quantized tensors and quantization', lambda n, v: bool(_QUANT.search(n))),
    ('sparse layouts', lambda n, v: bool(_SPARSE.search(n))),
    ('named tensors (a prototype in PyTorch)', lambda n, v: bool(_NAMED.match(n))),
    ('nested tensors (a prototype in PyTorch)', lambda n, v: n in ('to_padded_tensor', 'nested_tensor')),
    ('backend-internal kernels exposed at the top level (cudnn_*, miopen_*, mkldnn_*, native_*, '
     'CUDA batch-norm pieces)', lambda n, v: bool(_BACKEND_KERNELS.match(n))),
    ("torch.backends' mechanism for settable module attributes (Ember's backends are plain modules)",
     lambda n, v: n.split('.')[-1] in ('ContextProp', 'PropModule', 'CudnnModule', 'MkldnnModule',
                                       'OptEinsumModule', 'cuFFTPlanCacheAttrContextProp')),
]
# whole namespaces Ember does not aim for
OUT_OF_SCOPE_NAMESPACES = [
    ('torch.quantization, torch.ao', 'quantized inference is not a goal of Ember'),
    ('torch.fx', 'program capture and transformation needs a tracer of its own'),
    ('torch.package', "PyTorch's archive format for code plus weights"),
    ('torch.onnx', 'export to ONNX'),
    ('torch.sparse', 'sparse layouts (COO, CSR...)'),
    ('named tensors, torch.nested', 'prototypes in PyTorch'),
    ('torch.backends.quantized, torch.backends.xnnpack', 'quantized and mobile engines'),
]


def _resolve(path):
    parts = path.split('.')
    obj = importlib.import_module(parts[0])
    for k, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module('.'.join(parts[:k + 1]))
            except ImportError:
                return None
    return obj


def _foreign(value):
    """An object imported from outside torch (typing, the standard library)."""
    if not (isinstance(value, type) or isinstance(value, types.FunctionType)) and \
            not type(value).__module__.startswith('typing'):
        return False
    module = getattr(value, '__module__', None) or ''
    return module.split('.')[0] not in ('torch', '')


def _public(obj, is_class):
    names = {}
    for name in dir(obj):
        if name.startswith('_') or name in LEFTOVERS:
            continue
        try:
            value = getattr(obj, name)
        except Exception:
            continue
        if isinstance(value, types.ModuleType) or (not is_class and _foreign(value)):
            continue
        names[name] = value
    return names


def _backends_names(torch_backends):
    names = _public(torch_backends, False)
    for sub in BACKENDS:
        module = importlib.import_module('torch.backends.' + sub)
        base = getattr(module, 'm', module)  # a PropModule wraps the real module
        found = _public(base, False)
        for cls in type(module).__mro__:
            if cls.__module__.startswith('torch.backends'):
                found.update({k: v for k, v in vars(cls).items() if not k.startswith('_')})
        names.update({f'{sub}.{k}': v for k, v in found.items()})
    return names


def _ember_has(ember_obj, name):
    obj = ember_obj
    for part in name.split('.'):
        if obj is None:
            return False
        try:
            obj = getattr(obj, part)
        except Exception:
            return False
    try:
        return getattr(obj, '__ember_not_implemented__', False) is not True
    except Exception:  # objects whose __getattr__ refuses unknown names
        return True


def measure(label, torch_path, ember_path):
    """(present, missing, out_of_scope {reason: [names]}) for one namespace."""
    torch_obj = _resolve(torch_path)
    is_class = isinstance(torch_obj, type)
    names = _backends_names(torch_obj) if label == 'backends' else _public(torch_obj, is_class)
    try:
        ember_obj = _resolve(ember_path)
    except Exception:
        ember_obj = None
    present, missing, out = [], [], {}
    for name in sorted(names):
        reason = next((r for r, rule in OUT_OF_SCOPE if rule(name, names[name])), None)
        if reason:
            out.setdefault(reason, []).append(name)
        elif ember_obj is not None and _ember_has(ember_obj, name):
            present.append(name)
        else:
            missing.append(name)
    return present, missing, out


def _pct(p, t):
    return f'{100 * p / t:.0f}%' if t else '-'


def report():
    import torch
    sys.path.insert(0, os.path.join(ROOT, 'python'))
    lines = ['# PyTorch API coverage', '',
             f'Generated by `tools/api_coverage.py` against torch {torch.__version__.split("+")[0]}; '
             '`make docs` regenerates it and the tests fail when it is out of date. A name is present when '
             'Ember has it and it is not a stub that only raises NotImplementedError. Private names, '
             'submodules and names torch re-exports from outside itself (typing, the standard library) are '
             'not counted; out-of-scope families are listed apart. See the script\'s docstring for the rules.', '']
    results = {}
    with warnings.catch_warnings():  # deprecation notes of names being looked at (torch.distributed.reduce_op)
        warnings.simplefilter('ignore')
        for label, tp, ep in TARGETS + INFORMATIONAL:
            results[label] = measure(label, tp, ep)
    lines += ['| namespace | present | total | % |', '|---|---:|---:|---:|']
    for label, _, _ in TARGETS:
        p, m, _ = results[label]
        lines.append(f'| {label} | {len(p)} | {len(p) + len(m)} | {_pct(len(p), len(p) + len(m))} |')
    lines += ['', 'Informational (other issues own these):', '', '| namespace | present | total | % |',
              '|---|---:|---:|---:|']
    for label, _, _ in INFORMATIONAL:
        p, m, _ = results[label]
        lines.append(f'| {label} | {len(p)} | {len(p) + len(m)} | {_pct(len(p), len(p) + len(m))} |')
    lines += ['', '## Out of scope', '', 'Namespaces:', '']
    lines += [f'- {ns}: {why}' for ns, why in OUT_OF_SCOPE_NAMESPACES]
    lines += ['', 'Names within the namespaces above, by family (not counted):', '']
    for reason, _ in OUT_OF_SCOPE:
        counts = [f'{label} {len(results[label][2][reason])}' for label, _, _ in TARGETS + INFORMATIONAL
                  if reason in results[label][2]]
        if counts:
            lines.append(f'- {reason}: {", ".join(counts)}')
    lines += ['', '## Missing names', '']
    for label, _, _ in TARGETS + INFORMATIONAL:
        missing = results[label][1]
        if missing:
            lines += [f'### {label} ({len(missing)})', '', ', '.join(f'`{n}`' for n in missing), '']
    return '\n'.join(lines).rstrip() + '\n'


def main():
    text = report()
    if '--check' in sys.argv:
        current = open(OUT).read() if os.path.exists(OUT) else ''
        if current != text:
            print('docs/api_coverage.md is out of date: run `make docs` (tools/api_coverage.py)', file=sys.stderr)
            return 1
        return 0
    with open(OUT, 'w') as f:
        f.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
