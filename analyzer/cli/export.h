/* Internal: writing traces as Chrome trace-event JSON for the Perfetto UI, as CSV tables, as a PyTorch memory snapshot. */
#ifndef VT_ANALYZER_EXPORT_H
#define VT_ANALYZER_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "read/figures.h"
#include "read/read.h"

/* Counts of what an export wrote, for the summary line and tests. */
struct vt_export_stats {
    long long nKernel, nMemcpy, nMemset, nNvtx, nAlloc, nFree, nTensor, nCounter, nOom, nMeta; /* nTensor: tensor_event rows */
};

/* What to write: a time window (ns from the export's origin, both ends included). */
struct vt_export_opts {
    int bFrom, bTo;
    int64_t from, to;
};

/*
 * Write nTrace traces opened through the read layer (aF) to f as one Chrome
 * trace-event JSON document. Rows are streamed from one prepared statement per
 * kind; the rows take memory bounded by the allocations live at one time, while the
 * per-category tracks hold two points per allocation of the trace being written (the
 * analysis's breakdown over time, default options: vt__analyze_read on aF[i], which the
 * caller opened with VT_READ_KEEP, each lent to it in turn).
 * Timestamps are microseconds relative to the earliest event of all traces;
 * with several traces that all carry clock anchors they are aligned on the wall
 * clock. With pOpt's window (NULL: none) only events overlapping it are written,
 * times still relative to the origin; counters start at their value at the window's start.
 * Unknown values (NULL columns) are left out. Returns SQLITE_OK, an SQLite error code (message in *pzErr,
 * sqlite3_malloc'd), or SQLITE_IOERR when writing f failed.
 */
int vt__export_perfetto(FILE *f, int nTrace, struct vt_tracefile *aF, const struct vt_export_opts *pOpt,
                        struct vt_export_stats *pStats, char **pzErr);

/*
 * Write nTrace traces opened through the read layer (aF) as CSV files in directory zDir
 * (created if missing): one file per table (memory_event, tensor_event when a trace has tensor
 * rows, kernel, memcpy, memset, nvtx_range, api_call, oom_event, device, meta), every trace's rows after three columns trace (the file
 * name), pid and rank, one header line, kernel, NVTX and API names joined in; existing files of
 * those names are replaced. For engines that join hundreds of ranks (DuckDB). Returns SQLITE_OK
 * or an SQLite error code with a message in *pzErr (sqlite3_malloc'd).
 */
int vt__export_csv(const char *zDir, int nTrace, struct vt_tracefile *aF, char **pzErr);

/* Counts of what a snapshot export wrote. */
struct vt_export_snapstats {
    long long nAlloc, nFree, nLive, nSegment, nEvent, nHost; /* nLive: live at the end, in nSegment segments of the
                                                             * dump; nHost: pinned host / managed allocations left out */
    long long nBlock, nBlockOut, nOom, nOomOut; /* allocator blocks in their segments, and left out (in none); OOMs
                                                * written, and left out (of no known device) */
    long long nBefore;      /* allocations and blocks made before a history that starts late: no event, the dump's */
    long long nStray;       /* frees, in such a history, of memory it never saw allocated: written */
};
/*
 * Write trace pF's device allocations to f as a PyTorch memory snapshot (the pickled dict of
 * torch.cuda.memory._snapshot(): 'device_traces' and 'segments', frames from the trace's stacks)
 * that PyTorch's memory_viz opens (export_snapshot.c says how). Returns SQLITE_OK, an SQLite
 * error code (message in *pzErr, sqlite3_malloc'd), or SQLITE_IOERR when writing f failed.
 */
int vt__export_snapshot(FILE *f, struct vt_tracefile *pF, struct vt_export_snapstats *pSt, char **pzErr);

#endif
