/* The CPython glue of Ember (the `ember._C` extension): shared declarations.
 *
 * Every Python-visible op is one binding: a static parser built from
 * PyTorch-style signature strings (args.c) and an implementation that gets
 * the parsed arguments. EMP_BIND defines both, plus the two METH_FASTCALL
 * entry points (module function and Tensor method) that feed them, so that
 * `ember.sum(x, 1)` and `x.sum(1)` share one parser and one body. */
#ifndef EMP_H
#define EMP_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <ember/ember.h>

/* ---- the Tensor object -------------------------------------------------- */
typedef struct EmpTensor {
    PyObject_HEAD
    em_tensor *t;       /* owned reference */
    PyObject *dict;     /* user attributes (nn.Parameter, modules set some) */
    PyObject *weakrefs;
} EmpTensor;

extern PyTypeObject EmpTensorBase_Type;  /* _C.TensorBase; ember.Tensor subclasses it in Python */
extern PyTypeObject *emp_tensor_class;   /* the class new tensors get (ember.Tensor) */

static inline int emp_is_tensor(PyObject *o) { return PyObject_TypeCheck(o, &EmpTensorBase_Type); }
static inline em_tensor *emp_t(PyObject *o) { return ((EmpTensor *)o)->t; }
/* Wraps a NEW em_tensor reference (stolen) in its Python object: the live
 * object already bound to it if there is one, else a new one. NULL in: the
 * C error becomes a Python exception. */
PyObject *emp_wrap(em_tensor *t);
/* A tuple of wrapped tensors (each stolen); NULL entries become None. */
PyObject *emp_wrap_tuple(int n, em_tensor **ts);
/* Copies a tensor, a NumPy array / buffer, or nested sequences of numbers
 * into a new tensor of dtype dt (EM_DTYPE_NONE: inferred as PyTorch does).
 * NULL with a Python exception (factory.c). */
em_tensor *emp_tensor_from_object(PyObject *obj, em_dtype dt);
/* A NumPy array or scalar copied into a new tensor (dt EM_DTYPE_NONE keeps
 * its dtype); NULL without an exception when obj is neither, NULL with one
 * on failure (interop.c). */
em_tensor *emp_array_to_tensor(PyObject *obj, em_dtype dt);
/* NumPy arrays without the NumPy C API (interop.c): the test (subclasses
 * too), and a tensor sharing an array's memory (from_numpy's checks and
 * read-only warning), a new reference or NULL with an exception. */
bool emp_is_ndarray(PyObject *obj);
/* A Python complex or a NumPy complex scalar (np.complex64 is no complex subclass). */
bool emp_is_complex_number(PyObject *obj);
em_tensor *emp_array_share(PyObject *arr);
/* DLPack (dlpack.c): a tensor over a "dltensor" capsule's memory, which it
 * consumes (renamed "used_dltensor"); NULL with an exception. */
em_tensor *emp_tensor_from_dlpack(PyObject *capsule);
/* A Generator argument: NULL (no exception) for None, the default generator. */
em_generator *emp_generator_arg(PyObject *o);
PyObject *emp_tensor_item(PyObject *self);  /* .item() */
int emp_tensor_init(PyObject *module);
int emp_generator_init(PyObject *module);
/* The Python object for a graph node (autograd.c): a new reference. */
PyObject *emp_node_obj(em_node *n);
/* For in-place and out= forms: `self` (new ref) on EM_OK, else raises the C error. */
PyObject *emp_status_self(em_status st, PyObject *self);
/* A binding's result with an optional out= at arg k: EMP_OUT(k, call_out, call). */
#define EMP_OUT(k, with_out, without) (a->has[k] ? emp_status_self(with_out, a->obj[k]) : emp_wrap(without))

/* ---- errors ------------------------------------------------------------- */
/* Raises the thread's C error as the exception PyTorch raises; returns NULL. */
PyObject *emp_raise(void);
/* A Python exception raised inside a callback Ember called (hook, custom
 * function) is parked here and restored by emp_raise, so it reaches the
 * caller unchanged. emp_park_exception also sets the C error. */
em_status emp_park_exception(void);

/* ---- dtypes and devices ------------------------------------------------- */
extern PyTypeObject EmpDtype_Type;
extern PyTypeObject EmpDevice_Type;
extern PyTypeObject EmpSize_Type;
typedef struct { PyObject_HEAD em_dtype dtype; } EmpDtype;
typedef struct { PyObject_HEAD em_device device; } EmpDevice;
PyObject *emp_dtype_obj(em_dtype dt);      /* borrowed: ember.float32... */
PyObject *emp_device_obj(em_device d);     /* new reference */
PyObject *emp_size_new(int n, const int64_t *v); /* ember.Size */
/* Parses a device spec ('cpu', 'cuda:0', ember.device, int); -1 with TypeError/RuntimeError. */
int emp_parse_device(PyObject *o, em_device *out);
int emp_dtype_init(PyObject *module);

/* ---- argument parsing (args.c) ----------------------------------------- */
#define EMP_MAX_ARGS 12
#define EMP_MAX_SIGS 6
typedef enum emp_type {
    EMP_TENSOR,     /* Tensor */
    EMP_SCALAR_T,   /* Tensor or Python number: numbers become wrapped-number tensors */
    EMP_SCALAR,     /* Python number (or a 1-element tensor): .d (and .i for ints) */
    EMP_INT,        /* int (or __index__): .i */
    EMP_FLOAT,      /* float or int: .d */
    EMP_BOOL,       /* bool: .b */
    EMP_INTLIST,    /* int[]: an int, a tuple/list/Size of ints ("int..." also as varargs) */
    EMP_DTYPE,      /* ember.dtype: .i = em_dtype */
    EMP_DEVICE,     /* device spec: .dev */
    EMP_STR,        /* str: .s (UTF-8, borrowed from obj) */
    EMP_TENSORLIST, /* tuple/list of tensors: obj */
    EMP_OBJECT,     /* anything: obj */
    EMP_LAYOUT,     /* an ember.layout (only ember.strided exists): obj */
    EMP_MEMFMT,     /* an ember.memory_format: obj, and its em_memory_format in i */
} emp_type;

typedef struct emp_param {
    PyObject *name;       /* interned */
    uint8_t type;         /* emp_type */
    bool optional;        /* "?" after the type: None allowed */
    bool kwonly;
    bool has_default;
    bool varargs;         /* "int...": the ints may come as separate positional args */
    bool is_dim;          /* named dim, dim0, dims, start_dim...: checked against the dims a tensor can have */
    bool dim_name;        /* `dim` of an op PyTorch also declares with a dim-name (str) overload */
    int8_t list_len;      /* int[N]: a single int is repeated N times */
    PyObject *def_obj;    /* the default as a Python object (parsed once), or NULL for None */
} emp_param;

typedef struct emp_sig {
    int nparams, npos;    /* npos: params that may be given positionally */
    emp_param p[EMP_MAX_ARGS];
    const char *text;
} emp_sig;

typedef struct emp_parser {
    const char *name;
    const char *sigs[EMP_MAX_SIGS + 1]; /* NULL-terminated */
    int nsigs;                           /* 0 until parsed (lazily, once) */
    emp_sig parsed[EMP_MAX_SIGS];
} emp_parser;

/* The parsed arguments of one call, indexed like the matched signature's
 * params; defaults are applied, so the value fields always hold the value. */
typedef struct emp_args {
    int sig;                        /* index of the matched signature */
    PyObject *self;                 /* the Tensor a method was called on, or NULL */
    bool has[EMP_MAX_ARGS];         /* the value is not None (given, or a non-None default) */
    PyObject *obj[EMP_MAX_ARGS];    /* borrowed Python objects (NULL: absent or None) */
    em_tensor *t[EMP_MAX_ARGS];     /* EMP_TENSOR / EMP_SCALAR_T */
    double d[EMP_MAX_ARGS];
    int64_t i[EMP_MAX_ARGS];        /* ints, bools, dtypes */
    bool isint[EMP_MAX_ARGS];       /* EMP_SCALAR: the number was an int (or bool) */
    const char *s[EMP_MAX_ARGS];
    em_device dev[EMP_MAX_ARGS];
    int nlist[EMP_MAX_ARGS];        /* EMP_INTLIST length */
    int64_t list[EMP_MAX_ARGS][EM_MAX_DIMS];
    int nowned;
    em_tensor *owned[EMP_MAX_ARGS]; /* wrapped numbers made by the parser */
    PyObject *deferred;             /* an error in a value (int past int64, a dim name) raised only if the
                                     * call fits the signature: PyTorch checks the types first */
    bool device_set;                /* emp_use_device set the factory device; emp_call restores prev_device */
    em_device prev_device;
} emp_args;

/* Fills `a` from a FASTCALL call (self prepended as the first param when not
 * NULL); tries each signature in order. 0, or -1 with PyTorch's TypeError
 * listing the accepted signatures. */
int emp_parse(emp_parser *p, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
              emp_args *a);
void emp_args_release(emp_args *a);
/* A dim as a C int: values beyond int's range stay out of range (the op
 * then raises its IndexError) instead of wrapping into a valid dim. (Params
 * named as dims are already bounded by the parser; this is for the rest.) */
static inline int emp_dim_value(int64_t v) { return v > (1 << 30) ? (1 << 30) : v < -(1 << 30) ? -(1 << 30) : (int)v; }
static inline int emp_dim(emp_args *a, int k) { return emp_dim_value(a->i[k]); }
/* int[] list as C ints (dims). */
static inline const int *emp_dims(emp_args *a, int k, int *buf)
{
    for (int j = 0; j < a->nlist[k]; j++) buf[j] = emp_dim_value(a->list[k][j]);
    return buf;
}
/* A dtype argument, or EM_DTYPE_NONE when absent. */
static inline em_dtype emp_dtype_arg(emp_args *a, int k) { return a->has[k] ? (em_dtype)a->i[k] : EM_DTYPE_NONE; }
/* r (a new reference, contiguous, shaped like a->t[0]) laid out as argument
 * kmf (memory_format=, preserve when absent) asks for a->t[0]'s *_like;
 * NULL with the error set on failure (r is released). factory.c */
em_tensor *emp_like_layout(em_tensor *r, emp_args *a, int kmf);
/* Collects a tuple/list of tensors into out[max] (borrowed); returns the count or -1. */
int emp_tensor_seq(PyObject *seq, em_tensor **out, int max, const char *what);
/* An int (or __index__ object) as int64: 0, or -1 with an exception (PyTorch's RuntimeError
 * "Overflow when unpacking long" past int64's range): every int the binding reads goes through it. */
int emp_as_int64(PyObject *o, int64_t *out);
/* Converts a Python number to a wrapped-number tensor (new ref); NULL with no error set if not a
 * number, NULL with RuntimeError for an int beyond int64 (PyTorch's "Overflow when unpacking long"). */
em_tensor *emp_number_tensor(PyObject *o);

typedef PyObject *(*emp_impl)(emp_args *a);
PyObject *emp_call(emp_parser *p, emp_impl impl, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames);

/* EMP_BIND(name, "sig", ...) { body using emp_args *a } defines the parser,
 * the body and the entry points emp_fn_<name> (module) and emp_meth_<name>
 * (Tensor method); list them in a table with EMP_FUNCTION / EMP_METHOD. */
#define EMP_BIND(name, ...)                                                                         \
    static emp_parser emp_parser_##name = {#name, {__VA_ARGS__, NULL}};                             \
    static PyObject *emp_impl_##name(emp_args *a);                                                  \
    __attribute__((unused)) static PyObject *emp_fn_##name(PyObject *m, PyObject *const *args,      \
                                                           Py_ssize_t n, PyObject *kw)              \
    {                                                                                               \
        return emp_call(&emp_parser_##name, emp_impl_##name, NULL, args, n, kw);                    \
    }                                                                                               \
    __attribute__((unused)) static PyObject *emp_meth_##name(PyObject *self, PyObject *const *args, \
                                                             Py_ssize_t n, PyObject *kw)            \
    {                                                                                               \
        return emp_call(&emp_parser_##name, emp_impl_##name, self, args, n, kw);                    \
    }                                                                                               \
    static PyObject *emp_impl_##name(emp_args *a)

/* The error of every call that needs a CUDA device this build lacks (the
 * same text as ember.cuda's; PyTorch says "Torch not compiled with CUDA
 * enabled"). */
#define EMP_NO_CUDA "Ember not compiled with CUDA enabled: device cuda is not available in this build"

/* A factory's device= argument (k): cuda is a RuntimeError (no CUDA in
 * this build); meta becomes the device the call's factories create on
 * (em_set_factory_device) until the binding returns. 0 or -1 (raised). */
static inline int emp_use_device(emp_args *a, int k)
{
    if (!a->has[k] || a->dev[k].type == EM_CPU) return 0;
    if (a->dev[k].type != EM_META) {
        PyErr_SetString(PyExc_RuntimeError, EMP_NO_CUDA);
        return -1;
    }
    em_device prev = em_set_factory_device(a->dev[k]);
    if (!a->device_set) a->prev_device = prev; /* guard_device may have set it first */
    a->device_set = true;
    return 0;
}

#define EMP_FASTCALL (METH_FASTCALL | METH_KEYWORDS)
#define EMP_FUNCTION(name) {#name, (PyCFunction)(void (*)(void))emp_fn_##name, EMP_FASTCALL, NULL}
#define EMP_METHOD(name) {#name, (PyCFunction)(void (*)(void))emp_meth_##name, EMP_FASTCALL, NULL}
#define EMP_FUNCTION_AS(pyname, name) {pyname, (PyCFunction)(void (*)(void))emp_fn_##name, EMP_FASTCALL, NULL}
#define EMP_METHOD_AS(pyname, name) {pyname, (PyCFunction)(void (*)(void))emp_meth_##name, EMP_FASTCALL, NULL}

/* The module's functions and the Tensor's methods, assembled at import from
 * each binding file's tables (module.c). Adding an entry whose name is
 * already there replaces it (hand-written bindings override generated ones). */
typedef struct emp_table {
    PyMethodDef *defs;
    int n, cap;
} emp_table;
void emp_table_add(emp_table *t, const PyMethodDef *def);
void emp_table_add_all(emp_table *t, const PyMethodDef *defs); /* NULL-name terminated */
void emp_table_remove(emp_table *t, const char *name);
/* Each binding file's tables (NULL-name terminated). */
extern PyMethodDef emp_tensor_functions[], emp_tensor_methods[];
extern PyMethodDef emp_params_functions[], emp_params_methods[];
extern PyMethodDef emp_factory_functions[];
extern PyMethodDef emp_shape_functions[], emp_shape_methods[], emp_index_functions[], emp_index_methods[],
    emp_random_functions[], emp_random_methods[];
/* nonzero(t, as_tuple=True), also torch.where(condition): one 1-d index tensor per dim (bind_index.c). */
PyObject *emp_nonzero_tuple(const em_tensor *t);
extern PyMethodDef emp_autograd_functions[];
int emp_autograd_init(PyObject *module); /* the Node and Function ctx types */
extern PyMethodDef emp_interop_functions[], emp_array_export_functions[], emp_array_export_methods[];
extern PyMethodDef emp_dlpack_functions[];
extern PyMethodDef emp_shared_memory_functions[], emp_shared_memory_methods[];
extern PyBufferProcs emp_tensor_as_buffer;
extern PyMethodDef emp_inplace_view_methods[];
extern PyMethodDef emp_reduce_functions[], emp_reduce_methods[], emp_scan_functions[], emp_scan_methods[];
extern PyMethodDef emp_complex_functions[];
extern PyMethodDef emp_sort_functions[], emp_sort_methods[], emp_linalg_functions[], emp_linalg_methods[];
extern PyMethodDef emp_lapack_functions[];
extern PyMethodDef emp_fft_functions[];
/* The nn and optim families: ember.<name> functions (where torch has them at the top
 * level) and ember._C._nn functions (torch._C._nn's, and the rest F needs). */
extern PyMethodDef emp_conv_functions[], emp_conv_nn[];
extern PyMethodDef emp_pool_functions[], emp_pool_nn[];
extern PyMethodDef emp_norm_functions[], emp_norm_nn[];
extern PyMethodDef emp_loss_functions[], emp_loss_nn[];
extern PyMethodDef emp_rnn_functions[], emp_rnn_nn[];
extern PyMethodDef emp_attention_functions[], emp_attention_nn[];
extern PyMethodDef emp_optim_functions[], emp_optim_nn[];
extern PyMethodDef emp_nnact_functions[], emp_nnact_methods[], emp_nnact_nn[];
extern PyMethodDef emp_serialize_functions[];
extern PyMethodDef emp_profiler_functions[];
extern PyMethodDef emp_autocast_functions[];
extern PyMethodDef emp_nn_linear_nn[]; /* ember._C._nn.linear (bind_nn_linear.c) */
extern const char *const emp_pointwise_hidden[]; /* table ops Python does not see under their C name */
extern const char *const emp_function_only[];    /* ops PyTorch has no Tensor method for (nn.functional's) */
void emp_pointwise_tables(emp_table *functions, emp_table *methods, const char *const *hidden);
extern PyNumberMethods emp_tensor_as_number;
extern PyMappingMethods emp_tensor_as_mapping; /* x[index], x[index] = value (indexing.c) */
PyObject *emp_tensor_richcompare(PyObject *a, PyObject *b, int op);

#endif
