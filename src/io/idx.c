/* The IDX reader (include/ember/io.h): MNIST-style files, raw or gzip.
 * zlib's gzread reads both (a file without the gzip magic passes through),
 * so there is one path for either. */
#include "../core/internal.h"
#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

#define IDX_CHUNK ((size_t)1 << 20)

/* The dtype of an IDX type code; false if none. */
static bool idx_dtype(int code, em_dtype *dt)
{
    static const struct { int code; em_dtype dt; } types[] = {
        {0x08, EM_U8}, {0x09, EM_I8}, {0x0B, EM_I16}, {0x0C, EM_I32}, {0x0D, EM_F32}, {0x0E, EM_F64},
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (types[i].code == code) {
            *dt = types[i].dt;
            return true;
        }
    return false;
}

/* Reads up to n bytes; the count read, or -1 with the error set. */
static int64_t read_bytes(gzFile f, void *buf, size_t n, const char *path)
{
    size_t got = 0;
    while (got < n) {
        unsigned ask = n - got > IDX_CHUNK ? (unsigned)IDX_CHUNK : (unsigned)(n - got);
        int r = gzread(f, (char *)buf + got, ask);
        if (r < 0) {
            int code;
            const char *msg = gzerror(f, &code);
            em_error(code == Z_ERRNO ? EM_ERR_RUNTIME : EM_ERR_VALUE, "read_idx: %s: %s", path,
                     code == Z_ERRNO ? strerror(errno) : msg);
            return -1;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    return (int64_t)got;
}

/* The data of `nbytes` bytes, grown chunk by chunk as it arrives so that a
 * header claiming terabytes costs nothing; exactly nbytes must be there,
 * then end of file. Returns malloc'ed memory or NULL with the error set. */
static void *read_data(gzFile f, size_t nbytes, const char *path)
{
    size_t cap = nbytes < IDX_CHUNK ? nbytes : IDX_CHUNK, got = 0;
    char *buf = malloc(cap ? cap : 1);
    if (!buf) return em_error(EM_ERR_MEMORY, "read_idx: out of memory");
    for (;;) {
        int64_t r = read_bytes(f, buf + got, cap - got, path);
        if (r < 0) goto fail;
        got += (size_t)r;
        if (got < cap) {
            em_error(EM_ERR_VALUE, "read_idx: %s is truncated: the header says %zu data bytes, the file has %zu",
                     path, nbytes, got);
            goto fail;
        }
        if (got == nbytes) break;
        size_t grown = cap > nbytes / 2 ? nbytes : cap * 2;
        char *p = realloc(buf, grown);
        if (!p) {
            em_error(EM_ERR_MEMORY, "read_idx: out of memory reading %zu bytes", nbytes);
            goto fail;
        }
        buf = p;
        cap = grown;
    }
    char extra;
    int64_t more = read_bytes(f, &extra, 1, path);
    if (more < 0) goto fail;
    if (more) {
        em_error(EM_ERR_VALUE, "read_idx: %s has more data than its header's %zu bytes", path, nbytes);
        goto fail;
    }
    return buf;
fail:
    free(buf);
    return NULL;
}

/* Big-endian to host order, in place. */
static void to_host_order(void *data, int64_t n, size_t size)
{
    if (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ || size == 1) return;
    uint8_t *p = data;
    for (int64_t i = 0; i < n; i++, p += size)
        for (size_t a = 0, b = size - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

em_tensor *em_read_idx(const char *path)
{
    if (!path) return em_error(EM_ERR_VALUE, "read_idx: path is NULL");
    gzFile f = gzopen(path, "rb");
    if (!f) return em_error(EM_ERR_RUNTIME, "read_idx: cannot open %s: %s", path, strerror(errno));
    em_tensor *t = NULL;
    void *data = NULL;
    uint8_t magic[4], dims[4 * EM_MAX_DIMS];
    int64_t sizes[EM_MAX_DIMS];
    em_dtype dt;
    int64_t r = read_bytes(f, magic, 4, path);
    if (r < 0) goto done;
    if (r < 4 || magic[0] || magic[1]) {
        em_error(EM_ERR_VALUE, "read_idx: %s is not an IDX file (bad magic number)", path);
        goto done;
    }
    if (!idx_dtype(magic[2], &dt)) {
        em_error(EM_ERR_VALUE, "read_idx: %s has an unknown IDX type code 0x%02x", path, magic[2]);
        goto done;
    }
    int ndim = magic[3];
    if (ndim > EM_MAX_DIMS) {
        em_error(EM_ERR_VALUE, "read_idx: %s has %d dims; at most %d are supported", path, ndim, EM_MAX_DIMS);
        goto done;
    }
    r = read_bytes(f, dims, 4 * (size_t)ndim, path);
    if (r < 0) goto done;
    if (r < 4 * ndim) {
        em_error(EM_ERR_VALUE, "read_idx: %s is truncated in its header", path);
        goto done;
    }
    uint64_t nbytes = em_dtypes[dt].size;
    for (int i = 0; i < ndim; i++) {
        const uint8_t *d = dims + 4 * i;
        sizes[i] = (int64_t)((uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3]);
        if (__builtin_mul_overflow(nbytes, (uint64_t)sizes[i], &nbytes) || nbytes > (uint64_t)PTRDIFF_MAX) {
            em_error(EM_ERR_VALUE, "read_idx: %s: the sizes %s overflow", path,
                     em_shape_str(i + 1, sizes));
            goto done;
        }
    }
    data = read_data(f, (size_t)nbytes, path);
    if (!data) goto done;
    int64_t numel = (int64_t)(nbytes / em_dtypes[dt].size);
    to_host_order(data, numel, em_dtypes[dt].size);
    t = em_from_data(data, ndim, sizes, dt);
done:
    free(data);
    gzclose(f);
    return t;
}
