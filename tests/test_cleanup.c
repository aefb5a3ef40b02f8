/* Tests for the files removed on a termination signal: registered, forgotten, registered again. */
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "vt_test.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VT_ASAN_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define VT_ASAN_ALLOCATOR 1
#endif
#ifdef VT_ASAN_ALLOCATOR
size_t __sanitizer_get_current_allocated_bytes(void); /* the sanitizer runtime's (GCC has no header for it) */
#endif

/* Bytes the heap holds for this process now (the sanitizer's allocator where it replaces malloc). */
static size_t heap_bytes(void)
{
#ifdef VT_ASAN_ALLOCATOR
    return __sanitizer_get_current_allocated_bytes();
#else
    return mallinfo2().uordblks;
#endif
}

/* A new empty file zDir/zName, its path into z. */
static void make_file(const char *zDir, const char *zName, char *z, size_t n)
{
    int fd;
    snprintf(z, n, "%s/%s", zDir, zName);
    fd = open(z, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT(fd >= 0);
    close(fd);
}

/*
 * In a child: register, forget and register again as zSteps says ('a' add, 'f' forget), then die
 * of SIGTERM. Returns whether the file is still there afterwards (the child died of the signal).
 */
static int survives_sigterm(const char *zPath, const char *zSteps)
{
    int status;
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        for (const char *p = zSteps; *p; p++) {
            if (*p == 'a' && vt__cleanup_add(zPath) != 0) _exit(3);
            if (*p == 'f') vt__cleanup_forget(zPath);
        }
        raise(SIGTERM);
        _exit(4);
    }
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    return access(zPath, F_OK) == 0;
}

/* A registered file goes with the signal, a forgotten one stays, and one registered again goes. */
TEST(removed_on_signal_unless_forgotten)
{
    const char *zDir = getenv("VT_TEST_TMP");
    char z[512];
    ASSERT(zDir != NULL);
    make_file(zDir, "once", z, sizeof z);
    ASSERT_EQ(0, survives_sigterm(z, "a"));
    make_file(zDir, "forgotten", z, sizeof z);
    ASSERT_EQ(1, survives_sigterm(z, "af"));
    make_file(zDir, "again", z, sizeof z);
    ASSERT_EQ(0, survives_sigterm(z, "afa"));
    ASSERT_EQ(0, survives_sigterm(z, "afafa"));
    make_file(zDir, "forgotten_again", z, sizeof z);
    ASSERT_EQ(1, survives_sigterm(z, "afaf"));
}

/*
 * One path registered and forgotten 1000 times (an output written over and over by the same
 * process) holds one entry, not 1000: the heap does not grow with the calls.
 */
TEST(same_path_again_holds_no_more)
{
    const char *zDir = getenv("VT_TEST_TMP");
    char z[512];
    size_t nBefore, nAfter;
    ASSERT(zDir != NULL);
    snprintf(z, sizeof z, "%s/out.json.part", zDir);
    ASSERT_EQ(0, vt__cleanup_add(z)); /* the first entry, and the handler installed */
    vt__cleanup_forget(z);
    nBefore = heap_bytes();
    for (int i = 0; i < 1000; i++) {
        ASSERT_EQ(0, vt__cleanup_add(z));
        vt__cleanup_forget(z);
    }
    nAfter = heap_bytes();
    if (nAfter > nBefore + 1024)
        VT__FAIL("the heap grew by %zu bytes over 1000 registrations of one path", nAfter - nBefore);
}

VT_TEST_LIST(T(removed_on_signal_unless_forgotten) T(same_path_again_holds_no_more))
