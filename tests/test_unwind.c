/* Tests of the cached-CFI unwinder: it must answer exactly what backtrace() answers, on many stack shapes. */
#include "unwind.h"

#include <alloca.h>
#include <pthread.h>
#include <signal.h>

#include "vt_test.h"

#define MAXF 256

static int nCompared; /* walks compared in this process */

/* Unwind both ways from the same frame and require identical answers. */
__attribute__((noinline)) static void compare_here(int nMax)
{
    void *a[2][MAXF], **aFast = a[0], **aRef = a[1];
    int an[2], nFast, nRef, i, k;
    static volatile int nWalk = 2; /* a trip count the compiler cannot see: one call site for both */
    for (k = 0; k < nWalk; k++) an[k] = vt__unwind(a[k], nMax, k == 0);
    nFast = an[0];
    nRef = an[1];
    if (nFast != nRef) VT__FAIL("depth: fast %d, backtrace %d (nMax %d)", nFast, nRef, nMax);
    for (i = 0; i < nFast; i++)
        if (aFast[i] != aRef[i]) VT__FAIL("frame %d: fast %p, backtrace %p", i, aFast[i], aRef[i]);
    nCompared++;
    __asm__ volatile("" ::: "memory");
}

/* Recursion through three functions with different frame layouts. */
static void rec_plain(int n, int nMax);
static void rec_alloca(int n, int nMax);
static void rec_many(int n, int nMax);

__attribute__((noinline)) static void rec_plain(int n, int nMax)
{
    if (n == 0) compare_here(nMax);
    else if (n % 3 == 0) rec_alloca(n - 1, nMax);
    else if (n % 3 == 1) rec_many(n - 1, nMax);
    else rec_plain(n - 1, nMax);
    __asm__ volatile("" ::: "memory");
}

/* A variable-size frame: the compiler keeps the CFA in rbp. */
__attribute__((noinline)) static void rec_alloca(int n, int nMax)
{
    volatile char *p = alloca((size_t)(16 + n * 8));
    p[0] = (char)n;
    rec_plain(n, nMax);
    __asm__ volatile("" ::: "memory");
}

/* Many live values: callee-saved registers pushed in the prologue. */
__attribute__((noinline)) static void rec_many(int n, int nMax)
{
    volatile long a = n, b = n * 2, c = n * 3, d = n * 5, e = n * 7, f = n * 11;
    rec_plain(n, nMax);
    a += b + c + d + e + f;
    __asm__ volatile("" ::: "memory");
}

TEST(same_as_backtrace_shapes)
{
    struct vt_unwind_stats st;
    int n, nMax;
    for (n = 0; n < 40; n++)
        for (nMax = 1; nMax <= MAXF; nMax = nMax < 8 ? nMax + 1 : nMax * 2) rec_plain(n, nMax);
    ASSERT(nCompared > 300);
#if defined(__x86_64__) && defined(__linux__)
    vt__unwind_stats(&st);
    ASSERT_EQ(nCompared, st.fast);     /* every fast walk completed without help */
    ASSERT_EQ(nCompared, st.fallback); /* the reference walks */
#else
    (void)st;
#endif
}

/* The fast path is really taken on x86-64 (the comparison above would pass with fallbacks only). */
TEST(fast_path_used)
{
#if defined(__x86_64__) && defined(__linux__)
    struct vt_unwind_stats st0, st1;
    vt__unwind_stats(&st0);
    rec_plain(10, 64);
    vt__unwind_stats(&st1);
    ASSERT_EQ(st0.fast + 1, st1.fast);         /* the fast walk ... */
    ASSERT_EQ(st0.fallback + 1, st1.fallback); /* ... and the reference walk, forced */
#else
    SKIP("the cached unwinder is x86-64 Linux only");
#endif
}

static int cmp_and_compare(const void *a, const void *b)
{
    static int nDone;
    if (nDone++ < 3) compare_here(MAXF); /* inside libc's qsort */
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

TEST(through_libc)
{
    int a[64], i;
    for (i = 0; i < 64; i++) a[i] = (i * 37) % 64;
    qsort(a, 64, sizeof a[0], cmp_and_compare);
    ASSERT_EQ(0, a[0]);
    ASSERT_EQ(3, nCompared);
}

static void *thread_main(void *pArg)
{
    (void)pArg;
    rec_plain(12, MAXF); /* down to the thread's start, where the return address is undefined */
    rec_plain(5, 8);
    return NULL;
}

TEST(threads)
{
    pthread_t at[3];
    int k;
    for (k = 0; k < 3; k++) ASSERT_EQ(0, pthread_create(&at[k], NULL, thread_main, NULL));
    for (k = 0; k < 3; k++) ASSERT_EQ(0, pthread_join(at[k], NULL));
}

static void on_signal(int sig)
{
    (void)sig;
    compare_here(MAXF); /* across the signal trampoline: the fast walk hands over to backtrace() */
}

TEST(signal_frame)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
    ASSERT_EQ(0, raise(SIGUSR1));
    ASSERT_EQ(1, nCompared);
}

/* On an alternate signal stack the walk is not on the thread's stack: backtrace() answers. */
TEST(alternate_stack)
{
    static char aStack[64 * 1024];
    stack_t ss;
    struct sigaction sa;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = aStack;
    ss.ss_size = sizeof aStack;
    ASSERT_EQ(0, sigaltstack(&ss, NULL));
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK;
    ASSERT_EQ(0, sigaction(SIGUSR2, &sa, NULL));
    ASSERT_EQ(0, raise(SIGUSR2));
    ASSERT_EQ(1, nCompared);
#if defined(__x86_64__) && defined(__linux__)
    {
        struct vt_unwind_stats st;
        vt__unwind_stats(&st);
        ASSERT_EQ(0, st.fast);     /* off the thread's stack: never walked by the fast path */
        ASSERT_EQ(2, st.fallback); /* the handed-over walk and the reference walk */
    }
#endif
}

TEST(zero_frames)
{
    void *a[1];
    ASSERT_EQ(0, vt__unwind(a, 0, 1));
    ASSERT_EQ(0, vt__unwind(a, -1, 1));
}

VT_TEST_LIST(T(same_as_backtrace_shapes) T(fast_path_used) T(through_libc) T(threads)
             T(signal_frame) T(alternate_stack) T(zero_frames))
