/* Internal: the guard's checks on one value, in C, for the passes that read every row (load.c, cmd_info.c);
 * inline: they run once or twice per row and column. */
#ifndef VT_ANALYZER_ROWCHECK_H
#define VT_ANALYZER_ROWCHECK_H

#include <sqlite3.h>
#include <stdint.h>

/*
 * The guard's checks (trace_open.c, aGuard, whose SQL these mirror bound for bound): a time
 * in [0, 2^62), a size in [0, 2^50], an address within +-2^62; the N forms also allow NULL.
 */
enum { VT_G_TS, VT_G_TSN, VT_G_SZ, VT_G_SZN, VT_G_AD, VT_G_ADN };

#define VT__LIM62 4611686018427387903LL /* 2^62 - 1 */

/* Does value v pass check g exactly as the guard's SQL decides? 1 yes, 0 no, -1 a real number (only SQL
 * compares those exactly: the caller leaves the table to SQL). */
static inline int vt__guard_value(sqlite3_value *v, int g)
{
    static const int64_t aLo[] = {0, 0, 0, 0, -VT__LIM62 - 1, -VT__LIM62 - 1};
    static const int64_t aHi[] = {VT__LIM62, VT__LIM62, 1125899906842624LL, 1125899906842624LL,
                                  VT__LIM62, VT__LIM62};
    int64_t x;
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER: x = sqlite3_value_int64(v); return x >= aLo[g] && x <= aHi[g];
    case SQLITE_NULL: return g == VT_G_TSN || g == VT_G_SZN || g == VT_G_ADN;
    case SQLITE_FLOAT: return -1;
    default: return 0; /* text and blobs sort after every number: never in range */
    }
}

/* Does a time computed in C (NULL when bNull) pass check g (VT_G_TS or VT_G_TSN)? */
static inline int vt__guard_time(int64_t v, int bNull, int g)
{
    return bNull ? g == VT_G_TSN : v >= 0 && v <= VT__LIM62;
}

/* One stored time (t or dur) into *p, *pNull where the generated columns read it as NULL.
 * Returns 1 for text or a blob, -1 for a real number, else 0 (as vt__stored_times). */
static inline int vt__stored_part(sqlite3_value *v, int64_t *p, int *pNull)
{
    switch (sqlite3_value_type(v)) {
    case SQLITE_NULL: *pNull = 1; return 0;
    case SQLITE_INTEGER:
        *p = sqlite3_value_int64(v);
        *pNull = *p < -VT__LIM62 - 1 || *p > VT__LIM62;
        return 0;
    case SQLITE_FLOAT: return -1;
    default: *pNull = 1; return 1; /* text and blobs sort after every number: never in range */
    }
}

/*
 * The values the generated time columns of a schema-v2 row hold (schema.h, VT__START,
 * VT__END), from its stored t (argv[0]) and, when nTime is 2, dur (argv[1]): aTime[0] =
 * t + base, aTime[1] = t + dur + base; aNull[i] where the column reads NULL (a part NULL, text,
 * a blob, or an integer beyond +-2^62). Returns -1 where SQL would give something other than
 * an integer or NULL (a real number, a sum beyond int64): leave the table to SQL; 1 when a part
 * is text or a blob (NULL here, though a sum written in SQL would read it as 0); else 0.
 */
static inline int vt__stored_times(sqlite3_value **argv, int nTime, int64_t base, int64_t *aTime,
                                   int *aNull)
{
    int64_t t = 0, dur = 0;
    int bDurNull = 0, rcT, rcD = 0;
    if ((rcT = vt__stored_part(argv[0], &t, &aNull[0])) < 0) return -1;
    if (!aNull[0] && __builtin_add_overflow(t, base, &aTime[0])) return -1;
    if (nTime > 1) {
        if ((rcD = vt__stored_part(argv[1], &dur, &bDurNull)) < 0) return -1;
        aNull[1] = aNull[0] || bDurNull; /* both within 2^62: t + dur cannot overflow */
        if (!aNull[1] && __builtin_add_overflow(t + dur, base, &aTime[1])) return -1;
    }
    return rcT | rcD;
}

#endif
