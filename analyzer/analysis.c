/* The analysis pipeline driver and the small helpers its stages share. */
#include "analysis.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "vramtrace/schema.h"

void vt__opts_default(struct vt_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = VT_FMT_TEXT;
    /* phase names before any "::", "#" or "." so that operator ranges (aten::values,
     * Optimizer.step#Adam.step) are not phases; iterations are whole names like "step",
     * "train_step", "iter 3", "batch_12" */
    o->zPhaseRe = "^[^:#.]*(train|val|eval|test)";
    o->zEvalRe = "val|eval|test|infer";
    o->zIterRe = "^([a-z]+_)?(step|iter|iteration|batch)([ _#:=-]*[0-9]+)?$";
    o->minBytes = 1 << 20;
    o->nTop = 10;
    o->failOn = -1;
}

const char *vt__sev_name(int sev)
{
    static const char *az[] = {"info", "low", "medium", "high"};
    return sev >= 0 && sev <= VT_SEV_HIGH ? az[sev] : "?";
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

/* Add a note (printf-style) shown with the trace in every report; at most 16, extra ones dropped. */
void vt__trace_note(struct vt_trace *t, const char *zFmt, ...)
{
    va_list ap;
    char zBuf[1024];
    if (t->nNote >= (int)(sizeof t->azNote / sizeof t->azNote[0])) return;
    va_start(ap, zFmt);
    vsnprintf(zBuf, sizeof zBuf, zFmt, ap);
    va_end(ap);
    t->azNote[t->nNote] = vt__strdupf("%s", zBuf);
    if (t->azNote[t->nNote]) t->nNote++;
}

/* Append a zeroed finding (unknown times, stack and device = -1); NULL when out of memory. */
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
    return f;
}

int vt__phase_at(const struct vt_trace *t, int64_t ts)
{
    int lo = 0, hi = t->nPhase; /* phases are sorted by start and do not overlap */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (t->aPhase[mid].start <= ts) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && ts < t->aPhase[lo - 1].end ? lo - 1 : -1;
}

/* See analysis.h: rising baseline test shared by the leak, spike and transfer detectors. */
int vt__trend(const int64_t *a, int n, int64_t minRise, int64_t *pRise)
{
    int64_t first = -1, prev = -1, maxDrop = 0;
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
     * still climbing in every third of the run: warm-up alone climbs only at the start */
    return nUp * 10 >= nStep * 6 || (nUp >= 3 && aThird[0] && aThird[1] && aThird[2]);
}

int64_t vt__main_peak(const struct vt_trace *t)
{
    int64_t peak = 0;
    for (int i = 0; i < t->nDev; i++)
        if (t->aDev[i].id >= 0 && t->aDev[i].peak > peak) peak = t->aDev[i].peak;
    return peak;
}

int vt__trace_findings(const struct vt_result *r, int iTrace, int *pWorst)
{
    int n = 0;
    *pWorst = -1;
    for (int k = 0; k < r->nFind; k++)
        if (r->aFind[k].trace == iTrace) {
            n++;
            if (r->aFind[k].severity > *pWorst) *pWorst = r->aFind[k].severity;
        }
    return n;
}

void vt__fmt_at(const struct vt_trace *t, int64_t ts, char *z, size_t n)
{
    if (ts < 0) snprintf(z, n, "?");
    else if (ts <= t->t0) snprintf(z, n, "0 s");
    else vt__fmt_ns(ts - t->t0, z, n);
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

/* Release everything a trace owns (closing its database if still open); *t is zeroed. */
void vt__trace_free(struct vt_trace *t)
{
    for (int i = 0; i < t->nSite; i++) free(t->aSite[i].zSite);
    for (int i = 0; i < t->nNote; i++) free(t->azNote[i]);
    free(t->aSite);
    free(t->aSiteHash);
    free(t->aDev);
    free(t->aPhase);
    free(t->aIter);
    free(t->aOom);
    free(t->aBoundary);
    free(t->aGroupHead);
    free(t->aGroupAcc);
    free(t->aGroupNext);
    if (t->pLifeIns) sqlite3_finalize(t->pLifeIns);
    if (t->db) sqlite3_close(t->db);
    memset(t, 0, sizeof *t);
}

/* Release the findings and every trace of r; *r is zeroed. */
void vt__result_free(struct vt_result *r)
{
    for (int i = 0; i < r->nFind; i++) {
        free(r->aFind[i].zTitle);
        free(r->aFind[i].zEvidence);
        free(r->aFind[i].zFix);
        free(r->aFind[i].zSite);
    }
    for (int i = 0; i < r->nTrace; i++) vt__trace_free(&r->aTrace[i]);
    free(r->aTrace);
    free(r->aFind);
    memset(r, 0, sizeof *r);
}

/*
 * Open one trace for analysis: writable unless --no-write or the file (or its
 * directory, which SQLite needs for its journal) is not writable, in which
 * case it is opened read-only and a note says so.
 */
static int open_trace(struct vt_trace *t, const struct vt_opts *o)
{
    int bWrite = !o->bNoWrite, rc;
    if (bWrite) {
        char zDir[4096];
        const char *zSlash = strrchr(t->zPath, '/');
        if (zSlash) snprintf(zDir, sizeof zDir, "%.*s", (int)(zSlash - t->zPath + 1), t->zPath);
        else snprintf(zDir, sizeof zDir, ".");
        if (access(t->zPath, F_OK) == 0 && (access(t->zPath, W_OK) != 0 || access(zDir, W_OK) != 0)) {
            bWrite = 0;
            t->bReadOnly = 1;
            vt__trace_note(t, "the trace is read-only: results were not written back into it");
        }
    }
    rc = vt__trace_open(t->zPath, bWrite, &t->db);
    if (rc != VT_EXIT_OK) return rc;
    if (bWrite) {
        /* a killed recording has no read indexes yet; failure to add them is not fatal */
        int rcIdx = vt__schema_index(t->db);
        if ((rcIdx & 0xff) == SQLITE_BUSY) {
            t->bWritten = 1; /* vt__writeback_begin meets the same lock and says so */
            return VT_EXIT_OK;
        }
        if (rcIdx != SQLITE_OK) {
            sqlite3_close(t->db);
            t->db = NULL;
            t->bReadOnly = 1;
            vt__trace_note(t, "the trace could not be written: results were not written back into it");
            return vt__trace_open(t->zPath, 0, &t->db);
        }
    }
    t->bWritten = bWrite;
    return VT_EXIT_OK;
}

/*
 * Hide rows no real trace can hold from the stages (vt__scan: the guard's views, its
 * count made in the pass that also finds what load and replay need) and say how many
 * there were. Returns a VT_EXIT code (one line printed on error).
 */
static int guard_trace(struct vt_trace *t)
{
    int64_t nHidden = 0;
    int rc = SQLITE_OK;
    /* one snapshot for every stage: the readers rely on what the pass found (time order,
     * which tables hold impossible rows), so rows a writer adds later must stay unseen.
     * With write-back, vt__writeback_begin's BEGIN IMMEDIATE right after the pass takes
     * the write lock (rows committed between the two are read unchecked: only a writer
     * still recording adds rows, and it writes possible values). */
    if (!t->bWritten) rc = sqlite3_exec(t->db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = vt__scan(t, &nHidden);
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot read trace: %s", t->zPath, sqlite3_errstr(rc));
        return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? VT_EXIT_CORRUPT : VT_EXIT_INTERNAL;
    }
    if (nHidden > 0)
        vt__trace_note(t, "%lld rows with impossible values (timestamps, sizes or addresses out of range, "
                          "or not numbers) were ignored: the trace is damaged or was not written by vramtrace",
                       (long long)nHidden);
    return VT_EXIT_OK;
}

/*
 * Run the pipeline on each path in order, stopping at the first trace that fails
 * (its one-line error already printed); findings end sorted worst first. Returns
 * a VT_EXIT code; r holds what was done and must be freed with vt__result_free.
 */
int vt__analyze(const char **azPath, int nPath, const struct vt_opts *o, struct vt_result *r)
{
    int rc = VT_EXIT_OK, i;
    memset(r, 0, sizeof *r);
    r->pOpts = o;
    r->aTrace = calloc((size_t)(nPath > 0 ? nPath : 1), sizeof *r->aTrace);
    if (!r->aTrace) return VT_EXIT_INTERNAL;
    for (i = 0; i < nPath && rc == VT_EXIT_OK; i++) {
        struct vt_trace *t = &r->aTrace[i];
        r->nTrace++;
        t->zPath = azPath[i];
        rc = open_trace(t, o);
        if (rc == VT_EXIT_OK) rc = guard_trace(t);
        if (rc == VT_EXIT_OK && t->bWritten) {
            rc = vt__writeback_begin(t);
            /* locked by a writer still recording: read one snapshot from here on */
            if (rc == VT_EXIT_OK && !t->bWritten) sqlite3_exec(t->db, "BEGIN", NULL, NULL, NULL);
        }
        if (rc == VT_EXIT_OK) rc = vt__load(t, o);
        if (rc == VT_EXIT_OK) rc = vt__phases(t, o);
        if (rc == VT_EXIT_OK) rc = vt__replay(t, o);
        if (rc == VT_EXIT_OK) rc = vt__transfers(t);
        if (rc == VT_EXIT_OK) rc = vt__detect_leak(r, i);
        if (rc == VT_EXIT_OK) rc = vt__detect_retained(r, i);
        if (rc == VT_EXIT_OK) rc = vt__detect_spike(r, i);
        if (rc == VT_EXIT_OK) rc = vt__detect_transfer(r, i);
        if (rc == VT_EXIT_OK) rc = vt__detect_oom(r, i);
        if (rc == VT_EXIT_OK && t->bWritten) rc = vt__writeback_end(r, i);
        if (t->db) {
            if (t->pLifeIns) sqlite3_finalize(t->pLifeIns);
            t->pLifeIns = NULL;
            if (rc != VT_EXIT_OK || !t->bWritten) sqlite3_exec(t->db, "ROLLBACK", NULL, NULL, NULL);
            sqlite3_close(t->db);
            t->db = NULL;
        }
    }
    vt__findings_sort(r);
    return rc;
}
