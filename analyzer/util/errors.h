/* Internal: the command's exit codes and its one-line error messages. */
#ifndef VT_ANALYZER_ERRORS_H
#define VT_ANALYZER_ERRORS_H

#include <stddef.h>

struct sqlite3;

/* Exit codes of every subcommand (documented in docs/cli.md and each --help). */
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
    VT_EXIT_PARTIAL = 9,     /* several inputs: some were read, at least one was not (each named) */
    VT_EXIT_LIMIT = 10,      /* sql: a query stopped at --timeout, the memory bound or the longest value */
    VT_EXIT_NOEXEC = 126,    /* record: the command was found but could not be run (as a shell says: permission, format) */
    VT_EXIT_EXEC = 127,      /* record: the command was not found */
};

/* Print "vramtrace: " + message + newline to stderr. */
void vt__errorf(const char *zFmt, ...) __attribute__((format(printf, 1, 2)));

/* An input already named on standard error as not read (a directory without traces, vt__inputs): its reader fails
 * on it without naming it again. zName must live as long as the command (an argument); the first 16 are kept, set
 * before any reader runs. */
void vt__input_said(const char *zName);
/* Whether input zName was said (vt__input_said). */
int vt__input_was_said(const char *zName);

/* The exit code for an SQLite error met while reading a trace: damaged (corrupt, not a database, a query its
 * schema does not answer) or internal (memory, I/O, locks). */
int vt__exit_for_sqlite(int rc);

/* The longest absolute path, in bytes, at which SQLite's file layer opens a database with its journal or WAL
 * beside it (about 500: its VFS's limit less the "-journal" suffix). */
int vt__sqlite_path_max(void);

/* Why SQLite did not open zFile (rc from sqlite3_open_v2 or a VACUUM INTO, db its handle or NULL), into z:
 * SQLite's message with the system's reason (Permission denied), or where zFile's absolute path is too long for
 * SQLite's file layer (vt__sqlite_path_max), that cause and what to do, which "unable to open database file" does
 * not say. Returns z. */
const char *vt__sqlite_open_error(struct sqlite3 *db, int rc, const char *zFile, char *z, size_t nZ);

#endif
