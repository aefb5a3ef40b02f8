/* Tests for the read layer's scan of the large tables (read/scan.c) and the rowid-order reads it enables (read/rows.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "util/errors.h"
#include "tracegen.h"
#include "v4_util.h"
#include "vramtrace/compact.h"
#include "vramtrace/migrate.h"
#include "vt_test.h"

#define DEV 0x100000000LL
#define HOST 0x7f0000000000LL

static void run(const char *zPath, struct vt_result *r)
{
    struct vt_opts o;
    const char *az[1] = {zPath};
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, r));
}

static void exec(const char *zPath, const char *zSql)
{
    sqlite3 *db = NULL;
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, zSql, NULL, NULL, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_close(db));
}

/* Store every large table's rows in reverse: rowid order becomes the reverse of time order. */
static void reverse_tables(const char *zPath)
{
    exec(zPath, "BEGIN;"
                "UPDATE memory_event SET id = -id; UPDATE memory_event SET id = 1000000 + id;"
                "UPDATE kernel SET id = -id; UPDATE kernel SET id = 1000000 + id;"
                "UPDATE memcpy SET id = -id; UPDATE memcpy SET id = 1000000 + id;"
                "UPDATE memset SET id = -id; UPDATE memset SET id = 1000000 + id;"
                "CREATE TEMP TABLE u AS SELECT correlation, kind, address, t, device FROM main.buffer_use"
                " ORDER BY rowid DESC;"
                "DELETE FROM main.buffer_use; INSERT INTO main.buffer_use SELECT * FROM u; COMMIT;");
}

/* The number at the start of the note about impossible rows, 0 when there is none. */
static int64_t hidden_note(const struct vt_trace *t)
{
    for (int i = 0; i < t->f.nNote; i++)
        if (strstr(t->f.azNote[i], "rows with impossible values")) return strtoll(t->f.azNote[i], NULL, 10);
    return 0;
}

/* The guard's own count in SQL (guard.c), table by table on a plain connection: the scan's C checks must agree. */
static int64_t guard_count(const char *zPath)
{
    sqlite3 *db = NULL;
    int64_t n = 0;
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    for (int i = 0; vt__guard_tables[i]; i++) {
        int64_t nTable = 0;
        ASSERT_EQ(SQLITE_OK, vt__guard_table(db, vt__guard_tables[i], 1, &nTable, NULL));
        n += nTable;
    }
    sqlite3_close(db);
    return n;
}

/* Whether each large table's facts came from the pass (1) or from SQL (0), as bits in enum vt_tbl order. */
static int scanned(const struct vt_tracefile *f)
{
    int m = 0;
    for (int k = 0; k < VT_T_N; k++) m |= f->aT[k].bScanned << k;
    return m;
}

/* The tables holding impossible rows, as bits in enum vt_tbl order. */
static int guarded(const struct vt_tracefile *f)
{
    int m = 0;
    for (int k = 0; k < VT_T_N; k++) m |= (f->aT[k].nHidden > 0) << k;
    return m;
}

#define ALL_TABLES ((1 << VT_T_N) - 1)

/* Ten iterations: an 8 MiB buffer, a kernel using it, a pageable copy into it half
 * overlapped by the kernel, a memset; all freed but the last. */
/* The story of build() written with time base `base` (the times it stores differ, not the times it holds). */
static void build_at(const char *zPath, int64_t base)
{
    struct tg *g = tg_open_at(zPath, base);
    ASSERT(g);
    tg_device(g, 0, "GPU", 16 * GiB);
    for (int i = 0; i < 10; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS, a = DEV + i * 16 * MiB;
        tg_alloc(g, t0, 0, 3, a, 8 * MiB, -1);
        tg_use(g, t0 + 1 * MS, tg_kernel(g, t0 + 1 * MS, t0 + 3 * MS, "gemm"), a);
        tg_memcpy(g, t0 + 2 * MS, t0 + 4 * MS, 1, 1, 3, MiB, HOST, a + 4096);
        char zSql[256];
        snprintf(zSql, sizeof zSql, "INSERT INTO memset(t, dur, bytes, value, dst) VALUES (%lld, 1000, 4096, 0, %lld)",
                 (long long)(t0 + 4 * MS - base), (long long)(a + 8192));
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(g->db, zSql, NULL, NULL, NULL));
        if (i < 9) tg_free(g, t0 + 5 * MS, 0, 3, a, 8 * MiB);
    }
    ASSERT_EQ(0, tg_close(g));
}

static void build(const char *zPath)
{
    build_at(zPath, 0);
}

/* What the two reading strategies must agree on, with the exact values of build(). */
static void check_build(const struct vt_result *r)
{
    const struct vt_trace *t = &r->aTrace[0];
    ASSERT_EQ(10, t->lc.nAlloc);
    ASSERT_EQ(9, t->lc.nFree);
    ASSERT_EQ(1, t->lc.nLiveEnd);
    ASSERT_EQ(8 * MiB, t->lc.liveEndBytes);
    ASSERT_EQ(8 * MiB, t->tl.aDev[0].peak);
    ASSERT_EQ(10, t->lc.nKernelUse);
    ASSERT_EQ(20, t->lc.nCopyUse);
    ASSERT_EQ(30, t->lc.nUseMatched);
    ASSERT_EQ(20 * MS, t->xf.kernelBusyNs);
    ASSERT_EQ(20 * MS, t->xf.copyNs);
    ASSERT_EQ(10 * MS, t->xf.copySerialNs);
    ASSERT_EQ(10, t->xf.x[0].pageCount);
    ASSERT_EQ(1 * MS, t->f.t0);
    ASSERT_EQ(95 * MS + 1000, t->f.t1);
}

/*
 * The rows the scan keeps for the replay (VT_READ_KEEP) of zPath read back as the replay's own SELECTs
 * read them (window included): every row, column and NULL of memory_event, tensor_event and the
 * kernel-argument uses alike, in the same order. Returns the tables whose rows were kept (bit VT_T_*).
 */
static int same_as_kept(const char *zPath)
{
    static const int ak[] = {VT_T_MEM, VT_T_TENSOR, VT_T_USE};
    static const char *const azCols[] = {VT_MEMROW_COLS, VT_TENSORROW_COLS, "ts, address"};
    static const int anCol[] = {VT_MEMROW_NCOL, VT_TENSORROW_NCOL, 2};
    static const char *const azFilter[] = {"1", "1", "kind = 0"};
    struct vt_tracefile f;
    int mKept = 0;
    ASSERT_EQ(VT_EXIT_OK, vt__read_open(&f, zPath, VT_READ_KEEP, NULL));
    for (int i = 0; i < 3; i++) {
        const struct vt_tblfacts *t = &f.aT[ak[i]];
        struct vt_rows c, x;
        char *z;
        if (!t->keep.bOk) {
            ASSERT(!t->keep.pFirst && t->keep.nRow == 0); /* nothing held when not kept */
            continue;
        }
        mKept |= 1 << ak[i];
        z = vt__ordered_sql(&f, ak[i], azCols[i], azFilter[i], "ts, id");
        ASSERT(z);
        /* twice: read without releasing anything (vt__rows_open_kept_peek: the chunks and what they hold stay),
         * then by the one reader that releases them */
        for (int bPeek = 1; bPeek >= 0; bPeek--) {
            const struct vt_keptchunk *pFirst = t->keep.pFirst;
            size_t held = atomic_load(&vt__kept_held);
            ASSERT_EQ(SQLITE_OK, vt__rows_open(&x, f.db, z, anCol[i], t->w));
            ASSERT_EQ(SQLITE_OK, bPeek ? vt__rows_open_kept_peek(&c, &f.aT[ak[i]].keep, t->w)
                                       : vt__rows_open_kept(&c, &f.aT[ak[i]].keep, t->w));
            for (;;) {
                ASSERT_EQ(SQLITE_OK, vt__rows_next(&x));
                ASSERT_EQ(SQLITE_OK, vt__rows_next(&c));
                ASSERT_EQ(x.bRow, c.bRow);
                if (!x.bRow) break;
                ASSERT_EQ(x.ts, c.ts);
                for (int j = 0; j < anCol[i]; j++) {
                    ASSERT_EQ(vt__rows_null(&x, j), vt__rows_null(&c, j));
                    ASSERT_EQ(vt__rows_i64(&x, j), vt__rows_i64(&c, j));
                }
            }
            vt__rows_close(&c);
            vt__rows_close(&x);
            if (bPeek) {
                ASSERT(t->keep.pFirst == pFirst);
                ASSERT_EQ(held, atomic_load(&vt__kept_held));
            }
        }
        free(z);
    }
    vt__read_close(&f);
    return mKept;
}

/* Rows stored in time order are read by rowid; stored in reverse, through the time indexes: same analysis. */
TEST(rowid_order_and_time_order_agree)
{
    const char *zPath = tg_path("scan.db");
    struct vt_result a, b;
    build(zPath);
    run(zPath, &a);
    check_build(&a);
    ASSERT(a.aTrace[0].f.aT[VT_T_MEM].w == 0 && a.aTrace[0].f.aT[VT_T_USE].w == 0 && a.aTrace[0].f.aT[VT_T_KER].w == 0);
    ASSERT(a.aTrace[0].f.aT[VT_T_COPY].w == 0 && a.aTrace[0].f.aT[VT_T_SET].w == 0 && a.aTrace[0].xf.bDone);
    ASSERT_EQ(ALL_TABLES, scanned(&a.aTrace[0].f));
    /* kernel uses, copy and memset addresses */
    ASSERT(a.aTrace[0].f.aT[VT_T_USE].bAny && a.aTrace[0].f.aT[VT_T_COPY].bAny && a.aTrace[0].f.aT[VT_T_SET].bAny);
    ASSERT_EQ(0, guarded(&a.aTrace[0].f));

    reverse_tables(zPath);
    run(zPath, &b);
    check_build(&b);
    /* reversed: every row has all the earlier ones after it; heaps of the whole table restore the order */
    ASSERT_EQ(18, b.aTrace[0].f.aT[VT_T_MEM].w);
    ASSERT_EQ(9, b.aTrace[0].f.aT[VT_T_USE].w);
    ASSERT_EQ(9, b.aTrace[0].f.aT[VT_T_KER].w);
    ASSERT_EQ(9, b.aTrace[0].f.aT[VT_T_COPY].w);
    ASSERT_EQ(9, b.aTrace[0].f.aT[VT_T_SET].w);
    ASSERT(b.aTrace[0].xf.bDone); /* the ten kernels fit the pass's hold: fed in start order all the same */
    ASSERT_EQ(a.nFind, b.nFind);
    ASSERT(a.nFind > 0);
    for (int i = 0; i < a.nFind; i++) {
        ASSERT_STREQ(a.aFind[i].zTitle, b.aFind[i].zTitle);
        ASSERT_EQ(a.aFind[i].bytes, b.aFind[i].bytes);
        ASSERT_EQ(a.aFind[i].count, b.aFind[i].count);
    }
    vt__result_free(&a);
    vt__result_free(&b);
    tg_cleanup();
}

/* The rows kept count against one bound for the whole process (vt__kept_budget): a trace opened while
 * another holds all of it keeps nothing (its replay reads SQLite), and keeps again once those rows are
 * released; every chunk made is counted back when freed, read or dropped. */
TEST(kept_rows_of_all_traces_share_one_bound)
{
    const char *zPath = tg_path("budget.db");
    struct vt_tracefile a;
    int mAll;
    size_t held;
    build(zPath);
    mAll = same_as_kept(zPath);
    ASSERT_EQ(1 << VT_T_MEM | 1 << VT_T_USE, mAll & (1 << VT_T_MEM | 1 << VT_T_USE));
    ASSERT_EQ(0, atomic_load(&vt__kept_held)); /* read back (freed as read) and closed: nothing held */

    ASSERT_EQ(VT_EXIT_OK, vt__read_open(&a, zPath, VT_READ_KEEP, NULL));
    held = atomic_load(&vt__kept_held);
    ASSERT(held >= 2 * VT_KEEP_CHUNK); /* a chunk for the memory events, one for the uses */
    vt__kept_budget = held;           /* the open trace holds the whole bound */
    ASSERT_EQ(0, same_as_kept(zPath) & (1 << VT_T_MEM | 1 << VT_T_USE));
    ASSERT_EQ(held, atomic_load(&vt__kept_held));
    vt__read_close(&a);
    ASSERT_EQ(0, atomic_load(&vt__kept_held));
    ASSERT_EQ(mAll, same_as_kept(zPath)); /* released: kept again within the same bound */
    tg_cleanup();
}

/* Impossible rows in every large table, in and out of the readers' subsets: counted exactly as the
 * guard counts them, skipped by the rowid-order readers, whatever the storage order. */
TEST(impossible_rows_counted_like_the_guard)
{
    const char *zPath = tg_path("hidden.db");
    struct vt_result r;
    build(zPath);
    exec(zPath, "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device) VALUES"
                " (96000000, 1, 3, 4096, -1, 0),"                     /* negative size */
                " (96000000, 3, 3, 4096, 1024, 0),"                   /* a VMM creation: counted too */
                " (96000000, 3, 3, 'far', 1024, 0);"                  /* and impossible: not an integer */
                "UPDATE memory_event SET pool_used = -5 WHERE id = 2;"  /* the first free */
                "INSERT INTO buffer_use(correlation, kind, address, t) VALUES"
                " (1, 0, 4096.5, 2000000),"                           /* a real number is no address */
                " (1, 1, 4096, -3),"                                  /* another kind, impossible time */
                " (1, 0, 4096, NULL);"                                /* no time: allowed, not read */
                "INSERT INTO kernel(t, dur) VALUES (5, 'soon'), (96000000, 1);"
                "INSERT INTO memcpy(t, dur, copy_kind, src_kind, dst_kind, bytes, src) VALUES"
                " (96000000, 1, 1, 1, 3, 1024, X'00');"        /* blob address */
                "INSERT INTO memset(t, dur, bytes, dst) VALUES (96000000, 1, 1125899906842625, 1);"
                /* possible rows: a zero time is unknown (outside the bounds), a copy ending before it
                 * starts has an unknown end (its start counts); the hidden rows' times count not */
                "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device) VALUES (0, 3, 3, 4096, 1024, 0);"
                "INSERT INTO memcpy(t, dur, copy_kind, src_kind, dst_kind, bytes) VALUES"
                " (97000000, -500000, 1, 1, 3, 1024);"
                "INSERT INTO memset(t, dur, bytes, value) VALUES (0, 99000000, 16, 0);"
                "INSERT INTO kernel(t, dur) VALUES (98000000, 'later');");
    ASSERT_EQ(9, guard_count(zPath));
    run(zPath, &r);
    ASSERT_EQ(9, hidden_note(&r.aTrace[0]));
    ASSERT_EQ(ALL_TABLES, scanned(&r.aTrace[0].f));
    ASSERT_EQ(1 * MS, r.aTrace[0].f.t0);
    ASSERT_EQ(97000000, r.aTrace[0].f.t1); /* the copy whose end is unknown (before its start): its start */
    /* the freed buffer whose free row is hidden stays live; the VMM creation is an allocation */
    ASSERT_EQ(11, r.aTrace[0].lc.nAlloc);
    ASSERT_EQ(8, r.aTrace[0].lc.nFree);
    ASSERT_EQ(10, r.aTrace[0].lc.nKernelUse);
    ASSERT_EQ(20 * MS + 1, r.aTrace[0].xf.kernelBusyNs); /* the 1 ns kernel added at 96 ms */
    ASSERT(r.aTrace[0].f.aT[VT_T_MEM].w == 0 && r.aTrace[0].f.aT[VT_T_USE].w == 0 && r.aTrace[0].xf.bDone);
    ASSERT_EQ(ALL_TABLES & ~(1 << VT_T_TENSOR), guarded(&r.aTrace[0].f)); /* every large table holds one */
    ASSERT_EQ(3, r.aTrace[0].f.nNoTime); /* the memory event and the memset at time 0, the use without one */
    vt__result_free(&r);
    /* kept: the impossible and untimed rows left out */
    ASSERT_EQ(1 << VT_T_MEM | 1 << VT_T_TENSOR | 1 << VT_T_USE, same_as_kept(zPath));

    reverse_tables(zPath);
    ASSERT_EQ(9, guard_count(zPath));
    run(zPath, &r);
    ASSERT_EQ(9, hidden_note(&r.aTrace[0]));
    ASSERT_EQ(1 * MS, r.aTrace[0].f.t0);
    ASSERT_EQ(97000000, r.aTrace[0].f.t1);
    ASSERT_EQ(8, r.aTrace[0].lc.nFree);
    ASSERT_EQ(10, r.aTrace[0].lc.nKernelUse);
    ASSERT(r.aTrace[0].f.aT[VT_T_MEM].w > 0 && r.aTrace[0].xf.bDone);
    vt__result_free(&r);
    tg_cleanup();
}

/* Real numbers, which only SQL compares exactly: the table's facts come from SQL, as before the pass. */
TEST(real_numbers_fall_back_to_sql)
{
    const char *zPath = tg_path("real.db");
    struct vt_result r;
    build(zPath);
    exec(zPath, "UPDATE memory_event SET t = t + 0.5 WHERE id = 3;"
                "UPDATE kernel SET dur = 4611686018427387904.0 WHERE id = 2;" /* 2^62: out of range */
                "UPDATE kernel SET t = t + 0.25 WHERE id = 3;");
    ASSERT_EQ(1, guard_count(zPath));
    run(zPath, &r);
    ASSERT_EQ(1, hidden_note(&r.aTrace[0]));
    ASSERT(r.aTrace[0].f.aT[VT_T_MEM].w == -1 && !r.aTrace[0].f.aT[VT_T_MEM].bScanned);
    ASSERT(r.aTrace[0].f.aT[VT_T_KER].w == -1 && !r.aTrace[0].xf.bDone);
    ASSERT_EQ(ALL_TABLES & ~(1 << VT_T_MEM | 1 << VT_T_KER), scanned(&r.aTrace[0].f));
    ASSERT_EQ(10, r.aTrace[0].f.nDevAlloc); /* counted by SQL */
    ASSERT_EQ(0, r.aTrace[0].f.nSegmentLike);
    ASSERT(r.aTrace[0].f.aT[VT_T_USE].w == 0);
    ASSERT_EQ(10, r.aTrace[0].lc.nAlloc);
    ASSERT_EQ(9, r.aTrace[0].lc.nFree);
    ASSERT_EQ(18 * MS, r.aTrace[0].xf.kernelBusyNs); /* one kernel hidden, one starting 0.25 ns late */
    vt__result_free(&r);
    ASSERT_EQ(1 << VT_T_TENSOR | 1 << VT_T_USE, same_as_kept(zPath)); /* memory_event read by SQL */
    tg_cleanup();
}

/*
 * Read zCols (time first) of large table k through a reader of window w and through the ordered SQL
 * (time, then rowid, as the time indexes give it; and the query taken beyond the window): every
 * row, column and NULL must agree, in the same order. Returns the rows read.
 */
static int64_t same_order(struct vt_tracefile *f, int k, int w, const char *zCols, int nCol, const char *zFilter,
                          const char *zTime)
{
    struct vt_rows c, x;
    sqlite3_stmt *pRef = NULL;
    int wSaved = f->aT[k].w;
    char *zFast, *zIdx, *zRef;
    int64_t n = 0;
    f->aT[k].w = w;
    zFast = vt__ordered_sql(f, k, zCols, zFilter, zTime);
    f->aT[k].w = -1;
    zIdx = vt__ordered_sql(f, k, zCols, zFilter, zTime);
    f->aT[k].w = wSaved;
    /* the readers leave out rows whose time is unknown */
    /* a compacted table (schema 5) is a view: its rows' order is their id */
    zRef = sqlite3_mprintf("SELECT %s FROM \"%s\" WHERE (%s) AND %s > 0 ORDER BY %s, %s", zCols, vt__tbl_name(k),
                           zFilter, zTime, zTime, vt__compact_find(vt__tbl_name(k)) >= 0 ? "id" : "rowid");
    ASSERT(zFast && zIdx && zRef);
    ASSERT(strstr(zFast, vt__compact_find(vt__tbl_name(k)) >= 0 ? "ORDER BY id" : "ORDER BY rowid"));
    ASSERT_EQ(SQLITE_OK, vt__rows_open(&c, f->db, zFast, nCol, w));
    ASSERT_EQ(SQLITE_OK, vt__rows_open(&x, f->db, zIdx, nCol, -1));
    ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(f->db, zRef, -1, &pRef, NULL));
    for (;;) {
        int rc = sqlite3_step(pRef);
        ASSERT(rc == SQLITE_ROW || rc == SQLITE_DONE);
        ASSERT_EQ(SQLITE_OK, vt__rows_next(&c));
        ASSERT_EQ(SQLITE_OK, vt__rows_next(&x));
        ASSERT_EQ(rc == SQLITE_ROW, c.bRow);
        ASSERT_EQ(rc == SQLITE_ROW, x.bRow);
        if (rc == SQLITE_DONE) break;
        ASSERT_EQ(sqlite3_column_int64(pRef, 0), c.ts);
        for (int j = 0; j < nCol; j++) {
            ASSERT_EQ(sqlite3_column_type(pRef, j) == SQLITE_NULL, vt__rows_null(&c, j));
            ASSERT_EQ(sqlite3_column_int64(pRef, j), vt__rows_i64(&c, j));
            ASSERT_EQ(vt__rows_i64(&x, j), vt__rows_i64(&c, j));
        }
        n++;
    }
    sqlite3_finalize(pRef);
    vt__rows_close(&c);
    vt__rows_close(&x);
    sqlite3_free(zRef);
    free(zFast);
    free(zIdx);
    return n;
}

/* The transfer pass made during the scan (r's trace, t->xf.bDone) gives exactly what vt__transfers' own
 * pass over the kernels gives on a fresh read of zPath. */
static void same_transfers(const struct vt_trace *t, const char *zPath)
{
    struct vt_trace u;
    memset(&u, 0, sizeof u);
    ASSERT(t->xf.bDone);
    ASSERT(t->xf.kernelBusyNs > 0 && t->xf.copyNs > 0);
    ASSERT_EQ(VT_EXIT_OK, vt__read_open(&u.f, zPath, 0, NULL));
    ASSERT_EQ(VT_EXIT_OK, vt__transfers(&u));
    ASSERT_EQ(t->xf.kernelBusyNs, u.xf.kernelBusyNs);
    ASSERT_EQ(t->xf.copyNs, u.xf.copyNs);
    ASSERT_EQ(t->xf.copySerialNs, u.xf.copySerialNs);
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ(t->xf.x[i].count, u.xf.x[i].count);
        ASSERT_EQ(t->xf.x[i].bytes, u.xf.x[i].bytes);
        ASSERT_EQ(t->xf.x[i].ns, u.xf.x[i].ns);
        ASSERT_EQ(t->xf.x[i].pageCount, u.xf.x[i].pageCount);
        ASSERT_EQ(t->xf.x[i].pageBytes, u.xf.x[i].pageBytes);
        ASSERT_EQ(t->xf.x[i].pageNs, u.xf.x[i].pageNs);
        ASSERT(t->xf.x[i].bestBw == u.xf.x[i].bestBw);
        ASSERT_EQ(t->xf.x[i].firstPageTs, u.xf.x[i].firstPageTs);
        ASSERT_EQ(t->xf.x[i].lastPageTs, u.xf.x[i].lastPageTs);
    }
    vt__trace_free(&u);
}

/* Rows stored slightly out of time order (ties included): the pass bounds the disorder, and the
 * readers' heaps give back exactly the order of the ordered SQL; far out of order, the window
 * is given up. */
TEST(jittered_rows_read_in_index_order)
{
    const char *zPath = tg_path("jitter.db");
    struct vt_tracefile f;
    struct vt_result r;
    build(zPath);
    /* 3000 rows per table on top of build()'s, times in ties of three, stored in the order of
     * their time plus a delay of 0 to 39 steps of 250 ns (a step of 1000 ns holds a tie) */
    exec(zPath,
         "BEGIN; CREATE TEMP TABLE n AS WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < 2999)"
         " SELECT x, 100000000 + (x / 3) * 1000 AS ts, (x * 2654435761 % 1000003) % 40 * 250 AS d FROM c;"
         "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, api, stack_id, pool_size, pool_used,"
         " correlation) SELECT ts, CASE x % 4 WHEN 3 THEN 3 ELSE 1 + x % 2 END, 3, 8589934592 + x * 4096, 4096, 0,"
         " CASE WHEN x % 5 = 0 THEN NULL ELSE 7 END, NULL, CASE WHEN x % 7 = 0 THEN x END, NULL, x"
         " FROM n ORDER BY ts + d, x;"
         "INSERT INTO buffer_use(correlation, kind, address, t) SELECT x, x % 3 = 2, 8589934592 + x * 4096, ts"
         " FROM n ORDER BY ts + d, x DESC;"
         "INSERT INTO kernel(t, dur) SELECT ts, 5000 + x FROM n ORDER BY ts + d, x;"
         "INSERT INTO memcpy(t, dur, copy_kind, src_kind, dst_kind, bytes, src, dst) SELECT ts, 700,"
         " 1 + x % 2, 3, 1, 65536, CASE WHEN x % 2 THEN 8589934592 END, CASE WHEN x % 3 THEN 4096 END"
         " FROM n ORDER BY ts + d, x;"
         "INSERT INTO memset(t, dur, bytes, dst) SELECT ts, 100, 64, CASE WHEN x % 4 THEN x END"
         " FROM n ORDER BY ts + d, x; COMMIT;");
    run(zPath, &r); /* the whole analysis through the heaps */
    ASSERT_EQ(10 + 1500 + 750, r.aTrace[0].lc.nAlloc); /* allocations and VMM creations (op 3) */
    /* kept by the scan: read back through the heaps, NULLs and negative steps included */
    ASSERT_EQ(1 << VT_T_MEM | 1 << VT_T_TENSOR | 1 << VT_T_USE, same_as_kept(zPath));
    ASSERT(r.aTrace[0].xf.bDone); /* kernels held until in start order, fed to the transfer pass during the scan */
    same_transfers(&r.aTrace[0], zPath);
    vt__result_free(&r);
    ASSERT_EQ(VT_EXIT_OK, vt__read_open(&f, zPath, 0, NULL));
    ASSERT_EQ(0, f.nHidden);
    /* a row stored late (delay up to 9750 ns) lies within 20 ties of three of the first later row */
    ASSERT(f.aT[VT_T_MEM].w > 0 && f.aT[VT_T_MEM].w <= 60);
    ASSERT(f.aT[VT_T_USE].w > 0 && f.aT[VT_T_USE].w <= 60);
    ASSERT(f.aT[VT_T_KER].w > 0 && f.aT[VT_T_KER].w <= 60);
    ASSERT(f.aT[VT_T_COPY].w > 0 && f.aT[VT_T_COPY].w <= 60);
    ASSERT(f.aT[VT_T_SET].w > 0 && f.aT[VT_T_SET].w <= 60);
    ASSERT_EQ(3000 + 19, same_order(&f, VT_T_MEM, f.aT[VT_T_MEM].w, VT_MEMROW_COLS, VT_MEMROW_NCOL, "1", "ts"));
    ASSERT_EQ(2000 + 10, same_order(&f, VT_T_USE, f.aT[VT_T_USE].w, "ts, address, correlation", 3,
                                    "kind = 0 AND ts IS NOT NULL", "ts"));
    ASSERT_EQ(3000 + 10, same_order(&f, VT_T_KER, f.aT[VT_T_KER].w, "start, end, id", 3, "1", "start"));
    ASSERT_EQ(2500 + 10, same_order(&f, VT_T_COPY, f.aT[VT_T_COPY].w, "start, src, dst, id", 4,
                                    "src IS NOT NULL OR dst IS NOT NULL", "start"));
    ASSERT_EQ(2250 + 10, same_order(&f, VT_T_SET, f.aT[VT_T_SET].w, "start, dst, id", 3, "dst IS NOT NULL", "start"));
    /* a window too small for the disorder breaks the order: the bound is needed */
    {
        struct vt_rows c;
        int wSaved = f.aT[VT_T_USE].w;
        char *z;
        int64_t prev = INT64_MIN, nBack = 0;
        f.aT[VT_T_USE].w = 1;
        z = vt__ordered_sql(&f, VT_T_USE, "ts, address", "kind = 0 AND ts IS NOT NULL", "ts");
        f.aT[VT_T_USE].w = wSaved;
        ASSERT_EQ(SQLITE_OK, vt__rows_open(&c, f.db, z, 2, 1));
        while (vt__rows_next(&c) == SQLITE_OK && c.bRow) {
            nBack += c.ts < prev;
            prev = c.ts;
        }
        ASSERT(nBack > 0);
        vt__rows_close(&c);
        free(z);
    }
    vt__read_close(&f);

    /* one buffer use older than the VT_REORDER_CAP + 1 rows before it: the window is given up */
    exec(zPath, "BEGIN; CREATE TEMP TABLE n AS WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c"
                " WHERE x < 65536) SELECT x FROM c;"
                "INSERT INTO buffer_use(correlation, kind, address, t) SELECT x, 0, 4096, 200000000 + x FROM n;"
                "INSERT INTO buffer_use(correlation, kind, address, t) VALUES (0, 0, 4096, 199999999); COMMIT;");
    ASSERT_EQ(VT_EXIT_OK, vt__read_open(&f, zPath, 0, NULL));
    ASSERT_EQ(-1, f.aT[VT_T_USE].w);
    ASSERT(f.aT[VT_T_MEM].w > 0);
    vt__read_close(&f);
    ASSERT_EQ(1 << VT_T_MEM | 1 << VT_T_TENSOR, same_as_kept(zPath)); /* the uses read sorted by SQL: not kept */
    /* exactly at the cap: one row fewer before it, and a heap of VT_REORDER_CAP + 1 rows */
    exec(zPath, "DELETE FROM buffer_use WHERE ts = 200000000;");
    ASSERT_EQ(VT_EXIT_OK, vt__read_open(&f, zPath, 0, NULL));
    ASSERT_EQ(VT_REORDER_CAP, f.aT[VT_T_USE].w);
    ASSERT_EQ(2010 + 65537, same_order(&f, VT_T_USE, f.aT[VT_T_USE].w, "ts, address, correlation", 3,
                                       "kind = 0 AND ts IS NOT NULL", "ts"));
    vt__read_close(&f);
    tg_cleanup();
}

/* A kernel stored further back than the pass's hold reaches (1024 kernels beyond twice the window
 * found before it): the pass gives up feeding the transfer pass, vt__transfers makes it. */
TEST(kernel_beyond_the_hold_left_to_the_transfer_pass)
{
    const char *zPath = tg_path("hold.db");
    struct vt_result r;
    build(zPath);
    /* 2000 kernels of 500 ns in start order, 1000 ns apart, then one of 500 ns starting before them */
    exec(zPath, "BEGIN; INSERT INTO kernel(t, dur) SELECT 200000000 + x * 1000, 500 FROM"
                " (WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < 1999) SELECT x FROM c);"
                "INSERT INTO kernel(t, dur) VALUES (150000000, 500); COMMIT;");
    run(zPath, &r);
    ASSERT_EQ(2000, r.aTrace[0].f.aT[VT_T_KER].w);
    ASSERT(!r.aTrace[0].xf.bDone);
    ASSERT_EQ(20 * MS + 2001 * 500, r.aTrace[0].xf.kernelBusyNs);
    ASSERT_EQ(10 * MS, r.aTrace[0].xf.copySerialNs);
    vt__result_free(&r);
    /* 1000 of them: within the hold, fed during the pass, the same totals */
    exec(zPath, "DELETE FROM kernel WHERE start >= 201000000;");
    run(zPath, &r);
    ASSERT_EQ(1000, r.aTrace[0].f.aT[VT_T_KER].w);
    ASSERT(r.aTrace[0].xf.bDone);
    ASSERT_EQ(20 * MS + 1001 * 500, r.aTrace[0].xf.kernelBusyNs);
    ASSERT_EQ(10 * MS, r.aTrace[0].xf.copySerialNs);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * Schema version 2 stores times relative to a base: with the tracer's own DDL the pass and the
 * readers take the stored t and dur and add the base; without a trusted base (no meta row, a
 * table altered by hand) they read the generated columns. Same analysis either way, for any base.
 */
TEST(stored_times_with_a_base)
{
    static const int64_t aBase[] = {1700000000000000000LL, -123456789, 0};
    const char *zPath = tg_path("base.db");
    struct vt_result r;
    for (size_t i = 0; i < sizeof aBase / sizeof aBase[0]; i++) {
        build_at(zPath, aBase[i]);
        ASSERT_EQ(1 * MS - aBase[i], tg_query(zPath, "SELECT min(t) FROM memory_event"));
        run(zPath, &r);
        check_build(&r);
        ASSERT(r.aTrace[0].f.bStored && r.aTrace[0].f.timeBase == aBase[i]);
        ASSERT(scanned(&r.aTrace[0].f) == ALL_TABLES && r.aTrace[0].f.aT[VT_T_KER].w == 0 && r.aTrace[0].xf.bDone);
        vt__result_free(&r);

        /* jittered by reversal: the readers fall back to ordered queries, still on stored times */
        reverse_tables(zPath);
        run(zPath, &r);
        check_build(&r);
        ASSERT(r.aTrace[0].f.bStored);
        vt__result_free(&r);
    }
    /* a base the DDL does not hold is not trusted */
    build_at(zPath, 1700000000000000000LL);
    exec(zPath, "UPDATE meta SET value = '5' WHERE key = 'time_base_ns'");
    run(zPath, &r);
    check_build(&r);
    ASSERT(!r.aTrace[0].f.bStored);
    vt__result_free(&r);
    /* nor a table made by hand with other time columns */
    build_at(zPath, 1700000000000000000LL);
    exec(zPath, "CREATE TABLE kernel_old AS SELECT * FROM kernel; DROP VIEW kernel;"
                " CREATE TABLE kernel(id INTEGER PRIMARY KEY, t INTEGER,"
                " dur INTEGER, start INTEGER GENERATED ALWAYS AS (t + 1700000000000000000) VIRTUAL,"
                " end INTEGER GENERATED ALWAYS AS (t + dur + 1700000000000000000) STORED, device INTEGER,"
                " context INTEGER, stream INTEGER, correlation INTEGER, name_id INTEGER, grid_x INTEGER,"
                " grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER,"
                " static_smem INTEGER, dynamic_smem INTEGER, registers INTEGER, graph_id INTEGER);"
                " INSERT INTO kernel(id, t, dur, device, correlation, name_id)"
                " SELECT id, t, dur, device, correlation, name_id FROM kernel_old; DROP TABLE kernel_old");
    run(zPath, &r);
    check_build(&r);
    ASSERT(!r.aTrace[0].f.bStored);
    vt__result_free(&r);
    tg_cleanup();
}

/* A stored time that is text reads as NULL through the generated column but is not an unknown time (that is a
 * NULL t): it is impossible, for the pass and the guard's SQL alike, and the pass still judges the table. */
TEST(text_stored_time_is_impossible)
{
    const char *zPath = tg_path("text.db");
    struct vt_result r;
    build_at(zPath, 1700000000000000000LL);
    exec(zPath, "INSERT INTO buffer_use(correlation, kind, address, t) VALUES (1, 0, 4096, 'soon'), (2, 0, 4096, NULL)");
    ASSERT_EQ(1, guard_count(zPath));
    run(zPath, &r);
    check_build(&r);
    ASSERT(r.aTrace[0].f.bStored);
    ASSERT_EQ(ALL_TABLES, scanned(&r.aTrace[0].f));
    ASSERT_EQ(1 << VT_T_USE, guarded(&r.aTrace[0].f));
    ASSERT_EQ(1, r.aTrace[0].f.aT[VT_T_USE].nNoTime); /* the NULL one: kept, off the timeline */
    ASSERT_STREQ("ts", r.aTrace[0].f.aT[VT_T_USE].zWorstCol);
    vt__result_free(&r);
    /* the same for a kernel (schema 5: the pass reads kernel_row with its blocks' anchors, not the view) written
     * through the view with a text time, and one whose block is missing (a NULL time, like the view's) */
    exec(zPath, "INSERT INTO kernel(id, t, dur) VALUES (100000, 'soon', 5);"
                "INSERT INTO kernel(id, t, dur) VALUES (200000, 5, 5); DELETE FROM kernel_block WHERE id = 200000 >> 6;");
    ASSERT_EQ(2, guard_count(zPath));
    ASSERT_EQ(1, tg_query(zPath, "SELECT count(*) FROM kernel WHERE t IS NULL"));
    run(zPath, &r);
    ASSERT_EQ(ALL_TABLES, scanned(&r.aTrace[0].f));
    ASSERT_EQ(1 << VT_T_USE | 1 << VT_T_KER, guarded(&r.aTrace[0].f));
    ASSERT_EQ(1, r.aTrace[0].f.aT[VT_T_KER].nHidden);
    ASSERT_EQ(1, r.aTrace[0].f.aT[VT_T_KER].nNoTime);
    vt__result_free(&r);
    tg_cleanup();
}

/* Rows of unknown time (a NULL t) stay off the timeline on the stored-times path too: the readers leave out
 * the time test only where the pass met no such row. */
TEST(unknown_times_stay_off_the_timeline)
{
    const char *zPath = tg_path("untimed.db");
    struct vt_result r;
    char zSql[256];
    build_at(zPath, 1700000000000000000LL);
    /* a kernel use of the first buffer with no time known: before its allocation if it were read at 0 */
    snprintf(zSql, sizeof zSql, "INSERT INTO buffer_use(correlation, kind, address, t, device) VALUES (7, 0, %lld, NULL, 0)",
             (long long)DEV);
    exec(zPath, zSql);
    ASSERT_EQ(0, guard_count(zPath));
    run(zPath, &r);
    check_build(&r);
    ASSERT(r.aTrace[0].f.bStored && r.aTrace[0].f.aT[VT_T_USE].w == 0);
    ASSERT_EQ(0, guarded(&r.aTrace[0].f));
    ASSERT_EQ(1, r.aTrace[0].f.aT[VT_T_USE].nNoTime);
    ASSERT_EQ(0, r.aTrace[0].f.aT[VT_T_MEM].nNoTime); /* the other tables' reads leave the test out */
    vt__result_free(&r);
    /* the use without a time not kept */
    ASSERT_EQ(1 << VT_T_MEM | 1 << VT_T_TENSOR | 1 << VT_T_USE, same_as_kept(zPath));
    tg_cleanup();
}

/*
 * API calls that bound the trace's time range: a cudaMalloc call (correlation 1) from 1 to 3 ms around
 * its allocation at 2 ms, a launch call at 10 ms before its kernel from 11 to 20 ms, a cudaFree call
 * (correlation 3) from 29 to 40 ms around its free at 30 ms: the range is 1 to 40 ms, the calls' own.
 * bCalls 0 leaves the calls out (2 to 30 ms); bCopy adds a copy from 21 to 22 ms whose call (correlation
 * 4) lasts from 20.5 to 50 ms; bFold folds the calls of the allocation, the free and the copy into their
 * rows as the tracer's writer does (vt__fold_stored; the launch call stays a row).
 */
static void build_calls(const char *zPath, int bCalls, int bFold, int bCopy)
{
    struct tg *g = tg_open(zPath);
    struct tg_memrow m = {.ts = 2 * MS, .op = 1, .memKind = 3, .address = DEV, .bytes = 8 * MiB, .device = 0,
                          .context = 1, .stream = TG_NULL, .correlation = 1, .api = 1, .isAsync = 0,
                          .poolType = TG_NULL, .poolAddress = TG_NULL, .poolThreshold = TG_NULL, .poolSize = TG_NULL,
                          .poolUsed = TG_NULL, .pc = TG_NULL, .thread = 7, .stack = TG_NULL};
    struct tg_apirow a = {.api = 1, .correlation = 1, .start = 1 * MS, .end = 3 * MS, .thread = 7, .device = 0,
                          .status = 0, .bytes = 8 * MiB, .ptr = DEV, .src = TG_NULL, .dst = TG_NULL, .stream = TG_NULL,
                          .stack = TG_NULL};
    char *zErr = NULL;
    ASSERT(g);
    tg_device(g, 0, "GPU", 16 * GiB);
    tg_memory_row(g, &m);
    m.ts = 30 * MS, m.op = 2, m.correlation = 3, m.api = 2;
    tg_memory_row(g, &m);
    tg_kernel(g, 11 * MS, 20 * MS, "gemm");
    if (bCalls) {
        tg_api_row(g, &a);
        a.api = 211, a.correlation = 2, a.start = 10 * MS, a.end = 10 * MS + 500, a.bytes = a.ptr = TG_NULL;
        tg_api_row(g, &a);
        a.api = 2, a.correlation = 3, a.start = 29 * MS, a.end = 40 * MS, a.ptr = DEV;
        tg_api_row(g, &a);
    }
    if (bCopy) {
        struct tg_copyrow c = {.start = 21 * MS, .end = 22 * MS, .device = 0, .context = 1, .stream = 7, .correlation = 4,
                               .copyKind = 1, .srcKind = 1, .dstKind = 3, .bytes = MiB, .isAsync = 0, .src = HOST,
                               .dst = DEV};
        tg_copy_row(g, &c);
        a.api = 30, a.correlation = 4, a.start = 20 * MS + 500000;
        a.end = 50 * MS, a.bytes = MiB, a.ptr = TG_NULL, a.src = HOST, a.dst = DEV;
        tg_api_row(g, &a);
    }
    if (bFold) ASSERT_EQ(SQLITE_OK, vt__fold_stored(g->db, &zErr));
    ASSERT_EQ(0, tg_close(g));
}

/*
 * The trace's time range, the impossible rows' note, the events without a time and whether the pass judged
 * api_call's folded calls, checked.
 */
static void check_range(const char *zPath, int64_t t0, int64_t t1, int64_t nHidden, int64_t nNoTime, int bPassed)
{
    struct vt_result r;
    run(zPath, &r);
    ASSERT_EQ(t0, r.aTrace[0].f.t0);
    ASSERT_EQ(t1, r.aTrace[0].f.t1);
    ASSERT_EQ(nHidden, hidden_note(&r.aTrace[0]));
    ASSERT_EQ(nNoTime, r.aTrace[0].f.nNoTime);
    ASSERT_EQ(bPassed, r.aTrace[0].f.bCallsPassed);
    vt__result_free(&r);
}

/*
 * api_call's bounds: its rows and the calls folded into allocations and frees (schema 6), which the pass
 * over memory_event judges as the api_call view and the guard would; the same range whether the calls
 * are folded or not, absent, impossible, or in a trace of an older schema.
 */
TEST(api_call_bounds_folded_or_not)
{
    const char *zPath = tg_path("calls.db");
    sqlite3 *db = NULL;
    char zDone[64], *zErr = NULL;
    int version = 0;
    build_calls(zPath, 1, 0, 0); /* unfolded: every call a row */
    ASSERT_EQ(3, tg_query(zPath, "SELECT count(*) FROM api_call_row"));
    check_range(zPath, 1 * MS, 40 * MS, 0, 0, 1);
    build_calls(zPath, 1, 1, 0); /* folded: the launch call alone a row */
    ASSERT_EQ(1, tg_query(zPath, "SELECT count(*) FROM api_call_row"));
    ASSERT_EQ(2, tg_query(zPath, "SELECT count(*) FROM memory_event WHERE call_sig IS NOT NULL"));
    check_range(zPath, 1 * MS, 40 * MS, 0, 0, 1);
    build_calls(zPath, 0, 0, 0); /* no calls */
    check_range(zPath, 2 * MS, 30 * MS, 0, 0, 1);

    /* a copy's call, folded or not; with no signature row every folded call is gone (the view's join) */
    build_calls(zPath, 1, 0, 1);
    check_range(zPath, 1 * MS, 50 * MS, 0, 0, 1);
    build_calls(zPath, 1, 1, 1);
    ASSERT_EQ(1, tg_query(zPath, "SELECT count(*) FROM memcpy_row WHERE call_sig IS NOT NULL"));
    check_range(zPath, 1 * MS, 50 * MS, 0, 0, 1);
    exec(zPath, "DELETE FROM api_call_sig");
    check_range(zPath, 2 * MS, 30 * MS, 0, 0, 1); /* the launch call at 10 ms stays */
    build_calls(zPath, 1, 0, 1);
    exec(zPath, "DELETE FROM api_call_sig");
    check_range(zPath, 1 * MS, 50 * MS, 0, 0, 1); /* calls stored as rows stay (left join) */

    /* folded, damaged: the free's call beyond 2^62 is impossible (hidden, counted), its row stays */
    build_calls(zPath, 1, 1, 0);
    exec(zPath, "UPDATE memory_event SET call_dt = 4611686018427387904 WHERE op = 2");
    check_range(zPath, 1 * MS, 30 * MS, 1, 0, 1);
    /* a call whose signature is missing is no call (the view's join) */
    build_calls(zPath, 1, 1, 0);
    exec(zPath, "UPDATE memory_event SET call_sig = 999999 WHERE op = 2");
    check_range(zPath, 1 * MS, 30 * MS, 0, 0, 1);
    /* the free's call from 45 ms, ending before it starts: its start counts */
    build_calls(zPath, 1, 1, 0);
    exec(zPath, "UPDATE memory_event SET call_dt = 15000000, call_dur = -1 WHERE op = 2");
    check_range(zPath, 1 * MS, 45 * MS, 0, 0, 1);
    /* a size only the free's row holds (an allocation's call takes its bytes): impossible for the call too */
    build_calls(zPath, 1, 1, 0);
    exec(zPath, "DROP TRIGGER memory_event_call_update; UPDATE memory_event SET bytes = -1 WHERE op = 1");
    check_range(zPath, 10 * MS, 40 * MS, 2, 0, 1); /* the allocation row and its call hidden: the launch call first */
    /* a call of unknown time: counted, outside the range */
    build_calls(zPath, 1, 1, 0);
    exec(zPath, "UPDATE memory_event SET call_dt = NULL WHERE op = 1");
    check_range(zPath, 2 * MS, 40 * MS, 0, 1, 1);
    /* a real number only SQL adds exactly: the view is read instead, with the same answer */
    build_calls(zPath, 1, 1, 0);
    exec(zPath, "UPDATE memory_event SET call_dt = -999999.5 WHERE op = 1");
    check_range(zPath, 1 * MS, 40 * MS, 0, 0, 0);

    /* schema 4 (no folded calls, no view): the calls' rows; upgraded to 6, folded again */
    build_calls(zPath, 1, 0, 0);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    ASSERT_EQ(SQLITE_OK, vt_test_make_v4(db));
    ASSERT_EQ(SQLITE_OK, sqlite3_close(db));
    check_range(zPath, 1 * MS, 40 * MS, 0, 0, 0);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    ASSERT_EQ(SQLITE_OK, vt__migrate(db, 4, &version, zDone, sizeof zDone, &zErr));
    ASSERT_EQ(SQLITE_OK, sqlite3_close(db));
    ASSERT_EQ(VT_SCHEMA_VERSION, version);
    ASSERT_EQ(2, tg_query(zPath, "SELECT count(*) FROM memory_event WHERE call_sig IS NOT NULL"));
    check_range(zPath, 1 * MS, 40 * MS, 0, 0, 1);
    tg_cleanup();
}

VT_TEST_LIST(T(rowid_order_and_time_order_agree) T(kept_rows_of_all_traces_share_one_bound)
                 T(impossible_rows_counted_like_the_guard)
                 T(real_numbers_fall_back_to_sql)
                 T(jittered_rows_read_in_index_order) T(kernel_beyond_the_hold_left_to_the_transfer_pass)
                 T(stored_times_with_a_base) T(text_stored_time_is_impossible)
                 T(unknown_times_stay_off_the_timeline) T(api_call_bounds_folded_or_not))
