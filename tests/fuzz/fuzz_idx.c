/* libFuzzer target: the IDX reader (src/io/idx.c, raw or gzip) on arbitrary
 * bytes, given to it as a file (a memfd). Build: make build/fuzz_idx;
 * corpus: tests/fuzz/corpus/idx. */
#define _GNU_SOURCE
#include <ember/ember.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz_idx", MFD_CLOEXEC);
    if (fd < 0) return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    em_clear_error();
    em_tensor *t = em_read_idx(path);
    if (!t && em_error_code() == EM_OK) __builtin_trap();
    if (t) em_numel(t);
    em_release(t);
    close(fd);
    return 0;
}
