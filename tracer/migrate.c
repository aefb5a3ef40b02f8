/* Upgrading traces of older schema versions: one step per version, from each to the next. */
#include "vramtrace/migrate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace/compact.h"
#include "vramtrace/schema.h"
#include "vramtrace/sqlints.h"
#include "vramtrace/views.h"

/* 3 -> 4: the views every trace carries (also given to versions 1 and 2); a stale kernel view replaced. */
static int step_views(sqlite3 *db, char **pzErr)
{
    int bPresent = vt__views_present(db, "main");
    if (bPresent < 0) return SQLITE_ERROR;
    if (!bPresent) return vt__views_create(db, pzErr);
    return vt__views_kernel_stale(db) == 1 ? vt__views_kernel_refresh(db, pzErr) : SQLITE_OK;
}

/* The trace's time base (meta time_base_ns), 0 when absent. SQLite code. */
static int time_base(sqlite3 *db, int64_t *pBase)
{
    char z[32], *zEnd = NULL;
    int rc = vt__meta_get(db, "time_base_ns", z, sizeof z);
    *pBase = 0;
    if (rc < 0) return SQLITE_ERROR;
    if (rc == 1) {
        errno = 0;
        *pBase = strtoll(z, &zEnd, 10);
        if (errno || *zEnd) return SQLITE_CORRUPT;
    }
    return SQLITE_OK;
}

/*
 * Compacted table iTab of version 4 (a plain table) stored as its parts and read through a view
 * of its name: the table is renamed aside (views naming it keep naming it: legacy rename), its
 * rows copied in id order (ids kept), then dropped with its indexes.
 */
static int compact_table(sqlite3 *db, int iTab, int64_t base, char **pzErr)
{
    const struct vt_compact_spec *p = &vt__aCompact[iTab];
    char *zSql;
    int rc;
    zSql = sqlite3_mprintf("PRAGMA legacy_alter_table = ON; ALTER TABLE \"%w\" RENAME TO \"vt_v4_%w\";"
                           " PRAGMA legacy_alter_table = OFF; %s",
                           p->zName, p->zName, p->zDdl);
    rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, pzErr) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if (rc == SQLITE_OK) rc = vt__compact_create_one(db, iTab, base, 5, pzErr);
    if (rc == SQLITE_OK) {
        zSql = sqlite3_mprintf("SELECT id, t, dur, %s FROM \"vt_v4_%w\" ORDER BY id", p->zCols, p->zName);
        rc = zSql ? vt__compact_insert_select(db, iTab, zSql, 1, pzErr) : SQLITE_NOMEM;
        sqlite3_free(zSql);
    }
    if (rc == SQLITE_OK) {
        zSql = sqlite3_mprintf("DROP TABLE \"vt_v4_%w\"", p->zName);
        rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, pzErr) : SQLITE_NOMEM;
        sqlite3_free(zSql);
    }
    return rc;
}

/* 4 -> 5: compact rows (schema.h, "Compact rows"). */
static int step_compact(sqlite3 *db, char **pzErr)
{
    int64_t base = 0;
    int rc = time_base(db, &base);
    for (int i = 0; rc == SQLITE_OK && i < VT_CT__COUNT; i++) {
        int bTable = vt__schema_is_table(db, vt__aCompact[i].zName);
        if (bTable < 0) rc = SQLITE_ERROR;
        else if (bTable) rc = compact_table(db, i, base, pzErr);
    }
    return rc == SQLITE_OK ? step_views(db, pzErr) : rc; /* a kernel view older than kernel_name replaced */
}

/* 4 -> 5: kernel_summary (always-on mode's kernels), empty in an upgraded trace. */
static int step_kernel_summary(sqlite3 *db, char **pzErr)
{
    int64_t base = 0;
    char *zDdl = NULL;
    int rc = time_base(db, &base);
    if (rc == SQLITE_OK && vt__schema_has_table(db, "kernel_summary") == 0) {
        zDdl = vt__schema_sql_at(VT_KERNEL_SUMMARY_DDL, base);
        rc = zDdl ? sqlite3_exec(db, zDdl, NULL, NULL, pzErr) : SQLITE_NOMEM;
    }
    sqlite3_free(zDdl);
    return rc;
}

/*
 * 4 -> 5. Every change of version 5 brings a version-4 trace to its layout here, one function
 * each (docs/schema.md, "Adding to version 5"); a column added to a compacted table's lists in
 * schema.h needs nothing here (step_compact builds the tables from the lists).
 */
static int step_v5(sqlite3 *db, char **pzErr)
{
    int rc = step_compact(db, pzErr);
    if (rc == SQLITE_OK) rc = step_kernel_summary(db, pzErr);
    return rc;
}

/*
 * 5 -> 6: folded calls (schema.h, VT_CALL_FOLD): the columns added, the api_call view made the union
 * of its rows and the folded calls (memcpy's and memset's triggers keep a folded call when their
 * rows change, memory_event gains its own), then the stored calls folded where their activity
 * row holds their values; the view shows the same rows, ids and values.
 */
static int step_fold(sqlite3 *db, char **pzErr)
{
    static const int aTab[] = {VT_CT_api_call, VT_CT_memcpy, VT_CT_memset};
    int64_t base = 0;
    int rc = time_base(db, &base);
    if (rc == SQLITE_OK) rc = vt__fold_columns_add(db, pzErr);
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof aTab / sizeof aTab[0]; i++) {
        char *zSql = sqlite3_mprintf("DROP VIEW \"%w\"", vt__aCompact[aTab[i]].zName); /* its triggers with it */
        rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, pzErr) : SQLITE_NOMEM;
        sqlite3_free(zSql);
        if (rc == SQLITE_OK) rc = vt__compact_create_one(db, aTab[i], base, 6, pzErr);
    }
    if (rc == SQLITE_OK) rc = vt__fold_create(db, pzErr);
    if (rc == SQLITE_OK) rc = vt__fold_stored(db, pzErr);
    if (rc == SQLITE_OK) { /* the ids taken, for inserts through the view (compact.h, VT_FOLD_NEXT_KEY) */
        int64_t next = 1;
        rc = vt__sql_ints(db, "SELECT coalesce(max(id), 0) + 1 FROM api_call", &next, 1, 1);
        if (rc == SQLITE_OK) rc = vt__meta_set_i64(db, VT_FOLD_NEXT_KEY, next);
    }
    return rc;
}

/*
 * The steps: aStep[i] brings version aStep[i].from to from + 1. A new schema version adds its
 * step here (and its DDL to schema.h for new traces).
 */
static const struct step {
    int from;
    const char *zWhat; /* what it did, for people */
    int (*xStep)(sqlite3 *db, char **pzErr);
} aStep[] = {
    {3, "views added", step_views},
    {4, "rows compacted", step_v5},
    {5, "calls folded", step_fold},
};

int vt__migrate(sqlite3 *db, int version, int *pNew, char *zDone, size_t nDone, char **pzErr)
{
    char zNum[16], zPragma[48];
    int rc = SQLITE_OK, v = version;
    size_t n = 0;
    zDone[0] = '\0';
    *pNew = version;
    if (version < aStep[0].from) { /* versions 1 and 2: the views alone; their tables differ */
        int bPresent = vt__views_present(db, "main");
        rc = step_views(db, pzErr);
        if (rc == SQLITE_OK && bPresent == 0) snprintf(zDone, nDone, "views added");
        return rc;
    }
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof aStep / sizeof aStep[0]; i++) {
        if (aStep[i].from != v) continue;
        rc = aStep[i].xStep(db, pzErr);
        if (rc == SQLITE_OK) {
            n += (size_t)snprintf(zDone + n, n < nDone ? nDone - n : 0, "%s%s", n ? ", " : "", aStep[i].zWhat);
            v++;
        }
    }
    if (rc == SQLITE_OK && v == version) rc = step_views(db, pzErr); /* current: a stale kernel view replaced */
    if (rc == SQLITE_OK && v != version) {
        snprintf(zNum, sizeof zNum, "%d", v);
        snprintf(zPragma, sizeof zPragma, "PRAGMA user_version = %d", v);
        rc = vt__meta_set(db, "schema_version", zNum);
        if (rc == SQLITE_OK) rc = sqlite3_exec(db, zPragma, NULL, NULL, pzErr);
    }
    if (rc == SQLITE_OK) *pNew = v;
    return rc;
}
