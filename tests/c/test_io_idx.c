/* The IDX reader (src/io/idx.c) on files written here: every type code, raw
 * and gzip, and malformed files (bad magic, type, dim count, overflowing or
 * hostile sizes, truncated or trailing data, corrupt gzip), which must fail
 * cleanly. */
#include "test.h"
#include <unistd.h>
#include <zlib.h>

/* Writes bytes to a fresh temp file (gzip-compressed if gz); returns its path in buf. */
static const char *write_file(char *buf, const void *bytes, size_t n, bool gz)
{
    static int serial;
    snprintf(buf, 256, "/tmp/ember_idx_%d_%d%s", (int)getpid(), serial++, gz ? ".gz" : "");
    if (gz) {
        gzFile f = gzopen(buf, "wb");
        if (!f || gzwrite(f, bytes, (unsigned)n) != (int)n) return NULL;
        gzclose(f);
    } else {
        FILE *f = fopen(buf, "wb");
        if (!f || fwrite(bytes, 1, n, f) != n) return NULL;
        fclose(f);
    }
    return buf;
}

/* An IDX header followed by `ndata` data bytes from `data`. */
static size_t idx_bytes(uint8_t *out, int code, int ndim, const uint32_t *dims, const void *data, size_t ndata)
{
    size_t n = 0;
    out[n++] = 0, out[n++] = 0, out[n++] = (uint8_t)code, out[n++] = (uint8_t)ndim;
    for (int i = 0; i < ndim; i++)
        for (int b = 3; b >= 0; b--) out[n++] = (uint8_t)(dims[i] >> (8 * b));
    if (ndata) memcpy(out + n, data, ndata);
    return n + ndata;
}

/* Reads the file made of these bytes (raw or gzip); removes it. */
static em_tensor *read_bytes_as_idx(const uint8_t *bytes, size_t n, bool gz)
{
    char path[256];
    if (!write_file(path, bytes, n, gz)) return NULL;
    em_tensor *t = em_read_idx(path);
    unlink(path);
    return t;
}

TEST(io_idx_types_raw_and_gzip)
{
    static const struct { int code; em_dtype dt; int size; } types[] = {
        {0x08, EM_U8, 1}, {0x09, EM_I8, 1}, {0x0B, EM_I16, 2}, {0x0C, EM_I32, 4}, {0x0D, EM_F32, 4}, {0x0E, EM_F64, 8},
    };
    const double vals[6] = {1, 2, 3, 4, 5, 120};
    for (size_t k = 0; k < sizeof types / sizeof *types; k++)
        for (int gz = 0; gz < 2; gz++) {
            uint8_t data[6 * 8], file[128];
            for (int i = 0; i < 6; i++) { /* big-endian encoding of vals[i] */
                uint8_t host[8];
                float f = (float)vals[i];
                int32_t i32 = (int32_t)vals[i];
                int16_t i16 = (int16_t)vals[i];
                uint8_t u8 = (uint8_t)vals[i];
                const void *src = types[k].dt == EM_F64 ? (const void *)&vals[i] : types[k].dt == EM_F32 ? (const void *)&f
                                  : types[k].dt == EM_I32 ? (const void *)&i32 : types[k].dt == EM_I16 ? (const void *)&i16
                                                                                                       : (const void *)&u8;
                memcpy(host, src, types[k].size);
                for (int b = 0; b < types[k].size; b++) data[i * types[k].size + b] = host[types[k].size - 1 - b];
            }
            uint32_t dims[3] = {1, 2, 3};
            size_t n = idx_bytes(file, types[k].code, 3, dims, data, 6 * (size_t)types[k].size);
            em_tensor *t = read_bytes_as_idx(file, n, gz);
            CHECK(t);
            CHECK(em_dtype_of(t) == types[k].dt && tshape_is(t, 3, (const int64_t[]){1, 2, 3}));
            bool ok = tclose(t, vals, 0, 0);
            em_release(t);
            CHECK(ok);
        }
}

TEST(io_idx_zero_dims_and_empty)
{
    uint8_t file[64], one = 7;
    size_t n = idx_bytes(file, 0x08, 0, NULL, &one, 1);
    em_tensor *t = read_bytes_as_idx(file, n, false);
    CHECK(t && em_ndim(t) == 0 && tval(t, 0) == 7);
    em_release(t);
    uint32_t dims[2] = {0, 5};
    n = idx_bytes(file, 0x0D, 2, dims, NULL, 0);
    t = read_bytes_as_idx(file, n, true);
    CHECK(t && tshape_is(t, 2, (const int64_t[]){0, 5}) && em_dtype_of(t) == EM_F32);
    em_release(t);
}

TEST(io_idx_malformed)
{
    uint8_t file[256], data[16] = {0};
    uint32_t dims[17] = {2, 3};
    size_t n;
    for (int gz = 0; gz < 2; gz++) {
        n = idx_bytes(file, 0x08, 2, dims, data, 6);
        file[1] = 1; /* bad magic */
        CHECK_ERR(read_bytes_as_idx(file, n, gz), EM_ERR_VALUE);
        n = idx_bytes(file, 0x0A, 2, dims, data, 6); /* unknown type code */
        CHECK_ERR(read_bytes_as_idx(file, n, gz), EM_ERR_VALUE);
        n = idx_bytes(file, 0x08, 17, dims, data, 0); /* too many dims */
        CHECK_ERR(read_bytes_as_idx(file, n, gz), EM_ERR_VALUE);
        n = idx_bytes(file, 0x08, 2, dims, data, 6);
        CHECK_ERR(read_bytes_as_idx(file, 6, gz), EM_ERR_VALUE);     /* header cut short */
        CHECK_ERR(read_bytes_as_idx(file, n - 1, gz), EM_ERR_VALUE); /* data cut short */
        CHECK_ERR(read_bytes_as_idx(file, 2, gz), EM_ERR_VALUE);     /* not even a magic */
        CHECK_ERR(read_bytes_as_idx(file, 0, gz), EM_ERR_VALUE);     /* empty file */
        n = idx_bytes(file, 0x08, 2, dims, data, 7);                 /* trailing byte */
        CHECK_ERR(read_bytes_as_idx(file, n, gz), EM_ERR_VALUE);
        uint32_t huge[4] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 2}; /* sizes overflow */
        n = idx_bytes(file, 0x0E, 4, huge, data, 16);
        CHECK_ERR(read_bytes_as_idx(file, n, gz), EM_ERR_VALUE);
        uint32_t big[2] = {0x80000000u, 0x100000u}; /* 2^51 bytes claimed, 16 present */
        n = idx_bytes(file, 0x08, 2, big, data, 16);
        CHECK_ERR(read_bytes_as_idx(file, n, gz), EM_ERR_VALUE);
    }
    /* A gzip stream that goes bad after its header. */
    n = idx_bytes(file, 0x08, 2, dims, data, 6);
    char path[256];
    CHECK(write_file(path, file, n, true));
    FILE *f = fopen(path, "r+b");
    CHECK(f);
    fseek(f, 12, SEEK_SET);
    fwrite("\xff\xff\xff\xff\xff\xff", 1, 6, f);
    fclose(f);
    CHECK_ERR(em_read_idx(path), EM_ERR_VALUE);
    unlink(path);
    CHECK_ERR(em_read_idx("/nonexistent/ember.idx"), EM_ERR_RUNTIME);
    CHECK_ERR(em_read_idx(NULL), EM_ERR_VALUE);
}
