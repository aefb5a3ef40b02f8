/* A bounded hash map from a 32-bit key to a fixed-size value, evicting the oldest entry when full. */
#include "boundmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct slot_hdr {
    uint32_t key;
    uint32_t seq;  /* insertion sequence, matches the FIFO item */
    uint32_t used;
    uint32_t pad;
};

#define SLOT(m, i) ((struct slot_hdr *)((m)->aSlot + (i) * (m)->szSlot))
#define VALUE(h) ((void *)((uint8_t *)(h) + sizeof(struct slot_hdr)))

/* Slot index a key hashes to (multiplicative hash, table size is a power of two). */
static size_t home(const struct vt__boundmap *m, uint32_t key)
{
    return (size_t)((key * 2654435761u) ^ (key >> 16)) & (m->nSlot - 1);
}

int vt__boundmap_init(struct vt__boundmap *m, size_t nMax, size_t szValue)
{
    memset(m, 0, sizeof *m);
    if (nMax < 1) nMax = 1;
    m->nMax = nMax;
    m->szValue = szValue;
    m->szSlot = (sizeof(struct slot_hdr) + szValue + 7) & ~(size_t)7;
    m->nSlot = 16;
    while (m->nSlot < 2 * nMax) m->nSlot *= 2;
    m->aSlot = calloc(m->nSlot, m->szSlot);
    m->aFifo = malloc(nMax * sizeof *m->aFifo);
    if (!m->aSlot || !m->aFifo) {
        vt__boundmap_free(m);
        return -ENOMEM;
    }
    return 0;
}

void vt__boundmap_free(struct vt__boundmap *m)
{
    free(m->aSlot);
    free(m->aFifo);
    m->aSlot = NULL;
    m->aFifo = NULL;
    m->nLive = m->nFifo = 0;
}

/* Index of key's slot, or (size_t)-1. */
static size_t find(const struct vt__boundmap *m, uint32_t key)
{
    size_t i = home(m, key);
    for (;;) {
        struct slot_hdr *h = SLOT(m, i);
        if (!h->used) return (size_t)-1;
        if (h->key == key) return i;
        i = (i + 1) & (m->nSlot - 1);
    }
}

/* Empty slot i and shift later members of its probe run back (no tombstones). */
static void delete_at(struct vt__boundmap *m, size_t i)
{
    size_t j = i;
    for (;;) {
        struct slot_hdr *hj;
        size_t k;
        j = (j + 1) & (m->nSlot - 1);
        hj = SLOT(m, j);
        if (!hj->used) break;
        k = home(m, hj->key);
        /* hj may move to i only if its home is not cyclically in (i, j]. */
        if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j)) continue;
        memcpy(SLOT(m, i), hj, m->szSlot);
        i = j;
    }
    SLOT(m, i)->used = 0;
    m->nLive--;
}

/* Pop the oldest FIFO item; if its entry is still live, remove it into the outputs and return 1. */
static int pop_oldest(struct vt__boundmap *m, uint32_t *pKey, void *pOut)
{
    uint64_t item = m->aFifo[m->iFifoHead];
    uint32_t key = (uint32_t)(item >> 32), seq = (uint32_t)item;
    size_t i;
    m->iFifoHead = (m->iFifoHead + 1) % m->nMax;
    m->nFifo--;
    i = find(m, key);
    if (i == (size_t)-1 || SLOT(m, i)->seq != seq) return 0;
    if (pKey) *pKey = key;
    if (pOut) memcpy(pOut, VALUE(SLOT(m, i)), m->szValue);
    delete_at(m, i);
    return 1;
}

int vt__boundmap_put(struct vt__boundmap *m, uint32_t key, const void *pValue, uint32_t *pEvictedKey,
                     void *pEvicted)
{
    int evicted = 0;
    size_t i = find(m, key);
    struct slot_hdr *h;
    if (i == (size_t)-1) {
        /* The FIFO holds an item for every live entry, so a full FIFO bounds nLive too. */
        while (m->nFifo == m->nMax && !evicted) evicted = pop_oldest(m, pEvictedKey, pEvicted);
        i = home(m, key);
        while (SLOT(m, i)->used) i = (i + 1) & (m->nSlot - 1);
        m->nLive++;
    } else {
        while (m->nFifo == m->nMax && !evicted) {
            /* Replacing: the old FIFO item of this key goes stale; make room for the new one. */
            uint64_t item = m->aFifo[m->iFifoHead];
            if ((uint32_t)(item >> 32) == key) {
                m->iFifoHead = (m->iFifoHead + 1) % m->nMax;
                m->nFifo--;
                break;
            }
            evicted = pop_oldest(m, pEvictedKey, pEvicted);
            i = find(m, key);
        }
    }
    h = SLOT(m, i);
    h->key = key;
    h->seq = ++m->iSeq;
    h->used = 1;
    memcpy(VALUE(h), pValue, m->szValue);
    m->aFifo[(m->iFifoHead + m->nFifo) % m->nMax] = ((uint64_t)key << 32) | h->seq;
    m->nFifo++;
    return evicted;
}

void *vt__boundmap_get(struct vt__boundmap *m, uint32_t key)
{
    size_t i = find(m, key);
    return i == (size_t)-1 ? NULL : VALUE(SLOT(m, i));
}

int vt__boundmap_remove(struct vt__boundmap *m, uint32_t key, void *pOut)
{
    size_t i = find(m, key);
    if (i == (size_t)-1) return 0;
    if (pOut) memcpy(pOut, VALUE(SLOT(m, i)), m->szValue);
    delete_at(m, i);
    return 1;
}

void vt__boundmap_walk(struct vt__boundmap *m, uint32_t *pSeq, int (*xVisit)(void *, uint32_t, void *), void *pCtx)
{
    size_t lo = 0, hi = m->nFifo;
    while (lo < hi) { /* the first FIFO item after *pSeq (wrapping sequences compare by difference) */
        size_t mid = lo + (hi - lo) / 2;
        if ((int32_t)((uint32_t)m->aFifo[(m->iFifoHead + mid) % m->nMax] - *pSeq) <= 0) lo = mid + 1;
        else hi = mid;
    }
    for (; lo < m->nFifo; lo++) {
        uint64_t item = m->aFifo[(m->iFifoHead + lo) % m->nMax];
        size_t i = find(m, (uint32_t)(item >> 32));
        if (i == (size_t)-1 || SLOT(m, i)->seq != (uint32_t)item) continue; /* removed or replaced since */
        if (!xVisit(pCtx, (uint32_t)(item >> 32), VALUE(SLOT(m, i)))) return;
        *pSeq = (uint32_t)item;
    }
}

void vt__boundmap_drain(struct vt__boundmap *m, void (*xVisit)(void *, uint32_t, void *), void *pCtx)
{
    uint8_t *pVal = malloc(m->szValue ? m->szValue : 1);
    uint32_t key = 0;
    while (m->nFifo > 0) {
        if (pop_oldest(m, &key, pVal) && pVal) xVisit(pCtx, key, pVal);
    }
    /* Without memory for the copy (pVal NULL) the entries are still removed, unvisited. */
    free(pVal);
}
