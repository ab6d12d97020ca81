/* Trains the LeNet-style CNN of examples/train_fashion_mnist.py on
 * Fashion-MNIST through Ember's public C API only: the IDX reader for the
 * data, conv / pool / linear / relu / cross_entropy ops, autograd
 * (em_backward) for the gradients, a momentum-SGD em_optimizer_step, and
 * em_safetensors_save for the weights (loadable with ember.load).
 *
 * This is a program, not library code: any error prints Ember's message and
 * exits. Every tensor a step makes is released, so memory stays flat.
 * Build: make; run: build/examples/train_fashion_mnist [--epochs N]
 *   [--batch-size N] [--limit N] [--threads N] [--data-root DIR] [--out FILE] */
#include "ember/ember.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MEAN 0.2860 /* of the training images scaled to [0, 1] */
#define STD 0.3530

typedef struct options {
    int epochs, batch_size, threads;
    int64_t limit; /* use the first `limit` samples of each set; 0: all */
    const char *data_root, *out;
} options;

/* ---- errors: print and exit ------------------------------------------------ */
static em_tensor *need(em_tensor *t)
{
    if (!t) {
        fprintf(stderr, "error: %s\n", em_last_error());
        exit(1);
    }
    return t;
}

static void check(em_status s)
{
    if (s != EM_OK) {
        fprintf(stderr, "error: %s\n", em_last_error());
        exit(1);
    }
}

/* Releases `old` and returns `t`: lets a chain of ops reuse one variable. */
static em_tensor *then(em_tensor *old, em_tensor *t)
{
    em_release(old);
    return need(t);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- data --------------------------------------------------------------------- */
/* root/<name>[.gz] read with em_read_idx, its first `limit` rows (0: all). */
static em_tensor *read_idx(const options *o, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", o->data_root, name);
    if (access(path, R_OK) != 0) snprintf(path, sizeof path, "%s/%s.gz", o->data_root, name);
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "error: Fashion-MNIST not found in %s (%s[.gz]); install it with: "
                        "apt-get install dataset-fashion-mnist\n", o->data_root, name);
        exit(1);
    }
    em_tensor *t = need(em_read_idx(path));
    int64_t n = em_size(t, 0);
    return o->limit > 0 && o->limit < n ? then(t, em_narrow(t, 0, 0, o->limit)) : t;
}

/* Images as float32 (N, 1, 28, 28), (x / 255 - MEAN) / STD; labels int64 (N). */
static void load_split(const options *o, const char *prefix, em_tensor **images, em_tensor **labels)
{
    char name[64];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", prefix);
    em_tensor *x = read_idx(o, name);
    em_tensor *scale = em_scalar_float(1 / (255 * STD)), *shift = em_scalar_float(MEAN / STD);
    x = then(x, em_to_dtype(x, EM_F32));
    check(em_mul_(x, scale));
    check(em_sub_(x, shift, 1));
    *images = then(x, em_unsqueeze(x, 1));
    em_release(scale), em_release(shift);

    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", prefix);
    em_tensor *y = read_idx(o, name);
    *labels = then(y, em_to_dtype(y, EM_I64));
}

/* ---- the model ------------------------------------------------------------------ */
enum { NPARAMS = 10 };
static const struct {
    const char *name;
    int ndim;
    int64_t sizes[4];
    int64_t fan_in;
} PARAM_SHAPES[NPARAMS] = {
    {"conv1.weight", 4, {6, 1, 5, 5}, 1 * 25},   {"conv1.bias", 1, {6}, 1 * 25},
    {"conv2.weight", 4, {16, 6, 5, 5}, 6 * 25},  {"conv2.bias", 1, {16}, 6 * 25},
    {"fc1.weight", 2, {120, 400}, 400},          {"fc1.bias", 1, {120}, 400},
    {"fc2.weight", 2, {84, 120}, 120},           {"fc2.bias", 1, {84}, 120},
    {"fc3.weight", 2, {10, 84}, 84},             {"fc3.bias", 1, {10}, 84},
};

/* PyTorch's default init of Conv2d and Linear: weights and biases uniform in
 * +-1/sqrt(fan_in). The names match the Python demo's state_dict. */
static void init_params(em_tensor *params[NPARAMS])
{
    for (int k = 0; k < NPARAMS; k++) {
        double bound = 1 / sqrt((double)PARAM_SHAPES[k].fan_in);
        params[k] = need(em_empty(PARAM_SHAPES[k].ndim, PARAM_SHAPES[k].sizes, EM_F32));
        check(em_uniform_(params[k], -bound, bound, NULL));
        check(em_set_requires_grad(params[k], true));
    }
}

/* logits (N, 10) of images (N, 1, 28, 28). Each step releases the tensor
 * before it: autograd keeps what backward needs. */
static em_tensor *forward(em_tensor *const p[NPARAMS], const em_tensor *images)
{
    const em_pool_params pool2 = {.nd = 2, .kernel = {2, 2}};
    em_tensor *h = need(em_conv(images, p[0], p[1], 2, NULL, (const int64_t[]){2, 2}, NULL, 1));
    h = then(h, em_relu(h));
    h = then(h, em_max_pool(h, &pool2, NULL));                  /* (N, 6, 14, 14) */
    h = then(h, em_conv(h, p[2], p[3], 2, NULL, NULL, NULL, 1));
    h = then(h, em_relu(h));
    h = then(h, em_max_pool(h, &pool2, NULL));                  /* (N, 16, 5, 5) */
    h = then(h, em_flatten(h, 1, -1));                          /* (N, 400) */
    h = then(h, em_linear(h, p[4], p[5]));
    h = then(h, em_relu(h));
    h = then(h, em_linear(h, p[6], p[7]));
    h = then(h, em_relu(h));
    return then(h, em_linear(h, p[8], p[9]));                   /* (N, 10) */
}

/* ---- training ----------------------------------------------------------------------- */
typedef struct sgd {
    em_optim_options options;
    em_tensor *momentum[NPARAMS];
} sgd;

static void sgd_init(sgd *s, em_tensor *const params[NPARAMS], double lr, double momentum)
{
    s->options = (em_optim_options){.lr = lr, .momentum = momentum, .first_step = true};
    for (int k = 0; k < NPARAMS; k++) s->momentum[k] = need(em_zeros_like(params[k], EM_DTYPE_NONE));
}

/* One update from the parameters' .grad, which it then clears (zero_grad). */
static void sgd_step(sgd *s, em_tensor *const params[NPARAMS])
{
    em_tensor *grads[NPARAMS];
    for (int k = 0; k < NPARAMS; k++) grads[k] = need(em_get_grad(params[k]));
    em_optim_group group = {.n = NPARAMS, .params = params, .grads = (const em_tensor *const *)grads,
                            .state = {s->momentum}};
    em_set_grad_enabled(false); /* optimizer steps run outside autograd */
    check(em_optimizer_step(EM_SGD, &s->options, &group));
    em_set_grad_enabled(true);
    s->options.first_step = false;
    for (int k = 0; k < NPARAMS; k++) {
        em_release(grads[k]);
        check(em_set_grad(params[k], NULL));
    }
}

/* One shuffled pass over (images, labels) in mini-batches; prints the mean
 * loss every 100 batches. */
static void train_epoch(em_tensor *const params[NPARAMS], sgd *opt, const em_tensor *images,
                        const em_tensor *labels, int epoch, int batch_size)
{
    int64_t n = em_size(images, 0);
    em_tensor *order = need(em_randperm(n, EM_I64, NULL));
    double loss_sum = 0;
    int batches = 0;
    for (int64_t start = 0; start < n; start += batch_size) {
        int64_t len = n - start < batch_size ? n - start : batch_size;
        em_tensor *idx = need(em_narrow(order, 0, start, len));
        em_tensor *x = need(em_index_select(images, 0, idx)), *y = need(em_index_select(labels, 0, idx));
        em_tensor *logits = forward(params, x);
        em_tensor *loss = need(em_cross_entropy(logits, y, NULL, EM_REDUCTION_MEAN, -100));
        check(em_backward(1, &loss, NULL, false, false, 0, NULL));
        sgd_step(opt, params);

        double value;
        check(em_item(loss, &value));
        loss_sum += value;
        if (++batches % 100 == 0) {
            printf("epoch %d [%6lld/%lld] loss %.4f\n", epoch, (long long)(start + len), (long long)n,
                   loss_sum / 100);
            loss_sum = 0;
        }
        em_release(idx), em_release(x), em_release(y), em_release(logits), em_release(loss);
    }
    em_release(order);
}

/* Fraction of test images classified correctly, in batches of 1000. */
static double evaluate(em_tensor *const params[NPARAMS], const em_tensor *images, const em_tensor *labels)
{
    int64_t n = em_size(images, 0), correct = 0;
    em_set_grad_enabled(false);
    for (int64_t start = 0; start < n; start += 1000) {
        int64_t len = n - start < 1000 ? n - start : 1000;
        em_tensor *x = need(em_narrow(images, 0, start, len)), *y = need(em_narrow(labels, 0, start, len));
        em_tensor *logits = forward(params, x);
        em_tensor *hits = need(em_argmax(logits, (const int[]){1}, false));
        hits = then(hits, em_eq(hits, y));
        hits = then(hits, em_sum(hits, 0, NULL, false, EM_DTYPE_NONE));
        double count;
        check(em_item(hits, &count));
        correct += (int64_t)count;
        em_release(x), em_release(y), em_release(logits), em_release(hits);
    }
    em_set_grad_enabled(true);
    return (double)correct / n;
}

static void save(const char *path, em_tensor *const params[NPARAMS])
{
    const char *names[NPARAMS];
    for (int k = 0; k < NPARAMS; k++) names[k] = PARAM_SHAPES[k].name;
    check(em_safetensors_save(path, NPARAMS, names, (const em_tensor *const *)params, 0, NULL, NULL));
}

/* ---- main ------------------------------------------------------------------------------- */
static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [--epochs N] [--batch-size N] [--limit N] [--threads N] [--data-root DIR] "
                    "[--out FILE]\n", prog);
    exit(2);
}

static options parse_options(int argc, char **argv)
{
    options o = {.epochs = 3, .batch_size = 64, .data_root = "/usr/share/datasets/fashion-mnist",
                 .out = "/tmp/ember_fashion_mnist_c.safetensors"};
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[++i] : NULL;
        if (!value) usage(argv[0]);
        if (!strcmp(flag, "--epochs")) o.epochs = atoi(value);
        else if (!strcmp(flag, "--batch-size")) o.batch_size = atoi(value);
        else if (!strcmp(flag, "--limit")) o.limit = atoll(value);
        else if (!strcmp(flag, "--threads")) o.threads = atoi(value);
        else if (!strcmp(flag, "--data-root")) o.data_root = value;
        else if (!strcmp(flag, "--out")) o.out = value;
        else usage(argv[0]);
    }
    if (o.epochs < 1 || o.batch_size < 1 || o.limit < 0 || o.threads < 0) usage(argv[0]);
    return o;
}

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines show at once, even in a pipe */
    if (o.threads) em_set_num_threads(o.threads);
    em_manual_seed(0);
    em_tensor *train_x, *train_y, *test_x, *test_y, *params[NPARAMS];
    load_split(&o, "train", &train_x, &train_y);
    load_split(&o, "t10k", &test_x, &test_y);
    printf("Fashion-MNIST: %lld training, %lld test images; %d thread(s), batch %d\n",
           (long long)em_size(train_x, 0), (long long)em_size(test_x, 0), em_get_num_threads(), o.batch_size);

    init_params(params);
    sgd opt;
    sgd_init(&opt, params, 0.01, 0.9);
    double start = now(), accuracy = 0;
    for (int epoch = 1; epoch <= o.epochs; epoch++) {
        double t = now();
        train_epoch(params, &opt, train_x, train_y, epoch, o.batch_size);
        double train_s = now() - t;
        accuracy = evaluate(params, test_x, test_y);
        printf("epoch %d: test accuracy %.4f, %.2f s training\n", epoch, accuracy, train_s);
        save(o.out, params);
    }
    printf("weights: %s\nfinal test accuracy %.4f after %d epoch(s), total time %.1f s\n", o.out, accuracy,
           o.epochs, now() - start);

    for (int k = 0; k < NPARAMS; k++) em_release(params[k]), em_release(opt.momentum[k]);
    em_release(train_x), em_release(train_y), em_release(test_x), em_release(test_y);
    return 0;
}
