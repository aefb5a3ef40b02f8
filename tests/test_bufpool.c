/* Tests of the activity-buffer pool: one byte budget for every thread's buffer, full then small sizes, ownership. */
#include "bufpool.h"

#include "core_util.h"
#include "vt_test.h"

#define MIB ((size_t)1 << 20)
#define KIB ((size_t)1 << 10)

/*
 * Many threads each holding a buffer (CUPTI 13's per-thread buffers): full
 * size up to half the budget, an eighth of it beyond, never past the budget.
 */
TEST(per_thread_buffers_share_the_budget)
{
    struct vt__bufpool *pool = vt__bufpool_open(4 * MIB, 1 * MIB);
    uint8_t *ap[32];
    size_t aSize[32], n = 0, nFull = 0, nSmall = 0, sz = 7;
    ASSERT(pool != NULL);
    ASSERT_EQ(4 * MIB / (128 * KIB), vt__bufpool_capacity(pool));
    while (n < 32 && (ap[n] = vt__bufpool_get(pool, &aSize[n])) != NULL) {
        ASSERT_EQ(0, (uintptr_t)ap[n] % 8);
        memset(ap[n], 0xab, aSize[n]); /* every byte is ours to write */
        if (aSize[n] == MIB) nFull++;
        else if (aSize[n] == 128 * KIB) nSmall++;
        n++;
    }
    ASSERT_EQ(2, nFull);   /* 2 MiB: half the budget */
    ASSERT_EQ(16, nSmall); /* the other 2 MiB in eighths */
    ASSERT_EQ(4 * MIB, vt__bufpool_bytes(pool));
    ASSERT_EQ(18, vt__bufpool_at_cupti(pool));
    ASSERT(vt__bufpool_get(pool, &sz) == NULL); /* over the budget: refused */
    ASSERT_EQ(0, sz);
    /* a returned, decoded buffer is handed out again */
    ASSERT_EQ(MIB, vt__bufpool_returned(pool, ap[0]));
    ASSERT_EQ(17, vt__bufpool_at_cupti(pool));
    vt__bufpool_recycle(pool, ap[0]);
    ASSERT(vt__bufpool_get(pool, &sz) == ap[0]);
    ASSERT_EQ(MIB, sz);
    for (size_t i = 0; i < n; i++) {
        ASSERT(vt__bufpool_returned(pool, ap[i]) > 0);
        vt__bufpool_recycle(pool, ap[i]);
    }
    ASSERT_EQ(0, vt__bufpool_at_cupti(pool));
    ASSERT_EQ(0, vt__bufpool_close(pool));
    CORE_LEAK_CHECK();
}

/* Only a buffer of the pool that CUPTI holds can be returned; twice is refused. */
TEST(returns_checked)
{
    struct vt__bufpool *pool = vt__bufpool_open(2 * MIB, 1 * MIB);
    uint8_t other[64], *p;
    size_t sz = 0;
    ASSERT(pool != NULL);
    p = vt__bufpool_get(pool, &sz);
    ASSERT(p != NULL);
    ASSERT_EQ(0, vt__bufpool_returned(pool, other));
    ASSERT_EQ(MIB, vt__bufpool_returned(pool, p));
    ASSERT_EQ(0, vt__bufpool_returned(pool, p)); /* already back */
    vt__bufpool_recycle(pool, other);           /* not ours: nothing */
    vt__bufpool_recycle(pool, p);
    ASSERT_EQ(0, vt__bufpool_close(pool));
    ASSERT(vt__bufpool_open(MIB - 8, MIB) == NULL); /* not even one buffer fits */
    CORE_LEAK_CHECK();
}

/*
 * Closing never frees a buffer CUPTI still holds: CUPTI may still write it.
 * The pool stays allocated for it (reachable: no leak is reported).
 */
TEST(close_leaves_cupti_buffers_alone)
{
    struct vt__bufpool *pool = vt__bufpool_open(8 * MIB, 1 * MIB);
    uint8_t *pHeld, *pBack, *pQueued;
    size_t sz;
    ASSERT(pool != NULL);
    pHeld = vt__bufpool_get(pool, &sz);
    pBack = vt__bufpool_get(pool, &sz);
    pQueued = vt__bufpool_get(pool, &sz);
    ASSERT(pHeld && pBack && pQueued);
    ASSERT(vt__bufpool_returned(pool, pBack) > 0);
    vt__bufpool_recycle(pool, pBack);
    ASSERT(vt__bufpool_returned(pool, pQueued) > 0);
    ASSERT_EQ(1, vt__bufpool_close(pool));
    memset(pHeld, 0x5a, sz); /* CUPTI writing after the close: still valid memory (ASan checks) */
    ASSERT_EQ(0x5a, pHeld[sz - 1]);
    CORE_LEAK_CHECK();
}

/*
 * Through the writer: a trace closed while CUPTI still holds a buffer says so
 * (meta activity_buffers_not_returned) and the buffer stays valid; a buffer
 * CUPTI returns after the close is ignored.
 */
TEST(writer_close_with_a_buffer_at_cupti)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    uint8_t *pHeld, *pBack;
    size_t sz = 0;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    pHeld = vt__writer_buffer_alloc(w, &sz);
    pBack = vt__writer_buffer_alloc(w, &sz);
    ASSERT(pHeld && pBack);
    vt__writer_buffer_submit(w, pBack, 0);
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    memset(pHeld, 0, sz);
    db = core_open_ro(zPath);
    ASSERT_STREQ("1", core_q_rows(db, "SELECT value FROM meta WHERE key = 'activity_buffers_not_returned'"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

VT_TEST_LIST(T(per_thread_buffers_share_the_budget) T(returns_checked) T(close_leaves_cupti_buffers_alone)
             T(writer_close_with_a_buffer_at_cupti))
