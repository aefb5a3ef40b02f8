/* Tests for the retained-reference detector and phases inferred from kernel names (held memory, OOM phase). */
#include <string.h>

#include "report/report.h"
#include "tracegen.h"
#include "vt_test.h"

#define W 0x100000000LL
#define ACT 0x200000000LL
#define LOSS 0x300000000LL
#define IDLE 0x400000000LL
#define CACHE 0x500000000LL

/* One 10 ms training step at t0 (forward, backward, optimizer kernels) using the weights. */
static void step(struct tg *g, int64_t t0)
{
    int64_t k;
    tg_alloc(g, t0 + 1 * MS, 0, 3, ACT, 100 * MiB, -1);
    k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "void gemm_fwd_kernel<float>()");
    tg_use(g, t0 + 2 * MS, k, W);
    tg_use(g, t0 + 2 * MS, k, ACT);
    k = tg_kernel(g, t0 + 4 * MS, t0 + 5 * MS, "void relu_backward_kernel<float>()");
    tg_use(g, t0 + 4 * MS, k, ACT);
    k = tg_kernel(g, t0 + 6 * MS, t0 + 7 * MS, "void multi_tensor_apply_kernel<AdamFunctor<float>>()");
    tg_use(g, t0 + 6 * MS, k, W);
    tg_free(g, t0 + 8 * MS, 0, 3, ACT, 100 * MiB);
}

/* No NVTX: 5 steps, a 20-kernel forward-only evaluation window, 3 more steps. The last
 * step before evaluation leaves an 80 MiB loss graph alive until the next step. */
TEST(training_memory_held_through_inferred_evaluation)
{
    const char *zPath = tg_path("carry.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, tg_stack(g, "model.py", 5, "__init__"));
    for (int i = 0; i < 5; i++) step(g, 10 * MS + i * 10 * MS);
    /* inside the last step before evaluation (backward at 54 ms, optimizer at 56 ms) */
    tg_alloc(g, 53 * MS + 500000, 0, 3, LOSS, 80 * MiB, tg_stack(g, "train.py", 77, "train_step"));
    k = tg_kernel(g, 54 * MS + 500000, 55 * MS, "void loss_backward_kernel<float>()");
    tg_use(g, 54 * MS + 500000, k, LOSS);
    for (int i = 0; i < 20; i++) {
        k = tg_kernel(g, 61 * MS + i * MS, 61 * MS + i * MS + 500000, "void gemm_fwd_kernel<float>()");
        tg_use(g, 61 * MS + i * MS, k, W);
    }
    for (int i = 0; i < 3; i++) {
        step(g, 90 * MS + i * 10 * MS);
        if (i == 0) tg_free(g, 90 * MS + 500000, 0, 3, LOSS, 80 * MiB);
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_STREQ("kernels", t->ph.zSource);
    ASSERT_EQ(3, t->ph.n);
    ASSERT_EQ(VT_PHASE_TRAIN, t->ph.a[0].kind);
    ASSERT_EQ(VT_PHASE_EVAL, t->ph.a[1].kind);
    ASSERT_EQ(VT_PHASE_TRAIN, t->ph.a[2].kind);
    ASSERT_EQ(61 * MS, t->ph.a[1].start);
    ASSERT_EQ(8, t->ph.nIter);
    ASSERT_EQ(5, t->ph.a[0].nIter);
    ASSERT_EQ(80 * MiB, t->ph.a[1].carried);
    ASSERT_EQ(2, r.nFind);
    ASSERT_STREQ("retained", r.aFind[0].zKind);
    ASSERT_EQ(VT_SEV_MEDIUM, r.aFind[0].severity); /* 80 of the phase's 280 MiB: under half */
    ASSERT_EQ(80 * MiB, r.aFind[0].bytes);
    ASSERT_EQ(1, r.aFind[0].count);
    ASSERT_STREQ("train.py:77 in train_step", r.aFind[0].zSite);
    ASSERT_CONTAINS(r.aFind[0].zTitle, "held through evaluation");
    ASSERT_CONTAINS(r.aFind[0].zFix, "set_to_none=True");
    /* carried over, under half of the phase's memory: info; the site is the retained finding's */
    ASSERT_STREQ("validation_spike", r.aFind[1].zKind);
    ASSERT_EQ(VT_SEV_INFO, r.aFind[1].severity);
    ASSERT_CONTAINS(r.aFind[1].zTitle, "carried over from training");
    vt__result_free(&r);
    ASSERT_EQ(3, tg_query(zPath, "SELECT count(*) FROM phase WHERE source = 'kernels'"));
    tg_cleanup();
}

/* 30 steps with NVTX; a 64 MiB buffer used once then kept 300 ms (idle), and a 32 MiB cache
 * used every step and never freed (healthy). */
TEST(idle_allocation_and_reused_cache)
{
    const char *zPath = tg_path("idle.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k;
    ASSERT(g);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    tg_alloc(g, 2 * MS, 0, 3, IDLE, 64 * MiB, tg_stack(g, "prep.py", 12, "load_table"));
    k = tg_kernel(g, 3 * MS, 4 * MS, "init_kernel");
    tg_use(g, 3 * MS, k, IDLE);
    tg_alloc(g, 4 * MS, 0, 3, CACHE, 32 * MiB, tg_stack(g, "model.py", 50, "rope_cache"));
    tg_nvtx(g, 10 * MS, 310 * MS, "train");
    for (int i = 0; i < 30; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        step(g, t0);
        k = tg_kernel(g, t0 + 7 * MS, t0 + 7 * MS + 100, "rope_kernel");
        tg_use(g, t0 + 7 * MS, k, CACHE);
    }
    tg_free(g, 311 * MS, 0, 3, IDLE, 64 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.nFind);
    ASSERT_STREQ("retained", r.aFind[0].zKind);
    ASSERT_EQ(VT_SEV_MEDIUM, r.aFind[0].severity);
    ASSERT_EQ(64 * MiB, r.aFind[0].bytes);
    ASSERT_STREQ("prep.py:12 in load_table", r.aFind[0].zSite);
    ASSERT_CONTAINS(r.aFind[0].zTitle, "idle long after last use");
    ASSERT_CONTAINS(r.aFind[0].zTitle, "up to 308.0 ms");
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "threshold 100.0 ms"); /* 10 median iterations */
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * A collection kept until it is done with, then released at once: 30 marked micro-batch steps, each
 * keeping a 16 MiB embedding (never read by a kernel) until every 15th step drops all 15 together (an
 * accumulation boundary): each is held up to 15 iterations, over the 10-iteration threshold, yet it is no
 * forgotten reference. A 64 MiB buffer used once and freed at the end (one allocation) stays idle.
 */
TEST(collection_released_together_is_not_idle)
{
    const char *zPath = tg_path("collect.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k, sE = 0;
    int nIdle = 0;
    ASSERT(g);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    tg_alloc(g, 2 * MS, 0, 3, IDLE, 64 * MiB, tg_stack(g, "prep.py", 12, "load_table"));
    k = tg_kernel(g, 3 * MS, 4 * MS, "init_kernel");
    tg_use(g, 3 * MS, k, IDLE);
    sE = tg_stack(g, "train.py", 68, "train_one_epoch");
    tg_nvtx(g, 10 * MS, 310 * MS, "train");
    for (int i = 0; i < 30; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        step(g, t0);
        tg_alloc(g, t0 + 8 * MS + 100, 0, 3, CACHE + (i % 15) * 0x2000000LL, 16 * MiB, sE);
        if (i % 15 == 14)
            for (int e = 0; e < 15; e++) tg_free(g, t0 + 9 * MS + e * 1000, 0, 3, CACHE + e * 0x2000000LL, 16 * MiB);
    }
    tg_free(g, 311 * MS, 0, 3, IDLE, 64 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "retained") && r.aFind[i].severity >= VT_SEV_LOW) {
            nIdle++;
            ASSERT_STREQ("prep.py:12 in load_table", r.aFind[i].zSite);
        }
    ASSERT_EQ(1, nIdle);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * Optimizer state made at the first of 10 marked steps and used by every step, then a long evaluation
 * (30 batches, past the 10-iteration threshold) after which the process frees everything: the state
 * was in use until training ended; idle only since its user stopped, it is no forgotten reference.
 */
TEST(state_used_until_training_ended_is_not_idle)
{
    const char *zPath = tg_path("state_end.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k, sS = 0;
    ASSERT(g);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    sS = tg_stack(g, "train.py", 72, "train_one_epoch");
    tg_nvtx(g, 10 * MS, 110 * MS, "train");
    for (int i = 0; i < 10; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        step(g, t0);
        if (i == 0) tg_alloc(g, t0 + 6 * MS, 0, 3, CACHE, 400 * MiB, sS);
        k = tg_kernel(g, t0 + 7 * MS, t0 + 7 * MS + 100, "void multi_tensor_apply_kernel<AdamFunctor<float>>()");
        tg_use(g, t0 + 7 * MS, k, CACHE);
    }
    tg_nvtx(g, 120 * MS, 420 * MS, "validation");
    for (int b = 0; b < 30; b++) {
        int64_t t0 = 120 * MS + b * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "val_step");
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "void gemm_fwd_kernel<float>()");
        tg_use(g, t0 + 2 * MS, k, W);
    }
    tg_free(g, 430 * MS, 0, 3, CACHE, 400 * MiB);
    tg_free(g, 431 * MS, 0, 3, W, 200 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "retained")) ASSERT(strcmp(r.aFind[i].zSite, "train.py:72 in train_one_epoch"));
    vt__result_free(&r);
    tg_cleanup();
}

/* Kernel-name phase inference with realistic noise: forward kernels with generic names,
 * elementwise kernels between backward kernels, gradient clipping and AMP unscale through
 * multi_tensor_apply before the optimizer; an evaluation window mid-run and one at the end. */
TEST(inferred_phases_with_noisy_kernels)
{
    const char *zPath = tg_path("noisy.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t ts = 1 * MS;
    ASSERT(g);
    for (int step = 0; step < 6; step++) {
        if (step == 3) /* evaluation: 30 forward kernels */
            for (int i = 0; i < 30; i++, ts += 100000) tg_kernel(g, ts, ts + 50000, "void at::native::vectorized_elementwise_kernel<4, GeluFunctor>()");
        for (int i = 0; i < 10; i++, ts += 100000) tg_kernel(g, ts, ts + 50000, "sm90_xmma_gemm_f16f16_f32_tn_n");
        for (int i = 0; i < 5; i++) {
            tg_kernel(g, ts, ts + 50000, "void at::native::GeluBackwardCUDAKernelImpl()");
            ts += 100000;
            tg_kernel(g, ts, ts + 50000, "void at::native::vectorized_elementwise_kernel<4, MulFunctor>()");
            ts += 100000;
        }
        tg_kernel(g, ts, ts + 50000, "void multi_tensor_apply_kernel<LpNormFunctor<float>>()");
        ts += 100000;
        tg_kernel(g, ts, ts + 50000, "void at::native::reduce_kernel<512, 1>()");
        ts += 100000;
        for (int i = 0; i < 3; i++, ts += 100000) tg_kernel(g, ts, ts + 50000, "void multi_tensor_apply_kernel<AdamFunctor<float>>()");
    }
    for (int i = 0; i < 25; i++, ts += 100000) tg_kernel(g, ts, ts + 50000, "sm90_xmma_gemm_f16f16_f32_tn_n");
    tg_alloc(g, 1 * MS, 0, 3, W, 64 * MiB, -1);
    tg_free(g, ts, 0, 3, W, 64 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_STREQ("kernels", t->ph.zSource);
    ASSERT_EQ(6, t->ph.nIter);
    ASSERT_EQ(4, t->ph.n);
    ASSERT_EQ(VT_PHASE_TRAIN, t->ph.a[0].kind);
    ASSERT_EQ(3, t->ph.a[0].nIter);
    ASSERT_EQ(VT_PHASE_EVAL, t->ph.a[1].kind);
    ASSERT_EQ(VT_PHASE_TRAIN, t->ph.a[2].kind);
    ASSERT_EQ(3, t->ph.a[2].nIter);
    ASSERT_EQ(VT_PHASE_EVAL, t->ph.a[3].kind);
    /* the mid-run evaluation is exactly its 30 kernels: it ends where the next step's first gemm starts */
    ASSERT_EQ(t->ph.a[1].start + 30 * 100000, t->ph.a[1].end);
    ASSERT_EQ(t->ph.a[1].end, t->ph.a[2].start);
    vt__result_free(&r);
    /* with NVTX step ranges but no phase range: the same phases, the NVTX iterations */
    {
        sqlite3 *db = NULL;
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "INSERT INTO string(value) VALUES('step 1');"
                                              "INSERT INTO nvtx_range(t, dur, kind, name_id) VALUES"
                                              "(1000000, 1000000, 0, (SELECT id FROM string WHERE value = 'step 1')),"
                                              "(2000000, 1000000, 0, (SELECT id FROM string WHERE value = 'step 1'))",
                                          NULL, NULL, NULL));
        sqlite3_close(db);
    }
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    t = &r.aTrace[0];
    ASSERT_STREQ("kernels", t->ph.zSource);
    ASSERT_EQ(4, t->ph.n);
    ASSERT_EQ(2, t->ph.nIter);
    vt__result_free(&r);
    tg_cleanup();
}

/* A healthy loop whose trace ends in evaluation: optimizer state made in the first step stays
 * live, unused during the final evaluation: neither retained nor carried over. */
TEST(trace_ending_in_evaluation)
{
    const char *zPath = tg_path("ends_in_eval.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    tg_nvtx(g, 10 * MS, 60 * MS, "train");
    for (int i = 0; i < 5; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        step(g, t0);
        if (i == 0) tg_alloc(g, t0 + 6 * MS + 500000, 0, 3, IDLE, 400 * MiB, tg_stack(g, "optim.py", 9, "_init_group"));
        k = tg_kernel(g, t0 + 6 * MS + 600000, t0 + 6 * MS + 700000, "void multi_tensor_apply_kernel<AdamFunctor<float>>()");
        tg_use(g, t0 + 6 * MS + 600000, k, IDLE);
    }
    tg_nvtx(g, 70 * MS, 120 * MS, "validation");
    for (int i = 0; i < 5; i++) {
        k = tg_kernel(g, (72 + 10 * i) * MS, (73 + 10 * i) * MS, "void gemm_fwd_kernel<float>()");
        tg_use(g, (72 + 10 * i) * MS, k, W);
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(2, r.aTrace[0].ph.n);
    ASSERT_EQ(0, r.aTrace[0].ph.a[1].carried);
    ASSERT_EQ(0, r.nFind);
    vt__result_free(&r);
    tg_cleanup();
}

/* Optimizer state made in the first step and used in every step, then two epochs of training
 * and validation, everything freed at teardown after the last validation: state kept from step
 * to step is never carried over nor held through evaluation, though unused during it. The last
 * step's 80 MiB output, held through the first validation until the next step, is. */
TEST(optimizer_state_is_not_carried_over)
{
    const char *zPath = tg_path("optim_state.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k, t0;
    int nHeld = 0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    for (int e = 0; e < 2; e++) {
        int64_t base = e * 200 * MS;
        tg_nvtx(g, base + 10 * MS, base + 60 * MS, "train");
        for (int i = 0; i < 5; i++) {
            t0 = base + 10 * MS + i * 10 * MS;
            tg_nvtx(g, t0, t0 + 10 * MS, "step");
            step(g, t0);
            if (e == 0 && i == 0)
                tg_alloc(g, t0 + 6 * MS + 500000, 0, 3, IDLE, 400 * MiB, tg_stack(g, "train.py", 72, "train_one_epoch"));
            k = tg_kernel(g, t0 + 6 * MS + 600000, t0 + 6 * MS + 700000, "void multi_tensor_apply_kernel<AdamFunctor<float>>()");
            tg_use(g, t0 + 6 * MS + 600000, k, IDLE);
            if (e == 1 && i == 0) tg_free(g, t0 + 500000, 0, 3, LOSS, 80 * MiB);
            if (e == 0 && i == 4) {
                tg_alloc(g, t0 + 1 * MS + 500000, 0, 3, LOSS, 80 * MiB, tg_stack(g, "train.py", 66, "main"));
                k = tg_kernel(g, t0 + 4 * MS + 500000, t0 + 4 * MS + 600000, "void loss_backward_kernel<float>()");
                tg_use(g, t0 + 4 * MS + 500000, k, LOSS);
            }
        }
        tg_nvtx(g, base + 70 * MS, base + 120 * MS, "validation");
        for (int i = 0; i < 5; i++) {
            k = tg_kernel(g, base + (72 + 10 * i) * MS, base + (73 + 10 * i) * MS, "void gemm_fwd_kernel<float>()");
            tg_use(g, base + (72 + 10 * i) * MS, k, W);
        }
    }
    tg_free(g, 330 * MS, 0, 3, IDLE, 400 * MiB);
    tg_free(g, 330 * MS, 0, 3, W, 200 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(4, r.aTrace[0].ph.n);
    ASSERT_EQ(80 * MiB, r.aTrace[0].ph.a[1].carried);
    ASSERT_EQ(0, r.aTrace[0].ph.a[3].carried);
    for (int i = 0; i < r.nFind; i++) {
        ASSERT(strstr(r.aFind[i].zSite, "train.py:72") == NULL);
        if (strstr(r.aFind[i].zTitle, "held through evaluation")) {
            nHeld++;
            ASSERT_STREQ("train.py:66 in main", r.aFind[i].zSite);
            ASSERT_EQ(80 * MiB, r.aFind[i].bytes);
        }
    }
    ASSERT_EQ(1, nHeld);
    vt__result_free(&r);
    tg_cleanup();
}

/* No NVTX: 5 training steps, then evaluate() copies in its batch and its first allocation fails
 * before any kernel runs. With phases inferred from kernels no phase contains the OOM; it
 * follows training and the failing call is in an evaluation function, so it is in evaluation.
 * The same failure from a function named otherwise gets no phase. */
static void oom_after_training(const char *zFunc, const char *zPhase, int bNested)
{
    const char *zPath = tg_path("oom_eval.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int nOom = 0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    for (int i = 0; i < 5; i++) step(g, 10 * MS + i * 10 * MS);
    tg_alloc(g, 62 * MS, 0, 3, IDLE, 1 * GiB, tg_stack(g, "train.py", 101, zFunc));
    if (bNested) {
        /* the failing line is the model's, as in training; its caller is zFunc */
        struct tg_frame aT[2] = {{1, 0, "GPT.forward", "model.py", NULL, 142},
                                 {1, 0, "train_one_epoch", "train.py", NULL, 66}};
        struct tg_frame aE[2] = {{1, 0, "GPT.forward", "model.py", NULL, 142}, {1, 0, zFunc, "train.py", NULL, 104}};
        tg_alloc(g, 9 * MS, 0, 3, IDLE + GiB, 1 * MiB, tg_stack_frames(g, aT, 2, 0x3131));
        tg_oom(g, 63 * MS, 0, 20 * GiB, 14 * GiB, 16 * GiB, tg_stack_frames(g, aE, 2, 0x3232));
    } else
        tg_oom(g, 63 * MS, 0, 20 * GiB, 14 * GiB, 16 * GiB, tg_stack(g, "train.py", 104, zFunc));
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_STREQ("kernels", r.aTrace[0].ph.zSource);
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "oom")) {
            nOom++;
            ASSERT_STREQ(zPhase, r.aFind[i].zPhase);
            if (*zPhase) ASSERT_CONTAINS(r.aFind[i].zEvidence, "after the last training step");
        }
    ASSERT_EQ(1, nOom);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(oom_after_training_in_evaluate) { oom_after_training("evaluate", "evaluation", 0); }
TEST(oom_after_training_elsewhere) { oom_after_training("save_checkpoint", "", 0); }
/* The failing line is the model's forward (the same site as in training), called from evaluate(). */
TEST(oom_after_training_called_from_evaluate) { oom_after_training("evaluate", "evaluation", 1); }
TEST(oom_after_training_called_from_elsewhere) { oom_after_training("save_checkpoint", "", 1); }



/* No NVTX: 5 training steps, then an evaluation too short to be told from a step by its kernels (two
 * forward kernels, no more than two steps' forward passes: the kernels fold it into training), whose
 * second batch fails from evaluate(): the stack says evaluation, the OOM is in it (it was "training"). */
TEST(oom_in_short_evaluation_inside_inferred_training)
{
    const char *zPath = tg_path("oom_short_eval.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int nOom = 0;
    int64_t k;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    for (int i = 0; i < 5; i++) step(g, 10 * MS + i * 10 * MS);
    k = tg_kernel(g, 62 * MS, 63 * MS, "void gemm_fwd_kernel<float>()");
    tg_use(g, 62 * MS, k, W);
    tg_oom(g, 64 * MS, 0, 20 * GiB, 14 * GiB, 16 * GiB, tg_stack(g, "train.py", 104, "evaluate"));
    k = tg_kernel(g, 65 * MS, 66 * MS, "void gemm_fwd_kernel<float>()");
    tg_use(g, 65 * MS, k, W);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_STREQ("kernels", r.aTrace[0].ph.zSource);
    ASSERT_EQ(VT_PHASE_TRAIN, r.aTrace[0].ph.a[r.aTrace[0].ph.n - 1].kind);
    ASSERT(r.aTrace[0].ph.a[r.aTrace[0].ph.n - 1].end >= 64 * MS);
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "oom")) {
            nOom++;
            ASSERT_STREQ("evaluation", r.aFind[i].zPhase);
            ASSERT_CONTAINS(r.aFind[i].zEvidence, "too short to be told from a step");
        }
    ASSERT_EQ(1, nOom);
    vt__result_free(&r);
    tg_cleanup();
}

/* The retained findings of r at zSite (NULL: all), counted. */
static int retained_at(const struct vt_result *r, const char *zSite)
{
    int n = 0;
    for (int i = 0; i < r->nFind; i++)
        n += !strcmp(r->aFind[i].zKind, "retained") && (!zSite || !strcmp(r->aFind[i].zSite, zSite));
    return n;
}

/*
 * PyTorch's history merged: kernel arguments name the caching allocator's segments, not the
 * blocks inside them. Optimizer state made in the first step sits in a segment every step uses
 * (no kernel argument names the block itself): it may have been used to the end, so it is not
 * idle. A batch kept in a segment of its own that nothing used after its step is idle: the
 * segment's uses say so for every block inside it.
 */
TEST(history_blocks_idle_only_where_their_segment_was)
{
    const char *zPath = tg_path("history_idle.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k, segA = W, segB = IDLE;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, segA, 512 * MiB, -1);
    tg_alloc(g, 1 * MS, 0, 3, segB, 128 * MiB, -1);
    tg_block(g, 2 * MS, 1, segA, 200 * MiB, tg_stack(g, "train.py", 188, "main"));
    tg_nvtx(g, 10 * MS, 310 * MS, "train");
    for (int i = 0; i < 30; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        tg_block(g, t0 + 1 * MS, 1, segA + 256 * MiB, 100 * MiB, tg_stack(g, "model.py", 94, "MLP.forward"));
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "void gemm_fwd_kernel<float>()");
        tg_use(g, t0 + 2 * MS, k, segA);
        k = tg_kernel(g, t0 + 4 * MS, t0 + 5 * MS, "void relu_backward_kernel<float>()");
        tg_use(g, t0 + 4 * MS, k, segA);
        if (i == 0) tg_block(g, t0 + 5 * MS, 1, segA + 200 * MiB, 48 * MiB, tg_stack(g, "train.py", 72, "train_one_epoch"));
        if (i == 2) {
            tg_block(g, t0 + 1 * MS, 1, segB, 64 * MiB, tg_stack(g, "data.py", 30, "cache_batch"));
            k = tg_kernel(g, t0 + 1 * MS + 500000, t0 + 2 * MS, "void copy_kernel<float>()");
            tg_use(g, t0 + 1 * MS + 500000, k, segB);
        }
        k = tg_kernel(g, t0 + 6 * MS, t0 + 7 * MS, "void multi_tensor_apply_kernel<AdamFunctor<float>>()");
        tg_use(g, t0 + 6 * MS, k, segA);
        tg_block(g, t0 + 8 * MS, 2, segA + 256 * MiB, 100 * MiB, -1);
    }
    tg_block(g, 305 * MS, 2, segB, 64 * MiB, -1);
    tg_block(g, 311 * MS, 2, segA + 200 * MiB, 48 * MiB, -1);
    tg_block(g, 311 * MS, 2, segA, 200 * MiB, -1);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(0, r.aTrace[0].f.bSegments);
    ASSERT_EQ(0, retained_at(&r, "train.py:72 in train_one_epoch"));
    ASSERT_EQ(1, retained_at(&r, NULL));
    ASSERT_EQ(1, retained_at(&r, "data.py:30 in cache_batch"));
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "retained")) {
            ASSERT_EQ(64 * MiB, r.aFind[i].bytes);
            ASSERT_CONTAINS(r.aFind[i].zTitle, "idle long after last use");
        }
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * PyTorch's history merged, two epochs of training and validation: Adam's state, made in the
 * first step in a segment every optimizer step uses (kernel arguments name the segment only), is
 * kept by design and not "held through evaluation"; the last step's logits, alone in a segment
 * nothing uses during validation, are.
 */
TEST(history_optimizer_state_not_held_through_evaluation)
{
    const char *zPath = tg_path("history_held.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k, segA = W, segB = LOSS;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, segA, 512 * MiB, -1);
    tg_alloc(g, 1 * MS, 0, 3, segB, 128 * MiB, -1);
    tg_block(g, 2 * MS, 1, segA, 200 * MiB, tg_stack(g, "train.py", 188, "main"));
    for (int e = 0; e < 2; e++) {
        int64_t base = e * 120 * MS;
        tg_nvtx(g, base + 10 * MS, base + 60 * MS, "train");
        for (int i = 0; i < 5; i++) {
            int64_t t0 = base + 10 * MS + i * 10 * MS;
            tg_nvtx(g, t0, t0 + 10 * MS, "step");
            if (e == 1 && i == 0) tg_block(g, t0 + 500000, 2, segB, 96 * MiB, -1);
            if (e == 0 && i == 4) tg_block(g, t0 + 1 * MS, 1, segB, 96 * MiB, tg_stack(g, "model.py", 149, "GPT.forward"));
            k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "void gemm_fwd_kernel<float>()");
            tg_use(g, t0 + 2 * MS, k, segA);
            if (e == 0 && i == 4) tg_use(g, t0 + 2 * MS, k, segB);
            k = tg_kernel(g, t0 + 4 * MS, t0 + 5 * MS, "void relu_backward_kernel<float>()");
            tg_use(g, t0 + 4 * MS, k, segA);
            if (e == 0 && i == 0) tg_block(g, t0 + 5 * MS, 1, segA + 200 * MiB, 48 * MiB, tg_stack(g, "train.py", 72, "train_one_epoch"));
            k = tg_kernel(g, t0 + 6 * MS, t0 + 7 * MS, "void multi_tensor_apply_kernel<AdamFunctor<float>>()");
            tg_use(g, t0 + 6 * MS, k, segA);
        }
        tg_nvtx(g, base + 70 * MS, base + 120 * MS, "validation");
        for (int i = 0; i < 5; i++) {
            k = tg_kernel(g, base + (72 + 10 * i) * MS, base + (73 + 10 * i) * MS, "void gemm_fwd_kernel<float>()");
            tg_use(g, base + (72 + 10 * i) * MS, k, segA);
        }
    }
    tg_block(g, 245 * MS, 2, segA + 200 * MiB, 48 * MiB, -1);
    tg_block(g, 245 * MS, 2, segA, 200 * MiB, -1);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(4, r.aTrace[0].ph.n);
    ASSERT_EQ(0, retained_at(&r, "train.py:72 in train_one_epoch"));
    ASSERT_EQ(1, retained_at(&r, "model.py:149 in GPT.forward"));
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "retained")) {
            ASSERT_CONTAINS(r.aFind[i].zTitle, "held through evaluation");
            ASSERT_EQ(96 * MiB, r.aFind[i].bytes);
        }
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * A step captured into a CUDA graph at the fourth step and replayed for the rest of the run:
 * the replayed kernels' arguments are not scanned (args_scanned 0), so the graph's buffers may
 * be used by every replay and are not idle. The same kernels with their arguments scanned and
 * naming nothing leave the buffers idle.
 */
static void graph_replays(int bScanned)
{
    const char *zPath = tg_path("graph.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k, first = 0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    tg_nvtx(g, 10 * MS, 310 * MS, "train");
    for (int i = 0; i < 30; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        if (i < 3) {
            step(g, t0);
            continue;
        }
        if (i == 3) { /* capture: the graph's buffers from its private pool */
            tg_alloc(g, t0 + 1 * MS, 0, 3, CACHE, 256 * MiB, tg_stack(g, "train.py", 90, "main"));
            k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "void gemm_fwd_kernel<float>()");
            tg_use(g, t0 + 2 * MS, k, CACHE);
            continue;
        }
        k = tg_kernel(g, t0 + 2 * MS, t0 + 8 * MS, "void gemm_fwd_kernel<float>()");
        if (!first) first = k;
    }
    tg_free(g, 311 * MS, 0, 3, CACHE, 256 * MiB);
    {
        char z[128];
        snprintf(z, sizeof z, "UPDATE kernel SET args_scanned = %d, graph_id = 1 WHERE correlation >= %lld", bScanned,
                 (long long)first);
        tg_exec(g, z);
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(bScanned ? 1 : 0, retained_at(&r, "train.py:90 in main"));
    vt__result_free(&r);
    tg_cleanup();
}

TEST(graph_replays_may_use_any_allocation) { graph_replays(0); }
TEST(scanned_replays_that_name_nothing_leave_it_idle) { graph_replays(1); }

/* The last step's gradients, made by the autograd engine's thread (no stack recorded: one site
 * per size), held through validation until the next step: one finding, not one per size. */
TEST(unrecorded_sites_are_one_finding)
{
    const char *zPath = tg_path("unrecorded.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    static const int64_t aSize[3] = {8 * MiB, 16 * MiB, 24 * MiB};
    int64_t k;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    for (int e = 0; e < 2; e++) {
        int64_t base = e * 120 * MS;
        tg_nvtx(g, base + 10 * MS, base + 60 * MS, "train");
        for (int i = 0; i < 5; i++) {
            int64_t t0 = base + 10 * MS + i * 10 * MS;
            tg_nvtx(g, t0, t0 + 10 * MS, "step");
            step(g, t0);
            if (e == 1 && i == 0)
                for (int s = 0; s < 3; s++) tg_free(g, t0 + 500000, 0, 3, LOSS + s * 64 * MiB, aSize[s]);
            if (e == 0 && i == 4) {
                k = tg_kernel(g, t0 + 4 * MS + 500000, t0 + 4 * MS + 600000, "void mm_backward_kernel<float>()");
                for (int s = 0; s < 3; s++) {
                    tg_alloc(g, t0 + 4 * MS + 400000, 0, 3, LOSS + s * 64 * MiB, aSize[s], -1);
                    tg_use(g, t0 + 4 * MS + 500000, k, LOSS + s * 64 * MiB);
                }
            }
        }
        tg_nvtx(g, base + 70 * MS, base + 120 * MS, "validation");
        for (int i = 0; i < 5; i++) {
            k = tg_kernel(g, base + (72 + 10 * i) * MS, base + (73 + 10 * i) * MS, "void gemm_fwd_kernel<float>()");
            tg_use(g, base + (72 + 10 * i) * MS, k, W);
        }
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, retained_at(&r, NULL));
    ASSERT_EQ(1, retained_at(&r, "site not recorded (3 allocation sizes)"));
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "retained")) {
            ASSERT_EQ(48 * MiB, r.aFind[i].bytes);
            ASSERT_EQ(3, r.aFind[i].count);
            ASSERT_STREQ("validation", r.aFind[i].zPhase);
            ASSERT_EQ(-1, r.aFind[i].stackId);
        }
    vt__result_free(&r);
    tg_cleanup();
}

/* Every training step keeps its 8 MiB loss in a list (a leak at train.py:79); those of the first
 * epoch are also held, unused, through validation. The growth finding names the site; the same
 * memory is not reported a second time as retained. */
TEST(leaking_site_is_not_reported_again)
{
    const char *zPath = tg_path("leak_held.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k, stack;
    int nLeak = 0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    stack = tg_stack(g, "train.py", 79, "train_one_epoch");
    for (int e = 0; e < 2; e++) {
        int64_t base = e * 170 * MS;
        tg_nvtx(g, base + 10 * MS, base + 110 * MS, "train");
        for (int i = 0; i < 10; i++) {
            int64_t t0 = base + 10 * MS + i * 10 * MS, a = LOSS + (e * 10 + i) * 8 * MiB;
            tg_nvtx(g, t0, t0 + 10 * MS, "step");
            step(g, t0);
            tg_alloc(g, t0 + 3 * MS, 0, 3, a, 8 * MiB, stack);
            k = tg_kernel(g, t0 + 3 * MS + 500000, t0 + 3 * MS + 600000, "void nll_loss_forward_kernel<float>()");
            tg_use(g, t0 + 3 * MS + 500000, k, a);
        }
        tg_nvtx(g, base + 120 * MS, base + 170 * MS, "validation");
        for (int i = 0; i < 5; i++) {
            k = tg_kernel(g, base + (122 + 10 * i) * MS, base + (123 + 10 * i) * MS, "void gemm_fwd_kernel<float>()");
            tg_use(g, base + (122 + 10 * i) * MS, k, W);
        }
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    for (int i = 0; i < r.nFind; i++)
        nLeak += !strcmp(r.aFind[i].zKind, "leak") && r.aFind[i].severity >= VT_SEV_LOW &&
                 !strcmp(r.aFind[i].zSite, "train.py:79 in train_one_epoch");
    ASSERT(nLeak >= 1);
    ASSERT_EQ(0, retained_at(&r, NULL));
    vt__result_free(&r);
    tg_cleanup();
}

/* Frozen experts of a mixture-of-experts model, loaded before training: the router picks three
 * of them in the first step only, the fourth every step; all are freed after training. Weights
 * the step may use at any iteration are state, however long they sit idle (the lookup table of
 * idle_allocation_and_reused_cache, used only before training, is not). */
TEST(state_a_training_phase_keeps_is_not_idle)
{
    const char *zPath = tg_path("experts.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k, stack;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    stack = tg_stack(g, "train.py", 188, "main");
    for (int e = 0; e < 4; e++) tg_alloc(g, 2 * MS, 0, 3, CACHE + e * 32 * MiB, 32 * MiB, stack);
    tg_nvtx(g, 10 * MS, 310 * MS, "train");
    for (int i = 0; i < 30; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        step(g, t0);
        k = tg_kernel(g, t0 + 3 * MS, t0 + 3 * MS + 100000, "void expert_gemm_kernel<float>()");
        for (int e = 0; e < (i == 0 ? 4 : 1); e++) tg_use(g, t0 + 3 * MS, k, CACHE + e * 32 * MiB);
    }
    for (int e = 0; e < 4; e++) tg_free(g, 311 * MS, 0, 3, CACHE + e * 32 * MiB, 32 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(0, retained_at(&r, NULL));
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * torch.profiler's ProfilerStep#N ranges around 10 training steps of 40 kernels, then an
 * evaluation loop the profiler's steps do not cover: 2 batches of 10 forward kernels over 8 ms
 * (bEval), or only 3 small kernels after the last step (a metric). The evaluation is a phase of
 * its own, and the last step's logits held through it are found; the metric's kernels are not
 * an evaluation.
 */
static void eval_after_profiler_steps(int bEval)
{
    const char *zPath = tg_path("profiler_eval.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t k, ts;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    for (int i = 0; i < 10; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS;
        char zName[32];
        snprintf(zName, sizeof zName, "ProfilerStep#%d", i);
        tg_nvtx(g, t0, t0 + 10 * MS, zName);
        tg_alloc(g, t0 + 100000, 0, 3, ACT, 100 * MiB, -1);
        if (i == 9) tg_alloc(g, t0 + 200000, 0, 3, LOSS, 160 * MiB, tg_stack(g, "model.py", 149, "GPT.forward"));
        for (int j = 0; j < 40; j++) {
            ts = t0 + 500000 + j * 200000;
            k = tg_kernel(g, ts, ts + 100000,
                          j < 20 ? "void gemm_fwd_kernel<float>()"
                          : j < 35 ? "void relu_backward_kernel<float>()"
                                   : "void multi_tensor_apply_kernel<AdamFunctor<float>>()");
            tg_use(g, ts, k, j < 20 || j >= 35 ? W : ACT);
            if (i == 9 && (j == 19 || j == 20)) tg_use(g, ts, k, LOSS);
        }
        tg_free(g, t0 + 9 * MS, 0, 3, ACT, 100 * MiB);
    }
    for (int j = 0; j < (bEval ? 20 : 3); j++) {
        ts = 111 * MS + j * (bEval ? 400000 : 100000);
        k = tg_kernel(g, ts, ts + (bEval ? 300000 : 50000), "void gemm_fwd_kernel<float>()");
        tg_use(g, ts, k, W);
    }
    tg_free(g, 125 * MS, 0, 3, LOSS, 160 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(10, r.aTrace[0].ph.nIter);
    ASSERT_EQ(bEval ? 2 : 1, r.aTrace[0].ph.n);
    ASSERT_EQ(VT_PHASE_TRAIN, r.aTrace[0].ph.a[0].kind);
    if (bEval) {
        ASSERT_EQ(VT_PHASE_EVAL, r.aTrace[0].ph.a[1].kind);
        ASSERT_EQ(111 * MS, r.aTrace[0].ph.a[1].start);
        ASSERT_EQ(1, retained_at(&r, "model.py:149 in GPT.forward"));
        for (int i = 0; i < r.nFind; i++)
            if (!strcmp(r.aFind[i].zKind, "retained")) ASSERT_STREQ("evaluation", r.aFind[i].zPhase);
    } else {
        ASSERT_EQ(0, retained_at(&r, NULL));
    }
    vt__result_free(&r);
    tg_cleanup();
}

TEST(evaluation_after_profiler_steps_is_a_phase) { eval_after_profiler_steps(1); }
TEST(kernels_after_profiler_steps_need_not_be_evaluation) { eval_after_profiler_steps(0); }

VT_TEST_LIST(T(collection_released_together_is_not_idle) T(state_used_until_training_ended_is_not_idle) T(oom_after_training_in_evaluate) T(oom_in_short_evaluation_inside_inferred_training) T(oom_after_training_elsewhere) T(oom_after_training_called_from_evaluate)
             T(oom_after_training_called_from_elsewhere) T(optimizer_state_is_not_carried_over) T(trace_ending_in_evaluation) T(inferred_phases_with_noisy_kernels) T(training_memory_held_through_inferred_evaluation) T(idle_allocation_and_reused_cache)
             T(history_blocks_idle_only_where_their_segment_was)
             T(history_optimizer_state_not_held_through_evaluation) T(graph_replays_may_use_any_allocation)
             T(scanned_replays_that_name_nothing_leave_it_idle) T(unrecorded_sites_are_one_finding)
             T(leaking_site_is_not_reported_again) T(state_a_training_phase_keeps_is_not_idle)
             T(evaluation_after_profiler_steps_is_a_phase) T(kernels_after_profiler_steps_need_not_be_evaluation))
