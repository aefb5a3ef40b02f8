/* Cases for the harness's own test (test_harness.c): each misbehaves the way a broken test can. */
#include "vt_test.h"

TEST(pass) { ASSERT_EQ(1, 1); }
TEST(fail) { ASSERT_EQ(1, 2); }
TEST(skip) { SKIP("the harness's own skip"); }

/* Burns CPU until the CPU-time limit stops it. */
TEST(spin)
{
    volatile unsigned long n = 0;
    for (;;) n++;
}

/* Waits without using CPU until the wall-clock limit stops it. */
TEST(block)
{
    for (;;) pause();
}

/* Leaves a file in the program's scratch directory and says where. */
TEST(scratch)
{
    char zPath[512];
    const char *zTmp = getenv("VT_TEST_TMP");
    FILE *f;
    ASSERT(zTmp != NULL);
    snprintf(zPath, sizeof zPath, "%s/left-behind", zTmp);
    f = fopen(zPath, "w");
    ASSERT(f != NULL);
    fputs("x", f);
    fclose(f);
    printf("scratch %s\n", zTmp);
}

VT_TEST_LIST(T(pass) T(fail) T(skip) T(spin) T(block) T(scratch))
