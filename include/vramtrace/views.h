/* The compatibility views stored in every trace (schema 4): Nsight-named views and the call-site view, from vramtrace/nsight.h. */
#ifndef VRAMTRACE_VIEWS_H
#define VRAMTRACE_VIEWS_H

#include <sqlite3.h>

/*
 * Expand a view template of vramtrace/nsight.h: $S becomes zSchema (when zSchema is "",
 * "$S." disappears: a view stored in a trace names its own tables bare), $T the SQL text
 * zTrace (the trace's ordinal), $F zPath as an SQL string literal (NULL when zPath is NULL),
 * $K the trace's kernel_name table when bKernelNames, else an empty table of its columns.
 * Returns an sqlite3_malloc'd string, or NULL when out of memory.
 */
char *vt__views_expand(const char *zTemplate, const char *zSchema, const char *zTrace, const char *zPath,
                       int bKernelNames);

/* 1 when schema zSchema of db has the kernel_name table (schema 3 and later), 0 when not, -1 on error. */
int vt__views_has_kernel_names(sqlite3 *db, const char *zSchema);

/*
 * Create the views every trace carries (schema 4) in db's main schema: the Nsight-named views
 * (CUPTI_ACTIVITY_KIND_*, StringIds, NVTX_EVENTS, TARGET_INFO_GPU, PROCESSES, ENUM_*) and `site`.
 * Existing ones are kept. An SQLite code (*pzErr from sqlite3_exec).
 */
int vt__views_create(sqlite3 *db, char **pzErr);

/* 1 when schema zSchema of db holds the stored views, 0 when not, -1 on error. */
int vt__views_present(sqlite3 *db, const char *zSchema);

/*
 * 1 when the stored kernel view of db's main schema predates reading kernel_name (its demangled
 * and short names were the stored name) while the trace has that table, 0 when not, -1 on error.
 */
int vt__views_kernel_stale(sqlite3 *db);

/* Replace a stale kernel view (vt__views_kernel_stale) by the current one. An SQLite code. */
int vt__views_kernel_refresh(sqlite3 *db, char **pzErr);

#endif
