/* ember._C: module init, the assembled function and method tables, and the
 * small process-wide settings (default dtype, seed, threads, grad mode). */
#include "emp.h"

/* ---- tables ----------------------------------------------------------------- */
void emp_table_add(emp_table *t, const PyMethodDef *def)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->defs[i].ml_name, def->ml_name)) {
            t->defs[i] = *def;
            return;
        }
    if (t->n + 1 >= t->cap) { /* keep room for the terminator */
        t->cap = t->cap ? 2 * t->cap : 256;
        t->defs = PyMem_RawRealloc(t->defs, t->cap * sizeof *t->defs); /* lives as long as the process */
        if (!t->defs) abort();
    }
    t->defs[t->n++] = *def;
    t->defs[t->n] = (PyMethodDef){NULL};
}

void emp_table_remove(emp_table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->defs[i].ml_name, name)) {
            memmove(&t->defs[i], &t->defs[i + 1], (t->n - i) * sizeof *t->defs); /* the terminator moves too */
            t->n--;
            return;
        }
}

void emp_table_add_all(emp_table *t, const PyMethodDef *defs)
{
    for (; defs->ml_name; defs++) emp_table_add(t, defs);
}

/* ---- settings ------------------------------------------------------------------ */
static PyObject *set_tensor_class(PyObject *m, PyObject *cls)
{
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &EmpTensorBase_Type))
        return PyErr_Format(PyExc_TypeError, "_set_tensor_class expects a subclass of TensorBase");
    Py_INCREF(cls);
    emp_tensor_class = (PyTypeObject *)cls; /* kept for the life of the process */
    Py_RETURN_NONE;
}

static PyObject *get_default_dtype(PyObject *m, PyObject *unused) { return Py_NewRef(emp_dtype_obj(em_get_default_dtype())); }

static PyObject *set_default_dtype(PyObject *m, PyObject *d)
{
    if (Py_TYPE(d) != &EmpDtype_Type)
        return PyErr_Format(PyExc_TypeError, "set_default_dtype expects an ember.dtype, not %s", Py_TYPE(d)->tp_name);
    em_dtype dt = ((EmpDtype *)d)->dtype;
    if (dt != EM_F32 && dt != EM_F64)
        return PyErr_Format(PyExc_TypeError, "only floating-point types are supported as the default type");
    if (em_set_default_dtype(dt)) return emp_raise();
    Py_RETURN_NONE;
}

static PyObject *manual_seed(PyObject *m, PyObject *seed)
{
    unsigned long long s = PyLong_AsUnsignedLongLongMask(seed);
    if (PyErr_Occurred()) return NULL;
    em_manual_seed(s);
    return PyObject_GetAttrString(m, "default_generator"); /* as torch.manual_seed */
}

static PyObject *initial_seed(PyObject *m, PyObject *unused)
{
    return PyLong_FromUnsignedLongLong(em_generator_initial_seed(NULL));
}

/* A positive thread count for fn (PyTorch's messages), or -1 with an error. */
static long thread_count(PyObject *n, const char *fn)
{
    if (!PyLong_Check(n) || PyBool_Check(n)) {
        PyErr_Format(PyExc_RuntimeError, "%s expects an int, but got %s", fn, Py_TYPE(n)->tp_name);
        return -1;
    }
    long v = PyLong_AsLong(n);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v <= 0 || v > 1 << 16) {
        PyErr_Format(PyExc_RuntimeError, "%s expects a positive integer", fn);
        return -1;
    }
    return v;
}

static PyObject *set_num_threads(PyObject *m, PyObject *n)
{
    long v = thread_count(n, "set_num_threads");
    if (v < 0) return NULL;
    em_set_num_threads((int)v);
    Py_RETURN_NONE;
}

static PyObject *set_grain_divisor(PyObject *m, PyObject *n)
{
    long long v = PyLong_AsLongLong(n);
    if (v == -1 && PyErr_Occurred()) return NULL;
    em_set_grain_divisor((int64_t)v);
    Py_RETURN_NONE;
}

static PyObject *parallel_stalls(PyObject *m, PyObject *unused) { return PyLong_FromLongLong(em_parallel_stalls()); }

static PyObject *set_num_interop_threads(PyObject *m, PyObject *n)
{
    long v = thread_count(n, "set_num_interop_threads");
    if (v < 0) return NULL;
    if (em_set_num_interop_threads((int)v)) return emp_raise();
    Py_RETURN_NONE;
}

static PyObject *get_num_interop_threads(PyObject *m, PyObject *unused)
{
    return PyLong_FromLong(em_get_num_interop_threads());
}

static PyObject *get_num_threads(PyObject *m, PyObject *unused) { return PyLong_FromLong(em_get_num_threads()); }
static PyObject *is_grad_enabled(PyObject *m, PyObject *unused) { return PyBool_FromLong(em_is_grad_enabled()); }

static PyObject *set_grad_enabled(PyObject *m, PyObject *on)
{
    int v = PyObject_IsTrue(on);
    if (v < 0) return NULL;
    em_set_grad_enabled(v);
    Py_RETURN_NONE;
}

static PyObject *is_inference_mode_enabled(PyObject *m, PyObject *unused)
{
    return PyBool_FromLong(em_is_inference_mode_enabled());
}

static PyObject *set_inference_mode(PyObject *m, PyObject *on)
{
    int v = PyObject_IsTrue(on);
    if (v < 0) return NULL;
    em_set_inference_mode(v);
    Py_RETURN_NONE;
}

/* What this build of Ember was compiled with, for ember.cuda and
 * ember.backends. The CUDA device count is 0 until the CUDA backend reports
 * its devices here. */
static PyObject *cuda_is_built(PyObject *m, PyObject *unused)
{
#ifdef EM_WITH_CUDA
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}
static PyObject *cuda_device_count(PyObject *m, PyObject *unused) { return PyLong_FromLong(0); }
static PyObject *has_mkldnn(PyObject *m, PyObject *unused)
{
#ifdef EM_WITH_DNNL
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

/* torch.set_flush_denormal: FTZ and DAZ in this thread's MXCSR (x86 only). */
static PyObject *set_flush_denormal(PyObject *m, PyObject *on)
{
    int v = PyObject_IsTrue(on);
    if (v < 0) return NULL;
#if defined(__x86_64__) || defined(__i386__)
    unsigned csr = __builtin_ia32_stmxcsr();
    const unsigned ftz_daz = (1u << 15) | (1u << 6);
    __builtin_ia32_ldmxcsr(v ? csr | ftz_daz : csr & ~ftz_daz);
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

static PyObject *empty_cache(PyObject *m, PyObject *unused)
{
    em_empty_cache();
    Py_RETURN_NONE;
}

/* The op table as data: (name, kind, differentiable, has in-place form) per
 * op, for tests that walk it (every op must be bound and tested). */
static PyObject *op_table(PyObject *m, PyObject *unused)
{
    static const char *kinds[] = {"other", "unary", "binary", "ternary"};
    PyObject *l = PyList_New(EM_OP_COUNT);
    for (int i = 0; l && i < EM_OP_COUNT; i++) {
        const em_op_info *op = &em_ops[i];
        PyObject *row = Py_BuildValue("(ssOO)", op->name, kinds[op->kind], op->flags & EM_F_DIFF ? Py_True : Py_False,
                                      op->flags & EM_F_NO_INPLACE ? Py_False : Py_True);
        if (!row) Py_CLEAR(l);
        else PyList_SET_ITEM(l, i, row);
    }
    return l;
}

static PyMethodDef settings[] = {
    {"_op_table", op_table, METH_NOARGS, NULL},
    {"_set_tensor_class", set_tensor_class, METH_O, NULL},
    {"get_default_dtype", get_default_dtype, METH_NOARGS, "The default floating-point dtype."},
    {"_set_default_dtype", set_default_dtype, METH_O, NULL},
    {"manual_seed", manual_seed, METH_O, NULL},
    {"initial_seed", initial_seed, METH_NOARGS, NULL},
    {"set_num_threads", set_num_threads, METH_O, "Threads used by CPU kernels and BLAS."},
    {"_set_grain_divisor", set_grain_divisor, METH_O, "Divides every parallel grain (tools/measure_grains.py)."},
    {"_parallel_stalls", parallel_stalls, METH_NOARGS, "Waits for a descheduled pool worker so far (Note [Stalls])."},
    {"get_num_threads", get_num_threads, METH_NOARGS, NULL},
    {"set_num_interop_threads", set_num_interop_threads, METH_O, "Kept for PyTorch's API: settable once."},
    {"get_num_interop_threads", get_num_interop_threads, METH_NOARGS, NULL},
    {"is_grad_enabled", is_grad_enabled, METH_NOARGS, NULL},
    {"_set_grad_enabled", set_grad_enabled, METH_O, NULL},
    {"is_inference_mode_enabled", is_inference_mode_enabled, METH_NOARGS, NULL},
    {"_set_inference_mode", set_inference_mode, METH_O, NULL},
    {"_empty_cache", empty_cache, METH_NOARGS, NULL},
    {"_cuda_is_built", cuda_is_built, METH_NOARGS, NULL},
    {"_cuda_device_count", cuda_device_count, METH_NOARGS, NULL},
    {"_has_mkldnn", has_mkldnn, METH_NOARGS, NULL},
    {"_set_flush_denormal", set_flush_denormal, METH_O, NULL},
    {NULL},
};

static struct PyModuleDef nn_module_def = {
    PyModuleDef_HEAD_INIT, .m_name = "ember._C._nn", .m_doc = "Ember's nn kernels (as torch._C._nn).", .m_size = -1,
};

/* ember._C._nn: the nn functions torch keeps out of its top level. */
static int add_nn_module(PyObject *m, PyMethodDef *defs)
{
    PyObject *nn = PyModule_Create(&nn_module_def);
    if (!nn) return -1;
    if ((defs && PyModule_AddFunctions(nn, defs)) || PyModule_AddObjectRef(m, "_nn", nn)) {
        Py_DECREF(nn);
        return -1;
    }
    Py_DECREF(nn);
    return 0;
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, .m_name = "ember._C", .m_doc = "Ember's C core.", .m_size = -1,
};

PyMODINIT_FUNC PyInit__C(void)
{
    static emp_table functions, methods, nn_functions;
    emp_pointwise_tables(&functions, &methods, emp_pointwise_hidden);
    emp_table_add_all(&functions, emp_params_functions);
    emp_table_add_all(&methods, emp_params_methods);
    emp_table_add_all(&functions, emp_tensor_functions);
    emp_table_add_all(&methods, emp_tensor_methods);
    for (const char *const *name = emp_function_only; *name; name++) {
        char inplace[64];
        snprintf(inplace, sizeof inplace, "%s_", *name);
        emp_table_remove(&methods, *name);
        emp_table_remove(&methods, inplace);
    }
    emp_table_add_all(&functions, emp_factory_functions);
    emp_table_add_all(&functions, emp_shape_functions);
    emp_table_add_all(&methods, emp_shape_methods);
    emp_table_add_all(&functions, emp_index_functions);
    emp_table_add_all(&methods, emp_index_methods);
    emp_table_add_all(&functions, emp_random_functions);
    emp_table_add_all(&methods, emp_random_methods);
    emp_table_add_all(&functions, emp_autograd_functions);
    emp_table_add_all(&functions, emp_interop_functions);
    emp_table_add_all(&functions, emp_array_export_functions);
    emp_table_add_all(&methods, emp_array_export_methods);
    emp_table_add_all(&functions, emp_dlpack_functions);
    emp_table_add_all(&functions, emp_shared_memory_functions);
    emp_table_add_all(&methods, emp_shared_memory_methods);
    emp_table_add_all(&functions, emp_reduce_functions);
    emp_table_add_all(&methods, emp_reduce_methods);
    emp_table_add_all(&methods, emp_inplace_view_methods);
    emp_table_add_all(&functions, emp_scan_functions);
    emp_table_add_all(&methods, emp_scan_methods);
    emp_table_add_all(&functions, emp_complex_functions);
    emp_table_add_all(&functions, emp_sort_functions);
    emp_table_add_all(&methods, emp_sort_methods);
    emp_table_add_all(&functions, emp_linalg_functions);
    emp_table_add_all(&functions, emp_lapack_functions);
    emp_table_add_all(&functions, emp_fft_functions);
    emp_table_add_all(&methods, emp_linalg_methods);
    emp_table_add_all(&functions, settings);
    emp_table_add_all(&functions, emp_conv_functions);
    emp_table_add_all(&nn_functions, emp_conv_nn);
    emp_table_add_all(&functions, emp_pool_functions);
    emp_table_add_all(&nn_functions, emp_pool_nn);
    emp_table_add_all(&functions, emp_norm_functions);
    emp_table_add_all(&nn_functions, emp_norm_nn);
    emp_table_add_all(&functions, emp_loss_functions);
    emp_table_add_all(&nn_functions, emp_loss_nn);
    emp_table_add_all(&functions, emp_rnn_functions);
    emp_table_add_all(&nn_functions, emp_rnn_nn);
    emp_table_add_all(&functions, emp_attention_functions);
    emp_table_add_all(&nn_functions, emp_attention_nn);
    emp_table_add_all(&functions, emp_optim_functions);
    emp_table_add_all(&nn_functions, emp_optim_nn);
    emp_table_add_all(&functions, emp_nnact_functions);
    emp_table_add_all(&methods, emp_nnact_methods);
    emp_table_add_all(&nn_functions, emp_nnact_nn);
    emp_table_add_all(&functions, emp_serialize_functions);
    emp_table_add_all(&functions, emp_profiler_functions);
    emp_table_add_all(&functions, emp_autocast_functions);
    emp_table_add_all(&nn_functions, emp_nn_linear_nn);

    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    EmpTensorBase_Type.tp_methods = methods.defs;
    if (emp_dtype_init(m) || emp_tensor_init(m) || emp_generator_init(m) || emp_autograd_init(m) ||
        PyModule_AddFunctions(m, functions.defs) || add_nn_module(m, nn_functions.defs)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
