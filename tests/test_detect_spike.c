/* Tests for the validation-spike detector: missing no_grad, and a legitimately large batch. */
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "tracegen.h"
#include "vt_test.h"

#define W 0x100000000LL
#define ACT 0x200000000LL
#define OUT 0x300000000LL

/* 200 MiB of weights, then NVTX "train" (5 steps of 10 ms, 100 MiB activations each, freed): the
 * training the validation tests follow (from 60 ms on). */
static void train_part(struct tg *g)
{
    int64_t k;
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    tg_nvtx(g, 5 * MS, 55 * MS, "train");
    for (int i = 0; i < 5; i++) {
        int64_t t0 = 5 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "train_step");
        tg_alloc(g, t0 + 1 * MS, 0, 3, ACT, 100 * MiB, -1);
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "gemm");
        tg_use(g, t0 + 2 * MS, k, W);
        tg_use(g, t0 + 2 * MS, k, ACT);
        tg_free(g, t0 + 8 * MS, 0, 3, ACT, 100 * MiB);
    }
}

/* NVTX "train" (5 steps, 100 MiB activations each) then "validation" (8 batches). With
 * bKeep each batch keeps a 50 MiB output until validation ends (missing no_grad / outputs
 * stored with their graph); otherwise each batch uses 500 MiB and frees it. */
static void build_kept(const char *zPath, int bKeep, int64_t keep);

static void build(const char *zPath, int bKeep)
{
    build_kept(zPath, bKeep, 50 * MiB);
}

/* build() with each kept output `keep` bytes. */
static void build_kept(const char *zPath, int bKeep, int64_t keep)
{
    struct tg *g = tg_open(zPath);
    int64_t k, t0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    train_part(g);
    tg_nvtx(g, 60 * MS, 141 * MS, "Validation");
    for (int i = 0; i < 8; i++) {
        t0 = 60 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "val_step");
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "gemm");
        tg_use(g, t0 + 2 * MS, k, W);
        if (bKeep) {
            tg_alloc(g, t0 + 1 * MS, 0, 3, OUT + i * 0x10000000LL, keep, -1);
            tg_use(g, t0 + 2 * MS, k, OUT + i * 0x10000000LL);
        } else {
            tg_alloc(g, t0 + 1 * MS, 0, 3, OUT, 500 * MiB, -1);
            tg_use(g, t0 + 2 * MS, k, OUT);
            tg_free(g, t0 + 8 * MS, 0, 3, OUT, 500 * MiB);
        }
    }
    if (bKeep)
        for (int i = 0; i < 8; i++) tg_free(g, 140 * MS, 0, 3, OUT + i * 0x10000000LL, keep);
    ASSERT_EQ(0, tg_close(g));
}

static void run(const char *zPath, struct vt_result *r)
{
    struct vt_opts o;
    const char *az[1] = {zPath};
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, r));
}

TEST(missing_no_grad_grows_batch_by_batch)
{
    const char *zPath = tg_path("nograd.db");
    struct vt_result r;
    build(zPath, 1);
    run(zPath, &r);
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_EQ(2, t->ph.n);
    ASSERT_EQ(VT_PHASE_TRAIN, t->ph.a[0].kind);
    ASSERT_EQ(VT_PHASE_EVAL, t->ph.a[1].kind);
    ASSERT_EQ(8, t->ph.a[1].nIter);
    ASSERT_EQ(300 * MiB, t->ph.a[0].peak);
    ASSERT_EQ(600 * MiB, t->ph.a[1].peak);
    ASSERT_EQ(8, t->ph.a[1].nTop); /* at the validation peak: the weights and 8 kept outputs (7 fit) */
    ASSERT_EQ(200 * MiB, t->ph.a[1].aTop[0].bytes);
    ASSERT_EQ(50 * MiB, t->ph.a[1].aTop[7].bytes);
    ASSERT_EQ(2, t->ph.a[0].nTop); /* at the training peak: weights and activations */
    ASSERT_EQ(100 * MiB, t->ph.a[0].aTop[1].bytes);
    ASSERT_EQ(2, r.nFind);
    ASSERT_STREQ("validation_spike", r.aFind[0].zKind);
    ASSERT_EQ(VT_SEV_HIGH, r.aFind[0].severity);
    ASSERT_EQ(350 * MiB, r.aFind[0].bytes); /* 7 batches x 50 MiB */
    ASSERT_CONTAINS(r.aFind[0].zTitle, "grows batch by batch");
    ASSERT_CONTAINS(r.aFind[0].zFix, "torch.no_grad()");
    ASSERT_STREQ("Validation", r.aFind[0].zPhase);
    ASSERT_STREQ("validation_spike", r.aFind[1].zKind);
    ASSERT_EQ(VT_SEV_MEDIUM, r.aFind[1].severity);
    ASSERT_EQ(300 * MiB, r.aFind[1].bytes);
    ASSERT_CONTAINS(r.aFind[1].zTitle, "peaks 300 MiB above training");
    vt__result_free(&r);
    tg_cleanup();
}

/* Predictions kept for the epoch's metric, 2 MiB a batch: growth, bounded and small: info, nothing to fix. */
TEST(small_kept_predictions_are_info)
{
    const char *zPath = tg_path("preds.db");
    struct vt_result r;
    build_kept(zPath, 1, 2 * MiB);
    run(zPath, &r);
    ASSERT_EQ(1, r.nFind);
    ASSERT_STREQ("validation_spike", r.aFind[0].zKind);
    ASSERT_CONTAINS(r.aFind[0].zTitle, "grows batch by batch");
    ASSERT_EQ(14 * MiB, r.aFind[0].bytes);
    ASSERT_EQ(VT_SEV_INFO, r.aFind[0].severity);
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "Under 32 MiB");
    vt__result_free(&r);
    tg_cleanup();
}

TEST(large_validation_batch_is_only_info)
{
    const char *zPath = tg_path("bigbatch.db");
    struct vt_result r;
    build(zPath, 0);
    run(zPath, &r);
    ASSERT_EQ(1, r.nFind);
    ASSERT_STREQ("validation_spike", r.aFind[0].zKind);
    ASSERT_EQ(VT_SEV_INFO, r.aFind[0].severity);
    ASSERT_EQ(400 * MiB, r.aFind[0].bytes);
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "larger evaluation batch");
    vt__result_free(&r);
    tg_cleanup();
}

TEST(phase_regex_override)
{
    const char *zPath = tg_path("nograd.db");
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    build(zPath, 1);
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    o.zPhaseRe = "^train$"; /* only the training range is a phase now */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.aTrace[0].ph.n);
    for (int i = 0; i < r.nFind; i++) ASSERT(strcmp(r.aFind[i].zKind, "validation_spike") != 0);
    vt__result_free(&r);
    o.zPhaseRe = "([";
    ASSERT_EQ(2, vt__analyze(az, 1, &o, &r)); /* VT_EXIT_USAGE */
    vt__result_free(&r);
    tg_cleanup();
}

/* The 'phases' sample: 17 MiB weights; NVTX "train" > "iter 0".."iter 4" with 3 activations of
 * 8 MiB + 4096 j each, freed; "validation" > "batch 0".."batch 5" keeping an output of
 * 10 MiB + 4096 b each until validation ends. */
TEST(phases_sample_shape)
{
    const char *zPath = tg_path("phases.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t ts = 1 * MS, k, s = -1;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    s = tg_stack(g, "phases.cu", 55, "alloc_filled");
    tg_alloc(g, ts, 0, 3, W, 17 * MiB, s);
    k = tg_kernel(g, ts + 100, ts + 200, "vt_sample_fill(float*, unsigned long, float)");
    tg_use(g, ts + 100, k, W);
    ts = 10 * MS;
    tg_nvtx(g, ts, ts + 5 * 10 * MS, "train");
    for (int it = 0; it < 5; it++, ts += 10 * MS) {
        char zName[32];
        snprintf(zName, sizeof zName, "iter %d", it);
        tg_nvtx(g, ts + 10, ts + 10 * MS - 10, zName);
        for (int j = 0; j < 3; j++) {
            tg_alloc(g, ts + (1 + j) * MS, 0, 3, ACT + j * 0x10000000LL, 8 * MiB + 4096 * j, s);
            k = tg_kernel(g, ts + (1 + j) * MS + 100, ts + (1 + j) * MS + 200, "vt_sample_fill(float*, unsigned long, float)");
            tg_use(g, ts + (1 + j) * MS + 100, k, ACT + j * 0x10000000LL);
        }
        for (int j = 0; j < 3; j++) tg_free(g, ts + 8 * MS + j, 0, 3, ACT + j * 0x10000000LL, 8 * MiB + 4096 * j);
    }
    ts += 5 * MS;
    tg_nvtx(g, ts, ts + 6 * 10 * MS, "validation");
    for (int b = 0; b < 6; b++, ts += 10 * MS) {
        char zName[32];
        snprintf(zName, sizeof zName, "batch %d", b);
        tg_nvtx(g, ts + 10, ts + 10 * MS - 10, zName);
        tg_alloc(g, ts + 1 * MS, 0, 3, OUT + b * 0x10000000LL, 10 * MiB + 4096 * b, s);
        k = tg_kernel(g, ts + 2 * MS, ts + 2 * MS + 100, "vt_sample_fill(float*, unsigned long, float)");
        tg_use(g, ts + 2 * MS, k, OUT + b * 0x10000000LL);
    }
    for (int b = 0; b < 6; b++) tg_free(g, ts + 1 * MS + b, 0, 3, OUT + b * 0x10000000LL, 10 * MiB + 4096 * b);
    tg_free(g, ts + 2 * MS, 0, 3, W, 17 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_EQ(0, t->f.bSegments);
    ASSERT_EQ(2, t->ph.n);
    ASSERT_EQ(11, t->ph.nIter);
    ASSERT_EQ(43003904, t->ph.a[0].peak);
    ASSERT_EQ(80801792, t->ph.a[1].peak);
    ASSERT_EQ(6, t->ph.a[1].nIter);
    int nSpike = 0, nOther = 0;
    for (int i = 0; i < r.nFind; i++) {
        if (!strcmp(r.aFind[i].zKind, "validation_spike")) {
            nSpike++;
            if (strstr(r.aFind[i].zTitle, "peaks")) ASSERT_EQ(80801792 - 43003904, r.aFind[i].bytes);
            else ASSERT_EQ(50 * MiB + 4096 * 10, r.aFind[i].bytes); /* batches 0..4 kept at batch 5 */
        } else {
            /* the weights are filled once and never used again: idle until freed */
            ASSERT_STREQ("retained", r.aFind[i].zKind);
            ASSERT_EQ(17 * MiB, r.aFind[i].bytes);
            nOther++;
        }
    }
    ASSERT_EQ(2, nSpike);
    ASSERT_EQ(1, nOther);
    vt__result_free(&r);
    tg_cleanup();
}

/* Operator ranges a profiler emits are neither phases nor iterations. */
TEST(operator_ranges_are_not_phases)
{
    const char *zPath = tg_path("ops.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    ASSERT(g);
    tg_nvtx(g, 1 * MS, 2 * MS, "aten::values");
    tg_nvtx(g, 3 * MS, 4 * MS, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
    tg_nvtx(g, 10 * MS, 50 * MS, "epoch 0 train");
    for (int i = 0; i < 4; i++) {
        tg_nvtx(g, (10 + 10 * i) * MS, (20 + 10 * i) * MS, i % 2 ? "Step 7" : "batch_12");
        tg_nvtx(g, (11 + 10 * i) * MS, (12 + 10 * i) * MS, "Optimizer.step#Adam.step");
    }
    tg_nvtx(g, 60 * MS, 70 * MS, "aten::_validate_sparse_coo_tensor_args");
    tg_alloc(g, 1 * MS, 0, 3, W, 2 * MiB, -1);
    tg_free(g, 70 * MS, 0, 3, W, 2 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.aTrace[0].ph.n);
    ASSERT_STREQ("epoch 0 train", r.aTrace[0].ph.a[0].zName);
    ASSERT_EQ(VT_PHASE_TRAIN, r.aTrace[0].ph.a[0].kind);
    ASSERT_EQ(4, r.aTrace[0].ph.nIter);
    ASSERT_EQ(4, r.aTrace[0].ph.a[0].nIter);
    vt__result_free(&r);
    tg_cleanup();
}

/* torch.profiler's ProfilerStep#N ranges are iterations by default; each one's kernels say
 * whether it trains (a backward kernel) or evaluates; library ranges that contain "eval" inside
 * a word (nvFuser's ExpressionEvaluator) are no phases. */
TEST(profiler_steps_are_iterations)
{
    const char *zPath = tg_path("profsteps.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    ASSERT(g);
    tg_nvtx(g, 500000, 600000, "ExpressionEvaluator::evaluate");
    tg_nvtx(g, 700000, 800000, "PrecomputedValues::bind");
    for (int i = 0; i < 6; i++) {
        int64_t t0 = (1 + 10 * i) * MS;
        char zName[32];
        snprintf(zName, sizeof zName, "ProfilerStep#%d", i + 2);
        tg_nvtx(g, t0, t0 + 10 * MS, zName);
        tg_kernel(g, t0 + 1 * MS, t0 + 2 * MS, "volta_sgemm_128x64_nn");
        if (i < 4) /* the last two steps are evaluation batches */
            tg_kernel(g, t0 + 3 * MS, t0 + 4 * MS, "void cudnn::bn_bw_1C11_kernel_new<float>()");
    }
    tg_alloc(g, 1 * MS, 0, 3, W, 2 * MiB, -1);
    tg_free(g, 60 * MS, 0, 3, W, 2 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_EQ(6, t->ph.nIter);
    ASSERT_STREQ("kernels", t->ph.zSource);
    ASSERT_EQ(2, t->ph.n);
    ASSERT_EQ(VT_PHASE_TRAIN, t->ph.a[0].kind);
    ASSERT_EQ(4, t->ph.a[0].nIter);
    ASSERT_EQ(VT_PHASE_EVAL, t->ph.a[1].kind);
    ASSERT_EQ(2, t->ph.a[1].nIter);
    ASSERT(t->ph.zDoubt == NULL);
    vt__result_free(&r);
    tg_cleanup();
}

/* Without NVTX, backward kernels whose runs give no step structure (forward-kernel counts
 * spread over 100x, no period, no clear gap): no phase is made, the doubt is said, and memory
 * growing in a long forward-only stretch is no validation-spike finding. */
TEST(doubtful_kernel_phases_make_no_claim)
{
    static const int aF[] = {1, 3, 7, 12, 20, 33, 50, 80, 130, 2, 5, 9, 15, 26, 41, 65, 105};
    const char *zPath = tg_path("doubt.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t ts = 1 * MS;
    ASSERT(g);
    tg_alloc(g, 500000, 0, 3, W, 200 * MiB, -1);
    for (size_t i = 0; i < sizeof aF / sizeof aF[0]; i++) {
        for (int k = 0; k < aF[i]; k++, ts += 10000) tg_kernel(g, ts, ts + 5000, "volta_sgemm_128x64_nn");
        tg_kernel(g, ts, ts + 5000, "void cudnn::detail::dgrad_engine<float>()");
        ts += 10000;
    }
    /* a forward-only stretch with growing memory at the end */
    for (int k = 0; k < 400; k++, ts += 10000) {
        tg_kernel(g, ts, ts + 5000, "volta_sgemm_128x64_nn");
        if (k % 50 == 0) tg_alloc(g, ts, 0, 3, OUT + k * 0x1000000LL, 64 * MiB, -1);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_EQ(0, t->ph.n);
    ASSERT_EQ(0, t->ph.nIter);
    ASSERT(t->ph.zDoubt != NULL);
    for (int i = 0; i < r.nFind; i++) ASSERT(strcmp(r.aFind[i].zKind, "validation_spike") != 0);
    vt__result_free(&r);
    tg_cleanup();
}

/* Steps from kernel names without NVTX and without optimizer kernels (plain SGD): 12 steps of
 * 30 forward kernels and a backward pass, an evaluation window of 90 forward kernels before
 * steps 5 and 10. With FRAG each backward kernel is followed by 3 kernels of unknown role (a
 * backward pass interleaved with GEMMs, as cuDNN ResNet steps are): still 12 steps and 2
 * evaluation windows, not a step per backward kernel with every forward pass called evaluation.
 * With CUT the backward pass is one backward kernel, 20 of unknown role, then 8 backward
 * kernels: two segments a step whose counts look alike (30 and 20), told apart by their
 * backward kernels (1 and 8). The window starts after the last step's SGD kernels, when the
 * host launched its first kernel. */
enum { CONTIG, FRAG, CUT };
static void kernel_steps(int mode)
{
    const char *zPath = tg_path(mode == FRAG ? "frag.db" : mode == CUT ? "cut.db" : "contig.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t ts = 1 * MS, evalTs = -1, sgdEnd = -1;
    ASSERT(g);
    tg_alloc(g, 500000, 0, 3, W, 64 * MiB, -1);
    for (int step = 0; step < 12; step++) {
        if (step == 5 || step == 10) {
            if (step == 5) evalTs = ts, sgdEnd = ts - 10000 + 5000;
            for (int k = 0; k < 90; k++, ts += 10000) {
                int64_t corr = tg_kernel(g, ts, ts + 5000, "void cudnn::bn_fw_inf_1C11_kernel_NCHW<float>()");
                if (mode == CUT) { /* launched by a host 0.3 ms ahead of the device */
                    struct tg_apirow a = {100, corr, ts - 300000, ts - 295000, 1, 0, 0, TG_NULL, TG_NULL,
                                          TG_NULL, TG_NULL, TG_NULL, TG_NULL};
                    tg_api_row(g, &a);
                }
            }
            if (mode == CUT && step == 5) /* the window's first batch, allocated before its kernels run */
                tg_alloc(g, evalTs - 250000, 0, 3, OUT, 8 * MiB, -1);
        }
        for (int k = 0; k < 30; k++, ts += 10000) tg_kernel(g, ts, ts + 5000, "volta_scudnn_128x64_relu_medium_nn_v1");
        for (int k = 0; k < (mode == CUT ? 9 : 8); k++) {
            tg_kernel(g, ts, ts + 5000, "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>()");
            ts += 10000;
            for (int u = 0; mode == FRAG && u < 3; u++, ts += 10000) tg_kernel(g, ts, ts + 5000, "volta_sgemm_128x64_nt");
            for (int u = 0; mode == CUT && k == 0 && u < 20; u++, ts += 10000) tg_kernel(g, ts, ts + 5000, "volta_sgemm_128x64_nt");
        }
        for (int k = 0; k < 4; k++, ts += 10000) /* SGD: elementwise kernels */
            tg_kernel(g, ts, ts + 5000, "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>()");
    }
    tg_free(g, ts, 0, 3, W, 64 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_STREQ("kernels", t->ph.zSource);
    ASSERT(t->ph.zDoubt == NULL);
    ASSERT_EQ(12, t->ph.nIter);
    ASSERT_EQ(5, t->ph.n);
    for (int i = 0; i < 5; i++) ASSERT_EQ(i % 2 ? VT_PHASE_EVAL : VT_PHASE_TRAIN, t->ph.a[i].kind);
    ASSERT_EQ(5, t->ph.a[0].nIter);
    ASSERT_EQ(5, t->ph.a[2].nIter);
    ASSERT_EQ(2, t->ph.a[4].nIter);
    /* the evaluation window is its 90 kernels, from the host's launch of the first where the
     * trace has it; the SGD kernels before it are training's */
    ASSERT_EQ(mode == CUT ? evalTs - 300000 : evalTs, t->ph.a[1].start);
    ASSERT_EQ(90 * 10000, t->ph.a[1].end - t->ph.a[1].start + (mode == CUT ? -300000 : 0));
    if (mode == CUT) ASSERT_EQ(1, vt__phase_at(t, evalTs - 250000));
    if (mode == CUT) ASSERT_EQ(t->ph.a[1].start, t->ph.a[0].end);
    else ASSERT(t->ph.a[0].end >= sgdEnd);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(kernel_steps_contiguous_backward) { kernel_steps(CONTIG); }
TEST(kernel_steps_fragmented_backward) { kernel_steps(FRAG); }
TEST(kernel_steps_backward_cut_in_two) { kernel_steps(CUT); }

/* Steps from kernel names (no NVTX), then a forward pass that allocates 2 GiB and dies at an OOM before its
 * backward: the forward-only stretch is inferred as evaluation, but the OOM cut it short, so it is no known
 * evaluation: no validation-spike claim (the memory is the OOM's), one OOM finding. bGoesOn: the loop catches
 * the error, drops the batch and trains on (the job does not end at it). */
static void forward_cut_short_at(int bGoesOn, int bEarly);

static void forward_cut_short(int bGoesOn)
{
    forward_cut_short_at(bGoesOn, 0);
}

/* forward_cut_short(); bEarly: the request (2 GiB, which would fit beside what the process holds) failed a first
 * time a third into the forward pass, which ran on (1), or the same size (3 GiB) was asked by the convolution just
 * before it began (2), and again (one failure) where its kernels stop. */
static void forward_cut_short_at(int bGoesOn, int bEarly)
{
    const char *zPath = tg_path("cut_short.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t ts = 1 * MS, sAct;
    int nOom = 0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sAct = tg_stack(g, "model.py", 61, "forward");
    tg_alloc(g, 500000, 0, 3, W, 64 * MiB, -1);
    for (int step = 0; step < 8; step++) {
        tg_alloc(g, ts, 0, 3, ACT, 128 * MiB, sAct);
        for (int k = 0; k < 30; k++, ts += 10000) tg_kernel(g, ts, ts + 5000, "volta_scudnn_128x64_relu_medium_nn_v1");
        for (int k = 0; k < 8; k++, ts += 10000)
            tg_kernel(g, ts, ts + 5000, "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>()");
        tg_free(g, ts, 0, 3, ACT, 128 * MiB);
        for (int k = 0; k < 4; k++, ts += 10000)
            tg_kernel(g, ts, ts + 5000, "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>()");
    }
    for (int k = 0; k < 90; k++, ts += 10000) {
        if (k % 10 == 0) tg_alloc(g, ts, 0, 3, OUT + k * 0x10000000LL, 256 * MiB, sAct);
        if (bEarly == 2 && k == 0) tg_oom(g, ts - 2000, 0, 3 * GiB, 2 * GiB, 16 * GiB, tg_stack(g, "conv.py", 456, "_conv_forward"));
        if (bEarly == 1 && k == 30) tg_oom(g, ts + 1000, 0, 2 * GiB, 1 * GiB, 16 * GiB, sAct);
        tg_kernel(g, ts, ts + 5000, "volta_scudnn_128x64_relu_medium_nn_v1");
    }
    tg_oom(g, ts, 0, bEarly == 2 ? 3 * GiB : bEarly ? 2 * GiB : 8 * GiB, bEarly == 2 ? 2 * GiB : 1 * GiB, 16 * GiB, sAct);
    if (bGoesOn) { /* except torch.cuda.OutOfMemoryError: the batch's tensors go, training goes on */
        ts += 5000;
        for (int k = 0; k < 90; k += 10) tg_free(g, ts, 0, 3, OUT + k * 0x10000000LL, 256 * MiB);
        int64_t sIn = tg_stack(g, "train.py", 61, "train_one_epoch"); /* x.to(device): the next batch */
        for (int step = 0; step < 8; step++) {
            tg_alloc(g, ts, 0, 3, ACT + 0x800000000LL, 16 * MiB, sIn);
            tg_alloc(g, ts, 0, 3, ACT, 128 * MiB, sAct);
            for (int k = 0; k < 30; k++, ts += 10000) tg_kernel(g, ts, ts + 5000, "volta_scudnn_128x64_relu_medium_nn_v1");
            for (int k = 0; k < 8; k++, ts += 10000)
                tg_kernel(g, ts, ts + 5000, "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>()");
            tg_free(g, ts, 0, 3, ACT, 128 * MiB);
            tg_free(g, ts, 0, 3, ACT + 0x800000000LL, 16 * MiB);
            for (int k = 0; k < 4; k++, ts += 10000)
                tg_kernel(g, ts, ts + 5000, "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>()");
        }
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    struct vt_trace *t = &r.aTrace[0];
    int nEval = 0;
    ASSERT_STREQ("kernels", t->ph.zSource);
    ASSERT(t->ph.n >= 2);
    for (int i = 0; i < t->ph.n; i++) nEval += t->ph.a[i].kind == VT_PHASE_EVAL;
    ASSERT_EQ(1, nEval); /* the cut-short forward pass, inferred as evaluation */
    ASSERT_EQ(bGoesOn ? VT_PHASE_TRAIN : VT_PHASE_EVAL, t->ph.a[t->ph.n - 1].kind);
    ASSERT(bGoesOn ? t->crashTs < 0 : t->crashTs >= 0);
    ASSERT_EQ(1, t->nFail);
    ASSERT_EQ(bEarly ? 2 : 1, t->aFail[0].nAttempt);
    for (int i = 0; i < r.nFind; i++) {
        nOom += !strcmp(r.aFind[i].zKind, "oom");
        if (!strcmp(r.aFind[i].zKind, "validation_spike")) ASSERT_EQ(VT_SEV_INFO, r.aFind[i].severity);
    }
    ASSERT_EQ(1, nOom);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(forward_cut_short_by_the_final_oom_is_no_evaluation) { forward_cut_short(0); }
/* The same OOM caught, the batch skipped, training going on: still no evaluation (it was a HIGH "peaks above
 * training" with the OOM in the phase). */
TEST(forward_cut_short_by_a_caught_oom_is_no_evaluation) { forward_cut_short(1); }
/* The caught OOM's request failed a first time a third into the forward pass, which ran on, and again where its
 * kernels stop (one failure of two attempts): still the step's forward pass cut short (it was a HIGH "peaks above
 * training", judged by the first attempt, which lies early in the phase). */
TEST(forward_cut_short_by_a_retried_caught_oom_is_no_evaluation) { forward_cut_short_at(1, 1); }
/* Its first attempt just before the forward pass's first kernel (cuDNN's probes as the step begins), outside the
 * inferred phase. */
TEST(forward_cut_short_by_a_caught_oom_begun_before_it_is_no_evaluation) { forward_cut_short_at(1, 2); }

/* Killed by an OOM inside validation: the range never closed still makes a phase to the end. */
TEST(unclosed_validation_range)
{
    const char *zPath = tg_path("killed.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    ASSERT(g);
    tg_meta(g, "closed_cleanly", "0");
    tg_nvtx(g, 1 * MS, 50 * MS, "train");
    {
        char zSql[200];
        snprintf(zSql, sizeof zSql, "INSERT INTO nvtx_range(t, dur, kind, name_id) VALUES(%lld, NULL, 0, %lld)",
                 (long long)(60 * MS), (long long)tg_string(g, "val"));
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(g->db, zSql, NULL, NULL, NULL));
    }
    tg_alloc(g, 2 * MS, 0, 3, W, 1 * GiB, -1);
    tg_oom(g, 70 * MS, 0, 20 * GiB, 2 * GiB, 16 * GiB, -1);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(2, r.aTrace[0].ph.n);
    ASSERT_EQ(VT_PHASE_EVAL, r.aTrace[0].ph.a[1].kind);
    ASSERT_EQ(70 * MS + 1, r.aTrace[0].ph.a[1].end);
    int nOom = 0;
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "oom")) {
            nOom++;
            ASSERT_STREQ("val", r.aFind[i].zPhase);
        }
    ASSERT_EQ(1, nOom);
    vt__result_free(&r);
    tg_cleanup();
}

/* Validation run inside the "train" range: the training phase is split around it. */
TEST(validation_nested_in_training_range)
{
    const char *zPath = tg_path("nested.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    ASSERT(g);
    tg_nvtx(g, 1 * MS, 100 * MS, "train");
    tg_nvtx(g, 30 * MS, 40 * MS, "validate");
    tg_nvtx(g, 32 * MS, 34 * MS, "val_step");
    tg_nvtx(g, 70 * MS, 80 * MS, "validate");
    tg_alloc(g, 2 * MS, 0, 3, W, 2 * MiB, -1);
    tg_free(g, 99 * MS, 0, 3, W, 2 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_EQ(5, t->ph.n);
    ASSERT_EQ(VT_PHASE_TRAIN, t->ph.a[0].kind);
    ASSERT_EQ(30 * MS, t->ph.a[0].end);
    ASSERT_EQ(VT_PHASE_EVAL, t->ph.a[1].kind);
    ASSERT_EQ(1, t->ph.a[1].nIter);
    ASSERT_EQ(VT_PHASE_TRAIN, t->ph.a[2].kind);
    ASSERT_EQ(40 * MS, t->ph.a[2].start);
    ASSERT_EQ(70 * MS, t->ph.a[2].end);
    ASSERT_EQ(VT_PHASE_EVAL, t->ph.a[3].kind);
    ASSERT_EQ(VT_PHASE_TRAIN, t->ph.a[4].kind);
    ASSERT_EQ(100 * MS, t->ph.a[4].end);
    vt__result_free(&r);
    tg_cleanup();
}

/* Missing no_grad at segment level: graphs kept during validation make the allocator reserve a
 * 20 MiB segment every third batch (a staircase). */
TEST(segment_level_validation_staircase)
{
    const char *zPath = tg_path("seg_val.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int nSeg = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    for (int i = 0; i < 10; i++) tg_alloc(g, (1 + i) * 1000, 0, 3, W + i * 0x10000000LL, 20 * MiB, -1);
    tg_nvtx(g, 1 * MS, 51 * MS, "train");
    tg_nvtx(g, 60 * MS, 180 * MS, "validation");
    for (int b = 0; b < 12; b++) {
        int64_t t0 = 60 * MS + b * 10 * MS;
        char zName[32];
        snprintf(zName, sizeof zName, "batch %d", b);
        tg_nvtx(g, t0, t0 + 10 * MS, zName);
        if (b % 3 == 2) tg_alloc(g, t0 + 2 * MS, 0, 3, OUT + (nSeg++) * 0x10000000LL, 20 * MiB, -1);
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.aTrace[0].f.bSegments);
    int nGrow = 0;
    for (int i = 0; i < r.nFind; i++)
        if (strstr(r.aFind[i].zTitle, "grows batch by batch")) {
            nGrow++;
            ASSERT_EQ(60 * MiB, r.aFind[i].bytes); /* 3 segments before the last batch started */
        }
    ASSERT_EQ(1, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

/* Missing no_grad with stacks: each batch keeps a 50 MiB output made at train.py:104 and a
 * 1 MiB loss made at train.py:105; the growth finding names the line whose allocations grow. */
TEST(validation_growth_at_its_call_site)
{
    const char *zPath = tg_path("grow_site.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t sOut, sLoss, k;
    int nGrow = 0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sOut = tg_stack(g, "train.py", 104, "evaluate");
    sLoss = tg_stack(g, "train.py", 105, "evaluate");
    train_part(g);
    tg_nvtx(g, 60 * MS, 141 * MS, "validation");
    for (int i = 0; i < 8; i++) {
        int64_t t0 = 60 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "val_step");
        tg_alloc(g, t0 + 1 * MS, 0, 3, OUT + i * 0x10000000LL, 50 * MiB, sOut);
        tg_alloc(g, t0 + 2 * MS, 0, 3, OUT + i * 0x10000000LL + 0x8000000LL, 1 * MiB, sLoss);
        k = tg_kernel(g, t0 + 3 * MS, t0 + 4 * MS, "gemm");
        tg_use(g, t0 + 3 * MS, k, W);
        tg_use(g, t0 + 3 * MS, k, OUT + i * 0x10000000LL);
    }
    for (int i = 0; i < 8; i++) {
        tg_free(g, 140 * MS, 0, 3, OUT + i * 0x10000000LL, 50 * MiB);
        tg_free(g, 140 * MS, 0, 3, OUT + i * 0x10000000LL + 0x8000000LL, 1 * MiB);
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    for (int i = 0; i < r.nFind; i++)
        if (strstr(r.aFind[i].zTitle, "grows batch by batch")) {
            nGrow++;
            ASSERT_STREQ("train.py:104 in evaluate", r.aFind[i].zSite);
            ASSERT_EQ(sOut, r.aFind[i].stackId);
            ASSERT_STREQ("validation", r.aFind[i].zPhase);
            ASSERT_CONTAINS(r.aFind[i].zEvidence, "8 allocations from this site");
        }
    ASSERT_EQ(1, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * Missing no_grad with the graph kept: each validation batch keeps a 25 MiB activation from each of four
 * layers' lines (model.py:10..40), all under one call of the model (train.py:104 in evaluate); training ran
 * the same layers first, under train.py:66. No line holds half of the growth: it is named at the call
 * the kept tensors were made under in the phase (the line to wrap in torch.no_grad()), not at the
 * training call that first made those lines' stacks, nor at the phase.
 */
TEST(validation_graph_growth_at_the_call_it_was_made_under)
{
    const char *zPath = tg_path("grow_graph.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t aTrain[4], aVal[4], k;
    int nGrow = 0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    for (int l = 0; l < 4; l++) {
        struct tg_frame aF[2] = {{VT_FRAME_PYTHON, 0, "Layer.forward", "model.py", NULL, 10 * (l + 1)},
                                 {VT_FRAME_PYTHON, 0, "train_one_epoch", "train.py", NULL, 66}};
        aTrain[l] = tg_stack_frames(g, aF, 2, 0x5100 + l);
        aF[1].zFunction = "evaluate";
        aF[1].line = 104;
        aVal[l] = tg_stack_frames(g, aF, 2, 0x5200 + l);
    }
    tg_alloc(g, 1 * MS, 0, 3, W, 200 * MiB, -1);
    tg_nvtx(g, 5 * MS, 55 * MS, "train");
    for (int i = 0; i < 5; i++) {
        int64_t t0 = 5 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "train_step");
        for (int l = 0; l < 4; l++) tg_alloc(g, t0 + 1 * MS, 0, 3, ACT + l * 0x8000000LL, 25 * MiB, aTrain[l]);
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "gemm");
        tg_use(g, t0 + 2 * MS, k, W);
        for (int l = 0; l < 4; l++) {
            tg_use(g, t0 + 2 * MS, k, ACT + l * 0x8000000LL);
            tg_free(g, t0 + 8 * MS, 0, 3, ACT + l * 0x8000000LL, 25 * MiB);
        }
    }
    tg_nvtx(g, 60 * MS, 141 * MS, "validation");
    for (int i = 0; i < 8; i++) {
        int64_t t0 = 60 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "val_step");
        k = tg_kernel(g, t0 + 3 * MS, t0 + 4 * MS, "gemm");
        tg_use(g, t0 + 3 * MS, k, W);
        for (int l = 0; l < 4; l++) {
            tg_alloc(g, t0 + 1 * MS, 0, 3, OUT + i * 0x10000000LL + l * 0x2000000LL, 25 * MiB, aVal[l]);
            tg_use(g, t0 + 3 * MS, k, OUT + i * 0x10000000LL + l * 0x2000000LL);
        }
    }
    for (int i = 0; i < 8; i++)
        for (int l = 0; l < 4; l++) tg_free(g, 140 * MS, 0, 3, OUT + i * 0x10000000LL + l * 0x2000000LL, 25 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    for (int i = 0; i < r.nFind; i++)
        if (strstr(r.aFind[i].zTitle, "grows batch by batch")) {
            nGrow++;
            ASSERT_STREQ("train.py:104 in evaluate", r.aFind[i].zSite);
            ASSERT_STREQ("validation", r.aFind[i].zPhase);
            ASSERT_CONTAINS(r.aFind[i].zEvidence, "32 allocations (800 MiB) made under this line");
            ASSERT_CONTAINS(r.aFind[i].zEvidence, "from 4 call sites inside it");
        }
    ASSERT_EQ(1, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * Missing no_grad at tensor level, the batches unmarked (no per-batch range): the kept graphs are
 * released when evaluate() returns, inside the phase's range. The phase's last sixteenth then
 * falls back to its start; the rise before it is still growth, at the line that keeps them.
 */
TEST(validation_growth_released_at_its_end)
{
    const char *zPath = tg_path("grow_release.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t sOut, k;
    int nGrow = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sOut = tg_stack(g, "train.py", 104, "evaluate");
    train_part(g);
    tg_nvtx(g, 60 * MS, 142 * MS, "validation");
    for (int i = 0; i < 8; i++) {
        int64_t t0 = 60 * MS + i * 10 * MS;
        tg_alloc(g, t0 + 1 * MS, 0, 3, OUT + i * 0x10000000LL, 50 * MiB, sOut);
        k = tg_kernel(g, t0 + 3 * MS, t0 + 4 * MS, "gemm");
        tg_use(g, t0 + 3 * MS, k, W);
        tg_use(g, t0 + 3 * MS, k, OUT + i * 0x10000000LL);
    }
    for (int i = 0; i < 8; i++) tg_free(g, 140 * MS, 0, 3, OUT + i * 0x10000000LL, 50 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(0, r.aTrace[0].ph.a[1].nIter);
    for (int i = 0; i < r.nFind; i++) {
        ASSERT(!strstr(r.aFind[i].zEvidence, "larger evaluation batch"));
        if (strstr(r.aFind[i].zTitle, "grows batch by batch")) {
            nGrow++;
            ASSERT(r.aFind[i].severity >= VT_SEV_MEDIUM);
            ASSERT_STREQ("train.py:104 in evaluate", r.aFind[i].zSite);
            ASSERT_STREQ("validation", r.aFind[i].zPhase);
            ASSERT_CONTAINS(r.aFind[i].zFix, "torch.no_grad()");
        }
    }
    ASSERT_EQ(1, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * Three evaluation batches (marked, too few to be the baseline's points: sixteenths are), each
 * keeping its graph, 1 GiB made in a burst at its start and nothing else: the phase's last
 * sixteenths have no event, so they stand at the level it ended at. Growth at the forward's line.
 */
TEST(validation_growth_in_bursts)
{
    const char *zPath = tg_path("grow_bursts.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t sOut, k;
    int nGrow = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sOut = tg_stack(g, "train.py", 104, "evaluate");
    train_part(g);
    tg_nvtx(g, 60 * MS, 150 * MS, "validation");
    for (int i = 0; i < 3; i++) {
        int64_t t0 = 60 * MS + i * 30 * MS;
        char zName[32];
        snprintf(zName, sizeof zName, "batch %d", i);
        tg_nvtx(g, t0, t0 + 30 * MS, zName);
        for (int j = 0; j < 4; j++) {
            tg_alloc(g, t0 + 1 * MS + j * 100000, 0, 3, OUT + (i * 4 + j) * 0x10000000LL, 256 * MiB, sOut);
            k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "gemm");
            tg_use(g, t0 + 2 * MS, k, OUT + (i * 4 + j) * 0x10000000LL);
        }
    }
    for (int i = 0; i < 12; i++) tg_free(g, 160 * MS, 0, 3, OUT + i * 0x10000000LL, 256 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(3, r.aTrace[0].ph.a[1].nIter);
    for (int i = 0; i < r.nFind; i++)
        if (strstr(r.aFind[i].zTitle, "grows batch by batch")) {
            nGrow++;
            ASSERT(r.aFind[i].severity >= VT_SEV_MEDIUM);
            ASSERT_STREQ("train.py:104 in evaluate", r.aFind[i].zSite);
            ASSERT_EQ(3 * GiB, r.aFind[i].bytes);
        }
    ASSERT_EQ(1, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

/* Training (peak 300 MiB) then a validation of 8 batches of 500 MiB each, freed (a larger evaluation batch), in
 * whose batch 3 one cudaMalloc fails and the allocator's retry at once gets the same 500 MiB (bRetry), or a
 * longer batch's 1 GiB fails, the error reaches the program and the batch is skipped (!bRetry). Only an error that reached the program makes
 * the peak above training HIGH: a recovered retry failed nothing (it was HIGH "An out-of-memory error happened in
 * this phase" on a beam search whose growing cache outgrew the cached segments). */
static void peak_with_oom(int bRetry)
{
    const char *zPath = tg_path(bRetry ? "peak_retry.db" : "peak_oom.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sOut, k;
    int nPeak = 0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sOut = tg_stack(g, "train.py", 104, "evaluate");
    train_part(g);
    tg_nvtx(g, 60 * MS, 141 * MS, "validation");
    for (int i = 0; i < 8; i++) {
        int64_t t0 = 60 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "val_step");
        if (i == 3) {
            /* retried: the same 500 MiB at once; else 1 GiB (a longer batch) with 900 MiB free, skipped */
            tg_oom(g, t0 + 1 * MS, 0, bRetry ? 500 * MiB : 1 * GiB, bRetry ? 300 * MiB : 900 * MiB, 16 * GiB, sOut);
            if (!bRetry) continue; /* except OutOfMemoryError: the batch is skipped */
        }
        tg_alloc(g, t0 + 1 * MS + (i == 3 ? 10000 : 0), 0, 3, OUT, 500 * MiB, sOut);
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "gemm");
        tg_use(g, t0 + 2 * MS, k, W);
        tg_use(g, t0 + 2 * MS, k, OUT);
        tg_free(g, t0 + 8 * MS, 0, 3, OUT, 500 * MiB);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    for (int i = 0; i < r.nFind; i++) {
        if (strcmp(r.aFind[i].zKind, "validation_spike")) continue;
        ASSERT_CONTAINS(r.aFind[i].zTitle, "peaks 400 MiB above training");
        ASSERT_EQ(bRetry ? VT_SEV_INFO : VT_SEV_HIGH, r.aFind[i].severity);
        nPeak++;
    }
    ASSERT_EQ(1, nPeak);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(peak_with_a_recovered_retry_is_info) { peak_with_oom(1); }
TEST(peak_with_an_oom_that_reached_the_program_is_high) { peak_with_oom(0); }

/* Tensor level: training (peak 300 MiB) then a validation of 3 batches (NVTX "batch N"), each allocating 300 MiB:
 * kept until validation ends (bKeep: a missing no_grad whose losses are kept as tensors) or freed at the batch's
 * end. Three batches are too few for the trend test, but each kept memory past itself and the lowest level rose
 * with each: growth, at the line (it had no finding: the release at the phase's end hid the rise). */
static void three_batches(int bKeep)
{
    const char *zPath = tg_path(bKeep ? "three_kept.db" : "three_freed.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sOut, k;
    int nGrow = 0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sOut = tg_stack(g, "train.py", 104, "evaluate");
    train_part(g);
    tg_nvtx(g, 60 * MS, 141 * MS, "validation");
    for (int b = 0; b < 3; b++) {
        int64_t t0 = 60 * MS + b * 25 * MS;
        char zName[32];
        snprintf(zName, sizeof zName, "batch %d", b);
        tg_nvtx(g, t0, t0 + 25 * MS, zName);
        tg_alloc(g, t0 + 1 * MS, 0, 3, OUT + b * 0x10000000LL, 300 * MiB, sOut);
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "gemm");
        tg_use(g, t0 + 2 * MS, k, W);
        tg_use(g, t0 + 2 * MS, k, OUT + b * 0x10000000LL);
        if (!bKeep) tg_free(g, t0 + 20 * MS, 0, 3, OUT + b * 0x10000000LL, 300 * MiB);
    }
    if (bKeep)
        for (int b = 0; b < 3; b++) tg_free(g, 140 * MS, 0, 3, OUT + b * 0x10000000LL, 300 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(3, r.aTrace[0].ph.a[1].nIter);
    for (int i = 0; i < r.nFind; i++)
        if (strstr(r.aFind[i].zTitle, "grows batch by batch")) {
            nGrow++;
            ASSERT(r.aFind[i].severity >= VT_SEV_MEDIUM);
            ASSERT_EQ(600 * MiB, r.aFind[i].bytes);
            ASSERT_STREQ("train.py:104 in evaluate", r.aFind[i].zSite);
        }
    ASSERT_EQ(bKeep ? 1 : 0, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * Tensor level, a validation of 10 batches without batch ranges (sixteenths stand for batches): each batch
 * makes 100 MiB of activations it frees, and replaces the logits gathered so far by a tensor 50 MiB larger
 * (all = torch.cat([all, logits]) at train.py:109), freeing the old one. Each gathered tensor lives one batch,
 * under two sixteenths, so none counts as kept past its batch, but the latest holds the whole rise: the growth
 * is named at train.py:109 (it was named "phase 'validation'").
 */
TEST(validation_growth_by_replacement_at_its_site)
{
    const char *zPath = tg_path("val_cat.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t sCat, sAct, k;
    int nGrow = 0;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sCat = tg_stack(g, "train.py", 109, "evaluate");
    sAct = tg_stack(g, "model.py", 30, "forward");
    train_part(g);
    tg_nvtx(g, 60 * MS, 161 * MS, "validation");
    for (int b = 0; b < 10; b++) {
        int64_t t0 = 60 * MS + b * 10 * MS, aCat = OUT + (b % 2) * 0x40000000LL;
        tg_alloc(g, t0 + 1 * MS, 0, 3, ACT, 100 * MiB, sAct);
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "gemm");
        tg_use(g, t0 + 2 * MS, k, W);
        tg_use(g, t0 + 2 * MS, k, ACT);
        tg_alloc(g, t0 + 4 * MS, 0, 3, aCat, (b + 1) * 50 * MiB, sCat);
        if (b > 0) tg_free(g, t0 + 5 * MS, 0, 3, OUT + ((b - 1) % 2) * 0x40000000LL, b * 50 * MiB);
        tg_free(g, t0 + 8 * MS, 0, 3, ACT, 100 * MiB);
    }
    tg_free(g, 160 * MS, 0, 3, OUT + 0x40000000LL, 500 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(0, r.aTrace[0].ph.a[1].nIter);
    for (int i = 0; i < r.nFind; i++)
        if (strstr(r.aFind[i].zTitle, "grows batch by batch")) {
            nGrow++;
            ASSERT(r.aFind[i].severity >= VT_SEV_MEDIUM);
            ASSERT_STREQ("train.py:109 in evaluate", r.aFind[i].zSite);
            ASSERT_CONTAINS(r.aFind[i].zEvidence, "each replaced by a larger one");
        }
    ASSERT_EQ(1, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(three_batches_keeping_memory_grow) { three_batches(1); }
TEST(three_batches_freeing_memory_do_not_grow) { three_batches(0); }

/* Missing no_grad at segment level where the cache hides the growth: validation first reuses
 * the segments training cached (the live baseline stays flat), then adds a 20 MiB segment at
 * train.py:104 in each of its last 5 batches, above the training peak. The growth is
 * reported at the segments' site, saying the attribution is at segment level. */
static void segment_phase_adds(int bStaircase)
{
    const char *zPath = tg_path(bStaircase ? "seg_stair.db" : "seg_hidden.db");
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    const char *az[1] = {zPath};
    int64_t sOut;
    int nGrow = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    sOut = tg_stack(g, "train.py", 104, "evaluate");
    for (int i = 0; i < 20; i++) tg_alloc(g, (1 + i) * 1000, 0, 3, W + i * 0x10000000LL, 20 * MiB, -1);
    tg_nvtx(g, 1 * MS, 51 * MS, "train");
    tg_nvtx(g, 60 * MS, 160 * MS, "validation");
    for (int b = 0; b < 10; b++) {
        int64_t t0 = 60 * MS + b * 10 * MS;
        char zName[32];
        snprintf(zName, sizeof zName, "batch %d", b);
        tg_nvtx(g, t0, t0 + 10 * MS, zName);
        if (!bStaircase && b >= 5) tg_alloc(g, t0 + 2 * MS, 0, 3, OUT + b * 0x10000000LL, 20 * MiB, sOut);
        if (bStaircase == 1 && b >= 5) /* one segment for the longest batch; small-pool segments otherwise */
            tg_alloc(g, t0 + 2 * MS, 0, 3, OUT + b * 0x10000000LL, b == 6 ? 200 * MiB : 2 * MiB, sOut);
        if (bStaircase == 2 && (b == 0 || b % 3 == 1)) /* the first batch's shape cached at once, then a few segments */
            tg_alloc(g, t0 + 2 * MS, 0, 3, OUT + b * 0x10000000LL, b == 0 ? 400 * MiB : 20 * MiB, sOut);
        if (bStaircase == 3 && (b == 5 || b == 6 || b == 7 || b == 9)) /* the cache's free blocks run out near the end */
            tg_alloc(g, t0 + 2 * MS, 0, 3, OUT + b * 0x10000000LL, b == 9 ? 200 * MiB : 20 * MiB, sOut);
        if (bStaircase == 4 && b == 0) /* a larger evaluation batch's shape cached at once */
            tg_alloc(g, t0 + 2 * MS, 0, 3, OUT + b * 0x10000000LL, 400 * MiB, sOut);
        if (bStaircase == 4 && b % 2 == 1) /* the loader pinning a block for the larger batches in flight */
            tg_alloc(g, t0 + 3 * MS, 0, 2, OUT + 0x1000000000LL + b * 0x10000000LL, 128 * MiB,
                     tg_stack(g, "pin_memory.py", 90, "pin_memory"));
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.aTrace[0].f.bSegments);
    for (int i = 0; i < r.nFind; i++)
        if (strstr(r.aFind[i].zTitle, "grows batch by batch")) {
            nGrow++;
            ASSERT_STREQ("train.py:104 in evaluate", r.aFind[i].zSite);
            if (bStaircase) continue;
            ASSERT_EQ(100 * MiB, r.aFind[i].bytes);
            ASSERT_STREQ("train.py:104 in evaluate", r.aFind[i].zSite);
            ASSERT_CONTAINS(r.aFind[i].zEvidence, "attribution at segment level");
        }
    ASSERT_EQ(bStaircase == 0 || bStaircase == 3 ? 1 : 0, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(segment_level_growth_hidden_by_the_cache) { segment_phase_adds(0); }
/* The same validation adding one 200 MiB segment for its longest batch and 2 MiB small-pool segments in
 * four others: a staircase of longer batches (peaking above training), not growth. */
TEST(segment_level_longer_batch_is_no_growth) { segment_phase_adds(1); }
/* The same validation caching 400 MiB of segments in its first batch (a larger evaluation batch's shape, cuDNN's
 * workspaces) and 20 MiB in three later batches: segments in four sixteenths above the training peak, but one of
 * them holds most of what was added: the cache warming, not growth (it was a HIGH "grows batch by batch"). */
TEST(segment_level_cache_warmed_at_once_is_no_growth) { segment_phase_adds(2); }
/* Growth the cache hid until its free blocks ran out: 20 MiB segments in three batches, then 200 MiB in the last
 * one. One sixteenth holds most of what was added, but late: growth that outran the cache, not its warm-up (the
 * recorded val_no_grad scenario at segment level is this shape). */
TEST(segment_level_growth_outrunning_the_cache_late_is_growth) { segment_phase_adds(3); }
/* The cache warmed at once as in segment_level_cache_warmed_at_once_is_no_growth, and the loader pinning a 128 MiB
 * host block in four later batches (its batches are larger): pinned host memory is no device memory of the
 * evaluation (it was a HIGH "grows batch by batch" at pin_memory.py:90, the pinned blocks counted as segments). */
TEST(segment_level_pinned_loader_blocks_are_no_growth) { segment_phase_adds(4); }

/* One forward pass of the kernel-inferred tests below: a stem, 28 kernels of two alternating names (layers), a
 * head, `gap` ns apart from ts on; returns the time after it. */
static int64_t gLag; /* >0: kernels are launched by a host this far ahead of the device (api_call rows) */

/* A kernel [start, end) named zName, with its launch call gLag before it when gLag is set. */
static void kern(struct tg *g, int64_t start, int64_t end, const char *zName)
{
    int64_t corr = tg_kernel(g, start, end, zName);
    if (gLag > 0) {
        struct tg_apirow a = {100, corr, start - gLag, start - gLag + 1000, 1, 0, 0, TG_NULL, TG_NULL,
                              TG_NULL, TG_NULL, TG_NULL, TG_NULL};
        tg_api_row(g, &a);
    }
}

static int64_t fwd_pass(struct tg *g, int64_t ts, int64_t gap)
{
    kern(g, ts, ts + gap / 2, "void at::native::indexSelectLargeIndex<c10::BFloat16>()");
    ts += gap;
    for (int k = 0; k < 28; k++, ts += gap)
        kern(g, ts, ts + gap / 2, k % 2 ? "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN" : "triton_poi_fused_gelu_3");
    kern(g, ts, ts + gap / 2, "void at::native::cunn_SoftMaxForward<8, c10::BFloat16>()");
    return ts + gap;
}

/* The growth findings of r, each of 3 batches of 100 MiB kept at train.py:104 (200 to 300 MiB between the first
 * batch's lowest level and the last one's), medium or high. */
static int kept_batches_growths(const struct vt_result *r)
{
    int n = 0;
    for (int i = 0; i < r->nFind; i++)
        if (strstr(r->aFind[i].zTitle, "grows batch by batch")) {
            n++;
            ASSERT(r->aFind[i].severity >= VT_SEV_MEDIUM);
            ASSERT(r->aFind[i].bytes >= 200 * MiB && r->aFind[i].bytes <= 300 * MiB);
            ASSERT_STREQ("train.py:104 in evaluate", r->aFind[i].zSite);
        }
    return n;
}

/*
 * An evaluation of 3 short batches (30 forward kernels each, a fifth of a step's time in all) between steps of 4
 * micro-batches, inferred from kernel names: bProfiler, the steps are torch.profiler's ProfilerStep#N ranges and
 * the evaluation runs between two of them (it was read as the last step's tail: under half a step's time); else
 * no NVTX at all. Each evaluation batch allocates 100 MiB at train.py:104, kept to the evaluation's end with
 * bKeep (no_grad missing), freed with its batch otherwise. The evaluation is a phase of 3 batches (the period of
 * its kernel names), and only the kept batches grow (the window had no batches: growth over sixteenths, where
 * the 3 bursts of allocations made no trend).
 */
static void short_eval_after_accumulation(int bProfiler, int bKeep)
{
    const char *zPath = tg_path("short_eval.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t ts = 1 * MS, sOut, sAct;
    int nGrow = 0, iEval = -1;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sOut = tg_stack(g, "train.py", 104, "evaluate");
    sAct = tg_stack(g, "model.py", 61, "forward");
    tg_alloc(g, 500000, 0, 3, W, 64 * MiB, -1);
    for (int step = 0; step < 10; step++) {
        int64_t t0 = ts;
        if (step == 6) { /* the evaluation: 3 batches, 2 us a kernel */
            for (int b = 0; b < 3; b++) {
                tg_alloc(g, ts, 0, 3, OUT + b * 0x10000000LL, 100 * MiB, sOut);
                ts = fwd_pass(g, ts, 2000);
                if (!bKeep) tg_free(g, ts - 1000, 0, 3, OUT + b * 0x10000000LL, 100 * MiB);
            }
            for (int b = 0; bKeep && b < 3; b++) tg_free(g, ts, 0, 3, OUT + b * 0x10000000LL, 100 * MiB);
            ts += 10000;
            t0 = ts;
        }
        for (int mb = 0; mb < 4; mb++) { /* 4 micro-batches of 30 forward and 8 backward kernels, 10 us apart */
            tg_alloc(g, ts, 0, 3, ACT, 128 * MiB, sAct);
            ts = fwd_pass(g, ts, 10000);
            for (int k = 0; k < 8; k++, ts += 10000)
                tg_kernel(g, ts, ts + 5000, "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>()");
            tg_free(g, ts, 0, 3, ACT, 128 * MiB);
        }
        for (int k = 0; k < 4; k++, ts += 10000)
            tg_kernel(g, ts, ts + 5000, "void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor<float>>()");
        if (bProfiler) {
            char zName[32];
            snprintf(zName, sizeof zName, "ProfilerStep#%d", step);
            tg_nvtx(g, t0, ts, zName);
        }
        ts += 10000;
    }
    tg_free(g, ts, 0, 3, W, 64 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_STREQ("kernels", t->ph.zSource);
    for (int i = 0; i < t->ph.n; i++)
        if (t->ph.a[i].kind == VT_PHASE_EVAL) {
            ASSERT_EQ(-1, iEval);
            iEval = i;
        }
    ASSERT(iEval >= 0);
    ASSERT_EQ(3, t->ph.a[iEval].nIter);
    ASSERT_EQ(10, t->ph.nIter - 3);
    nGrow = kept_batches_growths(&r);
    ASSERT_EQ(bKeep ? 1 : 0, nGrow);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(profiler_short_evaluation_after_accumulated_steps_grows) { short_eval_after_accumulation(1, 1); }
TEST(profiler_short_evaluation_freeing_its_batches_does_not_grow) { short_eval_after_accumulation(1, 0); }
TEST(kernel_evaluation_window_batches_grow) { short_eval_after_accumulation(0, 1); }
TEST(kernel_evaluation_window_batches_freed_do_not_grow) { short_eval_after_accumulation(0, 0); }

/*
 * Steps whose backward pass has one kernel of a backward name among 40 GEMMs of no role, and an optimizer of
 * plain elementwise kernels (20, after the last of 4 micro-batches), no NVTX: a segment between two backward
 * kernels is a whole micro-batch (tail and forward pass: 80 kernels, 100 after an optimizer step), so an
 * evaluation of 3 batches (90 forward kernels) is under twice a segment. With bEvalEnd an evaluation ends the
 * trace after the last step (it was read as the start of a step cut off by the end: no phase); with !bEvalEnd the
 * trace ends in a step's forward pass instead (no evaluation). bMid: an evaluation after the fifth step too, past
 * twice a segment but behind the optimizer's 20 kernels, a longer tail than the segments' median (its batches were
 * not found: the names did not repeat from the window's first kernel). Each evaluation batch allocates 100 MiB at
 * train.py:104, kept to the evaluation's end with bKeep, freed with its batch otherwise.
 */
static void one_backward_kernel_steps(int bEvalEnd, int bMid, int bKeep, int64_t lag)
{
    const char *zPath = tg_path("one_bwd_kernel.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t ts = 1 * MS, sOut, sAct;
    int nGrow = 0, nEval = 0;
    ASSERT(g);
    gLag = lag;
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sOut = tg_stack(g, "train.py", 104, "evaluate");
    sAct = tg_stack(g, "model.py", 61, "forward");
    tg_alloc(g, 500000, 0, 3, W, 64 * MiB, -1);
    for (int step = 0; step <= 10; step++) {
        if ((step == 5 && bMid) || (step == 10 && bEvalEnd)) { /* the evaluation: 3 batches, 2 us a kernel */
            for (int b = 0; b < 3; b++) {
                tg_alloc(g, ts - lag, 0, 3, OUT + b * 0x10000000LL, 100 * MiB, sOut);
                ts = fwd_pass(g, ts, 2000);
                if (!bKeep) tg_free(g, ts - 1000 - lag, 0, 3, OUT + b * 0x10000000LL, 100 * MiB);
            }
            for (int b = 0; bKeep && b < 3; b++) tg_free(g, ts - lag, 0, 3, OUT + b * 0x10000000LL, 100 * MiB);
            ts += 10000;
        }
        if (step == 10) {
            if (!bEvalEnd) ts = fwd_pass(g, ts, 10000); /* a step cut off by the end of the trace */
            break;
        }
        for (int mb = 0; mb < 4; mb++) { /* forward, one backward kernel, 40 GEMMs and elementwise kernels */
            tg_alloc(g, ts - lag, 0, 3, ACT, 128 * MiB, sAct);
            ts = fwd_pass(g, ts, 10000);
            kern(g, ts, ts + 5000, "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>()");
            ts += 10000;
            for (int k = 0; k < 40; k++, ts += 10000)
                kern(g, ts, ts + 5000, k % 2 ? "volta_sgemm_128x32_nt" : "volta_sgemm_64x64_tn");
            for (int k = 0; k < 10; k++, ts += 10000)
                kern(g, ts, ts + 5000, "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>()");
            tg_free(g, ts - lag, 0, 3, ACT, 128 * MiB);
        }
        for (int k = 0; k < 20; k++, ts += 10000)
            kern(g, ts, ts + 5000, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>()");
        ts += 10000;
    }
    tg_free(g, ts, 0, 3, W, 64 * MiB);
    ASSERT_EQ(0, tg_close(g));
    gLag = 0;
    run(zPath, &r);
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_STREQ("kernels", t->ph.zSource);
    for (int i = 0; i < t->ph.n; i++)
        if (t->ph.a[i].kind == VT_PHASE_EVAL) {
            nEval++;
            ASSERT_EQ(3, t->ph.a[i].nIter);
        }
    ASSERT_EQ(bMid + bEvalEnd, nEval);
    nGrow = kept_batches_growths(&r);
    ASSERT(bKeep ? nGrow >= 1 : nGrow == 0);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(evaluation_ending_a_trace_of_one_backward_kernel_steps_grows) { one_backward_kernel_steps(1, 0, 1, 0); }
TEST(evaluation_ending_a_trace_freeing_its_batches_does_not_grow) { one_backward_kernel_steps(1, 0, 0, 0); }
TEST(evaluation_behind_an_optimizer_tail_has_its_batches) { one_backward_kernel_steps(0, 1, 1, 0); }
/* Both evaluations, every kernel launched by a host 2.5 ms (three micro-batches) ahead of the device: the windows
 * begin at the host launch of their first kernel, and the steps the device was still running then end there (they
 * were iterations of the evaluation: 6 of them, 3 steps among its batches). */
TEST(evaluation_launched_ahead_of_the_device_has_only_its_batches) { one_backward_kernel_steps(1, 1, 1, 2500000); }
/* The control: the trace ends in a step's forward pass (after the last step's tail): no evaluation. */
TEST(step_cut_off_by_the_end_of_the_trace_is_no_evaluation) { one_backward_kernel_steps(0, 0, 0, 0); }

/* ProfilerStep#N steps of 4 micro-batches whose last SGD step (3 short elementwise kernels for each of 100
 * parameters: more kernels than a forward pass, in a tenth of a step's time) runs on the GPU after the last range
 * closed: a step's tail, no evaluation (its names repeat every 3 kernels, not as forward passes do). A guard of
 * the kernel-count rule, as ResNet-50's profiler trace in the real data needs. */
TEST(profiler_last_step_tail_is_no_evaluation)
{
    const char *zPath = tg_path("sgd_tail.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t ts = 1 * MS;
    ASSERT(g);
    tg_alloc(g, 500000, 0, 3, W, 64 * MiB, -1);
    for (int step = 0; step < 12; step++) {
        int64_t t0 = ts;
        char zName[32];
        for (int mb = 0; mb < 4; mb++) {
            ts = fwd_pass(g, ts, 10000);
            for (int k = 0; k < 8; k++, ts += 10000)
                tg_kernel(g, ts, ts + 5000, "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>()");
        }
        snprintf(zName, sizeof zName, "ProfilerStep#%d", step);
        tg_nvtx(g, t0, step < 11 ? ts + 300 * 2000 : ts, zName);
        for (int k = 0; k < 300; k++, ts += 2000)
            tg_kernel(g, ts, ts + 1000, k % 3 ? "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>()"
                                              : "void at::native::vectorized_elementwise_kernel<4, at::native::MulScalarFunctor<float, float>>()");
    }
    tg_free(g, ts, 0, 3, W, 64 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    struct vt_trace *t = &r.aTrace[0];
    ASSERT_STREQ("kernels", t->ph.zSource);
    ASSERT_EQ(1, t->ph.n);
    ASSERT_EQ(VT_PHASE_TRAIN, t->ph.a[0].kind);
    ASSERT_EQ(12, t->ph.nIter);
    vt__result_free(&r);
    tg_cleanup();
}

VT_TEST_LIST(T(evaluation_ending_a_trace_of_one_backward_kernel_steps_grows) T(evaluation_ending_a_trace_freeing_its_batches_does_not_grow)
             T(evaluation_behind_an_optimizer_tail_has_its_batches) T(evaluation_launched_ahead_of_the_device_has_only_its_batches)
             T(step_cut_off_by_the_end_of_the_trace_is_no_evaluation)
             T(profiler_last_step_tail_is_no_evaluation) T(profiler_short_evaluation_after_accumulated_steps_grows) T(profiler_short_evaluation_freeing_its_batches_does_not_grow)
             T(kernel_evaluation_window_batches_grow) T(kernel_evaluation_window_batches_freed_do_not_grow)
             T(forward_cut_short_by_the_final_oom_is_no_evaluation) T(forward_cut_short_by_a_caught_oom_is_no_evaluation)
             T(forward_cut_short_by_a_retried_caught_oom_is_no_evaluation) T(forward_cut_short_by_a_caught_oom_begun_before_it_is_no_evaluation)
             T(validation_growth_at_its_call_site) T(validation_graph_growth_at_the_call_it_was_made_under) T(segment_level_growth_hidden_by_the_cache)
             T(segment_level_longer_batch_is_no_growth) T(segment_level_cache_warmed_at_once_is_no_growth) T(segment_level_growth_outrunning_the_cache_late_is_growth)
             T(segment_level_pinned_loader_blocks_are_no_growth)
             T(peak_with_a_recovered_retry_is_info) T(peak_with_an_oom_that_reached_the_program_is_high)
             T(three_batches_keeping_memory_grow) T(validation_growth_by_replacement_at_its_site) T(three_batches_freeing_memory_do_not_grow) T(segment_level_validation_staircase) T(validation_nested_in_training_range) T(unclosed_validation_range) T(operator_ranges_are_not_phases) T(phases_sample_shape) T(missing_no_grad_grows_batch_by_batch) T(large_validation_batch_is_only_info) T(small_kept_predictions_are_info) T(phase_regex_override) T(profiler_steps_are_iterations)
             T(doubtful_kernel_phases_make_no_claim)
             T(kernel_steps_contiguous_backward) T(kernel_steps_fragmented_backward)
             T(kernel_steps_backward_cut_in_two) T(validation_growth_released_at_its_end) T(validation_growth_in_bursts))
