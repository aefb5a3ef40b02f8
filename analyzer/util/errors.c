/* The command's one-line error messages and the mapping of SQLite errors to exit codes. */
#include "errors.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>

void vt__errorf(const char *zFmt, ...)
{
    va_list ap;
    fputs("vramtrace: ", stderr);
    va_start(ap, zFmt);
    vfprintf(stderr, zFmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int vt__exit_for_sqlite(int rc)
{
    rc &= 0xff; /* extended codes: their primary code */
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB || rc == SQLITE_FORMAT ? VT_EXIT_CORRUPT : VT_EXIT_INTERNAL;
}
