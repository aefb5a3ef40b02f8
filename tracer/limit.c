/* The trace's size bound and recording window: which rows the writer keeps, and what it skipped. */
#include "limit.h"

#include <limits.h>

/* Whether rows of table t are detail (skipped first) rather than what live memory and OOMs need. */
static int is_detail(int t)
{
    switch (t) {
    case VT_T_API_CALL: case VT_T_MEMCPY: case VT_T_MEMSET: case VT_T_KERNEL: case VT_T_BUFFER_USE: case VT_T_KERNEL_SUMMARY:
    case VT_T_NVTX_RANGE: case VT_T_SYNC_EVENT: case VT_T_OVERHEAD:
        return 1;
    default: return 0;
    }
}

void vt__limit_init(struct vt__limit *l, uint64_t maxBytes, int64_t timeBaseNs, int64_t startAfterNs,
                    int64_t stopAfterNs)
{
    l->maxBytes = maxBytes;
    if (timeBaseNs <= 0) startAfterNs = stopAfterNs = -1; /* no known start: no window */
    l->startNs = startAfterNs >= 0 && timeBaseNs <= INT64_MAX - startAfterNs ? timeBaseNs + startAfterNs : INT64_MIN;
    l->stopNs = stopAfterNs >= 0 && timeBaseNs <= INT64_MAX - stopAfterNs ? timeBaseNs + stopAfterNs : INT64_MAX;
    l->bThin = l->bFull = 0;
    l->nThinned = l->nOutside = 0;
}

int vt__limit_keep(struct vt__limit *l, const struct vt__row *r)
{
    const struct vt__table_spec *t = &vt__aTable[r->table];
    if (!is_detail(r->table)) return 1;
    if (l->bThin) {
        l->nThinned++;
        return 0;
    }
    if (t->timeCol && !(r->nullMask & (1u << (t->timeCol - 1)))) {
        int64_t ts = r->v[t->timeCol - 1].i;
        if (ts < l->startNs || ts >= l->stopNs) {
            l->nOutside++;
            return 0;
        }
    }
    return 1;
}

unsigned vt__limit_batch_rows(uint64_t maxBytes, unsigned nRows)
{
    uint64_t nRoom = maxBytes / 100 * (100 - VT_LIMIT_THIN_PERCENT) / 2 / 256;
    if (!maxBytes || nRoom >= nRows) return nRows;
    return nRoom > 64 ? (unsigned)nRoom : 64;
}

enum vt__limit_step vt__limit_size(struct vt__limit *l, uint64_t nBytes)
{
    if (!l->maxBytes || l->bFull) return VT_LIMIT_SAME;
    if (nBytes >= l->maxBytes) {
        l->bFull = l->bThin = 1;
        return VT_LIMIT_FULL_NOW;
    }
    if (!l->bThin && nBytes >= l->maxBytes / 100 * VT_LIMIT_THIN_PERCENT) {
        l->bThin = 1;
        return VT_LIMIT_THIN_NOW;
    }
    return VT_LIMIT_SAME;
}
