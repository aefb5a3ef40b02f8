/* The 'record' subcommand (placeholder until implemented). */
#include "cli.h"

int vt__cmd_record(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    vt__errorf("'record' is not built yet");
    return VT_EXIT_INTERNAL;
}
