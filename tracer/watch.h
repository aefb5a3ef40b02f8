/* Internal: noticing that CUPTI stopped handing this tracer its activity buffers (another client took them). */
#ifndef VT_TRACER_WATCH_H
#define VT_TRACER_WATCH_H

/*
 * CUPTI has one set of activity-buffer callbacks per process: when another
 * CUPTI client (torch.profiler/Kineto, Nsight) registers its own with
 * cuptiActivityRegisterCallbacks, CUPTI hands the buffers to it from then on,
 * and says nothing. What the tracer can see: API calls whose activity record
 * always follows at once (allocations and frees: MEMORY2) go on, while no
 * buffer is requested or returned any more.
 *
 * The watch is the decision, fed by the flush thread once per tick with two
 * counters: buffer events (requests and returns) and such API calls. When
 * calls have been waiting for quiet_ms with no buffer event, it asks for a
 * probe (the glue then does a forced flush, which returns every buffer that
 * holds any record, complete or not); if even the probe brings no buffer by
 * the next tick, the buffers are taken over. A probe that was answered (a
 * buffer held a record not yet complete, a kernel still running) doubles
 * quiet_ms, up to 8 times the first, so a healthy job is rarely probed.
 *
 * Pure logic, no clock, no CUPTI; one caller (the flush thread).
 */
#include <stdint.h>

enum vt__watch_action {
    VT_WATCH_NONE = 0,
    VT_WATCH_PROBE = 1, /* do a forced flush now */
    VT_WATCH_TAKEN = 2  /* the buffers are taken over (reported once) */
};

struct vt__watch {
    unsigned quiet_ms, quiet0_ms;
    uint64_t nBuf;      /* buffer events at the last change */
    uint64_t nExpect;   /* expected calls at the last buffer event */
    uint64_t tQuietMs;  /* when calls were first seen waiting (0: none waiting) */
    int state;          /* 0 watching, 1 probed, 2 taken */
};

/* Start watching; quiet_ms (>= 1): how long calls may wait without a buffer event before a probe. */
void vt__watch_init(struct vt__watch *w, unsigned quiet_ms);

/*
 * One tick at nowMs (any monotonic milliseconds) with the counters now:
 * nBuf buffer events, nExpect calls whose records must follow. Returns what
 * to do (enum vt__watch_action); VT_WATCH_TAKEN is returned once.
 */
int vt__watch_tick(struct vt__watch *w, uint64_t nowMs, uint64_t nBuf, uint64_t nExpect);

#endif
