/* The op table as C: the em_op enum, op names, and the public API of the
 * regular op kinds (pointwise unary, binary, ternary), all expanded from
 * ops.def. Irregular ops are declared in their family headers. */
#ifndef EMBER_OPS_H
#define EMBER_OPS_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum em_op {
#define EM_OP(name, flags) EM_OP_##name,
#include "ops.def"
#undef EM_OP
    EM_OP_COUNT
} em_op;

/* Result dtype of a pointwise op, from its promoted input dtype. */
typedef enum em_rule {
    EM_RULE_SAME,    /* unary: the input's dtype (neg, abs, floor) */
    EM_RULE_PROMOTE, /* the promoted dtype of the inputs (add, mul, where) */
    EM_RULE_FLOAT,   /* promoted; integral and bool become the default float (exp, div) */
    EM_RULE_BOOL,    /* bool result computed in the input's dtype (isnan) */
    EM_RULE_COMPARE, /* bool result computed in the promoted dtype (eq, lt) */
    EM_RULE_LOGICAL, /* bool result, inputs read as bools (logical_and) */
    EM_RULE_DOUBLE,  /* float64: float_power */
    EM_RULE_SELECT,  /* ternary: first input read as bool, result promoted from the others (where) */
} em_rule;

enum {
    EM_F_DIFF = 1,      /* differentiable: has a backward formula */
    EM_F_NO_INPLACE = 2, /* PyTorch has no in-place form */
    EM_F_COMPOSITE = 4,  /* written with other ops: no kernel, no backward of its own */
    EM_F_GRAD_PARTS = 8  /* has a kernel, but when autograd may record it runs as recorded ops
                            (its results are views, or sized by data, which a node cannot hold) */
};

/* Tensor.resize_ (and out= semantics): gives t the shape, contiguous; keeps
 * the storage if large enough, else gives t a fresh storage (contents then
 * uninitialized). */
em_status em_resize_(em_tensor *t, int ndim, const int64_t *sizes);

typedef enum em_op_kind { EM_KIND_OTHER, EM_KIND_UNARY, EM_KIND_BINARY, EM_KIND_TERNARY } em_op_kind;

typedef struct em_op_info {
    const char *name;
    uint8_t kind;    /* em_op_kind */
    uint8_t rule;    /* em_rule, pointwise kinds only */
    uint8_t nparams; /* double params after the tensor arguments */
    uint8_t flags;   /* EM_F_* */
} em_op_info;
extern const em_op_info em_ops[EM_OP_COUNT];

/* Parameter-list plumbing for the kind macros: EM_PDECL(2, (a, b)) gives
 * ", double a, double b" and EM_PARGS(2, (a, b)) gives "a, b". */
#define EM_PD0()
#define EM_PD1(a) , double a
#define EM_PD2(a, b) , double a, double b
#define EM_PD3(a, b, c) , double a, double b, double c
#define EM_PDECL(n, ps) EM_PD##n ps
#define EM_PA0()
#define EM_PA1(a) a
#define EM_PA2(a, b) a, b
#define EM_PA3(a, b, c) a, b, c
#define EM_PARGS(n, ps) EM_PA##n ps

/* For every pointwise op `f` the table gives three C functions:
 *   em_tensor *em_f(x..., params)            new tensor
 *   em_status  em_f_(self, others..., params) in place on self (a view is fine)
 *   em_status  em_f_out(out, x..., params)    into out, resized if its shape differs */
#define EM_OP(name, flags)
#define EM_UNARY(name, rule, flags, n, ps)                                                  \
    em_tensor *em_##name(const em_tensor *x EM_PDECL(n, ps));                               \
    em_status em_##name##_(em_tensor *self EM_PDECL(n, ps));                                \
    em_status em_##name##_out(em_tensor *out, const em_tensor *x EM_PDECL(n, ps));
#define EM_BINARY(name, rule, flags, n, ps)                                                 \
    em_tensor *em_##name(const em_tensor *a, const em_tensor *b EM_PDECL(n, ps));           \
    em_status em_##name##_(em_tensor *self, const em_tensor *other EM_PDECL(n, ps));        \
    em_status em_##name##_out(em_tensor *out, const em_tensor *a, const em_tensor *b EM_PDECL(n, ps));
#define EM_TERNARY(name, rule, flags, n, ps)                                                \
    em_tensor *em_##name(const em_tensor *a, const em_tensor *b, const em_tensor *c EM_PDECL(n, ps)); \
    em_status em_##name##_(em_tensor *self, const em_tensor *b, const em_tensor *c EM_PDECL(n, ps));  \
    em_status em_##name##_out(em_tensor *out, const em_tensor *a, const em_tensor *b,       \
                              const em_tensor *c EM_PDECL(n, ps));
#include "ops.def"
#undef EM_OP
#undef EM_UNARY
#undef EM_BINARY
#undef EM_TERNARY

/* The conjugate bit (src/ops/complex.c; Note [Conjugate bit]). em_conj: a
 * complex t's conjugate as a view of t with the conj bit toggled (no copy);
 * a real t itself. em_neg_view: t's negation as a view with the neg bit
 * toggled. em_resolve_conj / em_resolve_neg: t itself when the bit is clear,
 * else a new tensor holding t's values without bits. All differentiable. */
em_tensor *em_conj(const em_tensor *t);
em_tensor *em_neg_view(const em_tensor *t);
bool em_is_conj(const em_tensor *t);
bool em_is_neg(const em_tensor *t);
em_tensor *em_resolve_conj(const em_tensor *t);
em_tensor *em_resolve_neg(const em_tensor *t);
/* The complex conjugate as a new tensor without bits (conj_physical); a real
 * t is copied. em_conj_if_complex gives a real t back itself (a new
 * reference): what backward formulas multiply by (Note [Complex gradients]). */
em_tensor *em_conj_physical(const em_tensor *t);
em_tensor *em_conj_if_complex(const em_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
