/* Crash safety: a process writing a trace at full rate is SIGKILLed; the trace must open and be complete to within ~1 s. */
#include "sigkill_util.h"
#include "vramtrace/schema.h"

/*
 * Each trial kills a child that drives the writer at full rate
 * (tests/sigkill_util.h) once its writer has run 0.5 to 2.5 s. The trace must
 * pass the schema check and integrity_check, hold only intact kernel rows, and
 * every event accepted more than SLACK_MS before the kill must be in it. Times
 * are on the writer's clock (wall time minus the time the writer thread waited
 * for a CPU, see sigkill_util.h). tests/test_rel_sigkill.c checks the same promise more
 * closely (durability of every observed commit, the backlog, 50 trials).
 */

#define SLACK_MS 1500 /* events older than this at the kill must be in the trace */
#define TICK_MS 100

/* The child: the writer with larger queues than the default test configuration. */
static void child_main(const char *zPath, int fd)
{
    struct vt_writer_config cfg;
    core_config(&cfg);
    cfg.buffer_size = 256 * 1024;
    cfg.host_ring_records = 16384;
    cfg.max_memory = cfg.host_ring_records * sizeof(struct vt_hrec) + 8 * cfg.buffer_size;
    sk_child(zPath, &cfg, "sigkill_kernel", TICK_MS, fd);
}

/* One trial: returns the ms of events lost before the kill (0 if none were lost), on the writer's clock. */
static uint64_t trial(int iTrial, unsigned killAfterMs)
{
    char zPath[128], zMsg[256];
    int fds[2];
    pid_t pid;
    struct sk_tick aTick[512];
    size_t nTick = 1;
    uint64_t tKill, nNeed, nHave, lostMs, lostWallMs;
    sqlite3 *db;
    sk_arm_trial_alarm();
    core_tmp_path(zPath, sizeof zPath, "killed.db");
    ASSERT_EQ(0, pipe(fds));
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child_main(zPath, fds[1]);
        _exit(0);
    }
    close(fds[1]);
    sk_wait_start(pid, fds[0], &aTick[0], iTrial);
    sk_sleep_writer_ms(pid, &aTick[0], killAfterMs, 10, NULL, NULL);
    tKill = sk_mono_ms();
    sk_kill(pid, iTrial);
    while (nTick < sizeof aTick / sizeof aTick[0] &&
           read(fds[0], &aTick[nTick], sizeof aTick[0]) == (ssize_t)sizeof aTick[0])
        nTick++;
    close(fds[0]);

    db = core_open_ro(zPath);
    ASSERT_EQ(VT_SCHEMA_OK, vt__schema_check(db, NULL, zMsg, sizeof zMsg));
    ASSERT_STREQ("ok", core_q_rows(db, "PRAGMA integrity_check"));
    nHave = (uint64_t)core_q_int(db, "SELECT (SELECT count(*) FROM api_call) + (SELECT count(*) FROM kernel)");
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM kernel k LEFT JOIN string s ON s.id = k.name_id"
                                " WHERE s.value IS NOT 'sigkill_kernel'"));
    sqlite3_close(db);
    nNeed = sk_required(aTick, nTick, tKill, nHave, SLACK_MS, &lostMs, &lostWallMs);
    printf("       trial %2d: killed after %4u ms of the writer (it waited %4llu ms for a CPU); submitted %8llu, in trace %8llu,"
           " required %8llu; lost window %llu ms (wall clock %llu ms)\n",
           iTrial, killAfterMs,
           (unsigned long long)((tKill - aTick[0].tMs) - sk_writer_ms(&aTick[0], &aTick[nTick - 1], tKill)),
           (unsigned long long)aTick[nTick - 1].nEvents, (unsigned long long)nHave, (unsigned long long)nNeed,
           (unsigned long long)lostMs, (unsigned long long)lostWallMs);
    fflush(stdout);
    ASSERT(nHave >= nNeed);
    core_remove_trace(zPath);
    return lostMs;
}

TEST(sigkill_leaves_readable_trace)
{
    const char *zTrials = getenv("VT_SIGKILL_TRIALS");
    int nTrial = zTrials && atoi(zTrials) > 0 ? atoi(zTrials) : 10, i;
    unsigned seed = (unsigned)(sk_mono_ms() ^ (uint64_t)getpid());
    uint64_t worst = 0;
    const char *zSeed = getenv("VT_SIGKILL_SEED");
    if (zSeed) seed = (unsigned)strtoul(zSeed, NULL, 10);
    printf("       seed %u (VT_SIGKILL_SEED to repeat), %d trials (VT_SIGKILL_TRIALS)\n", seed, nTrial);
    srand(seed);
    for (i = 0; i < nTrial; i++) {
        unsigned ms = 500 + (unsigned)(rand() % 2001); /* 0.5 s to 2.5 s */
        uint64_t lost = trial(i, ms);
        if (lost > worst) worst = lost;
    }
    printf("       worst loss window: %llu ms (bound asserted: %d ms, writer's clock)\n", (unsigned long long)worst,
           SLACK_MS);
}

VT_TEST_LIST(T(sigkill_leaves_readable_trace))
