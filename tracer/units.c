/* Sizes, durations and switches as people write them (64M, 1.5m, on): one parser for the tracer's variables and record's options. */
#include "vramtrace/units.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>

/*
 * Parse a byte count: digits with an optional K, M, G or T suffix (binary, an
 * optional trailing 'B' or 'iB' allowed). Returns 0 and sets *pOut, or -1.
 */
int vt__parse_size(const char *z, size_t *pOut)
{
    char *zEnd = NULL;
    unsigned long long v;
    unsigned shift = 0;
    while (isspace((unsigned char)*z)) z++;
    if (!isdigit((unsigned char)*z)) return -1;
    errno = 0;
    v = strtoull(z, &zEnd, 10);
    if (errno || zEnd == z) return -1;
    switch (toupper((unsigned char)*zEnd)) {
    case 'K': shift = 10; zEnd++; break;
    case 'M': shift = 20; zEnd++; break;
    case 'G': shift = 30; zEnd++; break;
    case 'T': shift = 40; zEnd++; break;
    default: break;
    }
    if (shift && (*zEnd == 'i' || *zEnd == 'I')) zEnd++;
    if (*zEnd == 'B' || *zEnd == 'b') zEnd++;
    while (isspace((unsigned char)*zEnd)) zEnd++;
    if (*zEnd) return -1;
    if (shift && v > (UINT64_MAX >> shift)) return -1;
    v <<= shift;
    if (v > SIZE_MAX) return -1;
    *pOut = (size_t)v;
    return 0;
}

/*
 * Parse a duration: a non-negative decimal number of seconds with an optional unit
 * (s, m for minutes, h for hours; "90", "1.5m", "2h"), at most a year. Returns 0 and
 * sets *pNs, or -1.
 */
int vt__parse_duration(const char *z, long long *pNs)
{
    char *zEnd = NULL;
    double v, mul = 1e9;
    while (isspace((unsigned char)*z)) z++;
    if (!isdigit((unsigned char)*z) && *z != '.') return -1;
    errno = 0;
    v = strtod(z, &zEnd);
    if (errno || zEnd == z) return -1;
    switch (tolower((unsigned char)*zEnd)) {
    case 's': zEnd++; break;
    case 'm': mul = 60e9; zEnd++; break;
    case 'h': mul = 3600e9; zEnd++; break;
    default: break;
    }
    while (isspace((unsigned char)*zEnd)) zEnd++;
    if (*zEnd || !(v >= 0) || v * mul > 365.0 * 86400e9) return -1;
    *pNs = (long long)(v * mul);
    return 0;
}

int vt__parse_bool(const char *z)
{
    static const char *const azTrue[] = {"1", "true", "yes", "on"};
    static const char *const azFalse[] = {"0", "false", "no", "off"};
    size_t i;
    for (i = 0; i < sizeof azTrue / sizeof azTrue[0]; i++) {
        if (strcasecmp(z, azTrue[i]) == 0) return 1;
        if (strcasecmp(z, azFalse[i]) == 0) return 0;
    }
    return -1;
}
