/* The allocator replayed: a device's requests through a model of its allocator at a batch scale, for what would fit. */
#include "analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * The stream: every lifetime of a device in a tensor-level trace, taken as it ends (its category
 * needs its end) with the breakdown's sequence numbers of its beginning and its end (one order for
 * every beginning and end of the replay). Replayed at scale k, a lifetime of a category that grows
 * with the batch asks for ceil(bytes x k), the others for their bytes, through the model of the
 * allocator that served it, against the memory the allocators may use (the device less what the
 * trace does not hold):
 *
 *  - PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp) for its blocks: requests
 *    rounded up to 512 B; up to 1 MiB from the small pool, whose segments are 2 MiB, larger ones
 *    from the large pool, whose segments are 20 MiB for requests under 10 MiB and the request
 *    rounded up to 2 MiB above; the smallest free block of the pool that holds the request (best
 *    fit), split when the rest is at least 512 B (small) or more than 1 MiB (large); a freed block
 *    merged with free neighbours of its segment; when a new segment does not fit, every wholly
 *    free segment is released and the segment tried once more, and the request fails only then.
 *    max_split_size_mb (PYTORCH_ALLOC_CONF) as PyTorch applies it: blocks at least that large are
 *    not split and serve only requests of that size or up to 20 MiB less.
 *    With expandable_segments:True (cfg->bExpandable), one segment per pool that grows and
 *    shrinks by pages instead (ExpandableSegment: 2 MiB pages for the small pool, 20 MiB for the
 *    large one, each a cuMemCreate of its own): free pages are unmapped before a request fails, so
 *    a block fails only when the pages of what is live with it do not fit (expand_take).
 *  - The cudaMallocAsync pool for cudaMallocAsync's allocations: the driver's pool keeps chunks of
 *    at least the smallest growth the trace's pool showed (2 MiB granularity, the request rounded
 *    up to it above), best fit over the free pieces of every chunk, split at any rest of 512 B or
 *    more; PyTorch's backend does not retry a failed cudaMallocAsync, so the driver's release of
 *    wholly free chunks before it reports out of memory is the one retry modelled.
 *  - Direct: cudaMalloc by a library (NCCL, cuBLAS), the runtime's own memory: the bytes, no cache.
 *
 * One stream (the trace does not say which stream a block was on). Fragmentation can make a batch
 * fail and a larger one run again, so the answer is the first failure above the traced batch less
 * one: where n x VT_FS_FINE replays fit in VT_FS_FINE_WORK lifetimes replayed, the scale is climbed from
 * the traced one in steps of a fortieth (2.5 %; a window of failures narrower than that may be
 * missed) until one fails, and by quarters once VT_FS_FINE_WORK / n replays are spent; a larger stream
 * grows from a first guess by quarters (a window below it is not looked for). Then bisection to
 * one batch or a thousandth of it, at most VT_FS_REPLAYS replays more, each one pass over the
 * stream (early out at the first failure), and VT_FS_FIT_WORK lifetimes replayed in all (a stream
 * of more than VT_FS_FIT_WORK / VT_FS_REPLAYS lifetimes gets fewer replays, and where they end
 * before the bracket closes the answer is an estimate between two batches): time
 * O(replays x n log m), n lifetimes, m free blocks (bench_allocsim, load 9 on
 * 2 cores, 2026-11-29: 0.67 s a replay of 1 M lifetimes, 12 replays in 8.0 s; 4 M lifetimes 4
 * replays in 14 s); memory 40 bytes a
 * lifetime kept from the replay to the fit, about 60 while the fit runs, at most VT_FS_MAX
 * lifetimes (a larger trace keeps the proportional estimate and says so).
 */

#define KSMALL ((int64_t)1 << 20)        /* kSmallSize: the largest small request */
#define KSMALLBUF ((int64_t)2 << 20)     /* kSmallBuffer: a small segment */
#define KLARGEBUF ((int64_t)20 << 20)    /* kLargeBuffer: a large segment for 1-10 MiB requests */
#define KMINLARGE ((int64_t)10 << 20)    /* kMinLargeAlloc */
#define KROUND ((int64_t)2 << 20)        /* kRoundLarge, and the pool's granularity */
#define KMINBLOCK ((int64_t)512)         /* kMinBlockSize */

enum { P_SMALL = 0, P_LARGE, P_POOL };   /* model pools: the caching allocator's two, the async pool */

struct fsrec {
    int64_t bytes, allocSeq, endSeq;     /* endSeq -1: live at the end */
    int acct, site;
    int oom;                             /* a request that failed: its OOM event (t->aOom), -1 a lifetime */
    unsigned char kind, bScales;         /* bScales VT_FS_SCALES_UNKNOWN: as its call site's told lifetimes */
};

struct vt_fitstream {
    struct fsrec *a;
    int64_t n, nAlloc;
    int bOver;                           /* more than VT_FS_MAX lifetimes: dropped */
};

/* A block of the model: a piece of a segment (or chunk), in address order within it. */
struct mblk {
    int64_t addr, size;
    int prev, next;                      /* neighbours in its segment, -1 none */
    int l, r;                            /* the free blocks' treap */
    unsigned prio;
    unsigned char state, pool;           /* state: 0 in use, 1 free, 2 slot unused */
};

struct model {
    struct mblk *aB;
    int nB;
    int *aSlot, nSlot;                   /* unused block slots */
    int64_t nBAlloc, nSlotAlloc;
    int root;                            /* treap of free blocks by (pool, size, addr) */
    int64_t reserved, direct, limit, peak, vaNext, maxSplit, chunk;
    int64_t aLiveE[2], expand;           /* expandable segments: live bytes per pool, the pages they map */
    unsigned rng;
};

/* Array a (elements of sz bytes, *pnAlloc of them) with room for element n, doubled when full; NULL when out of
 * memory (a is then still the caller's). */
static void *room(void *a, int64_t *pnAlloc, int64_t n, size_t sz)
{
    int64_t nNew = *pnAlloc ? 2 * *pnAlloc : 1024;
    void *aNew;
    if (n < *pnAlloc) return a;
    if (!(aNew = realloc(a, sz * (size_t)nNew))) return NULL;
    *pnAlloc = nNew;
    return aNew;
}

/* Whether API api (a runtime or driver allocation call) allocates from the cudaMallocAsync pool. */
static int api_pooled(int api)
{
    return api == 3 || api == 5 || api == 22 || api == 24;
}

/* A new record at the end of t's stream (zeroed), or NULL: out of memory (*pRc -1), or no more kept (*pRc 0). */
static struct fsrec *rec_new(struct vt_trace *t, int *pRc)
{
    struct vt_fitstream *s = t->pFs;
    struct fsrec *aNew;
    *pRc = -1;
    if (!s && !(s = t->pFs = calloc(1, sizeof *s))) return NULL;
    *pRc = 0;
    if (s->bOver) return NULL;
    if (s->n == VT_FS_MAX) {
        s->bOver = 1;
        free(s->a);
        s->a = NULL;
        s->n = s->nAlloc = 0;
        return NULL;
    }
    if (!(aNew = room(s->a, &s->nAlloc, s->n, sizeof *s->a))) {
        *pRc = -1;
        return NULL;
    }
    s->a = aNew;
    memset(&s->a[s->n], 0, sizeof *s->a);
    return &s->a[s->n++];
}

int vt__fs_add(struct vt_trace *t, const struct vt_life *l, int64_t endSeq, int bScales)
{
    struct fsrec *r;
    int rc;
    if (l->acct < 0) return 0;
    if (!(r = rec_new(t, &rc))) return rc;
    r->bytes = l->bytes > 0 ? l->bytes : 0;
    r->allocSeq = l->bdSeq;
    r->endSeq = l->status == VT_LIFE_LIVE_AT_END ? -1 : endSeq;
    r->acct = l->acct;
    r->site = l->site;
    r->oom = -1;
    r->bScales = (unsigned char)(bScales == VT_FS_SCALES_UNKNOWN ? bScales : bScales != 0);
    if (l->bTensor) r->kind = VT_FS_CACHED;
    else if (api_pooled(l->allocApi)) r->kind = VT_FS_POOL;
    else r->kind = VT_FS_DIRECT;
    return 0;
}

int vt__fs_add_failed(struct vt_trace *t, int iOom, int64_t seq, int bCached)
{
    const struct vt_oom *o = &t->aOom[iOom];
    struct fsrec *r;
    int rc;
    if (o->device < 0 || o->requested <= 0) return 0;
    if (!(r = rec_new(t, &rc))) return rc;
    r->bytes = o->requested;
    r->allocSeq = seq;
    r->endSeq = seq + 1;
    r->acct = o->device;
    r->site = o->site;
    r->oom = iOom;
    r->bScales = 1;
    r->kind = api_pooled(o->api) ? VT_FS_POOL : bCached ? VT_FS_CACHED : VT_FS_DIRECT;
    return 0;
}

/* Whether OOM event iOom of t is the judged attempt of a failure the job did not recover from: a request whose
 * demand the trace's allocations do not hold. */
static int failed_unmet(const struct vt_trace *t, int iOom)
{
    for (int i = 0; i < t->nFail; i++)
        if (iOom >= t->aFail[i].iFirst && iOom < t->aFail[i].iFirst + t->aFail[i].nAttempt)
            return !t->aFail[i].bRecovered && t->aFail[i].iJudged == iOom;
    return 0;
}

void vt__fs_free(struct vt_trace *t)
{
    if (!t->pFs) return;
    free(t->pFs->a);
    free(t->pFs);
    t->pFs = NULL;
}

/* ---- the free blocks' treap, keyed by (pool, size, addr) ---- */

/* Whether block a orders before block b. */
static int key_less(const struct mblk *aB, int a, int b)
{
    if (aB[a].pool != aB[b].pool) return aB[a].pool < aB[b].pool;
    if (aB[a].size != aB[b].size) return aB[a].size < aB[b].size;
    return aB[a].addr < aB[b].addr;
}

/* Split treap x into keys before block k (*pl) and the rest (*pr), without recursion. */
static void tsplit(struct mblk *aB, int x, int k, int *pl, int *pr)
{
    while (x >= 0) {
        if (key_less(aB, x, k)) {
            *pl = x;
            pl = &aB[x].r;
            x = aB[x].r;
        } else {
            *pr = x;
            pr = &aB[x].l;
            x = aB[x].l;
        }
    }
    *pl = *pr = -1;
}

/* Treap of a (all keys before b's) and b, without recursion. */
static int tmerge(struct mblk *aB, int a, int b)
{
    int root = -1, *p = &root;
    while (a >= 0 && b >= 0) {
        if (aB[a].prio > aB[b].prio) {
            *p = a;
            p = &aB[a].r;
            a = aB[a].r;
        } else {
            *p = b;
            p = &aB[b].l;
            b = aB[b].l;
        }
    }
    *p = a >= 0 ? a : b;
    return root;
}

/* Put block b among the free ones: down to where its priority places it, the subtree there split around it
 * (the same treap as a split of the whole and two merges: keys and priorities decide a treap's shape). */
static void free_put(struct model *m, int b)
{
    struct mblk *aB = m->aB;
    int *p = &m->root;
    m->rng = m->rng * 1103515245u + 12345u;
    aB[b].prio = m->rng;
    aB[b].state = 1;
    while (*p >= 0 && aB[*p].prio > aB[b].prio) p = key_less(aB, b, *p) ? &aB[*p].l : &aB[*p].r;
    tsplit(aB, *p, b, &aB[b].l, &aB[b].r);
    *p = b;
}

/* Take free block b, the one *pLink (the treap's root or a block's child) points to, off the free ones. */
static void free_unlink(struct model *m, int b, int *pLink)
{
    *pLink = tmerge(m->aB, m->aB[b].l, m->aB[b].r);
    m->aB[b].state = 0;
}

/* Take free block b off the free ones (it is then in use or gone). */
static void free_take(struct model *m, int b)
{
    int *p = &m->root;
    while (*p != b) p = key_less(m->aB, b, *p) ? &m->aB[*p].l : &m->aB[*p].r;
    free_unlink(m, b, p);
}

/* The smallest free block of pool holding size (lowest address among equals), -1 none; *ppLink what points to
 * it, for free_unlink while the treap is unchanged. */
static int free_find(struct model *m, int pool, int64_t size, int **ppLink)
{
    int *p = &m->root, best = -1;
    *ppLink = NULL;
    while (*p >= 0) {
        struct mblk *x = &m->aB[*p];
        if (x->pool > pool || (x->pool == pool && x->size >= size)) {
            best = *p;
            *ppLink = p;
            p = &x->l;
        } else {
            p = &x->r;
        }
    }
    return best >= 0 && m->aB[best].pool == pool ? best : -1;
}

/* ---- blocks and segments ---- */

/* A block slot (fields the caller's), -1 when out of memory. */
static int blk_new(struct model *m)
{
    struct mblk *aNew;
    if (m->nSlot) return m->aSlot[--m->nSlot];
    if (m->nB == INT32_MAX || !(aNew = room(m->aB, &m->nBAlloc, m->nB, sizeof *m->aB))) return -1;
    m->aB = aNew;
    return m->nB++;
}

/* Slot b is unused again. 0 or -1. */
static int blk_drop(struct model *m, int b)
{
    int *aNew = room(m->aSlot, &m->nSlotAlloc, m->nSlot, sizeof *m->aSlot);
    if (!aNew) return -1;
    m->aSlot = aNew;
    m->aB[b].state = 2;
    m->aSlot[m->nSlot++] = b;
    return 0;
}

/* Give back every wholly free segment (cudaFree of cached segments; a pool trimmed). 0 or -1. */
static int release_cached(struct model *m)
{
    for (int b = 0; b < m->nB; b++) {
        struct mblk *p = &m->aB[b];
        if (p->state != 1 || p->prev >= 0 || p->next >= 0) continue;
        free_take(m, b);
        m->reserved -= p->size;
        if (blk_drop(m, b) != 0) return -1;
    }
    return 0;
}

/* Whether n more bytes fit beside what the model holds. */
static int fits(const struct model *m, int64_t n)
{
    return m->reserved + m->direct + m->expand + n <= m->limit;
}

/* Note the level for the peak. */
static void level(struct model *m)
{
    if (m->reserved + m->direct + m->expand > m->peak) m->peak = m->reserved + m->direct + m->expand;
}

/* Bytes of the pages that n bytes of pool p's expandable segment map (its segment size: kSmallBuffer, kLargeBuffer). */
static int64_t pages(int p, int64_t n)
{
    int64_t page = p == P_SMALL ? KSMALLBUF : KLARGEBUF;
    return (n + page - 1) / page * page;
}

/*
 * A block of `bytes` (sign: +1 allocated, -1 freed) in the caching allocator's expandable
 * segments: its pool's one segment grows by pages; the free pages are unmapped before a request
 * fails, so what must fit is the pages of what is live. 1 served, 0 it does not fit (nothing
 * changed).
 */
static int expand_take(struct model *m, int64_t bytes, int sign)
{
    int64_t size = bytes < KMINBLOCK ? KMINBLOCK : (bytes + KMINBLOCK - 1) / KMINBLOCK * KMINBLOCK, was = m->expand;
    int pool = size <= KSMALL ? 0 : 1;
    m->aLiveE[pool] += sign * size;
    m->expand = pages(P_SMALL, m->aLiveE[0]) + pages(P_LARGE, m->aLiveE[1]);
    if (sign > 0 && m->reserved + m->direct + m->expand > m->limit) {
        int64_t over = m->expand;
        m->expand = was;
        if (release_cached(m) != 0 || !fits(m, over - was)) { /* a cudaMallocAsync pool's free chunks first */
            m->expand = over;
            level(m); /* the level it would have reached, for the peak */
            m->aLiveE[pool] -= size;
            m->expand = was;
            return 0;
        }
        m->expand = over;
    }
    level(m);
    return 1;
}

/*
 * A new segment of `size` in pool (after releasing the cached segments when it does not fit):
 * its one block, free-listed off; -2 when it does not fit even then, -1 out of memory.
 */
static int seg_new(struct model *m, int pool, int64_t size)
{
    int b;
    if (!fits(m, size)) {
        if (release_cached(m) != 0) return -1;
        if (!fits(m, size)) {
            m->reserved += size; /* the level it would have reached, for the peak */
            level(m);
            m->reserved -= size;
            return -2;
        }
    }
    if ((b = blk_new(m)) < 0) return -1;
    m->aB[b].addr = m->vaNext;
    m->aB[b].size = size;
    m->aB[b].prev = m->aB[b].next = -1;
    m->aB[b].pool = (unsigned char)pool;
    m->aB[b].state = 0;
    m->vaNext += size;
    m->reserved += size;
    level(m);
    return b;
}

/* The caching allocator's segment for a request of size in pool (get_allocation_size). */
static int64_t seg_size(int pool, int64_t size)
{
    if (pool == P_SMALL) return KSMALLBUF;
    if (size < KMINLARGE) return KLARGEBUF;
    return (size + KROUND - 1) / KROUND * KROUND;
}

/* A block for a request of `bytes` of kind (VT_FS_CACHED or VT_FS_POOL): its slot; -2 out of device memory, -1 out
 * of memory. */
static int model_malloc(struct model *m, int kind, int64_t bytes)
{
    int64_t size = bytes < KMINBLOCK ? KMINBLOCK : (bytes + KMINBLOCK - 1) / KMINBLOCK * KMINBLOCK, rest;
    int pool = kind == VT_FS_POOL ? P_POOL : size <= KSMALL ? P_SMALL : P_LARGE, b, bSplit, *pLink;
    b = free_find(m, pool, size, &pLink);
    if (b >= 0 && pool != P_POOL && m->maxSplit > 0) { /* get_free_block's oversize rules */
        if (size < m->maxSplit && m->aB[b].size >= m->maxSplit) b = -1;
        else if (size >= m->maxSplit && m->aB[b].size >= size + KLARGEBUF) b = -1;
    }
    if (b >= 0) {
        free_unlink(m, b, pLink);
    } else {
        int64_t seg = pool == P_POOL ? (size + KROUND - 1) / KROUND * KROUND : seg_size(pool, size);
        if (pool == P_POOL && seg < m->chunk) seg = m->chunk;
        if ((b = seg_new(m, pool, seg)) < 0) return b;
    }
    rest = m->aB[b].size - size;
    if (pool == P_LARGE) bSplit = (m->maxSplit <= 0 || size < m->maxSplit) && rest > KSMALL;
    else bSplit = rest >= KMINBLOCK;
    if (bSplit) {
        int r = blk_new(m);
        if (r < 0) return -1;
        struct mblk *p = &m->aB[b];
        m->aB[r].addr = p->addr + size;
        m->aB[r].size = rest;
        m->aB[r].prev = b;
        m->aB[r].next = p->next;
        m->aB[r].pool = p->pool;
        if (p->next >= 0) m->aB[p->next].prev = r;
        p->next = r;
        p->size = size;
        free_put(m, r);
    }
    return b;
}

/* Block r joined onto its left neighbour l in their segment (r's slot unused again). 0 or -1. */
static int join(struct model *m, int l, int r)
{
    m->aB[l].size += m->aB[r].size;
    m->aB[l].next = m->aB[r].next;
    if (m->aB[r].next >= 0) m->aB[m->aB[r].next].prev = l;
    return blk_drop(m, r);
}

/* Block b freed: merged with free neighbours of its segment, free-listed. 0 or -1. */
static int model_free(struct model *m, int b)
{
    int n = m->aB[b].next, p = m->aB[b].prev;
    if (n >= 0 && m->aB[n].state == 1) {
        free_take(m, n);
        if (join(m, b, n) != 0) return -1;
    }
    if (p >= 0 && m->aB[p].state == 1) {
        free_take(m, p);
        if (join(m, p, b) != 0) return -1;
        b = p;
    }
    free_put(m, b);
    return 0;
}

/* ---- the replay ---- */

/* A device's part of the stream: its records in order of beginning (aBegin) and of end (aEnd). */
struct devstream {
    const struct fsrec *a;
    int64_t *aBegin, *aEnd, nBegin, nEnd;
    int *aSlot;                          /* per record: its block in the model, -1 direct, -3 in an expandable segment */
    unsigned char *aScale;               /* per record: whether it grows with the batch */
};

/* ds->aBegin in order of the records' beginnings: a radix sort of their sequence numbers (each is unique, so any
 * sort gives this order) by 16 bits a pass, as many passes as their range needs; 8 bytes a record beside it. 0 or
 * -1. */
static int begin_sort(struct devstream *ds)
{
    int64_t n = ds->nBegin, lo = INT64_MAX, hi = INT64_MIN, *a = ds->aBegin;
    int64_t *aTo = malloc(sizeof *aTo * (size_t)(n + 1)), *aPos = malloc(sizeof *aPos * ((size_t)1 << 16));
    int rc = aTo && aPos ? 0 : -1;
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        if (ds->a[a[i]].allocSeq < lo) lo = ds->a[a[i]].allocSeq;
        if (ds->a[a[i]].allocSeq > hi) hi = ds->a[a[i]].allocSeq;
    }
    for (int shift = 0; rc == 0 && n > 1 && shift < 64 && ((uint64_t)hi - (uint64_t)lo) >> shift; shift += 16) {
        int64_t *aSwap, sum = 0;
        memset(aPos, 0, sizeof *aPos * ((size_t)1 << 16));
        for (int64_t i = 0; i < n; i++) aPos[((uint64_t)ds->a[a[i]].allocSeq - (uint64_t)lo) >> shift & 0xffff]++;
        for (int d = 0; d < 1 << 16; d++) {
            int64_t c = aPos[d];
            aPos[d] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++) aTo[aPos[((uint64_t)ds->a[a[i]].allocSeq - (uint64_t)lo) >> shift & 0xffff]++] = a[i];
        aSwap = a, a = aTo, aTo = aSwap;
    }
    if (a != ds->aBegin) { /* an odd number of passes: the order is in the other array */
        aTo = ds->aBegin;
        ds->aBegin = a;
    }
    free(aTo);
    free(aPos);
    return rc;
}

/*
 * Replay ds at scale k with limit bytes for the allocators (settings in cfg). 1 when every request
 * was served, 0 when one failed, -1 out of memory; *pPeak the model's highest level.
 */
static int replay(const struct devstream *ds, double k, const struct vt_fsconfig *cfg, int64_t limit, int64_t *pPeak)
{
    struct model m;
    int64_t i = 0, j = 0;
    int rc = 1;
    memset(&m, 0, sizeof m);
    m.root = -1;
    m.limit = limit;
    m.maxSplit = cfg->maxSplit;
    m.chunk = cfg->poolChunk > KROUND ? cfg->poolChunk : KROUND;
    m.rng = 2463534242u;
    while (rc == 1 && (i < ds->nBegin || j < ds->nEnd)) {
        /* the next event by sequence: a beginning, or an end */
        int bBegin = j >= ds->nEnd || (i < ds->nBegin && ds->a[ds->aBegin[i]].allocSeq < ds->a[ds->aEnd[j]].endSeq);
        int64_t x = bBegin ? ds->aBegin[i++] : ds->aEnd[j++];
        const struct fsrec *r = &ds->a[x];
        int64_t n = ds->aScale[x] ? (int64_t)ceil((double)r->bytes * k) : r->bytes;
        if (!bBegin) {
            if (ds->aSlot[x] == -1) m.direct -= n;
            else if (ds->aSlot[x] == -3) expand_take(&m, n, -1);
            else if (ds->aSlot[x] >= 0 && model_free(&m, ds->aSlot[x]) != 0) rc = -1;
            continue;
        }
        ds->aSlot[x] = -1;
        if (r->kind == VT_FS_CACHED && cfg->bExpandable) {
            if (expand_take(&m, n, 1)) ds->aSlot[x] = -3;
            else rc = 0;
        } else if (r->kind == VT_FS_DIRECT) {
            if (!fits(&m, n)) rc = 0;
            m.direct += n;
            level(&m);
        } else {
            int b = model_malloc(&m, r->kind, n);
            if (b == -2) rc = 0;
            else if (b < 0) rc = -1;
            else ds->aSlot[x] = b;
        }
    }
    *pPeak = m.peak;
    free(m.aB);
    free(m.aSlot);
    return rc;
}

/*
 * Whether each record of ds grows with the batch, into ds->aScale: as its category says; one whose
 * category tells nothing of it (memory kept across steps that no frame names, or live at the end
 * of the trace's last step: the batch of a step made before the first step the trace marks, the
 * last step's batch and outputs) grows as the lifetimes of its call site whose category was told
 * do, by the larger share of their bytes; not at all when its site has none told. 0 or -1.
 */
static int settle_scales(struct devstream *ds)
{
    int nSite = 0;
    int64_t *aSite; /* per site: bytes told to grow, bytes told not to */
    for (int64_t i = 0; i < ds->nBegin; i++)
        if (ds->a[ds->aBegin[i]].site >= nSite) nSite = ds->a[ds->aBegin[i]].site + 1;
    if (!(aSite = calloc((size_t)nSite + 1, 2 * sizeof *aSite))) return -1;
    for (int64_t i = 0; i < ds->nBegin; i++) {
        const struct fsrec *r = &ds->a[ds->aBegin[i]];
        if (r->bScales != VT_FS_SCALES_UNKNOWN && r->site >= 0 && r->oom < 0) aSite[2 * r->site + !r->bScales] += r->bytes;
    }
    for (int64_t i = 0; i < ds->nBegin; i++) {
        int64_t x = ds->aBegin[i];
        const struct fsrec *r = &ds->a[x];
        if (r->bScales != VT_FS_SCALES_UNKNOWN) ds->aScale[x] = r->bScales;
        else ds->aScale[x] = r->site >= 0 && aSite[2 * r->site] > aSite[2 * r->site + 1];
    }
    free(aSite);
    return 0;
}

/* Release what stream_open made. */
static void stream_close(struct devstream *ds)
{
    free(ds->aBegin);
    free(ds->aEnd);
    free(ds->aSlot);
    free(ds->aScale);
}

/*
 * Device acct's part of s into ds, in order, with whether each record grows (*pRes's bPool and
 * bCached set). 0; 2 no record of acct; -1 out of memory. stream_close releases ds on any path.
 */
static int stream_open(const struct vt_trace *t, int acct, struct devstream *ds, struct vt_fsresult *pRes)
{
    const struct vt_fitstream *s = t->pFs;
    int rc = 0;
    memset(ds, 0, sizeof *ds);
    ds->a = s->a;
    ds->aBegin = malloc(sizeof *ds->aBegin * (size_t)(s->n + 1));
    ds->aEnd = malloc(sizeof *ds->aEnd * (size_t)(s->n + 1));
    ds->aSlot = malloc(sizeof *ds->aSlot * (size_t)(s->n + 1));
    ds->aScale = malloc((size_t)(s->n + 1));
    if (!ds->aBegin || !ds->aEnd || !ds->aSlot || !ds->aScale) rc = -1;
    for (int64_t i = 0; rc == 0 && i < s->n; i++) {
        if (s->a[i].acct != acct || (s->a[i].oom >= 0 && !failed_unmet(t, s->a[i].oom))) continue;
        if (s->a[i].oom >= 0) pRes->bFailed = 1;
        ds->aBegin[ds->nBegin++] = i;
        if (s->a[i].endSeq >= 0) ds->aEnd[ds->nEnd++] = i; /* the records came in order of their ends */
        if (s->a[i].kind == VT_FS_POOL) pRes->bPool = 1;
        if (s->a[i].kind == VT_FS_CACHED) pRes->bCached = 1;
    }
    if (rc == 0 && ds->nBegin == 0) rc = 2;
    if (rc == 0) rc = begin_sort(ds) == 0 ? settle_scales(ds) : -1;
    return rc;
}

int vt__fs_need(const struct vt_trace *t, int acct, const struct vt_fsconfig *cfg, int64_t hiLimit,
                struct vt_fsneed *pNeed)
{
    const struct vt_fitstream *s = t->pFs;
    struct devstream ds;
    struct vt_fsresult res;
    int64_t lo = 0, hi = hiLimit, peak, maxReplay = 0;
    int rc, ok;
    memset(pNeed, 0, sizeof *pNeed);
    pNeed->need = pNeed->slack = -1;
    if (!s || s->bOver) return s && s->bOver ? 1 : 2;
    memset(&res, 0, sizeof res);
    rc = stream_open(t, acct, &ds, &res);
    if (rc == 0) { /* the replays the work bound allows, the first included */
        maxReplay = ds.nBegin > 0 ? VT_FS_NEED_WORK / ds.nBegin : 0;
        if (maxReplay > VT_FS_NEED_REPLAYS) maxReplay = VT_FS_NEED_REPLAYS;
        if (maxReplay < 1) rc = 1; /* not even one replay */
    }
    if (rc == 0 && (ok = replay(&ds, 1.0, cfg, hi, &peak)) != 1) rc = ok < 0 ? -1 : 3;
    if (rc == 0) { /* served: it never needed more than the level it reached */
        pNeed->nReplay = 1;
        if (peak < hi) hi = peak;
    }
    while (rc == 0 && pNeed->nReplay < maxReplay && hi - lo > ((int64_t)1 << 20)) { /* lo fails, hi runs */
        int64_t mid = lo + (hi - lo) / 2;
        if ((ok = replay(&ds, 1.0, cfg, mid, &peak)) < 0) rc = -1;
        else if (ok) hi = peak < mid ? peak : mid;
        else lo = mid;
        pNeed->nReplay++;
    }
    if (rc == 0) {
        pNeed->need = hi;
        pNeed->slack = hi - lo;
        pNeed->bBounded = hi - lo > ((int64_t)1 << 20);
    }
    stream_close(&ds);
    return rc;
}

int vt__fs_fit(const struct vt_trace *t, int acct, const struct vt_fsconfig *cfg, int64_t limit, int64_t batch,
               double guess, struct vt_fsresult *pRes)
{
    const struct vt_fitstream *s = t->pFs;
    struct devstream ds;
    int64_t units = batch > 0 ? batch : 1000, lo, hi = -1, x, peak, fineMax, workMax;
    int rc = 0, ok, maxReplay;
    memset(pRes, 0, sizeof *pRes);
    pRes->maxScale = pRes->hiScale = -1;
    pRes->hiBatch = -1;
    if (!s || s->bOver) return s && s->bOver ? 1 : 2;
    rc = stream_open(t, acct, &ds, pRes);
    if (rc == 0) { /* the traced batch must run in the model; then grow from the guess until one fails, bisect */
        ok = replay(&ds, 1.0, cfg, limit, &pRes->peakAtOne);
        pRes->nReplay = 1;
        if (ok < 0) rc = -1;
        else if (ok == 0 && !pRes->bFailed) rc = 3; /* it ran: the model, or the memory asked about, is short */
        else if (ok == 0) pRes->bBelow = 1;
    }
    if (rc == 0 && pRes->bBelow) { /* the traced batch fails with the request that failed in it: below it */
        ok = replay(&ds, 1.0 / (double)units, cfg, limit, &peak);
        pRes->nReplay++;
        if (ok < 0) rc = -1;
        else if (ok == 0) rc = 3; /* not even the smallest batch */
        hi = units;
    }
    /* a stream small enough is climbed from the traced batch in steps of a fortieth: fragmentation can make
     * a batch fail and a larger one run again, and the first failure is the one a larger batch meets */
    fineMax = ds.nBegin > 0 ? VT_FS_FINE_WORK / ds.nBegin : 0;
    if (fineMax > VT_FS_FINE) fineMax = VT_FS_FINE;
    pRes->bFine = fineMax > VT_FS_REPLAYS;
    maxReplay = pRes->bFine ? (int)fineMax + VT_FS_REPLAYS : VT_FS_REPLAYS;
    pRes->workBound = cfg->fitWork > 0 ? cfg->fitWork : VT_FS_FIT_WORK;
    workMax = pRes->workBound / (ds.nBegin > 0 ? ds.nBegin : 1); /* in all too */
    if (workMax < 2) workMax = 2; /* the traced batch and one more: VT_FS_MAX keeps n within the bound's half */
    if (workMax < maxReplay) maxReplay = (int)workMax, pRes->bBounded = 1;
    lo = pRes->bBelow ? 1 : units;
    if (pRes->bFine) x = lo + (lo / 40 > 1 ? lo / 40 : 1);
    else x = guess > 1.0 ? (int64_t)floor((guess < 1e6 ? guess : 1e6) * (double)units) : units + 1; /* no overflow */
    if (x <= lo) x = lo + 1;
    while (rc == 0 && hi < 0 && pRes->nReplay < maxReplay) {
        ok = replay(&ds, (double)x / (double)units, cfg, limit, &peak);
        pRes->nReplay++;
        if (ok < 0) {
            rc = -1;
        } else if (!ok) {
            hi = x;
        } else {
            lo = x;
            if (pRes->bFine && pRes->nReplay >= fineMax) pRes->bFine = 0; /* climbed as far as it may: by quarters */
            x = pRes->bFine ? x + (x / 40 > 1 ? x / 40 : 1) : x + x / 4 + 1;
        }
    }
    while (rc == 0 && hi > 0 && hi - lo > 1 + lo / 1000 && pRes->nReplay < maxReplay) {
        int64_t mid = lo + (hi - lo) / 2;
        ok = replay(&ds, (double)mid / (double)units, cfg, limit, &peak);
        pRes->nReplay++;
        if (ok < 0) rc = -1;
        else if (ok) lo = mid;
        else hi = mid;
    }
    if (rc == 0) {
        pRes->maxScale = (double)lo / (double)units;
        pRes->maxBatch = batch > 0 ? lo : -1;
        pRes->bOpen = hi < 0 || hi - lo > 1 + lo / 1000; /* the replays ran out before the bracket closed */
        pRes->bBounded = pRes->bBounded && pRes->bOpen; /* the work bound mattered only where it left it open */
        pRes->hiScale = hi > 0 ? (double)hi / (double)units : -1;
        pRes->hiBatch = hi > 0 && batch > 0 ? hi : -1;
    }
    pRes->nWork = (int64_t)pRes->nReplay * ds.nBegin;
    stream_close(&ds);
    return rc;
}

int vt__fs_config(const struct vt_trace *t, struct vt_fsconfig *c)
{
    static const char *const azKey[] = {"env.PYTORCH_ALLOC_CONF", "env.PYTORCH_CUDA_ALLOC_CONF"};
    const char *z;
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 2; i++) {
        if (!(z = vt__read_meta_value(&t->f, azKey[i])) || !z[0]) continue;
        for (const char *p = z; p && *p;) { /* key:value,key:value as PyTorch reads it */
            const char *zEnd = strchr(p, ','), *zColon = strchr(p, ':');
            size_t nKey = zColon && (!zEnd || zColon < zEnd) ? (size_t)(zColon - p) : 0;
            while (nKey && p[0] == ' ') p++, nKey--;
            if (nKey == 19 && !strncmp(p, "expandable_segments", 19) && !strncasecmp(zColon + 1, "true", 4))
                c->bExpandable = 1;
            if (nKey == 17 && !strncmp(p, "max_split_size_mb", 17) && atoll(zColon + 1) > 0)
                c->maxSplit = atoll(zColon + 1) << 20;
            p = zEnd ? zEnd + 1 : NULL;
        }
        break; /* PYTORCH_ALLOC_CONF first: PyTorch reads the older name only without it */
    }
    z = vt__read_meta_value(&t->f, "pytorch.allocator.expandable_segments");
    if (z && (!strcasecmp(z, "true") || !strcmp(z, "1"))) c->bExpandable = 1;
    if (vt__read_meta_int(&t->f, "pytorch.allocator.max_split_size") > 0 &&
        vt__read_meta_int(&t->f, "pytorch.allocator.max_split_size") < ((int64_t)1 << 62))
        c->maxSplit = vt__read_meta_int(&t->f, "pytorch.allocator.max_split_size");
    return 0;
}

int vt__fs_expandable(const struct vt_trace *t)
{
    struct vt_fsconfig c;
    return vt__fs_config(t, &c) == 0 && c.bExpandable;
}
