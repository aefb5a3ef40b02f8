/* The 'info' subcommand: what a trace holds (process, versions, devices, duration, counts, losses, overhead, configuration). */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "info.h"
#include "util/opts.h"

static const char zInfoUsage[] =
    "usage: vramtrace info [--json] TRACE...\n"
    "\n"
    "Show what a trace holds: process, versions, devices, duration, allocations and\n"
    "peak live device memory, copies, kernels, OOMs, dropped records, tracer\n"
    "overhead, configuration, and row counts per table.\n"
    "\n"
    "TRACE: a trace, another tool's file (docs/import.md), a directory of traces\n"
    "(record -o DIR/), or - for standard input; pipes and FIFOs are read to their end.\n"
    "\n"
    "options:\n"
    "  --json      machine-readable output: {\"format\":\"vramtrace-info\",\n"
    "              \"format_version\":1,\"traces\":[...]}\n"
    "  -h, --help  show this help\n"
    "\n"
    "exit status: 0 ok, 2 usage, 3 missing or unreadable file, 4 not a trace,\n"
    "5 trace from a newer vramtrace, 6 damaged trace, 7 internal error; with several\n"
    "traces, 9 when some could not be read (each is named; the others are shown).\n"
    "When no trace could be read, nothing is written to standard output (no JSON).\n";

int vt__cmd_info(int argc, char **argv)
{
    enum { O_JSON = 1 };
    static const struct vt_opt aOpt[] = {{"json", 0, 0, O_JSON}, {NULL, 0, 0, 0}};
    struct vt_optparse p = {0};
    const char **azTrace;
    struct trace_info *aInfo = NULL;
    struct vt_tracefile **apF = NULL;
    int i, c, bJson = 0, nTrace = 0, nShown = 0, nFailed = 0, rcAll = VT_EXIT_OK, *aRc = NULL;

    if (vt__opt_begin(&p, "info", argc, argv, aOpt, 0) != 0) {
        rcAll = VT_EXIT_INTERNAL;
        goto done;
    }
    while ((c = vt__opt_next(&p)) == O_JSON) bJson = 1;
    if (c == VT_OPT_HELP) {
        fputs(zInfoUsage, stdout);
        goto done;
    }
    if (c == VT_OPT_ERROR) {
        rcAll = VT_EXIT_USAGE;
        goto done;
    }
    if (p.nArg == 0) {
        vt__errorf("info: no trace given (usage: vramtrace info [--json] TRACE...)");
        rcAll = VT_EXIT_USAGE;
        goto done;
    }
    /* directories to their traces, standard input and pipes read into files */
    if ((rcAll = vt__inputs("info", &p.azArg, &p.nArg, 0)) != VT_EXIT_OK) goto done;
    azTrace = (const char **)p.azArg;
    nTrace = p.nArg;
    /* every trace read first: their one time origin (figures.h) is known before a time is printed */
    if (!(aInfo = calloc((size_t)nTrace, sizeof *aInfo)) || !(aRc = calloc((size_t)nTrace, sizeof *aRc)) ||
        !(apF = calloc((size_t)nTrace, sizeof *apF))) {
        vt__errorf("info: out of memory");
        rcAll = VT_EXIT_INTERNAL;
        goto done;
    }
    for (i = 0; i < nTrace; i++) {
        aRc[i] = vt__info_load(&aInfo[i], azTrace[i], 1);
        if (aRc[i] == VT_EXIT_OK) vt__read_done(&aInfo[i].f); /* what was read stays; the connection goes */
        apF[i] = aRc[i] == VT_EXIT_OK ? &aInfo[i].f : NULL;
    }
    vt__figures_origin(apF, nTrace);
    for (i = 0; i < nTrace; i++) nFailed += aRc[i] != VT_EXIT_OK;
    /* nothing read: nothing on standard output (as analyze), the errors on standard error */
    bJson = bJson && nFailed < nTrace;
    if (bJson) printf("{\"format\":\"vramtrace-info\",\"format_version\":1,\"traces\":[");
    for (i = 0; i < nTrace; i++) {
        if (aRc[i] == VT_EXIT_OK && bJson) {
            if (nShown++) putchar(',');
            vt__info_json(stdout, &aInfo[i]);
        } else if (aRc[i] == VT_EXIT_OK) {
            if (nShown++) putchar('\n');
            vt__info_text(stdout, &aInfo[i]);
        }
        if (aRc[i] != VT_EXIT_OK && rcAll == VT_EXIT_OK) rcAll = aRc[i];
    }
    if (bJson) printf("]}\n");
    /* several traces, some shown: the ones not read were named on stderr */
    if (nFailed > 0 && nFailed < nTrace) rcAll = VT_EXIT_PARTIAL;
    if (fflush(stdout) != 0 && rcAll == VT_EXIT_OK) {
        vt__errorf("info: cannot write the output");
        rcAll = VT_EXIT_INTERNAL;
    }
done:
    for (i = 0; aInfo && i < nTrace; i++) vt__info_free(&aInfo[i]);
    free(aInfo);
    free(aRc);
    free(apF);
    vt__opt_end(&p);
    return rcAll;
}
