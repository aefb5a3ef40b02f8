/* Internal: the analysis pipeline's plain structs and stage entry points (load → report). */
#ifndef VT_ANALYZER_ANALYSIS_H
#define VT_ANALYZER_ANALYSIS_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

#include "util/text.h"
#include "vramtrace/schema.h"

/*
 * Pipeline, one file per stage, stages pass these structs (never SQLite handles
 * beyond load/replay/writeback):
 *   load.c       meta, devices, call sites, NVTX-independent facts
 *   phase.c      phases and iterations (NVTX, else inferred from kernel names)
 *   lifetime.c   streaming replay of memory events and uses: lifetimes, live set
 *   timeline.c   live bytes per device, peaks, per-phase and per-iteration minima
 *   detect_*.c   one detector each, appending vt_finding rows
 *   writeback.c  lifetime / phase / finding tables written back into the trace
 *   report_*.c   text, JSON, Markdown, HTML
 */

#define VT_REPORT_VERSION 1
#define VT_TIMELINE_BUCKETS 400 /* points per device in the downsampled timeline */
#define VT_SLICES 16            /* time slices per phase / per trace for baseline trends */
#define VT_TOPMAX 32            /* most allocations kept in a peak / OOM snapshot */

enum vt_sev { VT_SEV_INFO = 0, VT_SEV_LOW, VT_SEV_MEDIUM, VT_SEV_HIGH };
enum vt_phase_kind { VT_PHASE_TRAIN = 0, VT_PHASE_EVAL, VT_PHASE_OTHER };
enum vt_life_status {
    VT_LIFE_FREED = 0,     /* "freed" */
    VT_LIFE_LIVE_AT_END,   /* "live_at_end" */
    VT_LIFE_FREE_UNKNOWN,  /* "free_unknown": a free of an address never allocated in the trace */
    VT_LIFE_DOUBLE_FREE,   /* "double_free": a free of an address already freed */
    VT_LIFE_FREE_MISSING   /* "free_missing": a new allocation at its address came first */
};
const char *vt__life_status_name(int status);
enum vt_format { VT_FMT_TEXT = 0, VT_FMT_JSON, VT_FMT_MARKDOWN, VT_FMT_HTML };

struct vt_opts {
    enum vt_format format;
    const char *zOut;       /* NULL: stdout */
    const char *zPhaseRe;   /* NVTX ranges that are phases */
    const char *zEvalRe;    /* which phase names are evaluation */
    const char *zIterRe;    /* NVTX ranges that are iterations */
    int64_t minBytes;       /* findings below this are not reported */
    int nTop;               /* list lengths */
    int failOn;             /* -1: never; else enum vt_sev */
    int bNoWrite;
    int bBySite;
};

/* Fill *o with the defaults documented in --help and docs/analysis.md. */
void vt__opts_default(struct vt_opts *o);

/* One reconstructed allocation lifetime (live ones sit in the live set). */
struct vt_life {
    int64_t address, bytes;
    int64_t allocTs, freeTs;       /* -1 when unknown / not freed */
    int64_t firstUse, lastUse;     /* -1 when never used */
    int64_t useCount;
    int64_t allocEventId, freeEventId, stackId; /* -1 when absent */
    int device, memKind, allocApi, freeApi;
    int acct;                      /* device id whose live bytes it counts in; -1 pinned host; -2 managed; -3 none */
    int site;                      /* index into vt_trace.aSite */
    int phase;                     /* phase index at allocation, -1 none */
    int status;                    /* enum vt_life_status */
    int liveIdx;                   /* index in the replay's dense live array */
    int bInternal;                 /* made by the CUDA runtime/driver (no API call, no site) */
};

/* One allocation kept in a snapshot (peak, OOM, live at end). */
struct vt_snap {
    int64_t address, bytes, allocTs, lastUse;
    int site, memKind;
};

/* The allocations of one call site and memory kind live at one moment (peak, OOM snapshots). */
struct vt_group {
    int64_t count, bytes;   /* allocations in the group, their bytes */
    int site, memKind;
    struct vt_snap largest; /* its largest allocation */
};

/* A call site: a deduplicated stack, or (without stacks) an allocation size class. */
struct vt_site {
    int64_t key;        /* stack id >= 0, or -(bytes)-1 for "size class" when no stack */
    int64_t stackId;    /* -1 when not recorded */
    int bNccl;          /* allocated from inside NCCL: communication buffers */
    char *zSite;        /* "file:line in function", or a description */
    int64_t nAlloc, totalBytes, nLive, liveBytes, peakLiveBytes;
    /* growth across iteration boundaries */
    int64_t firstBoundaryBytes, prevBoundaryBytes;
    int64_t firstBoundaryTs, lastBoundaryTs; /* times of the first and latest boundary sampled */
    int nBoundary, nUp, nDown;
    int seenBoundary;       /* boundaries already accounted (lifetime.c: site_catch_up) */
    int64_t maxDrop;
    /* leak at end (filled at the end of replay) */
    int64_t endCount, endBytes, endFirstTs, endLastTs, endUsedLate;
    /* retained: idle after last use, and held across an evaluation phase */
    int64_t idleCount, idleBytes, idleMaxNs, idleFirstTs, idleLastTs;
    int64_t crossCount, crossBytes, crossFirstTs, crossLastTs;
    int crossPhase;
};

struct vt_device {
    int id;                 /* CUDA device id; -1 pinned host memory; -2 managed memory */
    char zName[128];
    int64_t totalBytes;
    int64_t live, peak, peakTs;
    int64_t poolReserved, poolUsed, poolPeakReserved;
    int64_t aMax[VT_TIMELINE_BUCKETS]; /* highest live bytes in each bucket, -1 = no event */
    int64_t aLast[VT_TIMELINE_BUCKETS]; /* live bytes after the bucket's last event, -1 = no event */
    int64_t aPool[VT_TIMELINE_BUCKETS]; /* pool reserved (latest) in each bucket, -1 none */
    int64_t slice[VT_SLICES];           /* lowest live bytes in each trace slice */
    struct vt_snap aTop[VT_TOPMAX];     /* largest allocations live at the peak */
    int nTop;
    struct vt_group aGroup[VT_TOPMAX];  /* what was live at the peak by site and kind, largest first */
    int nGroup;
    int64_t snapPeak;                   /* live bytes when aTop was taken */
    int bPeakDirty;
    int nSnapshots;
};

struct vt_phase {
    int kind;               /* enum vt_phase_kind */
    char zName[96];
    int64_t start, end;
    const char *zSource;    /* "nvtx" or "kernels" */
    int nIter;
    int64_t peak, peakTs, startLive, minLive;
    int64_t carried;        /* bytes allocated in training, live at start, never used after it */
    int64_t slice[VT_SLICES];
    int firstIter, lastIter; /* iteration index range inside it, -1 when none */
    struct vt_snap aTop[8];  /* largest allocations live at its peak (all devices) */
    int nTop, bPeakDirty, nSnapshots;
    struct vt_group aGroup[8]; /* what was live at its peak by site and kind, largest first */
    int nGroup;
    int64_t snapPeak;
};

struct vt_iter {
    int64_t start, end;
    int phase;
    int64_t minLive, maxLive;
};

struct vt_oom {
    int64_t ts, requested, freeBytes, totalBytes, held, poolCached, others;
    int device, api, site;
    const char *zVerdict;   /* "fragmentation/caching", "another process", "real demand" */
    struct vt_snap aTop[VT_TOPMAX];
    int nTop;
    struct vt_group aGroup[VT_TOPMAX]; /* what was live on its device by site and kind, largest first */
    int nGroup;
};

struct vt_xfer {           /* one direction: 0 HtoD, 1 DtoH */
    int64_t count, bytes, ns;
    int64_t pageCount, pageBytes, pageNs;
    double bestBw;          /* bytes/ns of the fastest copy >= 64 KiB, any host kind */
    int64_t firstPageTs, lastPageTs;
};

struct vt_finding {
    const char *zKind;      /* leak, retained, validation_spike, transfer, oom, info */
    int severity;
    char *zTitle, *zEvidence, *zFix, *zSite;
    int64_t bytes, count, firstTs, lastTs, stackId;
    int device;
    char zPhase[96];
    int trace;              /* index of the trace (process) */
};

#define VT_SCAN_N 5 /* the large event tables vt__scan reads (load.c: S_*) */

/* Everything known about one trace (one process) after analysis. */
struct vt_trace {
    const char *zPath;
    char zPid[32], zRank[32], zHost[128], zCmd[256];
    int bTensors, bSegments, bCleanClose, bWritten, bReadOnly;
    char *azNote[16];
    int nNote;
    int64_t t0, t1;
    /* lifetimes */
    int64_t nAlloc, nFree, nFreeUnknown, nDoubleFree, nFreeMissing, nLiveEnd, liveEndBytes;
    int64_t nInternalEnd, internalEndBytes; /* runtime/driver allocations live at exit */
    int64_t idleNs;         /* retained: idle threshold used */
    int64_t nKernelUse, nCopyUse, nUseMatched; /* use events read; those that hit a live allocation */
    int bHaveKernelUses, bHaveCopyAddr;
    int64_t nDevAlloc, nSegmentLike;
    /* found by the guard's pass over the large tables (load.c: vt__scan) */
    /* reorder window of each reader's rows in rowid order (vt_rows): 0 time order, w > 0 each row has at most
     * w older-timed rows before it (restored through a heap of w + 1 rows), -1 read through the time indexes */
    int wMem, wUse, wKer, wCopy, wSet;
    int bSegKnown;          /* nDevAlloc and nSegmentLike counted */
    int mGuarded;           /* bit k: large table k holds impossible rows (load.c: S_*) */
    /* schema version 2 with the large tables exactly as the tracer makes them (vt__schema_time_base): the
     * pass and the readers take the stored t and dur and add timeBase instead of reading the generated
     * start, end, ts (each a range check and a sum per row) */
    int bStored;
    int64_t timeBase;
    int bXferDone;          /* the transfer pass was made during vt__scan */
    int mScanned;           /* bit k: the pass judged every row of large table k (no real number): the facts below hold */
    int mScanAny;           /* bit k: table k holds a kernel use (buffer_use) or an address (memcpy, memset) */
    /* per large table, of its possible rows (-1 none): min/max of the memory events' times over 0, min(start)
     * and max(end) of the kernels, copies and memsets with start > 0 AND end >= start */
    int64_t aScanT0[VT_SCAN_N], aScanT1[VT_SCAN_N];
    /* devices (index 0.. nDev-1); pinned host memory is the entry with id -1 */
    struct vt_device *aDev;
    int nDev;
    struct vt_phase *aPhase;
    int nPhase;
    struct vt_iter *aIter;
    int nIter;
    int curPhase, curIter;  /* replay cursors (timeline.c) */
    int64_t *aBoundary;     /* growth boundaries (lifetime.c): iteration ends, or slice ends */
    int nBoundaryTs, bSliceBoundaries;
    int nBoundaryDone;      /* boundaries passed so far in the replay */
    struct vt_life **apLive; /* the replay's live set, for phase peak snapshots */
    int nLive;
    const char *zPhaseSource; /* "nvtx", "kernels", or "none" */
    struct vt_site *aSite;
    int nSite, nSiteAlloc;
    int *aSiteHash;
    int nSiteHash;
    struct vt_oom *aOom;
    int nOom;
    struct vt_xfer xfer[2];
    int64_t copyNs, copySerialNs, kernelBusyNs;
    int64_t pinnedSlice[VT_SLICES];
    int64_t totalLiveNow, totalPeak, totalPeakTs;
    struct vt_snap aEnd[VT_TOPMAX]; /* largest allocations live at the end */
    int nEnd;
    /* scratch of vt__live_snapshot: a chain head per site, accumulators with their chain links */
    int *aGroupHead, nGroupHead;
    struct vt_group *aGroupAcc;
    int *aGroupNext, nGroupAcc;
    int bGroupNoMem;        /* a grouping ran out of memory (the replay then fails) */
    sqlite3 *db;            /* open during load/replay/writeback only */
    sqlite3_stmt *pLifeIns; /* lifetime insert when writing back */
};

/* The findings of all traces, sorted worst first. */
struct vt_result {
    struct vt_trace *aTrace;
    int nTrace;
    struct vt_finding *aFind;
    int nFind, nFindAlloc;
    const struct vt_opts *pOpts;
};

/* ---- shared helpers (util.c) ---- */
const char *vt__sev_name(int sev);
int vt__sev_parse(const char *z);                      /* -1 if unknown */
void vt__trace_note(struct vt_trace *t, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
/* Append a finding (strings are taken over, may be NULL). Returns it or NULL on OOM. */
struct vt_finding *vt__finding_add(struct vt_result *r, int trace, const char *zKind, int sev);
/* Index of the phase containing ts, or -1. */
int vt__phase_at(const struct vt_trace *t, int64_t ts);
const char *vt__phase_kind_name(int kind);
void vt__trace_free(struct vt_trace *t);
void vt__result_free(struct vt_result *r);

/* ---- stages; each returns a VT_EXIT_* code and prints one line on error ---- */
/* load.c: hide impossible rows (vt__trace_guard's views) and count them into *pnHidden, reading each
 * large event table once in rowid order for the facts vt__load and the replay need */
int vt__scan(struct vt_trace *t, int64_t *pnHidden);
/* load.c: SQL reading zTable in time order, by rowid when w >= 0 (see vt__scan); malloc'd, NULL on OOM */
char *vt__ordered_sql(const struct vt_trace *t, int w, const char *zCols, const char *zTable, const char *zFilter,
                      const char *zOrder);
/*
 * load.c: a reader of one input in time order. With w <= 0 its statement is already in that order
 * (the ordered SQL, or rowid order found to be time order) and rows are read from it as they come;
 * with w > 0 it reads rowid order (vt__ordered_sql with that w) and restores the order (time, then
 * rowid: the ordered SQL's order) through a min-heap of w + 1 rows of nCol integer columns, time
 * first. Memory: (w + 1) * (sizeof(struct vt_row) + 20) bytes, w <= VT_REORDER_CAP.
 */
#define VT_REORDER_CAP 65536
#define VT_ROW_MAXCOL 12
struct vt_row {
    int64_t a[VT_ROW_MAXCOL]; /* sqlite3_column_int64 of each column */
    uint32_t mNull;           /* bit i: column i is NULL */
};
struct vt_rows {
    sqlite3_stmt *pStmt;
    int nCol, w;
    int bRow;                 /* a current row is there (after vt__rows_next) */
    int64_t ts;               /* its time (column 0) */
    const struct vt_row *pRow; /* it, when w > 0 (else read from pStmt) */
    struct vt_row *aSlot;     /* w + 1 row slots */
    struct vt_rows_ent { uint64_t ts, tag; } *aHeap; /* time and order read, slot (load.c) */
    int nHeap, *aFree, nFree, lastSlot, bEof;
    int64_t nRead;
};
int vt__rows_open(struct vt_rows *c, sqlite3 *db, const char *zSql, int nCol, int w); /* SQLite code */
int vt__rows_next(struct vt_rows *c);  /* step to the next row in time order (c->bRow); SQLite code */
void vt__rows_close(struct vt_rows *c); /* release (c zeroed or opened) */
/* Column i of the current row: its int64 value, and whether it is NULL. */
static inline int64_t vt__rows_i64(const struct vt_rows *c, int i)
{
    return c->w > 0 ? c->pRow->a[i] : sqlite3_column_int64(c->pStmt, i);
}
static inline int vt__rows_null(const struct vt_rows *c, int i)
{
    return c->w > 0 ? (int)(c->pRow->mNull >> i & 1) : sqlite3_column_type(c->pStmt, i) == SQLITE_NULL;
}
int vt__load(struct vt_trace *t, const struct vt_opts *o);          /* load.c */
int vt__site_get(struct vt_trace *t, int64_t stackId, int64_t bytes); /* load.c: site index, -1 OOM */
int vt__phases(struct vt_trace *t, const struct vt_opts *o);        /* phase.c */
int vt__replay(struct vt_trace *t, const struct vt_opts *o);        /* lifetime.c */
int vt__transfers(struct vt_trace *t);                              /* detect_transfer.c (pass over copies) */
/* detect_transfer.c: the transfer pass fed kernel by kernel in start order (vt__scan feeds it while
 * reading the kernel table); begin resets the totals, end with bFinish = 0 only releases. SQLite codes. */
struct vt_xfer_run;
int vt__xfer_begin(struct vt_trace *t, struct vt_xfer_run **px);
int vt__xfer_kernel(struct vt_xfer_run *x, int64_t start, int64_t end);
int vt__xfer_end(struct vt_xfer_run *x, int bFinish);

/* timeline.c: called by the replay after every change of live bytes */
int vt__dev_index(struct vt_trace *t, int device);                  /* creates entries, -1 OOM */
void vt__timeline_begin(struct vt_trace *t);
void vt__timeline_update(struct vt_trace *t, int iDev, int64_t ts);
void vt__timeline_snapshot(struct vt_trace *t, int iDev, struct vt_life **apLive, int nLive);
void vt__timeline_phase_snapshot(struct vt_trace *t); /* current phase, before live bytes drop */
void vt__timeline_phase_step(struct vt_trace *t, int64_t ts); /* phase/iteration minima */
/* Insert l into the top list a (n entries, descending by bytes, at most cap). */
void vt__top_insert(struct vt_snap *a, int *pN, int cap, const struct vt_life *l);

/* live_group.c: what is live, by call site and memory kind */
#define VT_ACCT_DEVICES (-4) /* vt__live_snapshot: every device (acct >= 0), no host or managed memory */
/* the largest allocations live in acct and all of them by site and kind, in one pass; 0 or -1 (OOM) */
int vt__live_snapshot(struct vt_trace *t, struct vt_life *const *apLive, int nLive, int acct, struct vt_snap *aTop,
                      int *pnTop, int nTopCap, struct vt_group *aGroup, int *pnGroup, int nGroupCap);
/* "3 allocations, 3.00 GiB from SITE (device), largest 1.00 GiB", into z */
void vt__fmt_group(const struct vt_trace *t, const struct vt_group *g, char *z, size_t n);

/* detectors: append findings for trace index i */
int vt__detect_leak(struct vt_result *r, int i);
int vt__detect_retained(struct vt_result *r, int i);
int vt__detect_spike(struct vt_result *r, int i);
int vt__detect_transfer(struct vt_result *r, int i);
int vt__detect_oom(struct vt_result *r, int i);
void vt__findings_sort(struct vt_result *r);
/*
 * Rising baseline test shared by the detectors (analysis.c): a[0..n-1] with
 * -1 entries carried forward from the previous value. Growing when at least 4
 * steps exist, the total rise is >= minRise, no single drop exceeds a quarter of
 * the rise, and either 60 % of steps go up or (a staircase) at least 3 do, with
 * a rise in each third of the steps. *pRise receives last - first.
 */
int vt__trend(const int64_t *a, int n, int64_t minRise, int64_t *pRise);
/* Largest device (not pinned host) peak of the trace, for relative severities. */
int64_t vt__main_peak(const struct vt_trace *t);
/* Number of findings of trace iTrace; *pWorst receives their highest severity (-1 if none). */
int vt__trace_findings(const struct vt_result *r, int iTrace, int *pWorst);
/* Offset of ts from the trace start ("0 s", "12.0 us", "1.25 s"; "?" when unknown), into z. */
void vt__fmt_at(const struct vt_trace *t, int64_t ts, char *z, size_t n);

/* write-back (writeback.c) */
int vt__writeback_begin(struct vt_trace *t);   /* DDL + lifetime insert statement */
int vt__writeback_life(struct vt_trace *t, const struct vt_life *l);
int vt__writeback_end(struct vt_result *r, int i); /* phases, findings, commit */

/* reports: return 0 or -1 on write error */
int vt__report_text(FILE *f, const struct vt_result *r);
int vt__report_json(FILE *f, const struct vt_result *r);
int vt__report_markdown(FILE *f, const struct vt_result *r);
int vt__report_html(FILE *f, const struct vt_result *r);

/* The whole pipeline for the given paths (used by cmd_analyze.c and the tests). */
int vt__analyze(const char **azPath, int nPath, const struct vt_opts *o, struct vt_result *r);

#endif
