/* Zip archives (include/ember/serialize.h): the container of torch.save's
 * files. Reading trusts nothing in the file: every offset and size is
 * checked against the bytes present before it is used, and a deflated
 * entry's declared size is bounded by its compressed size. Writing makes
 * stored entries only, each one's data 64-byte aligned by padding its local
 * header's extra field (what torch.save does, so that storages can be mapped). */
#define _GNU_SOURCE
#include "file.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOCATOR64 0x07064b50u
#define LOCAL_LEN 30
#define CENTRAL_LEN 46
#define EOCD_LEN 22
#define EOCD64_LEN 56
#define LOCATOR64_LEN 20
#define ALIGN 64
#define U32_MAX 0xffffffffu

typedef struct zip_entry {
    char *name;
    uint64_t local, data_at, csize, usize;
    uint32_t crc;
    int method; /* 0 stored, 8 deflated */
} zip_entry;

struct em_zip {
    const uint8_t *data;
    uint64_t size;
    em_mapping *map; /* the file's mapping, or NULL: data is owned */
    int n;
    zip_entry *entries;
    int *sorted; /* entry indices by name, for em_zip_find */
};

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

#define BAD(...) (em_fail(EM_ERR_VALUE, "zip: " __VA_ARGS__), -1)

/* Whether [at, at + n) lies within the archive. */
static bool within(const em_zip *z, uint64_t at, uint64_t n) { return at <= z->size && n <= z->size - at; }

/* The ZIP64 extra field of a central entry fills the 32-bit fields that are 0xffffffff, in order. */
static int read_zip64_extra(const uint8_t *extra, size_t len, uint64_t *usize, uint64_t *csize, uint64_t *local)
{
    uint64_t *want[3] = {*usize == U32_MAX ? usize : NULL, *csize == U32_MAX ? csize : NULL,
                         *local == U32_MAX ? local : NULL};
    while (len >= 4) {
        uint16_t id = rd16(extra), n = rd16(extra + 2);
        if (n > len - 4) return BAD("an extra field runs past its entry");
        if (id == 1) {
            size_t at = 0;
            for (int k = 0; k < 3; k++) {
                if (!want[k]) continue;
                if (at + 8 > n) return BAD("a ZIP64 extra field is too short");
                *want[k] = rd64(extra + 4 + at), want[k] = NULL;
                at += 8;
            }
        }
        extra += 4 + n, len -= 4 + n;
    }
    for (int k = 0; k < 3; k++)
        if (want[k]) return BAD("an entry needs a ZIP64 extra field it does not have");
    return 0;
}

/* The end of central directory: (count, cd offset, cd size), ZIP64 where present. */
static int read_directory_end(const em_zip *z, uint64_t *count, uint64_t *cd_at, uint64_t *cd_size)
{
    if (z->size < EOCD_LEN) return BAD("%llu bytes is too small for an archive", (unsigned long long)z->size);
    uint64_t lowest = z->size > EOCD_LEN + 0xffff ? z->size - EOCD_LEN - 0xffff : 0, at = z->size - EOCD_LEN;
    for (;; at--) {
        if (rd32(z->data + at) == SIG_EOCD && rd16(z->data + at + 20) == z->size - at - EOCD_LEN) break;
        if (at == lowest) return BAD("no end of central directory record (not a zip file, or truncated)");
    }
    const uint8_t *e = z->data + at;
    if (rd16(e + 4) || rd16(e + 6) || rd16(e + 8) != rd16(e + 10)) return BAD("multi-disk archives are not supported");
    *count = rd16(e + 10), *cd_size = rd32(e + 12), *cd_at = rd32(e + 16);
    uint64_t end = at; /* the central directory must end before here */
    if (at >= LOCATOR64_LEN && rd32(e - LOCATOR64_LEN) == SIG_LOCATOR64) {
        const uint8_t *l = e - LOCATOR64_LEN;
        uint64_t at64 = rd64(l + 8);
        if (rd32(l + 4) || rd32(l + 16) > 1) return BAD("multi-disk archives are not supported");
        if (at64 > at - LOCATOR64_LEN || at - LOCATOR64_LEN - at64 < EOCD64_LEN ||
            rd32(z->data + at64) != SIG_EOCD64)
            return BAD("the ZIP64 end of central directory record is missing or out of place");
        const uint8_t *r = z->data + at64;
        if (rd32(r + 16) || rd32(r + 20) || rd64(r + 24) != rd64(r + 32))
            return BAD("multi-disk archives are not supported");
        *count = rd64(r + 32), *cd_size = rd64(r + 40), *cd_at = rd64(r + 48);
        end = at64;
    }
    if (*cd_at > end || *cd_size > end - *cd_at) return BAD("the central directory lies outside the file");
    if (*count > *cd_size / CENTRAL_LEN) return BAD("the central directory is too small for its %llu entries",
                                                    (unsigned long long)*count);
    return 0;
}

/* One central directory entry at *at (advanced past it) into e. */
static int read_entry(em_zip *z, uint64_t *at, uint64_t cd_end, zip_entry *e)
{
    if (!within(z, *at, CENTRAL_LEN) || *at + CENTRAL_LEN > cd_end || rd32(z->data + *at) != SIG_CENTRAL)
        return BAD("bad central directory entry");
    const uint8_t *c = z->data + *at;
    uint16_t flags = rd16(c + 8), nlen = rd16(c + 28), xlen = rd16(c + 30), clen = rd16(c + 32);
    if (cd_end - *at - CENTRAL_LEN < (uint64_t)nlen + xlen + clen) return BAD("a central entry runs past the directory");
    if (flags & 1) return BAD("encrypted entries are not supported");
    e->method = rd16(c + 10);
    if (e->method != 0 && e->method != 8)
        return BAD("compression method %d is not supported (only stored and deflated)", e->method);
    e->crc = rd32(c + 16);
    e->csize = rd32(c + 20), e->usize = rd32(c + 24);
    uint64_t local = rd32(c + 42);
    if (read_zip64_extra(c + CENTRAL_LEN + nlen, xlen, &e->usize, &e->csize, &local)) return -1;
    if (!nlen || memchr(c + CENTRAL_LEN, 0, nlen)) return BAD("an entry has an empty name or a NUL in its name");
    if (!(e->name = strndup((const char *)c + CENTRAL_LEN, nlen))) return em_fail(EM_ERR_MEMORY, "zip: out of memory"), -1;
    *at += CENTRAL_LEN + (uint64_t)nlen + xlen + clen;
    if (!within(z, local, LOCAL_LEN) || rd32(z->data + local) != SIG_LOCAL)
        return BAD("entry '%s': its local header is missing or outside the file", e->name);
    const uint8_t *l = z->data + local;
    e->local = local;
    e->data_at = local + LOCAL_LEN + rd16(l + 26) + rd16(l + 28);
    if (!within(z, e->data_at, e->csize))
        return BAD("entry '%s': its %llu bytes of data run past the end of the file", e->name,
                   (unsigned long long)e->csize);
    if (e->method == 0 && e->csize != e->usize)
        return BAD("entry '%s' is stored but its sizes differ (%llu, %llu)", e->name, (unsigned long long)e->csize,
                   (unsigned long long)e->usize);
    if (e->usize > (uint64_t)INT64_MAX / 2) return BAD("entry '%s' is too large", e->name);
    return 0;
}

static int by_local(const void *a, const void *b, void *z)
{
    const zip_entry *e = ((const em_zip *)z)->entries;
    uint64_t x = e[*(const int *)a].local, y = e[*(const int *)b].local;
    return x < y ? -1 : x > y;
}

/* Zip bombs: entries whose data overlap (one stored megabyte named a thousand
 * times), or deflated entries that expand more than EM_ZIP_MAX_RATIO times
 * overall (plus 1 MiB for small files), are refused before anything is read. */
static int check_bombs(em_zip *z)
{
    qsort_r(z->sorted, (size_t)z->n, sizeof *z->sorted, by_local, z);
    uint64_t deflated = 0, expanded = 0;
    for (int i = 0; i < z->n; i++) {
        const zip_entry *e = &z->entries[z->sorted[i]];
        if (i + 1 < z->n && e->data_at + e->csize > z->entries[z->sorted[i + 1]].local)
            return BAD("entries '%s' and '%s' overlap: refused as a zip bomb", e->name,
                       z->entries[z->sorted[i + 1]].name);
        /* deflated sums compressed sizes of disjoint ranges of the file: no overflow */
        if (e->method == 8 && (deflated += e->csize, __builtin_add_overflow(expanded, e->usize, &expanded)))
            expanded = UINT64_MAX;
    }
    if (expanded / EM_ZIP_MAX_RATIO > deflated + (1 << 20) / EM_ZIP_MAX_RATIO)
        return BAD("%llu compressed bytes claim to expand to %llu: refused as a zip bomb (at most %dx; unzip "
                   "and re-save the file uncompressed if it is trusted)", (unsigned long long)deflated,
                   (unsigned long long)expanded, EM_ZIP_MAX_RATIO);
    return 0;
}

static int by_name(const void *a, const void *b, void *z)
{
    const zip_entry *e = ((const em_zip *)z)->entries;
    return strcmp(e[*(const int *)a].name, e[*(const int *)b].name);
}

static int parse(em_zip *z)
{
    uint64_t count, cd_at, cd_size;
    if (read_directory_end(z, &count, &cd_at, &cd_size)) return -1;
    z->entries = calloc(count ? count : 1, sizeof *z->entries);
    z->sorted = malloc(sizeof *z->sorted * (count ? count : 1));
    if (!z->entries || !z->sorted) return em_fail(EM_ERR_MEMORY, "zip: out of memory"), -1;
    for (uint64_t at = cd_at; (uint64_t)z->n < count; z->n++) {
        z->sorted[z->n] = z->n;
        if (read_entry(z, &at, cd_at + cd_size, &z->entries[z->n])) {
            z->n++;
            return -1;
        }
    }
    if (check_bombs(z)) return -1;
    /* names must be unique: a second entry of the same name would be ambiguous */
    qsort_r(z->sorted, (size_t)z->n, sizeof *z->sorted, by_name, z);
    for (int i = 1; i < z->n; i++)
        if (!strcmp(z->entries[z->sorted[i - 1]].name, z->entries[z->sorted[i]].name))
            return BAD("the name '%s' appears twice", z->entries[z->sorted[i]].name);
    return 0;
}

void em_zip_close(em_zip *z)
{
    if (!z) return;
    for (int i = 0; i < z->n; i++) free(z->entries[i].name);
    free(z->entries), free(z->sorted);
    if (z->map) em_mapping_unref(z->map);
    else free((void *)z->data);
    free(z);
}

static em_zip *open_parsed(em_zip *z)
{
    if (parse(z)) {
        em_zip_close(z);
        return NULL;
    }
    return z;
}

em_zip *em_zip_open_buffer(const void *data, size_t size)
{
    if (!data && size) return em_error(EM_ERR_VALUE, "zip: NULL buffer");
    em_zip *z = calloc(1, sizeof *z);
    void *copy = malloc(size ? size : 1);
    if (!z || !copy) {
        free(z), free(copy);
        return em_error(EM_ERR_MEMORY, "zip: out of memory");
    }
    if (size) memcpy(copy, data, size);
    z->data = copy, z->size = size;
    return open_parsed(z);
}

em_zip *em_zip_open(const char *path)
{
    if (!path) return em_error(EM_ERR_VALUE, "zip: NULL path");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return em_error(EM_ERR_RUNTIME, "zip: cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    em_zip *z = NULL;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        em_fail(EM_ERR_RUNTIME, "zip: %s is not a regular file", path);
    } else if (sb.st_size < EOCD_LEN) {
        em_fail(EM_ERR_VALUE, "zip: %s: %lld bytes is too small for an archive", path, (long long)sb.st_size);
    } else if (!(z = calloc(1, sizeof *z))) {
        em_fail(EM_ERR_MEMORY, "zip: out of memory");
    } else if (!(z->map = em_map_file(fd, (size_t)sb.st_size, path))) {
        free(z);
        z = NULL;
    } else {
        z->data = z->map->addr, z->size = (uint64_t)sb.st_size;
        z = open_parsed(z);
    }
    close(fd);
    return z;
}

int em_zip_count(const em_zip *z) { return EM_NULL(z) ? -1 : z->n; }

const char *em_zip_name(const em_zip *z, int i)
{
    if (!z || i < 0 || i >= z->n) return em_error(EM_ERR_INDEX, "zip: entry %d out of range", i);
    return z->entries[i].name;
}

int em_zip_find(const em_zip *z, const char *name)
{
    if (EM_NULL(z) || EM_NULL(name)) return -1;
    int lo = 0, hi = z->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(z->entries[z->sorted[mid]].name, name);
        if (!c) return z->sorted[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

int64_t em_zip_entry_size(const em_zip *z, int i)
{
    if (!z || i < 0 || i >= z->n) return em_fail(EM_ERR_INDEX, "zip: entry %d out of range", i), -1;
    return (int64_t)z->entries[i].usize;
}

/* Inflates a raw deflate stream of exactly e->usize bytes into dst. */
static int inflate_entry(const em_zip *z, const zip_entry *e, uint8_t *dst)
{
    z_stream s = {0};
    if (inflateInit2(&s, -MAX_WBITS) != Z_OK) return em_fail(EM_ERR_MEMORY, "zip: out of memory"), -1;
    const uint8_t *in = z->data + e->data_at;
    uint64_t in_left = e->csize, out_left = e->usize;
    int rc = Z_OK;
    while (rc == Z_OK) {
        uInt ask_in = in_left > (1u << 30) ? 1u << 30 : (uInt)in_left;
        uInt ask_out = out_left > (1u << 30) ? 1u << 30 : (uInt)out_left;
        s.next_in = (Bytef *)in, s.avail_in = ask_in;
        s.next_out = dst, s.avail_out = ask_out;
        uint8_t spare;
        if (!ask_out) s.next_out = &spare, s.avail_out = 1; /* to see whether more output comes */
        rc = inflate(&s, Z_NO_FLUSH);
        uInt used_in = ask_in - s.avail_in, made = ask_out ? ask_out - s.avail_out : 1 - s.avail_out;
        if (!ask_out && made) {
            rc = Z_DATA_ERROR;
            break;
        }
        in += used_in, in_left -= used_in, dst += made, out_left -= made;
        if (rc == Z_OK && !used_in && !made) rc = Z_BUF_ERROR;
    }
    inflateEnd(&s);
    if (rc != Z_STREAM_END || out_left)
        return BAD("entry '%s': corrupt deflate data or a wrong size (%s)", e->name,
                   rc == Z_STREAM_END ? "too little data" : s.msg ? s.msg : "truncated");
    return 0;
}

static int check_crc(const zip_entry *e, const uint8_t *data)
{
    uLong crc = crc32(0, Z_NULL, 0);
    for (uint64_t at = 0; at < e->usize;) {
        uInt n = e->usize - at > (1u << 30) ? 1u << 30 : (uInt)(e->usize - at);
        crc = crc32(crc, data + at, n);
        at += n;
    }
    if (crc != e->crc) return BAD("entry '%s': CRC mismatch (the file is corrupt)", e->name);
    return 0;
}

em_status em_zip_read(const em_zip *z, int i, void *dst)
{
    if (!z || i < 0 || i >= z->n) return em_fail(EM_ERR_INDEX, "zip: entry %d out of range", i);
    if (!dst && z->entries[i].usize) return em_fail(EM_ERR_VALUE, "zip: NULL destination");
    const zip_entry *e = &z->entries[i];
    if (e->method == 0) {
        if (e->usize) memcpy(dst, z->data + e->data_at, e->usize);
    } else if (inflate_entry(z, e, dst)) {
        return em_error_code();
    }
    return check_crc(e, dst) ? em_error_code() : EM_OK;
}

em_tensor *em_zip_tensor(em_zip *z, int i, em_dtype dt, bool share)
{
    if (!z || i < 0 || i >= z->n) return em_error(EM_ERR_INDEX, "zip: entry %d out of range", i);
    if ((unsigned)dt >= EM_DTYPE_COUNT) return em_error(EM_ERR_VALUE, "zip: bad dtype");
    const zip_entry *e = &z->entries[i];
    size_t elsize = em_dtype_size(dt);
    if (e->usize % elsize)
        return em_error(EM_ERR_VALUE, "zip: entry '%s' of %llu bytes is not a whole number of %s", e->name,
                        (unsigned long long)e->usize, em_dtype_name(dt));
    int64_t n = (int64_t)(e->usize / elsize);
    if (share && z->map && e->method == 0 && e->data_at % elsize == 0)
        return em_mapping_tensor(z->map, e->data_at, n, dt);
    em_tensor *t = em_empty(1, &n, dt);
    if (t && em_zip_read(z, i, em_tensor_data(t))) {
        em_release(t);
        return NULL;
    }
    return t;
}

/* ======================= writing ======================================= */

typedef struct written { char *name; uint64_t at, size; uint32_t crc; } written;

struct em_zip_writer {
    em_write_fn write;
    void *ctx;
    em_atomic_file file; /* when writing to a path */
    bool to_file;
    uint64_t at;
    int n, cap;
    written *entries;
};

em_zip_writer *em_zip_writer_new(em_write_fn write, void *ctx)
{
    if (!write) return em_error(EM_ERR_VALUE, "zip: NULL write function");
    em_zip_writer *w = calloc(1, sizeof *w);
    if (!w) return em_error(EM_ERR_MEMORY, "zip: out of memory");
    w->write = write, w->ctx = ctx, w->file.fd = -1;
    return w;
}

em_zip_writer *em_zip_writer_open(const char *path)
{
    em_zip_writer *w = calloc(1, sizeof *w);
    if (!w) return em_error(EM_ERR_MEMORY, "zip: out of memory");
    if (em_atomic_open(&w->file, path, "ember.save")) {
        free(w);
        return NULL;
    }
    w->write = em_atomic_write, w->ctx = &w->file, w->to_file = true;
    return w;
}

void em_zip_writer_free(em_zip_writer *w)
{
    if (!w) return;
    if (w->to_file) em_atomic_abort(&w->file);
    for (int i = 0; i < w->n; i++) free(w->entries[i].name);
    free(w->entries);
    free(w);
}

/* Little-endian fields appended to a small buffer. */
typedef struct { uint8_t b[160]; size_t n; } rec;
static void put16(rec *r, uint32_t v) { r->b[r->n++] = v & 0xff, r->b[r->n++] = v >> 8 & 0xff; }
static void put32(rec *r, uint32_t v) { put16(r, v & 0xffff), put16(r, v >> 16); }
static void put64(rec *r, uint64_t v) { put32(r, (uint32_t)v), put32(r, (uint32_t)(v >> 32)); }

static int emit(em_zip_writer *w, const void *data, size_t n)
{
    if (n && w->write(w->ctx, data, n)) return -1;
    w->at += n;
    return 0;
}

static uint32_t crc_of(const void *data, size_t n)
{
    uLong crc = crc32(0, Z_NULL, 0);
    for (size_t at = 0; at < n;) {
        uInt k = n - at > (1u << 30) ? 1u << 30 : (uInt)(n - at);
        crc = crc32(crc, (const Bytef *)data + at, k);
        at += k;
    }
    return (uint32_t)crc;
}

em_status em_zip_writer_add(em_zip_writer *w, const char *name, const void *data, size_t n)
{
    if (!w || !name || !*name || (!data && n)) return em_fail(EM_ERR_VALUE, "zip: bad entry (NULL or empty name)");
    size_t nlen = strlen(name);
    if (nlen > 0xffff) return em_fail(EM_ERR_VALUE, "zip: entry name too long");
    for (int i = 0; i < w->n; i++)
        if (!strcmp(w->entries[i].name, name)) return em_fail(EM_ERR_VALUE, "zip: entry '%s' added twice", name);
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 16;
        written *e = realloc(w->entries, sizeof *e * (size_t)cap);
        if (!e) return em_fail(EM_ERR_MEMORY, "zip: out of memory");
        w->entries = e, w->cap = cap;
    }
    written *e = &w->entries[w->n];
    *e = (written){strdup(name), w->at, n, crc_of(data, n)};
    if (!e->name) return em_fail(EM_ERR_MEMORY, "zip: out of memory");
    w->n++;
    bool big = n >= U32_MAX;
    rec r = {.n = 0};
    put32(&r, SIG_LOCAL), put16(&r, big ? 45 : 20), put16(&r, 0), put16(&r, 0);
    put16(&r, 0), put16(&r, 0x21); /* time, date: 1980-01-01, for reproducible files */
    put32(&r, e->crc), put32(&r, big ? U32_MAX : (uint32_t)n), put32(&r, big ? U32_MAX : (uint32_t)n);
    size_t extra = big ? 20 : 0;
    /* pad with an extra field (id "FB") so that the data starts ALIGN-aligned */
    size_t end = (size_t)(w->at % ALIGN) + LOCAL_LEN + nlen + extra + 4, pad = (ALIGN - end % ALIGN) % ALIGN;
    put16(&r, (uint32_t)nlen), put16(&r, (uint32_t)(extra + 4 + pad));
    rec x = {.n = 0};
    if (big) put16(&x, 1), put16(&x, 16), put64(&x, n), put64(&x, n);
    put16(&x, 0x4246), put16(&x, (uint32_t)pad);
    static const uint8_t zeros[ALIGN];
    if (emit(w, r.b, r.n) || emit(w, name, nlen) || emit(w, x.b, x.n) || emit(w, zeros, pad) || emit(w, data, n))
        return em_error_code() ? em_error_code() : em_fail(EM_ERR_RUNTIME, "zip: write failed");
    return EM_OK;
}

em_status em_zip_writer_finish(em_zip_writer *w)
{
    if (!w) return em_fail(EM_ERR_VALUE, "zip: NULL writer");
    uint64_t cd_at = w->at;
    int failed = 0;
    for (int i = 0; i < w->n && !failed; i++) {
        const written *e = &w->entries[i];
        bool big_size = e->size >= U32_MAX, big_at = e->at >= U32_MAX;
        size_t nlen = strlen(e->name), extra = big_size || big_at ? 4 + 16 * big_size + 8 * big_at : 0;
        rec r = {.n = 0};
        put32(&r, SIG_CENTRAL), put16(&r, extra ? 45 : 20), put16(&r, extra ? 45 : 20), put16(&r, 0), put16(&r, 0);
        put16(&r, 0), put16(&r, 0x21), put32(&r, e->crc);
        put32(&r, big_size ? U32_MAX : (uint32_t)e->size), put32(&r, big_size ? U32_MAX : (uint32_t)e->size);
        put16(&r, (uint32_t)nlen), put16(&r, (uint32_t)extra), put16(&r, 0), put16(&r, 0), put16(&r, 0), put32(&r, 0);
        put32(&r, big_at ? U32_MAX : (uint32_t)e->at);
        rec x = {.n = 0};
        if (extra) {
            put16(&x, 1), put16(&x, (uint32_t)(extra - 4));
            if (big_size) put64(&x, e->size), put64(&x, e->size);
            if (big_at) put64(&x, e->at);
        }
        failed = emit(w, r.b, r.n) || emit(w, e->name, nlen) || emit(w, x.b, x.n);
    }
    uint64_t cd_size = w->at - cd_at, eocd64_at = w->at;
    bool zip64 = w->n >= 0xffff || cd_at >= U32_MAX || cd_size >= U32_MAX;
    rec r = {.n = 0};
    if (zip64) {
        put32(&r, SIG_EOCD64), put64(&r, EOCD64_LEN - 12), put16(&r, 45), put16(&r, 45), put32(&r, 0), put32(&r, 0);
        put64(&r, (uint64_t)w->n), put64(&r, (uint64_t)w->n), put64(&r, cd_size), put64(&r, cd_at);
        put32(&r, SIG_LOCATOR64), put32(&r, 0), put64(&r, eocd64_at), put32(&r, 1);
    }
    put32(&r, SIG_EOCD), put16(&r, 0), put16(&r, 0);
    put16(&r, zip64 ? 0xffff : (uint32_t)w->n), put16(&r, zip64 ? 0xffff : (uint32_t)w->n);
    put32(&r, zip64 ? U32_MAX : (uint32_t)cd_size), put32(&r, zip64 ? U32_MAX : (uint32_t)cd_at), put16(&r, 0);
    failed = failed || emit(w, r.b, r.n);
    em_status st = failed ? (em_error_code() ? em_error_code() : em_fail(EM_ERR_RUNTIME, "zip: write failed")) : EM_OK;
    if (!st && w->to_file) {
        st = em_atomic_commit(&w->file);
        w->to_file = false; /* committed or removed */
    }
    em_zip_writer_free(w);
    return st;
}
