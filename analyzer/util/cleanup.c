/* Files removed when the command dies of a termination signal: a list the signal handler reads without locks. */
#include "cleanup.h"

#include <pthread.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One registered path; bLive is cleared when it is forgotten (the entry itself stays until exit). */
struct entry {
    char *zPath;
    volatile sig_atomic_t bLive;
};

/*
 * The entries, as a list that is only ever replaced by a longer copy built before it is published:
 * the handler may interrupt any thread at any point, so it must never see a list being changed or
 * freed. Older copies are chained through pPrev and freed at exit with the entries.
 */
struct list {
    struct list *pPrev;
    int n;
    struct entry *a[];
};

static struct list *volatile g_pList;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static const int g_aSig[] = {SIGHUP, SIGINT, SIGPIPE, SIGTERM};

/* The handler: remove the live paths, then die of the signal with its default action. */
static void on_signal(int sig)
{
    struct list *p = __atomic_load_n(&g_pList, __ATOMIC_ACQUIRE);
    for (int i = 0; p && i < p->n; i++)
        if (p->a[i]->bLive) unlink(p->a[i]->zPath);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* At exit: nothing can be interrupted by the handler any more once the list is gone; free it all. */
static void free_all(void)
{
    struct list *p;
    pthread_mutex_lock(&g_mu);
    p = __atomic_exchange_n(&g_pList, NULL, __ATOMIC_ACQ_REL);
    for (int i = 0; p && i < p->n; i++) {
        free(p->a[i]->zPath);
        free(p->a[i]);
    }
    while (p) {
        struct list *pPrev = p->pPrev;
        free(p);
        p = pPrev;
    }
    pthread_mutex_unlock(&g_mu);
}

/* Install the handler for the signals still at their default action, and the exit hook. Under g_mu. */
static void install(void)
{
    for (size_t i = 0; i < sizeof g_aSig / sizeof g_aSig[0]; i++) {
        struct sigaction sa, old;
        if (sigaction(g_aSig[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(g_aSig[i], &sa, NULL);
    }
    atexit(free_all);
}

int vt__cleanup_add(const char *zPath)
{
    static int bInstalled;
    struct entry *e = malloc(sizeof *e);
    struct list *pOld, *p = NULL;
    int rc = -1, n;
    pthread_mutex_lock(&g_mu);
    pOld = g_pList;
    n = pOld ? pOld->n : 0;
    if (e && (e->zPath = strdup(zPath)) != NULL)
        p = malloc(sizeof *p + (size_t)(n + 1) * sizeof p->a[0]);
    if (p) {
        e->bLive = 1;
        p->pPrev = pOld;
        p->n = n + 1;
        if (n) memcpy(p->a, pOld->a, (size_t)n * sizeof p->a[0]);
        p->a[n] = e;
        __atomic_store_n(&g_pList, p, __ATOMIC_RELEASE);
        if (!bInstalled) install();
        bInstalled = 1;
        e = NULL;
        rc = 0;
    }
    pthread_mutex_unlock(&g_mu);
    if (e) free(e->zPath);
    free(e);
    return rc;
}

int vt__cleanup_mkstemp(char *zTemplate)
{
    sigset_t block, old;
    int fd, e;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof g_aSig / sizeof g_aSig[0]; i++) sigaddset(&block, g_aSig[i]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    fd = mkstemp(zTemplate);
    e = errno;
    if (fd >= 0) vt__cleanup_add(zTemplate);
    pthread_sigmask(SIG_SETMASK, &old, NULL); /* a signal that came meanwhile is handled now */
    errno = e;
    return fd;
}

void vt__cleanup_forget(const char *zPath)
{
    struct list *p;
    pthread_mutex_lock(&g_mu);
    p = g_pList;
    for (int i = 0; p && i < p->n; i++)
        if (p->a[i]->bLive && !strcmp(p->a[i]->zPath, zPath)) p->a[i]->bLive = 0;
    pthread_mutex_unlock(&g_mu);
}
