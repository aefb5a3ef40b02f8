/* Tests of the samples' known-answer checks and of gpu_check, without a GPU. */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "gpu_fake_trace.h"
#include "gpu_verify.h"
#include "vramtrace/schema.h"
#include "vt_test.h"

#define MIB (1024LL * 1024LL)
#define PID 4242

/* An in-memory trace of one real run of zSample, and the facts that run printed. */
static void start(struct vt_fake *f, const char *zSample, struct vt_gpu_facts *pFacts)
{
    sqlite3 *db = NULL;
    ASSERT_EQ(SQLITE_OK, sqlite3_open(":memory:", &db));
    vt__fake_open(f, db, PID);
    ASSERT_EQ(0, vt__fake_build(f, zSample));
    ASSERT(vt__gpu_facts_parse(vt__fake_stdout(zSample), pFacts) >= 0);
}

/* Run the checks of zSample; returns the failure count and the report in *pzOut (free it). */
static int verify(struct vt_fake *f, const char *zSample, const struct vt_gpu_facts *pFacts,
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
static void expect_pass(struct vt_fake *f, const char *zSample, const struct vt_gpu_facts *pFacts)
{
    char *zOut = NULL;
    int nFail = verify(f, zSample, pFacts, &zOut);
    if (nFail != 0) fprintf(stderr, "%s", zOut);
    ASSERT_EQ(0, nFail);
    ASSERT_CONTAINS(zOut, "ok    records dropped: 0");
    free(zOut);
}

/* Expect exactly nExpected failed checks, one of them containing zLine. */
static void expect_fail(struct vt_fake *f, const char *zSample, const struct vt_gpu_facts *pFacts,
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

TEST(leak_known_answer)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "leak", &facts);
    expect_pass(&f, "leak", &facts);
    sqlite3_close(f.db);
}

TEST(leak_freed_leaked_buffer_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "leak", &facts);
    vt__fake_mem(&f, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, 0x7f0000000000LL + 0x3000000LL,
                 3 * MIB + 4096 * 3);
    expect_fail(&f, "leak", &facts, 1, "FAIL  frees of leaked buffers: expected 0, found 1");
    sqlite3_close(f.db);
}

TEST(leak_wrong_kind_and_missing_launch_fail)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "leak", &facts);
    vt__fake_sql(f.db, "UPDATE memory_event SET mem_kind = 5 WHERE bytes = %lld", 3 * MIB);
    vt__fake_sql(f.db, "DELETE FROM kernel WHERE id = (SELECT max(id) FROM kernel)");
    expect_fail(&f, "leak", &facts, 3, "FAIL  vt_sample_fill launches: expected 12, found 11");
    sqlite3_close(f.db);
}

TEST(copies_known_answer)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "copies", &facts);
    expect_pass(&f, "copies", &facts);
    sqlite3_close(f.db);
}

TEST(copies_pinned_seen_as_pageable_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "copies", &facts);
    vt__fake_sql(f.db,
                 "UPDATE memcpy SET src_kind = 1 WHERE id = (SELECT min(id) FROM memcpy WHERE "
                 "src_kind = 2)");
    expect_fail(&f, "copies", &facts, 1,
                "FAIL  HtoD pinned -> device (addresses match): expected 5, found 4");
    sqlite3_close(f.db);
}

TEST(copies_without_addresses_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "copies", &facts);
    vt__fake_sql(f.db, "UPDATE memcpy SET src = NULL, dst = NULL");
    expect_fail(&f, "copies", &facts, 4,
                "FAIL  DtoH device -> pageable (addresses match): expected 5, found 0");
    sqlite3_close(f.db);
}

TEST(copies_missing_fact_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "copies", &facts);
    ASSERT_EQ(2, vt__gpu_facts_parse("vt-fact: pageable=0x5600a0000000\n"
                                     "vt-fact: device=0x7f2000000000\n",
                                     &facts));
    expect_fail(&f, "copies", &facts, 1, "the sample printed no usable \"vt-fact: pinned=\" line");
    sqlite3_close(f.db);
}

TEST(oom_known_answer)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "oom", &facts);
    expect_pass(&f, "oom", &facts);
    sqlite3_close(f.db);
}

TEST(oom_recorded_twice_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "oom", &facts);
    /* The driver call under cudaMalloc must not add a second OOM row. */
    vt__fake_sql(f.db,
                 "INSERT INTO oom_event(t, api, correlation, device, bytes, status, free_bytes, "
                 "total_bytes) SELECT t, 20, correlation, device, bytes, status, free_bytes, "
                 "total_bytes FROM oom_event");
    expect_fail(&f, "oom", &facts, 1, "FAIL  oom_event rows: expected 1, found 2");
    sqlite3_close(f.db);
}

TEST(oom_without_memory_info_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "oom", &facts);
    vt__fake_sql(f.db, "UPDATE oom_event SET free_bytes = NULL, total_bytes = NULL");
    expect_fail(&f, "oom", &facts, 1,
                "FAIL  that oom_event: 0 < free_bytes <= total_bytes = device total");
    sqlite3_close(f.db);
}

TEST(pool_known_answer)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "pool", &facts);
    expect_pass(&f, "pool", &facts);
    sqlite3_close(f.db);
}

TEST(pool_not_async_and_no_threshold_fail)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "pool", &facts);
    vt__fake_sql(f.db, "UPDATE memory_event SET is_async = 0 WHERE op = 1 AND bytes = %lld",
                 9 * MIB);
    vt__fake_sql(f.db, "UPDATE memory_event SET pool_threshold = NULL WHERE bytes = %lld",
                 11 * MIB);
    expect_fail(
        &f, "pool", &facts, 3,
        "FAIL  explicit pool allocations carry the 64 MiB release threshold: expected 4, found 3");
    sqlite3_close(f.db);
}

TEST(pool_without_created_event_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "pool", &facts);
    vt__fake_sql(f.db, "DELETE FROM pool_event WHERE op = 1 AND address = %lld",
                 VT_FAKE_POOL_EXPLICIT);
    expect_fail(&f, "pool", &facts, 1,
                "FAIL  pool_event CREATED for the explicit pool: expected 1, found 0");
    sqlite3_close(f.db);
}

TEST(phases_known_answer)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "phases", &facts);
    expect_pass(&f, "phases", &facts);
    sqlite3_close(f.db);
}

TEST(phases_without_spike_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts = {0};
    sqlite3 *db = NULL;
    ASSERT_EQ(SQLITE_OK, sqlite3_open(":memory:", &db));
    vt__fake_open(&f, db, PID);
    vt__fake_build_phases(&f, 0);
    /* Peak during validation: weights + the largest output = 17 MiB + 10 MiB + 20480. */
    expect_fail(
        &f, "phases", &facts, 3,
        "FAIL  validation peak exceeds training peak: expected more than 43003904, found 28332032");
    sqlite3_close(f.db);
}

TEST(phases_flat_nesting_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "phases", &facts);
    vt__fake_sql(f.db, "UPDATE nvtx_range SET depth = 0");
    expect_fail(&f, "phases", &facts, 1,
                "FAIL  depth 1: every iter and batch: expected 11, found 0");
    sqlite3_close(f.db);
}

TEST(managed_known_answer)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "managed", &facts);
    expect_pass(&f, "managed", &facts);
    sqlite3_close(f.db);
}

TEST(managed_seen_as_device_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "managed", &facts);
    vt__fake_sql(f.db, "UPDATE memory_event SET mem_kind = 3 WHERE bytes = %lld", 13 * MIB + 4096);
    expect_fail(&f, "managed", &facts, 3,
                "FAIL  allocations of those sizes of any other kind: expected 0, found 2");
    sqlite3_close(f.db);
}

TEST(vmm_known_answer)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "vmm", &facts);
    expect_pass(&f, "vmm", &facts);
    sqlite3_close(f.db);
}

TEST(vmm_missing_unmap_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "vmm", &facts);
    vt__fake_sql(f.db, "DELETE FROM memory_event WHERE op = 6 AND address = %lld",
                 VT_FAKE_VA + 3 * VT_FAKE_GRAN);
    expect_fail(&f, "vmm", &facts, 3,
                "FAIL  vmm_unmap right after it (5 G bytes): expected 1, found 0");
    sqlite3_close(f.db);
}

TEST(threads_known_answer)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "threads", &facts);
    expect_pass(&f, "threads", &facts);
    sqlite3_close(f.db);
}

/* The helper thread's records lost (delivered only at exit, and the job was killed): caught. */
TEST(threads_helper_records_missing_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "threads", &facts);
    vt__fake_sql(f.db, "DELETE FROM memory_event WHERE thread = 102");
    vt__fake_sql(f.db, "DELETE FROM memcpy");
    expect_fail(&f, "threads", &facts, 3,
                "FAIL  the helper thread's pinned allocation (MEMORY2) though the job was killed");
    sqlite3_close(f.db);
}

/* A start/end range taken for push/pop (the decoder's old guess) and a wrong depth: caught. */
TEST(threads_nvtx_kinds_fail)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "threads", &facts);
    vt__fake_sql(f.db, "UPDATE nvtx_range SET kind = 0, depth = 1, end_thread = NULL WHERE kind = 1");
    vt__fake_sql(f.db, "UPDATE nvtx_range SET depth = 2 WHERE depth = 1 AND kind = 0 AND end_thread IS NULL"
                       " AND name_id = (SELECT id FROM string WHERE value = 'forward')");
    expect_fail(&f, "threads", &facts, 2, "FAIL  NVTX \"prefetch\": start/end");
    sqlite3_close(f.db);
}

TEST(graphs_known_answer)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "graphs", &facts);
    expect_pass(&f, "graphs", &facts);
    sqlite3_close(f.db);
}

/* Graph kernels claiming scanned arguments, and no graph node ids: caught. */
TEST(graphs_uses_claimed_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "graphs", &facts);
    vt__fake_sql(f.db, "UPDATE kernel SET args_scanned = 1 WHERE graph_id IS NOT NULL");
    vt__fake_sql(f.db, "UPDATE memset SET graph_node_id = NULL");
    expect_fail(&f, "graphs", &facts, 2,
                "FAIL  graph kernels (2 per launch) with graph and node ids, uses unknown: expected 6, found 0");
    sqlite3_close(f.db);
}

TEST(sharing_known_answer)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "sharing", &facts);
    expect_pass(&f, "sharing", &facts);
    sqlite3_close(f.db);
}

/* The imported handle counted as a new allocation (what a naive tracer writes): caught. */
TEST(sharing_import_counted_twice_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "sharing", &facts);
    vt__fake_sql(f.db, "UPDATE memory_event SET op = %d, bytes = %lld WHERE op = %d", VT_MEMOP_VMM_CREATE,
                 2 * VT_FAKE_GRAN, VT_MEMOP_IMPORT);
    expect_fail(&f, "sharing", &facts, 2, "FAIL  vmm_create rows in all (the host one where supported): expected 1, found 2");
    sqlite3_close(f.db);
}

TEST(takeover_known_answer)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "takeover", &facts);
    expect_pass(&f, "takeover", &facts);
    sqlite3_close(f.db);
}

/* The takeover not noticed: caught. */
TEST(takeover_unnoticed_fails)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "takeover", &facts);
    vt__fake_sql(f.db, "DELETE FROM meta WHERE key LIKE 'cupti_takeover%%'");
    expect_fail(&f, "takeover", &facts, 2, "FAIL  meta cupti_takeover_ns: the trace says it was taken over");
    sqlite3_close(f.db);
}

TEST(common_meta_device_dropped)
{
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "leak", &facts);
    vt__fake_sql(f.db, "INSERT INTO dropped(t, source, what, count) VALUES(1, 0, 'cupti', 3)");
    vt__fake_sql(f.db, "UPDATE meta SET value = '99' WHERE key = 'pid'");
    vt__fake_sql(f.db, "DELETE FROM meta WHERE key IN ('closed_cleanly', 'clock_anchor_wall_ns')");
    vt__fake_sql(f.db, "UPDATE device SET name = ''");
    expect_fail(&f, "leak", &facts, 5, "FAIL  records dropped: expected 0, found 3");
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
    struct vt_fake f;
    struct vt_gpu_facts facts;
    start(&f, "leak", &facts);
    ASSERT_EQ(0, vt__gpu_sample_known("resnet"));
    ASSERT_EQ(1, vt__gpu_sample_known("vmm"));
    ASSERT_EQ(-1, vt__gpu_verify(f.db, "resnet", PID, NULL, stderr));
    sqlite3_close(f.db);
}

/* The test doubles and gpu_check, as built; the driver tests skip when run outside ctest. */
struct driver {
    const char *zCheck;    /* gpu_check */
    const char *zSample;   /* gpu_fake_sample: the sample, and also passed as LIB */
    const char *zCuda;     /* the fake libcuda.so.1: expected as NVTX_INJECTION64_PATH */
    const char *zCuptiArg; /* passed as CUPTI_LIB: zCuda unless a test says otherwise */
    char zCudaDir[1024];
    char zTmp[1024]; /* TMPDIR for gpu_check: its run directories land here */
};

/* Locate the binaries from the test's environment and make a fresh TMPDIR. */
static void driver_init(struct driver *d)
{
    char *zSlash;
    d->zCheck = getenv("VT_GPU_CHECK");
    d->zSample = getenv("VT_FAKE_SAMPLE_BIN");
    d->zCuda = getenv("VT_FAKE_CUDA");
    d->zCuptiArg = d->zCuda;
    if (!d->zCheck || !d->zSample || !d->zCuda)
        SKIP("VT_GPU_CHECK, VT_FAKE_SAMPLE_BIN, VT_FAKE_CUDA unset: run under ctest");
    ASSERT_EQ(0, access(d->zCheck, X_OK));
    ASSERT_EQ(0, access(d->zSample, X_OK));
    ASSERT_EQ(0, access(d->zCuda, R_OK));
    snprintf(d->zCudaDir, sizeof d->zCudaDir, "%s", d->zCuda);
    zSlash = strrchr(d->zCudaDir, '/');
    ASSERT(zSlash != NULL);
    *zSlash = 0;
    snprintf(d->zTmp, sizeof d->zTmp, "%s/vt-gpu-check-test-XXXXXX",
             getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ASSERT(mkdtemp(d->zTmp) != NULL);
}

/* How one gpu_check run's environment is set: fake sample zSample in mode zMode, zEnv added. */
struct driver_env {
    const char *zSample, *zMode, *zEnv;
};

/*
 * Run gpu_check with azArg (NULL-terminated, argv[0] excluded, at most 6).
 * With pEnv, the child gets the fake driver first on LD_LIBRARY_PATH, a stale
 * CUDA_INJECTION64_PATH that gpu_check must replace, the fake sample's
 * settings and pEnv->zEnv ("NAME=VALUE", or NULL) added. Returns its exit
 * status; its output (stdout and stderr) goes to *pzOut (free it).
 */
static int driver_exec(struct driver *d, const char *const *azArg, const struct driver_env *pEnv,
                       char **pzOut)
{
    char zOut[1200];
    const char *azArgv[8];
    int status = 0, fd, i;
    FILE *pFile;
    long n;
    pid_t pid;

    azArgv[0] = d->zCheck;
    for (i = 0; azArg[i] && i < 6; i++) azArgv[i + 1] = azArg[i];
    azArgv[i + 1] = NULL;
    snprintf(zOut, sizeof zOut, "%s/gpu_check.out", d->zTmp);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        fd = open(zOut, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(126);
        if (pEnv) {
            setenv("LD_LIBRARY_PATH", d->zCudaDir, 1);
            setenv("TMPDIR", d->zTmp, 1);
            setenv("CUDA_INJECTION64_PATH", "/nonexistent/stale.so", 1);
            setenv("VT_FAKE_SAMPLE", pEnv->zSample, 1);
            setenv("VT_FAKE_MODE", pEnv->zMode, 1);
            setenv("VT_FAKE_EXPECT_LIB", d->zSample, 1);
            setenv("VT_FAKE_EXPECT_CUPTI", d->zCuda, 1);
            unsetenv("VT_CUPTI_LIB");
            unsetenv("VT_GPU_KEEP");
            if (pEnv->zEnv) putenv((char *)pEnv->zEnv);
        }
        execv(d->zCheck, (char *const *)azArgv);
        _exit(127);
    }
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT(WIFEXITED(status));
    pFile = fopen(zOut, "rb");
    ASSERT(pFile != NULL);
    ASSERT_EQ(0, fseek(pFile, 0, SEEK_END));
    n = ftell(pFile);
    ASSERT(n >= 0);
    rewind(pFile);
    *pzOut = calloc(1, (size_t)n + 1);
    ASSERT(*pzOut != NULL);
    ASSERT_EQ(n, (long)fread(*pzOut, 1, (size_t)n, pFile));
    fclose(pFile);
    unlink(zOut);
    return WEXITSTATUS(status);
}

/* Expect gpu_check azArg (environment pEnv, or the test's own) to exit with rc and say zLine. */
static void driver_exec_expect(struct driver *d, const char *const *azArg, const struct driver_env *pEnv,
                               int rc, const char *zLine)
{
    char *zOut = NULL;
    int got = driver_exec(d, azArg, pEnv, &zOut);
    if (got != rc || !strstr(zOut, zLine)) fprintf(stderr, "%s", zOut);
    ASSERT_EQ(rc, got);
    ASSERT_CONTAINS(zOut, zLine);
    free(zOut);
}

/* Number of run directories gpu_check left in the test's TMPDIR. */
static int driver_leftovers(struct driver *d)
{
    struct dirent *pEnt;
    DIR *pDir = opendir(d->zTmp);
    int n = 0;
    ASSERT(pDir != NULL);
    while ((pEnt = readdir(pDir)) != NULL) n += strncmp(pEnt->d_name, "vt-gpu-", 7) == 0;
    closedir(pDir);
    return n;
}

/* nftw callback: remove one entry (children first). */
static int remove_entry(const char *zPath, const struct stat *pSt, int type, struct FTW *pFtw)
{
    (void)pSt;
    (void)pFtw;
    return type == FTW_DP ? rmdir(zPath) : unlink(zPath);
}

/* Remove the test's TMPDIR and every run directory gpu_check kept in it. */
static void driver_cleanup(struct driver *d)
{
    ASSERT_EQ(0, nftw(d->zTmp, remove_entry, 8, FTW_DEPTH | FTW_PHYS));
}

/* Run gpu_check on the fake sample imitating zSample in mode zMode (zEnv added); expect rc and zLine. */
static void driver_expect(struct driver *d, const char *zSample, const char *zMode,
                          const char *zEnv, int rc, const char *zLine)
{
    const char *azArg[] = {zSample, d->zSample, d->zSample, d->zCuptiArg, NULL};
    struct driver_env env = {zSample, zMode, zEnv};
    driver_exec_expect(d, azArg, &env, rc, zLine);
}

TEST(driver_runs_sample_and_passes)
{
    struct driver d;
    driver_init(&d);
    driver_expect(&d, "leak", "ok", NULL, 0, "gpu_leak: the trace holds the known answer");
    driver_expect(&d, "copies", "ok", NULL, 0, "ok    HtoD pinned -> device (addresses match): 5");
    driver_expect(&d, "vmm", "ok", NULL, 0, "gpu_vmm: the trace holds the known answer");
    /* a sample that kills itself: the death expected, the trace without a clean close */
    driver_expect(&d, "threads", "ok", NULL, 0, "ok    meta closed_cleanly absent (the job was killed): 0");
    ASSERT_EQ(0, driver_leftovers(&d)); /* a passing run cleans up */
    driver_cleanup(&d);
}

TEST(driver_reports_wrong_trace)
{
    struct driver d;
    driver_init(&d);
    driver_expect(&d, "leak", "wrong", NULL, 1,
                  "FAIL  frees of the freed sizes: expected 4, found 3");
    ASSERT_EQ(1, driver_leftovers(&d)); /* kept for inspection */
    driver_cleanup(&d);
}

TEST(driver_reports_sample_failure_and_timeout)
{
    struct driver d;
    driver_init(&d);
    driver_expect(&d, "leak", "exit3", NULL, 1, "the sample exited with status 3");
    driver_expect(&d, "leak", "hang", "VT_GPU_TIMEOUT=1", 1, "ran past 1 s: killed");
    ASSERT_EQ(2, driver_leftovers(&d));
    driver_cleanup(&d);
}

TEST(driver_wants_exactly_one_trace)
{
    struct driver d;
    driver_init(&d);
    driver_expect(&d, "leak", "notrace", NULL, 1, "found 0 trace(s), none for the sample's pid");
    driver_expect(&d, "pool", "twotraces", NULL, 1, "found 2 trace(s)");
    driver_cleanup(&d);
}

TEST(driver_cupti_override)
{
    struct driver d;
    char zEnv[1100];
    driver_init(&d);
    /* The configured path does not exist on this machine: VT_CUPTI_LIB names the one to use. */
    d.zCuptiArg = "/nonexistent/libcupti.so.13";
    snprintf(zEnv, sizeof zEnv, "VT_CUPTI_LIB=%s", d.zCuda);
    driver_expect(&d, "managed", "ok", zEnv, 0, "gpu_managed: the trace holds the known answer");
    driver_expect(&d, "managed", "ok", "VT_CUPTI_LIB=/nonexistent/libcupti.so.13", 1,
                  "gpu_check: no libcupti: /nonexistent/libcupti.so.13 does not exist here");
    ASSERT_EQ(0, driver_leftovers(&d));
    driver_cleanup(&d);
}

TEST(driver_skips_without_gpu)
{
    struct driver d;
    driver_init(&d);
    driver_expect(&d, "phases", "ok", "VT_FAKE_DEVICES=0", 77,
                  "gpu_phases: skipped: the CUDA driver sees no device");
    driver_expect(&d, "oom", "ok", "VT_FAKE_CUINIT_FAIL=1", 77,
                  "gpu_oom: skipped: cuInit(0) failed with CUresult 100");
    ASSERT_EQ(0, driver_leftovers(&d)); /* nothing was run */
    driver_cleanup(&d);
}

/* --verify checks a trace another launcher recorded; --info tells a launcher how a sample ends. */
TEST(driver_verifies_recorded_trace)
{
    struct driver d;
    struct dirent *pEnt;
    DIR *pDir;
    char zRun[1400] = "", zTrace[1500], zStdout[1500], zPid[32] = "";
    driver_init(&d);
    /* a passing run kept (VT_GPU_KEEP=1) leaves the trace and the sample's stdout */
    driver_expect(&d, "copies", "ok", "VT_GPU_KEEP=1", 0, "gpu_copies: the trace holds the known answer");
    pDir = opendir(d.zTmp);
    ASSERT(pDir != NULL);
    while ((pEnt = readdir(pDir)) != NULL)
        if (strncmp(pEnt->d_name, "vt-gpu-copies-", 14) == 0)
            snprintf(zRun, sizeof zRun, "%s/%s", d.zTmp, pEnt->d_name);
    closedir(pDir);
    ASSERT(zRun[0] != 0);
    pDir = opendir(zRun);
    ASSERT(pDir != NULL);
    while ((pEnt = readdir(pDir)) != NULL)
        if (strncmp(pEnt->d_name, "trace-", 6) == 0 && strstr(pEnt->d_name, ".db") &&
            !strstr(pEnt->d_name, ".db-"))
            snprintf(zPid, sizeof zPid, "%.*s", (int)(strlen(pEnt->d_name) - 9), pEnt->d_name + 6);
    closedir(pDir);
    ASSERT(zPid[0] != 0);
    snprintf(zTrace, sizeof zTrace, "%s/trace-%s.db", zRun, zPid);
    snprintf(zStdout, sizeof zStdout, "%s/stdout.txt", zRun);
    {
        const char *azOk[] = {"--verify", "copies", zTrace, zStdout, zPid, NULL};
        const char *azOtherPid[] = {"--verify", "copies", zTrace, zStdout, "1", NULL};
        const char *azOtherSample[] = {"--verify", "leak", zTrace, zStdout, zPid, NULL};
        const char *azNoFacts[] = {"--verify", "copies", zTrace, "/nonexistent/stdout.txt", zPid, NULL};
        const char *azBadPid[] = {"--verify", "copies", zTrace, zStdout, "12x", NULL};
        const char *azThreads[] = {"--info", "threads", NULL};
        const char *azTakeover[] = {"--info", "takeover", NULL};
        const char *azLeak[] = {"--info", "leak", NULL};
        const char *azUnknown[] = {"--info", "resnet", NULL};
        driver_exec_expect(&d, azOk, NULL, 0, "gpu_copies: the trace holds the known answer");
        driver_exec_expect(&d, azOk, NULL, 0, "ok    HtoD pinned -> device (addresses match): 5");
        driver_exec_expect(&d, azOtherPid, NULL, 1, "FAIL  meta pid");
        driver_exec_expect(&d, azOtherSample, NULL, 1, "FAIL");
        driver_exec_expect(&d, azNoFacts, NULL, 1, "cannot read /nonexistent/stdout.txt");
        driver_exec_expect(&d, azBadPid, NULL, 2, "PID must be a positive number, not '12x'");
        driver_exec_expect(&d, azThreads, NULL, 0, "signal 9\n");
        driver_exec_expect(&d, azTakeover, NULL, 0, "signal 0\nenv VRAMTRACE_FLUSH_MS=100\n");
        driver_exec_expect(&d, azLeak, NULL, 0, "signal 0\nleaked 25280512 8\n");
        driver_exec_expect(&d, azUnknown, NULL, 2, "usage: gpu_check");
    }
    driver_cleanup(&d);
}

VT_TEST_LIST(
    T(leak_known_answer) T(leak_freed_leaked_buffer_fails)
        T(leak_wrong_kind_and_missing_launch_fail) T(copies_known_answer)
            T(copies_pinned_seen_as_pageable_fails) T(copies_without_addresses_fails)
                T(copies_missing_fact_fails) T(oom_known_answer) T(oom_recorded_twice_fails)
                    T(oom_without_memory_info_fails) T(pool_known_answer)
                        T(pool_not_async_and_no_threshold_fail) T(pool_without_created_event_fails)
                            T(phases_known_answer) T(phases_without_spike_fails)
                                T(phases_flat_nesting_fails) T(managed_known_answer)
                                    T(managed_seen_as_device_fails) T(vmm_known_answer)
                                        T(vmm_missing_unmap_fails) T(threads_known_answer)
                                            T(threads_helper_records_missing_fails) T(threads_nvtx_kinds_fail)
                                            T(graphs_known_answer) T(graphs_uses_claimed_fails)
                                            T(sharing_known_answer) T(sharing_import_counted_twice_fails)
                                            T(takeover_known_answer) T(takeover_unnoticed_fails)
                                            T(common_meta_device_dropped)
                                            T(facts_parse) T(unknown_sample)
                                                T(driver_runs_sample_and_passes)
                                                    T(driver_reports_wrong_trace)
                                                        T(driver_reports_sample_failure_and_timeout)
                                                            T(driver_wants_exactly_one_trace)
                                                                T(driver_cupti_override)
                                                                    T(driver_skips_without_gpu)
                                                                        T(driver_verifies_recorded_trace))
