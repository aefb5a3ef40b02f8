/* Helpers for the command-line tests: run vramtrace capturing its output, read files, build a fixture trace. */
#ifndef VT_TESTS_CLI_UTIL_H
#define VT_TESTS_CLI_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vramtrace/schema.h"
#include "vt_test.h"

#define CLI_FN static __attribute__((unused)) /* each test program uses some of these */

/* Path of the vramtrace command in the build tree (static buffer). */
CLI_FN const char *cli_vramtrace(void)
{
    static char zPath[PATH_MAX];
    const char *zBuild = getenv("VT_BUILD_DIR");
    if (!zBuild) SKIP("VT_BUILD_DIR is not set (run under ctest)");
    snprintf(zPath, sizeof zPath, "%s/analyzer/vramtrace", zBuild);
    if (access(zPath, X_OK) != 0) VT__FAIL("%s is not built", zPath);
    return zPath;
}

/* Temporary directories made by cli_tmpdir in this test, removed by cli_cleanup. */
static char g_azTmp[32][PATH_MAX];
static int g_nTmp;

/* A fresh temporary directory (static buffer), removed by cli_cleanup at the end of a passing test. */
CLI_FN const char *cli_tmpdir(void)
{
    const char *zBase = getenv("TMPDIR");
    char *zDir;
    if (g_nTmp >= 32) VT__FAIL("too many temporary directories");
    zDir = g_azTmp[g_nTmp];
    snprintf(zDir, PATH_MAX, "%s/vt-cli-XXXXXX", zBase && *zBase ? zBase : "/tmp");
    if (!mkdtemp(zDir)) VT__FAIL("mkdtemp: %s", strerror(errno));
    g_nTmp++;
    return zDir;
}

static int remove_entry(const char *zPath, const struct stat *pSt, int type, struct FTW *pFtw)
{
    (void)pSt, (void)type, (void)pFtw;
    return remove(zPath) == 0 ? 0 : -1;
}

/* Remove every directory cli_tmpdir made (a failing test keeps them for inspection). */
CLI_FN void cli_cleanup(void)
{
    while (g_nTmp > 0) {
        g_nTmp--;
        if (nftw(g_azTmp[g_nTmp], remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
            VT__FAIL("cannot remove %s: %s", g_azTmp[g_nTmp], strerror(errno));
    }
}

/*
 * Run argv with extra environment settings (azEnv: "NAME=VALUE", or "NAME" to
 * unset; NULL-terminated, may be NULL), stdout to zOut and stderr to zErr (each
 * may be NULL: /dev/null). Returns the exit status, or 128+N if killed by
 * signal N.
 */
CLI_FN int cli_run(char *const *argv, const char *const *azEnv, const char *zOut, const char *zErr)
{
    int status = 0;
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) VT__FAIL("fork: %s", strerror(errno));
    if (pid == 0) {
        int fdOut = open(zOut ? zOut : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fdErr = open(zErr ? zErr : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fdOut < 0 || fdErr < 0) _exit(120);
        dup2(fdOut, 1);
        dup2(fdErr, 2);
        for (; azEnv && *azEnv; azEnv++) {
            char zName[256];
            const char *zEq = strchr(*azEnv, '=');
            if (!zEq) {
                unsetenv(*azEnv);
                continue;
            }
            snprintf(zName, sizeof zName, "%.*s", (int)(zEq - *azEnv), *azEnv);
            setenv(zName, zEq + 1, 1);
        }
        execv(argv[0], argv);
        _exit(121);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* Whole file as a NUL-terminated heap string (fails the test if unreadable). */
CLI_FN char *cli_read(const char *zPath)
{
    FILE *f = fopen(zPath, "rb");
    char *z;
    long n;
    if (!f) VT__FAIL("cannot open %s: %s", zPath, strerror(errno));
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    z = malloc((size_t)n + 1);
    if (!z || fread(z, 1, (size_t)n, f) != (size_t)n) VT__FAIL("cannot read %s", zPath);
    z[n] = 0;
    fclose(f);
    return z;
}

CLI_FN void cli_write(const char *zPath, const char *zText)
{
    FILE *f = fopen(zPath, "wb");
    if (!f || fputs(zText, f) < 0 || fclose(f) != 0) VT__FAIL("cannot write %s", zPath);
}

CLI_FN void cli_exec(sqlite3 *db, const char *zSql)
{
    char *zErr = NULL;
    if (sqlite3_exec(db, zSql, NULL, NULL, &zErr) != SQLITE_OK) VT__FAIL("SQL failed: %s: %s", zErr, zSql);
}

/*
 * Create a trace at zPath the way a traced process would (vt__schema_create,
 * then rows), with known contents:
 *   pid 4242, rank 1 of 4, host gpu-node-7, one H100 (85520809984 bytes);
 *   first event at 1.1e9 ns, last at 3.6e9 (2.500 s), wall start
 *   2025-11-21 18:40:01.123 UTC;
 *   4 allocations (3 device, 1 pinned; 3674112 bytes), 1 free, peak live
 *   device 3145728 bytes at 1.2e9; 2 copies (HtoD 1 MiB pageable, DtoH 4096
 *   bytes); 3 kernels; 1 OOM (8 GiB cudaMalloc, 1 GiB free);
 *   150 dropped (100 cupti + 50 queue); overhead: cupti instrumentation 10 ms
 *   in 1 event, vramtrace stack capture 3 ms in 50 events; writer counters
 *   1234 records decoded (5 unknown), 1300 rows, 3 commits.
 * With bClosed = 0 the closed_cleanly row is left out.
 */
CLI_FN void cli_make_trace(const char *zPath, int bClosed)
{
    sqlite3 *db = NULL;
    char *zErr = NULL;
    unlink(zPath);
    if (sqlite3_open(zPath, &db) != SQLITE_OK) VT__FAIL("cannot create %s", zPath);
    if (vt__schema_create(db, &zErr) != SQLITE_OK) VT__FAIL("schema: %s", zErr);
    cli_exec(db,
             "INSERT INTO meta VALUES('tracer_version','0.1.0'),('pid','4242'),('ppid','4200'),"
             "('hostname','gpu-node-7'),('exe','/usr/bin/python3.11'),"
             "('cmdline','python train.py --epochs 3'),('rank','1'),('local_rank','1'),"
             "('world_size','4'),('cuda_driver_version','13000'),('cupti_version','130001'),"
             "('clock_anchor_cupti_ns','1000000000'),('clock_anchor_wall_ns','1763750401023000000'),"
             "('start_ns','1000000000'),('end_ns','3700000000'),('config.backtrace','16'),"
             "('config.python_stacks','1'),('config.tensors','1'),"
             "('env.PYTORCH_ALLOC_CONF','backend:cudaMallocAsync'),('note','hand-made \"fixture\"'),"
             "('records_decoded','1234'),('records_unknown','5'),('rows_written','1300'),"
             "('commits','3'),('dropped_queue','50'),('dropped_writer','0'),('dropped_map','0');"
             "INSERT INTO device VALUES(0,'NVIDIA H100 80GB HBM3','GPU-1234',85520809984,9,0,132,27,0,"
             "3352000000);"
             "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device) VALUES"
             "(1100000000,1,3,4096,1048576,0),(1200000000,1,3,2097152,2097152,0),"
             "(1300000000,2,3,4096,1048576,0),(1400000000,1,2,8323072,4096,0),"
             "(1500000000,1,3,4194304,524288,0);"
             "INSERT INTO memcpy(t, dur, device, copy_kind, src_kind, dst_kind, bytes) VALUES"
             "(1600000000,100000000,0,1,1,3,1048576),(1800000000,10000000,0,2,3,2,4096);"
             "INSERT INTO kernel(t, dur, device) VALUES(2100000000,100000000,0),"
             "(2300000000,100000000,0),(3500000000,100000000,0);"
             "INSERT INTO oom_event(t, api, device, bytes, status, free_bytes, total_bytes) VALUES"
             "(2000000000,1,0,8589934592,2,1073741824,85520809984);"
             "INSERT INTO dropped(t, source, what, count) VALUES(3000000000,0,'activity records',100),"
             "(3100000000,1,'host records',50);"
             "INSERT INTO overhead(source, kind, t, dur, count) VALUES"
             "('cupti','instrumentation',1000000000,10000000,1),"
             "('vramtrace','stack capture',2000000000,2000000,40),"
             "('vramtrace','stack capture',3000000000,1000000,10);");
    if (bClosed) cli_exec(db, "INSERT INTO meta VALUES('closed_cleanly','1')");
    if (sqlite3_close(db) != SQLITE_OK) VT__FAIL("close %s", zPath);
}

#endif
