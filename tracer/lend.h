/* Internal: lending CUPTI to the job's own profiler (torch.profiler) while it runs, on the record hook's control marks. */
#ifndef VT_TRACER_LEND_H
#define VT_TRACER_LEND_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

/*
 * CUPTI 13.0 to 13.2 has one set of activity-buffer callbacks and one
 * subscriber per process. torch.profiler's Kineto registers its buffer
 * callbacks and its timestamp callback and enables its kinds when a profile
 * starts (prepare), disables those kinds and takes its buffers when it stops;
 * the Kineto of earlier PyTorch wheels also subscribes once, at its first
 * profile, and profiles without the GPU for good when that fails. The record
 * hook says when, as NVTX control marks (nvtxctl.h), on the thread that starts
 * or stops the profiler:
 *   lend:CLIENT    before the profiler sets CUPTI up: the tracer disables its
 *                  kinds, takes every buffer of its own back (forced flush),
 *                  gives CUPTI's thread ids their default back (Kineto's), and
 *                  at the first lend gives up its subscription too;
 *   lent:CLIENT    once the profiler has set up: the subscription is taken
 *                  back if left free;
 *   return:CLIENT  after the profiler stopped and took its records: the
 *                  subscription (if free), the timestamp callback, thread ids,
 *                  per-thread buffers, buffer callbacks and kinds are the
 *                  tracer's again.
 * With record --keep-cupti the hook says only start:CLIENT and stop:CLIENT:
 * the tracer lends nothing, and notes the first profiler that started (as it
 * does for a lend it cannot make) as the client a takeover went to.
 * Between windows, a subscription the profiler kept is tried again (Kineto
 * gives it up only when it finalizes CUPTI, which also wipes the tracer's
 * set-up: CUPTI is then set up again). Meta cupti_lend.N.* says each window:
 * to whom, from, until, when API calls were not recorded, what went wrong.
 *
 * Every step runs under one lock, which the glue's flush thread also takes
 * for its CUPTI work (vt__lend_lock); the glue hands over what the steps need
 * (struct vt__lend_glue) when tracing starts.
 */

/* What the CUPTI glue (inject.c) does for the lend; set once, then read only. */
struct vt__lend_glue {
    void (*xSay)(const char *zLine);                  /* one "vramtrace:" line */
    uint64_t (*xNow)(void);                           /* the trace's clock, ns */
    void (*xMeta)(const char *zKey, const char *zValue); /* one meta row (replaced if it exists) */
    const char *(*xPath)(void);                       /* the trace file */
    const char *(*xResultName)(CUptiResult r);
    CUptiResult (*xSubscribe)(char *zOld, size_t nOld); /* cuptiSubscribe(_v2): the other one named into zOld */
    void (*xUnsubscribe)(void);
    int (*xEnableCallbacks)(void);                    /* the API callbacks: how many could not be enabled */
    int (*xEnableKinds)(char *zFailed, size_t nFailed); /* the kinds enabled at start: how many failed, listed */
    void (*xDisableKinds)(void);
    void (*xReportDrops)(void);                       /* CUPTI's dropped records into the trace */
    CUptiResult (*xOwnCallbacks)(void);               /* the tracer's timestamp and buffer callbacks registered */
    void (*xRewatch)(void);                           /* the takeover watch from scratch */
    int bOwnClock;                                    /* the tracer's timestamp callback is CUPTI's (else no lend) */
    int bQuiet;                                       /* VRAMTRACE_QUIET: no informational line */
};

/* Tracing started (with the subscription): lends are answered from now on. */
void vt__lend_start(const struct vt__lend_glue *pGlue);

/*
 * A control mark's message ("lend:CLIENT", "lent:CLIENT", "return:CLIENT",
 * "start:CLIENT", "stop:CLIENT";
 * nvtxctl.h's xControl). Before vt__lend_start it only notes a profiler that
 * holds CUPTI; after, it does nothing when bActive is 0 (tracing off, a forked
 * child: the lock is never taken then).
 */
void vt__lend_control(const char *zMsg, int bActive);

/* A profiler was lent CUPTI before tracing started and holds it: 1 with its name in zClient, else 0. */
int vt__lend_early(char *zClient, size_t nClient);

/* The name of a profiler the hook said started before tracing did ("" when none). */
const char *vt__lend_early_client(void);

/* The lock of every lend step; the glue's flush thread holds it for its CUPTI work. */
void vt__lend_lock(void);
void vt__lend_unlock(void);

/* Under the lock: CUPTI is lent (the activity API is the other client's; leave it alone). */
int vt__lend_lent(void);

/* Under the lock, on the flush thread between windows: a subscription the profiler kept, tried again. */
void vt__lend_between(void);

/*
 * Under the lock: the first profiler the hook saw start while the tracer kept
 * CUPTI (its buffer callbacks replace the tracer's): 1 with its name in
 * zClient and the time of its start mark (the trace's clock) in *pT, else 0.
 */
int vt__lend_taker(char *zClient, size_t nClient, uint64_t *pT);

/* Bumped whenever the subscription changes: an API callback state kept per thread is stale. */
unsigned vt__lend_epoch(void);

#endif
