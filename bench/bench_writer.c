/* Writer benchmark: decode + insert of a realistic record mix through the real writer, against raw SQLite inserts. */
#include <cupti_activity.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core_rec.h"
#include "vramtrace/schema.h"
#include "vramtrace/schema.h"
#include "writer.h"

/*
 * The mix, per group of 26 events: 14 kernels; 3 memcpy, 1 memset and 2
 * allocation/free activity records, each preceded by its API call host record
 * (6). Timestamps advance like a busy GPU (~5 us per kernel), 64 kernel names.
 *
 * Figures: events/s per core of the writer thread (its CPU time: process CPU
 * minus the producing thread's), bytes per event of the closed trace, and the
 * same rows inserted by a plain loop of prepared statements (the ceiling).
 * Usage: bench_writer [events] [dir]; VT_BENCH_KEEP=1 keeps both traces.
 */
#define GROUP 26
#define GROUP_BYTES (20 * (8 + sizeof(CUpti_ActivityKernel10)))
#define BASE_TS 1700000000000000000ull
/*
 * The trace's time base: tracing began an hour before the benchmarked records,
 * so stored times need 6 bytes as in a long job (a base within 2 s of them
 * would flatter the figure by about 2 bytes per event).
 */
#define TIME_BASE (BASE_TS - 3600000000000ull)

static double now_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char g_azName[64][96];

/* The activity records and API calls of group g, generated identically for both runs. */
struct group {
    CUpti_ActivityKernel10 k[14];
    CUpti_ActivityMemcpy6 c[3];
    CUpti_ActivityMemset4 s;
    CUpti_ActivityMemory4 m[2];
    struct vt_hrec api[6];
};

static void make_group(uint64_t g, struct group *p)
{
    uint64_t ts = BASE_TS + g * 80000;
    uint32_t corr = (uint32_t)(g * 20 + 1);
    uint64_t addr = 0x7f0000000000ull + (g % 4096) * (1u << 20);
    int i, a = 0;
    memset(p, 0, sizeof *p);
    for (i = 0; i < 14; i++) {
        CUpti_ActivityKernel10 *k = &p->k[i];
        k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k->name = g_azName[(g * 14 + (uint64_t)i) % 64];
        k->start = ts + (uint64_t)i * 5000;
        k->end = k->start + 3000 + (uint64_t)i * 37;
        k->completed = k->end;
        k->deviceId = 0;
        k->contextId = 1;
        k->streamId = 7;
        k->correlationId = corr++;
        k->gridX = 108 * (1 + i % 4);
        k->gridY = 1;
        k->gridZ = 1;
        k->blockX = 256;
        k->blockY = 1;
        k->blockZ = 1;
        k->staticSharedMemory = 0;
        k->dynamicSharedMemory = (i % 3) * 16384;
        k->registersPerThread = 32 + (uint16_t)(i % 4) * 8;
    }
    for (i = 0; i < 3; i++) {
        CUpti_ActivityMemcpy6 *c = &p->c[i];
        struct vt_hrec *h = &p->api[a++];
        c->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        c->copyKind = i == 2 ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOH : CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
        c->srcKind = i == 2 ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
        c->dstKind = i == 2 ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        c->flags = i == 2 ? 0 : CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
        c->bytes = 1u << (12 + i * 4);
        c->start = ts + 70000 + (uint64_t)i * 2000;
        c->end = c->start + 1500;
        c->deviceId = 0;
        c->contextId = 1;
        c->streamId = 7;
        c->correlationId = corr++;
        h->type = VT_HREC_API_CALL;
        h->u.api.api = VT_API_ID_61;
        h->u.api.correlation = c->correlationId;
        h->u.api.start = c->start - 10000;
        h->u.api.end = h->u.api.start + 4000;
        h->u.api.thread = 4242;
        h->u.api.bytes = c->bytes;
        h->u.api.src = i == 2 ? addr : 0x55d000000000ull + (g % 64) * 65536;
        h->u.api.dst = i == 2 ? 0x7ffd00000000ull : addr + (uint64_t)i * 4096;
        h->u.api.stream = 0x5600aa00;
    }
    p->s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    p->s.value = 0;
    p->s.bytes = 1u << 20;
    p->s.start = ts + 77000;
    p->s.end = p->s.start + 800;
    p->s.deviceId = 0;
    p->s.contextId = 1;
    p->s.streamId = 7;
    p->s.correlationId = corr++;
    p->s.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
    p->s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p->api[a].type = VT_HREC_API_CALL;
    p->api[a].u.api.api = VT_API_ID_81;
    p->api[a].u.api.correlation = p->s.correlationId;
    p->api[a].u.api.start = p->s.start - 9000;
    p->api[a].u.api.end = p->api[a].u.api.start + 3000;
    p->api[a].u.api.thread = 4242;
    p->api[a].u.api.bytes = p->s.bytes;
    p->api[a].u.api.dst = addr;
    p->api[a].u.api.stream = 0x5600aa00;
    a++;
    for (i = 0; i < 2; i++) {
        CUpti_ActivityMemory4 *m = &p->m[i];
        struct vt_hrec *h = &p->api[a++];
        m->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
        m->memoryOperationType = i ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
                                   : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
        m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m->correlationId = corr++;
        m->address = addr;
        m->bytes = 2u << 20;
        m->timestamp = ts + 78000 + (uint64_t)i * 1000;
        m->deviceId = 0;
        m->contextId = 1;
        m->streamId = CUPTI_INVALID_STREAM_ID;
        m->source = NULL;
        h->type = VT_HREC_API_CALL;
        h->u.api.api = i ? VT_API_ID_2 : VT_API_ID_1;
        h->u.api.correlation = m->correlationId;
        h->u.api.start = m->timestamp - 2000;
        h->u.api.end = m->timestamp + 500;
        h->u.api.thread = 4242;
        h->u.api.bytes = i ? 0 : m->bytes;
        h->u.api.ptr = addr;
        h->u.api.stack_id = 1 + (int64_t)(g % 50);
    }
}

/* Run the real writer over nGroups groups. Returns 0; fills the figures. */
static int run_writer(const char *zPath, uint64_t nGroups, double *pCpu, double *pWall,
                      long long *pBytes)
{
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct group grp;
    uint8_t *pBuf = NULL;
    size_t cap = 0, off = 0;
    char zErr[256];
    double tProc0, tMain0, tWall0, tMain, tProc;
    struct stat st;
    uint64_t g;
    int i;
    vt__writer_config_default(&cfg);
    cfg.xNextRecord = core_next_record;
    cfg.time_base_ns = (int64_t)TIME_BASE; /* as the tracer: the clock when tracing began */
    w = vt__writer_open(zPath, &cfg, zErr, sizeof zErr);
    if (!w) {
        fprintf(stderr, "bench_writer: %s\n", zErr);
        return 1;
    }
    tProc0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
    tMain0 = now_s(CLOCK_THREAD_CPUTIME_ID);
    tWall0 = now_s(CLOCK_MONOTONIC);
    if (vt__writer_start(w) != 0) return 1;
    for (g = 0; g < nGroups; g++) {
        make_group(g, &grp);
        for (i = 0; i < 6; i++) {
            struct vt_hrec h = grp.api[i];
            while (vt__writer_submit(w, &h) != 0) sched_yield(); /* the bench waits; the glue drops */
        }
        if (pBuf && cap - off < GROUP_BYTES) {
            vt__writer_buffer_submit(w, pBuf, off);
            pBuf = NULL;
        }
        while (!pBuf) {
            pBuf = vt__writer_buffer_alloc(w, &cap);
            off = 0;
            if (!pBuf) sched_yield(); /* the bench waits; CUPTI would drop */
        }
        for (i = 0; i < 14; i++) core_lay(pBuf, cap, &off, &grp.k[i], sizeof grp.k[i]);
        for (i = 0; i < 3; i++) core_lay(pBuf, cap, &off, &grp.c[i], sizeof grp.c[i]);
        core_lay(pBuf, cap, &off, &grp.s, sizeof grp.s);
        for (i = 0; i < 2; i++) core_lay(pBuf, cap, &off, &grp.m[i], sizeof grp.m[i]);
    }
    if (pBuf) vt__writer_buffer_submit(w, pBuf, off);
    tMain = now_s(CLOCK_THREAD_CPUTIME_ID) - tMain0;
    if (vt__writer_close(w, 600000) != 0) fprintf(stderr, "bench_writer: close was not clean\n");
    tProc = now_s(CLOCK_PROCESS_CPUTIME_ID) - tProc0;
    *pWall = now_s(CLOCK_MONOTONIC) - tWall0;
    *pCpu = tProc - tMain;
    *pBytes = stat(zPath, &st) == 0 ? (long long)st.st_size : -1;
    return 0;
}

/* Bind helpers for the raw loop: value, or NULL when absent. */
static void bind_opt(sqlite3_stmt *s, int i, int64_t v, int bPresent)
{
    if (bPresent) sqlite3_bind_int64(s, i, v);
    else sqlite3_bind_null(s, i);
}

static int step(sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : 1;
}

/*
 * The ceiling: the same rows (same tables, columns and values) inserted by a
 * plain loop over prepared statements, WAL, synchronous=NORMAL, 50000 rows per
 * transaction, the same indexes at the end, on one thread, no decoding, no queues.
 */
static int run_raw(const char *zPath, uint64_t nGroups, double *pCpu, long long *pBytes)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *sK = NULL, *sC = NULL, *sS = NULL, *sM = NULL, *sA = NULL, *sStr = NULL;
    struct group grp;
    struct stat st;
    uint64_t g, nRows = 0;
    double t0;
    int i, nErr = 0;
    unlink(zPath);
    if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK)
        return 1;
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16384;",
                 NULL, NULL, NULL);
    if (vt__schema_create_at(db, (int64_t)TIME_BASE, NULL) != SQLITE_OK) return 1;
    sqlite3_prepare_v2(db, "INSERT INTO kernel(t, dur, device, context, stream, correlation, name_id,"
                       " grid_x, grid_y, grid_z, block_x, block_y, block_z, static_smem, dynamic_smem,"
                       " registers, graph_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &sK, NULL);
    sqlite3_prepare_v2(db, "INSERT INTO memcpy(t, dur, device, context, stream, correlation, copy_kind,"
                       " src_kind, dst_kind, bytes, is_async, src_device, dst_device, src, dst, graph_id)"
                       " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &sC, NULL);
    sqlite3_prepare_v2(db, "INSERT INTO memset(t, dur, device, context, stream, correlation, bytes,"
                       " value, mem_kind, is_async, dst, graph_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", -1,
                       &sS, NULL);
    sqlite3_prepare_v2(db, "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, context,"
                       " stream, correlation, api, is_async, pool_type, pool_address, pool_threshold,"
                       " pool_size, pool_used, pc, thread, stack_id, source_id)"
                       " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &sM, NULL);
    sqlite3_prepare_v2(db, "INSERT INTO api_call(api, correlation, t, dur, thread, device, status,"
                       " bytes, ptr, src, dst, stream, stack_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", -1,
                       &sA, NULL);
    sqlite3_prepare_v2(db, "INSERT INTO string(id, value) VALUES(?,?)", -1, &sStr, NULL);
    t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    for (i = 0; i < 64; i++) {
        sqlite3_bind_int(sStr, 1, i + 1);
        sqlite3_bind_text(sStr, 2, g_azName[i], -1, SQLITE_STATIC);
        nErr += step(sStr);
    }
    for (g = 0; g < nGroups; g++) {
        make_group(g, &grp);
        for (i = 0; i < 6; i++) {
            const struct vt_hrec *h = &grp.api[i];
            sqlite3_bind_int64(sA, 1, h->u.api.api);
            sqlite3_bind_int64(sA, 2, h->u.api.correlation);
            sqlite3_bind_int64(sA, 3, (int64_t)(h->u.api.start - TIME_BASE));
            sqlite3_bind_int64(sA, 4, (int64_t)(h->u.api.end - h->u.api.start));
            sqlite3_bind_int64(sA, 5, h->u.api.thread);
            sqlite3_bind_int64(sA, 6, h->u.api.device);
            sqlite3_bind_int64(sA, 7, h->u.api.status);
            bind_opt(sA, 8, (int64_t)h->u.api.bytes, h->u.api.bytes != 0);
            bind_opt(sA, 9, (int64_t)h->u.api.ptr, h->u.api.ptr != 0);
            bind_opt(sA, 10, (int64_t)h->u.api.src, h->u.api.src != 0);
            bind_opt(sA, 11, (int64_t)h->u.api.dst, h->u.api.dst != 0);
            bind_opt(sA, 12, (int64_t)h->u.api.stream, h->u.api.stream != 0);
            bind_opt(sA, 13, h->u.api.stack_id, h->u.api.stack_id > 0);
            nErr += step(sA);
        }
        for (i = 0; i < 14; i++) {
            const CUpti_ActivityKernel10 *k = &grp.k[i];
            sqlite3_bind_int64(sK, 1, (int64_t)(k->start - TIME_BASE));
            sqlite3_bind_int64(sK, 2, (int64_t)(k->end - k->start));
            sqlite3_bind_int64(sK, 3, k->deviceId);
            sqlite3_bind_int64(sK, 4, k->contextId);
            sqlite3_bind_int64(sK, 5, k->streamId);
            sqlite3_bind_int64(sK, 6, k->correlationId);
            sqlite3_bind_int64(sK, 7, (int64_t)((g * 14 + (uint64_t)i) % 64) + 1);
            sqlite3_bind_int64(sK, 8, k->gridX);
            sqlite3_bind_int64(sK, 9, k->gridY);
            sqlite3_bind_int64(sK, 10, k->gridZ);
            sqlite3_bind_int64(sK, 11, k->blockX);
            sqlite3_bind_int64(sK, 12, k->blockY);
            sqlite3_bind_int64(sK, 13, k->blockZ);
            sqlite3_bind_int64(sK, 14, k->staticSharedMemory);
            sqlite3_bind_int64(sK, 15, k->dynamicSharedMemory);
            sqlite3_bind_int64(sK, 16, k->registersPerThread);
            sqlite3_bind_null(sK, 17);
            nErr += step(sK);
        }
        for (i = 0; i < 3; i++) {
            const CUpti_ActivityMemcpy6 *c = &grp.c[i];
            sqlite3_bind_int64(sC, 1, (int64_t)(c->start - TIME_BASE));
            sqlite3_bind_int64(sC, 2, (int64_t)(c->end - c->start));
            sqlite3_bind_int64(sC, 3, c->deviceId);
            sqlite3_bind_int64(sC, 4, c->contextId);
            sqlite3_bind_int64(sC, 5, c->streamId);
            sqlite3_bind_int64(sC, 6, c->correlationId);
            sqlite3_bind_int64(sC, 7, c->copyKind);
            sqlite3_bind_int64(sC, 8, c->srcKind);
            sqlite3_bind_int64(sC, 9, c->dstKind);
            sqlite3_bind_int64(sC, 10, (int64_t)c->bytes);
            sqlite3_bind_int64(sC, 11, (c->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0);
            sqlite3_bind_null(sC, 12);
            sqlite3_bind_null(sC, 13);
            sqlite3_bind_int64(sC, 14, (int64_t)grp.api[i].u.api.src);
            sqlite3_bind_int64(sC, 15, (int64_t)grp.api[i].u.api.dst);
            sqlite3_bind_null(sC, 16);
            nErr += step(sC);
        }
        sqlite3_bind_int64(sS, 1, (int64_t)(grp.s.start - TIME_BASE));
        sqlite3_bind_int64(sS, 2, (int64_t)(grp.s.end - grp.s.start));
        sqlite3_bind_int64(sS, 3, grp.s.deviceId);
        sqlite3_bind_int64(sS, 4, grp.s.contextId);
        sqlite3_bind_int64(sS, 5, grp.s.streamId);
        sqlite3_bind_int64(sS, 6, grp.s.correlationId);
        sqlite3_bind_int64(sS, 7, (int64_t)grp.s.bytes);
        sqlite3_bind_int64(sS, 8, grp.s.value);
        sqlite3_bind_int64(sS, 9, grp.s.memoryKind);
        sqlite3_bind_int64(sS, 10, 1);
        sqlite3_bind_int64(sS, 11, (int64_t)grp.api[3].u.api.dst);
        sqlite3_bind_null(sS, 12);
        nErr += step(sS);
        for (i = 0; i < 2; i++) {
            const CUpti_ActivityMemory4 *m = &grp.m[i];
            int c;
            sqlite3_bind_int64(sM, 1, (int64_t)(m->timestamp - TIME_BASE));
            sqlite3_bind_int64(sM, 2, i ? VT_MEMOP_FREE : VT_MEMOP_ALLOC);
            sqlite3_bind_int64(sM, 3, m->memoryKind);
            sqlite3_bind_int64(sM, 4, (int64_t)m->address);
            sqlite3_bind_int64(sM, 5, (int64_t)m->bytes);
            sqlite3_bind_int64(sM, 6, m->deviceId);
            sqlite3_bind_int64(sM, 7, m->contextId);
            sqlite3_bind_null(sM, 8);
            sqlite3_bind_int64(sM, 9, m->correlationId);
            sqlite3_bind_int64(sM, 10, grp.api[4 + i].u.api.api);
            sqlite3_bind_int64(sM, 11, 0);
            for (c = 12; c <= 17; c++) sqlite3_bind_null(sM, c);
            sqlite3_bind_int64(sM, 18, grp.api[4 + i].u.api.thread);
            sqlite3_bind_int64(sM, 19, grp.api[4 + i].u.api.stack_id);
            sqlite3_bind_null(sM, 20);
            nErr += step(sM);
        }
        nRows += GROUP;
        if (nRows % 50000 < GROUP) {
            sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
            sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
        }
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    *pCpu = now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
    sqlite3_finalize(sK);
    sqlite3_finalize(sC);
    sqlite3_finalize(sS);
    sqlite3_finalize(sM);
    sqlite3_finalize(sA);
    sqlite3_finalize(sStr);
    sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    sqlite3_close(db);
    *pBytes = stat(zPath, &st) == 0 ? (long long)st.st_size : -1;
    if (nErr) fprintf(stderr, "bench_writer: %d raw inserts failed\n", nErr);
    return nErr != 0;
}

int main(int argc, char **argv)
{
    uint64_t nEvents = argc > 1 ? strtoull(argv[1], NULL, 10) : 2600000;
    const char *zDir = argc > 2 ? argv[2] : "/tmp";
    char zPath[512], zRaw[512];
    uint64_t nGroups = nEvents / GROUP;
    double cpuW = 0, wallW = 0, cpuR = 0, rateW, rateR;
    long long bytesW = 0, bytesR = 0;
    int i;
    for (i = 0; i < 64; i++)
        snprintf(g_azName[i], sizeof g_azName[i],
                 "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_%d>(int, T1)",
                 i);
    nEvents = nGroups * GROUP;
    snprintf(zPath, sizeof zPath, "%s/bench_writer_%d.db", zDir, (int)getpid());
    snprintf(zRaw, sizeof zRaw, "%s/bench_writer_raw_%d.db", zDir, (int)getpid());
    unlink(zPath);
    if (run_writer(zPath, nGroups, &cpuW, &wallW, &bytesW) != 0) return 1;
    if (run_raw(zRaw, nGroups, &cpuR, &bytesR) != 0) return 1;
    rateW = (double)nEvents / cpuW;
    rateR = (double)nEvents / cpuR;
    printf("events: %llu (per 26: 14 kernel, 3 memcpy, 1 memset, 2 alloc/free + 6 API calls)\n",
           (unsigned long long)nEvents);
    printf("writer : %8.3f s CPU (writer thread), %6.3f s wall, %6.2f M events/s per core,"
           " %5.1f bytes/event\n",
           cpuW, wallW, rateW / 1e6, (double)bytesW / (double)nEvents);
    printf("raw    : %8.3f s CPU, %6.2f M rows/s per core, %5.1f bytes/row\n", cpuR,
           rateR / 1e6, (double)bytesR / (double)nEvents);
    printf("ratio  : writer/raw throughput %.0f %%, bytes %.2f x\n", 100.0 * rateW / rateR,
           (double)bytesW / (double)bytesR);
    printf("goals  : >= 1.0 M events/s per core, >= 60 %% of raw, <= 48 bytes/event (docs/performance.md)\n");
    if (getenv("VT_BENCH_KEEP")) {
        printf("kept   : %s %s\n", zPath, zRaw);
    } else {
        unlink(zPath);
        unlink(zRaw);
    }
    return 0;
}
