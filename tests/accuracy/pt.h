/* PyTorch program pieces for the accuracy suite: models, forward/backward, optimizers, loaders, DDP. */
#ifndef VT_ACC_PT_H
#define VT_ACC_PT_H

#include "jobsim.h"

/*
 * What an eager PyTorch training or inference step does with device memory, on top
 * of jobsim: each layer's output allocated when the layer runs (kept for backward
 * when it is saved, else freed when the next layer has consumed it), gradients
 * allocated by the autograd engine's thread, weight gradients on the first backward
 * (or every step when zero_grad sets them to None), optimizer state created lazily
 * at the first step, the cuBLAS workspace at the first matrix multiply, batches
 * copied from the loader's pinned (or pageable) memory. Kernels come from the
 * template step of the process (jobsim), in the program's order, each using the
 * tensors of its layer.
 *
 * Call sites: `zUser` arguments are the user's frames below the library ones
 * ("train.py:88:train_one_epoch|train.py:140:main|train.py:151:<module>").
 */

#define PT_MAXL 256
/* nn.Module.__call__ between a module's forward and its caller */
#define PT_CALL "lib:torch/nn/modules/module.py:1786:Module._call_impl|lib:torch/nn/modules/module.py:1775:Module._wrapped_call_impl"

enum pt_kind { PT_CONV, PT_BN, PT_POOL, PT_ADD, PT_LINEAR, PT_EMBED, PT_ATTN, PT_MLP, PT_NORM, PT_HEAD, PT_KIND_N };

struct pt_layer {
    int kind;
    int64_t act;  /* output bytes per sample */
    int64_t w;    /* parameter bytes (0: none) */
    int64_t ws;   /* temporary workspace per call (cuDNN), 0 none */
};

struct pt_model {
    struct pt_layer a[PT_MAXL];
    int n;
    /* frames from each kind's op to the model's forward, user frames included for models defined
     * in the user's code (NULL: the nn.Sequential default, library frames only) */
    const char *azFrames[PT_KIND_N];
    int nState;          /* optimizer buffers per parameter: 0 plain SGD, 1 momentum, 2 Adam */
    int stateMul;        /* state bytes = parameter bytes * stateMul / 2 */
    int64_t cublasBytes; /* cuBLAS workspace (0: none) */
    int64_t lossBytes;   /* logits per sample are the last layer's act */
    int bOomKeep;        /* an OOM ends the process: the forward's tensors stay live (nothing unwinds) */
    /* tensors */
    int w[PT_MAXL], g[PT_MAXL], st[2][PT_MAXL], cublas;
    int bStateMade;
};

/* The tensors of one forward pass. */
struct pt_fwd {
    int out;              /* the model's output (logits) */
    int saved[PT_MAXL];   /* activations kept for backward, -1 none */
    int loss;
    int failSite;         /* the site of the allocation that ran out of memory, -1 none */
};

/* ResNet-50-like CNN at a batch's sample size (fp32); LM: decoder-only transformer (bf16). */
void pt_cnn(struct pt_model *m, int64_t image, int nClass);
void pt_lm(struct pt_model *m, int nLayer, int64_t dModel, int64_t seq, int64_t vocab, int bUserModel);
/* Merge runs of up to k layers into one (same total activation and parameter bytes, fewer allocations
 * and launches; no group larger than the largest layer): long runs and many ranks keep the memory
 * shape at a lower row count. */
void pt_shrink(struct pt_model *m, int k);
int64_t pt_param_bytes(const struct pt_model *m);
int64_t pt_act_bytes(const struct pt_model *m); /* saved activations per sample */

/* model.to('cuda'): parameters allocated and copied from pageable memory at zUser. */
void pt_to_device(struct js *j, struct pt_model *m, const char *zUser);
/* A batch (x of xBytes) from a loader's pinned block (pin >= 0) or pageable memory, copied at zUser. */
int pt_batch(struct js *j, int pin, int64_t xBytes, const char *zUser);
/* Forward of `batch` samples from x; bGrad: save activations for backward. x is consumed (freed) unless keepX. */
struct pt_fwd pt_forward(struct js *j, struct pt_model *m, int x, int batch, int bGrad, int keepX, const char *zUser);
/* loss.backward(): frees the saved activations and the loss' graph; ddpBuckets > 0 all-reduces during it. -1,
 * or the site of the allocation that ran out of memory (the autograd thread's: the exception leaves backward()
 * with the gradients in flight and the saved activations freed, unless the model keeps everything at an OOM). */
int pt_backward(struct js *j, struct pt_model *m, struct pt_fwd *f, int batch, const int *aBucket, int nBucket);
/* optimizer.step() at zUser (state created on the first call): -1, or the site of the allocation
 * that ran out of memory (the step stops there). optimizer.zero_grad(set_to_none). */
int pt_step(struct js *j, struct pt_model *m, const char *zUser);
void pt_zero_grad(struct js *j, struct pt_model *m, int bToNone, const char *zUser);
/* loss.item(): the step's synchronisation. */
void pt_item(struct js *j, int t, const char *zUser);

/* The site spec of frames zA followed by zB (a static buffer, one of four in turn). */
const char *pt_frames(const char *zA, const char *zB);

#endif
