"""ember.save / ember.load in PyTorch's zip format, checked against torch 1.13
both ways: every dtype, views and shared storages, Parameters, state dicts,
optimizers, whole modules, file objects; weights_only, the allowlist and the
environment variables; map_location and mmap."""
import collections
import copy
import io
import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember

PYTHON_DIR = os.path.join(os.path.dirname(__file__), '..', '..', 'python')
DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool']


def e2t(t):
    """An ember tensor's values as a torch tensor (through float64 lists where needed)."""
    dtype = getattr(torch, str(t.dtype).split('.')[-1])
    return torch.tensor(t.detach().double().tolist() if t.dim() else t.detach().double().item()).to(dtype)


def sample(dtype, shape=(3, 4)):
    x = ember.arange(12).reshape(shape) % 5
    return (x > 2) if dtype == 'bool' else x.to(getattr(ember, dtype))


@pytest.mark.parametrize('dtype', DTYPES)
def test_every_dtype_both_ways(tmp_path, dtype):
    x = sample(dtype)
    ember.save({'x': x, 'col': x[:, 1], 't': x.t()}, tmp_path / 'e.pt')
    t = torch.load(tmp_path / 'e.pt')
    assert t['x'].dtype == getattr(torch, dtype)
    assert torch.equal(t['x'], e2t(x)) and torch.equal(t['col'], e2t(x[:, 1])) and torch.equal(t['t'], e2t(x).t())
    assert t['t'].stride() == (1, 4) and t['col'].storage_offset() == 1
    torch.save({'x': t['x'], 'col': t['x'][:, 1]}, tmp_path / 't.pt')
    back = ember.load(tmp_path / 't.pt')
    assert back['x'].dtype == x.dtype and back['x'].tolist() == x.tolist()
    assert back['col'].tolist() == x[:, 1].tolist()


@pytest.mark.parametrize('writer', ['ember', 'torch', 'torch_legacy'])
def test_views_share_storage_after_loading(tmp_path, writer):
    if writer == 'ember':
        x = ember.arange(6.).reshape(2, 3)
        ember.save([x, x[1], x[1]], tmp_path / 'f.pt')
    else:
        x = torch.arange(6.).reshape(2, 3)
        torch.save([x, x[1], x[1]], tmp_path / 'f.pt', _use_new_zipfile_serialization=writer == 'torch')
    for load in (ember.load, torch.load):
        a, row, row2 = load(tmp_path / 'f.pt')
        row[0] = 100
        assert a[1, 0].item() == 100 and row2[0].item() == 100


def test_parameters_state_dicts_and_nested_containers(tmp_path):
    m = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    sd = m.state_dict()
    obj = {'sd': sd, 'p': ember.nn.Parameter(ember.ones(2)), 'frozen': ember.nn.Parameter(ember.ones(1), False),
           'nested': [1, (2.5, 'x', None, True), {'k': [b'bytes', 2 ** 70, -3]}], 'size': ember.Size([2, 3]),
           'dtype': ember.float16, 'device': ember.device('cpu'), 'set': {1, 2}}
    ember.save(obj, tmp_path / 'f.pt')
    t = torch.load(tmp_path / 'f.pt')
    assert isinstance(t['sd'], collections.OrderedDict) and list(t['sd']) == list(sd)
    assert t['sd']._metadata == sd._metadata
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    tm.load_state_dict(t['sd'])
    assert torch.equal(tm[0].weight, e2t(m[0].weight))
    assert isinstance(t['p'], torch.nn.Parameter) and t['p'].requires_grad and not t['frozen'].requires_grad
    assert t['nested'] == obj['nested'] and t['size'] == torch.Size([2, 3]) and t['dtype'] == torch.float16
    assert t['device'] == torch.device('cpu') and t['set'] == {1, 2}
    back = ember.load(tmp_path / 'f.pt')
    assert back['sd']._metadata == sd._metadata and isinstance(back['p'], ember.nn.Parameter)
    assert back['p'].requires_grad and not back['frozen'].requires_grad
    assert back['nested'] == obj['nested'] and back['dtype'] == ember.float16 and back['size'] == (2, 3)
    # torch's state dict into ember
    torch.save(tm.state_dict(), tmp_path / 't.pt')
    sd2 = ember.load(tmp_path / 't.pt')
    assert sd2._metadata == tm.state_dict()._metadata
    m.load_state_dict(sd2)
    assert m[0].weight.tolist() == tm[0].weight.tolist()


def test_optimizer_state_dicts_both_ways(tmp_path):
    em = ember.nn.Linear(3, 2)
    tm = torch.nn.Linear(3, 2)
    tm.load_state_dict({k: e2t(v) for k, v in em.state_dict().items()})
    eo, to = ember.optim.Adam(em.parameters(), lr=0.1), torch.optim.Adam(tm.parameters(), lr=0.1)
    x = [[1., 2., 3.], [0., -1., 2.]]
    for _ in range(2):
        eo.zero_grad(), to.zero_grad()
        em(ember.tensor(x)).sum().backward(), tm(torch.tensor(x)).sum().backward()
        eo.step(), to.step()
    ember.save(eo.state_dict(), tmp_path / 'e.pt')
    to2 = torch.optim.Adam(tm.parameters(), lr=0.1)
    to2.load_state_dict(torch.load(tmp_path / 'e.pt'))
    for k in ('exp_avg', 'exp_avg_sq'):
        assert torch.allclose(to2.state[tm.weight][k], to.state[tm.weight][k], atol=1e-6)
    torch.save(to.state_dict(), tmp_path / 't.pt')
    eo2 = ember.optim.Adam(em.parameters(), lr=0.1)
    eo2.load_state_dict(ember.load(tmp_path / 't.pt'))
    assert np.allclose(eo2.state[em.weight]['exp_avg'].tolist(), to.state[tm.weight]['exp_avg'].tolist(), atol=1e-6)


def test_whole_modules_optimizers_and_numpy_need_weights_only_false(tmp_path):
    m = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.ReLU())
    opt = ember.optim.SGD(m.parameters(), lr=0.5, momentum=0.9)
    arr = np.arange(4.0)
    ember.save({'model': m, 'opt': opt, 'arr': arr}, tmp_path / 'f.pt')
    with pytest.raises(pickle.UnpicklingError, match='ember.nn.modules.container.Sequential|weights_only=False'):
        ember.load(tmp_path / 'f.pt')
    back = ember.load(tmp_path / 'f.pt', weights_only=False)
    assert isinstance(back['model'], ember.nn.Sequential)
    x = ember.randn(4, 2)
    assert back['model'](x).tolist() == m(x).tolist()
    assert back['opt'].param_groups[0]['lr'] == 0.5 and np.array_equal(back['arr'], arr)
    # the loaded optimizer drives the loaded model's parameters
    assert back['opt'].param_groups[0]['params'][0] is back['model'][0].weight


@pytest.mark.parametrize('zipped', [True, False])
def test_torch_whole_modules_load_as_ember_modules(tmp_path, zipped):
    tm = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh())
    torch.save(tm, tmp_path / 'm.pt', _use_new_zipfile_serialization=zipped)
    with pytest.raises(pickle.UnpicklingError, match='torch.nn.modules.container.Sequential'):
        ember.load(tmp_path / 'm.pt')
    em = ember.load(tmp_path / 'm.pt', weights_only=False)  # torch.X is looked up as ember.X
    assert isinstance(em, ember.nn.Sequential) and isinstance(em[0], ember.nn.Linear)
    x = [[0.5, -1.0]]
    assert np.allclose(em(ember.tensor(x)).tolist(), tm(torch.tensor(x)).tolist(), atol=1e-6)


def test_file_objects_and_pathlike(tmp_path):
    x = ember.randn(3)
    buf = io.BytesIO()
    ember.save({'x': x}, buf)
    assert buf.getvalue()[:4] == b'PK\x03\x04'
    buf.seek(0)
    assert ember.load(buf)['x'].tolist() == x.tolist()
    buf.seek(0)
    assert torch.load(buf)['x'].tolist() == x.tolist()
    tbuf = io.BytesIO()
    torch.save({'x': torch.ones(2)}, tbuf)
    tbuf.seek(0)
    assert ember.load(tbuf)['x'].tolist() == [1, 1]
    ember.save(x, pathlib.Path(tmp_path) / 'p.pt')
    assert ember.load(pathlib.Path(tmp_path) / 'p.pt').tolist() == x.tolist()
    with open(tmp_path / 'p.pt', 'rb') as f:
        assert ember.load(f).tolist() == x.tolist()
    # safetensors stays first-class
    ember.save({'x': x}, tmp_path / 'f.safetensors')
    assert (tmp_path / 'f.safetensors').read_bytes()[:4] != b'PK\x03\x04'
    ember.save({'x': x}, tmp_path / 'g', format='safetensors')
    assert ember.load(tmp_path / 'g')['x'].tolist() == ember.load(tmp_path / 'f.safetensors')['x'].tolist()
    with pytest.raises(ValueError, match='format'):
        ember.save(x, tmp_path / 'h', format='npz')


# ---- weights_only, the allowlist, environment variables ----------------------

class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


def test_allowlist(tmp_path):
    ember.save({'p': Point(1, ember.ones(2))}, tmp_path / 'f.pt')
    with pytest.raises(pickle.UnpicklingError, match=f'{__name__}.Point.*weights_only=False.*add_safe_globals'):
        ember.load(tmp_path / 'f.pt')
    from ember import serialization
    with serialization.safe_globals([Point]):
        assert Point in serialization.get_safe_globals()
        p = ember.load(tmp_path / 'f.pt')['p']
        assert isinstance(p, Point) and p.x == 1 and p.y.tolist() == [1, 1]
    assert Point not in serialization.get_safe_globals()
    serialization.add_safe_globals([Point])
    try:
        assert isinstance(ember.load(tmp_path / 'f.pt')['p'], Point)
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError):
        ember.load(tmp_path / 'f.pt')


@pytest.mark.parametrize('var', ['EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD', 'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'])
def test_environment_flips_the_default(tmp_path, var):
    ember.save({'p': Point(1, 2)}, tmp_path / 'f.pt')
    code = (f'import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); import ember, {__name__}; '
            f'print(type(ember.load({str(tmp_path / "f.pt")!r})["p"]).__name__)')
    env = {**os.environ, 'PYTHONPATH': PYTHON_DIR, var: '1'}
    r = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True)
    assert r.stdout.strip() == 'Point', r.stderr
    env[var] = '0'
    r = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True)
    assert 'UnpicklingError' in r.stderr


def test_map_location_forms(tmp_path):
    torch.save({'w': torch.ones(2)}, tmp_path / 'f.pt')
    for loc in ('cpu', ember.device('cpu'), {'cpu': 'cpu'}, lambda s, loc: s, lambda s, loc: None):
        assert ember.load(tmp_path / 'f.pt', map_location=loc)['w'].tolist() == [1, 1]
    seen = []
    ember.load(tmp_path / 'f.pt', map_location=lambda s, loc: seen.append(loc))
    assert seen == ['cpu']
    with pytest.raises(TypeError, match='map_location'):
        ember.load(tmp_path / 'f.pt', map_location=3)


def test_mmap(tmp_path):
    x = ember.arange(1000.)
    ember.save({'x': x, 'v': x[10:20]}, tmp_path / 'f.pt')
    back = ember.load(tmp_path / 'f.pt', mmap=True)
    assert back['x'].tolist() == x.tolist() and back['v'].tolist() == x[10:20].tolist()
    back['v'][0] = -1  # copy-on-write: the file does not change
    assert back['x'][10].item() == -1
    assert ember.load(tmp_path / 'f.pt')['x'][10].item() == 10
    torch.save({'t': torch.arange(5)}, tmp_path / 't.pt')
    assert ember.load(tmp_path / 't.pt', mmap=True)['t'].tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match='path'):
        ember.load(io.BytesIO((tmp_path / 'f.pt').read_bytes()), mmap=True)


# ---- tensors as Python objects -------------------------------------------------

def test_pickle_copy_deepcopy_of_tensors():
    x = ember.arange(6.).reshape(2, 3)
    a, row = pickle.loads(pickle.dumps([x, x[1]]))
    assert a.tolist() == x.tolist() and row.tolist() == x[1].tolist()
    row[0] = 50
    assert a[1, 0].item() == 50  # one storage, still shared
    t = pickle.loads(pickle.dumps(x.t()))
    assert t.stride() == (1, 3) and t.tolist() == x.t().tolist()
    for dtype in DTYPES:
        y = sample(dtype)
        z = pickle.loads(pickle.dumps(y, protocol=2))
        assert z.dtype == y.dtype and z.tolist() == y.tolist()
    p = ember.nn.Parameter(ember.ones(2), requires_grad=False)
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is ember.nn.Parameter and not q.requires_grad
    r = ember.ones(2, requires_grad=True)
    assert pickle.loads(pickle.dumps(r)).requires_grad
    y = pickle.loads(pickle.dumps(r * 2))  # as torch: a non-leaf becomes a new leaf
    assert y.is_leaf and y.requires_grad and y.tolist() == [2, 2]
    c = copy.copy(x)
    assert c.data_ptr() == x.data_ptr()  # as torch: a shallow copy shares memory
    r.grad = ember.full((2,), 3.)
    d = copy.deepcopy(r)
    assert d.requires_grad and d.grad.tolist() == [3, 3] and d.data_ptr() != r.data_ptr()


def test_pickle_of_dtypes_sizes_devices():
    for o in (ember.float16, ember.Size([2, 3]), ember.device('cpu')):
        assert pickle.loads(pickle.dumps(o)) == o and copy.deepcopy(o) == o


def test_deepcopy_and_pickle_of_modules_and_optimizers():
    m = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Tanh())
    opt = ember.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    m(ember.ones(1, 2)).sum().backward()
    opt.step()
    m2, opt2 = copy.deepcopy((m, opt))
    assert m2[0].weight.tolist() == m[0].weight.tolist() and m2[0].weight is not m[0].weight
    assert opt2.param_groups[0]['params'][0] is m2[0].weight
    m3 = pickle.loads(pickle.dumps(m))
    assert isinstance(m3[0].weight, ember.nn.Parameter) and m3[0].weight.tolist() == m[0].weight.tolist()


def test_storage_objects():
    x = ember.arange(6, dtype=ember.float32).reshape(2, 3)
    tx = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    s, ts = x[1].storage(), tx[1].storage()
    assert len(s) == len(ts) == s.size() == 6 and s.nbytes() == ts.nbytes() == 24
    assert s.element_size() == 4 and s.dtype == ember.float32 and s.tolist() == ts.tolist()
    assert s.data_ptr() == x.data_ptr() and x[1].data_ptr() == x.data_ptr() + 12
    u = x.untyped_storage()
    assert u.nbytes() == len(u) == 24 and u.element_size() == 1 and u.data_ptr() == x.data_ptr()
    assert x.untyped_storage() is x[1].untyped_storage()
    assert x.element_size() == 4 and x.nbytes == 24 and x.itemsize == 4
    u2 = pickle.loads(pickle.dumps(u))
    assert u2.tolist() == u.tolist()


def test_storages_saved_by_themselves(tmp_path):
    x = ember.arange(4.)
    ember.save({'s': x.storage(), 'x': x}, tmp_path / 'e.pt')
    t = torch.load(tmp_path / 'e.pt')
    assert t['s'].tolist() == [0, 1, 2, 3] and t['s'].dtype == torch.float32
    e = ember.load(tmp_path / 'e.pt')
    assert e['s'].tolist() == [0, 1, 2, 3] and e['s'].dtype == ember.float32
    torch.save(torch.arange(3.).storage(), tmp_path / 't.pt')
    assert ember.load(tmp_path / 't.pt').tolist() == [0, 1, 2]
