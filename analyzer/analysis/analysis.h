/* Internal: the analysis pipeline: what it knows about each trace, its findings, and the detector interface. */
#ifndef VT_ANALYZER_ANALYSIS_H
#define VT_ANALYZER_ANALYSIS_H

#include <stdint.h>
#include <stdio.h>

#include "read/figures.h"
#include "read/read.h"
#include "util/text.h"
#include "vramtrace/schema.h"

/*
 * The pipeline (pipeline.c drives it), each stage a file; stages pass these structs:
 *   read/      open, guard, scan, meta, sites, live set (the read layer)
 *   phase.c    phases and iterations (NVTX, else kernel names), growth boundaries
 *   replay.c   one pass over memory events, uses and OOMs in time order: lifetimes, sites,
 *              the timeline, OOM snapshots, and an event stream for the detectors
 *   timeline.c live bytes per device over time, peaks and what was live at them
 *   transfer.c host-device copies against kernels: volumes, pageable share, serialization
 *   detect_*.c one detector each (struct vt_detector): own state fed by events, findings at the end
 *   group.c    one finding per root cause: repeats and ranks merged, after every trace is done
 *   result.c   findings, severities, the shared tests detectors judge with
 *   writeback.c results written back into the trace (lifetime, phase, finding tables)
 * Dependencies only go down that list's order (result.c at the bottom): detectors never
 * call the driver or the replay; the replay reaches detectors only through the table it is given.
 */

#define VT_REPORT_VERSION 1
#define VT_TIMELINE_BUCKETS 400 /* points per device in the downsampled timeline */
#define VT_SLICES 16            /* time slices per phase / per trace for baseline trends */
#define VT_JOBS_MAX 256         /* most traces analyzed at once (-j) */
/* Where tensors and their Python lines come from when a trace has segments only (fix texts). */
#define VT_HISTORY_HINT                                                                                          \
    "PyTorch's allocation history ('vramtrace record' saves it beside the trace and analyze merges it; or "     \
    "'analyze --snapshot FILE')"
#define VT_TOPMAX 32            /* most allocations kept in a peak / OOM snapshot */

enum vt_sev { VT_SEV_INFO = 0, VT_SEV_LOW, VT_SEV_MEDIUM, VT_SEV_HIGH };
enum vt_phase_kind { VT_PHASE_TRAIN = 0, VT_PHASE_EVAL, VT_PHASE_OTHER };
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
    int bNoWrite;           /* 1 unless --save: results are not written back into the traces */
    int bBySite;
    int bAll;               /* text: every finding and every process (--all), not the first screen */
    int nJobs;              /* traces analyzed at once (threads); 0: one per online CPU */
    int bProgress;          /* say on stderr how far a long run is (it is a terminal) */
    int64_t batch;          /* --batch: the batch size of the traced run (what-would-fit in batch sizes); 0 none */
    int64_t fitMemory;      /* --fit-memory: the device memory to fit in; 0: each device's own */
    int64_t fitWork;        /* lifetimes the allocator's replay may replay in all (no option: tests); 0 the default */
    int bSiteCurves;        /* keep each device's site curves (vt_device.aSite): the HTML report draws them */
    int bCatCurves;         /* keep each device's category curves (vt_device.aCatPt): export draws them */
};

/* Fill *o with the defaults documented in --help and docs/analysis.md. */
void vt__opts_default(struct vt_opts *o);

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

/*
 * What the memory at one moment (a device's peak, an OOM) was, by category (breakdown.c, the rules
 * in docs/analysis.md "What the peak was"): the parts sum to total, the figure named by zBasis.
 */
enum vt_cat {
    VT_CAT_PARAM = 0,   /* parameters (and buffers) */
    VT_CAT_GRAD,        /* gradients */
    VT_CAT_OPT,         /* optimizer state */
    VT_CAT_ACT,         /* activations kept for backward */
    VT_CAT_TRANSIENT,   /* activations or temporaries, not told apart */
    VT_CAT_TEMP,        /* temporaries and workspaces */
    VT_CAT_STATE,       /* other memory kept from step to step */
    VT_CAT_CACHE,       /* the allocator's cache: reserved, not allocated */
    VT_CAT_NCCL,        /* NCCL's buffers */
    VT_CAT_CUBLAS,      /* cuBLAS/cuBLASLt workspaces */
    VT_CAT_CUDNN,       /* cuDNN workspaces */
    VT_CAT_GRAPH,       /* CUDA graph pools */
    VT_CAT_LIB,         /* another library, outside the framework's allocator (by module) */
    VT_CAT_CONTEXT,     /* the CUDA context and driver */
    VT_CAT_OTHERS,      /* other processes */
    VT_CAT_CTXOTHERS,   /* device used beyond the traced memory, more than a context takes (VT_CONTEXT_MAX), without
                         * NVML's readings: the context, the driver and other processes, not told apart */
    VT_CAT_BEFORE,      /* allocated before the trace began */
    VT_CAT_UNKNOWN,
    VT_CAT_N
};
struct vt_bdpart {
    int cat;                /* enum vt_cat */
    int64_t bytes, count;   /* count: allocations (0 for figures that are not allocations: cache, context) */
    char *zEvidence;        /* the rules that decided, with their shares */
    char zOwner[64];        /* VT_CAT_LIB: the library's module; else "" */
};
/* A category curve's point: series (a category, or VT_CAT_N + k: library k) stands at bytes from ts on. */
struct vt_catpoint {
    int64_t ts, bytes;
    int series;
};
struct vt_breakdown {
    int64_t total;          /* what the parts sum to; -1: no breakdown */
    int64_t ts;             /* the moment it sums: a peak's, when what was live last changed before it was taken
                             * (the category curves stand at the parts from then); an OOM's time */
    const char *zBasis;     /* "reserved", "allocated", "device used", "process" (static) */
    int bSegment;           /* categories of caching-allocator segments, not tensors */
    int bPages;             /* those segments are expandable segments' pages (cuMemCreate + cuMemMap) */
    struct vt_bdpart *a;    /* largest first, unknown last */
    int n;
    int64_t untraced;       /* device used beyond the traced memory (the context part, and other processes' where
                             * NVML told them), -1 not known */
    char *zOthers;          /* with untraced, where NVML did not tell other processes' share of it: why it is
                             * unknown (no part: never a 0); NULL when they are a part (VT_CAT_OTHERS) */
    int64_t othersAtMost;   /* what other processes held at most when this process's context was created (or,
                             * less, before the job was launched, by NVML), -1 unknown */
    int64_t poolCache;      /* a cudaMallocAsync pool's reserved bytes beyond the live ones then (not a part: the
                             * figure is the live allocations), 0 none */
    int64_t gradAvoidable;  /* gradients of an earlier backward pass live at a peak in the forward pass, not freed
                             * by zero_grad: what zero_grad(set_to_none=True) before the forward would free */
    int64_t fragBytes;      /* with blocks inside segments (a peak's, an OOM's): free pieces of segments of the
                             * request's pool holding live blocks, each smaller than the request then (the latest
                             * at a peak, the failed one at an OOM): fragmentation seen; -1 not told */
    int64_t fragReq;        /* that request, -1 unknown (then every piece counts) */
    int64_t fragPieces, fragSegs; /* how many pieces, in how many segments */
    int64_t segFirstFwd;    /* segment level: of the growing segments, those reserved in the first step with a backward
                             * pass before that pass began (the first forward pass: no gradients or optimizer state
                             * exist yet); -1 not told (no such step, or not segment level) */
};

/*
 * What would fit on a device (fit.c, docs/analysis.md "What would fit"): from its peak's
 * breakdown, the headroom, the memory that grows with the batch and the largest batch that fits,
 * and what each change would save, each estimate with its assumption in one line.
 */
#define VT_FIT_CONTEXT ((int64_t)512 << 20) /* the CUDA context assumed where no free memory was sampled */
#define VT_CONTEXT_MAX ((int64_t)2 << 30)   /* the most a CUDA context and the driver take of a device (a few hundred
                                              * MiB to about 1 GiB on current GPUs): more untraced is not only that */
#define VT_FIT_SAVES 5
struct vt_fitsave {
    const char *zKey;       /* JSON: bf16_activations, activation_checkpointing, zero_grad_set_to_none,
                             * expandable_segments, shard_optimizer_state */
    const char *zWhat;      /* for people */
    int64_t bytes;
    char *zAssume;          /* its assumption, one line */
};
struct vt_fit {
    int bDone;
    int64_t capacity;       /* bytes to fit in (--fit-memory, else the device's total); -1 unknown */
    int64_t need;           /* the peak with what the trace does not hold (the CUDA context) */
    int64_t context;        /* of need: the context, measured at an OOM or assumed (bContextAssumed) */
    int bContextAssumed;
    int64_t headroom;       /* capacity - need (negative: does not fit); meaningful with capacity */
    int64_t fixed, scaling; /* need = fixed + scaling: bytes that do not / do grow with the batch */
    double maxScale;        /* largest batch scale that fits (1 = the batch traced); -1 unknown */
    int64_t batch, maxBatch; /* --batch N, and the largest batch size that fits; -1 unknown */
    int bLowerBound;        /* segment level: maxScale and maxBatch are the least that fits, not a point */
    int bUpperBound;        /* segment level, the peak too large: they are the most that fits (the cache and state in
                             * the segments need not shrink with the batch) */
    double upScale;         /* segment level: the stated upper estimate of the largest scale (only the first forward
                             * pass's segments grow), -1 none */
    int64_t upBatch;        /* as a batch size, -1 unknown */
    int bReplayed;          /* maxScale from the allocator replayed over the trace's requests (allocsim.c) */
    int64_t expandSave;     /* replayed without, then with expandable segments: the memory the traced batch needs
                             * less by this; -1 not replayed so */
    int64_t expandBatch;    /* and the largest batch with them (-1 unknown) */
    double expandScale;     /* as a scale, -1 unknown */
    int64_t expandSlack;    /* > 0: the replays were bounded (VT_FS_NEED_WORK), each need within this: an estimate */
    char *azAssume[8];      /* the estimate's assumptions */
    int nAssume;
    struct vt_fitsave aSave[VT_FIT_SAVES];
    int nSave;
};

/* One timeline bucket of a site curve: the highest live bytes in it, and the level after its last change. */
struct vt_scpoint {
    int bucket;
    int64_t max, last;
};
/* A call site's live bytes in one account over the timeline's buckets (sitecurve.c), sparse: buckets without a
 * change carry the level before them. */
struct vt_sitecurve {
    int site;               /* index in the trace's sites */
    int64_t peak;           /* its highest live bytes in the account */
    struct vt_scpoint *a;   /* ascending buckets */
    int n;
};

/* Allocations summed by call site and memory kind as they are added (live_group.c): per site the chain of its
 * groups, one per memory kind. All zero is empty. */
struct vt_groupacc {
    int *aHead, nHead;      /* per site index: its first group, -1 none */
    struct vt_group *aAcc;  /* the groups (nAcc of nAlloc), each linked to the next of its site by aNext */
    int *aNext, nAcc, nAlloc;
};

/* Live bytes of one account (a device, pinned host memory, managed memory) over time. */
struct vt_device {
    int id;                 /* CUDA device id; VT_ACCT_PINNED, VT_ACCT_MANAGED */
    char zName[128];
    int64_t totalBytes;     /* -1 unknown */
    int64_t live, peak, peakTs;
    int64_t poolReserved, poolUsed, poolPeakReserved;
    int64_t poolGrowMin;    /* the smallest growth of the memory pool's reserved bytes at one allocation, 0 none */
    int64_t tensorLive, tensorPeak, tensorPeakTs; /* blocks of a framework allocator (tensor_event) in it */
    int64_t tensorAtPeak;   /* most tensor bytes live while the account stood at its peak; -1 none */
    int64_t aMax[VT_TIMELINE_BUCKETS]; /* highest live bytes in each bucket, -1 = no event */
    int64_t aMin[VT_TIMELINE_BUCKETS]; /* lowest live bytes after an event in each bucket, -1 = no event */
    int64_t aLast[VT_TIMELINE_BUCKETS]; /* live bytes after the bucket's last event, -1 = no event */
    int64_t aPool[VT_TIMELINE_BUCKETS]; /* pool reserved (latest) in each bucket, -1 none */
    int64_t slice[VT_SLICES];           /* lowest live bytes in each trace slice */
    int64_t tensorSlice[VT_SLICES];     /* lowest tensor live bytes in each trace slice, -1 = no event */
    /* cycles of the live bytes (a step's rise and fall, vt__cycle_step) */
    int64_t cycLo, cycHi;
    int nCycle;
    int64_t tensorCycLo, tensorCycHi; /* the same for the tensor live bytes (a framework allocator's blocks) */
    int nTensorCycle;
    /* what was live at the peak: of a device, at its breakdown's moment (breakdown.c: the same lifetimes its parts
     * sum, the judged ones), of host or managed memory at a snapshot as the peak falls (timeline.c) */
    struct vt_snap aTop[VT_TOPMAX];     /* largest allocations live at the peak */
    int nTop;
    struct vt_group aGroup[VT_TOPMAX];  /* what was live at the peak by site and kind, largest first */
    int nGroup;
    int64_t atPeakTs;                   /* a device's: the moment aTop and aGroup are of, the breakdown's (bd.ts: when
                                         * what was live last changed before it), -1 unknown */
    struct vt_groupacc peakAcc;         /* a device's: the groups live at the moment so far (breakdown.c) */
    int64_t snapPeak;                   /* live bytes when aTop was taken */
    int bPeakDirty;
    int nSnapshots;
    int bBdDirty;                       /* the peak rose since the breakdown's last moment (breakdown.c) */
    struct vt_breakdown bd;             /* what the peak was (device accounts) */
    struct vt_fit fit;                  /* what would fit (device accounts with a breakdown) */
    /* with opts.bSiteCurves: the curves of its largest sites (VT_SITECURVE_TOP by peak) and of the sites its
     * findings name, largest peak first */
    struct vt_sitecurve *aSite;
    int nSite;
    /* with opts.bCatCurves and a breakdown: its live bytes by breakdown category over the whole trace, one
     * point per change in replay order (breakdown.c); the series are named by vt__catcurve_part */
    struct vt_catpoint *aCatPt;
    int nCatPt;
    char (*azCatLib)[64];               /* the libraries' modules, series VT_CAT_N + k */
    int nCatLib;
};

struct vt_phase {
    int kind;               /* enum vt_phase_kind */
    char zName[96];
    int64_t start, end;
    const char *zSource;    /* "nvtx", "profiler" or "kernels" */
    int nIter;
    int64_t peak, peakTs, startLive, minLive;
    int64_t carried;        /* bytes allocated in training, live at its start and not used again before it */
    int64_t slice[VT_SLICES];
    int64_t tensorSlice[VT_SLICES]; /* the same for the blocks of a framework allocator (all devices), -1 none */
    int64_t endLive, endTensor; /* both levels when it ended, -1 unknown */
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
    int64_t minTensor;      /* lowest live bytes of a framework allocator's blocks (all devices), -1 unknown */
};

/* Phases, iterations and the boundaries growth is measured at (phase.c). */
struct vt_phases {
    struct vt_phase *a;
    int n;
    struct vt_iter *aIter;
    int nIter;
    const char *zSource;    /* "nvtx", "profiler", "kernels" or "none" */
    const char *zDoubt;     /* why phases could not be inferred from kernels with confidence, or NULL */
    int bOptIter;           /* the iterations are the spans between optimizer-step ranges (no iteration marked) */
    int bCycleIter;         /* the iterations are the cycles of a dump's tensor memory (nothing else marks them) */
    int64_t *aBoundary;     /* growth boundaries: training iteration ends, or slice ends of the run */
    int nBoundary, bSliceBoundaries;
    int nBoundaryDone;      /* boundaries passed so far in the replay */
};

struct vt_sitecurves; /* sitecurve.c */

/* Live bytes over time (timeline.c). */
struct vt_timeline {
    struct vt_device *aDev; /* accounts in order of first sight */
    int nDev;
    int64_t totalLiveNow, totalPeak, totalPeakTs; /* every device together */
    int64_t tensorTotalNow; /* a framework allocator's blocks live on every device together */
    int64_t pinnedSlice[VT_SLICES];
    struct vt_snap aEnd[VT_TOPMAX]; /* largest allocations live at the end */
    int nEnd;
    int curPhase, curIter;  /* replay cursors */
    struct vt_life *const *apLive; /* the live set the snapshots read */
    int nLive;
    struct vt_groupacc snapAcc; /* scratch of vt__live_snapshot, empty between calls */
    int bGroupNoMem;        /* a grouping ran out of memory (the replay then fails) */
    struct vt_sitecurves *pSiteCurves; /* the replay's site curves (sitecurve.c) until they are kept */
    int bSiteCurvesPartial; /* the site curves stop early: their bound was reached */
};

/* How lifetimes ended, and what uses were seen: struct vt_lifecounts (read/figures.h), the figures' counts
 * (t->f.fig.lc, by the live sets' one rule) with the uses the replay saw beside them. */

struct vt_xfer {           /* one direction: 0 HtoD, 1 DtoH */
    int64_t count, bytes, ns;
    int64_t pageCount, pageBytes, pageNs;
    double bestBw;          /* bytes/ns of the fastest copy >= 64 KiB, any host kind; 0 none */
    double bestPinnedBw;    /* the same among copies from or to pinned host memory; 0 none */
    int64_t firstPageTs, lastPageTs;   /* the pageable copies' first start and last end; 0 none */
    /* start-up: the pageable copies that ended before the first kernel started (weights loading) */
    int64_t prePageCount, prePageBytes, prePageNs, lastPrePageTs;
    int64_t firstRunPageTs, lastRunPageTs; /* the other pageable copies' first start and last end; 0 none */
};

/* Host-device copies against kernels (transfer.c). */
struct vt_transfers {
    struct vt_xfer x[2];
    /* copyNs and the serial times count the copies whose overlap is known: in the always-on mode, those that
     * started before the kernels became summaries (vt_tracefile.kernelSummaryFrom) */
    int64_t copyNs, copySerialNs, kernelBusyNs;
    int64_t pageSerialNs;  /* pageable copy time with no kernel running */
    int64_t firstKernelTs; /* start of the first kernel; 0 when the trace has none */
    /* start-up: the copies that ended before the first kernel started (pageable ones by direction) */
    int64_t preCount, preBytes, preNs;
    int bDone;             /* made during the scan (its kernel feed) */
};

struct vt_oom {
    int64_t ts, requested, freeBytes, totalBytes, held, poolCached, others;
    int64_t othersNvml;     /* other processes' bytes by NVML's reading nearest it (meta nvml.*, capped at others), -1
                             * not read; set by the OOM detector, which then judges by it */
    int othersNvmlProcs;    /* how many processes that reading listed */
    int bOthersLaunch;      /* that reading is the one before the job was launched */
    int64_t othersNvmlTs;   /* that sample's time, -1 the launch reading */
    const char *zOthersProcs; /* that reading's processes, "PID BYTES NAME;..." (the trace's meta), NULL unknown */
    int64_t tensorAllocated; /* blocks of a framework allocator live then, -1 when not known */
    int64_t allocAfter;     /* bytes of the (judged) device allocations that began after it, before the next OOM */
    int nextSite;           /* the site of the first of those on its device, -1 none */
    int64_t nextTs, nextBytes; /* and when it began, its size */
    int device, api, site;
    int64_t stackId;        /* the failing call's own stack (its site may be another stack's of the same text), -1 */
    const char *zVerdict;   /* set by the OOM detector */
    struct vt_snap aTop[VT_TOPMAX];
    int nTop;
    struct vt_group aGroup[VT_TOPMAX]; /* what was live on its device by site and kind, largest first */
    int nGroup;
    struct vt_breakdown bd; /* what the memory in use then was */
};

/*
 * One failed request (oomfail.c): the OOM events that were attempts of one failure (the
 * allocator's retry after releasing its cache, a smaller workspace, a caller asking for less),
 * and whether the job ended at it. Its verdict is that of attempt iJudged.
 */
#define VT_OOM_RETRY_NS 2000000000LL /* attempts of one failure follow each other within 2 s */
#define VT_OOM_AFTER_BYTES ((int64_t)1 << 20) /* allocated after a failure: the job went on past it */
struct vt_oomfail {
    int iFirst, nAttempt;   /* its attempts: aOom[iFirst .. iFirst + nAttempt) */
    int iJudged;            /* the attempt judged: the last of its largest request */
    int64_t firstTs, lastTs;
    int64_t requested;      /* the largest request of its attempts, -1 unknown */
    int device;
    int bFatal;             /* the job ended at it: nothing of note allocated after it, no iteration began */
    int bRecovered;         /* no error reached the program (oom_recovered): the allocator's retry after releasing
                             * its cache, cuDNN's smaller workspace */
    int64_t liveEndBytes, liveEndCount; /* fatal: what was live on its device at the end, all of it made before it */
};

/* Everything known about one trace (one process) after analysis. */
struct vt_trace {
    struct vt_tracefile f;  /* the read layer's view: meta, devices, notes, scan facts */
    struct vt_sites sites;
    struct vt_phases ph;
    struct vt_timeline tl;
    struct vt_lifecounts lc; /* the figures' counts (t->f.fig.lc) and the replay's use counts */
    struct vt_transfers xf;
    struct vt_oom *aOom;
    int nOom;
    struct vt_oomfail *aFail; /* the OOM events grouped into failed requests, in time order */
    int nFail;
    int64_t crashTs;          /* the last attempt of the failure the job ended at, -1 when it did not end at one */
    int64_t wallStart;        /* wall-clock ns of its first event, -1 unknown: with host and pid, which process it is */
    struct vt_writeback *pWb; /* results written back, when writable (writeback.c) */
    struct vt_bdrun *pBd;     /* the breakdown's state during the replay (breakdown.c) */
    struct vt_fitstream *pFs; /* the requests for the allocator's replay, from the replay to the fit (allocsim.c) */
};

struct vt_finding {
    const char *zKind;      /* leak, retained, validation_spike, transfer, oom, info */
    int severity;
    char *zTitle, *zEvidence, *zFix, *zSite;
    int64_t bytes, count, firstTs, lastTs, stackId;
    int device;
    char zPhase[96];
    int trace;              /* index of the trace (process); of a grouped finding, the worst one's */
    /* set by vt__findings_group when several findings were one (repeats, ranks); else 1, NULL, 0 */
    int nSame;              /* findings this one stands for */
    int *aTraces, nTraces;  /* the traces they occurred on, ascending (NULL: only trace) */
    int64_t *aTraceTs;      /* with aTraces: the first time it occurred on each (that trace's clock), -1 unknown */
    int64_t *aBytes;        /* with aTraces: the bytes of the nSame findings, ascending (grouping again keeps the spread) */
    int64_t bytesMin, bytesMed, bytesMax; /* the spread of their bytes */
};

/* The findings of all traces, sorted worst first. */
struct vt_result {
    struct vt_trace *aTrace; /* the traces read */
    int nTrace;
    const char **azFailed;   /* the paths that could not be read (each named on stderr) */
    int nFailed;
    /* inputs read as another one (the same file, a trace of the same process): the note that says so,
     * r->aTrace[trace].f.azNote[note], for a command that shows no trace notes (diff) to say it */
    struct vt_once {
        int trace, note;
    } *aOnce;
    int nOnce;
    struct vt_finding *aFind;
    int nFind, nFindAlloc;
    const struct vt_opts *pOpts;
};

/* ---- detectors ---- */
enum vt_event_type {
    VT_EV_BEGIN = 1, /* an allocation (or VMM creation, or tensor block) begins: e->l */
    VT_EV_END,       /* one ends (freed, or live at the end: e->l->status): e->l */
    VT_EV_OOM,       /* an allocation failed: e->o, its snapshot taken */
};
struct vt_event {
    int type;
    int64_t ts;
    const struct vt_life *l;
    const struct vt_oom *o;
};
/*
 * A detector: its state (nState bytes, zeroed by the driver for each trace) fed by the
 * replay's events, findings appended at the end. xBegin runs before the replay (phases
 * known), xEvent for each event of the kinds in mEvents (bit 1 << type), xEnd after it
 * (the timeline, transfers and OOM snapshots complete) to append findings, xFree releases
 * what the state owns. Every callback may be NULL; each returns 0, or -1 when out of memory.
 */
struct vt_detector {
    const char *zName;
    size_t nState;
    unsigned mEvents;
    int (*xBegin)(void *st, const struct vt_trace *t, const struct vt_opts *o);
    int (*xEvent)(void *st, const struct vt_trace *t, const struct vt_event *e);
    int (*xEnd)(void *st, struct vt_result *r, int iTrace);
    void (*xFree)(void *st);
};
extern const struct vt_detector vt__detector_leak, vt__detector_retained, vt__detector_spike,
    vt__detector_transfer, vt__detector_oom;

/* ---- result.c: findings and the shared judgments ---- */
const char *vt__sev_name(int sev);
/* Why a finding of t names no call site, said after "site not recorded": the tracer's settings that record one
 * (" (call sites are recorded by default: keep VRAMTRACE_BACKTRACE above 0 ...)"), or, for a file imported from
 * another tool, that the file holds none (no setting of vramtrace's gives it one). */
const char *vt__no_site_help(const struct vt_trace *t);
int vt__sev_parse(const char *z);                      /* -1 if unknown */
const char *vt__phase_kind_name(int kind);
/* Append a zeroed finding (unknown times, stack and device = -1); strings are taken over. NULL on OOM. */
struct vt_finding *vt__finding_add(struct vt_result *r, int trace, const char *zKind, int sev);
void vt__findings_sort(struct vt_result *r);
/* Whether finding f occurred on trace iTrace (a grouped finding: on any of its traces). */
int vt__finding_on(const struct vt_finding *f, int iTrace);
/* When finding f first occurred on trace iTrace (that trace's clock): -1 when unknown or not there. */
int64_t vt__finding_first_on(const struct vt_finding *f, int iTrace);
/* Release what finding f owns (its texts, its grouping arrays); the slot itself stays. */
void vt__finding_free(struct vt_finding *f);
/* Number of findings of trace iTrace; *pWorst receives their highest severity (-1 if none). */
int vt__trace_findings(const struct vt_result *r, int iTrace, int *pWorst);
/*
 * Severity from impact, decided here once for every detector: bytes held against the
 * largest device peak (HIGH >= 1 GiB or 10 % of it, MEDIUM >= 64 MiB or 1 %, else LOW),
 * time lost against the run (HIGH >= 10 %, MEDIUM >= 1 %, else LOW).
 */
int vt__sev_bytes(const struct vt_trace *t, int64_t bytes);
int vt__sev_time(const struct vt_trace *t, int64_t ns);
/* Largest device (not pinned host) peak of the trace, for relative severities. */
int64_t vt__main_peak(const struct vt_trace *t);
/*
 * Whether t's live memory is known: 0 for a trace imported from a file that records no
 * allocation (a torch.profiler trace without 'Addr', an Nsight export without memory events),
 * whose peaks are unknown rather than 0; 1 otherwise (a trace that allocated nothing peaks at 0).
 */
int vt__memory_known(const struct vt_trace *t);
/* Phase p's peak in trace t: its highest live bytes where t's memory is known, else the importer's running
 * total where it peaked inside the phase (vt__fig_window_total; no lifetimes), else -1 (unknown, not 0). */
int64_t vt__phase_peak(const struct vt_trace *t, const struct vt_phase *p);
/*
 * Whether t shows training: a training phase, or an allocation site in a backward pass or an
 * optimizer (fix texts give training advice only then).
 */
int vt__shows_training(const struct vt_trace *t);
/* Where t's "live at the end" is, in words: "at the snapshot's dump" (a PyTorch snapshot), "at the end of the
 * profiler's window" (a torch.profiler trace), else "at exit". */
const char *vt__end_said(const struct vt_trace *t);
/* The fix text for memory held as state (weights, caches): training advice only when t shows training. */
const char *vt__fix_state(const struct vt_trace *t);
/*
 * Whether how long l was held says nothing: uses not known (no kernel-argument uses: copies
 * alone would make every buffer only kernels touch look unused; a block in no traced CUDA
 * allocation; or CUPTI lent to the job's profiler after l's last known use: a use then was not
 * recorded), or memory held by design (a cache of segments, the runtime's own memory, NCCL's
 * buffers, pinned host memory), or no known allocation time. Idle and carried-over memory are
 * judged only when this is 0, and from l->useBound (the latest time it may have been used,
 * replay.c), never from its own last use alone.
 */
int vt__unjudged_hold(const struct vt_trace *t, const struct vt_life *l);
/*
 * Rising baseline test: a[0..n-1] with -1 entries carried forward from the previous value.
 * Growing when at least 4 steps exist, the total rise is >= minRise, no single drop exceeds a
 * quarter of the rise, and either 60 % of steps go up or (a staircase) at least 3 do, with a
 * rise in each third of the steps and no single one above half of the total. *pRise receives
 * last - first.
 */
int vt__trend(const int64_t *a, int n, int64_t minRise, int64_t *pRise);
/*
 * The allocator's blocks beside CUDA's allocations, for a process's summary: "inside these allocations
 * (a PyTorch snapshot: segments), the allocator's blocks (tensors): 3907 allocated, 162 live at exit
 * (439 MiB)", into z (size n); returns
 * 1, or 0 (z empty) when the trace has no blocks or the blocks are its only allocations (counted as such).
 */
/* ts from the one time origin ("0 s", "12.0 us", "1.25 s"; "?" when unknown, or t has no times), into z
 * (vt__fig_fmt_at: the same in every command). */
void vt__fmt_at(const struct vt_trace *t, int64_t ts, char *z, size_t n);

/* ---- release.c ---- */
/* Release everything a trace owns (closing its file; its write-back is the driver's to end first); *t zeroed. */
void vt__trace_free(struct vt_trace *t);
/* Release r: its findings and traces; *r zeroed. */
void vt__result_free(struct vt_result *r);

/* Whether the options' regular expressions compile: VT_EXIT_OK, or VT_EXIT_USAGE (one line printed). */
int vt__phase_check_opts(const struct vt_opts *o);

/* ---- kplace.c ---- */
/* A kernel wanted by its place in start order (idx), and when it began (ts; corr: its correlation id). */
struct vt_want {
    int64_t idx, corr, ts;
};
/*
 * When the kernels at the n places aW[].idx (in start order) began: the host time of the launch where
 * the trace has the launch call and it is earlier, else the start on the device; -1 past the last
 * kernel. Sorts aW by place; returns an SQLite code.
 */
int vt__kernels_at(sqlite3 *db, struct vt_want *aW, int n);
/* When the kernel at place idx began (vt__kernels_at), or -1 when it was not wanted or not found. */
int64_t vt__want_ts(const struct vt_want *aW, int n, int64_t idx);
/* An evaluation window inferred from kernels: its kernels' places [first, first + n) in start order, its
 * time [start, end), a training forward pass's kernel count f, and the period of its names p (0: none). */
struct vt_ewin {
    int64_t first, n, f, start, end, p;
    int64_t lead; /* places at its start outside the repetition (a step's tail longer than the one assumed) */
};
/* The period of each window's kernel names (its batches), into .p; an SQLite code. */
int vt__kernel_periods(sqlite3 *db, struct vt_ewin *aWin, int nWin);
/* The batches of windows with a period, as spans [start, end) in *paSpan (2 values each, *pnSpan spans). */
int vt__window_batches(sqlite3 *db, const struct vt_ewin *aWin, int nWin, int64_t **paSpan, int *pnSpan);

/* ---- phase.c ---- */
/* Phases and iterations of t (NVTX, else kernel names), and the growth boundaries. A VT_EXIT code. */
int vt__phases(struct vt_trace *t, const struct vt_opts *o);
/* Kernel roles by name (vt__kernel_role). */
enum vt_kernel_role { VT_KROLE_OTHER = 0, VT_KROLE_BWD, VT_KROLE_OPT, VT_KROLE_COLL };
/* The role of a kernel from its (demangled or mangled) name, matched on whole name tokens:
 * optimizer, backward, NCCL collective, or other (forward and anything unrecognized). */
int vt__kernel_role(const char *zName);
/* Index of the phase containing ts, or -1. */
int vt__phase_at(const struct vt_trace *t, int64_t ts);
/*
 * The name of the phase a call at ts (site text zSite, may be NULL) was made in, into z (size n):
 * the phase containing ts (returns 1); else, with phases inferred from kernels, "evaluation"
 * when ts follows the last training phase (nothing ran after it that training kernels would
 * show) and the call's function, or a user function calling it (a Python frame of stack stackId, -1
 * none, outside the installed libraries), matches the evaluation regex (returns 2); "evaluation" too
 * when ts lies in a training phase inferred from kernels and the call matches so (an evaluation too
 * short to be told from a step by its kernels: returns 3); else "" (0).
 */
int vt__phase_of_call(const struct vt_trace *t, const struct vt_opts *o, int64_t ts, const char *zSite, int64_t stackId,
                      char *z, size_t n);
/* Index of the iteration containing ts, or -1. */
int vt__iter_at(const struct vt_trace *t, int64_t ts);
/*
 * The evaluation phase a training lifetime l was carried into unused (allocated in training,
 * last possibly used (l->useBound) before the phase started, live when it started), or -1;
 * *pbHeld says whether it stayed live through that phase (or to the end of a trace that trains
 * again afterwards). State kept from step to step (possibly used after the training iteration
 * it was allocated in: weights, optimizer state) is never carried over: -1.
 */
int vt__carried_into(const struct vt_trace *t, const struct vt_life *l, int *pbHeld);

/* ---- timeline.c ---- */
int vt__dev_index(struct vt_trace *t, int acct);      /* creates entries, -1 OOM */
void vt__timeline_begin(struct vt_trace *t);
/* The slice (0 .. VT_SLICES - 1) of [a, b) that ts falls in, the first or last beyond it; 0 when b <= a. */
int vt__slice_of(int64_t ts, int64_t a, int64_t b);
void vt__timeline_update(struct vt_trace *t, int iDev, int64_t ts);
void vt__timeline_tensor(struct vt_trace *t, int iDev, int64_t ts); /* d->tensorLive changed at ts */
void vt__timeline_snapshot(struct vt_trace *t, int iDev);
void vt__timeline_phase_snapshot(struct vt_trace *t); /* current phase, before live bytes drop */
void vt__timeline_phase_step(struct vt_trace *t, int64_t ts); /* phase/iteration minima */
/*
 * One level `live` of a series of live bytes (peak: the highest before it) into its cycle count: a
 * rise from *pLo to *pHi of at least an eighth of the peak so far, then a fall by half of it or
 * more, counts one (*pn; returns 1 then) and the next starts from there. Start with *pLo = *pHi = 0.
 */
int vt__cycle_step(int64_t *pLo, int64_t *pHi, int *pn, int64_t live, int64_t peak);

/* The timeline bucket of ts (0 .. VT_TIMELINE_BUCKETS - 1). */
int vt__timeline_bucket(const struct vt_trace *t, int64_t ts);

/* ---- sitecurve.c ---- */
#define VT_SITECURVE_TOP 8 /* sites per device whose curves are kept, by peak (besides those findings name) */
/* Site `site`'s live bytes in account acct changed by delta at ts (a judged lifetime began or ended). 0, or -1 (OOM). */
int vt__sitecurves_add(struct vt_trace *t, int acct, int site, int64_t delta, int64_t ts);
/*
 * After trace iTrace's findings: keep, per device account, the curves of its VT_SITECURVE_TOP
 * largest sites by peak and of the sites the findings name (vt_device.aSite), and free the
 * replay's curves. 0, or -1 when out of memory (the replay's curves are freed all the same).
 */
int vt__sitecurves_keep(struct vt_result *r, int iTrace);
/* Free the replay's site curves (a trace that failed midway; vt__sitecurves_keep does it otherwise). */
void vt__sitecurves_drop(struct vt_trace *t);

/* ---- live_group.c ---- */
#define VT_ACCT_DEVICES (-4) /* vt__live_snapshot: every device (acct >= 0), no host or managed memory */
/* Insert l into the descending-by-bytes top list a (*pN entries, at most cap). */
void vt__top_insert(struct vt_snap *a, int *pN, int cap, const struct vt_life *l);
/* Add l to g (t's sites: l->site a valid index). 0, or -1 when out of memory (t->tl.bGroupNoMem set). */
int vt__groupacc_add(struct vt_trace *t, struct vt_groupacc *g, const struct vt_life *l);
/* g's nCap largest groups into aGroup[0 .. *pn) (bytes, then count, descending; ties by site and kind); g is emptied. */
void vt__groupacc_take(struct vt_groupacc *g, struct vt_group *aGroup, int *pn, int nCap);
/* Empty g (what it holds is kept for reuse). */
void vt__groupacc_clear(struct vt_groupacc *g);
void vt__groupacc_free(struct vt_groupacc *g);
/*
 * A device's live-at-peak list (aTop, aGroup) made at its breakdown's moment, as the breakdown sums its parts
 * (breakdown.c): begun empty when the moment is taken (ts: the moment, -1 unknown), each lifetime live then
 * added as it ends (0, or -1 when out of memory: t->tl.bGroupNoMem), its groups ranked at the end.
 */
void vt__peaklist_begin(struct vt_device *d, int64_t ts);
int vt__peaklist_add(struct vt_trace *t, struct vt_device *d, const struct vt_life *l);
void vt__peaklist_end(struct vt_device *d);
/* the largest allocations live in acct and all of them by site and kind, in one pass; 0 or -1 (OOM) */
int vt__live_snapshot(struct vt_trace *t, struct vt_life *const *apLive, int nLive, int acct, struct vt_snap *aTop,
                      int *pnTop, int nTopCap, struct vt_group *aGroup, int *pnGroup, int nGroupCap);
/* "3 allocations, 3.00 GiB from SITE (device), largest 1.00 GiB", into z */
void vt__fmt_group(const struct vt_trace *t, const struct vt_group *g, char *z, size_t n);
/*
 * The memory figures people confuse, for device account d of t when the trace holds both levels (the
 * allocator's tensors inside CUDA's segments): what the tensors held at the reserved peak (the figure
 * source's), and what nvidia-smi adds. Into z (size n); returns 1, or 0 (z empty) otherwise.
 */
int vt__fmt_reconcile(const struct vt_trace *t, const struct vt_device *d, char *z, size_t n);

/* ---- transfer.c ---- */
/* The transfer pass fed kernel by kernel in start order (by the scan's kernel feed, or vt__transfers). */
struct vt_xfer_run;
int vt__xfer_begin(struct vt_trace *t, struct vt_xfer_run **px); /* SQLite code */
int vt__xfer_kernel(void *x, int64_t start, int64_t end);        /* SQLite code */
int vt__xfer_end(struct vt_xfer_run *x, int bFinish);            /* SQLite code; releases x */
/* The pass over the kernels when the scan did not make it (t->xf.bDone). A VT_EXIT code. */
int vt__transfers(struct vt_trace *t);

/* ---- breakdown.c ---- */
/* The category's key in JSON ("parameters", "optimizer_state", ...), its name for people, and whether
 * its bytes grow with the batch (activations, temporaries). */
const char *vt__cat_key(int cat);
const char *vt__cat_name(int cat);
int vt__cat_scales(int cat);
/*
 * The breakdown follows the replay: vt__bd_begin before it; vt__bd_life_begin as a lifetime
 * begins; vt__bd_before_end as one is about to end (still counted: the moment a device stands
 * at its peak is taken then); vt__bd_life_end as it ends (its category added to every moment it
 * was live at); vt__bd_oom at an OOM (its moment); vt__bd_samples_upto before an event at ts
 * (the device-memory samples taken before it see the traced level then); vt__bd_finish before
 * the lifetimes live at the end end; vt__bd_end after the replay makes each device's and OOM's vt_breakdown. Each
 * returns 0, or -1 when out of memory or on an SQLite error reading a stack. vt__bd_free
 * releases the state (on any path). With bCurves, vt__bd_end also makes each device's category
 * curve (vt_device.aCatPt): every lifetime's bytes under the category the same rules give it,
 * from its beginning to its end, so that the curve at the peak's moment is the peak's breakdown.
 */
int vt__bd_begin(struct vt_trace *t, int bTensorsInSegments, int bCurves);
int vt__bd_life_begin(struct vt_trace *t, struct vt_life *l);
int vt__bd_before_end(struct vt_trace *t, const struct vt_life *l);
int vt__bd_life_end(struct vt_trace *t, const struct vt_life *l);
int vt__bd_oom(struct vt_trace *t, int iOom);
void vt__bd_samples_upto(struct vt_trace *t, int64_t ts);
int vt__bd_finish(struct vt_trace *t);
int vt__bd_end(struct vt_trace *t);
void vt__bd_free(struct vt_trace *t);
/*
 * A kernel read l at ts (its argument named l's base): at tensor level (one allocation per tensor),
 * a read in the forward pass of a step after the one l began in (before that step's backward pass
 * began) marks l (vt_life.bdFwdUse), which tells parameters a hand-written optimizer writes anew
 * from its state. Uses reach it in time order.
 */
void vt__bd_use(struct vt_trace *t, struct vt_life *l, int64_t ts);
/* Whether l is a segment of PyTorch's allocator holding the trace's blocks (the breakdown's "allocator
 * cache" rule; only while the breakdown runs): 1, 0, or -1 (SQLite error reading its stack, out of memory). */
int vt__bd_cache_segment(struct vt_trace *t, const struct vt_life *l);
/* Release what breakdown b owns; b->total becomes -1. */
void vt__breakdown_clear(struct vt_breakdown *b);
/* The part of category cat in b (the first, for libraries), NULL when none. */
const struct vt_bdpart *vt__bd_part(const struct vt_breakdown *b, int cat);

/* ---- catcurve.c ---- */
#define VT_CATLIB_MAX 16 /* libraries a breakdown names apart; the others share the last slot */
/* A category curve's change: a lifetime under a breakdown rule began (bytes > 0) or ended, in replay order (seq). */
struct vt_catev {
    int64_t ts, seq, bytes;
    int acct, rule, iLib, bTensor;
};
struct vt_catevs {
    struct vt_catev *a;
    int64_t n, nAlloc;
};
/* Append the change (ts, seq, bytes) of l under rule (library slot iLib, -1 none) to c. 0, or -1 out of memory. */
int vt__catev_add(struct vt_catevs *c, const struct vt_life *l, int64_t ts, int64_t seq, int64_t bytes, int rule,
                  int iLib);
/* Order c's changes by account, then time, then replay order. */
void vt__catev_sort(struct vt_catevs *c);
/* Device d's category curve (d->aCatPt, d->azCatLib) from the sorted changes c of its account: each change moves
 * the series aSeries[rule] (VT_CAT_LIB: library iLib's, by module azLib), a block inside a segment (bTensorsIn)
 * the cache the other way; what was there before the trace (before > 0) and a cache known only at the peak
 * (cache > 0) stand from t0. 0, or -1 out of memory. */
int vt__catcurve_make(struct vt_device *d, const struct vt_catevs *c, const int *aSeries,
                      const char (*azLib)[64], int bTensorsIn, int64_t t0, int64_t before, int64_t cache);
/* Series s of device d's category curve as a breakdown part (category, library module) for naming it. */
struct vt_bdpart vt__catcurve_part(const struct vt_device *d, int s);

/* ---- bdlayout.c ---- */
/* The segments of the caching allocator and the blocks inside them live at a moment, by address. */
struct vt_bdref {
    int64_t addr, bytes;
    int bSeg;
};
struct vt_bdlayout {
    struct vt_bdref *a;
    int64_t n, nAlloc;
};
/* Add a segment (bSeg) or a block at addr of bytes to L (an unknown address or size: nothing). 0, or -1 out of memory. */
int vt__bdlayout_add(struct vt_bdlayout *L, int64_t addr, int64_t bytes, int bSeg);
/*
 * The fragmentation seen in L (sorted here) into bd: the free pieces of segments that hold at least
 * one live block, each of at least 512 B and smaller than req (every piece where req <= 0): free
 * memory the allocator keeps but cannot give that request, nor release (a wholly free segment it
 * can). Only the segments of req's pool count (2 MiB segments are the small pool's, for requests of
 * up to 1 MiB; the others the large pool's): the other pool's holes could never serve it. A
 * device's peak, and each OOM with its failed request. bd->fragBytes, fragPieces, fragSegs, fragReq.
 */
void vt__bdlayout_frag(struct vt_bdlayout *L, int64_t req, struct vt_breakdown *bd);

/* ---- fit.c ---- */
/* What would fit on each device of trace iTrace with a breakdown (vt_device.fit). 0, or -1 when out of memory. */
int vt__fit(struct vt_result *r, int iTrace);
/* Release what fit f owns. */
void vt__fit_clear(struct vt_fit *f);

/* ---- allocsim.c ---- */
#define VT_FS_MAX ((int64_t)1 << 22) /* lifetimes kept for the allocator's replay (40 bytes each) */
#define VT_FS_REPLAYS 24             /* replays of the stream per device, the bisection's steps included */
#define VT_FS_FIT_WORK ((int64_t)1 << 24) /* lifetimes replayed at most by one vt__fs_fit (n x replays, the climb
                                           * included): ~11 s on a loaded 2-core machine */
#define VT_FS_FINE 400               /* replays at most of the climb in steps of 2.5 % (a small stream) */
#define VT_FS_FINE_WORK ((int64_t)1 << 21) /* lifetimes replayed at most by that climb (n x replays): ~1.5 s */
#define VT_FS_NEED_WORK ((int64_t)1 << 22) /* lifetimes replayed at most by one vt__fs_need (n x replays): ~3 s */
#define VT_FS_NEED_REPLAYS 40        /* replays at most of vt__fs_need's bisection over the memory */
#define VT_FS_SCALES_UNKNOWN 2 /* vt__fs_add: whether it grows with the batch cannot be told from its category */
enum { VT_FS_DIRECT = 0, VT_FS_CACHED, VT_FS_POOL }; /* who served a lifetime: a library, PyTorch's caching
                                                      * allocator, the cudaMallocAsync pool */
/* The allocator's settings the trace states (PYTORCH_ALLOC_CONF, a snapshot's allocator_settings). */
struct vt_fsconfig {
    int bExpandable;        /* expandable_segments:True */
    int64_t maxSplit;       /* max_split_size in bytes, 0 none */
    int64_t poolChunk;      /* the cudaMallocAsync pool's smallest growth seen, 0 none */
    int64_t fitWork;        /* lifetimes vt__fs_fit may replay in all, 0: VT_FS_FIT_WORK */
};
/* What a replay found: the largest scale (batch) served without a failure. */
struct vt_fsresult {
    double maxScale;        /* -1 unknown */
    int64_t maxBatch;       /* with a batch size, -1 without */
    int64_t peakAtOne;      /* the model's highest level at the traced batch */
    int nReplay;
    int bOpen;              /* the replays ran out before the largest was bracketed to one batch */
    int bFine;              /* climbed from the traced batch in steps of 2.5 % to the first failure (else by quarters
                             * from the guess, or beyond VT_FS_FINE_WORK / n replays) */
    int bPool, bCached;     /* the stream held cudaMallocAsync's allocations, the caching allocator's blocks */
    int bFailed;            /* the stream held a request that failed (an OOM the job did not recover from) */
    int bBelow;             /* the traced batch failed in the model: the largest batch is below it */
    int bBounded;           /* the work bound (cfg->fitWork) cut the replays short and left the bracket open: maxScale
                             * is an estimate */
    double hiScale;         /* the least scale seen to fail, -1 none */
    int64_t hiBatch;        /* as a batch size, -1 none or without one */
    int64_t nWork;          /* lifetimes replayed in all */
    int64_t workBound;      /* the bound on them that applied (cfg->fitWork, else VT_FS_FIT_WORK) */
};
/* Append lifetime l of t (ended at breakdown sequence endSeq; growing with the batch: 1, 0, or
 * VT_FS_SCALES_UNKNOWN) to t's replay stream. 0, or -1 when out of memory. */
int vt__fs_add(struct vt_trace *t, const struct vt_life *l, int64_t endSeq, int bScales);
/* Append the request OOM event iOom of t failed for (at breakdown sequence seq, freed at seq + 1: demand at that
 * moment, growing with the batch; from PyTorch's caching allocator when bCached and not a cudaMallocAsync call) to
 * t's replay stream; it is replayed only where it is the judged attempt of a failure the job did not recover from
 * (a recovered one's retry is in the stream). 0, or -1 when out of memory. */
int vt__fs_add_failed(struct vt_trace *t, int iOom, int64_t seq, int bCached);
/* Release t's replay stream. */
void vt__fs_free(struct vt_trace *t);
/* The allocator settings t's meta states into *c. 0. */
int vt__fs_config(const struct vt_trace *t, struct vt_fsconfig *c);
/* Whether t's allocator settings say expandable_segments:True (vt__fs_config's bExpandable). */
int vt__fs_expandable(const struct vt_trace *t);
/*
 * The largest batch scale of device acct of t whose stream the allocator models serve within limit bytes,
 * bisected from guess (batch > 0: in whole batch sizes of it, else in thousandths) into *pRes, at most
 * VT_FS_REPLAYS replays (more for the climb of a small stream) and cfg->fitWork lifetimes replayed in all
 * (pRes->bBounded where that cut it short, the bracket then [maxScale, hiScale)); where the traced
 * batch fails with a request that failed in the stream (pRes->bBelow), bisected below it. 0 found; 1 the trace
 * had more than VT_FS_MAX lifetimes; 2 no stream for it; 3 the traced batch fails in the model without a failed
 * request in it, or not even the smallest batch (one unit) is served with one; -1 out of memory.
 */
int vt__fs_fit(const struct vt_trace *t, int acct, const struct vt_fsconfig *cfg, int64_t limit, int64_t batch,
               double guess, struct vt_fsresult *pRes);
/* The least memory in which a stream is served (vt__fs_need). */
struct vt_fsneed {
    int64_t need;           /* the least memory found to serve it (an upper bound of the least), -1 unknown */
    int64_t slack;          /* the bracket left: the least lies in (need - slack, need]; -1 unknown */
    int nReplay;            /* replays made */
    int bBounded;           /* the work bound stopped the bisection before 1 MiB: need is an estimate */
};
/*
 * The least memory (to 1 MiB, below hiLimit) in which the allocator models serve device acct's
 * stream at the traced batch, into *pNeed: one replay in hiLimit (its highest level bounds the
 * answer), then bisected over the memory, at most VT_FS_NEED_REPLAYS replays and VT_FS_NEED_WORK
 * lifetimes replayed in all (a larger stream stops with a wider bracket: pNeed->bBounded). 0 found;
 * 1 the stream was not kept or is too large for one replay (n > VT_FS_NEED_WORK); 2 no stream; 3 not
 * served even in hiLimit; -1 out of memory.
 */
int vt__fs_need(const struct vt_trace *t, int acct, const struct vt_fsconfig *cfg, int64_t hiLimit,
                struct vt_fsneed *pNeed);

/* ---- oomfail.c ---- */
/* Group t's OOM events into failed requests (t->aFail) and find whether the job ended at the last one
 * (t->crashTs). After the replay has seen every row, before the lifetimes live at the end end. 0 or -1. */
int vt__oom_failures(struct vt_trace *t);
/* Count l (live at the end of the trace) in the fatal failure's live memory when it was live at the crash. */
void vt__oom_live_at_end(struct vt_trace *t, const struct vt_life *l);
/* Whether l, live at the end, was live when the job crashed at an OOM (so it is not leaked: the OOM holds it). */
int vt__live_at_crash(const struct vt_trace *t, const struct vt_life *l);

/* ---- replay.c ---- */
/* Replay trace t in time order, feeding the detectors aDet[0..nDet) with states aSt. A VT_EXIT code. */
int vt__replay(struct vt_trace *t, const struct vt_opts *o, const struct vt_detector *const *aDet, void *const *aSt,
               int nDet);

/* ---- writeback.c ---- */
struct vt_writeback;
int vt__writeback_begin(struct vt_trace *t);                  /* DDL + lifetime insert statement; VT_EXIT */
int vt__writeback_life(struct vt_trace *t, const struct vt_life *l); /* SQLite code */
int vt__writeback_end(struct vt_result *r, int i);            /* phases, findings, commit; VT_EXIT */
void vt__writeback_free(struct vt_trace *t);

/* ---- group.c ---- */
/*
 * One finding per root cause: findings of the same kind, site, phase and title (its figures
 * aside) become one, the worst kept with the traces (ranks) they occurred on, their first time
 * on each, their number and the spread of their bytes. Grouping findings already grouped gives
 * what grouping them all at once gives (each trace's findings are grouped before they are
 * written back, then every trace's together). Returns 0, or -1 when out of memory (then some
 * may stay apart).
 */
int vt__findings_group(struct vt_result *r);
/* The root cause of f as a key: kind, site, phase and title with its figures taken out (malloc'd, NULL on OOM). */
char *vt__finding_key(const struct vt_finding *f);
/*
 * Whether r's traces may be processes of one job, whose device peaks should then be alike: 1 when
 * every one has a rank, or no two of them record different command lines; 0 for processes known to
 * run different programs, or read as runs apart in time (fig.bOtherRuns): the imbalance of their
 * peaks means nothing.
 */
int vt__result_one_job(const struct vt_result *r);
/*
 * The name of process t for people: "pid 4242", "pid 4242, rank 1"; a trace that records no
 * pid (an imported snapshot) is named by its file's name instead ("run.pickle", with ", rank 1"
 * when it has one). Into z (size n); returns z.
 */
const char *vt__fmt_process(const struct vt_trace *t, char *z, size_t n);
/*
 * Where f occurred when r has several traces: "all 64 ranks", "rank 2 only", "ranks 0-3, 7
 * (5 of 64)", or by process without ranks ("all 4 processes", "pid 12 only" (vt__fmt_process),
 * "2 of 4 processes"). Into z (size n); empty with one trace.
 */
void vt__fmt_ranks(const struct vt_result *r, const struct vt_finding *f, char *z, size_t n);
/* For a grouped f, how often and the spread of its bytes ("39 times: 1.00 GiB min, 1.50 GiB median,
 * 1.80 GiB max", "once in each of 64 processes, 386 MiB each"); else empty. Into z (size n). */
void vt__fmt_spread(const struct vt_finding *f, char *z, size_t n);
/* f's bytes as its report line says them: "1.50 GiB", or "size unknown" where the file records none (an
 * imported OOM whose request size is unknown). Into z (size n); returns z. */
const char *vt__fmt_finding_bytes(const struct vt_finding *f, char *z, size_t n);

/* ---- diff.c: two runs compared (vramtrace diff) ---- */
enum { VT_DIFF_NEW = 1, VT_DIFF_GONE, VT_DIFF_GREW, VT_DIFF_SHRANK };
/* A figure of one side of the comparison: its value, -1 unknown (that run has the thing, not the figure: reports say
 * "unknown", JSON null), or VT_DIFF_NONE: that run has not the thing (a process, device, phase, site: "none"). */
#define VT_DIFF_NONE (-2)
struct vt_diffcat {
    int cat;                /* enum vt_cat */
    char zOwner[64];
    int64_t base, cur;      /* its bytes at each run's peak (0: not in a breakdown that side has; without one, as
                             * baseSum / curSum: unknown or none) */
};
struct vt_diffdev {
    int iBase, iNew;        /* the process in each run (trace index), -1: only in the other */
    int id;                 /* device id */
    char zProc[200], zName[128]; /* zProc: the pair's label (both sides' where they differ) */
    int64_t base, cur;      /* the peaks (vt__fig_headline), -1 unknown, VT_DIFF_NONE not in that run */
    int aOf[2];             /* which figure each is (enum vt_headof), base then new */
    int64_t baseAlloc, curAlloc; /* the allocated peaks beside them (said where a side's peak is a reserved one), -1
                                  * unknown, VT_DIFF_NONE not in that run */
    int64_t baseSum, curSum; /* what each breakdown sums to, -1 none made (unknown), VT_DIFF_NONE not in that run (its
                              * basis: azBasis) */
    const char *azBasis[2]; /* the breakdowns' bases (struct vt_breakdown zBasis), base then new; NULL none */
    struct vt_diffcat *aCat; /* the breakdowns' categories side by side */
    int nCat;
};
struct vt_diffsite {
    char *zSite;
    int64_t base, cur;      /* highest live bytes in any process of each run, VT_DIFF_NONE: not in it */
    int change;             /* VT_DIFF_* */
};
struct vt_diffphase {
    char zProc[200], zName[96];
    int kind;
    int64_t base, cur;      /* peaks, -1 unknown, VT_DIFF_NONE not in that run */
};
struct vt_difffind {
    const struct vt_finding *f; /* in NEW when bNew (appeared, or changed), else in BASE (vanished) */
    int bNew;
    /* the same root cause at another severity: BASE's finding (f and bNew: NEW's); NULL for the others */
    const struct vt_finding *pBaseF;
};
struct vt_diff {
    const struct vt_result *pBase, *pNew;
    char *zWarn;            /* why the runs look like different jobs, NULL when alike */
    struct vt_diffdev *aDev;
    int nDev;
    struct vt_diffsite *aSite; /* the sites that changed by at least minBytes (and 10 %), largest change first */
    int nSite;
    struct vt_diffphase *aPhase;
    int nPhase;
    struct vt_difffind *aFind;
    int nFind;
    double maxGrowthPct;    /* the largest growth of a device peak, percent (iMaxGrowth >= 0) */
    int iMaxGrowth;         /* that device entry, -1 none compared */
    int64_t minBytes;
};
/* Compare two analyses; d refers to both (they must outlive it). 0, or -1 when out of memory (d then freed). */
int vt__diff(const struct vt_result *pBase, const struct vt_result *pNew, int64_t minBytes, struct vt_diff *d);
void vt__diff_free(struct vt_diff *d);

/* ---- pipeline.c ---- */
/*
 * The whole pipeline for the given paths. A trace that cannot be read is named (one line)
 * and left out; the others are analyzed. Returns VT_EXIT_OK, the failing trace's code when
 * it is the only one, VT_EXIT_PARTIAL when some but not all were read; r holds what was
 * done and must be freed with vt__result_free.
 */
int vt__analyze(const char **azPath, int nPath, const struct vt_opts *o, struct vt_result *r);
/*
 * The pipeline for one trace the caller has read (vt__read_open, VT_READ_KEEP and not VT_READ_WRITE: the
 * same read that vt__analyze makes, without the transfer pass fed by the scan), so that a command that
 * reads the trace for itself does not read it twice. f is lent: the analysis reads through its connection,
 * and on return it is the caller's again, open, with the time origin it had (what the replay counted stays
 * in its figures); r's one trace holds no tracefile (its f is zeroed). Returns a VT_EXIT code (one line
 * printed on error; r is then empty); r must be freed with vt__result_free.
 */
int vt__analyze_read(struct vt_tracefile *f, const struct vt_opts *o, struct vt_result *r);

#endif
