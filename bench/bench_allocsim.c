/* Allocator replay benchmark: what would fit's bisection (allocsim.c) on generated streams of 1 M and 4 M lifetimes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "analysis/analysis.h"
#include "bench_util.h"

/*
 * Usage: bench_allocsim [N ...] (lifetimes, default 1000000 and 4000000; at most VT_FS_MAX).
 * The stream is a training job's: 64 parameters kept, then steps each making 200 activations of
 * drawn sizes (16 KiB to 64 MiB, a tenth through the small pool), freed in reverse with a
 * temporary between each pair, through the caching allocator; the fit is asked for the largest
 * batch of 1024 that fits beside them in 80 GiB, from a first guess a fifth short. Prints the
 * replays, the time per replay and in all, the fit's memory (61 bytes a lifetime) and whether the work
 * bound (VT_FS_FIT_WORK lifetimes replayed in all) left the answer an estimate ("< H": the first failure
 * is at most batch H; "open": none failed within it); then the least
 * memory the traced batch needs with the segment model and with expandable segments (vt__fs_need,
 * what the expandable saving costs): replays, seconds and whether the work bound made it an estimate.
 * Never asserts a time.
 */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The stream of about n lifetimes into t (seeded, the same each run). */
static void make_stream(struct vt_trace *t, int64_t n)
{
    struct vt_life l, aAct[200];
    int64_t seq = 0, made = 0;
    uint64_t x = 88172645463325252ull;
    memset(&l, 0, sizeof l);
    l.acct = 0;
    l.bTensor = 1;
    for (int i = 0; i < 64; i++, made++) {
        l.bytes = (int64_t)64 << 20;
        l.bdSeq = ++seq;
        l.status = VT_LIFE_LIVE_AT_END;
        l.site = 0;
        vt__fs_add(t, &l, ++seq, 0);
    }
    while (made < n) {
        for (int i = 0; i < 200; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            aAct[i] = l;
            aAct[i].bytes = x % 10 == 0 ? (int64_t)(16 << 10) + (int64_t)(x >> 8) % (1 << 20)
                                        : ((int64_t)1 << 20) + (int64_t)(x >> 8) % ((int64_t)63 << 20);
            aAct[i].bdSeq = ++seq;
            aAct[i].site = 1 + i;
            aAct[i].status = VT_LIFE_FREED;
        }
        for (int i = 199; i >= 0 && made < n; i--) {
            struct vt_life tmp = aAct[i];
            tmp.bdSeq = ++seq;
            tmp.bytes /= 2;
            vt__fs_add(t, &tmp, ++seq, 1);
            vt__fs_add(t, &aAct[i], ++seq, 1);
            made += 2;
        }
    }
}

int main(int argc, char **argv)
{
    int64_t aN[8] = {1000000, 4000000};
    int nN = 2;
    char zLoad[16];
    if (argc > 1) {
        nN = 0;
        for (int i = 1; i < argc && nN < 8; i++) aN[nN++] = atoll(argv[i]);
    }
    printf("%-10s %8s %10s %12s %10s %10s %12s %12s %10s %14s  load %s\n", "lifetimes", "replays", "s/replay",
           "s in all", "fit MB", "max batch", "fit bounded", "need replays", "need s", "need bounded",
           vt_bench_load_avg(zLoad, sizeof zLoad));
    for (int k = 0; k < nN; k++) {
        struct vt_trace t;
        struct vt_fsconfig cfg;
        struct vt_fsresult res;
        double t0, t1;
        int rc;
        memset(&t, 0, sizeof t);
        memset(&cfg, 0, sizeof cfg);
        make_stream(&t, aN[k]);
        t0 = now_s();
        rc = vt__fs_fit(&t, 0, &cfg, (int64_t)80 << 30, 1024, 8.0, &res); /* a guess a fifth short */
        t1 = now_s();
        if (rc != 0) {
            printf("%-10lld replay failed (%d)\n", (long long)aN[k], rc);
        } else {
            struct vt_fsneed nB, nE;
            struct vt_fsconfig cfgE = cfg;
            double t2, t3;
            int rcB, rcE;
            cfgE.bExpandable = 1;
            t2 = now_s();
            rcB = vt__fs_need(&t, 0, &cfg, (int64_t)80 << 30, &nB);
            rcE = vt__fs_need(&t, 0, &cfgE, (int64_t)80 << 30, &nE);
            t3 = now_s();
            char zHi[32] = "no";
            if (res.bBounded) snprintf(zHi, sizeof zHi, "< %lld", (long long)res.hiBatch);
            printf("%-10lld %8d %10.3f %12.3f %10.1f %10lld %12s", (long long)aN[k], res.nReplay,
                   (t1 - t0) / res.nReplay, t1 - t0, (double)aN[k] * 61 / 1e6, (long long)res.maxBatch,
                   res.bBounded ? (res.hiBatch > 0 ? zHi : "open") : "no");
            if (rcB != 0 || rcE != 0) printf(" %12s %10s %14s\n", "not run", "-", rcB == 1 || rcE == 1 ? "too large" : "-");
            else
                printf(" %5d + %-4d %10.3f %6s %7s\n", nB.nReplay, nE.nReplay, t3 - t2, nB.bBounded ? "yes" : "no",
                       nE.bBounded ? "yes" : "no");
        }
        vt__fs_free(&t);
    }
    return 0;
}
