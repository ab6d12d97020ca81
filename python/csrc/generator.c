/* ember.Generator: a random number generator object (em_generator), and the
 * module functions over the default one (seed, get_rng_state...). */
#include "emp.h"
#include <time.h>

typedef struct {
    PyObject_HEAD
    em_generator *g; /* owned, or the default generator (never freed) */
} EmpGenerator;

static PyTypeObject EmpGenerator_Type;

em_generator *emp_generator_arg(PyObject *o)
{
    if (!o || o == Py_None) return NULL;
    if (!PyObject_TypeCheck(o, &EmpGenerator_Type)) {
        PyErr_Format(PyExc_TypeError, "generator must be an ember.Generator, not %s", Py_TYPE(o)->tp_name);
        return NULL;
    }
    return ((EmpGenerator *)o)->g;
}

static PyObject *generator_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"device", NULL};
    PyObject *device = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:Generator", names, &device)) return NULL;
    em_device d = EM_DEVICE_CPU;
    if (device && device != Py_None && emp_parse_device(device, &d)) return NULL;
    if (d.type != EM_CPU) return PyErr_Format(PyExc_RuntimeError, EMP_NO_CUDA);
    EmpGenerator *self = (EmpGenerator *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    if (!(self->g = em_generator_new(EM_DEFAULT_SEED))) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void generator_dealloc(EmpGenerator *self)
{
    if (self->g != em_default_generator()) em_generator_free(self->g);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *generator_manual_seed(EmpGenerator *self, PyObject *seed)
{
    unsigned long long s = PyLong_AsUnsignedLongLongMask(seed);
    if (PyErr_Occurred()) return NULL;
    em_generator_manual_seed(self->g, s);
    return Py_NewRef(self);
}

static PyObject *generator_initial_seed(EmpGenerator *self, PyObject *unused)
{
    return PyLong_FromUnsignedLongLong(em_generator_initial_seed(self->g));
}

/* seed(): a fresh nondeterministic seed, set and returned. */
static PyObject *generator_seed(EmpGenerator *self, PyObject *unused)
{
    uint64_t s;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&s, sizeof s, 1, f) != 1) s = (uint64_t)time(NULL);
    if (f) fclose(f);
    s &= (1ull << 63) - 1; /* PyTorch's seeds fit an int64 */
    em_generator_manual_seed(self->g, s);
    return PyLong_FromUnsignedLongLong(s);
}

/* The state as a uint8 tensor, as PyTorch's get_state. */
static PyObject *generator_get_state(EmpGenerator *self, PyObject *unused)
{
    uint8_t state[EM_GENERATOR_STATE_SIZE];
    em_generator_get_state(self->g, state);
    return emp_wrap(em_from_data(state, 1, (int64_t[]){EM_GENERATOR_STATE_SIZE}, EM_U8));
}

static PyObject *generator_set_state(EmpGenerator *self, PyObject *state)
{
    if (!emp_is_tensor(state) || em_dtype_of(emp_t(state)) != EM_U8)
        return PyErr_Format(PyExc_TypeError, "expected a torch.ByteTensor, but got %s", Py_TYPE(state)->tp_name);
    em_tensor *c = em_contiguous(emp_t(state));
    if (!c) return emp_raise();
    em_status st = em_generator_set_state(self->g, em_data_ptr(c), (size_t)em_numel(c));
    em_release(c);
    return emp_status_self(st, (PyObject *)self);
}

static PyObject *generator_device(EmpGenerator *self, void *c) { return emp_device_obj(EM_DEVICE_CPU); }

static PyMethodDef generator_methods[] = {
    {"manual_seed", (PyCFunction)generator_manual_seed, METH_O, NULL},
    {"initial_seed", (PyCFunction)generator_initial_seed, METH_NOARGS, NULL},
    {"seed", (PyCFunction)generator_seed, METH_NOARGS, NULL},
    {"get_state", (PyCFunction)generator_get_state, METH_NOARGS, NULL},
    {"set_state", (PyCFunction)generator_set_state, METH_O, NULL},
    {NULL},
};
static PyGetSetDef generator_getset[] = {{"device", (getter)generator_device, NULL, NULL, NULL}, {NULL}};

static PyTypeObject EmpGenerator_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ember.Generator",
    .tp_basicsize = sizeof(EmpGenerator),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = generator_new,
    .tp_dealloc = (destructor)generator_dealloc,
    .tp_methods = generator_methods,
    .tp_getset = generator_getset,
};

int emp_generator_init(PyObject *m)
{
    if (PyType_Ready(&EmpGenerator_Type) || PyModule_AddObjectRef(m, "Generator", (PyObject *)&EmpGenerator_Type))
        return -1;
    EmpGenerator *def = PyObject_New(EmpGenerator, &EmpGenerator_Type);
    if (!def) return -1;
    def->g = em_default_generator();
    return PyModule_AddObject(m, "default_generator", (PyObject *)def) ? (Py_DECREF(def), -1) : 0;
}
