/* Detector: retained references: memory idle long after its last use, or held across an evaluation phase. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

/* Idle lifetimes of one site freed together (each within 1 ms of the one before), not yet judged. */
struct rburst {
    int64_t count, bytes, maxNs, firstAlloc, lastAlloc, lastFree;
    int firstIter, lastIter;  /* the iterations they were made in (vt__iter_at), -1 none */
};

/* What the detector keeps per call site. */
struct rsite {
    int64_t idleCount, idleBytes, idleMaxNs, idleFirstTs, idleLastTs;
    struct rburst burst;
    int64_t crossCount, crossBytes, crossFirstTs, crossLastTs;
    int crossPhase;
};

struct retained {
    struct rsite *a;        /* by site index */
    int n;
    int64_t idleNs;         /* idle threshold: 10 median iterations, else 10 % of the trace */
};


/* Append the retained findings of one site (or of the sites without a recorded stack, merged) from s. 0 or -1. */
static int emit_site(struct vt_result *r, int iTrace, const struct retained *R, const struct rsite *s, int64_t stackId,
                     const char *zSite)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_opts *o = r->pOpts;
    int64_t peak = vt__main_peak(t);
    char zB[32], zI[32], zT[32];
    struct vt_finding *f;
    if (s->crossCount > 0 && s->crossBytes >= o->minBytes) {
        const struct vt_phase *e = &t->ph.a[s->crossPhase];
        f = vt__finding_add(r, iTrace, "retained",
                            e->peak > 0 && s->crossBytes * 2 >= e->peak ? VT_SEV_HIGH : VT_SEV_MEDIUM);
        if (!f) return -1;
        vt__fmt_bytes(s->crossBytes, zB, sizeof zB);
        f->bytes = s->crossBytes;
        f->count = s->crossCount;
        f->firstTs = s->crossFirstTs;
        f->lastTs = s->crossLastTs;
        f->stackId = stackId;
        snprintf(f->zPhase, sizeof f->zPhase, "%s", e->zName);
        f->zSite = vt__strdupf("%s", zSite);
        f->zTitle = vt__strdupf("%s from training held through evaluation '%s' (%lld allocation%s)", zB, e->zName,
                                (long long)s->crossCount, s->crossCount == 1 ? "" : "s");
        f->zEvidence = vt__strdupf(
            "%lld allocation%s (%s) made during training were last used before '%s' started and "
            "stayed allocated through it without being used%s.",
            (long long)s->crossCount, s->crossCount == 1 ? "" : "s", zB, e->zName,
            s->crossLastTs >= t->f.t1 ? " (until the end of the trace)" : "");
        f->zFix = vt__strdupf(
            "A reference from the training step outlives it (typically loss, outputs or a "
            "batch kept in a variable or list). del them at the end of the step or keep "
            "loss.item(); call optimizer.zero_grad(set_to_none=True); run validation under "
            "torch.no_grad().");
        if (!f->zTitle || !f->zEvidence || !f->zFix || !f->zSite) return -1;
    }
    if (s->idleCount > 0 && s->idleBytes >= o->minBytes) {
        f = vt__finding_add(r, iTrace, "retained", peak > 0 && s->idleBytes * 10 >= peak ? VT_SEV_MEDIUM : VT_SEV_LOW);
        if (!f) return -1;
        vt__fmt_bytes(s->idleBytes, zB, sizeof zB);
        vt__fmt_ns(s->idleMaxNs, zI, sizeof zI);
        vt__fmt_ns(R->idleNs, zT, sizeof zT);
        f->bytes = s->idleBytes;
        f->count = s->idleCount;
        f->firstTs = s->idleFirstTs;
        f->lastTs = s->idleLastTs;
        f->stackId = stackId;
        f->zSite = vt__strdupf("%s", zSite);
        f->zTitle = vt__strdupf("%s held idle long after last use (%lld allocation%s, up to %s)", zB,
                                (long long)s->idleCount, s->idleCount == 1 ? "" : "s", zI);
        f->zEvidence = vt__strdupf(
            "%lld allocation%s from this site stayed allocated for up to %s after their last use "
            "(threshold %s, and at least 60%% of their lifetime) before being freed.",
            (long long)s->idleCount, s->idleCount == 1 ? "" : "s", zI, zT);
        f->zFix = vt__strdupf(
            "Drop the reference right after the last use (del tensor, or let it go out of "
            "scope); do not keep intermediate tensors on self or in lists; if a reference "
            "cycle keeps it, gc.collect() releases it.");
        if (!f->zTitle || !f->zEvidence || !f->zFix || !f->zSite) return -1;
    }
    return 0;
}

/* Add what site entry b holds to a (the sites without a recorded stack, merged). */
static void rsite_merge(struct rsite *a, const struct rsite *b)
{
    a->idleCount += b->idleCount;
    a->idleBytes += b->idleBytes;
    if (b->idleMaxNs > a->idleMaxNs) a->idleMaxNs = b->idleMaxNs;
    if (b->idleFirstTs >= 0 && (a->idleFirstTs < 0 || b->idleFirstTs < a->idleFirstTs)) a->idleFirstTs = b->idleFirstTs;
    if (b->idleLastTs > a->idleLastTs) a->idleLastTs = b->idleLastTs;
    a->crossCount += b->crossCount;
    a->crossBytes += b->crossBytes;
    if (b->crossFirstTs >= 0 && (a->crossFirstTs < 0 || b->crossFirstTs < a->crossFirstTs)) a->crossFirstTs = b->crossFirstTs;
    if (b->crossLastTs > a->crossLastTs) a->crossLastTs = b->crossLastTs;
    if (b->crossPhase >= 0 && (a->crossPhase < 0 || b->crossPhase < a->crossPhase)) a->crossPhase = b->crossPhase;
}

/*
 * Judge the burst of idle lifetimes site s freed together: four or more allocations made in four
 * iterations or more (without iterations: over three tenths of the idle threshold, three median
 * iterations' worth) and released at once are a collection the
 * program kept until it was done with it (embeddings cached across a step's micro-batches, a list
 * emptied at the step), not references it forgot: their cost is their growth within the step, which
 * the leak detector judges. Anything else counts as idle.
 */
static void burst_flush(const struct retained *R, struct rsite *s)
{
    struct rburst *b = &s->burst;
    if (b->count == 0) return;
    if (!(b->count >= 4 && (b->firstIter >= 0 ? b->lastIter - b->firstIter >= 3
                                              : b->lastAlloc - b->firstAlloc >= R->idleNs / 10 * 3))) {
        s->idleCount += b->count;
        s->idleBytes += b->bytes;
        if (b->maxNs > s->idleMaxNs) s->idleMaxNs = b->maxNs;
        if (s->idleFirstTs < 0 || b->firstAlloc < s->idleFirstTs) s->idleFirstTs = b->firstAlloc;
        if (b->lastFree > s->idleLastTs) s->idleLastTs = b->lastFree;
    }
    memset(b, 0, sizeof *b);
}

/* Whether trace iTrace already has a growth (leak) finding at zSite, at low or above: the same memory's cause. */
static int leak_at(const struct vt_result *r, int iTrace, const char *zSite)
{
    for (int k = 0; k < r->nFind; k++) {
        const struct vt_finding *f = &r->aFind[k];
        if (f->trace == iTrace && f->severity >= VT_SEV_LOW && !strcmp(f->zKind, "leak") && f->zSite &&
            !strcmp(f->zSite, zSite))
            return 1;
    }
    return 0;
}

/*
 * Retained findings per site (idle after last use; held through an evaluation phase). One root
 * cause, one finding: the sites without a recorded stack (one per allocation size: with PyTorch's
 * history, the autograd engine's allocations, gradients among them) are reported together, and a
 * site whose memory the leak detector already reports as growing is not reported again.
 */
static int retained_end(void *st, struct vt_result *r, int iTrace)
{
    struct retained *R = st;
    struct vt_trace *t = &r->aTrace[iTrace];
    struct rsite u;
    int nU = 0, iU = -1;
    if (t->f.bSegments) return 0; /* a cache holds segments idle by design */
    for (int i = 0; i < R->n; i++) burst_flush(R, &R->a[i]);
    memset(&u, 0, sizeof u);
    u.idleFirstTs = u.crossFirstTs = u.crossPhase = -1;
    for (int i = 0; i < t->sites.n && i < R->n; i++) {
        const struct vt_site *site = &t->sites.a[i];
        const struct rsite *s = &R->a[i];
        if (s->idleCount == 0 && s->crossCount == 0) continue;
        if (site->stackId < 0) {
            rsite_merge(&u, s);
            nU++;
            iU = i;
            continue;
        }
        if (leak_at(r, iTrace, site->zSite)) continue;
        if (emit_site(r, iTrace, R, s, site->stackId, site->zSite) != 0) return -1;
    }
    if (nU > 0) {
        char zSite[96];
        if (nU == 1) snprintf(zSite, sizeof zSite, "%s", t->sites.a[iU].zSite);
        else snprintf(zSite, sizeof zSite, "site not recorded (%d allocation sizes)", nU);
        if (emit_site(r, iTrace, R, &u, -1, zSite) != 0) return -1;
    }
    return 0;
}

/* The idle threshold: 10 median iterations, else 10 % of the trace. */
static int retained_begin(void *st, const struct vt_trace *t, const struct vt_opts *o)
{
    struct retained *R = st;
    int64_t aD[64], n = 0, dur = t->f.t1 - t->f.t0, th;
    (void)o;
    for (int i = 0; i < t->ph.nIter && n < 64; i++) aD[n++] = t->ph.aIter[i].end - t->ph.aIter[i].start;
    if (n == 0) {
        R->idleNs = dur / 10 > 0 ? dur / 10 : 1;
        return 0;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && aD[j - 1] > aD[j]; j--) {
            int64_t x = aD[j];
            aD[j] = aD[j - 1];
            aD[j - 1] = x;
        }
    th = aD[n / 2] < INT64_MAX / 10 ? 10 * aD[n / 2] : INT64_MAX; /* no overflow on absurd gaps */
    R->idleNs = th > 0 ? th : 1;
    return 0;
}

/*
 * Whether l is state a training phase keeps: made before the phase, possibly used in it (its use
 * bound reaches the phase) and held to its end. The step may use such memory at any iteration
 * (weights, buffers, experts a router picks rarely): its idle spells are no retained reference.
 * Likewise memory made in the phase before its last iteration and possibly used in that iteration.
 */
static int phase_state(const struct vt_trace *t, const struct vt_life *l)
{
    for (int k = 0; k < t->ph.n; k++) {
        const struct vt_phase *p = &t->ph.a[k];
        if (p->kind == VT_PHASE_TRAIN && l->allocTs <= p->start && l->useBound >= p->start &&
            (l->freeTs < 0 || l->freeTs >= p->end))
            return 1;
    }
    /* made in a training phase before its last iteration and possibly used in that one: state the
     * training kept to its end (optimizer state, a buffer of every step), idle only after training ended
     * (an evaluation, the teardown), as every state is once its user stops */
    if (l->phase >= 0 && l->phase < t->ph.n && t->ph.a[l->phase].kind == VT_PHASE_TRAIN && t->ph.a[l->phase].lastIter >= 0) {
        const struct vt_iter *it = &t->ph.aIter[t->ph.a[l->phase].lastIter];
        if (l->allocTs < it->start && l->useBound >= it->start) return 1;
    }
    return 0;
}

/*
 * A lifetime ended: idle long after its last use before being freed, or allocated in training
 * and held unused through an evaluation phase (vt__unjudged_hold says when neither can be said).
 * Uses are judged from l->useBound: the latest time the trace allows it to have been used.
 */
static int retained_event(void *st, const struct vt_trace *t, const struct vt_event *ev)
{
    struct retained *R = st;
    const struct vt_life *l = ev->l;
    struct rsite *s;
    int k, bHeld;
    if (vt__unjudged_hold(t, l)) return 0;
    if (l->site >= R->n) {
        int nNew = l->site + 1 > 2 * R->n ? l->site + 1 : 2 * R->n;
        struct rsite *aNew = realloc(R->a, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        memset(aNew + R->n, 0, sizeof *aNew * (size_t)(nNew - R->n));
        for (int i = R->n; i < nNew; i++) {
            aNew[i].idleFirstTs = aNew[i].crossFirstTs = -1;
            aNew[i].crossPhase = -1;
        }
        R->a = aNew;
        R->n = nNew;
    }
    s = &R->a[l->site];
    if (l->freeTs >= 0) {
        int64_t from = l->useBound >= 0 ? l->useBound : l->allocTs;
        int64_t idle = l->freeTs - from, life = l->freeTs - l->allocTs;
        if (idle >= R->idleNs && idle >= life / 10 * 6 && !phase_state(t, l)) {
            struct rburst *b = &s->burst;
            int it = vt__iter_at(t, l->allocTs);
            if (b->count > 0 && l->freeTs - b->lastFree > 1000000) burst_flush(R, s);
            if (b->count == 0) b->firstIter = b->lastIter = it;
            if (it >= 0 && (b->firstIter < 0 || it < b->firstIter)) b->firstIter = it;
            if (it > b->lastIter) b->lastIter = it;
            if (b->count == 0 || l->allocTs < b->firstAlloc) b->firstAlloc = l->allocTs;
            if (b->count == 0 || l->allocTs > b->lastAlloc) b->lastAlloc = l->allocTs;
            b->count++;
            b->bytes += l->bytes;
            if (idle > b->maxNs) b->maxNs = idle;
            b->lastFree = l->freeTs;
        }
    }
    if ((k = vt__carried_into(t, l, &bHeld)) >= 0 && bHeld) {
        s->crossCount++;
        s->crossBytes += l->bytes;
        if (s->crossFirstTs < 0) s->crossFirstTs = l->allocTs;
        s->crossLastTs = l->freeTs >= 0 ? l->freeTs : t->f.t1;
        if (s->crossPhase < 0) s->crossPhase = k;
    }
    return 0;
}

static void retained_free(void *st)
{
    free(((struct retained *)st)->a);
}

const struct vt_detector vt__detector_retained = {
    "retained", sizeof(struct retained), 1u << VT_EV_END, retained_begin, retained_event, retained_end, retained_free,
};
