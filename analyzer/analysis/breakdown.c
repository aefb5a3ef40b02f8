/* The breakdown: what the memory at each device's peak and at each OOM was, by category, with the rule that decided. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

/*
 * Each allocation live at a moment the report explains (a device standing at its peak, an OOM)
 * is put in one category by the first rule below that holds for it (docs/analysis.md "What the
 * peak was" states them and their blind spots). The rules read the call stacks (vt__stack_facets:
 * NCCL, cuBLAS, cuDNN, CUDA graphs, another library, an optimizer, parameters moved or loaded,
 * the autograd engine, zero_grad) and the lifetime against the steps: training iterations where
 * the trace has them, else steps told from the stacks (a step ends where the program allocates
 * again after a backward pass or an optimizer), each with the moment its backward pass began
 * (its first allocation by the autograd engine).
 *
 * What was live at a moment is known exactly without a copy of the live set: every lifetime is
 * stamped with the order of its beginning, a moment with the order at which it was taken, and a
 * lifetime adds its bytes to the moments it was live at when it ends (its category needs its
 * end: freed in the step, by the engine, by zero_grad, kept past its step). A device has one
 * moment for its peak, replaced when the peak rises (or, with tensor rows inside segments, when
 * more tensors are live at the same reserved level: the least cache), and every OOM keeps one.
 */

/* The rules, in the order they are tried; each names its category and what it says. */
enum rule {
    R_RUNTIME = 0, R_NCCL, R_CUBLAS, R_CUDNN, R_GRAPH, R_LIB, R_RESERVED,
    R_OPT_KEPT, R_PARAM_OWN, R_OPT_OWN_KEPT, R_OPT_TEMP, R_PARAM, R_GRAD_DDP, R_GRAD_ACC, R_GRAD_ZERO, R_GRAD_KEPT, R_BWD_TEMP,
    R_PARAM_INIT, R_UNTIMED, R_BEFORE, R_SETUP_KEPT, R_SETUP_TEMP, R_KEPT_STEP, R_HELD_NEXT, R_ABORTED, R_NOBWD, R_LIVE_END,
    R_ACT_ENGINE, R_ACT, R_FWD_TEMP, R_BWD_MAIN,
    R_SEG_OPT, R_SEG_OPT_OWN, R_SEG_PARAM, R_SEG_GRAD, R_SEG_BWD, R_SEG_FWD, R_SEG_SETUP, R_SEG_NOBWD, R_N
};
static const struct {
    int cat;       /* enum vt_cat (R_NOBWD's is decided at the end) */
    const char *z; /* the evidence, for people */
} aRule[R_N] = {
    [R_RUNTIME] = {VT_CAT_CONTEXT, "made by the CUDA runtime or driver itself (no API call)"},
    [R_NCCL] = {VT_CAT_NCCL, "a frame in NCCL"},
    [R_CUBLAS] = {VT_CAT_CUBLAS, "a cuBLAS frame (libcublas, PyTorch's cuBLAS handle or workspace)"},
    [R_CUDNN] = {VT_CAT_CUDNN, "a cuDNN workspace frame"},
    [R_GRAPH] = {VT_CAT_GRAPH, "made under CUDA graph capture (torch.cuda.graphs, cudagraph trees, at::cuda::CUDAGraph)"},
    [R_LIB] = {VT_CAT_LIB, "allocated by the library itself, no PyTorch allocator frame"},
    [R_RESERVED] = {VT_CAT_CACHE, "reserved by the caching allocator, no tensor in it"},
    [R_OPT_KEPT] = {VT_CAT_OPT, "an optimizer's frames (torch/optim/), kept past its step"},
    [R_PARAM_OWN] = {VT_CAT_PARAM, "made in the step of an optimizer the program defines and read by a kernel of a "
                                   "later step's forward pass: parameters its step writes anew (p.data = ...)"},
    [R_OPT_OWN_KEPT] = {VT_CAT_OPT, "made in the step of an optimizer the program defines (its step run by "
                                    "torch.optim.Optimizer's wrapper, no torch/optim/ code of its own) and kept past "
                                    "its step: its state, or parameters its step writes anew (p.data = ...), which "
                                    "the stack cannot tell apart"},
    [R_OPT_TEMP] = {VT_CAT_TEMP, "an optimizer's frames, freed within its step"},
    [R_PARAM] = {VT_CAT_PARAM, "frames that move, create or load parameters (Module.to/_apply, nn.init, load_state_dict)"},
    [R_GRAD_DDP] = {VT_CAT_GRAD, "DDP's reducer (gradient buckets)"},
    [R_GRAD_ACC] = {VT_CAT_GRAD, "AccumulateGrad (a parameter's gradient)"},
    [R_GRAD_ZERO] = {VT_CAT_GRAD, "made by the autograd engine, freed by zero_grad"},
    [R_GRAD_KEPT] = {VT_CAT_GRAD, "made by the autograd engine, kept past its backward pass"},
    [R_BWD_TEMP] = {VT_CAT_TEMP, "made by the autograd engine, freed within its step"},
    [R_PARAM_INIT] = {VT_CAT_PARAM, "made in a constructor (__init__) and kept: a model's layers made on the device"},
    [R_UNTIMED] = {VT_CAT_UNKNOWN, "allocation time unknown (the state at a dump) and no frame that tells"},
    [R_BEFORE] = {VT_CAT_UNKNOWN, "memory allocated before the history began (the state at the dump it does not "
                                  "explain) and no frame that tells"},
    [R_SETUP_KEPT] = {VT_CAT_STATE, "made outside the steps and kept through the next one (no frame names it)"},
    [R_SETUP_TEMP] = {VT_CAT_TEMP, "made outside the steps, freed before the next one"},
    [R_KEPT_STEP] = {VT_CAT_STATE, "made in a step and kept past the next one"},
    [R_HELD_NEXT] = {VT_CAT_TEMP, "made in a step and freed in the next: a step's batch or outputs held until the "
                                  "next one replaces them"},
    [R_ABORTED] = {VT_CAT_TRANSIENT, "made in a step that failed (OOM) before its backward pass"},
    [R_NOBWD] = {VT_CAT_TEMP, "made and freed within a step without a backward pass"},
    [R_LIVE_END] = {VT_CAT_UNKNOWN, "live at the end of the trace, made in its last step: whether it was kept cannot be told"},
    [R_ACT_ENGINE] = {VT_CAT_ACT, "made before the step's backward pass, freed by the autograd engine"},
    [R_ACT] = {VT_CAT_ACT, "made before the step's backward pass, freed after it began"},
    [R_FWD_TEMP] = {VT_CAT_TEMP, "made and freed before the step's backward pass began"},
    [R_BWD_MAIN] = {VT_CAT_TEMP, "made on the program's thread during the backward pass, freed within the step"},
    [R_SEG_OPT] = {VT_CAT_OPT, "segments reserved by an optimizer's frames (its state, temporaries and cache)"},
    [R_SEG_OPT_OWN] = {VT_CAT_OPT, "segments a hand-written optimizer's step reserved: its state, temporaries, cache, "
                                   "or parameters it writes anew (p.data = ...), which a segment cannot tell apart"},
    [R_SEG_PARAM] = {VT_CAT_PARAM, "segments reserved while parameters were moved, made or loaded"},
    [R_SEG_GRAD] = {VT_CAT_GRAD, "segments reserved by AccumulateGrad (parameters' gradients, with cache)"},
    [R_SEG_BWD] = {VT_CAT_TRANSIENT, "segments reserved in the backward pass (gradients, temporaries and cache)"},
    [R_SEG_FWD] = {VT_CAT_TRANSIENT, "segments reserved before the step's backward pass (activations, temporaries and "
                                     "cache)"},
    [R_SEG_SETUP] = {VT_CAT_STATE, "segments reserved outside the steps and kept (weights and other state, with cache)"},
    [R_SEG_NOBWD] = {VT_CAT_TRANSIENT, "segments reserved in a step without a backward pass (its tensors and cache)"},
};

#define LIB_MAX VT_CATLIB_MAX /* libraries named apart; the others share the last slot */
#define OOM_LAYOUT_MAX ((int64_t)1 << 21) /* segments and blocks kept for the OOMs' layouts in all (48 MiB) */

/* What was live at one moment, by rule. */
struct moment {
    int64_t seq;            /* lifetimes begun at or before it (and not ended) were live */
    int64_t ts, tensorLive;
    int64_t lastTs;         /* a device's: when what was live on it last changed (kept across takes), -1 never */
    int64_t stateTs;        /* when what it sums began to stand (a device's lastTs when taken; an OOM's ts) */
    int64_t poolReserved;   /* the device's memory pool's reserved bytes then (cudaMallocAsync), 0 none */
    int acct, bTaken;
    int64_t aBytes[R_N], aCount[R_N];
    int64_t aLibBytes[LIB_MAX], aLibCount[LIB_MAX];
    int64_t tensorBytes, cudaBytes; /* of the allocator's blocks, of CUDA's allocations */
    int64_t firstFwd;       /* segment level: R_SEG_FWD bytes of the first step with a backward pass */
    int64_t lastReq, req;   /* a device's: its latest block request so far (kept across takes), and when taken */
    struct vt_bdlayout lay; /* with blocks inside segments: the segments and blocks live then (a device's kept
                             * across takes, emptied by one; an OOM's up to OOM_LAYOUT_MAX in all) */
    int bLayOver;           /* an OOM's layout was dropped (OOM_LAYOUT_MAX): its fragmentation is not told */
};

/* A stack's facets, cached. */
struct fslot {
    int64_t stackId;        /* -2: empty */
    unsigned m;
    int iLib;               /* index into azLib, -1 none */
};

/* A step: an iteration, or a span told from the stacks. */
struct span {
    int64_t start, bwd;     /* bwd: its first allocation by the autograd engine, -1 none yet */
};

struct vt_bdrun {
    int bTensorsIn;         /* tensor rows inside CUDA's segments: the blocks are categorized, segments give reserved */
    int bSegLevel;          /* segments only: categories of segments */
    int bPages;             /* and they are expandable segments' pages (the settings, the allocator's VMM maps) */
    int bExpand;            /* the allocator's memory is expandable segments' pages (at any level) */
    int64_t seq;
    struct moment *aPeak;   /* one per device account seen, by acct */
    int nPeak;
    struct moment *aOom;    /* parallel to t->aOom */
    int nOom;
    struct fslot *aF;
    int nF, nFHash;
    char azLib[LIB_MAX][64];
    int nLib;
    struct span *aSpan;     /* iterations (t->ph.aIter) or stack-told steps */
    int nSpan, nSpanAlloc;
    int bIterSpans;         /* the spans are the trace's iterations */
    int lastKind;           /* stack-told steps: 0 forward, 1 backward, 2 optimizer, -1 none yet */
    int64_t lastOomTs;      /* the latest OOM so far, -1 none */
    int bEngineSeen;        /* an allocation by the autograd engine: the trace trains */
    int bCurves;            /* keep every lifetime's category change for the devices' category curves */
    struct vt_catevs ev;    /* the curves' changes (catcurve.c) */
    struct vt_memsample *aSample; /* the tracer's samples of the devices' memory, by time */
    int64_t *aSampleTraced; /* each sample's device's traced (live CUDA) bytes then; -1 not reached yet */
    int nSample, iSample;   /* iSample: the first sample the replay has not reached */
    int64_t nOomRefs;       /* segments and blocks in the OOMs' layouts */
};

/* The facets of stackId, cached; *piLib the library's slot. 0, or -1 (out of memory, SQLite error). */
static int facets(struct vt_trace *t, int64_t stackId, unsigned *pm, int *piLib)
{
    struct vt_bdrun *b = t->pBd;
    struct vt_facets fc;
    int i;
    *pm = 0;
    *piLib = -1;
    if (stackId < 0) return 0;
    if (b->nFHash == 0 || (b->nF + 1) * 2 > b->nFHash) {
        int nNew = b->nFHash ? 2 * b->nFHash : 256;
        struct fslot *aNew = malloc(sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        for (i = 0; i < nNew; i++) aNew[i].stackId = -2;
        for (i = 0; i < b->nFHash; i++) {
            if (b->aF[i].stackId == -2) continue;
            int j = (int)(((uint64_t)b->aF[i].stackId * 0x9E3779B97F4A7C15ull) >> 40) & (nNew - 1);
            while (aNew[j].stackId != -2) j = (j + 1) & (nNew - 1);
            aNew[j] = b->aF[i];
        }
        free(b->aF);
        b->aF = aNew;
        b->nFHash = nNew;
    }
    for (i = (int)(((uint64_t)stackId * 0x9E3779B97F4A7C15ull) >> 40) & (b->nFHash - 1); b->aF[i].stackId != -2;
         i = (i + 1) & (b->nFHash - 1))
        if (b->aF[i].stackId == stackId) {
            *pm = b->aF[i].m;
            *piLib = b->aF[i].iLib;
            return 0;
        }
    if (vt__stack_facets(t->f.db, stackId, &fc) != SQLITE_OK) return -1;
    b->aF[i].stackId = stackId;
    b->aF[i].m = fc.m;
    b->aF[i].iLib = -1;
    if (fc.m & VT_FACET_LIB) {
        int k;
        for (k = 0; k < b->nLib && strcmp(b->azLib[k], fc.zOwner); k++) {
        }
        if (k == b->nLib && b->nLib < LIB_MAX - 1) snprintf(b->azLib[b->nLib++], sizeof b->azLib[0], "%s", fc.zOwner);
        else if (k == b->nLib) k = LIB_MAX - 1, snprintf(b->azLib[k], sizeof b->azLib[0], "other libraries");
        b->aF[i].iLib = k;
    }
    b->nF++;
    *pm = fc.m;
    *piLib = b->aF[i].iLib;
    return 0;
}

/* The moment of device account acct, created on first sight; NULL when out of memory. */
static struct moment *peak_of(struct vt_bdrun *b, int acct)
{
    struct moment *aNew;
    for (int i = 0; i < b->nPeak; i++)
        if (b->aPeak[i].acct == acct) return &b->aPeak[i];
    aNew = realloc(b->aPeak, sizeof *aNew * (size_t)(b->nPeak + 1));
    if (!aNew) return NULL;
    b->aPeak = aNew;
    memset(&aNew[b->nPeak], 0, sizeof aNew[0]);
    aNew[b->nPeak].acct = acct;
    aNew[b->nPeak].seq = -1;
    aNew[b->nPeak].lastTs = -1;
    return &aNew[b->nPeak++];
}

int vt__bd_begin(struct vt_trace *t, int bTensorsIn, int bCurves)
{
    struct vt_bdrun *b = calloc(1, sizeof *b);
    if (!b) return -1;
    t->pBd = b;
    b->bTensorsIn = bTensorsIn;
    b->bCurves = bCurves;
    b->bSegLevel = t->f.bSegments && !bTensorsIn;
    b->bExpand = t->f.aMemOp[VT_MEMOP_VMM_MAP] > 0 && vt__fs_expandable(t);
    b->bPages = b->bSegLevel && b->bExpand;
    b->lastKind = -1;
    b->lastOomTs = -1;
    if (vt__read_mem_samples(&t->f, &b->aSample, &b->nSample) != 0) return -1;
    if (b->nSample > 0 && !(b->aSampleTraced = malloc(sizeof *b->aSampleTraced * (size_t)b->nSample))) return -1;
    for (int i = 0; i < b->nSample; i++) b->aSampleTraced[i] = -1;
    if (t->ph.nIter > 0 && !t->ph.bCycleIter) { /* a dump's memory cycles mark no step: told from the stacks */
        b->bIterSpans = 1;
        b->aSpan = malloc(sizeof *b->aSpan * (size_t)t->ph.nIter);
        if (!b->aSpan) return -1;
        for (int i = 0; i < t->ph.nIter; i++) b->aSpan[i].start = t->ph.aIter[i].start, b->aSpan[i].bwd = -1;
        b->nSpan = b->nSpanAlloc = t->ph.nIter;
    }
    return 0;
}

/* A new stack-told step starting at ts. 0 or -1. */
static int span_add(struct vt_bdrun *b, int64_t ts)
{
    if (b->nSpan == b->nSpanAlloc) {
        int nNew = b->nSpanAlloc ? 2 * b->nSpanAlloc : 16;
        struct span *aNew = realloc(b->aSpan, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        b->aSpan = aNew;
        b->nSpanAlloc = nNew;
    }
    b->aSpan[b->nSpan].start = ts;
    b->aSpan[b->nSpan++].bwd = -1;
    return 0;
}

/* Whether l is memory the program's steps are told by (the allocator's blocks where the trace has them). */
static int step_memory(const struct vt_bdrun *b, const struct vt_life *l)
{
    return !b->bTensorsIn || l->bTensor;
}

/* What was live on device account acct changed at ts. 0 or -1. */
static int changed(struct vt_bdrun *b, int acct, int64_t ts)
{
    struct moment *p = peak_of(b, acct);
    if (!p) return -1;
    if (ts > p->lastTs) p->lastTs = ts;
    return 0;
}

int vt__bd_life_begin(struct vt_trace *t, struct vt_life *l)
{
    struct vt_bdrun *b = t->pBd;
    unsigned m;
    int iLib;
    l->bdSeq = ++b->seq;
    l->bdSpan = -1;
    if (l->acct >= 0 && changed(b, l->acct, l->allocTs >= 0 ? l->allocTs : t->f.bTimes ? t->f.t0 : 0) != 0) return -1;
    if (l->acct >= 0 && l->bTensor && l->bytes > 0) peak_of(b, l->acct)->lastReq = l->bytes; /* found by changed() */
    if (l->allocTs < 0) return 0; /* untimed: in no step */
    if (facets(t, l->stackId, &m, &iLib) != 0) return -1;
    if (b->bIterSpans) {
        l->bdSpan = vt__iter_at(t, l->allocTs);
    } else if (step_memory(b, l) && !l->bInternal &&
               !(m & (VT_FACET_NCCL | VT_FACET_CUBLAS | VT_FACET_CUDNN | VT_FACET_LIB))) {
        /* steps told from the stacks: forward (anything else), backward (the engine), optimizer */
        int kind = m & VT_FACET_ENGINE ? 1 : m & (VT_FACET_OPTIM | VT_FACET_ZERO_GRAD) ? 2 : 0;
        if (b->nSpan == 0 || (kind == 0 && b->lastKind > 0))
            if (span_add(b, b->nSpan == 0 && t->f.bTimes ? t->f.t0 : l->allocTs) != 0) return -1;
        b->lastKind = kind;
        l->bdSpan = b->nSpan - 1;
    } else if (b->nSpan > 0) {
        l->bdSpan = b->nSpan - 1;
    }
    if ((m & VT_FACET_ENGINE) && step_memory(b, l)) {
        b->bEngineSeen = 1;
        if (l->bdSpan >= 0 && b->aSpan[l->bdSpan].bwd < 0) b->aSpan[l->bdSpan].bwd = l->allocTs;
    }
    return 0;
}

void vt__bd_use(struct vt_trace *t, struct vt_life *l, int64_t ts)
{
    struct vt_bdrun *b = t->pBd;
    int k;
    if (!b || b->bTensorsIn || b->bSegLevel || l->bdFwdUse || l->bdSpan < 0) return; /* uses name tensors only here */
    k = b->bIterSpans ? vt__iter_at(t, ts) : b->nSpan - 1;
    l->bdFwdUse = k > l->bdSpan && (b->aSpan[k].bwd < 0 || ts < b->aSpan[k].bwd);
}

/* Take moment p now (device iDev's level). */
static void take(struct vt_bdrun *b, struct moment *p, int64_t ts, int64_t tensorLive)
{
    int acct = p->acct;
    int64_t lastTs = p->lastTs, lastReq = p->lastReq;
    struct vt_bdlayout lay = p->lay;
    memset(p, 0, sizeof *p);
    p->acct = acct;
    p->lastTs = lastTs;
    p->lastReq = p->req = lastReq;
    p->lay = lay;
    p->lay.n = 0;
    p->stateTs = lastTs >= 0 ? lastTs : ts;
    p->seq = b->seq;
    p->ts = ts;
    p->tensorLive = tensorLive;
    p->bTaken = 1;
}

/* Device account acct's timeline entry, or NULL. */
static struct vt_device *device_of(struct vt_trace *t, int acct)
{
    for (int i = 0; i < t->tl.nDev; i++)
        if (t->tl.aDev[i].id == acct) return &t->tl.aDev[i];
    return NULL;
}

/* Take device d's peak moment when it stands at its peak and the moment is new (or holds more tensors). 0 or -1. */
static int peak_moment(struct vt_trace *t, struct vt_device *d, int64_t ts)
{
    struct vt_bdrun *b = t->pBd;
    struct moment *p;
    if (d->id < 0 || d->peak <= 0 || d->live != d->peak) return 0;
    if (!(p = peak_of(b, d->id))) return -1;
    if (d->bBdDirty || !p->bTaken || (b->bTensorsIn && d->tensorLive > p->tensorLive)) {
        take(b, p, ts, d->tensorLive);
        p->poolReserved = d->poolReserved;
        d->bBdDirty = 0;
        vt__peaklist_begin(d, t->f.bTimes ? p->stateTs : -1); /* the list live at peak: of this moment too */
    }
    return 0;
}

int vt__bd_before_end(struct vt_trace *t, const struct vt_life *l)
{
    struct vt_device *d;
    if (l->acct < 0 || l->status == VT_LIFE_LIVE_AT_END || !(d = device_of(t, l->acct))) return 0;
    return peak_moment(t, d, l->freeTs >= 0 ? l->freeTs : d->peakTs);
}

int vt__bd_oom(struct vt_trace *t, int iOom)
{
    struct vt_bdrun *b = t->pBd;
    struct moment *aNew;
    if (iOom >= b->nOom) {
        aNew = realloc(b->aOom, sizeof *aNew * (size_t)(iOom + 1));
        if (!aNew) return -1;
        b->aOom = aNew;
        memset(&aNew[b->nOom], 0, sizeof *aNew * (size_t)(iOom + 1 - b->nOom));
        b->nOom = iOom + 1;
    }
    b->aOom[iOom].acct = t->aOom[iOom].device;
    b->aOom[iOom].lastTs = -1;
    take(b, &b->aOom[iOom], t->aOom[iOom].ts, -1);
    b->lastOomTs = t->aOom[iOom].ts;
    if (!b->bSegLevel) { /* the request that failed: demand at this moment, for the allocator's replay */
        b->seq += 2;
        if (vt__fs_add_failed(t, iOom, b->seq - 1, b->bTensorsIn) != 0) return -1;
    }
    return 0;
}

void vt__bd_samples_upto(struct vt_trace *t, int64_t ts)
{
    struct vt_bdrun *b = t->pBd;
    if (!b) return;
    for (; b->iSample < b->nSample && b->aSample[b->iSample].ts < ts; b->iSample++) {
        const struct vt_device *d = device_of(t, b->aSample[b->iSample].device);
        /* what the process held there: its live allocations and a memory pool's cache; no account yet: nothing */
        b->aSampleTraced[b->iSample] = !d ? 0 : d->live + (d->poolReserved > d->poolUsed ? d->poolReserved - d->poolUsed : 0);
    }
}

int vt__bd_finish(struct vt_trace *t)
{
    for (int i = 0; i < t->tl.nDev; i++)
        if (peak_moment(t, &t->tl.aDev[i], t->tl.aDev[i].peakTs) != 0) return -1;
    return 0;
}

/*
 * Whether l outlived its step: 1 yes (kept past the next step too, or live at the end of a later
 * step), 2 freed in the next step, 0 no, -1 cannot be told (live at the end, made in the trace's
 * last step).
 */
static int kept(const struct vt_trace *t, const struct vt_life *l)
{
    const struct vt_bdrun *b = t->pBd;
    int k = l->bdSpan;
    if (k < 0) { /* outside the steps: kept when a step began before its end */
        for (int i = 0; i < b->nSpan; i++)
            if (b->aSpan[i].start > l->allocTs)
                return l->status == VT_LIFE_LIVE_AT_END || l->freeTs > b->aSpan[i].start;
        return l->status == VT_LIFE_LIVE_AT_END ? -1 : 0;
    }
    if (b->bIterSpans) {
        int64_t end = t->ph.aIter[k].end;
        if (l->status == VT_LIFE_LIVE_AT_END) return end <= t->f.t1 && k + 1 < t->ph.nIter ? 1 : -1;
        if (l->freeTs <= end) return 0;
        return k + 1 < t->ph.nIter && l->freeTs <= t->ph.aIter[k + 1].end ? 2 : 1;
    }
    if (l->status == VT_LIFE_LIVE_AT_END) return k + 1 < b->nSpan ? 1 : -1;
    if (k + 1 >= b->nSpan || l->freeTs < b->aSpan[k + 1].start) return 0;
    return k + 2 < b->nSpan ? 1 : 2; /* the steps begun by its free */
}

/* Whether l, with stack facets m, is a segment of PyTorch's allocator holding the trace's blocks: a CUDA
 * allocation of a trace with blocks inside its segments, made by the allocator or by no library of its own. */
static int cache_segment(const struct vt_bdrun *b, const struct vt_life *l, unsigned m)
{
    return b->bTensorsIn && !l->bTensor && !l->bInternal &&
           ((m & VT_FACET_ALLOCATOR) || !(m & (VT_FACET_NCCL | VT_FACET_CUBLAS | VT_FACET_CUDNN | VT_FACET_LIB)));
}

int vt__bd_cache_segment(struct vt_trace *t, const struct vt_life *l)
{
    unsigned m;
    int iLib;
    if (!t->pBd->bTensorsIn || l->bTensor || l->bInternal || l->acct < 0) return 0; /* pinned host memory: no segment */
    if (facets(t, l->stackId, &m, &iLib) != 0) return -1;
    return cache_segment(t->pBd, l, m);
}

/* The rule that puts l in its category (*piLib: the library's slot for R_LIB). 0, or -1 (SQLite error, OOM). */
static int classify(struct vt_trace *t, const struct vt_life *l, int *pRule, int *piLib)
{
    struct vt_bdrun *b = t->pBd;
    unsigned m, mFree;
    int iLibFree, kp, k;
    int64_t bwd;
    *piLib = -1;
    if (l->bInternal) return *pRule = R_RUNTIME, 0;
    if (facets(t, l->stackId, &m, piLib) != 0 || facets(t, l->freeStackId, &mFree, &iLibFree) != 0) return -1;
    /* a segment of PyTorch's allocator holding the blocks: reserved, whatever request made it reserve */
    if (cache_segment(b, l, m)) return *pRule = R_RESERVED, 0;
    if (m & VT_FACET_NCCL) return *pRule = R_NCCL, 0;
    if (m & VT_FACET_CUBLAS) return *pRule = R_CUBLAS, 0;
    if (m & VT_FACET_CUDNN) return *pRule = R_CUDNN, 0;
    if (m & VT_FACET_GRAPH) return *pRule = R_GRAPH, 0;
    if (m & VT_FACET_LIB) return *pRule = R_LIB, 0;
    kp = kept(t, l);
    k = l->bdSpan;
    bwd = k >= 0 ? b->aSpan[k].bwd : -1;
    if (b->bSegLevel) { /* a segment: by the allocation that made the allocator reserve it */
        if (m & VT_FACET_OPTIM) *pRule = m & VT_FACET_OPTIM_OWN ? R_SEG_OPT_OWN : R_SEG_OPT;
        else if (m & VT_FACET_REDUCER) *pRule = R_GRAD_DDP;
        else if (m & VT_FACET_PARAM) *pRule = R_SEG_PARAM;
        else if (m & VT_FACET_ACCUMULATE) *pRule = R_SEG_GRAD;
        else if ((m & VT_FACET_ENGINE) || (bwd >= 0 && l->allocTs >= bwd)) *pRule = R_SEG_BWD;
        else if (l->allocTs < 0) *pRule = t->f.bUntimedBefore ? R_BEFORE : R_UNTIMED;
        else if (k < 0) *pRule = R_SEG_SETUP;
        else if (bwd >= 0) *pRule = R_SEG_FWD;
        else *pRule = R_SEG_NOBWD;
        return 0;
    }
    if ((m & VT_FACET_OPTIM) && (m & VT_FACET_OPTIM_OWN) && kp && l->bdFwdUse) return *pRule = R_PARAM_OWN, 0;
    if (m & VT_FACET_OPTIM) return *pRule = !kp ? R_OPT_TEMP : m & VT_FACET_OPTIM_OWN ? R_OPT_OWN_KEPT : R_OPT_KEPT, 0;
    if (m & VT_FACET_PARAM) return *pRule = R_PARAM, 0;
    if (m & VT_FACET_REDUCER) return *pRule = R_GRAD_DDP, 0;
    if (m & VT_FACET_ACCUMULATE) return *pRule = mFree & VT_FACET_ZERO_GRAD ? R_GRAD_ZERO : R_GRAD_ACC, 0;
    if (m & VT_FACET_ENGINE) {
        if (mFree & VT_FACET_ZERO_GRAD) *pRule = R_GRAD_ZERO;
        else *pRule = kp ? R_GRAD_KEPT : R_BWD_TEMP; /* live at the end: the last backward's gradients */
        return 0;
    }
    if ((m & VT_FACET_INIT) && kp) return *pRule = R_PARAM_INIT, 0; /* kept, or live at the end of the trace */
    if (l->allocTs < 0) return *pRule = t->f.bUntimedBefore ? R_BEFORE : R_UNTIMED, 0;
    if (kp >= 1) return *pRule = k < 0 ? R_SETUP_KEPT : kp == 2 ? R_HELD_NEXT : R_KEPT_STEP, 0;
    if (b->lastOomTs >= l->allocTs && (bwd < 0 || l->freeTs < bwd || kp < 0))
        return *pRule = R_ABORTED, 0; /* ended by the failed step's unwinding (or live at the end after it) */
    if (k < 0) return *pRule = kp < 0 ? R_LIVE_END : R_SETUP_TEMP, 0;
    if (bwd < 0 || (kp == 0 && l->freeTs < bwd)) { /* no backward pass yet when it ended */
        if (kp < 0) *pRule = bwd < 0 ? R_LIVE_END : R_ACT;
        else *pRule = bwd < 0 ? R_NOBWD : R_FWD_TEMP;
        return 0;
    }
    if (l->allocTs < bwd) return *pRule = mFree & VT_FACET_ENGINE ? R_ACT_ENGINE : R_ACT, 0;
    return *pRule = kp < 0 ? R_LIVE_END : R_BWD_MAIN, 0;
}

/* The first step with a backward pass (a training step), -1 none. */
static int first_trained(const struct vt_bdrun *b)
{
    for (int i = 0; i < b->nSpan; i++)
        if (b->aSpan[i].bwd >= 0) return i;
    return -1;
}

/* Add l to moment p under rule (library slot iLib) of run b. */
static void add(const struct vt_bdrun *b, struct moment *p, const struct vt_life *l, int rule, int iLib)
{
    p->aBytes[rule] += l->bytes;
    p->aCount[rule]++;
    if (rule == R_SEG_FWD && l->bdSpan >= 0 && l->bdSpan == first_trained(b)) p->firstFwd += l->bytes;
    if (rule == R_LIB && iLib >= 0) p->aLibBytes[iLib] += l->bytes, p->aLibCount[iLib]++;
    if (l->bTensor) p->tensorBytes += l->bytes;
    else p->cudaBytes += l->bytes;
}

int vt__bd_life_end(struct vt_trace *t, const struct vt_life *l)
{
    struct vt_bdrun *b = t->pBd;
    struct vt_device *d;
    int rule = -1, iLib = -1;
    b->seq++;
    if (l->acct < 0) return 0;
    if (l->status != VT_LIFE_LIVE_AT_END && l->freeTs >= 0 && changed(b, l->acct, l->freeTs) != 0) return -1;
    for (int i = 0; i < b->nPeak + b->nOom; i++) { /* every moment l was live at: classified once */
        struct moment *p = i < b->nPeak ? &b->aPeak[i] : &b->aOom[i - b->nPeak];
        if (p->acct != l->acct || !p->bTaken || l->bdSeq > p->seq) continue;
        if (rule < 0 && classify(t, l, &rule, &iLib) != 0) return -1;
        add(b, p, l, rule, iLib);
        if (i < b->nPeak && step_memory(b, l) && (d = device_of(t, l->acct)) && vt__peaklist_add(t, d, l) != 0)
            return -1;
        if (!b->bTensorsIn || !(rule == R_RESERVED || l->bTensor) || p->bLayOver) continue;
        if (i >= b->nPeak && ++b->nOomRefs > OOM_LAYOUT_MAX) { /* an OOM's: bounded in all */
            free(p->lay.a);
            memset(&p->lay, 0, sizeof p->lay);
            p->bLayOver = 1;
            continue;
        }
        if (vt__bdlayout_add(&p->lay, l->address, l->bytes, rule == R_RESERVED) != 0) return -1;
    }
    if (!b->bSegLevel && l->bytes > 0) { /* a request the allocator's replay serves (not a segment holding blocks) */
        if (rule < 0 && classify(t, l, &rule, &iLib) != 0) return -1;
        int c = aRule[rule].cat, bScales = c == VT_CAT_STATE || c == VT_CAT_UNKNOWN ? VT_FS_SCALES_UNKNOWN
                                                                                  : vt__cat_scales(c);
        if (rule != R_RESERVED && vt__fs_add(t, l, b->seq, bScales) != 0) return -1;
    }
    if (b->bCurves && l->bytes != 0 && vt__life_begin_ts(&t->f, l) >= 0) { /* its category over its life */
        if (rule < 0 && classify(t, l, &rule, &iLib) != 0) return -1;
        if (vt__catev_add(&b->ev, l, vt__life_begin_ts(&t->f, l), l->bdSeq, l->bytes, rule, iLib) != 0)
            return -1;
        if (l->status != VT_LIFE_LIVE_AT_END && l->freeTs >= 0 &&
            vt__catev_add(&b->ev, l, l->freeTs, b->seq, -l->bytes, rule, iLib) != 0)
            return -1;
    }
    return 0;
}

/* Append part (cat, bytes, count, evidence taken over, owner) to bd. 0 or -1. */
static int part_add(struct vt_breakdown *bd, int cat, int64_t bytes, int64_t count, char *zEvidence, const char *zOwner)
{
    struct vt_bdpart *aNew = realloc(bd->a, sizeof *aNew * (size_t)(bd->n + 1));
    if (!aNew) {
        free(zEvidence);
        return -1;
    }
    bd->a = aNew;
    aNew[bd->n].cat = cat;
    aNew[bd->n].bytes = bytes;
    aNew[bd->n].count = count;
    aNew[bd->n].zEvidence = zEvidence;
    snprintf(aNew[bd->n].zOwner, sizeof aNew[0].zOwner, "%s", zOwner ? zOwner : "");
    bd->n++;
    return zEvidence ? 0 : -1;
}

/* "rule text: 12 allocations, 1.50 GiB; other rule: ..." for the rules of category cat in p, largest first. */
static char *rules_evidence(const struct vt_bdrun *b, const struct moment *p, int cat, int nobwdCat)
{
    int aIdx[R_N], n = 0;
    char *z = NULL;
    for (int r = 0; r < R_N; r++) {
        int c = r == R_NOBWD ? nobwdCat : aRule[r].cat;
        if (c != cat || p->aCount[r] == 0 || r == R_LIB) continue;
        int j = n++;
        while (j > 0 && p->aBytes[aIdx[j - 1]] < p->aBytes[r]) aIdx[j] = aIdx[j - 1], j--;
        aIdx[j] = r;
    }
    for (int i = 0; i < n; i++) {
        char zB[32], *zNew;
        int r = aIdx[i];
        vt__fmt_bytes(p->aBytes[r], zB, sizeof zB);
        zNew = vt__strdupf("%s%s%s%s: %lld allocation%s, %s", z ? z : "", z ? "; " : "",
                           b->bSegLevel && r != R_RUNTIME && r < R_SEG_OPT && r >= R_NCCL ? "segments of " : "",
                           r == R_NOBWD && nobwdCat == VT_CAT_TRANSIENT
                               ? "made and freed within a training step with no backward-pass frame to tell "
                                 "activations from temporaries"
                               : aRule[r].z,
                           (long long)p->aCount[r], p->aCount[r] == 1 ? "" : "s", zB);
        free(z);
        if (!(z = zNew)) return NULL;
    }
    return z ? z : vt__strdupf("%s", "");
}

/* Sort bd's parts largest first, unknown last. */
static void parts_sort(struct vt_breakdown *bd)
{
    for (int i = 1; i < bd->n; i++)
        for (int j = i; j > 0; j--) {
            struct vt_bdpart *a = &bd->a[j - 1], *c = &bd->a[j];
            int bSwap = a->cat == VT_CAT_UNKNOWN ? c->cat != VT_CAT_UNKNOWN
                                                 : c->cat != VT_CAT_UNKNOWN && c->bytes > a->bytes;
            if (!bSwap) break;
            struct vt_bdpart x = *a;
            *a = *c;
            *c = x;
        }
}

/* A part of bd that is a figure, not allocations (bytes > 0 only; evidence zEvidence), added to *pSum. 0 or -1. */
static int figure_part(struct vt_breakdown *bd, int cat, int64_t bytes, const char *zEvidence, int64_t *pSum)
{
    if (bytes <= 0) return 0;
    if (part_add(bd, cat, bytes, 0, vt__strdupf("%s", zEvidence), NULL) != 0) return -1;
    *pSum += bytes;
    return 0;
}

/*
 * What other processes held at most on device acct when this process's context was created, for
 * breakdown bd (othersAtMost; -1 unknown): the device's use then (meta
 * device.D.used_at_context_bytes) less CUPTI's buffers (cupti.device_bytes.D: the rest was the
 * context itself and the other processes), or less, NVML's reading of the device's use before
 * the job was launched (nvml.device.D.used_at_launch_bytes). With bUnknown, bd->zOthers says why
 * their share is not told apart. 0 or -1.
 */
static int others_bound(const struct vt_trace *t, int acct, const struct vt_others *o, int bUnknown,
                        struct vt_breakdown *bd)
{
    char zKey[64], zB[32];
    int64_t u0, cupti;
    int bLaunch = 0; /* the bound is NVML's reading before launch */
    snprintf(zKey, sizeof zKey, "device.%d.used_at_context_bytes", acct);
    u0 = vt__read_meta_int(&t->f, zKey);
    snprintf(zKey, sizeof zKey, "cupti.device_bytes.%d", acct);
    cupti = vt__read_meta_int(&t->f, zKey);
    bd->othersAtMost = u0 < 0 ? -1 : cupti > 0 ? (u0 > cupti ? u0 - cupti : 0) : u0;
    if (o->usedAtLaunch >= 0 && (bd->othersAtMost < 0 || o->usedAtLaunch < bd->othersAtMost))
        bd->othersAtMost = o->usedAtLaunch, bLaunch = 1;
    if (!bUnknown) return 0;
    if (bLaunch)
        bd->zOthers = vt__strdupf("in the CUDA context part, not told apart (cuMemGetInfo counts every process, and "
                                  "NVML's process lists were not read); before the job was launched the device had "
                                  "%s in use (NVML, with the driver's own reserve): other processes' memory then",
                                  vt__fmt_bytes(bd->othersAtMost, zB, sizeof zB));
    else if (bd->othersAtMost >= 0)
        bd->zOthers = vt__strdupf("in the CUDA context part, not told apart (cuMemGetInfo counts every process, and "
                                  "the device is read only once this process's context exists); when the context was "
                                  "created the device had %s in use%s: the context itself and other processes' memory "
                                  "then",
                                  vt__fmt_bytes(bd->othersAtMost, zB, sizeof zB),
                                  cupti > 0 ? " besides CUPTI's buffers" : "");
    else
        bd->zOthers = vt__strdupf("%s", "in the CUDA context part, not told apart (cuMemGetInfo counts every process; "
                                        "the device's use before this process's context is not in the trace)");
    return bd->zOthers ? 0 : -1;
}

/*
 * The evidence of other processes' part: o's reading (bytes of nProc processes, nearest the
 * moment or before launch), capped at room (what the device used beyond the traced memory) when
 * it said more. Malloc'd; NULL when out of memory.
 */
static char *others_evidence(const struct vt_trace *t, const struct vt_others *o, int64_t room)
{
    char zB[32], zAt[64], zCap[160] = "";
    if (o->bytes > room)
        snprintf(zCap, sizeof zCap, "; NVML said %s, more than the device used beyond the traced memory then: "
                 "capped at that", vt__fmt_bytes(o->bytes, zB, sizeof zB));
    if (!o->bLaunch) {
        vt__fmt_at(t, o->sampleTs, zAt, sizeof zAt);
        return vt__strdupf("every process on the device but this one, by NVML's per-process memory (read by vramtrace "
                           "record): %d process%s at its reading nearest the moment, at %s (%d reading%s)%s",
                           o->nProc, o->nProc == 1 ? "" : "es", zAt, o->nSample, o->nSample == 1 ? "" : "s", zCap);
    }
    return vt__strdupf("NVML's per-process memory before the job was launched (read by vramtrace record): %d other "
                       "process%s then; %s: memory other processes took since is in the CUDA context part%s",
                       o->nProc, o->nProc == 1 ? "" : "es",
                       o->zNote ? o->zNote : "no reading while this process ran", zCap);
}

/*
 * Moment p as breakdown bd summing to total (basis zBasis): the categories of what was live,
 * the cache (reserved less the blocks in it), memory before the trace, what the device used
 * beyond this process's traced memory (used >= 0, how it was read in zUsed), a memory pool's
 * reserved bytes beyond its live ones (poolCache > 0: in the cache), and what is left unknown.
 * 0 or -1.
 */
static int build(struct vt_trace *t, const struct moment *p, int64_t total, const char *zBasis, int64_t before,
                 int64_t poolCache, int64_t used, const char *zUsed, struct vt_breakdown *bd)
{
    const struct vt_bdrun *b = t->pBd;
    int64_t aCatBytes[VT_CAT_N] = {0}, aCatCount[VT_CAT_N] = {0}, sum = 0, others = -1; /* others: NVML's, -1 none */
    int nobwdCat = b->bEngineSeen || vt__shows_training(t) ? VT_CAT_TRANSIENT : VT_CAT_TEMP;
    struct vt_others oth;
    char zB[32], zC[32];
    vt__breakdown_clear(bd);
    bd->untraced = used >= 0 ? 0 : -1;
    bd->bSegment = b->bSegLevel;
    bd->bPages = b->bPages;
    bd->ts = p->stateTs;
    bd->zBasis = zBasis;
    for (int r = 0; r < R_N; r++) {
        int c = r == R_NOBWD ? nobwdCat : aRule[r].cat;
        if (r == R_RESERVED) continue;
        aCatBytes[c] += p->aBytes[r];
        aCatCount[c] += p->aCount[r];
    }
    for (int c = 0; c < VT_CAT_N; c++) {
        if (c == VT_CAT_LIB || aCatCount[c] == 0 || aCatBytes[c] == 0) continue; /* empty allocations: no part */
        if (part_add(bd, c, aCatBytes[c], aCatCount[c], rules_evidence(b, p, c, nobwdCat), NULL) != 0) return -1;
        sum += aCatBytes[c];
    }
    for (int k = 0; k < LIB_MAX; k++) {
        if (p->aLibBytes[k] == 0) continue;
        char *z = vt__strdupf("%s%s: %lld allocation%s", b->bSegLevel ? "segments of " : "", aRule[R_LIB].z,
                              (long long)p->aLibCount[k], p->aLibCount[k] == 1 ? "" : "s");
        if (part_add(bd, VT_CAT_LIB, p->aLibBytes[k], p->aLibCount[k], z, b->azLib[k]) != 0) return -1;
        sum += p->aLibBytes[k];
    }
    if (p->aCount[R_RESERVED] > 0) { /* the segments PyTorch reserved, less the blocks live in them */
        int64_t cache = p->aBytes[R_RESERVED] - p->tensorBytes;
        if (cache < 0) cache = 0; /* blocks outside the recorded segments: the parts then exceed (caught below) */
        vt__fmt_bytes(p->aBytes[R_RESERVED], zB, sizeof zB);
        vt__fmt_bytes(p->tensorBytes, zC, sizeof zC);
        if (part_add(bd, VT_CAT_CACHE, cache, 0,
                     vt__strdupf("%lld %s%s reserved by the caching allocator (%s) less the tensors live in them "
                                 "(%s): free for tensors, not for other allocations",
                                 (long long)p->aCount[R_RESERVED], b->bExpand ? "expandable segments' page" : "segment",
                                 p->aCount[R_RESERVED] == 1 ? "" : "s", zB, zC),
                     NULL) != 0)
            return -1;
        sum += cache;
    }
    if (figure_part(bd, VT_CAT_CACHE, poolCache,
                    "the memory pool's reserved bytes beyond its live allocations (cudaMallocAsync): free for the "
                    "pool's allocations, given back when it is trimmed", &sum) != 0 ||
        figure_part(bd, VT_CAT_BEFORE, before,
                    "allocated when the trace began, not in its allocations (the profiler's Total Allocated at its "
                    "first event less that event's own bytes)", &sum) != 0)
        return -1;
    if (used >= 0 && vt__read_others(&t->f, p->acct, p->stateTs, &oth) == 1 && used > sum) /* NVML's others */
        others = oth.bytes < used - sum ? oth.bytes : used - sum;
    if (used >= 0 && used > sum) {
        int64_t ctx = used - sum - (others > 0 ? others : 0);
        char *z;
        int i;
        vt__fmt_bytes(used, zB, sizeof zB);
        vt__fmt_bytes(sum, zC, sizeof zC);
        z = vt__strdupf("device in use (%s: %s) less this process's traced memory (%s)%s: the CUDA context, the "
                        "driver, memory no traced call made%s",
                        zB, zUsed, zC, others > 0 ? " and other processes' (NVML)" : "",
                        others >= 0 ? "" : ", and any other process's memory (not told apart: see other processes)");
        for (i = 0; i < bd->n && bd->a[i].cat != VT_CAT_CONTEXT; i++) {
        }
        if (!z) return -1;
        if (ctx == 0) { /* NVML's others take all of it */
            free(z);
        } else if (others < 0 && ctx > VT_CONTEXT_MAX) { /* more than a context takes: other processes' too */
            char *zMore;
            vt__fmt_bytes(VT_CONTEXT_MAX, zB, sizeof zB);
            zMore = vt__strdupf("%s; more than a CUDA context and the driver take (at most %s): other processes' "
                                "memory, most likely, which NVML's readings would tell apart",
                                z, zB);
            free(z);
            if (!zMore || part_add(bd, VT_CAT_CTXOTHERS, ctx, 0, zMore, NULL) != 0) return -1;
        } else if (i < bd->n) { /* the runtime's own allocations are part of it: one part */
            char *zBoth = vt__strdupf("%s; %s", bd->a[i].zEvidence, z);
            free(z);
            if (!zBoth) return -1;
            free(bd->a[i].zEvidence);
            bd->a[i].zEvidence = zBoth;
            bd->a[i].bytes += ctx;
        } else if (part_add(bd, VT_CAT_CONTEXT, ctx, 0, z, NULL) != 0) {
            return -1;
        }
        if (others >= 0 && part_add(bd, VT_CAT_OTHERS, others, 0, others_evidence(t, &oth, used - sum), NULL) != 0)
            return -1;
        bd->untraced = used - sum;
        sum = used;
    }
    if (used >= 0 && others_bound(t, p->acct, &oth, others < 0, bd) != 0) return -1;
    if (sum < total) {
        vt__fmt_bytes(total - sum, zB, sizeof zB);
        if (part_add(bd, VT_CAT_UNKNOWN, total - sum, 0,
                     vt__strdupf("the %s figure less every part the trace explains (%s)", zBasis, zB), NULL) != 0)
            return -1;
        sum = total;
    }
    bd->total = sum; /* the parts' sum: the figure itself unless the recorded blocks overflow their segments */
    bd->segFirstFwd = b->bSegLevel && first_trained(b) >= 0 ? p->firstFwd : -1;
    parts_sort(bd);
    {   /* a peak in the forward pass: gradients still held from the backward before it */
        int k = -1;
        if (b->bIterSpans) k = vt__iter_at(t, p->ts);
        else
            for (int i = 0; i < b->nSpan && b->aSpan[i].start <= p->ts; i++) k = i;
        if (k >= 0 && (b->aSpan[k].bwd < 0 || p->ts < b->aSpan[k].bwd))
            bd->gradAvoidable = p->aBytes[R_GRAD_KEPT] + p->aBytes[R_GRAD_ACC];
    }
    return 0;
}

/* The bytes allocated before the trace on device acct (an import that began mid-run), 0 when none. */
static int64_t before_trace(const struct vt_trace *t, int acct)
{
    char zKey[80], zV[32];
    snprintf(zKey, sizeof zKey, "kineto.device.%d.allocated_before_trace", acct);
    if (vt__meta_get(t->f.db, zKey, zV, sizeof zV) != 1) return 0;
    return strtoll(zV, NULL, 10) > 0 ? strtoll(zV, NULL, 10) : 0;
}

/* What t's allocation rows measure, as a breakdown's basis: "reserved" (caching-allocator segments) or "allocated"
 * (a snapshot of the allocator's blocks alone, without its segments, knows only what was allocated). */
static const char *level_basis(const struct vt_trace *t)
{
    if (t->f.fig.level == VT_LEVEL_TENSORS) return "allocated";
    if (t->f.bSegments || t->pBd->bTensorsIn || !strcmp(t->f.zSource, "pytorch_snapshot")) return "reserved";
    return "allocated";
}

/*
 * The device memory in use at device d's peak moment p (traced: total, a pool's cache in it) where the tracer
 * sampled the device: the traced figure plus what the device used beyond the traced memory at the
 * sample nearest the moment (total less free, less the traced level then), said in zHow; -1 when
 * no sample of d reached the replay, or the nearest says less in use than traced (contradicts it).
 */
static int64_t used_at_peak(const struct vt_trace *t, const struct vt_device *d, const struct moment *p,
                            int64_t total, char *zHow, size_t nHow)
{
    const struct vt_bdrun *b = t->pBd;
    int k = -1;
    int64_t beyond, gap = -1;
    char zB[32], zAt[64];
    for (int i = 0; i < b->nSample; i++) {
        int64_t g = b->aSample[i].ts > p->stateTs ? b->aSample[i].ts - p->stateTs : p->stateTs - b->aSample[i].ts;
        if (b->aSample[i].device != d->id || b->aSampleTraced[i] < 0) continue;
        if (k < 0 || g <= gap) k = i, gap = g;
    }
    if (k < 0) return -1;
    beyond = b->aSample[k].totalBytes - b->aSample[k].freeBytes - b->aSampleTraced[k];
    if (beyond < 0) return -1;
    vt__fmt_at(t, b->aSample[k].ts, zAt, sizeof zAt);
    snprintf(zHow, nHow, "the traced peak plus the %s the device used beyond the traced memory at its sample nearest "
             "the peak, at %s: total less free, cuMemGetInfo", vt__fmt_bytes(beyond, zB, sizeof zB), zAt);
    return total + beyond;
}

/*
 * Where the figures know a reserved peak of device d above what its breakdown bd sums to (a torch.profiler
 * trace's Total Reserved beside allocation rows that are the allocator's blocks), the allocator's cache as a
 * part: that reserved peak less what bd explains, so that the parts sum to the reserved peak the headline gives
 * (bd's basis "reserved", or "process reserved" with memory from before the trace). The cache's bytes, 0 when
 * none, or -1 when out of memory.
 */
static int64_t reserved_cache(const struct vt_trace *t, const struct vt_device *d, struct vt_breakdown *bd)
{
    const struct vt_figdev *fd = vt__fig_dev(&t->f, d->id);
    int64_t res = fd ? vt__fig_headline(fd) : -1, cache;
    char zR[32], zA[32];
    if (res <= bd->total || bd->total < 0) return 0;
    cache = res - bd->total;
    vt__fmt_bytes(res, zR, sizeof zR);
    vt__fmt_bytes(bd->total, zA, sizeof zA);
    if (part_add(bd, VT_CAT_CACHE, cache, 0,
                 vt__strdupf("the reserved peak (%s%s) less the allocated memory the other parts explain (%s): "
                             "reserved by the caching allocator, not allocated (the two peaks may fall at different "
                             "moments; the trace has no segments to tell the cache over time)",
                             zR, fd->procReserved >= 0 ? ", torch.profiler's Total Reserved" : "", zA),
                 NULL) != 0)
        return -1;
    bd->total = res;
    bd->zBasis = !strcmp(bd->zBasis, "process") ? "process reserved" : "reserved";
    parts_sort(bd);
    return cache;
}

/* Device d's category curve from the curves' changes (catcurve.c), each rule's series resolved as build
 * sums a moment (a change of no backward pass by whether the trace trains, the allocator's segments the
 * cache); before and cache as vt__catcurve_make takes them. 0 or -1. */
static int curve_make(struct vt_trace *t, struct vt_device *d, int64_t before, int64_t cache)
{
    const struct vt_bdrun *b = t->pBd;
    int aSeries[R_N];
    int nobwdCat = b->bEngineSeen || vt__shows_training(t) ? VT_CAT_TRANSIENT : VT_CAT_TEMP;
    for (int r = 0; r < R_N; r++) aSeries[r] = r == R_NOBWD ? nobwdCat : r == R_RESERVED ? VT_CAT_CACHE : aRule[r].cat;
    return vt__catcurve_make(d, &b->ev, aSeries, b->azLib, b->bTensorsIn, t->f.bTimes ? t->f.t0 : 0, before, cache);
}

int vt__bd_end(struct vt_trace *t)
{
    struct vt_bdrun *b = t->pBd;
    int rc = 0;
    if (!b) return 0;
    if (b->bCurves) vt__catev_sort(&b->ev); /* by account */
    for (int i = 0; rc == 0 && i < t->tl.nDev; i++) {
        struct vt_device *d = &t->tl.aDev[i];
        struct moment *p = NULL;
        int64_t total, before, pool, used, cache = 0;
        const char *zBasis;
        char zUsed[256];
        vt__breakdown_clear(&d->bd);
        if (d->id >= 0) vt__peaklist_end(d);
        if (d->id < 0 || !vt__memory_known(t)) continue;
        for (int k = 0; k < b->nPeak; k++)
            if (b->aPeak[k].acct == d->id && b->aPeak[k].bTaken) p = &b->aPeak[k];
        if (!p) continue;
        total = d->peak; /* the one place a peak's breakdown takes its figure */
        zBasis = level_basis(t);
        before = before_trace(t, d->id);
        if (before > 0) total += before, zBasis = "process";
        pool = p->poolReserved - d->peak; /* a cudaMallocAsync pool holding more than the live allocations */
        if (pool < 0) pool = 0;
        if ((used = used_at_peak(t, d, p, total + pool, zUsed, sizeof zUsed)) >= 0) {
            /* device used: the pool's cache is a part of it (what the device holds), not beside it */
            rc = build(t, p, used, "device used", before, pool, used, zUsed, &d->bd);
        } else {
            rc = build(t, p, total, zBasis, before, 0, -1, NULL, &d->bd);
            d->bd.poolCache = pool;
            if (rc == 0 && pool == 0 && (cache = reserved_cache(t, d, &d->bd)) < 0) rc = -1;
        }
        if (rc == 0 && b->bTensorsIn) vt__bdlayout_frag(&p->lay, p->req, &d->bd);
        if (rc == 0 && b->bCurves) rc = curve_make(t, d, before, cache);
    }
    for (int i = 0; rc == 0 && i < t->nOom && i < b->nOom; i++) {
        struct vt_oom *o = &t->aOom[i];
        int64_t used = o->freeBytes >= 0 && o->totalBytes > 0 ? o->totalBytes - o->freeBytes : -1;
        int64_t held = b->aOom[i].cudaBytes + (b->bTensorsIn ? 0 : b->aOom[i].tensorBytes);
        vt__breakdown_clear(&o->bd);
        if (!b->aOom[i].bTaken) continue;
        if (used >= 0 && used < held) used = -1; /* a free figure the trace contradicts: not used */
        rc = build(t, &b->aOom[i], used >= 0 ? used : held, used >= 0 ? "device used" : level_basis(t), 0,
                   used >= 0 ? o->poolCached : 0, used, "total less free, cuMemGetInfo at the OOM", &o->bd);
        if (rc == 0 && b->bTensorsIn && !b->aOom[i].bLayOver) /* the holes the failed request met */
            vt__bdlayout_frag(&b->aOom[i].lay, o->requested, &o->bd);
    }
    vt__bd_free(t);
    return rc;
}

void vt__bd_free(struct vt_trace *t)
{
    struct vt_bdrun *b = t->pBd;
    if (!b) return;
    for (int i = 0; i < b->nPeak; i++) free(b->aPeak[i].lay.a);
    for (int i = 0; i < b->nOom; i++) free(b->aOom[i].lay.a);
    free(b->aPeak);
    free(b->aOom);
    free(b->aF);
    free(b->aSpan);
    free(b->ev.a);
    free(b->aSample);
    free(b->aSampleTraced);
    free(b);
    t->pBd = NULL;
}

void vt__breakdown_clear(struct vt_breakdown *bd)
{
    for (int i = 0; i < bd->n; i++) free(bd->a[i].zEvidence);
    free(bd->a);
    free(bd->zOthers);
    memset(bd, 0, sizeof *bd);
    bd->total = -1;
    bd->othersAtMost = -1;
    bd->fragBytes = bd->fragReq = -1;
    bd->segFirstFwd = -1;
}

const struct vt_bdpart *vt__bd_part(const struct vt_breakdown *b, int cat)
{
    for (int i = 0; i < b->n; i++)
        if (b->a[i].cat == cat) return &b->a[i];
    return NULL;
}
