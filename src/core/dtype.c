/* Dtype traits, PyTorch's type promotion, and scalar conversions
 * (float16 and bfloat16 are stored as uint16_t bits and computed in float). */
#include "internal.h"
#include <complex.h>
#include <math.h>

const em_dtype_traits em_dtypes[EM_DTYPE_COUNT] = {
#define EM_DTYPE(E, nm, sname, ctype, k) [EM_##E] = {.name = #nm, .scalar_name = sname, .size = sizeof(ctype), .kind = k},
#include "ember/dtypes.def"
#undef EM_DTYPE
};

const char *em_dtype_name(em_dtype dt) { return em_dtype_valid(dt) ? em_dtypes[dt].name : "invalid"; }
const char *em_dtype_scalar_name(em_dtype dt) { return em_dtype_valid(dt) ? em_dtypes[dt].scalar_name : "invalid"; }
size_t em_dtype_size(em_dtype dt) { return em_dtype_valid(dt) ? em_dtypes[dt].size : 0; }
bool em_dtype_is_float(em_dtype dt) { return em_dtype_valid(dt) && em_dtypes[dt].kind == 'f'; }
bool em_dtype_is_int(em_dtype dt)
{
    return em_dtype_valid(dt) && (em_dtypes[dt].kind == 'i' || em_dtypes[dt].kind == 'u');
}
bool em_dtype_is_signed(em_dtype dt)
{
    return em_dtype_valid(dt) && (em_dtypes[dt].kind == 'i' || em_dtypes[dt].kind == 'f' || em_dtypes[dt].kind == 'c');
}
bool em_dtype_is_complex(em_dtype dt) { return em_dtype_valid(dt) && em_dtypes[dt].kind == 'c'; }

em_dtype em_dtype_to_complex(em_dtype dt)
{
    switch (dt) {
    case EM_F16: return EM_C32;
    case EM_F64: return EM_C128;
    case EM_C32: case EM_C64: case EM_C128: return dt;
    default: return EM_C64;
    }
}
em_dtype em_dtype_to_real(em_dtype dt)
{
    switch (dt) {
    case EM_C32: return EM_F16;
    case EM_C64: return EM_F32;
    case EM_C128: return EM_F64;
    default: return dt;
    }
}
em_dtype em_get_default_complex_dtype(void) { return em_dtype_to_complex(em_get_default_dtype()); }


/* PyTorch's promoteTypes, in dtypes.def order. */
#define u1 EM_U8
#define i1 EM_I8
#define i2 EM_I16
#define i4 EM_I32
#define i8 EM_I64
#define f2 EM_F16
#define f4 EM_F32
#define f8 EM_F64
#define b1 EM_BOOL
#define bf EM_BF16
#define c2 EM_C32
#define c4 EM_C64
#define c8 EM_C128
static const int8_t promote[EM_DTYPE_COUNT][EM_DTYPE_COUNT] = {
    /*        u1  i1  i2  i4  i8  f2  f4  f8  b1  bf  c2  c4  c8 */
    /* u1 */ {u1, i2, i2, i4, i8, f2, f4, f8, u1, bf, c2, c4, c8},
    /* i1 */ {i2, i1, i2, i4, i8, f2, f4, f8, i1, bf, c2, c4, c8},
    /* i2 */ {i2, i2, i2, i4, i8, f2, f4, f8, i2, bf, c2, c4, c8},
    /* i4 */ {i4, i4, i4, i4, i8, f2, f4, f8, i4, bf, c2, c4, c8},
    /* i8 */ {i8, i8, i8, i8, i8, f2, f4, f8, i8, bf, c2, c4, c8},
    /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f8, f2, f4, c2, c4, c8},
    /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f8, f4, f4, c4, c4, c8},
    /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c8, c8, c8},
    /* b1 */ {u1, i1, i2, i4, i8, f2, f4, f8, b1, bf, c2, c4, c8},
    /* bf */ {bf, bf, bf, bf, bf, f4, f4, f8, bf, bf, c4, c4, c8},
    /* c2 */ {c2, c2, c2, c2, c2, c2, c4, c8, c2, c4, c2, c4, c8},
    /* c4 */ {c4, c4, c4, c4, c4, c4, c4, c8, c4, c4, c4, c4, c8},
    /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8},
};
#undef u1
#undef i1
#undef i2
#undef i4
#undef i8
#undef f2
#undef f4
#undef f8
#undef b1
#undef bf
#undef c2
#undef c4
#undef c8

em_dtype em_promote_types(em_dtype a, em_dtype b)
{
    if (a == EM_DTYPE_NONE) return b;
    if (b == EM_DTYPE_NONE) return a;
    return (em_dtype)promote[a][b];
}

static em_dtype default_dtype = EM_F32;
em_dtype em_get_default_dtype(void) { return default_dtype; }
int em_set_default_dtype(em_dtype dt)
{
    if (dt != EM_F32 && dt != EM_F64)
        return em_fail(EM_ERR_TYPE, "only floating-point types are supported as the default type");
    default_dtype = dt;
    return EM_OK;
}

/* PyTorch's combine_categories: `lower` (a weaker tier) only counts when it is
 * of a higher category (bool < integral < floating < complex) than `higher`;
 * a complex `lower` over a floating `higher` keeps higher's precision. */
static em_dtype combine_categories(em_dtype higher, em_dtype lower)
{
    if (higher == EM_DTYPE_NONE) return lower;
    if (lower == EM_DTYPE_NONE || em_dtype_is_complex(higher)) return higher;
    if (em_dtype_is_complex(lower)) return em_dtype_is_float(higher) ? em_promote_types(higher, EM_C32) : lower;
    if (em_dtype_is_float(higher)) return higher;
    if (higher == EM_BOOL || em_dtype_is_float(lower)) return em_promote_types(higher, lower);
    return higher;
}

em_dtype em_result_type(int n, const em_tensor *const *ts)
{
    em_dtype dim = EM_DTYPE_NONE, zero = EM_DTYPE_NONE, wrapped = EM_DTYPE_NONE;
    for (int i = 0; i < n; i++) {
        const em_tensor *t = ts[i];
        if (!t) continue;
        em_dtype d = (em_dtype)t->dtype;
        if (t->flags & EM_FLAG_WRAPPED_NUMBER) {
            if (em_dtype_is_float(d)) d = default_dtype; /* a Python float is "default float" */
            else if (em_dtype_is_complex(d)) d = em_get_default_complex_dtype();
            wrapped = em_promote_types(wrapped, d);
        } else if (t->ndim == 0) {
            zero = em_promote_types(zero, d);
        } else {
            dim = em_promote_types(dim, d);
        }
    }
    return combine_categories(dim, combine_categories(zero, wrapped));
}

/* ---- half-precision conversions (round to nearest even) --------------- */
float em_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, u;
    if (exp == 0x1f) {
        u = sign | 0x7f800000 | (man << 13); /* inf / nan */
    } else if (exp == 0) {
        if (man == 0) {
            u = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400));
            u = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else {
        u = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t em_f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (u >> 16) & 0x8000;
    uint32_t abs = u & 0x7fffffff;
    if (abs > 0x7f800000) return sign | 0x7e00;         /* nan */
    if (abs >= 0x477ff000) return sign | 0x7c00;        /* rounds to inf */
    if (abs < 0x38800000) {                              /* subnormal or zero in half */
        if (abs < 0x33000000) return sign;               /* below half of the smallest subnormal */
        uint32_t man = (abs & 0x7fffff) | 0x800000;
        int shift = 126 - (int)(abs >> 23);              /* 14..24 */
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return sign | (uint16_t)half;
    }
    uint32_t r = abs + 0xfff + ((abs >> 13) & 1);        /* round the 13 dropped bits */
    return sign | (uint16_t)((r - 0x38000000) >> 13);
}

uint16_t em_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40); /* quiet nan */
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

double em_load_f64(const void *p, em_dtype dt)
{
    switch (dt) {
    case EM_U8: return *(const uint8_t *)p;
    case EM_I8: return *(const int8_t *)p;
    case EM_I16: return *(const int16_t *)p;
    case EM_I32: return *(const int32_t *)p;
    case EM_I64: return (double)*(const int64_t *)p;
    case EM_F16: return em_f16_to_f32(*(const uint16_t *)p);
    case EM_F32: return *(const float *)p;
    case EM_F64: return *(const double *)p;
    case EM_BOOL: return *(const bool *)p;
    case EM_BF16: return em_bf16_to_f32(*(const uint16_t *)p);
    case EM_C32: case EM_C64: case EM_C128: return creal(em_load_c128(p, dt)); /* the real part */
    default: return NAN;
    }
}

double _Complex em_load_c128(const void *p, em_dtype dt)
{
    switch (dt) {
    case EM_C32: {
        const uint16_t *h = p;
        return CMPLX(em_f16_to_f32(h[0]), em_f16_to_f32(h[1]));
    }
    case EM_C64: return *(const float _Complex *)p;
    case EM_C128: return *(const double _Complex *)p;
    default: return em_load_f64(p, dt);
    }
}

void em_store_c128(void *p, em_dtype dt, double _Complex v)
{
    switch (dt) {
    case EM_C32: {
        uint16_t *h = p;
        h[0] = em_f32_to_f16((float)creal(v)), h[1] = em_f32_to_f16((float)cimag(v));
        break;
    }
    case EM_C64: *(float _Complex *)p = CMPLXF((float)creal(v), (float)cimag(v)); break;
    case EM_C128: *(double _Complex *)p = v; break;
    default: em_store_f64(p, dt, creal(v)); break;
    }
}

/* Float -> int conversion of an out-of-range value is undefined in C; clamp
 * to the int64 range first (the wrap to narrower ints then matches PyTorch
 * for in-range values). */
static int64_t f64_to_i64(double v)
{
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

void em_store_f64(void *p, em_dtype dt, double v)
{
    switch (dt) {
    case EM_U8: *(uint8_t *)p = (uint8_t)f64_to_i64(v); break;
    case EM_I8: *(int8_t *)p = (int8_t)f64_to_i64(v); break;
    case EM_I16: *(int16_t *)p = (int16_t)f64_to_i64(v); break;
    case EM_I32: *(int32_t *)p = (int32_t)f64_to_i64(v); break;
    case EM_I64: *(int64_t *)p = f64_to_i64(v); break;
    case EM_F16: *(uint16_t *)p = em_f32_to_f16((float)v); break;
    case EM_F32: *(float *)p = (float)v; break;
    case EM_F64: *(double *)p = v; break;
    case EM_BOOL: *(bool *)p = v != 0; break;
    case EM_BF16: *(uint16_t *)p = em_f32_to_bf16((float)v); break;
    case EM_C32: case EM_C64: case EM_C128: em_store_c128(p, dt, CMPLX(v, 0.0)); break;
    default: break;
    }
}
