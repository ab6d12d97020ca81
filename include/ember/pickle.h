/* A pickle parser that never runs anything: it reads the opcodes of pickle
 * protocols 0-5 into a graph of plain values, for loaders that decide
 * themselves what a file may build (ember.load's weights_only loader walks
 * it and applies its allowlist; a C program can read a torch checkpoint's
 * structure). Globals stay (module, name) pairs; REDUCE, NEWOBJ, INST and
 * OBJ become call nodes; BUILD, SETITEM(S) and APPEND(S) applied to a call's
 * result are recorded on it; persistent ids stay nodes. EXT1/2/4 (the copyreg
 * extension registry) and out-of-band buffers are refused. */
#ifndef EMBER_PICKLE_H
#define EMBER_PICKLE_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum em_pk_kind {
    EM_PK_NONE, EM_PK_BOOL, EM_PK_INT, EM_PK_BIGINT, EM_PK_FLOAT, EM_PK_STR, EM_PK_BYTES, EM_PK_BYTEARRAY,
    EM_PK_TUPLE, EM_PK_LIST, EM_PK_DICT, EM_PK_SET, EM_PK_FROZENSET,
    EM_PK_GLOBAL, /* str: module, str2: name */
    EM_PK_CALL,   /* kids: callable, args tuple (, kwargs dict for NEWOBJ_EX); i = 1 for NEWOBJ(_EX) */
    EM_PK_PERSID, /* kids[0]: the persistent id */
} em_pk_kind;

/* A list of node indices. */
typedef struct em_pk_list { int32_t *v; int n, cap; } em_pk_list;

typedef struct em_pk_node {
    em_pk_kind kind;
    int64_t i;         /* BOOL, INT; CALL: 1 if NEWOBJ */
    double f;          /* FLOAT */
    char *str, *str2;  /* STR (UTF-8), BYTES, BIGINT (little-endian two's complement), GLOBAL */
    size_t len;        /* bytes of str */
    em_pk_list kids;   /* TUPLE, LIST, SET, FROZENSET: items; DICT: key, value, key, value...; CALL; PERSID */
    em_pk_list sets;   /* CALL: SETITEM(S) on the result: key, value... */
    em_pk_list appends;/* CALL: APPEND(S) on the result */
    int32_t state;     /* CALL: BUILD's state node, or -1 */
} em_pk_node;

typedef struct em_pickle {
    int n;
    em_pk_node *nodes;
    int32_t root;  /* the value STOP returned */
    size_t end;    /* bytes read, STOP included */
} em_pickle;

/* Parses one pickle at the start of data (stops after STOP; bytes after it
 * are not read). NULL with EM_ERR_VALUE for a malformed or truncated pickle,
 * a refused opcode, or one over the limits (memo keys, protocol 5). Memory
 * is linear in size. */
em_pickle *em_pickle_parse(const void *data, size_t size);
void em_pickle_free(em_pickle *p); /* NULL-safe */

/* ---- torch.save's legacy (pre-1.6) format --------------------------------
 * Five pickles (magic number, protocol version 1001, system info, the object,
 * the list of storage keys) then, for each key in that list, an int64
 * element count and the storage's bytes. em_torch_legacy_parse checks the
 * framing: the magic and version, a little-endian system, each storage's
 * dtype (from the object's persistent ids ('storage', torch.<T>Storage, key,
 * location, numel, ...), which must agree), and that each count matches its
 * declaration and its bytes lie within the data. Bytes after the last
 * storage are ignored. */
typedef struct em_legacy_storage {
    char *key;
    em_dtype dtype;
    int64_t numel;
    size_t data_at; /* byte offset of the storage's first element */
} em_legacy_storage;

typedef struct em_torch_legacy {
    em_pickle *object;   /* the saved object's pickle */
    size_t object_at;    /* its byte offset in the file (its length: object->end) */
    int n;               /* storages, in file order */
    em_legacy_storage *storages;
} em_torch_legacy;

em_torch_legacy *em_torch_legacy_parse(const void *data, size_t size);
void em_torch_legacy_free(em_torch_legacy *t); /* NULL-safe */
/* The dtype of a torch storage class name ("FloatStorage"), or -1. */
int em_torch_storage_dtype(const char *name);

#ifdef __cplusplus
}
#endif
#endif
