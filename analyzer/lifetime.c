/* Analysis stage: streaming replay of memory events and buffer uses into allocation lifetimes. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vramtrace/schema.h"

const char *vt__life_status_name(int status)
{
    static const char *az[] = {"freed", "live_at_end", "free_unknown", "double_free", "free_missing"};
    return status >= 0 && status <= VT_LIFE_FREE_MISSING ? az[status] : "?";
}

/* The live allocations overlapping one 2 MiB page of the address space. */
struct page {
    int64_t page;
    struct vt_life **a;
    int n, cap;
};

#define PAGE_SHIFT 21
#define HUGE ((int64_t)1 << 30) /* larger allocations are few: scanned instead of paged */

/*
 * Replay state: the live set (a dense array for walking it, and a hash of 2 MiB
 * pages to the allocations overlapping each, for lookups by base address or by
 * any address inside: both O(allocations sharing a page); allocations over 1 GiB
 * sit under their first page and in a short list scanned for inside addresses),
 * and freed addresses.
 */
struct replay {
    struct vt_trace *t;
    struct vt_life **apLive;
    int nLive, nLiveAlloc;
    struct page *aPage;   /* page lists, never removed (bounded by the pages ever used) */
    int nPage, nPageAlloc;
    int *aPageHash;       /* open addressing: index into aPage, -1 empty */
    int nPageHash;
    struct vt_life **apHuge; /* live allocations over HUGE bytes: indexed by their first page only */
    int nHuge, nHugeAlloc;
    int64_t *aFreed; /* open-addressing set of freed addresses (0 = empty slot) */
    int nFreed, nFreedAlloc;
    int nextBoundary; /* next growth boundary (index into t->aBoundary) */
};

/* Column i of an input's current row as an int / int64, dflt when NULL. */
static int col_int(const struct vt_rows *p, int i, int dflt)
{
    return vt__rows_null(p, i) ? dflt : (int)vt__rows_i64(p, i);
}
static int64_t col_i64(const struct vt_rows *p, int i, int64_t dflt)
{
    return vt__rows_null(p, i) ? dflt : vt__rows_i64(p, i);
}

static uint64_t page_hash(int64_t page)
{
    return (uint64_t)page * 0x9E3779B97F4A7C15ull;
}

/* The list of page pg, created when bCreate; NULL if absent (or out of memory when creating). */
static struct page *page_get(struct replay *r, int64_t pg, int bCreate)
{
    int i;
    if (r->nPageHash) {
        for (i = (int)(page_hash(pg) >> 40) & (r->nPageHash - 1); r->aPageHash[i] >= 0;
             i = (i + 1) & (r->nPageHash - 1))
            if (r->aPage[r->aPageHash[i]].page == pg) return &r->aPage[r->aPageHash[i]];
    }
    if (!bCreate) return NULL;
    if ((r->nPage + 1) * 2 > r->nPageHash) { /* grow and rehash */
        int nNew = r->nPageHash ? r->nPageHash * 2 : 1024;
        int *aNew = malloc(sizeof(int) * (size_t)nNew);
        if (!aNew) return NULL;
        for (i = 0; i < nNew; i++) aNew[i] = -1;
        for (int k = 0; k < r->nPage; k++) {
            int j = (int)(page_hash(r->aPage[k].page) >> 40) & (nNew - 1);
            while (aNew[j] >= 0) j = (j + 1) & (nNew - 1);
            aNew[j] = k;
        }
        free(r->aPageHash);
        r->aPageHash = aNew;
        r->nPageHash = nNew;
    }
    if (r->nPage == r->nPageAlloc) {
        int nNew = r->nPageAlloc ? r->nPageAlloc * 2 : 512;
        struct page *aNew = realloc(r->aPage, sizeof *aNew * (size_t)nNew);
        if (!aNew) return NULL;
        r->aPage = aNew;
        r->nPageAlloc = nNew;
    }
    for (i = (int)(page_hash(pg) >> 40) & (r->nPageHash - 1); r->aPageHash[i] >= 0; i = (i + 1) & (r->nPageHash - 1)) {
    }
    r->aPageHash[i] = r->nPage;
    memset(&r->aPage[r->nPage], 0, sizeof r->aPage[0]);
    r->aPage[r->nPage].page = pg;
    return &r->aPage[r->nPage++];
}

/* Last page under which an allocation is indexed: its first page only when it is huge. */
static int64_t last_page(const struct vt_life *l)
{
    int64_t n = l->bytes > 0 ? l->bytes : 1;
    if (n > HUGE || l->address > INT64_MAX - n) return l->address >> PAGE_SHIFT;
    return (l->address + n - 1) >> PAGE_SHIFT;
}

static int contains(const struct vt_life *l, int64_t addr)
{
    return addr >= l->address && addr - l->address < (l->bytes > 0 ? l->bytes : 1);
}

/* The live allocation with base address addr (preferring a device/kind match), or NULL. */
static struct vt_life *live_find_base(struct replay *r, int64_t addr, int dev, int kind)
{
    struct page *p = page_get(r, addr >> PAGE_SHIFT, 0);
    struct vt_life *best = NULL;
    for (int i = 0; p && i < p->n; i++) {
        struct vt_life *l = p->a[i];
        if (l->address != addr) continue;
        if ((dev < 0 || l->device == dev) && (kind == 0 || l->memKind == kind)) return l;
        if (!best) best = l;
    }
    /* a free with a different device/kind than its allocation: accept only when unambiguous */
    return best && (dev < 0 || kind == 0) ? best : NULL;
}

/* The live allocation containing addr, or NULL. */
static struct vt_life *live_find_containing(struct replay *r, int64_t addr)
{
    struct page *p = page_get(r, addr >> PAGE_SHIFT, 0);
    for (int i = 0; p && i < p->n; i++)
        if (contains(p->a[i], addr)) return p->a[i];
    for (int i = 0; i < r->nHuge; i++)
        if (contains(r->apHuge[i], addr)) return r->apHuge[i];
    return NULL;
}

/* Add l to the live set. Returns 0 or -1 when out of memory (l not added). */
static int live_add(struct replay *r, struct vt_life *l)
{
    int64_t pg;
    if (r->nLive == r->nLiveAlloc) {
        int nNew = r->nLiveAlloc ? r->nLiveAlloc * 2 : 1024;
        struct vt_life **aNew = realloc(r->apLive, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        r->apLive = aNew;
        r->nLiveAlloc = nNew;
    }
    if (l->bytes > HUGE && r->nHuge == r->nHugeAlloc) {
        int nNew = r->nHugeAlloc ? r->nHugeAlloc * 2 : 16;
        struct vt_life **aNew = realloc(r->apHuge, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        r->apHuge = aNew;
        r->nHugeAlloc = nNew;
    }
    for (pg = l->address >> PAGE_SHIFT; pg <= last_page(l); pg++) {
        struct page *p = page_get(r, pg, 1);
        if (p && p->n == p->cap) {
            int nNew = p->cap ? p->cap * 2 : 4;
            struct vt_life **aNew = realloc(p->a, sizeof *aNew * (size_t)nNew);
            if (!aNew) p = NULL;
            else p->a = aNew, p->cap = nNew;
        }
        if (!p) { /* undo the pages already linked */
            for (int64_t q = l->address >> PAGE_SHIFT; q < pg; q++) {
                struct page *pq = page_get(r, q, 0);
                if (pq) pq->n--;
            }
            return -1;
        }
        p->a[p->n++] = l;
    }
    l->liveIdx = r->nLive;
    r->apLive[r->nLive++] = l;
    if (l->bytes > HUGE) r->apHuge[r->nHuge++] = l;
    return 0;
}

/* Remove l from the live set (does not free it). */
static void live_remove(struct replay *r, struct vt_life *l)
{
    for (int64_t pg = l->address >> PAGE_SHIFT; pg <= last_page(l); pg++) {
        struct page *p = page_get(r, pg, 0);
        for (int i = 0; p && i < p->n; i++)
            if (p->a[i] == l) {
                p->a[i] = p->a[--p->n];
                break;
            }
    }
    r->apLive[l->liveIdx] = r->apLive[--r->nLive];
    r->apLive[l->liveIdx]->liveIdx = l->liveIdx;
    for (int i = 0; l->bytes > HUGE && i < r->nHuge; i++)
        if (r->apHuge[i] == l) {
            r->apHuge[i] = r->apHuge[--r->nHuge];
            break;
        }
}

static int freed_add(struct replay *r, int64_t addr);
/* 1 if addr was freed before (see freed_add). */
static int freed_has(const struct replay *r, int64_t addr)
{
    if (!r->nFreedAlloc) return 0;
    uint64_t h = (uint64_t)(addr | 1) * 0x9E3779B97F4A7C15ull;
    for (int i = (int)(h >> 33) & (r->nFreedAlloc - 1);; i = (i + 1) & (r->nFreedAlloc - 1)) {
        if (r->aFreed[i] == 0) return 0;
        if (r->aFreed[i] == (addr | 1)) return 1;
    }
}

/* Double the freed-address set and rehash; 0, or -1 when out of memory (set unchanged). */
static int freed_grow(struct replay *r)
{
    int nNew = r->nFreedAlloc ? r->nFreedAlloc * 2 : 1024;
    int64_t *aOld = r->aFreed;
    int nOld = r->nFreedAlloc;
    r->aFreed = calloc((size_t)nNew, sizeof(int64_t));
    if (!r->aFreed) {
        r->aFreed = aOld;
        return -1;
    }
    r->nFreedAlloc = nNew;
    r->nFreed = 0;
    for (int i = 0; i < nOld; i++) /* cannot fail: the new table has room for all */
        if (aOld[i]) (void)freed_add(r, aOld[i]);
    free(aOld);
    return 0;
}

/* Remember a freed address (stored with its low bit set so 0 stays the empty marker); 0 or -1 (out of memory). */
static int freed_add(struct replay *r, int64_t addr)
{
    int64_t key = addr | 1;
    if ((r->nFreed + 1) * 2 > r->nFreedAlloc && freed_grow(r) != 0) return -1;
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    for (int i = (int)(h >> 33) & (r->nFreedAlloc - 1);; i = (i + 1) & (r->nFreedAlloc - 1)) {
        if (r->aFreed[i] == key) return 0;
        if (r->aFreed[i] == 0) {
            r->aFreed[i] = key;
            r->nFreed++;
            return 0;
        }
    }
}

/* Accounting device of an allocation: device id, -1 pinned host, -2 managed, -3 not counted. */
static int acct_of(int op, int kind, int device)
{
    if (kind == VT_MEMKIND_PINNED) return -1;
    if (kind == VT_MEMKIND_MANAGED || kind == VT_MEMKIND_MANAGED_STATIC) return -2;
    if (op == VT_MEMOP_VMM_MAP) return device >= 0 ? device : 0;
    if (kind == VT_MEMKIND_DEVICE || kind == VT_MEMKIND_ARRAY || kind == VT_MEMKIND_DEVICE_STATIC ||
        kind == VT_MEMKIND_UNKNOWN)
        return device >= 0 ? device : 0;
    return -3;
}

/*
 * Bring site s up to date with the growth boundaries passed since it last
 * changed. Its live bytes were constant since then, so only the first of those
 * boundaries can differ from the previous one. O(1): boundaries cost nothing
 * for sites that do not change.
 */
static void site_catch_up(struct vt_trace *t, struct vt_site *s)
{
    int nNew = t->nBoundaryDone - s->seenBoundary;
    if (nNew <= 0) return;
    if (s->nBoundary == 0) {
        s->firstBoundaryBytes = s->liveBytes;
        s->firstBoundaryTs = t->aBoundary[s->seenBoundary];
    } else if (s->liveBytes > s->prevBoundaryBytes) {
        s->nUp++;
    } else if (s->liveBytes < s->prevBoundaryBytes) {
        s->nDown++;
        if (s->prevBoundaryBytes - s->liveBytes > s->maxDrop) s->maxDrop = s->prevBoundaryBytes - s->liveBytes;
    }
    s->prevBoundaryBytes = s->liveBytes;
    s->lastBoundaryTs = t->aBoundary[t->nBoundaryDone - 1];
    s->nBoundary += nNew;
    s->seenBoundary = t->nBoundaryDone;
}

/* Add (sign +1) or remove (-1) l's bytes from its device's live total at ts. */
static int account(struct replay *r, struct vt_life *l, int sign, int64_t ts)
{
    struct vt_trace *t = r->t;
    int iDev;
    struct vt_site *s = &t->aSite[l->site];
    if (l->acct != -1) { /* pinned host memory is judged by the transfer detector, not per site */
        site_catch_up(t, s);
        s->nLive += sign;
        s->liveBytes += sign * l->bytes;
        if (s->liveBytes > s->peakLiveBytes) s->peakLiveBytes = s->liveBytes;
    }
    if (l->acct == -3) return 0;
    iDev = vt__dev_index(t, l->acct);
    if (iDev < 0) return -1;
    if (sign < 0) {
        vt__timeline_snapshot(t, iDev, r->apLive, r->nLive);
        t->apLive = r->apLive;
        t->nLive = r->nLive;
        if (l->acct >= 0) vt__timeline_phase_snapshot(t);
    }
    t->aDev[iDev].live += sign * l->bytes;
    if (l->acct >= 0) t->totalLiveNow += sign * l->bytes;
    vt__timeline_update(t, iDev, ts);
    return 0;
}

/* Retained-reference bookkeeping for a lifetime that ends (freed, or live at the end). */
static void retained_check(struct vt_trace *t, struct vt_life *l)
{
    struct vt_site *s = &t->aSite[l->site];
    /* uses from copies alone would make every buffer only kernels touch look unused */
    int bUses = t->bHaveKernelUses;
    /* a cache of segments, the runtime's own memory and NCCL's buffers are held by design */
    if (t->bSegments || l->allocTs < 0 || l->bInternal || s->bNccl) return;
    if (t->bHaveKernelUses && l->freeTs >= 0) {
        int64_t from = l->lastUse >= 0 ? l->lastUse : l->allocTs;
        int64_t idle = l->freeTs - from, life = l->freeTs - l->allocTs;
        if (idle >= t->idleNs && idle >= life / 10 * 6) {
            s->idleCount++;
            s->idleBytes += l->bytes;
            if (idle > s->idleMaxNs) s->idleMaxNs = idle;
            if (s->idleFirstTs < 0) s->idleFirstTs = l->allocTs;
            s->idleLastTs = l->freeTs;
        }
    }
    if (!bUses || l->phase < 0 || t->aPhase[l->phase].kind != VT_PHASE_TRAIN) return;
    for (int k = l->phase + 1; k < t->nPhase; k++) {
        struct vt_phase *e = &t->aPhase[k];
        int64_t last = l->lastUse >= 0 ? l->lastUse : l->allocTs;
        int bTrainAfter = 0;
        if (e->kind != VT_PHASE_EVAL || e->start < l->allocTs) continue;
        if (l->freeTs >= 0 && l->freeTs <= e->start) break;
        if (last >= e->start) continue;
        for (int j = k + 1; j < t->nPhase; j++) bTrainAfter |= t->aPhase[j].kind == VT_PHASE_TRAIN;
        /* live to the end of a trace that ends in evaluation: optimizer state and the like, whose
         * next use would come with the next training step; nothing can be said */
        if (l->freeTs < 0 && !bTrainAfter) break;
        e->carried += l->bytes;
        /* held through it: still live for at least 90 % of the evaluation phase */
        if ((l->freeTs >= 0 && l->freeTs >= e->end - (e->end - e->start) / 10) || (l->freeTs < 0 && bTrainAfter)) {
            s->crossCount++;
            s->crossBytes += l->bytes;
            if (s->crossFirstTs < 0) s->crossFirstTs = l->allocTs;
            s->crossLastTs = l->freeTs >= 0 ? l->freeTs : t->t1;
            if (s->crossPhase < 0) s->crossPhase = k;
        }
        break;
    }
}

/* End a lifetime: write it back, update retained stats, free it (not for live-at-end). */
static int close_life(struct replay *r, struct vt_life *l)
{
    struct vt_trace *t = r->t;
    retained_check(t, l);
    if (t->pLifeIns && vt__writeback_life(t, l) != SQLITE_OK) return -1;
    return 0;
}

/*
 * Growth boundaries: the end of each training iteration (or of each iteration
 * outside any phase); without iterations, the ends of the 16 slices of the run
 * after its first quarter. Fills t->aBoundary; returns 0 or -1 (out of memory).
 */
static int boundaries_build(struct vt_trace *t)
{
    t->aBoundary = malloc(sizeof(int64_t) * (size_t)(t->nIter + VT_SLICES));
    if (!t->aBoundary) return -1;
    t->nBoundaryTs = t->nBoundaryDone = 0;
    for (int i = 0; i < t->nIter; i++)
        if (t->aIter[i].phase < 0 || t->aPhase[t->aIter[i].phase].kind == VT_PHASE_TRAIN)
            t->aBoundary[t->nBoundaryTs++] = t->aIter[i].end;
    t->bSliceBoundaries = t->nBoundaryTs == 0;
    if (t->bSliceBoundaries)
        for (int k = VT_SLICES / 4; k < VT_SLICES; k++)
            t->aBoundary[t->nBoundaryTs++] = t->t0 + (t->t1 - t->t0) / VT_SLICES * (k + 1) +
                                             (t->t1 - t->t0) % VT_SLICES * (k + 1) / VT_SLICES;
    return 0;
}

/* Pass the growth boundaries up to ts (sites catch up lazily, see site_catch_up). */
static void boundaries_upto(struct replay *r, int64_t ts)
{
    struct vt_trace *t = r->t;
    while (r->nextBoundary < t->nBoundaryTs && t->aBoundary[r->nextBoundary] <= ts) {
        r->nextBoundary++;
        t->nBoundaryDone++;
    }
}

/* An allocation or VMM map. Returns 0 or -1 (out of memory / write error). */
static int on_alloc(struct replay *r, const struct vt_rows *p)
{
    struct vt_trace *t = r->t;
    struct vt_life *l;
    int op = (int)vt__rows_i64(p, 2), kind = (int)vt__rows_i64(p, 3);
    int64_t addr = vt__rows_i64(p, 4), ts = vt__rows_i64(p, 0);
    int dev = col_int(p, 5, -1);
    struct vt_life *old = live_find_base(r, addr, dev, kind);
    if (old) { /* the free of the previous allocation here was never seen */
        old->freeTs = ts;
        old->status = VT_LIFE_FREE_MISSING;
        t->nFreeMissing++;
        if (account(r, old, -1, ts) != 0) return -1;
        live_remove(r, old);
        if (close_life(r, old) != 0) {
            free(old);
            return -1;
        }
        free(old);
    }
    l = calloc(1, sizeof *l);
    if (!l) return -1;
    l->address = addr;
    l->bytes = vt__rows_i64(p, 6);
    l->allocTs = ts;
    l->freeTs = l->firstUse = l->lastUse = -1;
    l->allocEventId = vt__rows_i64(p, 1);
    l->freeEventId = -1;
    l->stackId = col_i64(p, 8, -1);
    l->device = dev;
    l->memKind = kind;
    l->allocApi = col_int(p, 7, 0);
    /* no API call behind it (correlation 0, no api): the CUDA runtime or driver allocating for itself */
    l->bInternal = col_i64(p, 11, 0) == 0 && l->allocApi == 0 && l->stackId < 0 && op == VT_MEMOP_ALLOC;
    l->acct = acct_of(op, kind, dev);
    l->phase = vt__phase_at(t, ts);
    l->site = vt__site_get(t, l->stackId, l->bytes);
    if (l->site < 0) {
        free(l);
        return -1;
    }
    t->aSite[l->site].nAlloc++;
    t->aSite[l->site].totalBytes += l->bytes;
    t->nAlloc++;
    if (live_add(r, l) != 0) {
        free(l);
        return -1;
    }
    if (!vt__rows_null(p, 9) && l->acct >= 0) {
        int iDev = vt__dev_index(t, l->acct);
        if (iDev < 0) return -1;
        t->aDev[iDev].poolReserved = vt__rows_i64(p, 9);
        t->aDev[iDev].poolUsed = col_i64(p, 10, 0);
    }
    return account(r, l, +1, ts);
}

/* A free or VMM unmap. Returns 0 or -1. */
static int on_free(struct replay *r, const struct vt_rows *p)
{
    struct vt_trace *t = r->t;
    int kind = (int)vt__rows_i64(p, 3), dev = col_int(p, 5, -1);
    int64_t addr = vt__rows_i64(p, 4), ts = vt__rows_i64(p, 0);
    struct vt_life *l = live_find_base(r, addr, dev, kind);
    int rc = 0;
    if (l) {
        l->freeTs = ts;
        l->freeEventId = vt__rows_i64(p, 1);
        l->freeApi = col_int(p, 7, 0);
        l->status = VT_LIFE_FREED;
        t->nFree++;
        if (account(r, l, -1, ts) != 0) return -1;
        live_remove(r, l);
        rc = close_life(r, l);
        free(l);
    } else {
        struct vt_life u;
        memset(&u, 0, sizeof u);
        u.address = addr;
        u.bytes = vt__rows_i64(p, 6);
        u.allocTs = u.firstUse = u.lastUse = -1;
        u.freeTs = ts;
        u.allocEventId = -1;
        u.freeEventId = vt__rows_i64(p, 1);
        u.stackId = col_i64(p, 8, -1);
        u.device = dev;
        u.memKind = kind;
        u.freeApi = col_int(p, 7, 0);
        u.phase = vt__phase_at(t, ts);
        u.status = freed_has(r, addr) ? VT_LIFE_DOUBLE_FREE : VT_LIFE_FREE_UNKNOWN;
        if (u.status == VT_LIFE_DOUBLE_FREE) t->nDoubleFree++;
        else t->nFreeUnknown++;
        if (t->pLifeIns && vt__writeback_life(t, &u) != SQLITE_OK) rc = -1;
    }
    if (freed_add(r, addr) != 0) rc = -1;
    if (!vt__rows_null(p, 9) && dev >= 0) {
        int iDev = vt__dev_index(t, dev);
        if (iDev < 0) return -1;
        t->aDev[iDev].poolReserved = vt__rows_i64(p, 9);
        t->aDev[iDev].poolUsed = col_i64(p, 10, 0);
    }
    return rc;
}

/* A use of addr at ts: kernel argument (base address) or copy/memset (any address inside). */
static void on_use(struct replay *r, int64_t addr, int64_t ts, int bBase)
{
    struct vt_life *l = bBase ? live_find_base(r, addr, -1, 0) : NULL;
    if (!l) l = live_find_containing(r, addr);
    if (!l) return;
    if (l->firstUse < 0) l->firstUse = ts;
    if (ts > l->lastUse) l->lastUse = ts;
    l->useCount++;
    r->t->nUseMatched++;
}

/* An OOM: what this process held on the device then, its largest live allocations and all of them by site. */
static int on_oom(struct replay *r, const struct vt_rows *p)
{
    struct vt_trace *t = r->t;
    struct vt_oom *o, *aNew = realloc(t->aOom, sizeof *aNew * (size_t)(t->nOom + 1));
    int iDev;
    if (!aNew) return -1;
    t->aOom = aNew;
    o = &aNew[t->nOom++];
    memset(o, 0, sizeof *o);
    o->ts = vt__rows_i64(p, 0);
    o->api = (int)vt__rows_i64(p, 1);
    o->device = col_int(p, 2, 0);
    o->requested = vt__rows_i64(p, 3);
    o->freeBytes = col_i64(p, 4, -1);
    o->totalBytes = col_i64(p, 5, -1);
    o->site = -1;
    if (!vt__rows_null(p, 6)) {
        o->site = vt__site_get(t, vt__rows_i64(p, 6), o->requested);
        if (o->site < 0) return -1;
    }
    iDev = vt__dev_index(t, o->device);
    if (iDev < 0) return -1;
    o->held = t->aDev[iDev].live;
    if (t->aDev[iDev].poolReserved > t->aDev[iDev].poolUsed)
        o->poolCached = t->aDev[iDev].poolReserved - t->aDev[iDev].poolUsed;
    if (o->totalBytes <= 0) o->totalBytes = t->aDev[iDev].totalBytes;
    if (o->freeBytes >= 0 && o->totalBytes > 0) {
        int64_t held = o->held > t->aDev[iDev].poolReserved ? o->held : t->aDev[iDev].poolReserved;
        o->others = o->totalBytes - o->freeBytes - held;
        if (o->others < 0) o->others = 0;
    }
    return vt__live_snapshot(t, r->apLive, r->nLive, o->device, o->aTop, &o->nTop, VT_TOPMAX, o->aGroup, &o->nGroup,
                             VT_TOPMAX);
}

/* Everything still live at the end: status live_at_end, per-site leak totals. */
static int finish_live(struct replay *r)
{
    struct vt_trace *t = r->t;
    int64_t late = t->t1 - (t->t1 - t->t0) / 10;
    if (t->nIter > 0 && t->aIter[t->nIter - 1].start < late) late = t->aIter[t->nIter - 1].start;
    for (int i = 0; i < t->nDev; i++) {
        t->aDev[i].nSnapshots = 0; /* force the final snapshot */
        vt__timeline_snapshot(t, i, r->apLive, r->nLive);
    }
    for (int i = 0; i < r->nLive; i++) {
        struct vt_life *l = r->apLive[i];
        struct vt_site *s = &t->aSite[l->site];
        l->status = VT_LIFE_LIVE_AT_END;
        t->nLiveEnd++;
        t->liveEndBytes += l->bytes;
        if (l->bInternal) {
            t->nInternalEnd++;
            t->internalEndBytes += l->bytes;
        } else if (l->acct != -1) {
            s->endCount++;
            s->endBytes += l->bytes;
            if (s->endFirstTs < 0 || l->allocTs < s->endFirstTs) s->endFirstTs = l->allocTs;
            if (l->allocTs > s->endLastTs) s->endLastTs = l->allocTs;
            if (l->lastUse >= late) s->endUsedLate++;
            vt__top_insert(t->aEnd, &t->nEnd, VT_TOPMAX, l);
        }
        if (close_life(r, l) != 0) return -1;
    }
    if (t->nInternalEnd) {
        char zB[32];
        vt__fmt_bytes(t->internalEndBytes, zB, sizeof zB);
        vt__trace_note(t, "%lld allocation%s (%s) made by the CUDA runtime or driver itself (no API call "
                          "behind %s) %s still live at exit: not counted as leaks",
                       (long long)t->nInternalEnd, t->nInternalEnd == 1 ? "" : "s", zB,
                       t->nInternalEnd == 1 ? "it" : "them", t->nInternalEnd == 1 ? "is" : "are");
    }
    return 0;
}

/* The idle threshold of the retained detector: 10 median iterations, else 10 % of the trace. */
static int64_t idle_threshold(const struct vt_trace *t)
{
    int64_t aD[64], n = 0, dur = t->t1 - t->t0, th;
    for (int i = 0; i < t->nIter && n < 64; i++) aD[n++] = t->aIter[i].end - t->aIter[i].start;
    if (n == 0) return dur / 10 > 0 ? dur / 10 : 1;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && aD[j - 1] > aD[j]; j--) {
            int64_t x = aD[j];
            aD[j] = aD[j - 1];
            aD[j - 1] = x;
        }
    th = aD[n / 2] < INT64_MAX / 10 ? 10 * aD[n / 2] : INT64_MAX; /* no overflow on absurd gaps */
    return th > 0 ? th : 1;
}

/*
 * Replay the trace in time order: pair allocations and frees into lifetimes, attach
 * uses, feed the timeline, snapshot peaks and OOMs, note growth boundaries and
 * retained memory, write lifetimes back when t->pLifeIns is set. Returns a
 * VT_EXIT code (one line printed on error).
 */
int vt__replay(struct vt_trace *t, const struct vt_opts *o)
{
    enum { C_MEM, C_KUSE, C_COPY, C_SET, C_OOM, C_N };
    /* each input in time order: by rowid where vt__scan found that to be time order within a window */
    static const int anCol[C_N] = {12, 2, 3, 2, 7};
    const int aw[C_N] = {t->wMem, t->wUse, t->wCopy, t->wSet, -1};
    char *azSql[C_N] = {
        vt__ordered_sql(t, t->wMem,
                        "ts, id, op, mem_kind, address, device, bytes, api, stack_id, pool_size, pool_used, correlation",
                        "memory_event", "op IN (1, 2, 5, 6)", "ts, id"),
        vt__ordered_sql(t, t->wUse, "ts, address", "buffer_use", "kind = 0 AND ts IS NOT NULL", "ts"),
        vt__ordered_sql(t, t->wCopy, "start, src, dst", "memcpy", "src IS NOT NULL OR dst IS NOT NULL", "start"),
        vt__ordered_sql(t, t->wSet, "start, dst", "memset", "dst IS NOT NULL", "start"),
        vt__strdupf("SELECT ts, api, device, bytes, free_bytes, total_bytes, stack_id FROM oom_event ORDER BY ts")};
    struct vt_rows ac[C_N];
    struct replay r;
    int rc = SQLITE_OK, i;
    (void)o;

    memset(&r, 0, sizeof r);
    memset(ac, 0, sizeof ac);
    r.t = t;
    t->idleNs = idle_threshold(t);
    if (boundaries_build(t) != 0) rc = SQLITE_NOMEM;
    vt__timeline_begin(t);
    for (i = 0; i < C_N && rc == SQLITE_OK; i++) {
        rc = azSql[i] ? vt__rows_open(&ac[i], t->db, azSql[i], anCol[i], aw[i]) : SQLITE_NOMEM;
        if (rc == SQLITE_OK) rc = vt__rows_next(&ac[i]);
    }
    while (rc == SQLITE_OK) {
        int best = -1;
        for (i = 0; i < C_N; i++) /* ties: memory events, then uses, then OOMs */
            if (ac[i].bRow && (best < 0 || ac[i].ts < ac[best].ts)) best = i;
        if (best < 0) break;
        struct vt_rows *c = &ac[best];
        boundaries_upto(&r, c->ts);
        switch (best) {
        case C_MEM: {
            int op = (int)vt__rows_i64(c, 2);
            t->apLive = r.apLive;
            t->nLive = r.nLive;
            vt__timeline_phase_step(t, c->ts); /* the level just before this event */
            if (op == VT_MEMOP_ALLOC || op == VT_MEMOP_VMM_MAP) rc = on_alloc(&r, c);
            else rc = on_free(&r, c);
            rc = rc == 0 ? SQLITE_OK : SQLITE_NOMEM;
            break;
        }
        case C_KUSE: on_use(&r, vt__rows_i64(c, 1), c->ts, 1); t->nKernelUse++; break;
        case C_COPY:
            if (!vt__rows_null(c, 1)) on_use(&r, vt__rows_i64(c, 1), c->ts, 0);
            if (!vt__rows_null(c, 2)) on_use(&r, vt__rows_i64(c, 2), c->ts, 0);
            t->nCopyUse++;
            break;
        case C_SET: on_use(&r, vt__rows_i64(c, 1), c->ts, 0); t->nCopyUse++; break;
        case C_OOM: rc = on_oom(&r, c) == 0 ? SQLITE_OK : SQLITE_NOMEM; break;
        }
        if (rc == SQLITE_OK) rc = vt__rows_next(c);
    }
    if (rc == SQLITE_OK) {
        boundaries_upto(&r, INT64_MAX);
        for (i = 0; i < t->nSite; i++) site_catch_up(t, &t->aSite[i]);
        t->apLive = r.apLive;
        t->nLive = r.nLive;
        vt__timeline_phase_step(t, INT64_MAX);
        if (finish_live(&r) != 0) rc = SQLITE_NOMEM;
        if (t->bGroupNoMem) rc = SQLITE_NOMEM; /* a peak snapshot could not group what was live */
        if (t->nAlloc == 0 && t->nOom == 0)
            vt__trace_note(t, "the trace holds no allocation: nothing to say about memory (was the "
                              "process's CUDA work done before tracing started, or in a child process "
                              "with a trace of its own?)");
    }
    for (i = 0; i < C_N; i++) {
        vt__rows_close(&ac[i]);
        free(azSql[i]);
    }
    t->apLive = NULL;
    t->nLive = 0;
    for (i = 0; i < r.nLive; i++) free(r.apLive[i]);
    free(r.apLive);
    for (i = 0; i < r.nPage; i++) free(r.aPage[i].a);
    free(r.aPage);
    free(r.aPageHash);
    free(r.apHuge);
    free(r.aFreed);
    if (rc == SQLITE_OK) return VT_EXIT_OK;
    vt__errorf("%s: cannot replay memory events: %s", t->zPath,
               rc == SQLITE_NOMEM ? "out of memory or write-back failed" : sqlite3_errstr(rc));
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? VT_EXIT_CORRUPT : VT_EXIT_INTERNAL;
}
