"""torch.nn.functional's linear and bilinear."""
from ... import _C

__all__ = ['linear', 'bilinear']


def linear(input, weight, bias=None):
    """y = input @ weight^T + bias, input (*, in_features), weight
    (out_features, in_features), bias (out_features) or None (em_linear in C)."""
    return _C._nn.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o];
    input1 (*, in1), input2 (*, in2) with the same leading dims, weight
    (out, in1, in2), bias (out) or None. Computed as one matmul against
    weight laid out (in1, out * in2), then a product with input2 reduced
    over in2, so the gradients come from those ops."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f'bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}')
    for i in range(input1.dim() - 1):
        if input1.size(i) != input2.size(i):
            raise RuntimeError(f'bilinear(): input batch dimensions do not match at dim {i}: got {input1.size(i)} '
                               f'and {input2.size(i)}')
    if weight.dim() != 3:
        raise RuntimeError(f'bilinear(): weight must be 3-D (out, in1, in2), got {weight.dim()}-D')
    if input1.size(-1) != weight.size(1):
        raise RuntimeError(f'bilinear(): input1 size does not match weight size: got {input1.size(-1)} but '
                           f'expected {weight.size(1)}')
    if input2.size(-1) != weight.size(2):
        raise RuntimeError(f'bilinear(): input2 size does not match weight size: got {input2.size(-1)} but '
                           f'expected {weight.size(2)}')
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError(f'bilinear(): bias size does not match weight size: got {bias.size(0)} but '
                           f'expected {weight.size(0)}')
    out_features, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)                                    # (N, in1)
    x2 = input2.reshape(-1, 1, in2)                                 # (N, 1, in2)
    w = weight.permute(1, 0, 2).reshape(in1, out_features * in2)   # (in1, out * in2)
    y = (_C.matmul(x1, w).reshape(-1, out_features, in2) * x2).sum(-1)  # (N, out)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + (out_features,))
