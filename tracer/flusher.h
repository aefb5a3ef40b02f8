/* Internal: a helper thread that runs a periodic task and, once, a final task with a bounded wait. */
#ifndef VT_TRACER_FLUSHER_H
#define VT_TRACER_FLUSHER_H

/*
 * The glue's flush thread: every period it calls xTick (a non-forced
 * cuptiActivityFlushAll, so every thread's activity buffer with completed
 * records reaches the writer while the job runs), and at exit it runs the
 * final task (the forced flush) on the same thread while the caller waits at
 * most a bounded time: a flush stuck in CUPTI (a hung device) never hangs the
 * process's exit. A thread that overran the wait is left to finish on its own
 * and frees its state itself.
 *
 * The thread runs with every signal blocked. Nothing here is fork-aware: in a
 * forked child the thread does not exist, and the child must not call
 * vt__flusher_stop on the parent's flusher (the glue's exit handler does
 * nothing in a child).
 */

struct vt__flusher;

/*
 * Start the thread: xTick(pArg) every period_ms (>= 1) until stopped.
 * Returns NULL when the thread cannot be created (or out of memory).
 */
struct vt__flusher *vt__flusher_start(unsigned period_ms, void (*xTick)(void *), void *pArg);

/* Wake the thread now for an extra xTick (it does not wait for the period). */
void vt__flusher_kick(struct vt__flusher *f);

/*
 * Stop ticking; then, if xFinal is not NULL, run xFinal(pArg) on the thread.
 * Waits at most timeout_ms for the thread to finish the tick in progress and
 * the final task. Returns 0 when it finished (the thread is joined and f
 * freed), -ETIMEDOUT when it did not: the thread is left running, detached,
 * and frees f when it returns. f must not be used after either. NULL is a
 * no-op returning 0.
 */
int vt__flusher_stop(struct vt__flusher *f, void (*xFinal)(void *), unsigned timeout_ms);

#endif
