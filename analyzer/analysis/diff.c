/* Two analyses compared: peaks and their breakdowns per device, sites, phases and findings that changed. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

/*
 * BASE and NEW are each one run (one trace, or one trace per rank). Processes are paired by rank
 * where every trace has one, else in the order given; devices within a pair by id. Sites are
 * compared by their description (stack ids differ between runs), each by its highest live bytes
 * in any process of the run; phases of a pair in order; findings by root cause (vt__finding_key),
 * with those whose severity changed.
 * Docs: docs/cli.md "diff".
 */

/* Whether every trace of r has a rank. */
static int all_ranked(const struct vt_result *r)
{
    for (int i = 0; i < r->nTrace; i++)
        if (!r->aTrace[i].f.zRank[0]) return 0;
    return r->nTrace > 0;
}

/* The trace of r paired with trace i of the other run (q), -1 none: the same rank, else the same place. */
static int partner(const struct vt_result *q, int i, const struct vt_result *r, int bRanked)
{
    if (!bRanked) return i < r->nTrace ? i : -1;
    for (int k = 0; k < r->nTrace; k++)
        if (!strcmp(r->aTrace[k].f.zRank, q->aTrace[i].f.zRank)) return k;
    return -1;
}

/* Append an element of sz bytes to *pa (*pn of them); a pointer to it zeroed, NULL when out of memory. */
static void *push(void **pa, int *pn, size_t sz)
{
    char *a = realloc(*pa, sz * (size_t)(*pn + 1));
    if (!a) return NULL;
    *pa = a;
    memset(a + sz * (size_t)*pn, 0, sz);
    return a + sz * (size_t)(*pn)++;
}

/* Add breakdown b's parts (bNew: as the new run's) to device entry e. 0 or -1. */
static int add_cats(struct vt_diffdev *e, const struct vt_breakdown *b, int bNew)
{
    for (int k = 0; b && k < b->n; k++) {
        const struct vt_bdpart *p = &b->a[k];
        struct vt_diffcat *c = NULL;
        for (int j = 0; j < e->nCat; j++)
            if (e->aCat[j].cat == p->cat && !strcmp(e->aCat[j].zOwner, p->zOwner)) c = &e->aCat[j];
        if (!c) {
            if (!(c = push((void **)&e->aCat, &e->nCat, sizeof *c))) return -1;
            c->cat = p->cat;
            snprintf(c->zOwner, sizeof c->zOwner, "%s", p->zOwner);
        }
        if (bNew) c->cur += p->bytes;
        else c->base += p->bytes;
    }
    return 0;
}

/* Trace t's timeline device id (its breakdown), NULL when it has none. */
static const struct vt_device *tl_device(const struct vt_trace *t, int id)
{
    for (int k = 0; k < t->tl.nDev; k++)
        if (t->tl.aDev[k].id == id) return &t->tl.aDev[k];
    return NULL;
}

/* The allocated peak of account d as diff says it beside the peak (vt__fig_beside's figure, the process's where
 * known), whatever the headline is; -1 unknown. */
static int64_t alloc_peak(const struct vt_figdev *d)
{
    return d->procAllocated >= 0 ? d->procAllocated : d->allocated >= 0 ? d->allocated : -1;
}

/*
 * The label of the pair of traces tb (of BASE, -1 none) and tn (of NEW, -1 none) into z: the process
 * ("pid 1234, rank 0"), or both sides' where they differ: "pid 1234 -> 40116, rank 0" (the same rank
 * or none), else "BASE's -> NEW's".
 */
static void pair_label(const struct vt_diff *d, int tb, int tn, char *z, size_t n)
{
    const struct vt_tracefile *b = tb >= 0 ? &d->pBase->aTrace[tb].f : NULL, *w = tn >= 0 ? &d->pNew->aTrace[tn].f : NULL;
    char zB[96], zN[96];
    if (b) vt__read_process_name(b, zB, sizeof zB);
    if (w) vt__read_process_name(w, zN, sizeof zN);
    if (!b || !w || !strcmp(zB, zN))
        snprintf(z, n, "%s", b ? zB : zN);
    else if (b->zPid[0] && w->zPid[0] && !strcmp(b->zRank, w->zRank))
        snprintf(z, n, "pid %s -> %s%s%s", b->zPid, w->zPid, b->zRank[0] ? ", rank " : "", b->zRank);
    else
        snprintf(z, n, "%s -> %s", zB, zN);
}

/*
 * Device entries of traces tb (of BASE, -1 none) and tn (of NEW, -1 none), paired by id: each device's
 * peak is the figure source's headline (vt__fig_headline: what analyze and info print), the allocated peak
 * beside it, and its breakdown's parts with what they sum to. 0 or -1.
 */
static int pair_devices(struct vt_diff *d, int tb, int tn)
{
    for (int side = 0; side < 2; side++) {
        const struct vt_result *r = side ? d->pNew : d->pBase;
        int it = side ? tn : tb;
        if (it < 0) continue;
        const struct vt_trace *t = &r->aTrace[it];
        for (int k = 0; k < t->f.fig.nDev; k++) {
            const struct vt_figdev *fd = &t->f.fig.aDev[k];
            const struct vt_device *dv = tl_device(t, fd->acct);
            struct vt_diffdev *e = NULL;
            if (fd->acct < 0) continue; /* pinned and managed host memory: not a device's peak */
            for (int j = 0; j < d->nDev; j++)
                if (d->aDev[j].iBase == tb && d->aDev[j].iNew == tn && d->aDev[j].id == fd->acct) e = &d->aDev[j];
            if (!e) {
                const struct vt_devinfo *di = vt__read_device(&t->f, fd->acct);
                if (!(e = push((void **)&d->aDev, &d->nDev, sizeof *e))) return -1;
                e->iBase = tb;
                e->iNew = tn;
                e->id = fd->acct;
                e->base = e->cur = e->baseAlloc = e->curAlloc = e->baseSum = e->curSum = VT_DIFF_NONE;
                pair_label(d, tb, tn, e->zProc, sizeof e->zProc);
                snprintf(e->zName, sizeof e->zName, "%s", di ? di->zName : "");
            }
            e->aOf[side] = vt__fig_headline_of(fd);
            *(side ? &e->cur : &e->base) = vt__fig_headline(fd);
            *(side ? &e->curAlloc : &e->baseAlloc) = alloc_peak(fd);
            *(side ? &e->curSum : &e->baseSum) = -1; /* until a breakdown says it */
            if (!dv || dv->bd.n == 0) continue;
            *(side ? &e->curSum : &e->baseSum) = dv->bd.total;
            e->azBasis[side] = dv->bd.zBasis;
            if (add_cats(e, &dv->bd, side) != 0) return -1;
        }
    }
    for (int j = 0; j < d->nDev; j++) { /* a side whose trace has the device but traced no allocation on it (a
                                         * torch.profiler trace without profile_memory): its figures unknown */
        struct vt_diffdev *e = &d->aDev[j];
        if (e->iBase != tb || e->iNew != tn) continue;
        for (int side = 0; side < 2; side++) {
            const struct vt_result *r = side ? d->pNew : d->pBase;
            int it = side ? tn : tb;
            if (it < 0 || (side ? e->cur : e->base) != VT_DIFF_NONE || !vt__read_device(&r->aTrace[it].f, e->id)) continue;
            e->aOf[side] = VT_HEAD_NONE;
            *(side ? &e->cur : &e->base) = *(side ? &e->curAlloc : &e->baseAlloc) = *(side ? &e->curSum : &e->baseSum) = -1;
        }
    }
    return 0;
}

/* Phases of traces tb and tn, paired in order. 0 or -1. */
static int pair_phases(struct vt_diff *d, int tb, int tn)
{
    const struct vt_trace *b = tb >= 0 ? &d->pBase->aTrace[tb] : NULL, *n = tn >= 0 ? &d->pNew->aTrace[tn] : NULL;
    int nb = b ? b->ph.n : 0, nn = n ? n->ph.n : 0;
    for (int i = 0; i < (nb > nn ? nb : nn); i++) {
        struct vt_diffphase *p = push((void **)&d->aPhase, &d->nPhase, sizeof *p);
        const struct vt_phase *pb = i < nb ? &b->ph.a[i] : NULL, *pn = i < nn ? &n->ph.a[i] : NULL;
        if (!p) return -1;
        pair_label(d, tb, tn, p->zProc, sizeof p->zProc);
        snprintf(p->zName, sizeof p->zName, "%s", pb ? pb->zName : pn->zName);
        p->kind = pb ? pb->kind : pn->kind;
        p->base = pb ? vt__phase_peak(b, pb) : VT_DIFF_NONE;
        p->cur = pn ? vt__phase_peak(n, pn) : VT_DIFF_NONE;
    }
    return 0;
}

/* Site zSite's highest live bytes in run r (bNew) into the table; 0 or -1. */
static int site_note(struct vt_diff *d, const char *zSite, int64_t bytes, int bNew)
{
    struct vt_diffsite *s = NULL;
    for (int i = 0; i < d->nSite; i++) /* sites are few per run (deduplicated by description) */
        if (!strcmp(d->aSite[i].zSite, zSite)) s = &d->aSite[i];
    if (!s) {
        if (!(s = push((void **)&d->aSite, &d->nSite, sizeof *s))) return -1;
        if (!(s->zSite = vt__strdupf("%s", zSite))) return -1;
        s->base = s->cur = VT_DIFF_NONE;
    }
    if (bNew && bytes > s->cur) s->cur = bytes;
    if (!bNew && bytes > s->base) s->base = bytes;
    return 0;
}

/* Whether site s changed enough to be said, and how. */
static int site_change(const struct vt_diffsite *s, int64_t minBytes)
{
    int64_t b = s->base < 0 ? 0 : s->base, c = s->cur < 0 ? 0 : s->cur;
    if (s->base < 0 && c >= minBytes) return VT_DIFF_NEW;
    if (s->cur < 0 && b >= minBytes) return VT_DIFF_GONE;
    if (c - b >= minBytes && (c - b) * 10 >= b) return VT_DIFF_GREW;
    if (b - c >= minBytes && (b - c) * 10 >= b) return VT_DIFF_SHRANK;
    return 0;
}

static int cmp_site(const void *pa, const void *pb)
{
    const struct vt_diffsite *a = pa, *b = pb;
    int64_t da = llabs((a->cur < 0 ? 0 : a->cur) - (a->base < 0 ? 0 : a->base));
    int64_t db = llabs((b->cur < 0 ? 0 : b->cur) - (b->base < 0 ? 0 : b->base));
    if (da != db) return da > db ? -1 : 1;
    return strcmp(a->zSite, b->zSite);
}

/*
 * Findings of r whose root cause the other run (q) has none of, as appeared (bNew) or vanished; and,
 * comparing BASE (r, !bNew) with NEW, those whose root cause NEW has at other severities only, as
 * changed (NEW's first finding of that root cause, with r's). 0 or -1.
 */
static int find_changes(struct vt_diff *d, const struct vt_result *r, const struct vt_result *q, int bNew)
{
    for (int i = 0; i < r->nFind; i++) {
        char *zKey = vt__finding_key(&r->aFind[i]);
        int bSameSev = 0;
        const struct vt_finding *pMatch = NULL;
        if (!zKey) return -1;
        for (int k = 0; k < q->nFind && !bSameSev; k++) {
            char *z = vt__finding_key(&q->aFind[k]);
            if (!z) {
                free(zKey);
                return -1;
            }
            if (!strcmp(z, zKey)) {
                if (!pMatch) pMatch = &q->aFind[k];
                bSameSev = q->aFind[k].severity == r->aFind[i].severity;
            }
            free(z);
        }
        free(zKey);
        if (bSameSev || (pMatch && bNew)) continue;
        struct vt_difffind *f = push((void **)&d->aFind, &d->nFind, sizeof *f);
        if (!f) return -1;
        f->f = pMatch ? pMatch : &r->aFind[i];
        f->bNew = pMatch ? 1 : bNew;
        f->pBaseF = pMatch ? &r->aFind[i] : NULL;
    }
    return 0;
}

/* Why BASE and NEW look like different jobs (commands, devices), into d->zWarn; NULL when alike. 0 or -1. */
static int job_warning(struct vt_diff *d)
{
    const struct vt_trace *b = d->pBase->nTrace ? &d->pBase->aTrace[0] : NULL;
    const struct vt_trace *n = d->pNew->nTrace ? &d->pNew->aTrace[0] : NULL;
    if (!b || !n) return 0;
    if (strcmp(b->f.zCmd, n->f.zCmd))
        d->zWarn = vt__strdupf("BASE and NEW look like different jobs (command '%s' against '%s'): compared anyway",
                               b->f.zCmd[0] ? b->f.zCmd : "unknown", n->f.zCmd[0] ? n->f.zCmd : "unknown");
    else if (d->pBase->nTrace != d->pNew->nTrace)
        d->zWarn = vt__strdupf("BASE has %d process%s and NEW %d: processes without a partner are listed alone",
                               d->pBase->nTrace, d->pBase->nTrace == 1 ? "" : "es", d->pNew->nTrace);
    else
        return 0;
    return d->zWarn ? 0 : -1;
}

int vt__diff(const struct vt_result *pBase, const struct vt_result *pNew, int64_t minBytes, struct vt_diff *d)
{
    int bRanked = all_ranked(pBase) && all_ranked(pNew), rc = 0;
    memset(d, 0, sizeof *d);
    d->pBase = pBase;
    d->pNew = pNew;
    d->minBytes = minBytes;
    d->iMaxGrowth = -1;
    rc = job_warning(d);
    for (int i = 0; rc == 0 && i < pBase->nTrace; i++) {
        int k = partner(pBase, i, pNew, bRanked);
        rc = pair_devices(d, i, k);
        if (rc == 0) rc = pair_phases(d, i, k);
    }
    for (int k = 0; rc == 0 && k < pNew->nTrace; k++) /* processes only NEW has */
        if (partner(pNew, k, pBase, bRanked) < 0) rc = pair_devices(d, -1, k) || pair_phases(d, -1, k) ? -1 : 0;
    for (int side = 0; rc == 0 && side < 2; side++) {
        const struct vt_result *r = side ? pNew : pBase;
        for (int i = 0; rc == 0 && i < r->nTrace; i++)
            for (int s = 0; rc == 0 && s < r->aTrace[i].sites.n; s++)
                rc = site_note(d, r->aTrace[i].sites.a[s].zSite, r->aTrace[i].sites.a[s].peakLiveBytes, side);
    }
    if (rc == 0) { /* keep the sites that changed, largest change first */
        int n = 0;
        for (int i = 0; i < d->nSite; i++) {
            int c = site_change(&d->aSite[i], minBytes);
            if (!c) {
                free(d->aSite[i].zSite);
                continue;
            }
            d->aSite[i].change = c;
            d->aSite[n++] = d->aSite[i];
        }
        d->nSite = n;
        if (n) qsort(d->aSite, (size_t)n, sizeof *d->aSite, cmp_site);
    }
    if (rc == 0) rc = find_changes(d, pBase, pNew, 0);
    if (rc == 0) rc = find_changes(d, pNew, pBase, 1);
    for (int i = 0; rc == 0 && i < d->nDev; i++) { /* a side without a breakdown: its categories as its sum */
        struct vt_diffdev *e = &d->aDev[i];
        for (int k = 0; k < e->nCat; k++) {
            if (e->baseSum < 0) e->aCat[k].base = e->baseSum;
            if (e->curSum < 0) e->aCat[k].cur = e->curSum;
        }
    }
    for (int i = 0; rc == 0 && i < d->nDev; i++) {
        const struct vt_diffdev *e = &d->aDev[i];
        double pct;
        if (e->base <= 0 || e->cur < 0) continue;
        pct = 100.0 * (double)(e->cur - e->base) / (double)e->base;
        if (d->iMaxGrowth < 0 || pct > d->maxGrowthPct) d->maxGrowthPct = pct, d->iMaxGrowth = i;
    }
    if (rc != 0) vt__diff_free(d);
    return rc;
}

void vt__diff_free(struct vt_diff *d)
{
    for (int i = 0; i < d->nDev; i++) free(d->aDev[i].aCat);
    for (int i = 0; i < d->nSite; i++) free(d->aSite[i].zSite);
    free(d->aDev);
    free(d->aSite);
    free(d->aPhase);
    free(d->aFind);
    free(d->zWarn);
    memset(d, 0, sizeof *d);
}
