/* Detector: transfer bottlenecks — pageable copies, copies serialized with compute, pinned growth. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vramtrace/schema.h"

struct ival {
    int64_t a, b;
};

/*
 * The transfer pass: host<->device copies read in start order, fed the kernels in
 * start order (by vt__transfers, or by vt__scan's pass over the kernel table):
 * per-direction volume, pageable share, best bandwidth, and how much copy time had
 * no kernel running. Keeps only the kernel intervals that can still overlap a later
 * copy (a union of busy intervals, aU[head..nU-1]).
 */
struct vt_xfer_run {
    struct vt_trace *t;
    struct vt_rows copy;    /* the copies in start order */
    char *zCopy;
    int bCopy;              /* copy holds a row not yet accounted */
    struct ival *aU;
    int nU, nUAlloc, head;
};

/* Step to the next copy; returns an SQLite code. */
static int copy_next(struct vt_xfer_run *x)
{
    int rc = vt__rows_next(&x->copy);
    x->bCopy = x->copy.bRow;
    return rc;
}

/* Account the pending copy against the kernels fed so far (all that start before it ends), then step. */
static int copy_account(struct vt_xfer_run *x)
{
    struct vt_trace *t = x->t;
    const struct vt_rows *p = &x->copy;
    int64_t s = vt__rows_i64(p, 0), e = vt__rows_i64(p, 1), bytes = vt__rows_i64(p, 5);
    int kind = (int)vt__rows_i64(p, 2), dir = kind == VT_COPY_HTOD ? 0 : 1;
    int hostKind = (int)vt__rows_i64(p, dir == 0 ? 3 : 4);
    int64_t dur = e > s ? e - s : 1, overlap = 0;
    struct vt_xfer *xf = &t->xfer[dir];
    while (x->head < x->nU && x->aU[x->head].b <= s) {
        t->kernelBusyNs += x->aU[x->head].b - x->aU[x->head].a;
        x->head++;
    }
    for (int i = x->head; i < x->nU && x->aU[i].a < e; i++) {
        int64_t a = x->aU[i].a > s ? x->aU[i].a : s, b = x->aU[i].b < e ? x->aU[i].b : e;
        if (b > a) overlap += b - a;
    }
    xf->count++;
    xf->bytes += bytes;
    xf->ns += dur;
    t->copyNs += dur;
    t->copySerialNs += dur - (overlap < dur ? overlap : dur);
    if (bytes >= 65536 && (double)bytes / (double)dur > xf->bestBw) xf->bestBw = (double)bytes / (double)dur;
    if (hostKind == VT_MEMKIND_PAGEABLE) {
        xf->pageCount++;
        xf->pageBytes += bytes;
        xf->pageNs += dur;
        if (xf->firstPageTs == 0) xf->firstPageTs = s;
        xf->lastPageTs = e;
    }
    return copy_next(x);
}

/*
 * Start the pass: reset the trace's transfer totals and read the first copy.
 * Returns it in *px (NULL when out of memory) and an SQLite code.
 */
int vt__xfer_begin(struct vt_trace *t, struct vt_xfer_run **px)
{
    struct vt_xfer_run *x = calloc(1, sizeof *x);
    int rc = SQLITE_NOMEM;
    *px = x;
    if (!x) return rc;
    x->t = t;
    memset(t->xfer, 0, sizeof t->xfer);
    t->copyNs = t->copySerialNs = t->kernelBusyNs = 0;
    /* in rowid order where vt__scan found that to be start order within a window */
    x->zCopy = vt__ordered_sql(t, t->wCopy, "start, end, copy_kind, src_kind, dst_kind, bytes", "memcpy",
                               "copy_kind IN (1, 2)", "start");
    if (x->zCopy) rc = vt__rows_open(&x->copy, t->db, x->zCopy, 6, t->wCopy);
    if (rc == SQLITE_OK) rc = copy_next(x);
    return rc;
}

/*
 * Feed the next kernel (start a, end b; an end before the start, an incomplete
 * record, counts as the start): copies ending by its start are accounted first.
 * Returns an SQLite code.
 */
int vt__xfer_kernel(struct vt_xfer_run *x, int64_t a, int64_t b)
{
    int rc = SQLITE_OK;
    if (b < a) b = a;
    while (rc == SQLITE_OK && x->bCopy && !(a < vt__rows_i64(&x->copy, 1))) rc = copy_account(x);
    if (rc != SQLITE_OK) return rc;
    if (x->nU > x->head && a <= x->aU[x->nU - 1].b) {
        if (b > x->aU[x->nU - 1].b) x->aU[x->nU - 1].b = b;
        return SQLITE_OK;
    }
    /* no copy left to overlap: the union's intervals (disjoint) only add to the busy time */
    for (; !x->bCopy && x->head < x->nU; x->head++) x->t->kernelBusyNs += x->aU[x->head].b - x->aU[x->head].a;
    if (x->nU == x->nUAlloc) {
        if (x->head > 0) { /* compact before growing */
            memmove(x->aU, x->aU + x->head, sizeof *x->aU * (size_t)(x->nU - x->head));
            x->nU -= x->head;
            x->head = 0;
        }
        if (x->nU == x->nUAlloc) {
            int nNew = x->nUAlloc ? x->nUAlloc * 2 : 256;
            struct ival *aNew = realloc(x->aU, sizeof *aNew * (size_t)nNew);
            if (!aNew) return SQLITE_NOMEM;
            x->aU = aNew;
            x->nUAlloc = nNew;
        }
    }
    x->aU[x->nU].a = a;
    x->aU[x->nU].b = b;
    x->nU++;
    return SQLITE_OK;
}

/*
 * End the pass (x may be NULL): when bFinish, account the remaining copies and the
 * busy time left in the union; then release x. Returns an SQLite code.
 */
int vt__xfer_end(struct vt_xfer_run *x, int bFinish)
{
    int rc = SQLITE_OK;
    if (!x) return rc;
    while (bFinish && rc == SQLITE_OK && x->bCopy) rc = copy_account(x);
    if (bFinish && rc == SQLITE_OK) {
        int64_t curA = -1, curB = -1;
        for (int i = x->head; i < x->nU; i++) {
            if (curB >= 0 && x->aU[i].a <= curB) {
                if (x->aU[i].b > curB) curB = x->aU[i].b;
                continue;
            }
            if (curB >= 0) x->t->kernelBusyNs += curB - curA;
            curA = x->aU[i].a;
            curB = x->aU[i].b;
        }
        if (curB >= 0) x->t->kernelBusyNs += curB - curA;
    }
    vt__rows_close(&x->copy);
    free(x->zCopy);
    free(x->aU);
    free(x);
    return rc;
}

/*
 * The transfer pass over the kernels in start order, unless vt__scan already made it
 * (t->bXferDone). Returns a VT_EXIT code.
 */
int vt__transfers(struct vt_trace *t)
{
    struct vt_xfer_run *x = NULL;
    struct vt_rows ker;
    char *zKer = NULL;
    int rc;

    memset(&ker, 0, sizeof ker);
    if (t->bXferDone) return VT_EXIT_OK;
    rc = vt__xfer_begin(t, &x);
    if (rc == SQLITE_OK) {
        zKer = vt__ordered_sql(t, t->wKer, "start, end", "kernel", "1", "start");
        rc = zKer ? vt__rows_open(&ker, t->db, zKer, 2, t->wKer) : SQLITE_NOMEM;
    }
    while (rc == SQLITE_OK && (rc = vt__rows_next(&ker)) == SQLITE_OK && ker.bRow)
        rc = vt__xfer_kernel(x, vt__rows_i64(&ker, 0), vt__rows_i64(&ker, 1));
    rc = rc == SQLITE_OK ? vt__xfer_end(x, 1) : (vt__xfer_end(x, 0), rc);
    vt__rows_close(&ker);
    free(zKer);
    if (rc == SQLITE_OK) return VT_EXIT_OK;
    vt__errorf("%s: cannot read copies: %s", t->zPath, sqlite3_errstr(rc));
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? VT_EXIT_CORRUPT : VT_EXIT_INTERNAL;
}

/* Append a transfer finding (title and evidence are taken over); 0 or -1 when out of memory. */
static int add(struct vt_result *r, int iTrace, int sev, int64_t bytes, int64_t count, int64_t a, int64_t b,
               char *zTitle, char *zEvidence, const char *zFix)
{
    struct vt_finding *f = vt__finding_add(r, iTrace, "transfer", sev);
    if (!f) return -1;
    f->bytes = bytes;
    f->count = count;
    f->firstTs = a;
    f->lastTs = b;
    f->zTitle = zTitle;
    f->zEvidence = zEvidence;
    f->zSite = vt__strdupf("host-device copies");
    f->zFix = vt__strdupf("%s", zFix);
    return f->zTitle && f->zEvidence && f->zSite && f->zFix ? 0 : -1;
}

/* Pageable-copy, copy/compute serialization and pinned-growth findings of trace iTrace. */
int vt__detect_transfer(struct vt_result *r, int iTrace)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_opts *o = r->pOpts;
    int64_t dur = t->t1 - t->t0, rise;
    char zB[32], zT[32], zP[32];
    {
        /* one finding for both directions, with each direction's bandwidth against its best */
        int64_t nCount = t->xfer[0].pageCount + t->xfer[1].pageCount;
        int64_t nBytes = t->xfer[0].pageBytes + t->xfer[1].pageBytes, nNs = t->xfer[0].pageNs + t->xfer[1].pageNs;
        char zDir[2][400];
        int sev, nDir = 0;
        double pct = 100.0 * (double)nNs / (double)(dur > 0 ? dur : 1);
        int64_t a = -1, b = -1;
        for (int dir = 0; dir < 2; dir++) {
            const struct vt_xfer *x = &t->xfer[dir];
            double bw = (double)x->pageBytes / (double)(x->pageNs > 0 ? x->pageNs : 1);
            zDir[dir][0] = 0;
            if (x->pageCount == 0) continue;
            nDir++;
            if (a < 0 || x->firstPageTs < a) a = x->firstPageTs;
            if (x->lastPageTs > b) b = x->lastPageTs;
            vt__fmt_bytes(x->pageBytes, zB, sizeof zB);
            vt__fmt_ns(x->pageNs, zT, sizeof zT);
            snprintf(zDir[dir], sizeof zDir[dir],
                     "%s%s: %lld pageable copies, %s in %s at %.2f GB/s; the fastest %s copy of 64 KiB or "
                     "more reached %.2f GB/s.",
                     dir == 1 && t->xfer[0].pageCount ? " " : "", dir == 0 ? "Host to device" : "Device to host",
                     (long long)x->pageCount, zB, zT, bw, dir == 0 ? "host-to-device" : "device-to-host", x->bestBw);
        }
        if (nCount > 0 && nBytes >= o->minBytes) {
            /* by the time they cost: a one-off pageable copy (weights moved at start) is low */
            sev = pct >= 10 ? VT_SEV_HIGH : pct >= 1 ? VT_SEV_MEDIUM : VT_SEV_LOW;
            vt__fmt_bytes(nBytes, zB, sizeof zB);
            vt__fmt_ns(nNs, zT, sizeof zT);
            if (add(r, iTrace, sev, nBytes, nCount, a, b,
                    nDir == 2 ? vt__strdupf("%lld copies (%s) to and from pageable host memory", (long long)nCount, zB)
                              : vt__strdupf("%lld %s copies (%s) %s pageable host memory", (long long)nCount,
                                            t->xfer[0].pageCount ? "host-to-device" : "device-to-host", zB,
                                            t->xfer[0].pageCount ? "from" : "to"),
                    vt__strdupf("%s%s Together they took %s (%.1f%% of the run). Pageable copies are staged "
                                "through a driver buffer and block the host.",
                                zDir[0], zDir[1], zT, pct),
                    "Copy from pinned memory: DataLoader(..., pin_memory=True) and "
                    "tensor.to('cuda', non_blocking=True); pin your own staging buffers with "
                    "tensor.pin_memory() or torch.empty(..., pin_memory=True) and reuse them (in CUDA C, "
                    "cudaMallocHost or cudaHostRegister).") != 0)
                return VT_EXIT_INTERNAL;
        }
    }
    if (t->copyNs > 0 && t->kernelBusyNs > 0 && t->copySerialNs * 10 >= dur && t->copySerialNs >= 1000000) {
        double pct = 100.0 * (double)t->copySerialNs / (double)dur;
        vt__fmt_ns(t->copySerialNs, zT, sizeof zT);
        vt__fmt_ns(t->kernelBusyNs, zP, sizeof zP);
        if (add(r, iTrace, pct >= 25 ? VT_SEV_MEDIUM : VT_SEV_LOW, t->xfer[0].bytes + t->xfer[1].bytes,
                t->xfer[0].count + t->xfer[1].count, t->t0, t->t1,
                vt__strdupf("Copies serialized with compute: %s of copy time with no kernel running", zT),
                vt__strdupf("Host-device copies ran for %s (%.1f%% of the run) while no kernel was running "
                            "(kernels were busy %s in total): the GPU waits for data instead of overlapping "
                            "the next batch's copy with this batch's compute.", zT, pct, zP),
                "Overlap copies with compute: pinned memory plus non_blocking=True, DataLoader with "
                "pin_memory=True and num_workers > 0 to prefetch, or issue the copy of the next batch on a "
                "separate CUDA stream.") != 0)
            return VT_EXIT_INTERNAL;
    }
    {
        int64_t aB[VT_SLICES];
        int n = 0;
        int iDev = -1;
        int64_t minRise;
        for (int d = 0; d < t->nDev; d++)
            if (t->aDev[d].id == -1) iDev = d;
        /* a pinned-memory cache fills in steps: only a rise of a tenth of its peak counts */
        minRise = iDev >= 0 && t->aDev[iDev].peak / 10 > o->minBytes ? t->aDev[iDev].peak / 10 : o->minBytes;
        for (int k = VT_SLICES / 8; k < VT_SLICES; k++) aB[n++] = t->pinnedSlice[k];
        if (vt__trend(aB, n, minRise, &rise)) {
            vt__fmt_bytes(rise, zB, sizeof zB);
            vt__fmt_bytes(iDev >= 0 ? t->aDev[iDev].peak : 0, zP, sizeof zP);
            if (add(r, iTrace, VT_SEV_MEDIUM, rise, n, t->t0, t->t1,
                    vt__strdupf("Pinned host memory keeps growing: +%s over the run", zB),
                    vt__strdupf("The lowest pinned (page-locked) host memory in each slice of the run rose by "
                                "%s, peaking at %s: pinned buffers are allocated faster than released.", zB, zP),
                    "With DataLoader(pin_memory=True), lower num_workers or prefetch_factor so fewer "
                    "pinned batches wait in the queue; reuse pinned staging buffers instead of pinning "
                    "new tensors every step; drop references (del, gc.collect()) to pinned batches you "
                    "no longer need.") != 0)
                return VT_EXIT_INTERNAL;
        }
    }
    return VT_EXIT_OK;
}
