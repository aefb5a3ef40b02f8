/* Tests of the built libvramtrace.so: exported symbols, linkage, and InitializeInjection's degrade path. */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "vt_test.h"

#ifndef VT_INJECT_SO
#error "VT_INJECT_SO must name the built libvramtrace.so"
#endif

/* Run argv (no shell), capture stdout into z (size n). Returns the exit status or -1. */
static int run_capture(char *const argv[], char *z, size_t n)
{
    int aPipe[2], status = -1;
    size_t got = 0;
    pid_t pid;
    if (pipe(aPipe) != 0) return -1;
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(aPipe[1], 1);
        close(aPipe[0]);
        close(aPipe[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(aPipe[1]);
    for (;;) {
        ssize_t k = read(aPipe[0], z + got, n - 1 - got);
        if (k <= 0) break;
        got += (size_t)k;
        if (got + 1 >= n) break;
    }
    z[got] = '\0';
    close(aPipe[0]);
    while (waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Only the CUDA and NVTX injection entry points are exported: no SQLite, no internal vt__ symbol. */
TEST(exports_only_entry_point)
{
    static char z[1 << 16];
    char *const argv[] = {"nm", "-D", "--defined-only", VT_INJECT_SO, NULL};
    char *zLine, *zSave = NULL;
    int nSym = 0, nEntry = 0;
    ASSERT_EQ(0, run_capture(argv, z, sizeof z));
    for (zLine = strtok_r(z, "\n", &zSave); zLine; zLine = strtok_r(NULL, "\n", &zSave)) {
        const char *zName = strrchr(zLine, ' ');
        zName = zName ? zName + 1 : zLine;
        nSym++;
        if (strcmp(zName, "InitializeInjection") == 0 || strcmp(zName, "InitializeInjectionNvtx2") == 0)
            nEntry++;
        else VT__FAIL("unexpected exported symbol: %s", zLine);
    }
    ASSERT_EQ(2, nSym);
    ASSERT_EQ(2, nEntry);
}

/* libcupti by soname, no CUDA or C++ runtime, RUNPATH with $ORIGIN and the toolkit as fallbacks. */
TEST(linkage)
{
    static char z[1 << 16];
    char *const argv[] = {"readelf", "-d", VT_INJECT_SO, NULL};
    ASSERT_EQ(0, run_capture(argv, z, sizeof z));
    ASSERT_CONTAINS(z, "Shared library: [libcupti.so.13]");
    ASSERT(strstr(z, "libcudart") == NULL);
    ASSERT(strstr(z, "libsqlite3") == NULL);
    ASSERT(strstr(z, "libcuda.so") == NULL);
    ASSERT(strstr(z, "libpython") == NULL);
    ASSERT(strstr(z, "libstdc++") == NULL); /* kernel names are demangled by the process's own runtime, if any */
    ASSERT_CONTAINS(z, "(RUNPATH)");
    ASSERT_CONTAINS(z, "$ORIGIN");
}

/* Count the entries of a directory, '.' and '..' excluded. */
static int count_entries(const char *zDir)
{
    DIR *d = opendir(zDir);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/*
 * In a child: point the trace into zDir, capture stderr into zErrFile, dlopen
 * the library, call InitializeInjection twice, exit(0) normally (running the
 * exit handlers). Returns the child's wait status.
 */
static int run_injection(const char *zDir, const char *zErrFile, const char *zExtraVar,
                         const char *zExtraVal)
{
    int status = -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        char zOut[256];
        void *h;
        int (*xInit)(void);
        int fd = open(zErrFile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0) _exit(20);
        close(fd);
        snprintf(zOut, sizeof zOut, "%s/trace-%%p.db", zDir);
        setenv("VRAMTRACE_OUTPUT", zOut, 1);
        if (zExtraVar) setenv(zExtraVar, zExtraVal, 1);
        if (chdir(zDir) != 0) _exit(21);
        h = dlopen(VT_INJECT_SO, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            _exit(22);
        }
        *(void **)&xInit = dlsym(h, "InitializeInjection");
        if (!xInit) _exit(23);
        if (xInit() != 1) _exit(24);
        if (xInit() != 1) _exit(25); /* a second call is a no-op */
        exit(0);
    }
    while (waitpid(pid, &status, 0) < 0) {
    }
    return status;
}

/* Remove a test directory and the files in it (no subdirectories are made). */
static void remove_tree(const char *zDir)
{
    DIR *d = opendir(zDir);
    struct dirent *e;
    char z[512];
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(z, sizeof z, "%s/%s", zDir, e->d_name);
        unlink(z);
    }
    if (d) closedir(d);
    rmdir(zDir);
}

static int count_lines(const char *z)
{
    int n = 0;
    for (; *z; z++) n += *z == '\n';
    return n;
}

/*
 * Without a GPU (no driver) libcupti loads but cannot subscribe: exactly one
 * "vramtrace:" line, the call returns, the process exits 0, no file is left.
 * With a GPU the library traces instead: one start line and a trace file.
 */
TEST(initialize_injection_degrades)
{
    char zDir[64], zErrFile[128], z[4096];
    int status, n;
    snprintf(zDir, sizeof zDir, "/tmp/vt_inject_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "/tmp/vt_inject_err_%ld", (long)getpid());
    status = run_injection(zDir, zErrFile, NULL, NULL);
    ASSERT(vt_read_file(zErrFile, z, sizeof z) >= 0);
    unlink(zErrFile);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        VT__FAIL("child status %d, stderr: %s", status, z);
    ASSERT_EQ(1, count_lines(z));
    ASSERT_EQ(0, strncmp(z, "vramtrace: ", 11));
    n = count_entries(zDir);
    if (strstr(z, "vramtrace: tracing process")) {
        /* a GPU machine: the trace exists and was closed */
        ASSERT(n >= 1);
    } else {
        ASSERT_CONTAINS(z, "vramtrace: tracing off: CUPTI cannot attach (cuptiSubscribe: ");
        ASSERT_EQ(0, n);
    }
    remove_tree(zDir);
}

/* VRAMTRACE_DISABLE=1: silent, nothing created. */
TEST(disabled_is_silent)
{
    char zDir[64], zErrFile[128], z[1024];
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_inject_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "/tmp/vt_inject_err_%ld", (long)getpid());
    status = run_injection(zDir, zErrFile, "VRAMTRACE_DISABLE", "1");
    ASSERT(vt_read_file(zErrFile, z, sizeof z) >= 0);
    unlink(zErrFile);
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(0, WEXITSTATUS(status));
    ASSERT_STREQ("", z);
    ASSERT_EQ(0, count_entries(zDir));
    rmdir(zDir);
}

/* A malformed variable adds exactly its own warning line; the process still exits 0. */
TEST(bad_config_warns_and_continues)
{
    char zDir[64], zErrFile[128], z[4096];
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_inject_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "/tmp/vt_inject_err_%ld", (long)getpid());
    status = run_injection(zDir, zErrFile, "VRAMTRACE_FLUSH_MS", "soon");
    ASSERT(vt_read_file(zErrFile, z, sizeof z) >= 0);
    unlink(zErrFile);
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(0, WEXITSTATUS(status));
    ASSERT_EQ(2, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: VRAMTRACE_FLUSH_MS='soon' is not a number from 10 to 1000; using 500\n");
    remove_tree(zDir);
}

VT_TEST_LIST(T(exports_only_entry_point) T(linkage) T(initialize_injection_degrades)
             T(disabled_is_silent) T(bad_config_warns_and_continues))
