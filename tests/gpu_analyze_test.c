/* What `vramtrace analyze` finds in traces shaped like runs of each CUDA sample. */
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>

#include "gpu_fake_trace.h"
#include "schema.h"
#include "vt_test.h"

#define MIB (1024LL * 1024LL)
#define RUNTIME_BYTES (2 * MIB) /* the fixture's allocation of the runtime's own, never freed */

/*
 * Write the trace of one run of zSample to a file, run `vramtrace analyze` on
 * it (which writes its findings back into the trace) and return the trace,
 * open. *pzPath receives the file's path (free it; remove_trace deletes it).
 */
static sqlite3 *analyzed(const char *zSample, char **pzPath)
{
    const char *zBin = getenv("VT_VRAMTRACE");
    char zPath[] = "/tmp/vt-analyze-sample-XXXXXX";
    struct vt_fake f;
    sqlite3 *db = NULL;
    int fd, status = 0;
    pid_t pid;

    if (!zBin) SKIP("VT_VRAMTRACE unset: run under ctest");
    ASSERT_EQ(0, access(zBin, X_OK));
    fd = mkstemp(zPath);
    ASSERT(fd >= 0);
    close(fd);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    vt__fake_open(&f, db, 4242);
    ASSERT_EQ(0, vt__fake_build(&f, zSample));
    ASSERT_EQ(SQLITE_OK, sqlite3_close(db));

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        int fdNull = open("/dev/null", O_WRONLY);
        if (fdNull < 0 || dup2(fdNull, 1) < 0) _exit(126);
        execl(zBin, zBin, "analyze", zPath, (char *)NULL);
        _exit(127);
    }
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(0, WEXITSTATUS(status));
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    *pzPath = strdup(zPath);
    ASSERT(*pzPath != NULL);
    return db;
}

/* Close the analyzed trace and delete its file. */
static void remove_trace(sqlite3 *db, char *zPath)
{
    ASSERT_EQ(SQLITE_OK, sqlite3_close(db));
    ASSERT_EQ(0, unlink(zPath));
    free(zPath);
}

/* One integer from a query over the finding table (an sqlite3_mprintf format). */
static long long query(sqlite3 *db, const char *zFmt, ...)
{
    sqlite3_stmt *pStmt = NULL;
    long long v = 0;
    va_list ap;
    char *zSql;
    va_start(ap, zFmt);
    zSql = sqlite3_vmprintf(zFmt, ap);
    va_end(ap);
    ASSERT(zSql != NULL);
    if (sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) != SQLITE_OK)
        fprintf(stderr, "  %s\n  in: %s\n", sqlite3_errmsg(db), zSql);
    ASSERT(pStmt != NULL);
    ASSERT_EQ(SQLITE_ROW, sqlite3_step(pStmt));
    v = sqlite3_column_int64(pStmt, 0);
    sqlite3_finalize(pStmt);
    sqlite3_free(zSql);
    return v;
}

/* Findings other than the leak of the runtime's own allocation the fixture adds to every trace. */
#define OWN_FINDINGS "finding WHERE NOT (kind = 'leak' AND bytes = 2097152)"

TEST(leak_sample_leaks_8_buffers)
{
    char *zPath = NULL;
    sqlite3 *db = analyzed("leak", &zPath);
    /* One finding per call site, or per size where no site was recorded: count the totals. */
    ASSERT_EQ(25280512, query(db, "SELECT sum(bytes) FROM " OWN_FINDINGS " AND kind = 'leak'"));
    ASSERT_EQ(8, query(db, "SELECT sum(count) FROM " OWN_FINDINGS " AND kind = 'leak'"));
    ASSERT_EQ(0, query(db, "SELECT count(*) FROM " OWN_FINDINGS " AND kind <> 'leak'"));
    remove_trace(db, zPath);
}

TEST(copies_sample_pageable_transfers)
{
    char *zPath = NULL;
    sqlite3 *db = analyzed("copies", &zPath);
    /* 5 HtoD + 5 DtoH copies from pageable memory, in one finding or one per direction. */
    ASSERT_EQ(10 * VT_FAKE_COPY_BYTES,
              query(db, "SELECT sum(bytes) FROM " OWN_FINDINGS " AND kind = 'transfer'"));
    ASSERT_EQ(10, query(db, "SELECT sum(count) FROM " OWN_FINDINGS " AND kind = 'transfer'"));
    ASSERT_EQ(0, query(db, "SELECT count(*) FROM " OWN_FINDINGS " AND kind <> 'transfer'"));
    remove_trace(db, zPath);
}

TEST(oom_sample_one_oom)
{
    char *zPath = NULL;
    sqlite3 *db = analyzed("oom", &zPath);
    ASSERT_EQ(1, query(db, "SELECT count(*) FROM finding WHERE kind = 'oom' AND bytes = %lld",
                       VT_FAKE_TOTAL + 1024 * MIB));
    ASSERT_EQ(1, query(db, "SELECT count(*) FROM " OWN_FINDINGS));
    remove_trace(db, zPath);
}

TEST(phases_sample_validation_spike)
{
    char *zPath = NULL;
    sqlite3 *db = analyzed("phases", &zPath);
    ASSERT_EQ(2, query(db, "SELECT count(*) FROM phase WHERE name IN ('train', 'validation')"));
    /* Validation's peak exceeds training's by the sample's 37,797,888 bytes. */
    ASSERT_EQ(1, query(db, "SELECT count(*) FROM finding WHERE kind = 'validation_spike' AND "
                           "bytes = 37797888"));
    ASSERT_EQ(0, query(db, "SELECT count(*) FROM " OWN_FINDINGS " AND kind <> "
                           "'validation_spike'"));
    remove_trace(db, zPath);
}

TEST(clean_samples_have_no_findings_of_their_own)
{
    static const char *const azSample[] = {"pool", "managed", "vmm"};
    size_t i;
    for (i = 0; i < sizeof azSample / sizeof azSample[0]; i++) {
        char *zPath = NULL;
        sqlite3 *db = analyzed(azSample[i], &zPath);
        if (query(db, "SELECT count(*) FROM " OWN_FINDINGS) != 0)
            fprintf(stderr, "  sample %s\n", azSample[i]);
        ASSERT_EQ(0, query(db, "SELECT count(*) FROM " OWN_FINDINGS));
        remove_trace(db, zPath);
    }
}

VT_TEST_LIST(T(leak_sample_leaks_8_buffers) T(copies_sample_pageable_transfers)
             T(oom_sample_one_oom) T(phases_sample_validation_spike)
             T(clean_samples_have_no_findings_of_their_own))
