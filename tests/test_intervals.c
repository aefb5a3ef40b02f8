/* Tests of the interval index of live allocations and the kernel-parameter scan. */
#include "intervals.h"

#include <errno.h>
#include <pthread.h>

#include "vt_test.h"

/* xorshift64: deterministic pseudo-random numbers for the randomized checks. */
static uint64_t rnd(uint64_t *pState)
{
    uint64_t x = *pState;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *pState = x;
}

TEST(find_basic)
{
    struct vt__ivl *idx = vt__ivl_open();
    uint64_t base = 0, size = 0;
    struct vt_ivl_stats st;
    ASSERT(idx);
    ASSERT_EQ(0, vt__ivl_find(idx, 0x1000, &base, &size)); /* empty index */
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x7f0000000000ull, 4096));
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x7f0000200000ull, 2 << 20));
    ASSERT_EQ(1, vt__ivl_find(idx, 0x7f0000000000ull, &base, &size));
    ASSERT_EQ(0x7f0000000000ull, base);
    ASSERT_EQ(4096, size);
    ASSERT_EQ(1, vt__ivl_find(idx, 0x7f0000000fffull, &base, NULL));
    ASSERT_EQ(0x7f0000000000ull, base);
    ASSERT_EQ(0, vt__ivl_find(idx, 0x7f0000001000ull, &base, NULL)); /* end is exclusive */
    ASSERT_EQ(0, vt__ivl_find(idx, 0x7effffffffffull, &base, NULL));
    ASSERT_EQ(1, vt__ivl_find(idx, 0x7f00003fffffull, &base, NULL));
    ASSERT_EQ(0x7f0000200000ull, base);
    ASSERT_EQ(0, vt__ivl_find(idx, 0x7f0000400000ull, &base, NULL));
    ASSERT_EQ(-ENOENT, vt__ivl_remove(idx, 0x7f0000000010ull)); /* not a base */
    ASSERT_EQ(0, vt__ivl_remove(idx, 0x7f0000000000ull));
    ASSERT_EQ(0, vt__ivl_find(idx, 0x7f0000000010ull, &base, NULL));
    ASSERT_EQ(1, vt__ivl_find(idx, 0x7f0000300000ull, &base, NULL));
    vt__ivl_stats(idx, &st);
    ASSERT_EQ(1, st.live);
    ASSERT_EQ(2, st.inserts);
    ASSERT_EQ(1, st.removes);
    ASSERT_EQ(1, st.missing);
    vt__ivl_close(idx);
}

TEST(zero_size_and_wrap)
{
    struct vt__ivl *idx = vt__ivl_open();
    uint64_t base = 0, size = 0;
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x5000, 0));
    ASSERT_EQ(1, vt__ivl_find(idx, 0x5000, &base, &size));
    ASSERT_EQ(1, size);
    ASSERT_EQ(0, vt__ivl_find(idx, 0x5001, &base, &size));
    ASSERT_EQ(0, vt__ivl_insert(idx, UINT64_MAX - 15, 64)); /* clipped at 2^64 */
    ASSERT_EQ(1, vt__ivl_find(idx, UINT64_MAX - 1, &base, &size));
    ASSERT_EQ(UINT64_MAX - 15, base);
    ASSERT_EQ(15, size);
    vt__ivl_close(idx);
}

/* An insert over live ranges (a free that was never seen) replaces the stale ones. */
TEST(overlap_replaces_stale)
{
    struct vt__ivl *idx = vt__ivl_open();
    uint64_t base = 0, size = 0;
    struct vt_ivl_stats st;
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x10000, 0x1000));
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x11000, 0x1000));
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x12000, 0x1000));
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x20000, 0x1000));
    /* [0x10800, 0x12800) overlaps the first three. */
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x10800, 0x2000));
    vt__ivl_stats(idx, &st);
    ASSERT_EQ(3, st.replaced);
    ASSERT_EQ(2, st.live);
    ASSERT_EQ(0, vt__ivl_find(idx, 0x10000, &base, &size));
    ASSERT_EQ(1, vt__ivl_find(idx, 0x12000, &base, &size));
    ASSERT_EQ(0x10800, base);
    ASSERT_EQ(0x2000, size);
    ASSERT_EQ(0, vt__ivl_find(idx, 0x12900, &base, &size));
    ASSERT_EQ(1, vt__ivl_find(idx, 0x20000, &base, &size));
    /* Exactly adjacent ranges do not overlap. */
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x12800, 0x800));
    vt__ivl_stats(idx, &st);
    ASSERT_EQ(3, st.replaced);
    ASSERT_EQ(3, st.live);
    vt__ivl_close(idx);
}

/*
 * Many inserts and removes in random order (splits, merges, dropped leaves)
 * checked against a brute-force model on every step's lookups.
 */
TEST(randomized_against_model)
{
    enum { N = 3000, SLOT = 0x10000 };
    struct vt__ivl *idx = vt__ivl_open();
    static uint64_t aSize[N]; /* 0: not live */
    uint64_t seed = 0x9e3779b97f4a7c15ull, nLive = 0;
    struct vt_ivl_stats st;
    int step;
    ASSERT(idx);
    for (step = 0; step < 60000; step++) {
        int k = (int)(rnd(&seed) % N);
        uint64_t base = 0x7f0000000000ull + (uint64_t)k * SLOT, got = 0, gotSize = 0, addr;
        int q;
        if (aSize[k]) {
            ASSERT_EQ(0, vt__ivl_remove(idx, base));
            aSize[k] = 0;
            nLive--;
        } else {
            aSize[k] = 1 + rnd(&seed) % SLOT;
            ASSERT_EQ(0, vt__ivl_insert(idx, base, aSize[k]));
            nLive++;
        }
        for (q = 0; q < 4; q++) {
            int j = (int)(rnd(&seed) % N);
            uint64_t off = rnd(&seed) % SLOT;
            int want = aSize[j] && off < aSize[j];
            addr = 0x7f0000000000ull + (uint64_t)j * SLOT + off;
            ASSERT_EQ(want, vt__ivl_find(idx, addr, &got, &gotSize));
            if (want) {
                ASSERT_EQ(0x7f0000000000ull + (uint64_t)j * SLOT, got);
                ASSERT_EQ(aSize[j], gotSize);
            }
        }
    }
    vt__ivl_stats(idx, &st);
    ASSERT_EQ(nLive, st.live);
    ASSERT_EQ(0, st.replaced);
    ASSERT_EQ(0, st.missing);
    /* Remove everything in ascending order, then the index is empty. */
    for (step = 0; step < N; step++)
        if (aSize[step]) ASSERT_EQ(0, vt__ivl_remove(idx, 0x7f0000000000ull + (uint64_t)step * SLOT));
    vt__ivl_stats(idx, &st);
    ASSERT_EQ(0, st.live);
    ASSERT_EQ(0, vt__ivl_find(idx, 0x7f0000000000ull, NULL, NULL));
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x1000, 16)); /* usable again after emptying */
    ASSERT_EQ(1, vt__ivl_find(idx, 0x100f, NULL, NULL));
    vt__ivl_close(idx);
}

/* A contiguous parameter block: pointers, interior pointers, scalars, duplicates. */
TEST(scan_block)
{
    struct vt__ivl *idx = vt__ivl_open();
    unsigned char block[8 * 9 + 4];
    uint64_t aWord[9], aBase[8];
    double scalar = 0.5;
    struct vt_ivl_stats st;
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x7f1000000000ull, 1 << 20));
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x7f1000200000ull, 1 << 20));
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x7f1000400000ull, 1 << 20));
    aWord[0] = 0x7f1000200000ull;       /* base of B */
    aWord[1] = 1024;                    /* a size */
    memcpy(&aWord[2], &scalar, 8);      /* a double */
    aWord[3] = 0x7f1000000040ull;       /* interior pointer into A */
    aWord[4] = 0x7f1000200080ull;       /* B again: deduplicated */
    aWord[5] = 0x7f1000100000ull;       /* just past A: no allocation */
    aWord[6] = 0;
    aWord[7] = 0x7f10004fffffull;       /* last byte of C */
    aWord[8] = UINT64_MAX;
    memset(block, 0, sizeof block);
    memcpy(block + 1, aWord, sizeof aWord); /* deliberately misaligned block: scanned at 1, 9, ... */
    ASSERT_EQ(3, vt__ivl_scan(idx, block + 1, sizeof aWord + 3, aBase, 8)); /* partial tail ignored */
    ASSERT_EQ(0x7f1000200000ull, aBase[0]);
    ASSERT_EQ(0x7f1000000000ull, aBase[1]);
    ASSERT_EQ(0x7f1000400000ull, aBase[2]);
    /* Output array smaller than the hits: count reported, excess truncated. */
    ASSERT_EQ(3, vt__ivl_scan(idx, block + 1, sizeof aWord, aBase, 2));
    ASSERT_EQ(0x7f1000200000ull, aBase[0]);
    ASSERT_EQ(0x7f1000000000ull, aBase[1]);
    ASSERT_EQ(0, vt__ivl_scan(idx, block + 1, 7, aBase, 8)); /* less than one word */
    vt__ivl_stats(idx, &st);
    ASSERT_EQ(3, st.scans);
    ASSERT_EQ(18, st.words);
    ASSERT_EQ(6, st.hits);
    ASSERT_EQ(1, st.truncated);
    vt__ivl_close(idx);
}

/*
 * A multi-tensor-apply style block: 512 words pointing into 300 distinct
 * allocations, each several times and in no order. The count stays exact past
 * the list and output sizes.
 */
TEST(scan_many_pointers)
{
    enum { NALLOC = 300, NWORD = 512 };
    struct vt__ivl *idx = vt__ivl_open();
    static uint64_t aWord[NWORD], aBase[64];
    static int aSeen[NALLOC];
    uint64_t seed = 12345;
    struct vt_ivl_stats st;
    int i, nDistinct = 0;
    for (i = 0; i < NALLOC; i++) ASSERT_EQ(0, vt__ivl_insert(idx, 0x7f6000000000ull + (uint64_t)i * 0x10000, 0x8000));
    for (i = 0; i < NWORD; i++) {
        int k = (int)(rnd(&seed) % NALLOC);
        aWord[i] = 0x7f6000000000ull + (uint64_t)k * 0x10000 + rnd(&seed) % 0x8000;
        if (!aSeen[k]++) nDistinct++;
    }
    ASSERT(nDistinct > 200);
    ASSERT_EQ(nDistinct, vt__ivl_scan(idx, aWord, sizeof aWord, aBase, 64));
    for (i = 0; i < 64; i++) { /* the first 64 distinct, in order of first appearance */
        ASSERT_EQ(0, (aBase[i] - 0x7f6000000000ull) % 0x10000);
        ASSERT(aSeen[(aBase[i] - 0x7f6000000000ull) / 0x10000] > 0);
    }
    ASSERT_EQ(aWord[0] & ~0xffffull, aBase[0]);
    vt__ivl_stats(idx, &st);
    ASSERT_EQ(nDistinct, st.hits);
    ASSERT_EQ(nDistinct - 64, st.truncated);
    /* Base 0 is a valid key too, counted once. */
    ASSERT_EQ(0, vt__ivl_insert(idx, 0, 64));
    for (i = 0; i < NWORD; i++) aWord[i] = i < 20 ? 0x7f6000000000ull + (uint64_t)i * 0x10000 : (uint64_t)(i % 3) * 8;
    ASSERT_EQ(21, vt__ivl_scan(idx, aWord, sizeof aWord, aBase, 64));
    vt__ivl_close(idx);
}

/* Parameters given as kernelParams: a pointer, an int, a struct holding two pointers. */
TEST(scan_params)
{
    struct vt__ivl *idx = vt__ivl_open();
    uint64_t p0 = 0x7f2000000000ull, aBase[8];
    int i32 = 7;
    struct { int n; int pad; uint64_t pa; uint64_t pb; } strukt = {3, 0, 0x7f2000300010ull, 0x7f2000000008ull};
    void *apParam[4];
    size_t aSize[4];
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x7f2000000000ull, 4096));
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x7f2000300000ull, 4096));
    apParam[0] = &p0;
    aSize[0] = 8;
    apParam[1] = &i32;
    aSize[1] = 4;
    apParam[2] = &strukt;
    aSize[2] = sizeof strukt;
    apParam[3] = NULL;
    aSize[3] = 8;
    ASSERT_EQ(2, vt__ivl_scan_params(idx, apParam, aSize, 4, aBase, 8));
    ASSERT_EQ(0x7f2000000000ull, aBase[0]);
    ASSERT_EQ(0x7f2000300000ull, aBase[1]);
    ASSERT_EQ(0, vt__ivl_scan_params(idx, apParam, aSize, 0, aBase, 8));
    ASSERT_EQ(0, vt__ivl_remove(idx, 0x7f2000300000ull));
    ASSERT_EQ(1, vt__ivl_scan_params(idx, apParam, aSize, 4, aBase, 8));
    vt__ivl_close(idx);
}

/* Writers and scanners on several threads at once: results stay exact. */
struct worker {
    struct vt__ivl *idx;
    int id;
    int bad;
};

static void *writer_main(void *pArg)
{
    struct worker *w = pArg;
    uint64_t base = 0x7f3000000000ull + ((uint64_t)w->id << 32);
    int r, k;
    for (r = 0; r < 200; r++) {
        for (k = 0; k < 50; k++)
            if (vt__ivl_insert(w->idx, base + (uint64_t)k * 0x100000, 0x1000)) w->bad++;
        for (k = 0; k < 50; k++)
            if (vt__ivl_remove(w->idx, base + (uint64_t)k * 0x100000)) w->bad++;
    }
    return NULL;
}

static void *scanner_main(void *pArg)
{
    struct worker *w = pArg;
    uint64_t aWord[64], aBase[64];
    int r, k;
    for (k = 0; k < 64; k++) aWord[k] = k % 2 ? 0x7f4000000000ull + 8 * (uint64_t)k : (uint64_t)k;
    for (r = 0; r < 20000; r++)
        if (vt__ivl_scan(w->idx, aWord, sizeof aWord, aBase, 64) != 1 ||
            aBase[0] != 0x7f4000000000ull)
            w->bad++;
    return NULL;
}

TEST(concurrent)
{
    struct vt__ivl *idx = vt__ivl_open();
    pthread_t at[4];
    struct worker aw[4];
    struct vt_ivl_stats st;
    int k;
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x7f4000000000ull, 0x10000)); /* stays live throughout */
    for (k = 0; k < 4; k++) {
        aw[k].idx = idx;
        aw[k].id = k;
        aw[k].bad = 0;
        ASSERT_EQ(0, pthread_create(&at[k], NULL, k < 2 ? writer_main : scanner_main, &aw[k]));
    }
    for (k = 0; k < 4; k++) {
        pthread_join(at[k], NULL);
        ASSERT_EQ(0, aw[k].bad);
    }
    vt__ivl_stats(idx, &st);
    ASSERT_EQ(1, st.live);
    ASSERT_EQ(2 * 200 * 50 + 1, st.inserts);
    ASSERT_EQ(2 * 200 * 50, st.removes);
    ASSERT_EQ(2 * 20000, st.scans);
    ASSERT_EQ(2 * 20000, st.hits);
    vt__ivl_close(idx);
}

/* Around fork(): both copies of the index stay consistent and usable. */
TEST(fork_child_usable)
{
    struct vt__ivl *idx = vt__ivl_open();
    int status = -1;
    pid_t pid;
    ASSERT_EQ(0, vt__ivl_insert(idx, 0x7f5000000000ull, 4096));
    vt__ivl_fork_prepare(idx);
    pid = fork();
    if (pid == 0) {
        alarm(10); /* never outlive the test */
        vt__ivl_fork_child(idx);
    } else {
        vt__ivl_fork_parent(idx);
    }
    ASSERT(pid >= 0);
    if (pid == 0) {
        uint64_t base = 0;
        if (vt__ivl_find(idx, 0x7f5000000010ull, &base, NULL) != 1 || base != 0x7f5000000000ull) _exit(1);
        if (vt__ivl_insert(idx, 0x7f5000100000ull, 64) || vt__ivl_remove(idx, 0x7f5000000000ull)) _exit(2);
        _exit(vt__ivl_find(idx, 0x7f5000100020ull, NULL, NULL) == 1 ? 0 : 3);
    }
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(0, WEXITSTATUS(status));
    ASSERT_EQ(1, vt__ivl_find(idx, 0x7f5000000010ull, NULL, NULL)); /* the parent's copy is untouched */
    ASSERT_EQ(0, vt__ivl_find(idx, 0x7f5000100020ull, NULL, NULL));
    vt__ivl_close(idx);
}

VT_TEST_LIST(T(find_basic) T(zero_size_and_wrap) T(overlap_replaces_stale)
             T(randomized_against_model) T(scan_block) T(scan_many_pointers) T(scan_params) T(concurrent)
             T(fork_child_usable))
