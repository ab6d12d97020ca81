/* Random ops in Python (include/ember/random.h): the in-place samplers
 * (uniform_, normal_, exponential_, random_, bernoulli_), normal,
 * bernoulli, randint(_like), randperm, multinomial. rand, randn and their
 * _like forms are factory.c's. generator= takes an ember.Generator (None:
 * the default one). */
#include "emp.h"

/* The generator at param k (NULL: the default one). 0, or -1 with TypeError. */
static int generator_arg(emp_args *a, int k, em_generator **g)
{
    *g = emp_generator_arg(a->obj[k]);
    return !*g && PyErr_Occurred() ? -1 : 0;
}

/* The keywords of PyTorch's factories: dtype at k, device k+1, requires_grad k+2. */
#define FACTORY_KW "dtype? dtype=None, device? device=None, bool requires_grad=False, layout? layout=None, bool pin_memory=False"

/* A new factory result, with requires_grad=True if asked (floating only, as PyTorch). */
static PyObject *factory_result(em_tensor *t, bool requires_grad)
{
    if (t && requires_grad && em_set_requires_grad(t, true)) {
        em_release(t);
        t = NULL;
    }
    return emp_wrap(t);
}

/* `size` must be a sequence (PyTorch takes no bare int there, where it
 * would be read as another overload's argument). */
static int size_is_sequence(emp_args *a, int k, const char *op)
{
    if (PyTuple_Check(a->obj[k]) || PyList_Check(a->obj[k])) return 0;
    PyErr_Format(PyExc_TypeError, "%s(): argument 'size' must be tuple of ints, not %s", op, Py_TYPE(a->obj[k])->tp_name);
    return -1;
}

/* ---- in-place samplers -------------------------------------------------- */
/* name_(Tensor input, <params>, *, object generator=None): em_name_(input, <args>, g). */
#define SAMPLER_BIND(name, params_sig, k_gen, ...)                                                  \
    EMP_BIND(name, #name "(Tensor input, " params_sig ", *, object generator=None)")              \
    {                                                                                              \
        em_generator *g;                                                                           \
        if (generator_arg(a, k_gen, &g)) return NULL;                                              \
        return emp_status_self(em_##name(a->t[0], __VA_ARGS__, g), a->obj[0]);                     \
    }
SAMPLER_BIND(uniform_, "float from=0, float to=1", 3, a->d[1], a->d[2])
SAMPLER_BIND(normal_, "float mean=0, float std=1", 3, a->d[1], a->d[2])
SAMPLER_BIND(exponential_, "float lambd=1", 2, a->d[1])

/* random_(), random_(to): [0, to), random_(from, to): [from, to) (to None: the dtype's top). */
EMP_BIND(random_, "random_(Tensor input, *, object generator=None)",
         "random_(Tensor input, int to, *, object generator=None)",
         "random_(Tensor input, int from, int? to, *, object generator=None)")
{
    em_generator *g;
    if (generator_arg(a, a->sig + 1, &g)) return NULL;
    em_tensor *self = a->t[0];
    em_status st = a->sig == 0 ? em_random_(self, g)
                 : a->sig == 1 ? em_random_from_(self, 0, &a->i[1], g)
                               : em_random_from_(self, a->i[1], a->has[2] ? &a->i[2] : NULL, g);
    return emp_status_self(st, a->obj[0]);
}

EMP_BIND(bernoulli_, "bernoulli_(Tensor input, Tensor p, *, object generator=None)",
         "bernoulli_(Tensor input, float p=0.5, *, object generator=None)")
{
    em_generator *g;
    if (generator_arg(a, 2, &g)) return NULL;
    em_status st = a->sig == 0 ? em_bernoulli_tensor_(a->t[0], a->t[1], g) : em_bernoulli_(a->t[0], a->d[1], g);
    return emp_status_self(st, a->obj[0]);
}

/* ---- sampled tensors ---------------------------------------------------- */
/* bernoulli(input): input holds the probabilities; bernoulli(input, p): input's shape and dtype. */
EMP_BIND(bernoulli, "bernoulli(Tensor input, *, object generator=None, Tensor? out=None)",
         "bernoulli(Tensor input, float p, *, object generator=None)")
{
    em_generator *g;
    if (generator_arg(a, a->sig + 1, &g)) return NULL;
    if (a->sig == 1) return emp_wrap(em_bernoulli_p(a->t[0], a->d[1], g));
    return EMP_OUT(2, em_bernoulli_out(a->t[2], a->t[0], g), em_bernoulli(a->t[0], g));
}

/* normal(mean, std): each a tensor or a float; with two floats, of `size`. */
EMP_BIND(normal, "normal(Tensor mean, Tensor std, *, object generator=None, Tensor? out=None)",
         "normal(Tensor mean, float std=1, *, object generator=None, Tensor? out=None)",
         "normal(float mean, Tensor std, *, object generator=None, Tensor? out=None)",
         "normal(float mean, float std, int[] size, *, object generator=None, Tensor? out=None, " FACTORY_KW ")")
{
    bool sized = a->sig == 3;
    int k_gen = sized ? 3 : 2;
    em_generator *g;
    if (generator_arg(a, k_gen, &g)) return NULL;
    if (sized) {
        if (size_is_sequence(a, 2, "normal") || emp_use_device(a, 6)) return NULL;
        if (a->has[4]) {
            em_status st = em_resize_(a->t[4], a->nlist[2], a->list[2]);
            return emp_status_self(st ? st : em_normal_(a->t[4], a->d[0], a->d[1], g), a->obj[4]);
        }
        em_dtype dt = a->has[5] ? (em_dtype)a->i[5] : EM_DTYPE_NONE;
        return factory_result(em_normal_float_float(a->d[0], a->d[1], a->nlist[2], a->list[2], dt, g), a->i[7]);
    }
    if (a->sig == 0) return EMP_OUT(3, em_normal_out(a->t[3], a->t[0], a->t[1], g), em_normal(a->t[0], a->t[1], g));
    if (!a->has[3])
        return emp_wrap(a->sig == 1 ? em_normal_tensor_float(a->t[0], a->d[1], g)
                                    : em_normal_float_tensor(a->d[0], a->t[1], g));
    /* out=: the float side as a 0-d tensor, through the tensor-tensor form */
    int k_float = a->sig == 1 ? 1 : 0;
    em_tensor *scalar = em_scalar_float(a->d[k_float]);
    if (!scalar) return emp_raise();
    em_status st = a->sig == 1 ? em_normal_out(a->t[3], a->t[0], scalar, g) : em_normal_out(a->t[3], scalar, a->t[1], g);
    em_release(scalar);
    return emp_status_self(st, a->obj[3]);
}

/* randint(high, size) / randint(low, high, size): int64 unless dtype= says. */
EMP_BIND(randint, "randint(int high, int[] size, *, object generator=None, Tensor? out=None, " FACTORY_KW ")",
         "randint(int low, int high, int[] size, *, object generator=None, Tensor? out=None, " FACTORY_KW ")")
{
    int o = a->sig; /* the low argument shifts the rest by one */
    int64_t low = o ? a->i[0] : 0, high = a->i[o];
    em_generator *g;
    if (generator_arg(a, o + 2, &g) || size_is_sequence(a, o + 1, "randint") || emp_use_device(a, o + 5)) return NULL;
    int n = a->nlist[o + 1];
    const int64_t *size = a->list[o + 1];
    if (a->has[o + 3]) return emp_status_self(em_randint_out(a->t[o + 3], low, high, n, size, g), a->obj[o + 3]);
    em_dtype dt = a->has[o + 4] ? (em_dtype)a->i[o + 4] : EM_DTYPE_NONE;
    return factory_result(em_randint(low, high, n, size, dt, g), a->i[o + 6]);
}

/* randint_like(input, high) / (input, low, high): input's shape and dtype (PyTorch's has no generator). */
#define LIKE_KW ", *, " FACTORY_KW ", memory_format? memory_format=None)"
EMP_BIND(randint_like, "randint_like(Tensor input, int high" LIKE_KW, "randint_like(Tensor input, int low, int high" LIKE_KW)
{
    int o = a->sig;
    em_tensor *x = a->t[0];
    if (emp_use_device(a, o + 3)) return NULL;
    em_dtype dt = a->has[o + 2] ? (em_dtype)a->i[o + 2] : em_dtype_of(x);
    em_tensor *r = em_randint(o ? a->i[1] : 0, a->i[o + 1], em_ndim(x), em_sizes(x), dt, NULL);
    return factory_result(emp_like_layout(r, a, o + 7), a->i[o + 4]);
}

EMP_BIND(randperm, "randperm(int n, *, object generator=None, Tensor? out=None, " FACTORY_KW ")")
{
    em_generator *g;
    if (generator_arg(a, 1, &g) || emp_use_device(a, 4)) return NULL;
    if (a->has[2]) return emp_status_self(em_randperm_out(a->t[2], a->i[0], g), a->obj[2]);
    return factory_result(em_randperm(a->i[0], a->has[3] ? (em_dtype)a->i[3] : EM_DTYPE_NONE, g), a->i[5]);
}

EMP_BIND(multinomial,
         "multinomial(Tensor input, int num_samples, bool replacement=False, *, object generator=None, Tensor? out=None)")
{
    em_generator *g;
    if (generator_arg(a, 3, &g)) return NULL;
    return EMP_OUT(4, em_multinomial_out(a->t[4], a->t[0], a->i[1], a->i[2], g),
                   em_multinomial(a->t[0], a->i[1], a->i[2], g));
}

PyMethodDef emp_random_functions[] = {
    EMP_FUNCTION(normal), EMP_FUNCTION(bernoulli), EMP_FUNCTION(randint), EMP_FUNCTION(randint_like),
    EMP_FUNCTION(randperm), EMP_FUNCTION(multinomial),
    {NULL},
};
PyMethodDef emp_random_methods[] = {
    EMP_METHOD(uniform_), EMP_METHOD(normal_), EMP_METHOD(exponential_), EMP_METHOD(random_),
    EMP_METHOD(bernoulli_), EMP_METHOD(bernoulli), EMP_METHOD(multinomial),
    {NULL},
};
