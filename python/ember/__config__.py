"""ember.__config__: how this build of Ember was configured (torch.__config__)."""
from . import _C


def show():
    """A description of the build: the libraries behind the kernels."""
    from . import backends
    lines = ['Ember built with:', '  - C core with OpenMP', '  - BLAS: OpenBLAS',
             f'  - oneDNN (convolutions): {"yes" if backends.mkldnn.is_available() else "no"}',
             f'  - CUDA: {"yes" if _C._cuda_is_built() else "no"}']
    return '\n'.join(lines) + '\n'


def parallel_info():
    return f'ATen/Parallel:\n\tat::get_num_threads() : {_C.get_num_threads()}\n\tParallel backend: OpenMP\n'
