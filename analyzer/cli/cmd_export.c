/* The 'export' subcommand: traces as Chrome trace-event JSON for the Perfetto UI, as CSV tables, or as a PyTorch memory snapshot. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if VT_HAVE_ZLIB
#include <zlib.h>
#endif

#include "cli.h"
#include "export.h"
#include "util/cleanup.h"
#include "util/opts.h"
#include "util/text.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vramtrace export [--from T] [--to T] [--gzip] [--debug-dir DIR] --perfetto OUT.json TRACE...\n"
            "       vramtrace export --csv DIR TRACE...\n"
            "       vramtrace export --snapshot OUT.pickle TRACE\n\n"
            "Write one Chrome trace-event JSON file (open it at https://ui.perfetto.dev or in\n"
            "chrome://tracing): one process per trace, a track per GPU stream with kernels,\n"
            "copies and memsets, NVTX ranges on their host thread, a live-bytes counter per\n"
            "device and memory kind, live bytes by site and by the breakdown's category\n"
            "(as analyze reports the peak), allocation and free instants with size, address\n"
            "and call site, and OOM instants. OUT.json '-' writes to standard output. Rows are\n"
            "streamed, so traces larger than memory export. Unknown values are left out, and\n"
            "rows of unknown time from every track and counter, by category too (how many is\n"
            "said; memory made before a history that starts late is on the counters from its\n"
            "start). A TRACE may be another tool's file, a directory of traces (record -o DIR/) or -\n"
            "(standard input). See docs/queries.md.\n\n"
            "  --from T, --to T  only events overlapping this window; T is a time from the first\n"
            "                    event (the 0 of analyze's and info's times too: a window they print\n"
            "                    can be pasted): seconds (2.5) or with a unit (250ms, 40us, 100ns,\n"
            "                    1.5min); times in the file stay relative to that 0\n"
            "  --debug-dir DIR   separate debug files for native frames (DIR/.build-id/xx/rest.debug)\n"
            "  --gzip            compress the file with gzip (about 14x smaller; the Perfetto UI\n"
            "                    opens it as it is)\n"
            "  --csv DIR         instead: one CSV file per table in DIR (memory_event, tensor_event\n"
            "                    where a trace has tensor rows, kernel, memcpy, memset, nvtx_range,\n"
            "                    api_call, oom_event, device, meta),\n"
            "                    every trace's rows with trace (its path as given, - for standard\n"
            "                    input), pid and rank first: for joining\n"
            "                    hundreds of ranks in DuckDB (docs/queries.md)\n"
            "  --snapshot OUT.pickle  instead: one trace as a PyTorch memory snapshot (the format of\n"
            "                    torch.cuda.memory._snapshot()) for PyTorch's memory_viz: the\n"
            "                    allocator's blocks in their segments where the trace has both levels,\n"
            "                    else each device allocation a segment with one block; call stacks as\n"
            "                    frames, OOMs as oom events; memory from before a history that starts\n"
            "                    late only in the dump, as PyTorch writes it (import finds it so\n"
            "                    again); any trace, imports included (docs/cli.md)\n\n"
            "Exit codes: 0 ok, 2 bad arguments, 3 trace missing or output not writable,\n"
            "4 not a trace, 5 newer trace, 6 damaged trace, 7 internal error, 9 some of several\n"
            "traces could not be read (each is named; the others are exported).\n");
}

#if VT_HAVE_ZLIB
/* gzip output behind a FILE: the exporter writes with stdio, zlib compresses underneath. */
static ssize_t gz_write(void *pCookie, const char *z, size_t n)
{
    int w = n ? gzwrite((gzFile)pCookie, z, (unsigned)n) : 0;
    return w > 0 || n == 0 ? (ssize_t)w : -1;
}

static int gz_close(void *pCookie)
{
    return gzclose((gzFile)pCookie) == Z_OK ? 0 : EOF;
}

/*
 * A FILE writing gzip to the open descriptor of f, which it takes over: on success f is
 * to be forgotten (closing the result closes the descriptor and ends the gzip stream); on
 * failure NULL, and f is untouched.
 */
static FILE *gz_over(FILE *f)
{
    static const cookie_io_functions_t io = {NULL, gz_write, NULL, gz_close};
    gzFile gz;
    FILE *g;
    int fd;
    if (fflush(f) != 0 || (fd = dup(fileno(f))) < 0) return NULL;
    gz = gzdopen(fd, "wb1"); /* fastest level: ~18 bytes/event, half the CPU of level 6 */
    if (!gz) {
        close(fd);
        return NULL;
    }
    gzbuffer(gz, 1 << 17);
    g = fopencookie(gz, "w", io);
    if (!g) gzclose(gz);
    return g;
}
#else
/* Built without zlib: no gzip output (export refuses --gzip before it gets here). */
static FILE *gz_over(FILE *f)
{
    (void)f;
    errno = ENOSYS;
    return NULL;
}
#endif

enum { O_OUT = 1, O_FROM, O_TO, O_GZIP, O_CSV, O_DEBUGDIR, O_SNAPSHOT };

/* An empty window: say so, with how long the traces last (the window counts from their start). */
static void window_note(int nTrace, const struct vt_tracefile *aF, const struct vt_export_opts *o)
{
    char zFrom[32] = "the start", zTo[32] = "the end", zDur[32] = "no time";
    int64_t dur = -1;
    for (int i = 0; i < nTrace; i++) /* to the last event, from the one origin (figures.h) */
        if (aF[i].bTimes && vt__fig_at(&aF[i], aF[i].t1) > dur) dur = vt__fig_at(&aF[i], aF[i].t1);
    if (o->bFrom) vt__fmt_ns(o->from, zFrom, sizeof zFrom);
    if (o->bTo) vt__fmt_ns(o->to, zTo, sizeof zTo);
    if (dur >= 0) vt__fmt_ns(dur, zDur, sizeof zDur);
    if (dur < 0) { /* nothing to place in a window (an imported snapshot of the state at its dump) */
        vt__errorf("export: note: no event lies between %s and %s; no event of the trace%s has a known time, so no "
                   "window holds any", zFrom, zTo, nTrace == 1 ? "" : "s");
        return;
    }
    vt__errorf("export: note: no event lies between %s and %s; the trace%s last%s %s from %s first event",
               zFrom, zTo, nTrace == 1 ? "" : "s", nTrace == 1 ? "s" : "", zDur, nTrace == 1 ? "its" : "their");
}

int vt__cmd_export(int argc, char **argv)
{
    const char *zOut = NULL;
    static const struct vt_opt aOpt[] = {{"perfetto", 0, 1, O_OUT}, {"chrome", 0, 1, O_OUT}, {"output", 'o', 1, O_OUT},
                                         {"from", 0, 1, O_FROM},     {"to", 0, 1, O_TO},       {"gzip", 0, 0, O_GZIP},
                                         {"csv", 0, 1, O_CSV},       {"debug-dir", 0, 1, O_DEBUGDIR},
                                         {"snapshot", 0, 1, O_SNAPSHOT}, {NULL, 0, 0, 0}};
    const char *zCsv = NULL, *zSnap = NULL;
    struct vt_export_opts eo = {0};
    struct vt_optparse p = {0};
    char **azPath = NULL, *zTmp = NULL, *zErr = NULL;
    struct vt_tracefile *aF = NULL;
    struct vt_export_stats stats;
    struct vt_export_snapstats snapStats;
    struct stat st;
    FILE *f = NULL;
    int nPath = 0, nOk = 0, nFailed = 0, i, c, rc = VT_EXIT_OK, src, bGzip = 0;

    if (vt__opt_begin(&p, "export", argc, argv, aOpt, 0) != 0) {
        vt__errorf("export: out of memory");
        rc = VT_EXIT_INTERNAL;
        goto done;
    }
    while ((c = vt__opt_next(&p)) > 0) {
        if (c == O_OUT) zOut = p.zVal; /* --perfetto, --chrome, -o */
        else if (c == O_CSV) zCsv = p.zVal;
        else if (c == O_SNAPSHOT) zSnap = p.zVal;
        else if (c == O_GZIP) bGzip = 1;
        else if (c == O_DEBUGDIR && vt__sym_debug_dir(p.zVal) != 0) c = VT_OPT_ERROR;
        else if (c == O_DEBUGDIR) continue;
        else if (vt__opt_time(&p, c == O_FROM ? &eo.from : &eo.to) != 0) c = VT_OPT_ERROR;
        else *(c == O_FROM ? &eo.bFrom : &eo.bTo) = 1;
        if (c == VT_OPT_ERROR) break;
    }
    if (c == VT_OPT_HELP) {
        usage(stdout);
        goto done;
    }
    if (c == VT_OPT_ERROR) {
        rc = VT_EXIT_USAGE;
        goto done;
    }
    if (p.nArg > 0 && (rc = vt__inputs("export", &p.azArg, &p.nArg, 0)) != VT_EXIT_OK) goto done;
    azPath = p.azArg;
    nPath = p.nArg;
    if (!(aF = calloc((size_t)nPath + 1, sizeof *aF))) {
        vt__errorf("export: out of memory");
        rc = VT_EXIT_INTERNAL;
        goto done;
    }
    if (zSnap && (zOut || zCsv || bGzip || eo.bFrom || eo.bTo || nPath != 1 || !*zSnap)) {
        vt__errorf("export: --snapshot OUT.pickle takes one trace and goes alone (not with --perfetto, --csv, --gzip, "
                   "--from or --to)");
        rc = VT_EXIT_USAGE;
        goto done;
    }
    if (zSnap) zOut = zSnap;
    if ((!zOut || !*zOut) && zCsv && *zCsv && !bGzip && !eo.bFrom && !eo.bTo) {
        zOut = zCsv;
    } else if (zCsv) {
        vt__errorf("export: --csv DIR goes alone (not with --perfetto, --gzip, --from or --to)");
        rc = VT_EXIT_USAGE;
        goto done;
    }
    if (!zOut || !*zOut || nPath == 0) {
        vt__errorf("export: usage: vramtrace export --perfetto OUT.json TRACE... (or --csv DIR TRACE..., or "
                   "--snapshot OUT.pickle TRACE; --help)");
        rc = VT_EXIT_USAGE;
        goto done;
    }
    if (bGzip && !VT_HAVE_ZLIB) {
        vt__errorf("export: --gzip: this vramtrace was built without zlib (compress the file with gzip instead)");
        rc = VT_EXIT_USAGE;
        goto done;
    }
    if (eo.bFrom && eo.bTo && eo.to < eo.from) {
        vt__errorf("export: --to %.9g s is before --from %.9g s", (double)eo.to / 1e9, (double)eo.from / 1e9);
        rc = VT_EXIT_USAGE;
        goto done;
    }
    if ((rc = vt__output_not_input("export", zOut, azPath, nPath)) != VT_EXIT_OK) goto done;
    /* every trace that can be read is exported; the others are named (one line each) */
    for (i = 0; i < nPath; i++) {
        /* the Perfetto export lends its read to the analysis (its category tracks): read as the analysis reads */
        int rcOne = vt__read_open(&aF[nOk], azPath[i], zCsv || zSnap ? 0 : VT_READ_KEEP, NULL);
        if (rcOne != VT_EXIT_OK) {
            if (nFailed++ == 0) rc = rcOne;
            continue;
        }
        if (aF[nOk].nHidden > 0)
            vt__errorf("%s: %lld rows with impossible values were left out (damaged trace)", azPath[i],
                       (long long)aF[nOk].nHidden);
        nOk++;
    }
    if (nOk == 0) goto done;
    rc = VT_EXIT_OK;
    { /* the one time origin of the traces exported together (figures.h), as analyze takes it */
        struct vt_tracefile **apF = malloc(sizeof *apF * (size_t)nOk);
        if (!apF) {
            vt__errorf("export: out of memory");
            rc = VT_EXIT_INTERNAL;
            goto done;
        }
        for (i = 0; i < nOk; i++) apF[i] = &aF[i];
        vt__figures_origin(apF, nOk);
        free(apF);
    }
    if (zCsv) {
        src = vt__export_csv(zCsv, nOk, aF, &zErr);
        if (src != SQLITE_OK) {
            vt__errorf("export: %s", zErr ? zErr : sqlite3_errstr(src));
            rc = src == SQLITE_CANTOPEN || src == SQLITE_IOERR ? VT_EXIT_NOFILE : vt__exit_for_sqlite(src);
        } else {
            fprintf(stderr, "vramtrace: wrote %s: CSV tables of %d trace%s\n", zCsv, nOk, nOk == 1 ? "" : "s");
        }
        if (rc == VT_EXIT_OK && nFailed > 0) rc = VT_EXIT_PARTIAL;
        goto done;
    }
    /*
     * A new or regular file is written next to its destination and renamed into
     * place at the end, so no half-written file is left. Anything else that
     * exists (a device such as /dev/null, a FIFO, a symbolic link) is written
     * directly: renaming over it would replace it.
     */
    if (strcmp(zOut, "-") == 0) {
        f = stdout;
    } else if (lstat(zOut, &st) == 0 && !S_ISREG(st.st_mode)) {
        f = fopen(zOut, "w");
        if (!f) {
            vt__errorf("%s: cannot write: %s", zOut, strerror(errno));
            rc = VT_EXIT_NOFILE;
            goto done;
        }
    } else {
        zTmp = sqlite3_mprintf("%s.part", zOut);
        if (zTmp) vt__cleanup_add(zTmp); /* named before it exists: no signal can leave it behind */
        f = zTmp ? fopen(zTmp, "w") : NULL;
        if (!f) {
            vt__errorf("%s: cannot write: %s", zOut, zTmp ? strerror(errno) : "out of memory");
            rc = VT_EXIT_NOFILE;
            goto done;
        }
    }
    if (bGzip) {
        FILE *g = gz_over(f);
        if (!g) {
            vt__errorf("%s: cannot write: %s", zOut, strerror(errno ? errno : ENOMEM));
            rc = VT_EXIT_NOFILE;
            goto done;
        }
        if (f != stdout) fclose(f); /* the gzip stream owns a duplicate of its descriptor */
        f = g;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    if (zSnap) src = vt__export_snapshot(f, &aF[0], &snapStats, &zErr);
    else src = vt__export_perfetto(f, nOk, aF, &eo, &stats, &zErr);
    if (f != stdout && fclose(f) != 0 && src == SQLITE_OK) src = SQLITE_IOERR;
    f = NULL;
    if (src == SQLITE_IOERR) {
        vt__errorf("%s: write failed: %s", zOut, strerror(errno ? errno : EIO));
        rc = VT_EXIT_NOFILE;
    } else if (src != SQLITE_OK) {
        vt__errorf("export: %s", zErr ? zErr : sqlite3_errstr(src));
        rc = vt__exit_for_sqlite(src);
    } else if (zTmp && rename(zTmp, zOut) != 0) {
        vt__errorf("%s: cannot rename %s: %s", zOut, zTmp, strerror(errno));
        rc = VT_EXIT_NOFILE;
    } else if (zSnap) {
        fprintf(stderr, "vramtrace: wrote %s: a PyTorch memory snapshot of %lld device allocations (%lld freed, %lld "
                        "live at the end), %lld events\n", zOut, snapStats.nAlloc, snapStats.nFree, snapStats.nLive,
                snapStats.nEvent);
        if (snapStats.nSegment != snapStats.nLive)
            fprintf(stderr, "vramtrace: the %lld mapped at the end drawn as %lld segments (one per contiguous mapped "
                            "range)\n", snapStats.nLive, snapStats.nSegment);
        if (snapStats.nBlock || snapStats.nBlockOut)
            fprintf(stderr, "vramtrace: %lld allocator blocks drawn in their segments, %lld left out (in no segment of "
                            "the trace)\n", snapStats.nBlock, snapStats.nBlockOut);
        if (snapStats.nOom || snapStats.nOomOut)
            fprintf(stderr, "vramtrace: %lld OOM events, %lld left out (of no known device)\n", snapStats.nOom,
                    snapStats.nOomOut);
        if (snapStats.nBefore) /* import finds the history as the trace has it (history_truncated) */
            fprintf(stderr, "vramtrace: %lld allocations and blocks of unknown time are the dump's state, with no "
                            "event: %s\n", snapStats.nBefore, aF[0].bUntimedBefore
                                           ? "made before the history began (it starts late)"
                                           : "the trace holds no allocation history, only the state at the dump");
        if (snapStats.nStray)
            fprintf(stderr, "vramtrace: %lld frees of memory allocated before the history began written without "
                            "their allocation (the history starts late)\n", snapStats.nStray);
        if (snapStats.nHost)
            fprintf(stderr, "vramtrace: %lld pinned host or managed allocations left out (memory_viz draws device "
                            "memory)\n", snapStats.nHost);
        if (snapStats.nEvent == 0 && snapStats.nSegment == 0) /* not an empty file in silence */
            fprintf(stderr, "vramtrace: %s is empty, memory_viz has nothing to draw: %s\n", zOut,
                    vt__fig_counts_unknown(&aF[0]) ? vt__fig_counts_unknown(&aF[0])
                                                   : "the trace holds no device allocation");
    } else {
        fprintf(stderr,
                "vramtrace: wrote %s: %lld kernels, %lld copies, %lld memsets, %lld NVTX, "
                "%lld allocs, %lld frees, %lld OOM\n",
                zOut, stats.nKernel, stats.nMemcpy, stats.nMemset, stats.nNvtx, stats.nAlloc,
                stats.nFree, stats.nOom);
        if (stats.nTensor) /* the line above as it was for traces without tensor rows */
            fprintf(stderr, "vramtrace: %s also holds %lld tensor events (blocks of the framework's allocator)\n", zOut,
                    stats.nTensor);
        {
            long long nNoTime = 0, nBefore = 0;
            for (i = 0; i < nOk; i++) *(aF[i].bUntimedBefore ? &nBefore : &nNoTime) += aF[i].nNoTime;
            if (nNoTime) /* an import of the state at its dump: not "0 allocs" in silence */
                fprintf(stderr, "vramtrace: %lld event%s of unknown time left out (the file records no time for %s): on "
                                "no track or counter, memory by category included\n",
                        nNoTime, nNoTime == 1 ? "" : "s", nNoTime == 1 ? "it" : "them");
            if (nBefore) /* a history that starts late: what it does not explain stands from its start */
                fprintf(stderr, "vramtrace: %lld event%s of unknown time, made before the history began: on the "
                                "counters from the start (memory by category included), no instant\n",
                        nBefore, nBefore == 1 ? "" : "s");
            for (i = 0; i < nOk; i++) /* totals only (figures.c's level rule): no counter, not in silence */
                if (aF[i].aT[VT_T_MEM].nRow == 0 && aF[i].aT[VT_T_TENSOR].nRow == 0 &&
                    vt__read_meta_int(&aF[i], "kineto.memory_events") > 0)
                    fprintf(stderr, "vramtrace: %s: no memory counter: its memory events carry no address (torch.profiler "
                                    "before 1.11), so no allocation's lifetime is known, only the running sum of their "
                                    "bytes, whose peak 'vramtrace analyze' gives\n", aF[i].zPath);
        }
        if ((eo.bFrom || eo.bTo) && !(stats.nKernel || stats.nMemcpy || stats.nMemset || stats.nNvtx ||
                                      stats.nAlloc || stats.nFree || stats.nTensor || stats.nOom))
            window_note(nOk, aF, &eo);
    }
    if (rc == VT_EXIT_OK && nFailed > 0) rc = VT_EXIT_PARTIAL;
done:
    if (f && f != stdout) fclose(f);
    if (zTmp) { /* renamed into place, or not finished: removed */
        vt__cleanup_forget(zTmp);
        if (rc != VT_EXIT_OK && rc != VT_EXIT_PARTIAL) remove(zTmp);
    }
    for (i = 0; aF && i < nOk; i++) vt__read_close(&aF[i]);
    sqlite3_free(zTmp);
    sqlite3_free(zErr);
    vt__opt_end(&p);
    vt__sym_reset();
    free(aF);
    return rc;
}
