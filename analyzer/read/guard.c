/* The guard: what a trace can legally hold (schema.h VT_DOMAIN_LIST) as SQL, the views hiding the rest, and the small timed tables' bounds read with the count. */
#include "read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowcheck.h"
#include "util/sqlnames.h"
#include "vramtrace/schema.h"

/* Every table VT_DOMAIN_LIST names, once, in its order. */
const char *const vt__guard_tables[] = {"memory_event", "tensor_event",   "oom_event",  "memcpy",   "memset",
                                        "kernel",       "kernel_summary", "buffer_use", "nvtx_range", "api_call",
                                        "sync_event",   "pool_event",     "device",     NULL};

int vt__columns_read(sqlite3 *db, const char *zTable, struct vt_columns *c)
{
    sqlite3_stmt *p = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1, 'main')", -1, &p, NULL);
    memset(c, 0, sizeof *c);
    if (rc == SQLITE_OK) sqlite3_bind_text(p, 1, zTable, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = vt__sql_names(p, &c->az, &c->n);
    sqlite3_finalize(p);
    if (rc != SQLITE_OK) vt__columns_free(c);
    return rc;
}

int vt__columns_has(const struct vt_columns *c, const char *zCol)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->az[i], zCol)) return 1;
    return 0;
}

void vt__columns_free(struct vt_columns *c)
{
    for (int i = 0; i < c->n; i++) free(c->az[i]);
    free(c->az);
    memset(c, 0, sizeof *c);
}

/*
 * The SQL condition of one column's domain into pOut. A time read through a generated column
 * (schema 2+: the table stores t, and dur for an end) is judged with its stored parts, so that
 * a stored value the generated column reads as NULL (text, beyond +-2^62) is impossible while
 * a NULL part is an unknown time.
 */
static void domain_sql(sqlite3_str *pOut, const char *zCol, int dom, int bStoredT, int bStoredDur)
{
    static const char zLim[] = "4611686018427387903";
    switch (dom) {
    case VT_DOM_TIME:
        if (bStoredT && !strcmp(zCol, "end"))
            sqlite3_str_appendf(pOut, "(t IS NULL OR %s OR \"end\" BETWEEN 0 AND %s)",
                                bStoredDur ? "dur IS NULL" : "0", zLim);
        else if (bStoredT)
            sqlite3_str_appendf(pOut, "(t IS NULL OR \"%w\" BETWEEN 0 AND %s)", zCol, zLim);
        else
            sqlite3_str_appendf(pOut, "(\"%w\" IS NULL OR \"%w\" BETWEEN 0 AND %s)", zCol, zCol, zLim);
        return;
    case VT_DOM_SIZE: sqlite3_str_appendf(pOut, "(\"%w\" BETWEEN 0 AND %lld)", zCol, VT__SIZE_MAX); return;
    case VT_DOM_SIZEN:
        sqlite3_str_appendf(pOut, "(\"%w\" IS NULL OR \"%w\" BETWEEN 0 AND %lld)", zCol, zCol, VT__SIZE_MAX);
        return;
    case VT_DOM_ADDR: sqlite3_str_appendf(pOut, "(typeof(\"%w\") = 'integer')", zCol); return;
    default: sqlite3_str_appendf(pOut, "(\"%w\" IS NULL OR typeof(\"%w\") = 'integer')", zCol, zCol); return;
    }
}

int vt__guard_where(sqlite3 *db, const char *zTable, char **pz)
{
    struct vt_columns cols;
    sqlite3_str *pOut = sqlite3_str_new(db);
    int nTerm = 0, bT, bDur, rc = vt__columns_read(db, zTable, &cols); /* one question for every column */
    *pz = NULL;
    bT = vt__columns_has(&cols, "t");
    bDur = vt__columns_has(&cols, "dur");
#define VT__DOM_TERM(zTab, zCol, DOM)                                                  \
    if (rc == SQLITE_OK && !strcmp(zTab, zTable) && vt__columns_has(&cols, zCol)) {    \
        if (nTerm++) sqlite3_str_appendall(pOut, " AND ");                             \
        domain_sql(pOut, zCol, VT_DOM_##DOM, bT, bDur);                                \
    }
    VT_DOMAIN_LIST(VT__DOM_TERM)
#undef VT__DOM_TERM
    vt__columns_free(&cols);
    if (rc == SQLITE_OK && nTerm) {
        *pz = sqlite3_str_finish(pOut);
        return *pz ? SQLITE_OK : SQLITE_NOMEM;
    }
    sqlite3_free(sqlite3_str_finish(pOut));
    return rc == SQLITE_OK ? SQLITE_OK : SQLITE_ERROR;
}

int vt__guard_table(sqlite3 *db, const char *zTable, int bCount, int64_t *pnHidden, char **pzWhere)
{
    char *zWhere = NULL, *zSql = NULL;
    sqlite3_stmt *pStmt = NULL;
    int rc = vt__guard_where(db, zTable, &zWhere);
    if (rc == SQLITE_OK && zWhere && bCount) {
        zSql = sqlite3_mprintf("SELECT count(*) FROM main.\"%w\" WHERE NOT coalesce(%s, 0)", zTable, zWhere);
        rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) : SQLITE_NOMEM;
        if (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
            *pnHidden += sqlite3_column_int64(pStmt, 0);
            rc = SQLITE_OK;
        }
        sqlite3_finalize(pStmt);
        sqlite3_free(zSql);
    }
    if (rc == SQLITE_OK && zWhere && *pnHidden > 0) {
        zSql = sqlite3_mprintf("CREATE TEMP VIEW IF NOT EXISTS \"%w\" AS SELECT * FROM main.\"%w\" WHERE %s", zTable,
                               zTable, zWhere);
        rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(zSql);
    }
    if (rc == SQLITE_OK && pzWhere) *pzWhere = zWhere;
    else sqlite3_free(zWhere);
    return rc;
}

/* ---- the small timed tables: the guard's count and the time bounds in one read ---- */

/*
 * The trace's time range takes every timed table's rows with known times through the guard's
 * views (meta.c). The large tables' come from the scan's pass; the small ones' (VT_SMALL_N of
 * them, f->aSmall in this order) from one query each, which also counts the rows the guard
 * hides: the bounds are those of the rows it lets through, exactly what a query of the table
 * through its guard view, after the count, would give (a view of main reads main's tables, so
 * no guard view of another table changes what it shows).
 */
static const struct {
    const char *zTable, *zStart, *zEnd; /* the table, and its start and end as the bounds take them */
} aSmall[VT_SMALL_N] = {
    {"oom_event", "ts", "ts"},
    {"nvtx_range", "start", "CASE WHEN \"end\" >= start THEN \"end\" ELSE start END"},
    {"api_call", "start", "CASE WHEN \"end\" >= start THEN \"end\" ELSE start END"},
    {"sync_event", "start", "CASE WHEN \"end\" >= start THEN \"end\" ELSE start END"},
    {"pool_event", "ts", "ts"},
};

void vt__guard_bounds_reset(struct vt_tracefile *f)
{
    for (int i = 0; i < VT_SMALL_N; i++) {
        f->aSmall[i].t0 = f->aSmall[i].t1 = -1;
        f->aSmall[i].nNoTime = 0;
    }
}

/*
 * Table i of aSmall read once from zFrom (its rows: main's table, or a subquery of the same
 * columns): its impossible rows (the guard's condition zWhere, NULL: none) added to *pnHidden,
 * and min(start), max(end, or start where the end is before it) and the rows with no time after
 * 0 of the others into f->aSmall[i]. The subquery's LIMIT keeps it a co-routine, so that the
 * condition is computed once a row. An SQLite code.
 */
static int small_read(struct vt_tracefile *f, int i, const char *zFrom, const char *zWhere, int64_t *pnHidden)
{
    sqlite3_stmt *p = NULL;
    char *zSql = sqlite3_mprintf("SELECT sum(NOT ok), min(CASE WHEN ok THEN s END), max(CASE WHEN ok THEN e END),"
                                 " sum(CASE WHEN ok THEN NOT coalesce(s > 0, 0) ELSE 0 END)"
                                 " FROM (SELECT coalesce(%s, 0) AS ok, %s AS s, %s AS e FROM %s LIMIT -1)",
                                 zWhere ? zWhere : "1", aSmall[i].zStart, aSmall[i].zEnd, zFrom);
    int rc = zSql ? sqlite3_prepare_v2(f->db, zSql, -1, &p, NULL) : SQLITE_NOMEM;
    if (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        /* a real number the guard let through (in range) counts as its integer part */
        *pnHidden += sqlite3_column_int64(p, 0);
        f->aSmall[i].t0 = sqlite3_column_type(p, 1) != SQLITE_NULL ? sqlite3_column_int64(p, 1) : -1;
        f->aSmall[i].t1 = sqlite3_column_type(p, 2) != SQLITE_NULL ? sqlite3_column_int64(p, 2) : -1;
        f->aSmall[i].nNoTime = sqlite3_column_int64(p, 3);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(p);
    sqlite3_free(zSql);
    return rc;
}

int vt__guard_bounds(struct vt_tracefile *f, const char *zTable, int64_t *pnHidden)
{
    char *zWhere = NULL, *zFrom = NULL;
    int i = 0, rc;
    while (i < VT_SMALL_N && strcmp(aSmall[i].zTable, zTable) != 0) i++;
    if (i == VT_SMALL_N) return vt__guard_table(f->db, zTable, 1, pnHidden, NULL); /* not timed: the count alone */
    rc = vt__guard_where(f->db, zTable, &zWhere);
    if (rc == SQLITE_OK) {
        zFrom = sqlite3_mprintf("main.\"%w\"", zTable);
        if (!zFrom) rc = SQLITE_NOMEM;
    }
    if (rc == SQLITE_OK) rc = small_read(f, i, zFrom, zWhere, pnHidden);
    sqlite3_free(zWhere);
    sqlite3_free(zFrom);
    /* the guard's view, where the count found impossible rows */
    if (rc == SQLITE_OK) rc = vt__guard_table(f->db, zTable, 0, pnHidden, NULL);
    return rc;
}
