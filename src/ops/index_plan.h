/* The contract between the index ops' op layer (src/ops/index.c, scatter.c,
 * index_adv.c) and their one kernel (src/cpu/index.c), plus the op-layer
 * helpers those files share. Private to src/.
 *
 * Note [Indexed loop]
 * gather, scatter*, index_select/add/copy/fill, take, put, index and
 * index_put are all one loop over an iteration shape S. Every operand is a
 * strided view at S: dst (c->out[0], written), src (c->in[0], read) and the
 * int64 index views plan->index[k]. One of dst and src is "indexed": its
 * address also moves by index_k[i] * stride[k] elements, where a negative
 * index_k[i] counts from bound[k]. The op layer builds the views by
 * restriding (PyTorch's TensorIterator trick): e.g. gather along dim 0 views
 * self at index's shape with stride 0 in dim 0, and index supplies the row.
 *   gather:       S = index.shape  dst = out   src = self (indexed)
 *   scatter:      S = index.shape  dst = self (indexed)  src = src
 *   index_select: S = out.shape    the index vector has stride 0 off `dim`
 *   index:        S = result shape, one index view per indexed dim
 * Before anything is written the kernel checks every value of plan->check[k]
 * (the index tensors as given, each value once) against [0, bound) or, with
 * wrap, [-bound, bound); like PyTorch (and NumPy) it skips the check when
 * the loop is empty, unless check_empty. dst and src share one dtype; writes run on one
 * thread when dst is indexed (duplicate indices must not race). */
#ifndef EMBER_INDEX_PLAN_H
#define EMBER_INDEX_PLAN_H

#include "dispatch.h"

typedef enum em_index_mode {
    EM_INDEX_ASSIGN, /* dst = src */
    EM_INDEX_SUM,    /* dst += alpha * src */
    EM_INDEX_PROD,   /* dst *= src */
    EM_INDEX_MEAN,   /* sum, then divide by the number of values reduced */
    EM_INDEX_AMAX,   /* dst = max(dst, src), NaN wins */
    EM_INDEX_AMIN,
} em_index_mode;

/* How an out-of-range index is reported (PyTorch's wording differs by op). */
typedef enum em_index_msg {
    EM_INDEX_MSG_BOUNDS, /* "<prefix>index 5 is out of bounds for dimension 0 with size 3" */
    EM_INDEX_MSG_RANGE,  /* "index out of range in self" */
    EM_INDEX_MSG_FLAT,   /* "out of range: tried to access index 12 on a tensor of 12 elements." */
} em_index_msg;

typedef struct em_index_plan {
    int nindex;
    em_tensor *index[EM_MAX_DIMS];       /* views at S (owned: em_index_plan_clear releases them) */
    const em_tensor *check[EM_MAX_DIMS]; /* borrowed: the values to validate */
    int64_t bound[EM_MAX_DIMS];
    int64_t stride[EM_MAX_DIMS]; /* elements of the indexed operand per unit of index k */
    int dim[EM_MAX_DIMS];        /* the dim named in messages */
    bool wrap;
    bool scatter; /* dst is indexed (else src) */
    em_index_mode mode;
    bool include_self;  /* false: each target is first set to the mode's identity */
    double alpha;       /* EM_INDEX_SUM on floating dtypes */
    int64_t alpha_int;  /* ... and on integral ones */
    em_tensor *count;   /* EM_INDEX_MEAN: int64 zeros shaped like `base`, contiguous (borrowed) */
    em_tensor *base;    /* EM_INDEX_MEAN: the contiguous tensor dst views (borrowed) */
    bool check_empty;   /* validate even when the loop is empty (PyTorch's index_select, index_add) */
    em_status code;     /* error code for an out-of-range index */
    em_index_msg msg;
    const char *prefix; /* EM_INDEX_MSG_BOUNDS: e.g. "index_copy_(): " */
    /* Note [Recorded index calls]: what autograd records */
    em_tensor *result;                        /* the op's result (self when in place) */
    const em_tensor *operands[EM_CALL_MAX_IN - 1]; /* self, index, src...: c->in[1..] */
    int noperands;
    int64_t iparams[2]; /* c->i[0..1]: the dim, a flag */
    double fparam;      /* c->f[0]: alpha */
} em_index_plan;

/* Note [Recorded index calls]
 * The indexed loop's operands are restrided views (Note [Indexed loop]),
 * which are not the op's result and operands: a node made of them would put
 * the history on a view the user never sees. So those views are made with
 * grad mode off (em_index_view: no history), and em_index_run passes the op
 * itself to the recorder: c->in[1..] = plan->operands (the kernel ignores
 * them), c->out[1] = plan->result unless it is dst itself (the formula's
 * gradient is go[nout - 1]), c->i / c->f = the params. An op that makes its
 * loop's views this way must set them, so a differentiable operand is never
 * hidden from the recorder. */
em_tensor *em_index_view(const em_tensor *t, int nd, const int64_t *sizes, const int64_t *strides, int64_t offset);

/* An empty plan: assign, include_self, alpha 1, RuntimeError-style bounds messages. */
void em_index_plan_init(em_index_plan *p);
/* Adds index view `view` (owned by the plan from now on, even on error) of
 * the values in `check`; EM_ERR_SHAPE past EM_MAX_DIMS views. */
em_status em_index_plan_add(em_index_plan *p, em_tensor *view, const em_tensor *check, int64_t bound,
                            int64_t stride, int dim);
void em_index_plan_clear(em_index_plan *p);
/* Runs the indexed loop `op` with dst and src (views at S). */
em_status em_index_run(em_op op, em_tensor *dst, const em_tensor *src, const em_index_plan *p);

/* ---- shared argument checks and shapes -------------------------------- */
/* A view of t at (nd, sizes): t's strides, 0 where t has no dim (0-d t) and
 * at zero_dim (-1: none). t has nd dims, or none. */
em_tensor *em_index_restride(const em_tensor *t, int nd, const int64_t *sizes, int zero_dim);
/* A view at (nd, sizes) of a vector or scalar `index` running along `dim`. */
em_tensor *em_index_along(const em_tensor *index, int nd, const int64_t *sizes, int dim);
/* Size and stride of dim d, a 0-d tensor counting as shape (1,). */
int64_t em_index_size_at(const em_tensor *t, int d);
/* Every tensor on self's device. */
em_status em_index_same_device(const em_tensor *self, int n, const em_tensor *const *ts, const char *op);
/* The out= tail: checks out's dtype equals r's, its overlap with `inputs`,
 * then resizes out and copies r into it. Consumes r (NULL: returns the
 * pending error). */
em_status em_index_write_out(em_tensor *out, em_tensor *r, int n, const em_tensor *const *inputs, const char *op);
/* Out-of-place forms run the in-place op on em_index_clone(self) (a
 * contiguous copy; NULL self is an error), then em_index_finish. */
em_tensor *em_index_clone(const em_tensor *self, const char *op);
/* An in-place op run out of place: a contiguous clone of self, changed by
 * `inplace_status` (the status the in-place call returned on the clone).
 * Releases the clone on error. */
em_tensor *em_index_finish(em_tensor *clone, em_status inplace_status);
/* The 0-d tensor of dtype dt holding `value` (a 0-d tensor, converted). */
em_tensor *em_index_scalar_value(const em_tensor *value, em_dtype dt, const char *op);

#endif
