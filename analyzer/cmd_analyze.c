/* The 'analyze' subcommand: options, the analysis pipeline over each trace, the report. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "cli.h"

/* The --help text: every option and the exit codes. */
static void usage(FILE *f)
{
    fprintf(f,
            "usage: vramtrace analyze [OPTIONS] TRACE...\n"
            "\n"
            "Explain the GPU memory use recorded in one or more traces (one per process or rank):\n"
            "leaks, memory retained after its last use or across phases, validation spikes, slow\n"
            "host-device copies and out-of-memory causes, each with evidence and a fix. Works\n"
            "offline: no GPU or CUDA needed. Results are also written back into each trace as the\n"
            "tables lifetime, phase, finding and the view allocation (see docs/analysis.md).\n"
            "\n"
            "options:\n"
            "  --format FMT      text (default), json, markdown or html (one self-contained file)\n"
            "  -o, --output FILE write the report to FILE instead of standard output\n"
            "  --phase REGEX     NVTX ranges whose names match are phases (case-insensitive POSIX\n"
            "                    extended regex; default '^[^:#.]*(train|val|eval|test)')\n"
            "  --eval-phase REGEX  which phase names are evaluation (default 'val|eval|test|infer');\n"
            "                    the other phases are training\n"
            "  --iteration REGEX NVTX ranges that are iterations (default\n"
            "                    '^([a-z]+_)?(step|iter|iteration|batch)([ _#:=-]*[0-9]+)?$')\n"
            "  --min-bytes N     ignore findings smaller than N bytes (K, M, G suffixes; default 1M)\n"
            "  --top N           list at most N allocations / groups / sites (default 10)\n"
            "  --fail-on SEV     exit 1 if any finding is at least SEV (info, low, medium, high)\n"
            "  --no-write        do not write results back into the traces (automatic when a trace\n"
            "                    is read-only; the report then says so)\n"
            "  --by-site         add a table of allocation sites\n"
            "  -h, --help        this help\n"
            "\n"
            "Without NVTX ranges, phases are inferred from kernel names: windows with backward and\n"
            "optimizer kernels are training, forward-only windows are evaluation.\n"
            "\n"
            "exit codes: 0 ok, 1 a finding at or above --fail-on, 2 usage, 3 file missing or\n"
            "unreadable or output not writable, 4 not a trace (empty file, not SQLite, not a\n"
            "vramtrace trace), 5 trace from a newer vramtrace, 6 damaged or truncated trace,\n"
            "7 internal error.\n");
}

/* Parse "123", "64K", "1.5G" into bytes; -1 if malformed. */
static int64_t parse_bytes(const char *z)
{
    char *zEnd;
    double v;
    errno = 0;
    v = strtod(z, &zEnd);
    if (errno || zEnd == z || v < 0) return -1;
    switch (*zEnd) {
    case 0: break;
    case 'k': case 'K': v *= 1024.0; zEnd++; break;
    case 'm': case 'M': v *= 1048576.0; zEnd++; break;
    case 'g': case 'G': v *= 1073741824.0; zEnd++; break;
    default: return -1;
    }
    if (*zEnd == 'i' || *zEnd == 'B') zEnd += (*zEnd == 'i' && zEnd[1] == 'B') ? 2 : 1;
    return *zEnd || v > 9.0e18 ? -1 : (int64_t)v;
}

/*
 * vramtrace analyze: parse options, analyze every trace, write the report. Returns
 * VT_EXIT_OK, VT_EXIT_FINDINGS (--fail-on), or the first error's exit code.
 */
int vt__cmd_analyze(int argc, char **argv)
{
    struct vt_opts o;
    struct vt_result r;
    const char **azPath = NULL;
    int nPath = 0, rc = VT_EXIT_OK, i;
    FILE *fOut = stdout;

    vt__opts_default(&o);
    azPath = calloc((size_t)argc + 1, sizeof *azPath);
    if (!azPath) return VT_EXIT_INTERNAL;
    for (i = 1; i < argc; i++) {
        const char *z = argv[i], *zVal = i + 1 < argc ? argv[i + 1] : NULL;
        int bVal = 1;
        if (!strcmp(z, "-h") || !strcmp(z, "--help")) {
            usage(stdout);
            free(azPath);
            return VT_EXIT_OK;
        } else if (!strcmp(z, "--no-write")) {
            o.bNoWrite = 1, bVal = 0;
        } else if (!strcmp(z, "--by-site")) {
            o.bBySite = 1, bVal = 0;
        } else if (!strcmp(z, "--")) {
            for (i++; i < argc; i++) azPath[nPath++] = argv[i];
            break;
        } else if (z[0] != '-' || !z[1]) {
            azPath[nPath++] = z, bVal = 0;
        } else if (!zVal) {
            vt__errorf("analyze: option %s needs a value (see 'vramtrace analyze --help')", z);
            rc = VT_EXIT_USAGE;
        } else if (!strcmp(z, "--format")) {
            if (!strcmp(zVal, "text")) o.format = VT_FMT_TEXT;
            else if (!strcmp(zVal, "json")) o.format = VT_FMT_JSON;
            else if (!strcmp(zVal, "markdown") || !strcmp(zVal, "md")) o.format = VT_FMT_MARKDOWN;
            else if (!strcmp(zVal, "html")) o.format = VT_FMT_HTML;
            else vt__errorf("analyze: unknown format '%s' (text, json, markdown, html)", zVal), rc = VT_EXIT_USAGE;
        } else if (!strcmp(z, "-o") || !strcmp(z, "--output")) {
            o.zOut = zVal;
        } else if (!strcmp(z, "--phase")) {
            o.zPhaseRe = zVal;
        } else if (!strcmp(z, "--eval-phase")) {
            o.zEvalRe = zVal;
        } else if (!strcmp(z, "--iteration")) {
            o.zIterRe = zVal;
        } else if (!strcmp(z, "--min-bytes")) {
            o.minBytes = parse_bytes(zVal);
            if (o.minBytes < 0) vt__errorf("analyze: --min-bytes: '%s' is not a byte count", zVal), rc = VT_EXIT_USAGE;
        } else if (!strcmp(z, "--top")) {
            char *zEnd;
            long n = strtol(zVal, &zEnd, 10);
            if (*zEnd || n < 1 || n > VT_TOPMAX) vt__errorf("analyze: --top: expected 1..%d", VT_TOPMAX), rc = VT_EXIT_USAGE;
            o.nTop = (int)n;
        } else if (!strcmp(z, "--fail-on")) {
            o.failOn = vt__sev_parse(zVal);
            if (o.failOn < 0) vt__errorf("analyze: --fail-on: unknown severity '%s' (info, low, medium, high)", zVal), rc = VT_EXIT_USAGE;
        } else {
            vt__errorf("analyze: unknown option '%s' (see 'vramtrace analyze --help')", z);
            rc = VT_EXIT_USAGE;
        }
        if (rc != VT_EXIT_OK) break;
        if (bVal) i++;
    }
    if (rc == VT_EXIT_OK && nPath == 0) {
        vt__errorf("analyze: no trace given (usage: vramtrace analyze [OPTIONS] TRACE...)");
        rc = VT_EXIT_USAGE;
    }
    if (rc == VT_EXIT_OK && o.zOut) { /* never write the report over a trace */
        struct stat stOut, stIn;
        for (i = 0; i < nPath && rc == VT_EXIT_OK; i++)
            if (stat(o.zOut, &stOut) == 0 && stat(azPath[i], &stIn) == 0 && stOut.st_dev == stIn.st_dev &&
                stOut.st_ino == stIn.st_ino) {
                vt__errorf("analyze: -o %s is one of the traces; choose another report file", o.zOut);
                rc = VT_EXIT_USAGE;
            }
    }
    if (rc != VT_EXIT_OK) {
        free(azPath);
        return rc;
    }
    rc = vt__analyze(azPath, nPath, &o, &r);
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
    vt__result_free(&r);
    free(azPath);
    return rc;
}
