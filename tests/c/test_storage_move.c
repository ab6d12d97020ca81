/* em_storage_move_ (src/core/storage_move.c): a storage's bytes move to
 * caller memory in place, every view follows, the deleter runs once. */
#include "test.h"

static int freed;
static void count_free(void *ctx)
{
    freed++;
    free(ctx);
}

TEST(storage_move_in_place)
{
    em_tensor *t = trand(EM_F32, SHAPE(4, 3), -1, 1);
    em_tensor *v = em_transpose(t, 0, 1);
    CHECK(t && v && em_storage_nbytes(t) == 48 && em_storage_context(t, count_free) == NULL);
    double before = tval(v, 5);
    void *mem = malloc(64);
    freed = 0;
    CHECK(em_storage_move_(t, mem, 64, count_free, mem) == EM_OK);
    bool ok = em_storage_data(v) == mem && em_data_ptr(t) == mem && tval(v, 5) == before &&
              em_storage_context(v, count_free) == mem;
    CHECK_ERR(em_storage_move_(t, NULL, 8, NULL, NULL), EM_ERR_VALUE); /* too small: nothing changes */
    ok = ok && em_storage_data(t) == mem;
    em_release(v);
    em_release(t);
    CHECK(ok && freed == 1);
}
