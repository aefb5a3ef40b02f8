/* The accuracy suite's scenarios: realistic PyTorch jobs, healthy or with one planted problem, and their truth. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"

/*
 * Every scenario is a PyTorch program run through pt.c/jobsim.c once per rank, and the
 * findings a correct analysis must report for it (acc_expect), or none (healthy jobs:
 * nothing at severity low or above). The programs share one training driver (loop.c)
 * with hooks where the planted problems live.
 */

/* ---- healthy jobs ---- */

static void h_cnn(struct acc *a)
{
    struct loop l;
    loop_defaults(&l);
    pt_cnn(&l.m, 224, 1000);
    l.xBytes = l.valXBytes = (int64_t)256 * 3 * 224 * 224 * 4;
    loop_length(a, &l, 48, 2400);
    acc_describe(a, "ResNet-50 training on one H100 (batch 256, fp32, SGD with momentum), a pinned DataLoader "
                    "with non-blocking copies, evaluation under torch.no_grad() after each epoch, losses read "
                    "with .item(). Weights are copied once from pageable memory at start; momentum buffers "
                    "appear at the first step and gradients at the first backward; the cuBLAS workspace "
                    "stays. Expected: nothing at severity low or above.");
    loop_allow_grads(a);
    loop_all(a, &l, NULL, NULL, NULL);
}

static void h_cnn_pageable(struct acc *a)
{
    struct loop l;
    loop_defaults(&l);
    pt_cnn(&l.m, 224, 1000);
    l.bPinned = 0;
    l.batch = l.valBatch = 64;
    l.xBytes = l.valXBytes = (int64_t)64 * 3 * 224 * 224 * 4;
    l.timeScale = 4.0;
    loop_length(a, &l, 48, 2400);
    acc_describe(a, "ResNet-50 training fed by a DataLoader without pin_memory (num_workers=0, as in the "
                    "torch.profiler ResNet-50 sample): every batch (38.5 MB) is copied from pageable memory, "
                    "about 1 % of the step time, as measured in that sample's real trace. A negligible share: "
                    "expected nothing at severity low or above.");
    loop_allow_grads(a);
    loop_all(a, &l, NULL, NULL, NULL);
}

/* Gradient accumulation: 8 micro-batches per optimizer step. */
static void h_grad_accum(struct acc *a)
{
    struct loop l;
    loop_defaults(&l);
    pt_lm(&l.m, 12, 1024, 1024, 50304, 1);
    l.zTemplate = "ddp";
    l.stride = 4;
    l.batch = l.valBatch = 32;
    l.accum = 8;
    l.bZeroLast = 1;
    l.xBytes = l.valXBytes = (int64_t)32 * 1024 * 8;
    loop_length(a, &l, 24, 1200);
    l.valIters = 4;
    acc_describe(a, "A 350M-parameter GPT (model.py) fine-tuned with gradient accumulation: 8 micro-batches of "
                    "4 sequences per optimizer step (AdamW state created at the first step, gradients "
                    "accumulated across the micro-batches and set to None after each step). Backward runs "
                    "8 times per step, the optimizer once. Expected: nothing at severity low or above.");
    loop_allow_grads(a);
    loop_all(a, &l, NULL, NULL, NULL);
}

/* A large static model: weights and optimizer state fill most of the device. */
static void h_large_static(struct acc *a)
{
    struct loop l;
    loop_defaults(&l);
    pt_lm(&l.m, 26, 3072, 2048, 50304, 1);
    l.zTemplate = "ddp";
    l.stride = 6;
    l.batch = l.valBatch = 2;
    l.xBytes = l.valXBytes = (int64_t)2 * 2048 * 8;
    l.bTeardown = 0;
    l.bClean = !acc_variant(a)->bLong; /* the long run is killed at the scheduler's time limit */
    loop_length(a, &l, 40, 2000);
    l.valIters = 4;
    acc_describe(a, "Full fine-tuning of a 3B-parameter model in bf16 with fp32 AdamW moments on an H100: "
                    "6 GB of weights, 24 GB of optimizer state created at the first step (a one-time jump), "
                    "6 GB of gradients; small batches. The script ends without freeing (module-level "
                    "globals): weights and state are live at exit and used until the last step; the long "
                    "run is killed at the scheduler's time limit (the trace is not closed cleanly). Expected: "
                    "nothing at severity low or above (state is not a leak, the warm-up is not growth).");
    loop_allow_grads(a);
    loop_all(a, &l, NULL, NULL, NULL);
}

/* Inference with a key/value cache that grows token by token inside each request. */
static void h_inference_kv(struct acc *a)
{
    const struct acc_variant *v = acc_variant(a);
    int nReq = 16;
    for (int r = 0; r < v->ranks; r++) {
        struct pt_model m;
        struct js_cfg c;
        struct js *j;
        int siteKv, siteLogit;
        memset(&c, 0, sizeof c);
        pt_lm(&m, 32, 4096, 1, 32000, 1);
        c.zTemplate = "nsys_mangled";
        c.kernelStride = 1;
        c.timeScale = 0.3;
        c.zCmd = "python serve.py --model llama-7b --max-new-tokens 512";
        j = acc_process(a, r, &c);
        if (!j) return;
        pt_to_device(j, &m, "serve.py:40:load_model|serve.py:118:main|serve.py:131:<module>");
        siteKv = js_site(j, "lib:transformers/cache_utils.py:119:DynamicLayer.update|"
                            "lib:transformers/models/llama/modeling_llama.py:262:LlamaAttention.forward|"
                            "lib:torch/nn/modules/module.py:1786:Module._call_impl|"
                            "lib:transformers/models/llama/modeling_llama.py:305:LlamaDecoderLayer.forward|"
                            "lib:torch/nn/modules/module.py:1786:Module._call_impl|"
                            "lib:transformers/generation/utils.py:3460:GenerationMixin._sample|"
                            "serve.py:77:generate|serve.py:121:main|serve.py:131:<module>");
        siteLogit = js_site(j, "lib:torch/nn/modules/linear.py:134:Linear.forward|"
                               "lib:torch/nn/modules/module.py:1786:Module._call_impl|"
                               "lib:transformers/models/llama/modeling_llama.py:471:LlamaForCausalLM.forward|"
                               "lib:transformers/generation/utils.py:3460:GenerationMixin._sample|"
                               "serve.py:77:generate|serve.py:121:main|serve.py:131:<module>");
        for (int q = 0; q < nReq; q++) {
            /* the cache of 32 layers' keys and values, here in 16 tensors of two layers' worth (bf16) */
            int nTok = 32 + (int)js_rand(j, 128), prompt = 128 + (int)js_rand(j, 384), kv[16];
            int64_t perTok = (int64_t)32 * 2 * 4096 * 2 / 16;
            for (int g = 0; g < 16; g++) kv[g] = -1;
            loop_push(a, j, ACC_NVTX_NAMES, "request %d", q);
            js_here(j, js_site(j, "serve.py:77:generate|serve.py:121:main|serve.py:131:<module>"));
            for (int t = 0; t < nTok; t++) {
                int lg;
                loop_push(a, j, ACC_NVTX_NAMES, "decode_step %d", t);
                for (int g = 0; g < 16; g++) {
                    /* torch.cat of the cache with the new token: a new tensor, the old one freed; the
                     * layers' kernels take their weights as arguments too, as every decode step's do */
                    int nkv = js_alloc(j, perTok * (prompt + t + 1), siteKv, JS_NAT_ALLOC);
                    int aT[2 + 32], nT = 0;
                    aT[nT++] = kv[g];
                    aT[nT++] = nkv;
                    for (int l = g * m.n / 16; l < (g + 1) * m.n / 16 && nT < 34; l++)
                        if (m.a[l].w) aT[nT++] = m.w[l];
                    js_play(j, 'F', g, 17, aT, nT);
                    js_free(j, kv[g]);
                    kv[g] = nkv;
                }
                lg = js_alloc(j, 32000 * 4, siteLogit, JS_NAT_ALLOC);
                {
                    int aT[2] = {lg, m.w[0]}; /* the output projection: tied to the embedding */
                    js_play(j, 'F', 16, 17, aT, 2);
                }
                pt_item(j, lg, "lib:transformers/generation/utils.py:3470:GenerationMixin._sample|serve.py:77:generate|"
                               "serve.py:121:main|serve.py:131:<module>");
                js_free(j, lg);
                loop_pop(a, j, ACC_NVTX_NAMES);
            }
            for (int g = 0; g < 16; g++) js_free(j, kv[g]);
            loop_pop(a, j, ACC_NVTX_NAMES);
            js_cpu(j, 5000000);
        }
        acc_end(a, j, 1, 1);
    }
    acc_describe(a, "A text-generation server (a 7B Llama in bf16 with the transformers DynamicCache): each "
                    "request's key/value cache grows by one token per decode step (torch.cat: a new tensor "
                    "per layer and step, the old one freed) and is released when the request ends; requests "
                    "differ in prompt and output length. No backward, no optimizer. Expected: nothing at "
                    "severity low or above (growth inside a request is not a leak, and there is no "
                    "validation phase to spike).");
}

static void h_pinned_loader(struct acc *a)
{
    struct loop l;
    loop_defaults(&l);
    pt_cnn(&l.m, 224, 1000);
    l.pinDepth = 8;
    l.xBytes = l.valXBytes = (int64_t)256 * 3 * 224 * 224 * 4;
    l.valIters = 0;
    l.epochs = 1;
    loop_length(a, &l, 40, 2400);
    acc_describe(a, "ResNet-50 with DataLoader(num_workers=4, prefetch_factor=2, pin_memory=True): the "
                    "pin-memory thread page-locks batches through PyTorch's caching host allocator, which "
                    "allocates eight 256 MiB blocks while the queue fills and reuses them afterwards. "
                    "Training only. Expected: nothing at severity low or above.");
    loop_all(a, &l, NULL, NULL, NULL);
}

static void h_ddp(struct acc *a)
{
    struct loop l;
    loop_defaults(&l);
    pt_lm(&l.m, 12, 1024, 1024, 50304, 1);
    l.zTemplate = "ddp";
    l.stride = 4;
    l.batch = l.valBatch = 8;
    l.xBytes = l.valXBytes = (int64_t)8 * 1024 * 8;
    l.nBucket = (int)(pt_param_bytes(&l.m) / (25 * MiB)) + 1;
    if (l.nBucket > 64) l.nBucket = 64;
    l.ncclBytes = 384 * MiB;
    loop_length(a, &l, 32, 1600);
    l.valIters = 4;
    acc_describe(a, "DistributedDataParallel training of a 350M-parameter GPT, one process per GPU: NCCL "
                    "maps its communication buffers with cuMem at the first collective, DDP allocates its "
                    "25 MiB gradient buckets at construction and all-reduces them during backward (NCCL "
                    "kernels reach the buffers through device-side structures, so argument scanning never "
                    "sees them used). Expected: nothing at severity low or above on any rank.");
    loop_allow_grads(a);
    loop_all(a, &l, NULL, NULL, NULL);
}

/* Variable sequence lengths: the allocator's cache grows in steps while longer batches keep arriving. */
static void h_varlen(struct acc *a)
{
    struct loop l;
    loop_defaults(&l);
    pt_lm(&l.m, 12, 1024, 2048, 50304, 1);
    l.zTemplate = "ddp";
    l.stride = 4;
    l.batch = l.valBatch = 8;
    l.varLen = 8;
    l.xBytes = l.valXBytes = (int64_t)8 * 2048 * 8;
    l.valBatch = 2;
    loop_length(a, &l, 48, 2000);
    l.valIters = 4;
    acc_describe(a, "GPT training on documents of varying length, batched without padding to a fixed size: "
                    "sequence lengths follow a long tail (most batches short, a few near 2048 tokens), so "
                    "activation sizes change every step and the caching allocator (or the driver's pool) "
                    "reserves more whenever a longer batch than any before arrives: a staircase that "
                    "flattens out, not a leak. Expected: nothing at severity low or above.");
    loop_allow_grads(a);
    loop_all(a, &l, NULL, NULL, NULL);
}

/* Evaluation with a larger batch than training, under no_grad: a higher but flat peak. */
static void h_eval_batch(struct acc *a)
{
    struct loop l;
    loop_defaults(&l);
    pt_lm(&l.m, 12, 1024, 1024, 50304, 1);
    l.zTemplate = "ddp";
    l.stride = 4;
    l.batch = 8;
    l.valBatch = 96;
    l.xBytes = (int64_t)8 * 1024 * 8;
    l.valXBytes = (int64_t)96 * 1024 * 8;
    loop_length(a, &l, 32, 1600);
    l.valIters = 6;
    acc_describe(a, "GPT training with batch 8 and evaluation under torch.no_grad() with batch 96 (no "
                    "activations are kept, but the logits of 96 sequences are larger than all of "
                    "training's activations): evaluation peaks above training, flat from batch to batch, "
                    "nothing carried over. Expected: nothing at severity low or above (an `info` note "
                    "that evaluation peaks higher is fine).");
    loop_allow_grads(a);
    loop_all(a, &l, NULL, NULL, NULL);
}

/* ---- torch.compile ---- */

/* Inductor's generated module (its output_code file) and the frames between it and the user's call. */
#define GEN_FWD "gen:q7/cq7xkz3vbdq2m5x7l5ctbnwzjq3zq7m3l5hqkq2z4r3o6gqvbf7n.py"
#define GEN_BWD "gen:ue/cue4r2pzy6xk3jmw7tqzdc5n2w3hj6ahu6b4y5cyy7rbqwvqw3sbz.py"
#define INDUCTOR_FWD "lib:torch/_inductor/output_code.py:584:CompiledFxGraph.__call__|" \
    "lib:torch/_functorch/_aot_autograd/runtime_wrappers.py:351:_runtime_wrapper|" \
    "lib:torch/_functorch/_aot_autograd/runtime_wrappers.py:2169:AOTDispatchAutograd.post_compile.<locals>.CompiledFunction.forward|" \
    "lib:torch/autograd/function.py:581:Function.apply|" \
    "lib:torch/_functorch/aot_autograd.py:1221:aot_module_simplified.<locals>.forward|" \
    "lib:torch/_dynamo/eval_frame.py:929:DisableContext.__call__.<locals>._fn|" \
    "model.py:140:GPT.forward|lib:torch/_dynamo/eval_frame.py:414:OptimizedModule.__call__"
#define INDUCTOR_BWD "lib:torch/_inductor/output_code.py:584:CompiledFxGraph.__call__|" \
    "lib:torch/_functorch/_aot_autograd/runtime_wrappers.py:2375:AOTDispatchAutograd.post_compile.<locals>.CompiledFunction._backward_impl|" \
    "lib:torch/_functorch/_aot_autograd/runtime_wrappers.py:2299:AOTDispatchAutograd.post_compile.<locals>.CompiledFunction.backward|" \
    "lib:torch/autograd/function.py:311:BackwardCFunction.apply"

/* Kernels of the compiled graphs: Triton kernels named by Inductor's rule, cuBLAS (nvjet) matrix multiplies. */
static const char *const azTriton[] = {
    "triton_red_fused__to_copy_embedding_native_layer_norm_0", "triton_poi_fused_clone_1",
    "triton_per_fused__softmax__to_copy_2", "triton_red_fused_add_native_layer_norm_3", "triton_poi_fused_gelu_4",
    "triton_red_fused__log_softmax_nll_loss_forward_5",
};
static const char *const azTritonBwd[] = {
    "triton_red_fused__log_softmax_backward_data_nll_loss_backward_0", "triton_poi_fused_gelu_backward_1",
    "triton_red_fused_add_native_layer_norm_backward_2", "triton_per_fused__softmax_backward_data_3",
    "triton_red_fused_embedding_dense_backward_4",
};
static const char *const azNvjet[] = {
    "nvjet_tst_192x192_64x3_1x2_h_bz_coopB_NTN", "nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
    "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN",
};

/*
 * One training step of a torch.compile'd GPT: the forward graph allocates each buffer on its
 * own line of the generated module (saving half of them for backward), the backward graph
 * runs on the autograd thread through the generated backward module. aHidden receives the
 * 12 hidden states the model returns (-1 when they are dropped).
 */
static int compiled_step(struct acc *a, struct loop *l, struct js *j, int it, int *aHidden)
{
    struct pt_model *m = &l->m;
    int aSaved[256], nSaved = 0, x, logits, loss;
    int64_t act = (int64_t)8 * 1024 * 1024 * 2; /* batch 8, 1024 tokens, d 1024, bf16 */
    loop_push(a, j, ACC_NVTX_NAMES, "iter %d", it);
    loop_push(a, j, ACC_NVTX_PROFILER, "ProfilerStep#%d", it);
    js_cpu(j, l->cpuPerStep);
    pt_zero_grad(j, m, 1, U_TRAIN(63));
    if (l->lastX >= 0) js_free(j, l->lastX);
    x = loop_next_batch(l, j, l->xBytes, it, U_TRAIN(61));
    l->lastX = x;
    for (int b = 0; b < 96; b++) {
        char zSpec[1024];
        int site, t, bMm = b % 3 == 1;
        snprintf(zSpec, sizeof zSpec, GEN_FWD ":%d:call|" INDUCTOR_FWD "|" CALL "|%s", 212 + 9 * b, U_TRAIN(66));
        site = js_site(j, zSpec);
        t = js_alloc(j, bMm && b % 12 == 4 ? act * 3 : act, site, JS_NAT_ALLOC);
        if (t < 0) return -1;
        {
            int aT[4] = {x, m->w[1 + (b % (m->n - 2))], t, m->cublas};
            if (bMm) js_launch_named(j, azNvjet[b % 3], 180000, aT, 4);
            else js_launch_named(j, azTriton[b % 6], 60000, aT, 3);
        }
        if (b % 8 == 7 && aHidden) aHidden[b / 8] = t; /* returned to the caller: outputs.hidden_states */
        else if (b % 2 == 0 && nSaved < 256) aSaved[nSaved++] = t;
        else js_free(j, t);
    }
    {
        int site = js_site(j, GEN_FWD ":1093:call|" INDUCTOR_FWD "|" CALL "|" U_TRAIN(66)), aT[2];
        logits = js_alloc(j, (int64_t)8 * 1024 * 50304 * 2, site, JS_NAT_ALLOC);
        loss = js_alloc(j, 4, site, JS_NAT_ALLOC);
        aT[0] = logits;
        aT[1] = loss;
        js_launch_named(j, azTriton[5], 400000, aT, 2);
    }
    /* backward: the compiled backward graph on the autograd thread */
    for (int b = 0; b < 80; b++) {
        char zSpec[1024];
        int site, t;
        snprintf(zSpec, sizeof zSpec, GEN_BWD ":%d:call|" INDUCTOR_BWD, 240 + 11 * b);
        site = js_site(j, zSpec);
        t = js_alloc(j, act, site, JS_NAT_ALLOC);
        if (b < 40 && m->w[1 + b % (m->n - 2)] >= 0 && m->g[1 + b % (m->n - 2)] < 0)
            m->g[1 + b % (m->n - 2)] = js_alloc(j, m->a[1 + b % (m->n - 2)].w, site, JS_NAT_ALLOC);
        {
            int aT[4] = {t, nSaved ? aSaved[nSaved - 1] : -1, m->g[1 + b % (m->n - 2)], m->cublas};
            if (b % 3 == 1) js_launch_named(j, azNvjet[b % 3], 200000, aT, 4);
            else js_launch_named(j, azTritonBwd[b % 5], 70000, aT, 3);
        }
        if (nSaved && b % 2 == 1) js_free(j, aSaved[--nSaved]);
        js_free(j, t);
    }
    while (nSaved) js_free(j, aSaved[--nSaved]);
    for (int i = 0; i < m->n; i++)
        if (m->a[i].w && m->g[i] < 0) m->g[i] = js_alloc(j, m->a[i].w, js_site(j, GEN_BWD ":1012:call|" INDUCTOR_BWD), JS_NAT_ALLOC);
    js_here(j, js_site(j, U_TRAIN(67)));
    js_free(j, loss);
    if (l->lastOut >= 0) js_free(j, l->lastOut);
    l->lastOut = logits;
    loop_push(a, j, ACC_NVTX_PROFILER, "Optimizer.step#AdamW.step", 0);
    pt_step(j, m, U_TRAIN(72));
    loop_pop(a, j, ACC_NVTX_PROFILER);
    pt_item(j, logits, U_TRAIN(75));
    loop_pop(a, j, ACC_NVTX_PROFILER);
    loop_pop(a, j, ACC_NVTX_NAMES);
    return 0;
}

/*
 * A torch.compile'd GPT; bLeak: the training loop keeps every step's hidden states. *pVis (may be
 * NULL) receives whether the growth after warm-up is visible in the trace on some rank.
 */
static void compile_job(struct acc *a, int bLeak, int *pVis)
{
    const struct acc_variant *v = acc_variant(a);
    if (pVis) *pVis = 0;
    for (int r = 0; r < v->ranks; r++) {
        struct loop l;
        struct js_cfg c;
        struct js *j;
        int n;
        loop_defaults(&l);
        pt_lm(&l.m, 12, 1024, 1024, 50304, 1);
        l.zTemplate = "ddp";
        l.xBytes = (int64_t)8 * 1024 * 8;
        n = v->bLong ? 1200 : 32;
        memset(&c, 0, sizeof c);
        c.zTemplate = "ddp";
        c.kernelStride = 4;
        c.timeScale = 4.0;
        c.zCmd = "python train.py --compile";
        j = acc_process(a, r, &c);
        if (!j) return;
        pt_to_device(j, &l.m, U_TO_DEVICE);
        loop_push(a, j, ACC_NVTX_NAMES, "train", 0);
        for (int it = 0; it < n; it++) {
            int aHidden[12];
            for (int k = 0; k < 12; k++) aHidden[k] = -1;
            if (compiled_step(a, &l, j, it, aHidden) != 0) break;
            /* `hidden_history.append(outputs.hidden_states)` (train.py:77) or dropped */
            if (!bLeak)
                for (int k = 0; k < 12; k++) js_free(j, aHidden[k]);
            l.iterDone = it + 1;
            loop_note_reserved(&l, j);
        }
        if (pVis && loop_visible(a, l.growTrain, js_reserved(j))) *pVis = 1;
        loop_pop(a, j, ACC_NVTX_NAMES);
        js_sync(j);
        acc_end(a, j, 1, 1);
    }
}

static void h_compile(struct acc *a)
{
    acc_describe(a, "A GPT trained with torch.compile (Inductor): the forward and backward graphs run as "
                    "generated Python modules in /tmp/torchinductor_<user>, each buffer allocated on its own "
                    "line of them, with Triton kernels (named by Inductor's rule) and cuBLAS matrix "
                    "multiplies. Healthy: every buffer is freed within the step. Expected: nothing at "
                    "severity low or above.");
    loop_allow_grads(a);
    compile_job(a, 0, NULL);
}

static void p_compile_leak(struct acc *a)
{
    struct acc_exp e = {"hidden-kept", "leak", SITE_FWD, "medium|high", NULL, NULL, NULL, 1,
                        "generated code grouped into one site", 0, NULL};
    acc_describe(a, "The compiled GPT of compile_train whose loop keeps the 12 hidden states the model "
                    "returns every step (`hidden_history.append(outputs.hidden_states)`): 12 allocations "
                    "per step, each made on a different line of Inductor's generated module. One root "
                    "cause: expected one leak (growth) finding naming the user's call of the compiled "
                    "model, train.py:66, not one finding per generated line. The kept states are also held "
                    "idle: a retained finding at train.py:66 is the same root cause.");
    loop_allow_grads(a);
    loop_allow_also(a, "hidden-kept", "retained", NULL, SITE_FWD);
    compile_job(a, 1, &e.bRequired);
    acc_expect(a, &e);
}

/* ---- planted problems ---- */

struct keep {
    int a[20000];
    int n;
};

/* Training keeps every step's outputs (logits) on the GPU: `epoch_outputs.append(outputs)`. */
static void hook_keep_out(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct keep *k = l->pCtx;
    (void)it;
    (void)f;
    if (k->n < 20000 && l->lastOut >= 0) k->a[k->n++] = l->lastOut;
    l->lastOut = -1;
    (void)j;
}

static void p_leak_outputs(struct acc *a)
{
    struct loop l;
    static struct keep k;
    const struct acc_variant *v = acc_variant(a);
    struct acc_exp e = {"outputs-kept", "leak", SITE_FWD, "medium|high", NULL, NULL, NULL, 1,
                        "leak growth at its call site", 0, NULL};
    loop_defaults(&l);
    pt_cnn(&l.m, 224, 4096);
    l.xBytes = l.valXBytes = (int64_t)256 * 3 * 224 * 224 * 4;
    l.xTrainStep = hook_keep_out;
    l.pCtx = &k;
    l.zPlanted = "train.py:" S(L_FWD) ":train_one_epoch";
    loop_length(a, &l, 60, 2400);
    k.n = 0;
    acc_describe(a, "The ResNet-50 job of cnn_train_val with 4096 classes, whose training loop keeps each "
                    "step's logits for an epoch-end metric without .detach().cpu() (train.py:77 "
                    "`epoch_outputs.append(outputs)`): 4 MiB more live memory per step, allocated by the "
                    "model's last layer called from train.py:66. Expected: a leak (growth) at train.py:66, "
                    "medium or high. At segment level the logits fit in the cache's free blocks for "
                    "hundreds of steps (nothing is reserved for them in the short runs): the finding is "
                    "required there only where the allocator had to reserve more (the long run), at the "
                    "call site of the segments reserved after warm-up: train.py:66 where that line reserved "
                    "them, else the backward pass (the kept logits took free blocks, the autograd thread's "
                    "allocations found none), attributed at segment level.");
    loop_all(a, &l, NULL, &e.bRequired, NULL);
    e.zSite = loop_growth_site(a, &l, e.zSite);
    if (v->mode == JS_SEGMENTS) e.zClass = "segment-level growth attributed to its call site";
    acc_expect(a, &e);
    /* the kept outputs are also held through evaluation, idle, carried over */
    loop_allow_also(a, "outputs-kept", "retained", NULL, SITE_FWD);
    loop_allow_also(a, "outputs-kept", "validation_spike", "carried over", NULL);
    loop_allow_grads(a);
}

/* `self.probs = torch.cat([self.probs, probs])` once per step: one growing buffer, reallocated. */
struct cat {
    int cur;
    int64_t bytes;
};
static void hook_cat(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct cat *c = l->pCtx;
    int site = js_site(j, "metrics.py:41:AUROC.update|train.py:77:train_one_epoch|" MAIN), n;
    (void)it;
    (void)f;
    c->bytes += (int64_t)256 * 1000 * 4;
    n = js_alloc(j, c->bytes, site, JS_NAT_ALLOC);
    if (n < 0) return;
    {
        int aT[3] = {c->cur, n, l->lastOut};
        js_launch_named(j, "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>("
                           "float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, "
                           "128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, "
                           "unsigned int)", 200000, aT, 3);
    }
    js_here(j, js_site(j, "metrics.py:41:AUROC.update|train.py:77:train_one_epoch|" MAIN));
    js_free(j, c->cur);
    c->cur = n;
}

static void p_leak_cat(struct acc *a)
{
    struct loop l;
    static struct cat c;
    struct acc_exp e = {"growing-cat", "leak", "metrics.py:41 in AUROC.update", "medium|high", NULL, NULL, NULL, 1,
                        "leak growth at its call site", 0, NULL};
    loop_defaults(&l);
    pt_cnn(&l.m, 224, 1000);
    l.xBytes = l.valXBytes = (int64_t)256 * 3 * 224 * 224 * 4;
    l.xTrainStep = hook_cat;
    l.pCtx = &c;
    l.epochs = 1;
    l.valIters = 0;
    loop_length(a, &l, 60, 400);
    c.cur = -1;
    c.bytes = 0;
    acc_describe(a, "ResNet-50 training whose metric accumulates every step's softmax outputs with "
                    "`self.probs = torch.cat([self.probs, probs])` (metrics.py:41): one buffer, reallocated "
                    "1 MB larger each step and never reset. Expected: a leak (growth) at metrics.py:41. At "
                    "segment level each new buffer is carved out of the cache's free blocks and nothing more "
                    "is reserved in these runs, so the finding is required with tensor tracing only.");
    loop_all(a, &l, NULL, &e.bRequired, NULL);
    acc_expect(a, &e);
}

/* Only rank 0 keeps per-sample losses for logging: `history.append(loss_per_sample)`. */
static void hook_rank0(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct keep *k = l->pCtx;
    int site = js_site(j, "lib:torch/nn/functional.py:3494:cross_entropy|train.py:79:train_one_epoch|" MAIN);
    (void)it;
    (void)f;
    if (k->n < 20000) k->a[k->n++] = js_alloc(j, (int64_t)8 * 1024 * 4 * 64, site, JS_NAT_ALLOC);
}

static void p_leak_rank0(struct acc *a)
{
    const struct acc_variant *v = acc_variant(a);
    struct acc_exp e = {"rank0-history", "leak", "train.py:79 in train_one_epoch", "medium|high", NULL, NULL, "0", 1,
                        "leak on one rank only", 0, NULL};
    static struct keep k;
    acc_describe(a, "The DDP job of ddp_train where rank 0 alone keeps the per-sample losses of every step "
                    "for a histogram it logs at the end (train.py:79, under `if rank == 0`): 2 MiB more per "
                    "step on rank 0, nothing on the others. Expected: a leak on rank 0 at train.py:79, and "
                    "nothing on the other ranks (at segment level, required where the trace shows the "
                    "allocator reserving more, at the call site of the segments reserved after warm-up: "
                    "train.py:79 where that line reserved them, else the backward pass, attributed at "
                    "segment level). The history is also held, idle, through evaluation: a retained "
                    "finding at train.py:79 is the same root cause.");
    loop_allow_also(a, "rank0-history", "retained", NULL, "train.py:79 in train_one_epoch");
    loop_allow_grads(a);
    for (int r = 0; r < v->ranks; r++) {
        struct loop l;
        int bOom;
        struct js *j;
        loop_defaults(&l);
        pt_lm(&l.m, 12, 1024, 1024, 50304, 1);
        l.zTemplate = "ddp";
        l.stride = 4;
        l.batch = l.valBatch = 8;
        l.xBytes = l.valXBytes = (int64_t)8 * 1024 * 8;
        l.nBucket = (int)(pt_param_bytes(&l.m) / (25 * MiB)) + 1;
        l.ncclBytes = 384 * MiB;
        loop_length(a, &l, 40, 1600);
        l.valIters = 4;
        if (r == 0) {
            l.xTrainStep = hook_rank0;
            l.pCtx = &k;
            k.n = 0;
        }
        j = loop_run(a, &l, r, &bOom, NULL);
        if (!j) return;
        if (r == 0) {
            e.bRequired = loop_visible(a, l.growTrain, js_reserved(j));
            l.zPlanted = "train.py:79:train_one_epoch";
            loop_resv_note(&l, j);
            e.zSite = loop_growth_site(a, &l, e.zSite);
        }
        acc_end(a, j, l.bTeardown, l.bClean);
    }
    acc_expect(a, &e);
}

/* The last training step's outputs and batch stay referenced through evaluation. */
static void p_retained_val(struct acc *a)
{
    struct loop l;
    const struct acc_variant *v = acc_variant(a);
    struct acc_exp e = {"last-step-held", "retained", "model.py:149 in GPT.forward|" SITE_FWD, "medium|high",
                        "validation|evaluation", NULL, NULL, v->mode == JS_TENSORS,
                        "retained across a phase boundary", 0, NULL};
    loop_defaults(&l);
    pt_lm(&l.m, 12, 1024, 2048, 50304, 1);
    l.zTemplate = "ddp";
    l.stride = 4;
    l.batch = l.valBatch = 8;
    l.xBytes = l.valXBytes = (int64_t)8 * 2048 * 8;
    l.bKeepLastStep = 1;
    loop_length(a, &l, 32, 1600);
    l.valIters = 8;
    acc_describe(a, "A GPT training loop written inline in main() (no train_one_epoch function): after the "
                    "loop, `outputs` (the last step's bf16 logits, 1.6 GB) and `x` stay referenced while "
                    "evaluation runs, and are only dropped when the next epoch reassigns them. Expected "
                    "with tensor tracing: a retained finding (held through evaluation) at the logits' site "
                    "model.py:149 (called from train.py:66); at segment level the held tensor is inside a "
                    "cached segment, so nothing is required.");
    acc_expect(a, &e);
    loop_allow_also(a, "last-step-held", "validation_spike", "carried over", NULL);
    loop_allow_grads(a);
    loop_all(a, &l, NULL, NULL, NULL);
}

/* Validation without no_grad: `total = total + loss` keeps every batch's graph and its activations. */
static void hook_val_graph(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct keep *k = l->pCtx;
    (void)j;
    (void)b;
    /* the graph holds the saved activations (and the loss) until evaluation ends */
    for (int i = 0; i < l->m.n && k->n < 20000; i++)
        if (f->saved[i] >= 0) k->a[k->n++] = f->saved[i];
    if (k->n < 20000) k->a[k->n++] = f->loss;
    if (k->n < 20000) k->a[k->n++] = f->out;
}

static void val_graph_release(struct loop *l, struct js *j)
{
    struct keep *k = l->pCtx;
    for (int i = k->n - 1; i >= 0; i--) js_free(j, k->a[i]);
    k->n = 0;
}

static void p_val_no_grad(struct acc *a)
{
    const struct acc_variant *v = acc_variant(a);
    struct acc_exp e = {"val-graph", "validation_spike", SITE_VFWD, "medium|high", "validation|evaluation", NULL, NULL, 1,
                        "validation growth at its call site", 0, NULL};
    static struct keep k;
    int bVis = 0;
    acc_describe(a, "ResNet-50 training with an evaluation loop that forgot torch.no_grad() and sums losses "
                    "as tensors (`total = total + criterion(model(x), y)`, train.py:104): every batch's "
                    "graph keeps its saved activations (about 3 GB per batch of 32) until evaluation ends. "
                    "Memory grows batch by batch and evaluation peaks above training. Expected: a "
                    "validation_spike (growth) at train.py:104 in the evaluation phase; the `peak above "
                    "training` finding of the same cause may accompany it.");
    loop_allow_also(a, "val-graph", "validation_spike", "peaks", NULL);
    loop_allow_grads(a);
    for (int r = 0; r < v->ranks; r++) {
        struct loop l;
        struct js *j;
        int bOom;
        loop_defaults(&l);
        pt_cnn(&l.m, 224, 1000);
        l.xBytes = (int64_t)256 * 3 * 224 * 224 * 4;
        l.valBatch = 32;
        l.valXBytes = (int64_t)32 * 3 * 224 * 224 * 4;
        l.bValGrad = 1;
        l.bValKeepOut = 1;
        l.xValBatch = hook_val_graph;
        l.pCtx = &k;
        l.valIters = 10;
        l.epochs = 1;
        k.n = 0;
        loop_length(a, &l, 24, 1200);
        j = loop_run(a, &l, r, &bOom, NULL);
        if (!j) return;
        if (loop_visible(a, l.growVal, js_reserved(j))) bVis = 1;
        val_graph_release(&l, j);
        acc_end(a, j, l.bTeardown, l.bClean);
    }    e.bRequired = bVis;
    acc_expect(a, &e);
}

/* Evaluation keeps every batch's logits on the GPU: `all_logits.append(logits)`. */
static void hook_val_keep(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct keep *k = l->pCtx;
    (void)j;
    (void)b;
    if (k->n < 20000) k->a[k->n++] = f->out;
}

static void p_val_outputs(struct acc *a)
{
    const struct acc_variant *v = acc_variant(a);
    struct acc_exp e = {"val-logits", "validation_spike", "model.py:149 in GPT.forward|" SITE_VFWD, "medium|high",
                        "validation|evaluation", NULL, NULL, 1, "validation growth at its call site", 0, NULL};
    static struct keep k;
    int bVis = 0;
    acc_describe(a, "GPT evaluation under torch.no_grad() that keeps every batch's logits on the GPU to "
                    "compute perplexity and accuracy at the end (`all_logits.append(logits)`, train.py:108): "
                    "0.8 GB more per batch, freed after the phase. Expected: a validation_spike (growth) "
                    "at the logits' site (model.py:149, called from train.py:104) in the evaluation phase.");
    loop_allow_also(a, "val-logits", "validation_spike", "peaks", NULL);
    loop_allow_grads(a);
    for (int r = 0; r < v->ranks; r++) {
        struct loop l;
        struct js *j;
        int bOom;
        loop_defaults(&l);
        pt_lm(&l.m, 12, 1024, 1024, 50304, 1);
        l.zTemplate = "ddp";
        l.stride = 4;
        l.batch = l.valBatch = 8;
        l.xBytes = l.valXBytes = (int64_t)8 * 1024 * 8;
        l.bValKeepOut = 1;
        l.xValBatch = hook_val_keep;
        l.pCtx = &k;
        l.valIters = 16;
        l.epochs = 1;
        k.n = 0;
        loop_length(a, &l, 24, 1200);
        j = loop_run(a, &l, r, &bOom, NULL);
        if (!j) return;
        if (loop_visible(a, l.growVal, js_reserved(j))) bVis = 1;
        val_graph_release(&l, j);
        acc_end(a, j, l.bTeardown, l.bClean);
    }    e.bRequired = bVis;
    acc_expect(a, &e);
}

static void p_transfer_pageable(struct acc *a)
{
    struct loop l;
    struct acc_exp e = {"pageable-batches", "transfer", SITE_COPY, "medium|high", NULL, NULL, NULL, 1,
                        "transfer finding at the copy's call site", 0, NULL};
    struct acc_exp e2 = {"pageable-batches", "transfer", NULL, "low|medium|high", NULL, "erializ", NULL, 0,
                         "consequence of the planted cause", 0, NULL};
    loop_defaults(&l);
    pt_cnn(&l.m, 112, 400);
    l.bPinned = 0;
    l.batch = l.valBatch = 16;
    l.xBytes = l.valXBytes = (int64_t)16 * 3 * 16 * 224 * 224 * 4; /* video clips: 16 frames */
    l.timeScale = 0.5;
    loop_length(a, &l, 40, 2000);
    acc_describe(a, "A video model trained on 16-frame clips (154 MB per batch) from a DataLoader without "
                    "pin_memory, copied with a blocking x.to('cuda') (train.py:61): at 12 GB/s the copies "
                    "take about a quarter of each step and the GPU idles meanwhile. Expected: a transfer "
                    "finding (pageable copies) at train.py:61, medium or high; a second transfer finding "
                    "(copies serialized with compute) of the same cause may accompany it.");
    acc_expect(a, &e);
    acc_expect(a, &e2);
    loop_allow_grads(a);
    loop_all(a, &l, NULL, NULL, NULL);
}

/* The user keeps each pinned batch (`self.recent.append(batch)`): the host allocator cannot reuse blocks. */
static void p_pinned_growth(struct acc *a)
{
    const struct acc_variant *v = acc_variant(a);
    struct acc_exp e = {"pinned-kept", "transfer", "pin_memory.py:90 in pin_memory|train.py:58 in train_one_epoch",
                        "medium|high", NULL, "inned", NULL, 1, "pinned growth at its call site", 0, NULL};
    acc_describe(a, "ResNet-50 with a pinned DataLoader whose training loop keeps every CPU batch in a list "
                    "for a replay buffer (train.py:58 `recent.append(batch)`): the pinned blocks stay "
                    "referenced, so the caching host allocator page-locks a new 64 MiB block for every "
                    "batch. Expected: a transfer finding (pinned host memory growing) naming the pinned "
                    "allocations' site (the pin-memory thread) or the line that keeps them.");
    acc_expect(a, &e);
    loop_allow_grads(a);
    for (int r = 0; r < v->ranks; r++) {
        struct loop l;
        struct js *j;
        int bOom;
        loop_defaults(&l);
        pt_cnn(&l.m, 128, 1000);
        l.batch = l.valBatch = 256;
        l.xBytes = l.valXBytes = (int64_t)256 * 3 * 128 * 128 * 4;
        l.pinDepth = 16;
        l.epochs = 1;
        l.valIters = 0;
        loop_length(a, &l, 48, 600);
        /* every batch keeps its own block: a ring as deep as the run */
        l.pinDepth = l.iters * l.epochs + 1 < 4096 ? l.iters * l.epochs + 1 : 4096;
        j = loop_run(a, &l, r, &bOom, NULL);
        if (!j) return;
        acc_end(a, j, l.bTeardown, l.bClean);
    }
}

/* ---- out of memory ---- */

#define SITE_ATTN "model.py:67 in CausalSelfAttention.forward"

/*
 * An unusually long packed batch (torch.cuda.empty_cache() ran at the end of the previous
 * epoch): its MLP activations (512 MiB each) fill the device until less than one fits, then
 * its attention scores (4 GiB, model.py:67) are requested and fail; the allocator retries
 * once after releasing what it caches, fails again, and the exception unwinds the step.
 */
static void long_batch_oom(struct js *j)
{
    int siteMlp = js_site(j, pt_frames("lib:torch/nn/modules/linear.py:134:Linear.forward|" CALL_MLP, U_TRAIN(66)));
    int siteAttn = js_site(j, pt_frames("lib:torch/nn/functional.py:6345:scaled_dot_product_attention|"
                                        "model.py:67:CausalSelfAttention.forward|"
                                        "lib:torch/nn/modules/module.py:1786:Module._call_impl|model.py:119:Block.forward|"
                                        "lib:torch/nn/modules/module.py:1786:Module._call_impl|model.py:146:GPT.forward|"
                                        "lib:torch/nn/modules/module.py:1786:Module._call_impl", U_TRAIN(66)));
    int aT[256], n = 0;
    js_here(j, js_site(j, MAIN));
    js_empty_cache(j);
    js_here(j, js_site(j, U_TRAIN(66)));
    while (n < 256 && js_device_free(j) >= 512 * MiB) {
        int t = js_alloc(j, 512 * MiB, siteMlp, JS_NAT_ALLOC);
        if (t < 0) break;
        aT[n++] = t;
    }
    if (js_alloc(j, 4 * GiB, siteAttn, JS_NAT_ALLOC) >= 0) fprintf(stderr, "accgen: the long batch did not run out of memory\n");
    while (n > 0) js_free(j, aT[--n]);
}

/*
 * A job that ends in an OOM: the program allocates up to the failing request, the
 * allocator retries once (after releasing cached segments or trimming its pool), the
 * exception ends the script (traceback, normal exit: the trace is closed cleanly).
 */
static void oom_job(struct acc *a, int cause)
{
    const struct acc_variant *v = acc_variant(a);
    static const char *azTitle[] = {"fragmentation", "another process", "real demand", "unknown|not known|cannot"};
    struct acc_exp e = {"oom", "oom", cause == 0 ? "model.py:149 in GPT.forward" : SITE_ATTN, "high", NULL, azTitle[cause],
                        NULL, 1, "OOM verdict", 0, NULL};
    if (cause == 0 && v->mode == JS_SEGMENTS) e.zTitle = "fragmentation|unknown|not known|cannot|segment level";
    acc_expect(a, &e);
    for (int r = 0; r < v->ranks; r++) {
        struct loop l;
        struct js_cfg c;
        struct js *j;
        int bOom = 0;
        memset(&c, 0, sizeof c);
        loop_defaults(&l);
        pt_lm(&l.m, 24, 2048, 2048, 50304, 1);
        l.zTemplate = "ddp";
        l.stride = 4;
        l.batch = l.valBatch = 4;
        l.xBytes = l.valXBytes = (int64_t)4 * 2048 * 8;
        l.epochs = 1;
        l.valIters = 0;
        loop_length(a, &l, 12, 600);
        if (cause == 1) c.otherBytes = 34 * GiB;  /* a notebook kernel on the same GPU */
        if (cause == 3) c.unknownMemInfo = 1;
        j = loop_run(a, &l, r, &bOom, &c);
        if (!j) return;
        if (cause == 0) {
            /*
             * Variable-length batches fragment the cache: a long batch's activations (2 GB each) fill
             * the device; shorter batches then reuse those blocks split in two (1.2 GB activations), and
             * a per-length attention mask cached by the model (0.6 GB, model.py:58) lands in each
             * remainder. When the activations go, every segment keeps a live mask and a 1.2 GB hole:
             * half the reservation is free, no block is larger than 1.2 GB, none can be released.
             */
            int siteAct = js_site(j, pt_frames("lib:torch/nn/modules/linear.py:134:Linear.forward|" CALL_MLP, U_TRAIN(66)));
            int siteMask = js_site(j, pt_frames("model.py:58:CausalSelfAttention._mask|model.py:66:CausalSelfAttention.forward|"
                                                "lib:torch/nn/modules/module.py:1786:Module._call_impl|model.py:119:Block.forward|"
                                                "lib:torch/nn/modules/module.py:1786:Module._call_impl|model.py:146:GPT.forward|"
                                                "lib:torch/nn/modules/module.py:1786:Module._call_impl", U_TRAIN(66)));
            int siteLogit = js_site(j, pt_frames("lib:torch/nn/modules/linear.py:134:Linear.forward|"
                                                 "lib:torch/nn/modules/module.py:1786:Module._call_impl|model.py:149:GPT.forward|"
                                                 "lib:torch/nn/modules/module.py:1786:Module._call_impl", U_TRAIN(66)));
            int aA[64], aB[64], aC[64], n;
            js_here(j, js_site(j, MAIN));
            js_empty_cache(j); /* torch.cuda.empty_cache() at the end of the epoch */
            n = (int)((js_device_free(j) - 8 * GiB) / (2 * GiB));
            if (n > 64) n = 64;
            for (int i = 0; i < n; i++) aA[i] = js_alloc(j, 2 * GiB, siteAct, JS_NAT_ALLOC);
            for (int i = n - 1; i >= 0; i--) js_free(j, aA[i]);
            for (int i = 0; i < n; i++) {
                aB[i] = js_alloc(j, 1229 * MiB, siteAct, JS_NAT_ALLOC);
                aC[i] = js_alloc(j, 614 * MiB, siteMask, JS_NAT_ALLOC);
            }
            for (int i = n - 1; i >= 0; i--) js_free(j, aB[i]);
            if (js_alloc(j, 12 * GiB, siteLogit, JS_NAT_ALLOC) >= 0) fprintf(stderr, "accgen: no fragmentation OOM\n");
            for (int i = n - 1; i >= 0; i--) js_free(j, aC[i]);
        } else {
            long_batch_oom(j);
        }
        acc_end(a, j, 1, 1);
    }
}

static void p_oom_frag(struct acc *a)
{
    acc_describe(a, "A GPT fine-tune whose variable-length batches left the allocator's cache fragmented: "
                    "66 GB reserved, about half of it free in holes between live blocks, when a 12 GB "
                    "request fails with 8 GB free on the device (reserved-but-unused plus free would have "
                    "covered it). Expected: an OOM, high, judged fragmentation (at segment level the free "
                    "space inside segments is invisible, so saying it cannot be told is accepted too).");
    oom_job(a, 0);
}

static void p_oom_other(struct acc *a)
{
    acc_describe(a, "The same fine-tune on a GPU where another process (a forgotten notebook kernel) holds "
                    "34 GB: an unusually long batch fills what is left and its 4 GB attention scores fail, "
                    "although this process holds far less than the device. Expected: an OOM, high, judged "
                    "another process.");
    oom_job(a, 1);
}

static void p_oom_demand(struct acc *a)
{
    acc_describe(a, "The same fine-tune alone on its GPU: an unusually long packed batch needs more "
                    "activation memory than the device has (its MLP activations fill the device, then its "
                    "4 GB attention scores fail at model.py:67); the allocator's cache holds nothing to give "
                    "back. Expected: an OOM, high, judged real demand.");
    oom_job(a, 2);
}

static void p_oom_unknown(struct acc *a)
{
    acc_describe(a, "The real-demand OOM again, but cuMemGetInfo failed at the moment of the failure (the "
                    "device was already in an error state), so free and total memory are unknown (NULL). "
                    "Expected: an OOM, high, whose verdict says the cause cannot be told rather than "
                    "naming one.");
    oom_job(a, 3);
}

/* The whole validation set as one batch (the seed oom_in_validation.py): the first convolution cannot fit. */
static void p_oom_validation(struct acc *a)
{
    const struct acc_variant *v = acc_variant(a);
    struct acc_exp e = {"val-batch", "oom", SITE_VFWD, "high", "validation|evaluation", "real demand", NULL, 1,
                        "OOM verdict", 0, NULL};
    acc_describe(a, "ResNet-50 training, then an evaluation that puts the whole validation set in one batch "
                    "(`DataLoader(val_set, batch_size=len(val_set))`, as in the seed oom_in_validation.py): the "
                    "input fits, the first convolution's output (1.25 times the device's memory) does not. "
                    "Expected: an OOM in the evaluation phase, high, judged real demand (the request alone "
                    "exceeds the device), at the evaluation's forward call train.py:104.");
    acc_expect(a, &e);
    loop_allow_also(a, "val-batch", "validation_spike", NULL, NULL);
    loop_allow_grads(a);
    for (int r = 0; r < v->ranks; r++) {
        struct loop l;
        struct js *j;
        int bOom;
        loop_defaults(&l);
        pt_cnn(&l.m, 224, 1000);
        l.xBytes = (int64_t)256 * 3 * 224 * 224 * 4;
        l.valBatch = (int)((int64_t)85029158912LL * 5 / 4 / l.m.a[0].act) + 1;
        l.valXBytes = (int64_t)l.valBatch * 3 * 224 * 224 * 4;
        l.valIters = 1;
        l.epochs = 1;
        l.bOomPlanned = 1;
        loop_length(a, &l, 24, 1200);
        j = loop_run(a, &l, r, &bOom, NULL);
        if (!j) return;
        if (!bOom) fprintf(stderr, "accgen: oom_in_validation did not run out of memory\n");
        acc_end(a, j, l.bTeardown, l.bClean);
    }
}

/* Many OOMs of one cause over a long run: batches too long are caught and skipped. */
static void p_oom_flood(struct acc *a)
{
    const struct acc_variant *v = acc_variant(a);
    struct acc_exp e = {"oom-skip", "oom", SITE_ATTN, "high", NULL, "real demand", NULL, 1,
                        "one root cause, many events", 0, NULL};
    acc_describe(a, "A GPT fine-tune that catches torch.cuda.OutOfMemoryError and skips the batch "
                    "(`except OutOfMemoryError: optimizer.zero_grad(); torch.cuda.empty_cache(); continue`): "
                    "every few dozen steps a "
                    "batch of packed sequences is too long, its attention scores (model.py:67) do not fit, "
                    "the step is skipped. One root cause repeated many times. Expected: OOM findings (real "
                    "demand, high) at model.py:67, in a list no longer than a screen.");
    acc_expect(a, &e);
    for (int r = 0; r < v->ranks; r++) {
        struct loop l;
        struct js *j;
        int bOom;
        int nEvery = v->bLong ? 60 : 8;
        loop_defaults(&l);
        pt_lm(&l.m, 24, 2048, 2048, 50304, 1);
        l.zTemplate = "ddp";
        l.stride = 6;
        l.batch = l.valBatch = 4;
        l.xBytes = l.valXBytes = (int64_t)4 * 2048 * 8;
        l.epochs = 1;
        l.valIters = 0;
        loop_length(a, &l, 48, 2400);
        {
            int total = l.iters;
            l.iters = nEvery;
            struct js_cfg c;
            memset(&c, 0, sizeof c);
            l.epochs = 1;
            j = loop_run(a, &l, r, &bOom, &c);
            if (!j) return;
            for (int done = nEvery; done < total; done += nEvery) {
                long_batch_oom(j); /* caught, then torch.cuda.empty_cache() and the next batch */
                js_here(j, js_site(j, U_TRAIN(83)));
                js_empty_cache(j);
                for (int i = 0; i < nEvery && done + i < total; i++) {
                    if (loop_train_iter(a, &l, j, l.iterDone) != 0) break;
                    l.iterDone++;
                }
            }
        }
        acc_end(a, j, 1, 1);
    }
}

/* ---- the table ---- */

/*
 * Variants: space-separated codes MODE NVTX RANKS LENGTH [w]: mode S (segments) or T
 * (tensors), NVTX N (phase and iteration ranges), X (none), P (torch.profiler's
 * ProfilerStep#N ranges); ranks a number; length s (short) or l (long); w: Windows paths.
 * "base" is SN1s TN1s SX1s TX1s.
 */
const struct acc_scenario acc_aScenario[] = {
    {"cnn_train_val", "healthy", h_cnn, "base SP1s TP1s"},
    {"cnn_pageable_light", "healthy", h_cnn_pageable, "base"},
    {"grad_accum", "healthy", h_grad_accum, "base"},
    {"large_static", "healthy", h_large_static, "base SN1l"},
    {"inference_kv", "healthy", h_inference_kv, "base"},
    {"pinned_loader", "healthy", h_pinned_loader, "base"},
    {"ddp_train", "healthy", h_ddp, "SN4s TN4s SX4s TX4s"},
    {"varlen", "healthy", h_varlen, "base"},
    {"eval_batch", "healthy", h_eval_batch, "base"},
    {"compile_train", "healthy", h_compile, "base"},
    {"leak_outputs", "planted", p_leak_outputs, "base SP1s TP1s SN1sw TN1sw SN1l TN1l SN64s"},
    {"leak_cat", "planted", p_leak_cat, "base TN1l"},
    {"leak_rank0", "planted", p_leak_rank0, "SN4s TN4s SX4s TX4s"},
    {"compile_leak", "planted", p_compile_leak, "base"},
    {"retained_val", "planted", p_retained_val, "base"},
    {"val_no_grad", "planted", p_val_no_grad, "base SP1s TP1s"},
    {"val_outputs_list", "planted", p_val_outputs, "base"},
    {"transfer_pageable", "planted", p_transfer_pageable, "base"},
    {"pinned_growth", "planted", p_pinned_growth, "base"},
    {"oom_fragmentation", "planted", p_oom_frag, "SN1s TN1s"},
    {"oom_other_process", "planted", p_oom_other, "SN1s TN1s"},
    {"oom_real_demand", "planted", p_oom_demand, "SN1s TN1s"},
    {"oom_unknown_free", "planted", p_oom_unknown, "SN1s TN1s"},
    {"oom_in_validation", "planted", p_oom_validation, "base"},
    {"oom_flood", "planted", p_oom_flood, "SN1s TN1s SN1l"},
};
const int acc_nScenario = (int)(sizeof acc_aScenario / sizeof acc_aScenario[0]);
