/* Tests for `vramtrace sql`: Nsight-compatible and union views, read-only guard, output formats. */
#include <sqlite3.h>
#include <sys/stat.h>

#include "cli.h"
#include "sql.h"
#include "sql_fixture.h"
#include "sql_run.h"
#include "vt_test.h"

/* Write the rank-0 (and rank-1) fixtures into a fresh directory; paths in static buffers. */
static char zTrace0[256], zTrace1[256], zFixDir[64];
static const char *fixtures(void)
{
    const char *zDir = vt_tmpdir();
    snprintf(zFixDir, sizeof zFixDir, "%s", zDir);
    snprintf(zTrace0, sizeof zTrace0, "%s/rank0.db", zDir);
    snprintf(zTrace1, sizeof zTrace1, "%s/rank1.db", zDir);
    ASSERT_EQ(0, vt_fixture_write(zTrace0, 0));
    ASSERT_EQ(0, vt_fixture_write(zTrace1, 1));
    return zDir;
}

static sqlite3 *open_traces(int n)
{
    char *az[2] = {zTrace0, zTrace1};
    sqlite3 *db = NULL;
    int nFailed = -1;
    ASSERT_EQ(VT_EXIT_OK, vt__sql_open(n, az, &db, &nFailed));
    ASSERT_EQ(0, nFailed);
    return db;
}

/* First row, column i of zSql, as integer (ASSERTs a row exists). */
static long long q_int(sqlite3 *db, const char *zSql, int i)
{
    sqlite3_stmt *p = NULL;
    long long v;
    if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK)
        VT__FAIL("prepare %s: %s", zSql, sqlite3_errmsg(db));
    ASSERT_EQ(SQLITE_ROW, sqlite3_step(p));
    v = sqlite3_column_int64(p, i);
    sqlite3_finalize(p);
    return v;
}

/* All rows of zSql printed as CSV (no header), malloc'd. */
static char *q_csv(sqlite3 *db, const char *zSql)
{
    struct vt_sql_print opt = {VT_SQL_CSV, 0, 0, NULL, NULL};
    sqlite3_stmt *p = NULL;
    char *z = NULL;
    size_t n = 0;
    long long nRow;
    FILE *f = open_memstream(&z, &n);
    ASSERT(f != NULL);
    if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK)
        VT__FAIL("prepare %s: %s", zSql, sqlite3_errmsg(db));
    ASSERT_EQ(SQLITE_OK, vt__sql_print(p, f, &opt, &nRow));
    sqlite3_finalize(p);
    fclose(f);
    return z;
}

TEST(nsight_kernel_names)
{
    sqlite3 *db;
    char *z;
    fixtures();
    db = open_traces(1);
    /* A typical nsys query: kernel time by name through StringIds. */
    z = q_csv(db, "SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                  " JOIN StringIds s ON s.id = k.shortName GROUP BY s.value ORDER BY 3 DESC");
    ASSERT_STREQ("sgemm_fwd,2,10000\nsgemm_bwd,1,3000\nadam_step,1,1000\n", z);
    free(z);
    z = q_csv(db, "SELECT gridX, gridY, gridZ, blockX, staticSharedMemory, dynamicSharedMemory,"
                  " registersPerThread, deviceId, streamId, correlationId,"
                  " globalPid / 0x1000000 % 0x1000000 FROM CUPTI_ACTIVITY_KIND_KERNEL"
                  " WHERE start = 25000");
    ASSERT_STREQ("64,1,1,128,1024,0,32,0,7,105,4242\n", z);
    free(z);
    sqlite3_close(db);
    vt_cleanup(zFixDir);
}

TEST(nsight_memcpy_enums)
{
    sqlite3 *db;
    char *z;
    fixtures();
    db = open_traces(1);
    /* Nsight numbering: pageable is 0, pinned 1, device 2. */
    z = q_csv(db, "SELECT copyKind, srcKind, dstKind, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY"
                  " ORDER BY start");
    ASSERT_STREQ("1,0,2,4194304\n1,1,2,4194304\n1,0,2,2097152\n2,2,1,1048576\n1,0,2,1048576\n", z);
    free(z);
    z = q_csv(db, "SELECT o.name, o.label, k.label, sum(m.bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY m"
                  " JOIN ENUM_CUDA_MEMCPY_OPER o ON o.id = m.copyKind"
                  " JOIN ENUM_CUDA_MEM_KIND k ON k.id = m.srcKind GROUP BY 1, 2, 3 ORDER BY 4 DESC");
    ASSERT_STREQ("CUDA_MEMCPY_KIND_HTOD,Host-to-Device,Pageable,7340032\n"
                 "CUDA_MEMCPY_KIND_HTOD,Host-to-Device,Pinned,4194304\n"
                 "CUDA_MEMCPY_KIND_DTOH,Device-to-Host,Device,1048576\n",
                 z);
    free(z);
    ASSERT_EQ(8, q_int(db, "SELECT count(*) FROM ENUM_CUDA_MEM_KIND", 0));
    ASSERT_EQ(7, q_int(db, "SELECT id FROM ENUM_CUDA_MEM_KIND WHERE label = 'Unknown'", 0));
    z = q_csv(db, "SELECT memKind, bytes, value FROM CUPTI_ACTIVITY_KIND_MEMSET");
    ASSERT_STREQ("2,33554432,0\n", z);
    free(z);
    sqlite3_close(db);
    vt_cleanup(zFixDir);
}

TEST(nsight_memory_usage_events)
{
    sqlite3 *db;
    char *z;
    fixtures();
    db = open_traces(1);
    z = q_csv(db, "SELECT k.label, o.label, count(*), sum(e.bytes)"
                  " FROM CUDA_GPU_MEMORY_USAGE_EVENTS e"
                  " JOIN ENUM_CUDA_MEM_KIND k ON k.id = e.memKind"
                  " JOIN ENUM_CUDA_DEV_MEM_EVENT_OPER o ON o.id = e.memoryOperationType"
                  " GROUP BY 1, 2 ORDER BY 1, 2");
    ASSERT_STREQ("Device,Allocation,5,260046848\nDevice,Deallocation,3,184549376\n"
                 "Pinned,Allocation,1,4194304\nPinned,Deallocation,1,4194304\n",
                 z);
    free(z);
    ASSERT_EQ(0x10000000, q_int(db, "SELECT address FROM CUDA_GPU_MEMORY_USAGE_EVENTS"
                                    " ORDER BY start LIMIT 1", 0));
    sqlite3_close(db);
    vt_cleanup(zFixDir);
}

TEST(nsight_nvtx_and_api)
{
    sqlite3 *db;
    char *z;
    fixtures();
    db = open_traces(1);
    z = q_csv(db, "SELECT coalesce(n.text, s.value), n.eventType, n.end - n.start,"
                  " n.globalTid / 0x1000000 % 0x1000000, n.globalTid % 0x1000000"
                  " FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId ORDER BY n.start");
    ASSERT_STREQ("train,59,49000,4242,100\nforward,59,5000,4242,100\n"
                 "validation,59,30000,4242,100\ncheckpoint,34,0,4242,100\n",
                 z);
    free(z);
    z = q_csv(db, "SELECT s.value, count(*), sum(r.returnValue != 0) FROM CUPTI_ACTIVITY_KIND_RUNTIME r"
                  " JOIN StringIds s ON s.id = r.nameId GROUP BY 1 ORDER BY 1");
    ASSERT_STREQ("cudaMalloc,6,1\ncudaMallocHost,1,0\n", z);
    free(z);
    z = q_csv(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_DRIVER d JOIN StringIds s ON s.id = d.nameId");
    ASSERT_STREQ("cuMemcpyHtoD\n", z);
    free(z);
    sqlite3_close(db);
    vt_cleanup(zFixDir);
}

TEST(site_view)
{
    sqlite3 *db;
    char *z;
    fixtures();
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace0, &db));
    ASSERT_EQ(SQLITE_OK,
              sqlite3_exec(db,
                           "INSERT INTO string VALUES(40, 'c10::cuda::malloc'),"
                           " (41, '/usr/lib/libc10_cuda.so'), (42, 'app_alloc'), (43, '/opt/app/bin/app'),"
                           " (44, '/x/libfoo.so'), (45, '_call_impl'),"
                           " (46, '/usr/lib/python3/site-packages/torch/nn/modules/module.py'),"
                           " (47, 'solve'), (48, 'solver.cu'),"
                           " (49, 'torch::autograd::generated::DivBackward0::apply(std::vector<at::Tensor>&&)'),"
                           " (50, '/usr/lib/libtorch_cpu.so'),"
                           " (51, 'torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)');"
                           "INSERT INTO stack VALUES(10, 1, 2), (11, 2, 1), (12, 3, 0), (13, 4, 2),"
                           " (14, 5, 1), (15, 6, 3);"
                           "INSERT INTO frame VALUES(10, 0, 0, 100, 40, NULL, NULL, 41),"
                           " (10, 1, 0, 200, 42, NULL, NULL, 43),"
                           " (11, 0, 0, 4660, NULL, NULL, NULL, 44),"
                           " (13, 0, 1, NULL, 45, 46, 1501, NULL), (13, 1, 0, 300, 40, NULL, NULL, 41),"
                           " (14, 0, 0, 400, 47, 48, 12, 43),"
                           /* a backward-pass block: no Python frame on the autograd engine's thread */
                           " (15, 0, 0, 500, 40, NULL, NULL, 41), (15, 1, 0, 600, 49, NULL, NULL, 50),"
                           " (15, 2, 0, 700, 51, NULL, NULL, 50)",
                           NULL, NULL, NULL));
    sqlite3_close(db);
    db = open_traces(1);
    z = q_csv(db, "SELECT stack_id, site FROM site ORDER BY stack_id");
    ASSERT_STREQ("1,model.py:42 in train_step\n2,data.py:17 in load_batch\n3,eval.py:88 in validate\n"
                 "4,model.py:10 in init_model\n10,app_alloc (app)\n11,0x1234 (libfoo.so)\n"
                 "12,stack 12 (no frames recorded)\n"
                 "13,/usr/lib/python3/site-packages/torch/nn/modules/module.py:1501 in _call_impl\n"
                 "14,solver.cu:12 in solve\n"
                 "15,\"DivBackward0 (backward pass: autograd thread, no Python frame)\"\n",
                 z);
    free(z);
    sqlite3_close(db);
    vt_cleanup(zFixDir);
}

TEST(multi_trace_views)
{
    sqlite3 *db;
    char *z;
    fixtures();
    db = open_traces(2);
    z = q_csv(db, "SELECT trace, schema_name, pid, rank, host FROM process ORDER BY trace");
    ASSERT_STREQ("0,t0,4242,0,node1\n1,t1,4243,1,node1\n", z);
    free(z);
    z = q_csv(db, "SELECT rank, sum(bytes) FROM all_memory_event WHERE op = 1 AND mem_kind = 3"
                  " GROUP BY rank ORDER BY rank");
    ASSERT_STREQ("0,260046848\n1,394264576\n", z);
    free(z);
    /* String ids stay distinct across traces: each kernel joins its own trace's name. */
    z = q_csv(db, "SELECT k.globalPid / 0x1000000, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                  " JOIN StringIds s ON s.id = k.demangledName WHERE k.start = 16000 ORDER BY 1");
    ASSERT_STREQ("4242,sgemm_bwd\n4243,sgemm_bwd\n", z);
    free(z);
    ASSERT_EQ(2 * 16 + q_int(db, "SELECT count(*) FROM t0.enum_api", 0),
              q_int(db, "SELECT count(*) FROM StringIds", 0));
    ASSERT_EQ(8, q_int(db, "SELECT count(*) FROM all_kernel", 0));
    ASSERT_EQ(2, q_int(db, "SELECT count(*) FROM all_oom_event", 0));
    ASSERT_EQ(4, q_int(db, "SELECT count(*) FROM all_nvtx_range WHERE rank = 1", 0));
    sqlite3_close(db);
    vt_cleanup(zFixDir);
}

/*
 * Traces of different schema versions together (bench-v5.db: version 5; example-train.db: the current one, whose
 * memory_event has the folded call columns): each all_* view holds every column either has, NULL where a trace's
 * version has not the column, and every row.
 */
TEST(union_views_across_versions)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zA[1024], zB[1024], *az[2] = {zA, zB}, *z;
    sqlite3 *db = NULL;
    int nFailed = -1;
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zA, sizeof zA, "%s/example-train.db", zData);
    snprintf(zB, sizeof zB, "%s/bench-v5.db", zData);
    ASSERT_EQ(VT_EXIT_OK, vt__sql_open(2, az, &db, &nFailed));
    ASSERT_EQ(0, nFailed);
    z = q_csv(db, "SELECT trace, count(*), count(call_sig), sum(bytes) FROM all_memory_event GROUP BY trace ORDER BY 1");
    ASSERT_STREQ("0,409,0,25295847424\n1,200,0,419430400\n", z);
    free(z);
    ASSERT_EQ(409 + 200, q_int(db, "SELECT count(*) FROM all_memory_event", 0));
    ASSERT_EQ(3340 + 1400, q_int(db, "SELECT count(*) FROM all_kernel", 0));
    sqlite3_close(db);
}

/*
 * One trace at a time (--per-trace) in CSV over traces of different schema versions: each later trace's rows lined
 * up under the first trace's header (NULL in a column its version has not; its columns the header has not left out
 * and named on standard error), never rows of another width under one header.
 */
TEST(per_trace_csv_across_versions)
{
    const char *zData = getenv("VT_TEST_DATA"), *zDir = vt_tmpdir();
    char zArgs[2400], *zOut, *zErr;
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zArgs, sizeof zArgs, "sql --per-trace --format csv %s/example-train.db %s/bench-v5.db "
             "\"SELECT * FROM memory_event WHERE id = 1 -- the first\"", zData, zData);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, ",call_dt,call_dur,call_sig,call_id\n");
    ASSERT_CONTAINS(zOut, "/bench-v5.db,1,3600000078000,1700000000000078000,1,3,139637976727552,2097152,0,1,,19,1,0,,,,,,,"
                          "4242,1,,,,,\n");
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "sql --per-trace --format csv %s/bench-v5.db %s/example-train.db "
             "\"SELECT * FROM memory_event WHERE id = 1;\"", zData, zData);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "/example-train.db,1,182000000,1767225600180732837,1,3,139895674765312,2097152,0,1,,,,0,,,,,,,"
                          ",,\n");
    ASSERT_CONTAINS(zErr, "example-train.db: its columns call_dt, call_dur, call_sig, call_id are left out");
    free(zOut), free(zErr);
    vt_cleanup(zDir);
}

/* One trace that cannot be read among several: named and counted, the others queried as t0, ...; none left: its code. */
TEST(multi_trace_one_unreadable)
{
    char zMissing[320], zText[320];
    char *az[3];
    sqlite3 *db = NULL;
    FILE *f;
    int nFailed = -1;
    fixtures();
    snprintf(zMissing, sizeof zMissing, "%s/missing.db", zFixDir);
    snprintf(zText, sizeof zText, "%s/text.db", zFixDir);
    f = fopen(zText, "w");
    ASSERT(f != NULL);
    fputs("not a trace\n", f);
    fclose(f);
    az[0] = zTrace0;
    az[1] = zMissing;
    az[2] = zTrace1;
    ASSERT_EQ(VT_EXIT_OK, vt__sql_open(3, az, &db, &nFailed));
    ASSERT_EQ(1, nFailed);
    ASSERT_EQ(4243, q_int(db, "SELECT pid FROM process WHERE schema_name = 't1'", 0));
    ASSERT_EQ(2, q_int(db, "SELECT count(*) FROM process", 0));
    sqlite3_close(db);
    db = NULL;
    /* one readable trace left: every shared view still answers, over it alone */
    az[1] = zText;
    ASSERT_EQ(VT_EXIT_OK, vt__sql_open(2, az, &db, &nFailed));
    ASSERT_EQ(1, nFailed);
    ASSERT_EQ(4242, q_int(db, "SELECT pid FROM process", 0));
    ASSERT_EQ(1, q_int(db, "SELECT count(*) FROM process", 0));
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM memory_event", 0), q_int(db, "SELECT count(*) FROM all_memory_event", 0));
    ASSERT(q_int(db, "SELECT count(*) FROM site", 0) > 0);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM nvtx_range", 0), q_int(db, "SELECT count(*) FROM NVTX_EVENTS", 0));
    sqlite3_close(db);
    db = NULL;
    az[0] = zText;
    az[1] = zMissing;
    ASSERT_EQ(VT_EXIT_NOT_TRACE, vt__sql_open(2, az, &db, &nFailed));
    ASSERT_EQ(2, nFailed);
    ASSERT(db == NULL);
    vt_cleanup(zFixDir);
}

TEST(analysis_union_views)
{
    sqlite3 *db;
    char *z;
    int i;
    fixtures();
    /* Only rank 0 analyzed: no all_finding view. */
    for (i = 0; i < 2; i++) {
        ASSERT_EQ(SQLITE_OK, sqlite3_open(i ? zTrace1 : zTrace0, &db));
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, VT_ANALYSIS_DDL, NULL, NULL, NULL));
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "INSERT INTO finding(kind, severity, title, bytes)"
                                              " VALUES('leak', 'low', 'never freed', 8388608)",
                                          NULL, NULL, NULL));
        sqlite3_close(db);
        db = open_traces(2);
        ASSERT_EQ(i, q_int(db, "SELECT count(*) FROM sqlite_temp_schema WHERE name = 'all_finding'", 0));
        sqlite3_close(db);
    }
    db = open_traces(2);
    z = q_csv(db, "SELECT trace, pid, rank, kind, bytes FROM all_finding ORDER BY trace");
    ASSERT_STREQ("0,4242,0,leak,8388608\n1,4243,1,leak,8388608\n", z);
    free(z);
    ASSERT_EQ(0, q_int(db, "SELECT count(*) FROM all_lifetime", 0));
    sqlite3_close(db);
    vt_cleanup(zFixDir);
}

TEST(read_only_guard)
{
    static const char *const azWrite[] = {
        "INSERT INTO meta VALUES('x','y')", "DELETE FROM memory_event", "DROP TABLE kernel",
        "CREATE TABLE x(a)", "CREATE TEMP TABLE x(a)", "DROP VIEW StringIds",
        "ATTACH '/tmp/vt_other.db' AS o", "PRAGMA query_only = 0", "PRAGMA journal_mode = DELETE",
        "UPDATE kernel SET t = 0"};
    sqlite3 *db;
    struct stat st0, st1;
    size_t i;
    fixtures();
    ASSERT_EQ(0, stat(zTrace0, &st0));
    db = open_traces(1);
    for (i = 0; i < sizeof azWrite / sizeof azWrite[0]; i++) {
        sqlite3_stmt *p = NULL;
        int rc = sqlite3_prepare_v2(db, azWrite[i], -1, &p, NULL);
        if (rc == SQLITE_OK) {
            /* prepared (VACUUM-like): must be flagged as writing, and fail if stepped */
            ASSERT_EQ(0, sqlite3_stmt_readonly(p));
            ASSERT_NE(SQLITE_DONE, sqlite3_step(p));
        } else {
            ASSERT_EQ(SQLITE_AUTH, rc); /* DDL, ATTACH, pragma settings */
        }
        sqlite3_finalize(p);
    }
    /* Reading pragmas still work. */
    /* kernel is a view (schema 5): its computed start and end are columns too */
    ASSERT_EQ(22, q_int(db, "SELECT count(*) FROM pragma_table_info('kernel')", 0));
    ASSERT_EQ(VT_SCHEMA_VERSION, q_int(db, "PRAGMA user_version", 0));
    ASSERT_EQ(10, q_int(db, "SELECT count(*) FROM memory_event", 0));
    sqlite3_close(db);
    ASSERT_EQ(0, stat(zTrace0, &st1));
    ASSERT_EQ(st0.st_size, st1.st_size);
    ASSERT_EQ(st0.st_mtime, st1.st_mtime);
    vt_cleanup(zFixDir);
}

/* Print zSql from an in-memory database in the given format. */
static char *print_mem(const char *zSql, int format, int maxWidth)
{
    struct vt_sql_print opt = {format, maxWidth, 1, NULL, NULL};
    sqlite3 *db = NULL;
    sqlite3_stmt *p = NULL;
    char *z = NULL;
    size_t n = 0;
    long long nRow;
    FILE *f = open_memstream(&z, &n);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(":memory:", &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(db, zSql, -1, &p, NULL));
    ASSERT_EQ(SQLITE_OK, vt__sql_print(p, f, &opt, &nRow));
    sqlite3_finalize(p);
    sqlite3_close(db);
    fclose(f);
    return z;
}

TEST(output_formats)
{
    const char *zSql = "SELECT 1 AS a, 'x,y' AS b, NULL AS c, 2.5 AS d, 'say \"hi\"' AS a"
                       " UNION ALL SELECT 12345, 'line' || char(10) || 'two', 'z', -1, x'00ff'";
    char *z = print_mem(zSql, VT_SQL_CSV, 0);
    ASSERT_STREQ("a,b,c,d,a:2\n1,\"x,y\",,2.5,\"say \"\"hi\"\"\"\n12345,\"line\ntwo\",z,-1,00ff\n", z);
    free(z);
    z = print_mem(zSql, VT_SQL_JSON, 0);
    ASSERT_STREQ("[\n{\"a\":1,\"b\":\"x,y\",\"c\":null,\"d\":2.5,\"a:2\":\"say \\\"hi\\\"\"},\n"
                 "{\"a\":12345,\"b\":\"line\\ntwo\",\"c\":\"z\",\"d\":-1,\"a:2\":\"00ff\"}\n]\n",
                 z);
    free(z);
    z = print_mem(zSql, VT_SQL_TABLE, 40);
    ASSERT_STREQ("    a  b         c       d  a\n"
                 "-----  --------  ----  ---  --------\n"
                 "    1  x,y       NULL  2.5  say \"hi\"\n"
                 "12345  line two  z      -1  00ff\n"
                 "(2 rows)\n",
                 z);
    free(z);
    z = print_mem("SELECT 'abcdefghijklmnop' AS long, 7 AS n", VT_SQL_TABLE, 8);
    ASSERT_STREQ("long      n\n--------  -\nabcde...  7\n(1 row)\n"
                 "(1 cell cut to 8 characters: use --max-width 0 or --format csv for full values)\n",
                 z);
    free(z);
    z = print_mem("SELECT 1 WHERE 0", VT_SQL_JSON, 0);
    ASSERT_STREQ("[]\n", z);
    free(z);
}

TEST(cli_queries_and_errors)
{
    const char *zDir = fixtures();
    char zArgs[2048], zNotTrace[300], *zOut, *zErr;
    FILE *f;

    snprintf(zArgs, sizeof zArgs, "sql --format json %s %s 'SELECT trace, pid, rank FROM process"
                                  " ORDER BY trace'", zTrace0, zTrace1);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_STREQ("[\n{\"trace\":0,\"pid\":4242,\"rank\":0},\n{\"trace\":1,\"pid\":4243,\"rank\":1}\n]\n",
                 zOut);
    free(zOut), free(zErr);

    /* A write is refused with the read-only message and exit code 2; the trace is intact. */
    snprintf(zArgs, sizeof zArgs, "sql %s 'DELETE FROM memory_event'", zTrace0);
    ASSERT_EQ(VT_EXIT_USAGE, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "vramtrace sql is read-only");
    ASSERT_STREQ("", zOut);
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "sql --format csv --no-header %s 'SELECT count(*) FROM memory_event'",
             zTrace0);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_STREQ("10\n", zOut);
    free(zOut), free(zErr);

    /* VACUUM INTO would write a new file: refused before anything runs. */
    snprintf(zArgs, sizeof zArgs, "sql %s \"SELECT 1; VACUUM INTO '%s/copy.db'\"", zTrace0, zDir);
    ASSERT_EQ(VT_EXIT_USAGE, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "vramtrace sql is read-only");
    ASSERT_STREQ("", zOut);
    free(zOut), free(zErr);

    /* Bad SQL: SQLite's message, exit 2. */
    snprintf(zArgs, sizeof zArgs, "sql %s 'SELEC 1'", zTrace0);
    ASSERT_EQ(VT_EXIT_USAGE, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "syntax error");
    free(zOut), free(zErr);

    /* A table the analyzer writes back, of traces never analyzed with --save: the message says how to get it. */
    snprintf(zArgs, sizeof zArgs, "sql %s 'SELECT * FROM finding'", zTrace0);
    ASSERT_EQ(VT_EXIT_USAGE, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "no such table: finding (the analyzer's tables exist once a trace was analyzed with "
                          "'vramtrace analyze --save'");
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "sql %s %s 'SELECT * FROM all_lifetime'", zTrace0, zTrace1);
    ASSERT_EQ(VT_EXIT_USAGE, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "no such table: all_lifetime (the analyzer's tables exist once a trace was analyzed");
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "sql %s 'SELECT * FROM findings'", zTrace0);
    ASSERT_EQ(VT_EXIT_USAGE, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT(!strstr(zErr, "--save")); /* another table: SQLite's message alone */
    free(zOut), free(zErr);

    /* Not a trace: exit 4. Missing: exit 3. */
    snprintf(zNotTrace, sizeof zNotTrace, "%s/notes.txt", zDir);
    f = fopen(zNotTrace, "w");
    ASSERT(f != NULL);
    fputs("just some text, long enough to not be an empty file\n", f);
    fclose(f);
    snprintf(zArgs, sizeof zArgs, "sql %s 'SELECT 1'", zNotTrace);
    ASSERT_EQ(VT_EXIT_NOT_TRACE, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "sql %s/absent.db 'SELECT 1'", zDir);
    ASSERT_EQ(VT_EXIT_NOFILE, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);

    /* SQL from a file, two statements: two CSV results separated by a blank line. */
    snprintf(zArgs, sizeof zArgs, "%s/q.sql", zDir);
    f = fopen(zArgs, "w");
    ASSERT(f != NULL);
    fputs("-- two questions\nSELECT count(*) AS kernels FROM kernel;\n"
          "SELECT count(*) AS copies FROM memcpy WHERE src_kind = 1;\n", f);
    fclose(f);
    snprintf(zArgs, sizeof zArgs, "sql --format csv -f %s/q.sql %s", zDir, zTrace0);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_STREQ("kernels\n4\n\ncopies\n3\n", zOut);
    free(zOut), free(zErr);

    /* JSON of several statements: an array of arrays (statements without rows print nothing). */
    snprintf(zArgs, sizeof zArgs, "sql --format json %s 'BEGIN; SELECT 1 AS a; SELECT 2 AS b"
                                  " WHERE 0; COMMIT'", zTrace0);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_STREQ("[[\n{\"a\":1}\n]\n,[]\n]\n", zOut);
    free(zOut), free(zErr);

    /* Usage errors. */
    snprintf(zArgs, sizeof zArgs, "sql --format xml %s 'SELECT 1'", zTrace0);
    ASSERT_EQ(VT_EXIT_USAGE, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "--format");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_USAGE, vt_run(zDir, "sql 'SELECT 1'", &zOut, &zErr));
    free(zOut), free(zErr);
    vt_cleanup(zFixDir);
}

/* More traces than SQLite attaches: the query runs on each alone, with a trace column; --per-trace forces it. */
TEST(per_trace_beyond_attach_limit)
{
    const char *zDir = fixtures();
    char zArgs[8192], zCopy[12][300], *zOut, *zErr;
    size_t n;
    int i, nLines = 0;
    for (i = 0; i < 12; i++) { /* twelve ranks: the two fixtures, alternately */
        snprintf(zCopy[i], sizeof zCopy[i], "%s/rank%02d.db", zDir, i);
        snprintf(zArgs, sizeof zArgs, "cp %s %s", i % 2 ? zTrace1 : zTrace0, zCopy[i]);
        ASSERT_EQ(0, system(zArgs));
    }
    n = (size_t)snprintf(zArgs, sizeof zArgs, "sql --format csv");
    for (i = 0; i < 12; i++) n += (size_t)snprintf(zArgs + n, sizeof zArgs - n, " %s", zCopy[i]);
    snprintf(zArgs + n, sizeof zArgs - n, " 'SELECT count(*) AS kernels FROM CUPTI_ACTIVITY_KIND_KERNEL'");
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT(!strncmp(zOut, "trace,kernels\n", 14)); /* one header */
    for (const char *p = zOut; (p = strchr(p, '\n')) != NULL; p++) nLines++;
    ASSERT_EQ(13, nLines);
    ASSERT_CONTAINS(zOut, "rank11.db,");
    free(zOut), free(zErr);
    /* two traces, forced; JSON: one array */
    snprintf(zArgs, sizeof zArgs, "sql --per-trace --format json %s %s 'SELECT 1 AS one'", zTrace0, zTrace1);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT(zOut[0] == '[' && strstr(zOut, "\"one\":1}\n]\n") != NULL);
    ASSERT_CONTAINS(zOut, "\"trace\":");
    free(zOut), free(zErr);
    /* a column of the query named `trace` (the process view's) does not repeat the file's name */
    snprintf(zArgs, sizeof zArgs, "sql --per-trace --format csv %s 'SELECT trace, pid FROM process'", zTrace0);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT(!strncmp(zOut, "trace,trace:2,pid\n", 18));
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "sql --per-trace --format json %s 'SELECT trace, pid FROM process'", zTrace0);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"trace:2\":0,\"pid\":");
    free(zOut), free(zErr);
    /* one SELECT only; a missing trace is named, the others answer (exit 9) */
    snprintf(zArgs, sizeof zArgs, "sql --per-trace %s %s 'SELECT 1; SELECT 2'", zTrace0, zTrace1);
    ASSERT_EQ(VT_EXIT_USAGE, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "give one SELECT");
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "sql --per-trace --format csv %s %s/missing.db 'SELECT 7 AS x'", zTrace0, zDir);
    ASSERT_EQ(VT_EXIT_PARTIAL, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, ",7\n");
    ASSERT_CONTAINS(zErr, "missing.db");
    free(zOut), free(zErr);
    vt_cleanup(zFixDir);
}

VT_TEST_LIST(T(union_views_across_versions) T(per_trace_csv_across_versions) T(nsight_kernel_names) T(nsight_memcpy_enums) T(nsight_memory_usage_events)
                 T(nsight_nvtx_and_api) T(site_view) T(multi_trace_views) T(multi_trace_one_unreadable) T(analysis_union_views) T(read_only_guard)
                     T(output_formats) T(cli_queries_and_errors) T(per_trace_beyond_attach_limit))
