"""Hostile files: ember.load (weights_only, the default) refuses each attack
class in both torch formats (zip and legacy) with pickle.UnpicklingError or
RuntimeError and a clear message, never runs code, and allocates nothing a
file's real size does not back."""
import io
import os
import pickle
import struct
import zipfile

import pytest

import ember

MAGIC, VERSION = 0x1950a86a20f9469cfc6c, 1001
FLOAT = b'ctorch\nFloatStorage\n'


def pid(key=b'0', numel=4, storage=FLOAT):
    """A protocol-2 persistent id ('storage', torch.FloatStorage, key, 'cpu', numel) then BINPERSID."""
    return (b'(X\x07\x00\x00\x00storage' + storage + b'X' + struct.pack('<I', len(key)) + key +
            b'X\x03\x00\x00\x00cpu' + b'J' + struct.pack('<i', numel) + b'tQ')


def rebuild(storage, offset=0, size=(4,), stride=(1,)):
    """torch._utils._rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())."""
    ints = lambda xs: b'(' + b''.join(b'J' + struct.pack('<i', x) for x in xs) + b't'
    return (b'ctorch._utils\n_rebuild_tensor_v2\n(' + storage + b'J' + struct.pack('<i', offset) + ints(size) +
            ints(stride) + b'\x89ccollections\nOrderedDict\n)RtR')


def zip_file(pkl, storages=None, compress=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, 'w', compress) as z:
        z.writestr('archive/data.pkl', pkl)
        for key, data in (storages if storages is not None else {'0': bytes(16)}).items():
            z.writestr(f'archive/data/{key}', data)
        z.writestr('archive/version', b'3\n')
    return buf.getvalue()


def legacy_file(pkl, storages=None, magic=MAGIC):
    if storages is None:  # storage '0' when the pickle uses it (legacy files list only used storages)
        storages = {'0': (4, bytes(16))} if FLOAT in pkl else {}
    head = b''.join(pickle.dumps(x, protocol=2) for x in (magic, VERSION, {'little_endian': True}))
    keys = pickle.dumps(list(storages), protocol=2)
    return head + pkl + keys + b''.join(struct.pack('<q', n) + data for n, data in storages.values())


def load_bytes(tmp_path, data, **kw):
    (tmp_path / 'f.pt').write_bytes(data)
    return ember.load(tmp_path / 'f.pt', **kw)


FORMATS = {'zip': zip_file, 'legacy': legacy_file}
CODE = [
    ('GLOBAL', b'\x80\x02cos\nsystem\nX\x04\x00\x00\x00true\x85R.', 'os.system'),
    ('STACK_GLOBAL', b'\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x04true\x85R.', 'os.system'),
    ('INST', b"(S'true'\nios\nsystem\n.", 'os.system'),
    ('OBJ', b'\x80\x02(cos\nsystem\nX\x04\x00\x00\x00trueo.', 'os.system'),
    ('EXT1', b'\x80\x02\x82\x01)R.', 'EXT1'),
    ('EXT2', b'\x80\x02\x83\x01\x00)R.', 'EXT2'),
    ('EXT4', b'\x80\x02\x84\x01\x00\x00\x00)R.', 'EXT4'),
    ('REDUCE eval', b'\x80\x02cbuiltins\neval\nX\x01\x00\x00\x001\x85R.', 'builtins.eval'),
    ('getattr chain', b'\x80\x02cbuiltins\ngetattr\ncos\npath\nX\x04\x00\x00\x00join\x86R.', 'builtins.getattr'),
    ('call of a call result', b'\x80\x02ccollections\nOrderedDict\n)R)R.', 'not a global'),
    ('NEWOBJ of an allowlisted function', b'\x80\x02c_codecs\nencode\n)\x81.', 'not a class'),
    ('a module class', b'\x80\x02ctorch.nn\nLinear\n)R.', 'torch.nn.Linear'),
    ('BUILD on a tensor', b'\x80\x02' + rebuild(pid()) + b'}X\x01\x00\x00\x00aK\x01sb.', 'BUILD'),
    ('BUILD of a dunder on an OrderedDict',
     b'\x80\x02ccollections\nOrderedDict\n)R}X\x09\x00\x00\x00__class__ccollections\nOrderedDict\nsb.', 'BUILD'),
    ('_rebuild_from_type_v2 of another function',
     b'\x80\x02ctorch._tensor\n_rebuild_from_type_v2\n(ccollections\nOrderedDict\nctorch\nTensor\n)}tR.', 'only rebuild'),
    ('_rebuild_from_type_v2 to another type', b'\x80\x02ctorch._tensor\n_rebuild_from_type_v2\n(ctorch._utils\n'
     b'_rebuild_tensor_v2\ncbuiltins\nset\n(' + pid() + b'K\x00(K\x04t(K\x01t\x89ccollections\nOrderedDict\n)Rt}tR.',
     'Tensor and Parameter'),
    ('persistent id of the wrong shape', b'\x80\x02(X\x04\x00\x00\x00evilK\x01tQ.', 'persistent id'),
    ('persistent id with a non-storage type', b'\x80\x02' + pid(storage=b'cos\nsystem\n') + b'.', 'os.system'),
]


@pytest.mark.parametrize('fmt', FORMATS)
@pytest.mark.parametrize('what,pkl,msg', CODE, ids=[c[0] for c in CODE])
def test_code_is_refused(tmp_path, fmt, what, pkl, msg):
    marker = tmp_path / 'pwned'
    with pytest.raises(pickle.UnpicklingError, match=msg):
        load_bytes(tmp_path, FORMATS[fmt](pkl))
    assert not marker.exists()


@pytest.mark.parametrize('fmt', FORMATS)
def test_a_valid_hand_made_file_loads(tmp_path, fmt):
    """The attacks above are refused for what they do, not for their framing."""
    data = struct.pack('<4f', 1, 2, 3, 4)
    storages = {'0': data} if fmt == 'zip' else {'0': (4, data)}
    t = load_bytes(tmp_path, FORMATS[fmt](b'\x80\x02' + rebuild(pid(), 1, (2,), (2,)) + b'.', storages))
    assert t.tolist() == [2, 4]


@pytest.mark.parametrize('fmt', FORMATS)
@pytest.mark.parametrize('offset,size,stride', [(0, (5,), (1,)), (4, (1,), (1,)), (0, (2,), (4,)),
                                                (0, (2, 2), (3, 1)), (0, (2,), (-1,)), (-1, (1,), (1,)),
                                                (2 ** 30, (0,), (1,))])
def test_views_outside_their_storage(tmp_path, fmt, offset, size, stride):
    with pytest.raises(pickle.UnpicklingError, match='storage|bad tensor view'):
        load_bytes(tmp_path, FORMATS[fmt](b'\x80\x02' + rebuild(pid(), offset, size, stride) + b'.'))


def test_zip_storage_smaller_than_declared(tmp_path):
    with pytest.raises(RuntimeError, match='declares 100 elements'):
        load_bytes(tmp_path, zip_file(b'\x80\x02' + pid(numel=100) + b'.'))


def test_legacy_huge_numel_allocates_nothing(tmp_path):
    pkl = b'\x80\x02' + pid(numel=2 ** 31 - 1) + b'.'
    with pytest.raises(RuntimeError, match='declares 2147483647 elements'):
        load_bytes(tmp_path, legacy_file(pkl, {'0': (2 ** 31 - 1, bytes(16))}))
    with pytest.raises(RuntimeError, match='declares'):  # the record disagrees with the declaration
        load_bytes(tmp_path, legacy_file(pkl, {'0': (2 ** 60, bytes(16))}))


def test_zip_bombs(tmp_path):
    # a deflated storage that expands 1000x
    bomb = zip_file(b'\x80\x02' + pid(numel=16 << 20) + b'.', {'0': bytes(64 << 20)}, zipfile.ZIP_DEFLATED)
    assert len(bomb) < 200_000
    with pytest.raises(RuntimeError, match='zip bomb'):
        load_bytes(tmp_path, bomb)
    # a central directory that lies about the size of a small deflated entry
    small = zip_file(b'\x80\x02' + pid() + b'.', compress=zipfile.ZIP_DEFLATED)
    at = small.index(b'PK\x01\x02' + small[small.index(b'PK\x01\x02') + 4:][:0])
    cd = small.rindex(b'PK\x01\x02', 0, small.index(b'PK\x05\x06'))
    lie = small[:cd + 24] + struct.pack('<I', 0xfffffff0) + small[cd + 28:]
    assert at >= 0
    with pytest.raises(RuntimeError, match='zip bomb|CRC|size'):
        load_bytes(tmp_path, lie)
    # deflated but honest entries load
    honest = zip_file(b'\x80\x02' + rebuild(pid()) + b'.', {'0': struct.pack('<4f', 1, 2, 3, 4)}, zipfile.ZIP_DEFLATED)
    assert load_bytes(tmp_path, honest).tolist() == [1, 2, 3, 4]


def test_overlapping_entries_are_a_zip_bomb(tmp_path):
    """One stored megabyte named by many central-directory entries."""
    z = zip_file(b'\x80\x02' + pid() + b'.', {'0': bytes(1 << 20)})
    eocd = z.rindex(b'PK\x05\x06')
    count, = struct.unpack('<H', z[eocd + 10:eocd + 12])
    cd_size, cd_at = struct.unpack('<II', z[eocd + 12:eocd + 20])
    cd = z[cd_at:cd_at + cd_size]
    start = cd.index(b'archive/data/0') - 46
    entry = cd[start:start + 46]  # the fixed part of data/0's central entry (no extra field, no comment)
    copies = b''.join(entry + f'archive/data/{k}'.encode() for k in range(1, 10))
    new_cd = cd + copies
    bomb = z[:cd_at] + new_cd + b'PK\x05\x06' + struct.pack('<HHHHIIH', 0, 0, count + 9, count + 9, len(new_cd),
                                                             cd_at, 0)
    with pytest.raises(RuntimeError, match='overlap'):
        load_bytes(tmp_path, bomb)


@pytest.mark.parametrize('fmt', FORMATS)
def test_truncated_files(tmp_path, fmt):
    data = struct.pack('<4f', 1, 2, 3, 4)
    full = FORMATS[fmt](b'\x80\x02' + rebuild(pid()) + b'.', {'0': data} if fmt == 'zip' else {'0': (4, data)})
    assert load_bytes(tmp_path, full).tolist() == [1, 2, 3, 4]
    for n in range(len(FORMATS[fmt](b'', {})) if fmt == 'legacy' else 4, len(full), 7):
        with pytest.raises((RuntimeError, pickle.UnpicklingError), match='ember.load|legacy torch file|zip'):
            load_bytes(tmp_path, full[:n])


def test_wrong_magic_and_corrupt_containers(tmp_path):
    good = legacy_file(b'\x80\x02N.', {})
    assert load_bytes(tmp_path, good) is None
    v = pickle.dumps(VERSION, protocol=2)
    with pytest.raises(RuntimeError, match='protocol version'):
        load_bytes(tmp_path, good.replace(v, pickle.dumps(1002, protocol=2), 1))
    with pytest.raises((RuntimeError, ValueError)):  # another magic number: not a torch file at all
        load_bytes(tmp_path, legacy_file(b'\x80\x02N.', {}, magic=MAGIC + 1))
    for data in (b'PK\x03\x04' + bytes(100), b'PK\x03\x04garbage', zip_file(b'\x80\x02N.').replace(b'PK\x01\x02', b'PK\x01\x03')):
        with pytest.raises(RuntimeError, match='zip'):
            load_bytes(tmp_path, data)
    # a CRC mismatch is corruption, not data
    z = bytearray(zip_file(b'\x80\x02' + rebuild(pid()) + b'.', {'0': struct.pack('<4f', 1, 2, 3, 4)}))
    z[z.index(struct.pack('<4f', 1, 2, 3, 4))] ^= 1
    with pytest.raises(RuntimeError, match='CRC'):
        load_bytes(tmp_path, bytes(z))
    # invalid UTF-8 in a pickle string
    with pytest.raises(pickle.UnpicklingError, match='malformed'):
        load_bytes(tmp_path, zip_file(b'\x80\x02X\x02\x00\x00\x00\xff\xfe.'))


@pytest.mark.parametrize('fmt', FORMATS)
def test_deep_nesting_is_a_clear_error(tmp_path, fmt):
    n = 100_000
    deep = b'\x80\x02' + b']' * n + b'a' * (n - 1) + b'.'
    with pytest.raises(pickle.UnpicklingError, match='nests deeper'):
        load_bytes(tmp_path, FORMATS[fmt](deep))
    ok = b'\x80\x02' + b']' * 50 + b'a' * 49 + b'.'
    assert load_bytes(tmp_path, FORMATS[fmt](ok)) == eval('[' * 50 + ']' * 50)


def test_deep_safetensors_structure_is_a_clear_error(tmp_path):
    ember.save({'a': [1]}, tmp_path / 'f.safetensors')
    raw = (tmp_path / 'f.safetensors').read_bytes()
    n, = struct.unpack('<Q', raw[:8])
    header = raw[8:8 + n].decode()
    import json
    h = json.loads(header)
    h['__metadata__']['ember.structure'] = '{"list":[' * 5000 + ']}' * 5000
    text = json.dumps(h).encode()
    text += b' ' * (-len(text) % 8)
    (tmp_path / 'g.safetensors').write_bytes(struct.pack('<Q', len(text)) + text + raw[8 + n:])
    with pytest.raises(ValueError, match='nests'):
        ember.load(tmp_path / 'g.safetensors')


def test_legacy_header_records_never_run(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, ('touch ' + str(tmp_path / 'pwned'),))

    records = [pickle.dumps(x, protocol=2) for x in (MAGIC, VERSION, {'little_endian': True}, None, [])]
    for k in (0, 1, 2, 4):
        bad = records[:k] + [pickle.dumps(Evil(), protocol=2)] + records[k + 1:]
        if k == 0:
            # keep the legacy prefix (magic pushed, then POPped) so that the file is read as legacy
            bad[0] = b'\x80\x02\x8a\x0a' + MAGIC.to_bytes(10, 'little') + b'0' + bad[0]
        with pytest.raises((RuntimeError, pickle.UnpicklingError)):
            load_bytes(tmp_path, b''.join(bad), weights_only=False)
    assert not (tmp_path / 'pwned').exists()
