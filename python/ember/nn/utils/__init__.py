"""ember.nn.utils."""
