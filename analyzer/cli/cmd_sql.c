/* The 'sql' subcommand: read-only SQL over one or more traces, printed as a table, CSV or JSON. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "sql.h"
#include "util/opts.h"

#define SQL_TIMEOUT_DEFAULT 300                /* seconds a query may run unless --timeout says */
#define SQL_HEAP_LIMIT ((sqlite3_int64)1 << 30) /* bytes SQLite may hold while the command runs */
#define SQL_ATTACH_MAX 10 /* SQLite attaches at most this many databases (SQLITE_MAX_ATTACHED) */
#define PROGRESS_OPS 10000                     /* virtual machine steps between two looks at the clock */
#define WATCHDOG_GRACE_S 2                     /* past the deadline, the watchdog ends the process */

/*
 * The time bound of one run. The progress handler stops a statement between two
 * virtual machine steps once the deadline has passed; one step can last much
 * longer (SQLite 3.40's printf('%.*c', 2000000000, 'x') loops 2e9 times inside
 * one call, LIKE is O(n*m)), so a watchdog thread ends the process
 * WATCHDOG_GRACE_S seconds later if the run has not returned by then.
 */
struct deadline {
    double timeoutS;       /* --timeout; 0: no bound, no handler, no thread */
    struct timespec until; /* the deadline on CLOCK_MONOTONIC */
    int bExpired;          /* the progress handler stopped a statement at it */
    pthread_mutex_t mu;    /* guards bDone */
    pthread_cond_t cv;     /* signalled when the run is done */
    int bDone;
    int bThread;           /* the watchdog runs */
    pthread_t thread;
};

/* The message for a run stopped at its deadline, into z (size n). Returns its length. */
static int timeout_message(char *z, size_t n, double timeoutS)
{
    return snprintf(z, n, "vramtrace: sql: the query ran longer than --timeout %g s and was stopped "
                          "(--timeout 0: no limit)\n", timeoutS);
}

/*
 * The watchdog: waits until the run is done or WATCHDOG_GRACE_S past the
 * deadline; in the second case writes the timeout message (write(2): no stdio
 * lock, which the blocked thread may hold) and ends the process with
 * VT_EXIT_LIMIT.
 */
static void *watchdog(void *pArg)
{
    struct deadline *d = pArg;
    struct timespec until = d->until;
    char z[200];
    int n;
    until.tv_sec += WATCHDOG_GRACE_S;
    pthread_mutex_lock(&d->mu);
    while (!d->bDone && pthread_cond_timedwait(&d->cv, &d->mu, &until) != ETIMEDOUT) {
    }
    if (!d->bDone) {
        n = timeout_message(z, sizeof z, d->timeoutS);
        if (n > 0 && write(2, z, (size_t)n < sizeof z ? (size_t)n : sizeof z - 1) < 0) n = 0;
        _exit(VT_EXIT_LIMIT);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* Progress handler: 1 (interrupt the statement) once the deadline has passed. */
static int past_deadline(void *pArg)
{
    struct deadline *d = pArg;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > d->until.tv_sec || (now.tv_sec == d->until.tv_sec && now.tv_nsec >= d->until.tv_nsec))
        d->bExpired = 1;
    return d->bExpired;
}

/*
 * Start the time bound of a run on db: nothing for timeoutS 0; else the
 * deadline, the progress handler and the watchdog (without it when the thread
 * cannot start: the handler alone still stops most queries). Undone by
 * deadline_end.
 */
static void deadline_start(struct deadline *d, sqlite3 *db, double timeoutS)
{
    pthread_condattr_t ca;
    memset(d, 0, sizeof *d);
    d->timeoutS = timeoutS;
    if (timeoutS <= 0) return;
    clock_gettime(CLOCK_MONOTONIC, &d->until);
    d->until.tv_sec += (time_t)timeoutS;
    d->until.tv_nsec += (long)((timeoutS - (double)(time_t)timeoutS) * 1e9);
    if (d->until.tv_nsec >= 1000000000L) {
        d->until.tv_sec++;
        d->until.tv_nsec -= 1000000000L;
    }
    sqlite3_progress_handler(db, PROGRESS_OPS, past_deadline, d);
    pthread_mutex_init(&d->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->cv, &ca);
    pthread_condattr_destroy(&ca);
    d->bThread = pthread_create(&d->thread, NULL, watchdog, d) == 0;
}

/* End the time bound started by deadline_start: remove the handler, stop the watchdog. */
static void deadline_end(struct deadline *d, sqlite3 *db)
{
    if (d->timeoutS <= 0) return;
    sqlite3_progress_handler(db, 0, NULL, NULL);
    if (d->bThread) {
        pthread_mutex_lock(&d->mu);
        d->bDone = 1;
        pthread_cond_signal(&d->cv);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->thread, NULL);
    }
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vramtrace sql [OPTIONS] TRACE... \"SQL\"\n"
            "       vramtrace sql [OPTIONS] -f FILE TRACE...\n\n"
            "Run read-only SQL over one or more traces. The last argument is the SQL (one\n"
            "statement, or several separated by ';', run in order); with -f it is read from\n"
            "FILE ('-' for standard input) and every other argument is a trace. A TRACE may be\n"
            "another tool's file, a directory of traces (record -o DIR/) or - (standard input).\n\n"
            "options:\n"
            "  --format table|csv|json  output format (default table)\n"
            "  --max-width N            table: cut cells wider than N characters (default 40,\n"
            "                           0 = never cut)\n"
            "  --no-header              table and csv: no column-name line\n"
            "  -f, --file FILE          read the SQL from FILE\n"
            "  --timeout SECONDS        stop the query after this long (default 300, 0 = no\n"
            "                           limit)\n"
            "  --per-trace              run the query on each trace alone and concatenate the\n"
            "                           results, with a first column trace (the file); the\n"
            "                           way it runs over more than 10 traces\n\n"
            "With one trace its tables are read directly; with several (up to 10) each is\n"
            "attached as t0, t1, ...; beyond 10 (SQLite's limit), or with --per-trace, the query\n"
            "runs on each trace alone (one SELECT; a trace that cannot be read is named and the\n"
            "others are still queried, exit 9). Cross-trace joins over hundreds of ranks:\n"
            "export CSV (vramtrace export --csv) and use DuckDB (docs/queries.md).\n"
            "Views on one trace or many: all_memory_event,\n"
            "all_kernel, all_memcpy, all_memset, all_nvtx_range, all_oom_event,\n"
            "all_api_call, all_buffer_use, all_sync_event, all_pool_event, all_device,\n"
            "all_dropped, all_meta (each row with trace, pid and rank), process, site (the\n"
            "call site of each stack), and all_finding, all_lifetime, all_phase once every\n"
            "trace was analyzed with analyze --save. Nsight Systems' names work too:\n"
            "CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME, _DRIVER,\n"
            "_SYNCHRONIZATION, CUDA_GPU_MEMORY_USAGE_EVENTS, NVTX_EVENTS, StringIds,\n"
            "TARGET_INFO_GPU, PROCESSES, ENUM_CUDA_*.\n"
            "See docs/queries.md and docs/nsight.md.\n\n"
            "Limits: a query stops after --timeout seconds, when SQLite would hold more than\n"
            "1 GiB of memory, or at a string or blob longer than 64 MiB. One step that runs\n"
            "on ends the process 2 s past the deadline.\n\n"
            "Exit codes: 0 ok, 2 bad arguments, bad SQL or a statement that would write\n"
            "(\"vramtrace sql is read-only\"), 3 trace missing, 4 not a trace, 5 newer trace,\n"
            "6 damaged trace, 7 internal error, 9 some of several traces not read (per-trace),\n"
            "10 a query stopped at a limit.\n");
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

/* Whether SQLite's message zErr says a table the analyzer writes back (--save) is missing. */
static int analysis_table_missing(const char *zErr)
{
    static const char *const az[] = {"finding", "lifetime", "phase", "allocation"};
    const char *z = strstr(zErr, "no such table: ");
    if (!z) return 0;
    z += strlen("no such table: ");
    if (!strncmp(z, "all_", 4)) z += 4;
    else if (strchr(z, '.')) z = strchr(z, '.') + 1; /* t0.finding */
    for (size_t k = 0; k < sizeof az / sizeof az[0]; k++)
        if (!strcmp(z, az[k])) return 1;
    return 0;
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
    case SQLITE_INTERRUPT:
    case SQLITE_TOOBIG:
    case SQLITE_NOMEM: return VT_EXIT_LIMIT;
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN: return VT_EXIT_INTERNAL;
    default: return VT_EXIT_USAGE;
    }
}

/* Print the message for SQLite error rc of a statement that reached a limit (rc & 0xff is one exit_for maps to
 * VT_EXIT_LIMIT). */
static void report_limit(sqlite3 *db, int rc, const struct deadline *d)
{
    char z[200];
    if (d->bExpired) {
        timeout_message(z, sizeof z, d->timeoutS);
        fputs(z, stderr);
    } else if ((rc & 0xff) == SQLITE_TOOBIG)
        vt__errorf("sql: a string or blob would be longer than the %d MiB vramtrace sql allows",
                   VT_SQL_MAX_LENGTH >> 20);
    else if ((rc & 0xff) == SQLITE_NOMEM)
        vt__errorf("sql: out of memory: the query needs more than the %lld MiB vramtrace sql allows",
                   (long long)(SQL_HEAP_LIMIT >> 20));
    else
        vt__errorf("sql: %s", sqlite3_errmsg(db));
}

/* The CSV header of a query run on each trace alone: the first trace's result columns, which every later trace's rows
 * are lined up under (a trace of another schema version may give other columns to `SELECT *`). */
struct headcols {
    char **azCol;
    int nCol, bSet;
};

/*
 * Line the one result statement *ppStmt of trace opt->zTrace up under pHead's columns: the first trace sets them; a
 * later one whose columns differ is prepared again as SELECT of those columns from it (NULL where it has not one), and
 * the columns it has beyond them are named on standard error as left out. Returns an SQLite code.
 */
static int line_up(sqlite3 *db, sqlite3_stmt **ppStmt, struct headcols *pHead, const char *zTrace)
{
    sqlite3_stmt *p = *ppStmt, *pNew = NULL;
    char **azHas = NULL, *zSel = NULL, *zLined = NULL;
    int nHas = 0, nOwn, n = sqlite3_column_count(p), bSame = pHead->bSet && n == pHead->nCol, rc = SQLITE_OK, nLen;
    for (int i = 0; bSame && i < n; i++) bSame = !strcmp(sqlite3_column_name(p, i), pHead->azCol[i]);
    if (bSame) return SQLITE_OK;
    if (!pHead->bSet) { /* the first trace's columns are the header (as its statement gives them: a pragma too) */
        if (!(pHead->azCol = sqlite3_malloc64(sizeof *pHead->azCol * (size_t)(n ? n : 1)))) return SQLITE_NOMEM;
        for (int i = 0; i < n; i++)
            if (!(pHead->azCol[pHead->nCol++] = sqlite3_mprintf("%s", sqlite3_column_name(p, i)))) return SQLITE_NOMEM;
        pHead->bSet = 1;
        return SQLITE_OK;
    }
    zSel = sqlite3_mprintf("%s", sqlite3_sql(p));
    if (!zSel) return SQLITE_NOMEM;
    for (nLen = (int)strlen(zSel); nLen > 0 && (zSel[nLen - 1] == ';' || isspace((unsigned char)zSel[nLen - 1]));)
        zSel[--nLen] = 0; /* the statement as a subquery: without its ';' */
    rc = vt__sql_columns_union(db, zSel, &azHas, &nHas, &nOwn);
    {
        sqlite3_str *pOut = sqlite3_str_new(db); /* its columns the header has not, named once */
        char *zOut;
        for (int i = 0; rc == SQLITE_OK && i < nHas; i++) {
            int j = 0;
            while (j < pHead->nCol && strcmp(pHead->azCol[j], azHas[i])) j++;
            if (j == pHead->nCol) sqlite3_str_appendf(pOut, "%s%s", sqlite3_str_length(pOut) ? ", " : "", azHas[i]);
        }
        zOut = sqlite3_str_finish(pOut);
        if (zOut && zOut[0])
            vt__errorf("sql: %s: its columns %s are left out: the first trace's rows have no such column (another "
                       "schema version), and the CSV has one header", zTrace, zOut);
        sqlite3_free(zOut);
    }
    if (rc == SQLITE_OK) rc = vt__sql_columns_select(db, zSel, pHead->azCol, pHead->nCol, &zLined);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, zLined, -1, &pNew, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_finalize(p);
        *ppStmt = pNew;
    }
    vt__sql_columns_free(azHas, nHas);
    sqlite3_free(zLined);
    sqlite3_free(zSel);
    return rc;
}

/*
 * Prepare every statement of zSql (so a refused or bad one stops the run before
 * anything is printed), then run and print each in order, all within timeoutS
 * seconds (0: no limit). pHead: the header a CSV of one trace at a time lines its
 * rows up under (NULL otherwise). Returns an enum vt_exit code, after one "vramtrace:"
 * line on stderr when it is not VT_EXIT_OK.
 */
static int run_sql(sqlite3 *db, const char *zSql, const struct vt_sql_print *opt, double timeoutS, struct headcols *pHead)
{
    sqlite3_stmt **apStmt = NULL, **apNew;
    const char *zTail = zSql, *zStart;
    int nStmt = 0, nResult = 0, nPrinted = 0, rc = VT_EXIT_OK, i, src;
    long long nRow;
    struct deadline dl;

    deadline_start(&dl, db, timeoutS);

    while (zTail && *zTail) {
        sqlite3_stmt *pStmt = NULL;
        zStart = zTail;
        src = sqlite3_prepare_v2(db, zStart, -1, &pStmt, &zTail);
        if (src != SQLITE_OK) {
            if ((src & 0xff) == SQLITE_AUTH || (src & 0xff) == SQLITE_READONLY)
                refuse_write(zStart, "this statement is not allowed");
            else if (analysis_table_missing(sqlite3_errmsg(db)))
                vt__errorf("sql: %s (the analyzer's tables exist once a trace was analyzed with 'vramtrace analyze "
                           "--save'; the all_ views once every trace given was)",
                           sqlite3_errmsg(db));
            else if (exit_for(src) == VT_EXIT_LIMIT)
                report_limit(db, src, &dl);
            else
                vt__errorf("sql: %s", sqlite3_errmsg(db));
            rc = exit_for(src) == VT_EXIT_LIMIT ? VT_EXIT_LIMIT : VT_EXIT_USAGE;
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
    if (opt->zTrace && nResult > 1) {
        vt__errorf("sql: one trace at a time (--per-trace, or more than %d traces) runs one query that returns "
                   "rows; give one SELECT",
                   SQL_ATTACH_MAX);
        rc = VT_EXIT_USAGE;
        goto done;
    }
    for (i = 0; pHead && i < nStmt; i++) /* the one statement that returns rows (checked above) */
        if (sqlite3_column_count(apStmt[i]) > 0 && (src = line_up(db, &apStmt[i], pHead, opt->zTrace)) != SQLITE_OK) {
            vt__errorf("sql: %s: %s", opt->zTrace, sqlite3_errmsg(db));
            rc = exit_for(src);
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
            else if (exit_for(src) == VT_EXIT_LIMIT)
                report_limit(db, src, &dl);
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
    deadline_end(&dl, db);
    return rc;
}

/*
 * The query on each trace alone, results concatenated with a first column `trace` (CSV, JSON:
 * one array) or one table per trace under a "== TRACE" line: how `sql` reads more traces than
 * SQLite can attach. A trace that cannot be read is named and skipped. Returns VT_EXIT_OK,
 * VT_EXIT_PARTIAL (some traces not read), or the first error's code.
 */
static int run_per_trace(int nTrace, char **azPath, const char *zSql, const struct vt_sql_print *opt, double timeoutS)
{
    struct vt_sql_print one = *opt;
    struct headcols head = {NULL, 0, 0};
    long long nJson = 0;
    int rcFirst = VT_EXIT_OK, nBad = 0;
    if (opt->format == VT_SQL_JSON) {
        fputc('[', stdout);
        one.pnJsonRows = &nJson;
    }
    for (int i = 0; i < nTrace; i++) {
        sqlite3 *db = NULL;
        int nNone = 0, rc = vt__sql_open(1, &azPath[i], &db, &nNone);
        one.zTrace = azPath[i];
        if (rc == VT_EXIT_OK) {
            if (opt->format == VT_SQL_TABLE) printf("%s== %s\n", i ? "\n" : "", azPath[i]);
            rc = run_sql(db, zSql, &one, timeoutS, opt->format == VT_SQL_CSV ? &head : NULL);
            /* CSV: one header for all; a query the SQL itself refuses fails the same on every trace */
            if (rc == VT_EXIT_OK && opt->format == VT_SQL_CSV) one.bHeader = 0;
        }
        sqlite3_close(db);
        if (rc == VT_EXIT_USAGE || rc == VT_EXIT_LIMIT) {
            rcFirst = rc;
            break;
        }
        if (rc != VT_EXIT_OK && !nBad++) rcFirst = rc;
    }
    if (opt->format == VT_SQL_JSON) fputs(nJson ? "\n]\n" : "]\n", stdout);
    vt__sql_columns_free(head.azCol, head.nCol);
    if (rcFirst == VT_EXIT_OK || rcFirst == VT_EXIT_USAGE || rcFirst == VT_EXIT_LIMIT) return rcFirst;
    return nBad < nTrace ? VT_EXIT_PARTIAL : rcFirst;
}

int vt__cmd_sql(int argc, char **argv)
{
    enum { O_FORMAT = 1, O_WIDTH, O_TIMEOUT, O_NOHEADER, O_FILE, O_PERTRACE };
    static const struct vt_opt aOpt[] = {{"format", 0, 1, O_FORMAT},     {"max-width", 0, 1, O_WIDTH},
                                         {"timeout", 0, 1, O_TIMEOUT},   {"no-header", 0, 0, O_NOHEADER},
                                         {"file", 'f', 1, O_FILE},       {"per-trace", 0, 0, O_PERTRACE},
                                         {NULL, 0, 0, 0}};
    int bPerTrace = 0;
    static const char *const azFormat[] = {"table", "csv", "json", NULL};
    struct vt_sql_print opt = {VT_SQL_TABLE, 40, 1, NULL, NULL};
    struct vt_optparse p = {0};
    char **azPos = NULL;
    const char *zFile = NULL;
    char *zSql = NULL;
    sqlite3 *db = NULL;
    int nPos = 0, c, rc = VT_EXIT_OK, nTrace, k, nFailed = 0;
    long long n;
    int64_t timeoutNs = (int64_t)SQL_TIMEOUT_DEFAULT * 1000000000;
    /* a process-wide bound (restored at the end: the subcommand also runs inside test programs) */
    sqlite3_int64 oldHeapLimit = sqlite3_hard_heap_limit64(SQL_HEAP_LIMIT);

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
        case O_TIMEOUT: /* seconds, 0 = no limit */
            if (vt__opt_seconds(&p, &timeoutNs) != 0 || timeoutNs > (int64_t)1000000 * 1000000000) {
                if (timeoutNs > (int64_t)1000000 * 1000000000)
                    vt__errorf("sql: --timeout needs a number of seconds up to 1000000 (0 = no limit)");
                rc = VT_EXIT_USAGE;
            }
            break;
        case O_NOHEADER: opt.bHeader = 0; break;
        case O_FILE: zFile = p.zVal; break;
        case O_PERTRACE: bPerTrace = 1; break;
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
    nTrace = zFile ? p.nArg : p.nArg - 1;
    for (int k = 0; zFile && !strcmp(zFile, "-") && k < nTrace; k++)
        if (!strcmp(p.azArg[k], "-")) {
            vt__errorf("sql: standard input is either the SQL (-f -) or a trace (-), not both");
            rc = VT_EXIT_USAGE;
            goto done;
        }
    /* directories to their traces, standard input and pipes read into files (the SQL argument left as it is) */
    if (nTrace >= 1 && (rc = vt__inputs("sql", &p.azArg, &p.nArg, zFile ? 0 : 1)) != VT_EXIT_OK) goto done;
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
    if (bPerTrace || nTrace > SQL_ATTACH_MAX) {
        rc = run_per_trace(nTrace, azPos, zFile ? zSql : azPos[nPos - 1], &opt, (double)timeoutNs / 1e9);
        goto done;
    }
    rc = vt__sql_open(nTrace, azPos, &db, &nFailed);
    if (rc != VT_EXIT_OK) goto done;
    rc = run_sql(db, zFile ? zSql : azPos[nPos - 1], &opt, (double)timeoutNs / 1e9, NULL);
    /* some traces not read (each named): the query ran over the others */
    if (rc == VT_EXIT_OK && nFailed > 0) rc = VT_EXIT_PARTIAL;
done:
    sqlite3_close(db);
    free(zSql);
    vt__opt_end(&p);
    sqlite3_hard_heap_limit64(oldHeapLimit);
    return rc;
}
