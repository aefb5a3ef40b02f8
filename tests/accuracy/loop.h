/* The training driver of the accuracy suite: one PyTorch training job (epochs of training and evaluation) with hooks. */
#ifndef VT_ACC_LOOP_H
#define VT_ACC_LOOP_H

#include "acc.h"
#include "pt.h"

/*
 * The user's code the programs run: train.py (the loop), model.py (a model written by the user),
 * metrics.py and data.py, with the line numbers given in the site specs below.
 */

#define MAIN "train.py:212:main|train.py:231:<module>"
#define U_TO_DEVICE "train.py:188:main|train.py:231:<module>"
#define U_DDP "train.py:193:main|train.py:231:<module>"
#define T_LOOP "train.py:231:<module>"
#define U_TRAIN(line) "train.py:" #line ":train_one_epoch|" MAIN
#define U_VAL(line) "train.py:" #line ":evaluate|train.py:214:main|train.py:231:<module>"
/* lines of train_one_epoch */
#define L_COPY 61     /* x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True) */
#define L_FWD 66      /* outputs = model(x) */
#define L_LOSS 67     /* loss = criterion(outputs, y) */
#define L_BWD 69      /* loss.backward() */
#define L_STEP 72     /* optimizer.step() */
#define L_ZERO 63     /* optimizer.zero_grad() (before the forward; after the step with accumulation: 73) */
#define L_ITEM 75     /* running += loss.item() */
#define L_KEEP 77     /* the planted line of a training problem (79: rank 0's, 83: the OOM handler's) */
/* lines of evaluate */
#define L_VCOPY 101
#define L_VFWD 104
#define L_VLOSS 105
#define L_VITEM 107
#define L_VKEEP 108

#define CALL PT_CALL
/* the call of a model.py MLP's projection from GPT.forward */
#define CALL_MLP "lib:torch/nn/modules/module.py:1786:Module._call_impl|model.py:94:MLP.forward|" \
    "lib:torch/nn/modules/module.py:1786:Module._call_impl|model.py:121:Block.forward|" \
    "lib:torch/nn/modules/module.py:1786:Module._call_impl|model.py:146:GPT.forward|" \
    "lib:torch/nn/modules/module.py:1786:Module._call_impl"

#define S_(x) #x
#define S(x) S_(x)
#define SITE_FWD "train.py:" S(L_FWD) " in train_one_epoch"
#define SITE_COPY "train.py:" S(L_COPY) " in train_one_epoch"
#define SITE_KEEP "train.py:" S(L_KEEP) " in train_one_epoch"
#define SITE_VFWD "train.py:" S(L_VFWD) " in evaluate"
#define SITE_VCOPY "train.py:" S(L_VCOPY) " in evaluate"


struct loop;
typedef void (*loop_hook)(struct loop *l, struct js *j, int iter, struct pt_fwd *f);

struct loop {
    struct pt_model m;
    const char *zTemplate;   /* kernel sequence of the step */
    int stride;              /* play every k-th kernel of it */
    double timeScale;
    int batch, valBatch;
    int64_t xBytes, valXBytes; /* one batch's input bytes */
    int epochs, iters, valIters;
    int bPinned, pinDepth;   /* DataLoader(pin_memory=True), batches in flight */
    int valPinDepth;         /* evaluation from a DataLoader of its own pinning this many batches ahead (0: the
                              * training loader's ring) */
    int accum;               /* micro-batches per optimizer step */
    int bZeroNone;           /* zero_grad(set_to_none=True) (the default since PyTorch 2.0) */
    int bZeroLast;           /* zero_grad after the optimizer step (gradient accumulation), else before the forward */
    int nBucket;             /* DDP gradient buckets (0: no DDP) */
    int64_t ncclBytes;       /* NCCL buffers per rank */
    int bTeardown, bClean;   /* main() returns (tensors freed) / trace closed cleanly */
    int bKeepLastStep;       /* the last step's outputs and batch stay referenced through evaluation */
    int64_t cpuPerStep;      /* Python and data loading per step */
    loop_hook xTrainStep;    /* after each optimizer step (the planted training problem) */
    loop_hook xValBatch;     /* after each evaluation batch, with its forward (out freed unless kept) */
    loop_hook xMicroBatch;   /* after each micro-batch's backward (iter: the micro-batch's number) */
    loop_hook xIterStart;    /* before each training iteration (f: NULL) */
    loop_hook xValEnd;       /* after an evaluation's last batch, inside its phase (iter: batches run; f: NULL) */
    loop_hook xValStart;     /* at an evaluation's start, inside its phase, before its first batch (iter: evaluations run; f: NULL) */
    int valEvery;            /* > 1: evaluate after every valEvery-th epoch only (and after the last) */
    int bNoRecordFunction;   /* the optimizer has no profile hooks (no Optimizer.step#... ranges) */
    int failSite;            /* the site of the allocation that ran out of memory, -1 none */
    int bOomPlanned;         /* the job is meant to run out of memory (else an OOM is a defect of the family) */
    int varLen;              /* > 1: sequence lengths vary per batch, 1..varLen units (long-tailed) */
    int bValGrad;            /* evaluation without torch.no_grad() */
    int valLen;              /* > 1: evaluation batches of varying length, 1..valLen units */
    int bValSorted;          /* with valLen: lengths ascending through each evaluation (a length-sorted loader) */
    int bValKeepOut;         /* xValBatch owns f->out */
    void *pCtx;              /* hook state */
    int iterDone;            /* iterations run so far (all epochs) */
    int valDone;
    /* what the trace can show: device memory reserved after warm-up (the second iteration), its
     * largest rise after it, and the largest rise during one evaluation phase */
    int64_t resWarm, growTrain, growVal;
    int nGrowTrain;          /* the iterations after warm-up at which growTrain rose */
    /* segment bytes reserved after warm-up (all ranks): by allocations on the line zPlanted
     * (a "FILE:LINE:" frame, NULL none), and by the autograd thread */
    const char *zPlanted;
    int64_t resvPlanted, resvBackward;
    /* the largest share of a rank's run (from its first kernel) spent in pageable copies (loop_epochs) */
    double pageableShare;
    /* tensors */
    int aBucket[64];
    int lastX, lastOut;
    int aPin[4096];
};

/* A loop with the defaults (ResNet-50 template, batch 256, 2 epochs of 24 iterations, pinned loader). */
void loop_defaults(struct loop *l);
/* NVTX: push zFmt (formatted with n when it holds a %) when the variant records NVTX ranges of that style. */
void loop_push(struct acc *a, struct js *j, int style, const char *zFmt, int n);
void loop_pop(struct acc *a, struct js *j, int style);
/* The next batch of `bytes`, number k: from the loader's pinned ring or pageable memory, copied at zUser. */
int loop_next_batch(struct loop *l, struct js *j, int64_t bytes, int k, const char *zUser);
/* One training iteration (accum micro-batches and one optimizer step); -1 when it ran out of memory. */
int loop_train_iter(struct acc *a, struct loop *l, struct js *j, int it);
/* One evaluation batch under torch.no_grad() (unless bValGrad); -1 when it ran out of memory. */
int loop_val_batch(struct acc *a, struct loop *l, struct js *j, int b);
/* After a training iteration: the reservation after warm-up, and its rise since. */
void loop_note_reserved(struct loop *l, struct js *j);
/* Whether growth of `grow` bytes shows in the trace (every tensor in tensor mode; at segment level
 * only when the allocator had to reserve at least 64 MiB and 1 % of `reserved` more). */
int loop_visible(struct acc *a, int64_t grow, int64_t reserved);
int loop_visible_train(struct acc *a, const struct loop *l, int64_t reserved);
/* The whole job on one rank; the process stays open (the caller ends it), *pOom 1 when an OOM ended it. */
struct js *loop_run(struct acc *a, struct loop *l, int rank, int *pOom, struct js_cfg *pCfg);
/* loop_run in two parts: the process with the model on the device (and DDP), then the epochs. */
struct js *loop_open(struct acc *a, struct loop *l, int rank, struct js_cfg *pCfg);
void loop_epochs(struct acc *a, struct loop *l, struct js *j, int *pOom);
/* Add what rank j's allocator reserved after warm-up, by the planted line and by the autograd thread, to l. */
void loop_resv_note(struct loop *l, const struct js *j);
/* The site a trace can name for growth planted on zSite (the backward pass at segment level where
 * the autograd thread reserved more than the planted line). */
const char *loop_growth_site(struct acc *a, const struct loop *l, const char *zSite);
/* Run the loop on every rank and end each process; *pVisTrain / *pVisVal (may be NULL): whether the
 * growth during training / one evaluation phase shows in the trace on some rank. */
void loop_all(struct acc *a, struct loop *proto, struct js_cfg *pCfg, int *pVisTrain, int *pVisVal);
/* Iterations: short runs, or long ones (thousands of iterations) with fewer kernels each. */
void loop_length(struct acc *a, struct loop *l, int shortIters, int longIters);
/* Optional expectation: the last step's gradients held through evaluation until the next zero_grad(). */
void loop_allow_grads(struct acc *a);
/* Optional findings that follow from a planted cause: `kind` with a title containing zTitle, at zSite. */
void loop_allow_also(struct acc *a, const char *zCause, const char *zKind, const char *zTitle, const char *zSite);

#endif
