/* The guard: what a trace can legally hold (schema.h VT_DOMAIN_LIST) as SQL, and the views hiding the rest. */
#include "read.h"

#include <stdlib.h>
#include <string.h>

#include "rowcheck.h"
#include "vramtrace/schema.h"

/* Every table VT_DOMAIN_LIST names, once, in its order. */
const char *const vt__guard_tables[] = {"memory_event", "tensor_event",   "oom_event",  "memcpy",   "memset",
                                        "kernel",       "kernel_summary", "buffer_use", "nvtx_range", "api_call",
                                        "sync_event",   "pool_event",     "device",     NULL};

int vt__read_names(sqlite3_stmt *p, char ***paz, int *pn)
{
    int rc;
    while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
        const char *zName = (const char *)sqlite3_column_text(p, 0);
        char **az = realloc(*paz, sizeof *az * (size_t)(*pn + 1));
        rc = az && zName && (az[*pn] = strdup(zName)) != NULL ? SQLITE_OK : SQLITE_NOMEM;
        if (az) *paz = az;
        if (rc != SQLITE_OK) return rc;
        (*pn)++;
    }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int vt__columns_read(sqlite3 *db, const char *zTable, struct vt_columns *c)
{
    sqlite3_stmt *p = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1, 'main')", -1, &p, NULL);
    memset(c, 0, sizeof *c);
    if (rc == SQLITE_OK) sqlite3_bind_text(p, 1, zTable, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = vt__read_names(p, &c->az, &c->n);
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
