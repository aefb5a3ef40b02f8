/* The vramtrace command: dispatch to the record, analyze, diff, info, sql, export, import, upgrade and redact subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *zName;
    int (*xRun)(int, char **);
    const char *zSummary;
} aCmd[] = {
    {"record", vt__cmd_record, "run a command under the tracer, one trace per process"},
    {"analyze", vt__cmd_analyze, "find leaks, retained memory, spikes, slow copies and OOM causes"},
    {"diff", vt__cmd_diff, "compare two runs: peaks and what they were, sites, phases, findings"},
    {"info", vt__cmd_info, "devices, versions, duration, event counts, drops of a trace"},
    {"sql", vt__cmd_sql, "run read-only SQL over one or more traces"},
    {"export", vt__cmd_export, "a Perfetto (Chrome trace-event) file, CSV tables or a PyTorch snapshot"},
    {"import", vt__cmd_import, "PyTorch snapshots, Nsight exports, torch.profiler traces to traces"},
    {"upgrade", vt__cmd_upgrade, "bring traces of older versions to the current schema"},
    {"redact", vt__cmd_redact, "a copy of a trace safe to share (names and paths replaced)"},
};

static void usage(FILE *f)
{
    size_t i;
    fprintf(f, "usage: vramtrace COMMAND [OPTIONS] ...\n\n"
               "Record and explain GPU memory use of CUDA processes.\n\ncommands:\n");
    for (i = 0; i < sizeof aCmd / sizeof aCmd[0]; i++)
        fprintf(f, "  %-8s %s\n", aCmd[i].zName, aCmd[i].zSummary);
    fprintf(f, "\nRun 'vramtrace COMMAND --help' or 'vramtrace help COMMAND' for its options.\n"
               "Exit codes: 0 ok, 1 findings (analyze --fail-on) or growth (diff --max-growth),\n"
               "2 usage, 3 file missing or unreadable, 4 not a trace (or a format import does not\n"
               "read), 5 trace from a newer vramtrace, 6 damaged trace or damaged input, 7 internal\n"
               "error, 8 tracer library not found, 9 some of several traces not read (each named),\n"
               "10 sql query stopped at a limit; record returns the job's status (126 a command\n"
               "that cannot be run, 127 one not found, as a shell).\n"
               "See docs/cli.md.\n");
}

int main(int argc, char **argv)
{
    size_t i;
    if (argc >= 3 && !strcmp(argv[1], "help")) { /* vramtrace help COMMAND: that command's help */
        char zHelp[] = "--help";
        char *azArgv[] = {argv[2], zHelp, NULL};
        for (i = 0; i < sizeof aCmd / sizeof aCmd[0]; i++)
            if (!strcmp(argv[2], aCmd[i].zName)) return aCmd[i].xRun(2, azArgv);
        vt__errorf("unknown command '%s' (try 'vramtrace --help')", argv[2]);
        return VT_EXIT_USAGE;
    }
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? VT_EXIT_USAGE : VT_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("vramtrace %s\n", VT_VERSION);
        return VT_EXIT_OK;
    }
    for (i = 0; i < sizeof aCmd / sizeof aCmd[0]; i++)
        if (!strcmp(argv[1], aCmd[i].zName)) return aCmd[i].xRun(argc - 1, argv + 1);
    vt__errorf("unknown command '%s' (try 'vramtrace --help')", argv[1]);
    return VT_EXIT_USAGE;
}
