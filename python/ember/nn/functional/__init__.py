"""ember.nn.functional (torch.nn.functional): one private file per family."""
from ._activation import *  # noqa: F401,F403
from ._linear import *  # noqa: F401,F403
from ._conv import *  # noqa: F401,F403
from ._pool import *  # noqa: F401,F403
from ._norm import *  # noqa: F401,F403
from ._loss import *  # noqa: F401,F403
from ._rnn import *  # noqa: F401,F403
from ._attention import *  # noqa: F401,F403
from ._attention import _scaled_dot_product_attention  # noqa: F401 (torch 1.13's private name)
from ._misc import *  # noqa: F401,F403
