"""One worker of ember.distributed.run, started by mpirun: sets torchrun's
RANK / LOCAL_RANK from Open MPI's, then runs the training script (or
module, or program) as __main__."""
import os
import runpy
import sys


def main():
    mode, target, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    env = os.environ
    env['RANK'] = env.get('OMPI_COMM_WORLD_RANK', '0')
    env['LOCAL_RANK'] = env.get('OMPI_COMM_WORLD_LOCAL_RANK', env['RANK'])
    if mode == 'program':
        os.execvp(target, [target] + argv)
    sys.argv = [target] + argv
    if mode == 'module':
        runpy.run_module(target, run_name='__main__', alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        runpy.run_path(target, run_name='__main__')


if __name__ == '__main__':
    main()
