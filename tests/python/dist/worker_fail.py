"""Run by test_distributed.py with 2 ranks: `mode` says how rank 1 fails
(raise, exit: dies by os._exit, hang and hang_async: stops responding) while
rank 0 waits in an all_reduce (hang_async: on its Work) with a 3 s timeout;
mismatch: the ranks all-reduce tensors of different sizes."""
import os
import sys
import time
from datetime import timedelta

import ember
import ember.distributed as dist

mode = sys.argv[1]
dist.init_process_group('mpi', timeout=timedelta(seconds=3))
x = ember.ones(4)
dist.all_reduce(x)
if mode == 'mismatch':
    dist.all_reduce(ember.ones(3 + 1000 * dist.get_rank()))
if dist.get_rank() == 1:
    if mode == 'raise':
        raise ValueError('rank 1 fails on purpose')
    if mode == 'exit':
        os._exit(3)
    time.sleep(60)
if mode == 'hang_async':
    dist.all_reduce(x, async_op=True).wait()
dist.all_reduce(x)
