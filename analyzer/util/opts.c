/* The command-line option parser of every subcommand: a table of options over getopt_long. */
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long's codes for the table's long options (ID_BASE + index: never 1, '?', ':' or a letter) and --help */
#define ID_BASE 0x1000
#define ID_HELP (ID_BASE - 1)

/* Print "vramtrace: CMD: message" to stderr (the form of every other error line). */
static void say(const struct vt_optparse *p, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct vt_optparse *p, const char *zFmt, ...)
{
    va_list ap;
    fprintf(stderr, "vramtrace: %s: ", p->zCmd);
    va_start(ap, zFmt);
    vfprintf(stderr, zFmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int vt__opt_begin(struct vt_optparse *p, const char *zCmd, int argc, char **argv, const struct vt_opt *aOpt,
                  int flags)
{
    struct option *aLong;
    size_t n = 0;
    int k = 0;
    memset(p, 0, sizeof *p);
    p->zCmd = zCmd;
    p->argc = argc;
    p->argv = argv;
    p->aOpt = aOpt;
    p->flags = flags;
    p->azArg = calloc((size_t)(argc > 0 ? argc : 1), sizeof *p->azArg);
    p->pLong = aLong = calloc(VT_OPT_MAX + 2, sizeof *aLong);
    if (!p->azArg || !aLong) {
        say(p, "out of memory");
        return VT_OPT_ERROR;
    }
    /* '+': stop at the first positional argument (record); ':': report a missing value as ':' */
    p->zShort[n++] = flags & VT_OPT_STOP ? '+' : '-';
    p->zShort[n++] = ':';
    p->zShort[n++] = 'h';
    for (; aOpt[k].zLong && k < VT_OPT_MAX; k++) {
        aLong[k].name = aOpt[k].zLong;
        aLong[k].has_arg = aOpt[k].bArg ? required_argument : no_argument;
        aLong[k].val = ID_BASE + k;
        if (aOpt[k].cShort) {
            p->zShort[n++] = (char)aOpt[k].cShort;
            if (aOpt[k].bArg) p->zShort[n++] = ':';
        }
    }
    aLong[k].name = "help";
    aLong[k].val = ID_HELP;
    p->zShort[n] = '\0';
    optind = 0; /* a fresh scan, also when a program parses several command lines */
    opterr = 0;
    return 0;
}

/* The table entry with short letter c, or NULL. */
static const struct vt_opt *by_short(const struct vt_optparse *p, int c)
{
    for (const struct vt_opt *o = p->aOpt; o->zLong; o++)
        if (o->cShort && o->cShort == c) return o;
    return NULL;
}

int vt__opt_next(struct vt_optparse *p)
{
    for (;;) {
        int c, iPrev = optind ? optind : 1;
        const struct vt_opt *o;
        if (p->bDone) return VT_OPT_END;
        c = getopt_long(p->argc, p->argv, p->zShort, (const struct option *)p->pLong, NULL);
        p->zVal = optarg;
        p->zOpt = iPrev < p->argc ? p->argv[iPrev] : "";
        switch (c) {
        case -1: /* the rest (after "--", or after the first positional argument with VT_OPT_STOP) */
            while (optind < p->argc) p->azArg[p->nArg++] = p->argv[optind++];
            p->bDone = 1;
            return VT_OPT_END;
        case 1: /* a positional argument among the options */
            p->azArg[p->nArg++] = optarg;
            continue;
        case 'h':
        case ID_HELP: return VT_OPT_HELP;
        case ':':
            say(p, "option %s needs a value (see 'vramtrace %s --help')", p->zOpt, p->zCmd);
            return VT_OPT_ERROR;
        case '?':
            if (!strncmp(p->zOpt, "--", 2) && strchr(p->zOpt, '=') && optopt >= ID_BASE)
                say(p, "option %.*s takes no value", (int)(strchr(p->zOpt, '=') - p->zOpt), p->zOpt);
            else if (strncmp(p->zOpt, "--", 2) && optopt > 0 && optopt < 128)
                say(p, "unknown option '-%c' (see 'vramtrace %s --help')", optopt, p->zCmd);
            else if (strpbrk(p->zOpt, " \t\r\n")) { /* no option has a blank: an SQL comment, words */
                int n = (int)strcspn(p->zOpt, "\t\r\n"); /* its first line, at most 40 bytes: one line said */
                say(p, "'%.*s%s' is no option (an argument that starts with '-': put -- before it)", n > 40 ? 40 : n,
                    p->zOpt, p->zOpt[n] || n > 40 ? "..." : "");
            } else
                say(p, "unknown option '%s' (see 'vramtrace %s --help')", p->zOpt, p->zCmd);
            return VT_OPT_ERROR;
        default:
            if (c >= ID_BASE && c - ID_BASE < VT_OPT_MAX) {
                /* "--name=value" names the option without its value */
                const char *zEq = strchr(p->zOpt, '=');
                if (zEq && zEq - p->zOpt < (long)sizeof p->zName) {
                    snprintf(p->zName, sizeof p->zName, "%.*s", (int)(zEq - p->zOpt), p->zOpt);
                    p->zOpt = p->zName;
                }
                return p->aOpt[c - ID_BASE].id;
            }
            o = by_short(p, c);
            if (!o) {
                say(p, "unknown option '-%c' (see 'vramtrace %s --help')", c, p->zCmd);
                return VT_OPT_ERROR;
            }
            return o->id;
        }
    }
}

void vt__opt_end(struct vt_optparse *p)
{
    free(p->azArg);
    free(p->pLong);
    p->azArg = NULL;
    p->pLong = NULL;
}

int vt__opt_int(struct vt_optparse *p, long long lo, long long hi, long long *pOut)
{
    char *zEnd;
    long long v;
    errno = 0;
    v = strtoll(p->zVal, &zEnd, 10);
    if (errno || zEnd == p->zVal || *zEnd || v < lo || v > hi) {
        say(p, "%s: expected a whole number from %lld to %lld, not '%s'", p->zOpt, lo, hi, p->zVal);
        return -1;
    }
    *pOut = v;
    return 0;
}

int vt__opt_bytes(struct vt_optparse *p, int64_t *pOut)
{
    const char *z = p->zVal;
    char *zEnd;
    double v;
    errno = 0;
    v = strtod(z, &zEnd);
    if (!errno && zEnd != z && v >= 0) {
        switch (*zEnd) {
        case 'k': case 'K': v *= 1024.0; zEnd++; break;
        case 'm': case 'M': v *= 1048576.0; zEnd++; break;
        case 'g': case 'G': v *= 1073741824.0; zEnd++; break;
        case 't': case 'T': v *= 1099511627776.0; zEnd++; break;
        default: break;
        }
        if (*zEnd == 'i' && zEnd[1] == 'B') zEnd += 2;
        else if (*zEnd == 'B') zEnd++;
        if (!*zEnd && v <= 9.0e18) {
            *pOut = (int64_t)v;
            return 0;
        }
    }
    say(p, "%s: '%s' is not a byte count (like 512, 64K, 1.5G)", p->zOpt, z);
    return -1;
}

int vt__opt_seconds(struct vt_optparse *p, int64_t *pNs)
{
    char *zEnd;
    double v;
    errno = 0;
    v = strtod(p->zVal, &zEnd);
    if (errno || zEnd == p->zVal || *zEnd || !(v >= 0) || v > 9.0e9) {
        say(p, "%s: '%s' is not a number of seconds", p->zOpt, p->zVal);
        return -1;
    }
    *pNs = (int64_t)(v * 1e9);
    return 0;
}

int vt__opt_time(struct vt_optparse *p, int64_t *pNs)
{
    static const struct {
        const char *zUnit;
        double ns;
    } aUnit[] = {{"", 1e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}, {"min", 60e9}};
    char *zEnd;
    double v;
    errno = 0;
    v = strtod(p->zVal, &zEnd);
    if (!errno && zEnd != p->zVal && v >= 0) {
        for (size_t i = 0; i < sizeof aUnit / sizeof aUnit[0]; i++) {
            if (strcmp(zEnd, aUnit[i].zUnit) != 0 || v * aUnit[i].ns > 9.0e18) continue;
            *pNs = (int64_t)(v * aUnit[i].ns + 0.5);
            return 0;
        }
    }
    say(p, "%s: '%s' is not a time (a number of seconds, or with a unit: ns, us, ms, s, min)", p->zOpt, p->zVal);
    return -1;
}

int vt__opt_choice(struct vt_optparse *p, const char *const *azChoice, int *pOut)
{
    char zList[256] = "";
    size_t n = 0;
    for (int i = 0; azChoice[i]; i++)
        if (!strcmp(p->zVal, azChoice[i])) {
            *pOut = i;
            return 0;
        }
    for (int i = 0; azChoice[i] && n < sizeof zList; i++)
        n += (size_t)snprintf(zList + n, sizeof zList - n, "%s%s", i ? ", " : "", azChoice[i]);
    say(p, "%s: unknown value '%s' (one of %s)", p->zOpt, p->zVal, zList);
    return -1;
}
