/* Import benchmark: `vramtrace import` speed on a generated PyTorch snapshot and Kineto trace, against their readers alone. */
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
#include <zlib.h>

#include "import.h"
#include "json.h"
#include "pickle.h"
#include "bench_util.h"

/*
 * The snapshot is written the way Python's pickler writes PyTorch's (protocol
 * 4): every dict and list memoized, keys and action names memoized once and
 * fetched again with BINGET/LONG_BINGET, 64 traceback lists of 24 frames each
 * shared by the events (PyTorch deduplicates tracebacks), events appended in
 * batches of 1000. Events: an allocation per step on one of 512 slots, the
 * slot's previous block first freed (free_requested, free_completed), so the
 * live set stays bounded. The Kineto trace holds [memory] events with Addr
 * (alloc and free), kernels and copies in the proportions of a training step.
 *
 * Each measurement runs in a child process (CPU time and peak RSS from wait4): the full
 * import (read, write the trace, order, commit) and the reader alone (the
 * unpickler claiming every event, the JSON reader reading every event tree),
 * the ceiling the import can approach. The goal (docs/performance.md): at
 * least 1 M events/s for both. Each file is measured plain and gzip'd (zlib
 * level 1), and a closing table puts the rates and their ratios side by side.
 *
 * Usage: bench_import [-r RUNS] [-d DIR] [-k] [EVENTS]   (default 3 runs, 1000000 events, DIR /tmp;
 * -k keeps the generated plain files, to profile `vramtrace import` on them)
 */

/* ---- a pickle writer (the subset PyTorch's snapshots use) ---- */

struct pw {
    FILE *f;
    uint32_t nMemo;
};

static void memoize(struct pw *w)
{
    fputc(0x94, w->f);
    w->nMemo++;
}

static void get(struct pw *w, uint32_t i)
{
    if (i < 256) {
        fputc('h', w->f);
        fputc((int)i, w->f);
    } else {
        fputc('j', w->f);
        for (int k = 0; k < 4; k++) fputc((int)(i >> (8 * k) & 0xff), w->f);
    }
}

/* A string, memoized the first time (*pMemo 0 means "not yet"; memo indexes are stored + 1). */
static void str(struct pw *w, const char *z, uint32_t *pMemo)
{
    size_t n = strlen(z);
    if (pMemo && *pMemo) {
        get(w, *pMemo - 1);
        return;
    }
    fputc(0x8c, w->f); /* SHORT_BINUNICODE */
    fputc((int)n, w->f);
    fwrite(z, 1, n, w->f);
    if (pMemo) *pMemo = w->nMemo + 1;
    memoize(w);
}

static void integer(struct pw *w, int64_t v)
{
    if (v >= 0 && v < 256) {
        fputc('K', w->f);
        fputc((int)v, w->f);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        fputc('J', w->f);
        for (int k = 0; k < 4; k++) fputc((int)((uint64_t)v >> (8 * k) & 0xff), w->f);
    } else {
        fputc(0x8a, w->f); /* LONG1, 8 bytes */
        fputc(8, w->f);
        for (int k = 0; k < 8; k++) fputc((int)((uint64_t)v >> (8 * k) & 0xff), w->f);
    }
}

enum { K_ACTION, K_ADDR, K_SIZE, K_STREAM, K_TIME, K_FRAMES, K_NAME, K_FILE, K_LINE, K_ALLOC, K_FREEREQ, K_FREE, K_N };
static const char *const azKey[K_N] = {"action", "addr", "size", "stream", "time_us", "frames", "name", "filename",
                                       "line", "alloc", "free_requested", "free_completed"};

#define NFRAMES 64
#define DEPTH 24
#define SLOTS 512

/* Write a snapshot with about nEvents events to zPath. Returns the event count, -1 on failure. */
static int64_t make_snapshot(const char *zPath, int64_t nEvents)
{
    struct pw w = {fopen(zPath, "wb"), 0};
    uint32_t aKey[K_N] = {0}, aFrames[NFRAMES] = {0};
    int64_t aLive[SLOTS] = {0}, n = 0, t = 1700000000000000LL;
    int inBatch = 0;
    if (!w.f) return -1;
    fputs("\x80\x04", w.f);
    fputc('}', w.f), memoize(&w), fputc('(', w.f);
    str(&w, "segments", NULL), fputc(']', w.f), memoize(&w);
    str(&w, "device_traces", NULL), fputc(']', w.f), memoize(&w); /* one device: APPEND at the end */
    fputc(']', w.f), memoize(&w), fputc('(', w.f);
    for (int64_t i = 0; n < nEvents; i++) {
        int slot = (int)(i % SLOTS);
        int nKind = aLive[slot] ? 3 : 1;
        for (int e = 0; e < nKind; e++) {
            int kind = nKind == 1 ? K_ALLOC : e == 0 ? K_FREEREQ : e == 1 ? K_FREE : K_ALLOC;
            int64_t addr = kind == K_ALLOC ? 0x7f0000000000LL + (i << 20) % (1LL << 36) : aLive[slot];
            int fr = (int)(i * 7 % NFRAMES);
            if (inBatch == 1000) {
                fputs("e(", w.f);
                inBatch = 0;
            }
            fputc('}', w.f), memoize(&w), fputc('(', w.f);
            str(&w, azKey[K_ACTION], &aKey[K_ACTION]), str(&w, azKey[kind], &aKey[kind]);
            str(&w, azKey[K_ADDR], &aKey[K_ADDR]), integer(&w, addr);
            str(&w, azKey[K_SIZE], &aKey[K_SIZE]), integer(&w, 512 * (1 + slot % 64));
            str(&w, azKey[K_STREAM], &aKey[K_STREAM]), integer(&w, 0);
            str(&w, azKey[K_TIME], &aKey[K_TIME]), integer(&w, t++);
            str(&w, azKey[K_FRAMES], &aKey[K_FRAMES]);
            if (aFrames[fr]) {
                get(&w, aFrames[fr] - 1);
            } else { /* a new traceback: a list of frame dicts */
                char z[64];
                fputc(']', w.f), aFrames[fr] = w.nMemo + 1, memoize(&w), fputc('(', w.f);
                for (int d = 0; d < DEPTH; d++) {
                    fputc('}', w.f), memoize(&w), fputc('(', w.f);
                    snprintf(z, sizeof z, "function_%d_%d", fr, d);
                    str(&w, azKey[K_NAME], &aKey[K_NAME]), str(&w, z, NULL);
                    snprintf(z, sizeof z, d % 2 ? "/src/model_%d.py" : "module_%d.cpp", d);
                    str(&w, azKey[K_FILE], &aKey[K_FILE]), str(&w, z, NULL);
                    str(&w, azKey[K_LINE], &aKey[K_LINE]), integer(&w, d * 10 + fr);
                    fputc('u', w.f);
                }
                fputc('e', w.f);
            }
            fputc('u', w.f);
            inBatch++;
            n++;
            if (kind == K_ALLOC) aLive[slot] = addr;
        }
    }
    fputs("ea", w.f);                 /* the last batch into the device's list, that list into device_traces */
    fputs("u.", w.f);                 /* the root's items */
    if (fclose(w.f) != 0) return -1;
    return n;
}

/* Write a Kineto trace with about nEvents events. Returns the event count, -1 on failure. */
static int64_t make_kineto(const char *zPath, int64_t nEvents)
{
    FILE *f = fopen(zPath, "wb");
    int64_t aLive[SLOTS] = {0}, n = 0;
    double ts = 1000.0;
    if (!f) return -1;
    fputs("{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"Bench GPU\", \"totalGlobalMem\": "
          "85899345920}], \"baseTimeNanoseconds\": 1700000000000000000, \"traceEvents\": [\n",
          f);
    for (int64_t i = 0; n < nEvents; i++) {
        int slot = (int)(i % SLOTS);
        if (i % 10 < 5) { /* memory: free the slot's block, or allocate one */
            int64_t bytes = 512 * (1 + slot % 64);
            if (aLive[slot]) {
                fprintf(f, "%s{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\","
                           " \"pid\": 1, \"tid\": 1, \"ts\": %.3f, \"args\": {\"Device Type\": 1, \"Device Id\": 0,"
                           " \"Addr\": %lld, \"Bytes\": %lld, \"Total Allocated\": 0, \"Total Reserved\": 0}}",
                        n ? ",\n" : "", ts, (long long)aLive[slot], (long long)-bytes);
                aLive[slot] = 0;
            } else {
                aLive[slot] = 0x7f0000000000LL + (i << 20) % (1LL << 36);
                fprintf(f, "%s{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\","
                           " \"pid\": 1, \"tid\": 1, \"ts\": %.3f, \"args\": {\"Device Type\": 1, \"Device Id\": 0,"
                           " \"Addr\": %lld, \"Bytes\": %lld, \"Total Allocated\": 0, \"Total Reserved\": 0}}",
                        n ? ",\n" : "", ts, (long long)aLive[slot], (long long)bytes);
            }
        } else if (i % 10 < 9) {
            fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void gemm_kernel_%d<float>(float*)\","
                       " \"pid\": 0, \"tid\": 7, \"ts\": %.3f, \"dur\": 3.5, \"args\": {\"device\": 0, \"context\": 1,"
                       " \"stream\": 7, \"correlation\": %lld, \"registers per thread\": 32, \"grid\": [64, 1, 1],"
                       " \"block\": [128, 1, 1]}}",
                    n ? ",\n" : "", (int)(i % 50), ts, (long long)i);
        } else {
            fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pinned -> Device)\","
                       " \"pid\": 0, \"tid\": 7, \"ts\": %.3f, \"dur\": 12.0, \"args\": {\"device\": 0,"
                       " \"stream\": 7, \"correlation\": %lld, \"bytes\": 1048576}}",
                    n ? ",\n" : "", ts, (long long)i);
        }
        ts += 1.25;
        n++;
    }
    fputs("\n]}\n", f);
    return fclose(f) == 0 ? n : -1;
}

/* Write zIn gzip'd (level 1) to zOut. Returns 0 or -1. */
static int gzip_copy(const char *zIn, const char *zOut)
{
    static char aBuf[1 << 16];
    FILE *f = fopen(zIn, "rb");
    gzFile g = f ? gzopen(zOut, "wb1") : NULL;
    size_t n;
    int rc = f && g ? 0 : -1;
    while (rc == 0 && (n = fread(aBuf, 1, sizeof aBuf, f)) > 0)
        if (gzwrite(g, aBuf, (unsigned)n) != (int)n) rc = -1;
    if (f && ferror(f)) rc = -1;
    if (g && gzclose(g) != Z_OK) rc = -1;
    if (f) fclose(f);
    return rc;
}

/* ---- the measurements ---- */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int claim_all(void *pArg, struct vt_pkobj *pParent, const struct vt_pkval *pKey, struct vt_pkval *pChild)
{
    (void)pKey;
    if (pParent->type != VT_PK_LIST || pChild->type != VT_PK_DICT || !vt__pk_get(pChild, "action")) return VT_PK_KEEP;
    ++*(int64_t *)pArg;
    return VT_PK_CLAIM;
}

/* In the child: one measurement; writes events and seconds to fd. */
static void measure(const char *zIn, int fmt, int bReaderOnly, const char *zOut, int fd)
{
    double t0 = now(), r[2];
    int64_t n = 0;
    struct vt__src s;
    if (!bReaderOnly) {
        struct vt_import_opts o = {1, 1};
        if (vt__import_one(zIn, fmt, -1, zOut, &o, &n) != 0) n = -1;
    } else if (fmt == VT_IMPORT_SNAPSHOT) {
        struct vt_pk *p;
        struct vt_pkval root;
        vt__src_open_file(&s, zIn);
        p = vt__pk_new(&s, claim_all, &n);
        if (vt__pk_run(p, &root) != VT_PK_OK) n = -1;
        vt__pk_free(p);
        vt__src_close(&s);
    } else {
        struct vt_js *j;
        struct vt_jtree t = {0};
        int tok;
        vt__src_open_file(&s, zIn);
        j = vt__js_new(&s);
        while ((tok = vt__js_next(j)) > 0)
            if (tok == VT_JS_OBJECT && vt__js_depth(j) == 3 && vt__js_read_tree(j, tok, &t) == 0) n++;
        if (tok != VT_JS_EOF) n = -1;
        vt__jtree_free(&t);
        vt__js_free(j);
        vt__src_close(&s);
    }
    r[0] = (double)n;
    r[1] = now() - t0;
    if (write(fd, r, sizeof r) != (ssize_t)sizeof r) _exit(1);
    _exit(0);
}

/*
 * Run one measurement in a child: events per CPU second (user + system of the child, steady on a
 * shared machine), wall time and peak RSS (MiB), best of nRuns.
 */
static void run(const char *zWhat, const char *zIn, int fmt, int bReaderOnly, const char *zOut, int nRuns,
                double *pRate)
{
    double best = 0, rss = 0, n = 0, sec = 0, wall = 0;
    char zLoad[16];
    for (int i = 0; i < nRuns; i++) {
        int fd[2], st;
        double r[2] = {-1, 0};
        struct rusage ru;
        pid_t pid;
        if (pipe(fd) != 0) return;
        if ((pid = fork()) == 0) {
            close(fd[0]);
            measure(zIn, fmt, bReaderOnly, zOut, fd[1]);
        }
        close(fd[1]);
        if (read(fd[0], r, sizeof r) != (ssize_t)sizeof r) r[0] = -1;
        close(fd[0]);
        wait4(pid, &st, 0, &ru);
        if (r[0] <= 0 || r[1] <= 0) {
            printf("  %-28s failed\n", zWhat);
            return;
        }
        {
            double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                         (double)ru.ru_stime.tv_usec / 1e6;
            if (cpu > 0 && r[0] / cpu > best) {
                best = r[0] / cpu;
                n = r[0];
                sec = cpu;
                wall = r[1];
            }
        }
        if ((double)ru.ru_maxrss / 1024.0 > rss) rss = (double)ru.ru_maxrss / 1024.0;
    }
    printf("  %-20s %9.0f events, %6.3f s CPU (%6.3f s wall): %5.2f M events/s per CPU second, peak RSS %6.1f MiB"
           "   [load %s]\n",
           zWhat, n, sec, wall, best / 1e6, rss, vt_bench_load_avg(zLoad, sizeof zLoad));
    *pRate = best;
}

int main(int argc, char **argv)
{
    const char *zDir = "/tmp";
    int nRuns = 3, c, bKeep = 0;
    int64_t nWant = 1000000;
    char zSnap[4096], zKin[4096], zOut[4096];
    double aRate[2][2][2] = {{{0}}}; /* [snapshot, Kineto][plain, gzip][reader, import]: events per CPU second */
    while ((c = getopt(argc, argv, "r:d:k")) != -1) {
        if (c == 'k') bKeep = 1;
        else if (c == 'r') nRuns = atoi(optarg);
        else if (c == 'd') zDir = optarg;
        else {
            fprintf(stderr, "usage: bench_import [-r RUNS] [-d DIR] [-k] [EVENTS]\n");
            return 2;
        }
    }
    if (optind < argc) nWant = strtoll(argv[optind], NULL, 10);
    if (nRuns < 1 || nWant < 1000) {
        fprintf(stderr, "bench_import: RUNS >= 1 and EVENTS >= 1000\n");
        return 2;
    }
    snprintf(zSnap, sizeof zSnap, "%s/bench_import_%lld.pickle", zDir, (long long)nWant);
    snprintf(zKin, sizeof zKin, "%s/bench_import_%lld.json", zDir, (long long)nWant);
    snprintf(zOut, sizeof zOut, "%s/bench_import_%d.db", zDir, (int)getpid());
    for (int k = 0; k < 2; k++) {
        const char *zIn = k ? zKin : zSnap;
        int fmt = k ? VT_IMPORT_KINETO : VT_IMPORT_SNAPSHOT;
        char zGz[4200];
        struct stat st;
        double t0 = now();
        int64_t n = k ? make_kineto(zIn, nWant) : make_snapshot(zIn, nWant);
        if (n < 0 || stat(zIn, &st) != 0) {
            fprintf(stderr, "bench_import: cannot write %s: %s\n", zIn, strerror(errno));
            return 1;
        }
        printf("%s: %lld events, %.1f MiB, generated in %.1f s\n", k ? "Kineto trace (JSON)" : "PyTorch snapshot",
               (long long)n, (double)st.st_size / 1048576.0, now() - t0);
        snprintf(zGz, sizeof zGz, "%s.gz", zIn);
        for (int z = 0; z < 2; z++) {
            const char *zFile = z ? zGz : zIn;
            if (z) {
                if (gzip_copy(zIn, zGz) != 0 || stat(zGz, &st) != 0) {
                    fprintf(stderr, "bench_import: cannot write %s\n", zGz);
                    return 1;
                }
                printf(" gzip'd: %.1f MiB\n", (double)st.st_size / 1048576.0);
            } else {
                printf(" plain:\n");
            }
            run(k ? "JSON reader alone" : "unpickler alone", zFile, fmt, 1, zOut, nRuns, &aRate[k][z][0]);
            run("vramtrace import", zFile, fmt, 0, zOut, nRuns, &aRate[k][z][1]);
            if (z) unlink(zGz);
            unlink(zOut);
        }
        if (!bKeep) unlink(zIn);
    }
    /* the figures side by side: M events/s per CPU second and their ratios */
    printf("\n%-20s %8s %8s %14s %14s\n", "M events/s per CPU s", "reader", "import", "import/reader",
           "import/goal");
    for (int k = 0; k < 2; k++)
        for (int z = 0; z < 2; z++) {
            double r = aRate[k][z][0], m = aRate[k][z][1];
            printf("%-9s %-10s %8.2f %8.2f %14.2f %14.2f\n", k ? "Kineto" : "snapshot", z ? "gzip" : "plain", r / 1e6,
                   m / 1e6, r > 0 ? m / r : 0, m / 1e6);
        }
    for (int z = 0; z < 2; z++)
        printf("gzip/plain import: %s %.2f\n", z ? "Kineto  " : "snapshot",
               aRate[z][0][1] > 0 ? aRate[z][1][1] / aRate[z][0][1] : 0);
    printf("Kineto/snapshot import: plain %.2f, gzip %.2f\n",
           aRate[0][0][1] > 0 ? aRate[1][0][1] / aRate[0][0][1] : 0,
           aRate[0][1][1] > 0 ? aRate[1][1][1] / aRate[0][1][1] : 0);
    return 0;
}
