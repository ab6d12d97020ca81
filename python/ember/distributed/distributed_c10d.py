"""Process groups and collectives (torch.distributed's c10d API) on Ember's
backends. 'mpi' (CPU tensors) is ember._mpi, C over Open MPI; a backend is
an object with init() and submit(...) returning works with wait(timeout)
(see _mpi_backend), which is where 'nccl' will slot in. This file turns
tensors into contiguous buffers, converts ranks, applies timeouts, and
copies results back; the transfers themselves are the backend's."""
import atexit
import os
import sys
from datetime import timedelta

import ember
from ..futures import Future

__all__ = ['Backend', 'ReduceOp', 'reduce_op', 'DebugLevel', 'Work', 'ProcessGroup', 'GroupMember', 'group',
           'default_pg_timeout', 'is_available', 'is_mpi_available', 'is_nccl_available', 'is_gloo_available',
           'is_ucc_available', 'is_initialized', 'is_torchelastic_launched', 'init_process_group',
           'destroy_process_group', 'get_backend', 'get_rank', 'get_world_size', 'get_global_rank',
           'get_group_rank', 'get_process_group_ranks', 'new_group', 'new_subgroups',
           'new_subgroups_by_enumeration', 'barrier', 'monitored_barrier',
           'get_debug_level', 'set_debug_level', 'set_debug_level_from_env', 'supports_complex']

default_pg_timeout = timedelta(minutes=30)


class Backend(str):
    """A backend's name: Backend('MPI') == 'mpi'."""
    UNDEFINED = 'undefined'
    GLOO = 'gloo'
    NCCL = 'nccl'
    UCC = 'ucc'
    MPI = 'mpi'
    TCP = 'tcp'

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f'Backend name must be a string, but got: {name}')
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.TCP:
            raise ValueError('TCP backend has been deprecated. Please use Gloo or MPI backend for collective '
                             'operations on CPU tensors.')
        if value == Backend.UNDEFINED:
            raise ValueError(f"Invalid backend: '{name}'")
        return str.__new__(cls, value)

    @classmethod
    def register_backend(cls, name, func, extended_api=False):
        raise NotImplementedError('ember.distributed: third-party backends cannot be registered')


class ReduceOp:
    """ReduceOp.SUM, PRODUCT, MIN, MAX, BAND, BOR, BXOR, AVG (and PREMUL_SUM,
    which Ember does not implement). Bool tensors reduce logically."""

    def __init__(self, name, code):
        self.name, self.code = name, code

    def __repr__(self):
        return f'<ReduceOp.{self.name}>'

    def __eq__(self, other):
        return isinstance(other, ReduceOp) and other.code == self.code

    def __hash__(self):
        return hash(self.code)


for _i, _n in enumerate(('SUM', 'PRODUCT', 'MIN', 'MAX', 'BAND', 'BOR', 'BXOR', 'AVG', 'PREMUL_SUM')):
    setattr(ReduceOp, _n, ReduceOp(_n, _i))
_AVG = ReduceOp.AVG.code


def _make_nccl_premul_sum(factor):
    """ReduceOp.PREMUL_SUM with its factor (a number, or a list of one-element
    tensors as torch takes per device): all_reduce multiplies each rank's
    input by it, then sums."""
    if isinstance(factor, (list, tuple)) and factor and all(isinstance(t, ember.Tensor) for t in factor):
        value = factor[0]
    elif isinstance(factor, (int, float)) and not isinstance(factor, bool):
        value = float(factor)
    else:
        raise TypeError(f'_make_nccl_premul_sum(): factor must be a float or a list of tensors, got '
                        f'{type(factor).__name__}')
    op = ReduceOp('PREMUL_SUM', ReduceOp.PREMUL_SUM.code)
    op._factor = value
    return op


class reduce_op:
    """Deprecated alias of ReduceOp (torch.distributed.reduce_op)."""
    SUM, PRODUCT, MIN, MAX = ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX


class DebugLevel:
    """OFF, INFO, DETAIL (TORCH_DISTRIBUTED_DEBUG): DETAIL checks before each
    collective that every rank calls the same one on the same shapes."""

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __repr__(self):
        return f'<DebugLevel.{self.name}: {self.value}>'


DebugLevel.OFF, DebugLevel.INFO, DebugLevel.DETAIL = (DebugLevel(n, i) for i, n in enumerate(('OFF', 'INFO', 'DETAIL')))
_debug_level = DebugLevel.OFF


def get_debug_level():
    return _debug_level


def set_debug_level(level):
    global _debug_level
    _debug_level = level


def set_debug_level_from_env():
    value = os.environ.get('TORCH_DISTRIBUTED_DEBUG', 'OFF').upper()
    if not hasattr(DebugLevel, value) or value not in ('OFF', 'INFO', 'DETAIL'):
        raise RuntimeError(f"The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO or DETAIL, but is '{value}'.")
    set_debug_level(getattr(DebugLevel, value))


def supports_complex(reduceOp):
    return reduceOp not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR,
                            ReduceOp.BXOR)


# ---------------------------------------------------------------- backends

def _load_mpi():
    from .. import _mpi  # loads libmpi: only here
    return _mpi


def is_mpi_available():
    import importlib.util
    return importlib.util.find_spec('ember._mpi') is not None


def is_nccl_available():
    return False


def is_gloo_available():
    return False


def is_ucc_available():
    return False


def is_available():
    return True


def is_torchelastic_launched():
    return os.getenv('TORCHELASTIC_RUN_ID') is not None


def _failed(name, e):
    """The error of an operation the backend reports failed (e)."""
    hint = ('; the ranks passed tensors of different sizes (TORCH_DISTRIBUTED_DEBUG=DETAIL checks every '
            'collective)') if 'TRUNCATE' in str(e) else ''
    return RuntimeError(f'ember.distributed: {name} failed on rank {_world.rank}: {e}{hint}')


def _timed_out(name, seconds):
    """The error of an operation not done after `seconds`."""
    _state.stuck = True  # the communication thread may never come back: abort at exit
    return RuntimeError(f'ember.distributed: {name} timed out after {seconds:g} s on rank {_world.rank} (world '
                        f'size {_world.size}): another rank died, is stuck, or did not call the same collective')


class Work:
    """The handle of an operation (async_op=True): wait(timeout=None) blocks
    until it is complete (RuntimeError after the timeout: a peer died or is
    stuck), is_completed() asks without blocking, result() gives the output
    tensors, source_rank() a recv's sender."""

    def __init__(self, group, name, works, finish=None, outputs=()):
        self._group, self._name, self._works, self._finish = group, name, works, finish
        self._outputs, self._done, self._exception = list(outputs), False, None

    def _complete(self, seconds):
        for w in self._works:
            try:
                if not w.wait(seconds):
                    return False
            except RuntimeError as e:
                self._exception = _failed(self._name, e)
                self._done = True
                raise self._exception from None
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()
        return True

    def wait(self, timeout=None):
        if self._exception is not None:
            raise self._exception
        t = self._group._timeout if timeout is None else timeout
        seconds = t.total_seconds() if isinstance(t, timedelta) else float(t)
        if not self._complete(seconds):
            raise _timed_out(self._name, seconds)
        return True

    def is_completed(self):
        return self._done or self._complete(0.0)

    def is_success(self):
        return self.is_completed() and self._exception is None

    def exception(self):
        return self._exception

    def result(self):
        self.wait()
        return self._outputs

    def source_rank(self):
        self.wait()
        return self._group._ranks[self._works[-1].result]

    def synchronize(self):
        self.wait()

    def get_future(self):
        """A Future whose value is the output tensors, once the work is done."""
        def outputs():
            self.wait()
            return self._outputs
        return Future(outputs, self.is_completed)


class ProcessGroup:
    """A group of ranks with its own communicator. rank() and size() are
    this process's rank in it and its size."""

    def __init__(self, backend_name, backend, comm, ranks, my_rank, timeout):
        self._backend_name, self._backend, self._comm = backend_name, backend, comm
        self._ranks, self._rank, self._timeout = list(ranks), my_rank, timeout
        self._timeout_s = timeout.total_seconds()  # read by every blocking collective

    def rank(self):
        return self._rank

    def size(self):
        return len(self._ranks)

    def name(self):
        return self._backend_name.upper()

    def __repr__(self):
        return f'<ember.distributed.ProcessGroup {self._backend_name} ranks={self._ranks}>'


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = object()


class group:
    WORLD = None


class _State:
    def __init__(self):
        self.backend = None      # the loaded backend module
        self.world = None        # the default ProcessGroup
        self.rank = self.size = -1
        self.groups = []
        self.stuck = False       # a wait timed out
        self.failed = False      # an exception went uncaught
        self.exit_hooked = False


_state = _State()
_world = _state  # rank / size for messages


def is_initialized():
    return _state.world is not None


def _default():
    if _state.world is None:
        raise RuntimeError('Default process group has not been initialized, please make sure to call '
                           'init_process_group.')
    return _state.world


def _group(g):
    if g is None or g is GroupMember.WORLD:
        return _default()
    if g is GroupMember.NON_GROUP_MEMBER:
        raise RuntimeError('The given group does not include this rank')
    if not isinstance(g, ProcessGroup):
        raise TypeError(f'group must be a ProcessGroup, not {type(g).__name__}')
    if g._comm is None:
        raise RuntimeError('Invalid process group specified (destroyed)')
    return g


def _env_int(*names):
    for n in names:
        if os.environ.get(n, '') != '':
            return int(os.environ[n])
    return None


def _on_exit():
    """At exit: finalize MPI after a clean run; after a timeout or an uncaught
    exception, end the whole job (MPI_Abort) so that no rank waits forever
    for this one."""
    if _state.backend is None:
        return
    if _state.stuck or _state.failed:
        sys.stderr.write(f'ember.distributed: rank {_state.rank} is ending the job '
                         f'({"a collective timed out" if _state.stuck else "an exception was not caught"})\n')
        _state.backend.abort(1)
    _state.backend.finalize()


def _excepthook(etype, value, tb):
    _state.failed = True
    _state.previous_hook(etype, value, tb)


def init_process_group(backend=None, init_method=None, timeout=default_pg_timeout, world_size=-1, rank=-1,
                       store=None, group_name='', pg_options=None):
    """Joins the job: with backend 'mpi' (the default for CPU tensors; 'gloo',
    PyTorch's CPU backend, runs on it too) the rank and world size come from
    mpirun (or from ember.distributed.run, which starts the workers through
    mpirun); rank= / world_size= / RANK / WORLD_SIZE, when given, must agree
    with them."""
    if _state.world is not None:
        raise RuntimeError('trying to initialize the default process group twice!')
    if not isinstance(timeout, timedelta):
        raise RuntimeError('Expected timeout argument to be of type datetime.timedelta')
    name = Backend(backend) if backend is not None else Backend.MPI
    if name == Backend.NCCL:
        if not ember.cuda.is_available():
            raise RuntimeError("Distributed package doesn't have NCCL built in: NCCL needs CUDA, and Ember "
                               "has no CUDA device here (use backend='mpi' for CPU tensors)")
        raise NotImplementedError("ember.distributed: the 'nccl' backend is not built yet")
    if name == Backend.GLOO:  # PyTorch's CPU backend: Ember's is MPI, which runs such scripts unchanged
        name = Backend.MPI
    if name != Backend.MPI:
        raise RuntimeError(f"Distributed package doesn't have {name.upper()} built in "
                           f"(Ember's CPU backend is 'mpi')")
    if init_method is not None and store is not None:
        raise ValueError('Cannot specify both init_method and store.')
    if not is_mpi_available():
        raise RuntimeError("Distributed package doesn't have MPI built in: build Ember with Open MPI's "
                           "development files (libopenmpi-dev) installed")
    backend_mod = _load_mpi()
    mpi_rank, mpi_size = backend_mod.init()
    want_rank = rank if rank >= 0 else _env_int('RANK')
    want_size = world_size if world_size > 0 else _env_int('WORLD_SIZE')
    if want_size is not None and want_size != mpi_size:
        raise ValueError(f'world_size {want_size} does not match the MPI job\'s size {mpi_size}: start the '
                         f'processes with mpirun -np {want_size} or python3 -m ember.distributed.run')
    if want_rank is not None and want_rank != mpi_rank:
        raise ValueError(f'rank {want_rank} does not match the MPI rank {mpi_rank} of this process')
    _state.backend, _state.rank, _state.size = backend_mod, mpi_rank, mpi_size
    world = ProcessGroup(name, backend_mod, 0, range(mpi_size), mpi_rank, timeout)
    _state.world = GroupMember.WORLD = group.WORLD = world
    _state.groups = [world]
    if not _state.exit_hooked:
        _state.exit_hooked = True
        atexit.register(_on_exit)
        _state.previous_hook = sys.excepthook
        sys.excepthook = _excepthook
    set_debug_level_from_env()


def destroy_process_group(group=None):
    """Frees the group's communicator (every member must call it); with no
    argument, every group. MPI itself stays up until exit (it cannot be
    initialized twice), so init_process_group may be called again."""
    if group is None or group is GroupMember.WORLD:
        if _state.world is None:
            raise RuntimeError('Invalid process group specified')
        for g in reversed(_state.groups):
            _free(g)
        _state.world = GroupMember.WORLD = globals()['group'].WORLD = None
        _state.groups = []
    elif group is not GroupMember.NON_GROUP_MEMBER:
        _free(_group(group))


def _free(g):
    # the world's communicator (0) stays: MPI lives until exit, and a new
    # init_process_group reuses it
    if g._comm and g._rank >= 0:
        g._backend.submit(g._backend.COMM_FREE, g._comm, 0, 0, 0, '', 0, 0, 0, None).wait(g._timeout.total_seconds())
    g._comm = None
    if g in _state.groups:
        _state.groups.remove(g)


def new_group(ranks=None, timeout=default_pg_timeout, backend=None, pg_options=None):
    """A group of the given global ranks (all of them when None). Every
    process of the world must call it, members or not; non-members get
    GroupMember.NON_GROUP_MEMBER."""
    world = _default()
    ranks = sorted(set(range(world.size()) if ranks is None else ranks))
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f'Invalid rank {r} for new_group: the world has ranks 0..{world.size() - 1}')
    if backend is not None and Backend(backend) not in (world._backend_name, Backend.GLOO):
        raise RuntimeError(f'new_group: backend {backend} differs from the default group\'s '
                           f'{world._backend_name}')
    b = world._backend
    w = b.submit(b.COMM_CREATE, 0, 0, 0, 0, '', 0, 0, 0, ranks)
    Work(world, 'new_group', [w]).wait()
    if world.rank() not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    g = ProcessGroup(world._backend_name, b, w.result, ranks, ranks.index(world.rank()), timeout)
    _state.groups.append(g)
    return g


def new_subgroups(group_size=None, group=None, timeout=default_pg_timeout, backend=None, pg_options=None):
    """Splits the world into groups of group_size consecutive ranks: (this
    rank's group, all of them). Every process must call it."""
    if group_size is None:
        raise ValueError('new_subgroups: group_size is required (its default, the number of CUDA devices, is 0 '
                         'here)')
    if group_size <= 0:
        raise ValueError("The arg 'group_size' must be a positive integer")
    world = get_world_size()
    if world % group_size:
        raise ValueError("The world size must be divisible by 'group_size'")
    return new_subgroups_by_enumeration([list(range(i, i + group_size)) for i in range(0, world, group_size)],
                                        timeout, backend, pg_options)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=default_pg_timeout, backend=None,
                                 pg_options=None):
    """One group per list of ranks (disjoint): (this rank's group or None, all of them)."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen, mine, groups = {}, None, []
    for ranks in ranks_per_subgroup_list:
        for r in ranks:
            if r in seen:
                raise ValueError(f'Rank {r} has appeared in both subgroup {seen[r]} and {ranks}')
            seen[r] = ranks
        g = new_group(ranks, timeout, backend, pg_options)
        groups.append(g)
        if get_rank() in ranks:
            mine = g
    return mine, groups


def get_backend(group=None):
    return _group(group)._backend_name


def get_rank(group=None):
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _group(group).rank()


def get_world_size(group=None):
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _group(group).size()


def get_global_rank(group, group_rank):
    g = _group(group)
    if not 0 <= group_rank < g.size():
        raise RuntimeError(f'Group rank {group_rank} is not part of group {g}')
    return g._ranks[group_rank]


def get_group_rank(group, global_rank):
    g = _group(group)
    if global_rank not in g._ranks:
        raise RuntimeError(f'Global rank {global_rank} is not part of group {g}')
    return g._ranks.index(global_rank)


def get_process_group_ranks(group):
    return list(_group(group)._ranks)


def barrier(group=None, async_op=False, device_ids=None):
    g = _group(group)
    b = g._backend
    return _launch(g, 'barrier', [b.submit(b.BARRIER, g._comm, 0, 0, 0, '', 0, 0, 0, None,
                                           None if async_op else g._timeout.total_seconds())], async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that fails (RuntimeError) after `timeout` when a rank does not
    arrive (through the communication thread: it never blocks the caller)."""
    g = _group(group)
    w = Work(g, 'monitored_barrier', [g._backend.submit(g._backend.BARRIER, g._comm, 0, 0, 0, '', 0, 0, 0, None)])
    w.wait(timeout)


def _launch(g, name, works, async_op, finish=None, outputs=()):
    work = Work(g, name, works, finish, outputs)
    if async_op:
        return work
    work.wait()
    return None
