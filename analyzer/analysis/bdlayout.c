/* The fragmentation seen at a peak: the caching allocator's segments and the blocks live in them, by address. */
#include "analysis.h"

#include <stdlib.h>

int vt__bdlayout_add(struct vt_bdlayout *L, int64_t addr, int64_t bytes, int bSeg)
{
    if (addr < 0 || bytes <= 0) return 0;
    if (L->n == L->nAlloc) {
        int64_t nNew = L->nAlloc ? 2 * L->nAlloc : 64;
        struct vt_bdref *aNew = realloc(L->a, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        L->a = aNew;
        L->nAlloc = nNew;
    }
    L->a[L->n].addr = addr;
    L->a[L->n].bytes = bytes;
    L->a[L->n++].bSeg = bSeg;
    return 0;
}

/* By address, a segment before the blocks inside it. */
static int ref_cmp(const void *pa, const void *pb)
{
    const struct vt_bdref *a = pa, *c = pb;
    if (a->addr != c->addr) return a->addr < c->addr ? -1 : 1;
    return c->bSeg - a->bSeg;
}

/* PyTorch's caching allocator: requests up to 1 MiB come from the small pool, whose segments are of 2 MiB;
 * larger ones from the large pool (20 MiB segments, or the request rounded up to 2 MiB above 10 MiB). */
#define SMALL_REQ ((int64_t)1 << 20)
#define SMALL_SEG ((int64_t)2 << 20)

void vt__bdlayout_frag(struct vt_bdlayout *L, int64_t req, struct vt_breakdown *bd)
{
    int pool = req <= 0 ? -1 : req <= SMALL_REQ; /* the request's pool: 1 small, 0 large, -1 unknown (both) */
    if (L->n > 0) qsort(L->a, (size_t)L->n, sizeof *L->a, ref_cmp);
    bd->fragBytes = 0;
    bd->fragReq = req > 0 ? req : -1;
    for (int64_t i = 0; i < L->n;) {
        int64_t end, pos, frag = 0, nPiece = 0, nBlock = 0;
        if (!L->a[i].bSeg) { /* a block outside the segments kept (made before the trace): no layout */
            i++;
            continue;
        }
        pos = L->a[i].addr;
        end = pos + L->a[i].bytes;
        if (pool >= 0 && (L->a[i].bytes == SMALL_SEG) != pool) { /* the other pool's: never the request's */
            for (i++; i < L->n && !L->a[i].bSeg && L->a[i].addr < end; i++) {
            }
            continue;
        }
        for (i++;; i++) { /* the blocks inside it, by address, and the free piece before each (and at its end) */
            int bIn = i < L->n && !L->a[i].bSeg && L->a[i].addr < end;
            int64_t next = bIn ? L->a[i].addr : end;
            if (next - pos >= 512 && (bd->fragReq < 0 || next - pos < bd->fragReq)) frag += next - pos, nPiece++;
            if (!bIn) break;
            nBlock++;
            if (L->a[i].addr + L->a[i].bytes > pos) pos = L->a[i].addr + L->a[i].bytes;
        }
        if (nBlock > 0 && frag > 0) bd->fragBytes += frag, bd->fragPieces += nPiece, bd->fragSegs++;
    }
}
