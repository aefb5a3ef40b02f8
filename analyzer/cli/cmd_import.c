/* The 'import' subcommand: PyTorch snapshots, Nsight Systems exports and torch.profiler traces to vramtrace traces. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "import.h"
#include "util/dirs.h"
#include "util/opts.h"
#include "util/text.h"

/* The subcommand's help text. */
static void usage(FILE *f)
{
    fprintf(f,
            "usage: vramtrace import [-o OUT] [--pid PID] [-f|--force] [-q|--quiet] FILE...\n\n"
            "Write a vramtrace trace for each FILE, recognized from its content (not its name):\n"
            "  - a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot pickle, plain or\n"
            "    gzip'd; read by a restricted reader that refuses any pickle naming code),\n"
            "  - an Nsight Systems SQLite export (nsys export --type sqlite): one trace per\n"
            "    process with CUDA activity,\n"
            "  - a torch.profiler / Kineto trace (JSON, plain or gzip'd), best recorded with\n"
            "    profile_memory=True.\n"
            "analyze, info, sql and export also read these files directly.\n\n"
            "options:\n"
            "  -o, --output OUT  where to write (default %%n.db): a directory (existing, or\n"
            "                    ending in '/': created when missing) gets NAME.db per input,\n"
            "                    or a pattern where %%n is the input's name without its\n"
            "                    suffixes, %%p the process id (Nsight; without %%p a\n"
            "                    multi-process export's traces get .PID before their\n"
            "                    suffix), %%%% a '%%'\n"
            "  --pid PID         Nsight export: only this process\n"
            "  -f, --force       replace existing output files\n"
            "  -q, --quiet       no notes, only errors\n"
            "  -h, --help        this text\n\n"
            "Each trace has meta rows source_format and source_file; notes about what the\n"
            "source leaves unknown are printed and kept as meta import_note.N. See\n"
            "docs/import.md.\n\n"
            "Exit codes: 0 ok, 2 bad arguments, 3 input missing or output not writable (or\n"
            "existing without --force), 4 not a format vramtrace imports (or a pickle that\n"
            "names code), 5 a newer format (pickle protocol > 5), 6 damaged or truncated\n"
            "input, 7 internal error. With several inputs: the first failure's code, after\n"
            "trying them all.\n");
}

/* The input's name without directory and known suffixes, into z (size n). */
static void base_name(const char *zIn, char *z, size_t n)
{
    static const char *const azSuffix[] = {".gz", ".json", ".trace", ".pt", ".pickle", ".pkl", ".sqlite", ".db",
                                           ".nsys-rep"};
    const char *zSlash = strrchr(zIn, '/');
    size_t len;
    int bCut = 1;
    snprintf(z, n, "%s", !strcmp(zIn, "-") ? "stdin" : zSlash ? zSlash + 1 : zIn);
    while (bCut) {
        bCut = 0;
        len = strlen(z);
        for (size_t i = 0; i < sizeof azSuffix / sizeof azSuffix[0]; i++) {
            size_t k = strlen(azSuffix[i]);
            if (len > k && !strcmp(z + len - k, azSuffix[i])) {
                z[len - k] = 0;
                bCut = 1;
                break;
            }
        }
    }
    if (!z[0]) snprintf(z, n, "trace");
}

/*
 * The output path for input zIn (process pid, -1 when none) from zOut into z
 * (size n). bMulti: the input yields several traces. Returns 0, or -1 when it
 * does not fit.
 */
static int out_path(const char *zOut, const char *zIn, int64_t pid, int bMulti, char *z, size_t n)
{
    char zName[512], zPid[32];
    struct stat st;
    size_t len = strlen(zOut), o = 0;
    int bPid = strstr(zOut, "%p") != NULL;
    base_name(zIn, zName, sizeof zName);
    snprintf(zPid, sizeof zPid, "%lld", (long long)(pid >= 0 ? pid : 0));
    if ((len && zOut[len - 1] == '/') || (stat(zOut, &st) == 0 && S_ISDIR(st.st_mode))) {
        int k = bMulti ? snprintf(z, n, "%s%s%s.%s.db", zOut, zOut[len - 1] == '/' ? "" : "/", zName, zPid)
                       : snprintf(z, n, "%s%s%s.db", zOut, zOut[len - 1] == '/' ? "" : "/", zName);
        return k < 0 || (size_t)k >= n ? -1 : 0;
    }
    for (const char *p = zOut; *p; p++) {
        const char *zAdd = NULL;
        char c[2] = {*p, 0};
        if (*p == '%' && p[1] == 'n') zAdd = zName, p++;
        else if (*p == '%' && p[1] == 'p') zAdd = zPid, p++;
        else if (*p == '%' && p[1] == '%') zAdd = "%", p++;
        else zAdd = c;
        for (; *zAdd; zAdd++) {
            if (o + 1 >= n) return -1;
            z[o++] = *zAdd;
        }
    }
    z[o] = 0;
    if (bMulti && !bPid) { /* NAME.PID.db: before the last suffix */
        char *zDot = strrchr(z, '.'), *zSlash = strrchr(z, '/');
        char zTail[256];
        if (!zDot || (zSlash && zDot < zSlash)) zDot = z + o;
        snprintf(zTail, sizeof zTail, "%s", zDot);
        if ((size_t)(zDot - z) + strlen(zPid) + 1 + strlen(zTail) + 1 > n) return -1;
        sprintf(zDot, ".%s%s", zPid, zTail);
    }
    return 0;
}

/* Parsed options; the inputs are p.azArg[0 .. p.nArg). */
struct opts {
    const char *zOut;
    int64_t pid;
    struct vt_import_opts o;
    struct vt_optparse p;
    char **azDone; /* the outputs this run wrote, each followed by its input: azDone[2k], azDone[2k+1] */
    int nDone;
};

/*
 * Import one process (pid, -1 for the whole file) of input zIn (read from zFile) into zOut, unless this run
 * already wrote zOut from another input: two inputs whose names give one output (a/x.pickle and b/x.pickle
 * under -o DIR/), where the second would replace the first (with --force) or be refused as if the file had
 * been there before (the same input given again is imported once, and said). Returns an exit code
 * (VT_EXIT_USAGE for such a clash, one line said).
 */
static int import_to(struct opts *p, const char *zIn, const char *zFile, int fmt, int64_t pid, const char *zOut)
{
    char **az;
    int rc = vt__output_not_input("import", zOut, (char *const *)&zIn, 1); /* never over its input, --force or not */
    if (rc != VT_EXIT_OK) return rc;
    for (int i = 0; i < p->nDone; i++)
        if (!strcmp(p->azDone[2 * i], zOut) && !strcmp(p->azDone[2 * i + 1], zIn)) {
            if (!p->o.bQuiet) vt__errorf("%s: note: given again, imported once (to %s)", zIn, zOut);
            return VT_EXIT_OK;
        } else if (!strcmp(p->azDone[2 * i], zOut)) {
            vt__errorf("import: %s and %s would both be written to %s: give -o a pattern that tells them apart, or "
                       "import them one at a time", p->azDone[2 * i + 1], zIn, zOut);
            return VT_EXIT_USAGE;
        }
    rc = vt__import_one(zFile, fmt, pid, zOut, &p->o, NULL);
    if (rc != VT_EXIT_OK) return rc;
    if (!(az = realloc(p->azDone, sizeof *az * (size_t)(2 * p->nDone + 2)))) return VT_EXIT_OK; /* unchecked then */
    p->azDone = az;
    az[2 * p->nDone] = vt__strdupf("%s", zOut);
    az[2 * p->nDone + 1] = vt__strdupf("%s", zIn);
    if (az[2 * p->nDone] && az[2 * p->nDone + 1]) {
        p->nDone++;
    } else {
        free(az[2 * p->nDone]);
        free(az[2 * p->nDone + 1]);
    }
    return VT_EXIT_OK;
}

/* Parse argv with the subcommands' option parser. Returns -1 to go on, else an exit code. */
static int parse_args(int argc, char **argv, struct opts *p)
{
    enum { O_OUT = 1, O_PID, O_FORCE, O_QUIET };
    static const struct vt_opt aOpt[] = {{"output", 'o', 1, O_OUT},
                                         {"pid", 0, 1, O_PID},
                                         {"force", 'f', 0, O_FORCE},
                                         {"quiet", 'q', 0, O_QUIET},
                                         {NULL, 0, 0, 0}};
    int c;
    long long v;
    memset(p, 0, sizeof *p);
    p->zOut = "%n.db";
    p->pid = -1;
    if (vt__opt_begin(&p->p, "import", argc, argv, aOpt, 0) != 0) {
        vt__errorf("import: out of memory");
        return VT_EXIT_INTERNAL;
    }
    while ((c = vt__opt_next(&p->p)) > 0) {
        switch (c) {
        case O_OUT: p->zOut = p->p.zVal; break;
        case O_FORCE: p->o.bForce = 1; break;
        case O_QUIET: p->o.bQuiet = 1; break;
        case O_PID:
            if (vt__opt_int(&p->p, 0, INT64_MAX, &v) != 0) return VT_EXIT_USAGE;
            p->pid = v;
            break;
        }
    }
    if (c == VT_OPT_HELP) {
        usage(stdout);
        return VT_EXIT_OK;
    }
    if (c == VT_OPT_ERROR) return VT_EXIT_USAGE;
    if (p->p.nArg == 0) { /* one line, as every command says what it lacks */
        vt__errorf("import: no file given (usage: vramtrace import [-o OUT] [--pid PID] [-f|--force] [-q|--quiet] "
                   "FILE...)");
        return VT_EXIT_USAGE;
    }
    if (p->zOut[0] && p->zOut[strlen(p->zOut) - 1] == '/' && !strchr(p->zOut, '%') && vt__make_dirs(p->zOut) != 0) {
        vt__errorf("import: cannot create the output directory %s: %s", p->zOut, strerror(errno));
        return VT_EXIT_NOFILE;
    }
    if (p->p.nArg > 1 && !strstr(p->zOut, "%n")) {
        struct stat st;
        size_t len = strlen(p->zOut);
        if (!(len && p->zOut[len - 1] == '/') && !(stat(p->zOut, &st) == 0 && S_ISDIR(st.st_mode))) {
            vt__errorf("import: %d inputs need -o with %%n or a directory, not '%s'", p->p.nArg, p->zOut);
            return VT_EXIT_USAGE;
        }
    }
    return -1;
}

/* Import one input (every process of an Nsight export). Returns an exit code. */
static int import_input(const char *zIn, struct opts *p, int64_t *pnTraces)
{
    char zErr[256], zOut[4096];
    int fmt, rc = vt__import_spool(zIn); /* standard input or a pipe: read into a file first */
    const char *zFile = vt__import_temp_path(zIn);
    int64_t *aPid = NULL, *aEv = NULL;
    int nPid = 0, nPick = 0, rcAll = VT_EXIT_OK;
    if (rc != VT_EXIT_OK) return rc;
    rc = vt__import_detect(zFile, &fmt, zErr, sizeof zErr);
    if (rc != VT_EXIT_OK) {
        vt__errorf("%s: %s", zIn, zErr);
        return rc;
    }
    switch (fmt) {
    case VT_IMPORT_TRACE:
        vt__errorf("%s: already a vramtrace trace: nothing to import", zIn);
        return VT_EXIT_NOT_TRACE;
    case VT_IMPORT_UNKNOWN:
        vt__errorf("%s: not a format vramtrace imports (" VT_IMPORT_FORMATS ")", zIn);
        return VT_EXIT_NOT_TRACE;
    case VT_IMPORT_NSYS:
        rc = vt__nsys_pids(zFile, &aPid, &aEv, &nPid, zErr, sizeof zErr);
        if (rc != VT_EXIT_OK) {
            vt__errorf("%s: %s", zIn, zErr);
            return rc;
        }
        for (int i = 0; i < nPid; i++) {
            if (p->pid >= 0 && aPid[i] != p->pid) continue;
            nPick++;
        }
        if (p->pid >= 0 && !nPick) {
            vt__errorf("%s: process %lld has no CUDA activity in this export", zIn, (long long)p->pid);
            rcAll = VT_EXIT_USAGE;
        }
        for (int i = 0; i < nPid && rcAll == VT_EXIT_OK; i++) {
            if (p->pid >= 0 && aPid[i] != p->pid) continue;
            if (out_path(p->zOut, zIn, aPid[i], nPick > 1, zOut, sizeof zOut) != 0) {
                vt__errorf("import: output path too long");
                rcAll = VT_EXIT_USAGE;
                break;
            }
            rc = import_to(p, zIn, zFile, fmt, aPid[i], zOut);
            if (rc == VT_EXIT_OK) {
                printf("%s: process %lld -> %s\n", zIn, (long long)aPid[i], zOut);
                ++*pnTraces;
            } else if (rcAll == VT_EXIT_OK) {
                rcAll = rc;
            }
        }
        free(aPid);
        free(aEv);
        return rcAll;
    default:
        if (p->pid >= 0 && !p->o.bQuiet) /* one process per file: said, not ignored in silence */
            vt__errorf("%s: note: --pid %lld left aside: a %s file holds one process, imported whole", zIn,
                       (long long)p->pid, vt__import_format_name(fmt));
        if (out_path(p->zOut, zIn, -1, 0, zOut, sizeof zOut) != 0) {
            vt__errorf("import: output path too long");
            return VT_EXIT_USAGE;
        }
        rc = import_to(p, zIn, zFile, fmt, -1, zOut);
        if (rc == VT_EXIT_OK) {
            printf("%s: %s -> %s\n", zIn, vt__import_format_name(fmt), zOut);
            ++*pnTraces;
        }
        return rc;
    }
}

int vt__cmd_import(int argc, char **argv)
{
    struct opts p;
    int rc = parse_args(argc, argv, &p), rcAll = VT_EXIT_OK;
    int64_t nTraces = 0;
    if (rc >= 0) {
        vt__opt_end(&p.p);
        return rc;
    }
    for (int i = 0; i < p.p.nArg; i++) {
        rc = import_input(p.p.azArg[i], &p, &nTraces);
        if (rc != VT_EXIT_OK && rcAll == VT_EXIT_OK) rcAll = rc;
    }
    for (int i = 0; i < 2 * p.nDone; i++) free(p.azDone[i]);
    free(p.azDone);
    vt__opt_end(&p.p);
    return rcAll;
}
