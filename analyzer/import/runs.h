/* Internal: sorted runs of fixed-width rows spilled to a file, read back merged by their first value or as written. */
#ifndef VT_IMPORT_RUNS_H
#define VT_IMPORT_RUNS_H

#include <stdint.h>

/*
 * The trace builder keeps here the rows of a table that arrive out of time order (a snapshot's
 * devices, each in time order, one after another): each run is a sequence of rows of nCol
 * int64_t values whose first value (the key) never decreases, and carries an ordinal. vt__runs_merge
 * hands every row over in (key, ordinal, place in its run) order, which is the order of SQLite's
 * ORDER BY key, rowid when each run's ordinal is the rowid of its first row and the rowids of a run
 * follow each other. Memory: a write buffer and, while merging, a read buffer per run (at most
 * VT_RUNS_MAX runs); the rows themselves live in an unlinked file beside the trace, gone when closed.
 */

#define VT_RUNS_MAX 16 /* runs merged in C; a table with more is sorted by SQLite instead */

struct vt__runs;

/* A new, empty set of runs of nCol-value rows, in a file made from zNear (a path: "<zNear>-runs-XXXXXX",
 * unlinked at once). Returns 0, or -1 with errno set (*pp NULL). */
int vt__runs_open(struct vt__runs **pp, const char *zNear, int nCol);

/* Start a new run with that ordinal (ties between runs' keys go to the lower ordinal). Returns 0, or -1
 * when VT_RUNS_MAX runs exist already (nothing changed). */
int vt__runs_begin(struct vt__runs *r, int64_t ordinal);

/* Runs begun so far. */
int vt__runs_count(const struct vt__runs *r);

/* Append a row (nCol values) to the current run (vt__runs_begin first). Returns 0, or -1 with errno set. */
int vt__runs_put(struct vt__runs *r, const int64_t *aRow);

/* Hand every row to xRow, merged (bMerge 1: by key, then ordinal, then place) or as written (bMerge 0:
 * run by run in the order begun). xRow returns 0 to go on, else stops the walk with that value, which is
 * returned; -1 with errno set when the file cannot be read. The runs stay as they are. */
int vt__runs_each(struct vt__runs *r, int bMerge, int (*xRow)(void *pArg, const int64_t *aRow), void *pArg);

/* Close and free (the file goes with it). r may be NULL. */
void vt__runs_close(struct vt__runs *r);

#endif
