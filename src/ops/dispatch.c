/* The op table's data (names, kinds, rules), device dispatch, and the
 * argument checks every op family shares: casting, out= resizing, overlap. */
#include "dispatch.h"
#include <stdlib.h>

const em_op_info em_ops[EM_OP_COUNT] = {
#define EM_OP(nm, fl) [EM_OP_##nm] = {.name = #nm, .kind = EM_KIND_OTHER, .flags = (fl)},
#define EM_UNARY(nm, r, fl, n, ps) [EM_OP_##nm] = {.name = #nm, .kind = EM_KIND_UNARY, .rule = r, .nparams = n, .flags = (fl)},
#define EM_BINARY(nm, r, fl, n, ps) [EM_OP_##nm] = {.name = #nm, .kind = EM_KIND_BINARY, .rule = r, .nparams = n, .flags = (fl)},
#define EM_TERNARY(nm, r, fl, n, ps) [EM_OP_##nm] = {.name = #nm, .kind = EM_KIND_TERNARY, .rule = r, .nparams = n, .flags = (fl)},
#include "ember/ops.def"
#undef EM_OP
#undef EM_UNARY
#undef EM_BINARY
#undef EM_TERNARY
};

/* Note [Complex kernels]
 * The ops whose kernels take complex tensors. Any other op given one fails
 * here with PyTorch's "not implemented for 'ComplexFloat'" before a kernel
 * runs, so that no per-dtype table is ever read at a complex slot it lacks. */
static const bool complex_kernels[EM_OP_COUNT] = {
#define OK(op) [EM_OP_##op] = true,
    OK(copy) OK(fill) OK(add) OK(sub) OK(mul) OK(div) OK(pow) OK(neg) OK(square) OK(reciprocal) OK(exp) OK(log)
    OK(sqrt) OK(rsqrt) OK(sigmoid) OK(sin) OK(cos) OK(tan) OK(asin) OK(acos) OK(atan) OK(sinh) OK(cosh) OK(tanh) OK(asinh) OK(acosh)
    OK(atanh) OK(eq) OK(ne) OK(where) OK(sum) OK(mean) OK(prod) OK(mm) OK(bmm) OK(addmm) OK(baddbmm) OK(addbmm)
    OK(mv) OK(addmv) OK(dot) OK(cat) OK(stack) OK(hstack) OK(vstack) OK(dstack) OK(flip) OK(fliplr) OK(flipud)
    OK(roll) OK(rot90) OK(repeat) OK(tile) OK(index_select) OK(index_add) OK(gather) OK(scatter_add) OK(take) OK(put) OK(index) OK(index_put)
    OK(tril) OK(triu) OK(masked_fill) OK(cumsum) OK(cumprod)
    OK(fft_c2c) OK(fft_r2c) OK(fft_c2r)
    OK(linalg_lu_factor_ex) OK(linalg_solve_ex) OK(linalg_lu_solve) OK(lu_pivots_to_permutation)
    OK(linalg_solve_triangular) OK(linalg_cholesky_ex) OK(linalg_qr) OK(geqrf) OK(linalg_householder_product) OK(ormqr)
    OK(linalg_eig) OK(linalg_svd) OK(linalg_eigh) OK(linalg_lstsq) OK(linalg_ldl_factor_ex) OK(linalg_ldl_solve)
    OK(diag_embed) OK(diag) OK(diagflat) OK(trace) OK(eye) OK(index_fill) OK(index_copy) OK(scatter)
    OK(masked_select) OK(masked_scatter) OK(repeat_interleave) OK(meshgrid) OK(cartesian_prod)
#undef OK
};

static em_status check_complex(const em_call *c)
{
    if (complex_kernels[c->op]) return EM_OK;
    for (int k = 0; k < c->nin + c->nout; k++) {
        const em_tensor *t = k < c->nin ? c->in[k] : c->out[k - c->nin];
        if (t && em_dtype_is_complex((em_dtype)t->dtype))
            return em_fail(EM_ERR_DTYPE, "\"%s_cpu\" not implemented for '%s'", em_ops[c->op].name,
                           em_dtypes[t->dtype].scalar_name);
    }
    return EM_OK;
}

/* Note [Autograd stage]: src/autograd sets this the first time a tensor is
 * made to require grad; from then on a call touching a tensor with autograd
 * metadata goes through it, which records the graph around the kernel. */
em_status (*em_autograd_stage)(const em_call *c, em_kernel k);

void em_bump_outputs(const em_call *c)
{
    for (int k = 0; k < c->nout; k++)
        if (c->out[k]) em_bump_version(c->out[k]); /* a kernel may have an optional output */
}

static bool has_autograd(const em_call *c)
{
    for (int i = 0; i < c->nin; i++)
        if (c->in[i] && c->in[i]->autograd) return true;
    for (int k = 0; k < c->nout; k++)
        if (c->out[k] && c->out[k]->autograd) return true;
    return false;
}

static bool has_lazy_bits(const em_call *c)
{
    for (int i = 0; i < c->nin; i++)
        if (c->in[i] && em_has_lazy_bits(c->in[i])) return true;
    for (int k = 0; k < c->nout; k++)
        if (c->out[k] && em_has_lazy_bits(c->out[k])) return true;
    return false;
}

/* The kernel, recorded by autograd when an input needs it; a conjugate (or
 * negative) view among its operands is resolved around it (Note [Conjugate bit]). */
static em_status run(const em_call *c, em_kernel k)
{
    if (has_lazy_bits(c)) k = em_resolving_kernel;
    if (em_autograd_stage && em_grad_mode() && has_autograd(c)) return em_autograd_stage(c, k);
    em_status st = k(c);
    if (st == EM_OK) em_bump_outputs(c);
    return st;
}

/* The device of the call: its first tensor's (outputs may be optional). */
static em_device call_device(const em_call *c)
{
    return (c->nout && c->out[0] ? c->out[0] : c->in[0])->storage->device;
}

em_kernel em_call_kernel(const em_call *c)
{
    const em_device_impl *impl = em_device_get(call_device(c));
    return impl ? impl->kernels[c->op] : NULL;
}

em_status em_dispatch(const em_call *c)
{
    em_device dev = call_device(c);
    for (int k = 0; k < c->nin; k++) {
        if (!c->in[k]) continue;
        em_device d = c->in[k]->storage->device;
        /* PyTorch's rule: a 0-d CPU tensor (a Python number's wrapper) may
         * join an op on another device */
        bool cpu_scalar = d.type == EM_CPU && c->in[k]->ndim == 0;
        if (!em_same_device(d, dev) && !cpu_scalar)
            return em_fail(EM_ERR_DEVICE, "Expected all tensors to be on the same device, but found at least two "
                           "devices, %s and %s!", em_device_str(dev), em_device_str(d));
    }
    if (check_complex(c)) return em_error_code();
    const em_device_impl *impl = em_device_get(dev);
    if (!impl) return em_error_code();
    em_kernel k = impl->kernels[c->op];
    if (!k) return em_fail(EM_ERR_NOT_IMPLEMENTED, "%s: not implemented for %s", em_ops[c->op].name, impl->name);
    for (int j = 0; j < c->nout; j++)
        if (c->out[j] && (c->out[j]->flags & EM_FLAG_INFERENCE) && !em_inference_mode())
            return em_fail(EM_ERR_RUNTIME, "Inplace update to inference tensor outside InferenceMode is not allowed."
                           "You can make a clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.");
    if (!em_profiler_on()) return run(c, k);
    int64_t span = em_profile_begin(em_ops[c->op].name, EM_PROFILE_OP, c->nin, c->in);
    for (int j = 0; j < c->nout; j++) em_profile_claim_output(span, c->out[j]);
    em_status st = run(c, k);
    em_profile_end(span);
    return st;
}

bool em_can_cast(em_dtype from, em_dtype to)
{
    if (em_dtype_is_complex(from) && !em_dtype_is_complex(to)) return false;
    if (em_dtype_is_float(from) && !em_dtype_is_float(to) && !em_dtype_is_complex(to)) return false;
    if (from != EM_BOOL && to == EM_BOOL) return false;
    return true;
}

em_status em_resize_(em_tensor *t, int ndim, const int64_t *sizes)
{
    if (EM_NULL(t) || em_check_sizes(ndim, sizes, (em_dtype)t->dtype, "resize_")) return em_error_code();
    int64_t numel = em_shape_numel(ndim, sizes), need;
    if (__builtin_add_overflow(t->offset, numel, &need) || em_mul_overflow(need, (int64_t)em_dtypes[t->dtype].size, &need))
        return em_fail(EM_ERR_MEMORY, "resize_: storage size calculation overflowed with sizes=%s",
                       em_shape_str(ndim, sizes));
    if ((size_t)need > t->storage->nbytes) {
        em_storage *s = em_storage_new((size_t)numel * em_dtypes[t->dtype].size, t->storage->device);
        if (!s) return em_error_code();
        em_storage_release(t->storage);
        t->storage = s;
        t->offset = 0;
    }
    t->ndim = ndim;
    memcpy(t->sizes, sizes, ndim * sizeof *sizes);
    em_contiguous_strides(ndim, sizes, t->strides);
    return EM_OK;
}

/* Byte range [lo, hi) a non-empty tensor's elements span in its storage. */
static void span(const em_tensor *t, int64_t *lo, int64_t *hi)
{
    int64_t size = (int64_t)em_dtypes[t->dtype].size, last = 0;
    for (int i = 0; i < t->ndim; i++) last += (t->sizes[i] - 1) * t->strides[i];
    *lo = t->offset * size;
    *hi = (t->offset + last) * size + size;
}

static bool same_geometry(const em_tensor *a, const em_tensor *b)
{
    if (a->offset != b->offset || a->ndim != b->ndim || a->dtype != b->dtype) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i] || (a->sizes[i] > 1 && a->strides[i] != b->strides[i])) return false;
    return true;
}

em_status em_check_no_overlap(const em_tensor *written, const em_tensor *read, const char *op)
{
    if (!read || read->storage != written->storage || !em_numel(read) || !em_numel(written)) return EM_OK;
    /* like PyTorch, only dense tensors are compared; other layouts are "too hard" and allowed */
    if (!em_tensor_is_dense(written) || !em_tensor_is_dense(read)) return EM_OK;
    int64_t alo, ahi, blo, bhi;
    span(written, &alo, &ahi);
    span(read, &blo, &bhi);
    if (alo < bhi && blo < ahi)
        return em_fail(EM_ERR_RUNTIME, "%s: unsupported operation: some elements of the input tensor and the "
                       "written-to tensor refer to a single memory location. Please clone() the tensor before "
                       "performing the operation.", op);
    return EM_OK;
}

em_status em_check_overlap(const em_tensor *out, const em_tensor *in, const char *op)
{
    if (em_numel(out) == 0) return EM_OK;
    for (int i = 0; i < out->ndim; i++)
        if (out->sizes[i] > 1 && out->strides[i] == 0)
            return em_fail(EM_ERR_RUNTIME, "%s: unsupported operation: more than one element of the written-to tensor "
                           "refers to a single memory location. Please clone() the tensor before performing the "
                           "operation.", op);
    if (!in || same_geometry(out, in)) return EM_OK; /* elementwise in place: each element read before written */
    return em_check_no_overlap(out, in, op);
}
