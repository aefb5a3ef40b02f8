/* Tests of the importer's range set (rangeset.c): ranges joined, split, and the gaps a segment leaves. */
#include "vt_test.h"

#include "rangeset.h"

/* The set as "a-e a-e ..." (hex-free, small numbers). */
static const char *show(const struct vt__rangeset *s)
{
    static char z[512];
    size_t n = 0;
    z[0] = 0;
    for (size_t i = 0; i < s->n && n < sizeof z - 40; i++)
        n += (size_t)snprintf(z + n, sizeof z - n, "%s%lld-%lld", i ? " " : "", (long long)s->aR[2 * i],
                              (long long)s->aR[2 * i + 1]);
    return z;
}

static int gap_text(void *pArg, int64_t a, int64_t n)
{
    char *z = pArg;
    size_t k = strlen(z);
    snprintf(z + k, 256 - k, "%s%lld+%lld", k ? " " : "", (long long)a, (long long)n);
    return 0;
}

static int gap_stop(void *pArg, int64_t a, int64_t n)
{
    (void)a, (void)n;
    return ++*(int *)pArg == 2 ? 7 : 0;
}

TEST(join_and_split)
{
    struct vt__rangeset s = {0};
    ASSERT_EQ(0, vt__rangeset_add(&s, 10, 10));
    ASSERT_EQ(0, vt__rangeset_add(&s, 30, 10));
    ASSERT_STREQ("10-20 30-40", show(&s));
    ASSERT_EQ(0, vt__rangeset_add(&s, 20, 10)); /* touches both: one range */
    ASSERT_STREQ("10-40", show(&s));
    ASSERT_EQ(0, vt__rangeset_add(&s, 50, 5));
    ASSERT_EQ(0, vt__rangeset_add(&s, 0, 5));
    ASSERT_STREQ("0-5 10-40 50-55", show(&s));
    ASSERT_EQ(0, vt__rangeset_add(&s, 38, 14)); /* overlaps two */
    ASSERT_STREQ("0-5 10-55", show(&s));
    ASSERT_EQ(10, vt__rangeset_remove(&s, 20, 10)); /* inside: split */
    ASSERT_STREQ("0-5 10-20 30-55", show(&s));
    ASSERT_EQ(0, vt__rangeset_remove(&s, 5, 5)); /* between: nothing held */
    ASSERT_EQ(0, vt__rangeset_remove(&s, 20, 10));
    ASSERT_STREQ("0-5 10-20 30-55", show(&s));
    ASSERT_EQ(4, vt__rangeset_remove(&s, 3, 9)); /* the tail of one, the head of the next */
    ASSERT_STREQ("0-3 12-20 30-55", show(&s));
    ASSERT_EQ(36, vt__rangeset_remove(&s, 0, 100));
    ASSERT_STREQ("", show(&s));
    vt__rangeset_free(&s);
}

TEST(gaps_of_a_segment)
{
    struct vt__rangeset s = {0};
    char z[256] = "";
    int n = 0;
    ASSERT_EQ(0, vt__rangeset_gaps(&s, 100, 50, gap_text, z)); /* empty: all of it */
    ASSERT_STREQ("100+50", z);
    ASSERT_EQ(0, vt__rangeset_add(&s, 90, 20));
    ASSERT_EQ(0, vt__rangeset_add(&s, 120, 10));
    ASSERT_EQ(0, vt__rangeset_add(&s, 145, 100));
    z[0] = 0;
    ASSERT_EQ(0, vt__rangeset_gaps(&s, 100, 50, gap_text, z));
    ASSERT_STREQ("110+10 130+15", z);
    z[0] = 0;
    ASSERT_EQ(0, vt__rangeset_gaps(&s, 0, 60, gap_text, z)); /* before every range */
    ASSERT_STREQ("0+60", z);
    z[0] = 0;
    ASSERT_EQ(0, vt__rangeset_gaps(&s, 150, 50, gap_text, z)); /* inside one: none */
    ASSERT_STREQ("", z);
    z[0] = 0;
    ASSERT_EQ(0, vt__rangeset_gaps(&s, 240, 20, gap_text, z)); /* past the last */
    ASSERT_STREQ("245+15", z);
    ASSERT_EQ(7, vt__rangeset_gaps(&s, 0, 1000, gap_stop, &n)); /* the callback's code ends it */
    ASSERT_EQ(2, n);
    vt__rangeset_free(&s);
}

VT_TEST_LIST(T(join_and_split) T(gaps_of_a_segment))
