/* safetensors: round trips of every dtype and shape (copying and mmap'ed),
 * the exact file layout, rejection of every kind of malformed file, and
 * atomic saves (a failed write leaves the old file and no temporary file). */
#include "test.h"
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

/* A fresh directory under /tmp; removed (with its files) by rm_dir. */
static char *tmp_dir(void)
{
    char *d = strdup("/tmp/ember_st_XXXXXX");
    return d && mkdtemp(d) ? d : NULL;
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

static void rm_dir(char *dir)
{
    DIR *d = opendir(dir);
    char p[512];
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    rmdir(dir);
    free(dir);
}

static bool same_bytes(const em_tensor *a, const em_tensor *b)
{
    if (em_dtype_of(a) != em_dtype_of(b) || !tshape_is(b, em_ndim(a), em_sizes(a))) return false;
    em_tensor *ca = em_contiguous(a), *cb = em_contiguous(b);
    bool ok = ca && cb && !memcmp(em_data_ptr(ca), em_data_ptr(cb), em_numel(a) * em_dtype_size(em_dtype_of(a)));
    RELEASE(ca, cb);
    return ok;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) fwrite(data, 1, n, f), fclose(f);
}

TEST(safetensors_round_trip_every_dtype)
{
    char *dir = tmp_dir(), path[256];
    CHECK(dir);
    snprintf(path, sizeof path, "%s/all.safetensors", dir);
    enum { PER = 5 };
    em_tensor *ts[EM_DTYPE_COUNT * PER];
    char names[EM_DTYPE_COUNT * PER][32];
    const char *np[EM_DTYPE_COUNT * PER];
    int n = 0;
    for (int dt = 0; dt < EM_DTYPE_COUNT; dt++) {
        em_tensor *big = trand(dt, SHAPE(3, 4, 5), -50, 50);
        ts[n++] = trand(dt, SHAPE(2, 3), -50, 50);
        ts[n++] = trand(dt, 0, NULL, -50, 50);        /* 0-d */
        ts[n++] = em_empty(SHAPE(0), dt);             /* empty */
        ts[n++] = em_empty(SHAPE(3, 0, 2), dt);
        ts[n++] = em_transpose(big, 0, 2);            /* non-contiguous: written in C order */
        em_release(big);
    }
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "t%d.%s", i, em_dtype_name(em_dtype_of(ts[i])));
        np[i] = names[i];
    }
    const char *mk[] = {"format", "note"}, *mv[] = {"pt", "caf\xc3\xa9 \"quoted\""};
    CHECK(em_safetensors_save(path, n, np, (const em_tensor *const *)ts, 2, mk, mv) == EM_OK);
    for (int use_mmap = 0; use_mmap < 2; use_mmap++) {
        em_safetensors *st = em_safetensors_load(path, use_mmap);
        CHECK(st && st->n == n && st->nmeta == 2);
        CHECK(!strcmp(st->meta_keys[0], "format") && !strcmp(st->meta_values[1], mv[1]));
        for (int i = 0; i < n; i++) {
            int j = 0;
            while (j < st->n && strcmp(st->names[j], np[i])) j++;
            CHECK_MSG(j < st->n, "tensor %s missing", np[i]);
            CHECK_MSG(same_bytes(ts[i], st->tensors[j]), "tensor %s differs (mmap %d)", np[i], use_mmap);
            CHECK(em_is_contiguous(st->tensors[j]));
        }
        em_safetensors_free(st);
    }
    trelease_n(ts, n);
    rm_dir(dir);
}

/* The published layout, byte for byte: header length, padded JSON, data by
 * decreasing element size. */
TEST(safetensors_file_layout)
{
    char *dir = tmp_dir(), path[256];
    CHECK(dir);
    snprintf(path, sizeof path, "%s/x.safetensors", dir);
    em_tensor *a = tt(EM_U8, SHAPE(3), (double[]){1, 2, 3}), *b = tt(EM_F32, SHAPE(2), (double[]){1.5, -2});
    const char *names[] = {"a", "b"};
    CHECK(em_safetensors_save(path, 2, names, (const em_tensor *[]){a, b}, 0, NULL, NULL) == EM_OK);
    FILE *f = fopen(path, "rb");
    char buf[256] = {0};
    size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    uint64_t hl;
    memcpy(&hl, buf, 8);
    const char *want = "{\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[8,11]}}";
    CHECK(hl % 8 == 0 && hl >= strlen(want) && hl < strlen(want) + 8);
    CHECK(!memcmp(buf + 8, want, strlen(want)));
    for (size_t i = 8 + strlen(want); i < 8 + hl; i++) CHECK(buf[i] == ' ');
    CHECK(len == 8 + hl + 11);
    float fb[2];
    memcpy(fb, buf + 8 + hl, 8);
    CHECK(fb[0] == 1.5f && fb[1] == -2.0f && buf[8 + hl + 10] == 3);
    RELEASE(a, b);
    rm_dir(dir);
}

TEST(safetensors_mmap_tensors_outlive_the_file_list)
{
    char *dir = tmp_dir(), path[256];
    CHECK(dir);
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    em_tensor *a = trand(EM_F64, SHAPE(4, 4), -1, 1), *b = trand(EM_I16, SHAPE(7), -9, 9);
    CHECK(em_safetensors_save(path, 2, (const char *[]){"a", "b"}, (const em_tensor *[]){a, b}, 0, NULL, NULL) == EM_OK);
    em_safetensors *st = em_safetensors_load(path, true);
    CHECK(st && st->n == 2);
    em_tensor *ma = em_retain(st->tensors[0]), *mb = em_retain(st->tensors[1]);
    em_safetensors_free(st);
    unlink(path); /* the mapping keeps the data */
    CHECK(same_bytes(a, ma) && same_bytes(b, mb));
    /* writes are private to this process (copy on write) */
    CHECK(em_fill_(ma, 7) == EM_OK && tval(ma, 15) == 7);
    RELEASE(a, b, ma, mb);
    rm_dir(dir);
}

TEST(safetensors_mmap_copies_misaligned_tensors)
{
    /* U8 [3] then I16 [1] at data offset 3: not 2-byte aligned */
    char file[256] = {0};
    const char *h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]},"
                    "\"b\":{\"dtype\":\"I16\",\"shape\":[],\"data_offsets\":[3,5]}}";
    size_t hl = strlen(h);
    uint64_t hl64 = hl;
    memcpy(file, &hl64, 8), memcpy(file + 8, h, hl);
    file[8 + hl + 3] = 0x34, file[8 + hl + 4] = 0x12;
    char *dir = tmp_dir(), path[256];
    CHECK(dir);
    snprintf(path, sizeof path, "%s/u.safetensors", dir);
    write_file(path, file, 8 + hl + 5);
    em_safetensors *st = em_safetensors_load(path, true);
    CHECK(st && st->n == 2 && em_ndim(st->tensors[1]) == 0 && tval(st->tensors[1], 0) == 0x1234);
    CHECK(((uintptr_t)em_data_ptr(st->tensors[1]) & 1) == 0);
    em_safetensors_free(st);
    rm_dir(dir);
}

/* Writes "<len><header><data>" with len = strlen(header) unless given. */
static void write_raw(const char *path, const char *header, int64_t len, size_t ndata)
{
    size_t hl = strlen(header);
    uint64_t l = len >= 0 ? (uint64_t)len : hl;
    char *buf = calloc(1, 8 + hl + ndata);
    memcpy(buf, &l, 8), memcpy(buf + 8, header, hl);
    write_file(path, buf, 8 + hl + ndata);
    free(buf);
}

#define ENTRY(name, dt, shape, b, e) "\"" name "\":{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

TEST(safetensors_rejects_malformed_files)
{
    static const struct { const char *what, *header; int64_t len; size_t ndata; } cases[] = {
        {"header past EOF", "{}", 100, 0},
        {"header over 100 MB", "{}", 100000001, 0},
        {"not JSON", "{\"a\":", -1, 0},
        {"JSON array", "[1, 2]", -1, 0},
        {"JSON string", "\"abc\"", -1, 0},
        {"leading space", " {}", -1, 0},
        {"entry not an object", "{\"a\":3}", -1, 0},
        {"unknown dtype", "{" ENTRY("a", "U16", "[2]", 0, 4) "}", -1, 4},
        {"made-up dtype", "{" ENTRY("a", "F31", "[1]", 0, 4) "}", -1, 4},
        {"negative size", "{" ENTRY("a", "F32", "[-1]", 0, 4) "}", -1, 4},
        {"fractional size", "{" ENTRY("a", "F32", "[1.5]", 0, 4) "}", -1, 4},
        {"17 dims", "{" ENTRY("a", "U8", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", 0, 1) "}", -1, 1},
        {"byte size overflows", "{" ENTRY("a", "F32", "[4611686018427387904,4]", 0, 0) "}", -1, 0},
        {"size disagrees with offsets", "{" ENTRY("a", "F32", "[2]", 0, 4) "}", -1, 4},
        {"end before begin", "{" ENTRY("a", "U8", "[0]", 4, 0) "}", -1, 4},
        {"offsets past the data", "{" ENTRY("a", "U8", "[8]", 0, 8) "}", -1, 4},
        {"offset huge", "{" ENTRY("a", "U8", "[1]", 18446744073709551615, 18446744073709551616) "}", -1, 4},
        {"overlap", "{" ENTRY("a", "U8", "[4]", 0, 4) "," ENTRY("b", "U8", "[4]", 2, 6) "}", -1, 6},
        {"hole", "{" ENTRY("a", "U8", "[2]", 0, 2) "," ENTRY("b", "U8", "[2]", 3, 5) "}", -1, 5},
        {"first not at 0", "{" ENTRY("a", "U8", "[2]", 1, 3) "}", -1, 3},
        {"trailing bytes", "{" ENTRY("a", "U8", "[2]", 0, 2) "}", -1, 3},
        {"duplicate names", "{" ENTRY("a", "U8", "[1]", 0, 1) "," ENTRY("a", "U8", "[1]", 1, 2) "}", -1, 2},
        {"extra field", "{\"a\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1],\"x\":1}}", -1, 1},
        {"missing field", "{\"a\":{\"dtype\":\"U8\",\"shape\":[]}}", -1, 1},
        {"metadata not an object", "{\"__metadata__\":[]}", -1, 0},
        {"metadata value not a string", "{\"__metadata__\":{\"k\":1}}", -1, 0},
        {"NUL in a name", "{\"a\\u0000b\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1]}}", -1, 1},
    };
    char *dir = tmp_dir(), path[256];
    CHECK(dir);
    snprintf(path, sizeof path, "%s/bad.safetensors", dir);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_raw(path, cases[i].header, cases[i].len, cases[i].ndata);
        for (int use_mmap = 0; use_mmap < 2; use_mmap++) {
            em_clear_error();
            em_safetensors *st = em_safetensors_load(path, use_mmap);
            CHECK_MSG(!st && em_error_code() == EM_ERR_VALUE, "%s (mmap %d): got %p, code %d: %s", cases[i].what,
                      use_mmap, (void *)st, (int)em_error_code(), em_last_error());
        }
    }
    /* too short for the length; empty; a missing file */
    write_file(path, "\x02\0\0", 3);
    CHECK_ERR(em_safetensors_load(path, true), EM_ERR_VALUE);
    write_file(path, "", 0);
    CHECK_ERR(em_safetensors_load(path, true), EM_ERR_VALUE);
    CHECK_ERR(em_safetensors_load_buffer("", 0), EM_ERR_VALUE);
    unlink(path);
    CHECK_ERR(em_safetensors_load(path, false), EM_ERR_RUNTIME);
    CHECK_ERR(em_safetensors_load(dir, false), EM_ERR_RUNTIME);
    /* a valid minimal file and an empty one load */
    write_raw(path, "{}      ", -1, 0);
    em_safetensors *st = em_safetensors_load(path, true);
    CHECK(st && st->n == 0 && st->nmeta == 0);
    em_safetensors_free(st);
    rm_dir(dir);
}

TEST(safetensors_save_rejects_bad_names)
{
    char *dir = tmp_dir(), path[256];
    CHECK(dir);
    snprintf(path, sizeof path, "%s/n.safetensors", dir);
    em_tensor *a = em_zeros(SHAPE(2), EM_F32);
    const em_tensor *two[] = {a, a};
    CHECK_ERR(em_safetensors_save(path, 2, (const char *[]){"x", "x"}, two, 0, NULL, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_safetensors_save(path, 1, (const char *[]){"__metadata__"}, two, 0, NULL, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_safetensors_save(path, 1, (const char *[]){""}, two, 0, NULL, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_safetensors_save(path, 1, (const char *[]){"\xff"}, two, 0, NULL, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_safetensors_save(path, 1, (const char *[]){"a"}, two, 2, (const char *[]){"k", "k"},
                                  (const char *[]){"1", "2"}), EM_ERR_VALUE);
    CHECK_ERR(em_safetensors_save("/nonexistent_dir_ember/x", 1, (const char *[]){"a"}, two, 0, NULL, NULL),
              EM_ERR_RUNTIME);
    CHECK(count_files(dir) == 0);
    em_release(a);
    rm_dir(dir);
}

/* A write that fails midway (the file size limit: EFBIG) leaves the old file
 * as it was and no temporary file. */
TEST(safetensors_failed_save_keeps_the_old_file)
{
    char *dir = tmp_dir(), path[256];
    CHECK(dir);
    snprintf(path, sizeof path, "%s/ckpt.safetensors", dir);
    em_tensor *small = trand(EM_F32, SHAPE(10), -1, 1), *big = em_zeros(SHAPE(1 << 16), EM_F64);
    CHECK(em_safetensors_save(path, 1, (const char *[]){"w"}, (const em_tensor *[]){small}, 0, NULL, NULL) == EM_OK);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4096;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &lim);
    em_status st = em_safetensors_save(path, 1, (const char *[]){"w"}, (const em_tensor *[]){big}, 0, NULL, NULL);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, old_handler);
    CHECK(st == EM_ERR_RUNTIME && strstr(em_last_error(), "too large"));
    CHECK(count_files(dir) == 1);
    em_safetensors *back = em_safetensors_load(path, false);
    CHECK(back && back->n == 1 && same_bytes(small, back->tensors[0]));
    em_safetensors_free(back);
    /* and a save that succeeds replaces it */
    CHECK(em_safetensors_save(path, 1, (const char *[]){"w"}, (const em_tensor *[]){big}, 0, NULL, NULL) == EM_OK);
    back = em_safetensors_load(path, true);
    CHECK(back && back->n == 1 && same_bytes(big, back->tensors[0]) && count_files(dir) == 1);
    em_safetensors_free(back);
    RELEASE(small, big);
    rm_dir(dir);
}

/* A sink that fails after a few bytes: the error reaches the caller. */
static int failing_sink(void *ctx, const void *data, size_t n)
{
    size_t *left = ctx;
    if (n > *left) return em_fail(EM_ERR_RUNTIME, "sink full");
    *left -= n;
    return 0;
}

TEST(safetensors_write_reports_sink_errors)
{
    em_tensor *a = em_zeros(SHAPE(100), EM_F32);
    size_t room = 200;
    CHECK(em_safetensors_write(failing_sink, &room, 1, (const char *[]){"a"}, (const em_tensor *[]){a}, 0, NULL,
                               NULL) == EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "sink full"));
    em_release(a);
}
