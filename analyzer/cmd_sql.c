/* The 'sql' subcommand: read-only SQL over one or more traces, printed as a table, CSV or JSON. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sql.h"
#include "util/opts.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vramtrace sql [OPTIONS] TRACE... \"SQL\"\n"
            "       vramtrace sql [OPTIONS] -f FILE TRACE...\n\n"
            "Run read-only SQL over one or more traces. The last argument is the SQL (one\n"
            "statement, or several separated by ';', run in order); with -f it is read from\n"
            "FILE ('-' for standard input) and every other argument is a trace.\n\n"
            "options:\n"
            "  --format table|csv|json  output format (default table)\n"
            "  --max-width N            table: cut cells wider than N characters (default 40,\n"
            "                           0 = never cut)\n"
            "  --no-header              table and csv: no column-name line\n"
            "  -f, --file FILE          read the SQL from FILE\n\n"
            "With one trace its tables are read directly; with several each is attached as\n"
            "t0, t1, ... (at most 10). Views on one trace or many: all_memory_event,\n"
            "all_kernel, all_memcpy, all_memset, all_nvtx_range, all_oom_event,\n"
            "all_api_call, all_buffer_use, all_sync_event, all_pool_event, all_device,\n"
            "all_dropped, all_meta (each row with trace, pid and rank), process, site (the\n"
            "call site of each stack), and all_finding, all_lifetime, all_phase once every\n"
            "trace was analyzed. Nsight Systems' names work too:\n"
            "CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME, _DRIVER,\n"
            "_SYNCHRONIZATION, CUDA_GPU_MEMORY_USAGE_EVENTS, NVTX_EVENTS, StringIds,\n"
            "TARGET_INFO_GPU, PROCESSES, ENUM_CUDA_*.\n"
            "See docs/queries.md and docs/nsight.md.\n\n"
            "Exit codes: 0 ok, 2 bad arguments, bad SQL or a statement that would write\n"
            "(\"vramtrace sql is read-only\"), 3 trace missing, 4 not a trace, 5 newer trace,\n"
            "6 damaged trace, 7 internal error.\n");
}

/* Read all of zPath ('-' = stdin) into a malloc'd NUL-terminated string, or NULL. */
static char *read_file(const char *zPath)
{
    FILE *f = strcmp(zPath, "-") ? fopen(zPath, "rb") : stdin;
    char *z = NULL, *zNew;
    size_t n = 0, cap = 0, got;
    if (!f) return NULL;
    for (;;) {
        if (cap - n < 4096) {
            cap = cap ? cap * 2 : 8192;
            zNew = realloc(z, cap);
            if (!zNew) {
                free(z);
                z = NULL;
                break;
            }
            z = zNew;
        }
        got = fread(z + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    if (z && ferror(f)) {
        free(z);
        z = NULL;
    }
    if (z) z[n] = 0;
    if (f != stdin) fclose(f);
    return z;
}

/* Print the "read-only" refusal for the statement starting at zSql (up to its ';'). */
static void refuse_write(const char *zSql, const char *zWhy)
{
    int n;
    while (*zSql == ' ' || *zSql == '\n' || *zSql == '\t' || *zSql == '\r') zSql++;
    n = (int)strcspn(zSql, ";\n");
    fprintf(stderr,
            "vramtrace sql is read-only: %s (%.*s%s); traces are never modified, query them "
            "with SELECT\n",
            zWhy, n > 60 ? 60 : n, zSql, n > 60 ? "..." : "");
}

/* Map an SQLite error while running a statement to an exit code. */
static int exit_for(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return VT_EXIT_CORRUPT;
    case SQLITE_NOMEM:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN: return VT_EXIT_INTERNAL;
    default: return VT_EXIT_USAGE;
    }
}

/*
 * Prepare every statement of zSql (so a refused or bad one stops the run before
 * anything is printed), then run and print each in order.
 */
static int run_sql(sqlite3 *db, const char *zSql, const struct vt_sql_print *opt)
{
    sqlite3_stmt **apStmt = NULL, **apNew;
    const char *zTail = zSql, *zStart;
    int nStmt = 0, nResult = 0, nPrinted = 0, rc = VT_EXIT_OK, i, src;
    long long nRow;

    while (zTail && *zTail) {
        sqlite3_stmt *pStmt = NULL;
        zStart = zTail;
        src = sqlite3_prepare_v2(db, zStart, -1, &pStmt, &zTail);
        if (src != SQLITE_OK) {
            if ((src & 0xff) == SQLITE_AUTH || (src & 0xff) == SQLITE_READONLY)
                refuse_write(zStart, "this statement is not allowed");
            else if (strstr(sqlite3_errmsg(db), "no such table: all_finding") ||
                     strstr(sqlite3_errmsg(db), "no such table: all_lifetime") ||
                     strstr(sqlite3_errmsg(db), "no such table: all_phase"))
                vt__errorf("sql: %s (these views exist when every trace given was analyzed: run "
                           "'vramtrace analyze' on each)",
                           sqlite3_errmsg(db));
            else
                vt__errorf("sql: %s", sqlite3_errmsg(db));
            rc = (src & 0xff) == SQLITE_NOMEM ? VT_EXIT_INTERNAL : VT_EXIT_USAGE;
            goto done;
        }
        if (!pStmt) continue; /* whitespace or a comment */
        if (!sqlite3_stmt_readonly(pStmt)) {
            refuse_write(zStart, "this statement would write");
            sqlite3_finalize(pStmt);
            rc = VT_EXIT_USAGE;
            goto done;
        }
        apNew = realloc(apStmt, sizeof(*apStmt) * (size_t)(nStmt + 1));
        if (!apNew) {
            sqlite3_finalize(pStmt);
            vt__errorf("sql: out of memory");
            rc = VT_EXIT_INTERNAL;
            goto done;
        }
        apStmt = apNew;
        apStmt[nStmt++] = pStmt;
        if (sqlite3_column_count(pStmt) > 0) nResult++;
    }
    if (nStmt == 0) {
        vt__errorf("sql: no SQL statement given");
        rc = VT_EXIT_USAGE;
        goto done;
    }
    /* Several result sets: blank-line separated; in JSON, an array of arrays. */
    if (opt->format == VT_SQL_JSON && nResult > 1) fputs("[", stdout);
    for (i = 0; i < nStmt; i++) {
        if (sqlite3_column_count(apStmt[i]) > 0 && nPrinted++ > 0)
            fputs(opt->format == VT_SQL_JSON ? "," : "\n", stdout);
        src = vt__sql_print(apStmt[i], stdout, opt, &nRow);
        if (src == SQLITE_IOERR && ferror(stdout)) {
            vt__errorf("sql: cannot write the output: %s", strerror(errno));
            rc = VT_EXIT_INTERNAL;
            goto done;
        }
        if (src != SQLITE_OK) {
            if ((src & 0xff) == SQLITE_READONLY || (src & 0xff) == SQLITE_AUTH)
                refuse_write(sqlite3_sql(apStmt[i]), "this statement would write");
            else
                vt__errorf("sql: %s", sqlite3_errmsg(db));
            rc = exit_for(src);
            goto done;
        }
    }
    if (opt->format == VT_SQL_JSON && nResult > 1) fputs("]\n", stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        vt__errorf("sql: cannot write the output: %s", strerror(errno));
        rc = VT_EXIT_INTERNAL;
    }
done:
    for (i = 0; i < nStmt; i++) sqlite3_finalize(apStmt[i]);
    free(apStmt);
    return rc;
}

int vt__cmd_sql(int argc, char **argv)
{
    enum { O_FORMAT = 1, O_WIDTH, O_NOHEADER, O_FILE };
    static const struct vt_opt aOpt[] = {{"format", 0, 1, O_FORMAT}, {"max-width", 0, 1, O_WIDTH},
                                         {"no-header", 0, 0, O_NOHEADER}, {"file", 'f', 1, O_FILE},
                                         {NULL, 0, 0, 0}};
    static const char *const azFormat[] = {"table", "csv", "json", NULL};
    struct vt_sql_print opt = {VT_SQL_TABLE, 40, 1};
    struct vt_optparse p = {0};
    char **azPos = NULL;
    const char *zFile = NULL;
    char *zSql = NULL;
    sqlite3 *db = NULL;
    int nPos = 0, c, rc = VT_EXIT_OK, nTrace, k;
    long long n;

    if (vt__opt_begin(&p, "sql", argc, argv, aOpt, 0) != 0) return VT_EXIT_INTERNAL;
    while (rc == VT_EXIT_OK && (c = vt__opt_next(&p)) > 0) {
        switch (c) {
        case O_FORMAT:
            if (vt__opt_choice(&p, azFormat, &k) != 0) rc = VT_EXIT_USAGE;
            opt.format = k == 1 ? VT_SQL_CSV : k == 2 ? VT_SQL_JSON : VT_SQL_TABLE;
            break;
        case O_WIDTH: /* characters per column, 0 = no limit */
            if (vt__opt_int(&p, 0, 100000, &n) != 0) rc = VT_EXIT_USAGE;
            opt.maxWidth = n > 0 && n < 4 ? 4 : (int)n;
            break;
        case O_NOHEADER: opt.bHeader = 0; break;
        case O_FILE: zFile = p.zVal; break;
        }
    }
    if (rc != VT_EXIT_OK) goto done;
    if (c == VT_OPT_HELP) {
        usage(stdout);
        goto done;
    }
    if (c == VT_OPT_ERROR) {
        rc = VT_EXIT_USAGE;
        goto done;
    }
    azPos = p.azArg;
    nPos = p.nArg;
    nTrace = zFile ? nPos : nPos - 1;
    if (nTrace < 1) {
        vt__errorf(zFile ? "sql: no trace given (usage: vramtrace sql [OPTIONS] -f FILE TRACE...)"
                         : "sql: need a trace and an SQL statement (usage: vramtrace sql "
                           "[OPTIONS] TRACE... \"SQL\")");
        rc = VT_EXIT_USAGE;
        goto done;
    }
    if (zFile) {
        zSql = read_file(zFile);
        if (!zSql) {
            vt__errorf("%s: cannot read: %s", zFile, strerror(errno ? errno : EIO));
            rc = VT_EXIT_NOFILE;
            goto done;
        }
    }
    rc = vt__sql_open(nTrace, azPos, &db);
    if (rc != VT_EXIT_OK) goto done;
    rc = run_sql(db, zFile ? zSql : azPos[nPos - 1], &opt);
done:
    sqlite3_close(db);
    free(zSql);
    vt__opt_end(&p);
    return rc;
}
