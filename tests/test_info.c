/* Tests of 'vramtrace info' on generated traces: exact text and JSON output, bad input. */
#include "cli_util.h"
#include "util/errors.h"

/* Run `vramtrace info ARGS...`; stdout and stderr (heap strings) into *pzOut, *pzErr. */
static int run_info(char **azArg, char **pzOut, char **pzErr)
{
    const char *zDir = cli_tmpdir();
    char zOut[PATH_MAX + 16], zErr[PATH_MAX + 16];
    char *azArgv[16];
    int n = 0, rc;
    azArgv[n++] = (char *)cli_vramtrace();
    azArgv[n++] = "info";
    for (; *azArg && n < 15; azArg++) azArgv[n++] = *azArg;
    azArgv[n] = NULL;
    snprintf(zOut, sizeof zOut, "%s/out.txt", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    rc = cli_run(azArgv, NULL, zOut, zErr);
    *pzOut = cli_read(zOut);
    *pzErr = cli_read(zErr);
    return rc;
}

TEST(info_text_exact)
{
    const char *zDir = cli_tmpdir();
    char zTrace[PATH_MAX + 16], zWant[PATH_MAX + 64], *zOut, *zErr;
    char *azArg[] = {zTrace, NULL};
    /* every line after the file size, exactly */
    static const char zBody[] =
        "process     pid 4242 (parent 4200), rank 1 of 4 (local 1), host gpu-node-7\n"
        "command     python train.py --epochs 3\n"
        "executable  /usr/bin/python3.11\n"
        "versions    tracer 0.1.0, CUDA driver 13000, CUPTI 130001, schema 6\n"
        "status      closed cleanly\n"
        "writer      1234 CUPTI records decoded (5 of kinds not stored), 1300 rows in 3 commits\n"
        "devices     0  NVIDIA H100 80GB HBM3, 79.6 GiB, compute 9.0, 132 SMs, PCI 1b:00, GPU-1234\n"
        "duration    2.50 s (first to last event), started 2025-11-21 18:40:01.123 UTC\n"
        "memory      4 allocations (3.50 MiB), 1 free; level: allocations\n"
        "            device 0: peak 3.00 MiB allocated at 100.0 ms (= reserved: one CUDA allocation per buffer); "
        "78.6 GiB in use on the device (every process and the CUDA context) at 900.0 ms\n"
        "            pinned host memory: peak 4.00 KiB at 300.0 ms\n"
        "            pinned         1 allocation, 4.00 KiB\n"
        "            device         3 allocations, 3.50 MiB\n"
        "copies      2 (1.00 MiB), 1 from or to pageable host memory\n"
        "            HtoD           1, 1.00 MiB\n"
        "            DtoH           1, 4.00 KiB\n"
        "kernels     3\n"
        "OOMs        1\n"
        "            +900.0 ms cudaMalloc of 8.00 GiB on device 0 failed (status 2), 1.00 GiB free of 79.6 GiB\n"
        "dropped     WARNING: 150 records lost; counts, peaks and findings are incomplete\n"
        "            cupti   activity records             100\n"
        "            queue   host records                 50\n"
        "notes       150 records were lost while tracing (see the 'dropped' table): counts, peaks and findings "
        "are incomplete\n"
        "            no kernel buffer uses recorded: first/last use come from copies only, idle-allocation checks "
        "are skipped and allocations live at exit cannot be told apart from buffers in use until the end\n"
        "overhead    cupti     instrumentation          10.0 ms in 1 event\n"
        "            vramtrace stack capture            3.0 ms in 50 events\n"
        "rows        memory_event   5\n"
        "            api_call       0\n"
        "            memcpy         2\n"
        "            memset         0\n"
        "            kernel         3\n"
        "            buffer_use     0\n"
        "            nvtx_range     0\n"
        "            sync_event     0\n"
        "            pool_event     0\n"
        "            oom_event      1\n"
        "            dropped        2\n"
        "            overhead       3\n"
        "            device         1\n"
        "            string         0\n"
        "            stack          0\n"
        "            frame          0\n"
        "            tensor_event   0\n"
        "            module         0\n"
        "            kernel_name    0\n"
        "config      backtrace = 16\n"
        "            python_stacks = 1\n"
        "            tensors = 1\n"
        "environment PYTORCH_ALLOC_CONF=backend:cudaMallocAsync\n"
        "meta        note = hand-made \"fixture\"\n";
    const char *zRest;
    snprintf(zTrace, sizeof zTrace, "%s/t.db", zDir);
    cli_make_trace(zTrace, 1);
    ASSERT_EQ(VT_EXIT_OK, run_info(azArg, &zOut, &zErr));
    ASSERT_STREQ("", zErr);
    snprintf(zWant, sizeof zWant, "trace       %s\nfile        ", zTrace);
    ASSERT(!strncmp(zOut, zWant, strlen(zWant)));
    ASSERT_CONTAINS(zOut, " bytes (");
    ASSERT_CONTAINS(zOut, "), schema version 6\n");
    zRest = strstr(zOut, "\nprocess ");
    ASSERT(zRest != NULL);
    ASSERT_STREQ(zBody, zRest + 1);
    free(zOut);
    free(zErr);
    cli_cleanup();
}

TEST(info_unclosed_empty_trace)
{
    const char *zDir = cli_tmpdir();
    char zTrace[PATH_MAX + 16], *zOut, *zErr;
    char *azArg[] = {zTrace, NULL};
    sqlite3 *db = NULL;
    char *zMsg = NULL;
    snprintf(zTrace, sizeof zTrace, "%s/empty.db", zDir);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, &zMsg));
    cli_exec(db, "INSERT INTO meta VALUES('pid','77')");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azArg, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\nprocess     pid 77\n");
    ASSERT_CONTAINS(zOut, "\nversions    tracer ?, CUDA driver ?, CUPTI ?, schema 6\n");
    ASSERT_CONTAINS(zOut, "\nstatus      WARNING: not closed cleanly");
    ASSERT_CONTAINS(zOut, "\ndevices     none recorded\n");
    ASSERT_CONTAINS(zOut, "\nduration    unknown (no event with a known time)\n");
    ASSERT_CONTAINS(zOut, "\nmemory      0 allocations (0 B), 0 frees; level: none (no allocation known)\n");
    ASSERT_CONTAINS(zOut, "\ncopies      0 (0 B), 0 from or to pageable host memory\n");
    ASSERT_CONTAINS(zOut, "\nOOMs        0\n");
    ASSERT_CONTAINS(zOut, "\ndropped     none\n");
    ASSERT_CONTAINS(zOut, "\noverhead    none recorded\n");
    ASSERT(strstr(zOut, "peak live") == NULL);
    ASSERT(strstr(zOut, "\nconfig") == NULL);
    free(zOut);
    free(zErr);
    cli_cleanup();
}

TEST(info_json)
{
    const char *zDir = cli_tmpdir();
    char zTrace[PATH_MAX + 16], zTrace2[PATH_MAX + 16], zJson[PATH_MAX + 16], zCmd[3 * PATH_MAX], *zOut, *zErr;
    char *azArg[] = {"--json", zTrace, zTrace2, NULL};
    FILE *f;
    snprintf(zTrace, sizeof zTrace, "%s/t.db", zDir);
    snprintf(zTrace2, sizeof zTrace2, "%s/t2.db", zDir);
    cli_make_trace(zTrace, 1);
    cli_make_trace(zTrace2, 0);
    ASSERT_EQ(VT_EXIT_OK, run_info(azArg, &zOut, &zErr));
    ASSERT_STREQ("", zErr);
    ASSERT(!strncmp(zOut, "{\"format\":\"vramtrace-info\",\"format_version\":1,\"traces\":[{\"path\":", 63));
    ASSERT_CONTAINS(zOut, "\"process\":{\"pid\":4242,\"ppid\":4200,\"rank\":1,\"local_rank\":1,\"world_size\":4,"
                          "\"hostname\":\"gpu-node-7\",\"cmdline\":\"python train.py --epochs 3\","
                          "\"executable\":\"/usr/bin/python3.11\"}");
    ASSERT_CONTAINS(zOut, "\"versions\":{\"tracer\":\"0.1.0\",\"cuda_driver\":13000,\"cuda_runtime\":null,"
                          "\"cupti\":130001,\"schema\":6,\"cupti_library\":null,\"cuda_runtime_library\":null,"
                          "\"cupti_layout\":null,\"cupti_layout_table\":null,\"cupti_kinds_reduced\":null,"
                          "\"cupti_subscription\":null}");
    ASSERT_CONTAINS(zOut, "\"time\":{\"first_ns\":1100000000,\"last_ns\":3600000000,\"duration_ns\":2500000000,"
                          "\"wall_start_ns\":1763750401123000000,\"wall_start\":\"2025-11-21 18:40:01.123 UTC\"");
    ASSERT_CONTAINS(zOut, "\"peak_live_device\":[{\"device\":0,\"bytes\":3145728,\"ts\":1200000000}]");
    ASSERT_CONTAINS(zOut, "\"memory\":{\"allocations\":4,\"allocated_bytes\":3674112,\"frees\":1,\"vmm_maps\":0");
    ASSERT_CONTAINS(zOut, "\"copies\":{\"count\":2,\"bytes\":1052672,\"pageable\":1,");
    ASSERT_CONTAINS(zOut, "\"kernels\":3,");
    ASSERT_CONTAINS(zOut, "\"writer\":{\"records_decoded\":1234,\"records_unknown\":5,\"rows_written\":1300,"
                          "\"commits\":3,\"dropped_queue\":50,\"dropped_writer\":0,\"dropped_map\":0}");
    ASSERT_CONTAINS(zOut, "\"ooms\":[{\"ts\":2000000000,\"api\":\"cudaMalloc\",\"device\":0,\"bytes\":8589934592,"
                          "\"status\":2,\"free_bytes\":1073741824,\"total_bytes\":85520809984}]");
    ASSERT_CONTAINS(zOut, "\"dropped\":{\"total\":150,\"write_failed\":0,\"omitted\":0,\"by_source\":[{\"source\":\"cupti\",\"what\":\"activity "
                          "records\",\"count\":100},{\"source\":\"queue\",\"what\":\"host records\",\"count\":50}]}");
    ASSERT_CONTAINS(zOut, "{\"source\":\"vramtrace\",\"kind\":\"stack capture\",\"rows\":2,\"events\":50,"
                          "\"total_ns\":3000000}");
    ASSERT_CONTAINS(zOut, "\"config\":{\"backtrace\":\"16\",\"python_stacks\":\"1\",\"tensors\":\"1\"}");
    ASSERT_CONTAINS(zOut, "\"note\":\"hand-made \\\"fixture\\\"\"");
    ASSERT_CONTAINS(zOut, "\"closed_cleanly\":true");
    ASSERT_CONTAINS(zOut, "\"closed_cleanly\":false");
    /* a real JSON parser agrees, when one is at hand */
    snprintf(zJson, sizeof zJson, "%s/out.json", zDir);
    f = fopen(zJson, "w");
    ASSERT(f && fputs(zOut, f) >= 0 && fclose(f) == 0);
    if (system("python3 -c 'import json' 2>/dev/null") == 0) {
        snprintf(zCmd, sizeof zCmd,
                 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d[\"traces\"];"
                 " assert len(t)==2 and t[0][\"devices\"][0][\"total_bytes\"]==85520809984"
                 " and t[1][\"process\"][\"pid\"]==4242 and t[0][\"rows\"][\"kernel\"]==3' '%s'",
                 zJson);
        ASSERT_EQ(0, system(zCmd));
    }
    free(zOut);
    free(zErr);
    cli_cleanup();
}

TEST(info_json_escapes_text)
{
    const char *zDir = cli_tmpdir();
    char zTrace[PATH_MAX + 16], *zOut, *zErr;
    char *azArg[] = {"--json", zTrace, NULL};
    sqlite3 *db = NULL;
    char *zMsg = NULL;
    snprintf(zTrace, sizeof zTrace, "%s/t.db", zDir);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, &zMsg));
    cli_exec(db, "INSERT INTO meta VALUES('cmdline', 'a\tb\\c' || char(10) || 'd ' || char(233) || ' '"
                 " || CAST(X'FF41' AS TEXT))");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azArg, &zOut, &zErr));
    /* control characters escaped, valid UTF-8 kept, an invalid byte replaced */
    ASSERT_CONTAINS(zOut, "\"cmdline\":\"a\\tb\\\\c\\nd \xc3\xa9 \\ufffdA\"");
    free(zOut);
    free(zErr);
    cli_cleanup();
}

TEST(info_peaks_per_device)
{
    const char *zDir = cli_tmpdir();
    char zTrace[PATH_MAX + 16], *zOut, *zErr;
    char *azArg[] = {"--json", zTrace, NULL};
    sqlite3 *db = NULL;
    char *zMsg = NULL;
    snprintf(zTrace, sizeof zTrace, "%s/t.db", zDir);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, &zMsg));
    /* inserted out of time order; the peak is the first time the highest total is reached */
    cli_exec(db, "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device) VALUES"
                 "(60,1,3,9000,100,1),(10,1,3,1000,100,1),(20,1,3,2000,50,0),(30,1,3,3000,300,1),"
                 "(40,2,3,1000,100,1),(50,1,3,5000,70,0),(70,1,2,7000,1000,0),(80,5,3,8000,5000,0)");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azArg, &zOut, &zErr));
    /* the one rule for live bytes (analyze's): the mapping of a handle never seen created counts itself */
    ASSERT_CONTAINS(zOut, "\"peak_live_device\":[{\"device\":0,\"bytes\":5120,\"ts\":80},"
                          "{\"device\":1,\"bytes\":400,\"ts\":30}]");
    /* analyze's count: every lifetime, the mapping counting itself included */
    ASSERT_CONTAINS(zOut, "\"allocations\":7,\"allocated_bytes\":6620,\"frees\":1,\"vmm_maps\":1");
    free(zOut);
    free(zErr);
    cli_cleanup();
}

/* Impossible rows are hidden and counted; the pass over each event table and the SQL it replaces agree. */
TEST(info_hostile_rows_both_ways)
{
    const char *zDir = cli_tmpdir();
    char zTrace[PATH_MAX + 16], *zOut, *zErr, *zOut2, *zErr2;
    char *azArg[] = {"--json", zTrace, NULL};
    sqlite3 *db = NULL;
    char *zMsg = NULL;
    snprintf(zTrace, sizeof zTrace, "%s/t.db", zDir);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    /* stored times relative to a base of 1 s, as the tracer writes them */
    ASSERT_EQ(SQLITE_OK, vt__schema_create_at(db, 1000000000, &zMsg));
    /* 5 rows no real trace holds (hidden: 3 memory events, a kernel, a buffer use), an unknown op (counted,
     * in no group), two devices */
    cli_exec(db, "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, pool_used) VALUES"
                 "(10,1,3,1000,100,0,1),(20,1,3,2000,300,1,1),(30,2,3,1000,100,0,1),(40,1,2,3000,8,NULL,1),"
                 "(-9223372036854775808,1,3,4000,5000,0,1),(50,1,3,5000,-5,0,1),('soon',1,3,6000,7,0,1),"
                 "(60,99,3,7000,9,0,1),(70,5,3,8000,64,0,1);"
                 "INSERT INTO kernel(t, dur) VALUES (15, 5), (25, 'later'), (35, 100);"
                 "INSERT INTO memcpy(t, dur, copy_kind, src_kind, dst_kind, bytes, src) VALUES"
                 "(12, 3, 1, 1, 3, 4096, 1), (14, 2, 2, 3, 2, 512, 2), (16, 2, 1, 2, 3, 1024, 3);"
                 "INSERT INTO nvtx_range(t, dur, kind) VALUES (5, NULL, 1), (8, 200, 1);"
                 "INSERT INTO buffer_use(correlation, kind, address, t) VALUES (1, 0, 1000, NULL), (2, 0, 'a', 3)");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azArg, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "5 rows with impossible values were ignored");
    ASSERT_CONTAINS(zOut, "\"time\":{\"first_ns\":1000000005,\"last_ns\":1000000208,\"duration_ns\":203,");
    ASSERT_CONTAINS(zOut, "\"rows\":{\"memory_event\":6,\"api_call\":0,\"memcpy\":3,\"memset\":0,"
                          "\"kernel\":2,\"buffer_use\":1,\"nvtx_range\":2,");
    ASSERT_CONTAINS(zOut, "\"memory\":{\"allocations\":4,\"allocated_bytes\":472,\"frees\":1,\"vmm_maps\":1,"
                          "\"allocations_by_kind\":[{\"mem_kind\":\"pinned\",\"count\":1,\"bytes\":8},"
                          "{\"mem_kind\":\"device\",\"count\":2,\"bytes\":400}],"
                          "\"peak_live_device\":[{\"device\":0,\"bytes\":100,\"ts\":1000000010},"
                          "{\"device\":1,\"bytes\":300,\"ts\":1000000020}],\"vmm_creations\":0,\"tensor_blocks\":0,"
                          "\"level\":\"allocations\",\"live_at_end\":3,\"live_at_end_bytes\":372,");
    ASSERT_CONTAINS(zOut, "\"copies\":{\"count\":3,\"bytes\":5632,\"pageable\":1,\"by_kind\":["
                          "{\"copy_kind\":\"HtoD\",\"count\":2,\"bytes\":5120,\"pageable\":1},"
                          "{\"copy_kind\":\"DtoH\",\"count\":1,\"bytes\":512,\"pageable\":0}]}");
    /* a real number in a kept row of each table, a text op: SQL reads those tables, with the same result */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "UPDATE memory_event SET pool_used = 0.5; UPDATE memory_event SET op = 'x' WHERE op = 99;"
                 "UPDATE memcpy SET dur = dur + 0.25;" /* an address is an integer: a real one is impossible */
                 "UPDATE kernel SET t = 15.5 WHERE t = 15; UPDATE nvtx_range SET dur = 200.5 WHERE t = 8");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azArg, &zOut2, &zErr2));
    ASSERT_STREQ(zErr, zErr2);
    ASSERT_STREQ(zOut, zOut2);
    free(zOut);
    free(zErr);
    free(zOut2);
    free(zErr2);
    cli_cleanup();
}

/* Device allocations stored out of time order, a little (restored in the pass) or far (sorted by SQL). */
/* Blank the digits of "file_bytes" in the JSON z (in place). */
static void no_file_bytes(char *z)
{
    char *p = strstr(z, "\"file_bytes\":");
    if (!p) return;
    for (p += 13; *p >= '0' && *p <= '9'; p++) *p = '0';
}

TEST(info_peaks_out_of_order)
{
    const char *zDir = cli_tmpdir();
    char zTrace[PATH_MAX + 16], *zOut, *zErr;
    char *azArg[] = {"--json", zTrace, NULL};
    static const char *const azLate[] = {"19990", "1"}; /* the time of the last row: 10 rows back, 20000 back */
    for (int i = 0; i < 2; i++) {
        sqlite3 *db = NULL;
        char *zMsg = NULL, zSql[512];
        snprintf(zTrace, sizeof zTrace, "%s/t%d.db", zDir, i);
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
        ASSERT_EQ(SQLITE_OK, vt__schema_create(db, &zMsg));
        /* 20000 allocations of 1 byte at times 1..20000, then a free of 3 bytes stored last */
        snprintf(zSql, sizeof zSql,
                 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)"
                 " INSERT INTO memory_event(t, op, mem_kind, address, bytes, device) SELECT i, 1, 3, 4096 * i, 1, 0"
                 " FROM n; INSERT INTO memory_event(t, op, mem_kind, address, bytes, device)"
                 " VALUES (%s, 2, 3, 4096, 3, 0)",
                 azLate[i]);
        cli_exec(db, zSql);
        sqlite3_close(db);
        ASSERT_EQ(VT_EXIT_OK, run_info(azArg, &zOut, &zErr));
        /* in time order the free comes before the last allocations; it ends the 1-byte allocation at its
         * address (the pairing analyze makes), whatever size it claims: the peak is 19999 */
        ASSERT_CONTAINS(zOut, "\"peak_live_device\":[{\"device\":0,\"bytes\":19999,\"ts\":20000}]");
        free(zOut);
        free(zErr);
    }
    {
        /* allocations of j + 1 bytes at 10j + 1, each freed at 10j + 5, stored shuffled within 40 ns: in time
         * order the peak is the last one alone; the pass restores the order, SQL sorts (a real pool_used) */
        sqlite3 *db = NULL;
        char *zMsg = NULL, *zOut2, *zErr2;
        snprintf(zTrace, sizeof zTrace, "%s/t2.db", zDir);
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
        ASSERT_EQ(SQLITE_OK, vt__schema_create(db, &zMsg));
        cli_exec(db, "WITH RECURSIVE n(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM n WHERE j < 999),"
                     " e(t, op, b) AS (SELECT 10 * j + 1, 1, j + 1 FROM n UNION ALL SELECT 10 * j + 5, 2, j + 1 FROM n)"
                     " INSERT INTO memory_event(t, op, mem_kind, address, bytes, device)"
                     " SELECT t, op, 3, 4096 * b, b, 0 FROM e ORDER BY t / 40, (t * 7919) % 101");
        sqlite3_close(db);
        ASSERT_EQ(VT_EXIT_OK, run_info(azArg, &zOut, &zErr));
        ASSERT_CONTAINS(zOut, "\"peak_live_device\":[{\"device\":0,\"bytes\":1000,\"ts\":9991}]");
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
        cli_exec(db, "UPDATE memory_event SET pool_used = 0.5 WHERE rowid = 7");
        sqlite3_close(db);
        ASSERT_EQ(VT_EXIT_OK, run_info(azArg, &zOut2, &zErr2));
        no_file_bytes(zOut); /* the update may have grown the file by a page */
        no_file_bytes(zOut2);
        ASSERT_STREQ(zOut, zOut2);
        ASSERT_STREQ(zErr, zErr2);
        free(zOut);
        free(zErr);
        free(zOut2);
        free(zErr2);
    }
    cli_cleanup();
}

TEST(info_bad_input)
{
    const char *zDir = cli_tmpdir();
    char zText[PATH_MAX + 16], zEmpty[PATH_MAX + 16], zTrace[PATH_MAX + 16], zMissing[PATH_MAX + 16];
    char *zOut, *zErr;
    char *azNone[] = {NULL};
    char *azOpt[] = {"--bogus", zTrace, NULL};
    char *azMissing[] = {zMissing, NULL};
    char *azText[] = {zText, NULL};
    char *azEmpty[] = {zEmpty, NULL};
    char *azMixed[] = {zMissing, zTrace, NULL};
    char *azMissingJson[] = {"--json", zMissing, NULL};
    char *azMixedJson[] = {"--json", zMissing, zTrace, NULL};
    char *azHelp[] = {"--help", NULL};
    snprintf(zText, sizeof zText, "%s/notes.txt", zDir);
    snprintf(zEmpty, sizeof zEmpty, "%s/empty.db", zDir);
    snprintf(zTrace, sizeof zTrace, "%s/t.db", zDir);
    snprintf(zMissing, sizeof zMissing, "%s/missing.db", zDir);
    cli_write(zText, "this is not a database, just some text that is long enough to be read\n");
    cli_write(zEmpty, "");
    cli_make_trace(zTrace, 1);

    ASSERT_EQ(VT_EXIT_USAGE, run_info(azNone, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "info: no trace given");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_USAGE, run_info(azOpt, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "unknown option '--bogus'");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_NOFILE, run_info(azMissing, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "missing.db: No such file or directory");
    ASSERT_STREQ("", zOut);
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_NOT_TRACE, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "notes.txt: neither a vramtrace trace nor a file it imports (a PyTorch memory snapshot "
                          "pickle, an Nsight Systems SQLite export or a torch.profiler JSON trace)");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_NOT_TRACE, run_info(azEmpty, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "empty file");
    free(zOut), free(zErr);
    /* one bad trace among good ones: the good one is still shown, the bad one named, the status partial */
    ASSERT_EQ(VT_EXIT_PARTIAL, run_info(azMixed, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\nprocess     pid 4242 (parent 4200)");
    ASSERT_CONTAINS(zErr, "missing.db: No such file or directory");
    free(zOut), free(zErr);
    /* --json: nothing read, nothing on standard output (as analyze), not an empty list; some read, those */
    ASSERT_EQ(VT_EXIT_NOFILE, run_info(azMissingJson, &zOut, &zErr));
    ASSERT_STREQ("", zOut);
    ASSERT_CONTAINS(zErr, "missing.db: No such file or directory");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_PARTIAL, run_info(azMixedJson, &zOut, &zErr));
    ASSERT(!strncmp(zOut, "{\"format\":\"vramtrace-info\",\"format_version\":1,\"traces\":[{\"path\":", 60));
    ASSERT(strlen(zOut) > 3 && !strcmp(zOut + strlen(zOut) - 3, "]}\n"));
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_OK, run_info(azHelp, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "usage: vramtrace info [--json] TRACE...");
    free(zOut), free(zErr);
    /* a table every trace has, dropped by hand: damaged, and the message names it (not exit 0 in silence) */
    {
        sqlite3 *db = NULL;
        char *azTrace[] = {zTrace, NULL};
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP TABLE buffer_use", NULL, NULL, NULL));
        sqlite3_close(db);
        ASSERT_EQ(VT_EXIT_CORRUPT, run_info(azTrace, &zOut, &zErr));
        ASSERT_CONTAINS(zErr, "t.db: trace is damaged: table 'buffer_use' is missing");
        free(zOut), free(zErr);
    }
    cli_cleanup();
}

/*
 * What recorded a trace (libcupti, runtime, layouts, the CUPTI subscription), the note of kinds whose
 * layout the tracer did not know, and the note of a trace recorded as one of several subscribers.
 */
TEST(info_recorded_by_and_reduced_kinds)
{
    const char *zDir = cli_tmpdir();
    char zTrace[PATH_MAX + 16], zOutF[PATH_MAX + 16], zErrF[PATH_MAX + 16], *zOut, *zErr;
    char *azText[] = {zTrace, NULL};
    char *azJson[] = {"--json", zTrace, NULL};
    char *azAnalyze[] = {(char *)cli_vramtrace(), "analyze", "--no-write", zTrace, NULL};
    sqlite3 *db = NULL;
    snprintf(zTrace, sizeof zTrace, "%s/t.db", zDir);
    snprintf(zOutF, sizeof zOutF, "%s/a.out", zDir);
    snprintf(zErrF, sizeof zErrF, "%s/a.err", zDir);
    cli_make_trace(zTrace, 1);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "INSERT INTO meta VALUES ('cupti_library', '/venv/nvidia/cu13/lib/libcupti.so.13'),"
                 " ('cuda_runtime_library', '/venv/nvidia/cu13/lib/libcudart.so.13'), ('cupti_layout', '13.4'),"
                 " ('cupti_layout_table', '1: CUPTI 13.0 to 13.4 Update 1')");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\nlibcupti    /venv/nvidia/cu13/lib/libcupti.so.13\n"
                          "libcudart   /venv/nvidia/cu13/lib/libcudart.so.13\n"
                          "layouts     CUPTI 13.4 records (layout table 1: CUPTI 13.0 to 13.4 Update 1)\n");
    ASSERT(strstr(zOut, "did not know") == NULL);
    free(zOut), free(zErr);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "UPDATE meta SET value = 'unknown: CUPTI API version 130500 is newer than the table'"
                 " WHERE key = 'cupti_layout'");
    cli_exec(db, "UPDATE meta SET value = '130500' WHERE key = 'cupti_version'");
    cli_exec(db, "INSERT INTO meta VALUES ('cupti_kinds_reduced', 'CONCURRENT_KERNEL,MEMORY2: record layout unknown')");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "layouts     unknown: CUPTI API version 130500 is newer than the table (layout table");
    ASSERT_CONTAINS(zOut, "            recorded with CUPTI 130500, whose activity record layouts the tracer did not "
                          "know for every kind: CONCURRENT_KERNEL,MEMORY2: record layout unknown;");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_OK, run_info(azJson, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"cupti_kinds_reduced\":\"CONCURRENT_KERNEL,MEMORY2: record layout unknown\"");
    ASSERT_CONTAINS(zOut, "\"recorded with CUPTI 130500, whose activity record layouts");
    ASSERT(strstr(zOut, "one of several CUPTI subscribers") == NULL);
    free(zOut), free(zErr);
    /* the subscription: one of several subscribers (CUPTI 13.3+) is a line and a note; the only one, a line */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "INSERT INTO meta VALUES ('cupti_subscription', 'several: one of several CUPTI subscribers (CUPTI API "
                 "version 130301, multi-subscriber mode asked for by the tracer)')");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\nsubscriber  several: one of several CUPTI subscribers (CUPTI API version 130301, "
                          "multi-subscriber mode asked for by the tracer)\n");
    ASSERT_CONTAINS(zOut, "recorded as one of several CUPTI subscribers (CUPTI's multi-subscriber mode, 13.3 and "
                          "later): other CUPTI tools in the job");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_OK, run_info(azJson, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"cupti_subscription\":\"several: one of several CUPTI subscribers (CUPTI API version");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_OK, cli_run(azAnalyze, NULL, zOutF, zErrF));
    zOut = cli_read(zOutF);
    ASSERT_CONTAINS(zOut, "note: recorded as one of several CUPTI subscribers");
    free(zOut);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "UPDATE meta SET value = 'one: VRAMTRACE_SUBSCRIBERS=one' WHERE key = 'cupti_subscription'");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\nsubscriber  one: VRAMTRACE_SUBSCRIBERS=one\n");
    ASSERT(strstr(zOut, "recorded as one of several") == NULL);
    free(zOut), free(zErr);
}

/* A trace whose GPU activity stops early (another CUPTI client took over, or CUPTI's fatal error)
 * says so from the read layer: info's status and JSON, analyze's notes. */
TEST(info_partial_trace)
{
    const char *zDir = cli_tmpdir();
    char zTrace[PATH_MAX + 16], zOutF[PATH_MAX + 16], zErrF[PATH_MAX + 16], *zOut, *zErr;
    char *azText[] = {zTrace, NULL};
    char *azJson[] = {"--json", zTrace, NULL};
    char *azAnalyze[] = {(char *)cli_vramtrace(), "analyze", "--no-write", "--format", "json", zTrace, NULL};
    sqlite3 *db = NULL;
    snprintf(zTrace, sizeof zTrace, "%s/t.db", zDir);
    snprintf(zOutF, sizeof zOutF, "%s/a.out", zDir);
    snprintf(zErrF, sizeof zErrF, "%s/a.err", zDir);
    cli_make_trace(zTrace, 1);

    /* complete: no partial state anywhere */
    ASSERT_EQ(VT_EXIT_OK, run_info(azJson, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"partial\":null");
    free(zOut), free(zErr);

    /* the takeover 500 ms after the first event, a fatal error later: the earlier one counts */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_takeover_ns', (SELECT min(ts) FROM memory_event) + 500000000");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_fatal_error_ns', (SELECT min(ts) FROM memory_event) + 900000000");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "WARNING: partial from 500.0 ms after the start: another CUPTI client");
    ASSERT_CONTAINS(zOut, "\nnotes       partial trace from 500.0 ms after the start: another CUPTI client");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_OK, run_info(azJson, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"partial\":{\"from_ns\":");
    ASSERT_CONTAINS(zOut, "\"reason\":\"another CUPTI client (torch.profiler/Kineto, Nsight) took the activity");
    ASSERT_CONTAINS(zOut, "\"notes\":[\"partial trace from 500.0 ms after the start");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_OK, cli_run(azAnalyze, NULL, zOutF, zErrF));
    zOut = cli_read(zOutF);
    ASSERT_CONTAINS(zOut, "partial trace from 500.0 ms after the start: another CUPTI client (torch.profiler/"
                          "Kineto, Nsight) took the activity buffers over: GPU activity (kernels, copies, sets, "
                          "CUPTI's allocation records, NVTX ranges) is missing from then on");
    free(zOut);

    /* the tracer saw who took CUPTI over (record --keep-cupti's mark): it is named */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "INSERT INTO meta VALUES('cupti_takeover_by', 'torch.profiler')");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "WARNING: partial from 500.0 ms after the start: torch.profiler took the activity buffers "
                          "over: GPU activity (kernels");
    free(zOut), free(zErr);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "DELETE FROM meta WHERE key = 'cupti_takeover_by'");
    sqlite3_close(db);

    /* the size bound's mark before both; a recording window */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "INSERT INTO meta SELECT 'size_limit_thin_ns', (SELECT min(ts) FROM memory_event) + 200000000");
    cli_exec(db, "INSERT INTO meta VALUES('config.start_after_ns', '100000000'), ('config.stop_after_ns', '2000000000')");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "WARNING: partial from 200.0 ms after the start: the trace neared its size bound "
                          "(VRAMTRACE_MAX_BYTES)");
    ASSERT_CONTAINS(zOut, "recorded in a window: kernels, copies, sets, API calls and NVTX ranges only from 100.0 ms "
                          "to 2.00 s after the start");
    free(zOut), free(zErr);
    /* the bound reached at the mark's moment (one commit crossed both): nothing was written from then on */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "INSERT INTO meta SELECT 'size_limit_reached_ns', value FROM meta WHERE key = 'size_limit_thin_ns'");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "WARNING: partial from 200.0 ms after the start: the trace reached its size bound "
                          "(VRAMTRACE_MAX_BYTES): nothing was written from then on");
    free(zOut), free(zErr);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "DELETE FROM meta WHERE key IN ('size_limit_thin_ns', 'size_limit_reached_ns', 'config.start_after_ns', "
                 "'config.stop_after_ns')");
    sqlite3_close(db);

    /* the fatal error alone */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "DELETE FROM meta WHERE key = 'cupti_takeover_ns'");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "WARNING: partial from 900.0 ms after the start: CUPTI reported a fatal error");
    free(zOut), free(zErr);

    /* a mark after the trace's last event (2.50 s): the trace is partial from that event, the mark said beside it
     * (was "partial from 9.00 s after the start" in a trace of 2.50 s) */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "UPDATE meta SET value = (SELECT min(ts) FROM memory_event) + 9000000000 WHERE key = 'cupti_fatal_error_ns'");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "WARNING: partial from 2.50 s after the start (its last event; the cause marked at 9.00 s): "
                          "CUPTI reported a fatal error");
    ASSERT_CONTAINS(zOut, "\nnotes       partial trace from 2.50 s after the start (its last event; the cause marked at "
                          "9.00 s): CUPTI");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_OK, run_info(azJson, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"partial\":{\"from_ns\":3600000000,\"marked_ns\":10100000000,");
    free(zOut), free(zErr);
    cli_cleanup();
}

/*
 * CUPTI lent to the job's torch.profiler: each window's GPU activity is unknown, said by the read
 * layer in info's notes and JSON and in analyze's notes; API calls unknown while the profiler
 * kept CUPTI's only subscription, and for the moments the subscription went with it.
 */
TEST(info_lent_cupti)
{
    const char *zDir = cli_tmpdir();
    char zTrace[PATH_MAX + 16], zOutF[PATH_MAX + 16], zErrF[PATH_MAX + 16], *zOut, *zErr;
    char *azText[] = {zTrace, NULL};
    char *azJson[] = {"--json", zTrace, NULL};
    char *azAnalyze[] = {(char *)cli_vramtrace(), "analyze", "--no-write", zTrace, NULL};
    sqlite3 *db = NULL;
    snprintf(zTrace, sizeof zTrace, "%s/t.db", zDir);
    snprintf(zOutF, sizeof zOutF, "%s/a.out", zDir);
    snprintf(zErrF, sizeof zErrF, "%s/a.err", zDir);
    cli_make_trace(zTrace, 1);
    ASSERT_EQ(VT_EXIT_OK, run_info(azJson, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"cupti_lend\":[]");
    free(zOut), free(zErr);

    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "CREATE TEMP TABLE t0 AS SELECT min(ts) AS t FROM memory_event");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_lend.1.client', 'torch.profiler'");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_lend.1.from_ns', t + 200000000 FROM t0");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_lend.1.api_from_ns', t + 200000000 FROM t0");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_lend.1.api_until_ns', t + 210000000 FROM t0");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_lend.1.until_ns', t + 400000000 FROM t0");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_lend.2.client', 'torch.profiler'");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_lend.2.from_ns', t + 600000000 FROM t0");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_lend.2.until_ns', t + 700000000 FROM t0");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_lend.2.api_from_ns', t + 600000000 FROM t0");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_lend.2.api_held_by', 'torch.profiler'");
    cli_exec(db, "INSERT INTO meta SELECT 'cupti_lend.10.client', 'torch.profiler'"); /* no start: not read */
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, run_info(azText, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "CUPTI was lent to torch.profiler (the job's own profiler) 2 times: GPU activity (kernels, "
                          "copies, sets, CUPTI's allocation records, NVTX ranges) is unknown, not absent, from "
                          "200.0 ms to 400.0 ms, 600.0 ms to 700.0 ms after the start (300.0 ms in all); API calls "
                          "were not recorded either for 10.0 ms while it started;");
    ASSERT_CONTAINS(zOut, "API calls (allocations and frees through the CUDA API, OOMs, call sites) were not "
                          "recorded from 600.0 ms after the start to the end: torch.profiler kept CUPTI's only "
                          "subscription");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_OK, run_info(azJson, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"cupti_lend\":[{\"client\":\"torch.profiler\",\"from_ns\":");
    ASSERT_CONTAINS(zOut, "\"api_held_by\":null},{\"client\":\"torch.profiler\"");
    ASSERT_CONTAINS(zOut, "\"api_until_ns\":null,\"api_held_by\":\"torch.profiler\"}]");
    free(zOut), free(zErr);
    ASSERT_EQ(VT_EXIT_OK, cli_run(azAnalyze, NULL, zOutF, zErrF));
    zOut = cli_read(zOutF);
    ASSERT_CONTAINS(zOut, "CUPTI was lent to torch.profiler (the job's own profiler) 2 times");
    ASSERT_CONTAINS(zOut, "torch.profiler kept CUPTI's only");
    free(zOut);
    cli_cleanup();
}

VT_TEST_LIST(T(info_text_exact) T(info_unclosed_empty_trace) T(info_json) T(info_json_escapes_text)
             T(info_peaks_per_device) T(info_hostile_rows_both_ways)
             T(info_peaks_out_of_order) T(info_bad_input) T(info_partial_trace) T(info_recorded_by_and_reduced_kinds)
             T(info_lent_cupti))
