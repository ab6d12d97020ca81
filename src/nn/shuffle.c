/* pixel_shuffle, pixel_unshuffle and channel_shuffle as view/permute/reshape ops (recorded:
 * their gradients come from the parts). */
#include "pool_common.h"

/* (*, C*r*r, H, W) <-> (*, C, H*r, W*r): up = shuffle, else unshuffle. */
static em_tensor *pixel_shuffle_impl(const em_tensor *x, int64_t r, bool up)
{
    const char *name = up ? "pixel_shuffle" : "pixel_unshuffle";
    if (!x) return em_error(EM_ERR_VALUE, "%s: input is NULL", name);
    if (x->ndim < 3)
        return em_error(EM_ERR_SHAPE, "%s expects input to have at least 3 dimensions, but got input with %d "
                        "dimension(s)", name, x->ndim);
    if (r <= 0)
        return em_error(EM_ERR_SHAPE, "%s expects a positive %s, but got %lld", name,
                        up ? "upscale_factor" : "downscale_factor", (long long)r);
    int b = x->ndim - 3;
    if (b + 6 > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "%s: too many dims", name);
    int64_t C = x->sizes[b], H = x->sizes[b + 1], W = x->sizes[b + 2];
    if (up && (C ? r > C / r || C % (r * r) : r > INT32_MAX)) /* r * r must not overflow */
        return em_error(EM_ERR_SHAPE, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                        "square of upscale_factor, but input.size(-3)=%lld is not divisible by %lld^2",
                        (long long)C, (long long)r);
    if (!up && (H % r || W % r))
        return em_error(EM_ERR_SHAPE, "pixel_unshuffle expects %s dimension to be divisible by downscale_factor, but "
                        "input.size(%d)=%lld is not divisible by %lld", H % r ? "height" : "width", H % r ? -2 : -1,
                        (long long)(H % r ? H : W), (long long)r);
    int64_t split[EM_MAX_DIMS], final[EM_MAX_DIMS];
    int perm[EM_MAX_DIMS];
    memcpy(split, x->sizes, b * sizeof *split);
    memcpy(final, x->sizes, b * sizeof *final);
    for (int k = 0; k < b; k++) perm[k] = k;
    int64_t oc = up ? C / (r * r) : C;
    if (up) { /* (C, r, r, H, W) -> (C, H, r, W, r) */
        int64_t s[5] = {oc, r, r, H, W};
        int p[6] = {0, 3, 1, 4, 2};
        memcpy(split + b, s, sizeof s);
        for (int k = 0; k < 5; k++) perm[b + k] = b + p[k];
        final[b] = oc, final[b + 1] = H * r, final[b + 2] = W * r;
    } else { /* (C, H/r, r, W/r, r) -> (C, r, r, H/r, W/r) */
        int64_t s[5] = {C, H / r, r, W / r, r};
        int p[5] = {0, 2, 4, 1, 3};
        memcpy(split + b, s, sizeof s);
        for (int k = 0; k < 5; k++) perm[b + k] = b + p[k];
        final[b] = C * r * r, final[b + 1] = H / r, final[b + 2] = W / r;
    }
    em_tensor *v = em_reshape(x, b + 5, split), *t = v ? em_permute(v, perm) : NULL;
    em_tensor *r2 = t ? em_reshape(t, b + 3, final) : NULL;
    em_release(v), em_release(t);
    return r2;
}

em_tensor *em_pixel_shuffle(const em_tensor *x, int64_t upscale_factor)
{
    return pixel_shuffle_impl(x, upscale_factor, true);
}
em_tensor *em_pixel_unshuffle(const em_tensor *x, int64_t downscale_factor)
{
    return pixel_shuffle_impl(x, downscale_factor, false);
}

em_tensor *em_channel_shuffle(const em_tensor *x, int64_t groups)
{
    if (!x) return em_error(EM_ERR_VALUE, "channel_shuffle: input is NULL");
    if (x->ndim < 3)
        return em_error(EM_ERR_SHAPE, "channel_shuffle expects input to have at least 3 dimensions, but got input "
                        "with %d dimension(s)", x->ndim);
    if (groups <= 0)
        return em_error(EM_ERR_SHAPE, "Number of groups to divide channels in must be positive. Value of groups:%lld",
                        (long long)groups);
    int64_t C = x->sizes[1];
    if (C % groups)
        return em_error(EM_ERR_SHAPE, "Number of channels must be divisible by groups. Got %lld channels and %lld "
                        "groups.", (long long)C, (long long)groups);
    if (x->ndim + 1 > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "channel_shuffle: too many dims");
    int64_t split[EM_MAX_DIMS];
    split[0] = x->sizes[0], split[1] = groups, split[2] = C / groups;
    memcpy(split + 3, x->sizes + 2, (x->ndim - 2) * sizeof *split);
    em_tensor *v = em_reshape(x, x->ndim + 1, split), *t = v ? em_transpose(v, 1, 2) : NULL;
    em_tensor *r = t ? em_reshape(t, x->ndim, x->sizes) : NULL;
    em_release(v), em_release(t);
    return r;
}
