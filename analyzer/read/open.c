/* Opening a trace for reading: one validation, one read snapshot, one guard, one scan, for every subcommand. */
#include "read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"
#include "vramtrace/schema.h"

/*
 * Open zPath with SQLite (bWrite: read-write) and validate it as a trace this build reads.
 * Returns VT_EXIT_OK with *pDb open and *pVersion set, or an exit code after one line.
 */
static int open_db(const char *zPath, int bWrite, sqlite3 **pDb, int *pVersion)
{
    struct stat st;
    sqlite3 *db = NULL;
    char zMsg[256] = "";
    int rc, flags;

    *pDb = NULL;
    if (stat(zPath, &st) != 0) {
        vt__errorf("%s: %s", zPath, strerror(errno));
        return VT_EXIT_NOFILE;
    }
    if (S_ISDIR(st.st_mode)) {
        vt__errorf("%s: is a directory, not a trace", zPath);
        return VT_EXIT_NOFILE;
    }
    if (st.st_size == 0) {
        vt__errorf("%s: empty file, not a vramtrace trace (was the traced process killed before it started?)", zPath);
        return VT_EXIT_NOT_TRACE;
    }
    /* one thread per connection: SQLite's per-call mutexes are pure cost here */
    flags = (bWrite ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
    rc = sqlite3_open_v2(zPath, &db, flags, NULL);
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot open: %s", zPath, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return VT_EXIT_NOFILE;
    }
    sqlite3_busy_timeout(db, 2000);
    rc = vt__exit_for_schema(vt__schema_check(db, pVersion, zMsg, sizeof zMsg));
    if (rc == VT_EXIT_OK) {
        *pDb = db;
        return VT_EXIT_OK;
    }
    vt__errorf("%s: %s", zPath, zMsg);
    sqlite3_close(db);
    return rc;
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
 * The connection for f, writable when asked and possible: read-side indexes built (a killed
 * recording has none), then one write transaction for the whole read (the snapshot, and the
 * results written back in it). A trace still being written (locked) or read-only is read in
 * a read transaction instead, with a note. Returns a VT_EXIT code (one line printed).
 */
static int connect(struct vt_tracefile *f, unsigned flags)
{
    char *zImported = NULL;
    const char *zPath = f->zPath;
    int rc, bWrite = (flags & VT_READ_WRITE) != 0;
    /* another tool's file (PyTorch snapshot, Nsight export, Kineto trace): a temporary import of it,
     * removed at exit (import.c), read like any trace and never written back */
    if (access(zPath, R_OK) == 0 && (rc = vt__import_to_temp(zPath, &zImported)) != VT_EXIT_OK) return rc;
    if (zImported) {
        f->zImported = zImported;
        zPath = zImported;
        if (bWrite)
            vt__read_note(f, "results were not written back: this is another tool's file, read through a temporary "
                             "import; 'vramtrace import FILE -o TRACE.db' makes a trace that --save can write into");
        bWrite = 0;
    } else if (strcmp(vt__import_temp_path(zPath), zPath) != 0) {
        /* a copy with PyTorch's allocation history merged in (analyze without --save, merge.c) */
        zPath = vt__import_temp_path(zPath);
        bWrite = 0;
    }
    if (bWrite && !writable(zPath)) {
        bWrite = 0;
        f->bReadOnlyFile = 1;
        vt__read_note(f, "the trace is read-only: results were not written back into it");
    }
    rc = open_db(zPath, bWrite, &f->db, &f->version);
    if (rc != VT_EXIT_OK || (flags & VT_READ_NOSCAN)) return rc;
    if (bWrite) {
        int rcIdx = vt__schema_index(f->db);
        if (rcIdx == SQLITE_OK) rcIdx = sqlite3_exec(f->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rcIdx == SQLITE_OK) {
            f->bWritable = 1;
            return VT_EXIT_OK;
        }
        vt__read_note(f, (rcIdx & 0xff) == SQLITE_BUSY
                             ? "the trace is locked by another process (still being recorded?): results were "
                               "not written back into it"
                             : "the trace could not be written: results were not written back into it");
        f->bReadOnlyFile = 1;
    }
    /* one snapshot for every reader: what the scan found (time order, impossible rows) must stay true */
    rc = sqlite3_exec(f->db, "BEGIN", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot read trace: %s", f->zPath, sqlite3_errmsg(f->db));
        return vt__exit_for_sqlite(rc);
    }
    return VT_EXIT_OK;
}

int vt__read_open(struct vt_tracefile *f, const char *zPath, unsigned flags, struct vt_kernel_feed *pFeed)
{
    const char *azLarge[VT_T_N];
    int rc;
    memset(f, 0, sizeof *f);
    f->zPath = zPath;
    rc = connect(f, flags);
    if (rc == VT_EXIT_OK && !(flags & VT_READ_NOSCAN)) {
        for (int k = 0; k < VT_T_N; k++) azLarge[k] = vt__tbl_name(k);
        /* stored times read directly only where every large table's time columns are the schema's; the
         * tables a trace lacks (tensor_event before schema 3) are left out */
        int nLarge = 0;
        for (int k = 0; k < VT_T_N; k++)
            if (vt__schema_has_table(f->db, azLarge[k]) == 1) azLarge[nLarge++] = azLarge[k];
        f->bStored = vt__schema_time_base(f->db, azLarge, nLarge, &f->timeBase) == 1;
        int rcScan = vt__read_mode(f) == 0 ? vt__scan(f, pFeed) : SQLITE_ERROR;
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
    free(f->aDev);
    free(f->aLend);
    memset(f, 0, sizeof *f);
}
