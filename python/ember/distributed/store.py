"""Key-value stores for rendezvous (torch.distributed's Store, TCPStore,
HashStore, PrefixStore). The TCP store's server runs on a thread of the
master process; the wire format is length-prefixed bytes (never pickle, so
a stray connection can only set keys). The MPI backend needs no store
(mpirun tells each process its rank); NCCL will pass its unique id here."""
import fcntl
import os
import socket
import struct
import threading
import time
from datetime import timedelta

__all__ = ['Store', 'TCPStore', 'HashStore', 'PrefixStore', 'FileStore']

_SET, _GET, _ADD, _CAS, _DELETE, _NUMKEYS = range(6)


def _as_bytes(v):
    return v.encode() if isinstance(v, str) else bytes(v)


class Store:
    """The interface: set, get (waits for the key), add, compare_set,
    delete_key, num_keys, wait; subclasses give _op (one atomic step)."""

    def __init__(self, timeout=timedelta(seconds=300)):
        self._timeout = timeout

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = timeout

    def set(self, key, value):
        self._op(_SET, key, _as_bytes(value))

    def get(self, key):
        self.wait([key])
        found, value = self._op(_GET, key)
        return value

    def add(self, key, amount):
        return int(self._op(_ADD, key, str(int(amount)).encode()))

    def compare_set(self, key, expected_value, desired_value):
        return self._op(_CAS, key, _as_bytes(expected_value), _as_bytes(desired_value))

    def delete_key(self, key):
        return bool(self._op(_DELETE, key))

    def num_keys(self):
        return int(self._op(_NUMKEYS, ''))

    def wait(self, keys, timeout=None):
        timeout = self._timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout.total_seconds()
        for key in keys:
            while not self._op(_GET, key)[0]:
                if time.monotonic() > deadline:
                    raise RuntimeError(f'Timed out after {timeout} waiting for key {key!r} in the store')
                time.sleep(0.01)


class _Table:
    """The data and the one lock behind HashStore and TCPStore's server."""

    def __init__(self):
        self.data, self.lock = {}, threading.Lock()

    def op(self, cmd, key, a=b'', b=b''):
        with self.lock:
            d = self.data
            if cmd == _SET:
                d[key] = a
                return b''
            if cmd == _GET:
                return (key in d, d.get(key, b''))
            if cmd == _ADD:
                d[key] = str(int(d.get(key, b'0')) + int(a)).encode()
                return d[key]
            if cmd == _CAS:
                if key not in d and a == b'':
                    d[key] = b
                elif key in d and d[key] == a:
                    d[key] = b
                return d.get(key, a)
            if cmd == _DELETE:
                return d.pop(key, None) is not None
            return len(d)


class HashStore(Store):
    """A store within one process (threads share it)."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _op(self, cmd, key, a=b'', b=b''):
        return self._table.op(cmd, key, a, b)


def _send(sock, *parts):
    sock.sendall(b''.join(struct.pack('<I', len(p)) + p for p in parts))


def _recv_exact(sock, n):
    buf = b''
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError('the TCPStore connection closed')
        buf += chunk
    return buf


def _recv(sock, count):
    return [_recv_exact(sock, struct.unpack('<I', _recv_exact(sock, 4))[0]) for _ in range(count)]


def _serve_client(table, conn):
    with conn:
        try:
            while True:
                cmd, key, a, b = _recv(conn, 4)
                r = table.op(cmd[0], key.decode(), a, b)
                if isinstance(r, tuple):
                    _send(conn, b'\1' if r[0] else b'\0', r[1])
                else:
                    _send(conn, r if isinstance(r, bytes) else str(int(r)).encode())
        except (ConnectionError, OSError, struct.error):
            pass


def _serve(listener, table):
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_serve_client, args=(table, conn), daemon=True).start()


class TCPStore(Store):
    """TCPStore(host_name, port, world_size=None, is_master=False,
    timeout=timedelta(seconds=300), wait_for_workers=True): the master
    serves the keys (port 0 picks a free one: see .port); every process,
    the master included, is a client."""

    def __init__(self, host_name, port, world_size=None, is_master=False, timeout=timedelta(seconds=300),
                 wait_for_workers=True, multi_tenant=False):
        super().__init__(timeout)
        self.host, self._listener = host_name, None
        if is_master:
            self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._listener.bind(('', port))
            self._listener.listen(128)
            port = self._listener.getsockname()[1]
            threading.Thread(target=_serve, args=(self._listener, _Table()), daemon=True).start()
        self.port = port
        deadline = time.monotonic() + timeout.total_seconds()
        while True:
            try:
                self._sock = socket.create_connection((host_name, port), timeout=timeout.total_seconds())
                break
            except OSError as e:
                if time.monotonic() > deadline:
                    raise RuntimeError(f'could not connect to the TCPStore at {host_name}:{port} within {timeout}: '
                                       f'{e}') from None
                time.sleep(0.05)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._lock = threading.Lock()
        if world_size is not None and world_size > 0:
            self.add('__ember_workers', 1)
            if is_master and wait_for_workers:
                while int(self._op(_GET, '__ember_workers')[1] or b'0') < world_size:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f'timed out after {timeout} waiting for {world_size} TCPStore clients')
                    time.sleep(0.01)

    def _op(self, cmd, key, a=b'', b=b''):
        with self._lock:
            _send(self._sock, bytes([cmd]), key.encode(), a, b)
            if cmd == _GET:
                found, value = _recv(self._sock, 2)
                return (found == b'\1', value)
            (r,) = _recv(self._sock, 1)
        if cmd in (_NUMKEYS, _DELETE):
            return int(r)
        return r

    def num_keys(self):
        return super().num_keys() - (1 if self._op(_GET, '__ember_workers')[0] else 0)


class FileStore(Store):
    """FileStore(file_name, world_size=-1): a store in a file that every
    process of one machine (or a shared file system with locks) opens; each
    step locks it, reads the table, applies the change and writes it back."""

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path = file_name
        self._fd = os.open(file_name, os.O_RDWR | os.O_CREAT, 0o600)

    def _op(self, cmd, key, a=b'', b=b''):
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            os.lseek(self._fd, 0, os.SEEK_SET)
            chunks = []
            while True:
                chunk = os.read(self._fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
            raw = b''.join(chunks)
            table, at = _Table(), 0
            while at < len(raw):
                (kn,), at = struct.unpack_from('<I', raw, at), at + 4
                k, at = raw[at:at + kn].decode(), at + kn
                (vn,), at = struct.unpack_from('<I', raw, at), at + 4
                table.data[k], at = raw[at:at + vn], at + vn
            result = table.op(cmd, key, a, b)
            if cmd in (_SET, _ADD, _CAS, _DELETE):
                out = b''.join(struct.pack('<I', len(k.encode())) + k.encode() + struct.pack('<I', len(v)) + v
                               for k, v in table.data.items())
                os.lseek(self._fd, 0, os.SEEK_SET)
                os.ftruncate(self._fd, 0)
                os.write(self._fd, out)
            return result
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def __del__(self):
        fd = getattr(self, '_fd', None)
        if fd is not None:
            os.close(fd)


class PrefixStore(Store):
    """PrefixStore(prefix, store): the keys of `store` under "prefix/"."""

    def __init__(self, prefix, store):
        super().__init__(store.timeout)
        self._prefix, self._store = prefix, store

    @property
    def underlying_store(self):
        return self._store

    def _op(self, cmd, key, a=b'', b=b''):
        return self._store._op(cmd, key if cmd == _NUMKEYS else f'{self._prefix}/{key}', a, b)
