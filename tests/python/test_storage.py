"""Storages (ember.TypedStorage, UntypedStorage, FloatStorage...), Tensor.storage()/set_/
storage_type and ember.from_file, each scenario run on Ember and on PyTorch 1.13 with the
same code and compared (results as plain Python values, dtypes by name)."""
import copy
import os
import pickle

import pytest
import torch

import ember


def same(scenario, *args):
    """Runs scenario(lib, *args) with ember and with torch; the results must match."""
    def run(lib):
        try:
            return _plain(scenario(lib, *args))
        except Exception as e:  # the error type is part of the behaviour
            return ('raises', type(e).__name__)
    mine, theirs = run(ember), run(torch)
    assert mine == theirs
    return mine


def _plain(v):
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (ember.dtype, torch.dtype)):
        return str(v).split('.')[-1]
    if isinstance(v, str):
        return v.replace('ember.', 'torch.')
    return v


def test_storage_shares_memory_with_its_tensor():
    def scenario(lib):
        x = lib.arange(4.)
        s = x.storage()
        s[0] = 10
        x[1] = 20
        return [x.tolist(), s[1], s.tolist(), x.storage().data_ptr() == x.data_ptr(),
                x[1:].storage().data_ptr() == x.data_ptr(), s.nbytes(), s.element_size(), len(s), s.size(),
                s.dtype, str(s.device), s.pickle_storage_type(), s.type(), s.is_pinned(), s.is_sparse, s.is_cuda]
    assert same(scenario)[0] == [10, 20, 2, 3]


def test_storage_classes_and_isinstance():
    def scenario(lib):
        s = lib.arange(4.).storage()
        return [type(s).__name__, isinstance(s, lib.FloatStorage), isinstance(s, lib.Storage),
                isinstance(s, lib.LongStorage), isinstance(s, lib.TypedStorage), lib.Storage is lib.FloatStorage,
                lib.arange(3).storage_type() is lib.LongStorage, lib.zeros(1).storage_type() is lib.FloatStorage,
                [getattr(lib, n).dtype for n in ('DoubleStorage', 'FloatStorage', 'HalfStorage', 'BFloat16Storage',
                                                'LongStorage', 'IntStorage', 'ShortStorage', 'CharStorage',
                                                'ByteStorage', 'BoolStorage')],
                type(lib.LongStorage([1, 2])).__name__, lib.is_storage(s), lib.is_storage(s.untyped()),
                lib.is_storage(lib.zeros(1))]
    same(scenario)


def test_untyped_storage():
    def scenario(lib):
        u = lib.arange(4.).storage().untyped()
        return [type(u).__name__, u.size(), u.element_size(), u[4], u[-1], len(u), type(u[1:3]).__name__,
                u[1:3].size(), u[1:3].tolist(), u.type(), u.untyped() is u, lib.UntypedStorage(4).size(),
                lib.UntypedStorage([1, 2, 3]).tolist(), u.float().size(), type(u.float()).__name__,
                u.float().tolist()[4:8], repr(lib.UntypedStorage([1, 2]))]
    same(scenario)


@pytest.mark.parametrize('method', ['byte', 'char', 'short', 'int', 'long', 'half', 'float', 'double', 'bfloat16',
                                    'bool'])
def test_conversions(method):
    same(lambda lib: [(c := getattr(lib.tensor([1.5, -2., 0.]).storage(), method)()).dtype, c.tolist(),
                      type(c).__name__])


def test_constructors_fill_copy_resize_clone():
    def scenario(lib):
        s = lib.FloatStorage([1, 2, 3])
        s[0:2] = 9
        r = [s.tolist()]
        s.copy_(lib.FloatStorage([4, 5, 6]))
        r.append(s.tolist())
        s.resize_(5)
        r += [s.size(), s.tolist()[:3], lib.FloatStorage(2).fill_(3.5).tolist(), lib.FloatStorage(2).size()]
        c = s.clone()
        c[0] = -1
        r += [s[0], c[0], s.cpu().tolist()[:3], lib.TypedStorage([1, 2]).dtype, lib.TypedStorage().dtype,
              lib.TypedStorage().size(), lib.TypedStorage(3, dtype=lib.int16).size(),
              repr(lib.LongStorage([1, 2])), repr(lib.FloatStorage())]
        t = lib.TypedStorage(wrap_storage=lib.arange(4.).storage().untyped(), dtype=lib.int32)
        r += [t.size(), t.dtype, t.element_size()]
        return r
    same(scenario)


@pytest.mark.parametrize('case', ['copy_size', 'index', 'slice_typed', 'str_data', 'set_dtype'])
def test_errors(case):
    def scenario(lib):
        s = lib.FloatStorage([1, 2, 3])
        {'copy_size': lambda: s.copy_(lib.FloatStorage([4, 5])), 'index': lambda: s[3],
         'slice_typed': lambda: s[1:2], 'str_data': lambda: lib.FloatStorage('abc'),
         'set_dtype': lambda: lib.zeros(2).set_(lib.LongStorage(2))}[case]()
    assert same(scenario)[0] == 'raises'


def test_tensor_set_storage():
    def scenario(lib):
        s = lib.FloatStorage([1, 2, 3, 4, 5])
        y = lib.tensor([])
        y.set_(s)
        r = [y.tolist()]
        y.set_(s, 1, (2,), (1,))
        y[0] = 50
        r += [y.tolist(), s[1]]
        y.set_(s, 0, (2, 2))
        r += [y.tolist(), y.stride()]
        y.set_(s.untyped(), 2, (3,), (1,))
        r += [y.tolist(), lib.zeros(3).set_().shape == (0,)]
        return r
    same(scenario)


def test_pickle_copy_and_share():
    def scenario(lib):
        x = lib.arange(4.)
        s = x.storage()
        p = pickle.loads(pickle.dumps(s))
        c = copy.copy(s)
        c[0] = 5
        d = copy.deepcopy(s)
        d[1] = 6
        return [type(p).__name__, p.tolist(), p.dtype, s[0], s[1], c[0], d[1], s.share_memory_() is s,
                s.is_shared(), x.is_shared()]
    same(scenario)


def test_from_buffer():
    same(lambda lib: [lib.UntypedStorage.from_buffer(b'abcd', dtype=lib.uint8).tolist(),
                      lib.FloatStorage.from_buffer(b'\x00\x00\x80\x3f', 'little').tolist(),
                      lib.FloatStorage.from_buffer(b'\x3f\x80\x00\x00', 'big').tolist(),
                      lib.LongStorage.from_buffer(bytes(range(16)), 'little').tolist()])


def test_from_file(tmp_path):
    def scenario(lib, path):
        path.write_bytes(bytes(range(16)))
        t = lib.from_file(str(path), shared=True, size=4, dtype=lib.int32)
        r = [t.tolist()]
        t[0] = 7
        r.append(path.read_bytes()[:4])
        p = lib.from_file(str(path), shared=False, size=2, dtype=lib.int32)
        p[0] = 9
        r += [p.tolist(), path.read_bytes()[:4], lib.from_file(str(path), size=0).tolist(),
              lib.FloatStorage.from_file(str(path), False, 4).size(),
              lib.UntypedStorage.from_file(str(path), False, 3).tolist(), lib.from_file(str(path), size=2).dtype]
        return r
    same(scenario, tmp_path / 'f')
    (tmp_path / 'g').write_bytes(b'ab')
    with pytest.raises(RuntimeError):
        ember.from_file(str(tmp_path / 'g'), shared=False, size=4, dtype=ember.int32)
    grown = ember.from_file(str(tmp_path / 'h'), shared=True, size=3, dtype=ember.int16)  # shared creates/grows it
    grown.fill_(1)
    assert os.path.getsize(tmp_path / 'h') == 6


def test_storage_of_transposed_and_ember_pickle_of_untyped():
    z = ember.zeros(2, 3).t()
    assert z.storage().size() == 6 and z.untyped_storage().nbytes() == 24
    u = pickle.loads(pickle.dumps(ember.arange(4.).storage().untyped()))
    assert type(u) is ember.UntypedStorage and u.nbytes() == 16
    assert isinstance(u, ember.StorageBase)
