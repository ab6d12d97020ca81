/* DLPack exchange: tensors to "dltensor" capsules and capsules to tensors,
 * zero-copy both ways, with the spec's ownership rules (dlpack.h).
 *
 * Both deleters run with the GIL held: NumPy's DLPack deleter (1.24) drops a
 * reference to its array without taking the GIL itself, and an exported
 * tensor's last reference may free autograd hooks that hold Python objects.
 * Either may run on whatever thread frees the last tensor. */
#include "emp.h"
#include "dlpack.h"

static const DLDataType dl_types[EM_DTYPE_COUNT] = {
    [EM_U8] = {kDLUInt, 8, 1},    [EM_I8] = {kDLInt, 8, 1},     [EM_I16] = {kDLInt, 16, 1},
    [EM_I32] = {kDLInt, 32, 1},   [EM_I64] = {kDLInt, 64, 1},   [EM_F16] = {kDLFloat, 16, 1},
    [EM_F32] = {kDLFloat, 32, 1}, [EM_F64] = {kDLFloat, 64, 1}, [EM_BOOL] = {kDLBool, 8, 1},
    [EM_BF16] = {kDLBfloat, 16, 1}, [EM_C32] = {kDLComplex, 32, 1}, [EM_C64] = {kDLComplex, 64, 1},
    [EM_C128] = {kDLComplex, 128, 1},
};

static const char invalid_capsule[] = "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                                      "consumed only once, so you might have already constructed a tensor from it once.";

/* ---- export --------------------------------------------------------------------- */
typedef struct {
    DLManagedTensor managed;
    em_tensor *t; /* owned: keeps the storage alive until the consumer calls the deleter */
    int64_t shape[EM_MAX_DIMS], strides[EM_MAX_DIMS];
} Export;

static void export_deleter(DLManagedTensor *m)
{
    PyGILState_STATE g = PyGILState_Ensure();
    Export *e = m->manager_ctx;
    em_release(e->t);
    PyMem_RawFree(e);
    PyGILState_Release(g);
}

/* An unconsumed capsule frees its tensor; a consumed one ("used_dltensor")
 * belongs to its consumer. */
static void capsule_destructor(PyObject *capsule)
{
    if (!PyCapsule_IsValid(capsule, "dltensor")) return;
    DLManagedTensor *m = PyCapsule_GetPointer(capsule, "dltensor");
    m->deleter(m);
}

static PyObject *to_dlpack(PyObject *module, PyObject *obj)
{
    if (!emp_is_tensor(obj)) return PyErr_Format(PyExc_RuntimeError, "data must be a Tensor");
    if (em_device_of(emp_t(obj)).type == EM_META) return PyErr_Format(PyExc_RuntimeError, "Cannot pack tensors on meta");
    if (em_is_conj(emp_t(obj)) || em_is_neg(emp_t(obj))) /* (a consumer would read the storage, not the values) */
        return PyErr_Format(PyExc_RuntimeError, "Can't export tensors with the %s bit set. Use tensor.%s() first.",
                            em_is_conj(emp_t(obj)) ? "conjugate" : "negative",
                            em_is_conj(emp_t(obj)) ? "resolve_conj" : "resolve_neg");
    em_tensor *t = em_detach(emp_t(obj)); /* the same memory, without the autograd graph */
    if (!t) return emp_raise();
    Export *e = PyMem_RawCalloc(1, sizeof *e);
    if (!e) {
        em_release(t);
        return PyErr_NoMemory();
    }
    int nd = em_ndim(t);
    for (int i = 0; i < nd; i++) e->shape[i] = em_sizes(t)[i], e->strides[i] = em_strides(t)[i];
    em_device dev = em_device_of(t);
    e->t = t;
    e->managed = (DLManagedTensor){
        .dl_tensor = {.data = em_data_ptr(t),
                      .device = {dev.type == EM_CUDA ? kDLCUDA : kDLCPU, dev.index},
                      .ndim = nd,
                      .dtype = dl_types[em_dtype_of(t)],
                      .shape = e->shape,
                      .strides = e->strides,
                      .byte_offset = 0},
        .manager_ctx = e,
        .deleter = export_deleter,
    };
    PyObject *capsule = PyCapsule_New(&e->managed, "dltensor", capsule_destructor);
    if (!capsule) export_deleter(&e->managed);
    return capsule;
}

/* ---- import --------------------------------------------------------------------- */
static void call_producer_deleter(void *ctx)
{
    DLManagedTensor *m = ctx;
    if (!m->deleter) return;
    PyGILState_STATE g = PyGILState_Ensure();
    m->deleter(m);
    PyGILState_Release(g);
}

em_tensor *emp_tensor_from_dlpack(PyObject *capsule)
{
    DLManagedTensor *m = PyCapsule_IsValid(capsule, "dltensor") ? PyCapsule_GetPointer(capsule, "dltensor") : NULL;
    if (!m) return PyErr_Format(PyExc_RuntimeError, invalid_capsule), NULL;
    const DLTensor *d = &m->dl_tensor;
    em_dtype dt = EM_DTYPE_NONE;
    for (int i = 0; i < EM_DTYPE_COUNT; i++)
        if (dl_types[i].code == d->dtype.code && dl_types[i].bits == d->dtype.bits && d->dtype.lanes == 1) dt = i;
    if (dt == EM_DTYPE_NONE)
        return PyErr_Format(PyExc_RuntimeError, "Unsupported dtype in DLTensor (code %d, %d bits, %d lanes).",
                            d->dtype.code, d->dtype.bits, d->dtype.lanes),
               NULL;
    if (d->device.device_type != kDLCPU)
        return PyErr_Format(PyExc_RuntimeError,
                            "from_dlpack: DLPack device type %d is not supported (Ember imports CPU memory only)",
                            (int)d->device.device_type),
               NULL;
    if (d->ndim < 0 || d->ndim > EM_MAX_DIMS)
        return PyErr_Format(PyExc_RuntimeError, "from_dlpack: %d dims (at most %d are supported)", d->ndim,
                            EM_MAX_DIMS),
               NULL;
    em_tensor *t = em_from_blob((char *)d->data + d->byte_offset, d->ndim, d->shape, d->strides, dt,
                                call_producer_deleter, m);
    if (!t) return emp_raise(), NULL; /* not consumed: the capsule still owns m */
    PyCapsule_SetName(capsule, "used_dltensor"); /* cannot fail: the capsule was checked valid */
    return t;
}

static PyObject *from_dlpack(PyObject *module, PyObject *capsule)
{
    em_tensor *t = emp_tensor_from_dlpack(capsule);
    return t ? emp_wrap(t) : NULL;
}

PyMethodDef emp_dlpack_functions[] = {
    {"_to_dlpack", to_dlpack, METH_O, "A DLPack capsule sharing the tensor's memory."},
    {"_from_dlpack", from_dlpack, METH_O, "A tensor sharing the memory of a DLPack capsule (consumes it)."},
    {NULL},
};
