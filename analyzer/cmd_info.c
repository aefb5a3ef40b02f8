/* The 'info' subcommand: what a trace holds (process, versions, devices, duration, counts, losses, overhead, configuration), as text or JSON. */
#include "cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "record.h"
#include "schema.h"

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

/* Human-readable byte count ("512 B", "1.5 MiB") into z (size >= 32). */
static const char *fmt_bytes(char *z, size_t n, long long nByte)
{
    static const char *const azUnit[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)nByte;
    int i = -1;
    if (nByte < 1024 && nByte > -1024) {
        snprintf(z, n, "%lld B", nByte);
        return z;
    }
    while ((v >= 1024.0 || v <= -1024.0) && i < 4) {
        v /= 1024.0;
        i++;
    }
    snprintf(z, n, "%.1f %s", v, azUnit[i]);
    return z;
}

/* Human-readable duration of ns nanoseconds into z. */
static const char *fmt_ns(char *z, size_t n, long long ns)
{
    if (ns < 1000 && ns > -1000) snprintf(z, n, "%lld ns", ns);
    else if (ns < 1000000 && ns > -1000000) snprintf(z, n, "%.1f us", (double)ns / 1e3);
    else if (ns < 1000000000LL && ns > -1000000000LL) snprintf(z, n, "%.3f ms", (double)ns / 1e6);
    else snprintf(z, n, "%.3f s", (double)ns / 1e9);
    return z;
}

/* Wall-clock time (ns since the epoch) as "YYYY-MM-DD HH:MM:SS.mmm UTC" into z. */
static const char *fmt_wall(char *z, size_t n, long long wallNs)
{
    time_t t = (time_t)(wallNs / 1000000000LL);
    struct tm tm;
    char zDate[32];
    if (!gmtime_r(&t, &tm) || !strftime(zDate, sizeof zDate, "%Y-%m-%d %H:%M:%S", &tm)) {
        snprintf(z, n, "?");
        return z;
    }
    snprintf(z, n, "%s.%03lld UTC", zDate, (wallNs % 1000000000LL) / 1000000LL);
    return z;
}

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

static const char *mem_kind_name(long long k)
{
    static const char *const az[] = {"unknown", "pageable", "pinned", "device", "array", "managed",
                                     "device_static", "managed_static"};
    return k >= 0 && k < 8 ? az[k] : "other";
}

static const char *copy_kind_name(long long k)
{
    static const char *const az[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                     "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
    return k >= 0 && k < 11 ? az[k] : "other";
}

static const char *drop_source_name(long long s)
{
    switch (s) {
    case VT_DROP_CUPTI: return "cupti";
    case VT_DROP_QUEUE: return "queue";
    case VT_DROP_WRITER: return "writer";
    case VT_DROP_MAP: return "map";
    default: return "other";
    }
}

static const char *api_name(long long api)
{
    switch (api) {
#define VT__API_CASE(id, name, family) \
    case id: return name;
        VT_API_LIST(VT__API_CASE)
#undef VT__API_CASE
    default: return "unknown API";
    }
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

/*
 * Peak of live device memory per device: the running total of device-kind
 * allocations minus frees in (ts, id) order, as the memory_timeline view
 * defines it, computed in one ordered scan (the index on ts serves the order;
 * the view's window function is many times slower on large traces). Appends
 * one info_peak per device, in device order. Returns an SQLite code.
 */
static int load_peaks(sqlite3 *db, struct trace_info *p)
{
    sqlite3_stmt *pStmt = NULL;
    long long *aLive = NULL;
    int rc, i, j;

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
    /* devices in ascending order (NULL, stored as NUL_INT, first) */
    for (i = 1; i < p->nPeak; i++) {
        struct info_peak k = p->aPeak[i];
        for (j = i; j > 0 && p->aPeak[j - 1].device > k.device; j--) p->aPeak[j] = p->aPeak[j - 1];
        p->aPeak[j] = k;
    }
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

/*
 * Read everything info reports from an open trace into *p (zeroed first).
 * bFull = 0 reads only what the record summary needs. Returns SQLITE_OK or an
 * SQLite error code (*p then holds what was read; free it with info_free).
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
    size_t i;
    int rc;

    memset(p, 0, sizeof *p);
    p->zPath = zPath;
    p->firstTs = p->lastTs = NUL_INT;
    p->fileBytes = stat(zPath, &st) == 0 ? (long long)st.st_size : -1;
    p->schemaVersion = 0;
    vt__schema_check(db, &p->schemaVersion, zSql, sizeof zSql);
    {
        int64_t nHidden = 0; /* rows no real trace can hold are neither counted nor summed */
        if ((rc = vt__trace_guard(db, &nHidden)) != SQLITE_OK) return rc;
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
        if (!table_exists(db, azTable[i])) continue;
        snprintf(zSql, sizeof zSql, "SELECT count(*) FROM \"%s\"", azTable[i]);
        rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
            p->aCount[i] = sqlite3_column_int64(pStmt, 0);
            rc = SQLITE_OK;
        }
        sqlite3_finalize(pStmt);
    }
    if (rc == SQLITE_OK) {
        int bApi = table_exists(db, "api_call"), bSync = table_exists(db, "sync_event"),
            bPool = table_exists(db, "pool_event");
        snprintf(zSql, sizeof zSql, zRange,
                 bApi ? " UNION ALL SELECT min(start), max(coalesce(end, start)) FROM api_call" : "",
                 bSync ? " UNION ALL SELECT min(start), max(end) FROM sync_event" : "",
                 bPool ? " UNION ALL SELECT min(ts), max(ts) FROM pool_event" : "");
        rc = each_row(db, zSql, p, row_range);
    }
    if (rc == SQLITE_OK)
        rc = each_row(db, "SELECT op, count(*), sum(bytes) FROM memory_event GROUP BY op", p,
                      row_memop);
    if (rc == SQLITE_OK) rc = load_peaks(db, p);
    if (rc == SQLITE_OK)
        rc = each_row(db,
                      "SELECT copy_kind, count(*), coalesce(sum(bytes), 0),"
                      " sum(src_kind = 1 OR dst_kind = 1) FROM memcpy GROUP BY copy_kind"
                      " ORDER BY copy_kind",
                      p, row_copy_kind);
    if (rc == SQLITE_OK)
        rc = each_row(db,
                      "SELECT source, coalesce(what, ''), sum(count) FROM dropped"
                      " GROUP BY source, what ORDER BY source, what",
                      p, row_drop);
    if (rc == SQLITE_OK && bFull)
        rc = each_row(db,
                      "SELECT mem_kind, count(*), coalesce(sum(bytes), 0) FROM memory_event"
                      " WHERE op = 1 GROUP BY mem_kind ORDER BY mem_kind",
                      p, row_alloc_kind);
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
        if (d->total != NUL_INT) fprintf(f, ", %s", fmt_bytes(zB, sizeof zB, d->total));
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
            fmt_ns(zD, sizeof zD, p->lastTs - p->firstTs));
    if (wall != NUL_INT) fprintf(f, ", started %s", fmt_wall(zW, sizeof zW, wall));
    fputc('\n', f);
}

/* "memory" line: allocations, frees and the peak of live device memory. */
static void print_memory(FILE *f, const struct trace_info *p, const char *zIndent)
{
    char zB[32], zP[32], zT[32];
    int i;
    fprintf(f, "%s%-11s %lld allocation%s (%s), %lld free%s", zIndent, "memory", p->nAlloc,
            p->nAlloc == 1 ? "" : "s", fmt_bytes(zB, sizeof zB, p->allocBytes), p->nFree,
            p->nFree == 1 ? "" : "s");
    if (p->nVmmMap) fprintf(f, ", %lld VMM map%s", p->nVmmMap, p->nVmmMap == 1 ? "" : "s");
    fputc('\n', f);
    for (i = 0; i < p->nPeak; i++) {
        const struct info_peak *k = &p->aPeak[i];
        fprintf(f, "%s%-11s peak live device memory %s on device %lld", zIndent, "",
                fmt_bytes(zP, sizeof zP, k->bytes), k->device);
        if (p->firstTs != NUL_INT && k->ts != NUL_INT)
            fprintf(f, " at +%s", fmt_ns(zT, sizeof zT, k->ts - p->firstTs));
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
        fprintf(f, "%s%-11s %-7s %-28s %lld\n", zIndent, "", drop_source_name(p->aDrop[i].source),
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
            fmt_bytes(zB, sizeof zB, p->fileBytes), p->schemaVersion);
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
            fprintf(f, ", traced for %s", fmt_ns(zT, sizeof zT, endNs - startNs));
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
        fprintf(f, "%-11s %-14s %lld allocation%s, %s\n", "", mem_kind_name(p->aAllocKind[j].kind),
                p->aAllocKind[j].n, p->aAllocKind[j].n == 1 ? "" : "s",
                fmt_bytes(zB, sizeof zB, p->aAllocKind[j].bytes));
    fprintf(f, "%-11s %lld (%s), %lld from or to pageable host memory\n", "copies", p->nCopy,
            fmt_bytes(zB, sizeof zB, p->copyBytes), p->nPageable);
    for (j = 0; j < p->nCopyKind; j++)
        fprintf(f, "%-11s %-14s %lld, %s\n", "", copy_kind_name(p->aCopyKind[j].kind),
                p->aCopyKind[j].n, fmt_bytes(zB, sizeof zB, p->aCopyKind[j].bytes));
    fprintf(f, "%-11s %lld\n", "kernels", table_count(p, "kernel"));
    fprintf(f, "%-11s %lld\n", "OOMs", table_count(p, "oom_event"));
    for (j = 0; j < p->nOom; j++) {
        const struct info_oom *o = &p->aOom[j];
        char zReq[32], zFree[32], zTot[32];
        fprintf(f, "%-11s +%s %s of %s", "", p->firstTs != NUL_INT ? fmt_ns(zT, sizeof zT, o->ts - p->firstTs) : "?",
                api_name(o->api), fmt_bytes(zReq, sizeof zReq, o->bytes));
        if (o->device != NUL_INT) fprintf(f, " on device %lld", o->device);
        fprintf(f, " failed (status %lld)", o->status);
        if (o->freeBytes != NUL_INT && o->totalBytes != NUL_INT)
            fprintf(f, ", %s free of %s", fmt_bytes(zFree, sizeof zFree, o->freeBytes),
                    fmt_bytes(zTot, sizeof zTot, o->totalBytes));
        fputc('\n', f);
    }
    print_dropped(f, p, "", 1);
    if (p->nOvh == 0) fprintf(f, "%-11s none recorded\n", "overhead");
    for (j = 0; j < p->nOvh; j++)
        fprintf(f, "%-11s %-9s %-24s %s in %lld event%s\n", j == 0 ? "overhead" : "",
                p->aOvh[j].zSource ? p->aOvh[j].zSource : "?", p->aOvh[j].zKind ? p->aOvh[j].zKind : "?",
                fmt_ns(zT, sizeof zT, p->aOvh[j].ns == NUL_INT ? 0 : p->aOvh[j].ns),
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
                    fmt_bytes(zB, sizeof zB, info.aDev[i].total == NUL_INT ? 0 : info.aDev[i].total));
        print_duration(f, &info, "    ");
        print_memory(f, &info, "    ");
        fprintf(f, "    %-11s %lld cop%s (%s), %lld kernel%s, %lld OOM%s\n", "activity", info.nCopy,
                info.nCopy == 1 ? "y" : "ies", fmt_bytes(zB, sizeof zB, info.copyBytes),
                table_count(&info, "kernel"), table_count(&info, "kernel") == 1 ? "" : "s",
                table_count(&info, "oom_event"), table_count(&info, "oom_event") == 1 ? "" : "s");
        print_dropped(f, &info, "    ", 0);
    }
    info_free(&info);
    sqlite3_close(db);
    return rc;
}

/* ---- JSON output ---- */

/* Write z as a JSON string (NULL as null); invalid UTF-8 bytes become U+FFFD. */
static void json_str(FILE *f, const char *z)
{
    const unsigned char *p = (const unsigned char *)z;
    if (!z) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    while (*p) {
        unsigned c = *p;
        int nCont = c >= 0xf0 && c < 0xf5 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : 0, k;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
            p++;
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
            p++;
        } else if (c < 0x80) {
            fputc((int)c, f);
            p++;
        } else {
            for (k = 1; k <= nCont && (p[k] & 0xc0) == 0x80; k++) {
            }
            if (nCont == 0 || c >= 0xf5 || k <= nCont) {
                fputs("\\ufffd", f);
                p++;
            } else {
                fwrite(p, 1, (size_t)nCont + 1, f);
                p += nCont + 1;
            }
        }
    }
    fputc('"', f);
}

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
    json_str(f, zKey);
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
    json_str(f, zValue);
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
    json_kv_str(f, &c, "wall_start", wall == NUL_INT ? NULL : fmt_wall(zW, sizeof zW, wall));
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
        json_kv_str(f, &d, "mem_kind", mem_kind_name(p->aAllocKind[j].kind));
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
        json_kv_str(f, &d, "copy_kind", copy_kind_name(p->aCopyKind[j].kind));
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
        json_kv_str(f, &c, "api", api_name(o->api));
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
        json_kv_str(f, &d, "source", drop_source_name(p->aDrop[j].source));
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
    const char **azTrace;
    int i, bJson = 0, bOptions = 1, nTrace = 0, nShown = 0, rcAll = VT_EXIT_OK;

    azTrace = calloc((size_t)argc + 1, sizeof *azTrace);
    if (!azTrace) {
        vt__errorf("info: out of memory");
        return VT_EXIT_INTERNAL;
    }
    for (i = 1; i < argc; i++) {
        if (bOptions && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
            fputs(zInfoUsage, stdout);
            goto done;
        }
        if (bOptions && !strcmp(argv[i], "--json")) bJson = 1;
        else if (bOptions && !strcmp(argv[i], "--")) bOptions = 0;
        else if (bOptions && argv[i][0] == '-' && argv[i][1]) {
            vt__errorf("info: unknown option '%s' (try 'vramtrace info --help')", argv[i]);
            rcAll = VT_EXIT_USAGE;
            goto done;
        } else azTrace[nTrace++] = argv[i];
    }
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
    free(azTrace);
    return rcAll;
}
