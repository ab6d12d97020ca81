/* The zip reader and writer (include/ember/serialize.h), the non-executing
 * pickle parser and the legacy torch framing (include/ember/pickle.h):
 * round trips, alignment, ZIP64-free small archives, and rejection of
 * malformed input with an error, never a crash. */
#define _GNU_SOURCE
#include "test.h"
#include <unistd.h>

/* An em_write_fn into a growing buffer. */
typedef struct { char *data; size_t n, cap; } membuf;
static int mem_write(void *ctx, const void *data, size_t n)
{
    membuf *b = ctx;
    if (b->n + n > b->cap) {
        size_t cap = (b->n + n) * 2;
        char *p = realloc(b->data, cap);
        if (!p) return -1;
        b->data = p, b->cap = cap;
    }
    memcpy(b->data + b->n, data, n);
    b->n += n;
    return 0;
}

static membuf two_entry_zip(void)
{
    membuf b = {0};
    em_zip_writer *w = em_zip_writer_new(mem_write, &b);
    float v[3] = {1, 2, 3};
    if (!w || em_zip_writer_add(w, "archive/data.pkl", "\x80\x02N.", 4) ||
        em_zip_writer_add(w, "archive/data/0", v, sizeof v) || em_zip_writer_finish(w))
        b.n = 0;
    return b;
}

TEST(zip_round_trip_and_alignment)
{
    membuf b = two_entry_zip();
    CHECK(b.n > 0);
    em_zip *z = em_zip_open_buffer(b.data, b.n);
    CHECK(z && em_zip_count(z) == 2);
    CHECK(em_zip_find(z, "archive/data/0") == 1 && em_zip_find(z, "nope") == -1);
    CHECK(em_zip_entry_size(z, 1) == 12);
    em_tensor *t = em_zip_tensor(z, 1, EM_F32, false);
    CHECK(t && em_numel(t) == 3 && ((float *)em_data_ptr(t))[2] == 3);
    em_release(t);
    CHECK_ERR(em_zip_tensor(z, 1, EM_F64, false), EM_ERR_VALUE); /* 12 bytes is not whole float64s */
    CHECK_ERR(em_zip_read(z, 5, NULL), EM_ERR_INDEX);
    em_zip_close(z);
    /* every entry's data starts 64-byte aligned: the float data sits at a multiple of 64 */
    const float three[3] = {1, 2, 3};
    char *at = memmem(b.data, b.n, three, sizeof three);
    CHECK(at && (at - b.data) % 64 == 0);
    free(b.data);
}

TEST(zip_writer_refuses_duplicates_and_atomic_path)
{
    membuf b = {0};
    em_zip_writer *w = em_zip_writer_new(mem_write, &b);
    CHECK(w && em_zip_writer_add(w, "a", "x", 1) == EM_OK);
    CHECK_ERR(em_zip_writer_add(w, "a", "y", 1), EM_ERR_VALUE);
    CHECK_ERR(em_zip_writer_add(w, "", "y", 1), EM_ERR_VALUE);
    em_zip_writer_free(w);
    free(b.data);
    char path[] = "/tmp/ember_zip_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    w = em_zip_writer_open(path);
    CHECK(w && em_zip_writer_add(w, "e", "data", 4) == EM_OK);
    em_zip_writer_free(w); /* abandoned: the (empty) file is left as it was */
    em_zip *z = em_zip_open(path);
    CHECK(!z && em_error_code() == EM_ERR_VALUE);
    w = em_zip_writer_open(path);
    CHECK(w && em_zip_writer_add(w, "e", "data", 4) == EM_OK && em_zip_writer_finish(w) == EM_OK);
    z = em_zip_open(path);
    CHECK(z && em_zip_count(z) == 1);
    char got[4];
    CHECK(em_zip_read(z, 0, got) == EM_OK && !memcmp(got, "data", 4));
    em_zip_close(z);
    unlink(path);
}

TEST(zip_rejects_malformed_archives)
{
    membuf b = two_entry_zip();
    CHECK(b.n > 0);
    CHECK_ERR(em_zip_open_buffer(b.data, 10), EM_ERR_VALUE);          /* too small */
    CHECK_ERR(em_zip_open_buffer(b.data, b.n - 1), EM_ERR_VALUE);     /* no end record */
    CHECK_ERR(em_zip_open_buffer("PK\x03\x04garbage-garbage-garbage", 27), EM_ERR_VALUE);
    /* every single-byte corruption of the directory is refused or read consistently */
    for (size_t i = b.n - 22 - 2 * 46 - 40; i < b.n; i++) {
        char saved = b.data[i];
        b.data[i] ^= 0x5a;
        em_clear_error();
        em_zip *z = em_zip_open_buffer(b.data, b.n);
        CHECK(z || em_error_code() != EM_OK);
        for (int k = 0; z && k < em_zip_count(z); k++) {
            int64_t n = em_zip_entry_size(z, k);
            char *buf = n >= 0 && n < (1 << 20) ? malloc((size_t)n + 1) : NULL;
            if (buf) em_zip_read(z, k, buf);
            free(buf);
        }
        em_zip_close(z);
        b.data[i] = saved;
    }
    /* a CRC mismatch */
    const float three[3] = {1, 2, 3};
    char *at = memmem(b.data, b.n, three, sizeof three);
    CHECK(at);
    at[0] ^= 1;
    em_zip *z = em_zip_open_buffer(b.data, b.n);
    CHECK(z);
    CHECK_ERR(em_zip_tensor(z, 1, EM_F32, false), EM_ERR_VALUE);
    em_zip_close(z);
    free(b.data);
}

TEST(pickle_parses_without_running)
{
    /* {'a': [1, 2.5, 'x'], 'b': os.system('true')} in protocol 2 */
    static const char p[] = "\x80\x02}q\x00(X\x01\x00\x00\x00" "a]q\x01(K\x01G@\x04\x00\x00\x00\x00\x00\x00"
                            "X\x01\x00\x00\x00xeX\x01\x00\x00\x00" "bcos\nsystem\nX\x04\x00\x00\x00true\x85Ru.";
    em_pickle *pk = em_pickle_parse(p, sizeof p - 1);
    CHECK(pk && pk->end == sizeof p - 1);
    const em_pk_node *root = &pk->nodes[pk->root];
    CHECK(root->kind == EM_PK_DICT && root->kids.n == 4);
    const em_pk_node *list = &pk->nodes[root->kids.v[1]], *call = &pk->nodes[root->kids.v[3]];
    CHECK(list->kind == EM_PK_LIST && list->kids.n == 3 && pk->nodes[list->kids.v[1]].f == 2.5);
    CHECK(call->kind == EM_PK_CALL && pk->nodes[call->kids.v[0]].kind == EM_PK_GLOBAL);
    CHECK(!strcmp(pk->nodes[call->kids.v[0]].str, "os") && !strcmp(pk->nodes[call->kids.v[0]].str2, "system"));
    em_pickle_free(pk);
    CHECK_ERR(em_pickle_parse("\x80\x02\x82\x01.", 4), EM_ERR_VALUE);   /* EXT1 */
    CHECK_ERR(em_pickle_parse("\x80\x02]", 3), EM_ERR_VALUE);           /* no STOP */
    CHECK_ERR(em_pickle_parse("\x80\x02.", 3), EM_ERR_VALUE);           /* empty stack */
    CHECK_ERR(em_pickle_parse("\x80\x02h\x05.", 5), EM_ERR_VALUE);      /* unset memo */
    CHECK_ERR(em_pickle_parse("\x80\x02X\xff\xff\xff\x7f", 7), EM_ERR_VALUE); /* string past the end */
    CHECK_ERR(em_pickle_parse("\x80\x02r\xff\xff\xff\x7fN.", 9), EM_ERR_VALUE); /* huge memo key */
}

TEST(legacy_framing)
{
    static const char magic[] = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.";
    static const char version[] = "\x80\x02M\xe9\x03.", sysinfo[] = "\x80\x02}.";
    /* object: the persistent id ('storage', torch.FloatStorage, '0', 'cpu', 2) */
    static const char object[] = "\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00" "0"
                                 "X\x03\x00\x00\x00" "cpuK\x02tQ.";
    static const char keys[] = "\x80\x02]X\x01\x00\x00\x00" "0a.";
    membuf b = {0};
    int64_t count = 2;
    float data[2] = {5, 6};
    mem_write(&b, magic, sizeof magic - 1), mem_write(&b, version, sizeof version - 1);
    mem_write(&b, sysinfo, sizeof sysinfo - 1), mem_write(&b, object, sizeof object - 1);
    mem_write(&b, keys, sizeof keys - 1), mem_write(&b, &count, 8), mem_write(&b, data, 8);
    em_torch_legacy *t = em_torch_legacy_parse(b.data, b.n);
    CHECK(t && t->n == 1 && t->storages[0].dtype == EM_F32 && t->storages[0].numel == 2);
    CHECK(!memcmp(b.data + t->storages[0].data_at, data, 8));
    em_torch_legacy_free(t);
    CHECK_ERR(em_torch_legacy_parse(b.data, b.n - 1), EM_ERR_VALUE); /* truncated storage */
    count = (int64_t)1 << 60;
    memcpy(b.data + b.n - 16, &count, 8);
    CHECK_ERR(em_torch_legacy_parse(b.data, b.n), EM_ERR_VALUE); /* count disagrees with the declaration */
    b.data[5] ^= 1;
    CHECK_ERR(em_torch_legacy_parse(b.data, b.n), EM_ERR_VALUE); /* magic */
    free(b.data);
}
