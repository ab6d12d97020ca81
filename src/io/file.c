/* Atomic file writes and shared file mappings (src/io/file.h). */
#include "file.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

em_status em_atomic_open(em_atomic_file *f, const char *path, const char *what)
{
    *f = (em_atomic_file){.fd = -1, .path = path, .what = what};
    if (!path || !*path) return em_fail(EM_ERR_VALUE, "%s: empty path", what);
    /* ".<name>.<pid>.<k>.tmp" beside path: a rename within one filesystem is atomic. */
    static int counter;
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    size_t cap = strlen(path) + 64;
    if (!(f->tmp = malloc(cap))) return em_fail(EM_ERR_MEMORY, "%s: out of memory", what);
    for (int attempt = 0; f->fd < 0 && attempt < 100; attempt++) {
        snprintf(f->tmp, cap, "%.*s.%s.%d.%d.tmp", dirlen, path, path + dirlen, (int)getpid(),
                 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (f->fd < 0 && errno != EEXIST) break;
    }
    if (f->fd < 0) {
        em_status st = em_fail(EM_ERR_RUNTIME, "%s: cannot create a file beside %s: %s", what, path, strerror(errno));
        free(f->tmp);
        f->tmp = NULL;
        return st;
    }
    return EM_OK;
}

int em_atomic_write(void *ctx, const void *data, size_t n)
{
    em_atomic_file *f = ctx;
    const char *p = data;
    while (n) {
        ssize_t w = write(f->fd, p, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return em_fail(EM_ERR_RUNTIME, "%s: writing %s failed: %s", f->what, f->path,
                                   w < 0 ? strerror(errno) : "no progress");
        p += w, n -= (size_t)w;
    }
    return 0;
}

/* fsync of the directory holding path, so that a rename in it is durable. */
static int sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

void em_atomic_abort(em_atomic_file *f)
{
    if (f->fd >= 0) close(f->fd);
    if (f->tmp) unlink(f->tmp);
    free(f->tmp);
    f->fd = -1, f->tmp = NULL;
}

em_status em_atomic_commit(em_atomic_file *f)
{
    em_status st = EM_OK;
    if (fsync(f->fd)) st = em_fail(EM_ERR_RUNTIME, "%s: fsync of %s failed: %s", f->what, f->tmp, strerror(errno));
    if (close(f->fd) && st == EM_OK)
        st = em_fail(EM_ERR_RUNTIME, "%s: closing %s failed: %s", f->what, f->tmp, strerror(errno));
    f->fd = -1;
    if (st == EM_OK && rename(f->tmp, f->path))
        st = em_fail(EM_ERR_RUNTIME, "%s: cannot replace %s: %s", f->what, f->path, strerror(errno));
    if (st != EM_OK) {
        em_atomic_abort(f);
        return st;
    }
    free(f->tmp);
    f->tmp = NULL;
    if (sync_parent_dir(f->path))
        return em_fail(EM_ERR_RUNTIME, "%s: fsync of the directory of %s failed: %s", f->what, f->path, strerror(errno));
    return EM_OK;
}

em_mapping *em_map_file(int fd, size_t len, const char *what)
{
    em_mapping *m = malloc(sizeof *m);
    void *addr = m && len ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (addr == MAP_FAILED) {
        free(m);
        return em_error(EM_ERR_RUNTIME, "cannot map %s: %s", what, len ? strerror(errno) : "empty file");
    }
    *m = (em_mapping){addr, len, 1};
    return m;
}

void em_mapping_unref(void *ctx)
{
    em_mapping *m = ctx;
    if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL)) return;
    munmap(m->addr, m->len);
    free(m);
}

em_tensor *em_mapping_tensor(em_mapping *m, size_t at, int64_t n, em_dtype dt)
{
    __atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
    em_tensor *t = em_from_blob((char *)m->addr + at, 1, &n, NULL, dt, em_mapping_unref, m);
    if (!t) em_mapping_unref(m);
    return t;
}
