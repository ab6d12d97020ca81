/* The CPU allocator: 64-byte aligned blocks, with a bounded cache of large
 * freed blocks (Note [CPU block cache]).
 *
 * Note [CPU block cache]
 * A large block straight from malloc is fresh mmap'ed memory: the first
 * write to each page faults, which costs as much as the op itself on these
 * machines (out-of-place add of 1.6e7 floats: 31 ms fresh vs 15 ms reused).
 * glibc mmaps from 128 KiB up (its threshold moves with the frees it sees,
 * so whether a 400 KiB activation faults depended on the heap's history:
 * relu's backward on LeNet's conv2 output ran 55 or 256 us). So blocks of
 * at least CACHE_MIN bytes are rounded to a size class (four
 * per power of two: at most 25% slack) and, when freed, kept for reuse up to
 * a cap on the total (EMBER_CPU_CACHE_MB, default 512; 0 disables).
 * em_empty_cache() gives them all back. Small blocks go to malloc as they are. */
#include "internal.h"
#include <pthread.h>
#include <stdlib.h>

#define EM_ALIGN 64
#define CACHE_LOG2 16
#define CACHE_MIN ((size_t)1 << CACHE_LOG2)
#define NCLASSES 256

typedef struct cached_block {
    struct cached_block *next;
} cached_block;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cached_block *free_lists[NCLASSES];
static size_t cached_bytes;
static size_t cache_cap = (size_t)-1; /* read from the environment on first use */

/* Size class of a large block and its rounded size. */
static int size_class(size_t n, size_t *rounded)
{
    int k = 63 - __builtin_clzll(n); /* 2^k <= n */
    size_t quarter = ((size_t)1 << k) / 4;
    size_t steps = (n - ((size_t)1 << k) + quarter - 1) / quarter; /* 0..4 */
    *rounded = ((size_t)1 << k) + steps * quarter;
    return (k - CACHE_LOG2) * 5 + (int)steps;
}

static size_t cap(void)
{
    if (cache_cap == (size_t)-1) {
        const char *s = getenv("EMBER_CPU_CACHE_MB");
        cache_cap = (s ? (size_t)atol(s) : 512) << 20;
    }
    return cache_cap;
}

void *em_cpu_alloc(size_t nbytes)
{
    size_t rounded = (nbytes + EM_ALIGN - 1) & ~(size_t)(EM_ALIGN - 1);
    if (rounded < nbytes) return NULL;
    if (rounded < CACHE_MIN) return aligned_alloc(EM_ALIGN, rounded ? rounded : EM_ALIGN);
    int c = size_class(rounded, &rounded);
    if (c < NCLASSES) {
        pthread_mutex_lock(&cache_lock);
        cached_block *b = free_lists[c];
        if (b) {
            free_lists[c] = b->next;
            cached_bytes -= rounded;
        }
        pthread_mutex_unlock(&cache_lock);
        if (b) return b;
    }
    return aligned_alloc(EM_ALIGN, rounded);
}

void em_cpu_free(void *p, size_t nbytes)
{
    size_t rounded = (nbytes + EM_ALIGN - 1) & ~(size_t)(EM_ALIGN - 1);
    if (!p) return;
    if (rounded >= CACHE_MIN) {
        int c = size_class(rounded, &rounded);
        pthread_mutex_lock(&cache_lock);
        bool keep = c < NCLASSES && cached_bytes + rounded <= cap();
        if (keep) {
            cached_block *b = p;
            b->next = free_lists[c];
            free_lists[c] = b;
            cached_bytes += rounded;
        }
        pthread_mutex_unlock(&cache_lock);
        if (keep) return;
    }
    free(p);
}

void em_empty_cache(void)
{
    pthread_mutex_lock(&cache_lock);
    for (int c = 0; c < NCLASSES; c++) {
        while (free_lists[c]) {
            cached_block *b = free_lists[c];
            free_lists[c] = b->next;
            free(b);
        }
    }
    cached_bytes = 0;
    pthread_mutex_unlock(&cache_lock);
}

size_t em_cpu_cached_bytes(void)
{
    pthread_mutex_lock(&cache_lock);
    size_t n = cached_bytes;
    pthread_mutex_unlock(&cache_lock);
    return n;
}
