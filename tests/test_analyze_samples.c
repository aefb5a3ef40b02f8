/* The analyzer on traces shaped like real runs of each CUDA sample (the GPU tests' fixture): the findings docs/samples.md promises. */
#include <string.h>

#include "report/report.h"
#include "gpu_fake_trace.h"
#include "tracegen.h"
#include "vt_test.h"

/* Build the fixture's trace of zSample and analyze it (written back). */
static void run(const char *zSample, struct vt_result *r)
{
    char zPath[600];
    sqlite3 *db = NULL;
    struct vt_fake f;
    struct vt_opts o;
    const char *az[1];
    snprintf(zPath, sizeof zPath, "%s/%s.db", tg_tmpdir(), zSample);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    vt__fake_open(&f, db, 4242);
    ASSERT_EQ(0, vt__fake_build(&f, zSample));
    ASSERT_EQ(SQLITE_OK, sqlite3_close(db));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    az[0] = zPath;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, r));
    ASSERT_EQ(1, r->aTrace[0].lc.nInternalEnd); /* the runtime's own 2 MiB: never a leak */
}

TEST(leak)
{
    struct vt_result r;
    run("leak", &r);
    ASSERT_EQ(1, r.nFind);
    ASSERT_STREQ("leak", r.aFind[0].zKind);
    ASSERT_EQ(8, r.aFind[0].count);
    ASSERT_EQ(25280512, r.aFind[0].bytes);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(copies)
{
    struct vt_result r;
    run("copies", &r);
    ASSERT_EQ(1, r.nFind);
    ASSERT_STREQ("transfer", r.aFind[0].zKind);
    ASSERT_EQ(10, r.aFind[0].count);
    ASSERT_EQ(251781120, r.aFind[0].bytes);
    ASSERT_EQ(5, r.aTrace[0].xf.x[0].pageCount);
    ASSERT_EQ(5, r.aTrace[0].xf.x[1].pageCount);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(oom)
{
    struct vt_result r;
    run("oom", &r);
    ASSERT_EQ(1, r.nFind);
    ASSERT_STREQ("oom", r.aFind[0].zKind);
    ASSERT_EQ(VT_FAKE_TOTAL + (1LL << 30), r.aFind[0].bytes);
    ASSERT_CONTAINS(r.aFind[0].zTitle, "(real demand)");
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "larger than the device's total memory");
    vt__result_free(&r);
    tg_cleanup();
}

TEST(pool)
{
    struct vt_result r;
    run("pool", &r);
    ASSERT_EQ(0, r.nFind);
    ASSERT_EQ(10 + 1, r.aTrace[0].lc.nAlloc);
    ASSERT_EQ(10, r.aTrace[0].lc.nFree);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(phases)
{
    struct vt_result r;
    run("phases", &r);
    ASSERT_EQ(2, r.aTrace[0].ph.n);
    ASSERT_EQ(2, r.nFind);
    for (int i = 0; i < r.nFind; i++) ASSERT_STREQ("validation_spike", r.aFind[i].zKind);
    /* the sample's own peaks plus the runtime's 2 MiB */
    ASSERT_EQ(43003904 + 2097152, r.aTrace[0].ph.a[0].peak);
    ASSERT_EQ(80801792 + 2097152, r.aTrace[0].ph.a[1].peak);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(managed)
{
    struct vt_result r;
    run("managed", &r);
    ASSERT_EQ(0, r.nFind);
    int nManaged = 0;
    for (int i = 0; i < r.aTrace[0].tl.nDev; i++)
        if (r.aTrace[0].tl.aDev[i].id == -2) {
            nManaged++;
            ASSERT_EQ(13 * MiB + 4096 * 2, r.aTrace[0].tl.aDev[i].aTop[0].bytes);
        }
    ASSERT_EQ(1, nManaged);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(vmm)
{
    struct vt_result r;
    run("vmm", &r);
    ASSERT_EQ(0, r.nFind);
    ASSERT_EQ(8 * VT_FAKE_GRAN + 2097152, r.aTrace[0].tl.aDev[0].peak);
    vt__result_free(&r);
    tg_cleanup();
}

VT_TEST_LIST(T(leak) T(copies) T(oom) T(pool) T(phases) T(managed) T(vmm))
