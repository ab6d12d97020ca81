/* NumPy arrays, the buffer protocol and DLPack (zero-copy where possible). */
#include "emp.h"

em_tensor *emp_array_to_tensor(PyObject *obj, em_dtype dt)
{
    (void)obj;
    (void)dt;
    return NULL; /* arrays arrive with the interop bindings */
}
