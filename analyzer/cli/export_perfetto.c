/* Streaming export of traces to Chrome trace-event JSON (kernels, copies, NVTX, memory counters, by site, by category). */
#include "export.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h" /* VT_SITECURVE_TOP: the sites the HTML report draws; the breakdown's curves */
#include "import/addrmap.h"
#include "read/read.h"
#include "report/report.h"
#include "sql.h"
#include "util/text.h"
#include "vramtrace/schema.h"

/* Track ids (JSON "tid") for GPU tracks; host threads keep their OS thread id. */
#define GPU_TID_BASE 10000000LL  /* + device * GPU_TID_STRIDE: the device's allocation track */
#define GPU_TID_STRIDE 1000000LL /* streams: base + 1 + stream */
#define NVTX_TID_NONE 0          /* NVTX ranges without a recorded thread */
#define TENSOR_TID_BASE 9000000LL /* + device: the device's tensor track (a framework allocator's blocks); above
                                   * any OS thread id, below the GPU tracks */

/* The call site of stack `col`: the `site` view (created on the connection, see nsight.h). */
#define SITE_SQL(col) "(SELECT site FROM site WHERE stack_id = " col ")"

/* Running live bytes of one counter series (device, series name). */
struct series {
    int device;
    int bSite;              /* a site group's series ("GPU d memory by site"), else a memory kind's */
    const char *zName;
    int64_t bytes;
};

struct exporter {
    FILE *f;
    int bFirst;        /* no event written yet */
    int64_t t0;        /* global ns origin */
    int64_t shift;     /* current trace: ns added to its timestamps */
    long long pid;     /* current trace: JSON pid */
    sqlite3 *db;       /* current trace */
    struct vt_tracefile *pF; /* current trace */
    struct series *aSeries;
    int nSeries;
    struct vt_export_stats *pStats;
    int64_t winFrom, winTo;  /* the time window, ns from the origin (display time) */
    int bSeeded;             /* the memory pass wrote every series' value at the window's start */
    /* the memory pass: its live set, sites, and what applying the current row did */
    struct vt_live *L;
    struct vt_sites sites;
    int bMatched;      /* the row ended a lifetime (a free) or began one (an allocation) */
    int rcMem;         /* out of memory in a hook */
    /* live bytes by site group: the pass whose lifetimes the analysis judges (blocks when the trace has them) */
    int bSiteSeries;
    struct vt__addrmap siteLive, sitePeak, siteKept; /* key (device << 32 | site): live bytes, peak, kept (1) */
};

/* The running total of (device, zName) (bSite: a site group's), created at 0. NULL when out of memory. */
static struct series *series_get(struct exporter *x, int device, int bSite, const char *zName)
{
    struct series *aNew;
    int i;
    for (i = 0; i < x->nSeries; i++)
        if (x->aSeries[i].device == device && x->aSeries[i].bSite == bSite && !strcmp(x->aSeries[i].zName, zName))
            return &x->aSeries[i];
    aNew = realloc(x->aSeries, sizeof(struct series) * (size_t)(x->nSeries + 1));
    if (!aNew) return NULL;
    x->aSeries = aNew;
    aNew[x->nSeries].device = device;
    aNew[x->nSeries].bSite = bSite;
    aNew[x->nSeries].zName = zName;
    aNew[x->nSeries].bytes = 0;
    return &aNew[x->nSeries++];
}

/* Write a trace timestamp (ns) as microseconds relative to the origin, 3 decimals. */
static void put_us(struct exporter *x, int64_t ns, int bAbsolute)
{
    int64_t v = bAbsolute ? ns : ns + x->shift - x->t0;
    if (v < 0) {
        fputc('-', x->f);
        v = -v;
    }
    fprintf(x->f, "%lld.%03lld", (long long)(v / 1000), (long long)(v % 1000));
}

/* Whether an event from start to end (trace ns) overlaps the time window. */
static int in_window(const struct exporter *x, int64_t start, int64_t end)
{
    return end + x->shift - x->t0 >= x->winFrom && start + x->shift - x->t0 <= x->winTo;
}

/* Start one event object: separator, then {"ph":..,"pid":..,"tid":..,"name":.. */
static void event_begin(struct exporter *x, const char *zPh, long long tid, const char *zName)
{
    fputs(x->bFirst ? "\n{" : ",\n{", x->f);
    x->bFirst = 0;
    fprintf(x->f, "\"ph\":\"%s\",\"pid\":%lld,\"tid\":%lld,\"name\":", zPh, x->pid, tid);
    vt__json_str(x->f, zName ? zName : "");
}

static long long stream_tid(int device, long long stream)
{
    if (stream >= 0 && stream < GPU_TID_STRIDE - 1)
        return GPU_TID_BASE + device * GPU_TID_STRIDE + 1 + stream;
    return GPU_TID_BASE + 64 * GPU_TID_STRIDE + (stream & 0xFFFFFFFLL) + device * 0x10000000LL;
}

/* Optional integer argument: ,"key":value (nothing when the column is NULL). */
static void arg_int(struct exporter *x, sqlite3_stmt *p, int i, const char *zKey)
{
    if (sqlite3_column_type(p, i) == SQLITE_NULL) return;
    fprintf(x->f, ",\"%s\":%lld", zKey, (long long)sqlite3_column_int64(p, i));
}

/* Optional ,"key":[x,y,z] from columns i..i+2: left out unless all three are known. */
static void arg_dim3(struct exporter *x, sqlite3_stmt *p, int i, const char *zKey)
{
    if (sqlite3_column_type(p, i) == SQLITE_NULL || sqlite3_column_type(p, i + 1) == SQLITE_NULL ||
        sqlite3_column_type(p, i + 2) == SQLITE_NULL)
        return;
    fprintf(x->f, ",\"%s\":[%lld,%lld,%lld]", zKey, (long long)sqlite3_column_int64(p, i),
            (long long)sqlite3_column_int64(p, i + 1), (long long)sqlite3_column_int64(p, i + 2));
}

static void arg_hex(struct exporter *x, sqlite3_stmt *p, int i, const char *zKey)
{
    if (sqlite3_column_type(p, i) == SQLITE_NULL) return;
    fprintf(x->f, ",\"%s\":\"0x%llx\"", zKey, (unsigned long long)sqlite3_column_int64(p, i));
}

static void arg_text(struct exporter *x, sqlite3_stmt *p, int i, const char *zKey)
{
    if (sqlite3_column_type(p, i) == SQLITE_NULL) return;
    fprintf(x->f, ",\"%s\":", zKey);
    vt__json_strn(x->f, (const char *)sqlite3_column_text(p, i), (size_t)sqlite3_column_bytes(p, i), VT_TEXT_CAP);
}

/* Prepare zSql on the current trace; on failure copy SQLite's message into *pzErr. */
static int prepare(struct exporter *x, const char *zSql, sqlite3_stmt **pp, char **pzErr)
{
    int rc = sqlite3_prepare_v2(x->db, zSql, -1, pp, NULL);
    if (rc != SQLITE_OK && !*pzErr) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(x->db));
    return rc;
}

/* Finish a step loop: SQLITE_DONE -> SQLITE_OK, else record the message. */
static int step_end(struct exporter *x, int rc, char **pzErr)
{
    if (rc == SQLITE_DONE) return SQLITE_OK;
    if (!*pzErr) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(x->db));
    return rc;
}

/*
 * Name the track of each device zSql lists (one integer column) "GPU N zWhat", its track id
 * tidBase + N * stride. Returns an SQLite code (*pzErr set on error).
 */
static int name_device_tracks(struct exporter *x, const char *zSql, const char *zWhat, long long tidBase,
                              long long stride, char **pzErr)
{
    sqlite3_stmt *p = NULL;
    char zName[96];
    int rc = prepare(x, zSql, &p, pzErr);
    if (rc != SQLITE_OK) return rc;
    while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
        int device = sqlite3_column_int(p, 0);
        snprintf(zName, sizeof zName, "GPU %d %s", device, zWhat);
        event_begin(x, "M", tidBase + device * stride, "thread_name");
        fputs(",\"args\":{\"name\":", x->f);
        vt__json_str(x->f, zName);
        fputs("}}", x->f);
        x->pStats->nMeta++;
    }
    rc = step_end(x, rc, pzErr);
    sqlite3_finalize(p);
    return rc;
}

/* Metadata: process name and sort order, names of every stream, host-thread and memory track. */
static int write_tracks(struct exporter *x, int iTrace, const char *zPath, char **pzErr)
{
    sqlite3_stmt *p = NULL;
    char zName[256];
    int rc;

    rc = prepare(x,
                 "SELECT (SELECT value FROM meta WHERE key='rank'),"
                 " (SELECT value FROM meta WHERE key='hostname'),"
                 " (SELECT value FROM meta WHERE key='pid')",
                 &p, pzErr);
    if (rc != SQLITE_OK) goto done;
    if ((rc = sqlite3_step(p)) == SQLITE_ROW) {
        const char *zRank = (const char *)sqlite3_column_text(p, 0);
        const char *zHost = (const char *)sqlite3_column_text(p, 1);
        const char *zPid = (const char *)sqlite3_column_text(p, 2);
        const char *zFile = strrchr(zPath, '/') ? strrchr(zPath, '/') + 1 : zPath; /* names a process without a pid */
        snprintf(zName, sizeof zName, "%s%s%s%s%s%s%s", zRank ? "rank " : "", zRank ? zRank : "", zRank ? " " : "",
                 zPid ? "pid " : "", zPid ? zPid : zFile, zHost ? " @" : "", zHost ? zHost : "");
        event_begin(x, "M", 0, "process_name");
        fputs(",\"args\":{\"name\":", x->f);
        vt__json_str(x->f, zName);
        fputs("}}", x->f);
        event_begin(x, "M", 0, "process_labels");
        fputs(",\"args\":{\"labels\":", x->f);
        vt__json_str(x->f, zPath);
        fputs("}}", x->f);
        event_begin(x, "M", 0, "process_sort_index");
        fprintf(x->f, ",\"args\":{\"sort_index\":%d}}", iTrace);
        x->pStats->nMeta += 3;
        rc = SQLITE_DONE;
    }
    if ((rc = step_end(x, rc, pzErr)) != SQLITE_OK) goto done;
    sqlite3_finalize(p);
    p = NULL;

    rc = prepare(x,
                 "SELECT DISTINCT coalesce(device, 0), stream FROM (SELECT device, stream FROM kernel"
                 " UNION SELECT device, stream FROM memcpy UNION SELECT device, stream FROM memset)"
                 " ORDER BY 1, 2",
                 &p, pzErr);
    if (rc != SQLITE_OK) goto done;
    while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
        int device = sqlite3_column_int(p, 0);
        long long stream = sqlite3_column_type(p, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(p, 1);
        long long tid = stream_tid(device, stream);
        if (stream < 0) snprintf(zName, sizeof zName, "GPU %d (no stream)", device);
        else snprintf(zName, sizeof zName, "GPU %d stream %lld", device, stream);
        event_begin(x, "M", tid, "thread_name");
        fputs(",\"args\":{\"name\":", x->f);
        vt__json_str(x->f, zName);
        fputs("}}", x->f);
        event_begin(x, "M", tid, "thread_sort_index");
        fprintf(x->f, ",\"args\":{\"sort_index\":%lld}}", 1000 + (long long)device * 1000 + (stream & 511));
        x->pStats->nMeta += 2;
    }
    if ((rc = step_end(x, rc, pzErr)) != SQLITE_OK) goto done;
    sqlite3_finalize(p);
    p = NULL;

    rc = name_device_tracks(x, "SELECT DISTINCT coalesce(device, 0) FROM memory_event WHERE thread IS NULL ORDER BY 1",
                            "allocations", GPU_TID_BASE, GPU_TID_STRIDE, pzErr);
    if (rc == SQLITE_OK && x->pF->aT[VT_T_TENSOR].bPresent)
        rc = name_device_tracks(x, "SELECT DISTINCT coalesce(device, 0) FROM tensor_event ORDER BY 1", "tensors",
                                TENSOR_TID_BASE, 1, pzErr);
    if (rc != SQLITE_OK) goto done;

    rc = prepare(x,
                 "SELECT DISTINCT coalesce(thread, 0) FROM (SELECT thread FROM nvtx_range UNION"
                 " SELECT thread FROM memory_event WHERE thread IS NOT NULL UNION"
                 " SELECT thread FROM oom_event WHERE thread IS NOT NULL) ORDER BY 1",
                 &p, pzErr);
    if (rc != SQLITE_OK) goto done;
    while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
        long long tid = sqlite3_column_int64(p, 0);
        if (tid == NVTX_TID_NONE) snprintf(zName, sizeof zName, "NVTX (thread unknown)");
        else snprintf(zName, sizeof zName, "thread %lld", tid);
        event_begin(x, "M", tid, "thread_name");
        fputs(",\"args\":{\"name\":", x->f);
        vt__json_str(x->f, zName);
        fputs("}}", x->f);
        x->pStats->nMeta++;
    }
    rc = step_end(x, rc, pzErr);
done:
    sqlite3_finalize(p);
    return rc;
}

/* Kernels as complete ("X") events on their stream's track, named by their demangled names (temp.vt_kname). */
static int write_kernels(struct exporter *x, char **pzErr)
{
    sqlite3_stmt *p = NULL;
    int rc = prepare(x,
                     "SELECT k.start, k.end, coalesce(k.device, 0), k.stream, k.correlation,"
                     " coalesce(n.demangled, s.value), k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,"
                     " k.registers, k.static_smem, k.dynamic_smem, k.graph_id FROM kernel k"
                     " LEFT JOIN string s ON s.id = k.name_id LEFT JOIN temp.vt_kname n ON n.name_id = k.name_id",
                     &p, pzErr);
    if (rc != SQLITE_OK) return rc;
    while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(p, 0), end = sqlite3_column_int64(p, 1);
        int device = sqlite3_column_int(p, 2);
        long long stream = sqlite3_column_type(p, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(p, 3);
        const char *zName = (const char *)sqlite3_column_text(p, 5);
        if (!in_window(x, start, end)) continue;
        event_begin(x, "X", stream_tid(device, stream), zName ? zName : "kernel");
        fputs(",\"cat\":\"kernel\",\"ts\":", x->f);
        put_us(x, start, 0);
        fputs(",\"dur\":", x->f);
        put_us(x, end > start ? end - start : 0, 1);
        fprintf(x->f, ",\"args\":{\"device\":%d", device);
        arg_int(x, p, 3, "stream");
        arg_int(x, p, 4, "correlation");
        arg_dim3(x, p, 6, "grid");
        arg_dim3(x, p, 9, "block");
        arg_int(x, p, 12, "registers_per_thread");
        arg_int(x, p, 13, "static_shared_memory");
        arg_int(x, p, 14, "dynamic_shared_memory");
        arg_int(x, p, 15, "graph_id");
        fputs("}}", x->f);
        x->pStats->nKernel++;
    }
    rc = step_end(x, rc, pzErr);
    sqlite3_finalize(p);
    return rc;
}

/* Copies and memsets as "X" events on their stream's track. */
static int write_copies(struct exporter *x, char **pzErr)
{
    sqlite3_stmt *p = NULL;
    char zName[96], zSize[32];
    int rc = prepare(x,
                     "SELECT start, end, coalesce(device, 0), stream, correlation, copy_kind,"
                     " src_kind, dst_kind, bytes, is_async, src, dst, src_device, dst_device"
                     " FROM memcpy",
                     &p, pzErr);
    if (rc != SQLITE_OK) return rc;
    while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(p, 0), end = sqlite3_column_int64(p, 1);
        int64_t bytes = sqlite3_column_int64(p, 8); /* NOT NULL in the schema */
        int device = sqlite3_column_int(p, 2);
        long long stream = sqlite3_column_type(p, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(p, 3);
        if (!in_window(x, start, end)) continue;
        vt__fmt_bytes(bytes, zSize, sizeof zSize);
        snprintf(zName, sizeof zName, "memcpy %s %s", vt__or(vt_copy_kind_name(sqlite3_column_int(p, 5)), "unknown"),
                 zSize);
        event_begin(x, "X", stream_tid(device, stream), zName);
        fputs(",\"cat\":\"memcpy\",\"ts\":", x->f);
        put_us(x, start, 0);
        fputs(",\"dur\":", x->f);
        put_us(x, end > start ? end - start : 0, 1);
        fprintf(x->f, ",\"args\":{\"device\":%d", device);
        arg_int(x, p, 3, "stream");
        arg_int(x, p, 4, "correlation");
        fprintf(x->f, ",\"copy_kind\":\"%s\",\"src_kind\":\"%s\",\"dst_kind\":\"%s\"",
                vt__or(vt_copy_kind_name(sqlite3_column_int(p, 5)), "unknown"), vt__or(vt_mem_kind_name(sqlite3_column_int(p, 6)), "unknown"),
                vt__or(vt_mem_kind_name(sqlite3_column_int(p, 7)), "unknown"));
        arg_int(x, p, 8, "bytes");
        if (end > start) {
            fprintf(x->f, ",\"gb_per_s\":%.3f", (double)bytes / (double)(end - start));
        }
        arg_int(x, p, 9, "async");
        arg_hex(x, p, 10, "src");
        arg_hex(x, p, 11, "dst");
        arg_int(x, p, 12, "src_device");
        arg_int(x, p, 13, "dst_device");
        fputs("}}", x->f);
        x->pStats->nMemcpy++;
    }
    rc = step_end(x, rc, pzErr);
    sqlite3_finalize(p);
    if (rc != SQLITE_OK) return rc;

    rc = prepare(x,
                 "SELECT start, end, coalesce(device, 0), stream, correlation, bytes, value,"
                 " mem_kind, is_async, dst FROM memset",
                 &p, pzErr);
    if (rc != SQLITE_OK) return rc;
    while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(p, 0), end = sqlite3_column_int64(p, 1);
        int device = sqlite3_column_int(p, 2);
        long long stream = sqlite3_column_type(p, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(p, 3);
        if (!in_window(x, start, end)) continue;
        vt__fmt_bytes(sqlite3_column_int64(p, 5), zSize, sizeof zSize); /* NOT NULL in the schema */
        snprintf(zName, sizeof zName, "memset %s", zSize);
        event_begin(x, "X", stream_tid(device, stream), zName);
        fputs(",\"cat\":\"memset\",\"ts\":", x->f);
        put_us(x, start, 0);
        fputs(",\"dur\":", x->f);
        put_us(x, end > start ? end - start : 0, 1);
        fprintf(x->f, ",\"args\":{\"device\":%d", device);
        arg_int(x, p, 3, "stream");
        arg_int(x, p, 4, "correlation");
        arg_int(x, p, 5, "bytes");
        arg_int(x, p, 6, "value");
        if (sqlite3_column_type(p, 7) != SQLITE_NULL)
            fprintf(x->f, ",\"mem_kind\":\"%s\"", vt__or(vt_mem_kind_name(sqlite3_column_int(p, 7)), "unknown"));
        arg_int(x, p, 8, "async");
        arg_hex(x, p, 9, "dst");
        fputs("}}", x->f);
        x->pStats->nMemset++;
    }
    rc = step_end(x, rc, pzErr);
    sqlite3_finalize(p);
    return rc;
}

/* The args object of an NVTX event (kind, domain, depth, unterminated). */
static void nvtx_args(struct exporter *x, sqlite3_stmt *p, int kind, int bOpen)
{
    fprintf(x->f, ",\"args\":{\"kind\":\"%s\"",
            kind == VT_NVTX_PUSHPOP ? "push/pop" : kind == VT_NVTX_STARTEND ? "start/end" : "mark");
    arg_text(x, p, 5, "domain");
    arg_int(x, p, 6, "depth");
    if (bOpen) fputs(",\"unterminated\":true", x->f);
    fputs("}}", x->f);
}

/*
 * NVTX on the thread that opened them: push/pop ranges as "X" (they nest),
 * start/end ranges as async "b"/"e" pairs (they may overlap and cross threads),
 * marks as "i". A range never closed ends at the trace end.
 */
static int write_nvtx(struct exporter *x, int64_t traceEnd, char **pzErr)
{
    sqlite3_stmt *p = NULL;
    int rc = prepare(x,
                     "SELECT n.start, n.end, n.kind, coalesce(n.thread, 0), s.value, d.value,"
                     " n.depth, n.id FROM nvtx_range n LEFT JOIN string s ON s.id = n.name_id"
                     " LEFT JOIN string d ON d.id = n.domain_id",
                     &p, pzErr);
    if (rc != SQLITE_OK) return rc;
    while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(p, 0), end;
        int bOpen = sqlite3_column_type(p, 1) == SQLITE_NULL;
        int kind = sqlite3_column_int(p, 2);
        long long tid = sqlite3_column_int64(p, 3), id = sqlite3_column_int64(p, 7);
        const char *zName = (const char *)sqlite3_column_text(p, 4);
        if (!zName) zName = "(unnamed range)";
        end = bOpen ? traceEnd : sqlite3_column_int64(p, 1);
        if (end < start) end = start;
        if (!in_window(x, start, end)) continue;
        if (kind == VT_NVTX_STARTEND) {
            event_begin(x, "b", tid, zName);
            fprintf(x->f, ",\"cat\":\"nvtx\",\"id\":\"nvtx%lld\",\"ts\":", id);
            put_us(x, start, 0);
            nvtx_args(x, p, kind, bOpen);
            event_begin(x, "e", tid, zName);
            fprintf(x->f, ",\"cat\":\"nvtx\",\"id\":\"nvtx%lld\",\"ts\":", id);
            put_us(x, end, 0);
            fputs("}", x->f);
        } else {
            event_begin(x, kind == VT_NVTX_MARK ? "i" : "X", tid, zName);
            fputs(",\"cat\":\"nvtx\",\"ts\":", x->f);
            put_us(x, start, 0);
            if (kind == VT_NVTX_MARK) {
                fputs(",\"s\":\"t\"", x->f);
            } else {
                fputs(",\"dur\":", x->f);
                put_us(x, end - start, 1);
            }
            nvtx_args(x, p, kind, bOpen);
        }
        x->pStats->nNvtx++;
    }
    rc = step_end(x, rc, pzErr);
    sqlite3_finalize(p);
    return rc;
}

/* One "C" event on track "GPU device zTrack" ("memory", "memory by site"): series zSeries stands at bytes from ts. */
static void put_counter(struct exporter *x, int64_t ts, int device, const char *zTrack, const char *zSeries,
                        int64_t bytes)
{
    char zName[64];
    snprintf(zName, sizeof zName, "GPU %d %s", device, zTrack);
    event_begin(x, "C", 0, zName);
    fputs(",\"ts\":", x->f);
    put_us(x, ts, 0);
    fputs(",\"args\":{", x->f);
    vt__json_str(x->f, zSeries);
    fprintf(x->f, ":%lld}}", (long long)bytes);
    x->pStats->nCounter++;
}

/* One "C" event: the new live-bytes value of a series. */
static void write_counter(struct exporter *x, int64_t ts, const struct series *s)
{
    put_counter(x, ts, s->device, s->bSite ? "memory by site" : "memory", s->zName, s->bytes);
}

/* The key of (device account, site) in the site maps. */
static uint64_t site_key(int acct, int site)
{
    return (uint64_t)(uint32_t)acct << 32 | (uint32_t)site;
}

/*
 * A lifetime counted in live bytes changed by delta at ts: its series (device, memory kind)
 * moves and, in the pass the site series follow, its site group's series on its device (the
 * site itself among the largest by peak, else "other sites"). 0 or -1.
 */
static int counter_move(struct exporter *x, const struct vt_life *l, int64_t delta, int64_t ts)
{
    struct series *s;
    int64_t *pKept;
    int site;
    if (l->acct == VT_ACCT_NONE || delta == 0) return 0;
    s = series_get(x, l->device >= 0 ? l->device : 0, 0,
                   l->bTensor ? "tensors" : vt__or(vt_mem_kind_name(l->memKind), "unknown"));
    if (!s) return -1;
    s->bytes += delta;
    if (in_window(x, ts, ts)) write_counter(x, ts, s);
    if (!x->bSiteSeries || l->acct < 0) return 0;
    if ((site = vt__site_get(&x->sites, x->db, l->stackId, l->bytes)) < 0) return -1;
    pKept = vt__addrmap_get(&x->siteKept, site_key(l->acct, site));
    s = series_get(x, l->acct, 1, pKept && *pKept == 1 ? x->sites.a[site].zSite : "other sites");
    if (!s) return -1;
    s->bytes += delta;
    if (in_window(x, ts, ts)) write_counter(x, ts, s);
    return 0;
}

/* Live set hooks of the sites' pre-pass: each (device, site)'s live bytes and peak. */
static int peak_move(struct exporter *x, const struct vt_life *l, int64_t delta)
{
    int site;
    int64_t *pLive, *pPeak, v;
    if (l->acct < 0) return 0;
    if ((site = vt__site_get(&x->sites, x->db, l->stackId, l->bytes)) < 0) return -1;
    pLive = vt__addrmap_get(&x->siteLive, site_key(l->acct, site));
    v = (pLive ? *pLive : 0) + delta;
    if (vt__addrmap_put(&x->siteLive, site_key(l->acct, site), v) != 0) return -1;
    pPeak = vt__addrmap_get(&x->sitePeak, site_key(l->acct, site));
    if ((!pPeak || v > *pPeak) && vt__addrmap_put(&x->sitePeak, site_key(l->acct, site), v) != 0) return -1;
    return 0;
}
static int peak_begin(void *pArg, struct vt_life *l)
{
    return peak_move(pArg, l, l->bytes);
}
static int peak_end(void *pArg, struct vt_life *l)
{
    return l->status == VT_LIFE_LIVE_AT_END ? 0 : peak_move(pArg, l, -l->bytes);
}

/*
 * The site groups of the current trace's memory pass (bTensor as write_memory): per device
 * the VT_SITECURVE_TOP sites with the highest peak of live bytes (as the HTML report draws
 * them) kept by name, the others "other sites". A pass of its own over the rows. SQLite code.
 */
static int site_groups(struct exporter *x, int bTensor)
{
    struct vt_live_hooks h = {x, peak_begin, NULL, peak_end, NULL, 0};
    struct vt_live *L = vt__live_new(&h);
    int rc = SQLITE_OK;
    if (!L) return SQLITE_NOMEM;
    if (vt__live_pass(x->pF, L, bTensor) != VT_EXIT_OK) rc = SQLITE_ERROR;
    vt__live_free(L);
    for (size_t d = 0; rc == SQLITE_OK && d < x->sitePeak.nSlot; d++) { /* each device (its first pair in the table) */
        uint64_t dev;
        if (!x->sitePeak.a[d].bUsed) continue;
        dev = x->sitePeak.a[d].key >> 32;
        if (vt__addrmap_get(&x->siteKept, dev << 32 | 0xffffffffu)) continue; /* done */
        for (int n = 0; rc == SQLITE_OK && n < VT_SITECURVE_TOP; n++) { /* its largest unkept site, VT_SITECURVE_TOP times */
            const struct vt__addrmap_slot *pBest = NULL;
            for (size_t i = 0; i < x->sitePeak.nSlot; i++) {
                const struct vt__addrmap_slot *q = &x->sitePeak.a[i];
                if (q->bUsed && q->key >> 32 == dev && q->value > 0 && !vt__addrmap_get(&x->siteKept, q->key) &&
                    (!pBest || q->value > pBest->value))
                    pBest = q;
            }
            if (pBest && vt__addrmap_put(&x->siteKept, pBest->key, 1) != 0) rc = SQLITE_NOMEM;
        }
        if (rc == SQLITE_OK && vt__addrmap_put(&x->siteKept, dev << 32 | 0xffffffffu, 0) != 0) rc = SQLITE_NOMEM;
    }
    vt__addrmap_free(&x->siteLive);
    vt__addrmap_free(&x->sitePeak);
    return rc;
}

/*
 * The window's first memory row: every series already moving gets its value at the window's
 * start, so the counters start at the live bytes of that moment rather than at 0.
 */
static void seed_counters(struct exporter *x)
{
    x->bSeeded = 1;
    if (x->winFrom <= 0) return;
    for (int i = 0; i < x->nSeries; i++) write_counter(x, x->winFrom + x->t0 - x->shift, &x->aSeries[i]);
}

static int mem_begin(void *pArg, struct vt_life *l)
{
    struct exporter *x = pArg;
    x->bMatched = 1;
    return counter_move(x, l, l->bytes, vt__life_begin_ts(x->pF, l));
}

static int mem_end(void *pArg, struct vt_life *l)
{
    struct exporter *x = pArg;
    if (l->status == VT_LIFE_LIVE_AT_END) return 0;
    if (l->status == VT_LIFE_FREED) x->bMatched = 1;
    return counter_move(x, l, -l->bytes, l->freeTs);
}

/* The call site of stack id (bytes for a size class without one), "" when out of memory. */
static const char *site_of(struct exporter *x, int64_t stackId, int64_t bytes)
{
    int i = vt__site_get(&x->sites, x->db, stackId, bytes);
    return i >= 0 ? x->sites.a[i].zSite : "";
}

/*
 * Memory events (bTensor 0: memory_event, CUDA's memory) or a framework allocator's blocks
 * (bTensor 1: tensor_event, the tensors inside that memory) in time order through a live set
 * (the one rule for live bytes that analyze and info apply): a counter of live bytes per device
 * and memory kind (blocks: the series "tensors"; memory made before a history that starts late
 * counted from the start), and one instant per allocation, free, VMM creation, release, mapping and
 * import of known time (blocks: alloc, free, free_requested, on the device's tensor track) with
 * size, address, API and call site. Unknown values are left out.
 */
static int write_memory(struct exporter *x, int bTensor, char **pzErr)
{
    struct vt_tracefile *f = x->pF;
    const int k = bTensor ? VT_T_TENSOR : VT_T_MEM, nCol = bTensor ? VT_TENSORROW_NCOL : VT_MEMROW_NCOL;
    struct vt_live_hooks h = {x, mem_begin, NULL, mem_end, NULL, 0};
    struct vt_rows c;
    struct vt_memrow m;
    char zName[96], zSize[32], *zSql = NULL;
    int rc = SQLITE_OK;

    memset(&c, 0, sizeof c);
    if (!f->aT[k].bPresent) return SQLITE_OK;
    /* live bytes by site group follow the lifetimes the analysis judges: the blocks when the trace has them */
    x->bSiteSeries = bTensor || !f->bHaveTensors;
    if (x->bSiteSeries && (rc = site_groups(x, bTensor)) != SQLITE_OK) {
        *pzErr = sqlite3_mprintf("%s", rc == SQLITE_NOMEM ? "out of memory" : "cannot read the memory events");
        vt__sites_free(&x->sites);
        return rc;
    }
    x->L = vt__live_new(&h);
    x->bSeeded = 0;
    zSql = bTensor ? vt__ordered_sql(f, k, VT_TENSORROW_COLS ", NULL, stream, 0, op, source", "1", "ts, id")
                   : vt__ordered_sql(f, k, VT_MEMROW_COLS ", thread, stream, is_async", "1", "ts, id");
    if (!x->L || !zSql) rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK) rc = vt__rows_open(&c, x->db, zSql, nCol + (bTensor ? 5 : 3), f->aT[k].w);
    /* memory made before a late history's first event: on the counters from the start, no instant (no time) */
    if (rc == SQLITE_OK && f->bUntimedBefore) rc = vt__live_untimed(f, x->L, bTensor);
    while (rc == SQLITE_OK && (rc = vt__rows_next(&c)) == SQLITE_OK && c.bRow) {
        const char *zOp, *zKind;
        int bAlloc;
        long long tid;
        vt__memrow_read(&c, bTensor, &m);
        if (m.ts + x->shift - x->t0 > x->winTo) break; /* rows come in time order */
        if (!x->bSeeded && in_window(x, m.ts, m.ts)) seed_counters(x);
        x->bMatched = 0;
        /* a block's free_requested (op 0 here): it waits on streams, still live */
        if ((!bTensor || m.op) && vt__live_apply(x->L, &m) != 0) {
            rc = SQLITE_NOMEM;
            break;
        }
        if (!in_window(x, m.ts, m.ts)) continue;
        if (bTensor) {
            zOp = vt__or(vt_tensor_op_name((int)vt__rows_i64(&c, nCol + 3)), "tensor");
            zKind = "tensor";
            bAlloc = m.op == VT_MEMOP_ALLOC;
            tid = TENSOR_TID_BASE + (m.device >= 0 ? m.device : 0);
        } else {
            zOp = vt__or(vt_memop_name(m.op), "memory");
            zKind = vt__or(vt_mem_kind_name(m.kind), "unknown");
            bAlloc = m.op == VT_MEMOP_ALLOC || m.op == VT_MEMOP_VMM_CREATE || m.op == VT_MEMOP_VMM_MAP ||
                     m.op == VT_MEMOP_IMPORT;
            tid = vt__rows_null(&c, nCol) ? GPU_TID_BASE + (m.device >= 0 ? m.device : 0) * GPU_TID_STRIDE
                                          : vt__rows_i64(&c, nCol);
        }
        if (m.bytes >= 0) snprintf(zName, sizeof zName, "%s %s %s", zOp, vt__fmt_bytes(m.bytes, zSize, sizeof zSize), zKind);
        else snprintf(zName, sizeof zName, "%s %s", zOp, zKind);
        event_begin(x, "i", tid, zName);
        fprintf(x->f, ",\"cat\":\"%s%s\",\"s\":\"t\",\"ts\":", bTensor ? "tensor_" : "", bAlloc ? "alloc" : "free");
        put_us(x, m.ts, 0);
        fprintf(x->f, ",\"args\":{\"address\":\"0x%llx\"", (unsigned long long)m.address);
        if (!bTensor) fprintf(x->f, ",\"mem_kind\":\"%s\"", zKind);
        if (m.bytes >= 0) fprintf(x->f, ",\"bytes\":%lld", (long long)m.bytes);
        if (m.device >= 0) fprintf(x->f, ",\"device\":%d", m.device);
        if (vt_api_name(m.api)) fprintf(x->f, ",\"api\":\"%s\"", vt_api_name(m.api));
        if (!vt__rows_null(&c, nCol + 1)) fprintf(x->f, ",\"stream\":%lld", (long long)vt__rows_i64(&c, nCol + 1));
        if (vt__rows_or(&c, nCol + 2, 0)) fputs(",\"async\":1", x->f);
        if (bTensor && vt_tensor_source_name((int)vt__rows_or(&c, nCol + 4, 0)))
            fprintf(x->f, ",\"source\":\"%s\"", vt_tensor_source_name((int)vt__rows_or(&c, nCol + 4, 0)));
        if (m.correlation > 0) fprintf(x->f, ",\"correlation\":%lld", (long long)m.correlation);
        if (m.stackId >= 0) {
            fputs(",\"site\":", x->f);
            vt__json_str(x->f, site_of(x, m.stackId, m.bytes));
        }
        if (!bAlloc && !x->bMatched && (!bTensor || m.op)) fputs(",\"unmatched_free\":true", x->f);
        fputs("}}", x->f);
        if (bTensor) x->pStats->nTensor++;
        else if (bAlloc) x->pStats->nAlloc++;
        else x->pStats->nFree++;
    }
    if (rc != SQLITE_OK && !*pzErr)
        *pzErr = sqlite3_mprintf("%s", rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(x->db));
    vt__rows_close(&c);
    free(zSql);
    vt__live_free(x->L);
    x->L = NULL;
    for (int i = 0, n = 0; i <= x->nSeries; i++) { /* the site series go with the sites they name */
        if (i == x->nSeries) x->nSeries = n;
        else if (!x->aSeries[i].bSite) x->aSeries[n++] = x->aSeries[i];
    }
    vt__sites_free(&x->sites);
    vt__addrmap_free(&x->siteKept);
    x->bSiteSeries = 0;
    return rc;
}

/*
 * Live bytes by the breakdown's category on each device of the current trace ("GPU N memory by
 * category"): the analysis (its default options) run on the trace as read for the export (lent to it,
 * vt__analyze_read) for its category curves, so
 * that at a peak the series are the breakdown analyze reports. Within the window, each series
 * seeded at its start. Allocations of unknown time are on no curve, as on no other counter (those made before
 * a history that starts late stand from its start, as on the others), and a trace without any known time has no
 * such track. A trace the analysis cannot read gets no such
 * track (said on stderr). SQLite code.
 */
static int write_categories(struct exporter *x, char **pzErr)
{
    struct vt_opts o;
    struct vt_result r;
    const char *zPath = x->pF->zPath;
    int rc;
    if (!x->pF->bTimes) return SQLITE_OK; /* no event of known time: nothing to place (said with the rows left out) */
    vt__opts_default(&o);
    o.nJobs = 1;
    o.bCatCurves = 1;
    if (vt__analyze_read(x->pF, &o, &r) != VT_EXIT_OK || r.nTrace != 1) {
        vt__errorf("export: %s: no memory-by-category track: the analysis did not finish", zPath);
        vt__result_free(&r);
        return SQLITE_OK;
    }
    for (int d = 0; d < r.aTrace[0].tl.nDev; d++) {
        const struct vt_device *dv = &r.aTrace[0].tl.aDev[d];
        int64_t aCur[VT_CAT_N + 64];
        int bSeeded = 0, nSeries = VT_CAT_N + dv->nCatLib;
        char zName[128];
        if (nSeries > (int)(sizeof aCur / sizeof aCur[0])) nSeries = (int)(sizeof aCur / sizeof aCur[0]);
        for (int s = 0; s < nSeries; s++) aCur[s] = -1; /* not begun */
        for (int k = 0; k < dv->nCatPt; k++) {
            const struct vt_catpoint *p = &dv->aCatPt[k];
            struct vt_bdpart part = vt__catcurve_part(dv, p->series);
            if (p->series >= nSeries) continue;
            if (p->ts + x->shift - x->t0 > x->winTo) break; /* points come in time order */
            if (!in_window(x, p->ts, p->ts)) {
                aCur[p->series] = p->bytes;
                continue;
            }
            if (!bSeeded && x->winFrom > 0) /* the window's start: every series already begun */
                for (int s = 0; s < nSeries; s++) {
                    struct vt_bdpart q = vt__catcurve_part(dv, s);
                    if (aCur[s] >= 0)
                        put_counter(x, x->winFrom + x->t0 - x->shift, dv->id, "memory by category",
                                    vt__fmt_bdname(&q, zName, sizeof zName), aCur[s]);
                }
            bSeeded = 1;
            put_counter(x, p->ts, dv->id, "memory by category", vt__fmt_bdname(&part, zName, sizeof zName), p->bytes);
        }
    }
    rc = ferror(x->f) ? SQLITE_IOERR : SQLITE_OK;
    if (rc != SQLITE_OK && !*pzErr) *pzErr = sqlite3_mprintf("cannot write");
    vt__result_free(&r);
    return rc;
}

/* Failed allocations as process-wide instants. */
static int write_oom(struct exporter *x, char **pzErr)
{
    sqlite3_stmt *p = NULL;
    char zName[128], zSize[32];
    int rc = prepare(x,
                     "SELECT o.ts, o.bytes, coalesce(o.device, 0), a.name, o.status, o.free_bytes,"
                     " o.total_bytes, o.thread, o.correlation, " SITE_SQL("o.stack_id")
                     " FROM oom_event o LEFT JOIN enum_api a ON a.id = o.api ORDER BY o.ts",
                     &p, pzErr);
    if (rc != SQLITE_OK) return rc;
    while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
        const char *zApi = (const char *)sqlite3_column_text(p, 3);
        int bBytes = sqlite3_column_type(p, 1) != SQLITE_NULL;
        int64_t ts = sqlite3_column_int64(p, 0);
        if (!in_window(x, ts, ts)) continue;
        snprintf(zName, sizeof zName, "OOM: %s%s%s on GPU %d", zApi ? zApi : "allocation", bBytes ? " " : "",
                 bBytes ? vt__fmt_bytes(sqlite3_column_int64(p, 1), zSize, sizeof zSize) : "", sqlite3_column_int(p, 2));
        event_begin(x, "i", sqlite3_column_type(p, 7) == SQLITE_NULL ? 0 : sqlite3_column_int64(p, 7),
                    zName);
        fputs(",\"cat\":\"oom\",\"s\":\"p\",\"ts\":", x->f);
        put_us(x, ts, 0);
        fprintf(x->f, ",\"args\":{\"device\":%d", sqlite3_column_int(p, 2));
        arg_int(x, p, 1, "requested_bytes");
        arg_text(x, p, 3, "api");
        arg_int(x, p, 4, "status");
        arg_int(x, p, 5, "free_bytes");
        arg_int(x, p, 6, "total_bytes");
        arg_int(x, p, 8, "correlation");
        arg_text(x, p, 9, "site");
        fputs("}}", x->f);
        x->pStats->nOom++;
    }
    rc = step_end(x, rc, pzErr);
    sqlite3_finalize(p);
    return rc;
}

/* Run a one-row, one-column integer query; *pbNull set when the value is NULL. */
static int query_i64(sqlite3 *db, const char *zSql, int64_t *pOut, int *pbNull)
{
    sqlite3_stmt *p = NULL;
    int rc = sqlite3_prepare_v2(db, zSql, -1, &p, NULL);
    *pbNull = 1;
    if (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        *pbNull = sqlite3_column_type(p, 0) == SQLITE_NULL;
        *pOut = sqlite3_column_int64(p, 0);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_OK;
    }
    sqlite3_finalize(p);
    return rc;
}

int vt__export_perfetto(FILE *f, int nTrace, struct vt_tracefile *aF, const struct vt_export_opts *pOpt,
                        struct vt_export_stats *pStats, char **pzErr)
{
    struct exporter x;
    int64_t *aShift = NULL, *aEnd = NULL, v;
    long long *aPid = NULL;
    int rc = SQLITE_OK, i, j, bNull, bAnchors = nTrace > 0 && aF[0].fig.bWall, bHave = 0;

    memset(&x, 0, sizeof x);
    memset(pStats, 0, sizeof *pStats);
    *pzErr = NULL;
    x.f = f;
    x.bFirst = 1;
    x.pStats = pStats;
    x.winFrom = pOpt && pOpt->bFrom ? pOpt->from : INT64_MIN;
    x.winTo = pOpt && pOpt->bTo ? pOpt->to : INT64_MAX;
    aShift = calloc((size_t)nTrace, sizeof(int64_t));
    aEnd = calloc((size_t)nTrace, sizeof(int64_t));
    aPid = calloc((size_t)nTrace, sizeof(long long));
    if (!aShift || !aEnd || !aPid) {
        rc = SQLITE_NOMEM;
        *pzErr = sqlite3_mprintf("out of memory");
        goto done;
    }
    /* the one origin and clock alignment of the traces read together (figures.h: vt__figures_origin) */
    for (i = 0; i < nTrace; i++) {
        aShift[i] = aF[i].fig.shift;
        if (aF[i].bTimes && !bHave) x.t0 = aF[i].fig.origin + aF[i].fig.shift, bHave = 1;
    }
    for (i = 0; i < nTrace; i++) {
        char *zPath = (char *)aF[i].zPath;
        if (vt__sql_create_views(aF[i].db, 1, &zPath, pzErr) != SQLITE_OK) {
            char *z = sqlite3_mprintf("%s: cannot create the views: %s", aF[i].zPath,
                                      *pzErr ? *pzErr : sqlite3_errmsg(aF[i].db));
            sqlite3_free(*pzErr);
            *pzErr = z;
            rc = SQLITE_ERROR;
            goto done;
        }
        if ((rc = vt__knames_load(aF[i].db)) != SQLITE_OK) {
            *pzErr = sqlite3_mprintf("%s: cannot read the kernel names: %s", aF[i].zPath, sqlite3_errmsg(aF[i].db));
            goto done;
        }
        /* the trace's time range as every reader takes it (read/meta.c), widened to the tracer's own end:
         * the end of ranges never closed */
        aEnd[i] = aF[i].bTimes ? aF[i].t1 : 0;
        if (query_i64(aF[i].db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key='end_ns'", &v, &bNull) ==
                SQLITE_OK && !bNull && v > aEnd[i])
            aEnd[i] = v;
        rc = query_i64(aF[i].db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key='pid'", &v, &bNull);
        aPid[i] = rc == SQLITE_OK && !bNull && v > 0 ? v : 1000000 + i;
        for (j = 0; j < i; j++)
            if (aPid[j] == aPid[i]) aPid[i] = 1000000 + i; /* same pid on two hosts */
        rc = SQLITE_OK;
    }
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"vramtrace %s\","
               "\"traces\":%d,\"origin_ns\":%lld,\"clock\":\"%s\"",
            VT_VERSION, nTrace, (long long)x.t0, bAnchors ? "wall" : "cupti");
    /* the window, ns from the origin */
    if (x.winFrom != INT64_MIN) fprintf(f, ",\"from_ns\":%lld", (long long)x.winFrom);
    if (x.winTo != INT64_MAX) fprintf(f, ",\"to_ns\":%lld", (long long)x.winTo);
    fputs("},\"traceEvents\":[", f);
    for (i = 0; i < nTrace && rc == SQLITE_OK; i++) {
        x.db = aF[i].db;
        x.pF = &aF[i];
        x.shift = aShift[i];
        x.pid = aPid[i];
        x.nSeries = 0;
        rc = write_tracks(&x, i, aF[i].zPath, pzErr);
        if (rc == SQLITE_OK) rc = write_kernels(&x, pzErr);
        if (rc == SQLITE_OK) rc = write_copies(&x, pzErr);
        if (rc == SQLITE_OK) rc = write_nvtx(&x, aEnd[i], pzErr);
        if (rc == SQLITE_OK) rc = write_memory(&x, 0, pzErr);
        if (rc == SQLITE_OK) rc = write_memory(&x, 1, pzErr);
        if (rc == SQLITE_OK) rc = write_categories(&x, pzErr);
        if (rc == SQLITE_OK) rc = write_oom(&x, pzErr);
        if (rc != SQLITE_OK && *pzErr) {
            char *z = sqlite3_mprintf("%s: %s", aF[i].zPath, *pzErr);
            sqlite3_free(*pzErr);
            *pzErr = z;
        }
    }
    if (rc == SQLITE_OK) fputs("\n]}\n", f);
    if (rc == SQLITE_OK && (fflush(f) != 0 || ferror(f))) rc = SQLITE_IOERR;
done:
    free(x.aSeries);
    free(aShift);
    free(aEnd);
    free(aPid);
    return rc;
}
