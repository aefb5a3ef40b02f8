/* Internal: kernel summaries (always-on mode): after a warm-up, kernels, their launches and argument uses folded per period. */
#ifndef VT_TRACER_KSUMMARY_H
#define VT_TRACER_KSUMMARY_H

/*
 * `record --kernels summary` (VRAMTRACE_KERNELS=summary) keeps a trace small enough to leave
 * on in every run. Allocations, frees, pools, copies, memsets, OOMs, NVTX ranges,
 * synchronizations and every other API call are written in full; from `startNs` on (the end of
 * the warm-up), and only then:
 *
 * - kernels become one kernel_summary row per period, device and kernel name: how many ran,
 *   their first start and last end, the sum, least and largest of their durations;
 * - the API calls that launch kernels (not graph launches) are counted, not written;
 * - kernel-argument buffer uses (kind 0) keep, per address and period, the first and the last
 *   use: each allocation's first and last use stay exact, since the uses of an address are
 *   written out when a free of it is called. Copy and set uses are written in full.
 *
 * Periods are periodNs long from startNs on, by the kernel's start (a use's time). Kernels of a
 * period arriving after the period was written out make a second row of that period and name.
 * Memory is bounded: at most maxKeys aggregates and maxUses addresses are held; beyond, every
 * aggregate (every held use) is written out early.
 * Single-threaded: the writer thread owns it. Rows come in and go out with absolute times.
 */
#include <stddef.h>
#include <stdint.h>

#include "rowtable.h"

struct vt__ksum_agg {
    int64_t period, device, nameId;
    int64_t count, busyNs, minNs, maxNs, firstStart, lastEnd;
    int bTimed; /* busyNs, minNs and maxNs hold a kernel with a known duration */
};

struct vt__ksum_use {
    int64_t address, period;
    struct vt__row first, last;
    int bLast; /* last differs from first */
    int bUsed; /* a slot in use */
};

struct vt__ksum {
    int64_t startNs, periodNs;
    void (*xEmit)(void *pCtx, const struct vt__row *pRow); /* rows given back: summaries and held uses */
    void *pCtx;
    struct vt__ksum_agg *aAgg;  /* the aggregates of the periods not yet written out */
    size_t nAgg, maxKeys;
    int64_t lastPeriod;         /* the latest period a kernel fell in (INT64_MIN: none) */
    struct vt__ksum_use *aUse;  /* open addressing on the address */
    size_t nUseSlot, nUse, maxUses;
    int64_t usePeriod;          /* the latest period a use fell in */
    uint64_t nKernels, nLaunches, nUses; /* folded: kernels into summaries, launch calls counted, uses not written */
};

/* Set k up: folding from startNs (absolute CUPTI ns) in periods of periodNs. 0 or -ENOMEM. */
int vt__ksum_init(struct vt__ksum *k, int64_t startNs, int64_t periodNs, void (*xEmit)(void *, const struct vt__row *),
                  void *pCtx);
void vt__ksum_free(struct vt__ksum *k);

/*
 * Offer row pRow (absolute times, as the decoder emits it). Returns 1 when k took it (folded
 * into a summary, counted, or held), 0 when the caller writes it as it is. Rows k gives back go
 * through xEmit, before this returns or later.
 */
int vt__ksum_take(struct vt__ksum *k, const struct vt__row *pRow);

/* Give back everything held (at close). */
void vt__ksum_finish(struct vt__ksum *k);

#endif
