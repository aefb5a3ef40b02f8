/* Helpers every benchmark prints its figures with: the machine's load beside each. */
#ifndef VT_BENCH_UTIL_H
#define VT_BENCH_UTIL_H

#include <stdio.h>

/* The 1-minute load average now ("?" when /proc/loadavg cannot be read), into z. */
static inline const char *vt_bench_load_avg(char *z, size_t n)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double a = -1;
    if (f && fscanf(f, "%lf", &a) == 1) snprintf(z, n, "%.2f", a);
    else snprintf(z, n, "?");
    if (f) fclose(f);
    return z;
}

#endif
