"""The launcher: `python3 -m ember.distributed.run --nproc_per_node=N
train.py args...` (torchrun's interface) starts N workers on this machine
through Open MPI's mpirun, each with torchrun's environment (RANK,
LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR,
MASTER_PORT), and returns when they have all ended: when one fails, mpirun
ends the others and the launcher exits with its status. Several machines:
mpirun --hostfile (README, "Running on several processes")."""
import argparse
import os
import shutil
import subprocess
import sys


def get_args_parser():
    p = argparse.ArgumentParser(prog='python3 -m ember.distributed.run',
                                description='Starts the workers of a distributed Ember job (torchrun\'s options).')
    p.add_argument('--nnodes', type=str, default='1')
    p.add_argument('--nproc_per_node', '--nproc-per-node', type=str, default='1')
    p.add_argument('--node_rank', '--node-rank', type=int, default=0)
    p.add_argument('--master_addr', '--master-addr', type=str, default='127.0.0.1')
    p.add_argument('--master_port', '--master-port', type=int, default=29500)
    p.add_argument('--standalone', action='store_true')
    p.add_argument('--rdzv_backend', '--rdzv-backend', type=str, default='static')
    p.add_argument('--rdzv_endpoint', '--rdzv-endpoint', type=str, default='')
    p.add_argument('--rdzv_id', '--rdzv-id', type=str, default='none')
    p.add_argument('--max_restarts', '--max-restarts', type=int, default=0)
    p.add_argument('--monitor_interval', '--monitor-interval', type=float, default=5)
    p.add_argument('--start_method', '--start-method', type=str, default='spawn')
    p.add_argument('--role', type=str, default='default')
    p.add_argument('-m', '--module', action='store_true', help='run training_script as a module (python -m)')
    p.add_argument('--no_python', '--no-python', action='store_true', help='run training_script as a program')
    p.add_argument('--run_path', '--run-path', action='store_true')
    p.add_argument('--log_dir', '--log-dir', type=str, default=None)
    p.add_argument('training_script', type=str)
    p.add_argument('training_script_args', nargs=argparse.REMAINDER)
    return p


def _nproc(value):
    if value in ('cpu', 'auto'):
        return os.cpu_count() or 1
    if value == 'gpu':
        raise ValueError('--nproc_per_node=gpu: Ember has no CUDA device here')
    n = int(value)
    if n < 1:
        raise ValueError(f'--nproc_per_node must be positive, got {n}')
    return n


def command(args):
    """The mpirun command line and the environment for these arguments."""
    if args.nnodes not in ('1', '1:1'):
        raise ValueError('ember.distributed.run starts the workers of one machine; for several, run '
                         'mpirun -np N --hostfile HOSTS python3 train.py (README, "Running on several processes")')
    if args.max_restarts:
        raise ValueError('ember.distributed.run: --max_restarts (elastic restarts) is not supported')
    mpirun = shutil.which('mpirun')
    if mpirun is None:
        raise RuntimeError('ember.distributed.run needs Open MPI\'s mpirun (Debian: apt-get install openmpi-bin)')
    n = _nproc(args.nproc_per_node)
    env = dict(os.environ, MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port), WORLD_SIZE=str(n),
               LOCAL_WORLD_SIZE=str(n), GROUP_RANK=str(args.node_rank), ROLE_RANK='0', ROLE_NAME=args.role,
               TORCHELASTIC_RUN_ID=args.rdzv_id, OMPI_MCA_rmaps_base_oversubscribe='1')
    cmd = [mpirun, '-np', str(n), '--bind-to', 'none']
    if hasattr(os, 'geteuid') and os.geteuid() == 0:
        cmd.append('--allow-run-as-root')
    for k in ('MASTER_ADDR', 'MASTER_PORT', 'WORLD_SIZE', 'LOCAL_WORLD_SIZE', 'GROUP_RANK', 'ROLE_RANK', 'ROLE_NAME',
              'TORCHELASTIC_RUN_ID'):
        cmd += ['-x', k]
    mode = 'program' if args.no_python else 'module' if args.module else 'script'
    cmd += [sys.executable, '-m', 'ember.distributed._worker', mode, args.training_script] + args.training_script_args
    return cmd, env


def run(args):
    cmd, env = command(args)
    proc = subprocess.Popen(cmd, env=env)
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        rc = proc.wait()
    if rc != 0:
        sys.stderr.write(f'ember.distributed.run: the job failed (exit status {rc}): a worker of '
                         f'{args.training_script} failed and the others were ended; its error is above\n')
    return rc


def main(args=None):
    sys.exit(run(get_args_parser().parse_args(args)))


if __name__ == '__main__':
    main()
