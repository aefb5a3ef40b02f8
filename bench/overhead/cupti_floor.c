/* The floor CUPTI client: an injection library enabling vramtrace's activity kinds and discarding every buffer. */
#include <cupti.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * What any CUPTI activity tracer pays before it stores anything: CUPTI's own
 * instrumentation of the same activity kinds vramtrace enables, buffer
 * hand-off and the exit flush. Buffers are 4 MiB (vramtrace's default) and
 * recycled through a small free list; their content is discarded unread,
 * unless CUPTI_FLOOR_WALK=1, which walks every record with
 * cuptiActivityGetNextRecord (the floor of a tracer that at least parses).
 * No API callbacks are enabled. At exit one line goes to stderr:
 * "cupti_floor: pid P: B buffers, N bytes[, R records], D dropped" (the
 * overhead driver checks it to know the client was attached).
 * Used as CUDA_INJECTION64_PATH=libvt_cupti_floor.so.
 */

#define FLOOR_EXPORT __attribute__((visibility("default")))
#define BUF_SIZE ((size_t)4 << 20)
#define POOL_MAX 64

static const CUpti_ActivityKind aKind[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY_POOL,
    CUPTI_ACTIVITY_KIND_MEMCPY,            CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_MARKER,            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_OVERHEAD,          CUPTI_ACTIVITY_KIND_DEVICE,
};

static atomic_int g_init;
static int g_walk;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *g_apPool[POOL_MAX];
static int g_nPool;
static atomic_uint_fast64_t g_nBuffers, g_nBytes, g_nRecords, g_nDropped;

/* CUPTI asks for a buffer: one from the free list, else a new 8-byte aligned one (NULL: CUPTI drops). */
static void CUPTIAPI buffer_requested(uint8_t **ppBuf, size_t *pSize, size_t *pMaxRecords)
{
    int saved = errno;
    uint8_t *p = NULL;
    pthread_mutex_lock(&g_lock);
    if (g_nPool > 0) p = g_apPool[--g_nPool];
    pthread_mutex_unlock(&g_lock);
    if (!p && posix_memalign((void **)&p, 8, BUF_SIZE) != 0) p = NULL;
    *ppBuf = p;
    *pSize = p ? BUF_SIZE : 0;
    *pMaxRecords = 0;
    errno = saved;
}

/* CUPTI returns a buffer: count it (and its records when walking), then recycle it unread. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t streamId, uint8_t *pBuf, size_t size,
                                     size_t validSize)
{
    int saved = errno;
    size_t nDropped = 0;
    (void)size;
    if (cuptiActivityGetNumDroppedRecords(ctx, streamId, &nDropped) == CUPTI_SUCCESS && nDropped)
        atomic_fetch_add(&g_nDropped, nDropped);
    if (pBuf) {
        if (validSize) {
            atomic_fetch_add(&g_nBuffers, 1);
            atomic_fetch_add(&g_nBytes, validSize);
        }
        if (g_walk && validSize) {
            CUpti_Activity *pRec = NULL;
            uint64_t n = 0;
            while (cuptiActivityGetNextRecord(pBuf, validSize, &pRec) == CUPTI_SUCCESS) n++;
            atomic_fetch_add(&g_nRecords, n);
        }
        pthread_mutex_lock(&g_lock);
        if (g_nPool < POOL_MAX) {
            g_apPool[g_nPool++] = pBuf;
            pBuf = NULL;
        }
        pthread_mutex_unlock(&g_lock);
        free(pBuf);
    }
    errno = saved;
}

/* atexit: forced flush (as a tracer must to lose nothing), stop the kinds, print the summary line. */
static void at_exit(void)
{
    int saved = errno;
    size_t i;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (i = 0; i < sizeof aKind / sizeof aKind[0]; i++) cuptiActivityDisable(aKind[i]);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (g_walk)
        fprintf(stderr, "cupti_floor: pid %ld: %llu buffers, %llu bytes, %llu records, %llu dropped\n",
                (long)getpid(), (unsigned long long)atomic_load(&g_nBuffers),
                (unsigned long long)atomic_load(&g_nBytes), (unsigned long long)atomic_load(&g_nRecords),
                (unsigned long long)atomic_load(&g_nDropped));
    else
        fprintf(stderr, "cupti_floor: pid %ld: %llu buffers, %llu bytes, %llu dropped\n", (long)getpid(),
                (unsigned long long)atomic_load(&g_nBuffers), (unsigned long long)atomic_load(&g_nBytes),
                (unsigned long long)atomic_load(&g_nDropped));
    errno = saved;
}

/*
 * Called once by the CUDA driver (CUDA_INJECTION64_PATH). Registers the buffer
 * callbacks, enables the kinds (CONCURRENT_KERNEL first, as vramtrace does) and
 * the exit flush. On a CUPTI error prints one "cupti_floor:" line and leaves
 * the process untraced. Returns 1.
 */
FLOOR_EXPORT int InitializeInjection(void)
{
    int saved = errno, nFail = 0;
    const char *zWalk = getenv("CUPTI_FLOOR_WALK");
    CUptiResult r;
    size_t i;
    if (atomic_exchange(&g_init, 1)) goto done;
    g_walk = zWalk && zWalk[0] == '1';
    r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        const char *zErr = "?";
        cuptiGetResultString(r, &zErr);
        fprintf(stderr, "cupti_floor: cannot register activity buffers (%s); not attached\n", zErr);
        goto done;
    }
    for (i = 0; i < sizeof aKind / sizeof aKind[0]; i++)
        if (cuptiActivityEnable(aKind[i]) != CUPTI_SUCCESS) nFail++;
    if (nFail) fprintf(stderr, "cupti_floor: %d activity kinds could not be enabled\n", nFail);
    if (atexit(at_exit) != 0) {
        for (i = 0; i < sizeof aKind / sizeof aKind[0]; i++) cuptiActivityDisable(aKind[i]);
        fprintf(stderr, "cupti_floor: cannot register the exit handler; not attached\n");
    }
done:
    errno = saved;
    return 1;
}
