/* A set of disjoint address ranges, added and removed piecewise (the mapped pages of expandable segments). */
#include "rangeset.h"

#include <stdlib.h>
#include <string.h>

/* Index of the first range whose end is at or after a (where [a, ...) would join or follow). */
static size_t first_reaching(const struct vt__rangeset *s, int64_t a)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->aR[2 * mid + 1] < a) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Room for nMore more ranges. 0 or -1. */
static int reserve(struct vt__rangeset *s, size_t nMore)
{
    size_t nNew;
    int64_t *aNew;
    if (s->n + nMore <= s->nAlloc) return 0;
    nNew = s->nAlloc ? 2 * s->nAlloc : 16;
    while (nNew < s->n + nMore) nNew *= 2;
    if (!(aNew = realloc(s->aR, 2 * nNew * sizeof *aNew))) return -1;
    s->aR = aNew;
    s->nAlloc = nNew;
    return 0;
}

/* Replace ranges [i, j) by the nNew ranges of aNew (room reserved). */
static void splice(struct vt__rangeset *s, size_t i, size_t j, const int64_t *aNew, size_t nNew)
{
    memmove(&s->aR[2 * (i + nNew)], &s->aR[2 * j], 2 * (s->n - j) * sizeof *s->aR);
    memcpy(&s->aR[2 * i], aNew, 2 * nNew * sizeof *s->aR);
    s->n = s->n - (j - i) + nNew;
}

int vt__rangeset_add(struct vt__rangeset *s, int64_t a, int64_t n)
{
    int64_t r[2] = {a, a + n};
    size_t i = first_reaching(s, a), j = i;
    if (reserve(s, 1) != 0) return -1;
    for (; j < s->n && s->aR[2 * j] <= r[1]; j++) { /* overlapping or touching: joined */
        if (s->aR[2 * j] < r[0]) r[0] = s->aR[2 * j];
        if (s->aR[2 * j + 1] > r[1]) r[1] = s->aR[2 * j + 1];
    }
    splice(s, i, j, r, 1);
    return 0;
}

int64_t vt__rangeset_remove(struct vt__rangeset *s, int64_t a, int64_t n)
{
    const int64_t e = a + n;
    int64_t r[4], held = 0;
    size_t i = first_reaching(s, a + 1), j = i, nKeep = 0; /* (a range ending at a holds none of it) */
    if (reserve(s, 1) != 0) return -1;
    for (; j < s->n && s->aR[2 * j] < e; j++) {
        const int64_t ra = s->aR[2 * j], re = s->aR[2 * j + 1];
        held += (re < e ? re : e) - (ra > a ? ra : a);
        if (ra < a) r[2 * nKeep] = ra, r[2 * nKeep + 1] = a, nKeep++; /* its head stays */
        if (re > e) r[2 * nKeep] = e, r[2 * nKeep + 1] = re, nKeep++; /* its tail stays */
    }
    splice(s, i, j, r, nKeep);
    return held;
}

int vt__rangeset_gaps(const struct vt__rangeset *s, int64_t a, int64_t n, int (*xGap)(void *, int64_t, int64_t),
                      void *pArg)
{
    const int64_t e = a + n;
    int rc = 0;
    for (size_t i = first_reaching(s, a + 1); rc == 0 && a < e; i++) {
        const int64_t next = i < s->n && s->aR[2 * i] < e ? s->aR[2 * i] : e; /* where the next held part starts */
        if (next > a) rc = xGap(pArg, a, next - a);
        if (i >= s->n) break;
        if (s->aR[2 * i + 1] > a) a = s->aR[2 * i + 1];
    }
    return rc;
}

void vt__rangeset_free(struct vt__rangeset *s)
{
    free(s->aR);
    memset(s, 0, sizeof *s);
}
