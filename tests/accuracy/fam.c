/* The accuracy suite's families: PyTorch jobs whose shape is drawn at random, with the truth their plan implies. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "ptrec.h"

/*
 * A family is a kind of job (a training run, an inference server, an OOM'd fine-tune, a
 * torch.profiler trace ...). Each draw picks its shape: the GPU, the model and its size, the
 * batch that fits, gradient accumulation, how phases are marked (NVTX names, torch.profiler's
 * ProfilerStep#N, none), the level the trace sees (segments, segments with PyTorch's
 * allocation history, tensors), the evaluation's batch, ranks, and the family's own knobs
 * (where an OOM strikes and how the program reacts, how full a cache gets, how long copies
 * take). The truth is written from that plan: what the job does wrong, where, and how badly,
 * or nothing for a healthy look-alike. It never looks at what the analyzer says.
 *
 * Severity bands (docs/accuracy.md): a leak or growth of 64 MiB or more over the run is medium
 * or high, less is low or medium; an OOM is high; a transfer problem by the share of the run
 * its copies hold compute up (2 % low, 5 % medium, 15 % high, the neighbour band accepted
 * within a fifth of a boundary).
 */

/* ---- drawing ---- */

enum { M_S = 1, M_H = 2, M_T = 4, M_ANY = 7 };        /* levels: segments, + history, tensors */
enum { P_N = 1, P_P = 2, P_X = 4, P_ANY = 7 };        /* phases: NVTX names, ProfilerStep#N, none */
enum { K_ANY = 0, K_CNN = 1, K_LM = 2 };               /* model kinds */
#define CTX (512 * MiB)                                /* the CUDA context and the runtime's own memory */

/* A training job as drawn: the loop, the process's configuration, the GPU. */
struct job {
    struct loop l;
    struct js_cfg c;
    const struct js_gpu *g;
    int bLm;
    int micro;       /* samples per micro-batch */
    int64_t budget;  /* bytes the job was sized to use */
    int64_t seq;     /* LM: tokens per sample */
    int64_t xSample; /* input bytes per sample */
};

/* Samples per micro-batch: the batch, its input and the evaluation's batch follow. */
static void set_micro(struct job *jb, int micro)
{
    jb->micro = micro > 0 ? micro : 1;
    jb->l.batch = jb->micro * jb->l.accum;
    jb->l.xBytes = jb->xSample * jb->micro;
    jb->l.valBatch = jb->micro;
    jb->l.valXBytes = jb->l.xBytes;
}

/* A GPU: H100 most often, then A100s, L4, RTX 4090, V100. */
static const struct js_gpu *draw_gpu(struct acc *a)
{
    static const int aW[] = {35, 20, 10, 10, 10, 15};
    int n = (int)acc_draw(a, 100), i = 0;
    while (i < js_nGpu - 1 && n >= aW[i]) n -= aW[i++];
    acc_shape(a, "gpu", "%s", js_aGpu[i].zName);
    return &js_aGpu[i];
}

/* How the run is recorded: a level among `modes`, a phase style among `nvtxs`, 1 to maxRanks ranks. */
static void draw_variant(struct acc *a, int modes, int nvtxs, int maxRanks)
{
    static const char *const azMode[] = {"segments", "segments + PyTorch's allocation history", "tensors (--tensors)"};
    static const char *const azNvtx[] = {"NVTX phase and iteration ranges", "torch.profiler ProfilerStep#N ranges",
                                         "none (phases inferred from kernels)"};
    struct acc_variant v;
    int aM[3], nM = 0, aP[3], nP = 0, m, p;
    memset(&v, 0, sizeof v);
    for (int i = 0; i < 3; i++) {
        if (modes & (1 << i)) aM[nM++] = i;
        if (nvtxs & (1 << i)) aP[nP++] = i;
    }
    m = aM[acc_draw(a, (uint64_t)nM)];
    p = aP[acc_draw(a, (uint64_t)nP)];
    v.mode = m == 2 ? JS_TENSORS : JS_SEGMENTS;
    v.bHistory = m == 1;
    v.nvtx = p == 0 ? ACC_NVTX_NAMES : p == 1 ? ACC_NVTX_PROFILER : ACC_NVTX_NONE;
    v.ranks = 1;
    if (maxRanks > 1 && acc_chance(a, 30)) v.ranks = maxRanks >= 4 && acc_chance(a, 50) ? 4 : 2;
    acc_set_variant(a, &v);
    acc_shape(a, "level", "%s", azMode[m]);
    acc_shape(a, "phases", "%s", azNvtx[p]);
    acc_shape(a, "ranks", "%d", v.ranks);
}

/* What a model needs besides activations: weights, gradients, optimizer state, workspaces. */
static int64_t est_fixed(const struct pt_model *m)
{
    int64_t p = pt_param_bytes(m);
    return 2 * p + p * m->nState * m->stateMul / 2 + m->cublasBytes + 256 * MiB;
}

/* What one sample of a training batch needs: saved activations, the backward's gradients, logits, with
 * room for the caching allocator's rounding. */
static int64_t est_sample(const struct pt_model *m)
{
    return pt_act_bytes(m) * 3 / 2 + 3 * m->a[m->n - 1].act;
}

/* A model of `kind` (drawn when K_ANY) that leaves room for batches in `budget`. */
static void draw_model(struct acc *a, struct job *jb, int kind)
{
    struct loop *l = &jb->l;
    if (kind == K_ANY) kind = acc_chance(a, 40) ? K_CNN : K_LM;
    jb->bLm = kind == K_LM;
    for (int tries = 0;; tries++) {
        int bLast = tries >= 6;
        if (!jb->bLm) {
            static const int aImage[] = {112, 160, 224, 256}, aClass[] = {10, 100, 1000, 4096};
            int image = bLast ? 112 : aImage[acc_draw(a, 4)], nClass = aClass[acc_draw(a, 4)];
            pt_cnn(&l->m, image, nClass);
            l->zTemplate = "resnet50";
            l->stride = 4;
            l->xBytes = (int64_t)3 * image * image * 4; /* per sample, scaled below */
            acc_shape(a, "model", "ResNet-50 at %dx%d, %d classes (fp32, SGD with momentum)", image, image, nClass);
        } else {
            static const int aLayer[] = {4, 6, 12, 24}, aD[] = {512, 768, 1024, 2048}, aSeq[] = {256, 512, 1024, 2048};
            int nLayer = bLast ? 4 : aLayer[acc_draw(a, 4)], d = bLast ? 512 : aD[acc_draw(a, 4)];
            int seq = bLast ? 256 : aSeq[acc_draw(a, 4)], vocab = acc_chance(a, 50) ? 32000 : 50304;
            pt_lm(&l->m, nLayer, d, seq, vocab, 1);
            if (l->m.n > 60) pt_shrink(&l->m, (l->m.n + 47) / 48);
            l->zTemplate = "ddp";
            l->stride = 8;
            jb->seq = seq;
            l->xBytes = (int64_t)seq * 8;
            acc_shape(a, "model", "GPT (model.py), %d layers, d %d, %d tokens, vocabulary %d (bf16, AdamW)", nLayer, d,
                      seq, vocab);
        }
        if (est_fixed(&l->m) + est_sample(&l->m) <= jb->budget * 7 / 10 || bLast) break; /* else smaller */
    }
    acc_shape(a, "parameters", "%.0f MiB", (double)pt_param_bytes(&l->m) / (double)MiB);
}

/*
 * A training job: GPU (and the share `otherFrac` of its memory held by other processes), model,
 * the batch that fits `util` of the memory left, accumulation, loader, length, evaluation.
 */
static void draw_job(struct acc *a, struct job *jb, int kind, double otherFrac, double util)
{
    struct loop *l = &jb->l;
    int64_t perSample, other;
    memset(jb, 0, sizeof *jb);
    loop_defaults(l);
    jb->g = draw_gpu(a);
    other = (int64_t)((double)jb->g->total * otherFrac) / MiB * MiB;
    jb->c.pGpu = jb->g;
    jb->c.otherBytes = other;
    jb->budget = (int64_t)((double)(jb->g->total - CTX - other - GiB) * util);
    draw_model(a, jb, kind);
    perSample = est_sample(&l->m);
    jb->micro = (int)((jb->budget - est_fixed(&l->m)) / perSample);
    if (jb->micro < 1) jb->micro = 1;
    if (jb->micro > (jb->bLm ? 32 : 256)) jb->micro = jb->bLm ? 32 : 256;
    l->accum = acc_chance(a, 70) ? 1 : acc_chance(a, 50) ? 2 : 4;
    jb->xSample = l->xBytes;
    set_micro(jb, jb->micro);
    l->bZeroLast = l->accum > 1;
    l->bPinned = acc_chance(a, 75);
    l->pinDepth = 2 + (int)acc_draw(a, 4);
    l->epochs = 1 + (int)acc_draw(a, 2);
    l->iters = (12 + (int)acc_draw(a, 24)) / l->epochs;
    l->valIters = acc_chance(a, 75) ? 2 + (int)acc_draw(a, 5) : 0;
    l->cpuPerStep = (1 + (int64_t)acc_draw(a, 6)) * 1000000;
    if (jb->bLm && acc_variant(a)->ranks > 1) {
        l->nBucket = (int)(pt_param_bytes(&l->m) / (25 * MiB)) + 1;
        if (l->nBucket > 64) l->nBucket = 64;
        l->ncclBytes = (int64_t)(128 + acc_draw(a, 896)) * MiB;
    }
    if (other) acc_shape(a, "other processes", "%.1f GiB", (double)other / (double)GiB);
}

/* The shape of the loop as it runs (after the family's changes), once per run. */
static void shape_loop(struct acc *a, const struct job *jb)
{
    const struct loop *l = &jb->l;
    acc_shape(a, "batch", "%d x %d accumulation", l->batch / (l->accum > 0 ? l->accum : 1), l->accum);
    acc_shape(a, "loader", "%s", l->bPinned ? "pinned (pin_memory=True)" : "pageable");
    acc_shape(a, "iterations", "%d epoch(s) of %d, %d evaluation batches of %d each", l->epochs, l->iters, l->valIters,
              l->valBatch);
}

/* loop_all and loop_open of a drawn job, its shape noted first. */
static void expect_loader(struct acc *a, double s);

static void job_all(struct acc *a, struct job *jb, int *pVisTrain, int *pVisVal)
{
    shape_loop(a, jb);
    loop_all(a, &jb->l, &jb->c, pVisTrain, pVisVal);
    expect_loader(a, jb->l.pageableShare);
}

static struct js *job_open(struct acc *a, struct job *jb, struct loop *l, int rank)
{
    if (rank == 0) shape_loop(a, jb);
    return loop_open(a, l, rank, &jb->c);
}

/* The epochs of a job opened with job_open on rank 0, its loader's expectation, and the process's clean end. */
static void job_finish(struct acc *a, struct job *jb, struct js *j)
{
    int bOom;
    loop_epochs(a, &jb->l, j, &bOom);
    expect_loader(a, jb->l.pageableShare);
    acc_end(a, j, 1, 1);
}

/* ---- truth ---- */

/* Add an expectation. */
static void expect(struct acc *a, const char *zCause, const char *zKind, const char *zSite, const char *zSev,
                   const char *zPhase, const char *zTitle, const char *zRanks, int bRequired, const char *zClass, int nMax,
                   const char *zTitleNot)
{
    struct acc_exp e = {zCause, zKind, zSite, zSev, zPhase, zTitle, zRanks, bRequired, zClass, nMax, zTitleNot};
    acc_expect(a, &e);
}

/* The severities a growth of `bytes` over the run accepts. */
static const char *growth_sev(int64_t bytes)
{
    return bytes >= 64 * MiB ? "medium|high" : "low|medium";
}

/* The severities a transfer problem holding compute up for share s of the run accepts ("" none). */
static const char *transfer_sev(double s)
{
    static const double aB[] = {0.02, 0.05, 0.15};
    static const char *const azBand[] = {"", "low", "medium", "high"}, *const azTwo[] = {"low", "low|medium", "medium|high"};
    for (int i = 0; i < 3; i++) {
        if (s >= aB[i] * 0.8 && s < aB[i] * 1.2) return azTwo[i];
        if (s < aB[i]) return azBand[i];
    }
    return azBand[3];
}

/* The innermost frame of the user's code in a site spec as reports name it ("model.py:94 in MLP.forward"), into z. */
static const char *user_site(const char *zSpec, char *z, size_t n)
{
    z[0] = 0;
    while (zSpec && *zSpec) {
        size_t m = strcspn(zSpec, "|");
        if (strncmp(zSpec, "lib:", 4) && strncmp(zSpec, "std:", 4) && strncmp(zSpec, "gen:", 4)) {
            const char *zLine = memchr(zSpec, ':', m), *zFn = zLine ? memchr(zLine + 1, ':', m - (size_t)(zLine + 1 - zSpec)) : NULL;
            if (zLine && zFn) {
                snprintf(z, n, "%.*s:%.*s in %.*s", (int)(zLine - zSpec), zSpec, (int)(zFn - zLine - 1), zLine + 1,
                         (int)(m - (size_t)(zFn + 1 - zSpec)), zFn + 1);
                return z;
            }
        }
        zSpec += m;
        if (*zSpec == '|') zSpec++;
    }
    return z;
}

/*
 * The verdict the OOM that just happened in j deserves, from the plan: the failing request R,
 * what the process had allocated A (its tensors' blocks, as PyTorch counts them) and reserved S,
 * the device's free memory F after the allocator released what it could, what other processes
 * held O, and what the failing operation needed in all, D (the whole batch's activations, the whole
 * optimizer state: at least A + R). The memory existed when D fits in what the process could have
 * had, F + S: fragmentation (holes and cache). Other processes are the cause when D fits in
 * F + S + O and O is more than a CUDA context's worth. Otherwise the program asked for more than
 * the device holds: real demand. Within a quarter of R of a boundary both verdicts are accepted. At segment level without PyTorch's history, A is
 * invisible: "cannot tell" is accepted where F + S covers R. *pzNot receives the titles that must
 * not match. The returned strings are static (acc_expect copies them).
 */
static const char *oom_verdict(struct acc *a, struct js *j, int64_t demand, const char **pzNot)
{
    static char zOk[128], zNot[128];
    int64_t r, f, s, al, o = js_other_bytes(j), need;
    int bSeg = acc_variant(a)->mode == JS_SEGMENTS && !acc_variant(a)->bHistory;
    int bFrag, bOther, bReal, bCannot;
    js_last_oom(j, &r, &f, &al, &s);
    need = al + r > demand ? al + r : demand;
    bFrag = need <= f + s + r / 4;
    bOther = o >= GiB && need > f + s - r / 4 && need <= f + s + o + r / 4;
    bReal = need > f + s + (o >= GiB ? o : 0) - r / 4;
    bCannot = bSeg && r <= f + s + r / 4;
    snprintf(zOk, sizeof zOk, "%s%s%s%s", bFrag ? "|fragmentation" : "", bOther ? "|another process" : "",
             bReal ? "|real demand" : "", bCannot ? "|cannot tell" : "");
    /* "real demand or fragmentation: cannot tell ..." names two verdicts: refused unless cannot-tell is accepted */
    snprintf(zNot, sizeof zNot, "%s", bCannot ? "" : "cannot tell");
    *pzNot = zNot[0] ? zNot : NULL;
    return zOk[0] ? zOk + 1 : "real demand";
}

/*
 * Sites accepted for the allocation that failed at site (its user frame, and the line that called the model).
 * The autograd engine's thread runs no Python: a failure in loss.backward() is the backward pass's, or the
 * line that called backward().
 */
static void oom_sites(struct js *j, int site, const char *zCaller, char *z, size_t n)
{
    char zUser[300];
    const char *zSpec = site >= 0 ? js_site_spec(j, site) : NULL;
    if (zSpec && !zSpec[0]) {
        snprintf(z, n, "backward pass|train.py:" S(L_BWD) " in train_one_epoch");
        return;
    }
    user_site(zSpec, zUser, sizeof zUser);
    if (zUser[0] && zCaller && strcmp(zUser, zCaller)) snprintf(z, n, "%s|%s", zUser, zCaller);
    else snprintf(z, n, "%s", zUser[0] ? zUser : zCaller ? zCaller : "");
}

/*
 * What every training job may show besides its planted cause: the last step's gradients held
 * through evaluation until the next zero_grad() (optional; in a PyTorch history the autograd
 * thread's allocations have no Python frame, so their site is not recorded).
 */
static void allow_state(struct acc *a)
{
    loop_allow_grads(a);
    if (acc_variant(a)->bHistory)
        expect(a, "grads-held", "retained", "site not recorded", "low|medium|high", NULL, NULL, NULL, 0,
               "gradients of the last step held through evaluation", 0, NULL);
}

/*
 * The loader's pageable copies, measured: where the job's drawn loader does not pin memory and
 * its copies held compute up for share s of a run, that is a true transfer problem of its own
 * (required from 2.4 %, accepted from 1.6 %), and their serialization with compute follows.
 */
static void expect_loader(struct acc *a, double s)
{
    if (s < 0.016) return;
    expect(a, "pageable-loader", "transfer", SITE_COPY "|" SITE_VCOPY, transfer_sev(s), NULL, NULL, NULL, s >= 0.024,
           "pageable copies of the drawn loader", 0, NULL);
    expect(a, "pageable-loader", "transfer", NULL, "low|medium|high", NULL, "erializ", NULL, 0,
           "consequence of the planted cause", 0, NULL);
}

/* ---- healthy look-alikes ---- */

static void lk_train_plain(struct acc *a)
{
    struct job jb;
    draw_variant(a, M_ANY, P_ANY, 4);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.75));
    acc_describe(a, "A healthy training job of a drawn shape: weights copied once at start, optimizer state at the "
                    "first step, gradients at the first backward, evaluation under no_grad. Expected: nothing at "
                    "severity low or above.");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/*
 * The same healthy job with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, at segment level or
 * with the history: the caching allocator maps 2 and 20 MiB pages into one segment per pool
 * (cuMemCreate/cuMemMap, segment_map in the history) and unmaps free ones under pressure, so the
 * memory rises in pages and is never a cudaMalloc'd segment.
 */
static void lk_train_expandable(struct acc *a)
{
    struct job jb;
    struct acc_variant v;
    draw_variant(a, M_S | M_H, P_ANY, 4);
    v = *acc_variant(a);
    v.bExpandable = 1;
    acc_set_variant(a, &v);
    acc_shape(a, "allocator", "expandable_segments:True");
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.75));
    acc_describe(a, "A healthy training job of a drawn shape run with expandable_segments:True: the allocator's memory "
                    "is pages mapped as the job needs them. Expected: nothing at severity low or above.");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* The state of one run of a family (hooks reach it through l->pCtx). */
struct ctx {
    struct acc *a;
    int n, k, every, at;
    int64_t bytes, bytes2;
    int aT[4096];
    int nT;
    int site, site2;
};

/* ---- a server whose KV cache grows to a cap and is then reused ---- */

static void lk_kv_capped(struct acc *a)
{
    const struct js_gpu *g;
    struct pt_model m;
    struct js_cfg c;
    struct js *j;
    int nStep, cap, nChunk = 0, aChunk[256], siteGrow, siteLogit, bTeardown, bClean, nIdle, tDrop;
    int64_t chunk, free0;
    double fCap;
    draw_variant(a, M_ANY, P_N | P_X, 1);
    g = draw_gpu(a);
    memset(&c, 0, sizeof c);
    c.pGpu = g;
    c.zTemplate = "nsys_mangled";
    c.kernelStride = 1;
    c.timeScale = acc_drawf(a, 0.2, 0.6);
    c.zCmd = "python serve.py --model llama --max-batch 32";
    {
        int nLayer = acc_chance(a, 50) ? 32 : 16, d = acc_chance(a, 50) ? 4096 : 2048;
        pt_lm(&m, nLayer, d, 1, 32000, 1);
        if (pt_param_bytes(&m) > g->total / 2) pt_lm(&m, 16, 2048, 1, 32000, 1);
        acc_shape(a, "model", "decoder, %d layers, d %d (bf16), %.1f GiB of weights", nLayer, d,
                  (double)pt_param_bytes(&m) / (double)GiB);
    }
    free0 = g->total - CTX - pt_param_bytes(&m) - GiB;
    chunk = (int64_t)(64 << acc_draw(a, 4)) * MiB;
    cap = (int)((double)free0 * acc_drawf(a, 0.2, 0.7) / (double)chunk);
    if (cap < 2) cap = 2;
    if (cap > 256) cap = 256;
    nStep = 150 + (int)acc_draw(a, 250);
    fCap = acc_drawf(a, 0.15, 0.6);
    nIdle = (int)acc_draw(a, 3);
    bTeardown = acc_chance(a, 50);
    bClean = acc_chance(a, 70);
    /* traffic falls off for the last fifth of the run in half the draws: pages stay in the pool, unused */
    tDrop = acc_chance(a, 50) ? nStep * 4 / 5 : nStep;
    acc_shape(a, "cache", "%d chunks of %lld MiB, full at %.0f %% of the run", cap, (long long)(chunk / MiB), fCap * 100);
    acc_shape(a, "decode steps", "%d, %d idle spell(s)%s", nStep, nIdle,
              tDrop < nStep ? ", a third of the pages in use in the last fifth" : "");
    acc_shape(a, "end", "%s, %s", bTeardown ? "cache freed at shutdown" : "cache live at exit",
              bClean ? "closed cleanly" : "killed");
    acc_describe(a, "An inference server with a paged key/value cache that allocates chunks as concurrent requests "
                    "need them, up to its configured size, then reuses freed pages for new requests until it stops; "
                    "every decode step's attention kernels read the pages in use (when traffic falls off at the end, "
                    "fewer of them). The cache is state, not a leak, however much of it is live at exit: its growth "
                    "stopped early and its pages were reused; idle spells between bursts are not retained memory. "
                    "Expected: nothing at severity low or above.");
    j = acc_process(a, 0, &c);
    if (!j) return;
    pt_to_device(j, &m, "serve.py:40:load_model|serve.py:118:main|serve.py:131:<module>");
    siteGrow = js_site(j, "serve.py:58:PagedKVCache._grow|serve.py:71:PagedKVCache.reserve|serve.py:77:generate|"
                          "serve.py:121:main|serve.py:131:<module>");
    siteLogit = js_site(j, "lib:torch/nn/modules/linear.py:134:Linear.forward|lib:torch/nn/modules/module.py:1786:Module._call_impl|"
                           "serve.py:80:generate|serve.py:121:main|serve.py:131:<module>");
    js_here(j, js_site(j, "serve.py:77:generate|serve.py:121:main|serve.py:131:<module>"));
    for (int t = 0; t < nStep; t++) {
        /* demand rises with the requests admitted until the cache is full, then stays at its size */
        int want = t >= (int)(fCap * nStep) ? cap : 1 + (int)((int64_t)cap * t / (int64_t)(fCap * nStep + 1));
        int lg;
        if (nIdle && t > 0 && t % (nStep / (nIdle + 1)) == 0) js_cpu(j, (int64_t)nStep * 600000); /* no request for a while */
        loop_push(a, j, ACC_NVTX_NAMES, "decode_step %d", t);
        while (nChunk < want && nChunk < 256) {
            int h = js_alloc(j, chunk, siteGrow, JS_NAT_ALLOC);
            if (h < 0) break;
            aChunk[nChunk++] = h;
        }
        for (int grp = 0; grp < 16; grp++) {
            int aT[48], nT = 0;
            for (int l = grp * m.n / 16; l < (grp + 1) * m.n / 16 && nT < 16; l++)
                if (m.a[l].w) aT[nT++] = m.w[l];
            int inUse = t >= tDrop ? (nChunk + 2) / 3 : nChunk;
            for (int k = grp; k < inUse && nT < 48; k += 16) aT[nT++] = aChunk[k]; /* the layer group's pages in use */
            js_play(j, 'F', grp, 17, aT, nT);
        }
        lg = js_alloc(j, (int64_t)32 * 32000 * 4, siteLogit, JS_NAT_ALLOC);
        {
            int aT[2] = {lg, m.w[0]};
            js_play(j, 'F', 16, 17, aT, 2);
        }
        pt_item(j, lg, "serve.py:82:generate|serve.py:121:main|serve.py:131:<module>");
        js_free(j, lg);
        loop_pop(a, j, ACC_NVTX_NAMES);
        js_cpu(j, 300000);
    }
    js_sync(j);
    acc_end(a, j, bTeardown, bClean);
}

/* ---- a preallocated arena ---- */

static void hook_arena_step(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)f;
    if (x->every > 0 && it % x->every == 0) {
        int aT[1] = {x->aT[0]};
        js_launch_named(j, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                           "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
                        200000, aT, 1);
    }
}

static void hook_arena_val(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    int aT[2] = {x->aT[0], f->out};
    (void)b;
    js_launch_named(j, "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, "
                       "float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, "
                       "float, float, float>, unsigned int, float, 4>)",
                    300000, aT, 2);
}

static void lk_arena(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int bOom, use;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.5));
    use = (int)acc_draw(a, 3);
    x.bytes = (int64_t)((double)jb.g->total * acc_drawf(a, 0.02, 0.25)) / MiB * MiB;
    x.every = use == 0 ? 1 : use == 1 ? 0 : 3 + (int)acc_draw(a, 5);
    if (use == 1 && jb.l.valIters == 0) jb.l.valIters = 3;
    jb.l.bTeardown = acc_chance(a, 50);
    jb.l.pCtx = &x;
    jb.l.xTrainStep = hook_arena_step;
    if (use == 1) jb.l.xValBatch = hook_arena_val;
    acc_shape(a, "arena", "%.2f GiB, used %s", (double)x.bytes / (double)GiB,
              use == 0 ? "every step" : use == 1 ? "in evaluation only" : "every few steps");
    acc_describe(a, "Training with a workspace preallocated once at start (`self.workspace = torch.empty(n, device="
                    "'cuda')`, train.py:190), as fused optimizers, gradient buckets or metric buffers do, and used "
                    "through the run (every step, every few steps, or only in evaluation). It never grows; it is "
                    "state, live to the end. Expected: nothing at severity low or above.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.aT[0] = js_alloc(j, x.bytes, js_site(j, "train.py:190:main|train.py:231:<module>"), JS_NAT_ALLOC);
    loop_epochs(a, &jb.l, j, &bOom);
    expect_loader(a, jb.l.pageableShare);
    acc_end(a, j, jb.l.bTeardown, jb.l.bClean);
}

/* ---- a CUDA graph's private pool ---- */

static void lk_graph_pool(struct acc *a)
{
    struct job jb;
    struct js *j;
    int nWarm, nReplay, siteStatic, xs;
    struct pt_fwd f;
    draw_variant(a, M_S | M_H, P_N | P_X, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.5));
    jb.l.accum = 1;
    set_micro(&jb, jb.micro);
    jb.l.bZeroNone = 0; /* captured steps keep gradients in place */
    jb.l.bZeroLast = 0;
    jb.l.bPinned = 1;
    nWarm = 3 + (int)acc_draw(a, 8);
    nReplay = 15 + (int)acc_draw(a, 40);
    acc_shape(a, "graph", "whole step captured after %d eager steps, replayed %d times", nWarm, nReplay);
    acc_describe(a, "Training whose whole step (forward, backward, optimizer) is captured into a CUDA graph after "
                    "a few eager warm-up steps (`torch.cuda.graph(g)`, as torch.compile's reduce-overhead mode or "
                    "Megatron do) and replayed for the rest of the run: the graph's private memory pool is reserved "
                    "during capture and kept, the static input is refilled by a copy each step, and the replayed "
                    "kernels' arguments are invisible to the tracer. The pool is state, not a leak, and not idle. "
                    "Expected: nothing at severity low or above.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    loop_push(a, j, ACC_NVTX_NAMES, "train", 0);
    for (int i = 0; i < nWarm; i++)
        if (loop_train_iter(a, &jb.l, j, i) != 0) break;
    js_free(j, jb.l.lastX);
    js_free(j, jb.l.lastOut);
    jb.l.lastX = jb.l.lastOut = -1;
    /* capture: static input, the step's tensors from the private pool */
    siteStatic = js_site(j, "train.py:88:main|train.py:231:<module>");
    js_sync(j);
    js_graph_capture(j, 1);
    xs = js_alloc(j, jb.l.xBytes, siteStatic, JS_NAT_ALLOC);
    js_here(j, js_site(j, "lib:torch/cuda/graphs.py:186:graph.__enter__|train.py:90:main|train.py:231:<module>"));
    f = pt_forward(j, &jb.l.m, xs, jb.l.batch, 1, 1, "train.py:91:main|train.py:231:<module>");
    pt_backward(j, &jb.l.m, &f, jb.l.batch, NULL, 0);
    pt_step(j, &jb.l.m, "train.py:93:main|train.py:231:<module>");
    js_graph_capture(j, 0);
    for (int i = 0; i < nReplay; i++) {
        int pin = jb.l.bPinned ? js_pin_alloc(j, jb.l.xBytes, js_site(j, "lib:torch/utils/data/_utils/pin_memory.py:90:pin_memory")) : -1;
        loop_push(a, j, ACC_NVTX_NAMES, "iter %d", nWarm + i);
        loop_push(a, j, ACC_NVTX_PROFILER, "ProfilerStep#%d", nWarm + i);
        js_cpu(j, jb.l.cpuPerStep);
        js_h2d(j, xs, jb.l.xBytes, pin >= 0 ? JS_PINNED : JS_PAGEABLE, pin >= 0 ? js_pin_addr(j, pin) : 0,
               js_site(j, "train.py:97:main|train.py:231:<module>"));
        js_graph_launch(j, "FBOZ");
        pt_item(j, f.loss, "train.py:99:main|train.py:231:<module>");
        loop_pop(a, j, ACC_NVTX_PROFILER);
        loop_pop(a, j, ACC_NVTX_NAMES);
        if (pin >= 0) js_pin_free(j, pin);
    }
    loop_pop(a, j, ACC_NVTX_NAMES);
    js_sync(j);
    acc_end(a, j, 1, 1);
}

/* ---- NCCL buffers mapped at start ---- */

static void lk_nccl_start(struct acc *a)
{
    struct job jb;
    struct acc_variant v;
    draw_variant(a, M_ANY, P_ANY, 1);
    v = *acc_variant(a);
    v.ranks = acc_chance(a, 50) ? 2 : 4;
    acc_set_variant(a, &v);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.2, 0.6));
    jb.l.nBucket = (int)(pt_param_bytes(&jb.l.m) / (25 * MiB)) + 1;
    if (jb.l.nBucket > 64) jb.l.nBucket = 64;
    jb.l.ncclBytes = (int64_t)(256 + acc_draw(a, 1792)) * MiB;
    acc_shape(a, "ddp", "%d ranks, NCCL buffers %lld MiB, %d buckets of 25 MiB", v.ranks, (long long)(jb.l.ncclBytes / MiB),
              jb.l.nBucket);
    acc_describe(a, "DistributedDataParallel training: NCCL maps its communicator buffers with cuMem at the first "
                    "collective and keeps them to the end; DDP's gradient buckets are allocated at construction. "
                    "Neither grows nor leaks. Expected: nothing at severity low or above on any rank.");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- checkpoint saves ---- */

static void hook_ckpt(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    int site;
    (void)f;
    if (x->every <= 0 || (it + 1) % x->every) return;
    site = js_site(j, "lib:torch/_tensor.py:1203:Tensor.cpu|train.py:131:save_checkpoint|train.py:84:train_one_epoch|" MAIN);
    js_sync(j);
    for (int i = 0; i < l->m.n; i++) /* {k: v.cpu() for k, v in model.state_dict().items()} */
        if (l->m.w[i] >= 0) js_d2h(j, l->m.w[i], l->m.a[i].w, site);
    js_cpu(j, 40000000); /* torch.save writes the file */
}

static void lk_checkpoint(struct acc *a)
{
    struct job jb;
    struct ctx x;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.6));
    jb.l.bPinned = 1; /* the checkpoint's copies are the only pageable ones */
    jb.l.epochs = 1;
    jb.l.iters = 24 + (int)acc_draw(a, 24);
    x.every = jb.l.iters / (1 + (int)acc_draw(a, 2));
    jb.l.pCtx = &x;
    jb.l.xTrainStep = hook_ckpt;
    acc_shape(a, "checkpoint", "every %d steps (weights to CPU, pageable)", x.every);
    acc_describe(a, "Training that saves a checkpoint every few hundred steps, here once or twice: every weight is "
                    "copied to the CPU (`v.cpu()` into pageable memory) and written with torch.save. A short, "
                    "rare pause, not a transfer bottleneck, and nothing stays on the GPU. Expected: nothing at "
                    "severity low or above (a transfer finding sized by the copies' real share of the run is "
                    "accepted).");
    allow_state(a);
    shape_loop(a, &jb);
    loop_all(a, &jb.l, &jb.c, NULL, NULL);
    {
        char zSev[64];
        snprintf(zSev, sizeof zSev, "info|low%s%s", *transfer_sev(jb.l.pageableShare) ? "|" : "", transfer_sev(jb.l.pageableShare));
        acc_shape(a, "checkpoint share", "%.2f %% of the run", jb.l.pageableShare * 100);
        expect(a, "checkpoint", "transfer", "train.py:131 in save_checkpoint", zSev, NULL, NULL, NULL, 0, "checkpoint copies", 0,
               NULL);
    }
}

/* ---- a long accumulation sawtooth ---- */

static void hook_saw_micro(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)it;
    (void)f;
    if (x->nT < 4096) x->aT[x->nT++] = js_alloc(j, x->bytes, x->site, JS_NAT_ALLOC);
}

static void hook_saw_step(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)l;
    (void)it;
    (void)f;
    /* the loss over every cached embedding reads them all (GradCache), then the step drops them */
    for (int i = 0; i < x->nT; i += 64) js_launch(j, 0, x->aT + i, x->nT - i < 64 ? x->nT - i : 64);
    js_here(j, js_site(j, U_TRAIN(74)));
    while (x->nT > 0) js_free(j, x->aT[--x->nT]);
}

static void lk_accum_sawtooth(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int bOom;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.2, 0.5));
    jb.l.accum = 16 << acc_draw(a, 3);
    set_micro(&jb, jb.micro > 4 ? 4 : jb.micro);
    jb.l.bZeroLast = 1;
    jb.l.epochs = 1;
    jb.l.iters = 4 + (int)acc_draw(a, 5);
    jb.l.valIters = 0;
    x.bytes = (int64_t)jb.micro * jb.seq * 1024 * 2 * (1 + (int64_t)acc_draw(a, 4));
    jb.l.pCtx = &x;
    jb.l.xMicroBatch = hook_saw_micro;
    jb.l.xTrainStep = hook_saw_step;
    acc_shape(a, "accumulation", "%d micro-batches per step, %lld MiB kept per micro-batch until the step", jb.l.accum,
              (long long)(x.bytes / MiB));
    acc_describe(a, "Contrastive training with a long gradient accumulation (GradCache style): each of 16 to 64 "
                    "micro-batches keeps its embeddings (train.py:68) until the optimizer step, whose loss reads them "
                    "all before it frees them. "
                    "Memory climbs through every step and falls back at its end: a sawtooth, not growth. Expected: "
                    "nothing at severity low or above.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, "model.py:152:GPT.encode|train.py:68:train_one_epoch|" MAIN);
    loop_epochs(a, &jb.l, j, &bOom);
    expect_loader(a, jb.l.pageableShare);
    acc_end(a, j, 1, 1);
}

/* An evaluation batch of the largest multiple (up to want) of the micro-batch an evaluation under no_grad can
 * run (two layers' outputs at a time fit), with its input; returns the multiple. */
static int set_eval_mult(struct job *jb, int want)
{
    while (want > 1 && (int64_t)jb->micro * want * (est_sample(&jb->l.m) / 8) > jb->budget) want--;
    jb->l.valBatch = jb->micro * want;
    jb->l.valXBytes = jb->l.xBytes * want;
    return want;
}

/* ---- evaluation with a larger batch under no_grad ---- */

static void lk_eval_nograd_big(struct acc *a)
{
    struct job jb;
    int mult;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.15, 0.4));
    mult = set_eval_mult(&jb, 2 + (int)acc_draw(a, 11)); /* no activations kept */
    if (jb.l.valIters == 0) jb.l.valIters = 4;
    acc_shape(a, "evaluation batch", "%d (%d x training's)", jb.l.valBatch, mult);
    acc_describe(a, "Training whose evaluation runs under torch.no_grad() with a batch several times the training "
                    "batch: evaluation peaks above training, flat from batch to batch, nothing carried over. "
                    "Expected: nothing at severity low or above (an info note that evaluation peaks higher is fine).");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- evaluation batches sorted by length ---- */

static void lk_eval_sorted(struct acc *a)
{
    struct job jb;
    int mult;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.15, 0.4));
    mult = set_eval_mult(&jb, 1 + (int)acc_draw(a, 4));
    jb.l.valIters = 4 + (int)acc_draw(a, 9);
    jb.l.valLen = 4 + (int)acc_draw(a, 13);
    jb.l.bValSorted = 1;
    acc_shape(a, "evaluation batch", "%d (%d x training's), lengths ascending 1 to %d units", jb.l.valBatch, mult,
              jb.l.valLen);
    acc_describe(a, "Training whose evaluation runs under torch.no_grad() on a loader sorted by length (bucketed "
                    "evaluation, as for generation or padding-free batches): each batch is longer than the one before, "
                    "so each batch's peak is higher than the last, and every batch's memory is freed when it ends. "
                    "Bounded, not growth. Expected: nothing at severity low or above (an info note that evaluation "
                    "peaks higher is fine).");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- training and evaluation whose peaks vary with the sequence length ---- */

static void lk_varlen_eval(struct acc *a)
{
    struct job jb;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.2, 0.5));
    jb.l.varLen = 4 + (int)acc_draw(a, 13);
    jb.l.valLen = jb.l.varLen;
    jb.l.epochs = 1 + (int)acc_draw(a, 2);
    jb.l.iters = (24 + (int)acc_draw(a, 24)) / jb.l.epochs;
    jb.l.valIters = 4 + (int)acc_draw(a, 7);
    acc_shape(a, "lengths", "long-tailed, 1 to %d units, in training and evaluation", jb.l.varLen);
    acc_describe(a, "Training and evaluation on documents of varying length without padding: each step's and each "
                    "evaluation batch's peak follows its length (most short, a few long), under torch.no_grad() in "
                    "evaluation; the cache reserves more whenever a longer batch than any before arrives. Peaks vary, "
                    "nothing is kept. Expected: nothing at severity low or above.");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- evaluation every N steps ---- */

/*
 * An evaluation every 4 to 12 steps, 3 to 8 times, of 2 to 5 batches under no_grad, multLo to
 * multLo + multN - 1 times the training batch (as the budget allows), described by zDesc.
 */
static void eval_periodic(struct acc *a, int multLo, int multN, const char *zDesc)
{
    struct job jb;
    int mult;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.15, 0.45));
    mult = set_eval_mult(&jb, multLo + (int)acc_draw(a, (uint64_t)multN));
    jb.l.epochs = 3 + (int)acc_draw(a, 6);
    jb.l.iters = 4 + (int)acc_draw(a, 9);
    jb.l.valIters = 2 + (int)acc_draw(a, 4);
    acc_shape(a, "evaluation", "every %d steps, %d batches of %d (%d x training's)", jb.l.iters, jb.l.valIters,
              jb.l.valBatch, mult);
    acc_describe(a, zDesc);
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

static void lk_eval_periodic(struct acc *a)
{
    eval_periodic(a, 1, 3, "Training that evaluates every few steps (eval_steps): short evaluations of 2 to 5 batches under "
                           "torch.no_grad(), the same peak each time, between runs of 4 to 12 training steps. Expected: "
                           "nothing at severity low or above (an info note that evaluation peaks higher is fine).");
}

static void lk_eval_periodic_big(struct acc *a)
{
    eval_periodic(a, 4, 13, "Training that evaluates every few steps with a much larger batch (per_device_eval_batch_size "
                            "4 to 16 times the training one, as far as memory allows): short evaluations under "
                            "torch.no_grad() whose peak is far above training's and the same each time. Expected: "
                            "nothing at severity low or above (an info note that evaluation peaks higher is fine).");
}

/* ---- a pinned ring of the DataLoader's depth ---- */

static void lk_pinned_ring(struct acc *a)
{
    struct job jb;
    int workers, prefetch;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.5));
    workers = 2 << acc_draw(a, 3);
    prefetch = 2 + (int)acc_draw(a, 3);
    jb.l.bPinned = 1;
    jb.l.pinDepth = workers * prefetch;
    jb.l.epochs = 1 + (int)acc_draw(a, 2);
    jb.l.iters = (jb.l.pinDepth + 4 + (int)acc_draw(a, (uint64_t)jb.l.pinDepth + 8)) / jb.l.epochs;
    if (acc_chance(a, 40) && jb.bLm) jb.l.varLen = 2 + (int)acc_draw(a, 6);
    acc_shape(a, "pinned ring", "%d workers x prefetch %d = %d pinned batches in flight%s", workers, prefetch,
              jb.l.pinDepth, jb.l.varLen > 1 ? ", lengths varying" : "");
    acc_describe(a, "Training fed by a DataLoader with pin_memory=True and many workers: num_workers x "
                    "prefetch_factor batches are pinned ahead, so PyTorch's caching host allocator page-locks a new "
                    "block for each batch in flight until the ring is full (longer batches need larger blocks), then "
                    "reuses them. In a short run the ring fills over much of it. A cache of the loader's depth, not "
                    "growth. Expected: nothing at severity low or above.");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- evaluation from a DataLoader of its own, pinning deep ---- */

static void lk_eval_loader(struct acc *a)
{
    struct job jb;
    int mult, workers, prefetch;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_CNN, 0.0, acc_drawf(a, 0.15, 0.4)); /* images: batches worth pinning */
    mult = set_eval_mult(&jb, 2 + (int)acc_draw(a, 7));
    workers = 2 << acc_draw(a, 3);
    prefetch = 2 + (int)acc_draw(a, 3);
    jb.l.valIters = 4 + (int)acc_draw(a, 9);
    jb.l.bPinned = 1;
    jb.l.valPinDepth = workers * prefetch < 2048 ? workers * prefetch : 2047;
    acc_shape(a, "evaluation", "%d batches of %d (%d x training's) from a loader of its own, %d workers x prefetch %d "
              "pinned ahead", jb.l.valIters, jb.l.valBatch, mult, workers, prefetch);
    acc_describe(a, "Training whose evaluation, under torch.no_grad() with a batch 2 to 8 times the training batch, "
                    "reads a DataLoader of its own with pin_memory=True and many workers: PyTorch's caching host "
                    "allocator page-locks a new block for each larger evaluation batch in flight (up to num_workers x "
                    "prefetch_factor of them) beside the training loader's, and keeps them. Host memory of the loader's "
                    "depth, no device memory kept: evaluation peaks above training, flat from batch to batch. "
                    "Expected: nothing at severity low or above (an info note that evaluation peaks higher is fine).");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- evaluation keeping its predictions for the metric ---- */

static void hook_preds_keep(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)b;
    for (int k = 0; k < 2; k++) { /* preds.append(outputs.argmax(-1)); labels.append(y) */
        int t = js_alloc(j, k ? x->bytes2 : x->bytes, k ? x->site2 : x->site, JS_NAT_ALLOC);
        int aT[2] = {f->out, t};
        if (t < 0) return;
        js_launch(j, 0, aT, 2);
        if (x->nT < 4096) x->aT[x->nT++] = t;
    }
}

static void hook_preds_end(struct loop *l, struct js *j, int n, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    int c[2];
    (void)n;
    (void)f;
    for (int k = 0; k < 2; k++) { /* torch.cat(preds), torch.cat(labels) */
        c[k] = js_alloc(j, (int64_t)(x->nT / 2) * (k ? x->bytes2 : x->bytes), js_site(j, U_VAL(112)), JS_NAT_ALLOC);
        for (int i = k; i < x->nT; i += 2) {
            int aT[2] = {x->aT[i], c[k]};
            js_launch(j, 0, aT, 2);
        }
    }
    {
        int aT[2] = {c[0], c[1]}; /* accuracy = (preds == labels).float().mean().item() */
        js_launch(j, 0, aT, 2);
    }
    js_here(j, js_site(j, U_VAL(113)));
    for (int i = 0; i < x->nT; i++) js_free(j, x->aT[i]);
    x->nT = 0;
    js_free(j, c[0]);
    js_free(j, c[1]);
}

static void lk_eval_keep_preds(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int bOom, mult;
    int64_t per;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.15, 0.4));
    mult = set_eval_mult(&jb, 1 + (int)acc_draw(a, 4));
    jb.l.epochs = 1 + (int)acc_draw(a, 3);
    jb.l.iters = (12 + (int)acc_draw(a, 24)) / jb.l.epochs;
    jb.l.valIters = 4 + (int)acc_draw(a, 28);
    /* token ids (int64) per position for a GPT, a class id and its top-5 probabilities per image for a CNN */
    x.bytes = jb.bLm ? (int64_t)jb.l.valBatch * jb.seq * 8 : (int64_t)jb.l.valBatch * 6 * 4;
    x.bytes2 = jb.bLm ? (int64_t)jb.l.valBatch * jb.seq * 8 : (int64_t)jb.l.valBatch * 8;
    per = x.bytes + x.bytes2;
    while (jb.l.valIters > 4 && per * jb.l.valIters > 16 * MiB) jb.l.valIters--;
    jb.l.pCtx = &x;
    jb.l.xValBatch = hook_preds_keep;
    jb.l.xValEnd = hook_preds_end;
    acc_shape(a, "evaluation", "%d batches of %d (%d x training's), keeping %lld KiB of predictions and labels per batch",
              jb.l.valIters, jb.l.valBatch, mult, (long long)(per >> 10));
    acc_describe(a, "Training whose evaluation (under torch.no_grad()) keeps each batch's predictions and labels on "
                    "the GPU for the epoch's metric (`preds.append(outputs.argmax(-1))`, train.py:108), concatenates "
                    "them at the end and frees them: memory rises a little with every batch (16 MiB at most in all), "
                    "bounded by the evaluation set and released when it ends. Expected: nothing at severity low or "
                    "above (an info note is fine).");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, U_VAL(108));
    x.site2 = js_site(j, U_VAL(109));
    loop_epochs(a, &jb.l, j, &bOom);
    expect_loader(a, jb.l.pageableShare);
    acc_end(a, j, 1, 1);
}

/* ---- evaluation every N steps, lengths varying ---- */

static void lk_eval_periodic_var(struct acc *a)
{
    struct job jb;
    int mult;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.15, 0.4));
    mult = set_eval_mult(&jb, 1 + (int)acc_draw(a, 4));
    jb.l.epochs = 3 + (int)acc_draw(a, 8);
    jb.l.iters = 3 + (int)acc_draw(a, 10);
    jb.l.valIters = 1 + (int)acc_draw(a, 6);
    jb.l.varLen = acc_chance(a, 50) ? 2 + (int)acc_draw(a, 10) : 0;
    jb.l.valLen = 2 + (int)acc_draw(a, 14);
    jb.l.bValSorted = acc_chance(a, 30);
    acc_shape(a, "evaluation", "every %d steps, %d batches of up to %d (%d x training's), lengths 1 to %d units%s%s",
              jb.l.iters, jb.l.valIters, jb.l.valBatch, mult, jb.l.valLen, jb.l.bValSorted ? " ascending" : "",
              jb.l.varLen > 1 ? ", training lengths varying too" : "");
    acc_describe(a, "Training that evaluates every few steps (eval_steps) on batches whose lengths vary (a "
                    "bucketed or unpadded loader), under torch.no_grad(), with a larger evaluation batch: each "
                    "evaluation's peak follows its longest batch, everything is freed when a batch ends. Expected: "
                    "nothing at severity low or above (an info note that evaluation peaks higher is fine).");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- evaluation by generation ---- */

static void hook_generate(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    int kv = -1;
    (void)b;
    (void)f;
    for (int t = 0; t < x->k; t++) { /* torch.cat of the cache with the new token, the logits of it */
        int nkv = js_alloc(j, x->bytes * (t + 1), x->site, JS_NAT_ALLOC), lg;
        int aT[3] = {kv, nkv, l->m.w[0]};
        if (nkv < 0) break;
        js_play(j, 'F', t % 8, 8, aT, 3);
        js_here(j, js_site(j, U_VAL(106)));
        js_free(j, kv);
        kv = nkv;
        lg = js_alloc(j, x->bytes2, x->site2, JS_NAT_ALLOC);
        if (lg >= 0) {
            int aL[1] = {lg};
            js_play(j, 'F', 7, 8, aL, 1);
            js_free(j, lg);
        }
    }
    js_free(j, kv);
}

static void lk_eval_generate(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int bOom;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_N | P_P, 1);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.2, 0.5));
    if (jb.l.valIters == 0) jb.l.valIters = 3 + (int)acc_draw(a, 4);
    x.k = 16 + (int)acc_draw(a, 48);
    x.bytes = (int64_t)jb.micro * 2 * 1024 * 2 * 24; /* keys and values of one token, all layers */
    x.bytes2 = (int64_t)jb.micro * 50304 * 2;
    jb.l.pCtx = &x;
    jb.l.xValBatch = hook_generate;
    acc_shape(a, "generation", "%d new tokens per evaluation batch", x.k);
    acc_describe(a, "Training whose evaluation generates text for each batch (`model.generate`, max_new_tokens "
                    "16 to 64): the key/value cache grows token by token inside each batch and is dropped at its end, "
                    "so memory rises and falls with every batch. Batches are marked. Expected: nothing at severity "
                    "low or above.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, "lib:transformers/cache_utils.py:119:DynamicLayer.update|"
                        "lib:transformers/generation/utils.py:3460:GenerationMixin._sample|" U_VAL(106));
    x.site2 = js_site(j, "lib:torch/nn/modules/linear.py:134:Linear.forward|"
                         "lib:transformers/generation/utils.py:3460:GenerationMixin._sample|" U_VAL(106));
    loop_epochs(a, &jb.l, j, &bOom);
    expect_loader(a, jb.l.pageableShare);
    acc_end(a, j, 1, 1);
}

/* ---- evaluation on longer sequences than training ---- */

static void lk_eval_longseq(struct acc *a)
{
    struct job jb;
    int mult;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.15, 0.35));
    mult = set_eval_mult(&jb, 2 + (int)acc_draw(a, 7)); /* tokens per sample: mult x training's, same samples */
    if (jb.l.valIters == 0) jb.l.valIters = 3 + (int)acc_draw(a, 6);
    acc_shape(a, "evaluation", "%d batches of sequences %d x training's length (%lld tokens), under inference_mode",
              jb.l.valIters, mult, (long long)(jb.seq * mult));
    acc_describe(a, "Training on short sequences whose evaluation runs on the full context (2 to 8 times training's "
                    "length) under torch.inference_mode(): each evaluation batch needs more memory than a training "
                    "step and is freed when it ends. Bounded, not growth. Expected: nothing at severity low or above "
                    "(an info note that evaluation peaks higher is fine).");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- test-time augmentation: several forward passes per evaluation batch ---- */

static void hook_tta(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    int64_t out = l->m.a[l->m.n - 1].act * l->valBatch;
    int sum = js_alloc(j, out, x->site2, JS_NAT_ALLOC); /* probs = outputs.softmax(-1) */
    (void)b;
    if (sum < 0) return;
    {
        int aT[2] = {f->out, sum};
        js_launch(j, 0, aT, 2);
    }
    for (int k = 1; k < x->k; k++) { /* for aug in augs: probs += model(aug(x)).softmax(-1) */
        int xa = js_alloc(j, l->valXBytes, x->site, JS_NAT_ALLOC);
        struct pt_fwd g;
        if (xa < 0) break;
        g = pt_forward(j, &l->m, xa, l->valBatch, 0, 0, U_VAL(104));
        if (g.out < 0) break;
        {
            int aT[2] = {g.out, sum};
            js_launch(j, 0, aT, 2);
        }
        js_here(j, js_site(j, U_VAL(105)));
        js_free(j, g.loss);
        js_free(j, g.out);
    }
    pt_item(j, sum, U_VAL(107));
    js_here(j, js_site(j, U_VAL(107)));
    js_free(j, sum);
}

static void lk_eval_tta(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int mult;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_CNN, 0.0, acc_drawf(a, 0.15, 0.4));
    mult = set_eval_mult(&jb, 1 + (int)acc_draw(a, 4));
    if (jb.l.valIters == 0) jb.l.valIters = 3 + (int)acc_draw(a, 6);
    x.k = 2 + (int)acc_draw(a, 9);
    jb.l.pCtx = &x;
    jb.l.xValBatch = hook_tta;
    acc_shape(a, "evaluation", "%d batches of %d (%d x training's), %d augmented views each", jb.l.valIters,
              jb.l.valBatch, mult, x.k);
    acc_describe(a, "Training whose evaluation uses test-time augmentation under torch.no_grad(): every batch runs "
                    "2 to 10 forward passes (flips, crops) and averages their softmax in one buffer, freed when the "
                    "batch ends. Several peaks per batch, nothing kept across batches. Expected: nothing at severity "
                    "low or above (an info note that evaluation peaks higher is fine).");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, "lib:torchvision/transforms/v2/functional/_geometry.py:64:horizontal_flip_image|" U_VAL(103));
    x.site2 = js_site(j, "lib:torch/nn/functional.py:2140:softmax|" U_VAL(104));
    job_finish(a, &jb, j);
}

/* ---- beam search in evaluation ---- */

static void hook_beam(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    int kv = -1;
    (void)b;
    (void)f;
    for (int t = 0; t < x->k; t++) {
        int nkv = js_alloc(j, x->bytes * (t + 1), x->site, JS_NAT_ALLOC), lg, ro; /* torch.cat(past, new) */
        int aT[3] = {kv, nkv, l->m.w[0]};
        if (nkv < 0) break;
        js_play(j, 'F', t % 8, 8, aT, 3);
        js_here(j, js_site(j, U_VAL(106)));
        js_free(j, kv);
        lg = js_alloc(j, x->bytes2, x->site2, JS_NAT_ALLOC); /* scores over the vocabulary, every beam */
        if (lg >= 0) {
            int aL[2] = {lg, nkv};
            js_play(j, 'F', 7, 8, aL, 2);
            js_free(j, lg);
        }
        ro = js_alloc(j, x->bytes * (t + 1), x->at, JS_NAT_ALLOC); /* cache.index_select(0, beam_idx) */
        if (ro < 0) {
            kv = nkv;
            break;
        }
        {
            int aR[2] = {nkv, ro};
            js_launch(j, 0, aR, 2);
        }
        js_free(j, nkv);
        kv = ro;
    }
    js_free(j, kv);
}

static void lk_eval_beam(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int beams;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.15, 0.4));
    if (jb.l.valIters == 0) jb.l.valIters = 2 + (int)acc_draw(a, 5);
    beams = 2 + (int)acc_draw(a, 7);
    x.k = 16 + (int)acc_draw(a, 112);
    x.bytes = (int64_t)jb.micro * beams * 2 * 1024 * 2 * 12; /* keys and values of one token, every beam and layer */
    x.bytes2 = (int64_t)jb.micro * beams * 50304 * 4;
    while (x.k > 16 && x.bytes * x.k * 3 > jb.budget / 3) x.k /= 2;
    jb.l.pCtx = &x;
    jb.l.xValBatch = hook_beam;
    acc_shape(a, "generation", "beam search, %d beams, %d new tokens per evaluation batch", beams, x.k);
    acc_describe(a, "Training whose evaluation decodes with beam search (`model.generate(num_beams=...)`) under "
                    "torch.no_grad(): the key/value cache grows by one token per step, is reordered by the surviving "
                    "beams each step (a copy beside the old one), and is dropped when the batch ends. Memory rises "
                    "and falls with every batch. Expected: nothing at severity low or above.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, "lib:transformers/cache_utils.py:119:DynamicLayer.update|"
                        "lib:transformers/generation/utils.py:3950:GenerationMixin._beam_search|" U_VAL(106));
    x.site2 = js_site(j, "lib:torch/nn/functional.py:2248:log_softmax|"
                         "lib:transformers/generation/utils.py:3950:GenerationMixin._beam_search|" U_VAL(106));
    x.at = js_site(j, "lib:transformers/cache_utils.py:874:Cache.reorder_cache|"
                      "lib:transformers/generation/utils.py:3950:GenerationMixin._beam_search|" U_VAL(106));
    job_finish(a, &jb, j);
}

/* ---- an EMA model swapped in for evaluation ---- */

static void hook_ema_start(struct loop *l, struct js *j, int n, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)n;
    (void)f;
    x->nT = 0;
    for (int i = 0; i < l->m.n && x->nT < 256; i++) { /* ema.store(): a backup of each parameter, then copy_to() */
        int t;
        if (l->m.w[i] < 0) continue;
        t = js_alloc(j, l->m.a[i].w, x->site, JS_NAT_ALLOC);
        if (t < 0) return;
        {
            int aT[3] = {l->m.w[i], t, x->aT[256 + x->nT]};
            js_launch(j, 0, aT, 3);
        }
        x->aT[x->nT++] = t;
    }
}

static void hook_ema_end(struct loop *l, struct js *j, int n, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)n;
    (void)f;
    js_here(j, js_site(j, "lib:torch_ema/ema.py:209:ExponentialMovingAverage.restore|" U_VAL(111)));
    for (int i = 0, k = 0; i < l->m.n && k < x->nT; i++) { /* ema.restore(): the backup copied back, then dropped */
        if (l->m.w[i] < 0) continue;
        {
            int aT[2] = {x->aT[k], l->m.w[i]};
            js_launch(j, 0, aT, 2);
        }
        js_free(j, x->aT[k++]);
    }
    x->nT = 0;
}

static void hook_ema_step(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)it;
    (void)f;
    for (int i = 0, k = 0; i < l->m.n; i++) { /* ema.update(): shadow = decay * shadow + (1 - decay) * param */
        if (l->m.w[i] < 0) continue;
        {
            int aT[2] = {l->m.w[i], x->aT[256 + k++]};
            js_launch(j, 0, aT, 2);
        }
    }
}

static void lk_eval_ema(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int site;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.15, 0.35));
    if (jb.l.valIters == 0) jb.l.valIters = 2 + (int)acc_draw(a, 6);
    jb.l.epochs = 1 + (int)acc_draw(a, 3);
    jb.l.iters = (12 + (int)acc_draw(a, 24)) / jb.l.epochs;
    set_eval_mult(&jb, 1 + (int)acc_draw(a, 3));
    jb.l.pCtx = &x;
    jb.l.xValStart = hook_ema_start;
    jb.l.xValEnd = hook_ema_end;
    jb.l.xTrainStep = hook_ema_step;
    acc_shape(a, "ema", "a shadow copy of the weights (%.0f MiB) kept from start, swapped in for each evaluation",
              (double)pt_param_bytes(&jb.l.m) / (double)MiB);
    acc_describe(a, "Training with an exponential moving average of the weights (torch_ema): the shadow weights "
                    "live from the start and are updated after every step; each evaluation runs under "
                    "torch.no_grad() with the average swapped in (`with ema.average_parameters():` stores a copy of "
                    "every weight at its start and restores and drops it at its end). A weights-sized block made at "
                    "each evaluation's start and freed at its end. Expected: nothing at severity low or above.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    site = js_site(j, "lib:torch_ema/ema.py:52:ExponentialMovingAverage.__init__|train.py:190:main|train.py:231:<module>");
    for (int i = 0, k = 0; i < jb.l.m.n && k < 256; i++)
        if (jb.l.m.w[i] >= 0) x.aT[256 + k++] = js_alloc(j, jb.l.m.a[i].w, site, JS_NAT_ALLOC);
    x.site = js_site(j, "lib:torch_ema/ema.py:170:ExponentialMovingAverage.store|"
                        "lib:torch_ema/ema.py:240:ExponentialMovingAverage.average_parameters|" U_VAL(97));
    job_finish(a, &jb, j);
}

/* ---- a metric kept on the GPU, bounded: a confusion matrix ---- */

static void hook_confmat(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    int p = js_alloc(j, (int64_t)l->valBatch * 8, x->site2, JS_NAT_ALLOC), c; /* preds = outputs.argmax(1) */
    (void)b;
    if (p < 0) return;
    {
        int aT[2] = {f->out, p};
        js_launch(j, 0, aT, 2);
    }
    c = js_alloc(j, x->bytes, x->site2, JS_NAT_ALLOC); /* torch.bincount(target * C + preds, minlength=C*C) */
    if (c >= 0) {
        int aT[3] = {p, c, x->at};
        js_launch(j, 0, aT, 3);
        js_launch(j, 0, aT + 1, 2); /* self.confmat += bincount */
        js_free(j, c);
    }
    js_free(j, p);
}

static void hook_confmat_end(struct loop *l, struct js *j, int n, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    int r = js_alloc(j, x->bytes, x->site, JS_NAT_ALLOC), old = x->at; /* compute(), then reset(): a new zero state */
    (void)n;
    (void)f;
    if (r < 0) return;
    {
        int aT[2] = {old, r};
        js_launch(j, 0, aT, 2);
    }
    pt_item(j, r, U_VAL(112));
    js_free(j, r);
    x->at = js_alloc(j, x->bytes, x->site, JS_NAT_ALLOC);
    js_here(j, js_site(j, U_VAL(113)));
    js_free(j, old);
}

static void lk_eval_confmat(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int nClass;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_CNN, 0.0, acc_drawf(a, 0.15, 0.4));
    set_eval_mult(&jb, 1 + (int)acc_draw(a, 4));
    jb.l.epochs = 1 + (int)acc_draw(a, 3);
    jb.l.iters = (12 + (int)acc_draw(a, 24)) / jb.l.epochs;
    jb.l.valIters = 3 + (int)acc_draw(a, 20);
    nClass = (int)(jb.l.m.a[jb.l.m.n - 1].act / 4);
    if (nClass < 1) nClass = 1;
    x.bytes = (int64_t)nClass * nClass * 8;
    jb.l.pCtx = &x;
    jb.l.xValBatch = hook_confmat;
    jb.l.xValEnd = hook_confmat_end;
    acc_shape(a, "metric", "a %d x %d confusion matrix on the GPU (%.1f MiB), reset after each evaluation", nClass, nClass,
              (double)x.bytes / (double)MiB);
    acc_describe(a, "Training whose evaluation collects a confusion matrix on the GPU (torchmetrics "
                    "MulticlassConfusionMatrix): a classes x classes int64 state made with the metric at start, a "
                    "bincount of the same size per batch added into it, compute() and reset() at the evaluation's "
                    "end (reset makes a new zero state, live until the next evaluation, the last one to the end). "
                    "Bounded by the number of classes, not by the evaluation set. Expected: nothing at severity low "
                    "or above.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, "lib:torchmetrics/metric.py:712:Metric.reset|metrics.py:58:ConfusionMatrix.reset|" U_VAL(112));
    x.site2 = js_site(j, "lib:torchmetrics/functional/classification/confusion_matrix.py:160:_multiclass_confusion_matrix_update|"
                         "metrics.py:52:ConfusionMatrix.update|" U_VAL(109));
    x.at = js_alloc(j, x.bytes, js_site(j, "lib:torchmetrics/metric.py:218:Metric.add_state|metrics.py:47:ConfusionMatrix.__init__|"
                                           "train.py:190:main|train.py:231:<module>"), JS_NAT_ALLOC);
    job_finish(a, &jb, j);
}

/* ---- evaluation every N epochs only ---- */

static void lk_eval_every_n(struct acc *a)
{
    struct job jb;
    int mult;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.15, 0.4));
    mult = set_eval_mult(&jb, 1 + (int)acc_draw(a, 4));
    jb.l.epochs = 3 + (int)acc_draw(a, 6);
    jb.l.iters = 3 + (int)acc_draw(a, 8);
    jb.l.valEvery = 2 + (int)acc_draw(a, 3);
    jb.l.valIters = 2 + (int)acc_draw(a, 8);
    acc_shape(a, "evaluation", "after every %d epochs (and the last) of %d, %d batches of %d (%d x training's)",
              jb.l.valEvery, jb.l.epochs, jb.l.valIters, jb.l.valBatch, mult);
    acc_describe(a, "Training that evaluates only every few epochs (check_val_every_n_epoch) and after the last, "
                    "under torch.no_grad() with a larger batch: long stretches of training between evaluations of "
                    "the same peak. Expected: nothing at severity low or above (an info note that evaluation peaks "
                    "higher is fine).");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- the first evaluation batch warms the allocator's cache (cudnn.benchmark for the new shape) ---- */

static void hook_warm(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)f;
    if (b != 0) return; /* only the first batch of the first evaluation sees a new input shape */
    for (int k = 0; k < x->k; k++) { /* each candidate algorithm's workspace, tried and freed */
        int64_t ws = x->bytes >> (k % 3);
        int t = js_alloc(j, ws, x->site, JS_NAT_ALLOC);
        if (t < 0) continue; /* an algorithm whose workspace does not fit is skipped */
        {
            int aT[1] = {t};
            js_launch(j, 0, aT, 1);
        }
        js_free(j, t);
    }
}

static void lk_eval_warm(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int mult;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_CNN, 0.0, acc_drawf(a, 0.15, 0.35));
    mult = set_eval_mult(&jb, 1 + (int)acc_draw(a, 4));
    if (jb.l.valIters == 0) jb.l.valIters = 3 + (int)acc_draw(a, 6);
    x.k = 3 + (int)acc_draw(a, 10);
    x.bytes = (int64_t)(jb.budget * acc_drawf(a, 0.02, 0.2)) / MiB * MiB;
    jb.l.pCtx = &x;
    jb.l.xValBatch = hook_warm;
    acc_shape(a, "evaluation", "%d batches of %d (%d x training's); the first one tries %d convolution workspaces of up "
              "to %.0f MiB", jb.l.valIters, jb.l.valBatch, mult, x.k, (double)x.bytes / (double)MiB);
    acc_describe(a, "Training with torch.backends.cudnn.benchmark whose evaluation batch has a new shape: the first "
                    "evaluation batch benchmarks the convolutions again, trying workspaces of several sizes, and the "
                    "caching allocator keeps the segments it reserved for them; later batches reuse that cache. A "
                    "first-batch peak and a cache that rose once. Expected: nothing at severity low or above (an info "
                    "note that evaluation peaks higher is fine).");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, "lib:torch/nn/modules/conv.py:543:Conv2d._conv_forward|lib:torch/nn/modules/conv.py:549:Conv2d.forward|"
                        PT_CALL "|" U_VAL(104));
    job_finish(a, &jb, j);
}

/* ---- copies ---- */

/* Copy time of one batch of `bytes` at gbps, in ns. */
static int64_t copy_ns(int64_t bytes, double gbps)
{
    return 2000 + (int64_t)((double)bytes / gbps);
}

/*
 * Size the job's step time so that batch copies of xBytes take about share s of it: the
 * template's kernels scaled by timeScale, the CPU's own time per step fixed.
 */
static void set_copy_share(struct job *jb, double gbps, double s)
{
    struct loop *l = &jb->l;
    int64_t copy = copy_ns(l->xBytes, gbps) * l->accum;
    int64_t gpu = js_template_ns(l->zTemplate, "FBOZC");
    int64_t want = (int64_t)((double)copy * (1 - s) / s) - l->cpuPerStep;
    if (want < gpu / 20) want = gpu / 20;
    l->timeScale = (double)want / (double)gpu;
}

static void lk_pinned_fast(struct acc *a)
{
    struct job jb;
    double s;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_CNN, 0.0, acc_drawf(a, 0.2, 0.5));
    jb.l.bPinned = 1;
    jb.l.accum = 1;
    set_micro(&jb, jb.micro);
    jb.l.xBytes = (int64_t)(32 + acc_draw(a, 300)) * MiB;
    jb.l.valXBytes = jb.l.xBytes;
    s = acc_drawf(a, 0.005, 0.06);
    set_copy_share(&jb, jb.g->pinnedGBps, s);
    acc_shape(a, "copies", "%lld MiB per batch from pinned memory, about %.1f %% of a step", (long long)(jb.l.xBytes / MiB),
              s * 100);
    acc_describe(a, "Training on large inputs (video clips, 3-D volumes) from a DataLoader with pin_memory=True and "
                    "non_blocking copies: every batch moves at the host link's full speed, a few percent of each "
                    "step. Nothing to fix. Expected: nothing at severity low or above.");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

static void lk_pageable_light(struct acc *a)
{
    struct job jb;
    double s;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.5));
    jb.l.bPinned = 0;
    s = acc_drawf(a, 0.002, 0.015);
    set_copy_share(&jb, jb.g->pageableGBps, s);
    acc_shape(a, "copies", "%lld KiB per batch from pageable memory, about %.2f %% of a step", (long long)(jb.l.xBytes >> 10),
              s * 100);
    acc_describe(a, "Training fed by a DataLoader without pin_memory whose batches are small next to the step's "
                    "compute: the pageable copies take about 1 % of the run or less, noise next to step-time "
                    "variation. Expected: nothing at severity low or above.");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- OOM look-alikes ---- */

static void hook_retry_ok(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    int t;
    (void)f;
    if (it != x->at && it != x->at + 1) return;
    if (it == x->at) x->bytes = js_device_free(j) - GiB;
    if (x->bytes < 256 * MiB) return;
    t = js_alloc(j, it == x->at ? x->bytes : x->bytes + GiB / 2, x->site, JS_NAT_ALLOC);
    if (t >= 0) {
        int aT[1] = {t};
        js_launch_named(j, "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
                           "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
                        400000, aT, 1);
        js_here(j, x->site);
        js_free(j, t);
    }
}

static void lk_alloc_retry_ok(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int bOom;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.5, 0.8));
    jb.l.epochs = 1;
    jb.l.iters = 16 + (int)acc_draw(a, 20);
    x.at = 4 + (int)acc_draw(a, (uint64_t)(jb.l.iters - 6));
    jb.l.pCtx = &x;
    jb.l.xTrainStep = hook_retry_ok;
    acc_shape(a, "retry", "at step %d", x.at + 1);
    acc_describe(a, "Training that computes a large confusion matrix (metrics.py:60) at one step and a slightly "
                    "larger one at the next: the second request does not fit beside what the allocator caches, "
                    "so its cudaMalloc fails once, the allocator releases its cached segments and the retry "
                    "succeeds. No error reaches the program. Expected: nothing at severity low or above (an info "
                    "note of the retry is fine).");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, "metrics.py:60:confusion|train.py:86:train_one_epoch|" MAIN);
    loop_epochs(a, &jb.l, j, &bOom);
    expect_loader(a, jb.l.pageableShare);
    acc_end(a, j, 1, 1);
}

/* cudnn.benchmark: algorithms that ask for more workspace than is free are skipped (PyTorch catches the OOM). */
static void cudnn_search(struct acc *a, struct js *j, int nLayer, int nFail, int bLastFails, int *pFail)
{
    int site = js_site(j, "lib:torch/nn/modules/conv.py:548:Conv2d._conv_forward|lib:torch/nn/modules/conv.py:553:Conv2d.forward|"
                          "lib:torch/nn/modules/module.py:1786:Module._call_impl|" U_TRAIN(66));
    (void)a;
    *pFail = site;
    for (int l = 0; l < nLayer; l++) {
        for (int k = 0; k < nFail; k++) { /* workspaces beyond what is free: each fails, the next algorithm is tried */
            int t = js_alloc(j, js_device_free(j) + js_reserved(j) + (int64_t)(nFail - k) * GiB, site, JS_NAT_ALLOC);
            js_free(j, t);
        }
        if (bLastFails && l == nLayer - 1) return;
        {
            int t = js_alloc(j, 64 * MiB, site, JS_NAT_ALLOC);
            int aT[1] = {t};
            js_launch_named(j, "void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, false, 0, 0, int, float, "
                               "float, float, float, float, float>(cudnn::cnn::GroupedDirectFpropParams, float const*)",
                            300000, aT, 1);
            js_free(j, t);
        }
    }
}

static void lk_cudnn_fallback(struct acc *a)
{
    struct job jb;
    struct js *j;
    int bOom, nLayer, nFail, site;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_CNN, 0.0, acc_drawf(a, 0.2, 0.5));
    nLayer = 1 + (int)acc_draw(a, 4);
    nFail = 1 + (int)acc_draw(a, 3);
    acc_shape(a, "cudnn", "%d convolution(s), %d algorithm(s) each skipped for their workspace", nLayer, nFail);
    acc_describe(a, "Training with torch.backends.cudnn.benchmark = True: at the first step cuDNN tries the "
                    "convolution algorithms, some asking for more workspace than the device has free; PyTorch "
                    "catches each of those out-of-memory errors and picks an algorithm needing less. The program "
                    "never sees an error. Expected: nothing at severity low or above (an info note is fine).");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    loop_push(a, j, ACC_NVTX_NAMES, "cudnn_benchmark", 0);
    cudnn_search(a, j, nLayer, nFail, 0, &site);
    loop_pop(a, j, ACC_NVTX_NAMES);
    loop_epochs(a, &jb.l, j, &bOom);
    expect_loader(a, jb.l.pageableShare);
    acc_end(a, j, 1, 1);
}

static void lk_other_process(struct acc *a)
{
    struct job jb;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, acc_drawf(a, 0.2, 0.6), acc_drawf(a, 0.3, 0.7));
    acc_describe(a, "Training on a GPU shared with another process (a notebook kernel, an inference service) that "
                    "holds a large part of the memory; the job fits in what is left and never fails. Expected: "
                    "nothing at severity low or above.");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- weights idle for long stretches ---- */

static void hook_moe(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)f;
    for (int e = 0; e < x->n; e++) { /* skewed routing: expert e gets tokens with probability 1/(e+1), all at the first step */
        if (it > 0 && (int)js_rand(j, (uint64_t)(e + 1) * 2) != 0) continue;
        int aT[2] = {x->aT[e], l->lastOut};
        js_launch_named(j, "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>"
                           "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)",
                        120000, aT, 2);
    }
}

static void lk_moe_idle(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int bOom, site;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.2, 0.4));
    x.n = 8 << acc_draw(a, 3);
    x.bytes = (int64_t)(8 << acc_draw(a, 4)) * MiB;
    if (x.bytes * x.n > jb.budget / 4) x.bytes = jb.budget / 4 / x.n / MiB * MiB;
    jb.l.pCtx = &x;
    jb.l.xTrainStep = hook_moe;
    acc_shape(a, "experts", "%d frozen experts of %lld MiB, skewed routing", x.n, (long long)(x.bytes / MiB));
    acc_describe(a, "Fine-tuning a mixture-of-experts model whose expert weights are frozen: the router sends most "
                    "tokens to a few experts, so some experts' weights go unused for many steps, then are used "
                    "again. Weights are state, however long they sit idle. Expected: nothing at severity low or "
                    "above.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    site = js_site(j, pt_frames("lib:torch/nn/modules/module.py:1355:Module.to.<locals>.convert|"
                                "lib:torch/nn/modules/module.py:1369:Module.to", U_TO_DEVICE));
    js_here(j, site);
    for (int e = 0; e < x.n; e++) {
        x.aT[e] = js_alloc(j, x.bytes, site, JS_NAT_ALLOC);
        js_h2d(j, x.aT[e], x.bytes, JS_PAGEABLE, 0, site);
    }
    loop_epochs(a, &jb.l, j, &bOom);
    expect_loader(a, jb.l.pageableShare);
    acc_end(a, j, jb.l.bTeardown, jb.l.bClean);
}

static void lk_varlen(struct acc *a)
{
    struct job jb;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.2, 0.5));
    jb.l.varLen = 4 + (int)acc_draw(a, 13);
    jb.l.epochs = 1;
    jb.l.iters = 30 + (int)acc_draw(a, 30);
    acc_shape(a, "lengths", "long-tailed, 1 to %d units", jb.l.varLen);
    acc_describe(a, "Training on documents of varying length without padding: most batches are short, a few long, "
                    "so the allocator reserves more whenever a longer batch than any before arrives: a staircase "
                    "that flattens out, not a leak. Expected: nothing at severity low or above.");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- planted: out of memory ---- */

/*
 * The job dies at an OOM: a long batch in the forward, the optimizer's state at the first step,
 * or an evaluation batch too large, possibly beside another process; everything live at the
 * crash is live at the end of the trace. One OOM finding, high; nothing live is a leak.
 */
static void p_oom_dies(struct acc *a)
{
    struct job jb;
    struct js *j;
    int where, bOther, bClean, bOom = 0, at;
    int64_t demand = 0;
    const char *zVerdict, *zNot;
    char zSite[600];
    static const char *const azWhere[] = {"a long batch in the forward", "the optimizer's state at the first step",
                                          "the evaluation's batch"};
    draw_variant(a, M_ANY, P_ANY, 1);
    where = (int)acc_draw(a, 3);
    bOther = acc_chance(a, 25);
    bClean = acc_chance(a, 70);
    draw_job(a, &jb, where == 1 ? K_LM : K_ANY, bOther ? acc_drawf(a, 0.3, 0.5) : 0.0, acc_drawf(a, 0.3, 0.6));
    if (where == 1) { /* a model whose weights, gradients and activations fit, and whose Adam moments do not */
        int64_t avail = jb.g->total - CTX - jb.c.otherBytes, target = avail * 2 / 9;
        static const int aD[] = {2048, 4096, 8192};
        int d = 8192, nLayer = 2;
        for (int k = 0; k < 3; k++) {
            nLayer = (int)(target / ((int64_t)24 * aD[k] * aD[k]));
            d = aD[k];
            if (nLayer <= 32) break;
        }
        if (nLayer < 2) nLayer = 2;
        pt_lm(&jb.l.m, nLayer, d, 256, 32000, 1);
        if (jb.l.m.n > 60) pt_shrink(&jb.l.m, (jb.l.m.n + 47) / 48);
        jb.seq = 256;
        acc_shape(a, "model", "GPT (model.py), %d layers, d %d, 256 tokens (bf16, AdamW): %.1f GiB of weights", nLayer, d,
                  (double)pt_param_bytes(&jb.l.m) / (double)GiB);
        jb.l.accum = 1;
        jb.xSample = 256 * 8;
        set_micro(&jb, 1);
    }
    jb.l.m.bOomKeep = 1;
    jb.l.bTeardown = 0;
    jb.l.bClean = bClean;
    jb.l.epochs = 1;
    jb.l.iters = 6 + (int)acc_draw(a, 20);
    at = 2 + (int)acc_draw(a, (uint64_t)(jb.l.iters - 2));
    if (where == 1) jb.l.iters = 2;
    if (where == 2 && jb.l.valIters == 0) jb.l.valIters = 2;
    acc_shape(a, "oom", "%s%s, %s", azWhere[where], bOther ? ", another process holding memory" : "",
              bClean ? "the script exits with the traceback" : "the job is killed");
    acc_describe(a, "A job that dies at an out-of-memory error: everything live at the failure (weights, optimizer "
                    "state, the activations of the layers that ran) is live when the trace ends, because the process "
                    "exits with them. That memory is the OOM's evidence, not a leak. Expected: one OOM finding, high, "
                    "at the failing line, with the verdict its figures imply; nothing else at severity low or above.");
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    if (where == 0) {
        for (int i = 0; i < at && !bOom; i++) bOom = loop_train_iter(a, &jb.l, j, i) != 0;
        if (!bOom) { /* the long batch: its forward's activations alone exceed what is left */
            int64_t left = js_device_free(j) + js_reserved(j) - js_allocated(j);
            int mult = (int)(left / (pt_act_bytes(&jb.l.m) * jb.micro)) + 2;
            demand = js_allocated_blocks(j) + pt_act_bytes(&jb.l.m) * jb.micro * mult + jb.l.xBytes * mult;
            jb.l.batch *= mult;
            jb.l.xBytes *= mult;
            bOom = loop_train_iter(a, &jb.l, j, at) != 0;
        }
    } else if (where == 1) {
        demand = est_fixed(&jb.l.m); /* weights, gradients and the whole optimizer state */
        for (int i = 0; i < jb.l.iters && !bOom; i++) bOom = loop_train_iter(a, &jb.l, j, i) != 0;
    } else {
        int64_t left = js_device_free(j) + js_reserved(j);
        jb.l.valBatch = (int)(left / (jb.l.m.a[0].act > 0 ? jb.l.m.a[0].act : 1)) + 1;
        jb.l.valXBytes = jb.l.xBytes / jb.micro * jb.l.valBatch;
        if (jb.l.valXBytes > left / 2) jb.l.valXBytes = left / 2;
        loop_epochs(a, &jb.l, j, &bOom);
    }
    if (js_first_kernel(j) && js_now(j) > js_first_kernel(j))
        expect_loader(a, (double)js_pageable_ns(j) / (double)(js_now(j) - js_first_kernel(j)));
    if (!bOom) {
        fprintf(stderr, "accgen: oom_dies did not run out of memory\n");
        js_sync(j);
    }
    zVerdict = oom_verdict(a, j, demand, &zNot);
    oom_sites(j, jb.l.failSite, where == 2 ? SITE_VFWD : where == 1 ? "train.py:72 in train_one_epoch" : SITE_FWD, zSite,
              sizeof zSite);
    if (where == 2) /* the evaluation's peak above training is the same cause */
        expect(a, "oom", "validation_spike", NULL, "info|low|medium|high", NULL, NULL, NULL, 0, "consequence of the planted cause",
               0, NULL);
    expect(a, "oom", "oom", zSite, "high", where == 2 ? "validation|evaluation" : NULL, zVerdict, NULL, bOom, "one OOM, its live memory no leak",
           1, zNot);
    acc_end(a, j, 0, bClean);
}

/*
 * One failure with retries: the allocator's own retry, a caller catching the error and trying a
 * smaller batch, cuDNN's workspace fallback ending in a failure, or another process holding the
 * memory with the caller retrying after a pause. One OOM finding, listing its attempts.
 */
static void p_oom_retries(struct acc *a)
{
    struct job jb;
    struct js *j;
    int mode, bDie, bOom = 0, at, nSmaller = 0, aFail[8], nFail = 0;
    int64_t demand = 0;
    const char *zVerdict = NULL, *zNot = NULL;
    char zSite[1200];
    static const char *const azMode[] = {"the allocator's own retry", "caught and retried with half the batch",
                                         "cuDNN's workspace fallback, then the convolution itself",
                                         "another process holds the memory; retried after a pause"};
    draw_variant(a, M_ANY, P_ANY, 1);
    mode = (int)acc_draw(a, 4);
    draw_job(a, &jb, mode == 2 ? K_CNN : K_ANY, mode == 3 ? acc_drawf(a, 0.3, 0.5) : 0.0, acc_drawf(a, 0.3, 0.5));
    bDie = mode == 0 ? acc_chance(a, 50) : mode == 3;
    jb.l.m.bOomKeep = bDie && mode == 0; /* where the caller retries, the failed step's tensors are gone first */
    jb.l.bPinned = 1;
    jb.l.epochs = 1;
    jb.l.iters = 8 + (int)acc_draw(a, 16);
    jb.l.valIters = 0;
    at = 2 + (int)acc_draw(a, (uint64_t)(jb.l.iters - 4));
    acc_shape(a, "oom", "%s at step %d, %s", azMode[mode], at + 1, bDie ? "then the job dies" : "then training goes on");
    acc_describe(a, "One failed request with its retries, within one step: PyTorch's allocator releasing its cache "
                    "and retrying, a training loop that catches torch.cuda.OutOfMemoryError and retries with a "
                    "smaller batch, cuDNN trying smaller workspaces before the convolution's output fails, or "
                    "attempts a second apart while another process holds the memory. Expected: one OOM finding, "
                    "high, at the failing line, listing its attempts; nothing else at severity low or above.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    loop_push(a, j, ACC_NVTX_NAMES, "train", 0);
    for (int i = 0; i < jb.l.iters; i++) {
        if (i == at && !bOom) {
            int64_t left = js_device_free(j) + js_reserved(j) - js_allocated(j), other = js_other_bytes(j);
            /* another process: a batch that would have fit without it */
            int mult = (int)((left + (mode == 3 ? other / 2 : 0)) / (pt_act_bytes(&jb.l.m) * jb.micro)) + 2, b0 = jb.l.batch;
            int64_t x0 = jb.l.xBytes;
            if (mode == 2) {
                int site;
                cudnn_search(a, j, 1, 2 + (int)acc_draw(a, 3), 1, &site);
                aFail[nFail++] = site;
            }
            demand = js_allocated_blocks(j) + pt_act_bytes(&jb.l.m) * jb.micro * mult + x0 * mult;
            jb.l.batch *= mult;
            jb.l.xBytes *= mult;
            if (loop_train_iter(a, &jb.l, j, i) != 0) {
                bOom = 1;
                aFail[nFail++] = jb.l.failSite;
                zVerdict = oom_verdict(a, j, demand, &zNot);
            }
            if (mode == 3 && bOom) /* the caller waits a second and tries again, twice */
                for (int k = 0; k < 2; k++) {
                    js_cpu(j, 1000000000);
                    if (loop_train_iter(a, &jb.l, j, i) != 0) aFail[nFail++] = jb.l.failSite;
                }
            while (mode == 1 && bOom && mult > 1) { /* except OutOfMemoryError: batch //= 2 */
                js_here(j, js_site(j, U_TRAIN(83)));
                js_empty_cache(j);
                mult /= 2;
                jb.l.batch = b0 * (mult > 0 ? mult : 1);
                jb.l.xBytes = x0 * (mult > 0 ? mult : 1);
                nSmaller++;
                if (loop_train_iter(a, &jb.l, j, i) == 0) break;
                if (nFail < 8) aFail[nFail++] = jb.l.failSite;
            }
            if (bDie) break;
            jb.l.batch = b0;
            jb.l.xBytes = x0;
            if (mode != 1) { /* skip the batch: optimizer.zero_grad(); torch.cuda.empty_cache() */
                js_here(j, js_site(j, U_TRAIN(83)));
                js_empty_cache(j);
            }
            continue;
        }
        if (loop_train_iter(a, &jb.l, j, i) != 0) break;
    }
    if (!bDie) loop_pop(a, j, ACC_NVTX_NAMES);
    if (!bOom) fprintf(stderr, "accgen: oom_retries did not run out of memory\n");
    zSite[0] = 0;
    for (int i = 0; i < nFail; i++) {
        char z[600];
        size_t n = strlen(zSite);
        oom_sites(j, aFail[i], i == 0 ? SITE_FWD : NULL, z, sizeof z);
        if (z[0] && !strstr(zSite, z)) snprintf(zSite + n, sizeof zSite - n, "%s%s", n ? "|" : "", z);
    }
    expect(a, "oom", "oom", zSite, "high", NULL, zVerdict ? zVerdict : "real demand", NULL, bOom,
           "one failure with retries, one OOM", 1, zNot);
    js_sync(j);
    acc_end(a, j, !bDie, 1);
}

/*
 * An OOM caught and skipped: one batch (a long one in training, or an evaluation batch) fails, the
 * loop catches torch.cuda.OutOfMemoryError, drops the batch, empties the cache and goes on to the
 * end. One OOM finding; the run after it is healthy.
 */
static void p_oom_skip(struct acc *a)
{
    struct job jb;
    struct js *j;
    int bOom = 0, at, bEval, bEmpty;
    int64_t demand = 0;
    const char *zVerdict = NULL, *zNot = NULL;
    char zSite[600];
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, acc_chance(a, 20) ? acc_drawf(a, 0.2, 0.4) : 0.0, acc_drawf(a, 0.3, 0.55));
    bEval = acc_chance(a, 30);
    bEmpty = acc_chance(a, 60);
    jb.l.bOomPlanned = 1;
    jb.l.epochs = 1;
    jb.l.iters = 16 + (int)acc_draw(a, 30);
    if (jb.l.valIters == 0) jb.l.valIters = 3 + (int)acc_draw(a, 4);
    at = 3 + (int)acc_draw(a, (uint64_t)(jb.l.iters - 6));
    acc_shape(a, "oom", "%s, caught and skipped%s; the run goes on to its end",
              bEval ? "an evaluation batch too large" : "a long batch at a training step", bEmpty ? ", torch.cuda.empty_cache()" : "");
    acc_describe(a, "A loop that catches torch.cuda.OutOfMemoryError on one batch that is too large (a long "
                    "document in training, or an oversized evaluation batch), skips it (zero_grad, optionally "
                    "empty_cache) and goes on; the rest of the run is healthy. Expected: one OOM finding, high, at the "
                    "failing line, with the verdict its figures imply; nothing else at severity low or above (no leak: "
                    "what the failed batch held was freed).");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    loop_push(a, j, ACC_NVTX_NAMES, "train", 0);
    for (int i = 0; i < jb.l.iters; i++) {
        if (i == at && !bEval) {
            int64_t left = js_device_free(j) + js_reserved(j) - js_allocated(j);
            int mult = (int)(left / (pt_act_bytes(&jb.l.m) * jb.micro)) + 2, b0 = jb.l.batch;
            int64_t x0 = jb.l.xBytes;
            demand = js_allocated_blocks(j) + pt_act_bytes(&jb.l.m) * jb.micro * mult + x0 * mult;
            jb.l.batch *= mult;
            jb.l.xBytes *= mult;
            if (loop_train_iter(a, &jb.l, j, i) != 0) {
                bOom = 1;
                zVerdict = oom_verdict(a, j, demand, &zNot);
                oom_sites(j, jb.l.failSite, SITE_FWD, zSite, sizeof zSite);
            }
            jb.l.batch = b0;
            jb.l.xBytes = x0;
            js_here(j, js_site(j, U_TRAIN(83)));
            if (bEmpty) js_empty_cache(j);
            continue;
        }
        if (loop_train_iter(a, &jb.l, j, i) != 0) break;
        jb.l.iterDone++;
        loop_note_reserved(&jb.l, j);
    }
    js_here(j, js_site(j, MAIN));
    js_free(j, jb.l.lastX);
    js_free(j, jb.l.lastOut);
    jb.l.lastX = jb.l.lastOut = -1;
    loop_pop(a, j, ACC_NVTX_NAMES);
    loop_push(a, j, ACC_NVTX_NAMES, "validation", 0);
    for (int b = 0; b < jb.l.valIters; b++) {
        if (bEval && b == jb.l.valIters / 2) {
            int vb = jb.l.valBatch;
            int64_t vx = jb.l.valXBytes, left = js_device_free(j) + js_reserved(j);
            jb.l.valBatch = (int)(left / (jb.l.m.a[0].act > 0 ? jb.l.m.a[0].act : 1)) + 1;
            jb.l.valXBytes = jb.l.xBytes / jb.micro * jb.l.valBatch;
            if (jb.l.valXBytes > left / 2) jb.l.valXBytes = left / 2;
            if (loop_val_batch(a, &jb.l, j, b) != 0) {
                bOom = 1;
                zVerdict = oom_verdict(a, j, 0, &zNot);
                oom_sites(j, jb.l.failSite, SITE_VFWD, zSite, sizeof zSite);
            }
            jb.l.valBatch = vb;
            jb.l.valXBytes = vx;
            js_here(j, js_site(j, U_VAL(103)));
            if (bEmpty) js_empty_cache(j);
            continue;
        }
        if (loop_val_batch(a, &jb.l, j, b) != 0) break;
    }
    loop_pop(a, j, ACC_NVTX_NAMES);
    if (js_first_kernel(j) && js_now(j) > js_first_kernel(j))
        expect_loader(a, (double)js_pageable_ns(j) / (double)(js_now(j) - js_first_kernel(j)));
    if (!bOom) {
        fprintf(stderr, "accgen: oom_skip did not run out of memory\n");
        zSite[0] = 0;
    }
    if (bEval) /* the failed batch's peak above training is the same cause */
        expect(a, "oom", "validation_spike", NULL, "info|low|medium|high", NULL, NULL, NULL, 0, "consequence of the planted cause",
               0, NULL);
    expect(a, "oom", "oom", zSite, "high", bEval ? "validation|evaluation" : NULL, zVerdict ? zVerdict : "real demand", NULL,
           bOom, "an OOM caught and skipped, the run going on", 1, zNot);
    js_sync(j);
    acc_end(a, j, 1, 1);
}

/* ---- planted: copies ---- */

static void p_pageable_only(struct acc *a)
{
    struct job jb;
    struct js *j;
    int bOom;
    double s, gbps;
    int64_t t0, t1;
    char zTitle[64];
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.5));
    jb.l.bPinned = 0;
    jb.l.accum = 1;
    set_micro(&jb, jb.micro);
    jb.l.epochs = 1;
    jb.l.iters = 30 + (int)acc_draw(a, 70);
    jb.l.valIters = 0;
    jb.l.xBytes = (int64_t)(20 + acc_draw(a, 380)) * 1000000;
    gbps = jb.g->pageableGBps * acc_drawf(a, 0.7, 1.2);
    jb.c.pageableGBps = gbps;
    s = exp(acc_drawf(a, log(0.03), log(0.5)));
    set_copy_share(&jb, gbps, s);
    acc_shape(a, "copies", "%d batches of %.0f MB from pageable memory at %.1f GB/s, nothing pinned", jb.l.iters,
              (double)jb.l.xBytes / 1e6, gbps);
    acc_describe(a, "Training fed by a DataLoader without pin_memory: every batch is copied from pageable memory "
                    "with a blocking x.to('cuda') (train.py:61) and the GPU waits for each copy. No copy in the run "
                    "is pinned, so there is no fast copy to compare with: the loss is the copies' time against the "
                    "host link's speed. Expected: a transfer finding at train.py:61 whose severity follows the share "
                    "of the run the copies held compute up (computed from the plan); a second finding of the same "
                    "cause (copies serialized with compute) may accompany it.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    loop_epochs(a, &jb.l, j, &bOom);
    t0 = js_first_kernel(j);
    t1 = js_now(j);
    s = t1 > t0 ? (double)js_pageable_ns(j) / (double)(t1 - t0) : 0;
    snprintf(zTitle, sizeof zTitle, "%.1f %%", s * 100);
    acc_shape(a, "copy share", "%s of the run after the first kernel", zTitle);
    expect(a, "pageable", "transfer", SITE_COPY, *transfer_sev(s) ? transfer_sev(s) : "info", NULL, NULL, NULL,
           *transfer_sev(s) != 0, "pageable copies with nothing pinned to compare", 0, NULL);
    expect(a, "pageable", "transfer", NULL, "low|medium|high", NULL, "erializ", NULL, 0, "consequence of the planted cause", 0, NULL);
    acc_end(a, j, 1, 1);
}

static void p_pinned_growth(struct acc *a)
{
    struct job jb;
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_CNN, 0.0, acc_drawf(a, 0.2, 0.5));
    jb.l.bPinned = 1;
    jb.l.epochs = 1;
    jb.l.iters = 24 + (int)acc_draw(a, 30);
    jb.l.valIters = 0;
    jb.l.pinDepth = jb.l.iters * jb.l.accum + 1;
    acc_shape(a, "pinned", "a new %lld MiB pinned block every batch", (long long)(jb.l.xBytes / MiB));
    acc_describe(a, "A pinned DataLoader whose loop keeps every CPU batch in a replay list (train.py:58): the caching "
                    "host allocator cannot reuse blocks and page-locks a new one for every batch. Expected: a transfer "
                    "finding (pinned host memory growing) at the pinned allocations' site or the line that keeps "
                    "them.");
    expect(a, "pinned-kept", "transfer", "pin_memory.py:90 in pin_memory|train.py:58 in train_one_epoch", "medium|high", NULL,
           "inned", NULL, 1, "pinned growth at its call site", 0, NULL);
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* ---- planted: growth ---- */

/* Leaks of the training loop (l->pCtx: struct ctx; x->k the kind). */
static void hook_leak(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)f;
    (void)it;
    if (x->k == 0) { /* epoch_outputs.append(outputs) */
        if (x->nT < 4096 && l->lastOut >= 0) x->aT[x->nT++] = l->lastOut;
        l->lastOut = -1;
    } else if (x->k == 1) { /* self.probs = torch.cat([self.probs, probs]) */
        int n;
        x->bytes2 += x->bytes;
        n = js_alloc(j, x->bytes2, x->site, JS_NAT_ALLOC);
        if (n < 0) return;
        {
            int aT[3] = {x->aT[0] >= 0 ? x->aT[0] : -1, n, l->lastOut};
            js_launch_named(j, "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>("
                               "float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, "
                               "128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, "
                               "unsigned int)", 200000, aT, 3);
        }
        js_here(j, x->site);
        if (x->nT) js_free(j, x->aT[0]);
        x->aT[0] = n;
        x->nT = 1;
    } else if (x->nT < 4096) { /* history.append(loss_per_sample) */
        x->aT[x->nT++] = js_alloc(j, x->bytes, x->site, JS_NAT_ALLOC);
    }
}

/*
 * The site accepted for growth at segment level: where the autograd thread reserved the segments
 * (loop_growth_site), the backward pass as the finding names it; else the line.
 */
static const char *seg_site(const char *zSite)
{
    return strstr(zSite, "(backward pass") ? "backward pass: autograd thread" : zSite;
}

/*
 * The sites a leak's growth at segment level may name, into z (size n): the line that keeps the memory,
 * and, where the autograd thread reserved most of the segments (loop_growth_site), the backward pass too:
 * when the line reserves segments of its own over the same steps, the detector names the line.
 */
static const char *seg_leak_sites(struct acc *a, const struct loop *l, const char *zLine, char *z, size_t n)
{
    const char *zGrow = seg_site(loop_growth_site(a, l, zLine));
    if (zGrow == zLine) return zLine;
    snprintf(z, n, "%s|%s", zLine, zGrow);
    return z;
}

/* How many steps a leak of perStep bytes can run beside the job (in a third of what the job leaves free), at most want. */
static int leak_steps(const struct job *jb, int64_t perStep, int want)
{
    int64_t room = (jb->g->total - CTX - jb->c.otherBytes - est_fixed(&jb->l.m) - est_sample(&jb->l.m) * jb->micro) / 3;
    int64_t n = perStep > 0 ? room / perStep : want;
    return n < 0 ? 0 : n < want ? (int)n : want;
}

static void p_leak_train(struct acc *a)
{
    const struct acc_variant *v;
    struct job jb;
    struct ctx x;
    int kind, bVis = 0, want;
    int64_t grow, perStep;
    char zSite[600], zBoth[700];
    const char *zPlanted, *zExp; /* zExp: the site the finding must name (at segment level, where the segments were reserved) */
    static const char *const azKind[] = {"every step's outputs kept (epoch_outputs.append(outputs))",
                                         "a metric buffer grown with torch.cat each step (metrics.py:41)",
                                         "per-sample losses kept on the GPU (train.py:79)"};
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 4);
    v = acc_variant(a);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.15, 0.4));
    kind = (int)acc_draw(a, 3);
    want = 20 + (int)acc_draw(a, 40);
    x.bytes = (int64_t)(1 + acc_draw(a, 16)) * MiB;
    perStep = kind == 0 ? jb.l.m.a[jb.l.m.n - 1].act * jb.micro : x.bytes;
    if (kind == 0 && (perStep < MiB || leak_steps(&jb, perStep, want) < 12)) { /* outputs too small or too large to keep */
        kind = 2;
        perStep = x.bytes;
    }
    x.k = kind;
    jb.l.epochs = 1;
    jb.l.iters = leak_steps(&jb, kind == 1 ? 2 * perStep : perStep, want); /* cat: the old buffer and the new one */
    if (jb.l.iters < 12) jb.l.iters = 12;
    grow = perStep * jb.l.iters;
    zPlanted = kind == 0 ? "train.py:66:" : kind == 1 ? "metrics.py:41:" : "train.py:79:";
    acc_shape(a, "leak", "%s: %lld KiB more per step%s", azKind[kind], (long long)(perStep >> 10),
              kind == 2 && v->ranks > 1 ? ", rank 0 only" : "");
    acc_describe(a, "A training loop that keeps something of every step on the GPU: the outputs, a metric buffer "
                    "reallocated larger by torch.cat, or per-sample losses (on rank 0 only when there are several "
                    "ranks). Expected: a leak (growth) at the line that allocates what is kept, where the trace can "
                    "show it (at segment level only when the allocator had to reserve more).");
    if (kind == 0) {
        loop_allow_also(a, "kept", "retained", NULL, NULL);
        loop_allow_also(a, "kept", "validation_spike", "carried over", NULL);
    }
    allow_state(a);
    jb.l.pCtx = &x;
    for (int r = 0; r < v->ranks; r++) {
        struct loop l = jb.l;
        struct js *j;
        int bOom;
        l.xTrainStep = kind == 2 && r > 0 ? NULL : hook_leak;
        l.resvPlanted = l.resvBackward = 0;
        l.zPlanted = zPlanted;
        x.nT = 0;
        x.bytes2 = 0;
        x.aT[0] = -1;
        j = job_open(a, &jb, &l, r);
        if (!j) return;
        x.site = js_site(j, kind == 1 ? "metrics.py:41:AUROC.update|train.py:77:train_one_epoch|" MAIN
                                      : "lib:torch/nn/functional.py:3494:cross_entropy|train.py:79:train_one_epoch|" MAIN);
        loop_epochs(a, &l, j, &bOom);
        if (bOom) fprintf(stderr, "accgen: leak_train ran out of memory\n");
        if (l.pageableShare > jb.l.pageableShare) jb.l.pageableShare = l.pageableShare;
        if (r == 0 || kind != 2) {
            if (loop_visible_train(a, &l, js_reserved(j))) bVis = 1;
            loop_resv_note(&l, j);
            jb.l.resvPlanted += l.resvPlanted;
            jb.l.resvBackward += l.resvBackward;
        }
        acc_end(a, j, l.bTeardown, l.bClean);
    }
    snprintf(zSite, sizeof zSite, "%s",
             kind == 0 ? (jb.bLm ? "model.py:149 in GPT.forward|" SITE_FWD : SITE_FWD)
             : kind == 1 ? "metrics.py:41 in AUROC.update"
                         : "train.py:79 in train_one_epoch");
    expect_loader(a, jb.l.pageableShare);
    zExp = v->mode == JS_SEGMENTS && !v->bHistory ? seg_leak_sites(a, &jb.l, zSite, zBoth, sizeof zBoth) : zSite;
    expect(a, "kept", "leak", zExp, growth_sev(grow), NULL, NULL, kind == 2 && v->ranks > 1 ? "0" : NULL,
           v->mode == JS_TENSORS || v->bHistory ? grow >= 32 * MiB : bVis, "leak growth at its call site", 0, NULL);
}

/*
 * A slow leak: a little kept every step (per-sample losses, a metric's state) over a longer run,
 * small next to each step's memory, large by the end.
 */
static void p_leak_slow(struct acc *a)
{
    const struct acc_variant *v;
    struct job jb;
    struct ctx x;
    struct js *j;
    int bOom, bVis;
    int64_t grow;
    char zSite[600], zBoth[700];
    const char *zExp; /* the site the finding must name (at segment level, where the segments were reserved) */
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    v = acc_variant(a);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.15, 0.4));
    x.k = 2;
    x.bytes = (int64_t)(64 << acc_draw(a, 5)) * 1024; /* 64 KiB to 1 MiB a step */
    jb.l.epochs = 1 + (int)acc_draw(a, 3);
    jb.l.iters = (120 + (int)acc_draw(a, 280)) / jb.l.epochs;
    jb.l.stride *= 8; /* fewer kernels per step in a longer run */
    if (jb.l.valIters > 3) jb.l.valIters = 3;
    if (acc_chance(a, 30) && jb.bLm) jb.l.varLen = 2 + (int)acc_draw(a, 8);
    grow = x.bytes * jb.l.iters * jb.l.epochs;
    acc_shape(a, "leak", "per-sample losses kept on the GPU (train.py:79): %lld KiB a step, %lld MiB over %d steps%s",
              (long long)(x.bytes >> 10), (long long)(grow / MiB), jb.l.iters * jb.l.epochs,
              jb.l.varLen > 1 ? ", lengths varying" : "");
    acc_describe(a, "A training loop that keeps a little of every step on the GPU (`history.append(loss_per_sample)`, "
                    "train.py:79): 64 KiB to 1 MiB a step, noise next to a step's memory, over a run of hundreds of "
                    "steps: the device's memory creeps up all run and a longer run ends at an OOM. Expected: a leak at "
                    "train.py:79 where the trace shows it (at tensor level from 32 MiB; at segment level when the "
                    "allocator had to reserve more), its severity by its size.");
    allow_state(a);
    jb.l.pCtx = &x;
    jb.l.xTrainStep = hook_leak;
    jb.l.zPlanted = "train.py:79:";
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, "lib:torch/nn/functional.py:3494:cross_entropy|train.py:79:train_one_epoch|" MAIN);
    loop_epochs(a, &jb.l, j, &bOom);
    if (bOom) fprintf(stderr, "accgen: leak_slow ran out of memory\n");
    bVis = loop_visible_train(a, &jb.l, js_reserved(j));
    loop_resv_note(&jb.l, j);
    acc_end(a, j, jb.l.bTeardown, jb.l.bClean);
    snprintf(zSite, sizeof zSite, "train.py:79 in train_one_epoch");
    expect_loader(a, jb.l.pageableShare);
    zExp = v->mode == JS_SEGMENTS && !v->bHistory ? seg_leak_sites(a, &jb.l, zSite, zBoth, sizeof zBoth) : zSite;
    expect(a, "kept", "leak", zExp, growth_sev(grow), NULL, NULL, NULL,
           v->mode == JS_TENSORS || v->bHistory ? grow >= 32 * MiB : bVis, "a slow leak over a longer run", 0, NULL);
}

/* The last step's outputs held through evaluation (a loop written inline in main()). */
static void p_retained_eval(struct acc *a)
{
    const struct acc_variant *v;
    struct job jb;
    draw_variant(a, M_ANY, P_N | P_P, 1);
    v = acc_variant(a);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.2, 0.45));
    jb.l.bKeepLastStep = 1;
    if (jb.l.valIters < 4) jb.l.valIters = 4 + (int)acc_draw(a, 6);
    acc_shape(a, "held", "the last step's logits, %lld MiB", (long long)(jb.l.m.a[jb.l.m.n - 1].act * jb.micro / MiB));
    acc_describe(a, "A training loop written inline in main(): after the loop, `outputs` (the last step's logits) "
                    "and `x` stay referenced while evaluation runs. Expected with tensor-level data (tensors or "
                    "PyTorch's history): a retained finding (held through evaluation) at the logits' site; at "
                    "segment level the held tensor sits inside a cached segment, so nothing is required.");
    expect(a, "last-step-held", "retained", "model.py:149 in GPT.forward|linear.py|" SITE_FWD,
           growth_sev(jb.l.m.a[jb.l.m.n - 1].act * jb.micro), "validation|evaluation", NULL, NULL,
           (v->mode == JS_TENSORS || v->bHistory) && jb.l.m.a[jb.l.m.n - 1].act * jb.micro >= 64 * MiB,
           "retained across a phase boundary", 0, NULL);
    loop_allow_also(a, "last-step-held", "validation_spike", "carried over", NULL);
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/* Evaluation that keeps each batch's graph or logits. */
static void hook_val_keep(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)j;
    (void)b;
    if (x->k == 0)
        for (int i = 0; i < l->m.n && x->nT < 4090; i++)
            if (f->saved[i] >= 0) x->aT[x->nT++] = f->saved[i];
    if (x->k == 0 && x->nT < 4096) x->aT[x->nT++] = f->loss;
    if (x->nT < 4096) x->aT[x->nT++] = f->out;
}

/* Run a job whose evaluation keeps each batch's graph (k 0) or logits (k 1); returns the growth per evaluation. */
static int64_t val_growth_job(struct acc *a, struct job *jb, struct ctx *x, int *pVis)
{
    const struct acc_variant *v = acc_variant(a);
    int64_t per = x->k == 0 ? est_sample(&jb->l.m) * jb->l.valBatch : jb->l.m.a[jb->l.m.n - 1].act * jb->l.valBatch;
    jb->l.bValGrad = x->k == 0;
    jb->l.bValKeepOut = 1;
    jb->l.xValBatch = hook_val_keep;
    jb->l.pCtx = x;
    *pVis = 0;
    for (int r = 0; r < v->ranks; r++) {
        struct loop l = jb->l;
        struct js *j;
        int bOom;
        x->nT = 0;
        j = job_open(a, jb, &l, r);
        if (!j) return 0;
        loop_epochs(a, &l, j, &bOom);
        if (loop_visible(a, l.growVal, js_reserved(j))) *pVis = 1;
        if (l.pageableShare > jb->l.pageableShare) jb->l.pageableShare = l.pageableShare;
        js_here(j, js_site(j, U_VAL(110)));
        for (int i = x->nT - 1; i >= 0; i--) js_free(j, x->aT[i]);
        acc_end(a, j, l.bTeardown, l.bClean);
    }
    expect_loader(a, jb->l.pageableShare);
    return per * jb->l.valIters;
}

/* Fit the evaluation so that what it keeps fits beside training: batch and number of batches. */
static void fit_val(struct acc *a, struct job *jb, int k)
{
    static const double aMult[] = {0.25, 0.5, 1, 2, 4};
    double mult = aMult[acc_draw(a, 5)];
    int64_t per;
    jb->l.valBatch = (int)(jb->micro * mult) > 0 ? (int)(jb->micro * mult) : 1;
    jb->l.valIters = 6 + (int)acc_draw(a, 10);
    per = k == 0 ? est_sample(&jb->l.m) * jb->l.valBatch : jb->l.m.a[jb->l.m.n - 1].act * jb->l.valBatch;
    while (jb->l.valIters > 3 && per * jb->l.valIters > (jb->g->total - CTX) / 3) jb->l.valIters--;
    while (jb->l.valBatch > 1 && per * jb->l.valIters > (jb->g->total - CTX) / 3) {
        jb->l.valBatch /= 2;
        per = k == 0 ? est_sample(&jb->l.m) * jb->l.valBatch : jb->l.m.a[jb->l.m.n - 1].act * jb->l.valBatch;
    }
    jb->l.valXBytes = jb->l.xBytes / jb->micro * jb->l.valBatch;
    jb->l.epochs = 1;
    acc_shape(a, "evaluation", "%d batches of %d (training: %d), keeping %s", jb->l.valIters, jb->l.valBatch, jb->micro,
              k == 0 ? "each batch's graph (no torch.no_grad())" : "each batch's logits");
}

static void p_eval_growth_tensor(struct acc *a)
{
    struct job jb;
    struct ctx x;
    int bVis;
    int64_t grow;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_T | M_H, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.15, 0.35));
    x.k = jb.bLm ? (int)acc_draw(a, 2) : 0;
    fit_val(a, &jb, x.k);
    acc_describe(a, "An evaluation that keeps every batch: without torch.no_grad() and with the losses summed as "
                    "tensors, each batch's graph and saved activations live until evaluation ends, or each batch's "
                    "logits are appended to a list. Memory grows batch by batch, whatever the evaluation batch is "
                    "next to training's. Expected, at tensor level: a validation_spike (growth) at the evaluation's "
                    "forward (or the logits' line) in the evaluation phase, medium or high, whose fix is no_grad "
                    "(or keeping results on the CPU).");
    loop_allow_also(a, "val-growth", "validation_spike", "peak", NULL);
    allow_state(a);
    grow = val_growth_job(a, &jb, &x, &bVis);
    expect(a, "val-growth", "validation_spike", x.k == 1 ? "model.py:149 in GPT.forward|" SITE_VFWD : "model.py:|" SITE_VFWD,
           growth_sev(grow), "validation|evaluation", NULL, NULL, 1, "growth inside an evaluation, tensor level", 0, NULL);
}

static void p_seg_growth_dup(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct acc_variant v;
    int bVis = 0;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_S, P_ANY, 1);
    v = *acc_variant(a);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.15, 0.4));
    if (acc_chance(a, 60)) { /* training keeps each step's outputs */
        int want = 30 + (int)acc_draw(a, 40);
        while (jb.micro > 1 && leak_steps(&jb, jb.l.m.a[jb.l.m.n - 1].act * jb.micro, want) < 20) set_micro(&jb, jb.micro / 2);
        jb.l.epochs = 1;
        jb.l.iters = leak_steps(&jb, jb.l.m.a[jb.l.m.n - 1].act * jb.micro, want);
        if (jb.l.iters < 12) jb.l.iters = 12;
        x.k = 0;
        x.nT = 0;
        jb.l.pCtx = &x;
        jb.l.xTrainStep = hook_leak;
        jb.l.zPlanted = "train.py:66:";
        acc_shape(a, "growth", "training keeps every step's outputs (%lld KiB each)",
                  (long long)(jb.l.m.a[jb.l.m.n - 1].act * jb.micro / 1024));
        acc_describe(a, "At segment level, a training loop that keeps each step's outputs: the kept tensors take the "
                        "cache's free blocks and the backward pass then reserves new segments, so the growth shows at "
                        "two call sites for one cause. Expected: one growth finding (where the trace shows the "
                        "allocator reserving more), at the line or at the backward pass attributed at segment level; "
                        "the same growth reported again at another site is a duplicate.");
        loop_allow_also(a, "seg-growth", "retained", NULL, NULL);
        loop_allow_also(a, "seg-growth", "validation_spike", "carried over", NULL);
        allow_state(a);
        job_all(a, &jb, &bVis, NULL);
        expect(a, "seg-growth", "leak", seg_site(loop_growth_site(a, &jb.l, jb.bLm ? "model.py:149 in GPT.forward|" SITE_FWD : SITE_FWD)),
               "medium|high", NULL, NULL, NULL, bVis, "one root cause, one finding (segment level)", 0, NULL);
    } else {
        int64_t grow;
        x.k = jb.bLm ? (int)acc_draw(a, 2) : 0;
        fit_val(a, &jb, x.k);
        acc_describe(a, "At segment level, an evaluation that keeps every batch's graph or logits: the cache grows "
                        "during each evaluation. Expected: one validation_spike (growth) where the trace shows the "
                        "allocator reserving more; the same growth reported again at another site is a duplicate.");
        loop_allow_also(a, "seg-growth", "validation_spike", "peak", NULL);
        allow_state(a);
        grow = val_growth_job(a, &jb, &x, &bVis);
        expect(a, "seg-growth", "validation_spike", x.k == 1 ? "model.py:149 in GPT.forward|" SITE_VFWD : "model.py:|" SITE_VFWD,
               growth_sev(grow), "validation|evaluation", NULL, NULL, bVis, "one root cause, one finding (segment level)", 0,
               NULL);
    }
    (void)v;
}

/* An evaluation without no_grad whose losses are kept as tensors (each batch's graph with them), freed when it returns. */
static void hook_val_losses(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)j;
    (void)b;
    for (int i = 0; i < l->m.n && x->nT < 4090; i++)
        if (f->saved[i] >= 0) x->aT[x->nT++] = f->saved[i];
    if (x->nT < 4096) x->aT[x->nT++] = f->loss;
}

static void hook_val_losses_end(struct loop *l, struct js *j, int n, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)n;
    (void)f;
    js_here(j, js_site(j, U_VAL(110)));
    for (int i = x->nT - 1; i >= 0; i--) js_free(j, x->aT[i]);
    x->nT = 0;
}

static void p_eval_graph_kept(struct acc *a)
{
    const struct acc_variant *v;
    struct job jb;
    struct ctx x;
    struct js *j;
    int bOom, bVis;
    int64_t per, grow;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    v = acc_variant(a);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.15, 0.35));
    fit_val(a, &jb, 0);
    jb.l.epochs = 1 + (int)acc_draw(a, 3);
    jb.l.iters = (12 + (int)acc_draw(a, 24)) / jb.l.epochs;
    per = est_sample(&jb.l.m) * jb.l.valBatch;
    grow = per * jb.l.valIters;
    jb.l.bValGrad = 1;
    jb.l.xValBatch = hook_val_losses;
    jb.l.xValEnd = hook_val_losses_end;
    jb.l.pCtx = &x;
    acc_describe(a, "An evaluation that forgot torch.no_grad() and collects its losses as tensors "
                    "(`losses.append(criterion(model(x), y))`, `torch.stack(losses).mean()` at the end): every "
                    "batch's graph and saved activations stay alive until evaluate() returns, every evaluation, "
                    "over one to three epochs. Expected: a validation_spike (growth) at the evaluation's forward "
                    "in the evaluation phase, where the trace shows it (at segment level only when the allocator "
                    "had to reserve more), whose fix is no_grad.");
    loop_allow_also(a, "val-graph", "validation_spike", "peak", NULL);
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    loop_epochs(a, &jb.l, j, &bOom);
    bVis = loop_visible(a, jb.l.growVal, js_reserved(j));
    expect_loader(a, jb.l.pageableShare);
    acc_end(a, j, 1, 1);
    expect(a, "val-graph", "validation_spike", "model.py:|" SITE_VFWD, growth_sev(grow), "validation|evaluation", NULL,
           NULL, v->mode == JS_TENSORS || v->bHistory ? grow >= 32 * MiB : bVis,
           "an evaluation without no_grad keeping its graphs", 0, NULL);
}

/* all_logits = torch.cat([all_logits, logits]): one buffer reallocated larger each evaluation batch. */
static void hook_val_cat(struct loop *l, struct js *j, int b, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    int c;
    (void)b;
    x->n++;
    c = js_alloc(j, x->bytes * x->n, x->site, JS_NAT_ALLOC);
    if (c < 0) return;
    {
        int aT[3] = {x->at, f->out, c};
        js_launch(j, 0, aT, 3);
    }
    js_here(j, js_site(j, U_VAL(109)));
    js_free(j, x->at);
    x->at = c;
}

static void hook_val_cat_end(struct loop *l, struct js *j, int n, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)n;
    (void)f;
    pt_item(j, x->at, U_VAL(112)); /* metric(all_logits, all_labels).item() */
    js_here(j, js_site(j, U_VAL(113)));
    js_free(j, x->at);
    x->at = -1;
    x->n = 0;
}

static void p_eval_cat_logits(struct acc *a)
{
    const struct acc_variant *v;
    struct job jb;
    struct ctx x;
    struct js *j;
    int bOom, bVis;
    int64_t grow;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    v = acc_variant(a);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.15, 0.35));
    fit_val(a, &jb, 1);
    jb.l.valIters = 6 + (int)acc_draw(a, 20);
    x.bytes = jb.l.m.a[jb.l.m.n - 1].act * jb.l.valBatch;
    /* the old buffer and the new one at once: the last batch needs twice what was gathered */
    while (jb.l.valIters > 4 && 2 * x.bytes * jb.l.valIters > (jb.g->total - CTX) / 3) jb.l.valIters--;
    grow = x.bytes * jb.l.valIters;
    x.at = -1;
    jb.l.xValBatch = hook_val_cat;
    jb.l.xValEnd = hook_val_cat_end;
    jb.l.pCtx = &x;
    acc_shape(a, "gathered", "%d evaluation batches of %d, %lld KiB of logits each, gathered with torch.cat",
              jb.l.valIters, jb.l.valBatch, (long long)(x.bytes >> 10));
    acc_describe(a, "An evaluation under torch.no_grad() that gathers every batch's logits on the GPU with "
                    "`all_logits = torch.cat([all_logits, logits])` (train.py:109) to score them at the end: one "
                    "buffer reallocated larger every batch, the whole evaluation set's logits by the end. Expected: "
                    "a validation_spike (growth) at that line in the evaluation phase, where the trace shows it "
                    "(tensor level from 32 MiB; at segment level only when the allocator had to reserve more).");
    loop_allow_also(a, "val-cat", "validation_spike", "peak", NULL);
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, U_VAL(109));
    loop_epochs(a, &jb.l, j, &bOom);
    bVis = loop_visible(a, jb.l.growVal, js_reserved(j));
    expect_loader(a, jb.l.pageableShare);
    acc_end(a, j, 1, 1);
    expect(a, "val-cat", "validation_spike", "train.py:109 in evaluate", growth_sev(grow), "validation|evaluation", NULL,
           NULL, v->mode == JS_TENSORS || v->bHistory ? grow >= 32 * MiB : bVis,
           "logits gathered on the GPU with torch.cat across an evaluation", 0, NULL);
}

/* ---- other inputs: PyTorch's snapshot, the same process twice, torch.profiler traces ---- */

static void p_snapshot_iters(struct acc *a)
{
    struct acc_variant v;
    struct job jb;
    struct ctx x;
    struct js *j;
    int bLeak, bMarks, nStep, bOom;
    char zIn[300];
    memset(&x, 0, sizeof x);
    memset(&v, 0, sizeof v);
    v.mode = JS_SEGMENTS;
    v.bHistory = 1;
    v.nvtx = ACC_NVTX_NONE;
    v.ranks = 1;
    acc_set_variant(a, &v);
    acc_shape(a, "level", "a PyTorch memory snapshot alone");
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.1, 0.3));
    bLeak = acc_chance(a, 50);
    bMarks = acc_chance(a, 70);
    nStep = bLeak ? 5 + (int)acc_draw(a, 6) : 3 + (int)acc_draw(a, 8);
    jb.l.accum = 1;
    set_micro(&jb, jb.micro);
    while (bLeak && jb.micro > 1 && leak_steps(&jb, jb.l.m.a[jb.l.m.n - 1].act * jb.micro, nStep) < nStep)
        set_micro(&jb, jb.micro / 2);
    jb.l.epochs = 1;
    jb.l.iters = nStep;
    jb.l.valIters = 0;
    jb.l.bNoRecordFunction = !bMarks;
    if (bLeak) {
        x.k = 0;
        jb.l.pCtx = &x;
        jb.l.xTrainStep = hook_leak;
    }
    acc_shape(a, "steps", "%d forward + backward + optimizer steps, %s", nStep,
              bMarks ? "each optimizer.step() annotated (Optimizer.step#AdamW.step)" : "no annotations (a plain optimizer)");
    acc_shape(a, "leak", "%s", bLeak ? "every step's outputs kept" : "none");
    acc_describe(a, "A memory snapshot (`torch.cuda.memory._dump_snapshot`) of a few training steps of a small "
                    "transformer, as course assignments and profiling scripts make: the allocation history with "
                    "Python frames, dumped at the end with the model's state live. The optimizer's record_function "
                    "annotations mark each step where the optimizer has them; the steps' allocations rise and fall "
                    "once per step either way. Expected: as many iterations as steps; a leak at the kept outputs' "
                    "line where the loop keeps them; otherwise nothing at severity low or above.");
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    loop_epochs(a, &jb.l, j, &bOom);
    snprintf(zIn, sizeof zIn, "%s", ptrec_snapshot_name(acc_recorder(a, 0)));
    acc_end(a, j, 0, 1); /* dumped by the script with everything live */
    acc_inputs(a, zIn);
    {
        struct acc_fact f = {"iterations", 0, nStep, bMarks ? 0 : 1, "iterations from real markers and alloc/free cycles"};
        acc_fact(a, &f);
    }
    if (bLeak)
        expect(a, "kept", "leak", jb.bLm ? "model.py:149 in GPT.forward|" SITE_FWD : SITE_FWD,
               growth_sev(jb.l.m.a[jb.l.m.n - 1].act * jb.micro * nStep), NULL, NULL, NULL, 1,
               "leak in a snapshot with marked steps", 0, NULL);
}

/* Copy file zFrom to zTo; 0 or -1. */
static int copy_file(const char *zFrom, const char *zTo)
{
    FILE *f = fopen(zFrom, "rb"), *g = f ? fopen(zTo, "wb") : NULL;
    char buf[65536];
    size_t n;
    int rc = 0;
    if (!f || !g) rc = -1;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, f)) > 0)
        if (fwrite(buf, 1, n, g) != n) rc = -1;
    if (f) fclose(f);
    if (g && fclose(g) != 0) rc = -1;
    return rc;
}

static void p_same_process_twice(struct acc *a)
{
    struct job jb;
    struct ctx x;
    int bLeak, bCopy, aProc[2] = {0, 0};
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.45));
    bLeak = acc_chance(a, 50);
    bCopy = acc_chance(a, 50);
    jb.l.epochs = 1;
    jb.l.iters = 20 + (int)acc_draw(a, 20);
    if (bLeak) {
        x.k = 2;
        x.bytes = (int64_t)(4 + acc_draw(a, 12)) * MiB;
        jb.l.pCtx = &x;
        jb.l.xTrainStep = hook_leak;
    }
    acc_shape(a, "given", "%s", bCopy ? "the trace and a copy of it (same host, pid and start)" : "the same file twice");
    acc_shape(a, "leak", "%s", bLeak ? "per-sample losses kept (train.py:79)" : "none");
    acc_describe(a, "One process's trace given twice to analyze, as the same file twice (a shell glob that matched "
                    "it twice) or as a copy of it: one process, counted once. Expected: what the trace alone "
                    "deserves, reported once (a leak at train.py:79 where the loop keeps per-sample losses, else "
                    "nothing), and device peaks summed once.");
    allow_state(a);
    {
        struct js *j = job_open(a, &jb, &jb.l, 0);
        int bOom;
        if (!j) return;
        x.site = js_site(j, "lib:torch/nn/functional.py:3494:cross_entropy|train.py:79:train_one_epoch|" MAIN);
        loop_epochs(a, &jb.l, j, &bOom);
        expect_loader(a, jb.l.pageableShare);
        acc_end(a, j, 1, 1);
    }
    if (bCopy) {
        char zFrom[1200], zTo[1200];
        snprintf(zFrom, sizeof zFrom, "%s/rank0.db", acc_dir(a));
        snprintf(zTo, sizeof zTo, "%s/rank0-copy.db", acc_dir(a));
        if (copy_file(zFrom, zTo) != 0) fprintf(stderr, "accgen: cannot copy %s\n", zFrom);
        acc_inputs(a, "rank0.db|rank0-copy.db");
    } else {
        acc_inputs(a, "rank0.db|rank0.db");
    }
    acc_same_process(a, aProc, 2);
    {
        struct acc_fact f = {"counted_once", 0, 0, 0.01, "the same process given twice"};
        acc_fact(a, &f);
    }
    if (bLeak) /* at segment level, the baseline's attribution or the segments' site: the line or the backward pass */
        expect(a, "kept", "leak",
               acc_variant(a)->mode == JS_SEGMENTS && !acc_variant(a)->bHistory
                   ? "train.py:79 in train_one_epoch|(attribution at segment level)|backward pass: autograd thread"
                   : "train.py:79 in train_one_epoch|(attribution at segment level)",
               growth_sev(x.bytes * jb.l.iters), NULL, NULL, NULL, acc_variant(a)->mode == JS_TENSORS || acc_variant(a)->bHistory,
               "the same process twice: one finding", 1, NULL);
}

/* torch.profiler's schedule: the window opens before iteration x->at and closes before x->at + x->n. */
static void hook_window(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)f;
    if (it == x->at) ptrec_window(acc_recorder(x->a, 0), j, 1);
    if (it == x->at + x->n) ptrec_window(acc_recorder(x->a, 0), j, 0);
}

/* A job profiled with torch.profiler for a window of steps (x->at, x->n): the trace analyzed is the profiler's. */
static void kineto_job(struct acc *a, struct job *jb, struct ctx *x, int flags, int bCat)
{
    struct js *j;
    struct acc_variant v;
    int bOom;
    int64_t peakAlloc, peakResv;
    memset(&v, 0, sizeof v);
    v.mode = JS_SEGMENTS;
    v.nvtx = ACC_NVTX_PROFILER;
    v.ranks = 1;
    acc_set_variant(a, &v);
    acc_record(a, PTREC_KINETO | flags);
    x->a = a;
    jb->l.xIterStart = hook_window;
    jb->l.pCtx = x;
    jb->l.bPinned = 1;
    jb->l.epochs = 1;
    jb->l.iters = x->at + x->n + 1;
    jb->l.valIters = 0;
    j = job_open(a, jb, &jb->l, 0);
    if (!j) return;
    if (bCat) {
        x->site = js_site(j, "metrics.py:41:AUROC.update|train.py:77:train_one_epoch|" MAIN);
        ptrec_op_hint(acc_recorder(a, 0), x->site, "aten::cat");
    }
    loop_epochs(a, &jb->l, j, &bOom);
    peakAlloc = ptrec_window_peak_allocated(acc_recorder(a, 0));
    peakResv = ptrec_window_peak_reserved(acc_recorder(a, 0));
    acc_end(a, j, 1, 1);
    acc_inputs(a, "rank0.pt.trace.json");
    if (!(flags & PTREC_NO_ADDR)) {
        struct acc_fact f1 = {"peak_allocated", 0, peakAlloc, 0.02, "the headline peak of an import is the process's"};
        struct acc_fact f2 = {"peak_reserved", 0, peakResv, 0.02, "the headline peak of an import is the process's"};
        acc_fact(a, &f1);
        acc_fact(a, &f2);
    } else {
        struct acc_fact f = {"phase_peak_known", 0, 0, 0, "the importer's running-sum peak in the phase table"};
        acc_fact(a, &f);
    }
}

static void p_kineto_window_peak(struct acc *a)
{
    struct job jb;
    struct ctx x;
    int bNoAddr, bStack;
    memset(&x, 0, sizeof x);
    acc_shape(a, "level", "a torch.profiler trace alone");
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.6));
    bNoAddr = acc_chance(a, 20);
    bStack = acc_chance(a, 60);
    x.at = 2 + (int)acc_draw(a, 12);
    x.n = 3 + (int)acc_draw(a, 6);
    acc_shape(a, "profiler", "steps %d to %d, %s, %s", x.at, x.at + x.n - 1, bNoAddr ? "[memory] without Addr (before 1.11)" : "profile_memory",
              bStack ? "with_stack" : "no stacks");
    acc_describe(a, "A torch.profiler trace (profile_memory=True) of a few steps in the middle of a training run: the "
                    "weights, optimizer state and the allocator's cache were allocated before the window, so the "
                    "window's own allocations are a fraction of what the process held. Expected: nothing at severity "
                    "low or above; the headline peak is the process's allocated peak (Total Allocated) and its reserved "
                    "peak (Total Reserved), not the window's own; with old events (no Addr) the phase table shows the "
                    "importer's peak.");
    allow_state(a);
    kineto_job(a, &jb, &x, (bNoAddr ? PTREC_NO_ADDR : 0) | (bStack ? 0 : PTREC_NO_STACK), 0);
}

static void p_kineto_op_sites(struct acc *a)
{
    struct job jb;
    struct ctx x;
    int bCat;
    int64_t grow;
    memset(&x, 0, sizeof x);
    acc_shape(a, "level", "a torch.profiler trace alone");
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.45));
    bCat = acc_chance(a, 50);
    x.at = 1 + (int)acc_draw(a, 4);
    x.n = 6 + (int)acc_draw(a, 8);
    x.k = bCat ? 1 : 0;
    x.aT[0] = -1;
    x.bytes = (int64_t)(2 + acc_draw(a, 8)) * MiB;
    while (!bCat && jb.micro > 1 && leak_steps(&jb, jb.l.m.a[jb.l.m.n - 1].act * jb.micro, x.n) < x.n)
        set_micro(&jb, jb.micro / 2);
    if (!bCat && jb.l.m.a[jb.l.m.n - 1].act * jb.micro * x.n < 32 * MiB) { /* outputs too small to matter: the metric buffer */
        bCat = 1;
        x.k = 1;
    }
    jb.l.xTrainStep = hook_leak;
    grow = bCat ? x.bytes * x.n : jb.l.m.a[jb.l.m.n - 1].act * jb.micro * x.n;
    acc_shape(a, "profiler", "steps %d to %d with python stacks", x.at, x.at + x.n - 1);
    acc_shape(a, "leak", "%s", bCat ? "a metric buffer grown with torch.cat (metrics.py:41, aten::cat)" : "every step's outputs kept");
    acc_describe(a, "A torch.profiler trace (profile_memory=True, with_stack=True) of a training loop that keeps "
                    "something of every step: each [memory] event lies inside the operator that allocated it "
                    "(aten::cat, aten::addmm) and under the Python frames of the call. Expected: a leak whose site "
                    "is that operator's Python line (metrics.py:41, or the model's output line), not 'site not "
                    "recorded'.");
    allow_state(a);
    kineto_job(a, &jb, &x, 0, bCat);
    /* the model's output line: GPT's head (model.py:149), or ResNet's fc call in torchvision (resnet.py:276, the
     * innermost frame outside torch of its [memory] events' operator), or the loop's call of the model */
    expect(a, "kept", "leak", bCat ? "metrics.py:41|aten::cat" : jb.bLm ? "model.py:149|train.py:66" : "resnet.py:276|train.py:66",
           growth_sev(grow), NULL, NULL, NULL,
           1, "torch.profiler sites from cpu_op and python_function", 0, NULL);
}

/* ---- ninth round: sharded weights, compiled shapes, logging, servers, accumulation ---- */

/* A training process of loop l on rank r opened without loop_open's model copy and DDP (the family places the weights). */
static struct js *open_bare(struct acc *a, struct job *jb, int rank, const char *zCmd)
{
    struct js_cfg c = jb->c;
    c.zTemplate = jb->l.zTemplate;
    c.kernelStride = jb->l.stride;
    c.timeScale = jb->l.timeScale * jb->l.stride;
    c.zCmd = zCmd;
    if (rank == 0) shape_loop(a, jb);
    return acc_process(a, rank, &c);
}

#define FSDP_UNSHARD "lib:torch/distributed/fsdp/_flat_param.py:1467:FlatParamHandle._alloc_padded_unsharded_flat_param|" \
    "lib:torch/distributed/fsdp/_flat_param.py:1398:FlatParamHandle.unshard|lib:torch/distributed/fsdp/_runtime_utils.py:332:_unshard|"
#define FSDP_FWD "lib:torch/distributed/fsdp/_runtime_utils.py:505:_pre_forward_unshard|" \
    "lib:torch/distributed/fsdp/_runtime_utils.py:482:_pre_forward|" \
    "lib:torch/distributed/fsdp/fully_sharded_data_parallel.py:848:FullyShardedDataParallel.forward|" CALL "|"

/*
 * FSDP (FULL_SHARD) on 2 or 4 ranks: each rank keeps its shard of every unit's weights, gradients
 * and Adam's state; a unit's full weights are all-gathered before its forward and freed after it
 * (reshard_after_forward), gathered again by the backward's pre-hook, its full gradient
 * reduce-scattered into the shard and freed: a sawtooth of whole units inside every step.
 */
static void lk_fsdp_shards(struct acc *a)
{
    struct job jb;
    struct acc_variant v;
    int nUnit, world;
    draw_variant(a, M_ANY, P_ANY, 1);
    v = *acc_variant(a);
    v.ranks = acc_chance(a, 50) ? 2 : 4;
    acc_set_variant(a, &v);
    world = v.ranks;
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.2, 0.6));
    jb.l.accum = 1;
    set_micro(&jb, jb.micro);
    jb.l.epochs = 1;
    jb.l.iters = 12 + (int)acc_draw(a, 20);
    jb.l.valIters = 0;
    jb.l.ncclBytes = (int64_t)(128 + acc_draw(a, 896)) * MiB;
    nUnit = 4 + (int)acc_draw(a, 9);
    if (nUnit > jb.l.m.n) nUnit = jb.l.m.n;
    acc_shape(a, "fsdp", "FULL_SHARD on %d ranks, %d units, reshard after forward", world, nUnit);
    acc_describe(a, "FullyShardedDataParallel (FULL_SHARD) training: each rank keeps a shard of the weights, "
                    "gradients and optimizer state; every unit's full weights are all-gathered before its forward "
                    "and freed after it, gathered again in the backward, and its full gradient is reduce-scattered "
                    "into the shard and freed. A large sawtooth inside each step that comes back to the same floor. "
                    "Expected: nothing at severity low or above on any rank.");
    allow_state(a);
    for (int r = 0; r < world; r++) {
        struct pt_model *m = &jb.l.m;
        struct js *j;
        int aLo[16], aHi[16], aShard[16], aGrad[16], aSt[2][16], siteShard, siteGather, siteAct, siteState, siteLoss;
        int64_t aW[16];
        int bState = 0;
        j = open_bare(a, &jb, r, "torchrun --nproc-per-node 4 train_fsdp.py");
        if (!j) return;
        siteShard = js_site(j, "lib:torch/distributed/fsdp/_flat_param.py:789:FlatParamHandle.shard|"
                               "lib:torch/distributed/fsdp/_init_utils.py:598:_init_param_handle_from_module|"
                               "lib:torch/distributed/fsdp/fully_sharded_data_parallel.py:485:FullyShardedDataParallel.__init__|" U_DDP);
        siteGather = js_site(j, FSDP_UNSHARD FSDP_FWD "model.py:146:GPT.forward|" CALL "|" U_TRAIN(66));
        siteAct = js_site(j, "model.py:121:Block.forward|" CALL "|" FSDP_FWD "model.py:146:GPT.forward|" CALL "|" U_TRAIN(66));
        siteLoss = js_site(j, "lib:torch/nn/functional.py:3494:cross_entropy|" U_TRAIN(67));
        siteState = js_site(j, "lib:torch/optim/adam.py:165:Adam._init_group|lib:torch/optim/adam.py:247:Adam.step|" U_TRAIN(72));
        js_here(j, siteShard);
        for (int u = 0; u < nUnit; u++) {
            aLo[u] = u * m->n / nUnit;
            aHi[u] = (u + 1) * m->n / nUnit;
            aW[u] = 0;
            for (int i = aLo[u]; i < aHi[u]; i++) aW[u] += m->a[i].w;
            if (aW[u] < world * 4096) aW[u] = world * 4096;
            aShard[u] = js_alloc(j, aW[u] / world, siteShard, JS_NAT_ALLOC);
            js_h2d(j, aShard[u], aW[u] / world, JS_PAGEABLE, 0, siteShard);
            aGrad[u] = aSt[0][u] = aSt[1][u] = -1;
        }
        js_nccl_init(j, 6, jb.l.ncclBytes / 6);
        loop_push(a, j, ACC_NVTX_NAMES, "train", 0);
        for (int it = 0; it < jb.l.iters; it++) {
            int saved[PT_MAXL], x, cur, out, loss, gOut, full;
            loop_push(a, j, ACC_NVTX_NAMES, "iter %d", it);
            loop_push(a, j, ACC_NVTX_PROFILER, "ProfilerStep#%d", it);
            js_here(j, js_site(j, U_TRAIN(63)));
            for (int u = 0; u < nUnit; u++) /* zero_grad(set_to_none=True) */
                if (aGrad[u] >= 0) {
                    js_free(j, aGrad[u]);
                    aGrad[u] = -1;
                }
            js_cpu(j, jb.l.cpuPerStep);
            x = loop_next_batch(&jb.l, j, jb.l.xBytes, it, U_TRAIN(61));
            cur = x;
            for (int u = 0; u < nUnit; u++) { /* forward: gather, run the unit, reshard */
                int aC[2];
                full = js_alloc(j, aW[u], siteGather, JS_NAT_ALLOC);
                aC[0] = full;
                aC[1] = aShard[u];
                js_play(j, 'C', u, nUnit * 2, aC, 2);
                for (int i = aLo[u]; i < aHi[u]; i++) {
                    int aT[3];
                    out = js_alloc(j, m->a[i].act * jb.micro, siteAct, JS_NAT_ALLOC);
                    aT[0] = cur;
                    aT[1] = full;
                    aT[2] = out;
                    js_play(j, 'F', i, m->n + 1, aT, 3);
                    saved[i] = cur;
                    cur = out;
                }
                js_here(j, siteGather);
                js_free(j, full);
            }
            loss = js_alloc(j, 4, siteLoss, JS_NAT_ALLOC);
            {
                int aT[2] = {cur, loss};
                js_play(j, 'F', m->n, m->n + 1, aT, 2);
            }
            gOut = js_alloc(j, m->a[m->n - 1].act * jb.micro, js_site(j, ""), JS_NAT_BACKWARD);
            for (int u = nUnit - 1; u >= 0; u--) { /* backward: gather again, gradients, reduce-scatter */
                int gFull, aC[2], site0 = js_site(j, "");
                full = js_alloc(j, aW[u], site0, JS_NAT_BACKWARD);
                gFull = js_alloc(j, aW[u], site0, JS_NAT_ACCGRAD);
                for (int i = aHi[u] - 1; i >= aLo[u]; i--) {
                    int gIn = js_alloc(j, i > 0 ? m->a[i - 1].act * jb.micro : 4096, site0, JS_NAT_BACKWARD);
                    int aT[5] = {gOut, saved[i], full, gFull, gIn};
                    js_play(j, 'B', m->n - i, m->n + 1, aT, 5);
                    js_free(j, saved[i]);
                    js_free(j, gOut);
                    gOut = gIn;
                }
                if (aGrad[u] < 0) aGrad[u] = js_alloc(j, aW[u] / world, site0, JS_NAT_ACCGRAD);
                aC[0] = gFull;
                aC[1] = aGrad[u];
                js_play(j, 'C', nUnit + u, nUnit * 2, aC, 2);
                js_free(j, gFull);
                js_free(j, full);
            }
            js_free(j, gOut);
            js_here(j, js_site(j, U_TRAIN(72)));
            for (int u = 0; u < nUnit; u++) {
                int aT[4];
                if (!bState)
                    for (int k = 0; k < 2; k++) aSt[k][u] = js_alloc(j, aW[u] / world, siteState, JS_NAT_ALLOC);
                aT[0] = aShard[u];
                aT[1] = aGrad[u];
                aT[2] = aSt[0][u];
                aT[3] = aSt[1][u];
                js_play(j, 'O', u, nUnit, aT, 4);
            }
            bState = 1;
            pt_item(j, loss, U_TRAIN(75));
            js_here(j, js_site(j, U_TRAIN(67)));
            js_free(j, loss);
            js_free(j, cur);
            loop_pop(a, j, ACC_NVTX_PROFILER);
            loop_pop(a, j, ACC_NVTX_NAMES);
        }
        loop_pop(a, j, ACC_NVTX_NAMES);
        js_sync(j);
        acc_end(a, j, 1, 1);
    }
}

/*
 * torch.compile(mode="reduce-overhead") on inputs padded to a few length buckets: the first step
 * of each new length compiles and runs eagerly, then records a CUDA graph whose memory comes from
 * the graphs' shared private pool; later steps of a length replay its graph. The pool grows while
 * new lengths appear, in the first part of the run, then stays.
 */
static void lk_compile_shapes(struct acc *a)
{
    struct job jb;
    struct js *j;
    int nBucket, nStep, aFirst[8], aSeen[8] = {0}, nSeen = 0, aXs[8], siteStatic, siteCopy, unitsMax;
    struct pt_fwd aF[8];
    draw_variant(a, M_S | M_H, P_N | P_X, 1);
    draw_job(a, &jb, K_LM, 0.0, acc_drawf(a, 0.2, 0.45));
    jb.l.accum = 1;
    set_micro(&jb, jb.micro);
    jb.l.bZeroNone = 0; /* graphs keep gradients in place */
    jb.l.bZeroLast = 0;
    jb.l.bPinned = 1;
    nBucket = 2 + (int)acc_draw(a, 5);
    nStep = 16 + (int)acc_draw(a, 20);
    unitsMax = nBucket;
    aFirst[0] = 0;
    for (int b = 1; b < nBucket; b++) aFirst[b] = 1 + (int)acc_draw(a, (uint64_t)(nStep * 2 / 5));
    for (int b = 1; b < nBucket; b++) /* the order lengths appear in: bucket b's length is (b + 1) / nBucket of the longest */
        for (int k = b; k > 1 && aFirst[k] < aFirst[k - 1]; k--) {
            int t = aFirst[k];
            aFirst[k] = aFirst[k - 1];
            aFirst[k - 1] = t;
        }
    {
        int perm = (int)acc_draw(a, 2); /* lengths appearing shortest first, or in a random order */
        if (perm) {
            int aB[8];
            for (int b = 0; b < nBucket; b++) aB[b] = aFirst[b];
            for (int b = nBucket - 1; b > 0; b--) {
                int k = (int)acc_draw(a, (uint64_t)b + 1), t = aB[b];
                aB[b] = aB[k];
                aB[k] = t;
            }
            for (int b = 0; b < nBucket; b++) aFirst[b] = aB[b];
        }
    }
    {
        int last = 0;
        for (int b = 0; b < nBucket; b++) last = aFirst[b] > last ? aFirst[b] : last;
        acc_shape(a, "compile", "reduce-overhead, %d length buckets, the last new one at step %d of %d", nBucket, last, nStep);
    }
    acc_describe(a, "Training a model compiled with torch.compile(mode=\"reduce-overhead\") on batches padded to a few "
                    "length buckets: the first step of each new length compiles, runs eagerly and records a CUDA graph "
                    "from the graphs' private memory pool; every later step of that length replays its graph. The pool "
                    "grows while new lengths appear, early in the run, then stays: warm-up, not a leak. Expected: "
                    "nothing at severity low or above.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    siteStatic = js_site(j, "gen:/tmp/torchinductor_user/cudagraph_trees.py:2031:CUDAGraphTreeManager.record|"
                            "lib:torch/_inductor/cudagraph_trees.py:662:CUDAWarmupNode.run|" U_TRAIN(66));
    siteCopy = js_site(j, U_TRAIN(61));
    loop_push(a, j, ACC_NVTX_NAMES, "train", 0);
    for (int t = 0; t < nStep; t++) {
        int b = -1, pin;
        int64_t xb;
        for (int k = 0; k < nBucket; k++)
            if (aFirst[k] == t && !aSeen[k]) b = k;
        if (b < 0) { /* a length already seen */
            int n = (int)js_rand(j, (uint64_t)nSeen), k = 0;
            for (b = 0; b < nBucket; b++)
                if (aSeen[b] && k++ == n) break;
        }
        xb = jb.l.xBytes * (b + 1) / unitsMax;
        if (!aSeen[b]) { /* compile: an eager step of the new length, then the graph recorded */
            struct loop l2 = jb.l;
            l2.batch = jb.micro * (b + 1) / unitsMax > 0 ? jb.micro * (b + 1) / unitsMax : 1;
            l2.xBytes = xb;
            loop_train_iter(a, &l2, j, t);
            js_free(j, l2.lastX);
            js_free(j, l2.lastOut);
            js_sync(j);
            js_graph_capture(j, 1);
            aXs[b] = js_alloc(j, xb, siteStatic, JS_NAT_ALLOC);
            js_here(j, siteStatic);
            aF[b] = pt_forward(j, &jb.l.m, aXs[b], l2.batch, 1, 1, "lib:torch/_inductor/cudagraph_trees.py:1011:CUDAGraphNode._record|" U_TRAIN(66));
            pt_backward(j, &jb.l.m, &aF[b], l2.batch, NULL, 0);
            pt_step(j, &jb.l.m, U_TRAIN(72));
            js_graph_capture(j, 0);
            aSeen[b] = 1;
            nSeen++;
            continue;
        }
        pin = js_pin_alloc(j, xb, js_site(j, "lib:torch/utils/data/_utils/pin_memory.py:90:pin_memory"));
        loop_push(a, j, ACC_NVTX_NAMES, "iter %d", t);
        loop_push(a, j, ACC_NVTX_PROFILER, "ProfilerStep#%d", t);
        js_cpu(j, jb.l.cpuPerStep);
        js_h2d(j, aXs[b], xb, JS_PINNED, js_pin_addr(j, pin), siteCopy);
        js_graph_launch(j, "FBOZ");
        pt_item(j, aF[b].loss, U_TRAIN(75));
        loop_pop(a, j, ACC_NVTX_PROFILER);
        loop_pop(a, j, ACC_NVTX_NAMES);
        js_pin_free(j, pin);
    }
    loop_pop(a, j, ACC_NVTX_NAMES);
    js_sync(j);
    acc_end(a, j, 1, 1);
}

/* Logging every step: x->k metrics reduced on the GPU and read with .item() / .cpu() (x->bytes each). */
static void hook_log_items(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)it;
    (void)f;
    for (int k = 0; k < x->k; k++) {
        int t = js_alloc(j, x->bytes, x->site, JS_NAT_ALLOC), aT[2] = {l->lastOut, t};
        js_launch_named(j, "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, "
                           "float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, "
                           "float, float, float>, unsigned int, float, 4>)",
                        20000, aT, 2);
        js_d2h(j, t, x->bytes, x->site2);
        js_here(j, x->site2);
        js_free(j, t);
    }
}

/*
 * Training that logs 3 to 16 metrics every step (loss, accuracy, grad norm, learning rate ...),
 * each reduced on the GPU and read to the host with .item() or .cpu(): many small synchronizing
 * device-to-host copies of a few bytes, a negligible share of the step.
 */
static void lk_log_sync(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int bOom;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.6));
    jb.l.bPinned = 1;
    x.k = 3 + (int)acc_draw(a, 14);
    x.bytes = (int64_t)4 << acc_draw(a, 10);
    jb.l.pCtx = &x;
    jb.l.xTrainStep = hook_log_items;
    acc_shape(a, "logging", "%d metrics of %lld bytes read to the host every step", x.k, (long long)x.bytes);
    acc_describe(a, "Training that logs several metrics every step (`logger.log({k: v.item()})`, train.py:86): each is "
                    "reduced on the GPU and copied to the host, a synchronizing copy of a few bytes. The copies are "
                    "tiny and the waits are the step's own compute finishing. Expected: nothing at severity low or "
                    "above.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, "lib:torch/_tensor.py:41:Tensor.mean|metrics.py:18:compute_metrics|train.py:85:train_one_epoch|" MAIN);
    x.site2 = js_site(j, "train.py:86:train_one_epoch|" MAIN);
    loop_epochs(a, &jb.l, j, &bOom);
    acc_end(a, j, jb.l.bTeardown, jb.l.bClean);
}

/* Copies each step's outputs to the host for metrics on the CPU (x->bytes as float32, pageable). */
static void hook_log_outputs(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    int t = js_alloc(j, x->bytes, x->site, JS_NAT_ALLOC), aT[2] = {l->lastOut, t};
    (void)it;
    (void)f;
    if (t < 0) return;
    js_launch_named(j, "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::copy_kernel"
                       "(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(c10::BFloat16)#1}, "
                       "at::detail::Array<char*, 2> >(int, {lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
                    100000, aT, 2);
    js_d2h(j, t, x->bytes, x->site2);
    js_here(j, x->site2);
    js_free(j, t);
}

/*
 * Training that copies every step's outputs to the host (`preds.append(outputs.float().cpu())`,
 * train.py:86) for a metric computed with NumPy: a blocking device-to-host copy into pageable
 * memory every step, 20 to 400 MB, holding compute up for 3 % to 40 % of the run.
 */
static void p_log_outputs(struct acc *a)
{
    struct job jb;
    struct ctx x;
    struct js *j;
    int bOom;
    double s;
    int64_t t0, t1, gpu, copy, want;
    char zSite[160];
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.45));
    jb.l.bPinned = 1;
    jb.l.accum = 1;
    set_micro(&jb, jb.micro);
    jb.l.epochs = 1;
    jb.l.iters = 20 + (int)acc_draw(a, 40);
    jb.l.valIters = 0;
    x.bytes = (int64_t)(20 + acc_draw(a, 380)) * 1000000;
    s = exp(acc_drawf(a, log(0.03), log(0.4)));
    gpu = js_template_ns(jb.l.zTemplate, "FBOZC");
    copy = 1500 + x.bytes / 10; /* the device-to-host copy's time (jobsim: 10 GB/s) */
    want = (int64_t)((double)copy * (1 - s) / s) - jb.l.cpuPerStep;
    if (want < gpu / 20) want = gpu / 20;
    jb.l.timeScale = (double)want / (double)gpu;
    jb.l.pCtx = &x;
    jb.l.xTrainStep = hook_log_outputs;
    acc_shape(a, "copies", "%.0f MB of outputs to pageable host memory every step", (double)x.bytes / 1e6);
    acc_describe(a, "Training that copies every step's outputs to the host for a metric computed on the CPU "
                    "(`preds.append(outputs.float().cpu())`, train.py:86): a blocking device-to-host copy into "
                    "pageable memory every step, during which the GPU idles. Expected: a transfer finding at "
                    "train.py:86 whose severity follows the share of the run the copies held compute up; a finding "
                    "of copies serialized with compute may accompany it.");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    x.site = js_site(j, "train.py:86:train_one_epoch|" MAIN);
    x.site2 = x.site;
    loop_epochs(a, &jb.l, j, &bOom);
    t0 = js_first_kernel(j);
    t1 = js_now(j);
    s = t1 > t0 ? (double)js_pageable_ns(j) / (double)(t1 - t0) : 0;
    acc_shape(a, "copy share", "%.1f %% of the run after the first kernel", s * 100);
    snprintf(zSite, sizeof zSite, "train.py:86 in train_one_epoch");
    expect(a, "outputs-to-host", "transfer", zSite, *transfer_sev(s) ? transfer_sev(s) : "info", NULL, NULL, NULL,
           *transfer_sev(s) != 0, "device-to-host copies of every step's outputs", 0, NULL);
    expect(a, "outputs-to-host", "transfer", NULL, "low|medium|high", NULL, "erializ", NULL, 0, "consequence of the planted cause", 0, NULL);
    acc_end(a, j, 1, 1);
}

/* Draws the number of micro-batches of the next step (1 to x->k), the batch following. */
static void hook_accum_var(struct loop *l, struct js *j, int it, struct pt_fwd *f)
{
    struct ctx *x = l->pCtx;
    (void)it;
    (void)f;
    l->accum = 1 + (int)js_rand(j, (uint64_t)x->k);
    l->batch = x->n * l->accum;
}

/*
 * Gradient accumulation over a varying number of micro-batches per optimizer step (a token budget
 * per step, the last step of an epoch shorter, schedules that raise it): steps of 1 to 8 micro-batches.
 */
static void lk_accum_varying(struct acc *a)
{
    struct job jb;
    struct ctx x;
    memset(&x, 0, sizeof x);
    draw_variant(a, M_ANY, P_ANY, 2);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.2, 0.6));
    x.k = 2 + (int)acc_draw(a, 7);
    x.n = jb.micro;
    jb.l.accum = x.k;
    set_micro(&jb, jb.micro);
    jb.l.bZeroLast = 1;
    if (acc_chance(a, 40)) jb.l.varLen = 2 + (int)acc_draw(a, 4);
    jb.l.pCtx = &x;
    jb.l.xIterStart = hook_accum_var;
    acc_shape(a, "accumulation", "1 to %d micro-batches per step%s", x.k, jb.l.varLen > 1 ? ", lengths varying" : "");
    acc_describe(a, "Training with gradient accumulation over a varying number of micro-batches per optimizer step "
                    "(a token budget per step): steps of 1 to 8 forward and backward passes, gradients kept across "
                    "them and the optimizer stepping at the end. Step lengths and peaks vary; nothing grows. Expected: "
                    "nothing at severity low or above.");
    allow_state(a);
    job_all(a, &jb, NULL, NULL);
}

/*
 * An inference server answering requests of varying batch and length with generate(): each request
 * preallocates its key/value cache (StaticCache, serve.py:64), prefills, decodes, and returns.
 * bKeep: the server keeps every request's cache in a dict for follow-up turns that never come
 * (`self.sessions[req.id] = out.past_key_values`, serve.py:66), never evicted.
 */
static void serve_requests(struct acc *a, int bKeep)
{
    const struct js_gpu *g;
    const struct acc_variant *v;
    struct pt_model m;
    struct js_cfg c;
    struct js *j;
    int nLayer, d, nReq, maxB, maxTok, siteKv, siteAct, siteLogit, aB[400], aLen[400], aKeep[400], nKeep = 0, bTeardown, bClean;
    int64_t kvTok, free0, kept = 0, total = 0, resvKv;
    char zSite[200];
    draw_variant(a, M_ANY, P_N | P_X, 1);
    v = acc_variant(a);
    g = draw_gpu(a);
    memset(&c, 0, sizeof c);
    c.pGpu = g;
    c.zTemplate = "nsys_mangled";
    c.kernelStride = 1;
    c.timeScale = acc_drawf(a, 0.2, 0.6);
    c.zCmd = "python serve.py --model llama --max-batch 16";
    nLayer = acc_chance(a, 50) ? 24 : 12;
    d = acc_chance(a, 50) ? 2048 : 1024;
    pt_lm(&m, nLayer, d, 1, 32000, 1);
    kvTok = (int64_t)2 * nLayer * d * 2; /* K and V per token per sequence, bf16 */
    free0 = g->total - CTX - pt_param_bytes(&m) - GiB;
    nReq = 40 + (int)acc_draw(a, 120);
    maxB = 2 << acc_draw(a, 4);
    maxTok = 256 << acc_draw(a, 4);
    while ((int64_t)maxB * maxTok * kvTok > free0 / 4 && maxTok > 64) maxTok /= 2;
    for (int r = 0; r < nReq; r++) {
        aB[r] = 1 + (int)acc_draw(a, (uint64_t)maxB);
        aLen[r] = 32 + (int)acc_draw(a, (uint64_t)maxTok);
        total += kvTok * aLen[r] * aB[r];
        if (bKeep && total > free0 / 3 && r >= 12) { /* the dict fills a third of what is free by the end */
            nReq = r;
            break;
        }
    }
    bTeardown = acc_chance(a, 50);
    bClean = acc_chance(a, 70);
    acc_shape(a, "model", "decoder, %d layers, d %d (bf16), %.1f GiB of weights", nLayer, d, (double)pt_param_bytes(&m) / (double)GiB);
    acc_shape(a, "requests", "%d, batch 1 to %d, 32 to %d tokens, cache %lld KiB a token", nReq, maxB, 32 + maxTok,
              (long long)(kvTok >> 10));
    acc_shape(a, "end", "%s, %s", bTeardown ? "freed at shutdown" : "live at exit", bClean ? "closed cleanly" : "killed");
    if (bKeep)
        acc_describe(a, "An inference server that keeps every request's key/value cache in a dict for follow-up turns "
                        "(`self.sessions[req.id] = out.past_key_values`, serve.py:66) and never evicts it: each request's "
                        "cache, allocated at serve.py:64, stays. Expected: a leak at serve.py:64 where the trace shows it "
                        "(at segment level only where the allocator had to reserve more).");
    else
        acc_describe(a, "An inference server answering requests of varying batch and length with generate(): each request "
                        "preallocates its key/value cache (serve.py:64), prefills, decodes and returns, and the cache is "
                        "freed with it. Peaks follow the requests' sizes; the allocator reserves more when a larger request "
                        "than any before arrives. Expected: nothing at severity low or above.");
    j = acc_process(a, 0, &c);
    if (!j) return;
    pt_to_device(j, &m, "serve.py:40:Server.load|serve.py:118:main|serve.py:131:<module>");
    siteKv = js_site(j, "lib:transformers/cache_utils.py:1180:StaticCache.__init__|"
                        "lib:transformers/generation/utils.py:1755:GenerationMixin._get_cache|"
                        "lib:transformers/generation/utils.py:2034:GenerationMixin.generate|"
                        "serve.py:64:Server.generate|serve.py:121:main|serve.py:131:<module>");
    siteAct = js_site(j, "model.py:121:Block.forward|" CALL "|model.py:146:GPT.forward|" CALL "|"
                         "lib:transformers/generation/utils.py:2980:GenerationMixin._sample|"
                         "serve.py:64:Server.generate|serve.py:121:main|serve.py:131:<module>");
    siteLogit = js_site(j, "lib:torch/nn/modules/linear.py:134:Linear.forward|" CALL "|"
                           "lib:transformers/generation/utils.py:2980:GenerationMixin._sample|"
                           "serve.py:64:Server.generate|serve.py:121:main|serve.py:131:<module>");
    for (int r = 0; r < nReq; r++) {
        int kv, act, nChunk = 4 + (int)js_rand(j, 5);
        if (js_rand(j, 8) == 0) js_cpu(j, 200000000); /* no request for a while */
        js_cpu(j, 2000000);
        if (r == 3) js_resv_mark(j); /* after warm-up */
        loop_push(a, j, ACC_NVTX_NAMES, "request %d", r);
        kv = js_alloc(j, kvTok * aLen[r] * aB[r], siteKv, JS_NAT_ALLOC);
        act = js_alloc(j, (int64_t)aB[r] * aLen[r] * d * 2 * 4, siteAct, JS_NAT_ALLOC); /* prefill */
        for (int k = -1; k < nChunk; k++) { /* the prefill, then the decode a few tokens at a time: every layer's weights */
            int lg = k < 0 ? -1 : js_alloc(j, (int64_t)aB[r] * 32000 * 4, siteLogit, JS_NAT_ALLOC);
            for (int grp = 0; grp < 4; grp++) {
                int aT[48], nT = 0;
                for (int l = grp * m.n / 4; l < (grp + 1) * m.n / 4 && nT < 44; l++)
                    if (m.a[l].w) aT[nT++] = m.w[l];
                aT[nT++] = kv;
                aT[nT++] = k < 0 ? act : lg;
                js_play(j, 'F', (k + 1) * 4 + grp, (nChunk + 1) * 4, aT, nT);
            }
            if (k < 0) {
                js_here(j, siteAct);
                js_free(j, act);
            } else {
                pt_item(j, lg, "serve.py:65:Server.generate|serve.py:121:main|serve.py:131:<module>");
                js_free(j, lg);
            }
        }
        loop_pop(a, j, ACC_NVTX_NAMES);
        js_here(j, js_site(j, "serve.py:66:Server.generate|serve.py:121:main|serve.py:131:<module>"));
        if (bKeep) {
            aKeep[nKeep++] = kv;
            if (r >= 3) kept += js_tensor_bytes(j, kv);
        } else {
            js_free(j, kv);
        }
    }
    js_sync(j);
    resvKv = js_resv_since_mark(j, "serve.py:64:", JS_NAT_ALLOC);
    acc_shape(a, "kept", "%lld MiB after warm-up, %lld MiB of segments reserved for it", (long long)(kept / MiB),
              (long long)(resvKv / MiB));
    if (bKeep) {
        user_site(js_site_spec(j, siteKv), zSite, sizeof zSite);
        loop_allow_also(a, "sessions", "retained", NULL, NULL);
        expect(a, "sessions", "leak", zSite, growth_sev(kept), NULL, NULL, NULL,
               v->mode == JS_TENSORS || v->bHistory ? kept >= 32 * MiB : resvKv >= 64 * MiB && resvKv * 100 >= js_reserved(j),
               "leak growth at its call site", 0, NULL);
    }
    (void)aKeep;
    acc_end(a, j, bTeardown, bClean);
}

static void lk_serve_requests(struct acc *a)
{
    serve_requests(a, 0);
}

static void p_serve_sessions(struct acc *a)
{
    serve_requests(a, 1);
}

/*
 * A batch-size finder (Lightning's Tuner.scale_batch_size, mode "power"): 2 or 3 training steps at each
 * batch, doubling from 1, 2 or 4 until one runs out of memory in the forward or the backward (the logits'
 * gradient is as large as the logits); the finder catches it,
 * collects garbage and empties the cache, and training runs at the last batch that fit.
 */
static void p_oom_bs_finder(struct acc *a)
{
    struct job jb;
    struct js *j;
    int bOom = 0, b, nTrial, it = 0, fail = -1, nSize = 0;
    int64_t demand = 0;
    const char *zVerdict = NULL, *zNot = NULL;
    char zSite[600];
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.3, 0.6));
    jb.l.accum = 1;
    jb.l.bZeroLast = 0;
    jb.l.bPinned = 1;
    jb.l.epochs = 1;
    jb.l.valIters = 0;
    nTrial = 2 + (int)acc_draw(a, 2);
    b = 1 << acc_draw(a, 3);
    jb.l.iters = 10 + (int)acc_draw(a, 20);
    acc_describe(a, "A batch-size finder before training (Lightning's scale_batch_size, mode \"power\"): a few steps at "
                    "each batch size, doubling until one runs out of memory; the finder catches the error, empties the "
                    "cache, and training runs at the last size that fit. The memory reserved climbs with each doubling "
                    "and stays flat after. Expected: one OOM finding, high, at the failing line with its verdict; "
                    "nothing else at severity low or above.");
    allow_state(a);
    set_micro(&jb, b);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    loop_push(a, j, ACC_NVTX_NAMES, "train", 0);
    for (; b <= 8192 && !bOom; b *= 2, nSize++) {
        set_micro(&jb, b);
        for (int s = 0; s < nTrial; s++, it++) {
            demand = js_allocated_blocks(j) + (pt_act_bytes(&jb.l.m) + jb.xSample) * b;
            if (loop_train_iter(a, &jb.l, j, it) != 0) {
                bOom = 1;
                fail = jb.l.failSite;
                zVerdict = oom_verdict(a, j, demand, &zNot);
                break;
            }
        }
    }
    if (!bOom) fprintf(stderr, "accgen: oom_bs_finder did not run out of memory\n");
    js_here(j, js_site(j, "lib:lightning/pytorch/utilities/memory.py:83:garbage_collection_cuda|"
                          "lib:lightning/pytorch/tuner/batch_size_scaling.py:187:_run_power_scaling|"
                          "lib:lightning/pytorch/tuner/batch_size_scaling.py:72:_scale_batch_size|train.py:205:main|"
                          "train.py:231:<module>"));
    js_empty_cache(j);
    b = b / 4 > 0 ? b / 4 : 1; /* the loop doubled once more after the failing size */
    set_micro(&jb, b);
    acc_shape(a, "finder", "%d sizes tried, %d steps each, training at %d", nSize, nTrial, b);
    shape_loop(a, &jb);
    for (int i = 0; i < jb.l.iters; i++, it++)
        if (loop_train_iter(a, &jb.l, j, it) != 0) break;
    loop_pop(a, j, ACC_NVTX_NAMES);
    oom_sites(j, fail, SITE_FWD, zSite, sizeof zSite);
    expect(a, "oom", "oom", zSite, "high", NULL, zVerdict ? zVerdict : "real demand", NULL, bOom,
           "a batch-size finder's planned OOM, caught", 1, zNot);
    js_sync(j);
    acc_end(a, j, 1, 1);
}

/*
 * A gradient-accumulation fallback (accelerate's find_executable_batch_size, or a hand-written
 * except torch.cuda.OutOfMemoryError): the configured micro-batch runs out of memory at the first
 * step (in the forward or the backward); the handler empties the cache, halves the micro-batch and
 * doubles the accumulation (the same samples per optimizer step), and runs the step again until it
 * fits; the whole run then trains at that shape, with evaluation at the micro-batch that fit.
 */
static void p_oom_accum_fallback(struct acc *a)
{
    struct job jb;
    struct js *j;
    int bOom = 0, micro, cur, acc0, nTry = 0, aFail[8], nFail = 0, mult;
    int64_t demand = 0, left;
    const char *zVerdict = NULL, *zNot = NULL;
    char zSite[1200];
    draw_variant(a, M_ANY, P_ANY, 1);
    draw_job(a, &jb, K_ANY, 0.0, acc_drawf(a, 0.3, 0.6));
    jb.l.bPinned = 1;
    jb.l.epochs = 1;
    jb.l.iters = 10 + (int)acc_draw(a, 20);
    micro = jb.micro;
    acc0 = jb.l.accum;
    acc_describe(a, "A training script whose configured micro-batch does not fit: the first step runs out of "
                    "memory, the handler (accelerate's find_executable_batch_size, or an except "
                    "torch.cuda.OutOfMemoryError) empties the cache, halves the micro-batch and doubles the gradient "
                    "accumulation, and runs the step again until it fits; the run then trains at that shape. "
                    "Expected: one OOM finding, high, at the failing line with its verdict; nothing else at severity "
                    "low or above (the steps after it, with more micro-batches each, are healthy).");
    allow_state(a);
    j = job_open(a, &jb, &jb.l, 0);
    if (!j) return;
    /* the configured micro-batch: a power of two times the one that fits, beyond what the device holds */
    left = js_device_free(j) + js_reserved(j) - js_allocated(j);
    mult = (int)(left / (pt_act_bytes(&jb.l.m) * micro)) + 2;
    for (cur = micro; cur < micro * mult;) cur *= 2;
    loop_push(a, j, ACC_NVTX_NAMES, "train", 0);
    {
        int accNow = acc0;
        set_micro(&jb, cur);
        jb.l.accum = accNow;
        jb.l.batch = cur * accNow;
        jb.l.bZeroLast = accNow > 1;
        for (;;) {
            demand = js_allocated_blocks(j) + (pt_act_bytes(&jb.l.m) + jb.xSample) * cur;
            if (loop_train_iter(a, &jb.l, j, 0) == 0) break;
            if (!bOom) zVerdict = oom_verdict(a, j, demand, &zNot);
            bOom = 1;
            if (nFail < 8) aFail[nFail++] = jb.l.failSite;
            nTry++;
            js_here(j, js_site(j, "lib:accelerate/utils/memory.py:58:clear_device_cache|"
                                  "lib:accelerate/utils/memory.py:152:find_executable_batch_size.<locals>.decorator|"
                                  "train.py:205:main|train.py:231:<module>"));
            js_empty_cache(j);
            if (cur <= 1) break;
            cur /= 2;
            accNow *= 2;
            set_micro(&jb, cur);
            jb.l.accum = accNow;
            jb.l.batch = cur * accNow;
            jb.l.bZeroLast = 1;
        }
    }
    acc_shape(a, "fallback", "configured micro-batch %d, %d failed attempt(s), training at %d x %d accumulation",
              cur << nTry, nTry, cur, jb.l.accum);
    shape_loop(a, &jb);
    for (int i = 1; i < jb.l.iters; i++)
        if (loop_train_iter(a, &jb.l, j, i) != 0) break;
    loop_pop(a, j, ACC_NVTX_NAMES);
    if (jb.l.valIters > 0) {
        js_here(j, js_site(j, MAIN));
        js_free(j, jb.l.lastX);
        js_free(j, jb.l.lastOut);
        jb.l.lastX = jb.l.lastOut = -1;
        loop_push(a, j, ACC_NVTX_NAMES, "validation", 0);
        for (int b = 0; b < jb.l.valIters; b++)
            if (loop_val_batch(a, &jb.l, j, b) != 0) break;
        loop_pop(a, j, ACC_NVTX_NAMES);
    }
    if (!bOom) fprintf(stderr, "accgen: oom_accum_fallback did not run out of memory\n");
    zSite[0] = 0;
    for (int i = 0; i < nFail; i++) {
        char z[600];
        size_t n = strlen(zSite);
        oom_sites(j, aFail[i], i == 0 ? SITE_FWD : NULL, z, sizeof z);
        if (z[0] && !strstr(zSite, z)) snprintf(zSite + n, sizeof zSite - n, "%s%s", n ? "|" : "", z);
    }
    expect(a, "oom", "oom", zSite, "high", NULL, zVerdict ? zVerdict : "real demand", NULL, bOom,
           "an OOM caught, then gradient accumulation at a smaller micro-batch", 1, zNot);
    js_sync(j);
    acc_end(a, j, 1, 1);
}

/* ---- the table ---- */

const struct acc_family acc_aFamily[] = {
    {"lk_train_plain", "healthy", "look-alike: all detectors (a plain job of a drawn shape)", lk_train_plain},
    {"lk_train_expandable", "healthy", "look-alike: all detectors (a plain job with expandable_segments:True)",
     lk_train_expandable},
    {"lk_kv_capped", "healthy", "look-alike: leak, retained (a cache grown to a cap, then reused)", lk_kv_capped},
    {"lk_arena", "healthy", "look-alike: leak, retained (a preallocated arena)", lk_arena},
    {"lk_graph_pool", "healthy", "look-alike: leak, retained (a CUDA graph's private pool)", lk_graph_pool},
    {"lk_nccl_start", "healthy", "look-alike: leak (NCCL buffers mapped at start)", lk_nccl_start},
    {"lk_checkpoint", "healthy", "look-alike: transfer, leak (checkpoint saves)", lk_checkpoint},
    {"lk_accum_sawtooth", "healthy", "look-alike: leak, validation_spike (a long accumulation sawtooth)", lk_accum_sawtooth},
    {"lk_eval_nograd_big", "healthy", "look-alike: validation_spike (a larger evaluation batch under no_grad)", lk_eval_nograd_big},
    {"lk_eval_generate", "healthy", "look-alike: validation_spike (generation inside evaluation batches)", lk_eval_generate},
    {"lk_pinned_fast", "healthy", "look-alike: transfer (pinned copies at full speed)", lk_pinned_fast},
    {"lk_pageable_light", "healthy", "look-alike: transfer (pageable copies of a negligible share)", lk_pageable_light},
    {"lk_alloc_retry_ok", "healthy", "look-alike: oom (the allocator's free-and-retry succeeding)", lk_alloc_retry_ok},
    {"lk_cudnn_fallback", "healthy", "look-alike: oom (cuDNN's workspace fallback)", lk_cudnn_fallback},
    {"lk_other_process", "healthy", "look-alike: oom (another process holding memory, no failure)", lk_other_process},
    {"lk_moe_idle", "healthy", "look-alike: retained (weights idle for long stretches)", lk_moe_idle},
    {"lk_varlen", "healthy", "look-alike: leak (a staircase of longer batches)", lk_varlen},
    {"lk_eval_sorted", "healthy", "look-alike: validation_spike (evaluation batches sorted by length)", lk_eval_sorted},
    {"lk_varlen_eval", "healthy", "look-alike: validation_spike (peaks that vary with the sequence length)", lk_varlen_eval},
    {"lk_eval_periodic", "healthy", "look-alike: validation_spike (a short evaluation every few steps)", lk_eval_periodic},
    {"lk_pinned_ring", "healthy", "look-alike: transfer (a pinned ring of the loader's depth filling)", lk_pinned_ring},
    {"lk_eval_keep_preds", "healthy", "look-alike: validation_spike (predictions kept for the metric, released)", lk_eval_keep_preds},
    {"lk_eval_periodic_var", "healthy", "look-alike: validation_spike (periodic evaluation, lengths varying)", lk_eval_periodic_var},
    {"oom_dies", "planted", "class 1: a job that dies at an OOM (its live memory is no leak)", p_oom_dies},
    {"oom_retries", "planted", "class 2: one failure with retries is one OOM", p_oom_retries},
    {"pageable_only", "planted", "class 4: pageable copies with nothing pinned to compare", p_pageable_only},
    {"eval_growth_tensor", "planted", "class 5: growth inside an evaluation at tensor level", p_eval_growth_tensor},
    {"seg_growth_dup", "planted", "class 6: one root cause, one finding at segment level", p_seg_growth_dup},
    {"snapshot_iters", "planted", "class 7: iterations from Optimizer.step# markers and snapshot cycles", p_snapshot_iters},
    {"same_process_twice", "planted", "class 8: the same process given twice", p_same_process_twice},
    {"kineto_window_peak", "planted", "class 9: an import's headline peak is the process's", p_kineto_window_peak},
    {"kineto_op_sites", "planted", "class 10: torch.profiler sites from cpu_op and python_function", p_kineto_op_sites},
    {"leak_train", "planted", "leak growth at its call site, drawn shapes", p_leak_train},
    {"retained_eval", "planted", "retained across a phase boundary, drawn shapes", p_retained_eval},
    {"pinned_growth", "planted", "pinned host memory growing, drawn shapes", p_pinned_growth},
    {"oom_skip", "planted", "one OOM caught and skipped, the run going on", p_oom_skip},
    {"leak_slow", "planted", "a slow leak, small per step, over a longer run", p_leak_slow},
    {"lk_eval_longseq", "healthy", "look-alike: validation_spike (evaluation on longer sequences, inference_mode)", lk_eval_longseq},
    {"lk_eval_tta", "healthy", "look-alike: validation_spike (test-time augmentation: several forwards per batch)", lk_eval_tta},
    {"lk_eval_beam", "healthy", "look-alike: validation_spike (beam search: a cache growing inside each batch)", lk_eval_beam},
    {"lk_eval_ema", "healthy", "look-alike: validation_spike, leak (an EMA model swapped in for evaluation)", lk_eval_ema},
    {"lk_eval_confmat", "healthy", "look-alike: validation_spike, leak (a bounded GPU metric: a confusion matrix)", lk_eval_confmat},
    {"lk_eval_every_n", "healthy", "look-alike: validation_spike (evaluation every few epochs only)", lk_eval_every_n},
    {"lk_eval_warm", "healthy", "look-alike: validation_spike (the first evaluation batch warms the cache)", lk_eval_warm},
    {"eval_graph_kept", "planted", "an evaluation without no_grad keeping its graphs, drawn levels", p_eval_graph_kept},
    {"eval_cat_logits", "planted", "logits gathered on the GPU with torch.cat across an evaluation", p_eval_cat_logits},
    {"lk_fsdp_shards", "healthy", "look-alike: leak, retained (FSDP: units gathered and freed inside each step)", lk_fsdp_shards},
    {"lk_compile_shapes", "healthy", "look-alike: leak (torch.compile recording a CUDA graph per new length, early)", lk_compile_shapes},
    {"lk_log_sync", "healthy", "look-alike: transfer (small synchronizing .item() copies every step)", lk_log_sync},
    {"lk_accum_varying", "healthy", "look-alike: leak, validation_spike (a varying number of micro-batches a step)", lk_accum_varying},
    {"lk_serve_requests", "healthy", "look-alike: leak, retained (a server's per-request caches, freed)", lk_serve_requests},
    {"serve_sessions", "planted", "a server keeping every request's cache in a dict", p_serve_sessions},
    {"log_outputs", "planted", "every step's outputs copied to pageable host memory", p_log_outputs},
    {"lk_eval_periodic_big", "healthy", "look-alike: validation_spike (a periodic evaluation of a much larger batch)", lk_eval_periodic_big},
    {"oom_bs_finder", "planted", "a batch-size finder's OOM, caught, then training at the size that fit", p_oom_bs_finder},
    {"lk_eval_loader", "healthy", "look-alike: validation_spike (evaluation from a loader of its own pinning larger image batches)",
     lk_eval_loader},
    {"oom_accum_fallback", "planted", "an OOM at the first step, caught, then gradient accumulation at a smaller micro-batch",
     p_oom_accum_fallback},
};
const int acc_nFamily = (int)(sizeof acc_aFamily / sizeof acc_aFamily[0]);
