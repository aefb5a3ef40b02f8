/* Detector: transfer bottlenecks — pageable copies, copies serialized with compute, pinned growth. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "schema.h"

struct ival {
    int64_t a, b;
};

/* Start and end of the current kernel row; an end before the start (incomplete record) is the start. */
static void kernel_row(sqlite3_stmt *p, int64_t *pA, int64_t *pB)
{
    *pA = sqlite3_column_int64(p, 0);
    *pB = sqlite3_column_int64(p, 1);
    if (*pB < *pA) *pB = *pA;
}

/*
 * One streaming pass over host<->device copies and kernels (both in start
 * order): per-direction volume, pageable share, best bandwidth, and how much
 * copy time had no kernel running. Keeps only the kernel intervals that can
 * still overlap a later copy. Returns a VT_EXIT code.
 */
int vt__transfers(struct vt_trace *t)
{
    sqlite3_stmt *pCopy = NULL, *pKer = NULL;
    struct ival *aU = NULL;
    int nU = 0, nUAlloc = 0, head = 0, bKer = 0, rc;
    int64_t kA = 0, kB = 0;

    /* in rowid order where vt__scan found that to be start order */
    char *zCopy = vt__ordered_sql(t, t->bCopyRowid, "start, end, copy_kind, src_kind, dst_kind, bytes", "memcpy",
                                  "copy_kind IN (1, 2)", "start");
    char *zKer = vt__ordered_sql(t, t->bKerRowid, "start, end", "kernel", "1", "start");

    rc = zCopy && zKer ? sqlite3_prepare_v2(t->db, zCopy, -1, &pCopy, NULL) : SQLITE_NOMEM;
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(t->db, zKer, -1, &pKer, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(pKer);
        bKer = rc == SQLITE_ROW;
        if (bKer) kernel_row(pKer, &kA, &kB);
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    while (rc == SQLITE_OK && (rc = sqlite3_step(pCopy)) == SQLITE_ROW) {
        int64_t s = sqlite3_column_int64(pCopy, 0), e = sqlite3_column_int64(pCopy, 1), bytes;
        int kind = sqlite3_column_int(pCopy, 2), dir = kind == VT_COPY_HTOD ? 0 : 1;
        int hostKind = sqlite3_column_int(pCopy, dir == 0 ? 3 : 4);
        int64_t dur = e > s ? e - s : 1, overlap = 0;
        struct vt_xfer *x = &t->xfer[dir];
        rc = SQLITE_OK;
        bytes = sqlite3_column_int64(pCopy, 5);
        /* pull kernels that start before this copy ends into the union of busy intervals */
        while (rc == SQLITE_OK && bKer && kA < e) {
            if (nU > head && kA <= aU[nU - 1].b) {
                if (kB > aU[nU - 1].b) aU[nU - 1].b = kB;
            } else {
                if (nU == nUAlloc) {
                    if (head > 0) { /* compact before growing */
                        memmove(aU, aU + head, sizeof *aU * (size_t)(nU - head));
                        nU -= head;
                        head = 0;
                    }
                    if (nU == nUAlloc) {
                        int nNew = nUAlloc ? nUAlloc * 2 : 256;
                        struct ival *aNew = realloc(aU, sizeof *aNew * (size_t)nNew);
                        if (!aNew) { rc = SQLITE_NOMEM; break; }
                        aU = aNew;
                        nUAlloc = nNew;
                    }
                }
                aU[nU].a = kA;
                aU[nU].b = kB;
                nU++;
            }
            rc = sqlite3_step(pKer);
            bKer = rc == SQLITE_ROW;
            if (bKer) kernel_row(pKer, &kA, &kB);
            rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
        }
        if (rc != SQLITE_OK) break;
        while (head < nU && aU[head].b <= s) {
            t->kernelBusyNs += aU[head].b - aU[head].a;
            head++;
        }
        for (int i = head; i < nU && aU[i].a < e; i++) {
            int64_t a = aU[i].a > s ? aU[i].a : s, b = aU[i].b < e ? aU[i].b : e;
            if (b > a) overlap += b - a;
        }
        x->count++;
        x->bytes += bytes;
        x->ns += dur;
        t->copyNs += dur;
        t->copySerialNs += dur - (overlap < dur ? overlap : dur);
        if (bytes >= 65536 && (double)bytes / (double)dur > x->bestBw) x->bestBw = (double)bytes / (double)dur;
        if (hostKind == VT_MEMKIND_PAGEABLE) {
            x->pageCount++;
            x->pageBytes += bytes;
            x->pageNs += dur;
            if (x->firstPageTs == 0) x->firstPageTs = s;
            x->lastPageTs = e;
        }
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    /* the busy total: what is left of the union, then the rest of the kernels */
    {
        int64_t curA = -1, curB = -1;
        for (int i = head; i < nU; i++) {
            if (curB >= 0 && aU[i].a <= curB) {
                if (aU[i].b > curB) curB = aU[i].b;
                continue;
            }
            if (curB >= 0) t->kernelBusyNs += curB - curA;
            curA = aU[i].a;
            curB = aU[i].b;
        }
        while (rc == SQLITE_OK && bKer) {
            if (curB >= 0 && kA <= curB) {
                if (kB > curB) curB = kB;
            } else {
                if (curB >= 0) t->kernelBusyNs += curB - curA;
                curA = kA;
                curB = kB;
            }
            rc = sqlite3_step(pKer);
            bKer = rc == SQLITE_ROW;
            if (bKer) kernel_row(pKer, &kA, &kB);
            rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
        }
        if (curB >= 0) t->kernelBusyNs += curB - curA;
    }
    free(aU);
    sqlite3_finalize(pCopy);
    sqlite3_finalize(pKer);
    free(zCopy);
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
