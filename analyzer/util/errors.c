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
    /* SQLITE_ERROR, SQLITE_MISMATCH: a reader's fixed query failed on a trace whose version was
     * checked ("no such column", a table replaced by a view, a non-integer rowid): its schema is
     * not what its version says, damage as much as a corrupt page is */
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB || rc == SQLITE_FORMAT || rc == SQLITE_ERROR ||
                   rc == SQLITE_MISMATCH
               ? VT_EXIT_CORRUPT
               : VT_EXIT_INTERNAL;
}
