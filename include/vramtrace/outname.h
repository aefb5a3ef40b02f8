/* Trace file names: the output pattern grammar (%p pid, %r rank, %h host, %% percent), shared by both halves. */
#ifndef VRAMTRACE_OUTNAME_H
#define VRAMTRACE_OUTNAME_H

#include <stddef.h>

/*
 * The tracer names each trace by expanding VRAMTRACE_OUTPUT; `vramtrace record`
 * checks the same pattern before the job starts and finds the traces it named
 * afterwards. One grammar for all three (tracer/outname.c, library vttrace).
 */

/* The first malformed escape in zPattern ('%' followed by anything but p, r, h or %, or ending it), or NULL. */
const char *vt__outname_bad_escape(const char *zPattern);

/*
 * Expand zPattern into zOut (nOut bytes): %p, %r and %h become azVal[0], [1], [2],
 * %% a percent sign. With bGlob, the literal text's glob(3) metacharacters are
 * escaped (so azVal may hold "*"). Returns 0, -1 for a malformed or empty pattern,
 * -2 when the result does not fit (zOut is then the empty string).
 */
int vt__outname_expand(const char *zPattern, const char *const azVal[3], int bGlob, char *zOut, size_t nOut);

/*
 * 1 if the file at zPath (opened without following symlinks) is a vramtrace trace: an SQLite
 * header whose application_id is the vramtrace id (or, for a trace whose first pages are still in
 * its write-ahead log, SQLite says so), 0 if not, -1 if it cannot be read. The tracer replaces
 * only a trace; record refuses an output that names any other file before the job starts.
 */
int vt__outname_is_trace(const char *zPath);

#endif
