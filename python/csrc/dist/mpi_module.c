/* ember._mpi: the MPI backend (src/dist/) seen from Python. A separate
 * extension module so that only ember.distributed with backend 'mpi' loads
 * libmpi. It takes buffer addresses: the caller keeps the tensors alive and
 * contiguous until the returned Work is complete. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>
#include "../../../src/dist/mpi_backend.h"

typedef struct {
    PyObject_HEAD
    dm_work *w;
} Work;

static void work_dealloc(Work *self)
{
    if (self->w)
        dm_work_release(self->w);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* wait(timeout) -> True when complete, False when the timeout passed first;
 * RuntimeError when the operation failed. timeout < 0 waits forever. */
static PyObject *work_wait(Work *self, PyObject *arg)
{
    double seconds = PyFloat_AsDouble(arg);
    if (seconds == -1.0 && PyErr_Occurred())
        return NULL;
    dm_state s;
    Py_BEGIN_ALLOW_THREADS
    s = dm_wait(self->w, seconds);
    Py_END_ALLOW_THREADS
    if (s == DM_FAILED)
        return PyErr_Format(PyExc_RuntimeError, "%s", self->w->error);
    return PyBool_FromLong(s == DM_DONE);
}

static PyObject *work_result(Work *self, void *c)
{
    return PyLong_FromLong(self->w->result);
}

static PyMethodDef work_methods[] = {
    {"wait", (PyCFunction)work_wait, METH_O, "wait(timeout_seconds) -> completed"},
    {NULL},
};
static PyGetSetDef work_getset[] = {
    {"result", (getter)work_result, NULL, "recv: the source rank; comm_create: the communicator index", NULL},
    {NULL},
};
static PyTypeObject WorkType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._mpi.Work",
    .tp_basicsize = sizeof(Work),
    .tp_dealloc = (destructor)work_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One queued MPI operation.",
    .tp_methods = work_methods,
    .tp_getset = work_getset,
};

static PyObject *mod_init(PyObject *m, PyObject *unused)
{
    char err[256];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = dm_init(err, sizeof err);
    Py_END_ALLOW_THREADS
    if (rc)
        return PyErr_Format(PyExc_RuntimeError, "%s", err);
    return Py_BuildValue("ii", dm_rank(), dm_size());
}

/* submit(kind, comm, send, recv, count, dtype, op, peer, tag, ints, inline_timeout=None) -> Work.
 * With inline_timeout (seconds, < 0: none) a collective runs at once on this
 * thread when it can (dm_try_inline): the returned Work is then complete. */
static PyObject *mod_submit(PyObject *m, PyObject *args)
{
    int kind, comm, op, peer, tag;
    unsigned long long send, recv;
    long long count;
    const char *dtype;
    PyObject *ints, *inline_timeout = Py_None;
    if (!PyArg_ParseTuple(args, "iiKKLsiiiO|O", &kind, &comm, &send, &recv, &count, &dtype, &op, &peer, &tag, &ints,
                          &inline_timeout))
        return NULL;
    double seconds = inline_timeout == Py_None ? 0 : PyFloat_AsDouble(inline_timeout);
    if (seconds == -1.0 && PyErr_Occurred())
        return NULL;
    if (kind < 0 || kind >= DM_FINALIZE || op < 0 || op >= DM_NUM_OPS)
        return PyErr_Format(PyExc_ValueError, "bad operation code %d / %d", kind, op);
    int di = *dtype ? dm_dtype_index(dtype) : -1;
    if (*dtype && di < 0)
        return PyErr_Format(PyExc_TypeError, "the MPI backend does not support dtype %s", dtype);
    dm_work *w = dm_work_new((dm_kind)kind);
    if (!w)
        return PyErr_NoMemory();
    w->comm = comm, w->send = (void *)(uintptr_t)send, w->recv = (void *)(uintptr_t)recv;
    w->count = count, w->dtype = di, w->op = (dm_op)op, w->peer = peer, w->tag = tag;
    if (ints != Py_None) {
        Py_ssize_t n = PySequence_Size(ints);
        if (n < 0 || !(w->ints = malloc(sizeof(int) * (size_t)(n ? n : 1))))
            goto fail;
        w->nints = (int)n;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *o = PySequence_GetItem(ints, i);
            long v = o ? PyLong_AsLong(o) : -1;
            Py_XDECREF(o);
            if (v == -1 && PyErr_Occurred())
                goto fail;
            if (v < 0 || v > 0x7fffffff) {
                PyErr_SetString(PyExc_ValueError, "counts and ranks must be in [0, 2^31)");
                goto fail;
            }
            w->ints[i] = (int)v;
        }
    }
    Work *self = PyObject_New(Work, &WorkType);
    if (!self)
        goto fail;
    self->w = w;
    int ran = 0;
    if (inline_timeout != Py_None) {
        Py_BEGIN_ALLOW_THREADS
        ran = dm_try_inline(w, seconds);
        Py_END_ALLOW_THREADS
    }
    char err[128];
    if (!ran && dm_submit(w, err, sizeof err)) {
        Py_DECREF(self);
        return PyErr_Format(PyExc_RuntimeError, "%s", err);
    }
    return (PyObject *)self;
fail:
    if (!PyErr_Occurred())
        PyErr_NoMemory();
    dm_work_release(w);
    return NULL;
}

/* The dtype of a buffer-protocol format, as ember's tensors export them
 * (bfloat16 and complex tensors export none: they take the general path). */
static const char *format_dtype(const char *format)
{
    static const char *const table[][2] = {{"f", "float32"}, {"d", "float64"}, {"e", "float16"}, {"q", "int64"},
                                           {"i", "int32"},   {"h", "int16"},   {"b", "int8"},    {"B", "uint8"},
                                           {"?", "bool"}};
    for (size_t i = 0; format && i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(format, table[i][0]))
            return table[i][1];
    return NULL;
}

enum { OP_AVG = DM_NUM_OPS }; /* ember.distributed.ReduceOp's code after BXOR: a SUM, divided by the caller */

/* blocking(kind, comm, tensor, op, peer, timeout) -> 1 done, 0 not taken,
 * -1 timed out: the fast path of a blocking in-place collective (all_reduce,
 * broadcast) on a contiguous CPU tensor, whose buffer (the buffer protocol)
 * gives its address, size, dtype and contiguity in one call: no Work, run at
 * once on this thread when the communication thread is idle (dm_try_inline),
 * else queued and waited for up to `timeout` seconds. 0 (the caller takes
 * the general path, which explains) for anything else: a tensor that is not
 * contiguous, requires grad or has no buffer format, an op the dtype does
 * not take. RuntimeError when MPI failed. A small all-reduce takes a few
 * microseconds in MPI: this is the whole per-call cost, so keep it lean. */
static PyObject *mod_blocking(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6)
        return PyErr_Format(PyExc_TypeError, "blocking() takes 6 arguments (%zd given)", nargs);
    long kind = PyLong_AsLong(args[0]), comm = PyLong_AsLong(args[1]), op = PyLong_AsLong(args[3]);
    long peer = PyLong_AsLong(args[4]);
    double seconds = PyFloat_AsDouble(args[5]);
    if (PyErr_Occurred())
        return NULL;
    if (kind != DM_ALLREDUCE && kind != DM_BROADCAST)
        return PyErr_Format(PyExc_ValueError, "blocking(): operation %ld is not an in-place collective", kind);
    Py_buffer view;
    if (!PyObject_CheckBuffer(args[2]) || PyObject_GetBuffer(args[2], &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)) {
        PyErr_Clear();
        return PyLong_FromLong(0);
    }
    const char *dtype = format_dtype(view.format);
    int floating = dtype && strchr("fde", view.format[0]) != NULL, is_bool = dtype && view.format[0] == '?';
    if (op == OP_AVG)
        op = is_bool ? -1 : DM_SUM;
    else if (floating && (op == DM_BAND || op == DM_BOR || op == DM_BXOR))
        op = -1;
    int di = dtype ? dm_dtype_index(dtype) : -1;
    if (di < 0 || op < 0 || op >= DM_NUM_OPS) {
        PyBuffer_Release(&view);
        return PyLong_FromLong(0);
    }
    dm_work *w = dm_work_new((dm_kind)kind);
    if (!w) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    w->comm = (int)comm, w->recv = view.buf, w->count = view.len / view.itemsize, w->dtype = di;
    w->op = (dm_op)op, w->peer = (int)peer;
    dm_state s;
    char err[128];
    int queued_ok = 1;
    Py_BEGIN_ALLOW_THREADS
    if (dm_try_inline(w, seconds))
        s = w->state;
    else if (!(queued_ok = !dm_submit(w, err, sizeof err)))
        s = DM_FAILED;
    else
        s = dm_wait(w, seconds);
    Py_END_ALLOW_THREADS
    if (s != DM_QUEUED)  /* timed out: the queue may still write there, keep the tensor alive (the job is ending) */
        PyBuffer_Release(&view);
    PyObject *r = NULL;
    if (!queued_ok)
        PyErr_Format(PyExc_RuntimeError, "%s", err);
    else if (s == DM_FAILED)
        PyErr_Format(PyExc_RuntimeError, "%s", w->error);
    else
        r = PyLong_FromLong(s == DM_DONE ? 1 : -1);
    dm_work_release(w);
    return r;
}

static PyObject *mod_finalize(PyObject *m, PyObject *unused)
{
    Py_BEGIN_ALLOW_THREADS
    dm_finalize();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *mod_abort(PyObject *m, PyObject *arg)
{
    int code = (int)PyLong_AsLong(arg);
    if (code == -1 && PyErr_Occurred())
        return NULL;
    fflush(stdout);
    fflush(stderr);
    dm_abort(code);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"init", mod_init, METH_NOARGS, "init() -> (rank, world_size): starts MPI (once per process)"},
    {"submit", mod_submit, METH_VARARGS,
     "submit(kind, comm, send, recv, count, dtype, op, peer, tag, ints, inline_timeout=None) -> Work"},
    {"blocking", (PyCFunction)(void (*)(void))mod_blocking, METH_FASTCALL,
     "blocking(kind, comm, tensor, op, peer, timeout) -> 1 done, 0 not taken, -1 timed out"},
    {"finalize", mod_finalize, METH_NOARGS, "finalize(): MPI_Finalize after the queued work"},
    {"abort", mod_abort, METH_O, "abort(code): MPI_Abort, ending every process of the job"},
    {NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ember._mpi", NULL, -1, methods};

PyMODINIT_FUNC PyInit__mpi(void)
{
    if (PyType_Ready(&WorkType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    static const char *const kinds[] = {"ALLREDUCE", "BROADCAST", "REDUCE", "ALLGATHER", "GATHER", "SCATTER",
                                        "REDUCE_SCATTER", "ALLTOALL", "ALLTOALLV", "SEND", "RECV", "BARRIER",
                                        "COMM_CREATE", "COMM_FREE"};
    for (int i = 0; i < (int)(sizeof kinds / sizeof kinds[0]); i++)
        if (PyModule_AddIntConstant(m, kinds[i], i) < 0)
            goto fail;
    Py_INCREF(&WorkType);
    if (PyModule_AddObject(m, "Work", (PyObject *)&WorkType) < 0) {
        Py_DECREF(&WorkType);
        goto fail;
    }
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
