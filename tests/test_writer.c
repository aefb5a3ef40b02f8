/* Writer tests: batching, flush at close, timed commits, memory bounds and drops, fork, close timeout. */
#include <cupti_activity.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "core_util.h"
#include "vramtrace/schema.h"

/* Fill and submit one buffer with n kernel records starting at correlation corr0. */
static void submit_kernels(struct vt_writer *w, uint32_t corr0, int n)
{
    size_t cap = 0, off = 0;
    uint8_t *buf = vt__writer_buffer_alloc(w, &cap);
    CUpti_ActivityKernel10 k;
    int i;
    ASSERT(buf != NULL);
    for (i = 0; i < n; i++) {
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.name = (i % 2) ? "kernel_odd" : "kernel_even";
        k.correlationId = corr0 + (uint32_t)i;
        k.start = 100000 + (uint64_t)(corr0 + (uint32_t)i) * 100;
        k.end = k.start + 50;
        k.streamId = 7;
        k.gridX = k.gridY = k.gridZ = 1;
        k.blockX = k.blockY = k.blockZ = 32;
        ASSERT_EQ(0, core_lay(buf, cap, &off, &k, sizeof k));
    }
    vt__writer_buffer_submit(w, buf, off);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A meta value as an integer. */
static long long meta_int(sqlite3 *db, const char *zKey)
{
    char zSql[128];
    snprintf(zSql, sizeof zSql, "SELECT CAST(value AS INTEGER) FROM meta WHERE key='%s'", zKey);
    return core_q_int(db, zSql);
}

TEST(writer_batching)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    sqlite3 *db;
    uint32_t i;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.batch_rows = 100;
    cfg.flush_ms = 1000;
    w = core_open(zPath, &cfg);
    for (i = 1; i <= 1050; i++) ASSERT_EQ(0, core_submit_api(w, i));
    ASSERT_EQ(0, vt__writer_start(w));
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    db = core_open_ro(zPath);
    ASSERT_EQ(1050, core_q_int(db, "SELECT count(*) FROM api_call"));
    /* 10 full batches of 100 rows, then the last 50 rows at close. */
    ASSERT_EQ(11, meta_int(db, "commits"));
    ASSERT_EQ(1050, meta_int(db, "rows_written"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/*
 * Rows go in 16 to an INSERT, held per table until then; a commit (every 100 rows here) or the
 * close inserts a table's partial batch. Across those boundaries every row keeps its id (the
 * kernels' ids follow their correlation ids: one buffer after another), its block (id >> 6) and
 * its values, and none is lost or written twice.
 */
TEST(writer_batch_ids)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    sqlite3 *db;
    uint32_t i;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.batch_rows = 100;
    cfg.flush_ms = 1000;
    cfg.time_base_ns = 100000;
    w = core_open(zPath, &cfg);
    for (i = 1; i <= 77; i++) ASSERT_EQ(0, core_submit_api(w, 5000 + i)); /* no activity record: written alone */
    for (i = 0; i < 3; i++) submit_kernels(w, 1 + i * 203, 203);
    ASSERT_EQ(0, vt__writer_start(w));
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    db = core_open_ro(zPath);
    ASSERT_EQ(609, core_q_int(db, "SELECT count(*) FROM kernel"));
    ASSERT_EQ(609, core_q_int(db, "SELECT count(*) FROM kernel WHERE id = correlation AND start = 100000 + correlation * 100"
                                  " AND dur = 50 AND stream = 7 AND block_x = 32"));
    ASSERT_EQ(609, core_q_int(db, "SELECT count(*) FROM kernel_row r JOIN kernel_block b ON b.id = r.id >> 6"));
    ASSERT_EQ(10, core_q_int(db, "SELECT count(*) FROM kernel_block")); /* ids 1 to 609: blocks 0 to 9 */
    ASSERT_EQ(77, core_q_int(db, "SELECT count(DISTINCT id) FROM api_call WHERE id BETWEEN 1 AND 77"
                                 " AND start = 1000 + correlation * 10 AND dur = 5 AND bytes = 4096"));
    ASSERT_EQ(77, core_q_int(db, "SELECT count(*) FROM api_call"));
    /* every row counted once: the kernels, the calls, the 2 names' `string` and `kernel_name` rows */
    ASSERT_EQ(2, core_q_int(db, "SELECT count(*) FROM string"));
    ASSERT_EQ(2, core_q_int(db, "SELECT count(*) FROM kernel_name"));
    ASSERT_EQ(609 + 77 + 2 + 2, meta_int(db, "rows_written"));
    ASSERT_EQ(0, meta_int(db, "dropped_writer"));
    ASSERT_EQ(1, meta_int(db, "closed_cleanly"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(writer_flush_at_close)
{
    char zPath[160], zWal[200];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct stat st;
    sqlite3 *db;
    uint32_t i;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.time_base_ns = 110000; /* after the first kernels: stored times below it are negative */
    w = core_open(zPath, &cfg);
    ASSERT_EQ(0, vt__writer_start(w));
    for (i = 0; i < 3; i++) submit_kernels(w, 1 + i * 200, 200);
    for (i = 1; i <= 500; i++) ASSERT_EQ(0, core_submit_api(w, 10000 + i));
    /* Closed straight away: everything queued must still reach the file. */
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    snprintf(zWal, sizeof zWal, "%s-wal", zPath);
    ASSERT(stat(zWal, &st) != 0 || st.st_size == 0); /* checkpointed: the trace is one file */
    db = core_open_ro(zPath);
    ASSERT_STREQ("ok", core_q_rows(db, "PRAGMA integrity_check"));
    ASSERT_EQ(600, core_q_int(db, "SELECT count(*) FROM kernel"));
    ASSERT_EQ(600, core_q_int(db, "SELECT count(DISTINCT correlation) FROM kernel"));
    ASSERT_EQ(500, core_q_int(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(2, core_q_int(db, "SELECT count(*) FROM string"));
    ASSERT_EQ(1, meta_int(db, "closed_cleanly"));
    ASSERT_EQ(100000 + 600 * 100 + 50, meta_int(db, "end_ns"));
    ASSERT_EQ(600, meta_int(db, "records_decoded"));
    ASSERT_EQ(0, meta_int(db, "dropped_queue"));
    /* times are stored relative to the base and read back exactly through the generated columns */
    ASSERT_EQ(110000, meta_int(db, "time_base_ns"));
    ASSERT_EQ(600, core_q_int(db, "SELECT count(*) FROM kernel WHERE start = 100000 + correlation * 100"
                                  " AND end = start + 50 AND t = start - 110000 AND dur = 50"));
    ASSERT_EQ(-9900, core_q_int(db, "SELECT min(t) FROM kernel"));
    ASSERT_EQ(500, core_q_int(db, "SELECT count(*) FROM api_call WHERE start = 1000 + correlation * 10"
                                  " AND end = start + 5 AND t = start - 110000 AND dur = 5"));
    /* no index at close: the analyzer builds them (schema.h) */
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM sqlite_schema WHERE type='index'"
                                " AND name NOT LIKE 'sqlite_autoindex%'"));
    sqlite3_close(db);

    /* An end_ns given by the glue (the clock at exit) is kept. */
    core_tmp_path(zPath, sizeof zPath, "t2.db");
    w = core_open(zPath, &cfg);
    submit_kernels(w, 1, 10);
    {
        struct vt_hrec h;
        memset(&h, 0, sizeof h);
        h.type = VT_HREC_META;
        strcpy(h.u.meta.zKey, "end_ns");
        h.u.meta.zValue = strdup("999999999");
        ASSERT_EQ(0, vt__writer_submit(w, &h));
    }
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    db = core_open_ro(zPath);
    ASSERT_EQ(999999999, meta_int(db, "end_ns"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(writer_timed_commit)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct vt_writer_stats st;
    sqlite3 *db;
    uint32_t i;
    uint64_t t0;
    long long nApi, nKernel;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.flush_ms = 200;
    cfg.batch_rows = 1000000; /* never reached: only the timer can commit */
    w = core_open(zPath, &cfg);
    ASSERT_EQ(0, vt__writer_start(w));
    for (i = 1; i <= 10; i++) ASSERT_EQ(0, core_submit_api(w, i));
    submit_kernels(w, 100, 5);
    /* A second connection, while the writer is still open, sees the rows: only a timed commit
     * can have put them there. Waited for (bounded), not timed: a loaded machine is slower. */
    t0 = mono_ms();
    do {
        sleep_ms(cfg.flush_ms);
        db = core_open_ro(zPath);
        nApi = core_q_int(db, "SELECT count(*) FROM api_call");
        nKernel = core_q_int(db, "SELECT count(*) FROM kernel");
        sqlite3_close(db);
    } while ((nApi < 10 || nKernel < 5) && mono_ms() - t0 < 60000);
    ASSERT_EQ(10, nApi);
    ASSERT_EQ(5, nKernel);
    vt__writer_stats(w, &st);
    ASSERT(st.commits >= 1);
    ASSERT_EQ(5, st.records_decoded);
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    CORE_LEAK_CHECK();
}

TEST(writer_buffer_bound)
{
    char zPath[128], zErr[256];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct vt_writer_stats st;
    uint8_t *a[3], *p;
    size_t n = 0;
    int i;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.host_ring_records = 16;
    cfg.buffer_size = 4096;
    cfg.max_memory = 16 * sizeof(struct vt_hrec) + 3 * 4096 + 100;
    w = core_open(zPath, &cfg);
    for (i = 0; i < 3; i++) {
        a[i] = vt__writer_buffer_alloc(w, &n);
        ASSERT(a[i] != NULL);
        ASSERT_EQ(4096, n);
        ASSERT_EQ(0, (uintptr_t)a[i] % 8);
    }
    ASSERT(a[0] != a[1] && a[1] != a[2] && a[0] != a[2]);
    ASSERT(vt__writer_buffer_alloc(w, &n) == NULL);
    ASSERT_EQ(0, n);
    vt__writer_buffer_submit(w, a[1], 0); /* empty: straight back to the pool */
    p = vt__writer_buffer_alloc(w, &n);
    ASSERT(p == a[1]);
    ASSERT(vt__writer_buffer_alloc(w, &n) == NULL);
    vt__writer_stats(w, &st);
    ASSERT_EQ(2, st.buffers_refused);
    vt__writer_buffer_submit(w, a[0], 0);
    vt__writer_buffer_submit(w, a[1], 0);
    vt__writer_buffer_submit(w, a[2], 0);
    ASSERT_EQ(0, vt__writer_close(w, 10000));

    /* A bound below one buffer plus the ring is refused at open, with a reason. */
    core_tmp_path(zPath, sizeof zPath, "t2.db");
    cfg.max_memory = 4096;
    ASSERT(vt__writer_open(zPath, &cfg, zErr, sizeof zErr) == NULL);
    ASSERT_CONTAINS(zErr, "memory bound");
    CORE_LEAK_CHECK();
}

TEST(writer_ring_drops_stalled)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct vt_hrec h;
    sqlite3 *db;
    int i, nRefused = 0;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.host_ring_records = 16;
    w = core_open(zPath, &cfg);
    /* The writer thread is not running: nothing leaves the ring. */
    for (i = 1; i <= 100; i++) nRefused += core_submit_api(w, (uint32_t)i) != 0;
    ASSERT_EQ(84, nRefused);
    /* Refused records that own heap memory have it released (LSan checks below). */
    for (i = 0; i < 10; i++) {
        memset(&h, 0, sizeof h);
        h.type = VT_HREC_META;
        strcpy(h.u.meta.zKey, "refused");
        h.u.meta.zValue = strdup("value");
        ASSERT_EQ(-1, vt__writer_submit(w, &h));
        memset(&h, 0, sizeof h);
        h.type = VT_HREC_STACK;
        h.u.stack.id = i + 1;
        h.u.stack.nFrame = 1;
        h.u.stack.aFrame = calloc(1, sizeof(struct vt_frame));
        h.u.stack.aFrame[0].zFunction = strdup("f");
        h.u.stack.aFrame[0].zFile = strdup("f.py");
        ASSERT_EQ(-1, vt__writer_submit(w, &h));
    }
    nRefused += 20;
    ASSERT_EQ(nRefused, vt__writer_dropped(w));
    ASSERT_EQ(0, vt__writer_start(w));
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    db = core_open_ro(zPath);
    ASSERT_EQ(16, core_q_int(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(nRefused, core_q_int(db, "SELECT sum(count) FROM dropped WHERE source = 1"));
    ASSERT_EQ(nRefused, meta_int(db, "dropped_queue"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM meta WHERE key='refused'"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

struct producer {
    struct vt_writer *w;
    uint32_t corr0;
    int n;
    int nRefused;
};

static void *produce(void *pArg)
{
    struct producer *p = pArg;
    int i;
    for (i = 0; i < p->n; i++) p->nRefused += core_submit_api(p->w, p->corr0 + (uint32_t)i) != 0;
    return NULL;
}

TEST(writer_ring_drops_concurrent)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct producer aProd[4];
    pthread_t aThread[4];
    sqlite3 *db;
    long long nRefused = 0;
    int i;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.host_ring_records = 64;
    w = core_open(zPath, &cfg);
    ASSERT_EQ(0, vt__writer_start(w));
    for (i = 0; i < 4; i++) {
        aProd[i].w = w;
        aProd[i].corr0 = 1 + (uint32_t)i * 100000;
        aProd[i].n = 20000;
        aProd[i].nRefused = 0;
        ASSERT_EQ(0, pthread_create(&aThread[i], NULL, produce, &aProd[i]));
    }
    for (i = 0; i < 4; i++) {
        pthread_join(aThread[i], NULL);
        nRefused += aProd[i].nRefused;
    }
    ASSERT_EQ(nRefused, vt__writer_dropped(w));
    ASSERT_EQ(0, vt__writer_close(w, 20000));
    db = core_open_ro(zPath);
    /* Every submit is either a row or a counted drop: exactly. */
    ASSERT_EQ(80000 - nRefused, core_q_int(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(nRefused, core_q_int(db, "SELECT coalesce(sum(count), 0) FROM dropped WHERE source = 1"));
    sqlite3_close(db);
    printf("       (%lld of 80000 host records refused at a 64-record ring)\n", nRefused);
    CORE_LEAK_CHECK();
}

TEST(writer_fork_abandon)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    sqlite3 *db;
    pid_t pid;
    int status = 0;
    uint32_t i;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    ASSERT_EQ(0, vt__writer_start(w));
    for (i = 1; i <= 500; i++) ASSERT_EQ(0, core_submit_api(w, i));
    submit_kernels(w, 1, 100);
    vt__writer_fork_prepare(w);
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        /* Child: forget the parent's writer and leave, as a worker process does. It must not
         * use SQLite here: the parent's writer thread may have held SQLite's global locks at
         * the fork. */
        vt__writer_abandon(w);
        _exit(0);
    }
    vt__writer_fork_parent(w);
    for (i = 501; i <= 1000; i++) ASSERT_EQ(0, core_submit_api(w, i));
    submit_kernels(w, 101, 100);
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(0, WEXITSTATUS(status));
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    db = core_open_ro(zPath);
    ASSERT_STREQ("ok", core_q_rows(db, "PRAGMA integrity_check"));
    ASSERT_EQ(1000, core_q_int(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(200, core_q_int(db, "SELECT count(*) FROM kernel"));
    ASSERT_EQ(1, meta_int(db, "closed_cleanly"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(writer_open_nonempty)
{
    char zPath[128], zErr[256] = "";
    struct vt_writer_config cfg;
    FILE *f;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    f = fopen(zPath, "w");
    ASSERT(f != NULL);
    fputs("someone else's data", f);
    fclose(f);
    core_config(&cfg);
    ASSERT(vt__writer_open(zPath, &cfg, zErr, sizeof zErr) == NULL);
    ASSERT_CONTAINS(zErr, "not empty");
    CORE_LEAK_CHECK();
}

/* Record iterator that takes g_msPerRecord to walk each record: a writer that cannot keep up. */
static unsigned g_msPerRecord;
static int slow_next_record(uint8_t *pBuf, size_t validSize, void **ppRecord)
{
    sleep_ms(g_msPerRecord);
    return core_next_record(pBuf, validSize, ppRecord);
}

/*
 * Record iterator whose first step does not end until the test opens the gate: a writer stuck
 * in one step it cannot be interrupted in (g_bInStep says it got there).
 */
static atomic_int g_bInStep, g_bGateOpen;
static int gated_next_record(uint8_t *pBuf, size_t validSize, void **ppRecord)
{
    atomic_store(&g_bInStep, 1);
    while (!atomic_load(&g_bGateOpen)) sleep_ms(5);
    return core_next_record(pBuf, validSize, ppRecord);
}

/*
 * Close runs out of time while the writer decodes: it stops decoding and closes what was
 * written (-EIO). Decoding the 400 records takes at least 400 x 25 ms = 10 s, so the first
 * 3/4 of close's 4 s surely pass; the last 1 s is for the writer to finish its record and
 * close the trace, which a loaded machine also does in time (close's 400 ms, 100 ms of them
 * to finish, did not). Close must return well before the decoding could have ended.
 */
TEST(writer_close_timeout_abort)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    sqlite3 *db;
    uint64_t t0, dt;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.xNextRecord = slow_next_record;
    g_msPerRecord = 25;
    w = core_open(zPath, &cfg);
    ASSERT_EQ(0, vt__writer_start(w));
    submit_kernels(w, 1, 200);
    submit_kernels(w, 201, 200);
    t0 = mono_ms();
    ASSERT_EQ(-EIO, vt__writer_close(w, 4000)); /* finished, but not everything was decoded */
    dt = mono_ms() - t0;
    ASSERT(dt < 400 * 25);
    db = core_open_ro(zPath);
    ASSERT_STREQ("ok", core_q_rows(db, "PRAGMA integrity_check"));
    ASSERT_EQ(0, meta_int(db, "closed_cleanly"));
    ASSERT(core_q_int(db, "SELECT count(*) FROM kernel") < 400);
    ASSERT_EQ(2, core_q_int(db, "SELECT sum(count) FROM dropped WHERE source = 1"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/*
 * The writer is stuck in one step (until the gate opens): close gives up at its timeout
 * (-ETIMEDOUT) and the host goes on; once the step ends, the writer finishes on its own,
 * closes the trace and frees itself.
 */
TEST(writer_close_timeout_orphan)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    sqlite3 *db;
    struct stat st;
    char zWal[160];
    uint64_t t0;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.xNextRecord = gated_next_record;
    w = core_open(zPath, &cfg);
    ASSERT_EQ(0, vt__writer_start(w));
    submit_kernels(w, 1, 3);
    t0 = mono_ms();
    while (!atomic_load(&g_bInStep) && mono_ms() - t0 < 60000) sleep_ms(5);
    ASSERT(atomic_load(&g_bInStep));
    ASSERT_EQ(-ETIMEDOUT, vt__writer_close(w, 300)); /* returned while the writer was still stuck */
    atomic_store(&g_bGateOpen, 1);
    /* Waited for (bounded), not timed: closing its connection, the writer's last step, removes the WAL. */
    snprintf(zWal, sizeof zWal, "%s-wal", zPath);
    t0 = mono_ms();
    while (stat(zWal, &st) == 0 && mono_ms() - t0 < 60000) sleep_ms(20);
    ASSERT(stat(zWal, &st) != 0);
    db = core_open_ro(zPath);
    sqlite3_busy_timeout(db, 60000); /* the writer may still hold its lock for a moment */
    ASSERT_STREQ("ok", core_q_rows(db, "PRAGMA integrity_check"));
    ASSERT_EQ(0, meta_int(db, "closed_cleanly"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/* The file cannot grow (RLIMIT_FSIZE, SIGXFSZ ignored here; tests/test_rel_fsize.c has it at its default
 * action): tracing goes off, every row is in or counted, one stderr line, the trace stays readable. */
TEST(writer_disk_full)
{
    char zPath[128], zLog[160], zText[4096];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct vt_writer_stats st;
    struct rlimit rl;
    sqlite3 *db;
    FILE *f;
    int fdLog, nLines = 0;
    uint32_t i, n = 200000;
    uint64_t t0;
    const char *z;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    snprintf(zLog, sizeof zLog, "%s.stderr", zPath);
    core_config(&cfg);
    cfg.host_ring_records = 200000; /* room for every record: no queue drops in the counts */
    cfg.max_memory = cfg.host_ring_records * sizeof(struct vt_hrec) + (8u << 20);
    cfg.corr_map_entries = 262144; /* no correlation-map evictions either: only api_call rows */
    cfg.batch_rows = 5000;
    w = core_open(zPath, &cfg);
    /* Every file this process writes stops growing at 1 MiB: the disk is "full". */
    signal(SIGXFSZ, SIG_IGN);
    rl.rlim_cur = rl.rlim_max = 1u << 20;
    ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &rl));
    fdLog = open(zLog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT(fdLog >= 0);
    ASSERT(dup2(fdLog, 2) == 2);
    for (i = 1; i <= n; i++) ASSERT_EQ(0, core_submit_api(w, i));
    ASSERT_EQ(0, vt__writer_start(w));
    t0 = mono_ms();
    do {
        sleep_ms(20);
        vt__writer_stats(w, &st);
    } while (st.rows_written + st.dropped_writer + st.dropped_off < n && mono_ms() - t0 < 120000); /* a bound, not a speed */
    ASSERT(st.tracing_off);
    ASSERT(st.dropped_writer + st.dropped_off > 0);
    ASSERT_EQ(n, st.rows_written + st.dropped_writer + st.dropped_off); /* every row is either in or counted */
    ASSERT(vt__writer_close(w, 10000) != 0);           /* not clean, but it returns */
    db = core_open_ro(zPath);
    ASSERT_STREQ("ok", core_q_rows(db, "PRAGMA integrity_check"));
    ASSERT_EQ(st.rows_written, core_q_int(db, "SELECT count(*) FROM api_call"));
    /* When the small closing transaction still fits, the loss is recorded in the trace too. */
    if (core_q_int(db, "SELECT count(*) FROM meta WHERE key = 'closed_cleanly'"))
        ASSERT_EQ(st.dropped_writer + st.dropped_off, core_q_int(db, "SELECT sum(count) FROM dropped WHERE source = 2"));
    sqlite3_close(db);
    /* One stderr line, not one per row or per failed statement. */
    f = fopen(zLog, "r");
    ASSERT(f != NULL);
    memset(zText, 0, sizeof zText);
    ASSERT(fread(zText, 1, sizeof zText - 1, f) > 0);
    fclose(f);
    for (z = zText; (z = strstr(z, "vramtrace: ")) != NULL; z++) nLines++;
    ASSERT_EQ(1, nLines);
    ASSERT_CONTAINS(zText, "tracing is off");
    printf("       %llu rows written, %llu + %llu counted as dropped, %d stderr line(s)\n",
           (unsigned long long)st.rows_written, (unsigned long long)st.dropped_writer,
           (unsigned long long)st.dropped_off, nLines);
    CORE_LEAK_CHECK();
}

VT_TEST_LIST(T(writer_batching) T(writer_batch_ids) T(writer_flush_at_close) T(writer_timed_commit) T(writer_buffer_bound)
                 T(writer_ring_drops_stalled) T(writer_ring_drops_concurrent) T(writer_fork_abandon)
                     T(writer_open_nonempty) T(writer_close_timeout_abort)
                         T(writer_close_timeout_orphan) T(writer_disk_full))
