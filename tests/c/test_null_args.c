/* Runs the generated NULL-argument cases (build/tests/null_args.c, see
 * tests/c/null_args.h). EM_NULL_TEST_FORK=1 runs each case in a child
 * process, so that one run lists every case that crashes. */
#include "null_args.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- what a case allocates, freed by done() --------------------------- */
#define ARENA 256
static em_tensor *tensors[ARENA];
static int ntensors;
static em_tensor *slots[8][16];
static int nslots;
static em_rnn_grads grads_slot;

em_tensor *T(void)
{
    em_tensor *t = em_ones(2, (const int64_t[]){2, 2}, EM_F32);
    if (t && ntensors < ARENA) tensors[ntensors++] = t;
    return t;
}
em_tensor **OUTS(void)
{
    em_tensor **s = slots[nslots++ % 8];
    memset(s, 0, 16 * sizeof *s);
    return s;
}
em_tensor **TL(void)
{
    em_tensor **s = OUTS();
    for (int k = 0; k < 16; k++) s[k] = em_retain(T());
    return s;
}
em_tensor **TL_NULL(void) { return OUTS(); }
em_rnn_grads *GRADS(void)
{
    memset(&grads_slot, 0, sizeof grads_slot);
    return &grads_slot;
}

const int64_t I64S[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
const int INTS[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
const double F64S[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
const bool BOOLS[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
const char *const STRS[16] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"};
int int_slot;
double f64_slot;
bool bool_slot;
char BUF[4096] __attribute__((aligned(64)));
em_generator *gen;
em_node *node;
const em_pool_params pool_params = {.nd = 1, .kernel = {1}};
const em_optim_options optim_options = {.lr = 0.1};
const em_optim_group optim_group = {0};
const em_rnn_weights rnn_weights = {0};
void noop_free(void *ctx) { (void)ctx; }
em_tensor *hook_fn(const em_tensor *grad, void *ctx) { return NULL; }
void post_hook_fn(em_tensor *leaf, void *ctx) {}
int write_sink(void *ctx, const void *data, size_t n) { return 0; }

static int nfailures, unnamed;
static bool nullable_case, list_unnamed;
void done(const char *function, const char *argument, bool failed)
{
    const char *msg = em_last_error();
    if (nullable_case) return; /* it only must not crash */
    if (!failed || em_error_code() == EM_OK) {
        fprintf(stderr, "  %s with %s NULL: %s (error: \"%s\")\n", function, argument,
                failed ? "no error set" : "did not fail", msg);
        nfailures++;
    } else if (!strstr(msg, "NULL")) { /* failed first on another argument */
        if (list_unnamed) fprintf(stderr, "  %s with %s NULL: \"%s\"\n", function, argument, msg);
        unnamed++;
    }
}

static void free_case(void)
{
    for (int k = 0; k < ntensors; k++) em_release(tensors[k]);
    ntensors = 0;
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 16; k++) em_release(slots[i][k]), slots[i][k] = NULL;
    nslots = 0;
    em_tensor **g = (em_tensor **)&grads_slot;
    for (size_t k = 0; k < sizeof grads_slot / sizeof *g; k++) em_release(g[k]), g[k] = NULL;
}

/* ---- cases that need a live em_function_ctx run inside this forward -------- */
static const null_case *ctx_case;
static em_status probe_forward(em_function_ctx *ctx, int nin, const em_tensor *const *in, int *nout, em_tensor **out)
{
    if (ctx_case) ctx_case->run(ctx);
    *nout = 0;
    return em_fail(EM_ERR_RUNTIME, "probe");
}
const em_function probe_fn = {.name = "Probe", .forward = probe_forward};

static void run_case(const null_case *c)
{
    em_clear_error();
    nullable_case = c->nullable;
    if (c->needs_ctx) {
        ctx_case = c;
        const em_tensor *in[1] = {T()};
        em_tensor *out[EM_FUNCTION_MAX_OUT];
        int nout;
        em_function_apply(&probe_fn, NULL, 1, in, &nout, out);
        ctx_case = NULL;
        nullable_case = false;
    } else if (c->nullable) { /* must not crash; its result is freed */
        nullable_case = true;
        c->run(NULL);
        nullable_case = false;
    } else {
        c->run(NULL);
    }
    free_case();
}

TEST(null_arguments_of_every_function)
{
    gen = em_generator_new(1);
    em_tensor *x = em_ones(1, (const int64_t[]){2}, EM_F64), *y = NULL;
    CHECK(gen && x && em_set_requires_grad(x, true) == EM_OK && (y = em_mul(x, x)));
    node = em_grad_fn(y);
    bool fork_each = getenv("EM_NULL_TEST_FORK") != NULL;
    list_unnamed = getenv("EM_NULL_TEST_LIST") != NULL;
    int nullable = 0, crashed = 0;
    nfailures = unnamed = 0;
    for (int i = 0; i < null_ncases; i++) {
        const null_case *c = &null_cases[i];
        nullable += c->nullable;
        if (!fork_each) {
            run_case(c);
            continue;
        }
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
            nfailures = 0;
            run_case(c);
            _exit(nfailures ? 1 : 0); /* (a child's unnamed count is lost) */
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) > 1)) {
            fprintf(stderr, "  %s with %s NULL: crashed\n", c->function, c->argument);
            crashed++;
        } else if (WEXITSTATUS(status)) {
            nfailures++;
        }
    }
    RELEASE(x, y);
    em_generator_free(gen);
    printf("null arguments: %d functions, %d pointer positions (%d NULL by contract); %d failed first on "
           "another argument (EM_NULL_TEST_LIST=1 lists them)\n", null_nfunctions, null_ncases, nullable, unnamed);
    CHECK_MSG(!nfailures && !crashed, "%d of %d NULL-argument cases failed, %d crashed", nfailures + crashed,
              null_ncases, crashed);
}
