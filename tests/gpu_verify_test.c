/* Tests of the GPU samples' known-answer checks on hand-made traces shaped like real runs (no GPU needed). */
#include <sqlite3.h>
#include <stdarg.h>

#include "gpu_verify.h"
#include "schema.h"
#include "vt_test.h"

#define MIB (1024LL * 1024LL)
#define PID 4242
#define FILL_NAME 1  /* string id of the samples' kernel */
#define OTHER_NAME 2 /* string id of a kernel the sample did not launch */

/* A trace under construction: the database and a CUPTI-like clock and correlation counter. */
struct fake {
    sqlite3 *db;
    long long ts;
    long long corr;
};

/* Run one SQL statement built with sqlite3_mprintf; the test fails on any error. */
static void sql(sqlite3 *db, const char *zFmt, ...)
{
    char *zErr = NULL, *zSql;
    va_list ap;
    int rc;
    va_start(ap, zFmt);
    zSql = sqlite3_vmprintf(zFmt, ap);
    va_end(ap);
    ASSERT(zSql != NULL);
    rc = sqlite3_exec(db, zSql, NULL, NULL, &zErr);
    if (rc != SQLITE_OK) fprintf(stderr, "  SQL error: %s\n  in: %s\n", zErr, zSql);
    ASSERT_EQ(SQLITE_OK, rc);
    sqlite3_free(zSql);
}

/* Advance the fake clock by 1 us and return the new time. */
static long long tick(struct fake *f)
{
    f->ts += 1000;
    return f->ts;
}

/*
 * An in-memory trace with what the tracer writes for every process: meta,
 * device 0, the kernel name strings, and a runtime allocation of the CUDA
 * runtime's own (2 MiB, never freed) that the checks must tolerate.
 */
static void fake_open(struct fake *f)
{
    char *zErr = NULL;
    f->ts = 1700000000000000000LL;
    f->corr = 0;
    ASSERT_EQ(SQLITE_OK, sqlite3_open(":memory:", &f->db));
    ASSERT_EQ(SQLITE_OK, vt__schema_create(f->db, &zErr));
    sql(f->db, "INSERT INTO meta VALUES('pid','%d'),('ppid','1'),('tracer_version','0.1.0'),"
               "('clock_anchor_cupti_ns','%lld'),('clock_anchor_wall_ns','1763750000000000000'),"
               "('start_ns','%lld'),('closed_cleanly','1')",
        PID, f->ts, f->ts);
    sql(f->db, "INSERT INTO device(id, name, uuid, total_bytes, cc_major, cc_minor, sm_count) "
               "VALUES(0, 'NVIDIA H100 80GB HBM3', 'GPU-0000', 85029158912, 9, 0, 132)");
    sql(f->db, "INSERT INTO string VALUES(%d, '_Z14vt_sample_fillPfmf'), (%d, '_Z5otherv')",
        FILL_NAME, OTHER_NAME);
    sql(f->db, "INSERT INTO memory_event(ts, op, mem_kind, address, bytes, device, correlation) "
               "VALUES(%lld, 1, 3, 140000000000000, %lld, 0, 0)",
        tick(f), 2 * MIB);
    sql(f->db, "INSERT INTO kernel(start, end, device, correlation, name_id) VALUES(%lld, %lld, 0, "
               "0, %d)",
        tick(f), tick(f), OTHER_NAME);
}

/* One synchronous allocation or free (MEMORY2 record) with its api_call row. */
static void fake_mem(struct fake *f, int op, int kind, long long address, long long bytes)
{
    long long ts = tick(f), corr = ++f->corr;
    int api = kind == VT_MEMKIND_PINNED ? (op == VT_MEMOP_ALLOC ? 6 : 8)
              : kind == VT_MEMKIND_MANAGED ? (op == VT_MEMOP_ALLOC ? 9 : 2)
                                           : (op == VT_MEMOP_ALLOC ? 1 : 2);
    sql(f->db, "INSERT INTO memory_event(ts, op, mem_kind, address, bytes, device, correlation, api) "
               "VALUES(%lld, %d, %d, %lld, %lld, 0, %lld, %d)",
        ts, op, kind, address, bytes, corr, api);
    sql(f->db, "INSERT INTO api_call(api, correlation, start, end, device, bytes, ptr) "
               "VALUES(%d, %lld, %lld, %lld, 0, %lld, %lld)",
        api, corr, ts - 500, ts + 500, bytes, address);
}

/* One stream-ordered pool allocation or free on stream 13 of the pool at poolAddr. */
static void fake_async(struct fake *f, int op, long long address, long long bytes,
                       long long poolAddr, long long threshold)
{
    sql(f->db, "INSERT INTO memory_event(ts, op, mem_kind, address, bytes, device, stream, "
               "correlation, api, is_async, pool_type, pool_address, pool_threshold) "
               "VALUES(%lld, %d, 3, %lld, %lld, 0, 13, %lld, %d, 1, 1, %lld, %lld)",
        tick(f), op, address, bytes, ++f->corr, op == VT_MEMOP_ALLOC ? 3 : 4, poolAddr, threshold);
}

/* One vt_sample_fill launch, executing right away. */
static void fake_fill(struct fake *f)
{
    long long start = tick(f);
    sql(f->db, "INSERT INTO kernel(start, end, device, stream, correlation, name_id, grid_x, "
               "block_x) VALUES(%lld, %lld, 0, 7, %lld, %d, 256, 256)",
        start, tick(f), ++f->corr, FILL_NAME);
}

/* One cudaMemcpy of bytes from src to dst, with its memcpy activity row. */
static void fake_copy(struct fake *f, int copyKind, int srcKind, int dstKind, long long src,
                      long long dst, long long bytes)
{
    long long start = tick(f), corr = ++f->corr, end = tick(f);
    sql(f->db, "INSERT INTO api_call(api, correlation, start, end, device, bytes, src, dst) "
               "VALUES(60, %lld, %lld, %lld, 0, %lld, %lld, %lld)",
        corr, start - 100, end + 100, bytes, src, dst);
    sql(f->db, "INSERT INTO memcpy(start, end, device, stream, correlation, copy_kind, src_kind, "
               "dst_kind, bytes, src, dst) VALUES(%lld, %lld, 0, 7, %lld, %d, %d, %d, %lld, %lld, "
               "%lld)",
        start, end, corr, copyKind, srcKind, dstKind, bytes, src, dst);
}

/* Run the checks of zSample; returns the failure count and the report in *pzOut (free it). */
static int verify(struct fake *f, const char *zSample, const struct vt_gpu_facts *pFacts,
                  char **pzOut)
{
    size_t n = 0;
    FILE *pOut = open_memstream(pzOut, &n);
    int nFail;
    ASSERT(pOut != NULL);
    nFail = vt__gpu_verify(f->db, zSample, PID, pFacts, pOut);
    fclose(pOut);
    return nFail;
}

/* Expect the checks of zSample to pass; print the report if they do not. */
static void expect_pass(struct fake *f, const char *zSample, const struct vt_gpu_facts *pFacts)
{
    char *zOut = NULL;
    int nFail = verify(f, zSample, pFacts, &zOut);
    if (nFail != 0) fprintf(stderr, "%s", zOut);
    ASSERT_EQ(0, nFail);
    ASSERT_CONTAINS(zOut, "ok    records dropped: 0");
    free(zOut);
}

/* Expect exactly nExpected failed checks, one of them containing zLine. */
static void expect_fail(struct fake *f, const char *zSample, const struct vt_gpu_facts *pFacts,
                        int nExpected, const char *zLine)
{
    char *zOut = NULL;
    int nFail = verify(f, zSample, pFacts, &zOut);
    if (nFail != nExpected) fprintf(stderr, "%s", zOut);
    ASSERT_EQ(nExpected, nFail);
    ASSERT_CONTAINS(zOut, zLine);
    ASSERT_CONTAINS(zOut, "what the trace holds:");
    free(zOut);
}

/* Parse the facts a sample would print. */
static void facts_from(struct vt_gpu_facts *pFacts, const char *zStdout)
{
    ASSERT(vt__gpu_facts_parse(zStdout, pFacts) > 0);
}

/* leak: a real run's events. */
static void build_leak(struct fake *f)
{
    int i;
    for (i = 0; i < 8; i++) {
        fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, 0x7f0000000000LL + i * 0x1000000LL,
                 3 * MIB + 4096 * i);
        fake_fill(f);
    }
    for (i = 0; i < 4; i++) {
        long long address = 0x7f1000000000LL + i * 0x1000000LL;
        fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, address, 5 * MIB + 4096 * i);
        fake_fill(f);
        fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, address, 5 * MIB + 4096 * i);
    }
}

TEST(leak_known_answer)
{
    struct fake f;
    fake_open(&f);
    build_leak(&f);
    expect_pass(&f, "leak", NULL);
    sqlite3_close(f.db);
}

TEST(leak_freed_leaked_buffer_fails)
{
    struct fake f;
    fake_open(&f);
    build_leak(&f);
    fake_mem(&f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, 0x7f0000000000LL + 0x3000000LL, 3 * MIB + 4096 * 3);
    expect_fail(&f, "leak", NULL, 1, "FAIL  frees of leaked buffers: expected 0, found 1");
    sqlite3_close(f.db);
}

TEST(leak_wrong_kind_and_missing_launch_fail)
{
    struct fake f;
    fake_open(&f);
    build_leak(&f);
    sql(f.db, "UPDATE memory_event SET mem_kind = 5 WHERE bytes = %lld", 3 * MIB);
    sql(f.db, "DELETE FROM kernel WHERE id = (SELECT max(id) FROM kernel)");
    expect_fail(&f, "leak", NULL, 3, "FAIL  vt_sample_fill launches: expected 12, found 11");
    sqlite3_close(f.db);
}

#define COPY_BYTES (24 * MIB + 12288)
#define PAGEABLE 0x5600a0000000LL
#define PINNED 0x7f5000000000LL
#define DEVICE 0x7f2000000000LL
static const char zCopiesStdout[] =
    "vt-fact: pageable=0x5600a0000000\nvt-fact: pinned=0x7f5000000000\n"
    "vt-fact: device=0x7f2000000000\n"
    "bandwidth GB/s: pageable HtoD 11.20, DtoH 9.87; pinned HtoD 24.10, DtoH 25.30\n";

/* copies: a real run's events. */
static void build_copies(struct fake *f)
{
    int i;
    fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_PINNED, PINNED, COPY_BYTES);
    fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, DEVICE, COPY_BYTES);
    for (i = 0; i < 5; i++)
        fake_copy(f, VT_COPY_HTOD, VT_MEMKIND_PAGEABLE, VT_MEMKIND_DEVICE, PAGEABLE, DEVICE, COPY_BYTES);
    for (i = 0; i < 5; i++)
        fake_copy(f, VT_COPY_DTOH, VT_MEMKIND_DEVICE, VT_MEMKIND_PAGEABLE, DEVICE, PAGEABLE, COPY_BYTES);
    for (i = 0; i < 5; i++)
        fake_copy(f, VT_COPY_HTOD, VT_MEMKIND_PINNED, VT_MEMKIND_DEVICE, PINNED, DEVICE, COPY_BYTES);
    for (i = 0; i < 5; i++)
        fake_copy(f, VT_COPY_DTOH, VT_MEMKIND_DEVICE, VT_MEMKIND_PINNED, DEVICE, PINNED, COPY_BYTES);
    fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, DEVICE, COPY_BYTES);
    fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_PINNED, PINNED, COPY_BYTES);
}

TEST(copies_known_answer)
{
    struct fake f;
    struct vt_gpu_facts facts;
    facts_from(&facts, zCopiesStdout);
    fake_open(&f);
    build_copies(&f);
    expect_pass(&f, "copies", &facts);
    sqlite3_close(f.db);
}

TEST(copies_pinned_seen_as_pageable_fails)
{
    struct fake f;
    struct vt_gpu_facts facts;
    facts_from(&facts, zCopiesStdout);
    fake_open(&f);
    build_copies(&f);
    sql(f.db, "UPDATE memcpy SET src_kind = 1 WHERE id = (SELECT min(id) FROM memcpy WHERE "
              "src_kind = 2)");
    expect_fail(&f, "copies", &facts, 1, "FAIL  HtoD pinned -> device (addresses match): expected 5, found 4");
    sqlite3_close(f.db);
}

TEST(copies_without_addresses_fails)
{
    struct fake f;
    struct vt_gpu_facts facts;
    facts_from(&facts, zCopiesStdout);
    fake_open(&f);
    build_copies(&f);
    sql(f.db, "UPDATE memcpy SET src = NULL, dst = NULL");
    expect_fail(&f, "copies", &facts, 4, "FAIL  DtoH device -> pageable (addresses match): expected 5, found 0");
    sqlite3_close(f.db);
}

TEST(copies_missing_fact_fails)
{
    struct fake f;
    struct vt_gpu_facts facts;
    facts_from(&facts, "vt-fact: pageable=0x5600a0000000\nvt-fact: device=0x7f2000000000\n");
    fake_open(&f);
    build_copies(&f);
    expect_fail(&f, "copies", &facts, 1, "the sample printed no usable \"vt-fact: pinned=\" line");
    sqlite3_close(f.db);
}

#define OOM_TOTAL 85029158912LL
static const char zOomStdout[] = "vt-fact: total=85029158912\nvt-fact: request=86102900736\n";

/* oom: a real run's events: the failed call, the OOM row, then 4 allocations that work. */
static void build_oom(struct fake *f)
{
    long long ts = tick(f), request = OOM_TOTAL + 1024 * MIB;
    int i;
    sql(f->db, "INSERT INTO api_call(api, correlation, start, end, device, status, bytes, ptr) "
               "VALUES(1, %lld, %lld, %lld, 0, 2, %lld, 0)",
        ++f->corr, ts, ts + 800, request);
    sql(f->db, "INSERT INTO oom_event(ts, api, correlation, device, bytes, status, free_bytes, "
               "total_bytes) VALUES(%lld, 1, %lld, 0, %lld, 2, 84456357888, %lld)",
        ts + 800, f->corr, request, OOM_TOTAL);
    for (i = 0; i < 4; i++) {
        long long address = 0x7f3000000000LL + i * 0x1000000LL;
        fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, address, 7 * MIB + 4096 * i);
        fake_fill(f);
        fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, address, 7 * MIB + 4096 * i);
    }
}

TEST(oom_known_answer)
{
    struct fake f;
    struct vt_gpu_facts facts;
    facts_from(&facts, zOomStdout);
    fake_open(&f);
    build_oom(&f);
    expect_pass(&f, "oom", &facts);
    sqlite3_close(f.db);
}

TEST(oom_recorded_twice_fails)
{
    struct fake f;
    struct vt_gpu_facts facts;
    facts_from(&facts, zOomStdout);
    fake_open(&f);
    build_oom(&f);
    /* The driver call under cudaMalloc must not add a second OOM row. */
    sql(f.db, "INSERT INTO oom_event(ts, api, correlation, device, bytes, status, free_bytes, "
              "total_bytes) SELECT ts, 20, correlation, device, bytes, status, free_bytes, "
              "total_bytes FROM oom_event");
    expect_fail(&f, "oom", &facts, 1, "FAIL  oom_event rows: expected 1, found 2");
    sqlite3_close(f.db);
}

TEST(oom_without_memory_info_fails)
{
    struct fake f;
    struct vt_gpu_facts facts;
    facts_from(&facts, zOomStdout);
    fake_open(&f);
    build_oom(&f);
    sql(f.db, "UPDATE oom_event SET free_bytes = NULL, total_bytes = NULL");
    expect_fail(&f, "oom", &facts, 1, "FAIL  that oom_event: 0 < free_bytes <= total_bytes = device total");
    sqlite3_close(f.db);
}

#define POOL_DEFAULT 0x7f4000000000LL
#define POOL_EXPLICIT 0x7f6000000000LL

/* pool: a real run's events, the default pool's CREATED row included. */
static void build_pool(struct fake *f)
{
    int i;
    sql(f->db, "INSERT INTO pool_event(ts, op, device, pool_type, address, threshold, size) "
               "VALUES(%lld, 1, 0, 1, %lld, 0, 0)",
        tick(f), POOL_DEFAULT);
    for (i = 0; i < 6; i++) {
        fake_async(f, VT_MEMOP_ALLOC, POOL_DEFAULT + i * 0x1000000LL, 9 * MIB + 4096 * i,
                   POOL_DEFAULT, 0);
        fake_fill(f);
    }
    for (i = 0; i < 6; i++)
        fake_async(f, VT_MEMOP_FREE, POOL_DEFAULT + i * 0x1000000LL, 9 * MIB + 4096 * i,
                   POOL_DEFAULT, 0);
    sql(f->db, "INSERT INTO pool_event(ts, op, device, pool_type, address, threshold, size) "
               "VALUES(%lld, 1, 0, 1, %lld, 0, 0)",
        tick(f), POOL_EXPLICIT);
    for (i = 0; i < 4; i++) {
        fake_async(f, VT_MEMOP_ALLOC, POOL_EXPLICIT + i * 0x1000000LL, 11 * MIB + 4096 * i,
                   POOL_EXPLICIT, 64 * MIB);
        fake_fill(f);
    }
    for (i = 0; i < 4; i++)
        fake_async(f, VT_MEMOP_FREE, POOL_EXPLICIT + i * 0x1000000LL, 11 * MIB + 4096 * i,
                   POOL_EXPLICIT, 64 * MIB);
    sql(f->db, "INSERT INTO pool_event(ts, op, device, pool_type, address, threshold) "
               "VALUES(%lld, 3, 0, 1, %lld, 67108864), (%lld, 2, 0, 1, %lld, 67108864)",
        tick(f), POOL_EXPLICIT, tick(f), POOL_EXPLICIT);
}

TEST(pool_known_answer)
{
    struct fake f;
    fake_open(&f);
    build_pool(&f);
    expect_pass(&f, "pool", NULL);
    sqlite3_close(f.db);
}

TEST(pool_not_async_and_no_threshold_fail)
{
    struct fake f;
    fake_open(&f);
    build_pool(&f);
    sql(f.db, "UPDATE memory_event SET is_async = 0 WHERE op = 1 AND bytes = %lld", 9 * MIB);
    sql(f.db, "UPDATE memory_event SET pool_threshold = NULL WHERE bytes = %lld", 11 * MIB);
    expect_fail(&f, "pool", NULL, 3, "FAIL  explicit pool allocations carry the 64 MiB release threshold: expected 4, found 3");
    sqlite3_close(f.db);
}

TEST(pool_without_created_event_fails)
{
    struct fake f;
    fake_open(&f);
    build_pool(&f);
    sql(f.db, "DELETE FROM pool_event WHERE op = 1 AND address = %lld", POOL_EXPLICIT);
    expect_fail(&f, "pool", NULL, 1, "FAIL  pool_event CREATED for the explicit pool: expected 1, found 0");
    sqlite3_close(f.db);
}

/* Intern zValue as a new string row and return its id. */
static long long fake_string(struct fake *f, const char *zValue)
{
    sql(f->db, "INSERT INTO string(value) VALUES(%Q)", zValue);
    return sqlite3_last_insert_rowid(f->db);
}

/* One closed push/pop NVTX range on thread 777. */
static void fake_range(struct fake *f, const char *zName, long long start, long long end, int depth)
{
    sql(f->db, "INSERT INTO nvtx_range(start, end, kind, name_id, thread, depth) VALUES(%lld, "
               "%lld, 0, %lld, 777, %d)",
        start, end, fake_string(f, zName), depth);
}

/*
 * phases: a real run's events. bKeepOutputs = 0 builds the fixed program
 * instead (each batch frees its output), whose validation peak is lower.
 */
static void build_phases(struct fake *f, int bKeepOutputs)
{
    long long weights = 0x7f7000000000LL, act = 0x7f8000000000LL, out = 0x7f9000000000LL;
    long long trainStart, valStart;
    char zName[32];
    int it, j, b;

    fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, weights, 17 * MIB);
    fake_fill(f);
    trainStart = tick(f);
    for (it = 0; it < 5; it++) {
        long long start = tick(f);
        for (j = 0; j < 3; j++) {
            fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, act + j * 0x1000000LL, 8 * MIB + 4096 * j);
            fake_fill(f);
        }
        for (j = 0; j < 3; j++)
            fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, act + j * 0x1000000LL, 8 * MIB + 4096 * j);
        snprintf(zName, sizeof zName, "iter %d", it);
        fake_range(f, zName, start, tick(f), 1);
    }
    fake_range(f, "train", trainStart, tick(f), 0);
    valStart = tick(f);
    for (b = 0; b < 6; b++) {
        long long start = tick(f);
        fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, out + b * 0x1000000LL, 10 * MIB + 4096 * b);
        fake_fill(f);
        if (!bKeepOutputs)
            fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, out + b * 0x1000000LL, 10 * MIB + 4096 * b);
        snprintf(zName, sizeof zName, "batch %d", b);
        fake_range(f, zName, start, tick(f), 1);
    }
    fake_range(f, "validation", valStart, tick(f), 0);
    for (b = 0; b < 6 && bKeepOutputs; b++)
        fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, out + b * 0x1000000LL, 10 * MIB + 4096 * b);
    fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, weights, 17 * MIB);
}

TEST(phases_known_answer)
{
    struct fake f;
    fake_open(&f);
    build_phases(&f, 1);
    expect_pass(&f, "phases", NULL);
    sqlite3_close(f.db);
}

TEST(phases_without_spike_fails)
{
    struct fake f;
    fake_open(&f);
    build_phases(&f, 0);
    /* Peak during validation: weights + the largest output = 17 MiB + 10 MiB + 20480. */
    expect_fail(&f, "phases", NULL, 3, "FAIL  validation peak exceeds training peak: expected more than 43003904, found 28332032");
    sqlite3_close(f.db);
}

TEST(phases_flat_nesting_fails)
{
    struct fake f;
    fake_open(&f);
    build_phases(&f, 1);
    sql(f.db, "UPDATE nvtx_range SET depth = 0");
    expect_fail(&f, "phases", NULL, 1, "FAIL  depth 1: every iter and batch: expected 11, found 0");
    sqlite3_close(f.db);
}

/* managed: a real run's events. */
static void build_managed(struct fake *f)
{
    int i;
    for (i = 0; i < 3; i++) {
        fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_MANAGED, 0x7fa000000000LL + i * 0x1000000LL,
                 13 * MIB + 4096 * i);
        fake_fill(f);
    }
    for (i = 0; i < 3; i++)
        fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_MANAGED, 0x7fa000000000LL + i * 0x1000000LL,
                 13 * MIB + 4096 * i);
}

TEST(managed_known_answer)
{
    struct fake f;
    fake_open(&f);
    build_managed(&f);
    expect_pass(&f, "managed", NULL);
    sqlite3_close(f.db);
}

TEST(managed_seen_as_device_fails)
{
    struct fake f;
    fake_open(&f);
    build_managed(&f);
    sql(f.db, "UPDATE memory_event SET mem_kind = 3 WHERE bytes = %lld", 13 * MIB + 4096);
    expect_fail(&f, "managed", NULL, 3, "FAIL  allocations of those sizes of any other kind: expected 0, found 2");
    sqlite3_close(f.db);
}

#define GRAN (2 * MIB)
#define VA 0x7fb000000000LL
static const char zVmmStdout[] = "vt-fact: granularity=2097152\nvt-fact: va=0x7fb000000000\n"
                                 "vt-fact: handle_first=0x10\nvt-fact: handle_second=0x20\n";

/* One VMM memory_event from the API callback (handle 0: none), with its api_call row. */
static void fake_vmm(struct fake *f, int op, int api, long long address, long long bytes,
                     long long handle)
{
    long long ts = tick(f), corr = ++f->corr;
    sql(f->db, "INSERT INTO memory_event(ts, op, mem_kind, address, bytes, device, correlation, "
               "api, pool_address) VALUES(%lld, %d, 3, %lld, %lld, 0, %lld, %d, NULLIF(%lld, 0))",
        ts, op, address, bytes, corr, api, handle);
    sql(f->db, "INSERT INTO api_call(api, correlation, start, end, device, bytes, ptr) "
               "VALUES(%d, %lld, %lld, %lld, 0, %lld, %lld)",
        api, corr, ts - 100, ts + 100, bytes, address);
}

/* vmm: a real run's events. */
static void build_vmm(struct fake *f)
{
    long long ts;
    fake_vmm(f, VT_MEMOP_VMM_CREATE, 40, 0x10, 3 * GRAN, 0);
    fake_vmm(f, VT_MEMOP_VMM_CREATE, 40, 0x20, 5 * GRAN, 0);
    ts = tick(f);
    sql(f->db, "INSERT INTO api_call(api, correlation, start, end, device, bytes, ptr) "
               "VALUES(44, %lld, %lld, %lld, 0, %lld, %lld)",
        ++f->corr, ts, ts + 100, 8 * GRAN, VA);
    fake_vmm(f, VT_MEMOP_VMM_MAP, 42, VA, 3 * GRAN, 0x10);
    fake_vmm(f, VT_MEMOP_VMM_MAP, 42, VA + 3 * GRAN, 5 * GRAN, 0x20);
    fake_fill(f);
    fake_vmm(f, VT_MEMOP_VMM_UNMAP, 43, VA, 3 * GRAN, 0);
    fake_vmm(f, VT_MEMOP_VMM_UNMAP, 43, VA + 3 * GRAN, 5 * GRAN, 0);
    fake_vmm(f, VT_MEMOP_VMM_RELEASE, 41, 0x10, 3 * GRAN, 0);
    fake_vmm(f, VT_MEMOP_VMM_RELEASE, 41, 0x20, 5 * GRAN, 0);
    ts = tick(f);
    sql(f->db, "INSERT INTO api_call(api, correlation, start, end, device, bytes, ptr) "
               "VALUES(45, %lld, %lld, %lld, 0, %lld, %lld)",
        ++f->corr, ts, ts + 100, 8 * GRAN, VA);
}

TEST(vmm_known_answer)
{
    struct fake f;
    struct vt_gpu_facts facts;
    facts_from(&facts, zVmmStdout);
    fake_open(&f);
    build_vmm(&f);
    expect_pass(&f, "vmm", &facts);
    sqlite3_close(f.db);
}

TEST(vmm_missing_unmap_fails)
{
    struct fake f;
    struct vt_gpu_facts facts;
    facts_from(&facts, zVmmStdout);
    fake_open(&f);
    build_vmm(&f);
    sql(f.db, "DELETE FROM memory_event WHERE op = 6 AND address = %lld", VA + 3 * GRAN);
    expect_fail(&f, "vmm", &facts, 3, "FAIL  vmm_unmap right after it (5 G bytes): expected 1, found 0");
    sqlite3_close(f.db);
}

TEST(common_meta_device_dropped)
{
    struct fake f;
    fake_open(&f);
    build_leak(&f);
    sql(f.db, "INSERT INTO dropped(ts, source, what, count) VALUES(1, 0, 'cupti', 3)");
    sql(f.db, "UPDATE meta SET value = '99' WHERE key = 'pid'");
    sql(f.db, "DELETE FROM meta WHERE key IN ('closed_cleanly', 'clock_anchor_wall_ns')");
    sql(f.db, "UPDATE device SET name = ''");
    expect_fail(&f, "leak", NULL, 5, "FAIL  records dropped: expected 0, found 3");
    sqlite3_close(f.db);
}

TEST(facts_parse)
{
    struct vt_gpu_facts facts;
    unsigned long long v = 0;
    ASSERT_EQ(3, vt__gpu_facts_parse("hello\nvt-fact: a=12\nvt-fact: bb=0x1f\nx vt-fact: no=1\n"
                                     "vt-fact: last=18446744073709551615",
                                     &facts));
    ASSERT_EQ(0, vt__gpu_fact(&facts, "a", &v));
    ASSERT_EQ(12, v);
    ASSERT_EQ(0, vt__gpu_fact(&facts, "bb", &v));
    ASSERT_EQ(31, v);
    ASSERT_EQ(0, vt__gpu_fact(&facts, "last", &v));
    ASSERT(v == 18446744073709551615ULL);
    ASSERT_EQ(-1, vt__gpu_fact(&facts, "no", &v));
    ASSERT_EQ(-1, vt__gpu_facts_parse("vt-fact: a=12z\n", &facts));
    ASSERT_EQ(-1, vt__gpu_facts_parse("vt-fact: =12\n", &facts));
    ASSERT_EQ(-1, vt__gpu_facts_parse("vt-fact: novalue\n", &facts));
    ASSERT_EQ(0, vt__gpu_facts_parse("", &facts));
}

TEST(unknown_sample)
{
    struct fake f;
    fake_open(&f);
    ASSERT_EQ(0, vt__gpu_sample_known("resnet"));
    ASSERT_EQ(1, vt__gpu_sample_known("vmm"));
    ASSERT_EQ(-1, vt__gpu_verify(f.db, "resnet", PID, NULL, stderr));
    sqlite3_close(f.db);
}

VT_TEST_LIST(T(leak_known_answer) T(leak_freed_leaked_buffer_fails)
             T(leak_wrong_kind_and_missing_launch_fail) T(copies_known_answer)
             T(copies_pinned_seen_as_pageable_fails) T(copies_without_addresses_fails)
             T(copies_missing_fact_fails) T(oom_known_answer) T(oom_recorded_twice_fails)
             T(oom_without_memory_info_fails) T(pool_known_answer)
             T(pool_not_async_and_no_threshold_fail) T(pool_without_created_event_fails)
             T(phases_known_answer) T(phases_without_spike_fails) T(phases_flat_nesting_fails)
             T(managed_known_answer) T(managed_seen_as_device_fails) T(vmm_known_answer)
             T(vmm_missing_unmap_fails) T(common_meta_device_dropped) T(facts_parse)
             T(unknown_sample))
