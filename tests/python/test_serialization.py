"""ember.save / ember.load: safetensors round trips of tensors and whole
checkpoints, files read by an independent reader, torch.save files (zip and
legacy) loaded without torch, the restricted unpickler, corrupt files, and
atomic saves under a killed writer."""
import collections
import io
import json
import math
import os
import pickle
import signal
import struct
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest
import torch

import ember
from helpers import DTYPES, dtype_name

ST_DTYPES = {'F64': np.float64, 'F32': np.float32, 'F16': np.float16, 'BF16': None, 'I64': np.int64,
             'I32': np.int32, 'I16': np.int16, 'I8': np.int8, 'U8': np.uint8, 'BOOL': np.bool_}
PYTHON_DIR = os.path.join(os.path.dirname(__file__), '..', '..', 'python')


def rand(shape, dtype, seed=0):
    g = np.random.default_rng(seed)
    vals = g.uniform(-100, 100, size=shape)
    t = ember.tensor(vals.tolist() if shape else float(vals), dtype=ember.float64)
    return t.to(getattr(ember, dtype)) if dtype != 'bool' else t > 0


def same(a, b):
    """Exact equality of nested objects, tensors by dtype, shape and values."""
    if isinstance(a, ember.Tensor):
        return (isinstance(b, ember.Tensor) and type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
                and a.requires_grad == b.requires_grad
                and a.detach().double().reshape(-1).tolist() == b.detach().double().reshape(-1).tolist())
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a.keys()) == list(b.keys()) and all(same(a[k], b[k]) for k in a) and \
            getattr(a, '_metadata', None) == getattr(b, '_metadata', None)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def read_safetensors(path):
    """An independent reader (json + struct): {name: (dtype, shape, bytes)}, metadata."""
    raw = open(path, 'rb').read()
    n, = struct.unpack('<Q', raw[:8])
    assert n % 8 == 0 and raw[8:9] == b'{'
    header = json.loads(raw[8:8 + n])
    meta = header.pop('__metadata__', {})
    data = raw[8 + n:]
    spans = sorted((v['data_offsets'], k) for k, v in header.items())
    pos = 0
    for (b, e), _ in spans:
        assert b == pos, 'hole or overlap'
        pos = e
    assert pos == len(data), 'trailing bytes'
    return {k: (v['dtype'], v['shape'], data[v['data_offsets'][0]:v['data_offsets'][1]])
            for k, v in header.items()}, meta


# ---- safetensors round trips -------------------------------------------------

@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('use_mmap', [False, True])
def test_round_trip_every_dtype_and_shape(tmp_path, dtype, use_mmap):
    base = rand((4, 5), dtype)
    obj = {'m': base, 'scalar': rand((), dtype, 1), 'empty': ember.empty(0, 3, dtype=getattr(ember, dtype)),
           'noncontig': rand((6, 4), dtype, 2).t()[::2], 'big': rand((3, 2, 4), dtype, 3)}
    ember.save(obj, tmp_path / 'f.safetensors')
    back = ember.load(tmp_path / 'f.safetensors', mmap=use_mmap)
    assert same(obj, back)
    assert all(t.is_contiguous() for t in back.values())
    # in-place writes to loaded (mmap'ed) tensors work and never reach the file
    back['m'].fill_(1)
    assert same(ember.load(tmp_path / 'f.safetensors')['m'], base)


def test_independent_reader_sees_plain_tensors(tmp_path):
    obj = {dt: rand((2, 3), dt) for dt in DTYPES}
    obj['nested'] = {'w': rand((5,), 'float32'), 'list': [rand((1,), 'int64')]}
    ember.save(obj, str(tmp_path / 'f.safetensors'))
    tensors, meta = read_safetensors(tmp_path / 'f.safetensors')
    assert meta['format'] == 'pt' and 'ember.structure' in meta
    assert set(tensors) == set(DTYPES) | {'nested.w', 'nested.list.0'}
    for dt in DTYPES:
        st_dtype, shape, data = tensors[dt]
        assert shape == [2, 3] and st_dtype in ST_DTYPES
        if ST_DTYPES[st_dtype] is not None:
            want = np.asarray(obj[dt].numpy()).tobytes()
            assert data == want, dt
        else:  # bfloat16: the top half of the float32 bits
            f32 = np.frombuffer(np.frombuffer(data, np.uint16).astype(np.uint32).tobytes(), np.uint32) << 16
            assert f32.view(np.float32).tolist() == obj[dt].float().reshape(-1).tolist()


def test_loads_files_from_other_writers(tmp_path):
    # written with json + struct only, unpadded header, no ember metadata
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1, -2], dtype=np.int16)
    header = json.dumps({'a': {'dtype': 'F32', 'shape': [2, 3], 'data_offsets': [0, 24]},
                         'b': {'dtype': 'I16', 'shape': [2], 'data_offsets': [24, 28]}}).encode()
    (tmp_path / 'x.safetensors').write_bytes(struct.pack('<Q', len(header)) + header + a.tobytes() + b.tobytes())
    for use_mmap in (False, True):
        d = ember.load(tmp_path / 'x.safetensors', mmap=use_mmap)
        assert list(d) == ['a', 'b'] and d['a'].tolist() == a.tolist() and d['b'].dtype == ember.int16
        assert d['b'].tolist() == [1, -2]


def test_whole_checkpoints_round_trip_exactly(tmp_path):
    sd = collections.OrderedDict([('w', rand((2, 2), 'float32')), ('b', rand((2,), 'float64'))])
    sd._metadata = collections.OrderedDict([('', {'version': 1})])
    obj = {'epoch': 7, 'step': 2 ** 70, 'loss': 0.125, 'nan': float('nan'), 'inf': -float('inf'),
           'name': 'run "1" é', 'none': None, 'flag': True, 'model': sd,
           'opt': {'state': {0: {'step': ember.tensor(3.), 'exp_avg': rand((2, 2), 'float32')}},
                   'param_groups': [{'lr': 1e-3, 'betas': (0.9, 0.999), 'params': [0, 1], 'foreach': None}]},
           (1, 'a'): [1, (2, [3])], 'bytes': b'\x00\xff', 'size': ember.Size([2, 3]), 'dtype': ember.bfloat16,
           'device': ember.device('cpu'), 'param': ember.nn.Parameter(rand((3,), 'float32')),
           'rg': rand((2,), 'float64').requires_grad_(), 'frozen': ember.nn.Parameter(rand((1,), 'float32'), False)}
    ember.save(obj, tmp_path / 'ckpt')
    back = ember.load(tmp_path / 'ckpt')
    assert same(obj, back)
    assert isinstance(back['param'], ember.nn.Parameter) and back['param'].requires_grad
    with pytest.raises(TypeError, match='cannot save an object of type object'):
        ember.save({'x': object()}, tmp_path / 'bad', format='safetensors')
    with pytest.raises((pickle.PicklingError, AttributeError)):
        ember.save({'x': lambda: 0}, tmp_path / 'bad')  # not picklable: nothing is written
    assert not (tmp_path / 'bad').exists() and len(list(tmp_path.iterdir())) == 1


def test_bare_tensor_and_file_objects(tmp_path):
    t = rand((3, 4), 'float32')
    buf = io.BytesIO()
    ember.save(t, buf)
    buf.seek(0)
    assert same(ember.load(buf), t)
    with open(tmp_path / 'f', 'wb') as f:
        ember.save([t, t], f)
    with open(tmp_path / 'f', 'rb') as f:
        a, b = ember.load(f)
    assert a is b and same(a, t)


def test_model_state_dict_round_trip(tmp_path):
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Linear(8, 2))
    ember.save(model.state_dict(), tmp_path / 'model.safetensors')
    tensors, _ = read_safetensors(tmp_path / 'model.safetensors')
    assert set(tensors) == {'0.weight', '0.bias', '1.weight', '1.bias'}
    fresh = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Linear(8, 2))
    sd = ember.load(tmp_path / 'model.safetensors', mmap=True)
    assert isinstance(sd, collections.OrderedDict) and sd._metadata == model.state_dict()._metadata
    fresh.load_state_dict(sd)
    x = rand((5, 4), 'float32')
    assert fresh(x).tolist() == model(x).tolist()


def test_optimizer_state_dict_round_trip(tmp_path):
    def make():
        ember.manual_seed(1)
        m = ember.nn.Linear(3, 2)
        return m, ember.optim.Adam(m.parameters(), lr=0.1)

    def step(m, opt):
        opt.zero_grad()
        m(ember.ones(4, 3)).sum().backward()
        opt.step()

    m1, o1 = make()
    step(m1, o1)
    ember.save({'model': m1.state_dict(), 'optim': o1.state_dict(), 'epoch': 1}, tmp_path / 'ckpt')
    ck = ember.load(tmp_path / 'ckpt')
    assert same(ck['optim'], o1.state_dict()) and list(ck['optim']['state']) == [0, 1]
    m2, o2 = make()
    m2.load_state_dict(ck['model'])
    o2.load_state_dict(ck['optim'])
    step(m1, o1), step(m2, o2)
    assert m1.weight.tolist() == m2.weight.tolist() and m1.bias.tolist() == m2.bias.tolist()


def test_shared_tensors(tmp_path):
    w = rand((4, 4), 'float32')
    tied = {'enc.weight': w.detach(), 'dec.weight': w.detach(), 'same': w, 'again': w,
            'row': w[1], 'empty1': ember.empty(0), 'empty2': ember.empty(0)}
    ember.save(tied, tmp_path / 'f.safetensors')
    tensors, _ = read_safetensors(tmp_path / 'f.safetensors')
    assert set(tensors) == {'enc.weight', 'row', 'empty1', 'empty2'}  # one copy of w
    back = ember.load(tmp_path / 'f.safetensors')
    assert back['enc.weight'] is back['dec.weight'] is back['same'] is back['again']
    assert back['empty1'] is not back['empty2']
    # a partial view is its own copy: it no longer shares memory after loading
    assert same(back['row'], w[1])
    back['row'].fill_(0)
    assert back['enc.weight'][1].tolist() == w[1].tolist()


# ---- corrupt files --------------------------------------------------------------

def test_corrupt_and_truncated_files_raise(tmp_path):
    ember.save({'a': rand((10,), 'float64'), 'b': rand((3,), 'int32')}, tmp_path / 'good', format='safetensors')
    raw = (tmp_path / 'good').read_bytes()
    n, = struct.unpack('<Q', raw[:8])
    cases = {
        'truncated': (raw[:-5], 'trailing|past'),
        'truncated header': (raw[:20], 'past the end'),
        'tiny': (raw[:5], 'too small'),
        'huge header': (struct.pack('<Q', 200_000_000) + raw[8:], '100 MB'),
        'extra bytes': (raw + b'xx', 'trailing'),
        'bad json': (raw[:8] + b'{' + b'!' * (n - 1) + raw[8 + n:], 'not a JSON object'),
        'bad dtype': (raw.replace(b'"F64"', b'"X64"'), "dtype 'X64'"),
    }
    for what, (data, msg) in cases.items():
        (tmp_path / 'bad').write_bytes(data)
        for use_mmap in (False, True):
            with pytest.raises(ValueError, match=msg):
                ember.load(tmp_path / 'bad', mmap=use_mmap)
        with pytest.raises(ValueError, match=msg):
            ember.load(io.BytesIO(data))
    with pytest.raises(FileNotFoundError):
        ember.load(tmp_path / 'missing')
    # a structure that does not match the tensors
    ember.save({'a': ember.ones(1)}, tmp_path / 'f', format='safetensors')
    raw = (tmp_path / 'f').read_bytes().replace(b'{\\"T\\":\\"a\\"}', b'{\\"T\\":\\"z\\"}')
    (tmp_path / 'f').write_bytes(raw)
    with pytest.raises(ValueError, match='ember.structure'):
        ember.load(tmp_path / 'f')


# ---- torch.save files --------------------------------------------------------------

def torch_to_list(t):
    return t.detach().double().reshape(-1).tolist()


@pytest.mark.parametrize('zipped', [True, False])
def test_loads_torch_files(tmp_path, zipped):
    x = torch.arange(24.).reshape(4, 6)
    lin = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
    lin(torch.ones(1, 3)).sum().backward()
    opt.step()
    obj = {'x': x, 'xt': x.t(), 'col': x[:, 2], 'slice': x[1:3, ::2], 'scalar': torch.tensor(2.5),
           'empty': torch.empty(0, 2), 'model': lin.state_dict(), 'optim': opt.state_dict(), 'epoch': 3,
           'names': ('a', 'b'), 'param': torch.nn.Parameter(torch.ones(2)), 'rg': torch.ones(2, requires_grad=True),
           'dtype': torch.float16, 'size': torch.Size([1, 2]), 'blob': b'\x00\x01', 'none': None}
    for dt in DTYPES:
        obj[dt] = (torch.arange(-3, 9).reshape(3, 4) * 7.3).to(getattr(torch, dt))
    torch.save(obj, tmp_path / 'f.pt', _use_new_zipfile_serialization=zipped)
    back = ember.load(tmp_path / 'f.pt')
    for k in ['x', 'xt', 'col', 'slice', 'scalar', 'empty'] + DTYPES:
        assert dtype_name(back[k].dtype) == dtype_name(obj[k].dtype), k
        assert tuple(back[k].shape) == tuple(obj[k].shape) and back[k].stride() == obj[k].stride(), k
        assert back[k].storage_offset() == obj[k].storage_offset(), k
        assert torch_to_list(obj[k]) == back[k].detach().double().reshape(-1).tolist(), k
    # views of one storage still share it
    assert back['xt'].data_ptr() == back['x'].data_ptr()
    back['x'][0, 2] = 100
    assert back['col'][0].item() == 100
    assert isinstance(back['model'], collections.OrderedDict)
    assert back['model']._metadata == lin.state_dict()._metadata
    assert list(back['optim']['state']) == [0, 1]
    assert torch_to_list(opt.state_dict()['state'][0]['momentum_buffer']) == \
        back['optim']['state'][0]['momentum_buffer'].reshape(-1).tolist()
    assert back['optim']['param_groups'][0]['lr'] == 0.1 and back['epoch'] == 3 and back['names'] == ('a', 'b')
    assert isinstance(back['param'], ember.nn.Parameter) and back['param'].requires_grad
    assert back['rg'].requires_grad and back['rg'].is_leaf
    assert back['dtype'] == ember.float16 and back['size'] == ember.Size([1, 2]) and back['none'] is None
    assert back['blob'] == b'\x00\x01'
    # a model loads the state dict
    m = ember.nn.Linear(3, 2)
    m.load_state_dict(back['model'])
    assert m.weight.tolist() == lin.weight.tolist()


def test_torch_file_without_torch_and_file_objects(tmp_path):
    torch.save({'w': torch.ones(2, 3)}, tmp_path / 'f.pt')
    code = ("import sys, ember; d = ember.load(sys.argv[1]); "
            "assert d['w'].tolist() == [[1.0] * 3] * 2; assert 'torch' not in sys.modules; print('ok')")
    out = subprocess.run([sys.executable, '-c', code, str(tmp_path / 'f.pt')], capture_output=True, text=True,
                         env={**os.environ, 'PYTHONPATH': PYTHON_DIR})
    assert out.stdout.strip() == 'ok', out.stderr
    with open(tmp_path / 'f.pt', 'rb') as f:
        assert ember.load(f)['w'].shape == (2, 3)
    assert ember.load(io.BytesIO((tmp_path / 'f.pt').read_bytes()))['w'].shape == (2, 3)


def test_map_location(tmp_path):
    torch.save({'w': torch.ones(2)}, tmp_path / 'f.pt')
    ember.save({'w': ember.ones(2)}, tmp_path / 'f.st')
    for f in ('f.pt', 'f.st'):
        for loc in ('cpu', ember.device('cpu'), {'cuda:0': 'cpu'}, lambda s, loc: s, lambda s, loc: None):
            assert ember.load(tmp_path / f, map_location=loc)['w'].tolist() == [1, 1]
        seen = []
        ember.load(tmp_path / f, map_location=lambda s, loc: seen.append(loc))
        assert seen == ['cpu']
        assert ember.load(tmp_path / f, map_location=lambda s, loc: s * 2)['w'].tolist() == [2, 2]
        with pytest.raises(RuntimeError, match='CUDA'):
            ember.load(tmp_path / f, map_location='cuda:0')
        with pytest.raises(RuntimeError, match='CUDA'):
            ember.load(tmp_path / f, map_location={'cpu': 'cuda:1'})


class _Evil:
    def __reduce__(self):
        return (os.system, ('touch ' + _Evil.marker,))


def test_malicious_pickles_are_refused(tmp_path):
    _Evil.marker = str(tmp_path / 'pwned')
    evil = pickle.dumps({'w': _Evil()}, protocol=2)
    # a torch zip whose data.pkl runs os.system
    torch.save({'w': torch.ones(1)}, tmp_path / 'f.pt')
    with zipfile.ZipFile(tmp_path / 'f.pt') as z:
        entries = {n: z.read(n) for n in z.namelist()}
    with zipfile.ZipFile(tmp_path / 'evil.pt', 'w') as z:
        for n, data in entries.items():
            z.writestr(n, evil if n.endswith('data.pkl') else data)
    # a legacy file whose object pickle does
    header = b''.join(pickle.dumps(x, protocol=2) for x in (0x1950a86a20f9469cfc6c, 1001, {}))
    no_keys = pickle.dumps([], protocol=2)
    (tmp_path / 'evil_legacy.pt').write_bytes(header + evil + no_keys)
    for f in ('evil.pt', 'evil_legacy.pt'):
        with pytest.raises(pickle.UnpicklingError, match='GLOBAL posix.system .*weights_only=False'):
            ember.load(tmp_path / f)
    assert not os.path.exists(_Evil.marker)
    # the records around the object pickle (magic number, protocol, system
    # info, storage keys) are read by the parser that runs nothing, whatever
    # weights_only says: a file with code there is corrupt
    plain = [pickle.dumps(x, protocol=2) for x in (0x1950a86a20f9469cfc6c, 1001, {}, {'w': 1}, [])]
    for k in (1, 2, 4):
        records = plain[:k] + [pickle.dumps(_Evil(), protocol=2)] + plain[k + 1:]
        (tmp_path / 'evil_header.pt').write_bytes(b''.join(records))
        with pytest.raises(RuntimeError, match='legacy torch file'):
            ember.load(tmp_path / 'evil_header.pt', weights_only=False)
    assert not os.path.exists(_Evil.marker)
    # other globals torch files never need
    for mod, name in (('builtins', 'eval'), ('torch.nn', 'Linear'), ('builtins', 'getattr')):
        payload = b'\x80\x02c' + f'{mod}\n{name}\n'.encode() + b')R.'
        (tmp_path / 'g.pt').write_bytes(header + payload + no_keys)
        with pytest.raises(pickle.UnpicklingError, match=f'{mod}.{name}'):
            ember.load(tmp_path / 'g.pt')


def test_corrupt_torch_files(tmp_path):
    torch.save({'w': torch.ones(100)}, tmp_path / 'z.pt')
    torch.save({'w': torch.ones(100)}, tmp_path / 'l.pt', _use_new_zipfile_serialization=False)
    z, lg = (tmp_path / 'z.pt').read_bytes(), (tmp_path / 'l.pt').read_bytes()
    for data in (z[:len(z) // 2], lg[:len(lg) - 10], lg[:40]):
        (tmp_path / 'bad.pt').write_bytes(data)
        with pytest.raises((RuntimeError, pickle.UnpicklingError), match='ember.load'):
            ember.load(tmp_path / 'bad.pt')


# ---- atomic saves -----------------------------------------------------------

WRITER = """
import sys, ember
big = ember.ones(16 << 20)  # 64 MB per save
while True:
    ember.save({'w': big}, sys.argv[1])
"""


@pytest.mark.parametrize('name', ['ckpt.safetensors', 'ckpt.pt'])
def test_killed_writer_leaves_a_loadable_file(tmp_path, name):
    path = tmp_path / name
    ember.save({'w': ember.zeros(16 << 20)}, path)
    child = subprocess.Popen([sys.executable, '-c', WRITER, str(path)], env={**os.environ, 'PYTHONPATH': PYTHON_DIR})
    try:
        deadline = time.time() + 30
        while not any(p.name.endswith('.tmp') for p in tmp_path.iterdir()):  # mid-write
            assert time.time() < deadline and child.poll() is None
            time.sleep(0.001)
        child.send_signal(signal.SIGKILL)
        child.wait()
    finally:
        if child.poll() is None:
            child.kill()
    # the file is the old one or a complete new one, never a mix
    w = ember.load(path)['w']
    assert w.shape == (16 << 20,) and w.min().item() == w.max().item()
    # the killed writer's temporary file stays behind; load never reads it,
    # and the next save replaces the file as usual
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != name]
    assert all(n.startswith(f'.{name}.') and n.endswith('.tmp') for n in leftovers)
    ember.save({'w': ember.full((3,), 2.0)}, path)
    assert ember.load(path)['w'].tolist() == [2, 2, 2]


def test_failed_save_keeps_the_old_file(tmp_path):
    path = tmp_path / 'f'
    ember.save({'w': ember.ones(3)}, path)

    class Boom:
        pass

    with pytest.raises((TypeError, pickle.PicklingError)):
        ember.save({'w': ember.zeros(3), 'x': Boom()}, path)
    with pytest.raises(ValueError, match='repeated|reserved'):
        ember._C._safetensors_save(str(path), ['a', 'a'], [ember.zeros(1), ember.zeros(1)], {})
    assert ember.load(path)['w'].tolist() == [1, 1, 1] and os.listdir(tmp_path) == ['f']

    def failing_write(data):
        raise OSError('disk full')

    class F:
        write = staticmethod(failing_write)

    with pytest.raises(OSError, match='disk full'):
        ember.save({'w': ember.zeros(3)}, F())
