"""pip install support: `pip install --no-build-isolation .` builds ember._C
with the project's Makefile (one self-contained extension: the C library is
linked in) and installs the python/ember package with it."""
import os
import shutil
import subprocess
import sysconfig

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


class MakeExtension(build_ext):
    """Builds ember._C (and ember._mpi, the MPI backend of ember.distributed,
    when Open MPI's development files are installed) by `make` (the same build
    as a checkout's) and copies them in place."""

    def build_extension(self, ext):
        suffix = sysconfig.get_config_var('EXT_SUFFIX')
        name = ext.name.split('.')[-1]
        subprocess.check_call(['make', '-C', HERE, f'python/ember/{name}{suffix}', f'PYTHON={os.sys.executable}'])
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(HERE, 'python', 'ember', f'{name}{suffix}'), target)


def _has_mpi():
    return subprocess.run(['pkg-config', '--exists', 'ompi-c'], capture_output=True).returncode == 0 \
        if shutil.which('pkg-config') else False


setup(
    name='ember',
    version='0.1.0',
    description="A deep learning library with a C core and PyTorch's API",
    license='BSD-3-Clause',
    license_files=['LICENSE'],
    package_dir={'': 'python'},
    packages=find_packages(where='python'),
    ext_modules=[Extension('ember._C', sources=[])] + ([Extension('ember._mpi', sources=[])] if _has_mpi() else []),
    cmdclass={'build_ext': MakeExtension},
    python_requires='>=3.9',
)
