/* The device's free and total memory, sampled at context creation and at most once a second after, in meta rows. */
#include "memsample.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

#include "driver.h"
#include "footprint.h" /* VT__MAX_DEVICES */
#include "session.h"

#define FIRST_GAP_NS 1000000000ull /* at most one sample a second per device ... */
#define DOUBLE_EVERY 256u          /* ... the gap doubling every 256 samples */

/*
 * Per device: the CUPTI-clock time the next sample is due (0: none yet) and the
 * samples taken. A sample is claimed by moving the due time with a
 * compare-exchange, so two threads never take the same one; nothing is locked.
 */
static struct {
    atomic_uint_fast64_t dueNs;
    atomic_uint nSample;
    atomic_int bContext; /* used_at_context_bytes written */
} g_aDev[VT__MAX_DEVICES];
static atomic_int g_bOff; /* cuMemGetInfo failed or is missing: no more samples */
static uint64_t (*g_xNow)(void);
static int (*g_xDevice)(CUcontext);

void vt__memsample_start(uint64_t (*xNow)(void), int (*xDevice)(CUcontext))
{
    g_xNow = xNow;
    g_xDevice = xDevice;
}

/* Stop sampling after a failed query, saying so once (one line, one meta row). */
static void give_up(int dev)
{
    if (atomic_exchange(&g_bOff, 1)) return;
    fprintf(stderr, "vramtrace: device memory is not sampled: cuMemGetInfo failed or is missing (device %d)\n", dev);
    vt__session_meta("device_mem_sample_error", "cuMemGetInfo failed or is missing");
}

/* Read ctx's device memory and write sample K of device dev at time now (and used_at_context when bContext). */
static void take(CUcontext ctx, int dev, uint64_t now, unsigned k, int bContext)
{
    uint64_t nFree = 0, nTotal = 0;
    char zKey[64], z[96];
    if (vt__driver_mem_info_ctx(ctx, &nFree, &nTotal) != 0 || nTotal == 0) {
        give_up(dev);
        return;
    }
    if (bContext && !atomic_exchange(&g_aDev[dev].bContext, 1)) {
        snprintf(zKey, sizeof zKey, "device.%d.used_at_context_bytes", dev);
        snprintf(z, sizeof z, "%" PRIu64, nTotal - (nFree < nTotal ? nFree : nTotal));
        vt__session_meta(zKey, z);
    }
    snprintf(zKey, sizeof zKey, "device.%d.mem_sample.%u", dev, k);
    snprintf(z, sizeof z, "%" PRIu64 " %" PRIu64 " %" PRIu64, now, nFree, nTotal);
    vt__session_meta(zKey, z);
}

/* Claim device dev's next sample at time now (bForce: whether due or not). Its index, or -1 when not due or full. */
static int claim(int dev, uint64_t now, int bForce)
{
    uint_fast64_t due = atomic_load(&g_aDev[dev].dueNs);
    unsigned k;
    uint64_t gap;
    if (!bForce && due != 0 && now < due) return -1;
    k = atomic_load(&g_aDev[dev].nSample);
    if (k >= VT__MEMSAMPLE_MAX) return -1;
    gap = FIRST_GAP_NS << (k / DOUBLE_EVERY < 16 ? k / DOUBLE_EVERY : 16);
    if (!atomic_compare_exchange_strong(&g_aDev[dev].dueNs, &due, now + gap)) return -1; /* another thread took it */
    k = atomic_fetch_add(&g_aDev[dev].nSample, 1);
    return k < VT__MEMSAMPLE_MAX ? (int)k : -1;
}

void vt__memsample_context(CUcontext ctx, int dev)
{
    int k;
    if (!g_xNow || atomic_load(&g_bOff) || dev < 0 || dev >= VT__MAX_DEVICES || !vt__session_active()) return;
    if (atomic_load(&g_aDev[dev].bContext)) return; /* a later context on the device: sampled as the calls come */
    k = claim(dev, g_xNow(), 1);
    if (k >= 0) take(ctx, dev, g_xNow(), (unsigned)k, 1);
}

void vt__memsample_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *pData)
{
    const CUpti_CallbackData *cb = pData;
    int dev, k;
    uint64_t now;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    switch (cbid) { /* where memory changes or the program waits: never a launch or a copy */
    case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize:
    case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged:
    case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemCreate:
    case CUPTI_DRIVER_TRACE_CBID_cuMemRelease: break;
    default: return;
    }
    if (!cb || cb->callbackSite != CUPTI_API_EXIT || !cb->context || !g_xNow || atomic_load(&g_bOff) ||
        !vt__session_active())
        return;
    dev = g_xDevice ? g_xDevice(cb->context) : -1;
    if (dev < 0 || dev >= VT__MAX_DEVICES) return;
    now = g_xNow();
    k = claim(dev, now, 0);
    if (k >= 0) take(cb->context, dev, now, (unsigned)k, 0);
}
