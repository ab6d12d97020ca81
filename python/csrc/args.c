/* Argument parsing for every binding: PyTorch-style signature strings,
 * parsed once into emp_sig, matched against FASTCALL arguments.
 *
 * Signature grammar: "name(TYPE NAME[=DEFAULT], ..., *, KWONLY...)" where
 * TYPE is Tensor, Number, TensorOrNumber, int, float, bool, int[], int[N],
 * int... (varargs), dtype, device, str, Tensor[], object, each optionally
 * followed by "?" (None allowed); DEFAULT is None, True, False, a number,
 * inf, -inf, nan or 'text'. Overloads are tried in order; the first whose
 * names and types all fit wins (PyTorch's rule). */
#include "emp.h"
#include <math.h>
#include <string.h>

static const struct { const char *name; emp_type type; } type_names[] = {
    {"Tensor[]", EMP_TENSORLIST}, {"TensorOrNumber", EMP_SCALAR_T}, {"Tensor", EMP_TENSOR},
    {"Number", EMP_SCALAR}, {"int...", EMP_INTLIST}, {"int[", EMP_INTLIST}, {"int", EMP_INT},
    {"float", EMP_FLOAT}, {"bool", EMP_BOOL}, {"dtype", EMP_DTYPE}, {"device", EMP_DEVICE},
    {"str", EMP_STR}, {"object", EMP_OBJECT}, {"layout", EMP_LAYOUT}, {"memory_format", EMP_MEMFMT},
};

/* How a type reads in error messages (PyTorch's words). */
static const char *type_display[] = {
    [EMP_TENSOR] = "Tensor", [EMP_SCALAR_T] = "Tensor or Number", [EMP_SCALAR] = "Number",
    [EMP_INT] = "int", [EMP_FLOAT] = "float", [EMP_BOOL] = "bool", [EMP_INTLIST] = "tuple of ints",
    [EMP_DTYPE] = "ember.dtype", [EMP_DEVICE] = "ember.device", [EMP_STR] = "str",
    [EMP_TENSORLIST] = "tuple of Tensors", [EMP_OBJECT] = "object", [EMP_LAYOUT] = "ember.layout",
    [EMP_MEMFMT] = "ember.memory_format",
};

static PyObject *parse_default(const char *s, size_t n)
{
    char buf[64];
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (!strcmp(buf, "None")) return NULL;
    if (!strcmp(buf, "True")) return Py_NewRef(Py_True);
    if (!strcmp(buf, "False")) return Py_NewRef(Py_False);
    if (buf[0] == '\'') return PyUnicode_FromStringAndSize(buf + 1, (Py_ssize_t)n - 2);
    if (!strcmp(buf, "inf")) return PyFloat_FromDouble(INFINITY);
    if (!strcmp(buf, "-inf")) return PyFloat_FromDouble(-INFINITY);
    if (!strcmp(buf, "nan")) return PyFloat_FromDouble(NAN);
    if (strpbrk(buf, ".e")) return PyFloat_FromDouble(strtod(buf, NULL));
    return PyLong_FromLongLong(strtoll(buf, NULL, 10));
}

/* Whether a param names a dim (or dims) of its tensor: dim, dim0, dims, start_dim, source... */
static bool is_dim_name(const char *name, size_t n)
{
    static const char *const names[] = {"dim", "dims", "dim0", "dim1", "dim2", "start_dim", "end_dim", "dimension",
                                        "source", "destination"};
    for (size_t j = 0; j < sizeof names / sizeof *names; j++)
        if (strlen(names[j]) == n && !strncmp(name, names[j], n)) return true;
    return false;
}

/* The ops PyTorch 1.13 also declares with dim names (a str dim): read from
 * its schemas (an overload with a Dimname `dim`). */
static bool has_dim_name_overload(const char *text)
{
    static const char *const ops[] = {
        "all", "any", "argsort", "cat", "concat", "concatenate", "cummax", "cummin", "cumprod", "cumprod_",
        "cumsum", "cumsum_", "diagonal", "flatten", "gather", "index_add", "index_copy", "index_copy_",
        "index_fill", "index_fill_", "index_select", "kthvalue", "log_softmax", "logcumsumexp", "logsumexp",
        "max", "mean", "median", "min", "mode", "nanmedian", "norm", "prod", "scatter", "scatter_add", "select",
        "size", "softmax", "sort", "squeeze", "squeeze_", "std", "std_mean", "stride", "sum", "transpose",
        "unbind", "unflatten", "var", "var_mean"};
    size_t n = strcspn(text, "(");
    for (size_t j = 0; j < sizeof ops / sizeof *ops; j++)
        if (strlen(ops[j]) == n && !strncmp(text, ops[j], n)) return true;
    return false;
}

/* Parses one signature; aborts the process on a malformed literal, which is
 * a bug in the binding caught by the first test that calls it. */
static void parse_sig(emp_sig *sig, const char *text)
{
    const char *s = strchr(text, '(') + 1;
    bool kwonly = false;
    sig->text = text;
    sig->nparams = sig->npos = 0;
    while (*s && *s != ')') {
        while (*s == ' ' || *s == ',') s++;
        if (*s == '*') { kwonly = true; s++; continue; }
        if (*s == ')') break;
        emp_param *p = &sig->p[sig->nparams++];
        memset(p, 0, sizeof *p);
        size_t t;
        for (t = 0; t < sizeof type_names / sizeof *type_names; t++)
            if (!strncmp(s, type_names[t].name, strlen(type_names[t].name))) break;
        if (t == sizeof type_names / sizeof *type_names || sig->nparams > EMP_MAX_ARGS) {
            fprintf(stderr, "ember: bad signature %s\n", text);
            abort();
        }
        p->type = type_names[t].type;
        s += strlen(type_names[t].name);
        if (!strcmp(type_names[t].name, "int...")) p->varargs = true;
        if (!strcmp(type_names[t].name, "int[")) {
            p->list_len = (int8_t)strtol(s, (char **)&s, 10);
            s++; /* ']' */
        }
        if (*s == '?') { p->optional = true; s++; }
        while (*s == ' ') s++;
        const char *name = s;
        while (*s && *s != '=' && *s != ',' && *s != ')') s++;
        p->name = PyUnicode_FromStringAndSize(name, s - name);
        p->is_dim = is_dim_name(name, s - name);
        p->dim_name = p->is_dim && s - name == 3 && has_dim_name_overload(text);
        PyUnicode_InternInPlace(&p->name);
        if (*s == '=') {
            const char *d = ++s;
            while (*s && *s != ',' && *s != ')') s++;
            p->has_default = true;
            p->def_obj = parse_default(d, s - d);
            if (!p->def_obj) p->optional = true;
        }
        p->kwonly = kwonly;
        if (!kwonly) sig->npos++;
    }
}

static void parser_init(emp_parser *p)
{
    int n = 0;
    while (p->sigs[n]) {
        parse_sig(&p->parsed[n], p->sigs[n]);
        n++;
    }
    p->nsigs = n;
}

/* PyTorch's error for an int beyond int64 (it raises it for every int argument). */
static void raise_overflow(void) { PyErr_SetString(PyExc_RuntimeError, "Overflow when unpacking long"); }

int emp_as_int64(PyObject *o, int64_t *out)
{
    PyObject *i = PyLong_Check(o) ? Py_NewRef(o) : PyNumber_Index(o);
    if (!i) return -1;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (overflow) raise_overflow();
    if (overflow || (v == -1 && PyErr_Occurred())) return -1;
    *out = v;
    return 0;
}

/* An int list's element as int64: 1, or 0 past int64's range (PyTorch's parser then finds the list
 * does not fit: a TypeError), -1 on another error. */
static int list_int64(PyObject *o, int64_t *out)
{
    if (emp_as_int64(o, out) == 0) return 1;
    if (!PyErr_ExceptionMatches(PyExc_RuntimeError)) return -1;
    PyErr_Clear();
    return 0;
}

em_tensor *emp_number_tensor(PyObject *o)
{
    if (PyBool_Check(o)) return em_scalar_bool(o == Py_True);
    if (PyLong_Check(o) || (PyIndex_Check(o) && !emp_is_tensor(o))) { /* ints, numpy integers */
        int64_t v;
        return emp_as_int64(o, &v) ? NULL : em_scalar_int(v);
    }
    if (PyFloat_Check(o)) return em_scalar_float(PyFloat_AS_DOUBLE(o));
    if (emp_is_complex_number(o)) {
        Py_complex z = PyComplex_AsCComplex(o);
        return PyErr_Occurred() ? NULL : em_scalar_complex(z.real, z.imag);
    }
    if (!emp_is_tensor(o) && Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float) { /* numpy floats */
        double d = PyFloat_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return NULL; }
        return em_scalar_float(d);
    }
    return NULL;
}

static bool is_int_like(PyObject *o)
{
    return PyLong_Check(o) || (PyIndex_Check(o) && !emp_is_tensor(o));
}

/* A 1-element tensor read as a Python number (PyTorch accepts those for Scalar). */
static int tensor_number(PyObject *o, emp_args *a, int k)
{
    em_tensor *t = emp_t(o);
    if (em_numel(t) != 1) return 0;
    double v;
    if (em_item(t, &v)) return 0;
    a->d[k] = v;
    a->i[k] = isnan(v) ? 0 : v >= 0x1p63 ? INT64_MAX : v < -0x1p63 ? INT64_MIN : (int64_t)v; /* no UB past int64 */
    a->isint[k] = !em_dtype_is_float(em_dtype_of(t));
    return 1;
}

/* Parks the exception just raised (a value's error) until the call is known to fit: 1, as a fit. */
static int defer(emp_args *a)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (!a->deferred) a->deferred = Py_NewRef(value);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return 1;
}

static int convert_intlist(const emp_param *p, PyObject *o, emp_args *a, int k)
{
    if (PyBool_Check(o)) return 0; /* PyTorch: a bool is not an int */
    if (is_int_like(o)) {
        int64_t v; /* a single int: int[N] params take it as one int, the others as a list of one */
        int r = p->list_len ? (emp_as_int64(o, &v) ? defer(a) : 1) : list_int64(o, &v);
        if (r <= 0) return r;
        int n = p->list_len > 1 ? p->list_len : 1;
        for (int j = 0; j < n; j++) a->list[k][j] = v;
        a->nlist[k] = n;
        return 1;
    }
    if (!PyTuple_Check(o) && !PyList_Check(o)) return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (n > EM_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%zd values given where at most %d are supported", n, EM_MAX_DIMS);
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *item = items[j];
        if (emp_is_tensor(item) && em_ndim(emp_t(item)) == 0 && !em_dtype_is_float(em_dtype_of(emp_t(item)))) {
            double v;
            if (em_item(emp_t(item), &v)) {
                emp_raise();
                return -1;
            }
            a->list[k][j] = (int64_t)v;
            continue;
        }
        if (!is_int_like(item) || PyBool_Check(item)) return 0;
        int r = list_int64(item, &a->list[k][j]);
        if (r <= 0) return r;
    }
    a->nlist[k] = (int)n;
    return 1;
}

/* A dim beyond what any tensor can have is an IndexError here, in PyTorch's words, so that no
 * binding narrows a huge dim into a valid one; the op checks the ones in this range exactly. */
static int check_dims(const emp_args *a, const int64_t *v, int n)
{
    for (int j = 0; j < n; j++) {
        if (v[j] >= -(EM_MAX_DIMS + 1) && v[j] <= EM_MAX_DIMS) continue;
        int nd = a->obj[0] && emp_is_tensor(a->obj[0]) ? em_ndim(emp_t(a->obj[0])) : EM_MAX_DIMS;
        if (nd == 0) nd = 1; /* a 0-d tensor takes dim 0 and -1 */
        PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                     -nd, nd - 1, (long long)v[j]);
        return -1;
    }
    return 1;
}

/* A param PyTorch also declares with a dim-name overload (`dim` of reductions, gather, cat...): a str
 * there is a name to look up, not a wrong type. */
static bool is_dim_name_param(const emp_param *p)
{
    return p->dim_name && (p->type == EMP_INT || (p->type == EMP_INTLIST && p->list_len == 1));
}

/* 1 converted, 0 does not fit this param (no exception), -1 error raised. */
static int convert(const emp_param *p, PyObject *o, emp_args *a, int k)
{
    /* PyTorch reads a str (or None, where the dim is not optional) as a dim name: Ember has none */
    if (p->is_dim && o && (PyUnicode_Check(o) || (o == Py_None && !p->optional)) && is_dim_name_param(p)) {
        PyErr_Format(PyExc_RuntimeError, "Name '%S' not found in Tensor (Ember has no named dims).", o);
        return defer(a);
    }
    a->obj[k] = o;
    a->has[k] = o != NULL && o != Py_None;
    if (!a->has[k]) {
        if (!p->optional) return 0;
        a->obj[k] = NULL;
        a->t[k] = NULL;
        a->nlist[k] = 0;
        return 1;
    }
    switch ((emp_type)p->type) {
    case EMP_TENSOR:
        if (!emp_is_tensor(o)) return 0;
        a->t[k] = emp_t(o);
        return 1;
    case EMP_SCALAR_T:
        if (emp_is_tensor(o)) {
            a->t[k] = emp_t(o);
            return 1;
        } else {
            em_tensor *t = emp_number_tensor(o);
            if (!t) return PyErr_Occurred() ? defer(a) : 0;
            a->t[k] = a->owned[a->nowned++] = t;
            return 1;
        }
    case EMP_SCALAR:
        if (emp_is_tensor(o)) return tensor_number(o, a, k);
        if (PyFloat_Check(o)) {
            a->d[k] = PyFloat_AS_DOUBLE(o);
            a->isint[k] = false;
            return 1;
        }
        if (is_int_like(o)) {
            if (emp_as_int64(o, &a->i[k])) return defer(a);
            a->d[k] = (double)a->i[k];
            a->isint[k] = true;
            return 1;
        }
        if (emp_is_complex_number(o) || !Py_TYPE(o)->tp_as_number || !Py_TYPE(o)->tp_as_number->nb_float) return 0;
        a->d[k] = PyFloat_AsDouble(o);
        a->isint[k] = false;
        return a->d[k] == -1.0 && PyErr_Occurred() ? -1 : 1;
    case EMP_INT:
        if (emp_is_tensor(o)) {
            em_tensor *t = emp_t(o);
            if (em_numel(t) != 1 || em_dtype_is_float(em_dtype_of(t))) return 0;
            return tensor_number(o, a, k);
        }
        if (!is_int_like(o) || PyBool_Check(o)) return 0;
        return emp_as_int64(o, &a->i[k]) ? defer(a) : 1;
    case EMP_FLOAT:
        if (PyFloat_Check(o)) {
            a->d[k] = PyFloat_AS_DOUBLE(o);
            return 1;
        }
        if (emp_is_tensor(o)) return tensor_number(o, a, k);
        if (is_int_like(o) && !PyBool_Check(o)) { /* PyTorch reads most such params as a Scalar: int64 or error */
            int64_t v;
            if (emp_as_int64(o, &v)) return defer(a);
            a->d[k] = (double)v;
            return 1;
        }
        if ((Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float && !emp_is_complex_number(o))) {
            a->d[k] = PyFloat_AsDouble(o);
            return a->d[k] == -1.0 && PyErr_Occurred() ? -1 : 1;
        }
        return 0;
    case EMP_BOOL:
        if (!PyBool_Check(o)) return 0;
        a->i[k] = o == Py_True;
        return 1;
    case EMP_INTLIST:
        return convert_intlist(p, o, a, k);
    case EMP_DTYPE:
        if (Py_TYPE(o) == &EmpDtype_Type) {
            a->i[k] = ((EmpDtype *)o)->dtype;
            return 1;
        }
        if (o == (PyObject *)&PyFloat_Type) a->i[k] = EM_F64;
        else if (o == (PyObject *)&PyLong_Type) a->i[k] = EM_I64;
        else if (o == (PyObject *)&PyBool_Type) a->i[k] = EM_BOOL;
        else return 0;
        return 1;
    case EMP_DEVICE:
        if (!PyUnicode_Check(o) && Py_TYPE(o) != &EmpDevice_Type && !PyLong_Check(o)) return 0;
        return emp_parse_device(o, &a->dev[k]) ? -1 : 1;
    case EMP_STR:
        if (!PyUnicode_Check(o)) return 0;
        a->s[k] = PyUnicode_AsUTF8(o);
        return a->s[k] ? 1 : -1;
    case EMP_TENSORLIST:
        return PyTuple_Check(o) || PyList_Check(o);
    case EMP_OBJECT:
        return 1;
    case EMP_LAYOUT: /* ember.layout and ember.memory_format are Python classes (ember/_memory_format.py) */
        return !strcmp(Py_TYPE(o)->tp_name, "layout");
    case EMP_MEMFMT: { /* its em_memory_format in i[k] */
        if (strcmp(Py_TYPE(o)->tp_name, "memory_format")) return 0;
        PyObject *code = PyObject_GetAttrString(o, "_code");
        a->i[k] = code ? PyLong_AsLong(code) : -1;
        Py_XDECREF(code);
        return PyErr_Occurred() ? -1 : 1;
    }
    }
    return 0;
}

static int find_param(const emp_sig *sig, PyObject *name)
{
    for (int k = 0; k < sig->nparams; k++)
        if (sig->p[k].name == name) return k;
    for (int k = 0; k < sig->nparams; k++)
        if (PyUnicode_Compare(sig->p[k].name, name) == 0) return k;
    return -1;
}

static void release_owned(emp_args *a)
{
    for (int j = 0; j < a->nowned; j++) em_release(a->owned[j]);
    a->nowned = 0;
}

static bool is_out(const emp_param *p) { return PyUnicode_CompareWithASCIIString(p->name, "out") == 0; }

/* Tries one signature: 1 matched, 0 not, -1 error raised. */
static int match(const emp_sig *sig, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                 emp_args *a)
{
    bool filled[EMP_MAX_ARGS] = {0};
    int k0 = 0, r;
    if (self) {
        if (sig->nparams == 0 || sig->p[0].type != EMP_TENSOR) return 0;
        a->obj[0] = self;
        a->t[0] = emp_t(self);
        a->has[0] = true;
        filled[0] = true;
        k0 = 1;
    }
    Py_ssize_t npos = sig->npos - k0, nplain = nargs; /* nplain: positional args converted one by one */
    if (nargs > npos) {
        /* "int..." params take the ints given as separate positional arguments */
        const emp_param *p = &sig->p[k0];
        if (!(npos >= 1 && p->varargs && nargs <= EM_MAX_DIMS)) return 0;
        for (Py_ssize_t j = 0; j < nargs; j++) {
            if (!is_int_like(args[j]) || PyBool_Check(args[j])) return 0;
            int r = list_int64(args[j], &a->list[k0][j]);
            if (r <= 0) return r;
        }
        a->obj[k0] = args[0];
        a->has[k0] = true;
        a->nlist[k0] = (int)nargs;
        filled[k0] = true;
        nplain = 0;
    }
    for (Py_ssize_t j = 0; j < nplain; j++) {
        if ((r = convert(&sig->p[k0 + j], args[j], a, k0 + (int)j)) <= 0) return r;
        filled[k0 + j] = true;
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        int k = find_param(sig, PyTuple_GET_ITEM(kwnames, j));
        if (k < 0 || filled[k] || (self && is_out(&sig->p[k]))) return 0; /* Tensor methods have no out= */
        if ((r = convert(&sig->p[k], args[nargs + j], a, k)) <= 0) return r;
        filled[k] = true;
    }
    for (int k = 0; k < sig->nparams; k++) {
        if (filled[k]) continue;
        const emp_param *p = &sig->p[k];
        if (!p->has_default && !p->optional) return 0;
        if ((r = convert(p, p->def_obj, a, k)) <= 0) return r;
    }
    if (a->deferred) { /* the call fits: now the errors in its values */
        PyErr_SetObject((PyObject *)Py_TYPE(a->deferred), a->deferred);
        return -1;
    }
    for (int k = 0; k < sig->nparams; k++) { /* the call fits: now the dims' range */
        const emp_param *p = &sig->p[k];
        if (!p->is_dim || !a->has[k] || (p->type != EMP_INT && p->type != EMP_INTLIST)) continue;
        if (check_dims(a, p->type == EMP_INT ? &a->i[k] : a->list[k], p->type == EMP_INT ? 1 : a->nlist[k]) < 0)
            return -1;
    }
    return 1;
}

static const char *arg_type_name(PyObject *o)
{
    if (emp_is_tensor(o)) return "Tensor";
    return Py_TYPE(o)->tp_name;
}

/* With one signature, PyTorch names the argument that does not fit: "mse_loss(): argument 'input'
 * (position 1) must be Tensor, not NoneType". 1 raised, 0 when no single argument is to blame. */
static int raise_bad_argument(emp_parser *p, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    const emp_sig *sig = &p->parsed[0];
    int k0 = self ? 1 : 0;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs > sig->npos - k0) {
        if (sig->p[k0].varargs) return 0;
        PyErr_Format(PyExc_TypeError, "%s() takes %d positional arguments but %zd were given", p->name,
                     sig->npos - k0, nargs);
        return 1;
    }
    for (Py_ssize_t j = 0; j < nargs + nkw; j++) {
        int k = j < nargs ? k0 + (int)j : find_param(sig, PyTuple_GET_ITEM(kwnames, j - nargs));
        if (k < 0 || (self && j >= nargs && is_out(&sig->p[k]))) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", p->name,
                         PyTuple_GET_ITEM(kwnames, j - nargs));
            return 1;
        }
        if (j >= nargs && k - k0 < nargs) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%U'", p->name, sig->p[k].name);
            return 1;
        }
        emp_args scratch;
        scratch.nowned = 0;
        scratch.deferred = NULL;
        int r = convert(&sig->p[k], args[j], &scratch, k);
        release_owned(&scratch);
        Py_CLEAR(scratch.deferred);
        if (r < 0) return 1;
        if (r > 0) continue;
        const emp_param *q = &sig->p[k];
        if (j < nargs)
            PyErr_Format(PyExc_TypeError, "%s(): argument '%U' (position %zd) must be %s, not %s", p->name, q->name,
                         j + 1, type_display[q->type], arg_type_name(args[j]));
        else
            PyErr_Format(PyExc_TypeError, "%s(): argument '%U' must be %s, not %s", p->name, q->name,
                         type_display[q->type], arg_type_name(args[j]));
        return 1;
    }
    return 0;
}

/* PyTorch's message: "sum() received an invalid combination of arguments -
 * got (Tensor, str), but expected one of: * (Tensor input, ...)". */
static void raise_no_match(emp_parser *p, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    if (p->nsigs == 1 && raise_bad_argument(p, self, args, nargs, kwnames)) return;
    PyObject *got = PyUnicode_FromString("");
    for (Py_ssize_t j = 0; got && j < nargs; j++)
        Py_SETREF(got, PyUnicode_FromFormat("%U%s%s", got, j ? ", " : "", arg_type_name(args[j])));
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; got && j < nkw; j++)
        Py_SETREF(got, PyUnicode_FromFormat("%U%s%U=%s", got, nargs + j ? ", " : "", PyTuple_GET_ITEM(kwnames, j),
                                            arg_type_name(args[nargs + j])));
    PyObject *want = PyUnicode_FromString("");
    for (int s = 0; want && s < p->nsigs; s++) {
        const emp_sig *sig = &p->parsed[s];
        Py_SETREF(want, PyUnicode_FromFormat("%U\n * (", want));
        for (int k = self ? 1 : 0; want && k < sig->nparams; k++) {
            const emp_param *q = &sig->p[k];
            bool star = q->kwonly && (k == 0 || !sig->p[k - 1].kwonly);
            Py_SETREF(want, PyUnicode_FromFormat("%U%s%s%s%s %U", want, k > (self ? 1 : 0) ? ", " : "",
                                                 star ? "*, " : "", type_display[q->type],
                                                 q->optional && q->type != EMP_TENSORLIST ? "?" : "", q->name));
        }
        if (want) Py_SETREF(want, PyUnicode_FromFormat("%U)", want));
    }
    if (got && want)
        PyErr_Format(PyExc_TypeError,
                     "%s() received an invalid combination of arguments - got (%U), but expected one of:%U", p->name,
                     got, want);
    Py_XDECREF(got);
    Py_XDECREF(want);
}

int emp_parse(emp_parser *p, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
              emp_args *a)
{
    if (!p->nsigs) parser_init(p);
    a->self = self;
    a->nowned = 0;
    for (int s = 0; s < p->nsigs; s++) {
        a->deferred = NULL;
        int r = match(&p->parsed[s], self, args, nargs, kwnames, a);
        Py_CLEAR(a->deferred);
        if (r == 1) {
            a->sig = s;
            return 0;
        }
        release_owned(a);
        if (r < 0) return -1;
    }
    raise_no_match(p, self, args, nargs, kwnames);
    return -1;
}

void emp_args_release(emp_args *a) { release_owned(a); }

/* PyTorch's device guard: while a binding runs, the factory device is its
 * first tensor argument's device when that is not the CPU, so that the
 * tensors the op layer makes for itself (em_empty, em_zeros) land on its
 * inputs' device. A CPU call pays one loop over its params. */
static void guard_device(const emp_sig *sig, emp_args *a)
{
    for (int k = 0; k < sig->nparams; k++) {
        int type = sig->p[k].type;
        em_tensor *t = NULL;
        if ((type == EMP_TENSOR || type == EMP_SCALAR_T) && a->has[k]) t = a->t[k];
        else if (type == EMP_TENSORLIST && a->obj[k] && PySequence_Fast_GET_SIZE(a->obj[k]) > 0 &&
                 emp_is_tensor(PySequence_Fast_GET_ITEM(a->obj[k], 0)))
            t = emp_t(PySequence_Fast_GET_ITEM(a->obj[k], 0));
        if (!t) continue;
        if (em_device_of(t).type != EM_CPU) {
            a->prev_device = em_set_factory_device(em_device_of(t));
            a->device_set = true;
        }
        return;
    }
}

PyObject *emp_call(emp_parser *p, emp_impl impl, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames)
{
    emp_args a;
    if (emp_parse(p, self, args, nargs, kwnames, &a)) return NULL;
    a.device_set = false;
    guard_device(&p->parsed[a.sig], &a);
    PyObject *r = impl(&a);
    if (a.device_set) em_set_factory_device(a.prev_device);
    release_owned(&a);
    return r;
}

int emp_tensor_seq(PyObject *seq, em_tensor **out, int max, const char *what)
{
    if (!PyTuple_Check(seq) && !PyList_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple or list of Tensors, not %s", what, Py_TYPE(seq)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > max) {
        PyErr_Format(PyExc_ValueError, "%s: at most %d tensors are supported, got %zd", what, max, n);
        return -1;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, j);
        if (!emp_is_tensor(o)) {
            PyErr_Format(PyExc_TypeError, "%s: expected Tensor as element %zd, but got %s", what, j,
                         Py_TYPE(o)->tp_name);
            return -1;
        }
        out[j] = emp_t(o);
    }
    return (int)n;
}
