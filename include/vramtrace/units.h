/* Sizes, durations and switches as people write them (64M, 1.5m, on): one parser for the tracer's variables and record's options. */
#ifndef VRAMTRACE_UNITS_H
#define VRAMTRACE_UNITS_H

#include <stddef.h>

/*
 * A byte count: digits with an optional K, M, G or T suffix (binary units; a
 * trailing B or iB allowed). Returns 0 and sets *pOut, or -1.
 */
int vt__parse_size(const char *z, size_t *pOut);

/*
 * A duration: a non-negative decimal number of seconds with an optional unit
 * (s, m for minutes, h for hours; "90", "1.5m", "2h"), at most a year. Returns 0
 * and sets *pNs, or -1.
 */
int vt__parse_duration(const char *z, long long *pNs);

/* A switch: 1/0, true/false, yes/no, on/off (any case). Returns 1, 0 or -1. */
int vt__parse_bool(const char *z);

#endif
