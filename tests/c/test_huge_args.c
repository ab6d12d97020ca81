/* Huge sizes, strides and window arguments: a clean error, never a wrapped
 * size, an out-of-bounds view or a SIGFPE (Note [Window arithmetic]). */
#include "test.h"

#define BIG (INT64_C(1) << 62)

TEST(huge_sizes_are_refused_by_factories)
{
    CHECK_ERR(em_empty(2, (const int64_t[]){BIG, 4}, EM_F32), EM_ERR_MEMORY);
    CHECK_ERR(em_empty(2, (const int64_t[]){INT64_MAX, 2}, EM_U8), EM_ERR_MEMORY);
    CHECK_ERR(em_zeros(3, (const int64_t[]){INT64_C(1) << 31, INT64_C(1) << 31, INT64_C(1) << 31}, EM_F64),
              EM_ERR_MEMORY);
    CHECK_ERR(em_empty(1, (const int64_t[]){-1}, EM_F32), EM_ERR_SHAPE);
    CHECK_ERR(em_empty(-1, (const int64_t[]){1}, EM_F32), EM_ERR_SHAPE);
    CHECK_ERR(em_empty(EM_MAX_DIMS + 1, (const int64_t[EM_MAX_DIMS + 1]){0}, EM_F32), EM_ERR_SHAPE);
    CHECK_ERR(em_empty_strided(2, (const int64_t[]){2, 2}, (const int64_t[]){BIG, 1}, EM_F32), EM_ERR_MEMORY);
    CHECK_ERR(em_empty_strided(2, (const int64_t[]){3, 2}, (const int64_t[]){INT64_MAX, 1}, EM_U8), EM_ERR_MEMORY);
    static float buf[4];
    CHECK_ERR(em_from_blob(buf, 2, (const int64_t[]){2, 2}, (const int64_t[]){BIG, 1}, EM_F32, NULL, NULL),
              EM_ERR_MEMORY);
    /* no elements: any stride is fine and takes no memory */
    em_tensor *e = em_empty_strided(2, (const int64_t[]){0, 2}, (const int64_t[]){BIG, 1}, EM_F32);
    CHECK(e && em_numel(e) == 0 && em_storage_nbytes(e) == 0);
    em_release(e);
}

TEST(huge_sizes_are_refused_by_views)
{
    em_tensor *t = em_zeros(1, (const int64_t[]){4}, EM_F32), *one = em_zeros(1, (const int64_t[]){1}, EM_F32);
    CHECK(t && one);
    CHECK_ERR(em_view(t, 2, (const int64_t[]){BIG, BIG}), EM_ERR_SHAPE);
    CHECK_ERR(em_view(t, 2, (const int64_t[]){-1, BIG}), EM_ERR_SHAPE);
    CHECK_ERR(em_reshape(t, 2, (const int64_t[]){BIG, 4}), EM_ERR_SHAPE);
    CHECK_ERR(em_as_strided(t, 2, (const int64_t[]){BIG, 2}, (const int64_t[]){BIG, 1}, 0), EM_ERR_MEMORY);
    CHECK_ERR(em_as_strided(t, 1, (const int64_t[]){2}, (const int64_t[]){INT64_MAX}, 0), EM_ERR_MEMORY);
    CHECK_ERR(em_as_strided(t, 1, (const int64_t[]){1}, (const int64_t[]){1}, INT64_MAX), EM_ERR_MEMORY);
    CHECK_ERR(em_as_strided(t, 1, (const int64_t[]){2}, (const int64_t[]){3}, 1), EM_ERR_SHAPE); /* past the end */
    CHECK_ERR(em_as_strided(t, -1, (const int64_t[]){1}, (const int64_t[]){1}, 0), EM_ERR_SHAPE);
    CHECK_ERR(em_expand(one, 2, (const int64_t[]){BIG, BIG}), EM_ERR_MEMORY);
    CHECK_ERR(em_expand(one, 2, (const int64_t[]){BIG, 2}), EM_ERR_MEMORY);
    CHECK_ERR(em_expand(one, EM_MAX_DIMS + 1, (const int64_t[EM_MAX_DIMS + 1]){0}), EM_ERR_SHAPE);
    em_tensor *big = em_expand(one, 1, (const int64_t[]){BIG}); /* stride 0: no memory, a count that fits */
    CHECK(big && em_numel(big) == BIG && em_strides(big)[0] == 0);
    CHECK_ERR(em_resize_(t, 2, (const int64_t[]){BIG, 4}), EM_ERR_MEMORY);
    CHECK(em_numel(t) == 4); /* a failed resize_ leaves t as it was */
    RELEASE(t, one, big);
}

TEST(fold_with_huge_windows_fails_cleanly)
{
    em_tensor *cols = em_ones(2, (const int64_t[]){2, 3}, EM_F32), *cols4 = em_ones(2, (const int64_t[]){4, 3}, EM_F32);
    em_tensor *img = em_ones(4, (const int64_t[]){1, 1, 3, 3}, EM_F32);
    CHECK(cols && cols4 && img);
    const int64_t two[] = {2, 2}, big[] = {BIG, BIG}, max[] = {INT64_MAX, INT64_MAX}, one[] = {1, 1};
    /* F.fold(randn(2, 3), output_size=2, kernel_size=2**62): SIGFPE in PyTorch 1.13 */
    CHECK_ERR(em_col2im(cols, two, big, NULL, NULL, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_col2im(cols, two, (const int64_t[]){INT64_C(1) << 32, INT64_C(1) << 32}, NULL, NULL, NULL),
              EM_ERR_RUNTIME); /* the kernel's area overflows */
    CHECK_ERR(em_col2im(cols4, two, two, max, NULL, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_col2im(cols4, two, two, NULL, big, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_col2im(cols4, big, two, NULL, NULL, NULL), EM_ERR_RUNTIME); /* blocks: 2**62 squared */
    CHECK_ERR(em_col2im(cols4, two, two, big, NULL, NULL), EM_ERR_SHAPE);   /* no block fits */
    CHECK_ERR(em_im2col(img, big, NULL, NULL, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_im2col(img, two, max, NULL, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_im2col(img, two, one, big, NULL), EM_ERR_RUNTIME);
    /* a huge stride means one block (PyTorch's answer): beyond Ember's packed-size limit */
    CHECK_ERR(em_im2col(img, two, one, NULL, big), EM_ERR_RUNTIME);
    RELEASE(cols, cols4, img);
}

TEST(conv_and_pool_with_huge_windows_fail_cleanly)
{
    em_tensor *x = em_ones(4, (const int64_t[]){1, 1, 3, 3}, EM_F32), *w = em_ones(4, (const int64_t[]){1, 1, 2, 2}, EM_F32);
    CHECK(x && w);
    const int64_t big[] = {BIG, BIG}, max[] = {INT64_MAX, INT64_MAX}, one[] = {1, 1};
    CHECK_ERR(em_conv(x, w, NULL, 2, NULL, big, NULL, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_conv(x, w, NULL, 2, NULL, NULL, big, 1), EM_ERR_SHAPE); /* the kernel spans more than the input */
    CHECK_ERR(em_conv(x, w, NULL, 2, NULL, NULL, max, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_conv_same(x, w, NULL, 2, NULL, max, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_conv_transpose(x, w, NULL, 2, big, NULL, NULL, 1, one), EM_ERR_RUNTIME);
    em_pool_params p = {.nd = 2, .kernel = {BIG, BIG}}; /* pools take C ints, as PyTorch's */
    CHECK_ERR(em_max_pool(x, &p, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_avg_pool(x, &p), EM_ERR_RUNTIME);
    p = (em_pool_params){.nd = 2, .kernel = {2, 2}, .stride = {INT64_MAX, INT64_MAX}, .ceil_mode = true};
    CHECK_ERR(em_max_pool(x, &p, NULL), EM_ERR_RUNTIME);
    p = (em_pool_params){.nd = 2, .kernel = {2, 2}, .dilation = {INT32_MAX, INT32_MAX}};
    CHECK_ERR(em_max_pool(x, &p, NULL), EM_ERR_SHAPE); /* the window spans more than the input */
    p = (em_pool_params){.nd = 1, .kernel = {INT32_MAX}, .stride = {INT32_MAX}, .dilation = {INT32_MAX}};
    em_tensor *x1 = em_ones(3, (const int64_t[]){1, 1, 3}, EM_F32);
    CHECK_ERR(em_max_pool(x1, &p, NULL), EM_ERR_SHAPE); /* no overflow in int64 either */
    em_release(x1);
    CHECK_ERR(em_adaptive_avg_pool(x, 2, big), EM_ERR_MEMORY);
    CHECK_ERR(em_pad(x, 2, big, EM_PAD_CONSTANT, 0), EM_ERR_SHAPE);
    CHECK_ERR(em_pad(x, 4, (const int64_t[]){BIG, BIG, BIG, BIG}, EM_PAD_REPLICATE, 0), EM_ERR_SHAPE);
    RELEASE(x, w);
}

TEST(negative_and_absurd_counts_are_errors)
{
    em_tensor *t = em_ones(2, (const int64_t[]){2, 2}, EM_F32);
    CHECK(t);
    const int64_t sizes[EM_MAX_DIMS + 1] = {4};
    const int dims[EM_MAX_DIMS + 1] = {0};
    CHECK_ERR(em_view(t, -1, sizes), EM_ERR_SHAPE);
    CHECK_ERR(em_view(t, EM_MAX_DIMS + 1, sizes), EM_ERR_SHAPE);
    CHECK_ERR(em_reshape(t, EM_MAX_DIMS + 1, sizes), EM_ERR_SHAPE);
    CHECK_ERR(em_zeros(-3, sizes, EM_F32), EM_ERR_SHAPE);
    CHECK(em_sum(t, -1, dims, false, EM_DTYPE_NONE) == NULL && em_error_code() != EM_OK);
    CHECK(em_sum(t, EM_MAX_DIMS + 1, dims, false, EM_DTYPE_NONE) == NULL && em_error_code() != EM_OK);
    CHECK(em_flip(t, EM_MAX_DIMS + 1, dims) == NULL && em_error_code() != EM_OK);
    const em_tensor *list[] = {t};
    CHECK(em_cat(-1, list, 0) == NULL && em_error_code() != EM_OK);
    em_tensor *const outs[] = {t};
    CHECK_ERR(em_backward(-1, outs, NULL, false, false, 0, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_backward(1, outs, NULL, false, false, -1, NULL), EM_ERR_VALUE);
    em_release(t);
}

TEST(null_arguments_named_in_the_message)
{
    /* the list: each is a clean EM_ERR_VALUE naming the function and argument */
    em_tensor *t = em_ones(2, (const int64_t[]){2, 3}, EM_F32), *pieces[4];
    const int64_t sz[] = {3, 2};
    double d;
    CHECK(t);
#define NULL_ERR(expr, msg)                                                                      \
    do {                                                                                         \
        CHECK_ERR(expr, EM_ERR_VALUE);                                                           \
        CHECK_MSG(!strcmp(em_last_error(), msg), "%s: got \"%s\"", #expr, em_last_error());      \
    } while (0)
    NULL_ERR(em_ndim(NULL), "em_ndim: t is NULL");
    CHECK(em_ndim(NULL) == -1 && em_numel(NULL) == -1 && em_sizes(NULL) == NULL && em_strides(NULL) == NULL);
    CHECK(em_dtype_of(NULL) == EM_DTYPE_NONE && em_device_of(NULL).type < 0 && em_size(NULL, 0) == -1);
    NULL_ERR(em_numel(NULL), "em_numel: t is NULL");
    NULL_ERR(em_sizes(NULL), "em_sizes: t is NULL");
    NULL_ERR(em_empty(2, NULL, EM_F32), "em_empty: sizes is NULL");
    NULL_ERR(em_view(NULL, 2, sz), "em_view: t is NULL");
    NULL_ERR(em_view(t, 2, NULL), "em_view: sizes is NULL");
    NULL_ERR(em_permute(t, NULL), "em_permute: dims is NULL");
    NULL_ERR(em_as_strided(t, 2, sz, NULL, 0), "em_as_strided: strides is NULL");
    NULL_ERR(em_item(t, NULL), "em_item: out is NULL");
    NULL_ERR(em_get(t, NULL, &d), "em_get: index is NULL");
    NULL_ERR(em_split(t, 1, 0, pieces, NULL), "em_split: n is NULL");
    NULL_ERR(em_add(t, NULL, 1), "em_add: b is NULL");
    NULL_ERR(em_mul_(NULL, t), "em_mul_: self is NULL");
    NULL_ERR(em_neg_out(NULL, t), "em_neg_out: out is NULL");
    NULL_ERR(em_where(NULL, t, t), "em_where: a is NULL");
    em_tensor *const one[] = {NULL};
    NULL_ERR(em_backward(1, NULL, NULL, false, false, 0, NULL), "em_backward: tensors is NULL");
    NULL_ERR(em_backward(1, one, NULL, false, false, 0, NULL), "em_backward: tensors[0] is NULL");
#undef NULL_ERR
    em_tensor *s = em_empty(0, NULL, EM_F32); /* a 0-d shape needs no array */
    CHECK(s && em_ndim(s) == 0);
    RELEASE(t, s);
}
