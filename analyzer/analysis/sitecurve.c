/* Site curves: each call site's live bytes per account over the timeline's buckets, kept for the sites a report draws. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

/*
 * During the replay every (account, site) pair that the judged lifetimes touch gets an entry
 * with its live bytes now and, for each timeline bucket in which they changed, the bucket's
 * highest level and the level after its last change (sparse: a bucket without a change carries
 * the level before it). The points of all pairs together are bounded (VT_SITECURVE_POINTS):
 * past that nothing more is recorded and the trace says so (tl.bSiteCurvesPartial). After the
 * findings, vt__sitecurves_keep keeps per device the curves of its largest sites by peak and of
 * the sites the findings name, and frees the rest.
 */
#define VT_SITECURVE_POINTS (1 << 20) /* points of all pairs of one trace: 24 MiB at most */

struct sc_pair {
    int acct, site;
    int64_t live, peak;
    struct vt_scpoint *a;
    int n, nAlloc;
};

struct vt_sitecurves {
    struct sc_pair *aPair;
    int nPair, nPairAlloc;
    int *aHash, nHash;        /* open addressing: (acct, site) -> pair index + 1; 0 empty */
    int64_t nPoint;           /* points of all pairs */
};

static unsigned pair_hash(int acct, int site)
{
    return (unsigned)site * 2654435761u ^ (unsigned)(acct + 8) * 40503u;
}

/* Index of the pair (acct, site) in c, created on first sight; -1 when out of memory. */
static int pair_get(struct vt_sitecurves *c, int acct, int site)
{
    unsigned h;
    if (2 * (c->nPair + 1) > c->nHash) { /* grow and rehash: at most half full */
        int nNew = c->nHash ? 2 * c->nHash : 64, *aNew = calloc((size_t)nNew, sizeof(int));
        if (!aNew) return -1;
        for (int i = 0; i < c->nPair; i++) {
            for (h = pair_hash(c->aPair[i].acct, c->aPair[i].site) & (unsigned)(nNew - 1); aNew[h];)
                h = (h + 1) & (unsigned)(nNew - 1);
            aNew[h] = i + 1;
        }
        free(c->aHash);
        c->aHash = aNew;
        c->nHash = nNew;
    }
    for (h = pair_hash(acct, site) & (unsigned)(c->nHash - 1); c->aHash[h]; h = (h + 1) & (unsigned)(c->nHash - 1)) {
        const struct sc_pair *p = &c->aPair[c->aHash[h] - 1];
        if (p->acct == acct && p->site == site) return c->aHash[h] - 1;
    }
    if (c->nPair == c->nPairAlloc) {
        int nNew = c->nPairAlloc ? 2 * c->nPairAlloc : 16;
        struct sc_pair *a = realloc(c->aPair, sizeof *a * (size_t)nNew);
        if (!a) return -1;
        c->aPair = a;
        c->nPairAlloc = nNew;
    }
    memset(&c->aPair[c->nPair], 0, sizeof c->aPair[0]);
    c->aPair[c->nPair].acct = acct;
    c->aPair[c->nPair].site = site;
    c->aHash[h] = c->nPair + 1;
    return c->nPair++;
}

int vt__sitecurves_add(struct vt_trace *t, int acct, int site, int64_t delta, int64_t ts)
{
    struct vt_sitecurves *c = t->tl.pSiteCurves;
    struct sc_pair *p;
    struct vt_scpoint *q;
    int i, b;
    if (acct == VT_ACCT_NONE || site < 0) return 0;
    if (!c && !(c = t->tl.pSiteCurves = calloc(1, sizeof *c))) return -1;
    if ((i = pair_get(c, acct, site)) < 0) return -1;
    p = &c->aPair[i];
    p->live += delta;
    if (p->live > p->peak) p->peak = p->live;
    b = vt__timeline_bucket(t, ts);
    if (p->n > 0 && p->a[p->n - 1].bucket == b) q = &p->a[p->n - 1];
    else {
        if (c->nPoint >= VT_SITECURVE_POINTS) {
            t->tl.bSiteCurvesPartial = 1;
            return 0;
        }
        if (p->n == p->nAlloc) {
            int nNew = p->nAlloc ? 2 * p->nAlloc : 4;
            struct vt_scpoint *a = realloc(p->a, sizeof *a * (size_t)nNew);
            if (!a) return -1;
            p->a = a;
            p->nAlloc = nNew;
        }
        q = &p->a[p->n++];
        q->bucket = b;
        q->max = p->live;
        c->nPoint++;
    }
    if (p->live > q->max) q->max = p->live;
    q->last = p->live;
    return 0;
}

/* Whether finding x of trace iTrace names site s of t (its text) on device account acct (or on any device). */
static int named_by(const struct vt_finding *x, const struct vt_trace *t, int iTrace, int s, int acct)
{
    if (!vt__finding_on(x, iTrace) || !x->zSite || !t->sites.a[s].zSite) return 0;
    if (x->device >= 0 && acct >= 0 && x->device != acct) return 0;
    return !strcmp(x->zSite, t->sites.a[s].zSite);
}

void vt__sitecurves_drop(struct vt_trace *t)
{
    struct vt_sitecurves *c = t->tl.pSiteCurves;
    if (!c) return;
    for (int i = 0; i < c->nPair; i++) free(c->aPair[i].a);
    free(c->aPair);
    free(c->aHash);
    free(c);
    t->tl.pSiteCurves = NULL;
}

int vt__sitecurves_keep(struct vt_result *r, int iTrace)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    struct vt_sitecurves *c = t->tl.pSiteCurves;
    char *abKeep = NULL;
    int rc = -1;
    if (!c) return 0;
    if (!(abKeep = calloc((size_t)c->nPair + 1, 1))) goto done;
    for (int d = 0; d < t->tl.nDev; d++) {
        struct vt_device *dv = &t->tl.aDev[d];
        int nKeep = 0, k = 0;
        for (int n = 0; n < VT_SITECURVE_TOP; n++) { /* the largest by peak, then those findings name */
            int best = -1;
            for (int i = 0; i < c->nPair; i++)
                if (c->aPair[i].acct == dv->id && !abKeep[i] && c->aPair[i].peak > 0 &&
                    (best < 0 || c->aPair[i].peak > c->aPair[best].peak))
                    best = i;
            if (best < 0) break;
            abKeep[best] = 1;
            nKeep++;
        }
        for (int i = 0; i < c->nPair; i++) {
            if (c->aPair[i].acct != dv->id || abKeep[i] || c->aPair[i].peak <= 0) continue;
            for (int j = 0; j < r->nFind && !abKeep[i]; j++)
                if (named_by(&r->aFind[j], t, iTrace, c->aPair[i].site, dv->id)) abKeep[i] = 1, nKeep++;
        }
        if (!nKeep) continue;
        if (!(dv->aSite = calloc((size_t)nKeep, sizeof *dv->aSite))) goto done;
        for (int i = 0; i < c->nPair; i++) { /* the points move over: the pair's array is the curve's */
            struct sc_pair *p = &c->aPair[i];
            if (p->acct != dv->id || !abKeep[i]) continue;
            dv->aSite[k].site = p->site;
            dv->aSite[k].peak = p->peak;
            dv->aSite[k].a = p->a;
            dv->aSite[k++].n = p->n;
            p->a = NULL;
        }
        dv->nSite = k;
        for (int a = 1; a < k; a++) /* largest peak first */
            for (int b = a; b > 0 && dv->aSite[b - 1].peak < dv->aSite[b].peak; b--) {
                struct vt_sitecurve x = dv->aSite[b];
                dv->aSite[b] = dv->aSite[b - 1];
                dv->aSite[b - 1] = x;
            }
    }
    rc = 0;
done:
    free(abKeep);
    vt__sitecurves_drop(t);
    return rc;
}
