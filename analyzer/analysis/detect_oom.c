/* Detector: out-of-memory events: what was asked, what was free, what was live, and why. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

#define OTHERS_MIN ((int64_t)1 << 30)      /* beyond the ~0.3-0.5 GiB a CUDA context takes */
#define OTHERS_NVML_MIN ((int64_t)64 << 20) /* NVML's figure holds no context of this process: a smaller floor */

/*
 * Other processes' memory at OOM o by NVML, where `vramtrace record` read it (meta nvml.*): the
 * reading nearest the OOM (a sample while the job ran, else the one before launch), capped at what
 * the device used beyond this process's held memory when that is known (a sample can be stale).
 * Into o->othersNvml (-1 not read) and its reading's count, time and kind.
 */
static void oom_others_nvml(const struct vt_trace *t, struct vt_oom *o)
{
    struct vt_others oth;
    o->othersNvml = o->othersNvmlTs = -1;
    o->othersNvmlProcs = o->bOthersLaunch = 0;
    o->zOthersProcs = NULL;
    if (vt__read_others(&t->f, o->device, o->ts, &oth) != 1) return;
    o->othersNvml = o->others >= 0 && oth.bytes > o->others ? o->others : oth.bytes;
    o->othersNvmlProcs = oth.nProc;
    o->zOthersProcs = oth.zProcs;
    o->bOthersLaunch = oth.bLaunch;
    o->othersNvmlTs = oth.sampleTs;
}

/*
 * The processes of NVML's list zProcs ("PID BYTES NAME;...") into z (size n) as "pid 4242 (python,
 * 2.00 GiB), ...": "pids and names are not recorded" when zProcs is NULL, "no process listed"
 * when it is empty.
 */
static void others_procs_text(const char *zProcs, char *z, size_t n)
{
    size_t k = 0;
    snprintf(z, n, "%s", !zProcs ? "pids and names are not recorded" : "no process listed");
    for (const char *p = zProcs; p && *p && k + 80 < n;) {
        unsigned pid;
        long long bytes;
        char zName[32], zB[32];
        int m;
        if (sscanf(p, "%u %lld %31[^;]", &pid, &bytes, zName) != 3) break;
        m = snprintf(z + k, n - k, "%spid %u (%s, %s)", k ? ", " : "", pid, zName,
                     vt__fmt_bytes((int64_t)bytes, zB, sizeof zB));
        if (m < 0 || (size_t)m >= n - k) break;
        k += (size_t)m;
        p = strchr(p, ';');
        p = p ? p + 1 : NULL;
    }
}

/*
 * Which evidence decided other processes' part of OOM o, into z (size n): NVML's reading (by
 * process count and time), else, where it made the verdict "another process" (bOthersVerdict),
 * the device's use less what this process held, which counts this process's CUDA context and
 * untraced memory too.
 */
static void oom_others_evidence(const struct vt_trace *t, const struct vt_oom *o, int bOthersVerdict, char *z, size_t n)
{
    char zO[32], zAt[32], zD[32], zWhen[80], zRest[160] = "", zProcs[400];
    z[0] = 0;
    if (o->othersNvml >= 0) {
        others_procs_text(o->zOthersProcs, zProcs, sizeof zProcs);
        vt__fmt_bytes(o->othersNvml, zO, sizeof zO);
        if (o->bOthersLaunch) {
            snprintf(zWhen, sizeof zWhen, "%s", "its reading before the job was launched");
        } else {
            vt__fmt_at(t, o->othersNvmlTs, zAt, sizeof zAt);
            snprintf(zWhen, sizeof zWhen, "its reading nearest the failure, at %s", zAt);
        }
        if (o->others >= 0)
            snprintf(zRest, sizeof zRest, "; the rest of the %s the device used beyond what this process held is its "
                     "CUDA context, untraced memory and the driver's", vt__fmt_bytes(o->others, zD, sizeof zD));
        snprintf(z, n,
                 " Other processes: %s in %d process%s by NVML's per-process memory (read by vramtrace record, %s; "
                 "%s)%s. NVML's figure, not the device's use, was judged.",
                 zO, o->othersNvmlProcs, o->othersNvmlProcs == 1 ? "" : "es", zWhen, zProcs, zRest);
    } else if (o->others >= 0 && bOthersVerdict) {
        snprintf(z, n, "%s",
                 " Other processes were not read through NVML (vramtrace record reads them): the device's use less "
                 "what this process held, which counts its CUDA context and untraced memory too, was judged.");
    }
}

/*
 * The figures of OOM o reconciled into z (size n), empty when the trace has one level only: of
 * what the process held (the caching allocator's segments), how much tensors had allocated and
 * how much sat cached, and what the device had in use as nvidia-smi shows it (total - free).
 */
static void oom_reconcile(const struct vt_trace *t, const struct vt_oom *o, char *z, size_t n)
{
    char zA[32], zC[32], zU[32];
    z[0] = 0;
    if (o->tensorAllocated < 0 || !t->f.bHaveTensors || t->f.bTensors || t->f.nDevAlloc == 0) return;
    vt__fmt_bytes(o->tensorAllocated, zA, sizeof zA);
    vt__fmt_bytes(o->held > o->tensorAllocated ? o->held - o->tensorAllocated : 0, zC, sizeof zC);
    vt__fmt_bytes(o->totalBytes > 0 && o->freeBytes >= 0 ? o->totalBytes - o->freeBytes : -1, zU, sizeof zU);
    snprintf(z, n,
             " Of what this process held, %s was allocated by tensors and %s sat cached in the allocator's "
             "segments (free for tensors, not for other requests); the device had %s in use as nvidia-smi "
             "shows it (held, plus the CUDA context, library workspaces and other processes).",
             zA, zC, o->totalBytes > 0 && o->freeBytes >= 0 ? zU : "an unknown amount");
}

/*
 * Its attempts of failure p, when it has several ("The request failed 3 times (4.00 GiB at 1.20 s,
 * 4.00 GiB at 1.21 s, 2.00 GiB at 1.22 s); at the first attempt this process held 14.0 GiB."), and
 * for a failure the job ended at, what was live then, into z (size n).
 */
static void oom_attempts(const struct vt_trace *t, const struct vt_oomfail *p, char *z, size_t n)
{
    char zH0[32], zB[32], zAt[32], zList[480] = "";
    size_t k = 0;
    z[0] = 0;
    if (p->nAttempt > 1) {
        for (int a = 0; a < p->nAttempt && k + 64 < sizeof zList; a++) {
            const struct vt_oom *o = &t->aOom[p->iFirst + a];
            int m;
            if (a == 8) {
                snprintf(zList + k, sizeof zList - k, ", and %d more", p->nAttempt - 8);
                break;
            }
            vt__fmt_bytes(o->requested, zB, sizeof zB);
            vt__fmt_at(t, o->ts, zAt, sizeof zAt);
            m = snprintf(zList + k, sizeof zList - k, "%s%s at %s", a ? ", " : "", o->requested >= 0 ? zB : "unknown", zAt);
            if (m < 0) break;
            k += (size_t)m < sizeof zList - k ? (size_t)m : sizeof zList - k - 1;
        }
        vt__fmt_bytes(t->aOom[p->iFirst].held, zH0, sizeof zH0);
        snprintf(z, n, " The request failed %d times (%s); at the first attempt this process held %s.", p->nAttempt,
                 zList, zH0);
    }
    if (p->bFatal && p->liveEndCount > 0) {
        size_t m = strlen(z);
        vt__fmt_bytes(p->liveEndBytes, zB, sizeof zB);
        snprintf(z + m, n - m,
                 " The job ended at this failure (nothing of note was allocated and no GPU work ran after it): "
                 "the %s in %lld "
                 "allocation%s still live on device %d when the trace ends was live at the crash, listed above; "
                 "it was not leaked.",
                 zB, (long long)p->liveEndCount, p->liveEndCount == 1 ? "" : "s", p->device);
    }
}

/* The replay's view the verdicts need: the largest allocation each call site had made before the iteration of
 * each OOM began. */
struct oomst {
    int64_t *aSiteMax;      /* by site: its largest judged allocation before the current iteration began */
    int64_t *aSiteNow;      /* by site: its largest since then */
    int nSite;
    int nextIter;           /* the next iteration whose start the replay has not passed */
    int64_t *aBefore;       /* by OOM: its site's largest before its iteration began, 0 none */
    int nBefore;
};

/*
 * A lifetime begins: its site's largest; an OOM: its site's largest before its iteration began (its own
 * step's earlier layers at the shape that fails do not count). 0, or -1 out of memory.
 */
static int oom_event(void *st, const struct vt_trace *t, const struct vt_event *e)
{
    struct oomst *s = st;
    int site = e->type == VT_EV_OOM ? e->o->site : e->l->site;
    if (site >= s->nSite) {
        int n = site + 64;
        int64_t *a = realloc(s->aSiteMax, sizeof *a * (size_t)n), *b;
        if (!a) return -1;
        s->aSiteMax = a;
        if (!(b = realloc(s->aSiteNow, sizeof *b * (size_t)n))) return -1;
        s->aSiteNow = b;
        memset(a + s->nSite, 0, sizeof *a * (size_t)(n - s->nSite));
        memset(b + s->nSite, 0, sizeof *b * (size_t)(n - s->nSite));
        s->nSite = n;
    }
    if (s->nextIter < t->ph.nIter && e->ts >= t->ph.aIter[s->nextIter].start) { /* an iteration began */
        for (int i = 0; i < s->nSite; i++) {
            if (s->aSiteNow[i] > s->aSiteMax[i]) s->aSiteMax[i] = s->aSiteNow[i];
            s->aSiteNow[i] = 0;
        }
        while (s->nextIter < t->ph.nIter && e->ts >= t->ph.aIter[s->nextIter].start) s->nextIter++;
    }
    if (e->type == VT_EV_OOM) {
        int64_t *a = realloc(s->aBefore, sizeof *a * (size_t)(s->nBefore + 1));
        if (!a) return -1;
        s->aBefore = a;
        a[s->nBefore++] = site >= 0 ? s->aSiteMax[site] : 0;
    } else if (site >= 0 && e->l->acct >= 0 && e->l->bytes > s->aSiteNow[site]) {
        s->aSiteNow[site] = e->l->bytes;
    }
    return 0;
}

static void oom_free(void *st)
{
    struct oomst *s = st;
    free(s->aSiteMax);
    free(s->aSiteNow);
    free(s->aBefore);
}

/*
 * What the step of OOM o (the iJudged'th) would need at the shape it asked for, where that shape is
 * larger than before: its request k = 1.5 times or more the largest its call site made earlier (a larger
 * batch or a longer input: a batch-size finder's doubling, a long document), the step inside an iteration
 * with completed ones before it. The steps before peaked at P (device live bytes) over a floor F (the
 * failing iteration's lowest: weights, optimizer state); scaled alike, the step needs F + k (P - F). 0
 * when the shape is not larger or nothing ran before; *pK receives k.
 */
static int64_t scaled_need(const struct vt_trace *t, const struct oomst *s, int iOom, double *pK)
{
    const struct vt_oom *o = &t->aOom[iOom];
    int64_t before = iOom < s->nBefore ? s->aBefore[iOom] : 0, peak = -1, floor;
    int it = vt__iter_at(t, o->ts);
    *pK = 0;
    if (before <= 0 || o->requested < before * 3 / 2 || it < 1) return 0;
    for (int i = 0; i < it; i++)
        if (t->ph.aIter[i].end <= t->ph.aIter[it].start && t->ph.aIter[i].maxLive > peak) peak = t->ph.aIter[i].maxLive;
    floor = t->ph.aIter[it].minLive;
    if (peak <= 0 || floor < 0 || floor > peak) return 0;
    *pK = (double)o->requested / (double)before;
    return floor + (int64_t)(*pK * (double)(peak - floor));
}

/* One finding per failed request (its attempts grouped, vt__oom_failures), with its verdict (stored in each vt_oom too). */
static int oom_end(void *st, struct vt_result *r, int iTrace)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    const struct oomst *s = st;
    for (int q = 0; q < t->nFail; q++) {
        const struct vt_oomfail *pf = &t->aFail[q];
        int i = pf->iFirst, j = pf->iFirst + pf->nAttempt - 1;
        struct vt_oom *o = &t->aOom[pf->iJudged];
        struct vt_finding *f = vt__finding_add(r, iTrace, "oom", VT_SEV_HIGH);
        char zR[32], zF[32], zT[32], zH[32], zO[32], zC[32], zAt[32], zList[1600] = "", zRetry[900], zRecon[400];
        char zOthers[1100], zFree[100], zScaled[400] = "";
        const char *zFix;
        size_t n = 0;
        int p, bCallPhase, bFull, bScaled;
        int64_t others;         /* other processes' bytes as judged: NVML's where read, else device used less held */
        int64_t need, could;    /* the step at its larger shape, scaled from the steps before; what the process could have */
        double ratio;           /* the request over its call site's largest before the step */
        if (!f) return -1;
        for (int k = i; k <= j; k++) oom_others_nvml(t, &t->aOom[k]);
        others = o->othersNvml >= 0 ? o->othersNvml : o->others;
        oom_attempts(t, pf, zRetry, sizeof zRetry);
        if (o->requested < 0) snprintf(zR, sizeof zR, "unknown size"); /* an import that lacks it, never "-1 B" */
        else vt__fmt_bytes(o->requested, zR, sizeof zR);
        vt__fmt_bytes(o->freeBytes, zF, sizeof zF);
        vt__fmt_bytes(o->totalBytes, zT, sizeof zT);
        /* "with F free of T", or what of it is known */
        if (o->freeBytes >= 0)
            snprintf(zFree, sizeof zFree, "with %s free%s%s", zF, o->totalBytes > 0 ? " of " : "",
                     o->totalBytes > 0 ? zT : "");
        else
            snprintf(zFree, sizeof zFree, "with free memory unknown%s%s%s", o->totalBytes > 0 ? " (the device has " : "",
                     o->totalBytes > 0 ? zT : "", o->totalBytes > 0 ? ")" : "");
        vt__fmt_bytes(o->held, zH, sizeof zH);
        vt__fmt_bytes(o->others, zO, sizeof zO);
        vt__fmt_bytes(o->poolCached, zC, sizeof zC);
        vt__fmt_at(t, o->ts, zAt, sizeof zAt);
        oom_reconcile(t, o, zRecon, sizeof zRecon);
        /* free plus cached under 5 % of what this process could use: its live tensors fill the device, and
         * serving this request from the holes would only have moved the failure to the next one */
        bFull = o->freeBytes >= 0 && o->totalBytes > 0 && o->held > 0 &&
                ((o->freeBytes + (o->poolCached > 0 ? o->poolCached : 0)) * 20 <
                 o->totalBytes - (others > 0 ? others : 0));
        /* the memory for this request was there (free, or cached in the pool), but the step asked for a shape larger
         * than the steps before by k, and scaled alike it needs more than the process could have had: the holes
         * were not what it lacked (a batch-size finder's doubled batch was "fragmentation/caching") */
        need = scaled_need(t, s, pf->iJudged, &ratio);
        could = (o->freeBytes > 0 ? o->freeBytes : 0) + (o->held > 0 ? o->held : 0) + (o->poolCached > 0 ? o->poolCached : 0);
        bScaled = need > 0 && o->freeBytes >= 0 && need > could;
        if (bScaled) {
            char zN[32], zP[32];
            snprintf(zScaled, sizeof zScaled,
                     " The request is %.1fx the largest its call site made before (a larger batch or a longer input "
                     "than the steps before); scaled alike from what those steps held, this step needs about %s, more "
                     "than the %s this process could have had (free, held and cached).",
                     ratio, vt__fmt_bytes(need, zN, sizeof zN), vt__fmt_bytes(could, zP, sizeof zP));
        }
        if (o->requested < 0 || o->freeBytes < 0) {
            /* unknown is not real demand: without the request or the free memory there is no verdict */
            o->zVerdict = "cause unknown";
            zFix = o->requested < 0
                       ? "The size of the failed request was not recorded (an imported trace that lacks it): "
                         "record the job with vramtrace to see it, or read it from PyTorch's OOM message "
                         "(\"Tried to allocate ...\")."
                       : "The device's free memory at the failure was not recorded: record the job with "
                         "vramtrace (it asks the driver at the moment of the failure).";
        } else if (o->freeBytes >= o->requested && !bFull && !bScaled) {
            o->zVerdict = "fragmentation/caching";
            zFix = "The device had enough free memory in total but no block large enough: set "
                   "PYTORCH_ALLOC_CONF=expandable_segments:True to cut fragmentation, avoid tensors whose "
                   "sizes change every step (pad to a few bucket sizes), and free large temporaries "
                   "with del before the big allocation.";
        } else if (o->poolCached > 0 && !bFull && !bScaled &&
                   (o->freeBytes > 0 ? o->freeBytes : 0) + o->poolCached >= o->requested) {
            o->zVerdict = "fragmentation/caching";
            zFix = "This process's memory pool was caching enough freed memory but could not hand it "
                   "out for this request: set PYTORCH_ALLOC_CONF=expandable_segments:True, lower the "
                   "pool release threshold, or call torch.cuda.empty_cache() before the large allocation.";
        } else if (others >= (o->othersNvml >= 0 ? OTHERS_NVML_MIN : OTHERS_MIN) &&
                   (o->freeBytes > 0 ? o->freeBytes : 0) + others >= o->requested) {
            o->zVerdict = "another process";
            zFix = "Memory this process did not allocate fills the GPU: check nvidia-smi for other jobs "
                   "or notebook kernels on the same GPU, stop them, or give each job its own GPU with "
                   "CUDA_VISIBLE_DEVICES.";
        } else if (t->f.bSegments && o->held > 0 && (o->totalBytes <= 0 || o->requested <= o->totalBytes - others) &&
                   (o->freeBytes > 0 ? o->freeBytes : 0) + o->held >= o->requested) {
            /* segments only: their holes are invisible, so full segments (real demand) and holed
             * ones (fragmentation) look the same; a request the device could never hold is demand */
            o->zVerdict = "real demand or fragmentation: cannot tell at segment level";
            zFix = "Only caching-allocator segments were recorded, so the free space inside them is not "
                   "known. PyTorch's OOM message tells: when its \"reserved by PyTorch but unallocated\" "
                   "figure is large (near the request or more), it is fragmentation: set "
                   "PYTORCH_ALLOC_CONF=expandable_segments:True (or max_split_size_mb:N) and avoid tensor "
                   "sizes that change every step; otherwise the working set does not fit: a smaller batch "
                   "with gradient accumulation, mixed precision, activation checkpointing. The snapshot "
                   "'vramtrace record' saves at the OOM gives the verdict: 'vramtrace analyze --snapshot "
                   "vramtrace-HOST-PID.oom-1.snapshot.pickle TRACE'.";
        } else {
            o->zVerdict = "real demand";
            zFix = "The working set does not fit: use a smaller batch with gradient accumulation, mixed "
                   "precision (torch.autocast / AMP), activation checkpointing "
                   "(torch.utils.checkpoint), and torch.no_grad() for evaluation; fix any leak or "
                   "retained-memory finding first, it may be what fills the GPU.";
        }
        oom_others_evidence(t, o, !strcmp(o->zVerdict, "another process"), zOthers, sizeof zOthers);
        /* what was live, by site and memory kind, largest group first */
        for (int k = 0; k < o->nGroup && k < r->pOpts->nTop && k < 5 && n + 200 < sizeof zList; k++) {
            char zG[600];
            vt__fmt_group(t, &o->aGroup[k], zG, sizeof zG);
            p = snprintf(zList + n, sizeof zList - n, "%s%s", k ? "; " : "", zG);
            if (p < 0) break;
            n += (size_t)p < sizeof zList - n ? (size_t)p : sizeof zList - n - 1;
        }
        f->bytes = o->requested;
        f->count = pf->nAttempt;
        f->firstTs = pf->firstTs;
        f->lastTs = pf->lastTs;
        f->device = o->device;
        bCallPhase = vt__phase_of_call(t, r->pOpts, o->ts, o->site >= 0 ? t->sites.a[o->site].zSite : NULL,
                                       o->stackId, f->zPhase, sizeof f->zPhase);
        bCallPhase = bCallPhase >= 2 ? bCallPhase : 0;
        f->stackId = o->site >= 0 ? t->sites.a[o->site].stackId : -1;
        f->zSite = o->site >= 0 ? vt__strdupf("%s", t->sites.a[o->site].zSite)
                                : vt__strdupf("site not recorded%s", vt__no_site_help(t));
        if (pf->bRecovered) { /* the program saw no error: said, not a problem */
            f->severity = VT_SEV_INFO;
            zFix = "Nothing to fix: the request was retried at once and succeeded (PyTorch's allocator released its "
                   "cache and asked again, or cuDNN chose an algorithm needing less workspace). If it happens at "
                   "every step it costs time: leave more memory free (a smaller batch) or call "
                   "torch.cuda.empty_cache() less often.";
        }
        f->zTitle = pf->bRecovered
                        ? vt__strdupf("Out of memory, recovered: %s of %s failed on device %d, then the same call "
                                      "site got memory at once", vt__or(vt_api_name(o->api), "allocation"), zR, o->device)
                        : vt__strdupf("Out of memory: %s of %s failed on device %d (%s)",
                                      vt__or(vt_api_name(o->api), "allocation"), zR, o->device, o->zVerdict);
        f->zEvidence = vt__strdupf(
            "At %s, %s%s%s %s; this process held %s in live allocations%s%s%s, "
            "and %s was in use by something else (other processes or contexts).%s Largest live: %s.%s%s%s%s%s%s",
            zAt, o->requested < 0 ? "a request of " : "", zR, o->requested < 0 ? " failed" : " was requested",
            zFree, zH,
            o->poolCached > 0 ? " (pool caching " : "", o->poolCached > 0 ? zC : "",
            o->poolCached > 0 ? " freed)" : "", o->others >= 0 ? zO : "an unknown amount", zOthers,
            n ? zList : "none recorded",
            zRetry, zRecon, bScaled && !strcmp(o->zVerdict, "real demand") ? zScaled : "",
            o->totalBytes > 0 && o->requested > o->totalBytes ? " The request alone is larger than the device's "
                                                                 "total memory." : "",
            t->f.bSegments ? " At segment level the free space inside cached segments is not visible; "
                           "the snapshot 'vramtrace record' saves at the OOM shows it (analyze --snapshot)." : "",
            bCallPhase == 2 ? " It came after the last training step, from an evaluation function, before any "
                              "evaluation kernel ran (phases inferred from kernel names)."
            : bCallPhase == 3 ? " It came from an evaluation function inside what the kernel names made a training "
                                "phase (an evaluation too short to be told from a step by its kernels)." : "");
        f->zFix = vt__strdupf("%s", zFix);
        if (!f->zTitle || !f->zEvidence || !f->zFix || !f->zSite) return -1;
        for (int k = i; k <= j; k++) t->aOom[k].zVerdict = o->zVerdict;
    }
    return 0;
}

const struct vt_detector vt__detector_oom = {
    "oom", sizeof(struct oomst), 1u << VT_EV_BEGIN | 1u << VT_EV_OOM, NULL, oom_event, oom_end, oom_free,
};
