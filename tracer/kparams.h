/* Internal: kernel parameter blocks -> the live allocations their words point into. */
#ifndef VT_TRACER_KPARAMS_H
#define VT_TRACER_KPARAMS_H

/*
 * A kernel launch passes its arguments either as an array of pointers to each
 * value (cuLaunchKernel's kernelParams, cudaLaunchKernel's args) or as one
 * packed buffer (`extra`, CU_LAUNCH_PARAM_BUFFER_POINTER). The packed buffer
 * is scanned whole; the array form needs each parameter's size, which CUDA
 * gives per index (13.0 has no count function: the query fails past the last
 * parameter): for a driver handle cuFuncGetParamInfo, or cuKernelGetParamInfo
 * for a CUkernel (= cudaKernel_t) passed as a function; for the host stub a
 * runtime launch names, cudaFuncGetParamInfo. Sizes are cached per handle:
 * open addressing over VT_KPARAMS_SLOTS slots, 8 probes, never evicted (a
 * handle that finds no slot is asked again at each launch), all forgotten
 * when a module unloads (vt__kparams_forget).
 *
 * The module never calls CUDA itself: whoever opens it hands it the query
 * functions (the glue passes guarded wrappers of CUDA's, tests pass fakes), and the index of live allocations the words are looked up in.
 *
 * Threading: every function may be called from any thread concurrently; one
 * mutex guards the cache and is never held while a query function runs.
 */
#include <stddef.h>
#include <stdint.h>

#include "intervals.h"

#define VT_KPARAMS_MAX 128   /* parameters scanned per kernel */
#define VT_KPARAMS_SLOTS 512 /* kernels whose parameter sizes are cached */

struct vt__kparams;

/* What a launch names its kernel with. */
enum vt__kp_handle {
    VT_KP_DRIVER = 0, /* a CUfunction, or a CUkernel (= cudaKernel_t) passed as one */
    VT_KP_STUB = 1    /* the host stub (or handle) a runtime launch passes as `func` */
};

/*
 * A parameter-layout query: 0 with parameter i's offset and size in *pOff,
 * *pSize, non-zero past the last parameter or on any error.
 */
typedef int (*vt__param_info_fn)(const void *h, size_t i, size_t *pOff, size_t *pSize);

struct vt__kparams_config {
    vt__param_info_fn xFuncParamInfo;   /* cuFuncGetParamInfo(CUfunction), or NULL */
    vt__param_info_fn xKernelParamInfo; /* cuKernelGetParamInfo(CUkernel), or NULL */
    vt__param_info_fn xStubParamInfo;   /* cudaFuncGetParamInfo(const void *func), or NULL */
    struct vt__ivl *ivl;                /* live allocations (not owned; outlives the scanner) */
};

/* Create a scanner (cfg copied). Returns NULL when out of memory or cfg->ivl is NULL. */
struct vt__kparams *vt__kparams_open(const struct vt__kparams_config *cfg);

/* Free a scanner. NULL is a no-op. No other call may be in flight. */
void vt__kparams_close(struct vt__kparams *kp);

/*
 * Sizes of the parameters of kernel h, named as `kind` says (VT_KP_DRIVER: the
 * function query is tried first, then the kernel query; VT_KP_STUB: the stub
 * query), cached per (kind, h). Writes at most VT_KPARAMS_MAX sizes into aSize
 * and returns how many; 0 when the layout is unknown.
 */
int vt__kparams_sizes(struct vt__kparams *kp, int kind, const void *h, size_t *aSize);

/*
 * A module is being unloaded: its kernels' handles may soon name other
 * kernels (the next module loaded can reuse them), so forget every cached
 * layout; a layout being asked of CUDA while this runs is not cached either.
 * NULL is a no-op.
 */
void vt__kparams_forget(struct vt__kparams *kp);

/*
 * Scan one launch of kernel h (named as `kind` says): its array of pointers to
 * the arguments apParam (laid out with vt__kparams_sizes), or, when apParam is
 * NULL, the packed buffer named in its `extra` array (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE, at most 16 pairs
 * read). Writes the distinct bases of the live allocations found into aBase (at
 * most nMax, in order of first appearance) and returns how many were found,
 * which may exceed nMax (see vt__ivl_scan), 0 when none; -1 when the
 * parameters cannot be read (layout unknown, as for a kernel without
 * parameters, or no argument buffer).
 */
int vt__kparams_scan(struct vt__kparams *kp, int kind, const void *h, void *const *apParam,
                     void *const *extra, uint64_t *aBase, int nMax);

#endif
