/* Opening and validating trace files for the subcommands, with one clear message per failure. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "schema.h"

void vt__errorf(const char *zFmt, ...)
{
    va_list ap;
    fputs("vramtrace: ", stderr);
    va_start(ap, zFmt);
    vfprintf(stderr, zFmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int vt__trace_open(const char *zPath, int bWrite, sqlite3 **pDb)
{
    struct stat st;
    sqlite3 *db = NULL;
    char zMsg[256] = "";
    int rc, flags;
    enum vt_schema_status status;

    *pDb = NULL;
    if (stat(zPath, &st) != 0) {
        vt__errorf("%s: %s", zPath, strerror(errno));
        return VT_EXIT_NOFILE;
    }
    if (S_ISDIR(st.st_mode)) {
        vt__errorf("%s: is a directory, not a trace", zPath);
        return VT_EXIT_NOFILE;
    }
    if (st.st_size == 0) {
        vt__errorf("%s: empty file, not a vramtrace trace (was the traced process killed before it started?)",
                   zPath);
        return VT_EXIT_NOT_TRACE;
    }
    /* one thread per connection: SQLite's per-call mutexes are pure cost here */
    flags = (bWrite ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
    rc = sqlite3_open_v2(zPath, &db, flags, NULL);
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot open: %s", zPath, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return VT_EXIT_NOFILE;
    }
    sqlite3_busy_timeout(db, 2000);
    status = vt__schema_check(db, NULL, zMsg, sizeof zMsg);
    switch (status) {
    case VT_SCHEMA_OK: *pDb = db; return VT_EXIT_OK;
    case VT_SCHEMA_NEWER: rc = VT_EXIT_TOO_NEW; break;
    case VT_SCHEMA_CORRUPT: rc = VT_EXIT_CORRUPT; break;
    default: rc = VT_EXIT_NOT_TRACE; break;
    }
    vt__errorf("%s: %s", zPath, zMsg);
    sqlite3_close(db);
    return rc;
}
