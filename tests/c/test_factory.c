/* Factory ops: arange, linspace, logspace, eye. Values against their
 * formulas and against outputs of torch 1.13 (CPU, AVX2 build) recorded
 * bit for bit; dtypes, out=, thread-count independence and errors. */
#include "test.h"

/* Compares t's float32 (or 16-bit) elements with recorded bit patterns. */
static bool bits_are(const em_tensor *t, const uint32_t *want, int64_t n)
{
    if (em_numel(t) != n || !em_is_contiguous(t)) return false;
    size_t size = em_dtype_size(em_dtype_of(t));
    for (int64_t i = 0; i < n; i++) {
        uint32_t got = 0;
        memcpy(&got, (const char *)em_data_ptr(t) + i * size, size);
        if (got != want[i]) {
            fprintf(stderr, "  element %lld: bits 0x%08x, want 0x%08x\n", (long long)i, got, want[i]);
            return false;
        }
    }
    return true;
}

TEST(linspace_matches_torch)
{
    /* torch.linspace(0, 1, 40) and (-3.3, 7.1, 37) in float32: torch computes
     * whole AVX2 vectors from their first element (Note [Vector-block
     * formulas]); the plain symmetric formula differs at 5 and 10 places */
    static const uint32_t a[40] = {
        0x00000000, 0x3cd20d21, 0x3d520d21, 0x3d9d89d9, 0x3dd20d21, 0x3e034835, 0x3e1d89d9, 0x3e37cb7d,
        0x3e520d21, 0x3e6c4ec5, 0x3e834835, 0x3e906907, 0x3e9d89d9, 0x3eaaaaab, 0x3eb7cb7d, 0x3ec4ec4f,
        0x3ed20d21, 0x3edf2df3, 0x3eec4ec5, 0x3ef96f97, 0x3f034835, 0x3f09d89e, 0x3f106907, 0x3f16f970,
        0x3f1d89d9, 0x3f241a42, 0x3f2aaaab, 0x3f313b14, 0x3f37cb7d, 0x3f3e5be6, 0x3f44ec4f, 0x3f4b7cb8,
        0x3f520d21, 0x3f589d8a, 0x3f5f2df3, 0x3f65be5c, 0x3f6c4ec5, 0x3f72df2e, 0x3f796f97, 0x3f800000};
    static const uint32_t b[37] = {
        0xc0533333, 0xc040b60b, 0xc02e38e4, 0xc01bbbbc, 0xc0093e94, 0xbfed82d8, 0xbfc88889, 0xbfa38e3a,
        0xbf7d27d4, 0xbf333335, 0xbed27d2c, 0xbdfa4fb8, 0x3e2aaaa0, 0x3ee93e90, 0x3f3e93e6, 0x3f844442,
        0x3fa93e92, 0x3fce38e2, 0x3ff33331, 0x400c16c0, 0x401e93e8, 0x40311110, 0x40438e38, 0x40560b5f,
        0x40688889, 0x407b05b1, 0x4086c16c, 0x40900000, 0x40993e94, 0x40a27d28, 0x40abbbbc, 0x40b4fa50,
        0x40be38e4, 0x40c77777, 0x40d0b60b, 0x40d9f49f, 0x40e33333};
    /* torch.linspace(-1, 1, 40, dtype=torch.float16) */
    static const uint32_t h[40] = {
        48128, 48023, 47918, 47813, 47708, 47603, 47498, 47393, 47288, 47183, 47052, 46842, 46632, 46422,
        46212, 45924, 45504, 45084, 44272, 42656, 9856,  11496, 12312, 12732, 13152, 13442, 13652, 13862,
        14072, 14282, 14414, 14519, 14625, 14730, 14835, 14940, 15045, 15150, 15255, 15360};
    em_tensor *ta = em_linspace(0, 1, 40, EM_DTYPE_NONE), *tb = em_linspace(-3.3, 7.1, 37, EM_F32);
    em_tensor *th = em_linspace(-1, 1, 40, EM_F16);
    CHECK(ta && em_dtype_of(ta) == EM_F32 && bits_are(ta, a, 40));
    CHECK(tb && bits_are(tb, b, 37));
    CHECK(th && bits_are(th, h, 40));
    /* float64 torch.linspace(0, 1, 40)[13, 23, 39] and an int8 one */
    em_tensor *td = em_linspace(0, 1, 40, EM_F64), *ti = em_linspace(-17.7, 15.8, 43, EM_I8);
    CHECK(td && tval(td, 13) == 0.33333333333333337 && tval(td, 23) == 0.5897435897435899 && tval(td, 39) == 1);
    static const double i8[43] = {-17, -16, -15, -14, -13, -13, -12, -11, -10, -10, -9, -8, -7, -7, -6,
                                  -5,  -4,  -4,  -3,  -2,  -1,  0,   0,   0,   1,   2,  2,  3,  4,  5,
                                  5,   6,   7,   8,   8,   9,   10,  11,  11,  12,  13, 14, 15};
    CHECK(ti && tclose(ti, i8, 0, 0));
    em_release(ta), em_release(tb), em_release(th), em_release(td), em_release(ti);
    COVER(EM_OP_linspace);
}

TEST(linspace_shapes_dtypes_errors)
{
    em_tensor *e = em_linspace(0, 1, 0, EM_F32), *one = em_linspace(3.7, 1, 1, EM_I64), *two = em_linspace(2, 5, 2, EM_F64);
    em_tensor *u = em_linspace(-1, 3, 5, EM_U8);
    CHECK(e && em_numel(e) == 0 && one && tval(one, 0) == 3 && two && tval(two, 0) == 2 && tval(two, 1) == 5);
    CHECK(u && tval(u, 0) == 255 && tval(u, 4) == 3); /* -1 wraps, as in torch */
    /* long: within an ulp of the exact values, the same on 1 and 2 threads */
    int saved = em_get_num_threads();
    em_set_num_threads(1);
    em_tensor *l1 = em_linspace(-2, 3, 100001, EM_F32);
    em_set_num_threads(2);
    em_tensor *l2 = em_linspace(-2, 3, 100001, EM_F32);
    em_set_num_threads(saved);
    CHECK(l1 && l2 && em_equal(l1, l2));
    for (int64_t i = 0; i < 100001; i += 997) CHECK(fabs(tval(l1, i) - (-2 + 5e-5 * i)) <= 4e-7);
    em_tensor *out = em_zeros(SHAPE(2, 2), EM_F64);
    CHECK(em_linspace_out(out, 0, 1, 3) == EM_OK && tshape_is(out, SHAPE(3)) && tval(out, 1) == 0.5);
    CHECK_ERR(em_linspace(0, 1, -1, EM_F32), EM_ERR_RUNTIME);
    CHECK_ERR(em_linspace(0, 1, 3, EM_BOOL), EM_ERR_DTYPE);
    CHECK_ERR(em_linspace(127.5, 3, 5, EM_I8), EM_ERR_RUNTIME);
    CHECK_ERR(em_linspace(0, 7e4, 5, EM_F16), EM_ERR_RUNTIME);
    CHECK_ERR(em_linspace(0, 1e39, 5, EM_F32), EM_ERR_RUNTIME);
    CHECK_ERR(em_linspace_out(NULL, 0, 1, 3), EM_ERR_VALUE);
    em_tensor *all[] = {e, one, two, u, l1, l2, out};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) em_release(all[i]);
}

TEST(arange_values_and_dtypes)
{
    /* torch.arange(-1, 1, 0.07) in float32 */
    static const uint32_t want[29] = {
        3212836864, 3211662459, 3210488054, 3209313649, 3208139244, 3206964838, 3205790433, 3204616028,
        3202434990, 3200086180, 3197737370, 3194717471, 3190019850, 3182973419, 3164854025, 1028443341,
        1039516303, 1044549468, 1048911544, 1051260355, 1053609165, 1055957975, 1057635697, 1058810102,
        1059984507, 1061158912, 1062333317, 1063507722, 1064682127};
    em_tensor *f = em_arange(-1, 1, 0.07, EM_DTYPE_NONE), *i = em_arange_int(0, 5, 2, EM_DTYPE_NONE);
    CHECK(f && em_dtype_of(f) == EM_F32 && bits_are(f, want, 29));
    CHECK(i && em_dtype_of(i) == EM_I64 && tshape_is(i, SHAPE(3)) && tval(i, 2) == 4);
    /* int64 sizes from the truncated bounds (exactly), other dtypes from the given ones */
    em_tensor *i32 = em_arange(0, 5.5, 1, EM_I32), *i64 = em_arange(0, 5.5, 1, EM_I64), *t0 = em_arange(0.5, 5, 1, EM_I64);
    CHECK(i32 && em_numel(i32) == 6 && i64 && em_numel(i64) == 5 && t0 && tval(t0, 0) == 0 && tval(t0, 4) == 4);
    em_tensor *huge = em_arange_int(0, (1LL << 60) + 1, 1LL << 59, EM_I64), *neg = em_arange_int(10, -10, -3, EM_I16);
    CHECK(huge && em_numel(huge) == 3 && tval(huge, 2) == 0x1p60);
    CHECK(neg && em_numel(neg) == 7 && tval(neg, 6) == -8);
    /* wrapping, half precision (float accumulate), empty */
    em_tensor *u8 = em_arange_int(0, 300, 1, EM_U8), *h = em_arange(0, 7e4, 1e4, EM_F16), *e = em_arange_int(-1, -1, 1, EM_F64);
    CHECK(u8 && tval(u8, 255) == 255 && tval(u8, 256) == 0 && tval(u8, 299) == 43);
    CHECK(h && em_numel(h) == 7 && tval(h, 5) == 49984 && e && em_numel(e) == 0);
    /* long: the formula, the same on 1 and 2 threads */
    int saved = em_get_num_threads();
    em_set_num_threads(1);
    em_tensor *l1 = em_arange(0, 10, 1e-4, EM_F64);
    em_set_num_threads(2);
    em_tensor *l2 = em_arange(0, 10, 1e-4, EM_F64);
    em_set_num_threads(saved);
    CHECK(l1 && l2 && em_numel(l1) == 100000 && em_equal(l1, l2));
    for (int64_t k = 0; k < 100000; k += 991) CHECK(fabs(tval(l1, k) - 1e-4 * k) <= 1e-15 * (1e-4 * k));
    em_tensor *out = em_zeros(SHAPE(2, 2), EM_I32), *big = em_zeros(SHAPE(5, 2), EM_F32), *col = em_select(big, 1, 1);
    CHECK(em_arange_out(out, 0, 5, 1) == EM_OK && tshape_is(out, SHAPE(5)) && tval(out, 4) == 4);
    CHECK(em_arange_int_out(col, 1, 6, 1) == EM_OK && tval(big, 1) == 1 && tval(big, 9) == 5 && tval(big, 8) == 0);
    em_tensor *all[] = {f, i, i32, i64, t0, huge, neg, u8, h, e, l1, l2, out, big, col};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    COVER(EM_OP_arange);
}

TEST(arange_errors)
{
    CHECK_ERR(em_arange(0, 5, 0, EM_F32), EM_ERR_RUNTIME);
    CHECK_ERR(em_arange(0, 5, 0.5, EM_I64), EM_ERR_RUNTIME); /* the step truncates to 0 */
    CHECK_ERR(em_arange_int(0, 5, -1, EM_DTYPE_NONE), EM_ERR_RUNTIME);
    CHECK_ERR(em_arange_int(5, 0, 1, EM_DTYPE_NONE), EM_ERR_RUNTIME);
    CHECK_ERR(em_arange(0, INFINITY, 1, EM_F32), EM_ERR_RUNTIME);
    CHECK_ERR(em_arange(0, NAN, 1, EM_F32), EM_ERR_RUNTIME);
    CHECK_ERR(em_arange(0, 1e19, 1e18, EM_I64), EM_ERR_RUNTIME);
    CHECK_ERR(em_arange(0, 1e300, 1e-300, EM_F64), EM_ERR_RUNTIME);
    CHECK_ERR(em_arange_int(0, 5, 1, EM_BOOL), EM_ERR_DTYPE);
    CHECK_ERR(em_arange_int(0, 1LL << 62, 1, EM_F64), EM_ERR_MEMORY);
    CHECK_ERR(em_arange_out(NULL, 0, 1, 1), EM_ERR_VALUE);
}

TEST(logspace_values)
{
    /* torch.logspace(-1, 2, 10, base=3) in float32 */
    static const uint32_t want[10] = {1051372203, 1056318680, 1060208672, 1065353216, 1069063074,
                                      1074077720, 1077936128, 1082815674, 1086828580, 1091567616};
    em_tensor *f = em_logspace(-1, 2, 10, 3, EM_DTYPE_NONE);
    CHECK(f && em_dtype_of(f) == EM_F32 && bits_are(f, want, 10));
    em_tensor *i = em_logspace(0, 200, 3, 1.1, EM_I64), *u = em_logspace(0, 3, 4, 10, EM_U8);
    CHECK(i && tval(i, 1) == 13780 && tval(i, 2) == 189905276);
    CHECK(u && tval(u, 2) == 100 && tval(u, 3) == 232); /* 1000 wraps, as in torch */
    em_tensor *d = em_logspace(0, 1, 3, -2, EM_F64), *s = em_logspace(0.5, 2, 1, 10, EM_I64), *h = em_logspace(0, 1, 1, 2, EM_F16);
    CHECK(d && tval(d, 0) == 1 && isnan(tval(d, 1)) && tval(d, 2) == -2);
    CHECK(s && tval(s, 0) == 3 && h && tval(h, 0) == 1); /* a single step is base ** start as given */
    em_tensor *out = em_empty(SHAPE(1), EM_F64);
    CHECK(em_logspace_out(out, 0, 2, 3, 10) == EM_OK && tshape_is(out, SHAPE(3)) && tval(out, 2) == 100);
    CHECK_ERR(em_logspace(0, 1, 3, 10, EM_F16), EM_ERR_DTYPE);
    CHECK_ERR(em_logspace(0, 1, 3, 10, EM_BOOL), EM_ERR_DTYPE);
    CHECK_ERR(em_logspace(0, 1, -2, 10, EM_F32), EM_ERR_RUNTIME);
    em_tensor *all[] = {f, i, u, d, s, h, out};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    COVER(EM_OP_logspace);
}

TEST(eye_shapes_and_dtypes)
{
    int64_t shapes[][2] = {{3, 3}, {2, 5}, {5, 2}, {0, 0}, {0, 3}};
    for (int dt = 0; dt < TEST_REAL_DTYPES; dt++)
        for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
            int64_t n = shapes[k][0], m = shapes[k][1];
            em_tensor *e = em_eye(n, m, (em_dtype)dt);
            CHECK(e && em_dtype_of(e) == dt && tshape_is(e, SHAPE(n, m)));
            for (int64_t i = 0; i < n * m; i++) CHECK(tval(e, i) == (i / m == i % m));
            em_release(e);
        }
    em_tensor *d = em_eye(2, 2, EM_DTYPE_NONE), *out = em_ones(SHAPE(4, 3), EM_I64), *tr = em_t(out);
    CHECK(d && em_dtype_of(d) == EM_F32);
    CHECK(em_eye_out(tr, 3, 4) == EM_OK && tval(out, 0) == 1 && tval(out, 3) == 0 && tval(out, 4) == 1 && tval(out, 1) == 0);
    CHECK(em_eye_out(out, 2, 2) == EM_OK && tshape_is(out, SHAPE(2, 2)) && tval(out, 3) == 1);
    CHECK_ERR(em_eye(-1, 3, EM_F32), EM_ERR_RUNTIME);
    CHECK_ERR(em_eye(3, -1, EM_F32), EM_ERR_RUNTIME);
    CHECK_ERR(em_eye_out(NULL, 1, 1), EM_ERR_VALUE);
    em_release(d), em_release(out), em_release(tr);
    COVER(EM_OP_eye);
}
