/* Index ops in Python (include/ember/index.h): index_select, gather and the
 * scatter family, index_add/copy/fill, take/put, index_put, the masked ops,
 * nonzero and argwhere. Subscripting (x[i] = v) is tensor indexing's, not here. */
#include "emp.h"

/* ---- along one dim ------------------------------------------------------ */
EMP_BIND(index_select, "index_select(Tensor input, int dim, Tensor index, *, Tensor? out=None)")
{
    return EMP_OUT(3, em_index_select_out(a->t[3], a->t[0], emp_dim(a, 1), a->t[2]),
                   em_index_select(a->t[0], emp_dim(a, 1), a->t[2]));
}
/* sparse_grad only chooses PyTorch's gradient layout: Ember's is dense. */
EMP_BIND(gather, "gather(Tensor input, int dim, Tensor index, *, bool sparse_grad=False, Tensor? out=None)")
{
    return EMP_OUT(4, em_gather_out(a->t[4], a->t[0], emp_dim(a, 1), a->t[2]),
                   em_gather(a->t[0], emp_dim(a, 1), a->t[2]));
}

/* name(input, int dim, Tensor index, Tensor <src>[EXTRA], *, Tensor? out=None)
 * and the in-place name_; the call's trailing arguments follow. */
#define DIM_INDEX_BIND(name, src_sig, k_out, ...)                                                       \
    EMP_BIND(name, #name "(Tensor input, int dim, Tensor index, Tensor " src_sig ", *, Tensor? out=None)") \
    {                                                                                                   \
        return EMP_OUT(k_out, em_##name##_out(a->t[k_out], a->t[0], emp_dim(a, 1), a->t[2], a->t[3] __VA_ARGS__), \
                       em_##name(a->t[0], emp_dim(a, 1), a->t[2], a->t[3] __VA_ARGS__));                 \
    }                                                                                                   \
    EMP_BIND(name##_, #name "_(Tensor input, int dim, Tensor index, Tensor " src_sig ")")               \
    {                                                                                                   \
        return emp_status_self(em_##name##_(a->t[0], emp_dim(a, 1), a->t[2], a->t[3] __VA_ARGS__), a->obj[0]); \
    }
DIM_INDEX_BIND(scatter_add, "src", 4)
DIM_INDEX_BIND(scatter_reduce, "src, str reduce, *, bool include_self=True", 6, , a->s[4], a->i[5])
DIM_INDEX_BIND(index_add, "source, *, Number alpha=1", 5, , a->d[4])
DIM_INDEX_BIND(index_copy, "source", 4)

/* scatter: src a tensor or a number, optional reduce ('add', 'multiply'). */
enum { MAKE_NEW, IN_PLACE, INTO_OUT };
#define SCATTER_SIGS(name, out)                                                                     \
    #name "(Tensor input, int dim, Tensor index, Tensor src, *, str? reduce=None" out ")",          \
    #name "(Tensor input, int dim, Tensor index, Number value, *, str? reduce=None" out ")"

static PyObject *scatter_impl(emp_args *a, int mode)
{
    em_tensor *self = a->t[0], *index = a->t[2], *big = NULL;
    em_tensor *src = a->sig == 0 ? a->t[3] : NULL, *out = mode == INTO_OUT ? a->t[5] : NULL;
    int dim = emp_dim(a, 1);
    const char *reduce = a->has[4] ? a->s[4] : NULL;
    /* A number is passed as a double, except an int64 beyond 2^53: that one
     * goes as a tensor src (expanded, no copy) to stay exact. */
    if (a->sig == 1 && a->isint[3] && (a->i[3] > (1LL << 53) || a->i[3] < -(1LL << 53)) &&
        em_dtype_of(self) == EM_I64) {
        em_tensor *v = em_scalar_int(a->i[3]);
        src = big = v ? em_expand(v, em_ndim(index), em_sizes(index)) : NULL;
        em_release(v);
        if (!big) return emp_raise();
    }
    PyObject *r;
    if (src) {
        r = mode == IN_PLACE ? emp_status_self(em_scatter_(self, dim, index, src, reduce), a->obj[0])
          : mode == INTO_OUT ? emp_status_self(em_scatter_out(out, self, dim, index, src, reduce), a->obj[5])
                             : emp_wrap(em_scatter(self, dim, index, src, reduce));
    } else {
        double v = a->d[3];
        r = mode == IN_PLACE ? emp_status_self(em_scatter_value_(self, dim, index, v, reduce), a->obj[0])
          : mode == INTO_OUT ? emp_status_self(em_scatter_value_out(out, self, dim, index, v, reduce), a->obj[5])
                             : emp_wrap(em_scatter_value(self, dim, index, v, reduce));
    }
    em_release(big);
    return r;
}
EMP_BIND(scatter, SCATTER_SIGS(scatter, ", Tensor? out=None")) { return scatter_impl(a, a->has[5] ? INTO_OUT : MAKE_NEW); }
EMP_BIND(scatter_, SCATTER_SIGS(scatter_, "")) { return scatter_impl(a, IN_PLACE); }

/* index_fill and masked_fill take a 0-d tensor or a number (made a 0-d
 * tensor by the parser, which keeps large int64 values exact). */
EMP_BIND(index_fill, "index_fill(Tensor input, int dim, Tensor index, TensorOrNumber value)")
{
    return emp_wrap(em_index_fill_tensor(a->t[0], emp_dim(a, 1), a->t[2], a->t[3]));
}
EMP_BIND(index_fill_, "index_fill_(Tensor input, int dim, Tensor index, TensorOrNumber value)")
{
    return emp_status_self(em_index_fill_tensor_(a->t[0], emp_dim(a, 1), a->t[2], a->t[3]), a->obj[0]);
}

/* ---- flat --------------------------------------------------------------- */
EMP_BIND(take, "take(Tensor input, Tensor index, *, Tensor? out=None)")
{
    return EMP_OUT(2, em_take_out(a->t[2], a->t[0], a->t[1]), em_take(a->t[0], a->t[1]));
}
EMP_BIND(take_along_dim, "take_along_dim(Tensor input, Tensor indices, int? dim=None, *, Tensor? out=None)")
{
    if (!a->has[2])
        return EMP_OUT(3, em_take_along_dim_flat_out(a->t[3], a->t[0], a->t[1]), em_take_along_dim_flat(a->t[0], a->t[1]));
    return EMP_OUT(3, em_take_along_dim_out(a->t[3], a->t[0], a->t[1], emp_dim(a, 2)),
                   em_take_along_dim(a->t[0], a->t[1], emp_dim(a, 2)));
}
EMP_BIND(put, "put(Tensor input, Tensor index, Tensor source, bool accumulate=False)")
{
    return emp_wrap(em_put(a->t[0], a->t[1], a->t[2], a->i[3]));
}
EMP_BIND(put_, "put_(Tensor input, Tensor index, Tensor source, bool accumulate=False)")
{
    return emp_status_self(em_put_(a->t[0], a->t[1], a->t[2], a->i[3]), a->obj[0]);
}

/* ---- advanced indexing -------------------------------------------------- */
/* indices: a tuple or list of index tensors (PyTorch 1.13 takes no None here). */
#define MAX_INDICES 64
static PyObject *index_put_impl(emp_args *a, bool in_place)
{
    em_tensor *indices[MAX_INDICES];
    int n = emp_tensor_seq(a->obj[1], indices, MAX_INDICES, "index_put");
    if (n < 0) return NULL;
    const em_tensor *const *idx = (const em_tensor *const *)indices;
    if (in_place) return emp_status_self(em_index_put_(a->t[0], n, idx, a->t[2], a->i[3]), a->obj[0]);
    return emp_wrap(em_index_put(a->t[0], n, idx, a->t[2], a->i[3]));
}
EMP_BIND(index_put, "index_put(Tensor input, Tensor[] indices, Tensor values, bool accumulate=False)")
{
    return index_put_impl(a, false);
}
EMP_BIND(index_put_, "index_put_(Tensor input, Tensor[] indices, Tensor values, bool accumulate=False)")
{
    return index_put_impl(a, true);
}

/* ---- masks -------------------------------------------------------------- */
EMP_BIND(masked_fill, "masked_fill(Tensor input, Tensor mask, TensorOrNumber value)")
{
    return emp_wrap(em_masked_fill_tensor(a->t[0], a->t[1], a->t[2]));
}
EMP_BIND(masked_fill_, "masked_fill_(Tensor input, Tensor mask, TensorOrNumber value)")
{
    return emp_status_self(em_masked_fill_tensor_(a->t[0], a->t[1], a->t[2]), a->obj[0]);
}
EMP_BIND(masked_scatter, "masked_scatter(Tensor input, Tensor mask, Tensor source)")
{
    return emp_wrap(em_masked_scatter(a->t[0], a->t[1], a->t[2]));
}
EMP_BIND(masked_scatter_, "masked_scatter_(Tensor input, Tensor mask, Tensor source)")
{
    return emp_status_self(em_masked_scatter_(a->t[0], a->t[1], a->t[2]), a->obj[0]);
}
EMP_BIND(masked_select, "masked_select(Tensor input, Tensor mask, *, Tensor? out=None)")
{
    return EMP_OUT(2, em_masked_select_out(a->t[2], a->t[0], a->t[1]), em_masked_select(a->t[0], a->t[1]));
}

/* ---- nonzero ------------------------------------------------------------ */
/* PyTorch: nonzero(as_tuple=True) is nonzero().unbind(1), a 0-d input read as 1-d. */
PyObject *emp_nonzero_tuple(const em_tensor *t)
{
    em_tensor *as_1d = em_ndim(t) ? NULL : em_reshape(t, 1, (int64_t[]){1});
    if (!em_ndim(t) && !as_1d) return emp_raise();
    em_tensor *coords = em_nonzero(as_1d ? as_1d : t);
    em_release(as_1d);
    if (!coords) return emp_raise();
    em_tensor *cols[EM_MAX_DIMS];
    int n = EM_MAX_DIMS;
    em_status st = em_unbind(coords, 1, cols, &n);
    em_release(coords);
    return st ? emp_raise() : emp_wrap_tuple(n, cols);
}

EMP_BIND(nonzero, "nonzero(Tensor input, *, Tensor? out=None, bool as_tuple=False)")
{
    if (a->i[2]) return emp_nonzero_tuple(a->t[0]);
    return EMP_OUT(1, em_nonzero_out(a->t[1], a->t[0]), em_nonzero(a->t[0]));
}
EMP_BIND(argwhere, "argwhere(Tensor input)") { return emp_wrap(em_argwhere(a->t[0])); }

/* x.where(condition, y) is where(condition, x, y) (ember.where is pointwise_params.c's). */
EMP_BIND(where, "where(Tensor input, Tensor condition, TensorOrNumber other)")
{
    return emp_wrap(em_where(a->t[1], a->t[0], a->t[2]));
}

/* Both ember.f and Tensor.f; in-place methods. */
#define BOTH(X) \
    X(index_select) X(gather) X(scatter) X(scatter_add) X(scatter_reduce) X(index_add) X(index_copy) X(index_fill) \
    X(take) X(take_along_dim) X(put) X(index_put) X(index_put_) X(masked_fill) X(masked_scatter) X(masked_select)  \
    X(nonzero) X(argwhere)
#define IN_PLACE_METHODS(X) \
    X(scatter_) X(scatter_add_) X(scatter_reduce_) X(index_add_) X(index_copy_) X(index_fill_) X(put_)         \
    X(masked_fill_) X(masked_scatter_)
#define FN(name) EMP_FUNCTION(name),
#define METH(name) EMP_METHOD(name),
PyMethodDef emp_index_functions[] = {BOTH(FN){NULL}};
PyMethodDef emp_index_methods[] = {BOTH(METH) IN_PLACE_METHODS(METH) METH(where){NULL}};
