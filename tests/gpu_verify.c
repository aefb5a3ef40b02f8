/* The known answer of each CUDA sample in samples/cuda, checked with SQL against its trace. */
#include "gpu_verify.h"

#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace/schema.h"

#define MIB (1024LL * 1024LL)

/* Known answers: keep in step with the comment at the top of each samples/cuda/<name>.cu. */
#define LEAK_LEAKED_BASE (3 * MIB) /* 8 x (3 MiB + 4096 i), never freed */
#define LEAK_LEAKED_N 8
#define LEAK_FREED_BASE (5 * MIB) /* 4 x (5 MiB + 4096 j), freed */
#define LEAK_FREED_N 4
#define COPY_BYTES (24 * MIB + 12288) /* copies: every copy, the pinned and the device buffer */
#define COPY_REPEAT 5
#define OOM_AFTER_BASE (7 * MIB) /* oom: 4 x (7 MiB + 4096 i) after the failure */
#define OOM_AFTER_N 4
#define POOL_DEFAULT_BASE (9 * MIB) /* pool: 6 x (9 MiB + 4096 i) from the default pool */
#define POOL_DEFAULT_N 6
#define POOL_EXPLICIT_BASE (11 * MIB) /* pool: 4 x (11 MiB + 4096 j) from the explicit pool */
#define POOL_EXPLICIT_N 4
#define POOL_THRESHOLD (64 * MIB)
#define PHASES_WEIGHTS (17 * MIB)
#define PHASES_ACT_BASE (8 * MIB) /* 3 per iteration */
#define PHASES_ACT_N 3
#define PHASES_ITER_N 5
#define PHASES_OUT_BASE (10 * MIB) /* one per batch, kept */
#define PHASES_BATCH_N 6
#define PHASES_TRAIN_PEAK 43003904LL
#define PHASES_VAL_PEAK 80801792LL
#define MANAGED_BASE (13 * MIB)
#define MANAGED_N 3
#define THREADS_XY (4 * MIB + 4096) /* threads: X, Y, and the copy */
#define THREADS_PINNED (8 * MIB + 4096)
#define GRAPHS_A (6 * MIB + 4096)
#define GRAPHS_T (5 * MIB + 4096) /* the graph's allocation node */
#define GRAPHS_LAUNCHES 3
#define SHARING_B (3 * MIB + 4096)
#define TAKEOVER_FIRST (2 * MIB + 4096)
#define TAKEOVER_ROUNDS 40 /* of 1 MiB + 4096 i */

/* The sample's kernel, matched in the mangled or demangled name. */
#define FILL_KERNELS                                                                               \
    "SELECT count(*) FROM kernel k JOIN string s ON s.id = k.name_id WHERE s.value LIKE "          \
    "'%%vt_sample_fill%%'"

/* NVTX ranges with their names, as a CTE named r. */
#define RANGES                                                                                     \
    "WITH r AS (SELECT n.id, n.start, n.end, n.kind, n.depth, n.thread, s.value AS name FROM "     \
    "nvtx_range n JOIN string s ON s.id = n.name_id) "

struct check {
    sqlite3 *db;
    FILE *pOut;
    int nFail;
};

static const char *const azSample[] = {"leak",    "copies",  "oom",    "pool",    "phases", "managed",
                                       "vmm",     "threads", "graphs", "sharing", "takeover"};

int vt__gpu_sample_known(const char *zSample)
{
    size_t i;
    for (i = 0; i < sizeof azSample / sizeof azSample[0]; i++)
        if (strcmp(zSample, azSample[i]) == 0) return 1;
    return 0;
}

int vt__gpu_sample_signal(const char *zSample)
{
    return strcmp(zSample, "threads") == 0 ? SIGKILL : 0;
}

const char *vt__gpu_sample_env(const char *zSample)
{
    /* a short flush interval: the takeover is noticed after 20 of them (2 s) */
    return strcmp(zSample, "takeover") == 0 ? "VRAMTRACE_FLUSH_MS=100" : NULL;
}

void vt__gpu_sample_info(const char *zSample, FILE *pOut)
{
    long long nLeaked = 0;
    int i;
    fprintf(pOut, "signal %d\n", vt__gpu_sample_signal(zSample));
    if (vt__gpu_sample_env(zSample)) fprintf(pOut, "env %s\n", vt__gpu_sample_env(zSample));
    if (strcmp(zSample, "leak") == 0) {
        for (i = 0; i < LEAK_LEAKED_N; i++) nLeaked += LEAK_LEAKED_BASE + 4096LL * i;
        fprintf(pOut, "leaked %lld %d\n", nLeaked, LEAK_LEAKED_N);
    }
}

int vt__gpu_facts_parse(const char *zText, struct vt_gpu_facts *pFacts)
{
    static const char zTag[] = "vt-fact: ";
    const char *z = zText;
    pFacts->nFact = 0;
    while (z && *z) {
        const char *zEnd = strchr(z, '\n');
        size_t nLine = zEnd ? (size_t)(zEnd - z) : strlen(z);
        if (nLine > sizeof zTag - 1 && strncmp(z, zTag, sizeof zTag - 1) == 0) {
            const char *zKey = z + sizeof zTag - 1,
                       *zEq = memchr(zKey, '=', nLine - (sizeof zTag - 1));
            char zValue[32], *zStop = NULL;
            size_t nKey = zEq ? (size_t)(zEq - zKey) : 0;
            size_t nValue = zEq ? (size_t)(z + nLine - zEq - 1) : 0;
            if (!zEq || nKey == 0 || nKey >= sizeof pFacts->aFact[0].zKey || nValue == 0 ||
                nValue >= sizeof zValue || pFacts->nFact >= VT_GPU_MAX_FACTS)
                return -1;
            memcpy(zValue, zEq + 1, nValue);
            zValue[nValue] = 0;
            pFacts->aFact[pFacts->nFact].value = strtoull(zValue, &zStop, 0);
            if (!zStop || *zStop != 0) return -1;
            memcpy(pFacts->aFact[pFacts->nFact].zKey, zKey, nKey);
            pFacts->aFact[pFacts->nFact].zKey[nKey] = 0;
            pFacts->nFact++;
        }
        z = zEnd ? zEnd + 1 : NULL;
    }
    return pFacts->nFact;
}

int vt__gpu_fact(const struct vt_gpu_facts *pFacts, const char *zKey, unsigned long long *pValue)
{
    int i;
    for (i = 0; pFacts && i < pFacts->nFact; i++) {
        if (strcmp(pFacts->aFact[i].zKey, zKey) == 0) {
            *pValue = pFacts->aFact[i].value;
            return 0;
        }
    }
    return -1;
}

/*
 * Run one query (an sqlite3_mprintf format) that yields one integer (NULL reads
 * as 0). On an SQL error, counts a failure, prints it and returns LLONG_MIN,
 * which no expectation accepts.
 */
static long long query_int(struct check *c, const char *zFmt, ...)
{
    sqlite3_stmt *pStmt = NULL;
    long long v = LLONG_MIN;
    va_list ap;
    char *zSql;
    int rc;

    va_start(ap, zFmt);
    zSql = sqlite3_vmprintf(zFmt, ap);
    va_end(ap);
    if (!zSql) {
        fprintf(c->pOut, "FAIL  out of memory building a query\n");
        c->nFail++;
        return v;
    }
    rc = sqlite3_prepare_v2(c->db, zSql, -1, &pStmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(pStmt);
    if (rc == SQLITE_ROW)
        v = sqlite3_column_int64(pStmt, 0);
    else if (rc == SQLITE_DONE)
        v = 0;
    else {
        fprintf(c->pOut, "FAIL  SQL error: %s\n      in: %s\n", sqlite3_errmsg(c->db), zSql);
        c->nFail++;
    }
    sqlite3_finalize(pStmt);
    sqlite3_free(zSql);
    return v;
}

/* One check: found must equal expected. */
static void expect_eq(struct check *c, const char *zWhat, long long expected, long long found)
{
    if (found == expected) {
        fprintf(c->pOut, "ok    %s: %lld\n", zWhat, found);
        return;
    }
    if (found == LLONG_MIN)
        fprintf(c->pOut, "FAIL  %s: query failed\n", zWhat);
    else
        fprintf(c->pOut, "FAIL  %s: expected %lld, found %lld\n", zWhat, expected, found);
    c->nFail++;
}

/* One check: found must be at most bound. */
static void expect_le(struct check *c, const char *zWhat, long long found, long long bound)
{
    if (found != LLONG_MIN && found <= bound) {
        fprintf(c->pOut, "ok    %s: %lld <= %lld\n", zWhat, found, bound);
        return;
    }
    fprintf(c->pOut, "FAIL  %s: expected at most %lld, found %lld\n", zWhat, bound, found);
    c->nFail++;
}

/* One check: found must be strictly greater than bound. */
static void expect_gt(struct check *c, const char *zWhat, long long found, long long bound)
{
    if (found != LLONG_MIN && found > bound) {
        fprintf(c->pOut, "ok    %s: %lld > %lld\n", zWhat, found, bound);
        return;
    }
    fprintf(c->pOut, "FAIL  %s: expected more than %lld, found %lld\n", zWhat, bound, found);
    c->nFail++;
}

/* Fetch a run-time fact the sample printed; a missing one is a failed check. */
static int need_fact(struct check *c, const struct vt_gpu_facts *pFacts, const char *zKey,
                     long long *pValue)
{
    unsigned long long v = 0;
    if (vt__gpu_fact(pFacts, zKey, &v) != 0 || v > (unsigned long long)LLONG_MAX) {
        fprintf(c->pOut, "FAIL  the sample printed no usable \"vt-fact: %s=\" line\n", zKey);
        c->nFail++;
        return -1;
    }
    *pValue = (long long)v;
    return 0;
}

/* Write "(b, b+4096, ..., b+4096*(n-1))" into zBuf (room for 16 numbers of 20 digits). */
static const char *series(char *zBuf, size_t nBuf, long long base, int n)
{
    size_t off = 0;
    int i;
    for (i = 0; i < n && off < nBuf; i++)
        off += (size_t)snprintf(zBuf + off, nBuf - off, "%s%lld", i ? "," : "(", base + 4096LL * i);
    if (off < nBuf) snprintf(zBuf + off, nBuf - off, ")");
    return zBuf;
}

/* Print up to 40 rows of zSql under zTitle: what the trace holds, for a failed run. */
static void dump(struct check *c, const char *zTitle, const char *zSql)
{
    sqlite3_stmt *pStmt = NULL;
    int nRow = 0, i;
    fprintf(c->pOut, "  -- %s\n", zTitle);
    if (sqlite3_prepare_v2(c->db, zSql, -1, &pStmt, NULL) != SQLITE_OK) {
        fprintf(c->pOut, "     (%s)\n", sqlite3_errmsg(c->db));
        return;
    }
    while (sqlite3_step(pStmt) == SQLITE_ROW && nRow++ < 40) {
        fprintf(c->pOut, "    ");
        for (i = 0; i < sqlite3_column_count(pStmt); i++) {
            const unsigned char *z = sqlite3_column_text(pStmt, i);
            fprintf(c->pOut, "%s%s", i ? " | " : "", z ? (const char *)z : "NULL");
        }
        fprintf(c->pOut, "\n");
    }
    sqlite3_finalize(pStmt);
}

/* After a failure: an overview of everything the trace holds that a known answer speaks of. */
static void dump_overview(struct check *c)
{
    fprintf(c->pOut, "what the trace holds:\n");
    dump(c, "meta",
         "SELECT key, value FROM meta WHERE key NOT LIKE 'config.%' "
         "AND key NOT LIKE 'env.%' ORDER BY key");
    dump(c, "device(id, name, total_bytes)", "SELECT id, name, total_bytes FROM device");
    dump(c, "dropped(source, what, count)", "SELECT source, what, count FROM dropped");
    dump(c, "memory_event(op, mem_kind, is_async, bytes, rows, pool_threshold)",
         "SELECT op, mem_kind, is_async, bytes, count(*), max(pool_threshold) FROM memory_event "
         "GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 4");
    dump(c, "memcpy(copy_kind, src_kind, dst_kind, bytes, rows, with src, with dst)",
         "SELECT copy_kind, src_kind, dst_kind, bytes, count(*), count(src), count(dst) FROM "
         "memcpy GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4");
    dump(c, "api_call(api, status, rows)",
         "SELECT e.name, a.status, count(*) FROM api_call a LEFT JOIN enum_api e ON e.id = a.api "
         "GROUP BY a.api, a.status ORDER BY a.api");
    dump(c, "oom_event(api, bytes, status, free_bytes, total_bytes)",
         "SELECT api, bytes, status, free_bytes, total_bytes FROM oom_event");
    dump(c, "pool_event(op, pool_type, address, threshold, size)",
         "SELECT op, pool_type, address, threshold, size FROM pool_event ORDER BY ts");
    dump(c, "kernel(name, launches)",
         "SELECT s.value, count(*) FROM kernel k LEFT JOIN string s ON s.id = k.name_id "
         "GROUP BY k.name_id");
    dump(c, "nvtx_range(name, kind, depth, start, end)",
         "SELECT s.value, n.kind, n.depth, n.start, n.end FROM nvtx_range n LEFT JOIN string s "
         "ON s.id = n.name_id ORDER BY n.start");
}

/*
 * What every trace must hold: process meta, clock anchors, device 0, no
 * losses, and a clean close, or none for a sample that kills itself.
 */
static void verify_common(struct check *c, long long pid, int bKilled)
{
    expect_eq(c, "meta pid is the sample's pid", pid,
              query_int(c, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'pid'"));
    expect_eq(c, "meta tracer_version is set", 1,
              query_int(c, "SELECT count(*) FROM meta WHERE key = 'tracer_version' AND "
                           "length(value) > 0"));
    expect_eq(c, "meta clock anchors (cupti, wall) are set", 2,
              query_int(c, "SELECT count(*) FROM meta WHERE key IN ('clock_anchor_cupti_ns', "
                           "'clock_anchor_wall_ns') AND CAST(value AS INTEGER) > 0"));
    if (bKilled)
        expect_eq(c, "meta closed_cleanly absent (the job was killed)", 0,
                  query_int(c, "SELECT count(*) FROM meta WHERE key = 'closed_cleanly'"));
    else
        expect_eq(c, "meta closed_cleanly = 1", 1,
                  query_int(c, "SELECT count(*) FROM meta WHERE key = 'closed_cleanly' AND "
                               "value = '1'"));
    /* what recorded it, on this machine's own CUPTI: the libcupti file, the layout table, and either
     * a release the table lists or the kinds it could not read named (docs/tracer.md, "Versions") */
    expect_eq(c, "meta cupti_library and cupti_layout_table are set", 2,
              query_int(c, "SELECT count(*) FROM meta WHERE key IN ('cupti_library', 'cupti_layout_table') AND "
                           "length(value) > 0"));
    expect_eq(c, "meta cupti_layout is a listed release, or the reduced kinds are named", 1,
              query_int(c, "SELECT count(*) FROM meta l WHERE l.key = 'cupti_layout' AND (l.value GLOB '13.[0-9]*' "
                           "OR EXISTS (SELECT 1 FROM meta r WHERE r.key = 'cupti_kinds_reduced'))"));
    expect_eq(c, "meta cupti_layout matches cupti_version's release", 1,
              query_int(c, "SELECT count(*) FROM meta l, meta v WHERE l.key = 'cupti_layout' AND "
                           "v.key = 'cupti_version' AND (l.value GLOB 'unknown*' OR "
                           "l.value = (CAST(v.value AS INTEGER) / 10000) || '.' || (CAST(v.value AS INTEGER) / 100 %% 100))"));
    expect_eq(c, "device 0 row with a name and total_bytes", 1,
              query_int(c, "SELECT count(*) FROM device WHERE id = 0 AND length(name) > 0 AND "
                           "total_bytes > 0"));
    expect_eq(c, "records dropped", 0, query_int(c, "SELECT COALESCE(SUM(count), 0) FROM dropped"));
}

/* Rows of memory_event with this op and kind whose bytes are in zSet, and zExtra (SQL) if given. */
static long long count_mem(struct check *c, int op, int kind, const char *zSet, const char *zExtra)
{
    return query_int(c,
                     "SELECT count(*) FROM memory_event WHERE op = %d AND mem_kind = %d AND "
                     "bytes IN %s AND (%s)",
                     op, kind, zSet, zExtra ? zExtra : "1");
}

/* Frees of kind with bytes in zSet that release an earlier allocation of that address and size. */
static long long count_paired_frees(struct check *c, int kind, const char *zSet)
{
    return query_int(c,
                     "SELECT count(*) FROM memory_event f WHERE f.op = %d AND f.mem_kind = %d "
                     "AND f.bytes IN %s AND EXISTS (SELECT 1 FROM memory_event a WHERE "
                     "a.op = %d AND a.mem_kind = f.mem_kind AND a.address = f.address AND "
                     "a.bytes = f.bytes AND a.ts <= f.ts)",
                     VT_MEMOP_FREE, kind, zSet, VT_MEMOP_ALLOC);
}

/* leak: 8 device buffers never freed, 4 freed, 12 fills. */
static void verify_leak(struct check *c)
{
    char zLeaked[400], zFreed[400];
    series(zLeaked, sizeof zLeaked, LEAK_LEAKED_BASE, LEAK_LEAKED_N);
    series(zFreed, sizeof zFreed, LEAK_FREED_BASE, LEAK_FREED_N);
    expect_eq(c, "device allocations of the leaked sizes", LEAK_LEAKED_N,
              count_mem(c, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, zLeaked, NULL));
    expect_eq(c, "distinct leaked sizes allocated", LEAK_LEAKED_N,
              query_int(c,
                        "SELECT count(DISTINCT bytes) FROM memory_event WHERE op = %d AND "
                        "mem_kind = %d AND bytes IN %s",
                        VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, zLeaked));
    expect_eq(c, "frees of leaked buffers", 0,
              query_int(c,
                        "SELECT count(*) FROM memory_event f JOIN memory_event a ON "
                        "a.address = f.address AND a.op = %d AND a.mem_kind = %d AND "
                        "a.bytes IN %s WHERE f.op = %d AND f.ts >= a.ts",
                        VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, zLeaked, VT_MEMOP_FREE));
    expect_eq(c, "device allocations of the freed sizes", LEAK_FREED_N,
              count_mem(c, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, zFreed, NULL));
    expect_eq(c, "frees of the freed sizes", LEAK_FREED_N,
              count_mem(c, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, zFreed, NULL));
    expect_eq(c, "frees paired with their allocation (address, bytes)", LEAK_FREED_N,
              count_paired_frees(c, VT_MEMKIND_DEVICE, zFreed));
    expect_eq(c, "vt_sample_fill launches", LEAK_LEAKED_N + LEAK_FREED_N,
              query_int(c, FILL_KERNELS));
}

/* Copies of COPY_BYTES with this copy kind, source and destination kinds and addresses. */
static long long count_copies(struct check *c, int copyKind, int srcKind, int dstKind,
                              long long src, long long dst)
{
    return query_int(c,
                     "SELECT count(*) FROM memcpy WHERE bytes = %lld AND copy_kind = %d AND "
                     "src_kind = %d AND dst_kind = %d AND src = %lld AND dst = %lld",
                     COPY_BYTES, copyKind, srcKind, dstKind, src, dst);
}

/* api_call rows of cudaMemcpy of COPY_BYTES from src to dst whose correlation has a memcpy row. */
static long long count_copy_calls(struct check *c, long long src, long long dst)
{
    return query_int(c,
                     "SELECT count(*) FROM api_call a WHERE a.api = %d AND a.bytes = %lld AND "
                     "a.status = 0 AND a.src = %lld AND a.dst = %lld AND EXISTS (SELECT 1 FROM "
                     "memcpy m WHERE m.correlation = a.correlation AND m.bytes = a.bytes)",
                     VT_API_ID_60, COPY_BYTES, src, dst);
}

/* copies: 5 HtoD + 5 DtoH from pageable, the same from pinned, with addresses. */
static void verify_copies(struct check *c, const struct vt_gpu_facts *pFacts)
{
    long long pageable = 0, pinned = 0, device = 0;
    if (need_fact(c, pFacts, "pageable", &pageable) || need_fact(c, pFacts, "pinned", &pinned) ||
        need_fact(c, pFacts, "device", &device))
        return;
    expect_eq(c, "copies of COPY_BYTES", 4 * COPY_REPEAT,
              query_int(c, "SELECT count(*) FROM memcpy WHERE bytes = %lld", COPY_BYTES));
    expect_eq(
        c, "HtoD pageable -> device (addresses match)", COPY_REPEAT,
        count_copies(c, VT_COPY_HTOD, VT_MEMKIND_PAGEABLE, VT_MEMKIND_DEVICE, pageable, device));
    expect_eq(
        c, "DtoH device -> pageable (addresses match)", COPY_REPEAT,
        count_copies(c, VT_COPY_DTOH, VT_MEMKIND_DEVICE, VT_MEMKIND_PAGEABLE, device, pageable));
    expect_eq(c, "HtoD pinned -> device (addresses match)", COPY_REPEAT,
              count_copies(c, VT_COPY_HTOD, VT_MEMKIND_PINNED, VT_MEMKIND_DEVICE, pinned, device));
    expect_eq(c, "DtoH device -> pinned (addresses match)", COPY_REPEAT,
              count_copies(c, VT_COPY_DTOH, VT_MEMKIND_DEVICE, VT_MEMKIND_PINNED, device, pinned));
    expect_eq(c, "cudaMemcpy calls pageable -> device", COPY_REPEAT,
              count_copy_calls(c, pageable, device));
    expect_eq(c, "cudaMemcpy calls device -> pageable", COPY_REPEAT,
              count_copy_calls(c, device, pageable));
    expect_eq(c, "cudaMemcpy calls pinned -> device", COPY_REPEAT,
              count_copy_calls(c, pinned, device));
    expect_eq(c, "cudaMemcpy calls device -> pinned", COPY_REPEAT,
              count_copy_calls(c, device, pinned));
    expect_eq(c, "pinned allocation (cudaMallocHost) at the pinned address", 1,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND mem_kind = %d AND "
                        "bytes = %lld AND address = %lld",
                        VT_MEMOP_ALLOC, VT_MEMKIND_PINNED, COPY_BYTES, pinned));
    expect_eq(c, "pinned free (cudaFreeHost)", 1,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND mem_kind = %d AND "
                        "address = %lld",
                        VT_MEMOP_FREE, VT_MEMKIND_PINNED, pinned));
    expect_eq(c, "device allocation at the device address", 1,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND mem_kind = %d AND "
                        "bytes = %lld AND address = %lld",
                        VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, COPY_BYTES, device));
    expect_eq(c, "device free", 1,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND mem_kind = %d AND "
                        "address = %lld AND bytes = %lld",
                        VT_MEMOP_FREE, VT_MEMKIND_DEVICE, device, COPY_BYTES));
}

/* oom: one failed cudaMalloc of total + 1 GiB, then 4 allocations that work. */
static void verify_oom(struct check *c, const struct vt_gpu_facts *pFacts)
{
    long long request = 0, total = 0;
    char zAfter[400];
    if (need_fact(c, pFacts, "request", &request) || need_fact(c, pFacts, "total", &total)) return;
    series(zAfter, sizeof zAfter, OOM_AFTER_BASE, OOM_AFTER_N);
    expect_eq(c, "oom_event rows", 1, query_int(c, "SELECT count(*) FROM oom_event"));
    expect_eq(c, "oom_event: cudaMalloc of the request, cudaErrorMemoryAllocation", 1,
              query_int(c,
                        "SELECT count(*) FROM oom_event WHERE api = %d AND bytes = %lld AND "
                        "status = 2",
                        VT_API_ID_1, request));
    expect_eq(c, "that oom_event: 0 < free_bytes <= total_bytes = device total", 1,
              query_int(c,
                        "SELECT count(*) FROM oom_event WHERE api = %d AND bytes = %lld AND "
                        "free_bytes > 0 AND free_bytes <= total_bytes AND total_bytes = %lld",
                        VT_API_ID_1, request, total));
    expect_eq(c, "api_call of the failed cudaMalloc (status 2)", 1,
              query_int(c,
                        "SELECT count(*) FROM api_call WHERE api = %d AND bytes = %lld AND "
                        "status = 2",
                        VT_API_ID_1, request));
    expect_eq(c, "allocations of the requested size", 0,
              query_int(c, "SELECT count(*) FROM memory_event WHERE op = %d AND bytes = %lld",
                        VT_MEMOP_ALLOC, request));
    expect_eq(c, "device allocations after the failure", OOM_AFTER_N,
              count_mem(c, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, zAfter,
                        "ts > (SELECT max(ts) FROM oom_event)"));
    expect_eq(c, "frees of those, paired", OOM_AFTER_N,
              count_paired_frees(c, VT_MEMKIND_DEVICE, zAfter));
    expect_eq(c, "vt_sample_fill launches", OOM_AFTER_N, query_int(c, FILL_KERNELS));
}

/* pool: 6 async allocations from the default pool, 4 from an explicit pool with a threshold. */
static void verify_pool(struct check *c)
{
    char zDefault[400], zExplicit[400], zThreshold[64];
    snprintf(zThreshold, sizeof zThreshold, "pool_threshold = %lld", POOL_THRESHOLD);
    series(zDefault, sizeof zDefault, POOL_DEFAULT_BASE, POOL_DEFAULT_N);
    series(zExplicit, sizeof zExplicit, POOL_EXPLICIT_BASE, POOL_EXPLICIT_N);
    expect_eq(c, "async allocations, default pool sizes", POOL_DEFAULT_N,
              count_mem(c, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, zDefault, "is_async = 1"));
    expect_eq(c, "distinct default pool sizes", POOL_DEFAULT_N,
              query_int(c,
                        "SELECT count(DISTINCT bytes) FROM memory_event WHERE op = %d AND "
                        "is_async = 1 AND bytes IN %s",
                        VT_MEMOP_ALLOC, zDefault));
    expect_eq(c, "async frees, default pool sizes", POOL_DEFAULT_N,
              count_mem(c, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, zDefault, "is_async = 1"));
    expect_eq(c, "default pool frees paired", POOL_DEFAULT_N,
              count_paired_frees(c, VT_MEMKIND_DEVICE, zDefault));
    expect_eq(c, "async allocations, explicit pool sizes", POOL_EXPLICIT_N,
              count_mem(c, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, zExplicit, "is_async = 1"));
    expect_eq(c, "async frees, explicit pool sizes", POOL_EXPLICIT_N,
              count_mem(c, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, zExplicit, "is_async = 1"));
    expect_eq(c, "explicit pool frees paired", POOL_EXPLICIT_N,
              count_paired_frees(c, VT_MEMKIND_DEVICE, zExplicit));
    expect_eq(c, "explicit pool allocations carry the 64 MiB release threshold", POOL_EXPLICIT_N,
              count_mem(c, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, zExplicit, zThreshold));
    expect_eq(c, "all 10 allocations on one stream", 1,
              query_int(c,
                        "SELECT count(DISTINCT stream) FROM memory_event WHERE op = %d AND "
                        "stream IS NOT NULL AND (bytes IN %s OR bytes IN %s)",
                        VT_MEMOP_ALLOC, zDefault, zExplicit));
    expect_eq(c, "explicit pool allocations share one pool, not the default one", 1,
              query_int(c,
                        "SELECT count(DISTINCT pool_address) FROM memory_event WHERE op = %d "
                        "AND bytes IN %s AND pool_address IS NOT NULL AND pool_address NOT IN "
                        "(SELECT pool_address FROM memory_event WHERE op = %d AND bytes IN %s "
                        "AND pool_address IS NOT NULL)",
                        VT_MEMOP_ALLOC, zExplicit, VT_MEMOP_ALLOC, zDefault));
    expect_eq(c, "pool_event CREATED for the explicit pool", 1,
              query_int(c,
                        "SELECT count(*) FROM pool_event WHERE op = %d AND address IN (SELECT "
                        "pool_address FROM memory_event WHERE op = %d AND bytes IN %s)",
                        VT_POOLOP_CREATED, VT_MEMOP_ALLOC, zExplicit));
    expect_eq(c, "vt_sample_fill launches", POOL_DEFAULT_N + POOL_EXPLICIT_N,
              query_int(c, FILL_KERNELS));
}

/* Peak of the phases sample's own live device bytes while NVTX range zRange is open. */
static long long phase_peak(struct check *c, const char *zOwn, const char *zRange)
{
    return query_int(c,
                     RANGES ", own AS (SELECT id, ts, CASE op WHEN %d THEN bytes ELSE -bytes "
                            "END AS d FROM memory_event WHERE mem_kind = %d AND op IN (%d, %d) "
                            "AND bytes IN %s), live AS (SELECT ts, SUM(d) OVER (ORDER BY ts, "
                            "id) AS b FROM own) SELECT max(live.b) FROM live JOIN r ON "
                            "r.name = %Q AND live.ts BETWEEN r.start AND r.end",
                     VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, VT_MEMOP_ALLOC, VT_MEMOP_FREE, zOwn,
                     zRange);
}

/* phases: train (5 iterations) then validation (6 batches whose outputs stay alive). */
static void verify_phases(struct check *c)
{
    char zAct[200], zOut[300], zOwn[600];
    long long train, validation;
    series(zAct, sizeof zAct, PHASES_ACT_BASE, PHASES_ACT_N);
    series(zOut, sizeof zOut, PHASES_OUT_BASE, PHASES_BATCH_N);
    snprintf(zOwn, sizeof zOwn, "(%lld,%.*s,%s", PHASES_WEIGHTS, (int)strlen(zAct) - 2, zAct + 1,
             zOut + 1);

    expect_eq(c, "NVTX range \"train\"", 1,
              query_int(c, RANGES "SELECT count(*) FROM r WHERE name = 'train'"));
    expect_eq(c, "NVTX range \"validation\"", 1,
              query_int(c, RANGES "SELECT count(*) FROM r WHERE name = 'validation'"));
    expect_eq(c, "NVTX ranges \"iter 0\" .. \"iter 4\"", PHASES_ITER_N,
              query_int(c, RANGES "SELECT count(*) FROM r WHERE name IN ('iter 0', 'iter 1', "
                                  "'iter 2', 'iter 3', 'iter 4')"));
    expect_eq(c, "NVTX ranges \"batch 0\" .. \"batch 5\"", PHASES_BATCH_N,
              query_int(c, RANGES "SELECT count(*) FROM r WHERE name IN ('batch 0', 'batch 1', "
                                  "'batch 2', 'batch 3', 'batch 4', 'batch 5')"));
    expect_eq(c, "closed push/pop ranges, all on one thread", 2 + PHASES_ITER_N + PHASES_BATCH_N,
              query_int(c,
                        RANGES "SELECT count(*) FROM r WHERE kind = %d AND end > start AND "
                               "thread = (SELECT thread FROM r WHERE name = 'train') AND "
                               "(name IN ('train', 'validation') OR name GLOB 'iter [0-9]*' OR "
                               "name GLOB 'batch [0-9]*')",
                        VT_NVTX_PUSHPOP));
    expect_eq(c, "depth 0: train, validation", 2,
              query_int(c, RANGES "SELECT count(*) FROM r WHERE depth = 0 AND name IN ('train', "
                                  "'validation')"));
    expect_eq(c, "depth 1: every iter and batch", PHASES_ITER_N + PHASES_BATCH_N,
              query_int(c, RANGES "SELECT count(*) FROM r WHERE depth = 1 AND (name GLOB "
                                  "'iter [0-9]*' OR name GLOB 'batch [0-9]*')"));
    expect_eq(c, "iterations nested inside train", PHASES_ITER_N,
              query_int(c, RANGES "SELECT count(*) FROM r i JOIN r t ON t.name = 'train' WHERE "
                                  "i.name GLOB 'iter [0-9]*' AND i.start >= t.start AND "
                                  "i.end <= t.end"));
    expect_eq(c, "batches nested inside validation", PHASES_BATCH_N,
              query_int(c, RANGES "SELECT count(*) FROM r b JOIN r v ON v.name = 'validation' "
                                  "WHERE b.name GLOB 'batch [0-9]*' AND b.start >= v.start AND "
                                  "b.end <= v.end"));
    expect_eq(c, "train ends before validation starts", 1,
              query_int(c, RANGES "SELECT count(*) FROM r t JOIN r v ON v.name = 'validation' "
                                  "WHERE t.name = 'train' AND t.end <= v.start"));
    expect_eq(c, "vt_sample_fill launches", 1 + PHASES_ITER_N * PHASES_ACT_N + PHASES_BATCH_N,
              query_int(c, FILL_KERNELS));
    expect_eq(c, "iterations each holding 3 fills and 3 activation allocations and frees",
              PHASES_ITER_N,
              query_int(c,
                        RANGES "SELECT count(*) FROM r WHERE name GLOB 'iter [0-9]*' AND "
                               "(SELECT count(*) FROM kernel k JOIN string s ON s.id = "
                               "k.name_id WHERE s.value LIKE '%%vt_sample_fill%%' AND k.start "
                               "BETWEEN r.start AND r.end) = 3 AND (SELECT count(*) FROM "
                               "memory_event m WHERE m.op = %d AND m.mem_kind = %d AND m.bytes "
                               "IN %s AND m.ts BETWEEN r.start AND r.end) = 3 AND (SELECT "
                               "count(*) FROM memory_event m WHERE m.op = %d AND m.bytes IN %s "
                               "AND m.ts BETWEEN r.start AND r.end) = 3",
                        VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, zAct, VT_MEMOP_FREE, zAct));
    expect_eq(c, "activation allocations in all", PHASES_ITER_N * PHASES_ACT_N,
              count_mem(c, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, zAct, NULL));
    expect_eq(c, "batches each holding 1 fill and 1 output allocation", PHASES_BATCH_N,
              query_int(c,
                        RANGES "SELECT count(*) FROM r WHERE name GLOB 'batch [0-9]*' AND "
                               "(SELECT count(*) FROM kernel k JOIN string s ON s.id = "
                               "k.name_id WHERE s.value LIKE '%%vt_sample_fill%%' AND k.start "
                               "BETWEEN r.start AND r.end) = 1 AND (SELECT count(*) FROM "
                               "memory_event m WHERE m.op = %d AND m.mem_kind = %d AND m.bytes "
                               "IN %s AND m.ts BETWEEN r.start AND r.end) = 1",
                        VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, zOut));
    expect_eq(c, "outputs and weights freed after validation", PHASES_BATCH_N + 1,
              query_int(c,
                        RANGES "SELECT count(*) FROM memory_event m JOIN r ON r.name = "
                               "'validation' WHERE m.op = %d AND m.mem_kind = %d AND m.ts > "
                               "r.end AND (m.bytes IN %s OR m.bytes = %lld)",
                        VT_MEMOP_FREE, VT_MEMKIND_DEVICE, zOut, PHASES_WEIGHTS));
    expect_eq(c, "weights allocated before train", 1,
              query_int(c,
                        RANGES "SELECT count(*) FROM memory_event m JOIN r ON r.name = 'train' "
                               "WHERE m.op = %d AND m.mem_kind = %d AND m.bytes = %lld AND "
                               "m.ts < r.start",
                        VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, PHASES_WEIGHTS));
    train = phase_peak(c, zOwn, "train");
    validation = phase_peak(c, zOwn, "validation");
    expect_eq(c, "peak of the sample's live bytes during train", PHASES_TRAIN_PEAK, train);
    expect_eq(c, "peak of the sample's live bytes during validation", PHASES_VAL_PEAK, validation);
    expect_gt(c, "validation peak exceeds training peak", validation, train);
}

/* managed: 3 managed allocations, all freed, none of them device memory. */
static void verify_managed(struct check *c)
{
    char zSet[200];
    series(zSet, sizeof zSet, MANAGED_BASE, MANAGED_N);
    expect_eq(c, "managed allocations", MANAGED_N,
              count_mem(c, VT_MEMOP_ALLOC, VT_MEMKIND_MANAGED, zSet, NULL));
    expect_eq(c, "managed frees paired", MANAGED_N,
              count_paired_frees(c, VT_MEMKIND_MANAGED, zSet));
    expect_eq(c, "allocations of those sizes of any other kind", 0,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op IN (%d, %d) AND bytes IN %s "
                        "AND mem_kind <> %d",
                        VT_MEMOP_ALLOC, VT_MEMOP_FREE, zSet, VT_MEMKIND_MANAGED));
    expect_eq(c, "vt_sample_fill launches", MANAGED_N, query_int(c, FILL_KERNELS));
}

/* memory_event rows with this op at address with bytes (bytes < 0: any) and handle (< 0: any). */
static long long count_vmm(struct check *c, int op, long long address, long long bytes,
                           long long handle)
{
    return query_int(c,
                     "SELECT count(*) FROM memory_event WHERE op = %d AND address = %lld AND "
                     "(%lld < 0 OR bytes = %lld) AND (%lld < 0 OR pool_address = %lld)",
                     op, address, bytes, bytes, handle, handle);
}

/* vmm: 2 cuMemCreate, 2 cuMemMap into one reserved range, 2 cuMemUnmap, 2 cuMemRelease. */
static void verify_vmm(struct check *c, const struct vt_gpu_facts *pFacts)
{
    long long gran = 0, va = 0, h1 = 0, h2 = 0, n1, n2;
    if (need_fact(c, pFacts, "granularity", &gran) || need_fact(c, pFacts, "va", &va) ||
        need_fact(c, pFacts, "handle_first", &h1) || need_fact(c, pFacts, "handle_second", &h2))
        return;
    n1 = 3 * gran;
    n2 = 5 * gran;
    expect_eq(c, "vmm_create rows", 2,
              query_int(c, "SELECT count(*) FROM memory_event WHERE op = %d", VT_MEMOP_VMM_CREATE));
    expect_eq(c, "vmm_create of the first handle (3 G bytes)", 1,
              count_vmm(c, VT_MEMOP_VMM_CREATE, h1, n1, -1));
    expect_eq(c, "vmm_create of the second handle (5 G bytes)", 1,
              count_vmm(c, VT_MEMOP_VMM_CREATE, h2, n2, -1));
    expect_eq(c, "vmm_map rows", 2,
              query_int(c, "SELECT count(*) FROM memory_event WHERE op = %d", VT_MEMOP_VMM_MAP));
    expect_eq(c, "vmm_map of the first handle at the range start", 1,
              count_vmm(c, VT_MEMOP_VMM_MAP, va, n1, h1));
    expect_eq(c, "vmm_map of the second handle right after it", 1,
              count_vmm(c, VT_MEMOP_VMM_MAP, va + n1, n2, h2));
    expect_eq(c, "vmm_unmap rows", 2,
              query_int(c, "SELECT count(*) FROM memory_event WHERE op = %d", VT_MEMOP_VMM_UNMAP));
    expect_eq(c, "vmm_unmap at the range start (3 G bytes)", 1,
              count_vmm(c, VT_MEMOP_VMM_UNMAP, va, n1, -1));
    expect_eq(c, "vmm_unmap right after it (5 G bytes)", 1,
              count_vmm(c, VT_MEMOP_VMM_UNMAP, va + n1, n2, -1));
    expect_eq(
        c, "vmm_release rows", 2,
        query_int(c, "SELECT count(*) FROM memory_event WHERE op = %d", VT_MEMOP_VMM_RELEASE));
    expect_eq(c, "vmm_release of both handles", 2,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND address IN "
                        "(%lld, %lld)",
                        VT_MEMOP_VMM_RELEASE, h1, h2));
    expect_eq(c, "each handle created, mapped, unmapped, released in that order", 2,
              query_int(c,
                        "SELECT count(*) FROM memory_event cr JOIN memory_event mp ON mp.op = "
                        "%d AND mp.pool_address = cr.address JOIN memory_event um ON um.op = %d "
                        "AND um.address = mp.address JOIN memory_event rl ON rl.op = %d AND "
                        "rl.address = cr.address WHERE cr.op = %d AND cr.ts <= mp.ts AND "
                        "mp.ts <= um.ts AND um.ts <= rl.ts",
                        VT_MEMOP_VMM_MAP, VT_MEMOP_VMM_UNMAP, VT_MEMOP_VMM_RELEASE,
                        VT_MEMOP_VMM_CREATE));
    expect_eq(c,
              "api_call: cuMemCreate, cuMemMap, cuMemUnmap, cuMemRelease x2, "
              "cuMemAddressReserve, cuMemAddressFree x1",
              10,
              query_int(c,
                        "SELECT count(*) FROM api_call WHERE status = 0 AND api IN (%d, %d, %d, "
                        "%d, %d, %d)",
                        VT_API_ID_40, VT_API_ID_41, VT_API_ID_42, VT_API_ID_43, VT_API_ID_44,
                        VT_API_ID_45));
    expect_eq(c, "vt_sample_fill launches", 1, query_int(c, FILL_KERNELS));
}

/*
 * threads: a helper thread's records reach the trace while the job runs (it is
 * SIGKILLed), NVTX kinds, depths and the range ended on another thread, thread
 * ids that join, and the buffer uses of triple-chevron launches.
 */
static void verify_threads(struct check *c, const struct vt_gpu_facts *pFacts)
{
    long long mainTid = 0, helperTid = 0, x = 0, y = 0, pinned = 0;
    if (need_fact(c, pFacts, "main_tid", &mainTid) || need_fact(c, pFacts, "helper_tid", &helperTid) ||
        need_fact(c, pFacts, "x", &x) || need_fact(c, pFacts, "y", &y) ||
        need_fact(c, pFacts, "pinned", &pinned))
        return;
    expect_eq(c, "the helper thread's pinned allocation (MEMORY2) though the job was killed", 1,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND mem_kind = %d AND "
                        "address = %lld AND bytes = %lld",
                        VT_MEMOP_ALLOC, VT_MEMKIND_PINNED, pinned, THREADS_PINNED));
    expect_eq(c, "... joined to the helper thread's cudaHostAlloc, same thread id", 1,
              query_int(c,
                        "SELECT count(*) FROM memory_event m JOIN api_call a ON a.correlation = "
                        "m.correlation AND a.api = %d WHERE m.address = %lld AND m.thread = %lld "
                        "AND a.thread = %lld",
                        VT_API_ID_7, pinned, helperTid, helperTid));
    expect_eq(c, "the helper thread's HtoD copy pinned -> Y", 1,
              query_int(c,
                        "SELECT count(*) FROM memcpy WHERE copy_kind = %d AND src_kind = %d AND "
                        "bytes = %lld AND src = %lld AND dst = %lld",
                        VT_COPY_HTOD, VT_MEMKIND_PINNED, THREADS_XY, pinned, y));
    expect_eq(c, "device allocations X and Y", 2,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND mem_kind = %d AND "
                        "bytes = %lld AND address IN (%lld, %lld)",
                        VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, THREADS_XY, x, y));
    expect_eq(c, "main thread's cudaMalloc calls by OS thread id", 2,
              query_int(c, "SELECT count(*) FROM api_call WHERE api = %d AND thread = %lld",
                        VT_API_ID_1, mainTid));
    expect_eq(c, "NVTX \"step\": push/pop, depth 0, main thread", 1,
              query_int(c, RANGES "SELECT count(*) FROM r WHERE name = 'step' AND kind = %d AND "
                                  "depth = 0 AND thread = %lld",
                        VT_NVTX_PUSHPOP, mainTid));
    expect_eq(c, "NVTX \"forward\": push/pop, depth 1, inside \"step\"", 1,
              query_int(c, RANGES "SELECT count(*) FROM r f JOIN r s ON s.name = 'step' WHERE "
                                  "f.name = 'forward' AND f.kind = %d AND f.depth = 1 AND "
                                  "f.start >= s.start AND f.end <= s.end",
                        VT_NVTX_PUSHPOP));
    expect_eq(c, "NVTX \"prefetch\": start/end, no depth, started on main, ended on the helper", 1,
              query_int(c,
                        "SELECT count(*) FROM nvtx_range n JOIN string s ON s.id = n.name_id WHERE "
                        "s.value = 'prefetch' AND n.kind = %d AND n.depth IS NULL AND n.thread = "
                        "%lld AND n.end_thread = %lld AND n.end >= n.start",
                        VT_NVTX_STARTEND, mainTid, helperTid));
    expect_eq(c, "both launches' arguments scanned", 2,
              query_int(c,
                        "SELECT count(*) FROM kernel k JOIN string s ON s.id = k.name_id WHERE "
                        "(s.value LIKE '%%vt_sample_fill%%' OR s.value LIKE '%%vt_sample_axpy%%') "
                        "AND k.args_scanned = 1"));
    expect_eq(c, "vt_sample_axpy used X and Y", 2,
              query_int(c,
                        "SELECT count(*) FROM buffer_use u JOIN kernel k ON k.correlation = "
                        "u.correlation JOIN string s ON s.id = k.name_id WHERE s.value LIKE "
                        "'%%vt_sample_axpy%%' AND u.kind = %d AND u.address IN (%lld, %lld)",
                        VT_USE_KERNEL_ARG, x, y));
    expect_eq(c, "vt_sample_fill used X", 1,
              query_int(c,
                        "SELECT count(*) FROM buffer_use u JOIN kernel k ON k.correlation = "
                        "u.correlation JOIN string s ON s.id = k.name_id WHERE s.value LIKE "
                        "'%%vt_sample_fill%%' AND u.kind = %d AND u.address = %lld",
                        VT_USE_KERNEL_ARG, x));
}

/* graphs: graph launches, their kernels, memsets and allocation node, uses marked unknown. */
static void verify_graphs(struct check *c, const struct vt_gpu_facts *pFacts)
{
    long long a = 0;
    if (need_fact(c, pFacts, "a", &a)) return;
    expect_eq(c, "cudaGraphLaunch calls", GRAPHS_LAUNCHES,
              query_int(c, "SELECT count(*) FROM api_call WHERE api = %d AND status = 0",
                        VT_API_ID_107));
    expect_eq(c, "graph kernels (2 per launch) with graph and node ids, uses unknown", 2 * GRAPHS_LAUNCHES,
              query_int(c, "SELECT count(*) FROM kernel WHERE graph_id IS NOT NULL AND graph_node_id "
                           "IS NOT NULL AND args_scanned = 0"));
    expect_eq(c, "graph kernels carry a graph launch's correlation id", 2 * GRAPHS_LAUNCHES,
              query_int(c,
                        "SELECT count(*) FROM kernel k WHERE k.graph_id IS NOT NULL AND EXISTS "
                        "(SELECT 1 FROM api_call a WHERE a.api = %d AND a.correlation = "
                        "k.correlation)",
                        VT_API_ID_107));
    expect_eq(c, "two distinct kernel nodes", 2,
              query_int(c, "SELECT count(DISTINCT graph_node_id) FROM kernel WHERE graph_id IS NOT NULL"));
    expect_eq(c, "graph memsets of A", GRAPHS_LAUNCHES,
              query_int(c, "SELECT count(*) FROM memset WHERE graph_id IS NOT NULL AND graph_node_id "
                           "IS NOT NULL AND bytes = %lld",
                        GRAPHS_A));
    expect_gt(c, "allocations of the graph's allocation node (5 MiB + 4096)",
              query_int(c, "SELECT count(*) FROM memory_event WHERE op = %d AND bytes = %lld",
                        VT_MEMOP_ALLOC, GRAPHS_T),
              0);
    expect_eq(c, "the ordinary launch: no graph, arguments scanned, A used", 1,
              query_int(c,
                        "SELECT count(*) FROM kernel k WHERE k.graph_id IS NULL AND k.args_scanned = 1 "
                        "AND EXISTS (SELECT 1 FROM buffer_use u WHERE u.correlation = k.correlation "
                        "AND u.kind = %d AND u.address = %lld)",
                        VT_USE_KERNEL_ARG, a));
}

/* sharing: physical memory counted once; imports, IPC and set-access as what they are. */
static void verify_sharing(struct check *c, const struct vt_gpu_facts *pFacts)
{
    long long gran = 0, va = 0, h = 0, hImp = 0, b = 0, ipcStatus = 0, ipcPtr = 0, hostVmm = 0, hHost = 0;
    if (need_fact(c, pFacts, "granularity", &gran) || need_fact(c, pFacts, "va", &va) ||
        need_fact(c, pFacts, "handle", &h) || need_fact(c, pFacts, "imported", &hImp) ||
        need_fact(c, pFacts, "b", &b) || need_fact(c, pFacts, "ipc_status", &ipcStatus) ||
        need_fact(c, pFacts, "ipc_ptr", &ipcPtr) || need_fact(c, pFacts, "host_vmm", &hostVmm) ||
        need_fact(c, pFacts, "host_handle", &hHost))
        return;
    expect_eq(c, "one physical device allocation: vmm_create of 2 G on device 0", 1,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND mem_kind = %d AND "
                        "device = 0 AND address = %lld AND bytes = %lld",
                        VT_MEMOP_VMM_CREATE, VT_MEMKIND_DEVICE, h, 2 * gran));
    expect_eq(c, "vmm_create rows in all (the host one where supported)", 1 + (hostVmm ? 1 : 0),
              query_int(c, "SELECT count(*) FROM memory_event WHERE op = %d", VT_MEMOP_VMM_CREATE));
    expect_eq(c, "the re-imported handle: an import row, bytes unknown", 1,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND address = %lld AND "
                        "bytes IS NULL",
                        VT_MEMOP_IMPORT, hImp));
    expect_eq(c, "its release: an import_close", 1,
              query_int(c, "SELECT count(*) FROM memory_event WHERE op = %d AND address = %lld",
                        VT_MEMOP_IMPORT_CLOSE, hImp));
    expect_eq(c, "the created handle's release: 2 G on device 0, like its create", 1,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND address = %lld AND "
                        "bytes = %lld AND mem_kind = %d AND device = 0",
                        VT_MEMOP_VMM_RELEASE, h, 2 * gran, VT_MEMKIND_DEVICE));
    expect_eq(c, "maps carry their handle (direct and imported)", 2,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND ((address = %lld AND "
                        "pool_address = %lld) OR (address = %lld AND pool_address = %lld))",
                        VT_MEMOP_VMM_MAP, va, h, va + 2 * gran, hImp));
    expect_eq(c, "unmaps carry the handle of their map", 2,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND ((address = %lld AND "
                        "pool_address = %lld) OR (address = %lld AND pool_address = %lld))",
                        VT_MEMOP_VMM_UNMAP, va, h, va + 2 * gran, hImp));
    expect_eq(c, "cuMemSetAccess calls (api_call rows)", 2,
              query_int(c, "SELECT count(*) FROM api_call WHERE api = %d AND status = 0", VT_API_ID_46));
    expect_eq(c, "no MEMORY2 allocation counts the VMM memory again", 0,
              query_int(c, "SELECT count(*) FROM memory_event WHERE op = %d AND bytes = %lld",
                        VT_MEMOP_ALLOC, 2 * gran));
    if (ipcStatus == 0) {
        expect_eq(c, "IPC open: an import row of B's bytes at the mapped address", 1,
                  query_int(c,
                            "SELECT count(*) FROM memory_event WHERE op = %d AND address = %lld AND "
                            "bytes = %lld",
                            VT_MEMOP_IMPORT, ipcPtr, SHARING_B));
        expect_eq(c, "IPC close: an import_close row", 1,
                  query_int(c, "SELECT count(*) FROM memory_event WHERE op = %d AND address = %lld",
                            VT_MEMOP_IMPORT_CLOSE, ipcPtr));
    } else {
        expect_eq(c, "the refused IPC open: a failed api_call with its status", 1,
                  query_int(c, "SELECT count(*) FROM api_call WHERE api = %d AND status = %lld",
                            VT_API_ID_14, ipcStatus));
        expect_eq(c, "... and no import row", 0,
                  query_int(c, "SELECT count(*) FROM memory_event WHERE op = %d AND address NOT IN "
                               "(%lld)",
                            VT_MEMOP_IMPORT, hImp));
    }
    if (hostVmm) {
        expect_eq(c, "host-NUMA cuMemCreate: pinned, no device", 1,
                  query_int(c,
                            "SELECT count(*) FROM memory_event WHERE op = %d AND mem_kind = %d AND "
                            "device IS NULL AND address = %lld AND bytes = %lld",
                            VT_MEMOP_VMM_CREATE, VT_MEMKIND_PINNED, hHost, gran));
        expect_eq(c, "... released as pinned", 1,
                  query_int(c,
                            "SELECT count(*) FROM memory_event WHERE op = %d AND mem_kind = %d AND "
                            "address = %lld",
                            VT_MEMOP_VMM_RELEASE, VT_MEMKIND_PINNED, hHost));
    }
    expect_eq(c, "oom_event rows (no failure here is out of memory)", 0,
              query_int(c, "SELECT count(*) FROM oom_event"));
    expect_eq(c, "vt_sample_fill launches", 2, query_int(c, FILL_KERNELS));
}

/* takeover: another client registered its buffers; the trace says from when, API calls go on. */
static void verify_takeover(struct check *c, const struct vt_gpu_facts *pFacts)
{
    long long nOther = 0;
    if (need_fact(c, pFacts, "other_records", &nOther)) return;
    expect_gt(c, "activity records the other client's callbacks got", nOther, 0);
    expect_eq(c, "meta cupti_takeover_ns: the trace says it was taken over", 1,
              query_int(c, "SELECT count(*) FROM meta WHERE key = 'cupti_takeover_ns' AND "
                           "CAST(value AS INTEGER) > 0"));
    expect_eq(c, "the first allocation, before the takeover, is there", 1,
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND bytes = %lld AND ts <= "
                        "(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'cupti_takeover_ns')",
                        VT_MEMOP_ALLOC, TAKEOVER_FIRST));
    expect_eq(c, "every cudaMalloc call still recorded", 1 + TAKEOVER_ROUNDS,
              query_int(c, "SELECT count(*) FROM api_call WHERE api = %d AND status = 0", VT_API_ID_1));
    expect_le(c, "MEMORY2 rows of the 40 allocations after it (handed to the other client)",
              query_int(c,
                        "SELECT count(*) FROM memory_event WHERE op = %d AND bytes BETWEEN %lld AND "
                        "%lld",
                        VT_MEMOP_ALLOC, MIB, MIB + 4096LL * (TAKEOVER_ROUNDS - 1)),
              2);
}

int vt__gpu_verify(sqlite3 *db, const char *zSample, long long pid,
                   const struct vt_gpu_facts *pFacts, FILE *pOut)
{
    struct check c = {db, pOut, 0};
    if (!vt__gpu_sample_known(zSample)) return -1;
    fprintf(pOut, "known answer of sample \"%s\":\n", zSample);
    verify_common(&c, pid, vt__gpu_sample_signal(zSample) != 0);
    if (strcmp(zSample, "leak") == 0)
        verify_leak(&c);
    else if (strcmp(zSample, "copies") == 0)
        verify_copies(&c, pFacts);
    else if (strcmp(zSample, "oom") == 0)
        verify_oom(&c, pFacts);
    else if (strcmp(zSample, "pool") == 0)
        verify_pool(&c);
    else if (strcmp(zSample, "phases") == 0)
        verify_phases(&c);
    else if (strcmp(zSample, "managed") == 0)
        verify_managed(&c);
    else if (strcmp(zSample, "vmm") == 0)
        verify_vmm(&c, pFacts);
    else if (strcmp(zSample, "threads") == 0)
        verify_threads(&c, pFacts);
    else if (strcmp(zSample, "graphs") == 0)
        verify_graphs(&c, pFacts);
    else if (strcmp(zSample, "sharing") == 0)
        verify_sharing(&c, pFacts);
    else
        verify_takeover(&c, pFacts);
    if (c.nFail) {
        fprintf(pOut, "%d check(s) failed\n", c.nFail);
        dump_overview(&c);
    }
    return c.nFail;
}
