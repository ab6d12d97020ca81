/* What each queued operation does in MPI: the dtype and ReduceOp tables,
 * reductions for float16 / bfloat16 (MPI has no such types), the
 * communicator table, and dm_execute. Runs on the communication thread. */
#include <mpi.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "mpi_backend.h"

enum { K_FLOAT, K_INT, K_BOOL, K_HALF, K_BF16 };

/* float16/bfloat16 travel as 2-byte opaque types with their own MPI_Ops
 * (both made in dm_types_init). */
static struct { const char *name; MPI_Datatype type; int kind; } dtypes[] = {
    {"float32", MPI_FLOAT, K_FLOAT},   {"float64", MPI_DOUBLE, K_FLOAT},
    {"float16", MPI_DATATYPE_NULL, K_HALF}, {"bfloat16", MPI_DATATYPE_NULL, K_BF16},
    {"int8", MPI_INT8_T, K_INT},       {"uint8", MPI_UINT8_T, K_INT},
    {"int16", MPI_INT16_T, K_INT},     {"int32", MPI_INT32_T, K_INT},
    {"int64", MPI_INT64_T, K_INT},     {"bool", MPI_C_BOOL, K_BOOL},
};
#define NDTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

int dm_dtype_index(const char *name)
{
    for (int i = 0; i < NDTYPES; i++)
        if (!strcmp(dtypes[i].name, name))
            return i;
    return -1;
}

/* --- float16 / bfloat16 reductions: widen to float, combine, round back --- */
static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float f;
    if (exp == 0)
        f = ldexpf((float)man, -24);                          /* zero, subnormal */
    else if (exp == 31)
        f = man ? NAN : INFINITY;
    else
        f = ldexpf((float)(man | 0x400), (int)exp - 25);
    uint32_t bits;
    memcpy(&bits, &f, 4);
    bits |= sign;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t float_to_half(float f) /* round to nearest even */
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (x >> 16) & 0x8000;
    float a = fabsf(f);
    if (isnan(f))
        return sign | 0x7e00;
    if (a >= 65520.0f)
        return sign | 0x7c00;
    if (a < 6.103515625e-05f)                                  /* subnormal: units of 2^-24 */
        return sign | (uint16_t)nearbyintf(a * 16777216.0f);
    int e;
    float m = frexpf(a, &e);                                   /* a = m * 2^e, m in [0.5, 1) */
    uint32_t man = (uint32_t)nearbyintf(ldexpf(m, 11));        /* 11 significant bits */
    if (man == 2048)
        man = 1024, e++;
    return sign | (uint16_t)(((uint32_t)(e + 14) << 10) | (man & 0x3ff));
}

static float bf16_to_float(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if (isnan(f))
        return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

static float combine(int op, float a, float b)
{
    switch (op) {
    case DM_SUM: return a + b;
    case DM_PRODUCT: return a * b;
    case DM_MIN: return isnan(a) || a < b ? a : b;            /* NaN propagates, as torch's min */
    default: return isnan(a) || a > b ? a : b;
    }
}

#define HALF_REDUCER(OP)                                                                              \
    static void reduce_##OP(void *in, void *inout, int *len, MPI_Datatype *type)                      \
    {                                                                                                 \
        const uint16_t *a = in;                                                                       \
        uint16_t *b = inout;                                                                          \
        int bf = *type == dtypes[3].type;                                                             \
        for (int i = 0; i < *len; i++) {                                                              \
            float x = bf ? bf16_to_float(a[i]) : half_to_float(a[i]);                                 \
            float y = bf ? bf16_to_float(b[i]) : half_to_float(b[i]);                                 \
            float r = combine(OP, x, y);                                                              \
            b[i] = bf ? float_to_bf16(r) : float_to_half(r);                                          \
        }                                                                                             \
    }
HALF_REDUCER(DM_SUM)
HALF_REDUCER(DM_PRODUCT)
HALF_REDUCER(DM_MIN)
HALF_REDUCER(DM_MAX)

static MPI_Op half_ops[4];

/* Called once on the communication thread after MPI_Init_thread. */
void dm_types_init(void)
{
    MPI_Type_contiguous(2, MPI_BYTE, &dtypes[2].type);
    MPI_Type_commit(&dtypes[2].type);
    MPI_Type_contiguous(2, MPI_BYTE, &dtypes[3].type);
    MPI_Type_commit(&dtypes[3].type);
    MPI_User_function *f[] = {reduce_DM_SUM, reduce_DM_PRODUCT, reduce_DM_MIN, reduce_DM_MAX};
    for (int i = 0; i < 4; i++)
        MPI_Op_create(f[i], 1, &half_ops[i]);
}

/* The MPI_Op for (op, dtype), or MPI_OP_NULL with `why` set. Bool reduces
 * logically (SUM and MAX are "or", PRODUCT and MIN "and"), as torch does. */
static MPI_Op mpi_op(int op, int kind, const char **why)
{
    switch (kind) {
    case K_HALF:
    case K_BF16:
        if (op <= DM_MAX)
            return half_ops[op];
        break;
    case K_BOOL:
        switch (op) {
        case DM_SUM: case DM_MAX: case DM_BOR: return MPI_LOR;
        case DM_PRODUCT: case DM_MIN: case DM_BAND: return MPI_LAND;
        default: return MPI_LXOR;
        }
    default:
        switch (op) {
        case DM_SUM: return MPI_SUM;
        case DM_PRODUCT: return MPI_PROD;
        case DM_MIN: return MPI_MIN;
        case DM_MAX: return MPI_MAX;
        default:
            if (kind == K_INT)
                return op == DM_BAND ? MPI_BAND : op == DM_BOR ? MPI_BOR : MPI_BXOR;
        }
    }
    *why = "bitwise reductions (BAND, BOR, BXOR) need an integer or bool tensor";
    return MPI_OP_NULL;
}

/* --- communicators: index 0 is a duplicate of MPI_COMM_WORLD --- */
#define MAX_COMMS 1024
static MPI_Comm comms[MAX_COMMS];
static int ncomms;

int dm_comms_init(void)
{
    ncomms = 1;
    return MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
}

void dm_comms_free(void)
{
    for (int i = 0; i < ncomms; i++)
        if (comms[i] != MPI_COMM_NULL)
            MPI_Comm_free(&comms[i]);
    ncomms = 0;
}

static int comm_create(const int *ranks, int n, int *result)
{
    MPI_Group world, sub;
    MPI_Comm c;
    int rc = MPI_Comm_group(comms[0], &world);
    if (rc == MPI_SUCCESS && (rc = MPI_Group_incl(world, n, ranks, &sub)) == MPI_SUCCESS) {
        rc = MPI_Comm_create(comms[0], sub, &c);  /* collective over the world; others get MPI_COMM_NULL */
        MPI_Group_free(&sub);
    }
    MPI_Group_free(&world);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ncomms == MAX_COMMS) {
        if (c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
        return MPI_ERR_INTERN;
    }
    comms[ncomms] = c;
    *result = ncomms++;
    return MPI_SUCCESS;
}

/* --- point-to-point: started nonblocking and completed by dm_p2p_poll,
 * so that isend/irecv pairs posted in opposite orders on two ranks cannot
 * deadlock the one communication thread --- */
static dm_work *p2p_work[DM_MAX_P2P];
static MPI_Request p2p_req[DM_MAX_P2P];
static int np2p;

static dm_state fail_rc(dm_work *w, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    snprintf(w->error, sizeof w->error, "MPI error: %.*s", len, msg);
    return DM_FAILED;
}

static dm_state p2p_start(dm_work *w, MPI_Comm c, MPI_Datatype t)
{
    if (np2p == DM_MAX_P2P) {
        snprintf(w->error, sizeof w->error, "more than %d sends and receives in flight", DM_MAX_P2P);
        return DM_FAILED;
    }
    int n = (int)w->count, rc;
    if (w->kind == DM_SEND)
        rc = MPI_Isend(w->recv, n, t, w->peer, w->tag, c, &p2p_req[np2p]);
    else
        rc = MPI_Irecv(w->recv, n, t, w->peer < 0 ? MPI_ANY_SOURCE : w->peer, w->tag, c, &p2p_req[np2p]);
    if (rc != MPI_SUCCESS)
        return fail_rc(w, rc);
    p2p_work[np2p++] = w;
    return DM_QUEUED;
}

int dm_p2p_pending(void) { return np2p; }

int dm_p2p_poll(dm_work **done, dm_state *states)
{
    static int idx[DM_MAX_P2P];
    static MPI_Status st[DM_MAX_P2P];
    int outcount = 0, rc = np2p ? MPI_Testsome(np2p, p2p_req, &outcount, idx, st) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
        return 0;
    for (int k = 0; k < outcount; k++) {
        dm_work *w = p2p_work[idx[k]];
        int got = 0;
        done[k] = w;
        states[k] = DM_DONE;
        if (st[k].MPI_ERROR != MPI_SUCCESS && rc == MPI_ERR_IN_STATUS) {
            states[k] = fail_rc(w, st[k].MPI_ERROR);
        } else if (w->kind == DM_RECV) {
            MPI_Get_count(&st[k], dtypes[w->dtype].type, &got);
            w->result = st[k].MPI_SOURCE;
            if (got != (int)w->count) {
                snprintf(w->error, sizeof w->error, "recv of %d elements got %d from rank %d", (int)w->count,
                         got, st[k].MPI_SOURCE);
                states[k] = DM_FAILED;
            }
        }
        p2p_work[idx[k]] = NULL;
    }
    int j = 0; /* drop the completed (their requests are MPI_REQUEST_NULL now) */
    for (int i = 0; i < np2p; i++)
        if (p2p_work[i])
            p2p_work[j] = p2p_work[i], p2p_req[j++] = p2p_req[i];
    np2p = j;
    return outcount;
}

dm_state dm_execute(dm_work *w)
{
    const char *why = NULL;
    int rc = MPI_SUCCESS;
    MPI_Comm c = w->comm >= 0 && w->comm < ncomms ? comms[w->comm] : MPI_COMM_NULL;
    MPI_Datatype t = w->dtype >= 0 ? dtypes[w->dtype].type : MPI_BYTE;
    int n = (int)w->count, size = 0, rank = 0;
    MPI_Op op = MPI_OP_NULL;
    if (w->kind != DM_COMM_CREATE && c == MPI_COMM_NULL)
        why = "the process group is not valid on this rank (destroyed, or it does not include it)";
    else if (w->count < 0 || w->count > INT_MAX / 2)
        why = "a message of more than 2^30 elements per rank is not supported by the MPI backend";
    else if (w->kind == DM_ALLREDUCE || w->kind == DM_REDUCE || w->kind == DM_REDUCE_SCATTER)
        op = mpi_op(w->op, dtypes[w->dtype].kind, &why);
    if (!why && c != MPI_COMM_NULL) {
        MPI_Comm_size(c, &size);
        MPI_Comm_rank(c, &rank);
    }
    if (why) {
        snprintf(w->error, sizeof w->error, "%s", why);
        return DM_FAILED;
    }
    const int *v = w->ints;
    switch (w->kind) {
    case DM_ALLREDUCE: rc = n ? MPI_Allreduce(MPI_IN_PLACE, w->recv, n, t, op, c) : MPI_SUCCESS; break;
    case DM_BROADCAST: rc = n ? MPI_Bcast(w->recv, n, t, w->peer, c) : MPI_SUCCESS; break;
    case DM_REDUCE:
        if (n)
            rc = MPI_Reduce(rank == w->peer ? MPI_IN_PLACE : w->recv, w->recv, n, t, op, w->peer, c);
        break;
    case DM_ALLGATHER: rc = MPI_Allgather(w->send, n, t, w->recv, n, t, c); break;
    case DM_GATHER: rc = MPI_Gather(w->send, n, t, w->recv, n, t, w->peer, c); break;
    case DM_SCATTER: rc = MPI_Scatter(w->send, n, t, w->recv, n, t, w->peer, c); break;
    case DM_REDUCE_SCATTER: rc = n ? MPI_Reduce_scatter_block(w->send, w->recv, n, t, op, c) : MPI_SUCCESS; break;
    case DM_ALLTOALL: rc = MPI_Alltoall(w->send, n, t, w->recv, n, t, c); break;
    case DM_ALLTOALLV:
        rc = MPI_Alltoallv(w->send, v, v + size, t, w->recv, v + 2 * size, v + 3 * size, t, c);
        break;
    case DM_SEND:
    case DM_RECV:
        return p2p_start(w, c, t);
    case DM_BARRIER: rc = MPI_Barrier(c); break;
    case DM_COMM_CREATE: rc = comm_create(w->ints, w->nints, &w->result); break;
    case DM_COMM_FREE:
        rc = MPI_Comm_free(&comms[w->comm]);
        break;
    default: break; /* DM_FINALIZE: the thread's own */
    }
    if (rc != MPI_SUCCESS)
        return fail_rc(w, rc);
    return DM_DONE;
}
