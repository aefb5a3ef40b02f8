/* Test helper: a trace of schema version 4 made from one of today's (the compacted tables as plain tables). */
#ifndef VT_TEST_V4_UTIL_H
#define VT_TEST_V4_UTIL_H

#include <stdint.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "vramtrace/compact.h"
#include "vramtrace/schema.h"

/*
 * Store db's compacted tables (kernel, api_call, memcpy, memset: views over their parts in
 * schema 5 and 6) as version 4 stored them, rows and ids kept (folded calls stored as rows),
 * memory_event without version 6's columns, and stamp the trace version 4.
 * The stored Nsight views keep reading them (same names). SQLite code.
 */
static inline int vt_test_make_v4(sqlite3 *db)
{
    char zBase[32] = "0", *zDdl = NULL;
    sqlite3_stmt *p = NULL;
    int rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK && sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'time_base_ns'", -1, &p, NULL) == SQLITE_OK &&
        sqlite3_step(p) == SQLITE_ROW)
        snprintf(zBase, sizeof zBase, "%s", (const char *)sqlite3_column_text(p, 0));
    sqlite3_finalize(p);
    for (int i = 0; rc == SQLITE_OK && i < VT_CT__COUNT; i++) { /* the rows aside; the view and parts gone */
        const struct vt_compact_spec *c = &vt__aCompact[i];
        char *zSql = sqlite3_mprintf("CREATE TEMP TABLE \"vt_v4_%w\" AS SELECT id, t, dur, %s FROM main.\"%w\";"
                                     " DROP VIEW main.\"%w\"; DROP TABLE main.\"%w_row\"; DROP TABLE main.\"%w_sig\";"
                                     " DROP TABLE main.\"%w_block\";",
                                     c->zName, c->zCols, c->zName, c->zName, c->zName, c->zName, c->zName);
        rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(zSql);
    }
    if (rc == SQLITE_OK) {
        zDdl = vt__schema_sql_at(VT_SCHEMA_V4_COMPACTED_DDL, strtoll(zBase, NULL, 10));
        rc = zDdl ? sqlite3_exec(db, zDdl, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(zDdl);
    }
    for (int i = 0; rc == SQLITE_OK && i < VT_CT__COUNT; i++) { /* the rows back, as they were */
        const struct vt_compact_spec *c = &vt__aCompact[i];
        char *zSql = sqlite3_mprintf("INSERT INTO main.\"%w\"(id, t, dur, %s) SELECT * FROM \"vt_v4_%w\";"
                                     " DROP TABLE \"vt_v4_%w\";",
                                     c->zName, c->zCols, c->zName, c->zName);
        rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(zSql);
    }
    if (rc == SQLITE_OK) /* version 6's folded calls (rows of api_call again) leave memory_event */
        rc = sqlite3_exec(db, "DROP TRIGGER memory_event_call_delete; DROP TRIGGER memory_event_call_update;"
                              " ALTER TABLE memory_event DROP COLUMN call_dt; ALTER TABLE memory_event DROP COLUMN call_dur;"
                              " ALTER TABLE memory_event DROP COLUMN call_sig; ALTER TABLE memory_event DROP COLUMN call_id;",
                          NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "PRAGMA user_version = 4; UPDATE meta SET value = '4' WHERE key = 'schema_version'; COMMIT",
                          NULL, NULL, NULL);
    else
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

#endif
