/* libFuzzer target: the framing of torch.save's legacy format
 * (src/io/torch_legacy.c, with the pickle parser) on arbitrary bytes: every
 * storage it reports must lie within the input.
 * Build: make build/fuzz_torch_legacy; corpus: tests/fuzz/corpus/torch_legacy. */
#include <ember/ember.h>
#include <ember/pickle.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    em_clear_error();
    em_torch_legacy *t = em_torch_legacy_parse(data, size);
    if (!t) {
        if (em_error_code() == EM_OK) __builtin_trap();
        return 0;
    }
    for (int i = 0; i < t->n; i++) {
        const em_legacy_storage *s = &t->storages[i];
        size_t nbytes = (size_t)s->numel * em_dtype_size(s->dtype);
        if (s->numel < 0 || s->data_at > size || nbytes > size - s->data_at) __builtin_trap();
    }
    em_torch_legacy_free(t);
    return 0;
}
