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
 * Per device: whether a context was created there and its sample is still to take, the
 * CUPTI-clock time the next sample is due (0: none yet) and the samples taken. A sample is
 * claimed by moving the due time with a compare-exchange, so two threads never take the same
 * one; nothing is locked.
 */
static struct {
    atomic_int bPending;  /* a context was created: sample at its next driver call */
    atomic_int bContext;  /* used_at_context_bytes written */
    atomic_uint_fast64_t dueNs;
    atomic_uint nSample;
} g_aDev[VT__MAX_DEVICES];
static atomic_int g_nPending; /* devices with bPending set: 0 keeps every call's check to one load */
static atomic_int g_bOff;     /* cuMemGetInfo failed or is missing: no more samples */
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

/* Read the current context's device memory and write sample K of device dev at time now (and used_at_context when bContext). */
static void take(int dev, uint64_t now, unsigned k, int bContext)
{
    uint64_t nFree = 0, nTotal = 0;
    char zKey[64], z[96];
    if (vt__driver_mem_info(&nFree, &nTotal) != 0 || nTotal == 0) {
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

void vt__memsample_context(int dev)
{
    if (!g_xNow || atomic_load(&g_bOff) || dev < 0 || dev >= VT__MAX_DEVICES || !vt__session_active()) return;
    if (atomic_load(&g_aDev[dev].bContext)) return; /* a later context on the device: sampled as the calls come */
    if (!atomic_exchange(&g_aDev[dev].bPending, 1)) atomic_fetch_add(&g_nPending, 1);
}

/* Whether driver call cbid synchronizes, allocates or frees (never a launch or a copy). */
static int natural_point(CUpti_CallbackId cbid)
{
    switch (cbid) {
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
    case CUPTI_DRIVER_TRACE_CBID_cuMemRelease: return 1;
    default: return 0;
    }
}

void vt__memsample_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *pData)
{
    const CUpti_CallbackData *cb = pData;
    int dev, k, bPending = atomic_load(&g_nPending) > 0;
    uint64_t now;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API || (!bPending && !natural_point(cbid))) return;
    if (!cb || !cb->context || !g_xNow || atomic_load(&g_bOff) || !vt__session_active()) return;
    dev = g_xDevice ? g_xDevice(cb->context) : -1; /* cb->context is current on this thread */
    if (dev < 0 || dev >= VT__MAX_DEVICES) return;
    if (bPending && atomic_exchange(&g_aDev[dev].bPending, 0)) { /* the context's first call: before it acts */
        atomic_fetch_sub(&g_nPending, 1);
        now = g_xNow();
        if ((k = claim(dev, now, 1)) >= 0) take(dev, now, (unsigned)k, 1);
        return;
    }
    if (cb->callbackSite != CUPTI_API_EXIT || !natural_point(cbid)) return;
    now = g_xNow();
    if ((k = claim(dev, now, 0)) >= 0) take(dev, now, (unsigned)k, 0);
}
