/* Read-only SQL connections over one or several traces, with Nsight-compatible and union views. */
#include "sql.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "import.h"
#include "read/read.h"
#include "vramtrace/nsight.h"
#include "vramtrace/views.h"

/* Schema name of trace i: "main" when there is one trace, else "t<i>". */
static void schema_name(int nTrace, int i, char *zOut, size_t nOut)
{
    if (nTrace == 1) snprintf(zOut, nOut, "main");
    else snprintf(zOut, nOut, "t%d", i);
}

/* Prepare "SELECT * FROM (zSel) LIMIT 0" on db: the statement whose columns are zSel's. */
static int columns_of(sqlite3 *db, const char *zSel, sqlite3_stmt **pp)
{
    char *zSql = sqlite3_mprintf("SELECT * FROM (%s\n) LIMIT 0", zSel);
    int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, pp, NULL) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    return rc;
}

int vt__sql_columns_union(sqlite3 *db, const char *zSel, char ***pazCol, int *pnCol, int *pnHas)
{
    sqlite3_stmt *p = NULL;
    int rc = columns_of(db, zSel, &p);
    *pnHas = rc == SQLITE_OK ? sqlite3_column_count(p) : 0;
    for (int i = 0; rc == SQLITE_OK && i < sqlite3_column_count(p); i++) {
        const char *zName = sqlite3_column_name(p, i);
        int j = 0;
        char **az;
        while (j < *pnCol && strcmp((*pazCol)[j], zName)) j++;
        if (j < *pnCol) continue; /* there already */
        if (!(az = sqlite3_realloc64(*pazCol, sizeof *az * (size_t)(*pnCol + 1))) ||
            !(az[*pnCol] = sqlite3_mprintf("%s", zName))) {
            if (az) *pazCol = az;
            rc = SQLITE_NOMEM;
            break;
        }
        *pazCol = az;
        (*pnCol)++;
    }
    sqlite3_finalize(p);
    return rc;
}

int vt__sql_columns_select(sqlite3 *db, const char *zSel, char **azCol, int nCol, char **pzOut)
{
    sqlite3_stmt *p = NULL;
    sqlite3_str *pStr = sqlite3_str_new(db);
    int rc = columns_of(db, zSel, &p);
    *pzOut = NULL;
    sqlite3_str_appendall(pStr, "SELECT ");
    for (int j = 0; rc == SQLITE_OK && j < nCol; j++) {
        int i = 0, n = sqlite3_column_count(p);
        while (i < n && strcmp(sqlite3_column_name(p, i), azCol[j])) i++;
        if (i < n) sqlite3_str_appendf(pStr, "%s\"%w\"", j ? ", " : "", azCol[j]);
        else sqlite3_str_appendf(pStr, "%sNULL AS \"%w\"", j ? ", " : "", azCol[j]); /* not in its version */
    }
    sqlite3_str_appendf(pStr, " FROM (%s\n)", zSel); /* a line comment ending zSel ends before the ')' */
    sqlite3_finalize(p);
    *pzOut = sqlite3_str_finish(pStr);
    if (rc == SQLITE_OK && !*pzOut) rc = SQLITE_NOMEM;
    if (rc != SQLITE_OK) sqlite3_free(*pzOut), *pzOut = NULL;
    return rc;
}

void vt__sql_columns_free(char **azCol, int nCol)
{
    for (int j = 0; j < nCol; j++) sqlite3_free(azCol[j]);
    sqlite3_free(azCol);
}

/*
 * Create one TEMP view: the UNION ALL of zTemplate expanded for every trace
 * (bPerTrace), or expanded once for the first trace. zExtra, if not NULL, is one
 * more SELECT template (first trace) appended to the union. Traces of different
 * schema versions, whose tables differ in columns, are lined up on every column
 * any of them has (NULL where one has not: vt__sql_columns_select).
 */
static int create_view(sqlite3 *db, const char *zName, const char *zTemplate, int bPerTrace,
                       const char *zExtra, int nTrace, char **azPath, char **pzErr)
{
    sqlite3_str *pStr = sqlite3_str_new(db);
    char zSchema[16], zIndex[16], *zSql, **azSel, **azCol = NULL;
    int i, rc = SQLITE_OK, n = bPerTrace ? nTrace : 1, bKn, nCol = 0, bAlike = 1;
    /* the same GPU seen by several processes is one row of TARGET_INFO_GPU */
    const char *zUnion = strcmp(zName, "TARGET_INFO_GPU") ? " UNION ALL " : " UNION ";

    azSel = sqlite3_malloc64(sizeof *azSel * (size_t)n);
    if (!azSel) rc = SQLITE_NOMEM;
    else memset(azSel, 0, sizeof *azSel * (size_t)n);
    for (i = 0; i < n && rc == SQLITE_OK; i++) {
        schema_name(nTrace, i, zSchema, sizeof zSchema);
        snprintf(zIndex, sizeof zIndex, "%d", i);
        bKn = strstr(zTemplate, "$K") ? vt__views_has_kernel_names(db, zSchema) : 0;
        azSel[i] = bKn < 0 ? NULL : vt__views_expand(zTemplate, zSchema, zIndex, azPath[i], bKn);
        if (bKn < 0) rc = SQLITE_ERROR;
        else if (!azSel[i]) rc = SQLITE_NOMEM;
    }
    for (i = 0; i < n && n > 1 && rc == SQLITE_OK; i++) { /* alike when each has the columns of the first */
        int nBefore = nCol, nHas;
        rc = vt__sql_columns_union(db, azSel[i], &azCol, &nCol, &nHas);
        if (i > 0 && (nCol != nBefore || nHas != nCol)) bAlike = 0;
    }
    for (i = 0; i < n && n > 1 && !bAlike && rc == SQLITE_OK; i++) { /* some version has columns others have not */
        char *zLined = NULL;
        rc = vt__sql_columns_select(db, azSel[i], azCol, nCol, &zLined);
        if (rc == SQLITE_OK) sqlite3_free(azSel[i]), azSel[i] = zLined;
    }
    sqlite3_str_appendf(pStr, "CREATE TEMP VIEW \"%w\" AS ", zName);
    for (i = 0; i < n && rc == SQLITE_OK; i++) sqlite3_str_appendf(pStr, "%s%s", i ? zUnion : "", azSel[i]);
    if (rc == SQLITE_OK && zExtra) {
        char *zSel;
        schema_name(nTrace, 0, zSchema, sizeof zSchema);
        zSel = vt__views_expand(zExtra, zSchema, "0", azPath[0], 0); /* names no kernel table */
        if (!zSel) rc = SQLITE_NOMEM;
        else sqlite3_str_appendf(pStr, " UNION ALL %s", zSel);
        sqlite3_free(zSel);
    }
    zSql = sqlite3_str_finish(pStr);
    if (rc == SQLITE_OK && !zSql) rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, zSql, NULL, NULL, pzErr);
    sqlite3_free(zSql);
    for (i = 0; azSel && i < n; i++) sqlite3_free(azSel[i]);
    sqlite3_free(azSel);
    vt__sql_columns_free(azCol, nCol);
    return rc;
}

/* 1 when every trace has table zTable, 0 when one lacks it, -1 on error. */
static int all_have(sqlite3 *db, int nTrace, const char *zTable)
{
    char zSchema[16], *zSql;
    sqlite3_stmt *p = NULL;
    int i, n = 1;
    for (i = 0; i < nTrace && n == 1; i++) {
        schema_name(nTrace, i, zSchema, sizeof zSchema);
        zSql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".sqlite_schema WHERE type = 'table'"
                               " AND name = %Q", zSchema, zTable);
        if (!zSql || sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK) n = -1;
        else if (sqlite3_step(p) != SQLITE_ROW) n = -1;
        else n = sqlite3_column_int(p, 0) > 0;
        sqlite3_finalize(p);
        p = NULL;
        sqlite3_free(zSql);
    }
    return n;
}

/*
 * The `site` view of `sql` and `export`: each stack described by the read layer's describer, as analyze
 * describes it (the view stored in a trace, for other tools, does it in SQL: docs/queries.md).
 */
#define VT_SITE_SELECT_ANALYZE "SELECT $T AS trace, s.id AS stack_id, vt_site('$S', s.id) AS site FROM $S.stack s"

int vt__sql_create_views(sqlite3 *db, int nTrace, char **azPath, char **pzErr)
{
    int rc = vt__site_function(db), bHave;
    *pzErr = NULL;
#define VT__PER_TRACE(zName, zTemplate)                                                    \
    if (rc == SQLITE_OK)                                                                   \
        rc = create_view(db, zName, strcmp(zName, "site") ? zTemplate : VT_SITE_SELECT_ANALYZE, 1, \
                         strcmp(zName, "StringIds") ? NULL : VT_NSIGHT_API_STRINGS, nTrace, \
                         azPath, pzErr);
#define VT__STATIC(zName, zTemplate) \
    if (rc == SQLITE_OK) rc = create_view(db, zName, zTemplate, 0, NULL, nTrace, azPath, pzErr);
    VT_NSIGHT_TRACE_VIEWS(VT__PER_TRACE)
    VT_UNION_TRACE_VIEWS(VT__PER_TRACE)
    VT_NSIGHT_STATIC_VIEWS(VT__STATIC)
#define VT__ANALYSIS(zName, zTable)                                                          \
    if (rc == SQLITE_OK) {                                                                 \
        bHave = all_have(db, nTrace, zTable);                                              \
        if (bHave < 0) rc = SQLITE_ERROR;                                                  \
        else if (bHave)                                                                    \
            rc = create_view(db, zName, "SELECT " VT_UNION_COLS ", x.* FROM $S." zTable " x", \
                             1, NULL, nTrace, azPath, pzErr);                              \
    }
    VT_UNION_ANALYSIS_VIEWS(VT__ANALYSIS)
#undef VT__PER_TRACE
#undef VT__STATIC
#undef VT__ANALYSIS
    return rc;
}

/* Pragmas that only read, even when given an argument (e.g. table_info(kernel)). */
static int pragma_reads(const char *zName)
{
    static const char *const azRead[] = {
        "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
        "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check",
        "database_list", "collation_list", "function_list", "module_list", "pragma_list",
        "compile_options"};
    size_t i;
    for (i = 0; i < sizeof azRead / sizeof azRead[0]; i++)
        if (sqlite3_stricmp(zName, azRead[i]) == 0) return 1;
    return 0;
}

/*
 * Authorizer installed once the views exist: reading, functions and
 * transactions are allowed; DDL, ATTACH, DETACH and setting pragmas are
 * refused. INSERT/UPDATE/DELETE checks pass here (SQLite also raises them
 * internally, e.g. for pragma table-valued functions): data changes are
 * stopped by the read-only open, PRAGMA query_only and the caller's
 * sqlite3_stmt_readonly check.
 */
static int authorize(void *pArg, int op, const char *z3, const char *z4, const char *zDb,
                     const char *zTrigger)
{
    (void)pArg;
    (void)zDb;
    (void)zTrigger;
    switch (op) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
        return SQLITE_OK;
    case SQLITE_PRAGMA:
        return (z4 == NULL || pragma_reads(z3)) ? SQLITE_OK : SQLITE_DENY;
    default:
        (void)z3;
        return SQLITE_DENY;
    }
}

/*
 * Open zPath read-only through the read layer's validation (vt__read_open without a scan:
 * `sql` shows the trace as it is stored), its connection into *pDb. A VT_EXIT code.
 */
static int open_checked(const char *zPath, sqlite3 **pDb)
{
    struct vt_tracefile f;
    int rc = vt__read_open(&f, zPath, VT_READ_NOSCAN, NULL);
    *pDb = NULL;
    if (rc == VT_EXIT_OK) {
        *pDb = f.db;
        f.db = NULL;
    }
    vt__read_close(&f);
    return rc;
}

/*
 * Take from db what a query over untrusted files has no use for: the
 * two-argument and pointer-returning forms of fts3_tokenizer() (it prints a
 * process address and registers one given as a blob), functions that are not
 * innocuous inside the files' own views and triggers (trusted_schema off), and
 * writes to SQLite's internal structures (defensive mode); bound every string
 * or blob to VT_SQL_MAX_LENGTH bytes, printf() and format() included (an error past
 * it, where SQLite's give NULL). Returns an SQLite code.
 */
static int sandbox(sqlite3 *db)
{
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, (int *)NULL);
    if (rc == SQLITE_OK) rc = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
    if (rc == SQLITE_OK) rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    if (rc == SQLITE_OK) sqlite3_limit(db, SQLITE_LIMIT_LENGTH, VT_SQL_MAX_LENGTH);
    if (rc == SQLITE_OK) rc = vt__sql_printf_register(db); /* past the bound: an error, not NULL */
    return rc;
}

int vt__sql_open(int nTrace, char **azPath, sqlite3 **pDb, int *pnFailed)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *pAttach = NULL;
    char *zErr = NULL;
    char **azOk = NULL;
    int rc = VT_EXIT_OK, i, nOk = 0;

    *pDb = NULL;
    *pnFailed = 0;
    if (nTrace < 1) {
        vt__errorf("sql: no trace given");
        return VT_EXIT_USAGE;
    }
    if (nTrace > 1) {
        /* Validate each file first, so a bad one gets its precise message; the others are
         * queried: one left is read as one trace given alone, several are attached */
        int rcFirst = VT_EXIT_OK;
        if (!(azOk = malloc(sizeof *azOk * (size_t)nTrace))) {
            vt__errorf("sql: out of memory");
            return VT_EXIT_INTERNAL;
        }
        for (i = 0; i < nTrace; i++) {
            sqlite3 *dbCheck = NULL;
            rc = open_checked(azPath[i], &dbCheck);
            sqlite3_close(dbCheck);
            if (rc == VT_EXIT_OK) azOk[nOk++] = azPath[i];
            else if ((*pnFailed)++ == 0) rcFirst = rc;
        }
        rc = VT_EXIT_OK;
        if (nOk == 0) {
            rc = rcFirst;
            goto done;
        }
        nTrace = nOk;
        azPath = azOk;
    }
    if (nTrace == 1) {
        rc = open_checked(azPath[0], &db); /* its tables directly, in the views' schema "main" */
        if (rc != VT_EXIT_OK) goto done;
    } else {
        if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
            vt__errorf("sql: cannot open an in-memory database: %s",
                       db ? sqlite3_errmsg(db) : "out of memory");
            rc = VT_EXIT_INTERNAL;
            goto done;
        }
        if (nTrace > sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1)) {
            vt__errorf("sql: at most %d traces can be queried together (SQLite's attach limit); "
                       "got %d",
                       sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1), nTrace);
            rc = VT_EXIT_USAGE;
            goto done;
        }
        if (sqlite3_prepare_v2(db, "ATTACH ?1 AS ?2", -1, &pAttach, NULL) != SQLITE_OK) {
            vt__errorf("sql: %s", sqlite3_errmsg(db));
            rc = VT_EXIT_INTERNAL;
            goto done;
        }
        for (i = 0; i < nTrace; i++) {
            char zName[16];
            snprintf(zName, sizeof zName, "t%d", i);
            /* another tool's file: the temporary trace its check just made */
            sqlite3_bind_text(pAttach, 1, vt__import_temp_path(azPath[i]), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(pAttach, 2, zName, -1, SQLITE_TRANSIENT);
            if (sqlite3_step(pAttach) != SQLITE_DONE) {
                vt__errorf("%s: cannot attach: %s", azPath[i], sqlite3_errmsg(db));
                rc = VT_EXIT_NOFILE;
                goto done;
            }
            sqlite3_reset(pAttach);
        }
    }
    sqlite3_busy_timeout(db, 2000);
    if (vt__sql_create_views(db, nTrace, azPath, &zErr) != SQLITE_OK) {
        vt__errorf("sql: cannot create the views: %s", zErr ? zErr : sqlite3_errmsg(db));
        rc = VT_EXIT_INTERNAL;
        goto done;
    }
    if (sqlite3_exec(db, "PRAGMA query_only = 1", NULL, NULL, &zErr) != SQLITE_OK) {
        vt__errorf("sql: %s", zErr ? zErr : sqlite3_errmsg(db));
        rc = VT_EXIT_INTERNAL;
        goto done;
    }
    if (sandbox(db) != SQLITE_OK) {
        vt__errorf("sql: cannot restrict the connection: %s", sqlite3_errmsg(db));
        rc = VT_EXIT_INTERNAL;
        goto done;
    }
    sqlite3_set_authorizer(db, authorize, NULL);

done:
    sqlite3_finalize(pAttach);
    sqlite3_free(zErr);
    free(azOk);
    if (rc == VT_EXIT_OK) *pDb = db;
    else sqlite3_close(db);
    return rc;
}
