"""Weight normalisation (torch.nn.utils.weight_norm): a parameter w is
replaced by a magnitude g and a direction v, w = g * v / ||v||, recomputed
before every forward by a forward pre-hook."""
from ..parameter import Parameter

__all__ = ['weight_norm', 'remove_weight_norm']


def _norm_except_dim(v, dim):
    """The 2-norm of v over every dim but dim, keeping dims (dim == -1: the
    norm of the whole tensor, a 0-d tensor, as PyTorch's norm_except_dim)."""
    if dim == -1:
        return v.norm()
    dim %= v.dim()
    return v.norm(2, dim=[d for d in range(v.dim()) if d != dim], keepdim=True)


class WeightNorm:
    """The forward pre-hook that recomputes module.<name> from <name>_g and <name>_v."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + '_g')
        v = getattr(module, self.name + '_v')
        return v * (g / _norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f'Cannot register two weight_norm hooks on the same parameter {name}')
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + '_g', Parameter(_norm_except_dim(weight, fn.dim).data))
        module.register_parameter(name + '_v', Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + '_g']
        del module._parameters[self.name + '_v']
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name='weight', dim=0):
    """Reparametrises module.<name> as <name>_g (its norm over every dim
    but dim; dim=None: one norm for the whole tensor) and <name>_v; returns
    the module."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name='weight'):
    """Folds <name>_g and <name>_v back into a plain parameter <name>."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
