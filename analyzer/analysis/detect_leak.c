/* Detector: leaks: allocations never freed (by site) and memory growing across iterations. */
#include "analysis.h"

#include <stdlib.h>
#include <stdint.h>
#include <string.h>

/* Allocations of one site made in this many growth intervals (iterations, or slices of the run) or
 * more accumulated; fewer is state: allocated once, or replaced at each step. */
#define ACCUMULATED_IV 3

/* parts of the growth boundaries a site's rises are counted in (staircase()) */
#define UP_PARTS 24

/* What the detector keeps per call site. */
struct lsite {
    int64_t liveBytes;      /* live now (pinned host memory aside: the transfer detector judges it) */
    /* growth across iteration boundaries (site_catch_up) */
    int64_t firstBoundaryBytes, prevBoundaryBytes, firstBoundaryTs, lastBoundaryTs, maxDrop;
    int nBoundary, nUp, nDown, seenBoundary;
    int lastChangeAt, bLastUp; /* the boundary its live bytes last changed at, and whether they rose there */
    /* its rises by the part of the run's boundaries they came in: how many, their bytes, the largest */
    int aUpPart[UP_PARTS];
    int64_t aUpBytes[UP_PARTS], aUpMax[UP_PARTS];
    /* the same at its highest boundary so far (the first of equals): index, bytes, rises and largest drop up to it */
    int64_t topBytes, topDrop;
    int topAt, topUp;
    /* live at the end */
    int64_t endCount, endBytes, endFirstTs, endLastTs, endUsedLate;
    int64_t endLastUse;     /* the latest use of any of them, -1 none */
    int64_t endMinUse;      /* the earliest last use among them (-1: one never used), INT64_MAX none */
    int nIv, aIv[ACCUMULATED_IV]; /* distinct growth intervals they were allocated in (up to ACCUMULATED_IV) */
    /* what raised the device baseline: allocated after its first point, live at its last point */
    int64_t lateBytes;
    int nLateIv, aLateIv[ACCUMULATED_IV];
};

struct leak {
    struct lsite *a;        /* by site index */
    int n;
    int64_t late;           /* a use after this time counts as "in use until the end" */
    int64_t baseStart, baseLast; /* start of the device baseline's first and last points (baseline_select) */
};


static const char *zFixLeak =
    "Something keeps these tensors alive. Accumulate plain numbers (total += loss.item()) instead "
    "of tensors; store tensor.detach() (or .cpu()) when you must keep one; do not append outputs "
    "or losses that carry their autograd graph to lists or attributes; drop references with del "
    "and run gc.collect() if reference cycles hold them. In CUDA C, pair every cudaMalloc with "
    "cudaFree.";

/*
 * The severity of growth by `rise` bytes: high when it is 64 MiB or more, or beyond the high mark of
 * bytes (1 GiB, 10 % of the peak); else medium: a rise of 49 MiB in a 3 GiB job's profiler window
 * (1.6 % of its peak) is medium.
 */
static int growth_sev(const struct vt_trace *t, int64_t rise)
{
    return rise >= ((int64_t)64 << 20) || vt__sev_bytes(t, rise) == VT_SEV_HIGH ? VT_SEV_HIGH : VT_SEV_MEDIUM;
}

/*
 * One never-freed finding; bAccum: made in ACCUMULATED_IV growth intervals or more. Where the trace was not
 * closed cleanly the process may have freed at its end what was live, so the severity is capped at low,
 * unless the memory accumulated: held while more was made over the run, it grew whether or not an exit
 * would have freed it (a server killed after keeping 7 GiB of requests' caches had a low finding).
 * Returns 0 or -1 (out of memory).
 */
static int emit_end(struct vt_result *r, int iTrace, int64_t bytes, int64_t count, int64_t nLate, int64_t nAlloc,
                    int64_t first, int64_t last, int64_t stackId, const char *zSite, int bAccum)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    int sev = vt__sev_bytes(t, bytes);
    struct vt_finding *f;
    char zB[32], zA[32], zZ[32], zUse[200] = "";
    if (!t->f.bCleanClose && !bAccum && sev > VT_SEV_LOW) sev = VT_SEV_LOW;
    if (t->f.bHaveKernelUses)
        snprintf(zUse, sizeof zUse, "; %lld of them %s not used in the last iteration or the last 10%% of the run",
                 (long long)(count - nLate), count - nLate == 1 ? "was" : "were");
    else
        snprintf(zUse, sizeof zUse, "; they were made in %d or more different %s, so they accumulate (whether they "
                 "were still in use is not known: the trace has no kernel-argument uses)", ACCUMULATED_IV,
                 t->ph.bSliceBoundaries ? "slices of the run" : "iterations");
    f = vt__finding_add(r, iTrace, "leak", sev);
    if (!f) return -1;
    vt__fmt_bytes(bytes, zB, sizeof zB);
    vt__fmt_at(t, first, zA, sizeof zA);
    vt__fmt_at(t, last, zZ, sizeof zZ);
    f->bytes = bytes;
    f->count = count;
    f->firstTs = first;
    f->lastTs = last;
    f->stackId = stackId;
    f->zSite = vt__strdupf("%s%s", zSite, stackId < 0 ? vt__no_site_help(t) : "");
    f->zTitle = vt__strdupf("%s never freed: %lld allocation%s still live %s", zB, (long long)count,
                            count == 1 ? "" : "s", vt__end_said(t));
    f->zEvidence = vt__strdupf(
        "%lld of %lld allocations from %s (%s) were allocated between %s and %s and never freed%s%s.",
        (long long)count, (long long)nAlloc, stackId >= 0 ? "this site" : "sites not recorded", zB, zA, zZ, zUse,
        t->f.bCleanClose ? "" : "; the trace was not closed cleanly, so some may have been freed later");
    f->zFix = vt__strdupf("%s", zFixLeak);
    return f->zTitle && f->zEvidence && f->zFix && f->zSite ? 0 : -1;
}

/*
 * The rises and falls of the live bytes of t's main device (the account with the highest peak),
 * and whether accumulation can be judged: always over iterations; over slices of the run (no
 * iterations known) only when the trace repeats, its main device's live bytes having risen and
 * fallen ACCUMULATED_IV times or more (a step's sawtooth). One step or one forward pass spread
 * over slices makes its state (gradients, optimizer state) in several of them without repeating.
 */
static int cycles(const struct vt_trace *t)
{
    const struct vt_device *m = NULL;
    for (int d = 0; d < t->tl.nDev; d++)
        if (t->tl.aDev[d].id >= 0 && (!m || t->tl.aDev[d].peak > m->peak)) m = &t->tl.aDev[d];
    return !m ? 0 : t->f.bHaveTensors ? m->nTensorCycle : m->nCycle; /* the level the detectors judge */
}

static int repeats(const struct vt_trace *t)
{
    return !t->ph.bSliceBoundaries || cycles(t) >= ACCUMULATED_IV;
}

/*
 * Whether t ends mid-step: at a dump or a window's end (a PyTorch snapshot, a torch.profiler trace), or at
 * the out-of-memory error the job died at (t->crashTs), not at the process's orderly exit.
 */
static int ends_at_dump(const struct vt_trace *t)
{
    return !strcmp(t->f.zSource, "pytorch_snapshot") || !strcmp(t->f.zSource, "kineto_json") || t->crashTs >= 0;
}

/*
 * Whether site e's memory live at the end can be state made once rather than accumulation,
 * in a trace that does not repeat: always when the trace ends at a dump (mid-step, activations
 * and gradients are live there), else when it was made in a burst (within half of the run:
 * one step's gradients or optimizer state), not spread over the run as a leak in a loop is.
 */
static int made_once(const struct vt_trace *t, const struct lsite *e)
{
    return !repeats(t) && (ends_at_dump(t) || (e->endLastTs - e->endFirstTs) * 2 < t->f.t1 - t->f.t0);
}

/*
 * Whether site e's memory live at the end is a cache kept by design: its growth stopped early (its
 * last allocation still live came with at least 40 % of the run, and as long as it grew, left to
 * run), and it was still used in the second half of that rest (reused), or no kernel was seen using
 * any of it (its uses are not visible: a CUDA graph's pool, whose kernels' arguments a graph launch
 * does not show), or uses are not known at all: a cache that reached its size (a key/value cache,
 * a pool, an arena), not memory used when made and then left. The run counts from its first kernel:
 * what comes before it is start-up (weights loaded, nothing computed), which says nothing of how
 * early a cache filled (a server loading its weights for two thirds of the run had its capped
 * key/value cache called a leak). Where kernel uses show every one of its blocks used again a quarter
 * of the rest or more after the last was made, that reuse is the evidence, and a quarter of the run
 * left suffices: a leak's blocks are not touched after later ones are made (a server whose cache
 * filled at 66 % of its serving, every chunk in use after it, had a HIGH "11.8 GiB never freed").
 */
static int capped_cache(const struct vt_trace *t, const struct lsite *e)
{
    int64_t from = t->xf.firstKernelTs > t->f.t0 ? t->xf.firstKernelTs : t->f.t0;
    int64_t rest = t->f.t1 - e->endLastTs, run = t->f.t1 - from;
    if (e->endFirstTs < 0 || run <= 0) return 0;
    /* reuse seen on every block: each used again at least a quarter of the rest after the last was made */
    if (t->f.bHaveKernelUses && e->endMinUse >= e->endLastTs + rest / 4 && rest * 4 >= run) return 1;
    if (rest * 10 < run * 4 || rest < e->endLastTs - (e->endFirstTs > from ? e->endFirstTs : from)) return 0;
    return !t->f.bHaveKernelUses || e->endLastUse < 0 || e->endLastUse >= e->endLastTs + rest / 2;
}

/*
 * Whether site e grew across the growth boundaries (the per-site test of growth()), its rise in *pRise.
 * What the program releases as the run ends (a list of kept tensors going out of scope when train()
 * returns, main() freeing before exit) is no sign that it did not grow: when the site's highest
 * boundary came in the last quarter of them and only what follows it fails the test, it is judged
 * up to that boundary.
 */
static int site_grows(const struct lsite *e, int64_t minBytes, int64_t *pRise)
{
    int nStep = e->nBoundary - 1;
    *pRise = e->prevBoundaryBytes - e->firstBoundaryBytes;
    if (!(nStep < 4 || *pRise < minBytes || *pRise <= 0 || e->nUp * 10 < nStep * 6 || e->maxDrop * 4 > *pRise)) return 1;
    if (e->topAt >= nStep || e->topAt * 4 < nStep * 3) return 0;
    nStep = e->topAt;
    *pRise = e->topBytes - e->firstBoundaryBytes;
    return !(nStep < 4 || *pRise < minBytes || *pRise <= 0 || e->topUp * 10 < nStep * 6 || e->topDrop * 4 > *pRise);
}

/*
 * Whether site e's live bytes climb as a staircase after the first quarter of the growth boundaries, at
 * segment level (beside site_grows()'s test): a leak of a little each step makes the caching allocator
 * reserve a segment only every few steps, once the cache's free blocks are used up, so its site rises in
 * fewer than 60 % of the steps (a slow leak of 1 MiB a step reserving a 2 MiB segment every other step;
 * kept losses filling the cache for half the run, then the backward pass reserving a 24 MiB segment every
 * fourth step). The first quarter is warm-up (the second step's larger segments, optimizer state). A
 * staircase: 4 rises or more over at least a quarter of the boundaries, a rise in each third of the span
 * from the first of them to the last boundary, the last third with at least half as many as the first (a
 * cache reserving for ever longer batches rises ever more rarely: each new longest batch comes later than
 * the one before), none above half their sum, no drop above a quarter of it, and the sum at least 0.75 % of
 * the device peak (1 % over the run, for the three quarters judged: fragmentation adds a segment now and
 * then). *pRise receives the sum. At tensor level the same climb shows where the growth boundaries are
 * finer than the step that keeps memory (micro-batches inferred from kernels, each optimizer step keeping
 * its losses: a rise at one boundary in four); there what the site climbs it must keep, its rise from the
 * first boundary to the last at least three quarters of the sum (a buffer an evaluation fills and frees
 * climbs and falls back).
 */
static int staircase(const struct vt_trace *t, const struct lsite *e, int64_t minBytes, int64_t *pRise)
{
    int s = UP_PARTS / 4, m, nUp = 0, aThird[3] = {0, 0, 0};
    int64_t maxUp = 0;
    *pRise = 0;
    while (s < UP_PARTS && e->aUpPart[s] == 0) s++;
    m = UP_PARTS - s;
    for (int b = s; b < UP_PARTS; b++) {
        aThird[(b - s) * 3 / m] += e->aUpPart[b];
        nUp += e->aUpPart[b];
        *pRise += e->aUpBytes[b];
        if (e->aUpMax[b] > maxUp) maxUp = e->aUpMax[b];
    }
    if (nUp < 4 || m * 4 < UP_PARTS || *pRise < minBytes || *pRise * 400 < vt__main_peak(t) * 3 || maxUp * 2 > *pRise ||
        e->maxDrop * 4 > *pRise)
        return 0;
    if (!t->f.bSegments && (e->prevBoundaryBytes - e->firstBoundaryBytes) * 4 < *pRise * 3) return 0;
    return aThird[0] && aThird[1] && aThird[2] && aThird[2] * 2 >= aThird[0];
}

/*
 * Whether site e stopped growing early: its live bytes last changed by rising, and stayed where they rose to
 * over the last 40 % of the growth boundaries or more. A cache that filled to its size (a key/value cache,
 * a pool) does this; a leak rises to the end (a server whose cache filled at 54 % of its serving time had a
 * HIGH "grows steadily").
 */
static int stopped_early(const struct lsite *e)
{
    int nStep = e->nBoundary - 1;
    return e->bLastUp && nStep > 0 && (nStep - e->lastChangeAt) * 10 >= nStep * 4;
}

/* Memory live at exit that did not accumulate (what the state finding sums up). */
struct state {
    int64_t bytes, count, first, last;
    int nSite, aTop[3], nTop; /* sites, the largest three by bytes */
    int iPy;                  /* the largest site naming a Python line (-1 none): where to look first */
    int64_t cacheBytes;       /* of it, caches that stopped growing early and were reused (capped_cache) */
    int iCache;               /* the largest of those sites, -1 none */
};

/* Add site i of t (its allocations live at exit; bCache: a capped cache) to the state S. */
static void state_add(struct state *S, const struct leak *L, const struct vt_trace *t, int i, int bCache)
{
    const struct lsite *e = &L->a[i];
    int j;
    if (bCache) {
        S->cacheBytes += e->endBytes;
        if (S->iCache < 0 || L->a[S->iCache].endBytes < e->endBytes) S->iCache = i;
    }
    S->bytes += e->endBytes;
    S->count += e->endCount;
    if (e->endFirstTs >= 0 && (S->first < 0 || e->endFirstTs < S->first)) S->first = e->endFirstTs;
    if (e->endLastTs > S->last) S->last = e->endLastTs;
    S->nSite++;
    if (strstr(t->sites.a[i].zSite, ".py:") && (S->iPy < 0 || L->a[S->iPy].endBytes < e->endBytes)) S->iPy = i;
    if (S->nTop == 3 && L->a[S->aTop[2]].endBytes >= e->endBytes) return;
    j = S->nTop < 3 ? S->nTop++ : 2;
    while (j > 0 && L->a[S->aTop[j - 1]].endBytes < e->endBytes) {
        S->aTop[j] = S->aTop[j - 1];
        j--;
    }
    S->aTop[j] = i;
}

/*
 * The state finding (info): memory live at exit whose uses are unknown and that did not accumulate
 * (each site's allocations made in fewer than ACCUMULATED_IV intervals: weights, optimizer state made
 * at the first step, the last step's gradients and outputs). One finding for all of it, its largest
 * sites named. Returns 0 or -1 (out of memory).
 */
static int emit_state(struct vt_result *r, int iTrace, const struct leak *L, const struct state *S)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    struct vt_finding *f;
    char zB[32], zList[600] = "", zE[32], zCache[600] = "";
    size_t n = 0;
    int iWhere;
    if (S->iCache >= 0) {
        const struct lsite *e = &L->a[S->iCache];
        char zC[32], zAt[32];
        vt__fmt_bytes(S->cacheBytes, zC, sizeof zC);
        vt__fmt_at(t, e->endLastTs, zAt, sizeof zAt);
        snprintf(zCache, sizeof zCache,
                 " Of it, %s is a cache kept by design: it stopped growing early (the largest, from %s, at %s, "
                 "%.0f%% into the run)%s, as a key/value cache, a pool or a preallocated arena does once it "
                 "reaches its size.",
                 zC, t->sites.a[S->iCache].zSite, zAt,
                 100.0 * (double)(e->endLastTs - t->f.t0) / (double)(t->f.t1 > t->f.t0 ? t->f.t1 - t->f.t0 : 1),
                 !t->f.bHaveKernelUses ? ""
                 : e->endLastUse >= 0  ? " and its memory was still used to the end"
                                       : " and no kernel was seen using it (its uses are not visible, as a CUDA "
                                         "graph's kernels' arguments are not)");
    }
    for (int k = 0; k < S->nTop; k++) {
        const struct lsite *e = &L->a[S->aTop[k]];
        vt__fmt_bytes(e->endBytes, zE, sizeof zE);
        n += (size_t)snprintf(zList + n, n < sizeof zList ? sizeof zList - n : 0, "%s%s (%lld allocation%s) from %s",
                              k ? "; " : "", zE, (long long)e->endCount, e->endCount == 1 ? "" : "s",
                              t->sites.a[S->aTop[k]].zSite);
        if (n >= sizeof zList) break;
    }
    f = vt__finding_add(r, iTrace, "leak", VT_SEV_INFO);
    if (!f) return -1;
    vt__fmt_bytes(S->bytes, zB, sizeof zB);
    f->bytes = S->bytes;
    f->count = S->count;
    f->firstTs = S->first;
    f->lastTs = S->first < 0 ? -1 : S->last;
    iWhere = S->iPy >= 0 ? S->iPy : S->aTop[0]; /* a program line rather than the allocator's own frame */
    f->stackId = t->sites.a[iWhere].stackId;
    f->zSite = vt__strdupf("%s", t->sites.a[iWhere].zSite);
    if (S->first < 0) /* no allocation time known (a snapshot of the state at its dump) */
        f->zTitle = vt__strdupf("%s live at the end, allocation times unknown: what held the memory, by site (no leak "
                                "or growth can be judged)", zB);
    else if (S->cacheBytes * 2 >= S->bytes)
        f->zTitle = vt__strdupf("%s live %s that did not accumulate: state (caches kept by design, weights), "
                                "not a leak", zB, vt__end_said(t));
    else
        f->zTitle = vt__strdupf("%s live %s that did not accumulate: state (weights, optimizer state, "
                                "gradients), not a leak", zB, vt__end_said(t));
    if (S->first < 0)
        f->zEvidence = vt__strdupf("%lld allocations from %d call site%s are live at the end, with no known allocation "
                                   "time, so whether any of them accumulated cannot be told. Largest: %s. Whether "
                                   "they were still in use is not known either: the trace has no kernel-argument uses.",
                                   (long long)S->count, S->nSite, S->nSite == 1 ? "" : "s", zList);
    else if (!repeats(t) && ends_at_dump(t))
        f->zEvidence = vt__strdupf(
            "%lld allocations from %d call site%s are live %s. The trace shows no repeated steps (its memory "
            "rose and fell %d time%s, no iteration is marked), so growth from step to step cannot be told from "
            "state made once, as weights, optimizer state created at the first step and the last step's "
            "gradients and outputs are. Largest: %s. Whether they were still in use at the end is not known: the "
            "trace has no kernel-argument uses. A trace of several steps (or NVTX/ProfilerStep ranges) shows "
            "growth.%s",
            (long long)S->count, S->nSite, S->nSite == 1 ? "" : "s", vt__end_said(t), cycles(t),
            cycles(t) == 1 ? "" : "s", zList,
            zCache);
    else
        f->zEvidence = vt__strdupf(
            "%lld allocations from %d call site%s are live %s, each site's made in fewer than %d different %s "
            "(allocated once, or replaced at each step), as weights, optimizer state created at the first step and "
            "the last step's gradients and outputs are. Largest: %s.%s%s",
            (long long)S->count, S->nSite, S->nSite == 1 ? "" : "s", vt__end_said(t), ACCUMULATED_IV,
            t->ph.bSliceBoundaries ? "slices of the run" : "iterations", zList,
            t->f.bHaveKernelUses ? "" : " Whether they were still in use at the end is not known: the trace has no "
                                        "kernel-argument uses.",
            zCache);
    f->zFix = vt__strdupf("%s", vt__fix_state(t));
    return f->zTitle && f->zEvidence && f->zFix && f->zSite ? 0 : -1;
}

/*
 * Never freed at the end, grouped by site; allocations without a recorded site
 * form one group (their sites are unknown, their sizes alone would split them).
 * Where uses are unknown (no kernel-argument uses), a site's memory is a leak only when
 * it accumulated (made over ACCUMULATED_IV intervals or more); the rest is state.
 */
static int leak_at_end(const struct leak *L, struct vt_result *r, int iTrace)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_opts *o = r->pOpts;
    int64_t segBytes = 0, segCount = 0, segFirst = -1, segLast = -1;
    int64_t nsBytes = 0, nsCount = 0, nsAlloc = 0, nsFirst = -1, nsLast = -1, nsLate = 0;
    int64_t ncclBytes = 0, ncclCount = 0;
    int nsSites = 0, nsOne = -1;
    struct state S;
    char zB[32];
    memset(&S, 0, sizeof S);
    S.first = S.last = -1;
    S.iPy = S.iCache = -1;
    for (int i = 0; i < t->sites.n && i < L->n; i++) {
        const struct vt_site *s = &t->sites.a[i];
        const struct lsite *e = &L->a[i];
        if (e->endCount == 0) continue;
        if (t->f.bSegments) {
            segBytes += e->endBytes;
            segCount += e->endCount;
            if (e->endFirstTs >= 0 && (segFirst < 0 || e->endFirstTs < segFirst)) segFirst = e->endFirstTs;
            if (e->endLastTs > segLast) segLast = e->endLastTs;
            continue;
        }
        if (t->f.bHaveKernelUses && e->endUsedLate == e->endCount) continue; /* in use until the end */
        if (s->bNccl) { /* NCCL keeps its buffers for the communicator's life; its kernels reach them
                         * through device-side structures, so they never look used */
            ncclBytes += e->endBytes;
            ncclCount += e->endCount;
            continue;
        }
        if (!t->f.bHaveKernelUses && (e->nIv < ACCUMULATED_IV || made_once(t, e))) { /* uses unknown, not accumulating: state */
            state_add(&S, L, t, i, 0);
            continue;
        }
        if (t->f.bHaveKernelUses && e->nIv == 1 && e->endCount * 2 <= s->nAlloc) {
            /* a site that frees what it makes step after step, whose memory live at exit was all made in one
             * interval: the last step's (its gradients, outputs) held to exit, state, not accumulated */
            state_add(&S, L, t, i, 0);
            continue;
        }
        if (capped_cache(t, e)) { /* grew to its size early: kept by design */
            state_add(&S, L, t, i, 1);
            continue;
        }
        if (s->stackId < 0) {
            nsBytes += e->endBytes;
            nsCount += e->endCount;
            nsAlloc += s->nAlloc;
            nsLate += e->endUsedLate;
            if (e->endFirstTs >= 0 && (nsFirst < 0 || e->endFirstTs < nsFirst)) nsFirst = e->endFirstTs;
            if (e->endLastTs > nsLast) nsLast = e->endLastTs;
            nsSites++;
            nsOne = i;
            continue;
        }
        if (e->endBytes < o->minBytes) continue;
        if (emit_end(r, iTrace, e->endBytes, e->endCount, e->endUsedLate, s->nAlloc, e->endFirstTs, e->endLastTs,
                     s->stackId, s->zSite, e->nIv >= ACCUMULATED_IV) != 0)
            return -1;
    }
    if (S.nSite > 0 && S.bytes >= o->minBytes && emit_state(r, iTrace, L, &S) != 0) return -1;
    if (ncclCount > 0) {
        vt__fmt_bytes(ncclBytes, zB, sizeof zB);
        vt__read_note(&t->f, "%lld allocation%s (%s) made inside NCCL %s live %s: communication buffers "
                          "kept for the communicator's life, not counted as leaks",
                       (long long)ncclCount, ncclCount == 1 ? "" : "s", zB, ncclCount == 1 ? "is" : "are",
                       vt__end_said(t));
    }
    if (nsCount > 0 && nsBytes >= o->minBytes) {
        char zSite[96];
        if (nsSites == 1) snprintf(zSite, sizeof zSite, "%s", t->sites.a[nsOne].zSite);
        else snprintf(zSite, sizeof zSite, "site not recorded (%d allocation sizes)", nsSites);
        if (emit_end(r, iTrace, nsBytes, nsCount, nsLate, nsAlloc, nsFirst, nsLast, -1, zSite, 0) != 0) return -1;
    }
    if (segCount > 0 && segBytes >= o->minBytes) {
        struct vt_finding *f = vt__finding_add(r, iTrace, "leak", VT_SEV_INFO);
        if (!f) return -1;
        vt__fmt_bytes(segBytes, zB, sizeof zB);
        f->bytes = segBytes;
        f->count = segCount;
        f->firstTs = segFirst;
        f->lastTs = segLast;
        f->zSite = vt__strdupf("caching allocator (segment level)");
        f->zTitle = vt__strdupf("%s of cached allocator segments still reserved %s (a cache, not a leak)", zB,
                                vt__end_said(t));
        f->zEvidence = vt__strdupf(
            "%lld segments (%s) were never returned to the driver. PyTorch's caching allocator keeps "
            "segments for reuse until the process ends, so this alone is not a leak; tensor-level "
            "leaks inside them are not visible at segment level.",
            (long long)segCount, zB);
        f->zFix = vt__strdupf("Nothing to fix if memory is flat across iterations. To see which tensors "
                              "hold the memory, analyze with " VT_HISTORY_HINT ".");
        if (!f->zTitle || !f->zEvidence || !f->zFix || !f->zSite) return -1;
    }
    return 0;
}

/*
 * " At this rate ..." sentence: per-step growth and how many more steps fill the
 * largest device (when its size is known), into z; returns z ("" when unknown).
 */
static const char *projection(const struct vt_trace *t, int64_t rise, int nStep, char *z, size_t n)
{
    int64_t total = 0, peak = 0, perStep;
    char zS[32], zF[32];
    z[0] = 0;
    for (int d = 0; d < t->tl.nDev; d++)
        if (t->tl.aDev[d].id >= 0 && t->tl.aDev[d].peak >= peak) peak = t->tl.aDev[d].peak, total = t->tl.aDev[d].totalBytes;
    if (nStep <= 0 || rise <= 0) return z;
    perStep = rise / nStep;
    vt__fmt_bytes(perStep, zS, sizeof zS);
    if (total > peak && perStep > 0) {
        vt__fmt_bytes(total - peak, zF, sizeof zF);
        snprintf(z, n, " That is %s per step; the %s still free on the device last about %lld more steps.",
                 zS, zF, (long long)((total - peak) / perStep));
    } else {
        snprintf(z, n, " That is %s per step.", zS);
    }
    return z;
}

/*
 * The device baseline's points: the lowest live bytes of each training iteration after the first
 * (when there are 5 or more), else of each slice after the first quarter of the longest training
 * phase, or of the run when there are no phases. Fills aB (NULL: only the times) with *pn values;
 * *pLast (may be NULL) receives the start of the last point. Returns the start of the first point,
 * -1 when there is none. Only phases and iterations are read for the times: callable before the replay.
 */
static int64_t baseline_select(const struct vt_trace *t, int64_t *aB, int *pn, int64_t *pLast)
{
    int n = 0, iMain = -1, iLong = -1;
    int64_t first = -1, last = -1;
    for (int i = 1; i < t->ph.nIter; i++)
        if (t->ph.aIter[i].phase < 0 || t->ph.a[t->ph.aIter[i].phase].kind == VT_PHASE_TRAIN) {
            if (first < 0) first = t->ph.aIter[i].start;
            last = t->ph.aIter[i].start;
            if (aB) aB[n] = t->ph.aIter[i].minLive;
            n++;
        }
    if (n < 5) {
        int64_t a, b;
        n = 0;
        first = last = -1;
        for (int k = 0; k < t->ph.n; k++)
            if (t->ph.a[k].kind == VT_PHASE_TRAIN &&
                (iLong < 0 || t->ph.a[k].end - t->ph.a[k].start > t->ph.a[iLong].end - t->ph.a[iLong].start))
                iLong = k;
        for (int d = 0; d < t->tl.nDev; d++)
            if (t->tl.aDev[d].id >= 0 && (iMain < 0 || t->tl.aDev[d].peak > t->tl.aDev[iMain].peak)) iMain = d;
        if (iLong >= 0 || t->ph.n == 0) {
            a = iLong >= 0 ? t->ph.a[iLong].start : t->f.t0;
            b = iLong >= 0 ? t->ph.a[iLong].end : t->f.t1 + 1;
            first = a + (int64_t)((double)(b - a) * (VT_SLICES / 4) / VT_SLICES);
            last = a + (int64_t)((double)(b - a) * (VT_SLICES - 1) / VT_SLICES);
            for (int k = VT_SLICES / 4; aB && k < VT_SLICES; k++) {
                if (iLong >= 0) aB[n++] = t->ph.a[iLong].slice[k];
                else if (iMain >= 0) /* what the detectors judge: the allocator's blocks where the trace has them */
                    aB[n++] = t->f.bHaveTensors ? t->tl.aDev[iMain].tensorSlice[k] : t->tl.aDev[iMain].slice[k];
            }
        }
    }
    *pn = n;
    if (pLast) *pLast = last;
    return first;
}

/* Whether a site names a line of the program (not the backward pass's reservation): the one to show first. */
static int program_line(const struct vt_site *s)
{
    return strstr(s->zSite, ".py:") && !strstr(s->zSite, "(backward pass");
}

/*
 * One growth finding for site i (rise riseS), with the sites aOther[0..nOther) folded into it: at
 * segment level the same growth shows at each site that reserved segments while it lasted (the line
 * that keeps tensors, the backward pass that then needs new segments), one root cause; their rises
 * add up. 0 or -1 (out of memory).
 */
static int growth_finding(const struct leak *L, struct vt_result *r, int iTrace, int i, int64_t riseS,
                          const int *aOther, const int64_t *aRise, int nOther)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_site *s = &t->sites.a[i];
    const struct lsite *e = &L->a[i];
    int nStep = e->nBoundary - 1;
    int64_t total = riseS;
    char zB[32], zS[32], zP[32], zProj[200], zAlso[700] = "";
    size_t n = 0;
    struct vt_finding *f;
    for (int k = 0; k < nOther; k++) total += aRise[k];
    if (nOther > 0) {
        char zO[32];
        n = (size_t)snprintf(zAlso, sizeof zAlso, " The same growth shows at %d other site%s over the same %s, "
                             "reserving for what this one keeps (one cause: %s in all): ", nOther, nOther == 1 ? "" : "s",
                             t->ph.bSliceBoundaries ? "slices" : "iterations", vt__fmt_bytes(total, zO, sizeof zO));
        for (int k = 0; k < nOther && n + 160 < sizeof zAlso; k++) {
            vt__fmt_bytes(aRise[k], zO, sizeof zO);
            n += (size_t)snprintf(zAlso + n, sizeof zAlso - n, "%s+%s at %s", k ? "; " : "", zO,
                                  t->sites.a[aOther[k]].zSite);
        }
        if (n + 2 < sizeof zAlso) snprintf(zAlso + n, sizeof zAlso - n, ".");
    }
    f = vt__finding_add(r, iTrace, "leak", growth_sev(t, total));
    if (!f) return -1;
    vt__fmt_bytes(total, zB, sizeof zB);
    vt__fmt_bytes(riseS, zS, sizeof zS);
    vt__fmt_bytes(s->peakLiveBytes, zP, sizeof zP);
    f->bytes = total;
    f->count = e->nBoundary;
    f->firstTs = e->firstBoundaryTs;
    f->lastTs = e->lastBoundaryTs;
    f->stackId = s->stackId;
    if (!t->ph.bSliceBoundaries) snprintf(f->zPhase, sizeof f->zPhase, "training");
    f->zSite = vt__strdupf("%s%s", s->zSite, s->stackId < 0 ? vt__no_site_help(t) : "");
    if (t->ph.bSliceBoundaries)
        f->zTitle = vt__strdupf("Memory grows steadily: +%s over the run%s", zB,
                                t->f.bSegments ? " (caching-allocator segments)" : "");
    else
        f->zTitle = vt__strdupf("Memory grows every iteration: +%s over %d iterations%s", zB, nStep,
                                t->f.bSegments ? " (caching-allocator segments)" : "");
    f->zEvidence = vt__strdupf(
        "Live bytes from this site at the end of each %s rose in %d of %d steps (fell in %d), "
        "by %s in all; its live bytes peaked at %s.%s%s%s",
        t->ph.bSliceBoundaries ? "sixteenth of the run (after its first quarter)" : "training iteration",
        e->nUp, nStep, e->nDown, zS, zP, projection(t, total, nStep, zProj, sizeof zProj),
        t->f.bSegments ? " At segment level this is the allocator reserving more and more: tensors "
                       "are accumulating." : "", zAlso);
    f->zFix = vt__strdupf("%s", zFixLeak);
    return f->zTitle && f->zEvidence && f->zFix && f->zSite ? 0 : -1;
}

/*
 * Growing sites of trace iTrace, by site_grows() (bStair 0) or, at segment level, by staircase() (bStair 1),
 * reported; *pnFound receives how many grew. Returns 0, or -1 when out of memory.
 */
static int site_growth(const struct leak *L, struct vt_result *r, int iTrace, int bStair, int *pnFound)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_opts *o = r->pOpts;
    int64_t *aRise;
    int nSiteFound = 0, rc = 0, *aSite, nSite = t->sites.n < L->n ? t->sites.n : L->n;
    *pnFound = 0;
    aSite = malloc(sizeof *aSite * (size_t)(nSite > 0 ? nSite : 1));
    aRise = malloc(sizeof *aRise * (size_t)(nSite > 0 ? nSite : 1));
    if (!aSite || !aRise) {
        free(aSite);
        free(aRise);
        return -1;
    }
    /* a cache that grew to its size and stopped (kept by design, capped_cache, or flat for the last 40 % of the
     * boundaries, stopped_early): state, not growth */
    for (int i = 0; i < nSite; i++)
        if ((bStair ? staircase(t, &L->a[i], o->minBytes, &aRise[nSiteFound])
                    : site_grows(&L->a[i], o->minBytes, &aRise[nSiteFound])) &&
            !capped_cache(t, &L->a[i]) && !stopped_early(&L->a[i]))
            aSite[nSiteFound++] = i;
    if (t->f.bSegments && nSiteFound > 1) {
        /* one root cause: the site to show (a program line, else the largest rise) with every other whose
         * growth spans mostly the same boundaries folded into it; sites growing over other spans stay apart */
        int iKeep = 0, nOther = 0;
        for (int k = 1; k < nSiteFound; k++) {
            int bA = program_line(&t->sites.a[aSite[k]]), bB = program_line(&t->sites.a[aSite[iKeep]]);
            if (bA > bB || (bA == bB && aRise[k] > aRise[iKeep])) iKeep = k;
        }
        {
            const struct lsite *e = &L->a[aSite[iKeep]];
            int *aOther = malloc(sizeof *aOther * (size_t)nSiteFound);
            int64_t *aOtherRise = malloc(sizeof *aOtherRise * (size_t)nSiteFound);
            if (!aOther || !aOtherRise) rc = -1;
            for (int k = 0; rc == 0 && k < nSiteFound; k++) {
                const struct lsite *x = &L->a[aSite[k]];
                int64_t ov = (x->lastBoundaryTs < e->lastBoundaryTs ? x->lastBoundaryTs : e->lastBoundaryTs) -
                             (x->firstBoundaryTs > e->firstBoundaryTs ? x->firstBoundaryTs : e->firstBoundaryTs);
                int64_t shorter = x->lastBoundaryTs - x->firstBoundaryTs < e->lastBoundaryTs - e->firstBoundaryTs
                                      ? x->lastBoundaryTs - x->firstBoundaryTs
                                      : e->lastBoundaryTs - e->firstBoundaryTs;
                int bSame = k != iKeep && ov >= 0 && ov * 2 >= shorter; /* growing over (mostly) the same steps */
                if (bSame) {
                    aOther[nOther] = aSite[k];
                    aOtherRise[nOther++] = aRise[k];
                } else if (k != iKeep) {
                    rc = growth_finding(L, r, iTrace, aSite[k], aRise[k], NULL, NULL, 0);
                }
            }
            if (rc == 0) rc = growth_finding(L, r, iTrace, aSite[iKeep], aRise[iKeep], aOther, aOtherRise, nOther);
            free(aOther);
            free(aOtherRise);
        }
    } else {
        for (int k = 0; rc == 0 && k < nSiteFound; k++) rc = growth_finding(L, r, iTrace, aSite[k], aRise[k], NULL, NULL, 0);
    }
    free(aSite);
    free(aRise);
    *pnFound = nSiteFound;
    return rc != 0 ? -1 : 0;
}

/*
 * Whether the baseline's n points aB (-1: a point with no allocation or free) rise (vt__trend), else whether
 * they rise up to their highest point when it came in the last quarter of them and was the last point with
 * any activity before the last one, which fell: what the program releases as it exits is no sign that it did
 * not grow, as site_grows() judges a site (a server without phases that kept every request's cache and freed
 * the dict at exit had its last sixteenth's lowest point at 0, and no growth finding). A point after the
 * highest where the program was active without rising says the growth had stopped before the release (a
 * server's capped key/value cache full at 80 % of the run, in use, then freed at shutdown). *pRise: the rise
 * judged.
 */
static int baseline_rises(const int64_t *aB, int n, int64_t minRise, int64_t *pRise)
{
    int top = -1;
    if (vt__trend(aB, n, minRise, pRise)) return 1;
    for (int k = 0; k < n; k++)
        if (aB[k] >= 0 && (top < 0 || aB[k] > aB[top])) top = k;
    if (top < 0 || top >= n - 1 || top * 4 < (n - 1) * 3) return 0;
    for (int k = top + 1; k < n - 1; k++)
        if (aB[k] >= 0) return 0;
    return vt__trend(aB, top + 1, minRise, pRise);
}

/*
 * The device baseline's growth of trace iTrace, reported with what explains it; *pbFound receives whether a
 * finding was made. Returns 0, or -1 when out of memory.
 */
static int baseline_growth(const struct leak *L, struct vt_result *r, int iTrace, int *pbFound)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_opts *o = r->pOpts;
    int64_t peak = vt__main_peak(t), rise, *aB = NULL;
    int n = 0, rc = 0;
    char zB[32], zProj[200];
    *pbFound = 0;
    /* a few marked steps (2 to 5): too few to compare step to step, and slices of them see each
     * step's own rise and the warm-up, not growth */
    if (t->ph.nIter >= 2 && t->ph.nIter <= 5) return 0;
    aB = malloc(sizeof *aB * (size_t)(t->ph.nIter + VT_SLICES));
    if (!aB) return -1;
    baseline_select(t, aB, &n, NULL);
    /* segments come 2-20 MiB at a time and fragmentation adds a few now and then: at segment
     * level only a rise of 5 % of the peak counts */
    if (baseline_rises(aB, n, t->f.bSegments && peak / 20 > o->minBytes ? peak / 20 : o->minBytes, &rise)) {
        struct vt_finding *f;
        int64_t accBytes = 0, stateBytes = 0;
        int iTop = -1;
        char zWho[700] = "";
        /* who raised it: what was allocated after the baseline's first point and still held at its last,
         * by site; a site whose share came in ACCUMULATED_IV intervals or more accumulates */
        for (int i = 0; i < t->sites.n && i < L->n; i++) {
            const struct lsite *e = &L->a[i];
            if (e->lateBytes <= 0 || t->sites.a[i].bNccl) continue;
            if (e->nLateIv < ACCUMULATED_IV || capped_cache(t, e) || stopped_early(e)) {
                /* made once, or a cache that reached its size */
                stateBytes += e->lateBytes;
                continue;
            }
            accBytes += e->lateBytes;
            if (iTop < 0 || e->lateBytes > L->a[iTop].lateBytes) iTop = i;
        }
        if (accBytes * 2 < rise && stateBytes * 2 >= rise) goto done; /* warm-up: state made once and kept */
        /* nothing held from its first point to its last explains half of it: the rise is the level its last
         * points stood at (a longer batch's own tensors at an iteration's lowest), not memory kept */
        if ((accBytes + stateBytes) * 2 < rise) goto done;
        f = vt__finding_add(r, iTrace, "leak", growth_sev(t, rise));
        if (!f) { rc = -1; goto done; }
        *pbFound = 1;
        vt__fmt_bytes(rise, zB, sizeof zB);
        if (iTop >= 0) {
            char zT[32], zA[32];
            vt__fmt_bytes(L->a[iTop].lateBytes, zT, sizeof zT);
            vt__fmt_bytes(accBytes, zA, sizeof zA);
            f->stackId = t->sites.a[iTop].stackId;
            snprintf(zWho, sizeof zWho, " Of the memory allocated after the first of these steps and still held at "
                     "the last (%s, made in %d or more of them), %s came from this site%s%s.", zA, ACCUMULATED_IV,
                     zT, t->f.bSegments ? " (attribution at segment level: the call sites of the caching "
                     "allocator's segments reserved while the baseline rose; a segment's site is the allocation "
                     "that made the allocator reserve it)" : "",
                     t->f.bSegments && t->sites.a[iTop].stackId >= 0 && !strstr(t->sites.a[iTop].zSite, ".py:")
                         ? ". No Python frame: in PyTorch, the autograd engine's thread reserving for the backward "
                           "pass because tensors kept elsewhere hold the cache's blocks; " VT_HISTORY_HINT
                           " shows the line that keeps them" : "");
        }
        f->bytes = rise;
        f->count = n;
        f->firstTs = L->baseStart;
        f->lastTs = L->baseLast;
        snprintf(f->zPhase, sizeof f->zPhase, "%s", t->ph.nIter ? "training" : "");
        if (iTop >= 0)
            f->zSite = vt__strdupf("%s%s", t->sites.a[iTop].zSite, t->f.bSegments ? " (attribution at segment level)" : "");
        else
            f->zSite = vt__strdupf("no single site: device total");
        f->zTitle = vt__strdupf("Memory baseline rises: +%s over %d %s", zB, n, t->ph.nIter ? "iterations" : "slices of the run");
        f->zEvidence = vt__strdupf("The lowest live device memory of each %s (the bottom of the sawtooth) "
                                   "rose by %s.%s%s",
                                   t->ph.nIter ? "training iteration" : "sixteenth of the run", zB,
                                   iTop >= 0 ? zWho : " No single call site explains it.",
                                   projection(t, rise, n - 1, zProj, sizeof zProj));
        f->zFix = vt__strdupf("%s", zFixLeak);
        if (!f->zTitle || !f->zEvidence || !f->zFix || !f->zSite) rc = -1;
    }
done:
    free(aB);
    return rc;
}

/*
 * Growth across training iterations: per site, else the device baseline, else a site climbing as a
 * staircase (staircase()): the baseline, where it rises, already says that growth.
 */
static int growth(const struct leak *L, struct vt_result *r, int iTrace)
{
    const struct vt_trace *t = &r->aTrace[iTrace];
    int n = 0, bFound = 0;
    if (!repeats(t) && ends_at_dump(t)) return 0; /* one step or less up to a dump or a crash: no growth to judge */
    if (site_growth(L, r, iTrace, 0, &n) != 0) return -1;
    if (n) return 0;
    if (baseline_growth(L, r, iTrace, &bFound) != 0) return -1;
    if (bFound) return 0;
    return site_growth(L, r, iTrace, 1, &n);
}

/* The state of site i, grown to hold it (zeroed entries: no boundary seen, no end). NULL when out of memory. */
static struct lsite *lsite_get(struct leak *L, int i, const struct vt_trace *t)
{
    if (i >= L->n) {
        int nNew = i + 1 > 2 * L->n ? i + 1 : 2 * L->n;
        struct lsite *aNew = realloc(L->a, sizeof *aNew * (size_t)nNew);
        if (!aNew) return NULL;
        memset(aNew + L->n, 0, sizeof *aNew * (size_t)(nNew - L->n));
        for (int k = L->n; k < nNew; k++) {
            aNew[k].endFirstTs = aNew[k].endLastUse = -1;
            aNew[k].endMinUse = INT64_MAX;
            aNew[k].seenBoundary = t->ph.nBoundaryDone; /* boundaries before its first allocation are not its */
        }
        L->a = aNew;
        L->n = nNew;
    }
    return &L->a[i];
}

/*
 * Bring site e up to date with the growth boundaries passed since it last changed. Its live
 * bytes were constant since then, so only the first of those boundaries can differ from the
 * previous one. O(1): boundaries cost nothing for sites that do not change.
 */
static void site_catch_up(const struct vt_trace *t, struct lsite *e)
{
    int nNew = t->ph.nBoundaryDone - e->seenBoundary;
    if (nNew <= 0) return;
    if (e->nBoundary == 0) {
        e->firstBoundaryBytes = e->liveBytes;
        e->firstBoundaryTs = t->ph.aBoundary[e->seenBoundary];
    } else if (e->liveBytes > e->prevBoundaryBytes) {
        /* at the first boundary not yet seen: nothing of the site happened between the others */
        int part = t->ph.nBoundary > 0 ? (int)((int64_t)e->seenBoundary * UP_PARTS / t->ph.nBoundary) : 0;
        int64_t up = e->liveBytes - e->prevBoundaryBytes;
        if (part >= UP_PARTS) part = UP_PARTS - 1;
        e->aUpPart[part]++;
        e->aUpBytes[part] += up;
        if (up > e->aUpMax[part]) e->aUpMax[part] = up;
        e->nUp++;
        e->lastChangeAt = e->nBoundary;
        e->bLastUp = 1;
    } else if (e->liveBytes < e->prevBoundaryBytes) {
        e->nDown++;
        e->lastChangeAt = e->nBoundary;
        e->bLastUp = 0;
        if (e->prevBoundaryBytes - e->liveBytes > e->maxDrop) e->maxDrop = e->prevBoundaryBytes - e->liveBytes;
    }
    if (e->nBoundary == 0 || e->liveBytes > e->topBytes) {
        e->topBytes = e->liveBytes;
        e->topAt = e->nBoundary;
        e->topUp = e->nUp;
        e->topDrop = e->maxDrop;
    }
    e->prevBoundaryBytes = e->liveBytes;
    e->lastBoundaryTs = t->ph.aBoundary[t->ph.nBoundaryDone - 1];
    e->nBoundary += nNew;
    e->seenBoundary = t->ph.nBoundaryDone;
}

/* "In use until the end": a use in the last iteration or the last tenth of the run; the baseline's span. */
static int leak_begin(void *st, const struct vt_trace *t, const struct vt_opts *o)
{
    struct leak *L = st;
    int n;
    (void)o;
    L->late = t->f.t1 - (t->f.t1 - t->f.t0) / 10;
    if (t->ph.nIter > 0 && t->ph.aIter[t->ph.nIter - 1].start < L->late) L->late = t->ph.aIter[t->ph.nIter - 1].start;
    L->baseStart = baseline_select(t, NULL, &n, &L->baseLast);
    return 0;
}

/* Index of the growth interval holding ts: how many growth boundaries lie at or before it. */
static int interval_of(const struct vt_trace *t, int64_t ts)
{
    int lo = 0, hi = t->ph.nBoundary;
    while (lo < hi) {
        int m = lo + (hi - lo) / 2;
        if (t->ph.aBoundary[m] <= ts) lo = m + 1;
        else hi = m;
    }
    return lo;
}

/* Note interval iv in the distinct set a (*pn of them, at most ACCUMULATED_IV kept). */
static void interval_note(int *a, int *pn, int iv)
{
    for (int k = 0; k < *pn; k++)
        if (a[k] == iv) return;
    if (*pn < ACCUMULATED_IV) a[(*pn)++] = iv;
}

/* Lifetimes begin and end: per-site live bytes (at growth boundaries) and what is live at the end. */
static int leak_event(void *st, const struct vt_trace *t, const struct vt_event *ev)
{
    struct leak *L = st;
    const struct vt_life *l = ev->l;
    struct lsite *e;
    if (l->acct == VT_ACCT_PINNED) return 0; /* pinned host memory is judged by the transfer detector */
    if (!(e = lsite_get(L, l->site, t))) return -1;
    site_catch_up(t, e);
    if (ev->type == VT_EV_BEGIN) {
        e->liveBytes += l->bytes;
        return 0;
    }
    /* held from after the baseline's first point through the start of its last: it raised the baseline */
    if (L->baseStart >= 0 && l->allocTs > L->baseStart && l->allocTs < L->baseLast && !l->bInternal &&
        (l->status == VT_LIFE_LIVE_AT_END || l->freeTs > L->baseLast)) {
        e->lateBytes += l->bytes;
        interval_note(e->aLateIv, &e->nLateIv, interval_of(t, l->allocTs));
    }
    if (l->status != VT_LIFE_LIVE_AT_END) {
        e->liveBytes -= l->bytes;
    } else if (!l->bInternal && !vt__live_at_crash(t, l) && /* live at a crash: the OOM finding holds it */
               !vt__read_lent_during(&t->f, l->allocTs, -1)) {
        /* (live through a window CUPTI was lent to the job's profiler: its free may lie there, unrecorded) */
        e->endCount++;
        e->endBytes += l->bytes;
        if (e->endFirstTs < 0 || l->allocTs < e->endFirstTs) e->endFirstTs = l->allocTs;
        if (l->allocTs > e->endLastTs) e->endLastTs = l->allocTs;
        /* its last possible use (a block of PyTorch's history may have been used by any use of the segment
         * holding it; an unscanned launch may have used anything live), as the retained detector judges idleness:
         * only a block at its segment's base address is named by kernel arguments itself */
        int64_t use = l->useBound >= 0 ? l->useBound : l->lastUse;
        if (use >= L->late) e->endUsedLate++;
        if (use > e->endLastUse) e->endLastUse = use;
        if (use < e->endMinUse) e->endMinUse = use;
        if (l->allocTs >= 0) interval_note(e->aIv, &e->nIv, interval_of(t, l->allocTs)); /* unknown: no interval */
    }
    return 0;
}

static int leak_end(void *st, struct vt_result *r, int iTrace)
{
    struct leak *L = st;
    const struct vt_trace *t = &r->aTrace[iTrace];
    for (int i = 0; i < L->n; i++) site_catch_up(t, &L->a[i]);
    return leak_at_end(L, r, iTrace) != 0 || growth(L, r, iTrace) != 0 ? -1 : 0;
}

static void leak_free(void *st)
{
    free(((struct leak *)st)->a);
}

const struct vt_detector vt__detector_leak = {
    "leak", sizeof(struct leak), 1u << VT_EV_BEGIN | 1u << VT_EV_END, leak_begin, leak_event, leak_end, leak_free,
};
