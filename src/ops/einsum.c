/* einsum and tensordot (include/ember/linalg.h): contractions composed from
 * views, matmul and mul. einsum labels every dim of every operand, takes
 * diagonals and broadcasts size-1 dims through strides, sums out the labels
 * only one operand has, and contracts the operands left to right with
 * batched matrix products. Nothing here touches tensor data. */
#include "dispatch.h"
#include <stdlib.h>

/* Dim ids: the 52 labels A-Z a-z, then one id per ellipsis dim. */
#define NLABELS 52
#define NIDS (NLABELS + EM_MAX_DIMS)

static int label_id(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    return -1;
}
static char id_char(int id) { return (char)(id < 26 ? 'A' + id : 'a' + id - 26); }

/* An operand of the contraction: a view of `t`'s storage whose dims carry ids
 * (size-1 dims are dropped: they broadcast). Owns a reference to t. */
typedef struct lview {
    em_tensor *t;
    int n;
    int id[EM_MAX_DIMS];
    int64_t size[EM_MAX_DIMS], stride[EM_MAX_DIMS];
} lview;

/* The tensor of ids `order` (n of them) over v's storage; ids v lacks become
 * size-1 dims. A new reference. */
static em_tensor *lview_tensor(const lview *v, int n, const int *order)
{
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        sizes[i] = 1, strides[i] = 0;
        for (int d = 0; d < v->n; d++)
            if (v->id[d] == order[i]) sizes[i] = v->size[d], strides[i] = v->stride[d];
    }
    return em_tensor_view(v->t, n, sizes, strides, v->t->offset);
}

/* Makes *v describe tensor t (taking its reference), dims labelled `ids`. */
static void lview_set(lview *v, em_tensor *t, int n, const int *ids)
{
    em_release(v->t);
    v->t = t;
    v->n = 0;
    for (int d = 0; d < n; d++) {
        if (t->sizes[d] == 1) continue;
        v->id[v->n] = ids[d], v->size[v->n] = t->sizes[d], v->stride[v->n++] = t->strides[d];
    }
}

static bool lview_has(const lview *v, int id)
{
    for (int d = 0; d < v->n; d++)
        if (v->id[d] == id) return true;
    return false;
}

/* Sums v over the ids flagged in `drop`, as a matrix-vector product with
 * ones: (kept..., summed) x (summed). Integer and bool values are summed as
 * int64, torch.sum's dtype (`promote` asks for that even with nothing left to
 * sum, as PyTorch's single-operand einsum does). */
static em_status lview_sum(lview *v, const bool *drop, bool promote)
{
    int order[EM_MAX_DIMS], nk = 0, nd = 0;
    int64_t summed = 1;
    for (int d = 0; d < v->n; d++)
        if (!drop[v->id[d]]) order[nk++] = v->id[d];
    for (int d = 0; d < v->n; d++)
        if (drop[v->id[d]]) order[nk + nd++] = v->id[d], summed *= v->size[d];
    em_dtype dt = (em_dtype)v->t->dtype;
    bool to_long = (nd || promote) && !em_dtype_is_float(dt);
    if (!nd && !to_long) return EM_OK;
    em_tensor *x = lview_tensor(v, nk + nd, order), *flat = NULL, *ones = NULL, *r = NULL;
    if (x && to_long) {
        em_tensor *l = em_to_dtype(x, EM_I64);
        em_release(x);
        x = l;
    }
    if (x && nd) {
        int64_t shape[EM_MAX_DIMS];
        memcpy(shape, x->sizes, nk * sizeof *shape);
        shape[nk] = summed;
        flat = em_reshape(x, nk + 1, shape);
        ones = flat ? em_ones(1, &summed, (em_dtype)flat->dtype) : NULL;
        r = ones ? em_matmul(flat, ones) : NULL;
    } else {
        r = em_retain(x);
    }
    em_release(x), em_release(flat), em_release(ones);
    if (!r) return em_error_code();
    lview_set(v, r, nk, order);
    return EM_OK;
}

/* ---- the equation ---------------------------------------------------------- */
typedef struct einsum_eq {
    int (*ids)[EM_MAX_DIMS]; /* per operand, per dim: its id */
    int ell_ndim;            /* dims the ellipsis covers (the most of any operand) */
    int nout, out[NIDS];
    int64_t size[NIDS]; /* broadcast size of each id; 1 when unseen */
} einsum_eq;

/* Parses `eq` for the operands, checking subscripts against their dims. */
static em_status parse(const char *eq, int n, const em_tensor *const *ops, einsum_eq *e)
{
    const char *arrow = strstr(eq, "->");
    int count[NLABELS] = {0};
    int k = 0, nsub = 0, ell_at = -1, dots = 0, nops_eq = 1;
    int labels[4 * EM_MAX_DIMS]; /* the operand's subscripts: ids, -1 for the ellipsis */
    for (const char *c = eq; *c && (!arrow || c < arrow); c++)
        nops_eq += *c == ',';
    if (nops_eq > n) return em_fail(EM_ERR_RUNTIME, "einsum(): fewer operands were provided than specified in the equation");
    if (nops_eq < n) return em_fail(EM_ERR_RUNTIME, "einsum(): more operands were provided than specified in the equation");
    for (int i = 0;; i++) {
        char c = eq[i];
        if (c == ' ') continue;
        if (c == '.') {
            if (ell_at >= 0) return em_fail(EM_ERR_RUNTIME, "einsum(): found '.' for operand %d for which an ellipsis was already found", k);
            if (++dots == 3) ell_at = nsub, dots = 0, labels[nsub++] = -1;
            continue;
        }
        if (dots) return em_fail(EM_ERR_RUNTIME, "einsum(): found '.' for operand %d that is not part of any ellipsis", k);
        if (c == ',' || c == 0 || eq + i == arrow) { /* end of operand k: map its subscripts to dims */
            const em_tensor *t = ops[k];
            int nlab = nsub - (ell_at >= 0);
            if (ell_at < 0 ? nlab != t->ndim : nlab > t->ndim)
                return em_fail(EM_ERR_SHAPE, ell_at < 0 ? "einsum(): the number of subscripts in the equation (%d) does not "
                               "match the number of dimensions (%d) for operand %d and no ellipsis was given"
                               : "einsum(): the number of subscripts in the equation (%d) is more than the number of "
                               "dimensions (%d) for operand %d", nlab, t->ndim, k);
            int ell = t->ndim - nlab, d = 0;
            if (ell > e->ell_ndim) e->ell_ndim = ell;
            for (int s = 0; s < nsub; s++) {
                if (labels[s] >= 0) {
                    e->ids[k][d++] = labels[s];
                    count[labels[s]]++;
                } else {
                    for (int j = 0; j < ell; j++) e->ids[k][d++] = j - ell; /* from the right: -ell..-1 */
                }
            }
            if (c != ',') break;
            k++, nsub = 0, ell_at = -1;
            continue;
        }
        int id = label_id(c);
        if (id < 0)
            return em_fail(EM_ERR_RUNTIME, "einsum(): invalid subscript given at index %d in the equation string, "
                           "subscripts must be in [a-zA-Z]", i);
        if (nsub >= 4 * EM_MAX_DIMS - 1)
            return em_fail(EM_ERR_SHAPE, "einsum(): too many subscripts for operand %d", k);
        labels[nsub++] = id;
    }
    /* ellipsis dims right-aligned onto the ids after the labels */
    for (k = 0; k < n; k++)
        for (int d = 0; d < ops[k]->ndim; d++)
            if (e->ids[k][d] < 0) e->ids[k][d] += NLABELS + e->ell_ndim;
    if (!arrow) { /* implicit output: the ellipsis, then the labels used once, in order */
        for (int j = 0; j < e->ell_ndim; j++) e->out[e->nout++] = NLABELS + j;
        for (int id = 0; id < NLABELS; id++)
            if (count[id] == 1) e->out[e->nout++] = id;
        return EM_OK;
    }
    bool seen[NIDS] = {0}, ell = false;
    dots = 0;
    for (const char *c = arrow + 2; *c; c++) {
        if (*c == ' ') continue;
        if (*c == '.') {
            if (ell) return em_fail(EM_ERR_RUNTIME, "einsum(): found '.' for output but an ellipsis (...) was already found");
            if (++dots == 3) {
                ell = true, dots = 0;
                for (int j = 0; j < e->ell_ndim; j++) e->out[e->nout++] = NLABELS + j;
            }
            continue;
        }
        if (dots) return em_fail(EM_ERR_RUNTIME, "einsum(): found '.' for output that is not part of any ellipsis (...)");
        int id = label_id(*c);
        if (id < 0)
            return em_fail(EM_ERR_RUNTIME, "einsum(): invalid subscript given at index %d in the equation string, "
                           "subscripts must be in [a-zA-Z]", (int)(c - eq));
        if (!count[id])
            return em_fail(EM_ERR_RUNTIME, "einsum(): output subscript %c does not appear in the equation for any input "
                           "operand", *c);
        if (seen[id]) return em_fail(EM_ERR_RUNTIME, "einsum(): output subscript %c appears more than once in the output", *c);
        seen[id] = true;
        e->out[e->nout++] = id;
    }
    if (dots) return em_fail(EM_ERR_RUNTIME, "einsum(): found '.' for output that is not part of any ellipsis (...)");
    return EM_OK;
}

/* Operand k as an lview: repeated ids become their diagonal (strides add),
 * sizes are checked against the broadcast size of each id. */
static em_status make_lview(const em_tensor *t, int k, einsum_eq *e, lview *v)
{
    v->t = em_retain((em_tensor *)t);
    v->n = 0;
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS];
    int ids[EM_MAX_DIMS], n = 0;
    for (int d = 0; d < t->ndim; d++) {
        int id = e->ids[k][d], p = 0;
        while (p < n && ids[p] != id) p++;
        if (p < n) { /* repeated: the diagonal */
            if (sizes[p] != t->sizes[d])
                return em_fail(EM_ERR_SHAPE, "einsum(): subscript %c is repeated for operand %d but the sizes don't "
                               "match, %lld != %lld", id_char(id), k, (long long)t->sizes[d], (long long)sizes[p]);
            strides[p] += t->strides[d];
            continue;
        }
        ids[n] = id, sizes[n] = t->sizes[d], strides[n++] = t->strides[d];
        int64_t *g = &e->size[id];
        if (t->sizes[d] != 1 && *g != 1 && *g != t->sizes[d]) {
            if (id < NLABELS)
                return em_fail(EM_ERR_SHAPE, "einsum(): subscript %c has size %lld for operand %d which does not "
                               "broadcast with previously seen size %lld", id_char(id), (long long)t->sizes[d], k,
                               (long long)*g);
            return em_fail(EM_ERR_SHAPE, "einsum(): dimension %d covered by ellipsis in operand %d has size %lld which "
                           "does not broadcast with previously seen ellipsis with size %lld for the respective "
                           "dimension", id - NLABELS, k, (long long)t->sizes[d], (long long)*g);
        }
        if (t->sizes[d] != 1) *g = t->sizes[d];
    }
    for (int d = 0; d < n; d++) {
        if (sizes[d] == 1) continue;
        v->id[v->n] = ids[d], v->size[v->n] = sizes[d], v->stride[v->n++] = strides[d];
    }
    return EM_OK;
}

static int64_t pair_size(const lview *L, const lview *R, int id)
{
    for (int k = 0; k < 2; k++) {
        const lview *v = k ? R : L;
        for (int d = 0; d < v->n; d++)
            if (v->id[d] == id) return v->size[d];
    }
    return 1;
}

/* Contracts L with R into L: ids both have and `keep` lacks are summed
 * (a batched matmul over the ids both keep), ids only one has and `keep`
 * lacks are summed out of it first; with no shared id to sum, an
 * elementwise product. */
static em_status contract_pair(lview *L, lview *R, const bool *keep)
{
    bool dropL[NIDS] = {0}, dropR[NIDS] = {0};
    int batch[EM_MAX_DIMS], lk[EM_MAX_DIMS], rk[EM_MAX_DIMS], con[EM_MAX_DIMS], nb = 0, nl = 0, nr = 0, nc = 0;
    for (int d = 0; d < L->n; d++) {
        int id = L->id[d];
        if (lview_has(R, id)) {
            if (keep[id]) batch[nb++] = id;
            else con[nc++] = id;
        } else if (keep[id]) {
            lk[nl++] = id;
        } else {
            dropL[id] = true;
        }
    }
    for (int d = 0; d < R->n; d++) {
        int id = R->id[d];
        if (lview_has(L, id)) continue;
        if (keep[id]) rk[nr++] = id;
        else dropR[id] = true;
    }
    if (lview_sum(L, dropL, false) || lview_sum(R, dropR, false)) return em_error_code();
    int ids[3 * EM_MAX_DIMS], n = 0;
    if (nb + nl + nr > EM_MAX_DIMS || nb + 2 > EM_MAX_DIMS)
        return em_fail(EM_ERR_SHAPE, "einsum(): an intermediate result has more than %d dims", EM_MAX_DIMS);
    em_tensor *a = NULL, *b = NULL, *r = NULL;
    if (!nc) { /* nothing shared to sum: L * R broadcast over the union of ids */
        memcpy(ids, batch, nb * sizeof *ids), n = nb;
        memcpy(ids + n, lk, nl * sizeof *ids), n += nl;
        memcpy(ids + n, rk, nr * sizeof *ids), n += nr;
        a = lview_tensor(L, n, ids);
        b = a ? lview_tensor(R, n, ids) : NULL;
        r = b ? em_mul(a, b) : NULL;
    } else {
        if (L->t->dtype == EM_BOOL || R->t->dtype == EM_BOOL)
            return em_fail(EM_ERR_DTYPE, "\"bmm\" not implemented for 'Bool'");
        /* (batch..., lk, con) x (batch..., con, rk), each group flattened */
        int64_t shape[EM_MAX_DIMS], m = 1, kk = 1, q = 1;
        for (int i = 0; i < nb; i++) shape[i] = pair_size(L, R, batch[i]);
        for (int i = 0; i < nl; i++) m *= pair_size(L, R, lk[i]);
        for (int i = 0; i < nc; i++) kk *= pair_size(L, R, con[i]);
        for (int i = 0; i < nr; i++) q *= pair_size(L, R, rk[i]);
        int la[3 * EM_MAX_DIMS], ra[3 * EM_MAX_DIMS];
        memcpy(la, batch, nb * sizeof *la), memcpy(la + nb, lk, nl * sizeof *la), memcpy(la + nb + nl, con, nc * sizeof *la);
        memcpy(ra, batch, nb * sizeof *ra), memcpy(ra + nb, con, nc * sizeof *ra), memcpy(ra + nb + nc, rk, nr * sizeof *ra);
        em_tensor *av = lview_tensor(L, nb + nl + nc, la), *bv = av ? lview_tensor(R, nb + nc + nr, ra) : NULL;
        shape[nb] = m, shape[nb + 1] = kk;
        a = bv ? em_reshape(av, nb + 2, shape) : NULL;
        shape[nb] = kk, shape[nb + 1] = q;
        b = a ? em_reshape(bv, nb + 2, shape) : NULL;
        em_tensor *p = b ? em_matmul(a, b) : NULL;
        em_release(av), em_release(bv);
        memcpy(ids, batch, nb * sizeof *ids), n = nb;
        memcpy(ids + n, lk, nl * sizeof *ids), n += nl;
        memcpy(ids + n, rk, nr * sizeof *ids), n += nr;
        for (int i = 0; i < n; i++) shape[i] = pair_size(L, R, ids[i]);
        r = p ? em_reshape(p, n, shape) : NULL;
        em_release(p);
    }
    em_release(a), em_release(b);
    if (!r) return em_error_code();
    lview_set(L, r, n, ids);
    return EM_OK;
}

/* ---- einsum ------------------------------------------------------------------- */
static void lviews_release(lview *v, int n)
{
    for (int k = 0; k < n; k++) em_release(v[k].t);
}

em_tensor *em_einsum(const char *equation, int n, const em_tensor *const *operands)
{
    if (!equation) return em_error(EM_ERR_VALUE, "einsum(): equation is NULL");
    if (n < 1 || !operands) return em_error(EM_ERR_VALUE, "einsum(): must provide at least one operand");
    for (int k = 0; k < n; k++)
        if (!operands[k]) return em_error(EM_ERR_VALUE, "einsum(): operand %d is NULL", k);
    einsum_eq e = {.ids = calloc(n, sizeof *e.ids)};
    lview *v = calloc(n, sizeof *v);
    em_tensor *result = NULL;
    for (int id = 0; id < NIDS; id++) e.size[id] = 1;
    if (!e.ids || !v) {
        em_error(EM_ERR_MEMORY, "einsum(): out of memory");
        goto done;
    }
    if (parse(equation, n, operands, &e)) goto done;
    if (e.nout > EM_MAX_DIMS) {
        em_error(EM_ERR_SHAPE, "einsum(): the output has %d dims, more than %d", e.nout, EM_MAX_DIMS);
        goto done;
    }
    for (int k = 0; k < n; k++)
        if (make_lview(operands[k], k, &e, &v[k])) goto done;
    bool in_out[NIDS] = {0};
    for (int i = 0; i < e.nout; i++) in_out[e.out[i]] = true;
    if (n == 1) {
        bool drop[NIDS], any = false;
        for (int id = 0; id < NIDS; id++) drop[id] = !in_out[id];
        for (int d = 0; d < operands[0]->ndim; d++) any |= !in_out[e.ids[0][d]];
        if (lview_sum(&v[0], drop, any)) goto done;
    }
    for (int k = 1; k < n; k++) { /* v[0] accumulates operands 0..k */
        bool keep[NIDS];
        memcpy(keep, in_out, sizeof keep);
        for (int j = k + 1; j < n; j++)
            for (int d = 0; d < operands[j]->ndim; d++) keep[e.ids[j][d]] = true;
        if (contract_pair(&v[0], &v[k], keep)) goto done;
    }
    result = lview_tensor(&v[0], e.nout, e.out);
done:
    if (v) lviews_release(v, n);
    free(v);
    free(e.ids);
    return result;
}

/* ---- tensordot ------------------------------------------------------------------ */
/* a's dim d has id d; b's contracted dims take their partner's id, its other
 * dims ids EM_MAX_DIMS + d. The contraction is einsum's pair step. */
static em_tensor *tensordot_impl(const em_tensor *a, const em_tensor *b, int n, const int *da, const int *db)
{
    if (!a || !b) return em_error(EM_ERR_VALUE, "tensordot: argument is NULL");
    if (n < 0 || n > EM_MAX_DIMS || (n && (!da || !db)))
        return em_error(EM_ERR_VALUE, "tensordot: bad list of dims");
    if (a->dtype != b->dtype)
        return em_error(EM_ERR_DTYPE, "expected scalar type %s but found %s", em_dtype_scalar_name((em_dtype)a->dtype),
                        em_dtype_scalar_name((em_dtype)b->dtype));
    if (a->dtype == EM_BOOL) return em_error(EM_ERR_DTYPE, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
    int ids_a[EM_MAX_DIMS], ids_b[EM_MAX_DIMS];
    bool used_a[EM_MAX_DIMS] = {0}, used_b[EM_MAX_DIMS] = {0}, keep[NIDS] = {0};
    for (int d = 0; d < a->ndim; d++) ids_a[d] = d;
    for (int d = 0; d < b->ndim; d++) ids_b[d] = EM_MAX_DIMS + d;
    for (int i = 0; i < n; i++) {
        int x = em_wrap_dim(da[i], a->ndim, "tensordot"), y = x < 0 ? -1 : em_wrap_dim(db[i], b->ndim, "tensordot");
        if (x < 0 || y < 0) return NULL;
        if (x >= a->ndim || y >= b->ndim) /* a 0-d operand has no dim to contract */
            return em_error(EM_ERR_INDEX, "tensordot: Dimension out of range: a 0-d tensor has no dim %d",
                            x >= a->ndim ? da[i] : db[i]);
        if (used_a[x] || used_b[y])
            return em_error(EM_ERR_SHAPE, "dim %d appears multiple times in the list of dims", used_a[x] ? x : y);
        int64_t s1 = a->sizes[x], s2 = b->sizes[y];
        if (s1 != s2 && s1 != 1 && s2 != 1)
            return em_error(EM_ERR_SHAPE, "contracted dimensions need to match, but first has size %lld in dim %d and "
                            "second has size %lld in dim %d", (long long)s1, da[i], (long long)s2, db[i]);
        used_a[x] = used_b[y] = true;
        ids_b[y] = x;
    }
    int order[2 * EM_MAX_DIMS], nout = 0;
    for (int d = 0; d < a->ndim; d++)
        if (!used_a[d]) keep[d] = true, order[nout++] = d;
    for (int d = 0; d < b->ndim; d++)
        if (!used_b[d]) keep[EM_MAX_DIMS + d] = true, order[nout++] = EM_MAX_DIMS + d;
    if (nout > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "tensordot: the result has more than %d dims", EM_MAX_DIMS);
    lview v[2] = {{0}};
    em_tensor *r = NULL;
    lview_set(&v[0], em_retain((em_tensor *)a), a->ndim, ids_a);
    lview_set(&v[1], em_retain((em_tensor *)b), b->ndim, ids_b);
    if (!contract_pair(&v[0], &v[1], keep)) r = lview_tensor(&v[0], nout, order);
    lviews_release(v, 2);
    return r;
}

em_tensor *em_tensordot_dims(const em_tensor *a, const em_tensor *b, int ndims, const int *dims_a, const int *dims_b)
{
    return tensordot_impl(a, b, ndims, dims_a, dims_b);
}

em_tensor *em_tensordot(const em_tensor *a, const em_tensor *b, int dims)
{
    if (dims < 0) return em_error(EM_ERR_RUNTIME, "tensordot expects dims >= 0, but got dims=%d", dims);
    if (dims > EM_MAX_DIMS) return em_error(EM_ERR_INDEX, "tensordot: Dimension out of range (dims=%d)", dims);
    int da[EM_MAX_DIMS], db[EM_MAX_DIMS];
    for (int i = 0; i < dims; i++) da[i] = i - dims, db[i] = i; /* as PyTorch: a's last dims, counted from the end */
    return tensordot_impl(a, b, dims, da, db);
}

em_status em_tensordot_dims_out(em_tensor *out, const em_tensor *a, const em_tensor *b, int ndims, const int *dims_a,
                                const int *dims_b)
{
    if (!out) return em_fail(EM_ERR_VALUE, "tensordot: out is NULL");
    em_tensor *r = tensordot_impl(a, b, ndims, dims_a, dims_b);
    if (!r) return em_error_code();
    em_status st = EM_OK;
    if (out->dtype != r->dtype)
        st = em_fail(EM_ERR_DTYPE, "tensordot: Expected the output tensor to have dtype %s, but got an output tensor "
                     "with dtype %s", em_dtype_scalar_name((em_dtype)r->dtype), em_dtype_scalar_name((em_dtype)out->dtype));
    bool fits = out->ndim == r->ndim && !memcmp(out->sizes, r->sizes, r->ndim * sizeof *r->sizes);
    if (st == EM_OK && fits) st = em_check_overlap(out, NULL, "tensordot");
    if (st == EM_OK && !fits) st = em_resize_(out, r->ndim, r->sizes);
    if (st == EM_OK) st = em_copy_(out, r);
    em_release(r);
    return st;
}
