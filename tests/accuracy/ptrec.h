/* What PyTorch's own recorders write for a simulated process: memory snapshots and torch.profiler traces. */
#ifndef VT_ACC_PTREC_H
#define VT_ACC_PTREC_H

#include "jobsim.h"

/*
 * A recorder watches one jobsim process through its hooks (struct js_obs) and writes, beside
 * its trace, the files PyTorch itself would have written for it:
 *
 * - PTREC_HISTORY: the allocation history `vramtrace record` asks PyTorch for
 *   (`torch.cuda.memory._record_memory_history(max_entries=N, stacks="python")`): the
 *   snapshot at exit, `vramtrace-HOST-PID.snapshot.pickle`, and one at each of the first three
 *   OOMs, `vramtrace-HOST-PID.oom-K.snapshot.pickle` (the hook's out-of-memory observer). A
 *   pickle (protocol 4) of {segments, device_traces, allocator_settings, external_annotations}
 *   as `torch.cuda.memory._snapshot()` returns it: the caching allocator's events (alloc,
 *   free_requested, free_completed, segment_alloc, segment_free, oom with device_free; with
 *   expandable_segments:True segment_map and segment_unmap of each range of pages mapped or
 *   unmapped, as map_block and unmap_block record them) in a ring of max_entries, Python
 *   frames innermost first (the autograd engine's thread has none), tracebacks shared through
 *   the pickle's memo; the segments live at the dump with their blocks (an expandable segment
 *   as one segment per contiguous mapped range, `is_expandable` True, and the setting in
 *   allocator_settings); record_function ranges (`Optimizer.step#AdamW.step`) as annotations.
 * - PTREC_KINETO: a torch.profiler trace (`profile(activities=[CPU, CUDA],
 *   profile_memory=True, with_stack=...)`, `export_chrome_trace`) of the window between
 *   ptrec_window(r, 1) and ptrec_window(r, 0): `[memory]` instants with Addr, Bytes, Total
 *   Allocated and Total Reserved (or, as torch.profiler before 1.11 wrote them, Bytes only)
 *   inside the `cpu_op` that allocated, `python_function` spans of the Python frames with
 *   with_stack, kernels and copies with their runtime calls, and record_function ranges
 *   (`ProfilerStep#N`) as `user_annotation`.
 */

enum {
    PTREC_HISTORY = 1,
    PTREC_KINETO = 2,
    PTREC_NO_ADDR = 4,  /* the profiler's [memory] events as before torch 1.11 (bKinetoNoAddr) */
    PTREC_NO_STACK = 8  /* the profiler without with_stack */
};

struct ptrec_opt {
    int flags;
    int maxEntries;        /* history ring; 0: 100000 (vramtrace record's default) */
    int bNoExitSnapshot;   /* the process died before atexit (no exit snapshot) */
    int bKinetoNoAddr;     /* [memory] events as torch.profiler before 1.11: Bytes only */
    int bWithStack;        /* python_function events */
    const char *zKinetoName; /* file name of the profiler trace in the run's folder */
};

struct ptrec;

/* A recorder writing into folder zDir; NULL when out of memory. */
struct ptrec *ptrec_new(const char *zDir, const struct ptrec_opt *o);
/* The hooks to give the process (js_cfg.pObs). */
const struct js_obs *ptrec_obs(struct ptrec *r);
/* After js_open: the process's identity (pid, host, clock, device). */
void ptrec_attach(struct ptrec *r, const struct js *j);
/* The profiler's window starts (bOn) or ends now. */
void ptrec_window(struct ptrec *r, const struct js *j, int bOn);
/* Name the operator torch.profiler shows around allocations made at site (default: from its frames). */
void ptrec_op_hint(struct ptrec *r, int site, const char *zOp);
/* The exit snapshot's file name (valid after ptrec_attach). */
const char *ptrec_snapshot_name(const struct ptrec *r);
/* The profiler's peaks inside its window: Total Allocated and Total Reserved. */
int64_t ptrec_window_peak_allocated(const struct ptrec *r);
int64_t ptrec_window_peak_reserved(const struct ptrec *r);
/* After js_close: write what is due (the exit snapshot, the profiler trace) and free r; 0 or -1. */
int ptrec_finish(struct ptrec *r);

#endif
