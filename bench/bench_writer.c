/* Writer benchmark: a CUPTI record mix through the real writer, against raw SQLite inserts of exactly the rows it writes. */
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
#include "decode.h"
#include "rowtable.h"
#include "vramtrace/compact.h"
#include "vramtrace/schema.h"
#include "writer.h"
#include "bench_util.h"

/*
 * Mixes (-m), per group:
 *   bench   26 events: 14 kernels; 3 memcpy, 1 memset and 2 allocation/free activity records,
 *           each preceded by its API call host record (6). Kernels ~5 us apart, 64 names.
 *   launch  32 events: 8 kernels, each with its launch API call and 2 kernel-argument buffer
 *           uses, ~50 us apart (20 k kernels/s): what a long training job writes per kernel.
 *
 * Figures: events/s per core of the writer thread (its CPU time: process CPU minus the
 * producing thread's), bytes per event of the closed trace; then the rows that writer wrote
 * (the same decoder and compactor run again, outside the timing) inserted by plain loops of
 * prepared statements, one row per statement and MULTI rows per statement, same pragmas
 * (WAL, synchronous=NORMAL, 16 MiB cache), same transactions: the ceilings. Every figure is
 * printed with the load average when it was taken.
 * Usage: bench_writer [-m bench|launch] [-o writer|raw1|raw16] [-s] [events] [dir]; VT_BENCH_KEEP=1 keeps the traces.
 * -o runs one half only (instruction counts: callgrind on `-o writer`, docs/performance.md).
 * -s: the writer only, in the always-on mode (kernels summarized per second from the first
 * record on) and in full mode, each as bytes per hour of the mix's own clock (the launch mix
 * runs 20 k kernels/s), an empty trace's bytes subtracted.
 */
#define MAXGROUP 32
#define GROUP_BYTES (20 * (8 + sizeof(CUpti_ActivityKernel10)))
#define BASE_TS 1700000000000000000ull
#define MULTI 16      /* rows per statement of the writer's multi-row inserts (writer.c MULTI_ROWS) */
#define TXN_ROWS 50000
#define CHUNK 4096    /* groups decoded for the raw loops at a time */
/*
 * The trace's time base: tracing began an hour before the benchmarked records,
 * so stored times need 6 bytes as in a long job (a base within 2 s of them
 * would flatter the figure by about 2 bytes per event).
 */
#define TIME_BASE (BASE_TS - 3600000000000ull)

enum { MIX_BENCH, MIX_LAUNCH };
static int g_mix = MIX_BENCH;
static const char *g_zOnly = ""; /* -o: one half only (writer, raw1, raw16) */
static int g_bSummary;            /* -s: the writer in the always-on mode (ksummary.h) */

static double now_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char g_azName[64][96];

/* The activity records and host records of group g, generated identically for every run. */
struct group {
    int nEvents, nAct, nHost;
    CUpti_ActivityKernel10 k[14];
    CUpti_ActivityMemcpy6 c[3];
    CUpti_ActivityMemset4 s;
    CUpti_ActivityMemory4 m[2];
    struct vt_hrec aHost[24];
    const void *apAct[20]; /* activity records in buffer order, with their sizes */
    size_t anAct[20];
};

/* A kernel record of name n, start ts, duration dur, correlation corr, launch shape i. */
static void kernel_rec(CUpti_ActivityKernel10 *k, uint64_t n, uint64_t ts, uint64_t dur, uint32_t corr, int i)
{
    memset(k, 0, sizeof *k);
    k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k->name = g_azName[n % 64];
    k->start = ts;
    k->end = ts + dur;
    k->completed = k->end;
    k->deviceId = 0;
    k->contextId = 1;
    k->streamId = 7;
    k->correlationId = corr;
    k->gridX = 108 * (1 + i % 4);
    k->gridY = 1;
    k->gridZ = 1;
    k->blockX = 256;
    k->blockY = 1;
    k->blockZ = 1;
    k->dynamicSharedMemory = (i % 3) * 16384;
    k->registersPerThread = 32 + (uint16_t)(i % 4) * 8;
}

/* The launch mix: 8 kernels, each after its launch call and two argument uses. */
static void make_launch_group(uint64_t g, struct group *p)
{
    uint64_t ts = BASE_TS + g * 400000;
    uint32_t corr = (uint32_t)(g * 8 + 1);
    for (int i = 0; i < 8; i++) {
        struct vt_hrec *h = &p->aHost[p->nHost++];
        uint64_t launch = ts + (uint64_t)i * 50000;
        h->type = VT_HREC_API_CALL;
        h->u.api.api = VT_API_ID_100;
        h->u.api.correlation = corr;
        h->u.api.start = launch;
        h->u.api.end = launch + 3000;
        h->u.api.thread = 4242;
        h->u.api.stream = 0x5600aa00;
        h->u.api.scan = VT_SCAN_DONE;
        for (int u = 0; u < 2; u++) {
            h = &p->aHost[p->nHost++];
            h->type = VT_HREC_BUFFER_USE;
            h->u.use.correlation = corr;
            h->u.use.kind = VT_USE_KERNEL_ARG;
            h->u.use.address = 0x7f0000000000ull + ((g * 8 + (uint64_t)i * 3 + (uint64_t)u * 7) % 400) * (1u << 21);
            h->u.use.ts = launch + 1000;
            h->u.use.device = 0;
        }
        kernel_rec(&p->k[i], g * 8 + (uint64_t)i, launch + 20000, 30000 + (uint64_t)i * 37, corr++, i);
        p->apAct[p->nAct] = &p->k[i];
        p->anAct[p->nAct++] = sizeof p->k[i];
    }
    p->nEvents = 32;
}

static void make_group(uint64_t g, struct group *p)
{
    uint64_t ts = BASE_TS + g * 80000;
    uint32_t corr = (uint32_t)(g * 20 + 1);
    uint64_t addr = 0x7f0000000000ull + (g % 4096) * (1u << 20);
    int i, a = 0;
    memset(p, 0, sizeof *p);
    if (g_mix == MIX_LAUNCH) {
        make_launch_group(g, p);
        return;
    }
    for (i = 0; i < 14; i++) {
        kernel_rec(&p->k[i], g * 14 + (uint64_t)i, ts + (uint64_t)i * 5000, 3000 + (uint64_t)i * 37, corr++, i);
        p->apAct[p->nAct] = &p->k[i];
        p->anAct[p->nAct++] = sizeof p->k[i];
    }
    for (i = 0; i < 3; i++) {
        CUpti_ActivityMemcpy6 *c = &p->c[i];
        struct vt_hrec *h = &p->aHost[a++];
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
        p->apAct[p->nAct] = c;
        p->anAct[p->nAct++] = sizeof *c;
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
    p->apAct[p->nAct] = &p->s;
    p->anAct[p->nAct++] = sizeof p->s;
    p->aHost[a].type = VT_HREC_API_CALL;
    p->aHost[a].u.api.api = VT_API_ID_81;
    p->aHost[a].u.api.correlation = p->s.correlationId;
    p->aHost[a].u.api.start = p->s.start - 9000;
    p->aHost[a].u.api.end = p->aHost[a].u.api.start + 3000;
    p->aHost[a].u.api.thread = 4242;
    p->aHost[a].u.api.bytes = p->s.bytes;
    p->aHost[a].u.api.dst = addr;
    p->aHost[a].u.api.stream = 0x5600aa00;
    a++;
    for (i = 0; i < 2; i++) {
        CUpti_ActivityMemory4 *m = &p->m[i];
        struct vt_hrec *h = &p->aHost[a++];
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
        p->apAct[p->nAct] = m;
        p->anAct[p->nAct++] = sizeof *m;
    }
    p->nHost = a;
    p->nEvents = 26;
}

/* Run the real writer over nGroups groups. Returns 0; fills the figures. */
static int run_writer(const char *zPath, uint64_t nGroups, double *pCpu, double *pWall, long long *pBytes)
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
    if (g_bSummary) { /* summaries from the first benchmarked record on (the base is an hour before) */
        cfg.kernel_warmup_ns = (int64_t)(BASE_TS - TIME_BASE);
        cfg.kernel_period_ns = 1000000000;
    }
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
        for (i = 0; i < grp.nHost; i++) {
            struct vt_hrec h = grp.aHost[i];
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
        for (i = 0; i < grp.nAct; i++) core_lay(pBuf, cap, &off, grp.apAct[i], grp.anAct[i]);
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

/* The rows the writer writes, captured for the raw loops: decoder -> stored form -> compacted parts. */
struct capture {
    struct vt_compact cmp;
    struct vt_compact_map aMap[VT_CT__COUNT];
    struct vt__row *aRow;
    size_t nRow, nAlloc;
    char *zText; /* text values copied (they are valid during emit only) */
    size_t nText, nTextAlloc;
};

/* Keep a copy of text z; NULL when out of memory. The arena is emptied with the rows. */
static const char *keep_text(struct capture *c, const char *z)
{
    size_t n = strlen(z) + 1;
    if (c->nText + n > c->nTextAlloc) return NULL; /* sized for a chunk's strings: see capture_rows */
    memcpy(c->zText + c->nText, z, n);
    c->nText += n;
    return c->zText + c->nText - n;
}

static void keep_row(struct capture *c, const struct vt__row *r)
{
    if (c->nRow == c->nAlloc) {
        c->nAlloc = c->nAlloc ? 2 * c->nAlloc : 65536;
        c->aRow = realloc(c->aRow, c->nAlloc * sizeof *c->aRow);
        if (!c->aRow) abort();
    }
    c->aRow[c->nRow++] = *r;
}

/* Keep row r (stored form) as the writer stores it: a compacted table's as its parts. */
static void capture_stored(struct capture *c, const struct vt__row *r)
{
    struct vt__row aPart[3];
    const struct vt__table_spec *t = &vt__aTable[r->table];
    if (t->compact) {
        int n = vt__row_compact(&c->cmp, &c->aMap[t->compact - 1], r, aPart);
        for (int p = 0; p < n; p++) keep_row(c, &aPart[p]);
    } else {
        keep_row(c, r);
    }
}

/* Decoder emit callback: the row as the writer stores it (emit_row, store_compact). */
static void capture_emit(void *pCtx, const struct vt__row *pRow)
{
    struct capture *c = pCtx;
    struct vt__row r = *pRow;
    const struct vt__table_spec *t = &vt__aTable[r.table];
    for (int i = 0; i < t->nCol; i++)
        if ((t->textMask >> i & 1) && !(r.nullMask >> i & 1) && !(r.v[i].z = keep_text(c, r.v[i].z))) abort();
    vt__row_to_stored(&r, (int64_t)TIME_BASE);
    capture_stored(c, &r);
}

/* Decoder fold callback: a call stored folded into its activity row, as the writer's emit_fold (no text in either). */
static void capture_fold(void *pCtx, const struct vt__row *pAct, const struct vt__row *pCall)
{
    struct capture *c = pCtx;
    struct vt__row a = *pAct, k = *pCall, sig;
    vt__row_to_stored(&a, (int64_t)TIME_BASE);
    vt__row_to_stored(&k, (int64_t)TIME_BASE);
    if (vt__row_fold(&c->cmp, &c->aMap[VT_CT_api_call], &a, &k, &sig)) keep_row(c, &sig);
    capture_stored(c, &a);
}

/* Statements of the raw loops: one row, and MULTI rows (tables without text) per statement. */
struct raw {
    sqlite3 *db;
    sqlite3_stmt *aOne[VT_T__COUNT], *aMulti[VT_T__COUNT];
    struct vt__row aHeld[VT_T__COUNT][MULTI];
    int anHeld[VT_T__COUNT];
    int64_t aVal[VT_T__COUNT][MULTI * VT__ROW_MAXCOL];
    uint8_t aState[VT_T__COUNT][MULTI * VT__ROW_MAXCOL];
    long long nRows, nErr;
};

static int raw_open(struct raw *x, const char *zPath)
{
    memset(x, 0, sizeof *x);
    unlink(zPath);
    if (sqlite3_open_v2(zPath, &x->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        return 1;
    /* the writer's pragmas (writer.c vt__writer_open) */
    sqlite3_exec(x->db,
                 "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16384;"
                 " PRAGMA wal_autocheckpoint=4096;",
                 NULL, NULL, NULL);
    if (vt__schema_create_at(x->db, (int64_t)TIME_BASE, NULL) != SQLITE_OK) return 1;
    for (int t = 0; t < VT_T__COUNT; t++) {
        if (vt__aTable[t].compact) continue;
        if (sqlite3_prepare_v3(x->db, vt__aTable[t].zInsert, -1, SQLITE_PREPARE_PERSISTENT, &x->aOne[t], NULL) != SQLITE_OK)
            return 1;
        if (!vt__aTable[t].textMask && vt__row_prepare_multi(x->db, &vt__aTable[t], &x->aMulti[t], MULTI) != SQLITE_OK)
            return 1;
    }
    return sqlite3_exec(x->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK;
}

static void raw_step(struct raw *x, sqlite3_stmt *s, int nRow)
{
    x->nErr += sqlite3_step(s) != SQLITE_DONE;
    sqlite3_reset(s);
    if ((x->nRows + nRow) / TXN_ROWS != x->nRows / TXN_ROWS) {
        sqlite3_exec(x->db, "COMMIT", NULL, NULL, NULL);
        sqlite3_exec(x->db, "BEGIN", NULL, NULL, NULL);
    }
    x->nRows += nRow;
}

/* Insert n rows: one per statement (bMulti 0), or MULTI per statement where the table allows. */
static void raw_insert(struct raw *x, const struct vt__row *aRow, size_t n, int bMulti)
{
    for (size_t i = 0; i < n; i++) {
        const struct vt__row *r = &aRow[i];
        int t = r->table;
        if (!bMulti || !x->aMulti[t]) {
            vt__row_bind(x->aOne[t], 0, r);
            raw_step(x, x->aOne[t], 1);
            continue;
        }
        x->aHeld[t][x->anHeld[t]++] = *r;
        if (x->anHeld[t] == MULTI) {
            for (int k = 0; k < MULTI; k++)
                vt__row_bind_changed(x->aMulti[t], k * vt__aTable[t].nCol, &x->aHeld[t][k],
                                     &x->aVal[t][k * VT__ROW_MAXCOL], &x->aState[t][k * VT__ROW_MAXCOL]);
            raw_step(x, x->aMulti[t], MULTI);
            x->anHeld[t] = 0;
        }
    }
}

/* The rows still held, one per statement, commit, close. The file's size into *pBytes. */
static void raw_close(struct raw *x, const char *zPath, long long *pBytes)
{
    struct stat st;
    for (int t = 0; t < VT_T__COUNT; t++) {
        for (int k = 0; k < x->anHeld[t]; k++) {
            vt__row_bind(x->aOne[t], 0, &x->aHeld[t][k]);
            raw_step(x, x->aOne[t], 1);
        }
        x->anHeld[t] = 0;
    }
    sqlite3_exec(x->db, "COMMIT", NULL, NULL, NULL);
    for (int t = 0; t < VT_T__COUNT; t++) {
        sqlite3_finalize(x->aOne[t]);
        sqlite3_finalize(x->aMulti[t]);
    }
    sqlite3_wal_checkpoint_v2(x->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    sqlite3_close(x->db);
    *pBytes = stat(zPath, &st) == 0 ? (long long)st.st_size : -1;
}

/*
 * The ceilings: the writer's rows of nGroups groups (decoded and compacted CHUNK groups at a
 * time, untimed) inserted into zOne one row per statement and into zMulti MULTI rows per
 * statement; the thread CPU time of the inserts alone into *pOne and *pMulti.
 */
static int run_raw(const char *zOne, const char *zMulti, uint64_t nGroups, double *pOne, double *pMulti,
                   long long *pBytesOne, long long *pBytesMulti, long long *pRows)
{
    struct vt__decoder_config dc;
    struct vt__decoder dec;
    struct capture cap;
    struct raw xOne, xMulti;
    struct group grp;
    uint64_t g0;
    memset(&cap, 0, sizeof cap);
    memset(&dc, 0, sizeof dc);
    cap.nTextAlloc = 16u << 20;
    cap.zText = malloc(cap.nTextAlloc);
    if (!cap.zText || vt__decoder_init(&dec, &dc, capture_emit, &cap) || vt__compact_init(&cap.cmp, 0, NULL)) return 1;
    dec.xEmitFold = capture_fold;
    for (int t = 0; t < VT_T__COUNT; t++)
        if (vt__aTable[t].compact && vt__row_compact_map(t, &cap.aMap[vt__aTable[t].compact - 1])) return 1;
    if (raw_open(&xOne, zOne) || raw_open(&xMulti, zMulti)) return 1;
    *pOne = *pMulti = 0;
    for (g0 = 0; g0 < nGroups; g0 += CHUNK) {
        double t0;
        cap.nRow = cap.nText = 0;
        for (uint64_t g = g0; g < nGroups && g < g0 + CHUNK; g++) {
            make_group(g, &grp);
            for (int i = 0; i < grp.nHost; i++) vt__decode_host(&dec, &grp.aHost[i]);
            for (int i = 0; i < grp.nAct; i++) vt__decode_activity(&dec, (const CUpti_Activity *)grp.apAct[i]);
        }
        t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
        if (strcmp(g_zOnly, "raw16")) raw_insert(&xOne, cap.aRow, cap.nRow, 0);
        *pOne += now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
        t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
        if (strcmp(g_zOnly, "raw1")) raw_insert(&xMulti, cap.aRow, cap.nRow, 1);
        *pMulti += now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
    }
    {
        double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
        raw_close(&xOne, zOne, pBytesOne);
        *pOne += now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
        t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
        raw_close(&xMulti, zMulti, pBytesMulti);
        *pMulti += now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
    }
    *pRows = xOne.nRows;
    if (xOne.nErr || xMulti.nErr) fprintf(stderr, "bench_writer: %lld raw inserts failed\n", xOne.nErr + xMulti.nErr);
    vt__decoder_free(&dec);
    vt__compact_free(&cap.cmp);
    free(cap.aRow);
    free(cap.zText);
    return xOne.nErr || xMulti.nErr;
}

/*
 * -s: bytes per hour of the mix's clock in full mode and in the always-on mode: each trace's bytes
 * less an empty trace's, over the time its records span (nGroups groups). 0, or 1 on an error.
 */
static int run_hourly(const char *zPath, uint64_t nGroups, uint64_t nEvents)
{
    double cpu, wall, span = (double)nGroups * (g_mix == MIX_LAUNCH ? 400e-6 : 80e-6); /* seconds: a group's span */
    long long aBytes[2][2];
    char zL[16];
    for (int m = 0; m < 2; m++) { /* full, then summary */
        g_bSummary = m;
        for (int e = 0; e < 2; e++) {
            unlink(zPath);
            if (run_writer(zPath, e ? nGroups : 0, &cpu, &wall, &aBytes[m][e]) != 0) return 1;
            unlink(zPath);
        }
        printf("%-7s: %llu events over %.2f s of the mix's clock: %lld bytes (empty trace %lld), %.1f bytes/event, "
               "%.3f GB per hour   [load %s]\n",
               m ? "summary" : "full", (unsigned long long)nEvents, span, aBytes[m][1], aBytes[m][0],
               (double)(aBytes[m][1] - aBytes[m][0]) / (double)nEvents,
               (double)(aBytes[m][1] - aBytes[m][0]) / span * 3600 / 1e9, vt_bench_load_avg(zL, sizeof zL));
    }
    printf("goals  : one hour of 20 k kernels/s <= 1.5 GB in full mode, <= 100 MB in the always-on mode "
           "(launch mix; docs/performance.md)\n");
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t nEvents = 2600000, nGroups;
    const char *zDir = "/tmp";
    char zPath[512], zOne[512], zMulti[512], zL1[16], zL2[16], zL3[16];
    double cpuW = 0, wallW = 0, cpuOne = 0, cpuMulti = 0, rateW, rateOne, rateMulti;
    long long bytesW = 0, bytesOne = 0, bytesMulti = 0, nRows = 0;
    int i, iArg = 1, nPer;
    while (argc > iArg + 1 && argv[iArg][0] == '-') { /* -m MIX, -o writer|raw (one half only: for callgrind) */
        if (!strcmp(argv[iArg], "-m")) g_mix = !strcmp(argv[iArg + 1], "launch") ? MIX_LAUNCH : MIX_BENCH;
        else if (!strcmp(argv[iArg], "-o")) g_zOnly = argv[iArg + 1];
        else if (!strcmp(argv[iArg], "-s")) {
            g_bSummary = 1;
            iArg++;
            continue;
        }
        iArg += 2;
    }
    if (argc > iArg) nEvents = strtoull(argv[iArg], NULL, 10);
    if (argc > iArg + 1) zDir = argv[iArg + 1];
    nPer = g_mix == MIX_LAUNCH ? 32 : 26;
    for (i = 0; i < 64; i++)
        snprintf(g_azName[i], sizeof g_azName[i],
                 "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_%d>(int, T1)", i);
    nGroups = nEvents / (uint64_t)nPer;
    nEvents = nGroups * (uint64_t)nPer;
    snprintf(zPath, sizeof zPath, "%s/bench_writer_%d.db", zDir, (int)getpid());
    snprintf(zOne, sizeof zOne, "%s/bench_writer_raw1_%d.db", zDir, (int)getpid());
    snprintf(zMulti, sizeof zMulti, "%s/bench_writer_raw%d_%d.db", zDir, MULTI, (int)getpid());
    unlink(zPath);
    if (g_bSummary) return run_hourly(zPath, nGroups, nEvents);
    vt_bench_load_avg(zL1, sizeof zL1);
    if (strncmp(g_zOnly, "raw", 3) && run_writer(zPath, nGroups, &cpuW, &wallW, &bytesW) != 0) return 1;
    vt_bench_load_avg(zL2, sizeof zL2);
    if (strcmp(g_zOnly, "writer") && run_raw(zOne, zMulti, nGroups, &cpuOne, &cpuMulti, &bytesOne, &bytesMulti, &nRows) != 0)
        return 1;
    vt_bench_load_avg(zL3, sizeof zL3);
    rateW = (double)nEvents / cpuW;
    rateOne = (double)nEvents / cpuOne;
    rateMulti = (double)nEvents / cpuMulti;
    printf("events : %llu, mix %s (%s), schema %d\n", (unsigned long long)nEvents, g_mix == MIX_LAUNCH ? "launch" : "bench",
           g_mix == MIX_LAUNCH ? "per 32: 8 kernels, each with its launch call and 2 argument uses"
                               : "per 26: 14 kernel, 3 memcpy, 1 memset, 2 alloc/free + 6 API calls",
           VT_SCHEMA_VERSION);
    printf("writer : %8.3f s CPU (writer thread), %6.3f s wall, %6.3f M events/s per core, %5.1f bytes/event"
           "   [load %s before, %s after]\n",
           cpuW, wallW, rateW / 1e6, (double)bytesW / (double)nEvents, zL1, zL2);
    printf("raw 1  : %8.3f s CPU, %6.3f M events/s per core (%lld rows, 1 per INSERT), %5.1f bytes/event   [load %s]\n",
           cpuOne, rateOne / 1e6, nRows, (double)bytesOne / (double)nEvents, zL3);
    printf("raw %-2d : %8.3f s CPU, %6.3f M events/s per core (%lld rows, %d per INSERT), %5.1f bytes/event   [load %s]\n",
           MULTI, cpuMulti, rateMulti / 1e6, nRows, MULTI, (double)bytesMulti / (double)nEvents, zL3);
    printf("ratio  : writer / raw 1: %.0f %%; writer / raw %d: %.0f %%; bytes writer / raw: %.3f\n", 100.0 * rateW / rateOne,
           MULTI, 100.0 * rateW / rateMulti, (double)bytesW / (double)bytesOne);
    printf("goals  : <= 24 bytes/event (bench mix); writer >= 90 %% of a raw insert of the same rows (docs/performance.md)\n");
    if (getenv("VT_BENCH_KEEP")) {
        printf("kept   : %s %s %s\n", zPath, zOne, zMulti);
    } else {
        unlink(zPath);
        unlink(zOne);
        unlink(zMulti);
    }
    return 0;
}
