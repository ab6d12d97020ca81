/* libFuzzer target: the PyTorch zip reader as ember.load runs it on
 * arbitrary bytes: the zip container (src/io/zip.c), then the non-executing
 * pickle parser on <root>/data.pkl and each entry read as bytes and as a
 * tensor. Every failure must set an error; never a crash, leak or
 * out-of-bounds read. Build: make build/fuzz_zip; corpus: tests/fuzz/corpus/zip. */
#include <ember/ember.h>
#include <ember/pickle.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENTRY ((int64_t)1 << 24)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    em_clear_error();
    em_zip *z = em_zip_open_buffer(data, size);
    if (!z) {
        if (em_error_code() == EM_OK) __builtin_trap(); /* a failure must say why */
        return 0;
    }
    for (int i = 0; i < em_zip_count(z); i++) {
        const char *name = em_zip_name(z, i);
        if (em_zip_find(z, name) != i) __builtin_trap(); /* names are unique */
        int64_t n = em_zip_entry_size(z, i);
        if (n < 0 || n > MAX_ENTRY) continue;
        uint8_t *buf = malloc((size_t)n + 1);
        em_clear_error();
        if (em_zip_read(z, i, buf) == EM_OK) {
            size_t len = strlen(name);
            if (len >= 8 && !strcmp(name + len - 8, "data.pkl")) em_pickle_free(em_pickle_parse(buf, (size_t)n));
        } else if (em_error_code() == EM_OK) {
            __builtin_trap();
        }
        free(buf);
        em_release(em_zip_tensor(z, i, EM_F32, true));
    }
    em_zip_close(z);
    return 0;
}
