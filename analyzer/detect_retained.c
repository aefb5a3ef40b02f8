/* Detector: retained references — memory idle long after its last use, or held across a phase. */
#include "analysis.h"

#include <string.h>

#include "cli.h"

/* Retained findings per site (idle after last use; held through an evaluation phase). */
int vt__detect_retained(struct vt_result *r, int iTrace)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_opts *o = r->pOpts;
    int64_t peak = vt__main_peak(t);
    char zB[32], zI[32], zT[32];
    if (t->bSegments) return VT_EXIT_OK; /* a cache holds segments idle by design */
    for (int i = 0; i < t->nSite; i++) {
        struct vt_site *s = &t->aSite[i];
        struct vt_finding *f;
        if (s->crossCount > 0 && s->crossBytes >= o->minBytes) {
            const struct vt_phase *e = &t->aPhase[s->crossPhase];
            f = vt__finding_add(r, iTrace, "retained",
                                e->peak > 0 && s->crossBytes * 2 >= e->peak ? VT_SEV_HIGH : VT_SEV_MEDIUM);
            if (!f) return VT_EXIT_INTERNAL;
            vt__fmt_bytes(s->crossBytes, zB, sizeof zB);
            f->bytes = s->crossBytes;
            f->count = s->crossCount;
            f->firstTs = s->crossFirstTs;
            f->lastTs = s->crossLastTs;
            f->stackId = s->stackId;
            snprintf(f->zPhase, sizeof f->zPhase, "%s", e->zName);
            f->zSite = vt__strdupf("%s", s->zSite);
            f->zTitle = vt__strdupf("%s from training held through evaluation '%s' (%lld allocation%s)", zB,
                                    e->zName, (long long)s->crossCount, s->crossCount == 1 ? "" : "s");
            f->zEvidence = vt__strdupf(
                "%lld allocation%s (%s) made during training were last used before '%s' started and "
                "stayed allocated through it without being used%s.",
                (long long)s->crossCount, s->crossCount == 1 ? "" : "s", zB, e->zName,
                s->crossLastTs >= t->t1 ? " (until the end of the trace)" : "");
            f->zFix = vt__strdupf(
                "A reference from the training step outlives it (typically loss, outputs or a "
                "batch kept in a variable or list). del them at the end of the step or keep "
                "loss.item(); call optimizer.zero_grad(set_to_none=True); run validation under "
                "torch.no_grad().");
            if (!f->zTitle || !f->zEvidence || !f->zFix || !f->zSite) return VT_EXIT_INTERNAL;
        }
        if (s->idleCount > 0 && s->idleBytes >= o->minBytes) {
            f = vt__finding_add(r, iTrace, "retained",
                                peak > 0 && s->idleBytes * 10 >= peak ? VT_SEV_MEDIUM : VT_SEV_LOW);
            if (!f) return VT_EXIT_INTERNAL;
            vt__fmt_bytes(s->idleBytes, zB, sizeof zB);
            vt__fmt_ns(s->idleMaxNs, zI, sizeof zI);
            vt__fmt_ns(t->idleNs, zT, sizeof zT);
            f->bytes = s->idleBytes;
            f->count = s->idleCount;
            f->firstTs = s->idleFirstTs;
            f->lastTs = s->idleLastTs;
            f->stackId = s->stackId;
            f->zSite = vt__strdupf("%s", s->zSite);
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
            if (!f->zTitle || !f->zEvidence || !f->zFix || !f->zSite) return VT_EXIT_INTERNAL;
        }
    }
    return VT_EXIT_OK;
}
