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
 * Where the trace has both levels (CUDA's allocations and the caching allocator's blocks in
 * them: PyTorch's allocation history merged, or a snapshot imported) each CUDA allocation is a
 * segment ('segment_alloc', 'segment_free') and each block an allocation in it ('alloc',
 * 'free_requested', 'free_completed'); a block no segment of the trace holds is left out and
 * counted (memory_viz would have nowhere to draw it), and one still live when its segment is
 * freed is freed just before it. Otherwise each allocation is one segment holding one block of
 * its size: at its time 'segment_alloc' then 'alloc'; at its free 'free_requested',
 * 'free_completed', then 'segment_free'. Those live at the end are the dump's segments, their
 * live blocks 'active_allocated' in address order with the free space between them as
 * 'inactive' blocks (memory_viz places each block after the one before). OOMs are 'oom'
 * events in their device's list (size, device_free; a key left out when the trace does not
 * know it; an OOM of no known device left out and counted). Events carry time_us (the wall clock where the trace has anchors, else
 * microseconds from its start plus one) and frames from the trace's stacks ({filename, line,
 * name}, innermost first; a frames list written once and referred to again through the
 * pickle's memo). Host and managed memory, which memory_viz does not draw, are left out and
 * counted. One pass over the memory events per device keeps each device's list in time order.
 * A trace whose only allocations are a framework allocator's blocks (a torch.profiler import)
 * has those as its allocations. Mapped memory (VMM) is drawn where it is mapped, as PyTorch
 * draws expandable segments: mappings are segments ('segment_map', and 'segment_unmap' of the
 * part an unmap covers; what a range unmap leaves mapped writes nothing), a physical handle is
 * not drawn, and the dump has one segment per contiguous mapped range (is_expandable), which
 * memory_viz's merging of touching mapped ranges gives too. A history that starts late (meta
 * history_truncated): an allocation of unknown time was made before it (or its time is not known at
 * all), so it has no event in the history, only its place in the dump if still live and its free
 * if the history saw one, as PyTorch writes a snapshot whose ring buffer was full; a free of device
 * memory the trace never saw allocated is written too (memory_viz draws such memory from the start);
 * import then finds the history truncated, as the trace says.
 */

struct snapw {
    FILE *f;
    struct vt_tracefile *pF;
    int device;             /* the device whose events this pass writes */
    sqlite3_stmt *pFrames;
    sqlite3_stmt *pOom;     /* this device's OOMs in time order; pending: a row read, not yet written */
    int bOomPending;
    struct vt__addrmap memo; /* stack id -> memo index of its frames list */
    uint32_t nMemo;
    struct vt_export_snapstats *pSt;
    int64_t *aLive;         /* segments live at the end: (device, address, bytes, stack, alloc event id, mapping) */
    size_t nLive, nLiveAlloc;
    int64_t *aBlk;          /* blocks live at the end: (segment's alloc event id (bMapped: the device), address, bytes,
                             * stack) */
    size_t nBlk, nBlkAlloc;
    int rc;                 /* SQLite code of a failed read, or SQLITE_NOMEM */
    int bBlocks;            /* the allocations are the allocator's blocks (tensor_event): the trace has no CUDA allocation */
    int bMerged;            /* both levels: segments from CUDA's allocations, blocks from the allocator's */
    int bMapped;            /* the trace maps memory (VMM, expandable segments): the mappings are the segments, those
                             * live at the end drawn as one segment per contiguous mapped range, as PyTorch dumps them */
    struct vt_live *Lseg;   /* bMerged: the segments live now */
    struct vt_live *Lblk;   /* bMerged: the blocks live now */
    int64_t now;            /* bMerged: the time of the row being applied */
    struct vt__addrmap inSeg;  /* bMerged: block's alloc event id -> its segment's alloc event id + 1 (0: written free) */
    struct vt__addrmap nInSeg; /* bMerged: segment's alloc event id -> blocks of it live and written */
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

/*
 * The device's OOMs up to time ts (all that are left: ts INT64_MAX) as 'oom' events: size (what
 * was asked), device_free, stream 0, time_us, frames; a key left out where the trace does not know
 * it. 0, or -1 (w->rc set).
 */
static int pk_ooms(struct snapw *w, int64_t ts)
{
    FILE *f = w->f;
    int rc = SQLITE_ROW;
    while (w->pOom && w->bOomPending) {
        sqlite3_stmt *p = w->pOom;
        int64_t t = sqlite3_column_type(p, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(p, 0);
        int64_t us = time_us(w->pF, t);
        if (t >= 0 && t > ts) break;
        fputc('}', f);
        pk_kv_str(f, "action", "oom");
        if (sqlite3_column_type(p, 1) != SQLITE_NULL) pk_kv_int(f, "size", sqlite3_column_int64(p, 1));
        if (sqlite3_column_type(p, 2) != SQLITE_NULL) pk_kv_int(f, "device_free", sqlite3_column_int64(p, 2));
        pk_kv_int(f, "stream", 0);
        if (us > 0) pk_kv_int(f, "time_us", us);
        pk_str(f, "frames");
        if (pk_frames(w, sqlite3_column_type(p, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(p, 3)) != 0) return -1;
        fputs("sa", f);
        w->pSt->nEvent++;
        w->pSt->nOom++;
        if ((rc = sqlite3_step(p)) != SQLITE_ROW) w->bOomPending = 0;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        w->rc = rc;
        return -1;
    }
    return 0;
}

/* Whether l was allocated before the history (a history that starts late, its time unknown): no event of its
 * allocation, as in PyTorch's own snapshots; counted. */
static int before_history(const struct snapw *w, const struct vt_life *l)
{
    return w->pF->bHistoryTruncated && l->allocTs < 0;
}

/* Whether l is this pass's device's memory, as a segment (or a block of the allocator's): a mapping counts in its
 * creation's account; with mappings a creation is drawn where it is mapped, not itself. */
static int mine(const struct snapw *w, const struct vt_life *l)
{
    int acct = l->pOwner ? l->pOwner->acct : l->acct;
    if (w->bMapped && l->op == VT_MEMOP_VMM_CREATE) return 0;
    return acct >= 0 && acct == w->device && l->bytes > 0;
}

/* The n int64s of a appended to *pv (*pn used of *pnAlloc). 0, or -1 (w->rc set). */
static int push(struct snapw *w, int64_t **pv, size_t *pn, size_t *pnAlloc, const int64_t *a, size_t n)
{
    if (*pn + n > *pnAlloc) {
        size_t nNew = *pnAlloc ? 2 * *pnAlloc : 384;
        int64_t *aNew = realloc(*pv, sizeof *aNew * nNew);
        if (!aNew) {
            w->rc = SQLITE_NOMEM;
            return -1;
        }
        *pv = aNew;
        *pnAlloc = nNew;
    }
    memcpy(*pv + *pn, a, n * sizeof *a);
    *pn += n;
    return 0;
}

/* The unmap the segments' live set is applying, when mapping l begins or ends by it; else NULL. */
static const struct vt_memrow *unmap_of(const struct snapw *w, const struct vt_life *l)
{
    const struct vt_memrow *m = vt__live_row(w->Lseg);
    return l->op == VT_MEMOP_VMM_MAP && m && m->op == VT_MEMOP_VMM_UNMAP ? m : NULL;
}

/* Whether mapping l begins as the part of a mapping that a range unmap left mapped (no new memory: no event). */
static int is_piece(const struct snapw *w, const struct vt_life *l)
{
    return unmap_of(w, l) != NULL;
}

/* *p: segment l, or of a mapping the part the row being applied unmaps (an unmap of known size may cover part of
 * it: live.c begins the rest again as a mapping of its own). */
static void ending_part(const struct snapw *w, const struct vt_life *l, struct vt_life *p)
{
    const struct vt_memrow *m = unmap_of(w, l);
    int64_t a = l->address, e = l->address + l->bytes;
    *p = *l;
    if (!m || m->bytes <= 0) return;
    if (m->address > a) a = m->address;
    if (m->address + m->bytes < e) e = m->address + m->bytes;
    p->address = a;
    p->bytes = e > a ? e - a : 0;
}

static int on_begin(void *pArg, struct vt_life *l)
{
    struct snapw *w = pArg;
    if (l->acct == VT_ACCT_PINNED || l->acct == VT_ACCT_MANAGED) {
        if (w->device == 0) w->pSt->nHost++;
        return 0;
    }
    if (!mine(w, l)) return 0;
    if (pk_ooms(w, l->allocTs) != 0) return -1;
    w->pSt->nAlloc++;
    if (before_history(w, l)) return w->pSt->nBefore++, 0;
    if (!is_piece(w, l) && pk_event(w, l->op == VT_MEMOP_VMM_MAP ? "segment_map" : "segment_alloc", l, l->allocTs) != 0)
        return -1;
    return w->bMerged ? 0 : pk_event(w, "alloc", l, l->allocTs);
}

/* A block's free_requested and free_completed at ts. 0 or -1. */
static int pk_block_free(struct snapw *w, const struct vt_life *b, int64_t ts)
{
    return pk_event(w, "free_requested", b, ts) != 0 || pk_event(w, "free_completed", b, ts) != 0 ? -1 : 0;
}

/* bMerged: segment l (of a mapping, the part unmapped) about to be freed: the blocks in it still live freed first
 * (memory_viz draws no block outside a segment). */
static int on_seg_before_end(void *pArg, struct vt_life *l)
{
    struct snapw *w = pArg;
    int64_t *pN = NULL;
    struct vt_life *const *a, p;
    int n;
    if (!w->bMerged || !mine(w, l) || l->status == VT_LIFE_LIVE_AT_END) return 0;
    ending_part(w, l, &p);
    /* (blocks are counted in the segment holding their start; a mapped range's blocks may span mappings) */
    if (!w->bMapped && (!(pN = vt__addrmap_get(&w->nInSeg, (uint64_t)l->allocEventId)) || *pN <= 0)) return 0;
    a = vt__live_all(w->Lblk, &n);
    for (int i = 0; i < n; i++) {
        int64_t *pSeg = vt__addrmap_get(&w->inSeg, (uint64_t)a[i]->allocEventId);
        if (!pSeg || *pSeg == 0) continue;
        if (w->bMapped ? a[i]->address >= p.address + p.bytes || a[i]->address + a[i]->bytes <= p.address
                       : *pSeg != l->allocEventId + 1)
            continue;
        if (pk_block_free(w, a[i], w->now) != 0) return -1;
        if ((pN = vt__addrmap_get(&w->nInSeg, (uint64_t)(*pSeg - 1))) != NULL) --*pN;
        *pSeg = 0;
    }
    return 0;
}

static int on_end(void *pArg, struct vt_life *l)
{
    struct snapw *w = pArg;
    struct vt_life p;
    if (!mine(w, l)) return 0;
    if (l->status == VT_LIFE_LIVE_AT_END) { /* a segment of the dump (mappings: part of one) */
        const int64_t a[6] = {w->device, l->address, l->bytes, l->stackId, l->allocEventId, l->op == VT_MEMOP_VMM_MAP};
        w->pSt->nLive++;
        return push(w, &w->aLive, &w->nLive, &w->nLiveAlloc, a, 6);
    }
    if (pk_ooms(w, l->freeTs) != 0) return -1;
    w->pSt->nFree++;
    if (!w->bMerged && pk_block_free(w, l, l->freeTs) != 0) return -1;
    ending_part(w, l, &p);
    return pk_event(w, l->op == VT_MEMOP_VMM_MAP ? "segment_unmap" : "segment_free", &p, l->freeTs);
}

/*
 * A free that found no lifetime (m, status) in a history that starts late: memory allocated before it, whose
 * free the history saw (the segments' set: bBlock 0; the blocks': 1), written as its free is (a segment's
 * segment_free, a block's free_requested and free_completed, an allocation of its own level all three). 0 or -1.
 */
static int stray_free(struct snapw *w, const struct vt_memrow *m, int status, int bBlock)
{
    struct vt_life l;
    if (!w->pF->bHistoryTruncated || status != VT_LIFE_FREE_UNKNOWN || m->op != VT_MEMOP_FREE || m->bytes <= 0 ||
        m->device != w->device || (!m->bTensor && m->kind != VT_MEMKIND_DEVICE))
        return 0;
    memset(&l, 0, sizeof l);
    l.address = m->address;
    l.bytes = m->bytes;
    l.stackId = m->stackId;
    if (pk_ooms(w, m->ts) != 0) return -1;
    w->pSt->nStray++;
    if ((bBlock || !w->bMerged) && pk_block_free(w, &l, m->ts) != 0) return -1;
    return bBlock ? 0 : pk_event(w, "segment_free", &l, m->ts);
}

static int on_seg_stray(void *pArg, const struct vt_memrow *m, int status)
{
    return stray_free(pArg, m, status, 0);
}

static int on_block_stray(void *pArg, const struct vt_memrow *m, int status)
{
    return stray_free(pArg, m, status, 1);
}

/* Whether [a, a + n) lies in live mappings of this pass's device, one after another. */
static int mapped_through(struct snapw *w, int64_t a, int64_t n)
{
    const int64_t e = a + n;
    struct vt_life *s;
    while (a < e && (s = vt__live_mapping(w->Lseg, a, w->device)) != NULL && mine(w, s)) a = s->address + s->bytes;
    return a >= e;
}

/* bMerged: block b handed out: an 'alloc' in the segment of the trace that holds it, else left out and counted. */
static int on_block_begin(void *pArg, struct vt_life *b)
{
    struct snapw *w = pArg;
    struct vt_life *s;
    int64_t *pN;
    if (!mine(w, b)) return 0;
    s = w->bMapped ? vt__live_mapping(w->Lseg, b->address, w->device) : vt__live_use(w->Lseg, b->address, 0);
    if (!s || !mine(w, s) || b->address < s->address ||
        (w->bMapped ? !mapped_through(w, b->address, b->bytes) : b->address + b->bytes > s->address + s->bytes)) {
        w->pSt->nBlockOut++;
        return 0;
    }
    if (pk_ooms(w, b->allocTs) != 0) return -1;
    if (vt__addrmap_put(&w->inSeg, (uint64_t)b->allocEventId, s->allocEventId + 1) != 0 ||
        ((pN = vt__addrmap_get(&w->nInSeg, (uint64_t)s->allocEventId)) ? (++*pN, 0)
                                                                         : vt__addrmap_put(&w->nInSeg, (uint64_t)s->allocEventId, 1)) != 0) {
        w->rc = SQLITE_NOMEM;
        return -1;
    }
    w->pSt->nBlock++;
    if (before_history(w, b)) return w->pSt->nBefore++, 0;
    return pk_event(w, "alloc", b, b->allocTs);
}

/* bMerged: block b ended: freed (when still written live in its segment), or one of the dump. */
static int on_block_end(void *pArg, struct vt_life *b)
{
    struct snapw *w = pArg;
    int64_t seg = 0, *pN;
    if (!mine(w, b) || !vt__addrmap_remove(&w->inSeg, (uint64_t)b->allocEventId, &seg) || seg == 0) return 0;
    if (b->status == VT_LIFE_LIVE_AT_END) {
        const int64_t a[4] = {w->bMapped ? w->device : seg - 1, b->address, b->bytes, b->stackId};
        return push(w, &w->aBlk, &w->nBlk, &w->nBlkAlloc, a, 4);
    }
    if ((pN = vt__addrmap_get(&w->nInSeg, (uint64_t)(seg - 1))) != NULL) --*pN;
    if (pk_ooms(w, b->freeTs) != 0) return -1;
    return pk_block_free(w, b, b->freeTs);
}

/* The highest device id the trace's memory events (tensor events: bBlocks) or OOMs name, or -1 when none; the OOMs
 * of no known device counted in *pnOomOut. SQLite code. */
static int max_device(sqlite3 *db, int bBlocks, int *pMax, long long *pnOomOut)
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
    p = NULL;
    if (rc == SQLITE_OK && sqlite3_prepare_v2(db, "SELECT max(device), sum(coalesce(device < 0, 1)) FROM oom_event", -1,
                                              &p, NULL) == SQLITE_OK) { /* (a trace without the table has no OOM) */
        if ((rc = sqlite3_step(p)) == SQLITE_ROW) {
            if (sqlite3_column_type(p, 0) != SQLITE_NULL && sqlite3_column_int(p, 0) > *pMax)
                *pMax = sqlite3_column_int(p, 0);
            *pnOomOut = sqlite3_column_int64(p, 1);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(p);
    return rc;
}

/* One device's list: its events in time order (one pass over the trace), its OOMs among them. SQLite code. */
static int pk_device(struct snapw *w, int d)
{
    static const struct vt_live_hooks segHooks = {NULL, on_begin, on_seg_before_end, on_end, on_seg_stray, 0};
    static const struct vt_live_hooks blkHooks = {NULL, on_block_begin, NULL, on_block_end, on_block_stray, 0};
    struct vt_live_hooks hs = segHooks, hb = blkHooks;
    int rc = SQLITE_OK, rcPass;
    hs.pArg = hb.pArg = w;
    hs.bMappings = w->bMapped;
    w->device = d;
    w->bOomPending = 0;
    if (w->pOom) {
        sqlite3_reset(w->pOom);
        sqlite3_bind_int(w->pOom, 1, d);
        rc = sqlite3_step(w->pOom);
        w->bOomPending = rc == SQLITE_ROW;
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) return rc;
        rc = SQLITE_OK;
    }
    fputc(']', w->f);
    w->Lseg = vt__live_new(&hs);
    w->Lblk = w->bMerged ? vt__live_new(&hb) : NULL;
    if (!w->Lseg || (w->bMerged && !w->Lblk)) rc = SQLITE_NOMEM;
    else {
        rcPass = w->bMerged ? vt__live_pass_both(w->pF, w->Lseg, w->Lblk, &w->now)
                            : vt__live_pass(w->pF, w->Lseg, w->bBlocks);
        if (rcPass != VT_EXIT_OK || pk_ooms(w, INT64_MAX) != 0) rc = w->rc ? w->rc : SQLITE_ERROR;
    }
    if (w->Lblk) vt__live_free(w->Lblk);
    if (w->Lseg) vt__live_free(w->Lseg);
    w->Lseg = w->Lblk = NULL;
    fputc('a', w->f);
    return rc;
}

/* A block of a dump segment: size, requested_size, state, frames (stackId -1: none). 0 or -1. */
static int pk_block(struct snapw *w, int64_t bytes, const char *zState, int64_t stackId)
{
    fputc('}', w->f);
    pk_kv_int(w->f, "size", bytes);
    pk_kv_int(w->f, "requested_size", bytes);
    pk_kv_str(w->f, "state", zState);
    pk_str(w->f, "frames");
    if (pk_frames(w, stackId) != 0) return -1;
    fputs("sa", w->f); /* the frames into the block, the block into blocks */
    return 0;
}

/* Orders blocks of the dump (4 int64s each) by segment (bMapped: device), then address. */
static int blk_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Orders segments of the dump (6 int64s each) by alloc event id, as their blocks name them. */
static int seg_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[4] < y[4] ? -1 : x[4] > y[4];
}

/* Orders segments of the dump (6 int64s each) by device, then address: mapped ones that touch are one range. */
static int seg_addr_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/*
 * The dump's segments (those live at the end) with their blocks: the live blocks in address order and the free
 * space around them inactive (without history: the segment's one block). With mappings, mapped parts that touch are
 * one segment (is_expandable), as PyTorch dumps an expandable segment's mapped range, and a block belongs to the one
 * holding its address. SQLite code.
 */
static int pk_segments(struct snapw *w)
{
    FILE *f = w->f;
    size_t j = 0, i = 0, iEnd;
    if (w->nBlk) qsort(w->aBlk, w->nBlk / 4, 4 * sizeof *w->aBlk, blk_cmp);
    if (w->bMapped) qsort(w->aLive, w->nLive / 6, 6 * sizeof *w->aLive, seg_addr_cmp);
    else if (w->nBlk) qsort(w->aLive, w->nLive / 6, 6 * sizeof *w->aLive, seg_cmp);
    for (; i < w->nLive; i = iEnd) {
        const int64_t *g = &w->aLive[i], dev = g[0], addr = g[1];
        int64_t end = addr + g[2], at = addr, used = 0;
        size_t j0;
        for (iEnd = i + 6; g[5] && iEnd < w->nLive && w->aLive[iEnd + 5] && w->aLive[iEnd] == dev &&
                           w->aLive[iEnd + 1] == end;
             iEnd += 6)
            end += w->aLive[iEnd + 2]; /* the next mapping touches this one: the same range */
        if (w->bMapped) { /* blocks by device and address */
            while (j < w->nBlk && (w->aBlk[j] < dev || (w->aBlk[j] == dev && w->aBlk[j + 1] < addr))) j += 4;
            for (j0 = j; j < w->nBlk && w->aBlk[j] == dev && w->aBlk[j + 1] < end; j += 4) used += w->aBlk[j + 2];
        } else { /* blocks by their segment's alloc event id (every block's segment is one of these) */
            while (j < w->nBlk && w->aBlk[j] < g[4]) j += 4;
            for (j0 = j; j < w->nBlk && w->aBlk[j] == g[4]; j += 4) used += w->aBlk[j + 2];
        }
        fputc('}', f);
        pk_kv_int(f, "device", dev);
        pk_kv_int(f, "address", addr);
        pk_kv_int(f, "total_size", end - addr);
        pk_kv_int(f, "allocated_size", w->bMerged ? used : end - addr);
        pk_kv_int(f, "active_size", w->bMerged ? used : end - addr);
        pk_kv_int(f, "requested_size", w->bMerged ? used : end - addr);
        pk_kv_int(f, "stream", 0);
        pk_kv_str(f, "segment_type", end - addr < (1 << 20) ? "small" : "large");
        if (g[5]) {
            pk_str(f, "is_expandable");
            fputs("\x88s", f); /* NEWTRUE */
        }
        pk_str(f, "frames");
        if (pk_frames(w, g[3]) != 0) return w->rc;
        fputc('s', f);
        pk_str(f, "blocks");
        fputc(']', f);
        if (!w->bMerged) { /* each allocation its one block (touching mappings: one each) */
            for (size_t k = i; k < iEnd; k += 6)
                if (pk_block(w, w->aLive[k + 2], "active_allocated", w->aLive[k + 3]) != 0) return w->rc;
        } else {
            for (size_t k = j0; k < j; k += 4) { /* blocks tile the segment: free space before each, inactive */
                if (w->aBlk[k + 1] < at) continue; /* overlaps the one before: not drawable */
                if (w->aBlk[k + 1] > at && pk_block(w, w->aBlk[k + 1] - at, "inactive", -1) != 0) return w->rc;
                if (pk_block(w, w->aBlk[k + 2], "active_allocated", w->aBlk[k + 3]) != 0) return w->rc;
                at = w->aBlk[k + 1] + w->aBlk[k + 2];
            }
            if (end > at && pk_block(w, end - at, "inactive", -1) != 0) return w->rc;
        }
        fputs("sa", f); /* blocks into the segment, the segment into segments */
        w->pSt->nSegment++;
    }
    return SQLITE_OK;
}

int vt__export_snapshot(FILE *f, struct vt_tracefile *pF, struct vt_export_snapstats *pSt, char **pzErr)
{
    struct snapw w;
    int rc, maxDev = -1;
    memset(&w, 0, sizeof w);
    memset(pSt, 0, sizeof *pSt);
    w.f = f;
    w.pF = pF;
    w.pSt = pSt;
    *pzErr = NULL;
    w.bBlocks = vt__read_blocks_only(pF);
    w.bMerged = pF->bHaveTensors && !w.bBlocks;
    w.bMapped = !w.bBlocks && pF->aMemOp[VT_MEMOP_VMM_MAP] > 0;
    rc = max_device(pF->db, w.bBlocks, &maxDev, &pSt->nOomOut);
    if (rc == SQLITE_OK && sqlite3_prepare_v2(pF->db,
                                              "SELECT f.kind, f.pc, fn.value, fl.value, f.line, md.value FROM frame f"
                                              " LEFT JOIN string fn ON fn.id = f.function_id"
                                              " LEFT JOIN string fl ON fl.id = f.file_id"
                                              " LEFT JOIN string md ON md.id = f.module_id"
                                              " WHERE f.stack_id = ? ORDER BY f.idx",
                                              -1, &w.pFrames, NULL) != SQLITE_OK)
        w.pFrames = NULL; /* a trace without stacks: every frames list is empty */
    if (rc == SQLITE_OK && sqlite3_prepare_v2(pF->db,
                                              "SELECT ts, bytes, free_bytes, stack_id FROM oom_event WHERE device = ?1"
                                              " ORDER BY ts IS NULL, ts, id",
                                              -1, &w.pOom, NULL) != SQLITE_OK)
        w.pOom = NULL; /* no oom_event table: no OOM */
    fputs("\x80\x02}", f); /* PROTO 2, the root dict */
    pk_str(f, "device_traces");
    fputc(']', f);
    for (int d = 0; rc == SQLITE_OK && d <= maxDev; d++) /* one list per device id, empty where it has no event */
        rc = pk_device(&w, d);
    fputc('s', f);
    pk_str(f, "segments");
    fputc(']', f);
    if (rc == SQLITE_OK) rc = pk_segments(&w);
    fputs("s.", f); /* segments into the root; STOP */
    if (rc != SQLITE_OK) *pzErr = sqlite3_mprintf("%s", rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(pF->db));
    else if (ferror(f)) rc = SQLITE_IOERR;
    sqlite3_finalize(w.pFrames);
    sqlite3_finalize(w.pOom);
    vt__addrmap_free(&w.memo);
    vt__addrmap_free(&w.inSeg);
    vt__addrmap_free(&w.nInSeg);
    free(w.aLive);
    free(w.aBlk);
    return rc;
}
