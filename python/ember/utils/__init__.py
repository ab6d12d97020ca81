"""ember.utils: helpers around tensors (DLPack exchange, data loading)."""
