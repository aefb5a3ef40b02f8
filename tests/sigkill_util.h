/* Shared by the SIGKILL tests: the child that drives the writer until killed, its reports, and the writer's clock. */
#ifndef VT_TESTS_SIGKILL_UTIL_H
#define VT_TESTS_SIGKILL_UTIL_H

/*
 * The promise under test: a SIGKILL loses at most about flush_ms (plus the
 * time the writer needs for its bounded backlog) of events. That is a promise
 * about the writer's own clock: it commits at least every flush_ms *while it
 * runs*. On a loaded machine (ctest -j8 on 2 cores) the writer thread can be
 * ready to run and still wait for a CPU for most of a trial (measured: 60-65 %
 * of the wall time), and a bound on wall time then fails without any fault in
 * the writer. So losses are measured on the writer's clock: wall time minus
 * the time the writer thread spent runnable but not running, which the kernel
 * counts per thread (/proc/self/task/TID/schedstat, second field, "run_delay").
 * Where that file is missing the clock is the wall clock.
 *
 * The child reports a tick (time, events the writer accepted, the writer's
 * wait so far) every tickMs through a pipe; its first tick comes once its
 * writer has created the trace and runs, and the trial starts there. The
 * parent waits for the kill on the same clock (sk_sleep_writer_ms), so a
 * trial gives the writer the same running time however loaded the machine is.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "core_util.h"
#include "vramtrace/schema.h"

struct sk_tick {
    uint64_t tMs;     /* CLOCK_MONOTONIC, ms */
    uint64_t nEvents; /* events the writer had accepted by then */
    int64_t waitMs;   /* the writer thread's time runnable but not running so far; -1 unknown */
    int64_t tid;      /* the writer thread's id; -1 unknown */
};

static inline uint64_t sk_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static inline void sk_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* The id of the one thread of this process besides the caller (the writer, in the child); -1 if not exactly one. */
static inline long long sk_other_tid(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long long tid = -1, self = (long long)gettid();
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        long long t = atoll(e->d_name);
        if (t > 0 && t != self) {
            tid = t;
            n++;
        }
    }
    closedir(d);
    return n == 1 ? tid : -1;
}

/* Milliseconds thread tid of process pid (0: this one) has spent runnable but not running; -1 when unknown. */
static inline int64_t sk_wait_ms(pid_t pid, long long tid)
{
    char zPath[96];
    unsigned long long nRun = 0, nWait = 0;
    FILE *f;
    int n;
    if (tid < 0) return -1;
    if (pid) snprintf(zPath, sizeof zPath, "/proc/%lld/task/%lld/schedstat", (long long)pid, tid);
    else snprintf(zPath, sizeof zPath, "/proc/self/task/%lld/schedstat", tid);
    f = fopen(zPath, "r");
    if (!f) return -1;
    n = fscanf(f, "%llu %llu", &nRun, &nWait);
    fclose(f);
    return n == 2 ? (int64_t)(nWait / 1000000u) : -1;
}

/* Child: write one tick to fd, or end the child (status 3) when the parent is gone. */
static inline void sk_report(int fd, uint64_t nEvents, long long tid)
{
    struct sk_tick t;
    t.tMs = sk_mono_ms();
    t.nEvents = nEvents;
    t.waitMs = sk_wait_ms(0, tid);
    t.tid = tid;
    if (write(fd, &t, sizeof t) != (ssize_t)sizeof t) _exit(3);
}

/*
 * The child of a trial: open and start a writer at zPath with cfg, report a
 * first tick, then submit API-call records (bytes = correlation, end = start
 * + 5) and buffers of kernel records named zKernel (see core_submit_kernels)
 * as fast as the writer accepts them, reporting a tick every tickMs, until
 * killed. A writer that cannot start ends the child with status 2 and the
 * reason on stderr.
 */
static inline void sk_child(const char *zPath, const struct vt_writer_config *cfg, const char *zKernel,
                            unsigned tickMs, int fd)
{
    struct vt_writer *w;
    char zErr[256] = "";
    uint64_t nEvents = 0, tNext;
    uint32_t corr = 1;
    long long tid;
    w = vt__writer_open(zPath, cfg, zErr, sizeof zErr);
    if (!w) {
        fprintf(stderr, "  child: vt__writer_open: %s\n", zErr);
        _exit(2);
    }
    if (vt__writer_start(w) != 0) _exit(2);
    tid = sk_other_tid();
    sk_report(fd, 0, tid);
    tNext = sk_mono_ms() + tickMs;
    for (;;) {
        struct vt_hrec h;
        long long n;
        int i;
        for (i = 0; i < 256; i++) {
            memset(&h, 0, sizeof h);
            h.type = VT_HREC_API_CALL;
            h.u.api.api = VT_API_ID_100;
            h.u.api.correlation = corr;
            h.u.api.start = (uint64_t)corr * 10;
            h.u.api.end = h.u.api.start + 5;
            h.u.api.thread = 1;
            h.u.api.bytes = corr;
            if (vt__writer_submit(w, &h) == 0) nEvents++;
            corr++;
        }
        n = core_submit_kernels(w, zKernel, &corr);
        if (n >= 0) nEvents += (uint64_t)n;
        else sched_yield();
        if (sk_mono_ms() >= tNext) {
            sk_report(fd, nEvents, tid);
            tNext = sk_mono_ms() + tickMs;
        }
    }
}

/*
 * Parent: wait for the child's first tick (its writer runs) into *pTick. When
 * the child ends first, fail the test with its status. Reading earlier would
 * race the trace's creation (a reader's lock makes the writer's switch to WAL
 * fail with "database is locked"), and on a loaded machine the child may need
 * longer to get there than a whole trial lasts.
 */
static inline void sk_wait_start(pid_t pid, int fd, struct sk_tick *pTick, int iTrial)
{
    int status = 0;
    if (read(fd, pTick, sizeof *pTick) == (ssize_t)sizeof *pTick) return;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    VT__FAIL("trial %d: the child did not start its writer (%s %d)", iTrial,
             WIFSIGNALED(status) ? "signal" : "exit status", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* Parent: SIGKILL the child and reap it; it must not have ended by itself. */
static inline void sk_kill(pid_t pid, int iTrial)
{
    int status = 0;
    ASSERT_EQ(0, kill(pid, SIGKILL));
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        VT__FAIL("trial %d: the child ended by itself before the kill (%s %d)", iTrial,
                 WIFSIGNALED(status) ? "signal" : "exit status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/*
 * Writer-clock milliseconds from tick a to the kill at tKill: the wall time
 * minus the writer's wait from a to pLast (the last tick; its wait after that
 * is not known and not subtracted, so the span is never shortened too much).
 */
static inline uint64_t sk_writer_ms(const struct sk_tick *a, const struct sk_tick *pLast, uint64_t tKill)
{
    uint64_t ms = tKill - a->tMs;
    int64_t wait = pLast->waitMs - a->waitMs;
    if (a->waitMs < 0 || pLast->waitMs < 0 || wait <= 0) return ms;
    return (uint64_t)wait < ms ? ms - (uint64_t)wait : 0;
}

/*
 * The outcome of a trial on the writer's clock, from the ticks aTick[0..nTick)
 * and the nHave events found in the trace after the kill at tKill: returns
 * the events accepted at least boundMs before the kill (which must all be in
 * the trace); *pLostMs gets the age at the kill of the loss window, from the
 * tick before the first one whose events are not all in the trace (0: nothing
 * lost), and *pLostWallMs the same age on the wall clock.
 */
static inline uint64_t sk_required(const struct sk_tick *aTick, size_t nTick, uint64_t tKill, uint64_t nHave,
                                   uint64_t boundMs, uint64_t *pLostMs, uint64_t *pLostWallMs)
{
    const struct sk_tick *pLast = &aTick[nTick - 1];
    uint64_t nNeed = 0;
    size_t i;
    *pLostMs = *pLostWallMs = 0;
    for (i = 0; i < nTick; i++)
        if (sk_writer_ms(&aTick[i], pLast, tKill) >= boundMs) nNeed = aTick[i].nEvents;
    for (i = 0; i < nTick; i++) {
        if (aTick[i].nEvents > nHave) {
            *pLostMs = sk_writer_ms(&aTick[i > 0 ? i - 1 : 0], pLast, tKill);
            *pLostWallMs = tKill - aTick[i > 0 ? i - 1 : 0].tMs;
            break;
        }
    }
    return nNeed;
}

/*
 * Parent: sleep until the child's writer (started at tick t0) has had ms
 * milliseconds on its clock: wall time minus its wait for a CPU, read from
 * the child's schedstat (the wall clock when unknown). Between looks, which
 * are pollMs apart, xPoll (may be NULL) runs with pArg.
 */
static inline void sk_sleep_writer_ms(pid_t pid, const struct sk_tick *t0, uint64_t ms, unsigned pollMs,
                                      void (*xPoll)(void *), void *pArg)
{
    for (;;) {
        uint64_t now = sk_mono_ms(), elapsed = now - t0->tMs;
        int64_t wait = sk_wait_ms(pid, t0->tid);
        if (t0->waitMs >= 0 && wait > t0->waitMs) {
            uint64_t w = (uint64_t)(wait - t0->waitMs);
            elapsed = w < elapsed ? elapsed - w : 0;
        }
        if (elapsed >= ms) return;
        if (xPoll) xPoll(pArg);
        sk_sleep_ms(ms - elapsed < pollMs ? (unsigned)(ms - elapsed) : pollMs);
    }
}

/*
 * Re-arm the test's wall-clock limit for one more trial: each trial gets the
 * harness's (five times VT_TEST_TIMEOUT, default 120 s), so a hang in any trial
 * still ends the test while a slow machine can take as long as the trials need.
 */
static inline void sk_arm_trial_alarm(void)
{
    const char *z = getenv("VT_TEST_TIMEOUT");
    alarm(5u * (z && atoi(z) > 0 ? (unsigned)atoi(z) : 120u));
}

#endif
