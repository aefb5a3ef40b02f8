/* Internal: interval index of live allocations, and the kernel-parameter scan that uses it. */
#ifndef VT_TRACER_INTERVALS_H
#define VT_TRACER_INTERVALS_H

/*
 * The index holds the live allocations of a process as disjoint half-open
 * ranges [base, base + size). It answers "which allocation contains this
 * address?" and scans a kernel launch's parameters for words that point into a
 * live allocation (a buffer use).
 *
 * Layout: a sorted array of leaves, each leaf a sorted run of at most 64
 * ranges, so insert and remove move at most one leaf's entries (plus, on a
 * split or an emptied leaf, the leaf-pointer array), and a lookup is two binary
 * searches. A scan first checks each word against [lowest base, highest end)
 * of the whole index (parameter blocks are mostly sizes, strides and scalars),
 * and only words inside that range are searched.
 *
 * Threading: every function may be called from any thread concurrently; one
 * reader-writer lock guards the index (a scan takes the read lock once for the
 * whole parameter block, insert/remove take the write lock).
 *
 * Ranges never overlap: inserting a range that overlaps live ones (an address
 * reused after a free that was not seen) first removes the stale ranges and
 * counts them in vt_ivl_stats.replaced.
 */
#include <stddef.h>
#include <stdint.h>

struct vt__ivl;

/* Counters, for tests, the bench and the exit summary. */
struct vt_ivl_stats {
    uint64_t live;      /* ranges in the index now */
    uint64_t inserts;   /* successful vt__ivl_insert calls */
    uint64_t removes;   /* vt__ivl_remove calls that found their base */
    uint64_t missing;   /* vt__ivl_remove calls for a base not in the index */
    uint64_t replaced;  /* stale overlapping ranges dropped by an insert */
    uint64_t scans;     /* parameter scans */
    uint64_t words;     /* 8-byte words examined by scans */
    uint64_t hits;      /* distinct (scan, allocation) pairs found */
    uint64_t truncated; /* pairs found but not returned because the output array was full */
};

/* Create an empty index. Returns NULL when out of memory. */
struct vt__ivl *vt__ivl_open(void);

/* Free the index and everything in it. NULL is a no-op. No other call may be in flight. */
void vt__ivl_close(struct vt__ivl *idx);

/*
 * Add the live range [base, base + size). A size of 0 is recorded as 1 byte
 * (the address is still a valid key for its free); a range that would wrap past
 * 2^64 is clipped. Returns 0, or -ENOMEM (the index is unchanged).
 */
int vt__ivl_insert(struct vt__ivl *idx, uint64_t base, uint64_t size);

/*
 * Remove the range that starts exactly at base. Returns 0, or -ENOENT if no
 * live range starts there (counted in stats.missing).
 */
int vt__ivl_remove(struct vt__ivl *idx, uint64_t base);

/*
 * Find the live range containing addr. Returns 1 and sets *pBase and *pSize
 * (either may be NULL) when found, 0 when addr is in no live range.
 */
int vt__ivl_find(struct vt__ivl *idx, uint64_t addr, uint64_t *pBase, uint64_t *pSize);

/*
 * Scan a contiguous parameter block (a kernel's argument buffer, as passed with
 * CU_LAUNCH_PARAM_BUFFER_POINTER): every 8-byte word at offsets 0, 8, 16, ...
 * of pBlock (nByte bytes; a trailing partial word is ignored) is looked up.
 * Writes the distinct bases of the allocations found into aBase (at most
 * nMax, in order of first appearance) and returns how many distinct
 * allocations were found, which may exceed nMax (the excess is counted in
 * stats.truncated). The count is exact up to 784 distinct allocations per
 * launch, an upper bound beyond. pBlock needs no particular alignment.
 */
int vt__ivl_scan(struct vt__ivl *idx, const void *pBlock, size_t nByte, uint64_t *aBase,
                 int nMax);

/*
 * Scan a launch's parameters given as an array of pointers to each value (the
 * kernelParams / args array of cuLaunchKernel and cudaLaunchKernel) with each
 * parameter's size (from cuFuncGetParamInfo / cudaFuncGetParamInfo). Every
 * 8-byte word at offsets 0, 8, ... inside each parameter of 8 bytes or more is
 * looked up; smaller parameters cannot hold a device pointer and are skipped.
 * A NULL entry in apParam is skipped. Output and result as vt__ivl_scan; all
 * parameters of one launch are deduplicated together.
 */
int vt__ivl_scan_params(struct vt__ivl *idx, void *const *apParam, const size_t *aSize,
                        int nParam, uint64_t *aBase, int nMax);

/*
 * fork() support, for the glue's pthread_atfork handlers: prepare takes the
 * write lock so no thread is half-way through an update when the process
 * forks; parent releases it; child re-initializes it (a reader-writer lock
 * cannot be unlocked in the child: its owner's thread id changed). The
 * child's copy of the index is then consistent and usable.
 */
void vt__ivl_fork_prepare(struct vt__ivl *idx);
void vt__ivl_fork_parent(struct vt__ivl *idx);
void vt__ivl_fork_child(struct vt__ivl *idx);

/* Snapshot the counters. */
void vt__ivl_stats(struct vt__ivl *idx, struct vt_ivl_stats *pStats);

#endif
