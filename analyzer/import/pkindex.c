/* The memo-use index of the unpickler: a pass over a pickle's opcodes that counts the fetches of each memo entry. */
#include "pickle.h"

#include <stdlib.h>
#include <string.h>

/*
 * vt__pk_index (pickle.h) runs before vt__pk_run on a second source over the same bytes: it reads
 * only opcodes and lengths, counts each memo entry's fetches into a byte (255: kept to the end; the
 * first 256 entries, those a BINGET can name, are kept to the end uncounted: at most 256 objects),
 * then turns the counts into the reading run's index (a bit per entry, a count every 64 entries,
 * the fetches to come of each entry fetched at all). Nothing is built, so a hostile pickle costs
 * one pass and a byte per memo entry; an input it cannot read to its STOP gets no index. A run of
 * fetches after a MARK met before (a traceback: the same bytes, pkrun.c) is passed over, and its
 * fetches are counted once more per time at the end (add_runs): a count that saturates is the same
 * in any order, and the entries it names were checked the first time (the memo only grows).
 */

/* One more fetch of entry idx in aLeft (indexed by entry here): saturates at 255, without a branch. */
static inline void bump(uint8_t *aLeft, uint64_t idx)
{
    uint8_t v = aLeft[idx];
    aLeft[idx] = (uint8_t)(v + (v != 255));
}

/* Count one more fetch of entry idx (bump), or fail for an entry never stored. */
static int count_get(struct vt_pk *p, uint64_t idx)
{
    if (idx >= p->nMemo) return VT_PK_ECORRUPT; /* never stored: the reading run says so */
    bump(p->aLeft, idx);
    return 0;
}

/* One memo entry stored at idx (in order, as memo_put requires); aLeft grows with it. Returns 0 or an error. */
static int count_put(struct vt_pk *p, uint64_t idx)
{
    if (idx > p->nMemo) return VT_PK_ECORRUPT;
    if (idx < p->nMemo) return 0;
    if (p->nMemo == p->nMemoAlloc) {
        size_t n = p->nMemoAlloc ? p->nMemoAlloc * 2 : 4096;
        uint8_t *a = realloc(p->aLeft, n);
        if (!a) return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
        memset(a + p->nMemoAlloc, 0, n - p->nMemoAlloc);
        p->aLeft = a;
        p->nMemoAlloc = n;
    }
    p->nMemo++;
    return 0;
}

/*
 * Scan every opcode up to STOP, counting the fetches of each memo entry into aLeft. Nothing is built:
 * only lengths are read. Returns 0 when STOP was reached, else nonzero (the input is not one this
 * reader accepts; the reading run will say why).
 */
static int scan(struct vt_pk *p, struct pkruns *r)
{
    int rc;
    for (;;) {
        uint8_t op;
        uint64_t n;
        /* the opcodes of PyTorch's snapshots, while the buffer holds a whole one: locals, no calls; any
         * other opcode, and every case that needs a check, goes by the switch below */
        {
            const uint8_t *b = p->aBuf;
            uint8_t *aLeft = p->aLeft;
            size_t i = p->iPos, end = p->nBuf, nMemo = p->nMemo, nAlloc = p->nMemoAlloc;
            while (end - i >= 16) {
                uint64_t idx;
                uint8_t c = b[i];
                /* 4 opcodes in 5 are fetches, in runs (a traceback's frames): before the switch's compares, each
                 * run in a loop of its own */
                if (c == 'j') {
                    do {
                        if ((idx = vt__pk_le4(b + i + 1)) >= nMemo) goto slow;
                        bump(aLeft, idx);
                        i += 5;
                    } while (end - i >= 16 && b[i] == 'j');
                    continue;
                } else if (c == 'h') {
                    /* entries below 256 (the only ones BINGET names) are kept to the end whatever their fetches
                     * (vt__pk_index): once 256 exist, a fetch needs neither a check nor a count */
                    if (nMemo < 256) {
                        if (b[i + 1] >= nMemo) goto slow;
                        i += 2;
                        continue;
                    }
                    do i += 2;
                    while (end - i >= 16 && b[i] == 'h');
                    continue;
                } else {
                    switch (c) {
                    case 0x94:
                        if (nMemo == nAlloc) goto slow;
                        nMemo++;
                        i++;
                        continue;
                    case '(':
                        /* a run of fetches met before (a traceback): its counts are those of its first time, added
                         * at the end (saturating counts add in any order) */
                        if (++i, r && end - i > RUN_KEY && vt__pk_runs_maybe(b + i)) {
                            size_t k, nOp, nByte;
                            struct pkrun *e = vt__pk_runs_find(r, b + i, end - i, SIZE_MAX, &k);
                            if (e) {
                                e->nMore++;
                                i += e->nByte;
                            } else if ((nByte = vt__pk_runs_extent(b + i, end - i, SIZE_MAX, &nOp)) != 0) {
                                vt__pk_runs_put(r, k, b + i, nByte, NULL, nOp); /* counted now, by the loop */
                            }
                        }
                        continue;
                    case '}': case ']': case 'u': case 'e': case 's': case 'a': case 0x88: case 0x89: case 'N':
                    case 0x86:
                        i++;
                        continue;
                    case 'K': i += 2; continue;
                    case 'M': i += 3; continue;
                    case 'J': i += 5; continue;
                    case 0x8a: /* LONG1 */
                    case 0x8c: /* SHORT_BINUNICODE */
                        if (end - i < (size_t)b[i + 1] + 2) goto slow;
                        i += (size_t)b[i + 1] + 2;
                        continue;
                    default: goto slow;
                    }
                }
            }
        slow:
            p->iPos = i;
            p->nMemo = nMemo;
        }
        if ((rc = vt__pk_need(p, 1)) != 0) return rc;
        op = p->aBuf[p->iPos++];
        switch (op) {
        case '.': return 0;
        case '(': case '0': case '1': case '2': case 'N': case 0x88: case 0x89: case 0x98: case ']': case 0x8f:
        case '}': case ')': case 0x85: case 0x86: case 0x87: case 't': case 'l': case 0x91: case 'd': case 'a':
        case 's': case 'e': case 'u': case 0x90:
            break;
        case 0x80: case 'K': n = 1; goto fixed;
        case 'M': n = 2; goto fixed;
        case 'J': n = 4; goto fixed;
        case 'G': case 0x95: n = 8; goto fixed;
        fixed:
            if ((rc = vt__pk_take(p, NULL, n)) != 0) return rc;
            break;
        case 0x8a: case 0x8c: case 'U': case 'C': /* a 1-byte length */
            if ((rc = vt__pk_need(p, 1)) != 0) return rc;
            n = p->aBuf[p->iPos++];
            if ((rc = vt__pk_take(p, NULL, n)) != 0) return rc;
            break;
        case 0x8b: case 'X': case 'T': case 'B': /* a 4-byte length */
            if ((rc = vt__pk_need(p, 4)) != 0) return rc;
            n = vt__pk_le4(p->aBuf + p->iPos);
            p->iPos += 4;
            if (op == 0x8b && n > 0x7fffffff) return VT_PK_ECORRUPT;
            if ((rc = vt__pk_take(p, NULL, n)) != 0) return rc;
            break;
        case 0x8d: case 0x8e: case 0x96: /* an 8-byte length */
            if ((rc = vt__pk_need(p, 8)) != 0) return rc;
            n = vt__pk_le8(p->aBuf + p->iPos);
            p->iPos += 8;
            if (n > VT_PK_STR_MAX) return VT_PK_EUNSUPPORTED;
            if ((rc = vt__pk_take(p, NULL, n)) != 0) return rc;
            break;
        case 'h': case 'j': case 'q': case 'r': { /* BINGET, LONG_BINGET, BINPUT, LONG_BINPUT */
            size_t w = op == 'h' || op == 'q' ? 1 : 4;
            uint64_t idx;
            if ((rc = vt__pk_need(p, w)) != 0) return rc;
            idx = w == 1 ? p->aBuf[p->iPos] : vt__pk_le4(p->aBuf + p->iPos);
            p->iPos += w;
            if (op == 'h') rc = idx < p->nMemo ? 0 : VT_PK_ECORRUPT; /* counted by finish */
            else rc = op == 'j' ? count_get(p, idx) : count_put(p, idx);
            if (rc != 0) return rc;
            break;
        }
        case 0x94:
            if ((rc = count_put(p, p->nMemo)) != 0) return rc;
            break;
        default: /* refused or unknown: the reading run says which */
            return VT_PK_ECORRUPT;
        }
    }
}

/* Add to the counts the fetches of the runs scan passed over: each LONG_BINGET of run e once more per time e
 * was met since it was counted (BINGETs are not counted), saturating at 255. */
static void add_runs(struct vt_pk *p, struct pkruns *r)
{
    for (uint32_t k = 0; k < vt__pk_runs_count(r); k++) {
        const struct pkrun *e = vt__pk_runs_at(r, k);
        for (size_t i = 0; e->nMore && i < e->nByte; i += e->z[i] == 'h' ? 2 : 5) {
            uint8_t *v;
            if (e->z[i] == 'h') continue;
            v = &p->aLeft[vt__pk_le4(e->z + i + 1)]; /* below nMemo: it was counted once */
            *v = e->nMore >= (uint64_t)(255 - *v) ? 255 : (uint8_t)(*v + e->nMore);
        }
    }
}

int vt__pk_index(struct vt_pk *p, struct vt__src *pre)
{
    struct vt__src *in = p->in;
    struct pkruns *r;
    size_t nWord, nKept = 0;
    int rc;
    if (p->nBase || p->nBuf || p->nMemo || p->bIndexed) return VT_PK_OK; /* only before reading */
    p->in = pre;
    r = vt__pk_runs_new(); /* none (out of memory): every run counted as it comes */
    rc = scan(p, r);
    if (rc == 0 && r) add_runs(p, r);
    vt__pk_runs_free(r);
    p->in = in;
    p->iPos = p->nBuf = 0;
    p->nBase = 0;
    p->bEof = 0;
    if (rc == VT_PK_ENOMEM) {
        free(p->aLeft);
        p->aLeft = NULL;
        p->nMemo = p->nMemoAlloc = 0;
        return rc;
    }
    p->zErr[0] = 0;
    if (rc != 0) { /* not one this reader accepts: read without an index, to fail with the right message */
        free(p->aLeft);
        p->aLeft = NULL;
        p->nMemo = p->nMemoAlloc = 0;
        return VT_PK_OK;
    }
    /* the first 256 entries (those BINGET can name, not counted by scan) are kept to the end: at most 256
     * objects, the keys and first frames every event names */
    if (p->nMemo) memset(p->aLeft, 255, p->nMemo < 256 ? p->nMemo : 256); /* none: no table (NULL) */
    /* the entries fetched: a bit each, a count every 64, and their fetches to come, densely */
    nWord = p->nMemo / 64 + 1;
    p->aUsed = calloc(nWord, sizeof *p->aUsed);
    p->aRank = malloc(nWord * sizeof *p->aRank);
    if (!p->aUsed || !p->aRank) goto oom;
    for (size_t i = 0; i < p->nMemo; i++) {
        if (i % 64 == 0) p->aRank[i / 64] = (uint32_t)nKept;
        if (p->aLeft[i]) {
            if (nKept == UINT32_MAX) goto oom;
            p->aUsed[i / 64] |= UINT64_C(1) << (i % 64);
            p->aLeft[nKept++] = p->aLeft[i]; /* nKept <= i: compacted in place */
        }
    }
    if (p->nMemo % 64 == 0) p->aRank[p->nMemo / 64] = (uint32_t)nKept;
    {
        uint8_t *a = realloc(p->aLeft, nKept ? nKept : 1);
        if (a) p->aLeft = a;
    }
    p->nChunk = nKept / CHUNK + 1;
    p->apChunk = calloc(p->nChunk, sizeof *p->apChunk);
    p->anOpen = malloc(p->nChunk * sizeof *p->anOpen);
    if (!p->apChunk || !p->anOpen) goto oom;
    for (size_t c = 0; c < p->nChunk; c++) /* entries kept to the end never count down: their chunk stays */
        p->anOpen[c] = (uint16_t)(c + 1 < p->nChunk ? CHUNK : nKept % CHUNK);
    p->nIndexed = p->nMemo;
    p->nMemo = 0;
    p->nMemoAlloc = nKept;
    p->bIndexed = 1;
    return VT_PK_OK;
oom:
    free(p->aUsed);
    free(p->aRank);
    free(p->aLeft);
    free(p->apChunk);
    free(p->anOpen);
    p->aUsed = NULL;
    p->aRank = NULL;
    p->aLeft = NULL;
    p->apChunk = NULL;
    p->anOpen = NULL;
    p->nChunk = 0;
    p->nMemo = p->nMemoAlloc = 0;
    return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
}
