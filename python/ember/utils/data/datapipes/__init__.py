"""ember.utils.data.datapipes (torch.utils.data.datapipes): DataPipes and their functional forms."""
from . import datapipe, iter, map  # noqa: F401 (iter and map register the functional forms)
from .datapipe import (IterDataPipe, MapDataPipe, DFIterDataPipe, DataChunk, functional_datapipe,  # noqa: F401
                       argument_validation, runtime_validation, runtime_validation_disabled, non_deterministic,
                       guaranteed_datapipes_determinism)
