"""ember.backends.mkl: Intel MKL, which Ember does not use (it calls OpenBLAS)."""
VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    return False


class verbose:
    """Context manager for MKL's verbose output: only VERBOSE_OFF (Ember has no MKL)."""

    def __init__(self, enable):
        if enable != VERBOSE_OFF:
            raise NotImplementedError('MKL verbose output: Ember is not built with MKL')
        self.enable = enable

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
