/* Gigabyte snapshot benchmark: `vramtrace import` of a generated 1 GiB PyTorch snapshot and of the real ones, time and peak RSS against the goals. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "import.h"
#include "bench_util.h"

/*
 * The generated file comes from gen_snapshot (bench/gen_snapshot.c: PyTorch's format byte for byte,
 * a new traceback list per event over shared frame dicts, 26 to 77 frames deep), made once per size,
 * device count and seed under DIR and reused after. Each import runs in a child process: its CPU
 * time (user + system) and peak RSS (ru_maxrss) come from wait4, wall time from the clock. One
 * table puts every file side by side with the goals: at least 1 M events per CPU second, and a peak
 * RSS of at most 25 % of the file's size.
 *
 * usage: bench_bigsnap [-d DIR] [-s SIZE] [-n DEVICES] [-r RUNS] [-R REAL_DIR]
 *   defaults: DIR /tmp, SIZE 1G, DEVICES 1 and 4 (both measured when -n is not given), RUNS 1,
 *   REAL_DIR the real files' folder this build was configured with (VT_REAL_DATA), if any
 */

#define GOAL_RATE 1e6   /* events per CPU second */
#define GOAL_RSS 0.25   /* peak RSS / file size */

struct row {
    char zName[96];
    double mib, events, cpu, wall, rssMib;
    int ok;
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Import zIn to zOut in a child, nRuns times: the fastest run's figures (peak RSS: the largest). */
static void measure(const char *zIn, const char *zOut, int nRuns, struct row *r)
{
    struct stat st;
    r->ok = 0;
    if (stat(zIn, &st) != 0) return;
    r->mib = (double)st.st_size / 1048576.0;
    for (int i = 0; i < nRuns; i++) {
        int fd[2], status;
        double res[2] = {-1, 0}, t0 = now(), cpu;
        struct rusage ru;
        pid_t pid;
        if (pipe(fd) != 0) return;
        if ((pid = fork()) == 0) {
            struct vt_import_opts o = {1, 1};
            int64_t n = 0;
            close(fd[0]);
            res[0] = vt__import_one(zIn, VT_IMPORT_SNAPSHOT, -1, zOut, &o, &n) == 0 ? (double)n : -1;
            if (write(fd[1], res, sizeof res) != (ssize_t)sizeof res) _exit(1);
            _exit(0);
        }
        close(fd[1]);
        if (read(fd[0], res, sizeof res) != (ssize_t)sizeof res) res[0] = -1;
        close(fd[0]);
        if (wait4(pid, &status, 0, &ru) != pid || res[0] < 0) return;
        cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
              (double)ru.ru_stime.tv_usec / 1e6;
        if (!r->ok || cpu < r->cpu) {
            r->cpu = cpu;
            r->wall = now() - t0;
            r->events = res[0];
        }
        if ((double)ru.ru_maxrss / 1024.0 > r->rssMib) r->rssMib = (double)ru.ru_maxrss / 1024.0;
        r->ok = 1;
        unlink(zOut);
    }
}

/* Make (or reuse) the generated file for size zSize, nDev devices: its path in zPath. Returns 0 or -1. */
static int generated(const char *zDir, const char *zSize, int nDev, char *zPath, size_t nPath)
{
    char zCmd[16384], zSum[4200];
    struct stat st;
    double t0 = now();
    snprintf(zPath, nPath, "%s/vt_bigsnap_%s_d%d_s1.pickle", zDir, zSize, nDev);
    snprintf(zSum, sizeof zSum, "%s.summary", zPath);
    if (stat(zPath, &st) == 0 && stat(zSum, &st) == 0) return 0; /* made before: the summary is written last */
    snprintf(zCmd, sizeof zCmd, "'%s' -o '%s' --size '%s' --devices %d --seed 1 --summary '%s'", VT_BENCH_GEN, zPath,
             zSize, nDev, zSum);
    if (system(zCmd) != 0) {
        unlink(zSum);
        return -1;
    }
    printf("generated %s in %.1f s\n", zPath, now() - t0);
    return 0;
}

int main(int argc, char **argv)
{
    const char *zDir = "/tmp", *zSize = "1G", *zReal = VT_BENCH_REAL_DATA;
    static const char *const azReal[] = {"cs336_niu_fwd_bwd_200.pickle", "cs336_silmont2000_mem_snapshot_small.pickle",
                                         "flexgen_yiyi_oom_snapshot_v1format.pickle"};
    int nRuns = 1, nDev = 0, c, nRow = 0;
    struct row aRow[8];
    char zOut[4096], zLoad[16];
    memset(aRow, 0, sizeof aRow);
    while ((c = getopt(argc, argv, "d:s:n:r:R:")) != -1) {
        if (c == 'd') zDir = optarg;
        else if (c == 's') zSize = optarg;
        else if (c == 'n') nDev = atoi(optarg);
        else if (c == 'r') nRuns = atoi(optarg);
        else if (c == 'R') zReal = optarg;
        else {
            fprintf(stderr, "usage: bench_bigsnap [-d DIR] [-s SIZE] [-n DEVICES] [-r RUNS] [-R REAL_DIR]\n");
            return 2;
        }
    }
    if (nRuns < 1 || nDev < 0 || nDev > 64) {
        fprintf(stderr, "bench_bigsnap: RUNS >= 1, DEVICES 1 to 64\n");
        return 2;
    }
    snprintf(zOut, sizeof zOut, "%s/vt_bigsnap_%d.db", zDir, (int)getpid());
    for (int k = 0; k < 2; k++) {
        int d = nDev ? nDev : k ? 4 : 1;
        char zPath[4096];
        struct row *r = &aRow[nRow];
        if (nDev && k) break;
        if (generated(zDir, zSize, d, zPath, sizeof zPath) != 0) {
            fprintf(stderr, "bench_bigsnap: cannot generate %s: %s\n", zPath, strerror(errno));
            return 1;
        }
        snprintf(r->zName, sizeof r->zName, "generated %s, %d device%s", zSize, d, d > 1 ? "s" : "");
        measure(zPath, zOut, nRuns, r);
        nRow++;
    }
    for (size_t i = 0; zReal && zReal[0] && i < sizeof azReal / sizeof azReal[0]; i++) {
        char zPath[4096];
        snprintf(zPath, sizeof zPath, "%s/%s", zReal, azReal[i]);
        snprintf(aRow[nRow].zName, sizeof aRow[nRow].zName, "%.90s", azReal[i]);
        measure(zPath, zOut, nRuns, &aRow[nRow]);
        if (aRow[nRow].mib > 0) nRow++;
    }
    printf("\n%-44s %9s %10s %8s %8s %13s %9s %9s %10s\n", "file", "MiB", "events", "CPU s", "wall s",
           "M ev/CPU s", "(goal)", "peak MiB", "RSS/file");
    for (int i = 0; i < nRow; i++) {
        const struct row *r = &aRow[i];
        if (!r->ok) {
            printf("%-44s %9.1f   import failed\n", r->zName, r->mib);
            continue;
        }
        printf("%-44s %9.1f %10.0f %8.2f %8.2f %13.2f %9s %9.1f %9.1f%% %s%s\n", r->zName, r->mib, r->events, r->cpu,
               r->wall, r->events / r->cpu / 1e6, r->events / r->cpu >= GOAL_RATE ? ">= 1 met" : ">= 1 NOT",
               r->rssMib, 100 * r->rssMib / r->mib, 100 * r->rssMib / r->mib <= 100 * GOAL_RSS ? "<= 25% met" : "<= 25% NOT",
               r->mib < 64 ? " (small file: fixed costs dominate)" : "");
    }
    printf("load average %s, %d run%s each (fastest CPU time, largest RSS)\n", vt_bench_load_avg(zLoad, sizeof zLoad),
           nRuns, nRuns > 1 ? "s" : "");
    return 0;
}
