/* Opening and validating trace files for the subcommands, with one clear message per failure. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "import.h"
#include "vramtrace/schema.h"

void vt__errorf(const char *zFmt, ...)
{
    va_list ap;
    fputs("vramtrace: ", stderr);
    va_start(ap, zFmt);
    vfprintf(stderr, zFmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int vt__trace_open(const char *zPath, int bWrite, sqlite3 **pDb)
{
    struct stat st;
    sqlite3 *db = NULL;
    char zMsg[256] = "", *zImported = NULL;
    int rc, flags;
    enum vt_schema_status status;

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
        vt__errorf("%s: empty file, not a vramtrace trace (was the traced process killed before it started?)",
                   zPath);
        return VT_EXIT_NOT_TRACE;
    }
    /* another tool's file (PyTorch snapshot, Nsight export, Kineto trace): read a temporary import of it */
    if ((rc = vt__import_to_temp(zPath, &zImported)) != VT_EXIT_OK) return rc;
    /* one thread per connection: SQLite's per-call mutexes are pure cost here */
    flags = (bWrite ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
    rc = sqlite3_open_v2(zImported ? zImported : zPath, &db, flags, NULL);
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot open: %s", zPath, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return VT_EXIT_NOFILE;
    }
    sqlite3_busy_timeout(db, 2000);
    status = vt__schema_check(db, NULL, zMsg, sizeof zMsg);
    switch (status) {
    case VT_SCHEMA_OK: *pDb = db; return VT_EXIT_OK;
    case VT_SCHEMA_NEWER: rc = VT_EXIT_TOO_NEW; break;
    case VT_SCHEMA_CORRUPT: rc = VT_EXIT_CORRUPT; break;
    default: rc = VT_EXIT_NOT_TRACE; break;
    }
    vt__errorf("%s: %s", zPath, zMsg);
    sqlite3_close(db);
    return rc;
}

/*
 * The rows a real trace can hold. Timestamps are CUPTI nanoseconds (about 2^61
 * today), sizes at most 1 PiB, addresses within +-2^62: any two of them can be
 * added or subtracted without overflow. A damaged or hand-made trace may hold
 * anything (INT64_MIN, text, 1e300): such rows are hidden from the readers.
 */
#define TS(c) "(" c " BETWEEN 0 AND 4611686018427387903)"
#define TSN(c) "(" c " IS NULL OR " TS(c) ")"
#define SZ(c) "(" c " BETWEEN 0 AND 1125899906842624)"
#define SZN(c) "(" c " IS NULL OR " SZ(c) ")"
#define AD(c) "(" c " BETWEEN -4611686018427387904 AND 4611686018427387903)"
#define ADN(c) "(" c " IS NULL OR " AD(c) ")"
static const struct {
    const char *zTable, *zWhere;
} aGuard[] = {
    {"memory_event", TS("ts") " AND " SZ("bytes") " AND " AD("address") " AND " SZN("pool_size") " AND "
                     SZN("pool_used") " AND " SZN("pool_threshold")},
    {"oom_event", TS("ts") " AND " SZ("bytes") " AND " SZN("free_bytes") " AND " SZN("total_bytes")},
    {"memcpy", TS("start") " AND " TS("end") " AND " SZ("bytes") " AND " ADN("src") " AND " ADN("dst")},
    {"memset", TS("start") " AND " TS("end") " AND " SZ("bytes") " AND " ADN("dst")},
    {"kernel", TS("start") " AND " TS("end")},
    {"buffer_use", TSN("ts") " AND " AD("address")},
    {"nvtx_range", TS("start") " AND " TSN("end")},
    {"api_call", TS("start") " AND " TSN("end") " AND " SZN("bytes")},
    {"sync_event", TS("start") " AND " TS("end")},
    {"pool_event", TS("ts") " AND " SZN("size") " AND " SZN("used") " AND " SZN("threshold")},
    {"device", SZN("total_bytes")},
};

/* The guard's condition on the rows of zTable that a real trace can hold, or NULL when it has none. */
const char *vt__trace_guard_where(const char *zTable)
{
    for (size_t i = 0; i < sizeof aGuard / sizeof aGuard[0]; i++)
        if (!strcmp(aGuard[i].zTable, zTable)) return aGuard[i].zWhere;
    return NULL;
}

/* Create the temporary view that hides zTable's impossible rows (no scan). Returns an SQLite code. */
int vt__trace_guard_view(sqlite3 *db, const char *zTable)
{
    char zSql[1024];
    const char *zWhere = vt__trace_guard_where(zTable);
    if (!zWhere) return SQLITE_OK;
    snprintf(zSql, sizeof zSql, "CREATE TEMP VIEW IF NOT EXISTS \"%s\" AS SELECT * FROM main.\"%s\" WHERE %s", zTable,
             zTable, zWhere);
    return sqlite3_exec(db, zSql, NULL, NULL, NULL);
}

/* Add to *pn the impossible rows of one guarded table (one scan of it). Returns an SQLite code. */
int vt__trace_guard_count(sqlite3 *db, const char *zTable, int64_t *pn)
{
    char zSql[1024];
    sqlite3_stmt *pStmt = NULL;
    const char *zWhere = vt__trace_guard_where(zTable);
    int rc;
    if (!zWhere) return SQLITE_OK;
    snprintf(zSql, sizeof zSql, "SELECT count(*) FROM main.\"%s\" WHERE NOT coalesce(%s, 0)", zTable, zWhere);
    rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        *pn += sqlite3_column_int64(pStmt, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(pStmt);
    return rc;
}

int vt__trace_guard(sqlite3 *db, int64_t *pnHidden)
{
    int rc = SQLITE_OK;
    *pnHidden = 0;
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof aGuard / sizeof aGuard[0]; i++) {
        int64_t n = 0;
        rc = vt__trace_guard_count(db, aGuard[i].zTable, &n);
        *pnHidden += n;
        /* a table without impossible rows is read as it is: its indexes and count(*) serve directly */
        if (rc == SQLITE_OK && n > 0) rc = vt__trace_guard_view(db, aGuard[i].zTable);
    }
    return rc;
}
