/* Internal: a growable hash map from 64-bit keys (addresses) to 64-bit values, for pairing allocations with frees. */
#ifndef VT_IMPORT_ADDRMAP_H
#define VT_IMPORT_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Open addressing, linear probing, backward-shift deletion; the table doubles
 * at half load, so memory is proportional to the entries live at once (what is
 * allocated and not yet freed), never to the events seen.
 */
struct vt__addrmap {
    struct vt__addrmap_slot {
        uint64_t key;
        int64_t value;
        int bUsed;
    } *a;
    size_t nSlot, nUsed;
};

/* Set key's value (insert or replace). Returns 0, or -1 when out of memory. */
int vt__addrmap_put(struct vt__addrmap *m, uint64_t key, int64_t value);
/* Pointer to key's value (valid until the next put or remove), or NULL. */
int64_t *vt__addrmap_get(const struct vt__addrmap *m, uint64_t key);
/* Remove key; returns 1 if it was present (its value in *pValue when non-NULL). */
int vt__addrmap_remove(struct vt__addrmap *m, uint64_t key, int64_t *pValue);
/* Free the table (m zeroed: reusable). */
void vt__addrmap_free(struct vt__addrmap *m);

#endif
