/* The 'analyze' subcommand (placeholder until implemented). */
#include "cli.h"

int vt__cmd_analyze(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    vt__errorf("'analyze' is not built yet");
    return VT_EXIT_INTERNAL;
}
