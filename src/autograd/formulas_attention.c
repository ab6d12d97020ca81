/* Backward formula of scaled dot-product attention (Note [Attention call] in
 * src/nn/attention.c: inputs q, k, v, mask; outputs o, lse; f[0] = scale,
 * i[0] = is_causal, i[1] = mask kind).
 *
 * With P = softmax(S), S = scale q k^T + mask, and upstream gradients G (of o)
 * and Gl (of lse):
 *   dV = P^T G,   dP = G V^T,   dS = P (dP - rowsum(G o) + Gl)
 *   dQ = scale dS K,   dK = scale dS^T Q,   dmask = dS
 * (rowsum(G o) = rowsum(dP P)). The fused backward op computes the first five
 * tile by tile. Under create_graph, or when a float mask needs its gradient
 * (an (L, S) tensor anyway), the same algebra runs as recorded ops on the
 * composite P (attention_weights): differentiable again, at the composite's
 * memory cost. */
#include "autograd.h"
#include "ember/ember.h"

static em_status composite_backward(const em_node *n, em_tensor *const *go, em_tensor **gi, const em_tensor *q,
                                    const em_tensor *k, const em_tensor *v, const em_tensor *mask)
{
    em_arena a = {0};
    const double scale = n->call.f[0];
    int last = -1;
    em_tensor *p = X(em_attention_weights(q, k, mask, n->call.i[0] != 0, scale));
    em_tensor *sc = X(em_scalar_float(scale));
    GRAD(2, X(em_matmul(X(em_transpose(p, -1, -2)), G)));
    em_tensor *dp = X(em_matmul(G, X(em_transpose(v, -1, -2))));
    em_tensor *rs = X(em_sum(X(em_mul(dp, p)), 1, &last, true, EM_DTYPE_NONE));
    em_tensor *ds = X(em_mul(p, X(em_add(X(em_sub(dp, rs, 1)), X(em_unsqueeze(go[1], -1)), 1))));
    GRAD(0, X(em_mul(X(em_matmul(ds, k)), sc)));
    GRAD(1, X(em_mul(X(em_matmul(X(em_transpose(ds, -1, -2)), q)), sc)));
    GRAD(3, ds);
    DONE();
}

EM_BACKWARD(scaled_dot_product_attention, EM_SAVE_INPUTS | EM_SAVE_OUT(0) | EM_SAVE_OUT(1))
{
    const em_tensor *q = em_node_input(n, 0), *k = em_node_input(n, 1), *v = em_node_input(n, 2);
    const em_tensor *mask = n->call.i[1] ? em_node_input(n, 3) : NULL;
    if (!q || !k || !v || (n->call.i[1] && !mask)) return em_error_code();
    if (em_grad_mode() || (mask && em_node_needs_grad(n, 3))) return composite_backward(n, go, gi, q, k, v, mask);
    const em_tensor *o = em_node_output(n, 0), *lse = em_node_output(n, 1);
    if (!o || !lse) return em_error_code();
    em_tensor *d[3];
    if (em_scaled_dot_product_attention_backward(go[0], go[1], q, k, v, o, lse, mask, n->call.i[0] != 0,
                                                 n->call.f[0], &d[0], &d[1], &d[2]))
        return em_error_code();
    for (int i = 0; i < 3; i++) {
        if (em_node_needs_grad(n, i)) gi[i] = d[i];
        else em_release(d[i]);
    }
    return EM_OK;
}
