/* Readable kernel names: the trace's kernel_name rows, else names demangled at read time, in one temporary table. */
#include <stdlib.h>
#include <string.h>

#include "read.h"

#include "vramtrace/schema.h"
#include "vramtrace/demangle.h"

/* Add the row (id, demangled or stored name, its short name) for the stored name zName; SQLite code. */
static int add_name(sqlite3_stmt *pIns, int64_t id, const char *zName)
{
    char *zDem = NULL, zShort[512];
    int rc = vt__demangle(zName, VT_DEMANGLE_LOAD, &zDem) == VT_DEMANGLE_NOMEM ? SQLITE_NOMEM : SQLITE_OK;
    if (rc == SQLITE_OK) {
        const char *z = zDem ? zDem : zName;
        vt__short_name(z, zShort, sizeof zShort);
        sqlite3_bind_int64(pIns, 1, id);
        sqlite3_bind_text(pIns, 2, z, -1, SQLITE_STATIC);
        sqlite3_bind_text(pIns, 3, zShort, -1, SQLITE_STATIC);
        rc = sqlite3_step(pIns) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(sqlite3_db_handle(pIns));
        sqlite3_reset(pIns);
    }
    free(zDem);
    return rc;
}

int vt__knames_load(sqlite3 *db)
{
    sqlite3_stmt *pSel = NULL, *pIns = NULL;
    int rc;
    rc = sqlite3_exec(db,
                      "DROP TABLE IF EXISTS temp.vt_kname;"
                      "CREATE TEMP TABLE vt_kname(name_id INTEGER PRIMARY KEY, demangled TEXT NOT NULL,"
                      " short_name TEXT NOT NULL)",
                      NULL, NULL, NULL);
    /* kernel is a view in schema 5 */
    if (rc != SQLITE_OK || vt__schema_has_table(db, "kernel") != 1 || vt__schema_has_table(db, "string") != 1) goto done;
    if (vt__schema_has_table(db, "kernel_name") == 1)
        rc = sqlite3_exec(db,
                          "INSERT OR IGNORE INTO temp.vt_kname SELECT n.name_id, d.value, s.value"
                          " FROM main.kernel_name n JOIN main.string d ON d.id = n.demangled_id"
                          " JOIN main.string s ON s.id = n.short_id",
                          NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "SELECT id, value FROM main.string WHERE id IN (SELECT name_id FROM kernel)"
                                " AND id NOT IN (SELECT name_id FROM temp.vt_kname)",
                                -1, &pSel, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "INSERT INTO temp.vt_kname VALUES(?, ?, ?)", -1, &pIns, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(pSel)) == SQLITE_ROW) {
        const char *zName = (const char *)sqlite3_column_text(pSel, 1);
        rc = zName ? add_name(pIns, sqlite3_column_int64(pSel, 0), zName) : SQLITE_OK;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
done:
    sqlite3_finalize(pSel);
    sqlite3_finalize(pIns);
    return rc;
}

/* The id of a new string row holding z (rows are not deduplicated: the trace's strings may repeat). */
static int new_string(sqlite3_stmt *pStr, const char *z, int64_t *pId)
{
    int rc;
    sqlite3_bind_text(pStr, 1, z, -1, SQLITE_STATIC);
    rc = sqlite3_step(pStr) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(sqlite3_db_handle(pStr));
    sqlite3_reset(pStr);
    *pId = sqlite3_last_insert_rowid(sqlite3_db_handle(pStr));
    return rc;
}

int vt__knames_store(sqlite3 *db)
{
    sqlite3_stmt *pSel = NULL, *pStr = NULL, *pIns = NULL;
    int rc = SQLITE_OK;
    if (vt__schema_has_table(db, "kernel_name") != 1) return SQLITE_OK;
    rc = sqlite3_prepare_v2(db,
                            "SELECT k.name_id, k.demangled, k.short_name, s.value FROM temp.vt_kname k"
                            " JOIN main.string s ON s.id = k.name_id"
                            " WHERE k.name_id NOT IN (SELECT name_id FROM main.kernel_name)"
                            /* the tracer's rows without a demangled form (no demangler in the traced
                             * process, or a name over the bound): replaced when demangled now */
                            " OR (k.demangled <> s.value AND k.name_id IN"
                            " (SELECT name_id FROM main.kernel_name WHERE demangled_id IS NULL)) ORDER BY 1",
                            -1, &pSel, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "INSERT INTO main.string(value) VALUES(?)", -1, &pStr, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO main.kernel_name VALUES(?, ?, ?)", -1, &pIns, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(pSel)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(pSel, 0), idDem = id, idShort;
        const char *zDem = (const char *)sqlite3_column_text(pSel, 1);
        const char *zShort = (const char *)sqlite3_column_text(pSel, 2);
        const char *zStored = (const char *)sqlite3_column_text(pSel, 3);
        rc = SQLITE_OK;
        if (strcmp(zDem, zStored) != 0) rc = new_string(pStr, zDem, &idDem);
        idShort = idDem;
        if (rc == SQLITE_OK && strcmp(zShort, zDem) != 0) rc = new_string(pStr, zShort, &idShort);
        if (rc != SQLITE_OK) break;
        sqlite3_bind_int64(pIns, 1, id);
        sqlite3_bind_int64(pIns, 2, idDem);
        sqlite3_bind_int64(pIns, 3, idShort);
        rc = sqlite3_step(pIns) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        sqlite3_reset(pIns);
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(pSel);
    sqlite3_finalize(pStr);
    sqlite3_finalize(pIns);
    return rc;
}
