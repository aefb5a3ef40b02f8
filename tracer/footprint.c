/* CUPTI's own device memory in the job's VRAM: its buffer settings read at start, contexts counted per device, in meta. */
#include "footprint.h"
#include "subscribers.h"

#include <cupti.h>
#include <pthread.h>
#include <stdio.h>

#include "session.h"

/*
 * CUPTI's own device memory (cupti_activity.h, CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_*):
 * per context, a pool of profiling buffers in the job's VRAM (unless they are in
 * pinned host memory), PRE_ALLOCATE of SIZE bytes at context creation, more
 * under load up to POOL_LIMIT. Read once at start; contexts counted per device.
 */
static struct {
    size_t size, preAllocate, poolLimit;
    int bHostPinned;
    int bKnown;
} g_devbuf;
static pthread_mutex_t g_ctxMu = PTHREAD_MUTEX_INITIALIZER;
static CUcontext g_aCtx[VT__MAX_DEVICES * 4]; /* contexts seen (each counted once) */
static unsigned g_nCtx, g_anCtxOfDev[VT__MAX_DEVICES];

/* Read CUPTI's device-buffer settings (before any context exists) and record them in meta. */
void vt__footprint_start(void)
{
    char z[32];
    size_t n = sizeof g_devbuf.size;
    uint8_t u8 = 0;
    if (vt__cupti_get_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &n, &g_devbuf.size) != CUPTI_SUCCESS)
        return;
    n = sizeof g_devbuf.preAllocate;
    if (vt__cupti_get_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &n,
                                  &g_devbuf.preAllocate) != CUPTI_SUCCESS)
        return;
    n = sizeof g_devbuf.poolLimit;
    if (vt__cupti_get_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, &n, &g_devbuf.poolLimit) !=
        CUPTI_SUCCESS)
        return;
    n = sizeof u8;
    if (vt__cupti_get_attribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &n, &u8) == CUPTI_SUCCESS)
        g_devbuf.bHostPinned = u8 != 0;
    g_devbuf.bKnown = 1;
#define META_U(key, v) (snprintf(z, sizeof z, "%llu", (unsigned long long)(v)), vt__session_meta(key, z))
    META_U("cupti.device_buffer_size", g_devbuf.size);
    META_U("cupti.device_buffer_pre_allocate", g_devbuf.preAllocate);
    META_U("cupti.device_buffer_pool_limit", g_devbuf.poolLimit);
    META_U("cupti.device_buffer_host_pinned", g_devbuf.bHostPinned);
#undef META_U
}

/*
 * A context was created on device dev: CUPTI pre-allocates its profiling
 * buffers there (in the job's VRAM unless they are host-pinned). Rewrite that
 * device's meta rows: cupti.device_bytes.DEV (what CUPTI allocates at context
 * creation, the least it uses) and cupti.device_bytes_max.DEV (its pool limit).
 */
void vt__footprint_context(CUcontext ctx, int dev)
{
    char zKey[64], z[32];
    unsigned i, nOfDev = 0;
    int bNew = 1;
    if (!g_devbuf.bKnown || dev < 0 || dev >= VT__MAX_DEVICES) return;
    pthread_mutex_lock(&g_ctxMu);
    for (i = 0; i < g_nCtx && bNew; i++) bNew = g_aCtx[i] != ctx;
    if (bNew && g_nCtx < sizeof g_aCtx / sizeof g_aCtx[0]) {
        g_aCtx[g_nCtx++] = ctx;
        nOfDev = ++g_anCtxOfDev[dev];
    }
    pthread_mutex_unlock(&g_ctxMu);
    if (!nOfDev) return;
    snprintf(zKey, sizeof zKey, "cupti.device_bytes.%d", dev);
    snprintf(z, sizeof z, "%llu",
             g_devbuf.bHostPinned ? 0ull : (unsigned long long)nOfDev * g_devbuf.size * g_devbuf.preAllocate);
    vt__session_meta(zKey, z);
    snprintf(zKey, sizeof zKey, "cupti.device_bytes_max.%d", dev);
    snprintf(z, sizeof z, "%llu",
             g_devbuf.bHostPinned ? 0ull : (unsigned long long)nOfDev * g_devbuf.size * g_devbuf.poolLimit);
    vt__session_meta(zKey, z);
}
