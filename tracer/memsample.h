/* Internal: the device's free and total memory, sampled at context creation and at most once a second after, in meta. */
#ifndef VT_TRACER_MEMSAMPLE_H
#define VT_TRACER_MEMSAMPLE_H

/*
 * What the device's memory was beside what the trace holds: cuMemGetInfo
 * (free, total) on device D, read in the creating thread when a context is
 * created there (meta device.D.used_at_context_bytes and the first sample),
 * then at most once a second per device (the interval doubling every 256
 * samples, at most 2048 per device) at the exit of a driver call that
 * synchronizes, allocates or frees, in the calling thread with its context
 * current. Each sample is one meta row device.D.mem_sample.K = "T FREE
 * TOTAL" (CUPTI-clock ns, bytes, bytes). Never on a launch; a failing or
 * missing cuMemGetInfo stops the sampling with one vramtrace: line. Lock-free
 * (atomics only), so a fork at any point leaves nothing held.
 */
#include <cuda.h>
#include <cupti.h>
#include <stdint.h>

/* Maximum samples kept per device. */
#define VT__MEMSAMPLE_MAX 2048

/* Set the clock (CUPTI's) and the context-to-device lookup; before any callback. */
void vt__memsample_start(uint64_t (*xNow)(void), int (*xDevice)(CUcontext));

/* Context ctx was just created on device dev: sample it (made current for the call when it is not). */
void vt__memsample_context(CUcontext ctx, int dev);

/* An API callback (CUpti_CallbackData *pData) of domain/cbid: at the exit of a sync, allocation or free, sample when due. */
void vt__memsample_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *pData);

#endif
