/* Files removed when the command dies of a termination signal: temporary traces and half-written outputs. */
#ifndef VT_UTIL_CLEANUP_H
#define VT_UTIL_CLEANUP_H

/*
 * Register zPath for removal if the process dies of SIGHUP, SIGINT, SIGPIPE or SIGTERM (the
 * handler is installed at the first call, only for signals whose action is still the default: a
 * signal the caller ignores or handles stays so). The process then dies of the same signal, as it
 * would have. Returns 0, or -1 when out of memory (the path is then not registered). Thread-safe.
 */
int vt__cleanup_add(const char *zPath);

/*
 * mkstemp(zTemplate) and vt__cleanup_add of the name it made, with the signals above blocked
 * in between, so that no signal can leave the new file behind. Returns the file descriptor,
 * or -1 with errno set (nothing created); registration failing for lack of memory is not an
 * error (the file is then removed on the normal paths only).
 */
int vt__cleanup_mkstemp(char *zTemplate);

/* Stop removing zPath on a signal (it was renamed, removed or is a result to keep). Thread-safe. */
void vt__cleanup_forget(const char *zPath);

/*
 * A new empty temporary file $TMPDIR/vramtrace-KIND-PID-XXXXXX (TMPDIR unset or empty: /tmp),
 * removed on a termination signal (vt__cleanup_mkstemp) and at exit, and locked (flock) for as
 * long as this process lives, so that a later run can tell it from a file a killed run left:
 * before its first file of a kind, a process removes the stale ones of that kind (no process
 * holds their lock; the older name without a pid: a day old), with their SQLite journals. Into
 * *pzPath (malloc'd; the caller frees it, the file stays registered). Returns 0, or -1 with
 * errno set (nothing created). Thread-safe.
 */
int vt__cleanup_tempfile(const char *zKind, char **pzPath);

/* The directory temporary files go to: $TMPDIR, else /tmp. */
const char *vt__cleanup_tempdir(void);

#endif
