/* The guard's checks on one value, in C, for the passes that read every row (load.c, cmd_info.c). */
#include "rowcheck.h"

#define LIM62 4611686018427387903LL /* 2^62 - 1 */

int vt__guard_value(sqlite3_value *v, int g)
{
    static const int64_t aLo[] = {0, 0, 0, 0, -LIM62 - 1, -LIM62 - 1};
    static const int64_t aHi[] = {LIM62, LIM62, 1125899906842624LL, 1125899906842624LL, LIM62, LIM62};
    int64_t x;
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER: x = sqlite3_value_int64(v); return x >= aLo[g] && x <= aHi[g];
    case SQLITE_NULL: return g == VT_G_TSN || g == VT_G_SZN || g == VT_G_ADN;
    case SQLITE_FLOAT: return -1;
    default: return 0; /* text and blobs sort after every number: never in range */
    }
}

int vt__guard_time(int64_t v, int bNull, int g)
{
    return bNull ? g == VT_G_TSN : v >= 0 && v <= LIM62;
}

/* One stored time (t or dur) into *p, *pNull where the generated columns read it as NULL.
 * Returns 1 for text or a blob, -1 for a real number, else 0 (as vt__stored_times). */
static int stored_part(sqlite3_value *v, int64_t *p, int *pNull)
{
    switch (sqlite3_value_type(v)) {
    case SQLITE_NULL: *pNull = 1; return 0;
    case SQLITE_INTEGER:
        *p = sqlite3_value_int64(v);
        *pNull = *p < -LIM62 - 1 || *p > LIM62;
        return 0;
    case SQLITE_FLOAT: return -1;
    default: *pNull = 1; return 1; /* text and blobs sort after every number: never in range */
    }
}

int vt__stored_times(sqlite3_value **argv, int nTime, int64_t base, int64_t *aTime, int *aNull)
{
    int64_t t = 0, dur = 0;
    int bDurNull = 0, rcT, rcD = 0;
    if ((rcT = stored_part(argv[0], &t, &aNull[0])) < 0) return -1;
    if (!aNull[0] && __builtin_add_overflow(t, base, &aTime[0])) return -1;
    if (nTime > 1) {
        if ((rcD = stored_part(argv[1], &dur, &bDurNull)) < 0) return -1;
        aNull[1] = aNull[0] || bDurNull; /* both within 2^62: t + dur cannot overflow */
        if (!aNull[1] && __builtin_add_overflow(t + dur, base, &aTime[1])) return -1;
    }
    return rcT | rcD;
}
