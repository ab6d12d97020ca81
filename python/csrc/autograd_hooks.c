/* ember._C's side of anomaly mode and saved-tensor hooks
 * (include/ember/autograd_hooks.h): the Python callables behind the C hooks.
 *   _set_anomaly_enabled(enabled, check_nan) / _is_anomaly_enabled() /
 *   _is_anomaly_check_nan_enabled()
 *   _set_anomaly_callbacks(record, report): record() -> any object, kept on
 *     each node made in anomaly mode; report(node_name, record) when the
 *     node's backward fails.
 *   _set_saved_tensors_hooks(pack, unpack) / _reset_saved_tensors_hooks():
 *     this thread's hooks (the Python layer keeps the stack of them). */
#include "emp_autograd.h"

/* ---- anomaly mode ------------------------------------------------------------ */
static PyObject *anomaly_record_fn, *anomaly_report_fn; /* strong */

static void *anomaly_record(void)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *r = anomaly_record_fn ? PyObject_CallNoArgs(anomaly_record_fn) : NULL;
    if (!r) PyErr_Clear(); /* a node without a record is only a poorer report */
    PyGILState_Release(gil);
    return r;
}

static void anomaly_report(const char *name, void *record)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *r = anomaly_report_fn ? PyObject_CallFunction(anomaly_report_fn, "sO", name,
                                                            record ? (PyObject *)record : Py_None) : NULL;
    if (!r && PyErr_Occurred()) PyErr_WriteUnraisable(anomaly_report_fn);
    Py_XDECREF(r);
    PyGILState_Release(gil);
}

static void anomaly_free(void *record)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF((PyObject *)record);
    PyGILState_Release(gil);
}

static PyObject *set_anomaly_enabled(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_set_anomaly_enabled(enabled, check_nan)");
    int on = PyObject_IsTrue(args[0]), nan = PyObject_IsTrue(args[1]);
    if (on < 0 || nan < 0) return NULL;
    em_set_anomaly_mode(on, nan);
    Py_RETURN_NONE;
}

static PyObject *is_anomaly_enabled(PyObject *m, PyObject *unused) { return PyBool_FromLong(em_is_anomaly_enabled()); }

static PyObject *is_anomaly_check_nan_enabled(PyObject *m, PyObject *unused)
{
    return PyBool_FromLong(em_is_anomaly_check_nan_enabled());
}

static PyObject *set_anomaly_callbacks(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1]))
        return PyErr_Format(PyExc_TypeError, "_set_anomaly_callbacks(record, report) takes two callables");
    Py_XSETREF(anomaly_record_fn, Py_NewRef(args[0]));
    Py_XSETREF(anomaly_report_fn, Py_NewRef(args[1]));
    em_set_anomaly_hooks(&(em_anomaly_hooks){.record = anomaly_record, .report = anomaly_report,
                                             .free = anomaly_free});
    Py_RETURN_NONE;
}

/* ---- saved-tensor hooks ---------------------------------------------------- */
/* An exception a hook raised reaches the caller as PyTorch reports it: a
 * RuntimeError "ValueError: message". */
static void fail_from_hook(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    const char *msg = text ? PyUnicode_AsUTF8(text) : NULL;
    PyErr_Clear();
    em_fail(EM_ERR_RUNTIME, "%s: %s", type ? ((PyTypeObject *)type)->tp_name : "Exception", msg ? msg : "");
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

/* The hooks' ctx is a (pack, unpack) tuple; a packed handle is (unpack, packed). */
static void *saved_pack(const em_tensor *t, void *ctx)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *pack = PyTuple_GET_ITEM((PyObject *)ctx, 0), *unpack = PyTuple_GET_ITEM((PyObject *)ctx, 1);
    PyObject *x = emp_wrap(em_retain((em_tensor *)t));
    PyObject *packed = x ? PyObject_CallOneArg(pack, x) : NULL;
    PyObject *handle = packed ? PyTuple_Pack(2, unpack, packed) : NULL;
    if (!handle) fail_from_hook();
    Py_XDECREF(packed);
    Py_XDECREF(x);
    PyGILState_Release(gil);
    return handle;
}

static em_tensor *saved_unpack(void *handle)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    em_tensor *r = NULL;
    PyObject *unpack_hook = PyTuple_GET_ITEM((PyObject *)handle, 0), *packed = PyTuple_GET_ITEM((PyObject *)handle, 1);
    PyObject *res = PyObject_CallOneArg(unpack_hook, packed);
    if (!res)
        fail_from_hook();
    else if (!emp_is_tensor(res))
        PyErr_Format(PyExc_TypeError, "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                     "type %s", Py_TYPE(res)->tp_name);
    else if (res)
        r = em_retain(emp_t(res));
    if (PyErr_Occurred()) emp_park_exception();
    Py_XDECREF(res);
    PyGILState_Release(gil);
    return r;
}

static void saved_free(void *handle) { anomaly_free(handle); /* a DECREF under the GIL */ }

/* The ctx of this thread's hooks is owned through the C hooks themselves:
 * replacing them releases the previous pair. */
static void replace_saved_hooks(const em_saved_hooks *h)
{
    em_saved_hooks prev;
    em_set_saved_tensors_hooks(h, &prev);
    Py_XDECREF((PyObject *)prev.ctx);
}

static PyObject *set_saved_tensors_hooks(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1]))
        return PyErr_Format(PyExc_TypeError, "_set_saved_tensors_hooks(pack_hook, unpack_hook) takes two callables");
    PyObject *pair = PyTuple_Pack(2, args[0], args[1]);
    if (!pair) return NULL;
    replace_saved_hooks(&(em_saved_hooks){.pack = saved_pack, .unpack = saved_unpack, .free = saved_free,
                                          .ctx = pair});
    Py_RETURN_NONE;
}

static PyObject *reset_saved_tensors_hooks(PyObject *m, PyObject *unused)
{
    replace_saved_hooks(NULL);
    Py_RETURN_NONE;
}

#define FASTCALL(name, fn) {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, NULL}
static PyMethodDef functions[] = {
    FASTCALL("_set_anomaly_enabled", set_anomaly_enabled),
    {"_is_anomaly_enabled", is_anomaly_enabled, METH_NOARGS, NULL},
    {"_is_anomaly_check_nan_enabled", is_anomaly_check_nan_enabled, METH_NOARGS, NULL},
    FASTCALL("_set_anomaly_callbacks", set_anomaly_callbacks),
    FASTCALL("_set_saved_tensors_hooks", set_saved_tensors_hooks),
    {"_reset_saved_tensors_hooks", reset_saved_tensors_hooks, METH_NOARGS, NULL},
    {NULL},
};

int emp_autograd_hooks_init(PyObject *m) { return PyModule_AddFunctions(m, functions); }
