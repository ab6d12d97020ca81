/* C error codes to the exceptions PyTorch raises, and Python exceptions
 * carried through C callbacks (hooks, custom Functions). */
#include "emp.h"

/* Note [Parked exceptions]: a Python callback Ember calls (a hook during
 * backward, a custom Function's backward) may raise. The C engine only knows
 * "failed with a message"; the exception object itself is parked here
 * (per thread, as the engine runs on the caller's thread) and emp_raise puts
 * it back, so the user sees their own exception type and traceback. */
static _Thread_local PyObject *parked_type, *parked_value, *parked_tb;

em_status emp_park_exception(void)
{
    Py_CLEAR(parked_type);
    Py_CLEAR(parked_value);
    Py_CLEAR(parked_tb);
    PyErr_Fetch(&parked_type, &parked_value, &parked_tb);
    PyErr_NormalizeException(&parked_type, &parked_value, &parked_tb);
    PyObject *msg = parked_value ? PyObject_Str(parked_value) : NULL;
    const char *text = msg ? PyUnicode_AsUTF8(msg) : NULL;
    em_fail(EM_ERR_RUNTIME, "%s", text ? text : "a Python callback failed");
    Py_XDECREF(msg);
    PyErr_Clear();
    return EM_ERR_RUNTIME;
}

PyObject *emp_raise(void)
{
    if (parked_type) {
        PyErr_Restore(parked_type, parked_value, parked_tb);
        parked_type = parked_value = parked_tb = NULL;
        em_clear_error();
        return NULL;
    }
    PyObject *type;
    switch (em_error_code()) {
    case EM_ERR_INDEX: type = PyExc_IndexError; break;
    case EM_ERR_VALUE: type = PyExc_ValueError; break;
    case EM_ERR_TYPE: type = PyExc_TypeError; break;
    case EM_ERR_NOT_IMPLEMENTED: type = PyExc_NotImplementedError; break;
    case EM_ERR_MEMORY: type = PyExc_RuntimeError; break;
    default: type = PyExc_RuntimeError; break;
    }
    PyErr_SetString(type, *em_last_error() ? em_last_error() : "unknown error in Ember");
    em_clear_error();
    return NULL;
}
