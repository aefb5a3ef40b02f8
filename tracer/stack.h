/* Internal: call-site capture — raw native return addresses plus Python stack, deduplicated into stack ids. */
#ifndef VT_TRACER_STACK_H
#define VT_TRACER_STACK_H

/*
 * A site is the combined stack of the calling thread: its Python frames
 * (innermost first; through the C API when the thread holds the GIL, see
 * pyframes.h, else read directly from CPython's structures, see
 * pyframes_raw.h),
 * followed by its native frames (innermost first, as glibc's backtrace()
 * reports them; see unwind.h).
 *
 * Dedup: the site's key (Python code objects and lines, native return
 * addresses) is hashed; a lock-free, insert-only table maps known keys to
 * stack ids, so a repeated site costs one backtrace, one hash and one probe.
 * Only a site never seen before is handed to the caller as a VT_HREC_STACK
 * record to submit to the writer.
 *
 * Captures run inside CUPTI callbacks: native frames are raw return addresses
 * only. Resolving one to its module takes the dynamic loader's lock (dladdr),
 * which a callback must not wait for (a thread inside dlopen may hold it
 * while it waits for CUPTI): the writer thread resolves them (modres.h) and
 * writes the module, module-relative address and exported name. No DWARF is
 * read in the process: `addr2line -f -i -e MODULE ADDRESS-1` (or the analyzer)
 * gives function, file and line offline. Python frames carry file, line and
 * function (co_qualname on 3.11+, co_name before), read once per code object.
 *
 * Frames in the struct vt_frame records this module produces:
 *   native: kind VT_FRAME_NATIVE; pc = the absolute return address; zModule,
 *           zFunction, zFile NULL; line 0 (the writer resolves them).
 *   python: kind VT_FRAME_PYTHON; pc 0; zFile = co_filename; line; zFunction;
 *           zModule NULL.
 *
 * Bounded memory: at most cfg.max_stacks distinct stacks and cfg.max_codes
 * cached code objects (each cached code
 * object is kept alive with a strong reference so its address cannot be reused
 * by another code object; one first met without the GIL cannot be, so its
 * entry is also keyed by an identity fingerprint). Past a bound, sites are still captured and emitted
 * complete, but not deduplicated: each such capture gets a fresh stack id and
 * its own VT_HREC_STACK record, counted in vt_sites_stats.undeduped.
 *
 * Threading: vt__site_capture and vt__site_lost may run on any number of
 * threads at once. No lock of this module is held while unwinding or calling
 * the Python C API. No symbolization happens here; the unwinder finds frame
 * rules through libgcc's _Unwind_Find_FDE (unwind.h), which glibc 2.35 and
 * later answer without the loader's lock (_dl_find_object).
 */
#include <stddef.h>
#include <stdint.h>

#include "writer.h"

#define VT_SITE_MAX_DEPTH 64    /* bound on native frames per site */
#define VT_SITE_MAX_PYDEPTH 128 /* bound on Python frames per site */

struct vt__sites;

struct vt_sites_config {
    size_t cbSize;     /* sizeof(struct vt_sites_config) */
    int max_stacks;    /* distinct stacks kept for dedup (default 65536) */
    int max_codes;     /* Python code objects cached (default 16384) */
    int py_depth;      /* Python frames per site (default 32, at most VT_SITE_MAX_PYDEPTH) */
    /*
     * NULL-terminated list of substrings of module paths (e.g. "libvramtrace",
     * "libcupti", "libcuda.so"): leading (innermost) native frames in modules
     * whose path contains one are dropped, so sites start at the caller of the
     * CUDA API. Matched against the modules loaded when vt__sites_open runs.
     * May be NULL. The frames of this module's own functions are always dropped.
     */
    const char *const *azSkipModule;
    /*
     * 1 (default): unwind with cached CFI rules (unwind.h), same answer as
     * backtrace() several times faster; 0: always glibc's backtrace().
     */
    int fast_unwind;
};

struct vt_sites_stats {
    uint64_t captures;  /* vt__site_capture calls that produced a stack id */
    uint64_t stacks;    /* distinct stacks in the dedup table */
    uint64_t emitted;   /* VT_HREC_STACK records handed out (new, re-sent and undeduped) */
    uint64_t undeduped; /* captures past a bound: emitted without dedup */
    uint64_t python;    /* captures that included Python frames */
    uint64_t codes;     /* cached code objects */
};

/* Fill *cfg with defaults. */
void vt__sites_config_default(struct vt_sites_config *cfg);

/*
 * Create a site table (cfg NULL: defaults). Warms up backtrace() (its first
 * call loads the unwinder) and resolves the skip modules. Returns NULL when out
 * of memory or cfg is invalid.
 */
struct vt__sites *vt__sites_open(const struct vt_sites_config *cfg);

/*
 * Free the table. Strong references to cached Python code objects are dropped
 * only if the interpreter is still initialized and the calling thread holds the
 * GIL; otherwise they are left to the interpreter's exit. NULL is a no-op; no
 * other call may be in flight.
 */
void vt__sites_close(struct vt__sites *s);

/*
 * Capture the calling thread's site: up to depth native frames (0..
 * VT_SITE_MAX_DEPTH, after the skipped ones) and, when bPython is non-zero,
 * up to cfg.py_depth Python frames before them (with or without the GIL).
 *
 * Returns the site's stack id (>= 1), 0 if the site is empty (nothing
 * captured), or -ENOMEM. pNew->type is set to VT_HREC_STACK when the caller
 * must submit *pNew to the writer (the site is new, or was reported lost, or
 * was not deduplicated): u.stack.{id, hash, nFrame, aFrame} are filled and the
 * heap frames belong to whoever receives the record (vt__writer_submit takes
 * them; on any other path free them with vt__frames_free). Otherwise
 * pNew->type is 0 and the stack id refers to a record emitted earlier.
 */
int64_t vt__site_capture(struct vt__sites *s, int depth, int bPython, struct vt_hrec *pNew);

/*
 * The VT_HREC_STACK record rec (as filled by vt__site_capture) never reached
 * the trace (the writer's queue was full): the next capture of the same site
 * emits it again. Reads only rec's type, id and hash, so it may be called
 * after the frames were freed (the writer frees them when it drops a record).
 */
void vt__site_lost(struct vt__sites *s, const struct vt_hrec *rec);

/*
 * fork() support, for the glue's pthread_atfork handlers: prepare takes every
 * lock of the table (and of the Python-API lookup) so none is held by a
 * thread that will not exist in the child; parent releases them; child
 * re-initializes them. The child's table stays valid: stack ids already
 * emitted refer to the parent's trace, so a child that starts a fresh trace
 * should open a fresh table instead.
 */
void vt__sites_fork_prepare(struct vt__sites *s);
void vt__sites_fork_parent(struct vt__sites *s);
void vt__sites_fork_child(struct vt__sites *s);

/* Free an array of n frames and their strings (NULL is a no-op). */
void vt__frames_free(struct vt_frame *aFrame, int n);

/* Snapshot the counters. */
void vt__sites_stats(struct vt__sites *s, struct vt_sites_stats *pStats);

#endif
