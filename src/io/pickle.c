/* The non-executing pickle parser (include/ember/pickle.h). It runs the
 * pickle machine's stack, mark and memo with node indices instead of
 * objects: every opcode either creates at most one node or moves indices
 * around, so memory stays linear in the input. Nothing is ever looked up or
 * called; the graph may share nodes (memo) and even hold cycles (a list that
 * contains itself), which its walker must allow for. */
#include "../core/internal.h"
#include "ember/pickle.h"
#include <errno.h>
#include <stdlib.h>

#define MAX_MEMO_KEY ((uint64_t)1 << 24)

typedef struct parser {
    const uint8_t *p, *end, *start;
    em_pickle *out;
    int cap;
    em_pk_list stack, marks, memo; /* memo: key -> node index + 1 (0: unset) */
} parser;

#define BAD(...) (em_fail(EM_ERR_VALUE, "pickle: " __VA_ARGS__), -1)
#define OOM() (em_fail(EM_ERR_MEMORY, "pickle: out of memory"), -1)

static int push_to(em_pk_list *l, int32_t v)
{
    if (l->n == l->cap) {
        if (l->cap > INT32_MAX / 4) return BAD("too many items");
        int cap = l->cap ? 2 * l->cap : 8;
        int32_t *nv = realloc(l->v, sizeof *nv * (size_t)cap);
        if (!nv) return OOM();
        l->v = nv, l->cap = cap;
    }
    l->v[l->n++] = v;
    return 0;
}

/* A new node of kind k; its index, or -1. */
static int32_t node(parser *ps, em_pk_kind k)
{
    em_pickle *o = ps->out;
    if (o->n == ps->cap) {
        if (ps->cap > INT32_MAX / 4) return BAD("too many values");
        int cap = ps->cap ? 2 * ps->cap : 64;
        em_pk_node *nn = realloc(o->nodes, sizeof *nn * (size_t)cap);
        if (!nn) return OOM();
        o->nodes = nn, ps->cap = cap;
    }
    o->nodes[o->n] = (em_pk_node){.kind = k, .state = -1};
    return o->n++;
}

static em_pk_node *at(parser *ps, int32_t i) { return &ps->out->nodes[i]; }
static int push(parser *ps, int32_t i) { return i < 0 ? -1 : push_to(&ps->stack, i); }

static int pop(parser *ps, int32_t *i)
{
    int base = ps->marks.n ? ps->marks.v[ps->marks.n - 1] : 0;
    if (ps->stack.n <= base) return BAD("stack underflow at byte %zu", (size_t)(ps->p - ps->start - 1));
    *i = ps->stack.v[--ps->stack.n];
    return 0;
}

/* Pops to the last MARK: the items are stack.v[*from .. stack.n). */
static int pop_mark(parser *ps, int *from)
{
    if (!ps->marks.n) return BAD("no MARK before byte %zu", (size_t)(ps->p - ps->start - 1));
    *from = ps->marks.v[--ps->marks.n];
    return 0;
}

static int take(parser *ps, size_t n, const uint8_t **q)
{
    if ((size_t)(ps->end - ps->p) < n) return BAD("truncated (needs %zu more bytes)", n);
    *q = ps->p;
    ps->p += n;
    return 0;
}

static uint64_t le(const uint8_t *q, int n)
{
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; k--) v = v << 8 | q[k];
    return v;
}

/* A text line (protocol 0), without its '\n'. */
static int line(parser *ps, const char **s, size_t *n)
{
    const uint8_t *nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
    if (!nl) return BAD("truncated text argument");
    *s = (const char *)ps->p, *n = (size_t)(nl - ps->p);
    ps->p = nl + 1;
    return 0;
}

static int32_t string_node(parser *ps, em_pk_kind k, const void *s, size_t n)
{
    int32_t i = node(ps, k);
    if (i < 0) return -1;
    char *copy = malloc(n + 1);
    if (!copy) return OOM();
    memcpy(copy, s, n);
    copy[n] = 0;
    at(ps, i)->str = copy, at(ps, i)->len = n;
    return i;
}

static int32_t int_node(parser *ps, em_pk_kind k, int64_t v)
{
    int32_t i = node(ps, k);
    if (i >= 0) at(ps, i)->i = v;
    return i;
}

/* A decimal integer of a protocol-0 text opcode (INT, LONG, PUT, GET). */
static int text_int(parser *ps, int64_t *v, bool is_long)
{
    const char *s;
    size_t n;
    if (line(ps, &s, &n)) return -1;
    if (is_long && n && s[n - 1] == 'L') n--;
    char buf[32];
    if (!n || n >= sizeof buf) return BAD("bad or too large text integer");
    memcpy(buf, s, n);
    buf[n] = 0;
    char *endp;
    errno = 0;
    long long x = strtoll(buf, &endp, 10);
    if (*endp || errno) return BAD("bad or too large text integer '%s'", buf);
    *v = x;
    return 0;
}

static int32_t memo_get(parser *ps, uint64_t key)
{
    if (key >= (uint64_t)ps->memo.n || !ps->memo.v[key]) return BAD("memo key %llu is not set", (unsigned long long)key);
    return ps->memo.v[key] - 1;
}

static int memo_put(parser *ps, uint64_t key)
{
    if (!ps->stack.n) return BAD("PUT on an empty stack");
    /* real pickles number their memo entries from 0, one per PUT: bounding keys by
     * the input's size keeps the memo linear in it */
    if (key >= MAX_MEMO_KEY || key > (uint64_t)(ps->end - ps->start))
        return BAD("memo key %llu is too large", (unsigned long long)key);
    while ((uint64_t)ps->memo.n <= key)
        if (push_to(&ps->memo, 0)) return -1;
    ps->memo.v[key] = ps->stack.v[ps->stack.n - 1] + 1;
    return 0;
}

/* A container node of kind k over the items above the last MARK. */
static int32_t collect(parser *ps, em_pk_kind k)
{
    int from;
    if (pop_mark(ps, &from)) return -1;
    if (k == EM_PK_DICT && (ps->stack.n - from) % 2) return BAD("DICT with an odd number of items");
    int32_t i = node(ps, k);
    for (int j = from; i >= 0 && j < ps->stack.n; j++)
        if (push_to(&at(ps, i)->kids, ps->stack.v[j])) return -1;
    ps->stack.n = from;
    return i;
}

static int32_t tuple_of(parser *ps, int n)
{
    if (ps->stack.n - (ps->marks.n ? ps->marks.v[ps->marks.n - 1] : 0) < n) return BAD("stack underflow in TUPLE%d", n);
    int32_t i = node(ps, EM_PK_TUPLE);
    for (int j = ps->stack.n - n; i >= 0 && j < ps->stack.n; j++)
        if (push_to(&at(ps, i)->kids, ps->stack.v[j])) return -1;
    ps->stack.n -= n;
    return i;
}

static int32_t call(parser *ps, int32_t callable, int32_t args, int32_t kwargs, bool newobj)
{
    if (at(ps, args)->kind != EM_PK_TUPLE) return BAD("the arguments of a call are not a tuple");
    int32_t i = node(ps, EM_PK_CALL);
    if (i < 0 || push_to(&at(ps, i)->kids, callable) || push_to(&at(ps, i)->kids, args) ||
        (kwargs >= 0 && push_to(&at(ps, i)->kids, kwargs)))
        return -1;
    at(ps, i)->i = newobj;
    return i;
}

static int32_t global(parser *ps, const char *module, size_t mlen, const char *name, size_t nlen)
{
    if (!mlen || !nlen || memchr(module, 0, mlen) || memchr(name, 0, nlen)) return BAD("bad global name");
    int32_t i = string_node(ps, EM_PK_GLOBAL, module, mlen);
    if (i < 0) return -1;
    char *n2 = strndup(name, nlen);
    if (!n2) return OOM();
    at(ps, i)->str2 = n2;
    return i;
}

/* SETITEM(S), APPEND(S), ADDITEMS: items from stack.v[from..] onto target. */
static int extend(parser *ps, int32_t target, int from, int op)
{
    em_pk_node *t = at(ps, target);
    int n = ps->stack.n - from;
    em_pk_list *dst = NULL;
    if (op == 's') dst = t->kind == EM_PK_DICT ? &t->kids : t->kind == EM_PK_CALL ? &t->sets : NULL;
    if (op == 'a') dst = t->kind == EM_PK_LIST ? &t->kids : t->kind == EM_PK_CALL ? &t->appends : NULL;
    if (op == 'u') dst = t->kind == EM_PK_SET ? &t->kids : NULL;
    if (!dst) return BAD("%s on an object that is not a %s", op == 's' ? "SETITEMS" : op == 'a' ? "APPENDS" : "ADDITEMS",
                         op == 's' ? "dict" : op == 'a' ? "list" : "set");
    if (op == 's' && n % 2) return BAD("SETITEMS with an odd number of items");
    for (int j = from; j < ps->stack.n; j++)
        if (push_to(dst, ps->stack.v[j])) return -1;
    ps->stack.n = from;
    return 0;
}

static int step(parser *ps, bool *stop)
{
    const uint8_t *q;
    const char *s, *s2;
    size_t n, n2;
    int64_t v;
    int32_t a, b, c;
    int from;
    uint8_t op;
    if (ps->p == ps->end) return BAD("truncated: no STOP opcode");
    op = *ps->p++;
    switch (op) {
    case 0x80: /* PROTO */
        if (take(ps, 1, &q)) return -1;
        if (*q > 5) return BAD("unsupported protocol %d", *q);
        return 0;
    case 0x95: /* FRAME: a length hint only */
        return take(ps, 8, &q);
    case '.': /* STOP */
        if (pop(ps, &a)) return -1;
        ps->out->root = a;
        *stop = true;
        return 0;
    case '(': return push_to(&ps->marks, ps->stack.n);
    case '0': return pop(ps, &a);
    case '1': return pop_mark(ps, &from) ? -1 : (ps->stack.n = from, 0);
    case '2':
        if (pop(ps, &a)) return -1;
        ps->stack.n++;
        return push(ps, a);
    case 'N': return push(ps, node(ps, EM_PK_NONE));
    case 0x88: return push(ps, int_node(ps, EM_PK_BOOL, 1));
    case 0x89: return push(ps, int_node(ps, EM_PK_BOOL, 0));
    case 'I':
        if (ps->end - ps->p >= 3 && (ps->p[0] == '0' && (ps->p[1] == '0' || ps->p[1] == '1') && ps->p[2] == '\n')) {
            v = ps->p[1] == '1';
            ps->p += 3;
            return push(ps, int_node(ps, EM_PK_BOOL, v));
        }
        return text_int(ps, &v, false) ? -1 : push(ps, int_node(ps, EM_PK_INT, v));
    case 'L': return text_int(ps, &v, true) ? -1 : push(ps, int_node(ps, EM_PK_INT, v));
    case 'J': return take(ps, 4, &q) ? -1 : push(ps, int_node(ps, EM_PK_INT, (int32_t)le(q, 4)));
    case 'K': return take(ps, 1, &q) ? -1 : push(ps, int_node(ps, EM_PK_INT, q[0]));
    case 'M': return take(ps, 2, &q) ? -1 : push(ps, int_node(ps, EM_PK_INT, (int64_t)le(q, 2)));
    case 0x8a: case 0x8b: /* LONG1, LONG4: little-endian two's complement */
        if (take(ps, op == 0x8a ? 1 : 4, &q)) return -1;
        n = (size_t)le(q, op == 0x8a ? 1 : 4);
        if (op == 0x8b && (int32_t)n < 0) return BAD("negative LONG4 length");
        if (take(ps, n, &q)) return -1;
        if (n <= 8) {
            uint64_t u = n ? le(q, (int)n) : 0;
            if (n && n < 8 && (q[n - 1] & 0x80)) u |= ~(uint64_t)0 << (8 * n);
            return push(ps, int_node(ps, EM_PK_INT, (int64_t)u));
        }
        return push(ps, string_node(ps, EM_PK_BIGINT, q, n));
    case 'F': {
        if (line(ps, &s, &n)) return -1;
        char buf[64], *endp;
        if (!n || n >= sizeof buf) return BAD("bad FLOAT");
        memcpy(buf, s, n);
        buf[n] = 0;
        double d = strtod(buf, &endp);
        if (*endp) return BAD("bad FLOAT '%s'", buf);
        a = node(ps, EM_PK_FLOAT);
        if (a >= 0) at(ps, a)->f = d;
        return push(ps, a);
    }
    case 'G': {
        if (take(ps, 8, &q)) return -1;
        uint64_t u = 0;
        for (int k = 0; k < 8; k++) u = u << 8 | q[k]; /* big-endian */
        double d;
        memcpy(&d, &u, 8);
        a = node(ps, EM_PK_FLOAT);
        if (a >= 0) at(ps, a)->f = d;
        return push(ps, a);
    }
    case 'X': case 0x8c: case 0x8d: case 'T': case 'U': case 'B': case 'C': case 0x8e: case 0x96: {
        int w = op == 0x8c || op == 'U' || op == 'C' ? 1 : op == 0x8d || op == 0x8e || op == 0x96 ? 8 : 4;
        if (take(ps, (size_t)w, &q)) return -1;
        uint64_t len = le(q, w);
        if (len > (uint64_t)(ps->end - ps->p)) return BAD("a string of %llu bytes runs past the end",
                                                         (unsigned long long)len);
        take(ps, (size_t)len, &q);
        em_pk_kind k = op == 'X' || op == 0x8c || op == 0x8d || op == 'T' || op == 'U' ? EM_PK_STR
                       : op == 0x96 ? EM_PK_BYTEARRAY : EM_PK_BYTES;
        return push(ps, string_node(ps, k, q, (size_t)len));
    }
    case 'V': case 'S': /* protocol-0 text strings: only the plain forms (no escapes) */
        if (line(ps, &s, &n)) return -1;
        if (op == 'S') {
            if (n < 2 || (s[0] != '\'' && s[0] != '"') || s[n - 1] != s[0]) return BAD("bad STRING");
            s++, n -= 2;
        }
        if (memchr(s, '\\', n)) return BAD("escapes in protocol-0 strings are not supported");
        return push(ps, string_node(ps, EM_PK_STR, s, n));
    case ')': return push(ps, node(ps, EM_PK_TUPLE));
    case 0x85: case 0x86: case 0x87: return push(ps, tuple_of(ps, op - 0x84));
    case 't': return push(ps, collect(ps, EM_PK_TUPLE));
    case ']': return push(ps, node(ps, EM_PK_LIST));
    case 'l': return push(ps, collect(ps, EM_PK_LIST));
    case '}': return push(ps, node(ps, EM_PK_DICT));
    case 'd': return push(ps, collect(ps, EM_PK_DICT));
    case 0x8f: return push(ps, node(ps, EM_PK_SET));
    case 0x91: return push(ps, collect(ps, EM_PK_FROZENSET));
    case 'a': case 's': /* APPEND, SETITEM */
        from = ps->stack.n - (op == 'a' ? 1 : 2);
        if (from < 1 + (ps->marks.n ? ps->marks.v[ps->marks.n - 1] : 0)) return BAD("stack underflow");
        return extend(ps, ps->stack.v[from - 1], from, op);
    case 'e': case 'u': case 0x90: /* APPENDS, SETITEMS, ADDITEMS */
        if (pop_mark(ps, &from)) return -1;
        if (from < 1 + (ps->marks.n ? ps->marks.v[ps->marks.n - 1] : 0)) return BAD("stack underflow");
        return extend(ps, ps->stack.v[from - 1], from, op == 'e' ? 'a' : op == 'u' ? 's' : 'u');
    case 'c': case 'i': /* GLOBAL, INST */
        if (line(ps, &s, &n) || line(ps, &s2, &n2)) return -1;
        a = global(ps, s, n, s2, n2);
        if (a < 0) return -1;
        if (op == 'c') return push(ps, a);
        if ((b = collect(ps, EM_PK_TUPLE)) < 0) return -1;
        return push(ps, call(ps, a, b, -1, false));
    case 0x93: /* STACK_GLOBAL */
        if (pop(ps, &b) || pop(ps, &a)) return -1;
        if (at(ps, a)->kind != EM_PK_STR || at(ps, b)->kind != EM_PK_STR) return BAD("STACK_GLOBAL of non-strings");
        return push(ps, global(ps, at(ps, a)->str, at(ps, a)->len, at(ps, b)->str, at(ps, b)->len));
    case 'o': /* OBJ: MARK cls args... */
        if (pop_mark(ps, &from)) return -1;
        if (ps->stack.n == from) return BAD("OBJ without a class");
        a = ps->stack.v[from];
        if ((b = node(ps, EM_PK_TUPLE)) < 0) return -1;
        for (int j = from + 1; j < ps->stack.n; j++)
            if (push_to(&at(ps, b)->kids, ps->stack.v[j])) return -1;
        ps->stack.n = from;
        return push(ps, call(ps, a, b, -1, false));
    case 'R': /* REDUCE */
        if (pop(ps, &b) || pop(ps, &a)) return -1;
        return push(ps, call(ps, a, b, -1, false));
    case 0x81: /* NEWOBJ */
        if (pop(ps, &b) || pop(ps, &a)) return -1;
        return push(ps, call(ps, a, b, -1, true));
    case 0x92: /* NEWOBJ_EX */
        if (pop(ps, &c) || pop(ps, &b) || pop(ps, &a)) return -1;
        if (at(ps, c)->kind != EM_PK_DICT) return BAD("NEWOBJ_EX keyword arguments are not a dict");
        return push(ps, call(ps, a, b, c, true));
    case 'b': /* BUILD */
        if (pop(ps, &b) || pop(ps, &a)) return -1;
        if (at(ps, a)->kind != EM_PK_CALL) return BAD("BUILD on an object that was not made by a call");
        if (at(ps, a)->state >= 0) return BAD("BUILD twice on one object");
        at(ps, a)->state = b;
        ps->stack.n++;
        return 0;
    case 'P':
        if (line(ps, &s, &n)) return -1;
        if ((b = string_node(ps, EM_PK_STR, s, n)) < 0) return -1;
        goto persid;
    case 'Q':
        if (pop(ps, &b)) return -1;
    persid:
        a = node(ps, EM_PK_PERSID);
        if (a < 0 || push_to(&at(ps, a)->kids, b)) return -1;
        return push(ps, a);
    case 'g': return text_int(ps, &v, false) || v < 0 ? BAD("bad GET") : push(ps, memo_get(ps, (uint64_t)v));
    case 'h': return take(ps, 1, &q) ? -1 : push(ps, memo_get(ps, q[0]));
    case 'j': return take(ps, 4, &q) ? -1 : push(ps, memo_get(ps, le(q, 4)));
    case 'p': return text_int(ps, &v, false) || v < 0 ? BAD("bad PUT") : memo_put(ps, (uint64_t)v);
    case 'q': return take(ps, 1, &q) ? -1 : memo_put(ps, q[0]);
    case 'r': return take(ps, 4, &q) ? -1 : memo_put(ps, le(q, 4));
    case 0x94: return memo_put(ps, (uint64_t)ps->memo.n); /* MEMOIZE */
    case 0x82: case 0x83: case 0x84:
        return BAD("EXT%d opcodes (the copyreg extension registry) are not supported", op == 0x82 ? 1 : op == 0x83 ? 2 : 4);
    case 0x97: case 0x98: return BAD("out-of-band buffers (protocol 5) are not supported");
    default: return BAD("unknown opcode 0x%02x at byte %zu", op, (size_t)(ps->p - ps->start - 1));
    }
}

void em_pickle_free(em_pickle *p)
{
    if (!p) return;
    for (int i = 0; i < p->n; i++) {
        em_pk_node *x = &p->nodes[i];
        free(x->str), free(x->str2), free(x->kids.v), free(x->sets.v), free(x->appends.v);
    }
    free(p->nodes);
    free(p);
}

em_pickle *em_pickle_parse(const void *data, size_t size)
{
    if (!data && size) return em_error(EM_ERR_VALUE, "pickle: NULL data");
    parser ps = {.p = data, .start = data, .end = (const uint8_t *)data + size};
    if (!(ps.out = calloc(1, sizeof *ps.out))) return em_error(EM_ERR_MEMORY, "pickle: out of memory");
    bool stop = false;
    int rc = 0;
    while (!stop && !(rc = step(&ps, &stop))) {}
    free(ps.stack.v), free(ps.marks.v), free(ps.memo.v);
    if (rc) {
        em_pickle_free(ps.out);
        return NULL;
    }
    ps.out->end = (size_t)(ps.p - ps.start);
    return ps.out;
}
