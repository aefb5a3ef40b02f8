/* Tests for the leak detector: planted leaks, a healthy training loop, a caching allocator. */
#include <sqlite3.h>
#include <string.h>

#include "report/report.h"
#include "tracegen.h"
#include "vt_test.h"

#define WEIGHTS 0x100000000LL
#define ACT 0x200000000LL
#define LEAK 0x300000000LL

/* Ten 10 ms training steps (NVTX "train_epoch" > "step"): 200 MiB of weights used every
 * step, 100 MiB of activations allocated and freed each step; with bLeak, 4 MiB per step
 * from one site kept forever (losses appended to a list); bLeak 2: the same with 2 GiB of activations. */
static void build_loop(const char *zPath, int bLeak)
{
    struct tg *g = tg_open(zPath);
    int64_t sW, sA, sL, k;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "model.py", 10, "__init__");
    sA = tg_stack(g, "model.py", 30, "forward");
    sL = tg_stack(g, "train.py", 88, "train_step");
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 200 * MiB, sW);
    tg_nvtx(g, 5 * MS, 106 * MS, "train_epoch");
    for (int i = 0; i < 10; i++) {
        int64_t t0 = 5 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        tg_alloc(g, t0 + 1 * MS, 0, 3, ACT, bLeak == 2 ? 2 * GiB : 100 * MiB, sA);
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "forward_gemm");
        tg_use(g, t0 + 2 * MS, k, WEIGHTS);
        tg_use(g, t0 + 2 * MS, k, ACT);
        if (bLeak) {
            tg_alloc(g, t0 + 3 * MS, 0, 3, LEAK + i * 0x1000000, 4 * MiB, sL);
            tg_use(g, t0 + 3 * MS, k, LEAK + i * 0x1000000);
        }
        tg_free(g, t0 + 8 * MS, 0, 3, ACT, bLeak == 2 ? 2 * GiB : 100 * MiB);
    }
    ASSERT_EQ(0, tg_close(g));
}

static int count_kind(const struct vt_result *r, const char *zKind, int minSev)
{
    int n = 0;
    for (int i = 0; i < r->nFind; i++)
        if ((!zKind || !strcmp(r->aFind[i].zKind, zKind)) && r->aFind[i].severity >= minSev) n++;
    return n;
}

static void run(const char *zPath, struct vt_result *r)
{
    struct vt_opts o;
    const char *az[1] = {zPath};
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, r));
}

TEST(leak_growth_and_never_freed_by_site)
{
    const char *zPath = tg_path("leak.db");
    struct vt_result r;
    build_loop(zPath, 1);
    run(zPath, &r);
    ASSERT_EQ(1, r.aTrace[0].ph.n);
    ASSERT_EQ(10, r.aTrace[0].ph.nIter);
    ASSERT_EQ(2, r.nFind);
    ASSERT_EQ(2, count_kind(&r, "leak", VT_SEV_HIGH));
    /* worst first: the 40 MiB never freed, then the 36 MiB growth */
    ASSERT_EQ(40 * MiB, r.aFind[0].bytes);
    ASSERT_EQ(10, r.aFind[0].count);
    ASSERT_STREQ("train.py:88 in train_step", r.aFind[0].zSite);
    ASSERT_CONTAINS(r.aFind[0].zTitle, "never freed");
    ASSERT_CONTAINS(r.aFind[0].zFix, ".item()");
    ASSERT_EQ(36 * MiB, r.aFind[1].bytes);
    ASSERT_CONTAINS(r.aFind[1].zTitle, "grows every iteration");
    /* 4 MiB per step; 16 GiB - 340 MiB = 16044 MiB free: 4011 more steps */
    ASSERT_CONTAINS(r.aFind[1].zEvidence, "That is 4.00 MiB per step; the 15.7 GiB still free on the device last about 4011 more steps.");
    ASSERT_STREQ("train.py:88 in train_step", r.aFind[1].zSite);
    vt__result_free(&r);
    ASSERT_EQ(2, tg_query(zPath, "SELECT count(*) FROM finding WHERE kind = 'leak' AND severity = 'high'"));
    ASSERT_EQ(1, tg_query(zPath, "SELECT count(*) FROM phase WHERE kind = 'training' AND source = 'nvtx' AND iteration = 10"));
    tg_cleanup();
}

/* The same 36 MiB growth beside 2 GiB of activations: under 64 MiB, 1.6 % of the peak: medium, not high. */
TEST(small_growth_on_a_larger_job_is_medium)
{
    const char *zPath = tg_path("leak_small.db");
    struct vt_result r;
    int nGrow = 0;
    build_loop(zPath, 2);
    run(zPath, &r);
    for (int i = 0; i < r.nFind; i++)
        if (strstr(r.aFind[i].zTitle, "grows every iteration")) {
            nGrow++;
            ASSERT_EQ(36 * MiB, r.aFind[i].bytes);
            ASSERT_EQ(VT_SEV_MEDIUM, r.aFind[i].severity);
        }
    ASSERT_EQ(1, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * CUPTI lent to the job's torch.profiler from step 4 to step 6: a free inside that window would
 * not be recorded, so allocations live through it are not called never freed (unknown, not
 * leaked); those made after it are. A note names the window.
 */
TEST(leak_not_judged_across_a_lent_window)
{
    const char *zPath = tg_path("lent.db");
    struct vt_result r;
    sqlite3 *db = NULL;
    char z[256];
    build_loop(zPath, 1);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    snprintf(z, sizeof z, "INSERT INTO meta VALUES('cupti_lend.1.client', 'torch.profiler'), ('cupti_lend.1.from_ns',"
             " '%lld'), ('cupti_lend.1.until_ns', '%lld')", (long long)(45 * MS), (long long)(65 * MS));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, z, NULL, NULL, NULL));
    sqlite3_close(db);
    run(zPath, &r);
    {
        const struct vt_finding *f = NULL;
        for (int i = 0; i < r.nFind; i++)
            if (!strcmp(r.aFind[i].zKind, "leak") && strstr(r.aFind[i].zTitle, "never freed")) f = &r.aFind[i];
        ASSERT(f != NULL);
        ASSERT_EQ(16 * MiB, f->bytes); /* steps 6 to 9 */
        ASSERT_EQ(4, f->count);
    }
    {
        int bNote = 0;
        for (int i = 0; i < r.aTrace[0].f.nNote; i++)
            bNote |= strstr(r.aTrace[0].f.azNote[i], "CUPTI was lent to torch.profiler") != NULL;
        ASSERT(bNote);
    }
    vt__result_free(&r);
}

TEST(healthy_training_loop_has_no_finding)
{
    const char *zPath = tg_path("healthy.db");
    struct vt_result r;
    build_loop(zPath, 0);
    run(zPath, &r);
    ASSERT_EQ(0, r.nFind);
    ASSERT_EQ(300 * MiB, r.aTrace[0].tl.aDev[0].peak);
    ASSERT_EQ(1, r.aTrace[0].lc.nLiveEnd); /* the weights, in use until the end: not a leak */
    vt__result_free(&r);
    tg_cleanup();
}

/* Caching-allocator segments (no --tensors): 2 MiB and 20 MiB blocks kept; with bGrow one
 * more 20 MiB segment every step. */
static void build_segments(const char *zPath, int bGrow)
{
    struct tg *g = tg_open(zPath);
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 2 * MiB, -1);
    tg_alloc(g, 2 * MS, 0, 3, WEIGHTS + 0x10000000, 20 * MiB, -1);
    tg_alloc(g, 3 * MS, 0, 3, WEIGHTS + 0x20000000, 40 * MiB, -1);
    for (int i = 0; i < 8; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "train_step");
        tg_kernel(g, t0 + 1 * MS, t0 + 2 * MS, "forward_gemm");
        if (bGrow) tg_alloc(g, t0 + 3 * MS, 0, 3, ACT + i * 0x10000000LL, 20 * MiB, -1);
    }
    ASSERT_EQ(0, tg_close(g));
}

TEST(caching_allocator_segments_are_not_a_leak)
{
    const char *zPath = tg_path("segments.db");
    struct vt_result r;
    build_segments(zPath, 0);
    run(zPath, &r);
    ASSERT_EQ(1, r.aTrace[0].f.bSegments);
    ASSERT_EQ(1, r.nFind);
    ASSERT_EQ(VT_SEV_INFO, r.aFind[0].severity);
    ASSERT_STREQ("leak", r.aFind[0].zKind);
    ASSERT_EQ(62 * MiB, r.aFind[0].bytes);
    ASSERT_CONTAINS(r.aFind[0].zFix, "allocation history");
    ASSERT_CONTAINS(r.aTrace[0].f.azNote[0], "segment level");
    vt__result_free(&r);
    tg_cleanup();
}

TEST(caching_allocator_growth_is_reported)
{
    const char *zPath = tg_path("segments_grow.db");
    struct vt_result r;
    build_segments(zPath, 1);
    run(zPath, &r);
    ASSERT_EQ(2, r.nFind);
    ASSERT_EQ(1, count_kind(&r, "leak", VT_SEV_MEDIUM)); /* growth; the cache itself stays info */
    ASSERT_EQ(1, count_kind(&r, "leak", VT_SEV_INFO) - count_kind(&r, "leak", VT_SEV_LOW));
    for (int i = 0; i < r.nFind; i++)
        if (r.aFind[i].severity >= VT_SEV_MEDIUM) {
            ASSERT_EQ(140 * MiB, r.aFind[i].bytes); /* 7 steps x 20 MiB after the first boundary */
            ASSERT_CONTAINS(r.aFind[i].zTitle, "caching-allocator segments");
        }
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * One training step and no more, without NVTX or kernels (as a PyTorch snapshot of one step
 * holds it, or a process traced for one step): weights, a forward pass's 24 activations, the
 * backward freeing them and making 24 gradients, then the optimizer's 48 moments made in one
 * burst at the end; the trace repeats nothing (one rise and fall). State made once, however
 * many slices of the run it spans: at a dump (a snapshot) no leak and no growth at low or above;
 * at the process's exit the gradients and moments, each made in a burst, are state too.
 */
static void one_step(int bSnapshot)
{
    const char *zPath = tg_path(bSnapshot ? "one_step_snap.db" : "one_step.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t ts = 1 * MS, sW, sA, sG, sM;
    ASSERT(g);
    if (bSnapshot) tg_meta(g, "source_format", "pytorch_snapshot");
    sW = tg_stack(g, "train.py", 20, "main");
    sA = tg_stack(g, "model.py", 40, "forward");
    sG = tg_stack(g, "train.py", 66, "train_step");
    sM = tg_stack(g, "optimizers.py", 82, "step");
    for (int i = 0; i < 24; i++, ts += MS) tg_alloc(g, ts, 0, 3, WEIGHTS + i * 0x1000000LL, 8 * MiB, sW);
    for (int i = 0; i < 24; i++, ts += MS) tg_alloc(g, ts, 0, 3, ACT + i * 0x4000000LL, 48 * MiB, sA);
    for (int i = 23; i >= 0; i--, ts += MS) {
        tg_alloc(g, ts, 0, 3, LEAK + i * 0x1000000LL, 8 * MiB, sG); /* its gradient */
        tg_free(g, ts + MS / 2, 0, 3, ACT + i * 0x4000000LL, 48 * MiB);
    }
    for (int i = 0; i < 48; i++, ts += MS / 2) tg_alloc(g, ts, 0, 3, LEAK + 0x40000000LL + i * 0x1000000LL, 8 * MiB, sM);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(0, r.aTrace[0].ph.nIter);
    ASSERT(r.aTrace[0].tl.aDev[0].nCycle < 3);
    if (bSnapshot) {
        ASSERT_EQ(0, count_kind(&r, "leak", VT_SEV_LOW));
        ASSERT_EQ(1, count_kind(&r, "leak", VT_SEV_INFO)); /* the state finding */
    }
    for (int i = 0; i < r.nFind; i++) ASSERT(!strstr(r.aFind[i].zTitle, "never freed"));
    vt__result_free(&r);
    tg_cleanup();
}

TEST(one_step_snapshot_is_state) { one_step(1); }
TEST(one_step_process_is_state) { one_step(0); }

/* A plain CUDA program: cudaMalloc in a loop, never freed, no kernels, no NVTX. */
TEST(plain_cuda_leak_without_phases)
{
    const char *zPath = tg_path("plain.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    for (int i = 0; i < 32; i++) tg_alloc(g, (1 + i) * MS, 0, 3, ACT + i * 0x1000000LL, 3 * MiB, -1);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(0, r.aTrace[0].f.bSegments); /* 3 MiB blocks are not the caching pattern */
    ASSERT_EQ(2, r.nFind);
    ASSERT_EQ(96 * MiB, r.aFind[0].bytes); /* never freed: 32 x 3 MiB, one size-class site */
    ASSERT_EQ(32, r.aFind[0].count);
    ASSERT_EQ(VT_SEV_HIGH, r.aFind[0].severity);
    ASSERT_CONTAINS(r.aFind[0].zSite, "site not recorded");
    /* 31 blocks live at the last slice end (32 ms, before that instant's allocation) minus
     * 10 at the end of the run's first 5/16 (10.7 ms) */
    ASSERT_EQ(63 * MiB, r.aFind[1].bytes);
    ASSERT_CONTAINS(r.aFind[1].zTitle, "Memory grows steadily");
    vt__result_free(&r);
    tg_cleanup();
}

/* The same loop ended by the out-of-memory error the job dies at (nothing after it; weights loaded
 * steadily over a short run look just the same): the trace ends mid-step, not at an exit, and does not
 * repeat, so no growth can be told from state made once; the OOM finding holds what was live. */
TEST(plain_cuda_loop_ended_at_oom_is_no_growth)
{
    const char *zPath = tg_path("plain_oom.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int nOom = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_device(g, 0, "Test GPU", 128 * MiB);
    for (int i = 0; i < 32; i++) tg_alloc(g, (1 + i) * MS, 0, 3, ACT + i * 0x1000000LL, 3 * MiB, -1);
    tg_oom(g, 33 * MS, 0, 64 * MiB, 20 * MiB, 128 * MiB, -1);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT(r.aTrace[0].crashTs >= 0);
    for (int i = 0; i < r.nFind; i++) {
        nOom += !strcmp(r.aFind[i].zKind, "oom");
        ASSERT(strcmp(r.aFind[i].zKind, "leak") != 0 || r.aFind[i].severity == VT_SEV_INFO);
    }
    ASSERT_EQ(1, nOom);
    vt__result_free(&r);
    tg_cleanup();
}

/* The 'leak' sample: 8 buffers of 3 MiB + 4096 i never freed and 4 of 5 MiB + 4096 j freed, all
 * from one native call site in main, each filled by one kernel. */
TEST(leak_sample_shape)
{
    const char *zPath = tg_path("leak_sample.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t ts = 1 * MS, k, s;
    sqlite3_stmt *p;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(g->db, "INSERT INTO stack(id, hash, depth) VALUES(77, 1, 2)", NULL, NULL, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(g->db, "INSERT INTO frame VALUES(77, 0, 0, 4198400, ?, NULL, NULL, ?),"
                                                   "(77, 1, 0, 140000000, ?, NULL, NULL, ?)", -1, &p, NULL));
    sqlite3_bind_int64(p, 1, tg_string(g, "main"));
    sqlite3_bind_int64(p, 2, tg_string(g, "/work/build/samples/cuda/leak"));
    sqlite3_bind_int64(p, 3, tg_string(g, "__libc_start_call_main"));
    sqlite3_bind_int64(p, 4, tg_string(g, "/lib/x86_64-linux-gnu/libc.so.6"));
    ASSERT_EQ(SQLITE_DONE, sqlite3_step(p));
    sqlite3_finalize(p);
    s = 77;
    for (int i = 0; i < 8; i++, ts += MS) {
        tg_alloc(g, ts, 0, 3, LEAK + i * 0x1000000LL, 3 * MiB + 4096 * i, s);
        k = tg_kernel(g, ts + 100, ts + 200, "vt_sample_fill(float*, unsigned long, float)");
        tg_use(g, ts + 100, k, LEAK + i * 0x1000000LL);
    }
    /* the CUDA runtime's own allocation: no correlation, no API, no site; never freed */
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(g->db, "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, "
                                             "correlation) VALUES(500000, 1, 3, 140000000000000, 2097152, 0, 0)",
                                      NULL, NULL, NULL));
    for (int j = 0; j < 4; j++, ts += MS) {
        tg_alloc(g, ts, 0, 3, ACT, 5 * MiB + 4096 * j, s);
        k = tg_kernel(g, ts + 100, ts + 200, "vt_sample_fill(float*, unsigned long, float)");
        tg_use(g, ts + 100, k, ACT);
        tg_free(g, ts + 500000, 0, 3, ACT, 5 * MiB + 4096 * j);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(0, r.aTrace[0].f.bSegments);
    ASSERT_EQ(1, r.nFind);
    ASSERT_STREQ("leak", r.aFind[0].zKind);
    ASSERT_EQ(8, r.aFind[0].count);
    ASSERT_EQ(25280512, r.aFind[0].bytes);
    ASSERT_STREQ("main (leak)", r.aFind[0].zSite);
    ASSERT_EQ(1, r.aTrace[0].lc.nInternalEnd);
    ASSERT_CONTAINS(r.aTrace[0].f.azNote[0], "1 allocation (2.00 MiB) made by the CUDA runtime or driver itself");
    vt__result_free(&r);
    /* without call sites the 8 sizes still make one finding */
    {
        sqlite3 *db = NULL;
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "UPDATE memory_event SET stack_id = NULL", NULL, NULL, NULL));
        sqlite3_close(db);
    }
    run(zPath, &r);
    ASSERT_EQ(1, r.nFind);
    ASSERT_EQ(8, r.aFind[0].count);
    ASSERT_EQ(25280512, r.aFind[0].bytes);
    ASSERT_CONTAINS(r.aFind[0].zSite, "site not recorded (8 allocation sizes)");
    ASSERT_CONTAINS(r.aFind[0].zSite, "VRAMTRACE_BACKTRACE");
    vt__result_free(&r);
    tg_cleanup();
}

/* NCCL's communication buffers (allocated from inside libnccl, reached by its kernels through
 * device-side structures) are not leaks; a leak next to them still is. */
TEST(nccl_buffers_are_not_leaks)
{
    const char *zPath = tg_path("nccl.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    sqlite3_stmt *p;
    int64_t k;
    ASSERT(g);
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(g->db, "INSERT INTO stack(id, hash, depth) VALUES(91, 5, 2)", NULL, NULL, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(g->db, "INSERT INTO frame VALUES(91, 0, 0, 4096, ?, NULL, NULL, ?),"
                                                   "(91, 1, 1, NULL, ?, ?, 12, NULL)", -1, &p, NULL));
    sqlite3_bind_int64(p, 1, tg_string(g, "ncclCommInitRank"));
    sqlite3_bind_int64(p, 2, tg_string(g, "/usr/lib/python3/site-packages/nvidia/nccl/lib/libnccl.so.2"));
    sqlite3_bind_int64(p, 3, tg_string(g, "init_process_group"));
    sqlite3_bind_int64(p, 4, tg_string(g, "train.py"));
    ASSERT_EQ(SQLITE_DONE, sqlite3_step(p));
    sqlite3_finalize(p);
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 400 * MiB, 91);
    tg_alloc(g, 2 * MS, 0, 3, LEAK, 64 * MiB, tg_stack(g, "train.py", 40, "step"));
    k = tg_kernel(g, 3 * MS, 4 * MS, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    tg_use(g, 3 * MS, k, LEAK);
    for (int i = 0; i < 20; i++) tg_kernel(g, (10 + i) * MS, (10 + i) * MS + 100, "gemm");
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(1, r.nFind);
    ASSERT_EQ(64 * MiB, r.aFind[0].bytes);
    ASSERT_STREQ("train.py:40 in step", r.aFind[0].zSite);
    ASSERT_CONTAINS(r.aTrace[0].f.azNote[r.aTrace[0].f.nNote - 1], "1 allocation (400 MiB) made inside NCCL is live at exit");
    vt__result_free(&r);
    tg_cleanup();
}

/* The baseline trend test: steady rise, staircase (segments reserved in big steps), warm-up. */
TEST(trend_shapes)
{
    int64_t rise;
    const int64_t steady[] = {10, 11, 12, 13, 14, 15, 16, 17};
    const int64_t stairs[] = {10, 10, 30, 30, 30, 50, 50, 50, 70, 70};
    const int64_t warmup[] = {10, 30, 50, 70, 70, 70, 70, 70, 70, 70};
    const int64_t flat[] = {10, -1, 10, 10, -1, 10};
    const int64_t sawtooth[] = {10, 40, 10, 40, 10, 40, 10, 40};
    ASSERT_EQ(1, vt__trend(steady, 8, 1, &rise));
    ASSERT_EQ(7, rise);
    ASSERT_EQ(0, vt__trend(steady, 8, 8, &rise)); /* below the minimum rise */
    ASSERT_EQ(1, vt__trend(stairs, 10, 1, &rise));
    ASSERT_EQ(60, rise);
    ASSERT_EQ(0, vt__trend(warmup, 10, 1, &rise));
    ASSERT_EQ(0, vt__trend(flat, 6, 1, &rise));
    ASSERT_EQ(0, vt__trend(sawtooth, 8, 1, &rise));
    /* one larger batch's segment beside a few small ones: a rise in each third, but one step carries most */
    const int64_t jump[] = {10, 10, 12, 12, 12, 100, 100, 100, 102, 102, 102, 104};
    ASSERT_EQ(0, vt__trend(jump, 12, 1, &rise));
    ASSERT_EQ(94, rise);
}

/* The loop of plain_cuda_leak_without_phases, whose kept buffers the program frees as it ends (a list
 * going out of scope when main() returns): the fall at the end is no sign that it did not grow. */
TEST(leak_released_at_the_end_still_grows)
{
    const char *zPath = tg_path("plain_end.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int nGrow = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    for (int i = 0; i < 32; i++) tg_alloc(g, (1 + i) * MS, 0, 3, ACT + i * 0x1000000LL, 3 * MiB, -1);
    for (int i = 0; i < 32; i++) tg_free(g, 33 * MS + i * 1000, 0, 3, ACT + i * 0x1000000LL, 3 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "leak") && strstr(r.aFind[i].zTitle, "grows steadily")) {
            nGrow++;
            ASSERT(r.aFind[i].bytes >= 48 * MiB);
            ASSERT(r.aFind[i].severity >= VT_SEV_MEDIUM);
        }
    ASSERT_EQ(1, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

/* A healthy run at segment level: 480 MiB reserved during warm-up, then fragmentation makes
 * the allocator add a 2 MiB segment now and then (a staircase, but small): no growth finding. */
TEST(segment_creep_is_not_growth)
{
    const char *zPath = tg_path("creep.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int nSeg = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    for (int i = 0; i < 24; i++) tg_alloc(g, (1 + i) * 1000, 0, 3, WEIGHTS + i * 0x10000000LL, 20 * MiB, -1);
    for (int i = 0; i < 30; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "train_step");
        tg_kernel(g, t0 + 1 * MS, t0 + 2 * MS, "gemm");
        if (i % 8 == 5) tg_alloc(g, t0 + 3 * MS, 0, 3, ACT + (nSeg++) * 0x1000000LL, 2 * MiB, -1);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(1, r.aTrace[0].f.bSegments);
    ASSERT_EQ(1, r.nFind); /* only the info about the cache */
    ASSERT_EQ(VT_SEV_INFO, r.aFind[0].severity);
    vt__result_free(&r);
    tg_cleanup();
}

/* The same run with one more segment of unknown time (the GPU reported none) from another site: the cache's info
 * finding counts it with the others, and its span still begins at the first segment of known time, never at an
 * unknown one (a site whose allocations have no time is left out of the span, not made its start). */
TEST(segment_span_skips_unknown_times)
{
    const char *zPath = tg_path("creep_untimed.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sW, sU, sA;
    int nSeg = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    sW = tg_stack(g, "model.py", 10, "__init__");
    sU = tg_stack(g, "loader.py", 20, "prefetch");
    sA = tg_stack(g, "model.py", 30, "forward");
    for (int i = 0; i < 24; i++) tg_alloc(g, (1 + i) * 1000, 0, 3, WEIGHTS + i * 0x10000000LL, 20 * MiB, sW);
    struct tg_memrow m = {TG_NULL, 1, 3, LEAK, 2 * MiB, 0, 1, 7, 999999, 1, 0,
                          TG_NULL, TG_NULL, TG_NULL, TG_NULL, TG_NULL, TG_NULL, 1, sU};
    tg_memory_row(g, &m);
    for (int i = 0; i < 30; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "train_step");
        tg_kernel(g, t0 + 1 * MS, t0 + 2 * MS, "gemm");
        if (i % 8 == 5) tg_alloc(g, t0 + 3 * MS, 0, 3, LEAK + (1 + nSeg++) * 0x1000000LL, 2 * MiB, sA);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(1, r.aTrace[0].f.bSegments);
    ASSERT_EQ(1, r.nFind);
    ASSERT_EQ(VT_SEV_INFO, r.aFind[0].severity);
    ASSERT_EQ(24 + 1 + nSeg, r.aFind[0].count);
    ASSERT_EQ((24 + nSeg) * 2 * MiB + 24 * 18 * MiB + 2 * MiB, r.aFind[0].bytes);
    ASSERT_EQ(r.aTrace[0].f.t0, r.aFind[0].firstTs); /* the first weight's segment, the trace's first event */
    vt__result_free(&r);
    tg_cleanup();
}

/* Twelve 10 ms steps without kernel uses (a snapshot's history): weights made once, Adam's state made at
 * the first step and replaced at every one, activations freed, and 4 MiB per step kept (train.py:88). */
TEST(state_without_uses_is_not_a_leak)
{
    const char *zPath = tg_path("state.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sW, sS, sA, sL;
    int nState = 0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "model.py", 10, "__init__");
    sS = tg_stack(g, "optimizer.py", 51, "step");
    sA = tg_stack(g, "model.py", 30, "forward");
    sL = tg_stack(g, "train.py", 88, "train_step");
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 200 * MiB, sW);
    for (int i = 0; i < 12; i++) {
        int64_t t0 = 5 * MS + i * 10 * MS;
        int64_t state = 0x500000000LL + (i % 2) * 0x10000000LL;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        tg_alloc(g, t0 + 1 * MS, 0, 3, ACT, 100 * MiB, sA);
        tg_alloc(g, t0 + 3 * MS, 0, 3, LEAK + i * 0x1000000, 4 * MiB, sL);
        tg_free(g, t0 + 7 * MS, 0, 3, ACT, 100 * MiB);
        tg_alloc(g, t0 + 8 * MS, 0, 3, state, 100 * MiB, sS); /* the new state, then the old one freed */
        if (i > 0) tg_free(g, t0 + 9 * MS, 0, 3, 0x500000000LL + ((i + 1) % 2) * 0x10000000LL, 100 * MiB);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(0, r.aTrace[0].f.bHaveKernelUses);
    for (int i = 0; i < r.nFind; i++) {
        const struct vt_finding *f = &r.aFind[i];
        if (f->severity >= VT_SEV_LOW) { /* only the kept losses are a leak */
            ASSERT_STREQ("leak", f->zKind);
            ASSERT_CONTAINS(f->zSite, "train.py:88");
        } else if (strstr(f->zTitle, "state")) {
            nState++;
            ASSERT_EQ(300 * MiB, f->bytes); /* the weights and the last state */
            ASSERT_CONTAINS(f->zEvidence, "optimizer.py:51");
            ASSERT_CONTAINS(f->zEvidence, "model.py:10");
            ASSERT_CONTAINS(f->zEvidence, "not known");
        }
    }
    ASSERT_EQ(1, nState);
    ASSERT(count_kind(&r, "leak", VT_SEV_MEDIUM) >= 1);
    vt__result_free(&r);
    tg_cleanup();
}

/* Segment level: 200 MiB of segments reserved at the first step (model.py:30), then one 20 MiB segment every
 * third step from train.py:66: no site grows in most steps, the baseline climbs as a staircase. */
TEST(segment_growth_names_its_site)
{
    const char *zPath = tg_path("seg_site.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sA, sL;
    int nFound = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sA = tg_stack(g, "model.py", 30, "forward");
    sL = tg_stack(g, "train.py", 66, "train_one_epoch");
    for (int i = 0; i < 12; i++) {
        int64_t t0 = 5 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        for (int k = 0; i == 0 && k < 10; k++) tg_alloc(g, t0 + 1 * MS, 0, 3, ACT + k * 0x2000000, 20 * MiB, sA);
        if (i % 3 == 2) tg_alloc(g, t0 + 2 * MS, 0, 3, LEAK + i * 0x2000000, 20 * MiB, sL);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(1, r.aTrace[0].f.bSegments);
    for (int i = 0; i < r.nFind; i++)
        if (r.aFind[i].severity >= VT_SEV_MEDIUM) {
            nFound++;
            ASSERT_CONTAINS(r.aFind[i].zTitle, "baseline rises");
            ASSERT_CONTAINS(r.aFind[i].zSite, "train.py:66 in train_one_epoch (attribution at segment level)");
            ASSERT_CONTAINS(r.aFind[i].zEvidence, "attribution at segment level");
        }
    ASSERT_EQ(1, nFound);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * An inference server (10 s, tensor level, kernel uses recorded): 14 GiB of weights, then a
 * key/value cache of 12 blocks of 2 GiB that grows with the load until 4.3 s (43 % of the run) and
 * is reused by every request to the end: each 100 ms request's decode kernel reads the weights and
 * two blocks, through blocks 0-3 only in the quiet last 1.5 s, and makes a 256 MiB temporary.
 * mode 1: the blocks are used only when made (a cache dropped and forgotten: a leak); mode 2: no
 * kernel is seen using them at all (a CUDA graph's pool: graph launches show no arguments); mode 3:
 * as mode 0 after 12 s of start-up with no kernel (the weights loaded from pageable memory); mode 4:
 * as mode 0 with the load growing more slowly, the last block made at 6.44 s (64 % into the run);
 * mode 5: as mode 4 with the blocks used only when made.
 */
static void build_server(const char *zPath, int mode)
{
    int bForgotten = mode == 1 || mode == 2 || mode == 5;
    int64_t off = mode == 3 ? 12000 * MS : 0, every = mode >= 4 ? 540 * MS : 345 * MS;
    struct tg *g = tg_open(zPath);
    int64_t sW, sK, sT, aBlock[12];
    int nBlock = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "H100", 80 * GiB);
    sW = tg_stack(g, "serve.py", 40, "load_model");
    sK = tg_stack(g, "serve.py", 88, "allocate_kv");
    sT = tg_stack(g, "model.py", 120, "Attention.forward");
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 14 * GiB, sW);
    for (int i = 0; i < 100; i++) {
        int64_t ts = off + 100 * MS + i * 100 * MS, k;
        int nUse = ts >= off + 8500 * MS ? 4 : nBlock;
        if (nBlock < 12 && ts >= off + 500 * MS + nBlock * every) { /* the load grows: one more block */
            aBlock[nBlock] = 0x1000000000LL + nBlock * 0x100000000LL;
            tg_alloc(g, ts + 1 * MS, 0, 3, aBlock[nBlock], 2 * GiB + 4096 * nBlock, sK);
            k = tg_kernel(g, ts + 2 * MS, ts + 3 * MS, "kv_fill_kernel");
            if (mode != 2) tg_use(g, ts + 2 * MS, k, aBlock[nBlock]);
            nBlock++;
            nUse = nBlock;
        }
        tg_alloc(g, ts + 5 * MS, 0, 3, ACT, 256 * MiB + 4096, sT);
        k = tg_kernel(g, ts + 6 * MS, ts + 20 * MS, "decode_attention_kernel");
        tg_use(g, ts + 6 * MS, k, WEIGHTS);
        tg_use(g, ts + 6 * MS, k, ACT);
        if (!bForgotten && nUse > 0) {
            tg_use(g, ts + 6 * MS, k, aBlock[i % nUse]);
            tg_use(g, ts + 6 * MS, k, aBlock[(i + 1) % nUse]);
        }
        tg_free(g, ts + 30 * MS, 0, 3, ACT, 256 * MiB + 4096);
    }
    ASSERT_EQ(0, tg_close(g));
}

TEST(capped_cache_reused_is_state)
{
    const char *zPath = tg_path("server.db");
    struct vt_result r;
    const struct vt_finding *f = NULL;
    build_server(zPath, 0);
    run(zPath, &r);
    /* nothing at low or above: the cache is state, said in one info finding */
    ASSERT_EQ(0, count_kind(&r, NULL, VT_SEV_LOW));
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "leak")) f = &r.aFind[i];
    ASSERT(f);
    ASSERT_EQ(VT_SEV_INFO, f->severity);
    ASSERT_CONTAINS(f->zTitle, "24.0 GiB live at exit that did not accumulate: state (caches kept by design, weights)");
    ASSERT_CONTAINS(f->zEvidence, "Of it, 24.0 GiB is a cache kept by design: it stopped growing early (the largest, "
                                  "from serve.py:88 in allocate_kv, at 4.30 s, 43% into the run) and its memory was "
                                  "still used to the end");
    vt__result_free(&r);

    /* the look-alike: the same blocks, never used after they were made, are a leak */
    zPath = tg_path("forgotten.db");
    build_server(zPath, 1);
    run(zPath, &r);
    f = NULL;
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "leak") && r.aFind[i].severity == VT_SEV_HIGH) f = &r.aFind[i];
    ASSERT(f);
    ASSERT_STREQ("serve.py:88 in allocate_kv", f->zSite);
    ASSERT_CONTAINS(f->zTitle, "never freed: 12 allocations still live at exit");
    vt__result_free(&r);

    /* a CUDA graph's pool: made early, its uses invisible: state */
    zPath = tg_path("graphpool.db");
    build_server(zPath, 2);
    run(zPath, &r);
    ASSERT_EQ(0, count_kind(&r, NULL, VT_SEV_LOW));
    f = NULL;
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "leak")) f = &r.aFind[i];
    ASSERT(f);
    ASSERT_CONTAINS(f->zEvidence, "43% into the run) and no kernel was seen using it");
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * The same server after 12 s of start-up with no kernel (weights loaded slowly): the cache stopped growing
 * at 74 % of the whole trace but at 43 % of the run from its first kernel. Start-up says nothing of how
 * early a cache filled: state, no finding at low or above (it was a HIGH "never freed").
 */
TEST(capped_cache_after_a_long_start_up_is_state)
{
    const char *zPath = tg_path("server_slow_load.db");
    struct vt_result r;
    build_server(zPath, 3);
    run(zPath, &r);
    ASSERT_EQ(0, count_kind(&r, NULL, VT_SEV_LOW));
    ASSERT_EQ(1, count_kind(&r, "leak", VT_SEV_INFO));
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * The server whose load grows more slowly: its cache reached its size at 64 % of the run, with 36 % left
 * (under the 40 % that a cache's early stop asks for), but every block was used again well after the last
 * was made (the requests rotate through all 12 until the quiet end): reuse seen, state (it was a HIGH
 * "never freed"). The control: the same blocks used only when made stay a leak.
 */
static void cache_reused_late(int bForgotten)
{
    const char *zPath = tg_path("server_late.db");
    struct vt_result r;
    build_server(zPath, bForgotten ? 5 : 4);
    run(zPath, &r);
    if (bForgotten) {
        const struct vt_finding *f = NULL;
        for (int i = 0; i < r.nFind; i++)
            if (!strcmp(r.aFind[i].zKind, "leak") && r.aFind[i].severity == VT_SEV_HIGH) f = &r.aFind[i];
        ASSERT(f);
        ASSERT_STREQ("serve.py:88 in allocate_kv", f->zSite);
    } else {
        ASSERT_EQ(0, count_kind(&r, NULL, VT_SEV_LOW));
        ASSERT_EQ(1, count_kind(&r, "leak", VT_SEV_INFO));
    }
    vt__result_free(&r);
    tg_cleanup();
}

TEST(capped_cache_reused_after_a_late_stop_is_state) { cache_reused_late(0); }
TEST(late_cache_never_reused_is_a_leak) { cache_reused_late(1); }

/*
 * PyTorch's history merged: kernel arguments name the caching allocator's segments, not the blocks inside
 * them. Two weight blocks of one site in one segment, the second (not at the segment's base) made at the
 * end of a 2 s load, then ten steps whose kernels use the segment: the second block may have been used to
 * the end as much as the first. It is not "never freed, not used late" (its own address is named by no
 * kernel: it was a HIGH finding beside the first block, which is named).
 */
TEST(history_blocks_used_through_their_segment_are_in_use)
{
    const char *zPath = tg_path("history_weights.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sW, sA, k, segA = WEIGHTS, segB = ACT;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "model.py", 10, "__init__");
    sA = tg_stack(g, "model.py", 30, "forward");
    tg_alloc(g, 1 * MS, 0, 3, segA, 1 * GiB, -1);
    tg_kernel(g, 1 * MS, 2 * MS, "init_kernel");
    tg_block(g, 2 * MS, 1, segA, 100 * MiB, sW);
    tg_block(g, 2000 * MS, 1, segA + 512 * MiB, 200 * MiB, sW);
    tg_alloc(g, 2001 * MS, 0, 3, segB, 512 * MiB, -1);
    tg_nvtx(g, 2100 * MS, 3100 * MS, "train");
    for (int i = 0; i < 10; i++) {
        int64_t t0 = 2100 * MS + i * 100 * MS;
        tg_nvtx(g, t0, t0 + 100 * MS, "step");
        tg_block(g, t0 + 1 * MS, 1, segB, 100 * MiB, sA);
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "forward_gemm");
        tg_use(g, t0 + 2 * MS, k, segA);
        tg_use(g, t0 + 2 * MS, k, segB);
        tg_block(g, t0 + 80 * MS, 2, segB, 100 * MiB, -1);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(0, r.aTrace[0].f.bSegments);
    ASSERT_EQ(0, count_kind(&r, "leak", VT_SEV_LOW));
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * Tensor level, 11 steps (NVTX): a cache that adds a 100 MiB block in each of the first 7 steps and is
 * used by every step to the end, flat for the last 4 of the 10 steps between boundaries. It rose in 6 of
 * 10 (the growth test's 60 %), but it stopped early: a cache that reached its size, no growth (it was a
 * HIGH "grows every iteration"). The control: the same rises spread to the last step grow.
 */
static void cache_stops(int bStops)
{
    const char *zPath = tg_path(bStops ? "cache_stops.db" : "cache_late.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sW, sC, k;
    int nGrow = 0, nBlock = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "model.py", 10, "__init__");
    sC = tg_stack(g, "cache.py", 20, "Cache.grow");
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 200 * MiB, sW);
    tg_nvtx(g, 5 * MS, 115 * MS, "train");
    for (int i = 0; i < 11; i++) {
        int64_t t0 = 5 * MS + i * 10 * MS;
        int bAdd = bStops ? i < 7 : (i < 2 || i % 2 == 0 || i == 10);
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        if (bAdd) tg_alloc(g, t0 + 1 * MS, 0, 3, LEAK + (nBlock++) * 0x10000000LL, 100 * MiB, sC);
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "forward_gemm");
        tg_use(g, t0 + 2 * MS, k, WEIGHTS);
        for (int b = 0; b < nBlock; b++) tg_use(g, t0 + 2 * MS, k, LEAK + b * 0x10000000LL);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(11, r.aTrace[0].ph.nIter);
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "leak") && r.aFind[i].severity >= VT_SEV_LOW) {
            nGrow++;
            ASSERT_CONTAINS(r.aFind[i].zTitle, "grows every iteration");
            ASSERT_STREQ("cache.py:20 in Cache.grow", r.aFind[i].zSite);
        }
    ASSERT_EQ(bStops ? 0 : 1, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(cache_that_stopped_growing_early_is_no_growth) { cache_stops(1); }
TEST(cache_growing_to_the_end_grows) { cache_stops(0); }

/* The autograd engine's thread in a backward pass: native frames only. */
static const struct tg_frame aBwd[] = {
    {VT_FRAME_NATIVE, 0x1000, "torch::autograd::generated::ConvolutionBackward0::apply", NULL, "libtorch_cpu.so", 0},
    {VT_FRAME_NATIVE, 0x2000, "torch::autograd::Engine::thread_main", NULL, "libtorch_cpu.so", 0}};

/*
 * Segment level, 12 steps (NVTX): the line that keeps every step's outputs (train.py:77) takes the
 * cache's free blocks and reserves a 20 MiB segment each step, so the backward pass (the autograd
 * engine's thread, native frames only) finds none and reserves a 20 MiB segment each step too: one
 * growth, one finding at the program's line, the backward pass's share said in it.
 */
TEST(segment_growth_at_two_sites_is_one_finding)
{
    const char *zPath = tg_path("seg2.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sW, sK, sB;
    int nGrow = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_device(g, 0, "Test GPU", 80 * GiB);
    sW = tg_stack(g, "train.py", 40, "main");
    sK = tg_stack(g, "train.py", 77, "train_one_epoch");
    sB = tg_stack_frames(g, aBwd, 2, 77);
    for (int i = 0; i < 20; i++) tg_alloc(g, 1 * MS + i * 1000, 0, 3, WEIGHTS + i * 0x4000000LL, 20 * MiB, sW);
    for (int i = 0; i < 12; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        tg_alloc(g, t0 + 2 * MS, 0, 3, LEAK + i * 0x4000000LL, 20 * MiB, sK);
        tg_alloc(g, t0 + 5 * MS, 0, 3, ACT + i * 0x4000000LL, 20 * MiB, sB);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT(r.aTrace[0].f.bSegments);
    for (int i = 0; i < r.nFind; i++) {
        const struct vt_finding *f = &r.aFind[i];
        if (strcmp(f->zKind, "leak") || f->severity < VT_SEV_LOW) continue;
        nGrow++;
        ASSERT_STREQ("train.py:77 in train_one_epoch", f->zSite);
        ASSERT_EQ(2 * 11 * 20 * MiB, f->bytes);
        ASSERT_CONTAINS(f->zTitle, "Memory grows every iteration: +440 MiB over 11 iterations");
        ASSERT_CONTAINS(f->zEvidence, "The same growth shows at 1 other site over the same iterations");
        ASSERT_CONTAINS(f->zEvidence, "+220 MiB at ConvolutionBackward0 (backward pass");
    }
    ASSERT_EQ(1, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * Segment level, 48 steps (NVTX) beside 4 GiB of segments reserved at start: shape 0, a slow leak of
 * 1 MiB a step (train.py:79) reserving a 2 MiB small-pool segment every other step; shape 1, the
 * backward pass (native frames) reserving 400 MiB at the second step (warm-up) and then, once kept
 * tensors have filled the cache, a 20 MiB segment every fourth step of the second half; shape 2, a
 * cache reserving a 20 MiB segment for each new longest batch, ever more rarely (steps 13, 15, 18, 22,
 * 28, 36, 46). A site rising in fewer than 60 % of the steps still grows when it climbs as a staircase
 * to the end (shapes 0 and 1: one growth finding at its site); a staircase whose steps come ever more
 * rarely is a cache's record lengths (shape 2: none). The rises stay under 5 % of the peak, so the
 * device baseline's test does not see them.
 */
static void segment_staircase(int shape)
{
    const char *zPath = tg_path("staircase.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    static const int aRecord[] = {13, 15, 18, 22, 28, 36, 46};
    int64_t sW, sS;
    int nGrow = 0, nSeg = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_device(g, 0, "Test GPU", 80 * GiB);
    sW = tg_stack(g, "train.py", 40, "main");
    sS = shape == 0 ? tg_stack(g, "train.py", 79, "train_one_epoch")
         : shape == 1 ? tg_stack_frames(g, aBwd, 2, 77)
                      : tg_stack(g, "model.py", 61, "Attention.forward");
    for (int i = 0; i < 200; i++) tg_alloc(g, 1 * MS + i * 1000, 0, 3, WEIGHTS + i * 0x4000000LL, 20 * MiB, sW);
    for (int i = 0; i < 48; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS, a = LEAK + (nSeg++) * 0x4000000LL;
        int bRecord = 0;
        for (int k = 0; k < 7; k++) bRecord |= aRecord[k] == i;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        tg_kernel(g, t0 + 1 * MS, t0 + 2 * MS, "gemm");
        if (shape == 0 && i % 2 == 1) tg_alloc(g, t0 + 3 * MS, 0, 3, a, 2 * MiB, sS);
        if (shape == 1 && (i == 1 || (i >= 24 && i % 4 == 0))) tg_alloc(g, t0 + 3 * MS, 0, 3, a, i == 1 ? 400 * MiB : 20 * MiB, sS);
        if (shape == 2 && bRecord) tg_alloc(g, t0 + 3 * MS, 0, 3, a, 20 * MiB, sS);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT(r.aTrace[0].f.bSegments);
    ASSERT_EQ(48, r.aTrace[0].ph.nIter);
    for (int i = 0; i < r.nFind; i++) {
        const struct vt_finding *f = &r.aFind[i];
        if (strcmp(f->zKind, "leak") || f->severity < VT_SEV_LOW) continue;
        nGrow++;
        ASSERT_CONTAINS(f->zTitle, "Memory grows every iteration");
        ASSERT_CONTAINS(f->zSite, shape == 0 ? "train.py:79 in train_one_epoch" : "ConvolutionBackward0");
    }
    ASSERT_EQ(shape == 2 ? 0 : 1, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * Tensor level, 48 iterations (NVTX) that are micro-batches, 4 to an optimizer step, beside 4 GiB of weights:
 * each makes and frees 1 GiB of activations; a 200 MiB buffer is held from iteration 20 to 24 (so the device
 * baseline rises and falls back: no trend there). Shape 0: the loop keeps 8 MiB of losses at each optimizer
 * step (train.py:79, every fourth iteration), a rise at 25 % of the boundaries, under the growth test's 60 %:
 * a staircase kept to the end, one growth finding (it was none). Shape 1, the control: the site gathers 8 MiB
 * at three iterations of four and frees it all at the fourth: it climbs and falls back, no growth.
 */
static void tensor_staircase(int shape)
{
    const char *zPath = tg_path("tstair.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sW, sA, sB, sL;
    int nGrow = 0, nKept = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 80 * GiB);
    sW = tg_stack(g, "train.py", 40, "main");
    sA = tg_stack(g, "model.py", 30, "forward");
    sB = tg_stack(g, "train.py", 90, "log_batch");
    sL = tg_stack(g, "train.py", 79, "train_one_epoch");
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 4 * GiB, sW);
    for (int i = 0; i < 48; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        tg_kernel(g, t0 + 1 * MS, t0 + 2 * MS, "gemm");
        tg_alloc(g, t0 + 1 * MS, 0, 3, ACT, 1 * GiB, sA);
        tg_free(g, t0 + 6 * MS, 0, 3, ACT, 1 * GiB);
        if (i == 20) tg_alloc(g, t0 + 3 * MS, 0, 3, ACT + 0x80000000LL, 200 * MiB, sB);
        if (i == 24) tg_free(g, t0 + 3 * MS, 0, 3, ACT + 0x80000000LL, 200 * MiB);
        if (shape == 0 && i % 4 == 3) tg_alloc(g, t0 + 7 * MS, 0, 3, LEAK + (nKept++) * 0x1000000LL, 8 * MiB, sL);
        if (shape == 1 && i % 4 != 3) tg_alloc(g, t0 + 7 * MS, 0, 3, LEAK + (nKept++) * 0x1000000LL, 8 * MiB, sL);
        if (shape == 1 && i % 4 == 3)
            while (nKept > 0) tg_free(g, t0 + 7 * MS, 0, 3, LEAK + (--nKept) * 0x1000000LL, 8 * MiB);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(48, r.aTrace[0].ph.nIter);
    for (int i = 0; i < r.nFind; i++) {
        const struct vt_finding *f = &r.aFind[i];
        if (strcmp(f->zKind, "leak") || f->severity < VT_SEV_LOW || !strstr(f->zTitle, "grows")) continue;
        nGrow++;
        ASSERT_STREQ("train.py:79 in train_one_epoch", f->zSite);
    }
    ASSERT_EQ(shape == 0 ? 1 : 0, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(tensor_staircase_of_losses_kept_each_step_grows) { tensor_staircase(0); }
TEST(tensor_staircase_filled_and_freed_is_no_growth) { tensor_staircase(1); }

TEST(segment_staircase_of_a_slow_leak_grows) { segment_staircase(0); }
TEST(segment_staircase_after_the_cache_filled_grows) { segment_staircase(1); }
TEST(segment_staircase_ever_rarer_is_no_growth) { segment_staircase(2); }

/*
 * A PyTorch snapshot's history with no range marking steps (no kernels either): one 2 GiB segment,
 * 512 MiB of weights allocated before the history began (a block live at the dump, its time
 * unknown), then 5 steps whose 4 activations of 100 MiB rise and fall. Its tensor memory's own
 * cycles are its iterations (5), not "rose and fell 0 times" (the segment never moves).
 */
TEST(snapshot_cycles_are_iterations)
{
    const char *zPath = tg_path("cycles.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    char zSql[256];
    int64_t sW, sA;
    int nState = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_meta(g, "source_format", "pytorch_snapshot");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "model.py", 10, "__init__");
    sA = tg_stack(g, "model.py", 30, "forward");
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 2 * GiB, -1);
    snprintf(zSql, sizeof zSql, "INSERT INTO tensor_event(t, op, device, address, bytes, stack_id, source) "
             "VALUES(NULL, 1, 0, %lld, %lld, %lld, 1)", (long long)WEIGHTS, (long long)(512 * MiB), (long long)sW);
    tg_exec(g, zSql);
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 4; k++) {
            int64_t a = ACT + k * 0x8000000LL, t0 = 10 * MS + i * 20 * MS;
            snprintf(zSql, sizeof zSql, "INSERT INTO tensor_event(t, op, device, address, bytes, stack_id, source) "
                     "VALUES(%lld, 1, 0, %lld, %lld, %lld, 1)", (long long)(t0 + k * MS), (long long)a, (long long)(100 * MiB),
                     (long long)sA);
            tg_exec(g, zSql);
            snprintf(zSql, sizeof zSql, "INSERT INTO tensor_event(t, op, device, address, bytes, stack_id, source) "
                     "VALUES(%lld, 2, 0, %lld, %lld, NULL, 1)", (long long)(t0 + 15 * MS + k * MS), (long long)a,
                     (long long)(100 * MiB));
            tg_exec(g, zSql);
        }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT(r.aTrace[0].f.bHaveTensors);
    ASSERT(r.aTrace[0].ph.bCycleIter);
    ASSERT_EQ(5, r.aTrace[0].ph.nIter);
    ASSERT_EQ(0, count_kind(&r, NULL, VT_SEV_LOW));
    for (int i = 0; i < r.nFind; i++) {
        ASSERT(!strstr(r.aFind[i].zEvidence, "rose and fell 0 times"));
        nState += !strcmp(r.aFind[i].zKind, "leak");
    }
    ASSERT_EQ(1, nState);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * Tensor level, kernel uses recorded: 10 training steps (NVTX) each make 4 gradients of 64 MiB from the
 * backward pass (zero_grad(set_to_none=True) frees them at the next step), then an evaluation of 4
 * batches uses only the weights, and the process exits without freeing. The last step's gradients are
 * live at exit, unused in the last iteration: the site freed the 36 it made before, and what is live
 * was made in one step: the last step's memory, state, not "never freed".
 */
TEST(last_step_held_to_exit_is_state)
{
    const char *zPath = tg_path("laststep.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sW, sG, k;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "train.py", 40, "main");
    sG = tg_stack(g, "train.py", 69, "train_one_epoch");
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 256 * MiB, sW);
    tg_nvtx(g, 5 * MS, 105 * MS, "train");
    for (int i = 0; i < 10; i++) {
        int64_t t0 = 5 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "train_step");
        for (int p = 0; p < 4; p++) {
            if (i > 0) tg_free(g, t0 + 1 * MS, 0, 3, ACT + ((i - 1) % 2) * 0x40000000LL + p * 0x8000000LL, 64 * MiB);
            tg_alloc(g, t0 + 5 * MS, 0, 3, ACT + (i % 2) * 0x40000000LL + p * 0x8000000LL, 64 * MiB, sG);
        }
        k = tg_kernel(g, t0 + 6 * MS, t0 + 7 * MS, "sgemm_backward");
        tg_use(g, t0 + 6 * MS, k, WEIGHTS);
        for (int p = 0; p < 4; p++) tg_use(g, t0 + 6 * MS, k, ACT + (i % 2) * 0x40000000LL + p * 0x8000000LL);
    }
    tg_nvtx(g, 110 * MS, 150 * MS, "validation");
    for (int b = 0; b < 4; b++) {
        int64_t t0 = 110 * MS + b * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "val_step");
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "sgemm");
        tg_use(g, t0 + 2 * MS, k, WEIGHTS);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(5, r.aTrace[0].lc.nLiveEnd); /* the weights and the last step's 4 gradients */
    ASSERT_EQ(0, count_kind(&r, "leak", VT_SEV_LOW));
    vt__result_free(&r);
    tg_cleanup();
}

/* Twelve 10 ms training steps, each holding one batch of its own length (100 MiB + 20 MiB per step, lengths
 * rising) for the whole step: made as the step starts, the previous step's dropped at the same moment, from two
 * alternating lines (a double-buffered loader) so that no line grows on its own. Each step's lowest is its own
 * batch, so the baseline rises by 200 MiB, yet nothing made after the first point and held at the last explains
 * it: the level the last points stood at, not memory kept. No leak (it was a "baseline rises, no single site"). */
TEST(baseline_of_longer_batches_is_no_growth)
{
    const char *zPath = tg_path("longer.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t aS[2], k;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    aS[0] = tg_stack(g, "data.py", 30, "next_even");
    aS[1] = tg_stack(g, "data.py", 31, "next_odd");
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 256 * MiB, tg_stack(g, "train.py", 40, "main"));
    tg_nvtx(g, 5 * MS, 125 * MS, "train");
    for (int i = 0; i < 12; i++) {
        int64_t t0 = 5 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "train_step");
        tg_alloc(g, t0, 0, 3, ACT + (i % 2) * 0x40000000LL, (100 + 20 * i) * MiB, aS[i % 2]);
        if (i > 0) tg_free(g, t0, 0, 3, ACT + ((i - 1) % 2) * 0x40000000LL, (100 + 20 * (i - 1)) * MiB);
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "sgemm");
        tg_use(g, t0 + 2 * MS, k, WEIGHTS);
        tg_use(g, t0 + 2 * MS, k, ACT + (i % 2) * 0x40000000LL);
    }
    tg_free(g, 126 * MS, 0, 3, ACT + 0x40000000LL, 320 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(12, r.aTrace[0].ph.nIter);
    ASSERT_EQ(0, count_kind(&r, "leak", VT_SEV_LOW));
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * A server killed while it kept every request's key/value cache in a dict (bAccum): 16 caches of 512 MiB
 * made over the run, each used only during its request. Held while more was made, they grew whether or
 * not an exit would have freed them: the never-freed finding keeps its severity (high) though the trace
 * was not closed cleanly. Control (!bAccum): the same 8 GiB made in one burst by the last request and live
 * at the kill, which the process may have freed had it exited: capped at low.
 */
static void killed_server(int bAccum)
{
    const char *zPath = tg_path("killed.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sK, sT;
    int nNever = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_meta(g, "closed_cleanly", "0");
    tg_device(g, 0, "H100", 80 * GiB);
    sK = tg_stack(g, "serve.py", 64, "generate");
    sT = tg_stack(g, "model.py", 121, "Block.forward");
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 4 * GiB, tg_stack(g, "serve.py", 40, "load"));
    for (int i = 0; i < 16; i++) {
        int64_t ts = 10 * MS + i * 100 * MS, k;
        if (bAccum) tg_alloc(g, ts, 0, 3, LEAK + i * 0x40000000LL, 512 * MiB, sK);
        else if (i == 15)
            for (int b = 0; b < 16; b++) tg_alloc(g, ts + b * 1000, 0, 3, LEAK + b * 0x40000000LL, 512 * MiB, sK);
        tg_alloc(g, ts + 1 * MS, 0, 3, ACT, 256 * MiB, sT);
        k = tg_kernel(g, ts + 2 * MS, ts + 20 * MS, "decode_attention_kernel");
        tg_use(g, ts + 2 * MS, k, WEIGHTS);
        tg_use(g, ts + 2 * MS, k, ACT);
        if (bAccum) tg_use(g, ts + 2 * MS, k, LEAK + i * 0x40000000LL);
        tg_free(g, ts + 30 * MS, 0, 3, ACT, 256 * MiB);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(0, r.aTrace[0].f.bCleanClose);
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "leak") && strstr(r.aFind[i].zTitle, "never freed")) {
            nNever++;
            ASSERT_CONTAINS(r.aFind[i].zSite, "serve.py:64");
            ASSERT_EQ(8 * GiB, r.aFind[i].bytes);
            ASSERT_EQ(bAccum ? VT_SEV_HIGH : VT_SEV_LOW, r.aFind[i].severity);
        }
    ASSERT_EQ(1, nNever);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(killed_process_that_accumulated_keeps_its_severity) { killed_server(1); }
TEST(killed_process_live_from_one_burst_is_capped) { killed_server(0); }

/*
 * A server without phases keeping every request's cache (bKeep) in a dict that the program frees as it
 * exits: 8 requests in 8 of the 16 sixteenths of the run (idle between them), each with 256 to 384 MiB of
 * cache and 1 GiB of activations. The site rises at too few boundaries for its own test and the lowest
 * point of the last sixteenth is the exit's 0; up to its highest point the baseline rises: a growth
 * finding at the cache's line. Control (!bKeep): every cache freed with
 * its request: no growth.
 */
static void server_freed_at_exit(int bKeep)
{
    static const int aSlice[] = {0, 2, 3, 5, 8, 9, 11, 14};
    const char *zPath = tg_path("exit.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sK, sT;
    int nGrow = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "H100", 80 * GiB);
    sK = tg_stack(g, "serve.py", 64, "generate");
    sT = tg_stack(g, "model.py", 121, "Block.forward");
    tg_alloc(g, 0, 0, 3, WEIGHTS, 4 * GiB, tg_stack(g, "serve.py", 40, "load"));
    for (int i = 0; i < 8; i++) {
        int64_t ts = aSlice[i] * 100 * MS + 10 * MS, k;
        tg_alloc(g, ts, 0, 3, LEAK + i * 0x40000000LL, (256 + 64 * (i % 3)) * MiB, sK);
        tg_alloc(g, ts + 1 * MS, 0, 3, ACT, GiB, sT);
        k = tg_kernel(g, ts + 2 * MS, ts + 20 * MS, "decode_attention_kernel");
        tg_use(g, ts + 2 * MS, k, WEIGHTS);
        tg_use(g, ts + 2 * MS, k, ACT);
        tg_use(g, ts + 2 * MS, k, LEAK + i * 0x40000000LL);
        tg_free(g, ts + 30 * MS, 0, 3, ACT, GiB);
        if (!bKeep) tg_free(g, ts + 31 * MS, 0, 3, LEAK + i * 0x40000000LL, (256 + 64 * (i % 3)) * MiB);
    }
    for (int i = 0; bKeep && i < 8; i++) tg_free(g, 1590 * MS + i * 1000, 0, 3, LEAK + i * 0x40000000LL, (256 + 64 * (i % 3)) * MiB);
    tg_free(g, 1599 * MS, 0, 3, WEIGHTS, 4 * GiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(0, r.aTrace[0].ph.nIter);
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "leak") && r.aFind[i].severity >= VT_SEV_LOW) {
            nGrow++;
            ASSERT_CONTAINS(r.aFind[i].zSite, "serve.py:64");
            ASSERT(r.aFind[i].bytes >= GiB);
        }
    ASSERT_EQ(bKeep ? 1 : 0, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(server_keeping_caches_freed_at_exit_grows) { server_freed_at_exit(1); }
TEST(server_freeing_caches_with_requests_does_not_grow) { server_freed_at_exit(0); }

/*
 * Control of the above: a server whose key/value cache grows by a 320 MiB block every other request over
 * 13 sixteenths, then serves 2 more requests from the blocks it holds (active, flat) before shutdown frees
 * it: the growth stopped before the release, no growth finding.
 */
TEST(capped_cache_in_use_then_freed_at_exit_does_not_grow)
{
    const char *zPath = tg_path("capped_exit.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sK, sT;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "H100", 80 * GiB);
    sK = tg_stack(g, "serve.py", 58, "PagedKVCache._grow");
    sT = tg_stack(g, "model.py", 121, "Block.forward");
    tg_alloc(g, 0, 0, 3, WEIGHTS, 4 * GiB, tg_stack(g, "serve.py", 40, "load"));
    for (int i = 0; i < 15; i++) {
        int64_t ts = i * 100 * MS + 10 * MS, k;
        if (i % 2 == 0 && i <= 12) tg_alloc(g, ts, 0, 3, LEAK + i * 0x40000000LL, 320 * MiB, sK);
        tg_alloc(g, ts + 1 * MS, 0, 3, ACT, GiB, sT);
        k = tg_kernel(g, ts + 2 * MS, ts + 20 * MS, "decode_attention_kernel");
        tg_use(g, ts + 2 * MS, k, WEIGHTS);
        tg_use(g, ts + 2 * MS, k, ACT);
        for (int b = 0; b <= i && b <= 12; b += 2) tg_use(g, ts + 2 * MS, k, LEAK + b * 0x40000000LL);
        tg_free(g, ts + 30 * MS, 0, 3, ACT, GiB);
    }
    for (int i = 0; i <= 12; i += 2) tg_free(g, 1590 * MS + i * 1000, 0, 3, LEAK + i * 0x40000000LL, 320 * MiB);
    tg_free(g, 1599 * MS, 0, 3, WEIGHTS, 4 * GiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(0, count_kind(&r, "leak", VT_SEV_LOW));
    vt__result_free(&r);
    tg_cleanup();
}

VT_TEST_LIST(T(plain_cuda_loop_ended_at_oom_is_no_growth) T(state_without_uses_is_not_a_leak) T(segment_growth_names_its_site) T(segment_creep_is_not_growth) T(segment_span_skips_unknown_times)
                 T(trend_shapes) T(leak_released_at_the_end_still_grows) T(nccl_buffers_are_not_leaks) T(leak_sample_shape) T(leak_growth_and_never_freed_by_site) T(leak_not_judged_across_a_lent_window) T(healthy_training_loop_has_no_finding)
                 T(caching_allocator_segments_are_not_a_leak) T(caching_allocator_growth_is_reported)
                     T(plain_cuda_leak_without_phases) T(one_step_snapshot_is_state)
                     T(one_step_process_is_state) T(capped_cache_reused_is_state) T(capped_cache_after_a_long_start_up_is_state) T(capped_cache_reused_after_a_late_stop_is_state) T(late_cache_never_reused_is_a_leak) T(history_blocks_used_through_their_segment_are_in_use) T(cache_that_stopped_growing_early_is_no_growth) T(cache_growing_to_the_end_grows) T(segment_growth_at_two_sites_is_one_finding) T(snapshot_cycles_are_iterations) T(last_step_held_to_exit_is_state) T(small_growth_on_a_larger_job_is_medium)
                     T(baseline_of_longer_batches_is_no_growth) T(segment_staircase_of_a_slow_leak_grows)
                     T(segment_staircase_after_the_cache_filled_grows) T(segment_staircase_ever_rarer_is_no_growth) T(tensor_staircase_of_losses_kept_each_step_grows)
                     T(tensor_staircase_filled_and_freed_is_no_growth)
                     T(killed_process_that_accumulated_keeps_its_severity) T(killed_process_live_from_one_burst_is_capped)
                     T(server_keeping_caches_freed_at_exit_grows) T(server_freeing_caches_with_requests_does_not_grow)
                     T(capped_cache_in_use_then_freed_at_exit_does_not_grow))
