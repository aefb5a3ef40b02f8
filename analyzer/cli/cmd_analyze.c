/* The 'analyze' subcommand: options, the analysis pipeline over each trace, the report. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"
#include "report/report.h"
#include "cli.h"
#include "util/opts.h"

/* The --help text: every option and the exit codes. */
static void usage(FILE *f)
{
    fprintf(f,
            "usage: vramtrace analyze [OPTIONS] TRACE...\n"
            "\n"
            "Explain the GPU memory use recorded in one or more traces (one per process or rank):\n"
            "leaks, memory retained after its last use or across phases, validation spikes, slow\n"
            "host-device copies and out-of-memory causes, each with evidence and a fix. Each\n"
            "device's peak and each OOM is broken down by category (parameters, gradients,\n"
            "optimizer state, activations, temporaries, allocator cache, NCCL, cuBLAS, cuDNN, the\n"
            "CUDA context, before the trace, unknown), with the rule that decided each part, and\n"
            "what would fit (see --batch, --fit-memory). Works offline: no GPU or CUDA needed.\n"
            "With --save, results are also written back into each trace as the tables lifetime,\n"
            "phase, finding and the view allocation (docs/analysis.md).\n"
            "TRACE: a trace, another tool's file (docs/import.md), a directory of traces (record -o\n"
            "DIR/), or - for standard input; pipes and FIFOs are read to their end.\n"
            "\n"
            "options:\n"
            "  --format FMT      text (default), json, markdown or html (one self-contained file)\n"
            "  -o, --output FILE write the report to FILE instead of standard output\n"
            "  --phase REGEX     NVTX ranges whose names match are phases (case-insensitive POSIX\n"
            "                    extended regex; default '^([^:#.]*[^a-z:#.])?(train|val|eval|test)')\n"
            "  --eval-phase REGEX  which phase names are evaluation (default 'val|eval|test|infer');\n"
            "                    the other phases are training\n"
            "  --iteration REGEX NVTX ranges that are iterations (default\n"
            "                    '^(([a-z]+_)?(step|iter|iteration|batch)|profilerstep)([ _#:=-]*[0-9]+)?$')\n"
            "  --min-bytes N     ignore findings smaller than N bytes (K, M, G suffixes; default 1M)\n"
            "  --top N           list at most N allocations / groups / sites (1 to 32,\n"
            "                    default 10)\n"
            "  --fail-on SEV     exit 1 if any finding is at least SEV (info, low, medium, high)\n"
            "  --save            write the results back into each trace (tables lifetime, phase,\n"
            "                    finding: the process's findings as reported, repeats merged;\n"
            "                    not for read-only traces or imported files, the report then\n"
            "                    says so)\n"
            "  --no-write        do not write results back (the default; kept for scripts)\n"
            "  -j, --jobs N      analyze N traces at once (default: one per online CPU)\n"
            "  --by-site         add a table of allocation sites\n"
            "  --batch N         the batch size of the traced run: what would fit is also given as\n"
            "                    the largest batch size (default: as a scale of the batch traced;\n"
            "                    at tensor level the first batch above it the replayed allocator\n"
            "                    cannot serve, less one)\n"
            "  --fit-memory SIZE device memory to fit in (K, M, G suffixes; default: each device's\n"
            "                    total)\n"
            "  --all             text: every finding and every process's section (default: the 10\n"
            "                    worst findings, and the sections of at most 8 processes)\n"
            "  --debug-dir DIR   separate debug files for native frames (DIR/.build-id/xx/rest.debug)\n"
            "  --snapshot FILE   merge PyTorch's allocation history (a memory snapshot of the same\n"
            "                    process) into the analysis: tensor lifetimes with their Python lines\n"
            "                    inside the traced segments (one TRACE only; into a temporary copy,\n"
            "                    into the trace itself with --save). Without it, the snapshot 'record'\n"
            "                    wrote beside a trace (vramtrace-HOST-PID.snapshot.pickle) is merged\n"
            "  --no-snapshot     do not merge the snapshot found beside a trace\n"
            "  -h, --help        this help\n"
            "\n"
            "Findings of one kind, site, phase and verdict are one finding, however often and on\n"
            "however many ranks they occur (\"all 64 ranks\", \"rank 2 only\"), with their number and\n"
            "the spread of their sizes.\n"
            "\n"
            "Without NVTX ranges, phases are inferred from kernel names: windows with backward and\n"
            "optimizer kernels are training, forward-only windows are evaluation. A run that takes\n"
            "more than 2 s says how far it is on standard error when that is a terminal.\n"
            "\n"
            "exit codes: 0 ok, 1 a finding at or above --fail-on, 2 usage (also a --snapshot not of the\n"
            "trace's process and time), 3 file missing or unreadable or output not writable, 4 not a\n"
            "trace (empty file, not SQLite, not a vramtrace trace), 5 trace from a newer vramtrace,\n"
            "6 damaged or truncated trace, 7 internal error, 9 several traces and some could not be\n"
            "read (each is named; the others are analyzed). Options take their value as --opt VALUE\n"
            "or --opt=VALUE.\n");
}

/*
 * The options into *o and the trace paths into p->azArg[0..p->nArg). Returns
 * VT_EXIT_OK, VT_EXIT_USAGE (message printed), or -1 after printing --help.
 */
static int parse_args(int argc, char **argv, struct vt_opts *o, struct vt_optparse *p, const char **pzSnap,
                      int *pbNoSnap)
{
    enum { O_FORMAT = 1, O_OUT, O_PHASE, O_EVAL, O_ITER, O_MIN, O_TOP, O_FAIL, O_NOWRITE, O_BYSITE, O_SAVE, O_JOBS,
           O_SNAP, O_NOSNAP, O_DEBUGDIR, O_ALL, O_BATCH, O_FITMEM };
    static const struct vt_opt aOpt[] = {
        {"format", 0, 1, O_FORMAT}, {"output", 'o', 1, O_OUT},    {"phase", 0, 1, O_PHASE},
        {"eval-phase", 0, 1, O_EVAL}, {"iteration", 0, 1, O_ITER}, {"min-bytes", 0, 1, O_MIN},
        {"top", 0, 1, O_TOP},       {"fail-on", 0, 1, O_FAIL},    {"no-write", 0, 0, O_NOWRITE},
        {"by-site", 0, 0, O_BYSITE}, {"save", 0, 0, O_SAVE},       {"jobs", 'j', 1, O_JOBS},
        {"snapshot", 0, 1, O_SNAP}, {"no-snapshot", 0, 0, O_NOSNAP}, {"debug-dir", 0, 1, O_DEBUGDIR},
        {"all", 0, 0, O_ALL},       {"batch", 0, 1, O_BATCH},     {"fit-memory", 0, 1, O_FITMEM},
        {NULL, 0, 0, 0}};
    static const char *const azFormat[] = {"text", "json", "markdown", "html", "md", NULL};
    static const char *const azSev[] = {"info", "low", "medium", "high", NULL};
    int c, k;
    long long n;
    if (vt__opt_begin(p, "analyze", argc, argv, aOpt, 0) != 0) return VT_EXIT_INTERNAL;
    while ((c = vt__opt_next(p)) > 0) {
        int bad = 0;
        switch (c) {
        case O_FORMAT:
            bad = vt__opt_choice(p, azFormat, &k);
            o->format = k == 4 ? VT_FMT_MARKDOWN : (enum vt_format)k;
            break;
        case O_OUT: o->zOut = p->zVal; break;
        case O_PHASE: o->zPhaseRe = p->zVal; break;
        case O_EVAL: o->zEvalRe = p->zVal; break;
        case O_ITER: o->zIterRe = p->zVal; break;
        case O_MIN: bad = vt__opt_bytes(p, &o->minBytes); break;
        case O_TOP:
            bad = vt__opt_int(p, 1, VT_TOPMAX, &n);
            o->nTop = (int)n;
            break;
        case O_FAIL: bad = vt__opt_choice(p, azSev, &o->failOn); break;
        case O_NOWRITE: o->bNoWrite = 1; break;
        case O_SAVE: o->bNoWrite = 0; break;
        case O_JOBS:
            bad = vt__opt_int(p, 1, VT_JOBS_MAX, &n);
            o->nJobs = (int)n;
            break;
        case O_BYSITE: o->bBySite = 1; break;
        case O_ALL: o->bAll = 1; break;
        case O_BATCH:
            bad = vt__opt_int(p, 1, 1000000000, &n);
            o->batch = n;
            break;
        case O_FITMEM:
            bad = vt__opt_bytes(p, &o->fitMemory);
            if (!bad && o->fitMemory <= 0) { /* 0 would mean "unset": each device's own size, said nowhere */
                vt__errorf("analyze: --fit-memory: expected a size above 0, not '%s'", p->zVal);
                bad = 1;
            }
            break;
        case O_DEBUGDIR: bad = vt__sym_debug_dir(p->zVal); break;
        case O_SNAP: *pzSnap = p->zVal; break;
        case O_NOSNAP: *pbNoSnap = 1; break;
        }
        if (bad) return VT_EXIT_USAGE;
    }
    if (c == VT_OPT_HELP) {
        usage(stdout);
        return -1;
    }
    return c == VT_OPT_ERROR ? VT_EXIT_USAGE : VT_EXIT_OK;
}

/* The merge's vt_trace_window_fn: trace zTrace's first and last event as the reader finds them. */
static int trace_window(const char *zTrace, int64_t *pFirst, int64_t *pLast)
{
    struct vt_tracefile f;
    int rc = vt__read_open(&f, zTrace, 0, NULL) == VT_EXIT_OK && f.bTimes ? 0 : -1;
    if (rc == 0) *pFirst = f.fig.origin, *pLast = f.fig.origin + f.fig.duration;
    vt__read_close(&f);
    return rc;
}

/*
 * PyTorch's allocation history into the traces before they are read: zSnap into the one trace,
 * or else (unless bNoSnap) the snapshot found beside each trace. A copy is read instead of the
 * trace unless bSave. A found snapshot that does not fit its trace is named and left out; a
 * given one that does not fit fails. Returns an enum vt_exit code.
 */
static int merge_snapshots(const char **azPath, int nPath, const char *zSnap, int bNoSnap, int bNoWrite)
{
    int rc = VT_EXIT_OK, i;
    if (zSnap) return vt__snapshot_merge(azPath[0], zSnap, !bNoWrite, 0, trace_window);
    for (i = 0; i < nPath && !bNoSnap && rc == VT_EXIT_OK; i++) {
        char *zFound = NULL;
        rc = vt__snapshot_find(azPath[i], &zFound);
        if (zFound && vt__snapshot_merge(azPath[i], zFound, !bNoWrite, 1, trace_window) == VT_EXIT_INTERNAL) rc = VT_EXIT_INTERNAL;
        free(zFound);
    }
    return rc;
}

/*
 * vramtrace analyze: parse options, analyze every trace, write the report. Returns
 * VT_EXIT_OK, VT_EXIT_FINDINGS (--fail-on), VT_EXIT_PARTIAL (some traces not read: the
 * others reported; before --fail-on), or the first error's exit code.
 */
int vt__cmd_analyze(int argc, char **argv)
{
    struct vt_opts o;
    struct vt_result r;
    struct vt_optparse p;
    const char **azPath;
    int nPath, rc, i, bPartial, bNoSnap = 0;
    const char *zSnap = NULL;
    FILE *fOut = stdout;

    vt__opts_default(&o);
    o.bProgress = isatty(2);
    rc = parse_args(argc, argv, &o, &p, &zSnap, &bNoSnap);
    azPath = (const char **)p.azArg;
    nPath = p.nArg;
    if (rc < 0) {
        vt__opt_end(&p);
        return VT_EXIT_OK;
    }
    if (rc == VT_EXIT_OK && nPath == 0) {
        vt__errorf("analyze: no trace given (usage: vramtrace analyze [OPTIONS] TRACE...)");
        rc = VT_EXIT_USAGE;
    }
    if (rc == VT_EXIT_OK) { /* directories to their traces, standard input and pipes read into files */
        rc = vt__inputs("analyze", &p.azArg, &p.nArg, 0);
        azPath = (const char **)p.azArg;
        nPath = p.nArg;
    }
    if (rc == VT_EXIT_OK) /* never write the report over a trace */
        rc = vt__output_not_input("analyze", o.zOut, (char *const *)azPath, nPath);
    if (rc == VT_EXIT_OK && zSnap && nPath != 1) {
        vt__errorf("analyze: --snapshot goes with one trace (given %d)", nPath);
        rc = VT_EXIT_USAGE;
    }
    if (rc == VT_EXIT_OK) rc = merge_snapshots(azPath, nPath, zSnap, bNoSnap, o.bNoWrite);
    if (rc != VT_EXIT_OK) {
        vt__opt_end(&p);
        return rc;
    }
    o.bSiteCurves = o.format == VT_FMT_HTML; /* the HTML draws each device's largest sites over time */
    rc = vt__analyze(azPath, nPath, &o, &r);
    /* some traces not read (each named): the others are still reported, and the exit says so */
    bPartial = rc == VT_EXIT_PARTIAL;
    if (bPartial) rc = VT_EXIT_OK;
    if (rc == VT_EXIT_OK && o.zOut) {
        fOut = fopen(o.zOut, "w");
        if (!fOut) {
            vt__errorf("%s: cannot write report: %s", o.zOut, strerror(errno));
            rc = VT_EXIT_NOFILE;
        }
    }
    if (rc == VT_EXIT_OK) {
        int w;
        switch (o.format) {
        case VT_FMT_JSON: w = vt__report_json(fOut, &r); break;
        case VT_FMT_MARKDOWN: w = vt__report_markdown(fOut, &r); break;
        case VT_FMT_HTML: w = vt__report_html(fOut, &r); break;
        default: w = vt__report_text(fOut, &r); break;
        }
        if (fflush(fOut) != 0 || w != 0) {
            vt__errorf("%s: cannot write report: %s", o.zOut ? o.zOut : "standard output", strerror(errno));
            rc = VT_EXIT_NOFILE;
        }
        if (fOut != stdout && fclose(fOut) != 0 && rc == VT_EXIT_OK) {
            vt__errorf("%s: cannot write report: %s", o.zOut, strerror(errno));
            rc = VT_EXIT_NOFILE;
        }
    }
    if (rc == VT_EXIT_OK && o.failOn >= 0)
        for (i = 0; i < r.nFind; i++)
            if (r.aFind[i].severity >= o.failOn) rc = VT_EXIT_FINDINGS;
    if (bPartial && (rc == VT_EXIT_OK || rc == VT_EXIT_FINDINGS)) rc = VT_EXIT_PARTIAL;
    vt__result_free(&r);
    vt__opt_end(&p);
    vt__sym_reset();
    return rc;
}
