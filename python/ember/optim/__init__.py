"""ember.optim: optimizers whose update runs in C over a whole parameter group."""
