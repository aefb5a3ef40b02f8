/* Internal: the read layer: every subcommand opens, validates, guards and reads traces through it. */
#ifndef VT_ANALYZER_READ_H
#define VT_ANALYZER_READ_H

#include <regex.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/errors.h"
#include "vramtrace/schema.h"

/*
 * One way into a trace for analyze, info, export and sql:
 *   open.c   open a file (a trace, or another tool's file imported into a temporary trace),
 *            validate it, take one read snapshot, optionally make it writable for results;
 *   guard.c  the rows a trace can legally hold (schema.h VT_DOMAIN_LIST), hidden from every
 *            reader by temporary views where a table holds others, and the checks in C; the
 *            small timed tables' time bounds, read with the guard's count;
 *   scan.c   one pass over each large event table in rowid order: the guard's count, how far
 *            the rows lie from time order, time bounds and the figures every reader needs;
 *   meta.c   meta, devices, the trace's time range and the notes about how it was recorded;
 *   rows.c   reading a table in time order (by rowid through a reorder window where the scan
 *            found that enough);
 *   sites.c  call sites: a stack as the line to show ("file:line in function");
 *   live.c   the live set and the one rule for live bytes (docs/schema.md, "Live bytes");
 *   figures.c the figure source: the one time origin, duration, level, counts and peaks (figures.h).
 * Nothing here knows what a finding is.
 */

/* The large event tables, read row by row by the scan (the others are small). */
enum vt_tbl { VT_T_MEM = 0, VT_T_TENSOR, VT_T_USE, VT_T_COPY, VT_T_SET, VT_T_KER, VT_T_N };
/* The name of large table k. */
static inline const char *vt__tbl_name(int k)
{
    static const char *const az[VT_T_N] = {"memory_event", "tensor_event", "buffer_use", "memcpy", "memset", "kernel"};
    return k >= 0 && k < VT_T_N ? az[k] : "?";
}

/*
 * The rows of one large table the replay takes (time known, possible, kernel-argument uses only), kept
 * by the scan when asked (VT_READ_KEEP) so that the replay reads them from memory instead of SQLite:
 * in rowid order, each row a varint mask of its NULL columns, then each other column as the zigzag
 * varint of its difference from the same column's last value (rows.c reads them back, as vt_rows).
 * Columns in the order of the replay's SELECT (time first); a few bytes a row, in chunks that the one
 * reader releases as it passes them (a row never straddles two).
 */
struct vt_keptchunk {
    struct vt_keptchunk *pNext;
    size_t n;               /* bytes used of a[] (VT_KEEP_CHUNK) */
    unsigned char a[];
};
#define VT_KEEP_CHUNK ((size_t)1 << 20)
struct vt_kept {
    struct vt_keptchunk *pFirst, *pLast; /* the chunks not yet read */
    size_t nBytes;          /* chunks made, bytes */
    int nCol;
    int bOk;                /* every row the replay takes is here (else it reads the table) */
    int64_t nRow;
    int64_t aLast[16];      /* each column's last value (the encoder's state; VT_ROW_MAXCOL) */
};

/* What the scan found in one large table. */
struct vt_tblfacts {
    int bPresent;       /* the table exists (tensor_event: schema 3) */
    int bScanned;       /* the pass judged every row (no real number): the figures below are exact */
    int64_t nRow;       /* rows kept (possible) */
    int64_t nHidden;    /* impossible rows, hidden from every reader */
    int64_t nNoTime;    /* kept rows whose time is unknown (NULL, or 0 in schema 1 and 2) */
    int64_t t0, t1;     /* earliest start and latest end of the rows with known times, -1 when none */
    int w;              /* reorder window: 0 rowid order is time order, w > 0 at most w rows out of place,
                         * -1 read through an ORDER BY */
    int bAny;           /* buffer_use: kernel-argument uses exist; memcpy, memset: addresses exist; kernel:
                         * launches whose arguments were not scanned exist (args_scanned 0: their uses unknown) */
    const char *zWorstCol; /* the column that made the most rows impossible (static), NULL when none */
    int64_t nWorst;        /* how many */
    char *zGuard;          /* the guard's condition on its possible rows (sqlite3_malloc'd), NULL when none */
    struct vt_kept keep;   /* the rows the replay takes, when kept (memory_event, tensor_event, buffer_use) */
};

/*
 * The small timed tables (guard.c: oom_event, nvtx_range, api_call, sync_event, pool_event, in that order):
 * the time bounds of the rows the guard lets through, as the trace's time range takes them (meta.c).
 */
#define VT_SMALL_N 5
struct vt_smallfacts {
    int64_t t0, t1;     /* min(start) and max(end, or start where the end is before it); -1: none */
    int64_t nNoTime;    /* rows whose start is unknown or not after 0 */
};

/*
 * api_call's calls folded into memory_event (schema 6), judged in the scan's pass over memory_event
 * (vt__guard_fold_row) as the api_call view and the guard would judge them, so that api_call's bounds read
 * only the view's other arms (guard.c).
 */
struct vt_fold {
    int bOn;            /* the view is the one this build writes: the pass calls vt__guard_fold_row where api_call_sig
                         * has rows (nSig: else no call is folded) */
    int bBad;           /* a value only SQL judges exactly: the whole view is read instead */
    int64_t base;       /* the view's time base */
    int64_t *aSig, nSig, iLast; /* api_call_sig's ids, ascending; the one found last */
    char *zArms;        /* the view's arms but memory_event's (sqlite3_malloc'd) */
    int64_t nHidden;    /* calls the guard hides */
    struct vt_smallfacts b; /* the others' bounds */
};

#define VT_KIND_SLOTS 16 /* memory and copy kinds counted one by one; the last slot takes any other */
struct vt_kindcount {
    int64_t n, bytes, pageable; /* pageable: copies from or to pageable memory */
};

/*
 * A window in which the tracer lent CUPTI to another client, the job's own torch.profiler (meta
 * cupti_lend.N.*): absolute ns. GPU activity (kernels, copies, sets, CUPTI's allocation records,
 * NVTX ranges) is unknown in [from, until); API calls are unknown in [apiFrom, apiUntil) when the
 * subscription went with it. until / apiUntil -1: to the end of the trace; apiFrom -1: none.
 */
struct vt_lend {
    int64_t from, until, apiFrom, apiUntil;
    char zClient[48];
    char zApiHeldBy[64]; /* who kept the subscription, "" when it came back */
};

struct vt_devinfo {
    int id;
    char zName[128];
    int64_t totalBytes; /* -1 unknown */
};

/* ---- the figures every command prints (their functions, and how to use them: figures.h) ---- */

/* What a trace's allocation rows are (f->fig.level). */
enum vt_level {
    VT_LEVEL_NONE = 0,    /* no allocation known */
    VT_LEVEL_SEGMENTS,    /* CUDA allocations that are a caching allocator's segments: reserved memory only */
    VT_LEVEL_TENSORS,     /* an allocator's blocks (tensors) only: allocated memory only */
    VT_LEVEL_BOTH,        /* segments, and the allocator's blocks inside them: reserved and allocated */
    VT_LEVEL_ALLOCATIONS, /* CUDA allocations one per buffer (no caching allocator between): allocated = reserved */
    VT_LEVEL_TOTALS       /* no allocation, only an importer's running total (torch.profiler without 'Addr') */
};

/* How lifetimes began and ended (the figures' counts, and the analysis' use counts beside them). */
struct vt_lifecounts {
    int64_t nAlloc, allocBytes, nFree, nFreeUnknown, nDoubleFree, nFreeMissing, nLiveEnd, liveEndBytes;
    int64_t nInternalEnd, internalEndBytes; /* runtime/driver allocations live at exit */
    int64_t nTensorAlloc;   /* blocks of a framework allocator */
    int64_t nTensorLiveEnd, tensorLiveEndBytes; /* those live at the end */
    int bTensorDevice;      /* the blocks are the allocations counted above (no CUDA allocation in the trace) */
    int64_t nTensorStray;   /* frees of blocks the history never showed allocated */
    int64_t nKernelUse, nCopyUse, nUseMatched; /* use events read; those that hit a live allocation (analysis only) */
};

/* The peaks of one account: a device, or pinned or managed host memory. Bytes and times -1: unknown. */
struct vt_figdev {
    int acct;                 /* a device id, VT_ACCT_PINNED or VT_ACCT_MANAGED */
    int64_t total;            /* the device's memory, -1 unknown */
    int64_t allocated, allocatedTs; /* highest allocated: the allocator's blocks (tensors), or CUDA allocations
                                     * one per buffer, or an importer's running total (bTotalsOnly) */
    int64_t reserved, reservedTs;   /* highest reserved: CUDA memory the process held (a caching allocator's
                                     * segments, a stream-ordered pool's size, allocations one per buffer) */
    int64_t used, usedTs;     /* highest device memory in use by every process and the CUDA context (total less
                               * free) where the trace knows the device's free memory (at OOMs, and the
                               * tracer's samples: meta device.D.mem_sample.K) */
    int64_t procAllocated, procReserved; /* the process's own peaks where its memory began before the trace's
                                          * window (a torch.profiler trace's Total Allocated, Total Reserved) */
    int64_t before;           /* allocated before the window began */
    int bTotalsOnly;          /* allocated is an importer's running total: no lifetime is known */
};

/* The figures of one trace (f->fig). */
struct vt_figures {
    int64_t origin;           /* the time 0 of every printed time, on this trace's clock (vt__figures_origin) */
    int64_t shift;            /* ns added to this trace's times to put them on the clock of the traces read
                               * with it (wall-clock alignment of several traces), 0 for one trace */
    int bWall;                /* the traces read together are aligned on the wall clock (shift) */
    int bOtherRuns;           /* read with traces of other runs (no two meet in time): its times from its own start */
    int64_t duration;         /* first to last event, -1 when no event has a known time */
    int level;                /* enum vt_level */
    struct vt_lifecounts lc;
    struct vt_figdev *aDev;   /* devices by id, then pinned, then managed host memory; nDev of them */
    int nDev;
    int bTaken;               /* counts, level and peaks are filled */
};

/* One meta row. */
struct vt_metakv {
    char *zKey, *zValue;
};

/* Why results could not be written back into a trace opened with VT_READ_WRITE (meta.c says it in a note). */
enum vt_nowrite {
    VT_NOWRITE_NONE = 0,
    VT_NOWRITE_IMPORTED, /* another tool's file, read through a temporary import */
    VT_NOWRITE_COPY,     /* read through a temporary copy (standard input or a pipe read into a file) */
    VT_NOWRITE_READONLY, /* the file or its directory is read-only */
    VT_NOWRITE_LOCKED,   /* another process holds the write lock (still recording?) */
    VT_NOWRITE_FAILED    /* the indexes or the write transaction failed */
};

/* One opened trace. */
struct vt_tracefile {
    const char *zPath;      /* the file as named */
    const char *zOpened;    /* the file opened: zPath, or the file standing for it (import.c owns and removes it at
                             * exit: standard input or a pipe read into a file, a copy with PyTorch's history merged
                             * in, the temporary trace another tool's file was imported into) */
    const char *zImported;  /* another tool's file: the temporary trace it was imported into, else NULL */
    sqlite3 *db;
    int version;            /* schema version */
    char **azTable;         /* the tables and views of main, sorted (vt__read_has); nTable of them */
    int nTable;
    struct vt_metakv *aMeta; /* every meta row with a key and a value, sorted by key (vt__read_meta_value) */
    int nMeta;
    int bWritable;          /* open for writing results back (vt__read_open VT_READ_WRITE) */
    int bReadOnlyFile;      /* VT_READ_WRITE was asked but the file or its directory is read-only */
    int noWrite;            /* enum vt_nowrite: why not */
    int bStored;            /* schema 2+, large tables as the tracer makes them: readers take t and dur and add
                             * timeBase instead of reading the generated columns (vt__schema_time_base) */
    int64_t timeBase;
    /* meta */
    char zPid[32], zRank[32], zHost[128], zCmd[256], zSource[32];
    int bTensors;           /* recorded with --tensors (per-tensor CUDA allocations) */
    int bCleanClose;
    int bHistoryTruncated;  /* a PyTorch history that starts late: nothing is known before historyStart */
    int64_t historyStart;
    int bUntimedBefore;     /* its rows of unknown time were allocated before the first event (a history with times
                             * that starts late): they stand from the trace's start (vt__live_untimed_ts) */
    int64_t nLost;          /* records lost while recording (nWriteFailed among them; never nOmitted) */
    int64_t nWriteFailed;   /* ... of them lost to failed writes (a full disk, I/O errors) or the file-size limit */
    int64_t nOmitted;       /* detail rows the size bound (record --max-size) left out as asked: not lost */
    /* a trace whose GPU activity stops early (another CUPTI client took the activity buffers
     * over, or CUPTI's fatal error): absolute ns from which kernels, copies, sets, CUPTI's own
     * allocation records and NVTX are missing; -1 when the trace is complete in that respect */
    int64_t partialFrom;
    int64_t partialMark;    /* the time its cause was marked at (meta), when later than the trace's last event
                             * (partialFrom is then that event: the writer's clock runs ahead of rows waiting for
                             * their activity records); else -1 */
    char zPartialWhy[320];  /* why, for people: "" when partialFrom is -1 */
    int iNotePartial;       /* 1 + the index of the note saying so (vt__read_note_partial), 0 none */
    int64_t windowStart, windowStop; /* recording window relative to the start, ns (-1 or 0: none) */
    /* always-on mode (record --kernels summary): absolute ns from which kernels are per-period summaries
     * (kernel_summary), their launch calls not recorded and kernel-argument uses each address's first and
     * last per period; -1 when every kernel is recorded */
    int64_t kernelSummaryFrom;
    int64_t nKernelSummarized; /* kernels in the summaries */
    int64_t kernelPeriod;      /* the summaries' period, ns */
    struct vt_lend *aLend;  /* CUPTI lent to the job's profiler, by window (meta cupti_lend.N) */
    int nLend;
    /* devices, by id */
    struct vt_devinfo *aDev;
    int nDev;
    /* the guard and the scan */
    int64_t nHidden;        /* impossible rows hidden, every table */
    int bKeep;              /* the scan keeps the rows the replay takes (VT_READ_KEEP) */
    struct vt_tblfacts aT[VT_T_N];
    struct vt_smallfacts aSmall[VT_SMALL_N];
    struct vt_fold fold;    /* the pass's share of api_call (guard.c) */
    int bCallsPassed;       /* api_call's bounds took the calls folded into memory_event from the pass */
    char *zCallView;        /* the api_call view's text where it is exactly this build's of schema 6 for timeBase
                             * (sqlite3_malloc'd; open.c), else NULL */
    int64_t aMemOp[16];     /* memory events by op (index op; 0 for unknown ops) */
    int64_t allocBytes;     /* bytes of op alloc */
    struct vt_kindcount aAllocKind[VT_KIND_SLOTS]; /* op alloc by mem_kind */
    struct vt_kindcount aCopyKind[VT_KIND_SLOTS];  /* copies by copy_kind */
    int64_t nDevAlloc, nSegmentLike; /* device allocations, those of caching-allocator segment sizes */
    int bSegments;          /* the device allocations are caching-allocator segments (no tensor rows) */
    int bHaveKernelUses, bHaveCopyAddr, bHaveTensors;
    /* the trace's time range over every timed table, events with known times only; bTimes 0: none */
    int64_t t0, t1;
    int bTimes;
    int64_t nNoTime;        /* rows of any table with an unknown time */
    /* notes about how the trace was recorded, shown by every report (at most 16) */
    char *azNote[16];
    int nNote;
    struct vt_figures fig;  /* the figures every command prints (figures.h) */
};

/*
 * Whether CUPTI was lent to the job's profiler (GPU activity unknown) at some time in [a, b],
 * absolute ns; a < 0: from the start, b < 0: to the end. 1 or 0.
 */
int vt__read_lent_during(const struct vt_tracefile *f, int64_t a, int64_t b);

/*
 * Whether f's device memory is only a framework allocator's blocks (tensor rows and no CUDA memory: a
 * torch.profiler trace), so that the blocks are the device's memory for the timeline and the counts. CUDA
 * memory is an allocation, a VMM creation or a mapping (an expandable-segments snapshot maps pages and
 * creates none). The figures and the replay both ask this.
 */
int vt__read_blocks_only(const struct vt_tracefile *f); /* figures.c */

/* The exit code for a schema check's result (enum vt_schema_status): the one mapping every reader uses. */
int vt__exit_for_schema(int st);

/* Whether f's main database has a table or view named zName (read once at open). */
static inline int vt__read_has(const struct vt_tracefile *f, const char *zName)
{
    int lo = 0, hi = f->nTable;
    while (lo < hi) {
        int mid = (lo + hi) / 2, c = strcmp(f->azTable[mid], zName);
        if (c == 0) return 1;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* The value of meta key zKey of f (read once at open), NULL when absent. */
static inline const char *vt__read_meta_value(const struct vt_tracefile *f, const char *zKey)
{
    int lo = 0, hi = f->nMeta;
    while (lo < hi) {
        int mid = (lo + hi) / 2, c = strcmp(f->aMeta[mid].zKey, zKey);
        if (c == 0) return f->aMeta[mid].zValue;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* Meta key zKey of f (vt__read_meta_value) as a whole number; -1 when absent, empty or not one. */
static inline int64_t vt__read_meta_int(const struct vt_tracefile *f, const char *zKey)
{
    const char *z = vt__read_meta_value(f, zKey);
    char *zEnd;
    long long v;
    if (!z || !z[0]) return -1;
    v = strtoll(z, &zEnd, 10);
    return *zEnd ? -1 : v;
}

/* 1 when f was imported from another tool's file (meta source_format other than the tracer's "cupti"). */
static inline int vt__read_imported(const struct vt_tracefile *f)
{
    return f->zSource[0] && strcmp(f->zSource, "cupti") != 0;
}

/* What a `dropped` row's records are to a reader (vt__read_drop_class). */
enum vt_dropclass { VT_DROPCLASS_LOST = 0, VT_DROPCLASS_WRITE, VT_DROPCLASS_OMITTED };
/*
 * The class of a `dropped` row of source and what (may be NULL): omitted as asked (the size bound's
 * rows, VT_DROP_WHAT_LIMIT_*), lost to a failed write or the file-size limit, or lost otherwise.
 */
static inline enum vt_dropclass vt__read_drop_class(int64_t source, const char *zWhat)
{
    if (source != VT_DROP_WRITER || !zWhat) return VT_DROPCLASS_LOST;
    if (!strcmp(zWhat, VT_DROP_WHAT_LIMIT_THIN) || !strcmp(zWhat, VT_DROP_WHAT_LIMIT_OFF)) return VT_DROPCLASS_OMITTED;
    if (!strcmp(zWhat, VT_DROP_WHAT_WRITE_FAILED) || !strcmp(zWhat, VT_DROP_WHAT_FSIZE_OFF)) return VT_DROPCLASS_WRITE;
    return VT_DROPCLASS_LOST;
}

/*
 * 1 when f is a tracer's trace cut before the tracer's first commit: not closed cleanly and without
 * cupti_version (CUPTI's set-up rows come with the first commit; start_ns did too in traces of
 * tracers that did not commit it with the file), so it holds only whose trace it is and when it
 * began (the meta rows committed when the file was created) and nothing the process did.
 */
static inline int vt__read_cut_at_start(const struct vt_tracefile *f)
{
    return !f->bCleanClose && !vt__read_imported(f) && !vt__read_meta_value(f, "cupti_version");
}

/* vt__read_open flags */
#define VT_READ_WRITE 1    /* open writable when the file allows (indexes, results written back) */
#define VT_READ_NOSCAN 2   /* validate and read meta only (sql): no guard, no scan */
#define VT_READ_KEEP 4     /* the scan keeps the rows the replay takes (vt_kept; vt__kept_free drops them) */

/*
 * A kernel consumer for the scan: the pass over the kernel table hands each kernel
 * to xKernel in (start, rowid) order as it reads them, when the table's rows lie close
 * enough to that order; bDone then says it saw every kernel (else the caller reads
 * them itself). xKernel returns an SQLite code; an error ends the feeding.
 */
struct vt_kernel_feed {
    void *pArg;
    int (*xStart)(void *pArg);   /* the kernel table's pass begins (every other table scanned); NULL ok */
    int (*xKernel)(void *pArg, int64_t start, int64_t end);
    int bDone;
};

/*
 * Open zPath for reading: a trace, or a file of another tool that vramtrace imports
 * (into a temporary trace). Validates it, takes one read snapshot (rows a writer still
 * recording adds later stay unseen), hides impossible rows, scans the large tables
 * (feeding the kernels to pFeed when not NULL), reads meta, devices and the time range,
 * and notes what a reader must know about the recording. On failure prints one
 * "vramtrace: PATH: reason" line and returns the exit code (VT_EXIT_NOFILE, NOT_TRACE,
 * TOO_NEW, CORRUPT, INTERNAL); *f is then closed.
 */
int vt__read_open(struct vt_tracefile *f, const char *zPath, unsigned flags, struct vt_kernel_feed *pFeed);
/* Whether zFile (named zName in messages) can be a trace: it exists, is no directory and is not empty. Returns
 * VT_EXIT_OK, or VT_EXIT_NOFILE / VT_EXIT_NOT_TRACE after one "vramtrace: NAME: reason" line. */
int vt__read_check_file(const char *zFile, const char *zName);
/* Release everything (rolling back the read snapshot); *f zeroed. */
void vt__read_close(struct vt_tracefile *f);
/* Close the connection (rolling back the read snapshot) but keep what was read. */
void vt__read_done(struct vt_tracefile *f);
/* Add a note (printf-style) shown with the trace in every report; at most 16. */
void vt__read_note(struct vt_tracefile *f, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
/* The device entry with id, or NULL. */
const struct vt_devinfo *vt__read_device(const struct vt_tracefile *f, int id);
/* Wall-clock nanoseconds of CUPTI-clock time ts through the meta clock anchors; -1 when unknown. */
int64_t vt__read_wall(const struct vt_tracefile *f, int64_t ts);

/* A sample of a device's memory the tracer took (meta device.D.mem_sample.K = "T FREE TOTAL"). */
struct vt_memsample {
    int device;
    int64_t ts, freeBytes, totalBytes; /* CUPTI-clock ns; bytes */
};
/*
 * The device-memory samples of f by time (*pa malloc'd, *pn of them; none: NULL, 0), rows that do
 * not parse or say more free than total left out. 0, or -1 when out of memory.
 */
int vt__read_mem_samples(const struct vt_tracefile *f, struct vt_memsample **pa, int *pn); /* figures.c */
/* Other processes' memory on a device as `vramtrace record` read it through NVML (meta nvml.device.D.*). */
struct vt_others {
    int64_t bytes;         /* other processes' bytes: at the sample nearest the moment, else before launch; -1 unknown */
    int64_t sampleTs;      /* that sample's time (CUPTI-clock ns), -1: the launch reading or none */
    int bLaunch;           /* bytes are the reading before the job was launched */
    int nProc, nSample;    /* processes in that reading; samples of the device */
    int64_t launchBytes;   /* other processes' bytes before launch, -1 unknown */
    int64_t maxBytes;      /* the most of the samples while the job ran, -1 none */
    int64_t usedAtLaunch;  /* the device's used memory before launch (NVML, with the driver's reserve), -1 unknown */
    const char *zNote;     /* why the samples were not kept (f's meta), or NULL */
    const char *zProcs;    /* that reading's processes, "PID BYTES NAME;..." (meta nvml.device.D.others_procs.K or
                            * others_procs_at_launch, f's), or NULL when not recorded */
};
/*
 * Other processes' memory on device dev of f nearest time ts (*pOut). 1 when its bytes are known,
 * 0 when not (pOut then still holds what is known: usedAtLaunch, zNote). figures.c
 */
int vt__read_others(const struct vt_tracefile *f, int dev, int64_t ts, struct vt_others *pOut);

/* ---- meta.c ---- */
/*
 * The name of f's process for people: "pid 4242", "pid 4242, rank 1"; a trace that records no
 * pid (an imported snapshot) is named by its file's name instead ("run.pickle", with ", rank 1"
 * when it has one). Into z (size n); returns z.
 */
const char *vt__read_process_name(const struct vt_tracefile *f, char *z, size_t n);
/*
 * Meta, devices, the time range and the notes, after the scan (vt__read_open), from the meta rows
 * the connection read (f->aMeta). A VT_EXIT code, one line printed.
 */
int vt__read_meta(struct vt_tracefile *f);
/* The note on a partial trace (partialFrom), made or remade with its time from f->fig.origin (set again when
 * several traces are read together: vt__figures_origin). */
void vt__read_note_partial(struct vt_tracefile *f);
/*
 * "partial from TIME after the start[ (its last event; the cause marked at TIME)]" of f into z (n bytes), the times
 * from f->fig.origin; "" when the trace is not partial. Returns z.
 */
char *vt__read_partial_at(const struct vt_tracefile *f, char *z, size_t n);

/* ---- guard.c ---- */
/* The columns of one table or view of main, read with one question (pragma_table_xinfo) for every column asked of it. */
struct vt_columns {
    char **az;
    int n;
};
/* Read the columns of zTable (none when main has no such table) into c, to free with vt__columns_free. SQLite code. */
int vt__columns_read(sqlite3 *db, const char *zTable, struct vt_columns *c);
/* 1 if c holds a column named exactly zCol, else 0. */
int vt__columns_has(const struct vt_columns *c, const char *zCol);
void vt__columns_free(struct vt_columns *c);
/* The guard's condition on the possible rows of zTable for db (NULL: every row is), sqlite3_malloc'd in *pz. */
int vt__guard_where(sqlite3 *db, const char *zTable, char **pz);
/*
 * The guard of zTable: with bCount its impossible rows added to *pnHidden (else *pnHidden is what the
 * caller counted), and when there are some, a temporary view of the same name hiding them from
 * every reader. The condition goes to *pzWhere when not NULL (sqlite3_malloc'd; NULL when every row
 * is possible). Returns an SQLite code.
 */
int vt__guard_table(sqlite3 *db, const char *zTable, int bCount, int64_t *pnHidden, char **pzWhere);
/* The tables the guard covers, NULL-terminated. */
extern const char *const vt__guard_tables[];

/* f->aSmall emptied (no small table read yet). */
void vt__guard_bounds_reset(struct vt_tracefile *f);
/*
 * The guard of small table zTable (vt__guard_table, counting): and for a timed one, in the same
 * read, its time bounds into f->aSmall. An SQLite code.
 */
int vt__guard_bounds(struct vt_tracefile *f, const char *zTable, int64_t *pnHidden);

/*
 * Whether the pass over memory_event takes api_call's folded calls (f->fold.bOn: stored times, the api_call
 * view exactly as this build writes it at schema 6 for f's base (f->zCallView), memory_event with every
 * column its arm reads); then api_call_sig's ids are read. An SQLite code.
 */
int vt__guard_fold_begin(struct vt_tracefile *f);
/* One memory_event row's folded call (pass arguments: stored t, call_dt, call_dur, call_sig, op, bytes). */
void vt__guard_fold_row(struct vt_fold *p, sqlite3_value *pT, sqlite3_value *pDt, sqlite3_value *pDur,
                        sqlite3_value *pSig, sqlite3_value *pOp, sqlite3_value *pBytes);
/* Release what vt__guard_fold_begin took. */
void vt__guard_fold_end(struct vt_fold *p);

/* ---- scan.c ---- */
/* The pass over every large table (and the guard's count of the small ones), filling f's facts. SQLite code. */
int vt__scan(struct vt_tracefile *f, struct vt_kernel_feed *pFeed);
/* Chunk bytes of kept rows that every trace of this process holds, on every thread (scan.c counts a
 * chunk made, vt__kept_chunk_free one released), and the bound on them: the traces analyzed together
 * hold no more than it (a table that would pass it is read again instead). */
extern atomic_size_t vt__kept_held;
extern size_t vt__kept_budget;
/* Release one chunk of kept rows. */
static inline void vt__kept_chunk_free(struct vt_keptchunk *x)
{
    atomic_fetch_sub(&vt__kept_held, VT_KEEP_CHUNK);
    free(x);
}
/* Drop one table's kept rows (p zeroed). */
static inline void vt__kept_drop(struct vt_kept *p)
{
    while (p->pFirst) {
        struct vt_keptchunk *x = p->pFirst;
        p->pFirst = x->pNext;
        vt__kept_chunk_free(x);
    }
    memset(p, 0, sizeof *p);
}
/* Drop the rows the scan kept (f->aT[k].keep, every table): the replay read them, or it reads the tables. */
static inline void vt__kept_free(struct vt_tracefile *f)
{
    for (int k = 0; k < VT_T_N; k++) vt__kept_drop(&f->aT[k].keep);
}

/* ---- rows.c ---- */
/*
 * SQL reading zCols of zTable's rows that pass zFilter ("1" for all) in time order: in rowid
 * order straight from the table when the scan found that to be time order within a window
 * (no index, no sort), with the stored times where f->bStored; else through the guard's view
 * ordered by zOrder. Rows with unknown times are the caller's to filter. Malloc'd, NULL when
 * out of memory.
 */
char *vt__ordered_sql(const struct vt_tracefile *f, int k, const char *zCols, const char *zFilter, const char *zOrder);

/*
 * A reader of one input in time order. With w <= 0 its statement is already in that order
 * and rows are read from it as they come; with w > 0 it reads rowid order and restores the
 * order (time, then rowid) through a min-heap of w + 1 rows of nCol integer columns, time
 * first. Memory: (w + 1) * (sizeof(struct vt_row) + 20) bytes, w <= VT_REORDER_CAP.
 */
#define VT_REORDER_CAP 65536
#define VT_ROW_MAXCOL 16
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
    struct vt_rows_ent { uint64_t ts, tag; } *aHeap; /* time and order read, slot (rows.c) */
    int nHeap, *aFree, nFree, lastSlot, bEof;
    int64_t nRead;
    struct vt_kept *pKept;    /* the rows come from what the scan kept instead of pStmt (vt__rows_open_kept) */
    struct vt_keptchunk *pChunk; /* the chunk of them being read */
    int bPeek;                /* read without releasing them (vt__rows_open_kept_peek) */
    size_t iKept;             /* where the next of them begins in pChunk */
    int64_t nKeptLeft;        /* how many are left */
    int64_t aLast[VT_ROW_MAXCOL]; /* each column's last value (the decoder's state) */
};
/* Prepare zSql (NULL: out of memory) for reading with window w; SQLite code. */
int vt__rows_open(struct vt_rows *c, sqlite3 *db, const char *zSql, int nCol, int w);
/* The same over the rows the scan kept (p->bOk), as the SELECT they were kept for reads them, each chunk released
 * once read (p then holds what is left: one reader, once); SQLite code. */
int vt__rows_open_kept(struct vt_rows *c, struct vt_kept *p, int w);
/* The same, releasing nothing: p is left whole for the one reader that releases it (vt__rows_open_kept), which
 * comes after; SQLite code. */
int vt__rows_open_kept_peek(struct vt_rows *c, struct vt_kept *p, int w);
int vt__rows_next(struct vt_rows *c);  /* the next row in time order (c->bRow); SQLite code */
void vt__rows_close(struct vt_rows *c); /* release (c zeroed or opened) */
/* Column i of the current row: its int64 value, and whether it is NULL. */
static inline int64_t vt__rows_i64(const struct vt_rows *c, int i)
{
    return c->pRow ? c->pRow->a[i] : sqlite3_column_int64(c->pStmt, i);
}
static inline int vt__rows_null(const struct vt_rows *c, int i)
{
    return c->pRow ? (int)(c->pRow->mNull >> i & 1) : sqlite3_column_type(c->pStmt, i) == SQLITE_NULL;
}
/* Column i as an int64, dflt when NULL. */
static inline int64_t vt__rows_or(const struct vt_rows *c, int i, int64_t dflt)
{
    return vt__rows_null(c, i) ? dflt : vt__rows_i64(c, i);
}

/* ---- sites.c ---- */
/* A call site: a deduplicated stack, or (without a stack) an allocation size class. */
struct vt_site {
    int64_t key;            /* stack id >= 0, or -(bytes)-1 for a size class */
    int64_t stackId;        /* -1 when not recorded */
    int bNccl;              /* allocated from inside NCCL: communication buffers */
    char *zSite;            /* "file:line in function", or a description */
    int64_t nAlloc, totalBytes, nLive, liveBytes, peakLiveBytes; /* kept by the analysis */
};
struct vt_sitekey {
    int64_t key;            /* a stack id, or a size class (see vt_site.key) */
    int site;               /* its site; -1: an empty slot */
};
struct vt_sites {
    struct vt_site *a;
    int n, nAlloc;
    struct vt_sitekey *aKey; /* open addressing: every key seen -> its site (several keys may share one) */
    int nKey, nKeyHash;
    int *aName, nNameHash;  /* open addressing on zSite: equal descriptions are one site */
    int rcErr;       /* the SQLite error of the last failed vt__site_get, SQLITE_OK (0) if none */
    char zErr[128];  /* and its message */
};
/*
 * Index of the site of (stackId, bytes) in s->a, created (its stack described from db) on
 * first sight; without a stack (-1) the size class is the site. Stacks described alike (the
 * same user line reached through different library or generated frames) share one site, whose
 * stackId is the first one's (size classes stay apart). -1 when out of memory or on an SQLite
 * error (then s->rcErr and s->zErr hold it).
 */
int vt__site_get(struct vt_sites *s, sqlite3 *db, int64_t stackId, int64_t bytes);
void vt__sites_free(struct vt_sites *s);
/*
 * A recorded stack as the line a person should look at ("file:line in function": the top
 * Python frame outside library code, else the top frame), without adding it to a site table.
 * Returns a malloc'd string, or NULL on OOM / SQLite error (*pRc set).
 */
char *vt__stack_describe(sqlite3 *db, int64_t stackId, int *pRc);
/*
 * Register vt_site(schema, stack_id) on db: vt__stack_describe of the stack of the trace db holds as schema
 * ("main", "t0", ...), NULL for a NULL stack id; what `sql` and `export` name a call site by, as analyze does.
 * Returns an SQLite code.
 */
int vt__site_function(sqlite3 *db);

/*
 * What a stack's frames say about the memory it allocated or freed (the breakdown's evidence,
 * docs/analysis.md "What the peak was"): who owns it when not the program (NCCL, cuBLAS, cuDNN,
 * a CUDA graph's pool, another library, named by its module), whether PyTorch's caching
 * allocator made it, and what PyTorch was doing (an optimizer, zero_grad, moving or loading
 * parameters, the autograd engine's backward pass, AccumulateGrad, DDP's reducer).
 */
enum vt_facet {
    VT_FACET_NCCL = 1 << 0,       /* a frame in libnccl or an nccl* function */
    VT_FACET_CUBLAS = 1 << 1,     /* libcublas/libcublasLt, or PyTorch's cuBLAS handle/workspace functions */
    VT_FACET_CUDNN = 1 << 2,      /* libcudnn, or PyTorch's cuDNN workspace */
    VT_FACET_GRAPH = 1 << 3,      /* CUDA graph capture (torch/cuda/graphs.py, cudagraph_trees, at::cuda::CUDAGraph) */
    VT_FACET_LIB = 1 << 4,        /* a shared library outside the runtime set, no PyTorch allocator frame: zOwner */
    VT_FACET_ALLOCATOR = 1 << 5,  /* PyTorch's CUDA allocator (CUDACachingAllocator, CudaMallocAsync) */
    VT_FACET_OPTIM = 1 << 6,      /* an optimizer's code (torch/optim/, apex, bitsandbytes, DeepSpeed's optimizers) */
    VT_FACET_ZERO_GRAD = 1 << 7,  /* zero_grad (optimizer or module) */
    VT_FACET_PARAM = 1 << 8,      /* parameters moved, created or loaded (Module.to/_apply/cuda, nn.init, load_state_dict) */
    VT_FACET_ENGINE = 1 << 9,     /* the autograd engine: its thread, a *Backward node, Tensor.backward */
    VT_FACET_ACCUMULATE = 1 << 10, /* AccumulateGrad: a parameter's gradient */
    VT_FACET_REDUCER = 1 << 11,   /* DDP's reducer (c10d::Reducer): gradient buckets */
    VT_FACET_PYTHON = 1 << 12,    /* the stack has Python frames */
    VT_FACET_INIT = 1 << 13,      /* a constructor (a Python __init__): a model's layers made on the device */
    VT_FACET_OPTIM_OWN = 1 << 14, /* with VT_FACET_OPTIM: an optimizer the program defines, told only by the step
                                   * wrapper of torch.optim.Optimizer (torch/optim/optimizer.py) around its own step */
    VT_FACET_OPTIM_WRAP = 1 << 15 /* while the frames are read: that wrapper seen */
};
struct vt_facets {
    unsigned m;             /* enum vt_facet bits */
    char zOwner[64];        /* VT_FACET_LIB: the module's file name ("libfoo.so.1"), else "" */
};
/* The facets of recorded stack stackId (none for -1). Returns an SQLite code. */
int vt__stack_facets(sqlite3 *db, int64_t stackId, struct vt_facets *p);

/* ---- knames.c ---- */
/*
 * Readable names of db's kernels in temp.vt_kname(name_id, demangled, short_name), one row per
 * string a kernel names: from the trace's kernel_name rows where it has them, else demangled now
 * (a name that is not mangled stays as stored, with its short name). Replaces an earlier
 * temp.vt_kname; a trace without kernels gets it empty. Returns an SQLite code.
 */
int vt__knames_load(sqlite3 *db);
/*
 * Write the names temp.vt_kname holds (vt__knames_load) and kernel_name lacks into the trace's
 * kernel_name, new strings added to its string table, in the caller's write transaction.
 * A trace without the kernel_name table (schema before version 3) is left as it is. SQLite code.
 */
int vt__knames_store(sqlite3 *db);

/* ---- symbolize.c ---- */
/*
 * Native frames symbolized offline (with libdw; without it, nothing is resolved): a frame's
 * module file (module path), its recorded GNU build id and the return address relative to the
 * module's load address give function, file and line. Debug information comes from the file
 * itself or a separate debug file found by build id (DIR/.build-id/xx/rest.debug) or debug link
 * in the --debug-dir directory, beside the file or under /usr/lib/debug. One process-wide set of
 * opened modules, kept until vt__sym_reset; not thread-safe.
 */
struct vt_symbol {
    const char *zFunction, *zFile; /* NULL when unknown; valid until vt__sym_reset */
    int line;                      /* 0 when unknown */
};
enum { VT_SYM_UNKNOWN = 0, VT_SYM_OK = 1, VT_SYM_MISMATCH = 2 };
/* Directory of separate debug files searched first (NULL: none). 0, or -1 out of memory. */
int vt__sym_debug_dir(const char *zDir);
/* Whether this build symbolizes (built with libdw). */
int vt__sym_available(void);
/*
 * Resolve return address pc (relative to the module's load address) in the module file zModule.
 * VT_SYM_OK with *pOut filled; VT_SYM_MISMATCH when the file's build id is not zBuildId (the
 * recorded one; NULL or "": not checked), so its lines would be wrong; VT_SYM_UNKNOWN when the
 * file or its debug information is missing; -1 out of memory.
 */
int vt__sym_resolve(const char *zModule, const char *zBuildId, uint64_t pc, struct vt_symbol *pOut);
/* Close every module and forget the debug directory. */
void vt__sym_reset(void);

/* ---- live.c ---- */
/* One lifetime: an allocation (or VMM creation, or a mapping) from its start to its end. */
struct vt_life {
    int64_t address, bytes;
    int64_t allocTs, freeTs;       /* -1 when unknown / not freed */
    int64_t firstUse, lastUse;     /* -1 when never used */
    int64_t useBound;              /* the analysis': the latest time it may have been used as far as the trace
                                    * can tell (set when it ends), -1 never, VT_USE_UNKNOWN when not told */
    int64_t useCount;
    int64_t allocEventId, freeEventId, stackId; /* -1 when absent */
    int device, memKind, op, allocApi, freeApi;
    int acct;                      /* whose live bytes it counts in: a device id, VT_ACCT_PINNED, VT_ACCT_MANAGED,
                                    * or VT_ACCT_NONE (not counted: pageable, a mapping of counted memory, imported) */
    int status;                    /* enum vt_life_status */
    int bInternal;                 /* made by the CUDA runtime or driver (no API call, no site) */
    int bTensor;                   /* a block of a framework allocator (tensor_event), not a CUDA allocation */
    int site, phase;               /* the analysis' (site index, phase index), -1 none */
    int liveIdx;                   /* index in the live set's dense array */
    int64_t freeStackId;           /* the stack of its free, -1 when not recorded (or not freed) */
    int64_t bdSeq;                 /* the analysis' order of its beginning (breakdown.c) */
    int bdSpan;                    /* the analysis' step it began in (breakdown.c), -1 none */
    int bdFwdUse;                  /* the analysis': a kernel of a later step's forward pass read it (breakdown.c) */
    struct vt_life *pOwner;        /* a mapping: the VMM creation whose memory it shows, uses go there */
    int nMap;                      /* a VMM creation: mappings of it live */
    int bReleased;                 /* a VMM creation released while mapped: ends with its last mapping */
};
#define VT_USE_UNKNOWN (-2) /* vt_life.useBound: its uses cannot be told */
#define VT_ACCT_PINNED (-1)
#define VT_ACCT_MANAGED (-2)
#define VT_ACCT_NONE (-3)
enum vt_life_status {
    VT_LIFE_FREED = 0,     /* "freed" */
    VT_LIFE_LIVE_AT_END,   /* "live_at_end" */
    VT_LIFE_FREE_UNKNOWN,  /* "free_unknown": a free of an address never allocated in the trace */
    VT_LIFE_DOUBLE_FREE,   /* "double_free": a free of an address already freed */
    VT_LIFE_FREE_MISSING   /* "free_missing": a new allocation at its address came first */
};
const char *vt__life_status_name(int status);

/* One memory_event or tensor_event row, as the live set takes it. */
struct vt_memrow {
    int64_t ts, id;
    int op;                 /* memory_event op (vt_memop); tensor events: VT_MEMOP_ALLOC / VT_MEMOP_FREE */
    int kind;               /* mem_kind (tensor events: device) */
    int64_t address, bytes; /* bytes -1 when unknown */
    int device;             /* -1 when unknown */
    int api;                /* 0 when unknown */
    int64_t stackId, correlation, handle; /* -1 when unknown (handle: a vmm_map's pool_address) */
    int64_t poolSize, poolUsed;           /* -1 when not a pool allocation */
    int bTensor;
};

/* The columns of memory_event a live set reads, in vt__memrow_read's order (time first, for vt_rows). */
#define VT_MEMROW_COLS \
    "ts, id, op, mem_kind, address, device, bytes, stack_id, api, pool_size, pool_used, correlation, pool_address"
#define VT_MEMROW_NCOL 13
/* The tensor_event columns in the same places (kind 0, no api, pool or correlation). */
#define VT_TENSORROW_COLS "ts, id, op, 0, address, device, bytes, stack_id"
#define VT_TENSORROW_NCOL 8
/* The current row of c (read with VT_MEMROW_COLS, or VT_TENSORROW_COLS when bTensor) as a vt_memrow. */
void vt__memrow_read(const struct vt_rows *c, int bTensor, struct vt_memrow *m);

/* What happens to lifetimes as rows are applied; any hook may be NULL. Each returns 0, or -1 to stop. */
struct vt_live_hooks {
    void *pArg;
    int (*xBegin)(void *pArg, struct vt_life *l);           /* l added (its bytes counted already) */
    int (*xBeforeEnd)(void *pArg, struct vt_life *l);       /* l about to end: still live and counted */
    int (*xEnd)(void *pArg, struct vt_life *l);             /* l ended (uncounted); freed after the call */
    int (*xStray)(void *pArg, const struct vt_memrow *m, int status); /* a free with no lifetime */
    int bMappings; /* the hooks (and the dense array) see the mappings of VMM creations too; their bytes count once, in
                    * the creation's account, as always */
};

/*
 * The live set: lifetimes by base address and by any address inside (2 MiB pages), VMM
 * creations by handle, freed addresses (to tell a double free from an unknown one), and
 * the live bytes of every account. Memory grows with the lifetimes live at once.
 */
struct vt_live;
struct vt_live *vt__live_new(const struct vt_live_hooks *pHooks);
/* Apply one row (allocation, free, VMM, import) under the live-bytes rule. 0, or -1 (out of memory, a hook's -1).
 * A live set takes either CUDA's memory (memory_event) or a framework allocator's blocks (tensor_event). */
int vt__live_apply(struct vt_live *L, const struct vt_memrow *m);
/* The row vt__live_apply is applying, for its hooks (which row ended or began a lifetime); NULL outside it. */
const struct vt_memrow *vt__live_row(const struct vt_live *L);
/* The live mapping (VMM map) of device dev (any when dev < 0) holding addr, NULL when none. */
struct vt_life *vt__live_mapping(struct vt_live *L, int64_t addr, int dev);
/* The lifetime a use of addr at ts touches (a mapping's uses go to its creation), NULL when none: the
 * allocation whose base it is (bBase) or, failing that, any containing it. */
struct vt_life *vt__live_use(struct vt_live *L, int64_t addr, int bBase);
/* Whether a free of addr was applied to L (so an allocation there of unknown time is not live now). */
int vt__live_was_freed(const struct vt_live *L, int64_t addr);
/* Live bytes counted on account acct now. */
int64_t vt__live_bytes(const struct vt_live *L, int acct);
/* One account of a live set: its live bytes, their peak and when, and for a device a stream-ordered pool's reserved peak. */
struct vt_live_acct {
    int64_t live, peak, peakTs;  /* peakTs: when the peak was first reached (-1 never; an allocation of unknown time:
                                  * where vt__live_untimed_ts puts it) */
    int64_t poolPeak, poolPeakTs; /* the largest pool_size of a pool allocation or free on the device (0 none) */
    int bUsed;                   /* bytes or a pool were ever counted here */
};
/* Account acct of L, NULL when nothing was ever counted there. */
const struct vt_live_acct *vt__live_acct(const struct vt_live *L, int acct);
/* One more than the highest account (device id) L has a slot for, 0 when none: accounts lie in [VT_ACCT_MANAGED, it). */
int vt__live_nacct(const struct vt_live *L);
/* How the lifetimes a live set's hooks see began and ended, and the frees that found none. */
struct vt_live_counts {
    int64_t nBegin, beginBytes;     /* lifetimes begun, their bytes */
    int64_t nFreed, nFreeMissing;   /* ended by a free; ended by a new allocation at their address (free not seen) */
    int64_t nDoubleFree, nFreeUnknown; /* frees with no lifetime: of an address freed before, of one never allocated */
    int64_t nLiveEnd, liveEndBytes; /* live at the end (vt__live_finish) */
    int64_t nInternalEnd, internalEndBytes; /* of those, made by the CUDA runtime or driver itself */
};
const struct vt_live_counts *vt__live_counts(const struct vt_live *L);
/* The live lifetimes (not mappings of counted memory), for snapshots: *pn of them. */
struct vt_life *const *vt__live_all(const struct vt_live *L, int *pn);
/* Mark every lifetime still live live_at_end and hand each to xBeforeEnd, then xEnd, still counted (they
 * are freed with the set). 0 or -1. */
int vt__live_finish(struct vt_live *L);
void vt__live_free(struct vt_live *L);
/* Both levels in one time order: CUDA's memory through Lmem and the framework allocator's blocks through Lten (at
 * equal times a CUDA allocation before the blocks in it, and blocks freed before a CUDA free), *pNow (pNow not
 * NULL) the time of the row being applied, for the hooks; unknown times, then each set's end, as vt__live_pass. */
int vt__live_pass_both(struct vt_tracefile *f, struct vt_live *Lmem, struct vt_live *Lten, int64_t *pNow);
/*
 * Where f's allocations of unknown time stand on the timeline: at its first event when they were made before it
 * (bUntimedBefore: the dump's state a history that starts late does not explain), else at its last (a snapshot
 * without history, a record without a time); -1 when no time is known at all.
 */
int64_t vt__live_untimed_ts(const struct vt_tracefile *f);
/* Where lifetime l of f begins on the timeline (its curves and counters): its allocation time; for one of unknown
 * time the trace's start when made before its first event (f->bUntimedBefore), else -1 (on no curve). */
int64_t vt__life_begin_ts(const struct vt_tracefile *f, const struct vt_life *l);
/*
 * The allocations of f whose time is unknown (a snapshot's state at its dump, PyTorch 2.0 format) into L
 * (bTensor: tensor_event's, else memory_event's), applied where vt__live_untimed_ts puts them (before the timed
 * rows when f->bUntimedBefore, else after them): live from there unless their address is live or was freed at a
 * known time. Their peak time is that place. An SQLite code.
 */
int vt__live_untimed(const struct vt_tracefile *f, struct vt_live *L, int bTensor);
/* Every memory event (bTensor: every tensor_event) of f in time order through L, those of unknown time before or
 * after them (vt__live_untimed), then the lifetimes still live end live_at_end. A VT_EXIT code (one line on error). */
int vt__live_pass(struct vt_tracefile *f, struct vt_live *L, int bTensor);

/* Whether a Python frame of stack stackId outside the installed libraries (site-packages, dist-packages,
 * lib/python) is in a function re matches (a user's caller of the innermost user line); 0 on any error. */
int vt__stack_user_func_matches(sqlite3 *db, int64_t stackId, const regex_t *re);
/* The Python frames of stack stackId in the program's own code (not library or generated code), innermost first,
 * each "file:line in function" as sites name them, one per line into z (size n): "" when none. An SQLite code. */
int vt__stack_user_frames(sqlite3 *db, int64_t stackId, char *z, size_t n);

#endif
