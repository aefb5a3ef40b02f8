/* printf() and format() for `vramtrace sql`: SQLite's own conversions, with a result past the length bound an error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"

/*
 * SQLite's printf() returns NULL when its result would pass the connection's length bound
 * (SQLITE_LIMIT_LENGTH), so a query asking for more than `sql` allows ran on with a NULL. This
 * printf() hands every conversion of the format, with the argument it takes, to
 * sqlite3_str_appendf (SQLite's own formatter: the same flags, widths, precisions and
 * conversions, %q %Q %w included), and makes a result past the bound SQLITE_TOOBIG, which `sql`
 * reports with exit 10. A width or precision that pads past the bound is refused before any
 * work (SQLite would write the padding first). The SQL-only rules are kept: %c takes the first
 * character of its argument's text, %z is %s, %n takes no argument and writes nothing, and a
 * conversion SQLite refuses in SQL (%T, %S, an unknown letter) ends the output there.
 */

/* The next argument, or NULL when they are used up (SQLite then takes 0, 0.0 or an empty text). */
static sqlite3_value *next_arg(int argc, sqlite3_value **argv, int *pi)
{
    return *pi < argc ? argv[(*pi)++] : NULL;
}

static int64_t int_arg(sqlite3_value *v)
{
    return v ? sqlite3_value_int64(v) : 0;
}

/* The code point of the first UTF-8 character of z (NULL or empty: 0). */
static unsigned first_char(const unsigned char *z)
{
    unsigned c;
    int n;
    if (!z || !z[0]) return 0;
    c = z[0];
    if (c < 0xc0) return c;
    n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
    c &= 0x3f >> n;
    for (int i = 1; i <= n && (z[i] & 0xc0) == 0x80; i++) c = c << 6 | (z[i] & 0x3f);
    return c;
}

static void sql_printf(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *zFmt = argc >= 1 ? (const char *)sqlite3_value_text(argv[0]) : NULL;
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    int64_t nMax = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
    sqlite3_str *pOut;
    int iArg = 1, rc;
    if (!zFmt) return; /* NULL, as SQLite's */
    pOut = sqlite3_str_new(db);
    for (const char *p = zFmt; *p;) {
        char zSpec[64];
        size_t n = 0;
        int64_t width = -1, prec = -1;
        const char *q = p;
        if (*p != '%') {
            while (*q && *q != '%') q++;
            sqlite3_str_append(pOut, p, (int)(q - p));
            p = q;
            continue;
        }
        /* one conversion: %[flags][width][.precision][l[l]]letter, rebuilt with * taken from the arguments */
        zSpec[n++] = '%';
        for (q = p + 1; *q && strchr("-+ #!0,", *q) && n < 20; q++) zSpec[n++] = *q;
        if (*q == '*') {
            width = int_arg(next_arg(argc, argv, &iArg));
            if (width < 0) zSpec[n++] = '-', width = width < -INT32_MAX ? INT32_MAX : -width;
            q++;
        } else if (*q >= '0' && *q <= '9') {
            for (width = 0; *q >= '0' && *q <= '9'; q++) width = width < INT32_MAX ? width * 10 + (*q - '0') : width;
        }
        if (*q == '.') {
            q++;
            if (*q == '*') {
                prec = int_arg(next_arg(argc, argv, &iArg));
                prec = prec < 0 ? (prec >= -INT32_MAX ? -prec : -1) : prec;
                q++;
            } else {
                for (prec = 0; *q >= '0' && *q <= '9'; q++) prec = prec < INT32_MAX ? prec * 10 + (*q - '0') : prec;
            }
        }
        while (*q == 'l') q++; /* SQL arguments carry their own width */
        if (!*q || !strchr("diuxXofeEgGcszqQwpr%n", *q)) break; /* %T, %S, unknown: SQLite stops here */
        if (width > nMax || (prec > nMax && !strchr("szqQw", *q))) { /* padding past the bound */
            sqlite3_free(sqlite3_str_finish(pOut));
            sqlite3_result_error_toobig(ctx);
            return;
        }
        if (width >= 0) n += (size_t)snprintf(zSpec + n, sizeof zSpec - n, "%lld", (long long)width);
        if (prec >= 0) n += (size_t)snprintf(zSpec + n, sizeof zSpec - n, ".%lld", (long long)prec);
        if (strchr("diuxXopr", *q)) zSpec[n++] = 'l', zSpec[n++] = 'l';
        zSpec[n++] = *q == 'z' ? 's' : *q;
        zSpec[n] = 0;
        switch (*q) {
        case '%': sqlite3_str_appendchar(pOut, 1, '%'); break;
        case 'n': break;
        case 'f': case 'e': case 'E': case 'g': case 'G': {
            sqlite3_value *v = next_arg(argc, argv, &iArg);
            sqlite3_str_appendf(pOut, zSpec, v ? sqlite3_value_double(v) : 0.0);
            break;
        }
        case 'c': {
            sqlite3_value *v = next_arg(argc, argv, &iArg);
            sqlite3_str_appendf(pOut, zSpec, first_char(v ? sqlite3_value_text(v) : NULL));
            break;
        }
        case 's': case 'z': case 'q': case 'Q': case 'w': { /* NULL as SQLite's printf shows it: "", "(NULL)", NULL */
            sqlite3_value *v = next_arg(argc, argv, &iArg);
            sqlite3_str_appendf(pOut, zSpec, v ? (const char *)sqlite3_value_text(v) : NULL);
            break;
        }
        default: sqlite3_str_appendf(pOut, zSpec, (long long)int_arg(next_arg(argc, argv, &iArg))); break;
        }
        p = q + 1;
        if (sqlite3_str_errcode(pOut) != SQLITE_OK) break;
    }
    rc = sqlite3_str_errcode(pOut);
    if (rc == SQLITE_OK) {
        int nOut = sqlite3_str_length(pOut);
        char *z = sqlite3_str_finish(pOut); /* NULL when nothing was written: the empty text */
        if (z) sqlite3_result_text(ctx, z, nOut, sqlite3_free);
        else sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
        return;
    }
    sqlite3_free(sqlite3_str_finish(pOut));
    if (rc == SQLITE_TOOBIG) sqlite3_result_error_toobig(ctx);
    else sqlite3_result_error_nomem(ctx);
}

int vt__sql_printf_register(sqlite3 *db)
{
    int rc = SQLITE_OK;
    static const char *const azName[] = {"printf", "format"};
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof azName / sizeof azName[0]; i++)
        rc = sqlite3_create_function(db, azName[i], -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                     sql_printf, NULL, NULL);
    return rc;
}
