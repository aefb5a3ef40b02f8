/* Internal: the trace's size bound and recording window: which rows the writer keeps, and what it skipped. */
#ifndef VT_TRACER_LIMIT_H
#define VT_TRACER_LIMIT_H

/*
 * Long jobs make long traces. Two optional bounds decide which rows reach the
 * file; both spare the rows that live memory and OOMs depend on (allocations,
 * frees, pool events, OOMs, and the strings, stacks, frames, modules, devices,
 * meta and drop counts those refer to), and skip the detail (kernels, buffer
 * uses, copies, sets, API calls, NVTX ranges, synchronizations, overhead):
 *
 * - size (VRAMTRACE_MAX_BYTES): at THIN_PERCENT of the bound the detail stops
 *   being written (counted, and said in meta size_limit_thin_ns); at the bound
 *   itself nothing more is written (meta size_limit_reached_ns; the writer
 *   turns tracing off as at a file-size limit). The size is the database's
 *   (page count x page size) after each commit; the write-ahead log may add a
 *   few MiB until close.
 * - window (VRAMTRACE_START_AFTER, VRAMTRACE_STOP_AFTER): detail rows whose
 *   time lies before the start or at/after the stop, relative to the trace's
 *   time base, are skipped and counted (meta window_rows_skipped); rows with an
 *   unknown time are kept.
 *
 * Single-threaded: the writer thread owns it.
 */
#include <stdint.h>

#include "rowtable.h"

#define VT_LIMIT_THIN_PERCENT 90

struct vt__limit {
    uint64_t maxBytes;     /* 0: no size bound */
    int64_t startNs;       /* absolute CUPTI ns: detail before it is skipped; INT64_MIN: none */
    int64_t stopNs;        /* absolute CUPTI ns: detail from it on is skipped; INT64_MAX: none */
    int bThin;             /* the size mark was passed: detail is no longer written */
    int bFull;             /* the size bound was reached: nothing more is written */
    uint64_t nThinned;     /* detail rows not written because of the size mark */
    uint64_t nOutside;     /* detail rows not written because they lie outside the window */
};

/*
 * Set l up. maxBytes 0: no size bound. startAfterNs / stopAfterNs: the window
 * relative to timeBaseNs (the trace's start), each -1 for none.
 */
void vt__limit_init(struct vt__limit *l, uint64_t maxBytes, int64_t timeBaseNs, int64_t startAfterNs,
                    int64_t stopAfterNs);

/* Whether row r (absolute times, as the decoder emits it) is written; a row not written is counted. */
int vt__limit_keep(struct vt__limit *l, const struct vt__row *r);

/*
 * Rows per commit under a bound of maxBytes (0: none) for a configured nRows. The size is looked
 * at after each commit, so one commit must not carry the file from below the mark past the bound
 * (the rows after it would never be written): a batch fills at most half the room between the two,
 * at 256 bytes a row (generous, index entries included), and holds at least 64 rows.
 */
unsigned vt__limit_batch_rows(uint64_t maxBytes, unsigned nRows);

/* What vt__limit_size found. */
enum vt__limit_step { VT_LIMIT_SAME = 0, VT_LIMIT_THIN_NOW, VT_LIMIT_FULL_NOW };

/* The database now holds nBytes: whether the size mark or the bound was passed just now. */
enum vt__limit_step vt__limit_size(struct vt__limit *l, uint64_t nBytes);

#endif
