/* Upgrading traces of older schema versions: the steps from each version to the next. */
#ifndef VRAMTRACE_MIGRATE_H
#define VRAMTRACE_MIGRATE_H

#include <sqlite3.h>
#include <stddef.h>

/*
 * Every change of the trace schema that an older trace can be brought to is one step here
 * (tracer/migrate.c, aStep): from version N to N + 1, run inside the caller's transaction.
 * `vramtrace upgrade` runs the steps from a trace's version to VT_SCHEMA_VERSION. Traces of
 * versions 1 and 2 store other table layouts (times as 0 for unknown; version 1 absolute times):
 * they only gain the stored views and keep their number.
 */

/*
 * Bring db, a trace of schema `version` (checked by vt__schema_check), as far as it goes:
 * to VT_SCHEMA_VERSION from version 3 on, the stored views alone for versions 1 and 2.
 * Runs in the caller's transaction. *pNew receives the version reached; zDone (size nDone)
 * what was done, for people ("views added, rows compacted"; "" when nothing was to do).
 * SQLite code; *pzErr an sqlite3_malloc'd message on error (or NULL).
 */
int vt__migrate(sqlite3 *db, int version, int *pNew, char *zDone, size_t nDone, char **pzErr);

#endif
