/* What was live at a moment (a peak, an OOM): the largest allocations, and all of them by call site and memory kind. */
#include "analysis.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a ranks before b: more bytes, then more allocations, then lower site, then lower kind. */
static int group_before(const struct vt_group *a, const struct vt_group *b)
{
    if (a->bytes != b->bytes) return a->bytes > b->bytes;
    if (a->count != b->count) return a->count > b->count;
    if (a->site != b->site) return a->site < b->site;
    return a->memKind < b->memKind;
}

/* Make room for nAcc groups in g. Returns 0, or -1 when out of memory (what g holds is kept). */
static int acc_reserve(struct vt_groupacc *g, int nAcc)
{
    int nNew = nAcc > 2 * g->nAlloc ? nAcc : 2 * g->nAlloc;
    struct vt_group *aAcc;
    int *aNext;
    if (g->nAlloc >= nAcc) return 0;
    aAcc = realloc(g->aAcc, sizeof *aAcc * (size_t)nNew);
    if (!aAcc) return -1;
    g->aAcc = aAcc;
    aNext = realloc(g->aNext, sizeof *aNext * (size_t)nNew);
    if (!aNext) return -1;
    g->aNext = aNext;
    g->nAlloc = nNew;
    return 0;
}

/* Make room in g for a chain head per site of t (all -1). Returns 0, or -1 when out of memory. */
static int head_reserve(const struct vt_trace *t, struct vt_groupacc *g)
{
    int nNew = t->sites.n > 2 * g->nHead ? t->sites.n : 2 * g->nHead;
    int *aNew;
    if (g->nHead >= t->sites.n) return 0;
    aNew = realloc(g->aHead, sizeof *aNew * (size_t)nNew);
    if (!aNew) return -1;
    for (int i = g->nHead; i < nNew; i++) aNew[i] = -1;
    g->aHead = aNew;
    g->nHead = nNew;
    return 0;
}

int vt__groupacc_add(struct vt_trace *t, struct vt_groupacc *g, const struct vt_life *l)
{
    struct vt_group *p;
    int k;
    assert(l->site >= 0 && l->site < t->sites.n);
    if (head_reserve(t, g) != 0) goto nomem;
    k = g->aHead[l->site]; /* the site's groups, one per memory kind seen */
    while (k >= 0 && g->aAcc[k].memKind != l->memKind) k = g->aNext[k];
    if (k < 0) {
        if (acc_reserve(g, g->nAcc < 64 ? 64 : g->nAcc + 1) != 0) goto nomem;
        k = g->nAcc++;
        memset(&g->aAcc[k], 0, sizeof g->aAcc[k]);
        g->aAcc[k].site = l->site;
        g->aAcc[k].memKind = l->memKind;
        g->aNext[k] = g->aHead[l->site];
        g->aHead[l->site] = k;
    }
    p = &g->aAcc[k];
    p->count++;
    p->bytes += l->bytes;
    if (p->count == 1 || l->bytes > p->largest.bytes) {
        p->largest.address = l->address;
        p->largest.bytes = l->bytes;
        p->largest.allocTs = l->allocTs;
        p->largest.lastUse = l->lastUse;
        p->largest.site = l->site;
        p->largest.memKind = l->memKind;
    }
    return 0;
nomem:
    t->tl.bGroupNoMem = 1;
    return -1;
}

void vt__groupacc_clear(struct vt_groupacc *g)
{
    for (int k = 0; k < g->nAcc; k++) g->aHead[g->aAcc[k].site] = -1;
    g->nAcc = 0;
}

void vt__groupacc_free(struct vt_groupacc *g)
{
    free(g->aHead);
    free(g->aAcc);
    free(g->aNext);
    memset(g, 0, sizeof *g);
}

/* Insert g into the list a (n entries, in group_before order, at most cap). */
static void group_insert(struct vt_group *a, int *pN, int cap, const struct vt_group *g)
{
    int n = *pN, j;
    if (n == cap && !group_before(g, &a[n - 1])) return;
    j = n < cap ? n : cap - 1;
    while (j > 0 && group_before(g, &a[j - 1])) {
        a[j] = a[j - 1];
        j--;
    }
    a[j] = *g;
    if (n < cap) (*pN)++;
}

/* Insert l into the descending-by-bytes top list a (n entries, at most cap). */
void vt__top_insert(struct vt_snap *a, int *pN, int cap, const struct vt_life *l)
{
    int n = *pN, j;
    if (n == cap && a[n - 1].bytes >= l->bytes) return;
    j = n < cap ? n : cap - 1;
    while (j > 0 && a[j - 1].bytes < l->bytes) {
        a[j] = a[j - 1];
        j--;
    }
    a[j].address = l->address;
    a[j].bytes = l->bytes;
    a[j].allocTs = l->allocTs;
    a[j].lastUse = l->lastUse;
    a[j].site = l->site;
    a[j].memKind = l->memKind;
    if (n < cap) (*pN)++;
}

void vt__groupacc_take(struct vt_groupacc *g, struct vt_group *aGroup, int *pn, int nCap)
{
    *pn = 0;
    for (int k = 0; k < g->nAcc; k++) group_insert(aGroup, pn, nCap, &g->aAcc[k]);
    vt__groupacc_clear(g);
}

void vt__peaklist_begin(struct vt_device *d, int64_t ts)
{
    d->nTop = d->nGroup = 0;
    d->atPeakTs = ts;
    vt__groupacc_clear(&d->peakAcc);
}

int vt__peaklist_add(struct vt_trace *t, struct vt_device *d, const struct vt_life *l)
{
    vt__top_insert(d->aTop, &d->nTop, VT_TOPMAX, l);
    if (l->site < 0 || l->site >= t->sites.n) return 0; /* every live allocation has a site */
    return vt__groupacc_add(t, &d->peakAcc, l);
}

void vt__peaklist_end(struct vt_device *d)
{
    vt__groupacc_take(&d->peakAcc, d->aGroup, &d->nGroup, VT_TOPMAX);
}

/*
 * Snapshot what is live in acct (a device id, or VT_ACCT_DEVICES for every
 * device) among apLive[0..nLive-1], in one pass: the nTopCap largest
 * allocations into aTop[0..*pnTop-1] (descending by bytes), and every one of
 * them summed by call site and memory kind, the nGroupCap largest groups into
 * aGroup[0..*pnGroup-1] (bytes, then count, descending; ties by site and
 * kind). Costs O(nLive) plus the list insertions. Returns 0, or -1 when out of
 * memory (then *pnGroup is 0 and t->tl.bGroupNoMem is set, for the replay to
 * report; aTop is complete).
 */
int vt__live_snapshot(struct vt_trace *t, struct vt_life *const *apLive, int nLive, int acct, struct vt_snap *aTop,
                      int *pnTop, int nTopCap, struct vt_group *aGroup, int *pnGroup, int nGroupCap)
{
    struct vt_groupacc *g = &t->tl.snapAcc;
    int bNoMem = 0;
    assert(t && aTop && pnTop && nTopCap > 0 && aGroup && pnGroup && nGroupCap > 0);
    *pnTop = *pnGroup = 0;
    for (int i = 0; i < nLive; i++) {
        const struct vt_life *l = apLive[i];
        if (acct == VT_ACCT_DEVICES ? l->acct < 0 : l->acct != acct) continue;
        if (*pnTop < nTopCap || aTop[*pnTop - 1].bytes < l->bytes) vt__top_insert(aTop, pnTop, nTopCap, l);
        if (bNoMem || l->site < 0 || l->site >= t->sites.n) continue; /* every live allocation has a site */
        if (vt__groupacc_add(t, g, l) != 0) bNoMem = 1;
    }
    if (!bNoMem) {
        vt__groupacc_take(g, aGroup, pnGroup, nGroupCap);
        return 0;
    }
    vt__groupacc_clear(g);
    return -1;
}

/*
 * One group as report text into z (n bytes): "3 allocations, 3.00 GiB from
 * SITE (device), largest 1.00 GiB"; one allocation reads "1 allocation, 4.00 GiB
 * from SITE (device)".
 */
void vt__fmt_group(const struct vt_trace *t, const struct vt_group *g, char *z, size_t n)
{
    char zB[32], zL[32];
    vt__fmt_bytes(g->bytes, zB, sizeof zB);
    vt__fmt_bytes(g->largest.bytes, zL, sizeof zL);
    snprintf(z, n, "%lld allocation%s, %s from %s (%s)%s%s", (long long)g->count, g->count == 1 ? "" : "s", zB,
             g->site >= 0 && g->site < t->sites.n ? t->sites.a[g->site].zSite : "?", vt__or(vt_mem_kind_name(g->memKind), "other"),
             g->count > 1 ? ", largest " : "", g->count > 1 ? zL : "");
}

int vt__fmt_reconcile(const struct vt_trace *t, const struct vt_device *d, char *z, size_t n)
{
    char zA[32], zR[32], zC[32];
    const struct vt_figdev *fd = vt__fig_dev(&t->f, d->id);
    z[0] = 0;
    /* both levels: the reserved peak (the figure source's) and what the allocator's blocks held at it */
    if (t->f.fig.level != VT_LEVEL_BOTH || d->id < 0 || !fd || fd->reserved <= 0 || fd->allocated <= 0) return 0;
    vt__fmt_bytes(d->tensorAtPeak > 0 ? d->tensorAtPeak : 0, zA, sizeof zA);
    vt__fmt_bytes(fd->reserved, zR, sizeof zR);
    vt__fmt_bytes(fd->reserved > d->tensorAtPeak ? fd->reserved - (d->tensorAtPeak > 0 ? d->tensorAtPeak : 0) : 0, zC,
                  sizeof zC);
    snprintf(z, n,
             "at the reserved peak %s allocated by tensors of %s reserved by the caching allocator (%s cached, free "
             "for tensors); nvidia-smi shows reserved plus the CUDA context, cuBLAS and NCCL workspaces and other "
             "processes, none of them in the trace",
             zA, zR, zC);
    return 1;
}
