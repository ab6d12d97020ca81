/* libFuzzer target: the non-executing pickle parser (src/io/pickle.c) on
 * arbitrary bytes: a graph or an error, and every index in the graph valid.
 * Build: make build/fuzz_pickle; corpus: tests/fuzz/corpus/pickle. */
#include <ember/ember.h>
#include <ember/pickle.h>

static void check_list(const em_pickle *p, const em_pk_list *l)
{
    for (int k = 0; k < l->n; k++)
        if (l->v[k] < 0 || l->v[k] >= p->n) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    em_clear_error();
    em_pickle *p = em_pickle_parse(data, size);
    if (!p) {
        if (em_error_code() == EM_OK) __builtin_trap();
        return 0;
    }
    if (p->root < 0 || p->root >= p->n || p->end > size) __builtin_trap();
    for (int i = 0; i < p->n; i++) {
        const em_pk_node *x = &p->nodes[i];
        check_list(p, &x->kids), check_list(p, &x->sets), check_list(p, &x->appends);
        if (x->state >= p->n) __builtin_trap();
    }
    em_pickle_free(p);
    return 0;
}
