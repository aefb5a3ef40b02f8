/* Minimal test harness: each test runs in its own forked process with a time limit. */
#ifndef VT_TEST_H
#define VT_TEST_H

/*
 * Usage, in tests/test_<module>.c:
 *
 *   TEST(decode_memcpy) { ...; ASSERT_EQ(3, n); }
 *   VT_TEST_LIST(T(decode_memcpy) T(decode_kernel))
 *
 * The program runs every listed test (or only those named on the command line),
 * prints one line per test and a closing "N passed, N failed" line, and exits
 * non-zero if any failed. Exit code 77 from a test (SKIP()) counts as skipped.
 * VT_TEST_TIMEOUT (seconds, default 120) bounds each test's CPU time (RLIMIT_CPU, which a
 * loaded machine does not stretch), and five times that its wall time (a test blocked
 * without using CPU), or VT_TEST_WALL_TIMEOUT seconds where that is set.
 * Each program gets a scratch directory (in TMPDIR, else /tmp: vt__tmp_base), exported as
 * VT_TEST_TMP, that is removed with everything in it when the program ends (kept if
 * VT_TEST_KEEP is set).
 */
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define TEST(name) static void test_##name(void)

#define VT__FAIL(...)                                                  \
    do {                                                               \
        fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);              \
        fprintf(stderr, __VA_ARGS__);                                  \
        fprintf(stderr, "\n");                                         \
        fflush(stderr);                                                \
        _exit(1);                                                      \
    } while (0)

#define ASSERT(cond)                                                   \
    do {                                                               \
        if (!(cond)) VT__FAIL("assertion failed: %s", #cond);          \
    } while (0)
#define ASSERT_EQ(expected, actual)                                    \
    do {                                                               \
        long long vt__e = (long long)(expected), vt__a = (long long)(actual); \
        if (vt__e != vt__a)                                            \
            VT__FAIL("%s == %s: expected %lld, got %lld", #expected, #actual, vt__e, vt__a); \
    } while (0)
#define ASSERT_NE(a, b)                                                \
    do {                                                               \
        long long vt__x = (long long)(a), vt__y = (long long)(b);      \
        if (vt__x == vt__y) VT__FAIL("%s != %s: both are %lld", #a, #b, vt__x); \
    } while (0)
#define ASSERT_STREQ(expected, actual)                                 \
    do {                                                               \
        const char *vt__e = (expected), *vt__a = (actual);             \
        if (!vt__a || strcmp(vt__e, vt__a) != 0)                       \
            VT__FAIL("%s: expected \"%s\", got \"%s\"", #actual, vt__e, vt__a ? vt__a : "(null)"); \
    } while (0)
#define ASSERT_CONTAINS(haystack, needle)                              \
    do {                                                               \
        const char *vt__h = (haystack), *vt__n = (needle);             \
        if (!vt__h || !strstr(vt__h, vt__n))                           \
            VT__FAIL("%s does not contain \"%s\": \"%s\"", #haystack, vt__n, vt__h ? vt__h : "(null)"); \
    } while (0)
#define SKIP(why)                                                      \
    do {                                                               \
        fprintf(stderr, "  skipped: %s\n", why);                       \
        _exit(77);                                                     \
    } while (0)

struct vt__test_case {
    const char *zName;
    void (*xRun)(void);
};

#define T(name) {#name, test_##name},

/* Run one test in a child with timeout CPU seconds and wall wall-clock seconds; returns 0 pass, 1 fail, 2 skip. */
static int vt__run_one(const struct vt__test_case *pCase, unsigned timeout, unsigned wall)
{
    pid_t pid;
    int status = 0;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_CPU, &rl) == 0 && (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > timeout)) {
            rl.rlim_cur = timeout;
            setrlimit(RLIMIT_CPU, &rl);
        }
        alarm(wall);
        pCase->xRun();
        fflush(stdout);
        _exit(0);
    }
    while (waitpid(pid, &status, 0) < 0) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) return 2;
    if (WIFSIGNALED(status))
        fprintf(stderr, "  %s: killed by signal %d%s\n", pCase->zName, WTERMSIG(status),
                WTERMSIG(status) == SIGALRM   ? " (wall-clock limit: blocked?)"
                : WTERMSIG(status) == SIGXCPU ? " (CPU time limit)"
                                              : "");
    return 1;
}

/*
 * Read the file zPath into z (n bytes with the closing NUL: a longer file is cut). Returns
 * the bytes read, or -1 (z then "") when the file cannot be opened.
 */
static inline long vt_read_file(const char *zPath, char *z, size_t n)
{
    FILE *f = fopen(zPath, "rb");
    size_t k = f ? fread(z, 1, n - 1, f) : 0;
    z[k] = '\0';
    if (!f) return -1;
    fclose(f);
    return (long)k;
}

/*
 * Where scratch directories go: TMPDIR where it is set to an absolute path short enough for the
 * helpers' buffers (40 characters: tests/run.sh points it at a tmpfs), else /tmp.
 */
static const char *vt__tmp_base(void)
{
    const char *z = getenv("TMPDIR");
    return z && z[0] == '/' && strlen(z) <= 40 ? z : "/tmp";
}

/* nftw callback: remove one entry (depth first). */
static int vt__rm_entry(const char *zPath, const struct stat *pSt, int flag, struct FTW *pFtw)
{
    (void)pSt;
    (void)flag;
    (void)pFtw;
    remove(zPath);
    return 0;
}

static int vt__test_main(const struct vt__test_case *aCase, size_t nCase, int argc, char **argv)
{
    int nPass = 0, nFail = 0, nSkip = 0;
    char zTmp[64];
    int bTmp = snprintf(zTmp, sizeof zTmp, "%s/vt_test_XXXXXX", vt__tmp_base()) > 0 && mkdtemp(zTmp) != NULL;
    if (bTmp) setenv("VT_TEST_TMP", zTmp, 1);
    unsigned timeout = 120, wall;
    const char *zTimeout = getenv("VT_TEST_TIMEOUT"), *zWall = getenv("VT_TEST_WALL_TIMEOUT");
    size_t i;
    if (zTimeout && atoi(zTimeout) > 0) timeout = (unsigned)atoi(zTimeout);
    wall = zWall && atoi(zWall) > 0 ? (unsigned)atoi(zWall) : timeout * 5;
    for (i = 0; i < nCase; i++) {
        int r, want = argc < 2;
        for (int a = 1; a < argc && !want; a++) want = strcmp(argv[a], aCase[i].zName) == 0;
        if (!want) continue;
        r = vt__run_one(&aCase[i], timeout, wall);
        printf("%-6s %s\n", r == 0 ? "ok" : r == 2 ? "skip" : "FAIL", aCase[i].zName);
        fflush(stdout);
        if (r == 0) nPass++;
        else if (r == 2) nSkip++;
        else nFail++;
    }
    printf("%d passed, %d failed, %d skipped\n", nPass, nFail, nSkip);
    if (bTmp && !getenv("VT_TEST_KEEP")) nftw(zTmp, vt__rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (nFail) return 1;
    if (nPass == 0 && nSkip > 0) return 77; /* everything skipped: ctest reports SKIPPED */
    return nPass ? 0 : 1;                   /* a program that ran nothing has failed */
}

#define VT_TEST_LIST(...)                                                        \
    static const struct vt__test_case vt__aCase[] = {__VA_ARGS__};              \
    int main(int argc, char **argv)                                              \
    {                                                                            \
        return vt__test_main(vt__aCase, sizeof vt__aCase / sizeof vt__aCase[0], argc, argv); \
    }

#endif
