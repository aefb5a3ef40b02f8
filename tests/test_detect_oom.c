/* Tests for the OOM detector: the three verdicts, over three traces analyzed together. */
#include <string.h>

#include "analysis.h"
#include "tracegen.h"
#include "vt_test.h"

/* live: what this process holds; then an OOM of 2 GiB with freeBytes free of 16 GiB. */
static void build(const char *zPath, const char *zPid, int64_t live, int64_t freeBytes)
{
    struct tg *g = tg_open(zPath);
    int64_t s = tg_stack(g, "train.py", 120, "forward");
    ASSERT(g);
    tg_meta(g, "pid", zPid);
    tg_meta(g, "rank", zPid + 3);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, live - 1 * GiB, s);
    tg_alloc(g, 2 * MS, 0, 3, 0x900000000LL, 1 * GiB, -1);
    tg_oom(g, 3 * MS, 0, 2 * GiB, freeBytes, 16 * GiB, s);
    ASSERT_EQ(0, tg_close(g));
}

TEST(three_verdicts_three_processes)
{
    const char *az[3];
    struct vt_opts o;
    struct vt_result r;
    char zP[3][512];
    snprintf(zP[0], sizeof zP[0], "%s", tg_path("frag.db"));
    snprintf(zP[1], sizeof zP[1], "%s", tg_path("other.db"));
    snprintf(zP[2], sizeof zP[2], "%s", tg_path("real.db"));
    build(zP[0], "1000", 10 * GiB, 3 * GiB);         /* 3 GiB free >= 2 GiB asked */
    build(zP[1], "1001", 4 * GiB, GiB / 2);          /* 11.5 GiB used by someone else */
    build(zP[2], "1002", 15 * GiB, 6 * GiB / 10);    /* ~0.4 GiB others: context only */
    for (int i = 0; i < 3; i++) az[i] = zP[i];
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 3, &o, &r));
    ASSERT_EQ(3, r.nTrace);
    int nOom = 0;
    for (int i = 0; i < r.nFind; i++) {
        const struct vt_finding *f = &r.aFind[i];
        if (strcmp(f->zKind, "oom")) continue;
        nOom++;
        ASSERT_EQ(VT_SEV_HIGH, f->severity);
        ASSERT_EQ(2 * GiB, f->bytes);
        ASSERT_EQ(1, f->count);
        ASSERT_EQ(0, f->device);
        ASSERT_STREQ("train.py:120 in forward", f->zSite);
        ASSERT_CONTAINS(f->zEvidence, "from train.py:120 in forward");
        if (f->trace == 0) {
            ASSERT_CONTAINS(f->zTitle, "(fragmentation/caching)");
            ASSERT_CONTAINS(f->zFix, "expandable_segments:True");
        } else if (f->trace == 1) {
            ASSERT_CONTAINS(f->zTitle, "(another process)");
            ASSERT_CONTAINS(f->zEvidence, "11.5 GiB was in use by something else");
            ASSERT_CONTAINS(f->zFix, "nvidia-smi");
        } else {
            ASSERT_CONTAINS(f->zTitle, "(real demand)");
            ASSERT_CONTAINS(f->zFix, "gradient accumulation");
            ASSERT_CONTAINS(f->zFix, "AMP");
        }
    }
    ASSERT_EQ(3, nOom);
    ASSERT_STREQ("another process", r.aTrace[1].aOom[0].zVerdict);
    ASSERT_EQ(4 * GiB, r.aTrace[1].aOom[0].held);
    ASSERT_EQ(2, r.aTrace[1].aOom[0].nTop);
    ASSERT_EQ(3 * GiB, r.aTrace[1].aOom[0].aTop[0].bytes);
    ASSERT_STREQ("1001", r.aTrace[1].zPid);
    ASSERT_STREQ("1", r.aTrace[1].zRank);
    vt__result_free(&r);
    ASSERT_EQ(1, tg_query(zP[2], "SELECT count(*) FROM finding WHERE kind = 'oom' AND bytes = 2147483648"));
    tg_cleanup();
}

VT_TEST_LIST(T(three_verdicts_three_processes))
