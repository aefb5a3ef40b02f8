/* Detector: validation spikes: evaluation above training, memory carried over from training, batch growth. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

static const char *zFixNoGrad =
    "Run evaluation under torch.no_grad() (or torch.inference_mode()) and model.eval(); keep "
    "metrics as numbers (loss.item()) or detached tensors (.detach().cpu()), never outputs that "
    "carry their graph.";

/* What the detector keeps per call site: the bytes its allocations of one evaluation phase kept past their batch. */
struct ssite {
    int canon;              /* the first contributing site with the same text (sites differ by native frames), -2 unknown */
    int phase;              /* the phase bytes/count belong to, -1 none yet */
    int64_t bytes, count;
    int64_t stackId;        /* the stack of its first allocation kept past its batch in that phase (sites share
                             * stacks' text only) */
    int64_t aLive[VT_SLICES]; /* bytes of its allocations made in that phase live at the end of each sixteenth */
};

/* The bytes one site's allocations made in a phase kept past their batch. */
struct skept {
    int site;
    int64_t bytes, count, stackId;
    int64_t aLive[VT_SLICES]; /* its allocations made in the phase live at the end of each sixteenth */
};

/* Evaluations of this many iterations or fewer are too short for a trend (vt__trend needs 4 steps). */
#define FEW_BATCHES 4

/* Whether phase p's baseline is read batch by batch (its iterations: enough for a trend, not too many), else by
 * sixteenths of its time. */
static int by_batches(const struct vt_phase *p)
{
    return p->nIter > FEW_BATCHES && p->nIter <= 512;
}

/* Per phase: the site whose allocations kept past their batch hold the most, and in which sixteenths they were made. */
struct sphase {
    int site;               /* -1 none */
    int64_t bytes, count;
    struct skept *aKept;    /* every site's share of those allocations */
    int nKept;
    int64_t kept;           /* bytes of all its allocations kept past their batch */
    int64_t aSlice[VT_SLICES]; /* bytes of those kept allocations made in each sixteenth of the phase */
    int64_t aIterKept[FEW_BATCHES]; /* bytes of those made in each of its first iterations */
};

struct spike {
    struct ssite *aSite;
    int nSite;
    int *aCanon, nCanon;    /* the canonical sites seen so far */
    struct sphase *aPh;     /* by phase index */
    int nPh;
};

/* The canonical site of site i (the first seen with its text), -1 when out of memory. */
static int canon_site(struct spike *S, const struct vt_trace *t, int i)
{
    int *aNew;
    if (S->aSite[i].canon >= -1) return S->aSite[i].canon;
    for (int k = 0; k < S->nCanon; k++)
        if (!strcmp(t->sites.a[S->aCanon[k]].zSite, t->sites.a[i].zSite)) return S->aSite[i].canon = S->aCanon[k];
    aNew = realloc(S->aCanon, sizeof *aNew * (size_t)(S->nCanon + 1));
    if (!aNew) return -1;
    S->aCanon = aNew;
    S->aCanon[S->nCanon++] = i;
    return S->aSite[i].canon = i;
}

/* Fold the bytes site iSite holds for its current phase into that phase's sites; 0 or -1 when out of memory. */
static int site_flush(struct spike *S, int iSite)
{
    struct ssite *s = &S->aSite[iSite];
    struct sphase *q;
    struct skept *aNew;
    if (s->phase < 0) return 0;
    q = &S->aPh[s->phase];
    if (!(aNew = realloc(q->aKept, sizeof *aNew * (size_t)(q->nKept + 1)))) return -1;
    q->aKept = aNew;
    q->aKept[q->nKept].site = iSite;
    q->aKept[q->nKept].bytes = s->bytes;
    q->aKept[q->nKept].stackId = s->stackId;
    memcpy(q->aKept[q->nKept].aLive, s->aLive, sizeof s->aLive);
    q->aKept[q->nKept++].count = s->count;
    if (s->bytes > q->bytes) {
        q->site = iSite;
        q->bytes = s->bytes;
        q->count = s->count;
    }
    s->phase = -1;
    s->bytes = s->count = 0;
    s->stackId = -1;
    memset(s->aLive, 0, sizeof s->aLive);
    return 0;
}

static int spike_begin(void *st, const struct vt_trace *t, const struct vt_opts *o)
{
    struct spike *S = st;
    (void)o;
    if (t->ph.n == 0) return 0;
    S->aPh = calloc((size_t)t->ph.n, sizeof *S->aPh);
    if (!S->aPh) return -1;
    S->nPh = t->ph.n;
    for (int i = 0; i < t->ph.n; i++) S->aPh[i].site = -1;
    return 0;
}

/*
 * A lifetime ended: when it was allocated in an evaluation phase and outlived the batch it was
 * made in (freed after that iteration ended, or live at the end; without iterations in the
 * phase, held for two sixteenths of it), its bytes count for its site in that phase: the
 * allocations that make memory grow batch by batch. Segments, at segment level, likewise. Every
 * allocation made in the phase counts in its site's bytes live at the end of each sixteenth. Device
 * memory only: the phase's baseline and peaks are a device's.
 */
static int spike_event(void *st, const struct vt_trace *t, const struct vt_event *ev)
{
    struct spike *S = st;
    const struct vt_life *l = ev->l;
    const struct vt_phase *p;
    int64_t dur, until;
    int it, k, c, bKept;
    /* pinned and managed host memory is no device memory of the phase (a loader pinning larger batches) */
    if (!S->aPh || l->phase < 0 || l->phase >= t->ph.n || l->site < 0 || l->site >= t->sites.n || l->allocTs < 0 ||
        l->acct < 0)
        return 0;
    p = &t->ph.a[l->phase];
    if (p->kind != VT_PHASE_EVAL) return 0;
    dur = p->end > p->start ? p->end - p->start : 1;
    until = l->freeTs >= 0 ? l->freeTs : INT64_MAX;
    it = vt__iter_at(t, l->allocTs);
    bKept = !(it >= 0 && t->ph.aIter[it].phase == l->phase ? until < t->ph.aIter[it].end : until - l->allocTs < dur / 8);
    if (l->site >= S->nSite) {
        int nNew = l->site + 1 > 2 * S->nSite ? l->site + 1 : 2 * S->nSite;
        struct ssite *aNew = realloc(S->aSite, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        for (int i = S->nSite; i < nNew; i++) {
            aNew[i].canon = -2;
            aNew[i].phase = -1;
            aNew[i].stackId = -1;
            aNew[i].bytes = aNew[i].count = 0;
            memset(aNew[i].aLive, 0, sizeof aNew[i].aLive);
        }
        S->aSite = aNew;
        S->nSite = nNew;
    }
    if ((c = canon_site(S, t, l->site)) < 0) return -1;
    if (S->aSite[c].phase != l->phase && site_flush(S, c) != 0) return -1;
    S->aSite[c].phase = l->phase;
    for (k = 0; k < VT_SLICES; k++) {
        int64_t e = p->start + (int64_t)((double)dur * (k + 1) / VT_SLICES);
        if (l->allocTs < e && until >= e) S->aSite[c].aLive[k] += l->bytes;
    }
    if (!bKept) return 0;
    if (S->aSite[c].count == 0) S->aSite[c].stackId = l->stackId;
    S->aSite[c].bytes += l->bytes;
    S->aSite[c].count++;
    S->aPh[l->phase].kept += l->bytes;
    if (it >= 0 && t->ph.aIter[it].phase == l->phase && it - p->firstIter >= 0 && it - p->firstIter < FEW_BATCHES)
        S->aPh[l->phase].aIterKept[it - p->firstIter] += l->bytes;
    k = (int)((l->allocTs - p->start) / (dur / VT_SLICES > 0 ? dur / VT_SLICES : 1));
    S->aPh[l->phase].aSlice[k < 0 ? 0 : k >= VT_SLICES ? VT_SLICES - 1 : k] += l->bytes;
    return 0;
}

static void spike_free(void *st)
{
    struct spike *S = st;
    free(S->aSite);
    free(S->aCanon);
    for (int i = 0; S->aPh && i < S->nPh; i++) free(S->aPh[i].aKept);
    free(S->aPh);
}

/* Fill the phase-related fields of f (strings taken over); 0 or -1 when out of memory. */
static int fill(struct vt_finding *f, const struct vt_phase *p, const char *zTitle, char *zEvidence,
                const char *zFix)
{
    snprintf(f->zPhase, sizeof f->zPhase, "%s", p->zName);
    f->firstTs = p->start;
    f->lastTs = p->end;
    f->zSite = vt__strdupf("phase '%s' (%s)", p->zName, p->zSource);
    f->zTitle = (char *)zTitle;
    f->zEvidence = zEvidence;
    f->zFix = vt__strdupf("%s", zFix);
    return f->zTitle && f->zEvidence && f->zFix && f->zSite ? 0 : -1;
}

/*
 * The sixteenths of a phase in which its kept allocations added a thirty-second or more of all they
 * hold: growth adds memory batch after batch, while a staircase of longer batches adds one large
 * segment for the longest and little else (a few small ones do not count).
 */
static int slices_of_note(const struct sphase *q)
{
    int n = 0;
    for (int k = 0; k < VT_SLICES; k++) n += q->aSlice[k] > 0 && q->aSlice[k] * 2 * VT_SLICES >= q->kept;
    return n;
}

/*
 * Whether one sixteenth in the first quarter of phase q added more than half of the segments it kept: the cache
 * filled at once for the phase's shape as it began (a larger evaluation batch's first pass, cuDNN's benchmark
 * trying workspaces), with a few smaller segments after it, is warm-up, not growth, which adds memory batch after
 * batch. Most of them late is growth that outran the cache's free blocks (they run out near the end).
 */
static int warmed_at_start(const struct sphase *q)
{
    for (int k = 0; k < VT_SLICES / 4; k++)
        if (q->aSlice[k] * 2 > q->kept) return 1;
    return 0;
}

/*
 * Growth over an evaluation of 3 to FEW_BATCHES iterations (too few for vt__trend), at tensor level: the lowest
 * live memory of every iteration above the one before, each rise at least half of the mean one, and in every
 * iteration allocations that outlived it holding at least half of the mean rise. Each batch kept memory past
 * itself, as a missing no_grad does; a healthy batch frees what it made, so its lowest level stays flat.
 * *pRise: the rise from the first iteration's lowest to the last one's.
 */
static int few_batches_grow(const struct vt_trace *t, const struct vt_phase *p, const struct sphase *q, int bBlocks,
                            int64_t minRise, int64_t *pRise)
{
    int n = p->nIter;
    int64_t a[FEW_BATCHES] = {0}, step;
    *pRise = 0;
    if (n < 3 || n > FEW_BATCHES || p->firstIter < 0) return 0;
    for (int k = 0; k < n; k++) {
        a[k] = bBlocks ? t->ph.aIter[p->firstIter + k].minTensor : t->ph.aIter[p->firstIter + k].minLive;
        if (a[k] < 0) return 0;
    }
    *pRise = a[n - 1] - a[0];
    if (*pRise < minRise) return 0;
    step = *pRise / (n - 1);
    for (int k = 0; k < n; k++) {
        if (k > 0 && (a[k] - a[k - 1]) * 2 < step) return 0;
        if (q->aIterKept[k] * 2 < step) return 0;
    }
    return 1;
}

/* A frame of the program's own code and the bytes kept past their batch by allocations made under it. */
struct sframe {
    char z[320];
    int64_t bytes, count, stackId;
    int nSite, depth;
};

/*
 * Where growth spread over many lines comes from: the innermost frame of the program's own code under
 * which the allocations of q kept past their batch were made, when it covers at least half of the rise
 * and nine tenths of what all of them keep (an evaluation that keeps each batch's graph keeps tensors of
 * every layer's line, all under one call of the model). Into *pOut; 0 found, 1 none, -1 out of memory.
 */
static int frame_site(const struct vt_trace *t, const struct sphase *q, int64_t rise, struct sframe *pOut)
{
    struct sframe *a = NULL;
    int n = 0, best = -1, rc = 1;
    int64_t total = 0;
    char zFrames[4096];
    for (int i = 0; i < q->nKept; i++) {
        int64_t stackId = q->aKept[i].stackId;
        int nBefore = n, depth = 0;
        total += q->aKept[i].bytes;
        if (stackId < 0 || vt__stack_user_frames(t->f.db, stackId, zFrames, sizeof zFrames) != SQLITE_OK) continue;
        for (char *zLine = zFrames, *zEnd; *zLine; zLine = zEnd + 1, depth++) {
            int k;
            if (!(zEnd = strchr(zLine, '\n'))) break;
            *zEnd = 0;
            for (k = 0; k < n && strcmp(a[k].z, zLine); k++) {}
            if (k < nBefore || k == n) { /* a frame seen under another site, or new */
                if (k == n) {
                    struct sframe *aNew = realloc(a, sizeof *a * (size_t)(n + 1));
                    if (!aNew) { rc = -1; goto done; }
                    a = aNew;
                    memset(&a[n], 0, sizeof a[n]);
                    size_t m = strlen(zLine) < sizeof a[n].z ? strlen(zLine) : sizeof a[n].z - 1;
                    memcpy(a[n].z, zLine, m); /* (a longer line is cut: it then matches nothing) */
                    a[n].stackId = stackId;
                    a[n].depth = depth;
                    n++;
                }
                a[k].bytes += q->aKept[i].bytes;
                a[k].count += q->aKept[i].count;
                a[k].nSite++;
                if (depth < a[k].depth) a[k].depth = depth;
            }
        }
    }
    for (int k = 0; k < n; k++)
        if (a[k].bytes * 2 >= rise && a[k].bytes * 10 >= total * 9 &&
            (best < 0 || a[k].bytes < a[best].bytes || (a[k].bytes == a[best].bytes && a[k].depth < a[best].depth)))
            best = k;
    if (best >= 0) {
        *pOut = a[best];
        rc = 0;
    }
done:
    free(a);
    return rc;
}

/*
 * The site of q whose allocations made in the phase held the most at the end of its sixteenth kTop, when
 * that is at least half of the rise; -1 none. An allocation replaced by a larger one each batch
 * (all = torch.cat([all, logits])) lives about one batch, not long enough to count as kept past it
 * without iterations, but the latest one holds the whole rise.
 */
static int live_site(const struct sphase *q, int kTop, int64_t rise)
{
    int best = -1;
    if (kTop < 0 || kTop >= VT_SLICES) return -1;
    for (int i = 0; i < q->nKept; i++)
        if (best < 0 || q->aKept[i].aLive[kTop] > q->aKept[best].aLive[kTop]) best = i;
    return best >= 0 && q->aKept[best].aLive[kTop] * 2 >= rise ? best : -1;
}

/*
 * The growth finding of phase p (rise bytes over n batches or sixteenths), at the site whose
 * allocations kept past their batch hold at least half of the rise, else at the call they were all
 * made under, else (sixteenths: kTop, the highest of them, else -1) at the site whose allocations
 * made in the phase held half of it there, else at the phase. bSeg: the rise is the segments the
 * phase added at segment level (the live baseline hid it).
 */
static int grow_finding(struct vt_result *r, int iTrace, const struct vt_phase *p, const struct sphase *q,
                        int64_t rise, int n, int sev, int bSeg, int kTop)
{
    const struct vt_trace *t = &r->aTrace[iTrace];
    const char *zUnit = by_batches(p) || (n == p->nIter && n >= 3) ? "batch" : "sixteenth";
    char zA[32], zB[32], zS[32], zWhere[320] = "";
    int bSite = q->site >= 0 && q->site < t->sites.n && q->bytes * 2 >= rise, bFrame = 0, iLive = -1;
    struct sframe fr;
    struct vt_finding *f;
    if (!bSite) { /* no line holds half of it: the call they were all made under */
        int rc = frame_site(t, q, rise, &fr);
        if (rc < 0) return -1;
        bFrame = rc == 0 && fr.nSite > 1;
        if (!bFrame) iLive = live_site(q, kTop, rise);
    }
    if (!(f = vt__finding_add(r, iTrace, "validation_spike", sev))) return -1;
    vt__fmt_bytes(rise, zA, sizeof zA);
    vt__fmt_bytes(p->startLive, zB, sizeof zB);
    vt__fmt_bytes(bFrame ? fr.bytes : q->bytes, zS, sizeof zS);
    if (bFrame)
        snprintf(zWhere, sizeof zWhere, " %lld %s (%s) made under this line during the phase, from %d call sites inside "
                 "it, outlived their batch%s.", (long long)fr.count,
                 t->f.bSegments ? (fr.count == 1 ? "segment" : "segments") : (fr.count == 1 ? "allocation" : "allocations"),
                 zS, fr.nSite, t->f.bSegments ? " (attribution at segment level: the call site of the segments the cache added)" : "");
    else if (iLive >= 0) {
        vt__fmt_bytes(q->aKept[iLive].aLive[kTop], zS, sizeof zS);
        snprintf(zWhere, sizeof zWhere, " Allocations from this site made during the phase held %s at its highest "
                 "point, each replaced by a larger one (as a tensor concatenated onto with torch.cat is)%s.", zS,
                 t->f.bSegments ? " (attribution at segment level: the call site of the segments the cache added)" : "");
    } else if (bSite)
        snprintf(zWhere, sizeof zWhere, " %lld %s from this site (%s) made during the phase outlived their batch%s.",
                 (long long)q->count,
                 t->f.bSegments ? (q->count == 1 ? "segment" : "segments") : (q->count == 1 ? "allocation" : "allocations"),
                 zS, t->f.bSegments ? " (attribution at segment level: the call site of the segments the cache added)" : "");
    f->bytes = rise;
    f->count = n;
    if (fill(f, p, vt__strdupf("Memory grows batch by batch during '%s': +%s", p->zName, zA),
             bSeg ? vt__strdupf("The caching allocator added %s of segments during '%s', in %d of its sixteenths, "
                                "above the training peak and kept past their batch: activations or "
                                "outputs are kept from batch to batch (typically a missing torch.no_grad(), or "
                                "outputs stored with their graph).%s",
                                zA, p->zName, n, zWhere)
                  : vt__strdupf("The lowest live memory of each %s of '%s' rose by %s from %s at its "
                                "start: activations or outputs are kept from batch to batch (typically "
                                "a missing torch.no_grad(), or outputs stored with their graph).%s",
                                zUnit, p->zName, zA, zB, zWhere),
             zFixNoGrad) != 0)
        return -1;
    if (bSite || bFrame || iLive >= 0) {
        int iSite = iLive >= 0 ? q->aKept[iLive].site : q->site;
        free(f->zSite);
        f->zSite = vt__strdupf("%s", bFrame ? fr.z : t->sites.a[iSite].zSite);
        f->stackId = bFrame ? fr.stackId : t->sites.a[iSite].stackId;
        if (!f->zSite) return -1;
    }
    return 0;
}

/*
 * The points of a phase's baseline a[0..n) (-1: none) to judge growth on: all of them, or those up to
 * its highest when that comes in the last quarter and the level falls after it: what the phase kept
 * released as it ends (an evaluate() that returns frees the graphs it kept), which is no sign that
 * it did not grow.
 */
static int until_release(const int64_t *a, int n)
{
    int iMax = -1;
    for (int i = 0; i < n; i++)
        if (a[i] >= 0 && (iMax < 0 || a[i] >= a[iMax])) iMax = i;
    return iMax >= 0 && iMax + 1 < n && (iMax + 1) * 4 >= n * 3 ? iMax + 1 : n;
}

/* Growth inside an evaluation below this is info: bounded by the evaluation set and small (predictions and labels
 * kept for the epoch's metric, a few MiB), not memory worth a fix. */
#define SMALL_GROWTH ((int64_t)32 << 20)

/*
 * Whether phase i of t, inferred from kernel names as evaluation, is a training step's forward pass cut short
 * by an out-of-memory error: the attempts of a failure that reached the program meet it and its last attempt
 * lies in the last tenth of it (or after it), where its kernels stop, or the job ended at it. A step that dies
 * in its forward pass has no backward to tell it from an evaluation batch, whether the job then ends or the
 * loop skips the batch and goes on; the failure may have begun earlier (the same request asked again after a
 * release of the cache, its first attempt well inside the phase; cuDNN's workspace probes just before it).
 */
static int cut_short(const struct vt_trace *t, int i)
{
    const struct vt_phase *p = &t->ph.a[i];
    if (!p->zSource || strcmp(p->zSource, "kernels")) return 0;
    if (t->crashTs >= p->start && (i == t->ph.n - 1 || t->ph.a[i + 1].start > t->crashTs)) return 1;
    for (int k = 0; k < t->nFail; k++) {
        const struct vt_oomfail *x = &t->aFail[k];
        int64_t last = x->lastTs < p->end ? x->lastTs : p->end;
        if (!x->bRecovered && x->lastTs >= p->start && x->firstTs <= p->end && (p->end - last) * 10 <= p->end - p->start)
            return 1;
    }
    return 0;
}

/* For each evaluation phase: batch-by-batch growth, memory carried from training, peak above training. */
static int spike_end(void *st, struct vt_result *r, int iTrace)
{
    struct spike *S = st;
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_opts *o = r->pOpts;
    int64_t trainPeak = -1;
    int bBlocks = t->f.bHaveTensors && !t->lc.bTensorDevice;
    if (!S->aPh) return 0;
    for (int i = 0; i < S->nSite; i++)
        if (site_flush(S, i) != 0) return -1;
    for (int i = 0; i < t->ph.n; i++)
        if (t->ph.a[i].kind == VT_PHASE_TRAIN && t->ph.a[i].peak > trainPeak) trainPeak = t->ph.a[i].peak;
    for (int i = 0; i < t->ph.n; i++) {
        const struct vt_phase *p = &t->ph.a[i];
        const struct sphase *q = &S->aPh[i];
        int64_t aB[VT_SLICES + 512], rise = 0, minRise;
        int n = 0, bGrow, bCarried, bCarriedBad, bOom = 0, bAbove, kTop = -1;
        char zA[32], zB[32], zC[32];
        struct vt_finding *f;
        if (p->kind != VT_PHASE_EVAL || p->peak < 0) continue;
        /* a forward pass an OOM cut short has no backward to tell it from training: inferred from kernels, it
         * is no known evaluation, and its memory is the OOM's */
        if (cut_short(t, i)) continue;
        /* an error that reached the program: the allocator's retry after releasing its cache, or cuDNN's smaller
         * workspace, failed nothing (a beam search's growing cache outgrowing the cached segments) */
        for (int k = 0; k < t->nFail; k++)
            bOom |= !t->aFail[k].bRecovered && t->aFail[k].lastTs >= p->start && t->aFail[k].firstTs < p->end;
        bAbove = trainPeak >= 0 && p->peak > trainPeak + trainPeak / 20 && p->peak - trainPeak >= o->minBytes;
        /* batch-by-batch baseline: iterations inside the phase, else its time slices; of the blocks of a
         * framework allocator where the trace holds them inside CUDA's segments (PyTorch's history merged:
         * the segments, a cache, hide what the blocks do) */
        if (by_batches(p))
            for (int k = p->firstIter; k <= p->lastIter; k++) aB[n++] = bBlocks ? t->ph.aIter[k].minTensor : t->ph.aIter[k].minLive;
        else
            for (int k = 0; k < VT_SLICES; k++) aB[n++] = bBlocks ? p->tensorSlice[k] : p->slice[k];
        /* at segment level, as for leaks, only a rise of 5 % of the device peak counts */
        minRise = t->f.bSegments && vt__main_peak(t) / 20 > o->minBytes ? vt__main_peak(t) / 20 : o->minBytes;
        bGrow = vt__trend(aB, until_release(aB, n), minRise, &rise);
        if (!bGrow && !by_batches(p) && (bBlocks ? p->endTensor : p->endLive) >= 0) {
            /* its last sixteenths had no event: they stood at the level it ended at, not at the lowest of
             * the last sixteenth that had one (a batch's memory made in a burst at its start) */
            int k = n;
            while (k > 0 && aB[k - 1] < 0) aB[--k] = bBlocks ? p->endTensor : p->endLive;
            if (k < n) bGrow = vt__trend(aB, until_release(aB, n), minRise, &rise);
        }
        if (!by_batches(p)) /* sixteenths: the highest of those the test judged */
            for (int k = 0, m = until_release(aB, n); k < m; k++)
                if (aB[k] >= 0 && (kTop < 0 || aB[k] >= aB[kTop])) kTop = k;
        if (!bGrow && (!t->f.bSegments || bBlocks) && few_batches_grow(t, p, q, bBlocks, minRise, &rise)) {
            bGrow = 1;
            n = p->nIter;
            kTop = -1;
        }
        if (bGrow) {
            int sev = bOom || (trainPeak > 0 && rise * 10 >= trainPeak) ? VT_SEV_HIGH : VT_SEV_MEDIUM;
            if (rise < SMALL_GROWTH && !bOom) {
                sev = VT_SEV_INFO;
                bGrow = 0; /* not a reason to raise the peak finding either */
            }
            if (grow_finding(r, iTrace, p, q, rise, n, sev, 0, kTop) != 0) return -1;
            if (sev == VT_SEV_INFO) {
                struct vt_finding *g = &r->aFind[r->nFind - 1];
                char *z = vt__strdupf("%s Under 32 MiB in all: bounded by the evaluation set and small (predictions or "
                                      "labels kept for a metric), so this is said, not counted as a problem.",
                                      g->zEvidence);
                if (!z) return -1;
                free(g->zEvidence);
                g->zEvidence = z;
            }
        } else if (t->f.bSegments && bAbove && slices_of_note(q) >= 3 && q->kept >= minRise && !warmed_at_start(q)) {
            /* the cache hides growth until its free blocks run out: segments added in at least
             * three sixteenths of the phase, above the training peak, are growth */
            bGrow = 1;
            if (grow_finding(r, iTrace, p, q, q->kept, slices_of_note(q),
                             bOom || (trainPeak > 0 && q->kept * 10 >= trainPeak) ? VT_SEV_HIGH : VT_SEV_MEDIUM, 1, -1) != 0)
                return -1;
        }
        /* carried over: a problem only when it is most of the phase's memory; the last step's
         * gradients (no larger than the weights, also live) never are; sites: retained findings */
        bCarried = p->carried >= o->minBytes && p->carried * 10 >= p->peak && !t->f.bSegments;
        bCarriedBad = bCarried && p->carried * 2 >= p->peak;
        if (bCarried) {
            f = vt__finding_add(r, iTrace, "validation_spike", bCarriedBad ? VT_SEV_MEDIUM : VT_SEV_INFO);
            if (!f) return -1;
            vt__fmt_bytes(p->carried, zA, sizeof zA);
            vt__fmt_bytes(p->peak, zB, sizeof zB);
            f->bytes = p->carried;
            if (fill(f, p, vt__strdupf("%s carried over from training into '%s'", zA, p->zName),
                     vt__strdupf("At the start of '%s', %s allocated during the last training step was still live "
                                 "and was not used again before the phase began (its peak was %s).%s See the "
                                 "retained findings for the sites.", p->zName, zA, zB,
                                 bCarriedBad ? " It is at least half of the phase's memory."
                                             : " Below half of the phase's memory, this is typically the last "
                                               "step's gradients, held until the next zero_grad()."),
                     "Before evaluating, drop what the last training step left behind: del loss, "
                     "outputs and other step tensors (or keep loss.item()), call "
                     "optimizer.zero_grad(set_to_none=True), then gc.collect() if cycles hold them.") != 0)
                return -1;
        }
        if (bAbove) {
            int sev = bOom ? VT_SEV_HIGH : (bGrow || bCarriedBad) ? VT_SEV_MEDIUM : VT_SEV_INFO;
            f = vt__finding_add(r, iTrace, "validation_spike", sev);
            if (!f) return -1;
            vt__fmt_bytes(p->peak, zA, sizeof zA);
            vt__fmt_bytes(trainPeak, zB, sizeof zB);
            vt__fmt_bytes(p->peak - trainPeak, zC, sizeof zC);
            f->bytes = p->peak - trainPeak;
            f->count = 1;
            if (fill(f, p, vt__strdupf("Evaluation '%s' peaks %s above training (%s vs %s)", p->zName, zC, zA, zB),
                     vt__strdupf("The peak of '%s' (%s) exceeds the highest training peak (%s).%s", p->zName, zA, zB,
                                 sev == VT_SEV_INFO
                                     ? " Memory is flat from batch to batch and little was carried over from "
                                       "training, so this looks like a larger evaluation batch: fine while it fits."
                                     : bOom ? " An out-of-memory error happened in this phase."
                                            : " Memory also grows or is carried over in this phase (see the "
                                              "related findings)."),
                     sev == VT_SEV_INFO ? "If the GPU is close to full, lower the evaluation batch size; make "
                                          "sure evaluation runs under torch.no_grad()."
                                        : zFixNoGrad) != 0)
                return -1;
        }
    }
    return 0;
}

const struct vt_detector vt__detector_spike = {
    "validation_spike", sizeof(struct spike), 1u << VT_EV_END, spike_begin, spike_event, spike_end, spike_free,
};
