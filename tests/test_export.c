/* Tests for `vramtrace export --perfetto`: strict JSON structure, event counts, exact values, streaming. */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>

#include "read/read.h"
#include "sql_fixture.h"
#include "vramtrace/demangle.h"
#include "sql_run.h"
#include "vt_test.h"

/*
 * Strict checker run with python3: rejects NaN/Infinity and duplicate keys,
 * checks every event's required fields and types, then prints a summary (event
 * counts per phase.category and a few exact values) that the tests compare.
 */
static const char zChecker[] =
    "import json, sys\n"
    "def nodup(pairs):\n"
    "    keys = [k for k, _ in pairs]\n"
    "    if len(keys) != len(set(keys)): raise ValueError('duplicate key %r' % keys)\n"
    "    return dict(pairs)\n"
    "def bad(x): raise ValueError('not JSON: ' + x)\n"
    "d = json.load(open(sys.argv[1], encoding='utf-8'), object_pairs_hook=nodup, parse_constant=bad)\n"
    "assert set(d) == {'displayTimeUnit', 'otherData', 'traceEvents'}, d.keys()\n"
    "assert d['displayTimeUnit'] == 'ns'\n"
    "ev = d['traceEvents']\n"
    "counts = {}\n"
    "for e in ev:\n"
    "    for k in ('ph', 'pid', 'tid', 'name'): assert k in e, e\n"
    "    assert type(e['pid']) is int and type(e['tid']) is int, e\n"
    "    ph = e['ph']\n"
    "    assert ph in ('M', 'X', 'i', 'C', 'b', 'e'), e\n"
    "    if ph in ('b', 'e'): assert type(e['id']) is str, e\n"
    "    if ph != 'M': assert type(e['ts']) in (int, float) and e['ts'] >= 0, e\n"
    "    if ph == 'X': assert type(e['dur']) in (int, float) and e['dur'] >= 0, e\n"
    "    if ph == 'i': assert e['s'] in ('t', 'p'), e\n"
    "    if ph == 'C': assert all(type(v) is int for v in e['args'].values()), e\n"
    "    key = ph + '.' + (e['name'] if ph == 'M' else e.get('cat', ''))\n"
    "    counts[key] = counts.get(key, 0) + 1\n"
    "print('clock', d['otherData']['clock'])\n"
    "for k in sorted(counts): print(k, counts[k])\n"
    "for pid in sorted({e['pid'] for e in ev}):\n"
    "    mine = [e for e in ev if e['pid'] == pid]\n"
    "    name = [e['args']['name'] for e in mine if e['name'] == 'process_name'][0]\n"
    "    dev = [e['args']['device'] for e in mine if e['ph'] == 'C' and 'device' in e['args']]\n"
    "    k = [e for e in mine if e.get('cat') == 'kernel' and e['name'] == 'sgemm_bwd'][0]\n"
    "    tn = [e['args']['name'] for e in mine if e['name'] == 'thread_name' and e['tid'] == k['tid']][0]\n"
    "    a = [e for e in mine if e.get('cat') == 'alloc' and e['args']['address'] == '0x50000000'][0]\n"
    "    o = [e for e in mine if e.get('cat') == 'oom'][0]\n"
    "    c = [e for e in mine if e.get('cat') == 'memcpy' and e['args']['src_kind'] == 'pinned'][0]\n"
    "    n = [e for e in mine if e.get('cat') == 'nvtx' and e['name'] == 'validation'][0]\n"
    "    print(pid, repr(name), 'peak', max(dev), 'last', dev[-1])\n"
    "    print(pid, 'kernel', k['ts'], k['dur'], repr(tn), k['args']['grid'], k['args']['correlation'])\n"
    "    print(pid, 'alloc', a['ts'], a['args']['bytes'], repr(a['args']['site']), a['tid'])\n"
    "    print(pid, 'oom', o['ts'], repr(o['name']), o['args']['free_bytes'], repr(o['args']['site']))\n"
    "    print(pid, 'copy', c['ts'], c['dur'], c['args']['bytes'], c['args']['dst'])\n"
    "    print(pid, 'nvtx', n['ts'], n['dur'], n['tid'])\n"
    "    s = {}\n"
    "    for e in mine:\n"
    "        if e['ph'] == 'C' and e['name'].endswith('memory by site'):\n"
    "            for k2, v in e['args'].items(): s[k2] = max(s.get(k2, 0), v)\n"
    "    print(pid, 'site peaks', sorted(s.items()))\n"
    "    for e in mine:\n"
    "        if e['ph'] in ('b', 'e'): print(pid, e['ph'], e['name'], e['id'], e['ts'], e['tid'])\n"
    "        if e.get('args', {}).get('unterminated'): print(pid, 'open', e['name'], e['ts'], e['dur'])\n";

/* Run the checker on zJson; returns its stdout (malloc'd), fails the test when it fails. */
static char *check_json(const char *zDir, const char *zJson)
{
    char zScript[300], zCmd[1200], zOut[300];
    FILE *f;
    int status;
    if (system("python3 -c 'import json' >/dev/null 2>&1") != 0) SKIP("python3 not found");
    snprintf(zScript, sizeof zScript, "%s/check.py", zDir);
    snprintf(zOut, sizeof zOut, "%s/check.out", zDir);
    f = fopen(zScript, "w");
    ASSERT(f != NULL);
    fputs(zChecker, f);
    fclose(f);
    snprintf(zCmd, sizeof zCmd, "python3 %s %s >%s", zScript, zJson, zOut);
    status = system(zCmd);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("the JSON checker failed on %s", zJson);
    return vt_slurp(zOut);
}

static const char zSummaryCounts[] = "C. 26\n" /* 10 by memory kind, 8 by site, 8 by category */
                                     "M.process_labels 1\n"
                                     "M.process_name 1\n"
                                     "M.process_sort_index 1\n"
                                     "M.thread_name 2\n"
                                     "M.thread_sort_index 1\n"
                                     "X.kernel 4\n"
                                     "X.memcpy 5\n"
                                     "X.memset 1\n"
                                     "X.nvtx 3\n"
                                     "i.alloc 6\n"
                                     "i.free 4\n"
                                     "i.nvtx 1\n"
                                     "i.oom 1\n";

TEST(export_one_trace)
{
    const char *zDir = vt_tmpdir();
    char zTrace[256], zJson[256], zArgs[1024], zPart[300], *zOut, *zErr, *zSum;
    struct stat st;
    snprintf(zTrace, sizeof zTrace, "%s/rank0.db", zDir);
    snprintf(zJson, sizeof zJson, "%s/out.json", zDir);
    ASSERT_EQ(0, vt_fixture_write(zTrace, 0));
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s %s", zJson, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "4 kernels, 5 copies, 1 memsets, 4 NVTX, 6 allocs, 4 frees, 1 OOM");
    snprintf(zPart, sizeof zPart, "%s.part", zJson);
    ASSERT(stat(zPart, &st) != 0); /* renamed into place */
    zSum = check_json(zDir, zJson);
    /* Times are µs from the first event (at 400 ns: the one origin every command uses), so ns / 1000 - 0.4. */
    {
        char zWant[4096];
        snprintf(zWant, sizeof zWant,
                 "clock cupti\n%s"
                 "4242 'rank 0 pid 4242 @node1' peak 209715200 last 75497472\n"
                 "4242 kernel 15.6 3.0 'GPU 0 stream 7' [128, 1, 1] 104\n"
                 "4242 alloc 54.6 8388608 'eval.py:88 in validate' 100\n"
                 "4242 oom 64.6 'OOM: cudaMalloc 1.00 GiB on GPU 0' 536870912 'eval.py:88 in validate'\n"
                 "4242 copy 7.6 0.5 4194304 0x30000000\n"
                 "4242 nvtx 49.6 30.0 100\n"
                 /* live bytes by site (the sites the HTML report draws): each one's peak */
                 "4242 site peaks [('eval.py:88 in validate', 142606336), ('model.py:10 in init_model', 67108864), "
                 "('model.py:42 in train_step', 50331648)]\n",
                 zSummaryCounts);
        ASSERT_STREQ(zWant, zSum);
    }
    free(zSum);
    free(zOut);
    free(zErr);
    vt_cleanup(zDir);
}

TEST(export_two_ranks_aligned)
{
    const char *zDir = vt_tmpdir();
    char zT0[256], zT1[256], zJson[256], zArgs[1024], *zOut, *zErr, *zSum;
    sqlite3 *db;
    snprintf(zT0, sizeof zT0, "%s/rank0.db", zDir);
    snprintf(zT1, sizeof zT1, "%s/rank1.db", zDir);
    snprintf(zJson, sizeof zJson, "%s/both.json", zDir);
    ASSERT_EQ(0, vt_fixture_write(zT0, 0));
    ASSERT_EQ(0, vt_fixture_write(zT1, 1));
    /* rank 1 started 2 µs later on the wall clock: its events shift by 2 µs. */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zT1, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "UPDATE meta SET value = '1700000000000002000'"
                                          " WHERE key = 'clock_anchor_wall_ns'",
                                      NULL, NULL, NULL));
    sqlite3_close(db);
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s %s %s", zJson, zT0, zT1);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    zSum = check_json(zDir, zJson);
    ASSERT_CONTAINS(zSum, "clock wall\n");
    ASSERT_CONTAINS(zSum, "X.kernel 8\n");
    ASSERT_CONTAINS(zSum, "i.oom 2\n");
    ASSERT_CONTAINS(zSum, "M.process_name 2\n");
    ASSERT_CONTAINS(zSum, "4242 'rank 0 pid 4242 @node1' peak 209715200 last 75497472\n");
    ASSERT_CONTAINS(zSum, "4243 'rank 1 pid 4243 @node1' peak 343932928 last 75497472\n");
    ASSERT_CONTAINS(zSum, "4242 kernel 15.6 3.0 'GPU 0 stream 7'");
    ASSERT_CONTAINS(zSum, "4243 kernel 17.6 3.0 'GPU 0 stream 7'");
    free(zSum);
    free(zOut);
    free(zErr);
    vt_cleanup(zDir);
}

TEST(export_nvtx_kinds)
{
    const char *zDir = vt_tmpdir();
    char zTrace[256], zJson[256], zArgs[1024], *zOut, *zErr, *zSum;
    sqlite3 *db;
    snprintf(zTrace, sizeof zTrace, "%s/rank0.db", zDir);
    snprintf(zJson, sizeof zJson, "%s/nvtx.json", zDir);
    ASSERT_EQ(0, vt_fixture_write(zTrace, 0));
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    ASSERT_EQ(SQLITE_OK,
              sqlite3_exec(db, "INSERT INTO string VALUES(30, 'prefetch'), (31, 'teardown');"
                               "INSERT INTO nvtx_range(id, t, dur, kind, name_id, thread, depth)"
                               " VALUES(10, 20000, 10000, 1, 30, 200, NULL),"
                               " (11, 90000, NULL, 0, 31, 100, 0)",
                           NULL, NULL, NULL));
    sqlite3_close(db);
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s %s", zJson, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "6 NVTX");
    zSum = check_json(zDir, zJson);
    ASSERT_CONTAINS(zSum, "X.nvtx 4\n");
    ASSERT_CONTAINS(zSum, "b.nvtx 1\n");
    ASSERT_CONTAINS(zSum, "e.nvtx 1\n");
    ASSERT_CONTAINS(zSum, "M.thread_name 3\n"); /* stream 7, threads 100 and 200 */
    ASSERT_CONTAINS(zSum, "4242 b prefetch nvtx10 19.6 200\n4242 e prefetch nvtx10 29.6 200\n");
    /* never closed: ends at meta end_ns (100 µs) */
    ASSERT_CONTAINS(zSum, "4242 open teardown 89.6 10.0\n");
    free(zSum);
    free(zOut);
    free(zErr);
    vt_cleanup(zDir);
}

/* Outputs that are not regular files are written through, never renamed over. */
TEST(export_to_fifo_and_symlink)
{
    const char *zDir = vt_tmpdir();
    char zTrace[256], zFifo[256], zCopy[256], zLink[256], zReal[256], zArgs[1200], *zOut, *zErr;
    char *zJson;
    struct stat st;
    pid_t pid;
    int status, rc;
    snprintf(zTrace, sizeof zTrace, "%s/rank0.db", zDir);
    snprintf(zFifo, sizeof zFifo, "%s/fifo", zDir);
    snprintf(zCopy, sizeof zCopy, "%s/from_fifo.json", zDir);
    snprintf(zLink, sizeof zLink, "%s/link.json", zDir);
    snprintf(zReal, sizeof zReal, "%s/real.json", zDir);
    ASSERT_EQ(0, vt_fixture_write(zTrace, 0));
    ASSERT_EQ(0, mkfifo(zFifo, 0600));
    pid = fork(); /* the reader of the FIFO */
    ASSERT(pid >= 0);
    if (pid == 0) {
        char zCmd[600];
        snprintf(zCmd, sizeof zCmd, "cat %s > %s", zFifo, zCopy);
        _exit(system(zCmd) == 0 ? 0 : 1);
    }
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s %s", zFifo, zTrace);
    rc = vt_run(zDir, zArgs, &zOut, &zErr);
    if (rc != 0) { /* the export never opened the FIFO: let the reader see its end, then fail */
        int fd = open(zFifo, O_WRONLY | O_NONBLOCK);
        if (fd >= 0) close(fd);
        waitpid(pid, &status, 0);
    }
    ASSERT_EQ(0, rc);
    free(zOut), free(zErr);
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_EQ(0, lstat(zFifo, &st));
    ASSERT(S_ISFIFO(st.st_mode));
    zJson = vt_slurp(zCopy);
    ASSERT_CONTAINS(zJson, "\"displayTimeUnit\":\"ns\"");
    ASSERT_CONTAINS(zJson, "\"name\":\"sgemm_bwd\"");
    free(zJson);

    ASSERT_EQ(0, symlink("real.json", zLink));
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s %s", zLink, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    ASSERT_EQ(0, lstat(zLink, &st));
    ASSERT(S_ISLNK(st.st_mode));
    zJson = vt_slurp(zReal);
    ASSERT_CONTAINS(zJson, "\"name\":\"sgemm_bwd\"");
    free(zJson);
    vt_cleanup(zDir);
}

TEST(export_errors)
{
    const char *zDir = vt_tmpdir();
    char zTrace[256], zArgs[1024], *zOut, *zErr;
    snprintf(zTrace, sizeof zTrace, "%s/rank0.db", zDir);
    ASSERT_EQ(0, vt_fixture_write(zTrace, 0));
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s/no/such/dir/out.json %s", zDir, zTrace);
    ASSERT_EQ(3, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "cannot write");
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "export %s", zTrace);
    ASSERT_EQ(2, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s/o.json %s/absent.db", zDir, zDir);
    ASSERT_EQ(3, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    vt_cleanup(zDir);
}

/*
 * Run `vramtrace zCmd zArg1 zArg2 zArg3` in a child with standard output to /dev/null, standard
 * error to zErrPath and ASan's quarantine shrunk; the child's exit status into *pRc and its peak RSS in KiB returned
 * (-1 when it could not be run).
 */
static long run_peak_rss(const char *zErrPath, const char *zCmd, const char *zArg1, const char *zArg2,
                         const char *zArg3, int *pRc)
{
    struct rusage ru;
    int status, fd;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        fd = open(zErrPath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 2);
        fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
#ifdef __SANITIZE_ADDRESS__
        {
            /* ASan's quarantine keeps freed memory resident: shrink it for the measurement. */
            char zOpt[512];
            const char *zOld = getenv("ASAN_OPTIONS");
            snprintf(zOpt, sizeof zOpt, "%s%squarantine_size_mb=1", zOld ? zOld : "", zOld ? ":" : "");
            setenv("ASAN_OPTIONS", zOpt, 1);
        }
#endif
        execl(vt_bin(), "vramtrace", zCmd, zArg1, zArg2, zArg3, (char *)NULL);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status)) return -1;
    *pRc = WEXITSTATUS(status);
    return ru.ru_maxrss;
}

/*
 * A trace with 100k kernels and 100k alloc/free pairs exports with a peak RSS far below the size
 * of its JSON: rows are streamed, not loaded. The category tracks come from the analysis of the
 * trace (docs/cli.md: it holds two points per allocation), so the bound is analyze's own peak
 * on the same trace plus a margin that does not grow with the trace.
 */
TEST(export_streams_large_trace)
{
    const char *zDir = vt_tmpdir();
    char zTrace[256], zErrPath[300], zJson[300], *zErr, *zOut;
    sqlite3 *db;
    long rssAnalyze, rssExport;
    pid_t pid;
    int status, rc = -1;
    snprintf(zTrace, sizeof zTrace, "%s/big.db", zDir);
    snprintf(zErrPath, sizeof zErrPath, "%s/stderr", zDir);
    snprintf(zJson, sizeof zJson, "%s/big.json", zDir);
    /* Generate in a child: the exporter's peak RSS must not inherit this process's. */
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        ASSERT_EQ(0, vt_fixture_write(zTrace, 0));
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
        ASSERT_EQ(SQLITE_OK,
                  sqlite3_exec(db,
                               "BEGIN;"
                               "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n"
                               " WHERE i < 99999)"
                               " INSERT INTO kernel(t, dur, device, stream, correlation, name_id)"
                               " SELECT 200000 + i * 10, 5, 0, 7 + i % 4,"
                               " 1000 + i, 1 + i % 3 FROM n;"
                               "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n"
                               " WHERE i < 99999)"
                               " INSERT INTO memory_event(t, op, mem_kind, address, bytes, device)"
                               " SELECT 200000 + i * 10, 1 + (i >= 50000), 3,"
                               " 0x60000000 + (i % 50000) * 4096, 4096, 0 FROM n;"
                               "COMMIT;",
                               NULL, NULL, NULL));
        sqlite3_close(db);
        _exit(0);
    }
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    rssAnalyze = run_peak_rss(zErrPath, "analyze", "--format", "json", zTrace, &rc);
    ASSERT(rssAnalyze > 0);
    ASSERT_EQ(0, rc);
    rssExport = run_peak_rss(zErrPath, "export", "--perfetto", zJson, zTrace, &rc);
    ASSERT(rssExport > 0);
    ASSERT_EQ(0, rc);
    zErr = vt_slurp(zErrPath);
    ASSERT_CONTAINS(zErr, "100004 kernels, 5 copies, 1 memsets, 4 NVTX, 50006 allocs, 50004 frees");
    free(zErr);
    /* The JSON is ~45 MB; the writing streams (~8 MB, ~25 MB under ASan) beside the analysis. */
    fprintf(stderr, "large trace: peak RSS analyze %ld KiB, export %ld KiB\n", rssAnalyze, rssExport);
    if (rssExport > rssAnalyze + 24 * 1024)
        VT__FAIL("peak RSS %ld KiB against analyze's %ld KiB: export is not streaming", rssExport, rssAnalyze);
    /* 50000 pages live at once on top of the fixture's 72 MiB, then all freed. */
    zOut = vt_slurp(zJson);
    ASSERT_CONTAINS(zOut, "\"name\":\"GPU 0 memory\",\"ts\":699.590,\"args\":{\"device\":280297472}}");
    ASSERT(strstr(zOut, "\"device\":280301568}") == NULL);
    ASSERT_CONTAINS(zOut, "\"name\":\"GPU 0 memory\",\"ts\":1199.590,\"args\":{\"device\":75497472}}");
    free(zOut);
    vt_cleanup(zDir);
}

/* Unknown values (NULL grid or block sizes, an OOM's requested size) are left out of the events, never written as 0;
 * a process without a pid is named by its file. */
TEST(export_unknown_values_left_out)
{
    const char *zDir = vt_tmpdir();
    char zTrace[256], zJson[256], zArgs[1024], *zOut, *zErr, *zJ, *z;
    sqlite3 *db;
    snprintf(zTrace, sizeof zTrace, "%s/rank0.db", zDir);
    snprintf(zJson, sizeof zJson, "%s/out.json", zDir);
    ASSERT_EQ(0, vt_fixture_write(zTrace, 0));
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db,
                                      "UPDATE kernel SET grid_y = NULL, block_x = NULL WHERE correlation = 105;"
                                      "UPDATE oom_event SET bytes = NULL; DELETE FROM meta WHERE key = 'pid'",
                                      NULL, NULL, NULL));
    sqlite3_close(db);
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s %s", zJson, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    free(check_json(zDir, zJson)); /* still strict JSON */
    zJ = vt_slurp(zJson);
    /* the kernel keeps its name and time, without grid or block */
    z = strstr(zJ, "\"correlation\":105");
    ASSERT(z != NULL);
    ASSERT(strncmp(z, "\"correlation\":105,\"registers_per_thread\":32", 43) == 0);
    ASSERT_CONTAINS(zJ, "\"correlation\":104,\"grid\":[128,1,1],\"block\":[256,1,1]");
    ASSERT_CONTAINS(zJ, "\"name\":\"OOM: cudaMalloc on GPU 0\"");
    ASSERT(strstr(zJ, "requested_bytes") == NULL);
    ASSERT_CONTAINS(zJ, "\"name\":\"rank 0 rank0.db @node1\""); /* no pid: the process named by its file */
    free(zJ);
    vt_cleanup(zDir);
}

/* --from/--to keep the events overlapping the window, at their unwindowed times; counters start at the window's value. */
TEST(export_time_window)
{
    const char *zDir = vt_tmpdir();
    char zTrace[256], zJson[256], zArgs[1024], zCmd[512], *zOut, *zErr, *zJ;
    snprintf(zTrace, sizeof zTrace, "%s/rank0.db", zDir);
    snprintf(zJson, sizeof zJson, "%s/win.json", zDir);
    ASSERT_EQ(0, vt_fixture_write(zTrace, 0));
    /* kernels 10-15, 16-19 and 25-26 us (stored times) overlap 15-26 us; the one at 56 us does not: from the
     * origin (the first event, at 0.4 us), 14.6 to 25.6 us */
    snprintf(zArgs, sizeof zArgs, "export --from 14.6us --to 0.0256ms --perfetto %s %s", zJson, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "3 kernels, 0 copies, 0 memsets, 2 NVTX, 0 allocs, 1 frees, 0 OOM");
    free(zOut), free(zErr);
    snprintf(zCmd, sizeof zCmd, "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s", zJson);
    if (system("python3 -c 'import json' >/dev/null 2>&1") == 0) ASSERT_EQ(0, system(zCmd));
    zJ = vt_slurp(zJson);
    ASSERT_CONTAINS(zJ, "\"from_ns\":14600,\"to_ns\":25600}");
    ASSERT_CONTAINS(zJ, "\"name\":\"sgemm_bwd\",\"cat\":\"kernel\",\"ts\":15.600,\"dur\":3.000");
    /* device memory live at 15 us (stored): 64 + 16 + 32 MiB; then the free at 20 us */
    ASSERT_CONTAINS(zJ, "\"ts\":14.600,\"args\":{\"device\":117440512}}");
    ASSERT_CONTAINS(zJ, "\"ts\":19.600,\"args\":{\"device\":100663296}}");
    ASSERT(strstr(zJ, "\"ts\":2.600") == NULL);
    free(zJ);
    /* only an end; bad times and an inverted window are usage errors */
    snprintf(zArgs, sizeof zArgs, "export --to 4.6us --perfetto %s %s", zJson, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "0 kernels, 1 copies, 1 memsets, 1 NVTX, 4 allocs, 0 frees, 0 OOM");
    ASSERT(strstr(zErr, "no event lies") == NULL);
    free(zOut), free(zErr);
    /* a window past the end: an empty, valid file, and a note saying how long the trace lasts */
    snprintf(zArgs, sizeof zArgs, "export --from 1s --perfetto %s %s", zJson, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "0 kernels, 0 copies, 0 memsets, 0 NVTX, 0 allocs, 0 frees, 0 OOM");
    ASSERT_CONTAINS(zErr, "note: no event lies between 1.00 s and the end; the trace lasts");
    free(zOut), free(zErr);
    { /* a torch.profiler trace whose memory events carry no address: why it has no memory counter is said */
        const char *zData = getenv("VT_TEST_DATA");
        if (zData && VT_HAVE_ZLIB) { /* gzip'd: a build without zlib refuses it, as test_import checks */
            snprintf(zArgs, sizeof zArgs, "export --perfetto %s %s/import/kineto_noaddr.json.gz", zJson, zData);
            ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
            ASSERT_CONTAINS(zErr, "kineto_noaddr.json.gz: no memory counter: its memory events carry no address");
            free(zOut), free(zErr);
        }
    }
    { /* a trace with no event of known time (a snapshot of the state at its dump): said, not "lasts no time" */
        const char *zData = getenv("VT_TEST_DATA");
        if (zData) {
            snprintf(zArgs, sizeof zArgs, "export --from 1s --perfetto %s %s/import/snap_v1.pickle", zJson, zData);
            ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
            ASSERT_CONTAINS(zErr, "note: no event lies between 1.00 s and the end; no event of the trace has a known "
                                  "time, so no window holds any");
            ASSERT(!strstr(zErr, "lasts no time"));
            free(zOut), free(zErr);
        }
    }
    snprintf(zArgs, sizeof zArgs, "export --from 2parsecs --perfetto %s %s", zJson, zTrace);
    ASSERT_EQ(2, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "--from: '2parsecs' is not a time");
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "export --from 2s --to 1s --perfetto %s %s", zJson, zTrace);
    ASSERT_EQ(2, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "before --from");
    free(zOut), free(zErr);
    vt_cleanup(zDir);
}

/* --gzip writes the same document, gzip-compressed, to a file or to standard output. */
TEST(export_gzip)
{
    const char *zDir = vt_tmpdir();
    char zTrace[256], zPlain[256], zGz[256], zArgs[1024], zCmd[4096], zBack[300], *zOut, *zErr, *zA, *zB;
    struct stat st, stGz;
    snprintf(zTrace, sizeof zTrace, "%s/rank0.db", zDir);
    snprintf(zPlain, sizeof zPlain, "%s/plain.json", zDir);
    snprintf(zGz, sizeof zGz, "%s/out.json.gz", zDir);
    snprintf(zBack, sizeof zBack, "%s/back.json", zDir);
    ASSERT_EQ(0, vt_fixture_write(zTrace, 0));
    if (!VT_HAVE_ZLIB) { /* refused with the reason, nothing written */
        snprintf(zArgs, sizeof zArgs, "export --gzip --perfetto %s %s", zGz, zTrace);
        ASSERT_EQ(2, vt_run(zDir, zArgs, &zOut, &zErr));
        ASSERT_CONTAINS(zErr, "built without zlib");
        ASSERT(stat(zGz, &stGz) != 0);
        free(zOut), free(zErr);
        vt_cleanup(zDir);
        return;
    }
    if (system("gzip --version >/dev/null 2>&1") != 0) SKIP("gzip not found");
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s %s", zPlain, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "export --gzip --perfetto %s %s", zGz, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    ASSERT_EQ(0, stat(zGz, &stGz));
    ASSERT_EQ(0, stat(zPlain, &st));
    ASSERT(stGz.st_size * 4 < st.st_size);
    snprintf(zCmd, sizeof zCmd, "gzip -t %s && gzip -dc %s > %s", zGz, zGz, zBack);
    ASSERT_EQ(0, system(zCmd));
    zA = vt_slurp(zPlain);
    zB = vt_slurp(zBack);
    ASSERT_STREQ(zA, zB);
    free(zB);
    /* to standard output */
    snprintf(zArgs, sizeof zArgs, "export --gzip --perfetto - %s > %s", zTrace, zGz);
    snprintf(zCmd, sizeof zCmd, "%s %s && gzip -dc %s > %s", vt_bin(), zArgs, zGz, zBack);
    ASSERT_EQ(0, system(zCmd));
    zB = vt_slurp(zBack);
    ASSERT_STREQ(zA, zB);
    free(zA), free(zB);
    vt_cleanup(zDir);
}

/* Mangled kernel names are exported demangled; analyze stores them with their short names in kernel_name. */
TEST(export_demangled_kernel_names)
{
    const char *zDir = vt_tmpdir();
    char zTrace[256], zJson[256], zArgs[1024], *zOut, *zErr, *zJ, *z = NULL;
    sqlite3 *db;
    if (vt__demangle("_Z1fv", VT_DEMANGLE_LOAD, &z) != VT_DEMANGLE_OK) SKIP("no C++ runtime (libstdc++.so.6) installed");
    free(z);
    snprintf(zTrace, sizeof zTrace, "%s/rank0.db", zDir);
    snprintf(zJson, sizeof zJson, "%s/out.json", zDir);
    ASSERT_EQ(0, vt_fixture_write(zTrace, 0));
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "UPDATE string SET value = '_Z5scaleIfEvPT_i' WHERE id = 3", NULL, NULL, NULL));
    /* as the tracer writes it in a process without a C++ runtime: forms unknown */
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "INSERT INTO kernel_name VALUES(3, NULL, NULL)", NULL, NULL, NULL));
    sqlite3_close(db);
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s %s", zJson, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    zJ = vt_slurp(zJson);
    ASSERT_CONTAINS(zJ, "\"name\":\"void scale<float>(float*, int)\",\"cat\":\"kernel\"");
    ASSERT_CONTAINS(zJ, "\"name\":\"sgemm_bwd\",\"cat\":\"kernel\"");
    free(zJ);
    /* analyze writes kernel_name: every kernel's name, demangled and short */
    snprintf(zArgs, sizeof zArgs, "analyze --save %s", zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs,
             "sql %s \"SELECT n.name_id, d.value, s.value FROM kernel_name n JOIN string d ON d.id = n.demangled_id"
             " JOIN string s ON s.id = n.short_id ORDER BY 1\"",
             zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "      1  sgemm_fwd                       sgemm_fwd\n");
    ASSERT_CONTAINS(zOut, "      3  void scale<float>(float*, int)  scale\n");
    free(zOut), free(zErr);
    /* the Nsight view of `sql` reads them */
    snprintf(zArgs, sizeof zArgs,
             "sql --format csv --no-header %s \"SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k"
             " JOIN StringIds s ON s.id = k.shortName JOIN StringIds m ON m.id = k.mangledName"
             " WHERE m.value = '_Z5scaleIfEvPT_i'\"",
             zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_STREQ("scale\n", zOut);
    free(zOut), free(zErr);
    /* a second analyze adds nothing */
    snprintf(zArgs, sizeof zArgs, "analyze --save %s", zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "sql --format csv --no-header %s \"SELECT count(*) FROM kernel_name\"", zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_STREQ("3\n", zOut);
    free(zOut), free(zErr);
    vt_cleanup(zDir);
}

/* --csv DIR: one file per table, every trace's rows after trace, pid and rank, one header. */
TEST(export_csv_tables)
{
    const char *zDir = vt_tmpdir();
    char zT0[256], zT1[256], zOutDir[256], zFile[320], zArgs[1024], *zOut, *zErr, *zCsv;
    int nLines = 0;
    snprintf(zT0, sizeof zT0, "%s/rank0.db", zDir);
    snprintf(zT1, sizeof zT1, "%s/rank1.db", zDir);
    snprintf(zOutDir, sizeof zOutDir, "%s/csv", zDir);
    ASSERT_EQ(0, vt_fixture_write(zT0, 0));
    ASSERT_EQ(0, vt_fixture_write(zT1, 1));
    snprintf(zArgs, sizeof zArgs, "export --csv %s %s %s", zOutDir, zT0, zT1);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "CSV tables of 2 traces");
    free(zOut), free(zErr);
    snprintf(zFile, sizeof zFile, "%s/kernel.csv", zOutDir);
    zCsv = vt_slurp(zFile);
    ASSERT(!strncmp(zCsv, "trace,pid,rank,id,", 18));
    ASSERT_CONTAINS(zCsv, ",name,at_ns\n"); /* at_ns: ns from the one origin (the first event of both) */
    snprintf(zArgs, sizeof zArgs, "\n%s,4242,0,", zT0); /* trace: the path as given */
    ASSERT_CONTAINS(zCsv, zArgs);
    snprintf(zArgs, sizeof zArgs, "\n%s,4243,1,", zT1);
    ASSERT_CONTAINS(zCsv, zArgs);
    ASSERT_CONTAINS(zCsv, ",sgemm_fwd,9600\n");
    for (const char *p = zCsv; (p = strchr(p, '\n')) != NULL; p++) nLines++;
    ASSERT_EQ(1 + 2 * 4, nLines); /* one header, 4 kernels per fixture trace */
    free(zCsv);
    snprintf(zFile, sizeof zFile, "%s/memory_event.csv", zOutDir);
    zCsv = vt_slurp(zFile);
    ASSERT(!strncmp(zCsv, "trace,pid,rank,", 15));
    free(zCsv);
    /* --csv goes alone */
    snprintf(zArgs, sizeof zArgs, "export --csv %s --gzip %s", zOutDir, zT0);
    ASSERT_EQ(2, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "--csv DIR goes alone");
    free(zOut), free(zErr);
    vt_cleanup(zDir);
}

/*
 * --csv of traces of different schema versions (bench-v5.db: version 5; example-train.db: the current one, whose
 * memory_event has the folded call columns): one header with every column either has, and each row under it,
 * empty where its trace's version has not the column (a row of the older one had 4 fields too few, its at_ns under
 * call_dt).
 */
TEST(export_csv_across_versions)
{
    const char *zDir = vt_tmpdir(), *zData = getenv("VT_TEST_DATA");
    char zOutDir[256], zFile[320], zArgs[2400], *zOut, *zErr, *zCsv;
    int nHead = 0, nLine = 0;
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zOutDir, sizeof zOutDir, "%s/csv", zDir);
    snprintf(zArgs, sizeof zArgs, "export --csv %s %s/example-train.db %s/bench-v5.db", zOutDir, zData, zData);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    snprintf(zFile, sizeof zFile, "%s/memory_event.csv", zOutDir);
    zCsv = vt_slurp(zFile);
    ASSERT(!strncmp(zCsv, "trace,pid,rank,id,t,ts,op,", 26));
    ASSERT_CONTAINS(zCsv, ",call_dt,call_dur,call_sig,call_id,at_ns\n");
    for (const char *p = zCsv; *p; p++) { /* every line as many fields as the header (no quoted commas here) */
        int n = 1;
        const char *e = strchr(p, '\n');
        ASSERT(e != NULL);
        for (const char *q = p; q < e; q++) n += *q == ',';
        if (!nHead) nHead = n;
        ASSERT_EQ(nHead, n);
        nLine++;
        p = e;
    }
    ASSERT_EQ(1 + 409 + 200, nLine);
    snprintf(zArgs, sizeof zArgs, "\n%s/bench-v5.db,", zData);
    ASSERT_CONTAINS(zCsv, zArgs);
    free(zCsv);
    vt_cleanup(zDir);
}

/*
 * --csv's `trace` column is each trace's path as given: traces of one file name in different directories (a rank
 * per directory) stay apart (they were both "trace.db"), standard input is "-"; and a tensor_event.csv an earlier
 * export left in DIR is removed when no trace has tensor rows (it described other traces beside the new files).
 */
TEST(export_csv_trace_names)
{
    const char *zDir = vt_tmpdir();
    char zA[256], zB[256], zOutDir[256], zFile[320], zArgs[1400], *zOut, *zErr, *zCsv, zRow[400];
    FILE *f;
    snprintf(zA, sizeof zA, "%s/a", zDir);
    snprintf(zB, sizeof zB, "%s/b", zDir);
    ASSERT_EQ(0, mkdir(zA, 0700));
    ASSERT_EQ(0, mkdir(zB, 0700));
    snprintf(zA, sizeof zA, "%s/a/trace.v2.db", zDir);
    snprintf(zB, sizeof zB, "%s/b/trace.v2.db", zDir);
    snprintf(zOutDir, sizeof zOutDir, "%s/csv", zDir);
    ASSERT_EQ(0, vt_fixture_write(zA, 0));
    ASSERT_EQ(0, vt_fixture_write(zB, 1));
    ASSERT_EQ(0, mkdir(zOutDir, 0700));
    snprintf(zFile, sizeof zFile, "%s/tensor_event.csv", zOutDir);
    ASSERT((f = fopen(zFile, "w")) != NULL);
    fputs("trace,pid,rank\nold.db,1,0\n", f);
    fclose(f);
    snprintf(zArgs, sizeof zArgs, "export --csv %s %s %s - <%s", zOutDir, zA, zB, zA);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "CSV tables of 3 traces");
    ASSERT_CONTAINS(zErr, "tensor_event.csv of an earlier export removed");
    free(zOut), free(zErr);
    ASSERT(access(zFile, F_OK) != 0);
    snprintf(zFile, sizeof zFile, "%s/kernel.csv", zOutDir);
    zCsv = vt_slurp(zFile);
    snprintf(zRow, sizeof zRow, "\n%s,4242,0,", zA);
    ASSERT_CONTAINS(zCsv, zRow);
    snprintf(zRow, sizeof zRow, "\n%s,4243,1,", zB);
    ASSERT_CONTAINS(zCsv, zRow);
    ASSERT_CONTAINS(zCsv, "\n-,4242,0,");
    free(zCsv);
    vt_cleanup(zDir);
}

/* Run zCmd with sh; 0 when it exited 0. */
static int sh(const char *zCmd)
{
    int status = system(zCmd);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/*
 * Native frames recorded without file and line are symbolized offline from the module file,
 * its build id and the offset; a rebuilt module is named, not misread; separate debug files
 * are found by build id in --debug-dir.
 */
TEST(export_symbolized_native_frames)
{
    const char *zDir = vt_tmpdir();
    char zTrace[256], zJson[256], zArgs[1024], zCmd[2048], zSql[1024], *zOut, *zErr, *zJ, *zAddr;
    sqlite3 *db;
    long long addr;
    if (!vt__sym_available()) SKIP("built without libdw");
    snprintf(zCmd, sizeof zCmd,
             "cd %s && printf 'int vt_probe_helper(int);\\nint vt_probe(int x) { return vt_probe_helper(x) * 3 + 1; }\\n'"
             " > probe.c && cc -g -O0 -shared -fPIC -Wl,--build-id=0x1234abcd -o libprobe.so probe.c"
             " && nm libprobe.so | awk '$3 == \"vt_probe\" {print $1}' > addr.txt",
             zDir);
    if (sh(zCmd) != 0) SKIP("cc or nm not found");
    snprintf(zTrace, sizeof zTrace, "%s/rank0.db", zDir);
    snprintf(zJson, sizeof zJson, "%s/out.json", zDir);
    snprintf(zArgs, sizeof zArgs, "%s/addr.txt", zDir);
    zAddr = vt_slurp(zArgs);
    addr = strtoll(zAddr, NULL, 16);
    free(zAddr);
    ASSERT(addr > 0);
    ASSERT_EQ(0, vt_fixture_write(zTrace, 0));
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    /* the allocation at 0.5 us gets a one-frame native stack: a return address 16 bytes into vt_probe */
    snprintf(zSql, sizeof zSql,
             "INSERT INTO string VALUES(40, '%s/libprobe.so'); INSERT INTO module(path_id, build_id) VALUES(40, '1234abcd');"
             "INSERT INTO stack VALUES(5, 555, 1); INSERT INTO frame VALUES(5, 0, 0, %lld, NULL, NULL, NULL, 40);"
             "UPDATE memory_event SET stack_id = 5 WHERE t = 500",
             zDir, addr + 16);
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, zSql, NULL, NULL, NULL));
    sqlite3_close(db);
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s %s", zJson, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    zJ = vt_slurp(zJson);
    ASSERT_CONTAINS(zJ, "probe.c:2 in vt_probe\"");
    free(zJ);
    /* separate debug information: found by build id in --debug-dir, not without it */
    snprintf(zCmd, sizeof zCmd,
             "cd %s && mkdir -p dbg/.build-id/12 && objcopy --only-keep-debug libprobe.so dbg/.build-id/12/34abcd.debug"
             " && objcopy --strip-debug libprobe.so",
             zDir);
    if (sh(zCmd) != 0) SKIP("objcopy not found");
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    zJ = vt_slurp(zJson);
    ASSERT_CONTAINS(zJ, "\"site\":\"vt_probe (libprobe.so)\"");
    free(zJ);
    snprintf(zArgs, sizeof zArgs, "export --debug-dir %s/dbg --perfetto %s %s", zDir, zJson, zTrace);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    zJ = vt_slurp(zJson);
    ASSERT_CONTAINS(zJ, "probe.c:2 in vt_probe\"");
    free(zJ);
    /* another build of the module than the one recorded: said so, no lines */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "UPDATE module SET build_id = 'deadbeef'", NULL, NULL, NULL));
    sqlite3_close(db);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    zJ = vt_slurp(zJson);
    ASSERT_CONTAINS(zJ, "(libprobe.so: not the recorded build, not symbolized)\"");
    ASSERT(strstr(zJ, "probe.c:2") == NULL);
    free(zJ);
    vt_cleanup(zDir);
}


/* A fixture of another tool (tests/data/import) as the command line names it. */
static const char *import_fixture(const char *zName)
{
    static char z[1024];
    const char *zData = getenv("VT_TEST_DATA");
    snprintf(z, sizeof z, "%s/import/%s", zData ? zData : "tests/data", zName);
    return z;
}

/* How often zNeedle occurs in z. */
static int count_of(const char *z, const char *zNeedle)
{
    int n = 0;
    for (const char *p = z; (p = strstr(p, zNeedle)) != NULL; p += strlen(zNeedle)) n++;
    return n;
}

/*
 * Imported files are shown as what they are: a snapshot's tensor blocks are exported (Perfetto,
 * CSV); a trace without tensor rows gets no tensor_event.csv; info says where a trace was
 * imported from (no "pid ?", not "traced"); analyze says what is unknown (no times, no memory
 * data) rather than 0, and names a snapshot's rows as segments.
 */
TEST(imported_files_as_they_are)
{
    const char *zDir = vt_tmpdir();
    char zArgs[4096], zFile[512], zT0[256], *zOut, *zErr, *zCsv;
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s/snap.json %s", zDir, import_fixture("snap_small.pickle"));
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "also holds 5 tensor events"); /* 6 rows, one of unknown time */
    /* the rows of unknown time, a segment and a block live before the history began: said, not dropped in silence */
    ASSERT_CONTAINS(zErr, "2 events of unknown time, made before the history began: on the counters from the start "
                          "(memory by category included), no instant");
    ASSERT(!strstr(zErr, "left out"));
    free(zOut), free(zErr);
    snprintf(zFile, sizeof zFile, "%s/snap.json", zDir);
    zCsv = vt_slurp(zFile);
    ASSERT_EQ(3, count_of(zCsv, "\"cat\":\"tensor_alloc\"")); /* no instant for the block of unknown time */
    ASSERT_EQ(2, count_of(zCsv, "\"cat\":\"tensor_free\"")); /* free and free_requested */
    ASSERT_CONTAINS(zCsv, "\"name\":\"GPU 1 tensors\"");
    ASSERT_CONTAINS(zCsv, "\"source\":\"pytorch_history\"");
    ASSERT_CONTAINS(zCsv, "{\"tensors\":");
    /* they stand on the counters from the start, the category one included: the 2 MiB segment, then with the
     * 20 MiB one of known time 22 MiB (all cache but the 512 B block, of unknown category); before, they were on
     * no counter (20 MiB at 0, no "unknown" series) */
    ASSERT_CONTAINS(zCsv, "\"name\":\"GPU 1 memory\",\"ts\":0.000,\"args\":{\"device\":2097152}}");
    ASSERT_CONTAINS(zCsv, "\"name\":\"GPU 1 memory\",\"ts\":0.000,\"args\":{\"device\":23068672}}");
    ASSERT_CONTAINS(zCsv, "\"name\":\"GPU 1 memory\",\"ts\":0.000,\"args\":{\"tensors\":512}}");
    ASSERT_CONTAINS(zCsv, "\"name\":\"GPU 1 memory by category\",\"ts\":0.000,\"args\":{\"allocator cache (reserved, "
                          "not allocated)\":23068160}}");
    ASSERT_CONTAINS(zCsv, "\"name\":\"GPU 1 memory by category\",\"ts\":0.000,\"args\":{\"unknown\":512}}");
    free(zCsv);
    /* a snapshot without any known time: nothing placed at 0, no category counter either (the HTML report draws no
     * chart for it); the rows left out are said */
    snprintf(zArgs, sizeof zArgs, "export --perfetto %s/v1.json %s", zDir, import_fixture("snap_v1.pickle"));
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "2 events of unknown time left out (the file records no time for them): on no track or "
                          "counter, memory by category included");
    free(zOut), free(zErr);
    snprintf(zFile, sizeof zFile, "%s/v1.json", zDir);
    zCsv = vt_slurp(zFile);
    ASSERT_EQ(0, count_of(zCsv, "\"ph\":\"C\""));
    ASSERT(!strstr(zCsv, "memory by category"));
    free(zCsv);
    snprintf(zArgs, sizeof zArgs, "export --csv %s/csv %s", zDir, import_fixture("snap_small.pickle"));
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    snprintf(zFile, sizeof zFile, "%s/csv/tensor_event.csv", zDir);
    zCsv = vt_slurp(zFile);
    ASSERT(!strncmp(zCsv, "trace,pid,rank,id,t,ts,op,device,address,bytes,stream,stack_id,source,at_ns\n", 76));
    snprintf(zArgs, sizeof zArgs, "\n%s,,,", import_fixture("snap_small.pickle"));
    ASSERT_CONTAINS(zCsv, zArgs);
    free(zCsv);
    /* a trace without tensor rows: the files as before, no tensor_event.csv */
    snprintf(zT0, sizeof zT0, "%s/rank0.db", zDir);
    ASSERT_EQ(0, vt_fixture_write(zT0, 0));
    snprintf(zArgs, sizeof zArgs, "export --csv %s/csv2 %s", zDir, zT0);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    free(zOut), free(zErr);
    snprintf(zFile, sizeof zFile, "%s/csv2/tensor_event.csv", zDir);
    ASSERT(access(zFile, F_OK) != 0);
    /* info: imported, not traced */
    snprintf(zArgs, sizeof zArgs, "info %s", import_fixture("snap_v1.pickle"));
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\nprocess     snap_v1.pickle\n");
    ASSERT_CONTAINS(zOut, "\nstatus      imported from pytorch_snapshot file ");
    ASSERT(!strstr(zOut, "pid ?") && !strstr(zOut, "traced for") && !strstr(zOut, "closed cleanly"));
    free(zOut), free(zErr);
    /* analyze: a snapshot without history or times */
    snprintf(zArgs, sizeof zArgs, "analyze %s", import_fixture("snap_v1.pickle"));
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\n  duration unknown; ");
    ASSERT_CONTAINS(zOut, "level: segments and tensors (the caching allocator's segments, its blocks\n  inside); inside");
    ASSERT_CONTAINS(zOut, "1 live at the snapshot's dump (2.00 MiB); every free\n  matched its allocation;");
    ASSERT_CONTAINS(zOut, "device 0: peak 2.00 MiB reserved at an unknown time, 1.00 KiB allocated at an unknown time\n");
    ASSERT_CONTAINS(zOut, "note: no allocation history: only the state at the dump is known");
    ASSERT(!strstr(zOut, "ring buffer") && !strstr(zOut, "0 ns") && !strstr(zOut, " at 0 s"));
    ASSERT_CONTAINS(zErr, "holds no allocation history"); /* the import's note: the same fact */
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "analyze --format json %s", import_fixture("snap_v1.pickle"));
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"start_ns\": null, \"end_ns\": null, \"duration_ns\": null");
    ASSERT_CONTAINS(zOut, "\"peak_ts\": null");
    free(zOut), free(zErr);
    /* analyze: a torch.profiler trace without addresses has no lifetimes: its peak is the importer's running
     * sum of Bytes, said as such, never 0 */
    /* (the fixture is gzip'd: a build without zlib refuses it, as test_import checks) */
    if (!VT_HAVE_ZLIB) {
        vt_cleanup(zDir);
        return;
    }
    snprintf(zArgs, sizeof zArgs, "analyze --format json %s", import_fixture("kineto_noaddr.json.gz"));
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"sum_of_device_peaks_bytes\": 12288, \"max_device_peak_bytes\": 12288, "
                          "\"min_device_peak_bytes\": 12288");
    ASSERT_CONTAINS(zOut, "\"level\": \"totals\"");
    ASSERT_CONTAINS(zOut, "\"allocated_bytes\": 12288, \"allocated_ts\": ");
    ASSERT_CONTAINS(zOut, "\"allocated_from_totals\": true");
    free(zOut), free(zErr);
    snprintf(zArgs, sizeof zArgs, "analyze %s %s", import_fixture("kineto_noaddr.json.gz"), zT0);
    ASSERT_EQ(0, vt_run(zDir, zArgs, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, " peak   12.0 KiB  ");
    ASSERT_CONTAINS(zOut, "peak 12.0 KiB allocated (the running sum of the profiler's [memory] Bytes");
    ASSERT(!strstr(zOut, "peak        0 B"));
    free(zOut), free(zErr);
    vt_cleanup(zDir);
}

VT_TEST_LIST(T(export_one_trace) T(export_two_ranks_aligned) T(export_nvtx_kinds) T(export_to_fifo_and_symlink) T(export_errors)
                 T(export_streams_large_trace) T(export_unknown_values_left_out) T(export_time_window) T(export_gzip)
                 T(export_demangled_kernel_names) T(export_csv_tables) T(export_csv_across_versions) T(export_csv_trace_names) T(export_symbolized_native_frames)
                 T(imported_files_as_they_are))
