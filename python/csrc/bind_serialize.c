/* Bindings of the safetensors reader and writer (include/ember/serialize.h)
 * for ember.save / ember.load (python/ember/serialization.py):
 *   _C._safetensors_save(dest, names, tensors, metadata)
 *       dest: a path (str, written atomically) or a callable write(memoryview)
 *       (a file object's write: partial writes are continued)
 *   _C._safetensors_load(path, mmap) and _C._safetensors_load_bytes(buffer)
 *       -> (names list, tensors list, metadata dict) in file order.
 * and of the readers and writer of torch.save's files (zip container,
 * non-executing pickle parser, legacy framing):
 *   _C._zip_open(path or buffer) -> capsule; _C._zip_names(z);
 *   _C._zip_read(z, name) -> bytes; _C._zip_tensor(z, name, dtype, share)
 *   _C._zip_save(dest, [(name, bytes-like or Tensor: its whole storage)])
 *   _C._pickle_parse(buffer) -> ((nodes, root), end)
 *   _C._torch_legacy_parse(buffer) -> ((nodes, root), [(key, dtype, numel, offset)], object_at, object_len)
 *       nodes[i] = (kind, value, kids, sets, appends, state): em_pk_node.
 *   _C._storage_info(t) -> (address of the storage's first byte, nbytes)
 *   _C._storage_bytes(t) -> bytes of t's whole storage (CPU)
 *   _C._storage_as(t, dtype) -> 1-d tensor of dtype over t's whole storage (CPU, shared)
 * Malformed files raise ValueError, I/O failures RuntimeError. */
#include "emp.h"
#include "ember/pickle.h"
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

/* ---- zip archives ------------------------------------------------------ */

static void zip_capsule_free(PyObject *cap) { em_zip_close(PyCapsule_GetPointer(cap, "ember.zip")); }

static PyObject *zip_open(PyObject *m, PyObject *src)
{
    em_zip *z;
    if (PyUnicode_Check(src)) {
        PyObject *path;
        if (!PyUnicode_FSConverter(src, &path)) return NULL;
        Py_BEGIN_ALLOW_THREADS
        z = em_zip_open(PyBytes_AS_STRING(path));
        Py_END_ALLOW_THREADS
        Py_DECREF(path);
    } else {
        Py_buffer view;
        if (PyObject_GetBuffer(src, &view, PyBUF_SIMPLE) < 0) return NULL;
        z = em_zip_open_buffer(view.buf, (size_t)view.len);
        PyBuffer_Release(&view);
    }
    if (!z) return emp_raise();
    PyObject *cap = PyCapsule_New(z, "ember.zip", zip_capsule_free);
    if (!cap) em_zip_close(z);
    return cap;
}

static em_zip *zip_of(PyObject *cap) { return PyCapsule_GetPointer(cap, "ember.zip"); }

static PyObject *zip_names(PyObject *m, PyObject *cap)
{
    em_zip *z = zip_of(cap);
    if (!z) return NULL;
    PyObject *names = PyList_New(em_zip_count(z));
    for (int i = 0; names && i < em_zip_count(z); i++) {
        PyObject *s = PyUnicode_DecodeUTF8(em_zip_name(z, i), (Py_ssize_t)strlen(em_zip_name(z, i)), "surrogateescape");
        if (!s) Py_CLEAR(names);
        else PyList_SET_ITEM(names, i, s);
    }
    return names;
}

/* The index of entry `name`; -1 with KeyError. */
static int zip_entry(em_zip *z, PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    if (!s) return -1;
    int i = em_zip_find(z, s);
    if (i < 0) PyErr_SetObject(PyExc_KeyError, name);
    return i;
}

static PyObject *zip_read(PyObject *m, PyObject *args)
{
    PyObject *cap, *name;
    if (!PyArg_ParseTuple(args, "OU", &cap, &name)) return NULL;
    em_zip *z = zip_of(cap);
    int i = z ? zip_entry(z, name) : -1;
    if (i < 0) return NULL;
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)em_zip_entry_size(z, i));
    if (b && em_zip_read(z, i, PyBytes_AS_STRING(b))) {
        Py_DECREF(b);
        return emp_raise();
    }
    return b;
}

static PyObject *zip_tensor(PyObject *m, PyObject *args)
{
    PyObject *cap, *name, *dtype;
    int share;
    if (!PyArg_ParseTuple(args, "OUO!p", &cap, &name, &EmpDtype_Type, &dtype, &share)) return NULL;
    em_zip *z = zip_of(cap);
    int i = z ? zip_entry(z, name) : -1;
    if (i < 0) return NULL;
    em_tensor *t;
    Py_BEGIN_ALLOW_THREADS
    t = em_zip_tensor(z, i, ((EmpDtype *)dtype)->dtype, share);
    Py_END_ALLOW_THREADS
    return t ? emp_wrap(t) : emp_raise();
}

/* Writing to a path releases the GIL; a Python write callable needs it. */
static int zip_add(em_zip_writer *w, PyObject *item, bool nogil)
{
    PyObject *name, *data;
    if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "UO", &name, &data)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "ember.save: zip entries are (name, data) tuples");
        return -1;
    }
    const char *cname = PyUnicode_AsUTF8(name);
    if (!cname) return -1;
    if (emp_is_tensor(data)) {
        em_tensor *t = emp_t(data);
        if (em_device_of(t).type != EM_CPU)
            return PyErr_SetString(PyExc_RuntimeError, "ember.save: storages must be on the CPU"), -1;
        em_status st;
        if (nogil) {
            Py_BEGIN_ALLOW_THREADS
            st = em_zip_writer_add(w, cname, em_storage_data(t), em_storage_nbytes(t));
            Py_END_ALLOW_THREADS
        } else {
            st = em_zip_writer_add(w, cname, em_storage_data(t), em_storage_nbytes(t));
        }
        return st ? (emp_raise(), -1) : 0;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return -1;
    em_status st = em_zip_writer_add(w, cname, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return st ? (emp_raise(), -1) : 0;
}

static PyObject *zip_save(PyObject *m, PyObject *args)
{
    PyObject *dest, *entries;
    if (!PyArg_ParseTuple(args, "OO!", &dest, &PyList_Type, &entries)) return NULL;
    em_zip_writer *w;
    if (PyUnicode_Check(dest)) {
        PyObject *path;
        if (!PyUnicode_FSConverter(dest, &path)) return NULL;
        w = em_zip_writer_open(PyBytes_AS_STRING(path));
        Py_DECREF(path);
    } else {
        w = em_zip_writer_new(call_write, dest);
    }
    if (!w) return emp_raise();
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(entries); i++)
        if (zip_add(w, PyList_GET_ITEM(entries, i), PyUnicode_Check(dest))) {
            em_zip_writer_free(w);
            return NULL;
        }
    em_status st;
    if (PyUnicode_Check(dest)) {
        Py_BEGIN_ALLOW_THREADS
        st = em_zip_writer_finish(w);
        Py_END_ALLOW_THREADS
    } else {
        st = em_zip_writer_finish(w);
    }
    return st ? emp_raise() : Py_NewRef(Py_None);
}

static PyObject *storage_info(PyObject *m, PyObject *t)
{
    if (!emp_is_tensor(t)) return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    return Py_BuildValue("(Nn)", PyLong_FromVoidPtr(em_storage_data(emp_t(t))), (Py_ssize_t)em_storage_nbytes(emp_t(t)));
}

static PyObject *storage_bytes(PyObject *m, PyObject *t)
{
    if (!emp_is_tensor(t)) return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    if (em_device_of(emp_t(t)).type != EM_CPU) return PyErr_Format(PyExc_RuntimeError, "expected a CPU tensor");
    return PyBytes_FromStringAndSize(em_storage_data(emp_t(t)), (Py_ssize_t)em_storage_nbytes(emp_t(t)));
}

static void release_tensor(void *t) { em_release(t); }

static PyObject *storage_as(PyObject *m, PyObject *args)
{
    PyObject *t, *dtype;
    if (!PyArg_ParseTuple(args, "OO!", &t, &EmpDtype_Type, &dtype)) return NULL;
    if (!emp_is_tensor(t)) return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    em_tensor *x = emp_t(t);
    em_dtype dt = ((EmpDtype *)dtype)->dtype;
    if (em_device_of(x).type != EM_CPU) return PyErr_Format(PyExc_RuntimeError, "expected a CPU tensor");
    int64_t n = (int64_t)(em_storage_nbytes(x) / em_dtype_size(dt));
    char *data = em_storage_data(x);
    if (n && (uintptr_t)data % em_dtype_size(dt))
        return PyErr_Format(PyExc_RuntimeError, "storage not aligned for %s", em_dtype_name(dt));
    em_tensor *r = em_from_blob(data, 1, &n, NULL, dt, release_tensor, em_retain(x));
    if (!r) em_release(x);
    return r ? emp_wrap(r) : emp_raise();
}

/* ---- pickles ------------------------------------------------------------ */

static PyObject *index_list(const em_pk_list *l)
{
    PyObject *r = PyList_New(l->n);
    for (int i = 0; r && i < l->n; i++) PyList_SET_ITEM(r, i, PyLong_FromLong(l->v[i]));
    return r;
}

static PyObject *node_value(const em_pk_node *x)
{
    switch (x->kind) {
    case EM_PK_BOOL: return PyBool_FromLong((long)x->i);
    case EM_PK_INT: case EM_PK_CALL: return PyLong_FromLongLong(x->i);
    case EM_PK_FLOAT: return PyFloat_FromDouble(x->f);
    case EM_PK_STR: return PyUnicode_DecodeUTF8(x->str, (Py_ssize_t)x->len, "strict");
    case EM_PK_BYTES: case EM_PK_BYTEARRAY: case EM_PK_BIGINT: return PyBytes_FromStringAndSize(x->str, (Py_ssize_t)x->len);
    case EM_PK_GLOBAL: return Py_BuildValue("(ss)", x->str, x->str2);
    default: return Py_NewRef(Py_None);
    }
}

/* (nodes, root) of a parsed pickle. */
static PyObject *pickle_nodes(const em_pickle *p)
{
    PyObject *nodes = PyList_New(p->n);
    for (int i = 0; nodes && i < p->n; i++) {
        const em_pk_node *x = &p->nodes[i];
        PyObject *t = Py_BuildValue("(iNNNNi)", (int)x->kind, node_value(x), index_list(&x->kids), index_list(&x->sets),
                                    index_list(&x->appends), (int)x->state);
        if (!t) Py_CLEAR(nodes);
        else PyList_SET_ITEM(nodes, i, t);
    }
    return nodes ? Py_BuildValue("(Ni)", nodes, (int)p->root) : NULL;
}

static PyObject *pickle_parse(PyObject *m, PyObject *obj)
{
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return NULL;
    em_pickle *p = em_pickle_parse(view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    if (!p) return emp_raise();
    PyObject *tree = pickle_nodes(p), *r = tree ? Py_BuildValue("(Nn)", tree, (Py_ssize_t)p->end) : NULL;
    em_pickle_free(p);
    return r;
}

static PyObject *torch_legacy_parse(PyObject *m, PyObject *obj)
{
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return NULL;
    em_torch_legacy *t = em_torch_legacy_parse(view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    if (!t) return emp_raise();
    PyObject *storages = PyList_New(t->n), *r = NULL;
    for (int i = 0; storages && i < t->n; i++) {
        const em_legacy_storage *s = &t->storages[i];
        PyObject *x = Py_BuildValue("(sOLn)", s->key, emp_dtype_obj(s->dtype), (long long)s->numel, (Py_ssize_t)s->data_at);
        if (!x) Py_CLEAR(storages);
        else PyList_SET_ITEM(storages, i, x);
    }
    PyObject *tree = storages ? pickle_nodes(t->object) : NULL;
    if (tree) r = Py_BuildValue("(NNnn)", tree, storages, (Py_ssize_t)t->object_at, (Py_ssize_t)t->object->end);
    else Py_XDECREF(storages);
    em_torch_legacy_free(t);
    return r;
}

PyMethodDef emp_serialize_functions[] = {
    {"_safetensors_save", safetensors_save, METH_VARARGS, "Writes tensors to a safetensors file (ember.save)."},
    {"_safetensors_load", safetensors_load, METH_VARARGS, "Reads a safetensors file (ember.load)."},
    {"_safetensors_load_bytes", safetensors_load_bytes, METH_O, "Reads safetensors bytes (ember.load)."},
    {"_zip_open", zip_open, METH_O, "Opens a zip archive (a path or bytes) for reading."},
    {"_zip_names", zip_names, METH_O, "The entry names of an open zip archive."},
    {"_zip_read", zip_read, METH_VARARGS, "An entry of an open zip archive as bytes."},
    {"_zip_tensor", zip_tensor, METH_VARARGS, "An entry of an open zip archive as a 1-d tensor."},
    {"_zip_save", zip_save, METH_VARARGS, "Writes a zip archive of stored, 64-byte aligned entries."},
    {"_storage_info", storage_info, METH_O, "(address, nbytes) of a tensor's storage."},
    {"_storage_bytes", storage_bytes, METH_O, "The bytes of a CPU tensor's whole storage (a copy)."},
    {"_storage_as", storage_as, METH_VARARGS, "A 1-d tensor of a dtype over a CPU tensor's whole storage (shared)."},
    {"_pickle_parse", pickle_parse, METH_O, "Parses a pickle without running it (ember.load)."},
    {"_torch_legacy_parse", torch_legacy_parse, METH_O, "Parses a legacy torch.save file without running it."},
    {NULL},
};
