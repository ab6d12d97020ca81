/* Helpers shared by the file formats of src/io: atomic saves and read-only
 * file mappings shared by the tensors loaded from them. */
#ifndef EMBER_IO_FILE_H
#define EMBER_IO_FILE_H

#include "../core/internal.h"
#include "ember/serialize.h"

/* A file being written atomically: the data goes to a temporary file beside
 * `path` (".<name>.<pid>.<k>.tmp"); em_atomic_commit fsyncs it, renames it
 * over path and fsyncs the directory; em_atomic_abort removes it. A process
 * killed before the commit leaves path as it was. `what` prefixes messages. */
typedef struct em_atomic_file {
    int fd;
    char *tmp;
    const char *path, *what;
} em_atomic_file;

em_status em_atomic_open(em_atomic_file *f, const char *path, const char *what);
em_status em_atomic_commit(em_atomic_file *f); /* closes f either way */
void em_atomic_abort(em_atomic_file *f);
int em_atomic_write(void *f, const void *data, size_t n); /* an em_write_fn */

/* A mapping of a whole file (private, copy-on-write: the file is never
 * written), shared by the tensors made over it and unmapped with the last. */
typedef struct em_mapping { void *addr; size_t len; int64_t refs; } em_mapping;

em_mapping *em_map_file(int fd, size_t len, const char *what); /* one reference */
void em_mapping_unref(void *m);                               /* a deleter for em_from_blob */
/* A 1-d tensor of n elements of dt over the mapping at byte `at`, taking a reference. */
em_tensor *em_mapping_tensor(em_mapping *m, size_t at, int64_t n, em_dtype dt);

#endif
