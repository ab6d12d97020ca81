/* Shared-memory storages for ember.multiprocessing and DataLoader workers
 * (Note [Tensors between processes] in python/ember/multiprocessing/
 * reductions.py), and the IDX reader's binding.
 *
 * A shared block is an anonymous memfd mapped MAP_SHARED: it has no name,
 * so nothing is left in /dev/shm whatever happens to the processes; it
 * lives as long as some process maps it or holds its descriptor. A block
 * keeps its descriptor open (so that it can be sent again) unless it was
 * received with keep_fd=False. */
#include "emp.h"
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct shm_block {
    void *addr;
    size_t nbytes; /* mapped length (at least 1) */
    int fd;        /* -1: closed after mapping */
} shm_block;

static void shm_block_free(void *ctx)
{
    shm_block *b = ctx;
    munmap(b->addr, b->nbytes);
    if (b->fd >= 0) close(b->fd);
    free(b);
}

/* Maps fd (owned: closed on failure, or now if !keep_fd) as a block of nbytes. */
static shm_block *shm_map(int fd, size_t nbytes, bool keep_fd)
{
    shm_block *b = malloc(sizeof *b);
    void *addr = b ? mmap(NULL, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (addr == MAP_FAILED) {
        if (b) PyErr_SetFromErrno(PyExc_RuntimeError);
        else PyErr_NoMemory();
        free(b);
        close(fd);
        return NULL;
    }
    *b = (shm_block){addr, nbytes, keep_fd ? fd : -1};
    if (!keep_fd) close(fd);
    return b;
}

/* A new block of nbytes (0 counts as 1: mmap needs a length). */
static shm_block *shm_new(size_t nbytes)
{
    int fd = memfd_create("ember-shm", MFD_CLOEXEC);
    if (fd < 0) return PyErr_Format(PyExc_RuntimeError, "share_memory_: memfd_create failed: %s", strerror(errno)), NULL;
    if (!nbytes) nbytes = 1;
    if (ftruncate(fd, (off_t)nbytes)) {
        PyErr_Format(PyExc_RuntimeError, "share_memory_: cannot allocate %zu bytes of shared memory: %s", nbytes,
                     strerror(errno));
        close(fd);
        return NULL;
    }
    return shm_map(fd, nbytes, true);
}

static shm_block *shared_block_of(PyObject *self) { return em_storage_context(emp_t(self), shm_block_free); }

/* Moves self's storage into a new shared block, in place. */
static PyObject *move_to_new_block(PyObject *self)
{
    em_tensor *t = emp_t(self);
    shm_block *b = shm_new(em_storage_nbytes(t));
    if (!b) return NULL;
    if (em_storage_move_(t, b->addr, b->nbytes, shm_block_free, b)) {
        shm_block_free(b);
        return emp_raise();
    }
    return Py_NewRef(self);
}

/* Tensor.share_memory_(): moves the storage into a shared block, in place. */
static PyObject *share_memory_(PyObject *self, PyObject *unused)
{
    if (em_device_of(emp_t(self)).type != EM_CPU || shared_block_of(self)) return Py_NewRef(self); /* CUDA: shared */
    return move_to_new_block(self);
}

/* _reshare_(t): a shared tensor whose descriptor was closed moves to a new
 * block (one copy) that has one, so that it can be sent on. */
static PyObject *reshare_(PyObject *module, PyObject *obj)
{
    if (!emp_is_tensor(obj)) return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    return move_to_new_block(obj);
}

static PyObject *is_shared(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(em_device_of(emp_t(self)).type != EM_CPU || shared_block_of(self));
}

/* _shared_handle(t) -> (fd, mapped bytes, byte offset of element 0); fd is -1
 * when the block was received without keeping it. t must be shared. */
static PyObject *shared_handle(PyObject *module, PyObject *obj)
{
    if (!emp_is_tensor(obj)) return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    shm_block *b = shared_block_of(obj);
    if (!b) return PyErr_Format(PyExc_RuntimeError, "the tensor is not in shared memory");
    Py_ssize_t offset = (char *)em_data_ptr(emp_t(obj)) - (char *)b->addr;
    return Py_BuildValue("(inn)", b->fd, (Py_ssize_t)b->nbytes, offset);
}

/* Reads an int tuple of at most EM_MAX_DIMS items. */
static int int_tuple(PyObject *o, int64_t *v, const char *what)
{
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) > EM_MAX_DIMS)
        return PyErr_Format(PyExc_TypeError, "%s must be a tuple of at most %d ints", what, EM_MAX_DIMS), -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); i++) {
        v[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(o, i));
        if (v[i] == -1 && PyErr_Occurred()) return -1;
        if (v[i] < 0) return PyErr_Format(PyExc_ValueError, "%s must be non-negative", what), -1;
    }
    return (int)PyTuple_GET_SIZE(o);
}

/* _from_shared_fd(fd, nbytes, offset, dtype, sizes, strides, keep_fd): a
 * tensor over the block behind fd, which it owns from now on (closed on
 * failure too). The geometry is checked against the block's real size, so
 * a bad handle is an error, never a stray access. */
static PyObject *from_shared_fd(PyObject *module, PyObject *args)
{
    int fd, keep_fd;
    Py_ssize_t nbytes, offset;
    PyObject *dtype, *sizes_obj, *strides_obj;
    if (!PyArg_ParseTuple(args, "innO!O!O!p", &fd, &nbytes, &offset, &EmpDtype_Type, &dtype, &PyTuple_Type, &sizes_obj,
                          &PyTuple_Type, &strides_obj, &keep_fd))
        return NULL;
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS];
    int nd = int_tuple(sizes_obj, sizes, "sizes"), nst = nd < 0 ? -1 : int_tuple(strides_obj, strides, "strides");
    em_dtype dt = ((EmpDtype *)dtype)->dtype;
    struct stat st;
    if (nst < 0 || nst != nd || fstat(fd, &st) || nbytes <= 0 || st.st_size < nbytes || offset < 0) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_RuntimeError, "invalid shared memory handle");
        close(fd);
        return NULL;
    }
    /* The last byte element 0 + extent reaches must lie in the block. */
    uint64_t end = (uint64_t)offset, numel = 1;
    for (int i = 0; i < nd; i++) numel *= sizes[i] ? 1 : 0;
    for (int i = 0; numel && i < nd; i++) end += (uint64_t)(sizes[i] - 1) * (uint64_t)strides[i] * em_dtype_size(dt);
    if (numel && (end + em_dtype_size(dt) > (uint64_t)nbytes)) {
        close(fd);
        return PyErr_Format(PyExc_RuntimeError, "invalid shared memory handle: the tensor exceeds its block");
    }
    shm_block *b = shm_map(fd, (size_t)nbytes, keep_fd);
    if (!b) return NULL;
    em_tensor *t = em_from_blob((char *)b->addr + offset, nd, sizes, strides, dt, shm_block_free, b);
    if (!t) shm_block_free(b);
    return emp_wrap(t);
}

/* _empty_shared(sizes, dtype): a new contiguous tensor in a shared block. */
static PyObject *empty_shared(PyObject *module, PyObject *args)
{
    PyObject *dtype, *sizes_obj;
    if (!PyArg_ParseTuple(args, "O!O!", &PyTuple_Type, &sizes_obj, &EmpDtype_Type, &dtype)) return NULL;
    int64_t sizes[EM_MAX_DIMS];
    int nd = int_tuple(sizes_obj, sizes, "sizes");
    if (nd < 0) return NULL;
    em_dtype dt = ((EmpDtype *)dtype)->dtype;
    uint64_t nbytes = em_dtype_size(dt);
    for (int i = 0; i < nd; i++)
        if (__builtin_mul_overflow(nbytes, (uint64_t)sizes[i], &nbytes) || nbytes > (uint64_t)PTRDIFF_MAX)
            return PyErr_Format(PyExc_RuntimeError, "_empty_shared: sizes overflow");
    shm_block *b = shm_new((size_t)nbytes);
    if (!b) return NULL;
    em_tensor *t = em_from_blob(b->addr, nd, sizes, NULL, dt, shm_block_free, b);
    if (!t) shm_block_free(b);
    return emp_wrap(t);
}

static PyObject *read_idx(PyObject *module, PyObject *path)
{
    PyObject *bytes;
    if (!PyUnicode_FSConverter(path, &bytes)) return NULL;
    em_tensor *t = em_read_idx(PyBytes_AS_STRING(bytes));
    Py_DECREF(bytes);
    return emp_wrap(t);
}

PyMethodDef emp_shared_memory_functions[] = {
    {"_shared_handle", shared_handle, METH_O, "(fd, mapped bytes, byte offset) of a shared tensor."},
    {"_from_shared_fd", from_shared_fd, METH_VARARGS, "A tensor over a shared block's descriptor (owned)."},
    {"_reshare_", reshare_, METH_O, "Moves a shared tensor whose descriptor was closed to a new block."},
    {"_empty_shared", empty_shared, METH_VARARGS, "A new contiguous tensor in shared memory."},
    {"_read_idx", read_idx, METH_O, "Reads an IDX file (raw or gzip) into a tensor."},
    {NULL},
};

PyMethodDef emp_shared_memory_methods[] = {
    {"share_memory_", share_memory_, METH_NOARGS, "Moves the storage to shared memory (in place); returns self."},
    {"is_shared", is_shared, METH_NOARGS, "True if the storage is in shared memory."},
    {NULL},
};
