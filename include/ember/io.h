/* Ember's file readers: the IDX format of MNIST-style datasets. */
#ifndef EMBER_IO_H
#define EMBER_IO_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads an IDX file, raw or gzip-compressed (told apart by its bytes, not
 * its name), into a new contiguous tensor. The header is two zero bytes, a
 * type code (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32,
 * 0x0E float64), the number of dims (0..EM_MAX_DIMS), then each dim as a
 * big-endian uint32; the big-endian data follows and must end the file.
 * Returns a new reference, or NULL with EM_ERR_VALUE for a malformed file
 * (bad magic, bad type or dim count, sizes that overflow, data shorter or
 * longer than the header says, a corrupt gzip stream) and EM_ERR_RUNTIME
 * when the file cannot be opened or read. Never allocates more than the
 * data actually present (plus a bounded chunk), whatever the header claims. */
em_tensor *em_read_idx(const char *path);

#ifdef __cplusplus
}
#endif
#endif
