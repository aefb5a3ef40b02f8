/* The command's one-line error messages and the mapping of SQLite errors to exit codes. */
#include "errors.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void vt__errorf(const char *zFmt, ...)
{
    va_list ap;
    fputs("vramtrace: ", stderr);
    va_start(ap, zFmt);
    vfprintf(stderr, zFmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static const char *azSaid[16]; /* vt__input_said's names */

void vt__input_said(const char *zName)
{
    for (size_t i = 0; i < sizeof azSaid / sizeof azSaid[0]; i++)
        if (!azSaid[i]) {
            azSaid[i] = zName;
            return;
        }
}

int vt__input_was_said(const char *zName)
{
    for (size_t i = 0; i < sizeof azSaid / sizeof azSaid[0] && azSaid[i]; i++)
        if (!strcmp(azSaid[i], zName)) return 1;
    return 0;
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

int vt__sqlite_path_max(void)
{
    sqlite3_vfs *pVfs = sqlite3_vfs_find(NULL);
    return (pVfs ? pVfs->mxPathname : 512) - 8; /* the journal's name is the path and "-journal" */
}

const char *vt__sqlite_open_error(sqlite3 *db, int rc, const char *zFile, char *z, size_t nZ)
{
    const char *zWhy = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    size_t nPath = strlen(zFile);
    char zCwd[PATH_MAX];
    if (zFile[0] != '/' && getcwd(zCwd, sizeof zCwd)) nPath += strlen(zCwd) + 1; /* SQLite makes it absolute */
    if ((rc & 0xff) == SQLITE_CANTOPEN && nPath > (size_t)vt__sqlite_path_max()) /* its message: the path, cut */
        snprintf(z, nZ, "its absolute path is %zu bytes long, and SQLite opens no file at a path over about %d bytes: "
                 "use a shorter path", nPath, vt__sqlite_path_max());
    else if ((rc & 0xff) == SQLITE_CANTOPEN && db && sqlite3_system_errno(db) != 0) /* the system's reason */
        snprintf(z, nZ, "%s: %s", zWhy, strerror(sqlite3_system_errno(db)));
    else
        snprintf(z, nZ, "%s", zWhy);
    return z;
}
