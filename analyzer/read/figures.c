/* The figure source: one origin for times, and each trace's duration, level, counts and peaks, made once (figures.h). */
#include "figures.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "vramtrace/schema.h"

/* Start (wall clock) order of traces: ap[k] for the timed, anchored traces. */
static int wall_cmp(const void *a, const void *b)
{
    const struct vt_tracefile *x = *(struct vt_tracefile *const *)a, *y = *(struct vt_tracefile *const *)b;
    const int64_t sx = x->t0 + x->fig.shift, sy = y->t0 + y->fig.shift;
    return sx < sy ? -1 : sx > sy;
}

/*
 * Whether the timed traces of apF are of one run: on the wall clock (every one anchored, fig.shift set to its offset),
 * or else on their own clocks (fig.shift 0), each begins before those before it have all ended, give or take a minute
 * (ranks, a launcher's processes).
 * Traces of runs days apart are not: one clock would print their times as months. Without memory to sort them in,
 * they are taken as one run.
 */
static int one_run(struct vt_tracefile *const *apF, int nF)
{
    const int64_t slack = 60 * (int64_t)1000000000;
    struct vt_tracefile **ap = malloc(sizeof *ap * (size_t)(nF ? nF : 1));
    int n = 0, bOne = 1;
    int64_t end = 0;
    if (!ap) return 1;
    for (int i = 0; i < nF; i++)
        if (apF[i] && apF[i]->bTimes) ap[n++] = apF[i];
    qsort(ap, (size_t)n, sizeof *ap, wall_cmp);
    for (int k = 0; k < n; k++) {
        if (k && ap[k]->t0 + ap[k]->fig.shift > end + slack) bOne = 0;
        if (!k || ap[k]->t1 + ap[k]->fig.shift > end) end = ap[k]->t1 + ap[k]->fig.shift;
    }
    free(ap);
    return bOne;
}

void vt__figures_origin(struct vt_tracefile *const *apF, int nF)
{
    int bAnchors = 1, bAnchored, nOpen = 0, bHave = 0, bApart = 0;
    int64_t origin = 0;
    /* several traces are put on the wall clock when every one with a known time has the anchors to do it (a trace
     * without any, a snapshot with no history, has nothing to place): each one's offset to it first */
    for (int i = 0; i < nF; i++) {
        int64_t cupti, wall;
        if (!apF[i]) continue;
        nOpen++;
        cupti = vt__read_meta_int(apF[i], "clock_anchor_cupti_ns");
        wall = vt__read_meta_int(apF[i], "clock_anchor_wall_ns");
        apF[i]->fig.shift = cupti >= 0 && wall >= 0 ? wall - cupti : 0;
        if (apF[i]->bTimes && (cupti < 0 || wall < 0)) bAnchors = 0;
    }
    if (nOpen > 1 && !bAnchors) /* not every one can be placed: judged on their own clocks (one machine's, for a run) */
        for (int i = 0; i < nF; i++)
            if (apF[i]) apF[i]->fig.shift = 0;
    bAnchored = bAnchors;
    if (nOpen > 1 && !one_run(apF, nF)) bAnchors = 0, bApart = 1;
    for (int i = 0; i < nF; i++) {
        struct vt_tracefile *f = apF[i];
        if (!f) continue;
        f->fig.bWall = nOpen > 1 && bAnchors;
        if (!f->fig.bWall) f->fig.shift = 0; /* each on its own clock */
        if (f->bTimes && (!bHave || f->t0 + f->fig.shift < origin)) origin = f->t0 + f->fig.shift, bHave = 1;
    }
    for (int i = 0; i < nF; i++) {
        if (!apF[i]) continue;
        apF[i]->fig.origin = bHave && !bApart ? origin - apF[i]->fig.shift : apF[i]->t0;
        apF[i]->fig.bOtherRuns = bApart;
        if (bApart && apF[i]->bTimes)
            vt__read_note(apF[i], bAnchored ? "read with traces of other runs (on the wall clock no two of them meet): "
                                              "its times count from its own first event"
                                            : "read with traces of other runs (on their clocks no two of them meet): "
                                              "its times count from its own first event");
        vt__read_note_partial(apF[i]); /* its time from this origin */
    }
}

const char *vt__fig_end_said(const struct vt_tracefile *f)
{
    if (!strcmp(f->zSource, "pytorch_snapshot")) return "at the snapshot's dump";
    if (!strcmp(f->zSource, "kineto_json")) return "at the end of the profiler's window";
    return "at exit";
}

int vt__fig_blocks_text(const struct vt_tracefile *f, char *z, size_t n)
{
    const struct vt_lifecounts *lc = &f->fig.lc;
    char zB[32];
    z[0] = 0;
    if (lc->nTensorAlloc == 0 || lc->bTensorDevice) return 0;
    vt__fmt_bytes(lc->tensorLiveEndBytes, zB, sizeof zB);
    snprintf(z, n, "inside these %s, the allocator's blocks (tensors): %lld allocated, %lld live %s (%s)",
             strcmp(f->zSource, "pytorch_snapshot") ? "allocations" : "segments", /* a snapshot's rows */
             (long long)lc->nTensorAlloc, (long long)lc->nTensorLiveEnd, vt__fig_end_said(f), zB);
    return 1;
}

int64_t vt__fig_at(const struct vt_tracefile *f, int64_t ts)
{
    if (ts < 0 || !f->bTimes) return -1;
    return ts <= f->fig.origin ? 0 : ts - f->fig.origin;
}

const char *vt__fig_fmt_at(const struct vt_tracefile *f, int64_t ts, char *z, size_t n)
{
    int64_t at = vt__fig_at(f, ts);
    if (at < 0) snprintf(z, n, "?");
    else if (at == 0) snprintf(z, n, "0 s");
    else vt__fmt_ns(at, z, n);
    return z;
}

const char *vt__fig_fmt_bound(const struct vt_tracefile *f, int64_t ts, int dir, char *z, size_t n)
{
    int64_t at = vt__fig_at(f, ts);
    if (at == 0) snprintf(z, n, "0 s");
    else vt__fmt_ns_dir(at, dir, z, n); /* "?" when unknown */
    return z;
}

const char *vt__fig_fmt_window(const struct vt_tracefile *f, int64_t a, int64_t b, char *z, size_t n)
{
    char zA[32], zB[32];
    if (vt__fig_at(f, a) < 0 && vt__fig_at(f, b) < 0) /* an import of no known time: no "? .. ?" */
        snprintf(z, n, "time unknown");
    else
        snprintf(z, n, "%s .. %s", vt__fig_fmt_bound(f, a, -1, zA, sizeof zA), vt__fig_fmt_bound(f, b, +1, zB, sizeof zB));
    return z;
}

const char *vt__fig_counts_unknown(const struct vt_tracefile *f)
{
    int bImported = vt__read_imported(f);
    if (!bImported || f->fig.lc.nAlloc > 0 || f->fig.lc.nTensorAlloc > 0) return NULL;
    return "allocations and frees unknown (the imported file records none with its address and size)";
}

const char *vt__level_key(int level)
{
    static const char *const az[] = {"none", "segments", "tensors", "segments_and_tensors", "allocations", "totals"};
    return level >= 0 && level <= VT_LEVEL_TOTALS ? az[level] : "none";
}

const char *vt__level_name(int level)
{
    switch (level) {
    case VT_LEVEL_SEGMENTS: return "segments (caching allocator)";
    case VT_LEVEL_TENSORS: return "tensors (the allocator's blocks)";
    case VT_LEVEL_BOTH: return "segments and tensors (the caching allocator's segments, its blocks inside)";
    case VT_LEVEL_ALLOCATIONS: return "allocations";
    case VT_LEVEL_TOTALS: return "totals only (the profiler's running sum; no lifetimes)";
    default: return "none (no allocation known)";
    }
}

const struct vt_figdev *vt__fig_dev(const struct vt_tracefile *f, int acct)
{
    for (int i = 0; i < f->fig.nDev; i++)
        if (f->fig.aDev[i].acct == acct) return &f->fig.aDev[i];
    return NULL;
}

/* The entry of account acct in f->fig.aDev, created with every figure unknown; NULL when out of memory. */
static struct vt_figdev *dev_get(struct vt_tracefile *f, int acct)
{
    struct vt_figdev *a, *d;
    int i;
    for (i = 0; i < f->fig.nDev; i++)
        if (f->fig.aDev[i].acct == acct) return &f->fig.aDev[i];
    if (!(a = realloc(f->fig.aDev, sizeof *a * (size_t)(f->fig.nDev + 1)))) return NULL;
    f->fig.aDev = a;
    /* devices by id, then pinned (-1), then managed (-2) host memory */
    for (i = f->fig.nDev; i > 0 && (acct >= 0 ? a[i - 1].acct < 0 || a[i - 1].acct > acct : a[i - 1].acct < acct);
         i--)
        a[i] = a[i - 1];
    d = &a[i];
    f->fig.nDev++;
    memset(d, 0, sizeof *d);
    d->acct = acct;
    d->allocated = d->allocatedTs = d->reserved = d->reservedTs = d->used = d->usedTs = -1;
    d->procAllocated = d->procReserved = d->before = -1;
    d->total = -1;
    for (int k = 0; acct >= 0 && k < f->nDev; k++)
        if (f->aDev[k].id == acct) d->total = f->aDev[k].totalBytes;
    return d;
}

/* Keep the larger of (*pv, *pts) and (v, ts); v < 0 is unknown. */
static void higher(int64_t *pv, int64_t *pts, int64_t v, int64_t ts)
{
    if (v >= 0 && v > *pv) *pv = v, *pts = ts;
}

/* Meta kineto.device.DEV.zName of f as a whole number, -1 when absent. */
static int64_t kineto_meta(const struct vt_tracefile *f, long dev, const char *zName)
{
    char zKey[80];
    snprintf(zKey, sizeof zKey, "kineto.device.%ld.%s", dev, zName);
    return vt__read_meta_int(f, zKey);
}

/* What importers computed, per device (meta kineto.device.N.*): totals where no lifetime exists, the process's
 * peaks where its memory began before the window. 0, or -1 when out of memory. */
static int importer_figures(struct vt_tracefile *f)
{
    for (int i = 0; i < f->nMeta; i++) {
        const char *zKey = f->aMeta[i].zKey;
        char *zEnd;
        long dev;
        struct vt_figdev *d;
        int64_t sum, before, res;
        if (strncmp(zKey, "kineto.device.", 14) != 0) continue;
        dev = strtol(zKey + 14, &zEnd, 10);
        if (zEnd == zKey + 14 || dev < 0 || dev > 4096 || strcmp(zEnd, ".peak_sum_bytes") != 0) continue;
        if (!(d = dev_get(f, (int)dev))) return -1;
        sum = vt__read_meta_int(f, zKey);
        before = kineto_meta(f, dev, "allocated_before_trace");
        res = kineto_meta(f, dev, "peak_total_reserved");
        if (f->fig.level == VT_LEVEL_TOTALS && sum > 0) { /* no lifetime: the running sum is all there is */
            d->allocated = sum;
            d->allocatedTs = kineto_meta(f, dev, "peak_ns");
            d->bTotalsOnly = 1;
        }
        if (before > 0) { /* memory from before the window: the process's own peaks are Kineto's totals */
            int64_t tot = kineto_meta(f, dev, "peak_total_allocated");
            d->before = before;
            d->procAllocated = tot > 0 ? tot : -1;
        }
        if (res > 0) d->procReserved = res;
    }
    return 0;
}

/* Order of samples: by time, then device. */
static int memsample_cmp(const void *pa, const void *pb)
{
    const struct vt_memsample *a = pa, *b = pb;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    return (a->device > b->device) - (a->device < b->device);
}

/*
 * The next meta row of f from *pi on whose key is zFmt (with its device and sample number:
 * "device.%d.mem_sample.%d%n") and whose value is three whole numbers (into av; its sample number
 * into *pK unless NULL); *pi moves past it. 1 found, 0 none left.
 */
static int series_next(const struct vt_tracefile *f, int *pi, const char *zFmt, int *pDev, long long av[3], int *pK)
{
    size_t nLead = strcspn(zFmt, "%");
    for (; *pi < f->nMeta; ++*pi) {
        const struct vt_metakv *m = &f->aMeta[*pi];
        int k, nEnd = 0;
        if (strncmp(m->zKey, zFmt, nLead) != 0 || sscanf(m->zKey, zFmt, pDev, &k, &nEnd) != 2 || m->zKey[nEnd] ||
            sscanf(m->zValue, "%lld %lld %lld", &av[0], &av[1], &av[2]) != 3 || *pDev < 0 || av[0] < 0)
            continue;
        ++*pi;
        if (pK) *pK = k;
        return 1;
    }
    return 0;
}

int vt__read_mem_samples(const struct vt_tracefile *f, struct vt_memsample **pa, int *pn)
{
    struct vt_memsample *a = NULL;
    int n = 0, nAlloc = 0, i = 0, dev;
    long long av[3];
    *pa = NULL;
    *pn = 0;
    while (series_next(f, &i, "device.%d.mem_sample.%d%n", &dev, av, NULL)) {
        struct vt_memsample m;
        if (av[2] <= 0 || av[1] < 0 || av[1] > av[2]) continue;
        if (n == nAlloc) {
            struct vt_memsample *aNew = realloc(a, sizeof *a * (size_t)(nAlloc = nAlloc ? 2 * nAlloc : 64));
            if (!aNew) {
                free(a);
                return -1;
            }
            a = aNew;
        }
        m.device = dev;
        m.ts = av[0];
        m.freeBytes = av[1];
        m.totalBytes = av[2];
        a[n++] = m;
    }
    if (n > 1) qsort(a, (size_t)n, sizeof *a, memsample_cmp);
    *pa = a;
    *pn = n;
    return 0;
}

int vt__read_others(const struct vt_tracefile *f, int dev, int64_t ts, struct vt_others *pOut)
{
    char zKey[64];
    const char *z;
    long long av[3], launch = -1, nLaunch = 0;
    int i = 0, d, k, kNear = -1;
    memset(pOut, 0, sizeof *pOut);
    pOut->bytes = pOut->sampleTs = pOut->maxBytes = -1;
    snprintf(zKey, sizeof zKey, "nvml.device.%d.others_at_launch", dev);
    if ((z = vt__read_meta_value(f, zKey)) && sscanf(z, "%lld %lld", &launch, &nLaunch) != 2) launch = -1;
    while (series_next(f, &i, "nvml.device.%d.others_sample.%d%n", &d, av, &k)) {
        int64_t gap = av[0] > ts ? av[0] - ts : ts - av[0];
        if (d != dev || av[1] < 0) continue;
        if (pOut->sampleTs < 0 || gap < (pOut->sampleTs > ts ? pOut->sampleTs - ts : ts - pOut->sampleTs))
            pOut->sampleTs = av[0], pOut->bytes = av[1], pOut->nProc = (int)av[2], kNear = k;
        if (av[1] > pOut->maxBytes) pOut->maxBytes = av[1];
        pOut->nSample++;
    }
    pOut->launchBytes = launch;
    if (pOut->bytes < 0 && launch >= 0) pOut->bytes = launch, pOut->nProc = (int)nLaunch, pOut->bLaunch = 1;
    if (pOut->bLaunch) { /* the processes of that reading: the launch's, or the last list written at or before it */
        snprintf(zKey, sizeof zKey, "nvml.device.%d.others_procs_at_launch", dev);
        pOut->zProcs = vt__read_meta_value(f, zKey);
    }
    for (k = kNear; k >= 0 && pOut->bytes >= 0 && !pOut->bLaunch && !pOut->zProcs; k--) {
        snprintf(zKey, sizeof zKey, "nvml.device.%d.others_procs.%d", dev, k);
        pOut->zProcs = vt__read_meta_value(f, zKey);
    }
    snprintf(zKey, sizeof zKey, "nvml.device.%d.used_at_launch_bytes", dev);
    pOut->usedAtLaunch = vt__read_meta_int(f, zKey);
    snprintf(zKey, sizeof zKey, "nvml.device.%d.others_note", dev);
    pOut->zNote = vt__read_meta_value(f, zKey);
    return pOut->bytes >= 0;
}

/* The device memory in use by everyone where the trace knows the device's free memory: at OOMs and the tracer's samples. An SQLite code. */
static int used_figures(struct vt_tracefile *f)
{
    sqlite3_stmt *p = NULL;
    int rc;
    if (!f->db) return SQLITE_OK;
    rc = !vt__read_has(f, "oom_event")
             ? SQLITE_DONE
             : sqlite3_prepare_v2(f->db,
                                  "SELECT device, ts, total_bytes, free_bytes FROM oom_event WHERE free_bytes IS NOT"
                                  " NULL AND device IS NOT NULL ORDER BY ts IS NULL, ts, id", -1, &p, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        int dev = sqlite3_column_int(p, 0);
        struct vt_figdev *d = dev_get(f, dev);
        int64_t total = sqlite3_column_type(p, 2) == SQLITE_INTEGER ? sqlite3_column_int64(p, 2) : -1;
        int64_t freeB = sqlite3_column_int64(p, 3), ts = sqlite3_column_type(p, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(p, 1);
        rc = d ? SQLITE_OK : SQLITE_NOMEM;
        if (d && total <= 0) total = d->total;
        if (d && total > 0 && freeB >= 0 && freeB <= total) higher(&d->used, &d->usedTs, total - freeB, ts);
    }
    sqlite3_finalize(p);
    if (rc == SQLITE_DONE) { /* and the tracer's samples of the device's memory */
        struct vt_memsample *a = NULL;
        int n = 0;
        rc = vt__read_mem_samples(f, &a, &n) == 0 ? SQLITE_OK : SQLITE_NOMEM;
        for (int i = 0; rc == SQLITE_OK && i < n; i++) {
            struct vt_figdev *d = dev_get(f, a[i].device);
            rc = d ? SQLITE_OK : SQLITE_NOMEM;
            if (d) higher(&d->used, &d->usedTs, a[i].totalBytes - a[i].freeBytes, a[i].ts);
        }
        free(a);
    }
    return rc;
}

int vt__read_blocks_only(const struct vt_tracefile *f)
{
    return f->bHaveTensors && f->aMemOp[VT_MEMOP_ALLOC] == 0 && f->aMemOp[VT_MEMOP_VMM_CREATE] == 0 &&
           f->aMemOp[VT_MEMOP_VMM_MAP] == 0;
}

int vt__figures_take(struct vt_tracefile *f, const struct vt_live *Lc, const struct vt_live *Lt)
{
    static const struct vt_live_counts none;
    const struct vt_live_counts *c = Lc ? vt__live_counts(Lc) : &none, *k = Lt ? vt__live_counts(Lt) : &none;
    struct vt_lifecounts *lc = &f->fig.lc;
    int bImported = vt__read_imported(f), bTD, rc;
    /* a torch.profiler trace: the blocks are all the trace knows of the device's memory */
    bTD = lc->bTensorDevice = vt__read_blocks_only(f);
    lc->nAlloc = c->nBegin + (bTD ? k->nBegin : 0);
    lc->allocBytes = c->beginBytes + (bTD ? k->beginBytes : 0);
    lc->nFree = c->nFreed + (bTD ? k->nFreed : 0);
    lc->nFreeMissing = c->nFreeMissing + k->nFreeMissing;
    lc->nFreeUnknown = c->nFreeUnknown;
    lc->nDoubleFree = c->nDoubleFree;
    lc->nLiveEnd = c->nLiveEnd + (bTD ? k->nLiveEnd : 0);
    lc->liveEndBytes = c->liveEndBytes + (bTD ? k->liveEndBytes : 0);
    lc->nInternalEnd = bImported ? 0 : c->nInternalEnd; /* an import has no API calls to tell them by */
    lc->internalEndBytes = bImported ? 0 : c->internalEndBytes;
    lc->nTensorAlloc = k->nBegin;
    lc->nTensorLiveEnd = k->nLiveEnd;
    lc->tensorLiveEndBytes = k->liveEndBytes;
    lc->nTensorStray = k->nDoubleFree + k->nFreeUnknown;
    if (c->nBegin && k->nBegin) f->fig.level = VT_LEVEL_BOTH;
    else if (k->nBegin) f->fig.level = VT_LEVEL_TENSORS;
    else if (c->nBegin) f->fig.level = f->bSegments ? VT_LEVEL_SEGMENTS : VT_LEVEL_ALLOCATIONS;
    else f->fig.level = vt__read_meta_int(f, "kineto.memory_events") > 0 ? VT_LEVEL_TOTALS : VT_LEVEL_NONE;
    /* per account: CUDA's allocations are what the process reserved (segments, a pool's size), and what it
     * allocated when each is one buffer; the allocator's blocks are what it allocated */
    int nAcct = Lc && vt__live_nacct(Lc) > 0 ? vt__live_nacct(Lc) : 0;
    if (Lt && vt__live_nacct(Lt) > nAcct) nAcct = vt__live_nacct(Lt);
    for (int acct = VT_ACCT_MANAGED; acct < nAcct; acct++) {
        const struct vt_live_acct *ac = Lc ? vt__live_acct(Lc, acct) : NULL, *at = Lt ? vt__live_acct(Lt, acct) : NULL;
        struct vt_figdev *d;
        if (!ac && !at) continue;
        if (!(d = dev_get(f, acct))) return SQLITE_NOMEM;
        if (ac) {
            higher(&d->reserved, &d->reservedTs, ac->peak, ac->peakTs);
            higher(&d->reserved, &d->reservedTs, ac->poolPeak, ac->poolPeakTs); /* a pool holding more */
            if (acct < 0 || f->fig.level == VT_LEVEL_ALLOCATIONS) higher(&d->allocated, &d->allocatedTs, ac->peak, ac->peakTs);
        }
        if (at) higher(&d->allocated, &d->allocatedTs, at->peak, at->peakTs);
    }
    if (importer_figures(f) != 0) return SQLITE_NOMEM;
    if ((rc = used_figures(f)) != SQLITE_OK) return rc;
    f->fig.bTaken = 1;
    return SQLITE_OK;
}

int vt__figures_pass(struct vt_tracefile *f)
{
    struct vt_live *Lc = vt__live_new(NULL), *Lt = vt__live_new(NULL);
    int rc = Lc && Lt ? VT_EXIT_OK : VT_EXIT_INTERNAL, src;
    /* each set's figures depend on its own rows only: the two tables are passed one after the other */
    if (rc == VT_EXIT_OK) rc = vt__live_pass(f, Lc, 0);
    if (rc == VT_EXIT_OK) rc = vt__live_pass(f, Lt, 1);
    if (rc == VT_EXIT_OK && (src = vt__figures_take(f, Lc, Lt)) != SQLITE_OK) {
        vt__errorf("%s: cannot read the trace's figures: %s", f->zPath, sqlite3_errstr(src));
        rc = vt__exit_for_sqlite(src);
    }
    if (!Lc || !Lt) vt__errorf("%s: out of memory", f->zPath);
    vt__live_free(Lc);
    vt__live_free(Lt);
    return rc;
}

/* vt__fig_fmt_at in a sentence: "an unknown time" for "?". */
static const char *at(const struct vt_tracefile *f, int64_t ts, char *z, size_t n)
{
    vt__fig_fmt_at(f, ts, z, n);
    if (!strcmp(z, "?")) snprintf(z, n, "an unknown time");
    return z;
}

int64_t vt__fig_trace_peak(const struct vt_tracefile *f)
{
    int64_t hi = -1;
    for (int i = 0; i < f->fig.nDev; i++)
        if (f->fig.aDev[i].acct >= 0 && vt__fig_headline(&f->fig.aDev[i]) > hi) hi = vt__fig_headline(&f->fig.aDev[i]);
    return hi;
}

int vt__fig_headline_of(const struct vt_figdev *d)
{
    if (d->procReserved >= 0) return VT_HEAD_PROC_RESERVED;
    if (d->reserved >= 0) return d->reserved >= d->procAllocated ? VT_HEAD_RESERVED : VT_HEAD_PROC_ALLOCATED;
    if (d->procAllocated >= 0) return VT_HEAD_PROC_ALLOCATED;
    if (d->allocated >= 0) return d->bTotalsOnly ? VT_HEAD_TOTALS : VT_HEAD_ALLOCATED;
    return VT_HEAD_NONE;
}

int64_t vt__fig_headline(const struct vt_figdev *d)
{
    switch (vt__fig_headline_of(d)) {
    case VT_HEAD_PROC_RESERVED: return d->procReserved;
    case VT_HEAD_RESERVED: return d->reserved;
    case VT_HEAD_PROC_ALLOCATED: return d->procAllocated;
    case VT_HEAD_ALLOCATED:
    case VT_HEAD_TOTALS: return d->allocated;
    default: return -1;
    }
}

int64_t vt__fig_beside(const struct vt_figdev *d)
{
    int k = vt__fig_headline_of(d);
    if (k != VT_HEAD_RESERVED && k != VT_HEAD_PROC_RESERVED) return -1;
    return d->procAllocated >= 0 ? d->procAllocated : d->allocated;
}

const char *vt__fig_headline_name(int k, int bKey)
{
    static const char *const azKey[] = {"unknown", "reserved", "process_reserved", "process_allocated", "allocated",
                                        "allocated_running_sum"};
    static const char *const azName[] = {
        "unknown",
        "reserved",
        "reserved by the process (torch.profiler's Total Reserved)",
        "allocated by the process (torch.profiler's Total Allocated)",
        "allocated",
        "allocated (the running sum of the profiler's [memory] Bytes)",
    };
    if (k < 0 || k > VT_HEAD_TOTALS) k = VT_HEAD_NONE;
    return bKey ? azKey[k] : azName[k];
}

const char *vt__fig_peak_text(const struct vt_tracefile *f, const struct vt_figdev *d, char *z, size_t n)
{
    char zR[32], zA[32], zT[32], zU[32];
    size_t k = 0;
#define PUT(...) (k < n ? (k += (size_t)snprintf(z + k, n - k, __VA_ARGS__)) : k)
    z[0] = 0;
    if (d->acct < 0 && d->reserved >= 0) { /* pinned or managed host memory: what the process held */
        PUT("%s at %s", vt__fmt_bytes(d->reserved, zR, sizeof zR), at(f, d->reservedTs, zT, sizeof zT));
    } else if (d->procReserved >= 0 || d->procAllocated >= 0) { /* the process's own, the window's inside it */
        if (d->procReserved >= 0) PUT("%s reserved", vt__fmt_bytes(d->procReserved, zR, sizeof zR));
        if (d->procAllocated >= 0)
            PUT("%s%s allocated", k ? ", " : "", vt__fmt_bytes(d->procAllocated, zA, sizeof zA));
        PUT(" (the process's peak%s: torch.profiler's %s", d->procReserved >= 0 && d->procAllocated >= 0 ? "s" : "",
            d->procReserved >= 0 && d->procAllocated >= 0 ? "Total Reserved and Total Allocated"
            : d->procReserved >= 0                       ? "Total Reserved"
                                                         : "Total Allocated");
        if (d->allocated >= 0)
            PUT("; the profiler's window: %s allocated at %s", vt__fmt_bytes(d->allocated, zA, sizeof zA),
                at(f, d->allocatedTs, zT, sizeof zT));
        PUT(")");
    } else if (d->reserved >= 0 && d->allocated >= 0 && d->reserved != d->allocated) {
        PUT("%s reserved at %s, ", vt__fmt_bytes(d->reserved, zR, sizeof zR), at(f, d->reservedTs, zT, sizeof zT));
        PUT("%s allocated at %s", vt__fmt_bytes(d->allocated, zA, sizeof zA), at(f, d->allocatedTs, zT, sizeof zT));
    } else if (d->reserved >= 0 && d->allocated < 0) {
        PUT("%s reserved at %s (allocated not known: segments only)", vt__fmt_bytes(d->reserved, zR, sizeof zR),
            at(f, d->reservedTs, zT, sizeof zT));
    } else if (d->allocated >= 0 && d->bTotalsOnly) {
        PUT("%s allocated (the running sum of the profiler's [memory] Bytes; no lifetime is known)",
            vt__fmt_bytes(d->allocated, zA, sizeof zA));
    } else if (d->allocated >= 0) {
        PUT("%s allocated at %s%s", vt__fmt_bytes(d->allocated, zA, sizeof zA),
            at(f, d->allocatedTs, zT, sizeof zT),
            d->reserved == d->allocated ? " (= reserved: one CUDA allocation per buffer)"
            : d->reserved < 0           ? " (reserved not known)"
                                        : "");
    } else {
        PUT("unknown");
    }
    if (d->used >= 0)
        PUT("; %s in use on the device (every process and the CUDA context) at %s", vt__fmt_bytes(d->used, zU, sizeof zU),
            at(f, d->usedTs, zT, sizeof zT));
#undef PUT
    return z;
}

int64_t vt__fig_window_total(const struct vt_tracefile *f, int64_t a, int64_t b)
{
    int64_t sum = -1;
    if (f->fig.level != VT_LEVEL_TOTALS) return -1;
    for (int i = 0; i < f->fig.nDev; i++) {
        const struct vt_figdev *d = &f->fig.aDev[i];
        if (!d->bTotalsOnly || d->allocatedTs < a || d->allocatedTs > b) continue;
        sum = (sum < 0 ? 0 : sum) + d->allocated;
    }
    return sum;
}

/* "key": v, with null for an unknown (< 0) value. */
static void json_num(FILE *out, const char *zKey, int64_t v, int bComma)
{
    if (v < 0) fprintf(out, "\"%s\": null%s", zKey, bComma ? ", " : "");
    else fprintf(out, "\"%s\": %lld%s", zKey, (long long)v, bComma ? ", " : "");
}

void vt__fig_json(FILE *out, const struct vt_tracefile *f)
{
    fputc('[', out);
    for (int i = 0; i < f->fig.nDev; i++) {
        const struct vt_figdev *d = &f->fig.aDev[i];
        fprintf(out, "%s{\"account\": \"%s\", ", i ? ", " : "",
                d->acct >= 0 ? "device" : d->acct == VT_ACCT_PINNED ? "pinned" : "managed");
        json_num(out, "device", d->acct >= 0 ? d->acct : -1, 1);
        json_num(out, "total_bytes", d->total, 1);
        json_num(out, "headline_bytes", vt__fig_headline(d), 1);
        json_num(out, "allocated_bytes", d->allocated, 1);
        json_num(out, "allocated_ts", d->allocated >= 0 ? d->allocatedTs : -1, 1);
        json_num(out, "allocated_at_ns", d->allocated >= 0 ? vt__fig_at(f, d->allocatedTs) : -1, 1);
        fprintf(out, "\"allocated_from_totals\": %s, ", d->bTotalsOnly ? "true" : "false");
        json_num(out, "reserved_bytes", d->reserved, 1);
        json_num(out, "reserved_ts", d->reserved >= 0 ? d->reservedTs : -1, 1);
        json_num(out, "reserved_at_ns", d->reserved >= 0 ? vt__fig_at(f, d->reservedTs) : -1, 1);
        json_num(out, "used_bytes", d->used, 1);
        json_num(out, "used_ts", d->used >= 0 ? d->usedTs : -1, 1);
        json_num(out, "used_at_ns", d->used >= 0 ? vt__fig_at(f, d->usedTs) : -1, 1);
        json_num(out, "process_allocated_bytes", d->procAllocated, 1);
        json_num(out, "process_reserved_bytes", d->procReserved, 1);
        json_num(out, "allocated_before_bytes", d->before, 0);
        fputc('}', out);
    }
    fputc(']', out);
}

void vt__figures_free(struct vt_tracefile *f)
{
    free(f->fig.aDev);
    f->fig.aDev = NULL;
    f->fig.nDev = 0;
}
