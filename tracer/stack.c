/* Call-site capture: raw return addresses + Python frames, hashed into deduplicated stack ids. */
#include "stack.h"

#include <errno.h>
#include <execinfo.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pyframes.h"
#include "pyframes_raw.h"
#include "unwind.h"
#include "vramtrace/schema.h"

#define OWN_FRAMES 2      /* capture_native + vt__site_capture: dropped from every site */
#define OWN_SLACK 4       /* frames an interposed backtrace() may add in front */
#define MAX_SKIP_RANGES 64
#define MAX_SKIPPED 64    /* extra frames unwound to make up for skipped ones */
#define MAX_KEY (1 + 2 * VT_SITE_MAX_PYDEPTH + VT_SITE_MAX_DEPTH)

/*
 * An insert-only open-addressing hash table of entry pointers. Readers probe
 * without a lock (slots are published with release stores and never change
 * once set); inserts take the table's mutex. Load factor stays <= 3/4.
 * Every entry starts with its 64-bit hash.
 */
struct table {
    _Atomic(void *) *aSlot;
    size_t mask;
    int nMax;    /* entries allowed */
    _Atomic int n;
    pthread_mutex_t lock;
};

typedef int (*entry_eq)(const void *pEntry, const void *pKey);

/* One distinct stack. */
struct sentry {
    uint64_t hash;
    int64_t id;
    _Atomic int bLost; /* its record never reached the trace: emit again */
    int nKey;
    uint64_t aKey[]; /* [nPy, (code, fp << 32 | line) x nPy, pc x nNative] */
};

#define CODE_LINES 32 /* (instruction offset, line) pairs cached per code object */

/*
 * One Python code object. Cached with the GIL held, it is kept alive by a
 * strong reference (bRef); cached without the GIL (read raw), it cannot be,
 * so its identity fingerprint fp (pyframes_raw.h) is part of the key: a new
 * code object at a freed one's address gets an entry of its own.
 */
struct codeentry {
    uint64_t hash;
    const void *pCode;
    uint32_t fp; /* vt__pyraw_code_fp(pCode), 0 when the raw reader is off */
    int bRef;    /* holds a strong reference */
    char *zFile;
    char *zFunction;
    /* (lasti + 1) << 32 | line, 0 = empty; filled lock-free, never changed once set */
    _Atomic uint64_t aLine[CODE_LINES];
};

struct range {
    uintptr_t lo, hi;
};

struct vt__sites {
    struct vt_sites_config cfg;
    struct table stacks, codes;
    struct range aSkip[MAX_SKIP_RANGES];
    int nSkip;
    int nOwn; /* frames of this module at the top of backtrace()'s answer */
    _Atomic int nSkipSeen; /* most leading frames skipped by one capture so far */
    char zExe[PATH_MAX]; /* the main program's path ("" if unknown) */
    _Atomic int64_t nextId;
    _Atomic uint64_t nCapture, nEmitted, nUndeduped, nPython;
};

struct stackkey {
    const uint64_t *aKey;
    int nKey;
};

struct codekey {
    const void *pCode;
    uint32_t fp;
};

/* Final mix of a 64-bit value (murmur3 fmix64). */
static uint64_t fmix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

/* Hash an array of 64-bit words (a multiply-xorshift per word, then fmix64). */
static uint64_t hash_words(const uint64_t *a, int n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
    int i;
    for (i = 0; i < n; i++) {
        h = (h ^ a[i]) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    return fmix64(h);
}

/* Set up a table for nMax entries. Returns 0 or -ENOMEM. */
static int table_init(struct table *t, int nMax)
{
    size_t cap = 16;
    while (cap < (size_t)nMax + (size_t)nMax / 3 + 1) cap <<= 1;
    t->aSlot = calloc(cap, sizeof(t->aSlot[0]));
    if (!t->aSlot) return -ENOMEM;
    t->mask = cap - 1;
    t->nMax = nMax;
    atomic_init(&t->n, 0);
    pthread_mutex_init(&t->lock, NULL);
    return 0;
}

/* Find the entry equal to pKey with hash h, lock-free. Returns it or NULL. */
static void *table_find(struct table *t, uint64_t h, entry_eq xEq, const void *pKey)
{
    size_t i = (size_t)h & t->mask;
    for (;;) {
        void *p = atomic_load_explicit(&t->aSlot[i], memory_order_acquire);
        if (!p) return NULL;
        if (*(const uint64_t *)p == h && xEq(p, pKey)) return p;
        i = (i + 1) & t->mask;
    }
}

/*
 * Insert pEntry (hash h, equal to pKey) unless an equal entry exists. Returns
 * the entry now in the table (pEntry, or the existing one: the caller then
 * frees pEntry), or NULL when the table is full (pEntry not inserted).
 */
static void *table_insert(struct table *t, uint64_t h, void *pEntry, entry_eq xEq, const void *pKey)
{
    void *pOut = NULL;
    size_t i = (size_t)h & t->mask;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        void *p = atomic_load_explicit(&t->aSlot[i], memory_order_acquire);
        if (!p) break;
        if (*(const uint64_t *)p == h && xEq(p, pKey)) {
            pOut = p;
            goto done;
        }
        i = (i + 1) & t->mask;
    }
    if (atomic_load_explicit(&t->n, memory_order_relaxed) < t->nMax) {
        atomic_store_explicit(&t->aSlot[i], pEntry, memory_order_release);
        atomic_fetch_add_explicit(&t->n, 1, memory_order_relaxed);
        pOut = pEntry;
    }
done:
    pthread_mutex_unlock(&t->lock);
    return pOut;
}

/* Free every entry of a table with xFree, then the table. */
static void table_free(struct table *t, void (*xFree)(void *, void *), void *pArg)
{
    size_t i;
    if (!t->aSlot) return;
    for (i = 0; i <= t->mask; i++) {
        void *p = atomic_load_explicit(&t->aSlot[i], memory_order_relaxed);
        if (p) xFree(p, pArg);
    }
    free(t->aSlot);
    pthread_mutex_destroy(&t->lock);
}

static int stack_eq(const void *pEntry, const void *pKey)
{
    const struct sentry *e = pEntry;
    const struct stackkey *k = pKey;
    return e->nKey == k->nKey && memcmp(e->aKey, k->aKey, (size_t)k->nKey * sizeof(k->aKey[0])) == 0;
}


static int code_eq(const void *pEntry, const void *pKey)
{
    const struct codeentry *e = pEntry;
    const struct codekey *k = pKey;
    return e->pCode == k->pCode && e->fp == k->fp;
}

static void stack_free(void *p, void *pArg)
{
    (void)pArg;
    free(p);
}

static void code_free(void *p, void *pArg)
{
    struct codeentry *e = p;
    if (*(int *)pArg && e->bRef) vt__py_code_ref(e->pCode, -1);
    free(e->zFile);
    free(e->zFunction);
    free(e);
}

void vt__sites_config_default(struct vt_sites_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->cbSize = sizeof(*cfg);
    cfg->max_stacks = 65536;
    cfg->max_codes = 16384;
    cfg->py_depth = 32;
    cfg->azSkipModule = NULL;
    cfg->fast_unwind = 1;
}

static void calibrate(struct vt__sites *s);

/* dl_iterate_phdr callback: record the executable segments of modules matching a skip pattern. */
static int skip_module_cb(struct dl_phdr_info *pInfo, size_t nInfo, void *pArg)
{
    struct vt__sites *s = pArg;
    const char *zName = pInfo->dlpi_name && pInfo->dlpi_name[0] ? pInfo->dlpi_name : s->zExe;
    const char *const *az;
    int bMatch = 0, i;
    (void)nInfo;
    for (az = s->cfg.azSkipModule; *az && !bMatch; az++) bMatch = (*az)[0] && strstr(zName, *az);
    if (!bMatch) return 0;
    for (i = 0; i < pInfo->dlpi_phnum && s->nSkip < MAX_SKIP_RANGES; i++) {
        const ElfW(Phdr) *ph = &pInfo->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        s->aSkip[s->nSkip].lo = (uintptr_t)(pInfo->dlpi_addr + ph->p_vaddr);
        s->aSkip[s->nSkip].hi = (uintptr_t)(pInfo->dlpi_addr + ph->p_vaddr + ph->p_memsz);
        s->nSkip++;
    }
    return 0;
}

struct vt__sites *vt__sites_open(const struct vt_sites_config *cfg)
{
    struct vt__sites *s;
    void *aWarm[4];
    ssize_t n;
    struct vt_sites_config def;
    if (!cfg) {
        vt__sites_config_default(&def);
        cfg = &def;
    }
    if (cfg->cbSize < sizeof(*cfg) || cfg->max_stacks < 1 ||
        cfg->max_codes < 0 || cfg->py_depth < 0 || cfg->py_depth > VT_SITE_MAX_PYDEPTH)
        return NULL;
    s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->cfg = *cfg;
    atomic_init(&s->nextId, 1);
    if (table_init(&s->stacks, cfg->max_stacks) ||
        table_init(&s->codes, cfg->max_codes)) {
        vt__sites_close(s);
        return NULL;
    }
    n = readlink("/proc/self/exe", s->zExe, sizeof(s->zExe) - 1);
    s->zExe[n > 0 ? n : 0] = '\0';
    if (cfg->azSkipModule) dl_iterate_phdr(skip_module_cb, s);
    backtrace(aWarm, 4); /* the first call loads libgcc_s's unwinder: do it now, not in a callback */
    vt__unwind(aWarm, 4, cfg->fast_unwind);
    calibrate(s);
    if (vt__py_resolve()) vt__pyraw_resolve();
    return s;
}

void vt__sites_close(struct vt__sites *s)
{
    int bDrop;
    if (!s) return;
    bDrop = vt__py_holds_gil();
    table_free(&s->stacks, stack_free, NULL);
    table_free(&s->codes, code_free, &bDrop);
    free(s);
}

/* 1 if pc lies in a skipped module. */
static int in_skipped(const struct vt__sites *s, uintptr_t pc)
{
    int i;
    for (i = 0; i < s->nSkip; i++)
        if (pc >= s->aSkip[i].lo && pc < s->aSkip[i].hi) return 1;
    return 0;
}

/*
 * Native frames of the caller of vt__site_capture, innermost first, with
 * leading frames in skipped modules dropped. Writes at most depth return
 * addresses to aPc and returns their number. Never inlined: its own return
 * address marks where vt__site_capture's frame is in the unwinder's answer.
 *
 * Skipped frames must be unwound too. The walk asks for as many extra frames
 * as the most ever skipped so far (plus a margin); when that falls short of
 * depth on a deeper stack it walks again with the full allowance.
 */
__attribute__((noinline)) static int capture_native(struct vt__sites *s, uint64_t *aPc, int depth,
                                                    int *pOwn)
{
    void *aRaw[VT_SITE_MAX_DEPTH + OWN_FRAMES + OWN_SLACK + MAX_SKIPPED];
    void *pRet = __builtin_return_address(0); /* inside vt__site_capture */
    int extra = s->nSkip ? atomic_load_explicit(&s->nSkipSeen, memory_order_relaxed) + 4 : 0;
    int nWant, nRaw, i, iFirst, n;
    if (depth <= 0) return 0;
    for (;;) {
        if (extra > MAX_SKIPPED) extra = MAX_SKIPPED;
        nWant = depth + s->nOwn + extra;
        nRaw = vt__unwind(aRaw, nWant, s->cfg.fast_unwind);
        for (i = 0; i < nRaw && i <= OWN_SLACK + 1 && aRaw[i] != pRet; i++) {
        }
        i = i < nRaw && aRaw[i] == pRet ? i + 1 : OWN_FRAMES; /* first frame of our caller */
        if (pOwn) *pOwn = i;
        iFirst = i;
        while (i < nRaw && s->nSkip && in_skipped(s, (uintptr_t)aRaw[i])) i++;
        if (i - iFirst > atomic_load_explicit(&s->nSkipSeen, memory_order_relaxed))
            atomic_store_explicit(&s->nSkipSeen, i - iFirst, memory_order_relaxed);
        if (nRaw < nWant || nRaw - i >= depth || extra >= MAX_SKIPPED) break;
        extra = MAX_SKIPPED; /* the stack goes on and too few frames are left: walk further */
    }
    for (n = 0; i < nRaw && n < depth; i++) aPc[n++] = (uint64_t)(uintptr_t)aRaw[i];
    return n;
}

/*
 * Count the frames backtrace() reports before the caller of capture_native
 * (2 normally, more when a sanitizer interposes backtrace), so captures ask
 * for no more frames than they keep. Never inlined, like vt__site_capture.
 */
__attribute__((noinline)) static void calibrate(struct vt__sites *s)
{
    uint64_t aPc[1];
    int nOwn = OWN_FRAMES + OWN_SLACK;
    s->nOwn = OWN_FRAMES + OWN_SLACK;
    capture_native(s, aPc, 1, &nOwn);
    __asm__ volatile("" ::: "memory");
    s->nOwn = nOwn;
}

/* Names of a code object: through the C API when bGil, else read raw ("?" if unreadable). 0 or -ENOMEM. */
static int code_names(const void *pCode, int bGil, char **pzFile, char **pzFunction)
{
    int rc = bGil ? vt__py_code_names(pCode, pzFile, pzFunction)
                  : vt__pyraw_code_names(pCode, pzFile, pzFunction);
    if (rc == -EINVAL) {
        *pzFile = strdup("?");
        *pzFunction = strdup("?");
        rc = *pzFile && *pzFunction ? 0 : -ENOMEM;
        if (rc) {
            free(*pzFile);
            free(*pzFunction);
            *pzFile = *pzFunction = NULL;
        }
    }
    return rc;
}

/*
 * Make sure (pCode, fp) is in the code cache. With the GIL held (bGil) the
 * names come from the C API and the entry takes a strong reference on the
 * code object; without it they are read raw and no reference is taken.
 * Returns 1 if cached, 0 if the cache is full, -ENOMEM.
 */
static int code_cache(struct vt__sites *s, const void *pCode, uint32_t fp, int bGil)
{
    uint64_t h = fmix64((uint64_t)(uintptr_t)pCode);
    struct codekey k = {pCode, fp};
    struct codeentry *e, *pIn;
    if (table_find(&s->codes, h, code_eq, &k)) return 1;
    if (atomic_load_explicit(&s->codes.n, memory_order_relaxed) >= s->codes.nMax) return 0;
    e = calloc(1, sizeof(*e));
    if (!e) return -ENOMEM;
    e->hash = h;
    e->pCode = pCode;
    e->fp = fp;
    e->bRef = bGil;
    if (code_names(pCode, bGil, &e->zFile, &e->zFunction)) {
        free(e);
        return -ENOMEM;
    }
    pIn = table_insert(&s->codes, h, e, code_eq, &k);
    if (pIn == e) {
        if (bGil) vt__py_code_ref(pCode, 1);
        return 1;
    }
    free(e->zFile);
    free(e->zFunction);
    free(e);
    return pIn ? 1 : 0;
}

/*
 * Line of instruction offset lasti in pCode: from the code object's cache when
 * it is cached (adding the pair if there is room), else from
 * PyCode_Addr2Line when bGil (the GIL is held) or the raw line-table decoder.
 */
static int code_line(struct vt__sites *s, const void *pCode, uint32_t fp, int lasti, int bGil)
{
    struct codekey k = {pCode, fp};
    struct codeentry *e = table_find(&s->codes, fmix64((uint64_t)(uintptr_t)pCode), code_eq, &k);
    uint64_t want = (uint64_t)(uint32_t)(lasti + 1) << 32, v;
    int i, line;
    if (e)
        for (i = 0; i < CODE_LINES; i++) {
            v = atomic_load_explicit(&e->aLine[i], memory_order_acquire);
            if (v == 0) break;
            if ((v & 0xffffffff00000000ull) == want) return (int)(uint32_t)v;
        }
    line = bGil ? vt__py_code_line(pCode, lasti) : vt__pyraw_code_line(pCode, lasti);
    if (e)
        for (i = 0; i < CODE_LINES; i++) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&e->aLine[i], &expected, want | (uint32_t)line)) break;
            if ((expected & 0xffffffff00000000ull) == want) break; /* another thread added it */
        }
    return line;
}

/* strdup that maps NULL to NULL and reports failure through *pbFail. */
static char *dup_or_null(const char *z, int *pbFail)
{
    char *zOut;
    if (!z) return NULL;
    zOut = strdup(z);
    if (!zOut) *pbFail = 1;
    return zOut;
}

void vt__frames_free(struct vt_frame *aFrame, int n)
{
    int i;
    if (!aFrame) return;
    for (i = 0; i < n; i++) {
        free(aFrame[i].zFunction);
        free(aFrame[i].zFile);
        free(aFrame[i].zModule);
    }
    free(aFrame);
}

/*
 * Build the frame records of a stack key. Python names come from the code
 * cache, or are read directly (a code object the full cache could not take):
 * through the C API when bGil says the GIL is held, else raw. Only called
 * while the key's code objects are on the calling thread's stack. Returns the
 * heap array, or NULL when out of memory.
 */
static struct vt_frame *frames_build(struct vt__sites *s, const uint64_t *aKey, int nKey, int bGil)
{
    int nPy = (int)aKey[0], nFrame = nKey - 1 - nPy, i, bFail = 0;
    struct vt_frame *aFrame = calloc((size_t)(nFrame > 0 ? nFrame : 1), sizeof(*aFrame));
    if (!aFrame) return NULL;
    for (i = 0; i < nPy && !bFail; i++) {
        struct codekey k = {(const void *)(uintptr_t)aKey[1 + 2 * i], (uint32_t)(aKey[2 + 2 * i] >> 32)};
        const struct codeentry *e = table_find(&s->codes, fmix64(aKey[1 + 2 * i]), code_eq, &k);
        aFrame[i].kind = VT_FRAME_PYTHON;
        aFrame[i].line = (int)(uint32_t)aKey[2 + 2 * i];
        if (e) {
            aFrame[i].zFile = dup_or_null(e->zFile, &bFail);
            aFrame[i].zFunction = dup_or_null(e->zFunction, &bFail);
        } else if (code_names(k.pCode, bGil, &aFrame[i].zFile, &aFrame[i].zFunction)) {
            bFail = 1;
        }
    }
    /* native frames: the raw return address only; the writer resolves it (modres.h), outside
     * this callback, where taking the loader's lock cannot deadlock */
    for (i = nPy; i < nFrame; i++) {
        aFrame[i].kind = VT_FRAME_NATIVE;
        aFrame[i].pc = aKey[1 + 2 * nPy + (i - nPy)];
    }
    if (bFail) {
        vt__frames_free(aFrame, nFrame);
        return NULL;
    }
    return aFrame;
}

/* Fill *pNew with a VT_HREC_STACK record. */
static void emit(struct vt__sites *s, struct vt_hrec *pNew, int64_t id, uint64_t h,
                 struct vt_frame *aFrame, int nFrame)
{
    memset(pNew, 0, sizeof(*pNew));
    pNew->type = VT_HREC_STACK;
    pNew->u.stack.id = id;
    pNew->u.stack.hash = h;
    pNew->u.stack.nFrame = nFrame;
    pNew->u.stack.aFrame = aFrame;
    atomic_fetch_add_explicit(&s->nEmitted, 1, memory_order_relaxed);
}

/*
 * The calling thread's Python frames (at most nMax): through the C API when
 * it holds the GIL (*pbGil = 1), else read raw from CPython's structures
 * (pyframes_raw.h). Lines are filled in; fp is the code object's fingerprint
 * (0 when the raw reader is off). Returns the number of frames.
 */
static int capture_python(struct vt__sites *s, struct vt__pyraw_frame *aPy, int nMax, int *pbGil)
{
    struct vt__pyframe aApi[VT_SITE_MAX_PYDEPTH];
    const void *apCode[VT_SITE_MAX_PYDEPTH];
    int n = 0, i;
    *pbGil = 0;
    if (!vt__py_resolve()) return 0;
    if (vt__py_holds_gil()) {
        *pbGil = 1;
        n = vt__py_capture(aApi, nMax);
        for (i = 0; i < n; i++) apCode[i] = aApi[i].pCode;
        /* The first GIL-held captures also check the raw reader against the C API. */
        if (vt__pyraw_resolve()) vt__pyraw_confirm(apCode, n);
        for (i = 0; i < n; i++) {
            aPy[i].pCode = aApi[i].pCode;
            aPy[i].fp = vt__pyraw_code_fp(aApi[i].pCode);
            aPy[i].lasti = aApi[i].lasti;
            aPy[i].line = aApi[i].line;
        }
    } else if (vt__pyraw_resolve()) {
        n = vt__pyraw_capture(aPy, nMax);
    }
    for (i = 0; i < n; i++)
        if (aPy[i].lasti >= 0) aPy[i].line = code_line(s, aPy[i].pCode, aPy[i].fp, aPy[i].lasti, *pbGil);
    return n;
}

int64_t vt__site_capture(struct vt__sites *s, int depth, int bPython, struct vt_hrec *pNew)
{
    uint64_t aKey[MAX_KEY], h;
    struct vt__pyraw_frame aPy[VT_SITE_MAX_PYDEPTH];
    struct stackkey key;
    struct sentry *e, *pIn;
    struct vt_frame *aFrame;
    int nPy = 0, nNative, nKey, i, bDedup = 1, bGil = 0;
    int64_t id;

    pNew->type = 0;
    if (depth > VT_SITE_MAX_DEPTH) depth = VT_SITE_MAX_DEPTH;
    if (bPython && s->cfg.py_depth > 0) nPy = capture_python(s, aPy, s->cfg.py_depth, &bGil);
    nNative = capture_native(s, &aKey[1 + 2 * nPy], depth, NULL);
    if (nPy + nNative == 0) return 0;
    aKey[0] = (uint64_t)nPy;
    for (i = 0; i < nPy; i++) {
        aKey[1 + 2 * i] = (uint64_t)(uintptr_t)aPy[i].pCode;
        aKey[2 + 2 * i] = (uint64_t)aPy[i].fp << 32 | (uint32_t)aPy[i].line;
    }
    nKey = 1 + 2 * nPy + nNative;
    h = hash_words(aKey, nKey);
    key.aKey = aKey;
    key.nKey = nKey;
    atomic_fetch_add_explicit(&s->nCapture, 1, memory_order_relaxed);
    if (nPy) atomic_fetch_add_explicit(&s->nPython, 1, memory_order_relaxed);

    e = table_find(&s->stacks, h, stack_eq, &key);
    if (e) {
        /* Known site; re-emit only if its record was lost (one thread wins the exchange). */
        if (atomic_load_explicit(&e->bLost, memory_order_relaxed) &&
            atomic_exchange_explicit(&e->bLost, 0, memory_order_acq_rel)) {
            aFrame = frames_build(s, aKey, nKey, bGil);
            if (!aFrame) {
                atomic_store(&e->bLost, 1);
                return -ENOMEM;
            }
            emit(s, pNew, e->id, h, aFrame, nKey - 1 - nPy);
        }
        return e->id;
    }

    /* A new site: cache its code objects (still on this thread's stack), then build its frames. */
    for (i = 0; i < nPy; i++) {
        int rc = code_cache(s, aPy[i].pCode, aPy[i].fp, bGil);
        if (rc < 0) return rc;
        if (rc == 0) bDedup = 0;
    }
    aFrame = frames_build(s, aKey, nKey, bGil);
    if (!aFrame) return -ENOMEM;
    if (bDedup && atomic_load_explicit(&s->stacks.n, memory_order_relaxed) < s->stacks.nMax) {
        e = malloc(sizeof(*e) + (size_t)nKey * sizeof(aKey[0]));
        if (!e) {
            vt__frames_free(aFrame, nKey - 1 - nPy);
            return -ENOMEM;
        }
        e->hash = h;
        e->id = atomic_fetch_add_explicit(&s->nextId, 1, memory_order_relaxed);
        atomic_init(&e->bLost, 0);
        e->nKey = nKey;
        memcpy(e->aKey, aKey, (size_t)nKey * sizeof(aKey[0]));
        pIn = table_insert(&s->stacks, h, e, stack_eq, &key);
        if (pIn == e) {
            emit(s, pNew, e->id, h, aFrame, nKey - 1 - nPy);
            return e->id;
        }
        free(e);
        if (pIn) { /* another thread inserted the same site meanwhile: it emits the record */
            vt__frames_free(aFrame, nKey - 1 - nPy);
            return pIn->id;
        }
    }
    /* Past a bound: a complete, non-deduplicated stack of its own. */
    id = atomic_fetch_add_explicit(&s->nextId, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->nUndeduped, 1, memory_order_relaxed);
    emit(s, pNew, id, h, aFrame, nKey - 1 - nPy);
    return id;
}

void vt__site_lost(struct vt__sites *s, const struct vt_hrec *rec)
{
    size_t i;
    if (rec->type != VT_HREC_STACK) return;
    /* Probe from the record's hash for the entry with its id (an undeduplicated id has none). */
    for (i = (size_t)rec->u.stack.hash & s->stacks.mask;; i = (i + 1) & s->stacks.mask) {
        struct sentry *e = atomic_load_explicit(&s->stacks.aSlot[i], memory_order_acquire);
        if (!e) return;
        if (e->id == rec->u.stack.id) {
            atomic_store_explicit(&e->bLost, 1, memory_order_release);
            return;
        }
    }
}

void vt__sites_fork_prepare(struct vt__sites *s)
{
    vt__py_fork_prepare();
    pthread_mutex_lock(&s->stacks.lock);
    pthread_mutex_lock(&s->codes.lock);
}

void vt__sites_fork_parent(struct vt__sites *s)
{
    pthread_mutex_unlock(&s->codes.lock);
    pthread_mutex_unlock(&s->stacks.lock);
    vt__py_fork_parent();
}

void vt__sites_fork_child(struct vt__sites *s)
{
    pthread_mutex_init(&s->codes.lock, NULL);
    pthread_mutex_init(&s->stacks.lock, NULL);
    vt__py_fork_child();
}

void vt__sites_stats(struct vt__sites *s, struct vt_sites_stats *pStats)
{
    pStats->captures = atomic_load(&s->nCapture);
    pStats->stacks = (uint64_t)atomic_load(&s->stacks.n);
    pStats->emitted = atomic_load(&s->nEmitted);
    pStats->undeduped = atomic_load(&s->nUndeduped);
    pStats->python = atomic_load(&s->nPython);
    pStats->codes = (uint64_t)atomic_load(&s->codes.n);
}
