/* Internal: the monotonic clock in milliseconds, and deadlines on it for pthread_cond_timedwait. */
#ifndef VT_TRACER_MONOCLOCK_H
#define VT_TRACER_MONOCLOCK_H

#include <stdint.h>
#include <time.h>

/* Milliseconds on the monotonic clock. */
static inline uint64_t vt__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Absolute CLOCK_MONOTONIC time ms from now, for pthread_cond_timedwait on a condition using that clock. */
static inline struct timespec vt__deadline_in(unsigned ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000u;
    ts.tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

#endif
