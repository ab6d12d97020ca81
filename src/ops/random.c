/* The op layer of the random ops: argument checks and dtype rules as in
 * PyTorch 1.13, the layout of each op's draws (words per element), and the
 * generator handling (Note [Philox streams] in src/core/rng.h). Kernels:
 * src/cpu/random.c (elementwise) and src/cpu/sample.c (randperm, multinomial). */
#include "../core/rng.h"
#include "factory.h"
#include <math.h>

/* ---- running a random op ------------------------------------------------ */
/* Runs c, whose params are set, with the next counters of g: into `target`
 * in place, or (target NULL) out= into `out` at shape (ndim, sizes). The
 * generator advances by `ndraws` draws of `wpe` words only on success. */
static em_status draw(em_call *c, em_generator *g, int wpe, int64_t ndraws, em_tensor *target, em_tensor *out,
                      int ndim, const int64_t *sizes)
{
    uint64_t key, offset;
    em_generator *locked = em_rng_begin(g, &key, &offset);
    c->i[0] = (int64_t)key, c->i[1] = (int64_t)offset, c->i[2] = wpe;
    em_status st = target ? em_generate(c, target) : em_generate_out(c, out, ndim, sizes);
    em_rng_end(locked, st == EM_OK ? em_rng_counters(ndraws, wpe) : 0);
    return st;
}

/* A new tensor of (ndim, sizes, dt) drawn by c; ndraws < 0 means one draw per element. */
static em_tensor *draw_new(em_call *c, em_generator *g, int wpe, int64_t ndraws, int ndim, const int64_t *sizes,
                           em_dtype dt)
{
    em_tensor *t = em_empty(ndim, sizes, dt);
    if (t && draw(c, g, wpe, ndraws < 0 ? em_numel(t) : ndraws, t, NULL, 0, NULL)) {
        em_release(t);
        return NULL;
    }
    return t;
}

/* out= of one draw per element of shape (ndim, sizes). */
static em_status draw_out(em_call *c, em_generator *g, int wpe, em_tensor *out, int ndim, const int64_t *sizes)
{
    if (em_check_sizes(ndim, sizes, (em_dtype)out->dtype, em_ops[c->op].name)) return em_error_code();
    return draw(c, g, wpe, em_shape_numel(ndim, sizes), NULL, out, ndim, sizes);
}

static em_status draw_inplace(em_call *c, em_generator *g, int wpe, em_tensor *self)
{
    return draw(c, g, wpe, em_numel(self), self, NULL, 0, NULL);
}

/* A contiguous float64 copy of t (or of the scalar v when t is NULL)
 * broadcast to (ndim, shape): what kernels read a tensor parameter from. */
static em_tensor *dense_f64(const em_tensor *t, double v, int ndim, const int64_t *shape)
{
    if (!t) return em_full(ndim, shape, v, EM_F64);
    em_tensor *d = em_empty(ndim, shape, EM_F64);
    if (d && em_copy_(d, t)) {
        em_release(d);
        return NULL;
    }
    return d;
}

static em_dtype float_or_default(em_dtype dt) { return dt == EM_DTYPE_NONE ? em_get_default_dtype() : dt; }

/* Bits of precision (mantissa digits) of a floating dtype. */
static int mantissa_digits(em_dtype dt) { return dt == EM_F64 ? 53 : dt == EM_F32 ? 24 : dt == EM_F16 ? 11 : 8; }

/* Floating outputs take one word per element, float64 two (53 bits). */
static int float_wpe(em_dtype dt) { return dt == EM_F64 ? 2 : 1; }

#define NULL_CHECK(t, op, what) \
    if (!(t)) return em_fail(EM_ERR_VALUE, "%s: %s is NULL", op, what)
#define NULL_CHECK_T(t, op, what) \
    if (!(t)) return em_error(EM_ERR_VALUE, "%s: %s is NULL", op, what)

/* ---- uniform ---------------------------------------------------------- */
/* The largest value of dtype dt below `to` and not below `from` (from when
 * from == to): what a draw that rounds up to `to` becomes. */
static double value_below(double from, double to, em_dtype dt)
{
    if (from >= to) return from;
    double below;
    if (dt == EM_F64) {
        below = nextafter(to, -INFINITY);
    } else if (dt == EM_F32) {
        below = nextafterf((float)to, -INFINITY);
    } else { /* float16, bfloat16: sign and magnitude bits */
        uint16_t h;
        em_store_f64(&h, dt, to);
        h = to > 0 ? h - 1 : to < 0 ? h + 1 : 0x8001;
        below = em_load_f64(&h, dt);
    }
    return below < from ? from : below;
}

static em_status uniform_setup(em_call *c, em_dtype dt, double from, double to)
{
    *c = (em_call){.op = EM_OP_uniform};
    if (!em_dtype_is_float(dt))
        return em_fail(EM_ERR_DTYPE, "\"check_uniform_bounds\" not implemented for '%s'", em_dtype_name(dt));
    const double lo = em_dtype_lowest(dt), hi = em_dtype_max(dt);
    if (!(from >= lo && from <= hi)) return em_fail(EM_ERR_RUNTIME, "uniform_: from is out of bounds for %s", em_dtype_name(dt));
    if (!(to >= lo && to <= hi)) return em_fail(EM_ERR_RUNTIME, "uniform_: to is out of bounds for %s", em_dtype_name(dt));
    if (!(from <= to))
        return em_fail(EM_ERR_RUNTIME, "uniform_ expects to return a [from, to) range, but found from=%g > to=%g", from, to);
    if (!(to - from <= hi))
        return em_fail(EM_ERR_RUNTIME, "uniform_ expects to-from <= the largest %s, but found to=%g and from=%g which "
                       "result in to-from to exceed the limit", em_dtype_name(dt), to, from);
    from = em_round_to_dtype(from, dt);
    to = em_round_to_dtype(to, dt);
    c->f[0] = from, c->f[1] = to, c->f[2] = value_below(from, to, dt);
    return EM_OK;
}

em_tensor *em_rand(int ndim, const int64_t *sizes, em_dtype dt, em_generator *g)
{
    em_call c;
    dt = float_or_default(dt);
    if (uniform_setup(&c, dt, 0, 1)) return NULL;
    return draw_new(&c, g, float_wpe(dt), -1, ndim, sizes, dt);
}

em_status em_rand_out(em_tensor *out, int ndim, const int64_t *sizes, em_generator *g)
{
    em_call c;
    NULL_CHECK(out, "rand", "out");
    if (uniform_setup(&c, (em_dtype)out->dtype, 0, 1)) return em_error_code();
    return draw_out(&c, g, float_wpe((em_dtype)out->dtype), out, ndim, sizes);
}

em_status em_uniform_(em_tensor *self, double from, double to, em_generator *g)
{
    em_call c;
    NULL_CHECK(self, "uniform_", "self");
    if (uniform_setup(&c, (em_dtype)self->dtype, from, to)) return em_error_code();
    return draw_inplace(&c, g, float_wpe((em_dtype)self->dtype), self);
}

/* ---- normal ----------------------------------------------------------- */
static em_status normal_setup(em_call *c, em_dtype dt, double mean, double std)
{
    *c = (em_call){.op = EM_OP_normal};
    if (!em_dtype_is_float(dt))
        return em_fail(EM_ERR_DTYPE, "\"normal_kernel_cpu\" not implemented for '%s'", em_dtype_name(dt));
    if (!(std >= 0.0)) return em_fail(EM_ERR_RUNTIME, "normal expects std >= 0.0, but found std %g", std);
    c->f[0] = mean, c->f[1] = std;
    return EM_OK;
}

em_tensor *em_normal_float_float(double mean, double std, int ndim, const int64_t *sizes, em_dtype dt,
                                 em_generator *g)
{
    em_call c;
    dt = float_or_default(dt);
    if (normal_setup(&c, dt, mean, std)) return NULL;
    return draw_new(&c, g, float_wpe(dt), -1, ndim, sizes, dt);
}

em_tensor *em_randn(int ndim, const int64_t *sizes, em_dtype dt, em_generator *g)
{
    return em_normal_float_float(0, 1, ndim, sizes, dt, g);
}

em_status em_randn_out(em_tensor *out, int ndim, const int64_t *sizes, em_generator *g)
{
    em_call c;
    NULL_CHECK(out, "randn", "out");
    if (normal_setup(&c, (em_dtype)out->dtype, 0, 1)) return em_error_code();
    return draw_out(&c, g, float_wpe((em_dtype)out->dtype), out, ndim, sizes);
}

em_status em_normal_(em_tensor *self, double mean, double std, em_generator *g)
{
    em_call c;
    NULL_CHECK(self, "normal_", "self");
    if (normal_setup(&c, (em_dtype)self->dtype, mean, std)) return em_error_code();
    return draw_inplace(&c, g, float_wpe((em_dtype)self->dtype), self);
}

/* The tensor forms: mean + std * z over the broadcast shape of the tensors
 * given (a NULL tensor stands for its scalar), in dtype dt; a new tensor,
 * or written to `out` when out is not NULL (then *result is untouched). */
static em_status normal_tensors(const em_tensor *mean, double mean_v, const em_tensor *std, double std_v, em_dtype dt,
                                em_tensor *out, em_generator *g, em_tensor **result)
{
    em_call c;
    if (normal_setup(&c, dt, 0, std ? 0 : std_v)) return em_error_code();
    int64_t shape[EM_MAX_DIMS];
    int ndim = 0;
    if (mean) ndim = em_broadcast_shapes(ndim, shape, mean->ndim, mean->sizes, shape, "normal");
    if (std && ndim >= 0) ndim = em_broadcast_shapes(ndim, shape, std->ndim, std->sizes, shape, "normal");
    if (ndim < 0) return em_error_code();
    em_tensor *m = dense_f64(mean, mean_v, ndim, shape), *s = m ? dense_f64(std, std_v, ndim, shape) : NULL;
    em_status st = em_error_code();
    if (m && s) {
        c.nin = 2, c.in[0] = m, c.in[1] = s;
        if (out) {
            st = draw_out(&c, g, float_wpe(dt), out, ndim, shape);
        } else {
            *result = draw_new(&c, g, float_wpe(dt), -1, ndim, shape, dt);
            st = *result ? EM_OK : em_error_code();
        }
    }
    em_release(m);
    em_release(s);
    return st;
}

em_tensor *em_normal(const em_tensor *mean, const em_tensor *std, em_generator *g)
{
    em_tensor *r = NULL;
    NULL_CHECK_T(mean && std, "normal", "mean or std");
    normal_tensors(mean, 0, std, 0, (em_dtype)mean->dtype, NULL, g, &r);
    return r;
}

em_status em_normal_out(em_tensor *out, const em_tensor *mean, const em_tensor *std, em_generator *g)
{
    NULL_CHECK(out && mean && std, "normal", "out, mean or std");
    return normal_tensors(mean, 0, std, 0, (em_dtype)out->dtype, out, g, NULL);
}

em_tensor *em_normal_tensor_float(const em_tensor *mean, double std, em_generator *g)
{
    em_tensor *r = NULL;
    NULL_CHECK_T(mean, "normal", "mean");
    normal_tensors(mean, 0, NULL, std, (em_dtype)mean->dtype, NULL, g, &r);
    return r;
}

em_tensor *em_normal_float_tensor(double mean, const em_tensor *std, em_generator *g)
{
    em_tensor *r = NULL;
    NULL_CHECK_T(std, "normal", "std");
    normal_tensors(NULL, mean, std, 0, (em_dtype)std->dtype, NULL, g, &r);
    return r;
}

/* ---- exponential ------------------------------------------------------ */
em_status em_exponential_(em_tensor *self, double lambd, em_generator *g)
{
    NULL_CHECK(self, "exponential_", "self");
    if (!em_dtype_is_float((em_dtype)self->dtype))
        return em_fail(EM_ERR_DTYPE, "\"exponential_cpu\" not implemented for '%s'", em_dtypes[self->dtype].name);
    if (!(lambd >= 0.0))
        return em_fail(EM_ERR_RUNTIME, "exponential_ expects lambda >= 0.0, but found lambda=%g", lambd);
    em_call c = {.op = EM_OP_exponential, .f = {lambd}};
    return draw_inplace(&c, g, 2, self);
}

/* ---- random integers ---------------------------------------------------- */
/* Integers in [from, to_inc], both inside dt's range (PyTorch's
 * check_from_to_in_range); sets the params and the words per element. */
static em_status random_setup(em_call *c, em_dtype dt, int64_t from, int64_t to_inc, int *wpe)
{
    *c = (em_call){.op = EM_OP_random};
    if (!em_dtype_valid(dt)) return em_fail(EM_ERR_DTYPE, "random_: invalid dtype %d", (int)dt);
    const double lo = em_dtype_lowest(dt), hi = em_dtype_max(dt);
    if (dt != EM_I64 && ((double)from < lo || (double)from > hi))
        return em_fail(EM_ERR_RUNTIME, "random_: from is out of bounds for %s", em_dtypes[dt].name);
    if (dt != EM_I64 && ((double)to_inc < lo || (double)to_inc > hi))
        return em_fail(EM_ERR_RUNTIME, "random_: to - 1 is out of bounds for %s", em_dtypes[dt].name);
    const uint64_t range = (uint64_t)to_inc - (uint64_t)from + 1; /* 0: all 2^64 values */
    c->i[3] = from, c->i[4] = (int64_t)range;
    *wpe = range != 0 && range <= 65536 ? 1 : 2;
    return EM_OK;
}

static em_status check_from_to(int64_t from, int64_t to)
{
    if (from >= to)
        return em_fail(EM_ERR_RUNTIME, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                       (long long)from, (long long)to);
    return EM_OK;
}

/* The largest integer random_() draws into dt: 2^mantissa for floating
 * dtypes, the maximum for integral ones, 1 for bool. */
static int64_t random_max(em_dtype dt)
{
    if (em_dtype_is_float(dt)) return (int64_t)1 << mantissa_digits(dt);
    return dt == EM_I64 ? INT64_MAX : (int64_t)em_dtype_max(dt);
}

em_tensor *em_randint(int64_t low, int64_t high, int ndim, const int64_t *sizes, em_dtype dt, em_generator *g)
{
    em_call c;
    int wpe;
    if (dt == EM_DTYPE_NONE) dt = EM_I64;
    if (check_from_to(low, high) || random_setup(&c, dt, low, high - 1, &wpe)) return NULL;
    return draw_new(&c, g, wpe, -1, ndim, sizes, dt);
}

em_status em_randint_out(em_tensor *out, int64_t low, int64_t high, int ndim, const int64_t *sizes,
                         em_generator *g)
{
    em_call c;
    int wpe;
    NULL_CHECK(out, "randint", "out");
    if (check_from_to(low, high) || random_setup(&c, (em_dtype)out->dtype, low, high - 1, &wpe))
        return em_error_code();
    return draw_out(&c, g, wpe, out, ndim, sizes);
}

em_status em_random_(em_tensor *self, em_generator *g) { return em_random_from_(self, 0, NULL, g); }

em_status em_random_from_(em_tensor *self, int64_t from, const int64_t *to, em_generator *g)
{
    em_call c;
    int wpe;
    NULL_CHECK(self, "random_", "self");
    em_dtype dt = (em_dtype)self->dtype;
    int64_t to_inc;
    if (to) {
        if (check_from_to(from, *to)) return em_error_code();
        to_inc = *to - 1;
    } else {
        to_inc = random_max(dt);
        if (from > to_inc)
            return em_fail(EM_ERR_RUNTIME, "random_ expects 'from' to be less than or equal to the largest value "
                           "of %s, %lld, but got from=%lld", em_dtypes[dt].name, (long long)to_inc, (long long)from);
    }
    if (random_setup(&c, dt, from, to_inc, &wpe)) return em_error_code();
    return draw_inplace(&c, g, wpe, self);
}

/* ---- bernoulli ---------------------------------------------------------- */
/* Each draw compares a 53-bit uniform with p: two words per element. */
#define BERNOULLI_WPE 2

static em_status bernoulli_scalar_setup(em_call *c, em_dtype self_dt, double p)
{
    *c = (em_call){.op = EM_OP_bernoulli, .f = {p}};
    if (self_dt == EM_F16)
        return em_fail(EM_ERR_DTYPE, "\"bernoulli_scalar_cpu_\" not implemented for '%s'", em_dtypes[self_dt].name);
    if (!(p >= 0 && p <= 1)) return em_fail(EM_ERR_RUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
    return EM_OK;
}

/* Tensor probabilities: p float32, float64 or bfloat16, the written tensor
 * any dtype but float16 (PyTorch's kernel's dtypes). */
static em_status bernoulli_tensor_check(em_dtype self_dt, const em_tensor *p)
{
    if (self_dt == EM_F16)
        return em_fail(EM_ERR_DTYPE, "\"bernoulli_tensor_cpu_self_\" not implemented for '%s'", em_dtypes[self_dt].name);
    if (!em_dtype_is_float((em_dtype)p->dtype) || p->dtype == EM_F16)
        return em_fail(EM_ERR_DTYPE, "\"bernoulli_tensor_cpu_p_\" not implemented for '%s'", em_dtypes[p->dtype].name);
    return EM_OK;
}

/* Draws 0/1 with probabilities p (broadcast to the target's shape) into
 * self in place or, self NULL, out= at p's shape. */
static em_status bernoulli_tensor(em_tensor *self, em_tensor *out, const em_tensor *p, em_generator *g)
{
    em_tensor *target = self ? self : out;
    const int ndim = self ? self->ndim : p->ndim;
    const int64_t *shape = self ? self->sizes : p->sizes;
    int64_t bshape[EM_MAX_DIMS];
    if (bernoulli_tensor_check((em_dtype)target->dtype, p)) return em_error_code();
    if (em_broadcast_shapes(ndim, shape, p->ndim, p->sizes, bshape, "bernoulli_") != ndim ||
        memcmp(bshape, shape, ndim * sizeof *shape))
        return em_fail(EM_ERR_SHAPE, "bernoulli_: probabilities of shape %s cannot be broadcast to the shape %s",
                       em_shape_str(p->ndim, p->sizes), em_shape_str(ndim, shape));
    em_tensor *pd = dense_f64(p, 0, ndim, shape);
    if (!pd) return em_error_code();
    em_call c = {.op = EM_OP_bernoulli, .nin = 1, .in = {pd}};
    em_status st = self ? draw_inplace(&c, g, BERNOULLI_WPE, self) : draw_out(&c, g, BERNOULLI_WPE, out, ndim, shape);
    em_release(pd);
    return st;
}

em_tensor *em_bernoulli(const em_tensor *p, em_generator *g)
{
    NULL_CHECK_T(p, "bernoulli", "p");
    em_tensor *r = em_empty(p->ndim, p->sizes, (em_dtype)p->dtype);
    if (r && bernoulli_tensor(r, NULL, p, g)) {
        em_release(r);
        return NULL;
    }
    return r;
}

em_status em_bernoulli_out(em_tensor *out, const em_tensor *p, em_generator *g)
{
    NULL_CHECK(out && p, "bernoulli", "out or p");
    return bernoulli_tensor(NULL, out, p, g);
}

em_status em_bernoulli_tensor_(em_tensor *self, const em_tensor *p, em_generator *g)
{
    NULL_CHECK(self && p, "bernoulli_", "self or p");
    return bernoulli_tensor(self, NULL, p, g);
}

em_tensor *em_bernoulli_p(const em_tensor *input, double p, em_generator *g)
{
    em_call c;
    NULL_CHECK_T(input, "bernoulli", "input");
    if (bernoulli_scalar_setup(&c, (em_dtype)input->dtype, p)) return NULL;
    return draw_new(&c, g, BERNOULLI_WPE, -1, input->ndim, input->sizes, (em_dtype)input->dtype);
}

em_status em_bernoulli_(em_tensor *self, double p, em_generator *g)
{
    em_call c;
    NULL_CHECK(self, "bernoulli_", "self");
    if (bernoulli_scalar_setup(&c, (em_dtype)self->dtype, p)) return em_error_code();
    return draw_inplace(&c, g, BERNOULLI_WPE, self);
}

/* ---- randperm: n - 1 draws of 64 bits ------------------------------------ */
static em_status randperm_check(int64_t n, em_dtype dt)
{
    if (em_check_sizes(1, &n, dt, "randperm")) return em_error_code();
    if (dt == EM_BOOL) return em_fail(EM_ERR_DTYPE, "\"randperm\" not implemented for '%s'", em_dtypes[dt].name);
    if (dt == EM_F16 && n > 2049) return em_fail(EM_ERR_RUNTIME, "randperm: n cannot be greater than 2049 for Half type.");
    /* every value 0..n-1 must be exact in dt (PyTorch lets floating dtypes round) */
    double largest = em_dtype_is_float(dt) ? ldexp(1, mantissa_digits(dt)) : em_dtype_max(dt);
    if (n > 0 && (double)(n - 1) > largest)
        return em_fail(EM_ERR_RUNTIME, "randperm: n is too large for result tensor type %s (got n=%lld)",
                       em_dtypes[dt].name, (long long)n);
    return EM_OK;
}

static int64_t randperm_draws(int64_t n) { return n > 1 ? n - 1 : 0; }

em_tensor *em_randperm(int64_t n, em_dtype dt, em_generator *g)
{
    if (dt == EM_DTYPE_NONE) dt = EM_I64;
    if (randperm_check(n, dt)) return NULL;
    em_call c = {.op = EM_OP_randperm};
    return draw_new(&c, g, 2, randperm_draws(n), 1, &n, dt);
}

em_status em_randperm_out(em_tensor *out, int64_t n, em_generator *g)
{
    NULL_CHECK(out, "randperm", "out");
    if (randperm_check(n, (em_dtype)out->dtype)) return em_error_code();
    em_call c = {.op = EM_OP_randperm};
    return draw(&c, g, 2, randperm_draws(n), NULL, out, 1, &n);
}

/* ---- multinomial: draws of 64 bits, one per sample with replacement, one
 * per category without (src/cpu/sample.c) --------------------------------- */
static em_status multinomial_run(const em_tensor *probs, int64_t nsample, bool replacement, em_tensor *out,
                                 em_generator *g, em_tensor **result)
{
    const char *op = "multinomial";
    if (!probs) return em_fail(EM_ERR_VALUE, "multinomial: probs is NULL");
    em_dtype dt = (em_dtype)probs->dtype;
    if (probs->ndim < 1 || probs->ndim > 2) return em_fail(EM_ERR_SHAPE, "multinomial: prob_dist must be 1 or 2 dim");
    if (!em_dtype_is_float(dt))
        return em_fail(EM_ERR_DTYPE, "multinomial only supports floating-point dtypes for input, got: %s",
                       em_dtypes[dt].name);
    if (dt == EM_F16) return em_fail(EM_ERR_DTYPE, "multinomial is not implemented for float16 on CPU");
    if (out && out->dtype != EM_I64)
        return em_fail(EM_ERR_DTYPE, "multinomial expects int64 tensor out, got: %s", em_dtypes[out->dtype].name);
    if (nsample <= 0) return em_fail(EM_ERR_RUNTIME, "multinomial: cannot sample n_sample <= 0 samples");
    const int64_t ncat = probs->sizes[probs->ndim - 1], rows = probs->ndim == 2 ? probs->sizes[0] : 1;
    if (!replacement && nsample > ncat)
        return em_fail(EM_ERR_RUNTIME, "multinomial: cannot sample n_sample > prob_dist.size(-1) samples without "
                       "replacement");
    if (ncat > (1 << 24)) return em_fail(EM_ERR_RUNTIME, "multinomial: number of categories cannot exceed 2^24");
    const int64_t rows_cats[2] = {rows, ncat}, shape[2] = {rows, nsample};
    const int ndim = probs->ndim;
    if (em_check_sizes(ndim, shape + 2 - ndim, EM_I64, op)) return em_error_code();
    em_tensor *pd = dense_f64(probs, 0, 2, rows_cats);
    if (!pd) return em_error_code();
    em_call c = {.op = EM_OP_multinomial, .nin = 1, .in = {pd}};
    c.i[3] = nsample, c.i[4] = replacement;
    const int64_t ndraws = rows * (replacement ? nsample : ncat);
    em_status st;
    if (out) {
        st = draw(&c, g, 2, ndraws, NULL, out, ndim, shape + 2 - ndim);
    } else {
        *result = draw_new(&c, g, 2, ndraws, ndim, shape + 2 - ndim, EM_I64);
        st = *result ? EM_OK : em_error_code();
    }
    em_release(pd);
    return st;
}

em_tensor *em_multinomial(const em_tensor *probs, int64_t num_samples, bool replacement, em_generator *g)
{
    em_tensor *r = NULL;
    multinomial_run(probs, num_samples, replacement, NULL, g, &r);
    return r;
}

em_status em_multinomial_out(em_tensor *out, const em_tensor *probs, int64_t num_samples, bool replacement,
                             em_generator *g)
{
    NULL_CHECK(out, "multinomial", "out");
    return multinomial_run(probs, num_samples, replacement, out, g, NULL);
}
