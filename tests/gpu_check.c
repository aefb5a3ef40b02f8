/* GPU test driver: run one CUDA sample under libvramtrace.so, check its trace's known answer. */
/*
 * Usage: gpu_check SAMPLE_NAME SAMPLE_BINARY LIB CUPTI_LIB
 *        gpu_check --verify SAMPLE_NAME TRACE STDOUT_FILE PID
 *        gpu_check --info SAMPLE_NAME
 *
 * The first form runs the sample and checks its trace. --verify checks a trace
 * another launcher recorded (`vramtrace record`): STDOUT_FILE holds the
 * sample's output (its "vt-fact:" lines), PID the sample's pid. --info prints
 * what a launcher must know to run the sample: "signal N" (the signal it ends
 * with, 0: it exits with status 0), when it needs one, "env NAME=VALUE", and for
 * a sample that leaks on purpose "leaked BYTES ALLOCATIONS".
 *
 * Exit codes: 0 the trace holds the sample's known answer; 1 it does not (or
 * the sample failed); 2 usage; 77 skipped: no CUDA driver or no GPU here.
 * Environment: VT_CUPTI_LIB overrides CUPTI_LIB (the GPU machine may keep
 * libcupti elsewhere than the build machine; without it, a CUPTI_LIB that does
 * not exist falls back to the libcupti.so.13 the dynamic loader finds);
 * VT_GPU_TIMEOUT bounds the sample's run in seconds (default 240);
 * VT_GPU_KEEP=1 keeps the temporary directory (trace, stdout, stderr) even on
 * success.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "gpu_verify.h"
#include "vramtrace/schema.h"

#define EXIT_SKIP 77

extern char **environ;

/* Release an array from build_env (its first four strings are ours; the rest are borrowed). */
static void free_env(char **azEnv)
{
    int i;
    if (!azEnv) return;
    for (i = 0; i < 4; i++) sqlite3_free(azEnv[i]);
    free(azEnv);
}

/*
 * Is there a GPU? dlopen the driver (no link-time dependency on it), cuInit(0),
 * cuDeviceGetCount. Returns 1 if at least one device, else 0 with the reason in
 * zWhy. The injection variables are unset first so a tracer configured in the
 * caller's environment does not attach to this probe.
 */
static int probe_gpu(char *zWhy, size_t nWhy)
{
    typedef int (*cu_init_fn)(unsigned int);
    typedef int (*cu_count_fn)(int *);
    void *pLib;
    cu_init_fn xInit;
    cu_count_fn xCount;
    int rc, nDevice = 0, found = 0;

    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("NVTX_INJECTION64_PATH");
    pLib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!pLib) {
        snprintf(zWhy, nWhy, "no CUDA driver: %s", dlerror());
        return 0;
    }
    xInit = (cu_init_fn)(size_t)dlsym(pLib, "cuInit");
    xCount = (cu_count_fn)(size_t)dlsym(pLib, "cuDeviceGetCount");
    if (!xInit || !xCount)
        snprintf(zWhy, nWhy, "libcuda.so.1 lacks cuInit/cuDeviceGetCount");
    else if ((rc = xInit(0)) != 0)
        snprintf(zWhy, nWhy, "cuInit(0) failed with CUresult %d", rc);
    else if ((rc = xCount(&nDevice)) != 0)
        snprintf(zWhy, nWhy, "cuDeviceGetCount failed with CUresult %d", rc);
    else if (nDevice < 1)
        snprintf(zWhy, nWhy, "the CUDA driver sees no device");
    else
        found = 1;
    /* The driver stays loaded: unloading it after cuInit is not supported. */
    return found;
}

/*
 * The libcupti to use: VT_CUPTI_LIB if set, else zConfigured (found at
 * configure time) if it exists here, else the file the dynamic loader
 * resolves libcupti.so.13 to (the build machine's path may not exist on the
 * GPU machine). Returns 0 with the path in zOut, or -1.
 */
static int find_cupti(const char *zConfigured, char *zOut, size_t nOut)
{
    const char *zEnv = getenv("VT_CUPTI_LIB");
    struct link_map *pMap = NULL;
    void *pLib;
    int rc = -1;

    if (zEnv && *zEnv) {
        snprintf(zOut, nOut, "%s", zEnv);
        return access(zOut, R_OK) == 0 ? 0 : -1;
    }
    if (access(zConfigured, R_OK) == 0) {
        snprintf(zOut, nOut, "%s", zConfigured);
        return 0;
    }
    pLib = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_LOCAL);
    if (!pLib) return -1;
    if (dlinfo(pLib, RTLD_DI_LINKMAP, &pMap) == 0 && pMap && pMap->l_name &&
        pMap->l_name[0] == '/' && (size_t)snprintf(zOut, nOut, "%s", pMap->l_name) < nOut)
        rc = 0;
    dlclose(pLib);
    return rc;
}

/*
 * Build the sample's environment: our four settings first (and zExtra,
 * "NAME=VALUE" or NULL, a setting the sample needs) (NVTX loads the tracer
 * too, which forwards NVTX to its own libcupti; the CUPTI directory goes first on
 * LD_LIBRARY_PATH so libvramtrace.so resolves libcupti.so.13 from it), then the caller's environment minus any injection settings and
 * LD_LIBRARY_PATH. Done before fork, since a child of a threaded process may
 * only exec. Returns a NULL-terminated array to release with free_env, or NULL
 * when out of memory.
 */
static char **build_env(const char *zLib, const char *zCupti, const char *zDir, const char *zExtra)
{
    static const char *const azDrop[] = {"CUDA_INJECTION64_PATH=", "NVTX_INJECTION64_PATH=",
                                         "VRAMTRACE_OUTPUT=", "LD_LIBRARY_PATH="};
    const char *zOldPath = getenv("LD_LIBRARY_PATH");
    char zCuptiDir[4096], *zSlash;
    size_t n = 0, i, k = 4;
    char **azEnv;

    while (environ[n]) n++;
    azEnv = calloc(n + 6, sizeof *azEnv);
    if (!azEnv) return NULL;
    snprintf(zCuptiDir, sizeof zCuptiDir, "%s", zCupti);
    zSlash = strrchr(zCuptiDir, '/');
    if (zSlash)
        *zSlash = 0;
    else
        snprintf(zCuptiDir, sizeof zCuptiDir, ".");
    azEnv[0] = sqlite3_mprintf("CUDA_INJECTION64_PATH=%s", zLib);
    azEnv[1] = sqlite3_mprintf("NVTX_INJECTION64_PATH=%s", zLib); /* forwards to its libcupti */
    azEnv[2] = sqlite3_mprintf("VRAMTRACE_OUTPUT=%s/trace-%%p.db", zDir);
    azEnv[3] = sqlite3_mprintf("LD_LIBRARY_PATH=%s%s%s", zCuptiDir, zOldPath ? ":" : "",
                               zOldPath ? zOldPath : "");
    if (!azEnv[0] || !azEnv[1] || !azEnv[2] || !azEnv[3]) {
        free_env(azEnv);
        return NULL;
    }
    if (zExtra) azEnv[k++] = (char *)zExtra; /* borrowed, static */
    for (i = 0; i < n; i++) {
        int bDrop = 0;
        size_t d;
        for (d = 0; d < sizeof azDrop / sizeof azDrop[0]; d++)
            if (strncmp(environ[i], azDrop[d], strlen(azDrop[d])) == 0) bDrop = 1;
        if (!bDrop) azEnv[k++] = environ[i];
    }
    return azEnv;
}

/*
 * Run zBinary with envp, stdout and stderr to files in zDir, for at most
 * timeout seconds. Returns the child's pid (> 0) with its wait status in
 * *pStatus, or -1 with a message printed (fork failure, timeout: the child is
 * killed).
 */
static pid_t run_sample(const char *zBinary, char **azEnv, const char *zDir, unsigned timeout,
                        int *pStatus)
{
    char zOut[1200], zErr[1200];
    struct timespec delay = {0, 20 * 1000 * 1000};
    unsigned long waited_ms = 0;
    int fdOut, fdErr;
    pid_t pid;

    snprintf(zOut, sizeof zOut, "%s/stdout.txt", zDir);
    snprintf(zErr, sizeof zErr, "%s/stderr.txt", zDir);
    fdOut = open(zOut, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    fdErr = open(zErr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fdOut < 0 || fdErr < 0) {
        fprintf(stderr, "gpu_check: cannot create %s: %s\n", zOut, strerror(errno));
        if (fdOut >= 0) close(fdOut);
        if (fdErr >= 0) close(fdErr);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        char *azArgv[2];
        azArgv[0] = (char *)zBinary;
        azArgv[1] = NULL;
        if (dup2(fdOut, 1) < 0 || dup2(fdErr, 2) < 0) _exit(126);
        execve(zBinary, azArgv, azEnv);
        _exit(127);
    }
    close(fdOut);
    close(fdErr);
    if (pid < 0) {
        fprintf(stderr, "gpu_check: fork: %s\n", strerror(errno));
        return -1;
    }
    for (;;) {
        pid_t r = waitpid(pid, pStatus, WNOHANG);
        if (r == pid) return pid;
        if (r < 0 && errno != EINTR) {
            fprintf(stderr, "gpu_check: waitpid: %s\n", strerror(errno));
            return -1;
        }
        if (waited_ms >= timeout * 1000UL) {
            fprintf(stderr, "gpu_check: %s ran past %u s: killed\n", zBinary, timeout);
            kill(pid, SIGKILL);
            waitpid(pid, pStatus, 0);
            return -1;
        }
        nanosleep(&delay, NULL);
        waited_ms += 20;
    }
}

/* Read a whole (small) file into a NUL-terminated heap string; NULL on error. */
static char *read_text(const char *zPath)
{
    FILE *pFile = fopen(zPath, "rb");
    char *zText = NULL;
    long n;
    if (!pFile) return NULL;
    if (fseek(pFile, 0, SEEK_END) == 0 && (n = ftell(pFile)) >= 0 &&
        fseek(pFile, 0, SEEK_SET) == 0) {
        zText = malloc((size_t)n + 1);
        if (zText && fread(zText, 1, (size_t)n, pFile) != (size_t)n) {
            free(zText);
            zText = NULL;
        }
        if (zText) zText[n] = 0;
    }
    fclose(pFile);
    return zText;
}

/*
 * Find the traces the run left in zDir: exactly one, named trace-PID.db, is
 * expected. Returns 0 and writes its path to zPath, or -1 with a message
 * listing what was there.
 */
static int find_trace(const char *zDir, pid_t pid, char *zPath, size_t nPath)
{
    char zWant[64];
    int nTrace = 0, bFound = 0;
    struct dirent *pEnt;
    DIR *pDir = opendir(zDir);
    if (!pDir) {
        fprintf(stderr, "gpu_check: cannot list %s: %s\n", zDir, strerror(errno));
        return -1;
    }
    snprintf(zWant, sizeof zWant, "trace-%ld.db", (long)pid);
    while ((pEnt = readdir(pDir)) != NULL) {
        size_t n = strlen(pEnt->d_name);
        if (strncmp(pEnt->d_name, "trace-", 6) != 0 || n < 4 || strcmp(pEnt->d_name + n - 3, ".db"))
            continue;
        nTrace++;
        if (strcmp(pEnt->d_name, zWant) == 0)
            bFound = 1;
        else
            fprintf(stderr, "gpu_check: unexpected trace %s/%s\n", zDir, pEnt->d_name);
    }
    closedir(pDir);
    if (nTrace != 1 || !bFound) {
        fprintf(stderr, "gpu_check: expected exactly one trace, %s, in %s; found %d trace(s)%s\n",
                zWant, zDir, nTrace, bFound ? "" : ", none for the sample's pid");
        return -1;
    }
    snprintf(zPath, nPath, "%s/%s", zDir, zWant);
    return 0;
}

/* Remove the run's directory and what the run left in it (one level deep). */
static void remove_dir(const char *zDir)
{
    struct dirent *pEnt;
    DIR *pDir = opendir(zDir);
    if (pDir) {
        while ((pEnt = readdir(pDir)) != NULL) {
            char zPath[1400];
            if (strcmp(pEnt->d_name, ".") == 0 || strcmp(pEnt->d_name, "..") == 0) continue;
            snprintf(zPath, sizeof zPath, "%s/%s", zDir, pEnt->d_name);
            unlink(zPath);
        }
        closedir(pDir);
    }
    rmdir(zDir);
}

/*
 * Check the trace zTrace of one run of zSample (pid, stdout text zStdout with
 * its "vt-fact:" lines) against the known answer, printing one line per check.
 * Returns 0 when it holds, 1 otherwise (the reason printed).
 */
static int verify_trace(const char *zSample, const char *zTrace, long long pid, const char *zStdout)
{
    struct vt_gpu_facts facts;
    sqlite3 *db = NULL;
    char zMsg[256];
    int rc = 1;

    if (vt__gpu_facts_parse(zStdout, &facts) < 0) {
        fprintf(stderr, "gpu_check: malformed \"vt-fact:\" line in the sample's output\n");
        return 1;
    }
    /* Read-write open: a WAL trace may need its -shm file created; nothing is written. */
    if (sqlite3_open_v2(zTrace, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        fprintf(stderr, "gpu_check: cannot open %s: %s\n", zTrace,
                db ? sqlite3_errmsg(db) : "out of memory");
        goto done;
    }
    if (vt__schema_check(db, NULL, zMsg, sizeof zMsg) != VT_SCHEMA_OK) {
        fprintf(stderr, "gpu_check: %s: %s\n", zTrace, zMsg);
        goto done;
    }
    if (vt__gpu_verify(db, zSample, pid, &facts, stdout) == 0) {
        printf("gpu_%s: the trace holds the known answer\n", zSample);
        rc = 0;
    }
done:
    sqlite3_close(db);
    return rc;
}

/*
 * --verify: check a trace another launcher recorded. zPid must be a positive
 * decimal pid; zStdoutFile holds the sample's output. Returns the exit code
 * (0 the known answer holds, 1 not or unreadable input, 2 a bad pid).
 */
static int verify_recorded(const char *zSample, const char *zTrace, const char *zStdoutFile,
                           const char *zPid)
{
    char *zEnd = NULL, *zStdout;
    long long pid = strtoll(zPid, &zEnd, 10);
    int rc;

    if (pid <= 0 || !zEnd || *zEnd) {
        fprintf(stderr, "gpu_check: --verify: PID must be a positive number, not '%s'\n", zPid);
        return 2;
    }
    if (access(zTrace, R_OK) != 0) {
        fprintf(stderr, "gpu_check: --verify: no trace %s\n", zTrace);
        return 1;
    }
    zStdout = read_text(zStdoutFile);
    if (!zStdout) {
        fprintf(stderr, "gpu_check: --verify: cannot read %s\n", zStdoutFile);
        return 1;
    }
    rc = verify_trace(zSample, zTrace, pid, zStdout);
    free(zStdout);
    return rc;
}

int main(int argc, char **argv)
{
    const char *zSample, *zBinary, *zLib, *zTmp, *zTimeout;
    char zWhy[512], zDir[1024], zTrace[1200], zFile[1200], zCupti[1024];
    char *zStdout = NULL, *zStderr = NULL, **azEnv = NULL;
    unsigned timeout = 240;
    int status = 0, rc = 1;
    pid_t pid;

    if (argc == 6 && strcmp(argv[1], "--verify") == 0 && vt__gpu_sample_known(argv[2]))
        return verify_recorded(argv[2], argv[3], argv[4], argv[5]);
    if (argc == 3 && strcmp(argv[1], "--info") == 0 && vt__gpu_sample_known(argv[2])) {
        vt__gpu_sample_info(argv[2], stdout);
        return 0;
    }
    if (argc != 5 || !vt__gpu_sample_known(argv[1])) {
        fprintf(stderr, "usage: gpu_check SAMPLE_NAME SAMPLE_BINARY LIB CUPTI_LIB\n"
                        "       gpu_check --verify SAMPLE_NAME TRACE STDOUT_FILE PID\n"
                        "       gpu_check --info SAMPLE_NAME\n"
                        "  SAMPLE_NAME: leak, copies, oom, pool, phases, managed, vmm, threads, graphs,\n"
                        "  sharing or takeover\n");
        return 2;
    }
    zSample = argv[1];
    zBinary = argv[2];
    zLib = argv[3];
    zTimeout = getenv("VT_GPU_TIMEOUT");
    if (zTimeout && atoi(zTimeout) > 0) timeout = (unsigned)atoi(zTimeout);

    if (!probe_gpu(zWhy, sizeof zWhy)) {
        printf("gpu_%s: skipped: %s\n", zSample, zWhy);
        return EXIT_SKIP;
    }
    if (access(zBinary, X_OK) != 0 || access(zLib, R_OK) != 0) {
        fprintf(stderr, "gpu_check: %s or %s is missing: build the project first\n", zBinary, zLib);
        return 1;
    }
    if (find_cupti(argv[4], zCupti, sizeof zCupti) != 0) {
        fprintf(stderr,
                "gpu_check: no libcupti: %s does not exist here, and neither VT_CUPTI_LIB nor "
                "the dynamic loader names one; set VT_CUPTI_LIB to this machine's "
                "libcupti.so.13\n",
                argv[4]);
        return 1;
    }

    zTmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    if ((size_t)snprintf(zDir, sizeof zDir, "%s/vt-gpu-%s-XXXXXX", zTmp, zSample) >= sizeof zDir ||
        !mkdtemp(zDir)) {
        fprintf(stderr, "gpu_check: mkdtemp %s: %s\n", zDir, strerror(errno));
        return 1;
    }
    azEnv = build_env(zLib, zCupti, zDir, vt__gpu_sample_env(zSample));
    if (!azEnv) {
        fprintf(stderr, "gpu_check: out of memory\n");
        goto done;
    }

    printf("gpu_%s: running %s under %s (trace in %s)\n", zSample, zBinary, zLib, zDir);
    pid = run_sample(zBinary, azEnv, zDir, timeout, &status);
    snprintf(zFile, sizeof zFile, "%s/stdout.txt", zDir);
    zStdout = read_text(zFile);
    snprintf(zFile, sizeof zFile, "%s/stderr.txt", zDir);
    zStderr = read_text(zFile);
    printf("-- sample stdout --\n%s-- sample stderr --\n%s--\n", zStdout ? zStdout : "",
           zStderr ? zStderr : "");
    if (pid < 0) goto done;
    if (vt__gpu_sample_signal(zSample)) { /* the sample kills itself: its trace was written meanwhile */
        if (!WIFSIGNALED(status) || WTERMSIG(status) != vt__gpu_sample_signal(zSample)) {
            fprintf(stderr, "gpu_check: the sample should have died of signal %d\n",
                    vt__gpu_sample_signal(zSample));
            goto done;
        }
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFSIGNALED(status))
            fprintf(stderr, "gpu_check: the sample died of signal %d\n", WTERMSIG(status));
        else
            fprintf(stderr, "gpu_check: the sample exited with status %d\n", WEXITSTATUS(status));
        goto done;
    }
    if (find_trace(zDir, pid, zTrace, sizeof zTrace) != 0) goto done;
    rc = verify_trace(zSample, zTrace, (long long)pid, zStdout ? zStdout : "");

done:
    free_env(azEnv);
    free(zStdout);
    free(zStderr);
    if (rc == 0 && !(getenv("VT_GPU_KEEP") && strcmp(getenv("VT_GPU_KEEP"), "1") == 0))
        remove_dir(zDir);
    else
        printf("gpu_%s: kept %s\n", zSample, zDir);
    fflush(stdout);
    return rc;
}
