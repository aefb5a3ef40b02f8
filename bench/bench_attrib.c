/* Benchmark of the attribution core: site capture (warm, new stack, cold symbolization, Python) and parameter scans. */
#include "intervals.h"
#include "modres.h"
#include "pyframes.h"
#include "pyframes_raw.h"
#include "stack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef VT_BENCH_PYTHON
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#endif

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rnd(uint64_t *pState)
{
    uint64_t x = *pState;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *pState = x;
}

/* Submit-or-free: what the glue does with a new record, minus the writer. */
static void consume(struct vt_hrec *rec)
{
    if (rec->type == VT_HREC_STACK) vt__frames_free(rec->u.stack.aFrame, rec->u.stack.nFrame);
}

/*
 * Recurse n levels, going at each level through one of four distinct
 * functions chosen by two bits of path, then capture: 4^n distinct native
 * stacks (two frames per level) from one entry point.
 */
static int64_t descend(struct vt__sites *s, int n, unsigned path, int depth);

#define STEP(name)                                                                   \
    __attribute__((noinline)) static int64_t name(struct vt__sites *s, int n, unsigned path, int depth) \
    {                                                                                \
        int64_t id = descend(s, n, path, depth);                                     \
        __asm__ volatile("" ::: "memory");                                           \
        return id;                                                                   \
    }
STEP(step0)
STEP(step1)
STEP(step2)
STEP(step3)

__attribute__((noinline)) static int64_t descend(struct vt__sites *s, int n, unsigned path, int depth)
{
    static int64_t (*const axStep[4])(struct vt__sites *, int, unsigned, int) = {step0, step1, step2, step3};
    struct vt_hrec rec;
    int64_t id;
    if (n == 0) {
        id = vt__site_capture(s, depth, 0, &rec);
        consume(&rec);
    } else {
        id = axStep[path & 3](s, n - 1, path >> 2, depth);
    }
    __asm__ volatile("" ::: "memory");
    return id;
}

static void bench_native(void)
{
    enum { LEVELS = 8, NWARM = 100000, NCOLD = 4096 };
    struct vt__sites *s = vt__sites_open(NULL);
    struct vt_sites_stats st;
    uint64_t t0, t1;
    unsigned i;
    descend(s, LEVELS, 0, 16); /* first capture: a new site */
    t0 = now_ns();
    for (i = 0; i < NWARM; i++) descend(s, LEVELS, 0, 16);
    t1 = now_ns();
    printf("capture native depth 16, known stack (dedup hit):   %8.0f ns\n", (double)(t1 - t0) / NWARM);
    for (i = 0; i < 3; i++) {
        static const int aDepth[3] = {4, 8, 32};
        unsigned r;
        uint64_t u0 = now_ns();
        for (r = 0; r < NWARM / 4; r++) descend(s, LEVELS * 2, 0, aDepth[i]);
        printf("capture native depth %2d, known stack:              %8.0f ns\n", aDepth[i],
               (double)(now_ns() - u0) / (NWARM / 4));
    }
    /* The same with glibc's backtrace() instead of the cached unwinder. */
    {
        struct vt_sites_config cfgBt;
        struct vt__sites *sBt;
        vt__sites_config_default(&cfgBt);
        cfgBt.fast_unwind = 0;
        sBt = vt__sites_open(&cfgBt);
        descend(sBt, LEVELS, 0, 16);
        t0 = now_ns();
        for (i = 0; i < NWARM / 4; i++) descend(sBt, LEVELS, 0, 16);
        t1 = now_ns();
        printf("  same with backtrace() instead of cached CFI:     %8.0f ns\n", (double)(t1 - t0) / (NWARM / 4));
        vt__sites_close(sBt);
    }
    /* Recursion cost alone, for reference: depth 0 captures nothing but still recurses. */
    t0 = now_ns();
    for (i = 0; i < NWARM; i++) descend(s, LEVELS, 0, 0);
    t1 = now_ns();
    printf("  (of which recursion to depth %d, no capture:      %8.0f ns)\n", LEVELS,
           (double)(t1 - t0) / NWARM);
    /* New stacks: hash miss, raw frames built, inserted (nothing is resolved in the capture). */
    t0 = now_ns();
    for (i = 1; i <= NCOLD; i++) descend(s, LEVELS, i, 16);
    t1 = now_ns();
    vt__sites_stats(s, &st);
    printf("capture native depth 16, new stack (raw frames):    %8.0f ns  (%llu stacks)\n",
           (double)(t1 - t0) / NCOLD, (unsigned long long)st.stacks);
    vt__sites_close(s);
    /* The writer thread's share (modres.h): resolving a return address not seen before. */
    {
        static void *const apFn[] = {(void *)step0, (void *)step1, (void *)step2, (void *)step3,
                                     (void *)descend, (void *)bench_native};
        struct vt__modres *m = vt__modres_open(1); /* a cache of one: (nearly) every lookup misses */
        struct vt__modinfo *mi;
        const char *zFn;
        uint64_t rel;
        t0 = now_ns();
        for (i = 0; i < NCOLD; i++)
            vt__modres_resolve(m, (uint64_t)(uintptr_t)apFn[i % 6] + 1 + i % 5, &rel, &zFn, &mi);
        t1 = now_ns();
        printf("writer: resolve a new return address (dladdr):     %8.0f ns\n", (double)(t1 - t0) / NCOLD);
        vt__modres_close(m);
    }
}

/* A realistic launch parameter block: a few device pointers among sizes, strides, scalars, padding. */
static void fill_block(uint64_t *aWord, int nWord, const uint64_t *aBase, int nLive, uint64_t *pSeed)
{
    int i, nPtr = 3 + (int)(rnd(pSeed) % 6);
    for (i = 0; i < nWord; i++) {
        switch (rnd(pSeed) % 4) {
        case 0: aWord[i] = rnd(pSeed) % 4096; break;                  /* sizes, strides */
        case 1: aWord[i] = 0; break;                                  /* padding, zero offsets */
        case 2: aWord[i] = 0x3f8000003f800000ull; break;              /* two floats */
        default: aWord[i] = (rnd(pSeed) % 64) << 32 | (rnd(pSeed) % 64); break; /* packed ints */
        }
    }
    for (i = 0; i < nPtr && i < nWord; i++)
        aWord[(rnd(pSeed) % (uint64_t)nWord)] = aBase[rnd(pSeed) % (uint64_t)nLive] + 256 * (uint64_t)i;
}

static void bench_scan(void)
{
    enum { NLIVE = 10000, NBLOCK = 64, NITER = 20000 };
    static uint64_t aBase[NLIVE], aBlock[NBLOCK][512];
    struct vt__ivl *idx = vt__ivl_open();
    uint64_t seed = 0x2545f4914f6cdd1dull, aOut[64], t0, t1, addr = 0x7f0000000000ull;
    const size_t aSize[] = {512, 1024, 4096};
    size_t k;
    int i, j;
    volatile int nSink = 0;
    for (i = 0; i < NLIVE; i++) { /* 512 B .. 2 MiB allocations, packed as a caching allocator would */
        uint64_t size = 512ull << (rnd(&seed) % 13);
        aBase[i] = addr;
        vt__ivl_insert(idx, addr, size);
        addr += size + (rnd(&seed) % 4) * 512;
    }
    for (k = 0; k < sizeof aSize / sizeof aSize[0]; k++) {
        int nWord = (int)(aSize[k] / 8);
        for (j = 0; j < NBLOCK; j++) fill_block(aBlock[j], nWord, aBase, NLIVE, &seed);
        t0 = now_ns();
        for (i = 0; i < NITER; i++) nSink += vt__ivl_scan(idx, aBlock[i % NBLOCK], aSize[k], aOut, 64);
        t1 = now_ns();
        printf("scan %4zu B block, %d live allocations:          %8.0f ns\n", aSize[k], NLIVE,
               (double)(t1 - t0) / NITER);
    }
    /* Worst case: every word of a 4 KB block points into a live allocation. */
    for (j = 0; j < 512; j++) aBlock[0][j] = aBase[rnd(&seed) % NLIVE];
    t0 = now_ns();
    for (i = 0; i < NITER / 10; i++) nSink += vt__ivl_scan(idx, aBlock[0], 4096, aOut, 64);
    t1 = now_ns();
    printf("scan 4096 B block, every word a device pointer:    %8.0f ns\n", (double)(t1 - t0) / (NITER / 10));
    /* Insert + remove at 10 k live (an allocation and its free). */
    t0 = now_ns();
    for (i = 0; i < NITER; i++) {
        uint64_t b = aBase[rnd(&seed) % NLIVE];
        vt__ivl_remove(idx, b);
        vt__ivl_insert(idx, b, 512);
    }
    t1 = now_ns();
    printf("remove + insert, %d live allocations:            %8.0f ns\n", NLIVE, (double)(t1 - t0) / NITER);
    (void)nSink;
    vt__ivl_close(idx);
}

#ifdef VT_BENCH_PYTHON
static struct vt__sites *pPySites;

static int nPyFrames; /* Python frames seen by the last reader-only run */

/* n site captures; the GIL is released around the loop when bNoGil (the raw reader then runs). */
static void site_loop(int n, int bNoGil)
{
    PyThreadState *pTs = bNoGil ? PyEval_SaveThread() : NULL;
    int i;
    for (i = 0; i < n; i++) {
        struct vt_hrec rec;
        vt__site_capture(pPySites, 16, 1, &rec);
        consume(&rec);
    }
    if (pTs) PyEval_RestoreThread(pTs);
}

/* n stack reads: through the C API (bRaw 0, GIL held) or raw; with every line decoded when bLines. */
static void reader_loop(int n, int bRaw, int bLines)
{
    struct vt__pyframe aApi[VT_SITE_MAX_PYDEPTH];
    struct vt__pyraw_frame aRaw[VT_SITE_MAX_PYDEPTH];
    int i, k;
    for (i = 0; i < n; i++) {
        if (bRaw) {
            nPyFrames = vt__pyraw_capture(aRaw, 32);
            for (k = 0; k < nPyFrames && bLines; k++) aRaw[k].line = vt__pyraw_code_line(aRaw[k].pCode, aRaw[k].lasti);
        } else {
            nPyFrames = vt__py_capture(aApi, 32);
            for (k = 0; k < nPyFrames && bLines; k++) aApi[k].line = vt__py_code_line(aApi[k].pCode, aApi[k].lasti);
        }
    }
}

/*
 * bench.capture(n, mode): n captures from the calling Python frame. mode 0:
 * site capture with the GIL held; 1: site capture with the GIL released (raw
 * reader); 2/3: C-API / raw reader only, frames; 4/5: the same and every line.
 */
static PyObject *py_capture(PyObject *self, PyObject *args)
{
    int n, mode = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "i|i", &n, &mode)) return NULL;
    if (mode <= 1) site_loop(n, mode);
    else reader_loop(n, mode & 1, mode >= 4);
    Py_RETURN_NONE;
}

static PyMethodDef aPyMethod[] = {{"capture", py_capture, METH_VARARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef pyModule = {PyModuleDef_HEAD_INIT, "vtbench", NULL, -1, aPyMethod,
                                      NULL, NULL, NULL, NULL};
static PyObject *py_init(void)
{
    return PyModule_Create(&pyModule);
}

static void bench_python(void)
{
    enum { N = 100000 };
    uint64_t t0, t1;
    char zCode[512];
    int mode;
    pPySites = vt__sites_open(NULL);
    PyImport_AppendInittab("vtbench", py_init);
    Py_InitializeEx(0);
    /* 10 Python frames deep, then N captures in one C call (same site each time). */
    PyRun_SimpleString("import vtbench\n"
                       "def f(n, k, mode=0):\n"
                       "    return f(n - 1, k, mode) if n else vtbench.capture(k, mode)\n"
                       "f(9, 1)\n");
    snprintf(zCode, sizeof zCode, "f(9, %d)\n", N);
    t0 = now_ns();
    PyRun_SimpleString(zCode);
    t1 = now_ns();
    printf("capture Python 10 frames + native 16, known stack: %8.0f ns\n", (double)(t1 - t0) / N);
    /* The capture 1000 lines into one function (a long training script's <module>, say). */
    PyRun_SimpleString("src = 'def long_body(k):\\n' + '    x = 0\\n' * 1000 + '    return f(9, k)\\n'\n"
                       "exec(src)\n"
                       "long_body(1)\n");
    snprintf(zCode, sizeof zCode, "long_body(%d)\n", N);
    t0 = now_ns();
    PyRun_SimpleString(zCode);
    t1 = now_ns();
    printf("  same, called from line 1000 of a function:       %8.0f ns\n", (double)(t1 - t0) / N);
    /* Without the GIL (as inside PyTorch's allocator): the raw reader supplies the frames. */
    PyRun_SimpleString("f(9, 1, 1)\n");
    snprintf(zCode, sizeof zCode, "f(9, %d, 1)\n", N);
    t0 = now_ns();
    PyRun_SimpleString(zCode);
    t1 = now_ns();
    printf("  same stack, GIL released (raw reader):           %8.0f ns\n", (double)(t1 - t0) / N);
    /* The readers alone on the same 11-frame stack, no site table (which caches lines per code). */
    for (mode = 2; mode <= 5; mode++) {
        static const char *const azWhat[] = {"C API (GIL held)", "raw reader", "C API + every line",
                                             "raw + every line"};
        snprintf(zCode, sizeof zCode, "f(9, %d, %d)\n", N, mode);
        t0 = now_ns();
        PyRun_SimpleString(zCode);
        t1 = now_ns();
        printf("read %2d Python frames, %-19s: %8.0f ns\n", nPyFrames, azWhat[mode - 2],
               (double)(t1 - t0) / N);
    }
    vt__sites_close(pPySites);
    Py_FinalizeEx();
}
#endif

int main(void)
{
    printf("vramtrace attribution bench (one thread; ns per operation)\n");
    bench_native();
#ifdef VT_BENCH_PYTHON
    bench_python();
#else
    printf("capture with Python frames: not built (python3-embed not found)\n");
#endif
    bench_scan();
    return 0;
}
