/* Findings and the judgments every detector shares: severities, the rising-baseline test, time offsets. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

void vt__opts_default(struct vt_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = VT_FMT_TEXT;
    /* phase names before any "::", "#" or "." so that operator ranges (aten::values,
     * Optimizer.step#Adam.step) are not phases; iterations are whole names like "step",
     * "train_step", "iter 3", "batch_12" */
    o->zPhaseRe = "^([^:#.]*[^a-z:#.])?(train|val|eval|test)";
    o->zEvalRe = "val|eval|test|infer";
    o->zIterRe = "^(([a-z]+_)?(step|iter|iteration|batch)|profilerstep)([ _#:=-]*[0-9]+)?$";
    o->minBytes = 1 << 20;
    o->nTop = 10;
    o->failOn = -1;
    o->bNoWrite = 1; /* write-back is asked for (--save) */
}

const char *vt__sev_name(int sev)
{
    static const char *const az[] = {"info", "low", "medium", "high"};
    return sev >= 0 && sev <= VT_SEV_HIGH ? az[sev] : "?";
}

const char *vt__no_site_help(const struct vt_trace *t)
{
    if (vt__read_imported(&t->f)) return " (the imported file records no call stack for it)";
    return " (call sites are recorded by default: keep VRAMTRACE_BACKTRACE above 0 and do not pass "
           "--no-python-stacks to vramtrace record)";
}

int vt__sev_parse(const char *z)
{
    for (int i = 0; i <= VT_SEV_HIGH; i++)
        if (!strcmp(z, vt__sev_name(i))) return i;
    return -1;
}

const char *vt__phase_kind_name(int kind)
{
    return kind == VT_PHASE_TRAIN ? "training" : kind == VT_PHASE_EVAL ? "evaluation" : "other";
}

struct vt_finding *vt__finding_add(struct vt_result *r, int trace, const char *zKind, int sev)
{
    struct vt_finding *f;
    if (r->nFind == r->nFindAlloc) {
        int nNew = r->nFindAlloc ? r->nFindAlloc * 2 : 32;
        struct vt_finding *aNew = realloc(r->aFind, sizeof *aNew * (size_t)nNew);
        if (!aNew) return NULL;
        r->aFind = aNew;
        r->nFindAlloc = nNew;
    }
    f = &r->aFind[r->nFind++];
    memset(f, 0, sizeof *f);
    f->zKind = zKind;
    f->severity = sev;
    f->trace = trace;
    f->firstTs = f->lastTs = -1;
    f->stackId = -1;
    f->device = -1;
    f->nSame = 1;
    return f;
}

static int cmp_finding(const void *pa, const void *pb)
{
    const struct vt_finding *a = pa, *b = pb;
    if (a->severity != b->severity) return b->severity - a->severity;
    if (a->bytes != b->bytes) return a->bytes < b->bytes ? 1 : -1;
    if (a->trace != b->trace) return a->trace - b->trace;
    return strcmp(a->zTitle ? a->zTitle : "", b->zTitle ? b->zTitle : "");
}

void vt__findings_sort(struct vt_result *r)
{
    if (r->nFind > 1) qsort(r->aFind, (size_t)r->nFind, sizeof *r->aFind, cmp_finding);
}

int vt__finding_on(const struct vt_finding *f, int iTrace)
{
    if (!f->aTraces) return f->trace == iTrace;
    for (int k = 0; k < f->nTraces; k++)
        if (f->aTraces[k] == iTrace) return 1;
    return 0;
}

int64_t vt__finding_first_on(const struct vt_finding *f, int iTrace)
{
    if (!f->aTraces) return f->trace == iTrace ? f->firstTs : -1;
    for (int k = 0; k < f->nTraces; k++)
        if (f->aTraces[k] == iTrace) return f->aTraceTs ? f->aTraceTs[k] : f->trace == iTrace ? f->firstTs : -1;
    return -1;
}

void vt__finding_free(struct vt_finding *f)
{
    free(f->zTitle);
    free(f->zEvidence);
    free(f->zFix);
    free(f->zSite);
    free(f->aTraces);
    free(f->aTraceTs);
    free(f->aBytes);
}

int vt__trace_findings(const struct vt_result *r, int iTrace, int *pWorst)
{
    int n = 0;
    *pWorst = -1;
    for (int k = 0; k < r->nFind; k++)
        if (vt__finding_on(&r->aFind[k], iTrace)) {
            n++;
            if (r->aFind[k].severity > *pWorst) *pWorst = r->aFind[k].severity;
        }
    return n;
}

int64_t vt__main_peak(const struct vt_trace *t)
{
    int64_t peak = 0;
    for (int i = 0; i < t->tl.nDev; i++)
        if (t->tl.aDev[i].id >= 0 && t->tl.aDev[i].peak > peak) peak = t->tl.aDev[i].peak;
    return peak;
}

int vt__memory_known(const struct vt_trace *t)
{
    return !(vt__read_imported(&t->f) && t->lc.nAlloc == 0 && t->lc.nTensorAlloc == 0 && t->nOom == 0);
}

int64_t vt__phase_peak(const struct vt_trace *t, const struct vt_phase *p)
{
    if (vt__memory_known(t)) return p->peak > 0 ? p->peak : 0;
    return vt__fig_window_total(&t->f, p->start, p->end);
}

int vt__shows_training(const struct vt_trace *t)
{
    static const char *const azWord[] = {"backward", "optimizer", "autograd", "zero_grad"};
    for (int i = 0; i < t->ph.n; i++)
        if (t->ph.a[i].kind == VT_PHASE_TRAIN) return 1;
    for (int i = 0; i < t->sites.n; i++) {
        const char *zSite = t->sites.a[i].zSite;
        for (size_t k = 0; zSite && k < sizeof azWord / sizeof azWord[0]; k++)
            if (strstr(zSite, azWord[k])) return 1;
    }
    return 0;
}

const char *vt__end_said(const struct vt_trace *t)
{
    return vt__fig_end_said(&t->f);
}

const char *vt__fix_state(const struct vt_trace *t)
{
    if (vt__shows_training(t))
        return "Nothing to fix if this is the model's state. To hold less of it: free gradients with "
               "optimizer.zero_grad(set_to_none=True), del outputs and losses you no longer need, and "
               "keep only .item() or .detach().cpu() copies of what you log.";
    return "Nothing to fix if this is the model's state (weights, caches). To hold less of it: del tensors you no "
           "longer need and keep only .item() or .detach().cpu() copies of what you log; code that does not train "
           "can run under torch.inference_mode(), which keeps no autograd graph.";
}

int vt__sev_bytes(const struct vt_trace *t, int64_t bytes)
{
    int64_t peak = vt__main_peak(t);
    if (bytes >= ((int64_t)1 << 30) || (peak > 0 && bytes * 10 >= peak)) return VT_SEV_HIGH;
    if (bytes >= ((int64_t)64 << 20) || (peak > 0 && bytes * 100 >= peak)) return VT_SEV_MEDIUM;
    return VT_SEV_LOW;
}

int vt__sev_time(const struct vt_trace *t, int64_t ns)
{
    int64_t dur = t->f.t1 - t->f.t0;
    if (dur <= 0) dur = 1;
    if (ns * 10 >= dur) return VT_SEV_HIGH;
    if (ns * 100 >= dur) return VT_SEV_MEDIUM;
    return VT_SEV_LOW;
}

int vt__unjudged_hold(const struct vt_trace *t, const struct vt_life *l)
{
    return !t->f.bHaveKernelUses || t->f.bSegments || l->allocTs < 0 || l->useBound == VT_USE_UNKNOWN || l->bInternal ||
           t->sites.a[l->site].bNccl || l->acct == VT_ACCT_PINNED ||
           vt__read_lent_during(&t->f, l->lastUse >= 0 ? l->lastUse : l->allocTs, l->freeTs);
}

int vt__trend(const int64_t *a, int n, int64_t minRise, int64_t *pRise)
{
    int64_t first = -1, prev = -1, maxDrop = 0, maxUp = 0;
    int nStep = 0, nUp = 0, aThird[3] = {0, 0, 0}, nValid = 0, iStep = 0;
    *pRise = 0;
    for (int i = 0; i < n; i++) /* steps counted first, so ups can be placed in thirds */
        if (a[i] >= 0 || nValid) nValid++;
    for (int i = 0; i < n; i++) {
        int64_t v = a[i] >= 0 ? a[i] : prev;
        if (v < 0) continue;
        if (first < 0) first = v;
        else {
            nStep++;
            if (v > prev) {
                nUp++;
                if (v - prev > maxUp) maxUp = v - prev;
                aThird[nValid > 1 ? iStep * 3 / (nValid - 1) : 0]++;
            } else if (prev - v > maxDrop) {
                maxDrop = prev - v;
            }
            iStep++;
        }
        prev = v;
    }
    if (first < 0) return 0;
    *pRise = prev - first;
    if (nStep < 4 || *pRise < minRise || *pRise <= 0 || maxDrop * 4 > *pRise) return 0;
    /* rising most of the time, or a staircase (a caching allocator reserving in big steps)
     * still climbing in every third of the run: warm-up alone climbs only at the start; one step
     * carrying most of the rise is a level change (one larger batch's segment beside a few small
     * ones), not a staircase */
    return nUp * 10 >= nStep * 6 || (nUp >= 3 && aThird[0] && aThird[1] && aThird[2] && maxUp * 2 <= *pRise);
}

void vt__fmt_at(const struct vt_trace *t, int64_t ts, char *z, size_t n)
{
    vt__fig_fmt_at(&t->f, ts, z, n);
}
