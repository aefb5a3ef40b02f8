/* Internal: the activity buffers handed to CUPTI — a byte budget shared by every thread's buffer, ownership tracked. */
#ifndef VT_TRACER_BUFPOOL_H
#define VT_TRACER_BUFPOOL_H

/*
 * CUPTI 13 keeps one activity buffer per thread that records activity
 * (CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, default 1): a process with
 * many such threads holds as many buffers at once. The pool bounds the bytes
 * of all buffers it ever hands out by a budget, whichever thread holds them:
 * full-size buffers while at most half the budget is allocated, then buffers
 * of an eighth of that size (at least VT_BUFPOOL_MIN_SMALL bytes), so that
 * many threads each get one instead of CUPTI dropping their records; beyond
 * the budget it refuses (CUPTI then counts the records it drops).
 *
 * Ownership: every buffer is in one of three states. FREE (the pool's, idle),
 * CUPTI (handed out, not yet returned: CUPTI may write it at any time), QUEUED
 * (returned by CUPTI, waiting for or in decoding). Closing the pool frees the
 * FREE and QUEUED buffers only: a buffer CUPTI still holds is never freed
 * (CUPTI could still write it or hand it to another client's callback); it is
 * left allocated and stays reachable from the pool, which is then kept too.
 *
 * Not thread-safe: the caller (the writer) serializes every call under its
 * own lock.
 */
#include <stddef.h>
#include <stdint.h>

#define VT_BUFPOOL_MIN_SMALL ((size_t)64 << 10)

struct vt__bufpool;

/*
 * A pool of at most `budget` bytes of buffers of `size` bytes (small ones
 * size/8, at least VT_BUFPOOL_MIN_SMALL, at most size); size and budget are
 * rounded down to 8 bytes. Returns NULL when out of memory or budget < size.
 */
struct vt__bufpool *vt__bufpool_open(size_t budget, size_t size);

/* The most buffers the pool can ever have at once (a bound for queues of them). */
size_t vt__bufpool_capacity(const struct vt__bufpool *pool);

/*
 * A buffer for CUPTI (8-byte aligned, state FREE -> CUPTI), its size in
 * *pSize; NULL (and *pSize 0) when the budget allows none.
 */
uint8_t *vt__bufpool_get(struct vt__bufpool *pool, size_t *pSize);

/*
 * CUPTI returned buffer p (state CUPTI -> QUEUED). Returns its size, or 0
 * when p is not a buffer of this pool in state CUPTI (then nothing changes).
 */
size_t vt__bufpool_returned(struct vt__bufpool *pool, const uint8_t *p);

/* A QUEUED buffer is done with (state -> FREE). */
void vt__bufpool_recycle(struct vt__bufpool *pool, const uint8_t *p);

/* Buffers in state CUPTI now. */
size_t vt__bufpool_at_cupti(const struct vt__bufpool *pool);

/* Bytes allocated now (every state). */
size_t vt__bufpool_bytes(const struct vt__bufpool *pool);

/*
 * Free the pool: every FREE and QUEUED buffer. Buffers still in state CUPTI
 * are not freed, and the pool keeps itself allocated (and reachable) for
 * them. Returns how many buffers were left with CUPTI. NULL is a no-op.
 */
size_t vt__bufpool_close(struct vt__bufpool *pool);

#endif
