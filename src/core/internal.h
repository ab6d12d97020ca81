/* Ember's core internals: the tensor and storage structs, the dtype traits,
 * error helpers and shape math shared by every layer below the public API.
 * Not installed; nothing outside src/ includes it. */
#ifndef EMBER_INTERNAL_H
#define EMBER_INTERNAL_H

#include "ember/ember.h"
#include <string.h>

/* ---- storage and tensor (Note [Views]) --------------------------------
 * A view shares its base's storage and points at it directly: views never
 * chain. The version counter lives in the storage so that every view sees
 * every in-place write. A view also holds its root base (`base`: the tensor
 * that is not a view it was made from, through any chain of views), so that
 * autograd can rebase the root's history when the view is written in place
 * and regenerate a view's history when its root was (Note [In-place on
 * views] in src/autograd/record.c). */
typedef struct em_storage {
    int64_t refcount;
    void *data;
    size_t nbytes;
    em_device device;
    uint64_t version;
    void (*deleter)(void *ctx); /* external memory: called when the storage dies */
    void *deleter_ctx;
    bool external;              /* data not from Ember's allocator (deleter may be NULL) */
} em_storage;

/* EM_FLAG_INFERENCE: made while inference mode was on (or a view of such a
 * tensor): autograd refuses to save it for backward. EM_FLAG_MULTI_VIEW: an
 * output of split/chunk/unbind (or a view of one), which autograd does not
 * let an in-place op write (PyTorch's rule). Views inherit both. */
enum { EM_FLAG_WRAPPED_NUMBER = 1, EM_FLAG_INFERENCE = 2, EM_FLAG_MULTI_VIEW = 4, EM_FLAG_CONJ = 8, EM_FLAG_NEG = 16 };

/* Note [Conjugate bit]
 * A tensor with EM_FLAG_CONJ holds the complex conjugate of what its storage
 * holds; one with EM_FLAG_NEG the negation (PyTorch's conj and neg bits, the
 * "lazy bits"). conj() of a complex tensor is a view with the conj bit
 * toggled, O(1), and x.conj().imag a view of x's imaginary parts with the
 * neg bit set. Views inherit the bits (em_tensor_view_as, and aliases: what
 * detach and autograd save). Nothing computes with them: em_dispatch runs a
 * call that has a lazy operand through em_resolving_kernel (src/ops/complex.c),
 * which hands the kernel materialized copies (the values) and writes an
 * output's result back through its bits (the storage gets the conjugate), so
 * every kernel, in place and out= included, sees plain tensors. A clone (and
 * so contiguous() of a non-contiguous tensor, to(), every op's result) has no
 * bits. Code that reads or writes storage without a kernel (item, tolist,
 * printing, NumPy/DLPack export, the file writers) must resolve first or
 * refuse, as PyTorch's numpy() does. Autograd: a view node records the bits
 * its view has and its base has not (em_view_geom.bits): the gradient crosses
 * it conjugated (negated). */
#define EM_LAZY_BITS (EM_FLAG_CONJ | EM_FLAG_NEG)

struct em_tensor {
    int64_t refcount;
    em_storage *storage;
    int64_t offset; /* in elements */
    int32_t ndim;
    int8_t dtype;
    uint8_t flags;
    int64_t sizes[EM_MAX_DIMS];
    int64_t strides[EM_MAX_DIMS];
    void *autograd; /* autograd metadata, owned by src/autograd (NULL: none) */
    void *binding;  /* a language binding's object for this tensor (not owned; see core.h) */
    struct em_tensor *base; /* a view's root base (strong); NULL: not a view */
    int64_t nviews;         /* a root: how many views of it are alive */
    uint64_t view_version;  /* a view: the storage version its history was made at
                             * (set at creation; src/autograd moves it on) */
};
static inline bool em_has_lazy_bits(const em_tensor *t) { return (t->flags & EM_LAZY_BITS) != 0; }

/* ---- dtype traits ---------------------------------------------------- */
typedef struct em_complex32_bits { uint16_t re, im; } em_complex32_bits; /* complex32's storage */
typedef struct em_dtype_traits {
    const char *name;
    const char *scalar_name;
    size_t size;
    char kind; /* 'b' 'u' 'i' 'f' 'c' */
} em_dtype_traits;
extern const em_dtype_traits em_dtypes[EM_DTYPE_COUNT];
/* The largest element (complex128): the size of a buffer that holds one
 * element of any dtype. */
#define EM_MAX_ITEMSIZE 16

static inline bool em_dtype_valid(int dt) { return dt >= 0 && dt < EM_DTYPE_COUNT; }

float em_f16_to_f32(uint16_t h);
uint16_t em_f32_to_f16(float f);
static inline float em_bf16_to_f32(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
uint16_t em_f32_to_bf16(float f);
/* Read/write one element of any dtype as double (a complex one: its real
 * part is read, a zero imaginary part written), or as a complex double. */
double em_load_f64(const void *p, em_dtype dt);
void em_store_f64(void *p, em_dtype dt, double v);
double _Complex em_load_c128(const void *p, em_dtype dt);
void em_store_c128(void *p, em_dtype dt, double _Complex v);
/* The type-promotion result of an op's tensor inputs (PyTorch's result_type:
 * dimensioned tensors, then 0-d tensors, then wrapped numbers, each tier
 * only able to raise the category). */
em_dtype em_result_type(int n, const em_tensor *const *ts);

/* ---- errors ----------------------------------------------------------
 * em_error() records the message and returns NULL, so that failing paths read
 * `return em_error(EM_ERR_SHAPE, "...")`; em_fail() (public, core.h) does the
 * same returning the status. Messages name the op and the offending argument. */
void *em_error(em_status code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Note [NULL arguments]
 * Every exported function checks its pointer arguments before it reads
 * anything, and fails with EM_ERR_VALUE "em_view: sizes is NULL" (the C
 * function and the parameter as its header names them): NULL, a nonzero
 * status, or the error value its header gives. A pointer may be NULL only
 * where its header says so, and an array of length 0 may always be NULL.
 * Write the checks with EM_NULL in the exported function itself (it names
 * __func__); the pointwise family checks once, in src/ops/pointwise.c.
 * tools/gen_null_test.py calls every function of the headers with NULL in
 * each pointer position (tests/c/test_null_args.c). */
bool em_null_arg(const char *function, const char *argument); /* sets the error; true */
#define EM_NULL(p) (!(p) && em_null_arg(__func__, #p))
#define EM_NULL_N(n, p) ((n) > 0 && EM_NULL(p)) /* an array of n elements */
/* The same for an array of n pointers (NULL itself, or holding a NULL). */
bool em_null_list(const char *function, const char *argument, int n, const void *const *list);
#define EM_NULL_LIST(n, p) em_null_list(__func__, #p, (n), (const void *const *)(p))
/* Thread-local scratch strings for messages: "[3, 4]"; four in rotation. */
const char *em_shape_str(int ndim, const int64_t *sizes);

/* ---- CPU memory (src/core/alloc.c) ------------------------------------ */
void *em_cpu_alloc(size_t nbytes);          /* 64-byte aligned; NULL when out of memory */
void em_cpu_free(void *p, size_t nbytes);   /* nbytes as given to em_cpu_alloc */
size_t em_cpu_cached_bytes(void);

/* ---- autograd stage (Note [Autograd stage]) ----------------------------
 * Core and the op layer know nothing of autograd's code: src/autograd
 * installs these hooks the first time a tensor is made to require grad, and
 * until then no tensor has autograd metadata and every check below is one
 * NULL test. em_tensor_view() reports views of tensors that have metadata
 * (so the view joins the graph); em_release() frees the metadata. */
typedef struct em_autograd_hooks {
    void (*free_meta)(void *meta);
    em_status (*record_view)(const em_tensor *base, em_tensor *view);
    bool (*is_grad_leaf)(const em_tensor *t); /* a leaf that requires grad (a weight) */
} em_autograd_hooks;
extern const em_autograd_hooks *em_autograd;
/* Thread-local modes (src/core/grad_mode.c): em_grad_mode() is whether ops
 * record (grad mode on and inference mode off). Code that switches grad mode
 * off for a while saves and restores em_is_grad_enabled(). */
bool em_grad_mode(void);
bool em_inference_mode(void);

/* ---- tensor construction (no argument checks beyond overflow) -------- */
em_storage *em_storage_new(size_t nbytes, em_device dev);
void em_storage_release(em_storage *s);
/* A new tensor over a new storage, contiguous; refuses a negative size or a
 * byte count that overflows (shapes computed from huge arguments). */
em_tensor *em_tensor_new(int ndim, const int64_t *sizes, em_dtype dt, em_device dev);
/* A view of t's storage with the given geometry (offset in elements); its
 * base is t's root base (em_view_root). */
em_tensor *em_tensor_view(const em_tensor *t, int ndim, const int64_t *sizes,
                          const int64_t *strides, int64_t offset);
/* The same in dtype dt, whose geometry counts dt's elements (view_as_real,
 * view_as_complex: Note [Retyped views] in src/autograd/formulas_view.c). */
em_tensor *em_tensor_view_as(const em_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides,
                             int64_t offset, em_dtype dt);
/* A tensor over t's storage with t's geometry that is not a view of t (no
 * base, no history): detach(), and what autograd saves. It keeps t's lazy
 * bits (Note [Conjugate bit]). */
em_tensor *em_tensor_alias(const em_tensor *t);
/* A view of t with t's geometry and the lazy bits `bits` toggled: conj(),
 * _neg_view() (Note [Conjugate bit]). */
em_tensor *em_tensor_toggle_view(const em_tensor *t, uint8_t bits);
/* The root base whose storage t still shares (t itself when t is no view,
 * or when resize_ moved its base to another storage). Borrowed. */
static inline em_tensor *em_view_root(const em_tensor *t)
{
    return t->base && t->base->storage == t->storage ? t->base : (em_tensor *)t;
}
/* A new tensor with t's sizes and, when t is dense (no holes, no overlap), its
 * memory layout too, so elementwise results keep a transposed input's order. */
em_tensor *em_tensor_new_like(const em_tensor *t, em_dtype dt);
/* A new tensor over a new storage with the given strides (>= 0), on dev. */
em_tensor *em_tensor_new_strided(int ndim, const int64_t *sizes, const int64_t *strides, em_dtype dt, em_device dev);
static inline char *em_tensor_data(const em_tensor *t)
{
    /* integer arithmetic: a meta storage's data is NULL, and NULL + n is undefined */
    return (char *)((uintptr_t)t->storage->data + (uintptr_t)(t->offset * (int64_t)em_dtypes[t->dtype].size));
}
/* t's element 0 readable on the host (Note [Host reads] in core.h): t's own
 * address on the CPU (no copy, *hold NULL), else em_host_tensor's copy,
 * which *hold keeps alive (release it). NULL with an error (meta). */
static inline const char *em_host_data(const em_tensor *t, em_tensor **hold)
{
    *hold = NULL;
    if (t->storage->device.type == EM_CPU) return em_tensor_data(t);
    *hold = em_host_tensor(t);
    return *hold ? em_tensor_data(*hold) : NULL;
}
static inline void em_bump_version(em_tensor *t) { __atomic_add_fetch(&t->storage->version, 1, __ATOMIC_RELAXED); }

/* ---- shape math ------------------------------------------------------ */
int64_t em_shape_numel(int ndim, const int64_t *sizes);
void em_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);
bool em_tensor_is_dense(const em_tensor *t); /* non-overlapping and dense, any order */
/* Strides of memory format f (not preserve) for sizes; -1 with an error when
 * the rank does not fit the format (src/core/memory_format.c). */
int em_format_strides(int ndim, const int64_t *sizes, em_memory_format f, int64_t *strides);
/* Dense strides in the dim order of `strides`: the layout preserve_format
 * gives a tensor with holes or overlaps. */
void em_dense_strides_like(int ndim, const int64_t *sizes, const int64_t *strides, int64_t *out);
/* Wraps dim into [0, ndim) (ndim 0 accepts -1 and 0); -1 with an IndexError set. */
int em_wrap_dim(int dim, int ndim, const char *op);
/* Broadcast two shapes into `out` (which may alias a or b); returns ndim of
 * the result or -1 with an error. */
int em_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int64_t *out,
                        const char *op);
/* Checked size arithmetic: false on overflow. */
bool em_mul_overflow(int64_t a, int64_t b, int64_t *out);
/* Validate sizes (non-negative, byte count fits); error naming `op`. */
em_status em_check_sizes(int ndim, const int64_t *sizes, em_dtype dt, const char *op);
/* The bytes of storage a geometry reaches (element `offset` on; 0 when it
 * has no elements), overflow-checked; strides must be >= 0. Sizes checked. */
em_status em_storage_extent(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, em_dtype dt,
                            int64_t *nbytes, const char *op);

#define EM_UNUSED(x) ((void)(x))

/* ---- profiler hooks (src/core/profiler.c; Note [Profiler cost]) ------- */
extern bool em_profiling;
static inline bool em_profiler_on(void) { return __builtin_expect(__atomic_load_n(&em_profiling, __ATOMIC_RELAXED), 0); }
/* Opens a span (kind: enum em_profile_kind; in: the tensor inputs, for
 * their shapes) and returns its id for em_profile_end; -1 when not recorded. */
int64_t em_profile_begin(const char *name, int kind, int nin, const em_tensor *const *in);
void em_profile_end(int64_t id);
/* Charges an allocation (> 0) or a free (< 0) to the innermost open span. */
void em_profile_memory(int64_t delta);
/* An op's output allocated for it just before its span opened (its storage
 * never written yet): moves that allocation from the enclosing span to span id. */
void em_profile_claim_output(int64_t id, const em_tensor *out);

#endif
