/* The timeline: live bytes per device over time, peaks with what was live at them, phase and iteration minima. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

/* Index of the timeline entry of account acct (a device id, VT_ACCT_PINNED, VT_ACCT_MANAGED), created on first
 * sight with the device's name and size; -1 when out of memory. */
int vt__dev_index(struct vt_trace *t, int acct)
{
    struct vt_device *aNew, *d;
    const struct vt_devinfo *pInfo;
    int i;
    for (i = 0; i < t->tl.nDev; i++)
        if (t->tl.aDev[i].id == acct) return i;
    aNew = realloc(t->tl.aDev, sizeof *aNew * (size_t)(t->tl.nDev + 1));
    if (!aNew) return -1;
    t->tl.aDev = aNew;
    d = &aNew[t->tl.nDev];
    memset(d, 0, sizeof *d);
    d->id = acct;
    d->peakTs = d->tensorPeakTs = d->tensorAtPeak = d->atPeakTs = -1;
    d->totalBytes = -1;
    for (i = 0; i < VT_TIMELINE_BUCKETS; i++) d->aMax[i] = d->aMin[i] = d->aLast[i] = d->aPool[i] = -1;
    for (i = 0; i < VT_SLICES; i++) d->slice[i] = d->tensorSlice[i] = -1;
    if (acct == VT_ACCT_PINNED) snprintf(d->zName, sizeof d->zName, "pinned host memory");
    else if (acct == VT_ACCT_MANAGED) snprintf(d->zName, sizeof d->zName, "managed memory");
    else if ((pInfo = vt__read_device(&t->f, acct)) != NULL) {
        snprintf(d->zName, sizeof d->zName, "%s", pInfo->zName);
        d->totalBytes = pInfo->totalBytes;
    }
    return t->tl.nDev++;
}

/* Start of the replay: every per-phase / per-iteration statistic at its initial value. */
void vt__timeline_begin(struct vt_trace *t)
{
    for (int i = 0; i < t->ph.n; i++) {
        struct vt_phase *p = &t->ph.a[i];
        p->peak = p->startLive = p->minLive = -1;
        p->peakTs = -1;
        p->endLive = p->endTensor = -1;
        for (int k = 0; k < VT_SLICES; k++) p->slice[k] = p->tensorSlice[k] = -1;
    }
    for (int i = 0; i < t->ph.nIter; i++) t->ph.aIter[i].minLive = t->ph.aIter[i].maxLive = t->ph.aIter[i].minTensor = -1;
    for (int k = 0; k < VT_SLICES; k++) t->tl.pinnedSlice[k] = -1;
    t->tl.curPhase = t->tl.curIter = 0;
}

int vt__slice_of(int64_t ts, int64_t a, int64_t b)
{
    int64_t k;
    if (b <= a) return 0;
    k = (int64_t)((double)(ts - a) * VT_SLICES / (double)(b - a)); /* double: no overflow on wide spans */
    return k < 0 ? 0 : k >= VT_SLICES ? VT_SLICES - 1 : (int)k;
}

static void lower(int64_t *p, int64_t v)
{
    if (*p < 0 || v < *p) *p = v;
}

/*
 * Account the device-memory total (and the framework allocator's blocks) at ts in the phase and
 * iteration containing ts. Both arrays are sorted and non-overlapping, so a cursor walks each
 * once; a phase or iteration with no event inside takes the level current when it is passed
 * (a slice without one stays -1), and a phase notes its level as it ends. Calls must come with
 * non-decreasing ts.
 */
void vt__timeline_phase_step(struct vt_trace *t, int64_t ts)
{
    int64_t live = t->tl.totalLiveNow, tensors = t->tl.tensorTotalNow;
    while (t->tl.curPhase < t->ph.n && t->ph.a[t->tl.curPhase].end <= ts) {
        struct vt_phase *p = &t->ph.a[t->tl.curPhase];
        if (p->startLive < 0) p->startLive = p->minLive = p->peak = live, p->peakTs = p->start, p->bPeakDirty = 1;
        p->endLive = live;
        p->endTensor = tensors;
        vt__timeline_phase_snapshot(t); /* nothing changed since its peak if still dirty */
        t->tl.curPhase++;
    }
    if (t->tl.curPhase < t->ph.n && ts >= t->ph.a[t->tl.curPhase].start) {
        struct vt_phase *p = &t->ph.a[t->tl.curPhase];
        if (p->startLive < 0) p->startLive = p->minLive = live, p->peak = live, p->peakTs = ts, p->bPeakDirty = 1;
        if (live > p->peak) p->peak = live, p->peakTs = ts, p->bPeakDirty = 1;
        lower(&p->minLive, live);
        lower(&p->slice[vt__slice_of(ts, p->start, p->end)], live);
        lower(&p->tensorSlice[vt__slice_of(ts, p->start, p->end)], tensors);
    }
    while (t->tl.curIter < t->ph.nIter && t->ph.aIter[t->tl.curIter].end <= ts) {
        struct vt_iter *it = &t->ph.aIter[t->tl.curIter++];
        if (it->minLive < 0) it->minLive = it->maxLive = live;
        if (it->minTensor < 0) it->minTensor = tensors;
    }
    if (t->tl.curIter < t->ph.nIter && ts >= t->ph.aIter[t->tl.curIter].start) {
        struct vt_iter *it = &t->ph.aIter[t->tl.curIter];
        lower(&it->minLive, live);
        lower(&it->minTensor, tensors);
        if (live > it->maxLive) it->maxLive = live;
    }
}

int vt__cycle_step(int64_t *pLo, int64_t *pHi, int *pn, int64_t live, int64_t peak)
{
    if (live < *pLo) *pLo = *pHi = live;
    if (live > *pHi) *pHi = live;
    if ((*pHi - *pLo) * 8 >= (peak > live ? peak : live) && *pHi - *pLo > 0 && (live - *pLo) * 2 <= *pHi - *pLo) {
        (*pn)++;
        *pLo = *pHi = live;
        return 1;
    }
    return 0;
}

int vt__timeline_bucket(const struct vt_trace *t, int64_t ts)
{
    int64_t b = (int64_t)((double)(ts - t->f.t0) * VT_TIMELINE_BUCKETS / (double)(t->f.t1 - t->f.t0 + 1));
    return b < 0 ? 0 : b >= VT_TIMELINE_BUCKETS ? VT_TIMELINE_BUCKETS - 1 : (int)b;
}

/* Record the change of device iDev's live bytes at ts. */
void vt__timeline_update(struct vt_trace *t, int iDev, int64_t ts)
{
    struct vt_device *d = &t->tl.aDev[iDev];
    int b = vt__timeline_bucket(t, ts);
    if (d->live > d->aMax[b]) d->aMax[b] = d->live;
    lower(&d->aMin[b], d->live);
    d->aLast[b] = d->live;
    if (d->poolReserved > 0) d->aPool[b] = d->poolReserved;
    lower(&d->slice[vt__slice_of(ts, t->f.t0, t->f.t1 + 1)], d->live);
    vt__cycle_step(&d->cycLo, &d->cycHi, &d->nCycle, d->live, d->peak);
    if (d->live > d->peak) {
        d->peak = d->live;
        d->peakTs = ts;
        d->bPeakDirty = 1;
        d->bBdDirty = 1;
        d->tensorAtPeak = d->tensorLive;
    }
    if (d->poolReserved > d->poolPeakReserved) d->poolPeakReserved = d->poolReserved;
    if (d->id == VT_ACCT_PINNED) lower(&t->tl.pinnedSlice[vt__slice_of(ts, t->f.t0, t->f.t1 + 1)], d->live);
    if (d->id >= 0) {
        if (t->tl.totalLiveNow > t->tl.totalPeak) t->tl.totalPeak = t->tl.totalLiveNow, t->tl.totalPeakTs = ts;
        vt__timeline_phase_step(t, ts);
    }
}

/* Record the change of device iDev's tensor live bytes (a framework allocator's blocks) at ts. */
void vt__timeline_tensor(struct vt_trace *t, int iDev, int64_t ts)
{
    struct vt_device *d = &t->tl.aDev[iDev];
    vt__cycle_step(&d->tensorCycLo, &d->tensorCycHi, &d->nTensorCycle, d->tensorLive, d->tensorPeak);
    if (d->tensorLive > d->tensorPeak) d->tensorPeak = d->tensorLive, d->tensorPeakTs = ts;
    if (d->peak > 0 && d->live == d->peak && d->tensorLive > d->tensorAtPeak) d->tensorAtPeak = d->tensorLive;
    lower(&d->tensorSlice[vt__slice_of(ts, t->f.t0, t->f.t1 + 1)], d->tensorLive);
}

/*
 * Take the peak snapshot of host or managed memory account iDev from the live set
 * if its peak moved since the last one: its largest allocations, and all of them
 * grouped by site and kind. Called just before live bytes go down, so the live set
 * is exactly the peak's. Past 64 snapshots a new one is taken only when the peak
 * grew by 0.5 %, bounding the cost on long ramps (the list is then within 0.5 %).
 * A device's list is of its breakdown's moment instead (breakdown.c): nothing here.
 */
void vt__timeline_snapshot(struct vt_trace *t, int iDev)
{
    struct vt_device *d = &t->tl.aDev[iDev];
    if (d->id >= 0 || !d->bPeakDirty) return;
    if (d->nSnapshots >= 64 && d->peak < d->snapPeak + d->snapPeak / 200) return;
    d->bPeakDirty = 0;
    d->nSnapshots++;
    d->snapPeak = d->peak;
    vt__live_snapshot(t, t->tl.apLive, t->tl.nLive, d->id, d->aTop, &d->nTop, VT_TOPMAX, d->aGroup, &d->nGroup,
                      VT_TOPMAX); /* failure: t->bGroupNoMem */
}

/*
 * Snapshot the current phase's largest live allocations, and all of them grouped
 * by site and kind, if its peak moved since the last snapshot (same throttling
 * as the device snapshot).
 */
void vt__timeline_phase_snapshot(struct vt_trace *t)
{
    struct vt_phase *p;
    if (t->tl.curPhase >= t->ph.n) return;
    p = &t->ph.a[t->tl.curPhase];
    if (!p->bPeakDirty) return;
    if (p->nSnapshots >= 64 && p->peak < p->snapPeak + p->snapPeak / 200) return;
    p->bPeakDirty = 0;
    p->nSnapshots++;
    p->snapPeak = p->peak;
    vt__live_snapshot(t, t->tl.apLive, t->tl.nLive, VT_ACCT_DEVICES, p->aTop, &p->nTop,
                      (int)(sizeof p->aTop / sizeof p->aTop[0]), p->aGroup, &p->nGroup,
                      (int)(sizeof p->aGroup / sizeof p->aGroup[0])); /* failure: t->bGroupNoMem */
}
