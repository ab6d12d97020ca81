"""torch.distributed's rendezvous: an init_method URL (tcp://host:port,
env://, file:///path, with ?rank=&world_size= where needed) to an iterator
of (store, rank, world_size). The MPI backend does not need one (mpirun
tells each process its rank); the NCCL backend will exchange its id here."""
import os
from datetime import timedelta
from urllib.parse import parse_qs, urlparse

from .store import FileStore, TCPStore

__all__ = ['rendezvous', 'register_rendezvous_handler']

_handlers = {}


def register_rendezvous_handler(scheme, handler):
    """handler(url, **kwargs) -> iterator of (store, rank, world_size)."""
    if scheme in _handlers:
        raise RuntimeError(f'Rendezvous handler for {scheme}:// already registered')
    _handlers[scheme] = handler


def rendezvous(url, rank=-1, world_size=-1, **kwargs):
    if not isinstance(url, str):
        raise RuntimeError(f'`url` must be a string. {type(url)}: {url}')
    if not isinstance(rank, int) or not isinstance(world_size, int):
        raise RuntimeError('`rank` and `world_size` must be integers')
    parts = urlparse(url)
    if rank != -1 or world_size != -1:  # into the query, where the handlers read them
        query = dict(p.split('=', 1) for p in parts.query.split('&') if p)
        query.update({k: str(v) for k, v in (('rank', rank), ('world_size', world_size)) if v != -1})
        url = parts._replace(query='&'.join(f'{k}={v}' for k, v in query.items())).geturl()
        parts = urlparse(url)
    if parts.scheme not in _handlers:
        raise RuntimeError(f'No rendezvous handler for {parts.scheme}://')
    return _handlers[parts.scheme](url, **kwargs)


def _query(parts):
    q = {k: v[0] for k, v in parse_qs(parts.query).items()}
    return int(q.get('rank', -1)), int(q.get('world_size', -1))


def _need(value, what, url):
    if value < 0:
        raise ValueError(f'Error initializing torch.distributed using {url}: {what} parameter missing')
    return value


def _tcp(url, timeout=timedelta(seconds=300), **kwargs):
    parts = urlparse(url)
    rank, world_size = _query(parts)
    _need(rank, 'rank', url), _need(world_size, 'world_size', url)
    yield TCPStore(parts.hostname, parts.port, world_size, rank == 0, timeout), rank, world_size


def _env(url, timeout=timedelta(seconds=300), **kwargs):
    rank, world_size = _query(urlparse(url))

    def env(name):
        if name not in os.environ:
            raise ValueError(f'Error initializing torch.distributed using env:// rendezvous: environment variable '
                             f'{name} expected, but not set')
        return os.environ[name]
    rank = rank if rank >= 0 else int(env('RANK'))
    world_size = world_size if world_size >= 0 else int(env('WORLD_SIZE'))
    yield TCPStore(env('MASTER_ADDR'), int(env('MASTER_PORT')), world_size, rank == 0, timeout), rank, world_size


def _file(url, **kwargs):
    parts = urlparse(url)
    rank, world_size = _query(parts)
    yield FileStore(parts.path, world_size), _need(rank, 'rank', url), _need(world_size, 'world_size', url)


register_rendezvous_handler('tcp', _tcp)
register_rendezvous_handler('env', _env)
register_rendezvous_handler('file', _file)
