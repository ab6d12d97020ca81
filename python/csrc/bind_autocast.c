/* ember._C's autocast state (torch.is_autocast_cpu_enabled & co.): the
 * per-thread flags of include/ember/autocast.h; ember.amp.autocast is the
 * context manager built on them. */
#include "emp.h"

static em_device_type device_type_of(PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    if (!s) return EM_DEVICE_TYPE_COUNT;
    if (!strcmp(s, "cpu")) return EM_CPU;
    if (!strcmp(s, "cuda")) return EM_CUDA;
    PyErr_Format(PyExc_RuntimeError, "User specified an unsupported autocast device_type '%s'", s);
    return EM_DEVICE_TYPE_COUNT;
}

static PyObject *set_enabled(em_device_type dev, PyObject *flag)
{
    if (!PyBool_Check(flag)) return PyErr_Format(PyExc_TypeError, "enabled must be a bool (got %s)", Py_TYPE(flag)->tp_name);
    int on = flag == Py_True;
    if (em_autocast_set_enabled(dev, on)) return emp_raise();
    Py_RETURN_NONE;
}

static PyObject *set_cpu_enabled(PyObject *m, PyObject *flag) { return set_enabled(EM_CPU, flag); }
static PyObject *set_gpu_enabled(PyObject *m, PyObject *flag) { return set_enabled(EM_CUDA, flag); }
static PyObject *cpu_enabled(PyObject *m, PyObject *unused) { return PyBool_FromLong(em_autocast_is_enabled(EM_CPU)); }
static PyObject *gpu_enabled(PyObject *m, PyObject *unused) { return PyBool_FromLong(em_autocast_is_enabled(EM_CUDA)); }

static PyObject *set_dtype(em_device_type dev, PyObject *d)
{
    if (Py_TYPE(d) != &EmpDtype_Type)
        return PyErr_Format(PyExc_TypeError, "expected an ember.dtype, not %s", Py_TYPE(d)->tp_name);
    if (em_autocast_set_dtype(dev, ((EmpDtype *)d)->dtype)) return emp_raise();
    Py_RETURN_NONE;
}

static PyObject *set_cpu_dtype(PyObject *m, PyObject *d) { return set_dtype(EM_CPU, d); }
static PyObject *set_gpu_dtype(PyObject *m, PyObject *d) { return set_dtype(EM_CUDA, d); }
static PyObject *cpu_dtype(PyObject *m, PyObject *unused) { return Py_NewRef(emp_dtype_obj(em_autocast_get_dtype(EM_CPU))); }
static PyObject *gpu_dtype(PyObject *m, PyObject *unused) { return Py_NewRef(emp_dtype_obj(em_autocast_get_dtype(EM_CUDA))); }

static PyObject *set_cache_enabled(PyObject *m, PyObject *flag)
{
    int on = PyObject_IsTrue(flag);
    if (on < 0) return NULL;
    em_autocast_set_cache_enabled(on);
    Py_RETURN_NONE;
}

static PyObject *cache_enabled(PyObject *m, PyObject *unused) { return PyBool_FromLong(em_autocast_is_cache_enabled()); }

static PyObject *clear_cache(PyObject *m, PyObject *unused)
{
    em_autocast_clear_cache();
    Py_RETURN_NONE;
}

static PyObject *increment_nesting(PyObject *m, PyObject *unused) { return PyLong_FromLong(em_autocast_increment_nesting()); }
static PyObject *decrement_nesting(PyObject *m, PyObject *unused) { return PyLong_FromLong(em_autocast_decrement_nesting()); }

/* _is_autocast_available(device_type): whether autocast can run there. */
static PyObject *is_available(PyObject *m, PyObject *name)
{
    em_device_type dev = device_type_of(name);
    if (dev == EM_DEVICE_TYPE_COUNT) return NULL;
    return PyBool_FromLong(dev == EM_CPU);
}

PyMethodDef emp_autocast_functions[] = {
    {"set_autocast_cpu_enabled", set_cpu_enabled, METH_O, "Turns CPU autocast on or off for this thread."},
    {"is_autocast_cpu_enabled", cpu_enabled, METH_NOARGS, "Whether CPU autocast is on in this thread."},
    {"set_autocast_enabled", set_gpu_enabled, METH_O, "Turns CUDA autocast on or off (needs a CUDA device)."},
    {"is_autocast_enabled", gpu_enabled, METH_NOARGS, "Whether CUDA autocast is on in this thread."},
    {"set_autocast_cpu_dtype", set_cpu_dtype, METH_O, "Sets CPU autocast's dtype (bfloat16)."},
    {"get_autocast_cpu_dtype", cpu_dtype, METH_NOARGS, "CPU autocast's dtype."},
    {"set_autocast_gpu_dtype", set_gpu_dtype, METH_O, "Sets CUDA autocast's dtype."},
    {"get_autocast_gpu_dtype", gpu_dtype, METH_NOARGS, "CUDA autocast's dtype."},
    {"set_autocast_cache_enabled", set_cache_enabled, METH_O, "Whether autocast caches weight casts."},
    {"is_autocast_cache_enabled", cache_enabled, METH_NOARGS, "Whether autocast caches weight casts."},
    {"clear_autocast_cache", clear_cache, METH_NOARGS, "Drops this thread's cached weight casts."},
    {"autocast_increment_nesting", increment_nesting, METH_NOARGS, "Enters an autocast region; the new depth."},
    {"autocast_decrement_nesting", decrement_nesting, METH_NOARGS, "Leaves an autocast region; the new depth."},
    {"_is_autocast_available", is_available, METH_O, "Whether autocast can run on a device type."},
    {NULL},
};
