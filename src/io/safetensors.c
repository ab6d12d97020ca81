/* safetensors files: writing (atomically, to a path) and reading (copying or
 * mmap'ing) with full validation of the header (include/ember/serialize.h).
 * The JSON header is built and parsed with jansson. */
#include "file.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian; a big-endian host would need byte swaps here"
#endif

#define MAX_HEADER_BYTES ((uint64_t)100 * 1000 * 1000) /* readers' common limit */
#define METADATA_KEY "__metadata__"

/* safetensors dtype names are Ember's dtype enum suffixes. */
static const char *const st_dtype_names[EM_DTYPE_COUNT] = {
#define EM_DTYPE(E, name, scalar_name, ctype, kind) [EM_##E] = #E,
#include "ember/dtypes.def"
#undef EM_DTYPE
};

static int st_dtype_from_name(const char *s)
{
    for (int d = 0; d < EM_DTYPE_COUNT; d++)
        if (!strcmp(s, st_dtype_names[d])) return d;
    return -1;
}

void em_safetensors_free(em_safetensors *st)
{
    if (!st) return;
    for (int i = 0; i < st->n; i++) {
        free(st->names[i]);
        em_release(st->tensors[i]);
    }
    for (int i = 0; i < st->nmeta; i++) {
        free(st->meta_keys[i]);
        free(st->meta_values[i]);
    }
    free(st->names), free(st->tensors), free(st->meta_keys), free(st->meta_values);
    free(st);
}

/* ======================= writing ======================================= */

/* Tensor indices by decreasing element size, ties in the given order. */
typedef struct { int index; size_t elsize; } write_slot;
static int by_elsize_desc(const void *a, const void *b)
{
    const write_slot *x = a, *y = b;
    if (x->elsize != y->elsize) return x->elsize < y->elsize ? 1 : -1;
    return x->index - y->index;
}

static json_t *metadata_json(int nmeta, const char *const *keys, const char *const *values)
{
    json_t *m = json_object();
    for (int i = 0; m && i < nmeta; i++) {
        if (!keys || !values || !keys[i] || !values[i]) {
            json_decref(m);
            return em_error(EM_ERR_VALUE, "safetensors: metadata key or value %d is NULL", i);
        }
        /* json_object_set_new takes the new string even when it fails (or is NULL) */
        if (json_object_get(m, keys[i]) || json_object_set_new(m, keys[i], json_string(values[i]))) {
            json_decref(m);
            return em_error(EM_ERR_VALUE, "safetensors: metadata key '%s' is repeated or not valid UTF-8 "
                            "(or its value is not)", keys[i]);
        }
    }
    return m;
}

/* The header object, tensors in `order`; NULL with an error. */
static json_t *header_json(int n, const char *const *names, const em_tensor *const *tensors,
                           const write_slot *order, int nmeta, const char *const *meta_keys,
                           const char *const *meta_values)
{
    json_t *root = json_object();
    if (!root) return em_error(EM_ERR_MEMORY, "safetensors: out of memory");
    if (nmeta > 0) {
        json_t *m = metadata_json(nmeta, meta_keys, meta_values);
        if (!m || json_object_set_new(root, METADATA_KEY, m)) goto fail;
    }
    int64_t offset = 0;
    for (int k = 0; k < n; k++) {
        int i = order[k].index;
        const em_tensor *t = tensors[i];
        const char *name = names[i];
        if (!name || !*name || !strcmp(name, METADATA_KEY) || json_object_get(root, name)) {
            em_error(EM_ERR_VALUE, "safetensors: tensor name %d ('%s') is empty, reserved or repeated", i,
                     name ? name : "(null)");
            goto fail;
        }
        int64_t nbytes = em_numel(t) * (int64_t)em_dtype_size(t->dtype), end;
        if (__builtin_add_overflow(offset, nbytes, &end)) {
            em_error(EM_ERR_MEMORY, "safetensors: total data size overflows");
            goto fail;
        }
        json_t *shape = json_array();
        for (int d = 0; shape && d < t->ndim; d++)
            if (json_array_append_new(shape, json_integer(t->sizes[d]))) json_decref(shape), shape = NULL;
        json_t *entry = json_pack("{s:s, s:o?, s:[I,I]}", "dtype", st_dtype_names[t->dtype], "shape", shape,
                                  "data_offsets", (json_int_t)offset, (json_int_t)end);
        if (!shape || !entry || json_object_set_new(root, name, entry)) {
            em_error(EM_ERR_VALUE, "safetensors: tensor name '%s' is not valid UTF-8 (or out of memory)", name);
            goto fail;
        }
        offset = end;
    }
    return root;
fail:
    json_decref(root);
    return NULL;
}

em_status em_safetensors_write(em_write_fn write, void *ctx, int n, const char *const *names,
                               const em_tensor *const *tensors, int nmeta,
                               const char *const *meta_keys, const char *const *meta_values)
{
    if (n < 0 || nmeta < 0 || (n && (!names || !tensors)))
        return em_fail(EM_ERR_VALUE, "safetensors: bad tensor or metadata count");
    for (int i = 0; i < n; i++) {
        if (!tensors[i]) return em_fail(EM_ERR_VALUE, "safetensors: tensor %d is NULL", i);
        if (tensors[i]->storage->device.type != EM_CPU)
            return em_fail(EM_ERR_DEVICE, "safetensors: tensor '%s' is not on the CPU", names[i] ? names[i] : "");
    }
    write_slot *order = malloc(sizeof *order * (n ? n : 1));
    if (!order) return em_fail(EM_ERR_MEMORY, "safetensors: out of memory");
    for (int i = 0; i < n; i++) order[i] = (write_slot){i, em_dtype_size(tensors[i]->dtype)};
    qsort(order, n, sizeof *order, by_elsize_desc);
    em_clear_error(); /* a failing sink may or may not set its own error */
    em_status st = EM_OK;
    char *text = NULL;
    json_t *root = header_json(n, names, tensors, order, nmeta, meta_keys, meta_values);
    if (!root) {
        st = em_error_code() ? em_error_code() : em_fail(EM_ERR_MEMORY, "safetensors: out of memory");
        goto done;
    }
    text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!text) {
        st = em_fail(EM_ERR_MEMORY, "safetensors: out of memory writing the header");
        goto done;
    }
    /* Pad the header with spaces so that the data starts 8-byte aligned. */
    size_t len = strlen(text), padded = (len + 7) & ~(size_t)7;
    uint64_t header_len = padded;
    static const char spaces[8] = "        ";
    bool failed = write(ctx, &header_len, 8) || write(ctx, text, len) || write(ctx, spaces, padded - len);
    for (int k = 0; k < n && !failed; k++) {
        const em_tensor *t = tensors[order[k].index]; /* (lazy bits: the values are written, Note [Conjugate bit]) */
        em_tensor *c = em_has_lazy_bits(t) ? em_clone(t) : em_contiguous(t), *h = c ? em_host_tensor(c) : NULL;
        em_release(c);
        if (!h) {
            st = em_error_code();
            goto done;
        }
        failed = write(ctx, em_tensor_data(h), (size_t)em_numel(h) * em_dtype_size(h->dtype)) != 0;
        em_release(h);
    }
    if (failed) st = em_error_code() ? em_error_code() : em_fail(EM_ERR_RUNTIME, "safetensors: write failed");
done:
    free(text);
    json_decref(root);
    free(order);
    return st;
}

em_status em_safetensors_save(const char *path, int n, const char *const *names,
                              const em_tensor *const *tensors, int nmeta,
                              const char *const *meta_keys, const char *const *meta_values)
{
    em_atomic_file f;
    em_status st = em_atomic_open(&f, path, "safetensors");
    if (st) return st;
    st = em_safetensors_write(em_atomic_write, &f, n, names, tensors, nmeta, meta_keys, meta_values);
    if (st) {
        em_atomic_abort(&f);
        return st;
    }
    return em_atomic_commit(&f);
}

/* ======================= reading ======================================= */

/* Where the bytes come from: all in memory (`data`: a buffer or `map`), or
 * read from `fd` on demand (the header, then each tensor into its storage). */
typedef struct source {
    const char *what; /* the path, for messages */
    const char *data;
    em_mapping *map;
    int fd;
    uint64_t size;
} source;

static int source_read(const source *s, uint64_t at, void *dst, size_t n)
{
    if (s->data) {
        memcpy(dst, s->data + at, n);
        return 0;
    }
    char *p = dst;
    while (n) {
        ssize_t r = pread(s->fd, p, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n, (off_t)at);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return em_fail(EM_ERR_RUNTIME, "safetensors: %s: read failed: %s", s->what,
                                   r < 0 ? strerror(errno) : "file shrank while reading");
        p += r, n -= (size_t)r, at += (uint64_t)r;
    }
    return 0;
}

typedef struct entry {
    const char *name; /* borrowed from the JSON */
    int dtype, ndim, order;
    int64_t sizes[EM_MAX_DIMS];
    uint64_t begin, end;
} entry;

static int by_offsets(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return x->order - y->order;
}

#define BAD(...) (em_fail(EM_ERR_VALUE, __VA_ARGS__), -1)

/* One tensor's header entry {"dtype", "shape", "data_offsets"}; 0 or -1. */
static int parse_entry(const source *s, const char *name, json_t *v, entry *e)
{
    e->name = name;
    json_t *dtype = json_object_get(v, "dtype"), *shape = json_object_get(v, "shape");
    json_t *offs = json_object_get(v, "data_offsets");
    if (!json_is_object(v) || json_object_size(v) != 3 || !json_is_string(dtype) || !json_is_array(shape) ||
        !json_is_array(offs))
        return BAD("safetensors: %s: entry '%s' must be an object with exactly \"dtype\" (string), "
                   "\"shape\" (array) and \"data_offsets\" (array)", s->what, name);
    e->dtype = st_dtype_from_name(json_string_value(dtype));
    if (e->dtype < 0)
        return BAD("safetensors: %s: tensor '%s' has dtype '%s', which Ember does not support", s->what, name,
                   json_string_value(dtype));
    e->ndim = (int)json_array_size(shape);
    if (e->ndim > EM_MAX_DIMS)
        return BAD("safetensors: %s: tensor '%s' has %d dims (at most %d)", s->what, name, e->ndim, EM_MAX_DIMS);
    int64_t nbytes = (int64_t)em_dtype_size(e->dtype);
    for (int d = 0; d < e->ndim; d++) {
        json_t *x = json_array_get(shape, d);
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            return BAD("safetensors: %s: tensor '%s': shape entries must be non-negative integers", s->what, name);
        e->sizes[d] = json_integer_value(x);
        if (em_mul_overflow(nbytes, e->sizes[d], &nbytes))
            return BAD("safetensors: %s: tensor '%s': the byte size of shape %s overflows", s->what, name,
                       em_shape_str(d + 1, e->sizes));
    }
    json_t *b = json_array_get(offs, 0), *en = json_array_get(offs, 1);
    if (json_array_size(offs) != 2 || !json_is_integer(b) || !json_is_integer(en) || json_integer_value(b) < 0 ||
        json_integer_value(en) < json_integer_value(b))
        return BAD("safetensors: %s: tensor '%s': data_offsets must be [begin, end] with 0 <= begin <= end",
                   s->what, name);
    e->begin = (uint64_t)json_integer_value(b), e->end = (uint64_t)json_integer_value(en);
    if (e->end - e->begin != (uint64_t)nbytes)
        return BAD("safetensors: %s: tensor '%s': shape %s of %s needs %lld bytes but data_offsets [%llu, %llu] "
                   "span %llu", s->what, name, em_shape_str(e->ndim, e->sizes), em_dtype_name(e->dtype),
                   (long long)nbytes, (unsigned long long)e->begin, (unsigned long long)e->end,
                   (unsigned long long)(e->end - e->begin));
    return 0;
}

static int parse_metadata(const source *s, json_t *m, em_safetensors *st)
{
    if (!json_is_object(m)) return BAD("safetensors: %s: \"__metadata__\" must be an object", s->what);
    size_t n = json_object_size(m);
    st->meta_keys = calloc(n ? n : 1, sizeof(char *));
    st->meta_values = calloc(n ? n : 1, sizeof(char *));
    if (!st->meta_keys || !st->meta_values) return em_fail(EM_ERR_MEMORY, "safetensors: out of memory"), -1;
    const char *k;
    json_t *v;
    json_object_foreach(m, k, v) {
        if (!json_is_string(v))
            return BAD("safetensors: %s: metadata value of '%s' is not a string", s->what, k);
        st->meta_keys[st->nmeta] = strdup(k);
        st->meta_values[st->nmeta] = strdup(json_string_value(v));
        st->nmeta++;
        if (!st->meta_keys[st->nmeta - 1] || !st->meta_values[st->nmeta - 1])
            return em_fail(EM_ERR_MEMORY, "safetensors: out of memory"), -1;
    }
    return 0;
}

/* The data of sorted entries must tile [0, data_size) exactly. */
static int check_layout(const source *s, const entry *es, int n, uint64_t data_size)
{
    uint64_t expect = 0;
    for (int i = 0; i < n; i++) {
        if (es[i].begin != expect)
            return BAD("safetensors: %s: tensor '%s' starts at %llu but the previous data ends at %llu (%s)",
                       s->what, es[i].name, (unsigned long long)es[i].begin, (unsigned long long)expect,
                       es[i].begin < expect ? "overlap" : "hole");
        if (es[i].end > data_size)
            return BAD("safetensors: %s: tensor '%s' ends at %llu, past the %llu bytes of data", s->what,
                       es[i].name, (unsigned long long)es[i].end, (unsigned long long)data_size);
        expect = es[i].end;
    }
    if (expect != data_size)
        return BAD("safetensors: %s: %llu trailing bytes after the last tensor", s->what,
                   (unsigned long long)(data_size - expect));
    return 0;
}

static em_tensor *load_tensor(const source *s, const entry *e, uint64_t data_start)
{
    uint64_t at = data_start + e->begin;
    if (s->map && at % em_dtype_size(e->dtype) == 0) {
        em_tensor *flat = em_mapping_tensor(s->map, at, (int64_t)((e->end - e->begin) / em_dtype_size(e->dtype)),
                                            e->dtype);
        if (!flat) return NULL;
        em_tensor *t = em_view(flat, e->ndim, e->sizes);
        em_release(flat);
        return t;
    }
    em_tensor *t = em_empty(e->ndim, e->sizes, e->dtype);
    if (t && e->end > e->begin && source_read(s, at, em_tensor_data(t), e->end - e->begin)) {
        em_release(t);
        return NULL;
    }
    return t;
}

static em_safetensors *parse(const source *s)
{
    uint64_t header_len;
    if (s->size < 8)
        return em_error(EM_ERR_VALUE, "safetensors: %s: %llu bytes is too small for a header", s->what,
                        (unsigned long long)s->size);
    if (source_read(s, 0, &header_len, 8)) return NULL;
    if (header_len > MAX_HEADER_BYTES)
        return em_error(EM_ERR_VALUE, "safetensors: %s: header length %llu exceeds the 100 MB limit", s->what,
                        (unsigned long long)header_len);
    if (header_len > s->size - 8)
        return em_error(EM_ERR_VALUE, "safetensors: %s: header length %llu runs past the end of the file "
                        "(%llu bytes)", s->what, (unsigned long long)header_len, (unsigned long long)s->size);
    char *owned = NULL;
    const char *text = s->data ? s->data + 8 : (owned = malloc(header_len ? header_len : 1));
    if (!text) return em_error(EM_ERR_MEMORY, "safetensors: out of memory reading the header");
    em_safetensors *st = NULL;
    entry *es = NULL;
    json_t *root = NULL;
    if (owned && source_read(s, 8, owned, header_len)) goto fail;
    json_error_t jerr;
    if (header_len == 0 || text[0] != '{') {
        em_fail(EM_ERR_VALUE, "safetensors: %s: the header is not a JSON object", s->what);
        goto fail;
    }
    root = json_loadb(text, header_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root || !json_is_object(root)) {
        em_fail(EM_ERR_VALUE, "safetensors: %s: the header is not a JSON object: %s", s->what,
                root ? "not an object" : jerr.text);
        goto fail;
    }
    size_t nkeys = json_object_size(root);
    st = calloc(1, sizeof *st);
    es = calloc(nkeys ? nkeys : 1, sizeof *es);
    if (!st || !es) goto oom;
    const char *key;
    json_t *v;
    int n = 0;
    json_object_foreach(root, key, v) {
        if (!strcmp(key, METADATA_KEY)) {
            if (parse_metadata(s, v, st)) goto fail;
        } else {
            es[n].order = n;
            if (parse_entry(s, key, v, &es[n++])) goto fail;
        }
    }
    qsort(es, n, sizeof *es, by_offsets);
    uint64_t data_start = 8 + header_len;
    if (check_layout(s, es, n, s->size - data_start)) goto fail;
    st->names = calloc(n ? n : 1, sizeof(char *));
    st->tensors = calloc(n ? n : 1, sizeof(em_tensor *));
    if (!st->names || !st->tensors) goto oom;
    for (; st->n < n; st->n++) {
        st->names[st->n] = strdup(es[st->n].name);
        st->tensors[st->n] = load_tensor(s, &es[st->n], data_start);
        if (!st->names[st->n] || !st->tensors[st->n]) {
            st->n++;
            if (em_error_code() == EM_OK) goto oom;
            goto fail;
        }
    }
    json_decref(root);
    free(es);
    free(owned);
    return st;
oom:
    em_fail(EM_ERR_MEMORY, "safetensors: out of memory");
fail:
    json_decref(root);
    free(es);
    free(owned);
    em_safetensors_free(st);
    return NULL;
}

em_safetensors *em_safetensors_load_buffer(const void *data, size_t size)
{
    if (!data && size) return em_error(EM_ERR_VALUE, "safetensors: NULL buffer");
    source s = {.what = "buffer", .data = data ? data : "", .fd = -1, .size = size};
    return parse(&s);
}

em_safetensors *em_safetensors_load(const char *path, bool use_mmap)
{
    if (!path) return em_error(EM_ERR_VALUE, "safetensors: NULL path");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return em_error(EM_ERR_RUNTIME, "safetensors: cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        close(fd);
        return em_error(EM_ERR_RUNTIME, "safetensors: %s is not a regular file", path);
    }
    source s = {.what = path, .fd = fd, .size = (uint64_t)sb.st_size};
    if (use_mmap && s.size >= 8) {
        if (!(s.map = em_map_file(fd, s.size, path))) {
            close(fd);
            return NULL;
        }
        s.data = s.map->addr;
    }
    em_safetensors *st = parse(&s);
    if (s.map) em_mapping_unref(s.map); /* the tensors hold their own references */
    close(fd);
    return st;
}
