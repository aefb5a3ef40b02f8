/* Internal: the one command-line option parser of every subcommand (getopt_long underneath). */
#ifndef VT_ANALYZER_OPTS_H
#define VT_ANALYZER_OPTS_H

#include <stdint.h>

/*
 * Every subcommand declares its options in a table and loops:
 *
 *   static const struct vt_opt aOpt[] = {{"format", 0, 1, O_FORMAT}, {"output", 'o', 1, O_OUT}, {0}};
 *   struct vt_optparse p;
 *   vt__opt_begin(&p, "analyze", argc, argv, aOpt, 0);
 *   while ((c = vt__opt_next(&p)) > 0) switch (c) { case O_FORMAT: ... p.zVal ... }
 *   if (c == VT_OPT_HELP) ...; if (c == VT_OPT_ERROR) return VT_EXIT_USAGE;
 *   positional arguments: p.azArg[0 .. p.nArg-1]
 *
 * Long options take their value as `--opt value` or `--opt=value`, short ones as
 * `-o value` or `-ovalue`; `--` ends the options; -h and --help are built in. With
 * VT_OPT_STOP the options end at the first positional argument (record: the job's
 * own arguments follow), else options and positional arguments may mix.
 * Errors print one "vramtrace CMD: ..." line that names the option.
 */
struct vt_opt {
    const char *zLong; /* long name without "--"; NULL ends the table */
    int cShort;        /* short letter, 0 for none */
    int bArg;          /* 1: takes a value */
    int id;            /* what vt__opt_next returns for it (> 0) */
};

enum {
    VT_OPT_END = 0,    /* no more options */
    VT_OPT_HELP = -1,  /* -h or --help */
    VT_OPT_ERROR = -2, /* an unknown option or a missing value (message printed) */
};
#define VT_OPT_STOP 1 /* vt__opt_begin flag: options end at the first positional argument */
#define VT_OPT_MAX 32 /* options in one table at most */

struct vt_optparse {
    const char *zCmd;          /* subcommand name, for messages */
    const char *zOpt;          /* the option just returned, as written ("--format", "-o") */
    const char *zVal;          /* its value, when it takes one */
    char **azArg;              /* the positional arguments, in order */
    int nArg;
    /* internal */
    int argc, flags, bDone;
    char **argv;
    const struct vt_opt *aOpt;
    char zShort[2 * VT_OPT_MAX + 4];
    char zName[64];            /* zOpt's storage for "--name=value" */
    void *pLong;               /* struct option[VT_OPT_MAX + 2], malloc'd */
};

/* Prepare to parse argv[1..argc) (argv[0] is the subcommand). Returns 0, or VT_OPT_ERROR (out of memory). */
int vt__opt_begin(struct vt_optparse *p, const char *zCmd, int argc, char **argv, const struct vt_opt *aOpt,
                  int flags);
/* The next option's id, VT_OPT_END, VT_OPT_HELP or VT_OPT_ERROR. */
int vt__opt_next(struct vt_optparse *p);
/* Release what vt__opt_begin allocated (p->azArg included). */
void vt__opt_end(struct vt_optparse *p);

/* Value parsers for the current option: each returns 0, or prints "vramtrace CMD: --opt: ..." and returns -1. */
int vt__opt_int(struct vt_optparse *p, long long lo, long long hi, long long *pOut);
/* A byte count: "123", "64K", "1.5G", "2MiB" (K, M, G, T binary multiples). */
int vt__opt_bytes(struct vt_optparse *p, int64_t *pOut);
/* A duration in seconds ("30", "1.5", "0" for none) into nanoseconds. */
int vt__opt_seconds(struct vt_optparse *p, int64_t *pNs);
/* A time from a trace's start: seconds ("2.5"), or with a unit ("250ms", "40us", "100ns", "1.5min"). */
int vt__opt_time(struct vt_optparse *p, int64_t *pNs);
/* One of the names azChoice[0..] (NULL-terminated): its index into *pOut. */
int vt__opt_choice(struct vt_optparse *p, const char *const *azChoice, int *pOut);

#endif
