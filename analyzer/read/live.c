/* The live set: lifetimes paired from allocations and frees under the one rule for live bytes. */
#include "read.h"

#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "vramtrace/schema.h"

/*
 * The rule (docs/schema.md, "Live bytes"): an allocation counts on its device (device-like
 * kinds), as pinned host memory or as managed memory, pageable memory nowhere; a VMM
 * creation counts once where it lives; a mapping of a known creation counts nothing and
 * sends its uses to the creation; a mapping of a handle never seen created (traces of
 * schema 1 and 2, imported snapshots) counts itself; an unmap of a known size ends exactly
 * the range it covers (the parts of a mapping outside it live on as mappings of their own);
 * imported memory counts nothing. Blocks of a framework
 * allocator (tensor_event) live inside memory CUDA already counts: a caller keeps them in a
 * live set of their own, where they count on their device (the allocator's "allocated").
 *
 * Lookup: a hash of 2 MiB pages to the lifetimes overlapping each, for lookups by base
 * address or by any address inside, both O(lifetimes sharing a page); lifetimes over
 * 1 GiB sit under their first page only and in a short list scanned for inside addresses.
 * VMM creations are found by handle in a hash of their own.
 */
#define PAGE_SHIFT 21
#define HUGE ((int64_t)1 << 30)
#define N_ACCT_FIXED 3 /* VT_ACCT_PINNED, _MANAGED, _NONE: slots 0..2; devices from slot 3 */

struct page {
    int64_t page;
    struct vt_life **a;
    int n, cap;
};

struct vt_live {
    struct vt_live_hooks h;
    struct vt_life **apLive; /* dense: every lifetime the hooks see (not owned mappings, not imports) */
    int nLive, nLiveAlloc;
    struct page *aPage;      /* page lists, never removed (bounded by the pages ever used) */
    int nPage, nPageAlloc;
    int *aPageHash, nPageHash; /* open addressing: index into aPage, -1 empty */
    struct vt_life **apHuge; /* lifetimes over HUGE bytes: indexed by their first page only */
    int nHuge, nHugeAlloc;
    struct vt_life **apHandle; /* VMM creations by handle (open addressing, NULL empty) */
    int nHandle, nHandleAlloc;
    int64_t *aFreed;         /* open-addressing set of freed addresses (0 = empty slot) */
    int nFreed, nFreedAlloc;
    struct vt_live_acct *aAcct; /* per account: slot acct + N_ACCT_FIXED for acct >= -3 */
    int nAcct;
    struct vt_live_counts n; /* how the lifetimes the hooks see began and ended, frees with none */
    int64_t tsUntimed;       /* where an allocation of unknown time is put (the peak's time): vt__live_untimed */
    const struct vt_memrow *pRow; /* the row vt__live_apply is applying, NULL between rows */
};

const char *vt__life_status_name(int status)
{
    static const char *const az[] = {"freed", "live_at_end", "free_unknown", "double_free", "free_missing"};
    return status >= 0 && status <= VT_LIFE_FREE_MISSING ? az[status] : "?";
}

static uint64_t mix(int64_t k)
{
    return (uint64_t)k * 0x9E3779B97F4A7C15ull;
}

/* The list of page pg, created when bCreate; NULL if absent (or out of memory when creating). */
static struct page *page_get(struct vt_live *L, int64_t pg, int bCreate)
{
    int i;
    if (L->nPageHash) {
        for (i = (int)(mix(pg) >> 40) & (L->nPageHash - 1); L->aPageHash[i] >= 0; i = (i + 1) & (L->nPageHash - 1))
            if (L->aPage[L->aPageHash[i]].page == pg) return &L->aPage[L->aPageHash[i]];
    }
    if (!bCreate) return NULL;
    if ((L->nPage + 1) * 2 > L->nPageHash) { /* grow and rehash */
        int nNew = L->nPageHash ? L->nPageHash * 2 : 1024;
        int *aNew = malloc(sizeof(int) * (size_t)nNew);
        if (!aNew) return NULL;
        for (i = 0; i < nNew; i++) aNew[i] = -1;
        for (int k = 0; k < L->nPage; k++) {
            int j = (int)(mix(L->aPage[k].page) >> 40) & (nNew - 1);
            while (aNew[j] >= 0) j = (j + 1) & (nNew - 1);
            aNew[j] = k;
        }
        free(L->aPageHash);
        L->aPageHash = aNew;
        L->nPageHash = nNew;
    }
    if (L->nPage == L->nPageAlloc) {
        int nNew = L->nPageAlloc ? L->nPageAlloc * 2 : 512;
        struct page *aNew = realloc(L->aPage, sizeof *aNew * (size_t)nNew);
        if (!aNew) return NULL;
        L->aPage = aNew;
        L->nPageAlloc = nNew;
    }
    for (i = (int)(mix(pg) >> 40) & (L->nPageHash - 1); L->aPageHash[i] >= 0; i = (i + 1) & (L->nPageHash - 1)) {
    }
    L->aPageHash[i] = L->nPage;
    memset(&L->aPage[L->nPage], 0, sizeof L->aPage[0]);
    L->aPage[L->nPage].page = pg;
    return &L->aPage[L->nPage++];
}

/* The page of address addr: addresses are unsigned 64-bit values stored as their pattern (docs/schema.md). */
static int64_t page_of(int64_t addr)
{
    return (int64_t)((uint64_t)addr >> PAGE_SHIFT);
}

/* Last page under which a lifetime is indexed: its first page only when it is huge (or would pass 2^64). */
static int64_t last_page(const struct vt_life *l)
{
    uint64_t n = l->bytes > 0 ? (uint64_t)l->bytes : 1;
    if (n > HUGE || (uint64_t)l->address > UINT64_MAX - (n - 1)) return page_of(l->address);
    return page_of((int64_t)((uint64_t)l->address + n - 1));
}

/* Whether addr lies in l (unsigned arithmetic: an address of 2^63 or more is a negative pattern). */
static int contains(const struct vt_life *l, int64_t addr)
{
    return (uint64_t)addr - (uint64_t)l->address < (l->bytes > 0 ? (uint64_t)l->bytes : 1);
}

/*
 * The live lifetime with base address addr, preferring a device and kind match; NULL if
 * none. A free naming another device or kind than its allocation is accepted only when
 * unambiguous.
 */
static struct vt_life *find_base(struct vt_live *L, int64_t addr, int dev, int kind)
{
    struct page *p = page_get(L, page_of(addr), 0);
    struct vt_life *best = NULL;
    for (int i = 0; p && i < p->n; i++) {
        struct vt_life *l = p->a[i];
        if (l->address != addr) continue;
        if ((dev < 0 || l->device == dev) && (kind == 0 || l->memKind == kind)) return l;
        if (!best) best = l;
    }
    return best && (dev < 0 || kind == 0) ? best : NULL;
}

/* The live lifetime containing addr, or NULL. */
static struct vt_life *find_containing(struct vt_live *L, int64_t addr)
{
    struct page *p = page_get(L, page_of(addr), 0);
    for (int i = 0; p && i < p->n; i++)
        if (contains(p->a[i], addr)) return p->a[i];
    for (int i = 0; i < L->nHuge; i++)
        if (contains(L->apHuge[i], addr)) return L->apHuge[i];
    return NULL;
}

/* Index l under its pages (and the huge list). 0, or -1 when out of memory (nothing indexed). */
static int index_add(struct vt_live *L, struct vt_life *l)
{
    int64_t pg;
    if (l->bytes > HUGE && L->nHuge == L->nHugeAlloc) {
        int nNew = L->nHugeAlloc ? L->nHugeAlloc * 2 : 16;
        struct vt_life **aNew = realloc(L->apHuge, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        L->apHuge = aNew;
        L->nHugeAlloc = nNew;
    }
    for (pg = page_of(l->address); pg <= last_page(l); pg++) {
        struct page *p = page_get(L, pg, 1);
        if (p && p->n == p->cap) {
            int nNew = p->cap ? p->cap * 2 : 4;
            struct vt_life **aNew = realloc(p->a, sizeof *aNew * (size_t)nNew);
            if (!aNew) p = NULL;
            else p->a = aNew, p->cap = nNew;
        }
        if (!p) { /* undo the pages already linked */
            for (int64_t q = page_of(l->address); q < pg; q++) {
                struct page *pq = page_get(L, q, 0);
                if (pq) pq->n--;
            }
            return -1;
        }
        p->a[p->n++] = l;
    }
    if (l->bytes > HUGE) L->apHuge[L->nHuge++] = l;
    return 0;
}

static void index_remove(struct vt_live *L, struct vt_life *l)
{
    for (int64_t pg = page_of(l->address); pg <= last_page(l); pg++) {
        struct page *p = page_get(L, pg, 0);
        for (int i = 0; p && i < p->n; i++)
            if (p->a[i] == l) {
                p->a[i] = p->a[--p->n];
                break;
            }
    }
    for (int i = 0; l->bytes > HUGE && i < L->nHuge; i++)
        if (L->apHuge[i] == l) {
            L->apHuge[i] = L->apHuge[--L->nHuge];
            break;
        }
}

/* The slot of account acct in L->aAcct, grown as devices appear; -1 when out of memory. */
static int acct_slot(struct vt_live *L, int acct)
{
    int k = acct + N_ACCT_FIXED;
    if (k < 0) k = VT_ACCT_NONE + N_ACCT_FIXED;
    if (k >= L->nAcct) {
        int nNew = k + 8;
        struct vt_live_acct *aNew = realloc(L->aAcct, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        for (int i = L->nAcct; i < nNew; i++) {
            memset(&aNew[i], 0, sizeof aNew[i]);
            aNew[i].peakTs = aNew[i].poolPeakTs = -1;
        }
        L->aAcct = aNew;
        L->nAcct = nNew;
    }
    return k;
}

int64_t vt__live_bytes(const struct vt_live *L, int acct)
{
    int k = acct + N_ACCT_FIXED;
    return k >= 0 && k < L->nAcct ? L->aAcct[k].live : 0;
}

const struct vt_live_acct *vt__live_acct(const struct vt_live *L, int acct)
{
    int k = acct + N_ACCT_FIXED;
    return k >= N_ACCT_FIXED - 2 && k < L->nAcct && (L->aAcct[k].peak > 0 || L->aAcct[k].bUsed) ? &L->aAcct[k] : NULL;
}

int vt__live_nacct(const struct vt_live *L)
{
    return L->nAcct - N_ACCT_FIXED;
}

const struct vt_live_counts *vt__live_counts(const struct vt_live *L)
{
    return &L->n;
}

/* Count (sign +1) or uncount (-1) l in its account, its peak kept. 0 or -1 (out of memory). */
static int count(struct vt_live *L, const struct vt_life *l, int sign)
{
    struct vt_live_acct *a;
    int k;
    if (l->acct == VT_ACCT_NONE || l->bytes <= 0) return 0;
    if ((k = acct_slot(L, l->acct)) < 0) return -1;
    a = &L->aAcct[k];
    a->bUsed = 1;
    a->live += sign * l->bytes;
    if (a->live > a->peak) a->peak = a->live, a->peakTs = l->allocTs >= 0 ? l->allocTs : L->tsUntimed;
    return 0;
}

/* Where a lifetime's bytes count: a device id, VT_ACCT_PINNED, VT_ACCT_MANAGED or VT_ACCT_NONE. */
static int acct_of(const struct vt_memrow *m)
{
    int dev = m->device >= 0 ? m->device : 0;
    if (m->bTensor) return dev;
    switch (m->kind) {
    case VT_MEMKIND_PINNED: return VT_ACCT_PINNED;
    case VT_MEMKIND_MANAGED:
    case VT_MEMKIND_MANAGED_STATIC: return VT_ACCT_MANAGED;
    case VT_MEMKIND_DEVICE:
    case VT_MEMKIND_ARRAY:
    case VT_MEMKIND_DEVICE_STATIC:
    case VT_MEMKIND_UNKNOWN: return dev;
    default: return VT_ACCT_NONE;
    }
}

/* The VMM creation with handle h, its slot in *pSlot (an empty one when absent). */
static struct vt_life *handle_find(const struct vt_live *L, int64_t h, int *pSlot)
{
    int i;
    *pSlot = -1;
    if (!L->nHandleAlloc) return NULL;
    for (i = (int)(mix(h) >> 40) & (L->nHandleAlloc - 1); L->apHandle[i]; i = (i + 1) & (L->nHandleAlloc - 1))
        if (L->apHandle[i]->address == h) {
            *pSlot = i;
            return L->apHandle[i];
        }
    *pSlot = i;
    return NULL;
}

/* Put creation l (address = its handle) in the handle hash. 0 or -1. */
static int handle_add(struct vt_live *L, struct vt_life *l)
{
    int slot;
    if ((L->nHandle + 1) * 2 > L->nHandleAlloc) {
        int nNew = L->nHandleAlloc ? L->nHandleAlloc * 2 : 256, nOld = L->nHandleAlloc;
        struct vt_life **aOld = L->apHandle, **aNew = calloc((size_t)nNew, sizeof *aNew);
        if (!aNew) return -1;
        L->apHandle = aNew;
        L->nHandleAlloc = nNew;
        for (int i = 0; i < nOld; i++)
            if (aOld[i]) {
                handle_find(L, aOld[i]->address, &slot);
                L->apHandle[slot] = aOld[i];
            }
        free(aOld);
    }
    handle_find(L, l->address, &slot);
    L->apHandle[slot] = l;
    L->nHandle++;
    return 0;
}

/* Remove the creation in slot from the hash, re-placing the entries after it (linear probing). */
static void handle_remove(struct vt_live *L, int slot)
{
    int i = slot, j;
    L->apHandle[i] = NULL;
    L->nHandle--;
    for (j = (i + 1) & (L->nHandleAlloc - 1); L->apHandle[j]; j = (j + 1) & (L->nHandleAlloc - 1)) {
        struct vt_life *e = L->apHandle[j];
        int k;
        L->apHandle[j] = NULL;
        handle_find(L, e->address, &k);
        L->apHandle[k] = e;
    }
}

static int freed_add(struct vt_live *L, int64_t addr);
/* 1 if addr was freed before. */
static int freed_has(const struct vt_live *L, int64_t addr)
{
    if (!L->nFreedAlloc) return 0;
    for (int i = (int)(mix(addr | 1) >> 33) & (L->nFreedAlloc - 1);; i = (i + 1) & (L->nFreedAlloc - 1)) {
        if (L->aFreed[i] == 0) return 0;
        if (L->aFreed[i] == (addr | 1)) return 1;
    }
}

/* Remember a freed address (low bit set so 0 stays the empty marker); 0 or -1 (out of memory). */
static int freed_add(struct vt_live *L, int64_t addr)
{
    int64_t key = addr | 1;
    if ((L->nFreed + 1) * 2 > L->nFreedAlloc) {
        int nNew = L->nFreedAlloc ? L->nFreedAlloc * 2 : 1024, nOld = L->nFreedAlloc;
        int64_t *aOld = L->aFreed, *aNew = calloc((size_t)nNew, sizeof *aNew);
        if (!aNew) return -1;
        L->aFreed = aNew;
        L->nFreedAlloc = nNew;
        L->nFreed = 0;
        for (int i = 0; i < nOld; i++)
            if (aOld[i]) (void)freed_add(L, aOld[i]); /* room for all: cannot fail */
        free(aOld);
    }
    for (int i = (int)(mix(key) >> 33) & (L->nFreedAlloc - 1);; i = (i + 1) & (L->nFreedAlloc - 1)) {
        if (L->aFreed[i] == key) return 0;
        if (L->aFreed[i] == 0) {
            L->aFreed[i] = key;
            L->nFreed++;
            return 0;
        }
    }
}

/* Append l to the dense array the hooks see. 0 or -1. */
static int dense_add(struct vt_live *L, struct vt_life *l)
{
    if (L->nLive == L->nLiveAlloc) {
        int nNew = L->nLiveAlloc ? L->nLiveAlloc * 2 : 1024;
        struct vt_life **aNew = realloc(L->apLive, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        L->apLive = aNew;
        L->nLiveAlloc = nNew;
    }
    l->liveIdx = L->nLive;
    L->apLive[L->nLive++] = l;
    return 0;
}

static void dense_remove(struct vt_live *L, struct vt_life *l)
{
    L->apLive[l->liveIdx] = L->apLive[--L->nLive];
    L->apLive[l->liveIdx]->liveIdx = l->liveIdx;
}

/* Does the caller see l (hooks, the dense array)? Not a mapping of a creation (unless the hooks ask for them), not
 * imported memory. */
static int seen(const struct vt_live *L, const struct vt_life *l)
{
    return (!l->pOwner || L->h.bMappings) && l->op != VT_MEMOP_IMPORT;
}

/* A new lifetime from row m (status freed until it ends), or NULL when out of memory. */
static struct vt_life *life_new(const struct vt_memrow *m, int acct)
{
    struct vt_life *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->address = m->address;
    l->bytes = m->bytes > 0 ? m->bytes : 0;
    l->allocTs = m->ts;
    l->freeTs = l->firstUse = l->lastUse = l->useBound = -1;
    l->allocEventId = m->id;
    l->freeEventId = l->freeStackId = -1;
    l->stackId = m->stackId;
    l->device = m->device;
    l->memKind = m->kind;
    l->op = m->op;
    l->allocApi = m->api;
    l->acct = acct;
    l->bTensor = m->bTensor;
    /* no API call behind it (correlation 0, no api): the CUDA runtime or driver allocating for itself */
    l->bInternal = !m->bTensor && m->op == VT_MEMOP_ALLOC && m->correlation <= 0 && m->api == 0 && m->stackId < 0;
    l->site = l->phase = -1;
    return l;
}

/* Begin lifetime l: indexed (unless a creation, found by handle), counted, seen. 0 or -1. */
static int begin(struct vt_live *L, struct vt_life *l)
{
    int rc = l->op == VT_MEMOP_VMM_CREATE ? handle_add(L, l) : index_add(L, l);
    if (rc != 0) return -1;
    if (count(L, l, +1) != 0) return -1;
    if (!seen(L, l)) return 0;
    if (dense_add(L, l) != 0) return -1;
    L->n.nBegin++;
    L->n.beginBytes += l->bytes;
    return L->h.xBegin ? L->h.xBegin(L->h.pArg, l) : 0;
}

static int owner_drop(struct vt_live *L, struct vt_life *owner, const struct vt_memrow *m);

/* End lifetime l at m (its free) with status: hooks, uncounted, unindexed, freed; a creation it mapped that was
 * released ends with its last mapping. 0 or -1. */
static int end(struct vt_live *L, struct vt_life *l, const struct vt_memrow *m, int status)
{
    struct vt_life *owner;
    int rc = 0, slot;
    if (seen(L, l) && L->h.xBeforeEnd && L->h.xBeforeEnd(L->h.pArg, l) != 0) return -1;
    l->freeTs = m->ts;
    l->freeEventId = m->id;
    l->freeStackId = m->stackId;
    l->freeApi = m->api;
    l->status = status;
    if (count(L, l, -1) != 0) return -1;
    if (l->op == VT_MEMOP_VMM_CREATE) {
        if (!l->bReleased && handle_find(L, l->address, &slot)) handle_remove(L, slot); /* (released: out already) */
    } else {
        index_remove(L, l);
    }
    if (seen(L, l)) {
        dense_remove(L, l);
        if (status == VT_LIFE_FREE_MISSING) L->n.nFreeMissing++;
        else L->n.nFreed++;
        if (L->h.xEnd) rc = L->h.xEnd(L->h.pArg, l);
    }
    owner = l->pOwner;
    free(l);
    return rc == 0 && owner ? owner_drop(L, owner, m) : rc;
}

/* One mapping of creation owner less, at m: a creation released while mapped ends with its last mapping (CUDA frees
 * the memory then). 0 or -1. */
static int owner_drop(struct vt_live *L, struct vt_life *owner, const struct vt_memrow *m)
{
    return --owner->nMap == 0 && owner->bReleased ? end(L, owner, m, VT_LIFE_FREED) : 0;
}

/* Whether l has a byte in [a, a + n) (n > 0; unsigned arithmetic, as contains). */
static int overlaps(const struct vt_life *l, int64_t a, int64_t n)
{
    return contains(l, a) || (uint64_t)l->address - (uint64_t)a < (uint64_t)n;
}

/* A live mapping (VMM map) on device dev (any when dev < 0) with a byte in [a, a + n), or NULL: the pages the
 * range spans (every page when it spans more than there are), then the huge list. */
static struct vt_life *find_mapping_in(struct vt_live *L, int64_t a, int64_t n, int dev)
{
    const uint64_t ua = (uint64_t)a, un = (uint64_t)n;
    const uint64_t first = ua >> PAGE_SHIFT, last = (un - 1 > UINT64_MAX - ua ? UINT64_MAX : ua + un - 1) >> PAGE_SHIFT;
    const int bAll = last - first >= (uint64_t)L->nPage; /* more pages than are in use: each page in use */
    const uint64_t nPg = bAll ? (uint64_t)L->nPage : last - first + 1;
    for (uint64_t k = 0; k < nPg; k++) {
        struct page *p = bAll ? &L->aPage[k] : page_get(L, page_of(a) + (int64_t)k, 0);
        for (int i = 0; p && i < p->n; i++) {
            struct vt_life *l = p->a[i];
            if (l->op == VT_MEMOP_VMM_MAP && (dev < 0 || l->device == dev) && overlaps(l, a, n)) return l;
        }
    }
    for (int i = 0; i < L->nHuge; i++) {
        struct vt_life *l = L->apHuge[i];
        if (l->op == VT_MEMOP_VMM_MAP && (dev < 0 || l->device == dev) && overlaps(l, a, n)) return l;
    }
    return NULL;
}

/* Begin the part [a, a + n) of mapping l (ended by unmap m) that m left mapped: a mapping of its own from m, with l's
 * owner, account and call site. 0 or -1. */
static int piece_begin(struct vt_live *L, const struct vt_life *l, const struct vt_memrow *m, int64_t a, int64_t n)
{
    struct vt_memrow r = *m;
    struct vt_life *p;
    r.address = a;
    r.bytes = n;
    r.op = VT_MEMOP_VMM_MAP;
    r.kind = l->memKind;
    r.device = l->device;
    r.stackId = l->stackId;
    r.api = l->allocApi;
    r.bTensor = l->bTensor;
    if (!(p = life_new(&r, l->acct))) return -1;
    if ((p->pOwner = l->pOwner) != NULL) p->pOwner->nMap++;
    return begin(L, p);
}

/* A free (or unmap, or release) that found no lifetime: double or unknown. 0 or -1. */
static int stray(struct vt_live *L, const struct vt_memrow *m)
{
    int status = freed_has(L, m->address) ? VT_LIFE_DOUBLE_FREE : VT_LIFE_FREE_UNKNOWN;
    if (status == VT_LIFE_DOUBLE_FREE) L->n.nDoubleFree++;
    else L->n.nFreeUnknown++;
    return L->h.xStray ? L->h.xStray(L->h.pArg, m, status) : 0;
}

/*
 * Unmap m of a known range: every live mapping it overlaps ends at m, and the parts of one outside the range
 * (before it, after it) begin at m as mappings of their own, so exactly the bytes the range covers are released.
 * Nothing overlapped: a stray. 0 or -1.
 */
static int unmap_range(struct vt_live *L, const struct vt_memrow *m)
{
    const uint64_t a = (uint64_t)m->address, n = (uint64_t)m->bytes;
    struct vt_life *l;
    int nHit = 0;
    while ((l = find_mapping_in(L, m->address, m->bytes, m->device)) != NULL) {
        const uint64_t la = (uint64_t)l->address, le = la + (uint64_t)l->bytes; /* (unsigned: may wrap) */
        /* a head where l begins outside the range (so before it), a tail where l's last byte lies past it */
        const int bHead = la - a >= n, bTail = l->bytes > 0 && le - 1 - a >= n;
        const struct vt_life was = *l; /* what the pieces take from l, which end frees */
        if (was.pOwner) was.pOwner->nMap++; /* held while the pieces map it on (a released one ends after them) */
        if (end(L, l, m, VT_LIFE_FREED) != 0) return -1;
        if (bHead && piece_begin(L, &was, m, was.address, (int64_t)(a - la)) != 0) return -1;
        if (bTail && piece_begin(L, &was, m, (int64_t)(a + n), (int64_t)(le - (a + n))) != 0) return -1;
        if (was.pOwner && owner_drop(L, was.pOwner, m) != 0) return -1;
        nHit++;
    }
    return nHit ? 0 : stray(L, m);
}

/* vt__live_apply's work (the row is L->pRow meanwhile). */
static int apply(struct vt_live *L, const struct vt_memrow *m)
{
    struct vt_life *l, *owner;
    int slot, acct;
    /* a stream-ordered pool's allocation or free says how much the pool holds (cudaMallocAsync): its reserved */
    if (m->poolSize >= 0 && m->device >= 0 && (m->op == VT_MEMOP_ALLOC || m->op == VT_MEMOP_FREE)) {
        struct vt_live_acct *a;
        if ((slot = acct_slot(L, m->device)) < 0) return -1;
        a = &L->aAcct[slot];
        a->bUsed = 1;
        if (m->poolSize > a->poolPeak) a->poolPeak = m->poolSize, a->poolPeakTs = m->ts;
    }
    switch (m->op) {
    case VT_MEMOP_ALLOC:
    case VT_MEMOP_VMM_MAP:
    case VT_MEMOP_IMPORT:
        l = find_base(L, m->address, m->device, m->op == VT_MEMOP_ALLOC ? m->kind : 0);
        if (l && end(L, l, m, VT_LIFE_FREE_MISSING) != 0) return -1; /* its free was never seen */
        owner = m->op == VT_MEMOP_VMM_MAP && m->handle >= 0 ? handle_find(L, m->handle, &slot) : NULL;
        acct = m->op == VT_MEMOP_IMPORT || owner ? VT_ACCT_NONE : acct_of(m);
        if (!(l = life_new(m, acct))) return -1;
        if (owner) {
            l->pOwner = owner;
            owner->nMap++;
        }
        if (begin(L, l) != 0) return -1;
        return 0;
    case VT_MEMOP_VMM_CREATE:
        if ((l = handle_find(L, m->address, &slot)) != NULL && end(L, l, m, VT_LIFE_FREE_MISSING) != 0) return -1;
        /* physical memory where it lives: a device, or pinned host memory (host and host-NUMA locations) */
        if (!(l = life_new(m, m->kind == VT_MEMKIND_PINNED ? VT_ACCT_PINNED : m->device >= 0 ? m->device : 0)))
            return -1;
        return begin(L, l);
    case VT_MEMOP_VMM_RELEASE:
        if ((l = handle_find(L, m->address, &slot)) != NULL && l->nMap > 0) { /* freed at its last unmap */
            handle_remove(L, slot); /* (the handle's value may be given out again) */
            l->bReleased = 1;
            return 0;
        }
        if (l) return end(L, l, m, VT_LIFE_FREED);
        return freed_add(L, m->address) == 0 ? stray(L, m) : -1;
    case VT_MEMOP_VMM_UNMAP:
        /* a range: what it covers, of one mapping or several (docs/analysis.md); no size: the mapping at its base */
        if (m->bytes > 0) return unmap_range(L, m) == 0 ? freed_add(L, m->address) : -1;
        /* fall through */
    case VT_MEMOP_FREE:
    case VT_MEMOP_IMPORT_CLOSE:
        l = find_base(L, m->address, m->device, m->op == VT_MEMOP_FREE ? m->kind : 0);
        if (l) {
            if (end(L, l, m, VT_LIFE_FREED) != 0) return -1;
        } else if (m->op != VT_MEMOP_IMPORT_CLOSE && stray(L, m) != 0) {
            return -1;
        }
        return freed_add(L, m->address);
    default: return 0; /* an op this version does not know: not memory it can account */
    }
}

int vt__live_apply(struct vt_live *L, const struct vt_memrow *m)
{
    int rc;
    L->pRow = m;
    rc = apply(L, m);
    L->pRow = NULL;
    return rc;
}

const struct vt_memrow *vt__live_row(const struct vt_live *L)
{
    return L->pRow;
}

struct vt_life *vt__live_mapping(struct vt_live *L, int64_t addr, int dev)
{
    return find_mapping_in(L, addr, 1, dev);
}

struct vt_life *vt__live_use(struct vt_live *L, int64_t addr, int bBase)
{
    struct vt_life *l = NULL;
    if (bBase) l = find_base(L, addr, -1, 0); /* a kernel argument: the allocation whose base it is */
    if (!l) l = find_containing(L, addr);
    return l && l->pOwner ? l->pOwner : l;
}

int vt__live_was_freed(const struct vt_live *L, int64_t addr)
{
    return freed_has(L, addr);
}

struct vt_life *const *vt__live_all(const struct vt_live *L, int *pn)
{
    *pn = L->nLive;
    return L->apLive;
}

struct vt_live *vt__live_new(const struct vt_live_hooks *pHooks)
{
    struct vt_live *L = calloc(1, sizeof *L);
    if (L && pHooks) L->h = *pHooks;
    return L;
}

int vt__live_finish(struct vt_live *L)
{
    for (int i = 0; i < L->nLive; i++) {
        struct vt_life *l = L->apLive[i];
        l->status = VT_LIFE_LIVE_AT_END;
        L->n.nLiveEnd++;
        L->n.liveEndBytes += l->bytes;
        if (l->bInternal) L->n.nInternalEnd++, L->n.internalEndBytes += l->bytes;
        if (L->h.xBeforeEnd && L->h.xBeforeEnd(L->h.pArg, l) != 0) return -1;
        if (L->h.xEnd && L->h.xEnd(L->h.pArg, l) != 0) return -1;
    }
    return 0;
}

void vt__live_free(struct vt_live *L)
{
    if (!L) return;
    /* every lifetime is under its pages, the huge list, or the handle hash (a creation released while mapped: in
     * the dense array only): free each once */
    for (int i = 0; i < L->nLive; i++)
        if (L->apLive[i]->bReleased) free(L->apLive[i]);
    for (int i = 0; i < L->nHandleAlloc; i++) free(L->apHandle[i]);
    /* a lifetime over several pages is freed on its first page only; the pages are in no order,
     * so every other page's link is cleared before anything is freed (never read after a free) */
    for (int i = 0; i < L->nPage; i++) {
        struct page *p = &L->aPage[i];
        for (int k = 0; k < p->n; k++)
            if (page_of(p->a[k]->address) != p->page) p->a[k] = NULL;
    }
    for (int i = 0; i < L->nPage; i++) {
        struct page *p = &L->aPage[i];
        for (int k = 0; k < p->n; k++) free(p->a[k]);
        free(p->a);
    }
    free(L->apLive);
    free(L->aPage);
    free(L->aPageHash);
    free(L->apHuge);
    free(L->apHandle);
    free(L->aFreed);
    free(L->aAcct);
    free(L);
}

void vt__memrow_read(const struct vt_rows *c, int bTensor, struct vt_memrow *m)
{
    memset(m, 0, sizeof *m);
    m->ts = c->ts;
    m->id = vt__rows_i64(c, 1);
    m->op = (int)vt__rows_i64(c, 2);
    m->kind = (int)vt__rows_i64(c, 3);
    m->address = vt__rows_i64(c, 4);
    m->device = (int)vt__rows_or(c, 5, -1);
    m->bytes = vt__rows_or(c, 6, -1);
    m->stackId = vt__rows_or(c, 7, -1);
    m->bTensor = bTensor;
    if (bTensor) {
        /* a block is handed out, and freed when its memory is back in the allocator's cache */
        m->op = m->op == VT_TENSOROP_ALLOC ? VT_MEMOP_ALLOC : m->op == VT_TENSOROP_FREE ? VT_MEMOP_FREE : 0;
        m->kind = VT_MEMKIND_DEVICE;
        m->correlation = m->handle = m->poolSize = m->poolUsed = -1;
        return;
    }
    m->api = (int)vt__rows_or(c, 8, 0);
    m->poolSize = vt__rows_or(c, 9, -1);
    m->poolUsed = vt__rows_or(c, 10, -1);
    m->correlation = vt__rows_or(c, 11, 0);
    m->handle = vt__rows_or(c, 12, -1);
}

int64_t vt__live_untimed_ts(const struct vt_tracefile *f)
{
    if (!f->bTimes) return -1; /* no time known at all: the peak's time is unknown too */
    return f->bUntimedBefore ? f->t0 : f->t1;
}

int64_t vt__life_begin_ts(const struct vt_tracefile *f, const struct vt_life *l)
{
    return l->allocTs >= 0 ? l->allocTs : f->bUntimedBefore ? vt__live_untimed_ts(f) : -1;
}

int vt__live_untimed(const struct vt_tracefile *f, struct vt_live *L, int bTensor)
{
    int k = bTensor ? VT_T_TENSOR : VT_T_MEM, rc = SQLITE_OK;
    const char *zCols = strchr(bTensor ? VT_TENSORROW_COLS : VT_MEMROW_COLS, ',') + 1; /* all but the time */
    struct vt_rows c;
    struct vt_memrow m;
    char *zSql;
    L->tsUntimed = vt__live_untimed_ts(f);
    if (!f->aT[k].bPresent || f->aT[k].nNoTime == 0) return SQLITE_OK;
    /* (a mapping of unknown time: an expandable segment's pages mapped before an imported history began) */
    zSql = vt__strdupf("SELECT -1,%s FROM \"%s\" WHERE ts IS NULL AND op IN (%d, %d) ORDER BY rowid", zCols,
                       vt__tbl_name(k), bTensor ? VT_TENSOROP_ALLOC : VT_MEMOP_ALLOC,
                       bTensor ? VT_TENSOROP_ALLOC : VT_MEMOP_VMM_MAP);
    memset(&c, 0, sizeof c);
    rc = zSql ? vt__rows_open(&c, f->db, zSql, bTensor ? VT_TENSORROW_NCOL : VT_MEMROW_NCOL, 0) : SQLITE_NOMEM;
    while (rc == SQLITE_OK && (rc = vt__rows_next(&c)) == SQLITE_OK && c.bRow) {
        vt__memrow_read(&c, bTensor, &m);
        if (vt__live_use(L, m.address, 1) || vt__live_was_freed(L, m.address)) continue;
        if (vt__live_apply(L, &m) != 0) rc = SQLITE_NOMEM;
    }
    vt__rows_close(&c);
    free(zSql);
    return rc;
}

/*
 * The rows of memory_event through aL[0] and of tensor_event through aL[1] (either NULL: that table
 * not read) in one time order (at equal times a CUDA allocation before the blocks handed out of it,
 * and the blocks freed before a CUDA free), pNow (when not NULL) set to each row's time before it is
 * applied; with bUntimed the allocations of unknown time (vt__live_untimed) before them (made before
 * the first event: f->bUntimedBefore) or after them, then the lifetimes still live end live_at_end.
 * A VT_EXIT code (one line printed on error).
 */
static int live_walk(struct vt_tracefile *f, struct vt_live *aL[2], int bUntimed, int64_t *pNow)
{
    struct vt_rows c[2];
    char *azSql[2] = {NULL, NULL};
    struct vt_memrow m[2];
    int bRow[2] = {0, 0}, rc = SQLITE_OK, k;
    memset(c, 0, sizeof c);
    for (k = 0; k < 2 && rc == SQLITE_OK; k++) { /* k: 1 for tensor rows */
        int t = k ? VT_T_TENSOR : VT_T_MEM;
        if (!aL[k] || !f->aT[t].bPresent) continue;
        azSql[k] = vt__ordered_sql(f, t, k ? VT_TENSORROW_COLS : VT_MEMROW_COLS, "1", "ts, id");
        rc = azSql[k] ? vt__rows_open(&c[k], f->db, azSql[k], k ? VT_TENSORROW_NCOL : VT_MEMROW_NCOL, f->aT[t].w)
                      : SQLITE_NOMEM;
        bRow[k] = 1; /* a row to read */
    }
    if (bUntimed && f->bUntimedBefore) { /* live since before the first event: CUDA's memory, then the blocks */
        if (pNow) *pNow = vt__live_untimed_ts(f);
        for (k = 0; k < 2 && rc == SQLITE_OK; k++)
            if (aL[k]) rc = vt__live_untimed(f, aL[k], k);
    }
    for (;;) {
        for (k = 0; k < 2 && rc == SQLITE_OK; k++) { /* the next row of each table, free_requested skipped */
            while (bRow[k] == 1 && (rc = vt__rows_next(&c[k])) == SQLITE_OK) {
                if (!c[k].bRow) {
                    bRow[k] = 0;
                    break;
                }
                vt__memrow_read(&c[k], k, &m[k]);
                if (!k || m[k].op) { /* tensor rows: free_requested (the block waits on streams) skipped */
                    bRow[k] = 2;
                    break;
                }
            }
        }
        if (rc != SQLITE_OK || (!bRow[0] && !bRow[1])) break;
        k = !bRow[0] ? 1 : !bRow[1] ? 0 : m[1].ts < m[0].ts || (m[1].ts == m[0].ts && m[0].op == VT_MEMOP_FREE);
        if (pNow) *pNow = m[k].ts;
        if (vt__live_apply(aL[k], &m[k]) != 0) rc = SQLITE_NOMEM;
        bRow[k] = 1;
    }
    for (k = 0; k < 2; k++) {
        if (aL[k] && rc == SQLITE_OK && bUntimed && !f->bUntimedBefore) rc = vt__live_untimed(f, aL[k], k);
        if (aL[k] && rc == SQLITE_OK && vt__live_finish(aL[k]) != 0) rc = SQLITE_NOMEM;
        vt__rows_close(&c[k]);
        free(azSql[k]);
    }
    if (rc == SQLITE_OK) return VT_EXIT_OK;
    vt__errorf("%s: cannot read %s events: %s", f->zPath, aL[0] ? "memory" : "tensor", sqlite3_errstr(rc));
    return vt__exit_for_sqlite(rc);
}

int vt__live_pass(struct vt_tracefile *f, struct vt_live *L, int bTensor)
{
    struct vt_live *aL[2] = {NULL, NULL};
    aL[bTensor != 0] = L;
    return live_walk(f, aL, 1, NULL);
}

int vt__live_pass_both(struct vt_tracefile *f, struct vt_live *Lmem, struct vt_live *Lten, int64_t *pNow)
{
    struct vt_live *aL[2];
    aL[0] = Lmem;
    aL[1] = Lten;
    return live_walk(f, aL, 1, pNow);
}
