/* The 'info' subcommand: what a trace holds (process, versions, devices, duration, counts, losses, overhead, configuration), as text or JSON. */
#include "cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "record.h"
#include "util/opts.h"
#include "util/text.h"
#include "rowcheck.h"
#include "vramtrace/schema.h"

#define NUL_INT LLONG_MIN /* an SQL NULL in an integer field */
#define MAX_OOM_LISTED 100 /* OOM events kept for the report (the count is exact) */

struct info_meta {
    char *zKey, *zValue;
};
struct info_dev {
    long long id, total, ccMajor, ccMinor, sm, pciBus, pciDev, bw;
    char *zName, *zUuid;
};
struct info_peak {
    long long device, bytes, ts;
};
struct info_kind {
    long long kind, n, bytes, pageable; /* pageable: copies only */
};
struct info_oom {
    long long ts, api, device, bytes, status, freeBytes, totalBytes;
};
struct info_drop {
    long long source, count;
    char *zWhat;
};
struct info_ovh {
    char *zSource, *zKind;
    long long rows, events, ns;
};

/* Trace tables whose rows info counts, in report order. */
static const char *const azTable[] = {
    "memory_event", "api_call", "memcpy", "memset", "kernel", "buffer_use", "nvtx_range",
    "sync_event", "pool_event", "oom_event", "dropped", "overhead", "device", "string",
    "stack", "frame", "lifetime", "phase", "finding"};
#define N_TABLE (sizeof azTable / sizeof azTable[0])

/* Everything info reports about one trace. */
struct trace_info {
    const char *zPath;
    long long fileBytes;
    int schemaVersion;
    struct info_meta *aMeta;
    int nMeta;
    struct info_dev *aDev;
    int nDev;
    struct info_peak *aPeak;
    int nPeak;
    struct info_kind *aAllocKind; /* allocations by memory kind */
    int nAllocKind;
    struct info_kind *aCopyKind; /* copies by copy kind */
    int nCopyKind;
    struct info_oom *aOom;
    int nOom;
    struct info_drop *aDrop;
    int nDrop;
    struct info_ovh *aOvh;
    int nOvh;
    long long aCount[N_TABLE]; /* -1: table absent */
    long long firstTs, lastTs; /* NUL_INT when the trace has no events */
    long long nAlloc, nFree, allocBytes, nVmmMap, nCopy, copyBytes, nPageable, nDropTotal;
};

/* ---- small formatting helpers ---- */

/* Parse a whole decimal integer; NUL_INT if z is NULL or not one. */
static long long parse_int(const char *z)
{
    char *zEnd = NULL;
    long long v;
    if (!z || !*z) return NUL_INT;
    v = strtoll(z, &zEnd, 10);
    return *zEnd ? NUL_INT : v;
}

static const char *meta_get(const struct trace_info *p, const char *zKey)
{
    int i;
    for (i = 0; i < p->nMeta; i++)
        if (!strcmp(p->aMeta[i].zKey, zKey)) return p->aMeta[i].zValue;
    return NULL;
}

/* The first of two alternative meta keys that is present. */
static const char *meta_get2(const struct trace_info *p, const char *zKey, const char *zAlt)
{
    const char *z = meta_get(p, zKey);
    return z ? z : meta_get(p, zAlt);
}

/* Meta keys the report shows in their own place (everything else goes under "meta"). */
static int meta_is_known(const char *zKey)
{
    static const char *const azKnown[] = {
        "schema_version", "tracer_version", "pid", "ppid", "hostname", "exe", "executable",
        "cmdline", "rank", "local_rank", "world_size", "cuda_driver_version",
        "cuda_runtime_version", "cupti_version", "clock_anchor_cupti_ns", "clock_anchor_wall_ns",
        "start_ns", "end_ns", "closed_cleanly", "records_decoded", "records_unknown", "rows_written",
        "commits", "dropped_queue", "dropped_writer", "dropped_map", "time_base_ns"};
    size_t i;
    if (!strncmp(zKey, "config.", 7) || !strncmp(zKey, "env.", 4)) return 1;
    for (i = 0; i < sizeof azKnown / sizeof azKnown[0]; i++)
        if (!strcmp(zKey, azKnown[i])) return 1;
    return 0;
}

/* ---- loading ---- */

static char *dup_text(sqlite3_stmt *pStmt, int i)
{
    const unsigned char *z = sqlite3_column_text(pStmt, i);
    return z ? strdup((const char *)z) : NULL;
}

static long long col_int(sqlite3_stmt *pStmt, int i)
{
    return sqlite3_column_type(pStmt, i) == SQLITE_NULL ? NUL_INT : sqlite3_column_int64(pStmt, i);
}

/* Grow *pa (element size sz) to hold n+1 elements. Returns 0 or -1 on out of memory. */
static int grow(void **pa, int n, size_t sz)
{
    void *p;
    if (n & (n - 1) && n > 8) return 0; /* capacity is the next power of two above 8 */
    p = realloc(*pa, (size_t)(n < 8 ? 8 : 2 * n) * sz);
    if (!p) return -1;
    *pa = p;
    return 0;
}

static int table_exists(sqlite3 *db, const char *zName)
{
    sqlite3_stmt *pStmt = NULL;
    int bFound = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_schema WHERE type IN ('table','view') AND name=?",
                           -1, &pStmt, NULL) == SQLITE_OK) {
        sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
        bFound = sqlite3_step(pStmt) == SQLITE_ROW;
    }
    sqlite3_finalize(pStmt);
    return bFound;
}

/*
 * Run zSql and call xRow(p, pStmt) for each row. Returns SQLITE_OK, an SQLite
 * error code, or SQLITE_NOMEM when xRow fails.
 */
static int each_row(sqlite3 *db, const char *zSql, struct trace_info *p,
                    int (*xRow)(struct trace_info *, sqlite3_stmt *))
{
    sqlite3_stmt *pStmt = NULL;
    int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
    while (rc == SQLITE_OK) {
        int step = sqlite3_step(pStmt);
        if (step == SQLITE_DONE) break;
        if (step != SQLITE_ROW) rc = step;
        else if (xRow(p, pStmt) != 0) rc = SQLITE_NOMEM;
    }
    sqlite3_finalize(pStmt);
    return rc;
}

static int row_meta(struct trace_info *p, sqlite3_stmt *s)
{
    struct info_meta *m;
    if (grow((void **)&p->aMeta, p->nMeta, sizeof *p->aMeta)) return -1;
    m = &p->aMeta[p->nMeta];
    m->zKey = dup_text(s, 0);
    m->zValue = dup_text(s, 1);
    if (!m->zKey || !m->zValue) {
        free(m->zKey);
        free(m->zValue);
        return m->zKey ? -1 : 0; /* a NULL key is skipped */
    }
    p->nMeta++;
    return 0;
}

static int row_dev(struct trace_info *p, sqlite3_stmt *s)
{
    struct info_dev *d;
    if (grow((void **)&p->aDev, p->nDev, sizeof *p->aDev)) return -1;
    d = &p->aDev[p->nDev++];
    d->id = col_int(s, 0);
    d->zName = dup_text(s, 1);
    d->zUuid = dup_text(s, 2);
    d->total = col_int(s, 3);
    d->ccMajor = col_int(s, 4);
    d->ccMinor = col_int(s, 5);
    d->sm = col_int(s, 6);
    d->pciBus = col_int(s, 7);
    d->pciDev = col_int(s, 8);
    d->bw = col_int(s, 9);
    return 0;
}

/* Put p->aPeak in ascending device order (NULL, stored as NUL_INT, first). */
static void sort_peaks(struct trace_info *p)
{
    int i, j;
    for (i = 1; i < p->nPeak; i++) {
        struct info_peak k = p->aPeak[i];
        for (j = i; j > 0 && p->aPeak[j - 1].device > k.device; j--) p->aPeak[j] = p->aPeak[j - 1];
        p->aPeak[j] = k;
    }
}

/*
 * Peak of live device memory per device: the running total of device-kind
 * allocations minus frees in (ts, id) order, as the memory_timeline view
 * defines it, computed in one ordered scan (the index on ts serves the order;
 * the view's window function is many times slower on large traces), where the
 * pass over the memory events could not (pass_peak). Appends one info_peak per
 * device, in device order. Returns an SQLite code.
 */
static int load_peaks(sqlite3 *db, struct trace_info *p)
{
    sqlite3_stmt *pStmt = NULL;
    long long *aLive = NULL;
    int rc, i;

    rc = sqlite3_prepare_v2(db,
                            "SELECT device, op, bytes, ts FROM memory_event WHERE mem_kind = 3"
                            " AND op IN (1, 2) ORDER BY ts, id",
                            -1, &pStmt, NULL);
    while (rc == SQLITE_OK) {
        long long device, bytes, ts;
        int step = sqlite3_step(pStmt);
        if (step == SQLITE_DONE) break;
        if (step != SQLITE_ROW) {
            rc = step;
            break;
        }
        device = col_int(pStmt, 0);
        bytes = sqlite3_column_int64(pStmt, 2);
        ts = col_int(pStmt, 3);
        for (i = 0; i < p->nPeak && p->aPeak[i].device != device; i++) {
        }
        if (i == p->nPeak) {
            long long *aNew;
            if (grow((void **)&p->aPeak, p->nPeak, sizeof *p->aPeak) ||
                !(aNew = realloc(aLive, (size_t)(p->nPeak + 1) * sizeof *aLive))) {
                rc = SQLITE_NOMEM;
                break;
            }
            aLive = aNew;
            aLive[i] = 0;
            p->aPeak[i].device = device;
            p->aPeak[i].bytes = 0;
            p->aPeak[i].ts = NUL_INT;
            p->nPeak++;
        }
        aLive[i] += sqlite3_column_int(pStmt, 1) == VT_MEMOP_ALLOC ? bytes : -bytes;
        if (aLive[i] > p->aPeak[i].bytes) {
            p->aPeak[i].bytes = aLive[i];
            p->aPeak[i].ts = ts;
        }
    }
    sqlite3_finalize(pStmt);
    free(aLive);
    sort_peaks(p);
    return rc;
}

static int row_memop(struct trace_info *p, sqlite3_stmt *s)
{
    long long op = col_int(s, 0), n = col_int(s, 1), bytes = col_int(s, 2);
    if (op == VT_MEMOP_ALLOC) {
        p->nAlloc = n;
        p->allocBytes = bytes == NUL_INT ? 0 : bytes;
    } else if (op == VT_MEMOP_FREE) {
        p->nFree = n;
    } else if (op == VT_MEMOP_VMM_MAP) {
        p->nVmmMap = n;
    }
    return 0;
}

static int row_alloc_kind(struct trace_info *p, sqlite3_stmt *s)
{
    struct info_kind *k;
    if (grow((void **)&p->aAllocKind, p->nAllocKind, sizeof *p->aAllocKind)) return -1;
    k = &p->aAllocKind[p->nAllocKind++];
    k->kind = col_int(s, 0);
    k->n = col_int(s, 1);
    k->bytes = col_int(s, 2);
    k->pageable = 0;
    return 0;
}

static int row_copy_kind(struct trace_info *p, sqlite3_stmt *s)
{
    struct info_kind *k;
    if (grow((void **)&p->aCopyKind, p->nCopyKind, sizeof *p->aCopyKind)) return -1;
    k = &p->aCopyKind[p->nCopyKind++];
    k->kind = col_int(s, 0);
    k->n = col_int(s, 1);
    k->bytes = col_int(s, 2);
    k->pageable = col_int(s, 3);
    p->nCopy += k->n;
    p->copyBytes += k->bytes;
    p->nPageable += k->pageable;
    return 0;
}

static int row_oom(struct trace_info *p, sqlite3_stmt *s)
{
    struct info_oom *o;
    if (grow((void **)&p->aOom, p->nOom, sizeof *p->aOom)) return -1;
    o = &p->aOom[p->nOom++];
    o->ts = col_int(s, 0);
    o->api = col_int(s, 1);
    o->device = col_int(s, 2);
    o->bytes = col_int(s, 3);
    o->status = col_int(s, 4);
    o->freeBytes = col_int(s, 5);
    o->totalBytes = col_int(s, 6);
    return 0;
}

static int row_drop(struct trace_info *p, sqlite3_stmt *s)
{
    struct info_drop *d;
    if (grow((void **)&p->aDrop, p->nDrop, sizeof *p->aDrop)) return -1;
    d = &p->aDrop[p->nDrop++];
    d->source = col_int(s, 0);
    d->zWhat = dup_text(s, 1);
    d->count = col_int(s, 2);
    if (d->count != NUL_INT) p->nDropTotal += d->count;
    return 0;
}

static int row_ovh(struct trace_info *p, sqlite3_stmt *s)
{
    struct info_ovh *o;
    if (grow((void **)&p->aOvh, p->nOvh, sizeof *p->aOvh)) return -1;
    o = &p->aOvh[p->nOvh++];
    o->zSource = dup_text(s, 0);
    o->zKind = dup_text(s, 1);
    o->rows = col_int(s, 2);
    o->events = col_int(s, 3);
    o->ns = col_int(s, 4);
    return 0;
}

static int row_range(struct trace_info *p, sqlite3_stmt *s)
{
    p->firstTs = col_int(s, 0);
    p->lastTs = col_int(s, 1);
    return 0;
}

static void info_free(struct trace_info *p)
{
    int i;
    for (i = 0; i < p->nMeta; i++) {
        free(p->aMeta[i].zKey);
        free(p->aMeta[i].zValue);
    }
    for (i = 0; i < p->nDev; i++) {
        free(p->aDev[i].zName);
        free(p->aDev[i].zUuid);
    }
    for (i = 0; i < p->nDrop; i++) free(p->aDrop[i].zWhat);
    for (i = 0; i < p->nOvh; i++) {
        free(p->aOvh[i].zSource);
        free(p->aOvh[i].zKind);
    }
    free(p->aMeta);
    free(p->aDev);
    free(p->aPeak);
    free(p->aAllocKind);
    free(p->aCopyKind);
    free(p->aOom);
    free(p->aDrop);
    free(p->aOvh);
    memset(p, 0, sizeof *p);
}

/* ---- one pass per event table ---- */

/*
 * The guarded event tables info reads in one pass of its own, in rowid order without
 * an index: the guard's check of every row (trace_open.c, aGuard), the rows kept, their
 * time bounds and, for memory events and copies, the figures of the report. Each
 * replaces the guard's count, count(*), the time-range query and the GROUP BY queries
 * of its table (several scans, sorts for the groups) unless the pass meets a value only
 * SQL can judge exactly; that table then goes the SQL way, unchanged.
 */
enum { P_MEM, P_COPY, P_SET, P_KER, P_USE, P_NVTX, P_API, P_SYNC, P_POOL, P_N };
/* The guard's checks: times, sizes, addresses, each maybe nullable. */
enum { G_TS = VT_G_TS, G_TSN = VT_G_TSN, G_SZ = VT_G_SZ, G_SZN = VT_G_SZN, G_AD = VT_G_AD, G_ADN = VT_G_ADN };
/* What a table gives the trace's time range: nothing, min/max of its instant, min(start)
 * and max(end), or min(start) and max(coalesce(end, start)). */
enum { R_NONE, R_TS, R_END, R_END_NULL };
static const struct {
    const char *zTable;
    const char *zCols;   /* vt_info_row's arguments: the guarded columns (times first), then the report's */
    const char *zStored; /* the same with the stored times (t, and dur for an end) in their places */
    int nTime;           /* time columns first: 1 (ts) or 2 (start, end) */
    int nGuard;
    unsigned char aGuard[6];
    int eRange;
} aPass[P_N] = {
    {"memory_event", "ts, bytes, address, pool_size, pool_used, pool_threshold, op, mem_kind, device, id",
     "t, bytes, address, pool_size, pool_used, pool_threshold, op, mem_kind, device, id", 1, 6,
     {G_TS, G_SZ, G_AD, G_SZN, G_SZN, G_SZN}, R_TS},
    {"memcpy", "start, end, bytes, src, dst, copy_kind, src_kind, dst_kind",
     "t, dur, bytes, src, dst, copy_kind, src_kind, dst_kind", 2, 5, {G_TS, G_TS, G_SZ, G_ADN, G_ADN}, R_END},
    {"memset", "start, end, bytes, dst", "t, dur, bytes, dst", 2, 4, {G_TS, G_TS, G_SZ, G_ADN}, R_END},
    {"kernel", "start, end", "t, dur", 2, 2, {G_TS, G_TS}, R_END},
    {"buffer_use", "ts, address", "t, address", 1, 2, {G_TSN, G_AD}, R_NONE},
    {"nvtx_range", "start, end", "t, dur", 2, 2, {G_TS, G_TSN}, R_END_NULL},
    {"api_call", "start, end, bytes", "t, dur, bytes", 2, 3, {G_TS, G_TSN, G_SZN}, R_END_NULL},
    {"sync_event", "start, end", "t, dur", 2, 2, {G_TS, G_TS}, R_END},
    {"pool_event", "ts, size, used, threshold", "t, size, used, threshold", 1, 4, {G_TS, G_SZN, G_SZN, G_SZN}, R_TS},
};

#define MAX_KINDS 64 /* distinct memory or copy kinds a pass groups (more: SQL groups them) */
#define PEAK_WINDOW 16384 /* device allocations and frees held to restore their time order (a power of two) */

/* A device allocation (delta > 0) or free, as the peaks take it. */
struct info_dev_op {
    long long ts, id, device, delta;
};

/* What the pass over one table found: the state of vt_info_row. */
struct info_pass {
    int k;                      /* P_* */
    struct trace_info *p;       /* memory events: the peaks go to p->aPeak */
    int bStored;                /* the arguments are aPass' zStored: times are computed here (pass_times) */
    long long base;             /* then: the trace's time base */
    int bOdd;                   /* a value only SQL can judge the same way: the pass is irregular */
    int bDone;                  /* the pass was regular: its figures replace the SQL */
    long long nRow, nHidden;    /* rows kept, rows the guard hides */
    long long sumBytes;         /* bytes of the rows kept (>= 0 each): no group's sum overflows if this does not */
    long long t0, t1;           /* time range of the rows kept (NUL_INT: none) */
    /* memory events and copies only */
    long long nAlloc, allocBytes, nFree, nVmmMap;
    struct info_kind aKind[MAX_KINDS]; /* allocations by memory kind, or copies by copy kind, in kind order */
    int nKind;
    int bPeakOrder;             /* device allocations and frees were put in (ts, id) order: p->aPeak holds the peaks */
    long long lastTs, lastId;   /* the last of them taken (none while nTaken is 0) */
    long long nTaken;
    long long *aLive;           /* live bytes of each device in p->aPeak */
    /* the ones not taken yet, PEAK_WINDOW at most: those in order so far in a queue (a ring), the rest in a
     * min-heap, both in (ts, id) order */
    struct info_dev_op *aQueue, *aHeap;
    int iQueue, nQueue, nHeap, nHeapAlloc;
};

/*
 * The time columns of a row (aPass[k].nTime of them) into aTime, NULL ones flagged in aNull:
 * read as they are, or, for a table stored as the tracer makes it (q->bStored), computed as
 * its generated columns do from the stored t (and dur): start = t + base, end = t + dur +
 * base. Then checked as the guard checks them. Returns 1 when they pass, 0 when not, -1
 * where only SQL can judge (a real number, a sum beyond int64).
 */
static int pass_times(const struct info_pass *q, sqlite3_value **argv, long long *aTime, int *aNull)
{
    int i, nTime = aPass[q->k].nTime;
    int64_t a[2] = {0, 0};
    if (q->bStored) {
        /* text or a blob reads as NULL here, as through the generated columns (no reader sums it) */
        if (vt__stored_times(argv, nTime, q->base, a, aNull) < 0) return -1;
    } else {
        for (i = 0; i < nTime; i++) {
            int ok = vt__guard_value(argv[i], aPass[q->k].aGuard[i]);
            if (ok <= 0) return ok;
            aNull[i] = sqlite3_value_type(argv[i]) == SQLITE_NULL;
            a[i] = sqlite3_value_int64(argv[i]);
        }
    }
    for (i = 0; i < nTime; i++) {
        if (!vt__guard_time(a[i], aNull[i], aPass[q->k].aGuard[i])) return 0;
        aTime[i] = a[i];
    }
    return 1;
}

/* Add a row of bytes of kind k to the kind groups of q (kept in kind order). Returns 0, or -1 when
 * q already holds MAX_KINDS other kinds (SQL groups them then). */
static int pass_kind(struct info_pass *q, long long k, long long bytes, long long pageable)
{
    int i, j;
    for (i = 0; i < q->nKind && q->aKind[i].kind < k; i++) {
    }
    if (i == q->nKind || q->aKind[i].kind != k) {
        if (q->nKind == MAX_KINDS) return -1;
        for (j = q->nKind++; j > i; j--) q->aKind[j] = q->aKind[j - 1];
        q->aKind[i].kind = k;
        q->aKind[i].n = q->aKind[i].bytes = q->aKind[i].pageable = 0;
    }
    q->aKind[i].n++;
    q->aKind[i].bytes += bytes; /* within the pass' total */
    q->aKind[i].pageable += pageable;
    return 0;
}

/* Is a before b in (ts, id) order? */
static int dev_op_less(const struct info_dev_op *a, const struct info_dev_op *b)
{
    return a->ts < b->ts || (a->ts == b->ts && a->id < b->id);
}

/*
 * Take the next device allocation or free in (ts, id) order into the running totals
 * (load_peaks' loop). One that is not after the last taken (it lay more than PEAK_WINDOW
 * rows back, or repeats an id) ends it: load_peaks then sorts them all. Returns 0, or -1
 * when out of memory.
 */
static int peak_take(struct info_pass *q, const struct info_dev_op *e)
{
    struct trace_info *p = q->p;
    int i;
    if (q->nTaken++ > 0 && !(e->ts > q->lastTs || (e->ts == q->lastTs && e->id > q->lastId))) {
        q->bPeakOrder = 0;
        return 0;
    }
    q->lastTs = e->ts;
    q->lastId = e->id;
    for (i = 0; i < p->nPeak && p->aPeak[i].device != e->device; i++) {
    }
    if (i == p->nPeak) {
        long long *aNew;
        if (grow((void **)&p->aPeak, p->nPeak, sizeof *p->aPeak) ||
            !(aNew = realloc(q->aLive, (size_t)(p->nPeak + 1) * sizeof *q->aLive)))
            return -1;
        q->aLive = aNew;
        q->aLive[i] = 0;
        p->aPeak[i].device = e->device;
        p->aPeak[i].bytes = 0;
        p->aPeak[i].ts = NUL_INT;
        p->nPeak++;
    }
    q->aLive[i] += e->delta;
    if (q->aLive[i] > p->aPeak[i].bytes) {
        p->aPeak[i].bytes = q->aLive[i];
        p->aPeak[i].ts = e->ts;
    }
    return 0;
}

/* Remove the first device operation held (of the queue or the heap) into *pe. */
static void peak_pop(struct info_pass *q, struct info_dev_op *pe)
{
    struct info_dev_op *a = q->aHeap, last;
    int i = 0, c;
    if (q->nQueue > 0 && (q->nHeap == 0 || !dev_op_less(&a[0], &q->aQueue[q->iQueue]))) {
        *pe = q->aQueue[q->iQueue];
        q->iQueue = (q->iQueue + 1) & (PEAK_WINDOW - 1);
        q->nQueue--;
        return;
    }
    *pe = a[0];
    last = a[--q->nHeap];
    while ((c = 2 * i + 1) < q->nHeap) {
        if (c + 1 < q->nHeap && dev_op_less(&a[c + 1], &a[c])) c++;
        if (!dev_op_less(&a[c], &last)) break;
        a[i] = a[c];
        i = c;
    }
    a[i] = last;
}

/*
 * One device allocation (op 1) or free (op 2) in rowid order, for the peaks of live
 * device memory: held (at the end of the queue when it sorts after the last one there,
 * the common case; else in the heap), the first of those held taken when PEAK_WINDOW
 * are (in a trace written in time order, or nearly, that is the next in (ts, id) order).
 * Returns 0, or -1 when out of memory.
 */
static int pass_peak(struct info_pass *q, long long device, long long op, long long bytes, long long ts,
                     long long id)
{
    struct info_dev_op e, *a;
    int i;
    if (!q->bPeakOrder) return 0;
    if (q->nQueue + q->nHeap == PEAK_WINDOW) {
        peak_pop(q, &e);
        if (peak_take(q, &e)) return -1;
    }
    e.ts = ts;
    e.id = id;
    e.device = device;
    e.delta = op == VT_MEMOP_ALLOC ? bytes : -bytes;
    if (!q->aQueue && !(q->aQueue = malloc(sizeof *q->aQueue * PEAK_WINDOW))) return -1;
    if (q->nQueue == 0 || !dev_op_less(&e, &q->aQueue[(q->iQueue + q->nQueue - 1) & (PEAK_WINDOW - 1)])) {
        q->aQueue[(q->iQueue + q->nQueue++) & (PEAK_WINDOW - 1)] = e;
        return 0;
    }
    if (q->nHeap == q->nHeapAlloc) {
        int nNew = q->nHeapAlloc ? 2 * q->nHeapAlloc : 256;
        if (!(a = realloc(q->aHeap, sizeof *a * (size_t)nNew))) return -1;
        q->aHeap = a;
        q->nHeapAlloc = nNew;
    }
    a = q->aHeap;
    for (i = q->nHeap++; i > 0 && dev_op_less(&e, &a[(i - 1) / 2]); i = (i - 1) / 2) a[i] = a[(i - 1) / 2];
    a[i] = e;
    return 0;
}

/* The device operations still held, taken in order at the end of the pass. Returns 0 or -1 (out of memory). */
static int peak_drain(struct info_pass *q)
{
    struct info_dev_op e;
    while (q->bPeakOrder && q->nQueue + q->nHeap > 0) {
        peak_pop(q, &e);
        if (peak_take(q, &e)) return -1;
    }
    return 0;
}

/*
 * The report's figures of one kept memory event or copy (the arguments after the guarded
 * ones; ts its time). Returns 0; 1 when a value is not what SQL would group or sum the same
 * way here (not an integer, a sum beyond int64, too many kinds): the pass is then irregular;
 * -1 when out of memory.
 */
static int pass_figures(struct info_pass *q, int argc, sqlite3_value **argv, long long ts)
{
    int i, k = q->k;
    long long bytes = sqlite3_value_int64(argv[k == P_MEM ? 1 : 2]), op, kind, device;
    for (i = aPass[k].nGuard; i < argc; i++)
        if (sqlite3_value_type(argv[i]) != SQLITE_INTEGER &&
            !(k == P_MEM && i == 8 && sqlite3_value_type(argv[i]) == SQLITE_NULL)) /* the device may be NULL */
            return 1;
    if (__builtin_add_overflow(q->sumBytes, bytes, &q->sumBytes)) return 1; /* SQL's sum() fails there */
    if (k == P_COPY) {
        long long pageable = sqlite3_value_int64(argv[6]) == 1 || sqlite3_value_int64(argv[7]) == 1;
        return pass_kind(q, sqlite3_value_int64(argv[5]), bytes, pageable) ? 1 : 0;
    }
    op = sqlite3_value_int64(argv[6]);
    kind = sqlite3_value_int64(argv[7]);
    device = sqlite3_value_type(argv[8]) == SQLITE_NULL ? NUL_INT : sqlite3_value_int64(argv[8]);
    if (op == VT_MEMOP_ALLOC) {
        q->nAlloc++;
        q->allocBytes += bytes;
        if (pass_kind(q, kind, bytes, 0)) return 1;
    } else if (op == VT_MEMOP_FREE) {
        q->nFree++;
    } else if (op == VT_MEMOP_VMM_MAP) {
        q->nVmmMap++;
    }
    if (kind == 3 && (op == VT_MEMOP_ALLOC || op == VT_MEMOP_FREE))
        return pass_peak(q, device, op, bytes, ts, sqlite3_value_int64(argv[9]));
    return 0;
}

/*
 * SQL function vt_info_row(guarded columns..., report columns...) (aPass), called once
 * per row of a table scan in rowid order (pass_table): the guard's check, the rows kept,
 * their time range and figures. Stops looking at rows once the pass is irregular.
 * Returns NULL (no row is output); fails only when out of memory.
 */
static void pass_row(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct info_pass *q = sqlite3_user_data(ctx);
    int k = q->k, i, ok, r;
    long long aTime[2] = {0, 0}, a, b;
    int aNull[2] = {0, 0};
    if (q->bOdd) return;
    ok = pass_times(q, argv, aTime, aNull);
    for (i = aPass[k].nTime; ok > 0 && i < aPass[k].nGuard; i++) ok = vt__guard_value(argv[i], aPass[k].aGuard[i]);
    if (ok < 0) {
        q->bOdd = 1;
        return;
    }
    if (!ok) {
        q->nHidden++;
        return;
    }
    q->nRow++;
    if (aPass[k].eRange != R_NONE) { /* the times passed their checks: the end maybe NULL */
        a = aTime[0];
        b = aPass[k].eRange == R_TS || aNull[1] ? a : aTime[1];
        if (q->t0 == NUL_INT || a < q->t0) q->t0 = a;
        if (q->t1 == NUL_INT || b > q->t1) q->t1 = b;
    }
    if (k != P_MEM && k != P_COPY) return;
    r = pass_figures(q, argc, argv, aTime[0]);
    if (r < 0) sqlite3_result_error_nomem(ctx);
    else if (r > 0) q->bOdd = 1;
}

/*
 * The pass over table k (*q reset here; memory events append their peaks to p->aPeak), its
 * stored times read directly where the table is exactly as the tracer makes it. q->bDone says
 * whether it was regular; when it was not, p->aPeak is left empty. Returns SQLITE_OK, or
 * SQLITE_NOMEM (any other failure leaves the table to SQL, which reports it).
 */
static int pass_table(sqlite3 *db, struct trace_info *p, int k, struct info_pass *q)
{
    sqlite3_stmt *pStmt = NULL;
    const char *zTable = aPass[k].zTable;
    char *zSql;
    int64_t base = 0;
    int rc;

    memset(q, 0, sizeof *q);
    q->k = k;
    q->p = p;
    q->t0 = q->t1 = NUL_INT;
    q->bPeakOrder = 1;
    q->bStored = vt__schema_time_base(db, &zTable, 1, &base) == 1;
    q->base = base;
    zSql = sqlite3_mprintf("SELECT count(*) FROM main.\"%w\" NOT INDEXED WHERE vt_info_row(%s)", zTable,
                           q->bStored ? aPass[k].zStored : aPass[k].zCols);
    rc = zSql ? sqlite3_create_function(db, "vt_info_row", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, q, pass_row, NULL,
                                        NULL)
              : SQLITE_NOMEM;
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(pStmt);
    if (rc == SQLITE_ROW) rc = SQLITE_OK;
    if (rc == SQLITE_OK && !q->bOdd && peak_drain(q)) rc = SQLITE_NOMEM;
    sqlite3_finalize(pStmt);
    /* remove the function: its state lives in the caller's frame */
    sqlite3_create_function(db, "vt_info_row", -1, SQLITE_UTF8, NULL, NULL, NULL, NULL);
    sqlite3_free(zSql);
    free(q->aLive);
    free(q->aQueue);
    free(q->aHeap);
    q->aLive = NULL;
    q->aQueue = q->aHeap = NULL;
    q->bDone = rc == SQLITE_OK && !q->bOdd;
    if (k == P_MEM && (!q->bDone || !q->bPeakOrder)) p->nPeak = 0; /* load_peaks makes them */
    return rc == SQLITE_NOMEM ? rc : SQLITE_OK;
}

/*
 * The guard for info: hide every impossible row (vt__trace_guard's views), counting them
 * into *pnHidden, with one pass per event table (aQ[k].bDone where it was regular; else,
 * and for the few OOMs and devices, the guard's own count). Returns an SQLite code.
 */
static int info_guard(sqlite3 *db, struct trace_info *p, struct info_pass *aQ, int64_t *pnHidden)
{
    int rc = SQLITE_OK;
    size_t i;
    *pnHidden = 0;
    /* in the guard's order (memory events, OOMs, the other event tables, devices): a failure is the one it meets */
    for (i = 0; rc == SQLITE_OK && i < P_N + 2; i++) {
        int k = i == 0 ? P_MEM : i == 1 ? -1 : i <= P_N ? (int)i - 1 : -2;
        const char *zTable = k >= 0 ? aPass[k].zTable : k == -1 ? "oom_event" : "device";
        int64_t n = 0;
        if (k >= 0) rc = pass_table(db, p, k, &aQ[k]);
        if (rc == SQLITE_OK && k >= 0 && aQ[k].bDone) n = aQ[k].nHidden;
        else if (rc == SQLITE_OK) rc = vt__trace_guard_count(db, zTable, &n);
        *pnHidden += n;
        if (rc == SQLITE_OK && n > 0) rc = vt__trace_guard_view(db, zTable);
    }
    return rc;
}

/* The time range of the OOM events folded into p's (the one timed table without a pass). */
static int row_range_oom(struct trace_info *p, sqlite3_stmt *s)
{
    long long a = col_int(s, 0), b = col_int(s, 1);
    if (a != NUL_INT && (p->firstTs == NUL_INT || a < p->firstTs)) p->firstTs = a;
    if (b != NUL_INT && (p->lastTs == NUL_INT || b > p->lastTs)) p->lastTs = b;
    return 0;
}

/* Append the kind groups of a regular pass to *paKind (row_alloc_kind's or row_copy_kind's result). */
static int pass_kinds(const struct info_pass *q, struct info_kind **paKind, int *pnKind)
{
    if (q->nKind == 0) return 0;
    *paKind = malloc(sizeof **paKind * (size_t)q->nKind);
    if (!*paKind) return -1;
    memcpy(*paKind, q->aKind, sizeof **paKind * (size_t)q->nKind);
    *pnKind = q->nKind;
    return 0;
}

/*
 * Read everything info reports from an open trace into *p (zeroed first): each
 * event table's figures from its pass (info_guard) where that was regular, the
 * rest by SQL. bFull = 0 reads only what the record summary needs. Returns
 * SQLITE_OK or an SQLite error code (*p then holds what was read; free it with
 * info_free).
 */
static int info_load(sqlite3 *db, const char *zPath, int bFull, struct trace_info *p)
{
    /* First and last event over every timed table (CUPTI clock). */
    static const char zRange[] =
        "SELECT min(a), max(b) FROM ("
        " SELECT min(ts) a, max(ts) b FROM memory_event"
        " UNION ALL SELECT min(start), max(end) FROM memcpy"
        " UNION ALL SELECT min(start), max(end) FROM memset"
        " UNION ALL SELECT min(start), max(end) FROM kernel"
        " UNION ALL SELECT min(start), max(coalesce(end, start)) FROM nvtx_range"
        " UNION ALL SELECT min(ts), max(ts) FROM oom_event%s%s%s)";
    char zSql[1024];
    struct stat st;
    struct info_pass *aQ = NULL, *qMem, *qCopy;
    size_t i;
    int rc, bRange = 1, k;

    memset(p, 0, sizeof *p);
    p->zPath = zPath;
    p->firstTs = p->lastTs = NUL_INT;
    p->fileBytes = stat(zPath, &st) == 0 ? (long long)st.st_size : -1;
    p->schemaVersion = 0;
    vt__schema_check(db, &p->schemaVersion, zSql, sizeof zSql);
    aQ = malloc(sizeof *aQ * P_N);
    if (!aQ) return SQLITE_NOMEM;
    qMem = &aQ[P_MEM];
    qCopy = &aQ[P_COPY];
    {
        int64_t nHidden = 0; /* rows no real trace can hold are neither counted nor summed */
        if ((rc = info_guard(db, p, aQ, &nHidden)) != SQLITE_OK) goto done;
        if (nHidden > 0)
            vt__errorf("%s: %lld rows with impossible values were ignored (damaged trace)", zPath,
                       (long long)nHidden);
    }

    rc = each_row(db, "SELECT key, value FROM meta ORDER BY key", p, row_meta);
    if (rc == SQLITE_OK)
        rc = each_row(db,
                      "SELECT id, name, uuid, total_bytes, cc_major, cc_minor, sm_count, pci_bus,"
                      " pci_device, global_memory_bandwidth_kbps FROM device ORDER BY id",
                      p, row_dev);
    for (i = 0; rc == SQLITE_OK && i < N_TABLE; i++) {
        sqlite3_stmt *pStmt = NULL;
        p->aCount[i] = -1;
        for (k = 0; k < P_N && strcmp(aPass[k].zTable, azTable[i]); k++) {
        }
        if (k < P_N && aQ[k].bDone) { /* the pass read the table: it exists */
            p->aCount[i] = aQ[k].nRow;
            continue;
        }
        if (!table_exists(db, azTable[i])) continue;
        snprintf(zSql, sizeof zSql, "SELECT count(*) FROM \"%s\"", azTable[i]);
        rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
            p->aCount[i] = sqlite3_column_int64(pStmt, 0);
            rc = SQLITE_OK;
        }
        sqlite3_finalize(pStmt);
    }
    for (k = 0; k < P_N; k++) {
        if (aPass[k].eRange == R_NONE) continue;
        bRange &= aQ[k].bDone;
        if (aQ[k].t0 != NUL_INT && (p->firstTs == NUL_INT || aQ[k].t0 < p->firstTs)) p->firstTs = aQ[k].t0;
        if (aQ[k].t1 != NUL_INT && (p->lastTs == NUL_INT || aQ[k].t1 > p->lastTs)) p->lastTs = aQ[k].t1;
    }
    if (rc == SQLITE_OK && bRange) rc = each_row(db, "SELECT min(ts), max(ts) FROM oom_event", p, row_range_oom);
    if (rc == SQLITE_OK && !bRange) {
        int bApi = table_exists(db, "api_call"), bSync = table_exists(db, "sync_event"),
            bPool = table_exists(db, "pool_event");
        snprintf(zSql, sizeof zSql, zRange,
                 bApi ? " UNION ALL SELECT min(start), max(coalesce(end, start)) FROM api_call" : "",
                 bSync ? " UNION ALL SELECT min(start), max(end) FROM sync_event" : "",
                 bPool ? " UNION ALL SELECT min(ts), max(ts) FROM pool_event" : "");
        rc = each_row(db, zSql, p, row_range);
    }
    if (qMem->bDone) {
        p->nAlloc = qMem->nAlloc;
        p->allocBytes = qMem->allocBytes;
        p->nFree = qMem->nFree;
        p->nVmmMap = qMem->nVmmMap;
    } else if (rc == SQLITE_OK) {
        rc = each_row(db, "SELECT op, count(*), sum(bytes) FROM memory_event GROUP BY op", p, row_memop);
    }
    if (qMem->bDone && qMem->bPeakOrder) sort_peaks(p); /* found by the pass */
    else if (rc == SQLITE_OK) rc = load_peaks(db, p);
    if (qCopy->bDone) {
        for (k = 0; k < qCopy->nKind; k++) {
            p->nCopy += qCopy->aKind[k].n;
            p->copyBytes += qCopy->aKind[k].bytes;
            p->nPageable += qCopy->aKind[k].pageable;
        }
        if (pass_kinds(qCopy, &p->aCopyKind, &p->nCopyKind)) rc = SQLITE_NOMEM;
    } else if (rc == SQLITE_OK) {
        rc = each_row(db,
                      "SELECT copy_kind, count(*), coalesce(sum(bytes), 0),"
                      " sum(src_kind = 1 OR dst_kind = 1) FROM memcpy GROUP BY copy_kind"
                      " ORDER BY copy_kind",
                      p, row_copy_kind);
    }
    if (rc == SQLITE_OK)
        rc = each_row(db,
                      "SELECT source, coalesce(what, ''), sum(count) FROM dropped"
                      " GROUP BY source, what ORDER BY source, what",
                      p, row_drop);
    if (rc == SQLITE_OK && bFull && qMem->bDone) {
        if (pass_kinds(qMem, &p->aAllocKind, &p->nAllocKind)) rc = SQLITE_NOMEM;
    } else if (rc == SQLITE_OK && bFull) {
        rc = each_row(db,
                      "SELECT mem_kind, count(*), coalesce(sum(bytes), 0) FROM memory_event"
                      " WHERE op = 1 GROUP BY mem_kind ORDER BY mem_kind",
                      p, row_alloc_kind);
    }
    if (rc == SQLITE_OK && bFull) {
        snprintf(zSql, sizeof zSql,
                 "SELECT ts, api, device, bytes, status, free_bytes, total_bytes FROM oom_event"
                 " ORDER BY ts, id LIMIT %d",
                 MAX_OOM_LISTED);
        rc = each_row(db, zSql, p, row_oom);
    }
    if (rc == SQLITE_OK) {
        /* The writer's closing counters: trust them if they count more losses than the rows do. */
        long long nMetaDrop = 0, v;
        static const char *const azDropKey[] = {"dropped_queue", "dropped_writer", "dropped_map"};
        for (i = 0; i < sizeof azDropKey / sizeof azDropKey[0]; i++)
            if ((v = parse_int(meta_get(p, azDropKey[i]))) > 0) nMetaDrop += v;
        if (nMetaDrop > p->nDropTotal) p->nDropTotal = nMetaDrop;
    }
    if (rc == SQLITE_OK && bFull && table_exists(db, "overhead"))
        rc = each_row(db,
                      "SELECT source, kind, count(*), sum(count), sum(end - start) FROM overhead"
                      " GROUP BY source, kind ORDER BY sum(end - start) DESC, source, kind",
                      p, row_ovh);
done:
    free(aQ);
    return rc;
}

/* Count of a table by name (-1 when absent). */
static long long table_count(const struct trace_info *p, const char *zName)
{
    size_t i;
    for (i = 0; i < N_TABLE; i++)
        if (!strcmp(azTable[i], zName)) return p->aCount[i];
    return -1;
}

/* Wall-clock ns of CUPTI timestamp ts, or NUL_INT without a clock anchor. */
static long long wall_of(const struct trace_info *p, long long ts)
{
    long long anchorCupti = parse_int(meta_get(p, "clock_anchor_cupti_ns"));
    long long anchorWall = parse_int(meta_get(p, "clock_anchor_wall_ns"));
    if (ts == NUL_INT || anchorCupti == NUL_INT || anchorWall == NUL_INT) return NUL_INT;
    return ts - anchorCupti + anchorWall;
}

/* ---- text output ---- */

/* "pid 42 (parent 1), rank 0 of 2 (local 0), host h" from the meta rows, into z. */
static void fmt_process(const struct trace_info *p, char *z, size_t n)
{
    const char *zPid = meta_get(p, "pid"), *zPpid = meta_get(p, "ppid");
    const char *zRank = meta_get(p, "rank"), *zWorld = meta_get(p, "world_size");
    const char *zLocal = meta_get(p, "local_rank"), *zHost = meta_get(p, "hostname");
    size_t len = 0;
    z[0] = 0;
#define APPEND(...) \
    if (len < n) len += (size_t)snprintf(z + len, n - len, __VA_ARGS__)
    APPEND("pid %s", zPid ? zPid : "?");
    if (zPpid) APPEND(" (parent %s)", zPpid);
    if (zRank) {
        APPEND(", rank %s", zRank);
        if (zWorld) APPEND(" of %s", zWorld);
        if (zLocal) APPEND(" (local %s)", zLocal);
    }
    if (zHost) APPEND(", host %s", zHost);
#undef APPEND
}

static void print_devices(FILE *f, const struct trace_info *p, const char *zLabel)
{
    char zB[32];
    int i;
    if (p->nDev == 0) fprintf(f, "%-11s none recorded\n", zLabel);
    for (i = 0; i < p->nDev; i++) {
        const struct info_dev *d = &p->aDev[i];
        fprintf(f, "%-11s %lld  %s", i == 0 ? zLabel : "", d->id, d->zName ? d->zName : "(unnamed)");
        if (d->total != NUL_INT) fprintf(f, ", %s", vt__fmt_bytes(d->total, zB, sizeof zB));
        if (d->ccMajor != NUL_INT && d->ccMinor != NUL_INT)
            fprintf(f, ", compute %lld.%lld", d->ccMajor, d->ccMinor);
        if (d->sm != NUL_INT) fprintf(f, ", %lld SMs", d->sm);
        if (d->pciBus != NUL_INT && d->pciDev != NUL_INT)
            fprintf(f, ", PCI %02llx:%02llx", d->pciBus, d->pciDev);
        if (d->zUuid && *d->zUuid) fprintf(f, ", %s", d->zUuid);
        fputc('\n', f);
    }
}

/* "duration" line: first to last event and the wall-clock start. */
static void print_duration(FILE *f, const struct trace_info *p, const char *zIndent)
{
    char zD[32], zW[48];
    long long wall = wall_of(p, p->firstTs);
    if (p->firstTs == NUL_INT) {
        fprintf(f, "%s%-11s no events\n", zIndent, "duration");
        return;
    }
    fprintf(f, "%s%-11s %s (first to last event)", zIndent, "duration",
            vt__fmt_ns(p->lastTs - p->firstTs, zD, sizeof zD));
    if (wall != NUL_INT) fprintf(f, ", started %s", vt__fmt_wall(wall, zW, sizeof zW));
    fputc('\n', f);
}

/* "memory" line: allocations, frees and the peak of live device memory. */
static void print_memory(FILE *f, const struct trace_info *p, const char *zIndent)
{
    char zB[32], zP[32], zT[32];
    int i;
    fprintf(f, "%s%-11s %lld allocation%s (%s), %lld free%s", zIndent, "memory", p->nAlloc,
            p->nAlloc == 1 ? "" : "s", vt__fmt_bytes(p->allocBytes, zB, sizeof zB), p->nFree,
            p->nFree == 1 ? "" : "s");
    if (p->nVmmMap) fprintf(f, ", %lld VMM map%s", p->nVmmMap, p->nVmmMap == 1 ? "" : "s");
    fputc('\n', f);
    for (i = 0; i < p->nPeak; i++) {
        const struct info_peak *k = &p->aPeak[i];
        fprintf(f, "%s%-11s peak live device memory %s on device %lld", zIndent, "",
                vt__fmt_bytes(k->bytes, zP, sizeof zP), k->device);
        if (p->firstTs != NUL_INT && k->ts != NUL_INT)
            fprintf(f, " at +%s", vt__fmt_ns(k->ts - p->firstTs, zT, sizeof zT));
        fputc('\n', f);
    }
}

static void print_dropped(FILE *f, const struct trace_info *p, const char *zIndent, int bDetail)
{
    int i;
    if (p->nDropTotal == 0) {
        fprintf(f, "%s%-11s none\n", zIndent, "dropped");
        return;
    }
    fprintf(f, "%s%-11s WARNING: %lld record%s lost; counts, peaks and findings are incomplete\n",
            zIndent, "dropped", p->nDropTotal, p->nDropTotal == 1 ? "" : "s");
    for (i = 0; bDetail && i < p->nDrop; i++)
        fprintf(f, "%s%-11s %-7s %-28s %lld\n", zIndent, "", vt__or(vt_drop_source_name(p->aDrop[i].source), "other"),
                p->aDrop[i].zWhat && *p->aDrop[i].zWhat ? p->aDrop[i].zWhat : "-",
                p->aDrop[i].count == NUL_INT ? 0 : p->aDrop[i].count);
}

/* Print the full text report of one trace. */
static void print_text(FILE *f, const struct trace_info *p)
{
    const char *zTracer = meta_get(p, "tracer_version"), *zDriver = meta_get(p, "cuda_driver_version");
    const char *zRuntime = meta_get(p, "cuda_runtime_version"), *zCupti = meta_get(p, "cupti_version");
    const char *zCmd = meta_get(p, "cmdline"), *zExe = meta_get2(p, "exe", "executable");
    const char *zClosed = meta_get(p, "closed_cleanly");
    long long startNs = parse_int(meta_get(p, "start_ns")), endNs = parse_int(meta_get(p, "end_ns"));
    char zB[32], zProc[512], zT[32];
    size_t i;
    int j, bFirst;

    fprintf(f, "%-11s %s\n", "trace", p->zPath);
    fprintf(f, "%-11s %lld bytes (%s), schema version %d\n", "file", p->fileBytes,
            vt__fmt_bytes(p->fileBytes, zB, sizeof zB), p->schemaVersion);
    fmt_process(p, zProc, sizeof zProc);
    fprintf(f, "%-11s %s\n", "process", zProc);
    if (zCmd) fprintf(f, "%-11s %s\n", "command", zCmd);
    if (zExe) fprintf(f, "%-11s %s\n", "executable", zExe);
    fprintf(f, "%-11s tracer %s, CUDA driver %s", "versions", zTracer ? zTracer : "?",
            zDriver ? zDriver : "?");
    if (zRuntime) fprintf(f, ", CUDA runtime %s", zRuntime);
    fprintf(f, ", CUPTI %s, schema %d\n", zCupti ? zCupti : "?", p->schemaVersion);
    if (zClosed && !strcmp(zClosed, "1")) {
        fprintf(f, "%-11s closed cleanly", "status");
        if (startNs != NUL_INT && endNs != NUL_INT)
            fprintf(f, ", traced for %s", vt__fmt_ns(endNs - startNs, zT, sizeof zT));
        fputc('\n', f);
    } else {
        fprintf(f, "%-11s WARNING: not closed cleanly (the process was killed, crashed or is still "
                   "running); the last events may be missing\n",
                "status");
    }
    if (meta_get(p, "records_decoded"))
        fprintf(f, "%-11s %s CUPTI records decoded (%s of kinds not stored), %s rows in %s commit%s\n",
                "writer", meta_get(p, "records_decoded"),
                meta_get(p, "records_unknown") ? meta_get(p, "records_unknown") : "?",
                meta_get(p, "rows_written") ? meta_get(p, "rows_written") : "?",
                meta_get(p, "commits") ? meta_get(p, "commits") : "?",
                parse_int(meta_get(p, "commits")) == 1 ? "" : "s");
    print_devices(f, p, "devices");
    print_duration(f, p, "");
    print_memory(f, p, "");
    for (j = 0; j < p->nAllocKind; j++)
        fprintf(f, "%-11s %-14s %lld allocation%s, %s\n", "", vt__or(vt_mem_kind_name(p->aAllocKind[j].kind), "other"),
                p->aAllocKind[j].n, p->aAllocKind[j].n == 1 ? "" : "s",
                vt__fmt_bytes(p->aAllocKind[j].bytes, zB, sizeof zB));
    fprintf(f, "%-11s %lld (%s), %lld from or to pageable host memory\n", "copies", p->nCopy,
            vt__fmt_bytes(p->copyBytes, zB, sizeof zB), p->nPageable);
    for (j = 0; j < p->nCopyKind; j++)
        fprintf(f, "%-11s %-14s %lld, %s\n", "", vt__or(vt_copy_kind_name(p->aCopyKind[j].kind), "other"),
                p->aCopyKind[j].n, vt__fmt_bytes(p->aCopyKind[j].bytes, zB, sizeof zB));
    fprintf(f, "%-11s %lld\n", "kernels", table_count(p, "kernel"));
    fprintf(f, "%-11s %lld\n", "OOMs", table_count(p, "oom_event"));
    for (j = 0; j < p->nOom; j++) {
        const struct info_oom *o = &p->aOom[j];
        char zReq[32], zFree[32], zTot[32];
        fprintf(f, "%-11s +%s %s of %s", "", p->firstTs != NUL_INT ? vt__fmt_ns(o->ts - p->firstTs, zT, sizeof zT) : "?",
                vt__or(vt_api_name(o->api), "unknown API"), vt__fmt_bytes(o->bytes, zReq, sizeof zReq));
        if (o->device != NUL_INT) fprintf(f, " on device %lld", o->device);
        fprintf(f, " failed (status %lld)", o->status);
        if (o->freeBytes != NUL_INT && o->totalBytes != NUL_INT)
            fprintf(f, ", %s free of %s", vt__fmt_bytes(o->freeBytes, zFree, sizeof zFree),
                    vt__fmt_bytes(o->totalBytes, zTot, sizeof zTot));
        fputc('\n', f);
    }
    print_dropped(f, p, "", 1);
    if (p->nOvh == 0) fprintf(f, "%-11s none recorded\n", "overhead");
    for (j = 0; j < p->nOvh; j++)
        fprintf(f, "%-11s %-9s %-24s %s in %lld event%s\n", j == 0 ? "overhead" : "",
                p->aOvh[j].zSource ? p->aOvh[j].zSource : "?", p->aOvh[j].zKind ? p->aOvh[j].zKind : "?",
                vt__fmt_ns(p->aOvh[j].ns == NUL_INT ? 0 : p->aOvh[j].ns, zT, sizeof zT),
                p->aOvh[j].events == NUL_INT ? 0 : p->aOvh[j].events, p->aOvh[j].events == 1 ? "" : "s");
    for (i = 0, bFirst = 1; i < N_TABLE; i++) {
        if (p->aCount[i] < 0) continue;
        fprintf(f, "%-11s %-14s %lld\n", bFirst ? "rows" : "", azTable[i], p->aCount[i]);
        bFirst = 0;
    }
    for (j = 0, bFirst = 1; j < p->nMeta; j++) {
        if (strncmp(p->aMeta[j].zKey, "config.", 7) != 0) continue;
        fprintf(f, "%-11s %s = %s\n", bFirst ? "config" : "", p->aMeta[j].zKey + 7, p->aMeta[j].zValue);
        bFirst = 0;
    }
    for (j = 0, bFirst = 1; j < p->nMeta; j++) {
        if (strncmp(p->aMeta[j].zKey, "env.", 4) != 0) continue;
        fprintf(f, "%-11s %s=%s\n", bFirst ? "environment" : "", p->aMeta[j].zKey + 4, p->aMeta[j].zValue);
        bFirst = 0;
    }
    for (j = 0, bFirst = 1; j < p->nMeta; j++) {
        if (meta_is_known(p->aMeta[j].zKey)) continue;
        fprintf(f, "%-11s %s = %s\n", bFirst ? "meta" : "", p->aMeta[j].zKey, p->aMeta[j].zValue);
        bFirst = 0;
    }
}

int vt__info_summary(FILE *f, const char *zPath)
{
    struct trace_info info;
    sqlite3 *db = NULL;
    char zB[32], zProc[512];
    const char *zClosed;
    int rc, i;

    rc = vt__trace_open(zPath, 0, &db);
    if (rc != VT_EXIT_OK) return rc;
    if (info_load(db, zPath, 0, &info) != SQLITE_OK) {
        vt__errorf("%s: cannot read: %s", zPath, sqlite3_errmsg(db));
        rc = VT_EXIT_CORRUPT;
    } else {
        zClosed = meta_get(&info, "closed_cleanly");
        fmt_process(&info, zProc, sizeof zProc);
        fprintf(f, "  %s\n", zPath);
        fprintf(f, "    %-11s %s%s\n", "process", zProc,
                zClosed && !strcmp(zClosed, "1") ? "" : "; WARNING: trace not closed cleanly");
        if (info.nDev == 0) fprintf(f, "    %-11s none recorded\n", "devices");
        for (i = 0; i < info.nDev; i++)
            fprintf(f, "    %-11s %lld  %s (%s)\n", i ? "" : "devices", info.aDev[i].id,
                    info.aDev[i].zName ? info.aDev[i].zName : "(unnamed)",
                    vt__fmt_bytes(info.aDev[i].total == NUL_INT ? 0 : info.aDev[i].total, zB, sizeof zB));
        print_duration(f, &info, "    ");
        print_memory(f, &info, "    ");
        fprintf(f, "    %-11s %lld cop%s (%s), %lld kernel%s, %lld OOM%s\n", "activity", info.nCopy,
                info.nCopy == 1 ? "y" : "ies", vt__fmt_bytes(info.copyBytes, zB, sizeof zB),
                table_count(&info, "kernel"), table_count(&info, "kernel") == 1 ? "" : "s",
                table_count(&info, "oom_event"), table_count(&info, "oom_event") == 1 ? "" : "s");
        print_dropped(f, &info, "    ", 0);
    }
    info_free(&info);
    sqlite3_close(db);
    return rc;
}

/* ---- JSON output ---- */

static void json_int(FILE *f, long long v)
{
    if (v == NUL_INT) fputs("null", f);
    else fprintf(f, "%lld", v);
}

/* "key": value pairs inside an object; bFirst tracks the comma. */
static void json_key(FILE *f, int *pbFirst, const char *zKey)
{
    if (!*pbFirst) fputc(',', f);
    *pbFirst = 0;
    vt__json_str(f, zKey);
    fputc(':', f);
}

static void json_kv_int(FILE *f, int *pbFirst, const char *zKey, long long v)
{
    json_key(f, pbFirst, zKey);
    json_int(f, v);
}

static void json_kv_str(FILE *f, int *pbFirst, const char *zKey, const char *zValue)
{
    json_key(f, pbFirst, zKey);
    vt__json_str(f, zValue);
}

/* Meta rows whose key starts with zPrefix, as one JSON object keyed without the prefix. */
static void json_meta_prefix(FILE *f, const struct trace_info *p, const char *zPrefix)
{
    size_t n = strlen(zPrefix);
    int j, b = 1;
    fputc('{', f);
    for (j = 0; j < p->nMeta; j++)
        if (!strncmp(p->aMeta[j].zKey, zPrefix, n))
            json_kv_str(f, &b, p->aMeta[j].zKey + n, p->aMeta[j].zValue);
    fputc('}', f);
}

/* Print one trace as a JSON object (stable keys, documented in docs/cli.md). */
static void print_json(FILE *f, const struct trace_info *p)
{
    const char *zClosed = meta_get(p, "closed_cleanly");
    char zW[48];
    long long wall = wall_of(p, p->firstTs);
    size_t i;
    int j, b = 1, c;

    fputc('{', f);
    json_kv_str(f, &b, "path", p->zPath);
    json_kv_int(f, &b, "file_bytes", p->fileBytes);
    json_kv_int(f, &b, "schema_version", p->schemaVersion);
    json_key(f, &b, "closed_cleanly");
    fputs(zClosed && !strcmp(zClosed, "1") ? "true" : "false", f);

    json_key(f, &b, "process");
    c = 1;
    fputc('{', f);
    json_kv_int(f, &c, "pid", parse_int(meta_get(p, "pid")));
    json_kv_int(f, &c, "ppid", parse_int(meta_get(p, "ppid")));
    json_kv_int(f, &c, "rank", parse_int(meta_get(p, "rank")));
    json_kv_int(f, &c, "local_rank", parse_int(meta_get(p, "local_rank")));
    json_kv_int(f, &c, "world_size", parse_int(meta_get(p, "world_size")));
    json_kv_str(f, &c, "hostname", meta_get(p, "hostname"));
    json_kv_str(f, &c, "cmdline", meta_get(p, "cmdline"));
    json_kv_str(f, &c, "executable", meta_get2(p, "exe", "executable"));
    fputc('}', f);

    json_key(f, &b, "versions");
    c = 1;
    fputc('{', f);
    json_kv_str(f, &c, "tracer", meta_get(p, "tracer_version"));
    json_kv_int(f, &c, "cuda_driver", parse_int(meta_get(p, "cuda_driver_version")));
    json_kv_int(f, &c, "cuda_runtime", parse_int(meta_get(p, "cuda_runtime_version")));
    json_kv_int(f, &c, "cupti", parse_int(meta_get(p, "cupti_version")));
    json_kv_int(f, &c, "schema", p->schemaVersion);
    fputc('}', f);

    json_key(f, &b, "writer");
    c = 1;
    fputc('{', f);
    json_kv_int(f, &c, "records_decoded", parse_int(meta_get(p, "records_decoded")));
    json_kv_int(f, &c, "records_unknown", parse_int(meta_get(p, "records_unknown")));
    json_kv_int(f, &c, "rows_written", parse_int(meta_get(p, "rows_written")));
    json_kv_int(f, &c, "commits", parse_int(meta_get(p, "commits")));
    json_kv_int(f, &c, "dropped_queue", parse_int(meta_get(p, "dropped_queue")));
    json_kv_int(f, &c, "dropped_writer", parse_int(meta_get(p, "dropped_writer")));
    json_kv_int(f, &c, "dropped_map", parse_int(meta_get(p, "dropped_map")));
    fputc('}', f);

    json_key(f, &b, "devices");
    fputc('[', f);
    for (j = 0; j < p->nDev; j++) {
        const struct info_dev *d = &p->aDev[j];
        c = 1;
        fputs(j ? ",{" : "{", f);
        json_kv_int(f, &c, "id", d->id);
        json_kv_str(f, &c, "name", d->zName);
        json_kv_str(f, &c, "uuid", d->zUuid);
        json_kv_int(f, &c, "total_bytes", d->total);
        json_kv_int(f, &c, "cc_major", d->ccMajor);
        json_kv_int(f, &c, "cc_minor", d->ccMinor);
        json_kv_int(f, &c, "sm_count", d->sm);
        json_kv_int(f, &c, "pci_bus", d->pciBus);
        json_kv_int(f, &c, "pci_device", d->pciDev);
        json_kv_int(f, &c, "memory_bandwidth_kbps", d->bw);
        fputc('}', f);
    }
    fputc(']', f);

    json_key(f, &b, "time");
    c = 1;
    fputc('{', f);
    json_kv_int(f, &c, "first_ns", p->firstTs);
    json_kv_int(f, &c, "last_ns", p->lastTs);
    json_kv_int(f, &c, "duration_ns", p->firstTs == NUL_INT ? NUL_INT : p->lastTs - p->firstTs);
    json_kv_int(f, &c, "wall_start_ns", wall);
    json_kv_str(f, &c, "wall_start", wall == NUL_INT ? NULL : vt__fmt_wall(wall, zW, sizeof zW));
    json_kv_int(f, &c, "tracer_start_ns", parse_int(meta_get(p, "start_ns")));
    json_kv_int(f, &c, "tracer_end_ns", parse_int(meta_get(p, "end_ns")));
    json_kv_int(f, &c, "time_base_ns", parse_int(meta_get(p, "time_base_ns")));
    fputc('}', f);

    json_key(f, &b, "rows");
    c = 1;
    fputc('{', f);
    for (i = 0; i < N_TABLE; i++)
        if (p->aCount[i] >= 0) json_kv_int(f, &c, azTable[i], p->aCount[i]);
    fputc('}', f);

    json_key(f, &b, "memory");
    c = 1;
    fputc('{', f);
    json_kv_int(f, &c, "allocations", p->nAlloc);
    json_kv_int(f, &c, "allocated_bytes", p->allocBytes);
    json_kv_int(f, &c, "frees", p->nFree);
    json_kv_int(f, &c, "vmm_maps", p->nVmmMap);
    json_key(f, &c, "allocations_by_kind");
    fputc('[', f);
    for (j = 0; j < p->nAllocKind; j++) {
        int d = 1;
        fputs(j ? ",{" : "{", f);
        json_kv_str(f, &d, "mem_kind", vt__or(vt_mem_kind_name(p->aAllocKind[j].kind), "other"));
        json_kv_int(f, &d, "count", p->aAllocKind[j].n);
        json_kv_int(f, &d, "bytes", p->aAllocKind[j].bytes);
        fputc('}', f);
    }
    fputs("]", f);
    json_key(f, &c, "peak_live_device");
    fputc('[', f);
    for (j = 0; j < p->nPeak; j++) {
        int d = 1;
        fputs(j ? ",{" : "{", f);
        json_kv_int(f, &d, "device", p->aPeak[j].device);
        json_kv_int(f, &d, "bytes", p->aPeak[j].bytes);
        json_kv_int(f, &d, "ts", p->aPeak[j].ts);
        fputc('}', f);
    }
    fputs("]}", f);

    json_key(f, &b, "copies");
    c = 1;
    fputc('{', f);
    json_kv_int(f, &c, "count", p->nCopy);
    json_kv_int(f, &c, "bytes", p->copyBytes);
    json_kv_int(f, &c, "pageable", p->nPageable);
    json_key(f, &c, "by_kind");
    fputc('[', f);
    for (j = 0; j < p->nCopyKind; j++) {
        int d = 1;
        fputs(j ? ",{" : "{", f);
        json_kv_str(f, &d, "copy_kind", vt__or(vt_copy_kind_name(p->aCopyKind[j].kind), "other"));
        json_kv_int(f, &d, "count", p->aCopyKind[j].n);
        json_kv_int(f, &d, "bytes", p->aCopyKind[j].bytes);
        json_kv_int(f, &d, "pageable", p->aCopyKind[j].pageable);
        fputc('}', f);
    }
    fputs("]}", f);
    json_kv_int(f, &b, "kernels", table_count(p, "kernel"));

    json_key(f, &b, "ooms");
    fputc('[', f);
    for (j = 0; j < p->nOom; j++) {
        const struct info_oom *o = &p->aOom[j];
        c = 1;
        fputs(j ? ",{" : "{", f);
        json_kv_int(f, &c, "ts", o->ts);
        json_kv_str(f, &c, "api", vt__or(vt_api_name(o->api), "unknown API"));
        json_kv_int(f, &c, "device", o->device);
        json_kv_int(f, &c, "bytes", o->bytes);
        json_kv_int(f, &c, "status", o->status);
        json_kv_int(f, &c, "free_bytes", o->freeBytes);
        json_kv_int(f, &c, "total_bytes", o->totalBytes);
        fputc('}', f);
    }
    fputc(']', f);

    json_key(f, &b, "dropped");
    c = 1;
    fputc('{', f);
    json_kv_int(f, &c, "total", p->nDropTotal);
    json_key(f, &c, "by_source");
    fputc('[', f);
    for (j = 0; j < p->nDrop; j++) {
        int d = 1;
        fputs(j ? ",{" : "{", f);
        json_kv_str(f, &d, "source", vt__or(vt_drop_source_name(p->aDrop[j].source), "other"));
        json_kv_str(f, &d, "what", p->aDrop[j].zWhat);
        json_kv_int(f, &d, "count", p->aDrop[j].count);
        fputc('}', f);
    }
    fputs("]}", f);

    json_key(f, &b, "overhead");
    fputc('[', f);
    for (j = 0; j < p->nOvh; j++) {
        c = 1;
        fputs(j ? ",{" : "{", f);
        json_kv_str(f, &c, "source", p->aOvh[j].zSource);
        json_kv_str(f, &c, "kind", p->aOvh[j].zKind);
        json_kv_int(f, &c, "rows", p->aOvh[j].rows);
        json_kv_int(f, &c, "events", p->aOvh[j].events);
        json_kv_int(f, &c, "total_ns", p->aOvh[j].ns);
        fputc('}', f);
    }
    fputc(']', f);

    json_key(f, &b, "config");
    json_meta_prefix(f, p, "config.");
    json_key(f, &b, "environment");
    json_meta_prefix(f, p, "env.");
    json_key(f, &b, "meta");
    json_meta_prefix(f, p, "");
    fputc('}', f);
}

static const char zInfoUsage[] =
    "usage: vramtrace info [--json] TRACE...\n"
    "\n"
    "Show what a trace holds: process, versions, devices, duration, allocations and\n"
    "peak live device memory, copies, kernels, OOMs, dropped records, tracer\n"
    "overhead, configuration, and row counts per table.\n"
    "\n"
    "options:\n"
    "  --json      machine-readable output: {\"format\":\"vramtrace-info\",\n"
    "              \"format_version\":1,\"traces\":[...]}\n"
    "  -h, --help  show this help\n"
    "\n"
    "exit status: 0 ok, 2 usage, 3 missing or unreadable file, 4 not a trace,\n"
    "5 trace from a newer vramtrace, 6 damaged trace, 7 internal error (the first\n"
    "failure when several traces are given; the others are still shown).\n";

int vt__cmd_info(int argc, char **argv)
{
    enum { O_JSON = 1 };
    static const struct vt_opt aOpt[] = {{"json", 0, 0, O_JSON}, {NULL, 0, 0, 0}};
    struct vt_optparse p = {0};
    const char **azTrace;
    int i, c, bJson = 0, nTrace = 0, nShown = 0, rcAll = VT_EXIT_OK;

    if (vt__opt_begin(&p, "info", argc, argv, aOpt, 0) != 0) {
        rcAll = VT_EXIT_INTERNAL;
        goto done;
    }
    while ((c = vt__opt_next(&p)) == O_JSON) bJson = 1;
    if (c == VT_OPT_HELP) {
        fputs(zInfoUsage, stdout);
        goto done;
    }
    if (c == VT_OPT_ERROR) {
        rcAll = VT_EXIT_USAGE;
        goto done;
    }
    azTrace = (const char **)p.azArg;
    nTrace = p.nArg;
    if (nTrace == 0) {
        vt__errorf("info: no trace given (usage: vramtrace info [--json] TRACE...)");
        rcAll = VT_EXIT_USAGE;
        goto done;
    }
    if (bJson) printf("{\"format\":\"vramtrace-info\",\"format_version\":1,\"traces\":[");
    for (i = 0; i < nTrace; i++) {
        struct trace_info info;
        sqlite3 *db = NULL;
        int rc = vt__trace_open(azTrace[i], 0, &db);
        if (rc == VT_EXIT_OK) {
            if (info_load(db, azTrace[i], 1, &info) != SQLITE_OK) {
                vt__errorf("%s: cannot read: %s", azTrace[i], sqlite3_errmsg(db));
                rc = VT_EXIT_CORRUPT;
            } else if (bJson) {
                if (nShown++) putchar(',');
                print_json(stdout, &info);
            } else {
                if (nShown++) putchar('\n');
                print_text(stdout, &info);
            }
            info_free(&info);
        }
        sqlite3_close(db);
        if (rc != VT_EXIT_OK && rcAll == VT_EXIT_OK) rcAll = rc;
    }
    if (bJson) printf("]}\n");
    if (fflush(stdout) != 0 && rcAll == VT_EXIT_OK) {
        vt__errorf("info: cannot write the output");
        rcAll = VT_EXIT_INTERNAL;
    }
done:
    vt__opt_end(&p);
    return rcAll;
}
