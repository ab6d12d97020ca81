"""Tensor printing in PyTorch 1.13's format (torch/_tensor_str.py), the
same algorithm over Python numbers: the shown elements (the edges of each
long dimension when summarizing) are read once with tolist(), then one
formatter sizes every column. Imported on the first repr()."""
import math
import sys

from . import _C


class _PrinterOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    'default': dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    'short': dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    'full': dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Sets options for printing (NumPy's names).

    precision: digits after the point (default 4); threshold: element count
    above which tensors are summarized (1000); edgeitems: items kept at each
    end of a summarized dimension (3); linewidth: characters per line (80);
    profile: 'default', 'short' or 'full' (sets the others first);
    sci_mode: True/False forces scientific notation on or off, None chooses.
    """
    if profile is not None:
        for name, value in _PROFILES.get(profile, {}).items():
            setattr(PRINT_OPTS, name, value)
    for name, value in (('precision', precision), ('threshold', threshold), ('edgeitems', edgeitems),
                        ('linewidth', linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


class _Formatter:
    """Chooses integer, fixed or scientific notation and the column width
    from all the values shown, as PyTorch's _Formatter does."""

    def __init__(self, values, floating):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            self.max_width = max([self.max_width] + [len(str(v)) for v in values])
        else:
            finite = [v for v in values if v != 0 and math.isfinite(v)]
            if not finite:
                return
            magnitudes = [abs(v) for v in finite]
            low, high = min(magnitudes), max(magnitudes)
            self.int_mode = all(v == math.ceil(v) for v in finite)
            precision = PRINT_OPTS.precision
            if high / low > 1000.0 or high > 1.0e8 or (not self.int_mode and low < 1.0e-4):
                self.sci_mode = True
                widths = [len(f'{v:.{precision}e}') for v in finite]
            elif self.int_mode:
                widths = [len(f'{v:.0f}') + 1 for v in finite]  # + the '.' that marks a float
            else:
                widths = [len(f'{v:.{precision}f}') for v in finite]
            self.max_width = max([self.max_width] + widths)
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating_dtype:
            if self.sci_mode:
                ret = f'{value:{self.max_width}.{PRINT_OPTS.precision}e}'
            elif self.int_mode:
                ret = f'{value:.0f}'
                if not (math.isinf(value) or math.isnan(value)):
                    ret += '.'
            else:
                ret = f'{value:.{PRINT_OPTS.precision}f}'
        else:
            ret = str(value)
        return (self.max_width - len(ret)) * ' ' + ret


class _ComplexFormatter:
    """Complex values as PyTorch prints them: real parts and imaginary parts
    each sized by a _Formatter of their own, joined as 'a+bj'."""

    def __init__(self, values):
        self.real = _Formatter([v.real for v in values], True)
        self.imag = _Formatter([v.imag for v in values], True)

    def width(self):
        return self.real.width() + self.imag.width() + 1  # + the 'j'

    def format(self, value):
        imag = (self.imag.format(value.imag) + 'j').lstrip()
        return self.real.format(value.real) + ('' if imag[0] in '+-' else '+') + imag


_ELLIPSIS = object()  # where a summarized dimension skips its middle


def _shown(t):
    """The elements a summarized print shows, as nested lists; a dimension
    longer than 2 * edgeitems keeps its edges with _ELLIPSIS between."""
    if t.dim() == 0:
        return t.item()
    n, edge = t.size(0), PRINT_OPTS.edgeitems
    if n > 2 * edge:
        # PyTorch takes the tail as self[-edgeitems:], which is everything for 0
        tail_start = n - edge if edge else 0
        if t.dim() == 1:
            return t.narrow(0, 0, edge).tolist() + [_ELLIPSIS] + t.narrow(0, tail_start, n - tail_start).tolist()
        rows = list(range(edge)) + [None] + list(range(n - edge, n))
    elif t.dim() == 1:
        return t.tolist()
    else:
        rows = range(n)
    return [_ELLIPSIS if i is None else _shown(t.select(0, i)) for i in rows]


def _flat(data, dim):
    if dim == 0:
        yield data
    elif dim == 1:
        yield from (v for v in data if v is not _ELLIPSIS)
    else:
        for row in data:
            if row is not _ELLIPSIS:
                yield from _flat(row, dim - 1)


def _vector_str(data, indent, formatter):
    # an element takes its width plus ", "
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / (formatter.width() + 2))))
    items = [' ...' if v is _ELLIPSIS else formatter.format(v) for v in data]
    lines = [', '.join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return '[' + (',' + '\n' + ' ' * (indent + 1)).join(lines) + ']'


def _nested_str(data, dim, indent, formatter):
    if dim == 0:
        return formatter.format(data)
    if dim == 1:
        return _vector_str(data, indent, formatter)
    rows = ['...' if row is _ELLIPSIS else _nested_str(row, dim - 1, indent + 1, formatter) for row in data]
    return '[' + (',' + '\n' * (dim - 1) + ' ' * (indent + 1)).join(rows) + ']'


def _tensor_str(self, indent):
    if self.numel() == 0:
        return '[]'
    if self.dtype in (_C.float16, _C.bfloat16):
        self = self.float()
    data = _shown(self) if self.numel() > PRINT_OPTS.threshold else self.tolist()
    values = list(_flat(data, self.dim()))
    if self.dtype.is_complex:
        formatter = _ComplexFormatter(values)
    else:
        formatter = _Formatter(values, self.dtype.is_floating_point)
    return _nested_str(data, self.dim(), indent, formatter)


def _add_suffixes(tensor_str, suffixes, indent):
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind('\n') + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(',\n' + ' ' * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(', ' + suffix)
            last_line_len += len(suffix) + 2
    parts.append(')')
    return ''.join(parts)


def _grad_fn_name(t):
    try:
        fn = t.grad_fn
    except NotImplementedError:  # graph nodes not bound to Python in this build
        return None
    if fn is None:
        return None
    name = fn.name() if hasattr(fn, 'name') else type(fn).__name__
    return name.rsplit('::', 1)[-1]


def _str(inp, *, tensor_contents=None):
    from ._tensor import Tensor
    nn = sys.modules.get('ember.nn')
    parameter = getattr(nn, 'Parameter', None)
    plain = type(inp) is Tensor or (parameter is not None and type(inp) is parameter)
    prefix = 'tensor(' if plain else f'{type(inp).__name__}('
    indent = len(prefix)
    self = inp.detach()  # the ops below record no graph
    suffixes = []
    if self.device.type != 'cpu':
        suffixes.append("device='" + str(self.device) + "'")
    default = _C.get_default_dtype()
    if self.is_meta:  # no data: the size always shows, as PyTorch prints it
        suffixes.append('size=' + str(tuple(self.shape)))
        if self.dtype != default:
            suffixes.append('dtype=' + str(self.dtype))
        tensor_str = '...'
    elif self.numel() == 0:
        if self.dim() != 1:  # NumPy's rule: the shape is shown unless it is (0,)
            suffixes.append('size=' + str(tuple(self.shape)))
        if self.dtype != default:  # no element shows that the dtype is not the default
            suffixes.append('dtype=' + str(self.dtype))
        tensor_str = '[]'
    else:
        default_complex = _C.complex128 if default == _C.float64 else _C.complex64
        if self.dtype not in (default, default_complex, _C.int64, _C.bool):
            suffixes.append('dtype=' + str(self.dtype))
        tensor_str = None if tensor_contents is not None else _tensor_str(self, indent)
    if tensor_contents is not None:
        tensor_str = tensor_contents
    grad_fn = _grad_fn_name(inp)
    if grad_fn is not None:
        suffixes.append(f'grad_fn=<{grad_fn}>')
    elif inp.requires_grad:
        suffixes.append('requires_grad=True')
    string_repr = _add_suffixes(prefix + tensor_str, suffixes, indent)
    if parameter is not None and isinstance(inp, parameter) and not plain:
        string_repr = f'Parameter({string_repr})'
    return string_repr
