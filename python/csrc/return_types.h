/* Named result pairs (PyTorch's torch.return_types.max etc.): structseqs,
 * so `values, indices = x.max(1)` and `x.max(1).values` both work. Used by
 * the reduce and sort bindings. */
#ifndef EMP_RETURN_TYPES_H
#define EMP_RETURN_TYPES_H

#include "emp.h"

/* name, first field, second field */
#define EMP_RETURN_TYPES(X)                                                                      \
    X(max, values, indices) X(min, values, indices) X(median, values, indices)                   \
    X(nanmedian, values, indices) X(mode, values, indices) X(kthvalue, values, indices)          \
    X(topk, values, indices) X(sort, values, indices) X(cummax, values, indices)                 \
    X(cummin, values, indices) X(histogram, hist, bin_edges)

typedef enum emp_return_type {
#define EMP_RT_ENUM(name, a, b) EMP_RT_##name,
    EMP_RETURN_TYPES(EMP_RT_ENUM)
#undef EMP_RT_ENUM
    EMP_RT_COUNT
} emp_return_type;

/* The named pair of two NEW references (stolen, released on error); a
 * nonzero status raises the C error instead. */
PyObject *emp_return_pair(emp_return_type kind, em_status st, em_tensor *first, em_tensor *second);
/* The caller's out= pair `outs` as the named pair once st is EM_OK. */
PyObject *emp_return_out(emp_return_type kind, em_status st, PyObject *seq);
/* out=(a, b): the two tensors (borrowed) in outs; -1 with PyTorch's TypeError. */
int emp_out_pair(PyObject *seq, em_tensor **outs);

/* The (values, indices) ops along one dim (max, min, median, nanmedian,
 * mode), bound with args (input, int dim, bool keepdim, *, Tensor[]? out). */
typedef em_status (*emp_dim_pair_fn)(const em_tensor *x, int dim, bool keepdim, em_tensor **values,
                                     em_tensor **indices);
typedef em_status (*emp_dim_pair_out_fn)(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim,
                                         bool keepdim);
PyObject *emp_dim_pair(emp_args *a, emp_return_type kind, emp_dim_pair_fn f, emp_dim_pair_out_fn f_out);

#endif
