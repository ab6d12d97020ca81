"""gradcheck / gradgradcheck: analytical gradients (the engine's) against
central finite differences, element by element, like torch.autograd's
(slow mode). Meant for small float64 / complex128 inputs.

Complex numbers as torch 1.13's: a complex input's entry is the conjugate
Wirtinger form ds/dx + i ds/dy (its real and imaginary parts perturbed in
turn), what backward returns; a function with complex outputs is checked
twice, through the real parts of its outputs and then the imaginary ones."""
import warnings

from .. import _C


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _is_tensor(x):
    return isinstance(x, _C.TensorBase)


def _values(t):
    """A tensor's elements as Python floats (complex numbers for a complex tensor)."""
    t = t.detach()
    if t.is_complex():
        return [complex(re, im) for re, im in _C.view_as_real(t.to(_C.complex128).resolve_conj()).reshape(-1, 2).tolist()]
    return t.double().reshape(-1).tolist()


def _outputs(func, inputs):
    return [o for o in _as_tuple(func(*inputs)) if _is_tensor(o)]


def _numerical_jacobian(func, inputs, wrt, n_outputs, eps):
    """jac[i][o][j][k] = d output_o[k] / d input_wrt[i][j], by central differences.
    func runs in grad mode on a copy of the input (gradgradcheck's func
    differentiates); the copy is written through a detached alias."""
    jac = []
    for i in wrt:
        x = inputs[i].detach().contiguous().clone().requires_grad_()
        args = list(inputs)
        args[i] = x
        parts = x.is_complex()  # a complex element: its real and imaginary parts in turn
        flat = (_C.view_as_real(x.detach()) if parts else x.detach()).view(-1)

        def derivative(k):
            element = flat.narrow(0, k, 1)
            element.add_(eps)
            plus = [_values(o) for o in _outputs(func, args)]
            element.sub_(2 * eps)
            minus = [_values(o) for o in _outputs(func, args)]
            element.add_(eps)
            return [[(p - m) / (2 * eps) for p, m in zip(po, mo)] for po, mo in zip(plus, minus)]

        columns = []
        for j in range(x.numel()):
            if not parts:
                columns.append(derivative(j))
                continue
            dx, dy = derivative(2 * j), derivative(2 * j + 1)
            columns.append([[a + 1j * b for a, b in zip(ox, oy)] for ox, oy in zip(dx, dy)])
        jac.append([[col[o] for col in columns] for o in range(n_outputs)])
    return jac


def _analytical_jacobian(outputs, inputs, wrt):
    """The same layout from the engine: one grad() per output element."""
    from . import grad
    import ember
    diff = [inputs[i] for i in wrt]
    jac = [[[[0.0] * o.numel() for _ in range(inputs[i].numel())] for o in outputs] for i in wrt]
    for o, out in enumerate(outputs):
        if not out.requires_grad:
            continue
        for k in range(out.numel()):
            onehot = ember.zeros(out.numel(), dtype=out.dtype)
            onehot.narrow(0, k, 1).fill_(1)
            grads = grad(out, diff, onehot.reshape(out.shape), retain_graph=True, allow_unused=True)
            for n, g in enumerate(grads):
                if g is not None:
                    for j, v in enumerate(_values(g)):
                        jac[n][o][j][k] = v
    return jac


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _part_of_outputs(func, part):
    """func with `part` (real or imag) applied to its complex outputs (contiguous first: Ember takes no view
    of an expanded tensor that requires grad, and a gradient often is one)."""
    def wrapped(*inputs):
        return tuple(part(o.contiguous()) if _is_tensor(o) and o.is_complex() else o for o in _as_tuple(func(*inputs)))
    return wrapped


def _check(func, inputs, wrt, eps, atol, rtol, raise_exception, prefix=''):
    outputs = _outputs(func, inputs)
    numerical = _numerical_jacobian(func, inputs, wrt, len(outputs), eps)
    analytical = _analytical_jacobian(outputs, inputs, wrt)
    for n, i in enumerate(wrt):
        for o, out in enumerate(outputs):
            num, ana = numerical[n][o], analytical[n][o]
            if not out.requires_grad and any(abs(v) > atol for row in num for v in row):
                return _fail(f'{prefix}Numerical gradient for function expected to be zero (output {o}, input {i})',
                             raise_exception)
            bad = any(abs(a - b) > atol + rtol * abs(b) for ra, rb in zip(ana, num) for a, b in zip(ra, rb))
            if bad:
                return _fail(f'{prefix}Jacobian mismatch for output {o} with respect to input {i},\n'
                             f'numerical:{num}\nanalytical:{ana}\n', raise_exception)
    return True


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **unsupported):
    """True when func's gradients w.r.t. the inputs that require grad match
    finite differences within atol + rtol * |numerical|."""
    inputs = _as_tuple(inputs)
    wrt = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    if not wrt:
        raise ValueError('gradcheck expects at least one input tensor to require gradient, but none of the them have '
                         'requires_grad=True.')
    for i in wrt:
        if inputs[i].dtype not in (_C.float64, _C.complex128):
            warnings.warn(f'Input #{i} requires gradient and is not a double precision floating point or complex. '
                          'This check will likely fail if all the inputs are not of double precision floating point '
                          'or complex. ')
    if not any(o.is_complex() for o in _outputs(func, inputs)):
        return _check(func, inputs, wrt, eps, atol, rtol, raise_exception)
    from .. import _complex
    for name, part in (('real', _complex.real), ('imaginary', _complex.imag)):
        prefix = f'While considering the {name} part of complex outputs only, '
        if not _check(_part_of_outputs(func, part), inputs, wrt, eps, atol, rtol, raise_exception, prefix):
            return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **unsupported):
    """gradcheck of the gradients themselves (backward recorded with
    create_graph=True), w.r.t. the inputs and the output gradients; random
    output gradients when grad_outputs is None."""
    import ember
    from . import grad
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = [o for o in _outputs(func, inputs) if o.requires_grad]
        grad_outputs = tuple(ember.randn(o.shape, dtype=o.dtype).requires_grad_() for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)

    def first_derivatives(*args):
        xs, gos = args[:-n_out], args[-n_out:]
        outs = [o for o in _outputs(func, xs) if o.requires_grad]
        diff = [x for x in xs if _is_tensor(x) and x.requires_grad]
        grads = grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
