/* Tests of the kernel-parameter scanner: layouts from fake driver queries, cached, scanned. */
#include "kparams.h"

#include <cuda.h>

#include "core_util.h"
#include "vt_test.h"

/*
 * Fake layout queries. Function 0x1000 + 16 k takes k + 1 parameters of 8 bytes
 * (k < 40); kernel 0x5000 (known only to the kernel query) takes (int, pointer).
 * Each query call is counted.
 */
static int g_nFuncQueries, g_nKernelQueries;

static int fake_func(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    uintptr_t k = ((uintptr_t)h - 0x1000) / 16;
    g_nFuncQueries++;
    if ((uintptr_t)h < 0x1000 || (uintptr_t)h % 16 || k >= 40 || i > k) return -1;
    *pOff = i * 8;
    *pSize = 8;
    return 0;
}

static int fake_kernel(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    static const size_t aSize[] = {4, 8};
    g_nKernelQueries++;
    if ((uintptr_t)h != 0x5000 || i >= 2) return -1;
    *pOff = i * 8;
    *pSize = aSize[i];
    return 0;
}

/* One huge kernel: more parameters than the scanner reads. */
static int fake_many(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    (void)h;
    if (i >= 1000) return -1;
    *pOff = i * 8;
    *pSize = 8;
    return 0;
}

static struct vt__kparams *open_with(struct vt__ivl *ivl, vt__param_info_fn xFunc, vt__param_info_fn xKernel)
{
    struct vt__kparams_config kc;
    struct vt__kparams *kp;
    memset(&kc, 0, sizeof kc);
    kc.xFuncParamInfo = xFunc;
    kc.xKernelParamInfo = xKernel;
    kc.ivl = ivl;
    kp = vt__kparams_open(&kc);
    ASSERT(kp != NULL);
    return kp;
}

TEST(sizes_queried_once_then_cached)
{
    struct vt__ivl *ivl = vt__ivl_open();
    struct vt__kparams *kp = open_with(ivl, fake_func, fake_kernel);
    size_t aSize[VT_KPARAMS_MAX];
    ASSERT_EQ(3, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x1020, aSize));
    ASSERT_EQ(4, g_nFuncQueries); /* three parameters, then the failing fourth */
    ASSERT_EQ(8, aSize[0]);
    ASSERT_EQ(8, aSize[2]);
    ASSERT_EQ(3, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x1020, aSize));
    ASSERT_EQ(4, g_nFuncQueries);
    ASSERT_EQ(0, g_nKernelQueries);
    /* a CUkernel: the function query fails at once, the kernel query answers */
    ASSERT_EQ(2, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x5000, aSize));
    ASSERT_EQ(4, aSize[0]);
    ASSERT_EQ(8, aSize[1]);
    ASSERT_EQ(5, g_nFuncQueries);
    ASSERT_EQ(3, g_nKernelQueries);
    /* unknown to both: 0, and cached as unknown */
    ASSERT_EQ(0, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x7777, aSize));
    ASSERT_EQ(0, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x7777, aSize));
    ASSERT_EQ(6, g_nFuncQueries);
    ASSERT_EQ(4, g_nKernelQueries);
    vt__kparams_close(kp);
    vt__ivl_close(ivl);
    CORE_LEAK_CHECK();
}

/* Without query functions nothing is known; at most VT_KPARAMS_MAX parameters are read. */
TEST(sizes_without_queries_and_bounded)
{
    struct vt__ivl *ivl = vt__ivl_open();
    struct vt__kparams *kp = open_with(ivl, NULL, NULL);
    struct vt__kparams *kpMany = open_with(ivl, fake_many, NULL);
    size_t aSize[VT_KPARAMS_MAX];
    struct vt__kparams_config kc;
    ASSERT_EQ(0, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x1020, aSize));
    ASSERT_EQ(VT_KPARAMS_MAX, vt__kparams_sizes(kpMany, VT_KP_DRIVER, (const void *)0x1, aSize));
    memset(&kc, 0, sizeof kc);
    ASSERT(vt__kparams_open(&kc) == NULL); /* no index to look words up in */
    vt__kparams_close(NULL);
    vt__kparams_close(kp);
    vt__kparams_close(kpMany);
    vt__ivl_close(ivl);
    CORE_LEAK_CHECK();
}

/* Forty kernels, asked twice each: every one gets its own sizes. */
TEST(sizes_per_kernel)
{
    struct vt__ivl *ivl = vt__ivl_open();
    struct vt__kparams *kp = open_with(ivl, fake_func, NULL);
    size_t aSize[VT_KPARAMS_MAX];
    int round, k;
    for (round = 0; round < 2; round++)
        for (k = 0; k < 40; k++)
            ASSERT_EQ(k + 1, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)(uintptr_t)(0x1000 + 16 * k), aSize));
    vt__kparams_close(kp);
    vt__ivl_close(ivl);
    CORE_LEAK_CHECK();
}

TEST(scan_param_array)
{
    struct vt__ivl *ivl = vt__ivl_open();
    struct vt__kparams *kp = open_with(ivl, fake_func, fake_kernel);
    uint64_t a = 0x7000010, b = 0x5555, c = 0x9000000, aBase[4];
    int i32 = 3;
    void *apArg3[] = {&a, &b, &c};
    void *apArgK[] = {&i32, &c};
    ASSERT_EQ(0, vt__ivl_insert(ivl, 0x7000000, 1 << 20));
    ASSERT_EQ(0, vt__ivl_insert(ivl, 0x9000000, 1 << 20));
    ASSERT_EQ(2, vt__kparams_scan(kp, VT_KP_DRIVER, (const void *)0x1020, apArg3, NULL, aBase, 4));
    ASSERT_EQ(0x7000000, aBase[0]);
    ASSERT_EQ(0x9000000, aBase[1]);
    ASSERT_EQ(1, vt__kparams_scan(kp, VT_KP_DRIVER, (const void *)0x5000, apArgK, NULL, aBase, 4));
    ASSERT_EQ(0x9000000, aBase[0]);
    /* unknown layout: nothing scanned, and it says so */
    ASSERT_EQ(-1, vt__kparams_scan(kp, VT_KP_DRIVER, (const void *)0x7777, apArg3, NULL, aBase, 4));
    /* a readable layout that points at nothing live: scanned, none found */
    c = 0x5000000;
    ASSERT_EQ(0, vt__kparams_scan(kp, VT_KP_DRIVER, (const void *)0x5000, apArgK, NULL, aBase, 4));
    c = 0x9000000;
    /* the count goes on past the room given */
    ASSERT_EQ(2, vt__kparams_scan(kp, VT_KP_DRIVER, (const void *)0x1020, apArg3, NULL, aBase, 1));
    ASSERT_EQ(0x7000000, aBase[0]);
    vt__kparams_close(kp);
    vt__ivl_close(ivl);
    CORE_LEAK_CHECK();
}

TEST(scan_extra_buffer)
{
    struct vt__ivl *ivl = vt__ivl_open();
    struct vt__kparams *kp = open_with(ivl, NULL, NULL);
    uint64_t aBuf[3] = {7, 0x9000100, 0x7000008}, aBase[4];
    size_t nBuf = sizeof aBuf, nZero = 0;
    void *aExtra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, aBuf, CU_LAUNCH_PARAM_BUFFER_SIZE, &nBuf,
                      CU_LAUNCH_PARAM_END};
    void *aNoSize[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, aBuf, CU_LAUNCH_PARAM_BUFFER_SIZE, &nZero,
                       CU_LAUNCH_PARAM_END};
    void *aLong[40];
    int i;
    ASSERT_EQ(0, vt__ivl_insert(ivl, 0x7000000, 1 << 20));
    ASSERT_EQ(0, vt__ivl_insert(ivl, 0x9000000, 1 << 20));
    ASSERT_EQ(2, vt__kparams_scan(kp, VT_KP_DRIVER, (const void *)0x99, NULL, aExtra, aBase, 4));
    ASSERT_EQ(0x9000000, aBase[0]);
    ASSERT_EQ(0x7000000, aBase[1]);
    ASSERT_EQ(-1, vt__kparams_scan(kp, VT_KP_DRIVER, (const void *)0x99, NULL, aNoSize, aBase, 4));
    ASSERT_EQ(-1, vt__kparams_scan(kp, VT_KP_DRIVER, (const void *)0x99, NULL, NULL, aBase, 4));
    /* the buffer named past the 16 pairs read is not seen */
    for (i = 0; i < 32; i += 2) {
        aLong[i] = (void *)(uintptr_t)0x7f; /* an option the scanner does not know */
        aLong[i + 1] = NULL;
    }
    aLong[32] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    aLong[33] = aBuf;
    aLong[34] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    aLong[35] = &nBuf;
    aLong[36] = CU_LAUNCH_PARAM_END;
    ASSERT_EQ(-1, vt__kparams_scan(kp, VT_KP_DRIVER, (const void *)0x99, NULL, aLong, aBase, 4));
    vt__kparams_close(kp);
    vt__ivl_close(ivl);
    CORE_LEAK_CHECK();
}

/* Stub 0x1020 (a host function address) takes (pointer, pointer) per the runtime's query. */
static int g_nStubQueries;
static int fake_stub(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    g_nStubQueries++;
    if ((uintptr_t)h != 0x1020 || i >= 2) return -1;
    *pOff = i * 8;
    *pSize = 8;
    return 0;
}

/* A runtime stub and a driver handle with the same value are different kernels: cached apart. */
TEST(stub_layout_from_runtime_query)
{
    struct vt__ivl *ivl = vt__ivl_open();
    struct vt__kparams_config kc;
    struct vt__kparams *kp;
    size_t aSize[VT_KPARAMS_MAX];
    uint64_t a = 0x7000010, c = 0x9000000, aBase[4];
    void *apArg[] = {&a, &c};
    memset(&kc, 0, sizeof kc);
    kc.xFuncParamInfo = fake_func;
    kc.xStubParamInfo = fake_stub;
    kc.ivl = ivl;
    kp = vt__kparams_open(&kc);
    ASSERT(kp != NULL);
    ASSERT_EQ(0, vt__ivl_insert(ivl, 0x7000000, 1 << 20));
    ASSERT_EQ(0, vt__ivl_insert(ivl, 0x9000000, 1 << 20));
    ASSERT_EQ(2, vt__kparams_sizes(kp, VT_KP_STUB, (const void *)0x1020, aSize));
    ASSERT_EQ(3, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x1020, aSize));
    ASSERT_EQ(2, vt__kparams_sizes(kp, VT_KP_STUB, (const void *)0x1020, aSize));
    ASSERT_EQ(3, g_nStubQueries);
    ASSERT_EQ(4, g_nFuncQueries);
    ASSERT_EQ(0, vt__kparams_sizes(kp, VT_KP_STUB, (const void *)0x5000, aSize));
    ASSERT_EQ(2, vt__kparams_scan(kp, VT_KP_STUB, (const void *)0x1020, apArg, NULL, aBase, 4));
    ASSERT_EQ(0x7000000, aBase[0]);
    ASSERT_EQ(0x9000000, aBase[1]);
    vt__kparams_close(kp);
    /* no runtime query: a stub's layout is unknown */
    kp = open_with(ivl, fake_func, fake_kernel);
    ASSERT_EQ(0, vt__kparams_sizes(kp, VT_KP_STUB, (const void *)0x1020, aSize));
    vt__kparams_close(kp);
    vt__ivl_close(ivl);
    CORE_LEAK_CHECK();
}

/*
 * A module unloads: its handles may be reused by the next module's kernels,
 * so cached layouts are forgotten; one being asked while the unload happens
 * is not cached (the next launch asks again).
 */
static struct vt__kparams *g_kpForget;
static int g_bForgetInQuery, g_nReusedParams = 1;

/* Handle 0x2000: first a kernel of 1 parameter, after the reuse one of g_nReusedParams. */
static int fake_reused(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    (void)h;
    g_nFuncQueries++;
    if (g_bForgetInQuery && i == 0) vt__kparams_forget(g_kpForget); /* an unload meanwhile */
    if ((int)i >= g_nReusedParams) return -1;
    *pOff = i * 8;
    *pSize = 8;
    return 0;
}

TEST(forget_on_module_unload)
{
    struct vt__ivl *ivl = vt__ivl_open();
    struct vt__kparams *kp = open_with(ivl, fake_reused, NULL);
    size_t aSize[VT_KPARAMS_MAX];
    int nBefore;
    g_kpForget = kp;
    g_nFuncQueries = 0;
    ASSERT_EQ(1, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x2000, aSize));
    nBefore = g_nFuncQueries;
    ASSERT_EQ(1, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x2000, aSize)); /* cached */
    ASSERT_EQ(nBefore, g_nFuncQueries);
    /* the module unloads; the handle now names a kernel of 3 parameters */
    vt__kparams_forget(kp);
    g_nReusedParams = 3;
    ASSERT_EQ(3, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x2000, aSize));
    ASSERT(g_nFuncQueries > nBefore);
    /* an unload while the layout is being asked: the answer is used once, not cached */
    vt__kparams_forget(kp);
    g_bForgetInQuery = 1;
    g_nReusedParams = 2;
    ASSERT_EQ(2, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x2000, aSize));
    g_bForgetInQuery = 0;
    nBefore = g_nFuncQueries;
    ASSERT_EQ(2, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x2000, aSize));
    ASSERT(g_nFuncQueries > nBefore); /* asked again */
    nBefore = g_nFuncQueries;
    ASSERT_EQ(2, vt__kparams_sizes(kp, VT_KP_DRIVER, (const void *)0x2000, aSize));
    ASSERT_EQ(nBefore, g_nFuncQueries); /* and now cached */
    vt__kparams_forget(NULL);
    vt__kparams_close(kp);
    vt__ivl_close(ivl);
    CORE_LEAK_CHECK();
}

VT_TEST_LIST(T(forget_on_module_unload) T(sizes_queried_once_then_cached) T(sizes_without_queries_and_bounded)
             T(sizes_per_kernel) T(scan_param_array) T(scan_extra_buffer)
             T(stub_layout_from_runtime_query))
