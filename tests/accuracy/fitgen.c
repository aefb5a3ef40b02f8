/* fitgen: training jobs whose largest batch is known, for scoring what 'analyze --batch' predicts would fit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pt.h"
#include "ptrec.h"

/*
 * fitgen [--kernels FILE] [--split dev|blind|all|look] [--seed N] [--only NAME] [--at BATCH] [--list] OUTDIR
 *
 * For each case: the true boundary (the largest batch size whose training steps run without an
 * out-of-memory error on the case's device, found by running the job at each size tried, as a
 * person would by trying), then the job's trace at a smaller batch, OUTDIR/CASE/rank0.db (for a
 * case with the history, PyTorch's exit snapshot beside it, vramtrace-HOST-PID.snapshot.pickle,
 * which analyze merges), with OUTDIR/CASE/truth.json {"case", "split", "mode" (tensors, segments
 * or history), "batch", "true_max_batch", "largest_batch_that_runs", "expandable_true_max_batch"
 * (a history case without expandable segments: the same for the same job run with
 * expandable_segments:True, the truth of the saving's batch; else null), ...}. Fragmentation can
 * make a batch fail and a larger one run again: true_max_batch is the largest up to which every
 * batch from the traced one runs (first_failure), and largest_batch_that_runs the doubling and
 * bisection's answer (larger where such a window lies below it). The jobs are jobsim's (the
 * caching allocator or cudaMallocAsync, the CUDA context the device keeps, cuBLAS, NCCL), so
 * the boundary includes the allocator's rounding and fragmentation. The blind split is written
 * with other models, devices and fractions and is scored only once the estimate is final.
 * The look split (--split look, --seed N) is drawn at random instead (draw_look): look-alike jobs
 * for judging the estimate on shapes nobody picked.
 * Exit codes: 0 done, 1 a trace could not be written, 2 bad arguments.
 */

enum { F_CNN = 0, F_LM, F_MLP };

struct fcase {
    const char *zName;
    const char *zSplit;     /* "dev" or "blind" */
    int family, mode, bNvtx;
    int64_t total;          /* device bytes */
    int bZeroNone, bZeroLast;
    int nccl;               /* NCCL buffers (MiB), 0 none */
    double frac;            /* the traced batch as a fraction of the true boundary */
    int a, b;               /* family sizes: CNN image side; LM layers and width / 64 */
    int bExp;               /* segment level with expandable_segments:True (VMM pages, not segments) */
    int bHist;              /* PyTorch's allocation history beside the trace (ptrec's exit snapshot, which
                             * analyze merges): the caching allocator's blocks, tensor level; without bExp
                             * also the truth of the same job with expandable_segments:True (its twin) */
};

#define GB ((int64_t)1000000000)
static const struct fcase aCase[] = {
    /* dev: what the estimate was built against */
    {"cnn_seg_24g", "dev", F_CNN, JS_SEGMENTS, 1, 24 * GiB, 1, 0, 0, 0.5, 224, 0, 0, 0},
    {"cnn_tensor_24g", "dev", F_CNN, JS_TENSORS, 1, 24 * GiB, 1, 0, 0, 0.5, 224, 0, 0, 0},
    {"cnn_seg_80g_nonvtx", "dev", F_CNN, JS_SEGMENTS, 0, 80 * GiB, 1, 0, 0, 0.3, 224, 0, 0, 0},
    {"lm_tensor_40g", "dev", F_LM, JS_TENSORS, 1, 40 * GiB, 1, 0, 0, 0.5, 12, 16, 0, 0},
    {"lm_seg_40g_keepgrad", "dev", F_LM, JS_SEGMENTS, 1, 40 * GiB, 0, 0, 0, 0.5, 12, 16, 0, 0},
    {"lm_seg_80g_ddp", "dev", F_LM, JS_SEGMENTS, 1, 80 * GiB, 1, 0, 256, 0.25, 12, 16, 0, 0},
    {"mlp_tensor_16g", "dev", F_MLP, JS_TENSORS, 0, 16 * GiB, 1, 1, 0, 0.5, 8, 64, 0, 0},
    /* fragmentation makes it fail from batch 287 to 319 and run again from 320 to 359 */
    {"lm_tensor_141g_window", "dev", F_LM, JS_TENSORS, 0, 141 * GB, 1, 0, 0, 0.55, 6, 18, 0, 0},
    /* expandable segments: the allocator maps and unmaps pages (cuMemCreate/cuMemMap) */
    {"cnn_exp_24g", "dev", F_CNN, JS_SEGMENTS, 1, 24 * GiB, 1, 0, 0, 0.5, 224, 0, 1, 0},
    {"lm_exp_40g_nonvtx", "dev", F_LM, JS_SEGMENTS, 0, 40 * GiB, 1, 1, 0, 0.4, 12, 16, 1, 0},
    {"mlp_exp_16g_keepgrad", "dev", F_MLP, JS_SEGMENTS, 1, 16 * GiB, 0, 0, 0, 0.5, 8, 64, 1, 0},
    /* the same expandable jobs with PyTorch's allocation history (segment_map/segment_unmap): tensor level */
    {"cnn_exp_24g_hist", "dev", F_CNN, JS_SEGMENTS, 1, 24 * GiB, 1, 0, 0, 0.5, 224, 0, 1, 1},
    {"lm_exp_40g_nonvtx_hist", "dev", F_LM, JS_SEGMENTS, 0, 40 * GiB, 1, 1, 0, 0.4, 12, 16, 1, 1},
    {"mlp_exp_16g_keepgrad_hist", "dev", F_MLP, JS_SEGMENTS, 1, 16 * GiB, 0, 0, 0, 0.5, 8, 64, 1, 1},
    /* the same jobs with the default allocator and the history: the expandable saving's batch against their truth */
    {"cnn_hist_24g", "dev", F_CNN, JS_SEGMENTS, 1, 24 * GiB, 1, 0, 0, 0.5, 224, 0, 0, 1},
    {"lm_hist_40g_nonvtx", "dev", F_LM, JS_SEGMENTS, 0, 40 * GiB, 1, 1, 0, 0.4, 12, 16, 0, 1},
    {"mlp_hist_16g_keepgrad", "dev", F_MLP, JS_SEGMENTS, 1, 16 * GiB, 0, 0, 0, 0.5, 8, 64, 0, 1},
    /* blind: other shapes, devices and fractions */
    {"cnn_seg_40g_small", "blind", F_CNN, JS_SEGMENTS, 1, 40 * GiB, 1, 0, 0, 0.4, 160, 0, 0, 0},
    {"cnn_tensor_80g_keepgrad", "blind", F_CNN, JS_TENSORS, 0, 80 * GiB, 0, 0, 0, 0.25, 224, 0, 0, 0},
    {"lm_tensor_80g_deep", "blind", F_LM, JS_TENSORS, 1, 80 * GiB, 1, 1, 0, 0.35, 24, 24, 0, 0},
    {"lm_seg_24g_nonvtx", "blind", F_LM, JS_SEGMENTS, 0, 24 * GiB, 1, 0, 128, 0.6, 8, 12, 0, 0},
    {"mlp_seg_48g", "blind", F_MLP, JS_SEGMENTS, 1, 48 * GiB, 0, 0, 0, 0.3, 12, 96, 0, 0},
    {"lm_tensor_141g_ddp", "blind", F_LM, JS_TENSORS, 0, 141 * GB, 1, 0, 512, 0.5, 16, 32, 0, 0},
    {"cnn_exp_80g_nonvtx", "blind", F_CNN, JS_SEGMENTS, 0, 80 * GiB, 0, 0, 0, 0.3, 192, 0, 1, 0},
    {"lm_exp_80g_ddp", "blind", F_LM, JS_SEGMENTS, 1, 80 * GiB, 1, 0, 256, 0.35, 16, 20, 1, 0},
    {"cnn_exp_80g_nonvtx_hist", "blind", F_CNN, JS_SEGMENTS, 0, 80 * GiB, 0, 0, 0, 0.3, 192, 0, 1, 1},
    {"lm_exp_80g_ddp_hist", "blind", F_LM, JS_SEGMENTS, 1, 80 * GiB, 1, 0, 256, 0.35, 16, 20, 1, 1},
    {"cnn_hist_80g_nonvtx", "blind", F_CNN, JS_SEGMENTS, 0, 80 * GiB, 0, 0, 0, 0.3, 192, 0, 0, 1},
    {"lm_hist_80g_ddp", "blind", F_LM, JS_SEGMENTS, 1, 80 * GiB, 1, 0, 256, 0.35, 16, 20, 0, 1},
};
#define N_CASE ((int)(sizeof aCase / sizeof aCase[0]))
#define ITERS 3

#define USER_TRAIN(line) "train.py:" #line ":train|train.py:120:main|train.py:131:<module>"

/* A plain MLP of n layers of width w (bf16, Adam): a model the scenarios do not have. */
static void mlp(struct pt_model *m, int n, int64_t w)
{
    pt_lm(m, 0, w, 1, 8, 0); /* an embedding of 8 rows, a norm and a head, then replaced below */
    m->n = 0;
    for (int i = 0; i < n && m->n < PT_MAXL; i++) {
        m->a[m->n].kind = PT_MLP;
        m->a[m->n].act = 4 * w * 2;
        m->a[m->n].w = 4 * w * w * 2;
        m->a[m->n].ws = 0;
        m->n++;
    }
    m->a[m->n].kind = PT_HEAD;
    m->a[m->n].act = 1000 * 2;
    m->a[m->n].w = 1000 * 4 * w * 2;
    m->a[m->n].ws = 0;
    m->n++;
}

/* The case's model and the input bytes of one sample. */
static void model(const struct fcase *k, struct pt_model *m, int64_t *pSample, const char **pzTemplate)
{
    if (k->family == F_CNN) {
        pt_cnn(m, k->a, 1000);
        pt_shrink(m, 4);
        *pSample = (int64_t)3 * k->a * k->a * 4;
        *pzTemplate = "resnet50";
    } else if (k->family == F_LM) {
        pt_lm(m, k->a, (int64_t)k->b * 64, 1024, 50304, 1);
        pt_shrink(m, 4);
        *pSample = 1024 * 8;
        *pzTemplate = "ddp";
    } else {
        mlp(m, k->a, (int64_t)k->b * 64);
        *pSample = (int64_t)4 * k->b * 64 * 2;
        *pzTemplate = "ddp";
    }
}

/*
 * Run case k at batch size `batch` for ITERS steps, writing the trace zPath, and with zHist (a
 * folder: the trace's) PyTorch's allocation history there as `record` keeps it (the exit
 * snapshot). Returns 1 when every step ran, 0 when one ran out of memory, -1 when the trace or the
 * history could not be written.
 */
static int run(const struct fcase *k, int batch, const char *zPath, const char *zHist, uint64_t seed)
{
    struct js_cfg c;
    struct pt_model m;
    struct js *j;
    struct ptrec *r = NULL;
    int64_t sample;
    int ok = 1, x = -1, out = -1, aBucket[64], nBucket = 0;
    memset(&c, 0, sizeof c);
    model(k, &m, &sample, &c.zTemplate);
    c.zPath = zPath;
    c.mode = k->mode;
    c.bExpandable = k->bExp;
    c.seed = seed;
    c.deviceTotal = k->total;
    c.kernelStride = 8;
    c.timeScale = 8;
    c.zCmd = "python train.py --batch-size N";
    if (zHist) {
        struct ptrec_opt o;
        memset(&o, 0, sizeof o);
        o.flags = PTREC_HISTORY;
        if (!(r = ptrec_new(zHist, &o))) return -1;
        c.pObs = ptrec_obs(r);
    }
    if (!(j = js_open(&c))) {
        ptrec_finish(r);
        return -1;
    }
    if (r) ptrec_attach(r, j);
    pt_to_device(j, &m, "train.py:112:main|train.py:131:<module>");
    if (k->nccl) {
        int site = js_site(j, pt_frames("lib:torch/nn/parallel/distributed.py:1215:DistributedDataParallel._ddp_init_helper|"
                                        "lib:torch/nn/parallel/distributed.py:925:DistributedDataParallel.__init__",
                                        "train.py:114:main|train.py:131:<module>"));
        js_nccl_init(j, 4, (int64_t)k->nccl * MiB / 4);
        nBucket = (int)(pt_param_bytes(&m) / (25 * MiB)) + 1;
        if (nBucket > 64) nBucket = 64;
        for (int i = 0; i < nBucket; i++) aBucket[i] = js_alloc(j, 25 * MiB, site, JS_NAT_ALLOC);
    }
    for (int it = 0; it < ITERS && ok; it++) {
        struct pt_fwd f;
        char zName[32];
        snprintf(zName, sizeof zName, "step %d", it);
        if (k->bNvtx) js_push(j, zName);
        if (!k->bZeroLast) pt_zero_grad(j, &m, k->bZeroNone, USER_TRAIN(60));
        js_cpu(j, 1000000);
        if (x >= 0) js_free(j, x); /* the previous step's batch and output, dropped on reassignment */
        if (out >= 0) js_free(j, out);
        x = out = -1;
        x = pt_batch(j, -1, sample * batch, USER_TRAIN(62));
        if (x < 0) {
            ok = 0;
            break;
        }
        f = pt_forward(j, &m, x, batch, 1, 1, USER_TRAIN(64));
        if (f.out < 0) {
            ok = 0;
            break;
        }
        js_here(j, js_site(j, USER_TRAIN(66)));
        pt_backward(j, &m, &f, batch, aBucket, nBucket);
        js_free(j, f.loss);
        out = f.out;
        pt_step(j, &m, USER_TRAIN(68));
        if (k->bZeroLast) pt_zero_grad(j, &m, k->bZeroNone, USER_TRAIN(69));
        pt_item(j, out, USER_TRAIN(70));
        if (k->bNvtx) js_pop(j);
        if (js_failed(j)) ok = 0; /* an allocation of the backward pass or the optimizer failed */
    }
    if (js_close(j, 1, 1) != 0) ok = -1;
    if (r && ptrec_finish(r) != 0) ok = -1;
    return ok;
}

/* The largest batch size searched: 1 << 16 for the recorded splits, more for drawn small models. */
static int g_maxBatch = 1 << 16;

/* The largest batch size that runs (1 .. g_maxBatch), or -1 when even 1 does not or a trace failed. */
static int boundary(const struct fcase *k, const char *zProbe)
{
    int lo = 0, hi = 1, r;
    while ((r = run(k, hi, zProbe, NULL, 1)) == 1) { /* double until one fails */
        lo = hi;
        if (hi >= g_maxBatch) return hi;
        hi *= 2;
    }
    if (r < 0) return -1;
    while (hi - lo > 1) { /* lo runs, hi does not */
        int mid = lo + (hi - lo) / 2;
        if ((r = run(k, mid, zProbe, NULL, 1)) < 0) return -1;
        if (r) lo = mid;
        else hi = mid;
    }
    return lo > 0 ? lo : -1;
}

/*
 * The largest batch from `batch` (which runs) up to which every batch runs, looked for up to `best`
 * (the boundary's answer, which runs): batches tried in steps of a fortieth (2.5 %) up from batch
 * until one fails, then bisected below it. Where fragmentation makes the job fail at some batch
 * sizes and run at larger ones, this is the first failure less one, which a person raising the
 * batch meets, and `best` is a batch beyond it that runs again; a window of failures narrower
 * than the step may be missed. -1 when a trace could not be written.
 */
static int first_failure(const struct fcase *k, int batch, int best, const char *zProbe)
{
    int lo = batch, hi = -1, r;
    while (lo < best && hi < 0) {
        int x = lo + (lo / 40 > 1 ? lo / 40 : 1);
        if (x > best) x = best;
        if ((r = run(k, x, zProbe, NULL, 1)) < 0) return -1;
        if (r) lo = x;
        else hi = x;
    }
    if (hi < 0) return best;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if ((r = run(k, mid, zProbe, NULL, 1)) < 0) return -1;
        if (r) lo = mid;
        else hi = mid;
    }
    return lo;
}

/*
 * The look-alike split: N_LOOK cases drawn at random from seed (a CNN, an LM or an MLP of drawn
 * size, either level, with or without NVTX, zero_grad before or after the step, set_to_none or
 * not, NCCL buffers for some LMs, a drawn device and traced fraction), written into aLook with
 * their names in azLook. Judged on what the estimate was not written for: no case is chosen.
 */
#define N_LOOK 12
static struct fcase aLook[N_LOOK];
static char azLook[N_LOOK][32];
static void draw_look(uint64_t seed)
{
    static const int64_t aTotal[] = {16 * GiB, 24 * GiB, 40 * GiB, 48 * GiB, 80 * GiB, 141 * GB};
    uint64_t x = seed ? seed : 0x9e3779b97f4a7c15ull;
#define DRAW(n) (x ^= x << 13, x ^= x >> 7, x ^= x << 17, (int)(x % (uint64_t)(n)))
    for (int i = 0; i < N_LOOK; i++) {
        struct fcase *k = &aLook[i];
        memset(k, 0, sizeof *k);
        k->family = DRAW(3);
        k->mode = DRAW(2) ? JS_SEGMENTS : JS_TENSORS;
        k->bNvtx = DRAW(2);
        k->bZeroNone = DRAW(2);
        k->bZeroLast = DRAW(3) == 0;
        k->frac = 0.25 + 0.05 * DRAW(8);
        if (k->family == F_CNN) {
            k->total = aTotal[DRAW(6)];
            k->a = 160 + 32 * DRAW(4);
        } else if (k->family == F_LM) {
            k->total = aTotal[2 + DRAW(4)]; /* a 1024-token LM needs 40 GB or more */
            k->a = 4 + DRAW(9);
            k->b = 8 + 2 * DRAW(9);
            k->nccl = DRAW(3) == 0 ? 256 : 0;
        } else {
            k->total = aTotal[DRAW(6)];
            k->a = 4 + DRAW(9);
            k->b = 16 + 8 * DRAW(11);
        }
        snprintf(azLook[i], sizeof azLook[i], "look%02d_%s_%s", i,
                 k->family == F_CNN ? "cnn" : k->family == F_LM ? "lm" : "mlp", k->mode == JS_TENSORS ? "tensor" : "seg");
        k->zName = azLook[i];
        k->zSplit = "look";
    }
#undef DRAW
}

static void usage(FILE *f)
{
    fprintf(f, "usage: fitgen [--kernels FILE] [--split dev|blind|all] [--only NAME] [--at BATCH] [--list] OUTDIR\n");
}

int main(int argc, char **argv)
{
    const char *zKernels = VT_ACC_KERNELS, *zSplit = "dev", *zOnly = NULL, *zOut = NULL;
    int bList = 0, rc = 0, at = 0, nCase;
    const struct fcase *aAll = aCase;
    uint64_t seed = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kernels") && i + 1 < argc) zKernels = argv[++i];
        else if (!strcmp(argv[i], "--split") && i + 1 < argc) zSplit = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) zOnly = argv[++i];
        else if (!strcmp(argv[i], "--list")) bList = 1;
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--at") && i + 1 < argc) at = atoi(argv[++i]); /* the trace at this batch, no search */
        else if (argv[i][0] != '-' && !zOut) zOut = argv[i];
        else {
            usage(stderr);
            return 2;
        }
    }
    if (strcmp(zSplit, "dev") && strcmp(zSplit, "blind") && strcmp(zSplit, "all") && strcmp(zSplit, "look")) {
        usage(stderr);
        return 2;
    }
    if (bList) {
        for (int i = 0; i < N_CASE; i++) printf("%-28s %s\n", aCase[i].zName, aCase[i].zSplit);
        draw_look(seed);
        for (int i = 0; i < N_LOOK; i++) printf("%-28s %s\n", aLook[i].zName, aLook[i].zSplit);
        return 0;
    }
    if (!zOut) {
        usage(stderr);
        return 2;
    }
    if (js_load_kernels(zKernels) != 0) return 1;
    if (mkdir(zOut, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "fitgen: %s: %s\n", zOut, strerror(errno));
        return 1;
    }
    nCase = N_CASE;
    if (!strcmp(zSplit, "look")) draw_look(seed), aAll = aLook, nCase = N_LOOK, g_maxBatch = 1 << 22;
    for (int i = 0; i < nCase && rc == 0; i++) {
        const struct fcase *k = &aAll[i];
        char zDir[1100], zPath[1200], zProbe[1200], zTwin[16];
        int best, batch, first, twin = -1;
        FILE *f;
        if (zOnly && strcmp(zOnly, k->zName)) continue;
        if (strcmp(zSplit, "all") && strcmp(zSplit, k->zSplit)) continue;
        snprintf(zDir, sizeof zDir, "%s/%s", zOut, k->zName);
        snprintf(zProbe, sizeof zProbe, "%s/probe.db", zOut);
        if (mkdir(zDir, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "fitgen: %s: %s\n", zDir, strerror(errno));
            return 1;
        }
        best = at > 0 ? 1 << 30 : boundary(k, zProbe);
        if (best < 4) {
            unlink(zProbe);
            fprintf(stderr, "fitgen: %s: no boundary found (%d)\n", k->zName, best);
            return 1;
        }
        batch = at > 0 ? at : (int)(best * k->frac);
        if (batch < 1) batch = 1;
        first = at > 0 ? best : first_failure(k, batch, best, zProbe);
        if (first >= 0 && at <= 0 && k->bHist && !k->bExp) { /* the twin: the same job with expandable segments */
            struct fcase x = *k;
            int bestX;
            x.bExp = 1;
            bestX = boundary(&x, zProbe);
            twin = bestX < batch ? bestX : first_failure(&x, batch, bestX, zProbe);
            if (twin < 0) first = -1;
        }
        unlink(zProbe);
        if (first < 0) {
            fprintf(stderr, "fitgen: %s: a probe's trace could not be written\n", k->zName);
            return 1;
        }
        snprintf(zPath, sizeof zPath, "%s/rank0.db", zDir);
        if (run(k, batch, zPath, k->bHist ? zDir : NULL, 1) != 1) {
            fprintf(stderr, "fitgen: %s: the traced run at batch %d failed\n", k->zName, batch);
            return 1;
        }
        snprintf(zPath, sizeof zPath, "%s/truth.json", zDir);
        if (twin > 0) snprintf(zTwin, sizeof zTwin, "%d", twin);
        else snprintf(zTwin, sizeof zTwin, "null");
        if (!(f = fopen(zPath, "w"))) return 1;
        fprintf(f,
                "{\"case\": \"%s\", \"split\": \"%s\", \"mode\": \"%s\", \"nvtx\": %s, \"device_bytes\": %lld, "
                "\"batch\": %d, \"true_max_batch\": %d, \"largest_batch_that_runs\": %d, \"expandable_segments\": %s, "
                "\"expandable_true_max_batch\": %s, \"trace\": \"rank0.db\"}\n",
                k->zName, k->zSplit, k->mode == JS_TENSORS ? "tensors" : k->bHist ? "history" : "segments",
                k->bNvtx ? "true" : "false",
                (long long)k->total, batch, first, best, k->bExp ? "true" : "false", zTwin);
        if (fclose(f) != 0) rc = 1;
        if (first < best)
            printf("%s: traced at batch %d, every batch up to %d runs, %d fails, %d runs again\n", k->zName, batch, first,
                   first + 1, best);
        else
            printf("%s: traced at batch %d, largest batch that runs %d\n", k->zName, batch, best);
    }
    return rc;
}
