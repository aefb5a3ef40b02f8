/* The address map of the importers: open addressing with backward-shift deletion, doubling at half load. */
#include "addrmap.h"

#include <stdlib.h>
#include <string.h>

/* The home slot of key in a table of nSlot (a power of two) slots. */
static size_t slot_of(uint64_t key, size_t nSlot)
{
    key ^= key >> 33; /* addresses share their low bits: mix before masking */
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (nSlot - 1);
}

/* Double the table (64 slots at first) and re-insert every entry. Returns 0, or -1 when out of memory. */
static int grow(struct vt__addrmap *m)
{
    size_t nNew = m->nSlot ? m->nSlot * 2 : 64;
    struct vt__addrmap_slot *a = calloc(nNew, sizeof *a);
    if (!a) return -1;
    for (size_t i = 0; i < m->nSlot; i++) {
        size_t k;
        if (!m->a[i].bUsed) continue;
        for (k = slot_of(m->a[i].key, nNew); a[k].bUsed; k = (k + 1) & (nNew - 1)) {}
        a[k] = m->a[i];
    }
    free(m->a);
    m->a = a;
    m->nSlot = nNew;
    return 0;
}

int vt__addrmap_put(struct vt__addrmap *m, uint64_t key, int64_t value)
{
    size_t k;
    if ((m->nUsed + 1) * 2 > m->nSlot && grow(m)) return -1;
    for (k = slot_of(key, m->nSlot); m->a[k].bUsed; k = (k + 1) & (m->nSlot - 1)) {
        if (m->a[k].key == key) {
            m->a[k].value = value;
            return 0;
        }
    }
    m->a[k].bUsed = 1;
    m->a[k].key = key;
    m->a[k].value = value;
    m->nUsed++;
    return 0;
}

int64_t *vt__addrmap_get(const struct vt__addrmap *m, uint64_t key)
{
    if (!m->nSlot) return NULL;
    for (size_t k = slot_of(key, m->nSlot); m->a[k].bUsed; k = (k + 1) & (m->nSlot - 1))
        if (m->a[k].key == key) return &m->a[k].value;
    return NULL;
}

int vt__addrmap_remove(struct vt__addrmap *m, uint64_t key, int64_t *pValue)
{
    size_t k, j;
    if (!m->nSlot) return 0;
    for (k = slot_of(key, m->nSlot); m->a[k].bUsed && m->a[k].key != key; k = (k + 1) & (m->nSlot - 1)) {}
    if (!m->a[k].bUsed) return 0;
    if (pValue) *pValue = m->a[k].value;
    /* backward shift: move later members of the probe run into the hole */
    for (j = (k + 1) & (m->nSlot - 1); m->a[j].bUsed; j = (j + 1) & (m->nSlot - 1)) {
        size_t home = slot_of(m->a[j].key, m->nSlot);
        /* j's entry may move to k when k lies cyclically in [home, j) */
        if ((j > k && (home <= k || home > j)) || (j < k && home <= k && home > j)) {
            m->a[k] = m->a[j];
            k = j;
        }
    }
    m->a[k].bUsed = 0;
    m->nUsed--;
    return 1;
}

void vt__addrmap_free(struct vt__addrmap *m)
{
    free(m->a);
    memset(m, 0, sizeof *m);
}
