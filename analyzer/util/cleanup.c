/* Files removed when the command dies of a termination signal: a list the signal handler reads without locks. */
#include "cleanup.h"

#include <pthread.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
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

/* Temporary files this process made (vt__cleanup_tempfile): removed at exit, with what SQLite left beside them. */
static char **g_azTemp;
static int g_nTemp;

/* Remove zPath and the journal files SQLite may have made beside it. */
static void unlink_with_journals(const char *zPath)
{
    static const char *const azSuffix[] = {"-journal", "-wal", "-shm"};
    char z[4200];
    unlink(zPath);
    for (size_t i = 0; i < sizeof azSuffix / sizeof azSuffix[0]; i++)
        if ((size_t)snprintf(z, sizeof z, "%s%s", zPath, azSuffix[i]) < sizeof z) unlink(z);
}

/* At exit: nothing can be interrupted by the handler any more once the list is gone; free it all. */
static void free_all(void)
{
    struct list *p;
    pthread_mutex_lock(&g_mu);
    p = __atomic_exchange_n(&g_pList, NULL, __ATOMIC_ACQ_REL);
    for (int i = 0; i < g_nTemp; i++) {
        unlink_with_journals(g_azTemp[i]);
        free(g_azTemp[i]);
    }
    free(g_azTemp);
    g_azTemp = NULL;
    g_nTemp = 0;
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

/*
 * Register zPath (cleanup.h). A path registered before, live or forgotten, is made live again in
 * its own entry: a process that writes the same output over and over (the readers run in-process
 * by the fuzz targets) keeps one entry per path, not one per call.
 */
int vt__cleanup_add(const char *zPath)
{
    static int bInstalled;
    struct entry *e = NULL;
    struct list *pOld, *p = NULL;
    int rc = -1, n, i;
    pthread_mutex_lock(&g_mu);
    pOld = g_pList;
    n = pOld ? pOld->n : 0;
    for (i = 0; i < n && strcmp(pOld->a[i]->zPath, zPath) != 0; i++) {}
    if (i < n) {
        pOld->a[i]->bLive = 1;
        rc = 0;
    } else if ((e = malloc(sizeof *e)) != NULL && (e->zPath = strdup(zPath)) != NULL) {
        p = malloc(sizeof *p + (size_t)(n + 1) * sizeof p->a[0]);
    }
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

const char *vt__cleanup_tempdir(void)
{
    const char *zDir = getenv("TMPDIR");
    return zDir && zDir[0] ? zDir : "/tmp";
}

/*
 * Is the process that named a file vramtrace-KIND-PID-XXXXXX (zRest: "PID-XXXXXX") gone? Only when
 * PID is a number and no process has it (kill(PID, 0) fails with ESRCH): a live one, or one we may
 * not signal, keeps its files.
 */
static int pid_gone(const char *zRest)
{
    char *zEnd;
    long pid;
    errno = 0;
    pid = strtol(zRest, &zEnd, 10);
    if (errno || zEnd == zRest || *zEnd != '-' || pid <= 0 || (long)(pid_t)pid != pid) return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/*
 * Remove the files of kind zKind in zDir that a run which ended without its exit handler (killed)
 * left: vramtrace-KIND-PID-XXXXXX whose process is gone (no process has PID) and whose lock no
 * process holds (a process of another PID namespace sharing the directory holds it), and the older
 * vramtrace-KIND-XXXXXX (no lock was taken then) a day after they were last written. A live
 * process's file is never removed, even before it took its lock. Only regular files of this user
 * are touched. Under g_mu.
 */
static void remove_stale(const char *zDir, const char *zKind)
{
    char zPrefix[64], zPath[4200];
    size_t nPrefix;
    DIR *d = opendir(zDir);
    struct dirent *e;
    if (!d) return;
    nPrefix = (size_t)snprintf(zPrefix, sizeof zPrefix, "vramtrace-%s-", zKind);
    while ((e = readdir(d)) != NULL) {
        const char *zRest = e->d_name + nPrefix;
        struct stat st;
        int fd, bStale;
        if (strncmp(e->d_name, zPrefix, nPrefix) != 0 || strchr(zRest, '-') != strrchr(zRest, '-'))
            continue; /* not ours, or a journal (removed with its file) */
        if ((size_t)snprintf(zPath, sizeof zPath, "%s/%s", zDir, e->d_name) >= sizeof zPath) continue;
        fd = open(zPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        bStale = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid();
        if (bStale && strchr(zRest, '-')) /* PID-XXXXXX: stale when its process is gone and nobody holds its lock */
            bStale = pid_gone(zRest) && flock(fd, LOCK_EX | LOCK_NB) == 0;
        else if (bStale)
            bStale = time(NULL) - st.st_mtime > 24 * 3600;
        if (bStale) unlink_with_journals(zPath);
        close(fd); /* drops the lock just taken */
    }
    closedir(d);
}

int vt__cleanup_tempfile(const char *zKind, char **pzPath)
{
    static char azDone[8][32]; /* the kinds whose stale files this process removed */
    const char *zDir = vt__cleanup_tempdir();
    char *zPath = malloc(strlen(zDir) + strlen(zKind) + 64), **azNew = NULL;
    int fd, i;
    *pzPath = NULL;
    if (!zPath) return -1;
    pthread_mutex_lock(&g_mu);
    for (i = 0; i < 8 && azDone[i][0] && strcmp(azDone[i], zKind) != 0; i++) {}
    if (i < 8 && !azDone[i][0]) {
        remove_stale(zDir, zKind);
        snprintf(azDone[i], sizeof azDone[i], "%s", zKind);
    }
    pthread_mutex_unlock(&g_mu);
    sprintf(zPath, "%s/vramtrace-%s-%ld-XXXXXX", zDir, zKind, (long)getpid());
    if ((fd = vt__cleanup_mkstemp(zPath)) < 0) {
        int e = errno;
        free(zPath);
        errno = e;
        return -1;
    }
    /* the lock is held until the process ends: the descriptor stays open (closing it would drop it) */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) close(fd);
    pthread_mutex_lock(&g_mu);
    azNew = realloc(g_azTemp, (size_t)(g_nTemp + 1) * sizeof *azNew);
    if (azNew) {
        g_azTemp = azNew;
        if ((g_azTemp[g_nTemp] = strdup(zPath)) != NULL) g_nTemp++;
    }
    pthread_mutex_unlock(&g_mu);
    *pzPath = zPath; /* without room in the list it is removed on a signal, and by the next run */
    return 0;
}
