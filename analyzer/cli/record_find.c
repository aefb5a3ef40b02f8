/* Finding the traces a recorded job wrote: files matching the output pattern that are new since the start. */
#include "record.h"

#include <glob.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace/outname.h"

/* 1 if zName ends with zSuffix. */
static int ends_with(const char *zName, const char *zSuffix)
{
    size_t n = strlen(zName), m = strlen(zSuffix);
    return n >= m && !strcmp(zName + n - m, zSuffix);
}

int vt__trace_set_list(const char *zPattern, struct vt_trace_set *pSet)
{
    char zGlob[2 * PATH_MAX];
    glob_t g;
    size_t i;
    int rc = 0;

    pSet->aFile = NULL;
    pSet->nFile = 0;
    static const char *const azAny[3] = {"*", "*", "*"};
    if (vt__outname_expand(zPattern, azAny, 1, zGlob, sizeof zGlob) != 0) return 0;
    if (glob(zGlob, 0, NULL, &g) != 0) return 0; /* no match, or an unreadable directory */
    pSet->aFile = calloc(g.gl_pathc ? g.gl_pathc : 1, sizeof *pSet->aFile);
    if (!pSet->aFile) rc = -1;
    for (i = 0; rc == 0 && i < g.gl_pathc; i++) {
        const char *zPath = g.gl_pathv[i];
        struct vt_trace_file *pFile;
        struct stat st;
        if (ends_with(zPath, "-wal") || ends_with(zPath, "-shm") || ends_with(zPath, "-journal"))
            continue;
        if (lstat(zPath, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        pFile = &pSet->aFile[pSet->nFile];
        pFile->zPath = strdup(zPath);
        if (!pFile->zPath) {
            rc = -1;
            break;
        }
        pFile->dev = st.st_dev;
        pFile->ino = st.st_ino;
        pFile->size = st.st_size;
        pFile->mtime = st.st_mtim;
        pSet->nFile++;
    }
    globfree(&g);
    if (rc != 0) vt__trace_set_free(pSet);
    return rc;
}

void vt__record_make_id(char *z, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(z, n, "%ld-%lld", (long)getpid(), (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
}

int vt__trace_is_others(const char *zPath, const char *zId)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *p = NULL;
    int bOthers = 0;
    if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK && sqlite3_busy_timeout(db, 2000) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'record_id'", -1, &p, NULL) == SQLITE_OK) {
        if (sqlite3_step(p) == SQLITE_ROW && sqlite3_column_text(p, 0))
            bOthers = strcmp((const char *)sqlite3_column_text(p, 0), zId) != 0;
    }
    sqlite3_finalize(p);
    sqlite3_close(db);
    return bOthers;
}

int vt__trace_set_is_new(const struct vt_trace_set *pBefore, const struct vt_trace_file *pFile)
{
    size_t i;
    for (i = 0; i < pBefore->nFile; i++) {
        const struct vt_trace_file *pOld = &pBefore->aFile[i];
        if (strcmp(pOld->zPath, pFile->zPath) != 0) continue;
        return pOld->dev != pFile->dev || pOld->ino != pFile->ino || pOld->size != pFile->size ||
               pOld->mtime.tv_sec != pFile->mtime.tv_sec ||
               pOld->mtime.tv_nsec != pFile->mtime.tv_nsec;
    }
    return 1;
}

void vt__trace_set_free(struct vt_trace_set *pSet)
{
    size_t i;
    for (i = 0; i < pSet->nFile; i++) free(pSet->aFile[i].zPath);
    free(pSet->aFile);
    pSet->aFile = NULL;
    pSet->nFile = 0;
}
