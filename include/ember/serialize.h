/* Saving and loading tensors in the safetensors format
 * (https://github.com/huggingface/safetensors; layout in docs/NOTES: an 8-byte
 * little-endian header length N, a JSON header of N bytes padded with spaces
 * to 8-byte alignment, then the tensors' bytes, contiguous and in C order).
 *
 * Dtypes map to safetensors names one to one: BOOL U8 I8 I16 I32 I64 F16
 * BF16 F32 F64 (Ember's dtype enum suffixes). Files holding other dtypes
 * (U16, U32, U64, complex, fp8) are rejected. */
#ifndef EMBER_SERIALIZE_H
#define EMBER_SERIALIZE_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The contents of a safetensors file. Owns every string and tensor reference
 * it holds; free it with em_safetensors_free. Tensors come in the order of
 * their data in the file. */
typedef struct em_safetensors {
    int n;
    char **names;
    em_tensor **tensors;
    int nmeta;               /* the "__metadata__" pairs, in header order */
    char **meta_keys;
    char **meta_values;
} em_safetensors;

void em_safetensors_free(em_safetensors *st); /* NULL-safe */

/* Sink of em_safetensors_write: writes all n bytes, 0 on success (nonzero:
 * the write stops with an error; the sink may set its own with em_fail). */
typedef int (*em_write_fn)(void *ctx, const void *data, size_t n);

/* Serializes n tensors (borrowed; CPU, any layout: non-contiguous ones are
 * written in C order) under the given names, plus nmeta metadata pairs, to
 * `write`. Names must be distinct, non-empty UTF-8 without NUL, and not
 * "__metadata__". Tensors are laid out by decreasing element size (then in
 * the given order), so every tensor's data is aligned in the file. */
em_status em_safetensors_write(em_write_fn write, void *ctx, int n, const char *const *names,
                               const em_tensor *const *tensors, int nmeta,
                               const char *const *meta_keys, const char *const *meta_values);

/* em_safetensors_write to `path`, atomically: the data goes to a temporary
 * file in the same directory (".<name>.<pid>.<k>.tmp"), which is fsync'ed
 * and renamed over `path`, then the directory is fsync'ed. On failure `path`
 * is left as it was and the temporary file is removed. A process killed
 * mid-write leaves its temporary file behind (never `path` half-written);
 * loaders never read it. */
em_status em_safetensors_save(const char *path, int n, const char *const *names,
                              const em_tensor *const *tensors, int nmeta,
                              const char *const *meta_keys, const char *const *meta_values);

/* Reads and validates a safetensors file; NULL with an error (EM_ERR_VALUE
 * for a malformed file: bad header length, JSON that is not an object of
 * valid entries, unknown dtype, sizes disagreeing with offsets, overlapping,
 * unordered or gapped data, trailing bytes, duplicate names; EM_ERR_RUNTIME
 * for I/O errors). mmap = false: the tensors own copies of the data. mmap =
 * true: they share a private copy-on-write mapping of the file (the file is
 * opened read-only and never written; writes to a tensor stay in this
 * process), unmapped when the last tensor using it is released. Tensors whose
 * data is not aligned to their element size are copied either way. A file
 * truncated by another process while mapped makes reads of its tensors fault
 * (as with any mmap). */
em_safetensors *em_safetensors_load(const char *path, bool mmap);

/* The same, from `size` bytes in memory (copied: the buffer may be freed after). */
em_safetensors *em_safetensors_load_buffer(const void *data, size_t size);

/* ---- zip archives: PyTorch's checkpoint container ----------------------
 * A read-only zip reader (central directory, ZIP64 records, stored and
 * deflated entries) with every offset and size checked against the file,
 * and a writer of stored entries whose data starts 64-byte aligned (as
 * torch.save writes them, so that they can be mapped). Encrypted,
 * multi-disk and other compression methods are refused. */
typedef struct em_zip em_zip;

/* Opens the archive at path (mapped read-only, private: never written) or in
 * `size` bytes of memory (copied). NULL with EM_ERR_VALUE for a malformed
 * archive, EM_ERR_RUNTIME for I/O errors. Zip bombs are refused: entries
 * whose data overlap, and deflated entries that together claim more than
 * EM_ZIP_MAX_RATIO times their compressed size (plus 1 MiB).
 * A file truncated by another process while open makes reads of it fault
 * (as with any mapping). */
#define EM_ZIP_MAX_RATIO 256
em_zip *em_zip_open(const char *path);
em_zip *em_zip_open_buffer(const void *data, size_t size);
void em_zip_close(em_zip *z); /* NULL-safe; tensors made by em_zip_tensor stay valid */

int em_zip_count(const em_zip *z); /* -1 (error set) for NULL */
const char *em_zip_name(const em_zip *z, int i);        /* entries in central-directory order */
int em_zip_find(const em_zip *z, const char *name);      /* index, or -1 if absent (error set if an argument is NULL) */
int64_t em_zip_entry_size(const em_zip *z, int i);      /* uncompressed bytes */
/* Reads entry i (exactly em_zip_entry_size bytes) into dst, checking its CRC. */
em_status em_zip_read(const em_zip *z, int i, void *dst);
/* Entry i as a 1-d tensor of dt (its size must be a whole number of
 * elements). share: a stored, aligned entry of a mapped archive becomes a
 * view of the mapping (zero copy, CRC not checked; copy-on-write: writes stay
 * in this process); otherwise the data is copied. */
em_tensor *em_zip_tensor(em_zip *z, int i, em_dtype dt, bool share);

typedef struct em_zip_writer em_zip_writer;
/* A writer to `write`, or to path atomically (as em_safetensors_save: the
 * file appears complete on em_zip_writer_finish, or not at all). */
em_zip_writer *em_zip_writer_new(em_write_fn write, void *ctx);
em_zip_writer *em_zip_writer_open(const char *path);
/* Adds a stored entry of n bytes; names must be distinct and non-empty. */
em_status em_zip_writer_add(em_zip_writer *w, const char *name, const void *data, size_t n);
/* Writes the central directory (ZIP64 where needed) and frees w. */
em_status em_zip_writer_finish(em_zip_writer *w);
void em_zip_writer_free(em_zip_writer *w); /* abandons: a path is left as it was */

#ifdef __cplusplus
}
#endif
#endif
