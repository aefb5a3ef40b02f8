/* The compatibility views stored in every trace (schema 4): Nsight-named views and the call-site view, from vramtrace/nsight.h. */
#include "vramtrace/views.h"

#include <string.h>

#include "vramtrace/nsight.h"

char *vt__views_expand(const char *zTemplate, const char *zSchema, const char *zTrace, const char *zPath,
                       int bKernelNames)
{
    sqlite3_str *pStr = sqlite3_str_new(NULL);
    for (const char *z = zTemplate; *z; z++) {
        if (z[0] == '$' && z[1] == 'K') {
            if (!bKernelNames)
                sqlite3_str_appendall(pStr, "(SELECT NULL AS name_id, NULL AS demangled_id, NULL AS short_id LIMIT 0)");
            else if (zSchema[0]) sqlite3_str_appendf(pStr, "%s.kernel_name", zSchema);
            else sqlite3_str_appendall(pStr, "kernel_name");
            z++;
        } else if (z[0] == '$' && z[1] == 'S') {
            /* no schema: the view lives in the trace itself and names its tables bare */
            if (zSchema[0]) sqlite3_str_appendall(pStr, zSchema);
            else if (z[2] == '.') z++;
            z++;
        } else if (z[0] == '$' && z[1] == 'T') {
            sqlite3_str_appendall(pStr, zTrace);
            z++;
        } else if (z[0] == '$' && z[1] == 'F') {
            if (zPath) sqlite3_str_appendf(pStr, "%Q", zPath);
            else sqlite3_str_appendall(pStr, "NULL");
            z++;
        } else {
            sqlite3_str_appendchar(pStr, 1, *z);
        }
    }
    return sqlite3_str_finish(pStr);
}

/* 1 when schema zSchema of db has the object zName of type zType ("table", "view"), 0 when not, -1 on error. */
static int has_object(sqlite3 *db, const char *zSchema, const char *zType, const char *zName)
{
    sqlite3_stmt *p = NULL;
    char *zSql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".sqlite_schema WHERE type = %Q AND name = %Q", zSchema,
                                 zType, zName);
    int n = -1;
    if (zSql && sqlite3_prepare_v2(db, zSql, -1, &p, NULL) == SQLITE_OK && sqlite3_step(p) == SQLITE_ROW)
        n = sqlite3_column_int(p, 0) > 0;
    sqlite3_finalize(p);
    sqlite3_free(zSql);
    return n;
}

int vt__views_has_kernel_names(sqlite3 *db, const char *zSchema)
{
    return has_object(db, zSchema, "table", "kernel_name");
}

/* CREATE VIEW zName AS the template (and zExtra, UNION ALL, when not NULL) for the trace itself,
 * whose kernel_name table exists when bKernelNames. */
static int create_one(sqlite3 *db, const char *zName, const char *zTemplate, const char *zExtra, int bKernelNames,
                      char **pzErr)
{
    char *zSel = vt__views_expand(zTemplate, "", "0", NULL, bKernelNames);
    char *zMore = zExtra ? vt__views_expand(zExtra, "", "0", NULL, bKernelNames) : NULL;
    char *zSql = zSel && (zMore || !zExtra)
                     ? sqlite3_mprintf("CREATE VIEW IF NOT EXISTS \"%w\" AS %s%s%s", zName, zSel,
                                       zMore ? " UNION ALL " : "", zMore ? zMore : "")
                     : NULL;
    int rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, pzErr) : SQLITE_NOMEM;
    sqlite3_free(zSel);
    sqlite3_free(zMore);
    sqlite3_free(zSql);
    return rc;
}

int vt__views_create(sqlite3 *db, char **pzErr)
{
    int bKn = vt__views_has_kernel_names(db, "main");
    int rc = bKn < 0 ? SQLITE_ERROR : SQLITE_OK;
#define VT__TRACE_VIEW(zName, zTemplate) \
    if (rc == SQLITE_OK)                 \
        rc = create_one(db, zName, zTemplate, strcmp(zName, "StringIds") ? NULL : VT_NSIGHT_API_STRINGS, bKn, pzErr);
#define VT__STATIC_VIEW(zName, zTemplate) \
    if (rc == SQLITE_OK) rc = create_one(db, zName, zTemplate, NULL, bKn, pzErr);
    VT_NSIGHT_TRACE_VIEWS(VT__TRACE_VIEW)
    VT_NSIGHT_STATIC_VIEWS(VT__STATIC_VIEW)
    if (rc == SQLITE_OK) rc = create_one(db, "site", VT_SITE_SELECT, NULL, bKn, pzErr);
#undef VT__TRACE_VIEW
#undef VT__STATIC_VIEW
    return rc;
}

int vt__views_present(sqlite3 *db, const char *zSchema)
{
    return has_object(db, zSchema, "view", "StringIds");
}

int vt__views_kernel_stale(sqlite3 *db)
{
    sqlite3_stmt *p = NULL;
    int bKn = vt__views_has_kernel_names(db, "main"), n = -1;
    if (bKn != 1) return bKn;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM main.sqlite_schema WHERE type = 'view' AND "
                               "name = 'CUPTI_ACTIVITY_KIND_KERNEL' AND sql NOT LIKE '%kernel_name%'",
                           -1, &p, NULL) == SQLITE_OK &&
        sqlite3_step(p) == SQLITE_ROW)
        n = sqlite3_column_int(p, 0) > 0;
    sqlite3_finalize(p);
    return n;
}

int vt__views_kernel_refresh(sqlite3 *db, char **pzErr)
{
    int rc = sqlite3_exec(db, "DROP VIEW IF EXISTS CUPTI_ACTIVITY_KIND_KERNEL", NULL, NULL, pzErr);
    return rc == SQLITE_OK ? vt__views_create(db, pzErr) : rc; /* the others exist and are kept */
}
