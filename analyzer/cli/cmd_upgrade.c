/* The 'upgrade' subcommand: traces of older schema versions brought to the current one (the views every trace carries). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "read/read.h"
#include "util/opts.h"
#include "vramtrace/schema.h"
#include "vramtrace/migrate.h"

static const char zUsage[] =
    "usage: vramtrace upgrade [-o OUT] TRACE...\n"
    "\n"
    "Bring traces written by older vramtrace versions to the current schema (6): a schema 3 or 4\n"
    "trace gains the views every trace carries (CUPTI_ACTIVITY_KIND_*, StringIds, NVTX_EVENTS,\n"
    "TARGET_INFO_GPU, PROCESSES, ENUM_*, site), and its kernels, API calls, copies and sets are\n"
    "stored compacted (signatures stored once, read through views of the same names, columns and\n"
    "ids); in a schema 3, 4 or 5 trace the API calls of copies, sets, allocations and frees are\n"
    "folded into their activity rows (api_call shows the same rows and ids). Schema 1 and 2\n"
    "traces gain the views and keep their number (their\n"
    "tables differ). Every reader reads every version: upgrading makes a trace smaller and lets\n"
    "other SQLite tools see the views. A current trace is left as it is. In place, or into a new\n"
    "file OUT with -o (one trace; the original is not touched).\n"
    "\n"
    "options:\n"
    "  -o, --output OUT  write the upgraded copy to OUT (must not exist)\n"
    "  -h, --help        this help\n"
    "\n"
    "exit codes: 0 ok, 2 usage, 3 file missing or not writable (or -o OUT exists),\n"
    "4 not a trace, 5 trace from a newer vramtrace, 6 damaged trace, 7 internal error,\n"
    "9 several traces and some could not be upgraded (each is named).\n";

/*
 * Upgrade the trace zPath in place (zFrom, when not NULL, is the original it was copied from,
 * for messages). Prints one line per trace. Returns a VT_EXIT code.
 */
static int upgrade_one(const char *zPath, const char *zFrom)
{
    sqlite3 *db = NULL;
    char zMsg[512], zDone[128], *zErr = NULL;
    int version = 0, vNew = 0, rc = VT_EXIT_OK, src;
    enum vt_schema_status st;
    const char *zName = zFrom ? zFrom : zPath;

    if ((rc = vt__read_check_file(zPath, zName)) != VT_EXIT_OK) goto done;
    if ((src = sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE, NULL)) != SQLITE_OK) {
        vt__errorf("%s: cannot open for writing: %s", zPath, vt__sqlite_open_error(db, src, zPath, zMsg, sizeof zMsg));
        rc = VT_EXIT_NOFILE;
        goto done;
    }
    sqlite3_busy_timeout(db, 2000);
    st = vt__schema_check(db, &version, zMsg, sizeof zMsg);
    if (st != VT_SCHEMA_OK) {
        vt__errorf("%s: %s", zName, zMsg);
        rc = vt__exit_for_schema(st);
        goto done;
    }
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &zErr) != SQLITE_OK ||
        vt__migrate(db, version, &vNew, zDone, sizeof zDone, &zErr) != SQLITE_OK ||
        sqlite3_exec(db, "COMMIT", NULL, NULL, &zErr) != SQLITE_OK) {
        src = sqlite3_errcode(db) & 0xff; /* before the ROLLBACK sets its own */
        vt__errorf("%s: cannot upgrade: %s", zPath, zErr ? zErr : sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        rc = src == SQLITE_READONLY || src == SQLITE_BUSY ? VT_EXIT_NOFILE : VT_EXIT_INTERNAL;
        goto done;
    }
    if (vNew != version) printf("%s: schema %d -> %d (%s)\n", zPath, version, vNew, zDone);
    else if (zDone[0]) printf("%s: schema %d, %s\n", zPath, version, zDone);
    else printf("%s: schema %d, already %s\n", zPath, version,
                version == VT_SCHEMA_VERSION ? "current" : "has the views (its tables stay as they are)");
    if (vNew != version) sqlite3_exec(db, "VACUUM", NULL, NULL, NULL); /* the space of the rows stored before */
done:
    sqlite3_free(zErr);
    sqlite3_close(db);
    return rc;
}

/* Copy zFrom into the new file zTo (a consistent snapshot, through SQLite), then upgrade zTo. A VT_EXIT code. */
static int upgrade_copy(const char *zFrom, const char *zTo)
{
    sqlite3 *db = NULL;
    char zMsg[512];
    int rc;
    enum vt_schema_status st;
    if (access(zTo, F_OK) == 0) {
        vt__errorf("upgrade: %s exists; choose a new file for -o", zTo);
        return VT_EXIT_NOFILE; /* as import and redact: an output that exists is exit 3 */
    }
    if ((rc = vt__read_check_file(zFrom, zFrom)) != VT_EXIT_OK) return rc;
    if ((rc = sqlite3_open_v2(zFrom, &db, SQLITE_OPEN_READONLY, NULL)) != SQLITE_OK) {
        vt__errorf("%s: cannot open: %s", zFrom, vt__sqlite_open_error(db, rc, zFrom, zMsg, sizeof zMsg));
        sqlite3_close(db);
        return VT_EXIT_NOFILE;
    }
    st = vt__schema_check(db, NULL, zMsg, sizeof zMsg);
    if (st != VT_SCHEMA_OK) {
        vt__errorf("%s: %s", zFrom, zMsg);
        sqlite3_close(db);
        return vt__exit_for_schema(st);
    }
    {
        char *zSql = sqlite3_mprintf("VACUUM INTO %Q", zTo);
        rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(zSql);
    }
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot write %s: %s", zFrom, zTo, vt__sqlite_open_error(db, rc, zTo, zMsg, sizeof zMsg));
        sqlite3_close(db);
        return VT_EXIT_NOFILE;
    }
    sqlite3_close(db);
    return upgrade_one(zTo, zFrom);
}

int vt__cmd_upgrade(int argc, char **argv)
{
    enum { O_OUT = 1 };
    static const struct vt_opt aOpt[] = {{"output", 'o', 1, O_OUT}, {NULL, 0, 0, 0}};
    struct vt_optparse p;
    const char *zOut = NULL;
    int c, rc = VT_EXIT_OK, rcFirst = VT_EXIT_OK, nBad = 0;
    if (vt__opt_begin(&p, "upgrade", argc, argv, aOpt, 0) != 0) return VT_EXIT_INTERNAL;
    while ((c = vt__opt_next(&p)) > 0)
        if (c == O_OUT) zOut = p.zVal;
    if (c == VT_OPT_HELP) {
        fputs(zUsage, stdout);
    } else if (c == VT_OPT_ERROR) {
        rcFirst = VT_EXIT_USAGE;
    } else if (p.nArg == 0) {
        vt__errorf("upgrade: no trace given (usage: vramtrace upgrade [-o OUT] TRACE...)");
        rcFirst = VT_EXIT_USAGE;
    } else if (zOut && p.nArg != 1) {
        vt__errorf("upgrade: -o takes one trace (got %d)", p.nArg);
        rcFirst = VT_EXIT_USAGE;
    } else {
        for (int i = 0; i < p.nArg; i++) {
            rc = zOut ? upgrade_copy(p.azArg[i], zOut) : upgrade_one(p.azArg[i], NULL);
            if (rc != VT_EXIT_OK && !nBad++) rcFirst = rc;
        }
        if (nBad && nBad < p.nArg) rcFirst = VT_EXIT_PARTIAL;
    }
    vt__opt_end(&p);
    return rcFirst;
}
