/* Decoding of CUPTI activity records and host records into trace rows, with the correlation join. */
#include "decode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvtxdepth.h"
#include "ring.h"
#include "vramtrace/demangle.h"
#include "vramtrace/schema.h"

/* An NVTX range whose end has not been seen yet. */
struct nvtx_val {
    int64_t start;
    int64_t thread;
    int64_t name_id;   /* -1: NULL */
    int64_t domain_id; /* -1: NULL */
    int32_t kind;
    int32_t depth;     /* -1: NULL */
};

/* Physical memory (VMM handle) or mapping (address) remembered across host records. */
struct mem_val {
    uint64_t id;    /* the full handle or address */
    uint64_t bytes; /* 0: unknown */
    uint64_t handle;
    int32_t kind;
    int32_t device; /* -1: none */
    int32_t bImport; /* memory owned elsewhere (imported handle, IPC mapping) */
    int32_t pad;
};

/* A start/end range id the NVTX callbacks named (nvtxRangeStart*'s result, nvtxRangeEnd's argument). */
struct nvtxid_val {
    uint64_t id;
};

#define ROW_INIT(r, t) ((r).table = (t), (r).nullMask = vt__row_null_init(t))
#define SET(r, c, val) ((r).v[c].i = (int64_t)(val))
#define SETZ(r, c, s) setz(&(r), c, s)
#define SETNULL(r, c) ((void)((r).nullMask |= 1u << (c)))
/* A 32-bit id where all ones means "not applicable" (CUPTI_INVALID_*_ID, ...). */
#define SET_ID32(r, c, val) \
    ((uint32_t)(val) == 0xFFFFFFFFu ? SETNULL(r, c) : (void)SET(r, c, (uint32_t)(val)))
#define SET_OPT(r, c, val, cond) ((cond) ? (void)SET(r, c, val) : SETNULL(r, c))
/* Field F (VT_F_F) of the version-neutral record a (layout.h). */
#define F(a, f) ((a)->v[VT_F_##f])

/* Text column c = z, or NULL when z is NULL. */
static void setz(struct vt__row *r, int c, const char *z)
{
    if (z) r->v[c].z = z;
    else r->nullMask |= 1u << c;
}

int vt__decoder_init(struct vt__decoder *d, const struct vt__decoder_config *cfg,
                     void (*xEmit)(void *, const struct vt__row *), void *pCtx)
{
    struct vt__decoder_config c = {65536, 16384, 262144, 32u << 20, 65536, NULL, NULL};
    int rc;
    memset(d, 0, sizeof *d);
    if (cfg) {
        if (cfg->corr_entries) c.corr_entries = cfg->corr_entries;
        if (cfg->nvtx_entries) c.nvtx_entries = cfg->nvtx_entries;
        if (cfg->intern_entries) c.intern_entries = cfg->intern_entries;
        if (cfg->intern_bytes) c.intern_bytes = cfg->intern_bytes;
        if (cfg->mem_entries) c.mem_entries = cfg->mem_entries;
    }
    d->xEmit = xEmit;
    d->pCtx = pCtx;
    d->modres = cfg ? cfg->modres : NULL;
    d->layout = cfg && cfg->layout ? cfg->layout : vt__layout_active();
    rc = vt__intern_init(&d->intern, c.intern_entries, c.intern_bytes);
    if (rc == 0) rc = vt__boundmap_init(&d->corr, c.corr_entries, sizeof(struct vt__corr_val));
    if (rc == 0) rc = vt__boundmap_init(&d->nvtx, c.nvtx_entries, sizeof(struct nvtx_val));
    if (rc == 0) rc = vt__boundmap_init(&d->nvtxStart, c.nvtx_entries, sizeof(struct nvtxid_val));
    if (rc == 0) rc = vt__boundmap_init(&d->nvtxEnd, c.nvtx_entries, sizeof(struct nvtxid_val));
    if (rc == 0) rc = vt__boundmap_init(&d->handles, c.mem_entries, sizeof(struct mem_val));
    if (rc == 0) rc = vt__boundmap_init(&d->maps, c.mem_entries, sizeof(struct mem_val));
    if (rc == 0) rc = vt__boundmap_init(&d->depths, VT_DEPTH_ENTRIES, sizeof(struct vt__depth_val));
    if (rc != 0) vt__decoder_free(d);
    return rc;
}

void vt__decoder_free(struct vt__decoder *d)
{
    vt__intern_free(&d->intern);
    vt__boundmap_free(&d->corr);
    vt__boundmap_free(&d->nvtx);
    vt__boundmap_free(&d->nvtxStart);
    vt__boundmap_free(&d->nvtxEnd);
    vt__boundmap_free(&d->handles);
    vt__boundmap_free(&d->maps);
    vt__boundmap_free(&d->depths);
}

/* Remember ts as the latest time seen. */
static void see_ts(struct vt__decoder *d, uint64_t ts)
{
    if (ts > d->lastTs) d->lastTs = ts;
}

/*
 * Time column c of r = ts, or NULL when ts is 0: CUPTI's "could not take this
 * time" (and the glue's when its clock read failed). Returns 1 when unknown.
 */
static int set_time(struct vt__row *r, int c, uint64_t ts)
{
    if (ts == 0) {
        SETNULL(*r, c);
        return 1;
    }
    SET(*r, c, ts);
    return 0;
}

/* Instant column c = ts (NULL when unknown); a record with an unknown time is counted. */
static void set_instant(struct vt__decoder *d, struct vt__row *r, int c, uint64_t ts)
{
    if (set_time(r, c, ts)) d->nTimeUnknown++;
}

/*
 * Interval columns cStart, cEnd = start, end, each NULL when 0 (unknown); the
 * end is NULL too when the start is, so no duration is ever stored from an
 * unknown time. A record with either time unknown is counted once.
 */
static void set_interval(struct vt__decoder *d, struct vt__row *r, int cStart, int cEnd, uint64_t start,
                         uint64_t end)
{
    int bUnknown = set_time(r, cStart, start) | set_time(r, cEnd, end);
    if (start == 0) SETNULL(*r, cEnd);
    if (bUnknown) d->nTimeUnknown++;
}

/* Id of string z, emitting its `string` row on first sight; -1 for NULL. */
static int64_t intern(struct vt__decoder *d, const char *z)
{
    int isNew = 0;
    int64_t id;
    if (!z) return -1;
    id = vt__intern(&d->intern, z, &isNew);
    if (isNew) {
        struct vt__row r;
        ROW_INIT(r, VT_T_STRING);
        SET(r, 0, id);
        r.v[1].z = z;
        d->xEmit(d->pCtx, &r);
    }
    return id;
}

#define SET_STR(r, c, id) SET_OPT(r, c, id, (id) >= 0)

/* Family of an API id (enum_api: "alloc", "free", "vmm", "import", ...), "" for an unknown id. */
static const char *api_family(int api)
{
    const char *z = vt_api_family(api);
    return z ? z : "";
}

/* 1 for an API whose memory rows come from its own callback (VMM, imports), not from MEMORY2. */
static int api_owns_memory_rows(int api)
{
    const char *z = api_family(api);
    return !strcmp(z, "vmm") || !strcmp(z, "import");
}

/* The 32-bit map key of a 64-bit handle or address (the value keeps the full one). */
static uint32_t key64(uint64_t x)
{
    return (uint32_t)(x ^ (x >> 32));
}

/* Look up id in m (removing it when bTake): 1 with *pOut filled, 0 if absent. */
static int mem_get(struct vt__boundmap *m, uint64_t id, int bTake, struct mem_val *pOut)
{
    struct mem_val *v = vt__boundmap_get(m, key64(id));
    if (!v || v->id != id) return 0;
    *pOut = *v;
    if (bTake) vt__boundmap_remove(m, key64(id), NULL);
    return 1;
}

/* Remember v under v->id (an older entry may be evicted: that only forgets, nothing is lost). */
static void mem_put(struct vt__boundmap *m, const struct mem_val *v)
{
    vt__boundmap_put(m, key64(v->id), v, NULL, NULL);
}

/* Take (and forget) the API call arguments joined to correlation id corr; 1 if found. */
static int take_corr(struct vt__decoder *d, uint32_t corr, struct vt__corr_val *pOut)
{
    if (corr == 0 || !vt__boundmap_remove(&d->corr, corr, pOut)) return 0;
    d->nJoined++;
    return 1;
}

/* MEMORY2: one memory_event row. */
static int decode_memory(struct vt__decoder *d, const struct vt__act *p)
{
    struct vt__row r;
    struct vt__corr_val cv;
    int op, joined, hasPool, bLocal;
    int64_t sourceId;
    if (F(p, OP) == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION) op = VT_MEMOP_ALLOC;
    else if (F(p, OP) == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) op = VT_MEMOP_FREE;
    else return 1;
    see_ts(d, F(p, TIMESTAMP));
    joined = take_corr(d, (uint32_t)F(p, CORR), &cv);
    if (joined && api_owns_memory_rows((int)cv.aCall[VT_AC_API])) {
        /* cuMemCreate/cuMemMap/IPC: the call's own memory_event row says what happened;
         * a MEMORY2 record of it would count the memory again as a local allocation */
        d->nMemSuperseded++;
        vt__join_alone(d, &cv);
        return 0;
    }
    sourceId = intern(d, VT_ACT_STR(p, VT_F_SOURCE));
    hasPool = F(p, POOL_TYPE) != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
    /* the release threshold, size and utilized size are valid for local pools only
     * (cupti_activity.h); an imported pool's memory belongs to the exporting process */
    bLocal = F(p, POOL_TYPE) == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    if (F(p, POOL_TYPE) == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED)
        op = op == VT_MEMOP_ALLOC ? VT_MEMOP_IMPORT : VT_MEMOP_IMPORT_CLOSE;
    ROW_INIT(r, VT_T_MEMORY_EVENT);
    set_instant(d, &r, 0, F(p, TIMESTAMP));
    SET(r, 1, op);
    SET(r, 2, F(p, MEM_KIND));
    SET(r, 3, F(p, ADDRESS));
    SET(r, 4, F(p, BYTES));
    SET_ID32(r, 5, F(p, DEVICE));
    SET_ID32(r, 6, F(p, CONTEXT));
    SET_ID32(r, 7, F(p, STREAM));
    SET_OPT(r, 8, (uint32_t)F(p, CORR), (uint32_t)F(p, CORR) != 0);
    SET_OPT(r, 9, cv.aCall[VT_AC_API], joined && cv.aCall[VT_AC_API] != 0);
    SET(r, 10, F(p, ASYNC) ? 1 : 0);
    SET_OPT(r, 11, F(p, POOL_TYPE), hasPool);
    SET_OPT(r, 12, F(p, POOL_ADDRESS), hasPool);
    SET_OPT(r, 13, F(p, POOL_THRESHOLD), bLocal); /* UINT64_MAX reads -1 */
    SET_OPT(r, 14, F(p, POOL_SIZE), bLocal);
    SET_OPT(r, 15, F(p, POOL_UTILIZED), bLocal);
    SET_OPT(r, 16, F(p, PC), F(p, PC) != 0);
    SET_OPT(r, 17, cv.aCall[VT_AC_THREAD], joined);
    SET_OPT(r, 18, cv.aCall[VT_AC_STACK], joined && !(cv.callNull >> VT_AC_STACK & 1));
    SET_STR(r, 19, sourceId);
    vt__join_emit(d, &r, joined, &cv);
    return 0;
}

/* MEMORY_POOL: one pool_event row. */
static int decode_pool(struct vt__decoder *d, const struct vt__act *p)
{
    struct vt__row r;
    int bLocal = F(p, POOL_TYPE) == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    see_ts(d, F(p, TIMESTAMP));
    ROW_INIT(r, VT_T_POOL_EVENT);
    set_instant(d, &r, 0, F(p, TIMESTAMP));
    SET(r, 1, F(p, OP));
    SET_ID32(r, 2, F(p, DEVICE));
    SET(r, 3, F(p, POOL_TYPE));
    SET(r, 4, F(p, ADDRESS));
    /* valid for local pools only (cupti_activity.h) */
    SET_OPT(r, 5, F(p, POOL_THRESHOLD), bLocal); /* UINT64_MAX (PyTorch's) reads -1 */
    SET_OPT(r, 6, F(p, POOL_SIZE), bLocal);
    SET_OPT(r, 7, F(p, POOL_UTILIZED), bLocal);
    SET_OPT(r, 8, F(p, CORR), F(p, CORR) != 0);
    d->xEmit(d->pCtx, &r);
    return 0;
}

/* Columns shared by MEMCPY and MEMCPY2 (everything but the device pair and addresses). */
static void memcpy_common(struct vt__decoder *d, struct vt__row *r, uint64_t start, uint64_t end, uint32_t device,
                          uint32_t context, uint32_t stream, uint32_t corr, uint8_t copyKind,
                          uint8_t srcKind, uint8_t dstKind, uint64_t bytes, int isAsync,
                          uint32_t graphId, uint64_t graphNodeId)
{
    ROW_INIT(*r, VT_T_MEMCPY);
    set_interval(d, r, 0, 1, start, end);
    SET_ID32(*r, 2, device);
    SET_ID32(*r, 3, context);
    SET_ID32(*r, 4, stream);
    SET_OPT(*r, 5, corr, corr != 0);
    SET(*r, 6, copyKind);
    SET(*r, 7, srcKind);
    SET(*r, 8, dstKind);
    SET(*r, 9, bytes);
    SET(*r, 10, isAsync ? 1 : 0);
    SET_OPT(*r, 15, graphId, graphId != 0);
    SET_OPT(*r, 16, graphNodeId, graphNodeId != 0);
}

/* MEMCPY: one memcpy row; src/dst addresses from the API call with the same correlation. */
static int decode_memcpy(struct vt__decoder *d, const struct vt__act *p)
{
    struct vt__row r;
    struct vt__corr_val cv;
    int joined = take_corr(d, (uint32_t)F(p, CORR), &cv);
    if (!joined) joined = take_corr(d, (uint32_t)F(p, RUNTIME_CORR), &cv);
    see_ts(d, F(p, END));
    memcpy_common(d, &r, F(p, START), F(p, END), (uint32_t)F(p, DEVICE), (uint32_t)F(p, CONTEXT), (uint32_t)F(p, STREAM), (uint32_t)F(p, CORR),
                  (uint8_t)F(p, COPY_KIND), (uint8_t)F(p, SRC_KIND), (uint8_t)F(p, DST_KIND), F(p, BYTES),
                  (F(p, FLAGS) & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0, (uint32_t)F(p, GRAPH), F(p, GRAPH_NODE));
    SETNULL(r, 11);
    SETNULL(r, 12);
    SET_OPT(r, 13, cv.aCall[VT_AC_SRC], joined && !(cv.callNull >> VT_AC_SRC & 1));
    SET_OPT(r, 14, cv.dst, joined && cv.dst != 0);
    vt__join_emit(d, &r, joined, &cv);
    return 0;
}

/* MEMCPY2 (peer to peer): one memcpy row with the source and destination devices. */
static int decode_memcpy_p2p(struct vt__decoder *d, const struct vt__act *p)
{
    struct vt__row r;
    struct vt__corr_val cv;
    int joined = take_corr(d, (uint32_t)F(p, CORR), &cv);
    see_ts(d, F(p, END));
    memcpy_common(d, &r, F(p, START), F(p, END), (uint32_t)F(p, DEVICE), (uint32_t)F(p, CONTEXT), (uint32_t)F(p, STREAM), (uint32_t)F(p, CORR),
                  (uint8_t)F(p, COPY_KIND), (uint8_t)F(p, SRC_KIND), (uint8_t)F(p, DST_KIND), F(p, BYTES),
                  (F(p, FLAGS) & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0, (uint32_t)F(p, GRAPH), F(p, GRAPH_NODE));
    SET_ID32(r, 11, F(p, SRC_DEVICE));
    SET_ID32(r, 12, F(p, DST_DEVICE));
    SET_OPT(r, 13, cv.aCall[VT_AC_SRC], joined && !(cv.callNull >> VT_AC_SRC & 1));
    SET_OPT(r, 14, cv.dst, joined && cv.dst != 0);
    vt__join_emit(d, &r, joined, &cv);
    return 0;
}

/* MEMSET: one memset row; dst from the API call. */
static int decode_memset(struct vt__decoder *d, const struct vt__act *p)
{
    struct vt__row r;
    struct vt__corr_val cv;
    int joined = take_corr(d, (uint32_t)F(p, CORR), &cv);
    see_ts(d, F(p, END));
    ROW_INIT(r, VT_T_MEMSET);
    set_interval(d, &r, 0, 1, F(p, START), F(p, END));
    SET_ID32(r, 2, (uint32_t)F(p, DEVICE));
    SET_ID32(r, 3, (uint32_t)F(p, CONTEXT));
    SET_ID32(r, 4, (uint32_t)F(p, STREAM));
    SET_OPT(r, 5, (uint32_t)F(p, CORR), (uint32_t)F(p, CORR) != 0);
    SET(r, 6, F(p, BYTES));
    SET(r, 7, F(p, VALUE));
    SET(r, 8, F(p, MEM_KIND));
    SET(r, 9, (F(p, FLAGS) & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1 : 0);
    SET_OPT(r, 10, cv.dst, joined && cv.dst != 0);
    SET_OPT(r, 11, (uint32_t)F(p, GRAPH), (uint32_t)F(p, GRAPH) != 0);
    SET_OPT(r, 12, F(p, GRAPH_NODE), F(p, GRAPH_NODE) != 0);
    vt__join_emit(d, &r, joined, &cv);
    return 0;
}

/*
 * The kernel_name row of kernel name zName (string nameId), met for the first time: its demangled
 * form and short name, both interned. The demangler is only looked for in the process (never
 * loaded into it); without one a mangled name gets NULL forms, and the meta row
 * `kernel_names_demangled` says so once. Runs in the writer thread, like all decoding.
 */
static void kernel_name(struct vt__decoder *d, int64_t nameId, const char *zName)
{
    struct vt__row r;
    char *zDem = NULL, zShort[512];
    const char *zReadable = zName;
    int64_t idDem = nameId;
    int rc = vt__demangle(zName, VT_DEMANGLE_PROCESS, &zDem);
    if (rc == VT_DEMANGLE_OK) zReadable = zDem, idDem = intern(d, zDem);
    else if (rc != VT_DEMANGLE_NOT) zReadable = NULL; /* unknown, never the mangled name */
    if (rc == VT_DEMANGLE_NONE && !d->bNoDemanglerNoted && !vt__demangle_available(VT_DEMANGLE_PROCESS)) {
        d->bNoDemanglerNoted = 1;
        ROW_INIT(r, VT_T_META);
        r.v[0].z = "kernel_names_demangled";
        r.v[1].z = "0: no __cxa_demangle in the process";
        d->xEmit(d->pCtx, &r);
    }
    ROW_INIT(r, VT_T_KERNEL_NAME);
    SET(r, 0, nameId);
    SET_STR(r, 1, zReadable ? idDem : -1);
    /* a short name cut by the buffer would be a wrong one: NULL instead */
    if (zReadable && vt__short_name(zReadable, zShort, sizeof zShort) < sizeof zShort)
        SET(r, 2, strcmp(zShort, zReadable) == 0 ? idDem : intern(d, zShort));
    else SETNULL(r, 2);
    d->xEmit(d->pCtx, &r);
    free(zDem);
}

/* KERNEL / CONCURRENT_KERNEL: one kernel row, name interned. */
static int decode_kernel(struct vt__decoder *d, const struct vt__act *p)
{
    struct vt__row r;
    struct vt__corr_val cv;
    int joined = F(p, GRAPH) == 0 && take_corr(d, (uint32_t)F(p, CORR), &cv);
    size_t nCached = d->intern.nUsed;
    if (joined) vt__join_alone(d, &cv);
    int64_t nameId = intern(d, VT_ACT_STR(p, VT_F_NAME));
    /* a name now cached is met for the first time: its readable forms, once (a name met again
     * when the cache is full gets a new string row each time, and no kernel_name row) */
    if (d->intern.nUsed > nCached) kernel_name(d, nameId, VT_ACT_STR(p, VT_F_NAME));
    see_ts(d, F(p, END));
    ROW_INIT(r, VT_T_KERNEL);
    set_interval(d, &r, 0, 1, F(p, START), F(p, END));
    SET_ID32(r, 2, F(p, DEVICE));
    SET_ID32(r, 3, F(p, CONTEXT));
    SET_ID32(r, 4, F(p, STREAM));
    SET_OPT(r, 5, (uint32_t)F(p, CORR), (uint32_t)F(p, CORR) != 0);
    SET_STR(r, 6, nameId);
    SET(r, 7, (int32_t)F(p, GRID_X));
    SET(r, 8, (int32_t)F(p, GRID_Y));
    SET(r, 9, (int32_t)F(p, GRID_Z));
    SET(r, 10, (int32_t)F(p, BLOCK_X));
    SET(r, 11, (int32_t)F(p, BLOCK_Y));
    SET(r, 12, (int32_t)F(p, BLOCK_Z));
    SET(r, 13, (int32_t)F(p, SHARED_STATIC));
    SET(r, 14, (int32_t)F(p, SHARED_DYNAMIC));
    SET(r, 15, F(p, REGISTERS));
    SET_OPT(r, 16, F(p, GRAPH), F(p, GRAPH) != 0);
    SET_OPT(r, 17, F(p, GRAPH_NODE), F(p, GRAPH_NODE) != 0);
    /* A graph's kernels have no launch call of their own and their parameters are not read:
     * their uses are unknown (0). Another kernel's come from its launch call, when joined. */
    if (F(p, GRAPH) != 0) SET(r, 18, 0);
    else if (joined && cv.scan != VT_SCAN_NONE) SET(r, 18, cv.scan == VT_SCAN_DONE);
    else SETNULL(r, 18);
    d->xEmit(d->pCtx, &r);
    return 0;
}

/* Take id out of the set m of start/end range ids: 1 if it was there. */
static int nvtxid_take(struct vt__boundmap *m, uint64_t id)
{
    struct nvtxid_val *v = vt__boundmap_get(m, key64(id));
    if (!v || v->id != id) return 0;
    vt__boundmap_remove(m, key64(id), NULL);
    return 1;
}

/*
 * Write one nvtx_range row. end < 0 means the range never ended (end NULL, not
 * counted as an unknown time); an end of 0 is a time CUPTI could not take.
 * endThread: the thread that ended it when another than the one that
 * started it, else -1.
 */
static void emit_nvtx(struct vt__decoder *d, const struct nvtx_val *v, int64_t end, int64_t endThread)
{
    struct vt__row r;
    ROW_INIT(r, VT_T_NVTX_RANGE);
    if (end < 0) {
        set_instant(d, &r, 0, (uint64_t)v->start);
        SETNULL(r, 1);
    } else {
        set_interval(d, &r, 0, 1, (uint64_t)v->start, (uint64_t)end);
    }
    SET(r, 2, v->kind);
    SET_STR(r, 3, v->name_id);
    SET_STR(r, 4, v->domain_id);
    SET_OPT(r, 5, v->thread, v->thread >= 0);
    SET_OPT(r, 6, v->depth, v->depth >= 0);
    SET_OPT(r, 7, endThread, endThread >= 0);
    d->xEmit(d->pCtx, &r);
}

/* An open range is being written without its end: undo its push/pop nesting. */
static void nvtx_unnest(struct vt__decoder *d, const struct nvtx_val *v)
{
    if (v->kind != VT_NVTX_PUSHPOP || v->depth < 0) return;
    vt__depth_pop(&d->depths, v->thread, v->domain_id);
}

/*
 * MARKER: marks become rows at once; START is held until its END (paired by
 * id). The marker record does not say whether a range is push/pop or
 * start/end (both are thread markers): the NVTX callbacks do, as host records
 * (VT_HREC_NVTX) naming the ids of start/end ranges, at their start (the id
 * nvtxRangeStart returned) and at their end (the id nvtxRangeEnd was given).
 * A range neither names is push/pop and nests on its thread and domain; one
 * recognized only at its end loses the depth it was given.
 */
static int decode_marker(struct vt__decoder *d, const struct vt__act *p)
{
    struct nvtx_val v;
    int isThread = F(p, OBJ_KIND) == CUPTI_ACTIVITY_OBJECT_THREAD;
    see_ts(d, F(p, TIMESTAMP));
    memset(&v, 0, sizeof v);
    v.start = (int64_t)F(p, TIMESTAMP);
    v.thread = isThread ? (int64_t)F(p, OBJ_THREAD) : -1;
    if (F(p, FLAGS) & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        v.kind = VT_NVTX_MARK;
        v.name_id = intern(d, VT_ACT_STR(p, VT_F_NAME));
        v.domain_id = intern(d, VT_ACT_STR(p, VT_F_DOMAIN));
        v.depth = -1;
        if (!isThread) v.thread = -1;
        emit_nvtx(d, &v, v.start, -1);
        return 0;
    }
    if (F(p, FLAGS) & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        struct nvtx_val old;
        uint32_t oldKey = 0;
        v.kind = nvtxid_take(&d->nvtxStart, (uint32_t)F(p, ID)) || !isThread ? VT_NVTX_STARTEND : VT_NVTX_PUSHPOP;
        v.name_id = intern(d, VT_ACT_STR(p, VT_F_NAME));
        v.domain_id = intern(d, VT_ACT_STR(p, VT_F_DOMAIN));
        v.depth = -1;
        if (v.kind == VT_NVTX_PUSHPOP) v.depth = vt__depth_push(&d->depths, v.thread, v.domain_id);
        if (vt__boundmap_put(&d->nvtx, (uint32_t)F(p, ID), &v, &oldKey, &old)) {
            d->nDroppedNvtx++;
            nvtx_unnest(d, &old);
            emit_nvtx(d, &old, -1, -1);
        }
        return 0;
    }
    if (F(p, FLAGS) & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        struct nvtx_val open;
        if (vt__boundmap_remove(&d->nvtx, (uint32_t)F(p, ID), &open)) {
            nvtx_unnest(d, &open);
            if (nvtxid_take(&d->nvtxEnd, (uint32_t)F(p, ID))) { /* ended by nvtxRangeEnd: a start/end range */
                open.kind = VT_NVTX_STARTEND;
                open.depth = -1;
            }
            emit_nvtx(d, &open, (int64_t)F(p, TIMESTAMP),
                      isThread && v.thread != open.thread ? v.thread : -1);
        }
        return 0;
    }
    return 0; /* synchronization markers (acquire/release): nothing stored */
}

/* SYNCHRONIZATION: one sync_event row. */
static int decode_sync(struct vt__decoder *d, const struct vt__act *p)
{
    struct vt__row r;
    see_ts(d, F(p, END));
    ROW_INIT(r, VT_T_SYNC_EVENT);
    set_interval(d, &r, 0, 1, F(p, START), F(p, END));
    SET(r, 2, F(p, SYNC_TYPE));
    SETNULL(r, 3);
    SET_ID32(r, 4, F(p, CONTEXT));
    SET_ID32(r, 5, F(p, STREAM));
    SET_OPT(r, 6, F(p, CORR), F(p, CORR) != 0);
    SET_ID32(r, 7, F(p, CUDA_EVENT));
    SET(r, 8, F(p, RETURN)); /* a CUresult: CUDA_ERROR_NOT_READY for a query that found work pending */
    d->xEmit(d->pCtx, &r);
    return 0;
}

/* Lower-case name of a CUPTI overhead kind. */
static const char *overhead_name(CUpti_ActivityOverheadKind k)
{
    switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_UNKNOWN: return "unknown";
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "driver_compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "cupti_buffer_flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "cupti_instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "cupti_resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
        return "runtime_triggered_module_loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "lazy_function_loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "command_buffer_full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "activity_buffer_request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "uvm_activity_init";
    default: return "other";
    }
}

/* OVERHEAD: one overhead row, source 'cupti'. */
static int decode_overhead(struct vt__decoder *d, const struct vt__act *p)
{
    struct vt__row r;
    int64_t objId;
    switch (F(p, OBJ_KIND)) {
    case CUPTI_ACTIVITY_OBJECT_PROCESS: objId = (int64_t)F(p, OBJ_PROCESS); break;
    case CUPTI_ACTIVITY_OBJECT_THREAD: objId = (int64_t)F(p, OBJ_THREAD); break;
    case CUPTI_ACTIVITY_OBJECT_DEVICE: objId = (int64_t)F(p, OBJ_DEVICE); break;
    case CUPTI_ACTIVITY_OBJECT_CONTEXT: objId = (int64_t)F(p, OBJ_CONTEXT); break;
    case CUPTI_ACTIVITY_OBJECT_STREAM: objId = (int64_t)F(p, OBJ_STREAM); break;
    default: objId = -1; break;
    }
    see_ts(d, F(p, END));
    ROW_INIT(r, VT_T_OVERHEAD);
    r.v[0].z = "cupti";
    r.v[1].z = overhead_name((CUpti_ActivityOverheadKind)F(p, OVERHEAD_KIND));
    set_interval(d, &r, 2, 3, F(p, START), F(p, END));
    SET(r, 4, F(p, OBJ_KIND));
    SET_OPT(r, 5, objId, objId >= 0);
    SET(r, 6, 1);
    d->xEmit(d->pCtx, &r);
    return 0;
}

/* DEVICE: one device row unless the device is already described. */
static int decode_device(struct vt__decoder *d, const struct vt__act *p)
{
    struct vt__row r;
    char zUuid[48];
    const unsigned char *u = p->uuid;
    snprintf(zUuid, sizeof zUuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    ROW_INIT(r, VT_T_DEVICE);
    SET(r, 0, F(p, ID));
    SETZ(r, 1, VT_ACT_STR(p, VT_F_NAME));
    r.v[2].z = zUuid;
    SET(r, 3, F(p, GLOBAL_MEMORY));
    SET(r, 4, F(p, CC_MAJOR));
    SET(r, 5, F(p, CC_MINOR));
    SET(r, 6, F(p, SM_COUNT));
    SETNULL(r, 7);
    SETNULL(r, 8);
    SET(r, 9, F(p, BANDWIDTH));
    d->xEmit(d->pCtx, &r);
    return 0;
}

int vt__decode_activity(struct vt__decoder *d, const CUpti_Activity *pRec)
{
    struct vt__act a;
    int rc;
    d->nDecoded++;
    rc = vt__layout_read(d->layout, pRec, &a);
    if (rc == 2) { /* a kind whose record layout this CUPTI's version leaves unknown: not read */
        d->nNotDecoded++;
        return 1;
    }
    if (rc == 0) {
        switch (a.kind) {
        case VT_LK_MEMORY: rc = decode_memory(d, &a); break;
        case VT_LK_POOL: rc = decode_pool(d, &a); break;
        case VT_LK_MEMCPY: rc = decode_memcpy(d, &a); break;
        case VT_LK_MEMCPY_P2P: rc = decode_memcpy_p2p(d, &a); break;
        case VT_LK_MEMSET: rc = decode_memset(d, &a); break;
        case VT_LK_KERNEL: rc = decode_kernel(d, &a); break;
        case VT_LK_MARKER: rc = decode_marker(d, &a); break;
        case VT_LK_SYNC: rc = decode_sync(d, &a); break;
        case VT_LK_OVERHEAD: rc = decode_overhead(d, &a); break;
        case VT_LK_DEVICE: rc = decode_device(d, &a); break;
        default: rc = 1; break;
        }
    }
    if (rc) d->nUnknown++;
    return rc;
}

/* API_CALL: one api_call row; remember the arguments for the join with the activity record. */
static void host_api(struct vt__decoder *d, const struct vt_hrec *p)
{
    struct vt__row r;
    const char *zFamily = api_family(p->u.api.api);
    int bExpected;
    see_ts(d, p->u.api.end > p->u.api.start ? p->u.api.end : p->u.api.start);
    ROW_INIT(r, VT_T_API_CALL);
    SET(r, 0, p->u.api.api);
    SET_OPT(r, 1, p->u.api.correlation, p->u.api.correlation != 0);
    set_interval(d, &r, 2, 3, p->u.api.start, p->u.api.end);
    SET(r, 4, p->u.api.thread);
    SET_OPT(r, 5, p->u.api.device, p->u.api.device >= 0);
    SET(r, 6, p->u.api.status);
    SET_OPT(r, 7, p->u.api.bytes, p->u.api.bytes != 0);
    SET_OPT(r, 8, p->u.api.ptr, p->u.api.ptr != 0);
    SET_OPT(r, 9, p->u.api.src, p->u.api.src != 0);
    SET_OPT(r, 10, p->u.api.dst, p->u.api.dst != 0);
    SET_OPT(r, 11, p->u.api.stream, p->u.api.stream != 0);
    SET_OPT(r, 12, p->u.api.stack_id, p->u.api.stack_id > 0);

    bExpected = !strcmp(zFamily, "alloc") || !strcmp(zFamily, "free") || !strcmp(zFamily, "memcpy") ||
                !strcmp(zFamily, "memset");
    /* VMM and import calls are remembered too, so that a MEMORY2 record of theirs (if CUPTI makes
     * one) is recognized; none may follow, so forgetting them is no loss */
    /* so are kernel launches, for their kernels' args_scanned */
    if (p->u.api.status == 0 && p->u.api.correlation != 0 &&
        (bExpected || api_owns_memory_rows(p->u.api.api) || p->u.api.scan != VT_SCAN_NONE)) {
        struct vt__corr_val cv, old, *pSame = vt__boundmap_get(&d->corr, p->u.api.correlation);
        uint32_t oldKey;
        memset(&cv, 0, sizeof cv);
        for (int i = 0; i < VT_AC_N; i++) cv.aCall[i] = r.v[i].i;
        cv.callNull = r.nullMask;
        cv.bExpected = (int16_t)bExpected;
        cv.scan = (int16_t)p->u.api.scan;
        cv.dst = p->u.api.dst ? p->u.api.dst : (!strcmp(zFamily, "memset") ? p->u.api.ptr : 0);
        /* a call whose activity record follows waits for it (bounded by the map): see vt__join_emit */
        cv.bParked = (int16_t)(bExpected && d->xEmitFold);
        cv.parkMs = (uint32_t)d->nowMs;
        if (pSame) vt__join_alone(d, pSame); /* a call of the same correlation id still waiting: replaced */
        if (vt__boundmap_put(&d->corr, p->u.api.correlation, &cv, &oldKey, &old)) {
            if (old.bExpected) d->nDroppedCorr++;
            vt__join_alone(d, &old);
        }
        if (cv.bParked) return;
    }
    d->xEmit(d->pCtx, &r);
}

/*
 * VMM and import rows: complete what one call cannot know from the calls
 * before it. A release is paired with its handle's create (kind, device,
 * bytes) or import (then it is an import_close: the memory was never this
 * process's); a map takes its handle's kind; an unmap gets the handle and kind
 * of the map at its address; an IPC close the bytes of its open.
 */
static void host_memory_fill(struct vt__decoder *d, struct vt_hrec_mem *m)
{
    struct mem_val v;
    memset(&v, 0, sizeof v);
    switch (m->op) {
    case VT_MEMOP_VMM_CREATE:
    case VT_MEMOP_IMPORT:
        v.id = m->address;
        v.bytes = m->bytes;
        v.handle = m->handle;
        v.kind = m->mem_kind;
        v.device = m->device;
        v.bImport = m->op == VT_MEMOP_IMPORT;
        mem_put(m->handle ? &d->handles : &d->maps, &v); /* a handle import, or an IPC mapping */
        break;
    case VT_MEMOP_VMM_RELEASE:
        if (!mem_get(&d->handles, m->address, 1, &v)) break;
        if (v.bImport) m->op = VT_MEMOP_IMPORT_CLOSE;
        m->mem_kind = v.kind;
        m->device = v.device;
        m->bytes = v.bytes;
        break;
    case VT_MEMOP_VMM_MAP:
        if (mem_get(&d->handles, m->handle, 0, &v)) m->mem_kind = v.kind;
        else v.kind = m->mem_kind;
        v.id = m->address;
        v.bytes = m->bytes;
        v.handle = m->handle;
        mem_put(&d->maps, &v);
        break;
    case VT_MEMOP_VMM_UNMAP:
        if (!mem_get(&d->maps, m->address, 1, &v)) break;
        m->handle = v.handle;
        m->mem_kind = v.kind;
        break;
    case VT_MEMOP_IMPORT_CLOSE:
        if (mem_get(&d->maps, m->address, 1, &v) && v.bImport && !m->bytes) m->bytes = v.bytes;
        break;
    default: break;
    }
}

/*
 * Resolve the raw return address *pPc of a native frame (modres.h): on
 * success *pPc becomes module-relative, *pzModule and (when the frame has no
 * name) *pzFunction are set, and the module is remembered for its `module`
 * row (written by write_module once its path has a string id).
 */
static void resolve_pc(struct vt__decoder *d, uint64_t *pPc, const char **pzModule, const char **pzFunction)
{
    struct vt__modinfo *mi = NULL;
    const char *zFn = NULL;
    uint64_t rel = 0;
    d->pPendingModule = NULL;
    if (!d->modres || !vt__modres_resolve(d->modres, *pPc, &rel, &zFn, &mi)) return;
    *pPc = rel;
    *pzModule = mi->zPath;
    if (!*pzFunction) *pzFunction = zFn;
    if (!mi->bRowWritten) d->pPendingModule = mi;
}

/* The `module` row of the module resolve_pc just met, whose path is string pathId. */
static void write_module(struct vt__decoder *d, int64_t pathId)
{
    struct vt__modinfo *mi = d->pPendingModule;
    struct vt__row r;
    d->pPendingModule = NULL;
    mi->bRowWritten = 1;
    ROW_INIT(r, VT_T_MODULE);
    SET(r, 0, pathId);
    SETZ(r, 1, mi->zBuildId[0] ? mi->zBuildId : NULL);
    SET_OPT(r, 2, mi->fileBytes, mi->fileBytes >= 0);
    SET_OPT(r, 3, mi->mtimeNs, mi->mtimeNs >= 0);
    d->xEmit(d->pCtx, &r);
}

/* STACK: the stack row and one frame row per frame, names interned, raw addresses resolved. */
static void host_stack(struct vt__decoder *d, const struct vt_hrec *p)
{
    struct vt__row r;
    int i;
    ROW_INIT(r, VT_T_STACK);
    SET(r, 0, p->u.stack.id);
    SET(r, 1, p->u.stack.hash);
    SET(r, 2, p->u.stack.nFrame);
    d->xEmit(d->pCtx, &r);
    for (i = 0; p->u.stack.aFrame && i < p->u.stack.nFrame; i++) {
        const struct vt_frame *f = &p->u.stack.aFrame[i];
        const char *zFunction = f->zFunction, *zModule = f->zModule;
        uint64_t pc = f->pc;
        int64_t fn, file, mod;
        /* a raw return address (captured in a callback): resolved here, on the writer thread */
        if (f->kind == VT_FRAME_NATIVE && !zModule && pc) resolve_pc(d, &pc, &zModule, &zFunction);
        fn = intern(d, zFunction);
        file = intern(d, f->zFile);
        mod = intern(d, zModule);
        if (mod >= 0 && d->pPendingModule) write_module(d, mod);
        ROW_INIT(r, VT_T_FRAME);
        SET(r, 0, p->u.stack.id);
        SET(r, 1, i);
        SET(r, 2, f->kind);
        SET_OPT(r, 3, pc, pc != 0);
        SET_STR(r, 4, fn);
        SET_STR(r, 5, file);
        SET_OPT(r, 6, f->line, f->line > 0);
        SET_STR(r, 7, mod);
        d->xEmit(d->pCtx, &r);
    }
}

void vt__decode_host(struct vt__decoder *d, struct vt_hrec *p)
{
    struct vt__row r;
    switch (p->type) {
    case VT_HREC_API_CALL: host_api(d, p); break;
    case VT_HREC_OOM:
        see_ts(d, p->u.oom.ts);
        ROW_INIT(r, VT_T_OOM_EVENT);
        set_instant(d, &r, 0, p->u.oom.ts);
        SET(r, 1, p->u.oom.api);
        SET_OPT(r, 2, p->u.oom.correlation, p->u.oom.correlation != 0);
        SET_OPT(r, 3, p->u.oom.device, p->u.oom.device >= 0);
        SET(r, 4, p->u.oom.bytes);
        SET(r, 5, p->u.oom.status);
        SET_OPT(r, 6, p->u.oom.free_bytes, p->u.oom.total_bytes != 0);
        SET_OPT(r, 7, p->u.oom.total_bytes, p->u.oom.total_bytes != 0);
        SET(r, 8, p->u.oom.thread);
        SET_OPT(r, 9, p->u.oom.stack_id, p->u.oom.stack_id > 0);
        d->xEmit(d->pCtx, &r);
        break;
    case VT_HREC_MEMORY:
        see_ts(d, p->u.mem.ts);
        host_memory_fill(d, &p->u.mem);
        ROW_INIT(r, VT_T_MEMORY_EVENT);
        set_instant(d, &r, 0, p->u.mem.ts);
        SET(r, 1, p->u.mem.op);
        SET(r, 2, p->u.mem.mem_kind);
        SET(r, 3, p->u.mem.address);
        SET_OPT(r, 4, p->u.mem.bytes, p->u.mem.bytes != 0);
        SET_OPT(r, 5, p->u.mem.device, p->u.mem.device >= 0);
        SETNULL(r, 6);
        SETNULL(r, 7);
        SET_OPT(r, 8, p->u.mem.correlation, p->u.mem.correlation != 0);
        SET_OPT(r, 9, p->u.mem.api, p->u.mem.api != 0);
        SET(r, 10, 0);
        SETNULL(r, 11);
        SET_OPT(r, 12, p->u.mem.handle, p->u.mem.handle != 0);
        SETNULL(r, 13);
        SETNULL(r, 14);
        SETNULL(r, 15);
        SETNULL(r, 16);
        SET(r, 17, p->u.mem.thread);
        SET_OPT(r, 18, p->u.mem.stack_id, p->u.mem.stack_id > 0);
        SETNULL(r, 19);
        d->xEmit(d->pCtx, &r);
        break;
    case VT_HREC_BUFFER_USE:
        ROW_INIT(r, VT_T_BUFFER_USE);
        SET(r, 0, p->u.use.correlation);
        SET(r, 1, p->u.use.kind);
        SET(r, 2, p->u.use.address);
        set_instant(d, &r, 3, p->u.use.ts);
        SET_OPT(r, 4, p->u.use.device, p->u.use.device >= 0);
        d->xEmit(d->pCtx, &r);
        break;
    case VT_HREC_DROPPED:
        ROW_INIT(r, VT_T_DROPPED);
        set_instant(d, &r, 0, p->u.dropped.ts ? p->u.dropped.ts : d->lastTs);
        SET(r, 1, p->u.dropped.source);
        SETZ(r, 2, p->u.dropped.zWhat);
        SET(r, 3, p->u.dropped.count);
        SETNULL(r, 4);
        SETNULL(r, 5);
        SETNULL(r, 6);
        d->xEmit(d->pCtx, &r);
        break;
    case VT_HREC_OVERHEAD:
        see_ts(d, p->u.overhead.end);
        ROW_INIT(r, VT_T_OVERHEAD);
        r.v[0].z = "vramtrace";
        r.v[1].z = p->u.overhead.zKind ? p->u.overhead.zKind : "unknown";
        set_interval(d, &r, 2, 3, p->u.overhead.start, p->u.overhead.end);
        SETNULL(r, 4);
        SETNULL(r, 5);
        SET(r, 6, p->u.overhead.count);
        d->xEmit(d->pCtx, &r);
        break;
    case VT_HREC_STACK: host_stack(d, p); break;
    case VT_HREC_NVTX: {
        /* a start/end range's id, named at its start or at its end (see decode_marker); the
         * marker record's id is 32 bits wide, NVTX's range id 64: the low 32 bits are compared */
        struct nvtxid_val v;
        v.id = (uint32_t)p->u.nvtx.id;
        if (v.id) vt__boundmap_put(p->u.nvtx.bEnd ? &d->nvtxEnd : &d->nvtxStart, (uint32_t)v.id, &v, NULL, NULL);
        break;
    }
    case VT_HREC_DEVICE: {
        char zName[sizeof p->u.device.zName], zUuid[sizeof p->u.device.zUuid];
        snprintf(zName, sizeof zName, "%.*s", (int)sizeof zName - 1, p->u.device.zName);
        snprintf(zUuid, sizeof zUuid, "%.*s", (int)sizeof zUuid - 1, p->u.device.zUuid);
        ROW_INIT(r, VT_T_DEVICE_HOST);
        SET(r, 0, p->u.device.id);
        SETZ(r, 1, zName[0] ? zName : NULL);
        SETZ(r, 2, zUuid[0] ? zUuid : NULL);
        SET(r, 3, p->u.device.total_bytes);
        SET(r, 4, p->u.device.cc_major);
        SET(r, 5, p->u.device.cc_minor);
        SET(r, 6, p->u.device.sm_count);
        SET_OPT(r, 7, p->u.device.pci_bus, p->u.device.pci_bus >= 0);
        SET_OPT(r, 8, p->u.device.pci_device, p->u.device.pci_device >= 0);
        SET_OPT(r, 9, p->u.device.bandwidth_kbps, p->u.device.bandwidth_kbps != 0);
        d->xEmit(d->pCtx, &r);
        break;
    }
    case VT_HREC_META:
        if (p->u.meta.zValue) {
            char zKey[sizeof p->u.meta.zKey + 1];
            memcpy(zKey, p->u.meta.zKey, sizeof p->u.meta.zKey);
            zKey[sizeof p->u.meta.zKey] = '\0';
            ROW_INIT(r, VT_T_META);
            r.v[0].z = zKey;
            r.v[1].z = p->u.meta.zValue;
            d->xEmit(d->pCtx, &r);
        }
        break;
    default: break;
    }
    vt__hrec_release(p);
}

/* Drain visitor: write one open range with end NULL. */
static void finish_one(void *pCtx, uint32_t key, void *pVal)
{
    (void)key;
    emit_nvtx((struct vt__decoder *)pCtx, (const struct nvtx_val *)pVal, -1, -1);
}

void vt__decoder_finish(struct vt__decoder *d)
{
    vt__boundmap_drain(&d->nvtx, finish_one, d);
    vt__join_finish(d);
}
