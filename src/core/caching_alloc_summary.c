/* The caching allocator's statistics as text: the names of the statistics
 * (memory_stats keys), sizes in bytes, KiB, MiB or GiB, and the
 * memory_summary table. Pure functions of an em_cache_stats. */
#include "caching_alloc.h"
#include <stdarg.h>
#include <stdio.h>

const char *const em_cache_stat_keys[EM_CACHE_STAT_COUNT] = {
#define EM_X(e, key, title, bytes) #key,
    EM_CACHE_STAT_LIST(EM_X)
#undef EM_X
};
static const char *const stat_titles[EM_CACHE_STAT_COUNT] = {
#define EM_X(e, key, title, bytes) title,
    EM_CACHE_STAT_LIST(EM_X)
#undef EM_X
};
static const bool stat_bytes[EM_CACHE_STAT_COUNT] = {
#define EM_X(e, key, title, bytes) bytes,
    EM_CACHE_STAT_LIST(EM_X)
#undef EM_X
};
const char *const em_cache_pool_keys[EM_CACHE_POOL_COUNT] = {"all", "small_pool", "large_pool"};

const char *em_cache_format_size(int64_t n, char *buf)
{
    if (n < 0) n = 0;
    if (n < 1024) snprintf(buf, 32, "%lld bytes", (long long)n);
    else if (n < (int64_t)1 << 20) snprintf(buf, 32, "%.2f KiB", (double)n / 1024);
    else if (n < (int64_t)1 << 30) snprintf(buf, 32, "%.2f MiB", (double)n / (1 << 20));
    else snprintf(buf, 32, "%.2f GiB", (double)n / (1 << 30));
    return buf;
}

double em_cache_fragmentation(const em_cache_stats *s)
{
    return s->cached_free_bytes ? 100.0 * (1.0 - (double)s->largest_free_block / (double)s->cached_free_bytes) : 0;
}

/* ---- memory_summary ----------------------------------------------------------- */
typedef struct text {
    char *buf;
    size_t n, len;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool room = t->len < t->n;
    int k = vsnprintf(room ? t->buf + t->len : NULL, room ? t->n - t->len : 0, fmt, ap);
    va_end(ap);
    if (k > 0) t->len += (size_t)k;
}

static const char *cell(int64_t v, bool bytes, char *buf)
{
    if (bytes) return em_cache_format_size(v, buf);
    snprintf(buf, 32, "%lld", (long long)v);
    return buf;
}

#define RULE "|===============================================================================|\n"
#define LINE "|-------------------------------------------------------------------------------|\n"
#define ROW "| %21s | %11s | %11s | %11s | %11s |\n"

size_t em_cache_summary_text(const em_cache_stats *s, const char *name, int device, char *buf, size_t n)
{
    text t = {buf, n, 0};
    if (n) buf[0] = 0;
    char c[4][32], line[128];
    put(&t, RULE "| %-77s |\n" LINE, "Ember caching allocator memory summary");
    snprintf(line, sizeof line, "%s device %d   OOMs: %lld   alloc retries: %lld   syncs of all streams: %lld",
             name ? name : "Device", device, (long long)s->num_ooms, (long long)s->num_alloc_retries,
             (long long)s->num_sync_all_streams);
    put(&t, "| %-77s |\n" RULE ROW LINE, line, "Metric", "Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed");
    static const char *const from[EM_CACHE_POOL_COUNT] = {NULL, "from small pool", "from large pool"};
    for (int k = 0; k < EM_CACHE_STAT_COUNT; k++) {
        for (int p = 0; p < EM_CACHE_POOL_COUNT; p++) {
            const em_cache_stat *v = &s->stat[k][p];
            put(&t, ROW, p ? from[p] : stat_titles[k], cell(v->current, stat_bytes[k], c[0]),
                cell(v->peak, stat_bytes[k], c[1]), cell(v->allocated, stat_bytes[k], c[2]),
                cell(v->freed, stat_bytes[k], c[3]));
        }
        put(&t, LINE);
    }
    snprintf(line, sizeof line, "Raw allocs: %lld   raw frees: %lld   cached free memory: %s",
             (long long)s->num_device_alloc, (long long)s->num_device_free, cell(s->cached_free_bytes, true, c[0]));
    put(&t, "| %-77s |\n", line);
    snprintf(line, sizeof line, "Largest free block: %s   fragmentation: %.1f%%", cell(s->largest_free_block, true, c[0]),
             em_cache_fragmentation(s));
    put(&t, "| %-77s |\n", line);
    snprintf(line, sizeof line, "Max split size: %s", s->max_split_size < 0 ? "none" : cell(s->max_split_size, true, c[0]));
    put(&t, "| %-77s |\n" RULE, line);
    return t.len;
}
