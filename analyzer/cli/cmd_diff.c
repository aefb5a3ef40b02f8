/* The 'diff' subcommand: two runs (or two sets of ranks) analyzed and compared. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "report/report.h"
#include "util/opts.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vramtrace diff [OPTIONS] BASE NEW\n"
            "       vramtrace diff [OPTIONS] --base TRACE... --new TRACE...\n"
            "\n"
            "Compare two runs: each device's peak and what it was (the breakdown by category), the\n"
            "allocation sites that are new, gone, grew or shrank (by their highest live bytes), the\n"
            "phases' peaks, and the findings that appeared, vanished or changed severity. BASE and NEW\n"
            "are each a trace (or a file 'analyze' imports), a directory of one run's traces, one per\n"
            "rank (as analyze reads it), or - for standard input.\n"
            "Processes are paired by rank, else in order. Traces of different jobs are compared with\n"
            "a warning. A figure a run does not know reads 'unknown'; what a run has not, 'none'.\n"
            "\n"
            "options:\n"
            "  --format FMT       text (default), json, markdown or html\n"
            "  -o, --output FILE  write the comparison to FILE instead of standard output\n"
            "  --max-growth PCT   exit 1 when a device's peak grew by more than PCT percent (a CI gate);\n"
            "                     the peak analyze and info print: reserved, else allocated (the\n"
            "                     process's own where an import's memory began before its window);\n"
            "                     a peak unknown in a run is not judged (said on standard error)\n"
            "  --min-bytes N      sites that changed by less than N bytes (K, M, G) are not listed\n"
            "                     (default 1M; a change must also be 10 %% of the site's bytes)\n"
            "  --top N            list at most N sites (1 to 1000, default 20)\n"
            "  --base TRACE       a trace of BASE (repeat for several ranks)\n"
            "  --new TRACE        a trace of NEW (repeat)\n"
            "  -j, --jobs N       analyze N traces at once (default: one per online CPU)\n"
            "  -h, --help         this help\n"
            "\n"
            "exit codes: 0 ok, 1 a device's peak grew by more than --max-growth, 2 usage, 3 file\n"
            "missing or unreadable or output not writable, 4 not a trace, 5 trace from a newer\n"
            "vramtrace, 6 damaged trace, 7 internal error, 9 some traces could not be read (each is\n"
            "named; the others are compared).\n");
}

/* A percentage: a number, optionally followed by '%'. 0, or -1 with a message. */
static int parse_pct(struct vt_optparse *p, double *pOut)
{
    char *zEnd;
    double v;
    errno = 0;
    v = strtod(p->zVal, &zEnd);
    if (*zEnd == '%') zEnd++;
    if (errno || zEnd == p->zVal || *zEnd || v < 0) {
        vt__errorf("diff: %s: '%s' is not a percentage (a number such as 5 or 2.5)", p->zOpt, p->zVal);
        return -1;
    }
    *pOut = v;
    return 0;
}

/*
 * Append zArg's traces to *pazPath (*pn of them; names are malloc'd): what every reader takes zArg for
 * (vt__inputs: a trace, another tool's file, a directory's traces, standard input or a pipe read into
 * a file). Returns VT_EXIT_OK, or another enum vt_exit code after one line.
 */
static int add_paths(const char *zArg, char ***pazPath, int *pn)
{
    char **azArg = malloc(2 * sizeof *azArg), **az = NULL;
    int nArg = 1, nDone = 0, rc = azArg ? VT_EXIT_OK : VT_EXIT_INTERNAL;
    if (rc == VT_EXIT_OK) {
        azArg[0] = (char *)zArg;
        azArg[1] = NULL;
        rc = vt__inputs("diff", &azArg, &nArg, 0);
    }
    if (rc == VT_EXIT_OK && (az = realloc(*pazPath, sizeof *az * (size_t)(*pn + nArg))) != NULL) {
        *pazPath = az;
        while (nDone < nArg && (az[*pn] = vt__strdupf("%s", azArg[nDone])) != NULL) nDone++, (*pn)++;
    }
    if (rc != VT_EXIT_OK || nDone < nArg) {
        if (rc == VT_EXIT_OK || !azArg) vt__errorf("diff: out of memory");
        if (rc == VT_EXIT_OK) rc = VT_EXIT_INTERNAL;
    }
    free(azArg);
    return rc;
}

static void paths_free(char **az, int n)
{
    for (int i = 0; i < n; i++) free(az[i]);
    free(az);
}

/*
 * vramtrace diff: analyze BASE and NEW, compare them, write the comparison. Returns VT_EXIT_OK,
 * VT_EXIT_FINDINGS (--max-growth exceeded), VT_EXIT_PARTIAL (some traces not read) or the first
 * error's exit code.
 */
int vt__cmd_diff(int argc, char **argv)
{
    enum { O_FORMAT = 1, O_OUT, O_MAXG, O_MIN, O_TOP, O_BASE, O_NEW, O_JOBS };
    static const struct vt_opt aOpt[] = {
        {"format", 0, 1, O_FORMAT}, {"output", 'o', 1, O_OUT}, {"max-growth", 0, 1, O_MAXG}, {"min-bytes", 0, 1, O_MIN},
        {"top", 0, 1, O_TOP},       {"base", 0, 1, O_BASE},    {"new", 0, 1, O_NEW},         {"jobs", 'j', 1, O_JOBS},
        {NULL, 0, 0, 0}};
    static const char *const azFormat[] = {"text", "json", "markdown", "html", "md", NULL};
    struct vt_optparse p;
    struct vt_opts o;
    struct vt_result rBase, rNew;
    struct vt_diff d;
    char **azBase = NULL, **azNew = NULL;
    int nBase = 0, nNew = 0, c, k, rc = VT_EXIT_OK, rcB, rcN, nTop = 20, format = 0;
    long long n;
    double maxGrowth = -1;
    const char *zOut = NULL;
    FILE *fOut = stdout;

    vt__opts_default(&o);
    memset(&rBase, 0, sizeof rBase);
    memset(&rNew, 0, sizeof rNew);
    memset(&d, 0, sizeof d);
    if (vt__opt_begin(&p, "diff", argc, argv, aOpt, 0) != 0) return VT_EXIT_INTERNAL;
    while (rc == VT_EXIT_OK && (c = vt__opt_next(&p)) > 0) {
        int bad = 0;
        switch (c) {
        case O_FORMAT:
            bad = vt__opt_choice(&p, azFormat, &k);
            format = k == 4 ? VT_FMT_MARKDOWN : k;
            break;
        case O_OUT: zOut = p.zVal; break;
        case O_MAXG: bad = parse_pct(&p, &maxGrowth); break;
        case O_MIN: bad = vt__opt_bytes(&p, &o.minBytes); break;
        case O_TOP:
            bad = vt__opt_int(&p, 1, 1000, &n);
            nTop = (int)n;
            break;
        case O_JOBS:
            bad = vt__opt_int(&p, 1, VT_JOBS_MAX, &n);
            o.nJobs = (int)n;
            break;
        case O_BASE: rc = add_paths(p.zVal, &azBase, &nBase); break;
        case O_NEW: rc = add_paths(p.zVal, &azNew, &nNew); break;
        }
        if (bad) rc = VT_EXIT_USAGE;
    }
    if (rc == VT_EXIT_OK && c == VT_OPT_HELP) {
        usage(stdout);
        vt__opt_end(&p);
        return VT_EXIT_OK;
    }
    if (rc == VT_EXIT_OK && c == VT_OPT_ERROR) rc = VT_EXIT_USAGE;
    if (rc == VT_EXIT_OK && p.nArg == 2 && nBase == 0 && nNew == 0) {
        rc = add_paths(p.azArg[0], &azBase, &nBase);
        if (rc == VT_EXIT_OK) rc = add_paths(p.azArg[1], &azNew, &nNew);
    } else if (rc == VT_EXIT_OK && (p.nArg != 0 || nBase == 0 || nNew == 0)) {
        vt__errorf("diff: give BASE and NEW (two traces or directories), or --base and --new (usage: vramtrace diff "
                   "[OPTIONS] BASE NEW)");
        rc = VT_EXIT_USAGE;
    }
    if (rc == VT_EXIT_OK) rc = vt__output_not_input("diff", zOut, azBase, nBase); /* no comparison over a trace */
    if (rc == VT_EXIT_OK) rc = vt__output_not_input("diff", zOut, azNew, nNew);
    if (rc == VT_EXIT_OK) {
        rcB = vt__analyze((const char **)azBase, nBase, &o, &rBase);
        rcN = vt__analyze((const char **)azNew, nNew, &o, &rNew);
        if ((rcB != VT_EXIT_OK && rcB != VT_EXIT_PARTIAL) || (rcN != VT_EXIT_OK && rcN != VT_EXIT_PARTIAL))
            rc = rcB != VT_EXIT_OK && rcB != VT_EXIT_PARTIAL ? rcB : rcN;
        else if (rcB == VT_EXIT_PARTIAL || rcN == VT_EXIT_PARTIAL)
            rc = VT_EXIT_PARTIAL;
    }
    for (int k = 0; k < 2 && (rc == VT_EXIT_OK || rc == VT_EXIT_PARTIAL); k++) { /* inputs counted once, said */
        const struct vt_result *pR = k ? &rNew : &rBase;
        for (int i = 0; i < pR->nOnce; i++)
            vt__errorf("diff: note: %s", pR->aTrace[pR->aOnce[i].trace].f.azNote[pR->aOnce[i].note]);
    }
    if ((rc == VT_EXIT_OK || rc == VT_EXIT_PARTIAL) && vt__diff(&rBase, &rNew, o.minBytes, &d) != 0) {
        vt__errorf("diff: out of memory");
        rc = VT_EXIT_INTERNAL;
    }
    if ((rc == VT_EXIT_OK || rc == VT_EXIT_PARTIAL) && zOut && !(fOut = fopen(zOut, "w"))) {
        vt__errorf("%s: cannot write the comparison: %s", zOut, strerror(errno));
        rc = VT_EXIT_NOFILE;
    }
    if (rc == VT_EXIT_OK || rc == VT_EXIT_PARTIAL) {
        int w = format == VT_FMT_JSON       ? vt__diff_json(fOut, &d)
                : format == VT_FMT_MARKDOWN ? vt__diff_markdown(fOut, &d, nTop)
                : format == VT_FMT_HTML     ? vt__diff_html(fOut, &d, nTop)
                                            : vt__diff_text(fOut, &d, nTop);
        if (fflush(fOut) != 0 || w != 0 || (fOut != stdout && fclose(fOut) != 0)) {
            vt__errorf("%s: cannot write the comparison: %s", zOut ? zOut : "standard output", strerror(errno));
            rc = VT_EXIT_NOFILE;
        }
        if (d.zWarn) vt__errorf("diff: warning: %s", d.zWarn);
        if (maxGrowth >= 0) { /* a peak not known is not judged by the gate: said, not passed in silence */
            int nUnknown = 0;
            for (int i = 0; i < d.nDev; i++) nUnknown += d.aDev[i].base == -1 || d.aDev[i].cur == -1;
            if (d.iMaxGrowth < 0)
                vt__errorf("diff: --max-growth: no device peak could be compared (%d unknown, the others in one run "
                           "only): nothing judged", nUnknown);
            else if (nUnknown)
                vt__errorf("diff: --max-growth: %d device peak%s unknown in a run, not judged", nUnknown,
                           nUnknown == 1 ? "" : "s");
        }
        if (rc == VT_EXIT_OK && maxGrowth >= 0 && d.iMaxGrowth >= 0 && d.maxGrowthPct > maxGrowth) {
            char zD[32];
            const struct vt_diffdev *e = &d.aDev[d.iMaxGrowth];
            vt__errorf("diff: %s, device %d: the peak (%s) grew by %.1f%% to %s, more than --max-growth %g%%", e->zProc,
                       e->id, vt__fig_headline_name(e->aOf[1], 0), d.maxGrowthPct, vt__fmt_bytes(e->cur, zD, sizeof zD),
                       maxGrowth);
            rc = VT_EXIT_FINDINGS;
        }
    }
    vt__diff_free(&d);
    vt__result_free(&rBase);
    vt__result_free(&rNew);
    paths_free(azBase, nBase);
    paths_free(azNew, nNew);
    vt__opt_end(&p);
    vt__sym_reset();
    return rc;
}
