/* Reliability: SIGKILL at random moments never loses a committed event; loss stays within flush_ms + backlog + 0.5 s of the writer's clock. */
#include <cupti_activity.h>
#include <sys/stat.h>

#include "sigkill_util.h"
#include "vramtrace/schema.h"

/*
 * Each trial forks a child that drives the real writer at full rate (API-call
 * host records and buffers of kernel records, tests/sigkill_util.h) and kills
 * it with SIGKILL once its writer has run a random time (writer's clock). Two
 * things are checked against the reopened trace:
 *
 *  1. Committed means durable: while the child runs, this process reads the
 *     trace through its own connection (a WAL reader sees exactly the committed
 *     transactions). Every row seen committed before the kill must be in the
 *     trace after it: count(after) >= the last count observed.
 *  2. Bounded loss: the child reports through a pipe how many events the
 *     writer had accepted at each 50 ms tick. Every event accepted more than
 *     flush_ms + backlog + LOSS_SLACK_MS before the kill must be in the trace,
 *     where backlog is the time the writer needs to decode the most the
 *     bounded queues can hold (BACKLOG_EVENTS) at the rate it achieved in the
 *     trial. Both spans are on the writer's clock: wall time minus the time the
 *     writer thread waited for a CPU (see sigkill_util.h), so a loaded machine
 *     neither fails the bound nor loosens it.
 *
 * Plus: the trace opens, passes the schema check and PRAGMA integrity_check,
 * and every row is intact (kernel names resolve, API rows carry their values).
 * VT_REL_SIGKILL_TRIALS (default 50) and VT_REL_SIGKILL_SEED repeat a run;
 * each trial gets the harness's wall-clock limit (five times VT_TEST_TIMEOUT, default 120 s).
 */

#define LOSS_SLACK_MS 500 /* beyond flush_ms and the backlog: one writer tick + scheduling */
#define RING_RECORDS 4096
#define N_BUFFERS 4
#define BUFFER_SIZE (64 * 1024)
/* Most events the queues hold: the ring plus every buffer full of kernel records. */
#define BACKLOG_EVENTS (RING_RECORDS + N_BUFFERS * (BUFFER_SIZE / (sizeof(CUpti_ActivityKernel10) + 8)))
#define TICK_MS 50
#define MAX_TICKS 1024

/* The child: the writer with small bounded queues, committing every flushMs. */
static void child_main(const char *zPath, unsigned flushMs, int fd)
{
    struct vt_writer_config cfg;
    core_config(&cfg);
    cfg.buffer_size = BUFFER_SIZE;
    cfg.host_ring_records = RING_RECORDS;
    cfg.max_memory = cfg.host_ring_records * sizeof(struct vt_hrec) + N_BUFFERS * cfg.buffer_size;
    cfg.flush_ms = flushMs;
    sk_child(zPath, &cfg, "rel_sigkill_kernel", TICK_MS, fd);
}

/* Rows of api_call + kernel committed in the trace at zPath as a reader sees them now; -1 if unreadable. */
static long long committed_rows(const char *zPath)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    long long n = -1;
    struct stat st;
    if (stat(zPath, &st) != 0) return -1;
    if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) goto done;
    sqlite3_busy_timeout(db, 50);
    /* Rows are only appended, ids from 1: max(id) is the count, and costs a b-tree descent. */
    if (sqlite3_prepare_v2(db,
                           "SELECT (SELECT coalesce(max(id), 0) FROM api_call)"
                           " + (SELECT coalesce(max(id), 0) FROM kernel)",
                           -1, &s, NULL) != SQLITE_OK)
        goto done;
    if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
done:
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
}

struct outcome {
    uint64_t lostMs;      /* age at the kill (writer's clock) of the oldest tick whose events are missing; 0 none */
    uint64_t lostWallMs;  /* the same on the wall clock */
    uint64_t waitMs;      /* time the writer thread waited for a CPU during the trial (0 when unknown) */
    long long nObserved;  /* last committed count seen before the kill */
    long long nHave;      /* rows in the trace after the kill */
};

/* The reader's state while the child writes: the last committed count seen, reads made. */
struct watch {
    const char *zPath;
    long long nObs;
    int nPoll;
};

/* Read the committed rows once (sk_sleep_writer_ms's poll). */
static void watch_poll(void *pArg)
{
    struct watch *p = pArg;
    long long n = committed_rows(p->zPath);
    if (n > p->nObs) p->nObs = n;
    p->nPoll++;
}

/* One trial: kill once the child's writer has run killAfterMs (its clock), committing every flushMs. */
static struct outcome trial(int iTrial, unsigned killAfterMs, unsigned flushMs)
{
    char zPath[128], zMsg[256];
    int fds[2];
    pid_t pid;
    static struct sk_tick aTick[MAX_TICKS];
    size_t nTick = 1;
    uint64_t tKill, nNeed, backlogMs, boundMs, writerMs;
    struct outcome out = {0, 0, 0, 0, 0};
    struct watch wt = {NULL, 0, 0};
    sqlite3 *db;
    sk_arm_trial_alarm();
    core_tmp_path(zPath, sizeof zPath, "killed.db");
    ASSERT_EQ(0, pipe(fds));
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child_main(zPath, flushMs, fds[1]);
        _exit(0);
    }
    close(fds[1]);
    sk_wait_start(pid, fds[0], &aTick[0], iTrial);
    /* Watch the commits as a reader, every 20 ms, while the child writes. */
    wt.zPath = zPath;
    sk_sleep_writer_ms(pid, &aTick[0], killAfterMs, 20, watch_poll, &wt);
    tKill = sk_mono_ms();
    sk_kill(pid, iTrial);
    while (nTick < MAX_TICKS && read(fds[0], &aTick[nTick], sizeof aTick[0]) == (ssize_t)sizeof aTick[0])
        nTick++;
    close(fds[0]);

    db = core_open_ro(zPath);
    ASSERT_EQ(VT_SCHEMA_OK, vt__schema_check(db, NULL, zMsg, sizeof zMsg));
    ASSERT_STREQ("ok", core_q_rows(db, "PRAGMA integrity_check"));
    out.nHave = core_q_int(db, "SELECT (SELECT count(*) FROM api_call) + (SELECT count(*) FROM kernel)");
    /* Appended in order, never a gap: count equals the highest id in both tables. */
    ASSERT_EQ(out.nHave, core_q_int(db, "SELECT (SELECT coalesce(max(id), 0) FROM api_call)"
                                        " + (SELECT coalesce(max(id), 0) FROM kernel)"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM kernel k LEFT JOIN string s ON s.id = k.name_id"
                                " WHERE s.value IS NOT 'rel_sigkill_kernel' OR k.end <> k.start + 8"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM api_call WHERE bytes IS NOT correlation"
                                " OR end <> start + 5"));
    sqlite3_close(db);
    /* The writer's achieved rate (events per ms of its clock) gives the time its bounded backlog takes. */
    writerMs = sk_writer_ms(&aTick[0], &aTick[nTick - 1], tKill);
    backlogMs = (uint64_t)BACKLOG_EVENTS * writerMs / (uint64_t)(out.nHave > 0 ? out.nHave : 1);
    if (backlogMs > 5000) backlogMs = 5000;
    boundMs = flushMs + backlogMs + LOSS_SLACK_MS;
    nNeed = sk_required(aTick, nTick, tKill, (uint64_t)out.nHave, boundMs, &out.lostMs, &out.lostWallMs);
    out.nObserved = wt.nObs;
    out.waitMs = (tKill - aTick[0].tMs) - writerMs;
    printf("       trial %2d: flush %3u ms, killed after %4u ms of the writer (it waited %4llu ms for a CPU);"
           " accepted %8llu, seen committed %8lld (%d reads), in trace %8lld, required %8llu; loss window %llu ms"
           " (bound %llu; wall clock %llu ms)\n",
           iTrial, flushMs, killAfterMs, (unsigned long long)out.waitMs, (unsigned long long)aTick[nTick - 1].nEvents,
           wt.nObs, wt.nPoll, out.nHave, (unsigned long long)nNeed, (unsigned long long)out.lostMs,
           (unsigned long long)boundMs, (unsigned long long)out.lostWallMs);
    fflush(stdout);
    if (out.nHave < wt.nObs)
        VT__FAIL("trial %d: %lld rows were seen committed before the kill but only %lld are in the trace",
                 iTrial, wt.nObs, out.nHave);
    if ((uint64_t)out.nHave < nNeed)
        VT__FAIL("trial %d: events accepted more than %llu ms (writer's clock) before the kill are missing"
                 " (%lld of %llu)",
                 iTrial, (unsigned long long)boundMs, out.nHave, (unsigned long long)nNeed);
    core_remove_trace(zPath);
    return out;
}

TEST(sigkill_trials)
{
    static const unsigned aFlush[] = {100, 250, 500};
    const char *zTrials = getenv("VT_REL_SIGKILL_TRIALS");
    const char *zSeed = getenv("VT_REL_SIGKILL_SEED");
    int nTrial = zTrials && atoi(zTrials) > 0 ? atoi(zTrials) : 50, i, nObsChecked = 0;
    unsigned seed = (unsigned)(sk_mono_ms() ^ (uint64_t)getpid());
    uint64_t worst = 0, worstWall = 0, worstWait = 0;
    if (zSeed) seed = (unsigned)strtoul(zSeed, NULL, 10);
    printf("       seed %u (VT_REL_SIGKILL_SEED to repeat), %d trials (VT_REL_SIGKILL_TRIALS); times on the"
           " writer's clock%s\n",
           seed, nTrial, sk_wait_ms(0, (long long)getpid()) < 0 ? " (= wall clock: no schedstat here)" : "");
    srand(seed);
    for (i = 0; i < nTrial; i++) {
        unsigned flushMs = aFlush[rand() % 3];
        unsigned ms = 300 + (unsigned)(rand() % 1101); /* 0.3 s to 1.4 s */
        struct outcome o = trial(i, ms, flushMs);
        if (o.lostMs > worst) worst = o.lostMs;
        if (o.lostWallMs > worstWall) worstWall = o.lostWallMs;
        if (o.waitMs > worstWait) worstWait = o.waitMs;
        if (o.nObserved > 0) nObsChecked++;
    }
    printf("       %d trials, %d with commits observed before the kill; worst loss window %llu ms (wall clock %llu ms);"
           " the writer waited up to %llu ms for a CPU in a trial\n",
           nTrial, nObsChecked, (unsigned long long)worst, (unsigned long long)worstWall,
           (unsigned long long)worstWait);
    /* The durability check must not be vacuous: most trials see commits before the kill. */
    ASSERT(nObsChecked * 2 >= nTrial);
}

VT_TEST_LIST(T(sigkill_trials))
