"""nn.Parameter (written by the Module framework)."""
