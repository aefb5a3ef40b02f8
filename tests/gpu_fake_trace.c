/* Test fixture: traces shaped like real runs of each CUDA sample, built with plain SQL. */
#include "gpu_fake_trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vramtrace/schema.h"

#define MIB (1024LL * 1024LL)
#define FILL_NAME 1  /* string id of the samples' kernel */
#define OTHER_NAME 2 /* string id of a kernel the sample did not launch */

void vt__fake_sql(sqlite3 *db, const char *zFmt, ...)
{
    char *zErr = NULL, *zSql;
    va_list ap;
    int rc;
    va_start(ap, zFmt);
    zSql = sqlite3_vmprintf(zFmt, ap);
    va_end(ap);
    rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, &zErr) : SQLITE_NOMEM;
    if (rc != SQLITE_OK) {
        fprintf(stderr, "  fixture SQL error: %s\n  in: %s\n", zErr ? zErr : sqlite3_errstr(rc),
                zSql ? zSql : "(out of memory)");
        _exit(1);
    }
    sqlite3_free(zSql);
}

/* Advance the fake clock by 1 us and return the new time. */
static long long tick(struct vt_fake *f)
{
    f->ts += 1000;
    return f->ts;
}

void vt__fake_open(struct vt_fake *f, sqlite3 *db, long long pid)
{
    char *zErr = NULL;
    f->db = db;
    f->ts = 1700000000000000000LL;
    f->corr = 0;
    if (vt__schema_create(db, &zErr) != SQLITE_OK) {
        fprintf(stderr, "  fixture: cannot create the schema: %s\n", zErr ? zErr : "?");
        _exit(1);
    }
    vt__fake_sql(f->db,
                 "INSERT INTO meta VALUES('pid','%lld'),('ppid','1'),('tracer_version','0.1.0'),"
                 "('clock_anchor_cupti_ns','%lld'),('clock_anchor_wall_ns','1763750000000000000'),"
                 "('start_ns','%lld'),('closed_cleanly','1'),('cupti_version','130001'),"
                 "('cupti_library','/usr/local/cuda/lib64/libcupti.so.13'),"
                 "('cupti_layout_table','1: CUPTI 13.0 to 13.4 Update 1'),('cupti_layout','13.0')",
                 pid, f->ts, f->ts);
    vt__fake_sql(f->db,
                 "INSERT INTO device(id, name, uuid, total_bytes, cc_major, cc_minor, sm_count) "
                 "VALUES(0, 'NVIDIA H100 80GB HBM3', 'GPU-0000', 85029158912, 9, 0, 132)");
    vt__fake_sql(f->db,
                 "INSERT INTO string VALUES(%d, '_Z14vt_sample_fillPfmf'), (%d, '_Z5otherv')",
                 FILL_NAME, OTHER_NAME);
    vt__fake_sql(f->db,
                 "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, correlation) "
                 "VALUES(%lld, 1, 3, 140000000000000, %lld, 0, 0)",
                 tick(f), 2 * MIB);
    {
        long long start = tick(f), end = tick(f);
        vt__fake_sql(f->db,
                     "INSERT INTO kernel(t, dur, device, correlation, name_id) VALUES(%lld, %lld, 0, "
                     "0, %d)",
                     start, end - start, OTHER_NAME);
    }
}

void vt__fake_mem(struct vt_fake *f, int op, int kind, long long address, long long bytes)
{
    long long ts = tick(f), corr = ++f->corr;
    int api = kind == VT_MEMKIND_PINNED    ? (op == VT_MEMOP_ALLOC ? 6 : 8)
              : kind == VT_MEMKIND_MANAGED ? (op == VT_MEMOP_ALLOC ? 9 : 2)
                                           : (op == VT_MEMOP_ALLOC ? 1 : 2);
    vt__fake_sql(
        f->db,
        "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, correlation, api) "
        "VALUES(%lld, %d, %d, %lld, %lld, 0, %lld, %d)",
        ts, op, kind, address, bytes, corr, api);
    vt__fake_sql(f->db,
                 "INSERT INTO api_call(api, correlation, t, dur, device, bytes, ptr) "
                 "VALUES(%d, %lld, %lld, 1000, 0, %lld, %lld)",
                 api, corr, ts - 500, bytes, address);
}

/* One stream-ordered pool allocation or free on stream 13 of the pool at poolAddr. */
static void fake_async(struct vt_fake *f, int op, long long address, long long bytes,
                       long long poolAddr, long long threshold)
{
    vt__fake_sql(f->db,
                 "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, stream, "
                 "correlation, api, is_async, pool_type, pool_address, pool_threshold) "
                 "VALUES(%lld, %d, 3, %lld, %lld, 0, 13, %lld, %d, 1, 1, %lld, %lld)",
                 tick(f), op, address, bytes, ++f->corr, op == VT_MEMOP_ALLOC ? 3 : 4, poolAddr,
                 threshold);
}

/* One vt_sample_fill launch, executing right away. */
static void fake_fill(struct vt_fake *f)
{
    long long start = tick(f);
    vt__fake_sql(f->db,
                 "INSERT INTO kernel(t, dur, device, stream, correlation, name_id, grid_x, "
                 "block_x) VALUES(%lld, %lld, 0, 7, %lld, %d, 256, 256)",
                 start, tick(f) - start, ++f->corr, FILL_NAME);
}

/* One cudaMemcpy of bytes from src to dst, with its memcpy activity row. */
static void fake_copy(struct vt_fake *f, int copyKind, int srcKind, int dstKind, long long src,
                      long long dst, long long bytes)
{
    long long start = tick(f), corr = ++f->corr, end = tick(f);
    vt__fake_sql(f->db,
                 "INSERT INTO api_call(api, correlation, t, dur, device, bytes, src, dst) "
                 "VALUES(60, %lld, %lld, %lld, 0, %lld, %lld, %lld)",
                 corr, start - 100, end - start + 200, bytes, src, dst);
    vt__fake_sql(
        f->db,
        "INSERT INTO memcpy(t, dur, device, stream, correlation, copy_kind, src_kind, "
        "dst_kind, bytes, src, dst) VALUES(%lld, %lld, 0, 7, %lld, %d, %d, %d, %lld, %lld, "
        "%lld)",
        start, end - start, corr, copyKind, srcKind, dstKind, bytes, src, dst);
}

/* leak: a real run's events. */
static void build_leak(struct vt_fake *f)
{
    int i;
    for (i = 0; i < 8; i++) {
        vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, 0x7f0000000000LL + i * 0x1000000LL,
                     3 * MIB + 4096 * i);
        fake_fill(f);
    }
    for (i = 0; i < 4; i++) {
        long long address = 0x7f1000000000LL + i * 0x1000000LL;
        vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, address, 5 * MIB + 4096 * i);
        fake_fill(f);
        vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, address, 5 * MIB + 4096 * i);
    }
}

/* copies: a real run's events. */
static void build_copies(struct vt_fake *f)
{
    int i;
    vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_PINNED, VT_FAKE_PINNED, VT_FAKE_COPY_BYTES);
    vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, VT_FAKE_DEVICE, VT_FAKE_COPY_BYTES);
    for (i = 0; i < 5; i++)
        fake_copy(f, VT_COPY_HTOD, VT_MEMKIND_PAGEABLE, VT_MEMKIND_DEVICE, VT_FAKE_PAGEABLE,
                  VT_FAKE_DEVICE, VT_FAKE_COPY_BYTES);
    for (i = 0; i < 5; i++)
        fake_copy(f, VT_COPY_DTOH, VT_MEMKIND_DEVICE, VT_MEMKIND_PAGEABLE, VT_FAKE_DEVICE,
                  VT_FAKE_PAGEABLE, VT_FAKE_COPY_BYTES);
    for (i = 0; i < 5; i++)
        fake_copy(f, VT_COPY_HTOD, VT_MEMKIND_PINNED, VT_MEMKIND_DEVICE, VT_FAKE_PINNED,
                  VT_FAKE_DEVICE, VT_FAKE_COPY_BYTES);
    for (i = 0; i < 5; i++)
        fake_copy(f, VT_COPY_DTOH, VT_MEMKIND_DEVICE, VT_MEMKIND_PINNED, VT_FAKE_DEVICE,
                  VT_FAKE_PINNED, VT_FAKE_COPY_BYTES);
    vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, VT_FAKE_DEVICE, VT_FAKE_COPY_BYTES);
    vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_PINNED, VT_FAKE_PINNED, VT_FAKE_COPY_BYTES);
}

/* oom: a real run's events: the failed call, the OOM row, then 4 allocations that work. */
static void build_oom(struct vt_fake *f)
{
    long long ts = tick(f), request = VT_FAKE_TOTAL + 1024 * MIB;
    int i;
    vt__fake_sql(f->db,
                 "INSERT INTO api_call(api, correlation, t, dur, device, status, bytes, ptr) "
                 "VALUES(1, %lld, %lld, 800, 0, 2, %lld, 0)",
                 ++f->corr, ts, request);
    vt__fake_sql(f->db,
                 "INSERT INTO oom_event(t, api, correlation, device, bytes, status, free_bytes, "
                 "total_bytes) VALUES(%lld, 1, %lld, 0, %lld, 2, 84456357888, %lld)",
                 ts + 800, f->corr, request, VT_FAKE_TOTAL);
    for (i = 0; i < 4; i++) {
        long long address = 0x7f3000000000LL + i * 0x1000000LL;
        vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, address, 7 * MIB + 4096 * i);
        fake_fill(f);
        vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, address, 7 * MIB + 4096 * i);
    }
}

/* pool: a real run's events, the default pool's CREATED row included. */
static void build_pool(struct vt_fake *f)
{
    int i;
    vt__fake_sql(f->db,
                 "INSERT INTO pool_event(t, op, device, pool_type, address, threshold, size) "
                 "VALUES(%lld, 1, 0, 1, %lld, 0, 0)",
                 tick(f), VT_FAKE_POOL_DEFAULT);
    for (i = 0; i < 6; i++) {
        fake_async(f, VT_MEMOP_ALLOC, VT_FAKE_POOL_DEFAULT + i * 0x1000000LL, 9 * MIB + 4096 * i,
                   VT_FAKE_POOL_DEFAULT, 0);
        fake_fill(f);
    }
    for (i = 0; i < 6; i++)
        fake_async(f, VT_MEMOP_FREE, VT_FAKE_POOL_DEFAULT + i * 0x1000000LL, 9 * MIB + 4096 * i,
                   VT_FAKE_POOL_DEFAULT, 0);
    vt__fake_sql(f->db,
                 "INSERT INTO pool_event(t, op, device, pool_type, address, threshold, size) "
                 "VALUES(%lld, 1, 0, 1, %lld, 0, 0)",
                 tick(f), VT_FAKE_POOL_EXPLICIT);
    for (i = 0; i < 4; i++) {
        fake_async(f, VT_MEMOP_ALLOC, VT_FAKE_POOL_EXPLICIT + i * 0x1000000LL, 11 * MIB + 4096 * i,
                   VT_FAKE_POOL_EXPLICIT, 64 * MIB);
        fake_fill(f);
    }
    for (i = 0; i < 4; i++)
        fake_async(f, VT_MEMOP_FREE, VT_FAKE_POOL_EXPLICIT + i * 0x1000000LL, 11 * MIB + 4096 * i,
                   VT_FAKE_POOL_EXPLICIT, 64 * MIB);
    vt__fake_sql(f->db,
                 "INSERT INTO pool_event(t, op, device, pool_type, address, threshold) "
                 "VALUES(%lld, 3, 0, 1, %lld, 67108864), (%lld, 2, 0, 1, %lld, 67108864)",
                 tick(f), VT_FAKE_POOL_EXPLICIT, tick(f), VT_FAKE_POOL_EXPLICIT);
}

/* Intern zValue as a new string row and return its id. */
static long long fake_string(struct vt_fake *f, const char *zValue)
{
    vt__fake_sql(f->db, "INSERT INTO string(value) VALUES(%Q)", zValue);
    return sqlite3_last_insert_rowid(f->db);
}

/* One closed push/pop NVTX range on thread 777. */
static void fake_range(struct vt_fake *f, const char *zName, long long start, long long end,
                       int depth)
{
    vt__fake_sql(f->db,
                 "INSERT INTO nvtx_range(t, dur, kind, name_id, thread, depth) VALUES(%lld, "
                 "%lld, 0, %lld, 777, %d)",
                 start, end - start, fake_string(f, zName), depth);
}

void vt__fake_build_phases(struct vt_fake *f, int bKeepOutputs)
{
    long long weights = 0x7f7000000000LL, act = 0x7f8000000000LL, out = 0x7f9000000000LL;
    long long trainStart, valStart;
    char zName[32];
    int it, j, b;

    vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, weights, 17 * MIB);
    fake_fill(f);
    trainStart = tick(f);
    for (it = 0; it < 5; it++) {
        long long start = tick(f);
        for (j = 0; j < 3; j++) {
            vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, act + j * 0x1000000LL,
                         8 * MIB + 4096 * j);
            fake_fill(f);
        }
        for (j = 0; j < 3; j++)
            vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, act + j * 0x1000000LL,
                         8 * MIB + 4096 * j);
        snprintf(zName, sizeof zName, "iter %d", it);
        fake_range(f, zName, start, tick(f), 1);
    }
    fake_range(f, "train", trainStart, tick(f), 0);
    valStart = tick(f);
    for (b = 0; b < 6; b++) {
        long long start = tick(f);
        vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, out + b * 0x1000000LL,
                     10 * MIB + 4096 * b);
        fake_fill(f);
        if (!bKeepOutputs)
            vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, out + b * 0x1000000LL,
                         10 * MIB + 4096 * b);
        snprintf(zName, sizeof zName, "batch %d", b);
        fake_range(f, zName, start, tick(f), 1);
    }
    fake_range(f, "validation", valStart, tick(f), 0);
    for (b = 0; b < 6 && bKeepOutputs; b++)
        vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, out + b * 0x1000000LL,
                     10 * MIB + 4096 * b);
    vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, weights, 17 * MIB);
}

/* managed: a real run's events. */
static void build_managed(struct vt_fake *f)
{
    int i;
    for (i = 0; i < 3; i++) {
        vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_MANAGED, 0x7fa000000000LL + i * 0x1000000LL,
                     13 * MIB + 4096 * i);
        fake_fill(f);
    }
    for (i = 0; i < 3; i++)
        vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_MANAGED, 0x7fa000000000LL + i * 0x1000000LL,
                     13 * MIB + 4096 * i);
}

/* One VMM memory_event from the API callback (handle 0: none), with its api_call row. */
static void fake_vmm(struct vt_fake *f, int op, int api, long long address, long long bytes,
                     long long handle)
{
    long long ts = tick(f), corr = ++f->corr;
    vt__fake_sql(f->db,
                 "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, correlation, "
                 "api, pool_address) VALUES(%lld, %d, 3, %lld, %lld, 0, %lld, %d, NULLIF(%lld, 0))",
                 ts, op, address, bytes, corr, api, handle);
    vt__fake_sql(f->db,
                 "INSERT INTO api_call(api, correlation, t, dur, device, bytes, ptr) "
                 "VALUES(%d, %lld, %lld, 200, 0, %lld, %lld)",
                 api, corr, ts - 100, bytes, address);
}

/* vmm: a real run's events. */
static void build_vmm(struct vt_fake *f)
{
    long long ts;
    fake_vmm(f, VT_MEMOP_VMM_CREATE, 40, 0x10, 3 * VT_FAKE_GRAN, 0);
    fake_vmm(f, VT_MEMOP_VMM_CREATE, 40, 0x20, 5 * VT_FAKE_GRAN, 0);
    ts = tick(f);
    vt__fake_sql(f->db,
                 "INSERT INTO api_call(api, correlation, t, dur, device, bytes, ptr) "
                 "VALUES(44, %lld, %lld, 100, 0, %lld, %lld)",
                 ++f->corr, ts, 8 * VT_FAKE_GRAN, VT_FAKE_VA);
    fake_vmm(f, VT_MEMOP_VMM_MAP, 42, VT_FAKE_VA, 3 * VT_FAKE_GRAN, 0x10);
    fake_vmm(f, VT_MEMOP_VMM_MAP, 42, VT_FAKE_VA + 3 * VT_FAKE_GRAN, 5 * VT_FAKE_GRAN, 0x20);
    fake_fill(f);
    fake_vmm(f, VT_MEMOP_VMM_UNMAP, 43, VT_FAKE_VA, 3 * VT_FAKE_GRAN, 0);
    fake_vmm(f, VT_MEMOP_VMM_UNMAP, 43, VT_FAKE_VA + 3 * VT_FAKE_GRAN, 5 * VT_FAKE_GRAN, 0);
    fake_vmm(f, VT_MEMOP_VMM_RELEASE, 41, 0x10, 3 * VT_FAKE_GRAN, 0);
    fake_vmm(f, VT_MEMOP_VMM_RELEASE, 41, 0x20, 5 * VT_FAKE_GRAN, 0);
    ts = tick(f);
    vt__fake_sql(f->db,
                 "INSERT INTO api_call(api, correlation, t, dur, device, bytes, ptr) "
                 "VALUES(45, %lld, %lld, 100, 0, %lld, %lld)",
                 ++f->corr, ts, 8 * VT_FAKE_GRAN, VT_FAKE_VA);
}

/* A kernel launched by api_call (api, correlation corr) with name nameId and args_scanned scanned. */
static void fake_launch(struct vt_fake *f, int api, long long corr, long long nameId, int scanned,
                        long long graphId, long long nodeId)
{
    long long start = tick(f);
    if (api)
        vt__fake_sql(f->db,
                     "INSERT INTO api_call(api, correlation, t, dur, device, thread) VALUES(%d, "
                     "%lld, %lld, 500, 0, 101)",
                     api, corr, start - 600);
    vt__fake_sql(f->db,
                 "INSERT INTO kernel(t, dur, device, stream, correlation, name_id, graph_id, "
                 "graph_node_id, args_scanned) VALUES(%lld, %lld, 0, 7, %lld, %lld, NULLIF(%lld, 0), "
                 "NULLIF(%lld, 0), %d)",
                 start, tick(f) - start, corr, nameId, graphId, nodeId, scanned);
}

/* One kernel-argument use of address by the launch with correlation corr. */
static void fake_use(struct vt_fake *f, long long corr, long long address)
{
    vt__fake_sql(f->db, "INSERT INTO buffer_use(correlation, kind, address, t, device) VALUES(%lld, 0, %lld, %lld, 0)",
                 corr, address, tick(f));
}

#define THREADS_MAIN 101
#define THREADS_HELPER 102
#define THREADS_X 0x7f3000000000LL
#define THREADS_Y 0x7f3000800000LL
#define THREADS_PINNED 0x7f5100000000LL

/* threads: a real run's events (the job is killed: no clean close). */
static void build_threads(struct vt_fake *f)
{
    long long axpy = fake_string(f, "_Z14vt_sample_axpyPKfPfmf"), step0, fwd0, pre0, c;
    vt__fake_sql(f->db, "DELETE FROM meta WHERE key = 'closed_cleanly'");
    vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, THREADS_X, 4 * MIB + 4096);
    vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, THREADS_Y, 4 * MIB + 4096);
    vt__fake_sql(f->db, "UPDATE api_call SET thread = %d", THREADS_MAIN);
    step0 = tick(f);
    fwd0 = tick(f);
    c = ++f->corr;
    fake_launch(f, 104, c, FILL_NAME, 1, 0, 0);
    fake_use(f, c, THREADS_X);
    c = ++f->corr;
    fake_launch(f, 104, c, axpy, 1, 0, 0);
    fake_use(f, c, THREADS_X);
    fake_use(f, c, THREADS_Y);
    vt__fake_sql(f->db,
                 "INSERT INTO nvtx_range(t, dur, kind, name_id, thread, depth) VALUES(%lld, %lld, 0, "
                 "%lld, %d, 1)",
                 fwd0, tick(f) - fwd0, fake_string(f, "forward"), THREADS_MAIN);
    pre0 = tick(f);
    /* the helper thread: cudaHostAlloc (7) and its MEMORY2 row, the copy into Y */
    c = ++f->corr;
    vt__fake_sql(f->db,
                 "INSERT INTO api_call(api, correlation, t, dur, device, bytes, ptr, thread) "
                 "VALUES(7, %lld, %lld, 1000, 0, %lld, %lld, %d)",
                 c, tick(f), 8 * MIB + 4096, THREADS_PINNED, THREADS_HELPER);
    vt__fake_sql(f->db,
                 "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, correlation, api, "
                 "thread) VALUES(%lld, 1, 2, %lld, %lld, 0, %lld, 7, %d)",
                 tick(f), THREADS_PINNED, 8 * MIB + 4096, c, THREADS_HELPER);
    fake_copy(f, VT_COPY_HTOD, VT_MEMKIND_PINNED, VT_MEMKIND_DEVICE, THREADS_PINNED, THREADS_Y,
              4 * MIB + 4096);
    vt__fake_sql(f->db,
                 "INSERT INTO nvtx_range(t, dur, kind, name_id, thread, end_thread) VALUES(%lld, %lld, "
                 "1, %lld, %d, %d)",
                 pre0, tick(f) - pre0, fake_string(f, "prefetch"), THREADS_MAIN, THREADS_HELPER);
    vt__fake_sql(f->db,
                 "INSERT INTO nvtx_range(t, dur, kind, name_id, thread, depth) VALUES(%lld, %lld, 0, "
                 "%lld, %d, 0)",
                 step0, tick(f) - step0, fake_string(f, "step"), THREADS_MAIN);
}

#define GRAPHS_A 0x7f3100000000LL

/* graphs: a real run's events. */
static void build_graphs(struct vt_fake *f)
{
    int i;
    long long c;
    vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, GRAPHS_A, 6 * MIB + 4096);
    for (i = 0; i < 3; i++) {
        c = ++f->corr;
        fake_launch(f, 107, c, FILL_NAME, 0, 9, 901);
        vt__fake_sql(f->db,
                     "INSERT INTO memset(t, dur, device, stream, correlation, bytes, value, "
                     "mem_kind, graph_id, graph_node_id) VALUES(%lld, 1000, 0, 7, %lld, %lld, 0, "
                     "3, 9, 902)",
                     tick(f), c, 6 * MIB + 4096);
        if (i == 0) /* the allocation node's memory, allocated at the first launch */
            vt__fake_sql(f->db,
                         "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, "
                         "correlation, is_async) VALUES(%lld, 1, 3, 140100000000000, %lld, 0, "
                         "%lld, 1)",
                         tick(f), 5 * MIB + 4096, c);
        fake_launch(f, 0, c, FILL_NAME, 0, 9, 903);
    }
    c = ++f->corr;
    fake_launch(f, 104, c, FILL_NAME, 1, 0, 0);
    fake_use(f, c, GRAPHS_A);
    vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, GRAPHS_A, 6 * MIB + 4096);
}

/* One VMM or import memory_event with full control of its columns (api_call too). */
static void fake_mem_row(struct vt_fake *f, int op, int api, int kind, long long address, long long bytes,
                         int device, long long handle)
{
    long long ts = tick(f), corr = ++f->corr;
    vt__fake_sql(f->db,
                 "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, correlation, "
                 "api, pool_address) VALUES(%lld, %d, %d, %lld, NULLIF(%lld, 0), NULLIF(%d, -1), "
                 "%lld, %d, NULLIF(%lld, 0))",
                 ts, op, kind, address, bytes, device, corr, api, handle);
    vt__fake_sql(f->db,
                 "INSERT INTO api_call(api, correlation, t, dur, device, bytes, ptr) "
                 "VALUES(%d, %lld, %lld, 200, 0, NULLIF(%lld, 0), %lld)",
                 api, corr, ts - 100, bytes, address);
}

/* sharing: a real run's events (the IPC open refused with status 201, no host VMM). */
static void build_sharing(struct vt_fake *f)
{
    long long g = VT_FAKE_GRAN, va = VT_FAKE_VA, c;
    fake_mem_row(f, VT_MEMOP_VMM_CREATE, 40, 3, 0x30, 2 * g, 0, 0x30);
    fake_mem_row(f, VT_MEMOP_VMM_MAP, 42, 3, va, 2 * g, 0, 0x30);
    vt__fake_sql(f->db, "INSERT INTO api_call(api, correlation, t, dur, device, bytes, ptr) VALUES(46, %lld, %lld, "
                 "100, 0, %lld, %lld)", ++f->corr, tick(f), 2 * g, va);
    fake_fill(f);
    fake_mem_row(f, VT_MEMOP_IMPORT, 47, 3, 0x31, 0, 0, 0x31);
    fake_mem_row(f, VT_MEMOP_VMM_MAP, 42, 3, va + 2 * g, 2 * g, 0, 0x31);
    vt__fake_sql(f->db, "INSERT INTO api_call(api, correlation, t, dur, device, bytes, ptr) VALUES(46, %lld, %lld, "
                 "100, 0, %lld, %lld)", ++f->corr, tick(f), 2 * g, va + 2 * g);
    fake_fill(f);
    fake_mem_row(f, VT_MEMOP_VMM_UNMAP, 43, 3, va, 2 * g, 0, 0x30);
    fake_mem_row(f, VT_MEMOP_VMM_UNMAP, 43, 3, va + 2 * g, 2 * g, 0, 0x31);
    fake_mem_row(f, VT_MEMOP_IMPORT_CLOSE, 41, 3, 0x31, 0, 0, 0x31);
    fake_mem_row(f, VT_MEMOP_VMM_RELEASE, 41, 3, 0x30, 2 * g, 0, 0x30);
    vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, 0x7f3200000000LL, 3 * MIB + 4096);
    c = ++f->corr;
    vt__fake_sql(f->db, "INSERT INTO api_call(api, correlation, t, dur, device, status) VALUES(14, %lld, %lld, 100, 0, "
                 "201)", c, tick(f));
    vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, 0x7f3200000000LL, 3 * MIB + 4096);
}

/* takeover: a real run's events: the first allocation's row, then API calls only. */
static void build_takeover(struct vt_fake *f)
{
    long long taken;
    int i;
    vt__fake_mem(f, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, 0x7f3300000000LL, 2 * MIB + 4096);
    fake_fill(f);
    vt__fake_mem(f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, 0x7f3300000000LL, 2 * MIB + 4096);
    taken = tick(f);
    for (i = 0; i < 40; i++) {
        long long ts = tick(f);
        vt__fake_sql(f->db,
                     "INSERT INTO api_call(api, correlation, t, dur, device, bytes, ptr) VALUES(1, "
                     "%lld, %lld, 1000, 0, %lld, %lld)",
                     ++f->corr, ts, MIB + 4096LL * i, 0x7f3400000000LL + 0x200000LL * i);
    }
    vt__fake_sql(f->db,
                 "INSERT INTO meta VALUES('cupti_takeover_ns', '%lld'), ('cupti_takeover_detected_ns', "
                 "'%lld')",
                 taken, tick(f));
}

const char *vt__fake_stdout(const char *zSample)
{
    if (strcmp(zSample, "copies") == 0)
        return "vt-fact: pageable=0x5600a0000000\nvt-fact: pinned=0x7f5000000000\n"
               "vt-fact: device=0x7f2000000000\n"
               "bandwidth GB/s: pageable HtoD 11.20, DtoH 9.87; pinned HtoD 24.10, DtoH 25.30\n";
    if (strcmp(zSample, "oom") == 0)
        return "vt-fact: total=85029158912\nvt-fact: request=86102900736\n";
    if (strcmp(zSample, "vmm") == 0)
        return "vt-fact: granularity=2097152\nvt-fact: va=0x7fb000000000\n"
               "vt-fact: handle_first=0x10\nvt-fact: handle_second=0x20\n";
    if (strcmp(zSample, "threads") == 0)
        return "vt-fact: main_tid=101\nvt-fact: helper_tid=102\nvt-fact: x=0x7f3000000000\n"
               "vt-fact: y=0x7f3000800000\nvt-fact: pinned=0x7f5100000000\n";
    if (strcmp(zSample, "graphs") == 0) return "vt-fact: a=0x7f3100000000\n";
    if (strcmp(zSample, "sharing") == 0)
        return "vt-fact: granularity=2097152\nvt-fact: va=0x7fb000000000\nvt-fact: handle=0x30\n"
               "vt-fact: imported=0x31\nvt-fact: b=0x7f3200000000\nvt-fact: ipc_status=201\n"
               "vt-fact: ipc_ptr=0x0\nvt-fact: host_vmm=0\nvt-fact: host_handle=0x0\n";
    if (strcmp(zSample, "takeover") == 0) return "vt-fact: other_records=57\n";
    return "";
}

int vt__fake_build(struct vt_fake *f, const char *zSample)
{
    if (strcmp(zSample, "leak") == 0)
        build_leak(f);
    else if (strcmp(zSample, "copies") == 0)
        build_copies(f);
    else if (strcmp(zSample, "oom") == 0)
        build_oom(f);
    else if (strcmp(zSample, "pool") == 0)
        build_pool(f);
    else if (strcmp(zSample, "phases") == 0)
        vt__fake_build_phases(f, 1);
    else if (strcmp(zSample, "managed") == 0)
        build_managed(f);
    else if (strcmp(zSample, "vmm") == 0)
        build_vmm(f);
    else if (strcmp(zSample, "threads") == 0)
        build_threads(f);
    else if (strcmp(zSample, "graphs") == 0)
        build_graphs(f);
    else if (strcmp(zSample, "sharing") == 0)
        build_sharing(f);
    else if (strcmp(zSample, "takeover") == 0)
        build_takeover(f);
    else
        return -1;
    return 0;
}
