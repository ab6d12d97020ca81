"""ember.distributed: torch.distributed's process groups and collectives on
Open MPI for CPU tensors (backend 'mpi'; 'nccl' for GPUs is not built yet).
Importing it loads nothing of MPI: init_process_group does. Launch with
`mpirun -np N python3 train.py` or `python3 -m ember.distributed.run
--nproc_per_node=N train.py` (README, "Running on several processes")."""
# flake8: noqa: F401  (the public names, re-exported)
from .distributed_c10d import (Backend, ReduceOp, reduce_op, DebugLevel, Work, ProcessGroup, GroupMember, group,
                               default_pg_timeout, is_available, is_mpi_available, is_nccl_available,
                               is_gloo_available, is_ucc_available, is_initialized, is_torchelastic_launched,
                               init_process_group, destroy_process_group, get_backend, get_rank, get_world_size,
                               get_global_rank, get_group_rank, get_process_group_ranks, new_group, new_subgroups,
                               new_subgroups_by_enumeration, barrier, monitored_barrier, get_debug_level,
                               set_debug_level, set_debug_level_from_env, supports_complex)
from .collectives import (all_reduce, broadcast, reduce, all_gather, all_gather_into_tensor, gather, scatter,
                          reduce_scatter, reduce_scatter_tensor, all_to_all, all_to_all_single, send, recv, isend,
                          irecv, P2POp, batch_isend_irecv, broadcast_object_list, all_gather_object, gather_object,
                          scatter_object_list)
from .options import (AllreduceOptions, AllreduceCoalescedOptions, BroadcastOptions, ReduceOptions,
                      GatherOptions, ScatterOptions, ReduceScatterOptions, AllToAllOptions, BarrierOptions)
from .grad_bucket import GradBucket
from .distributed_c10d import _make_nccl_premul_sum
from .store import Store, TCPStore, HashStore, PrefixStore, FileStore
from .rendezvous import rendezvous, register_rendezvous_handler

dist_backend = Backend
