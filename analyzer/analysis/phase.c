/* Phases and iterations: training and evaluation windows from NVTX ranges or kernel names, and growth boundaries. */
#include "analysis.h"

#include <ctype.h>
#include <regex.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Grow a typed array by one element; returns the new element or NULL. */
static void *push(void **pA, int *pN, size_t sz)
{
    char *aNew = realloc(*pA, sz * (size_t)(*pN + 1));
    if (!aNew) return NULL;
    *pA = aNew;
    memset(aNew + sz * (size_t)*pN, 0, sz);
    return aNew + sz * (size_t)(*pN)++;
}

/* Append a phase [a, b) (at least 1 ns long); NULL when out of memory. */
static struct vt_phase *add_phase(struct vt_trace *t, int kind, const char *zName, int64_t a,
                                  int64_t b, const char *zSource)
{
    struct vt_phase *p = push((void **)&t->ph.a, &t->ph.n, sizeof *p);
    if (!p) return NULL;
    p->kind = kind;
    snprintf(p->zName, sizeof p->zName, "%s", zName);
    p->start = a;
    p->end = b > a ? b : a + 1;
    p->zSource = zSource;
    p->firstIter = p->lastIter = -1;
    return p;
}

/* Append an iteration [a, b); NULL when out of memory. */
static struct vt_iter *add_iter(struct vt_trace *t, int64_t a, int64_t b)
{
    struct vt_iter *it = push((void **)&t->ph.aIter, &t->ph.nIter, sizeof *it);
    if (!it) return NULL;
    it->start = a;
    it->end = b > a ? b : a + 1;
    it->phase = -1;
    return it;
}

/*
 * Phases and iterations from NVTX: ranges whose name matches the phase regex are
 * phases (outermost wins), those matching the iteration regex are iterations.
 * Without phase ranges, consecutive iterations of the same kind form a phase.
 * Returns an SQLite code.
 */
static int from_nvtx(struct vt_trace *t, regex_t *pPhase, regex_t *pEval, regex_t *pIter)
{
    static const char *zSql =
        /* a range never closed (the process died inside it, often of the OOM being
         * investigated) lasts to the end of the trace */
        "SELECT r.start, coalesce(r.end, ?1) AS e, s.value FROM nvtx_range r"
        " LEFT JOIN string s ON s.id = r.name_id"
        " WHERE r.kind != 2 AND r.start > 0 AND s.value IS NOT NULL ORDER BY r.start, e DESC";
    sqlite3_stmt *pStmt = NULL;
    int64_t phaseEnd = INT64_MIN, iterEnd = INT64_MIN, optEnd = INT64_MIN;
    int rc = sqlite3_prepare_v2(t->f.db, zSql, -1, &pStmt, NULL);
    if (rc == SQLITE_OK) sqlite3_bind_int64(pStmt, 1, t->f.t1 + 1); /* ends are exclusive */
    int *aIterKind = NULL, nIterKind = 0, nOpt = 0;
    struct vt_iter *aOpt = NULL; /* torch.profiler's optimizer-step ranges: where steps end */
    while (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        int64_t a = sqlite3_column_int64(pStmt, 0), b = sqlite3_column_int64(pStmt, 1);
        const char *zName = (const char *)sqlite3_column_text(pStmt, 2);
        int bEval = regexec(pEval, zName, 0, NULL, 0) == 0;
        rc = SQLITE_OK;
        if (!strncmp(zName, "Optimizer.step#", 15) || !strcmp(zName, "Optimizer.step")) {
            struct vt_iter *pO;
            if (a < optEnd) continue; /* nested: the outer one is the step */
            if (!(pO = push((void **)&aOpt, &nOpt, sizeof *pO))) { rc = SQLITE_NOMEM; break; }
            pO->start = a;
            pO->end = b;
            optEnd = b;
        } else if (regexec(pIter, zName, 0, NULL, 0) == 0) {
            int *pK;
            if (a < iterEnd) continue;
            if (!add_iter(t, a, b)) { rc = SQLITE_NOMEM; break; }
            pK = push((void **)&aIterKind, &nIterKind, sizeof(int));
            if (!pK) { rc = SQLITE_NOMEM; break; }
            *pK = regexec(pPhase, zName, 0, NULL, 0) == 0 ? (bEval ? VT_PHASE_EVAL : VT_PHASE_TRAIN) : -1;
            iterEnd = b;
        } else if (regexec(pPhase, zName, 0, NULL, 0) == 0) {
            int kind = bEval ? VT_PHASE_EVAL : VT_PHASE_TRAIN;
            if (a < phaseEnd) {
                /* nested: ignored, unless it is of the other kind (validation run inside a
                 * "train" range), which splits the enclosing phase around it */
                struct vt_phase *p = &t->ph.a[t->ph.n - 1];
                char zOuter[sizeof p->zName];
                int outerKind = p->kind;
                int64_t outerEnd = p->end;
                if (p->kind == kind || b > phaseEnd) continue;
                snprintf(zOuter, sizeof zOuter, "%s", p->zName);
                p->end = a;
                if (p->end <= p->start) t->ph.n--; /* nothing of it before the nested range */
                if (!add_phase(t, kind, zName, a, b, "nvtx") ||
                    (b < outerEnd && !add_phase(t, outerKind, zOuter, b, outerEnd, "nvtx"))) {
                    rc = SQLITE_NOMEM;
                    break;
                }
                continue;
            }
            if (!add_phase(t, kind, zName, a, b, "nvtx")) {
                rc = SQLITE_NOMEM;
                break;
            }
            phaseEnd = b;
        }
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(pStmt);
    /*
     * No iteration marked, but optimizer steps are (record_function around optimizer.step, as
     * torch.profiler and PyTorch's snapshots write them): each step ends an iteration, which began
     * where the previous one ended (the first at the trace's start; none before the start of the
     * phase it ends in). Each such iteration trains.
     */
    for (int i = 0, bNone = t->ph.nIter == 0; rc == SQLITE_OK && bNone && i < nOpt; i++) {
        int64_t a = i ? aOpt[i - 1].end : t->f.t0;
        int k = vt__phase_at(t, aOpt[i].start), *pK;
        if (k >= 0 && t->ph.a[k].start > a) a = t->ph.a[k].start;
        if (!add_iter(t, a, aOpt[i].end)) rc = SQLITE_NOMEM;
        else if (!(pK = push((void **)&aIterKind, &nIterKind, sizeof(int)))) rc = SQLITE_NOMEM;
        else *pK = VT_PHASE_TRAIN;
        if (rc == SQLITE_OK && i + 1 == nOpt) t->ph.bOptIter = 1;
    }
    free(aOpt);
    if (rc == SQLITE_OK && t->ph.n == 0) {
        for (int i = 0; i < t->ph.nIter && rc == SQLITE_OK; i++) {
            struct vt_phase *p = t->ph.n ? &t->ph.a[t->ph.n - 1] : NULL;
            if (aIterKind[i] < 0) continue;
            if (p && p->kind == aIterKind[i] && (i == 0 || aIterKind[i - 1] == aIterKind[i]))
                p->end = t->ph.aIter[i].end;
            else if (!add_phase(t, aIterKind[i], aIterKind[i] == VT_PHASE_EVAL ? "evaluation" : "training",
                                t->ph.aIter[i].start, t->ph.aIter[i].end, "nvtx"))
                rc = SQLITE_NOMEM;
        }
    }
    free(aIterKind);
    return rc;
}

/*
 * The next name token of z from *pi into zTok (lower case, truncated to nTok - 1): a run of
 * letters, cut where lower case turns upper (winogradWgradData: winograd, wgrad, data) and
 * before the last capital of an upper-case run followed by lower case (SGDFunctor: sgd,
 * functor). Digits and punctuation separate tokens, which also splits mangled names
 * (29vectorized_elementwise_kernelILi4E). Returns 0 at the end of the name.
 */
static int next_token(const char *z, size_t *pi, char *zTok, size_t nTok)
{
    size_t i = *pi, n = 0;
    while (z[i] && !isalpha((unsigned char)z[i])) i++;
    if (!z[i]) {
        *pi = i;
        return 0;
    }
    for (;;) {
        unsigned char c = (unsigned char)z[i++], d = (unsigned char)z[i];
        if (n + 1 < nTok) zTok[n++] = (char)tolower(c);
        if (!isalpha(d) || (islower(c) && isupper(d)) ||
            (isupper(c) && isupper(d) && islower((unsigned char)z[i + 1])))
            break;
    }
    zTok[n] = 0;
    *pi = i;
    return 1;
}

/* Index of zTok in the NULL-terminated list az, or -1. */
static int token_in(const char *zTok, const char *const *az)
{
    for (int i = 0; az[i]; i++)
        if (!strcmp(zTok, az[i])) return i;
    return -1;
}

int vt__kernel_role(const char *zName)
{
    /* whole tokens only: "lamb" must not match the "{lambda(float)#1}" of every PyTorch
     * elementwise kernel, nor "sgd" a part of another word */
    static const char *const azOpt[] = {"adam", "adamw", "adamax", "nadam", "radam", "sgd", "lamb", "lars",
                                        "rmsprop", "adagrad", "adadelta", "momentum", "optimizer", NULL};
    static const char *const azBwd[] = {"backward", "bwd", "bw", "wgrad", "dgrad", "grad", "autograd",
                                        "bprop", NULL};
    char zTok[32], zPrev[32] = "", zPrev2[32] = "";
    size_t i = 0;
    int role = VT_KROLE_OTHER;
    if (!zName) return VT_KROLE_OTHER;
    while (next_token(zName, &i, zTok, sizeof zTok)) {
        /* multi_tensor_apply_kernel: the fused and foreach optimizers (Adam, SGD, apex) */
        if (token_in(zTok, azOpt) >= 0 ||
            (!strcmp(zTok, "apply") && !strcmp(zPrev, "tensor") && !strcmp(zPrev2, "multi")))
            return VT_KROLE_OPT;
        if (token_in(zTok, azBwd) >= 0) role = VT_KROLE_BWD;
        else if (!strcmp(zTok, "nccl") && role == VT_KROLE_OTHER) role = VT_KROLE_COLL;
        memcpy(zPrev2, zPrev, sizeof zPrev);
        memcpy(zPrev, zTok, sizeof zTok);
    }
    return role;
}

/* 2 for optimizer kernels, 1 for backward kernels, 0 for the rest (forward, collectives, other). */
static int kernel_class(const char *z)
{
    int role = vt__kernel_role(z);
    return role == VT_KROLE_OPT ? 2 : role == VT_KROLE_BWD ? 1 : 0;
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

static int cmp_iter_start(const void *pa, const void *pb)
{
    const struct vt_iter *a = pa, *b = pb;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* The batches of the evaluation windows aWin (vt__window_batches) as iterations, all sorted by start. */
static int add_batches(struct vt_trace *t, const struct vt_ewin *aWin, int nWin)
{
    int64_t *aS = NULL;
    int nS = 0, rc = vt__window_batches(t->f.db, aWin, nWin, &aS, &nS);
    for (int i = 0; rc == SQLITE_OK && i < nS; i++)
        if (!add_iter(t, aS[2 * i], aS[2 * i + 1])) rc = SQLITE_NOMEM;
    free(aS);
    if (rc == SQLITE_OK) qsort(t->ph.aIter, (size_t)t->ph.nIter, sizeof *t->ph.aIter, cmp_iter_start);
    return rc;
}

/* Kernels between two step terminators (optimizer runs, or backward runs without an optimizer). */
struct seg {
    int64_t first; /* place of its first kernel in start order */
    int64_t start, end;
    int64_t f;     /* forward/other kernels before the first backward kernel */
    int64_t n;     /* all kernels */
    int bBwd, bTerm;
    int bWin;      /* it holds an evaluation window (from_kernels) */
};

/* Stream the kernels in start order into segments; returns an SQLite code. */
static int kernel_segments(struct vt_trace *t, struct seg **paSeg, int *pnSeg, int *pTerm)
{
    sqlite3_stmt *pStmt = NULL, *pName = NULL;
    int64_t aKey[1024];
    int aCls[1024], rc, term, i;
    struct seg *cur = NULL;
    int64_t nOpt = 0, k = 0;
    for (i = 0; i < 1024; i++) aKey[i] = -1;

    rc = sqlite3_prepare_v2(t->f.db, "SELECT start, end, name_id FROM kernel ORDER BY start, id", -1, &pStmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(t->f.db, "SELECT value FROM string WHERE id = ?", -1, &pName, NULL);
    /* two passes over the classes would need the kernels twice; instead decide the terminator
     * class up front from the distinct names, which are few */
    if (rc == SQLITE_OK) {
        sqlite3_stmt *pQ = NULL;
        rc = sqlite3_prepare_v2(t->f.db, "SELECT s.value FROM string s WHERE s.id IN (SELECT DISTINCT name_id FROM kernel)",
                                -1, &pQ, NULL);
        while (rc == SQLITE_OK && (rc = sqlite3_step(pQ)) == SQLITE_ROW)
            rc = SQLITE_OK, nOpt += sqlite3_column_text(pQ, 0) && kernel_class((const char *)sqlite3_column_text(pQ, 0)) == 2;
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
        sqlite3_finalize(pQ);
    }
    term = *pTerm = nOpt ? 2 : 1;
    while (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        int64_t a = sqlite3_column_int64(pStmt, 0), b = sqlite3_column_int64(pStmt, 1);
        int64_t nameId = sqlite3_column_type(pStmt, 2) == SQLITE_NULL ? -2 : sqlite3_column_int64(pStmt, 2);
        int slot = (int)((uint64_t)nameId * 0x9E3779B97F4A7C15ull >> 54), cls;
        rc = SQLITE_OK;
        if (aKey[slot] == nameId) {
            cls = aCls[slot];
        } else {
            cls = 0;
            if (nameId >= 0) {
                int rcName;
                sqlite3_bind_int64(pName, 1, nameId);
                rcName = sqlite3_step(pName);
                if (rcName == SQLITE_ROW && sqlite3_column_text(pName, 0))
                    cls = kernel_class((const char *)sqlite3_column_text(pName, 0));
                else if (rcName != SQLITE_ROW && rcName != SQLITE_DONE)
                    rc = rcName;
                sqlite3_reset(pName);
                if (rc != SQLITE_OK) break;
            }
            aKey[slot] = nameId;
            aCls[slot] = cls;
        }
        if (cur && cur->bTerm && cls != term) cur = NULL; /* the terminator run ended */
        if (!cur) {
            cur = push((void **)paSeg, pnSeg, sizeof *cur);
            if (!cur) { rc = SQLITE_NOMEM; break; }
            cur->first = k;
            cur->start = a;
        }
        k++;
        if (b > cur->end) cur->end = b;
        cur->n++;
        if (cls >= 1) cur->bBwd |= cls == 1 || term == 1;
        if (cls == 0 && !cur->bBwd) cur->f++;
        if (cls == term) cur->bTerm = 1;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(pStmt);
    sqlite3_finalize(pName);
    return rc;
}

/* Median of the n values a (sorted in place); 0 when n is 0. */
static int64_t median(int64_t *a, int n)
{
    if (n == 0) return 0;
    qsort(a, (size_t)n, sizeof *a, cmp_i64);
    return a[n / 2];
}

/* Whether two forward counts are alike (within 10 %, or 2 kernels). */
static int alike(int64_t a, int64_t b)
{
    int64_t d = a > b ? a - b : b - a, big = a > b ? a : b;
    return d <= 2 || d * 10 <= big;
}

/*
 * A step cut into P segments repeats its forward counts with period P. Returns the smallest
 * P (2..64) for which at least 98 % of the backward segments' counts are alike the count P
 * segments later (counts above cap, evaluation windows, left out), or 0; *pOff is then the position in the period of the step's start (the
 * largest median count: the forward pass). *pbCut is set when the positions' backward kernel
 * counts differ too (one of them at most half another's): the period cuts backward passes
 * apart, where steps that merely alternate (an evaluation every other step) have whole ones.
 */
static int step_period(const struct seg *aSeg, int nSeg, int64_t cap, int *pOff, int *pbCut)
{
    int64_t aMed[64], aMedB[64];
    *pOff = 0;
    *pbCut = 0;
    for (int p = 2; p <= 64 && 3 * p <= nSeg; p++) {
        int nSame = 0, nCmp = 0;
        for (int i = p; i + p < nSeg; i++) { /* the first step has no tail of a step before it */
            if (!aSeg[i].bBwd || !aSeg[i + p].bBwd || aSeg[i].f > cap || aSeg[i + p].f > cap) continue;
            nCmp++;
            nSame += alike(aSeg[i].f, aSeg[i + p].f);
        }
        if (nCmp == 0 || nSame * 100 < nCmp * 98) continue;
        /* a period of 1 (every segment alike) is no cut step: not reported */
        for (int r = 0; r < p; r++) {
            int64_t aV[3], aB[3];
            int n = 0;
            for (int i = r; i < nSeg && n < 3; i += p) /* median of three periods in the middle */
                if (i >= nSeg / 3 && aSeg[i].bBwd) aV[n] = aSeg[i].f, aB[n] = aSeg[i].n - aSeg[i].f, n++;
            aMed[r] = n == 0 ? -1 : n < 3 ? aV[0] : median(aV, 3);
            aMedB[r] = n == 0 ? -1 : n < 3 ? aB[0] : median(aB, 3);
        }
        for (int r = 1; r < p; r++)
            if (aMed[r] > aMed[*pOff]) *pOff = r;
        {
            int bSame = 1; /* all residues alike: really a period of 1 */
            for (int r = 1; r < p; r++) bSame &= aMed[r] >= 0 && aMed[0] >= 0 && alike(aMed[r], aMed[0]);
            if (bSame) return 0;
        }
        for (int r = 0; r < p; r++)
            for (int q = 0; q < p; q++) *pbCut |= aMedB[r] >= 0 && aMedB[q] >= 0 && aMedB[r] * 2 <= aMedB[q];
        return p;
    }
    return 0;
}

/*
 * With backward runs as terminators, a backward pass whose kernels are interleaved with
 * kernels of no recognizable role (GEMMs, elementwise kernels serve both passes) comes as
 * many segments. The forward kernels before each backward part fall into two clusters: the
 * small gaps inside a backward pass and the forward passes. Found at the lowest jump of the
 * sorted counts by a factor of 4 (to at least 16): when the lower cluster is such gaps (median
 * below 16 kernels, its segments 8 times smaller than a forward pass), those segments are
 * merged into the one before. When the lower cluster has large counts, it is the steps and the
 * upper one steps with an evaluation window. Anything else is doubtful: returns the reason,
 * or NULL. *pbMem is set when out of memory.
 */
static const char *merge_fragments(struct seg *aSeg, int *pnSeg, int *pbMem)
{
    int64_t *aF = NULL, *aLowN = NULL, *aHighF = NULL, g = -1;
    int nF = 0, nLow = 0, nHigh = 0, i, j, p, off, bCut;
    const char *zDoubt = NULL;
    *pbMem = 0;
    for (i = 0; i < *pnSeg; i++) nF += aSeg[i].bBwd;
    aF = malloc(sizeof *aF * (size_t)(nF + 1) * 3);
    if (!aF) { *pbMem = 1; return NULL; }
    aLowN = aF + nF + 1;
    aHighF = aLowN + nF + 1;
    for (i = 0, nF = 0; i < *pnSeg; i++)
        if (aSeg[i].bBwd) aF[nF++] = aSeg[i].f;
    qsort(aF, (size_t)nF, sizeof *aF, cmp_i64);
    /* a forward count beyond twice the 90th percentile is an evaluation window, not a period's */
    p = step_period(aSeg, *pnSeg, nF ? 2 * aF[nF * 9 / 10] : 0, &off, &bCut);
    if (p > 0 && bCut) goto periodic;
    {
        /* already steps: three quarters of the counts are forward passes alike the median (a
         * few larger ones are steps after an evaluation window) */
        int64_t med = nF ? aF[nF / 2] : 0;
        int nAlike = 0;
        for (i = 0; i < nF; i++) nAlike += aF[i] * 2 >= med && aF[i] <= med * 2;
        if (med >= 16 && nAlike * 4 >= nF * 3) goto done;
    }
    if (p > 0) {
periodic:
        /* periodic: each step starts at the same position of the period */
        for (i = 0, j = -1; i < *pnSeg; i++) {
            if (j >= 0 && aSeg[j].bBwd && aSeg[i].bBwd && (i - off) % p != 0) {
                if (aSeg[i].end > aSeg[j].end) aSeg[j].end = aSeg[i].end;
                aSeg[j].n += aSeg[i].n;
                continue;
            }
            aSeg[++j] = aSeg[i];
        }
        *pnSeg = j + 1;
        goto done;
    }
    for (i = 0; i + 1 < nF && g < 0; i++)
        if (aF[i + 1] >= 16 && aF[i + 1] >= 4 * (aF[i] > 1 ? aF[i] : 1)) g = aF[i];
    if (g < 0) {
        /* no jump: one cluster; steps when the counts are alike */
        if (nF && aF[nF - 1] > 4 * (aF[0] > 16 ? aF[0] : 16))
            zDoubt = "the backward kernels do not show where the training steps begin";
        goto done;
    }
    for (i = 0; i < *pnSeg; i++) {
        if (!aSeg[i].bBwd) continue;
        if (aSeg[i].f <= g) aLowN[nLow++] = aSeg[i].n;
        else aHighF[nHigh++] = aSeg[i].f;
    }
    if (median(aF, nF - nHigh) >= 16) goto done; /* the lower cluster is steps: nothing to merge */
    if (median(aLowN, nLow) * 8 > median(aHighF, nHigh)) {
        zDoubt = "the backward kernels do not show where the training steps begin";
        goto done;
    }
    for (i = 0, j = -1; i < *pnSeg; i++) {
        if (j >= 0 && aSeg[j].bBwd && aSeg[i].bBwd && aSeg[i].f <= g) {
            if (aSeg[i].end > aSeg[j].end) aSeg[j].end = aSeg[i].end;
            aSeg[j].n += aSeg[i].n;
            continue;
        }
        aSeg[++j] = aSeg[i];
    }
    *pnSeg = j + 1;
done:
    free(aF);
    return zDoubt;
}

/*
 * Phases inferred from kernel names (no NVTX). Kernels are streamed in start
 * order into segments ending at a step terminator (an optimizer kernel run, or
 * a backward run when no optimizer kernel exists); only segments are kept. A
 * backward pass cut into several segments is merged back (merge_fragments); when the
 * steps stay unclear, or only one is found, t->ph.zDoubt says why and no phase is made. A
 * segment with backward kernels is one training iteration. Forward kernels
 * before its backward part beyond twice the median training forward length, or
 * a segment with no backward kernel of at least half that length, is an
 * evaluation window; it begins after the last step's tail (the kernels a segment starts
 * with before the next forward pass: a typical segment's count less the first step's).
 * Returns an SQLite code.
 */
static int from_kernels(struct vt_trace *t)
{
    struct seg *aSeg = NULL;
    int nSeg = 0, rc, i, nF = 0;
    int64_t *aF = NULL, m = 0;
    int64_t tail = 0;
    struct vt_want *aW = NULL;
    struct vt_ewin *aWin = NULL;
    int term = 0, bMem = 0, nTrain = 0, nW = 0, nWin = 0;

    rc = kernel_segments(t, &aSeg, &nSeg, &term);
    if (rc != SQLITE_OK) goto done;
    if (term == 1) {
        t->ph.zDoubt = merge_fragments(aSeg, &nSeg, &bMem);
        if (bMem) { rc = SQLITE_NOMEM; goto done; }
        if (t->ph.zDoubt) goto done;
    }
    for (i = 0; i < nSeg; i++) nTrain += aSeg[i].bBwd;
    if (nTrain == 1) {
        t->ph.zDoubt = "a single training step recognized";
        goto done;
    }
    for (i = 0; i < nSeg; i++)
        if (aSeg[i].bBwd) {
            int64_t *p = push((void **)&aF, &nF, sizeof *p);
            if (!p) { rc = SQLITE_NOMEM; goto done; }
            *p = aSeg[i].f;
        }
    if (nF == 0) goto done; /* no training recognised: leave phases unknown */
    qsort(aF, (size_t)nF, sizeof *aF, cmp_i64);
    m = aF[nF / 2];
    /* a segment begins with the previous step's tail (what follows its terminator: the rest of
     * a backward pass, the optimizer, zero_grad) and the first step has none: the tail is the
     * typical segment less the first one, when the first is no longer */
    for (i = 0; i < nSeg; i++)
        if (aSeg[i].bBwd) {
            tail = aSeg[i].f < m ? m - aSeg[i].f : 0;
            break;
        }
    /* segments holding an evaluation window: forward kernels beyond twice a typical segment's; or, beyond it
     * (beyond the tail for the last, which the trace's end cuts at most a forward pass short), one and a half
     * forward passes whose names repeat as batches do (one backward kernel a step makes a segment a step) */
    for (i = 0; i < nSeg; i++) {
        struct seg *s = &aSeg[i];
        int64_t extra = s->bBwd ? s->f - m : s->f - tail;
        if ((s->bWin = s->f >= 2 && s->f > 2 * m)) continue;
        if (m - tail >= 16 && extra * 2 >= (m - tail) * 3) {
            struct vt_ewin *e = push((void **)&aWin, &nWin, sizeof *e);
            if (!e) { rc = SQLITE_NOMEM; goto done; }
            *e = (struct vt_ewin){s->first + tail, extra, m - tail, i, 0, 0, 0}; /* .start: the segment, for now */
        }
    }
    if (nWin > 0 && (rc = vt__kernel_periods(t->f.db, aWin, nWin)) != SQLITE_OK) goto done;
    for (i = 0; i < nWin; i++) aSeg[aWin[i].start].bWin = aWin[i].p > 0;
    nWin = 0; /* aWin again: the windows made phases */
    /* the places of the kernels that bound evaluation windows, resolved in one pass */
    for (i = 0; i < nSeg; i++) {
        const struct seg *s = &aSeg[i];
        int64_t aIdx[3] = {s->first + tail, s->first + s->f - m, s->first + s->f - m + tail};
        if (!s->bWin) continue;
        for (int q = tail > 0 ? 0 : 1; q < (tail > 0 ? 3 : 2); q++) {
            struct vt_want *pW = push((void **)&aW, &nW, sizeof *pW);
            if (!pW) { rc = SQLITE_NOMEM; goto done; }
            pW->idx = aIdx[q];
        }
    }
    rc = vt__kernels_at(t->f.db, aW, nW);
    for (i = 0; i < nSeg && rc == SQLITE_OK; i++) {
        struct seg *s = &aSeg[i];
        struct vt_phase *p = t->ph.n ? &t->ph.a[t->ph.n - 1] : NULL;
        int64_t trainStart = s->start, evalStart = s->start, skip = 0;
        if (s->bWin && tail > 0 && p && p->kind == VT_PHASE_TRAIN &&
            (evalStart = vt__want_ts(aW, nW, s->first + tail)) >= 0) {
            /* a window begins after the last step's tail, at its host launch (ahead of the device): steps
             * the device still ran then end there, those it began later are none */
            skip = tail;
            p->end = evalStart;
            while (t->ph.nIter > 0 && t->ph.aIter[t->ph.nIter - 1].start >= evalStart) t->ph.nIter--;
            for (int k = t->ph.nIter - 1; k >= 0 && t->ph.aIter[k].end > evalStart; k--) t->ph.aIter[k].end = evalStart;
        }
        if (evalStart < 0) evalStart = s->start;
        if (!s->bBwd) {
            /* only the last segment lacks backward kernels: the start of a step cut off by the
             * end of the trace, unless clearly longer than a forward pass */
            if (s->bWin) {
                struct vt_ewin *e = push((void **)&aWin, &nWin, sizeof *e);
                if (!e || !add_phase(t, VT_PHASE_EVAL, "evaluation", evalStart, s->end, "kernels")) rc = SQLITE_NOMEM;
                else *e = (struct vt_ewin){s->first + skip, s->n - skip, m - tail, evalStart, s->end, 0, 0};
            } else if (p && p->kind == VT_PHASE_TRAIN) {
                p->end = s->end; /* optimizer tail or a stray kernel after the step */
                if (t->ph.nIter) t->ph.aIter[t->ph.nIter - 1].end = s->end;
            }
            continue;
        }
        if (s->bWin) {
            /* the window is the segment's forward kernels beyond a typical segment's, after the tail */
            trainStart = vt__want_ts(aW, nW, s->first + s->f - m + skip);
            if (trainStart <= evalStart) trainStart = evalStart;
            if (!add_phase(t, VT_PHASE_EVAL, "evaluation", evalStart, trainStart, "kernels")) { rc = SQLITE_NOMEM; break; }
            p = NULL;
            {
                struct vt_ewin *e = push((void **)&aWin, &nWin, sizeof *e);
                if (!e) { rc = SQLITE_NOMEM; break; }
                *e = (struct vt_ewin){s->first + skip, s->f - m, m - tail, evalStart, trainStart, 0, 0};
            }
        }
        if (p && p->kind == VT_PHASE_TRAIN) p->end = s->end;
        else if (!add_phase(t, VT_PHASE_TRAIN, "training", trainStart, s->end, "kernels")) rc = SQLITE_NOMEM;
        if (rc == SQLITE_OK && !add_iter(t, trainStart, s->end)) rc = SQLITE_NOMEM;
    }
    /* the evaluation windows' batches, among the steps in time order */
    if (rc == SQLITE_OK && nWin > 0 && (rc = vt__kernel_periods(t->f.db, aWin, nWin)) == SQLITE_OK)
        rc = add_batches(t, aWin, nWin);
done:
    free(aSeg);
    free(aF);
    free(aW);
    free(aWin);
    return rc;
}

/* Forward-only kernels outside the iterations, between two of them or after the last (from_iter_kernels). */
struct gap {
    int64_t start, end; /* the first one's start (then its host launch), the latest end */
    int64_t n;          /* how many, after the last backward or optimizer kernel of the gap */
    int64_t idx;        /* the first one's place in (start, id) order */
    int64_t p;          /* the period of their names (vt__kernel_periods), 0 none */
    int64_t lead;       /* places before their repetition began */
};

/*
 * Phases for NVTX iterations without phase ranges (torch.profiler's ProfilerStep#N): an
 * iteration with a backward or optimizer kernel is training, one with kernels but none of
 * those is evaluation; consecutive iterations of one kind form a phase. Kernels outside the
 * iterations after a training one (an evaluation loop the profiler's steps do not cover) form
 * an evaluation phase when, after the last backward or optimizer kernel among them (the last
 * step's tail, which the GPU runs after its range closed), they run for at least half a median
 * training iteration: longer than the rest of a step's tail (zero_grad, a metric) and than a
 * stray forward pass's kernels would. It begins at the host launch of its first kernel (as
 * from_kernels' windows, kernels_at), not before the iteration it follows ends. No phase when no
 * iteration is training, or when a tenth of the kernels run outside the iterations and such
 * phases (they would be left without a phase). Returns an SQLite code.
 */
static int from_iter_kernels(struct vt_trace *t)
{
    int64_t nIn = 0, nAll = 0, m = 0, fm = 0, run = 0, *aMed = NULL, *aFwd = NULL;
    sqlite3_stmt *pStmt = NULL;
    int64_t *aId = NULL;
    struct gap *aGap = NULL; /* gap i: before iteration i (i = nIter: after the last) */
    struct vt_want *aW = NULL;
    struct vt_ewin *aWin = NULL;
    int nId = 0, *aKind = NULL, iIt = 0, iRun = -1, nTrain = 0, nMed = 0, nW = 0, nWin = 0, rc;
    rc = sqlite3_prepare_v2(t->f.db, "SELECT id, value FROM string WHERE id IN (SELECT DISTINCT name_id FROM kernel)"
                            " ORDER BY id", -1, &pStmt, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        int64_t *p;
        rc = SQLITE_OK;
        if (kernel_class((const char *)sqlite3_column_text(pStmt, 1)) == 0) continue;
        if (!(p = push((void **)&aId, &nId, sizeof *p))) rc = SQLITE_NOMEM;
        else *p = sqlite3_column_int64(pStmt, 0);
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(pStmt);
    pStmt = NULL;
    if (rc == SQLITE_OK && (!(aKind = calloc((size_t)t->ph.nIter + 1, sizeof *aKind)) ||
                            !(aMed = calloc((size_t)t->ph.nIter + 1, sizeof *aMed)) ||
                            !(aGap = calloc((size_t)t->ph.nIter + 1, sizeof *aGap)) ||
                            !(aFwd = calloc((size_t)t->ph.nIter + 1, sizeof *aFwd))))
        rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(t->f.db, "SELECT start, \"end\", name_id FROM kernel ORDER BY start, id", -1, &pStmt,
                                NULL);
    /* 0: no kernel, 1: kernels, 2: a backward or optimizer kernel among them */
    while (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        int64_t ts = sqlite3_column_int64(pStmt, 0), end = sqlite3_column_int64(pStmt, 1);
        int64_t id = sqlite3_column_int64(pStmt, 2);
        int lo = 0, hi = nId, bTrain;
        rc = SQLITE_OK;
        nAll++;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (aId[mid] < id) lo = mid + 1;
            else hi = mid;
        }
        bTrain = lo < nId && aId[lo] == id && sqlite3_column_type(pStmt, 2) != SQLITE_NULL;
        while (iIt < t->ph.nIter && t->ph.aIter[iIt].end <= ts) iIt++;
        if (iIt == t->ph.nIter || ts < t->ph.aIter[iIt].start) {
            struct gap *g = &aGap[iIt];
            if (bTrain) g->n = 0; /* the tail of a step: what follows it may be evaluation */
            else if (g->n++ == 0) {
                g->start = g->end = ts;
                g->idx = nAll - 1;
            }
            if (!bTrain && end > g->end) g->end = end;
            continue;
        }
        nIn++;
        /* its forward pass: its longest run of other kernels that a backward or optimizer kernel ends (where
         * the GPU runs behind the ranges, an iteration starts with the last step's backward pass) */
        if (iRun != iIt) run = 0, iRun = iIt;
        if (bTrain && run > aFwd[iIt]) aFwd[iIt] = run;
        run = bTrain ? 0 : run + 1;
        if (aKind[iIt] < 1) aKind[iIt] = 1;
        if (bTrain) aKind[iIt] = 2;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(pStmt);
    for (int i = 0; rc == SQLITE_OK && i < t->ph.nIter; i++)
        if (aKind[i] == 2) aMed[nMed++] = t->ph.aIter[i].end - t->ph.aIter[i].start;
    if (nMed > 0) m = median(aMed, nMed);
    nMed = 0; /* aMed is free again: the training iterations' forward passes */
    for (int i = 0; rc == SQLITE_OK && i < t->ph.nIter; i++)
        if (aKind[i] == 2) aMed[nMed++] = aFwd[i];
    fm = median(aMed, nMed);
    /* gaps that are evaluation: after a training iteration, forward kernels for half an iteration or more,
     * or as many as half a training forward pass (an evaluation of a few batches after steps of several
     * micro-batches runs for less than half a step, and a step's tail, zero_grad or a metric, has a few) */
    for (int i = 1; rc == SQLITE_OK && i <= t->ph.nIter; i++) {
        struct gap *g = &aGap[i];
        struct vt_ewin *e;
        if (aKind[i - 1] != 2 || g->n < 2 || m <= 0 || ((g->end - g->start) * 2 < m && (fm < 16 || g->n * 2 < fm))) {
            g->n = 0;
            continue;
        }
        if (!(e = push((void **)&aWin, &nWin, sizeof *e))) rc = SQLITE_NOMEM;
        else *e = (struct vt_ewin){g->idx, g->n, fm, 0, 0, 0, 0};
    }
    if (rc == SQLITE_OK) rc = vt__kernel_periods(t->f.db, aWin, nWin);
    for (int i = 1, w = 0; rc == SQLITE_OK && i <= t->ph.nIter; i++) {
        struct gap *g = &aGap[i];
        struct vt_want *pW;
        if (g->n == 0) continue;
        g->p = aWin[w].p;
        g->lead = aWin[w++].lead;
        /* by its kernel count alone, only kernels that repeat as batches of a forward pass do: the last
         * step's tail can be as many (plain SGD: elementwise kernels, a few per parameter) */
        if ((g->end - g->start) * 2 < m && g->p == 0) {
            g->n = 0;
            continue;
        }
        nIn += g->n;
        if (!(pW = push((void **)&aW, &nW, sizeof *pW))) rc = SQLITE_NOMEM;
        else pW->idx = g->idx;
    }
    aGap[0].n = 0;
    if (rc == SQLITE_OK) rc = vt__kernels_at(t->f.db, aW, nW);
    for (int i = 1; rc == SQLITE_OK && i <= t->ph.nIter; i++) {
        struct gap *g = &aGap[i];
        int64_t ts = g->n > 0 ? vt__want_ts(aW, nW, g->idx) : -1;
        if (ts >= 0 && ts < g->start) g->start = ts;
        if (g->start < t->ph.aIter[i - 1].end) g->start = t->ph.aIter[i - 1].end;
        if (i < t->ph.nIter && g->end > t->ph.aIter[i].start) g->end = t->ph.aIter[i].start;
    }
    nWin = 0; /* aWin again: the windows made phases */
    for (int i = 0; rc == SQLITE_OK && nIn * 10 >= nAll * 9 && i < t->ph.nIter; i++) nTrain += aKind[i] == 2;
    for (int i = 0; rc == SQLITE_OK && nTrain > 0 && i <= t->ph.nIter; i++) {
        struct vt_phase *p;
        int kind;
        if (aGap[i].n > 0) {
            struct vt_ewin *e = push((void **)&aWin, &nWin, sizeof *e);
            if (!e || !add_phase(t, VT_PHASE_EVAL, "evaluation", aGap[i].start, aGap[i].end, "kernels")) {
                rc = SQLITE_NOMEM;
                break;
            }
            *e = (struct vt_ewin){aGap[i].idx, aGap[i].n, fm, aGap[i].start, aGap[i].end, aGap[i].p, aGap[i].lead};
        }
        if (i == t->ph.nIter || aKind[i] == 0) continue;
        p = t->ph.n ? &t->ph.a[t->ph.n - 1] : NULL;
        kind = aKind[i] == 2 ? VT_PHASE_TRAIN : VT_PHASE_EVAL;
        if (p && p->kind == kind) p->end = t->ph.aIter[i].end;
        else if (!add_phase(t, kind, kind == VT_PHASE_EVAL ? "evaluation" : "training", t->ph.aIter[i].start,
                            t->ph.aIter[i].end, "kernels"))
            rc = SQLITE_NOMEM;
    }
    /* the evaluation windows' batches, among the marked iterations in time order */
    if (rc == SQLITE_OK && nWin > 0) rc = add_batches(t, aWin, nWin);
    free(aId);
    free(aKind);
    free(aMed);
    free(aFwd);
    free(aGap);
    free(aW);
    free(aWin);
    return rc;
}

/*
 * The index of the span holding ts among n spans sorted by start that do not overlap, or -1:
 * spans are elements of `size` bytes from a with int64_t start and end at offStart and offEnd.
 */
static int span_at(const void *a, int n, size_t size, size_t offStart, size_t offEnd, int64_t ts)
{
    const char *p = a;
    int64_t v;
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        memcpy(&v, p + (size_t)mid * size + offStart, sizeof v);
        if (v <= ts) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return -1;
    memcpy(&v, p + (size_t)(lo - 1) * size + offEnd, sizeof v);
    return ts < v ? lo - 1 : -1;
}

int vt__phase_at(const struct vt_trace *t, int64_t ts)
{
    return span_at(t->ph.a, t->ph.n, sizeof t->ph.a[0], offsetof(struct vt_phase, start),
                   offsetof(struct vt_phase, end), ts);
}

/*
 * Whether training lifetime l is state kept from step to step (weights, optimizer state,
 * buffers): possibly used (l->useBound) after the end of the training iteration it was
 * allocated in; without iterations around its allocation, over at least half of its training
 * phase.
 */
static int training_state(const struct vt_trace *t, const struct vt_life *l)
{
    const struct vt_phase *p = &t->ph.a[l->phase];
    int i = vt__iter_at(t, l->allocTs);
    if (l->useBound < 0) return 0;
    if (i >= 0) return l->useBound >= t->ph.aIter[i].end;
    return l->useBound - l->allocTs >= (p->end - p->start) / 2;
}

int vt__phase_of_call(const struct vt_trace *t, const struct vt_opts *o, int64_t ts, const char *zSite,
                      int64_t stackId, char *z, size_t n)
{
    int k = vt__phase_at(t, ts), bAfterTrain = 0, bEval = 0;
    /* a training phase inferred from kernels may hold an evaluation too short to be told from a step */
    int bInTrain = k >= 0 && t->ph.a[k].kind == VT_PHASE_TRAIN && t->ph.a[k].zSource && !strcmp(t->ph.a[k].zSource, "kernels");
    const char *zIn = NULL, *zFunc;
    regex_t re;
    z[0] = 0;
    if (k >= 0) snprintf(z, n, "%s", t->ph.a[k].zName);
    if ((k >= 0 && !bInTrain) || !zSite || strcmp(t->ph.zSource, "kernels") != 0) return k >= 0;
    for (int i = 0; i < t->ph.n; i++) bAfterTrain = t->ph.a[i].kind == VT_PHASE_TRAIN && ts >= t->ph.a[i].end;
    for (zFunc = strstr(zSite, " in "); zFunc; zFunc = strstr(zFunc + 4, " in ")) zIn = zFunc + 4;
    if (!(bAfterTrain || bInTrain) || regcomp(&re, o->zEvalRe, REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0) return k >= 0;
    bEval = (zIn && regexec(&re, zIn, 0, NULL, 0) == 0) || vt__stack_user_func_matches(t->f.db, stackId, &re);
    regfree(&re);
    if (bEval) snprintf(z, n, "evaluation");
    return bEval ? (bInTrain ? 3 : 2) : k >= 0;
}

int vt__iter_at(const struct vt_trace *t, int64_t ts)
{
    return span_at(t->ph.aIter, t->ph.nIter, sizeof t->ph.aIter[0], offsetof(struct vt_iter, start),
                   offsetof(struct vt_iter, end), ts);
}

int vt__carried_into(const struct vt_trace *t, const struct vt_life *l, int *pbHeld)
{
    *pbHeld = 0;
    if (l->phase < 0 || l->allocTs < 0 || t->ph.a[l->phase].kind != VT_PHASE_TRAIN) return -1;
    if (training_state(t, l)) return -1;
    for (int k = l->phase + 1; k < t->ph.n; k++) {
        const struct vt_phase *e = &t->ph.a[k];
        int64_t last = l->useBound >= 0 ? l->useBound : l->allocTs;
        int bTrainAfter = 0;
        if (e->kind != VT_PHASE_EVAL || e->start < l->allocTs) continue;
        if (l->freeTs >= 0 && l->freeTs <= e->start) return -1;
        if (last >= e->start) continue;
        for (int j = k + 1; j < t->ph.n; j++) bTrainAfter |= t->ph.a[j].kind == VT_PHASE_TRAIN;
        /* live to the end of a trace that ends in evaluation: optimizer state and the like, whose
         * next use would come with the next training step; nothing can be said */
        if (l->freeTs < 0 && !bTrainAfter) return -1;
        /* held through it: still live for at least 90 % of the evaluation phase */
        *pbHeld = (l->freeTs >= 0 && l->freeTs >= e->end - (e->end - e->start) / 10) || (l->freeTs < 0 && bTrainAfter);
        return k;
    }
    return -1;
}

/* Iterations of a trace that marks none and has no kernel to infer them from (a PyTorch snapshot, a memory-only
 * profile): its tensor memory's own cycles (vt__cycle_step: a step's rise and fall). Each completed cycle ends an
 * iteration, the first beginning at the trace's start; at least two are needed. Returns an SQLite code. */
static int from_cycles(struct vt_trace *t)
{
    struct vt_rows c;
    struct vt_kept *pK = &t->f.aT[VT_T_TENSOR].keep; /* the rows the replay reads, when kept: read once, not released */
    char *zSql = NULL;
    int64_t live = 0, peak = 0, lo = 0, hi = 0, prev = t->f.t0;
    int n = 0, rc;
    if (!t->f.bHaveTensors || t->f.aT[VT_T_KER].nRow > 0 || !t->f.bTimes) return SQLITE_OK;
    memset(&c, 0, sizeof c);
    if (pK->bOk && pK->nCol == VT_TENSORROW_NCOL) rc = vt__rows_open_kept_peek(&c, pK, t->f.aT[VT_T_TENSOR].w);
    else if (!(zSql = vt__ordered_sql(&t->f, VT_T_TENSOR, VT_TENSORROW_COLS, "ts IS NOT NULL", "ts, id"))) rc = SQLITE_NOMEM;
    else rc = vt__rows_open(&c, t->f.db, zSql, VT_TENSORROW_NCOL, t->f.aT[VT_T_TENSOR].w);
    while (rc == SQLITE_OK && (rc = vt__rows_next(&c)) == SQLITE_OK && c.bRow) {
        int op = (int)vt__rows_or(&c, 2, 0); /* op and bytes in VT_TENSORROW_COLS */
        int64_t b = vt__rows_or(&c, 6, 0);
        if (op == VT_TENSOROP_ALLOC) live += b;
        else if (op == VT_TENSOROP_FREE) live -= b;
        else continue;
        if (vt__cycle_step(&lo, &hi, &n, live, peak)) {
            if (!add_iter(t, prev, c.ts)) rc = SQLITE_NOMEM;
            prev = c.ts;
        }
        if (live > peak) peak = live;
    }
    vt__rows_close(&c);
    free(zSql);
    if (rc == SQLITE_OK && t->ph.nIter < 2) { /* one cycle: no step to compare with another */
        free(t->ph.aIter);
        t->ph.aIter = NULL;
        t->ph.nIter = 0;
    }
    t->ph.bCycleIter = rc == SQLITE_OK && t->ph.nIter > 0;
    return rc;
}

/*
 * Growth boundaries: the end of each training iteration (or of each iteration outside any
 * phase); without iterations, the ends of the 16 slices of the run after its first quarter.
 * Returns 0 or -1 (out of memory).
 */
static int boundaries_build(struct vt_trace *t)
{
    int64_t t0 = t->f.t0, t1 = t->f.t1 > t->f.t0 ? t->f.t1 : t->f.t0 + 1;
    t->ph.aBoundary = malloc(sizeof(int64_t) * (size_t)(t->ph.nIter + VT_SLICES));
    if (!t->ph.aBoundary) return -1;
    t->ph.nBoundary = t->ph.nBoundaryDone = 0;
    for (int i = 0; i < t->ph.nIter; i++)
        if (t->ph.aIter[i].phase < 0 || t->ph.a[t->ph.aIter[i].phase].kind == VT_PHASE_TRAIN)
            t->ph.aBoundary[t->ph.nBoundary++] = t->ph.aIter[i].end;
    t->ph.bSliceBoundaries = t->ph.nBoundary == 0;
    if (t->ph.bSliceBoundaries)
        for (int k = VT_SLICES / 4; k < VT_SLICES; k++)
            t->ph.aBoundary[t->ph.nBoundary++] =
                t0 + (t1 - t0) / VT_SLICES * (k + 1) + (t1 - t0) % VT_SLICES * (k + 1) / VT_SLICES;
    return 0;
}

/* Make iteration i end where iteration i+1 starts (the gap belongs to it), and link phases. */
static void link_iterations(struct vt_trace *t)
{
    for (int i = 0; i < t->ph.nIter; i++) {
        struct vt_iter *it = &t->ph.aIter[i];
        it->phase = vt__phase_at(t, it->start);
        if (i + 1 < t->ph.nIter && t->ph.aIter[i + 1].phase == it->phase && t->ph.aIter[i + 1].start > it->end)
            it->end = t->ph.aIter[i + 1].start;
    }
    for (int i = 0; i < t->ph.nIter; i++) {
        int k = t->ph.aIter[i].phase = vt__phase_at(t, t->ph.aIter[i].start);
        if (k < 0) continue;
        if (t->ph.a[k].firstIter < 0) t->ph.a[k].firstIter = i;
        t->ph.a[k].lastIter = i;
        t->ph.a[k].nIter++;
    }
}

/*
 * Find phases and iterations: NVTX first, else kernel names. Returns VT_EXIT_OK,
 * VT_EXIT_USAGE for a bad regular expression, or CORRUPT / INTERNAL on read errors
 * (one line printed).
 */
int vt__phases(struct vt_trace *t, const struct vt_opts *o)
{
    regex_t rePhase, reEval, reIter;
    int rc = SQLITE_OK, nRe = 0;
    const char *zBad = NULL;
    if (regcomp(&rePhase, o->zPhaseRe, REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0) zBad = o->zPhaseRe;
    else if (nRe++, regcomp(&reEval, o->zEvalRe, REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0) zBad = o->zEvalRe;
    else if (nRe++, regcomp(&reIter, o->zIterRe, REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0) zBad = o->zIterRe;
    else nRe++;
    if (zBad) {
        vt__errorf("invalid regular expression '%s'", zBad);
        rc = -1;
        goto done;
    }
    t->ph.zSource = "none";
    rc = from_nvtx(t, &rePhase, &reEval, &reIter);
    if (rc == SQLITE_OK && t->ph.n) {
        t->ph.zSource = "nvtx";
    } else if (rc == SQLITE_OK && t->ph.nIter) {
        /* NVTX iterations but no phase: each iteration's kernels tell its kind; when the
         * iterations leave kernels out, phases from the kernel stream, iterations from NVTX */
        rc = from_iter_kernels(t);
        if (rc == SQLITE_OK && t->ph.n == 0) {
            struct vt_iter *aNvtx = t->ph.aIter;
            int nNvtx = t->ph.nIter;
            t->ph.aIter = NULL;
            t->ph.nIter = 0;
            rc = from_kernels(t);
            free(t->ph.aIter);
            t->ph.aIter = aNvtx;
            t->ph.nIter = nNvtx;
        }
        t->ph.zSource = rc == SQLITE_OK && t->ph.n ? "kernels" : "nvtx";
    } else if (rc == SQLITE_OK) {
        free(t->ph.aIter);
        t->ph.aIter = NULL;
        t->ph.nIter = 0;
        rc = from_kernels(t);
        if (rc == SQLITE_OK && t->ph.n) t->ph.zSource = "kernels";
    }
    if (rc == SQLITE_OK && t->ph.n == 0 && t->ph.nIter == 0) rc = from_cycles(t);
    if (rc == SQLITE_OK) {
        link_iterations(t);
        if (boundaries_build(t) != 0) rc = SQLITE_NOMEM;
    }
    if (rc != SQLITE_OK) vt__errorf("%s: cannot read phases: %s", t->f.zPath, sqlite3_errstr(rc));
done:
    if (nRe > 0) regfree(&rePhase);
    if (nRe > 1) regfree(&reEval);
    if (nRe > 2) regfree(&reIter);
    if (rc == 0) return VT_EXIT_OK;
    if (zBad) return VT_EXIT_USAGE;
    return vt__exit_for_sqlite(rc);
}

int vt__phase_check_opts(const struct vt_opts *o)
{
    const char *azRe[] = {o->zPhaseRe, o->zEvalRe, o->zIterRe};
    static const char *const azOpt[] = {"--phase", "--eval-phase", "--iteration"};
    for (size_t i = 0; i < sizeof azRe / sizeof azRe[0]; i++) {
        regex_t re;
        int e = regcomp(&re, azRe[i], REG_EXTENDED | REG_ICASE | REG_NOSUB);
        if (e != 0) {
            char zWhy[128];
            regerror(e, &re, zWhy, sizeof zWhy);
            vt__errorf("analyze: %s '%s' is not a valid regular expression: %s", azOpt[i], azRe[i], zWhy);
            return VT_EXIT_USAGE;
        }
        regfree(&re);
    }
    return VT_EXIT_OK;
}
