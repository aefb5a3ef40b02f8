/* Export: a trace's device allocations as a PyTorch memory snapshot (a pickle PyTorch's memory_viz opens). */
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "import/addrmap.h"
#include "util/text.h"
#include "vramtrace/schema.h"

/*
 * The file is what torch.cuda.memory._snapshot() returns, pickled (protocol 2, no class
 * references): {'device_traces': [events of device 0, of device 1, ...], 'segments': [...]}.
 * Each device allocation of the trace is one segment holding one block of its size: at its
 * time 'segment_alloc' then 'alloc'; at its free 'free_requested', 'free_completed', then
 * 'segment_free'; those live at the end are the dump's segments, each with its block
 * 'active_allocated'. Events carry time_us (the wall clock where the trace has anchors, else
 * microseconds from its start plus one) and frames from the trace's stacks ({filename, line,
 * name}, innermost first; a frames list written once and referred to again through the
 * pickle's memo). Host and managed memory, which memory_viz does not draw, are left out and
 * counted. One pass over the memory events per device keeps each device's list in time order.
 * A trace whose only allocations are a framework allocator's blocks (a torch.profiler import)
 * has those as its allocations; a trace with both levels writes CUDA's allocations.
 */

struct snapw {
    FILE *f;
    struct vt_tracefile *pF;
    int device;             /* the device whose events this pass writes */
    sqlite3_stmt *pFrames;
    struct vt__addrmap memo; /* stack id -> memo index of its frames list */
    uint32_t nMemo;
    struct vt_export_snapstats *pSt;
    int64_t *aLive;         /* allocations live at the end: (device, address, bytes, stack) */
    size_t nLive, nLiveAlloc;
    int rc;                 /* SQLite code of a failed frame read, or SQLITE_NOMEM */
    int bBlocks;            /* the allocations are the allocator's blocks (tensor_event): the trace has no CUDA allocation */
};

static void pk_u32(FILE *f, uint32_t v)
{
    unsigned char a[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    fwrite(a, 1, 4, f);
}

/* An integer: BININT when it fits in 32 bits, else LONG1 of 8 bytes. */
static void pk_int(FILE *f, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) {
        fputc('J', f);
        pk_u32(f, (uint32_t)(int32_t)v);
        return;
    }
    fputc(0x8a, f);
    fputc(8, f);
    for (int i = 0; i < 8; i++) fputc((int)(((uint64_t)v >> (8 * i)) & 0xff), f);
}

/* A str: BINUNICODE of z with every byte that is not part of well-formed UTF-8 as '?' (Python decodes it strictly). */
static void pk_str(FILE *f, const char *z)
{
    size_t n = z ? strlen(z) : 0, i = 0;
    fputc('X', f);
    pk_u32(f, (uint32_t)n); /* replacing a byte by '?' keeps the length */
    while (i < n) {
        int k = vt__utf8_len((const unsigned char *)z + i, n - i, NULL);
        if (k > 0) {
            fwrite(z + i, 1, (size_t)k, f);
            i += (size_t)k;
        } else {
            fputc('?', f);
            i++;
        }
    }
}

/* key: value (SETITEM onto the dict below), value an int. */
static void pk_kv_int(FILE *f, const char *zKey, int64_t v)
{
    pk_str(f, zKey);
    pk_int(f, v);
    fputc('s', f);
}

static void pk_kv_str(FILE *f, const char *zKey, const char *zVal)
{
    pk_str(f, zKey);
    pk_str(f, zVal);
    fputc('s', f);
}

/*
 * The frames list of stack stackId, innermost first (an empty list when unknown): written
 * once and memoized, referred to again by its memo index. 0, or -1 (w->rc set).
 */
static int pk_frames(struct snapw *w, int64_t stackId)
{
    FILE *f = w->f;
    int64_t *pIdx;
    int rc;
    if (stackId < 0 || !w->pFrames) {
        fputc(']', f);
        return 0;
    }
    if ((pIdx = vt__addrmap_get(&w->memo, (uint64_t)stackId)) != NULL) {
        fputc('j', f); /* LONG_BINGET */
        pk_u32(f, (uint32_t)*pIdx);
        return 0;
    }
    fputc(']', f);
    sqlite3_reset(w->pFrames);
    sqlite3_bind_int64(w->pFrames, 1, stackId);
    while ((rc = sqlite3_step(w->pFrames)) == SQLITE_ROW) {
        int bPy = sqlite3_column_int(w->pFrames, 0) == VT_FRAME_PYTHON;
        const char *zFn = (const char *)sqlite3_column_text(w->pFrames, 2);
        const char *zFile = (const char *)sqlite3_column_text(w->pFrames, 3);
        const char *zMod = (const char *)sqlite3_column_text(w->pFrames, 5);
        char zPc[32];
        if (!zFn) {
            if (sqlite3_column_type(w->pFrames, 1) == SQLITE_NULL) snprintf(zPc, sizeof zPc, "??");
            else snprintf(zPc, sizeof zPc, "0x%llx", (unsigned long long)sqlite3_column_int64(w->pFrames, 1));
            zFn = zPc;
        }
        fputc('}', f);
        pk_kv_str(f, "filename", zFile ? zFile : !bPy && zMod ? zMod : "??");
        pk_kv_int(f, "line", sqlite3_column_type(w->pFrames, 4) == SQLITE_NULL ? 0 : sqlite3_column_int64(w->pFrames, 4));
        pk_kv_str(f, "name", zFn);
        fputc('a', f);
    }
    if (rc != SQLITE_DONE) {
        w->rc = rc;
        return -1;
    }
    if (vt__addrmap_put(&w->memo, (uint64_t)stackId, w->nMemo) != 0) {
        w->rc = SQLITE_NOMEM;
        return -1;
    }
    fputc('r', f); /* LONG_BINPUT */
    pk_u32(f, w->nMemo++);
    return 0;
}

/* time_us of trace time ts: the wall clock where known, else microseconds from the start plus one (memory_viz and
 * PyTorch's loaders want a positive number); -1 when ts is unknown. */
static int64_t time_us(const struct vt_tracefile *pF, int64_t ts)
{
    int64_t wall;
    if (ts < 0 || !pF->bTimes) return -1;
    if ((wall = vt__read_wall(pF, ts)) > 0) return wall / 1000;
    return (ts > pF->t0 ? ts - pF->t0 : 0) / 1000 + 1;
}

/* One event of the device's list (appended to it): action, addr, size, stream 0, time_us, frames. 0 or -1. */
static int pk_event(struct snapw *w, const char *zAction, const struct vt_life *l, int64_t ts)
{
    FILE *f = w->f;
    int64_t us = time_us(w->pF, ts);
    fputc('}', f);
    pk_kv_str(f, "action", zAction);
    pk_kv_int(f, "addr", l->address);
    pk_kv_int(f, "size", l->bytes);
    pk_kv_int(f, "stream", 0);
    if (us > 0) pk_kv_int(f, "time_us", us);
    pk_str(f, "frames");
    if (pk_frames(w, l->stackId) != 0) return -1;
    fputc('s', f);
    fputc('a', f);
    w->pSt->nEvent++;
    return 0;
}

/* Whether l is a device allocation of the device this pass writes. */
static int mine(const struct snapw *w, const struct vt_life *l)
{
    return l->acct >= 0 && l->acct == w->device && l->bytes > 0;
}

static int on_begin(void *pArg, struct vt_life *l)
{
    struct snapw *w = pArg;
    if (l->acct == VT_ACCT_PINNED || l->acct == VT_ACCT_MANAGED) {
        if (w->device == 0) w->pSt->nHost++;
        return 0;
    }
    if (!mine(w, l)) return 0;
    w->pSt->nAlloc++;
    if (pk_event(w, "segment_alloc", l, l->allocTs) != 0) return -1;
    return pk_event(w, "alloc", l, l->allocTs);
}

static int on_end(void *pArg, struct vt_life *l)
{
    struct snapw *w = pArg;
    if (!mine(w, l)) return 0;
    if (l->status == VT_LIFE_LIVE_AT_END) { /* a segment of the dump */
        if (w->nLive + 4 > w->nLiveAlloc) {
            size_t nNew = w->nLiveAlloc ? 2 * w->nLiveAlloc : 256;
            int64_t *a = realloc(w->aLive, sizeof *a * nNew);
            if (!a) {
                w->rc = SQLITE_NOMEM;
                return -1;
            }
            w->aLive = a;
            w->nLiveAlloc = nNew;
        }
        w->aLive[w->nLive++] = l->acct;
        w->aLive[w->nLive++] = l->address;
        w->aLive[w->nLive++] = l->bytes;
        w->aLive[w->nLive++] = l->stackId;
        return 0;
    }
    w->pSt->nFree++;
    if (pk_event(w, "free_requested", l, l->freeTs) != 0 || pk_event(w, "free_completed", l, l->freeTs) != 0) return -1;
    return pk_event(w, "segment_free", l, l->freeTs);
}

/* The highest device id the trace's memory events (tensor events: bBlocks) name, or -1 when none. SQLite code. */
static int max_device(sqlite3 *db, int bBlocks, int *pMax)
{
    sqlite3_stmt *p = NULL;
    int rc = sqlite3_prepare_v2(db, bBlocks ? "SELECT max(device) FROM tensor_event WHERE device >= 0"
                                            : "SELECT max(device) FROM memory_event WHERE device >= 0", -1, &p, NULL);
    *pMax = -1;
    if (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        if (sqlite3_column_type(p, 0) != SQLITE_NULL) *pMax = sqlite3_column_int(p, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(p);
    return rc;
}

int vt__export_snapshot(FILE *f, struct vt_tracefile *pF, struct vt_export_snapstats *pSt, char **pzErr)
{
    static const struct vt_live_hooks hooks0 = {NULL, NULL, NULL, on_end, NULL};
    struct snapw w;
    int rc, maxDev = -1;
    memset(&w, 0, sizeof w);
    memset(pSt, 0, sizeof *pSt);
    w.f = f;
    w.pF = pF;
    w.pSt = pSt;
    *pzErr = NULL;
    w.bBlocks = pF->bHaveTensors && pF->aMemOp[VT_MEMOP_ALLOC] == 0 && pF->aMemOp[VT_MEMOP_VMM_CREATE] == 0;
    rc = max_device(pF->db, w.bBlocks, &maxDev);
    if (rc == SQLITE_OK && sqlite3_prepare_v2(pF->db,
                                              "SELECT f.kind, f.pc, fn.value, fl.value, f.line, md.value FROM frame f"
                                              " LEFT JOIN string fn ON fn.id = f.function_id"
                                              " LEFT JOIN string fl ON fl.id = f.file_id"
                                              " LEFT JOIN string md ON md.id = f.module_id"
                                              " WHERE f.stack_id = ? ORDER BY f.idx",
                                              -1, &w.pFrames, NULL) != SQLITE_OK)
        w.pFrames = NULL; /* a trace without stacks: every frames list is empty */
    fputs("\x80\x02}", f); /* PROTO 2, the root dict */
    pk_str(f, "device_traces");
    fputc(']', f);
    for (int d = 0; rc == SQLITE_OK && d <= maxDev; d++) { /* one list per device id, empty where it has no event */
        struct vt_live_hooks h = hooks0;
        struct vt_live *L;
        int rcPass;
        h.pArg = &w;
        h.xBegin = on_begin;
        w.device = d;
        fputc(']', f);
        if (!(L = vt__live_new(&h))) {
            rc = SQLITE_NOMEM;
            break;
        }
        rcPass = vt__live_pass(pF, L, w.bBlocks);
        vt__live_free(L);
        if (rcPass != VT_EXIT_OK) rc = w.rc ? w.rc : SQLITE_ERROR;
        fputc('a', f);
    }
    fputc('s', f);
    pk_str(f, "segments");
    fputc(']', f);
    for (size_t i = 0; rc == SQLITE_OK && i < w.nLive; i += 4) { /* each allocation live at the end: a segment, one block */
        fputc('}', f);
        pk_kv_int(f, "device", w.aLive[i]);
        pk_kv_int(f, "address", w.aLive[i + 1]);
        pk_kv_int(f, "total_size", w.aLive[i + 2]);
        pk_kv_int(f, "allocated_size", w.aLive[i + 2]);
        pk_kv_int(f, "active_size", w.aLive[i + 2]);
        pk_kv_int(f, "requested_size", w.aLive[i + 2]);
        pk_kv_int(f, "stream", 0);
        pk_kv_str(f, "segment_type", w.aLive[i + 2] < (1 << 20) ? "small" : "large");
        pk_str(f, "frames");
        if (pk_frames(&w, w.aLive[i + 3]) != 0) {
            rc = w.rc;
            break;
        }
        fputc('s', f);
        pk_str(f, "blocks");
        fputs("]}", f);
        pk_kv_int(f, "size", w.aLive[i + 2]);
        pk_kv_int(f, "requested_size", w.aLive[i + 2]);
        pk_kv_str(f, "state", "active_allocated");
        pk_str(f, "frames");
        if (pk_frames(&w, w.aLive[i + 3]) != 0) {
            rc = w.rc;
            break;
        }
        fputs("sas", f); /* the block's frames, the block into blocks, blocks into the segment */
        fputc('a', f);
        pSt->nSegment++;
    }
    fputs("s.", f); /* segments into the root; STOP */
    if (rc != SQLITE_OK) *pzErr = sqlite3_mprintf("%s", rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(pF->db));
    else if (ferror(f)) rc = SQLITE_IOERR;
    sqlite3_finalize(w.pFrames);
    vt__addrmap_free(&w.memo);
    free(w.aLive);
    return rc;
}
