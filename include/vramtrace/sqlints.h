/* One row of integers from a query: the small reads both halves make of a trace's database. */
#ifndef VRAMTRACE_SQLINTS_H
#define VRAMTRACE_SQLINTS_H

#include <stdint.h>

#include <sqlite3.h>

/*
 * The first n columns of the first row zSql answers on db into a[0..n); a NULL column, or no row
 * at all, leaves dflt there. SQLite code: SQLITE_OK also when there is no row, SQLITE_NOMEM for a
 * NULL zSql (a failed sqlite3_mprintf).
 */
static inline int vt__sql_ints(sqlite3 *db, const char *zSql, int64_t *a, int n, int64_t dflt)
{
    sqlite3_stmt *p = NULL;
    int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &p, NULL) : SQLITE_NOMEM;
    for (int i = 0; i < n; i++) a[i] = dflt;
    if (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        for (int i = 0; i < n; i++)
            if (sqlite3_column_type(p, i) != SQLITE_NULL) a[i] = sqlite3_column_int64(p, i);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_OK;
    }
    sqlite3_finalize(p);
    return rc;
}

#endif
