/* Tests for lifetime reconstruction, buffer uses, the timeline and the written-back tables. */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "tracegen.h"
#include "vt_test.h"

#define A 0x10000000
#define B 0x20000000

static int analyze1(const char *zPath, struct vt_opts *o, struct vt_result *r)
{
    const char *az[1] = {zPath};
    return vt__analyze(az, 1, o, r);
}

/* The reference scenario described in each assertion below. */
static void build_basic(const char *zPath)
{
    struct tg *g = tg_open(zPath);
    int64_t s1, k;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    s1 = tg_stack(g, "train.py", 42, "make_buffers");
    tg_alloc(g, 1 * MS, 0, 3, A, 10 * MiB, s1);                         /* A */
    tg_alloc(g, 2 * MS, 0, 3, B, 20 * MiB, -1);                         /* B */
    tg_alloc(g, 2 * MS + 500000, 0, 2, 0x70000000, 4 * MiB, -1);        /* D pinned, never freed */
    tg_memcpy(g, 3 * MS, 3 * MS + 1000, 1, 2, 3, 4096, 0x70000000, A + 4096); /* interior dst of A */
    k = tg_kernel(g, 4 * MS, 4 * MS + 100, "void scale_kernel<float>(float*, int)");
    tg_use(g, 4 * MS, k, B);
    k = tg_kernel(g, 5 * MS, 5 * MS + 100, "void scale_kernel<float>(float*, int)");
    tg_use(g, 5 * MS, k, A);
    tg_free(g, 6 * MS, 0, 3, A, 10 * MiB);
    tg_alloc(g, 7 * MS, 0, 3, A, 5 * MiB, s1);                          /* C reuses A's address */
    tg_free(g, 8 * MS, 0, 3, 0x90000000, 1 * MiB);                      /* never allocated */
    tg_free(g, 9 * MS, 0, 3, B, 20 * MiB);
    tg_free(g, 10 * MS, 0, 3, B, 20 * MiB);                             /* double free */
    tg_memop(g, 11 * MS, 5, 0, 3, 0x30000000, 2 * MiB, -1, -1, -1);     /* VMM map */
    tg_memop(g, 12 * MS, 6, 0, 3, 0x30000000, 2 * MiB, -1, -1, -1);     /* VMM unmap */
    tg_alloc(g, 13 * MS, 0, 3, 0x50000000, 1 * MiB, -1);                /* E */
    tg_alloc(g, 14 * MS, 0, 3, 0x50000000, 1 * MiB, -1);                /* F at E's address: E's free lost */
    ASSERT_EQ(0, tg_close(g));
}

TEST(pairing_reuse_unknown_double)
{
    const char *zPath = tg_path("basic.db");
    struct vt_opts o;
    struct vt_result r;
    build_basic(zPath);
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, analyze1(zPath, &o, &r));
    ASSERT_EQ(1, r.nTrace);
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_EQ(7, t->lc.nAlloc);      /* A B D C map E F */
    ASSERT_EQ(3, t->lc.nFree);       /* A, B, unmap */
    ASSERT_EQ(1, t->lc.nFreeUnknown);
    ASSERT_EQ(1, t->lc.nDoubleFree);
    ASSERT_EQ(1, t->lc.nFreeMissing);
    ASSERT_EQ(3, t->lc.nLiveEnd);    /* C, D, F */
    ASSERT_EQ(5 * MiB + 4 * MiB + 1 * MiB, t->lc.liveEndBytes);
    ASSERT_EQ(1, t->f.bWritable);
    ASSERT_EQ(2, t->lc.nKernelUse);
    ASSERT_EQ(1, t->lc.nCopyUse);
    ASSERT_EQ(4, t->lc.nUseMatched); /* the copy's pinned source and device destination, two kernel args */
    vt__result_free(&r);

    ASSERT_EQ(9, tg_query(zPath, "SELECT count(*) FROM lifetime"));
    ASSERT_EQ(3, tg_query(zPath, "SELECT count(*) FROM allocation WHERE status = 'freed'"));
    ASSERT_EQ(3, tg_query(zPath, "SELECT count(*) FROM allocation WHERE status = 'live_at_end'"));
    ASSERT_EQ(1, tg_query(zPath, "SELECT count(*) FROM allocation WHERE status = 'free_unknown' AND alloc_ts IS NULL"));
    ASSERT_EQ(1, tg_query(zPath, "SELECT count(*) FROM allocation WHERE status = 'double_free' AND free_ts = 10000000"));
    ASSERT_EQ(1, tg_query(zPath, "SELECT count(*) FROM allocation WHERE status = 'free_missing' AND free_ts = 14000000"));
    /* A: first use from the interior memcpy address, last use from the kernel argument */
    ASSERT_EQ(3 * MS, tg_query(zPath, "SELECT first_use_ts FROM allocation WHERE address = 268435456 AND bytes = 10485760"));
    ASSERT_EQ(5 * MS, tg_query(zPath, "SELECT last_use_ts FROM allocation WHERE address = 268435456 AND bytes = 10485760"));
    ASSERT_EQ(2, tg_query(zPath, "SELECT use_count FROM allocation WHERE address = 268435456 AND bytes = 10485760"));
    ASSERT_EQ(5 * MS, tg_query(zPath, "SELECT duration FROM allocation WHERE address = 268435456 AND bytes = 10485760"));
    /* C reuses the address: its own lifetime, still live, never used */
    ASSERT_EQ(1, tg_query(zPath, "SELECT count(*) FROM allocation WHERE address = 268435456 AND bytes = 5242880"
                                 " AND status = 'live_at_end' AND use_count = 0 AND first_use_ts IS NULL"));
    ASSERT_EQ(1, tg_query(zPath, "SELECT count(*) FROM allocation WHERE address = 536870912 AND status = 'freed'"
                                 " AND first_use_ts = 4000000 AND free_ts = 9000000"));
    ASSERT_EQ(1, tg_query(zPath, "SELECT count(*) FROM allocation WHERE mem_kind_name = 'pinned'"));
    tg_cleanup();
}

TEST(timeline_peak_and_live_at_peak)
{
    const char *zPath = tg_path("basic.db");
    struct vt_opts o;
    struct vt_result r;
    build_basic(zPath);
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    o.bNoWrite = 1;
    ASSERT_EQ(0, analyze1(zPath, &o, &r));
    struct vt_trace *t = &r.aTrace[0];
    int iDev = -1, iPin = -1;
    for (int i = 0; i < t->tl.nDev; i++) {
        if (t->tl.aDev[i].id == 0) iDev = i;
        if (t->tl.aDev[i].id == -1) iPin = i;
    }
    ASSERT(iDev >= 0 && iPin >= 0);
    ASSERT_EQ(30 * MiB, t->tl.aDev[iDev].peak);
    ASSERT_EQ(2 * MS, t->tl.aDev[iDev].peakTs);
    ASSERT_EQ(2, t->tl.aDev[iDev].nTop);
    ASSERT_EQ(20 * MiB, t->tl.aDev[iDev].aTop[0].bytes);
    ASSERT_EQ(10 * MiB, t->tl.aDev[iDev].aTop[1].bytes);
    ASSERT_STREQ("train.py:42 in make_buffers", t->sites.a[t->tl.aDev[iDev].aTop[1].site].zSite);
    ASSERT_CONTAINS(t->sites.a[t->tl.aDev[iDev].aTop[0].site].zSite, "site not recorded");
    ASSERT_EQ(4 * MiB, t->tl.aDev[iPin].peak);
    ASSERT_EQ(6 * MiB, t->tl.aDev[iDev].live); /* C 5 MiB + F 1 MiB at the end */
    vt__result_free(&r);
    /* --no-write: nothing written back */
    ASSERT_EQ(0, tg_query(zPath, "SELECT count(*) FROM sqlite_schema WHERE name = 'lifetime'"));
    tg_cleanup();
}

TEST(pool_reserved_tracked)
{
    const char *zPath = tg_path("pool.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    ASSERT(g);
    tg_memop(g, 1 * MS, 1, 0, 3, A, 8 * MiB, -1, 64 * MiB, 8 * MiB);
    tg_memop(g, 2 * MS, 1, 0, 3, B, 8 * MiB, -1, 64 * MiB, 16 * MiB);
    tg_memop(g, 3 * MS, 2, 0, 3, A, 8 * MiB, -1, 32 * MiB, 8 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, analyze1(zPath, &o, &r));
    ASSERT_EQ(64 * MiB, r.aTrace[0].tl.aDev[0].poolPeakReserved);
    ASSERT_EQ(16 * MiB, r.aTrace[0].tl.aDev[0].peak);
    ASSERT_EQ(0, r.aTrace[0].f.nNote > 1); /* only the "no kernel uses" note */
    vt__result_free(&r);
    /* losses while tracing are said, with the larger of the two counts */
    {
        sqlite3 *db = NULL;
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "INSERT INTO dropped(t, source, what, count) VALUES(1, 0, 'cupti', 5);"
                                              "INSERT INTO meta VALUES('dropped_queue', '7')", NULL, NULL, NULL));
        sqlite3_close(db);
    }
    ASSERT_EQ(0, analyze1(zPath, &o, &r));
    ASSERT_CONTAINS(r.aTrace[0].f.azNote[0], "7 records were lost while tracing");
    vt__result_free(&r);
    tg_cleanup();
}

/* The 'vmm', 'managed' and 'pool' samples: created VMM memory counts as device memory, managed memory
 * has its own series, async pool allocations pair with their frees; no leak anywhere. */
TEST(vmm_managed_pool_sample_shapes)
{
    const char *zPath = tg_path("shapes.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const int64_t G = 32 * MiB; /* large enough that the mapped range is the peak */
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_memop(g, 1 * MS, 3, 0, 3, 0x11, 3 * G, -1, -1, -1); /* create: address = handle */
    tg_memop(g, 2 * MS, 3, 0, 3, 0x12, 5 * G, -1, -1, -1);
    tg_memop(g, 3 * MS, 5, 0, 3, A, 3 * G, -1, -1, -1);    /* map back to back */
    tg_memop(g, 4 * MS, 5, 0, 3, A + 3 * G, 5 * G, -1, -1, -1);
    tg_memop(g, 5 * MS, 6, 0, 3, A, 3 * G, -1, -1, -1);
    tg_memop(g, 6 * MS, 6, 0, 3, A + 3 * G, 5 * G, -1, -1, -1);
    tg_memop(g, 7 * MS, 4, 0, 3, 0x11, 3 * G, -1, -1, -1);
    tg_memop(g, 8 * MS, 4, 0, 3, 0x12, 5 * G, -1, -1, -1);
    for (int i = 0; i < 3; i++) {
        tg_alloc(g, (10 + i) * MS, 0, 5, B + i * 0x1000000LL, 13 * MiB + 4096 * i, -1);
        tg_free(g, (10 + i) * MS + 500000, 0, 5, B + i * 0x1000000LL, 13 * MiB + 4096 * i);
    }
    for (int i = 0; i < 6; i++)
        tg_memop(g, 20 * MS + i * MS, 1, 0, 3, 0x40000000 + i * 0x1000000LL, 9 * MiB + 4096 * i, -1, 64 * MiB, (i + 1) * 10 * MiB);
    for (int i = 0; i < 6; i++)
        tg_memop(g, 30 * MS + i * MS, 2, 0, 3, 0x40000000 + i * 0x1000000LL, 9 * MiB + 4096 * i, -1, 64 * MiB, 0);
    /* each mapping names the handle it maps, as the tracer records it */
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(g->db, "UPDATE memory_event SET pool_address = CASE WHEN bytes = 100663296"
                                             " THEN 17 ELSE 18 END WHERE op IN (5, 6)",
                                      NULL, NULL, NULL));
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, analyze1(zPath, &o, &r));
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_EQ(0, r.nFind);
    ASSERT_EQ(0, t->lc.nLiveEnd);
    ASSERT_EQ(11, t->lc.nFree); /* 2 VMM releases (the unmaps only end mappings), 3 managed, 6 pool frees */
    int iDev = -1, iMan = -1;
    for (int i = 0; i < t->tl.nDev; i++) {
        if (t->tl.aDev[i].id == 0) iDev = i;
        if (t->tl.aDev[i].id == -2) iMan = i;
    }
    ASSERT(iDev >= 0 && iMan >= 0);
    ASSERT_EQ(8 * G, t->tl.aDev[iDev].peak); /* the physical memory, counted once when it is created */
    ASSERT_EQ(2 * MS, t->tl.aDev[iDev].peakTs);
    ASSERT_EQ(13 * MiB + 4096 * 2, t->tl.aDev[iMan].peak);
    ASSERT_STREQ("managed memory", t->tl.aDev[iMan].zName);
    ASSERT_EQ(64 * MiB, t->tl.aDev[iDev].poolPeakReserved);
    vt__result_free(&r);
    tg_cleanup();
}

/* Unmaps of a range release exactly the bytes they cover (a PyTorch expandable segment unmaps pages of its
 * range): one inside a mapping, one at its base for part of it, one over a mapping's tail and the whole next. */
TEST(vmm_range_unmaps)
{
    const char *zPath = tg_path("ranges.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    int iDev = -1;
    ASSERT(g);
    tg_memop(g, 1 * MS, 5, 0, 3, A, 8 * MiB, -1, -1, -1);                /* map [A, A+8): 8 MiB live */
    tg_memop(g, 2 * MS, 6, 0, 3, A + 2 * MiB, 2 * MiB, -1, -1, -1);      /* unmap [A+2, A+4): 6 */
    tg_memop(g, 3 * MS, 6, 0, 3, A, 2 * MiB, -1, -1, -1);                /* unmap [A, A+2): 4 */
    tg_memop(g, 4 * MS, 5, 0, 3, B, 6 * MiB, -1, -1, -1);                /* map B: 10 */
    tg_memop(g, 5 * MS, 5, 0, 3, A + 8 * MiB, 2 * MiB, -1, -1, -1);      /* map [A+8, A+10): 12, the peak */
    tg_memop(g, 6 * MS, 6, 0, 3, A + 4 * MiB, 6 * MiB, -1, -1, -1);      /* unmap [A+4, A+10): 6, B alone */
    tg_memop(g, 7 * MS, 6, 0, 3, A + 12 * MiB, 2 * MiB, -1, -1, -1);     /* nothing mapped there: unknown */
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, analyze1(zPath, &o, &r));
    struct vt_trace *t = &r.aTrace[0];
    for (int i = 0; i < t->tl.nDev; i++)
        if (t->tl.aDev[i].id == 0) iDev = i;
    ASSERT(iDev >= 0);
    ASSERT_EQ(12 * MiB, t->tl.aDev[iDev].peak);
    ASSERT_EQ(5 * MS, t->tl.aDev[iDev].peakTs);
    ASSERT_EQ(1, t->lc.nFreeUnknown);
    ASSERT_EQ(1, t->lc.nLiveEnd); /* B */
    ASSERT_EQ(6 * MiB, t->lc.liveEndBytes);
    vt__result_free(&r);
    tg_cleanup();
}

/* The tracer's mappings of a created handle: a range unmap inside one ends only that part, and the handle's
 * release still finds its memory (counted once, where it was created). */
TEST(vmm_range_unmap_of_handle)
{
    const char *zPath = tg_path("hranges.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    ASSERT(g);
    tg_memop(g, 1 * MS, 3, 0, 3, 0x11, 8 * MiB, -1, -1, -1);             /* create */
    tg_memop(g, 2 * MS, 5, 0, 3, A, 8 * MiB, -1, -1, -1);                /* map it at A */
    tg_memop(g, 3 * MS, 6, 0, 3, A + 2 * MiB, 2 * MiB, -1, -1, -1);      /* unmap a page inside */
    tg_memop(g, 4 * MS, 6, 0, 3, A, 2 * MiB, -1, -1, -1);                /* then the first */
    tg_memop(g, 5 * MS, 6, 0, 3, A + 4 * MiB, 4 * MiB, -1, -1, -1);      /* then the rest */
    tg_memop(g, 6 * MS, 4, 0, 3, 0x11, 8 * MiB, -1, -1, -1);             /* release */
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(g->db, "UPDATE memory_event SET pool_address = 17 WHERE op IN (5, 6)", NULL,
                                      NULL, NULL));
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, analyze1(zPath, &o, &r));
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_EQ(0, t->lc.nFreeUnknown);
    ASSERT_EQ(0, t->lc.nLiveEnd);
    ASSERT_EQ(8 * MiB, t->tl.aDev[0].peak);
    ASSERT_EQ(0, r.nFind);
    vt__result_free(&r);
    tg_cleanup();
}

/* A handle released while still mapped (CUDA frees its memory at the last unmap, and the programming guide's
 * examples release right after mapping): its memory stays counted until then, and the unmap that frees it finds its
 * creation still there (it was freed at the release before: a use after free). */
TEST(vmm_release_before_unmap)
{
    const char *zPath = tg_path("relmap.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    ASSERT(g);
    tg_memop(g, 1 * MS, 3, 0, 3, 0x11, 8 * MiB, -1, -1, -1);             /* create */
    tg_memop(g, 2 * MS, 5, 0, 3, A, 8 * MiB, -1, -1, -1);                /* map it at A */
    tg_memop(g, 3 * MS, 4, 0, 3, 0x11, 8 * MiB, -1, -1, -1);             /* release: still mapped */
    tg_memop(g, 4 * MS, 3, 0, 3, 0x11, 2 * MiB, -1, -1, -1);             /* the handle's value again */
    tg_memop(g, 5 * MS, 5, 0, 3, B, 2 * MiB, -1, -1, -1);                /* mapped at B */
    tg_memop(g, 6 * MS, 6, 0, 3, A, 8 * MiB, -1, -1, -1);                /* the first memory freed here */
    tg_memop(g, 7 * MS, 6, 0, 3, B, 2 * MiB, -1, -1, -1);
    tg_memop(g, 8 * MS, 4, 0, 3, 0x11, 2 * MiB, -1, -1, -1);
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(g->db, "UPDATE memory_event SET pool_address = 17 WHERE op IN (5, 6)", NULL,
                                      NULL, NULL));
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, analyze1(zPath, &o, &r));
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_EQ(0, t->lc.nFreeUnknown);
    ASSERT_EQ(0, t->lc.nFreeMissing);
    ASSERT_EQ(0, t->lc.nLiveEnd);
    ASSERT_EQ(2, t->lc.nFree);
    ASSERT_EQ(10 * MiB, t->tl.aDev[0].peak); /* both from the second creation (4 ms) to the first unmap (6 ms) */
    ASSERT_EQ(4 * MS, t->tl.aDev[0].peakTs);
    vt__result_free(&r);
    tg_cleanup();
}

/* CUPTI-scale timestamps (~1.7e18 ns) next to the zero times of incomplete records: the
 * trace starts at its first real time and nothing overflows (checked under UBSan). */
TEST(wide_timestamps_and_incomplete_records)
{
    const char *zPath = tg_path("wide.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const int64_t base = 1700000000000000000LL;
    ASSERT(g);
    tg_alloc(g, base + 1 * MS, 0, 3, A, 10 * MiB, -1);
    tg_kernel(g, 0, 0, "incomplete_kernel");
    tg_memcpy(g, 0, 0, 1, 1, 3, 4 * MiB, -1, A);
    tg_kernel(g, base + 2 * MS, base + 3 * MS, "gemm");
    tg_memcpy(g, base + 4 * MS, base + 5 * MS, 1, 1, 3, 4 * MiB, -1, A);
    tg_free(g, base + 6 * MS, 0, 3, A, 10 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    o.format = VT_FMT_HTML;
    ASSERT_EQ(0, analyze1(zPath, &o, &r));
    ASSERT_EQ(base + 1 * MS, r.aTrace[0].f.t0);
    ASSERT_EQ(base + 6 * MS, r.aTrace[0].f.t1);
    ASSERT_EQ(10 * MiB, r.aTrace[0].tl.aDev[0].peak);
    ASSERT_EQ(10 * MiB, r.aTrace[0].tl.aDev[0].aMax[0]);
    ASSERT_EQ(0, r.aTrace[0].tl.aDev[0].aLast[VT_TIMELINE_BUCKETS - 1]);
    ASSERT_EQ(1 * MS, r.aTrace[0].xf.kernelBusyNs); /* the incomplete kernel adds nothing */
    {
        char *z = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&z, &n);
        ASSERT_EQ(0, vt__report_html(f, &r));
        fclose(f);
        ASSERT_CONTAINS(z, "<polyline");
        free(z);
    }
    vt__result_free(&r);
    tg_cleanup();
}

/* Allocations over 1 GiB are found by any address inside them; absurd sizes cost nothing. */
TEST(huge_allocations)
{
    const char *zPath = tg_path("huge.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    ASSERT(g);
    tg_alloc(g, 1 * MS, 0, 3, 0x10000000000LL, 4 * GiB, -1);
    tg_alloc(g, 2 * MS, 0, 3, 0x20000000000LL, (int64_t)1 << 50, -1); /* 1 PiB: damaged row */
    tg_memcpy(g, 3 * MS, 4 * MS, 1, 2, 3, MiB, -1, 0x10000000000LL + 3 * GiB);
    tg_memcpy(g, 5 * MS, 6 * MS, 1, 2, 3, MiB, -1, 0x20000000000LL + ((int64_t)1 << 49));
    tg_free(g, 7 * MS, 0, 3, 0x10000000000LL, 4 * GiB);
    tg_free(g, 8 * MS, 0, 3, 0x20000000000LL, (int64_t)1 << 50);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, analyze1(zPath, &o, &r));
    ASSERT_EQ(2, r.aTrace[0].lc.nFree);
    vt__result_free(&r);
    ASSERT_EQ(3 * MS, tg_query(zPath, "SELECT first_use_ts FROM lifetime WHERE bytes = 4294967296"));
    ASSERT_EQ(5 * MS, tg_query(zPath, "SELECT last_use_ts FROM lifetime WHERE address = 2199023255552"));
    tg_cleanup();
}

/*
 * Peak snapshots group everything live by site, not only the largest allocations: site 0
 * (model.py:100) holds 101 allocations of 1 MiB, site i (model.py:100+i, i = 1..39) one of
 * i + 1 MiB. The device keeps the 32 largest groups, the phase 8.
 */
TEST(peak_groups_many_sites)
{
    const char *zPath = tg_path("groups.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    int64_t addr = 0x100000000LL;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_nvtx(g, 1 * MS, 500 * MS, "train");
    for (int i = 0; i < 40; i++) {
        int64_t s = tg_stack(g, "model.py", 100 + i, "layer");
        for (int k = 0; k < (i ? 1 : 101); k++, addr += 64 * MiB)
            tg_alloc(g, (2 + i) * MS + k * 1000, 0, 3, addr, (i ? i + 1 : 1) * MiB, s);
    }
    tg_free(g, 450 * MS, 0, 3, 0x100000000LL, 1 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    o.bNoWrite = 1;
    ASSERT_EQ(0, analyze1(zPath, &o, &r));
    const struct vt_trace *t = &r.aTrace[0];
    const struct vt_device *d = &t->tl.aDev[0];
    ASSERT_EQ(0, d->id);
    ASSERT_EQ(101 * MiB + (820 - 1) * MiB, d->peak); /* 2 + 3 + ... + 40 MiB = 819 MiB */
    ASSERT_EQ(32, d->nGroup);
    ASSERT_EQ(101, d->aGroup[0].count);
    ASSERT_EQ(101 * MiB, d->aGroup[0].bytes);
    ASSERT_EQ(1 * MiB, d->aGroup[0].largest.bytes);
    ASSERT_STREQ("model.py:100 in layer", t->sites.a[d->aGroup[0].site].zSite);
    ASSERT_EQ(1, d->aGroup[1].count);
    ASSERT_EQ(40 * MiB, d->aGroup[1].bytes);
    ASSERT_STREQ("model.py:139 in layer", t->sites.a[d->aGroup[1].site].zSite);
    ASSERT_EQ(10 * MiB, d->aGroup[31].bytes); /* 40, 39, ..., 10 MiB after site 0 */
    ASSERT_EQ(1, t->ph.n);
    ASSERT_EQ(8, t->ph.a[0].nGroup);
    ASSERT_EQ(101, t->ph.a[0].aGroup[0].count);
    ASSERT_EQ(34 * MiB, t->ph.a[0].aGroup[7].bytes);
    char z[600];
    vt__fmt_group(t, &d->aGroup[0], z, sizeof z);
    ASSERT_STREQ("101 allocations, 101 MiB from model.py:100 in layer (device), largest 1.00 MiB", z);
    vt__fmt_group(t, &d->aGroup[1], z, sizeof z);
    ASSERT_STREQ("1 allocation, 40.0 MiB from model.py:139 in layer (device)", z);
    vt__result_free(&r);
    tg_cleanup();
}

VT_TEST_LIST(T(huge_allocations) T(wide_timestamps_and_incomplete_records) T(vmm_managed_pool_sample_shapes) T(vmm_range_unmaps)
                 T(vmm_range_unmap_of_handle) T(vmm_release_before_unmap) T(pairing_reuse_unknown_double) T(timeline_peak_and_live_at_peak) T(pool_reserved_tracked)
                 T(peak_groups_many_sites))
