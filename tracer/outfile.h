/* Internal: naming and securely creating the trace file (mode 0600, never through a symlink). */
#ifndef VT_TRACER_OUTFILE_H
#define VT_TRACER_OUTFILE_H

#include <stddef.h>
#include <sys/types.h>

/* Identity of a created trace file, to check that the writer opened the same inode. */
struct vt_outfile {
    char zPath[4096];
    dev_t dev;
    ino_t ino;
};

/*
 * Expand an output pattern: %p -> pid, %r -> zRank ("0" when zRank is NULL or
 * empty), %h -> zHost, %% -> %. Any other escape is an error. Returns 0, or -1
 * if the pattern is malformed or the result does not fit in nOut bytes.
 */
int vt__outfile_expand(const char *zPattern, long pid, const char *zRank, const char *zHost,
                       char *zOut, size_t nOut);

/*
 * Create zPath as a new empty file with mode 0600: O_CREAT|O_EXCL|O_NOFOLLOW, so
 * it is never opened through a symlink. If the name exists and is a regular
 * file owned by this user holding a vramtrace trace (SQLite header and the
 * trace application_id), it is replaced, together with its -wal, -shm and
 * -journal companions, unless that trace is unfinished (no meta 'end_ns') and
 * its process (meta 'pid') still runs on this host or ran on another host;
 * anything else (symlink, foreign file, empty file, another user's file, a
 * trace in use) is refused. The directory must exist. The file is
 * closed again (SQLite reopens it by name) and its identity kept in *pOut.
 * Returns 0, or -1 with a one-line reason (without "vramtrace:") in zErr.
 */
int vt__outfile_create(const char *zPath, struct vt_outfile *pOut, char *zErr, size_t nErr);

/*
 * Check that zPath still names the inode created by vt__outfile_create (not a
 * symlink, same device and inode). Returns 0, or -1 with a reason in zErr.
 */
int vt__outfile_verify(const struct vt_outfile *pFile, char *zErr, size_t nErr);

/* Remove the trace file and its SQLite companions (used when tracing cannot start). */
void vt__outfile_remove(const struct vt_outfile *pFile);


#endif
