/* Internal: subcommand entry points, exit codes and shared helpers of the vramtrace command. */
#ifndef VT_ANALYZER_CLI_H
#define VT_ANALYZER_CLI_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes of every subcommand (documented in docs/cli.md and --help). */
enum vt_exit {
    VT_EXIT_OK = 0,          /* success */
    VT_EXIT_FINDINGS = 1,    /* analyze --fail-on: a finding at or above the given severity */
    VT_EXIT_USAGE = 2,       /* bad arguments */
    VT_EXIT_NOFILE = 3,      /* input missing or unreadable; output not writable */
    VT_EXIT_NOT_TRACE = 4,   /* empty file, not SQLite, or SQLite but not a vramtrace trace */
    VT_EXIT_TOO_NEW = 5,     /* written by a newer vramtrace (schema version) */
    VT_EXIT_CORRUPT = 6,     /* a damaged or truncated trace */
    VT_EXIT_INTERNAL = 7,    /* an SQLite or system error while working */
    VT_EXIT_NOLIB = 8,       /* record: libvramtrace.so not found next to the command */
    VT_EXIT_EXEC = 127,      /* record: the command could not be started */
};

/* Each subcommand: argv[0] is the subcommand name. Returns an enum vt_exit value
 * (record returns the traced job's own exit status). */
int vt__cmd_record(int argc, char **argv);
int vt__cmd_analyze(int argc, char **argv);
int vt__cmd_info(int argc, char **argv);
int vt__cmd_sql(int argc, char **argv);
int vt__cmd_export(int argc, char **argv);
int vt__cmd_import(int argc, char **argv);

/*
 * Open a trace for reading (bWrite = 0: read-only, immutable to any writer) or for
 * writing analysis results back (bWrite = 1). Validates it with vt__schema_check.
 * A PyTorch snapshot, Nsight Systems export or Kineto trace is read through a
 * temporary import of it (import.h: vt__import_to_temp).
 * On failure prints one "vramtrace: PATH: reason" line to stderr and returns the
 * exit code (VT_EXIT_NOFILE, _NOT_TRACE, _TOO_NEW, _CORRUPT); on success returns
 * VT_EXIT_OK and *pDb is open.
 */
int vt__trace_open(const char *zPath, int bWrite, sqlite3 **pDb);

/*
 * Hide the rows no real trace can hold (timestamps outside [0, 2^62), sizes
 * outside [0, 1 PiB], addresses beyond +-2^62, text or NULL where numbers
 * belong) from every later query on db, by temporary views that shadow the
 * event tables holding such rows (the others are read as they are); the file is
 * not changed. *pnHidden receives the number of rows hidden. Returns an SQLite code.
 */
int vt__trace_guard(sqlite3 *db, int64_t *pnHidden);
/* The parts of vt__trace_guard, for readers that count impossible rows in passes of their own:
 * the guard's WHERE condition for a table (NULL when unguarded), one table's view alone, one
 * table's count added to *pn. The last two return an SQLite code. */
const char *vt__trace_guard_where(const char *zTable);
int vt__trace_guard_view(sqlite3 *db, const char *zTable);
int vt__trace_guard_count(sqlite3 *db, const char *zTable, int64_t *pn);

/* Print "vramtrace: " + message + newline to stderr. */
void vt__errorf(const char *zFmt, ...) __attribute__((format(printf, 1, 2)));

#endif
