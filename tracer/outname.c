/* Trace file names: expanding and checking the output pattern (%p, %r, %h, %%), and whether a file there is a trace. */
#include "vramtrace/outname.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vramtrace/schema.h"

const char *vt__outname_bad_escape(const char *zPattern)
{
    for (const char *p = zPattern; *p; p++) {
        if (*p != '%') continue;
        if (p[1] != 'p' && p[1] != 'r' && p[1] != 'h' && p[1] != '%') return p;
        p++;
    }
    return NULL;
}

/* Append z[0..n) to zOut (size nOut, length *pLen), escaping glob metacharacters when bGlob; 0 or -1 (full). */
static int put(char *zOut, size_t nOut, size_t *pLen, const char *z, size_t n, int bGlob)
{
    for (size_t i = 0; i < n; i++) {
        int bEsc = bGlob && strchr("*?[]\\", z[i]) != NULL;
        if (*pLen + (size_t)bEsc + 1 >= nOut) return -1;
        if (bEsc) zOut[(*pLen)++] = '\\';
        zOut[(*pLen)++] = z[i];
    }
    zOut[*pLen] = '\0';
    return 0;
}

int vt__outname_expand(const char *zPattern, const char *const azVal[3], int bGlob, char *zOut, size_t nOut)
{
    size_t n = 0;
    int rc = 0;
    if (nOut == 0) return -2;
    zOut[0] = '\0';
    if (!zPattern[0] || vt__outname_bad_escape(zPattern)) return -1;
    for (const char *p = zPattern; *p && rc == 0; p++) {
        const char *zVal;
        if (*p != '%') {
            rc = put(zOut, nOut, &n, p, 1, bGlob);
            continue;
        }
        switch (*++p) {
        case 'p': zVal = azVal[0]; break;
        case 'r': zVal = azVal[1]; break;
        case 'h': zVal = azVal[2]; break;
        default: rc = put(zOut, nOut, &n, "%", 1, 0); continue;
        }
        rc = put(zOut, nOut, &n, zVal, strlen(zVal), 0);
    }
    if (rc == 0) return 0;
    zOut[0] = '\0';
    return -2;
}

/* Read the 100-byte SQLite header of an open file; 1 if it is SQLite with our application_id, 0 if
 * SQLite with another id, 2 if not SQLite at all, -1 on read error. */
static int header_kind(int fd)
{
    unsigned char a[100];
    ssize_t n = pread(fd, a, sizeof a, 0);
    uint32_t id;
    if (n < 0) return -1;
    if (n < (ssize_t)sizeof a || memcmp(a, "SQLite format 3", 16) != 0) return 2;
    id = (uint32_t)a[68] << 24 | (uint32_t)a[69] << 16 | (uint32_t)a[70] << 8 | a[71];
    return id == (uint32_t)VT_SCHEMA_APPLICATION_ID ? 1 : 0;
}

int vt__outname_is_trace(const char *zPath)
{
    int fd = open(zPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    int kind, rc;
    sqlite3 *db = NULL;
    sqlite3_stmt *pStmt = NULL;
    struct stat st;
    if (fd < 0) return -1;
    kind = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? header_kind(fd) : 2;
    close(fd);
    if (kind != 0) return kind == 1 ? 1 : kind == 2 ? 0 : -1;
    /* SQLite, but the id is not in the main file: a trace whose first pages are still in its
     * write-ahead log (the process was killed before a checkpoint). Ask SQLite. */
    rc = 0;
    if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &pStmt, NULL) == SQLITE_OK &&
        sqlite3_step(pStmt) == SQLITE_ROW)
        rc = sqlite3_column_int(pStmt, 0) == VT_SCHEMA_APPLICATION_ID;
    sqlite3_finalize(pStmt);
    sqlite3_close(db);
    return rc;
}
