/* The 'export' subcommand (placeholder until implemented). */
#include "cli.h"

int vt__cmd_export(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    vt__errorf("'export' is not built yet");
    return VT_EXIT_INTERNAL;
}
