/* Internal: the subcommands' entry points. */
#ifndef VT_ANALYZER_CLI_H
#define VT_ANALYZER_CLI_H

#include "util/errors.h"

/* Each subcommand: argv[0] is the subcommand name. Returns an enum vt_exit value
 * (record returns the traced job's own exit status). */
int vt__cmd_record(int argc, char **argv);
int vt__cmd_analyze(int argc, char **argv);
int vt__cmd_diff(int argc, char **argv);
int vt__cmd_info(int argc, char **argv);
int vt__cmd_sql(int argc, char **argv);
int vt__cmd_export(int argc, char **argv);
int vt__cmd_import(int argc, char **argv);
int vt__cmd_upgrade(int argc, char **argv);
int vt__cmd_redact(int argc, char **argv);

#endif
