"""ember.autograd.functional: Jacobians, Hessians and vector products of a
whole Python function, as torch.autograd.functional in PyTorch 1.13.

Everything is reverse mode on the engine: a Jacobian is one grad() per
output element, a Jacobian-vector product uses the double-backward trick
(the vjp is linear in its vector, so differentiating it w.r.t. that vector
gives J v). vectorize=True is accepted and runs the same loop (Ember has no
vmap); strategy='forward-mode' is not implemented."""
import ember
from .. import _C
from .grad_mode import enable_grad

__all__ = ['vjp', 'jvp', 'jacobian', 'hessian', 'hvp', 'vhp']


def _as_tuple(value, what, fn):
    """(was a tuple, the value as a tuple of tensors)."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, v in enumerate(values):
        if not isinstance(v, _C.TensorBase):
            where = f'value at index {i}' if is_tuple else f'given {what}'
            raise TypeError(f'The {what} given to {fn} must be either a Tensor or a tuple of Tensors but the '
                            f'{where} has type {type(v)}.')
    return is_tuple, values


def _unpack(res, is_tuple):
    """Undo _as_tuple: res nested once (is_tuple a bool) or twice (a pair)."""
    if isinstance(is_tuple, bool):
        return res if is_tuple else res[0]
    outer, inner = is_tuple
    if not inner:
        res = tuple(r[0] for r in res)
    return res if outer else res[0]


def _prepare(inputs, create_graph):
    """Fresh differentiable aliases of the inputs: with create_graph, inputs
    that require grad keep their history (a view), the rest are detached."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_()
                 for x in inputs)


def _finish(tensors, create_graph):
    """Results detached unless the caller wants to differentiate them."""
    if isinstance(tensors, tuple):
        return tuple(_finish(t, create_graph) for t in tensors)
    return tensors if create_graph or tensors is None else tensors.detach()


def _check_v(v, ref, is_tuple):
    if len(v) != len(ref):
        if is_tuple:
            raise RuntimeError(f'v is a tuple of invalid length: should be {len(ref)} but got {len(v)}.')
        raise RuntimeError('The given v should contain a single Tensor.')
    for i, (a, b) in enumerate(zip(v, ref)):
        if a.shape != b.shape:
            entry = f'Entry {i} in ' if is_tuple else ''
            raise RuntimeError(f'{entry}v has invalid size: should be {b.shape} but got {a.shape}.')


_NO_GRAD_MSG = {
    'outputs': 'Output {} of the user-provided function does not require gradients. The outputs must be computed '
               'in a differentiable manner from the input when running in strict mode.',
    'grad_inputs': 'The gradient with respect to input {} is independent of the inputs of the user-provided '
                   'function. This is not allowed in strict mode.',
    'jacobian': 'While computing the hessian, found that the jacobian of the user-provided function with respect '
                'to input {} is independent of the input. This is not allowed in strict mode. You should ensure '
                'that your function is twice differentiable and that the jacobian depends on the inputs (this '
                'would be violated by a linear function for example).',
    'hessian': 'The hessian of the user-provided function with respect to input {} is independent of the input. '
               'This is not allowed in strict mode. You should ensure that your function is thrice '
               'differentiable and that the hessian depends on the inputs.',
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f'The output of the user-provided function is independent of input {i}. This is '
                               'not allowed in strict mode.')
        if not t.requires_grad:
            raise RuntimeError(_NO_GRAD_MSG[kind].format(i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad only (the others
    contribute nothing); None for every input when none does."""
    keep = [i for i, o in enumerate(outputs) if o is not None and o.requires_grad]
    if not keep:
        return (None,) * len(inputs)
    outs = tuple(outputs[i] for i in keep)
    gos = None if grad_outputs is None else tuple(grad_outputs[i] for i in keep)
    return ember.autograd.grad(outs, inputs, gos, allow_unused=True, create_graph=create_graph,
                               retain_graph=retain_graph)


_MISSING_MSG = {
    'back': 'The output of the user-provided function is independent of input {}. This is not allowed in strict '
            'mode.',
    'back_trick': 'The gradient with respect to the input is independent of entry {} in the grad_outputs when '
                  'using the double backward trick to compute forward mode gradients. This is not allowed in '
                  'strict mode.',
    'double_back': 'The jacobian of the user-provided function is independent of input {}. This is not allowed '
                   'in strict mode.',
    'double_back_trick': 'The hessian of the user-provided function is independent of entry {} in the '
                         'grad_jacobian. This is not allowed in strict mode as it prevents from using the double '
                         'backward trick to replace forward mode AD.',
}


def _fill_zeros(grads, refs, strict, create_graph, stage):
    """Zeros for the inputs a gradient did not reach (an error in strict mode)."""
    res = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING_MSG[stage].format(i))
            g = ember.zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            what = 'hessian' if 'double' in stage else 'jacobian'
            raise RuntimeError(f'The {what} of the user-provided function is independent of input {i}. This is '
                               'not allowed in strict mode when create_graph=True.')
        res.append(g)
    return tuple(res)


def _default_v(v, refs, is_tuple, fn_name, what):
    """v as a tuple checked against refs; None allowed for one 1-element tensor."""
    if v is None:
        if is_tuple or refs[0].numel() != 1:
            raise RuntimeError(f'The vector v can only be None if the {what} a single Tensor with a single '
                               'element.')
        return (ember.ones_like(refs[0]),)
    _, v = _as_tuple(v, 'v', fn_name)
    _check_v(v, refs, is_tuple)
    return v


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), v^T J): the vector-Jacobian product at `inputs`."""
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, 'inputs', 'vjp')
        inputs = _prepare(inputs, create_graph)
        outputs = func(*inputs)
        is_out_tuple, outputs = _as_tuple(outputs, 'outputs of the user-provided function', 'vjp')
        _check_requires_grad(outputs, 'outputs', strict)
        v = _default_v(v, outputs, is_out_tuple, 'vjp', 'user-provided function returns')
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_zeros(grads, inputs, strict, create_graph, 'back')
    return _unpack(_finish(outputs, create_graph), is_out_tuple), _unpack(_finish(res, create_graph), is_in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), J v): the Jacobian-vector product at `inputs`, by the
    double-backward trick."""
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, 'inputs', 'jvp')
        inputs = _prepare(inputs, create_graph)
        v = _default_v(v, inputs, is_in_tuple, 'jvp', 'input to the user-provided function is')
        outputs = func(*inputs)
        is_out_tuple, outputs = _as_tuple(outputs, 'outputs of the user-provided function', 'jvp')
        _check_requires_grad(outputs, 'outputs', strict)
        # u stands for the vector of the vjp; vjp(u) is linear in u
        u = tuple(ember.zeros_like(o).requires_grad_() for o in outputs)
        grads = _grad(outputs, inputs, u, create_graph=True)
        _check_requires_grad(grads, 'grad_inputs', strict)
        grads_u = _grad(grads, u, v, create_graph=create_graph)
        res = _fill_zeros(grads_u, outputs, strict, create_graph, 'back_trick')
    return _unpack(_finish(outputs, create_graph), is_out_tuple), _unpack(_finish(res, create_graph), is_out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy='reverse-mode'):
    """The Jacobian of func at `inputs`: for output i and input j a tensor of
    shape output_i.shape + input_j.shape, nested as func's outputs and inputs."""
    if strategy not in ('forward-mode', 'reverse-mode'):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == 'forward-mode':
        raise NotImplementedError('ember.autograd.functional.jacobian: strategy="forward-mode" is not implemented '
                                  '(Ember has no forward-mode AD); use strategy="reverse-mode"')
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, 'inputs', 'jacobian')
        inputs = _prepare(inputs, create_graph)
        outputs = func(*inputs)
        is_out_tuple, outputs = _as_tuple(outputs, 'outputs of the user-provided function', 'jacobian')
        _check_requires_grad(outputs, 'outputs', strict)
        if vectorize and strict:
            raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not '
                               'supported together. Please either set `strict=False` or `vectorize=False`.')
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]  # rows[j][k]: d out.flat[k] / d input j
            flat = out.reshape(-1)
            for k in range(flat.numel()):
                grads = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, x) in enumerate(zip(grads, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f'Output {i} of the user-provided function is independent of input '
                                               f'{j}. This is not allowed in strict mode.')
                        g = ember.zeros_like(x)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f'The jacobian of the user-provided function is independent of input '
                                           f'{i}. This is not allowed in strict mode when create_graph=True.')
                    rows[j].append(g)
            jac.append(tuple(_stack_rows(r, out, x) for r, x in zip(rows, inputs)))
        jac = _finish(tuple(jac), create_graph)
    return _unpack(jac, (is_out_tuple, is_in_tuple))


def _stack_rows(rows, out, x):
    shape = tuple(out.shape) + tuple(x.shape)
    if not rows:  # an empty output
        return ember.zeros(shape, dtype=x.dtype)
    return ember.stack(rows, 0).view(shape)


def _single_output(out, fn_name):
    is_tuple, t = _as_tuple(out, 'outputs of the user-provided function', fn_name)
    if is_tuple:
        raise RuntimeError(f'The function given to {fn_name} should return a single Tensor')
    if t[0].numel() != 1:
        raise RuntimeError(f'The Tensor returned by the function given to {fn_name} should contain a single '
                           'element')
    return t[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy='reverse-mode'):
    """The Hessian of a scalar function: for inputs i, j a tensor of shape
    input_i.shape + input_j.shape (nested twice when inputs is a tuple)."""
    if outer_jacobian_strategy != 'reverse-mode':
        if outer_jacobian_strategy == 'forward-mode':
            raise NotImplementedError('ember.autograd.functional.hessian: outer_jacobian_strategy="forward-mode" is '
                                      'not implemented (Ember has no forward-mode AD)')
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    is_in_tuple, inputs = _as_tuple(inputs, 'inputs', 'hessian')

    def scalar(*xs):
        out = _single_output(func(*xs), 'hessian')
        _check_requires_grad((out,), 'outputs', strict)
        return out.squeeze()

    def gradient(*xs):
        jac = jacobian(scalar, xs, create_graph=True)
        _check_requires_grad(jac, 'jacobian', strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize)
    return _unpack(res, (is_in_tuple, is_in_tuple))


def _hessian_vector(func, inputs, v, create_graph, strict, fn_name):
    """(func(*inputs), v^T H) for a scalar func."""
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, 'inputs', fn_name)
        inputs = _prepare(inputs, create_graph)
        v = _default_v(v, inputs, is_in_tuple, fn_name, 'input to the user-provided function is')
        out = _single_output(func(*inputs), fn_name)
        _check_requires_grad((out,), 'outputs', strict)
        jac = _grad((out,), inputs, create_graph=True)
        _check_requires_grad(jac, 'jacobian', strict)
        grads = _grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_zeros(grads, inputs, strict, create_graph, 'double_back')
    return _finish(out, create_graph), _unpack(_finish(res, create_graph), is_in_tuple)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), v^T H): vector-Hessian product of a scalar function."""
    return _hessian_vector(func, inputs, v, create_graph, strict, 'vhp')


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), H v): Hessian-vector product of a scalar function.
    A Hessian is symmetric, so this is vhp's product (one double backward,
    where PyTorch's double-backward trick takes two)."""
    return _hessian_vector(func, inputs, v, create_graph, strict, 'hvp')
