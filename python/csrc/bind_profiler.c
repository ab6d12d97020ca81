/* ember._C's profiler functions (ember.profiler is built on them): start,
 * stop, user ranges, the recorded events as tuples, and the Python stack
 * provider used with with_stack=True. */
#include "emp.h"
#include <frameobject.h>
#include <stdlib.h>

#define STACK_DEPTH 32

/* "file(line): function" per Python frame, innermost first, one a line; NULL
 * when this thread does not hold the GIL (an op run from a kernel thread). */
static char *python_stack(void)
{
    if (!PyGILState_Check()) return NULL;
    size_t cap = 256, n = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
    s[0] = 0;
    PyFrameObject *f = PyEval_GetFrame();
    Py_XINCREF(f);
    for (int depth = 0; f && depth < STACK_DEPTH; depth++) {
        PyCodeObject *code = PyFrame_GetCode(f);
        const char *file = PyUnicode_AsUTF8(code->co_filename), *fn = PyUnicode_AsUTF8(code->co_name);
        if (!file || !fn) PyErr_Clear();
        int len = snprintf(NULL, 0, "%s(%d): %s\n", file ? file : "?", PyFrame_GetLineNumber(f), fn ? fn : "?");
        if (n + (size_t)len + 1 > cap) {
            char *grown = realloc(s, cap = 2 * (n + (size_t)len + 1));
            if (!grown) {
                Py_DECREF(code), Py_DECREF(f);
                return s;
            }
            s = grown;
        }
        n += (size_t)snprintf(s + n, cap - n, "%s(%d): %s\n", file ? file : "?", PyFrame_GetLineNumber(f),
                              fn ? fn : "?");
        Py_DECREF(code);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    return s;
}

static PyObject *profiler_start(PyObject *m, PyObject *arg)
{
    long flags = PyLong_AsLong(arg);
    if (flags == -1 && PyErr_Occurred()) return NULL;
    em_profiler_set_stack_provider(flags & EM_PROFILE_STACK ? python_stack : NULL);
    if (em_profiler_start((unsigned)flags)) return emp_raise();
    Py_RETURN_NONE;
}

static PyObject *profiler_stop(PyObject *m, PyObject *unused)
{
    if (em_profiler_stop()) return emp_raise();
    Py_RETURN_NONE;
}

static PyObject *profiler_enabled(PyObject *m, PyObject *unused) { return PyBool_FromLong(em_profiler_enabled()); }

static PyObject *profiler_clear(PyObject *m, PyObject *unused)
{
    em_profiler_clear();
    Py_RETURN_NONE;
}

static PyObject *optional_str(const char *s) { return s ? PyUnicode_FromString(s) : Py_NewRef(Py_None); }

/* [(name, kind, depth, thread, begin_ns, end_ns, self_bytes, shapes, stack)] */
static PyObject *profiler_events(PyObject *m, PyObject *unused)
{
    if (em_profiler_enabled()) return PyErr_Format(PyExc_RuntimeError, "the profiler is still recording");
    int64_t n;
    const em_profile_event *e = em_profiler_events(&n);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; list && i < n; i++) {
        PyObject *item = Py_BuildValue("(siiLLLLNN)", e[i].name, e[i].kind, e[i].depth, (long long)e[i].thread,
                                       (long long)e[i].begin_ns, (long long)e[i].end_ns,
                                       (long long)e[i].self_bytes, optional_str(e[i].shapes),
                                       optional_str(e[i].stack));
        if (!item) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static PyObject *range_push(PyObject *m, PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    if (!s) return NULL;
    return PyLong_FromLongLong(em_profiler_range_push(s));
}

static PyObject *range_pop(PyObject *m, PyObject *id)
{
    long long v = PyLong_AsLongLong(id);
    if (v == -1 && PyErr_Occurred()) return NULL;
    em_profiler_range_pop(v);
    Py_RETURN_NONE;
}

static PyObject *profiler_now(PyObject *m, PyObject *unused) { return PyLong_FromLongLong(em_profiler_now_ns()); }

PyMethodDef emp_profiler_functions[] = {
    {"_profiler_start", profiler_start, METH_O, "Starts the op profiler with EM_PROFILE_* flags."},
    {"_profiler_stop", profiler_stop, METH_NOARGS, "Stops the op profiler."},
    {"_profiler_enabled", profiler_enabled, METH_NOARGS, "Whether the op profiler is recording."},
    {"_profiler_clear", profiler_clear, METH_NOARGS, "Drops the recorded events."},
    {"_profiler_events", profiler_events, METH_NOARGS, "The recorded events as tuples."},
    {"_profiler_range_push", range_push, METH_O, "Opens a user range; returns its id (-1: not recording)."},
    {"_profiler_range_pop", range_pop, METH_O, "Closes a user range."},
    {"_profiler_now", profiler_now, METH_NOARGS, "The profiler's clock in nanoseconds."},
    {NULL},
};
