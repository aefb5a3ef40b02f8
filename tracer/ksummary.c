/* Kernel summaries (always-on mode): after a warm-up, kernels, their launches and argument uses folded per period. */
#include "ksummary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace/schema.h"

/* Columns of the rows k reads (rowtable.c's INSERT orders). */
enum { K_T = 0, K_END = 1, K_DEVICE = 2, K_NAME = 6 };        /* kernel */
enum { A_API = 0, A_T = 2, A_PTR = 8 };                        /* api_call */
enum { U_KIND = 1, U_ADDRESS = 2, U_T = 3 };                   /* buffer_use */

#define MAX_KEYS 4096    /* aggregates held (names x devices x the periods not written out) */
#define MAX_USES 32768   /* addresses whose uses are held */

int vt__ksum_init(struct vt__ksum *k, int64_t startNs, int64_t periodNs, void (*xEmit)(void *, const struct vt__row *),
                  void *pCtx)
{
    memset(k, 0, sizeof *k);
    k->startNs = startNs;
    k->periodNs = periodNs > 0 ? periodNs : 1000000000;
    k->xEmit = xEmit;
    k->pCtx = pCtx;
    k->maxKeys = MAX_KEYS;
    k->maxUses = MAX_USES;
    k->nUseSlot = 2 * MAX_USES;
    k->lastPeriod = k->usePeriod = INT64_MIN;
    k->aAgg = calloc(k->maxKeys, sizeof *k->aAgg);
    k->aUse = calloc(k->nUseSlot, sizeof *k->aUse);
    if (!k->aAgg || !k->aUse) {
        vt__ksum_free(k);
        return -ENOMEM;
    }
    return 0;
}

void vt__ksum_free(struct vt__ksum *k)
{
    free(k->aAgg);
    free(k->aUse);
    k->aAgg = NULL;
    k->aUse = NULL;
}

/* The period of absolute time ts (>= startNs). */
static int64_t period_of(const struct vt__ksum *k, int64_t ts)
{
    return (ts - k->startNs) / k->periodNs;
}

/* Write out aggregate a as a kernel_summary row. */
static void emit_agg(struct vt__ksum *k, const struct vt__ksum_agg *a)
{
    struct vt__row r;
    memset(&r, 0, sizeof r);
    r.table = VT_T_KERNEL_SUMMARY;
    r.v[0].i = a->firstStart;
    r.v[1].i = a->lastEnd;
    r.v[2].i = a->device;
    r.v[3].i = a->nameId;
    r.v[4].i = a->count;
    r.v[5].i = a->busyNs;
    r.v[6].i = a->minNs;
    r.v[7].i = a->maxNs;
    r.nullMask = (a->device < 0 ? 1u << 2 : 0) | (a->nameId < 0 ? 1u << 3 : 0) |
                 (a->bTimed ? 0 : (1u << 5) | (1u << 6) | (1u << 7));
    k->xEmit(k->pCtx, &r);
}

/* Write out the aggregates of periods before `before` (all with INT64_MAX), keeping the others. */
static void flush_aggs(struct vt__ksum *k, int64_t before)
{
    size_t j = 0;
    for (size_t i = 0; i < k->nAgg; i++) {
        if (k->aAgg[i].period < before) emit_agg(k, &k->aAgg[i]);
        else k->aAgg[j++] = k->aAgg[i];
    }
    k->nAgg = j;
}

/* Fold kernel row r (start known, at or after startNs) into its period's aggregate. */
static void fold_kernel(struct vt__ksum *k, const struct vt__row *r)
{
    int64_t start = r->v[K_T].i, period = period_of(k, start);
    int64_t device = r->nullMask >> K_DEVICE & 1 ? -1 : r->v[K_DEVICE].i;
    int64_t nameId = r->nullMask >> K_NAME & 1 ? -1 : r->v[K_NAME].i;
    int bEnd = !(r->nullMask >> K_END & 1) && r->v[K_END].i >= start;
    int64_t end = bEnd ? r->v[K_END].i : start, dur = end - start;
    struct vt__ksum_agg *a = NULL;
    if (period > k->lastPeriod) { /* a new period: the ones two back are done (one back may still get late kernels) */
        if (k->lastPeriod != INT64_MIN) flush_aggs(k, period - 1);
        k->lastPeriod = period;
    }
    for (size_t i = k->nAgg; i-- > 0;) /* the latest aggregates first: the common case */
        if (k->aAgg[i].period == period && k->aAgg[i].nameId == nameId && k->aAgg[i].device == device) {
            a = &k->aAgg[i];
            break;
        }
    if (!a) {
        if (k->nAgg == k->maxKeys) flush_aggs(k, INT64_MAX);
        a = &k->aAgg[k->nAgg++];
        memset(a, 0, sizeof *a);
        a->period = period;
        a->device = device;
        a->nameId = nameId;
        a->firstStart = start;
        a->lastEnd = end;
    }
    a->count++;
    if (start < a->firstStart) a->firstStart = start;
    if (end > a->lastEnd) a->lastEnd = end;
    if (bEnd) {
        if (!a->bTimed || dur < a->minNs) a->minNs = dur;
        if (!a->bTimed || dur > a->maxNs) a->maxNs = dur;
        a->busyNs += dur;
        a->bTimed = 1;
    }
    k->nKernels++;
}

/* The home slot of address addr in the held uses. */
static size_t use_home(const struct vt__ksum *k, int64_t addr)
{
    return (size_t)((uint64_t)addr * 0x9e3779b97f4a7c15ull >> 17) & (k->nUseSlot - 1);
}

/* The slot of address addr in the held uses (its own, or the empty one where it goes). */
static struct vt__ksum_use *use_slot(struct vt__ksum *k, int64_t addr)
{
    size_t i = use_home(k, addr);
    while (k->aUse[i].bUsed && k->aUse[i].address != addr) i = (i + 1) & (k->nUseSlot - 1);
    return &k->aUse[i];
}

/*
 * Write out the uses held in slot u (its first, and its last when another) and free the slot,
 * moving back the entries after it that would no longer be found (linear probing's deletion).
 */
static void emit_use(struct vt__ksum *k, struct vt__ksum_use *u)
{
    size_t mask = k->nUseSlot - 1, i = (size_t)(u - k->aUse), j = i;
    k->xEmit(k->pCtx, &u->first);
    if (u->bLast) k->xEmit(k->pCtx, &u->last);
    u->bUsed = 0;
    k->nUse--;
    for (;;) {
        size_t h;
        j = (j + 1) & mask;
        if (!k->aUse[j].bUsed) break;
        h = use_home(k, k->aUse[j].address);
        /* entry j may move to the hole at i unless its home lies cyclically in (i, j] */
        if (i <= j ? (h > i && h <= j) : (h > i || h <= j)) continue;
        k->aUse[i] = k->aUse[j];
        k->aUse[j].bUsed = 0;
        i = j;
    }
}

/* Write out every held use of a period before `before` (all with INT64_MAX), and rebuild the table. */
static void flush_uses(struct vt__ksum *k, int64_t before)
{
    struct vt__ksum_use *aOld = k->aUse, *aNew;
    size_t n = k->nUseSlot;
    aNew = calloc(n, sizeof *aNew);
    if (!aNew) { /* no room for a new table: write everything out in place */
        for (size_t i = 0; i < n; i++)
            if (aOld[i].bUsed) emit_use(k, &aOld[i]);
        return;
    }
    k->aUse = aNew;
    k->nUse = 0;
    for (size_t i = 0; i < n; i++) {
        if (!aOld[i].bUsed) continue;
        if (aOld[i].period < before) {
            k->xEmit(k->pCtx, &aOld[i].first);
            if (aOld[i].bLast) k->xEmit(k->pCtx, &aOld[i].last);
        } else {
            *use_slot(k, aOld[i].address) = aOld[i];
            k->nUse++;
        }
    }
    free(aOld);
}

/* Hold kernel-argument use r (time known, at or after startNs): the first and last of its address in its period. */
static void hold_use(struct vt__ksum *k, const struct vt__row *r)
{
    int64_t period = period_of(k, r->v[U_T].i);
    struct vt__ksum_use *u;
    if (period > k->usePeriod) {
        if (k->usePeriod != INT64_MIN) flush_uses(k, period);
        k->usePeriod = period;
    }
    u = use_slot(k, r->v[U_ADDRESS].i);
    if (u->bUsed && u->period != period) { /* a use of another period: that period's first and last go out */
        emit_use(k, u);
        u = use_slot(k, r->v[U_ADDRESS].i);
    }
    if (!u->bUsed) {
        if (k->nUse == k->maxUses) {
            flush_uses(k, INT64_MAX);
            u = use_slot(k, r->v[U_ADDRESS].i);
        }
        u->address = r->v[U_ADDRESS].i;
        u->period = period;
        u->first = *r;
        u->bLast = 0;
        u->bUsed = 1;
        k->nUse++;
        return;
    }
    if (u->bLast) k->nUses++; /* the last one before is replaced: not written */
    u->last = *r;
    u->bLast = 1;
}

int vt__ksum_take(struct vt__ksum *k, const struct vt__row *pRow)
{
    switch (pRow->table) {
    case VT_T_KERNEL:
        if (pRow->nullMask & 1u << K_T || pRow->v[K_T].i < k->startNs) return 0;
        fold_kernel(k, pRow);
        return 1;
    case VT_T_API_CALL: {
        int64_t api = pRow->v[A_API].i;
        const char *zFamily = vt_api_family(api);
        if (!zFamily) return 0;
        if (!strcmp(zFamily, "free") && !(pRow->nullMask & 1u << A_PTR)) { /* its allocation's last uses first */
            struct vt__ksum_use *u = use_slot(k, pRow->v[A_PTR].i);
            if (u->bUsed) emit_use(k, u);
            return 0;
        }
        /* launches of kernels (a graph launch makes one call for many kernels: kept) after the warm-up */
        if (strcmp(zFamily, "launch") || api == VT_API_ID_107 || api == VT_API_ID_111 ||
            pRow->nullMask & 1u << A_T || pRow->v[A_T].i < k->startNs)
            return 0;
        k->nLaunches++;
        return 1;
    }
    case VT_T_BUFFER_USE:
        if (pRow->v[U_KIND].i != VT_USE_KERNEL_ARG || pRow->nullMask & 1u << U_T || pRow->v[U_T].i < k->startNs) return 0;
        hold_use(k, pRow);
        return 1;
    default: return 0;
    }
}

void vt__ksum_finish(struct vt__ksum *k)
{
    flush_aggs(k, INT64_MAX);
    if (k->nUse) flush_uses(k, INT64_MAX);
}
