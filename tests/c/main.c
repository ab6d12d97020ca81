/* Runs every registered test; then checks every op of the table was covered. */
#include "test.h"
#include <stdarg.h>

#define MAX_TESTS 4096
static struct { const char *name; test_fn fn; } tests[MAX_TESTS];
static int ntests;
static bool failed;
static bool covered[EM_OP_COUNT], gradchecked[EM_OP_COUNT];

void test_register(const char *name, test_fn fn)
{
    if (ntests < MAX_TESTS) tests[ntests].name = name, tests[ntests++].fn = fn;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    failed = true;
}

bool test_failed(void) { return failed; }
void test_cover(em_op op) { covered[op] = true; }
void test_cover_list(const em_op *ops, size_t n, bool grad)
{
    for (size_t i = 0; i < n; i++) covered[ops[i]] = true, gradchecked[ops[i]] |= grad;
}

/* Fails (naming them) the ops of the table that no test covers, and the
 * differentiable ones whose gradients no test checks. */
static int check_coverage(void)
{
    int missing = 0;
    for (int op = 0; op < EM_OP_COUNT; op++) {
        if (!covered[op]) fprintf(stderr, "  op '%s' has no test (COVER it)\n", em_ops[op].name), missing++;
        else if ((em_ops[op].flags & EM_F_DIFF) && !gradchecked[op])
            fprintf(stderr, "  differentiable op '%s' has no gradient test (GRAD_COVER it)\n", em_ops[op].name), missing++;
    }
    return missing;
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL; /* substring filter */
    int passed = 0, nfailed = 0;
    for (int i = 0; i < ntests; i++) {
        if (only && !strstr(tests[i].name, only)) continue;
        failed = false;
        em_clear_error();
        tests[i].fn();
        if (failed) {
            fprintf(stderr, "FAIL %s\n", tests[i].name);
            nfailed++;
        } else {
            passed++;
        }
    }
    if (!only) { /* every op in the table must have a test */
        if (check_coverage()) {
            fprintf(stderr, "FAIL op_coverage\n");
            nfailed++;
        } else {
            passed++;
        }
    }
    printf("%d passed, %d failed\n", passed, nfailed);
    return nfailed != 0;
}
