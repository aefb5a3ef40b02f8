/* Tests of the trace's size bound and recording window (tracer/limit.c through the writer); their settings are in test_config.c. */
#include <string.h>

#include "config.h"
#include "core_util.h"
#include "vramtrace/schema.h"

/* Queue one device allocation (what live memory needs) number i at time ts. */
static void submit_alloc(struct vt_writer *w, uint32_t i, uint64_t ts)
{
    struct vt_hrec h;
    memset(&h, 0, sizeof h);
    h.type = VT_HREC_MEMORY;
    h.u.mem.ts = ts;
    h.u.mem.op = VT_MEMOP_ALLOC;
    h.u.mem.mem_kind = VT_MEMKIND_DEVICE;
    h.u.mem.address = 0x7e0000000000ull + (uint64_t)i * 65536;
    h.u.mem.bytes = 65536;
    h.u.mem.device = 0;
    h.u.mem.thread = 1;
    ASSERT_EQ(0, vt__writer_submit(w, &h));
}

/* A configuration with room for every record in the ring (no queue drops), small batches. */
static void limit_config(struct vt_writer_config *cfg, uint32_t nRecords)
{
    core_config(cfg);
    cfg->host_ring_records = nRecords + 16;
    cfg->max_memory = cfg->host_ring_records * sizeof(struct vt_hrec) + (8u << 20);
    cfg->corr_map_entries = 262144;
    cfg->batch_rows = 500;
}

static long long q(sqlite3 *db, const char *zSql)
{
    return core_q_int(db, zSql);
}

/*
 * Past 90 % of the bound, API calls stop and are counted; every allocation is still written.
 * batchRows: rows per commit as configured (0: the writer's default, as in the injection library).
 */
static void size_mark_keeps_memory(unsigned batchRows)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    sqlite3 *db;
    uint32_t i, nApi = 40000, nMem = 0;
    long long nApiRows;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    limit_config(&cfg, nApi + nApi / 40);
    cfg.batch_rows = batchRows;
    cfg.max_bytes = 1u << 20;
    w = core_open(zPath, &cfg);
    for (i = 1; i <= nApi; i++) {
        ASSERT_EQ(0, core_submit_api(w, i));
        if (i % 40 == 0) submit_alloc(w, ++nMem, 1000 + (uint64_t)i * 10);
    }
    ASSERT_EQ(0, vt__writer_start(w));
    ASSERT_EQ(0, vt__writer_close(w, 30000)); /* a bound reached by choice: still a clean close */
    db = core_open_ro(zPath);
    nApiRows = q(db, "SELECT count(*) FROM api_call");
    ASSERT(nApiRows > 1000 && nApiRows < (long long)nApi);
    ASSERT_EQ(nMem, q(db, "SELECT count(*) FROM memory_event"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM meta WHERE key = 'size_limit_thin_ns'"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key = 'size_limit_reached_ns'"));
    ASSERT_EQ((long long)nApi - nApiRows,
              q(db, "SELECT sum(count) FROM dropped WHERE source = 2 AND what LIKE 'rows not written near "
                    "VRAMTRACE_MAX_BYTES%'"));
    ASSERT_EQ(1, q(db, "SELECT value = '1' FROM meta WHERE key = 'closed_cleanly'"));
    ASSERT(q(db, "PRAGMA page_count") * q(db, "PRAGMA page_size") < (1 << 20));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(limit_size_mark_keeps_memory) { size_mark_keeps_memory(500); }

/* With the default batch of 50000 rows one commit carried 41000 rows from an empty file past the
 * bound: the mark was never acted on and tracing went off (the allocations after it lost). */
TEST(limit_size_mark_default_batch) { size_mark_keeps_memory(0); }

/* At the bound itself nothing more is written; every record not written is counted. */
TEST(limit_size_bound_reached)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    sqlite3 *db;
    uint32_t i, n = 30000;
    long long nRows;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    limit_config(&cfg, n);
    cfg.max_bytes = 256u << 10;
    w = core_open(zPath, &cfg);
    for (i = 1; i <= n; i++) submit_alloc(w, i, 1000 + (uint64_t)i * 10);
    ASSERT_EQ(0, vt__writer_start(w));
    ASSERT_EQ(0, vt__writer_close(w, 30000));
    db = core_open_ro(zPath);
    ASSERT_STREQ("ok", core_q_rows(db, "PRAGMA integrity_check"));
    nRows = q(db, "SELECT count(*) FROM memory_event");
    ASSERT(nRows > 0 && nRows < (long long)n);
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM meta WHERE key = 'size_limit_reached_ns'"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM meta WHERE key = 'size_limit_thin_ns'"));
    ASSERT_EQ((long long)n - nRows,
              q(db, "SELECT sum(count) FROM dropped WHERE what LIKE '%reached VRAMTRACE_MAX_BYTES (tracing off)'"));
    ASSERT_EQ(1, q(db, "SELECT value = '1' FROM meta WHERE key = 'closed_cleanly'"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/* Detail outside the window is skipped and counted in meta; allocations are written throughout. */
TEST(limit_window)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    sqlite3 *db;
    uint32_t i;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    limit_config(&cfg, 2000);
    cfg.time_base_ns = 1000;
    cfg.start_after_ns = 2000; /* API calls at 1000 + 10 corr: corr 200 .. 699 are inside */
    cfg.stop_after_ns = 7000;
    w = core_open(zPath, &cfg);
    for (i = 1; i <= 1000; i++) {
        ASSERT_EQ(0, core_submit_api(w, i));
        submit_alloc(w, i, 1000 + (uint64_t)i * 10);
    }
    ASSERT_EQ(0, vt__writer_start(w));
    ASSERT_EQ(0, vt__writer_close(w, 30000));
    db = core_open_ro(zPath);
    ASSERT_EQ(500, q(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(200, q(db, "SELECT min(correlation) FROM api_call"));
    ASSERT_EQ(699, q(db, "SELECT max(correlation) FROM api_call"));
    ASSERT_EQ(1000, q(db, "SELECT count(*) FROM memory_event"));
    ASSERT_EQ(500, q(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'window_rows_skipped'"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM dropped")); /* skipped by choice, not lost */
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

VT_TEST_LIST(T(limit_size_mark_keeps_memory) T(limit_size_mark_default_batch) T(limit_size_bound_reached) T(limit_window))
