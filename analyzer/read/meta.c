/* What a trace says about itself: meta, devices, its time range, and the notes every reader shows. */
#include "read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "vramtrace/schema.h"

void vt__read_note(struct vt_tracefile *f, const char *zFmt, ...)
{
    va_list ap;
    char zBuf[1024];
    if (f->nNote >= (int)(sizeof f->azNote / sizeof f->azNote[0])) return;
    va_start(ap, zFmt);
    vsnprintf(zBuf, sizeof zBuf, zFmt, ap);
    va_end(ap);
    f->azNote[f->nNote] = vt__strdupf("%s", zBuf);
    if (f->azNote[f->nNote]) f->nNote++;
}

const struct vt_devinfo *vt__read_device(const struct vt_tracefile *f, int id)
{
    for (int i = 0; i < f->nDev; i++)
        if (f->aDev[i].id == id) return &f->aDev[i];
    return NULL;
}

/* meta(key) of f into z (size n), empty when absent. */
static void meta_copy(const struct vt_tracefile *f, const char *zKey, char *z, size_t n)
{
    const char *zValue = vt__read_meta_value(f, zKey);
    snprintf(z, n, "%s", zValue ? zValue : "");
}

const char *vt__read_process_name(const struct vt_tracefile *f, char *z, size_t n)
{
    const char *zName = f->zPath ? strrchr(f->zPath, '/') : NULL;
    if (n == 0) return z;
    zName = zName ? zName + 1 : f->zPath ? f->zPath : "?";
    if (f->zPid[0]) snprintf(z, n, "pid %s%s%s", f->zPid, f->zRank[0] ? ", rank " : "", f->zRank);
    else snprintf(z, n, "%s%s%s", zName, f->zRank[0] ? ", rank " : "", f->zRank);
    return z;
}

int64_t vt__read_wall(const struct vt_tracefile *f, int64_t ts)
{
    int64_t anchorCupti = vt__read_meta_int(f, "clock_anchor_cupti_ns"), anchorWall = vt__read_meta_int(f, "clock_anchor_wall_ns");
    if (ts < 0 || anchorCupti < 0 || anchorWall < 0) return -1;
    return ts - anchorCupti + anchorWall;
}

/* The devices, by id. An SQLite code. */
static int read_devices(struct vt_tracefile *f)
{
    sqlite3_stmt *p = NULL;
    int rc = sqlite3_prepare_v2(f->db, "SELECT id, name, total_bytes FROM device ORDER BY id", -1, &p, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        struct vt_devinfo *aNew = realloc(f->aDev, sizeof *aNew * (size_t)(f->nDev + 1)), *d;
        const char *zName = (const char *)sqlite3_column_text(p, 1);
        rc = SQLITE_OK;
        if (!aNew) {
            rc = SQLITE_NOMEM;
            break;
        }
        f->aDev = aNew;
        d = &aNew[f->nDev++];
        d->id = sqlite3_column_int(p, 0);
        snprintf(d->zName, sizeof d->zName, "%s", zName ? zName : "");
        d->totalBytes = sqlite3_column_type(p, 2) == SQLITE_INTEGER ? sqlite3_column_int64(p, 2) : -1;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(p);
    return rc;
}

/* Fold [a, b] (-1: unknown) into the trace's time range. */
static void bound(struct vt_tracefile *f, int64_t a, int64_t b)
{
    if (a <= 0) return;
    if (b < a) b = a;
    if (!f->bTimes || a < f->t0) f->t0 = a;
    if (!f->bTimes || b > f->t1) f->t1 = b;
    f->bTimes = 1;
}

/*
 * The trace's time range: every timed table's events with known times (a time of 0 or NULL
 * is unknown) through the guard, the large tables' from the scan's pass, the small ones' from
 * the scan's read of each (guard.c). buffer_use (launch times of uses already counted as
 * kernels) adds nothing.
 */
static void read_bounds(struct vt_tracefile *f)
{
    f->bTimes = 0;
    f->t0 = f->t1 = 0;
    f->nNoTime = 0;
    for (int k = 0; k < VT_T_N; k++) {
        if (k != VT_T_USE) bound(f, f->aT[k].t0, f->aT[k].t1);
        f->nNoTime += f->aT[k].nNoTime;
    }
    for (int i = 0; i < VT_SMALL_N; i++) {
        bound(f, f->aSmall[i].t0, f->aSmall[i].t1);
        f->nNoTime += f->aSmall[i].nNoTime;
    }
}

/*
 * When the trace's GPU activity stops early: meta cupti_takeover_ns (another CUPTI client took the
 * activity buffers over; cupti_takeover_by names it when the tracer saw it start) or cupti_fatal_error_ns (CUPTI
 * finalized itself), the earlier of the two.
 */
static void read_partial(struct vt_tracefile *f)
{
#define MISSING " (kernels, copies, sets, CUPTI's allocation records, NVTX ranges) is missing from then on, while API " \
                "calls (allocations and frees through the CUDA API, OOMs, their call sites) are complete"
    static const struct {
        const char *zKey, *zWhy;
    } aCause[] = {
        {"cupti_takeover_ns", "another CUPTI client (torch.profiler/Kineto, Nsight) took the activity buffers over: "
                              "GPU activity" MISSING},
        {"cupti_fatal_error_ns", "CUPTI reported a fatal error and stopped: GPU activity" MISSING},
        /* before the mark: where one commit crossed both at once, nothing was written from then on */
        {"size_limit_reached_ns", "the trace reached its size bound (VRAMTRACE_MAX_BYTES): nothing was written "
                                  "from then on"},
        {"size_limit_thin_ns", "the trace neared its size bound (VRAMTRACE_MAX_BYTES): only allocations, frees, "
                               "pool events and OOMs were written from then on"},
    };
    f->partialFrom = -1;
    f->zPartialWhy[0] = 0;
    /* stored as CUPTI-clock ns like every absolute time; the earliest cause is the one to say (on a tie the
     * one listed first) */
    for (size_t i = 0; i < sizeof aCause / sizeof aCause[0]; i++) {
        int64_t t = vt__read_meta_int(f, aCause[i].zKey);
        if (t < 0 || (f->partialFrom >= 0 && t >= f->partialFrom)) continue;
        f->partialFrom = t;
        snprintf(f->zPartialWhy, sizeof f->zPartialWhy, "%s", aCause[i].zWhy);
        if (i == 0) { /* the client the tracer saw start (meta cupti_takeover_by), when it knows it */
            char zBy[48]; /* the tracer writes at most 47 characters */
            meta_copy(f, "cupti_takeover_by", zBy, sizeof zBy);
            if (zBy[0])
                snprintf(f->zPartialWhy, sizeof f->zPartialWhy, "%s took the activity buffers over: GPU activity" MISSING,
                         zBy);
        }
    }
    f->windowStart = vt__read_meta_int(f, "config.start_after_ns");
    f->windowStop = vt__read_meta_int(f, "config.stop_after_ns");
#undef MISSING
}

/*
 * The windows in which CUPTI was lent to the job's own profiler (meta
 * cupti_lend.N.FIELD, N from 1), into f->aLend in window order. Returns an
 * SQLite code.
 */
static int read_lends(struct vt_tracefile *f)
{
    sqlite3_stmt *p = NULL;
    int rc = sqlite3_prepare_v2(f->db,
                                "SELECT CAST(substr(key, 12, instr(substr(key, 12), '.') - 1) AS INTEGER) AS n,"
                                " substr(key, 12 + instr(substr(key, 12), '.')), value FROM meta"
                                " WHERE key GLOB 'cupti_lend.[1-9]*.*' ORDER BY n",
                                -1, &p, NULL);
    int64_t nLast = -1;
    while (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        int64_t n = sqlite3_column_int64(p, 0), v;
        const char *zField = (const char *)sqlite3_column_text(p, 1), *zVal = (const char *)sqlite3_column_text(p, 2);
        struct vt_lend *w;
        char *zEnd;
        rc = SQLITE_OK;
        if (n <= 0 || !zField || !zVal) continue;
        if (n != nLast) {
            struct vt_lend *aNew = realloc(f->aLend, sizeof *aNew * (size_t)(f->nLend + 1));
            if (!aNew) {
                rc = SQLITE_NOMEM;
                break;
            }
            f->aLend = aNew;
            w = &f->aLend[f->nLend++];
            memset(w, 0, sizeof *w);
            w->from = w->until = w->apiFrom = w->apiUntil = -1;
            nLast = n;
        }
        w = &f->aLend[f->nLend - 1];
        v = strtoll(zVal, &zEnd, 10);
        if (*zEnd || !zVal[0] || v < 0) v = -1; /* a time that is not a whole number is unknown */
        if (!strcmp(zField, "client")) snprintf(w->zClient, sizeof w->zClient, "%s", zVal);
        else if (!strcmp(zField, "api_held_by")) snprintf(w->zApiHeldBy, sizeof w->zApiHeldBy, "%s", zVal);
        else if (!strcmp(zField, "from_ns")) w->from = v;
        else if (!strcmp(zField, "until_ns")) w->until = v;
        else if (!strcmp(zField, "api_from_ns")) w->apiFrom = v;
        else if (!strcmp(zField, "api_until_ns")) w->apiUntil = v;
    }
    sqlite3_finalize(p);
    /* a window without a start says nothing it can be read by */
    for (int i = 0; i < f->nLend; i++)
        if (f->aLend[i].from < 0) {
            memmove(&f->aLend[i], &f->aLend[i + 1], sizeof f->aLend[0] * (size_t)(f->nLend - i - 1));
            f->nLend--, i--;
        }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int vt__read_lent_during(const struct vt_tracefile *f, int64_t a, int64_t b)
{
    for (int i = 0; i < f->nLend; i++) {
        const struct vt_lend *w = &f->aLend[i];
        if ((b < 0 || w->from <= b) && (a < 0 || w->until < 0 || w->until >= a)) return 1;
    }
    return 0;
}

/* Time t (absolute ns) after the trace's start, for people; "the end" for -1. */
static const char *after_start(const struct vt_tracefile *f, int64_t t, char *z, size_t n)
{
    if (t < 0) return "the end";
    return vt__fmt_ns(f->bTimes && t > f->t0 ? t - f->t0 : 0, z, n);
}

/*
 * The notes of the windows CUPTI was lent to the job's profiler: GPU activity
 * unknown in them (the first few named, the total), and API calls unknown
 * while another client kept CUPTI's only subscription.
 */
static void lend_notes(struct vt_tracefile *f)
{
    char zList[320], zA[32], zB[32], zT[32], zApi[96];
    size_t n = 0;
    int64_t total = 0, apiBack = 0, end = f->bTimes ? f->t1 : -1;
    char zTimes[24];
    int i, nShown = 0, bOpen = 0, bApiKept = 0;
    if (!f->nLend) return;
    zList[0] = 0;
    for (i = 0; i < f->nLend; i++) {
        const struct vt_lend *w = &f->aLend[i];
        int64_t until = w->until >= 0 ? w->until : end;
        if (until > w->from) total += until - w->from;
        if (w->apiFrom >= 0 && w->apiUntil > w->apiFrom) apiBack += w->apiUntil - w->apiFrom;
        bOpen |= w->until < 0;
        bApiKept |= w->apiFrom >= 0 && w->apiUntil < 0;
        if (nShown < 4 && n < sizeof zList) {
            n += (size_t)snprintf(zList + n, sizeof zList - n, "%s%s to %s", nShown ? ", " : "",
                                  after_start(f, w->from, zA, sizeof zA), after_start(f, w->until, zB, sizeof zB));
            nShown++;
        }
    }
    if (f->nLend > nShown && n < sizeof zList)
        snprintf(zList + n, sizeof zList - n, " and %d more", f->nLend - nShown);
    zApi[0] = 0;
    if (apiBack > 0) /* the subscription lent while the profiler started, then back */
        snprintf(zApi, sizeof zApi, "; API calls were not recorded either for %s while it started",
                 vt__fmt_ns(apiBack, zT, sizeof zT));
    if (f->nLend == 1) snprintf(zTimes, sizeof zTimes, "once");
    else snprintf(zTimes, sizeof zTimes, "%d times", f->nLend);
    vt__read_note(f, "CUPTI was lent to %s (the job's own profiler) %s: GPU activity (kernels, copies, sets, "
                     "CUPTI's allocation records, NVTX ranges) is unknown, not absent, from %s after the start (%s%s "
                     "in all)%s; %slive memory, peaks and findings do not cover those windows",
                  f->aLend[0].zClient[0] ? f->aLend[0].zClient : "another CUPTI client", zTimes, zList,
                  bOpen ? "at least " : "", vt__fmt_ns(total, zA, sizeof zA), zApi,
                  bApiKept ? "" : "allocations made through the CUDA API then are in api_call, but ");
    for (i = 0; i < f->nLend; i++) {
        const struct vt_lend *w = &f->aLend[i];
        if (w->apiFrom < 0 || w->apiUntil >= 0) continue; /* none, or back (said above) */
        vt__read_note(f, "API calls (allocations and frees through the CUDA API, OOMs, call sites) were not recorded "
                         "from %s after the start to %s: %s kept CUPTI's only subscription; allocations and frees "
                         "in that time come from CUPTI's own records (outside the profiler's windows), without call "
                         "sites, and OOMs then are not known",
                      after_start(f, w->apiFrom, zA, sizeof zA), after_start(f, w->apiUntil, zB, sizeof zB),
                      w->zApiHeldBy[0] ? w->zApiHeldBy : w->zClient[0] ? w->zClient : "another CUPTI client");
    }
}

/*
 * The note of a trace whose CUPTI was one the tracer's record layouts did not
 * know for every kind (meta cupti_kinds_reduced, "KINDS: why"): those kinds'
 * records were not read.
 */
static void reduced_note(struct vt_tracefile *f)
{
    char z[512], zCupti[32];
    meta_copy(f, "cupti_kinds_reduced", z, sizeof z);
    meta_copy(f, "cupti_version", zCupti, sizeof zCupti);
    if (z[0])
        vt__read_note(f, "recorded with CUPTI %s, whose activity record layouts the tracer did not know for every "
                         "kind: %s; allocations and frees made through CUDA calls are still in api_call, but "
                         "findings that need the missing records are incomplete (record with a vramtrace that "
                         "knows this CUPTI)",
                      zCupti[0] ? zCupti : "?", z);
}

/*
 * The note of a trace recorded as one of several CUPTI subscribers (meta
 * cupti_subscription "several: ..."): other CUPTI tools recorded beside it,
 * nothing was lent or taken over.
 */
static void subscription_note(struct vt_tracefile *f)
{
    char z[320];
    meta_copy(f, "cupti_subscription", z, sizeof z);
    if (!strncmp(z, "several:", 8))
        vt__read_note(f, "recorded as one of several CUPTI subscribers (CUPTI's multi-subscriber mode, 13.3 and "
                         "later): other CUPTI tools in the job (torch.profiler, Nsight) had their own records beside "
                         "the trace, nothing was lent to them or taken over by them; a tool on CUPTI's "
                         "single-subscriber API was refused by CUPTI in that mode");
}

/* ns from the one time origin (figures.h), which a reader of several traces sets after a note was made */
static int64_t from_origin(const struct vt_tracefile *f, int64_t ts)
{
    return f->bTimes && ts > f->fig.origin ? ts - f->fig.origin : 0;
}

char *vt__read_partial_at(const struct vt_tracefile *f, char *z, size_t n)
{
    char zT[32], zM[32];
    z[0] = 0;
    if (f->partialFrom < 0) return z;
    if (f->partialMark > f->partialFrom)
        snprintf(z, n, "partial from %s after the start (its last event; the cause marked at %s)",
                 vt__fmt_ns(from_origin(f, f->partialFrom), zT, sizeof zT), vt__fmt_ns(from_origin(f, f->partialMark), zM, sizeof zM));
    else
        snprintf(z, n, "partial from %s after the start", vt__fmt_ns(from_origin(f, f->partialFrom), zT, sizeof zT));
    return z;
}

void vt__read_note_partial(struct vt_tracefile *f)
{
    char zAt[128], *z;
    if (f->partialFrom < 0) return;
    z = vt__strdupf("%s trace %s: %s; findings that depend on what is missing stop there", "partial",
                    vt__read_partial_at(f, zAt, sizeof zAt) + 8, f->zPartialWhy);
    if (!z) return;
    if (f->iNotePartial > 0 && f->iNotePartial <= f->nNote) {
        free(f->azNote[f->iNotePartial - 1]);
        f->azNote[f->iNotePartial - 1] = z;
    } else if (f->nNote < (int)(sizeof f->azNote / sizeof f->azNote[0])) {
        f->azNote[f->nNote++] = z;
        f->iNotePartial = f->nNote;
    } else {
        free(z);
    }
}

/* The notes about how the trace was recorded, and how it was read, that every reader shows. */
static void recording_notes(struct vt_tracefile *f, const char *zKernelArgs)
{
    if (f->kernelSummaryFrom >= 0) {
        char zA[32], zP[32];
        int64_t at = f->bTimes && f->kernelSummaryFrom > f->t0 ? f->kernelSummaryFrom - f->t0 : 0;
        vt__fmt_ns(f->kernelPeriod, zP, sizeof zP);
        vt__read_note(f, "recorded in the always-on mode (record --kernels summary): from %s after the start, kernels "
                         "are summaries per %s and kernel name (%lld kernels in kernel_summary), their launch calls "
                         "are not recorded, and kernel-argument uses are each address's first and last per %s; "
                         "allocations, frees, copies, sets, NVTX ranges and OOMs are complete, so leaks, peaks, idle "
                         "allocations, pageable copies and OOMs hold for the whole run, while phases inferred from "
                         "kernel names and copy/compute overlap cover only the time before",
                      vt__fmt_ns(at, zA, sizeof zA), zP, (long long)(f->nKernelSummarized > 0 ? f->nKernelSummarized : 0),
                      zP);
    }
    static const char *const azNoWrite[] = {
        [VT_NOWRITE_IMPORTED] = "results were not written back: this is another tool's file, read through a "
                                "temporary import; 'vramtrace import FILE -o TRACE.db' makes a trace that --save can "
                                "write into",
        [VT_NOWRITE_COPY] = "results were not written back: the trace was read from a pipe or standard input (a "
                            "temporary copy)",
        [VT_NOWRITE_READONLY] = "the trace is read-only: results were not written back into it",
        [VT_NOWRITE_LOCKED] = "the trace is locked by another process (still being recorded?): results were not "
                              "written back into it",
        [VT_NOWRITE_FAILED] = "the trace could not be written: results were not written back into it",
    };
    if (f->noWrite > 0 && f->noWrite < (int)(sizeof azNoWrite / sizeof azNoWrite[0]))
        vt__read_note(f, "%s", azNoWrite[f->noWrite]);
    if (f->windowStart > 0 || f->windowStop > 0) {
        char zA[32], zB[32];
        vt__read_note(f, "recorded in a window: kernels, copies, sets, API calls and NVTX ranges only from %s to %s "
                         "after the start (VRAMTRACE_START_AFTER / VRAMTRACE_STOP_AFTER); allocations, frees and "
                         "OOMs throughout, so live memory and peaks hold for the whole run",
                      f->windowStart > 0 ? vt__fmt_ns(f->windowStart, zA, sizeof zA) : "0 s",
                      f->windowStop > 0 ? vt__fmt_ns(f->windowStop, zB, sizeof zB) : "the end");
    }
    vt__read_note_partial(f);
    if (f->nHidden > 0) {
        /* a rule that rejects most of a table is suspected before the trace is: say which column */
        int kWorst = -1;
        for (int k = 0; k < VT_T_N; k++)
            if (f->aT[k].nWorst > 0 && (kWorst < 0 || f->aT[k].nWorst > f->aT[kWorst].nWorst)) kWorst = k;
        if (kWorst >= 0 && f->aT[kWorst].nWorst * 2 > f->aT[kWorst].nRow + f->aT[kWorst].nHidden)
            vt__read_note(f, "%lld rows with impossible values were ignored, %lld of the %lld rows of %s for "
                             "their %s column: most of a table, which suggests a trace written by a newer or "
                             "another tool rather than damage (upgrade vramtrace, or report it)",
                          (long long)f->nHidden, (long long)f->aT[kWorst].nWorst,
                          (long long)(f->aT[kWorst].nRow + f->aT[kWorst].nHidden), vt__tbl_name(kWorst),
                          f->aT[kWorst].zWorstCol);
        else
            vt__read_note(f, "%lld rows with impossible values (timestamps, sizes or addresses out of range, or "
                             "not numbers) were ignored: the trace is damaged or was not written by vramtrace",
                          (long long)f->nHidden);
    }
    if (f->nNoTime > 0 && f->bUntimedBefore) /* the analysis puts them at the start, live (analysis.md) */
        vt__read_note(f, "%lld events have no known time (the state at the dump the history does not explain, "
                         "allocated before its first event): they are counted; allocations among them stand from "
                         "the start of the trace, live through the whole history, the others are left off the "
                         "timeline",
                      (long long)f->nNoTime);
    else if (f->nNoTime > 0) /* the analysis puts allocations of unknown time at the end, live (analysis.md) */
        vt__read_note(f, "%lld events have no known time (%s): they are counted; allocations among them are "
                         "taken as live at the end of the trace, the others are left off the timeline",
                      (long long)f->nNoTime, vt__read_imported(f)
                                                 ? "the imported file does not record one"
                                                 : "the GPU did not report one");
    if (f->bSegments)
        vt__read_note(f, "recorded without tensor-level tracing: %lld of %lld device allocations look like "
                         "caching-allocator segments (2 MiB, or >= 20 MiB in 2 MiB steps), so findings are at "
                         "segment level; for tensors and their Python lines, merge PyTorch's allocation history "
                         "('vramtrace record' saves it beside the trace, analyze finds it; or 'analyze --snapshot "
                         "FILE'); 'record --tensors' also shows tensors but changes the allocator",
                      (long long)f->nSegmentLike, (long long)f->nDevAlloc);
    if (vt__read_cut_at_start(f))
        vt__read_note(f, "the trace was not closed cleanly and holds only whose it is: the process was killed (or "
                         "is still running) before the tracer's first commit, which comes within about "
                         "VRAMTRACE_FLUSH_MS (500 ms by default) of CUDA's start, so nothing it did was recorded");
    else if (!f->bCleanClose && !vt__read_imported(f))
        vt__read_note(f, "the trace was not closed cleanly (process killed or still running): its last second "
                         "of events may be missing and allocations live at the end include ones the process "
                         "would have freed");
    if (f->bHistoryTruncated && f->historyStart >= 0)
        vt__read_note(f, "the allocation history does not reach back to the process start (its ring buffer was "
                         "full, or recording began late): what happened before its first event is unknown, and "
                         "nothing allocated before it is called a leak");
    else if (f->bHistoryTruncated) /* a snapshot of the state at its dump alone */
        vt__read_note(f, "no allocation history: only the state at the dump is known, so nothing before it is "
                         "known and nothing live at it is called a leak");
    if (f->nLost > 0)
        vt__read_note(f, "%lld records were lost while tracing (see the 'dropped' table): counts, peaks and "
                         "findings are incomplete",
                      (long long)f->nLost);
    if (f->nOmitted > 0)
        vt__read_note(f, "%lld records were left out by the trace's size bound, as asked (record --max-size, "
                         "VRAMTRACE_MAX_BYTES; the 'dropped' table counts them): not lost, and not counted as lost",
                      (long long)f->nOmitted);
    if (!f->bHaveKernelUses && !f->bHaveTensors && f->aT[VT_T_MEM].nRow > 0) /* no allocation: nothing to use */
        vt__read_note(f, "no kernel buffer uses recorded%s: first/last use come from copies only, idle-allocation "
                         "checks are skipped and allocations live at exit cannot be told apart from buffers in "
                         "use until the end",
                      !strcmp(zKernelArgs, "0") ? " (kernel-argument scanning was off: VRAMTRACE_KERNEL_ARGS=0)" : "");
}

/*
 * The note on memory a torch.profiler trace's window leaves out: per device,
 * what was allocated before its first memory event (meta
 * kineto.device.N.allocated_before_trace, written at import) and the peak of
 * the process's Total Allocated. Returns an SQLite code.
 */
static int window_notes(struct vt_tracefile *f)
{
    sqlite3_stmt *p = NULL;
    int rc;
    if (strcmp(f->zSource, "kineto_json") != 0) return SQLITE_OK;
    rc = sqlite3_prepare_v2(f->db,
                            "SELECT CAST(substr(b.key, 15, length(b.key) - 37) AS INTEGER), CAST(b.value AS INTEGER),"
                            " (SELECT CAST(t.value AS INTEGER) FROM meta t WHERE t.key = substr(b.key, 1,"
                            " length(b.key) - 22) || 'peak_total_allocated') FROM meta b"
                            " WHERE b.key GLOB 'kineto.device.*.allocated_before_trace' ORDER BY 1",
                            -1, &p, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        char zA[32], zB[32];
        int64_t before = sqlite3_column_int64(p, 1), peak = sqlite3_column_int64(p, 2);
        rc = SQLITE_OK;
        if (before > 0)
            vt__read_note(f, "device %lld: %s was allocated before the profiler's window began (torch.profiler's "
                             "Total Allocated): it is not in this trace's allocations, peaks or live sets, which "
                             "are the window's own; Total Allocated peaks at %s",
                          (long long)sqlite3_column_int64(p, 0), vt__fmt_bytes(before, zA, sizeof zA),
                          sqlite3_column_type(p, 2) == SQLITE_NULL ? "?" : vt__fmt_bytes(peak, zB, sizeof zB));
    }
    sqlite3_finalize(p);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * The `dropped` rows by class (vt__read_drop_class) into f->nLost, nWriteFailed and nOmitted. The
 * writer's closing counter dropped_writer (in *pnMeta, the closing counters' sum) counts the records
 * the size bound left out once it was reached with the lost ones: they come off it. An SQLite code.
 */
static int read_drops(struct vt_tracefile *f, int64_t *pnMeta)
{
    sqlite3_stmt *p = NULL; /* total() cannot overflow */
    int rc = sqlite3_prepare_v2(f->db,
                                "SELECT source, what, CAST(min(total(count), 9e18) AS INTEGER) FROM dropped"
                                " WHERE count > 0 GROUP BY source, what",
                                -1, &p, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        const char *zWhat = (const char *)sqlite3_column_text(p, 1);
        int64_t n = sqlite3_column_int64(p, 2);
        enum vt_dropclass c = vt__read_drop_class(sqlite3_column_int64(p, 0), zWhat);
        rc = SQLITE_OK;
        if (c == VT_DROPCLASS_OMITTED) {
            f->nOmitted = n < INT64_MAX - f->nOmitted ? f->nOmitted + n : INT64_MAX;
            if (!strcmp(zWhat, VT_DROP_WHAT_LIMIT_OFF)) *pnMeta = *pnMeta > n ? *pnMeta - n : 0;
            continue;
        }
        if (c == VT_DROPCLASS_WRITE) f->nWriteFailed = n < INT64_MAX - f->nWriteFailed ? f->nWriteFailed + n : INT64_MAX;
        f->nLost = n < INT64_MAX - f->nLost ? f->nLost + n : INT64_MAX;
    }
    sqlite3_finalize(p);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * Meta, devices, the time range and the notes, after the scan. Returns VT_EXIT_OK, or
 * VT_EXIT_CORRUPT / VT_EXIT_INTERNAL after printing one line.
 */
int vt__read_meta(struct vt_tracefile *f)
{
    char zVal[64], zArgs[8];
    int64_t nMeta = 0;
    int rc;

    meta_copy(f, "pid", f->zPid, sizeof f->zPid);
    meta_copy(f, "rank", f->zRank, sizeof f->zRank);
    meta_copy(f, "hostname", f->zHost, sizeof f->zHost);
    meta_copy(f, "cmdline", f->zCmd, sizeof f->zCmd);
    meta_copy(f, "source_format", f->zSource, sizeof f->zSource);
    meta_copy(f, "config.tensors", zVal, sizeof zVal);
    f->bTensors = !strcmp(zVal, "1");
    meta_copy(f, "closed_cleanly", zVal, sizeof zVal);
    f->bCleanClose = !strcmp(zVal, "1");
    meta_copy(f, "history_truncated", zVal, sizeof zVal);
    f->bHistoryTruncated = !strcmp(zVal, "1");
    f->historyStart = vt__read_meta_int(f, "history_start_ns");
    /* a history with times that starts late: what it does not explain was allocated before it (import.md) */
    f->bUntimedBefore = f->bHistoryTruncated && f->historyStart >= 0;
    meta_copy(f, "config.kernel_args", zArgs, sizeof zArgs);
    read_partial(f);
    /* records lost: the dropped rows, or the writer's closing counters when they count more */
    static const char *const azKey[] = {"dropped_queue", "dropped_writer", "dropped_map"};
    for (size_t k = 0; k < sizeof azKey / sizeof azKey[0]; k++) {
        int64_t v = vt__read_meta_int(f, azKey[k]);
        if (v > 0 && v < INT64_MAX - nMeta) nMeta += v;
    }
    f->nLost = f->nWriteFailed = f->nOmitted = 0;
    rc = read_devices(f);
    read_bounds(f);
    /* a cause marked after the last event written: nothing after that event is in the trace, which is partial from it */
    f->partialMark = -1;
    if (f->partialFrom >= 0 && f->bTimes && f->partialFrom > f->t1) {
        f->partialMark = f->partialFrom;
        f->partialFrom = f->t1;
    }
    /* the time figures (figures.h): one trace's own origin until a caller reads several together */
    f->fig.origin = f->bTimes ? f->t0 : 0;
    f->fig.shift = 0;
    f->fig.duration = f->bTimes ? f->t1 - f->t0 : -1;
    if (rc == SQLITE_OK) rc = read_drops(f, &nMeta);
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot read trace: %s", f->zPath, sqlite3_errstr(rc));
        return vt__exit_for_sqlite(rc);
    }
    if (nMeta > f->nLost) f->nLost = nMeta;
    f->bHaveKernelUses = f->aT[VT_T_USE].bAny;
    f->bHaveCopyAddr = f->aT[VT_T_COPY].bAny || f->aT[VT_T_SET].bAny;
    f->bHaveTensors = f->aT[VT_T_TENSOR].nRow > 0;
    f->bSegments = !f->bTensors && !f->bHaveTensors && f->nDevAlloc >= 2 && f->nSegmentLike * 10 >= f->nDevAlloc * 8;
    recording_notes(f, zArgs);
    if ((rc = read_lends(f)) != SQLITE_OK) {
        vt__errorf("%s: cannot read the trace's meta table: %s", f->zPath, sqlite3_errstr(rc));
        return vt__exit_for_sqlite(rc);
    }
    lend_notes(f);
    reduced_note(f);
    subscription_note(f);
    if ((rc = window_notes(f)) != SQLITE_OK) {
        vt__errorf("%s: cannot read the trace's meta table: %s", f->zPath, sqlite3_errstr(rc));
        return vt__exit_for_sqlite(rc);
    }
    return VT_EXIT_OK;
}
