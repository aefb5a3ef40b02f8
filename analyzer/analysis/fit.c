/* What would fit: headroom, the memory that grows with the batch, the largest batch, and what each change would save. */
#include "analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * From a device's peak breakdown (breakdown.c): the memory the job needs there is the peak plus
 * what the trace does not hold (the CUDA context: measured where an OOM sampled the device's
 * free memory, else assumed, VT_FIT_CONTEXT). Of it, activations, temporaries (with the batch and
 * outputs a step holds until the next) and the allocator cache in proportion to them grow with
 * the batch; parameters, gradients, optimizer state, libraries' buffers and the context do not.
 * The largest batch scale that fits is (capacity - fixed) / scaling, as a batch size with
 * --batch N; at tensor level that is the first guess of the allocator replayed over the trace's
 * requests at each batch tried (allocsim.c), whose largest batch served replaces it. A request an
 * OOM the job did not recover from failed for is demand too (count_failed; replayed at tensor
 * level), and untraced memory far beyond a context without NVML (VT_CAT_CTXOTHERS) is taken for
 * other processes', not the job's. Docs:
 * docs/analysis.md "What would fit".
 */

/* Append an assumption (printf-style) to f. 0 or -1. */
static int assume(struct vt_fit *f, char *z)
{
    if (!z) return -1;
    if (f->nAssume == (int)(sizeof f->azAssume / sizeof f->azAssume[0])) {
        free(z);
        return 0;
    }
    f->azAssume[f->nAssume++] = z;
    return 0;
}

/* Append a saving (bytes > 0 only) with its assumption (taken over). 0 or -1. */
static int saving(struct vt_fit *f, const char *zKey, const char *zWhat, int64_t bytes, char *zAssume)
{
    if (!zAssume) return -1;
    if (bytes <= 0 || f->nSave == VT_FIT_SAVES) {
        free(zAssume);
        return 0;
    }
    f->aSave[f->nSave].zKey = zKey;
    f->aSave[f->nSave].zWhat = zWhat;
    f->aSave[f->nSave].bytes = bytes;
    f->aSave[f->nSave++].zAssume = zAssume;
    return 0;
}

/* Bytes of category cat in b (every part of it). */
static int64_t cat_bytes(const struct vt_breakdown *b, int cat, int64_t *pCount)
{
    int64_t n = 0, c = 0;
    for (int i = 0; i < b->n; i++)
        if (b->a[i].cat == cat) n += b->a[i].bytes, c += b->a[i].count;
    if (pCount) *pCount = c;
    return n;
}

/* Whether category c is memory the job allocated (what the allocator's cache is in proportion to). */
static int cat_allocated(int c)
{
    return c != VT_CAT_CACHE && c != VT_CAT_CONTEXT && c != VT_CAT_OTHERS && c != VT_CAT_CTXOTHERS &&
           c != VT_CAT_BEFORE && c != VT_CAT_UNKNOWN;
}

/* What of breakdown b grows with the batch: its growing categories, and the allocator's cache (a memory
 * pool's counts as the allocator's) in proportion to what the job allocated. */
static int64_t growing(const struct vt_breakdown *b)
{
    int64_t grow = 0, alloc = 0, cache = cat_bytes(b, VT_CAT_CACHE, NULL) + b->poolCache;
    for (int i = 0; i < b->n; i++) {
        int c = b->a[i].cat;
        if (vt__cat_scales(c)) grow += b->a[i].bytes;
        if (cat_allocated(c)) alloc += b->a[i].bytes;
    }
    if (cache > 0 && alloc > 0) grow += (int64_t)((double)cache * (double)grow / (double)alloc);
    return grow;
}

/* The ranks the job ran on: meta world_size, else the traces given with a rank; 1 when not known. */
static int world_size(const struct vt_result *r, const struct vt_trace *t)
{
    char z[32];
    int n = 0;
    if (t->f.db && vt__meta_get(t->f.db, "world_size", z, sizeof z) == 1 && atoi(z) > 1) return atoi(z);
    for (int i = 0; i < r->nTrace; i++) n += r->aTrace[i].f.zRank[0] != 0;
    return n > 1 ? n : 1;
}

/* The context (and other untraced memory) on device id measured at the last OOM of t that sampled it, -1 when
 * none did; *pAway its part more than a context takes (VT_CAT_CTXOTHERS), 0 none. */
static int64_t measured_context(const struct vt_trace *t, int id, int64_t *pAway)
{
    int64_t v = -1;
    *pAway = 0;
    for (int i = 0; i < t->nOom; i++)
        if (t->aOom[i].device == id && t->aOom[i].bd.n && t->aOom[i].bd.untraced >= 0) {
            v = t->aOom[i].bd.untraced;
            *pAway = cat_bytes(&t->aOom[i].bd, VT_CAT_CTXOTHERS, NULL);
        }
    return v;
}

/*
 * The demand of the failed request on device d that tells most: of each failure the job did not
 * recover from (a recovered one's retry was served, and its demand is in the trace's allocations),
 * what was in use at its judged attempt (its breakdown, with the context ctx where that is not of
 * device used, and a memory pool's cache) and the request that failed. *pNeed that demand, *pGrow
 * what of it grows with the batch (the growing categories then, the cache in proportion, and the
 * request itself), *pReq the request, *piOom the attempt; 0 found, 1 none.
 */
static int oom_demand(const struct vt_trace *t, int id, int64_t ctx, int64_t *pNeed, int64_t *pGrow, int64_t *pReq,
                      int *piOom)
{
    int found = 1;
    *pNeed = *pGrow = *pReq = -1;
    *piOom = -1;
    for (int i = 0; i < t->nFail; i++) {
        const struct vt_oomfail *fl = &t->aFail[i];
        const struct vt_oom *o;
        int64_t need, grow, away;
        if (fl->device != id || fl->bRecovered || fl->requested <= 0 || fl->iJudged < 0 || fl->iJudged >= t->nOom)
            continue;
        o = &t->aOom[fl->iJudged];
        if (o->bd.n <= 0 || o->bd.total < 0) continue;
        grow = growing(&o->bd);
        away = cat_bytes(&o->bd, VT_CAT_CTXOTHERS, NULL); /* most likely other processes': not the job's */
        need = o->bd.total - away + o->bd.poolCache + (o->bd.untraced >= 0 && away == 0 ? 0 : ctx) + fl->requested;
        if (need > *pNeed) {
            *pNeed = need;
            *pGrow = grow + fl->requested;
            *pReq = fl->requested;
            *piOom = fl->iJudged;
            found = 0;
        }
    }
    return found;
}

/*
 * Where an unrecovered failure needed more than the peak (the peak is what was served; the request
 * that failed was demand too): f's need, its growing part and the largest batch from that demand
 * (the least of it and the estimate so far), with its assumption. 0 or -1.
 */
static int count_failed(const struct vt_trace *t, const struct vt_device *d, struct vt_fit *f)
{
    int64_t need, grow, req, fixed;
    int iOom;
    double scale = -1;
    char zB[32], zC[32], zD[32];
    if (oom_demand(t, d->id, f->context > 0 ? f->context : VT_FIT_CONTEXT, &need, &grow, &req, &iOom) != 0) return 0;
    vt__fmt_bytes(req, zB, sizeof zB);
    vt__fmt_bytes(need - req, zC, sizeof zC);
    vt__fmt_bytes(need, zD, sizeof zD);
    if (assume(f, vt__strdupf("the request that failed (%s, with %s in use) is counted as demand then, growing "
                              "with the batch%s: the job needed %s there (a recovered failure's retry is in the "
                              "trace and is not counted again)",
                              zB, zC, f->bReplayed ? " (replayed at that moment)" : "", zD)) != 0)
        return -1;
    if (need <= f->need) return 0;
    fixed = need - grow;
    f->need = need;
    f->scaling = grow;
    f->fixed = fixed;
    f->headroom = f->capacity > 0 ? f->capacity - need : 0;
    if (f->bReplayed) return 0; /* the replay served the request too */
    if (f->capacity > 0 && grow > 0) scale = f->capacity > fixed ? (double)(f->capacity - fixed) / (double)grow : 0;
    if (scale >= 0 && (f->maxScale < 0 || scale < f->maxScale)) {
        f->maxScale = scale;
        f->maxBatch = f->batch > 0 ? (int64_t)floor((double)f->batch * scale + 1e-9) : -1;
    }
    return 0;
}

/*
 * At segment level the segments that grow hold more than what grows: the allocator's cache (free
 * blocks it would reuse or release under pressure), and optimizer state or gradients made inside
 * segments a forward or backward pass reserved. One trace at one batch size cannot tell how much,
 * so scaling all of it (maxScale) over-counts: the largest batch is at least that, a lower bound.
 * The upper estimate scales only the segments reserved in the first training step's forward pass
 * (b->segFirstFwd: no gradients or optimizer state exist yet, so they are what the forward pass
 * needs with its cache), the rest as traced: it over-states where the backward pass's temporaries
 * or later steps' activations also need new memory. Into f with the assumption. 0 or -1.
 */
/* what segment level cannot tell, the start of every assumption below */
#define SEG_HOLD                                                                                                  \
    "segment level: the segments that grow also hold the allocator's cache and may hold optimizer state or "      \
    "gradients made inside them"
static int range_segments(struct vt_fit *f, const struct vt_breakdown *b)
{
    char zB[32], zU[96] = "";
    if (!b->bSegment || f->maxScale < 0) return 0;
    f->bUpperBound = f->capacity > 0 && f->headroom < 0;
    if (f->bUpperBound) /* the batch must shrink: the cache and state in them need not */
        return assume(f, vt__strdupf("%s", SEG_HOLD ", which a smaller batch need not shrink, so the largest batch "
                                           "that fits is at most this (one trace at one batch size cannot tell how "
                                           "much less; merge PyTorch's allocation history for a point)"));
    f->bLowerBound = 1;
    if (b->segFirstFwd > 0 && f->capacity > 0 && f->headroom > 0) {
        f->upScale = 1.0 + (double)f->headroom / (double)b->segFirstFwd;
        if (f->upScale < f->maxScale) f->upScale = f->maxScale;
        f->upBatch = f->batch > 0 ? (int64_t)floor((double)f->batch * f->upScale + 1e-9) : -1;
        if (f->upBatch >= 0) snprintf(zU, sizeof zU, "batch %lld", (long long)f->upBatch);
        else snprintf(zU, sizeof zU, "%.2fx the traced batch", f->upScale);
    }
#define SEG_GROW SEG_HOLD ", which a larger batch needs no more of"
    if (f->upScale < 0)
        return assume(f, vt__strdupf("%s", SEG_GROW "; one trace at one batch size cannot tell how much, so the "
                                           "largest batch is at least this (no first forward pass in the trace to "
                                           "bound it above; merge PyTorch's allocation history for a point)"));
    return assume(f, vt__strdupf(SEG_GROW ", so the largest batch is at least this; at most about %s if only the %s "
                                 "of segments the first step's forward pass reserved grow (an estimate: the "
                                 "backward pass's temporaries may need more; merge PyTorch's allocation history "
                                 "for a point)",
                                 zU, vt__fmt_bytes(b->segFirstFwd, zB, sizeof zB)));
#undef SEG_GROW
#undef SEG_HOLD
}

/* The fragmentation of PyTorch's caching allocator seen on a device (frag_seen). */
struct frag {
    int64_t bytes;                  /* the larger of oomCache and the pieces' bytes; 0 none seen */
    int64_t oomCache;               /* the most cache an OOM judged fragmentation found in the allocator's segments */
    const struct vt_breakdown *bd;  /* where the most free pieces were seen (the peak's, an OOM's), NULL none */
    int bAtOom;                     /* bd is an OOM's */
};

/*
 * The fragmentation of PyTorch's caching allocator seen on device d of t into *p: the cache an OOM
 * there judged fragmentation found in the allocator's segments (a cudaMallocAsync pool's is not:
 * expandable segments do not apply to it), and the free pieces too small for the request in
 * segments of its pool holding blocks, at the peak or at an OOM (their breakdowns' fragBytes),
 * the most of them.
 */
static void frag_seen(const struct vt_trace *t, const struct vt_device *d, struct frag *p)
{
    memset(p, 0, sizeof *p);
    if (d->bd.fragBytes > 0) p->bd = &d->bd;
    for (int i = 0; i < t->nOom; i++) {
        const struct vt_oom *o = &t->aOom[i];
        /* the cache part less a pool's (in it where the breakdown is of device used) */
        int64_t seg = cat_bytes(&o->bd, VT_CAT_CACHE, NULL) - (o->bd.untraced >= 0 ? o->poolCached : 0);
        if (o->device != d->id) continue;
        if (o->zVerdict && !strncmp(o->zVerdict, "fragmentation", 13) && seg > p->oomCache) p->oomCache = seg;
        if (o->bd.fragBytes > 0 && (!p->bd || o->bd.fragBytes > p->bd->fragBytes)) p->bd = &o->bd, p->bAtOom = 1;
    }
    p->bytes = p->bd && p->bd->fragBytes > p->oomCache ? p->bd->fragBytes : p->oomCache;
}

/*
 * At tensor level: the largest batch from the allocator replayed over the trace's requests
 * (allocsim.c) in the memory the allocators may use (capacity less the context and whatever else
 * the trace does not hold: device used beyond it, memory before the trace, the unknown), from the
 * proportional estimate as its first guess; into f with its assumption. 1 replayed, 0 not (the
 * proportional estimate stands; where the replay could not be made, an assumption line says why),
 * -1 out of memory.
 */
static int replay_fit(const struct vt_trace *t, const struct vt_device *d, const struct vt_fsconfig *pCfg,
                      const struct frag *fr, struct vt_fit *f)
{
    const struct vt_breakdown *b = &d->bd;
    struct vt_fsconfig cfg = *pCfg;
    struct vt_fsresult res;
    int64_t limit;
    char zB[32], zC[32];
    const char *zClimb;
    char zOpen[200] = "";
    int rc;
    if (b->bSegment || f->capacity <= 0 || f->scaling <= 0) return 0;
    cfg.poolChunk = d->poolGrowMin;
    limit = f->capacity - f->context - (b->untraced > 0 ? b->untraced - cat_bytes(b, VT_CAT_CTXOTHERS, NULL) : 0) -
            cat_bytes(b, VT_CAT_BEFORE, NULL) - cat_bytes(b, VT_CAT_UNKNOWN, NULL);
    rc = vt__fs_fit(t, d->id, &cfg, limit, f->batch, f->maxScale, &res);
    if (rc < 0) return -1;
    if (rc == 1)
        return assume(f, vt__strdupf("the trace holds more than %lld allocations: the allocator is not replayed",
                                     (long long)VT_FS_MAX)) == 0 ? 0 : -1;
    if (rc == 3)
        return assume(f, vt__strdupf("the allocator's model does not serve the traced batch in %s (its level "
                                     "reaches %s): not replayed",
                                     vt__fmt_bytes(limit, zB, sizeof zB),
                                     vt__fmt_bytes(res.peakAtOne, zC, sizeof zC))) == 0 ? 0 : -1;
    if (rc != 0) return 0;
    f->maxScale = res.maxScale;
    f->maxBatch = res.maxBatch;
    f->bReplayed = 1;
    if (res.bBounded && res.hiScale > 0) { /* the work bound left a bracket: the batch that ran, and below the one that failed */
        f->bLowerBound = 1;
        f->upBatch = res.hiBatch > 0 ? res.hiBatch - 1 : -1;
        f->upScale = res.hiBatch > 0 && f->batch > 0 ? (double)f->upBatch / (double)f->batch : res.hiScale;
    }
    vt__fmt_bytes(limit, zB, sizeof zB);
    if (res.bBounded && res.hiBatch > 0) /* the work bound left a bracket: say so, and its other end */
        snprintf(zOpen, sizeof zOpen, " (an estimate: the replays were bounded at %lld lifetimes replayed in all; the "
                 "first batch that fails is at most %lld)", (long long)res.workBound, (long long)res.hiBatch);
    else if (res.bBounded && res.hiScale > 0)
        snprintf(zOpen, sizeof zOpen, " (an estimate: the replays were bounded at %lld lifetimes replayed in all; the "
                 "first scale that fails is at most %.3fx)", (long long)res.workBound, res.hiScale);
    else if (res.bBounded)
        snprintf(zOpen, sizeof zOpen, " (an estimate: the replays were bounded at %lld lifetimes replayed in all "
                 "before one failed: at least this)", (long long)res.workBound);
    else if (res.bOpen)
        snprintf(zOpen, sizeof zOpen, "%s", " (the replays ran out: at least this)");
    zClimb = res.bBelow ? "; the largest batch served below the traced one, which failed (bisected)"
             : res.bFine ? "; the first batch that fails above the traced one, less one (tried in steps of 2.5 %, then "
                         "bisected: fragmentation can make a larger batch run again)"
                       : "; the largest batch served (grown by quarters: a failing batch below it may be missed)";
    if (res.bPool) {
        char zK[32];
        vt__fmt_bytes(cfg.poolChunk > (2 << 20) ? cfg.poolChunk : 2 << 20, zK, sizeof zK);
        rc = assume(f, vt__strdupf("activations and temporaries scaled to each batch tried, the rest as traced, "
                                   "replayed through the cudaMallocAsync pool (chunks of at least %s as the trace's "
                                   "pool grew, best fit, free chunks released before a request fails%s) in the %s "
                                   "left beside the context; one stream%s%s",
                                   zK, res.bCached ? "; PyTorch's caching allocator for its blocks" : "", zB, zClimb,
                                   zOpen));
    } else if (cfg.bExpandable) {
        rc = assume(f, vt__strdupf("activations and temporaries scaled to each batch tried, the rest as traced, "
                                   "replayed through PyTorch's caching allocator with expandable_segments:True as "
                                   "the trace's settings say (512 B rounding, one segment per pool growing by pages "
                                   "of 2 MiB (small) and 20 MiB (large), free pages unmapped before a request fails: "
                                   "no fragmentation beyond a page per pool) in the %s left beside the context; one "
                                   "stream%s%s",
                                   zB, zClimb, zOpen));
    } else {
        rc = assume(f, vt__strdupf("activations and temporaries scaled to each batch tried, the rest as traced, "
                                   "replayed through PyTorch's caching allocator (512 B rounding, 2 MiB and 20 MiB "
                                   "segments, best fit with splitting, cached segments released and the request "
                                   "retried before it fails%s) in the %s left beside the context; one stream%s%s",
                                   cfg.maxSplit > 0 ? ", max_split_size as set" : "", zB, zClimb,
                                   zOpen));
    }
    if (rc == 0 && res.bCached && !cfg.bExpandable && fr->bytes > 0) {
        /* fragmentation seen: what expandable segments would change, replayed */
        struct vt_fsconfig cfgE = cfg;
        struct vt_fsresult resE;
        struct vt_fsneed needB, needE;
        int rcB, rcE;
        cfgE.bExpandable = 1;
        rcB = vt__fs_need(t, d->id, &cfg, limit, &needB);
        rcE = rcB == 0 ? vt__fs_need(t, d->id, &cfgE, limit, &needE) : rcB;
        if (rcB < 0 || rcE < 0) return -1;
        if (rcE == 0 && vt__fs_fit(t, d->id, &cfgE, limit, f->batch, f->maxScale, &resE) < 0) return -1;
        if (rcE == 0) {
            f->expandSave = needB.need > needE.need ? needB.need - needE.need : 0;
            if (needB.bBounded || needE.bBounded) /* each figure within its bracket */
                f->expandSlack = needB.slack > needE.slack ? needB.slack : needE.slack;
            f->expandScale = resE.maxScale;
            f->expandBatch = resE.maxBatch;
        }
    }
    return rc == 0 ? 1 : -1;
}

/*
 * The saving from expandable_segments:True on device d of t, offered only where fragmentation of
 * PyTorch's caching allocator is seen (fr, docs/analysis.md "What would fit"): an OOM there judged
 * fragmentation with the allocator's segments holding cache (not a cudaMallocAsync pool's: the
 * setting does not apply to it), or, with the blocks inside the segments, free pieces at the peak
 * or at an OOM in segments of the request's pool that hold live blocks, each too small for the
 * request then (the breakdowns' fragBytes). How much: where the allocator was replayed both ways
 * and differs, the replay's difference; else what was seen (an upper bound: the replay's segments
 * are the model's, not the job's). Never where the trace says the job ran with them (cfg). 0 or -1.
 */
static int expandable_saving(const struct vt_fsconfig *cfg, const struct frag *fr, struct vt_fit *f)
{
    const struct vt_breakdown *b = fr->bd;
    const char *zWhere = fr->bAtOom ? "at an OOM" : "at the peak";
    char zB[32], zC[32], zD[32], zE[96] = "", zF[160];
    if (cfg->bExpandable || fr->bytes <= 0) return 0; /* it ran with them; none seen */
    if (b) snprintf(zF, sizeof zF, "free pieces too small for the request in segments of its pool holding blocks %s",
                    zWhere);
    if (f->expandSave > 0) { /* replayed both ways: the difference, not what was seen (none: what was seen stands) */
        vt__fmt_bytes(f->expandSave, zB, sizeof zB);
        if (f->expandBatch > 0 && f->maxBatch > 0)
            snprintf(zE, sizeof zE, "batch %lld instead of %lld", (long long)f->expandBatch, (long long)f->maxBatch);
        else if (f->expandScale > 0)
            snprintf(zE, sizeof zE, "%.2fx the traced batch instead of %.2fx", f->expandScale, f->maxScale);
        if (f->expandSlack > 0) vt__fmt_bytes(f->expandSlack, zC, sizeof zC);
        return saving(f, "expandable_segments", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", f->expandSave,
                      vt__strdupf("fragmentation is seen (%s); the caching allocator, replayed over the trace's "
                                  "requests with expandable segments (2 and 20 MiB pages, free pages unmapped under "
                                  "pressure) and without, serves the traced batch in %s less memory%s%s%s, and %s",
                                  fr->oomCache > 0 ? "an OOM here was judged fragmentation" : zF,
                                  zB, f->expandSlack > 0 ? " (an estimate: the replays were bounded, each need within " : "",
                                  f->expandSlack > 0 ? zC : "", f->expandSlack > 0 ? ")" : "",
                                  zE[0] ? zE : "an unknown largest batch"));
    }
    if (!b || fr->oomCache >= b->fragBytes)
        return saving(f, "expandable_segments", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", fr->oomCache,
                      vt__strdupf("an OOM here was fragmentation: expandable segments let the %s the allocator held "
                                  "cached serve the request; it is an upper bound",
                                  vt__fmt_bytes(fr->oomCache, zB, sizeof zB)));
    if (b->fragReq > 0) vt__fmt_bytes(b->fragReq, zD, sizeof zD);
    return saving(f, "expandable_segments", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", b->fragBytes,
                  vt__strdupf("%s %s lay free in %lld piece%s inside %lld segment%s of the request's pool that also "
                              "held live blocks, each piece %s%s%s: the allocator could neither use it for that nor "
                              "release it, and expandable segments unmap such pages; it is an upper bound (of %s "
                              "reserved, not allocated)",
                              zWhere, vt__fmt_bytes(b->fragBytes, zB, sizeof zB), (long long)b->fragPieces,
                              b->fragPieces == 1 ? "" : "s", (long long)b->fragSegs, b->fragSegs == 1 ? "" : "s",
                              b->fragReq > 0 ? "smaller than the request then (" : "of at least 512 B (the request "
                                                                                  "then unknown",
                              b->fragReq > 0 ? zD : "", ")",
                              vt__fmt_bytes(cat_bytes(b, VT_CAT_CACHE, NULL), zC, sizeof zC)));
}

/* The fit of device d of trace t (its breakdown made). 0 or -1. */
static int fit_device(const struct vt_result *r, const struct vt_trace *t, struct vt_device *d)
{
    const struct vt_opts *o = r->pOpts;
    const struct vt_breakdown *b = &d->bd;
    struct vt_fit *f = &d->fit;
    struct vt_fsconfig cfg;
    struct frag fr;
    int64_t act, actCount, ck, nKeep, grow, opt, ctx, away, awayOom = 0, world = world_size(r, t);
    int rc;
    char zB[32], zC[32], zD[32], zE[32];
    vt__fit_clear(f);
    f->bDone = 1;
    f->capacity = o->fitMemory > 0 ? o->fitMemory : d->totalBytes > 0 ? d->totalBytes : -1;
    f->batch = o->batch > 0 ? o->batch : -1;
    grow = growing(b);
    /* what the trace does not hold */
    away = cat_bytes(b, VT_CAT_CTXOTHERS, NULL);
    ctx = b->untraced >= 0 ? 0 : measured_context(t, d->id, &awayOom);
    if (away > 0 || awayOom > 0) { /* far more than a context: most likely other processes', which may be gone */
        f->context = VT_FIT_CONTEXT;
        f->bContextAssumed = 1;
    } else if (b->untraced >= 0) {
        f->context = 0; /* the breakdown is of device used: the context is in it */
    } else if (ctx >= 0) {
        f->context = ctx;
        if (assume(f, vt__strdupf("the CUDA context and other untraced memory (%s) as measured at the OOM",
                                  vt__fmt_bytes(ctx, zB, sizeof zB))) != 0)
            return -1;
    } else {
        f->context = VT_FIT_CONTEXT;
        f->bContextAssumed = 1;
        if (assume(f, vt__strdupf("a CUDA context of %s (no free memory sampled; other processes not counted)",
                                  vt__fmt_bytes(VT_FIT_CONTEXT, zB, sizeof zB))) != 0)
            return -1;
    }
    f->need = b->total - away + b->poolCache + f->context;
    f->scaling = grow;
    f->fixed = f->need - grow;
    f->headroom = f->capacity > 0 ? f->capacity - f->need : 0;
    f->maxScale = -1;
    f->maxBatch = -1;
    if (f->capacity > 0 && grow > 0 && f->capacity > f->fixed) {
        f->maxScale = (double)(f->capacity - f->fixed) / (double)grow;
        if (f->batch > 0) f->maxBatch = (int64_t)floor((double)f->batch * f->maxScale + 1e-9);
    }
    vt__fs_config(t, &cfg);
    cfg.fitWork = o->fitWork;
    frag_seen(t, d, &fr);
    if ((rc = replay_fit(t, d, &cfg, &fr, f)) < 0) return -1;
    if (count_failed(t, d, f) != 0) return -1;
    if ((away > 0 || awayOom > 0) &&
        assume(f, vt__strdupf("the %s the device had in use beyond the traced memory is more than a CUDA context "
                              "takes (at most %s): most likely other processes', which a run alone on the device "
                              "does not meet; not counted, a CUDA context of %s in its place (if it stays, the job "
                              "needs %s)",
                              vt__fmt_bytes(away > 0 ? away : awayOom, zB, sizeof zB),
                              vt__fmt_bytes(VT_CONTEXT_MAX, zC, sizeof zC),
                              vt__fmt_bytes(VT_FIT_CONTEXT, zD, sizeof zD),
                              vt__fmt_bytes(f->need - VT_FIT_CONTEXT + (away > 0 ? away : awayOom), zE,
                                            sizeof zE))) != 0)
        return -1;
    if (rc == 0 && b->poolCache > 0 &&
        assume(f, vt__strdupf("the memory pool's %s reserved beyond the live peak (cudaMallocAsync) is needed too; "
                              "how the pool fragments at a larger batch cannot be told from one batch size (it may "
                              "be trimmed away, or grow faster than the batch)",
                              vt__fmt_bytes(b->poolCache, zB, sizeof zB))) != 0)
        return -1;
    if (rc == 0 && assume(f, vt__strdupf("%s", "activations and temporaries grow in proportion to the batch, the "
                                               "allocator cache with them; parameters, gradients, optimizer state, "
                                               "library buffers and the unknown do not; the peak stays at the same "
                                               "point of the step")) != 0)
        return -1;
    if (range_segments(f, b) != 0) return -1;
    /* what each change would save at this peak */
    act = cat_bytes(b, VT_CAT_ACT, &actCount) + cat_bytes(b, VT_CAT_TRANSIENT, NULL);
    if (saving(f, "bf16_activations", "bf16/fp16 activations (autocast)", act / 2,
               vt__strdupf("the %s of activations%s are 32-bit floats now and 16-bit under autocast (nothing if they "
                           "already are)", vt__fmt_bytes(act, zB, sizeof zB),
                           cat_bytes(b, VT_CAT_TRANSIENT, NULL) > 0 ? " (with the temporaries not told apart from them)"
                                                                    : "")) != 0)
        return -1;
    /* a checkpoint every k = sqrt(n) (rounded) of n activations alike keeps the ceil(n/k) checkpoints and one
     * stretch of k recomputed at a time: the sentence and the figure are of that one plan */
    act = cat_bytes(b, VT_CAT_ACT, &actCount);
    ck = actCount >= 4 ? (int64_t)floor(sqrt((double)actCount) + 0.5) : 0;
    nKeep = ck > 0 ? (actCount + ck - 1) / ck + ck : 0;
    if (actCount >= 4 && nKeep < actCount &&
        saving(f, "activation_checkpointing", "activation checkpointing",
               (int64_t)((double)act * (double)(actCount - nKeep) / (double)actCount),
               vt__strdupf("the %lld activations kept at the peak are alike in size and a checkpoint every %lld of them "
                           "keeps %lld of the %lld (the %lld checkpoints and the %lld of one stretch recomputed at a "
                           "time; the forward pass runs a second time: about a third more compute)",
                           (long long)actCount, (long long)ck, (long long)nKeep, (long long)actCount,
                           (long long)(nKeep - ck), (long long)ck)) != 0)
        return -1;
    if (saving(f, "zero_grad_set_to_none", "optimizer.zero_grad(set_to_none=True) before the forward pass",
               b->gradAvoidable,
               vt__strdupf("%s", "the gradients held at this forward-pass peak are the last step's, kept by "
                                 "zero_grad(set_to_none=False) or no zero_grad before the forward")) != 0)
        return -1;
    if (expandable_saving(&cfg, &fr, f) != 0) return -1;
    opt = cat_bytes(b, VT_CAT_OPT, NULL);
    if (world > 1 &&
        saving(f, "shard_optimizer_state", "optimizer state sharded over the ranks (ZeRO-1, FSDP)",
               opt - opt / world,
               vt__strdupf("each of the %lld ranks keeps 1/%lld of the optimizer state (parameters and gradients "
                           "stay whole)",
                           (long long)world, (long long)world)) != 0)
        return -1;
    return 0;
}

int vt__fit(struct vt_result *r, int iTrace)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    for (int i = 0; i < t->tl.nDev; i++) {
        struct vt_device *d = &t->tl.aDev[i];
        vt__fit_clear(&d->fit);
        if (d->id >= 0 && d->bd.n > 0 && fit_device(r, t, d) != 0) return -1;
    }
    vt__fs_free(t); /* the replay's requests: needed no more */
    return 0;
}

void vt__fit_clear(struct vt_fit *f)
{
    for (int i = 0; i < f->nAssume; i++) free(f->azAssume[i]);
    for (int i = 0; i < f->nSave; i++) free(f->aSave[i].zAssume);
    memset(f, 0, sizeof *f);
    f->maxScale = -1;
    f->maxBatch = f->batch = f->expandSave = f->expandBatch = f->upBatch = -1;
    f->expandScale = f->upScale = -1;
    f->expandSlack = 0;
}
