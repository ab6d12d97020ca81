"""The *Options classes of torch.distributed: plain records of a
collective's settings (ProcessGroup methods take them in torch; here they are
data only). timeout defaults to -1 ms, "unset": the group's timeout."""
from datetime import timedelta

from .distributed_c10d import ReduceOp

_UNSET = timedelta(milliseconds=-1)

# class name: its fields and their defaults, besides timeout
_FIELDS = {
    'AllreduceOptions': {'reduceOp': ReduceOp.SUM},
    'AllreduceCoalescedOptions': {'reduceOp': ReduceOp.SUM},
    'BroadcastOptions': {'rootRank': 0, 'rootTensor': 0},
    'ReduceOptions': {'reduceOp': ReduceOp.SUM, 'rootRank': 0, 'rootTensor': 0},
    'GatherOptions': {'rootRank': 0},
    'ScatterOptions': {'rootRank': 0},
    'ReduceScatterOptions': {'reduceOp': ReduceOp.SUM},
    'AllToAllOptions': {},
    'BarrierOptions': {'device_ids': list},
}


def _options_class(name, fields):
    def __init__(self):
        for k, v in fields.items():
            setattr(self, k, v() if callable(v) and not isinstance(v, ReduceOp) else v)
        self.timeout = _UNSET

    def __repr__(self):
        return f'{name}({", ".join(f"{k}={getattr(self, k)!r}" for k in (*fields, "timeout"))})'
    return type(name, (), {'__init__': __init__, '__repr__': __repr__, '__slots__': (*fields, 'timeout'),
                           '__doc__': f'{name}(): {", ".join((*fields, "timeout"))}, settable.'})


for _name, _fields in _FIELDS.items():
    globals()[_name] = _options_class(_name, _fields)

__all__ = list(_FIELDS)
