/* Test helpers: temporary directories, running the vramtrace command and reading its output. */
#ifndef VT_TEST_SQL_RUN_H
#define VT_TEST_SQL_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "vt_test.h"

/* Read a whole file into a malloc'd string ("" when missing). */
static char *vt_slurp(const char *zPath)
{
    FILE *f = fopen(zPath, "rb");
    char *z;
    long n;
    if (!f) return calloc(1, 1);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    z = malloc((size_t)n + 1);
    ASSERT(z != NULL);
    ASSERT_EQ(n, (long)fread(z, 1, (size_t)n, f));
    z[n] = 0;
    fclose(f);
    return z;
}

/* A fresh temporary directory for this test (path in a static buffer). */
static const char *vt_tmpdir(void)
{
    static char zDir[64];
    snprintf(zDir, sizeof zDir, "%s/vt_sqltest.XXXXXX", vt__tmp_base());
    ASSERT(mkdtemp(zDir) != NULL);
    return zDir;
}

/* Remove a directory made by vt_tmpdir (only such directories). */
static void vt_cleanup(const char *zDir)
{
    char zCmd[128];
    const char *zBase = vt__tmp_base();
    size_t n = strlen(zBase);
    if (strncmp(zDir, zBase, n) != 0 || strncmp(zDir + n, "/vt_sqltest.", 12) != 0 || strchr(zDir, '\'') ||
        strstr(zDir, ".."))
        return;
    snprintf(zCmd, sizeof zCmd, "rm -rf '%s'", zDir);
    if (system(zCmd) != 0) fprintf(stderr, "  could not remove %s\n", zDir);
}

/* Path of the vramtrace binary of this build. */
static const char *vt_bin(void)
{
    static char zBin[1024];
    const char *zBuild = getenv("VT_BUILD_DIR");
    if (!zBuild) SKIP("VT_BUILD_DIR not set (run under ctest)");
    snprintf(zBin, sizeof zBin, "%s/analyzer/vramtrace", zBuild);
    return zBin;
}

/*
 * Run "vramtrace ARGS" through the shell (zArgs is shell text), stdout and stderr
 * to files in zDir; returns the exit code; *pzOut and *pzErr receive malloc'd output.
 */
static int vt_run(const char *zDir, const char *zArgs, char **pzOut, char **pzErr)
{
    char zCmd[8192], zOut[256], zErr[256];
    int status;
    snprintf(zOut, sizeof zOut, "%s/stdout", zDir);
    snprintf(zErr, sizeof zErr, "%s/stderr", zDir);
    snprintf(zCmd, sizeof zCmd, "%s %s >%s 2>%s", vt_bin(), zArgs, zOut, zErr);
    status = system(zCmd);
    ASSERT(status != -1 && WIFEXITED(status));
    if (pzOut) *pzOut = vt_slurp(zOut);
    if (pzErr) *pzErr = vt_slurp(zErr);
    return WEXITSTATUS(status);
}

#endif
