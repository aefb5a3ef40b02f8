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
/* How many of d's groups live at its peak a report lists: the largest, at most --top and 5. */
int vt__report_groups(const struct vt_result *r, const struct vt_device *d);
/*
 * The allocation sites of t a report lists (--by-site): *paIdx receives a malloc'd array of
 * every site's index, largest peak live bytes first; returns how many of them to list (at
 * most --top), or -1 when out of memory. The caller frees *paIdx.
 */
int vt__report_sites(const struct vt_result *r, const struct vt_trace *t, int **paIdx);
/* Why t has no phases (t->ph.n == 0): inferred without confidence, or none found; into z (size n). */
void vt__fmt_no_phases(const struct vt_trace *t, char *z, size_t n);
/* Phase p's peak as every format shows it ("1.50 GiB"; "2.60 GiB (running sum)": an importer's total that peaked in it
 * where no lifetime is known; else "unknown" without memory data); returns z (n >= 32). */
const char *vt__fmt_phase_peak(const struct vt_trace *t, const struct vt_phase *p, char *z, size_t n);

/* What r's traces let the detectors judge: memory (an allocation or an OOM recorded), copies (a host-device copy). */
void vt__report_judged(const struct vt_result *r, int *pbMemory, int *pbCopies);
/* What every format says when r has no finding: "No problems found." only where memory could be judged, else
 * what was missing ("Nothing could be judged: ..."). Into z (size n); returns z. */
const char *vt__fmt_no_findings(const struct vt_result *r, char *z, size_t n);

#endif
