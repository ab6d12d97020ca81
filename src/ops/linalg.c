/* The op layer of the matrix products (include/ember/linalg.h): argument
 * checks with PyTorch's messages, result shapes and dtypes, out= and in-place
 * handling, and matmul's cases by dimension. Every product reaches one kernel
 * contract (Note [GEMM call] in src/cpu/linalg.c) through run_product(). */
#include "autocast.h"
#include "dispatch.h"

enum { MODE_NEW, MODE_OUT, MODE_INPLACE };

/* PyTorch's C type names, quoted by its out= and in-place dtype messages. */
static const char *const ctype_names[EM_DTYPE_COUNT] = {
    [EM_U8] = "unsigned char", [EM_I8] = "signed char", [EM_I16] = "short int", [EM_I32] = "int",
    [EM_I64] = "long int",     [EM_F16] = "c10::Half",  [EM_F32] = "float",     [EM_F64] = "double",
    [EM_BOOL] = "bool",        [EM_BF16] = "c10::BFloat16", [EM_C32] = "c10::complex<c10::Half>",
    [EM_C64] = "c10::complex<float>", [EM_C128] = "c10::complex<double>",
};

/* ---- argument checks ------------------------------------------------------ */
static em_status check_not_null(const char *op, int n, const em_tensor *const *ts)
{
    for (int k = 0; k < n; k++)
        if (!ts[k]) return em_fail(EM_ERR_VALUE, "%s: argument %d is NULL", op, k + 1);
    return EM_OK;
}
#define CHECK_NOT_NULL(op, ...) \
    check_not_null(op, sizeof((const em_tensor *[]){__VA_ARGS__}) / sizeof(em_tensor *), (const em_tensor *[]){__VA_ARGS__})

/* The products do not promote: a's dtype is the one expected. */
static em_status check_same_dtype(const em_tensor *a, const em_tensor *b)
{
    if (a->dtype == b->dtype) return EM_OK;
    return em_fail(EM_ERR_DTYPE, "expected scalar type %s but found %s", em_dtype_scalar_name((em_dtype)a->dtype),
                   em_dtype_scalar_name((em_dtype)b->dtype));
}

/* Every dtype but bool; `kernel` is PyTorch's kernel name in its message. */
static em_status check_product_dtype(em_dtype dt, const char *kernel)
{
    if (dt != EM_BOOL) return EM_OK;
    return em_fail(EM_ERR_DTYPE, "\"%s\" not implemented for '%s'", kernel, em_dtype_scalar_name(dt));
}

/* `t` broadcasts to `shape` (the beta * input term), in expand's words. */
static em_status check_expand(const em_tensor *t, int n, const int64_t *shape)
{
    if (t->ndim > n)
        return em_fail(EM_ERR_SHAPE, "expand: the number of sizes provided (%d) must be greater or equal to the "
                       "number of dimensions in the tensor (%d)", n, t->ndim);
    for (int i = 0; i < t->ndim; i++) {
        int d = n - t->ndim + i;
        if (t->sizes[i] != 1 && t->sizes[i] != shape[d])
            return em_fail(EM_ERR_SHAPE, "The expanded size of the tensor (%lld) must match the existing size (%lld) "
                           "at non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                           (long long)shape[d], (long long)t->sizes[i], d, em_shape_str(n, shape),
                           em_shape_str(t->ndim, t->sizes));
    }
    return EM_OK;
}

/* In-place: self must already have the result's shape. */
static em_status check_inplace_shape(const em_tensor *self, int n, const int64_t *shape)
{
    if (self->ndim == n && !memcmp(self->sizes, shape, n * sizeof *shape)) return EM_OK;
    return em_fail(EM_ERR_SHAPE, "Bad in-place call: input tensor size %s and output tensor size %s should match",
                   em_shape_str(self->ndim, self->sizes), em_shape_str(n, shape));
}

static em_status check_inplace_dtype(const em_tensor *self, em_dtype dt)
{
    if (self->dtype == dt) return EM_OK;
    return em_fail(EM_ERR_DTYPE, "Bad in-place call: input tensor dtype %s and output tensor dtype %s should match",
                   ctype_names[self->dtype], ctype_names[dt]);
}

/* The tensor a product writes (a new reference): a new one; self; or out,
 * whose dtype must be dt exactly (as PyTorch). An out of another shape is not
 * resized here but gets a new tensor, copied by finish_out: resizing first
 * would change an input that is out itself. */
static em_tensor *product_dst(int mode, em_tensor *out, int n, const int64_t *shape, em_dtype dt,
                              const em_tensor *like, const char *op)
{
    if (mode != MODE_NEW && !out) return em_error(EM_ERR_VALUE, "%s: out is NULL", op);
    if (mode == MODE_OUT && out->dtype != dt)
        return em_error(EM_ERR_DTYPE, "Expected out tensor to have dtype %s, but got %s instead", ctype_names[dt],
                        ctype_names[out->dtype]);
    if (mode == MODE_INPLACE && check_inplace_shape(out, n, shape)) return NULL;
    if (mode == MODE_NEW || out->ndim != n || memcmp(out->sizes, shape, n * sizeof *shape))
        return em_tensor_new(n, shape, dt, like->storage->device);
    return em_check_overlap(out, NULL, op) ? NULL : em_retain(out);
}

/* The status of an out= or in-place form from its implementation's result r
 * (a new reference): out itself, or a result to resize out to and copy. */
static em_status finish_out(em_tensor *out, em_tensor *r)
{
    if (!r) return em_error_code();
    em_status st = r == out ? EM_OK : em_resize_(out, r->ndim, r->sizes);
    if (st == EM_OK && r != out) st = em_copy_(out, r);
    em_release(r);
    return st;
}

/* ---- running a product ---------------------------------------------------- */
/* Do a and b share any byte of memory? (A product reads all of A and B while
 * writing C, so any overlap needs a temporary.) */
static bool may_overlap(const em_tensor *a, const em_tensor *b)
{
    if (a->storage != b->storage || !em_numel(a) || !em_numel(b)) return false;
    int64_t lo[2], hi[2];
    const em_tensor *t[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        int64_t last = t[k]->offset;
        for (int i = 0; i < t[k]->ndim; i++) last += (t[k]->sizes[i] - 1) * t[k]->strides[i];
        lo[k] = t[k]->offset * (int64_t)em_dtypes[t[k]->dtype].size;
        hi[k] = (last + 1) * (int64_t)em_dtypes[t[k]->dtype].size;
    }
    return lo[0] < hi[1] && lo[1] < hi[0];
}

/* dst = beta * input + alpha * A @ B (Note [GEMM call]): A, B and input as
 * the user gave them, dst of the result's shape; `reduce` sums over the
 * batch (addbmm). input (NULL: none) broadcasts to dst and may be dst itself.
 * dst is the call's output, so autograd records the product on it; only
 * when dst overlaps an operand does the product go through a temporary
 * (then copied into dst, a recorded copy). */
static em_status run_product(em_op op, em_tensor *dst, const em_tensor *A, const em_tensor *B,
                             const em_tensor *input, double beta, double alpha, bool reduce)
{
    em_tensor *C = dst;
    bool input_overlaps = input && input != dst && beta != 0 && may_overlap(dst, input);
    if (may_overlap(dst, A) || may_overlap(dst, B) || input_overlaps) {
        C = em_tensor_new(dst->ndim, dst->sizes, (em_dtype)dst->dtype, dst->storage->device);
        if (!C) return em_error_code();
    }
    em_call c = {.op = op, .nin = input ? 3 : 2, .nout = 1, .dtype = (em_dtype)A->dtype};
    c.out[0] = C;
    c.in[0] = A;
    c.in[1] = B;
    c.in[2] = input;
    c.operand_dtypes[0] = c.operand_dtypes[1] = c.operand_dtypes[2] = A->dtype;
    c.operand_dtypes[3] = input ? input->dtype : A->dtype;
    c.f[0] = input ? beta : 0;
    c.f[1] = alpha;
    c.i[0] = reduce;
    em_status st = em_dispatch(&c);
    if (st == EM_OK && C != dst) st = em_copy_(dst, C);
    if (C != dst) em_release(C);
    return st;
}

/* A view of t with the given geometry (a stride-0 dim broadcasts). */
static em_tensor *view_of(const em_tensor *t, int n, const int64_t *sizes, const int64_t *strides)
{
    return em_tensor_view(t, n, sizes, strides, t->offset);
}

/* ---- dot, vdot -------------------------------------------------------------- */
static em_tensor *dot_impl(int mode, em_tensor *out, const em_tensor *a, const em_tensor *b)
{
    if (CHECK_NOT_NULL("dot", a, b)) return NULL;
    if (a->ndim != 1 || b->ndim != 1)
        return em_error(EM_ERR_SHAPE, "1D tensors expected, but got %dD and %dD tensors", a->ndim, b->ndim);
    if (a->dtype != b->dtype)
        return em_error(EM_ERR_DTYPE, "dot : expected both vectors to have same dtype, but found %s and %s",
                        em_dtype_scalar_name((em_dtype)a->dtype), em_dtype_scalar_name((em_dtype)b->dtype));
    if (check_product_dtype((em_dtype)a->dtype, "dot")) return NULL;
    if (a->sizes[0] != b->sizes[0])
        return em_error(EM_ERR_SHAPE, "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the "
                        "same number of elements, but got %lld and %lld elements respectively",
                        (long long)a->sizes[0], (long long)b->sizes[0], (long long)a->sizes[0],
                        (long long)b->sizes[0]);
    if (mode == MODE_OUT && out && out->dtype != a->dtype)
        return em_error(EM_ERR_DTYPE, "result dtype %s does not match input dtype %s",
                        em_dtype_scalar_name((em_dtype)out->dtype), em_dtype_scalar_name((em_dtype)a->dtype));
    const int64_t scalar_shape[1] = {1}; /* 0 dims: never read, but not NULL for memcmp */
    em_tensor *dst = product_dst(mode, out, 0, scalar_shape, (em_dtype)a->dtype, a, "dot");
    if (dst && run_product(EM_OP_dot, dst, a, b, NULL, 0, 1, false)) {
        em_release(dst);
        return NULL;
    }
    return dst;
}

em_tensor *em_dot(const em_tensor *a, const em_tensor *b) { return dot_impl(MODE_NEW, NULL, a, b); }
em_status em_dot_out(em_tensor *out, const em_tensor *a, const em_tensor *b)
{
    return finish_out(out, dot_impl(MODE_OUT, out, a, b));
}
/* Real dtypes only: vdot's conjugation is the identity. */
/* vdot conjugates a complex a, which Ember's C layer does not do yet (the
 * Python package does it with conj_physical). */
static bool vdot_complex(const em_tensor *a)
{
    if (!a || !em_dtype_is_complex((em_dtype)a->dtype)) return false;
    em_fail(EM_ERR_NOT_IMPLEMENTED, "vdot: complex tensors are not implemented in Ember's C API (use dot with conj)");
    return true;
}
em_tensor *em_vdot(const em_tensor *a, const em_tensor *b) { return vdot_complex(a) ? NULL : em_dot(a, b); }
em_status em_vdot_out(em_tensor *out, const em_tensor *a, const em_tensor *b)
{
    return vdot_complex(a) ? em_error_code() : em_dot_out(out, a, b);
}

/* The three forms (new, in place, out=) of a beta * input + alpha * product
 * op, over its impl(mode, op, out, input, a, b, beta, alpha). */
#define BETA_ALPHA_FORMS(name, impl)                                                                     \
    em_tensor *em_##name(const em_tensor *input, const em_tensor *a, const em_tensor *b, double beta,    \
                         double alpha)                                                                   \
    {                                                                                                    \
        if (!input) return em_error(EM_ERR_VALUE, #name ": input is NULL");                               \
        EM_AUTOCAST(EM_AUTOCAST_LOWER, em_##name(input, a, b, beta, alpha), &input, &a, &b);              \
        return impl(MODE_NEW, EM_OP_##name, NULL, input, a, b, beta, alpha);                             \
    }                                                                                                    \
    em_status em_##name##_(em_tensor *self, const em_tensor *a, const em_tensor *b, double beta, double alpha) \
    {                                                                                                    \
        if (!self) return em_fail(EM_ERR_VALUE, #name "_: self is NULL");                                 \
        return finish_out(self, impl(MODE_INPLACE, EM_OP_##name, self, self, a, b, beta, alpha));        \
    }                                                                                                    \
    em_status em_##name##_out(em_tensor *out, const em_tensor *input, const em_tensor *a, const em_tensor *b, \
                              double beta, double alpha)                                                 \
    {                                                                                                    \
        if (!input) return em_fail(EM_ERR_VALUE, #name ": input is NULL");                                \
        return finish_out(out, impl(MODE_OUT, EM_OP_##name, out, input, a, b, beta, alpha));             \
    }

/* ---- mv, addmv ------------------------------------------------------------- */
static em_tensor *addmv_impl(int mode, em_op op, em_tensor *out, const em_tensor *input, const em_tensor *mat,
                             const em_tensor *vec, double beta, double alpha)
{
    const char *name = em_ops[op].name;
    if (CHECK_NOT_NULL(name, mat, vec) || (input && CHECK_NOT_NULL(name, input))) return NULL;
    int in_dim = input ? input->ndim : 1;
    if (mat->ndim != 2 || vec->ndim != 1 || in_dim > 1)
        return em_error(EM_ERR_SHAPE, "vector + matrix @ vector expected, got %d, %d, %d", in_dim, mat->ndim,
                        vec->ndim);
    int64_t n = mat->sizes[0], k = mat->sizes[1];
    int64_t in_size = !input ? n : input->ndim ? input->sizes[0] : 1;
    if (k != vec->sizes[0] || (in_size != n && in_size != 1))
        return em_error(EM_ERR_SHAPE, "size mismatch, got %lld, %lldx%lld,%lld", (long long)in_size, (long long)n,
                        (long long)k, (long long)vec->sizes[0]);
    if (check_same_dtype(mat, vec) || check_product_dtype((em_dtype)mat->dtype, "addmv_impl_cpu")) return NULL;
    if (mode == MODE_INPLACE && (check_inplace_shape(input, 1, &n) || check_inplace_dtype(input, (em_dtype)mat->dtype)))
        return NULL;
    em_tensor *dst = product_dst(mode, out, 1, &n, (em_dtype)mat->dtype, mat, name);
    if (dst && run_product(op, dst, mat, vec, input, beta, alpha, false)) {
        em_release(dst);
        return NULL;
    }
    return dst;
}

em_tensor *em_mv(const em_tensor *mat, const em_tensor *vec)
{
    return addmv_impl(MODE_NEW, EM_OP_mv, NULL, NULL, mat, vec, 0, 1);
}
em_status em_mv_out(em_tensor *out, const em_tensor *mat, const em_tensor *vec)
{
    return finish_out(out, addmv_impl(MODE_OUT, EM_OP_mv, out, NULL, mat, vec, 0, 1));
}
BETA_ALPHA_FORMS(addmv, addmv_impl)

/* ---- mm, addmm --------------------------------------------------------------- */
static em_status check_mm_shapes(const em_tensor *a, const em_tensor *b)
{
    if (a->sizes[1] == b->sizes[0]) return EM_OK;
    return em_fail(EM_ERR_SHAPE, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                   (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0], (long long)b->sizes[1]);
}

static em_tensor *addmm_impl(int mode, em_op op, em_tensor *out, const em_tensor *input, const em_tensor *m1,
                             const em_tensor *m2, double beta, double alpha)
{
    const char *name = em_ops[op].name;
    if (CHECK_NOT_NULL(name, m1, m2) || (input && CHECK_NOT_NULL(name, input))) return NULL;
    if (op == EM_OP_mm) {
        if (m1->ndim != 2) return em_error(EM_ERR_SHAPE, "self must be a matrix");
        if (m2->ndim != 2) return em_error(EM_ERR_SHAPE, "mat2 must be a matrix");
        if (check_same_dtype(m1, m2)) return NULL;
    } else {
        if (m1->ndim != 2) return em_error(EM_ERR_SHAPE, "mat1 must be a matrix, got %d-D tensor", m1->ndim);
        if (m2->ndim != 2) return em_error(EM_ERR_SHAPE, "mat2 must be a matrix, got %d-D tensor", m2->ndim);
        if (m1->dtype != m2->dtype) return em_error(EM_ERR_DTYPE, "mat1 and mat2 must have the same dtype");
        if (input->dtype != m2->dtype) return em_error(EM_ERR_DTYPE, "self and mat2 must have the same dtype");
    }
    if (check_mm_shapes(m1, m2) || check_product_dtype((em_dtype)m1->dtype, "addmm_impl_cpu_")) return NULL;
    const int64_t shape[2] = {m1->sizes[0], m2->sizes[1]};
    if (input && mode != MODE_INPLACE && check_expand(input, 2, shape)) return NULL;
    em_tensor *dst = product_dst(mode, out, 2, shape, (em_dtype)m1->dtype, m1, name);
    if (dst && run_product(op, dst, m1, m2, input, beta, alpha, false)) {
        em_release(dst);
        return NULL;
    }
    return dst;
}

em_tensor *em_mm(const em_tensor *a, const em_tensor *b)
{
    EM_AUTOCAST(EM_AUTOCAST_LOWER, em_mm(a, b), &a, &b);
    return addmm_impl(MODE_NEW, EM_OP_mm, NULL, NULL, a, b, 0, 1);
}
em_status em_mm_out(em_tensor *out, const em_tensor *a, const em_tensor *b)
{
    return finish_out(out, addmm_impl(MODE_OUT, EM_OP_mm, out, NULL, a, b, 0, 1));
}
BETA_ALPHA_FORMS(addmm, addmm_impl)

/* ---- bmm, baddbmm, addbmm ---------------------------------------------------- */
static em_tensor *batched_impl(int mode, em_op op, em_tensor *out, const em_tensor *input, const em_tensor *b1,
                               const em_tensor *b2, double beta, double alpha)
{
    const char *name = em_ops[op].name;
    const bool reduce = op == EM_OP_addbmm;
    if (reduce && mode == MODE_INPLACE) mode = MODE_OUT; /* PyTorch's addbmm_ is addbmm(out=self): self broadcasts
                                                          * and is resized to the result */
    if (CHECK_NOT_NULL(name, b1, b2) || (input && CHECK_NOT_NULL(name, input))) return NULL;
    if (b1->ndim != 3) return em_error(EM_ERR_SHAPE, "batch1 must be a 3D tensor");
    if (b2->ndim != 3) return em_error(EM_ERR_SHAPE, "batch2 must be a 3D tensor");
    if (reduce) {
        if (b1->sizes[0] != b2->sizes[0])
            return em_error(EM_ERR_SHAPE, "batch1 and batch2 must have same number of batches, got %lld and %lld",
                            (long long)b1->sizes[0], (long long)b2->sizes[0]);
        if (b1->sizes[2] != b2->sizes[1])
            return em_error(EM_ERR_SHAPE, "Incompatible matrix sizes for bmm (%lldx%lld and %lldx%lld)",
                            (long long)b1->sizes[1], (long long)b1->sizes[2], (long long)b2->sizes[1],
                            (long long)b2->sizes[2]);
        if (b1->dtype != b2->dtype) return em_error(EM_ERR_DTYPE, "mat1 and mat2 must have the same dtype");
        if (input->dtype != b2->dtype) return em_error(EM_ERR_DTYPE, "self and mat2 must have the same dtype");
    } else {
        if (b2->sizes[0] != b1->sizes[0] || b2->sizes[1] != b1->sizes[2])
            return em_error(EM_ERR_SHAPE, "Expected size for first two dimensions of batch2 tensor to be: [%lld, "
                            "%lld] but got: [%lld, %lld].", (long long)b1->sizes[0], (long long)b1->sizes[2],
                            (long long)b2->sizes[0], (long long)b2->sizes[1]);
        if (check_same_dtype(b1, b2)) return NULL;
    }
    em_dtype dt = (em_dtype)b1->dtype;
    if (check_product_dtype(dt, reduce ? "addmm_impl_cpu_" : input ? "baddbmm" : "bmm")) return NULL;
    const int64_t shape[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    const int64_t *rshape = reduce ? shape + 1 : shape;
    int rdim = reduce ? 2 : 3;
    if (input && mode != MODE_INPLACE && check_expand(input, rdim, rshape)) return NULL;
    if (mode == MODE_INPLACE && !reduce && check_inplace_dtype(input, dt)) return NULL;
    em_tensor *dst = product_dst(mode, out, rdim, rshape, dt, b1, name);
    if (dst && run_product(op, dst, b1, b2, input, beta, alpha, reduce)) {
        em_release(dst);
        return NULL;
    }
    return dst;
}

em_tensor *em_bmm(const em_tensor *a, const em_tensor *b)
{
    EM_AUTOCAST(EM_AUTOCAST_LOWER, em_bmm(a, b), &a, &b);
    return batched_impl(MODE_NEW, EM_OP_bmm, NULL, NULL, a, b, 0, 1);
}
em_status em_bmm_out(em_tensor *out, const em_tensor *a, const em_tensor *b)
{
    return finish_out(out, batched_impl(MODE_OUT, EM_OP_bmm, out, NULL, a, b, 0, 1));
}

BETA_ALPHA_FORMS(baddbmm, batched_impl)
BETA_ALPHA_FORMS(addbmm, batched_impl)

/* ---- matmul -------------------------------------------------------------------- */
/* The size-mismatch message of PyTorch's matmul path for these dims. PyTorch
 * folds a batched operand into the rows of one matrix product: a's batch when
 * b has at most 2 dims, else, for a 1-d or 2-d a, b's batch as b^T a^T. */
static void *matmul_size_error(const em_tensor *a, const em_tensor *b)
{
    int64_t k = a->sizes[a->ndim - 1], kb = b->ndim == 1 ? b->sizes[0] : b->sizes[b->ndim - 2];
    if (a->ndim <= 2 && b->ndim >= 3) { /* b^T folded: (batch * m, kb) times a^T */
        int64_t rows = kb ? em_numel(b) / kb : 0;
        if (a->ndim == 1)
            return em_error(EM_ERR_SHAPE, "size mismatch, got %lld, %lldx%lld,%lld", (long long)rows, (long long)rows,
                            (long long)kb, (long long)k);
        return em_error(EM_ERR_SHAPE, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                        (long long)rows, (long long)kb, (long long)k, (long long)a->sizes[0]);
    }
    int64_t rows = k ? em_numel(a) / k : 0;
    if (b->ndim == 1)
        return em_error(EM_ERR_SHAPE, "size mismatch, got %lld, %lldx%lld,%lld", (long long)rows, (long long)rows,
                        (long long)k, (long long)kb);
    if (b->ndim == 2)
        return em_error(EM_ERR_SHAPE, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                        (long long)rows, (long long)k, (long long)kb, (long long)b->sizes[1]);
    int64_t batch = rows / (a->sizes[a->ndim - 2] ? a->sizes[a->ndim - 2] : 1);
    return em_error(EM_ERR_SHAPE, "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but "
                    "got: [%lld, %lld].", (long long)batch, (long long)k, (long long)batch, (long long)kb);
}

static em_tensor *matmul_impl(int mode, em_tensor *out, const em_tensor *a, const em_tensor *b)
{
    if (CHECK_NOT_NULL("matmul", a, b)) return NULL;
    if (a->ndim == 0 || b->ndim == 0)
        return em_error(EM_ERR_SHAPE, "both arguments to matmul need to be at least 1D, but they are %dD and %dD",
                        a->ndim, b->ndim);
    if (a->ndim == 1 && b->ndim == 1) return dot_impl(mode, out, a, b);
    if (a->ndim == 2 && b->ndim == 1) return addmv_impl(mode, EM_OP_mv, out, NULL, a, b, 0, 1);
    if (a->ndim == 2 && b->ndim == 2) return addmm_impl(mode, EM_OP_mm, out, NULL, a, b, 0, 1);
    if (mode == MODE_OUT && !out) return em_error(EM_ERR_VALUE, "matmul: out is NULL");

    /* broadcast the batch dims (all but the last two; vectors have none) */
    int na = a->ndim > 2 ? a->ndim - 2 : 0, nbb = b->ndim > 2 ? b->ndim - 2 : 0, nb = na > nbb ? na : nbb;
    int64_t shape[EM_MAX_DIMS];
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - na), db = d - (nb - nbb);
        int64_t sa = da >= 0 ? a->sizes[da] : 1, sb = db >= 0 ? b->sizes[db] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return em_error(EM_ERR_SHAPE, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                            "non-singleton dimension %d", (long long)sa, (long long)sb, d);
        shape[d] = sa == 1 ? sb : sa;
    }
    int64_t ka = a->sizes[a->ndim - 1], kb = b->ndim == 1 ? b->sizes[0] : b->sizes[b->ndim - 2];
    if (ka != kb) return matmul_size_error(a, b);
    /* where PyTorch computes b^T a^T (see matmul_size_error), b has the expected dtype */
    if (a->ndim <= 2 && b->ndim >= 3 ? check_same_dtype(b, a) : check_same_dtype(a, b)) return NULL;
    if (check_product_dtype((em_dtype)a->dtype, a->ndim > 2 && b->ndim > 2 ? "bmm" : "addmm_impl_cpu_")) return NULL;
    int n = nb;
    if (a->ndim >= 2) shape[n++] = a->sizes[a->ndim - 2];
    if (b->ndim >= 2) shape[n++] = b->sizes[b->ndim - 1];
    if (n > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "matmul: too many dims");
    /* the rest is one call of the product kernel on a and b as they are
     * (Note [GEMM call]): bmm's with batch dims, else mm's ((k) x (k, m)) */
    em_tensor *dst = product_dst(mode, out, n, shape, (em_dtype)a->dtype, a, "matmul");
    if (dst && run_product(nb ? EM_OP_bmm : EM_OP_mm, dst, a, b, NULL, 0, 1, false)) {
        em_release(dst);
        return NULL;
    }
    return dst;
}

em_tensor *em_matmul(const em_tensor *a, const em_tensor *b)
{
    EM_AUTOCAST(EM_AUTOCAST_LOWER, em_matmul(a, b), &a, &b);
    return matmul_impl(MODE_NEW, NULL, a, b);
}
em_status em_matmul_out(em_tensor *out, const em_tensor *a, const em_tensor *b)
{
    return finish_out(out, matmul_impl(MODE_OUT, out, a, b));
}

/* ---- outer, kron: products of broadcast views (mul does the dtypes) ------- */
/* out= of these: the result r (a new reference, computed before out is
 * touched, so out may be an input) cast into out, resized to r's shape. */
static em_status assign_out(em_tensor *out, em_tensor *r, const char *op)
{
    em_status st = !r ? em_error_code() : !out ? em_fail(EM_ERR_VALUE, "%s: out is NULL", op) : EM_OK;
    if (st == EM_OK && !em_can_cast((em_dtype)r->dtype, (em_dtype)out->dtype))
        st = em_fail(EM_ERR_DTYPE, "result type %s can't be cast to the desired output type %s",
                     em_dtype_scalar_name((em_dtype)r->dtype), em_dtype_scalar_name((em_dtype)out->dtype));
    if (st == EM_OK && (out->ndim != r->ndim || memcmp(out->sizes, r->sizes, r->ndim * sizeof *r->sizes)))
        st = em_resize_(out, r->ndim, r->sizes);
    if (st == EM_OK) st = em_copy_(out, r);
    em_release(r);
    return st;
}

em_tensor *em_outer(const em_tensor *a, const em_tensor *b)
{
    if (CHECK_NOT_NULL("outer", a, b)) return NULL;
    if (a->ndim != 1) return em_error(EM_ERR_SHAPE, "outer: Expected 1-D argument self, but got %d-D", a->ndim);
    if (b->ndim != 1) return em_error(EM_ERR_SHAPE, "outer: Expected 1-D argument vec2, but got %d-D", b->ndim);
    /* a as (n, 1) times b as (1, m) */
    em_tensor *va = view_of(a, 2, (const int64_t[]){a->sizes[0], 1}, (const int64_t[]){a->strides[0], 0});
    em_tensor *vb = view_of(b, 2, (const int64_t[]){1, b->sizes[0]}, (const int64_t[]){0, b->strides[0]});
    em_tensor *r = va && vb ? em_mul(va, vb) : NULL;
    em_release(va), em_release(vb);
    return r;
}
em_tensor *em_ger(const em_tensor *a, const em_tensor *b) { return em_outer(a, b); }
em_status em_outer_out(em_tensor *out, const em_tensor *a, const em_tensor *b)
{
    return assign_out(out, em_outer(a, b), "outer");
}

/* Note [kron as a product of views]
 * With both shapes padded to n dims, kron(a, b)[i0*b0 + j0, ...] =
 * a[i0, ...] * b[j0, ...]: a viewed as (a0, 1, a1, 1, ...) times b viewed as
 * (1, b0, 1, b1, ...) is the result laid out as (a0, b0, a1, b1, ...), which
 * reshapes to (a0*b0, a1*b1, ...) without moving data. */
em_tensor *em_kron(const em_tensor *a, const em_tensor *b)
{
    if (CHECK_NOT_NULL("kron", a, b)) return NULL;
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    if (2 * n > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "kron: at most %d dims are supported, got %d", EM_MAX_DIMS / 2, n);
    int64_t sa[EM_MAX_DIMS], ta[EM_MAX_DIMS], sb[EM_MAX_DIMS], tb[EM_MAX_DIMS], shape[EM_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        int ia = i - (n - a->ndim), ib = i - (n - b->ndim);
        int64_t za = ia >= 0 ? a->sizes[ia] : 1, zb = ib >= 0 ? b->sizes[ib] : 1;
        sa[2 * i] = za, ta[2 * i] = ia >= 0 ? a->strides[ia] : 0;
        sb[2 * i + 1] = zb, tb[2 * i + 1] = ib >= 0 ? b->strides[ib] : 0;
        sa[2 * i + 1] = sb[2 * i] = 1, ta[2 * i + 1] = tb[2 * i] = 0;
        if (em_mul_overflow(za, zb, &shape[i])) return em_error(EM_ERR_MEMORY, "kron: result size overflows");
    }
    em_tensor *va = view_of(a, 2 * n, sa, ta), *vb = view_of(b, 2 * n, sb, tb);
    em_tensor *p = va && vb ? em_mul(va, vb) : NULL, *r = p ? em_reshape(p, n, shape) : NULL;
    em_release(va), em_release(vb), em_release(p);
    return r;
}
em_status em_kron_out(em_tensor *out, const em_tensor *a, const em_tensor *b)
{
    return assign_out(out, em_kron(a, b), "kron");
}

/* ---- trace ---------------------------------------------------------------------- */
em_tensor *em_trace(const em_tensor *t)
{
    if (CHECK_NOT_NULL("trace", t)) return NULL;
    if (t->ndim != 2)
        return em_error(EM_ERR_SHAPE, "trace: expected a matrix, but got tensor with dim %d", t->ndim);
    em_dtype dt = (em_dtype)t->dtype;
    if (dt == EM_BOOL || dt == EM_F16 || dt == EM_BF16 || dt == EM_C32)
        return em_error(EM_ERR_DTYPE, "\"trace\" not implemented for '%s'", em_dtype_scalar_name(dt));
    em_dtype rt = em_dtype_is_float(dt) || em_dtype_is_complex(dt) ? dt : EM_I64;
    em_tensor *r = em_tensor_new(0, NULL, rt, t->storage->device);
    if (!r) return NULL;
    em_call c = {.op = EM_OP_trace, .nin = 1, .nout = 1, .dtype = dt};
    c.out[0] = r;
    c.in[0] = t;
    c.operand_dtypes[0] = (int8_t)rt;
    c.operand_dtypes[1] = (int8_t)dt;
    if (em_dispatch(&c)) {
        em_release(r);
        return NULL;
    }
    return r;
}
