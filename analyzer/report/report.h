/* Internal: the reports of an analysis: text, JSON, Markdown, HTML. */
#ifndef VT_ANALYZER_REPORT_H
#define VT_ANALYZER_REPORT_H

#include <stdio.h>

#include "analysis/analysis.h"

/* Each writes the whole report of r to f; returns 0, or -1 on a write error. */
int vt__report_text(FILE *f, const struct vt_result *r);
int vt__report_json(FILE *f, const struct vt_result *r);
int vt__report_markdown(FILE *f, const struct vt_result *r);
int vt__report_html(FILE *f, const struct vt_result *r);

/* ---- shown.c: what every format shows of a trace, chosen once ---- */
/* A device account for people: "device 0 (NVIDIA H100 80GB HBM3)", "device 0", "pinned host memory"; returns z. */
const char *vt__fmt_device(const struct vt_device *d, char *z, size_t n);
/* An account as every report names it beside its peaks: "device 0 (NVIDIA H100 80GB HBM3, 79.6 GiB)", "device 0",
 * "pinned host memory", "managed memory"; into z (size n), returns z. */
const char *vt__fmt_account(const struct vt_trace *t, int acct, char *z, size_t n);
/* The timeline entry of account acct (what was live at its peak), NULL when the timeline has none. */
const struct vt_device *vt__report_device(const struct vt_trace *t, int acct);
/* t's frees that matched no allocation as every format says them: "every free matched its allocation", else the
 * counts of frees of unknown addresses, double frees and allocations whose free was never seen; returns z. */
const char *vt__fmt_free_faults(const struct vt_trace *t, char *z, size_t n);
/* Whether a report shows the breakdown at OOM event k of t: it has one and is its failed request's judged attempt
 * (an allocator's retries of one request are one failure, shown once), or belongs to no failure. */
int vt__report_oom_shown(const struct vt_trace *t, int k);
/* How many of d's groups live at its peak a report lists: the largest, at most --top and 5. */
int vt__report_groups(const struct vt_result *r, const struct vt_device *d);
/* The groups live at d's peak that a report does not list (vt__report_groups), said in one sentence ("and 6
 * more allocations, 48.0 MiB, from 3 other sites or kinds ..."), into z; NULL when every group is listed. */
const char *vt__fmt_groups_more(const struct vt_result *r, const struct vt_device *d, char *z, size_t n);
/*
 * The allocation sites of t a report lists (--by-site): *paIdx receives a malloc'd array of
 * the index of every site that counted an allocation, largest peak live bytes first; returns
 * how many of them to list (at most --top), or -1 when out of memory. The caller frees *paIdx.
 */
int vt__report_sites(const struct vt_result *r, const struct vt_trace *t, int **paIdx);
/* Why t has no phases (t->ph.n == 0): inferred without confidence, or none found; into z (size n). */
void vt__fmt_no_phases(const struct vt_trace *t, char *z, size_t n);
/* The iterations the phases of t hold, into z: "28 iterations", or, when some of the trace's lie outside them
 * (--phase choosing some ranges), "12 of the trace's 28 iterations". Returns z. */
const char *vt__fmt_phase_iters(const struct vt_trace *t, char *z, size_t n);
/* A breakdown part's name for people: the category's, with the library's module ("other library (libfoo.so)"). */
const char *vt__fmt_bdname(const struct vt_bdpart *p, char *z, size_t n);
/* Its share of the breakdown's total as every format shows it ("57%", "<1%"); returns z. */
const char *vt__fmt_bdshare(const struct vt_breakdown *b, const struct vt_bdpart *p, char *z, size_t n);
/* The heading of a breakdown: "what it was (reserved, 1.29 GiB; categories of segments)", of a device's peak (t not
 * NULL) with its moment: "what it was at 810.9 ms (reserved, ...)"; returns z. */
const char *vt__fmt_bdhead(const struct vt_trace *t, const struct vt_breakdown *b, char *z, size_t n);
/* When device d's list live at its peak (and its breakdown) stand, as reports say it: "at 810.9 ms"; empty when not
 * known. Into z (size n); returns z. */
const char *vt__fmt_atpeak(const struct vt_trace *t, const struct vt_device *d, char *z, size_t n);
/*
 * What would fit on device d, one sentence: "needs 54.8 GiB of 80.0 GiB (with an assumed 512 MiB
 * CUDA context): 25.2 GiB headroom; 31.2 GiB grows with the batch, 23.6 GiB does not: the batch
 * can grow 1.80x (batch 460 of 256)". Into z; returns 0 (z empty) when there is no estimate.
 */
int vt__fmt_fit(const struct vt_device *d, char *z, size_t n);
/* One saving as every format shows it: "bf16/fp16 activations (autocast): 15.6 GiB (if ASSUMPTION)". */
const char *vt__fmt_saving(const struct vt_fitsave *s, char *z, size_t n);
/* ---- bdbar.c: breakdowns in HTML ---- */
/* The color of category cat in every HTML bar. */
const char *vt__cat_color(int cat);
/* Parts a[0..n) as one SVG stacked bar, scale bytes the full width, zLabel (may be NULL) after it. */
void vt__html_bdbar(FILE *f, const struct vt_bdpart *a, int n, int64_t scale, const char *zLabel);
/* Breakdown b's parts as a table: color, category, bytes, share, evidence. */
void vt__html_bdlegend(FILE *f, const struct vt_breakdown *b);
/* A heading (zWhat and b's basis), the bar and the table. */
void vt__html_breakdown(FILE *f, const struct vt_trace *t, const char *zWhat, const struct vt_breakdown *b);
/* Every device peak's breakdown with what would fit, then the first OOMs' breakdowns, of trace t. */
void vt__html_trace_breakdowns(FILE *f, const struct vt_trace *t);

/* ---- diffout.c: two runs compared, in every format ---- */
int vt__diff_text(FILE *f, const struct vt_diff *d, int nTop);
int vt__diff_json(FILE *f, const struct vt_diff *d);
int vt__diff_markdown(FILE *f, const struct vt_diff *d, int nTop);
int vt__diff_html(FILE *f, const struct vt_diff *d, int nTop);

/* Phase p's peak as every format shows it ("1.50 GiB"; "2.60 GiB (running sum)": an importer's total that peaked in it
 * where no lifetime is known; else "unknown" without memory data); returns z (n >= 32). */
const char *vt__fmt_phase_peak(const struct vt_trace *t, const struct vt_phase *p, char *z, size_t n);

/* What r's traces let the detectors judge: memory (an allocation or an OOM recorded), copies (a host-device copy). */
void vt__report_judged(const struct vt_result *r, int *pbMemory, int *pbCopies);
/* What every format says when r has no finding: "No problems found." only where memory could be judged ("No problems
 * found of at least 100 GiB (--min-bytes)." with a --min-bytes above the default), else what was missing ("Nothing
 * could be judged: ..."). Into z (size n); returns z. */
const char *vt__fmt_no_findings(const struct vt_result *r, char *z, size_t n);

#endif
