/* CPU kernels of scaled dot-product attention (Note [Attention call] in
 * src/nn/attention.c): a flash-style forward (query tiles x key tiles, online
 * softmax, the log-sum-exp of each row saved) and its backward, which
 * recomputes the probabilities tile by tile from the log-sum-exp. GEMMs on
 * tiles go to BLAS (single-threaded inside our OpenMP region); the tasks
 * (batch x tile) are spread over OpenMP threads. The per-dtype code is the
 * template attention_impl.h. */
#include "attention.h"

#define T float
#define SFX f32
#define EXP em_vexpf
#define GEMM cblas_sgemm
#include "attention_impl.h"
#undef T
#undef SFX
#undef EXP
#undef GEMM

#define T double
#define SFX f64
#define EXP exp
#define GEMM cblas_dgemm
#include "attention_impl.h"
#undef T
#undef SFX
#undef EXP
#undef GEMM

em_status cpu_scaled_dot_product_attention(const em_call *c)
{
    return c->dtype == EM_F32 ? sdpa_forward_f32(c) : sdpa_forward_f64(c);
}

em_status cpu_scaled_dot_product_attention_backward(const em_call *c)
{
    return c->dtype == EM_F32 ? sdpa_backward_f32(c) : sdpa_backward_f64(c);
}
