/* Tests of the API-call decoder: real CUDA 13 parameter structs in, exact host records out. */
#include "apicall.h"

#include <generated_nvtx_meta.h>
#include <stdarg.h>

#include "core_util.h"
#include "vramtrace/schema.h"
#include "vt_test.h"

/*
 * The decoder's environment, faked: a clock the test sets, context 0x100 + d on
 * device d, stream id = handle (+ 1000 for per-thread calls), a device with
 * 1 GiB of 80 GiB free, call site 77, and every submitted record kept in order.
 */
#define CTX0 ((CUcontext)(uintptr_t)0x100)
#define FREE_BYTES (1ull << 30)
#define TOTAL_BYTES (80ull << 30)
#define SITE 77
#define NREC 1024

static uint64_t g_now;
static int g_bActive = 1, g_bMemInfoFails, g_nSite, g_nMemInfo;
static struct vt_hrec g_aRec[NREC];
static int g_nRec;
static struct vt__apithread g_thread;

static uint64_t fake_now(void)
{
    return g_now;
}

static int fake_device(CUcontext ctx)
{
    return ctx ? (int)((uintptr_t)ctx - 0x100) : -1;
}

static uint64_t fake_stream(CUcontext ctx, const void *hStream, int perThread)
{
    return ctx ? (uint64_t)(uintptr_t)hStream + (perThread ? 1000 : 0) : 0;
}

static int fake_mem_info(uint64_t *pFree, uint64_t *pTotal)
{
    g_nMemInfo++;
    if (g_bMemInfoFails) return -1;
    *pFree = FREE_BYTES;
    *pTotal = TOTAL_BYTES;
    return 0;
}

static int64_t fake_site(void)
{
    g_nSite++;
    return SITE;
}

static int fake_active(void)
{
    return g_bActive;
}

static int fake_submit(const struct vt_hrec *rec)
{
    ASSERT(g_nRec < NREC);
    g_aRec[g_nRec++] = *rec;
    return 0;
}

/* Calls whose MEMORY2 record must follow (the takeover watch's count). */
static int g_nExpect;
static void fake_expect(void)
{
    g_nExpect++;
}

static struct vt__apicall_env g_env = {fake_now, fake_device, fake_stream, fake_mem_info, fake_site,
                                       fake_active, fake_submit, NULL, NULL, NULL, NULL, fake_expect};

/* Deliver one callback of the calling "thread" g_thread at time `now`. */
static void cb(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
               const void *params, int *pStatus, uint32_t corr, uint64_t *pCorrData, uint64_t now)
{
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = site;
    d.functionName = "test";
    d.functionParams = params;
    d.functionReturnValue = pStatus;
    d.context = CTX0;
    d.correlationData = pCorrData;
    d.correlationId = corr;
    g_now = now;
    vt__apicall_callback(&g_env, &g_thread, dom, cbid, &d);
}

/* A whole call: enter at t, exit at t + 5 with the given status. */
static void call(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *params, int status,
                 uint32_t corr, uint64_t t)
{
    uint64_t corrData = 0;
    cb(dom, cbid, CUPTI_API_ENTER, params, &status, corr, &corrData, t);
    cb(dom, cbid, CUPTI_API_EXIT, params, &status, corr, &corrData, t + 5);
}

#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API
#define RTID(name) CUPTI_RUNTIME_TRACE_CBID_##name
#define DRVID(name) CUPTI_DRIVER_TRACE_CBID_##name

/* One record as text: every field of its type, the thread as T when it is this thread. */
static void rec_text(const struct vt_hrec *r, char *z, size_t n)
{
    int64_t tid = (int64_t)gettid();
    switch (r->type) {
    case VT_HREC_API_CALL:
        snprintf(z, n, "api %d corr %u %llu-%llu %s dev %d st %d bytes %llu ptr %#llx src %#llx dst %#llx"
                       " stream %llu stack %lld",
                 r->u.api.api, r->u.api.correlation, (unsigned long long)r->u.api.start,
                 (unsigned long long)r->u.api.end, r->u.api.thread == tid ? "T" : "other",
                 r->u.api.device, r->u.api.status, (unsigned long long)r->u.api.bytes,
                 (unsigned long long)r->u.api.ptr, (unsigned long long)r->u.api.src,
                 (unsigned long long)r->u.api.dst, (unsigned long long)r->u.api.stream,
                 (long long)r->u.api.stack_id);
        if (r->u.api.scan) /* a kernel launch: 1 arguments not scanned, 2 scanned */
            snprintf(z + strlen(z), n - strlen(z), " scan %d", r->u.api.scan);
        break;
    case VT_HREC_OOM:
        snprintf(z, n, "oom %llu api %d corr %u dev %d st %d bytes %llu free %llu total %llu %s stack %lld",
                 (unsigned long long)r->u.oom.ts, r->u.oom.api, r->u.oom.correlation, r->u.oom.device,
                 r->u.oom.status, (unsigned long long)r->u.oom.bytes,
                 (unsigned long long)r->u.oom.free_bytes, (unsigned long long)r->u.oom.total_bytes,
                 r->u.oom.thread == tid ? "T" : "other", (long long)r->u.oom.stack_id);
        break;
    case VT_HREC_MEMORY:
        snprintf(z, n, "mem %llu op %d kind %d addr %#llx bytes %llu dev %d corr %u api %d handle %#llx %s"
                       " stack %lld",
                 (unsigned long long)r->u.mem.ts, r->u.mem.op, r->u.mem.mem_kind,
                 (unsigned long long)r->u.mem.address, (unsigned long long)r->u.mem.bytes,
                 r->u.mem.device, r->u.mem.correlation, r->u.mem.api,
                 (unsigned long long)r->u.mem.handle, r->u.mem.thread == tid ? "T" : "other",
                 (long long)r->u.mem.stack_id);
        break;
    case VT_HREC_BUFFER_USE:
        snprintf(z, n, "use corr %u kind %d addr %#llx ts %llu dev %d", r->u.use.correlation,
                 r->u.use.kind, (unsigned long long)r->u.use.address, (unsigned long long)r->u.use.ts,
                 r->u.use.device);
        break;
    case VT_HREC_DROPPED:
        snprintf(z, n, "dropped %llu source %d count %llu (%s)", (unsigned long long)r->u.dropped.ts,
                 r->u.dropped.source, (unsigned long long)r->u.dropped.count, r->u.dropped.zWhat);
        break;
    default:
        snprintf(z, n, "record type %d", r->type);
        break;
    }
}

/* The records submitted since the last call, one per line; then forget them. */
static const char *take(void)
{
    static char zOut[1 << 16];
    size_t k = 0;
    int i;
    zOut[0] = '\0';
    for (i = 0; i < g_nRec && k < sizeof zOut; i++) {
        rec_text(&g_aRec[i], zOut + k, sizeof zOut - k);
        k += strlen(zOut + k);
        if (k + 1 < sizeof zOut) zOut[k++] = '\n', zOut[k] = '\0';
    }
    g_nRec = 0;
    return zOut;
}

/* Expected lines, joined. */
static const char *lines(const char *zFirst, ...)
{
    static char zOut[1 << 16];
    size_t k = 0;
    va_list ap;
    const char *z;
    va_start(ap, zFirst);
    for (z = zFirst; z; z = va_arg(ap, const char *))
        k += (size_t)snprintf(zOut + k, sizeof zOut - k, "%s\n", z);
    va_end(ap);
    return zOut;
}

/* Each test starts with a fresh index and scanner where it needs them. */
static void setup_scan(vt__param_info_fn xFunc, vt__param_info_fn xKernel, vt__param_info_fn xStub)
{
    struct vt__kparams_config kc;
    memset(&kc, 0, sizeof kc);
    g_env.ivl = vt__ivl_open();
    ASSERT(g_env.ivl != NULL);
    kc.xFuncParamInfo = xFunc;
    kc.xKernelParamInfo = xKernel;
    kc.xStubParamInfo = xStub;
    kc.ivl = g_env.ivl;
    g_env.kp = vt__kparams_open(&kc);
    ASSERT(g_env.kp != NULL);
}

/* End of a test: free the index and scanner, and no byte may be left allocated. */
static void done(void)
{
    vt__kparams_close(g_env.kp);
    vt__ivl_close(g_env.ivl);
    g_env.kp = NULL;
    g_env.ivl = NULL;
    CORE_LEAK_CHECK();
}

/* Kernel 0x1234 takes (pointer, int, pointer, struct of 16 bytes); nothing else is known. */
static int fake_func_info(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    static const size_t aOff[] = {0, 8, 16, 24}, aSize[] = {8, 4, 8, 16};
    if ((uintptr_t)h != 0x1234 || i >= 4) return -1;
    *pOff = aOff[i];
    *pSize = aSize[i];
    return 0;
}

/*
 * Kernel 0x5000 (a CUkernel, as __cudaGetKernel returns it) and the host stub
 * 0x401000 take (pointer, int): the first known to the kernel query, the second
 * to the runtime's (cudaFuncGetParamInfo).
 */
static int fake_kernel_info(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    static const size_t aSize[] = {8, 4};
    if ((uintptr_t)h != 0x5000 || i >= 2) return -1;
    *pOff = i * 8;
    *pSize = aSize[i];
    return 0;
}

static int fake_stub_info(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    static const size_t aSize[] = {8, 4};
    if ((uintptr_t)h != 0x401000 || i >= 2) return -1;
    *pOff = i * 8;
    *pSize = aSize[i];
    return 0;
}

TEST(tables_traced_ids_unique_and_named)
{
    static const CUpti_CallbackDomain aDom[] = {RT, DRV};
    size_t d, i, j, n;
    for (d = 0; d < 2; d++) {
        const struct vt__api *a = vt__api_table(aDom[d], &n);
        ASSERT(a != NULL && n > 20);
        for (i = 0; i < n; i++) {
            const char *zName = NULL;
            switch (a[i].api) {
#define NAME_CASE(id, name, family) \
    case id:                        \
        zName = name;               \
        break;
                VT_API_LIST(NAME_CASE)
#undef NAME_CASE
            }
            if (!zName) VT__FAIL("cbid %u: api %d is not in VT_API_LIST", a[i].cbid, a[i].api);
            ASSERT(vt__api_find(aDom[d], a[i].cbid) == &a[i]);
            for (j = i + 1; j < n; j++)
                if (a[i].cbid == a[j].cbid) VT__FAIL("cbid %u listed twice", a[i].cbid);
        }
    }
    ASSERT(vt__api_table(CUPTI_CB_DOMAIN_RESOURCE, &n) == NULL && n == 0);
    ASSERT(vt__api_find(RT, RTID(cudaGetDevice_v3020)) == NULL);
    done();
}

/* cudaMalloc: one api_call (start at enter, end at exit, site); the nested cuMemAlloc is not recorded. */
TEST(malloc_and_free)
{
    void *pDev = NULL;
    CUdeviceptr dptr = 0;
    cudaMalloc_v3020_params rp = {&pDev, 1 << 20};
    cuMemAlloc_v2_params dp = {&dptr, 1 << 20};
    cudaFree_v3020_params fp = {(void *)(uintptr_t)0x7000000};
    uint64_t corrData = 0, base = 0;
    int st = 0;
    setup_scan(fake_func_info, NULL, NULL);

    cb(RT, RTID(cudaMalloc_v3020), CUPTI_API_ENTER, &rp, &st, 10, &corrData, 1000);
    call(DRV, DRVID(cuMemAlloc_v2), &dp, 0, 11, 1001);
    pDev = (void *)(uintptr_t)0x7000000;
    cb(RT, RTID(cudaMalloc_v3020), CUPTI_API_EXIT, &rp, &st, 10, &corrData, 1020);
    ASSERT_STREQ(lines("api 1 corr 10 1000-1020 T dev 0 st 0 bytes 1048576 ptr 0x7000000 src 0 dst 0"
                       " stream 0 stack 77",
                       NULL),
                 take());
    ASSERT_EQ(0, g_thread.depth);
    ASSERT_EQ(1, vt__ivl_find(g_env.ivl, 0x70fffff, &base, NULL));
    ASSERT_EQ(0x7000000, base);

    call(RT, RTID(cudaFree_v3020), &fp, 0, 12, 2000);
    ASSERT_STREQ(lines("api 2 corr 12 2000-2005 T dev 0 st 0 bytes 0 ptr 0x7000000 src 0 dst 0"
                       " stream 0 stack 77",
                       NULL),
                 take());
    ASSERT_EQ(0, vt__ivl_find(g_env.ivl, 0x7000000, NULL, NULL));
    ASSERT_EQ(0, g_nMemInfo);
    /* the malloc and the free bring a MEMORY2 record each (the nested cuMemAlloc is not counted) */
    ASSERT_EQ(2, g_nExpect);
    done();
}

/* A failed allocation: api_call without pointer, and the OOM row with free/total then. */
TEST(failed_allocations_are_oom)
{
    void *p = (void *)(uintptr_t)0xdead; /* not written by a failed call: never read */
    cudaMalloc_v3020_params rp = {&p, (size_t)1 << 40};
    cudaMallocAsync_v11020_params ap = {&p, 4096, (cudaStream_t)(uintptr_t)7};
    CUdeviceptr d = 0;
    cuMemAllocFromPoolAsync_params pp = {&d, 8192, NULL, (CUstream)(uintptr_t)9};
    call(RT, RTID(cudaMalloc_v3020), &rp, cudaErrorMemoryAllocation, 20, 100);
    call(RT, RTID(cudaMallocAsync_ptsz_v11020), &ap, cudaErrorMemoryAllocation, 21, 200);
    g_bMemInfoFails = 1;
    call(DRV, DRVID(cuMemAllocFromPoolAsync), &pp, CUDA_ERROR_OUT_OF_MEMORY, 22, 300);
    /* failures that are not out of memory: failed calls, no OOM */
    g_bMemInfoFails = 0;
    call(RT, RTID(cudaMalloc_v3020), &rp, cudaErrorInvalidValue, 23, 400);
    call(DRV, DRVID(cuMemAllocFromPoolAsync), &pp, CUDA_ERROR_NOT_INITIALIZED, 24, 500);
    call(RT, RTID(cudaMallocAsync_v11020), &ap, cudaErrorLaunchFailure, 25, 600);
    ASSERT_STREQ(lines("api 1 corr 20 100-105 T dev 0 st 2 bytes 1099511627776 ptr 0 src 0 dst 0 stream 0 stack 77",
                       "oom 105 api 1 corr 20 dev 0 st 2 bytes 1099511627776 free 1073741824"
                       " total 85899345920 T stack 77",
                       "api 3 corr 21 200-205 T dev 0 st 2 bytes 4096 ptr 0 src 0 dst 0 stream 1007 stack 77",
                       "oom 205 api 3 corr 21 dev 0 st 2 bytes 4096 free 1073741824 total 85899345920 T"
                       " stack 77",
                       "api 24 corr 22 300-305 T dev 0 st 2 bytes 8192 ptr 0 src 0 dst 0 stream 9 stack 77",
                       "oom 305 api 24 corr 22 dev 0 st 2 bytes 8192 free 0 total 0 T stack 77",
                       "api 1 corr 23 400-405 T dev 0 st 1 bytes 1099511627776 ptr 0 src 0 dst 0 stream 0 stack 77",
                       "api 24 corr 24 500-505 T dev 0 st 3 bytes 8192 ptr 0 src 0 dst 0 stream 9 stack 77",
                       "api 3 corr 25 600-605 T dev 0 st 719 bytes 4096 ptr 0 src 0 dst 0 stream 7 stack 77",
                       NULL),
                 take());
    done();
}

/* Pitched allocations record pitch x height (x depth); a host registration is an allocation too. */
TEST(pitched_and_host_allocations)
{
    void *p = NULL;
    size_t pitch = 0;
    size_t cuPitch = 0;
    CUdeviceptr d = 0;
    struct cudaPitchedPtr pp;
    struct cudaExtent ext = {100, 10, 3};
    cudaMallocPitch_v3020_params mp = {&p, &pitch, 100, 10};
    cudaMalloc3D_v3020_params m3 = {&pp, ext};
    cuMemAllocPitch_v2_params cp = {&d, &cuPitch, 100, 10, 4};
    cudaHostRegister_v4000_params hr = {(void *)(uintptr_t)0x7f0000001000, 65536, 0};
    cuMemHostAlloc_params ha = {&p, 4096, 0};
    int st = 0;
    uint64_t corrData = 0;

    cb(RT, RTID(cudaMallocPitch_v3020), CUPTI_API_ENTER, &mp, &st, 30, &corrData, 10);
    p = (void *)(uintptr_t)0x8000000;
    pitch = 512;
    cb(RT, RTID(cudaMallocPitch_v3020), CUPTI_API_EXIT, &mp, &st, 30, &corrData, 15);
    memset(&pp, 0, sizeof pp);
    cb(RT, RTID(cudaMalloc3D_v3020), CUPTI_API_ENTER, &m3, &st, 31, &corrData, 20);
    pp.ptr = (void *)(uintptr_t)0x8100000;
    pp.pitch = 128;
    cb(RT, RTID(cudaMalloc3D_v3020), CUPTI_API_EXIT, &m3, &st, 31, &corrData, 25);
    cb(DRV, DRVID(cuMemAllocPitch_v2), CUPTI_API_ENTER, &cp, &st, 32, &corrData, 30);
    d = 0x8200000;
    cuPitch = 1024;
    cb(DRV, DRVID(cuMemAllocPitch_v2), CUPTI_API_EXIT, &cp, &st, 32, &corrData, 35);
    g_nExpect = 0;
    call(RT, RTID(cudaHostRegister_v4000), &hr, 0, 33, 40);
    ASSERT_EQ(0, g_nExpect); /* a host registration allocates nothing */
    p = (void *)(uintptr_t)0x7f0000100000;
    call(DRV, DRVID(cuMemHostAlloc), &ha, 0, 34, 50);
    ASSERT_STREQ(lines("api 10 corr 30 10-15 T dev 0 st 0 bytes 5120 ptr 0x8000000 src 0 dst 0 stream 0 stack 77",
                       "api 11 corr 31 20-25 T dev 0 st 0 bytes 3840 ptr 0x8100000 src 0 dst 0 stream 0 stack 77",
                       "api 29 corr 32 30-35 T dev 0 st 0 bytes 10240 ptr 0x8200000 src 0 dst 0 stream 0 stack 77",
                       "api 12 corr 33 40-45 T dev 0 st 0 bytes 65536 ptr 0x7f0000001000 src 0 dst 0 stream 0"
                       " stack 77",
                       "api 26 corr 34 50-55 T dev 0 st 0 bytes 4096 ptr 0x7f0000100000 src 0 dst 0 stream 0"
                       " stack 77",
                       NULL),
                 take());
    done();
}

/* Expandable segments: create, map, unmap, release write memory_event rows; a failed create is an OOM. */
TEST(vmm_calls)
{
    CUmemGenericAllocationHandle h = 0;
    CUmemAllocationProp prop;
    cuMemCreate_params cp = {&h, 2 << 20, &prop, 0};
    cuMemMap_params mp = {0x9000000, 2 << 20, 0, 0xabc, 0};
    cuMemUnmap_params up = {0x9000000, 2 << 20};
    cuMemRelease_params rp = {0xabc};
    cuMemCreate_params big = {&h, (size_t)64 << 30, &prop, 0};
    CUdeviceptr va = 0;
    cuMemAddressReserve_params rv = {&va, 4 << 20, 0, 0, 0};
    int st = 0;
    uint64_t corrData = 0;
    setup_scan(NULL, NULL, NULL);
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 3;

    cb(DRV, DRVID(cuMemCreate), CUPTI_API_ENTER, &cp, &st, 40, &corrData, 10);
    h = 0xabc;
    cb(DRV, DRVID(cuMemCreate), CUPTI_API_EXIT, &cp, &st, 40, &corrData, 15);
    cb(DRV, DRVID(cuMemAddressReserve), CUPTI_API_ENTER, &rv, &st, 41, &corrData, 20);
    va = 0x9000000;
    cb(DRV, DRVID(cuMemAddressReserve), CUPTI_API_EXIT, &rv, &st, 41, &corrData, 25);
    call(DRV, DRVID(cuMemMap), &mp, 0, 42, 30);
    ASSERT_EQ(1, vt__ivl_find(g_env.ivl, 0x91fffff, NULL, NULL));
    call(DRV, DRVID(cuMemUnmap), &up, 0, 43, 40);
    ASSERT_EQ(0, vt__ivl_find(g_env.ivl, 0x9000000, NULL, NULL));
    call(DRV, DRVID(cuMemRelease), &rp, 0, 44, 50);
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST; /* host memory: pinned, on no device */
    call(DRV, DRVID(cuMemCreate), &big, CUDA_ERROR_OUT_OF_MEMORY, 45, 60);
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    prop.location.id = 1; /* a NUMA node, not a device */
    h = 0xdef;
    call(DRV, DRVID(cuMemCreate), &cp, 0, 46, 70);
    ASSERT_STREQ(lines("api 40 corr 40 10-15 T dev 0 st 0 bytes 2097152 ptr 0xabc src 0 dst 0 stream 0 stack 77",
                       "mem 15 op 3 kind 3 addr 0xabc bytes 2097152 dev 3 corr 40 api 40 handle 0xabc T stack 77",
                       "api 44 corr 41 20-25 T dev 0 st 0 bytes 4194304 ptr 0x9000000 src 0 dst 0 stream 0 stack 77",
                       "api 42 corr 42 30-35 T dev 0 st 0 bytes 2097152 ptr 0x9000000 src 0 dst 0 stream 0 stack 77",
                       "mem 35 op 5 kind 3 addr 0x9000000 bytes 2097152 dev 0 corr 42 api 42 handle 0xabc T"
                       " stack 77",
                       "api 43 corr 43 40-45 T dev 0 st 0 bytes 2097152 ptr 0x9000000 src 0 dst 0 stream 0 stack 77",
                       "mem 45 op 6 kind 3 addr 0x9000000 bytes 2097152 dev 0 corr 43 api 43 handle 0 T stack 77",
                       "api 41 corr 44 50-55 T dev 0 st 0 bytes 0 ptr 0xabc src 0 dst 0 stream 0 stack 77",
                       "mem 55 op 4 kind 3 addr 0xabc bytes 0 dev 0 corr 44 api 41 handle 0xabc T stack 77",
                       "api 40 corr 45 60-65 T dev 0 st 2 bytes 68719476736 ptr 0 src 0 dst 0 stream 0 stack 77",
                       "oom 65 api 40 corr 45 dev 0 st 2 bytes 68719476736 free 1073741824 total 85899345920 T"
                       " stack 77",
                       "api 40 corr 46 70-75 T dev 0 st 0 bytes 2097152 ptr 0xdef src 0 dst 0 stream 0 stack 77",
                       "mem 75 op 3 kind 2 addr 0xdef bytes 2097152 dev -1 corr 46 api 40 handle 0xdef T stack 77",
                       NULL),
                 take());
    done();
}

/* cuMemCreate outside any context takes its device from the allocation's location. */
TEST(vmm_device_from_location)
{
    CUmemGenericAllocationHandle h = 0x77;
    CUmemAllocationProp prop;
    cuMemCreate_params cp = {&h, 4096, &prop, 0};
    int st = 0;
    CUpti_CallbackData d;
    memset(&prop, 0, sizeof prop);
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 5;
    memset(&d, 0, sizeof d);
    d.functionParams = &cp;
    d.functionReturnValue = &st;
    d.correlationId = 50;
    d.callbackSite = CUPTI_API_ENTER;
    g_now = 70;
    vt__apicall_callback(&g_env, &g_thread, DRV, DRVID(cuMemCreate), &d);
    d.callbackSite = CUPTI_API_EXIT;
    g_now = 75;
    vt__apicall_callback(&g_env, &g_thread, DRV, DRVID(cuMemCreate), &d);
    ASSERT_STREQ(lines("api 40 corr 50 75-75 T dev 5 st 0 bytes 4096 ptr 0x77 src 0 dst 0 stream 0 stack 77",
                       "mem 75 op 3 kind 3 addr 0x77 bytes 4096 dev 5 corr 50 api 40 handle 0x77 T stack 77",
                       NULL),
                 take());
    done();
}

/* The driver's answers for imports: the IPC mapping at 0x30000000 spans 16 MiB; handle 0xb2 is on device 1. */
static int fake_address_range(uint64_t ptr, uint64_t *pBase, uint64_t *pSize)
{
    if (ptr < 0x30000000 || ptr >= 0x31000000) return -1;
    *pBase = 0x30000000;
    *pSize = 16u << 20;
    return 0;
}

static int fake_handle_location(uint64_t handle, int *pKind, int *pDevice)
{
    if (handle != 0xb2) return -1;
    *pKind = VT_MEMKIND_DEVICE;
    *pDevice = 1;
    return 0;
}

/*
 * Memory owned elsewhere or shared is recorded as what it is: IPC opens and
 * closes, shareable-handle imports (import / import_close rows, bytes from the
 * driver when it can tell), access grants and multicast objects (api_call rows
 * only); imported ranges are live for kernel-argument scans.
 */
TEST(imports_and_sharing)
{
    void *p = NULL;
    CUdeviceptr d = 0;
    CUmemGenericAllocationHandle h = 0, mc = 0;
    cudaIpcMemHandle_t rh;
    CUipcMemHandle dh;
    cudaIpcOpenMemHandle_v4010_params ro;
    cudaIpcCloseMemHandle_v4010_params rc = {(void *)(uintptr_t)0x30000000};
    cuIpcOpenMemHandle_v2_params dop;
    cuIpcCloseMemHandle_params dc = {0x50000000};
    cuMemImportFromShareableHandle_params ip = {&h, (void *)(uintptr_t)7, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR};
    CUmemAccessDesc acc;
    cuMemSetAccess_params sa = {0x9000000, 2 << 20, &acc, 1};
    CUmulticastObjectProp mprop;
    cuMulticastCreate_params mcp = {&mc, &mprop};
    cuMulticastAddDevice_params mad = {0xc3, 1};
    cuMulticastBindMem_params mbm = {0xc3, 0, 0xabc, 0, 2 << 20, 0};
    cuMulticastBindAddr_params mba = {0xc3, 2 << 20, 0x9000000, 2 << 20, 0};
    cuMulticastUnbind_params mub = {0xc3, 1, 0, 4 << 20};
    int st = 0;
    uint64_t corrData = 0;
    setup_scan(NULL, NULL, NULL);
    g_env.xAddressRange = fake_address_range;
    g_env.xHandleLocation = fake_handle_location;
    memset(&rh, 0, sizeof rh);
    memset(&dh, 0, sizeof dh);
    memset(&acc, 0, sizeof acc);
    memset(&mprop, 0, sizeof mprop);
    mprop.numDevices = 2;
    mprop.size = 4 << 20;
    ro.devPtr = &p;
    ro.handle = rh;
    ro.flags = cudaIpcMemLazyEnablePeerAccess;
    dop.pdptr = &d;
    dop.handle = dh;
    dop.Flags = 0;

    cb(RT, RTID(cudaIpcOpenMemHandle_v4010), CUPTI_API_ENTER, &ro, &st, 60, &corrData, 10);
    p = (void *)(uintptr_t)0x30000000;
    cb(RT, RTID(cudaIpcOpenMemHandle_v4010), CUPTI_API_EXIT, &ro, &st, 60, &corrData, 15);
    ASSERT_EQ(1, vt__ivl_find(g_env.ivl, 0x30ffffff, NULL, NULL));
    call(RT, RTID(cudaIpcCloseMemHandle_v4010), &rc, 0, 61, 20);
    ASSERT_EQ(0, vt__ivl_find(g_env.ivl, 0x30000000, NULL, NULL));
    /* a driver IPC open the driver cannot size: bytes unknown, not made live */
    cb(DRV, DRVID(cuIpcOpenMemHandle_v2), CUPTI_API_ENTER, &dop, &st, 62, &corrData, 30);
    d = 0x50000000;
    cb(DRV, DRVID(cuIpcOpenMemHandle_v2), CUPTI_API_EXIT, &dop, &st, 62, &corrData, 35);
    ASSERT_EQ(0, vt__ivl_find(g_env.ivl, 0x50000000, NULL, NULL));
    call(DRV, DRVID(cuIpcCloseMemHandle), &dc, 0, 63, 40);
    cb(DRV, DRVID(cuMemImportFromShareableHandle), CUPTI_API_ENTER, &ip, &st, 64, &corrData, 50);
    h = 0xb2;
    cb(DRV, DRVID(cuMemImportFromShareableHandle), CUPTI_API_EXIT, &ip, &st, 64, &corrData, 55);
    call(DRV, DRVID(cuMemSetAccess), &sa, 0, 65, 60);
    cb(DRV, DRVID(cuMulticastCreate), CUPTI_API_ENTER, &mcp, &st, 66, &corrData, 70);
    mc = 0xc3;
    cb(DRV, DRVID(cuMulticastCreate), CUPTI_API_EXIT, &mcp, &st, 66, &corrData, 75);
    call(DRV, DRVID(cuMulticastAddDevice), &mad, 0, 67, 80);
    call(DRV, DRVID(cuMulticastBindMem), &mbm, 0, 68, 90);
    call(DRV, DRVID(cuMulticastBindAddr), &mba, 0, 69, 100);
    call(DRV, DRVID(cuMulticastUnbind), &mub, 0, 70, 110);
    /* a failed IPC open: the row, nothing imported */
    call(RT, RTID(cudaIpcOpenMemHandle_v4010), &ro, cudaErrorInvalidValue, 71, 120);
    g_env.xAddressRange = NULL;
    g_env.xHandleLocation = NULL;
    ASSERT_STREQ(lines("api 14 corr 60 10-15 T dev 0 st 0 bytes 16777216 ptr 0x30000000 src 0 dst 0 stream 0 stack 77",
                       "mem 15 op 7 kind 3 addr 0x30000000 bytes 16777216 dev 0 corr 60 api 14 handle 0 T stack 77",
                       "api 15 corr 61 20-25 T dev 0 st 0 bytes 0 ptr 0x30000000 src 0 dst 0 stream 0 stack 77",
                       "mem 25 op 8 kind 3 addr 0x30000000 bytes 0 dev 0 corr 61 api 15 handle 0 T stack 77",
                       "api 53 corr 62 30-35 T dev 0 st 0 bytes 0 ptr 0x50000000 src 0 dst 0 stream 0 stack 77",
                       "mem 35 op 7 kind 3 addr 0x50000000 bytes 0 dev 0 corr 62 api 53 handle 0 T stack 77",
                       "api 54 corr 63 40-45 T dev 0 st 0 bytes 0 ptr 0x50000000 src 0 dst 0 stream 0 stack 77",
                       "mem 45 op 8 kind 3 addr 0x50000000 bytes 0 dev 0 corr 63 api 54 handle 0 T stack 77",
                       "api 47 corr 64 50-55 T dev 0 st 0 bytes 0 ptr 0xb2 src 0 dst 0 stream 0 stack 77",
                       "mem 55 op 7 kind 3 addr 0xb2 bytes 0 dev 1 corr 64 api 47 handle 0xb2 T stack 77",
                       "api 46 corr 65 60-65 T dev 0 st 0 bytes 2097152 ptr 0x9000000 src 0 dst 0 stream 0 stack 77",
                       "api 48 corr 66 70-75 T dev 0 st 0 bytes 4194304 ptr 0xc3 src 0 dst 0 stream 0 stack 77",
                       "api 49 corr 67 80-85 T dev 0 st 0 bytes 0 ptr 0xc3 src 0 dst 0 stream 0 stack 77",
                       "api 50 corr 68 90-95 T dev 0 st 0 bytes 2097152 ptr 0xc3 src 0xabc dst 0 stream 0 stack 77",
                       "api 51 corr 69 100-105 T dev 0 st 0 bytes 2097152 ptr 0xc3 src 0x9000000 dst 0 stream 0"
                       " stack 77",
                       "api 52 corr 70 110-115 T dev 0 st 0 bytes 4194304 ptr 0xc3 src 0 dst 0 stream 0 stack 77",
                       "api 14 corr 71 120-125 T dev 0 st 1 bytes 0 ptr 0 src 0 dst 0 stream 0 stack 77",
                       NULL),
                 take());
    done();
}

/* Addresses the copy and set tests use: two allocations, host memory, an array, a symbol. */
#define D1 0x7000000ull
#define D2 0x9000000ull
#define HOST 0x7f0000001000ull
#define PTR(a) ((void *)(uintptr_t)(a))
#define ARR ((cudaArray_t)(uintptr_t)0xa000)
#define CUARR ((CUarray)(uintptr_t)0xa000)
#define SYM ((const void *)(uintptr_t)0x601000)

/* The api_call line of a successful copy or set at [t, t + 5] (this thread, device 0, site 77). */
static const char *A(int api, unsigned corr, unsigned long long t, unsigned long long bytes,
                     unsigned long long src, unsigned long long dst, unsigned long long stream)
{
    static char az[16][200];
    static int i;
    char *z = az[i++ % 16];
    snprintf(z, 200, "api %d corr %u %llu-%llu T dev 0 st 0 bytes %llu ptr 0 src %#llx dst %#llx stream %llu"
                     " stack 77",
             api, corr, t, t + 5, bytes, src, dst, stream);
    return z;
}

/* A buffer_use line on device 0. */
static const char *U(unsigned corr, int kind, unsigned long long addr, unsigned long long ts)
{
    static char az[32][100];
    static int i;
    char *z = az[i++ % 32];
    snprintf(z, 100, "use corr %u kind %d addr %#llx ts %llu dev 0", corr, kind, addr, ts);
    return z;
}

#define SRC VT_USE_MEMCPY_SRC
#define DST VT_USE_MEMCPY_DST

/* Copies and sets: addresses, bytes and stream from each shape's own parameter struct. */
TEST(copies_and_sets)
{
    cudaMemcpy_v3020_params c1 = {PTR(D1), PTR(HOST), 64, cudaMemcpyHostToDevice};
    cudaMemcpy2DAsync_v3020_params c2 = {PTR(D1), 256, PTR(0x7100000), 512, 64, 4, cudaMemcpyDeviceToDevice,
                                         (cudaStream_t)(uintptr_t)3};
    cudaMemcpyPeerAsync_v4000_params c3 = {PTR(D1), 1, PTR(D2), 0, 128, (cudaStream_t)(uintptr_t)4};
    cuMemcpyDtoHAsync_v2_params c4 = {PTR(HOST), 0x7000010, 32, (CUstream)(uintptr_t)5};
    cudaMemsetAsync_v3020_params s1 = {PTR(0x7000100), 0, 256, (cudaStream_t)(uintptr_t)7};
    cuMemsetD32_v2_params s2 = {0x7000200, 0xffffffffu, 16};
    call(RT, RTID(cudaMemcpy_v3020), &c1, 0, 60, 10);
    call(RT, RTID(cudaMemcpy2DAsync_ptsz_v7000), &c2, 0, 61, 20);
    call(RT, RTID(cudaMemcpyPeerAsync_v4000), &c3, 0, 62, 30);
    call(DRV, DRVID(cuMemcpyDtoHAsync_v2), &c4, 0, 63, 40);
    call(RT, RTID(cudaMemsetAsync_ptsz_v7000), &s1, 0, 64, 50);
    call(DRV, DRVID(cuMemsetD32_v2_ptds), &s2, 0, 65, 60);
    /* a failed copy used nothing */
    call(RT, RTID(cudaMemcpy_v3020), &c1, cudaErrorInvalidValue, 66, 70);
    ASSERT_STREQ(lines(A(60, 60, 10, 64, HOST, D1, 0), U(60, SRC, HOST, 15), U(60, DST, D1, 15),
                       A(63, 61, 20, 256, 0x7100000, D1, 1003), U(61, SRC, 0x7100000, 25), U(61, DST, D1, 25),
                       A(65, 62, 30, 128, D2, D1, 4), U(62, SRC, D2, 35), U(62, DST, D1, 35),
                       A(71, 63, 40, 32, 0x7000010, HOST, 5), U(63, SRC, 0x7000010, 45), U(63, DST, HOST, 45),
                       A(81, 64, 50, 256, 0, 0x7000100, 1007), U(64, VT_USE_MEMSET, 0x7000100, 55),
                       A(84, 65, 60, 64, 0, 0x7000200, 0), U(65, VT_USE_MEMSET, 0x7000200, 65),
                       "api 60 corr 66 70-75 T dev 0 st 1 bytes 64 ptr 0 src 0x7f0000001000 dst 0x7000000"
                       " stream 0 stack 77",
                       NULL),
                 take());
    done();
}

/* Runtime copies to and from arrays and symbols: only the side that is an address is a use. */
TEST(runtime_copies_arrays_symbols)
{
    cudaMemcpyToArray_v3020_params a1 = {ARR, 0, 0, PTR(HOST), 128, cudaMemcpyHostToDevice};
    cudaMemcpyFromArrayAsync_ptsz_v7000_params a2 = {PTR(D1), ARR, 0, 0, 128, cudaMemcpyDeviceToDevice,
                                                     (cudaStream_t)(uintptr_t)4};
    cudaMemcpyArrayToArray_v3020_params a3 = {ARR, 0, 0, ARR, 8, 0, 64, cudaMemcpyDeviceToDevice};
    cudaMemcpy2DToArray_v3020_params a4 = {ARR, 0, 0, PTR(HOST), 64, 16, 8, cudaMemcpyHostToDevice};
    cudaMemcpy2DFromArrayAsync_v3020_params a5 = {PTR(D1), 64, ARR, 0, 0, 16, 2, cudaMemcpyDeviceToDevice,
                                                  (cudaStream_t)(uintptr_t)5};
    cudaMemcpy2DArrayToArray_ptds_v7000_params a6 = {ARR, 0, 0, ARR, 4, 4, 4, 4, cudaMemcpyDeviceToDevice};
    cudaMemcpyToSymbolAsync_v3020_params y1 = {SYM, PTR(HOST), 32, 0, cudaMemcpyHostToDevice,
                                               (cudaStream_t)(uintptr_t)6};
    cudaMemcpyFromSymbol_ptds_v7000_params y2 = {PTR(HOST), SYM, 32, 8, cudaMemcpyDeviceToHost};
    call(RT, RTID(cudaMemcpyToArray_v3020), &a1, 0, 200, 10);
    call(RT, RTID(cudaMemcpyFromArrayAsync_ptsz_v7000), &a2, 0, 201, 20);
    call(RT, RTID(cudaMemcpyArrayToArray_v3020), &a3, 0, 202, 30);
    call(RT, RTID(cudaMemcpy2DToArray_v3020), &a4, 0, 203, 40);
    call(RT, RTID(cudaMemcpy2DFromArrayAsync_v3020), &a5, 0, 204, 50);
    call(RT, RTID(cudaMemcpy2DArrayToArray_ptds_v7000), &a6, 0, 205, 60);
    call(RT, RTID(cudaMemcpyToSymbolAsync_v3020), &y1, 0, 206, 70);
    call(RT, RTID(cudaMemcpyFromSymbol_ptds_v7000), &y2, 0, 207, 80);
    ASSERT_STREQ(lines(A(140, 200, 10, 128, HOST, 0, 0), U(200, SRC, HOST, 15),
                       A(143, 201, 20, 128, 0, D1, 1004), U(201, DST, D1, 25),
                       A(144, 202, 30, 64, 0, 0, 0),
                       A(145, 203, 40, 128, HOST, 0, 0), U(203, SRC, HOST, 45),
                       A(148, 204, 50, 32, 0, D1, 5), U(204, DST, D1, 55),
                       A(149, 205, 60, 16, 0, 0, 0),
                       A(151, 206, 70, 32, HOST, 0, 6), U(206, SRC, HOST, 75),
                       A(152, 207, 80, 32, 0, HOST, 0), U(207, DST, HOST, 85), NULL),
                 take());
    done();
}

/* Runtime 3D copies (base addresses; bytes unknown when an array takes part) and batches. */
TEST(runtime_3d_and_batch_copies)
{
    struct cudaMemcpy3DParms p1, p2;
    struct cudaMemcpy3DPeerParms pp;
    cudaMemcpy3D_v3020_params c1 = {&p1};
    cudaMemcpy3DAsync_ptsz_v7000_params c2 = {&p2, (cudaStream_t)(uintptr_t)7};
    cudaMemcpy3DPeerAsync_v4000_params c3 = {&pp, (cudaStream_t)(uintptr_t)8};
    void *aDst[2] = {PTR(D2), PTR(HOST)};
    const void *aSrc[2] = {PTR(HOST), PTR(D1 + 0x40)};
    size_t aSize[2] = {100, 200};
    size_t failIdx = 0;
    cudaMemcpyBatchAsync_v13000_params b1 = {aDst, aSrc, aSize, 2, NULL, NULL, 0, (cudaStream_t)(uintptr_t)9};
    cudaMemcpyBatchAsync_ptsz_v13000_params b2 = {aDst, aSrc, aSize, 1, NULL, NULL, 0, NULL};
    struct cudaMemcpy3DBatchOp aOp[2];
    cudaMemcpy3DBatchAsync_v13000_params b3 = {2, aOp, 0, (cudaStream_t)(uintptr_t)2};
    char opaque[64];
    memset(&p1, 0, sizeof p1);
    p1.srcPtr.ptr = PTR(D1);
    p1.dstPtr.ptr = PTR(HOST);
    p1.extent = (struct cudaExtent){64, 4, 2};
    memset(&p2, 0, sizeof p2);
    p2.srcArray = ARR;
    p2.dstPtr.ptr = PTR(D2);
    p2.extent = (struct cudaExtent){16, 4, 1};
    memset(&pp, 0, sizeof pp);
    pp.srcPtr.ptr = PTR(D1);
    pp.dstPtr.ptr = PTR(D2);
    pp.dstDevice = 1;
    pp.extent = (struct cudaExtent){32, 2, 1};
    memset(aOp, 0, sizeof aOp);
    aOp[0].src.type = cudaMemcpyOperandTypePointer;
    aOp[0].src.op.ptr.ptr = PTR(D1);
    aOp[0].dst.type = cudaMemcpyOperandTypeArray;
    aOp[0].dst.op.array.array = ARR;
    aOp[1].src.type = cudaMemcpyOperandTypeArray;
    aOp[1].src.op.array.array = ARR;
    aOp[1].dst.type = cudaMemcpyOperandTypePointer;
    aOp[1].dst.op.ptr.ptr = PTR(D2);
    memset(opaque, 0x5a, sizeof opaque);
    (void)failIdx;
    call(RT, RTID(cudaMemcpy3D_v3020), &c1, 0, 300, 10);
    call(RT, RTID(cudaMemcpy3DAsync_ptsz_v7000), &c2, 0, 301, 20);
    call(RT, RTID(cudaMemcpy3DPeerAsync_v4000), &c3, 0, 302, 30);
    call(RT, RTID(cudaMemcpyBatchAsync_v13000), &b1, 0, 303, 40);
    call(RT, RTID(cudaMemcpyBatchAsync_ptsz_v13000), &b2, 0, 304, 50);
    call(RT, RTID(cudaMemcpy3DBatchAsync_v13000), &b3, 0, 305, 60);
    call(RT, RTID(cudaMemcpyBatchAsync_v12080), opaque, 0, 306, 70); /* no layout in CUDA 13: row only */
    ASSERT_STREQ(lines(A(154, 300, 10, 512, D1, HOST, 0), U(300, SRC, D1, 15), U(300, DST, HOST, 15),
                       A(155, 301, 20, 0, 0, D2, 1007), U(301, DST, D2, 25),
                       A(157, 302, 30, 64, D1, D2, 8), U(302, SRC, D1, 35), U(302, DST, D2, 35),
                       A(158, 303, 40, 300, 0, 0, 9), U(303, SRC, HOST, 45), U(303, DST, D2, 45),
                       U(303, SRC, D1 + 0x40, 45), U(303, DST, HOST, 45),
                       A(158, 304, 50, 100, HOST, D2, 1000), U(304, SRC, HOST, 55), U(304, DST, D2, 55),
                       A(159, 305, 60, 0, 0, 0, 2), U(305, SRC, D1, 65), U(305, DST, D2, 65),
                       A(158, 306, 70, 0, 0, 0, 0), NULL),
                 take());
    done();
}

/* Driver copies: 1D of every direction (the 32-bit pre-3.2 forms too), arrays, peers, 2D/3D, batches. */
TEST(driver_copies)
{
    cuMemcpyHtoD_params v1 = {0x7000, PTR(HOST), 16};
    cuMemcpyHtoD_v2_ptds_params h1 = {D1, PTR(HOST), 64};
    cuMemcpyDtoHAsync_v2_ptsz_params h2 = {PTR(HOST), D1, 32, (CUstream)(uintptr_t)3};
    cuMemcpyDtoD_v2_params h3 = {D2, D1, 8};
    cuMemcpyDtoA_v2_params a1 = {CUARR, 0, D1, 64};
    cuMemcpyAtoD_v2_ptds_params a2 = {D2, CUARR, 0, 64};
    cuMemcpyHtoAAsync_v2_params a3 = {CUARR, 0, PTR(HOST), 32, (CUstream)(uintptr_t)4};
    cuMemcpyAtoH_params a4 = {PTR(HOST), CUARR, 0, 16};
    cuMemcpyAtoA_v2_params a5 = {CUARR, 0, CUARR, 64, 48};
    cuMemcpy_params u1 = {D2, HOST, 24};
    cuMemcpyPeerAsync_ptsz_params p1 = {D2, (CUcontext)(uintptr_t)0x101, D1, (CUcontext)(uintptr_t)0x100, 40,
                                        (CUstream)(uintptr_t)5};
    call(DRV, DRVID(cuMemcpyHtoD), &v1, 0, 400, 10);
    call(DRV, DRVID(cuMemcpyHtoD_v2_ptds), &h1, 0, 401, 20);
    call(DRV, DRVID(cuMemcpyDtoHAsync_v2_ptsz), &h2, 0, 402, 30);
    call(DRV, DRVID(cuMemcpyDtoD_v2), &h3, 0, 403, 40);
    call(DRV, DRVID(cuMemcpyDtoA_v2), &a1, 0, 404, 50);
    call(DRV, DRVID(cuMemcpyAtoD_v2_ptds), &a2, 0, 405, 60);
    call(DRV, DRVID(cuMemcpyHtoAAsync_v2), &a3, 0, 406, 70);
    call(DRV, DRVID(cuMemcpyAtoH), &a4, 0, 407, 80);
    call(DRV, DRVID(cuMemcpyAtoA_v2), &a5, 0, 408, 90);
    call(DRV, DRVID(cuMemcpy), &u1, 0, 409, 100);
    call(DRV, DRVID(cuMemcpyPeerAsync_ptsz), &p1, 0, 410, 110);
    ASSERT_STREQ(lines(A(68, 400, 10, 16, HOST, 0x7000, 0), U(400, SRC, HOST, 15), U(400, DST, 0x7000, 15),
                       A(68, 401, 20, 64, HOST, D1, 0), U(401, SRC, HOST, 25), U(401, DST, D1, 25),
                       A(71, 402, 30, 32, D1, HOST, 1003), U(402, SRC, D1, 35), U(402, DST, HOST, 35),
                       A(72, 403, 40, 8, D1, D2, 0), U(403, SRC, D1, 45), U(403, DST, D2, 45),
                       A(160, 404, 50, 64, D1, 0, 0), U(404, SRC, D1, 55),
                       A(161, 405, 60, 64, 0, D2, 0), U(405, DST, D2, 65),
                       A(163, 406, 70, 32, HOST, 0, 4), U(406, SRC, HOST, 75),
                       A(164, 407, 80, 16, 0, HOST, 0), U(407, DST, HOST, 85),
                       A(166, 408, 90, 48, 0, 0, 0),
                       A(66, 409, 100, 24, HOST, D2, 0), U(409, SRC, HOST, 105), U(409, DST, D2, 105),
                       A(173, 410, 110, 40, D1, D2, 1005), U(410, SRC, D1, 115), U(410, DST, D2, 115), NULL),
                 take());
    done();
}

/* Driver 2D/3D copies (the base address of each side by its memory type) and batches. */
TEST(driver_2d_3d_and_batch_copies)
{
    CUDA_MEMCPY2D m1, m2;
    CUDA_MEMCPY3D m3;
    CUDA_MEMCPY3D_PEER m4;
    cuMemcpy2D_v2_params c1 = {&m1};
    cuMemcpy2DAsync_v2_ptsz_params c2 = {&m2, (CUstream)(uintptr_t)6};
    cuMemcpy3D_v2_params c3 = {&m3};
    cuMemcpy3DPeerAsync_params c4 = {&m4, (CUstream)(uintptr_t)7};
    CUdeviceptr aDst[2] = {D1, HOST}, aSrc[2] = {HOST, D2};
    size_t aSize[2] = {10, 20}, failIdx = 0;
    cuMemcpyBatchAsync_params b1 = {aDst, aSrc, aSize, 1, NULL, NULL, 0, &failIdx, (CUstream)(uintptr_t)8};
    cuMemcpyBatchAsync_v2_ptsz_params b2 = {aDst, aSrc, aSize, 2, NULL, NULL, 0, NULL};
    CUDA_MEMCPY3D_BATCH_OP aOp[1];
    cuMemcpy3DBatchAsync_v2_params b3 = {1, aOp, 0, (CUstream)(uintptr_t)9};
    cuMemcpy3DBatchAsync_params b4 = {1, aOp, &failIdx, 0, NULL};
    char opaque[64];
    cuMemcpy2DAsync_params o2;
    memset(&m1, 0, sizeof m1);
    m1.srcMemoryType = CU_MEMORYTYPE_HOST;
    m1.srcHost = PTR(HOST);
    m1.srcDevice = 0x1; /* not the side's address: ignored */
    m1.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    m1.dstDevice = D1;
    m1.WidthInBytes = 64;
    m1.Height = 3;
    memset(&m2, 0, sizeof m2);
    m2.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    m2.srcArray = CUARR;
    m2.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    m2.dstDevice = D2;
    m2.WidthInBytes = 16;
    m2.Height = 2;
    memset(&m3, 0, sizeof m3);
    m3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    m3.srcDevice = D1 + 0x80;
    m3.dstMemoryType = CU_MEMORYTYPE_HOST;
    m3.dstHost = PTR(HOST);
    m3.WidthInBytes = 8;
    m3.Height = 2;
    m3.Depth = 2;
    memset(&m4, 0, sizeof m4);
    m4.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    m4.srcDevice = D1;
    m4.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    m4.dstDevice = D2;
    m4.WidthInBytes = 4;
    m4.Height = 4;
    m4.Depth = 1;
    memset(aOp, 0, sizeof aOp);
    aOp[0].src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    aOp[0].src.op.ptr.ptr = D1;
    aOp[0].dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    aOp[0].dst.op.ptr.ptr = HOST;
    memset(opaque, 0x5a, sizeof opaque);
    memset(&o2, 0x5a, sizeof o2);
    o2.hStream = (CUstream)(uintptr_t)3;
    call(DRV, DRVID(cuMemcpy2D_v2), &c1, 0, 500, 10);
    call(DRV, DRVID(cuMemcpy2DAsync_v2_ptsz), &c2, 0, 501, 20);
    call(DRV, DRVID(cuMemcpy3D_v2), &c3, 0, 502, 30);
    call(DRV, DRVID(cuMemcpy3DPeerAsync), &c4, 0, 503, 40);
    call(DRV, DRVID(cuMemcpyBatchAsync), &b1, 0, 504, 50);
    call(DRV, DRVID(cuMemcpyBatchAsync_v2_ptsz), &b2, 0, 505, 60);
    call(DRV, DRVID(cuMemcpy3DBatchAsync_v2), &b3, 0, 506, 70);
    call(DRV, DRVID(cuMemcpy3DBatchAsync), &b4, 0, 507, 80);
    /* the pre-3.2 2D form: its descriptor is only a placeholder in cupti.h, so a row without addresses */
    call(DRV, DRVID(cuMemcpy2D), opaque, 0, 508, 90);
    call(DRV, DRVID(cuMemcpy2DAsync), &o2, 0, 509, 100);
    ASSERT_STREQ(lines(A(167, 500, 10, 192, HOST, D1, 0), U(500, SRC, HOST, 15), U(500, DST, D1, 15),
                       A(169, 501, 20, 32, 0, D2, 1006), U(501, DST, D2, 25),
                       A(170, 502, 30, 32, D1 + 0x80, HOST, 0), U(502, SRC, D1 + 0x80, 35), U(502, DST, HOST, 35),
                       A(175, 503, 40, 16, D1, D2, 7), U(503, SRC, D1, 45), U(503, DST, D2, 45),
                       A(176, 504, 50, 10, HOST, D1, 8), U(504, SRC, HOST, 55), U(504, DST, D1, 55),
                       A(176, 505, 60, 30, 0, 0, 1000), U(505, SRC, HOST, 65), U(505, DST, D1, 65),
                       U(505, SRC, D2, 65), U(505, DST, HOST, 65),
                       A(177, 506, 70, 0, D1, HOST, 9), U(506, SRC, D1, 75), U(506, DST, HOST, 75),
                       A(177, 507, 80, 0, D1, HOST, 0), U(507, SRC, D1, 85), U(507, DST, HOST, 85),
                       A(167, 508, 90, 0, 0, 0, 0),
                       A(169, 509, 100, 0, 0, 0, 3), NULL),
                 take());
    done();
}

/* Sets of every shape: 8/16/32-bit elements, 2D, 3D (the 32-bit pre-3.2 forms too). */
TEST(sets_each_shape)
{
    cudaMemset_v3020_params s1 = {PTR(D1), 0, 256};
    cudaMemset2DAsync_ptsz_v7000_params s2 = {PTR(D2), 512, 0, 100, 3, (cudaStream_t)(uintptr_t)2};
    cudaMemset3D_v3020_params s3;
    cudaMemset3DAsync_v3020_params s4;
    cuMemsetD8_params s5 = {0x8000, 0, 100};
    cuMemsetD16_v2_ptds_params s6 = {D1, 0, 50};
    cuMemsetD2D32Async_ptsz_params s7 = {D2, 64, 0, 4, 5, (CUstream)(uintptr_t)3};
    cuMemsetD2D16_params s8 = {0x8000, 64, 0, 8, 2};
    memset(&s3, 0, sizeof s3);
    s3.pitchedDevPtr.ptr = PTR(D1);
    s3.pitchedDevPtr.pitch = 64;
    s3.extent = (struct cudaExtent){10, 2, 3};
    memset(&s4, 0, sizeof s4);
    s4.pitchedDevPtr.ptr = PTR(D2);
    s4.extent = (struct cudaExtent){4, 4, 4};
    s4.stream = (cudaStream_t)(uintptr_t)5;
    call(RT, RTID(cudaMemset_v3020), &s1, 0, 600, 10);
    call(RT, RTID(cudaMemset2DAsync_ptsz_v7000), &s2, 0, 601, 20);
    call(RT, RTID(cudaMemset3D_v3020), &s3, 0, 602, 30);
    call(RT, RTID(cudaMemset3DAsync_v3020), &s4, 0, 603, 40);
    call(DRV, DRVID(cuMemsetD8), &s5, 0, 604, 50);
    call(DRV, DRVID(cuMemsetD16_v2_ptds), &s6, 0, 605, 60);
    call(DRV, DRVID(cuMemsetD2D32Async_ptsz), &s7, 0, 606, 70);
    call(DRV, DRVID(cuMemsetD2D16), &s8, 0, 607, 80);
    ASSERT_STREQ(lines(A(80, 600, 10, 256, 0, D1, 0), U(600, VT_USE_MEMSET, D1, 15),
                       A(181, 601, 20, 300, 0, D2, 1002), U(601, VT_USE_MEMSET, D2, 25),
                       A(182, 602, 30, 60, 0, D1, 0), U(602, VT_USE_MEMSET, D1, 35),
                       A(183, 603, 40, 64, 0, D2, 5), U(603, VT_USE_MEMSET, D2, 45),
                       A(82, 604, 50, 100, 0, 0x8000, 0), U(604, VT_USE_MEMSET, 0x8000, 55),
                       A(184, 605, 60, 100, 0, D1, 0), U(605, VT_USE_MEMSET, D1, 65),
                       A(191, 606, 70, 80, 0, D2, 1003), U(606, VT_USE_MEMSET, D2, 75),
                       A(188, 607, 80, 32, 0, 0x8000, 0), U(607, VT_USE_MEMSET, 0x8000, 85), NULL),
                 take());
    done();
}

/* A failed copy's descriptor and arrays are not read (they may be short of what it claims). */
TEST(failed_copies_read_no_pointers)
{
    CUdeviceptr aOne[1] = {D1};
    size_t aSize[1] = {8};
    cuMemcpyBatchAsync_v2_params b1 = {aOne, aOne, aSize, (size_t)1 << 40, NULL, NULL, 0, NULL};
    cuMemcpy3DBatchAsync_v2_params b2 = {(size_t)1 << 40, (CUDA_MEMCPY3D_BATCH_OP *)(uintptr_t)0x10, 0, NULL};
    cuMemcpy2D_v2_params c1 = {(const CUDA_MEMCPY2D *)(uintptr_t)0x10};
    call(DRV, DRVID(cuMemcpyBatchAsync_v2), &b1, CUDA_ERROR_INVALID_VALUE, 710, 10);
    call(DRV, DRVID(cuMemcpy3DBatchAsync_v2), &b2, CUDA_ERROR_INVALID_VALUE, 711, 20);
    call(DRV, DRVID(cuMemcpy2D_v2), &c1, CUDA_ERROR_INVALID_VALUE, 712, 30);
    ASSERT_STREQ(lines("api 176 corr 710 10-15 T dev 0 st 1 bytes 0 ptr 0 src 0 dst 0 stream 0 stack 77",
                       "api 177 corr 711 20-25 T dev 0 st 1 bytes 0 ptr 0 src 0 dst 0 stream 0 stack 77",
                       "api 167 corr 712 30-35 T dev 0 st 1 bytes 0 ptr 0 src 0 dst 0 stream 0 stack 77", NULL),
                 take());
    done();
}

/* A batch naming more addresses than rows allowed per call: the excess is counted. */
TEST(batch_uses_bounded)
{
    enum { N = 300 };
    static CUdeviceptr aDst[N], aSrc[N];
    static size_t aSize[N];
    cuMemcpyBatchAsync_v2_params b = {aDst, aSrc, aSize, N, NULL, NULL, 0, NULL};
    int i;
    for (i = 0; i < N; i++) {
        aDst[i] = D1 + (uint64_t)i * 64;
        aSrc[i] = HOST + (uint64_t)i * 64;
        aSize[i] = 64;
    }
    call(DRV, DRVID(cuMemcpyBatchAsync_v2), &b, 0, 700, 10);
    ASSERT_EQ(1 + 512 + 1, g_nRec);
    ASSERT_EQ(N * 64, g_aRec[0].u.api.bytes);
    for (i = 0; i < 512; i++) {
        ASSERT_EQ(VT_HREC_BUFFER_USE, g_aRec[1 + i].type);
        ASSERT_EQ(i % 2 ? VT_USE_MEMCPY_DST : VT_USE_MEMCPY_SRC, g_aRec[1 + i].u.use.kind);
        ASSERT_EQ(i % 2 ? aDst[i / 2] : aSrc[i / 2], g_aRec[1 + i].u.use.address);
    }
    ASSERT_EQ(VT_HREC_DROPPED, g_aRec[513].type);
    ASSERT_EQ(2 * N - 512, g_aRec[513].u.dropped.count);
    ASSERT_EQ(VT_DROP_MAP, g_aRec[513].u.dropped.source);
    g_nRec = 0;
    done();
}

/* Launches: the runtime launch recorded once, its arguments scanned at the driver launch it makes. */
TEST(launches_scan_arguments)
{
    uint64_t a = 0x7000010, b = 0x5555, corrData = 0;
    struct {
        uint64_t p, n;
    } s = {0x9000008, 4};
    int i32 = 7, st = 0;
    void *apArg[] = {&a, &i32, &b, &s};
    cudaLaunchKernel_v7000_params rp;
    cuLaunchKernel_params lp = {(CUfunction)(uintptr_t)0x1234, 1, 1, 1, 32, 1, 1, 0,
                                (CUstream)(uintptr_t)6, apArg, NULL};
    uint64_t aBuf[3] = {7, 0x9000100, 0x7000008};
    size_t nBuf = sizeof aBuf;
    void *aExtra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, aBuf, CU_LAUNCH_PARAM_BUFFER_SIZE, &nBuf,
                      CU_LAUNCH_PARAM_END};
    cuLaunchKernel_params xp = {(CUfunction)(uintptr_t)0x99, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, aExtra};
    setup_scan(fake_func_info, NULL, NULL);
    ASSERT_EQ(0, vt__ivl_insert(g_env.ivl, 0x7000000, 1 << 20));
    ASSERT_EQ(0, vt__ivl_insert(g_env.ivl, 0x9000000, 2 << 20));

    memset(&rp, 0, sizeof rp);
    rp.args = apArg;
    rp.stream = (cudaStream_t)(uintptr_t)6;
    cb(RT, RTID(cudaLaunchKernel_v7000), CUPTI_API_ENTER, &rp, &st, 30, &corrData, 100);
    call(DRV, DRVID(cuLaunchKernel), &lp, 0, 31, 101);
    cb(RT, RTID(cudaLaunchKernel_v7000), CUPTI_API_EXIT, &rp, &st, 30, &corrData, 110);
    call(DRV, DRVID(cuLaunchKernel_ptsz), &xp, 0, 32, 200);
    call(DRV, DRVID(cuLaunchKernel), &xp, CUDA_ERROR_INVALID_VALUE, 33, 300); /* failed: no uses */
    ASSERT_STREQ(lines("use corr 30 kind 0 addr 0x7000000 ts 106 dev 0", "use corr 30 kind 0 addr 0x9000000 ts 106 dev 0",
                       "api 100 corr 30 100-110 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 6 stack 0 scan 2",
                       "api 102 corr 32 200-205 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 1000 stack 0 scan 2",
                       "use corr 32 kind 0 addr 0x9000000 ts 205 dev 0",
                       "use corr 32 kind 0 addr 0x7000000 ts 205 dev 0",
                       "api 102 corr 33 300-305 T dev 0 st 1 bytes 0 ptr 0 src 0 dst 0 stream 0 stack 0", NULL),
                 take());
    ASSERT_EQ(0, g_nSite); /* launches carry no call site */
    done();
}

/* More allocations in one launch's arguments than rows allowed: the excess is counted. */
TEST(launch_uses_bounded)
{
    enum { N = 600 };
    static uint64_t aBuf[N];
    size_t nBuf = sizeof aBuf;
    void *aExtra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, aBuf, CU_LAUNCH_PARAM_BUFFER_SIZE, &nBuf,
                      CU_LAUNCH_PARAM_END};
    cuLaunchKernelEx_params xp;
    CUlaunchConfig conf;
    int i, nUse = 0;
    setup_scan(NULL, NULL, NULL);
    for (i = 0; i < N; i++) {
        aBuf[i] = 0x100000000ull + (uint64_t)i * 4096;
        ASSERT_EQ(0, vt__ivl_insert(g_env.ivl, aBuf[i], 4096));
    }
    memset(&conf, 0, sizeof conf);
    conf.hStream = (CUstream)(uintptr_t)2;
    memset(&xp, 0, sizeof xp);
    xp.config = &conf;
    xp.f = (CUfunction)(uintptr_t)0x99;
    xp.extra = aExtra;
    call(DRV, DRVID(cuLaunchKernelEx), &xp, 0, 70, 10);
    ASSERT_EQ(1 + 512 + 1, g_nRec);
    ASSERT_EQ(VT_HREC_API_CALL, g_aRec[0].type);
    ASSERT_EQ(103, g_aRec[0].u.api.api);
    ASSERT_EQ(2, g_aRec[0].u.api.stream);
    for (i = 1; i <= 512; i++) nUse += g_aRec[i].type == VT_HREC_BUFFER_USE && g_aRec[i].u.use.address == aBuf[i - 1];
    ASSERT_EQ(512, nUse);
    ASSERT_EQ(VT_HREC_DROPPED, g_aRec[513].type);
    ASSERT_EQ(VT_DROP_MAP, g_aRec[513].u.dropped.source);
    ASSERT_EQ(N - 512, g_aRec[513].u.dropped.count);
    g_nRec = 0;
    done();
}

/* Nothing is recorded while the session is inactive; untraced calls are ignored; depth stays balanced. */
TEST(inactive_and_untraced)
{
    void *p = NULL;
    cudaMalloc_v3020_params rp = {&p, 4096};
    int st = 0;
    uint64_t corrData = 0;
    setup_scan(NULL, NULL, NULL);
    g_bActive = 0;
    call(RT, RTID(cudaMalloc_v3020), &rp, 0, 80, 10);
    ASSERT_EQ(0, g_thread.depth);
    g_bActive = 1;
    cb(RT, RTID(cudaGetDevice_v3020), CUPTI_API_ENTER, NULL, &st, 81, &corrData, 20);
    cb(RT, RTID(cudaGetDevice_v3020), CUPTI_API_EXIT, NULL, &st, 81, &corrData, 25);
    ASSERT_EQ(0, g_thread.depth);
    ASSERT_EQ(0, g_nRec);
    ASSERT_EQ(0, g_nSite);
    done();
}

/* The family of an API id, from VT_API_LIST ("" when unknown). */
static const char *family(int api)
{
    switch (api) {
#define FAMILY_CASE(id, name, fam) \
    case id:                       \
        return fam;
        VT_API_LIST(FAMILY_CASE)
#undef FAMILY_CASE
    }
    return "";
}

/* Every launch entry point of the CUDA 13.0 callback-id headers is traced, as a launch. */
TEST(every_launch_entry_point_traced)
{
    static const CUpti_CallbackId aRt[] = {
        RTID(cudaLaunch_v3020), RTID(cudaLaunch_ptsz_v7000), RTID(cudaLaunchKernel_v7000),
        RTID(cudaLaunchKernel_ptsz_v7000), RTID(cudaLaunchCooperativeKernel_v9000),
        RTID(cudaLaunchCooperativeKernel_ptsz_v9000), RTID(cudaLaunchCooperativeKernelMultiDevice_v9000),
        RTID(cudaGraphLaunch_v10000), RTID(cudaGraphLaunch_ptsz_v10000), RTID(cudaLaunchKernelExC_v11060),
        RTID(cudaLaunchKernelExC_ptsz_v11060), RTID(__cudaLaunchKernel_v13000),
        RTID(__cudaLaunchKernel_ptsz_v13000)};
    static const CUpti_CallbackId aDrv[] = {
        DRVID(cuLaunch), DRVID(cuLaunchGrid), DRVID(cuLaunchGridAsync), DRVID(cuLaunchKernel),
        DRVID(cuLaunchKernel_ptsz), DRVID(cuLaunchCooperativeKernel), DRVID(cuLaunchCooperativeKernel_ptsz),
        DRVID(cuLaunchCooperativeKernelMultiDevice), DRVID(cuGraphLaunch), DRVID(cuGraphLaunch_ptsz),
        DRVID(cuLaunchKernelEx), DRVID(cuLaunchKernelEx_ptsz)};
    size_t i;
    for (i = 0; i < sizeof aRt / sizeof aRt[0]; i++) {
        const struct vt__api *e = vt__api_find(RT, aRt[i]);
        if (!e || strcmp(family(e->api), "launch")) VT__FAIL("runtime cbid %u is not traced as a launch", aRt[i]);
    }
    for (i = 0; i < sizeof aDrv / sizeof aDrv[0]; i++) {
        const struct vt__api *e = vt__api_find(DRV, aDrv[i]);
        if (!e || strcmp(family(e->api), "launch")) VT__FAIL("driver cbid %u is not traced as a launch", aDrv[i]);
    }
    ASSERT_EQ(505, RTID(__cudaLaunchKernel_v13000));
    ASSERT_EQ(506, RTID(__cudaLaunchKernel_ptsz_v13000));
    ASSERT(vt__api_find(RT, RTID(__cudaLaunchKernel_ptsz_v13000))->perThread);
    ASSERT(vt__api_find(DRV, DRVID(cuLaunchHostFunc)) == NULL); /* a host function, not a kernel */
    done();
}

/*
 * Every copy, set and launch callback id of the CUDA 13 headers is traced, in the
 * family its name says. Left out: the graph-node calls (they describe a copy or
 * set to come, which arrives as an activity record of the graph launch), the
 * host-function launches, and the ids no function is declared for in the
 * toolkit's headers (cu64*, cuMemcpy_v2).
 */
static int check_header(const char *zFile, const char *zPrefix, CUpti_CallbackDomain dom)
{
    char zPath[512], zLine[512];
    FILE *f;
    int nChecked = 0;
    snprintf(zPath, sizeof zPath, "%s/%s", VT_CUPTI_CBID_DIR, zFile);
    f = fopen(zPath, "r");
    if (!f) VT__FAIL("cannot read %s", zPath);
    while (fgets(zLine, sizeof zLine, f)) {
        char zName[200];
        unsigned cbid;
        const char *zFamily;
        const struct vt__api *e;
        const char *z = strstr(zLine, zPrefix);
        if (!z || sscanf(z + strlen(zPrefix), "%199[A-Za-z0-9_] = %u", zName, &cbid) != 2) continue;
        if (strstr(zName, "Memcpy")) zFamily = "memcpy";
        else if (strstr(zName, "Memset")) zFamily = "memset";
        else if (strstr(zName, "Launch")) zFamily = "launch";
        else continue;
        if ((strstr(zName, "Graph") && strstr(zName, "Node")) || strstr(zName, "HostFunc") ||
            !strncmp(zName, "cu64", 4) || !strcmp(zName, "cuMemcpy_v2"))
            continue;
        e = vt__api_find(dom, cbid);
        if (!e) VT__FAIL("%s (%u) is not traced", zName, cbid);
        if (strcmp(family(e->api), zFamily)) VT__FAIL("%s is traced as %s", zName, family(e->api));
        nChecked++;
    }
    fclose(f);
    return nChecked;
}

TEST(every_copy_set_launch_traced)
{
#ifndef VT_CUPTI_CBID_DIR
    SKIP("the CUPTI headers were not found at build time");
#else
    ASSERT(check_header("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_", RT) >= 79); /* 13.0: 79 */
    ASSERT(check_header("cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_", DRV) >= 116); /* 13.0: 116 */
#endif
    done();
}

/*
 * nvcc 13's kernel<<<...>>>: __cudaLaunchKernel with the kernel's handle. Scanned
 * at its own exit when no driver launch is seen inside it, at the driver launch
 * when one is, never twice; recorded once either way.
 */
TEST(cuda13_triple_chevron_launch)
{
    uint64_t a = 0x7000010, corrData = 0;
    int i32 = 5, st = 0;
    void *apArg[] = {&a, &i32};
    vt__cudaLaunchKernel_v13000_params rp;
    cuLaunchKernel_params lp = {(CUfunction)(uintptr_t)0x5000, 1, 1, 1, 32, 1, 1, 0, NULL, apArg, NULL};
    setup_scan(fake_func_info, fake_kernel_info, NULL);
    ASSERT_EQ(0, vt__ivl_insert(g_env.ivl, 0x7000000, 1 << 20));
    memset(&rp, 0, sizeof rp);
    rp.kernel = (cudaKernel_t)(uintptr_t)0x5000;
    rp.args = apArg;
    rp.stream = (cudaStream_t)(uintptr_t)4;

    /* alone */
    call(RT, RTID(__cudaLaunchKernel_v13000), &rp, 0, 90, 100);
    /* per-thread default stream, with the driver launch the runtime makes inside it */
    cb(RT, RTID(__cudaLaunchKernel_ptsz_v13000), CUPTI_API_ENTER, &rp, &st, 91, &corrData, 200);
    call(DRV, DRVID(cuLaunchKernel_ptsz), &lp, 0, 92, 201);
    cb(RT, RTID(__cudaLaunchKernel_ptsz_v13000), CUPTI_API_EXIT, &rp, &st, 91, &corrData, 210);
    /* a failed launch used nothing */
    call(RT, RTID(__cudaLaunchKernel_v13000), &rp, cudaErrorInvalidConfiguration, 93, 300);
    ASSERT_STREQ(lines("api 104 corr 90 100-105 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 4 stack 0 scan 2",
                       "use corr 90 kind 0 addr 0x7000000 ts 105 dev 0",
                       "use corr 91 kind 0 addr 0x7000000 ts 206 dev 0",
                       "api 104 corr 91 200-210 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 1004 stack 0 scan 2",
                       "api 104 corr 93 300-305 T dev 0 st 9 bytes 0 ptr 0 src 0 dst 0 stream 4 stack 0", NULL),
                 take());
    done();
}

/* Runtime launches naming a host stub: laid out by the runtime's query when no driver launch is seen. */
TEST(runtime_launches_of_stubs)
{
    uint64_t a = 0x7000010;
    int i32 = 5;
    void *apArg[] = {&a, &i32};
    cudaLaunchKernel_v7000_params lk;
    cudaLaunchCooperativeKernel_v9000_params ck;
    cudaLaunchKernelExC_v11060_params xk;
    cudaLaunchConfig_t conf;
    setup_scan(fake_func_info, fake_kernel_info, fake_stub_info);
    ASSERT_EQ(0, vt__ivl_insert(g_env.ivl, 0x7000000, 1 << 20));
    memset(&lk, 0, sizeof lk);
    lk.func = (const void *)(uintptr_t)0x401000;
    lk.args = apArg;
    lk.stream = (cudaStream_t)(uintptr_t)2;
    memset(&ck, 0, sizeof ck);
    ck.func = lk.func;
    ck.args = apArg;
    ck.stream = (cudaStream_t)(uintptr_t)3;
    memset(&conf, 0, sizeof conf);
    conf.stream = (cudaStream_t)(uintptr_t)4;
    xk.config = &conf;
    xk.func = lk.func;
    xk.args = apArg;
    call(RT, RTID(cudaLaunchKernel_v7000), &lk, 0, 100, 10);
    call(RT, RTID(cudaLaunchCooperativeKernel_ptsz_v9000), &ck, 0, 101, 20);
    call(RT, RTID(cudaLaunchKernelExC_v11060), &xk, 0, 102, 30);
    lk.func = (const void *)(uintptr_t)0x402000; /* a stub the runtime does not know */
    call(RT, RTID(cudaLaunchKernel_ptsz_v7000), &lk, 0, 103, 40);
    ASSERT_STREQ(lines("api 100 corr 100 10-15 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 2 stack 0 scan 2",
                       "use corr 100 kind 0 addr 0x7000000 ts 15 dev 0",
                       "api 105 corr 101 20-25 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 1003 stack 0 scan 2",
                       "use corr 101 kind 0 addr 0x7000000 ts 25 dev 0",
                       "api 101 corr 102 30-35 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 4 stack 0 scan 2",
                       "use corr 102 kind 0 addr 0x7000000 ts 35 dev 0",
                       "api 100 corr 103 40-45 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 1002 stack 0 scan 1", NULL),
                 take());
    done();
}

/* Cooperative and multi-device driver launches are scanned; graph and legacy launches are recorded only. */
TEST(driver_and_graph_launches)
{
    uint64_t a = 0x7000010, b = 0x9000020;
    int i32 = 5;
    void *apA[] = {&a, &i32}, *apB[] = {&b, &i32};
    cuLaunchCooperativeKernel_params cp = {(CUfunction)(uintptr_t)0x5000, 1, 1, 1, 32, 1, 1, 0,
                                           (CUstream)(uintptr_t)5, apA};
    CUDA_LAUNCH_PARAMS aList[2];
    cuLaunchCooperativeKernelMultiDevice_params mp = {aList, 2, 0};
    cudaGraphLaunch_v10000_params gp = {(cudaGraphExec_t)(uintptr_t)0x77, (cudaStream_t)(uintptr_t)6};
    cuGraphLaunch_params dgp = {(CUgraphExec)(uintptr_t)0x78, (CUstream)(uintptr_t)7};
    cuLaunch_params l1 = {(CUfunction)(uintptr_t)0x5000};
    cuLaunchGrid_params l2 = {(CUfunction)(uintptr_t)0x5000, 4, 4};
    cuLaunchGridAsync_params l3 = {(CUfunction)(uintptr_t)0x5000, 4, 4, (CUstream)(uintptr_t)8};
    setup_scan(fake_func_info, fake_kernel_info, NULL);
    ASSERT_EQ(0, vt__ivl_insert(g_env.ivl, 0x7000000, 1 << 20));
    ASSERT_EQ(0, vt__ivl_insert(g_env.ivl, 0x9000000, 1 << 20));
    memset(aList, 0, sizeof aList);
    aList[0].function = (CUfunction)(uintptr_t)0x5000;
    aList[0].kernelParams = apA;
    aList[1].function = (CUfunction)(uintptr_t)0x5000;
    aList[1].kernelParams = apB;
    call(DRV, DRVID(cuLaunchCooperativeKernel_ptsz), &cp, 0, 110, 10);
    call(DRV, DRVID(cuLaunchCooperativeKernelMultiDevice), &mp, 0, 111, 20);
    call(RT, RTID(cudaGraphLaunch_ptsz_v10000), &gp, 0, 112, 30);
    call(DRV, DRVID(cuGraphLaunch), &dgp, 0, 113, 40);
    call(DRV, DRVID(cuLaunch), &l1, 0, 114, 50);
    call(DRV, DRVID(cuLaunchGrid), &l2, 0, 115, 60);
    call(DRV, DRVID(cuLaunchGridAsync), &l3, 0, 116, 70);
    call(RT, RTID(cudaLaunch_v3020), NULL, 0, 117, 80);
    ASSERT_STREQ(lines("api 109 corr 110 10-15 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 1005 stack 0 scan 2",
                       "use corr 110 kind 0 addr 0x7000000 ts 15 dev 0",
                       "api 110 corr 111 20-25 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 0 stack 0 scan 2",
                       "use corr 111 kind 0 addr 0x7000000 ts 25 dev 0",
                       "use corr 111 kind 0 addr 0x9000000 ts 25 dev 0",
                       "api 107 corr 112 30-35 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 1006 stack 0",
                       "api 111 corr 113 40-45 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 7 stack 0",
                       "api 112 corr 114 50-55 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 0 stack 0 scan 1",
                       "api 113 corr 115 60-65 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 0 stack 0 scan 1",
                       "api 114 corr 116 70-75 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 8 stack 0 scan 1",
                       "api 108 corr 117 80-85 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 0 stack 0 scan 1", NULL),
                 take());
    ASSERT_EQ(0, g_nSite);
    done();
}

/* Kernel-argument scanning off (no scanner): launches say their arguments were not scanned. */
TEST(launch_unscanned_when_scanning_off)
{
    uint64_t a = 0x7000010;
    int i32 = 1;
    void *apArg[] = {&a, &i32};
    cuLaunchKernel_params lp = {(CUfunction)(uintptr_t)0x1234, 1, 1, 1, 32, 1, 1, 0, NULL, apArg, NULL};
    call(DRV, DRVID(cuLaunchKernel), &lp, 0, 140, 10);
    ASSERT_STREQ(lines("api 102 corr 140 10-15 T dev 0 st 0 bytes 0 ptr 0 src 0 dst 0 stream 0 stack 0 scan 1",
                       NULL),
                 take());
    done();
}

/* The tracer's copies of NVTX's parameter layouts match generated_nvtx_meta.h. */
_Static_assert(sizeof(vt__nvtxRangeEnd_params) == sizeof(nvtxRangeEnd_params) &&
                   offsetof(vt__nvtxRangeEnd_params, id) == offsetof(nvtxRangeEnd_params, id) &&
                   sizeof(nvtxRangeId_t) == sizeof(uint64_t),
               "nvtxRangeEnd_params");
_Static_assert(offsetof(vt__nvtxDomainRangeEnd_params, core) == offsetof(nvtxDomainRangeEnd_params, core),
               "nvtxDomainRangeEnd_params");

/*
 * NVTX callbacks: a start/end range's id, from nvtxRangeStart*'s return value
 * or nvtxRangeEnd's argument, becomes one VT_HREC_NVTX record; push/pop calls
 * and a start without a return value make none.
 */
TEST(nvtx_start_end_ids)
{
    nvtxRangeId_t idA = 0x100000011ull, idZero = 0;
    nvtxRangeStartA_params sa = {"load"};
    nvtxRangeEnd_params en = {0x12};
    nvtxDomainRangeEnd_params den;
    nvtxRangePushA_params pu = {"step"};
    CUpti_NvtxData d;
    size_t n, i;
    const CUpti_CallbackId *aId = vt__nvtx_cbids(&n);
    memset(&den, 0, sizeof den);
    den.core.id = 0x13;
    memset(&d, 0, sizeof d);
    d.functionParams = &sa;
    d.functionReturnValue = &idA;
    vt__nvtx_callback(&g_env, CUPTI_CBID_NVTX_nvtxRangeStartA, &d);
    d.functionReturnValue = NULL;
    vt__nvtx_callback(&g_env, CUPTI_CBID_NVTX_nvtxRangeStartEx, &d);
    d.functionReturnValue = &idZero;
    vt__nvtx_callback(&g_env, CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, &d);
    d.functionParams = &en;
    vt__nvtx_callback(&g_env, CUPTI_CBID_NVTX_nvtxRangeEnd, &d);
    d.functionParams = &den;
    vt__nvtx_callback(&g_env, CUPTI_CBID_NVTX_nvtxDomainRangeEnd, &d);
    d.functionParams = &pu;
    vt__nvtx_callback(&g_env, CUPTI_CBID_NVTX_nvtxRangePushA, &d);
    ASSERT_EQ(3, g_nRec);
    ASSERT_EQ(VT_HREC_NVTX, g_aRec[0].type);
    ASSERT_EQ(0x100000011ull, g_aRec[0].u.nvtx.id);
    ASSERT_EQ(0, g_aRec[0].u.nvtx.bEnd);
    ASSERT_EQ(0x12, g_aRec[1].u.nvtx.id);
    ASSERT_EQ(1, g_aRec[1].u.nvtx.bEnd);
    ASSERT_EQ(0x13, g_aRec[2].u.nvtx.id);
    ASSERT_EQ(1, g_aRec[2].u.nvtx.bEnd);
    g_nRec = 0;
    /* the ids enabled are exactly the start/end calls */
    ASSERT_EQ(6, n);
    for (i = 0; i < n; i++)
        ASSERT(aId[i] == CUPTI_CBID_NVTX_nvtxRangeStartA || aId[i] == CUPTI_CBID_NVTX_nvtxRangeStartW ||
               aId[i] == CUPTI_CBID_NVTX_nvtxRangeStartEx || aId[i] == CUPTI_CBID_NVTX_nvtxDomainRangeStartEx ||
               aId[i] == CUPTI_CBID_NVTX_nvtxRangeEnd || aId[i] == CUPTI_CBID_NVTX_nvtxDomainRangeEnd);
    /* nothing while inactive */
    g_bActive = 0;
    d.functionParams = &en;
    vt__nvtx_callback(&g_env, CUPTI_CBID_NVTX_nvtxRangeEnd, &d);
    g_bActive = 1;
    ASSERT_EQ(0, g_nRec);
    done();
}

VT_TEST_LIST(T(tables_traced_ids_unique_and_named) T(malloc_and_free) T(failed_allocations_are_oom)
             T(imports_and_sharing) T(launch_unscanned_when_scanning_off) T(nvtx_start_end_ids)
             T(pitched_and_host_allocations) T(vmm_calls) T(vmm_device_from_location)
             T(copies_and_sets) T(launches_scan_arguments) T(launch_uses_bounded)
             T(inactive_and_untraced) T(every_launch_entry_point_traced) T(cuda13_triple_chevron_launch)
             T(runtime_launches_of_stubs) T(driver_and_graph_launches) T(runtime_copies_arrays_symbols)
             T(runtime_3d_and_batch_copies) T(driver_copies) T(driver_2d_3d_and_batch_copies)
             T(sets_each_shape) T(batch_uses_bounded) T(every_copy_set_launch_traced)
             T(failed_copies_read_no_pointers))
