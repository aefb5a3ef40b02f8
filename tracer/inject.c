/* The CUPTI glue of libvramtrace.so: injection entry, API callbacks, activity buffers, exit. */
#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "apicall.h"
#include "config.h"
#include "flusher.h"
#include "intervals.h"
#include "jobcuda.h"
#include "layout.h"
#include "kparams.h"
#include "session.h"
#include "watch.h"
#include "stack.h"
#include "vramtrace/schema.h"
#include "writer.h"

#define VT_EXPORT __attribute__((visibility("default")))
#define EXIT_TIMEOUT_MS 5000u   /* the writer's drain and close at exit */
#define FINAL_FLUSH_MS 3000u    /* CUPTI's forced flush at exit (a hung device never hangs the exit) */
#define MAX_TRACKED_DEVICES 64

/* Activity kinds recorded; CONCURRENT_KERNEL first (it instruments modules as they load). */
static const struct {
    CUpti_ActivityKind kind;
    const char *zName;
} aKind[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2"},
    {CUPTI_ACTIVITY_KIND_MEMORY_POOL, "MEMORY_POOL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {CUPTI_ACTIVITY_KIND_MARKER, "MARKER"},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD"},
    {CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE"},
};

/* Driver entry points, found with dlsym in the already-loaded libcuda (never linked). */
static struct {
    CUresult (*xMemGetInfo)(size_t *, size_t *);
    CUresult (*xDriverGetVersion)(int *);
    CUresult (*xDeviceGet)(CUdevice *, int);
    CUresult (*xDeviceGetName)(char *, int, CUdevice);
    CUresult (*xDeviceTotalMem)(size_t *, CUdevice);
    CUresult (*xDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*xDeviceGetUuid)(CUuuid *, CUdevice);
    CUresult (*xFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
    CUresult (*xKernelGetParamInfo)(CUkernel, size_t, size_t *, size_t *);
    CUresult (*xMemGetAddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
    CUresult (*xMemGetAllocationPropertiesFromHandle)(CUmemAllocationProp *, CUmemGenericAllocationHandle);
    /* the CUDA runtime's, for runtime launches (a host stub's layout), when the process has one */
    int (*xRtFuncGetParamInfo)(const void *, size_t, size_t *, size_t *);
} g_drv;

static atomic_int g_init;                  /* InitializeInjection ran (double init is a no-op) */
static CUpti_SubscriberHandle g_subscriber; /* valid when g_subscribed */
static int g_subscribed;
static struct vt_config g_cfg;             /* read once in InitializeInjection */
static struct vt__flusher *g_flusher;      /* the periodic flush thread, or NULL */
static atomic_int g_fatal;                 /* CUPTI reported a fatal error: no CUPTI call any more */
static atomic_int g_fatalHandled;          /* ... and the trace was closed for it */

/*
 * The takeover watch (watch.h): buffer events and the calls whose MEMORY2
 * record must follow, counted by the callbacks, judged by the flush thread.
 */
static atomic_uint_fast64_t g_nBufEvents, g_nExpect;
static atomic_uint_fast64_t g_tLastBufNs; /* CUPTI clock at the last buffer event */
static int g_bWatchMemory;                /* MEMORY2 is enabled: allocations must bring records */
static struct vt__watch g_watch;          /* the flush thread's only */
static atomic_uint_fast64_t g_devSeen;     /* bit d: device d's row was written */

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
static CUcontext g_aCtx[MAX_TRACKED_DEVICES * 4]; /* contexts seen (each counted once) */
static unsigned g_nCtx, g_anCtxOfDev[MAX_TRACKED_DEVICES];

/*
 * Attribution (tracer/stack.c, tracer/intervals.c, tracer/kparams.c), opened at
 * start when configured. None needs fork handlers here: a forked child never
 * calls into them (its session is inactive, so every callback returns early).
 */
static struct vt__sites *g_sites; /* call-site capture, or NULL */
static struct vt__ivl *g_ivl;     /* live allocations for kernel-argument scanning, or NULL */
static struct vt__kparams *g_kp;  /* kernel-argument scanner over g_ivl, or NULL */

/* The CUDA the process runs and the record layouts of its CUPTI (tracer/jobcuda.c, tracer/layout.c): set at start. */
static struct vt__jobcuda g_job;
static struct vt__layout g_layout;

/* What the API-call decoder (tracer/apicall.c) uses; filled before callbacks are enabled. */
static struct vt__apicall_env g_env;

static _Thread_local struct vt__apithread t_api; /* the decoder's per-thread state */
static _Thread_local int t_inTracer;     /* > 0 while the tracer itself calls the driver */

/* Print one "vramtrace: ..." line on stderr, keeping errno. */
static void say(const char *zFmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *zFmt, ...)
{
    char z[768];
    int saved = errno;
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(z, sizeof z, zFmt, ap);
    va_end(ap);
    fprintf(stderr, "vramtrace: %s\n", z);
    errno = saved;
}

/* CUPTI's name for a result code (never NULL). */
static const char *result_name(CUptiResult r)
{
    const char *z = NULL;
    if (cuptiGetResultString(r, &z) != CUPTI_SUCCESS || !z) z = "unknown CUPTI error";
    return z;
}

/* Resolve the driver (and runtime) functions from the libraries already in the process (nothing is loaded). */
static void load_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    void *hSym = h ? h : RTLD_DEFAULT;
#define SYM(field, name) *(void **)&g_drv.field = dlsym(hSym, name)
    SYM(xMemGetInfo, "cuMemGetInfo_v2");
    SYM(xDriverGetVersion, "cuDriverGetVersion");
    SYM(xDeviceGet, "cuDeviceGet");
    SYM(xDeviceGetName, "cuDeviceGetName");
    SYM(xDeviceTotalMem, "cuDeviceTotalMem_v2");
    SYM(xDeviceGetAttribute, "cuDeviceGetAttribute");
    SYM(xDeviceGetUuid, "cuDeviceGetUuid_v2");
    SYM(xFuncGetParamInfo, "cuFuncGetParamInfo");
    SYM(xKernelGetParamInfo, "cuKernelGetParamInfo");
    SYM(xMemGetAddressRange, "cuMemGetAddressRange_v2");
    SYM(xMemGetAllocationPropertiesFromHandle, "cuMemGetAllocationPropertiesFromHandle");
    /* The handle stays open for the life of the process: libcuda is never unloaded anyway. */

    /* cudaFuncGetParamInfo: global, or in a libcudart loaded locally (a Python extension's).
     * Looked up here only, at start: dlsym inside a callback could wait on the loader lock. */
    hSym = RTLD_DEFAULT;
    SYM(xRtFuncGetParamInfo, "cudaFuncGetParamInfo");
    if (!g_drv.xRtFuncGetParamInfo && (h = dlopen("libcudart.so.13", RTLD_LAZY | RTLD_NOLOAD)) != NULL) {
        hSym = h;
        SYM(xRtFuncGetParamInfo, "cudaFuncGetParamInfo");
        /* the reference is kept, as libcuda's: the function must not be unloaded under us */
    }
#undef SYM
}

static uint64_t now_cupti(void)
{
    uint64_t ts = 0;
    if (cuptiGetTimestamp(&ts) != CUPTI_SUCCESS) ts = 0;
    return ts;
}

/* Device ordinal of a context, or -1. */
static int context_device(CUcontext ctx)
{
    uint32_t id = 0;
    if (!ctx || cuptiGetDeviceId(ctx, &id) != CUPTI_SUCCESS) return -1;
    return (int)id;
}

/* CUPTI's stream id (the one activity records carry) for a stream handle, or 0 if unknown. */
static uint64_t stream_id(CUcontext ctx, const void *hStream, int perThread)
{
    uint32_t id = 0;
    if (!ctx) return 0;
    if (cuptiGetStreamIdEx(ctx, (CUstream)(uintptr_t)hStream, (uint8_t)perThread, &id) !=
        CUPTI_SUCCESS)
        return 0;
    return id;
}

/*
 * Call-site capture: the calling thread's native stack (VRAMTRACE_BACKTRACE
 * frames) and Python stack (VRAMTRACE_PYTHON_STACKS), deduplicated by
 * stack.c. A site seen for the first time is submitted as a VT_HREC_STACK
 * record; if the writer drops it, the next capture of that site re-sends it.
 * Returns the stack id, or 0 (no capture configured, or nothing captured).
 */
static int64_t capture_site(void)
{
    struct vt_hrec rec;
    int64_t id;
    if (!g_sites) return 0;
    memset(&rec, 0, sizeof rec);
    t_inTracer++;
    id = vt__site_capture(g_sites, g_cfg.backtrace, g_cfg.python_stacks, &rec);
    t_inTracer--;
    if (rec.type == VT_HREC_STACK && vt__session_submit(&rec) != 0) vt__site_lost(g_sites, &rec);
    return id > 0 ? id : 0;
}

/* cuFuncGetParamInfo for the kernel-argument scanner (kparams.h), never traced. */
static int func_param_info(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    CUresult r;
    t_inTracer++;
    r = g_drv.xFuncGetParamInfo((CUfunction)(uintptr_t)h, i, pOff, pSize);
    t_inTracer--;
    return r == CUDA_SUCCESS ? 0 : -1;
}

/* cuKernelGetParamInfo for the kernel-argument scanner (kparams.h), never traced. */
static int kernel_param_info(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    CUresult r;
    t_inTracer++;
    r = g_drv.xKernelGetParamInfo((CUkernel)(uintptr_t)h, i, pOff, pSize);
    t_inTracer--;
    return r == CUDA_SUCCESS ? 0 : -1;
}

/* cudaFuncGetParamInfo for the kernel-argument scanner (kparams.h), never traced. */
static int stub_param_info(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    int r;
    t_inTracer++;
    r = g_drv.xRtFuncGetParamInfo(h, i, pOff, pSize);
    t_inTracer--;
    return r == 0 ? 0 : -1; /* cudaSuccess */
}

/* Query free/total device memory through the driver, never traced. Returns 0 or -1. */
static int mem_info(uint64_t *pFree, uint64_t *pTotal)
{
    size_t nFree = 0, nTotal = 0;
    CUresult r;
    if (!g_drv.xMemGetInfo) return -1;
    t_inTracer++;
    r = g_drv.xMemGetInfo(&nFree, &nTotal);
    t_inTracer--;
    if (r != CUDA_SUCCESS) return -1;
    *pFree = nFree;
    *pTotal = nTotal;
    return 0;
}

/* The allocation containing ptr (cuMemGetAddressRange), never traced. Returns 0 or -1. */
static int address_range(uint64_t ptr, uint64_t *pBase, uint64_t *pSize)
{
    CUdeviceptr base = 0;
    size_t size = 0;
    CUresult r;
    if (!g_drv.xMemGetAddressRange) return -1;
    t_inTracer++;
    r = g_drv.xMemGetAddressRange(&base, &size, (CUdeviceptr)ptr);
    t_inTracer--;
    if (r != CUDA_SUCCESS) return -1;
    *pBase = base;
    *pSize = size;
    return 0;
}

/* Where an allocation handle's memory lives (its properties), never traced. Returns 0 or -1. */
static int handle_location(uint64_t handle, int *pMemKind, int *pDevice)
{
    CUmemAllocationProp prop;
    CUresult r;
    if (!g_drv.xMemGetAllocationPropertiesFromHandle) return -1;
    memset(&prop, 0, sizeof prop);
    t_inTracer++;
    r = g_drv.xMemGetAllocationPropertiesFromHandle(&prop, (CUmemGenericAllocationHandle)handle);
    t_inTracer--;
    if (r != CUDA_SUCCESS) return -1;
    switch (prop.location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        *pMemKind = VT_MEMKIND_DEVICE;
        *pDevice = prop.location.id;
        return 0;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
        *pMemKind = VT_MEMKIND_PINNED;
        *pDevice = -1;
        return 0;
    default: return -1;
    }
}

/* Write a device row the first time a context on device `dev` appears. */
static void record_device(int dev)
{
    struct vt_hrec rec;
    CUdevice d;
    CUuuid uuid;
    size_t total = 0;
    int v = 0, clock = 0, width = 0;
    uint_fast64_t bit;

    if (dev < 0 || dev >= MAX_TRACKED_DEVICES) return;
    bit = (uint_fast64_t)1 << dev;
    if (atomic_fetch_or(&g_devSeen, bit) & bit) return;
    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_DEVICE;
    rec.u.device.id = dev;
    rec.u.device.pci_bus = rec.u.device.pci_device = -1;
    t_inTracer++;
    if (g_drv.xDeviceGet && g_drv.xDeviceGet(&d, dev) == CUDA_SUCCESS) {
        if (g_drv.xDeviceGetName &&
            g_drv.xDeviceGetName(rec.u.device.zName, (int)sizeof rec.u.device.zName - 1, d) != CUDA_SUCCESS)
            rec.u.device.zName[0] = '\0';
        if (g_drv.xDeviceTotalMem && g_drv.xDeviceTotalMem(&total, d) == CUDA_SUCCESS)
            rec.u.device.total_bytes = total;
        if (g_drv.xDeviceGetUuid && g_drv.xDeviceGetUuid(&uuid, d) == CUDA_SUCCESS) {
            /* nvidia-smi's form, GPU-8-4-4-4-12, as the DEVICE activity record path writes it */
            const unsigned char *b = (const unsigned char *)uuid.bytes;
            snprintf(rec.u.device.zUuid, sizeof rec.u.device.zUuid,
                     "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                     b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                     b[13], b[14], b[15]);
        }
        if (g_drv.xDeviceGetAttribute) {
#define ATTR(a, field) if (g_drv.xDeviceGetAttribute(&v, a, d) == CUDA_SUCCESS) rec.u.device.field = v
            ATTR(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cc_major);
            ATTR(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cc_minor);
            ATTR(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, sm_count);
            ATTR(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, pci_bus);
            ATTR(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, pci_device);
#undef ATTR
            /* peak bandwidth, KB/s: clock (kHz) x 2 (double data rate) x bus width (bytes) */
            if (g_drv.xDeviceGetAttribute(&clock, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, d) == CUDA_SUCCESS &&
                g_drv.xDeviceGetAttribute(&width, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, d) == CUDA_SUCCESS &&
                clock > 0 && width > 0)
                rec.u.device.bandwidth_kbps = (uint64_t)clock * 2 * (uint64_t)(width / 8);
        }
    }
    t_inTracer--;
    vt__session_submit(&rec);
}

/*
 * CUPTI_CBID_STATE_FATAL_ERROR: CUPTI finalizes itself after this callback
 * (cupti_callbacks.h). Record what it said (one meta row, one line), make
 * every later path leave CUPTI alone, and have the flush thread close the
 * trace with what it holds (not here: a callback must not wait on the writer).
 */
static void on_fatal(const CUpti_StateData *sd)
{
    char z[600];
    CUptiResult r = sd ? sd->notification.result : CUPTI_ERROR_UNKNOWN;
    const char *zMsg = sd && sd->notification.message ? sd->notification.message : "";
    if (atomic_exchange(&g_fatal, 1)) return;
    snprintf(z, sizeof z, "%s%s%.400s", result_name(r), zMsg[0] ? ": " : "", zMsg);
    vt__session_meta("cupti_fatal_error", z);
    snprintf(z, sizeof z, "%llu", (unsigned long long)now_cupti());
    vt__session_meta("cupti_fatal_error_ns", z);
    say("CUPTI reported a fatal error (%s%s%.300s); tracing stops, the trace %s keeps what was recorded",
        result_name(r), zMsg[0] ? ": " : "", zMsg, vt__session_path());
    vt__flusher_kick(g_flusher);
}

/* Read CUPTI's device-buffer settings (before any context exists) and record them in meta. */
static void record_cupti_buffers(void)
{
    char z[32];
    size_t n = sizeof g_devbuf.size;
    uint8_t u8 = 0;
    if (cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &n, &g_devbuf.size) != CUPTI_SUCCESS)
        return;
    n = sizeof g_devbuf.preAllocate;
    if (cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &n,
                                  &g_devbuf.preAllocate) != CUPTI_SUCCESS)
        return;
    n = sizeof g_devbuf.poolLimit;
    if (cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, &n, &g_devbuf.poolLimit) !=
        CUPTI_SUCCESS)
        return;
    n = sizeof u8;
    if (cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &n, &u8) == CUPTI_SUCCESS)
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
static void record_cupti_context(CUcontext ctx, int dev)
{
    char zKey[64], z[32];
    unsigned i, nOfDev = 0;
    int bNew = 1;
    if (!g_devbuf.bKnown || dev < 0 || dev >= MAX_TRACKED_DEVICES) return;
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

/* The one CUPTI callback: runtime and driver API enter/exit, resource events. */
static void CUPTIAPI on_callback(void *pUser, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *pData)
{
    int saved = errno;
    (void)pUser;

    if (t_inTracer) goto done;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        vt__apicall_callback(&g_env, &t_api, domain, cbid, pData);
    } else if (domain == CUPTI_CB_DOMAIN_STATE && cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
        if (vt__session_active()) on_fatal(pData);
    } else if (domain == CUPTI_CB_DOMAIN_NVTX) {
        vt__nvtx_callback(&g_env, cbid, pData);
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING) {
        vt__kparams_forget(g_kp); /* its functions' handles may name another module's next */
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        const CUpti_ResourceData *rd = pData;
        if (vt__session_active()) {
            int dev = context_device(rd->context);
            record_device(dev);
            record_cupti_context(rd->context, dev);
        }
    }
done:
    errno = saved;
}

/* A buffer was requested or returned: CUPTI still hands this tracer its buffers (the watch's count). */
static void note_buffer_event(void)
{
    atomic_fetch_add(&g_nBufEvents, 1);
    if (!atomic_load(&g_fatal)) atomic_store(&g_tLastBufNs, now_cupti()); /* CUPTI is finalizing otherwise */
}

/* CUPTI asks for an activity buffer: one from the writer, or none (CUPTI then counts drops). */
static void CUPTIAPI buffer_requested(uint8_t **ppBuf, size_t *pSize, size_t *pMaxRecords)
{
    int saved = errno;
    note_buffer_event();
    *pMaxRecords = 0;
    *ppBuf = vt__session_buffer_alloc(pSize);
    if (!*ppBuf) *pSize = 0;
    errno = saved;
}

/* Report records CUPTI dropped (no buffer available) since the last query. */
static void report_cupti_drops(CUcontext ctx, uint32_t streamId)
{
    size_t n = 0;
    struct vt_hrec rec;
    if (atomic_load(&g_fatal)) return; /* CUPTI is finalizing itself: not asked any more */
    if (cuptiActivityGetNumDroppedRecords(ctx, streamId, &n) != CUPTI_SUCCESS || n == 0) return;
    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_DROPPED;
    rec.u.dropped.ts = now_cupti();
    rec.u.dropped.source = VT_DROP_CUPTI;
    rec.u.dropped.zWhat = "activity records (no buffer: VRAMTRACE_MAX_MEMORY reached)";
    rec.u.dropped.count = n;
    vt__session_submit(&rec);
}

/* CUPTI returns a filled buffer: count CUPTI's drops, hand the buffer to the writer. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t streamId, uint8_t *pBuf, size_t size,
                                     size_t validSize)
{
    int saved = errno;
    (void)size;
    note_buffer_event();
    report_cupti_drops(ctx, streamId);
    if (pBuf) vt__session_buffer_submit(pBuf, validSize);
    errno = saved;
}

/* The writer's record iterator: cuptiActivityGetNextRecord with writer.h's return codes. */
static int next_record(uint8_t *pBuf, size_t validSize, void **ppRecord)
{
    CUpti_Activity *pRec = *ppRecord;
    CUptiResult r = cuptiActivityGetNextRecord(pBuf, validSize, &pRec);
    if (r == CUPTI_SUCCESS) {
        *ppRecord = pRec;
        return 0;
    }
    return r == CUPTI_ERROR_MAX_LIMIT_REACHED ? 1 : -1;
}

/* Milliseconds on the monotonic clock. */
static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A successful allocation or free returned: its MEMORY2 record must follow (the watch counts). */
static void expect_record(void)
{
    if (g_bWatchMemory) atomic_fetch_add(&g_nExpect, 1);
}

/*
 * The watch's verdict: CUPTI hands the activity buffers to someone else.
 * The trace says from when (the last buffer event: nothing after it reached
 * us), one line says it, and GPU activity is missing from then on.
 */
static void report_takeover(void)
{
    char z[32];
    uint64_t t = atomic_load(&g_tLastBufNs);
    snprintf(z, sizeof z, "%llu", (unsigned long long)(t ? t : (uint64_t)g_cfg.time_base_ns));
    vt__session_meta("cupti_takeover_ns", z);
    snprintf(z, sizeof z, "%llu", (unsigned long long)now_cupti());
    vt__session_meta("cupti_takeover_detected_ns", z);
    say("CUPTI no longer hands this tracer its activity buffers: another CUPTI client (torch.profiler/"
        "Kineto, Nsight) took them over; GPU activity is missing from %s from then on (meta "
        "cupti_takeover_ns), API calls are still recorded",
        vt__session_path());
}

/*
 * The flush thread's periodic task: a non-forced flush hands the writer every
 * activity buffer whose records are complete, full or not, so the records of
 * a thread that makes few CUDA calls (CUPTI 13 keeps one buffer per thread)
 * reach the trace within about a flush interval instead of at exit. After a
 * fatal CUPTI error it closes the trace instead, once, and calls CUPTI no more.
 */
static void flush_tick(void *pArg)
{
    (void)pArg;
    if (atomic_load(&g_fatal)) {
        /* end_ns: the latest time recorded (the writer's default), the clock is CUPTI's */
        if (!atomic_exchange(&g_fatalHandled, 1) && vt__session_active()) vt__session_close(EXIT_TIMEOUT_MS);
        return;
    }
    if (!vt__session_active()) return;
    cuptiActivityFlushAll(0);
    switch (vt__watch_tick(&g_watch, mono_ms(), atomic_load(&g_nBufEvents), atomic_load(&g_nExpect))) {
    case VT_WATCH_PROBE: cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); break;
    case VT_WATCH_TAKEN: report_takeover(); break;
    default: break;
    }
}

/* Disable what was enabled: callbacks and activity kinds. Errors are irrelevant at this point. */
static void disable_all(void)
{
    size_t i;
    if (g_subscribed) {
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE);
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_NVTX);
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_STATE);
    }
    for (i = 0; i < sizeof aKind / sizeof aKind[0]; i++) cuptiActivityDisable(aKind[i].kind);
}

/* The final task (on the flush thread): forced flush, stop CUPTI, forced flush of what was left. */
static void final_flush(void *pArg)
{
    (void)pArg;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    disable_all();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    report_cupti_drops(NULL, 0);
}

/*
 * atexit: the final flush, waited for at most FINAL_FLUSH_MS (it runs on the
 * flush thread: a flush stuck on a hung device is left behind), then drain
 * and close the trace within EXIT_TIMEOUT_MS. After a fatal CUPTI error no
 * CUPTI function is called.
 */
static void at_exit(void)
{
    int saved = errno;
    char z[32];
    uint64_t nDropped;
    int rc;
    struct vt__flusher *f = g_flusher;
    if (!vt__session_active()) goto done; /* never started, already closed, or a forked child */
    g_flusher = NULL;
    if (atomic_load(&g_fatal)) {
        /* the flush thread closes the trace (it may be doing so now) */
        if (f) vt__flusher_stop(f, NULL, FINAL_FLUSH_MS + EXIT_TIMEOUT_MS);
        if (!vt__session_active()) goto done;
    } else if (!f) {
        final_flush(NULL); /* no flush thread could be started: unbounded, as before */
    } else if (vt__flusher_stop(f, final_flush, FINAL_FLUSH_MS) != 0) {
        say("CUPTI's final flush did not finish within %u ms (a hung device?); activity records "
            "not delivered by then are missing from %s",
            FINAL_FLUSH_MS, vt__session_path());
        vt__session_meta("final_flush", "timeout");
    }
    if (!atomic_load(&g_fatal)) {
        snprintf(z, sizeof z, "%llu", (unsigned long long)now_cupti());
        vt__session_meta("end_ns", z);
    }
    nDropped = vt__session_dropped();
    rc = vt__session_close(EXIT_TIMEOUT_MS);
    if (rc == -EFBIG) {
        /* tracing went off at the file-size limit: the writer said so then, once */
    } else if (rc != 0)
        say("trace %s may be incomplete (closing failed: %d)", vt__session_path(), rc);
    else if (nDropped)
        say("%llu records were dropped (writer behind; see the 'dropped' table of %s)",
            (unsigned long long)nDropped, vt__session_path());
done:
    errno = saved;
}

/*
 * What recorded the trace: the libcupti file and the CUDA runtime of the job
 * (file, version), the layout table and the release whose layouts decode the
 * records, and the kinds reduced (with why). Unknown facts get no row.
 */
static void record_versions_meta(void)
{
    char z[PATH_MAX + 64], zRed[256], zNewest[32];
    const char *zNewestName;
    if (g_job.zCupti[0]) vt__session_meta("cupti_library", g_job.zCupti);
    if (g_job.zOtherCupti[0]) vt__session_meta("cupti_other_library", g_job.zOtherCupti);
    if (g_job.zRuntime[0]) vt__session_meta("cuda_runtime_library", g_job.zRuntime);
    if (g_job.runtimeVersion > 0) {
        snprintf(z, sizeof z, "%d", g_job.runtimeVersion);
        vt__session_meta("cuda_runtime_version", z);
    }
    vt__cupti_version_text(vt__layout_newest(&zNewestName), zNewest, sizeof zNewest);
    snprintf(z, sizeof z, "%d: CUPTI 13.0 to %s", VT_LAYOUT_TABLE_VERSION, zNewest);
    vt__session_meta("cupti_layout_table", z);
    vt__layout_reduced_names(&g_layout, zRed, sizeof zRed);
    if (g_layout.status == VT_LAYOUT_KNOWN) snprintf(z, sizeof z, "%s", g_layout.zRelease);
    else snprintf(z, sizeof z, "unknown: CUPTI API version %u is %s", (unsigned)g_layout.version,
                  g_layout.status == VT_LAYOUT_NEWER ? "newer than the table" : "an update the table does not list");
    vt__session_meta("cupti_layout", z);
    if (zRed[0]) {
        snprintf(z, sizeof z, "%s: record layout unknown for CUPTI API version %u (the table knows 13.0 to %s); "
                 "their records are not read", zRed, (unsigned)g_layout.version, zNewest);
        vt__session_meta("cupti_kinds_reduced", z);
    }
}

/*
 * Decide whether this process can be traced with its CUPTI and CUDA runtime:
 * the job's runtime must be CUDA 13 or later (when one is loaded), the
 * libcupti a CUDA 13 one; the layouts of its version are selected (and made
 * the decoders'); reduced kinds are said in one line. Calls no CUPTI function
 * but cuptiGetVersion. Returns 0, or -1 with the one line printed.
 */
static int check_versions(void)
{
    char zV[32], zNewest[32], zRed[256];
    uint32_t v = 0;
    vt__jobcuda_probe(&g_job, (const void *)cuptiGetVersion);
    if (g_job.runtimeMajor > 0 && g_job.runtimeMajor < 13) {
        if (g_job.runtimeVersion > 0)
            snprintf(zV, sizeof zV, "%d.%d", g_job.runtimeVersion / 1000, g_job.runtimeVersion % 1000 / 10);
        else snprintf(zV, sizeof zV, "%d", g_job.runtimeMajor);
        say("tracing off: this job runs CUDA %s (%s) and this vramtrace records CUDA 13 jobs only (it reads "
            "CUPTI 13's records and CUDA 13's API parameters); run the job's CUDA 13 build (e.g. a cu13x "
            "PyTorch wheel) or a vramtrace built against CUDA %d; the program runs untraced",
            zV, g_job.zRuntime, g_job.runtimeMajor);
        return -1;
    }
    if (cuptiGetVersion(&v) != CUPTI_SUCCESS) v = 0;
    vt__layout_select(v, &g_layout);
    vt__cupti_version_text(v, zV, sizeof zV);
    if (g_layout.status == VT_LAYOUT_OLDER) {
        say("tracing off: the libcupti loaded (%s) is CUPTI %s (API version %u), and this vramtrace reads "
            "CUPTI 13's records only; make libcupti.so.13 of CUDA 13 the one loaded (VRAMTRACE_CUPTI, "
            "LD_LIBRARY_PATH); the program runs untraced",
            g_job.zCupti[0] ? g_job.zCupti : "unknown file", zV, (unsigned)v);
        return -1;
    }
    vt__layout_use(&g_layout);
    vt__layout_reduced_names(&g_layout, zRed, sizeof zRed);
    if (zRed[0]) {
        vt__cupti_version_text(vt__layout_newest(NULL), zNewest, sizeof zNewest);
        say("the record layouts of CUPTI %s (API version %u) are unknown to this vramtrace (it knows 13.0 to %s%s): "
            "%s are not recorded (read at a guessed offset they could be garbage), API calls are; use a "
            "vramtrace that knows CUPTI %s, or a CUPTI it knows (VRAMTRACE_CUPTI)",
            zV, (unsigned)v, zNewest, g_layout.status == VT_LAYOUT_NEWER ? "" : ", not this update", zRed, zV);
    }
    return 0;
}

/* Write the process-level meta rows only the glue knows (versions, clock anchor, start). */
static void record_glue_meta(void)
{
    char z[64];
    uint32_t v = 0;
    int iDrv = 0;
    uint64_t cuptiNs;
    struct timespec ts;
    if (cuptiGetVersion(&v) == CUPTI_SUCCESS) {
        snprintf(z, sizeof z, "%u", v);
        vt__session_meta("cupti_version", z);
    }
    record_versions_meta();
    if (g_drv.xDriverGetVersion && g_drv.xDriverGetVersion(&iDrv) == CUDA_SUCCESS) {
        snprintf(z, sizeof z, "%d", iDrv);
        vt__session_meta("cuda_driver_version", z);
    }
    /* the clock anchor: both clocks read back to back */
    cuptiNs = now_cupti();
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(z, sizeof z, "%llu", (unsigned long long)cuptiNs);
    vt__session_meta("clock_anchor_cupti_ns", z);
    vt__session_meta("start_ns", z);
    snprintf(z, sizeof z, "%lld", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    vt__session_meta("clock_anchor_wall_ns", z);
}

/* Open call-site capture and the kernel-argument scanner as configured; warn when one cannot. */
static void open_attribution(void)
{
    static const char *const azSkip[] = {"libvramtrace", "libcupti", "libcuda.so", "libcudart",
                                         NULL};
    struct vt_sites_config sc;
    if (g_cfg.backtrace > 0 || g_cfg.python_stacks) {
        vt__sites_config_default(&sc);
        sc.azSkipModule = azSkip;
        g_sites = vt__sites_open(&sc);
        if (!g_sites) say("call sites are not recorded: cannot set up site capture");
    }
    if (g_cfg.kernel_args) {
        struct vt__kparams_config kc;
        memset(&kc, 0, sizeof kc);
        kc.xFuncParamInfo = g_drv.xFuncGetParamInfo ? func_param_info : NULL;
        kc.xKernelParamInfo = g_drv.xKernelGetParamInfo ? kernel_param_info : NULL;
        kc.xStubParamInfo = g_drv.xRtFuncGetParamInfo ? stub_param_info : NULL;
        kc.ivl = g_ivl = vt__ivl_open();
        g_kp = g_ivl ? vt__kparams_open(&kc) : NULL;
        if (!g_kp) {
            say("kernel arguments are not scanned: out of memory");
            vt__ivl_close(g_ivl);
            g_ivl = NULL;
        }
    }
}

/* Hand the API-call decoder the clock, CUPTI's lookups, the driver and the session. */
static void setup_env(void)
{
    g_env.xNow = now_cupti;
    g_env.xDevice = context_device;
    g_env.xStream = stream_id;
    g_env.xMemInfo = mem_info;
    g_env.xSite = capture_site;
    g_env.xActive = vt__session_active;
    g_env.xSubmit = vt__session_submit;
    g_env.ivl = g_ivl;
    g_env.kp = g_kp;
    g_env.xAddressRange = address_range;
    g_env.xHandleLocation = handle_location;
    g_env.xExpect = expect_record;
}

/* Enable the API callbacks we record; returns how many could not be enabled. */
static int enable_callbacks(void)
{
    int nFail = 0;
    static const CUpti_CallbackDomain aDomain[] = {CUPTI_CB_DOMAIN_RUNTIME_API,
                                                   CUPTI_CB_DOMAIN_DRIVER_API};
    const CUpti_CallbackId *aNvtx;
    size_t d, i, n;
    for (d = 0; d < sizeof aDomain / sizeof aDomain[0]; d++) {
        const struct vt__api *a = vt__api_table(aDomain[d], &n);
        for (i = 0; i < n; i++)
            if (cuptiEnableCallback(1, g_subscriber, aDomain[d], a[i].cbid) != CUPTI_SUCCESS) nFail++;
    }
    if (cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                            CUPTI_CBID_RESOURCE_CONTEXT_CREATED) != CUPTI_SUCCESS)
        nFail++;
    if (g_kp && cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING) != CUPTI_SUCCESS)
        nFail++;
    /* CUPTI's fatal errors (it finalizes itself after telling): close the trace cleanly */
    if (cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR) !=
        CUPTI_SUCCESS)
        nFail++;
    /* the start/end range calls of NVTX, to tell their markers from push/pop ones */
    aNvtx = vt__nvtx_cbids(&n);
    for (i = 0; i < n; i++)
        if (cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_NVTX, aNvtx[i]) != CUPTI_SUCCESS) nFail++;
    return nFail;
}

/* Enable the activity kinds; one warning line lists every kind that failed. */
static void enable_activities(void)
{
    char z[512];
    size_t i, n = 0;
    z[0] = '\0';
    for (i = 0; i < sizeof aKind / sizeof aKind[0]; i++) {
        CUptiResult r;
        if (!g_layout.aFmt[vt__layout_kind(aKind[i].kind)]) continue; /* reduced: said at start */
        r = cuptiActivityEnable(aKind[i].kind);
        if (r == CUPTI_SUCCESS && aKind[i].kind == CUPTI_ACTIVITY_KIND_MEMORY2) g_bWatchMemory = 1;
        if (r == CUPTI_SUCCESS) continue;
        if (n < sizeof z)
            n += (size_t)snprintf(z + n, sizeof z - n, "%s%s (%s)", n ? ", " : "", aKind[i].zName,
                                  result_name(r));
    }
    if (z[0]) say("cannot enable CUPTI activity %s; those events are not recorded", z);
}

/* Subscribe to CUPTI; on failure print the one explanatory line and return -1. */
static int subscribe(void)
{
    char zOld[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1];
    CUpti_SubscriberParams params;
    CUptiResult (*xSubscribe2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                               CUpti_SubscriberParams *);
    void *hCupti;
    CUptiResult r;

    /* cuptiSubscribe_v2 (it names the other subscriber) is looked up, not linked: a libcupti.so.13
     * the process loaded before us may predate it, and a missing symbol must not kill the host. */
    *(void **)&xSubscribe2 = dlsym(RTLD_DEFAULT, "cuptiSubscribe_v2");
    if (!xSubscribe2 && (hCupti = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD)) != NULL) {
        *(void **)&xSubscribe2 = dlsym(hCupti, "cuptiSubscribe_v2");
        dlclose(hCupti); /* drops only the reference RTLD_NOLOAD took */
    }
    memset(&params, 0, sizeof params);
    memset(zOld, 0, sizeof zOld);
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "vramtrace";
    params.oldSubscriberName = zOld;
    params.oldSubscriberSize = sizeof zOld - 1;
    r = xSubscribe2 ? xSubscribe2(&g_subscriber, (CUpti_CallbackFunc)on_callback, NULL, &params)
                    : cuptiSubscribe(&g_subscriber, (CUpti_CallbackFunc)on_callback, NULL);
    if (r == CUPTI_SUCCESS) {
        g_subscribed = 1;
        return 0;
    }
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        say("tracing off: another CUPTI tool already profiles this process%s%s%s and CUPTI allows "
            "only one (%s; e.g. Nsight Systems, Nsight Compute, compute-sanitizer, cuda-gdb, "
            "PyTorch's profiler); run without the other profiler, or use it alone",
            zOld[0] ? " (" : "", zOld, zOld[0] ? ")" : "", result_name(r));
    } else {
        say("tracing off: CUPTI cannot attach (cuptiSubscribe: %s); the program runs untraced",
            result_name(r));
    }
    return -1;
}

/*
 * The CUDA driver calls this once when CUDA_INJECTION64_PATH names this library.
 * Never fails the host: on any problem one "vramtrace:" line is printed and
 * tracing stays off. Returns 1 (the driver treats the injection as loaded).
 */
VT_EXPORT int InitializeInjection(void)
{
    int saved = errno;
    char zErr[600];
    CUptiResult r;
    int nFail;

    if (atomic_exchange(&g_init, 1)) goto done;
    vt__config_load(&g_cfg, vt__config_getenv);
    if (g_cfg.zWarn[0]) fputs(g_cfg.zWarn, stderr);
    if (g_cfg.disabled) goto done;
    load_driver();
    if (check_versions() != 0) goto done;

    /* Subscribe before creating anything: if CUPTI is unavailable nothing is left on disk. */
    if (subscribe() != 0) goto done;
    zErr[0] = '\0';
    g_cfg.time_base_ns = (long long)now_cupti(); /* rows store times relative to it */
    if (vt__session_start(&g_cfg, next_record, zErr, sizeof zErr) != 0) {
        say("tracing off: %s", zErr);
        goto fail;
    }
    r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        say("tracing off: cannot register CUPTI activity buffers (%s)", result_name(r));
        vt__session_abort();
        goto fail;
    }
    open_attribution();
    setup_env();
    /* thread ids in activity records (markers, overhead) as gettid gives them, the same as
     * api_call.thread, so ranges and calls of one thread join (the default is pthread_self) */
    r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (r != CUPTI_SUCCESS)
        say("NVTX ranges keep CUPTI's own thread ids (cuptiSetThreadIdType: %s): they may not join API "
            "calls by thread", result_name(r));
    enable_activities();
    nFail = enable_callbacks();
    if (nFail) say("%d CUPTI API callbacks could not be enabled; those calls are not recorded", nFail);
    record_glue_meta();
    record_cupti_buffers();
    /* allocations waiting 20 flush intervals (10 s by default) for a buffer event: probe */
    vt__watch_init(&g_watch, 20 * (g_cfg.flush_ms ? g_cfg.flush_ms : 500));
    g_flusher = vt__flusher_start(g_cfg.flush_ms, flush_tick, NULL);
    if (!g_flusher)
        say("cannot start the flush thread: records of threads that make few CUDA calls reach the "
            "trace only when their buffer fills or at exit");
    if (atexit(at_exit) != 0) {
        say("tracing off: cannot register the exit handler");
        vt__flusher_stop(g_flusher, NULL, FINAL_FLUSH_MS);
        g_flusher = NULL;
        disable_all();
        vt__session_abort();
        goto fail;
    }
    if (!g_cfg.quiet) say("tracing process %ld to %s", (long)getpid(), vt__session_path());
    goto done;
fail:
    if (g_subscribed) {
        cuptiUnsubscribe(g_subscriber);
        g_subscribed = 0;
    }
done:
    errno = saved;
    return 1;
}

/*
 * NVTX's injection entry, called by the NVTX library in the traced process when
 * NVTX_INJECTION64_PATH names this library. Forwards to the libcupti this library
 * is linked against (already loaded, by soname), so NVTX ranges reach the very
 * CUPTI instance that records everything else — pointing NVTX_INJECTION64_PATH at
 * a libcupti file instead can load a second, different copy. Returns what CUPTI
 * returns (0 refuses the injection: NVTX then stays a no-op), 0 if CUPTI lacks the
 * entry.
 */
VT_EXPORT int InitializeInjectionNvtx2(const void *pGetExportTable)
{
    typedef int (*nvtx_init_fn)(const void *);
    int saved = errno, ok = 0;
    nvtx_init_fn xInit = NULL;
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);

    if (h) *(void **)&xInit = dlsym(h, "InitializeInjectionNvtx2");
    if (xInit) ok = xInit(pGetExportTable);
    else say("NVTX ranges are not recorded: libcupti has no InitializeInjectionNvtx2");
    if (h) dlclose(h);
    errno = saved;
    return ok;
}
