/* Tests of tracer/session.c: start/close lifecycle on a real trace, fork safety, failure paths. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "config.h"
#include "session.h"
#include "vt_test.h"

static const char *no_env(const char *zName)
{
    (void)zName;
    return NULL;
}

/* Default config writing into a fresh temp directory; zDir receives the directory. */
static void config_in_tmp(struct vt_config *cfg, char *zDir, size_t nDir)
{
    vt__config_load(cfg, no_env);
    snprintf(zDir, nDir, "/tmp/vt_session_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(cfg->zOutput, sizeof cfg->zOutput, "%s/trace-%%p.db", zDir);
    cfg->flush_ms = 50;
}

/* Submit one cudaMalloc api_call row with the given correlation id. */
static int submit_call(uint32_t correlation)
{
    struct vt_hrec rec;
    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_API_CALL;
    rec.u.api.api = 1;
    rec.u.api.correlation = correlation;
    rec.u.api.start = 1000 + correlation;
    rec.u.api.end = 2000 + correlation;
    rec.u.api.thread = 77;
    rec.u.api.device = 0;
    rec.u.api.bytes = 4096;
    rec.u.api.ptr = 0x7f0000000000ull + correlation * 4096ull;
    return vt__session_submit(&rec);
}

static sqlite3_int64 query_int(sqlite3 *db, const char *zSql)
{
    sqlite3_stmt *pStmt = NULL;
    sqlite3_int64 v = -1;
    ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL));
    if (sqlite3_step(pStmt) == SQLITE_ROW) v = sqlite3_column_int64(pStmt, 0);
    sqlite3_finalize(pStmt);
    return v;
}

static void query_text(sqlite3 *db, const char *zSql, char *z, size_t n)
{
    sqlite3_stmt *pStmt = NULL;
    z[0] = '\0';
    ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL));
    if (sqlite3_step(pStmt) == SQLITE_ROW && sqlite3_column_text(pStmt, 0))
        snprintf(z, n, "%s", (const char *)sqlite3_column_text(pStmt, 0));
    sqlite3_finalize(pStmt);
}

static void remove_dir(const char *zDir, const char *zPath)
{
    char z[4200];
    unlink(zPath);
    snprintf(z, sizeof z, "%s-wal", zPath);
    unlink(z);
    snprintf(z, sizeof z, "%s-shm", zPath);
    unlink(z);
    rmdir(zDir);
}

TEST(start_submit_close)
{
    struct vt_config cfg;
    char zDir[64], zErr[512], zPath[4096], zExpect[4200], z[256];
    struct stat st;
    sqlite3 *db = NULL;
    config_in_tmp(&cfg, zDir, sizeof zDir);
    ASSERT_EQ(0, vt__session_active());
    ASSERT_EQ(0, vt__session_start(&cfg, NULL, zErr, sizeof zErr));
    ASSERT_EQ(1, vt__session_active());
    snprintf(zPath, sizeof zPath, "%s", vt__session_path());
    snprintf(zExpect, sizeof zExpect, "%s/trace-%ld.db", zDir, (long)getpid());
    ASSERT_STREQ(zExpect, zPath);
    /* a second start is refused while this one runs */
    ASSERT_EQ(-1, vt__session_start(&cfg, NULL, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "already started");
    for (uint32_t i = 1; i <= 100; i++) ASSERT_EQ(0, submit_call(i));
    ASSERT_EQ(0, vt__session_meta("clock_anchor_cupti_ns", "123"));
    ASSERT_EQ(0, vt__session_close(5000));
    ASSERT_EQ(0, vt__session_active());
    ASSERT_EQ(-1, submit_call(101)); /* closed: refused */
    ASSERT_EQ(-1, vt__session_close(5000));

    ASSERT_EQ(0, stat(zPath, &st));
    ASSERT_EQ(0600, st.st_mode & 07777);
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    ASSERT_EQ(100, query_int(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(5050, query_int(db, "SELECT sum(correlation) FROM api_call"));
    ASSERT_EQ(100 * 4096, query_int(db, "SELECT sum(bytes) FROM api_call WHERE api = 1"));
    query_text(db, "SELECT value FROM meta WHERE key = 'pid'", z, sizeof z);
    ASSERT_EQ(getpid(), atol(z));
    query_text(db, "SELECT value FROM meta WHERE key = 'tracer_version'", z, sizeof z);
    ASSERT_STREQ(VT_VERSION, z);
    query_text(db, "SELECT value FROM meta WHERE key = 'config.flush_ms'", z, sizeof z);
    ASSERT_STREQ("50", z);
    query_text(db, "SELECT value FROM meta WHERE key = 'clock_anchor_cupti_ns'", z, sizeof z);
    ASSERT_STREQ("123", z);
    /* config.kernels and config.subscribers among them */
    ASSERT_EQ(11, query_int(db, "SELECT count(*) FROM meta WHERE key LIKE 'config.%'"));
    query_text(db, "SELECT value FROM meta WHERE key = 'cmdline'", z, sizeof z);
    ASSERT_CONTAINS(z, "test_session");
    sqlite3_close(db);
    remove_dir(zDir, zPath);
}

/*
 * Fork after tracing started: the child submits records and exits; the parent
 * goes on, submits more and closes. The trace holds exactly the parent's rows.
 */
TEST(fork_child_never_touches_parent_trace)
{
    struct vt_config cfg;
    char zDir[64], zErr[512], zPath[4096];
    sqlite3 *db = NULL;
    pid_t pid;
    int status = -1;
    config_in_tmp(&cfg, zDir, sizeof zDir);
    ASSERT_EQ(0, vt__session_start(&cfg, NULL, zErr, sizeof zErr));
    snprintf(zPath, sizeof zPath, "%s", vt__session_path());
    for (uint32_t i = 1; i <= 50; i++) ASSERT_EQ(0, submit_call(i));

    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        /* the child: tracing is off, nothing reaches the parent's writer */
        int nRefused = 0;
        if (vt__session_active()) _exit(10);
        for (uint32_t i = 1000; i < 1200; i++) nRefused += submit_call(i) == -1;
        if (vt__session_meta("pid", "child") != -1) _exit(11);
        if (vt__session_close(1000) != -1) _exit(12);
        vt__session_abort(); /* must not remove the parent's file */
        /* _exit, as forked workers do: the parent's abandoned writer is leaked on purpose
         * (writer.h) and LeakSanitizer would report it at exit() */
        _exit(nRefused == 200 ? 0 : 13);
    }
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(0, WEXITSTATUS(status));

    ASSERT_EQ(1, vt__session_active());
    for (uint32_t i = 51; i <= 80; i++) ASSERT_EQ(0, submit_call(i));
    ASSERT_EQ(0, vt__session_close(5000));

    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    ASSERT_EQ(80, query_int(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(1, query_int(db, "SELECT min(correlation) FROM api_call"));
    ASSERT_EQ(80, query_int(db, "SELECT max(correlation) FROM api_call"));
    ASSERT_EQ(80 * 81 / 2, query_int(db, "SELECT sum(correlation) FROM api_call"));
    ASSERT_EQ(getpid(), query_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'pid'"));
    ASSERT_EQ(0, query_int(db, "SELECT count(*) FROM dropped"));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "PRAGMA integrity_check", NULL, NULL, NULL));
    sqlite3_close(db);
    remove_dir(zDir, zPath);
}

/* A fork from another thread while records are being submitted: the parent's trace stays whole. */
static void *submitter(void *pArg)
{
    uint32_t base = (uint32_t)(uintptr_t)pArg;
    for (uint32_t i = 0; i < 2000; i++) submit_call(base + i);
    return NULL;
}

TEST(fork_during_concurrent_submits)
{
    struct vt_config cfg;
    char zDir[64], zErr[512], zPath[4096];
    sqlite3 *db = NULL;
    pthread_t th;
    int status = -1;
    pid_t pid;
    config_in_tmp(&cfg, zDir, sizeof zDir);
    ASSERT_EQ(0, vt__session_start(&cfg, NULL, zErr, sizeof zErr));
    snprintf(zPath, sizeof zPath, "%s", vt__session_path());
    ASSERT_EQ(0, pthread_create(&th, NULL, submitter, (void *)(uintptr_t)100000));
    for (int k = 0; k < 5; k++) {
        pid = fork();
        ASSERT(pid >= 0);
        if (pid == 0) {
            for (uint32_t i = 0; i < 100; i++) submit_call(900000 + i);
            _exit(vt__session_active() ? 1 : 0);
        }
        ASSERT_EQ(pid, waitpid(pid, &status, 0));
        ASSERT(WIFEXITED(status));
        ASSERT_EQ(0, WEXITSTATUS(status));
    }
    pthread_join(th, NULL);
    ASSERT_EQ(0, vt__session_close(5000));
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    ASSERT_EQ(0, query_int(db, "SELECT count(*) FROM api_call WHERE correlation >= 900000"));
    ASSERT_EQ(2000, query_int(db, "SELECT count(*) FROM api_call") +
                        query_int(db, "SELECT coalesce(sum(count), 0) FROM dropped"));
    sqlite3_close(db);
    remove_dir(zDir, zPath);
}

/* Set-up failures: one reason, nothing left on disk, the session stays inactive. */
TEST(start_failures_leave_nothing)
{
    struct vt_config cfg;
    char zDir[64], zErr[512], zPath[256];
    struct stat st;
    int fd;
    config_in_tmp(&cfg, zDir, sizeof zDir);
    snprintf(cfg.zOutput, sizeof cfg.zOutput, "%s/missing/t.db", zDir);
    ASSERT_EQ(-1, vt__session_start(&cfg, NULL, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "does not exist");
    ASSERT_EQ(0, vt__session_active());
    ASSERT_STREQ("", vt__session_path());

    /* an existing non-trace file is refused and left alone */
    snprintf(zPath, sizeof zPath, "%s/t.db", zDir);
    fd = open(zPath, O_WRONLY | O_CREAT, 0644);
    ASSERT(fd >= 0);
    ASSERT_EQ(5, write(fd, "hello", 5));
    close(fd);
    snprintf(cfg.zOutput, sizeof cfg.zOutput, "%s", zPath);
    ASSERT_EQ(-1, vt__session_start(&cfg, NULL, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "not a vramtrace trace");
    ASSERT_EQ(0, stat(zPath, &st));
    ASSERT_EQ(5, st.st_size);
    unlink(zPath);

    /* the session can still start afterwards, and abort removes its file */
    ASSERT_EQ(0, vt__session_start(&cfg, NULL, zErr, sizeof zErr));
    ASSERT_EQ(0, stat(zPath, &st));
    vt__session_abort();
    ASSERT_EQ(0, vt__session_active());
    ASSERT_EQ(-1, stat(zPath, &st));
    ASSERT_EQ(-1, vt__session_meta("k", "v"));

    /* a trace the writer cannot open (here: a file-size limit below an empty trace's) is named once */
    {
        pid_t pid = fork();
        int status = -1;
        ASSERT(pid >= 0);
        if (pid == 0) {
            struct rlimit rl = {16384, 16384};
            char zWant[512], *zAt;
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0 || vt__session_start(&cfg, NULL, zErr, sizeof zErr) != -1) _exit(2);
            snprintf(zWant, sizeof zWant, "cannot open trace %s: the largest file size allowed", zPath);
            zAt = strstr(zErr, zPath);
            _exit(strncmp(zErr, zWant, strlen(zWant)) != 0 ? 3 : strstr(zAt + 1, zPath) ? 4 : 0);
        }
        ASSERT_EQ(pid, waitpid(pid, &status, 0));
        ASSERT(WIFEXITED(status));
        ASSERT_EQ(0, WEXITSTATUS(status)); /* 4: "cannot open trace PATH: PATH: ..." */
    }
    unlink(zPath);
    rmdir(zDir);
}

/* Heap pointers in refused records are freed (LeakSanitizer checks this under ASan). */
TEST(refused_records_free_their_heap)
{
    struct vt_hrec rec;
    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_STACK;
    rec.u.stack.id = 1;
    rec.u.stack.nFrame = 1;
    rec.u.stack.aFrame = calloc(1, sizeof(struct vt_frame));
    ASSERT(rec.u.stack.aFrame != NULL);
    rec.u.stack.aFrame[0].zFunction = strdup("f");
    rec.u.stack.aFrame[0].zFile = strdup("f.py");
    ASSERT_EQ(-1, vt__session_submit(&rec));
    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_META;
    snprintf(rec.u.meta.zKey, sizeof rec.u.meta.zKey, "k");
    rec.u.meta.zValue = strdup("v");
    ASSERT_EQ(-1, vt__session_submit(&rec));
    ASSERT_EQ(-1, vt__session_meta("k", "v"));
    {
        size_t n = 123;
        ASSERT(vt__session_buffer_alloc(&n) == NULL);
        ASSERT_EQ(0, n);
    }
}

VT_TEST_LIST(T(start_submit_close) T(fork_child_never_touches_parent_trace)
             T(fork_during_concurrent_submits) T(start_failures_leave_nothing)
             T(refused_records_free_their_heap))
