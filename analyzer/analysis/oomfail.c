/* Failed requests: the OOM events that are attempts of one failure, and whether the job ended at one. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

/*
 * One request can fail several times before the error reaches the program: PyTorch's caching
 * allocator releases its cached segments and calls cudaMalloc again, cuDNN and cuBLAS ask again
 * for a smaller workspace, a caller catches the error and asks for less. Each attempt is an
 * oom_event row; they are one failure when each follows the previous closely (VT_OOM_RETRY_NS),
 * on the same device, with no step completed between them, and either lie in steps (a step and
 * its retry) or, outside every iteration, come from the same call site or ask for the same size
 * with nothing as large succeeding between. A failure is recovered (oom_recovered) when no error
 * reached the program: the allocator's retry after releasing its cache, cuDNN's smaller workspace.
 * The job ended at the last failure when nothing of note was allocated after it (less than
 * VT_OOM_AFTER_BYTES in all, any memory kind: what an exception's unwinding and the
 * interpreter's exit may do), no iteration began, and no kernel or copy ran past the work
 * queued before it (VT_OOM_RETRY_NS after it): what is live at the end of the trace was live at
 * the crash.
 */

/* The index of the first iteration of t starting after a (iterations are in start order), nIter when none. */
static int iter_after(const struct vt_trace *t, int64_t a)
{
    int lo = 0, hi = t->ph.nIter;
    while (lo < hi) {
        int m = lo + (hi - lo) / 2;
        if (t->ph.aIter[m].start <= a) lo = m + 1;
        else hi = m;
    }
    return lo;
}

/* Whether attempt a asked for more than the device's free memory and all this process held together: a probe
 * that could never fit (cuDNN asking for the workspace of its fastest algorithm), not what the program needed. */
static int never_fits(const struct vt_oom *a)
{
    return a->freeBytes >= 0 && a->requested > a->freeBytes + (a->held > 0 ? a->held : 0);
}

/*
 * Whether attempt a was recovered before ts: the next allocation on its device came from its site at
 * once (before ts, within VT_OOM_RETRY_NS) and either got the size asked, within 2 % (the allocator's
 * retry after releasing its cache; a block of the segment asked is a little smaller) or a was a probe
 * that could never fit (more than free plus what the process held: cuDNN asking for a workspace, then
 * taking a smaller one). A caller that catches the error and runs a smaller batch gets smaller blocks
 * for requests that could have fit: not recovered.
 */
static int oom_recovered(const struct vt_oom *a, int64_t ts)
{
    if (a->site < 0 || a->nextSite != a->site || a->nextTs < 0 || a->nextTs >= ts || a->nextTs - a->ts > VT_OOM_RETRY_NS)
        return 0;
    return a->nextBytes * 50 >= a->requested * 49 || never_fits(a);
}

/* Whether an iteration of t lies entirely within (a, b): a step that went on between two moments. */
static int step_between(const struct vt_trace *t, int64_t a, int64_t b)
{
    for (int i = iter_after(t, a); i < t->ph.nIter && t->ph.aIter[i].start < b; i++)
        if (t->ph.aIter[i].end <= b) return 1;
    return 0;
}

/*
 * Whether OOM event b is another attempt of the failure whose latest attempt is a: close in time,
 * the same device, no step completed between them (a retried step's range, begun again, is no
 * step that went on), and, outside every iteration, the same site or size with nothing as large
 * succeeding between (inside a step, its retries may run part of the step again). An attempt in
 * the gap just before the step b lies in is that step's (the first forward of a new shape runs
 * cuDNN's workspace probes as the step begins, before or as its range opens): cuDNN's failed probes
 * and the convolution's own failure after them in that step were two findings for one failure.
 */
static int same_failure(const struct vt_trace *t, const struct vt_oom *a, const struct vt_oom *b)
{
    int64_t small = a->requested < b->requested ? a->requested : b->requested;
    int ia, ib;
    if (a->device != b->device || b->ts - a->ts > VT_OOM_RETRY_NS) return 0;
    if (step_between(t, a->ts, b->ts)) return 0;
    if (oom_recovered(a, b->ts)) return 0; /* a was recovered: b is another request */
    ia = vt__iter_at(t, a->ts);
    ib = vt__iter_at(t, b->ts);
    if (ia >= 0 && ib >= 0) return 1; /* one step, or a step and its retry */
    if (ia < 0 && ib >= 0 && ib == iter_after(t, a->ts)) return 1; /* the opening of b's step */
    if (small > 0 ? a->allocAfter >= small : a->allocAfter > 0) return 0; /* a request succeeded between */
    return (a->site >= 0 && a->site == b->site) || ia == ib || a->requested == b->requested;
}

int vt__oom_failures(struct vt_trace *t)
{
    free(t->aFail);
    t->aFail = NULL;
    t->nFail = 0;
    t->crashTs = -1;
    if (t->nOom == 0) return 0;
    t->aFail = calloc((size_t)t->nOom, sizeof *t->aFail);
    if (!t->aFail) return -1;
    for (int i = 0; i < t->nOom;) {
        struct vt_oomfail *p = &t->aFail[t->nFail++];
        int j = i;
        while (j + 1 < t->nOom && same_failure(t, &t->aOom[j], &t->aOom[j + 1])) j++;
        p->iFirst = i;
        p->nAttempt = j - i + 1;
        p->firstTs = t->aOom[i].ts;
        p->lastTs = t->aOom[j].ts;
        p->device = t->aOom[i].device;
        p->requested = -1;
        p->iJudged = j;
        /* judged on the last attempt of its largest request, leaving out probes that could never fit where the
         * failure has another attempt (cuDNN's workspace probes before the convolution's own request) */
        for (int pass = 0; pass < 2 && p->requested < 0; pass++)
            for (int k = i; k <= j; k++)
                if ((pass || !never_fits(&t->aOom[k])) && t->aOom[k].requested >= p->requested)
                    p->requested = t->aOom[k].requested, p->iJudged = k;
        p->liveEndBytes = p->liveEndCount = 0;
        p->bRecovered = oom_recovered(&t->aOom[j], INT64_MAX);
        i = j + 1;
    }
    {
        struct vt_oomfail *p = &t->aFail[t->nFail - 1];
        const struct vt_oom *last = &t->aOom[p->iFirst + p->nAttempt - 1];
        int64_t gpuEnd = t->f.aT[VT_T_KER].t1 > t->f.aT[VT_T_COPY].t1 ? t->f.aT[VT_T_KER].t1 : t->f.aT[VT_T_COPY].t1;
        if (!p->bRecovered && last->allocAfter < VT_OOM_AFTER_BYTES && iter_after(t, p->lastTs) == t->ph.nIter &&
            gpuEnd <= p->lastTs + VT_OOM_RETRY_NS) {
            p->bFatal = 1;
            t->crashTs = p->lastTs;
        }
    }
    return 0;
}

void vt__oom_live_at_end(struct vt_trace *t, const struct vt_life *l)
{
    struct vt_oomfail *p;
    if (t->crashTs < 0 || t->nFail == 0 || l->allocTs > t->crashTs || l->bInternal) return;
    p = &t->aFail[t->nFail - 1];
    if (l->acct != p->device) return;
    p->liveEndBytes += l->bytes;
    p->liveEndCount++;
}

int vt__live_at_crash(const struct vt_trace *t, const struct vt_life *l)
{
    return t->crashTs >= 0 && l->status == VT_LIFE_LIVE_AT_END && l->allocTs <= t->crashTs && !l->bInternal;
}
