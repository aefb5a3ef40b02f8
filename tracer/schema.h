/* Internal: create a trace database and check that an existing one is a readable trace. */
#ifndef VT_TRACER_SCHEMA_H
#define VT_TRACER_SCHEMA_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "vramtrace/schema.h"

/* Result of vt__schema_check, also the analyzer's exit-code basis (see docs/cli.md). */
enum vt_schema_status {
    VT_SCHEMA_OK = 0,
    VT_SCHEMA_NOT_SQLITE = 1, /* not an SQLite database (or unreadable/truncated header) */
    VT_SCHEMA_FOREIGN = 2,    /* SQLite, but not a vramtrace trace */
    VT_SCHEMA_NEWER = 3,      /* a trace written by a newer vramtrace */
    VT_SCHEMA_CORRUPT = 4,    /* a trace, but tables missing or database malformed */
    VT_SCHEMA_EMPTY = 5,      /* zero-length file */
};

/*
 * Create the trace tables, enum rows and version stamps in an empty database.
 * Runs in one transaction. Returns SQLITE_OK or an SQLite error code; on error
 * *zErr (if non-NULL) receives a static or sqlite3_malloc'd message that the
 * caller frees with sqlite3_free.
 */
int vt__schema_create(sqlite3 *db, char **zErr);

/*
 * vt__schema_create with time base `base` (CUPTI-clock nanoseconds): rows store
 * times as t = time - base, and meta 'time_base_ns' records it. Any base gives
 * the same absolute times back; one near the trace's times stores them in
 * fewer bytes. vt__schema_create uses base 0 (stored times are absolute).
 */
int vt__schema_create_at(sqlite3 *db, int64_t base, char **zErr);

/*
 * Check that db holds a vramtrace trace this build can read. Writes a one-line
 * human explanation into zMsg (size nMsg) when the result is not VT_SCHEMA_OK.
 * *pVersion receives the trace's schema version (0 if unknown); may be NULL.
 * The version is stamped twice (PRAGMA user_version, meta 'schema_version'):
 * stamps that differ, a meta stamp missing or not a decimal integer, or a
 * version below VT_SCHEMA_VERSION_OLDEST give VT_SCHEMA_CORRUPT; a newer
 * user_version gives VT_SCHEMA_NEWER unless meta's stamp is a different number.
 */
enum vt_schema_status vt__schema_check(sqlite3 *db, int *pVersion, char *zMsg, size_t nMsg);

/*
 * Whether readers may read the stored times of tables azTable[0..nTable) and add
 * the base themselves instead of reading the generated columns: returns 1 and
 * sets *pBase when meta 'time_base_ns' holds an integer and each table's CREATE
 * statement is exactly the one vt__schema_create_at writes for that base; 0 when
 * not (a version-1 trace, or a table made or altered by hand: read the generated
 * columns); -1 on an SQLite error.
 */
int vt__schema_time_base(sqlite3 *db, const char *const *azTable, int nTable, int64_t *pBase);

/* Create the read-side indexes (VT_SCHEMA_INDEXES). Returns an SQLite code. */
int vt__schema_index(sqlite3 *db);

/* Set meta(key) = value (insert or replace). Returns an SQLite code. */
int vt__meta_set(sqlite3 *db, const char *zKey, const char *zValue);

/* Read meta(key) into zOut (size nOut); returns 1 if found, 0 if absent, -1 on error. */
int vt__meta_get(sqlite3 *db, const char *zKey, char *zOut, size_t nOut);

#endif
