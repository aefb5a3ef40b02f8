/* Export benchmark: `vramtrace export` of one trace, plain and --gzip: bytes per event and events/s. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench_util.h"

/*
 * Usage: bench_export [-r RUNS] [-d DIR] [TRACE]
 * TRACE defaults to the 1 M event trace that `bench_analyzer 1000000` generates and caches in
 * DIR (default /tmp). Each form is exported RUNS times (default 3) to DIR; the median wall and
 * CPU time are printed with the file's size per event: per JSON event (every object of
 * traceEvents, counted in the plain file: one a line) and per trace row the export read (its own
 * count: kernels, copies, memsets, NVTX, allocations, frees, OOMs). The vramtrace command used is
 * the one built beside this benchmark (VT_BENCH_VRAMTRACE), or $VRAMTRACE_BIN.
 */
#define MAX_RUNS 15
#define DEFAULT_TRACE "vt_bench_analyzer_v4_l40_p200_e1000000.db" /* bench_analyzer.c GEN_VERSION 4 */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct run {
    double wall, cpu;
    long long nEvent; /* events the export reported writing */
    int status;
};

/* The sum of the counts in the export's summary line ("wrote X: 3 kernels, 4 copies, ..."). */
static long long summary_events(const char *zFile)
{
    char z[1024], *p;
    long long n = 0;
    FILE *f = fopen(zFile, "r");
    if (!f) return 0;
    while (fgets(z, sizeof z, f)) {
        if (!strstr(z, ": wrote ") || !(p = strstr(z + 18, ": "))) continue;
        for (p += 2; *p;) {
            char *zEnd;
            long long v = strtoll(p, &zEnd, 10);
            if (zEnd == p) break;
            n += v;
            p = strchr(zEnd, ',');
            if (!p) break;
            p += 2;
        }
    }
    fclose(f);
    return n;
}

/* Run `vramtrace export [--gzip] --perfetto zOut zTrace`, its stderr to zErr. Returns 0 or -1. */
static int run_export(const char *zBin, const char *zTrace, const char *zOut, const char *zErr, int bGzip, struct run *r)
{
    char *azArgv[] = {(char *)zBin, "export", "--perfetto", (char *)zOut, (char *)zTrace, NULL, NULL};
    struct rusage ru;
    int status = 0;
    double t0 = now_s();
    pid_t pid;
    if (bGzip) {
        azArgv[5] = azArgv[4], azArgv[4] = azArgv[3], azArgv[3] = azArgv[2];
        azArgv[2] = "--gzip";
    }
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (!freopen(zErr, "w", stderr)) _exit(126);
        execv(zBin, azArgv);
        _exit(127);
    }
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) return -1;
    r->wall = now_s() - t0;
    r->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
             (double)ru.ru_stime.tv_usec * 1e-6;
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r->nEvent = summary_events(zErr);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *a, int n)
{
    qsort(a, (size_t)n, sizeof *a, cmp_double);
    return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

/* The JSON events of a plain export: its lines less the opening and closing ones; -1 if unreadable. */
static long long json_events(const char *zPath)
{
    char aBuf[1 << 16];
    long long n = -2;
    size_t k;
    FILE *f = fopen(zPath, "r");
    if (!f) return -1;
    while ((k = fread(aBuf, 1, sizeof aBuf, f)) > 0)
        for (size_t i = 0; i < k; i++) n += aBuf[i] == '\n';
    fclose(f);
    return n;
}

/*
 * Measure one form nRuns times and print its line; *pnJson: the plain form's JSON events, counted
 * when bGzip is 0, used by both. Returns 0 or -1.
 */
static int measure(const char *zBin, const char *zTrace, const char *zDir, int bGzip, int nRuns, long long *pnJson,
                   double *pBytes)
{
    char zOut[4096], zErr[4096], zLoad[16];
    double aWall[MAX_RUNS], aCpu[MAX_RUNS], wall, cpu;
    long long nEvent = 0;
    struct stat st;
    snprintf(zOut, sizeof zOut, "%s/vt_bench_export%s", zDir, bGzip ? ".json.gz" : ".json");
    snprintf(zErr, sizeof zErr, "%s/vt_bench_export.err", zDir);
    for (int i = 0; i < nRuns; i++) {
        struct run r = {0, 0, 0, -1};
        if (run_export(zBin, zTrace, zOut, zErr, bGzip, &r) != 0 || r.status != 0 || r.nEvent <= 0) {
            fprintf(stderr, "bench_export: %s export %s failed (status %d; see %s)\n", zBin, zTrace, r.status, zErr);
            return -1;
        }
        aWall[i] = r.wall;
        aCpu[i] = r.cpu;
        nEvent = r.nEvent;
    }
    if (stat(zOut, &st) != 0) return -1;
    wall = median(aWall, nRuns);
    cpu = median(aCpu, nRuns);
    if (!bGzip) *pnJson = json_events(zOut);
    if (*pnJson <= 0) return -1;
    printf("  %-20s %8.1f MB  %6.1f bytes/JSON event  %6.1f bytes/row  %5.2f M rows/s  %5.2f s wall  %5.2f s CPU"
           "   [load %s]\n",
           bGzip ? "export --gzip" : "export (plain JSON)", st.st_size / 1e6, (double)st.st_size / (double)*pnJson,
           (double)st.st_size / (double)nEvent, nEvent / wall / 1e6, wall, cpu, vt_bench_load_avg(zLoad, sizeof zLoad));
    *pBytes = (double)st.st_size;
    unlink(zOut);
    unlink(zErr);
    return 0;
}

int main(int argc, char **argv)
{
    const char *zBin = getenv("VRAMTRACE_BIN"), *zDir = "/tmp", *zTrace = NULL;
    char zDefault[4096];
    double plain = 0, gz = 0;
    long long nJson = 0;
    int nRuns = 3;
#ifdef VT_BENCH_VRAMTRACE
    if (!zBin || !*zBin) zBin = VT_BENCH_VRAMTRACE;
#endif
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-r") && i + 1 < argc) nRuns = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-d") && i + 1 < argc) zDir = argv[++i];
        else if (argv[i][0] != '-' && !zTrace) zTrace = argv[i];
        else {
            fprintf(stderr, "usage: bench_export [-r RUNS] [-d DIR] [TRACE]\n");
            return 2;
        }
    }
    if (nRuns < 1 || nRuns > MAX_RUNS) nRuns = 3;
    if (!zBin || access(zBin, X_OK) != 0) {
        fprintf(stderr, "bench_export: vramtrace command not found (set VRAMTRACE_BIN)\n");
        return 1;
    }
    if (!zTrace) {
        snprintf(zDefault, sizeof zDefault, "%s/%s", zDir, DEFAULT_TRACE);
        zTrace = zDefault;
    }
    if (access(zTrace, R_OK) != 0) {
        fprintf(stderr, "bench_export: %s: %s (run `bench_analyzer 1000000` to generate it, or name a trace)\n",
                zTrace, strerror(errno));
        return 1;
    }
    printf("bench_export: %s export --perfetto OUT %s (%d runs each, median)\n", zBin, zTrace, nRuns);
    if (measure(zBin, zTrace, zDir, 0, nRuns, &nJson, &plain) != 0 ||
        measure(zBin, zTrace, zDir, 1, nRuns, &nJson, &gz) != 0)
        return 1;
    printf("  (%lld JSON events: kernels, copies, memsets, NVTX, allocation/free instants, counters, metadata)\n",
           nJson);
    printf("  --gzip / plain: %.1f %% of the size (goal <= 40 bytes/event)\n", 100.0 * gz / plain);
    return 0;
}
