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
 * where a memo entry changed after its first store (a store over it, the claim of its object; Python's
 * pickler writes neither): each changes p->epoch, and the runs remembered before are forgotten.
 *
 * Runs are found by their first RUN_KEY bytes (hashed) and compared whole: a run remembered matches where
 * the input holds its bytes and no further fetch follows them (or it holds RUN_MAX fetches), so finding one
 * reads neither the opcodes one by one nor the run's end first.
 */

#define RUN_KEY 32          /* bytes of a run hashed to find it: shorter runs go by the opcode loop */
#define RUN_MAX 1024        /* fetches of one run remembered, at most (the rest go by the opcode loop) */
#define RUN_BUCKETS 1024    /* a power of 2 */
#define RUN_ENTRIES 4096    /* runs remembered, at most */
#define RUN_BYTES (4 << 20) /* storage they keep, in all */

struct pkrun {
    size_t nByte, n;    /* the run's bytes, its values */
    uint64_t id;
    uint32_t next;      /* the next run in its bucket, + 1 (0: none) */
    struct vt_pkval *a; /* n values, then the nByte bytes (one allocation) */
};

struct pkruns {
    uint64_t epoch;                 /* p->epoch when these were remembered */
    uint64_t nId;                   /* ids given */
    size_t nByte;                   /* storage kept */
    uint32_t nRun;
    uint32_t aHead[RUN_BUCKETS];    /* first run of each bucket, + 1 */
    struct pkrun aRun[RUN_ENTRIES];
};

/* The bucket of the run beginning at z (RUN_KEY bytes readable). */
static size_t run_bucket(const uint8_t *z)
{
    uint64_t w[4], h;
    _Static_assert(RUN_KEY == sizeof w, "RUN_KEY");
    memcpy(w, z, sizeof w);
    h = (w[0] * UINT64_C(0x9e3779b97f4a7c15)) ^ (w[1] * UINT64_C(0xc2b2ae3d27d4eb4f)) ^
        (w[2] * UINT64_C(0x165667b19e3779f9)) ^ (w[3] * UINT64_C(0xd6e8feb86659fd93));
    return (size_t)(h >> 40) & (RUN_BUCKETS - 1);
}

/* Forget every run remembered. */
static void runs_clear(struct pkruns *r)
{
    for (uint32_t k = 0; k < r->nRun; k++) free(r->aRun[k].a);
    memset(r->aHead, 0, sizeof r->aHead);
    r->nRun = 0;
    r->nByte = 0;
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

/* Remember the run z[0..nByte) and its n values (a), first in bucket k. Returns it, or NULL when it is not
 * remembered (out of memory, or past RUN_ENTRIES or RUN_BYTES). */
static struct pkrun *run_put(struct pkruns *r, size_t k, const uint8_t *z, size_t nByte, const struct vt_pkval *a, size_t n)
{
    size_t nNew = n * sizeof *a + nByte;
    struct pkrun *e;
    struct vt_pkval *aNew;
    if (r->nRun == RUN_ENTRIES || r->nByte + nNew > RUN_BYTES || !(aNew = malloc(nNew))) return NULL;
    memcpy(aNew, a, n * sizeof *a);
    memcpy(aNew + n, z, nByte);
    r->nByte += nNew;
    e = &r->aRun[r->nRun];
    *e = (struct pkrun){nByte, n, ++r->nId, r->aHead[k], aNew};
    r->aHead[k] = ++r->nRun;
    return e;
}

int vt__pk_run_cached(struct vt_pk *p)
{
    const uint8_t *z = p->aBuf + p->iPos;
    size_t nAvail = p->nBuf - p->iPos, nRoom = p->nStackAlloc - p->nStack, k, i = 0, n = 0;
    struct pkruns *r = p->pRuns;
    struct pkrun *e = NULL;
    if (nAvail <= RUN_KEY) return 0;
    if (!r) {
        if (!(r = p->pRuns = calloc(1, sizeof *r))) return 0;
        r->epoch = p->epoch;
    }
    if (r->epoch != p->epoch) { /* a memo entry changed: what the runs pushed may no longer be there */
        runs_clear(r);
        r->epoch = p->epoch;
    }
    k = run_bucket(z);
    for (uint32_t j = r->aHead[k]; j; j = e->next) {
        size_t m;
        e = &r->aRun[j - 1];
        m = e->nByte;
        if (m < nAvail && e->n <= nRoom && !memcmp(e->a + e->n, z, m) &&
            ((z[m] != 'h' && z[m] != 'j') || e->n == RUN_MAX)) {
            memcpy(p->aStack + p->nStack, e->a, e->n * sizeof *e->a);
            n = e->n;
            i = m;
            break;
        }
    }
    if (!n) { /* not met before (or no longer remembered): its extent, whole in the buffer and on the stack */
        while (n < RUN_MAX && n < nRoom && i + 5 <= nAvail && (z[i] == 'h' || z[i] == 'j')) {
            i += z[i] == 'h' ? 2 : 5;
            n++;
        }
        /* remembered when it ends at another opcode (or at RUN_MAX): one cut by the buffer's end or the
         * stack's room would not be met again whole */
        if (i < RUN_KEY || (n < RUN_MAX && (n == nRoom || i + 5 > nAvail))) return 0;
        if (!run_values(p, z, i, p->aStack + p->nStack)) return 0;
        e = run_put(r, k, z, i, p->aStack + p->nStack, n); /* pushed all the same when not remembered */
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

void vt__pk_runs_free(struct vt_pk *p)
{
    if (!p->pRuns) return;
    runs_clear(p->pRuns);
    free(p->pRuns);
    p->pRuns = NULL;
}
