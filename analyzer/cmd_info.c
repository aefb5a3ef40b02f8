/* The 'info' subcommand (placeholder until implemented). */
#include "cli.h"

int vt__cmd_info(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    vt__errorf("'info' is not built yet");
    return VT_EXIT_INTERNAL;
}
