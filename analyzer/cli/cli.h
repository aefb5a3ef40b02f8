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

/*
 * The inputs of a command line, (*pazArg)[0 .. *pnArg - nTail) of the positional arguments (the last
 * nTail are passed through: the SQL of `sql`): a directory becomes the traces `vramtrace record -o
 * DIR/` writes there (vramtrace-HOST-PID.db), else its *.db files (`vramtrace import -o DIR/`), in name
 * order (none: said, and an error when it is the only input; among others it stays in the list as
 * itself, for the reader to refuse as one input not read), standard input ("-")
 * and a pipe, FIFO or character device are read into a temporary file that readers read wherever the
 * name is used (vt__import_spool). *pazArg is replaced by a list freed as the one given was (one
 * block holding the names), *pnArg by its length. Returns an enum vt_exit code after one line on
 * failure (the list is then unchanged).
 */
int vt__inputs(const char *zCmd, char ***pazArg, int *pnArg, int nTail);

/*
 * Whether the output zOut (a file to be written; NULL or "-": standard output) is one of the inputs
 * azPath[0 .. n): the same name, or the same file under another name (device and inode: ./t.db, a link).
 * Returns VT_EXIT_OK, or VT_EXIT_USAGE after one line "COMMAND: the output OUT is the trace TRACE; ...":
 * writing it would replace the trace.
 */
int vt__output_not_input(const char *zCmd, const char *zOut, char *const *azPath, int n);

#endif
