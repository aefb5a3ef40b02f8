/* Test double of a CUDA sample: checks its injection environment, leaves a real run's trace. */
/*
 * Environment read:
 *   VT_FAKE_SAMPLE       which sample to imitate (default leak); one that kills itself
 *                        (threads) does so here too
 *   VT_FAKE_MODE         ok (default); wrong: the trace lacks one free; exit3: fail
 *                        with status 3; hang: sleep 60 s; notrace: write no trace;
 *                        twotraces: also write a trace for another pid
 *   VT_FAKE_EXPECT_LIB   the value CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH must have
 *   VT_FAKE_EXPECT_CUPTI the libcupti whose directory must come first on LD_LIBRARY_PATH
 * Exit status 4 when the injection environment is not as expected.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "gpu_fake_trace.h"
#include "gpu_verify.h"
#include "vramtrace/schema.h"

/* 0 if the environment gpu_check built is what it must be, else 4 with the reason on stderr. */
static int check_env(void)
{
    const char *zLib = getenv("CUDA_INJECTION64_PATH"), *zNvtx = getenv("NVTX_INJECTION64_PATH");
    const char *zOut = getenv("VRAMTRACE_OUTPUT"), *zPath = getenv("LD_LIBRARY_PATH");
    const char *zWantLib = getenv("VT_FAKE_EXPECT_LIB"),
               *zWantCupti = getenv("VT_FAKE_EXPECT_CUPTI");
    const char *zSlash = zWantCupti ? strrchr(zWantCupti, '/') : NULL;
    size_t nDir = zSlash ? (size_t)(zSlash - zWantCupti) : 0;

    if (!zLib || !zWantLib || strcmp(zLib, zWantLib) != 0) {
        fprintf(stderr, "fake sample: CUDA_INJECTION64_PATH is %s, expected %s\n",
                zLib ? zLib : "unset", zWantLib ? zWantLib : "(VT_FAKE_EXPECT_LIB unset)");
        return 4;
    }
    if (!zNvtx || strcmp(zNvtx, zWantLib) != 0 || !zWantCupti) {
        fprintf(stderr, "fake sample: NVTX_INJECTION64_PATH is %s\n", zNvtx ? zNvtx : "unset");
        return 4;
    }
    if (!zPath || nDir == 0 || strncmp(zPath, zWantCupti, nDir) != 0 ||
        (zPath[nDir] != ':' && zPath[nDir] != 0)) {
        fprintf(stderr, "fake sample: LD_LIBRARY_PATH does not start with CUPTI's directory: %s\n",
                zPath ? zPath : "unset");
        return 4;
    }
    if (!zOut || !strstr(zOut, "%p")) {
        fprintf(stderr, "fake sample: VRAMTRACE_OUTPUT is %s\n", zOut ? zOut : "unset");
        return 4;
    }
    return 0;
}

/*
 * Write the trace of zSample for pid at the VRAMTRACE_OUTPUT pattern (%p
 * replaced), in WAL mode like the tracer; bWrong drops the last free.
 * Returns 0, or 1 with the reason on stderr.
 */
static int write_trace(const char *zSample, long long pid, int bWrong)
{
    const char *zPattern = getenv("VRAMTRACE_OUTPUT"), *zP = strstr(zPattern, "%p");
    struct vt_fake f;
    sqlite3 *db = NULL;
    char zPath[1200];
    int rc = 1;

    snprintf(zPath, sizeof zPath, "%.*s%lld%s", (int)(zP - zPattern), zPattern, pid, zP + 2);
    if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        fprintf(stderr, "fake sample: cannot create %s\n", zPath);
        goto done;
    }
    vt__fake_sql(db, "PRAGMA journal_mode=WAL");
    vt__fake_open(&f, db, pid);
    if (vt__fake_build(&f, zSample) != 0) {
        fprintf(stderr, "fake sample: no such sample: %s\n", zSample);
        goto done;
    }
    if (bWrong)
        vt__fake_sql(db,
                     "DELETE FROM memory_event WHERE id = (SELECT max(id) FROM memory_event "
                     "WHERE op = %d)",
                     VT_MEMOP_FREE);
    rc = vt__schema_index(db) == SQLITE_OK ? 0 : 1;
done:
    sqlite3_close(db);
    return rc;
}

int main(void)
{
    const char *zSample = getenv("VT_FAKE_SAMPLE") ? getenv("VT_FAKE_SAMPLE") : "leak";
    const char *zMode = getenv("VT_FAKE_MODE") ? getenv("VT_FAKE_MODE") : "ok";
    int rc = check_env();

    if (rc != 0) return rc;
    if (strcmp(zMode, "exit3") == 0) {
        fprintf(stderr, "fake sample: failing on purpose\n");
        return 3;
    }
    if (strcmp(zMode, "hang") == 0) sleep(60);
    if (strcmp(zMode, "notrace") != 0) {
        rc = write_trace(zSample, (long long)getpid(), strcmp(zMode, "wrong") == 0);
        if (rc == 0 && strcmp(zMode, "twotraces") == 0)
            rc = write_trace(zSample, (long long)getpid() + 100000, 0);
    }
    printf("%sfake %s: done\n", vt__fake_stdout(zSample), zSample);
    if (rc == 0 && vt__gpu_sample_signal(zSample)) { /* a sample that kills itself, as the real one */
        fflush(stdout);
        raise(vt__gpu_sample_signal(zSample));
    }
    return rc;
}
