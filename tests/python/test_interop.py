"""NumPy, buffer protocol and DLPack exchange: memory shared both ways
(checked by writes on each side), kept alive by either side (checked by
deleting the other), the copies PyTorch makes, its errors; finfo/iinfo."""
import ctypes
import gc
import sys
import threading
import warnings
import weakref

import numpy as np
import pytest
import torch

import ember
import ember.utils.dlpack

NP_DTYPES = ['float32', 'float64', 'float16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool']


def raises_like(fn_torch, fn_ember):
    """Both raise, the same exception type."""
    with pytest.raises(Exception) as et:
        fn_torch()
    with pytest.raises(et.type):
        fn_ember()


def arange(shape, dtype='float64'):
    a = np.arange(int(np.prod(shape))).reshape(shape) % 7
    return a.astype(dtype)


# ---- Tensor.numpy() -------------------------------------------------------------
@pytest.mark.parametrize('dtype', NP_DTYPES)
def test_numpy_shares_memory(dtype):
    t = ember.tensor(arange((2, 3), dtype))
    a = t.numpy()
    assert a.dtype == np.dtype(dtype) and a.shape == (2, 3) and a.flags.writeable
    assert a.ctypes.data == t.data_ptr()
    a[0, 1] = 1
    assert t.tolist()[0][1] == 1
    t.zero_()
    assert not a.any()


def test_numpy_views_match_torch_strides():
    base = np.arange(60.).reshape(3, 4, 5)
    for view in (lambda x: x.transpose(0, 2), lambda x: x.narrow(1, 1, 2), lambda x: x.select(2, 3),
                 lambda x: x.unsqueeze(1).expand(3, 2, 4, 5), lambda x: x[0] if isinstance(x, torch.Tensor) else x.select(0, 0)):
        a = view(ember.tensor(base)).numpy()
        b = view(torch.tensor(base)).numpy()
        assert a.strides == b.strides and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def test_numpy_keeps_storage_alive():
    t = ember.arange(6.)
    a = t.numpy()
    del t
    gc.collect()
    ember.ones(10000).add_(1)  # reuse freed memory if it had been freed
    np.testing.assert_array_equal(a, np.arange(6.))
    v = ember.arange(4.).narrow(0, 1, 2)
    b = v.numpy()
    del v
    gc.collect()
    np.testing.assert_array_equal(b, [1., 2.])


def test_numpy_survives_data_swap():
    t = ember.arange(3.)
    a = t.numpy()
    t.data = ember.zeros(5)
    np.testing.assert_array_equal(a, [0., 1., 2.])


def test_numpy_errors_like_torch():
    raises_like(lambda: torch.ones(2, requires_grad=True).numpy(), lambda: ember.ones(2, requires_grad=True).numpy())
    raises_like(lambda: torch.ones(2, dtype=torch.bfloat16).numpy(), lambda: ember.ones(2, dtype=ember.bfloat16).numpy())
    with pytest.raises(RuntimeError, match='requires grad'):
        np.asarray(ember.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match='BFloat16'):
        np.asarray(ember.ones(2, dtype=ember.bfloat16))


def test_numpy_force():
    t = ember.ones(3, requires_grad=True)
    a = t.numpy(force=True)
    a[0] = 5
    assert t.tolist() == [5., 1., 1.]


def test_numpy_scalar_and_empty():
    assert ember.tensor(2.5).numpy().shape == ()
    assert float(ember.tensor(2.5).numpy()) == 2.5
    for shape in ((0,), (0, 3), (2, 0, 1)):
        a = ember.zeros(shape).numpy()
        assert a.shape == shape and a.dtype == np.float32


def test_numpy_base_owns_a_reference():
    t = ember.ones(3)
    before = sys.getrefcount(t)
    a = t.numpy()
    assert sys.getrefcount(t) == before  # the array holds the C tensor, not the Python object
    assert type(a.base).__name__ == '_TensorMemory'
    del a


# ---- from_numpy / tensor / as_tensor / asarray -----------------------------------------
@pytest.mark.parametrize('dtype', NP_DTYPES)
def test_from_numpy_shares_memory(dtype):
    a = arange((3, 2), dtype)
    t = ember.from_numpy(a)
    assert str(t.dtype) == 'ember.' + dtype and t.shape == (3, 2)
    assert t.data_ptr() == a.ctypes.data
    a[1, 1] = 1
    assert t.tolist()[1][1] == 1
    t.zero_()
    assert not a.any()


def test_from_numpy_keeps_array_alive():
    a = np.arange(5.)
    ref = weakref.ref(a)
    count = sys.getrefcount(a)
    t = ember.from_numpy(a)
    assert sys.getrefcount(a) == count + 1
    del a
    gc.collect()
    assert ref() is not None
    assert t.tolist() == [0., 1., 2., 3., 4.]
    v = t.narrow(0, 1, 2)
    del t
    gc.collect()
    assert ref() is not None and v.tolist() == [1., 2.]
    del v
    gc.collect()
    assert ref() is None


def test_from_numpy_freed_on_another_thread():
    a = np.arange(4.)
    ref = weakref.ref(a)
    box = [ember.from_numpy(a)]
    del a
    th = threading.Thread(target=box.clear)
    th.start()
    th.join()
    gc.collect()
    assert ref() is None


@pytest.mark.filterwarnings('ignore:The given NumPy array is not writable')
def test_from_numpy_strides_match_torch():
    for a in (np.arange(12.).reshape(3, 4).T, np.arange(12.).reshape(3, 4)[:, ::2],
              np.broadcast_to(np.arange(3.), (4, 3)), np.zeros((0, 3)), np.array(7.), np.arange(24).reshape(2, 3, 4)[1]):
        t, e = torch.from_numpy(a), ember.from_numpy(a)
        assert e.shape == t.shape and e.tolist() == t.tolist()
        assert e.stride() == t.stride() or not a.size  # empty: NumPy's strides differ from its buffer's


def test_from_numpy_errors_like_torch():
    bad = [[1, 2], np.arange(4)[::-1], np.zeros(3, dtype=np.uint16), np.zeros(3, dtype=object),
           np.zeros(3, dtype='>i4'), np.zeros(3, dtype=[('a', 'i1'), ('b', 'i4')])['b'],
           np.zeros(2, dtype=np.clongdouble), np.zeros(2, dtype='datetime64[s]')]
    for a in bad:
        raises_like(lambda: torch.from_numpy(a), lambda: ember.from_numpy(a))


def test_from_numpy_readonly_warns_and_shares():
    a = np.arange(3.)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match='not writable'):
        t = ember.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert ember.tensor(a).tolist() == [0., 1., 2.]  # a copy: no warning


def test_tensor_copies_arrays():
    for dtype in NP_DTYPES:
        a = arange((2, 3), dtype)
        t = ember.tensor(a)
        assert str(t.dtype) == 'ember.' + dtype and t.tolist() == a.tolist()
        assert t.data_ptr() != a.ctypes.data
    a = np.arange(6.).reshape(2, 3)
    t = ember.tensor(a.T, dtype=ember.int32)
    a[0, 0] = 9
    assert t.dtype == ember.int32 and t.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert ember.tensor(np.broadcast_to(np.arange(2), (3, 2))).tolist() == [[0, 1]] * 3
    assert ember.tensor(np.arange(10.)[::3]).tolist() == [0., 3., 6., 9.]
    t = ember.tensor(np.ones(2), requires_grad=True)
    assert t.requires_grad and t.dtype == ember.float64


@pytest.mark.filterwarnings('ignore::DeprecationWarning')  # torch reading np.bool_
def test_tensor_numpy_scalars():
    for v in (np.float32(1.5), np.float64(2.5), np.int16(3), np.bool_(True), np.uint8(7), np.float16(0.5)):
        t, e = torch.tensor(v), ember.tensor(v)
        assert str(e.dtype)[6:] == str(t.dtype)[6:] and e.item() == t.item() and e.dim() == 0
    raises_like(lambda: torch.tensor(np.uint16(1)), lambda: ember.tensor(np.uint16(1)))
    raises_like(lambda: torch.tensor(np.arange(3)[::-1]), lambda: ember.tensor(np.arange(3)[::-1]))


def test_as_tensor():
    a = np.arange(3.)
    t = ember.as_tensor(a)
    a[0] = 7
    assert t.tolist() == [7., 1., 2.] and t.dtype == ember.float64
    c = ember.as_tensor(a, dtype=ember.float32)
    a[1] = 8
    assert c.tolist() == [7., 1., 2.] and c.dtype == ember.float32
    same = ember.as_tensor(a, dtype=ember.float64)
    a[2] = 9
    assert same.tolist() == [7., 8., 9.]
    e = ember.ones(2)
    assert ember.as_tensor(e) is e


def test_asarray_rules_like_torch():
    a = np.ones(3)
    for kw in ({}, {'copy': True}, {'copy': False}, {'dtype': 'float32'}, {'dtype': 'float64', 'copy': False},
               {'requires_grad': True}):
        tkw = {k: getattr(torch, v) if k == 'dtype' else v for k, v in kw.items()}
        ekw = {k: getattr(ember, v) if k == 'dtype' else v for k, v in kw.items()}
        a[0] = 1
        t, e = torch.asarray(a, **tkw), ember.asarray(a, **ekw)
        a[0] = 5
        assert e.tolist() == t.tolist() and str(e.dtype)[6:] == str(t.dtype)[6:]
        assert e.requires_grad == t.requires_grad
    raises_like(lambda: torch.asarray(a, dtype=torch.float32, copy=False),
                lambda: ember.asarray(a, dtype=ember.float32, copy=False))
    raises_like(lambda: torch.asarray([1, 2], copy=False), lambda: ember.asarray([1, 2], copy=False))
    e = ember.ones(2)
    assert ember.asarray(e) is e and ember.asarray(e, copy=True) is not e
    assert ember.asarray(e, dtype=ember.float64).dtype == ember.float64
    assert ember.asarray([1, 2]).tolist() == torch.asarray([1, 2]).tolist()
    assert ember.asarray(3.5).item() == 3.5
    c = ember.utils.dlpack.to_dlpack(ember.arange(3))
    assert ember.asarray(c).tolist() == [0, 1, 2]


def test_frombuffer_and_asarray_of_buffers():
    b = bytearray(8)
    t = ember.frombuffer(b, dtype=ember.int32)
    b[0] = 1
    assert t.tolist() == [1, 0]
    t.add_(1)
    assert b[4] == 1
    assert ember.frombuffer(b, dtype=ember.uint8, count=3, offset=4).tolist() == [1, 0, 0]
    import array
    arr = array.array('i', [1, 2])
    for kw in ({}, {'dtype': 'int32'}):
        t = torch.asarray(arr, **{k: getattr(torch, v) for k, v in kw.items()})
        e = ember.asarray(arr, **{k: getattr(ember, v) for k, v in kw.items()})
        assert e.tolist() == t.tolist()
    for kw in ({'count': 0}, {'offset': 8}, {'offset': -1}, {'count': 3}, {'offset': 3}):
        raises_like(lambda: torch.frombuffer(b, dtype=torch.int32, **kw), lambda: ember.frombuffer(b, dtype=ember.int32, **kw))
    with pytest.warns(UserWarning, match='not writable'):
        assert ember.frombuffer(b'ab', dtype=ember.uint8).tolist() == [97, 98]
    with pytest.raises(TypeError):
        ember.frombuffer([1, 2], dtype=ember.uint8)


def test_frombuffer_keeps_object_alive():
    b = bytearray(b'abcd')
    t = ember.frombuffer(b, dtype=ember.uint8)
    with pytest.raises(BufferError):
        b.extend(b'x')  # exported: may not move
    del b
    gc.collect()
    assert t.tolist() == [97, 98, 99, 100]


# ---- buffer protocol, __array__, __array_interface__ ------------------------------------
class Py_buffer(ctypes.Structure):
    _fields_ = [('buf', ctypes.c_void_p), ('obj', ctypes.c_void_p), ('len', ctypes.c_ssize_t),
                ('itemsize', ctypes.c_ssize_t), ('readonly', ctypes.c_int), ('ndim', ctypes.c_int),
                ('format', ctypes.c_char_p), ('shape', ctypes.POINTER(ctypes.c_ssize_t)),
                ('strides', ctypes.POINTER(ctypes.c_ssize_t)), ('suboffsets', ctypes.c_void_p),
                ('internal', ctypes.c_void_p)]


PyBUF = dict(SIMPLE=0, WRITABLE=1, FORMAT=4, ND=8, STRIDES=0x18, C_CONTIGUOUS=0x38, F_CONTIGUOUS=0x58,
             ANY_CONTIGUOUS=0x98)


def get_buffer(obj, flags):
    """The raw PyObject_GetBuffer result: (ok, Py_buffer), released before returning."""
    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, ctypes.POINTER(Py_buffer), ctypes.c_int]
    view = Py_buffer()
    try:
        get(obj, ctypes.byref(view), flags)
    except (BufferError, ValueError):  # NumPy raises ValueError where the protocol says BufferError
        return False, None
    info = dict(fmt=view.format, ndim=view.ndim, len=view.len, itemsize=view.itemsize, readonly=view.readonly,
                shape=[view.shape[i] for i in range(view.ndim)] if view.shape else None,
                strides=[view.strides[i] for i in range(view.ndim)] if view.strides else None)
    ctypes.pythonapi.PyBuffer_Release(ctypes.byref(view))
    return True, info


@pytest.mark.parametrize('flag', list(PyBUF))
def test_buffer_flags_like_numpy(flag):
    """Each PyBUF_* flag is granted or refused as NumPy does for the same array."""
    base = np.arange(24.).reshape(2, 3, 4)
    for view in (lambda x: x, lambda x: x.transpose(0, 2) if isinstance(x, ember.Tensor) else x.transpose(2, 1, 0),
                 lambda x: x[0] if isinstance(x, np.ndarray) else x.select(0, 0),
                 lambda x: x[:, 1] if isinstance(x, np.ndarray) else x.select(1, 1)):
        ok_np, np_info = get_buffer(view(base), PyBUF[flag])
        ok_em, em_info = get_buffer(view(ember.tensor(base)), PyBUF[flag])
        assert ok_np == ok_em
        if ok_np:
            for k in ('ndim', 'len', 'itemsize', 'readonly', 'shape', 'strides'):
                assert np_info[k] == em_info[k], k
            assert (np_info['fmt'] is None) == (em_info['fmt'] is None)


def test_memoryview_shares_and_keeps_alive():
    t = ember.arange(6, dtype=ember.int32).reshape(2, 3)
    m = memoryview(t)
    assert m.format == 'i' and m.shape == (2, 3) and m.strides == (12, 4) and not m.readonly
    m[1, 2] = 42
    assert t.tolist()[1][2] == 42
    del t
    gc.collect()
    assert m.tolist() == [[0, 1, 2], [3, 4, 42]]
    formats = {ember.float16: 'e', ember.bool: '?', ember.uint8: 'B', ember.int64: 'q', ember.float64: 'd'}
    for dt, f in formats.items():
        assert memoryview(ember.zeros(2, dtype=dt)).format == f
    with pytest.raises(BufferError):
        memoryview(ember.ones(2, requires_grad=True))
    with pytest.raises(BufferError):
        memoryview(ember.ones(2, dtype=ember.bfloat16))


def test_np_asarray_shares():
    t = ember.zeros(2, 3).t()
    a = np.asarray(t)
    a[0, 1] = 3
    assert t.tolist()[0][1] == 3 and a.strides == (4, 12)


def test_array_protocols_like_torch():
    t, e = torch.arange(4.), ember.arange(4.)
    np.testing.assert_array_equal(e.__array__(np.int32), t.__array__(np.int32))
    assert e.__array__(np.int32).dtype == np.int32
    r = np.sin(e)
    assert isinstance(r, ember.Tensor) and r.tolist() == np.sin(t).tolist()
    g = np.greater(e, 1)
    assert g.dtype == ember.uint8 and g.tolist() == np.greater(t, 1).tolist()
    raises_like(lambda: np.ones(4) + t, lambda: np.ones(4) + e)
    iface = ember.ones(2, 3).__array_interface__
    assert iface['shape'] == (2, 3) and iface['typestr'] == '<f4' and iface['strides'] == (12, 4)
    assert iface['version'] == 3 and iface['data'][1] is False


# ---- DLPack ---------------------------------------------------------------------------------
def test_dlpack_to_numpy_shares_and_keeps_alive():
    e = ember.arange(6.).reshape(2, 3)
    a = np.from_dlpack(e)  # read-only, as NumPy 1.24 makes every DLPack import
    assert a.ctypes.data == e.data_ptr()
    e.mul_(2)
    assert a[0, 1] == 2
    del e
    gc.collect()
    np.testing.assert_array_equal(a, [[0., 2., 4.], [6., 8., 10.]])
    t = np.from_dlpack(ember.arange(12.).reshape(3, 4).t())
    assert t.strides == (4, 16)


def test_dlpack_from_numpy_shares_and_keeps_alive():
    a = np.arange(5.)
    ref = weakref.ref(a)
    e = ember.from_dlpack(a)
    a[1] = 7
    assert e.tolist() == [0., 7., 2., 3., 4.]
    del a
    gc.collect()
    assert ref() is not None and e.tolist()[1] == 7
    del e
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8'])
def test_dlpack_with_torch_both_ways(dtype):
    e = ember.ones((2, 3), dtype=getattr(ember, dtype))
    t = torch.from_dlpack(e)
    assert t.dtype == getattr(torch, dtype) and t.data_ptr() == e.data_ptr()
    t[0, 0] = 3
    assert e.tolist()[0][0] == 3
    del e
    gc.collect()
    assert t.tolist()[0] == [3, 1, 1]
    t2 = torch.zeros(3, 4, dtype=getattr(torch, dtype)).t()
    e2 = ember.from_dlpack(t2)
    assert e2.dtype == getattr(ember, dtype) and e2.stride() == t2.stride() and e2.data_ptr() == t2.data_ptr()
    e2.fill_(2)
    assert t2.tolist() == e2.tolist()
    del t2
    gc.collect()
    assert e2.tolist() == [[2] * 3] * 4


def test_legacy_capsules():
    c = torch.utils.dlpack.to_dlpack(torch.arange(3))
    e = ember.utils.dlpack.from_dlpack(c)
    assert e.tolist() == [0, 1, 2] and 'used_dltensor' in repr(c)
    raises_like(lambda: torch.utils.dlpack.from_dlpack(c), lambda: ember.utils.dlpack.from_dlpack(c))
    c2 = ember.utils.dlpack.to_dlpack(ember.arange(3))
    assert 'dltensor' in repr(c2)
    t = torch.utils.dlpack.from_dlpack(c2)
    assert t.tolist() == [0, 1, 2]
    raises_like(lambda: torch.utils.dlpack.from_dlpack(c2), lambda: ember.from_dlpack(c2))
    raises_like(lambda: torch.from_dlpack(1), lambda: ember.from_dlpack(1))
    b = ember.from_dlpack(ember.ones(2, dtype=ember.bool))  # DLPack 0.8's kDLBool, between Embers
    assert b.dtype == ember.bool and b.tolist() == [True, True]


def test_unconsumed_capsule_releases_memory():
    a = np.arange(3.)
    count = sys.getrefcount(a)
    e = ember.from_numpy(a)
    c = e.__dlpack__()
    del e
    gc.collect()
    assert sys.getrefcount(a) == count + 1  # held by the capsule
    del c
    gc.collect()
    assert sys.getrefcount(a) == count


def test_dlpack_protocol_errors_and_device():
    raises_like(lambda: torch.ones(2, requires_grad=True).__dlpack__(),
                lambda: ember.ones(2, requires_grad=True).__dlpack__())
    raises_like(lambda: torch.ones(2).__dlpack__(stream='a'), lambda: ember.ones(2).__dlpack__(stream='a'))
    assert ember.ones(2).__dlpack_device__() == torch.ones(2).__dlpack_device__() == (1, 0)
    assert ember.ones(2).__dlpack_device__()[0] is ember.utils.dlpack.DLDeviceType.kDLCPU
    e = ember.from_dlpack(ember.zeros(0, 3))
    assert e.shape == (0, 3)
    assert ember.from_dlpack(ember.tensor(4.5)).item() == 4.5


# ---- finfo / iinfo -----------------------------------------------------------------------------
@pytest.mark.parametrize('name', ['float32', 'float64', 'float16', 'bfloat16'])
def test_finfo_like_torch(name):
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for f in ('bits', 'eps', 'max', 'min', 'tiny', 'smallest_normal', 'resolution', 'dtype'):
        assert getattr(e, f) == getattr(t, f), f
    assert repr(e) == repr(t) and e == ember.finfo(getattr(ember, name))


@pytest.mark.parametrize('name', ['uint8', 'int8', 'int16', 'int32', 'int64'])
def test_iinfo_like_torch(name):
    e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    for f in ('bits', 'max', 'min', 'dtype'):
        assert getattr(e, f) == getattr(t, f), f
    assert repr(e) == repr(t)


def test_dtype_info_errors():
    assert ember.finfo() == ember.finfo(ember.float32)
    for f_t, f_e in ((lambda: torch.finfo(torch.int32), lambda: ember.finfo(ember.int32)),
                     (lambda: torch.iinfo(torch.float32), lambda: ember.iinfo(ember.float32)),
                     (lambda: torch.iinfo(torch.bool), lambda: ember.iinfo(ember.bool)),
                     (lambda: torch.finfo(1), lambda: ember.finfo(1)),
                     (lambda: torch.iinfo(), lambda: ember.iinfo())):
        raises_like(f_t, f_e)
    with pytest.raises(AttributeError):
        ember.finfo().eps = 1
