/* Opening a trace for reading: one validation, one read snapshot, one guard, one scan, for every subcommand. */
#include "figures.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"
#include "util/sqlnames.h"
#include "vramtrace/compact.h"
#include "vramtrace/schema.h"

int vt__read_check_file(const char *zFile, const char *zName)
{
    struct stat st;
    if (stat(zFile, &st) != 0) {
        vt__errorf("%s: %s", zName, strerror(errno));
        return VT_EXIT_NOFILE;
    }
    if (S_ISDIR(st.st_mode)) {
        if (!vt__input_was_said(zName)) vt__errorf("%s: is a directory, not a trace", zName);
        return VT_EXIT_NOFILE;
    }
    if (st.st_size == 0) {
        vt__errorf("%s: empty file, not a vramtrace trace (was the traced process killed before it started?)", zName);
        return VT_EXIT_NOT_TRACE;
    }
    return VT_EXIT_OK;
}

/* Whether zFile begins with SQLite's header ("SQLite format 3"). */
static int sqlite_header(const char *zFile)
{
    char a[16];
    FILE *in = fopen(zFile, "rb");
    int b = in && fread(a, 1, sizeof a, in) == sizeof a && !memcmp(a, "SQLite format 3", sizeof a);
    if (in) fclose(in);
    return b;
}

/*
 * Open zFile (standing for f->zPath) with SQLite (bWrite: read-write) and check it as a trace this
 * build reads: the schema check, then its tables and views, asked once. Returns VT_EXIT_OK with
 * f->db open, or an exit code after one line.
 */
static int open_db(struct vt_tracefile *f, const char *zFile, int bWrite)
{
    sqlite3_stmt *p = NULL;
    char zMsg[256] = "";
    int rc, flags, st;

    if ((rc = vt__read_check_file(zFile, f->zPath)) != VT_EXIT_OK) return rc;
    /* one thread per connection: SQLite's per-call mutexes are pure cost here */
    flags = (bWrite ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
    rc = sqlite3_open_v2(zFile, &f->db, flags, NULL);
    if (rc != SQLITE_OK) {
        char zWhy[512];
        vt__errorf("%s: cannot open: %s", f->zPath, vt__sqlite_open_error(f->db, rc, zFile, zWhy, sizeof zWhy));
        return VT_EXIT_NOFILE;
    }
    sqlite3_busy_timeout(f->db, 2000);
    st = vt__schema_check(f->db, &f->version, zMsg, sizeof zMsg);
    rc = vt__exit_for_schema(st);
    if (st == VT_SCHEMA_NOT_SQLITE && !sqlite_header(zFile)) /* a text, a CSV, a JSON of another tool: not "SQLite" */
        snprintf(zMsg, sizeof zMsg, "neither a vramtrace trace nor a file it imports (" VT_IMPORT_FORMATS ")");
    if (rc != VT_EXIT_OK) {
        vt__errorf("%s: %s", f->zPath, zMsg);
        return rc;
    }
    /* the tables and views, once: the stages ask f (vt__read_has), not the schema */
    rc = sqlite3_prepare_v2(f->db, "SELECT name FROM main.sqlite_schema WHERE type IN ('table', 'view') ORDER BY name",
                            -1, &p, NULL);
    if (rc == SQLITE_OK) rc = vt__sql_names(p, &f->azTable, &f->nTable);
    sqlite3_finalize(p);
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot read trace: %s", f->zPath, sqlite3_errstr(rc));
        return vt__exit_for_sqlite(rc);
    }
    return VT_EXIT_OK;
}

/* Every meta row with a key and a value into f->aMeta, sorted by key (vt__read_meta_value). An SQLite code. */
static int read_meta_rows(struct vt_tracefile *f)
{
    sqlite3_stmt *p = NULL;
    int rc = sqlite3_prepare_v2(f->db, "SELECT key, value FROM meta WHERE key IS NOT NULL AND value IS NOT NULL"
                                       " ORDER BY key", -1, &p, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        const char *zKey = (const char *)sqlite3_column_text(p, 0), *zValue = (const char *)sqlite3_column_text(p, 1);
        struct vt_metakv *a = realloc(f->aMeta, sizeof *a * (size_t)(f->nMeta + 1));
        rc = SQLITE_NOMEM;
        if (!a) break;
        f->aMeta = a;
        if (!zKey || !zValue || (f->nMeta > 0 && !strcmp(a[f->nMeta - 1].zKey, zKey))) { /* a duplicate key: the first */
            rc = zKey && zValue ? SQLITE_OK : SQLITE_NOMEM;
            continue;
        }
        a[f->nMeta].zKey = strdup(zKey);
        a[f->nMeta].zValue = strdup(zValue);
        if (!a[f->nMeta].zKey || !a[f->nMeta].zValue) {
            free(a[f->nMeta].zKey);
            free(a[f->nMeta].zValue);
            break;
        }
        f->nMeta++;
        rc = SQLITE_OK;
    }
    sqlite3_finalize(p);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * f->zCallView: the api_call view's text when it is exactly the one this build writes at schema 6 for
 * f->timeBase (compact.c), so that the scan may judge its arm of folded allocations and frees in the
 * pass over memory_event (guard.c). An SQLite code.
 */
static int read_call_view(struct vt_tracefile *f)
{
    sqlite3_stmt *p = NULL;
    int rc;
    if (!f->bStored || f->version < 6 || !vt__read_has(f, "api_call")) return SQLITE_OK;
    rc = sqlite3_prepare_v2(f->db, "SELECT sql FROM main.sqlite_schema WHERE type = 'view' AND name = 'api_call'", -1,
                            &p, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        const char *zHave = (const char *)sqlite3_column_text(p, 0);
        rc = SQLITE_OK;
        f->zCallView = vt__compact_view_sql(VT_CT_api_call, f->timeBase);
        if (!f->zCallView) rc = SQLITE_NOMEM;
        else if (!zHave || strcmp(zHave, f->zCallView) != 0) {
            sqlite3_free(f->zCallView);
            f->zCallView = NULL;
        }
    }
    sqlite3_finalize(p);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * What the later stages take from the trace besides its rows, read once, in the read's snapshot
 * when it has one: whether the large tables store times against a base (the schema stage's last
 * question), and, with bMeta (a read that scans), the meta rows, with the always-on mode's keys
 * (f->kernelSummaryFrom, nKernelSummarized, kernelPeriod) the scan's kernel feed needs. Returns a
 * VT_EXIT code (one line printed).
 */
static int read_layout(struct vt_tracefile *f, int bMeta)
{
    const char *azLarge[VT_T_N];
    int rc, nLarge = 0;
    /* stored times read directly only where every large table's time columns are the schema's; the tables a
     * trace lacks (tensor_event before schema 3) are left out */
    for (int k = 0; k < VT_T_N; k++)
        if ((f->aT[k].bPresent = vt__read_has(f, vt__tbl_name(k))) != 0) azLarge[nLarge++] = vt__tbl_name(k);
    f->bStored = vt__schema_time_base(f->db, azLarge, nLarge, &f->timeBase) == 1;
    if (!bMeta) return VT_EXIT_OK;
    rc = read_call_view(f);
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot read trace: %s", f->zPath, sqlite3_errstr(rc));
        return vt__exit_for_sqlite(rc);
    }
    rc = read_meta_rows(f);
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot read the trace's meta table: %s", f->zPath, sqlite3_errstr(rc));
        return vt__exit_for_sqlite(rc);
    }
    f->kernelSummaryFrom = vt__read_meta_int(f, "kernel_summary_from_ns");
    f->nKernelSummarized = vt__read_meta_int(f, "kernel_summary_kernels");
    f->kernelPeriod = vt__read_meta_int(f, "config.kernel_period_ns");
    if (f->kernelPeriod <= 0) f->kernelPeriod = 1000000000;
    return VT_EXIT_OK;
}
int vt__exit_for_schema(int st)
{
    switch (st) {
    case VT_SCHEMA_OK: return VT_EXIT_OK;
    case VT_SCHEMA_NEWER: return VT_EXIT_TOO_NEW;
    case VT_SCHEMA_CORRUPT: return VT_EXIT_CORRUPT;
    case VT_SCHEMA_BUSY: return VT_EXIT_NOFILE; /* unreadable for now */
    default: return VT_EXIT_NOT_TRACE;
    }
}

/* Can results be written back into zPath: the file and its directory (SQLite's journal) writable? */
static int writable(const char *zPath)
{
    char zDir[4096];
    const char *zSlash = strrchr(zPath, '/');
    if (zSlash) snprintf(zDir, sizeof zDir, "%.*s", (int)(zSlash - zPath + 1), zPath);
    else snprintf(zDir, sizeof zDir, ".");
    return access(zPath, W_OK) == 0 && access(zDir, W_OK) == 0;
}

/*
 * The read's one transaction on f's open connection (bWrite: asked writable and possible):
 * read-side indexes built (a killed recording has none), then one write transaction for the
 * whole read (the snapshot, and the results written back in it). A trace still being written
 * (locked) or read-only is read in a read transaction instead (f->noWrite says why; meta.c notes
 * it). Returns a VT_EXIT code (one line printed).
 */
static int snapshot(struct vt_tracefile *f, int bWrite)
{
    int rc;
    if (bWrite) {
        int rcIdx = vt__schema_index(f->db);
        if (rcIdx == SQLITE_OK) rcIdx = sqlite3_exec(f->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rcIdx == SQLITE_OK) {
            f->bWritable = 1;
            return VT_EXIT_OK;
        }
        f->noWrite = (rcIdx & 0xff) == SQLITE_BUSY ? VT_NOWRITE_LOCKED : VT_NOWRITE_FAILED;
    }
    f->bReadOnlyFile = f->noWrite >= VT_NOWRITE_READONLY;
    /* one snapshot for every reader: what the scan found (time order, impossible rows) must stay true */
    rc = sqlite3_exec(f->db, "BEGIN", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot read trace: %s", f->zPath, sqlite3_errmsg(f->db));
        return vt__exit_for_sqlite(rc);
    }
    return VT_EXIT_OK;
}

/*
 * The connection for f, writable when asked and possible (snapshot), checked as a trace (open_db),
 * with what the later stages take from it (read_layout); a read that does not scan
 * (VT_READ_NOSCAN) takes no transaction and no meta rows. Returns a VT_EXIT code (one line printed).
 */
static int connect(struct vt_tracefile *f, const struct vt_input *in, unsigned flags)
{
    int rc, bWrite = (flags & VT_READ_WRITE) != 0, bScan = !(flags & VT_READ_NOSCAN);
    /* another tool's file, a pipe read into a file, a merged copy: read, never written back */
    if (bWrite && in->bImported) f->noWrite = VT_NOWRITE_IMPORTED;
    else if (bWrite && strcmp(in->zFile, f->zPath) != 0) f->noWrite = VT_NOWRITE_COPY;
    else if (bWrite && !writable(in->zFile)) f->noWrite = VT_NOWRITE_READONLY;
    if (f->noWrite) bWrite = 0;
    rc = open_db(f, in->zFile, bWrite);
    if (rc == VT_EXIT_OK && bScan) rc = snapshot(f, bWrite);
    if (rc == VT_EXIT_OK) rc = read_layout(f, bScan);
    return rc;
}

int vt__read_open(struct vt_tracefile *f, const char *zPath, unsigned flags, struct vt_kernel_feed *pFeed)
{
    struct vt_input in;
    int rc;
    memset(f, 0, sizeof *f);
    f->zPath = zPath;
    f->bKeep = (flags & VT_READ_KEEP) != 0;
    /* the stages, each once, in order: what the input is and, for another tool's file, its import (import
     * layer); the connection and the schema check (with the meta rows); the scan (with the guard); meta,
     * devices, time, notes */
    rc = vt__import_input(zPath, &in);
    if (rc == VT_EXIT_OK) {
        f->zOpened = in.zFile;
        f->zImported = in.bImported ? in.zFile : NULL;
        rc = connect(f, &in, flags);
    }
    if (rc == VT_EXIT_OK && !(flags & VT_READ_NOSCAN)) {
        int rcScan = vt__scan(f, pFeed);
        if (rcScan != SQLITE_OK) {
            vt__errorf("%s: cannot read trace: %s", zPath, sqlite3_errstr(rcScan));
            rc = vt__exit_for_sqlite(rcScan);
        }
        if (rc == VT_EXIT_OK) rc = vt__read_meta(f);
    }
    if (rc != VT_EXIT_OK) vt__read_close(f);
    return rc;
}
void vt__read_done(struct vt_tracefile *f)
{
    if (f->db) {
        if (!sqlite3_get_autocommit(f->db)) sqlite3_exec(f->db, "ROLLBACK", NULL, NULL, NULL);
        /* a pass fed by the scan (the transfer pass) may still hold statements on this connection
         * when a read fails midway: the connection goes when they are finalized */
        sqlite3_close_v2(f->db);
        f->db = NULL;
    }
}

void vt__read_close(struct vt_tracefile *f)
{
    vt__read_done(f);
    for (int i = 0; i < f->nNote; i++) free(f->azNote[i]);
    for (int i = 0; i < f->nTable; i++) free(f->azTable[i]);
    for (int i = 0; i < f->nMeta; i++) {
        free(f->aMeta[i].zKey);
        free(f->aMeta[i].zValue);
    }
    for (int k = 0; k < VT_T_N; k++) sqlite3_free(f->aT[k].zGuard);
    sqlite3_free(f->zCallView); /* f->fold is released by the scan, which takes it */
    vt__kept_free(f);
    vt__figures_free(f);
    free(f->azTable);
    free(f->aMeta);
    free(f->aDev);
    free(f->aLend);
    memset(f, 0, sizeof *f);
}
