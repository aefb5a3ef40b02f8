/* Kernel places: when the kernels at given places of the start order began, and the period of their names (the batches of an evaluation inferred from kernels). */
#include "analysis.h"

#include <stdlib.h>

static int cmp_want_idx(const void *pa, const void *pb)
{
    const struct vt_want *a = pa, *b = pb;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_want_corr(const void *pa, const void *pb)
{
    const struct vt_want *a = pa, *b = pb;
    return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/*
 * When the kernels at the n places aW[].idx (in start order, as kernel_segments counts them)
 * began: the host time of the launch where the trace has the launch call (`api_call` with the
 * kernel's correlation id) and it is earlier, else the start on the device; -1 for a place past
 * the last kernel. A boundary between phases is a host time, as NVTX ranges are: allocations
 * are made by the host, which runs ahead of the device. One pass over the kernels and one over
 * the launch calls, however many places. Sorts aW by place; returns an SQLite code.
 */
int vt__kernels_at(sqlite3 *db, struct vt_want *aW, int n)
{
    sqlite3_stmt *p = NULL;
    int64_t k = 0;
    int w = 0, rc;
    if (n == 0) return SQLITE_OK;
    for (int i = 0; i < n; i++) aW[i].ts = aW[i].corr = -1;
    qsort(aW, (size_t)n, sizeof *aW, cmp_want_idx);
    rc = sqlite3_prepare_v2(db, "SELECT start, correlation FROM kernel ORDER BY start, id", -1, &p, NULL);
    while (rc == SQLITE_OK && w < n && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        for (; w < n && aW[w].idx == k; w++) {
            aW[w].ts = sqlite3_column_int64(p, 0);
            aW[w].corr = sqlite3_column_type(p, 1) == SQLITE_INTEGER ? sqlite3_column_int64(p, 1) : -1;
        }
        k++;
    }
    if (rc == SQLITE_DONE || rc == SQLITE_ROW) rc = SQLITE_OK;
    sqlite3_finalize(p);
    p = NULL;
    if (rc != SQLITE_OK) return rc;
    qsort(aW, (size_t)n, sizeof *aW, cmp_want_corr);
    rc = sqlite3_prepare_v2(db, "SELECT correlation, start FROM api_call WHERE correlation >= 0 AND start > 0", -1, &p,
                            NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        struct vt_want key = {0, sqlite3_column_int64(p, 0), 0}, *pW;
        int64_t launch = sqlite3_column_int64(p, 1);
        rc = SQLITE_OK;
        pW = bsearch(&key, aW, (size_t)n, sizeof *aW, cmp_want_corr);
        /* distinct places have distinct kernels: at most one wants this correlation id */
        if (pW && pW->ts >= 0 && launch < pW->ts) pW->ts = launch;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(p);
    qsort(aW, (size_t)n, sizeof *aW, cmp_want_idx);
    return rc;
}

/* When the kernel at place idx began (kernels_at), or -1 when it was not wanted or not found. */
int64_t vt__want_ts(const struct vt_want *aW, int n, int64_t idx)
{
    struct vt_want key = {idx, 0, 0};
    const struct vt_want *pW = bsearch(&key, aW, (size_t)n, sizeof *aW, cmp_want_idx);
    return pW ? pW->ts : -1;
}

/* Places of a window's names compared for a period: at most this many, spread over it. */
#define PERIOD_SAMPLES 256

/*
 * In thousandths, how many of the (up to PERIOD_SAMPLES) sampled places i of a[0..n) have a[i] == a[i + p],
 * when 9 in 10 do, else -1; with bStop, stops once more than a tenth of them differ.
 */
static int period_matches(const int64_t *a, int64_t n, int64_t p, int bStop)
{
    int64_t nCmp = n - p, step = nCmp > PERIOD_SAMPLES ? nCmp / PERIOD_SAMPLES : 1;
    int nSame = 0, nDiff = 0, nAll = (int)(nCmp / step);
    for (int64_t i = 0; i + p < n && nSame + nDiff < nAll; i += step) {
        if (a[i] == a[i + p]) nSame++;
        else if (++nDiff * 10 > nAll && bStop) return -1;
    }
    return nSame * 10 >= nAll * 9 ? (int)((int64_t)nSame * 1000 / (nAll > 0 ? nAll : 1)) : -1;
}

/* The first place of a[0..n) from which 16 names (a period's, when shorter) equal those p places later; 0 none. */
static int64_t repeat_start(const int64_t *a, int64_t n, int64_t p)
{
    int64_t want = p < 16 ? p : 16;
    for (int64_t i = 0, run = 0; i + p < n; i++) {
        run = a[i] == a[i + p] ? run + 1 : 0;
        if (run == want) return i + 1 - want;
    }
    return 0;
}

/*
 * The period of the names a[0..n) of a window, f a training forward pass's kernel count: of the periods from 16
 * and f / 8 to 2 f, the one with which most sampled names equal the name a period later (9 in 10 at least;
 * ties: the shortest), when no shorter period matches as well and the names hold two of it; 0 none.
 */
static int64_t name_period(const int64_t *a, int64_t n, int64_t f)
{
    int64_t p = 0;
    int best = -1, bestShort = -1;
    for (int64_t q = 1; q <= 2 * f && 2 * q <= n; q++) {
        int bShort = q < 16 || q * 8 < f, c = period_matches(a, n, q, 1);
        if (c >= 0 && (c = period_matches(a, n, q, 0)) > (bShort ? bestShort : best)) {
            if (bShort) bestShort = c;
            else best = c, p = q;
        }
    }
    return bestShort >= best ? 0 : p;
}

/*
 * The period of each evaluation window of aWin[0..nWin) (in time order, not overlapping) into its .p (0:
 * none): an evaluation runs the same forward pass batch after batch, so a window's kernel names repeat with
 * the period of a forward pass. Of the periods from 16 kernels and an eighth of a training forward pass's
 * count .f (which may hold a step's tail) to twice that count, the one with which most sampled names equal
 * the name a period later (9 in 10 at least; ties: the shortest), when no shorter period matches as well (a
 * run of one kernel name, a few optimizer kernels per parameter) and the window holds two of it. When the names
 * from its first place have none, after a lead of a quarter, a half or a whole forward pass; .lead: where the
 * repetition then begins (16 names equal those a period later): a window's start is a guess at the last
 * step's tail, which the optimizer's kernels lengthen after the last of accumulated micro-batches. One pass
 * over the kernels for the names. Returns an SQLite code.
 */
int vt__kernel_periods(sqlite3 *db, struct vt_ewin *aWin, int nWin)
{
    sqlite3_stmt *p = NULL;
    int64_t **aaName = NULL, k = 0;
    int w = 0, rc = SQLITE_OK;
    for (int i = 0; i < nWin; i++) aWin[i].p = aWin[i].lead = 0;
    if (nWin <= 0) return SQLITE_OK;
    if (!(aaName = calloc((size_t)nWin, sizeof *aaName))) return SQLITE_NOMEM;
    for (int i = 0; i < nWin && rc == SQLITE_OK; i++)
        if (aWin[i].n >= 4 && aWin[i].f >= 2 && !(aaName[i] = malloc(sizeof(int64_t) * (size_t)aWin[i].n))) rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "SELECT name_id FROM kernel ORDER BY start, id", -1, &p, NULL);
    while (rc == SQLITE_OK && w < nWin && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        while (w < nWin && k >= aWin[w].first + aWin[w].n) w++;
        if (w < nWin && k >= aWin[w].first && aaName[w])
            aaName[w][k - aWin[w].first] = sqlite3_column_type(p, 0) == SQLITE_INTEGER ? sqlite3_column_int64(p, 0) : -1;
        k++;
    }
    if (rc == SQLITE_DONE || rc == SQLITE_ROW) rc = SQLITE_OK;
    sqlite3_finalize(p);
    for (int i = 0; i < nWin && rc == SQLITE_OK; i++) {
        struct vt_ewin *e = &aWin[i];
        if (!aaName[i] || e->first + e->n > k) continue; /* (fewer kernels than counted: none) */
        /* from its first place; else after a lead of a quarter, a half, a whole forward pass (a step's tail
         * longer than the one assumed: the optimizer's kernels after the last of accumulated micro-batches) */
        for (int64_t lead = 0; e->p == 0 && lead <= e->f && lead < e->n; lead = lead ? 2 * lead : e->f / 4) {
            e->p = name_period(aaName[i] + lead, e->n - lead, e->f);
            if (e->p > 0 && lead > 0) /* the repetition begins at the first place from which 16 names agree
                                       * with those a period later */
                e->lead = repeat_start(aaName[i], e->n, e->p);
            if (e->f / 4 == 0) break;
        }
    }
    for (int i = 0; i < nWin; i++) free(aaName[i]);
    free(aaName);
    return rc;
}

/*
 * The batches of the evaluation windows aWin[0..nWin) whose kernel names repeat (vt__kernel_periods: .p),
 * as spans [start, end) in *paSpan (2 values each, *pnSpan spans; free it): a period of kernels from the
 * window's first (after its lead, which joins the first batch) is a batch, from the host launch of its first
 * kernel (vt__kernels_at) to the next one's, the last to the launch of the window's last kernel (what the
 * program frees after its loop is in no batch); a remainder under half a period joins the last batch.
 * Returns an SQLite code.
 */
int vt__window_batches(sqlite3 *db, const struct vt_ewin *aWin, int nWin, int64_t **paSpan, int *pnSpan)
{
    struct vt_want *aW = NULL;
    int64_t *aS = NULL;
    int nW = 0, nS = 0, rc;
    *paSpan = NULL;
    *pnSpan = 0;
    for (int i = 0; i < nWin; i++) { /* the places wanted: each batch's first but the first, the last kernel */
        for (int64_t b = aWin[i].lead + aWin[i].p; aWin[i].p > 0 && b + aWin[i].p / 2 < aWin[i].n; b += aWin[i].p) nW++;
        nW += aWin[i].p > 0;
    }
    if (nW == 0) return SQLITE_OK;
    if (!(aW = calloc((size_t)nW, sizeof *aW)) || !(aS = malloc(sizeof *aS * 2 * (size_t)nW))) {
        free(aW);
        return SQLITE_NOMEM;
    }
    nW = 0;
    for (int i = 0; i < nWin; i++) {
        if (aWin[i].p <= 0) continue;
        for (int64_t b = aWin[i].lead + aWin[i].p; b + aWin[i].p / 2 < aWin[i].n; b += aWin[i].p) aW[nW++].idx = aWin[i].first + b;
        aW[nW++].idx = aWin[i].first + aWin[i].n - 1;
    }
    rc = vt__kernels_at(db, aW, nW);
    for (int i = 0; i < nWin && rc == SQLITE_OK; i++) {
        int64_t a = aWin[i].start, last;
        if (aWin[i].p <= 0) continue;
        for (int64_t b = aWin[i].lead + aWin[i].p; b + aWin[i].p / 2 < aWin[i].n; b += aWin[i].p) {
            int64_t ts = vt__want_ts(aW, nW, aWin[i].first + b);
            if (ts <= a || ts >= aWin[i].end) continue;
            aS[2 * nS] = a;
            aS[2 * nS++ + 1] = a = ts;
        }
        last = vt__want_ts(aW, nW, aWin[i].first + aWin[i].n - 1) + 1;
        aS[2 * nS] = a;
        aS[2 * nS++ + 1] = last > a && last < aWin[i].end ? last : aWin[i].end;
    }
    free(aW);
    if (rc != SQLITE_OK) {
        free(aS);
        return rc;
    }
    *paSpan = aS;
    *pnSpan = nS;
    return SQLITE_OK;
}
