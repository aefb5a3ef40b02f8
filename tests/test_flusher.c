/* Tests of the flush thread: periodic ticks, kicks, a final task waited for at most a bounded time. */
#include "flusher.h"

#include <errno.h>
#include <stdatomic.h>
#include <time.h>

#include "core_util.h"
#include "vt_test.h"

static atomic_int g_nTick, g_nFinal, g_bBlock, g_bInTick;

static void tick(void *pArg)
{
    (void)pArg;
    atomic_store(&g_bInTick, 1);
    while (atomic_load(&g_bBlock)) { /* a flush stuck in CUPTI */
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&g_nTick, 1);
}

static void final(void *pArg)
{
    ASSERT(pArg == &g_nFinal);
    atomic_fetch_add(&g_nFinal, 1);
}

/* Wait (polling, at most 20 s) until *p >= n; returns the value seen. Never asserts on time itself. */
static int wait_for(atomic_int *p, int n)
{
    struct timespec ts = {0, 2000000};
    for (int i = 0; i < 10000 && atomic_load(p) < n; i++) nanosleep(&ts, NULL);
    return atomic_load(p);
}

/* Ticks come every period; stop runs the final task once, then nothing ticks any more. */
TEST(ticks_then_final)
{
    struct vt__flusher *f = vt__flusher_start(5, tick, &g_nFinal);
    int n;
    ASSERT(f != NULL);
    ASSERT(wait_for(&g_nTick, 3) >= 3);
    ASSERT_EQ(0, vt__flusher_stop(f, final, 10000));
    ASSERT_EQ(1, atomic_load(&g_nFinal));
    n = atomic_load(&g_nTick);
    {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    ASSERT_EQ(n, atomic_load(&g_nTick));
    ASSERT_EQ(0, vt__flusher_stop(NULL, final, 10));
    CORE_LEAK_CHECK();
}

/* A kick makes a tick without waiting for the (long) period; stop without a final task. */
TEST(kick_ticks_now)
{
    struct vt__flusher *f = vt__flusher_start(60000, tick, &g_nFinal);
    ASSERT(f != NULL);
    vt__flusher_kick(f);
    ASSERT_EQ(1, wait_for(&g_nTick, 1));
    ASSERT_EQ(0, vt__flusher_stop(f, NULL, 10000));
    ASSERT_EQ(0, atomic_load(&g_nFinal));
    CORE_LEAK_CHECK();
}

/*
 * A tick stuck (a hung device) does not hang stop: it returns -ETIMEDOUT
 * after the bound, and the thread, once unstuck, still runs the final task
 * and frees itself (no leak check here: that happens on the thread).
 */
TEST(stuck_tick_bounded)
{
    struct vt__flusher *f;
    atomic_store(&g_bBlock, 1);
    f = vt__flusher_start(1, tick, &g_nFinal);
    ASSERT(f != NULL);
    ASSERT_EQ(1, wait_for(&g_bInTick, 1));
    ASSERT_EQ(-ETIMEDOUT, vt__flusher_stop(f, final, 50));
    ASSERT_EQ(0, atomic_load(&g_nFinal));
    atomic_store(&g_bBlock, 0);
    ASSERT_EQ(1, wait_for(&g_nFinal, 1));
}

VT_TEST_LIST(T(ticks_then_final) T(kick_ticks_now) T(stuck_tick_bounded))
