/* Internal: the figure source: each figure a command prints about a trace (times, counts, level, peaks), made once. */
#ifndef VT_ANALYZER_FIGURES_H
#define VT_ANALYZER_FIGURES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "read.h"

/*
 * One source per figure. Every number a person reads about a trace is made here, once, and
 * `info`, `analyze` (text, JSON, Markdown, HTML) and `export` print these values, never their
 * own computation of them:
 *
 *   time      One origin, the time 0 of every printed time: the first event of the traces read
 *             together (vt__figures_origin), on the wall clock when there are several and every
 *             one carries clock anchors. A time is printed as vt__fig_at(f, ts), ns from that
 *             origin (vt__fig_fmt_at: "1.25 s"), so a window read in one command's output can be
 *             given to another (export --from/--to). For one trace the origin is its first event.
 *   duration  f->fig.duration: first to last event (every timed table), -1 unknown.
 *   level     f->fig.level (vt__level_name): what the allocation rows are: a caching allocator's
 *             segments, an allocator's blocks (tensors), both, CUDA allocations one per buffer, or
 *             only running totals an importer kept.
 *   counts    f->fig.lc: allocations, frees, live at the end, frees of nothing, by the live sets'
 *             one rule (read/live.c).
 *   peaks     f->fig.aDev[0 .. nDev): per device (and pinned, managed host memory) the highest
 *             allocated, reserved and device-used bytes and when, the process's own peaks where
 *             an importer knew them (memory that began before a profiler's window), and the
 *             headline figure (vt__fig_headline, vt__fig_peak_text).
 *
 * The figures' data (struct vt_figures in every struct vt_tracefile, struct vt_figdev, struct
 * vt_lifecounts, enum vt_level) are declared in read.h, beside the tracefile that holds them.
 *
 * How they are filled: vt__read_open fills time and duration; a pass over the live sets fills
 * counts, level and peaks: vt__figures_pass for a reader without an analysis (info), or the
 * analysis' replay, which hands its two live sets to vt__figures_take when it is done: both end
 * in vt__figures_take, so both give the same values. For several traces the caller sets the one
 * origin with vt__figures_origin once all are open.
 */

/*
 * The one origin of nF traces read together (apF[i], open; NULL entries skipped): their first
 * event; with several traces that all carry clock anchors (those with a known time), on the wall
 * clock (each trace's fig.shift set so), else on each one's own clock; traces of runs apart on the
 * wall clock each from its own first event (a note says so). Sets every trace's fig.origin and
 * fig.shift.
 */
void vt__figures_origin(struct vt_tracefile *const *apF, int nF);
/* ts (this trace's clock) as ns from the origin; -1 when ts is unknown (< 0) or f has no times. */
int64_t vt__fig_at(const struct vt_tracefile *f, int64_t ts);
/* vt__fig_at for people: "0 s", "12.0 us", "1.25 s"; "?" when unknown. Into z (size n); returns z. */
const char *vt__fig_fmt_at(const struct vt_tracefile *f, int64_t ts, char *z, size_t n);
/* A window's start (dir < 0) or end (dir > 0) as vt__fig_fmt_at, rounded outward to the digits shown. */
const char *vt__fig_fmt_bound(const struct vt_tracefile *f, int64_t ts, int dir, char *z, size_t n);
/* The window [a, b] (this trace's clock) as "600.5 ms .. 804.1 ms", widened outward to the digits shown, so
 * that a window pasted from it into export --from/--to holds every event of [a, b]; "time unknown" when neither
 * end is known. Into z; returns z. */
const char *vt__fig_fmt_window(const struct vt_tracefile *f, int64_t a, int64_t b, char *z, size_t n);

/*
 * Counts, level and peaks of f from its two live sets once every row went through them (Lcuda:
 * memory_event, Ltensor: tensor_event; either may be NULL), and what importers computed (meta),
 * and the device memory in use at OOMs (f->db must be open). Returns an SQLite code.
 */
int vt__figures_take(struct vt_tracefile *f, const struct vt_live *Lcuda, const struct vt_live *Ltensor);
/* The pass a reader without an analysis makes (info): both tables through live sets, then vt__figures_take.
 * A VT_EXIT code (one line printed on error). */
int vt__figures_pass(struct vt_tracefile *f);

/*
 * NULL when f's allocation counts are known (a trace of the tracer's: 0 is 0), else why they are not: an import
 * whose file holds no allocation with its address and size (an Nsight export without memory events, a
 * torch.profiler trace without [memory] events or without 'Addr'), whose counts are then unknown, never 0.
 */
const char *vt__fig_counts_unknown(const struct vt_tracefile *f);
/* A level for programs (JSON): "none", "segments", "tensors", "segments_and_tensors", "allocations", "totals". */
const char *vt__level_key(int level);
/* A level for people: "segments (caching allocator)", "tensors (the allocator's blocks)", "segments and tensors",
 * "allocations", "totals only (no lifetimes)", "none". */
const char *vt__level_name(int level);
/* Where a trace's end is, as reports say it: "at the snapshot's dump", "at the end of the profiler's window", "at
 * exit". */
const char *vt__fig_end_said(const struct vt_tracefile *f);
/* z: "inside these segments, the allocator's blocks (tensors): N allocated, M live at ... (BYTES)" where the trace
 * has a framework allocator's blocks inside its allocations; returns 0 (z empty) where it has none, or only blocks. */
int vt__fig_blocks_text(const struct vt_tracefile *f, char *z, size_t n);
/* The account acct's peaks in f->fig, NULL when it has none. */
const struct vt_figdev *vt__fig_dev(const struct vt_tracefile *f, int acct);
/*
 * The headline peak of account d: the process's reserved peak where known, else its reserved, else its
 * allocated (the highest known of what the process held); -1 unknown. Every command that prints a device's
 * peak prints this one (diff and its --max-growth too).
 */
int64_t vt__fig_headline(const struct vt_figdev *d);
/* Which figure vt__fig_headline gives for d. */
enum vt_headof {
    VT_HEAD_NONE = 0,       /* unknown */
    VT_HEAD_RESERVED,       /* the reserved peak */
    VT_HEAD_PROC_RESERVED,  /* the process's reserved peak (memory that began before the window) */
    VT_HEAD_PROC_ALLOCATED, /* the process's allocated peak */
    VT_HEAD_ALLOCATED,      /* the allocated peak (reserved not known) */
    VT_HEAD_TOTALS          /* an importer's running total of allocated bytes (no lifetimes) */
};
int vt__fig_headline_of(const struct vt_figdev *d);
/* The allocated peak said beside a reserved headline (the process's where known); -1 none or unknown. */
int64_t vt__fig_beside(const struct vt_figdev *d);
/* A vt_headof for programs (bKey: "reserved", "process_reserved", "process_allocated", "allocated",
 * "allocated_running_sum", "unknown") or for people ("reserved", "reserved by the process (...)", ...). */
const char *vt__fig_headline_name(int k, int bKey);
/* The largest headline peak of f's devices (not host memory): a process's peak in summaries; -1 unknown. */
int64_t vt__fig_trace_peak(const struct vt_tracefile *f);
/*
 * Account d's peaks as every report says them: "23.5 GiB reserved at 810.9 ms", "11.9 GiB reserved, 6.17 GiB
 * allocated (the process's peaks: torch.profiler's Total Reserved and Total Allocated; in the profiler's window
 * 2.36 GiB allocated at 194.5 ms)", "2.60 GiB allocated (the running sum of the profiler's [memory] Bytes: no
 * lifetimes)", with "; X in use on the device (every process) at T" where known. Into z (size n); returns z.
 */
const char *vt__fig_peak_text(const struct vt_tracefile *f, const struct vt_figdev *d, char *z, size_t n);
/*
 * The peak an importer computed for the window [a, b] of f (a phase) where no lifetime is known (level
 * VT_LEVEL_TOTALS): the running total's peak when it was reached inside the window, summed over devices;
 * -1 when there is none.
 */
int64_t vt__fig_window_total(const struct vt_tracefile *f, int64_t a, int64_t b);
/*
 * f->fig.aDev as a JSON array (every report writes it so): per account {"account": "device", "pinned" or
 * "managed", "device", "total_bytes", "headline_bytes", "allocated_bytes", "allocated_ts" (the trace's clock),
 * "allocated_at_ns" (from the origin), "allocated_from_totals", "reserved_bytes", "reserved_ts",
 * "reserved_at_ns", "used_bytes", "used_ts", "used_at_ns", "process_allocated_bytes",
 * "process_reserved_bytes", "allocated_before_bytes"}, null for unknown.
 */
void vt__fig_json(FILE *out, const struct vt_tracefile *f);
/* Release what f->fig owns. */
void vt__figures_free(struct vt_tracefile *f);

#endif
