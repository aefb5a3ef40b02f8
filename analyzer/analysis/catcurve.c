/* Category curves: each device's bytes by breakdown category over time, from the breakdown's changes. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

int vt__catev_add(struct vt_catevs *c, const struct vt_life *l, int64_t ts, int64_t seq, int64_t bytes, int rule,
                  int iLib)
{
    struct vt_catev *e;
    if (c->n == c->nAlloc) {
        int64_t nNew = c->nAlloc ? 2 * c->nAlloc : 1024;
        struct vt_catev *aNew = realloc(c->a, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        c->a = aNew;
        c->nAlloc = nNew;
    }
    e = &c->a[c->n++];
    e->ts = ts;
    e->seq = seq;
    e->bytes = bytes;
    e->acct = l->acct;
    e->rule = rule;
    e->iLib = iLib;
    e->bTensor = l->bTensor;
    return 0;
}

static int catev_cmp(const void *pa, const void *pb)
{
    const struct vt_catev *a = pa, *c = pb;
    if (a->acct != c->acct) return a->acct < c->acct ? -1 : 1;
    if (a->ts != c->ts) return a->ts < c->ts ? -1 : 1;
    return a->seq < c->seq ? -1 : a->seq > c->seq;
}

void vt__catev_sort(struct vt_catevs *c)
{
    if (c->n > 1) qsort(c->a, (size_t)c->n, sizeof *c->a, catev_cmp);
}

/* Append point (ts, series s, bytes; the cache never below 0, as a breakdown takes it) to d's curve. 0 or -1. */
static int point_add(struct vt_device *d, int64_t *pnAlloc, int64_t ts, int s, int64_t bytes)
{
    if (d->nCatPt == *pnAlloc) {
        int64_t nNew = *pnAlloc ? 2 * *pnAlloc : 256;
        struct vt_catpoint *aNew = nNew > INT32_MAX ? NULL : realloc(d->aCatPt, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        d->aCatPt = aNew;
        *pnAlloc = nNew;
    }
    d->aCatPt[d->nCatPt].ts = ts;
    d->aCatPt[d->nCatPt].series = s;
    d->aCatPt[d->nCatPt++].bytes = s == VT_CAT_CACHE && bytes < 0 ? 0 : bytes;
    return 0;
}

int vt__catcurve_make(struct vt_device *d, const struct vt_catevs *c, const int *aSeries,
                      const char (*azLib)[64], int bTensorsIn, int64_t t0, int64_t before, int64_t cache)
{
    int64_t aRun[VT_CAT_N + VT_CATLIB_MAX] = {0}, nAlloc = 0, i = 0;
    if (!(d->azCatLib = calloc(VT_CATLIB_MAX, sizeof *d->azCatLib))) return -1;
    memcpy(d->azCatLib, azLib, VT_CATLIB_MAX * sizeof *d->azCatLib);
    d->nCatLib = VT_CATLIB_MAX; /* the last: "other libraries" when there were more */
    if (before > 0 && point_add(d, &nAlloc, t0, VT_CAT_BEFORE, aRun[VT_CAT_BEFORE] = before)) return -1;
    if (cache > 0 && point_add(d, &nAlloc, t0, VT_CAT_CACHE, aRun[VT_CAT_CACHE] = cache)) return -1;
    while (i < c->n && c->a[i].acct < d->id) i++;
    for (; i < c->n && c->a[i].acct == d->id; i++) {
        const struct vt_catev *e = &c->a[i];
        int s = aSeries[e->rule];
        if (s == VT_CAT_LIB && e->iLib < 0) continue; /* a library not named: in no part of a breakdown */
        if (s == VT_CAT_LIB) s = VT_CAT_N + e->iLib;
        aRun[s] += e->bytes;
        if (point_add(d, &nAlloc, e->ts, s, aRun[s]) != 0) return -1;
        if (bTensorsIn && e->bTensor) { /* a block: the cache is the segments less the blocks in them */
            aRun[VT_CAT_CACHE] -= e->bytes;
            if (point_add(d, &nAlloc, e->ts, VT_CAT_CACHE, aRun[VT_CAT_CACHE]) != 0) return -1;
        }
    }
    return 0;
}

struct vt_bdpart vt__catcurve_part(const struct vt_device *d, int s)
{
    struct vt_bdpart p;
    memset(&p, 0, sizeof p);
    p.cat = s >= VT_CAT_N ? VT_CAT_LIB : s;
    if (s >= VT_CAT_N && s - VT_CAT_N < d->nCatLib) snprintf(p.zOwner, sizeof p.zOwner, "%s", d->azCatLib[s - VT_CAT_N]);
    return p;
}
