/* Detector: validation spikes: evaluation above training, memory carried over from training, batch growth. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

static const char *zFixNoGrad =
    "Run evaluation under torch.no_grad() (or torch.inference_mode()) and model.eval(); keep "
    "metrics as numbers (loss.item()) or detached tensors (.detach().cpu()), never outputs that "
    "carry their graph.";

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

/* For each evaluation phase: batch-by-batch growth, memory carried from training, peak above training. */
static int spike_end(void *st, struct vt_result *r, int iTrace)
{
    (void)st;
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct vt_opts *o = r->pOpts;
    int64_t trainPeak = -1;
    for (int i = 0; i < t->ph.n; i++)
        if (t->ph.a[i].kind == VT_PHASE_TRAIN && t->ph.a[i].peak > trainPeak) trainPeak = t->ph.a[i].peak;
    for (int i = 0; i < t->ph.n; i++) {
        const struct vt_phase *p = &t->ph.a[i];
        int64_t aB[VT_SLICES + 512], rise = 0;
        int n = 0, bGrow, bCarried, bOom = 0;
        char zA[32], zB[32], zC[32];
        struct vt_finding *f;
        if (p->kind != VT_PHASE_EVAL || p->peak < 0) continue;
        for (int k = 0; k < t->nOom; k++) bOom |= t->aOom[k].ts >= p->start && t->aOom[k].ts < p->end;
        /* batch-by-batch baseline: iterations inside the phase, else its time slices */
        if (p->nIter >= 5 && p->nIter <= 512)
            for (int k = p->firstIter; k <= p->lastIter; k++) aB[n++] = t->ph.aIter[k].minLive;
        else
            for (int k = 0; k < VT_SLICES; k++) aB[n++] = p->slice[k];
        /* at segment level, as for leaks, only a rise of 5 % of the device peak counts */
        bGrow = vt__trend(aB, n, t->f.bSegments && vt__main_peak(t) / 20 > o->minBytes ? vt__main_peak(t) / 20 : o->minBytes,
                          &rise);
        bCarried = p->carried >= o->minBytes && p->carried * 10 >= p->peak && !t->f.bSegments;
        if (bGrow) {
            f = vt__finding_add(r, iTrace, "validation_spike",
                                bOom || (trainPeak > 0 && rise * 10 >= trainPeak) ? VT_SEV_HIGH : VT_SEV_MEDIUM);
            if (!f) return -1;
            vt__fmt_bytes(rise, zA, sizeof zA);
            vt__fmt_bytes(p->startLive, zB, sizeof zB);
            f->bytes = rise;
            f->count = n;
            if (fill(f, p, vt__strdupf("Memory grows batch by batch during '%s': +%s", p->zName, zA),
                     vt__strdupf("The lowest live memory of each %s of '%s' rose by %s from %s at its "
                                 "start: activations or outputs are kept from batch to batch (typically "
                                 "a missing torch.no_grad(), or outputs stored with their graph).",
                                 p->nIter >= 5 && p->nIter <= 512 ? "batch" : "sixteenth", p->zName, zA, zB),
                     zFixNoGrad) != 0)
                return -1;
        }
        if (bCarried) {
            f = vt__finding_add(r, iTrace, "validation_spike", VT_SEV_MEDIUM);
            if (!f) return -1;
            vt__fmt_bytes(p->carried, zA, sizeof zA);
            vt__fmt_bytes(p->peak, zB, sizeof zB);
            f->bytes = p->carried;
            if (fill(f, p, vt__strdupf("%s carried over from training into '%s'", zA, p->zName),
                     vt__strdupf("At the start of '%s', %s allocated during training was still live and "
                                 "was not used again before the phase began (its peak was %s). See the "
                                 "retained findings for the sites.", p->zName, zA, zB),
                     "Before evaluating, drop what the last training step left behind: del loss, "
                     "outputs and other step tensors (or keep loss.item()), call "
                     "optimizer.zero_grad(set_to_none=True), then gc.collect() if cycles hold them.") != 0)
                return -1;
        }
        if (trainPeak >= 0 && p->peak > trainPeak + trainPeak / 20 && p->peak - trainPeak >= o->minBytes) {
            int sev = bOom ? VT_SEV_HIGH : (bGrow || bCarried) ? VT_SEV_MEDIUM : VT_SEV_INFO;
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
                                     ? " Memory is flat from batch to batch and nothing was carried over from "
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

const struct vt_detector vt__detector_spike = {"validation_spike", 0, 0, NULL, NULL, spike_end, NULL};
