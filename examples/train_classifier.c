/* Trains a small classifier from C with Ember's nn and optim API: two
 * em_linear layers with em_relu between, the fused em_cross_entropy loss,
 * em_backward, and em_optimizer_step (SGD with momentum, PyTorch 1.13's
 * update rule); then evaluates with grad mode off. The worked example of
 * docs/c_api.md.
 * In the tree: make, then build/examples/train_classifier. Against an
 * installed Ember: cc train_classifier.c $(pkg-config --cflags --libs ember) -lm */
#include <ember/ember.h>
#include <math.h>
#include <stdio.h>

enum { N = 600, IN = 2, HIDDEN = 32, CLASSES = 3, STEPS = 200 };

/* Stops on the first failure with the library's message. */
#define CHECK(ok)                                                                \
    do {                                                                         \
        if (!(ok)) {                                                             \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, em_last_error()); \
            return 1;                                                            \
        }                                                                        \
    } while (0)

/* A parameter of nn.Linear's initialization: U(-1/sqrt(fan_in), 1/sqrt(fan_in)). */
static em_tensor *param(int ndim, const int64_t *sizes, int64_t fan_in)
{
    em_tensor *p = em_empty(ndim, sizes, EM_F32);
    double bound = 1 / sqrt((double)fan_in);
    if (!p || em_uniform_(p, -bound, bound, NULL) || em_set_requires_grad(p, true)) {
        em_release(p);
        return NULL;
    }
    return p;
}

/* The model: logits (n, CLASSES) = linear(relu(linear(x, w1, b1)), w2, b2). */
static em_tensor *forward(const em_tensor *x, em_tensor *const *p)
{
    em_tensor *h = em_linear(x, p[0], p[1]);
    em_tensor *a = h ? em_relu(h) : NULL;
    em_tensor *logits = a ? em_linear(a, p[2], p[3]) : NULL;
    em_release(a); /* the graph keeps what backward needs */
    em_release(h);
    return logits;
}

int main(void)
{
    em_manual_seed(0);
    /* Data: three Gaussian blobs; class i is centred on centres[i]. */
    const float centres[CLASSES][IN] = {{-1, -1}, {1, -1}, {0, 1}};
    int64_t labels[N];
    for (int i = 0; i < N; i++) labels[i] = i % CLASSES;
    em_tensor *y = em_from_data(labels, 1, (const int64_t[]){N}, EM_I64);                /* (N,) */
    em_tensor *c = em_from_data(centres, 2, (const int64_t[]){CLASSES, IN}, EM_F32);     /* (3, 2) */
    em_tensor *noise = em_randn(2, (const int64_t[]){N, IN}, EM_F32, NULL);              /* (N, 2) */
    em_tensor *picked = em_index_select(c, 0, y);                                        /* (N, 2) */
    em_tensor *x = picked && noise ? em_add(picked, noise, 0.5) : NULL; /* centre + 0.5 noise */
    CHECK(x);
    em_release(picked), em_release(noise), em_release(c);

    /* Parameters: nn.Linear(2, 32) and nn.Linear(32, 3), (out, in) weights. */
    em_tensor *p[4] = {
        param(2, (const int64_t[]){HIDDEN, IN}, IN), param(1, (const int64_t[]){HIDDEN}, IN),
        param(2, (const int64_t[]){CLASSES, HIDDEN}, HIDDEN), param(1, (const int64_t[]){CLASSES}, HIDDEN),
    };
    CHECK(p[0] && p[1] && p[2] && p[3]);

    /* SGD(lr=0.1, momentum=0.9): one momentum buffer per parameter (state[0]). */
    em_optim_options opt = {.lr = 0.1, .momentum = 0.9, .first_step = true};
    em_tensor *buf[4], *grads[4];
    for (int k = 0; k < 4; k++) CHECK(buf[k] = em_zeros_like(p[k], EM_DTYPE_NONE));
    em_optim_group group = {.n = 4, .params = p, .grads = (const em_tensor *const *)grads, .state = {buf}};

    for (int step = 1; step <= STEPS; step++) {
        em_tensor *logits = forward(x, p);
        em_tensor *loss = logits ? em_cross_entropy(logits, y, NULL, EM_REDUCTION_MEAN, -100) : NULL;
        CHECK(loss);
        CHECK(em_backward(1, &loss, NULL, false, false, 0, NULL) == EM_OK); /* fills p[k]'s .grad */
        for (int k = 0; k < 4; k++) grads[k] = em_get_grad(p[k]);
        em_set_grad_enabled(false); /* the step is not part of the graph (optimizer.step()) */
        em_status st = em_optimizer_step(EM_SGD, &opt, &group);
        em_set_grad_enabled(true);
        CHECK(st == EM_OK);
        opt.first_step = false;
        for (int k = 0; k < 4; k++) em_release(grads[k]), em_set_grad(p[k], NULL); /* zero_grad(set_to_none) */
        double l;
        CHECK(em_item(loss, &l) == EM_OK);
        if (step % 50 == 0) printf("step %3d  loss %.4f\n", step, l);
        em_release(loss), em_release(logits);
    }

    /* Evaluation without a graph (torch.no_grad()): accuracy on the training set. */
    em_set_grad_enabled(false);
    em_tensor *logits = forward(x, p);
    em_tensor *pred = logits ? em_argmax(logits, (const int[]){1}, false) : NULL;   /* (N,) int64 */
    em_tensor *hit = pred ? em_eq(pred, y) : NULL;                                    /* (N,) bool */
    em_tensor *acc = hit ? em_mean(hit, 0, NULL, false, EM_F32) : NULL;
    em_set_grad_enabled(true);
    double a;
    CHECK(acc && em_item(acc, &a) == EM_OK);
    printf("train accuracy %.3f\n", a);
    em_release(acc), em_release(hit), em_release(pred), em_release(logits);
    for (int k = 0; k < 4; k++) em_release(p[k]), em_release(buf[k]);
    em_release(x), em_release(y);
    return a > 0.9 ? 0 : 1;
}
