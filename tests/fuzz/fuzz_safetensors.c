/* libFuzzer target: the safetensors reader on arbitrary bytes must either
 * load a file or fail with an error, never crash, leak or read out of bounds.
 * Build: make build/fuzz_safetensors; corpus: tests/fuzz/corpus/safetensors. */
#include <ember/ember.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    em_clear_error();
    em_safetensors *st = em_safetensors_load_buffer(data, size);
    if (!st) {
        if (em_error_code() == EM_OK) __builtin_trap(); /* a failure must say why */
        return 0;
    }
    for (int i = 0; i < st->n; i++) em_numel(st->tensors[i]);
    em_safetensors_free(st);
    return 0;
}
