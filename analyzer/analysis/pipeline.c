/* The analysis driver: each trace read, phased, replayed and judged by the table of detectors. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

/* The detectors, in the order their findings are made (the report sorts them by severity). */
static const struct vt_detector *const aDetector[] = {
    &vt__detector_leak, &vt__detector_retained, &vt__detector_spike, &vt__detector_transfer, &vt__detector_oom,
};
#define N_DETECTOR ((int)(sizeof aDetector / sizeof aDetector[0]))

/* The scan's kernel feed into the transfer pass, started when the kernel table's pass begins. */
struct feed {
    struct vt_trace *t;
    struct vt_xfer_run *x;
    int rc;
};

static int feed_start(void *pArg)
{
    struct feed *p = pArg;
    p->rc = vt__xfer_begin(p->t, &p->x);
    return p->rc;
}

static int feed_kernel(void *pArg, int64_t start, int64_t end)
{
    struct feed *p = pArg;
    return vt__xfer_kernel(p->x, start, end);
}

/* Release the detectors' states (aSt[i] may be NULL). */
static void states_free(void **aSt)
{
    for (int i = 0; i < N_DETECTOR; i++) {
        if (aSt[i] && aDetector[i]->xFree) aDetector[i]->xFree(aSt[i]);
        free(aSt[i]);
    }
}

/*
 * Analyze zPath as trace iTrace of r: read it (the scan feeding the transfer pass), write
 * back if it can, find phases, replay it through the detectors, collect their findings.
 * Returns a VT_EXIT code (one line printed on error).
 */
static int analyze_one(struct vt_result *r, int iTrace, const char *zPath, const struct vt_opts *o)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    struct feed fd = {t, NULL, SQLITE_OK};
    struct vt_kernel_feed kf = {&fd, feed_start, feed_kernel, 0};
    void *aSt[N_DETECTOR] = {NULL};
    int rc, i;

    rc = vt__read_open(&t->f, zPath, o->bNoWrite ? 0 : VT_READ_WRITE, &kf);
    if (fd.x) { /* finish the pass when the scan fed it every kernel; else vt__transfers makes it */
        int bDone = rc == VT_EXIT_OK && kf.bDone;
        t->xf.bDone = vt__xfer_end(fd.x, bDone) == SQLITE_OK && bDone;
    }
    if (rc == VT_EXIT_OK && t->f.bWritable) rc = vt__writeback_begin(t);
    if (rc == VT_EXIT_OK) rc = vt__phases(t, o);
    for (i = 0; rc == VT_EXIT_OK && i < N_DETECTOR; i++) {
        aSt[i] = calloc(1, aDetector[i]->nState ? aDetector[i]->nState : 1);
        if (!aSt[i] || (aDetector[i]->xBegin && aDetector[i]->xBegin(aSt[i], t, o) != 0)) rc = VT_EXIT_INTERNAL;
    }
    if (rc == VT_EXIT_OK) rc = vt__replay(t, o, aDetector, aSt, N_DETECTOR);
    if (rc == VT_EXIT_OK) rc = vt__transfers(t);
    for (i = 0; rc == VT_EXIT_OK && i < N_DETECTOR; i++)
        if (aDetector[i]->xEnd && aDetector[i]->xEnd(aSt[i], r, iTrace) != 0) rc = VT_EXIT_INTERNAL;
    if (rc == VT_EXIT_INTERNAL && !t->f.zPath) vt__errorf("%s: out of memory", zPath);
    if (rc == VT_EXIT_OK && t->pWb) rc = vt__writeback_end(r, iTrace);
    states_free(aSt);
    vt__writeback_free(t);
    vt__read_done(&t->f); /* the connection goes; what was read stays for the report */
    return rc;
}

/* Drop the findings of trace iTrace (it failed midway): they would describe a partial read. */
static void findings_drop(struct vt_result *r, int iTrace)
{
    int n = 0;
    for (int k = 0; k < r->nFind; k++) {
        struct vt_finding *x = &r->aFind[k];
        if (x->trace != iTrace) {
            r->aFind[n++] = *x;
            continue;
        }
        free(x->zTitle);
        free(x->zEvidence);
        free(x->zFix);
        free(x->zSite);
    }
    r->nFind = n;
}

int vt__analyze(const char **azPath, int nPath, const struct vt_opts *o, struct vt_result *r)
{
    int rcFirst = VT_EXIT_OK;
    memset(r, 0, sizeof *r);
    r->pOpts = o;
    r->aTrace = calloc((size_t)(nPath > 0 ? nPath : 1), sizeof *r->aTrace);
    r->azFailed = calloc((size_t)(nPath > 0 ? nPath : 1), sizeof *r->azFailed);
    if (!r->aTrace || !r->azFailed) return VT_EXIT_INTERNAL;
    for (int i = 0; i < nPath; i++) {
        int rc = analyze_one(r, r->nTrace, azPath[i], o);
        if (rc == VT_EXIT_OK) {
            r->nTrace++;
            continue;
        }
        /* named on stderr already; the other traces are still analyzed */
        findings_drop(r, r->nTrace);
        vt__trace_free(&r->aTrace[r->nTrace]);
        r->azFailed[r->nFailed++] = azPath[i];
        if (rcFirst == VT_EXIT_OK) rcFirst = rc;
        if (rc == VT_EXIT_USAGE) break; /* a bad option (a regular expression): the same for every trace */
    }
    vt__findings_sort(r);
    if (r->nFailed == 0) return VT_EXIT_OK;
    return r->nTrace > 0 ? VT_EXIT_PARTIAL : rcFirst;
}
