"""ember.version: the version of this build (torch.version's fields)."""
__version__ = '0.1.0'
debug = False
cuda = None
hip = None
git_version = 'Unknown'
