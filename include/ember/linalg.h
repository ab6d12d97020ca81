/* Ember's linear algebra: matrix products (BLAS-backed for float32/float64),
 * einsum, tensordot, outer, kron and trace, with PyTorch 1.13's semantics.
 *
 * Conventions (as core.h): functions returning em_tensor * return a NEW
 * reference (NULL on error); tensor arguments are borrowed; `_out` forms
 * write into `out`, resizing it when its shape differs (its strides are kept
 * when the shape already matches); `_` forms write into `self`, whose shape
 * and dtype must be the result's. out or self may overlap the inputs (even be
 * one of them): the product then goes through a temporary. A failed call
 * changes nothing (short of running out of memory midway).
 *
 * Dtypes: the products (mm, bmm, matmul, mv, dot, addmm, ...) take float32,
 * float64, float16, bfloat16 and the integer dtypes; both operands must have
 * the same dtype ("expected scalar type Float but found Double": no
 * promotion, as PyTorch) and bool is rejected. float16/bfloat16 compute in
 * float32; integers wrap as in C (PyTorch does the same). The out= tensor of a
 * product must have the result's dtype exactly. `beta` and `alpha` are
 * truncated to the integer type for integer tensors (as PyTorch).
 *
 * Autograd: every op here is differentiable for floating dtypes. The
 * products and trace have backward formulas (src/autograd/formulas_linalg.c);
 * matmul, vdot, outer, kron, tensordot and einsum record the products, views
 * and pointwise ops they are made of. The history goes on the tensor the
 * caller gets (out or self for the out= and `_` forms). As in PyTorch, an
 * in-place or out= product that overwrites one of its own operands (say
 * x.addmm_(x, y) with x requiring grad) makes a later backward fail with
 * "modified by an inplace operation". */
#ifndef EMBER_LINALG_H
#define EMBER_LINALG_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- matrix products ------------------------------------------------- */
/* matmul: PyTorch's rules by dimension: 1-d x 1-d is a dot product (0-d);
 * 2-d x 1-d a matrix-vector product; 1-d x 2-d a vector-matrix product;
 * 2-d x 2-d a matrix product; otherwise a batched product whose batch dims
 * broadcast, a 1-d first argument being treated as (1, n) and a 1-d second
 * as (n, 1), the added dim removed from the result. 0-d arguments are an
 * error. */
em_tensor *em_matmul(const em_tensor *a, const em_tensor *b);
em_status em_matmul_out(em_tensor *out, const em_tensor *a, const em_tensor *b);

/* mm: (n, k) x (k, m) -> (n, m). */
em_tensor *em_mm(const em_tensor *a, const em_tensor *b);
em_status em_mm_out(em_tensor *out, const em_tensor *a, const em_tensor *b);
/* bmm: (b, n, k) x (b, k, m) -> (b, n, m); no broadcasting. */
em_tensor *em_bmm(const em_tensor *a, const em_tensor *b);
em_status em_bmm_out(em_tensor *out, const em_tensor *a, const em_tensor *b);
/* mv: (n, k) x (k) -> (n). */
em_tensor *em_mv(const em_tensor *mat, const em_tensor *vec);
em_status em_mv_out(em_tensor *out, const em_tensor *mat, const em_tensor *vec);
/* dot: (n) . (n) -> 0-d. vdot is the same for real dtypes (Ember has no
 * complex dtypes). dot's out= must have the inputs' dtype. */
em_tensor *em_dot(const em_tensor *a, const em_tensor *b);
em_status em_dot_out(em_tensor *out, const em_tensor *a, const em_tensor *b);
em_tensor *em_vdot(const em_tensor *a, const em_tensor *b);
em_status em_vdot_out(em_tensor *out, const em_tensor *a, const em_tensor *b);

/* beta * input + alpha * (product). `input` broadcasts to the product's shape
 * (in the `_` forms it is self and must have that shape and dtype). When
 * beta == 0, input is ignored (nan and inf in it do not propagate). addmv and
 * baddbmm accept an input of another dtype (the result has the operands'
 * dtype); addmm and addbmm require the operands' dtype, as PyTorch. */
/* addmm: mat1 (n, k), mat2 (k, m) -> (n, m). */
em_tensor *em_addmm(const em_tensor *input, const em_tensor *mat1, const em_tensor *mat2, double beta,
                    double alpha);
em_status em_addmm_(em_tensor *self, const em_tensor *mat1, const em_tensor *mat2, double beta, double alpha);
em_status em_addmm_out(em_tensor *out, const em_tensor *input, const em_tensor *mat1, const em_tensor *mat2,
                       double beta, double alpha);
/* baddbmm: batch1 (b, n, k), batch2 (b, k, m) -> (b, n, m). */
em_tensor *em_baddbmm(const em_tensor *input, const em_tensor *batch1, const em_tensor *batch2, double beta,
                      double alpha);
em_status em_baddbmm_(em_tensor *self, const em_tensor *batch1, const em_tensor *batch2, double beta,
                      double alpha);
em_status em_baddbmm_out(em_tensor *out, const em_tensor *input, const em_tensor *batch1,
                         const em_tensor *batch2, double beta, double alpha);
/* addbmm: the products of batch1 (b, n, k) and batch2 (b, k, m) summed over
 * b -> (n, m). */
em_tensor *em_addbmm(const em_tensor *input, const em_tensor *batch1, const em_tensor *batch2, double beta,
                     double alpha);
em_status em_addbmm_(em_tensor *self, const em_tensor *batch1, const em_tensor *batch2, double beta,
                     double alpha);
em_status em_addbmm_out(em_tensor *out, const em_tensor *input, const em_tensor *batch1,
                        const em_tensor *batch2, double beta, double alpha);
/* addmv: mat (n, k), vec (k) -> (n). */
em_tensor *em_addmv(const em_tensor *input, const em_tensor *mat, const em_tensor *vec, double beta,
                    double alpha);
em_status em_addmv_(em_tensor *self, const em_tensor *mat, const em_tensor *vec, double beta, double alpha);
em_status em_addmv_out(em_tensor *out, const em_tensor *input, const em_tensor *mat, const em_tensor *vec,
                       double beta, double alpha);

/* ---- products built on the above ------------------------------------- */
/* einsum: Einstein summation over `n` operands, `equation` as in PyTorch:
 * subscripts [a-zA-Z] per operand separated by ',', an optional "->output",
 * '...' for broadcast dims, spaces ignored. Without "->" the output is the
 * ellipsis dims then the subscripts that appear once, in the order A-Z a-z.
 * A subscript repeated in one operand takes its diagonal; size-1 dims
 * broadcast. Computed by summing out the subscripts only one operand has,
 * then batched matrix products of the operands from left to right (pairs
 * without a summed subscript are multiplied elementwise, with type
 * promotion). As in PyTorch, summing a single operand makes integer and bool
 * values int64, and the matrix products need operands of one dtype. With one
 * operand and nothing summed the result may be a view of it. */
em_tensor *em_einsum(const char *equation, int n, const em_tensor *const *operands);

/* tensordot: contracts the last `dims` dims of a with the first `dims` of b
 * (dims >= 0). */
em_tensor *em_tensordot(const em_tensor *a, const em_tensor *b, int dims);
/* tensordot over explicit dims: dims_a[i] of a against dims_b[i] of b, for
 * i < ndims; the result has a's remaining dims then b's. A contracted pair
 * whose sizes differ is allowed when one is 1 (it is summed out first, as
 * PyTorch). out= must have the result's dtype. */
em_tensor *em_tensordot_dims(const em_tensor *a, const em_tensor *b, int ndims, const int *dims_a,
                             const int *dims_b);
em_status em_tensordot_dims_out(em_tensor *out, const em_tensor *a, const em_tensor *b, int ndims,
                                const int *dims_a, const int *dims_b);

/* outer: (n) x (m) -> (n, m), a[i] * b[j] with type promotion (any dtype,
 * bool included). ger is its alias. out= accepts any dtype the result can be
 * cast to. */
em_tensor *em_outer(const em_tensor *a, const em_tensor *b);
em_status em_outer_out(em_tensor *out, const em_tensor *a, const em_tensor *b);
em_tensor *em_ger(const em_tensor *a, const em_tensor *b);

/* kron: the Kronecker product; the shorter shape is padded with leading 1s
 * and result size i is a.size(i) * b.size(i). Type promotion as mul; out=
 * accepts any dtype the result can be cast to. At most 8 dims (EM_MAX_DIMS/2:
 * it is computed as a product of 2n-dim views). */
em_tensor *em_kron(const em_tensor *a, const em_tensor *b);
em_status em_kron_out(em_tensor *out, const em_tensor *a, const em_tensor *b);

/* trace: sum of the main diagonal of a 2-d tensor (any shape), 0-d result;
 * integer inputs give int64; float16, bfloat16 and bool are rejected, as
 * PyTorch. */
em_tensor *em_trace(const em_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
