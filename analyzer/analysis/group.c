/* One finding per root cause: findings of the same kind, site, phase and verdict merged across repeats and ranks. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

/*
 * The title of a finding with its figures taken out ("+1.80 GiB over 39 iterations" and
 * "+912 MiB over 40 iterations" read alike): each number, with the unit after it, becomes
 * '#'. Into z (size n).
 */
static void title_class(const char *zTitle, char *z, size_t n)
{
    static const char *const azUnit[] = {" TiB", " GiB", " MiB", " KiB", " B", " ms", " us", " ns", " s", "%"};
    size_t k = 0;
    if (!zTitle) zTitle = "";
    while (*zTitle && k + 1 < n) {
        if (*zTitle >= '0' && *zTitle <= '9') {
            while ((*zTitle >= '0' && *zTitle <= '9') || *zTitle == '.' || *zTitle == ',') zTitle++;
            for (size_t u = 0; u < sizeof azUnit / sizeof azUnit[0]; u++) {
                size_t m = strlen(azUnit[u]);
                char c;
                if (strncmp(zTitle, azUnit[u], m)) continue;
                c = zTitle[m];
                if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z')) zTitle += m; /* not " s" of " steps" */
                break;
            }
            z[k++] = '#';
        } else {
            z[k++] = *zTitle++;
        }
    }
    z[k] = 0;
}

/* A finding's grouping key: kind, site, phase, title class, separated by a byte no text holds. */
char *vt__finding_key(const struct vt_finding *f)
{
    char zClass[512];
    title_class(f->zTitle, zClass, sizeof zClass);
    return vt__strdupf("%s\x1f%s\x1f%s\x1f%s", f->zKind, f->zSite ? f->zSite : "", f->zPhase, zClass);
}

/* A finding with its key, sorted by key, then worst first (severity, bytes), then trace and order. */
struct keyed {
    char *zKey;
    int i;
    const struct vt_finding *f;
};

static int cmp_keyed(const void *pa, const void *pb)
{
    const struct keyed *a = pa, *b = pb;
    int c = strcmp(a->zKey, b->zKey);
    if (c) return c;
    if (a->f->severity != b->f->severity) return b->f->severity - a->f->severity;
    if (a->f->bytes != b->f->bytes) return a->f->bytes < b->f->bytes ? 1 : -1;
    if (a->f->trace != b->f->trace) return a->f->trace - b->f->trace;
    return a->i - b->i;
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* A trace a group occurred on and the first time there; sorted by trace. */
struct on {
    int trace;
    int64_t ts;
};

static int cmp_on(const void *pa, const void *pb)
{
    const struct on *a = pa, *b = pb;
    return a->trace - b->trace;
}

/*
 * Merge the run a[0..n) of findings with one key into its worst (a[0]); any of them may be a
 * group already (its traces, times and bytes are taken in). The worst receives the traces they
 * occurred on with the first time on each, how many findings they stand for and the spread of
 * their bytes, and, of those on the worst's trace, their events (counts added) and the first and
 * last time. The others are released (their slots marked by zKind NULL). Returns 0, or -1 when
 * out of memory (nothing changed then).
 */
static int merge_run(struct vt_finding *aFind, const struct keyed *a, int n)
{
    struct vt_finding *w = &aFind[a[0].i];
    int nB = 0, nO = 0, nT = 0;
    int64_t *aB, *aTs;
    struct on *aO;
    int *aT;
    for (int k = 0; k < n; k++) {
        nB += a[k].f->aBytes ? a[k].f->nSame : 1;
        nO += a[k].f->aTraces ? a[k].f->nTraces : 1;
    }
    aB = malloc(sizeof *aB * (size_t)nB);
    aO = malloc(sizeof *aO * (size_t)nO);
    aT = malloc(sizeof *aT * (size_t)nO);
    aTs = malloc(sizeof *aTs * (size_t)nO);
    if (!aB || !aO || !aT || !aTs) {
        free(aB);
        free(aO);
        free(aT);
        free(aTs);
        return -1;
    }
    nB = nO = 0;
    for (int k = 0; k < n; k++) {
        const struct vt_finding *f = a[k].f;
        if (f->aBytes) {
            memcpy(aB + nB, f->aBytes, sizeof *aB * (size_t)f->nSame);
            nB += f->nSame;
        } else {
            aB[nB++] = f->bytes;
        }
        for (int m = 0; m < (f->aTraces ? f->nTraces : 1); m++) {
            aO[nO].trace = f->aTraces ? f->aTraces[m] : f->trace;
            aO[nO].ts = vt__finding_first_on(f, aO[nO].trace);
            nO++;
        }
        if (f->trace == w->trace && k > 0) { /* repeats in the worst's process: their events and times too */
            w->count += f->count;
            if (f->firstTs >= 0 && (w->firstTs < 0 || f->firstTs < w->firstTs)) w->firstTs = f->firstTs;
            if (f->lastTs > w->lastTs) w->lastTs = f->lastTs;
        }
    }
    qsort(aB, (size_t)nB, sizeof *aB, cmp_i64);
    qsort(aO, (size_t)nO, sizeof *aO, cmp_on);
    for (int k = 0; k < nO; k++) { /* one entry per trace, its earliest known time */
        if (nT > 0 && aT[nT - 1] == aO[k].trace) {
            if (aO[k].ts >= 0 && (aTs[nT - 1] < 0 || aO[k].ts < aTs[nT - 1])) aTs[nT - 1] = aO[k].ts;
            continue;
        }
        aT[nT] = aO[k].trace;
        aTs[nT++] = aO[k].ts;
    }
    free(aO);
    free(w->aTraces);
    free(w->aTraceTs);
    free(w->aBytes);
    w->nSame = nB;
    w->bytesMin = aB[0];
    w->bytesMed = aB[(nB - 1) / 2];
    w->bytesMax = aB[nB - 1];
    w->aBytes = aB;
    w->aTraces = aT;
    w->aTraceTs = aTs;
    w->nTraces = nT;
    for (int k = 1; k < n; k++) {
        vt__finding_free(&aFind[a[k].i]);
        aFind[a[k].i].zKind = NULL;
    }
    return 0;
}

int vt__findings_group(struct vt_result *r)
{
    struct keyed *a;
    int rc = 0, nAll = r->nFind, n = 0, i, j;
    if (nAll < 2) return 0;
    a = calloc((size_t)nAll, sizeof *a);
    if (!a) return -1;
    for (i = 0; i < nAll; i++) {
        a[i].i = i;
        a[i].f = &r->aFind[i];
        a[i].zKey = vt__finding_key(&r->aFind[i]);
        if (!a[i].zKey) rc = -1;
    }
    if (rc == 0) {
        qsort(a, (size_t)nAll, sizeof *a, cmp_keyed);
        for (i = 0; i < nAll && rc == 0; i = j) {
            for (j = i + 1; j < nAll && !strcmp(a[i].zKey, a[j].zKey);) j++;
            if (j - i > 1) rc = merge_run(r->aFind, a + i, j - i);
        }
    }
    for (i = 0; i < nAll; i++) /* the merged ones' slots closed up, the rest in their order */
        if (r->aFind[i].zKind) r->aFind[n++] = r->aFind[i];
    r->nFind = n;
    for (i = 0; i < nAll; i++) free(a[i].zKey);
    free(a);
    return rc;
}

/* The rank of trace t as a number, or -1 when it has none or it is not a number. */
static long rank_number(const struct vt_trace *t)
{
    char *zEnd;
    long v;
    if (!t->f.zRank[0]) return -1;
    v = strtol(t->f.zRank, &zEnd, 10);
    return *zEnd || v < 0 ? -1 : v;
}

/* Append to z (size n, NUL-terminated) what zFmt says; the text is cut at the end of z. */
#define APPEND(...)                                                                                                   \
    do {                                                                                                             \
        size_t k_ = strlen(z);                                                                                       \
        if (k_ + 1 < n) snprintf(z + k_, n - k_, __VA_ARGS__);                                                       \
    } while (0)

int vt__result_one_job(const struct vt_result *r)
{
    int bRanks = 1;
    const char *zCmd = NULL;
    for (int i = 0; i < r->nTrace; i++)
        if (r->aTrace[i].f.fig.bOtherRuns) return 0; /* runs apart in time: not one job's processes */
    for (int i = 0; i < r->nTrace; i++) bRanks &= rank_number(&r->aTrace[i]) >= 0;
    if (bRanks) return 1;
    for (int i = 0; i < r->nTrace; i++) {
        const char *z = r->aTrace[i].f.zCmd;
        if (!z[0]) continue;
        if (zCmd && strcmp(zCmd, z) != 0) return 0;
        zCmd = z;
    }
    return 1;
}

const char *vt__fmt_process(const struct vt_trace *t, char *z, size_t n)
{
    return vt__read_process_name(&t->f, z, n);
}

void vt__fmt_ranks(const struct vt_result *r, const struct vt_finding *f, char *z, size_t n)
{
    int nT = f->aTraces ? f->nTraces : 1, bRanks = 1, nShown = 0;
    const int *aT = f->aTraces ? f->aTraces : &f->trace;
    long *aR;
    z[0] = 0;
    if (r->nTrace < 2 || n == 0) return;
    for (int k = 0; k < r->nTrace; k++)
        if (rank_number(&r->aTrace[k]) < 0) bRanks = 0;
    if (nT == r->nTrace) {
        snprintf(z, n, "all %d %s", r->nTrace, bRanks ? "ranks" : "processes");
        return;
    }
    if (!bRanks) { /* processes without ranks: named by pid */
        if (nT == 1) {
            char zP[300];
            snprintf(z, n, "%s only", vt__fmt_process(&r->aTrace[aT[0]], zP, sizeof zP));
        }
        else snprintf(z, n, "%d of %d processes", nT, r->nTrace);
        return;
    }
    if (nT == 1) {
        snprintf(z, n, "rank %ld only", rank_number(&r->aTrace[aT[0]]));
        return;
    }
    aR = malloc(sizeof *aR * (size_t)nT);
    if (!aR) { /* the count alone */
        snprintf(z, n, "%d of %d ranks", nT, r->nTrace);
        return;
    }
    for (int k = 0; k < nT; k++) aR[k] = rank_number(&r->aTrace[aT[k]]);
    for (int k = 1; k < nT; k++) /* insertion sort: traces are in path order, ranks nearly so */
        for (int m = k; m > 0 && aR[m - 1] > aR[m]; m--) {
            long x = aR[m];
            aR[m] = aR[m - 1];
            aR[m - 1] = x;
        }
    APPEND("ranks ");
    for (int k = 0; k < nT;) { /* runs of consecutive ranks as "a-b", at most 8 of them */
        int e = k;
        while (e + 1 < nT && aR[e + 1] == aR[e] + 1) e++;
        if (nShown == 8) {
            APPEND(", ...");
            break;
        }
        if (e > k) APPEND("%s%ld-%ld", nShown ? ", " : "", aR[k], aR[e]);
        else APPEND("%s%ld", nShown ? ", " : "", aR[k]);
        nShown++;
        k = e + 1;
    }
    APPEND(" (%d of %d)", nT, r->nTrace);
    free(aR);
}

const char *vt__fmt_finding_bytes(const struct vt_finding *f, char *z, size_t n)
{
    if (f->bytes < 0) snprintf(z, n, "size unknown");
    else vt__fmt_bytes(f->bytes, z, n);
    return z;
}

void vt__fmt_spread(const struct vt_finding *f, char *z, size_t n)
{
    char zMin[32], zMed[32], zMax[32], zHow[64];
    int nT;
    if (n == 0) return;
    z[0] = 0;
    if (f->nSame < 2) return;
    vt__fmt_bytes(f->bytesMin, zMin, sizeof zMin);
    vt__fmt_bytes(f->bytesMed, zMed, sizeof zMed);
    vt__fmt_bytes(f->bytesMax, zMax, sizeof zMax);
    nT = f->aTraces ? f->nTraces : 1;
    if (nT == f->nSame) snprintf(zHow, sizeof zHow, "once in each of %d processes", nT);
    else if (nT == 1) snprintf(zHow, sizeof zHow, "%d times", f->nSame);
    else snprintf(zHow, sizeof zHow, "%d times in %d processes", f->nSame, nT);
    if (f->bytesMax < 0) snprintf(z, n, "%s, sizes unknown", zHow);
    else if (f->bytesMin < 0) snprintf(z, n, "%s: up to %s (some of unknown size)", zHow, zMax);
    else if (f->bytesMin == f->bytesMax) snprintf(z, n, "%s, %s each", zHow, zMax);
    else snprintf(z, n, "%s: %s min, %s median, %s max", zHow, zMin, zMed, zMax);
}
