/* The replay: memory events, tensor blocks, uses and OOMs in time order, into lifetimes, the timeline and events. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

/*
 * One pass over the trace in time order, merging its inputs (each read in time order by the
 * read layer): CUDA's memory events and a framework allocator's blocks each go through a
 * live set of their own (read/live.c: the one rule for live bytes), kernel-argument and copy
 * uses mark the lifetimes they touch, OOMs take a snapshot of what was live. What happens to
 * lifetimes updates the call sites, the timeline (device live bytes from CUDA's set, the
 * allocator's blocks beside them) and, as events, the detectors. When a trace holds an
 * allocator's blocks, the detectors judge those (they carry the program's call sites) and
 * CUDA's segments only make the device timeline.
 */
struct replay {
    struct vt_trace *t;
    const struct vt_detector *const *aDet;
    void *const *aSt;
    int nDet;
    struct vt_live *pCuda, *pTensor;
    int nextBoundary;       /* next growth boundary (index into t->ph.aBoundary) */
    int bDetectCuda;        /* the detectors judge CUDA's lifetimes (no allocator blocks in the trace) */
    int64_t tsUntimed;      /* where allocations of unknown time go on the timeline: the start or the end (untimed) */
    int bTensorDevice;      /* blocks but no CUDA allocation (a torch.profiler trace): the blocks are the device's
                             * memory for the timeline and the counts */
    int bSiteCurves;        /* keep the site curves (opts.bSiteCurves) */
    int64_t lastUnscanned;  /* start of the latest launch so far whose arguments were not scanned, -1 none */
};

/* Hand event e to every detector that asked for its kind. 0 or -1. */
static int emit(struct replay *r, int type, int64_t ts, const struct vt_life *l, const struct vt_oom *o)
{
    struct vt_event e = {type, ts, l, o};
    for (int i = 0; i < r->nDet; i++)
        if (r->aDet[i]->xEvent && (r->aDet[i]->mEvents >> type & 1) && r->aDet[i]->xEvent(r->aSt[i], r->t, &e) != 0)
            return -1;
    return 0;
}

/* Whether lifetime l is one the detectors judge. */
static int judged(const struct replay *r, const struct vt_life *l)
{
    return l->bTensor || r->bDetectCuda;
}

/* The timeline entry of l's account brought up to the live sets' totals at ts. 0 or -1. */
static int timeline_account(struct replay *r, const struct vt_life *l, int64_t ts)
{
    struct vt_trace *t = r->t;
    int iDev;
    if (l->acct == VT_ACCT_NONE) return 0;
    if ((iDev = vt__dev_index(t, l->acct)) < 0) return -1;
    if (l->bTensor) {
        if (l->acct >= 0) t->tl.tensorTotalNow += vt__live_bytes(r->pTensor, l->acct) - t->tl.aDev[iDev].tensorLive;
        t->tl.aDev[iDev].tensorLive = vt__live_bytes(r->pTensor, l->acct);
        vt__timeline_tensor(t, iDev, ts);
        if (!r->bTensorDevice) return 0; /* else the blocks are all the trace knows of the device's memory */
    }
    if (l->acct >= 0) t->tl.totalLiveNow += vt__live_bytes(l->bTensor ? r->pTensor : r->pCuda, l->acct) - t->tl.aDev[iDev].live;
    t->tl.aDev[iDev].live = vt__live_bytes(l->bTensor ? r->pTensor : r->pCuda, l->acct);
    vt__timeline_update(t, iDev, ts);
    return 0;
}

/* The snapshots' view of what is live: the allocator's blocks where the trace has them, else CUDA's. */
static void snapshot_view(struct replay *r)
{
    r->t->tl.apLive = vt__live_all(r->bDetectCuda ? r->pCuda : r->pTensor, &r->t->tl.nLive);
}

/*
 * The live set whose lifetimes count in account acct, as snapshot_view sets it: pinned host memory is
 * CUDA's (cudaHostAlloc; a framework allocator's blocks are device memory), unless the blocks are all the
 * trace has; every other account is the detectors' view.
 */
static void snapshot_view_of(struct replay *r, int acct)
{
    if (acct == VT_ACCT_PINNED && !r->bTensorDevice)
        r->t->tl.apLive = vt__live_all(r->pCuda, &r->t->tl.nLive);
    else
        snapshot_view(r);
}

/*
 * Add (sign +1) or remove (-1) l from its site's figures (device and pinned host memory alike; a beginning
 * also counts it as made) and, for a judged lifetime, from its site curve at ts. A site's figures count each
 * byte once: where the allocator's blocks lie inside CUDA's segments, the segments holding them are left out
 * (their blocks count; the rest of a segment is the allocator's cache, which the breakdown shows). 0, or -1
 * when out of memory or a stack could not be read.
 */
static int site_account(struct replay *r, const struct vt_life *l, int sign, int64_t ts)
{
    struct vt_site *s = &r->t->sites.a[l->site];
    int bSeg = vt__bd_cache_segment(r->t, l);
    if (bSeg < 0) return -1;
    if (bSeg) return 0;
    if (sign > 0) s->nAlloc++, s->totalBytes += l->bytes;
    s->nLive += sign;
    s->liveBytes += sign * l->bytes;
    if (s->liveBytes > s->peakLiveBytes) s->peakLiveBytes = s->liveBytes;
    if (!r->bSiteCurves || !judged(r, l)) return 0;
    return vt__sitecurves_add(r->t, l->acct, l->site, sign * l->bytes, ts);
}

/*
 * Whether lifetime l is of the level OOM o was recorded at, where what follows o is looked for (oomfail.c: a
 * request that succeeded after it, its retry): a failed CUDA call (the tracer's oom_event, o->api known) is
 * followed by CUDA's own allocations, not the runtime's (where PyTorch's history gives the blocks, the
 * segment whose cudaMalloc failed is what its retry gets; the history's ring may not reach back to the
 * failure, and the autograd thread's blocks carry no frame of the failing call's stack); an OOM of an
 * imported history, or of a trace without CUDA allocations, by the lifetimes the detectors judge.
 */
static int oom_level(const struct replay *r, const struct vt_oom *o, const struct vt_life *l)
{
    if (vt_api_name(o->api) && !r->bTensorDevice && !r->bDetectCuda) return !l->bTensor && !l->bInternal;
    return judged(r, l);
}

/* Live set hook: a lifetime begins. */
static int on_begin(void *pArg, struct vt_life *l)
{
    struct replay *r = pArg;
    struct vt_trace *t = r->t;
    l->phase = vt__phase_at(t, l->allocTs);
    if (vt__read_imported(&t->f)) l->bInternal = 0; /* imported: no API calls to see */
    l->site = vt__site_get(&t->sites, t->f.db, l->stackId, l->bytes);
    if (l->site < 0) return -1;
    if (site_account(r, l, +1, l->allocTs >= 0 ? l->allocTs : r->tsUntimed) != 0) return -1;
    snapshot_view(r);
    if (vt__bd_life_begin(t, l) != 0) return -1;
    if (timeline_account(r, l, l->allocTs >= 0 ? l->allocTs : r->tsUntimed) != 0) return -1;
    if (t->nOom > 0 && l->acct >= 0 && l->allocTs >= t->aOom[t->nOom - 1].ts && oom_level(r, &t->aOom[t->nOom - 1], l)) {
        /* device memory allocated after the last OOM: a request succeeded (pinned host memory is the loader's
         * thread filling its queue, which a dying main thread does not stop) */
        struct vt_oom *o = &t->aOom[t->nOom - 1];
        o->allocAfter += l->bytes;
        if (o->nextSite < 0 && l->acct == o->device) o->nextSite = l->site, o->nextTs = l->allocTs, o->nextBytes = l->bytes;
    }
    return judged(r, l) ? emit(r, VT_EV_BEGIN, l->allocTs, l, NULL) : 0;
}

/* Live set hook: a lifetime is about to end (still counted): the peaks' snapshots see it. */
static int on_before_end(void *pArg, struct vt_life *l)
{
    struct replay *r = pArg;
    struct vt_trace *t = r->t;
    int iDev;
    if (vt__bd_before_end(t, l) != 0) return -1; /* either level: a device's peak is CUDA's live bytes */
    if (l->status == VT_LIFE_LIVE_AT_END || l->acct == VT_ACCT_NONE) return 0;
    if (l->acct == VT_ACCT_PINNED ? l->bTensor && !r->bTensorDevice : l->bTensor != !r->bDetectCuda) return 0;
    if ((iDev = vt__dev_index(t, l->acct)) < 0) return -1;
    snapshot_view_of(r, l->acct);
    vt__timeline_snapshot(t, iDev);
    snapshot_view(r);
    if (l->acct >= 0) vt__timeline_phase_snapshot(t);
    return 0;
}

/*
 * The latest time l may have been used as far as the trace can tell, into l->useBound as it ends.
 * Kernel arguments are resolved to CUDA allocations: an allocation's own last use where they name
 * it (a CUDA allocation; the blocks of a trace that has no CUDA allocation); for a framework
 * allocator's block inside a CUDA allocation (PyTorch's history merged), any use of that
 * allocation while the block was live may have been the block's, so the allocation's last use
 * then (copies name the block's own address and mark both); VT_USE_UNKNOWN when no traced
 * allocation holds it. A launch whose arguments were not scanned (a CUDA graph's kernels) may
 * have used anything live when it ran: no earlier than the latest one while l was live.
 */
static void use_bound(const struct replay *r, struct vt_life *l)
{
    int64_t b = l->lastUse;
    if (l->bTensor && !r->bTensorDevice) {
        const struct vt_life *c = vt__live_use(r->pCuda, l->address, 0);
        if (!c) {
            l->useBound = VT_USE_UNKNOWN;
            return;
        }
        if (c->lastUse >= l->allocTs && c->lastUse > b) b = c->lastUse;
    }
    if (r->lastUnscanned >= l->allocTs && r->lastUnscanned > b) b = r->lastUnscanned;
    l->useBound = b;
}

/* Live set hook: a lifetime ended (freed, replaced, or live at the end of the trace). */
static int on_end(void *pArg, struct vt_life *l)
{
    struct replay *r = pArg;
    struct vt_trace *t = r->t;
    if (vt__bd_life_end(t, l) != 0) return -1;
    use_bound(r, l);
    if (l->status == VT_LIFE_LIVE_AT_END) {
        if (judged(r, l) && l->acct >= 0) vt__oom_live_at_end(t, l);
        if (!l->bInternal && l->acct != VT_ACCT_PINNED && judged(r, l))
            vt__top_insert(t->tl.aEnd, &t->tl.nEnd, VT_TOPMAX, l);
    } else {
        if (site_account(r, l, -1, l->freeTs) != 0) return -1;
        snapshot_view(r);
        if (timeline_account(r, l, l->freeTs) != 0) return -1;
    }
    if (judged(r, l) && !vt__unjudged_hold(t, l)) {
        int bHeld, k = vt__carried_into(t, l, &bHeld);
        if (k >= 0) t->ph.a[k].carried += l->bytes;
    }
    if (judged(r, l) && emit(r, VT_EV_END, l->freeTs, l, NULL) != 0) return -1;
    return t->pWb && vt__writeback_life(t, l) != SQLITE_OK ? -1 : 0;
}

/* Live set hook: a free that found no lifetime (unknown address, or freed twice). */
static int on_stray(void *pArg, const struct vt_memrow *m, int status)
{
    struct replay *r = pArg;
    struct vt_trace *t = r->t;
    struct vt_life u;
    if (!t->pWb) return 0; /* counted by the live set (the figures' counts) */
    memset(&u, 0, sizeof u);
    u.address = m->address;
    u.bytes = m->bytes > 0 ? m->bytes : 0;
    u.allocTs = u.firstUse = u.lastUse = -1;
    u.freeTs = m->ts;
    u.allocEventId = -1;
    u.freeEventId = m->id;
    u.stackId = m->stackId;
    u.device = m->device;
    u.memKind = m->kind;
    u.freeApi = m->api;
    u.bTensor = m->bTensor;
    u.phase = vt__phase_at(t, m->ts);
    u.status = status;
    return vt__writeback_life(t, &u) == SQLITE_OK ? 0 : -1;
}

/* Pass the growth boundaries up to ts. */
static void boundaries_upto(struct replay *r, int64_t ts)
{
    struct vt_trace *t = r->t;
    while (r->nextBoundary < t->ph.nBoundary && t->ph.aBoundary[r->nextBoundary] <= ts) {
        r->nextBoundary++;
        t->ph.nBoundaryDone++;
    }
}

/* A memory_event (bTensor 0) or tensor_event row of c into its live set. 0 or -1. */
static int on_memory(struct replay *r, const struct vt_rows *c, int bTensor)
{
    struct vt_memrow m;
    vt__memrow_read(c, bTensor, &m);
    if (bTensor) return m.op ? vt__live_apply(r->pTensor, &m) : 0; /* free_requested: the block waits on streams */
    if (vt__live_apply(r->pCuda, &m) != 0) return -1;
    if (m.poolSize >= 0 && m.device >= 0 && (m.op == VT_MEMOP_ALLOC || m.op == VT_MEMOP_FREE)) {
        int iDev = vt__dev_index(r->t, m.device);
        if (iDev < 0) return -1;
        struct vt_device *d = &r->t->tl.aDev[iDev];
        int64_t grow = m.poolSize - d->poolReserved, need = (m.bytes + (2 << 20) - 1) / (2 << 20) * (2 << 20);
        /* the pool grew by more than this allocation needed (in 2 MiB pages): its smallest chunk is at most that */
        if (m.op == VT_MEMOP_ALLOC && grow > need && (d->poolGrowMin == 0 || grow < d->poolGrowMin)) d->poolGrowMin = grow;
        r->t->tl.aDev[iDev].poolReserved = m.poolSize;
        r->t->tl.aDev[iDev].poolUsed = m.poolUsed >= 0 ? m.poolUsed : 0;
    }
    return 0;
}

/* A use of addr at ts: kernel argument (base address) or copy/memset (any address inside). */
static void on_use(struct replay *r, int64_t addr, int64_t ts, int bBase)
{
    struct vt_life *aL[2] = {vt__live_use(r->pTensor, addr, bBase), vt__live_use(r->pCuda, addr, bBase)};
    for (int i = 0; i < 2; i++) {
        struct vt_life *l = aL[i];
        if (!l) continue;
        if (l->firstUse < 0) l->firstUse = ts;
        if (ts > l->lastUse) l->lastUse = ts;
        l->useCount++;
        if (bBase) vt__bd_use(r->t, l, ts); /* a kernel's argument */
    }
    if (aL[0] || aL[1]) r->t->lc.nUseMatched++;
}

/* An OOM: what this process held on the device then, its largest live allocations and all of them by site. */
static int on_oom(struct replay *r, const struct vt_rows *c)
{
    struct vt_trace *t = r->t;
    struct vt_oom *o, *aNew = realloc(t->aOom, sizeof *aNew * (size_t)(t->nOom + 1));
    struct vt_device *d;
    int iDev;
    if (!aNew) return -1;
    t->aOom = aNew;
    o = &aNew[t->nOom++];
    memset(o, 0, sizeof *o);
    o->ts = c->ts;
    o->api = (int)vt__rows_or(c, 1, 0);
    o->device = (int)vt__rows_or(c, 2, 0);
    o->requested = vt__rows_or(c, 3, -1);
    o->freeBytes = vt__rows_or(c, 4, -1);
    o->totalBytes = vt__rows_or(c, 5, -1);
    o->site = o->nextSite = -1;
    o->nextTs = o->nextBytes = o->stackId = -1;
    if (!vt__rows_null(c, 6)) {
        o->stackId = vt__rows_i64(c, 6);
        o->site = vt__site_get(&t->sites, t->f.db, o->stackId, o->requested > 0 ? o->requested : 0);
        if (o->site < 0) return -1;
    }
    if ((iDev = vt__dev_index(t, o->device)) < 0) return -1;
    d = &t->tl.aDev[iDev];
    o->held = d->live;
    o->tensorAllocated = r->bDetectCuda ? -1 : d->tensorLive;
    if (d->poolReserved > d->poolUsed) o->poolCached = d->poolReserved - d->poolUsed;
    if (o->totalBytes <= 0) o->totalBytes = d->totalBytes;
    o->others = o->othersNvml = o->othersNvmlTs = -1; /* othersNvml: the OOM detector reads NVML's figure */
    if (o->freeBytes >= 0 && o->totalBytes > 0) {
        int64_t held = o->held > d->poolReserved ? o->held : d->poolReserved;
        o->others = o->totalBytes - o->freeBytes - held;
        if (o->others < 0) o->others = 0;
    }
    snapshot_view(r);
    if (vt__live_snapshot(t, t->tl.apLive, t->tl.nLive, o->device, o->aTop, &o->nTop, VT_TOPMAX, o->aGroup, &o->nGroup,
                          VT_TOPMAX) != 0)
        return -1;
    if (vt__bd_oom(t, t->nOom - 1) != 0) return -1;
    return emit(r, VT_EV_OOM, o->ts, NULL, o);
}

/* Allocations whose time is unknown (a snapshot's state at its dump), where the read layer puts them
 * (vt__live_untimed: at the start of the timeline when made before its first event, bStart, else at its end),
 * CUDA's then the blocks. An SQLite code. */
static int untimed(struct replay *r, int bStart)
{
    struct vt_trace *t = r->t;
    const struct vt_tracefile *f = &t->f;
    int rc = SQLITE_OK;
    if (bStart != f->bUntimedBefore) return SQLITE_OK;
    r->tsUntimed = f->bTimes ? vt__live_untimed_ts(f) : 0;
    if (bStart) { /* as for a memory event at the start */
        snapshot_view(r);
        vt__timeline_phase_step(t, r->tsUntimed);
        vt__bd_samples_upto(t, r->tsUntimed);
    }
    for (int b = 0; b < 2 && rc == SQLITE_OK; b++) rc = vt__live_untimed(f, b ? r->pTensor : r->pCuda, b);
    return rc;
}

/* Everything still live at the end: the final peak snapshots, then each lifetime ends live_at_end. 0 or -1. */
static int finish(struct replay *r)
{
    struct vt_trace *t = r->t;
    snapshot_view(r);
    for (int i = 0; i < t->tl.nDev; i++) {
        t->tl.aDev[i].nSnapshots = 0; /* force the final snapshot */
        snapshot_view_of(r, t->tl.aDev[i].id);
        vt__timeline_snapshot(t, i);
    }
    snapshot_view(r);
    if (vt__bd_finish(t) != 0) return -1;
    if (vt__live_finish(r->pCuda) != 0 || vt__live_finish(r->pTensor) != 0) return -1;
    /* the figures (counts, level, peaks) from the two live sets, as every reader makes them; the uses beside */
    if (vt__figures_take(&t->f, r->pCuda, r->pTensor) != SQLITE_OK) return -1;
    {
        int64_t nKernel = t->lc.nKernelUse, nCopy = t->lc.nCopyUse, nMatched = t->lc.nUseMatched;
        t->lc = t->f.fig.lc;
        t->lc.nKernelUse = nKernel, t->lc.nCopyUse = nCopy, t->lc.nUseMatched = nMatched;
    }
    if (t->lc.nInternalEnd) {
        char zB[32];
        vt__fmt_bytes(t->lc.internalEndBytes, zB, sizeof zB);
        vt__read_note(&t->f, "%lld allocation%s (%s) made by the CUDA runtime or driver itself (no API call behind %s) "
                             "%s still live at exit: not counted as leaks",
                      (long long)t->lc.nInternalEnd, t->lc.nInternalEnd == 1 ? "" : "s", zB,
                      t->lc.nInternalEnd == 1 ? "it" : "them", t->lc.nInternalEnd == 1 ? "is" : "are");
    }
    if (t->lc.nAlloc == 0 && t->lc.nTensorAlloc == 0 && t->nOom == 0) {
        const char *z = t->f.zSource;
        int64_t nBad = vt__read_meta_int(&t->f, "kineto.memory_events_out_of_range");
        /* the importer's note said why; the report says it too */
        if (!strcmp(z, "kineto_json") && vt__read_meta_int(&t->f, "kineto.memory_events") == 0 && nBad > 0)
            vt__read_note(&t->f, "no allocation lifetimes: each of the %lld CUDA [memory] events of this "
                                 "torch.profiler trace held a value out of range (its 'Bytes' or 'Addr') and was "
                                 "left out at import, so no leak, peak or live set can be told; copies, kernels "
                                 "and phases are analyzed", (long long)nBad);
        else if (!strcmp(z, "kineto_json") && vt__read_meta_int(&t->f, "kineto.memory_events") == 0)
            vt__read_note(&t->f, "no allocation lifetimes: this torch.profiler trace has no [memory] events "
                                 "(recorded without profile_memory=True), so no leak, peak or live set can be "
                                 "told; copies, kernels and phases are analyzed");
        else if (!strcmp(z, "kineto_json")) /* the peak, where given, is the running sum of their Bytes */
            vt__read_note(&t->f, "no allocation lifetimes: this torch.profiler trace records no allocation with an "
                                 "address (its [memory] events carry no 'Addr': torch.profiler before 1.11, or "
                                 "profile_memory off), so no leak or live set can be told%s; copies, kernels "
                                 "and phases are analyzed",
                          t->f.fig.level == VT_LEVEL_TOTALS ? ", and the peak is only the running sum of their "
                                                              "Bytes"
                                                            : ", nor a peak");
        else if (!strcmp(z, "nsys_sqlite") && vt__read_meta_int(&t->f, "nsys.cuda_trace") == 0)
            vt__read_note(&t->f, "no allocation lifetimes: this Nsight Systems export holds no CUDA trace at all "
                                 "(no CUDA API calls, kernels, copies or GPU memory events: recorded without CUDA "
                                 "tracing), so nothing about GPU memory can be told");
        else if (!strcmp(z, "nsys_sqlite"))
            vt__read_note(&t->f, "no allocation lifetimes: this Nsight Systems export holds no GPU memory events "
                                 "(recorded without --cuda-memory-usage=true), so no leak, peak or live set can be "
                                 "told; copies, kernels and phases are analyzed");
        else if (vt__read_imported(&t->f))
            vt__read_note(&t->f, "no allocation lifetimes: the imported file records no allocation");
        else if (!vt__read_cut_at_start(&t->f)) /* else the note of the cut trace says why */
            vt__read_note(&t->f, "the trace holds no allocation: nothing to say about memory (was the process's "
                                 "CUDA work done before tracing started, or in a child process with a trace of its "
                                 "own?)");
    }
    return 0;
}

int vt__replay(struct vt_trace *t, const struct vt_opts *o, const struct vt_detector *const *aDet, void *const *aSt,
               int nDet)
{
    enum { C_MEM, C_TENSOR, C_KUSE, C_COPY, C_SET, C_OOM, C_UNSCANNED, C_N };
    /* each input in time order: by rowid where the scan found that to be time order within a window */
    static const int anCol[C_N] = {VT_MEMROW_NCOL, VT_TENSORROW_NCOL, 2, 3, 2, 7, 1};
    const struct vt_tracefile *f = &t->f;
    const int aw[C_N] = {f->aT[VT_T_MEM].w, f->aT[VT_T_TENSOR].w, f->aT[VT_T_USE].w, f->aT[VT_T_COPY].w,
                         f->aT[VT_T_SET].w, -1, f->aT[VT_T_KER].w};
    char *azSql[C_N] = {
        f->aT[VT_T_MEM].bPresent
            ? vt__ordered_sql(f, VT_T_MEM, VT_MEMROW_COLS, "1", "ts, id")
            : NULL,
        f->aT[VT_T_TENSOR].bPresent
            ? vt__ordered_sql(f, VT_T_TENSOR, VT_TENSORROW_COLS, "1", "ts, id")
            : NULL,
        vt__ordered_sql(f, VT_T_USE, "ts, address", "kind = 0", "ts"),
        vt__ordered_sql(f, VT_T_COPY, "start, src, dst", "src IS NOT NULL OR dst IS NOT NULL", "start"),
        vt__ordered_sql(f, VT_T_SET, "start, dst", "dst IS NOT NULL", "start"),
        vt__strdupf("SELECT ts, api, device, bytes, free_bytes, total_bytes, stack_id FROM oom_event"
                    " WHERE ts > 0 ORDER BY ts, id"),
        f->aT[VT_T_KER].bAny ? vt__ordered_sql(f, VT_T_KER, "start", "args_scanned = 0", "start") : NULL};
    const struct vt_live_hooks hooks = {NULL, on_begin, on_before_end, on_end, on_stray, 0};
    struct vt_live_hooks h = hooks;
    struct vt_rows ac[C_N];
    struct replay r;
    int rc = SQLITE_OK, i;

    memset(&r, 0, sizeof r);
    memset(ac, 0, sizeof ac);
    r.t = t;
    r.aDet = aDet;
    r.aSt = aSt;
    r.nDet = nDet;
    r.bDetectCuda = !f->bHaveTensors;
    r.bSiteCurves = o->bSiteCurves;
    r.lastUnscanned = -1;
    r.bTensorDevice = vt__read_blocks_only(f);
    t->crashTs = -1;
    t->lc.bTensorDevice = r.bTensorDevice; /* (the figures' counts replace t->lc when the replay ends) */
    h.pArg = &r;
    r.pCuda = vt__live_new(&h);
    r.pTensor = vt__live_new(&h);
    if (!r.pCuda || !r.pTensor) rc = SQLITE_NOMEM;
    vt__timeline_begin(t);
    if (vt__bd_begin(t, f->bHaveTensors && !r.bTensorDevice, o->bCatCurves) != 0) rc = SQLITE_NOMEM;
    for (i = 0; i < C_N && rc == SQLITE_OK; i++) {
        int bAbsent = (i == C_MEM && !f->aT[VT_T_MEM].bPresent) || (i == C_TENSOR && !f->aT[VT_T_TENSOR].bPresent) ||
                      (i == C_UNSCANNED && !f->aT[VT_T_KER].bAny);
        struct vt_kept *pKept = i == C_MEM      ? &t->f.aT[VT_T_MEM].keep
                                : i == C_TENSOR ? &t->f.aT[VT_T_TENSOR].keep
                                : i == C_KUSE   ? &t->f.aT[VT_T_USE].keep
                                                : NULL;
        if (bAbsent) continue;
        if (pKept && pKept->bOk) /* the rows the scan kept for this SELECT: not read again */
            rc = pKept->nCol == anCol[i] ? vt__rows_open_kept(&ac[i], pKept, aw[i]) : SQLITE_MISUSE;
        else
            rc = azSql[i] ? vt__rows_open(&ac[i], f->db, azSql[i], anCol[i], aw[i]) : SQLITE_NOMEM;
        if (rc == SQLITE_OK) rc = vt__rows_next(&ac[i]);
    }
    if (rc == SQLITE_OK) rc = untimed(&r, 1);
    while (rc == SQLITE_OK) {
        int best = -1;
        for (i = 0; i < C_N; i++) /* ties: memory events, then blocks, then uses, then OOMs, then unscanned launches */
            if (ac[i].bRow && (best < 0 || ac[i].ts < ac[best].ts)) best = i;
        if (best < 0) break;
        struct vt_rows *c = &ac[best];
        boundaries_upto(&r, c->ts);
        switch (best) {
        case C_MEM:
        case C_TENSOR:
            snapshot_view(&r);
            vt__timeline_phase_step(t, c->ts); /* the level just before this event */
            vt__bd_samples_upto(t, c->ts); /* device-memory samples taken before it */
            rc = on_memory(&r, c, best == C_TENSOR) == 0 ? SQLITE_OK : SQLITE_NOMEM;
            break;
        case C_KUSE:
            on_use(&r, vt__rows_i64(c, 1), c->ts, 1);
            t->lc.nKernelUse++;
            break;
        case C_COPY:
            if (!vt__rows_null(c, 1)) on_use(&r, vt__rows_i64(c, 1), c->ts, 0);
            if (!vt__rows_null(c, 2)) on_use(&r, vt__rows_i64(c, 2), c->ts, 0);
            t->lc.nCopyUse++;
            break;
        case C_SET:
            on_use(&r, vt__rows_i64(c, 1), c->ts, 0);
            t->lc.nCopyUse++;
            break;
        case C_OOM: rc = on_oom(&r, c) == 0 ? SQLITE_OK : SQLITE_NOMEM; break;
        case C_UNSCANNED: r.lastUnscanned = c->ts; break;
        }
        if (rc == SQLITE_OK) rc = vt__rows_next(c);
    }
    if (rc == SQLITE_OK) rc = untimed(&r, 0);
    if (rc == SQLITE_OK && vt__oom_failures(t) != 0) rc = SQLITE_NOMEM; /* before what is live at the end ends */
    if (rc == SQLITE_OK) {
        boundaries_upto(&r, INT64_MAX);
        snapshot_view(&r);
        vt__timeline_phase_step(t, INT64_MAX);
        vt__bd_samples_upto(t, INT64_MAX);
        if (finish(&r) != 0) rc = SQLITE_NOMEM;
        if (t->tl.bGroupNoMem) rc = SQLITE_NOMEM; /* a peak snapshot could not group what was live */
        if (rc == SQLITE_OK && vt__bd_end(t) != 0) rc = SQLITE_NOMEM;
    }
    vt__bd_free(t);
    for (i = 0; i < C_N; i++) {
        vt__rows_close(&ac[i]);
        free(azSql[i]);
    }
    vt__kept_free(&t->f); /* read: its memory goes before the fit's replays */
    t->tl.apLive = NULL;
    t->tl.nLive = 0;
    vt__live_free(r.pCuda);
    vt__live_free(r.pTensor);
    if (rc == SQLITE_OK) return VT_EXIT_OK;
    if (rc == SQLITE_NOMEM && t->sites.rcErr != SQLITE_OK) { /* a stack could not be read: say why */
        vt__errorf("%s: cannot replay memory events: reading a call stack: %s", f->zPath, t->sites.zErr);
        return vt__exit_for_sqlite(t->sites.rcErr);
    }
    vt__errorf("%s: cannot replay memory events: %s", f->zPath,
               rc == SQLITE_NOMEM ? "out of memory or write-back failed" : sqlite3_errstr(rc));
    return vt__exit_for_sqlite(rc);
}
