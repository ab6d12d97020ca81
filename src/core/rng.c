/* Random generators: a Philox key (the seed) and a counter offset behind a
 * mutex, the default generator, and state save/restore (Note [Philox streams]). */
#include "rng.h"
#include <pthread.h>
#include <stdlib.h>

struct em_generator {
    pthread_mutex_t lock;
    uint64_t seed;   /* the Philox key */
    uint64_t offset; /* the next unused counter */
};

static em_generator default_generator = {PTHREAD_MUTEX_INITIALIZER, EM_DEFAULT_SEED, 0};

static em_generator *resolve(const em_generator *g) { return g ? (em_generator *)g : &default_generator; }

em_generator *em_default_generator(void) { return &default_generator; }

em_generator *em_generator_new(uint64_t seed)
{
    em_generator *g = malloc(sizeof *g);
    if (!g) return em_error(EM_ERR_MEMORY, "generator: out of memory");
    pthread_mutex_init(&g->lock, NULL);
    g->seed = seed;
    g->offset = 0;
    return g;
}

void em_generator_free(em_generator *g)
{
    if (!g || g == &default_generator) return;
    pthread_mutex_destroy(&g->lock);
    free(g);
}

/* Reads g's seed and offset consistently. */
static void snapshot(const em_generator *g, uint64_t *seed, uint64_t *offset)
{
    em_generator *r = resolve(g);
    pthread_mutex_lock(&r->lock);
    *seed = r->seed;
    *offset = r->offset;
    pthread_mutex_unlock(&r->lock);
}

em_generator *em_generator_clone(const em_generator *g)
{
    uint64_t seed, offset;
    snapshot(g, &seed, &offset);
    em_generator *c = em_generator_new(seed);
    if (c) c->offset = offset;
    return c;
}

static void set_seed_offset(em_generator *g, uint64_t seed, uint64_t offset)
{
    em_generator *r = resolve(g);
    pthread_mutex_lock(&r->lock);
    r->seed = seed;
    r->offset = offset;
    pthread_mutex_unlock(&r->lock);
}

void em_generator_manual_seed(em_generator *g, uint64_t seed) { set_seed_offset(g, seed, 0); }
void em_manual_seed(uint64_t seed) { set_seed_offset(NULL, seed, 0); }

uint64_t em_generator_initial_seed(const em_generator *g)
{
    uint64_t seed, offset;
    snapshot(g, &seed, &offset);
    return seed;
}

/* The state: an 8-byte tag naming the format, then seed and offset as
 * little-endian 64-bit integers. */
static const char state_tag[8] = {'E', 'M', 'P', 'H', 'I', 'L', 'X', '1'};

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

void em_generator_get_state(const em_generator *g, void *state)
{
    if (EM_NULL(state)) return;
    uint64_t seed, offset;
    snapshot(g, &seed, &offset);
    uint8_t *p = state;
    memcpy(p, state_tag, 8);
    put_u64(p + 8, seed);
    put_u64(p + 16, offset);
}

em_status em_generator_set_state(em_generator *g, const void *state, size_t size)
{
    if (EM_NULL(state)) return em_error_code();
    if (size != EM_GENERATOR_STATE_SIZE)
        return em_fail(EM_ERR_RUNTIME, "set_state: RNG state is wrong size (expected %d bytes, got %zu)",
                       EM_GENERATOR_STATE_SIZE, size);
    const uint8_t *p = state;
    if (memcmp(p, state_tag, 8))
        return em_fail(EM_ERR_RUNTIME, "set_state: the bytes are not an Ember Philox generator state");
    set_seed_offset(g, get_u64(p + 8), get_u64(p + 16));
    return EM_OK;
}

em_generator *em_rng_begin(em_generator *g, uint64_t *key, uint64_t *offset)
{
    em_generator *r = resolve(g);
    pthread_mutex_lock(&r->lock);
    *key = r->seed;
    *offset = r->offset;
    return r;
}

void em_rng_end(em_generator *g, uint64_t counters)
{
    g->offset += counters;
    pthread_mutex_unlock(&g->lock);
}
