/* Reliability: a file-size limit (ulimit -f) turns tracing off with one line; the job lives and the trace stays readable. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "core_util.h"
#include "vramtrace/schema.h"
#include "vramtrace/schema.h"

/*
 * Each test runs the writer in a child process whose RLIMIT_FSIZE is small and
 * whose SIGXFSZ has its default action (the process ends with a core dump), as
 * in a job started under `ulimit -f`. A write past the limit fails with EFBIG
 * and the kernel sends SIGXFSZ to the thread that wrote. The child must exit
 * normally (status 0 after its own checks), with exactly one "vramtrace:" line
 * on stderr, and leave a trace that opens, passes the schema check and
 * PRAGMA integrity_check, and holds exactly what the writer committed.
 */

#define LIMIT_BYTES (1u << 20) /* the trace's files stop growing at 1 MiB */
#define N_API 200000u          /* API-call records: far more than 1 MiB of rows */
#define N_AFTER_API 1000u      /* records submitted once tracing is off */
#define N_AFTER_KERNELS 100u

/* What the child reports to the parent through a pipe. */
struct report {
    struct vt_writer_stats stOff;  /* once all N_API records were handled */
    struct vt_writer_stats stLast; /* once the records submitted after that were handled too */
    uint64_t nAfter;               /* the records submitted after that: N_AFTER_API and one buffer's kernels */
    int closeRc;
};

/* A small file (the child's stderr) as a string, in a static buffer. */
static const char *slurp(const char *zPath)
{
    static char z[8192];
    vt_read_file(zPath, z, sizeof z);
    return z;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Child: stderr to zLog, SIGXFSZ at its default action, then files limited to nLimit bytes. */
static void child_limits(const char *zLog, rlim_t nLimit)
{
    struct rlimit rl;
    int fd = open(zLog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) != 2) _exit(90);
    close(fd);
    signal(SIGXFSZ, SIG_DFL);
    rl.rlim_cur = rl.rlim_max = nLimit;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(91);
}

/* Child: 1 if SIGXFSZ is blocked or pending in the calling thread (the writer must leave neither behind). */
static int xfsz_left_behind(void)
{
    sigset_t mask, pending;
    pthread_sigmask(SIG_BLOCK, NULL, &mask);
    sigpending(&pending);
    return sigismember(&mask, SIGXFSZ) == 1 || sigismember(&pending, SIGXFSZ) == 1;
}

/* Child: wait (bounded, not asserted on time) until pred holds for w's statistics; returns the last ones. */
static struct vt_writer_stats wait_stats(struct vt_writer *w, int (*pred)(const struct vt_writer_stats *, uint64_t),
                                         uint64_t arg)
{
    struct vt_writer_stats st;
    uint64_t tEnd = mono_ms() + 60000;
    do {
        sleep_ms(10);
        vt__writer_stats(w, &st);
    } while (!pred(&st, arg) && mono_ms() < tEnd);
    return st;
}

static int all_handled(const struct vt_writer_stats *st, uint64_t n)
{
    return st->rows_written + st->dropped_writer + st->dropped_off >= n;
}

static int off_reached(const struct vt_writer_stats *st, uint64_t n)
{
    return st->dropped_off >= n;
}

/* Parent: wait for the child, which must have exited normally with status 0. */
static void expect_normal_exit(pid_t pid, const char *zLog)
{
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    if (WIFSIGNALED(status))
        VT__FAIL("the traced process was killed by signal %d%s; its stderr: %s", WTERMSIG(status),
                 WTERMSIG(status) == SIGXFSZ ? " (SIGXFSZ: file size limit)" : "", slurp(zLog));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        VT__FAIL("the traced process exited with status %d; its stderr: %s", WEXITSTATUS(status), slurp(zLog));
}

/* Parent: zLog holds exactly one line, a "vramtrace:" line containing zWord. */
static void expect_one_line(const char *zLog, const char *zWord)
{
    const char *z = slurp(zLog);
    ASSERT(strncmp(z, "vramtrace: ", 11) == 0);
    ASSERT(strchr(z, '\n') == z + strlen(z) - 1);
    ASSERT_CONTAINS(z, zWord);
}

/* Parent: the trace at zPath opens, is a trace, and is intact; returns it open read-only. */
static sqlite3 *expect_readable(const char *zPath)
{
    char zMsg[256] = "";
    sqlite3 *db = core_open_ro(zPath);
    if (vt__schema_check(db, NULL, zMsg, sizeof zMsg) != VT_SCHEMA_OK) VT__FAIL("schema check: %s", zMsg);
    ASSERT_STREQ("ok", core_q_rows(db, "PRAGMA integrity_check"));
    return db;
}

/*
 * The writer thread reaches the limit: tracing goes off with one line; every
 * record is either in the trace or counted; what comes later is counted; the
 * job exits normally and the trace is intact.
 */
TEST(file_size_limit_turns_tracing_off)
{
    char zPath[128], zLog[160];
    struct report rep;
    int fds[2];
    pid_t pid;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    snprintf(zLog, sizeof zLog, "%s.stderr", zPath);
    ASSERT_EQ(0, pipe(fds));
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        struct vt_writer_config cfg;
        struct vt_writer *w;
        uint32_t i, corr = N_API + 1;
        long long nKernels;
        close(fds[0]);
        child_limits(zLog, LIMIT_BYTES);
        core_config(&cfg);
        cfg.host_ring_records = N_API; /* room for every record: no queue drops in the counts */
        cfg.max_memory = cfg.host_ring_records * sizeof(struct vt_hrec) + (8u << 20);
        cfg.corr_map_entries = 262144; /* no correlation-map evictions either: only api_call rows */
        cfg.batch_rows = 5000;
        w = core_open(zPath, &cfg);
        for (i = 1; i <= N_API; i++)
            if (core_submit_api(w, i) != 0) _exit(92);
        if (vt__writer_start(w) != 0) _exit(93);
        rep.stOff = wait_stats(w, all_handled, N_API);
        /* Later records, host and activity, are counted, not written. */
        for (i = 0; i < N_AFTER_API; i++)
            if (core_submit_api(w, corr++) != 0) _exit(94);
        if ((nKernels = core_submit_kernels(w, "after_the_limit", &corr)) <= 0) _exit(95);
        rep.nAfter = N_AFTER_API + (uint64_t)nKernels;
        rep.stLast = wait_stats(w, off_reached, rep.stOff.dropped_off + rep.nAfter);
        rep.closeRc = vt__writer_close(w, 10000);
        if (xfsz_left_behind()) _exit(96);
        if (write(fds[1], &rep, sizeof rep) != (ssize_t)sizeof rep) _exit(97);
        exit(0); /* a normal end: atexit handlers, stdio flushed */
    }
    close(fds[1]);
    expect_normal_exit(pid, zLog);
    ASSERT_EQ((ssize_t)sizeof rep, read(fds[0], &rep, sizeof rep));
    close(fds[0]);
    expect_one_line(zLog, "reached the largest file size allowed (ulimit -f: 1048576 bytes): tracing is off");

    ASSERT_EQ(1, rep.stOff.tracing_off);
    /* Every record is in the trace or counted, exactly. */
    ASSERT_EQ(N_API, rep.stOff.rows_written + rep.stOff.dropped_writer + rep.stOff.dropped_off);
    ASSERT(rep.stOff.rows_written > 0 && rep.stOff.rows_written < N_API);
    /* What came after: counted one by one (the kernels of one buffer too), nothing written. */
    ASSERT_EQ(rep.stOff.dropped_off + rep.nAfter, rep.stLast.dropped_off);
    ASSERT_EQ(rep.stOff.rows_written, rep.stLast.rows_written);
    ASSERT_EQ(-EFBIG, rep.closeRc); /* not a clean close, and already said */

    db = expect_readable(zPath);
    ASSERT_EQ(rep.stOff.rows_written, core_q_int(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM kernel"));
    /* When the closing rows fit (the checkpoint at close made room), the loss is in the trace too. */
    if (core_q_int(db, "SELECT count(*) FROM meta WHERE key = 'closed_cleanly'")) {
        ASSERT_EQ(0, core_q_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'closed_cleanly'"));
        ASSERT_EQ(rep.stLast.dropped_off, core_q_int(db, "SELECT sum(count) FROM dropped WHERE source = 2"
                                                         " AND what LIKE 'records not written%'"));
        ASSERT_EQ(core_q_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'dropped_writer'"),
                  core_q_int(db, "SELECT sum(count) FROM dropped WHERE source = 2"));
        printf("       closing rows written: %s\n",
               core_q_rows(db, "SELECT source, what, count FROM dropped ORDER BY id"));
    } else {
        printf("       closing rows did not fit\n");
    }
    printf("       %llu rows committed, %llu given up with the open transaction, %llu + %llu records counted"
           " after the limit\n",
           (unsigned long long)rep.stOff.rows_written, (unsigned long long)rep.stOff.dropped_writer,
           (unsigned long long)rep.stOff.dropped_off,
           (unsigned long long)(rep.stLast.dropped_off - rep.stOff.dropped_off));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/*
 * The limit is smaller than an empty trace: open fails with a reason, on the
 * caller's (the job's) thread, which must not die of SIGXFSZ and gets its
 * signal mask back unchanged with nothing pending.
 */
TEST(file_size_limit_smaller_than_a_trace)
{
    char zPath[128], zLog[160];
    pid_t pid;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    snprintf(zLog, sizeof zLog, "%s.stderr", zPath);
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        struct vt_writer_config cfg;
        struct vt_writer *w;
        char zErr[256] = "";
        child_limits(zLog, 16384);
        core_config(&cfg);
        w = vt__writer_open(zPath, &cfg, zErr, sizeof zErr);
        if (w) _exit(92);
        if (xfsz_left_behind()) _exit(96);
        fprintf(stderr, "vramtrace: %s\n", zErr); /* the one line the glue prints */
        exit(0);
    }
    expect_normal_exit(pid, zLog);
    expect_one_line(zLog, "the largest file size allowed (ulimit -f: 16384 bytes) is too small for a trace");
}

/*
 * A writer that was never started closes on the caller's thread, which then
 * does the writes that reach the limit: the same outcome, on the job's thread.
 */
TEST(file_size_limit_at_close_on_the_callers_thread)
{
    char zPath[128], zLog[160], zWal[160];
    struct stat st;
    pid_t pid;
    sqlite3 *db;
    long long nRows;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    snprintf(zLog, sizeof zLog, "%s.stderr", zPath);
    snprintf(zWal, sizeof zWal, "%s-wal", zPath);
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        struct vt_writer_config cfg;
        struct vt_writer *w;
        uint32_t i;
        core_config(&cfg);
        cfg.host_ring_records = 50000;
        cfg.max_memory = cfg.host_ring_records * sizeof(struct vt_hrec) + (8u << 20);
        cfg.corr_map_entries = 65536;
        cfg.batch_rows = 5000;
        w = core_open(zPath, &cfg);
        /* the limit comes once the trace exists: 256 KiB more than its WAL holds now */
        if (stat(zWal, &st) != 0) _exit(92);
        child_limits(zLog, (rlim_t)st.st_size + (256u << 10));
        for (i = 1; i <= 50000; i++)
            if (core_submit_api(w, i) != 0) _exit(93);
        if (vt__writer_close(w, 10000) != -EFBIG) _exit(94); /* not clean, and already said */
        if (xfsz_left_behind()) _exit(96);
        exit(0);
    }
    expect_normal_exit(pid, zLog);
    expect_one_line(zLog, "tracing is off");
    db = expect_readable(zPath);
    nRows = core_q_int(db, "SELECT count(*) FROM api_call");
    ASSERT(nRows > 0 && nRows < 50000);
    printf("       %lld of 50000 rows committed before the limit\n", nRows);
    sqlite3_close(db);
}

VT_TEST_LIST(T(file_size_limit_turns_tracing_off) T(file_size_limit_smaller_than_a_trace)
                 T(file_size_limit_at_close_on_the_callers_thread))
