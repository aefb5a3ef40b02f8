/* Internal: what `vramtrace info` reports about a trace, loaded through the read layer, and its two outputs. */
#ifndef VT_ANALYZER_INFO_H
#define VT_ANALYZER_INFO_H

#include <stdint.h>
#include <stdio.h>

#include "read/figures.h"
#include "read/read.h"

#define VT_INFO_NUL INT64_MIN /* an unknown integer (shown as "?" or null) */

struct info_dev {
    long long id, total, ccMajor, ccMinor, sm, pciBus, pciDev, bw;
    char *zName, *zUuid;
};
struct info_oom {
    int64_t ts, api, device, bytes, status, freeBytes, totalBytes;
};
struct info_drop {
    int64_t source, count;
    char *zWhat;
    enum vt_dropclass cls; /* lost, lost to a failed write, or omitted as asked (vt__read_drop_class) */
};
struct info_ovh {
    char *zSource, *zKind;
    int64_t rows, events, ns;
};

/* The tables info counts, in report order (info_load.c). */
extern const char *const vt__info_tables[];
#define VT_INFO_NTABLE 22

/* Everything info reports about one trace. */
struct trace_info {
    struct vt_tracefile f;        /* open through the read layer: guard, scan, time range */
    int64_t fileBytes;
    struct info_dev *aDev;
    int nDev;
    struct info_oom *aOom;        /* the first VT_INFO_MAX_OOM */
    int nOom;
    struct info_drop *aDrop;
    int nDrop;
    struct info_ovh *aOvh;
    int nOvh;
    int64_t aCount[VT_INFO_NTABLE]; /* rows kept per table, -1 when absent */
    int64_t nDropTotal;           /* records lost (never those omitted as asked) */
    int64_t nOmitted;             /* records the size bound left out as asked (record --max-size) */
};
#define VT_INFO_MAX_OOM 100

/*
 * Open zPath and read what info reports (bFull 0: what record's summary needs). Returns
 * VT_EXIT_OK, or an exit code after one line; p must be freed with vt__info_free either way.
 */
int vt__info_load(struct trace_info *p, const char *zPath, int bFull);
void vt__info_free(struct trace_info *p);
/* The value of meta key zKey, NULL when absent. */
const char *vt__info_meta(const struct trace_info *p, const char *zKey);
/* A meta value as a whole number, VT_INFO_NUL when absent or not one. */
int64_t vt__info_meta_int(const struct trace_info *p, const char *zKey);
/* Rows of table zName, -1 when absent. */
int64_t vt__info_count(const struct trace_info *p, const char *zName);

/*
 * Kernels the trace holds: its kernel rows plus those its always-on summaries count (meta
 * kernel_summary_kernels), which go into *pnSummarized (0 outside that mode).
 */
int64_t vt__info_kernels(const struct trace_info *p, int64_t *pnSummarized);
/* Meta keys shown in their own place (the rest go under "meta"). */
int vt__info_meta_known(const char *zKey);

/* The full text report of one trace (info_text.c). */
void vt__info_text(FILE *f, const struct trace_info *p);
/* The short summary `record` prints for each trace it wrote (info_text.c): devices, duration, allocations, peak
 * live device bytes, other processes where record read NVML, copies, kernels, OOMs, dropped records, each line
 * indented. A VT_EXIT code. */
int vt__info_summary(FILE *f, const char *zPath);
/* One trace as a JSON object, keys documented in docs/cli.md (info_json.c). */
void vt__info_json(FILE *f, const struct trace_info *p);

#endif
