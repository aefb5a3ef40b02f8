/* Internal: CUPTI's own device memory (its profiling buffers) in the job's VRAM, recorded in meta. */
#ifndef VT_TRACER_FOOTPRINT_H
#define VT_TRACER_FOOTPRINT_H

/*
 * CUPTI keeps its profiling buffers for kernels, copies and sets in device
 * memory by default (cupti_activity.h, CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_*):
 * per context, PRE_ALLOCATE buffers of SIZE bytes at context creation, more
 * under load up to POOL_LIMIT. The settings are read once at start and
 * written to meta (cupti.device_buffer_*); each new context rewrites its
 * device's cupti.device_bytes.D (the least CUPTI uses there) and
 * cupti.device_bytes_max.D (its limit), so a report can subtract the
 * tracer's footprint. Thread-safe.
 */
#include <cuda.h>

/* Devices the glue keeps per-device state for: ordinals 0 to 63 (bit d of a 64-bit set). */
#define VT__MAX_DEVICES 64

/* Read CUPTI's settings (before any context exists) and record them in meta. */
void vt__footprint_start(void);

/* A context was created on device dev (below VT__MAX_DEVICES): count it once and rewrite that device's meta rows. */
void vt__footprint_context(CUcontext ctx, int dev);

#endif
