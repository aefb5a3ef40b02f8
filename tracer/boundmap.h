/* Internal: a bounded hash map from a 32-bit key to a fixed-size value, evicting oldest first. */
#ifndef VT_TRACER_BOUNDMAP_H
#define VT_TRACER_BOUNDMAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Used by the decoder for the correlation join (correlation id -> API call
 * arguments) and for open NVTX ranges (marker id -> start). Single-threaded:
 * only the writer thread touches it. At most nMax entries are live; inserting
 * one more evicts the oldest live entry, which is handed back to the caller so
 * it can be counted (and, for NVTX ranges, still written).
 *
 * Implementation: open addressing with linear probing (table of twice nMax
 * slots, power of two) and backward-shift deletion; a FIFO of (key, sequence)
 * in insertion order finds the oldest entry; FIFO items whose entry was already
 * removed are recognised by their sequence number and skipped.
 */
struct vt__boundmap {
    uint8_t *aSlot;     /* nSlot slots of szSlot bytes: struct slot_hdr + value */
    size_t nSlot;       /* power of two, >= 2 * nMax */
    size_t szSlot;
    size_t szValue;
    size_t nMax;        /* bound on live entries */
    size_t nLive;
    uint64_t *aFifo;    /* nMax items: key << 32 | sequence */
    size_t iFifoHead;   /* oldest item */
    size_t nFifo;
    uint32_t iSeq;
};

/* Initialise an empty map for at most nMax (>= 1) values of szValue bytes. Returns 0 or -ENOMEM. */
int vt__boundmap_init(struct vt__boundmap *m, size_t nMax, size_t szValue);

/* Free the map's memory (values are plain bytes: nothing else is freed). */
void vt__boundmap_free(struct vt__boundmap *m);

/*
 * Insert or replace key's value (szValue bytes copied from pValue). If the map
 * was full, the oldest live entry is removed first: its value is copied to
 * pEvicted (may be NULL) and *pEvictedKey, and 1 is returned; otherwise 0.
 */
int vt__boundmap_put(struct vt__boundmap *m, uint32_t key, const void *pValue, uint32_t *pEvictedKey,
                     void *pEvicted);

/* Pointer to key's value inside the map (valid until the next put/remove), or NULL. */
void *vt__boundmap_get(struct vt__boundmap *m, uint32_t key);

/* Remove key; copies its value to pOut when pOut is non-NULL. Returns 1 if it was present. */
int vt__boundmap_remove(struct vt__boundmap *m, uint32_t key, void *pOut);

/*
 * Call xVisit(pCtx, key, value) for the live entries inserted after the one of sequence *pSeq
 * (0: from the oldest), oldest first, while it returns 1; *pSeq becomes the last visited entry's.
 * xVisit may change the value in place, not the map. Finds the first entry by a binary search of
 * the FIFO (sequences grow along it): a walk costs the entries it visits.
 */
void vt__boundmap_walk(struct vt__boundmap *m, uint32_t *pSeq, int (*xVisit)(void *, uint32_t, void *), void *pCtx);

/*
 * Call xVisit(pCtx, key, value) for every live entry, oldest first, then empty
 * the map. Used at close to flush what is left.
 */
void vt__boundmap_drain(struct vt__boundmap *m, void (*xVisit)(void *, uint32_t, void *), void *pCtx);

#endif
