/* Internal: read-only multi-trace SQL connections and result printing. */
#ifndef VT_ANALYZER_SQL_H
#define VT_ANALYZER_SQL_H

#include <sqlite3.h>
#include <stdio.h>

/* Longest string or blob a `vramtrace sql` query may read or make (SQLITE_LIMIT_LENGTH). */
#define VT_SQL_MAX_LENGTH (64 << 20)

/*
 * Replace SQLite's printf() and format() on db by ones that format exactly as they do but make a
 * result longer than db's length bound an error (SQLITE_TOOBIG: exit 10) instead of NULL
 * (sql_printf.c). Returns an SQLite code.
 */
int vt__sql_printf_register(sqlite3 *db);

/* Output formats of `vramtrace sql`. */
enum vt_sql_format { VT_SQL_TABLE = 0, VT_SQL_CSV = 1, VT_SQL_JSON = 2 };

/*
 * Open nTrace traces for read-only querying. One trace is opened as `main`;
 * several are attached to an in-memory database as t0, t1, ... Each file is
 * first validated by the read layer (vt__read_open). The Nsight Systems views and the
 * all_* union views (include/vramtrace/nsight.h) are created as TEMP views,
 * then the connection is locked down: PRAGMA query_only; fts3_tokenizer()'s
 * pointer forms, untrusted schema functions (trusted_schema off) and writes to
 * internal structures (defensive mode) disabled; values bounded to
 * VT_SQL_MAX_LENGTH bytes; an authorizer that refuses ATTACH, DETACH and
 * pragmas that change settings.
 * Returns VT_EXIT_OK with *pDb open, or an enum vt_exit code after printing one
 * "vramtrace: ..." line. With several traces, those that fail validation are named
 * (one line each) and counted in *pnFailed; the others are attached in their order
 * as t0, t1, ... (VT_EXIT_OK); when none is left, the first one's code.
 */
int vt__sql_open(int nTrace, char **azPath, sqlite3 **pDb, int *pnFailed);

/*
 * Create the TEMP views over traces read from schemas "main" (nTrace == 1) or
 * "t0".."tN-1". azPath gives the file names shown by the `process` view.
 * Returns an SQLite code; on error *pzErr gets an sqlite3_malloc'd message.
 */
int vt__sql_create_views(sqlite3 *db, int nTrace, char **azPath, char **pzErr);

/*
 * The result columns of the SELECT zSel on db appended to *pazCol (*pnCol of them) where not there yet, in their
 * order: the union of the columns of SELECTs of traces of different schema versions (a newer one's table has more).
 * The list and its names are sqlite3_malloc'd (vt__sql_columns_free); *pnHas gets how many columns zSel has.
 * Returns an SQLite code.
 */
int vt__sql_columns_union(sqlite3 *db, const char *zSel, char ***pazCol, int *pnCol, int *pnHas);
/*
 * "SELECT c1, c2, ... FROM (zSel)" over the columns azCol[0 .. nCol): each one zSel has, NULL AS it where zSel has
 * not that column (its trace's version has not), so that the SELECTs of traces of different versions line up under
 * one header or in one UNION ALL. Into *pzOut (sqlite3_malloc'd). Returns an SQLite code.
 */
int vt__sql_columns_select(sqlite3 *db, const char *zSel, char **azCol, int nCol, char **pzOut);
void vt__sql_columns_free(char **azCol, int nCol);

/* Printing options for vt__sql_print. */
struct vt_sql_print {
    int format;     /* enum vt_sql_format */
    int maxWidth;   /* table: widest cell shown, in characters (0 = no limit) */
    int bHeader;    /* table and csv: print the column names */
    /* per-trace mode (several traces, one query each): a first column `trace` holding zTrace, and
     * for JSON the rows joined into one array the caller opens and closes (*pnJsonRows counts the
     * rows printed so far); NULL for the usual output */
    const char *zTrace;
    long long *pnJsonRows;
};

/*
 * Step pStmt to completion and print its rows to f in the given format. Table
 * output measures column widths over the first rows, then streams; csv and json
 * stream; a statement without result columns is run and prints nothing. Returns
 * SQLITE_OK (SQLITE_DONE reached), or the SQLite error code of
 * the failing step, or SQLITE_IOERR when writing f failed. *pnRow receives the
 * number of rows printed.
 */
int vt__sql_print(sqlite3_stmt *pStmt, FILE *f, const struct vt_sql_print *opt, long long *pnRow);

#endif
