"""The __torch_function__ protocol (ember.overrides), against torch 1.13: Tensor subclasses keep
their class through ops, can intercept functions and methods, and DisableTorchFunction /
handle_torch_function / has_torch_function behave as torch's. Run in a subprocess per library:
the first dispatching subclass switches module-level dispatch on for the whole process."""
import subprocess
import sys

import pytest

SCRIPT = r'''
import importlib, sys
torch = importlib.import_module(sys.argv[1])
F = torch.nn.functional
DisableTorchFunction = torch.DisableTorchFunction if sys.argv[1] == 'ember' else torch._C.DisableTorchFunction
r = []
r.append(torch.overrides.has_torch_function((torch.ones(1),)))
class MyT(torch.Tensor):
    pass
x = torch.ones(3).as_subclass(MyT)
r += [type(v).__name__ for v in (x, x + 1, 1 + x, x * x, torch.add(x, 1), x.sum(), x[0], torch.cat([x, x]), x.shape,
                                 F.relu(x), x.view(3, 1).T, x.max(0), x.max(0)[0], x.split(1), x.split(1)[0], x.data,
                                 torch.ones(3) + x, x.detach(), x.clone(), x.tolist(), x.float(), x.exp_(),
                                 torch.stack([x, x], dim=1), x.unsqueeze(0), -x, x @ x, x.grad)]
r.append([type(t).__name__ for t in x.view(3, 1)])
r += [str(x.dtype).split('.')[-1], x.requires_grad, x.tolist(), x.sum().item()]
log = []
class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        log.append(func.__name__.strip('_'))
        return super().__torch_function__(func, types, args, kwargs or {})
y = torch.ones(2).as_subclass(Logged)
z, w, u = torch.mul(y, 2), y.exp(), torch.stack([y, y])
r += [log, type(z).__name__, type(u).__name__, type(w).__name__]
class Intercept(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.add or func is torch.Tensor.add:
            return 'intercepted'
        with DisableTorchFunction():
            return func(*args, **(kwargs or {}))
q = torch.ones(2).as_subclass(Intercept)
r += [torch.add(q, 1), q.add(1), type(torch.mul(q, 1)).__name__, type(q * 1).__name__]
a = torch.ones(2, requires_grad=True)
b = a.as_subclass(MyT)
r += [type(b).__name__, b.requires_grad, b.is_leaf, b.grad_fn is not None]
(b * 2).sum().backward()
r.append(a.grad.tolist())
o = torch.overrides
r += [o.has_torch_function((x,)), o.has_torch_function((torch.ones(1),)), o.has_torch_function_unary(x),
      o.has_torch_function_variadic(1, x), o.has_torch_function((torch.nn.Parameter(torch.ones(1)),)),
      o.is_tensor_like(x), o.is_tensor_like(torch.ones(1)), o.is_tensor_like(3)]
with DisableTorchFunction():
    r += [type(x + 1).__name__, type(torch.add(x, 1)).__name__, o.has_torch_function((x,))]
p = torch.nn.Parameter(torch.ones(2))
r += [type(p * 2).__name__, type(torch.mul(p, 2)).__name__, type(F.linear(p, p)).__name__]
class Duck:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return 'duck'
r.append(torch.add(Duck(), 1))
class NI(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented
try:
    torch.add(torch.ones(1).as_subclass(NI), 1)
    r.append('no error')
except TypeError:
    r.append('TypeError')
def my_func(t):
    if o.has_torch_function_unary(t):
        return o.handle_torch_function(my_func, (t,), t)
    return t * 10
r += [type(my_func(x)).__name__, my_func(x).tolist(), my_func(torch.ones(1)).tolist()]
r += [type(F.handle_torch_function).__name__ == 'function' or callable(F.handle_torch_function),
      F.has_torch_function((x,)), F.has_torch_function_unary(x), F.has_torch_function_variadic(x, 1)]
print(repr(r))
'''


def run(lib):
    out = subprocess.run([sys.executable, '-c', SCRIPT, lib], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


# torch 1.13 dispatches plain-tensor methods on subclass arguments (ones(3).add(x) gives MyT);
# Ember does not (ember/overrides.py's note): that case is left out above.
def test_torch_function_protocol_matches_torch():
    mine, theirs = run('ember'), run('torch')
    assert mine == theirs
