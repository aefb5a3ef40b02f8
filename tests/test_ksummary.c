/* Tests of the always-on mode: kernel summaries, launch calls counted, first and last uses per allocation, through the writer. */
#include <cupti_activity.h>

#include "core_util.h"
#include "ksummary.h"
#include "vramtrace/schema.h"

#define MS 1000000LL
#define BASE (1000 * MS)

/* Rows ksummary gives back, collected. */
static struct vt__row g_aOut[256];
static int g_nOut;
static void collect(void *pCtx, const struct vt__row *pRow)
{
    (void)pCtx;
    ASSERT(g_nOut < 256);
    g_aOut[g_nOut++] = *pRow;
}

static struct vt__row kernel_row(int64_t start, int64_t end, int64_t nameId)
{
    struct vt__row r;
    memset(&r, 0, sizeof r);
    r.table = VT_T_KERNEL;
    r.v[0].i = start;
    r.v[1].i = end;
    r.v[2].i = 0;
    r.v[6].i = nameId;
    return r;
}

static struct vt__row use_row(int64_t ts, int64_t addr, int kind)
{
    struct vt__row r;
    memset(&r, 0, sizeof r);
    r.table = VT_T_BUFFER_USE;
    r.v[0].i = ts / 1000; /* a correlation per use, to tell them apart */
    r.v[1].i = kind;
    r.v[2].i = addr;
    r.v[3].i = ts;
    return r;
}

static struct vt__row api_row(int api, int64_t ts, int64_t ptr)
{
    struct vt__row r;
    memset(&r, 0, sizeof r);
    r.table = VT_T_API_CALL;
    r.v[0].i = api;
    r.v[2].i = ts;
    r.v[3].i = ts + 100;
    r.v[8].i = ptr;
    r.nullMask = ptr ? 0 : 1u << 8;
    return r;
}

/* Kernels before the warm-up's end pass; after it, one summary per period and name with count and times. */
TEST(kernels_folded_per_period)
{
    struct vt__ksum k;
    struct vt__row r;
    g_nOut = 0;
    ASSERT_EQ(0, vt__ksum_init(&k, BASE, 10 * MS, collect, NULL));
    r = kernel_row(BASE - 5, BASE + 5, 1); /* starts in the warm-up: written as it is */
    ASSERT_EQ(0, vt__ksum_take(&k, &r));
    for (int i = 0; i < 30; i++) { /* periods 0, 1, 2: 10 kernels each, two names */
        r = kernel_row(BASE + i * MS, BASE + i * MS + 100 + i, 1 + i % 2);
        ASSERT_EQ(1, vt__ksum_take(&k, &r));
    }
    /* period 0 went out when period 2 began (one period back may still get late kernels) */
    ASSERT_EQ(2, g_nOut);
    r = kernel_row(BASE + 15 * MS, BASE + 15 * MS + 7, 1); /* late, period 1: still held, folded in */
    ASSERT_EQ(1, vt__ksum_take(&k, &r));
    ASSERT_EQ(2, g_nOut);
    vt__ksum_finish(&k);
    ASSERT_EQ(6, g_nOut);
    for (int i = 0; i < 6; i++) ASSERT_EQ(VT_T_KERNEL_SUMMARY, g_aOut[i].table);
    /* period 0, name 1: kernels 0, 2, ..., 8 */
    ASSERT_EQ(1, g_aOut[0].v[3].i);
    ASSERT_EQ(5, g_aOut[0].v[4].i);
    ASSERT_EQ(BASE, g_aOut[0].v[0].i);
    ASSERT_EQ(BASE + 8 * MS + 108, g_aOut[0].v[1].i);
    ASSERT_EQ(100 + 102 + 104 + 106 + 108, g_aOut[0].v[5].i);
    ASSERT_EQ(100, g_aOut[0].v[6].i);
    ASSERT_EQ(108, g_aOut[0].v[7].i);
    /* period 1, name 1 holds the late kernel: 6 kernels, the least 7 ns */
    for (int i = 2; i < 6; i++)
        if (g_aOut[i].v[3].i == 1 && g_aOut[i].v[0].i >= BASE + 10 * MS && g_aOut[i].v[0].i < BASE + 20 * MS) {
            ASSERT_EQ(6, g_aOut[i].v[4].i);
            ASSERT_EQ(7, g_aOut[i].v[6].i);
        }
    ASSERT_EQ(31u, k.nKernels);
    vt__ksum_free(&k);
}

/*
 * Kernel-argument uses: per address and period the first and last are kept, the ones between are not;
 * a free of the address writes its uses out at once (the allocation's last use stays exact); copy uses
 * pass. Launch calls after the warm-up are counted, a graph launch and other calls pass.
 */
TEST(uses_first_and_last_launches_counted)
{
    struct vt__ksum k;
    struct vt__row r;
    g_nOut = 0;
    ASSERT_EQ(0, vt__ksum_init(&k, BASE, 10 * MS, collect, NULL));
    for (int i = 0; i < 5; i++) {
        r = use_row(BASE + i * 1000, 0x1000, VT_USE_KERNEL_ARG);
        ASSERT_EQ(1, vt__ksum_take(&k, &r));
        r = use_row(BASE + i * 1000 + 1, 0x2000, VT_USE_KERNEL_ARG);
        ASSERT_EQ(1, vt__ksum_take(&k, &r));
    }
    r = use_row(BASE + 9000, 0x1000, VT_USE_MEMCPY_SRC); /* a copy's use: written */
    ASSERT_EQ(0, vt__ksum_take(&k, &r));
    r = api_row(VT_API_ID_2, BASE + 9500, 0x1000); /* cudaFree(0x1000): its first and last use go out now */
    ASSERT_EQ(0, vt__ksum_take(&k, &r));
    ASSERT_EQ(2, g_nOut);
    ASSERT_EQ(0x1000, g_aOut[0].v[2].i);
    ASSERT_EQ(BASE, g_aOut[0].v[3].i);
    ASSERT_EQ(BASE + 4000, g_aOut[1].v[3].i);
    r = api_row(VT_API_ID_100, BASE + 9600, 0); /* cudaLaunchKernel: counted */
    ASSERT_EQ(1, vt__ksum_take(&k, &r));
    r = api_row(VT_API_ID_107, BASE + 9700, 0); /* cudaGraphLaunch: written */
    ASSERT_EQ(0, vt__ksum_take(&k, &r));
    r = api_row(VT_API_ID_100, BASE - 1, 0); /* a launch in the warm-up: written */
    ASSERT_EQ(0, vt__ksum_take(&k, &r));
    r = use_row(BASE + 25 * MS, 0x3000, VT_USE_KERNEL_ARG); /* period 2: period 0's held uses go out */
    ASSERT_EQ(1, vt__ksum_take(&k, &r));
    ASSERT_EQ(4, g_nOut);
    ASSERT_EQ(0x2000, g_aOut[2].v[2].i);
    ASSERT_EQ(BASE + 1, g_aOut[2].v[3].i);
    ASSERT_EQ(BASE + 4001, g_aOut[3].v[3].i);
    vt__ksum_finish(&k);
    ASSERT_EQ(5, g_nOut); /* 0x3000's only use */
    ASSERT_EQ(1u, k.nLaunches);
    ASSERT_EQ(6u, k.nUses); /* 3 uses between first and last, for each of two addresses */
    vt__ksum_free(&k);
}

/* Many addresses in one period: the held uses stay bounded (written out early), and deletions keep the rest findable. */
TEST(uses_bounded_and_found_after_frees)
{
    struct vt__ksum k;
    struct vt__row r;
    g_nOut = 0;
    ASSERT_EQ(0, vt__ksum_init(&k, BASE, 1000 * MS, collect, NULL));
    for (int64_t a = 1; a <= 200; a++) { /* two uses each */
        r = use_row(BASE + a * 10, a * 4096, VT_USE_KERNEL_ARG);
        ASSERT_EQ(1, vt__ksum_take(&k, &r));
        r = use_row(BASE + a * 10 + 5, a * 4096, VT_USE_KERNEL_ARG);
        ASSERT_EQ(1, vt__ksum_take(&k, &r));
    }
    for (int64_t a = 1; a <= 200; a += 2) { /* free the odd ones: each writes its two uses */
        int n0 = g_nOut;
        r = api_row(VT_API_ID_2, BASE + 5000, a * 4096);
        ASSERT_EQ(0, vt__ksum_take(&k, &r));
        ASSERT_EQ(n0 + 2, g_nOut);
        ASSERT_EQ(a * 4096, g_aOut[n0].v[2].i);
        g_nOut = 0;
    }
    ASSERT_EQ(100u, (unsigned)k.nUse);
    for (int64_t a = 2; a <= 200; a += 2) { /* the even ones are still found, each once */
        r = api_row(VT_API_ID_2, BASE + 6000, a * 4096);
        ASSERT_EQ(0, vt__ksum_take(&k, &r));
        ASSERT_EQ(2, g_nOut);
        g_nOut = 0;
    }
    ASSERT_EQ(0u, (unsigned)k.nUse);
    vt__ksum_free(&k);
}

/* Through the writer: the trace says the mode, holds the summaries, the warm-up's kernels, and no folded launch. */
TEST(writer_summary_mode)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    sqlite3 *db;
    uint32_t corr = 1;
    long long n;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.time_base_ns = 10;
    cfg.kernel_warmup_ns = 1000; /* kernels start at 10 x correlation ns: the first 100 are in the warm-up */
    cfg.kernel_period_ns = 100000;
    w = core_open(zPath, &cfg);
    ASSERT_EQ(0, vt__writer_start(w));
    for (n = 0; corr < 50000;) {
        long long k = core_submit_kernels(w, "k_a", &corr);
        ASSERT(k > 0);
        n += k;
    }
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    db = core_open_ro(zPath);
    ASSERT_EQ(100, core_q_int(db, "SELECT count(*) FROM kernel")); /* starts 10 .. 1000: the warm-up (< 1010) */
    ASSERT_EQ(n - 100, core_q_int(db, "SELECT sum(count) FROM kernel_summary"));
    ASSERT_EQ(8 * (n - 100), core_q_int(db, "SELECT sum(busy_ns) FROM kernel_summary"));
    /* one kernel name: one row per period */
    ASSERT_EQ(1, core_q_int(db, "SELECT count(*) = count(DISTINCT (start - 1010) / 100000) FROM kernel_summary"));
    ASSERT_EQ(1010, core_q_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'kernel_summary_from_ns'"));
    ASSERT_EQ(n - 100, core_q_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'kernel_summary_kernels'"));
    ASSERT_EQ(1, core_q_int(db, "SELECT min(start) >= 1010 FROM kernel_summary"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

VT_TEST_LIST(T(kernels_folded_per_period) T(uses_first_and_last_launches_counted) T(uses_bounded_and_found_after_frees)
                 T(writer_summary_mode))
