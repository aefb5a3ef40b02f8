/* Internal: the guard's checks on one value, in C, for the passes that read every row (load.c, cmd_info.c). */
#ifndef VT_ANALYZER_ROWCHECK_H
#define VT_ANALYZER_ROWCHECK_H

#include <sqlite3.h>
#include <stdint.h>

/*
 * The guard's checks (trace_open.c, aGuard, whose SQL these mirror bound for bound): a time
 * in [0, 2^62), a size in [0, 2^50], an address within +-2^62; the N forms also allow NULL.
 */
enum { VT_G_TS, VT_G_TSN, VT_G_SZ, VT_G_SZN, VT_G_AD, VT_G_ADN };

/* Does value v pass check g exactly as the guard's SQL decides? 1 yes, 0 no, -1 a real number (only SQL
 * compares those exactly: the caller leaves the table to SQL). */
int vt__guard_value(sqlite3_value *v, int g);

/* Does a time computed in C (NULL when bNull) pass check g (VT_G_TS or VT_G_TSN)? */
int vt__guard_time(int64_t v, int bNull, int g);

/*
 * The values the generated time columns of a schema-v2 row hold (schema.h, VT__START,
 * VT__END), from its stored t (argv[0]) and, when nTime is 2, dur (argv[1]): aTime[0] =
 * t + base, aTime[1] = t + dur + base; aNull[i] where the column reads NULL (a part NULL, text,
 * a blob, or an integer beyond +-2^62). Returns -1 where SQL would give something other than
 * an integer or NULL (a real number, a sum beyond int64): leave the table to SQL; 1 when a part
 * is text or a blob (NULL here, though a sum written in SQL would read it as 0); else 0.
 */
int vt__stored_times(sqlite3_value **argv, int nTime, int64_t base, int64_t *aTime, int *aNull);

#endif
