/* The training driver of the accuracy suite: one PyTorch training job (epochs of training and evaluation) with hooks. */
#include "loop.h"

#include <stdio.h>
#include <string.h>

void loop_defaults(struct loop *l)
{
    memset(l, 0, sizeof *l);
    l->zTemplate = "resnet50";
    l->stride = 2;
    l->timeScale = 1.0;
    l->batch = l->valBatch = 256;
    l->epochs = 2;
    l->iters = 24;
    l->valIters = 6;
    l->bPinned = 1;
    l->pinDepth = 4;
    l->accum = 1;
    l->bZeroNone = 1;
    l->bTeardown = 1;
    l->bClean = 1;
    l->cpuPerStep = 2000000;
    l->lastX = l->lastOut = -1;
    l->resWarm = -1;
    for (int i = 0; i < 4096; i++) l->aPin[i] = -1;
}

/* NVTX: push zName when the variant records NVTX ranges of that style. */
void loop_push(struct acc *a, struct js *j, int style, const char *zFmt, int n)
{
    char z[96];
    if (acc_variant(a)->nvtx != style) return;
    if (strchr(zFmt, '%')) snprintf(z, sizeof z, zFmt, n);
    else snprintf(z, sizeof z, "%s", zFmt);
    js_push(j, z);
}
void loop_pop(struct acc *a, struct js *j, int style)
{
    if (acc_variant(a)->nvtx == style) js_pop(j);
}

/* The next batch: from the loader's pinned ring (the pin-memory thread fills it ahead) or pageable memory. */
int loop_next_batch(struct loop *l, struct js *j, int64_t bytes, int k, const char *zUser)
{
    int pin = -1;
    if (l->bPinned) {
        int site = js_site(j, "lib:torch/utils/data/_utils/pin_memory.py:90:pin_memory|"
                              "lib:torch/utils/data/_utils/pin_memory.py:98:pin_memory.<locals>.<dictcomp>|"
                              "lib:torch/utils/data/_utils/pin_memory.py:58:_pin_memory_loop.<locals>.do_one_step|"
                              "lib:torch/utils/data/_utils/pin_memory.py:76:_pin_memory_loop|"
                              "std:threading.py:1012:Thread.run|std:threading.py:1075:Thread._bootstrap_inner|"
                              "std:threading.py:1032:Thread._bootstrap");
        /* evaluation batches (k from 100000) from a loader of their own: a ring of their own */
        int slot = l->valPinDepth > 0 && k >= 100000 ? 2048 + (k - 100000) % l->valPinDepth : k % l->pinDepth;
        if (l->aPin[slot] >= 0) js_pin_free(j, l->aPin[slot]);
        pin = l->aPin[slot] = js_pin_alloc(j, bytes, site);
    }
    return pt_batch(j, pin, bytes, zUser);
}

/*
 * A record_function range of the optimizer (`Optimizer.step#AdamW.step`): an NVTX range where the
 * variant records torch.profiler's ranges, else seen by PyTorch's own recorders only.
 */
static int64_t rf_push(struct acc *a, struct js *j, const char *zName)
{
    loop_push(a, j, ACC_NVTX_PROFILER, zName, 0);
    return js_now(j);
}

static void rf_pop(struct acc *a, const struct loop *l, struct js *j, const char *zName, int64_t start)
{
    if (acc_variant(a)->nvtx == ACC_NVTX_PROFILER) loop_pop(a, j, ACC_NVTX_PROFILER);
    else if (!l->bNoRecordFunction) js_range_note(j, zName, start);
}

/*
 * The iteration ran out of memory at site: the exception leaves it (its NVTX ranges close as
 * their `with` blocks exit, down to depth) unless it ends the process. Returns -1.
 */
static int oom_leave(struct loop *l, struct js *j, int site, int depth)
{
    l->failSite = site;
    if (!l->m.bOomKeep)
        while (js_depth(j) > depth) js_pop(j);
    return -1;
}

/* One training iteration (accum micro-batches and one optimizer step); -1 when it ran out of memory. */
int loop_train_iter(struct acc *a, struct loop *l, struct js *j, int it)
{
    struct pt_fwd f;
    const char *zStep = l->m.nState == 2 ? "Optimizer.step#AdamW.step" : "Optimizer.step#SGD.step";
    const char *zZero = l->m.nState == 2 ? "Optimizer.zero_grad#AdamW.zero_grad" : "Optimizer.zero_grad#SGD.zero_grad";
    memset(&f, 0, sizeof f);
    f.out = -1;
    int depth = js_depth(j);
    if (l->xIterStart) l->xIterStart(l, j, it, NULL);
    loop_push(a, j, ACC_NVTX_NAMES, "iter %d", it);
    loop_push(a, j, ACC_NVTX_PROFILER, "ProfilerStep#%d", it);
    if (!l->bZeroLast) {
        int64_t t0 = rf_push(a, j, zZero);
        pt_zero_grad(j, &l->m, l->bZeroNone, U_TRAIN(63));
        rf_pop(a, l, j, zZero, t0);
    }
    for (int mb = 0; mb < l->accum; mb++) {
        int x, b = l->batch / l->accum;
        int64_t xBytes = l->xBytes;
        if (l->varLen > 1) { /* a long tail of lengths: the longest batches are rare */
            uint64_t u = js_rand(j, 1000);
            int units = 1 + (int)((uint64_t)(l->varLen - 1) * u * u * u / 999000000u);
            b = b * units / l->varLen;
            if (b < 1) b = 1;
            xBytes = xBytes * units / l->varLen;
        }
        loop_push(a, j, ACC_NVTX_PROFILER, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 0);
        js_cpu(j, l->cpuPerStep / l->accum);
        loop_pop(a, j, ACC_NVTX_PROFILER);
        if (l->lastX >= 0) js_free(j, l->lastX); /* the previous iteration's batch, dropped on reassignment */
        if (l->lastOut >= 0) js_free(j, l->lastOut);
        l->lastX = l->lastOut = -1;
        x = loop_next_batch(l, j, xBytes, it * l->accum + mb, U_TRAIN(61));
        if (x < 0) return oom_leave(l, j, js_site(j, U_TRAIN(61)), depth);
        f = pt_forward(j, &l->m, x, b, 1, 1, U_TRAIN(66));
        if (f.out < 0) {
            if (!l->m.bOomKeep) js_free(j, x);
            return oom_leave(l, j, f.failSite, depth);
        }
        js_here(j, js_site(j, U_TRAIN(69)));
        {
            int fail = pt_backward(j, &l->m, &f, b, l->aBucket, l->nBucket);
            if (fail >= 0) { /* the exception leaves loss.backward(): the step's batch, output and loss go with it */
                if (!l->m.bOomKeep) {
                    js_free(j, f.loss);
                    js_free(j, f.out);
                    js_free(j, x);
                }
                return oom_leave(l, j, fail, depth);
            }
        }
        js_here(j, js_site(j, U_TRAIN(67)));
        js_free(j, f.loss); /* the graph is gone after backward; loss stays referenced until item() */
        l->lastX = x;
        l->lastOut = f.out;
        if (l->xMicroBatch) l->xMicroBatch(l, j, it * l->accum + mb, &f);
    }
    {
        int64_t t0 = rf_push(a, j, zStep);
        int fail = pt_step(j, &l->m, U_TRAIN(72));
        if (fail >= 0) return oom_leave(l, j, fail, depth);
        rf_pop(a, l, j, zStep, t0);
    }
    if (l->bZeroLast) {
        int64_t t0 = rf_push(a, j, zZero);
        pt_zero_grad(j, &l->m, l->bZeroNone, U_TRAIN(73));
        rf_pop(a, l, j, zZero, t0);
    }
    pt_item(j, l->lastOut, U_TRAIN(75));
    if (l->xTrainStep) l->xTrainStep(l, j, it, &f); /* may take over lastOut (and set it to -1) */
    loop_pop(a, j, ACC_NVTX_PROFILER);
    loop_pop(a, j, ACC_NVTX_NAMES);
    return 0;
}

/* One evaluation batch under torch.no_grad() (unless bValGrad). */
int loop_val_batch(struct acc *a, struct loop *l, struct js *j, int b)
{
    struct pt_fwd f;
    int x, depth = js_depth(j), vb = l->valBatch;
    int64_t xBytes = l->valXBytes;
    if (l->valLen > 1) { /* lengths ascending through the evaluation, else long-tailed at random */
        int units, n = l->valIters > 1 ? l->valIters - 1 : 1;
        if (l->bValSorted) {
            units = 1 + (l->valLen - 1) * (b % l->valIters) / n;
        } else {
            uint64_t u = js_rand(j, 1000);
            units = 1 + (int)((uint64_t)(l->valLen - 1) * u * u * u / 999000000u);
        }
        vb = vb * units / l->valLen > 0 ? vb * units / l->valLen : 1;
        xBytes = xBytes * units / l->valLen;
    }
    loop_push(a, j, ACC_NVTX_NAMES, "batch %d", b);
    js_cpu(j, l->cpuPerStep / 2);
    x = loop_next_batch(l, j, xBytes, 100000 + b, U_VAL(101));
    if (x < 0) return oom_leave(l, j, js_site(j, U_VAL(101)), depth);
    f = pt_forward(j, &l->m, x, vb, l->bValGrad, 0, U_VAL(104));
    if (f.out < 0) return oom_leave(l, j, f.failSite, depth);
    pt_item(j, f.loss, U_VAL(107));
    if (l->xValBatch) l->xValBatch(l, j, b, &f);
    if (!l->bValGrad) {
        js_here(j, js_site(j, U_VAL(105)));
        js_free(j, f.loss);
    }
    if (!l->bValKeepOut) js_free(j, f.out);
    loop_pop(a, j, ACC_NVTX_NAMES);
    return 0;
}

/* After a training iteration: the reservation after warm-up, and its rise since. */
void loop_note_reserved(struct loop *l, struct js *j)
{
    if (l->iterDone == 2) {
        l->resWarm = js_reserved(j);
        js_resv_mark(j);
    }
    else if (l->resWarm >= 0 && js_reserved(j) - l->resWarm > l->growTrain) {
        l->growTrain = js_reserved(j) - l->resWarm;
        l->nGrowTrain++;
    }
}

/*
 * Whether growth of `grow` bytes is something the trace shows: always in tensor mode (every
 * tensor is an allocation); at segment level only when the allocator had to reserve that much
 * more (at least 64 MiB and 1 % of what it holds): a leak that fits in the cache's free blocks
 * leaves no trace there.
 */
int loop_visible(struct acc *a, int64_t grow, int64_t reserved)
{
    return acc_variant(a)->mode == JS_TENSORS || (grow >= 64 * MiB && grow * 100 >= reserved);
}

/*
 * The whole job on one rank: model to the device, DDP, epochs of training and
 * evaluation. Returns the process still open (the caller ends it) and -1 in *pOom
 * when an out-of-memory error ended it.
 */
struct js *loop_open(struct acc *a, struct loop *l, int rank, struct js_cfg *pCfg)
{
    struct js_cfg c;
    struct js *j;
    memset(&c, 0, sizeof c);
    if (pCfg) c = *pCfg;
    c.zTemplate = l->zTemplate;
    c.kernelStride = l->stride;
    c.timeScale = l->timeScale * l->stride;
    if (!c.zCmd) c.zCmd = "python train.py --config configs/base.yaml";
    j = acc_process(a, rank, &c);
    if (!j) return NULL;
    pt_to_device(j, &l->m, U_TO_DEVICE);
    if (l->nBucket > 0) {
        int site = js_site(j, pt_frames("lib:torch/nn/parallel/distributed.py:1215:DistributedDataParallel._ddp_init_helper|"
                                        "lib:torch/nn/parallel/distributed.py:925:DistributedDataParallel.__init__",
                                        U_DDP));
        js_here(j, js_site(j, pt_frames("lib:torch/distributed/distributed_c10d.py:4112:_broadcast|"
                                        "lib:torch/nn/parallel/distributed.py:1168:_sync_module_states|"
                                        "lib:torch/nn/parallel/distributed.py:897:DistributedDataParallel.__init__",
                                        U_DDP)));
        js_nccl_init(j, 6, l->ncclBytes / 6);
        for (int b = 0; b < l->nBucket && b < 64; b++) l->aBucket[b] = js_alloc(j, 25 * MiB, site, JS_NAT_ALLOC);
    }
    return j;
}

void loop_epochs(struct acc *a, struct loop *l, struct js *j, int *pOom)
{
    *pOom = 0;
    for (int e = 0; e < l->epochs && !*pOom; e++) {
        loop_push(a, j, ACC_NVTX_NAMES, "train", 0);
        for (int i = 0; i < l->iters && !*pOom; i++) {
            if (loop_train_iter(a, l, j, l->iterDone) != 0) *pOom = 1;
            l->iterDone++;
            loop_note_reserved(l, j);
        }
        if (*pOom && l->m.bOomKeep) break; /* the process dies here */
        if (!l->bKeepLastStep) { /* train_one_epoch returns: its locals go */
            js_here(j, js_site(j, MAIN));
            js_free(j, l->lastX);
            js_free(j, l->lastOut);
            l->lastX = l->lastOut = -1;
        }
        loop_pop(a, j, ACC_NVTX_NAMES);
        if (*pOom || l->valIters == 0) continue;
        if (l->valEvery > 1 && (e + 1) % l->valEvery && e + 1 < l->epochs) continue;
        loop_push(a, j, ACC_NVTX_NAMES, "validation", 0);
        {
            int64_t res0 = js_reserved(j);
            if (l->xValStart) l->xValStart(l, j, l->valDone, NULL);
            for (int b = 0; b < l->valIters && !*pOom; b++) {
                if (loop_val_batch(a, l, j, l->valDone) != 0) *pOom = 1;
                l->valDone++;
                if (js_reserved(j) - res0 > l->growVal) l->growVal = js_reserved(j) - res0;
            }
        }
        if (!*pOom && l->xValEnd) l->xValEnd(l, j, l->valIters, NULL);
        if (*pOom && l->m.bOomKeep) break; /* the process dies here */
        loop_pop(a, j, ACC_NVTX_NAMES);
        if (l->bKeepLastStep) { /* the next epoch reassigns them */
            js_free(j, l->lastX);
            js_free(j, l->lastOut);
            l->lastX = l->lastOut = -1;
        }
    }
    js_sync(j);
    if (*pOom && !l->m.bOomKeep && !l->bOomPlanned) fprintf(stderr, "accgen: a job ran out of memory where none was planned\n");
    if (js_first_kernel(j) && js_now(j) > js_first_kernel(j)) {
        double s = (double)js_pageable_ns(j) / (double)(js_now(j) - js_first_kernel(j));
        if (s > l->pageableShare) l->pageableShare = s;
    }
}

struct js *loop_run(struct acc *a, struct loop *l, int rank, int *pOom, struct js_cfg *pCfg)
{
    struct js *j = loop_open(a, l, rank, pCfg);
    *pOom = 0;
    if (j) loop_epochs(a, l, j, pOom);
    return j;
}

/* Add what rank j's allocator reserved after warm-up, by the planted line and by the autograd thread, to l. */
void loop_resv_note(struct loop *l, const struct js *j)
{
    for (int n = 0; n < JS_NAT_N && l->zPlanted; n++) l->resvPlanted += js_resv_since_mark(j, l->zPlanted, n);
    l->resvBackward += js_resv_since_mark(j, NULL, JS_NAT_BACKWARD) + js_resv_since_mark(j, NULL, JS_NAT_ACCGRAD);
}

/*
 * The site a trace can name for growth planted on zSite, from what l's runs reserved (resv_note):
 * every tensor in tensor mode; at segment level, the call sites of the segments reserved while
 * the baseline rose. Where the planted line reserved less than the autograd thread (the cache
 * grew where demand peaked, in the backward pass, while the line's tensors took free blocks),
 * that is the backward pass, attributed at segment level.
 */
const char *loop_growth_site(struct acc *a, const struct loop *l, const char *zSite)
{
    if (acc_variant(a)->mode != JS_SEGMENTS || l->resvPlanted >= l->resvBackward) return zSite;
    return "(backward pass: autograd thread, no Python frame) (attribution at segment level)";
}

/*
 * Whether the growth during training after warm-up of loop l is something the trace shows: as
 * loop_visible(), and at segment level reserved at 3 iterations or more: one reservation (a 590 MiB
 * segment at the last step) reads as one larger batch, which no growth test can tell from a leak.
 */
int loop_visible_train(struct acc *a, const struct loop *l, int64_t reserved)
{
    return loop_visible(a, l->growTrain, reserved) && (acc_variant(a)->mode == JS_TENSORS || l->nGrowTrain >= 3);
}

/*
 * Run the loop on every rank of the variant and end each process (killed inside a step when
 * !bClean). *pVisTrain / *pVisVal (may be NULL) receive whether, on some rank, the growth during
 * training after warm-up / during one evaluation phase is visible in the trace (loop_visible()).
 */
void loop_all(struct acc *a, struct loop *proto, struct js_cfg *pCfg, int *pVisTrain, int *pVisVal)
{
    if (pVisTrain) *pVisTrain = 0;
    if (pVisVal) *pVisVal = 0;
    for (int r = 0; r < acc_variant(a)->ranks; r++) {
        struct loop l = *proto;
        int bOom;
        struct js *j = loop_run(a, &l, r, &bOom, pCfg);
        if (!j) return;
        if (pVisTrain && loop_visible_train(a, &l, js_reserved(j))) *pVisTrain = 1;
        if (l.pageableShare > proto->pageableShare) proto->pageableShare = l.pageableShare;
        loop_resv_note(proto, j);
        if (pVisVal && loop_visible(a, l.growVal, js_reserved(j))) *pVisVal = 1;
        if (!l.bClean) { /* SIGKILL during the forward of the next step: its ranges never close */
            int x;
            loop_push(a, j, ACC_NVTX_NAMES, "train", 0);
            loop_push(a, j, ACC_NVTX_NAMES, "iter %d", l.iterDone);
            loop_push(a, j, ACC_NVTX_PROFILER, "ProfilerStep#%d", l.iterDone);
            x = loop_next_batch(&l, j, l.xBytes, l.iterDone, U_TRAIN(61));
            if (x >= 0) pt_forward(j, &l.m, x, l.batch, 1, 1, U_TRAIN(66));
        }
        acc_end(a, j, l.bTeardown, l.bClean);
    }
}

/* Iterations: short runs, or long ones (thousands of iterations) with fewer kernels each. */
void loop_length(struct acc *a, struct loop *l, int shortIters, int longIters)
{
    const struct acc_variant *v = acc_variant(a);
    if (v->bLong) {
        l->iters = longIters / l->epochs;
        l->stride *= 16;
        pt_shrink(&l->m, 6);
    } else {
        l->iters = shortIters / l->epochs;
    }
    if (v->ranks >= 16) { /* many ranks: the same job, fewer rows per rank */
        l->iters = l->iters / 2 > 8 ? l->iters / 2 : 8;
        l->stride *= 4;
        pt_shrink(&l->m, 4);
    }
}

/*
 * Optional: the last step's gradients held through evaluation until the next zero_grad()
 * frees them (allocated by the autograd engine's thread, or by the compiled backward):
 * freeing them earlier is a saving, not a bug, so reporting them is neither required nor
 * false.
 */
void loop_allow_grads(struct acc *a)
{
    static const struct acc_exp e = {"grads-held", "retained", "torch_cuda|backward pass|cue4r2pzy6xk3jmw7tqzdc5n2w3hj6ahu6b4y5cyy7rbqwvqw3sbz",
                                     "low|medium|high", NULL, NULL, NULL, 0, "gradients of the last step held through evaluation", 0, NULL};
    acc_expect(a, &e);
}

/* Optional findings that follow from a planted cause: `kind` with a title containing zTitle, any site. */
void loop_allow_also(struct acc *a, const char *zCause, const char *zKind, const char *zTitle, const char *zSite)
{
    struct acc_exp e = {zCause, zKind, zSite, "info|low|medium|high", NULL, zTitle, NULL, 0, "consequence of the planted cause", 0, NULL};
    acc_expect(a, &e);
}

