"""The rest of torch.nn.functional's names: conv_tbc, the __torch_function__ helpers, and the
small helpers and tables torch's functional module exports (boolean_dispatch, the grid-sample
mode tables, BroadcastingList annotations, the notes its docstrings share)."""
import ember
from ..._tensor import Tensor
from ...overrides import handle_torch_function, has_torch_function, has_torch_function_unary, \
    has_torch_function_variadic

__all__ = ['conv_tbc', 'boolean_dispatch', 'assert_int_or_pair', 'BroadcastingList1', 'BroadcastingList2',
           'BroadcastingList3', 'GRID_SAMPLE_INTERPOLATION_MODES', 'GRID_SAMPLE_PADDING_MODES', 'Tensor',
           'handle_torch_function', 'has_torch_function', 'has_torch_function_unary', 'has_torch_function_variadic',
           'reproducibility_notes', 'tf32_notes']

GRID_SAMPLE_INTERPOLATION_MODES = {'bilinear': 0, 'nearest': 1, 'bicubic': 2}
GRID_SAMPLE_PADDING_MODES = {'zeros': 0, 'border': 1, 'reflection': 2}


def conv_tbc(input, weight, bias, pad=0):
    """1-d convolution over (time, batch, channels) input with a (kernel width, in, out) weight and
    `pad` zero steps on both sides of time; the result is (time', batch, out)."""
    if input.dim() != 3 or weight.dim() != 3 or bias.dim() != 1:
        raise RuntimeError(f'conv_tbc: expected a 3-d input, a 3-d weight and a 1-d bias, got {input.dim()}-d, '
                           f'{weight.dim()}-d and {bias.dim()}-d')
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError(f'conv_tbc: input has {input.shape[2]} channels, weight expects {weight.shape[1]}')
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError(f'conv_tbc: bias has {bias.shape[0]} elements, weight has {weight.shape[2]} outputs')
    out = ember.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)  # (B, out, T')
    return out.permute(2, 0, 1)


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls if_true or if_false by a boolean argument (named arg_name, or
    positional at arg_index; `default` when not given), with the docstring of the one that has it."""
    def fn(*args, **kwargs):
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        else:
            flag = args[arg_index] if arg_index < len(args) else default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)
    if if_true.__doc__ is not None and if_false.__doc__ is not None:
        raise RuntimeError('only one function can have a docstring')
    fn.__doc__ = if_true.__doc__ or if_false.__doc__
    if_true.__doc__ = if_false.__doc__ = fn.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


def assert_int_or_pair(arg, arg_name, message):
    """AssertionError(message.format(arg_name)) unless arg is an int or a pair."""
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)


class _BroadcastingList:
    """BroadcastingList2[int]: an annotation for an int or a list of ints (TorchScript's); in eager
    code it means nothing, and subscripting it gives None, as torch's does."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = _BroadcastingList()

reproducibility_notes = {
    'forward_reproducibility_note': 'This operation may be nondeterministic on some devices; Ember\'s CPU '
                                    'kernels are deterministic.',
    'backward_reproducibility_note': 'The backward of this operation may be nondeterministic on some devices; '
                                     'Ember\'s CPU kernels are deterministic.',
    'cudnn_reproducibility_note': 'cuDNN may pick nondeterministic algorithms unless '
                                  'ember.backends.cudnn.deterministic is True.',
}
tf32_notes = {'tf32_note': 'On GPUs with TensorFloat-32, float32 matmuls and convolutions may use it; Ember\'s CPU '
                           'runs them in full float32.'}
