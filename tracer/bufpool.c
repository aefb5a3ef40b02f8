/* Activity buffers for CUPTI: one byte budget for every thread's buffer, full then small sizes, ownership by state. */
#include "bufpool.h"

#include <pthread.h>
#include <stdlib.h>

enum { ST_FREE = 0, ST_CUPTI = 1, ST_QUEUED = 2 };

struct buf {
    uint8_t *p;
    size_t size;
    int state;
};

struct vt__bufpool {
    size_t budget, size, smallSize;
    size_t bytes;        /* allocated, every state */
    size_t nAtCupti;
    struct buf *aBuf;    /* nBuf of nMax */
    size_t nBuf, nMax;
    struct vt__bufpool *pNextLeft; /* in g_pLeft's list once closed with buffers at CUPTI */
};

/* Pools closed while CUPTI held some of their buffers: kept, and reachable, for good. */
static struct vt__bufpool *g_pLeft;
static pthread_mutex_t g_leftMu = PTHREAD_MUTEX_INITIALIZER;

struct vt__bufpool *vt__bufpool_open(size_t budget, size_t size)
{
    struct vt__bufpool *pool;
    size &= ~(size_t)7;
    budget &= ~(size_t)7;
    if (size < 8 || budget < size) return NULL;
    pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pool->budget = budget;
    pool->size = size;
    pool->smallSize = (size / 8) & ~(size_t)7;
    if (pool->smallSize < VT_BUFPOOL_MIN_SMALL) pool->smallSize = size < VT_BUFPOOL_MIN_SMALL ? size : VT_BUFPOOL_MIN_SMALL;
    pool->nMax = budget / pool->smallSize;
    pool->aBuf = calloc(pool->nMax, sizeof *pool->aBuf);
    if (!pool->aBuf) {
        free(pool);
        return NULL;
    }
    return pool;
}

size_t vt__bufpool_capacity(const struct vt__bufpool *pool)
{
    return pool->nMax;
}

/* Index of buffer p, or -1. */
static long find(const struct vt__bufpool *pool, const uint8_t *p)
{
    size_t i;
    for (i = 0; i < pool->nBuf; i++)
        if (pool->aBuf[i].p == p) return (long)i;
    return -1;
}

uint8_t *vt__bufpool_get(struct vt__bufpool *pool, size_t *pSize)
{
    size_t i, size;
    uint8_t *p;
    *pSize = 0;
    /* an idle buffer first (the most recently freed: still warm) */
    for (i = pool->nBuf; i-- > 0;) {
        if (pool->aBuf[i].state != ST_FREE) continue;
        pool->aBuf[i].state = ST_CUPTI;
        pool->nAtCupti++;
        *pSize = pool->aBuf[i].size;
        return pool->aBuf[i].p;
    }
    /* a new one: full size up to half the budget, small ones beyond, none past it */
    size = pool->bytes + pool->size <= pool->budget / 2 ? pool->size : pool->smallSize;
    if (pool->bytes + size > pool->budget || pool->nBuf == pool->nMax) return NULL;
    p = aligned_alloc(8, size);
    if (!p) return NULL;
    pool->aBuf[pool->nBuf].p = p;
    pool->aBuf[pool->nBuf].size = size;
    pool->aBuf[pool->nBuf].state = ST_CUPTI;
    pool->nBuf++;
    pool->bytes += size;
    pool->nAtCupti++;
    *pSize = size;
    return p;
}

size_t vt__bufpool_returned(struct vt__bufpool *pool, const uint8_t *p)
{
    long i = find(pool, p);
    if (i < 0 || pool->aBuf[i].state != ST_CUPTI) return 0;
    pool->aBuf[i].state = ST_QUEUED;
    pool->nAtCupti--;
    return pool->aBuf[i].size;
}

void vt__bufpool_recycle(struct vt__bufpool *pool, const uint8_t *p)
{
    long i = find(pool, p);
    if (i >= 0 && pool->aBuf[i].state == ST_QUEUED) pool->aBuf[i].state = ST_FREE;
}

size_t vt__bufpool_at_cupti(const struct vt__bufpool *pool)
{
    return pool->nAtCupti;
}

size_t vt__bufpool_bytes(const struct vt__bufpool *pool)
{
    return pool->bytes;
}

size_t vt__bufpool_close(struct vt__bufpool *pool)
{
    size_t i, nLeft;
    if (!pool) return 0;
    nLeft = pool->nAtCupti;
    for (i = 0; i < pool->nBuf; i++) {
        if (pool->aBuf[i].state == ST_CUPTI) continue;
        free(pool->aBuf[i].p);
        pool->aBuf[i].p = NULL;
    }
    if (nLeft) {
        pthread_mutex_lock(&g_leftMu);
        pool->pNextLeft = g_pLeft;
        g_pLeft = pool;
        pthread_mutex_unlock(&g_leftMu);
        return nLeft;
    }
    free(pool->aBuf);
    free(pool);
    return 0;
}
