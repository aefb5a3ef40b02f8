/* Releasing an analysis: a trace and what its replay, breakdowns and fits made, and a whole result. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

void vt__trace_free(struct vt_trace *t)
{
    for (int i = 0; i < t->tl.nDev; i++) vt__breakdown_clear(&t->tl.aDev[i].bd), vt__fit_clear(&t->tl.aDev[i].fit);
    for (int i = 0; i < t->nOom; i++) vt__breakdown_clear(&t->aOom[i].bd);
    vt__bd_free(t);
    vt__fs_free(t);
    vt__sites_free(&t->sites); /* (the replay's site curves are gone: the analysis drops them, kept or not) */
    for (int d = 0; d < t->tl.nDev; d++) {
        for (int k = 0; k < t->tl.aDev[d].nSite; k++) free(t->tl.aDev[d].aSite[k].a);
        free(t->tl.aDev[d].aSite);
        free(t->tl.aDev[d].aCatPt);
        free(t->tl.aDev[d].azCatLib);
        vt__groupacc_free(&t->tl.aDev[d].peakAcc);
    }
    free(t->tl.aDev);
    free(t->ph.a);
    free(t->ph.aIter);
    free(t->ph.aBoundary);
    free(t->aOom);
    free(t->aFail);
    vt__groupacc_free(&t->tl.snapAcc);
    vt__read_close(&t->f);
    memset(t, 0, sizeof *t);
}

void vt__result_free(struct vt_result *r)
{
    for (int i = 0; i < r->nFind; i++) vt__finding_free(&r->aFind[i]);
    for (int i = 0; i < r->nTrace; i++) vt__trace_free(&r->aTrace[i]);
    free(r->aTrace);
    free(r->aFind);
    free(r->azFailed);
    free(r->aOnce);
    memset(r, 0, sizeof *r);
}
