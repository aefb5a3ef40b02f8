/* Report: what every format shows of a trace, chosen once: device names, groups at a peak, sites, the phases' absence. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#define VT_REPORT_GROUPS 5 /* groups listed at a device peak: the largest, at most --top */

const char *vt__fmt_device(const struct vt_device *d, char *z, size_t n)
{
    if (d->id < 0) snprintf(z, n, "%s", d->zName);
    else if (d->zName[0]) snprintf(z, n, "device %d (%s)", d->id, d->zName);
    else snprintf(z, n, "device %d", d->id);
    return z;
}

const char *vt__fmt_account(const struct vt_trace *t, int acct, char *z, size_t n)
{
    const struct vt_devinfo *d = acct >= 0 ? vt__read_device(&t->f, acct) : NULL;
    char zT[32];
    if (acct == VT_ACCT_PINNED) snprintf(z, n, "pinned host memory");
    else if (acct == VT_ACCT_MANAGED) snprintf(z, n, "managed memory");
    else if (d && d->zName[0] && d->totalBytes > 0)
        snprintf(z, n, "device %d (%s, %s)", acct, d->zName, vt__fmt_bytes(d->totalBytes, zT, sizeof zT));
    else if (d && d->zName[0]) snprintf(z, n, "device %d (%s)", acct, d->zName);
    else snprintf(z, n, "device %d", acct);
    return z;
}

const struct vt_device *vt__report_device(const struct vt_trace *t, int acct)
{
    for (int i = 0; i < t->tl.nDev; i++)
        if (t->tl.aDev[i].id == acct) return &t->tl.aDev[i];
    return NULL;
}

const char *vt__fmt_free_faults(const struct vt_trace *t, char *z, size_t n)
{
    if (t->lc.nFreeUnknown == 0 && t->lc.nDoubleFree == 0 && t->lc.nFreeMissing == 0)
        snprintf(z, n, "every free matched its allocation");
    else
        snprintf(z, n, "%lld free%s of unknown addresses, %lld double free%s, %lld allocation%s whose free was never "
                 "seen (the address was allocated again)",
                 (long long)t->lc.nFreeUnknown, t->lc.nFreeUnknown == 1 ? "" : "s", (long long)t->lc.nDoubleFree,
                 t->lc.nDoubleFree == 1 ? "" : "s", (long long)t->lc.nFreeMissing, t->lc.nFreeMissing == 1 ? "" : "s");
    return z;
}

int vt__report_oom_shown(const struct vt_trace *t, int k)
{
    if (k < 0 || k >= t->nOom || !t->aOom[k].bd.n) return 0;
    for (int i = 0; i < t->nFail; i++)
        if (k >= t->aFail[i].iFirst && k < t->aFail[i].iFirst + t->aFail[i].nAttempt) return k == t->aFail[i].iJudged;
    return 1;
}

int vt__report_groups(const struct vt_result *r, const struct vt_device *d)
{
    int n = d->nGroup;
    if (n > r->pOpts->nTop) n = r->pOpts->nTop;
    return n < VT_REPORT_GROUPS ? n : VT_REPORT_GROUPS;
}

const char *vt__fmt_groups_more(const struct vt_result *r, const struct vt_device *d, char *z, size_t n)
{
    int nShown = vt__report_groups(r, d), nOther = d->nGroup - nShown, bAtLeast = d->nGroup == VT_TOPMAX;
    int64_t nMore = 0, bytesMore = 0;
    char zM[32];
    if (nOther <= 0) return NULL;
    for (int k = nShown; k < d->nGroup; k++) nMore += d->aGroup[k].count, bytesMore += d->aGroup[k].bytes;
    snprintf(z, n, "and %s%lld more allocation%s, %s, from %s%d other site%s or kind%s (--format json lists up to --top of them)",
             bAtLeast ? "at least " : "", (long long)nMore, nMore == 1 ? "" : "s", vt__fmt_bytes(bytesMore, zM, sizeof zM),
             bAtLeast ? "at least " : "", nOther, nOther == 1 ? "" : "s", nOther == 1 ? "" : "s");
    return z;
}

int vt__report_sites(const struct vt_result *r, const struct vt_trace *t, int **paIdx)
{
    int n = 0;
    int *a = malloc(sizeof(int) * (size_t)(t->sites.n ? t->sites.n : 1));
    *paIdx = a;
    if (!a) return -1;
    for (int i = 0; i < t->sites.n; i++) /* a site whose allocations all count elsewhere (segments holding blocks) */
        if (t->sites.a[i].nAlloc > 0) a[n++] = i;
    for (int i = 1; i < n; i++) /* insertion sort, stable: sites are few */
        for (int j = i; j > 0 && t->sites.a[a[j - 1]].peakLiveBytes < t->sites.a[a[j]].peakLiveBytes; j--) {
            int x = a[j];
            a[j] = a[j - 1];
            a[j - 1] = x;
        }
    return n < r->pOpts->nTop ? n : r->pOpts->nTop;
}

const char *vt__fmt_phase_iters(const struct vt_trace *t, char *z, size_t n)
{
    int nIn = 0;
    for (int i = 0; i < t->ph.nIter; i++) nIn += t->ph.aIter[i].phase >= 0;
    if (nIn == t->ph.nIter)
        snprintf(z, n, "%d iteration%s", t->ph.nIter, t->ph.nIter == 1 ? "" : "s");
    else
        snprintf(z, n, "%d of the trace's %d iterations", nIn, t->ph.nIter);
    return z;
}

void vt__fmt_no_phases(const struct vt_trace *t, char *z, size_t n)
{
    if (t->ph.zDoubt)
        snprintf(z, n, "not inferred with confidence from kernel names (%s); no finding depends on phases (NVTX "
                       "ranges named train/validation would give them)", t->ph.zDoubt);
    else if (t->ph.bCycleIter) /* a dump's own cycles: steps, of no known kind */
        snprintf(z, n, "none found: %d iteration%s from the cycles of its tensor memory (no range or kernel marks "
                       "steps), none of them known to train or evaluate",
                 t->ph.nIter, t->ph.nIter == 1 ? "" : "s");
    else if (t->ph.nIter > 0) /* steps marked (ProfilerStep#N, --iteration), no training or evaluation in them */
        snprintf(z, n, "none found: %d iteration%s marked, with no backward/optimizer kernels in %s (inference, or "
                       "no kernels traced) and no NVTX range matching the phase pattern",
                 t->ph.nIter, t->ph.nIter == 1 ? "" : "s", t->ph.nIter == 1 ? "it" : "them");
    else
        snprintf(z, n, "none found (no NVTX ranges matching the phase pattern, no backward/optimizer kernels)");
}

const char *vt__fmt_phase_peak(const struct vt_trace *t, const struct vt_phase *p, char *z, size_t n)
{
    char zB[32];
    int64_t peak = vt__phase_peak(t, p);
    if (vt__memory_known(t)) return vt__fmt_bytes(peak, z, n);
    /* no lifetime: an importer's running total where it peaked inside the phase (figures.h), else unknown */
    if (peak >= 0) snprintf(z, n, "%s (running sum)", vt__fmt_bytes(peak, zB, sizeof zB));
    else snprintf(z, n, "unknown"); /* no memory data: not 0 */
    return z;
}

void vt__report_judged(const struct vt_result *r, int *pbMemory, int *pbCopies)
{
    *pbMemory = *pbCopies = 0;
    for (int i = 0; i < r->nTrace; i++) {
        const struct vt_trace *t = &r->aTrace[i];
        if (t->lc.nAlloc > 0 || t->lc.nTensorAlloc > 0 || t->nOom > 0) *pbMemory = 1;
        if (t->xf.x[0].count > 0 || t->xf.x[1].count > 0) *pbCopies = 1;
    }
}

const char *vt__fmt_no_findings(const struct vt_result *r, char *z, size_t n)
{
    int bMemory, bCopies;
    vt__report_judged(r, &bMemory, &bCopies);
    if (bMemory && r->pOpts && r->pOpts->minBytes > ((int64_t)1 << 20)) { /* findings left out by their size */
        char zB[32];
        snprintf(z, n, "No problems found of at least %s (--min-bytes).", vt__fmt_bytes(r->pOpts->minBytes, zB, sizeof zB));
    } else if (bMemory)
        snprintf(z, n, "No problems found.");
    else if (bCopies)
        snprintf(z, n, "No problems found in the host-device copies. Memory could not be judged: no allocation was "
                       "recorded (the notes say why).");
    else
        snprintf(z, n, "Nothing could be judged: no allocation and no host-device copy was recorded (the notes say "
                       "why).");
    return z;
}

const char *vt__fmt_bdname(const struct vt_bdpart *p, char *z, size_t n)
{
    if (p->zOwner[0]) snprintf(z, n, "%s (%s)", vt__cat_name(p->cat), p->zOwner);
    else snprintf(z, n, "%s", vt__cat_name(p->cat));
    return z;
}

const char *vt__fmt_bdshare(const struct vt_breakdown *b, const struct vt_bdpart *p, char *z, size_t n)
{
    double pct = b->total > 0 ? 100.0 * (double)p->bytes / (double)b->total : 0;
    if (p->bytes > 0 && pct < 1) snprintf(z, n, "<1%%");
    else snprintf(z, n, "%.0f%%", pct);
    return z;
}

const char *vt__fmt_atpeak(const struct vt_trace *t, const struct vt_device *d, char *z, size_t n)
{
    char zT[32];
    z[0] = 0;
    if (d->id >= 0 && d->atPeakTs >= 0 && t->f.bTimes) snprintf(z, n, "at %s", vt__fig_fmt_at(&t->f, d->atPeakTs, zT, sizeof zT));
    return z;
}

const char *vt__fmt_bdhead(const struct vt_trace *t, const struct vt_breakdown *b, char *z, size_t n)
{
    char zB[32], zAt[48] = "", zT[32];
    vt__fmt_bytes(b->total, zB, sizeof zB);
    if (t && t->f.bTimes && b->ts >= 0) snprintf(zAt, sizeof zAt, " at %s", vt__fig_fmt_at(&t->f, b->ts, zT, sizeof zT));
    snprintf(z, n, "what it was%s (%s, %s%s)", zAt, b->zBasis, zB,
             b->bPages     ? "; at segment level, expandable segments: each page in the category of the allocation "
                             "that mapped it"
             : b->bSegment ? "; at segment level: each segment in the category of the allocation that reserved it"
                           : "");
    return z;
}

int vt__fmt_fit(const struct vt_device *d, char *z, size_t n)
{
    const struct vt_fit *f = &d->fit;
    char zN[32], zC[32], zX[64], zB[32], zH[32], zG[32], zF[32], zScale[256];
    size_t k;
    z[0] = 0;
    if (!f->bDone) return 0;
    vt__fmt_bytes(f->need, zN, sizeof zN);
    vt__fmt_bytes(f->capacity, zC, sizeof zC);
    vt__fmt_bytes(f->headroom < 0 ? -f->headroom : f->headroom, zH, sizeof zH);
    vt__fmt_bytes(f->scaling, zG, sizeof zG);
    vt__fmt_bytes(f->fixed, zF, sizeof zF);
    if (!f->bContextAssumed && f->context == 0) /* the breakdown is of device used: the context is in it */
        snprintf(zX, sizeof zX, "%s", "the CUDA context measured in it");
    else
        snprintf(zX, sizeof zX, "%s %s CUDA context", f->bContextAssumed ? "an assumed" : "a measured",
                 vt__fmt_bytes(f->context, zB, sizeof zB));
    if (f->capacity > 0)
        snprintf(z, n, "needs %s of %s (with %s): %s %s; ", zN, zC, zX, zH, f->headroom >= 0 ? "headroom" : "short");
    else
        snprintf(z, n, "needs %s (with %s), device size unknown (--fit-memory SIZE); ", zN, zX);
    k = strlen(z);
    if (f->maxScale >= 0 && f->maxBatch >= 0)
        snprintf(zScale, sizeof zScale, ": the batch can be %.2fx the traced one (batch %lld of %lld)", f->maxScale,
                 (long long)f->maxBatch, (long long)f->batch);
    else if (f->maxScale >= 0)
        snprintf(zScale, sizeof zScale, ": the batch can be %.2fx the traced one (--batch N gives it as a batch size)",
                 f->maxScale);
    else if (f->scaling <= 0)
        snprintf(zScale, sizeof zScale, ": nothing at the peak grows with the batch");
    else
        zScale[0] = 0;
    if (f->bUpperBound && f->maxScale >= 0) /* segment level, too large: the most that fits */
        snprintf(zScale + strlen(zScale), sizeof zScale - strlen(zScale), " at most: segment level, an upper bound");
    if (f->bLowerBound && f->maxScale >= 0) { /* segment level, or a bounded replay: the least that fits, not a point */
        size_t m = strlen(zScale);
        const char *zWhy = f->bReplayed ? "the replays were bounded, a range" : "segment level, a range";
        if (f->upScale < 0)
            snprintf(zScale + m, sizeof zScale - m, " at least: segment level, a lower bound (no upper bound can be told)");
        else if (f->upBatch >= 0)
            snprintf(zScale + m, sizeof zScale - m, " at least, and at most %sbatch %lld: %s", f->bReplayed ? "" : "about ",
                     (long long)f->upBatch, zWhy);
        else
            snprintf(zScale + m, sizeof zScale - m, " at least, and at most %s%.2fx: %s", f->bReplayed ? "" : "about ",
                     f->upScale, zWhy);
    }
    {
        char zList[512] = "";
        for (int i = 0; i < d->bd.n; i++) { /* the categories that grow, largest first */
            const struct vt_bdpart *p = &d->bd.a[i];
            size_t m = strlen(zList);
            if (!vt__cat_scales(p->cat) || p->bytes <= 0) continue;
            snprintf(zList + m, sizeof zList - m, "%s%s", m ? ", " : "", vt__cat_name(p->cat));
        }
        if (!zList[0]) /* nothing grows: no empty list, and the cache grows with nothing */
            snprintf(z + k, n - k, "%s grows with the batch, %s does not%s", zG, zF, zScale);
        else
            snprintf(z + k, n - k, "%s grows with the batch (%s%s), %s does not%s", zG, zList,
                     vt__bd_part(&d->bd, VT_CAT_CACHE) || d->bd.poolCache > 0 ? " and the allocator cache in proportion"
                                                                              : "",
                     zF, zScale);
    }
    return 1;
}

const char *vt__fmt_saving(const struct vt_fitsave *s, char *z, size_t n)
{
    char zB[32];
    snprintf(z, n, "%s: %s (if %s)", s->zWhat, vt__fmt_bytes(s->bytes, zB, sizeof zB), s->zAssume);
    return z;
}
