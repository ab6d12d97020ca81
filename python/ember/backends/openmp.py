"""ember.backends.openmp: Ember's CPU kernels are parallelised with OpenMP."""


def is_available():
    return True
