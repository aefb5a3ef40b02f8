/* The unpickler's memory of memo-fetch runs: a run of BINGETs met before (a traceback's frames) pushed by one copy. */
#include "pickle.h"

#include <stdlib.h>
#include <string.h>

/*
 * A traceback is a list of frame dicts, each fetched from the memo: MARK, a BINGET or LONG_BINGET per frame,
 * APPENDS. PyTorch writes the same traceback again for many events (a list new for each, over the same frame
 * dicts): the same bytes, naming the same memo entries. When every entry such a run names holds an immortal
 * object (vt__pk_keep, an entry kept to the end), running its fetches again pushes the same values and
 * changes nothing else (the hot table aside, a cache): so the run's bytes are remembered with the values they
 * pushed, and the next run of the same bytes pushes those values by one copy. The values can differ only
 * where a memo entry changed after its first store (a store over it, the claim of an immortal object; Python's
 * pickler writes neither): each changes p->epoch, and the runs remembered before are forgotten. The memo-count
 * pass (pkindex.c) remembers runs too, without values: a run met again is passed over and counted at the end.
 *
 * Runs are found by their first RUN_KEY bytes (hashed) and compared whole (their last 8 bytes first: stacks
 * share their innermost frames, so runs share their first bytes): a run remembered matches where the input
 * holds its bytes and no further fetch follows them (or it holds RUN_MAX fetches), so finding one reads
 * neither the opcodes one by one nor the run's end first. The run found goes first in its bucket.
 */

#define RUN_BUCKETS 8192    /* a power of 2 */
#define RUN_ENTRIES 16384   /* runs remembered, at most */
#define RUN_CHAIN 8         /* runs remembered in one bucket, at most: a lookup reads no more */
#define RUN_BYTES (4 << 20) /* storage they keep, in all */

struct pkruns {
    uint64_t epoch;                 /* the reading run: p->epoch when these were remembered */
    uint64_t nId;                   /* ids given */
    size_t nByte;                   /* storage kept */
    uint32_t nRun, nRunAlloc;
    uint32_t aHead[RUN_BUCKETS];    /* first run of each bucket, + 1 */
    uint8_t anChain[RUN_BUCKETS];   /* runs in each bucket */
    struct pkrun *aRun;             /* grown as runs are remembered */
};

/* The bucket of a run whose first RUN_KEY bytes are w. */
static size_t run_bucket(const uint64_t w[RUN_KEY / 8])
{
    uint64_t h = 0;
    for (int k = 0; k < RUN_KEY / 8; k++) h = (h ^ w[k]) * UINT64_C(0x9e3779b97f4a7c15);
    return (size_t)(h >> 40) & (RUN_BUCKETS - 1);
}

struct pkruns *vt__pk_runs_new(void)
{
    return calloc(1, sizeof(struct pkruns));
}

/* Forget every run remembered. */
static void runs_clear(struct pkruns *r)
{
    for (uint32_t k = 0; k < r->nRun; k++) free(r->aRun[k].a ? (void *)r->aRun[k].a : (void *)r->aRun[k].z); /* one allocation */
    memset(r->aHead, 0, sizeof r->aHead);
    memset(r->anChain, 0, sizeof r->anChain);
    r->nRun = 0;
    r->nByte = 0;
}

void vt__pk_runs_free(struct pkruns *r)
{
    if (!r) return;
    runs_clear(r);
    free(r->aRun);
    free(r);
}

uint32_t vt__pk_runs_count(const struct pkruns *r)
{
    return r->nRun;
}

struct pkrun *vt__pk_runs_at(struct pkruns *r, uint32_t i)
{
    return &r->aRun[i];
}

struct pkrun *vt__pk_runs_find(struct pkruns *r, const uint8_t *z, size_t nAvail, size_t nRoom, size_t *pBucket)
{
    uint64_t w[RUN_KEY / 8];
    memcpy(w, z, sizeof w);
    *pBucket = run_bucket(w);
    for (uint32_t j = r->aHead[*pBucket], *pj = &r->aHead[*pBucket]; j; pj = &r->aRun[j - 1].next, j = *pj) {
        struct pkrun *e = &r->aRun[j - 1];
        size_t m = e->nByte;
        uint64_t v;
        if (m >= nAvail || e->n > nRoom) continue;
        memcpy(&v, z + m - 8, 8); /* its last 8 bytes first: runs with the same first ones mostly differ there */
        if (v != e->tail || memcmp(e->aKey, w, sizeof w) || memcmp(e->z + RUN_KEY, z + RUN_KEY, m - RUN_KEY) ||
            ((z[m] == 'h' || z[m] == 'j') && e->n != RUN_MAX))
            continue;
        if (pj != &r->aHead[*pBucket]) { /* first in its bucket from now on: the runs met most are met first */
            *pj = e->next;
            e->next = r->aHead[*pBucket];
            r->aHead[*pBucket] = j;
        }
        return e;
    }
    return NULL;
}

size_t vt__pk_runs_extent(const uint8_t *z, size_t nAvail, size_t nRoom, size_t *pn)
{
    size_t i = 0, n = 0, nMax = nRoom < RUN_MAX ? nRoom : RUN_MAX;
    for (size_t iLim = nAvail - 5; i <= iLim && n < nMax; n++) { /* nAvail > RUN_KEY: no wrap */
        if (z[i] == 'h') i += 2;
        else if (z[i] == 'j') i += 5;
        else break;
    }
    *pn = n;
    /* remembered when it ends at another opcode (or at RUN_MAX): one cut by the buffer's end or the room
     * would not be met again whole */
    return i < RUN_KEY || (n < RUN_MAX && (n == nRoom || i + 5 > nAvail)) ? 0 : i;
}

struct pkrun *vt__pk_runs_put(struct pkruns *r, size_t k, const uint8_t *z, size_t nByte, const struct vt_pkval *a,
                              size_t n)
{
    size_t nVal = a ? n * sizeof *a : 0, nNew = nVal + nByte;
    struct pkrun *e;
    char *m;
    if (r->nRun == RUN_ENTRIES || r->anChain[k] == RUN_CHAIN || r->nByte + nNew > RUN_BYTES) return NULL;
    if (r->nRun == r->nRunAlloc) {
        uint32_t nAlloc = r->nRunAlloc ? r->nRunAlloc * 2 : 256;
        struct pkrun *a = realloc(r->aRun, nAlloc * sizeof *a);
        if (!a) return NULL;
        r->aRun = a;
        r->nRunAlloc = nAlloc;
    }
    if (!(m = malloc(nNew))) return NULL;
    if (a) memcpy(m, a, nVal);
    memcpy(m + nVal, z, nByte);
    r->nByte += nNew;
    e = &r->aRun[r->nRun];
    *e = (struct pkrun){{0}, 0, nByte, n, ++r->nId, 0, r->aHead[k], (uint8_t *)m + nVal, a ? (struct vt_pkval *)(void *)m : NULL};
    memcpy(e->aKey, z, sizeof e->aKey);
    memcpy(&e->tail, z + nByte - 8, 8);
    r->aHead[k] = ++r->nRun;
    r->anChain[k]++;
    return e;
}

/*
 * The values the fetches in z[0..nByte) (whole BINGETs and LONG_BINGETs) would push, into aOut, when each
 * names an entry holding an immortal object kept to the end (what memo_get's common case pushes without a
 * count or any other change). Returns 1, or 0 when one does not (nothing is changed either way).
 */
static int run_values(const struct vt_pk *p, const uint8_t *z, size_t nByte, struct vt_pkval *aOut)
{
    uint64_t nEntry = p->nMemo < p->nIndexed ? p->nMemo : p->nIndexed;
    for (size_t i = 0; i < nByte; aOut++) {
        const struct pkhot *h;
        const struct vt_pkval *m, *a;
        uint64_t idx;
        int64_t slot;
        if (z[i] == 'h') {
            idx = z[i + 1];
            i += 2;
        } else {
            idx = vt__pk_le4(z + i + 1);
            i += 5;
        }
        if ((h = vt__pk_hot(p->aHot, idx)) != NULL) {
            *aOut = h->v;
            continue;
        }
        if (idx >= nEntry || (slot = vt__pk_rank(p->aUsed, p->aRank, idx)) < 0 || p->aLeft[slot] != 255 ||
            !(a = p->apChunk[slot / CHUNK]))
            return 0;
        m = &a[slot % CHUNK];
        if (m->type < VT_PK_STR || m->type > VT_PK_DICT || m->u.p->nRef != IMMORTAL) return 0;
        *aOut = *m;
    }
    return 1;
}

int vt__pk_run_cached(struct vt_pk *p)
{
    const uint8_t *z = p->aBuf + p->iPos;
    size_t nAvail = p->nBuf - p->iPos, nRoom = p->nStackAlloc - p->nStack, k, i, n;
    struct pkruns *r = p->pRuns;
    struct pkrun *e;
    if (nAvail <= RUN_KEY || !vt__pk_runs_maybe(z)) return 0;
    if (!r) {
        if (!(r = p->pRuns = vt__pk_runs_new())) return 0;
        r->epoch = p->epoch;
    }
    if (r->epoch != p->epoch) { /* a memo entry changed: what the runs pushed may no longer be there */
        runs_clear(r);
        r->epoch = p->epoch;
    }
    if ((e = vt__pk_runs_find(r, z, nAvail, nRoom, &k)) != NULL) {
        n = e->n;
        i = e->nByte;
        memcpy(p->aStack + p->nStack, e->a, n * sizeof *e->a);
    } else { /* not met before (or no longer remembered): pushed as the fetches would, then remembered */
        if (!(i = vt__pk_runs_extent(z, nAvail, nRoom, &n)) || !run_values(p, z, i, p->aStack + p->nStack)) return 0;
        e = vt__pk_runs_put(r, k, z, i, p->aStack + p->nStack, n); /* pushed all the same when not remembered */
    }
    p->nStack += n;
    p->iPos += i;
    if (e) { /* APPENDS next: the list is said to hold the run (pickle.c) */
        p->runBase = p->nStack - n;
        p->runId = e->id;
        p->runOff = p->nBase + (int64_t)p->iPos;
    }
    return 1;
}
