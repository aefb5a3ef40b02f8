/* Internal: a set of disjoint address ranges, added and removed piecewise (the mapped pages of expandable segments). */
#ifndef VT_IMPORT_RANGESET_H
#define VT_IMPORT_RANGESET_H

#include <stddef.h>
#include <stdint.h>

/* Disjoint, non-touching half-open ranges [aR[2i], aR[2i + 1]) in address order; all zero is an empty set. */
struct vt__rangeset {
    int64_t *aR;
    size_t n, nAlloc; /* ranges held, and room for */
};

/* Add [a, a + n) (n > 0), joined with the ranges it overlaps or touches. 0, or -1 when out of memory (unchanged). */
int vt__rangeset_add(struct vt__rangeset *s, int64_t a, int64_t n);
/* Remove [a, a + n) (n > 0), splitting a range it falls inside. Returns the bytes it held of it, or -1 when out of
 * memory (unchanged). */
int64_t vt__rangeset_remove(struct vt__rangeset *s, int64_t a, int64_t n);
/* Call xGap(pArg, start, bytes) for each part of [a, a + n) the set does not hold, in address order; stops at the
 * first non-zero return, which it returns (else 0). */
int vt__rangeset_gaps(const struct vt__rangeset *s, int64_t a, int64_t n, int (*xGap)(void *, int64_t, int64_t),
                      void *pArg);
void vt__rangeset_free(struct vt__rangeset *s);

#endif
