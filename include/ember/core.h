/* Ember's core C API: dtypes, devices, errors, tensors and their views.
 *
 * Conventions (see docs/c_api.md):
 * - A function returning `em_tensor *` returns a NEW reference; release it
 *   with em_release(). Tensor arguments are BORROWED.
 * - NULL (or a nonzero em_status) means failure: em_last_error() holds a
 *   thread-local message, em_error_code() its kind. A failed call leaves
 *   every argument as it was.
 * - Pointer arguments must not be NULL unless the function's comment says
 *   so: a NULL one fails with EM_ERR_VALUE ("em_view: sizes is NULL"). An
 *   array whose length argument is 0 may be NULL. A function returning
 *   neither a tensor nor a status has an error value, given with it: -1 for
 *   counts and sizes, NULL for pointers; where every value is a valid
 *   answer (bool, versions, byte counts) only em_error_code() tells.
 * - Dims may be negative (counted from the end), as in PyTorch. */
#ifndef EMBER_CORE_H
#define EMBER_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EM_MAX_DIMS 16

/* ---- dtypes ---------------------------------------------------------- */
typedef enum em_dtype {
#define EM_DTYPE(E, name, scalar_name, ctype, kind) EM_##E,
#include "dtypes.def"
#undef EM_DTYPE
    EM_DTYPE_COUNT,
    EM_DTYPE_NONE = -1 /* "not given": e.g. sum(dtype=None) */
} em_dtype;

const char *em_dtype_name(em_dtype dt);  /* "float32"; "invalid" if out of range */
const char *em_dtype_scalar_name(em_dtype dt); /* PyTorch's ScalarType name: "Float" */
size_t em_dtype_size(em_dtype dt);
bool em_dtype_is_float(em_dtype dt);
bool em_dtype_is_int(em_dtype dt);       /* integral, bool excluded */
bool em_dtype_is_signed(em_dtype dt);  /* signed ints, floats and complex */
bool em_dtype_is_complex(em_dtype dt);
em_dtype em_dtype_to_complex(em_dtype dt); /* float16 -> complex32, float64 -> complex128, else complex64 */
em_dtype em_dtype_to_real(em_dtype dt);    /* complex -> its part's dtype; others unchanged */
em_dtype em_promote_types(em_dtype a, em_dtype b);
em_dtype em_get_default_dtype(void);     /* float32 unless set */
int em_set_default_dtype(em_dtype dt);   /* float32 or float64 (as PyTorch) */
em_dtype em_get_default_complex_dtype(void); /* complex64, or complex128 with float64 */

/* ---- devices --------------------------------------------------------- */
/* EM_META: PyTorch's meta device, tensors with sizes, strides and dtype but
 * no data; every op computes its result's metadata only. */
typedef enum em_device_type { EM_CPU = 0, EM_CUDA = 1, EM_META = 2, EM_DEVICE_TYPE_COUNT } em_device_type;
typedef struct em_device {
    int8_t type;  /* em_device_type */
    int8_t index; /* 0 for cpu */
} em_device;
#define EM_DEVICE_CPU ((em_device){EM_CPU, 0})
/* The device em_empty, em_from_data and the factories built on them create
 * on: cpu unless set (PyTorch's default device), per thread. Returns the
 * previous one; a device this build lacks fails where a tensor is made. */
em_device em_set_factory_device(em_device d);
em_device em_factory_device(void);

/* ---- errors ---------------------------------------------------------- */
typedef enum em_status {
    EM_OK = 0,
    EM_ERR_RUNTIME,        /* generic failure (PyTorch: RuntimeError) */
    EM_ERR_SHAPE,          /* sizes do not fit (RuntimeError) */
    EM_ERR_DTYPE,          /* dtype not supported or not matching (RuntimeError) */
    EM_ERR_INDEX,          /* index or dim out of range (IndexError) */
    EM_ERR_DEVICE,         /* wrong or mixed devices (RuntimeError) */
    EM_ERR_MEMORY,         /* allocation failed or size overflow (RuntimeError) */
    EM_ERR_VALUE,          /* a bad argument value (ValueError) */
    EM_ERR_TYPE,           /* a bad argument type (TypeError) */
    EM_ERR_NOT_IMPLEMENTED /* NotImplementedError */
} em_status;

const char *em_last_error(void); /* thread-local; "" when none */
/* Sets the thread-local error and returns code: for callbacks Ember calls
 * (hooks, custom functions) to report why they failed. */
em_status em_fail(em_status code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
em_status em_error_code(void);
void em_clear_error(void);

/* ---- tensors --------------------------------------------------------- */
typedef struct em_tensor em_tensor;

em_tensor *em_retain(em_tensor *t); /* returns t; NULL-safe */
void em_release(em_tensor *t);      /* NULL-safe */

/* Accessors. Error values for a NULL t: -1 (ndim, size, numel, offset),
 * NULL (sizes, strides, data_ptr), EM_DTYPE_NONE, a device of type -1, and
 * false / 0 for the predicates and the version (with the error set). */
int em_ndim(const em_tensor *t);
const int64_t *em_sizes(const em_tensor *t);   /* ndim entries, borrowed: live as long as t */
const int64_t *em_strides(const em_tensor *t); /* in elements */
int64_t em_size(const em_tensor *t, int dim);  /* -1 with an error if dim is bad */
int64_t em_numel(const em_tensor *t);
int64_t em_storage_offset(const em_tensor *t);
em_dtype em_dtype_of(const em_tensor *t);
em_device em_device_of(const em_tensor *t);
bool em_is_contiguous(const em_tensor *t);
void *em_data_ptr(const em_tensor *t);   /* address of element 0 (offset applied) */
uint64_t em_version(const em_tensor *t); /* bumped by every in-place write */
bool em_is_same_storage(const em_tensor *a, const em_tensor *b);
/* Note [Host reads]
 * Code outside the kernels reads a tensor's elements (item, printing,
 * tolist, NumPy/DLPack export, writers, the op layer's reads of index and
 * size tensors) only through em_host_tensor(t): a new reference to t itself
 * (no copy) when the host addresses its device's memory (cpu), else a CPU
 * tensor of t's sizes and strides holding a copy of t's bytes, made by the
 * device's copy_to_host (src/core/device.h). A meta tensor has no data:
 * NotImplementedError "Cannot copy out of meta tensor; no data!". */
em_tensor *em_host_tensor(const em_tensor *t);
/* Element read/write as double (any dtype); for tests and small glue, not loops.
 * index has ndim entries (NULL for a 0-d t); 0 on success, else a status. */
int em_item(const em_tensor *t, double *out);                 /* t must have 1 element */
int em_item_complex(const em_tensor *t, double *re, double *im); /* imag 0 for real dtypes */
int em_get(const em_tensor *t, const int64_t *index, double *out);
int em_set(em_tensor *t, const int64_t *index, double value);

/* One pointer a language binding may keep on a tensor: its wrapper object,
 * so that the same tensor always comes back as the same object. Ember never
 * reads it and does not own it; the binding clears it when the wrapper dies. */
void *em_binding(const em_tensor *t);
void em_set_binding(em_tensor *t, void *obj);

/* ---- creation --------------------------------------------------------
 * sizes: ndim (0..EM_MAX_DIMS) entries >= 0; a size whose element or byte
 * count overflows is EM_ERR_MEMORY ("Storage size calculation overflowed"). */
em_tensor *em_empty(int ndim, const int64_t *sizes, em_dtype dt);
em_tensor *em_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides, em_dtype dt);
em_tensor *em_zeros(int ndim, const int64_t *sizes, em_dtype dt);
em_tensor *em_ones(int ndim, const int64_t *sizes, em_dtype dt);
em_tensor *em_full(int ndim, const int64_t *sizes, double value, em_dtype dt);
/* *_like: dt == EM_DTYPE_NONE keeps t's dtype; the result is contiguous. */
em_tensor *em_empty_like(const em_tensor *t, em_dtype dt);
em_tensor *em_zeros_like(const em_tensor *t, em_dtype dt);
em_tensor *em_ones_like(const em_tensor *t, em_dtype dt);
em_tensor *em_full_like(const em_tensor *t, double value, em_dtype dt);
/* A 0-d tensor. em_scalar_* make "wrapped numbers": weak for type promotion,
 * like a Python scalar in PyTorch (int64 tensor + 2.5 -> float32). */
em_tensor *em_tensor_scalar(double value, em_dtype dt);
em_tensor *em_scalar_float(double value);
em_tensor *em_scalar_int(int64_t value);
em_tensor *em_scalar_bool(bool value);
em_tensor *em_scalar_complex(double real, double imag); /* a wrapped complex128 number */
bool em_is_wrapped_number(const em_tensor *t);
/* Copy `numel` elements from a C array of dtype dt into a new tensor. */
em_tensor *em_from_data(const void *data, int ndim, const int64_t *sizes, em_dtype dt);
/* Wrap a caller's buffer without copying. `deleter(ctx)` runs when the last
 * tensor using it is released (NULL: the caller keeps ownership and must keep
 * the buffer alive). strides NULL means contiguous. */
em_tensor *em_from_blob(void *data, int ndim, const int64_t *sizes, const int64_t *strides,
                        em_dtype dt, void (*deleter)(void *ctx), void *ctx);

/* ---- views (share storage; no copy) ---------------------------------- */
em_tensor *em_view(const em_tensor *t, int ndim, const int64_t *sizes); /* one size may be -1 */
em_tensor *em_reshape(const em_tensor *t, int ndim, const int64_t *sizes); /* view if possible */
/* The storage extent of sizes, strides (>= 0) and storage_offset is
 * computed overflow-checked (EM_ERR_MEMORY) and must fit t's storage. */
/* Complex t as its (real, imag) pairs: sizes + [2] in the parts' dtype, and
 * the inverse (a float16/32/64 t whose last dim is 2 with stride 1). Views. */
em_tensor *em_view_as_real(const em_tensor *t);
em_tensor *em_view_as_complex(const em_tensor *t);
em_tensor *em_as_strided(const em_tensor *t, int ndim, const int64_t *sizes,
                         const int64_t *strides, int64_t storage_offset);
/* Tensor.set_(src) and the in-place view ops: t takes src's storage, offset,
 * sizes and strides (same dtype). Autograd is the caller's concern: the
 * bindings refuse tensors that require grad. */
em_status em_set_(em_tensor *t, const em_tensor *src);
em_tensor *em_permute(const em_tensor *t, const int *dims);
em_tensor *em_transpose(const em_tensor *t, int dim0, int dim1);
em_tensor *em_t(const em_tensor *t);                     /* <= 2-d only */
/* -1 keeps a size; a result whose element count overflows is EM_ERR_MEMORY */
em_tensor *em_expand(const em_tensor *t, int ndim, const int64_t *sizes);
em_tensor *em_expand_as(const em_tensor *t, const em_tensor *other);
em_tensor *em_narrow(const em_tensor *t, int dim, int64_t start, int64_t length);
em_tensor *em_select(const em_tensor *t, int dim, int64_t index);
em_tensor *em_slice(const em_tensor *t, int dim, int64_t start, int64_t end, int64_t step);
em_tensor *em_squeeze(const em_tensor *t);               /* all size-1 dims */
em_tensor *em_squeeze_dim(const em_tensor *t, int dim);
em_tensor *em_unsqueeze(const em_tensor *t, int dim);
em_tensor *em_flatten(const em_tensor *t, int start_dim, int end_dim);
em_tensor *em_unflatten(const em_tensor *t, int dim, int nsizes, const int64_t *sizes);
em_tensor *em_movedim(const em_tensor *t, int nsrc, const int *src, const int *dst);
em_tensor *em_diagonal(const em_tensor *t, int64_t offset, int dim1, int dim2);
em_tensor *em_unfold(const em_tensor *t, int dim, int64_t size, int64_t step);
/* split/chunk/unbind fill `out` (caller-provided array of *n slots) with new
 * references; on success *n is the number of pieces. They return 0, or a
 * nonzero em_status. */
int em_split(const em_tensor *t, int64_t split_size, int dim, em_tensor **out, int *n);
int em_split_sizes(const em_tensor *t, int nsizes, const int64_t *sizes, int dim, em_tensor **out);
int em_chunk(const em_tensor *t, int chunks, int dim, em_tensor **out, int *n);
int em_unbind(const em_tensor *t, int dim, em_tensor **out, int *n);

/* ---- copies ---------------------------------------------------------- */
em_tensor *em_contiguous(const em_tensor *t); /* new reference to t itself if already contiguous */
em_tensor *em_clone(const em_tensor *t);
em_tensor *em_to_dtype(const em_tensor *t, em_dtype dt); /* new ref to t if same dtype */
/* dst[...] = src, broadcasting src to dst's shape, converting dtypes; src
 * may be on another device (its bytes go through the host). */
em_status em_copy_(em_tensor *dst, const em_tensor *src);
/* t on device dev: a new reference to t when already there, else a copy
 * keeping t's layout when t is dense (not recorded by autograd). Copying
 * out of a meta tensor fails: "Cannot copy out of meta tensor; no data!". */
em_tensor *em_to_device(const em_tensor *t, em_device dev);
em_status em_fill_(em_tensor *t, double value);
/* real + imag i; a non-complex t takes only imag == 0 (else "cannot be converted") */
em_status em_fill_complex_(em_tensor *t, double real, double imag);
em_status em_zero_(em_tensor *t);

/* ---- memory formats (PyTorch's channels_last) -------------------------
 * Note [Memory formats]
 * A memory format names an order of a tensor's dims in memory: contiguous
 * (NCHW...), channels_last (4-d, NHWC) and channels_last_3d (5-d, NDHWC).
 * Preserve means "keep the input's layout": its exact strides when it is
 * dense (no holes, no overlap), else dense strides in the same dim order.
 * Ops that keep channels_last (conv2d, batch norm, 2-d pooling...) compute
 * contiguous and then lay their result out in em_suggest_memory_format of
 * their input. Values are those of ember.memory_format's _code. The
 * stride math is in src/core/memory_format.c (internal.h). */
typedef enum em_memory_format {
    EM_PRESERVE_FORMAT,
    EM_CONTIGUOUS_FORMAT,
    EM_CHANNELS_LAST,
    EM_CHANNELS_LAST_3D
} em_memory_format;
/* Whether t's elements lie densely in f's order (size-1 dims never count);
 * false for channels_last unless 4-d (5-d for channels_last_3d). */
bool em_is_contiguous_as(const em_tensor *t, em_memory_format f);
/* The format t's strides suggest: channels_last(_3d) when a 4-d (5-d) t has
 * its channels innermost, unambiguously; else contiguous. */
em_memory_format em_suggest_memory_format(const em_tensor *t);
/* empty(..., memory_format=f); preserve is an error here. */
em_tensor *em_empty_format(int ndim, const int64_t *sizes, em_dtype dt, em_memory_format f);
/* An uninitialised tensor shaped like t on t's device, laid out in f (see
 * Note [Memory formats] for preserve); dt EM_DTYPE_NONE keeps t's dtype. */
em_tensor *em_empty_like_format(const em_tensor *t, em_dtype dt, em_memory_format f);
/* A copy of t (differentiable) laid out in f. */
em_tensor *em_clone_format(const em_tensor *t, em_memory_format f);
/* t itself (new reference) when already contiguous in f, else a copy in f. */
em_tensor *em_contiguous_format(const em_tensor *t, em_memory_format f);
/* Tensor.to(dtype, memory_format=f, copy=): t itself when the dtype is t's,
 * copy is false and f is preserve or t's suggested format; else a copy. */
em_tensor *em_to_format(const em_tensor *t, em_dtype dt, em_memory_format f, bool copy);

/* ---- comparison of whole tensors ------------------------------------- */
bool em_equal(const em_tensor *a, const em_tensor *b); /* same shape and values */
/* |a - b| <= atol + rtol * |b| elementwise (broadcasting); *result set on success. */
em_status em_allclose(const em_tensor *a, const em_tensor *b, double rtol, double atol,
                      bool equal_nan, bool *result);

/* ---- storages ------------------------------------------------------- */
/* The storage under t (shared by all its views): its first byte and size. */
void *em_storage_data(const em_tensor *t);
size_t em_storage_nbytes(const em_tensor *t);
/* The deleter context of t's storage if the storage was made or moved with
 * `deleter` (a binding recognises its own memory this way), else NULL. */
void *em_storage_context(const em_tensor *t, void (*deleter)(void *ctx));
/* Copies t's storage's bytes to `data` (nbytes, at least
 * em_storage_nbytes(t)) and makes the storage use it from now on, in place:
 * every view of the storage sees the new memory; the old memory is freed;
 * deleter(ctx) runs when the storage dies. CPU only. Version unchanged. */
em_status em_storage_move_(em_tensor *t, void *data, size_t nbytes, void (*deleter)(void *ctx), void *ctx);

/* ---- memory ---------------------------------------------------------- */
/* Frees the CPU allocator's cache of large freed blocks (see src/core/alloc.c). */
void em_empty_cache(void);

/* ---- threads --------------------------------------------------------- */
/* Intra-op threads (src/core/threads.c): also sizes BLAS's and oneDNN's.
 * Default EMBER_NUM_THREADS, else OMP_NUM_THREADS, else the physical cores. */
void em_set_num_threads(int n);
int em_get_num_threads(void);
/* Kept for PyTorch's API (Ember has no inter-op pool): settable once. */
em_status em_set_num_interop_threads(int n);
int em_get_num_interop_threads(void);
/* Divides every parallel grain of the CPU kernels by `divisor` (1 restores
 * them; values below 1 count as 1): tools/measure_grains.py measures where
 * splitting pays by lowering the grains. Not for tuning programs. */
void em_set_grain_divisor(int64_t divisor);
/* How many times the intra-op pool has waited long for a descheduled worker
 * (a core taken by another process); after each, parallel jobs run on the
 * calling thread alone for 0.2 s. For benchmarks and tests. */
int64_t em_parallel_stalls(void);

#ifdef __cplusplus
}
#endif
#endif
