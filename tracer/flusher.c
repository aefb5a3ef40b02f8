/* The flush thread: a periodic task, then one final task the caller waits for at most a bounded time. */
#include "flusher.h"

#include "monoclock.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

struct vt__flusher {
    pthread_mutex_t mu;
    pthread_cond_t wake; /* the thread waits here between ticks */
    pthread_cond_t done; /* vt__flusher_stop waits here */
    unsigned period_ms;
    void (*xTick)(void *);
    void (*xFinal)(void *); /* set by stop */
    void *pArg;
    int bStop, bKick, bDone, bOrphaned;
    pthread_t thread;
};

/* The thread: tick every period until stopped, then the final task; frees f if orphaned. */
static void *flusher_main(void *pArg)
{
    struct vt__flusher *f = pArg;
    void (*xFinal)(void *);
    int bOrphaned;
    pthread_mutex_lock(&f->mu);
    for (;;) {
        struct timespec until = vt__deadline_in(f->period_ms);
        while (!f->bStop && !f->bKick)
            if (pthread_cond_timedwait(&f->wake, &f->mu, &until) == ETIMEDOUT) break;
        if (f->bStop) break;
        f->bKick = 0;
        pthread_mutex_unlock(&f->mu);
        f->xTick(f->pArg);
        pthread_mutex_lock(&f->mu);
    }
    xFinal = f->xFinal;
    pthread_mutex_unlock(&f->mu);
    if (xFinal) xFinal(f->pArg);
    pthread_mutex_lock(&f->mu);
    f->bDone = 1;
    bOrphaned = f->bOrphaned;
    pthread_cond_broadcast(&f->done);
    pthread_mutex_unlock(&f->mu);
    if (bOrphaned) {
        pthread_mutex_destroy(&f->mu);
        pthread_cond_destroy(&f->wake);
        pthread_cond_destroy(&f->done);
        free(f);
    }
    return NULL;
}

struct vt__flusher *vt__flusher_start(unsigned period_ms, void (*xTick)(void *), void *pArg)
{
    struct vt__flusher *f = calloc(1, sizeof *f);
    pthread_condattr_t ca;
    sigset_t all, old;
    int rc;
    if (!f) return NULL;
    f->period_ms = period_ms ? period_ms : 1;
    f->xTick = xTick;
    f->pArg = pArg;
    pthread_mutex_init(&f->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&f->wake, &ca);
    pthread_cond_init(&f->done, &ca);
    pthread_condattr_destroy(&ca);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits the mask: all blocked */
    rc = pthread_create(&f->thread, NULL, flusher_main, f);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_mutex_destroy(&f->mu);
        pthread_cond_destroy(&f->wake);
        pthread_cond_destroy(&f->done);
        free(f);
        return NULL;
    }
    return f;
}

void vt__flusher_kick(struct vt__flusher *f)
{
    if (!f) return;
    pthread_mutex_lock(&f->mu);
    f->bKick = 1;
    pthread_cond_signal(&f->wake);
    pthread_mutex_unlock(&f->mu);
}

int vt__flusher_stop(struct vt__flusher *f, void (*xFinal)(void *), unsigned timeout_ms)
{
    struct timespec until;
    if (!f) return 0;
    pthread_mutex_lock(&f->mu);
    f->bStop = 1;
    f->xFinal = xFinal;
    pthread_cond_signal(&f->wake);
    until = vt__deadline_in(timeout_ms);
    while (!f->bDone && pthread_cond_timedwait(&f->done, &f->mu, &until) != ETIMEDOUT) {
    }
    if (!f->bDone) {
        f->bOrphaned = 1; /* still inside a tick or the final task: it frees f itself */
        pthread_mutex_unlock(&f->mu);
        pthread_detach(f->thread);
        return -ETIMEDOUT;
    }
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->wake);
    pthread_cond_destroy(&f->done);
    free(f);
    return 0;
}
