"""ember.autograd: reverse-mode differentiation (the engine is C)."""
from .grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode
