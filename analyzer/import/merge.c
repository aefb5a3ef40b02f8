/* PyTorch's allocation history (a memory snapshot) merged into the trace of the same process: tensor rows with call sites on the trace's clock. */
#include "import.h"

#include <sqlite3.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/errors.h"
#include "vramtrace/sqlints.h"

/* How far (ns) the history may reach outside the trace's window and still be this trace's. */
#define SLACK_NS 5000000000LL

/* meta(zKey) of schema zDb as an integer into *pv: 1 when present and numeric, 0 otherwise. */
static int meta_int(sqlite3 *db, const char *zDb, const char *zKey, int64_t *pv)
{
    sqlite3_stmt *st = NULL;
    char zSql[128];
    int bFound = 0;
    snprintf(zSql, sizeof zSql, "SELECT CAST(value AS INTEGER), value GLOB '-[0-9]*' OR value GLOB '[0-9]*' FROM "
                                "%s.meta WHERE key=?",
             zDb);
    if (sqlite3_prepare_v2(db, zSql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, zKey, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 1)) {
            *pv = sqlite3_column_int64(st, 0);
            bFound = 1;
        }
    }
    sqlite3_finalize(st);
    return bFound;
}

/* meta(zKey) of the main schema as text into z (size n): 1 when present, 0 otherwise. */
static int meta_text(sqlite3 *db, const char *zKey, char *z, size_t n)
{
    sqlite3_stmt *st = NULL;
    int bFound = 0;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key=?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, zKey, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
            snprintf(z, n, "%s", (const char *)sqlite3_column_text(st, 0));
            bFound = 1;
        }
    }
    sqlite3_finalize(st);
    return bFound;
}

/*
 * Whether directory zDir (nDir bytes of it; none: the current directory) may hold a snapshot of
 * some process (vramtrace-*.snapshot.pickle): 0 when it lists none, else 1 (also when it cannot be
 * listed). Spares the trace's own open (its whole schema read) where no snapshot can match.
 */
static int snapshot_beside(const char *zDir, int nDir)
{
    static const char zPre[] = "vramtrace-", zSuf[] = ".snapshot.pickle";
    char zPath[4096];
    DIR *d;
    struct dirent *e;
    int bAny = 0;
    if (nDir >= (int)sizeof zPath) return 1;
    snprintf(zPath, sizeof zPath, "%.*s", nDir ? nDir : 1, nDir ? zDir : ".");
    if (!(d = opendir(zPath))) return 1;
    while (!bAny && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        bAny = n >= sizeof zPre - 1 + sizeof zSuf - 1 && !strncmp(e->d_name, zPre, sizeof zPre - 1) &&
               !strcmp(e->d_name + n - (sizeof zSuf - 1), zSuf);
    }
    closedir(d);
    return bAny;
}

int vt__snapshot_find(const char *zTrace, char **pzSnap)
{
    sqlite3 *db = NULL;
    char zHost[256], zPid[32];
    const char *zSlash = strrchr(zTrace, '/');
    int nDir = zSlash ? (int)(zSlash - zTrace + 1) : 0;
    int rc = VT_EXIT_OK, bMeta = 0;
    *pzSnap = NULL;
    if (!snapshot_beside(zTrace, nDir)) return VT_EXIT_OK;
    /* the file standing for the name (standard input read into a file): never the pipe itself again */
    if (sqlite3_open_v2(vt__import_temp_path(zTrace), &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
        bMeta = meta_text(db, "hostname", zHost, sizeof zHost) && meta_text(db, "pid", zPid, sizeof zPid);
    sqlite3_close(db);
    if (bMeta && !strchr(zHost, '/')) {
        size_t n = (size_t)nDir + strlen(zHost) + strlen(zPid) + 40;
        char *z = malloc(n);
        if (!z) {
            vt__errorf("%s: out of memory", zTrace);
            rc = VT_EXIT_INTERNAL;
        } else {
            snprintf(z, n, "%.*svramtrace-%s-%s.snapshot.pickle", nDir, zTrace, zHost, zPid);
            if (access(z, R_OK) == 0) *pzSnap = z;
            else free(z);
        }
    }
    return rc;
}

/*
 * Whether snapshot file name zSnap names a host and pid other than the trace's (meta of db):
 * 'vramtrace-HOST-PID.' at the start of its base name. Returns 1 (and the names in zWhy) or 0.
 */
static int other_process(sqlite3 *db, const char *zSnap, char *zWhy, size_t nWhy)
{
    char zHost[200], zPid[24], zWant[240];
    const char *zBase = strrchr(zSnap, '/');
    zBase = zBase ? zBase + 1 : zSnap;
    if (strncmp(zBase, "vramtrace-", 10) != 0) return 0;
    if (!meta_text(db, "hostname", zHost, sizeof zHost) || !meta_text(db, "pid", zPid, sizeof zPid)) return 0;
    snprintf(zWant, sizeof zWant, "vramtrace-%s-%s.", zHost, zPid);
    if (strncmp(zBase, zWant, strlen(zWant)) == 0) return 0;
    snprintf(zWhy, nWhy, "its name is not the trace's process (host %s, pid %s)", zHost, zPid);
    return 1;
}

/* Copy trace zFrom to zTo (SQLite's online backup). Returns an SQLite code. */
static int copy_trace(const char *zFrom, const char *zTo)
{
    sqlite3 *dbFrom = NULL, *dbTo = NULL;
    sqlite3_backup *b;
    int rc = sqlite3_open_v2(zFrom, &dbFrom, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_open_v2(zTo, &dbTo, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc == SQLITE_OK) {
        b = sqlite3_backup_init(dbTo, "main", dbFrom, "main");
        if (!b) rc = sqlite3_errcode(dbTo);
        else {
            rc = sqlite3_backup_step(b, -1);
            if (rc == SQLITE_DONE) rc = SQLITE_OK;
            if (sqlite3_backup_finish(b) != SQLITE_OK && rc == SQLITE_OK) rc = sqlite3_errcode(dbTo);
        }
    }
    sqlite3_close(dbFrom);
    sqlite3_close(dbTo);
    return rc;
}

/* The statements that move the history over: :t is the time shift, :s the string and :k the stack id shift. */
static const char zMove[] =
    "INSERT INTO main.string(id, value) SELECT id + :s, value FROM h.string;"
    "INSERT INTO main.stack(id, hash, depth) SELECT id + :k, hash, depth FROM h.stack;"
    "INSERT INTO main.frame(stack_id, idx, kind, pc, function_id, file_id, line, module_id)"
    " SELECT stack_id + :k, idx, kind, pc, function_id + :s, file_id + :s, line, module_id + :s FROM h.frame;"
    "INSERT INTO main.tensor_event(t, op, device, address, bytes, stream, stack_id, source)"
    " SELECT t + :t, op, device, address, bytes, stream, stack_id + :k, 1 FROM h.tensor_event"
    " ORDER BY t IS NOT NULL, t, id;";

/* Run each statement of zMove on db with the shifts bound. Returns an SQLite code. */
static int move_rows(sqlite3 *db, int64_t dt, int64_t ds, int64_t dk)
{
    const char *z = zMove;
    int rc = SQLITE_OK;
    while (rc == SQLITE_OK && *z) {
        sqlite3_stmt *st = NULL;
        const char *zTail;
        int i;
        rc = sqlite3_prepare_v2(db, z, -1, &st, &zTail);
        if (rc != SQLITE_OK || !st) break;
        if ((i = sqlite3_bind_parameter_index(st, ":t")) > 0) sqlite3_bind_int64(st, i, dt);
        if ((i = sqlite3_bind_parameter_index(st, ":s")) > 0) sqlite3_bind_int64(st, i, ds);
        if ((i = sqlite3_bind_parameter_index(st, ":k")) > 0) sqlite3_bind_int64(st, i, dk);
        rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
        sqlite3_finalize(st);
        z = zTail;
    }
    return rc;
}

/* A trace's wall-clock offset: wall_ns = time_base_ns + t - clock_anchor_cupti_ns + clock_anchor_wall_ns. 1 or 0. */
static int wall_of_zero(sqlite3 *db, const char *zDb, int64_t *pWall)
{
    int64_t base, ac, aw;
    if (!meta_int(db, zDb, "time_base_ns", &base) || !meta_int(db, zDb, "clock_anchor_cupti_ns", &ac) ||
        !meta_int(db, zDb, "clock_anchor_wall_ns", &aw))
        return 0;
    *pWall = base - ac + aw;
    return 1;
}

/* ATTACH zHist as schema h of db. Returns an SQLite code. */
static int attach(sqlite3 *db, const char *zHist)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "ATTACH ?1 AS h", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, zHist, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    }
    sqlite3_finalize(st);
    return rc;
}

/*
 * Whether history h (attached to db) belongs to the trace: same process by name, timed, inside
 * the trace's window. Returns 0 with the time shift in *pdt, the history's timed rows in *pnTen
 * and the trace's merged rows already there in *pnDone; or 1 with the reason in zWhy.
 */
static int judge(sqlite3 *db, const char *zTrace, const char *zSnap, vt_trace_window_fn xWindow, int64_t *pdt,
                 int64_t *pnTen, int64_t *pnDone, char *zWhy, size_t nWhy)
{
    int64_t wTrace, wHist, tFirst, tLast, tEnd, base, first, last;
    if (other_process(db, zSnap, zWhy, nWhy)) return 1;
    if (!wall_of_zero(db, "main", &wTrace)) {
        snprintf(zWhy, nWhy, "the trace has no clock anchor (meta clock_anchor_*_ns) to align it by");
        return 1;
    }
    if (!wall_of_zero(db, "h", &wHist) || vt__sql_ints(db, "SELECT min(t) FROM h.tensor_event", &tFirst, 1, 0) ||
        vt__sql_ints(db, "SELECT max(t) FROM h.tensor_event", &tLast, 1, 0) ||
        vt__sql_ints(db, "SELECT count(t) FROM h.tensor_event", pnTen, 1, 0) || *pnTen == 0) {
        snprintf(zWhy, nWhy, "it holds no timed allocation history (recorded without "
                             "_record_memory_history, or by PyTorch before 2.1)");
        return 1;
    }
    *pdt = wHist - wTrace;
    tFirst += *pdt;
    tLast += *pdt;
    if (vt__sql_ints(db, "SELECT max(t) FROM (SELECT max(t) AS t FROM memory_event UNION ALL SELECT max(t) FROM "
                      "api_call UNION ALL SELECT max(t + coalesce(dur, 0)) FROM kernel)",
                  &tEnd, 1, 0) != SQLITE_OK)
        tEnd = 0;
    if (tLast < -SLACK_NS || tFirst > tEnd + SLACK_NS) {
        /* said in the times every report prints (from the trace's first event), which the reader knows */
        if (meta_int(db, "main", "time_base_ns", &base) && xWindow && xWindow(zTrace, &first, &last) == 0)
            snprintf(zWhy, nWhy,
                     "its history (%.3f s to %.3f s) lies outside the trace (0 to %.3f s; times from the trace's "
                     "first event, as analyze and info print them): another process or another run",
                     (double)(tFirst + base - first) / 1e9, (double)(tLast + base - first) / 1e9,
                     (double)(last - first) / 1e9);
        else
            snprintf(zWhy, nWhy, "its history lies outside the trace's time: another process or another run");
        return 1;
    }
    if (vt__sql_ints(db, "SELECT count(*) FROM tensor_event WHERE source = 1", pnDone, 1, 0) != SQLITE_OK) *pnDone = 0;
    return 0;
}

int vt__snapshot_merge(const char *zTrace, const char *zSnap, int bInPlace, int bQuietSkip, vt_trace_window_fn xWindow)
{
    struct vt_import_opts o = {1, 1};
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    char *zHist = NULL, *zCopy = NULL, zWhy[400], zErr[256];
    int64_t dt = 0, nTen = 0, nDone = 0, ds, dk;
    int rc, fmt;
    const char *zFile = vt__import_temp_path(zTrace); /* standard input or a pipe: the file it was read into */

    rc = vt__import_detect(zSnap, &fmt, zErr, sizeof zErr);
    if (rc != VT_EXIT_OK) {
        vt__errorf("%s: %s", zSnap, zErr);
        return rc;
    }
    if (fmt != VT_IMPORT_SNAPSHOT) {
        vt__errorf("%s: --snapshot: not a PyTorch memory snapshot", zSnap);
        return VT_EXIT_USAGE;
    }
    /* the history goes into a trace the tracer recorded; another tool's file is analyzed on its own */
    rc = vt__import_detect(zFile, &fmt, zErr, sizeof zErr);
    if (rc == VT_EXIT_OK && fmt != VT_IMPORT_TRACE && fmt != VT_IMPORT_UNKNOWN) {
        vt__errorf("%s: --snapshot merges a snapshot into a trace recorded by vramtrace; this is a %s file: "
                   "analyze it on its own (and the snapshot too)",
                   zTrace, fmt == VT_IMPORT_SNAPSHOT ? "PyTorch snapshot" : fmt == VT_IMPORT_NSYS ? "Nsight export"
                                                                                              : "torch.profiler");
        return VT_EXIT_USAGE;
    }
    rc = VT_EXIT_OK; /* a file that cannot be read is the reader's to name, below */
    /* the history as a trace of its own (a temporary import), then judged and moved over */
    zHist = malloc(strlen(zSnap) + 16);
    if (!zHist) {
        vt__errorf("%s: out of memory", zSnap);
        return VT_EXIT_INTERNAL;
    }
    sprintf(zHist, "%s#history", zSnap);
    {
        char *zTmp = NULL;
        rc = vt__import_temp_new(zHist, &zTmp);
        free(zHist);
        zHist = zTmp; /* owned by the temporary list */
    }
    if (rc == VT_EXIT_OK) rc = vt__import_one(zSnap, VT_IMPORT_SNAPSHOT, -1, zHist, &o, NULL);
    if (rc != VT_EXIT_OK) return rc;
    if (sqlite3_open_v2(zFile, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK || attach(db, zHist) != SQLITE_OK) {
        vt__errorf("%s: cannot read it to merge %s: %s", zTrace, zSnap, sqlite3_errmsg(db));
        rc = VT_EXIT_NOFILE;
        goto done;
    }
    if (judge(db, zTrace, zSnap, xWindow, &dt, &nTen, &nDone, zWhy, sizeof zWhy)) {
        vt__errorf("%s: the snapshot is not of this trace's process and time: %s; not merged", zSnap, zWhy);
        rc = VT_EXIT_USAGE;
        goto done;
    }
    if (nDone > 0) {
        if (!bQuietSkip) {
            vt__errorf("%s: the trace already holds a merged allocation history (%lld tensor rows); %s not merged",
                       zTrace, (long long)nDone, zSnap);
            rc = VT_EXIT_USAGE;
        }
        goto done;
    }
    sqlite3_close(db);
    db = NULL;
    if (!bInPlace) {
        if ((rc = vt__import_temp_new(zTrace, &zCopy)) != VT_EXIT_OK) goto done;
        if (copy_trace(zFile, zCopy) != SQLITE_OK) {
            vt__errorf("%s: cannot copy the trace to merge the snapshot into it (%s)", zTrace, zCopy);
            rc = VT_EXIT_NOFILE;
            goto done;
        }
    }
    rc = VT_EXIT_INTERNAL;
    if (sqlite3_open_v2(bInPlace ? zFile : zCopy, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
        (sqlite3_busy_timeout(db, 1000), attach(db, zHist)) != SQLITE_OK ||
        vt__sql_ints(db, "SELECT coalesce(max(id), 0) FROM main.string", &ds, 1, 0) != SQLITE_OK ||
        vt__sql_ints(db, "SELECT coalesce(max(id), 0) FROM main.stack", &dk, 1, 0) != SQLITE_OK ||
        sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK || move_rows(db, dt, ds, dk) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key, value) VALUES ('pytorch_history_merged', ?1)", -1,
                           &st, NULL) != SQLITE_OK ||
        (sqlite3_bind_text(st, 1, zSnap, -1, SQLITE_STATIC), sqlite3_step(st)) != SQLITE_DONE ||
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        vt__errorf("%s: cannot merge %s: %s", zTrace, zSnap, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        goto done;
    }
    vt__errorf("%s: note: PyTorch's allocation history merged from %s (%lld tensor events)%s", zTrace, zSnap,
               (long long)nTen, bInPlace ? ", saved into the trace" : "");
    rc = VT_EXIT_OK;
done:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}
