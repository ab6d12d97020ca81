"""ember.hub: models from hubconf.py entry points and weights from the hub cache (torch.hub).

load(dir, 'name', source='local') imports dir/hubconf.py and calls its entry
point; a GitHub repository is used from the hub cache directory
(get_dir()/<owner>_<repo>_<ref>, as PyTorch lays it out) when it is there.
load_state_dict_from_url loads get_dir()/checkpoints/<file name> when it is
there and otherwise downloads it. Ember fetches nothing else: a repository
missing from the cache raises an error saying where to put it. The cache is
PyTorch's ($TORCH_HOME/hub), so files fetched by PyTorch are found.
"""
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
from urllib.parse import urlparse

ENV_GITHUB_TOKEN = 'GITHUB_TOKEN'
ENV_TORCH_HOME = 'TORCH_HOME'
ENV_XDG_CACHE_HOME = 'XDG_CACHE_HOME'
DEFAULT_CACHE_DIR = '~/.cache'
VAR_DEPENDENCY = 'dependencies'
MODULE_HUBCONF = 'hubconf.py'
READ_DATA_CHUNK = 8192
HASH_REGEX = re.compile(r'-([a-f0-9]*)\.')
MAP_LOCATION = object  # the type of map_location arguments (a str, device, dict or callable)

_hub_dir = None


def get_dir():
    """The hub cache: set_dir()'s, else $TORCH_HOME/hub, else $XDG_CACHE_HOME/torch/hub, else ~/.cache/torch/hub."""
    if _hub_dir is not None:
        return _hub_dir
    torch_home = os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(
        os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), 'torch')))
    return os.path.join(torch_home, 'hub')


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _import_hubconf(directory):
    path = os.path.join(directory, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f'no {MODULE_HUBCONF} in {directory}')
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF[:-3], path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, directory)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(directory)
    missing = [dep for dep in getattr(module, VAR_DEPENDENCY, None) or []
               if importlib.util.find_spec(dep) is None]
    if missing:
        raise RuntimeError('Missing dependencies: {}'.format(', '.join(missing)))
    return module


def _entry(module, model):
    if not isinstance(model, str):
        raise ValueError('Invalid input: model should be a string of function name')
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f'Cannot find callable {model} in hubconf')
    return func


def _cached_repo(github, force_reload):
    """The directory of a GitHub repository 'owner/name[:ref]' in the hub cache."""
    repo, _, ref = github.partition(':')
    if '/' not in repo:
        raise ValueError(f'Invalid input: repo should be of the form "owner/name[:ref]", got {github}')
    owner, name = repo.split('/', 1)
    refs = [ref] if ref else ['main', 'master']
    for r in refs:
        path = os.path.join(get_dir(), '_'.join((owner, name, r.replace('/', '_'))))
        if os.path.isdir(path) and not force_reload:
            return path
    raise RuntimeError(f'{github} is not in the hub cache ({get_dir()}) and Ember does not download '
                       f'repositories: put a checkout at {os.path.join(get_dir(), f"{owner}_{name}_{refs[0]}")} '
                       "or pass its directory with source='local'")


def _repo_dir(repo_or_dir, source, force_reload):
    source = source.lower()
    if source not in ('github', 'local'):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    return _cached_repo(repo_or_dir, force_reload) if source == 'github' else repo_or_dir


def list(github, force_reload=False, skip_validation=False, trust_repo=None, source='github'):
    """The entry points (public callables) of a repository's hubconf.py."""
    module = _import_hubconf(_repo_dir(github, source, force_reload))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith('_')]


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None, source='github'):
    """The docstring of an entry point."""
    return _entry(_import_hubconf(_repo_dir(github, source, force_reload)), model).__doc__


def load(repo_or_dir, model, *args, source='github', trust_repo=None, force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """The result of hubconf.<model>(*args, **kwargs) in a local directory (source='local') or a
    cached GitHub repository."""
    return _entry(_import_hubconf(_repo_dir(repo_or_dir, source, force_reload)), model)(*args, **kwargs)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads url to the file dst (through a temporary file, renamed when complete), checking
    that the SHA-256 of the content starts with hash_prefix when one is given."""
    dst = os.path.expanduser(dst)
    request = urllib.request.Request(url, headers={'User-Agent': 'ember.hub'})
    try:
        response = urllib.request.urlopen(request)
    except (urllib.error.URLError, OSError) as e:
        raise RuntimeError(f'could not download {url} ({e}); this machine may be offline: put the file at '
                           f'{dst} by other means') from None
    sha256 = hashlib.sha256()
    tmp = tempfile.NamedTemporaryFile(delete=False, dir=os.path.dirname(os.path.abspath(dst)))
    try:
        with response, tmp:
            while True:
                chunk = response.read(READ_DATA_CHUNK)
                if not chunk:
                    break
                tmp.write(chunk)
                sha256.update(chunk)
        if hash_prefix is not None and not sha256.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{sha256.hexdigest()}")')
        shutil.move(tmp.name, dst)
    finally:
        if os.path.exists(tmp.name):
            os.remove(tmp.name)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None):
    """ember.load of the file named by url in model_dir (default get_dir()/checkpoints), downloaded
    there first when it is missing."""
    if model_dir is None:
        model_dir = os.path.join(get_dir(), 'checkpoints')
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stderr.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None, progress=progress)
    from .serialization import load as _load
    return _load(cached_file, map_location=map_location)
