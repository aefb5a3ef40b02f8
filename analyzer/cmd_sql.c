/* The 'sql' subcommand (placeholder until implemented). */
#include "cli.h"

int vt__cmd_sql(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    vt__errorf("'sql' is not built yet");
    return VT_EXIT_INTERNAL;
}
