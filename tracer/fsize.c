/* The file-size limit (RLIMIT_FSIZE): SIGXFSZ held off while a host thread writes the trace. */
#include "fsize.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

void vt__xfsz_begin(struct vt__xfsz_guard *g)
{
    sigset_t set, pending;
    int saved = errno;
    sigemptyset(&set);
    sigaddset(&set, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &set, &g->old);
    g->bWasPending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
    errno = saved;
}

void vt__xfsz_end(struct vt__xfsz_guard *g)
{
    sigset_t set, pending;
    struct timespec zero = {0, 0};
    int saved = errno;
    sigemptyset(&set);
    sigaddset(&set, SIGXFSZ);
    if (!g->bWasPending && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1)
        sigtimedwait(&set, NULL, &zero);
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
    errno = saved;
}

int vt__file_too_big(sqlite3 *db)
{
    sigset_t pending;
    if (db && sqlite3_system_errno(db) == EFBIG) return 1;
    return sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
}
