/* Internal: the bounded multi-producer ring of host records between CUPTI callbacks and the writer. */
#ifndef VT_TRACER_RING_H
#define VT_TRACER_RING_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "hrec.h"

/*
 * Producers (any thread) copy a record in under a short mutex; they never wait
 * for space: a full ring refuses the record, frees the heap memory it carries
 * and counts it. The single consumer (the writer thread) takes records out in
 * batches under the same mutex and does its SQLite work outside it.
 */
struct vt__ring {
    pthread_mutex_t mu;
    struct vt_hrec *aRec;
    size_t nCap;
    size_t iHead; /* oldest record */
    size_t nRec;
    uint64_t nDropped; /* under mu */
};

/* Initialise a ring of nCap (>= 1) records. Returns 0 or -ENOMEM. */
int vt__ring_init(struct vt__ring *r, size_t nCap);

/* Free the ring, releasing the heap memory of records still queued. */
void vt__ring_free(struct vt__ring *r);

/*
 * Copy rec in. Returns the number of records queued after it (>= 1), or -1 if
 * the ring was full: then rec's heap memory is released and the drop counted.
 */
long vt__ring_push(struct vt__ring *r, const struct vt_hrec *rec);

/* Move up to nMax of the oldest records into aOut (ownership passes). Returns how many. */
size_t vt__ring_pop(struct vt__ring *r, struct vt_hrec *aOut, size_t nMax);

/* Records refused so far. */
uint64_t vt__ring_dropped(struct vt__ring *r);

/* Records currently queued. */
size_t vt__ring_count(struct vt__ring *r);

/* Free the heap memory a host record owns (stack frames and their strings, meta value). */
void vt__hrec_release(struct vt_hrec *rec);

#endif
