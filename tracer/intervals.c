/* Interval index of live allocations (sorted leaves under a reader-writer lock) and the parameter scan. */
#include "intervals.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_MAX 64        /* ranges per leaf */
#define LEAF_MERGE (LEAF_MAX / 2) /* merge neighbours whose total falls to this */

struct leaf {
    int n;
    uint64_t aBase[LEAF_MAX];
    uint64_t aEnd[LEAF_MAX]; /* exclusive */
};

struct vt__ivl {
    pthread_rwlock_t lock;
    struct leaf **apLeaf; /* sorted by first base; every leaf has n >= 1 */
    uint64_t *aFirst;     /* aFirst[i] == apLeaf[i]->aBase[0], for the leaf search */
    int nLeaf, nAlloc;    /* leaves used, slots allocated in apLeaf and aFirst */
    struct leaf *pSpare;  /* preallocated leaf, so a split never fails half-way */
    uint64_t lo, hi;      /* lowest base, highest end; lo > hi when empty */
    uint64_t nLive;       /* ranges in the index (under the lock) */
    _Atomic uint64_t inserts, removes, missing, replaced, scans, words, hits, truncated;
};

/* Index of the last leaf whose first base is <= addr, or -1. Lock held. */
static int leaf_find(const struct vt__ivl *idx, uint64_t addr)
{
    int lo = 0, hi = idx->nLeaf; /* answer in [lo-1, hi-1] */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (idx->aFirst[mid] <= addr) lo = mid + 1;
        else hi = mid;
    }
    return lo - 1;
}

/* Index of the last range in p whose base is <= addr, or -1. */
static int range_find(const struct leaf *p, uint64_t addr)
{
    int lo = 0, hi = p->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (p->aBase[mid] <= addr) lo = mid + 1;
        else hi = mid;
    }
    return lo - 1;
}

/* Recompute lo/hi after a change. Lock held for writing. */
static void bounds_update(struct vt__ivl *idx)
{
    if (idx->nLeaf == 0) {
        idx->lo = UINT64_MAX;
        idx->hi = 0;
    } else {
        const struct leaf *pLast = idx->apLeaf[idx->nLeaf - 1];
        idx->lo = idx->aFirst[0];
        idx->hi = pLast->aEnd[pLast->n - 1];
    }
}

/*
 * Locate the range containing addr. Returns 1 and sets *pL, *pI when found.
 * Lock held (either mode).
 */
static int locate(const struct vt__ivl *idx, uint64_t addr, int *pL, int *pI)
{
    int L, i;
    if (addr < idx->lo || addr >= idx->hi) return 0;
    L = leaf_find(idx, addr);
    if (L < 0) return 0;
    i = range_find(idx->apLeaf[L], addr);
    if (i < 0 || addr >= idx->apLeaf[L]->aEnd[i]) return 0;
    *pL = L;
    *pI = i;
    return 1;
}

/* Drop leaf L from the leaf arrays (the leaf itself is freed or kept as spare). */
static void leaf_drop(struct vt__ivl *idx, int L)
{
    struct leaf *p = idx->apLeaf[L];
    memmove(&idx->apLeaf[L], &idx->apLeaf[L + 1], (size_t)(idx->nLeaf - L - 1) * sizeof(idx->apLeaf[0]));
    memmove(&idx->aFirst[L], &idx->aFirst[L + 1], (size_t)(idx->nLeaf - L - 1) * sizeof(idx->aFirst[0]));
    idx->nLeaf--;
    if (!idx->pSpare) idx->pSpare = p;
    else free(p);
}

/* Remove range i of leaf L, merging or dropping the leaf as it shrinks. Write lock held. */
static void remove_at(struct vt__ivl *idx, int L, int i)
{
    struct leaf *p = idx->apLeaf[L];
    memmove(&p->aBase[i], &p->aBase[i + 1], (size_t)(p->n - i - 1) * sizeof(p->aBase[0]));
    memmove(&p->aEnd[i], &p->aEnd[i + 1], (size_t)(p->n - i - 1) * sizeof(p->aEnd[0]));
    p->n--;
    idx->nLive--;
    if (p->n == 0) {
        leaf_drop(idx, L);
    } else {
        idx->aFirst[L] = p->aBase[0];
        if (L + 1 < idx->nLeaf && p->n + idx->apLeaf[L + 1]->n <= LEAF_MERGE) {
            struct leaf *q = idx->apLeaf[L + 1];
            memcpy(&p->aBase[p->n], q->aBase, (size_t)q->n * sizeof(q->aBase[0]));
            memcpy(&p->aEnd[p->n], q->aEnd, (size_t)q->n * sizeof(q->aEnd[0]));
            p->n += q->n;
            leaf_drop(idx, L + 1);
        }
    }
    bounds_update(idx);
}

struct vt__ivl *vt__ivl_open(void)
{
    struct vt__ivl *idx = calloc(1, sizeof(*idx));
    if (!idx) return NULL;
    if (pthread_rwlock_init(&idx->lock, NULL) != 0) {
        free(idx);
        return NULL;
    }
    idx->lo = UINT64_MAX;
    idx->hi = 0;
    return idx;
}

void vt__ivl_close(struct vt__ivl *idx)
{
    int L;
    if (!idx) return;
    for (L = 0; L < idx->nLeaf; L++) free(idx->apLeaf[L]);
    free(idx->apLeaf);
    free(idx->aFirst);
    free(idx->pSpare);
    pthread_rwlock_destroy(&idx->lock);
    free(idx);
}

/* Make room for one more leaf and a spare leaf. Returns 0 or -ENOMEM. Write lock held. */
static int reserve(struct vt__ivl *idx)
{
    if (idx->nLeaf + 1 > idx->nAlloc) {
        int nNew = idx->nAlloc ? idx->nAlloc * 2 : 16;
        struct leaf **ap = realloc(idx->apLeaf, (size_t)nNew * sizeof(*ap));
        uint64_t *a;
        if (!ap) return -ENOMEM;
        idx->apLeaf = ap;
        a = realloc(idx->aFirst, (size_t)nNew * sizeof(*a));
        if (!a) return -ENOMEM;
        idx->aFirst = a;
        idx->nAlloc = nNew;
    }
    if (!idx->pSpare) {
        idx->pSpare = malloc(sizeof(struct leaf));
        if (!idx->pSpare) return -ENOMEM;
    }
    return 0;
}

int vt__ivl_insert(struct vt__ivl *idx, uint64_t base, uint64_t size)
{
    uint64_t end;
    struct leaf *p;
    int rc, L, i;
    if (size == 0) size = 1;
    end = base + size < base ? UINT64_MAX : base + size;
    pthread_rwlock_wrlock(&idx->lock);
    rc = reserve(idx);
    if (rc) goto done;

    /* Drop stale ranges overlapping [base, end): the last range starting before end, repeatedly. */
    for (;;) {
        L = leaf_find(idx, end - 1);
        if (L < 0) break;
        i = range_find(idx->apLeaf[L], end - 1);
        if (i < 0 || idx->apLeaf[L]->aEnd[i] <= base) break;
        remove_at(idx, L, i);
        atomic_fetch_add_explicit(&idx->replaced, 1, memory_order_relaxed);
    }

    if (idx->nLeaf == 0) {
        p = idx->pSpare;
        idx->pSpare = NULL;
        p->n = 0;
        idx->apLeaf[0] = p;
        idx->nLeaf = 1;
        L = 0;
    } else {
        L = leaf_find(idx, base);
        if (L < 0) L = 0; /* before every range: front of the first leaf */
    }
    p = idx->apLeaf[L];
    i = range_find(p, base) + 1;
    if (p->n == LEAF_MAX) { /* split: the upper half moves to the spare leaf */
        struct leaf *q = idx->pSpare;
        int half = LEAF_MAX / 2;
        idx->pSpare = NULL;
        q->n = LEAF_MAX - half;
        memcpy(q->aBase, &p->aBase[half], (size_t)q->n * sizeof(q->aBase[0]));
        memcpy(q->aEnd, &p->aEnd[half], (size_t)q->n * sizeof(q->aEnd[0]));
        p->n = half;
        memmove(&idx->apLeaf[L + 2], &idx->apLeaf[L + 1], (size_t)(idx->nLeaf - L - 1) * sizeof(idx->apLeaf[0]));
        memmove(&idx->aFirst[L + 2], &idx->aFirst[L + 1], (size_t)(idx->nLeaf - L - 1) * sizeof(idx->aFirst[0]));
        idx->apLeaf[L + 1] = q;
        idx->aFirst[L + 1] = q->aBase[0];
        idx->nLeaf++;
        if (i > half) {
            L++;
            p = q;
            i -= half;
        }
    }
    memmove(&p->aBase[i + 1], &p->aBase[i], (size_t)(p->n - i) * sizeof(p->aBase[0]));
    memmove(&p->aEnd[i + 1], &p->aEnd[i], (size_t)(p->n - i) * sizeof(p->aEnd[0]));
    p->aBase[i] = base;
    p->aEnd[i] = end;
    p->n++;
    idx->aFirst[L] = p->aBase[0];
    idx->nLive++;
    bounds_update(idx);
    atomic_fetch_add_explicit(&idx->inserts, 1, memory_order_relaxed);
    /* A split may have used the spare: replace it now, outside the critical step (failure is harmless). */
    if (!idx->pSpare) idx->pSpare = malloc(sizeof(struct leaf));
done:
    pthread_rwlock_unlock(&idx->lock);
    return rc;
}

int vt__ivl_remove(struct vt__ivl *idx, uint64_t base)
{
    int rc = -ENOENT, L, i;
    pthread_rwlock_wrlock(&idx->lock);
    if (locate(idx, base, &L, &i) && idx->apLeaf[L]->aBase[i] == base) {
        remove_at(idx, L, i);
        rc = 0;
    }
    pthread_rwlock_unlock(&idx->lock);
    atomic_fetch_add_explicit(rc ? &idx->missing : &idx->removes, 1, memory_order_relaxed);
    return rc;
}

int vt__ivl_find(struct vt__ivl *idx, uint64_t addr, uint64_t *pBase, uint64_t *pSize)
{
    int found, L = 0, i = 0;
    pthread_rwlock_rdlock(&idx->lock);
    found = locate(idx, addr, &L, &i);
    if (found) {
        if (pBase) *pBase = idx->apLeaf[L]->aBase[i];
        if (pSize) *pSize = idx->apLeaf[L]->aEnd[i] - idx->apLeaf[L]->aBase[i];
    }
    pthread_rwlock_unlock(&idx->lock);
    return found;
}

#define SCAN_LIST 16    /* distinct hits kept in a list before switching to the hash set */
#define SCAN_SET 1024   /* hash-set slots (power of two), filled at most to SCAN_SET_MAX */
#define SCAN_SET_MAX 768

/*
 * Scan state shared by the words of one launch. Hits are deduplicated exactly:
 * the first SCAN_LIST distinct bases in a list, then in a hash set (set up only
 * when needed, so a small launch never pays for clearing it). Past
 * SCAN_SET_MAX distinct allocations, further hits are counted without dedup.
 */
struct scan {
    uint64_t *aBase;
    int nMax;
    int nFound;                /* distinct allocations found (an upper bound past SCAN_SET_MAX) */
    uint64_t nWord;
    uint64_t lastLo, lastHi;   /* range of the previous hit: repeated pointers skip the search */
    int nList, nSet, bZero;
    uint64_t aList[SCAN_LIST];
    uint64_t aSet[SCAN_SET];   /* 0 = empty slot (a base of 0 is tracked by bZero) */
};

/* Add base to the set; returns 1 if it was new. */
static int set_add(struct scan *pScan, uint64_t base)
{
    size_t i = (size_t)((base >> 6) * 0x9e3779b97f4a7c15ull >> 54) & (SCAN_SET - 1);
    while (pScan->aSet[i]) {
        if (pScan->aSet[i] == base) return 0;
        i = (i + 1) & (SCAN_SET - 1);
    }
    pScan->aSet[i] = base;
    pScan->nSet++;
    return 1;
}

/* Record base if this launch has not seen it yet. */
static void scan_hit(struct scan *pScan, uint64_t base)
{
    int k, bNew = 1;
    for (k = 0; k < pScan->nList && bNew; k++) bNew = pScan->aList[k] != base;
    if (!bNew) return;
    if (pScan->nList < SCAN_LIST) {
        pScan->aList[pScan->nList++] = base;
    } else if (base == 0) { /* 0 marks an empty set slot: tracked apart */
        if (pScan->bZero) return;
        pScan->bZero = 1;
    } else if (pScan->nSet < SCAN_SET_MAX) {
        if (pScan->nSet == 0) memset(pScan->aSet, 0, sizeof pScan->aSet);
        if (!set_add(pScan, base)) return;
    }
    if (pScan->nFound < pScan->nMax) pScan->aBase[pScan->nFound] = base;
    pScan->nFound++;
}

/* Look up the aligned words of one block and record hits in *pScan. Read lock held. */
static void scan_block(const struct vt__ivl *idx, const unsigned char *pBlock, size_t nByte,
                       struct scan *pScan)
{
    const uint64_t lo = idx->lo, span = idx->hi > idx->lo ? idx->hi - idx->lo : 0;
    size_t off;
    for (off = 0; off + 8 <= nByte; off += 8) {
        uint64_t w;
        int L, i;
        memcpy(&w, pBlock + off, 8);
        if (w - lo >= span) continue; /* the range pre-check: one unsigned compare, no branch mix */
        if (w - pScan->lastLo < pScan->lastHi - pScan->lastLo) continue; /* same as the last hit */
        if (!locate(idx, w, &L, &i)) continue;
        pScan->lastLo = idx->apLeaf[L]->aBase[i];
        pScan->lastHi = idx->apLeaf[L]->aEnd[i];
        scan_hit(pScan, pScan->lastLo);
    }
    pScan->nWord += nByte / 8;
}

/* Publish one scan's counters. */
static void scan_done(struct vt__ivl *idx, const struct scan *pScan)
{
    atomic_fetch_add_explicit(&idx->scans, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&idx->words, pScan->nWord, memory_order_relaxed);
    if (pScan->nFound) {
        atomic_fetch_add_explicit(&idx->hits, (uint64_t)pScan->nFound, memory_order_relaxed);
        if (pScan->nFound > pScan->nMax)
            atomic_fetch_add_explicit(&idx->truncated, (uint64_t)(pScan->nFound - pScan->nMax),
                                      memory_order_relaxed);
    }
}

/* Start a scan's state (the set is left uncleared until used). */
static void scan_init(struct scan *pScan, uint64_t *aBase, int nMax)
{
    pScan->aBase = aBase;
    pScan->nMax = nMax < 0 ? 0 : nMax;
    pScan->nFound = 0;
    pScan->nWord = 0;
    pScan->lastLo = pScan->lastHi = 0;
    pScan->nList = pScan->nSet = pScan->bZero = 0;
}

int vt__ivl_scan(struct vt__ivl *idx, const void *pBlock, size_t nByte, uint64_t *aBase, int nMax)
{
    struct scan sc;
    scan_init(&sc, aBase, nMax);
    if (pBlock && nByte >= 8) {
        pthread_rwlock_rdlock(&idx->lock);
        scan_block(idx, pBlock, nByte, &sc);
        pthread_rwlock_unlock(&idx->lock);
    }
    scan_done(idx, &sc);
    return sc.nFound;
}

int vt__ivl_scan_params(struct vt__ivl *idx, void *const *apParam, const size_t *aSize,
                        int nParam, uint64_t *aBase, int nMax)
{
    struct scan sc;
    int j;
    scan_init(&sc, aBase, nMax);
    if (apParam && aSize && nParam > 0) {
        pthread_rwlock_rdlock(&idx->lock);
        for (j = 0; j < nParam; j++)
            if (apParam[j] && aSize[j] >= 8) scan_block(idx, apParam[j], aSize[j], &sc);
        pthread_rwlock_unlock(&idx->lock);
    }
    scan_done(idx, &sc);
    return sc.nFound;
}

void vt__ivl_fork_prepare(struct vt__ivl *idx)
{
    pthread_rwlock_wrlock(&idx->lock);
}

void vt__ivl_fork_parent(struct vt__ivl *idx)
{
    pthread_rwlock_unlock(&idx->lock);
}

void vt__ivl_fork_child(struct vt__ivl *idx)
{
    pthread_rwlock_init(&idx->lock, NULL);
}

void vt__ivl_stats(struct vt__ivl *idx, struct vt_ivl_stats *pStats)
{
    pthread_rwlock_rdlock(&idx->lock);
    pStats->live = idx->nLive;
    pthread_rwlock_unlock(&idx->lock);
    pStats->inserts = atomic_load(&idx->inserts);
    pStats->removes = atomic_load(&idx->removes);
    pStats->missing = atomic_load(&idx->missing);
    pStats->replaced = atomic_load(&idx->replaced);
    pStats->scans = atomic_load(&idx->scans);
    pStats->words = atomic_load(&idx->words);
    pStats->hits = atomic_load(&idx->hits);
    pStats->truncated = atomic_load(&idx->truncated);
}
