/* Reliability: 16 producer threads and 20 forks against one session: no deadlock, no race, exact parent trace. */
#include <cupti_activity.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>

#include "config.h"
#include "core_util.h"
#include "vramtrace/schema.h"
#include "session.h"

/*
 * The parent starts a session (tracer/session.c, which registers the
 * pthread_atfork handlers of the injection library) and runs N_THREADS
 * producers that submit API-call records and activity buffers of kernel
 * records as fast as they can. Meanwhile N_FORKS forks happen, from the main
 * thread and from producer 0, while every producer is inside the tracer. Each
 * child (alarm-bounded: a deadlock becomes SIGALRM) checks that tracing is
 * off, that its records and buffers are refused, that closing or aborting
 * the session does nothing, and leaves with _exit as forked workers do, or
 * (every other child, outside ASan builds) with exit(), which runs the exit
 * handler registered in the parent the way the injection library does.
 *
 * The parent trace must then hold exactly what the parent's producers got
 * accepted (api_call and kernel rows), a `dropped` row count equal to what was
 * refused, no row from any child, and pass integrity_check. Run under
 * ThreadSanitizer by tests/run.sh (label tsan): no data race, no lock-order
 * inversion.
 */

#define N_THREADS 16
#define N_FORKS 20
#define N_FORKS_FROM_THREAD 8
#define CHILD_TAG 1000000

#if defined(__SANITIZE_ADDRESS__)
#define REL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REL_ASAN 1
#endif
#endif

static atomic_int g_bStop;
static atomic_int g_nChild;
static atomic_int g_nForkFail;

struct producer {
    pthread_t th;
    int id;
    uint64_t nCallOk, nCallRefused, nKernel, nBuffers;
};

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int submit_call(uint32_t corr, int64_t thread)
{
    struct vt_hrec rec;
    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_API_CALL;
    rec.u.api.api = 1;
    rec.u.api.correlation = corr;
    rec.u.api.start = corr;
    rec.u.api.end = corr + 1;
    rec.u.api.thread = thread;
    /* failed: written as it arrives, so ids keep the ring's order (a successful allocation's call would wait
     * for its activity record, schema 6) */
    rec.u.api.status = 2;
    return vt__session_submit(&rec);
}

/* Fill one activity buffer with kernel records from thread `tag`; returns the bytes laid out. */
static size_t fill_kernels(uint8_t *buf, size_t cap, int tag, uint64_t *pN)
{
    CUpti_ActivityKernel10 k;
    size_t off = 0;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = "rel_fork_kernel";
    k.contextId = 1;
    k.streamId = (uint32_t)tag; /* the producer's tag: children use CHILD_TAG */
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = k.blockY = k.blockZ = 32;
    while (*pN < 64) {
        k.correlationId = (uint32_t)(*pN + 1);
        k.start = 100 + *pN;
        k.end = k.start + 1;
        if (core_lay(buf, cap, &off, &k, sizeof k) != 0) break;
        (*pN)++;
    }
    return off;
}

/* The forked child: everything must be refused, nothing may block. Never returns. */
static void child_body(int bExit)
{
    uint8_t *buf;
    size_t cap = 123;
    int bad = 0, i;
    alarm(20); /* a deadlock on a lock held at fork time becomes a visible SIGALRM */
    if (vt__session_active()) bad |= 1;
    for (i = 0; i < 200; i++)
        if (submit_call((uint32_t)i, CHILD_TAG) != -1) bad |= 2;
    if (vt__session_meta("child", "1") != -1) bad |= 4;
    buf = vt__session_buffer_alloc(&cap);
    if (buf || cap != 0) bad |= 8;
    {
        /* A buffer the child's CUPTI would hand back: must be dropped, not queued to the parent. */
        static uint8_t own[4096] __attribute__((aligned(8)));
        uint64_t n = 0;
        size_t len = fill_kernels(own, sizeof own, CHILD_TAG, &n);
        vt__session_buffer_submit(own, len);
    }
    if (vt__session_dropped() != 0) bad |= 16;
    if (vt__session_close(100) != -1) bad |= 32;
    vt__session_abort();
#if !defined(REL_ASAN)
    /* Every other child leaves with exit(): the exit handler (below) runs in the child and must
     * leave the parent's trace alone. (Under ASan the writer the child abandoned on purpose
     * would be reported as a leak at exit().) */
    if (bExit) exit(bad);
#else
    (void)bExit;
#endif
    _exit(bad);
}

/* Fork once, wait for the child, count failures. */
static void fork_and_check(void)
{
    int status = 0, bExit = atomic_fetch_add(&g_nChild, 1) % 2;
    pid_t pid = fork();
    if (pid < 0) {
        atomic_fetch_add(&g_nForkFail, 1);
        return;
    }
    if (pid == 0) child_body(bExit);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "  child %d: status 0x%x\n", (int)pid, status);
        atomic_fetch_add(&g_nForkFail, 1);
    }
}

static void *producer_main(void *pArg)
{
    struct producer *p = pArg;
    uint32_t corr = 1;
    int nForked = 0;
    uint64_t tNextFork = mono_ms() + 15;
    while (!atomic_load(&g_bStop)) {
        uint8_t *buf;
        size_t cap = 0;
        int i;
        for (i = 0; i < 32; i++) {
            if (submit_call(corr++, p->id) == 0) p->nCallOk++;
            else p->nCallRefused++;
        }
        buf = vt__session_buffer_alloc(&cap);
        if (buf) {
            uint64_t n = 0;
            size_t len = fill_kernels(buf, cap, p->id, &n);
            vt__session_buffer_submit(buf, len);
            p->nKernel += n;
            p->nBuffers++;
        }
        if (p->id == 1 && nForked < N_FORKS_FROM_THREAD && mono_ms() >= tNextFork) {
            fork_and_check();
            nForked++;
            tNextFork = mono_ms() + 15;
        }
    }
    while (p->id == 1 && nForked < N_FORKS_FROM_THREAD) { /* a very slow machine: finish the forks */
        fork_and_check();
        nForked++;
    }
    return NULL;
}

/* The injection library's exit handler, minus CUPTI: close the session if this process has one. */
static void at_exit(void)
{
    if (vt__session_active()) vt__session_close(5000);
}

static const char *no_env(const char *zName)
{
    (void)zName;
    return NULL;
}

TEST(threads_and_forks)
{
    static struct producer aProd[N_THREADS];
    struct vt_config cfg;
    char zDir[] = "/tmp/vt_rel_fork_XXXXXX", zPath[256], zErr[512], zMsg[256];
    uint64_t nOk = 0, nRefused = 0, nKernel = 0, nBuffers = 0;
    sqlite3 *db;
    int i;
    ASSERT(mkdtemp(zDir) != NULL);
    vt__config_load(&cfg, no_env);
    snprintf(cfg.zOutput, sizeof cfg.zOutput, "%s/parent.db", zDir);
    cfg.flush_ms = 50;
    cfg.quiet = 1;
    cfg.buffer_size = 64 * 1024;
    cfg.max_memory = 32u << 20;
    ASSERT_EQ(0, vt__session_start(&cfg, core_next_record, zErr, sizeof zErr));
    ASSERT_EQ(0, atexit(at_exit));
    snprintf(zPath, sizeof zPath, "%s", vt__session_path());
    for (i = 0; i < N_THREADS; i++) {
        aProd[i].id = i + 1;
        ASSERT_EQ(0, pthread_create(&aProd[i].th, NULL, producer_main, &aProd[i]));
    }
    for (i = 0; i < N_FORKS - N_FORKS_FROM_THREAD; i++) {
        usleep(10000);
        fork_and_check();
    }
    usleep(50000);
    atomic_store(&g_bStop, 1);
    for (i = 0; i < N_THREADS; i++) {
        ASSERT_EQ(0, pthread_join(aProd[i].th, NULL));
        nOk += aProd[i].nCallOk;
        nRefused += aProd[i].nCallRefused;
        nKernel += aProd[i].nKernel;
        nBuffers += aProd[i].nBuffers;
    }
    ASSERT_EQ(0, atomic_load(&g_nForkFail));
    ASSERT_EQ(0, vt__session_close(30000));

    db = core_open_ro(zPath);
    ASSERT_EQ(VT_SCHEMA_OK, vt__schema_check(db, NULL, zMsg, sizeof zMsg));
    ASSERT_STREQ("ok", core_q_rows(db, "PRAGMA integrity_check"));
    printf("       %d threads, %d forks: %llu calls accepted, %llu refused (queue full), %llu kernels in"
           " %llu buffers\n",
           N_THREADS, N_FORKS, (unsigned long long)nOk, (unsigned long long)nRefused,
           (unsigned long long)nKernel, (unsigned long long)nBuffers);
    ASSERT(nOk > 0 && nKernel > 0);
    ASSERT_EQ(nOk, core_q_int(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(nKernel, core_q_int(db, "SELECT count(*) FROM kernel"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM api_call WHERE thread NOT BETWEEN 1 AND 16"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM kernel WHERE stream NOT BETWEEN 1 AND 16"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM meta WHERE key = 'child'"));
    ASSERT_EQ(nRefused, core_q_int(db, "SELECT coalesce(sum(count), 0) FROM dropped WHERE source = 1"));
    ASSERT_EQ(nRefused, core_q_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'dropped_queue'"));
    ASSERT_STREQ("1", core_q_rows(db, "SELECT value FROM meta WHERE key = 'closed_cleanly'"));
    ASSERT_EQ(getpid(), core_q_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'pid'"));
    /* Every producer's calls arrive in its submission order (the ring is FIFO per producer). */
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM (SELECT thread, correlation,"
                                " lag(correlation) OVER (PARTITION BY thread ORDER BY id) AS prev"
                                " FROM api_call) WHERE prev IS NOT NULL AND correlation <= prev"));
    sqlite3_close(db);
    unlink(zPath);
    rmdir(zDir);
}

VT_TEST_LIST(T(threads_and_forks))
