"""ember.optim: optimizers whose update runs in C over a whole parameter group,
L-BFGS, and the learning-rate schedulers (ember.optim.lr_scheduler)."""
from .optimizer import Optimizer
from ._fused import SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam
from .lbfgs import LBFGS
from ._python import ASGD, Rprop, SparseAdam
from . import lr_scheduler  # noqa: F401
from . import swa_utils  # noqa: F401

__all__ = ['Optimizer', 'SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad', 'Adadelta', 'Adamax', 'NAdam', 'RAdam', 'LBFGS',
           'ASGD', 'Rprop', 'SparseAdam']
