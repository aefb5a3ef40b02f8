/* Test helpers for the tracer core: laying out activity records, temporary traces, SQL checks. */
#ifndef VT_TESTS_CORE_UTIL_H
#define VT_TESTS_CORE_UTIL_H

#include <cupti_activity.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_rec.h"
#include "vt_test.h"
#include "vramtrace/schema.h"
#include "writer.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define CORE_LEAK_CHECK() ASSERT_EQ(0, __lsan_do_recoverable_leak_check())
#else
#define CORE_LEAK_CHECK() ((void)0)
#endif

/*
 * Fill one activity buffer from w with as many kernel records named zName as fit
 * (correlation ids from *pCorr on, start = 10 x id, end = start + 8, stream 7) and
 * submit it. Returns the number of records submitted, or -1 when the memory bound
 * refused a buffer.
 */
static inline long long core_submit_kernels(struct vt_writer *w, const char *zName, uint32_t *pCorr)
{
    CUpti_ActivityKernel10 k;
    size_t cap = 0, off = 0;
    long long n = 0;
    uint8_t *buf = vt__writer_buffer_alloc(w, &cap);
    if (!buf) return -1;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = zName;
    k.contextId = 1;
    k.streamId = 7;
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = k.blockY = k.blockZ = 128;
    for (;;) {
        k.correlationId = (*pCorr)++;
        k.start = (uint64_t)k.correlationId * 10;
        k.end = k.start + 8;
        if (core_lay(buf, cap, &off, &k, sizeof k) != 0) break;
        n++;
    }
    vt__writer_buffer_submit(w, buf, off);
    return n;
}

/* A fresh trace path in a new temporary directory under the test program's scratch
 * directory (VT_TEST_TMP, removed when the program ends), zOut at least 128 bytes. */
static inline void core_tmp_path(char *zOut, size_t n, const char *zName)
{
    const char *zBase = getenv("VT_TEST_TMP");
    char zDir[80];
    snprintf(zDir, sizeof zDir, "%.60s/vt_core_XXXXXX", zBase ? zBase : "/tmp");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zOut, n, "%s/%.40s", zDir, zName);
}

/* Remove a trace made under core_tmp_path, its companions and its directory (long runs
 * of trials remove each trace at once instead of leaving them to the scratch cleanup). */
static inline void core_remove_trace(const char *zPath)
{
    static const char *const azSuffix[] = {"", "-wal", "-shm", "-journal"};
    char z[256];
    char *zSlash;
    size_t i;
    for (i = 0; i < sizeof azSuffix / sizeof azSuffix[0]; i++) {
        snprintf(z, sizeof z, "%s%s", zPath, azSuffix[i]);
        unlink(z);
    }
    snprintf(z, sizeof z, "%s", zPath);
    zSlash = strrchr(z, '/');
    if (zSlash) {
        *zSlash = '\0';
        rmdir(z);
    }
}

/* Open a finished trace read-only. */
static inline sqlite3 *core_open_ro(const char *zPath)
{
    sqlite3 *db = NULL;
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    return db;
}

/* First column of the first row of zSql as an integer (0 when no row or NULL). */
static inline long long core_q_int(sqlite3 *db, const char *zSql)
{
    sqlite3_stmt *s = NULL;
    long long v = 0;
    int rc = sqlite3_prepare_v2(db, zSql, -1, &s, NULL);
    if (rc != SQLITE_OK) VT__FAIL("prepare %s: %s", zSql, sqlite3_errmsg(db));
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
    else if (rc != SQLITE_DONE) VT__FAIL("step %s: %s", zSql, sqlite3_errmsg(db));
    sqlite3_finalize(s);
    return v;
}

/*
 * Every row of zSql, columns joined with '|', rows with ';', NULL spelt NULL,
 * into zOut (static, overwritten by the next call).
 */
static inline const char *core_q_rows(sqlite3 *db, const char *zSql)
{
    static char zOut[8192];
    sqlite3_stmt *s = NULL;
    size_t n = 0;
    int rc, i, nRow = 0;
    zOut[0] = '\0';
    rc = sqlite3_prepare_v2(db, zSql, -1, &s, NULL);
    if (rc != SQLITE_OK) VT__FAIL("prepare %s: %s", zSql, sqlite3_errmsg(db));
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (nRow++) n += (size_t)snprintf(zOut + n, sizeof zOut - n, ";");
        for (i = 0; i < sqlite3_column_count(s) && n < sizeof zOut; i++) {
            const char *z = (const char *)sqlite3_column_text(s, i);
            n += (size_t)snprintf(zOut + n, sizeof zOut - n, "%s%s", i ? "|" : "", z ? z : "NULL");
        }
    }
    if (rc != SQLITE_DONE) VT__FAIL("step %s: %s", zSql, sqlite3_errmsg(db));
    sqlite3_finalize(s);
    return zOut;
}

/* Queue one cudaMalloc API record (one api_call row) with correlation corr at 1000 + 10 corr ns; vt__writer_submit's result. */
static inline int core_submit_api(struct vt_writer *w, uint32_t corr)
{
    struct vt_hrec h;
    memset(&h, 0, sizeof h);
    h.type = VT_HREC_API_CALL;
    h.u.api.api = VT_API_ID_1;
    h.u.api.correlation = corr;
    h.u.api.start = 1000 + (uint64_t)corr * 10;
    h.u.api.end = h.u.api.start + 5;
    h.u.api.thread = 1;
    h.u.api.bytes = 4096;
    h.u.api.ptr = 0x7f0000000000ull + (uint64_t)corr * 4096;
    return vt__writer_submit(w, &h);
}

/* Default test configuration: small buffers, the test record iterator. */
static inline void core_config(struct vt_writer_config *cfg)
{
    vt__writer_config_default(cfg);
    cfg->buffer_size = 64 * 1024;
    cfg->max_memory = 64u << 20;
    cfg->host_ring_records = 4096;
    cfg->xNextRecord = core_next_record;
}

/* Open a writer at zPath or fail the test. */
static inline struct vt_writer *core_open(const char *zPath, const struct vt_writer_config *cfg)
{
    char zErr[256] = "";
    struct vt_writer *w = vt__writer_open(zPath, cfg, zErr, sizeof zErr);
    if (!w) VT__FAIL("vt__writer_open: %s", zErr);
    return w;
}

#endif
