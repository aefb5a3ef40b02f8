/* Internal: the guard's checks on one value, in C, for the scan that reads every row (inline: per row and column). */
#ifndef VT_ANALYZER_ROWCHECK_H
#define VT_ANALYZER_ROWCHECK_H

#include <sqlite3.h>
#include <stdint.h>

/*
 * The value domains of schema.h's VT_DOMAIN_LIST, checked exactly as guard.c's SQL
 * checks them, bound for bound: a time NULL (unknown) or in [0, 2^62); a size in
 * [0, 2^50], maybe NULL; an address any integer (an unsigned 64-bit pattern), maybe NULL; any integer or NULL.
 */
enum vt_dom { VT_DOM_TIME, VT_DOM_SIZE, VT_DOM_SIZEN, VT_DOM_ADDR, VT_DOM_ADDRN, VT_DOM_U64 };

#define VT__LIM62 4611686018427387903LL /* 2^62 - 1 */
#define VT__SIZE_MAX 1125899906842624LL /* 2^50: 1 PiB */

/* Does value v lie in domain d exactly as the guard's SQL decides? 1 yes, 0 no, -1 a real number (only SQL
 * compares those exactly: the caller leaves the table to SQL). */
static inline int vt__dom_value(sqlite3_value *v, int d)
{
    int64_t x;
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
        x = sqlite3_value_int64(v);
        switch (d) {
        case VT_DOM_TIME: return x >= 0 && x <= VT__LIM62;
        case VT_DOM_SIZE:
        case VT_DOM_SIZEN: return x >= 0 && x <= VT__SIZE_MAX;
        default: return 1; /* an address: every 64-bit pattern is one */
        }
    case SQLITE_NULL: return d == VT_DOM_TIME || d == VT_DOM_SIZEN || d == VT_DOM_ADDRN || d == VT_DOM_U64;
    case SQLITE_FLOAT: return d >= VT_DOM_ADDR ? 0 : -1; /* addresses and U64 ask typeof() = 'integer' */
    default: return 0; /* text and blobs sort after every number: never in range */
    }
}

/* What a stored time part (t or dur) says. */
enum { VT_TIME_KNOWN, VT_TIME_UNKNOWN, VT_TIME_BAD, VT_TIME_SQL };

/* One stored part into *p: known (an integer within +-2^62), unknown (NULL), bad (text, a blob, an integer
 * beyond +-2^62: the generated column reads NULL though the part is not) or SQL's to judge (a real number). */
static inline int vt__stored_part(sqlite3_value *v, int64_t *p)
{
    switch (sqlite3_value_type(v)) {
    case SQLITE_NULL: return VT_TIME_UNKNOWN;
    case SQLITE_INTEGER:
        *p = sqlite3_value_int64(v);
        return *p < -VT__LIM62 - 1 || *p > VT__LIM62 ? VT_TIME_BAD : VT_TIME_KNOWN;
    case SQLITE_FLOAT: return VT_TIME_SQL;
    default: return VT_TIME_BAD;
    }
}

/*
 * The times of a row from its stored parts as vt__stored_part judged them (sT with t; sD with
 * dur, VT_TIME_UNKNOWN when the row has no dur), checked as the guard checks them: aTime[0] =
 * t + base (the start, or the instant), aTime[1] = t + dur + base (the end); aKnown[i] whether
 * that time is known. Returns 1 when the row's times are possible, 0 when impossible, -1 where
 * only SQL can judge (a real number, a sum beyond int64).
 */
static inline int vt__part_times(int sT, int64_t t, int sD, int64_t dur, int64_t base, int64_t *aTime, int *aKnown)
{
    if (sT == VT_TIME_SQL || sD == VT_TIME_SQL) return -1;
    aKnown[0] = aKnown[1] = 0;
    if (sT == VT_TIME_BAD) return 0;
    if (sT == VT_TIME_UNKNOWN) return 1; /* start unknown: the end too, whatever dur holds */
    if (__builtin_add_overflow(t, base, &aTime[0])) return -1;
    if (aTime[0] < 0 || aTime[0] > VT__LIM62) return 0;
    aKnown[0] = 1;
    if (sD == VT_TIME_UNKNOWN) return 1;
    if (sD == VT_TIME_BAD) return 0;
    if (__builtin_add_overflow(aTime[0], dur, &aTime[1])) return -1; /* both within 2^62: cannot, but cheap */
    if (aTime[1] < 0 || aTime[1] > VT__LIM62) return 0;
    aKnown[1] = 1;
    return 1;
}

/*
 * vt__part_times of a schema-2+ row from its stored t (argv[0]) and, when nTime is 2, dur
 * (argv[1]): the times its generated columns hold.
 */
static inline int vt__stored_times(sqlite3_value **argv, int nTime, int64_t base, int64_t *aTime, int *aKnown)
{
    int64_t t = 0, dur = 0;
    int sT = vt__stored_part(argv[0], &t), sD = nTime > 1 ? vt__stored_part(argv[1], &dur) : VT_TIME_UNKNOWN;
    return vt__part_times(sT, t, sD, dur, base, aTime, aKnown);
}

#endif
