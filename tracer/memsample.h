/* Internal: the device's free and total memory, sampled at context creation and at most once a second after, in meta. */
#ifndef VT_TRACER_MEMSAMPLE_H
#define VT_TRACER_MEMSAMPLE_H

/*
 * What the device's memory was beside what the trace holds: cuMemGetInfo
 * (free, total) of the current context's device, read in the application's
 * threads where the context is current: once at the first driver call in a
 * context a device's first context was created for (meta
 * device.D.used_at_context_bytes and the first sample; the creation callback
 * itself calls nothing), then at most once a second per device (the interval
 * doubling every 256 samples, at most 2048 per device) at the exit of a
 * driver call that synchronizes, allocates or frees. Each sample is one meta
 * row device.D.mem_sample.K = "T FREE TOTAL" (CUPTI-clock ns, bytes, bytes).
 * Never on a launch: a call that is none of these costs one atomic load. A
 * failing or missing cuMemGetInfo stops the sampling with one vramtrace: line.
 * Lock-free (atomics only), so a fork at any point leaves nothing held.
 */
#include <cuda.h>
#include <cupti.h>
#include <stdint.h>

/* Maximum samples kept per device. */
#define VT__MEMSAMPLE_MAX 2048

/* Set the clock (CUPTI's) and the context-to-device lookup; before any callback. */
void vt__memsample_start(uint64_t (*xNow)(void), int (*xDevice)(CUcontext));

/* A context was just created on device dev: sample the device at the first driver call in it. */
void vt__memsample_context(int dev);

/* An API callback (CUpti_CallbackData *pData) of domain/cbid: a pending context's sample, or at the exit of a sync,
 * allocation or free one when due. */
void vt__memsample_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *pData);

#endif
