/* Tests of the importers: our own fixtures (tests/data/import) and the real files, row by row, and the command. */
#include "vt_test.h"

#include <sqlite3.h>
#if VT_HAVE_ZLIB
#include <zlib.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "builder.h"
#include "import.h"
#include "source.h"
#include "vramtrace/schema.h"
#include "read/read.h"

static char g_zPath[4096];

/* Path of fixture zName (tests/data/import). */
static const char *fixture(const char *zName)
{
    const char *zDir = getenv("VT_TEST_DATA");
    snprintf(g_zPath, sizeof g_zPath, "%s/import/%s", zDir ? zDir : "tests/data", zName);
    return g_zPath;
}

/* A path in the test's scratch directory (a static buffer of its own). */
static const char *scratch(const char *zName)
{
    static char z[4][4096];
    static int i;
    const char *zTmp = getenv("VT_TEST_TMP");
    i = (i + 1) % 4;
    snprintf(z[i], sizeof z[i], "%s/%s", zTmp ? zTmp : "/tmp", zName);
    return z[i];
}

/* Import zIn (format judged from its content; an Nsight export's process pid) to zOut; the exit code. */
static int import(const char *zIn, int64_t pid, const char *zOut)
{
    struct vt_import_opts o = {1, 1};
    char zErr[256];
    int fmt, rc = vt__import_detect(zIn, &fmt, zErr, sizeof zErr);
    if (rc != VT_EXIT_OK) return rc;
    return vt__import_one(zIn, fmt, pid, zOut, &o, NULL);
}

/* The single integer zSql gives on trace zDb (-999 for NULL, -998 for no row). */
static int64_t q(const char *zDb, const char *zSql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *p = NULL;
    int64_t v = -998;
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READONLY, NULL));
    if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK) VT__FAIL("%s: %s", zSql, sqlite3_errmsg(db));
    if (sqlite3_step(p) == SQLITE_ROW) v = sqlite3_column_type(p, 0) == SQLITE_NULL ? -999 : sqlite3_column_int64(p, 0);
    sqlite3_finalize(p);
    sqlite3_close(db);
    return v;
}

/* The text zSql gives (a static buffer; "" for NULL or no row). */
static const char *qs(const char *zDb, const char *zSql)
{
    static char z[1024];
    sqlite3 *db = NULL;
    sqlite3_stmt *p = NULL;
    z[0] = 0;
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READONLY, NULL));
    if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK) VT__FAIL("%s: %s", zSql, sqlite3_errmsg(db));
    if (sqlite3_step(p) == SQLITE_ROW && sqlite3_column_text(p, 0))
        snprintf(z, sizeof z, "%s", (const char *)sqlite3_column_text(p, 0));
    sqlite3_finalize(p);
    sqlite3_close(db);
    return z;
}

static int exists(const char *zPath)
{
    struct stat st;
    return stat(zPath, &st) == 0;
}

static void write_file(const char *zPath, const void *p, size_t n)
{
    FILE *f = fopen(zPath, "wb");
    ASSERT(f != NULL);
    ASSERT_EQ(n, fwrite(p, 1, n, f));
    fclose(f);
}

#define T_NS 1700000000000000000LL /* the fixtures' first time, ns */

TEST(snapshot_current_format)
{
    const char *zOut = scratch("snap.db");
    ASSERT_EQ(VT_EXIT_OK, import(fixture("snap_small.pickle"), -1, zOut));
    ASSERT_STREQ("pytorch_snapshot", qs(zOut, "SELECT value FROM meta WHERE key = 'source_format'"));
    ASSERT_CONTAINS(qs(zOut, "SELECT value FROM meta WHERE key = 'source_file'"), "snap_small.pickle");
    ASSERT_EQ(VT_SCHEMA_VERSION, q(zOut, "SELECT value FROM meta WHERE key = 'schema_version'"));
    /* segments: one from the history, one from before it (dump state, unknown time) */
    ASSERT_EQ(2, q(zOut, "SELECT count(*) FROM memory_event WHERE op = 1 AND mem_kind = 3 AND device = 1"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM memory_event WHERE ts IS NULL"));
    ASSERT_EQ(20 << 20, q(zOut, "SELECT bytes FROM memory_event WHERE ts = 1700000000000000000"));
    /* tensors: 3 allocs, 1 free_requested, 1 free_completed from the history, 1 live block from before */
    ASSERT_EQ(4, q(zOut, "SELECT count(*) FROM tensor_event WHERE op = 1"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM tensor_event WHERE op = 2"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM tensor_event WHERE op = 3"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM tensor_event WHERE ts IS NULL AND bytes = 512"));
    ASSERT_EQ(6, q(zOut, "SELECT count(*) FROM tensor_event WHERE device = 1 AND source = 1"));
    /* device_traces[0] is empty: the history's rows, written as device 0, were moved to device 1 */
    ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM tensor_event WHERE device IS NOT 1"));
    ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM memory_event WHERE device IS NOT 1"));
    ASSERT_EQ(T_NS + 2000, q(zOut, "SELECT ts FROM tensor_event WHERE bytes = 2097152"));
    /* time order in rowid order, unknown times first */
    ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM tensor_event a JOIN tensor_event b ON b.id = a.id + 1"
                         " WHERE a.ts > b.ts OR (a.ts IS NOT NULL AND b.ts IS NULL)"));
    /* the OOM: requested size and the device's free bytes; which call failed is unknown */
    ASSERT_EQ(64LL << 30, q(zOut, "SELECT bytes FROM oom_event"));
    ASSERT_EQ(123 << 20, q(zOut, "SELECT free_bytes FROM oom_event"));
    ASSERT_EQ(-999, q(zOut, "SELECT api FROM oom_event"));
    ASSERT_EQ(1, q(zOut, "SELECT device FROM oom_event"));
    /* call sites: Python frames first, PyTorch's capture frames dropped, allocator frames kept */
    ASSERT_STREQ("/src/model.py", qs(zOut, "SELECT s.value FROM tensor_event t JOIN frame f ON f.stack_id = t.stack_id"
                                           " AND f.idx = 0 JOIN string s ON s.id = f.file_id WHERE t.bytes = 1048576"
                                           " AND t.op = 1"));
    ASSERT_EQ(4, q(zOut, "SELECT depth FROM stack LIMIT 1"));
    ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM frame f JOIN string s ON s.id = f.function_id"
                         " WHERE s.value LIKE 'torch::unwind%'"));
    ASSERT_EQ(2, q(zOut, "SELECT count(*) FROM stack")); /* two traceback lists, each shared */
    /* annotations as a range; settings; truncated history; notes for what a newer PyTorch added */
    ASSERT_EQ(7000, q(zOut, "SELECT end - start FROM nvtx_range r JOIN string s ON s.id = r.name_id"
                            " WHERE s.value = 'train_step'"));
    ASSERT_STREQ("max_split_size_mb:128",
                 qs(zOut, "SELECT value FROM meta WHERE key = 'pytorch.allocator.PYTORCH_CUDA_ALLOC_CONF'"));
    ASSERT_EQ(1, q(zOut, "SELECT value FROM meta WHERE key = 'history_truncated'"));
    ASSERT_EQ(T_NS, q(zOut, "SELECT value FROM meta WHERE key = 'history_start_ns'"));
    ASSERT_EQ(T_NS, q(zOut, "SELECT value FROM meta WHERE key = 'clock_anchor_wall_ns'"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM meta WHERE key LIKE 'import_note.%' AND value LIKE '%future_action%'"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM meta WHERE key LIKE 'import_note.%' AND value LIKE '%new_key%'"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM meta WHERE key LIKE 'import_note.%' AND value LIKE '%new_root_key%'"));
}

TEST(snapshot_ring_buffer_and_2_0_format)
{
    const char *zOut = scratch("ring.db"), *zV1 = scratch("v1.db");
    ASSERT_EQ(VT_EXIT_OK, import(fixture("snap_ring_full.pickle"), -1, zOut));
    ASSERT_EQ(1, q(zOut, "SELECT value FROM meta WHERE key = 'history_truncated'"));
    ASSERT_EQ(3, q(zOut, "SELECT count(*) FROM tensor_event WHERE device = 0"));
    /* PyTorch 2.0: block address from the segment's start, call site from the last history entry */
    ASSERT_EQ(VT_EXIT_OK, import(fixture("snap_v1.pickle"), -1, zV1));
    ASSERT_EQ(1, q(zV1, "SELECT count(*) FROM memory_event WHERE ts IS NULL AND bytes = 2097152"));
    ASSERT_EQ(1024, q(zV1, "SELECT bytes FROM tensor_event WHERE ts IS NULL AND address ="
                           " (SELECT address FROM memory_event)"));
    ASSERT_EQ(6, q(zV1, "SELECT f.line FROM tensor_event t JOIN frame f ON f.stack_id = t.stack_id AND f.idx = 0"));
    ASSERT_EQ(1, q(zV1, "SELECT value FROM meta WHERE key = 'history_truncated'"));
    ASSERT_EQ(1, q(zV1, "SELECT count(*) FROM meta WHERE value LIKE '%holds no allocation history%'"));
}

/* The contents of file zPath (read whole, NUL-terminated; static: one at a time). */
static const char *slurp(const char *zPath)
{
    static char aBuf[1 << 18];
    FILE *f = fopen(zPath, "rb");
    size_t n = f ? fread(aBuf, 1, sizeof aBuf - 1, f) : 0;
    if (f) fclose(f);
    aBuf[n] = 0;
    return aBuf;
}

/*
 * A history that starts late (snap_small: a 2 MiB segment and a 512 B block live at the dump, allocated before
 * the first event): they stand from the trace's start, their times still unknown. The reserved peak (22 MiB)
 * is reached at the first event, and the OOM at 7 us counts the segment (main put them at the end: peak "at
 * 7.0 us", the OOM "held 20.0 MiB").
 */
TEST(snapshot_history_starts_late)
{
    char zPeak[64];
    const char *z;
    char *av[] = {"analyze", "--no-write", "--format", "json", "-o", (char *)scratch("late.json"),
                  (char *)fixture("snap_small.pickle"), NULL};
    setenv("TMPDIR", getenv("VT_TEST_TMP") ? getenv("VT_TEST_TMP") : "/tmp", 1);
    ASSERT_EQ(VT_EXIT_OK, vt__cmd_analyze(7, av));
    z = slurp(scratch("late.json"));
    snprintf(zPeak, sizeof zPeak, "\"timeline_peak_ts\": %lld,", (long long)T_NS);
    ASSERT_CONTAINS(z, zPeak);
    ASSERT_CONTAINS(z, "\"peak_bytes\": 23068672,");
    ASSERT_CONTAINS(z, "this process held 22.0 MiB in live allocations");
    ASSERT_CONTAINS(z, "and an unknown amount was in use by something else"); /* the device's total is not known */
    ASSERT_CONTAINS(z, "memory allocated before the history began (the state at the dump it does not explain)");
    ASSERT_CONTAINS(z, "allocations among them stand from the start of the trace");
    ASSERT_CONTAINS(z, "\"alloc_ts\": null"); /* their times stay unknown */
    /* no history at all: no time is known, the state at the dump stands at the end */
    av[6] = (char *)fixture("snap_v1.pickle");
    ASSERT_EQ(VT_EXIT_OK, vt__cmd_analyze(7, av));
    z = slurp(scratch("late.json"));
    ASSERT_CONTAINS(z, "allocations among them are taken as live at the end of the trace");
}

/*
 * A history that starts late goes out as a snapshot and back through import as it came: what was allocated
 * before the history (rows of unknown time) is the dump's state only, with no event in the history (PyTorch's
 * own snapshots say it so), and the import finds the history truncated where it began. They were events
 * without time_us: the import took the history as complete, PyTorch before 2.1 ("2 events carry no time_us"),
 * and put that memory at the end of the trace; and a free of memory never allocated in the history was left out.
 */
TEST(snapshot_history_start_round_trip)
{
    const char *zA = scratch("rt_a.db"), *zSnap = scratch("rt_b.pickle"), *zC = scratch("rt_c.db");
    char zS[4096], zA2[4096];
    char *av[] = {"export", "--snapshot", zS, zA2, NULL};
    ASSERT_EQ(VT_EXIT_OK, import(fixture("snap_small.pickle"), -1, zA));
    ASSERT_EQ(1, q(zA, "SELECT value FROM meta WHERE key = 'history_truncated'"));
    snprintf(zS, sizeof zS, "%s", zSnap);
    snprintf(zA2, sizeof zA2, "%s", zA);
    ASSERT_EQ(VT_EXIT_OK, vt__cmd_export(4, av));
    ASSERT_EQ(VT_EXIT_OK, import(zSnap, -1, zC));
    ASSERT_EQ(1, q(zC, "SELECT value FROM meta WHERE key = 'history_truncated'"));
    ASSERT_EQ(T_NS, q(zC, "SELECT value FROM meta WHERE key = 'history_start_ns'"));
    ASSERT_EQ(0, q(zC, "SELECT count(*) FROM meta WHERE value LIKE '%carry no time_us%'"));
    /* the same rows, those of unknown time the same ones */
    for (int k = 0; k < 2; k++) {
        const char *zSql = k ? "SELECT count(*) * 1000 + sum(ts IS NULL) FROM tensor_event"
                             : "SELECT count(*) * 1000 + sum(ts IS NULL) FROM memory_event";
        ASSERT_EQ(q(zA, zSql), q(zC, zSql));
    }
    ASSERT_EQ(1, q(zC, "SELECT count(*) FROM memory_event WHERE ts IS NULL AND bytes = 2097152"));
    ASSERT_EQ(1, q(zC, "SELECT count(*) FROM tensor_event WHERE ts IS NULL AND bytes = 512"));
    /* the history frees memory it never saw allocated (snap_ring_full): the free goes out without its allocation */
    ASSERT_EQ(VT_EXIT_OK, import(fixture("snap_ring_full.pickle"), -1, zA));
    ASSERT_EQ(VT_EXIT_OK, vt__cmd_export(4, av));
    ASSERT_EQ(VT_EXIT_OK, import(zSnap, -1, zC));
    ASSERT_EQ(1, q(zC, "SELECT value FROM meta WHERE key = 'history_truncated'"));
    ASSERT_EQ(T_NS + 1000, q(zC, "SELECT value FROM meta WHERE key = 'history_start_ns'")); /* its free_completed */
    ASSERT_EQ(1, q(zC, "SELECT count(*) FROM tensor_event WHERE op = 2 AND bytes = 512"));
}

TEST(snapshot_bad_inputs)
{
    static char aBuf[8192];
    const char *zOut = scratch("bad.db"), *zCut = scratch("cut.pickle");
    FILE *f;
    size_t n;
    /* a pickle naming a class: refused as not a snapshot, nothing written */
    ASSERT_EQ(VT_EXIT_NOT_TRACE, import(fixture("snap_hostile.pickle"), -1, zOut));
    ASSERT(!exists(zOut));
    /* a newer pickle protocol */
    write_file(zCut, "\x80\x06N.", 4);
    ASSERT_EQ(VT_EXIT_TOO_NEW, import(zCut, -1, zOut));
    /* truncated anywhere: damaged, and no trace left behind */
    f = fopen(fixture("snap_small.pickle"), "rb");
    ASSERT(f != NULL);
    n = fread(aBuf, 1, sizeof aBuf, f);
    fclose(f);
    for (size_t k = 2; k < n; k += 13) {
        int rc;
        write_file(zCut, aBuf, k);
        rc = import(zCut, -1, zOut);
        if (rc != VT_EXIT_CORRUPT) VT__FAIL("cut at %zu: exit %d", k, rc);
        ASSERT(!exists(zOut));
    }
    /* plain data, but not a snapshot */
    write_file(zCut, "\x80\x04K\x01.", 5);
    ASSERT_EQ(VT_EXIT_NOT_TRACE, import(zCut, -1, zOut));
}

/* What a stream's first 4 KiB must begin before it is read on (vt__import_head_plausible): every input the
 * readers take (the fixtures, the shipped real files, a trace) passes; noise does not, and neither does noise
 * after a JSON bracket, a pickle's PROTO or gzip's magic (a '{' began /dev/urandom once in about 128 reads, and
 * the stream was read on into TMPDIR without end). The noise is seeded: the same 20,000 heads every run. */
TEST(stream_heads)
{
    static const char *const azFile[] = {"import/kineto_small.json", "import/kineto_noaddr.json.gz",
                                         "import/snap_small.pickle", "import/snap_v1.pickle",
                                         "import/snap_ring_full.pickle", "import/nsys2024_enums.sqlite",
                                         "real/param_dlrm_v100_rank0_step.pt.trace.json",
                                         "real/param_resnet_2080ti_noprofmem.json.gz", "example-train.db"};
    static const char *const azHead[] = {"", "{", " \n[", "\x80\x04", "\x80\x02", "\x1f\x8b", "\xef\xbb\xbf{"};
    static unsigned char a[4096];
    const char *zDir = getenv("VT_TEST_DATA");
    uint64_t x = 0x9e3779b97f4a7c15u;
    int nTaken = 0;
    for (size_t i = 0; i < sizeof azFile / sizeof *azFile; i++) {
        char zPath[4096];
        FILE *f;
        size_t n;
        if (strstr(azFile[i], ".gz") && !vt__src_can_gunzip()) continue; /* refused: nothing gzip'd is read */
        snprintf(zPath, sizeof zPath, "%s/%s", zDir ? zDir : "tests/data", azFile[i]);
        f = fopen(zPath, "rb");
        if (!f) VT__FAIL("%s: %s", zPath, strerror(errno));
        n = fread(a, 1, sizeof a, f);
        fclose(f);
        ASSERT(n > 16); /* a file shorter than 4 KiB: its whole self */
        if (!vt__import_head_plausible(a, n)) VT__FAIL("%s: its head was taken for noise", azFile[i]);
    }
    for (int r = 0; r < 20000; r++) {
        const char *zHead = azHead[r % (int)(sizeof azHead / sizeof *azHead)];
        for (size_t k = 0; k < sizeof a; k++) { /* xorshift64 */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            a[k] = (unsigned char)x;
        }
        memcpy(a, zHead, strlen(zHead));
        nTaken += vt__import_head_plausible(a, sizeof a);
    }
    ASSERT_EQ(0, nTaken);
    /* protocol 2, as torch.save of old and pickle.dump(protocol=2) write it (no frames) */
    ASSERT(vt__import_head_plausible((const unsigned char *)"\x80\x02}q\x00(X\x08\x00\x00\x00segmentsq\x01]q", 20));
    memset(a, ' ', sizeof a); /* blanks alone: undecided, read on (the spool's free-space bound stops them) */
    ASSERT(vt__import_head_plausible(a, sizeof a));
    a[100] = '{', a[4095] = 0xe2; /* a character cut by the end of the window */
    ASSERT(vt__import_head_plausible(a, sizeof a));
    a[200] = 1;
    ASSERT(!vt__import_head_plausible(a, sizeof a));
}

TEST(kineto_trace)
{
    const char *zOut = scratch("kin.db");
    ASSERT_EQ(VT_EXIT_OK, import(fixture("kineto_small.json"), -1, zOut));
    ASSERT_STREQ("kineto_json", qs(zOut, "SELECT value FROM meta WHERE key = 'source_format'"));
    /* memory: CUDA events by Addr with signed Bytes; times relative to baseTimeNanoseconds */
    ASSERT_EQ(2, q(zOut, "SELECT count(*) FROM tensor_event WHERE op = 1 AND source = 2 AND device = 0"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM tensor_event WHERE op = 2 AND address = 28672 AND bytes = 4096"));
    ASSERT_EQ(T_NS + 110500, q(zOut, "SELECT ts FROM tensor_event WHERE address = 28672 AND op = 1"));
    ASSERT_EQ(1, q(zOut, "SELECT value FROM meta WHERE key = 'kineto.cpu_memory_events'"));
    /* kernel, copy (pageable to device), memset, the step, the device, the rank */
    ASSERT_EQ(10500, q(zOut, "SELECT end - start FROM kernel WHERE grid_x = 4 AND grid_y = 2 AND block_x = 128"
                             " AND registers = 32 AND correlation = 42"));
    ASSERT_STREQ("void sgemm_kernel<128>(float*)", qs(zOut, "SELECT s.value FROM kernel k JOIN string s ON s.id = k.name_id"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM memcpy WHERE copy_kind = 1 AND src_kind = 1 AND dst_kind = 3"
                         " AND bytes = 1048576"));
    ASSERT_EQ(256, q(zOut, "SELECT bytes FROM memset WHERE mem_kind = 3"));
    ASSERT_EQ(900000, q(zOut, "SELECT end - start FROM nvtx_range r JOIN string s ON s.id = r.name_id"
                              " WHERE s.value = 'ProfilerStep#3'"));
    ASSERT_STREQ("Test GPU", qs(zOut, "SELECT name FROM device WHERE id = 0 AND total_bytes = 17179869184"));
    ASSERT_EQ(3, q(zOut, "SELECT value FROM meta WHERE key = 'rank'"));
    ASSERT_EQ(7, q(zOut, "SELECT value FROM meta WHERE key = 'pid'"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM meta WHERE value LIKE '%futureKey%'"));
    /* rows written out of time order come back in order */
    ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM memcpy a JOIN memcpy b ON b.id = a.id + 1 WHERE a.start > b.start"));
}

/* Rows written in runs, each in time order (a snapshot's devices one after another), come back in
 * (time, as written) order, unknown times first: merged from the runs, sorted by SQLite past the runs kept
 * (VT_RUNS_MAX), and written back as they came when the table is changed before close. */
TEST(builder_runs_in_time_order)
{
    static const int aRuns[] = {1, 4, 15, 16, 40};
    for (int k = 0; k < (int)(sizeof aRuns / sizeof aRuns[0]) * 2; k++) {
        int nRun = aRuns[k / 2], bChange = k % 2, nRow = 0;
        const char *zOut = scratch("runs.db");
        struct vt__tb *tb = NULL;
        char zErr[256];
        unlink(zOut);
        ASSERT_EQ(0, vt__tb_open(zOut, 1, &tb, zErr, sizeof zErr));
        ASSERT_EQ(0, vt__tb_base(tb, T_NS));
        for (int r = 0; r < nRun; r++) {
            for (int i = 0; i < 300; i++) { /* times 0, 0, 10, 10, ... from the run's start; its first two unknown */
                struct vt__tb_tensor t;
                VT_TB_CLEAR(t);
                t.ts = r % 3 == 1 && i < 2 ? VT_TB_NULL : T_NS + (r % 5) * 7 + (i / 2) * 10;
                t.op = VT_TENSOROP_ALLOC;
                t.address = 4096 * (int64_t)nRow;
                t.bytes = nRow++; /* the order written */
                ASSERT_EQ(0, vt__tb_tensor(tb, &t));
                if (bChange && r == nRun / 2 && i == 100) ASSERT_EQ(0, vt__tb_set_device(tb, VT_TB_TENSOR, 1, 2, 3));
            }
        }
        ASSERT_EQ(0, vt__tb_close(tb, 1, zErr, sizeof zErr));
        ASSERT_EQ(nRow, q(zOut, "SELECT count(*) FROM tensor_event"));
        ASSERT_EQ(nRow, q(zOut, "SELECT max(id) FROM tensor_event"));
        ASSERT_EQ(nRow * (nRow - 1LL) / 2, q(zOut, "SELECT sum(bytes) FROM tensor_event"));
        ASSERT_EQ(bChange ? 2 : 0, q(zOut, "SELECT count(*) FROM tensor_event WHERE device = 3"));
        ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM tensor_event a JOIN tensor_event b ON b.id = a.id + 1 WHERE NOT ("
                             "(a.t IS NULL AND b.t IS NOT NULL) OR a.t < b.t OR"
                             " ((a.t = b.t OR (a.t IS NULL AND b.t IS NULL)) AND a.bytes < b.bytes))"));
        ASSERT_EQ(4096 * 5, q(zOut, "SELECT address FROM tensor_event WHERE bytes = 5"));
    }
}

TEST(kineto_without_addresses_and_bad_json)
{
    const char *zOut = scratch("noaddr.db"), *zBad = scratch("bad.json");
#if VT_HAVE_ZLIB
    ASSERT_EQ(VT_EXIT_OK, import(fixture("kineto_noaddr.json.gz"), -1, zOut));
    ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM tensor_event"));
    ASSERT_EQ(12288, q(zOut, "SELECT value FROM meta WHERE key = 'kineto.device.0.peak_sum_bytes'"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM meta WHERE key LIKE 'import_note.%' AND value LIKE '%no lifetimes%'"));
#else
    { /* built without zlib: a gzip'd trace is refused with the reason */
        char zErr[256];
        int fmt;
        ASSERT_EQ(VT_EXIT_NOT_TRACE, vt__import_detect(fixture("kineto_noaddr.json.gz"), &fmt, zErr, sizeof zErr));
        ASSERT_CONTAINS(zErr, "built without zlib");
    }
#endif
    write_file(zBad, "{\"traceEvents\": [{\"ph\": \"X\",}]}", 31);
    ASSERT_EQ(VT_EXIT_CORRUPT, import(zBad, -1, zOut));
    write_file(zBad, "{\"traceEvents\": [{\"ph\": \"X\"}", 28);
    ASSERT_EQ(VT_EXIT_CORRUPT, import(zBad, -1, zOut));
    write_file(zBad, "{\"other\": 1}", 12);
    ASSERT_EQ(VT_EXIT_NOT_TRACE, import(zBad, -1, zOut));
#if VT_HAVE_ZLIB
    /* gzip around something else: named as such (SQLite would call it "not a database") */
    {
        static const char azBody[][24] = {"random words, not JSON", "SQLite format 3\0 page"};
        char zErr[256];
        int fmt;
        for (int i = 0; i < 2; i++) {
            gzFile gz = gzopen(zBad, "wb");
            ASSERT(gz != NULL);
            ASSERT_EQ(24, gzwrite(gz, azBody[i], 24));
            ASSERT_EQ(Z_OK, gzclose(gz));
            ASSERT_EQ(VT_EXIT_NOT_TRACE, vt__import_detect(zBad, &fmt, zErr, sizeof zErr));
            ASSERT_CONTAINS(zErr, i ? "gzip-compressed SQLite file" : "gzip-compressed, but");
        }
    }
#endif
}

/* Write the Kineto trace zJson to scratch file zName and import it; the trace's path. */
static const char *kineto_json(const char *zName, const char *zJson)
{
    static char zOut[4096];
    const char *zIn = scratch(zName);
    write_file(zIn, zJson, strlen(zJson));
    snprintf(zOut, sizeof zOut, "%s.db", zIn);
    ASSERT_EQ(VT_EXIT_OK, import(zIn, -1, zOut));
    return zOut;
}

TEST(kineto_hip_memory)
{
    /* ROCm: the GPU's memory events are Device Type 6 */
    const char *zOut = kineto_json("hip.json",
        "{\"profile_memory\": 1, \"traceEvents\": ["
        "{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 9, \"tid\": 9, \"ts\": 10, \"args\": {\"Device Type\": 6,"
        " \"Device Id\": 0, \"Addr\": 4096, \"Bytes\": 512, \"Total Allocated\": 512}},"
        "{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 9, \"tid\": 9, \"ts\": 20, \"args\": {\"Device Type\": 6,"
        " \"Device Id\": 0, \"Addr\": 4096, \"Bytes\": -512, \"Total Allocated\": 0}},"
        "{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 9, \"tid\": 9, \"ts\": 30, \"args\": {\"Device Type\": 0,"
        " \"Device Id\": -1, \"Addr\": 8192, \"Bytes\": 64}}]}");
    ASSERT_EQ(2, q(zOut, "SELECT count(*) FROM tensor_event WHERE device = 0 AND address = 4096"));
    ASSERT_EQ(2, q(zOut, "SELECT value FROM meta WHERE key = 'kineto.memory_events'"));
    ASSERT_EQ(1, q(zOut, "SELECT value FROM meta WHERE key = 'kineto.cpu_memory_events'"));
    ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM meta WHERE key LIKE 'import_note.%' AND value LIKE '%profile_memory%'"));
}

#define KMEM(ts, addr, bytes, total)                                                                   \
    "{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 9, \"tid\": 9, \"ts\": " #ts ", \"args\": {\"Device Type\": 1," \
    " \"Device Id\": 0, \"Addr\": " #addr ", \"Bytes\": " #bytes ", \"Total Allocated\": " #total "}}"

TEST(kineto_totals_in_time_order)
{
    /* 5000 B allocated before the trace; events written out of time order (as Kineto's threads do) */
    const char *zOut = kineto_json("order.json",
        "{\"traceEvents\": [" KMEM(10, 1, 1000, 6000) "," KMEM(30, 1, -1000, 7000) "," KMEM(40, 2, -2000, 5000) ","
        KMEM(20, 2, 2000, 8000) "]}");
    ASSERT_EQ(3000, q(zOut, "SELECT value FROM meta WHERE key = 'kineto.device.0.peak_sum_bytes'"));
    ASSERT_EQ(8000, q(zOut, "SELECT value FROM meta WHERE key = 'kineto.device.0.peak_total_allocated'"));
    ASSERT_EQ(5000, q(zOut, "SELECT value FROM meta WHERE key = 'kineto.device.0.allocated_before_trace'"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM meta WHERE key LIKE 'import_note.%' AND value LIKE"
                         " 'device 0: 4.88 KiB was already allocated when the trace begins%peaks at 7.81 KiB%at 2.93 KiB'"));
    /* nothing before the trace: no note */
    zOut = kineto_json("order0.json", "{\"traceEvents\": [" KMEM(10, 1, 1000, 1000) "," KMEM(20, 1, -1000, 0) "]}");
    ASSERT_EQ(-998, q(zOut, "SELECT value FROM meta WHERE key = 'kineto.device.0.allocated_before_trace'"));
    ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM meta WHERE key LIKE 'import_note.%' AND value LIKE '%already%'"));
}

#define KSPAN(cat, name, tid, ts, dur)                                                                 \
    "{\"ph\": \"X\", \"cat\": \"" cat "\", \"name\": \"" name "\", \"pid\": 9, \"tid\": " #tid ", \"ts\": " #ts \
    ", \"dur\": " #dur "}"
#define KALLOC(tid, ts, addr)                                                                          \
    "{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 9, \"tid\": " #tid ", \"ts\": " #ts ", \"args\": {\"Device Type\": 1," \
    " \"Device Id\": 0, \"Addr\": " #addr ", \"Bytes\": 4096}}"

/* The call site a trace gives the allocation at addr ("" when it has none). */
static const char *site_of(const char *zDb, int64_t addr)
{
    static char z[512];
    sqlite3 *db = NULL;
    int rc = SQLITE_OK;
    char *zSite = NULL, zSql[160];
    int64_t id;
    snprintf(zSql, sizeof zSql, "SELECT coalesce(stack_id, -1) FROM tensor_event WHERE address = %lld AND op = 1",
             (long long)addr);
    id = q(zDb, zSql);
    z[0] = 0;
    if (id < 0) return z;
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zDb, &db, SQLITE_OPEN_READONLY, NULL));
    zSite = vt__stack_describe(db, id, &rc);
    ASSERT(zSite);
    snprintf(z, sizeof z, "%s", zSite);
    free(zSite);
    sqlite3_close(db);
    return z;
}

/*
 * Kineto writes the CPU operators, the Python functions and the memory events apart (here the memory
 * events first): each allocation takes its site from the innermost operator around it on its thread
 * and the Python functions around that; a backward operator with the autograd node it runs in.
 */
TEST(kineto_sites_from_operators)
{
    const char *zOut = kineto_json("sites.json",
        "{\"traceEvents\": ["
        KALLOC(9, 235, 4096) "," KALLOC(9, 500, 8192) "," KALLOC(10, 2150, 12288) "," KALLOC(11, 50, 16384) ","
        KSPAN("cpu_op", "aten::linear", 9, 210, 580) "," KSPAN("cpu_op", "aten::addmm", 9, 220, 560) ","
        KSPAN("cpu_op", "aten::empty", 9, 230, 10) ","
        KSPAN("cpu_op", "autograd::engine::evaluate_function: CompiledFunctionBackward", 10, 2000, 1000) ","
        KSPAN("cpu_op", "CompiledFunctionBackward", 10, 2010, 980) "," KSPAN("cpu_op", "aten::mm", 10, 2100, 100) ","
        KSPAN("python_function", "train.py(66): train_one_epoch", 9, 0, 1000) ","
        KSPAN("python_function", "torch/nn/modules/module.py(1743): _call_impl", 9, 100, 800) ","
        KSPAN("python_function", "model.py(149): forward", 9, 150, 700) ","
        KSPAN("python_function", "<built-in method linear of PyCapsule object at 0x7f>", 9, 200, 600) "]}");
    ASSERT_STREQ("model.py:149 in forward", site_of(zOut, 4096));
    ASSERT_EQ(4, q(zOut, "SELECT depth FROM stack WHERE id = (SELECT stack_id FROM tensor_event WHERE address = 4096)"));
    ASSERT_STREQ("aten::empty", qs(zOut, "SELECT s.value FROM frame f JOIN string s ON s.id = f.function_id WHERE "
                                         "f.kind = 0 AND f.stack_id = (SELECT stack_id FROM tensor_event WHERE address = 4096)"));
    ASSERT_STREQ("aten::addmm", qs(zOut, "SELECT s.value FROM frame f JOIN string s ON s.id = f.function_id WHERE "
                                         "f.kind = 0 AND f.stack_id = (SELECT stack_id FROM tensor_event WHERE address = 8192)"));
    ASSERT_STREQ("aten::mm in CompiledFunctionBackward (backward pass: autograd thread, no Python frame)",
                 site_of(zOut, 12288));
    ASSERT_STREQ("", site_of(zOut, 16384)); /* outside every operator */
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM meta WHERE key LIKE 'import_note.%' AND value LIKE"
                         " '3 GPU allocations take their call site from the CPU operator they ran in and the Python%'"));
}

TEST(kineto_step_once)
{
    /* the step on the CPU and its copy on the GPU timeline (a stream's thread): one range */
    const char *zOut = kineto_json("steps.json",
        "{\"traceEvents\": ["
        "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#6\", \"pid\": 9, \"tid\": 9,"
        " \"ts\": 100, \"dur\": 50},"
        "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#6\", \"pid\": 0, \"tid\": 7,"
        " \"ts\": 110, \"dur\": 45}]}");
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM nvtx_range"));
    ASSERT_EQ(9, q(zOut, "SELECT thread FROM nvtx_range"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM meta WHERE key LIKE 'import_note.%' AND value LIKE"
                         " '1 ProfilerStep#N ranges imported%1 GPU-timeline copies (gpu_user_annotation) are left out'"));
}

TEST(kineto_base_after_events)
{
    /* Kineto writes baseTimeNanoseconds after traceEvents: rows keep their times, the wall clock gets the base */
    const char *zOut = kineto_json("late.json",
        "{\"traceEvents\": [" KMEM(1000, 1, 64, 64) "," KMEM(1500, 1, -64, 0) "], \"baseTimeNanoseconds\": "
        "1700000000000000000}");
    ASSERT_EQ(1000000, q(zOut, "SELECT min(ts) FROM tensor_event"));
    ASSERT_EQ(1000000, q(zOut, "SELECT value FROM meta WHERE key = 'clock_anchor_cupti_ns'"));
    ASSERT_EQ(T_NS + 1000000, q(zOut, "SELECT value FROM meta WHERE key = 'clock_anchor_wall_ns'"));
    {
        struct vt_tracefile f;
        ASSERT_EQ(VT_EXIT_OK, vt__read_open(&f, zOut, 0, NULL));
        ASSERT_EQ(T_NS + 1500000, vt__read_wall(&f, 1500000));
        vt__read_close(&f);
    }
}

TEST(kineto_pid_from_operators)
{
    /* no memory events, no steps: the process is the CPU operators' (the GPU events' pid is a device) */
    const char *zOut = kineto_json("ops.json",
        "{\"traceEvents\": ["
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 5, \"dur\": 1},"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 23442, \"tid\": 23442,"
        " \"ts\": 10, \"dur\": 5}]}");
    ASSERT_EQ(23442, q(zOut, "SELECT value FROM meta WHERE key = 'pid'"));
}

TEST(nsys_exports)
{
    int64_t *aPid = NULL, *aEv = NULL;
    int n = 0;
    char zErr[256];
    const char *zA = scratch("nsys100.db"), *zB = scratch("nsys200.db"), *zE = scratch("nsysenum.db");
    /* 2022 layout: no enum tables, no session start, two processes */
    ASSERT_EQ(VT_EXIT_OK, vt__nsys_pids(fixture("nsys2022_two_processes.sqlite"), &aPid, &aEv, &n, zErr, sizeof zErr));
    ASSERT_EQ(2, n);
    ASSERT((aPid[0] == 100 && aPid[1] == 200) || (aPid[0] == 200 && aPid[1] == 100));
    free(aPid);
    free(aEv);
    ASSERT_EQ(VT_EXIT_OK, import(fixture("nsys2022_two_processes.sqlite"), 100, zA));
    ASSERT_EQ(VT_EXIT_OK, import(fixture("nsys2022_two_processes.sqlite"), 200, zB));
    ASSERT_EQ(100, q(zA, "SELECT value FROM meta WHERE key = 'pid'"));
    ASSERT_EQ(2, q(zA, "SELECT count(*) FROM memory_event"));
    ASSERT_EQ(0x7000000, q(zA, "SELECT address FROM memory_event WHERE op = 1 AND mem_kind = 3 AND api = 1 AND thread = 100"));
    ASSERT_EQ(0xE000000, q(zB, "SELECT address FROM memory_event WHERE op = 2 AND api = 2"));
    ASSERT_EQ(4, q(zA, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(1, q(zA, "SELECT count(*) FROM oom_event WHERE api = 1 AND status = 2 AND bytes IS NULL AND ts = 1040"));
    ASSERT_EQ(1, q(zA, "SELECT count(*) FROM memcpy WHERE copy_kind = 1 AND src_kind = 1 AND dst_kind = 3"));
    ASSERT_STREQ("gemm_kernel(float*)", qs(zB, "SELECT s.value FROM kernel k JOIN string s ON s.id = k.name_id"));
    ASSERT_EQ(1, q(zA, "SELECT depth FROM nvtx_range r JOIN string s ON s.id = r.name_id WHERE s.value = 'epoch 1'"));
    ASSERT_EQ(2, q(zA, "SELECT kind FROM nvtx_range r JOIN string s ON s.id = r.name_id WHERE s.value = 'mark'"));
    ASSERT_STREQ("Fixture GPU", qs(zB, "SELECT name FROM device WHERE id = 0"));
    ASSERT_EQ(2000, q(zB, "SELECT min(start) FROM nvtx_range") - 1);
    /* enum tables and a session start */
    ASSERT_EQ(VT_EXIT_OK, import(fixture("nsys2024_enums.sqlite"), -1, zE));
    ASSERT_EQ(1, q(zE, "SELECT count(*) FROM memcpy WHERE src_kind = 1 AND dst_kind = 3"));
    ASSERT_EQ(2, q(zE, "SELECT count(*) FROM memory_event WHERE mem_kind = 3"));
    ASSERT_EQ(T_NS, q(zE, "SELECT value FROM meta WHERE key = 'clock_anchor_wall_ns'"));
    /* Nsight's demangled and short names: the kernel's name and its short form in kernel_name */
    ASSERT_STREQ("gemm_kernel(float*)|gemm_kernel",
                 qs(zE, "SELECT d.value || '|' || s.value FROM kernel k JOIN kernel_name n ON n.name_id = k.name_id"
                        " JOIN string d ON d.id = n.demangled_id JOIN string s ON s.id = n.short_id"));
}

TEST(nsys_truncated)
{
    /* an export cut short: damaged (6), like a truncated trace, not "not a format vramtrace imports" (4) */
    static char aBuf[8192];
    const char *zCut = scratch("cut.sqlite"), *zOut = scratch("cut.db");
    FILE *f = fopen(fixture("nsys2024_enums.sqlite"), "rb");
    ASSERT(f != NULL);
    ASSERT_EQ(sizeof aBuf, fread(aBuf, 1, sizeof aBuf, f));
    fclose(f);
    write_file(zCut, aBuf, sizeof aBuf);
    remove(zOut);
    ASSERT_EQ(VT_EXIT_CORRUPT, import(zCut, -1, zOut));
    ASSERT(!exists(zOut));
}

TEST(nsys_without_cuda_trace)
{
    /* an export recorded without CUDA tracing: no runtime, kernel, copy or memory-usage table */
    const char *zIn = scratch("nocuda.sqlite"), *zOut = scratch("nocuda.db");
    sqlite3 *db = NULL;
    remove(zIn);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zIn, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db,
                                      "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
                                      "CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER);"
                                      "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES(1700000000000000000);",
                                      NULL, NULL, NULL));
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_OK, import(zIn, -1, zOut));
    ASSERT_EQ(0, q(zOut, "SELECT value FROM meta WHERE key = 'nsys.cuda_trace'"));
    ASSERT_EQ(1, q(zOut, "SELECT count(*) FROM meta WHERE key LIKE 'import_note.%' AND value LIKE"
                         " 'the export holds no CUDA trace%'"));
    ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM meta WHERE key LIKE 'import_note.%' AND value GLOB '*api_call*'"));
}

TEST(nsys_allocation_calls_without_sizes)
{
    /* the shipped nvFuser export: 10 cudaMalloc, 1 cudaHostAlloc and 1 cudaFree, no memory-usage table */
    const char *zDir = getenv("VT_TEST_DATA"), *zOut = scratch("matmul.db");
    char zIn[4096];
    snprintf(zIn, sizeof zIn, "%s/real/fuser_h200_test_matmul_nsys2024.sqlite", zDir ? zDir : "tests/data");
    ASSERT_EQ(VT_EXIT_OK, import(zIn, -1, zOut));
    ASSERT_STREQ("the export has no CUDA_GPU_MEMORY_USAGE_EVENTS (recorded without --cuda-memory-usage=true): no "
                 "allocation sizes or addresses are known, so there are no lifetimes, leaks or peaks; allocation "
                 "calls without sizes (in api_call): 11 allocations (10 cudaMalloc, 1 cudaHostAlloc), 1 free (1 "
                 "cudaFree), sizes unknown (not balanced within the recorded window)",
                 qs(zOut, "SELECT value FROM meta WHERE key LIKE 'import_note.%' AND value LIKE '%USAGE%'"));
    ASSERT_EQ(-998, q(zOut, "SELECT value FROM meta WHERE key = 'nsys.cuda_trace'"));
}

/* vt__cmd_import(n, av); what it printed on standard error into z (size nZ). Returns its exit code. */
static int import_said(int n, char **av, char *z, size_t nZ)
{
    int rc, fdErr = dup(2), fd = open(scratch("said.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT(fdErr >= 0 && fd >= 0);
    fflush(stderr);
    dup2(fd, 2);
    close(fd);
    rc = vt__cmd_import(n, av);
    fflush(stderr);
    dup2(fdErr, 2);
    close(fdErr);
    vt_read_file(scratch("said.txt"), z, nZ);
    return rc;
}

TEST(command_line)
{
    char zDir[4096], zForeign[4096], zPat[4200], zOne[4200];
    sqlite3 *db;
    char *argv[8];
    snprintf(zDir, sizeof zDir, "%s", scratch("out"));
    snprintf(zForeign, sizeof zForeign, "%s", scratch("foreign.db"));
    mkdir(zDir, 0700);
    /* -o DIR/: one trace per input, one per process of an Nsight export */
    snprintf(zPat, sizeof zPat, "%s/", zDir);
    {
        char zA[4096], zB[4096];
        snprintf(zA, sizeof zA, "%s", fixture("snap_small.pickle"));
        snprintf(zB, sizeof zB, "%s", fixture("nsys2022_two_processes.sqlite"));
        char *av[] = {"import", "-q", zA, zB, "-o", zPat, NULL};
        ASSERT_EQ(VT_EXIT_OK, vt__cmd_import(6, av));
    }
    ASSERT(exists(scratch("out/snap_small.db")));
    ASSERT(exists(scratch("out/nsys2022_two_processes.100.db")));
    ASSERT(exists(scratch("out/nsys2022_two_processes.200.db")));
    /* the notes on one process of several name it, as the output line does */
    {
        char zB[4096], zNotes[4096];
        snprintf(zB, sizeof zB, "%s", fixture("nsys2022_two_processes.sqlite"));
        char *av[] = {"import", "-f", zB, "-o", zPat, NULL};
        ASSERT_EQ(VT_EXIT_OK, import_said(5, av, zNotes, sizeof zNotes));
        ASSERT_CONTAINS(zNotes, "nsys2022_two_processes.sqlite: process 100: note: failed allocation calls");
        ASSERT_CONTAINS(zNotes, "nsys2022_two_processes.sqlite: process 200: note: failed allocation calls");
    }
    /* no file: one line naming what is missing, as every command says it (it printed the whole help) */
    {
        char zNotes[4096];
        char *av[] = {"import", "-q", NULL};
        ASSERT_EQ(VT_EXIT_USAGE, import_said(2, av, zNotes, sizeof zNotes));
        ASSERT_CONTAINS(zNotes, "vramtrace: import: no file given (usage: vramtrace import ");
        ASSERT_EQ(strlen(zNotes) - 1, (size_t)(strchr(zNotes, '\n') - zNotes)); /* one line */
    }
    /* two inputs whose names give one output: the second refused (usage), with or without --force, never
     * written over the first (it was refused as "exists", and with --force replaced it in silence) */
    {
        char zA[4096], zB[4200], zNotes[4096], zSub[4200], zOut2[4200];
        snprintf(zSub, sizeof zSub, "%s/b", zDir);
        mkdir(zSub, 0700);
        snprintf(zA, sizeof zA, "%s", fixture("snap_small.pickle"));
        snprintf(zB, sizeof zB, "%s/b/snap_small.pickle", zDir);
        ASSERT_EQ(0, symlink(zA, zB));
        snprintf(zOut2, sizeof zOut2, "%s/twice/", zDir);
        char *av[] = {"import", "-q", "-f", zA, zB, zA, "-o", zOut2, NULL};
        ASSERT_EQ(VT_EXIT_USAGE, import_said(8, av, zNotes, sizeof zNotes));
        ASSERT_CONTAINS(zNotes, "b/snap_small.pickle would both be written to ");
        ASSERT_CONTAINS(zNotes, "twice/snap_small.db: give -o a pattern that tells them apart");
        ASSERT(strstr(zNotes, "given again") == NULL); /* -q */
        ASSERT_EQ(1, q(scratch("out/twice/snap_small.db"), "SELECT count(*) FROM meta WHERE key = 'source_file' AND value "
                                                       "NOT LIKE '%/b/%'")); /* the first input's, kept */
    }
    /* a pattern into a directory that does not exist: which part is missing, and how to have it made */
    {
        char zA[4096], zNotes[4096], zMissing[4200];
        snprintf(zA, sizeof zA, "%s", fixture("snap_small.pickle"));
        snprintf(zMissing, sizeof zMissing, "%s/nodir/%%n.db", zDir);
        char *av[] = {"import", "-q", zA, "-o", zMissing, NULL};
        ASSERT_EQ(VT_EXIT_NOFILE, import_said(5, av, zNotes, sizeof zNotes));
        ASSERT_CONTAINS(zNotes, "/nodir/snap_small.db: cannot create: no directory ");
        ASSERT_CONTAINS(zNotes, "/nodir (an -o ending in '/' is created when missing)\n");
    }
    /* --pid on a file of one process: imported whole, and said */
    {
        char zA[4096], zNotes[4096];
        snprintf(zA, sizeof zA, "%s", fixture("snap_small.pickle"));
        char *av[] = {"import", "-f", "--pid", "7", zA, "-o", zPat, NULL};
        ASSERT_EQ(VT_EXIT_OK, import_said(7, av, zNotes, sizeof zNotes));
        ASSERT_CONTAINS(zNotes, "snap_small.pickle: note: --pid 7 left aside: a pytorch_snapshot file holds one process, "
                                "imported whole");
    }
    /* an existing output needs --force; --output=PATTERN with %n and %p */
    snprintf(zOne, sizeof zOne, "--output=%s/%%n-pid%%p.trace", zDir);
    argv[0] = "import", argv[1] = "-q", argv[2] = (char *)fixture("nsys2024_enums.sqlite"), argv[3] = zOne;
    argv[4] = NULL;
    ASSERT_EQ(VT_EXIT_OK, vt__cmd_import(4, argv));
    ASSERT(exists(scratch("out/nsys2024_enums-pid100.trace")));
    ASSERT_EQ(VT_EXIT_NOFILE, vt__cmd_import(4, argv));
    argv[4] = "--force";
    ASSERT_EQ(VT_EXIT_OK, vt__cmd_import(5, argv));
    /* a directory ending in '/' that does not exist yet is created with its parents, as by record */
    {
        char zNew[4200], zA[4096];
        snprintf(zNew, sizeof zNew, "%s/new/sub/", zDir);
        snprintf(zA, sizeof zA, "%s", fixture("snap_small.pickle"));
        char *av[] = {"import", "-q", zA, "-o", zNew, NULL};
        ASSERT_EQ(VT_EXIT_OK, vt__cmd_import(5, av));
        ASSERT(exists(scratch("out/new/sub/snap_small.db")));
    }
    /* two inputs, one output name: refused before anything is written */
    snprintf(zOne, sizeof zOne, "%s/one.db", zDir);
    {
        char zA[4096], zB[4096];
        snprintf(zA, sizeof zA, "%s", fixture("snap_small.pickle"));
        snprintf(zB, sizeof zB, "%s", fixture("snap_v1.pickle"));
        char *av[] = {"import", zA, zB, "-o", zOne, NULL};
        ASSERT_EQ(VT_EXIT_USAGE, vt__cmd_import(5, av));
        ASSERT(!exists(zOne));
    }
    /* missing input, a foreign SQLite file, an unknown option */
    argv[2] = (char *)scratch("missing.pickle"), argv[3] = "-o", argv[4] = zOne;
    ASSERT_EQ(VT_EXIT_NOFILE, vt__cmd_import(5, argv));
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zForeign, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL));
    sqlite3_close(db);
    argv[2] = zForeign;
    ASSERT_EQ(VT_EXIT_NOT_TRACE, vt__cmd_import(5, argv));
    /* a directory is not an input (exit 3, as for the readers); an empty file is no format (exit 4) */
    {
        char zErr[256];
        int fmt;
        argv[2] = zDir;
        ASSERT_EQ(VT_EXIT_NOFILE, vt__cmd_import(5, argv));
        ASSERT_EQ(VT_EXIT_NOFILE, vt__import_detect(zDir, &fmt, zErr, sizeof zErr));
        ASSERT_STREQ("is a directory, not a file to import", zErr);
        fclose(fopen(scratch("empty.pickle"), "w"));
        ASSERT_EQ(VT_EXIT_NOT_TRACE, vt__import_detect(scratch("empty.pickle"), &fmt, zErr, sizeof zErr));
        ASSERT_STREQ("empty file, not a format vramtrace imports", zErr);
    }
    argv[2] = "--bogus";
    ASSERT_EQ(VT_EXIT_USAGE, vt__cmd_import(5, argv));
}

/* analyze --snapshot merges into a trace the tracer wrote: anything else is refused as a usage error. */
TEST(snapshot_merge_refusals)
{
    char zA[4096], zB[4096];
    setenv("TMPDIR", getenv("VT_TEST_TMP") ? getenv("VT_TEST_TMP") : "/tmp", 1);
    snprintf(zA, sizeof zA, "%s", fixture("snap_small.pickle"));
    snprintf(zB, sizeof zB, "%s", fixture("kineto_small.json"));
    ASSERT_EQ(VT_EXIT_USAGE, vt__snapshot_merge(zA, zB, 0, 0, NULL)); /* not a snapshot */
    snprintf(zB, sizeof zB, "%s", fixture("snap_v1.pickle"));
    ASSERT_EQ(VT_EXIT_USAGE, vt__snapshot_merge(zA, zB, 0, 0, NULL)); /* the "trace" is a snapshot too */
}

/* analyze, info, sql and export open these files through the read layer (vt__read_open): a temporary import. */
TEST(readers_open_other_formats)
{
    struct vt_tracefile f;
    sqlite3_stmt *p = NULL;
    /* the temporary traces go to the test's scratch directory: a test ends with _exit, not exit */
    setenv("TMPDIR", getenv("VT_TEST_TMP") ? getenv("VT_TEST_TMP") : "/tmp", 1);
    ASSERT_EQ(VT_EXIT_OK, vt__read_open(&f, fixture("snap_small.pickle"), 0, NULL));
    ASSERT(f.zImported != NULL);
    ASSERT_EQ(6, f.aT[VT_T_TENSOR].nRow);
    ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(f.db, "SELECT count(*) FROM tensor_event", -1, &p, NULL));
    ASSERT_EQ(SQLITE_ROW, sqlite3_step(p));
    ASSERT_EQ(6, sqlite3_column_int(p, 0));
    sqlite3_finalize(p);
    vt__read_close(&f);
    /* asked to write results back: an imported file is read, never written */
    ASSERT_EQ(VT_EXIT_OK, vt__read_open(&f, fixture("kineto_small.json"), VT_READ_WRITE, NULL));
    ASSERT(!f.bWritable && !f.bReadOnlyFile);
    {
        int bSaid = 0; /* and says so: analyze --save on such a file writes nothing */
        for (int i = 0; i < f.nNote; i++) bSaid |= strstr(f.azNote[i], "results were not written back") != NULL;
        ASSERT(bSaid);
    }
    vt__read_close(&f);
    ASSERT_EQ(VT_EXIT_NOT_TRACE, vt__read_open(&f, fixture("snap_hostile.pickle"), 0, NULL));
    ASSERT(f.db == NULL);
    ASSERT_EQ(VT_EXIT_NOT_TRACE, vt__read_open(&f, fixture("make_fixtures.py"), 0, NULL));
    {
        char *av[] = {"analyze", "--no-write", "--format", "json", "-o", (char *)scratch("report.json"),
                      (char *)fixture("nsys2022_two_processes.sqlite"), NULL};
        ASSERT_EQ(VT_EXIT_OK, vt__cmd_analyze(7, av));
    }
    {
        /* several files in sql: each attached through its temporary trace */
        char zA[4096], zB[4096];
        snprintf(zA, sizeof zA, "%s", fixture("snap_small.pickle"));
        snprintf(zB, sizeof zB, "%s", fixture("kineto_small.json"));
        char *av[] = {"sql", "--format", "csv", zA, zB,
                      "SELECT count(*) FROM all_meta WHERE key = 'source_format'", NULL};
        ASSERT_EQ(VT_EXIT_OK, vt__cmd_sql(6, av));
    }
}

/* The real files, when present; counts checked independently with Python's pickle, json and sqlite3. */
TEST(real_files)
{
    const char *zDir = getenv("VT_REAL_DATA");
    char zIn[4096];
    const char *zOut;
    if (!zDir || !zDir[0]) SKIP("the real files are not here: configure with -DVT_REAL_DATA=DIR (README.md, Tests)");
#define REAL(name) (snprintf(zIn, sizeof zIn, "%s/%s", zDir, name), exists(zIn))
    if (REAL("cs336_niu_fwd_bwd_200.pickle")) {
        zOut = scratch("niu.db");
        ASSERT_EQ(VT_EXIT_OK, import(zIn, -1, zOut));
        ASSERT_EQ(83, q(zOut, "SELECT count(*) FROM memory_event WHERE op = 1 AND ts IS NOT NULL"));
        ASSERT_EQ(3907, q(zOut, "SELECT count(*) FROM tensor_event WHERE op = 1"));
        ASSERT_EQ(3745, q(zOut, "SELECT count(*) FROM tensor_event WHERE op = 2"));
        ASSERT_EQ(3745, q(zOut, "SELECT count(*) FROM tensor_event WHERE op = 3"));
        ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM tensor_event WHERE ts IS NULL")); /* the history explains the dump */
        ASSERT_EQ(6, q(zOut, "SELECT count(*) FROM nvtx_range"));
        ASSERT_EQ(-998, q(zOut, "SELECT value FROM meta WHERE key = 'history_truncated'"));
    }
    if (REAL("cs336_silmont2000_mem_snapshot_small.pickle")) {
        zOut = scratch("silmont.db");
        ASSERT_EQ(VT_EXIT_OK, import(zIn, -1, zOut));
        ASSERT_EQ(9, q(zOut, "SELECT count(*) FROM memory_event"));
        ASSERT_EQ(88, q(zOut, "SELECT count(*) FROM tensor_event"));
    }
    if (REAL("flexgen_yiyi_oom_snapshot_v1format.pickle")) {
        zOut = scratch("flexgen.db");
        ASSERT_EQ(VT_EXIT_OK, import(zIn, -1, zOut));
        ASSERT_EQ(176, q(zOut, "SELECT count(*) FROM memory_event WHERE ts IS NULL"));
        ASSERT_EQ(11844714496LL, q(zOut, "SELECT sum(bytes) FROM memory_event"));
        ASSERT_EQ(460, q(zOut, "SELECT count(*) FROM tensor_event WHERE ts IS NULL"));
        ASSERT_EQ(11840159744LL, q(zOut, "SELECT sum(bytes) FROM tensor_event")); /* 11.03 GiB at the OOM */
    }
    if (vt__src_can_gunzip() && REAL("hta_df_index_resolver_v100_ddp_memory.json.gz")) {
        zOut = scratch("hta.db");
        ASSERT_EQ(VT_EXIT_OK, import(zIn, -1, zOut));
        ASSERT_EQ(13385, q(zOut, "SELECT count(*) FROM tensor_event WHERE op = 1 AND device = 1"));
        ASSERT_EQ(13385, q(zOut, "SELECT count(*) FROM tensor_event WHERE op = 2 AND device = 1"));
        ASSERT_EQ(19370, q(zOut, "SELECT count(*) FROM kernel"));
        ASSERT_EQ(2040, q(zOut, "SELECT count(*) FROM memcpy WHERE copy_kind = 8"));
        ASSERT_EQ(880, q(zOut, "SELECT count(*) FROM memset"));
        ASSERT_EQ(5, q(zOut, "SELECT count(*) FROM nvtx_range"));
        ASSERT_EQ(1, q(zOut, "SELECT value FROM meta WHERE key = 'rank'"));
        ASSERT_EQ(783658, q(zOut, "SELECT value FROM meta WHERE key = 'pid'"));
    }
    if (vt__src_can_gunzip() && REAL("kineto_tbplugin_resnet50_v100_memory_noaddr.pt.trace.json.gz")) {
        zOut = scratch("resnet.db");
        ASSERT_EQ(VT_EXIT_OK, import(zIn, -1, zOut));
        ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM tensor_event"));
        ASSERT_EQ(8220, q(zOut, "SELECT value FROM meta WHERE key = 'kineto.memory_events'"));
        ASSERT_EQ(8772, q(zOut, "SELECT count(*) FROM kernel"));
        ASSERT_EQ(12, q(zOut, "SELECT count(*) FROM memcpy WHERE copy_kind = 1 AND src_kind = 1 AND dst_kind = 3"));
        ASSERT_EQ(312, q(zOut, "SELECT count(*) FROM memset"));
        ASSERT_EQ(6, q(zOut, "SELECT count(*) FROM nvtx_range"));
    }
    if (REAL("fuser_h200_pytorch_xentropy_benchmark_nsys2025.sqlite")) {
        int64_t *aPid = NULL, *aEv = NULL;
        int n = 0;
        char zErr[256];
        zOut = scratch("fuser.db");
        ASSERT_EQ(VT_EXIT_OK, vt__nsys_pids(zIn, &aPid, &aEv, &n, zErr, sizeof zErr));
        ASSERT_EQ(2, n);
        ASSERT_EQ(50556, aPid[0]);
        ASSERT_EQ(50922, aPid[1]);
        free(aPid);
        free(aEv);
        ASSERT_EQ(VT_EXIT_OK, import(zIn, 50556, zOut));
        ASSERT_EQ(18, q(zOut, "SELECT count(*) FROM kernel"));
        ASSERT_EQ(2, q(zOut, "SELECT count(*) FROM memcpy WHERE copy_kind = 1 AND src_kind = 1 AND dst_kind = 3"));
        ASSERT_EQ(394002432, q(zOut, "SELECT max(bytes) FROM memcpy"));
        ASSERT_EQ(3, q(zOut, "SELECT count(*) FROM memset"));
        ASSERT_EQ(13513, q(zOut, "SELECT count(*) FROM nvtx_range"));
        ASSERT_EQ(11, q(zOut, "SELECT count(*) FROM api_call WHERE api = 1 AND status = 0"));
        ASSERT_EQ(45, q(zOut, "SELECT count(*) FROM api_call"));
        ASSERT_EQ(0, q(zOut, "SELECT count(*) FROM memory_event"));
        ASSERT_STREQ("NVIDIA H200", qs(zOut, "SELECT name FROM device"));
    }
}

VT_TEST_LIST(T(snapshot_current_format) T(builder_runs_in_time_order) T(snapshot_ring_buffer_and_2_0_format) T(snapshot_bad_inputs) T(stream_heads) T(kineto_trace)
                 T(snapshot_history_starts_late) T(snapshot_history_start_round_trip)
                 T(kineto_without_addresses_and_bad_json) T(kineto_hip_memory) T(kineto_totals_in_time_order) T(kineto_step_once) T(kineto_sites_from_operators) T(kineto_base_after_events) T(kineto_pid_from_operators) T(nsys_exports) T(nsys_truncated) T(nsys_without_cuda_trace) T(nsys_allocation_calls_without_sizes) T(command_line)
                     T(snapshot_merge_refusals) T(readers_open_other_formats) T(real_files))
