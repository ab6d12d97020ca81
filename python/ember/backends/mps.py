"""ember.backends.mps: Apple's Metal devices, which Ember has no backend for."""


def is_built():
    return False


def is_available():
    return False
