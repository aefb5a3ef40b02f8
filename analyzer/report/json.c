/* Report: JSON with versioned keys (documented in docs/analysis.md). */
#include "report.h"

#include <string.h>

/* An integer, or null when negative (unknown). */
static void jint(FILE *f, const char *zKey, int64_t v, int bComma)
{
    fprintf(f, "\"%s\": ", zKey);
    if (v < 0) fputs("null", f);
    else fprintf(f, "%lld", (long long)v);
    if (bComma) fputs(", ", f);
}

/* An address: an unsigned 64-bit value (stored as its pattern, docs/schema.md), never unknown. */
static void jaddr(FILE *f, const char *zKey, int64_t v, int bComma)
{
    fprintf(f, "\"%s\": %llu", zKey, (unsigned long long)v);
    if (bComma) fputs(", ", f);
}

static void jstr(FILE *f, const char *zKey, const char *z, int bComma)
{
    fprintf(f, "\"%s\": ", zKey);
    vt__json_str(f, z && *z ? z : NULL);
    if (bComma) fputs(", ", f);
}

/* A JSON array of at most nMax allocations from a snapshot. */
static void snaps(FILE *f, const struct vt_trace *t, const struct vt_snap *a, int n, int nMax)
{
    fputc('[', f);
    for (int k = 0; k < n && k < nMax; k++) {
        fprintf(f, "%s{", k ? ", " : "");
        jaddr(f, "address", a[k].address, 1);
        jint(f, "bytes", a[k].bytes, 1);
        jint(f, "alloc_ts", a[k].allocTs, 1);
        jint(f, "last_use_ts", a[k].lastUse, 1);
        jint(f, "mem_kind", a[k].memKind, 1);
        jstr(f, "site", a[k].site >= 0 ? t->sites.a[a[k].site].zSite : NULL, 0);
        fputc('}', f);
    }
    fputc(']', f);
}

/*
 * A JSON array of at most nMax groups (what was live by site and memory kind):
 * {count, bytes, site, stack_id, mem_kind, largest {address, bytes, alloc_ts, last_use_ts}}.
 */
static void groups(FILE *f, const struct vt_trace *t, const struct vt_group *a, int n, int nMax)
{
    fputc('[', f);
    for (int k = 0; k < n && k < nMax; k++) {
        const struct vt_site *s = a[k].site >= 0 && a[k].site < t->sites.n ? &t->sites.a[a[k].site] : NULL;
        fprintf(f, "%s{", k ? ", " : "");
        jint(f, "count", a[k].count, 1);
        jint(f, "bytes", a[k].bytes, 1);
        jstr(f, "site", s ? s->zSite : NULL, 1);
        jint(f, "stack_id", s ? s->stackId : -1, 1);
        jint(f, "mem_kind", a[k].memKind, 1);
        fputs("\"largest\": {", f);
        jaddr(f, "address", a[k].largest.address, 1);
        jint(f, "bytes", a[k].largest.bytes, 1);
        jint(f, "alloc_ts", a[k].largest.allocTs, 1);
        jint(f, "last_use_ts", a[k].largest.lastUse, 0);
        fputs("}}", f);
    }
    fputc(']', f);
}

/*
 * What a peak or an OOM was (breakdown.c): "breakdown_basis" (the figure the parts sum to:
 * "reserved", "allocated", "device used", "process"; null without a breakdown), "breakdown_bytes"
 * (that sum), "breakdown_ts" (the moment it sums, trace ns), "breakdown_segment_level", "breakdown": [{category, bytes, count, evidence,
 * owner}], largest first, unknown last, and "breakdown_other_processes" (with device used: {bytes, the
 * other processes' part where NVML told it, else null; at_context_at_most_bytes, evidence}; else null).
 */
static void breakdown_json(FILE *f, const struct vt_breakdown *b)
{
    jstr(f, "breakdown_basis", b->n ? b->zBasis : NULL, 1);
    jint(f, "breakdown_bytes", b->n ? b->total : -1, 1);
    jint(f, "breakdown_ts", b->n ? b->ts : -1, 1);
    fprintf(f, "\"breakdown_segment_level\": %s, \"breakdown\": [", b->n && b->bSegment ? "true" : "false");
    for (int k = 0; k < b->n; k++) {
        const struct vt_bdpart *p = &b->a[k];
        fprintf(f, "%s{", k ? ", " : "");
        jstr(f, "category", vt__cat_key(p->cat), 1);
        jint(f, "bytes", p->bytes, 1);
        jint(f, "count", p->count, 1);
        jstr(f, "owner", p->zOwner, 1);
        jstr(f, "evidence", p->zEvidence, 0);
        fputc('}', f);
    }
    fputs("], \"breakdown_other_processes\": ", f);
    if (b->n && (b->zOthers || vt__bd_part(b, VT_CAT_OTHERS))) { /* without a part its bytes are not known */
        const struct vt_bdpart *p = vt__bd_part(b, VT_CAT_OTHERS);
        fputc('{', f);
        jint(f, "bytes", p ? p->bytes : -1, 1);
        jint(f, "at_context_at_most_bytes", b->othersAtMost, 1);
        jstr(f, "evidence", p ? p->zEvidence : b->zOthers, 0);
        fputs("}, ", f);
    } else {
        fputs("null, ", f);
    }
}

/*
 * What would fit on a device (fit.c): "fit": null without an estimate, else {capacity_bytes,
 * need_bytes, context_bytes, context_assumed, headroom_bytes, fixed_bytes, scaling_bytes, max_scale,
 * batch, max_batch, max_is_lower_bound, upper_scale, upper_batch (segment level: the stated upper
 * estimate, null none), expandable_max_batch (the expandable_segments saving's replayed batch, null
 * none), assumptions[], savings[{key, what, bytes, assumption}]}.
 */
static void fit_json(FILE *f, const struct vt_fit *x)
{
    fputs("\"fit\": ", f);
    if (!x->bDone) {
        fputs("null, ", f);
        return;
    }
    fputc('{', f);
    jint(f, "capacity_bytes", x->capacity, 1);
    jint(f, "need_bytes", x->need, 1);
    jint(f, "context_bytes", x->context, 1);
    fprintf(f, "\"context_assumed\": %s, \"headroom_bytes\": ", x->bContextAssumed ? "true" : "false");
    if (x->capacity > 0) fprintf(f, "%lld, ", (long long)x->headroom); /* negative: short by that much */
    else fputs("null, ", f);
    jint(f, "fixed_bytes", x->fixed, 1);
    jint(f, "scaling_bytes", x->scaling, 1);
    if (x->maxScale >= 0) fprintf(f, "\"max_scale\": %.4f, ", x->maxScale);
    else fputs("\"max_scale\": null, ", f);
    jint(f, "batch", x->batch, 1);
    jint(f, "max_batch", x->maxBatch, 1);
    fprintf(f, "\"max_is_lower_bound\": %s, ", x->bLowerBound ? "true" : "false");
    fprintf(f, "\"max_is_upper_bound\": %s, ", x->bUpperBound ? "true" : "false");
    if (x->upScale >= 0) fprintf(f, "\"upper_scale\": %.4f, ", x->upScale);
    else fputs("\"upper_scale\": null, ", f);
    jint(f, "upper_batch", x->upBatch, 1);
    jint(f, "expandable_max_batch", x->expandBatch > 0 ? x->expandBatch : -1, 1);
    fputs("\"assumptions\": [", f);
    for (int k = 0; k < x->nAssume; k++) {
        if (k) fputs(", ", f);
        vt__json_str(f, x->azAssume[k]);
    }
    fputs("], \"savings\": [", f);
    for (int k = 0; k < x->nSave; k++) {
        fprintf(f, "%s{", k ? ", " : "");
        jstr(f, "key", x->aSave[k].zKey, 1);
        jstr(f, "what", x->aSave[k].zWhat, 1);
        jint(f, "bytes", x->aSave[k].bytes, 1);
        jstr(f, "assumption", x->aSave[k].zAssume, 0);
        fputc('}', f);
    }
    fputs("]}, ", f);
}

/* One element of "traces" (keys documented in docs/analysis.md). */
static void trace_json(FILE *f, const struct vt_result *r, int i)
{
    const struct vt_trace *t = &r->aTrace[i];
    const struct vt_opts *o = r->pOpts;
    int bMem = vt__memory_known(t);
    fputs("    {", f);
    jstr(f, "path", t->f.zPath, 1);
    jstr(f, "pid", t->f.zPid, 1);
    jstr(f, "rank", t->f.zRank, 1);
    jstr(f, "hostname", t->f.zHost, 1);
    jstr(f, "cmdline", t->f.zCmd, 1);
    /* the level, times and counts as the figure source made them (read/figures.h) */
    jstr(f, "level", vt__level_key(t->f.fig.level), 1);
    fprintf(f, "\"tensor_level\": %s, \"segment_level\": %s, \"closed_cleanly\": %s, \"written_back\": %s,\n      ",
            t->f.fig.level == VT_LEVEL_TENSORS || t->f.fig.level == VT_LEVEL_BOTH || t->f.bTensors ? "true" : "false",
            t->f.fig.level == VT_LEVEL_SEGMENTS || t->f.fig.level == VT_LEVEL_BOTH ? "true" : "false",
            t->f.bCleanClose ? "true" : "false", t->f.bWritable ? "true" : "false");
    jint(f, "start_ns", t->f.bTimes ? t->f.t0 : -1, 1); /* no event with a known time: unknown */
    jint(f, "end_ns", t->f.bTimes ? t->f.t1 : -1, 1);
    jint(f, "duration_ns", t->f.fig.duration, 1);
    jint(f, "origin_ns", t->f.bTimes ? t->f.fig.origin : -1, 0); /* every printed time counts from it */
    fputs(",\n      \"peaks\": ", f);
    vt__fig_json(f, &t->f);
    fputs(",\n      \"lifetimes\": {", f);
    { /* an import holding no allocation: its counts are unknown (null), never 0 */
        int64_t k = vt__fig_counts_unknown(&t->f) ? -1 : 0;
        jint(f, "allocations", k < 0 ? k : t->lc.nAlloc, 1);
        jint(f, "allocated_bytes", k < 0 ? k : t->lc.allocBytes, 1);
        jint(f, "freed", k < 0 ? k : t->lc.nFree, 1);
        jint(f, "live_at_end", k < 0 ? k : t->lc.nLiveEnd, 1);
        jint(f, "live_at_end_bytes", k < 0 ? k : t->lc.liveEndBytes, 1);
        jint(f, "free_unknown", k < 0 ? k : t->lc.nFreeUnknown, 1);
        jint(f, "double_free", k < 0 ? k : t->lc.nDoubleFree, 1);
        jint(f, "free_missing", k < 0 ? k : t->lc.nFreeMissing, 1);
        jint(f, "kernel_uses", t->lc.nKernelUse, 1);
        jint(f, "copy_uses", t->lc.nCopyUse, 1);
        jint(f, "uses_matched", t->lc.nUseMatched, 1);
        jint(f, "tensor_allocations", k < 0 ? k : t->lc.nTensorAlloc, 1);
        jint(f, "tensor_live_at_end", k < 0 ? k : t->lc.nTensorLiveEnd, 1);
        jint(f, "tensor_live_at_end_bytes", k < 0 ? k : t->lc.tensorLiveEndBytes, 0);
    }
    fputs("},\n      \"devices\": [", f);
    for (int d = 0; d < t->tl.nDev; d++) {
        const struct vt_device *dv = &t->tl.aDev[d];
        fprintf(f, "%s\n        {\"id\": %d, ", d ? "," : "", dv->id);
        jstr(f, "name", dv->zName, 1);
        jint(f, "total_bytes", dv->totalBytes > 0 ? dv->totalBytes : -1, 1);
        { /* the headline peak of the figure source; the timeline's own below it */
            const struct vt_figdev *fd = vt__fig_dev(&t->f, dv->id);
            int64_t head = fd ? vt__fig_headline(fd) : -1;
            jint(f, "peak_bytes", head, 1);
            jint(f, "peak_ts", !fd || head < 0 ? -1 : head == fd->reserved ? fd->reservedTs
                                              : head == fd->allocated ? fd->allocatedTs : -1, 1);
        }
        jint(f, "timeline_peak_bytes", dv->peak, 1);
        jint(f, "timeline_peak_ts", t->f.bTimes ? dv->peakTs : -1, 1);
        jint(f, "pool_reserved_peak_bytes", dv->poolPeakReserved, 1);
        if (dv->tensorPeak > 0) { /* the framework allocator's blocks (tensor_event) inside the device memory */
            jint(f, "tensor_at_peak_bytes", dv->tensorAtPeak, 1);
            jint(f, "tensor_peak_bytes", dv->tensorPeak, 1);
            jint(f, "tensor_peak_ts", t->f.bTimes ? dv->tensorPeakTs : -1, 1);
        }
        jint(f, "live_at_exit_bytes", dv->live, 1);
        fputs("\n         ", f);
        breakdown_json(f, &dv->bd);
        fputs("\n         ", f);
        fit_json(f, &dv->fit);
        jint(f, "live_at_peak_ts", dv->id >= 0 && t->f.bTimes ? dv->atPeakTs : -1, 1); /* = breakdown_ts */
        fputs("\n         \"live_at_peak\": ", f);
        snaps(f, t, dv->aTop, dv->nTop, o->nTop);
        fputs(",\n         \"live_at_peak_groups\": ", f);
        groups(f, t, dv->aGroup, dv->nGroup, o->nTop);
        fputs(",\n         \"timeline\": {", f);
        jint(f, "start_ns", t->f.bTimes ? t->f.t0 : -1, 1);
        jint(f, "bucket_ns", t->f.bTimes ? (t->f.t1 - t->f.t0 + 1 + VT_TIMELINE_BUCKETS - 1) / VT_TIMELINE_BUCKETS : -1, 1);
        fputs("\"max_live_bytes\": [", f);
        for (int k = 0; k < VT_TIMELINE_BUCKETS; k++) fprintf(f, "%s%lld", k ? "," : "", (long long)dv->aMax[k]);
        fputs("], \"last_live_bytes\": [", f);
        for (int k = 0; k < VT_TIMELINE_BUCKETS; k++) fprintf(f, "%s%lld", k ? "," : "", (long long)dv->aLast[k]);
        fputs("], \"pool_reserved_bytes\": [", f);
        for (int k = 0; k < VT_TIMELINE_BUCKETS; k++) fprintf(f, "%s%lld", k ? "," : "", (long long)dv->aPool[k]);
        fputs("]}}", f);
    }
    fputs("],\n      ", f);
    jstr(f, "phase_source", t->ph.zSource, 1);
    jstr(f, "phase_doubt", t->ph.zDoubt, 1);
    jint(f, "iterations", t->ph.nIter, 0);
    fputs(",\n      \"phases\": [", f);
    for (int k = 0; k < t->ph.n; k++) {
        const struct vt_phase *p = &t->ph.a[k];
        fprintf(f, "%s\n        {\"id\": %d, ", k ? "," : "", k + 1);
        jstr(f, "kind", vt__phase_kind_name(p->kind), 1);
        jstr(f, "name", p->zName, 1);
        jstr(f, "source", p->zSource, 1);
        jint(f, "start_ns", p->start, 1);
        jint(f, "end_ns", p->end, 1);
        jint(f, "iterations", p->nIter, 1);
        /* no memory data: unknown, not 0; an importer's running total where it peaked inside the phase */
        jint(f, "peak_bytes", bMem ? p->peak : vt__fig_window_total(&t->f, p->start, p->end), 1);
        jint(f, "peak_ts", bMem ? p->peakTs : -1, 1);
        jint(f, "start_live_bytes", bMem ? p->startLive : -1, 1);
        jint(f, "carried_from_training_bytes", bMem ? p->carried : -1, 1);
        fputs("\"live_at_peak\": ", f);
        snaps(f, t, p->aTop, p->nTop, o->nTop);
        fputs(", \"live_at_peak_groups\": ", f);
        groups(f, t, p->aGroup, p->nGroup, o->nTop);
        fputc('}', f);
    }
    fputs("],\n      \"ooms\": [", f);
    for (int k = 0; k < t->nOom; k++) {
        const struct vt_oom *m = &t->aOom[k];
        fprintf(f, "%s\n        {", k ? "," : "");
        jint(f, "ts", m->ts, 1);
        jint(f, "device", m->device, 1);
        jint(f, "requested_bytes", m->requested, 1);
        jint(f, "free_bytes", m->freeBytes, 1);
        jint(f, "total_bytes", m->totalBytes, 1);
        jint(f, "held_bytes", m->held, 1);
        jint(f, "pool_cached_bytes", m->poolCached, 1);
        jint(f, "others_bytes", m->freeBytes >= 0 ? m->others : -1, 1);
        jint(f, "others_nvml_bytes", m->othersNvml, 1);
        jint(f, "others_nvml_processes", m->othersNvml >= 0 ? m->othersNvmlProcs : -1, 1);
        jstr(f, "others_decided_by", m->othersNvml >= 0 ? "nvml" : m->freeBytes >= 0 && m->others >= 0
                                                                      ? "device_used_less_held" : NULL, 1);
        jstr(f, "verdict", m->zVerdict, 1);
        jstr(f, "site", m->site >= 0 ? t->sites.a[m->site].zSite : NULL, 1);
        breakdown_json(f, &m->bd);
        fputs("\"live\": ", f);
        snaps(f, t, m->aTop, m->nTop, o->nTop);
        fputs(", \"live_groups\": ", f);
        groups(f, t, m->aGroup, m->nGroup, o->nTop);
        fputc('}', f);
    }
    fputs("],\n      \"oom_failures\": [", f); /* the OOM events grouped: one failed request each */
    for (int k = 0; k < t->nFail; k++) {
        const struct vt_oomfail *q = &t->aFail[k];
        fprintf(f, "%s\n        {", k ? "," : "");
        jint(f, "first_ts", q->firstTs, 1);
        jint(f, "last_ts", q->lastTs, 1);
        jint(f, "device", q->device, 1);
        jint(f, "requested_bytes", q->requested, 1);
        fputs("\"attempts\": [", f);
        for (int a = 0; a < q->nAttempt; a++) fprintf(f, "%s%d", a ? ", " : "", q->iFirst + a);
        fputs("], ", f);
        jint(f, "judged_attempt", q->iJudged, 1);
        jstr(f, "verdict", t->aOom[q->iJudged].zVerdict, 1);
        fprintf(f, "\"job_ended_here\": %s, ", q->bFatal ? "true" : "false");
        jint(f, "live_at_end_bytes", q->bFatal ? q->liveEndBytes : -1, 1);
        jint(f, "live_at_end_count", q->bFatal ? q->liveEndCount : -1, 0);
        fputc('}', f);
    }
    fputs("],\n      \"transfers\": {", f);
    for (int d = 0; d < 2; d++) {
        const struct vt_xfer *x = &t->xf.x[d];
        fprintf(f, "\"%s\": {", d ? "dtoh" : "htod");
        jint(f, "count", x->count, 1);
        jint(f, "bytes", x->bytes, 1);
        jint(f, "ns", x->ns, 1);
        jint(f, "pageable_count", x->pageCount, 1);
        jint(f, "pageable_bytes", x->pageBytes, 1);
        jint(f, "pageable_ns", x->pageNs, 1);
        fprintf(f, "\"best_gbps\": %.3f}, ", x->bestBw);
    }
    jint(f, "copy_ns", t->xf.copyNs, 1);
    jint(f, "copy_without_kernel_ns", t->xf.copySerialNs, 1);
    jint(f, "pageable_without_kernel_ns", t->xf.pageSerialNs, 1);
    jint(f, "kernel_busy_ns", t->xf.kernelBusyNs, 1);
    jint(f, "first_kernel_ts", t->xf.firstKernelTs > 0 ? t->xf.firstKernelTs : -1, 1);
    fputs("\"startup\": {", f); /* copies that ended before the first kernel */
    jint(f, "count", t->xf.preCount, 1);
    jint(f, "ns", t->xf.preNs, 1);
    jint(f, "pageable_count", t->xf.x[0].prePageCount + t->xf.x[1].prePageCount, 1);
    jint(f, "pageable_bytes", t->xf.x[0].prePageBytes + t->xf.x[1].prePageBytes, 1);
    jint(f, "pageable_ns", t->xf.x[0].prePageNs + t->xf.x[1].prePageNs, 0);
    fputc('}', f);
    fputs("},\n      \"live_at_exit\": ", f);
    snaps(f, t, t->tl.aEnd, t->tl.nEnd, o->nTop);
    if (o->bBySite) {
        fputs(",\n      \"sites\": [", f);
        for (int k = 0, n = 0; k < t->sites.n; k++) {
            const struct vt_site *s = &t->sites.a[k];
            if (s->nAlloc == 0) continue; /* as vt__report_sites: its allocations count elsewhere, or none */
            fprintf(f, "%s\n        {", n++ ? "," : "");
            jstr(f, "site", s->zSite, 1);
            jint(f, "stack_id", s->stackId, 1);
            jint(f, "allocations", s->nAlloc, 1);
            jint(f, "total_bytes", s->totalBytes, 1);
            jint(f, "peak_live_bytes", s->peakLiveBytes, 1);
            jint(f, "live_at_exit_count", s->nLive, 1);
            jint(f, "live_at_exit_bytes", s->liveBytes, 0);
            fputc('}', f);
        }
        fputc(']', f);
    }
    fputs(",\n      \"notes\": [", f);
    for (int k = 0; k < t->f.nNote; k++) {
        if (k) fputs(", ", f);
        vt__json_str(f, t->f.azNote[k]);
    }
    fputs("]}", f);
}

/*
 * What a finding stands for (group.c): "traces" and "ranks" (null for a trace without one) it
 * occurred on, "where" ("all 64 ranks", "rank 2 only"; null with one trace), "occurrences"
 * (findings merged into it) and the spread of their bytes.
 */
static void group_json(FILE *f, const struct vt_result *r, const struct vt_finding *x)
{
    int nT = x->aTraces ? x->nTraces : 1;
    const int *aT = x->aTraces ? x->aTraces : &x->trace;
    char zWhere[256];
    fputs("\"traces\": [", f);
    for (int k = 0; k < nT; k++) fprintf(f, "%s%d", k ? ", " : "", aT[k]);
    fputs("], \"ranks\": [", f);
    for (int k = 0; k < nT; k++) {
        if (k) fputs(", ", f);
        vt__json_str(f, r->aTrace[aT[k]].f.zRank[0] ? r->aTrace[aT[k]].f.zRank : NULL);
    }
    fputs("], ", f);
    vt__fmt_ranks(r, x, zWhere, sizeof zWhere);
    jstr(f, "where", zWhere[0] ? zWhere : NULL, 1);
    fprintf(f, "\"occurrences\": %d, ", x->nSame); /* an unknown size (-1) is null, as "bytes" says it */
    jint(f, "bytes_min", x->nSame > 1 ? x->bytesMin : x->bytes, 1);
    jint(f, "bytes_median", x->nSame > 1 ? x->bytesMed : x->bytes, 1);
    jint(f, "bytes_max", x->nSame > 1 ? x->bytesMax : x->bytes, 0);
}

/* The whole JSON report; 0, or -1 on a write error. */
int vt__report_json(FILE *f, const struct vt_result *r)
{
    int aSev[VT_SEV_HIGH + 1] = {0};
    int64_t sum = 0, hi = -1, lo = -1;
    fprintf(f, "{\n  \"vramtrace_report_version\": %d,\n  \"generator\": \"vramtrace %s\",\n  \"traces\": [\n",
            VT_REPORT_VERSION, VT_VERSION);
    for (int i = 0; i < r->nTrace; i++) {
        if (i) fputs(",\n", f);
        trace_json(f, r, i);
        int64_t peak = vt__fig_trace_peak(&r->aTrace[i].f); /* the headline peak (figures.h) */
        if (peak < 0) continue; /* its peak is unknown: left out */
        sum += peak;
        if (hi < 0 || peak > hi) hi = peak;
        if (lo < 0 || peak < lo) lo = peak;
    }
    fputs("\n  ],\n  \"findings\": [", f);
    for (int i = 0; i < r->nFind; i++) {
        const struct vt_finding *x = &r->aFind[i];
        aSev[x->severity]++;
        fprintf(f, "%s\n    {\"trace\": %d, ", i ? "," : "", x->trace);
        jstr(f, "pid", r->aTrace[x->trace].f.zPid, 1);
        jstr(f, "rank", r->aTrace[x->trace].f.zRank, 1);
        jstr(f, "kind", x->zKind, 1);
        jstr(f, "severity", vt__sev_name(x->severity), 1);
        jstr(f, "title", x->zTitle, 1);
        jint(f, "bytes", x->bytes, 1);
        jint(f, "count", x->count, 1);
        jint(f, "first_ts", x->firstTs, 1);
        jint(f, "last_ts", x->lastTs, 1);
        jint(f, "device", x->device, 1);
        jstr(f, "phase", x->zPhase, 1);
        jint(f, "stack_id", x->stackId, 1);
        jstr(f, "site", x->zSite, 1);
        jstr(f, "evidence", x->zEvidence, 1);
        jstr(f, "fix", x->zFix, 1);
        group_json(f, r, x);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"summary\": {\"traces\": %d, \"findings\": %d, \"high\": %d, \"medium\": %d, "
               "\"low\": %d, \"info\": %d, ",
            r->nTrace, r->nFind, aSev[VT_SEV_HIGH], aSev[VT_SEV_MEDIUM], aSev[VT_SEV_LOW], aSev[VT_SEV_INFO]);
    jint(f, "sum_of_device_peaks_bytes", hi < 0 ? -1 : sum, 1); /* traces with known peaks; null when none */
    jint(f, "max_device_peak_bytes", hi, 1);
    jint(f, "min_device_peak_bytes", lo, 1);
    { /* what could be judged: no finding where nothing could be is not "no problem" */
        int bMemory, bCopies;
        vt__report_judged(r, &bMemory, &bCopies);
        fprintf(f, "\"judged\": {\"memory\": %s, \"copies\": %s}", bMemory ? "true" : "false", bCopies ? "true" : "false");
    }
    fputs("}\n}\n", f);
    return ferror(f) ? -1 : 0;
}
