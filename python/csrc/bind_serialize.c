/* Bindings of the safetensors reader and writer (include/ember/serialize.h)
 * for ember.save / ember.load (python/ember/serialization.py):
 *   _C._safetensors_save(dest, names, tensors, metadata)
 *       dest: a path (str, written atomically) or a callable write(memoryview)
 *       (a file object's write: partial writes are continued)
 *   _C._safetensors_load(path, mmap) and _C._safetensors_load_bytes(buffer)
 *       -> (names list, tensors list, metadata dict) in file order.
 * Malformed files raise ValueError, I/O failures RuntimeError. */
#include "emp.h"
#include "ember/serialize.h"
#include <stdlib.h>

/* Sink for a Python write callable; the GIL is held. */
static int call_write(void *ctx, const void *data, size_t n)
{
    PyObject *write = ctx;
    size_t done = 0;
    while (done < n) {
        PyObject *mv = PyMemoryView_FromMemory((char *)data + done, (Py_ssize_t)(n - done), PyBUF_READ);
        if (!mv) return emp_park_exception();
        PyObject *r = PyObject_CallOneArg(write, mv), *et, *ev, *etb;
        /* the callable must not keep the view: it points into a tensor we may free */
        PyErr_Fetch(&et, &ev, &etb);
        PyObject *rel = PyObject_CallMethod(mv, "release", NULL);
        Py_DECREF(mv);
        if (et) {
            Py_XDECREF(rel);
            PyErr_Clear();
            PyErr_Restore(et, ev, etb);
        }
        if (!r || !rel) {
            Py_XDECREF(r), Py_XDECREF(rel);
            return emp_park_exception();
        }
        Py_DECREF(rel);
        Py_ssize_t w = r == Py_None ? (Py_ssize_t)(n - done) : PyLong_AsSsize_t(r);
        Py_DECREF(r);
        if (w < 0 && PyErr_Occurred()) return emp_park_exception();
        if (w <= 0) return em_fail(EM_ERR_RUNTIME, "ember.save: the file's write() made no progress");
        done += (size_t)w;
    }
    return 0;
}

/* Borrowed UTF-8 strings of a list of str (valid while the list lives). */
static const char **utf8_list(PyObject *list, const char *what)
{
    Py_ssize_t n = PyList_GET_SIZE(list);
    const char **out = malloc(sizeof(char *) * (n ? n : 1));
    if (!out) return (const char **)PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PyList_GET_ITEM(list, i);
        out[i] = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
        if (!out[i]) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "ember.save: %s must be str, not %.100s", what, Py_TYPE(s)->tp_name);
            free(out);
            return NULL;
        }
    }
    return out;
}

static PyObject *safetensors_save(PyObject *m, PyObject *args)
{
    PyObject *dest, *names, *tensors, *meta;
    if (!PyArg_ParseTuple(args, "OO!O!O!", &dest, &PyList_Type, &names, &PyList_Type, &tensors, &PyDict_Type, &meta))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(names);
    if (PyList_GET_SIZE(tensors) != n || n > INT32_MAX) return PyErr_Format(PyExc_ValueError, "ember.save: bad tensor list");
    PyObject *keys = PyDict_Keys(meta), *values = PyDict_Values(meta), *result = NULL;
    const char **cnames = NULL, **ckeys = NULL, **cvalues = NULL;
    const em_tensor **ts = malloc(sizeof *ts * (n ? n : 1));
    if (!keys || !values || !ts) goto done;
    if (!(cnames = utf8_list(names, "tensor names")) || !(ckeys = utf8_list(keys, "metadata keys")) ||
        !(cvalues = utf8_list(values, "metadata values")))
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(tensors, i);
        if (!emp_is_tensor(t)) {
            PyErr_Format(PyExc_TypeError, "ember.save: expected a Tensor, got %.100s", Py_TYPE(t)->tp_name);
            goto done;
        }
        ts[i] = emp_t(t);
    }
    int nmeta = (int)PyList_GET_SIZE(keys);
    em_status st;
    if (PyUnicode_Check(dest)) {
        const char *path = PyUnicode_AsUTF8(dest);
        if (!path) goto done;
        Py_BEGIN_ALLOW_THREADS
        st = em_safetensors_save(path, (int)n, cnames, ts, nmeta, ckeys, cvalues);
        Py_END_ALLOW_THREADS
    } else {
        st = em_safetensors_write(call_write, dest, (int)n, cnames, ts, nmeta, ckeys, cvalues);
    }
    result = st == EM_OK ? Py_NewRef(Py_None) : emp_raise();
done:
    free(ts), free(cnames), free(ckeys), free(cvalues);
    Py_XDECREF(keys);
    Py_XDECREF(values);
    return result;
}

/* (names, tensors, metadata) from a loaded file, which it frees. */
static PyObject *contents(em_safetensors *st)
{
    if (!st) return emp_raise();
    PyObject *names = PyList_New(st->n), *tensors = PyList_New(st->n), *meta = PyDict_New(), *r = NULL;
    if (!names || !tensors || !meta) goto done;
    for (int i = 0; i < st->n; i++) {
        PyObject *name = PyUnicode_FromString(st->names[i]);
        PyObject *t = emp_wrap(em_retain(st->tensors[i]));
        if (!name || !t) {
            Py_XDECREF(name), Py_XDECREF(t);
            goto done;
        }
        PyList_SET_ITEM(names, i, name);
        PyList_SET_ITEM(tensors, i, t);
    }
    for (int i = 0; i < st->nmeta; i++) {
        PyObject *v = PyUnicode_FromString(st->meta_values[i]);
        int rc = v ? PyDict_SetItemString(meta, st->meta_keys[i], v) : -1;
        Py_XDECREF(v);
        if (rc) goto done;
    }
    r = PyTuple_Pack(3, names, tensors, meta);
done:
    Py_XDECREF(names), Py_XDECREF(tensors), Py_XDECREF(meta);
    em_safetensors_free(st);
    return r;
}

static PyObject *safetensors_load(PyObject *m, PyObject *args)
{
    PyObject *path;
    int use_mmap;
    if (!PyArg_ParseTuple(args, "O&p", PyUnicode_FSConverter, &path, &use_mmap)) return NULL;
    em_safetensors *st;
    Py_BEGIN_ALLOW_THREADS
    st = em_safetensors_load(PyBytes_AS_STRING(path), use_mmap);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    return contents(st);
}

static PyObject *safetensors_load_bytes(PyObject *m, PyObject *obj)
{
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return NULL;
    em_safetensors *st = em_safetensors_load_buffer(view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return contents(st);
}

PyMethodDef emp_serialize_functions[] = {
    {"_safetensors_save", safetensors_save, METH_VARARGS, "Writes tensors to a safetensors file (ember.save)."},
    {"_safetensors_load", safetensors_load, METH_VARARGS, "Reads a safetensors file (ember.load)."},
    {"_safetensors_load_bytes", safetensors_load_bytes, METH_O, "Reads safetensors bytes (ember.load)."},
    {NULL},
};
