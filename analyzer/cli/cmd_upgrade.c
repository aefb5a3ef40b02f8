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
#include "vramtrace/views.h"

static const char zUsage[] =
    "usage: vramtrace upgrade [-o OUT] TRACE...\n"
    "\n"
    "Give traces written by older vramtrace versions (schema 1 to 3) the views every trace\n"
    "now carries (CUPTI_ACTIVITY_KIND_*, StringIds, NVTX_EVENTS, TARGET_INFO_GPU, PROCESSES,\n"
    "ENUM_*, site), so the sqlite3 shell, DuckDB or pandas see them: a schema 3 trace becomes\n"
    "schema 4 (3 plus the views); schema 1 and 2 traces keep their number (their tables\n"
    "differ). Nothing else in the trace changes; a trace that has the views is left as it\n"
    "is. In place, or into a new file OUT with -o (one trace; the original is not touched).\n"
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
    char zMsg[512], zNum[16], zPragma[48], *zErr = NULL;
    int version = 0, rc = VT_EXIT_OK, bPresent;
    enum vt_schema_status st;
    const char *zName = zFrom ? zFrom : zPath;

    if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        vt__errorf("%s: cannot open for writing: %s", zPath, db ? sqlite3_errmsg(db) : "out of memory");
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
    bPresent = vt__views_present(db, "main") == 1;
    if (bPresent && vt__views_kernel_stale(db) != 1) {
        printf("%s: schema %d, already has the views\n", zPath, version);
        goto done;
    }
    snprintf(zNum, sizeof zNum, "%d", VT_SCHEMA_VERSION);
    snprintf(zPragma, sizeof zPragma, "PRAGMA user_version = %d", VT_SCHEMA_VERSION);
    /* schema 4 is schema 3 with the views: a version 3 trace becomes version 4; versions 1 and 2
     * (other table layouts, which readers tell apart by their number) gain the views and keep it;
     * a trace written before the kernel view read kernel_name gets the current kernel view */
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &zErr) != SQLITE_OK ||
        (bPresent ? vt__views_kernel_refresh(db, &zErr) : vt__views_create(db, &zErr)) != SQLITE_OK ||
        (!bPresent && version == VT_SCHEMA_VERSION - 1 &&
         (vt__meta_set(db, "schema_version", zNum) != SQLITE_OK ||
          sqlite3_exec(db, zPragma, NULL, NULL, &zErr) != SQLITE_OK)) ||
        sqlite3_exec(db, "COMMIT", NULL, NULL, &zErr) != SQLITE_OK) {
        vt__errorf("%s: cannot upgrade: %s", zPath, zErr ? zErr : sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        rc = (sqlite3_errcode(db) & 0xff) == SQLITE_READONLY || (sqlite3_errcode(db) & 0xff) == SQLITE_BUSY
                 ? VT_EXIT_NOFILE
                 : VT_EXIT_INTERNAL;
        goto done;
    }
    if (bPresent) printf("%s: schema %d, kernel view now reads demangled names\n", zPath, version);
    else if (version == VT_SCHEMA_VERSION - 1) printf("%s: schema %d -> %d (views added)\n", zPath, version, VT_SCHEMA_VERSION);
    else printf("%s: schema %d, views added\n", zPath, version);
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
    if (sqlite3_open_v2(zFrom, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        vt__errorf("%s: cannot open: %s", zFrom, db ? sqlite3_errmsg(db) : "out of memory");
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
        vt__errorf("%s: cannot write %s: %s", zFrom, zTo, sqlite3_errmsg(db));
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
