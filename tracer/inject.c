/* The CUPTI glue of libvramtrace.so: injection entry, API callbacks, activity buffers, exit. */
#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "intervals.h"
#include "session.h"
#include "stack.h"
#include "vramtrace/schema.h"
#include "writer.h"

#define VT_EXPORT __attribute__((visibility("default")))
#define EXIT_TIMEOUT_MS 5000u
#define MAX_TRACKED_DEVICES 64
#define PARAM_CACHE_SLOTS 512 /* kernels whose parameter sizes are cached */
#define PARAM_MAX 128         /* parameters scanned per kernel */
#define USES_MAX 512          /* buffer_use rows per launch: a 4 KB parameter block holds at most 512
                                 * pointers (PyTorch's fused multi-tensor kernels pass hundreds) */

/*
 * How each traced API's parameters are read. One shape per parameter layout;
 * the per-thread-stream variants (_ptsz, _ptds) share their base layout.
 */
enum shape {
    S_NONE = 0,
    S_MALLOC,        /* void **ptr; size_t size [; stream] */
    S_MALLOC_STREAM, /* cudaMallocAsync: void **ptr; size_t size; cudaStream_t */
    S_MALLOC_POOL,   /* cudaMallocFromPoolAsync: void **ptr; size_t; pool; stream */
    S_MALLOC_PITCH,  /* cudaMallocPitch: void **ptr; size_t *pitch; width; height */
    S_MALLOC_3D,     /* cudaMalloc3D */
    S_HOST_REGISTER, /* cudaHostRegister: void *ptr; size_t size; flags */
    S_FREE,          /* void *ptr */
    S_FREE_STREAM,   /* cudaFreeAsync: void *ptr; stream */
    S_CU_ALLOC,      /* CUdeviceptr *dptr; size_t bytesize */
    S_CU_ALLOC_STREAM, /* cuMemAllocAsync: CUdeviceptr *; size_t; CUstream */
    S_CU_ALLOC_POOL,   /* cuMemAllocFromPoolAsync: CUdeviceptr *; size_t; pool; CUstream */
    S_CU_ALLOC_PITCH,  /* cuMemAllocPitch_v2 */
    S_CU_HOST_ALLOC,   /* void **pp; size_t bytesize */
    S_CU_HOST_REGISTER, /* void *p; size_t bytesize */
    S_CU_FREE,          /* CUdeviceptr */
    S_CU_FREE_STREAM,   /* CUdeviceptr; CUstream */
    S_CU_HOST_FREE,     /* void *p */
    S_VMM_CREATE, S_VMM_RELEASE, S_VMM_MAP, S_VMM_UNMAP, S_VMM_RESERVE, S_VMM_ADDR_FREE,
    S_MEMCPY,         /* cudaMemcpy: dst, src, count, kind */
    S_MEMCPY_ASYNC,   /* + stream */
    S_MEMCPY2D,       /* cudaMemcpy2D */
    S_MEMCPY2D_ASYNC, /* + stream */
    S_MEMCPY_PEER,    /* cudaMemcpyPeer */
    S_MEMCPY_PEER_ASYNC,
    S_CU_MEMCPY,       /* cuMemcpy: dst, src, ByteCount */
    S_CU_MEMCPY_ASYNC, /* + hStream */
    S_CU_HTOD, S_CU_HTOD_ASYNC, S_CU_DTOH, S_CU_DTOH_ASYNC, S_CU_DTOD, S_CU_DTOD_ASYNC,
    S_MEMSET, S_MEMSET_ASYNC,
    S_CU_MEMSET8, S_CU_MEMSET8_ASYNC, S_CU_MEMSET32, S_CU_MEMSET32_ASYNC,
    S_LAUNCH, S_LAUNCH_EXC, S_CU_LAUNCH, S_CU_LAUNCH_EX,
    S_SYNC,           /* no parameters of interest */
    S_STREAM_SYNC,    /* cudaStreamSynchronize: stream */
    S_CU_STREAM_SYNC, /* cuStreamSynchronize: hStream */
};

struct api_entry {
    CUpti_CallbackId cbid;
    int api;      /* VT_API_LIST id */
    int shape;    /* enum shape */
    int perThread; /* 1 for _ptsz/_ptds variants (per-thread default stream) */
};

#define RT(name, api, shape, pt) {CUPTI_RUNTIME_TRACE_CBID_##name, api, shape, pt},
#define DRV(name, api, shape, pt) {CUPTI_DRIVER_TRACE_CBID_##name, api, shape, pt},

static const struct api_entry aRuntime[] = {
    RT(cudaMalloc_v3020, 1, S_MALLOC, 0)
    RT(cudaFree_v3020, 2, S_FREE, 0)
    RT(cudaMallocAsync_v11020, 3, S_MALLOC_STREAM, 0)
    RT(cudaMallocAsync_ptsz_v11020, 3, S_MALLOC_STREAM, 1)
    RT(cudaFreeAsync_v11020, 4, S_FREE_STREAM, 0)
    RT(cudaFreeAsync_ptsz_v11020, 4, S_FREE_STREAM, 1)
    RT(cudaMallocFromPoolAsync_v11020, 5, S_MALLOC_POOL, 0)
    RT(cudaMallocFromPoolAsync_ptsz_v11020, 5, S_MALLOC_POOL, 1)
    RT(cudaMallocHost_v3020, 6, S_MALLOC, 0)
    RT(cudaHostAlloc_v3020, 7, S_MALLOC, 0)
    RT(cudaFreeHost_v3020, 8, S_FREE, 0)
    RT(cudaMallocManaged_v6000, 9, S_MALLOC, 0)
    RT(cudaMallocPitch_v3020, 10, S_MALLOC_PITCH, 0)
    RT(cudaMalloc3D_v3020, 11, S_MALLOC_3D, 0)
    RT(cudaHostRegister_v4000, 12, S_HOST_REGISTER, 0)
    RT(cudaHostUnregister_v4000, 13, S_FREE, 0)
    RT(cudaMemcpy_v3020, 60, S_MEMCPY, 0)
    RT(cudaMemcpy_ptds_v7000, 60, S_MEMCPY, 1)
    RT(cudaMemcpyAsync_v3020, 61, S_MEMCPY_ASYNC, 0)
    RT(cudaMemcpyAsync_ptsz_v7000, 61, S_MEMCPY_ASYNC, 1)
    RT(cudaMemcpy2D_v3020, 62, S_MEMCPY2D, 0)
    RT(cudaMemcpy2D_ptds_v7000, 62, S_MEMCPY2D, 1)
    RT(cudaMemcpy2DAsync_v3020, 63, S_MEMCPY2D_ASYNC, 0)
    RT(cudaMemcpy2DAsync_ptsz_v7000, 63, S_MEMCPY2D_ASYNC, 1)
    RT(cudaMemcpyPeer_v4000, 64, S_MEMCPY_PEER, 0)
    RT(cudaMemcpyPeerAsync_v4000, 65, S_MEMCPY_PEER_ASYNC, 0)
    RT(cudaMemset_v3020, 80, S_MEMSET, 0)
    RT(cudaMemset_ptds_v7000, 80, S_MEMSET, 1)
    RT(cudaMemsetAsync_v3020, 81, S_MEMSET_ASYNC, 0)
    RT(cudaMemsetAsync_ptsz_v7000, 81, S_MEMSET_ASYNC, 1)
    RT(cudaLaunchKernel_v7000, 100, S_LAUNCH, 0)
    RT(cudaLaunchKernel_ptsz_v7000, 100, S_LAUNCH, 1)
    RT(cudaLaunchKernelExC_v11060, 101, S_LAUNCH_EXC, 0)
    RT(cudaLaunchKernelExC_ptsz_v11060, 101, S_LAUNCH_EXC, 1)
    RT(cudaDeviceSynchronize_v3020, 120, S_SYNC, 0)
    RT(cudaStreamSynchronize_v3020, 121, S_STREAM_SYNC, 0)
    RT(cudaStreamSynchronize_ptsz_v7000, 121, S_STREAM_SYNC, 1)
};

static const struct api_entry aDriver[] = {
    DRV(cuMemAlloc_v2, 20, S_CU_ALLOC, 0)
    DRV(cuMemFree_v2, 21, S_CU_FREE, 0)
    DRV(cuMemAllocAsync, 22, S_CU_ALLOC_STREAM, 0)
    DRV(cuMemAllocAsync_ptsz, 22, S_CU_ALLOC_STREAM, 1)
    DRV(cuMemFreeAsync, 23, S_CU_FREE_STREAM, 0)
    DRV(cuMemFreeAsync_ptsz, 23, S_CU_FREE_STREAM, 1)
    DRV(cuMemAllocFromPoolAsync, 24, S_CU_ALLOC_POOL, 0)
    DRV(cuMemAllocFromPoolAsync_ptsz, 24, S_CU_ALLOC_POOL, 1)
    DRV(cuMemAllocHost_v2, 25, S_CU_HOST_ALLOC, 0)
    DRV(cuMemHostAlloc, 26, S_CU_HOST_ALLOC, 0)
    DRV(cuMemFreeHost, 27, S_CU_HOST_FREE, 0)
    DRV(cuMemAllocManaged, 28, S_CU_ALLOC, 0)
    DRV(cuMemAllocPitch_v2, 29, S_CU_ALLOC_PITCH, 0)
    DRV(cuMemHostRegister_v2, 30, S_CU_HOST_REGISTER, 0)
    DRV(cuMemHostUnregister, 31, S_CU_HOST_FREE, 0)
    DRV(cuMemCreate, 40, S_VMM_CREATE, 0)
    DRV(cuMemRelease, 41, S_VMM_RELEASE, 0)
    DRV(cuMemMap, 42, S_VMM_MAP, 0)
    DRV(cuMemUnmap, 43, S_VMM_UNMAP, 0)
    DRV(cuMemAddressReserve, 44, S_VMM_RESERVE, 0)
    DRV(cuMemAddressFree, 45, S_VMM_ADDR_FREE, 0)
    DRV(cuMemcpy, 66, S_CU_MEMCPY, 0)
    DRV(cuMemcpy_ptds, 66, S_CU_MEMCPY, 1)
    DRV(cuMemcpyAsync, 67, S_CU_MEMCPY_ASYNC, 0)
    DRV(cuMemcpyAsync_ptsz, 67, S_CU_MEMCPY_ASYNC, 1)
    DRV(cuMemcpyHtoD_v2, 68, S_CU_HTOD, 0)
    DRV(cuMemcpyHtoD_v2_ptds, 68, S_CU_HTOD, 1)
    DRV(cuMemcpyHtoDAsync_v2, 69, S_CU_HTOD_ASYNC, 0)
    DRV(cuMemcpyHtoDAsync_v2_ptsz, 69, S_CU_HTOD_ASYNC, 1)
    DRV(cuMemcpyDtoH_v2, 70, S_CU_DTOH, 0)
    DRV(cuMemcpyDtoH_v2_ptds, 70, S_CU_DTOH, 1)
    DRV(cuMemcpyDtoHAsync_v2, 71, S_CU_DTOH_ASYNC, 0)
    DRV(cuMemcpyDtoHAsync_v2_ptsz, 71, S_CU_DTOH_ASYNC, 1)
    DRV(cuMemcpyDtoD_v2, 72, S_CU_DTOD, 0)
    DRV(cuMemcpyDtoD_v2_ptds, 72, S_CU_DTOD, 1)
    DRV(cuMemcpyDtoDAsync_v2, 73, S_CU_DTOD_ASYNC, 0)
    DRV(cuMemcpyDtoDAsync_v2_ptsz, 73, S_CU_DTOD_ASYNC, 1)
    DRV(cuMemsetD8_v2, 82, S_CU_MEMSET8, 0)
    DRV(cuMemsetD8_v2_ptds, 82, S_CU_MEMSET8, 1)
    DRV(cuMemsetD8Async, 83, S_CU_MEMSET8_ASYNC, 0)
    DRV(cuMemsetD8Async_ptsz, 83, S_CU_MEMSET8_ASYNC, 1)
    DRV(cuMemsetD32_v2, 84, S_CU_MEMSET32, 0)
    DRV(cuMemsetD32_v2_ptds, 84, S_CU_MEMSET32, 1)
    DRV(cuMemsetD32Async, 85, S_CU_MEMSET32_ASYNC, 0)
    DRV(cuMemsetD32Async_ptsz, 85, S_CU_MEMSET32_ASYNC, 1)
    DRV(cuLaunchKernel, 102, S_CU_LAUNCH, 0)
    DRV(cuLaunchKernel_ptsz, 102, S_CU_LAUNCH, 1)
    DRV(cuLaunchKernelEx, 103, S_CU_LAUNCH_EX, 0)
    DRV(cuLaunchKernelEx_ptsz, 103, S_CU_LAUNCH_EX, 1)
    DRV(cuCtxSynchronize, 122, S_SYNC, 0)
    DRV(cuCtxSynchronize_v2, 122, S_SYNC, 0)
    DRV(cuStreamSynchronize, 123, S_CU_STREAM_SYNC, 0)
    DRV(cuStreamSynchronize_ptsz, 123, S_CU_STREAM_SYNC, 1)
};

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
} g_drv;

static atomic_int g_init;                  /* InitializeInjection ran (double init is a no-op) */
static CUpti_SubscriberHandle g_subscriber; /* valid when g_subscribed */
static int g_subscribed;
static struct vt_config g_cfg;             /* read once in InitializeInjection */
static atomic_uint_fast64_t g_devSeen;     /* bit d: device d's row was written */

/*
 * Attribution (tracer/stack.c, tracer/intervals.c), opened at start when
 * configured. Neither needs fork handlers here: a forked child never calls
 * into them (its session is inactive, so every callback returns early).
 */
static struct vt__sites *g_sites; /* call-site capture, or NULL */
static struct vt__ivl *g_ivl;     /* live allocations for kernel-argument scanning, or NULL */

/* Kernel parameter sizes, cached per function handle (open addressing, never evicted). */
static struct param_entry {
    uintptr_t f;               /* CUfunction, 0 = empty slot */
    int nParam;
    uint32_t aSize[PARAM_MAX];
} g_aParam[PARAM_CACHE_SLOTS];
static pthread_mutex_t g_paramMutex = PTHREAD_MUTEX_INITIALIZER;

static _Thread_local int t_runtimeDepth; /* > 0 inside a recorded runtime API call */
static _Thread_local uint32_t t_runtimeCorrelation; /* correlation id of that runtime call */
static _Thread_local int t_inTracer;     /* > 0 while the tracer itself calls the driver */
static _Thread_local int64_t t_tid;      /* cached gettid() */

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

/* Resolve the driver functions from the libcuda already in the process (nothing is loaded). */
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
#undef SYM
    /* The handle stays open for the life of the process: libcuda is never unloaded anyway. */
}

static int64_t thread_id(void)
{
    if (!t_tid) t_tid = (int64_t)gettid();
    return t_tid;
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

/*
 * Sizes of a kernel's parameters (cuFuncGetParamInfo, or cuKernelGetParamInfo
 * for a CUkernel passed as a function), cached per handle. Returns the number
 * of parameters written to aSize (at most PARAM_MAX), 0 if unknown.
 */
static int param_sizes(CUfunction f, size_t *aSize)
{
    size_t iSlot = (size_t)(((uintptr_t)f >> 4) * 0x9e3779b97f4a7c15ull) % PARAM_CACHE_SLOTS;
    size_t i, k, off, sz;
    int n = 0;

    pthread_mutex_lock(&g_paramMutex);
    for (k = 0; k < 8; k++) {
        struct param_entry *e = &g_aParam[(iSlot + k) % PARAM_CACHE_SLOTS];
        if (e->f != (uintptr_t)f) continue;
        for (i = 0; i < (size_t)e->nParam; i++) aSize[i] = e->aSize[i];
        n = e->nParam;
        pthread_mutex_unlock(&g_paramMutex);
        return n;
    }
    pthread_mutex_unlock(&g_paramMutex);

    t_inTracer++;
    for (i = 0; g_drv.xFuncGetParamInfo && i < PARAM_MAX; i++) {
        if (g_drv.xFuncGetParamInfo(f, i, &off, &sz) != CUDA_SUCCESS) break;
        aSize[n++] = sz;
    }
    if (n == 0 && g_drv.xKernelGetParamInfo) {
        for (i = 0; i < PARAM_MAX; i++) {
            if (g_drv.xKernelGetParamInfo((CUkernel)f, i, &off, &sz) != CUDA_SUCCESS) break;
            aSize[n++] = sz;
        }
    }
    t_inTracer--;

    pthread_mutex_lock(&g_paramMutex);
    for (k = 0; k < 8; k++) {
        struct param_entry *e = &g_aParam[(iSlot + k) % PARAM_CACHE_SLOTS];
        if (e->f != 0 && e->f != (uintptr_t)f) continue;
        e->f = (uintptr_t)f;
        e->nParam = n;
        for (i = 0; i < (size_t)n; i++) e->aSize[i] = (uint32_t)aSize[i];
        break;
    }
    pthread_mutex_unlock(&g_paramMutex);
    return n;
}

/* The argument buffer of a launch made through `extra` (CU_LAUNCH_PARAM_BUFFER_*), or NULL. */
static const void *extra_buffer(void **extra, size_t *pSize)
{
    const void *pBuf = NULL;
    int i;
    *pSize = 0;
    for (i = 0; extra && i < 32 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) pBuf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1]) *pSize = *(size_t *)extra[i + 1];
    }
    return *pSize ? pBuf : NULL;
}

/*
 * Kernel-argument scanning: look up every 8-byte word of a driver launch's
 * parameters in the index of live allocations and submit one VT_HREC_BUFFER_USE
 * per allocation found, keyed by `correlation` (the runtime call's when the
 * launch came through cudaLaunchKernel*, so it joins the kernel record).
 */
static void scan_kernel_args(int shape, const void *pParams, uint32_t correlation, int device)
{
    uint64_t aBase[USES_MAX];
    size_t aSize[PARAM_MAX];
    void **apParam, **extra;
    CUfunction f;
    const void *pBlock;
    size_t nBlock;
    struct vt_hrec rec;
    uint64_t ts;
    int n = 0, nParam, i;

    if (!g_ivl) return;
    if (shape == S_CU_LAUNCH) {
        const cuLaunchKernel_params *p = pParams;
        f = p->f;
        apParam = p->kernelParams;
        extra = p->extra;
    } else if (shape == S_CU_LAUNCH_EX) {
        const cuLaunchKernelEx_params *p = pParams;
        f = p->f;
        apParam = p->kernelParams;
        extra = p->extra;
    } else {
        return; /* runtime launches are scanned at the driver launch they make */
    }
    if (apParam) {
        nParam = param_sizes(f, aSize);
        if (nParam > 0) n = vt__ivl_scan_params(g_ivl, apParam, aSize, nParam, aBase, USES_MAX);
    } else if ((pBlock = extra_buffer(extra, &nBlock)) != NULL) {
        n = vt__ivl_scan(g_ivl, pBlock, nBlock, aBase, USES_MAX);
    }
    if (n <= 0) return;
    ts = now_cupti();
    for (i = 0; i < n && i < USES_MAX; i++) {
        memset(&rec, 0, sizeof rec);
        rec.type = VT_HREC_BUFFER_USE;
        rec.u.use.correlation = correlation;
        rec.u.use.kind = VT_USE_KERNEL_ARG;
        rec.u.use.address = aBase[i];
        rec.u.use.ts = ts;
        rec.u.use.device = device;
        vt__session_submit(&rec);
    }
    if (n > USES_MAX) {
        memset(&rec, 0, sizeof rec);
        rec.type = VT_HREC_DROPPED;
        rec.u.dropped.ts = ts;
        rec.u.dropped.source = VT_DROP_MAP;
        rec.u.dropped.zWhat = "buffer uses of one launch beyond 64";
        rec.u.dropped.count = (uint64_t)(n - USES_MAX);
        vt__session_submit(&rec);
    }
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

/* What one API call asked for, read from its parameters at exit. */
struct call {
    uint64_t bytes, ptr, src, dst, handle;
    const void *hStream;
    int bStream;  /* hStream is meaningful */
    int device;   /* from the parameters (cuMemCreate), else -1 */
    int memKind;  /* for VMM rows */
};

/* Pointer value at p if p is not NULL and the call succeeded, else 0. */
#define OUT_PTR(p, ok) ((ok) && (p) ? (uint64_t)(uintptr_t) * (p) : 0)

/* Fill *c from the parameters of a call of the given shape; ok: the call succeeded. */
static void read_params(int shape, const void *pv, int ok, struct call *c)
{
    memset(c, 0, sizeof *c);
    c->device = -1;
    switch (shape) {
    case S_MALLOC: {
        const cudaMalloc_v3020_params *p = pv; /* cudaMallocHost/HostAlloc/Managed: same head */
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->devPtr, ok);
        break;
    }
    case S_MALLOC_STREAM: {
        const cudaMallocAsync_v11020_params *p = pv;
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->devPtr, ok);
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_MALLOC_POOL: {
        const cudaMallocFromPoolAsync_v11020_params *p = pv;
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->ptr, ok);
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_MALLOC_PITCH: {
        const cudaMallocPitch_v3020_params *p = pv;
        size_t pitch = ok && p->pitch ? *p->pitch : p->width;
        c->bytes = (uint64_t)pitch * p->height;
        c->ptr = OUT_PTR(p->devPtr, ok);
        break;
    }
    case S_MALLOC_3D: {
        const cudaMalloc3D_v3020_params *p = pv;
        size_t pitch = ok && p->pitchedDevPtr ? p->pitchedDevPtr->pitch : p->extent.width;
        c->bytes = (uint64_t)pitch * p->extent.height * (p->extent.depth ? p->extent.depth : 1);
        c->ptr = ok && p->pitchedDevPtr ? (uint64_t)(uintptr_t)p->pitchedDevPtr->ptr : 0;
        break;
    }
    case S_HOST_REGISTER: {
        const cudaHostRegister_v4000_params *p = pv;
        c->bytes = p->size;
        c->ptr = (uint64_t)(uintptr_t)p->ptr;
        break;
    }
    case S_FREE: {
        const cudaFree_v3020_params *p = pv; /* cudaFreeHost/HostUnregister: same layout */
        c->ptr = (uint64_t)(uintptr_t)p->devPtr;
        break;
    }
    case S_FREE_STREAM: {
        const cudaFreeAsync_v11020_params *p = pv;
        c->ptr = (uint64_t)(uintptr_t)p->devPtr;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_ALLOC: {
        const cuMemAlloc_v2_params *p = pv; /* cuMemAllocManaged: same head */
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->dptr, ok);
        break;
    }
    case S_CU_ALLOC_STREAM: {
        const cuMemAllocAsync_params *p = pv;
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->dptr, ok);
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_ALLOC_POOL: {
        const cuMemAllocFromPoolAsync_params *p = pv;
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->dptr, ok);
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_ALLOC_PITCH: {
        const cuMemAllocPitch_v2_params *p = pv;
        size_t pitch = ok && p->pPitch ? *p->pPitch : p->WidthInBytes;
        c->bytes = (uint64_t)pitch * p->Height;
        c->ptr = OUT_PTR(p->dptr, ok);
        break;
    }
    case S_CU_HOST_ALLOC: {
        const cuMemAllocHost_v2_params *p = pv; /* cuMemHostAlloc: same head */
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->pp, ok);
        break;
    }
    case S_CU_HOST_REGISTER: {
        const cuMemHostRegister_v2_params *p = pv;
        c->bytes = p->bytesize;
        c->ptr = (uint64_t)(uintptr_t)p->p;
        break;
    }
    case S_CU_FREE: {
        const cuMemFree_v2_params *p = pv;
        c->ptr = p->dptr;
        break;
    }
    case S_CU_FREE_STREAM: {
        const cuMemFreeAsync_params *p = pv;
        c->ptr = p->dptr;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_HOST_FREE: {
        const cuMemFreeHost_params *p = pv; /* cuMemHostUnregister: same layout */
        c->ptr = (uint64_t)(uintptr_t)p->p;
        break;
    }
    case S_VMM_CREATE: {
        const cuMemCreate_params *p = pv;
        c->bytes = p->size;
        c->handle = ok && p->handle ? (uint64_t)*p->handle : 0;
        c->memKind = VT_MEMKIND_DEVICE;
        if (p->prop) {
            if (p->prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) c->device = p->prop->location.id;
            else if (p->prop->location.type != CU_MEM_LOCATION_TYPE_INVALID) c->memKind = VT_MEMKIND_PINNED;
        }
        break;
    }
    case S_VMM_RELEASE: {
        const cuMemRelease_params *p = pv;
        c->handle = (uint64_t)p->handle;
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case S_VMM_MAP: {
        const cuMemMap_params *p = pv;
        c->ptr = p->ptr;
        c->bytes = p->size;
        c->handle = (uint64_t)p->handle;
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case S_VMM_UNMAP: {
        const cuMemUnmap_params *p = pv;
        c->ptr = p->ptr;
        c->bytes = p->size;
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case S_VMM_RESERVE: {
        const cuMemAddressReserve_params *p = pv;
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->ptr, ok);
        break;
    }
    case S_VMM_ADDR_FREE: {
        const cuMemAddressFree_params *p = pv;
        c->ptr = p->ptr;
        c->bytes = p->size;
        break;
    }
    case S_MEMCPY: {
        const cudaMemcpy_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = p->count;
        break;
    }
    case S_MEMCPY_ASYNC: {
        const cudaMemcpyAsync_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = p->count;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_MEMCPY2D: {
        const cudaMemcpy2D_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = (uint64_t)p->width * p->height;
        break;
    }
    case S_MEMCPY2D_ASYNC: {
        const cudaMemcpy2DAsync_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = (uint64_t)p->width * p->height;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_MEMCPY_PEER: {
        const cudaMemcpyPeer_v4000_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = p->count;
        break;
    }
    case S_MEMCPY_PEER_ASYNC: {
        const cudaMemcpyPeerAsync_v4000_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = p->count;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_CU_MEMCPY: {
        const cuMemcpy_params *p = pv;
        c->dst = p->dst;
        c->src = p->src;
        c->bytes = p->ByteCount;
        break;
    }
    case S_CU_MEMCPY_ASYNC: {
        const cuMemcpyAsync_params *p = pv;
        c->dst = p->dst;
        c->src = p->src;
        c->bytes = p->ByteCount;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_HTOD: {
        const cuMemcpyHtoD_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->src = (uint64_t)(uintptr_t)p->srcHost;
        c->bytes = p->ByteCount;
        break;
    }
    case S_CU_HTOD_ASYNC: {
        const cuMemcpyHtoDAsync_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->src = (uint64_t)(uintptr_t)p->srcHost;
        c->bytes = p->ByteCount;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_DTOH: {
        const cuMemcpyDtoH_v2_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dstHost;
        c->src = p->srcDevice;
        c->bytes = p->ByteCount;
        break;
    }
    case S_CU_DTOH_ASYNC: {
        const cuMemcpyDtoHAsync_v2_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dstHost;
        c->src = p->srcDevice;
        c->bytes = p->ByteCount;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_DTOD: {
        const cuMemcpyDtoD_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->src = p->srcDevice;
        c->bytes = p->ByteCount;
        break;
    }
    case S_CU_DTOD_ASYNC: {
        const cuMemcpyDtoDAsync_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->src = p->srcDevice;
        c->bytes = p->ByteCount;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_MEMSET: {
        const cudaMemset_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->devPtr;
        c->bytes = p->count;
        break;
    }
    case S_MEMSET_ASYNC: {
        const cudaMemsetAsync_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->devPtr;
        c->bytes = p->count;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_CU_MEMSET8: {
        const cuMemsetD8_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->bytes = p->N;
        break;
    }
    case S_CU_MEMSET8_ASYNC: {
        const cuMemsetD8Async_params *p = pv;
        c->dst = p->dstDevice;
        c->bytes = p->N;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_MEMSET32: {
        const cuMemsetD32_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->bytes = (uint64_t)p->N * 4;
        break;
    }
    case S_CU_MEMSET32_ASYNC: {
        const cuMemsetD32Async_params *p = pv;
        c->dst = p->dstDevice;
        c->bytes = (uint64_t)p->N * 4;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_LAUNCH: {
        const cudaLaunchKernel_v7000_params *p = pv;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_LAUNCH_EXC: {
        const cudaLaunchKernelExC_v11060_params *p = pv;
        if (p->config) {
            c->hStream = p->config->stream;
            c->bStream = 1;
        }
        break;
    }
    case S_CU_LAUNCH: {
        const cuLaunchKernel_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_LAUNCH_EX: {
        const cuLaunchKernelEx_params *p = pv;
        if (p->config) {
            c->hStream = p->config->hStream;
            c->bStream = 1;
        }
        break;
    }
    case S_STREAM_SYNC: {
        const cudaStreamSynchronize_v3020_params *p = pv;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_CU_STREAM_SYNC: {
        const cuStreamSynchronize_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    default: break;
    }
}

/* True for calls whose failure is an out-of-memory moment worth an oom_event row. */
static int is_alloc_shape(int shape)
{
    switch (shape) {
    case S_MALLOC: case S_MALLOC_STREAM: case S_MALLOC_POOL: case S_MALLOC_PITCH: case S_MALLOC_3D:
    case S_HOST_REGISTER: case S_CU_ALLOC: case S_CU_ALLOC_STREAM: case S_CU_ALLOC_POOL:
    case S_CU_ALLOC_PITCH: case S_CU_HOST_ALLOC: case S_CU_HOST_REGISTER: case S_VMM_CREATE:
        return 1;
    default: return 0;
    }
}

/* True for the calls that end an allocation's life. */
static int is_free_shape(int shape)
{
    switch (shape) {
    case S_FREE: case S_FREE_STREAM: case S_CU_FREE: case S_CU_FREE_STREAM: case S_CU_HOST_FREE:
        return 1;
    default: return 0;
    }
}

/* Keep the index of live allocations current after a successful call (for argument scans). */
static void track_live(int shape, const struct call *c)
{
    if (!g_ivl) return;
    if (shape == S_VMM_MAP || (is_alloc_shape(shape) && shape != S_VMM_CREATE)) {
        if (c->ptr) vt__ivl_insert(g_ivl, c->ptr, c->bytes);
    } else if (shape == S_VMM_UNMAP || is_free_shape(shape)) {
        if (c->ptr) vt__ivl_remove(g_ivl, c->ptr);
    }
}

/* True for the calls that carry a call site (allocation, free, VMM, copy, set). */
static int wants_site(int shape)
{
    return shape != S_NONE && shape < S_LAUNCH;
}

/* Record one API call at its exit: api_call row, plus oom_event / VMM memory_event rows. */
static void record_exit(const struct api_entry *e, const CUpti_CallbackData *cb)
{
    struct vt_hrec rec;
    struct call c;
    int status = cb->functionReturnValue ? *(const int *)cb->functionReturnValue : 0;
    int ok = status == 0;
    uint64_t end = now_cupti();
    uint64_t start = cb->correlationData && *cb->correlationData ? *cb->correlationData : end;
    int device = context_device(cb->context);
    int64_t stack = 0;

    read_params(e->shape, cb->functionParams, ok, &c);
    if (c.device >= 0 && device < 0) device = c.device;
    if (wants_site(e->shape)) stack = capture_site();

    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_API_CALL;
    rec.u.api.api = e->api;
    rec.u.api.correlation = cb->correlationId;
    rec.u.api.start = start;
    rec.u.api.end = end;
    rec.u.api.thread = thread_id();
    rec.u.api.device = device;
    rec.u.api.status = status;
    rec.u.api.bytes = c.bytes;
    rec.u.api.ptr = c.ptr ? c.ptr : c.handle;
    rec.u.api.src = c.src;
    rec.u.api.dst = c.dst;
    rec.u.api.stream = c.bStream ? stream_id(cb->context, c.hStream, e->perThread) : 0;
    rec.u.api.stack_id = stack;
    vt__session_submit(&rec);

    if (!ok && is_alloc_shape(e->shape)) {
        memset(&rec, 0, sizeof rec);
        rec.type = VT_HREC_OOM;
        rec.u.oom.ts = end;
        rec.u.oom.api = e->api;
        rec.u.oom.correlation = cb->correlationId;
        rec.u.oom.device = device;
        rec.u.oom.status = status;
        rec.u.oom.bytes = c.bytes;
        if (mem_info(&rec.u.oom.free_bytes, &rec.u.oom.total_bytes) != 0)
            rec.u.oom.free_bytes = rec.u.oom.total_bytes = 0;
        rec.u.oom.thread = thread_id();
        rec.u.oom.stack_id = stack;
        vt__session_submit(&rec);
    }

    if (ok && e->shape >= S_VMM_CREATE && e->shape <= S_VMM_UNMAP) {
        static const int aOp[] = {VT_MEMOP_VMM_CREATE, VT_MEMOP_VMM_RELEASE, VT_MEMOP_VMM_MAP,
                                  VT_MEMOP_VMM_UNMAP};
        memset(&rec, 0, sizeof rec);
        rec.type = VT_HREC_MEMORY;
        rec.u.mem.ts = end;
        rec.u.mem.op = aOp[e->shape - S_VMM_CREATE];
        rec.u.mem.mem_kind = c.memKind;
        /* create/release: the address column holds the physical handle */
        rec.u.mem.address = e->shape <= S_VMM_RELEASE ? c.handle : c.ptr;
        rec.u.mem.bytes = c.bytes;
        rec.u.mem.device = device;
        rec.u.mem.correlation = cb->correlationId;
        rec.u.mem.api = e->api;
        rec.u.mem.handle = c.handle;
        rec.u.mem.thread = thread_id();
        rec.u.mem.stack_id = stack;
        vt__session_submit(&rec);
    }

    if (ok) track_live(e->shape, &c);
    if (ok && (e->shape == S_CU_LAUNCH || e->shape == S_CU_LAUNCH_EX))
        scan_kernel_args(e->shape, cb->functionParams, cb->correlationId, device);
}

/* Find a cbid in a table (small, sorted by nothing: linear scan of ~50 entries). */
static const struct api_entry *find_api(const struct api_entry *a, size_t n, CUpti_CallbackId cbid)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (a[i].cbid == cbid) return &a[i];
    return NULL;
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

/* The one CUPTI callback: runtime and driver API enter/exit, resource events. */
static void CUPTIAPI on_callback(void *pUser, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *pData)
{
    int saved = errno;
    const CUpti_CallbackData *cb = pData;
    const struct api_entry *e;
    (void)pUser;

    if (t_inTracer) goto done;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        e = find_api(aRuntime, sizeof aRuntime / sizeof aRuntime[0], cbid);
        if (!e) goto done;
        if (cb->callbackSite == CUPTI_API_ENTER) {
            t_runtimeDepth++;
            t_runtimeCorrelation = cb->correlationId;
            if (cb->correlationData) *cb->correlationData = now_cupti();
            goto done;
        }
        if (t_runtimeDepth > 0) t_runtimeDepth--;
        if (vt__session_active()) record_exit(e, cb);
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        e = find_api(aDriver, sizeof aDriver / sizeof aDriver[0], cbid);
        if (!e) goto done;
        if (t_runtimeDepth > 0) {
            /* A runtime call already recorded covers the driver calls it makes; only its
             * launch is looked at here, where the kernel's parameter layout is known. */
            if (cb->callbackSite == CUPTI_API_EXIT && vt__session_active() &&
                (e->shape == S_CU_LAUNCH || e->shape == S_CU_LAUNCH_EX) && cb->functionReturnValue &&
                *(const int *)cb->functionReturnValue == 0)
                scan_kernel_args(e->shape, cb->functionParams, t_runtimeCorrelation,
                                 context_device(cb->context));
            goto done;
        }
        if (cb->callbackSite == CUPTI_API_ENTER) {
            if (cb->correlationData) *cb->correlationData = now_cupti();
            goto done;
        }
        if (vt__session_active()) record_exit(e, cb);
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        const CUpti_ResourceData *rd = pData;
        if (vt__session_active()) record_device(context_device(rd->context));
    }
done:
    errno = saved;
}

/* CUPTI asks for an activity buffer: one from the writer, or none (CUPTI then counts drops). */
static void CUPTIAPI buffer_requested(uint8_t **ppBuf, size_t *pSize, size_t *pMaxRecords)
{
    int saved = errno;
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

/* Disable what was enabled: callbacks and activity kinds. Errors are irrelevant at this point. */
static void disable_all(void)
{
    size_t i;
    if (g_subscribed) {
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE);
    }
    for (i = 0; i < sizeof aKind / sizeof aKind[0]; i++) cuptiActivityDisable(aKind[i].kind);
}

/* atexit: flush CUPTI (forced), stop it, drain and close the trace within EXIT_TIMEOUT_MS. */
static void at_exit(void)
{
    int saved = errno;
    char z[32];
    uint64_t nDropped;
    int rc;
    if (!vt__session_active()) goto done; /* never started, already closed, or a forked child */
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    disable_all();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    report_cupti_drops(NULL, 0);
    snprintf(z, sizeof z, "%llu", (unsigned long long)now_cupti());
    vt__session_meta("end_ns", z);
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

/* Open call-site capture and the live-allocation index as configured; warn when one cannot. */
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
        g_ivl = vt__ivl_open();
        if (!g_ivl) say("kernel arguments are not scanned: out of memory");
    }
}

/* Enable the API callbacks we record; returns how many could not be enabled. */
static int enable_callbacks(void)
{
    int nFail = 0;
    size_t i;
    for (i = 0; i < sizeof aRuntime / sizeof aRuntime[0]; i++)
        if (cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, aRuntime[i].cbid) !=
            CUPTI_SUCCESS)
            nFail++;
    for (i = 0; i < sizeof aDriver / sizeof aDriver[0]; i++)
        if (cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, aDriver[i].cbid) !=
            CUPTI_SUCCESS)
            nFail++;
    if (cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                            CUPTI_CBID_RESOURCE_CONTEXT_CREATED) != CUPTI_SUCCESS)
        nFail++;
    return nFail;
}

/* Enable the activity kinds; one warning line lists every kind that failed. */
static void enable_activities(void)
{
    char z[512];
    size_t i, n = 0;
    z[0] = '\0';
    for (i = 0; i < sizeof aKind / sizeof aKind[0]; i++) {
        CUptiResult r = cuptiActivityEnable(aKind[i].kind);
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
    enable_activities();
    nFail = enable_callbacks();
    if (nFail) say("%d CUPTI API callbacks could not be enabled; those calls are not recorded", nFail);
    record_glue_meta();
    if (atexit(at_exit) != 0) {
        say("tracing off: cannot register the exit handler");
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
