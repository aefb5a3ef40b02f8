/* Tests of native call-site capture: dedup into stack ids, symbolization, bounds, lost records, threads. */
#include "stack.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>

#include "modres.h"
#include "pyframes.h"
#include "vt_test.h"
#include "vramtrace/schema.h"

/* Line of the capture call in vt_test_site_a, for the addr2line check. */
static int siteALine;

/* Capture sites: exported (the test links with -rdynamic) and never inlined, so dladdr names them. */
__attribute__((noinline)) int64_t vt_test_site_a(struct vt__sites *s, int depth, struct vt_hrec *pRec)
{
    int64_t id;
    siteALine = __LINE__ + 1;
    id = vt__site_capture(s, depth, 0, pRec);
    __asm__ volatile("" ::: "memory"); /* keep the call from becoming a tail call */
    return id;
}

__attribute__((noinline)) int64_t vt_test_site_b(struct vt__sites *s, int depth, struct vt_hrec *pRec)
{
    int64_t id = vt__site_capture(s, depth, 0, pRec);
    __asm__ volatile("" ::: "memory");
    return id;
}

/* A two-frame site (vt_test_site_a and this helper): the same wherever the helper is called from. */
__attribute__((noinline)) static int64_t site_depth2(struct vt__sites *s, struct vt_hrec *pRec)
{
    int64_t id = vt_test_site_a(s, 2, pRec);
    __asm__ volatile("" ::: "memory");
    return id;
}

/*
 * Recurse n levels, then capture depth frames: with depth n + 1 the site is
 * exactly the n + 1 frames of vt_test_site_rec, whoever called it, so each n
 * gives one distinct stack.
 */
__attribute__((noinline)) int64_t vt_test_site_rec(struct vt__sites *s, int n, int depth, struct vt_hrec *pRec)
{
    int64_t id = n > 0 ? vt_test_site_rec(s, n - 1, depth, pRec) : vt__site_capture(s, depth, 0, pRec);
    __asm__ volatile("" ::: "memory");
    return id;
}

/*
 * Native frames come out of a capture raw (absolute return address, no names):
 * the writer resolves them with modres.h. The tests resolve them the same way.
 */
static struct vt__modres *g_modres;

/* The function dladdr names for native frame f's return address ("" when none). */
static const char *fn_of(const struct vt_frame *f)
{
    uint64_t rel;
    const char *zFn = NULL;
    struct vt__modinfo *mi;
    ASSERT_EQ(VT_FRAME_NATIVE, f->kind);
    ASSERT(f->zModule == NULL && f->zFunction == NULL && f->pc != 0); /* raw */
    if (!g_modres) g_modres = vt__modres_open(0);
    ASSERT(g_modres != NULL);
    if (!vt__modres_resolve(g_modres, f->pc, &rel, &zFn, &mi)) return "";
    return zFn ? zFn : "";
}

/* The module path of native frame f's return address ("" when none). */
static const char *module_of(const struct vt_frame *f)
{
    uint64_t rel;
    const char *zFn = NULL;
    struct vt__modinfo *mi;
    if (!g_modres) g_modres = vt__modres_open(0);
    ASSERT(g_modres != NULL);
    if (!vt__modres_resolve(g_modres, f->pc, &rel, &zFn, &mi)) return "";
    return mi->zPath;
}

static void exe_path(char *zOut, size_t nOut)
{
    ssize_t n = readlink("/proc/self/exe", zOut, nOut - 1);
    ASSERT(n > 0);
    zOut[n] = '\0';
}

TEST(dedup_same_site)
{
    struct vt__sites *s = vt__sites_open(NULL);
    struct vt_hrec rec;
    struct vt_sites_stats st;
    int64_t id = 0, id2;
    int i;
    ASSERT(s);
    /* One two-frame site: only the first capture emits a record. */
    for (i = 0; i < 101; i++) {
        id2 = site_depth2(s, &rec);
        ASSERT(id2 >= 1);
        if (i == 0) {
            id = id2;
            ASSERT_EQ(VT_HREC_STACK, rec.type);
            ASSERT_EQ(id, rec.u.stack.id);
            ASSERT_EQ(2, rec.u.stack.nFrame);
            ASSERT_STREQ("vt_test_site_a", fn_of(&rec.u.stack.aFrame[0]));
            vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
        } else {
            ASSERT_EQ(id, id2);
            ASSERT_EQ(0, rec.type); /* already emitted */
        }
    }
    id2 = vt_test_site_b(s, 16, &rec);
    ASSERT(id2 >= 1);
    ASSERT_NE(id, id2);
    ASSERT_EQ(VT_HREC_STACK, rec.type);
    vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
    vt__sites_stats(s, &st);
    ASSERT_EQ(102, st.captures);
    ASSERT_EQ(2, st.stacks);
    ASSERT_EQ(2, st.emitted);
    ASSERT_EQ(0, st.undeduped);
    ASSERT_EQ(0, st.python);
    vt__sites_close(s);
}

/*
 * The innermost frame is the caller of vt__site_capture as a raw return
 * address (nothing resolved inside the capture); resolved (on the writer
 * thread, modres.h) it is named, with its module, build id and relative pc.
 */
TEST(raw_frames_resolved)
{
    struct vt__sites *s = vt__sites_open(NULL);
    struct vt_hrec rec;
    char zExe[PATH_MAX], zCmd[PATH_MAX + 128], zOut[512];
    const struct vt_frame *f;
    struct vt__modres *m = vt__modres_open(0);
    struct vt__modinfo *mi = NULL;
    const char *zFn = NULL;
    uint64_t rel = 0;
    FILE *pPipe;
    ASSERT(m != NULL);
    ASSERT(vt_test_site_a(s, 16, &rec) >= 1);
    ASSERT_EQ(VT_HREC_STACK, rec.type);
    f = &rec.u.stack.aFrame[0];
    exe_path(zExe, sizeof zExe);
    ASSERT_EQ(VT_FRAME_NATIVE, f->kind);
    ASSERT(f->zFunction == NULL && f->zModule == NULL && f->zFile == NULL);
    ASSERT_EQ(0, f->line);
    /* the absolute return address, inside vt_test_site_a's code */
    ASSERT(f->pc > (uint64_t)(uintptr_t)vt_test_site_a);
    ASSERT(f->pc < (uint64_t)(uintptr_t)vt_test_site_a + 256);
    ASSERT_EQ(1, vt__modres_resolve(m, f->pc, &rel, &zFn, &mi));
    ASSERT_STREQ("vt_test_site_a", zFn);
    ASSERT_STREQ(zExe, mi->zPath);
    ASSERT(strlen(mi->zBuildId) >= 16); /* gcc and ld give every image a GNU build id */
    ASSERT(mi->fileBytes > 0 && mi->mtimeNs > 0);
    /* the relative pc: inside vt_test_site_a's code once the load bias is added back */
    {
        Dl_info info;
        ASSERT(dladdr((void *)vt_test_site_a, &info));
        ASSERT((uint64_t)(uintptr_t)info.dli_fbase + rel == f->pc);
    }
    /* cached: the same answer again */
    {
        uint64_t rel2 = 0;
        const char *zFn2 = NULL;
        struct vt__modinfo *mi2 = NULL;
        ASSERT_EQ(1, vt__modres_resolve(m, f->pc, &rel2, &zFn2, &mi2));
        ASSERT(zFn2 == zFn && mi2 == mi && rel2 == rel);
    }
    /* an address no module holds */
    ASSERT_EQ(0, vt__modres_resolve(m, 0x10, &rel, &zFn, &mi));
    /* Offline symbolization as documented: addr2line on the module and pc - 1 gives file:line. */
    snprintf(zCmd, sizeof zCmd, "addr2line -f -e '%s' 0x%llx 2>/dev/null", zExe,
             (unsigned long long)(rel - 1));
    pPipe = popen(zCmd, "r");
    if (pPipe && fgets(zOut, sizeof zOut, pPipe)) {
        char zWant[64];
        ASSERT_CONTAINS(zOut, "vt_test_site_a");
        ASSERT(fgets(zOut, sizeof zOut, pPipe));
        snprintf(zWant, sizeof zWant, "test_stack.c:%d", siteALine);
        ASSERT_CONTAINS(zOut, zWant);
        pclose(pPipe);
    } else {
        if (pPipe) pclose(pPipe);
        fprintf(stderr, "  (addr2line not available: file:line check not run)\n");
    }
    /* The next frame is this test function's caller chain: in the same program. */
    ASSERT_STREQ(zExe, module_of(&rec.u.stack.aFrame[1]));
    vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
    vt__sites_close(s);
    vt__modres_close(m);
}

TEST(depth_bound)
{
    struct vt__sites *s = vt__sites_open(NULL);
    struct vt_hrec rec;
    int64_t id3, id16;
    id3 = vt_test_site_a(s, 3, &rec);
    ASSERT(id3 >= 1);
    ASSERT_EQ(3, rec.u.stack.nFrame);
    ASSERT_STREQ("vt_test_site_a", fn_of(&rec.u.stack.aFrame[0]));
    vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
    /* A deeper capture of the same site is a different stack. */
    id16 = vt_test_site_a(s, 16, &rec);
    ASSERT_NE(id3, id16);
    ASSERT(rec.u.stack.nFrame > 3 && rec.u.stack.nFrame <= 16);
    vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
    /* Depth 0 without Python: nothing captured, no stack. */
    ASSERT_EQ(0, vt_test_site_a(s, 0, &rec));
    ASSERT_EQ(0, rec.type);
    /* Depth above the bound is clipped. */
    ASSERT(vt__site_capture(s, 1000, 0, &rec) >= 1);
    ASSERT_EQ(VT_HREC_STACK, rec.type);
    ASSERT(rec.u.stack.nFrame >= 2 && rec.u.stack.nFrame <= VT_SITE_MAX_DEPTH);
    vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
    vt__sites_close(s);
}

/* A record the writer could not take is emitted again on the next capture of that site. */
TEST(lost_record_reemitted)
{
    struct vt__sites *s = vt__sites_open(NULL);
    struct vt_hrec aRec[4];
    struct vt_sites_stats st;
    int64_t aId[4];
    int i;
    for (i = 0; i < 4; i++) { /* one two-frame site */
        aId[i] = site_depth2(s, &aRec[i]);
        if (i == 0) {
            ASSERT_EQ(VT_HREC_STACK, aRec[0].type);
            vt__site_lost(s, &aRec[0]);
        }
    }
    ASSERT_EQ(aId[0], aId[1]);
    ASSERT_EQ(aId[0], aId[2]);
    ASSERT_EQ(VT_HREC_STACK, aRec[1].type); /* re-emitted ... */
    ASSERT_EQ(aId[0], aRec[1].u.stack.id);
    ASSERT_EQ(aRec[0].u.stack.hash, aRec[1].u.stack.hash);
    ASSERT_EQ(aRec[0].u.stack.nFrame, aRec[1].u.stack.nFrame);
    ASSERT_EQ(aRec[0].u.stack.aFrame[0].pc, aRec[1].u.stack.aFrame[0].pc);
    ASSERT_STREQ(fn_of(&aRec[0].u.stack.aFrame[0]), fn_of(&aRec[1].u.stack.aFrame[0]));
    ASSERT_EQ(0, aRec[2].type); /* ... only once */
    ASSERT_EQ(0, aRec[3].type);
    vt__frames_free(aRec[0].u.stack.aFrame, aRec[0].u.stack.nFrame);
    vt__frames_free(aRec[1].u.stack.aFrame, aRec[1].u.stack.nFrame);
    vt__sites_stats(s, &st);
    ASSERT_EQ(2, st.emitted);
    ASSERT_EQ(1, st.stacks);
    vt__sites_close(s);
}

/* Past max_stacks, sites are still captured and emitted, each with a fresh id, and counted. */
TEST(bounded_table)
{
    struct vt_sites_config cfg;
    struct vt__sites *s;
    struct vt_hrec rec;
    struct vt_sites_stats st;
    int64_t aId[5];
    int n, pass;
    vt__sites_config_default(&cfg);
    cfg.max_stacks = 3;
    s = vt__sites_open(&cfg);
    ASSERT(s);
    /* Recursion depth n: five distinct stacks, each captured twice. */
    for (pass = 0; pass < 2; pass++) {
        for (n = 0; n < 5; n++) {
            int64_t id = vt_test_site_rec(s, n, n + 1, &rec);
            if (pass == 0) {
                aId[n] = id;
                ASSERT_EQ(VT_HREC_STACK, rec.type);
                ASSERT_EQ(n + 1, rec.u.stack.nFrame);
                ASSERT_STREQ("vt_test_site_rec", fn_of(&rec.u.stack.aFrame[0]));
                ASSERT_STREQ("vt_test_site_rec", fn_of(&rec.u.stack.aFrame[n]));
                vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
            } else if (n < 3) { /* the first three are deduplicated */
                ASSERT_EQ(aId[n], id);
                ASSERT_EQ(0, rec.type);
            } else { /* the others are emitted again, under a new id */
                ASSERT_EQ(VT_HREC_STACK, rec.type);
                ASSERT(id > aId[4]);
                vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
            }
        }
    }
    vt__sites_stats(s, &st);
    ASSERT_EQ(3, st.stacks);
    ASSERT_EQ(4, st.undeduped);
    ASSERT_EQ(7, st.emitted);
    vt__sites_close(s);
}

/* Leading frames in a skipped module are dropped: skipping this program leaves libc's frames. */
TEST(skip_modules)
{
    struct vt_sites_config cfg;
    struct vt__sites *s;
    struct vt_hrec rec;
    char zExe[PATH_MAX];
    const char *azSkip[3];
    const char *zBase;
    int64_t aId[2];
    int i;
    static volatile int nRound = 2;
    exe_path(zExe, sizeof zExe);
    zBase = strrchr(zExe, '/') ? strrchr(zExe, '/') + 1 : zExe;
    azSkip[0] = "no-such-module";
    azSkip[1] = zBase;
    azSkip[2] = NULL;
    vt__sites_config_default(&cfg);
    cfg.azSkipModule = azSkip;
    s = vt__sites_open(&cfg);
    /* The first walk learns how many frames are skipped (walking again when it fell short);
     * the second uses that and must find the same site. One call location for both. */
    for (i = 0; i < nRound; i++) {
        aId[i] = vt_test_site_a(s, 4, &rec);
        ASSERT(aId[i] >= 1);
        if (i == 0) {
            ASSERT_EQ(VT_HREC_STACK, rec.type);
            ASSERT(rec.u.stack.nFrame >= 2);
            ASSERT_CONTAINS(module_of(&rec.u.stack.aFrame[0]), "libc.so");
            vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
        } else {
            ASSERT_EQ(0, rec.type);
        }
    }
    ASSERT_EQ(aId[0], aId[1]);
    vt__sites_close(s);
}

struct worker {
    struct vt__sites *s;
    int64_t id;
    int nEmit;
    int bad;
};

static void *worker_main(void *pArg)
{
    struct worker *w = pArg;
    int i;
    for (i = 0; i < 2000; i++) {
        struct vt_hrec rec;
        int64_t id = vt_test_site_b(w->s, 16, &rec);
        if (rec.type == VT_HREC_STACK) {
            w->nEmit++;
            vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
        }
        if (w->id == 0) w->id = id;
        else if (w->id != id) w->bad++;
    }
    return NULL;
}

/* Several threads capturing the same site at once: one id, emitted exactly once. */
TEST(threads_same_site)
{
    struct vt__sites *s = vt__sites_open(NULL);
    struct worker aw[4];
    pthread_t at[4];
    struct vt_sites_stats st;
    int k, nEmit = 0;
    for (k = 0; k < 4; k++) {
        memset(&aw[k], 0, sizeof aw[k]);
        aw[k].s = s;
        ASSERT_EQ(0, pthread_create(&at[k], NULL, worker_main, &aw[k]));
    }
    for (k = 0; k < 4; k++) {
        pthread_join(at[k], NULL);
        ASSERT_EQ(0, aw[k].bad);
        ASSERT(aw[k].id >= 1);
        ASSERT_EQ(aw[0].id, aw[k].id);
        nEmit += aw[k].nEmit;
    }
    ASSERT_EQ(1, nEmit);
    vt__sites_stats(s, &st);
    ASSERT_EQ(8000, st.captures);
    ASSERT_EQ(1, st.stacks);
    ASSERT_EQ(1, st.emitted);
    vt__sites_close(s);
}

/* No Python in this process: asking for Python frames changes nothing. */
TEST(python_absent)
{
    struct vt__sites *s = vt__sites_open(NULL);
    struct vt_hrec rec;
    struct vt_sites_stats st;
    ASSERT(vt__site_capture(s, 8, 1, &rec) >= 1);
    ASSERT_EQ(VT_HREC_STACK, rec.type);
    ASSERT_EQ(VT_FRAME_NATIVE, rec.u.stack.aFrame[0].kind);
    vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
    ASSERT_EQ(0, vt__site_capture(s, 0, 1, &rec));
    vt__sites_stats(s, &st);
    ASSERT_EQ(0, st.python);
    ASSERT_EQ(0, st.codes);
    vt__sites_close(s);
}

/* Around fork(): the child's table works (known sites stay known, new ones are added). */
TEST(fork_child_usable)
{
    struct vt__sites *s = vt__sites_open(NULL);
    struct vt_hrec rec;
    int64_t id;
    int status = -1;
    pid_t pid;
    id = site_depth2(s, &rec);
    ASSERT(id >= 1);
    ASSERT_EQ(VT_HREC_STACK, rec.type);
    ASSERT_EQ(2, rec.u.stack.nFrame);
    vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
    vt__sites_fork_prepare(s);
    pid = fork();
    if (pid == 0) {
        alarm(10); /* never outlive the test */
        vt__sites_fork_child(s);
        if (site_depth2(s, &rec) != id || rec.type != 0) _exit(1);
        if (vt_test_site_b(s, 8, &rec) <= id || rec.type != VT_HREC_STACK) _exit(2);
        vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
        _exit(0);
    }
    vt__sites_fork_parent(s);
    ASSERT(pid > 0);
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(0, WEXITSTATUS(status));
    ASSERT_EQ(id, site_depth2(s, &rec)); /* the parent's table is unchanged and usable */
    ASSERT_EQ(0, rec.type);
    vt__sites_close(s);
}

/* CPython loaded after the tracer started: noticed within VT_PY_RETRY captures; harmless before Py_Initialize. */
TEST(python_loaded_late)
{
#ifndef VT_TEST_LIBPYTHON
    SKIP("libpython not found at build time");
#else
    struct vt__sites *s;
    struct vt__pyframe aPy[4];
    struct vt_hrec rec;
    void *pLib;
    int i, bFound = 0;
    ASSERT_EQ(0, vt__py_resolve());
    pLib = dlopen(VT_TEST_LIBPYTHON, RTLD_NOW | RTLD_GLOBAL);
    if (!pLib) SKIP(dlerror());
    for (i = 1; i <= VT_PY_RETRY && !bFound; i++) bFound = vt__py_resolve();
    ASSERT(bFound);
    ASSERT(i > 2); /* not looked up again on every call */
    ASSERT_EQ(0, vt__py_holds_gil()); /* loaded, never initialized */
    ASSERT_EQ(0, vt__py_capture(aPy, 4));
    s = vt__sites_open(NULL);
    ASSERT(vt__site_capture(s, 2, 1, &rec) >= 1); /* Python asked for, none there */
    ASSERT_EQ(2, rec.u.stack.nFrame);
    ASSERT_EQ(VT_FRAME_NATIVE, rec.u.stack.aFrame[0].kind);
    vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
    vt__sites_close(s);
#endif
}

TEST(bad_config)
{
    struct vt_sites_config cfg;
    vt__sites_config_default(&cfg);
    cfg.max_stacks = 0;
    ASSERT(vt__sites_open(&cfg) == NULL);
    vt__sites_config_default(&cfg);
    cfg.py_depth = VT_SITE_MAX_PYDEPTH + 1;
    ASSERT(vt__sites_open(&cfg) == NULL);
    vt__sites_config_default(&cfg);
    cfg.cbSize = 8;
    ASSERT(vt__sites_open(&cfg) == NULL);
}

VT_TEST_LIST(T(dedup_same_site) T(raw_frames_resolved) T(depth_bound) T(lost_record_reemitted)
             T(bounded_table) T(skip_modules) T(threads_same_site) T(python_absent) T(fork_child_usable)
             T(python_loaded_late) T(bad_config))
