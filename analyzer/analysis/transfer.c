/* The transfer pass: host-device copies against the kernels running meanwhile, per direction. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

struct ival {
    int64_t a, b;
};

/*
 * The transfer pass: host<->device copies read in start order, fed the kernels in
 * start order (by vt__transfers, or by vt__scan's pass over the kernel table):
 * per-direction volume, pageable share, best bandwidth, how much copy time had no
 * kernel running, and which copies ended before the first kernel started (start-up).
 * Keeps only the kernel intervals that can still overlap a later copy (a union of
 * busy intervals, aU[head..nU-1]).
 */
struct vt_xfer_run {
    struct vt_trace *t;
    struct vt_rows copy;    /* the copies in start order */
    char *zCopy;
    int bCopy;              /* copy holds a row not yet accounted */
    struct ival *aU;
    int nU, nUAlloc, head;
    int64_t nKernel;        /* kernels fed so far */
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
    struct vt_xfer *xf = &t->xf.x[dir];
    /* always-on mode: no single kernels after kernelSummaryFrom, so whether a later copy ran beside one is unknown */
    int bJudged = t->f.kernelSummaryFrom < 0 || s < t->f.kernelSummaryFrom;
    while (x->head < x->nU && x->aU[x->head].b <= s) {
        t->xf.kernelBusyNs += x->aU[x->head].b - x->aU[x->head].a;
        x->head++;
    }
    for (int i = x->head; i < x->nU && x->aU[i].a < e; i++) {
        int64_t a = x->aU[i].a > s ? x->aU[i].a : s, b = x->aU[i].b < e ? x->aU[i].b : e;
        if (b > a) overlap += b - a;
    }
    xf->count++;
    xf->bytes += bytes;
    xf->ns += dur;
    if (bJudged) {
        t->xf.copyNs += dur;
        t->xf.copySerialNs += dur - (overlap < dur ? overlap : dur);
    }
    if (x->nKernel == 0) { /* ended before the first kernel started */
        t->xf.preCount++;
        t->xf.preBytes += bytes;
        t->xf.preNs += dur;
    }
    if (bytes >= 65536 && (double)bytes / (double)dur > xf->bestBw) xf->bestBw = (double)bytes / (double)dur;
    if (bytes >= 65536 && hostKind == VT_MEMKIND_PINNED && (double)bytes / (double)dur > xf->bestPinnedBw)
        xf->bestPinnedBw = (double)bytes / (double)dur;
    if (hostKind == VT_MEMKIND_PAGEABLE) {
        xf->pageCount++;
        xf->pageBytes += bytes;
        xf->pageNs += dur;
        if (bJudged) t->xf.pageSerialNs += dur - (overlap < dur ? overlap : dur);
        if (x->nKernel == 0) {
            xf->prePageCount++;
            xf->prePageBytes += bytes;
            xf->prePageNs += dur;
            if (e > xf->lastPrePageTs) xf->lastPrePageTs = e;
        } else { /* after start-up: the copies a finding counts (the first in start order starts first) */
            if (xf->firstRunPageTs == 0) xf->firstRunPageTs = s;
            if (e > xf->lastRunPageTs) xf->lastRunPageTs = e;
        }
        if (xf->firstPageTs == 0) xf->firstPageTs = s;
        if (e > xf->lastPageTs) xf->lastPageTs = e;
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
    memset(&t->xf, 0, sizeof t->xf);
    /* in rowid order where vt__scan found that to be start order within a window */
    x->zCopy = vt__ordered_sql(&t->f, VT_T_COPY, "start, end, copy_kind, src_kind, dst_kind, bytes",
                               "copy_kind IN (1, 2)", "start");
    if (x->zCopy) rc = vt__rows_open(&x->copy, t->f.db, x->zCopy, 6, t->f.aT[VT_T_COPY].w);
    if (rc == SQLITE_OK) rc = copy_next(x);
    return rc;
}

/*
 * Feed the next kernel (start a, end b; an end before the start, an incomplete
 * record, counts as the start): copies ending by its start are accounted first.
 * Returns an SQLite code.
 */
int vt__xfer_kernel(void *pArg, int64_t a, int64_t b)
{
    struct vt_xfer_run *x = pArg;
    int rc = SQLITE_OK;
    if (b < a) b = a;
    while (rc == SQLITE_OK && x->bCopy && !(a < vt__rows_i64(&x->copy, 1))) rc = copy_account(x);
    if (rc != SQLITE_OK) return rc;
    if (x->nKernel++ == 0) x->t->xf.firstKernelTs = a;
    if (x->nU > x->head && a <= x->aU[x->nU - 1].b) {
        if (b > x->aU[x->nU - 1].b) x->aU[x->nU - 1].b = b;
        return SQLITE_OK;
    }
    /* no copy left to overlap: the union's intervals (disjoint) only add to the busy time */
    for (; !x->bCopy && x->head < x->nU; x->head++) x->t->xf.kernelBusyNs += x->aU[x->head].b - x->aU[x->head].a;
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
    if (bFinish && x->nKernel == 0) { /* no kernel at all: no start-up to tell apart */
        struct vt_transfers *xf = &x->t->xf;
        xf->preCount = xf->preBytes = xf->preNs = 0;
        for (int dir = 0; dir < 2; dir++) {
            xf->x[dir].prePageCount = xf->x[dir].prePageBytes = xf->x[dir].prePageNs = xf->x[dir].lastPrePageTs = 0;
            xf->x[dir].firstRunPageTs = xf->x[dir].firstPageTs; /* every copy is after start-up */
            xf->x[dir].lastRunPageTs = xf->x[dir].lastPageTs;
        }
    }
    if (bFinish && rc == SQLITE_OK) {
        int64_t curA = -1, curB = -1;
        for (int i = x->head; i < x->nU; i++) {
            if (curB >= 0 && x->aU[i].a <= curB) {
                if (x->aU[i].b > curB) curB = x->aU[i].b;
                continue;
            }
            if (curB >= 0) x->t->xf.kernelBusyNs += curB - curA;
            curA = x->aU[i].a;
            curB = x->aU[i].b;
        }
        if (curB >= 0) x->t->xf.kernelBusyNs += curB - curA;
    }
    vt__rows_close(&x->copy);
    free(x->zCopy);
    free(x->aU);
    free(x);
    return rc;
}

/*
 * The transfer pass over the kernels in start order, unless the scan's kernel feed already
 * made it (t->xf.bDone). Returns a VT_EXIT code.
 */
int vt__transfers(struct vt_trace *t)
{
    struct vt_xfer_run *x = NULL;
    struct vt_rows ker;
    char *zKer = NULL;
    int rc;

    memset(&ker, 0, sizeof ker);
    if (t->xf.bDone) return VT_EXIT_OK;
    rc = vt__xfer_begin(t, &x);
    if (rc == SQLITE_OK) {
        zKer = vt__ordered_sql(&t->f, VT_T_KER, "start, end", "1", "start");
        rc = zKer ? vt__rows_open(&ker, t->f.db, zKer, 2, t->f.aT[VT_T_KER].w) : SQLITE_NOMEM;
    }
    while (rc == SQLITE_OK && (rc = vt__rows_next(&ker)) == SQLITE_OK && ker.bRow)
        rc = vt__xfer_kernel(x, vt__rows_i64(&ker, 0), vt__rows_i64(&ker, 1));
    rc = rc == SQLITE_OK ? vt__xfer_end(x, 1) : (vt__xfer_end(x, 0), rc);
    vt__rows_close(&ker);
    free(zKer);
    if (rc == SQLITE_OK) return VT_EXIT_OK;
    vt__errorf("%s: cannot read copies: %s", t->f.zPath, sqlite3_errstr(rc));
    return vt__exit_for_sqlite(rc);
}

