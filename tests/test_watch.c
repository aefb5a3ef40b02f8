/* Tests of the takeover watch: buffers keep coming, a probe answered, buffers taken over. */
#include "watch.h"

#include "vt_test.h"

/* Buffers answer every call: never a probe. Calls that wait but get their buffer in time: none either. */
TEST(healthy_never_probes)
{
    struct vt__watch w;
    uint64_t t, nBuf = 0, nExp = 0;
    vt__watch_init(&w, 1000);
    for (t = 1; t < 60000; t += 500) {
        nExp += 3;
        ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, t, nBuf, nExp));
        nBuf++; /* the flush returned a buffer */
    }
    /* no call waiting: quiet forever is fine (an idle job) */
    for (; t < 200000; t += 500) ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, t, nBuf, nExp));
}

/* Calls wait past quiet_ms: a probe; the forced flush returns a buffer: all is well, and quiet doubles. */
TEST(probe_answered_backs_off)
{
    struct vt__watch w;
    vt__watch_init(&w, 1000);
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 100, 1, 1));
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 200, 1, 2)); /* waiting from here */
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 1100, 1, 3));
    ASSERT_EQ(VT_WATCH_PROBE, vt__watch_tick(&w, 1200, 1, 3));
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 1300, 2, 3)); /* the probe's buffer */
    ASSERT_EQ(2000, w.quiet_ms);
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 1400, 2, 4));
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 3300, 2, 4)); /* 1900 ms: not yet */
    ASSERT_EQ(VT_WATCH_PROBE, vt__watch_tick(&w, 3400, 2, 4));
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 3500, 3, 4));
    ASSERT_EQ(4000, w.quiet_ms);
    /* up to 8 times the first */
    w.quiet_ms = 8000;
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 4000, 3, 5));
    ASSERT_EQ(VT_WATCH_PROBE, vt__watch_tick(&w, 12000, 3, 5));
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 12100, 4, 5));
    ASSERT_EQ(8000, w.quiet_ms);
}

/* Calls wait, the probe brings nothing: taken over, said once, and nothing more after. */
TEST(taken_over_once)
{
    struct vt__watch w;
    uint64_t t;
    vt__watch_init(&w, 1000);
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 100, 5, 10));
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 200, 6, 10)); /* the last buffer */
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 300, 6, 11));
    ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, 800, 6, 15));
    ASSERT_EQ(VT_WATCH_PROBE, vt__watch_tick(&w, 1300, 6, 20));
    ASSERT_EQ(VT_WATCH_TAKEN, vt__watch_tick(&w, 1400, 6, 21));
    for (t = 1500; t < 100000; t += 100) ASSERT_EQ(VT_WATCH_NONE, vt__watch_tick(&w, t, t, t));
}

VT_TEST_LIST(T(healthy_never_probes) T(probe_answered_backs_off) T(taken_over_once))
