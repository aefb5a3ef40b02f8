/* The test harness itself (vt_test.h): its time limits, counts, exit codes and scratch directory. */
#include "cli_util.h"

#include <time.h>

/*
 * Run the victim program (test_harness_victim.c) on the cases named in azCase (NULL-terminated)
 * with VT_TEST_TIMEOUT=zTimeout and VT_TEST_WALL_TIMEOUT=zWall (NULL: unset); its standard output
 * and error into *pzOut and *pzErr (to free), its wall time in seconds into *pWall. Returns its
 * exit status (cli_run's).
 */
static int run_victim(const char *zTimeout, const char *zWall, const char *const *azCase, char **pzOut, char **pzErr,
                      double *pWall)
{
    char zOut[512], zErr[512], zEnvTimeout[64], zEnvWall[64];
    const char *zTmp = getenv("VT_TEST_TMP");
    char *azArgv[8] = {(char *)VT_HARNESS_VICTIM};
    const char *azEnv[] = {zEnvTimeout, zEnvWall, "VT_TEST_KEEP", NULL};
    struct timespec t0, t1;
    int rc, n = 1;
    snprintf(zOut, sizeof zOut, "%s/victim.out", zTmp ? zTmp : "/tmp");
    snprintf(zErr, sizeof zErr, "%s/victim.err", zTmp ? zTmp : "/tmp");
    snprintf(zEnvTimeout, sizeof zEnvTimeout, "VT_TEST_TIMEOUT=%s", zTimeout);
    if (zWall) snprintf(zEnvWall, sizeof zEnvWall, "VT_TEST_WALL_TIMEOUT=%s", zWall);
    else snprintf(zEnvWall, sizeof zEnvWall, "VT_TEST_WALL_TIMEOUT");
    while (azCase[n - 1] && n < 7) azArgv[n] = (char *)azCase[n - 1], n++;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = cli_run(azArgv, azEnv, zOut, zErr);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *pWall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    *pzOut = cli_read(zOut);
    *pzErr = cli_read(zErr);
    return rc;
}

/*
 * A test that spins is stopped by its CPU-time limit, reported as such, and the program goes on
 * (the wall-clock limit set far off: a loaded machine takes long to give a second of CPU).
 */
TEST(cpu_limit_stops_a_spinning_test)
{
    static const char *const az[] = {"spin", "pass", NULL};
    char *zOut, *zErr;
    double wall;
    ASSERT_EQ(1, run_victim("1", "900", az, &zOut, &zErr, &wall));
    ASSERT_CONTAINS(zErr, "spin: killed by signal 24 (CPU time limit)");
    ASSERT_CONTAINS(zOut, "ok     pass\nFAIL   spin\n1 passed, 1 failed, 0 skipped\n"); /* in the list's order */
    free(zOut), free(zErr);
}

/* A test blocked without using CPU is stopped by the wall-clock limit (five times the CPU limit). */
TEST(wall_limit_stops_a_blocked_test)
{
    static const char *const az[] = {"block", NULL};
    char *zOut, *zErr;
    double wall;
    ASSERT_EQ(1, run_victim("1", NULL, az, &zOut, &zErr, &wall));
    ASSERT_CONTAINS(zErr, "block: killed by signal 14 (wall-clock limit: blocked?)");
    ASSERT_CONTAINS(zOut, "FAIL   block\n0 passed, 1 failed, 0 skipped\n");
    ASSERT(wall >= 4.5); /* not before its limit; no upper bound: a loaded machine may be slow to reap */
    free(zOut), free(zErr);
}

/* Counts and exit codes: any failure 1; everything skipped 77 (ctest's SKIPPED); nothing run 1. */
TEST(counts_and_exit_codes)
{
    static const char *const azMix[] = {"pass", "fail", "skip", NULL}, *const azSkip[] = {"skip", NULL},
                             *const azNone[] = {"no_such_case", NULL}, *const azPass[] = {"pass", NULL};
    char *zOut, *zErr;
    double wall;
    ASSERT_EQ(1, run_victim("30", NULL, azMix, &zOut, &zErr, &wall));
    ASSERT_CONTAINS(zOut, "ok     pass\nFAIL   fail\nskip   skip\n1 passed, 1 failed, 1 skipped\n");
    ASSERT_CONTAINS(zErr, "1 == 2: expected 1, got 2");
    ASSERT_CONTAINS(zErr, "  skipped: the harness's own skip\n");
    free(zOut), free(zErr);
    ASSERT_EQ(77, run_victim("30", NULL, azSkip, &zOut, &zErr, &wall));
    free(zOut), free(zErr);
    ASSERT_EQ(1, run_victim("30", NULL, azNone, &zOut, &zErr, &wall));
    ASSERT_CONTAINS(zOut, "0 passed, 0 failed, 0 skipped\n");
    free(zOut), free(zErr);
    ASSERT_EQ(0, run_victim("30", NULL, azPass, &zOut, &zErr, &wall));
    free(zOut), free(zErr);
}

/* The scratch directory a program gets is removed with what its tests left in it. */
TEST(scratch_directory_removed)
{
    static const char *const az[] = {"scratch", NULL};
    char *zOut, *zErr, *z;
    struct stat st;
    double wall;
    ASSERT_EQ(0, run_victim("30", NULL, az, &zOut, &zErr, &wall));
    z = strstr(zOut, "scratch /");
    ASSERT(z != NULL);
    z += 8;
    z[strcspn(z, "\n")] = 0;
    ASSERT(strncmp(z, vt__tmp_base(), strlen(vt__tmp_base())) == 0); /* in TMPDIR (else /tmp) */
    ASSERT(strncmp(z + strlen(vt__tmp_base()), "/vt_test_", 9) == 0);
    ASSERT(stat(z, &st) != 0);
    free(zOut), free(zErr);
}

VT_TEST_LIST(T(cpu_limit_stops_a_spinning_test) T(wall_limit_stops_a_blocked_test) T(counts_and_exit_codes)
                 T(scratch_directory_removed))
