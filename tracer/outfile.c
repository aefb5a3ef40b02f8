/* Naming and creating the trace file: pattern expansion, 0600, O_NOFOLLOW|O_EXCL, safe replacement. */
#include "outfile.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <fcntl.h>
#include <libgen.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vramtrace/outname.h"
#include "vramtrace/schema.h"

int vt__outfile_expand(const char *zPattern, long pid, const char *zRank, const char *zHost,
                       char *zOut, size_t nOut)
{
    char zPid[32];
    const char *azVal[3];
    snprintf(zPid, sizeof zPid, "%ld", pid);
    azVal[0] = zPid;
    azVal[1] = zRank && zRank[0] ? zRank : "0";
    azVal[2] = zHost && zHost[0] ? zHost : "localhost";
    return vt__outname_expand(zPattern, azVal, 0, zOut, nOut) == 0 ? 0 : -1;
}

/* Read meta(key) of the trace open in db into z (size n); 1 if present, else 0 (z = ""). */
static int read_meta(sqlite3 *db, const char *zKey, char *z, size_t n)
{
    sqlite3_stmt *pStmt = NULL;
    int found = 0;
    z[0] = '\0';
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1, &pStmt, NULL) == SQLITE_OK &&
        sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(pStmt) == SQLITE_ROW && sqlite3_column_text(pStmt, 0)) {
        snprintf(z, n, "%s", (const char *)sqlite3_column_text(pStmt, 0));
        found = 1;
    }
    sqlite3_finalize(pStmt);
    return found;
}

/*
 * Decide whether the existing trace at zPath may still be written by another
 * process: it was not closed (no meta 'end_ns') and its writer is alive on this
 * host, or ran on another host (which cannot be checked). Returns 1 and a
 * reason in zErr if so, 0 if the trace is finished or its writer is gone.
 */
static int trace_in_use(const char *zPath, char *zErr, size_t nErr)
{
    sqlite3 *db = NULL;
    char zPid[32], zHost[256], zMyHost[256], zEnd[32];
    long pid;
    int bUse = 0;
    if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK)
        goto done;
    if (read_meta(db, "end_ns", zEnd, sizeof zEnd)) goto done; /* closed by its writer */
    read_meta(db, "pid", zPid, sizeof zPid);
    read_meta(db, "hostname", zHost, sizeof zHost);
    pid = atol(zPid);
    if (gethostname(zMyHost, sizeof zMyHost - 1) != 0) zMyHost[0] = '\0';
    zMyHost[sizeof zMyHost - 1] = '\0';
    if (zHost[0] && strcmp(zHost, zMyHost) != 0) {
        snprintf(zErr, nErr,
                 "refusing to replace %s: an unfinished trace of process %ld on host %s, which may "
                 "still be writing it (use %%p and %%h in VRAMTRACE_OUTPUT)",
                 zPath, pid, zHost);
        bUse = 1;
    } else if (pid > 0 && pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) {
        snprintf(zErr, nErr,
                 "refusing to replace %s: the trace of running process %ld (use %%p in "
                 "VRAMTRACE_OUTPUT)",
                 zPath, pid);
        bUse = 1;
    }
done:
    sqlite3_close(db);
    return bUse;
}

/* Remove zPath's SQLite companion files (-wal, -shm, -journal); ignores absent ones. */
static void remove_companions(const char *zPath)
{
    static const char *const azSuffix[] = {"-wal", "-shm", "-journal"};
    char z[4200];
    size_t i;
    for (i = 0; i < sizeof azSuffix / sizeof azSuffix[0]; i++) {
        if ((size_t)snprintf(z, sizeof z, "%s%s", zPath, azSuffix[i]) >= sizeof z) continue;
        unlink(z);
    }
}

/* Explain why open(zPath, O_CREAT|O_EXCL) failed with errno e into zErr. */
static void explain_open_error(const char *zPath, int e, char *zErr, size_t nErr)
{
    char zDir[4096];
    if (e == ENOENT) {
        snprintf(zDir, sizeof zDir, "%s", zPath);
        snprintf(zErr, nErr, "cannot create trace %s: directory %s does not exist", zPath,
                 dirname(zDir));
    } else {
        snprintf(zErr, nErr, "cannot create trace %s: %s", zPath, strerror(e));
    }
}

int vt__outfile_create(const char *zPath, struct vt_outfile *pOut, char *zErr, size_t nErr)
{
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    struct stat st;
    int fd = -1, isTrace, rc = -1;

    memset(pOut, 0, sizeof *pOut);
    if (!zPath[0] || strlen(zPath) >= sizeof pOut->zPath) {
        snprintf(zErr, nErr, "trace path is empty or too long");
        goto done;
    }
    fd = open(zPath, flags, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* The name exists: replace it only if it is our own earlier trace. */
        if (lstat(zPath, &st) != 0) {
            explain_open_error(zPath, errno, zErr, nErr);
            goto done;
        }
        if (S_ISLNK(st.st_mode)) {
            snprintf(zErr, nErr, "refusing to write trace %s: it is a symbolic link", zPath);
            goto done;
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            snprintf(zErr, nErr, "refusing to replace %s: not a regular file owned by this user",
                     zPath);
            goto done;
        }
        isTrace = st.st_size > 0 ? vt__outname_is_trace(zPath) : 0;
        if (isTrace != 1) {
            snprintf(zErr, nErr,
                     "refusing to replace %s: it exists and is not a vramtrace trace "
                     "(choose another VRAMTRACE_OUTPUT)",
                     zPath);
            goto done;
        }
        if (trace_in_use(zPath, zErr, nErr)) goto done;
        if (unlink(zPath) != 0) {
            snprintf(zErr, nErr, "cannot replace old trace %s: %s", zPath, strerror(errno));
            goto done;
        }
        remove_companions(zPath);
        fd = open(zPath, flags, 0600);
    }
    if (fd < 0) {
        explain_open_error(zPath, errno, zErr, nErr);
        goto done;
    }
    /* A stale write-ahead log next to a new database would be replayed into it. */
    remove_companions(zPath);
    if (fchmod(fd, 0600) != 0 || fstat(fd, &st) != 0) {
        snprintf(zErr, nErr, "cannot set up trace %s: %s", zPath, strerror(errno));
        unlink(zPath);
        goto done;
    }
    snprintf(pOut->zPath, sizeof pOut->zPath, "%s", zPath);
    pOut->dev = st.st_dev;
    pOut->ino = st.st_ino;
    rc = 0;
done:
    if (fd >= 0) close(fd);
    return rc;
}

int vt__outfile_verify(const struct vt_outfile *pFile, char *zErr, size_t nErr)
{
    struct stat st;
    if (lstat(pFile->zPath, &st) != 0) {
        snprintf(zErr, nErr, "trace %s vanished: %s", pFile->zPath, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_dev != pFile->dev || st.st_ino != pFile->ino) {
        snprintf(zErr, nErr, "trace %s was replaced by another file while opening it",
                 pFile->zPath);
        return -1;
    }
    return 0;
}

void vt__outfile_remove(const struct vt_outfile *pFile)
{
    if (!pFile->zPath[0]) return;
    unlink(pFile->zPath);
    remove_companions(pFile->zPath);
}
