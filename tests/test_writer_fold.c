/* Writer tests of folded calls (schema 6): a call stored in its activity row where that row holds its values, else alone; the map walk that ages them. */
#include <cupti_activity.h>

#include "boundmap.h"
#include "core_util.h"
#include "vramtrace/schema.h"

#define SRC 0x55d000000000ull
#define DST 0x7f0000100000ull
#define PTR 0x7f0000200000ull

/* Submit one API call host record. */
static void call(struct vt_writer *w, int api, uint32_t corr, uint64_t start, int status, uint64_t bytes, uint64_t ptr,
                 uint64_t src, uint64_t dst)
{
    struct vt_hrec h;
    memset(&h, 0, sizeof h);
    h.type = VT_HREC_API_CALL;
    h.u.api.api = api;
    h.u.api.correlation = corr;
    h.u.api.start = start;
    h.u.api.end = start + 300;
    h.u.api.thread = 42;
    h.u.api.device = 0;
    h.u.api.status = status;
    h.u.api.bytes = bytes;
    h.u.api.ptr = ptr;
    h.u.api.src = src;
    h.u.api.dst = dst;
    h.u.api.stream = 0x5600aa00;
    h.u.api.stack_id = corr == 4 ? 3 : 0;
    ASSERT_EQ(0, vt__writer_submit(w, &h));
}

/* Lay a copy of bytes at start (correlation corr) into buf. */
static void copy_rec(uint8_t *buf, size_t cap, size_t *pOff, uint32_t corr, uint64_t start, uint64_t bytes)
{
    CUpti_ActivityMemcpy6 c;
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    c.bytes = bytes;
    c.start = start;
    c.end = start + 100;
    c.streamId = 7;
    c.correlationId = corr;
    ASSERT_EQ(0, core_lay(buf, cap, pOff, &c, sizeof c));
}

/* Every api_call row as text, in correlation order (ids left out: they are given in the order calls are written). */
static const char *calls(sqlite3 *db)
{
    return core_q_rows(db, "SELECT group_concat(x, ';') FROM (SELECT correlation || ',' || api || ',' || quote(start) || ','"
                           " || quote(\"end\") || ',' || thread || ',' || quote(device) || ',' || status || ',' ||"
                           " quote(bytes) || ',' || quote(ptr) || ',' || quote(src) || ',' || quote(dst) || ',' ||"
                           " quote(stream) || ',' || quote(stack_id) AS x FROM api_call ORDER BY correlation)");
}

#define ROWS_ALL                                                                                                         \
    "1,61,10000,10300,42,0,0,4096,NULL,94351841558528,139637977776128,1442884096,NULL;"                                  \
    "2,61,11000,11300,42,0,0,4096,NULL,94351841558528,139637977776128,1442884096,NULL;"                                  \
    "3,81,12000,12300,42,0,0,256,NULL,NULL,139637977776128,1442884096,NULL;"                                             \
    "4,1,13000,13300,42,0,0,1048576,139637978824704,NULL,NULL,1442884096,3;"                                             \
    "5,2,14000,14300,42,0,0,NULL,139637978824704,NULL,NULL,1442884096,NULL;"                                             \
    "6,61,15000,15300,42,0,0,4096,NULL,94351841558528,139637977776128,1442884096,NULL;"                                  \
    "7,1,16000,16300,42,0,2,1048576,NULL,NULL,NULL,1442884096,NULL"

/* The calls of a copy, a set, an allocation and a free fold; one whose copy differs, one without a record and a failed one do not. */
TEST(writer_fold_calls)
{
    char zPath[160];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    size_t cap = 0, off = 0;
    uint8_t *buf;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "fold.db");
    core_config(&cfg);
    cfg.time_base_ns = 0;
    w = core_open(zPath, &cfg);
    ASSERT_EQ(0, vt__writer_start(w));
    call(w, VT_API_ID_61, 1, 10000, 0, 4096, 0, SRC, DST);
    call(w, VT_API_ID_61, 2, 11000, 0, 4096, 0, SRC, DST);
    call(w, VT_API_ID_81, 3, 12000, 0, 256, 0, 0, DST);
    call(w, VT_API_ID_1, 4, 13000, 0, 1 << 20, PTR, 0, 0);
    call(w, VT_API_ID_2, 5, 14000, 0, 0, PTR, 0, 0);
    call(w, VT_API_ID_61, 6, 15000, 0, 4096, 0, SRC, DST); /* no record follows */
    call(w, VT_API_ID_1, 7, 16000, 2, 1 << 20, 0, 0, 0);   /* failed: no record follows */
    /* the records, queued after the calls: the writer reads the calls first */
    buf = vt__writer_buffer_alloc(w, &cap);
    ASSERT(buf != NULL);
    copy_rec(buf, cap, &off, 1, 20000, 4096);
    copy_rec(buf, cap, &off, 2, 21000, 8192); /* not the call's bytes */
    {
        CUpti_ActivityMemset4 s;
        CUpti_ActivityMemory4 m;
        memset(&s, 0, sizeof s);
        s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
        s.bytes = 256;
        s.start = 22000;
        s.end = 22100;
        s.correlationId = 3;
        s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        ASSERT_EQ(0, core_lay(buf, cap, &off, &s, sizeof s));
        for (int i = 0; i < 2; i++) {
            memset(&m, 0, sizeof m);
            m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
            m.memoryOperationType = i ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
            m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
            m.correlationId = 4 + (uint32_t)i;
            m.address = PTR;
            m.bytes = 1 << 20;
            m.timestamp = 13200 + (uint64_t)i * 1000;
            m.streamId = CUPTI_INVALID_STREAM_ID;
            ASSERT_EQ(0, core_lay(buf, cap, &off, &m, sizeof m));
        }
    }
    vt__writer_buffer_submit(w, buf, off);
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    db = core_open_ro(zPath);
    ASSERT_STREQ("ok", core_q_rows(db, "PRAGMA integrity_check"));
    ASSERT_EQ(6, core_q_int(db, "PRAGMA user_version"));
    /* every call, with the values it had */
    ASSERT_STREQ(ROWS_ALL, calls(db));
    ASSERT_EQ(7, core_q_int(db, "SELECT count(DISTINCT id) FROM api_call"));
    /* stored alone: the copy whose bytes differ, the call without a record, the failed one */
    ASSERT_STREQ("2,6,7", core_q_rows(db, "SELECT group_concat(correlation) FROM (SELECT b.correlation + r.dc AS correlation"
                                          " FROM api_call_row r JOIN api_call_block b ON b.id = r.id >> 6 ORDER BY 1)"));
    ASSERT_EQ(1, core_q_int(db, "SELECT count(*) FROM memcpy_row WHERE call_sig IS NOT NULL"));
    ASSERT_EQ(1, core_q_int(db, "SELECT count(*) FROM memset_row WHERE call_sig IS NOT NULL"));
    ASSERT_EQ(2, core_q_int(db, "SELECT count(*) FROM memory_event WHERE call_sig IS NOT NULL"));
    /* the folded copy's call: its start relative to the copy's, its duration */
    ASSERT_STREQ("-10000,300", core_q_rows(db, "SELECT call_dt || ',' || call_dur FROM memcpy_row WHERE call_sig IS NOT NULL"));
    /* the activity rows as before: the copies take the calls' addresses */
    ASSERT_EQ(2, core_q_int(db, "SELECT count(*) FROM memcpy WHERE src = 94351841558528 AND dst = 139637977776128"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/* Calls evicted from the bounded correlation map are written alone, with every value; the window keeps or skips each part. */
TEST(writer_fold_evicted_and_window)
{
    char zPath[160];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    size_t cap = 0, off = 0;
    uint8_t *buf;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "evict.db");
    core_config(&cfg);
    cfg.time_base_ns = 0;
    cfg.corr_map_entries = 2;
    w = core_open(zPath, &cfg);
    ASSERT_EQ(0, vt__writer_start(w));
    for (uint32_t i = 1; i <= 4; i++) call(w, VT_API_ID_61, i, 10000 + i * 1000, 0, 4096, 0, SRC, DST);
    buf = vt__writer_buffer_alloc(w, &cap);
    ASSERT(buf != NULL);
    for (uint32_t i = 1; i <= 4; i++) copy_rec(buf, cap, &off, i, 20000 + i * 1000, 4096);
    vt__writer_buffer_submit(w, buf, off);
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    db = core_open_ro(zPath);
    ASSERT_EQ(4, core_q_int(db, "SELECT count(*) FROM api_call WHERE bytes = 4096 AND src = 94351841558528"
                                " AND dst = 139637977776128 AND start = 10000 + correlation * 1000 AND \"end\" = start + 300"));
    ASSERT_EQ(2, core_q_int(db, "SELECT count(*) FROM api_call_row"));           /* the two evicted */
    ASSERT_EQ(2, core_q_int(db, "SELECT count(*) FROM memcpy WHERE src IS NULL")); /* their copies lack the addresses */
    ASSERT_EQ(2, core_q_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'dropped_map'"));
    sqlite3_close(db);

    /* a window that starts between a call and its copy: the copy alone is written */
    core_tmp_path(zPath, sizeof zPath, "window.db");
    core_config(&cfg);
    cfg.time_base_ns = 1000; /* the window needs a known start */
    cfg.start_after_ns = 14000;
    w = core_open(zPath, &cfg);
    ASSERT_EQ(0, vt__writer_start(w));
    call(w, VT_API_ID_61, 1, 10000, 0, 4096, 0, SRC, DST);
    call(w, VT_API_ID_61, 2, 16000, 0, 4096, 0, SRC, DST);
    off = 0;
    buf = vt__writer_buffer_alloc(w, &cap);
    ASSERT(buf != NULL);
    copy_rec(buf, cap, &off, 1, 20000, 4096);
    copy_rec(buf, cap, &off, 2, 21000, 4096);
    vt__writer_buffer_submit(w, buf, off);
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    db = core_open_ro(zPath);
    ASSERT_STREQ("2", core_q_rows(db, "SELECT group_concat(correlation) FROM api_call"));
    ASSERT_EQ(2, core_q_int(db, "SELECT count(*) FROM memcpy WHERE src = 94351841558528"));
    ASSERT_EQ(1, core_q_int(db, "SELECT count(*) FROM memcpy_row WHERE call_sig IS NOT NULL"));
    ASSERT_EQ(1, core_q_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'window_rows_skipped'"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/* Walk visitor: appends the key to the string pCtx; stops (0) at key 99. */
static int walk_note(void *pCtx, uint32_t key, void *pVal)
{
    char *z = pCtx;
    (void)pVal;
    if (key == 99) return 0;
    snprintf(z + strlen(z), 8, "%u,", key);
    return 1;
}

/* The writer ages parked calls by walking the correlation map from where it stopped (vt__boundmap_walk). */
TEST(boundmap_walk_resumes)
{
    struct vt__boundmap m;
    uint32_t seq = 0, v = 0;
    char z[64] = "";
    ASSERT_EQ(0, vt__boundmap_init(&m, 4, sizeof v));
    for (uint32_t k = 1; k <= 3; k++) vt__boundmap_put(&m, k, &v, NULL, NULL);
    vt__boundmap_walk(&m, &seq, walk_note, z);
    ASSERT_STREQ("1,2,3,", z);
    z[0] = '\0';
    vt__boundmap_put(&m, 4, &v, NULL, NULL);
    ASSERT_EQ(1, vt__boundmap_put(&m, 5, &v, NULL, NULL)); /* 1 evicted */
    vt__boundmap_remove(&m, 4, NULL);
    vt__boundmap_put(&m, 2, &v, NULL, NULL); /* replaced: its old place is stale, the new one after 5 */
    vt__boundmap_walk(&m, &seq, walk_note, z);
    ASSERT_STREQ("5,2,", z); /* only what came after the last visited, each once */
    z[0] = '\0';
    vt__boundmap_put(&m, 99, &v, NULL, NULL);
    vt__boundmap_put(&m, 7, &v, NULL, NULL);
    vt__boundmap_walk(&m, &seq, walk_note, z);
    ASSERT_STREQ("", z); /* stopped at 99 without passing it */
    vt__boundmap_remove(&m, 99, NULL);
    vt__boundmap_walk(&m, &seq, walk_note, z);
    ASSERT_STREQ("7,", z);
    vt__boundmap_free(&m);
}

VT_TEST_LIST(T(writer_fold_calls) T(writer_fold_evicted_and_window) T(boundmap_walk_resumes))
