/* The framing of torch.save's legacy format (include/ember/pickle.h): the
 * records around the object pickle and the raw storages after it, checked
 * with the non-executing pickle parser, so nothing in the file runs. */
#include "../core/internal.h"
#include "ember/pickle.h"
#include <stdlib.h>

#define BAD(...) em_error(EM_ERR_VALUE, "legacy torch file: " __VA_ARGS__)

static const uint8_t magic[10] = {0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

int em_torch_storage_dtype(const char *name)
{
    static const struct { const char *name; em_dtype dt; } types[] = {
        {"DoubleStorage", EM_F64}, {"FloatStorage", EM_F32}, {"HalfStorage", EM_F16}, {"BFloat16Storage", EM_BF16},
        {"LongStorage", EM_I64}, {"IntStorage", EM_I32}, {"ShortStorage", EM_I16}, {"CharStorage", EM_I8},
        {"ByteStorage", EM_U8}, {"BoolStorage", EM_BOOL},
    };
    if (EM_NULL(name)) return -1;
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (!strcmp(types[i].name, name)) return types[i].dt;
    return -1;
}

void em_torch_legacy_free(em_torch_legacy *t)
{
    if (!t) return;
    em_pickle_free(t->object);
    for (int i = 0; i < t->n; i++) free(t->storages[i].key);
    free(t->storages);
    free(t);
}

/* The next pickle at *at (advanced past it). */
static em_pickle *record(const uint8_t *data, size_t size, size_t *at)
{
    em_pickle *p = em_pickle_parse(data + *at, size - *at);
    if (p) *at += p->end;
    return p;
}

static const em_pk_node *root(const em_pickle *p) { return &p->nodes[p->root]; }

static int check_header(const uint8_t *data, size_t size, size_t *at)
{
    em_pickle *m = record(data, size, at), *v = m ? record(data, size, at) : NULL, *s = v ? record(data, size, at) : NULL;
    int rc = -1;
    if (!s) goto done;
    if (root(m)->kind != EM_PK_BIGINT || root(m)->len != 10 || memcmp(root(m)->str, magic, 10)) {
        BAD("bad magic number");
        goto done;
    }
    if (root(v)->kind != EM_PK_INT || root(v)->i != 1001) {
        BAD("unsupported protocol version");
        goto done;
    }
    const em_pk_node *d = root(s);
    if (d->kind != EM_PK_DICT) {
        BAD("the system info is not a dict");
        goto done;
    }
    for (int k = 0; k + 1 < d->kids.n; k += 2) {
        const em_pk_node *key = &s->nodes[d->kids.v[k]], *val = &s->nodes[d->kids.v[k + 1]];
        if (key->kind == EM_PK_STR && !strcmp(key->str, "little_endian") && !(val->kind == EM_PK_BOOL && val->i)) {
            BAD("big-endian files are not supported");
            goto done;
        }
    }
    rc = 0;
done:
    em_pickle_free(m), em_pickle_free(v), em_pickle_free(s);
    return rc;
}

/* A storage declared by a persistent id ('storage', torch.<T>Storage, key, location, numel, ...). */
typedef struct decl { const char *key; em_dtype dtype; int64_t numel; } decl;

static int by_key(const void *a, const void *b) { return strcmp(((const decl *)a)->key, ((const decl *)b)->key); }

/* The object's storage declarations, sorted by key, each key once (they must agree).
 * Persistent ids of other shapes are skipped: the loader walking the object refuses them. */
static decl *declarations(const em_pickle *o, int *n)
{
    decl *d = malloc(sizeof *d * (size_t)(o->n + 1));
    if (!d) return em_error(EM_ERR_MEMORY, "legacy torch file: out of memory");
    *n = 0;
    for (int i = 0; i < o->n; i++) {
        const em_pk_node *p = &o->nodes[i];
        if (p->kind != EM_PK_PERSID) continue;
        const em_pk_node *t = &o->nodes[p->kids.v[0]];
        if (t->kind != EM_PK_TUPLE || t->kids.n < 5) continue;
        const em_pk_node *type = &o->nodes[t->kids.v[1]], *k = &o->nodes[t->kids.v[2]], *num = &o->nodes[t->kids.v[4]];
        if (k->kind != EM_PK_STR) continue;
        int dt = type->kind == EM_PK_GLOBAL && !strcmp(type->str, "torch") ? em_torch_storage_dtype(type->str2) : -1;
        if (dt < 0 || num->kind != EM_PK_INT || num->i < 0) continue; /* not a storage: the loader refuses it */
        d[(*n)++] = (decl){k->str, (em_dtype)dt, num->i};
    }
    qsort(d, (size_t)*n, sizeof *d, by_key);
    int kept = 0;
    for (int i = 0; i < *n; i++) {
        if (kept && !strcmp(d[kept - 1].key, d[i].key)) {
            if (d[kept - 1].dtype != d[i].dtype || d[kept - 1].numel != d[i].numel) {
                BAD("storage '%s' is declared twice differently", d[i].key); /* before d goes */
                free(d);
                return NULL;
            }
            continue;
        }
        d[kept++] = d[i];
    }
    *n = kept;
    return d;
}

em_torch_legacy *em_torch_legacy_parse(const void *data_, size_t size)
{
    const uint8_t *data = data_;
    if (!data && size) return em_error(EM_ERR_VALUE, "legacy torch file: NULL data");
    size_t at = 0;
    if (check_header(data, size, &at)) return NULL;
    em_torch_legacy *t = calloc(1, sizeof *t);
    em_pickle *keys = NULL;
    decl *decls = NULL;
    if (!t) return em_error(EM_ERR_MEMORY, "legacy torch file: out of memory");
    t->object_at = at;
    if (!(t->object = record(data, size, &at)) || !(keys = record(data, size, &at))) goto fail;
    const em_pk_node *list = root(keys);
    if (list->kind != EM_PK_LIST) {
        BAD("the storage keys are not a list");
        goto fail;
    }
    int ndecl = 0;
    if (!(decls = declarations(t->object, &ndecl))) goto fail;
    if (!(t->storages = calloc((size_t)list->kids.n + 1, sizeof *t->storages))) {
        em_error(EM_ERR_MEMORY, "legacy torch file: out of memory");
        goto fail;
    }
    for (int k = 0; k < list->kids.n; k++) {
        const em_pk_node *key = &keys->nodes[list->kids.v[k]];
        em_legacy_storage *s = &t->storages[t->n];
        if (key->kind != EM_PK_STR) {
            BAD("a storage key is not a string");
            goto fail;
        }
        decl want = {key->str}, *found = bsearch(&want, decls, (size_t)ndecl, sizeof *decls, by_key);
        if (!found) {
            BAD("storage '%s' is not used by the object", key->str);
            goto fail;
        }
        if (found->numel < 0) {
            BAD("storage '%s' is listed twice", key->str);
            goto fail;
        }
        s->dtype = found->dtype, s->numel = found->numel;
        found->numel = -1; /* listed: a second listing is an error */
        if (!(s->key = strdup(key->str))) {
            em_error(EM_ERR_MEMORY, "legacy torch file: out of memory");
            goto fail;
        }
        t->n++;
        int64_t count;
        if (size - at < 8) {
            BAD("truncated before storage '%s'", s->key);
            goto fail;
        }
        memcpy(&count, data + at, 8);
        at += 8;
        size_t elsize = em_dtype_size(s->dtype);
        if (count != s->numel || (uint64_t)count > (size - at) / elsize) {
            BAD("storage '%s' declares %lld elements; its record has %lld and the file %zu more bytes", s->key,
                (long long)s->numel, (long long)count, size - at);
            goto fail;
        }
        s->data_at = at;
        at += (size_t)count * elsize;
    }
    em_pickle_free(keys);
    free(decls);
    return t;
fail:
    em_pickle_free(keys);
    free(decls);
    em_torch_legacy_free(t);
    return NULL;
}
