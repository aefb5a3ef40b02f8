/* The 'export' subcommand: write traces as Chrome trace-event JSON for the Perfetto UI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "export.h"
#include "util/opts.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vramtrace export --perfetto OUT.json TRACE...\n\n"
            "Write one Chrome trace-event JSON file (open it at https://ui.perfetto.dev or in\n"
            "chrome://tracing): one process per trace, a track per GPU stream with kernels,\n"
            "copies and memsets, NVTX ranges on their host thread, a live-bytes counter per\n"
            "device and memory kind, allocation and free instants with size, address and\n"
            "call site, and OOM instants. OUT.json '-' writes to standard output. Rows are\n"
            "streamed, so traces larger than memory export. See docs/queries.md.\n\n"
            "Exit codes: 0 ok, 2 bad arguments, 3 trace missing or output not writable,\n"
            "4 not a trace, 5 newer trace, 6 damaged trace, 7 internal error.\n");
}

int vt__cmd_export(int argc, char **argv)
{
    const char *zOut = NULL;
    static const struct vt_opt aOpt[] = {
        {"perfetto", 0, 1, 1}, {"chrome", 0, 1, 1}, {"output", 'o', 1, 1}, {NULL, 0, 0, 0}};
    struct vt_optparse p = {0};
    char **azPath = NULL, *zTmp = NULL, *zErr = NULL;
    sqlite3 **adb = calloc((size_t)argc + 1, sizeof(sqlite3 *));
    struct vt_export_stats stats;
    struct stat st;
    FILE *f = NULL;
    int nPath = 0, i, c, rc = VT_EXIT_OK, src;

    if (!adb || vt__opt_begin(&p, "export", argc, argv, aOpt, 0) != 0) {
        vt__errorf("export: out of memory");
        rc = VT_EXIT_INTERNAL;
        goto done;
    }
    while ((c = vt__opt_next(&p)) > 0) zOut = p.zVal; /* --perfetto, --chrome, -o */
    if (c == VT_OPT_HELP) {
        usage(stdout);
        goto done;
    }
    if (c == VT_OPT_ERROR) {
        rc = VT_EXIT_USAGE;
        goto done;
    }
    azPath = p.azArg;
    nPath = p.nArg;
    if (!zOut || !*zOut || nPath == 0) {
        vt__errorf("export: usage: vramtrace export --perfetto OUT.json TRACE...");
        rc = VT_EXIT_USAGE;
        goto done;
    }
    for (i = 0; i < nPath; i++) {
        if (strcmp(azPath[i], zOut) == 0) {
            vt__errorf("export: %s is both a trace and the output", zOut);
            rc = VT_EXIT_USAGE;
            goto done;
        }
        rc = vt__trace_open(azPath[i], 0, &adb[i]);
        if (rc != VT_EXIT_OK) goto done;
        {
            int64_t nHidden = 0; /* rows no real trace holds are left out of the export */
            if (vt__trace_guard(adb[i], &nHidden) != SQLITE_OK) {
                vt__errorf("%s: cannot read trace: %s", azPath[i], sqlite3_errmsg(adb[i]));
                rc = VT_EXIT_CORRUPT;
                goto done;
            }
            if (nHidden > 0)
                vt__errorf("%s: %lld rows with impossible values were left out (damaged trace)", azPath[i],
                           (long long)nHidden);
        }
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
        f = zTmp ? fopen(zTmp, "w") : NULL;
        if (!f) {
            vt__errorf("%s: cannot write: %s", zOut, zTmp ? strerror(errno) : "out of memory");
            rc = VT_EXIT_NOFILE;
            goto done;
        }
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    src = vt__export_perfetto(f, nPath, adb, azPath, &stats, &zErr);
    if (f != stdout && fclose(f) != 0 && src == SQLITE_OK) src = SQLITE_IOERR;
    f = NULL;
    if (src == SQLITE_IOERR) {
        vt__errorf("%s: write failed: %s", zOut, strerror(errno ? errno : EIO));
        rc = VT_EXIT_NOFILE;
    } else if (src != SQLITE_OK) {
        vt__errorf("export: %s", zErr ? zErr : sqlite3_errstr(src));
        rc = (src & 0xff) == SQLITE_CORRUPT || (src & 0xff) == SQLITE_NOTADB ? VT_EXIT_CORRUPT
                                                                            : VT_EXIT_INTERNAL;
    } else if (zTmp && rename(zTmp, zOut) != 0) {
        vt__errorf("%s: cannot rename %s: %s", zOut, zTmp, strerror(errno));
        rc = VT_EXIT_NOFILE;
    } else {
        fprintf(stderr,
                "vramtrace: wrote %s: %lld kernels, %lld copies, %lld memsets, %lld NVTX, "
                "%lld allocs, %lld frees, %lld OOM\n",
                zOut, stats.nKernel, stats.nMemcpy, stats.nMemset, stats.nNvtx, stats.nAlloc,
                stats.nFree, stats.nOom);
    }
    if (rc != VT_EXIT_OK && zTmp) remove(zTmp);
done:
    if (f && f != stdout) fclose(f);
    for (i = 0; adb && i < nPath; i++) sqlite3_close(adb[i]);
    sqlite3_free(zTmp);
    sqlite3_free(zErr);
    vt__opt_end(&p);
    free(adb);
    return rc;
}
