/* The restricted streaming unpickler: plain data from protocols 2-5, every global refused, children handed to a callback. */
#include "pickle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Objects carry a reference count and sit on one list of every live object,
 * so that vt__pk_free releases what reference counting cannot (a hostile
 * pickle can build a list that contains itself). Releasing is iterative (a
 * chain of lists a million deep does not recurse). The mark stack is kept
 * apart from the value stack, as CPython's unpickler does. An object the memo
 * keeps to the end may be made immortal (vt__pk_keep): its count is no longer
 * kept (IMMORTAL), so the fetches of a traceback's shared frames and of the
 * shared key strings, and the release of what holds them, touch no count.
 */

/* run() in two builds where the CPU is picked at load time: with the popcount instruction (memo_slot's
 * rank, one per memo fetch) and without it (every x86-64 CPU); elsewhere one build. Not in sanitizer
 * builds: the load-time resolver runs during relocation, before the sanitizer's runtime is set up,
 * and its instrumented code crashes there (ThreadSanitizer). */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define PK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define PK_SANITIZED 1
#endif
#endif
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__POPCNT__) && !defined(PK_SANITIZED) &&                \
    ((defined(__clang__) && __clang_major__ >= 14) || (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 8))
#define PK_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define PK_CLONES
#endif

/* Record an error (first one wins) and return rc. */
int vt__pk_fail(struct vt_pk *p, int rc, const char *zFmt, ...)
{
    va_list ap;
    char z[200];
    if (p->zErr[0]) return rc;
    va_start(ap, zFmt);
    vsnprintf(z, sizeof z, zFmt, ap);
    va_end(ap);
    snprintf(p->zErr, sizeof p->zErr, "%s (pickle offset %lld)", z, (long long)p->iOp);
    return rc;
}

/* ---- objects ---- */

#define SPARE_MAX 4096           /* freed objects kept for reuse, with their storage when it is at most */
#define STORE_MAX 2048           /* bytes (an event's pairs, a traceback's items: allocated once, not per event) */
#define STORE_TOTAL (4 << 20)    /* bytes, in all */

/* Bytes of storage o has (u.a or u.z). */
static size_t obj_bytes(const struct vt_pkobj *o)
{
    if (o->type == VT_PK_STR || o->type == VT_PK_BYTES) return o->nAlloc;
    return o->nAlloc * (o->type == VT_PK_DICT ? 2 : 1) * sizeof(struct vt_pkval);
}

/* The list of spare objects an object of type t goes to and comes from: lists, dicts (pairs), the rest. */
#define SPARE_CLASS(t) ((t) == VT_PK_LIST ? 1 : (t) == VT_PK_DICT ? 2 : 0)

/* A new object of type t with one reference, on the live list; NULL when out of memory. A spare object's
 * storage comes with it (nAlloc in t's units). */
static struct vt_pkobj *obj_new(struct vt_pk *p, int t)
{
    struct pkobj **ppSpare = &p->apSpare[SPARE_CLASS(t)], *x = *ppSpare;
    if (x) {
        *ppSpare = x->pNext;
        p->nSpare--;
        p->nKept -= x->nKeep;
    } else if (!(x = malloc(sizeof *x))) {
        return NULL;
    } else {
        x->o.u.a = NULL;
        x->nKeep = 0;
    }
    x->o.nRef = 1;
    x->o.type = (uint32_t)t;
    x->o.iMemo = -1;
    x->o.tag = 0;
    x->o.run = 0;
    x->o.n = 0;
    x->o.nAlloc = t == VT_PK_STR || t == VT_PK_BYTES ? x->nKeep
                                                     : x->nKeep / ((t == VT_PK_DICT ? 2 : 1) * sizeof(struct vt_pkval));
    x->pPrev = x->pFree = NULL;
    x->bNoOffer = 0;
    x->nImmortal = 0;
    x->pNext = p->pLive;
    p->nLive++;
    if (p->pLive) p->pLive->pPrev = x;
    p->pLive = x;
    return &x->o;
}

/* Unlink from the live list and free one object's own memory (not its children). */
static void obj_destroy(struct vt_pk *p, struct pkobj *x)
{
    if (x->pPrev) x->pPrev->pNext = x->pNext;
    else p->pLive = x->pNext;
    if (x->pNext) x->pNext->pPrev = x->pPrev;
    p->nLive--;
    if (p->nSpare < SPARE_MAX) {
        size_t nByte = obj_bytes(&x->o);
        if (x->o.u.a && nByte <= STORE_MAX && p->nKept + nByte <= STORE_TOTAL) {
            x->nKeep = nByte;
            p->nKept += nByte;
        } else {
            free(x->o.u.a);
            x->o.u.a = NULL;
            x->nKeep = 0;
        }
        x->pNext = p->apSpare[SPARE_CLASS((int)x->o.type)];
        p->apSpare[SPARE_CLASS((int)x->o.type)] = x;
        p->nSpare++;
    } else {
        free(x->o.u.a);
        free(x);
    }
}

/* Release one reference; objects left without any are freed, their children released in turn. */
static void val_unref(struct vt_pk *p, struct vt_pkval *v)
{
    struct pkobj *pWork = NULL;
    if (v->type < VT_PK_STR || v->type > VT_PK_DICT || !v->u.p) return;
    if (v->u.p->nRef == IMMORTAL || --v->u.p->nRef > 0) return;
    pWork = (struct pkobj *)v->u.p;
    pWork->pFree = NULL;
    while (pWork) { /* iterative: each freed container queues the children it held last */
        struct pkobj *x = pWork;
        pWork = x->pFree;
        if (x->o.type >= VT_PK_LIST && x->o.type <= VT_PK_DICT && x->o.u.a) { /* an empty one may have no array */
            const struct vt_pkval *a = x->o.u.a, *aEnd = a + (x->o.type == VT_PK_DICT ? 2 * x->o.n : x->o.n);
            /* immortal children cost a test each (the keys), or nothing where the list says so (frames) */
            for (a += x->nImmortal; a < aEnd; a++) {
                struct vt_pkobj *c = a->u.p;
                uint32_t nRef;
                if ((unsigned)a->type - VT_PK_STR > VT_PK_DICT - VT_PK_STR || !c || (nRef = c->nRef) == IMMORTAL) continue;
                if ((c->nRef = nRef - 1) == 0) {
                    struct pkobj *y = (struct pkobj *)c;
                    y->pFree = pWork;
                    pWork = y;
                }
            }
        }
        obj_destroy(p, x);
    }
    v->type = VT_PK_NONE;
}

/* Take a reference; fails only when the count would overflow. Returns 0 or an error. */
static int val_ref(struct vt_pk *p, const struct vt_pkval *v)
{
    if (v->type < VT_PK_STR || v->type > VT_PK_DICT || v->u.p->nRef == IMMORTAL) return 0;
    if (v->u.p->nRef == IMMORTAL - 1) return vt__pk_fail(p, VT_PK_ECORRUPT, "too many references to one object");
    v->u.p->nRef++;
    return 0;
}

/* Make room for n more values in the container (items, or pairs for a dict). Returns 0 or an error. */
static int obj_reserve(struct vt_pk *p, struct vt_pkobj *o, size_t n)
{
    size_t per = o->type == VT_PK_DICT ? 2 : 1, want = o->n + n;
    if (want <= o->nAlloc) return 0;
    if (want < o->nAlloc * 2) want = o->nAlloc * 2;
    if (want < 4) want = 4;
    if (want > SIZE_MAX / (per * sizeof(struct vt_pkval))) return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
    struct vt_pkval *a = realloc(o->u.a, want * per * sizeof *a);
    if (!a) return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
    o->u.a = a;
    o->nAlloc = want;
    return 0;
}

/* ---- input ---- */

int vt__pk_refill(struct vt_pk *p, size_t n)
{
    if (p->iPos > 0) {
        memmove(p->aBuf, p->aBuf + p->iPos, p->nBuf - p->iPos);
        p->nBase += (int64_t)p->iPos;
        p->nBuf -= p->iPos;
        p->iPos = 0;
    }
    while (p->nBuf < n && !p->bEof) {
        long k = vt__src_read(p->in, p->aBuf + p->nBuf, BUF_SIZE - p->nBuf);
        if (k < 0) return vt__pk_fail(p, VT_PK_EIO, "cannot read input: %s", p->in->zErr);
        if (k == 0) p->bEof = 1;
        p->nBuf += (size_t)k;
    }
    if (p->nBuf < n) return vt__pk_fail(p, VT_PK_ETRUNC, "truncated: the input ends inside the pickle");
    return 0;
}

int vt__pk_take(struct vt_pk *p, char *dst, uint64_t n)
{
    while (n > 0) {
        size_t k = p->nBuf - p->iPos;
        int rc;
        if (k == 0) {
            if ((rc = vt__pk_need(p, 1)) != 0) return rc;
            k = p->nBuf - p->iPos;
        }
        if (k > n) k = (size_t)n;
        if (dst) {
            memcpy(dst, p->aBuf + p->iPos, k);
            dst += k;
        }
        p->iPos += k;
        n -= k;
    }
    return 0;
}

/* ---- the stack ---- */

/* Push v (its reference moves to the stack). Returns 0 or an out-of-memory error (v released). */
static int push_grow(struct vt_pk *p, struct vt_pkval v)
{
    {
        size_t n = p->nStackAlloc ? p->nStackAlloc * 2 : 256;
        struct vt_pkval *a = realloc(p->aStack, n * sizeof *a);
        if (!a) {
            val_unref(p, &v);
            return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
        }
        p->aStack = a;
        p->nStackAlloc = n;
    }
    p->aStack[p->nStack++] = v;
    return 0;
}

static inline int push(struct vt_pk *p, struct vt_pkval v)
{
    if (p->nStack == p->nStackAlloc) return push_grow(p, v);
    p->aStack[p->nStack++] = v;
    return 0;
}

/* Push object o (its reference moves to the stack); an out-of-memory error when o is NULL. */
static int push_obj(struct vt_pk *p, int t, struct vt_pkobj *o)
{
    struct vt_pkval v;
    if (!o) return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
    v.type = t;
    v.u.p = o;
    return push(p, v);
}

/* Values above the innermost mark start here; fails when there is no mark. */
static int mark_base(struct vt_pk *p, size_t *pBase, const char *zOp)
{
    if (p->nMark == 0) return vt__pk_fail(p, VT_PK_ECORRUPT, "%s without a MARK", zOp);
    *pBase = p->aMark[p->nMark - 1];
    return 0;
}

/* Pop the innermost mark, releasing every value above it. */
static void pop_mark(struct vt_pk *p, size_t base)
{
    while (p->nStack > base) val_unref(p, &p->aStack[--p->nStack]);
    p->nMark--;
}

/* ---- memo ---- */

/*
 * Without an index, entry i is aMemo[i]. With one, the entries some BINGET fetches are numbered
 * densely (their rank, memo_slot) and kept in chunks of CHUNK values, each allocated at its first
 * store and freed once every entry in it has had its last fetch: entries live briefly (a traceback
 * list until the free_completed sharing it) except those kept to the end, so the chunks alive are
 * those few and the ones holding what stays (frame dicts, key strings), not one per entry ever made.
 */

/* Where entry idx is kept: idx itself without an index; with one, its rank among the fetched
 * entries, or -1 when nothing fetches it (it is not kept). */
static inline int64_t memo_slot(const struct vt_pk *p, uint64_t idx)
{
    if (!p->bIndexed) return (int64_t)idx;
    if (idx >= p->nIndexed) return -1;
    return vt__pk_rank(p->aUsed, p->aRank, idx);
}

/* The value kept at slot (memo_slot, >= 0), or NULL where nothing is kept (a chunk not yet made, or
 * freed: every entry in it had its last fetch). */
static inline struct vt_pkval *memo_at(const struct vt_pk *p, int64_t slot)
{
    struct vt_pkval *a;
    if (!p->bIndexed) return (size_t)slot < p->nMemo ? &p->aMemo[slot] : NULL;
    a = p->apChunk[slot / CHUNK];
    return a ? &a[slot % CHUNK] : NULL;
}

static inline void hot_put(struct pkhot *aHot, uint64_t idx, struct vt_pkobj *o)
{
    if (o->nRef == IMMORTAL) aHot[idx & (HOT - 1)] = (struct pkhot){idx, {(int)o->type, {.p = o}}};
}

static inline void hot_forget(struct vt_pk *p, uint64_t idx)
{
    if (p->aHot[idx & (HOT - 1)].idx == idx) p->aHot[idx & (HOT - 1)].idx = UINT64_MAX;
}

/* One of the chunk's entries had its last fetch: the chunk is freed after its last entry's. */
static void chunk_done(struct vt_pk *p, int64_t slot)
{
    size_t c = (size_t)slot / CHUNK;
    if (p->anOpen[c] > 0 && --p->anOpen[c] == 0) {
        free(p->apChunk[c]);
        p->apChunk[c] = NULL;
    }
}

static int memo_put(struct vt_pk *p, uint64_t idx)
{
    struct vt_pkval *v, *m;
    int64_t slot;
    int rc;
    if (p->nStack == 0) return vt__pk_fail(p, VT_PK_ECORRUPT, "memo store from an empty stack");
    hot_forget(p, idx);
    if (idx < p->nMemo) p->epoch++; /* a store over an entry: runs remembered may name it (pkrun.c) */
    /* Python's pickler numbers memo entries 0, 1, 2...: a later index is not from it, and bounding
     * it keeps the memo proportional to the input */
    if (idx > p->nMemo) return vt__pk_fail(p, VT_PK_ECORRUPT, "memo index %llu out of order", (unsigned long long)idx);
    if (p->bIndexed) { /* only what a later BINGET fetches is kept */
        size_t c;
        if (idx == p->nMemo) p->nMemo++;
        if ((slot = memo_slot(p, idx)) < 0) return 0;
        c = (size_t)slot / CHUNK;
        if (!p->apChunk[c]) {
            if (p->anOpen[c] == 0) return 0; /* stored again after its last fetch: nothing fetches it now */
            if (!(p->apChunk[c] = malloc(CHUNK * sizeof *p->apChunk[c]))) return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
            for (size_t i = 0; i < CHUNK; i++) p->apChunk[c][i].type = MEMO_EMPTY;
        }
        m = &p->apChunk[c][slot % CHUNK];
    } else {
        if (idx == p->nMemo) {
            if (p->nMemo == p->nMemoAlloc) {
                size_t n = p->nMemoAlloc ? p->nMemoAlloc * 2 : 1024;
                struct vt_pkval *a = realloc(p->aMemo, n * sizeof *a);
                if (!a) return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
                p->aMemo = a;
                p->nMemoAlloc = n;
            }
            p->aMemo[p->nMemo++].type = MEMO_EMPTY;
        }
        m = &p->aMemo[idx];
    }
    v = &p->aStack[p->nStack - 1];
    if ((rc = val_ref(p, v)) != 0) return rc;
    if (m->type != MEMO_EMPTY && m->type != MEMO_DROPPED) val_unref(p, m);
    *m = *v;
    if (v->type >= VT_PK_STR && v->type <= VT_PK_DICT) v->u.p->iMemo = (int64_t)idx;
    return 0;
}

/* memo_get's slow path: every check, and the error for an entry never stored or already claimed. */
static int memo_get_slow(struct vt_pk *p, uint64_t idx)
{
    struct vt_pkval v, *m = NULL;
    int64_t slot = idx < p->nMemo ? memo_slot(p, idx) : -1;
    int rc;
    if (slot >= 0) m = memo_at(p, slot);
    if (!m || m->type == MEMO_EMPTY)
        return vt__pk_fail(p, VT_PK_ECORRUPT, "memo index %llu was never stored", (unsigned long long)idx);
    if (m->type == MEMO_DROPPED)
        return vt__pk_fail(p, VT_PK_EUNSUPPORTED,
                    "memo entry %llu refers to an object already consumed while streaming (an event shared "
                    "by two places): not a layout this reader streams",
                    (unsigned long long)idx);
    v = *m;
    if ((rc = val_ref(p, &v)) != 0) return rc;
    /* with an index, the entry's last fetch releases the memo's reference: the object lives on only
     * where it was put */
    if (p->bIndexed && p->aLeft[slot] != 255 && --p->aLeft[slot] == 0) {
        hot_forget(p, idx);
        if (v.type >= VT_PK_STR && v.type <= VT_PK_DICT) v.u.p->iMemo = -1;
        val_unref(p, m);
        m->type = MEMO_EMPTY;
        chunk_done(p, slot);
    }
    return push(p, v);
}

/* Push a new reference to memo entry idx: an error for an entry never stored or already claimed. The
 * common case (an object kept to the end, room on the stack) inline; everything else in memo_get_slow. */
static inline __attribute__((always_inline)) int memo_get(struct vt_pk *p, uint64_t idx)
{
    const struct vt_pkval *m;
    const struct pkhot *h;
    int64_t slot;
    uint32_t n;
    if (p->nStack < p->nStackAlloc && (h = vt__pk_hot(p->aHot, idx)) != NULL) {
        p->aStack[p->nStack++] = h->v;
        return 0;
    }
    if (idx < p->nMemo && p->nStack < p->nStackAlloc && (slot = memo_slot(p, idx)) >= 0 &&
        (!p->bIndexed || p->aLeft[slot] == 255) && (m = memo_at(p, slot)) != NULL && m->type >= VT_PK_STR &&
        m->type <= VT_PK_DICT && ((n = m->u.p->nRef) < IMMORTAL - 1 || n == IMMORTAL)) {
        if (n != IMMORTAL) m->u.p->nRef = n + 1;
        else hot_put(p->aHot, idx, m->u.p);
        p->aStack[p->nStack++] = *m;
        return 0;
    }
    return memo_get_slow(p, idx);
}

/*
 * After a BINGET or LONG_BINGET: the fetches that follow it (a traceback's frames, one after another
 * between MARK and APPENDS), as long as each is memo_get's common case and whole in the buffer, without
 * going round the opcode loop. Stops at the first other opcode, left for the loop.
 */
static inline __attribute__((always_inline)) void memo_get_run(struct vt_pk *p)
{
    if (!p->bIndexed || p->nBuf - p->iPos < 5 || (p->aBuf[p->iPos] != 'j' && p->aBuf[p->iPos] != 'h')) return;
    /* the reader's state in locals: the stores below (a count, a stack slot) could alias its fields */
    const uint8_t *b = p->aBuf;
    const uint64_t *aUsed = p->aUsed;
    const uint32_t *aRank = p->aRank;
    const uint8_t *aLeft = p->aLeft;
    struct vt_pkval *const *apChunk = p->apChunk;
    struct vt_pkval *aStack = p->aStack;
    struct pkhot *aHot = p->aHot;
    size_t i = p->iPos, lim = p->nBuf - 5, nStack = p->nStack, nRoom = p->nStackAlloc; /* nBuf - iPos >= 5 here */
    uint64_t nEntry = p->nMemo < p->nIndexed ? p->nMemo : p->nIndexed;
    if (nStack >= nRoom) return;
    /* one bound for both: each fetch takes at least 2 bytes and pushes one value, so while i stays within
     * 2 * (nRoom - nStack - 1) bytes of where it began the stack has room for the next */
    if ((nRoom - nStack - 1) < (lim - i) / 2) lim = i + 2 * (nRoom - nStack - 1);
    while (i <= lim) { /* a whole opcode in the buffer, room on the stack */
        const struct vt_pkval *m;
        const struct pkhot *h;
        uint64_t idx;
        int64_t slot;
        uint32_t n;
        size_t w;
        if (b[i] == 'h') { /* a frame, a key in the hot table: no lookup, no count (BINGET: its index is its slot) */
            idx = b[i + 1];
            w = 2;
            if ((h = &aHot[idx])->idx == idx) {
                aStack[nStack++] = h->v;
                i += 2;
                continue;
            }
        } else if (b[i] == 'j') {
            idx = vt__pk_le4(b + i + 1);
            w = 5;
            if ((h = vt__pk_hot(aHot, idx)) != NULL) {
                aStack[nStack++] = h->v;
                i += 5;
                continue;
            }
        } else {
            break;
        }
        if (idx >= nEntry || (slot = vt__pk_rank(aUsed, aRank, idx)) < 0 || aLeft[slot] != 255 || !apChunk[slot / CHUNK])
            break;
        m = &apChunk[slot / CHUNK][slot % CHUNK];
        if (m->type < VT_PK_STR || m->type > VT_PK_DICT) break;
        if ((n = m->u.p->nRef) != IMMORTAL) {
            if (n >= IMMORTAL - 1) break;
            m->u.p->nRef = n + 1;
        } else {
            hot_put(aHot, idx, m->u.p);
        }
        aStack[nStack++] = *m;
        i += w;
    }
    p->iPos = i;
    p->nStack = nStack;
}

/* A claimed child leaves the memo (a later reference to it is an error, not a use after free). */
static void memo_drop(struct vt_pk *p, struct vt_pkval *v)
{
    struct vt_pkobj *o;
    if (v->type < VT_PK_STR || v->type > VT_PK_DICT) return;
    o = v->u.p;
    if (o->iMemo >= 0 && (size_t)o->iMemo < p->nMemo) {
        int64_t slot = memo_slot(p, (uint64_t)o->iMemo);
        struct vt_pkval *m = slot >= 0 ? memo_at(p, slot) : NULL;
        if (m && m->type == v->type && m->u.p == o) {
            hot_forget(p, (uint64_t)o->iMemo);
            if (o->nRef == IMMORTAL) p->epoch++; /* runs remembered name only entries of immortal objects */
            val_unref(p, m);
            m->type = MEMO_DROPPED;
            o->iMemo = -1;
        }
    }
}

/* ---- building ---- */

/* Read a string or bytes object of n bytes from the input and push it. */
static int push_blob(struct vt_pk *p, int t, uint64_t n)
{
    struct vt_pkobj *o;
    size_t have = 0;
    int rc;
    if (n > VT_PK_STR_MAX) return vt__pk_fail(p, VT_PK_EUNSUPPORTED, "a string of %llu bytes is longer than read", (unsigned long long)n);
    o = obj_new(p, t);
    if (!o) return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
    /* grow with the data actually read: a hostile length in a short input costs nothing */
    while (1) {
        size_t chunk = (size_t)n - have, want;
        if (chunk > BUF_SIZE) chunk = BUF_SIZE;
        want = have + chunk + 1;
        if (want > o->nAlloc) {
            char *z = realloc(o->u.z, want);
            if (!z) {
                struct vt_pkval v = {t, {.p = o}};
                val_unref(p, &v);
                return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
            }
            o->u.z = z;
            o->nAlloc = want;
        }
        if ((rc = vt__pk_take(p, o->u.z + have, chunk)) != 0) {
            struct vt_pkval v = {t, {.p = o}};
            val_unref(p, &v);
            return rc;
        }
        have += chunk;
        if (have == n) break;
    }
    o->u.z[n] = 0;
    o->n = (size_t)n;
    return push_obj(p, t, o);
}

/* Push the integer held in n little-endian two's-complement bytes (LONG1, LONG4). */
static int push_long(struct vt_pk *p, uint64_t n)
{
    struct vt_pkval v = {VT_PK_INT, {.i = 0}};
    uint8_t b[8];
    int rc;
    if (n <= 8) {
        const uint8_t *q = p->aBuf + p->iPos; /* in the buffer, else copied out (LONG1's common case: run()) */
        uint64_t u;
        if (p->nBuf - p->iPos >= n) p->iPos += n;
        else if ((rc = vt__pk_take(p, (char *)b, (size_t)n)) != 0) return rc;
        else q = b;
        if (n > 0) {
            u = vt__pk_le(q, (int)n);
            if (n < 8 && (q[n - 1] & 0x80)) u |= ~(uint64_t)0 << (8 * n); /* sign-extend */
            v.u.i = (int64_t)u;
        }
        return push(p, v);
    }
    /* longer: an int64 when every byte above the eighth extends the sign of the eighth; an unsigned 64-bit
     * value (the eighth's top bit set, every byte above it 0: [2^63, 2^64)) kept as its pattern */
    {
        uint8_t lo[8], c, ext;
        int bFits = 1, bU64;
        if ((rc = vt__pk_take(p, (char *)lo, 8)) != 0) return rc;
        ext = (lo[7] & 0x80) ? 0xff : 0x00;
        bU64 = ext == 0xff;
        for (uint64_t i = 8; i < n; i++) {
            if ((rc = vt__pk_take(p, (char *)&c, 1)) != 0) return rc;
            if (c != ext) bFits = 0;
            if (c != 0x00) bU64 = 0;
        }
        v.u.i = (int64_t)vt__pk_le8(lo);
        if (!bFits) v.type = bU64 ? VT_PK_U64 : VT_PK_BIGINT;
        return push(p, v);
    }
}

/* Move the values aStack[base..nStack) into a new tuple (or list) and push it in their place. */
static int build_seq(struct vt_pk *p, int t, size_t base)
{
    size_t n = p->nStack - base;
    struct vt_pkobj *o = obj_new(p, t);
    if (!o) return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
    if (n) {
        if (obj_reserve(p, o, n)) {
            struct vt_pkval v = {t, {.p = o}};
            val_unref(p, &v);
            return VT_PK_ENOMEM;
        }
        memcpy(o->u.a, p->aStack + base, n * sizeof *o->u.a);
        o->n = n;
    }
    p->nStack = base;
    return push_obj(p, t, o);
}

/* Offer one child to the callback, then add it to o (or drop it when claimed). pKey: a dict's key, consumed.
 * The caller has made room in o for the child (obj_reserve). */
static int add_child(struct vt_pk *p, struct vt_pkobj *o, struct vt_pkval *pKey, struct vt_pkval *pVal)
{
    int r = VT_PK_KEEP;
    if (p->xChild) r = p->xChild(p->pArg, o, pKey, pVal);
    if (r < 0) {
        val_unref(p, pVal);
        if (pKey) val_unref(p, pKey);
        return vt__pk_fail(p, VT_PK_ECALLBACK, "stopped by the importer");
    }
    if (r == VT_PK_CLAIM) {
        memo_drop(p, pVal);
        val_unref(p, pVal);
        if (pKey) val_unref(p, pKey);
        return 0;
    }
    if (r == VT_PK_KEEP_REST) ((struct pkobj *)o)->bNoOffer = 1;
    if (pKey) {
        o->u.a[2 * o->n] = *pKey;
        o->u.a[2 * o->n + 1] = *pVal;
    } else {
        o->u.a[o->n] = *pVal;
    }
    o->n++;
    return 0;
}

/* APPENDS / SETITEMS / ADDITEMS: add aStack[base..nStack) to the container at aStack[base-1]. */
static int add_items(struct vt_pk *p, size_t base, int bPairs, const char *zOp)
{
    struct vt_pkval *c;
    size_t i, n = p->nStack - base;
    int rc = 0;
    if (base == 0) return vt__pk_fail(p, VT_PK_ECORRUPT, "%s without a container", zOp);
    c = &p->aStack[base - 1];
    if (bPairs ? c->type != VT_PK_DICT : c->type != VT_PK_LIST)
        return vt__pk_fail(p, VT_PK_ECORRUPT, "%s on a value that is not a %s", zOp, bPairs ? "dict" : "list or set");
    c->u.p->run = 0; /* items added: no longer a run's alone */
    if (bPairs && n % 2) return vt__pk_fail(p, VT_PK_ECORRUPT, "%s with an odd number of values", zOp);
    if ((rc = obj_reserve(p, c->u.p, bPairs ? n / 2 : n)) != 0) return rc;
    for (i = 0; i < n; i += bPairs ? 2 : 1) {
        struct vt_pkval *pv = &p->aStack[base + i];
        if (!p->xChild || (bPairs && p->bListsOnly) || ((struct pkobj *)c->u.p)->bNoOffer) { /* the rest added as they are */
            struct vt_pkobj *o = c->u.p;
            memcpy(o->u.a + (bPairs ? 2 : 1) * o->n, pv, (n - i) * sizeof *pv);
            o->n += bPairs ? (n - i) / 2 : n - i;
            i = n;
            break;
        }
        rc = bPairs ? add_child(p, c->u.p, pv, pv + 1) : add_child(p, c->u.p, NULL, pv);
        pv->type = VT_PK_NONE;
        if (bPairs) pv[1].type = VT_PK_NONE;
        if (rc) break;
    }
    for (; i < n; i++) val_unref(p, &p->aStack[base + i]); /* after a failure */
    p->nStack = base;
    return rc;
}

/* ---- the opcode loop ---- */

static int hostile(struct vt_pk *p, uint8_t op, const char *zName)
{
    return vt__pk_fail(p, VT_PK_EHOSTILE,
                "refused: opcode %s (0x%02x) names or calls a Python object; a memory snapshot holds plain "
                "data only, so this pickle is not one and nothing in it is run",
                zName, op);
}

/* Run opcodes until STOP. */
PK_CLONES static int run(struct vt_pk *p)
{
    int rc;
    for (;;) {
        uint8_t op;
        size_t base = 0;
        struct vt_pkval v;
        if ((rc = vt__pk_need(p, 1)) != 0) return rc;
        p->iOp = p->nBase + (int64_t)p->iPos;
        op = p->aBuf[p->iPos++];
        switch (op) {
        case 0x80: /* PROTO */
            if ((rc = vt__pk_need(p, 1)) != 0) return rc;
            p->proto = p->aBuf[p->iPos++];
            if (p->proto > 5)
                return vt__pk_fail(p, VT_PK_ENEWER, "pickle protocol %d is newer than this reader knows (5)", p->proto);
            break;
        case 0x95: /* FRAME: an 8-byte length; framing only groups opcodes */
            if ((rc = vt__pk_need(p, 8)) != 0) return rc;
            p->iPos += 8;
            break;
        case '.': /* STOP */
            if (p->nStack != 1 || p->nMark) return vt__pk_fail(p, VT_PK_ECORRUPT, "STOP with %zu values and %zu marks left",
                                                        p->nStack, p->nMark);
            return 0;
        case '(': /* MARK */
            if (p->nMark == p->nMarkAlloc) {
                size_t n = p->nMarkAlloc ? p->nMarkAlloc * 2 : 64;
                size_t *a = realloc(p->aMark, n * sizeof *a);
                if (!a) return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
                p->aMark = a;
                p->nMarkAlloc = n;
            }
            p->aMark[p->nMark++] = p->nStack;
            if (p->bIndexed && p->iPos < p->nBuf && (p->aBuf[p->iPos] == 'h' || p->aBuf[p->iPos] == 'j')) vt__pk_run_cached(p);
            break;
        case '0': /* POP */
            if (p->nMark && p->aMark[p->nMark - 1] == p->nStack) p->nMark--; /* pops a mark, as CPython does */
            else if (p->nStack) val_unref(p, &p->aStack[--p->nStack]);
            else return vt__pk_fail(p, VT_PK_ECORRUPT, "POP from an empty stack");
            break;
        case '1': /* POP_MARK */
            if ((rc = mark_base(p, &base, "POP_MARK")) != 0) return rc;
            pop_mark(p, base);
            break;
        case '2': /* DUP */
            if (!p->nStack) return vt__pk_fail(p, VT_PK_ECORRUPT, "DUP on an empty stack");
            v = p->aStack[p->nStack - 1];
            if ((rc = val_ref(p, &v)) != 0 || (rc = push(p, v)) != 0) return rc;
            break;
        case 'N': v.type = VT_PK_NONE; v.u.i = 0; if ((rc = push(p, v))) return rc; break;
        case 0x88: /* NEWTRUE */
        case 0x89: /* NEWFALSE */
            v.type = VT_PK_BOOL;
            v.u.i = op == 0x88;
            if ((rc = push(p, v)) != 0) return rc;
            break;
        case 'J': /* BININT */
            if ((rc = vt__pk_need(p, 4)) != 0) return rc;
            v.type = VT_PK_INT;
            v.u.i = (int32_t)(uint32_t)vt__pk_le4(p->aBuf + p->iPos);
            p->iPos += 4;
            if ((rc = push(p, v)) != 0) return rc;
            break;
        case 'K': /* BININT1 */
            if ((rc = vt__pk_need(p, 1)) != 0) return rc;
            v.type = VT_PK_INT;
            v.u.i = p->aBuf[p->iPos++];
            if ((rc = push(p, v)) != 0) return rc;
            break;
        case 'M': /* BININT2 */
            if ((rc = vt__pk_need(p, 2)) != 0) return rc;
            v.type = VT_PK_INT;
            v.u.i = (int64_t)vt__pk_le(p->aBuf + p->iPos, 2);
            p->iPos += 2;
            if ((rc = push(p, v)) != 0) return rc;
            break;
        case 0x8a: { /* LONG1; its common case here (an address, a time: 1 to 8 bytes in the buffer, room on the stack) */
            uint64_t n;
            if ((rc = vt__pk_need(p, 1)) != 0) return rc;
            n = p->aBuf[p->iPos++];
            if (n - 1 < 8 && p->nBuf - p->iPos >= 8 && p->nStack < p->nStackAlloc) {
                p->aStack[p->nStack++] = (struct vt_pkval){VT_PK_INT, {.i = vt__pk_long_le8(p->aBuf + p->iPos, n)}};
                p->iPos += n;
            } else if ((rc = push_long(p, n)) != 0) {
                return rc;
            }
            break;
        }
        case 0x8b: { /* LONG4 */
            int32_t n;
            if ((rc = vt__pk_need(p, 4)) != 0) return rc;
            n = (int32_t)(uint32_t)vt__pk_le4(p->aBuf + p->iPos);
            p->iPos += 4;
            if (n < 0) return vt__pk_fail(p, VT_PK_ECORRUPT, "LONG4 with a negative length");
            if ((rc = push_long(p, (uint64_t)n)) != 0) return rc;
            break;
        }
        case 'G': { /* BINFLOAT: big-endian IEEE double */
            uint64_t u = 0;
            if ((rc = vt__pk_need(p, 8)) != 0) return rc;
            for (int i = 0; i < 8; i++) u = u << 8 | p->aBuf[p->iPos + i];
            p->iPos += 8;
            v.type = VT_PK_FLOAT;
            memcpy(&v.u.f, &u, sizeof v.u.f);
            if ((rc = push(p, v)) != 0) return rc;
            break;
        }
        case 0x8c: /* SHORT_BINUNICODE */
        case 'U':  /* SHORT_BINSTRING (read as text, as Python 3 does) */
        case 'C':  /* SHORT_BINBYTES */
            if ((rc = vt__pk_need(p, 1)) != 0) return rc;
            if ((rc = push_blob(p, op == 'C' ? VT_PK_BYTES : VT_PK_STR, p->aBuf[p->iPos++])) != 0) return rc;
            break;
        case 'X': /* BINUNICODE */
        case 'T': /* BINSTRING */
        case 'B': { /* BINBYTES */
            uint64_t n;
            if ((rc = vt__pk_need(p, 4)) != 0) return rc;
            n = vt__pk_le4(p->aBuf + p->iPos);
            p->iPos += 4;
            if (op == 'T' && n > 0x7fffffff) return vt__pk_fail(p, VT_PK_ECORRUPT, "BINSTRING with a negative length");
            if ((rc = push_blob(p, op == 'B' ? VT_PK_BYTES : VT_PK_STR, n)) != 0) return rc;
            break;
        }
        case 0x8d: /* BINUNICODE8 */
        case 0x8e: /* BINBYTES8 */
        case 0x96: { /* BYTEARRAY8 */
            uint64_t n;
            if ((rc = vt__pk_need(p, 8)) != 0) return rc;
            n = vt__pk_le8(p->aBuf + p->iPos);
            p->iPos += 8;
            if ((rc = push_blob(p, op == 0x8d ? VT_PK_STR : VT_PK_BYTES, n)) != 0) return rc;
            break;
        }
        case 0x98: /* READONLY_BUFFER: a no-op on bytes */
            if (!p->nStack || p->aStack[p->nStack - 1].type != VT_PK_BYTES)
                return vt__pk_fail(p, VT_PK_ECORRUPT, "READONLY_BUFFER on a value that is not a buffer");
            break;
        case ']': /* EMPTY_LIST */
        case 0x8f: /* EMPTY_SET: read as a list */
            if ((rc = push_obj(p, VT_PK_LIST, obj_new(p, VT_PK_LIST))) != 0) return rc;
            break;
        case '}': /* EMPTY_DICT */
            if ((rc = push_obj(p, VT_PK_DICT, obj_new(p, VT_PK_DICT))) != 0) return rc;
            break;
        case ')': /* EMPTY_TUPLE */
            if ((rc = build_seq(p, VT_PK_TUPLE, p->nStack)) != 0) return rc;
            break;
        case 0x85: /* TUPLE1 */
        case 0x86: /* TUPLE2 */
        case 0x87: { /* TUPLE3 */
            size_t n = (size_t)(op - 0x84);
            if (p->nStack < n || (p->nMark && p->aMark[p->nMark - 1] > p->nStack - n))
                return vt__pk_fail(p, VT_PK_ECORRUPT, "TUPLE%zu with too few values", n);
            if ((rc = build_seq(p, VT_PK_TUPLE, p->nStack - n)) != 0) return rc;
            break;
        }
        case 't': /* TUPLE */
        case 'l': /* LIST */
        case 0x91: /* FROZENSET: read as a list */
            if ((rc = mark_base(p, &base, op == 't' ? "TUPLE" : op == 'l' ? "LIST" : "FROZENSET")) != 0) return rc;
            p->nMark--;
            if ((rc = build_seq(p, op == 't' ? VT_PK_TUPLE : VT_PK_LIST, base)) != 0) return rc;
            break;
        case 'd': { /* DICT: MARK k v k v ... DICT */
            struct vt_pkobj *o;
            if ((rc = mark_base(p, &base, "DICT")) != 0) return rc;
            if ((p->nStack - base) % 2) return vt__pk_fail(p, VT_PK_ECORRUPT, "DICT with an odd number of values");
            o = obj_new(p, VT_PK_DICT);
            if (!o) return vt__pk_fail(p, VT_PK_ENOMEM, "out of memory");
            /* the dict goes below the mark's values so add_items treats it as their container */
            if ((rc = push_obj(p, VT_PK_DICT, o)) != 0) return rc;
            v = p->aStack[p->nStack - 1];
            memmove(p->aStack + base + 1, p->aStack + base, (p->nStack - 1 - base) * sizeof v);
            p->aStack[base] = v;
            p->nMark--;
            if ((rc = add_items(p, base + 1, 1, "DICT")) != 0) return rc;
            break;
        }
        case 'a': /* APPEND */
        case 's': /* SETITEM */
            if (p->nStack < (op == 'a' ? 2u : 3u))
                return vt__pk_fail(p, VT_PK_ECORRUPT, "%s with too few values", op == 'a' ? "APPEND" : "SETITEM");
            base = p->nStack - (op == 'a' ? 1 : 2);
            if (p->nMark && p->aMark[p->nMark - 1] > base - 1)
                return vt__pk_fail(p, VT_PK_ECORRUPT, "%s with too few values", op == 'a' ? "APPEND" : "SETITEM");
            if ((rc = add_items(p, base, op == 's', op == 'a' ? "APPEND" : "SETITEM")) != 0) return rc;
            break;
        case 'e': /* APPENDS */
        case 'u': /* SETITEMS */
        case 0x90: { /* ADDITEMS */
            const char *zOp = op == 'e' ? "APPENDS" : op == 'u' ? "SETITEMS" : "ADDITEMS";
            size_t n = p->nStack;
            struct vt_pkobj *o;
            if ((rc = mark_base(p, &base, zOp)) != 0) return rc;
            p->nMark--;
            n = p->runOff == p->iOp && base == p->runBase && base && p->aStack[base - 1].type == VT_PK_LIST &&
                        p->aStack[base - 1].u.p->n == 0 ? n - base : 0;
            o = n ? p->aStack[base - 1].u.p : NULL;
            if ((rc = add_items(p, base, op == 'u', zOp)) != 0) return rc;
            if (n && o->n == n) { /* the items of a run just pushed from memory: a list like the others of that run */
                o->run = p->runId;
                ((struct pkobj *)o)->nImmortal = n;
            }
            break;
        }
        case 'h': /* BINGET */
            if ((rc = vt__pk_need(p, 1)) != 0) return rc;
            if ((rc = memo_get(p, p->aBuf[p->iPos++])) != 0) return rc;
            memo_get_run(p);
            break;
        case 'j': /* LONG_BINGET */
            if ((rc = vt__pk_need(p, 4)) != 0) return rc;
            p->iPos += 4;
            if ((rc = memo_get(p, vt__pk_le4(p->aBuf + p->iPos - 4))) != 0) return rc;
            memo_get_run(p);
            break;
        case 'q': /* BINPUT */
            if ((rc = vt__pk_need(p, 1)) != 0) return rc;
            if ((rc = memo_put(p, p->aBuf[p->iPos++])) != 0) return rc;
            break;
        case 'r': /* LONG_BINPUT */
            if ((rc = vt__pk_need(p, 4)) != 0) return rc;
            p->iPos += 4;
            if ((rc = memo_put(p, vt__pk_le4(p->aBuf + p->iPos - 4))) != 0) return rc;
            break;
        case 0x94: /* MEMOIZE */
            if ((rc = memo_put(p, p->nMemo)) != 0) return rc;
            break;
        case 'c': return hostile(p, op, "GLOBAL");
        case 0x93: return hostile(p, op, "STACK_GLOBAL");
        case 'R': return hostile(p, op, "REDUCE");
        case 'b': return hostile(p, op, "BUILD");
        case 'i': return hostile(p, op, "INST");
        case 'o': return hostile(p, op, "OBJ");
        case 0x81: return hostile(p, op, "NEWOBJ");
        case 0x92: return hostile(p, op, "NEWOBJ_EX");
        case 'P': return hostile(p, op, "PERSID");
        case 'Q': return hostile(p, op, "BINPERSID");
        case 0x82: return hostile(p, op, "EXT1");
        case 0x83: return hostile(p, op, "EXT2");
        case 0x84: return hostile(p, op, "EXT4");
        case 0x97:
            return vt__pk_fail(p, VT_PK_EUNSUPPORTED, "NEXT_BUFFER: out-of-band buffers are not read");
        case 'I': case 'L': case 'S': case 'V': case 'F': case 'g': case 'p':
            return vt__pk_fail(p, VT_PK_EUNSUPPORTED, "text opcode '%c' of pickle protocol 0/1 is not read", op);
        default:
            return vt__pk_fail(p, VT_PK_ECORRUPT, "invalid opcode 0x%02x", op);
        }
    }
}

/* ---- public face ---- */

struct vt_pk *vt__pk_new(struct vt__src *in, vt_pk_child_fn xChild, void *pArg)
{
    struct vt_pk *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->aBuf = malloc(BUF_SIZE);
    p->aHot = malloc(HOT * sizeof *p->aHot);
    if (!p->aBuf || !p->aHot) {
        free(p->aBuf);
        free(p->aHot);
        free(p);
        return NULL;
    }
    for (size_t i = 0; i < HOT; i++) p->aHot[i].idx = UINT64_MAX;
    p->runOff = -1;
    p->in = in;
    p->xChild = xChild;
    p->pArg = pArg;
    return p;
}

int vt__pk_run(struct vt_pk *p, struct vt_pkval *pRoot)
{
    int rc;
    pRoot->type = VT_PK_NONE;
    p->zErr[0] = 0;
    rc = run(p);
    if (rc == VT_PK_ETRUNC && p->nBase + (int64_t)p->nBuf == 0)
        snprintf(p->zErr, sizeof p->zErr, "empty input");
    if (rc == 0) {
        *pRoot = p->aStack[0];
        p->nStack = 0; /* the caller's reference now */
    }
    return rc;
}

int vt__pk_keep(struct vt_pk *p, struct vt_pkobj *o)
{
    int64_t slot;
    if (o->nRef == IMMORTAL) return 1;
    if (o->iMemo < 0 || (size_t)o->iMemo >= p->nMemo) return 0;
    if (p->bIndexed && ((slot = memo_slot(p, (uint64_t)o->iMemo)) < 0 || p->aLeft[slot] != 255)) return 0;
    o->nRef = IMMORTAL;
    return 1;
}

void vt__pk_keep_items(struct vt_pkobj *o, size_t n)
{
    if (o->type == VT_PK_LIST && n <= o->n) ((struct pkobj *)o)->nImmortal = n;
}

void vt__pk_free(struct vt_pk *p)
{
    if (!p) return;
    /* everything the reader built goes, cycles included: no reference counting needed here */
    while (p->pLive) obj_destroy(p, p->pLive);
    for (size_t c = 0; c < sizeof p->apSpare / sizeof p->apSpare[0]; c++) {
        while (p->apSpare[c]) {
            struct pkobj *x = p->apSpare[c];
            p->apSpare[c] = x->pNext;
            free(x->o.u.a);
            free(x);
        }
    }
    free(p->aStack);
    free(p->aMark);
    free(p->aMemo);
    free(p->aUsed);
    free(p->aRank);
    free(p->aLeft);
    for (size_t c = 0; c < p->nChunk; c++) free(p->apChunk[c]);
    free(p->apChunk);
    free(p->anOpen);
    free(p->aBuf);
    free(p->aHot);
    vt__pk_runs_free(p->pRuns);
    free(p);
}
