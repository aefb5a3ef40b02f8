/* PyTorch memory snapshots (torch.cuda.memory._snapshot / _dump_snapshot pickles, current and 2.0 formats) to traces. */
#include "import.h"

#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addrmap.h"
#include "rangeset.h"
#include "util/errors.h"
#include "pickle.h"
#include "vramtrace/schema.h"

/*
 * The pickle is streamed (pickle.h): each event dict of device_traces[d] is
 * claimed as it is appended to its list, written, and dropped. The segments
 * (the state at the dump: what was live, bounded by device memory, not by the
 * history's length) are kept and read at the end. The device of an event is the index of
 * its list in device_traces, known only when the lists reach the root at the
 * very end: each list's rows are written as one run of rowids with a guess (the
 * list's rank among the lists seen, right whenever no list before it is empty),
 * corrected then where the guess was wrong. Once the trace is replayed, the dump-time state it does not
 * explain (segments and live blocks allocated before its first event) is added
 * with unknown times, and the history is marked truncated.
 */

#define MAX_FRAMES 256 /* frames kept per stack (innermost first) */

/* The rows of one device_traces[d] list. */
struct batch {
    int64_t aFirst[VT_TB_NTABLE], aLast[VT_TB_NTABLE];
    int64_t device;              /* -1 until the root is read */
    int64_t guess;               /* the device its rows were written with: the list's rank among the lists seen */
    struct vt__addrmap seg, ten; /* segments and tensors live after the trace so far: address -> bytes */
    struct vt__rangeset mapped;  /* the pages of expandable segments mapped after the trace so far */
    int64_t nUnseenFree;         /* frees of addresses the trace never allocated */
};

/* A segment or live block at dump time. */
struct dumped {
    int64_t device, address, bytes, stackId;
    int bExpandable;
};

/* A frame dict as the trace stores it, its strings already ids: judged once, named by the dict's tag. */
struct frm {
    int64_t fn, file, line;    /* string ids (-2: not interned yet), line */
    const char *zName, *zFile; /* the dict's strings until interned (read only while the dict is in the list
                                * being read: a dict freed before is never named again, its tag went with it) */
    int bPy, bCapture;
    int bKept;                 /* its dict is immortal (vt__pk_keep): its address names it to the end */
};

/* A stack met before: the frames it was made of (indexes into aFrm, in the stored order; or, in the table
 * by traceback, the frame dicts of the list as it came) and its id. */
struct stk {
    uint64_t hash; /* 0: empty slot */
    int64_t id;
    size_t off;    /* its frames: aStkFrm[off..off+n) (apRaw[off..off+n)) */
    int n;
};

#define RAW_MAX 4096 /* frames of the longest traceback remembered by its dicts */
#define RAW_STRIDE 8 /* a traceback's hash reads one dict in RAW_STRIDE (frames_stack) */
#define RAW_SAME 16  /* tracebacks remembered under one hash, at most */
#define RUN_STK 4096 /* stacks remembered by the reader's run (direct-mapped, a power of 2) */

/* A stack remembered by the run of memo fetches that filled its list (vt_pkobj.run). */
struct runstk {
    uint64_t run;
    int64_t id;
};

struct snap {
    struct vt__imp *x;
    struct vt_pk *pk;      /* the reader: objects shared to the end are made immortal (vt__pk_keep) */
    struct frm *aFrm;      /* every distinct frame dict met */
    int64_t nFrm, nFrmAlloc;
    struct stk *aStk;      /* open addressing, load <= 1/2 */
    size_t nStk, nStkSlot;
    uint32_t *aStkFrm;
    size_t nStkFrm, nStkFrmAlloc;
    struct stk *aRaw;      /* stacks by traceback: the sequence of (immortal) frame dicts a list held */
    size_t nRaw, nRawSlot;
    const struct vt_pkobj **apRaw;
    size_t nRawObj, nRawObjAlloc;
    struct runstk *aRunStk; /* stacks by run: lists of one run hold the same frame dicts (RUN_STK, made at first use) */
    struct batch *aBatch;
    int nBatch;
    struct dumped *aSeg, *aBlock;
    size_t nSeg, nBlock, nSegAlloc, nBlockAlloc;
    int64_t tFirst, tLast; /* ns */
    int bBase;
    int64_t aAction[16];   /* events per action (index in azAction), last one: unknown actions */
    int64_t nOom, nNoTime, nV1History;
    int64_t segDevice;     /* before the first event: the device of the segments met (-1: none yet, -2: several) */
    int rc;                /* a failure inside the callback */
};

static const char *const azAction[] = {"alloc",        "free_requested", "free_completed", "segment_alloc",
                                       "segment_free", "segment_map",    "segment_unmap",  "oom",
                                       "snapshot"};
#define N_ACTION (int)(sizeof azAction / sizeof azAction[0])
enum { A_ALLOC, A_FREE_REQ, A_FREE, A_SEG_ALLOC, A_SEG_FREE, A_SEG_MAP, A_SEG_UNMAP, A_OOM, A_SNAPSHOT };

static const char *const azEventKeys[] = {"action", "addr", "size", "stream", "time_us", "frames", "device_free",
                                          "compile_context", "user_metadata"};

/* A number as int64 (floats truncated), or VT_TB_NULL (v may be NULL). */
static int64_t numv(const struct vt_pkval *v)
{
    int64_t i;
    double d;
    if (vt__pk_int(v, &i)) return i;
    if (vt__pk_num(v, &d) && d > -9.2e18 && d < 9.2e18) return (int64_t)d;
    return VT_TB_NULL;
}

/* Member zKey of the dict as a number (numv), or VT_TB_NULL. */
static int64_t num(const struct vt_pkval *pDict, const char *zKey)
{
    return numv(vt__pk_get(pDict, zKey));
}

/*
 * An address: 1 with its 64-bit pattern in *p when v is an integer in [0, 2^64) (stored so in the trace's
 * signed integer: docs/schema.md, "Addresses"), else 0 (none, or out of range).
 */
static int addrv(const struct vt_pkval *v, int64_t *p)
{
    uint64_t u;
    if (!vt__pk_u64(v, &u)) return 0;
    *p = (int64_t)u;
    return 1;
}

/* Microseconds to nanoseconds: VT_TB_NULL for a value out of range (or none). */
static int64_t us_ns(int64_t us)
{
    return us != VT_TB_NULL && us > 0 && us < INT64_MAX / 1000 ? us * 1000 : VT_TB_NULL;
}

/* The frames of PyTorch's own traceback capture (the snapshot's unwinder), not of the call site. */
static int capture_frame(const char *zName)
{
    return zName && (!strncmp(zName, "torch::unwind::", 15) || !strncmp(zName, "torch::CapturedTraceback::", 26) ||
                     strstr(zName, "::gather_with_cpp()") != NULL);
}

/* A frame dict's tag: its index in aFrm + 1, shifted, with its two flags below. */
#define FRM_PY 2
#define FRM_CAPTURE 1
#define FRM_INDEX(tag) (((tag) >> 2) - 1)

/*
 * The frame a frame dict stands for, judged once per dict (the dict's tag holds its index + 1 and flags:
 * PyTorch's snapshots share one dict per distinct frame; the dict lives as long as something may
 * still fetch it). Its strings are interned when a stack first holds it (stack_of), in the order
 * stacks name them. Returns the index, or -1 when out of memory. Not inlined: once per distinct frame,
 * and frames_stack's loop keeps its registers.
 */
static __attribute__((noinline)) int64_t frame_of(struct snap *s, struct vt_pkobj *o)
{
    const struct vt_pkval v = {VT_PK_DICT, {.p = o}};
    const char *zFile, *zName;
    size_t len;
    int64_t line;
    struct frm *f;
    if (o->tag >= 4 && FRM_INDEX(o->tag) < s->nFrm) return FRM_INDEX(o->tag);
    if (s->nFrm == s->nFrmAlloc) {
        int64_t n = s->nFrmAlloc ? s->nFrmAlloc * 2 : 256;
        struct frm *a = realloc(s->aFrm, (size_t)n * sizeof *a);
        if (!a) return vt__imp_fail(s->x, VT_EXIT_INTERNAL, "out of memory"), -1;
        s->aFrm = a;
        s->nFrmAlloc = n;
    }
    zFile = vt__pk_str(vt__pk_get(&v, "filename"));
    zName = vt__pk_str(vt__pk_get(&v, "name"));
    len = zFile ? strlen(zFile) : 0;
    line = num(&v, "line");
    f = &s->aFrm[s->nFrm];
    f->bPy = len > 3 && !strcmp(zFile + len - 3, ".py");
    f->bCapture = capture_frame(zName);
    f->line = line > 0 ? line : VT_TB_NULL;
    f->zName = zName;
    f->zFile = zFile && strcmp(zFile, "??") && zFile[0] ? zFile : NULL;
    f->fn = f->file = -2; /* not interned yet */
    o->tag = (++s->nFrm << 2) | (f->bPy ? FRM_PY : 0) | (f->bCapture ? FRM_CAPTURE : 0);
    f->bKept = vt__pk_keep(s->pk, o); /* fetched by every traceback holding it: no count kept when it stays anyway */
    return s->nFrm - 1;
}

/* Double a stack cache (*paStk, *pnSlot slots; open addressing). Returns 0 or -1. */
static int stk_grow(struct stk **paStk, size_t *pnSlot)
{
    size_t nNew = *pnSlot ? *pnSlot * 2 : 1024;
    struct stk *a = calloc(nNew, sizeof *a);
    if (!a) return -1;
    for (size_t i = 0; i < *pnSlot; i++) {
        size_t k;
        if (!(*paStk)[i].hash) continue;
        for (k = (size_t)(*paStk)[i].hash & (nNew - 1); a[k].hash; k = (k + 1) & (nNew - 1)) {}
        a[k] = (*paStk)[i];
    }
    free(*paStk);
    *paStk = a;
    *pnSlot = nNew;
    return 0;
}

/*
 * The stack id of frames aIdx[0..n) (indexes into aFrm, in the stored order): looked up among the
 * stacks met before, else made by the builder and remembered. Returns the id, -1 on an error.
 */
static int64_t stack_of(struct snap *s, const uint32_t *aIdx, int n)
{
    uint64_t h = 1469598103934665603ull;
    int64_t aKey[5 * MAX_FRAMES], aPc[MAX_FRAMES], id;
    size_t k;
    for (int i = 0; i < n; i++) h = (h ^ aIdx[i]) * 1099511628211ull;
    if (!h) h = 1;
    if (s->nStk * 2 >= s->nStkSlot && stk_grow(&s->aStk, &s->nStkSlot))
        return vt__imp_fail(s->x, VT_EXIT_INTERNAL, "out of memory"), -1;
    for (k = (size_t)h & (s->nStkSlot - 1); s->aStk[k].hash; k = (k + 1) & (s->nStkSlot - 1)) {
        const struct stk *e = &s->aStk[k];
        if (e->hash == h && e->n == n && !memcmp(s->aStkFrm + e->off, aIdx, (size_t)n * sizeof *aIdx)) return e->id;
    }
    for (int i = 0; i < n; i++) {
        struct frm *f = &s->aFrm[aIdx[i]];
        int64_t *p = aKey + 5 * i;
        if (f->fn == -2) { /* first in a stack: its strings interned now (its dict is on the list being read) */
            if ((f->fn = vt__tb_string(s->x->tb, f->zName)) == -1 || (f->file = vt__tb_string(s->x->tb, f->zFile)) == -1)
                return -1;
            f->zName = f->zFile = NULL;
        }
        p[0] = f->bPy ? VT_FRAME_PYTHON : VT_FRAME_NATIVE;
        p[1] = f->fn;
        p[2] = f->file;
        p[3] = VT_TB_NULL;
        p[4] = f->line;
        aPc[i] = f->bPy ? 0 : VT_TB_NULL;
    }
    if ((id = vt__tb_stack_keys(s->x->tb, aKey, aPc, n)) == -1) return -1;
    if (s->nStkFrm + (size_t)n > s->nStkFrmAlloc) {
        size_t m = (s->nStkFrm + (size_t)n) * 2;
        uint32_t *a = realloc(s->aStkFrm, m * sizeof *a);
        if (!a) return vt__imp_fail(s->x, VT_EXIT_INTERNAL, "out of memory"), -1;
        s->aStkFrm = a;
        s->nStkFrmAlloc = m;
    }
    memcpy(s->aStkFrm + s->nStkFrm, aIdx, (size_t)n * sizeof *aIdx);
    s->aStk[k] = (struct stk){h, id, s->nStkFrm, n};
    s->nStkFrm += (size_t)n;
    s->nStk++;
    return id;
}

/* Remember stack id for the frame dicts a[0..n) (hash hRaw), in the table by traceback. Returns 0 or -1. */
static int raw_put(struct snap *s, const struct vt_pkval *a, size_t n, uint64_t hRaw, int64_t id)
{
    size_t k;
    if (s->nRaw * 2 >= s->nRawSlot && stk_grow(&s->aRaw, &s->nRawSlot)) return -1;
    if (s->nRawObj + n > s->nRawObjAlloc) {
        size_t m = (s->nRawObj + n) * 2;
        const struct vt_pkobj **ap = realloc(s->apRaw, m * sizeof *ap);
        if (!ap) return -1;
        s->apRaw = ap;
        s->nRawObjAlloc = m;
    }
    for (k = (size_t)hRaw & (s->nRawSlot - 1); s->aRaw[k].hash; k = (k + 1) & (s->nRawSlot - 1)) {}
    for (size_t i = 0; i < n; i++) s->apRaw[s->nRawObj + i] = a[i].u.p;
    s->aRaw[k] = (struct stk){hRaw, id, s->nRawObj, (int)n};
    s->nRawObj += n;
    s->nRaw++;
    return 0;
}

/* Remember stack id for the lists filled by o's run of memo fetches, when it has one (they hold the same frame
 * dicts). Returns id. */
static int64_t run_stack(struct snap *s, const struct vt_pkobj *o, int64_t id)
{
    if (o->run && id != VT_TB_NULL && id != -1 && (s->aRunStk || (s->aRunStk = calloc(RUN_STK, sizeof *s->aRunStk))))
        s->aRunStk[o->run & (RUN_STK - 1)] = (struct runstk){o->run, id};
    return id;
}

/*
 * Stack id of a frames list ({filename, line, name} dicts, innermost first,
 * Python and C++ interleaved), cached in the list's tag. As the tracer stores
 * sites: Python frames first (innermost first), then native ones, without the
 * capture's own leading frames. Each frame dict is judged once (frame_of) and
 * each distinct sequence of frames made a stack once (stack_of): a list new
 * for every event, as PyTorch writes them, costs a pass over its items.
 */
static int64_t frames_stack(struct snap *s, const struct vt_pkval *pFrames)
{
    uint32_t aIdx[MAX_FRAMES], aNat[MAX_FRAMES];
    int n = 0, nNat = 0, bLead = 1, bKept, bImm;
    const struct vt_pkval *a;
    uint64_t hRaw = 1469598103934665603ull;
    size_t nItem, k, nSame = 0;
    int64_t id, nFrm = s->nFrm;
    if (!pFrames || pFrames->type != VT_PK_LIST || pFrames->u.p->n == 0) return VT_TB_NULL;
    if (pFrames->u.p->tag) return pFrames->u.p->tag;
    /* the frame dicts of a list met before, as the reader says (its run): that list's stack */
    if (pFrames->u.p->run && s->aRunStk && s->aRunStk[pFrames->u.p->run & (RUN_STK - 1)].run == pFrames->u.p->run)
        return pFrames->u.p->tag = s->aRunStk[pFrames->u.p->run & (RUN_STK - 1)].id;
    nItem = pFrames->u.p->n;
    a = pFrames->u.p->u.a; /* in locals: frame_of (first sight of a frame only) changes neither */
    /* the same frame dicts in the same order as a list met before: its stack, without judging each frame */
    /* hashed: every RAW_STRIDE-th dict, the last and the count (two lists that differ elsewhere only share a
     * hash; the compare below reads every dict, and a hash that RAW_SAME lists share already, as only a
     * crafted input makes, gets no more: the table's probes stay bounded) */
    for (size_t i = 0; i < nItem; i += RAW_STRIDE) hRaw = (hRaw ^ (uint64_t)(uintptr_t)a[i].u.p) * 1099511628211ull;
    hRaw = (hRaw ^ (uint64_t)(uintptr_t)a[nItem - 1].u.p ^ nItem) * 1099511628211ull;
    if (!hRaw) hRaw = 1;
    for (k = (size_t)hRaw & (s->nRawSlot - 1); s->nRawSlot && s->aRaw[k].hash; k = (k + 1) & (s->nRawSlot - 1)) {
        const struct stk *e = &s->aRaw[k];
        const struct vt_pkobj *const *ap = s->apRaw + e->off;
        size_t i = 0;
        if (e->hash != hRaw) continue;
        nSame++;
        if ((size_t)e->n != nItem) continue;
        while (i + 1 < nItem && a[i].type == VT_PK_DICT && a[i].u.p == ap[i] && a[i + 1].type == VT_PK_DICT &&
               a[i + 1].u.p == ap[i + 1])
            i += 2;
        while (i < nItem && a[i].type == VT_PK_DICT && a[i].u.p == ap[i]) i++;
        if (i == nItem) { /* the same immortal dicts: released without a test each */
            vt__pk_keep_items(pFrames->u.p, nItem);
            return run_stack(s, pFrames->u.p, pFrames->u.p->tag = e->id);
        }
    }
    bImm = 1;
    for (size_t i = 0; i < nItem; i++) { /* Python frames into aIdx, native ones into aNat, in one pass */
        int64_t tag;
        if (a[i].type != VT_PK_DICT) {
            bImm = 0;
            continue;
        }
        if ((tag = a[i].u.p->tag) < 4 || FRM_INDEX(tag) >= nFrm) {
            if (frame_of(s, a[i].u.p) == -1) return -1;
            tag = a[i].u.p->tag;
            nFrm = s->nFrm;
        }
        bImm &= s->aFrm[FRM_INDEX(tag)].bKept;
        if (tag & FRM_PY) {
            if (n < MAX_FRAMES) aIdx[n++] = (uint32_t)FRM_INDEX(tag);
        } else if (!(bLead && (tag & FRM_CAPTURE))) { /* without the capture's own leading frames */
            bLead = 0;
            if (nNat < MAX_FRAMES) aNat[nNat++] = (uint32_t)FRM_INDEX(tag);
        }
    }
    if (bImm) vt__pk_keep_items(pFrames->u.p, nItem);
    bKept = bImm && nItem <= RAW_MAX && nSame < RAW_SAME;
    if (nNat > MAX_FRAMES - n) nNat = MAX_FRAMES - n;
    memcpy(aIdx + n, aNat, (size_t)nNat * sizeof *aNat);
    n += nNat;
    if (n == 0) return VT_TB_NULL;
    id = stack_of(s, aIdx, n);
    if (id == -1) return -1;
    if (id != VT_TB_NULL) pFrames->u.p->tag = id;
    /* remembered by its dicts when each lives to the end (its address is its own till then) */
    if (bKept && id != VT_TB_NULL && raw_put(s, a, nItem, hRaw, id)) return vt__imp_fail(s->x, VT_EXIT_INTERNAL, "out of memory"), -1;
    return run_stack(s, pFrames->u.p, id);
}

/* Fix the time base at the first timed event. */
static int base_at(struct snap *s, int64_t t)
{
    if (s->bBase) return 0;
    s->bBase = 1;
    if (vt__tb_base(s->x->tb, t)) return vt__imp_tb_fail(s->x);
    return 0;
}

/* Write one trace event of the list tagged iBatch. Returns 0 or an exit code. */
static int event(struct snap *s, struct batch *b, const struct vt_pkval *e)
{
    enum { N_KEYS = (int)(sizeof azEventKeys / sizeof azEventKeys[0]) };
    const struct vt_pkval *aVal[N_KEYS] = {0}, *k, *v;
    const char *zAction;
    struct vt__tb *tb = s->x->tb;
    int64_t t = VT_TB_NULL, us, addr = 0, size, stream, stackId;
    int a, iTable = -1, rc = 0, bAddr;

    /* One pass over the event's keys. The key and action strings are memoized objects shared by
     * every event: each is judged once and the verdict kept in its tag (key index + 1, N_KEYS + 1
     * for an unknown key; action index + 1) */
    for (size_t i = 0; i < e->u.p->n; i++) { /* e is a dict (on_child): its pairs in place */
        int j;
        k = &e->u.p->u.a[2 * i];
        v = k + 1;
        if (k->type != VT_PK_STR) {
            vt__imp_note(s->x, "device_traces events: a key that is not text was ignored");
            continue;
        }
        if (k->u.p->tag >= 1 && k->u.p->tag <= N_KEYS + 1) {
            j = (int)k->u.p->tag - 1;
        } else {
            for (j = 0; j < N_KEYS && strcmp(k->u.p->u.z, azEventKeys[j]); j++) {}
            k->u.p->tag = j + 1;
            vt__pk_keep(s->pk, k->u.p);
        }
        if (j < N_KEYS) aVal[j] = v;
        else vt__imp_note(s->x, "device_traces events: key '%s' is not known to this vramtrace and was ignored",
                          k->u.p->u.z);
    }
    v = aVal[0];
    zAction = vt__pk_str(v);
    if (zAction && v->u.p->tag >= 1 && v->u.p->tag <= N_ACTION + 1) {
        a = (int)v->u.p->tag - 1;
    } else {
        for (a = 0; a < N_ACTION && (!zAction || strcmp(zAction, azAction[a])); a++) {}
        if (zAction) {
            v->u.p->tag = a + 1;
            vt__pk_keep(s->pk, v->u.p);
        }
    }
    s->aAction[a]++;
    s->x->nEvents++;
    if (a == N_ACTION) {
        vt__imp_note(s->x, "device_traces: action '%s' is not known to this vramtrace; such events were ignored",
                     zAction ? zAction : "(missing)");
        return 0;
    }
    if (a == A_SNAPSHOT) return 0;
    us = numv(aVal[4]);
    if ((t = us_ns(us)) != VT_TB_NULL) {
        if ((rc = base_at(s, t)) != 0) return rc;
        if (s->tFirst == VT_TB_NULL || t < s->tFirst) s->tFirst = t;
        if (s->tLast == VT_TB_NULL || t > s->tLast) s->tLast = t;
    } else {
        s->nNoTime++;
        if ((rc = base_at(s, VT_TB_NULL)) != 0) return rc;
    }
    bAddr = a != A_OOM && addrv(aVal[1], &addr);
    if (a == A_OOM) addr = numv(aVal[6]); /* device_free */
    size = numv(aVal[2]);
    stream = numv(aVal[3]);
    if ((stackId = frames_stack(s, aVal[5])) == -1) return vt__imp_tb_fail(s->x);
    if (a == A_OOM) {
        struct vt__tb_oom r;
        VT_TB_CLEAR(r);
        r.ts = t;
        /* which CUDA call failed, and how, the snapshot does not say: api and status stay unknown */
        r.bytes = size;
        r.free_bytes = addr;
        r.stack_id = stackId;
        r.device = b->guess;
        iTable = VT_TB_OOM;
        s->nOom++;
        if (vt__tb_oom(tb, &r)) return vt__imp_tb_fail(s->x);
    } else if (a == A_ALLOC || a == A_FREE_REQ || a == A_FREE) {
        struct vt__tb_tensor r;
        if (!bAddr) {
            vt__imp_note(s->x, "device_traces: block events without an address (an integer in [0, 2^64)) were left out");
            return 0;
        }
        VT_TB_CLEAR(r);
        r.ts = t;
        r.op = a == A_ALLOC ? VT_TENSOROP_ALLOC : a == A_FREE ? VT_TENSOROP_FREE : VT_TENSOROP_FREE_REQUESTED;
        r.address = addr;
        r.bytes = size;
        r.stream = stream;
        r.stack_id = stackId;
        r.source = VT_TENSORSRC_PYTORCH_HISTORY;
        r.device = b->guess;
        iTable = VT_TB_TENSOR;
        if (vt__tb_tensor(tb, &r)) return vt__imp_tb_fail(s->x);
        if (a == A_ALLOC) {
            if (vt__addrmap_put(&b->ten, (uint64_t)addr, size)) return vt__imp_fail(s->x, VT_EXIT_INTERNAL, "out of memory");
        } else if (a == A_FREE ? !vt__addrmap_remove(&b->ten, (uint64_t)addr, NULL)
                               : !vt__addrmap_get(&b->ten, (uint64_t)addr)) {
            b->nUnseenFree += a == A_FREE;
        }
    } else {
        struct vt__tb_memory r;
        VT_TB_CLEAR(r);
        r.ts = t;
        r.op = a == A_SEG_ALLOC ? VT_MEMOP_ALLOC : a == A_SEG_FREE ? VT_MEMOP_FREE
               : a == A_SEG_MAP ? VT_MEMOP_VMM_MAP : VT_MEMOP_VMM_UNMAP;
        r.mem_kind = VT_MEMKIND_DEVICE;
        r.address = addr;
        r.bytes = size == VT_TB_NULL ? 0 : size;
        r.stream = stream;
        r.stack_id = stackId;
        r.device = b->guess;
        iTable = VT_TB_MEMORY;
        if (!bAddr || size == VT_TB_NULL) {
            vt__imp_note(s->x, "device_traces: segment events without an address or size were left out");
            return 0;
        }
        if (vt__tb_memory(tb, &r)) return vt__imp_tb_fail(s->x);
        if (a == A_SEG_ALLOC) {
            if (vt__addrmap_put(&b->seg, (uint64_t)addr, size)) return vt__imp_fail(s->x, VT_EXIT_INTERNAL, "out of memory");
        } else if (a == A_SEG_FREE) {
            b->nUnseenFree += !vt__addrmap_remove(&b->seg, (uint64_t)addr, NULL);
        } else if (size > 0 && (a == A_SEG_MAP ? vt__rangeset_add(&b->mapped, addr, size)
                                               : vt__rangeset_remove(&b->mapped, addr, size) < 0 ? -1 : 0) != 0) {
            return vt__imp_fail(s->x, VT_EXIT_INTERNAL, "out of memory");
        }
    }
    if (b->aFirst[iTable] == 0) b->aFirst[iTable] = vt__tb_next_rowid(tb, iTable) - 1;
    b->aLast[iTable] = vt__tb_next_rowid(tb, iTable) - 1;
    return 0;
}

/* Append d to the growing array *pa (*pn used, *pnAlloc allocated). Returns 0 or an exit code. */
static int push_dumped(struct snap *s, struct dumped **pa, size_t *pn, size_t *pnAlloc, const struct dumped *d)
{
    if (*pn == *pnAlloc) {
        size_t n = *pnAlloc ? *pnAlloc * 2 : 64;
        struct dumped *a = realloc(*pa, n * sizeof *a);
        if (!a) return vt__imp_fail(s->x, VT_EXIT_INTERNAL, "out of memory");
        *pa = a;
        *pnAlloc = n;
    }
    (*pa)[(*pn)++] = *d;
    return 0;
}

/* Keep one segment's dump-time state and its live blocks. Returns 0 or an exit code. */
static int segment(struct snap *s, const struct vt_pkval *g)
{
    struct dumped d;
    const struct vt_pkval *pBlocks = vt__pk_get(g, "blocks"), *v;
    int64_t off;
    int rc;
    int bAddr, bOff;
    d.device = num(g, "device");
    bAddr = addrv(vt__pk_get(g, "address"), &d.address);
    d.bytes = num(g, "total_size");
    v = vt__pk_get(g, "is_expandable");
    d.bExpandable = v && v->type == VT_PK_BOOL && v->u.i;
    if ((d.stackId = frames_stack(s, vt__pk_get(g, "frames"))) == -1) return vt__imp_tb_fail(s->x);
    if (d.device == VT_TB_NULL || !bAddr || d.bytes == VT_TB_NULL) {
        vt__imp_note(s->x, "segments: entries without device, address or total_size were left out");
        return 0;
    }
    if ((rc = push_dumped(s, &s->aSeg, &s->nSeg, &s->nSegAlloc, &d)) != 0) return rc;
    off = d.address;
    bOff = 1;
    for (size_t i = 0; i < vt__pk_len(pBlocks); i++) {
        const struct vt_pkval *bl = vt__pk_item(pBlocks, i), *pHist = vt__pk_get(bl, "history");
        const char *zState = vt__pk_str(vt__pk_get(bl, "state"));
        struct dumped k;
        int64_t a;
        k.device = d.device;
        k.bytes = num(bl, "size");
        k.bExpandable = 0;
        /* PyTorch 2.0 blocks carry no address: blocks follow each other from the segment's start */
        if (addrv(vt__pk_get(bl, "address"), &a)) k.address = a;
        else if (bOff) k.address = off;
        else continue; /* after a block of unknown size: nowhere known */
        /* the next block's start, in unsigned arithmetic (an address is a 64-bit pattern) */
        bOff = k.bytes != VT_TB_NULL && k.bytes >= 0 && (uint64_t)k.address <= UINT64_MAX - (uint64_t)k.bytes;
        if (bOff) off = (int64_t)((uint64_t)k.address + (uint64_t)k.bytes);
        if (!zState || (strcmp(zState, "active_allocated") && strcmp(zState, "active_pending_free"))) continue;
        if (k.bytes == VT_TB_NULL) continue;
        if (pHist) { /* 2.0: the last history entry is the live allocation */
            size_t n = vt__pk_len(pHist);
            const struct vt_pkval *h = n ? vt__pk_item(pHist, n - 1) : NULL;
            s->nV1History += (int64_t)n;
            if (h && addrv(vt__pk_get(h, "addr"), &a)) k.address = a;
            if ((k.stackId = frames_stack(s, vt__pk_get(h, "frames"))) == -1) return vt__imp_tb_fail(s->x);
        } else if ((k.stackId = frames_stack(s, vt__pk_get(bl, "frames"))) == -1) {
            return vt__imp_tb_fail(s->x);
        }
        if ((rc = push_dumped(s, &s->aBlock, &s->nBlock, &s->nBlockAlloc, &k)) != 0) return rc;
    }
    return 0;
}

/* Whether dict o has an "action" key (vt__pk_get's test, without a call per key). */
static int has_action(const struct vt_pkobj *o)
{
    for (size_t i = 0; i < o->n; i++) {
        const struct vt_pkval *k = &o->u.a[2 * i];
        if (k->type == VT_PK_STR && k->u.p->n == 6 && !memcmp(k->u.p->u.z, "action", 6)) return 1;
    }
    return 0;
}

/*
 * Before the first event: note the device of segment dict o (one with a total_size; PyTorch writes the
 * segments before the device traces) in segDevice. Returns 1 when o is a segment, else 0.
 */
static int seg_seen(struct snap *s, struct vt_pkobj *o)
{
    const struct vt_pkval v = {VT_PK_DICT, {.p = o}};
    int64_t d;
    if (!vt__pk_get(&v, "total_size") || (d = num(&v, "device")) == VT_TB_NULL) return 0;
    if (s->segDevice == -1) s->segDevice = d;
    else if (s->segDevice != d) s->segDevice = -2;
    return 1;
}

/* The streaming callback: events and segments are claimed as they are added to their lists. */
static int on_child(void *pArg, struct vt_pkobj *pParent, const struct vt_pkval *pKey, struct vt_pkval *pChild)
{
    struct snap *s = pArg;
    (void)pKey;
    /* only dicts added to lists can be events (a dict's pairs are not offered: vt__pk_lists_only); a dict
     * already judged (a frame dict, shared by many lists) is not one: its tag says so. A list whose first
     * dict is not an event (frames, segments, blocks) holds none: its other children are added without
     * being offered */
    if (pParent->type != VT_PK_LIST || pChild->type != VT_PK_DICT) return VT_PK_KEEP;
    if (pChild->u.p->tag != 0) return VT_PK_KEEP_REST;
    if (has_action(pChild->u.p)) {
        struct batch *b;
        if (pParent->tag <= 0 || pParent->tag > s->nBatch) { /* a new device_traces list */
            struct batch *a;
            /* segments of several devices: so are the events, one device's list after another, out of time
             * order from the second list on; kept aside from the first row, each row is written once */
            if (s->nBatch == 0 && s->segDevice == -2) {
                vt__tb_spill(s->x->tb, VT_TB_TENSOR);
                vt__tb_spill(s->x->tb, VT_TB_MEMORY);
                vt__tb_spill(s->x->tb, VT_TB_OOM);
            }
            a = realloc(s->aBatch, (size_t)(s->nBatch + 1) * sizeof *a);
            if (!a) return (s->rc = vt__imp_fail(s->x, VT_EXIT_INTERNAL, "out of memory")), -1;
            s->aBatch = a;
            memset(&a[s->nBatch], 0, sizeof *a);
            a[s->nBatch].device = -1;
            a[s->nBatch].guess = s->nBatch;
            pParent->tag = ++s->nBatch;
        }
        b = &s->aBatch[pParent->tag - 1];
        if ((s->rc = event(s, b, pChild)) != 0) return -1;
        return VT_PK_CLAIM;
    }
    pChild->u.p->tag = -1; /* judged: not an event (frame_of may give it a frame's index) */
    /* a segment before any event: the next ones are offered too, for their devices */
    return s->nBatch == 0 && s->segDevice != -2 && seg_seen(s, pChild->u.p) ? VT_PK_KEEP : VT_PK_KEEP_REST;
}

/* The batch holding device d's events, or NULL. */
static struct batch *batch_of(struct snap *s, int64_t d)
{
    for (int i = 0; i < s->nBatch; i++)
        if (s->aBatch[i].device == d) return &s->aBatch[i];
    return NULL;
}

/*
 * Give each list's rows their device, now that the root is read: a list's
 * device is its index in pTraces (device_traces). Nothing is written when
 * every guess was right and no two lists' runs of rowids overlap; otherwise the
 * guesses are undone (NULL, as for a list outside device_traces) and each list
 * of device_traces, in order, sets its run's device. Returns 0 or an exit code.
 */
static int fix_devices(struct snap *s, const struct vt_pkval *pTraces)
{
    int bRight = 1;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t d = 0; d < vt__pk_len(pTraces); d++) {
            const struct vt_pkval *t = vt__pk_item(pTraces, d);
            struct batch *b;
            if (!t || t->type != VT_PK_LIST || t->u.p->tag <= 0 || t->u.p->tag > s->nBatch) continue;
            b = &s->aBatch[t->u.p->tag - 1];
            b->device = (int64_t)d;
            for (int iT = 0; pass == 1 && iT < VT_TB_NTABLE; iT++)
                if (b->aFirst[iT] && vt__tb_set_device(s->x->tb, iT, b->aFirst[iT], b->aLast[iT], b->device))
                    return vt__imp_tb_fail(s->x);
        }
        for (int i = 0; pass == 0 && i < s->nBatch && bRight; i++) {
            const struct batch *b = &s->aBatch[i];
            bRight = b->device == b->guess;
            for (int j = 0; j < i && bRight; j++)
                for (int iT = 0; iT < VT_TB_NTABLE && bRight; iT++)
                    bRight = !b->aFirst[iT] || !s->aBatch[j].aFirst[iT] || b->aFirst[iT] > s->aBatch[j].aLast[iT] ||
                             b->aLast[iT] < s->aBatch[j].aFirst[iT];
        }
        if (bRight) return 0;
        for (int i = 0; pass == 0 && i < s->nBatch; i++)
            for (int iT = 0; iT < VT_TB_NTABLE; iT++)
                if (s->aBatch[i].aFirst[iT] &&
                    vt__tb_set_device(s->x->tb, iT, s->aBatch[i].aFirst[iT], s->aBatch[i].aLast[iT], VT_TB_NULL))
                    return vt__imp_tb_fail(s->x);
    }
    return 0;
}

/* A dumped segment's memory the trace does not explain, as reconcile writes it. */
struct unexplained {
    struct snap *s;
    const struct dumped *d;
    int64_t *pnBefore;
};

/* Write [a, a + n) of segment u->d (all of it, or a part of an expandable one the trace's maps leave unmapped) as
 * allocated or mapped before the trace's first event (unknown time). 0, or an exit code. */
static int unexplained_part(void *pArg, int64_t a, int64_t n)
{
    struct unexplained *u = pArg;
    struct vt__tb_memory r;
    VT_TB_CLEAR(r);
    r.op = u->d->bExpandable ? VT_MEMOP_VMM_MAP : VT_MEMOP_ALLOC;
    r.mem_kind = VT_MEMKIND_DEVICE;
    r.address = a;
    r.bytes = n;
    r.device = u->d->device;
    r.stack_id = u->d->stackId;
    if (vt__tb_memory(u->s->x->tb, &r)) return vt__imp_tb_fail(u->s->x);
    (*u->pnBefore)++;
    return 0;
}

/*
 * Dump-time state the trace does not explain: written with unknown times. A segment the trace did not allocate, the
 * pages of an expandable segment's mapped range that its maps and unmaps do not leave mapped (a history that lost its
 * first events to the ring buffer keeps the later maps only), a live block it did not allocate. Returns 0 or an exit
 * code.
 */
static int reconcile(struct snap *s, int64_t *pnBefore)
{
    struct vt__tb *tb = s->x->tb;
    static const struct vt__rangeset none;
    for (size_t i = 0; i < s->nSeg; i++) {
        const struct dumped *d = &s->aSeg[i];
        struct batch *b = batch_of(s, d->device);
        struct unexplained u = {s, d, pnBefore};
        int rc;
        if (d->bExpandable) rc = vt__rangeset_gaps(b ? &b->mapped : &none, d->address, d->bytes, unexplained_part, &u);
        else rc = b && vt__addrmap_get(&b->seg, (uint64_t)d->address) ? 0 : unexplained_part(&u, d->address, d->bytes);
        if (rc != 0) return rc;
    }
    for (size_t i = 0; i < s->nBlock; i++) {
        const struct dumped *d = &s->aBlock[i];
        struct batch *b = batch_of(s, d->device);
        struct vt__tb_tensor r;
        if (b && vt__addrmap_get(&b->ten, (uint64_t)d->address)) continue;
        VT_TB_CLEAR(r);
        r.op = VT_TENSOROP_ALLOC;
        r.address = d->address;
        r.bytes = d->bytes;
        r.device = d->device;
        r.stack_id = d->stackId;
        r.source = VT_TENSORSRC_PYTORCH_HISTORY;
        if (vt__tb_tensor(tb, &r)) return vt__imp_tb_fail(s->x);
        (*pnBefore)++;
    }
    return 0;
}

/* external_annotations ({stage START/END, name, device, time_us}) as NVTX-like ranges, paired per device and name. */
static int annotations(struct snap *s, const struct vt_pkval *pList)
{
    size_t n = vt__pk_len(pList);
    int8_t *aUsed;
    if (!n) return 0;
    if (!(aUsed = calloc(n, 1))) return vt__imp_fail(s->x, VT_EXIT_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const struct vt_pkval *e = vt__pk_item(pList, i);
        const char *zStage = vt__pk_str(vt__pk_get(e, "stage")), *zName = vt__pk_str(vt__pk_get(e, "name"));
        int64_t dev = num(e, "device"), us = us_ns(num(e, "time_us"));
        struct vt__tb_nvtx r;
        if (aUsed[i] || !zStage || strcmp(zStage, "START") || us == VT_TB_NULL) continue;
        VT_TB_CLEAR(r);
        r.start = us;
        r.kind = VT_NVTX_PUSHPOP;
        if ((r.name_id = vt__tb_string(s->x->tb, zName ? zName : "")) == -1) break;
        /* the first later END of the same name on the same device */
        for (size_t j = i + 1; j < n; j++) {
            const struct vt_pkval *f = vt__pk_item(pList, j);
            const char *zS = vt__pk_str(vt__pk_get(f, "stage")), *zN = vt__pk_str(vt__pk_get(f, "name"));
            if (aUsed[j] || !zS || num(f, "device") != dev) continue;
            if (!strcmp(zS, "END") && zN && zName && !strcmp(zN, zName) && us_ns(num(f, "time_us")) != VT_TB_NULL) {
                r.end = us_ns(num(f, "time_us"));
                aUsed[j] = 1;
                break;
            }
        }
        if (vt__tb_nvtx(s->x->tb, &r)) break;
    }
    free(aUsed);
    return vt__tb_errmsg(s->x->tb)[0] ? vt__imp_tb_fail(s->x) : 0;
}

/* allocator_settings as meta rows pytorch.allocator.KEY (scalars only). */
static int settings(struct snap *s, const struct vt_pkval *d)
{
    const struct vt_pkval *k, *v;
    for (size_t i = 0; vt__pk_pair(d, i, &k, &v); i++) {
        char zKey[128];
        int64_t iv;
        double dv;
        int rc = 0;
        if (!vt__pk_str(k)) continue;
        snprintf(zKey, sizeof zKey, "pytorch.allocator.%s", vt__pk_str(k));
        if (v->type == VT_PK_BOOL) rc = vt__tb_meta(s->x->tb, zKey, v->u.i ? "1" : "0");
        else if (vt__pk_int(v, &iv)) rc = vt__tb_metaf(s->x->tb, zKey, "%lld", (long long)iv);
        else if (vt__pk_num(v, &dv)) rc = vt__tb_metaf(s->x->tb, zKey, "%.17g", dv);
        else if (vt__pk_str(v)) rc = vt__tb_meta(s->x->tb, zKey, vt__pk_str(v));
        if (rc) return vt__imp_tb_fail(s->x);
    }
    return 0;
}

/* The unpickler's failure as an exit code and message. */
static int pickle_fail(struct snap *s, int rc, const char *zMsg)
{
    switch (rc) {
    case VT_PK_ECALLBACK: return s->rc ? s->rc : vt__imp_fail(s->x, VT_EXIT_INTERNAL, "%s", zMsg);
    case VT_PK_EHOSTILE: return vt__imp_fail(s->x, VT_EXIT_NOT_TRACE, "%s", zMsg);
    case VT_PK_ENEWER: return vt__imp_fail(s->x, VT_EXIT_TOO_NEW, "%s", zMsg);
    case VT_PK_ENOMEM: return vt__imp_fail(s->x, VT_EXIT_INTERNAL, "%s", zMsg);
    case VT_PK_EUNSUPPORTED: return vt__imp_fail(s->x, VT_EXIT_NOT_TRACE, "not a PyTorch memory snapshot this reads: %s", zMsg);
    default: return vt__imp_fail(s->x, VT_EXIT_CORRUPT, "damaged PyTorch memory snapshot: %s", zMsg);
    }
}

int vt__import_snapshot(struct vt__imp *x)
{
    struct snap s;
    struct vt__src in, pre;
    struct vt_pk *p = NULL;
    struct vt_pkval root;
    const struct vt_pkval *k, *v, *pTraces;
    int64_t nBefore = 0, nUnseen = 0;
    int rc, bHistory;

    memset(&s, 0, sizeof s);
    s.x = x;
    s.tFirst = s.tLast = VT_TB_NULL;
    s.segDevice = -1;
    if (vt__src_open_file(&in, x->zIn) != 0) return vt__imp_fail(x, VT_EXIT_NOFILE, "cannot open: %s", strerror(errno));
    if (!(p = vt__pk_new(&in, on_child, &s))) {
        rc = vt__imp_fail(x, VT_EXIT_INTERNAL, "out of memory");
        goto done;
    }
    s.pk = p;
    vt__pk_lists_only(p); /* events and segments are dicts added to lists: a dict's own pairs are not offered */
    /* a first pass over the file finds the memo entries shared later: only those are kept while reading */
    if (vt__src_open_file(&pre, x->zIn) != 0) {
        rc = vt__imp_fail(x, VT_EXIT_NOFILE, "cannot open: %s", strerror(errno));
        goto done;
    }
    rc = vt__pk_index(p, &pre);
    vt__src_close(&pre);
    if (rc != VT_PK_OK) {
        rc = pickle_fail(&s, rc, vt__pk_errmsg(p));
        goto done;
    }
    rc = vt__pk_run(p, &root);
    if (rc != VT_PK_OK) {
        rc = pickle_fail(&s, rc, vt__pk_errmsg(p));
        goto done;
    }
    if (root.type != VT_PK_DICT || (!vt__pk_get(&root, "segments") && !vt__pk_get(&root, "device_traces"))) {
        rc = vt__imp_fail(x, VT_EXIT_NOT_TRACE,
                          "a pickle of plain data, but not a PyTorch memory snapshot (no 'segments' or "
                          "'device_traces')");
        goto done;
    }
    for (size_t i = 0; vt__pk_pair(&root, i, &k, &v); i++) {
        const char *z = vt__pk_str(k);
        if (!z || (strcmp(z, "segments") && strcmp(z, "device_traces") && strcmp(z, "allocator_settings") &&
                   strcmp(z, "external_annotations")))
            vt__imp_note(x, "snapshot key '%s' is not known to this vramtrace and was ignored", z ? z : "(not text)");
    }
    /* each list's device: its index in device_traces */
    pTraces = vt__pk_get(&root, "device_traces");
    if ((rc = fix_devices(&s, pTraces)) != 0) goto done;
    if ((rc = base_at(&s, VT_TB_NULL)) != 0) goto done;
    /* the state at the dump: kept whole (it is what was live, not the history) and read now */
    v = vt__pk_get(&root, "segments");
    for (size_t i = 0; i < vt__pk_len(v); i++)
        if ((rc = segment(&s, vt__pk_item(v, i))) != 0) goto done;
    if ((rc = reconcile(&s, &nBefore)) != 0) goto done;
    for (int i = 0; i < s.nBatch; i++) nUnseen += s.aBatch[i].nUnseenFree;
    if ((v = vt__pk_get(&root, "allocator_settings")) && v->type == VT_PK_DICT) {
        if ((rc = settings(&s, v)) != 0) goto done;
    }
    if ((rc = annotations(&s, vt__pk_get(&root, "external_annotations"))) != 0) goto done;
    /* devices seen */
    for (size_t d = 0; d < vt__pk_len(pTraces); d++)
        if (vt__tb_device(x->tb, (int64_t)d, NULL, NULL, VT_TB_NULL, VT_TB_NULL, VT_TB_NULL, VT_TB_NULL)) {
            rc = vt__imp_tb_fail(x);
            goto done;
        }
    for (size_t i = 0; i < s.nSeg; i++)
        if (vt__tb_device(x->tb, s.aSeg[i].device, NULL, NULL, VT_TB_NULL, VT_TB_NULL, VT_TB_NULL, VT_TB_NULL)) {
            rc = vt__imp_tb_fail(x);
            goto done;
        }

    /* what the history covers */
    bHistory = pTraces && vt__pk_len(pTraces) > 0 && s.x->nEvents > s.aAction[A_SNAPSHOT];
    if (nBefore || nUnseen) vt__tb_meta(x->tb, "history_truncated", "1");
    if ((nBefore || nUnseen) && bHistory) {
        vt__imp_note(x,
                     "the allocation history starts after the process did (a full ring buffer, or recording "
                     "enabled late): %lld allocation(s) live at the dump were made before its first event and %lld "
                     "free(s) release memory allocated before it; what happened before is unknown",
                     (long long)nBefore, (long long)nUnseen);
    }
    if (s.tFirst != VT_TB_NULL) {
        vt__tb_metaf(x->tb, "history_start_ns", "%lld", (long long)s.tFirst);
        /* the snapshot's clock is the wall clock: one instant on both clocks */
        vt__tb_metaf(x->tb, "clock_anchor_cupti_ns", "%lld", (long long)s.tFirst);
        vt__tb_metaf(x->tb, "clock_anchor_wall_ns", "%lld", (long long)s.tFirst);
        vt__tb_metaf(x->tb, "start_ns", "%lld", (long long)s.tFirst);
        vt__tb_metaf(x->tb, "end_ns", "%lld", (long long)s.tLast);
    }
    if (s.nNoTime && s.aAction[A_ALLOC] + s.aAction[A_SEG_ALLOC] > 0)
        vt__imp_note(x, "%lld events carry no time_us (PyTorch before 2.1): their times are unknown",
                     (long long)s.nNoTime);
    if (!bHistory)
        vt__imp_note(x, "the snapshot holds no allocation history (recorded without "
                        "torch.cuda.memory._record_memory_history): only the state at the dump is known (%zu "
                        "segments, %zu live blocks), with unknown times; no leak or growth can be judged from it",
                     s.nSeg, s.nBlock);
    if (s.nV1History)
        vt__imp_note(x, "PyTorch 2.0 format: blocks carry 'history' (%lld entries); the live allocation of each "
                        "block is imported, earlier entries have no times and are left out",
                     (long long)s.nV1History);
    if (vt__tb_untimed(x->tb))
        vt__imp_note(x, "%lld rows with unknown time could not be stored: this trace schema needs a time on every "
                        "row",
                     (long long)vt__tb_untimed(x->tb));
    vt__tb_metaf(x->tb, "pytorch.snapshot.segments", "%zu", s.nSeg);
    vt__tb_metaf(x->tb, "pytorch.snapshot.live_blocks", "%zu", s.nBlock);
    for (int a = 0; a < N_ACTION; a++) {
        char zKey[64];
        snprintf(zKey, sizeof zKey, "pytorch.snapshot.events.%s", azAction[a]);
        if (s.aAction[a] && vt__tb_metaf(x->tb, zKey, "%lld", (long long)s.aAction[a])) {
            rc = vt__imp_tb_fail(x);
            goto done;
        }
    }
    rc = VT_EXIT_OK;
done:
    vt__pk_free(p);
    vt__src_close(&in);
    for (int i = 0; i < s.nBatch; i++) {
        vt__addrmap_free(&s.aBatch[i].seg);
        vt__addrmap_free(&s.aBatch[i].ten);
        vt__rangeset_free(&s.aBatch[i].mapped);
    }
    free(s.aBatch);
    free(s.aSeg);
    free(s.aBlock);
    free(s.aFrm);
    free(s.aStk);
    free(s.aStkFrm);
    free(s.aRaw);
    free(s.aRunStk);
    free(s.apRaw);
    return rc;
}
