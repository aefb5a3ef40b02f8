/* Internal: a restricted, streaming unpickler that builds plain data only and hands completed children to a callback. */
#ifndef VT_IMPORT_PICKLE_H
#define VT_IMPORT_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "source.h"

/*
 * What it reads: pickles of protocols 2 to 5 made of dicts, lists, tuples,
 * sets (built as lists), strings, bytes, integers, floats, booleans and None.
 * Every opcode that names, imports or calls anything (GLOBAL, STACK_GLOBAL,
 * REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, PERSID, BINPERSID, EXT1/2/4) is
 * refused before anything is built from it: such a pickle is hostile by
 * definition and nothing in it is ever executed. Out-of-band buffers
 * (NEXT_BUFFER) and the text opcodes of protocols 0 and 1 are refused as
 * unsupported.
 *
 * Streaming: the input is read in chunks; each time a child is added to a list
 * or dict (APPEND, APPENDS, SETITEM, SETITEMS, ADDITEMS), the callback sees the
 * container and the child and may claim it: a claimed child is not added, and
 * the reader drops its reference (and its memo entry, so that a later BINGET
 * of it fails with a clear message instead of reading freed memory). Objects
 * referenced from the memo stay alive as long as the memo may need them.
 *
 * Bounds: string and bytes length (VT_PK_STR_MAX, storage grown only as the
 * bytes arrive), memo indices only in the order Python's pickler writes them,
 * so memory grows at most linearly with the input read (with vt__pk_index, by
 * a byte and a bit per memo entry plus what is still to be fetched); nothing
 * recurses on the input's nesting; a truncated or hostile input fails with one
 * message.
 */

#define VT_PK_STR_MAX (1 << 30)

enum vt_pk_type {
    VT_PK_NONE = 0,
    VT_PK_BOOL,
    VT_PK_INT,    /* fits int64 */
    VT_PK_U64,    /* an integer in [2^63, 2^64): u.i holds its 64-bit pattern (addresses) */
    VT_PK_BIGINT, /* an integer outside both: value unknown */
    VT_PK_FLOAT,
    VT_PK_STR,   /* UTF-8 text as the pickle holds it, NUL-terminated (may contain NULs) */
    VT_PK_BYTES, /* bytes and bytearray */
    VT_PK_LIST,  /* list, and sets */
    VT_PK_TUPLE,
    VT_PK_DICT,
    VT_PK_MARK /* internal: never seen by a callback */
};

struct vt_pkobj;

/* A value: scalars inline, the others a counted reference to a heap object. */
struct vt_pkval {
    int type; /* enum vt_pk_type */
    union {
        int64_t i; /* BOOL, INT; U64: the pattern */
        double f;  /* FLOAT */
        struct vt_pkobj *p; /* STR, BYTES, LIST, TUPLE, DICT */
    } u;
};

struct vt_pkobj {
    uint32_t nRef;
    uint32_t type;   /* enum vt_pk_type */
    int64_t iMemo;   /* memo index it was last stored at, -1 if none */
    int64_t tag;     /* free for the callback's own use; 0 at creation */
    uint64_t run;    /* a LIST whose items are one remembered run of memo fetches (pkrun.c), nonzero: two lists
                      * with the same run hold the same objects, in the same order, each immortal; 0 otherwise */
    size_t n;        /* bytes (STR, BYTES), items (LIST, TUPLE) or pairs (DICT) */
    size_t nAlloc;
    union {
        char *z;             /* STR, BYTES: n bytes and a NUL */
        struct vt_pkval *a;  /* LIST, TUPLE: a[0..n); DICT: a[2i] key, a[2i+1] value */
    } u;
};

/* Callback result: keep the child in its container, claim it (the reader drops it), or keep it and
 * every later child of the same container without offering them (a list of frames, of segments). */
#define VT_PK_KEEP 0
#define VT_PK_CLAIM 1
#define VT_PK_KEEP_REST 2

/*
 * Called for each child about to be added to pParent (a LIST or DICT; its
 * n is the index the child would get). pKey is the key for a dict, NULL
 * for a list. Returns VT_PK_KEEP, VT_PK_CLAIM, VT_PK_KEEP_REST, or a negative value to stop
 * reading (vt__pk_run then returns VT_PK_ECALLBACK). A claimed child is freed
 * after the call (unless referenced elsewhere): copy what is needed from it.
 */
typedef int (*vt_pk_child_fn)(void *pArg, struct vt_pkobj *pParent, const struct vt_pkval *pKey,
                              struct vt_pkval *pChild);

/* vt__pk_run results */
enum vt_pk_rc {
    VT_PK_OK = 0,
    VT_PK_ETRUNC = -1,    /* input ended before STOP */
    VT_PK_EHOSTILE = -2,  /* an opcode that names or calls a global */
    VT_PK_ECORRUPT = -3,  /* malformed: bad opcode, stack underflow, bad memo index, too deep ... */
    VT_PK_ENEWER = -4,    /* protocol newer than 5 */
    VT_PK_ENOMEM = -5,
    VT_PK_EIO = -6,       /* the input could not be read */
    VT_PK_ECALLBACK = -7, /* the callback stopped the reader */
    VT_PK_EUNSUPPORTED = -8 /* valid pickle, but outside what is read (protocol 0/1 text, buffers) */
};

struct vt_pk;

/* A reader over in (not owned). xChild may be NULL (keep everything). Returns NULL when out of memory. */
struct vt_pk *vt__pk_new(struct vt__src *in, vt_pk_child_fn xChild, void *pArg);

/* Optional, before vt__pk_run: offer the callback only the children added to lists; a dict's pairs are
 * added without a call (as when the callback answers VT_PK_KEEP_REST for every dict). */
void vt__pk_lists_only(struct vt_pk *p);

/*
 * Optional, before vt__pk_run: a first pass over the same bytes through pre (a second source,
 * read to its end and not kept) that builds the memo-use index: which memo entries a later
 * BINGET fetches, and how often. vt__pk_run then keeps only those entries, and releases each
 * after its last fetch (an entry fetched 255 times or more stays to the end, and so does each of
 * the first 256 entries, fetched or not, uncounted), so that what the memo holds is what is still
 * to be shared, not everything ever memoized: past the first 256 entries, an object no BINGET
 * names lives only as long as its container, and a claimed child is freed at once. Costs a byte
 * per memo entry during the pass, then a bit per entry and a byte per entry fetched later. An
 * input the pass cannot read to its STOP gets no index (the reading run reports the fault, as
 * without one). Returns VT_PK_OK or VT_PK_ENOMEM.
 */
int vt__pk_index(struct vt_pk *p, struct vt__src *pre);

/*
 * Read one pickle up to its STOP. On success returns VT_PK_OK and *pRoot is the
 * top object, valid until vt__pk_free. On failure returns
 * an enum vt_pk_rc value and vt__pk_errmsg says what and at which byte offset.
 */
int vt__pk_run(struct vt_pk *p, struct vt_pkval *pRoot);

/*
 * Make o immortal when the memo keeps it to the end anyway (stored in the memo, and without an index, or
 * fetched 255 times or more, or among the first 256 entries): its references are no longer counted and it
 * is freed by vt__pk_free only, so fetching and releasing it costs nothing (a frame dict shared by every
 * traceback, a key string).
 * Returns 1 when o is immortal, 0 when it is left counted (it would have been freed before the end).
 */
int vt__pk_keep(struct vt_pk *p, struct vt_pkobj *o);

/*
 * Say that the first n items of list o are immortal objects (each one vt__pk_keep said 1 of, or the
 * same objects as such a list's): releasing o then skips them instead of testing each (a traceback's
 * frames). Items added after stay counted as usual. The caller answers for the claim.
 */
void vt__pk_keep_items(struct vt_pkobj *o, size_t n);

/* The last error, one line without a trailing newline ("" when none). */
const char *vt__pk_errmsg(const struct vt_pk *p);

/* Bytes consumed so far. */
int64_t vt__pk_offset(const struct vt_pk *p);

/* Objects alive now (in the memo, on the stack, or held by those): what streaming keeps. */
int64_t vt__pk_live(const struct vt_pk *p);

/* Free the reader and every object it built (the root included). */
void vt__pk_free(struct vt_pk *p);

/* Value helpers: NULL or 0 when v is not of that type. */
const struct vt_pkval *vt__pk_get(const struct vt_pkval *pDict, const char *zKey); /* last match wins */
const char *vt__pk_str(const struct vt_pkval *v);                                 /* STR only */
int vt__pk_int(const struct vt_pkval *v, int64_t *pOut); /* INT or BOOL: 1, else 0 */
/* An integer in [0, 2^64) (INT >= 0, or U64) as its 64-bit pattern: 1, else 0 (an address, stored as
 * SQLite's signed integer holding that pattern: docs/schema.md, "Addresses"). */
int vt__pk_u64(const struct vt_pkval *v, uint64_t *pOut);
int vt__pk_num(const struct vt_pkval *v, double *pOut);  /* INT, BOOL or FLOAT: 1, else 0 */
size_t vt__pk_len(const struct vt_pkval *v);             /* items of a LIST/TUPLE, pairs of a DICT */
const struct vt_pkval *vt__pk_item(const struct vt_pkval *v, size_t i); /* LIST/TUPLE item i */
/* DICT pair i: key and value (returns 0 when out of range). */
int vt__pk_pair(const struct vt_pkval *v, size_t i, const struct vt_pkval **ppKey, const struct vt_pkval **ppVal);

/* ---- the reader's state: for pickle.c and pkindex.c (the memo-use index pass) only ---- */

#define BUF_SIZE (1 << 20)
#define MEMO_EMPTY 100   /* memo slot never written */
#define MEMO_DROPPED 101 /* memo slot whose object a callback claimed */
#define CHUNK 256        /* kept memo values per chunk (with an index) */
#define IMMORTAL UINT32_MAX /* nRef of an object kept to the end: not counted (vt__pk_keep) */
#define HOT 4096         /* memo entries of immortal objects remembered by index (direct-mapped, a power of 2) */
_Static_assert(HOT >= 256, "a BINGET's index (below 256) is its own slot of the hot table");

/* The object as allocated: the public part first, then the reader's links. */
struct pkobj {
    struct vt_pkobj o;
    struct pkobj *pPrev, *pNext, *pFree;
    int bNoOffer; /* the callback said VT_PK_KEEP_REST: later children are added without asking */
    size_t nImmortal; /* a list: its first nImmortal items are immortal (vt__pk_keep_items), not visited at release */
    size_t nKeep; /* a spare object: bytes of the storage it keeps for its next use (u.a), 0 for none */
};

/* A memo entry remembered: its index (UINT64_MAX: none) and the immortal object it holds, as the value a
 * fetch pushes (copied as it is, without reading the object). */
struct pkhot {
    uint64_t idx;
    struct vt_pkval v;
};

struct vt_pk {
    struct vt__src *in;
    vt_pk_child_fn xChild;
    void *pArg;
    int bListsOnly;          /* vt__pk_lists_only: dicts' pairs are not offered */
    uint8_t *aBuf;           /* input buffer: aBuf[iPos..nBuf) unread */
    size_t iPos, nBuf;
    int64_t nBase;           /* input offset of aBuf[0] */
    int bEof;
    struct vt_pkval *aStack; /* value stack */
    size_t nStack, nStackAlloc;
    size_t *aMark;           /* mark stack: positions in aStack */
    size_t nMark, nMarkAlloc;
    struct vt_pkval *aMemo;  /* without an index: every entry; with one: the fetched entries only (dense) */
    size_t nMemo, nMemoAlloc;
    /* the memo-use index (vt__pk_index): for entry i, bit i of aUsed says whether any BINGET fetches it;
     * aRank[w] counts the bits set in aUsed[0..w); aLeft[rank] the fetches still to come (255: kept to the end) */
    int bIndexed;
    uint64_t *aUsed;
    uint32_t *aRank;
    uint8_t *aLeft;
    size_t nIndexed;         /* entries the index covers */
    struct vt_pkval **apChunk; /* with an index: the kept values, CHUNK to a chunk (memo_at) */
    uint16_t *anOpen;        /* per chunk: its entries still to have their last fetch */
    size_t nChunk;
    struct pkhot *aHot;      /* HOT entries: fetches of immortal objects (frames, keys) without the lookup above */
    /* runs of memo fetches remembered (pkrun.c) */
    struct pkruns *pRuns;    /* made at the first run remembered */
    uint64_t epoch;          /* changes when a memo entry already stored changes (a store over it, a claim) */
    int64_t runOff;          /* input offset just past the last run pushed from memory (-1: none) */
    size_t runBase;          /* where its values start on the stack */
    uint64_t runId;          /* its id */
    struct pkobj *pLive;     /* every live object */
    int64_t nLive;
    struct pkobj *apSpare[3]; /* freed objects kept for reuse (lists through pNext), by SPARE_CLASS (pickle.c) of their
                              * type, so a list gets a list's storage back: events come and go */
    int nSpare;               /* in all three */
    size_t nKept;            /* bytes of storage the spare objects keep (pkobj.nKeep) */
    int proto;
    int64_t iOp;             /* offset of the opcode being run */
    char zErr[256];
};

/* With an index: the rank of entry idx (< nIndexed) among the fetched entries, or -1 when nothing fetches it. */
static inline int64_t vt__pk_rank(const uint64_t *aUsed, const uint32_t *aRank, uint64_t idx)
{
    uint64_t w = aUsed[idx >> 6];
    if (!(w >> (idx & 63) & 1)) return -1;
    /* the bits set below idx's, counted in the word (one instruction in run()'s popcount build) */
    w &= (UINT64_C(1) << (idx & 63)) - 1;
    return (int64_t)aRank[idx >> 6] + __builtin_popcountll(w);
}

/* The hot table's entry for memo entry idx (its immortal object's value in v) when it remembers it, else NULL.
 * Entries are remembered at a fetch (pickle.c: hot_put) and forgotten when the memo entry changes (hot_forget):
 * a store to it, a claim of its object, its last fetch. */
static inline const struct pkhot *vt__pk_hot(const struct pkhot *aHot, uint64_t idx)
{
    return aHot[idx & (HOT - 1)].idx == idx ? &aHot[idx & (HOT - 1)] : NULL;
}

/*
 * Runs of memo fetches remembered by their bytes (pkrun.c): MARK, then BINGETs and LONG_BINGETs (a traceback's
 * frames), found by their first RUN_KEY bytes and compared whole. The reading run keeps the values a run
 * pushed; the memo-count pass (pkindex.c) the times a run was met and not counted yet.
 */
#define RUN_KEY 64   /* bytes of a run hashed to find it: a shorter run is not remembered */
#define RUN_MAX 1024 /* fetches of one run remembered, at most (the rest go by the opcode loop) */

struct pkrun {
    uint64_t aKey[RUN_KEY / 8]; /* its first RUN_KEY bytes */
    uint64_t tail;      /* its last 8 */
    size_t nByte, n;    /* its bytes, its fetches */
    uint64_t id;        /* given in order from 1 */
    uint64_t nMore;     /* the memo-count pass: times met since it was counted */
    uint32_t next;      /* the next run in its bucket, + 1 (0: none) */
    uint8_t *z;         /* its nByte bytes */
    struct vt_pkval *a; /* the reading run: the n values it pushes; NULL otherwise */
};
struct pkruns;

/* A new, empty memory of runs, or NULL when out of memory; vt__pk_runs_free frees it (NULL: nothing). */
struct pkruns *vt__pk_runs_new(void);
void vt__pk_runs_free(struct pkruns *r);

/* Whether z (RUN_KEY bytes readable) may begin a run: four fetches (an event dict's keys, three, are not one). */
static inline int vt__pk_runs_maybe(const uint8_t *z)
{
    size_t i = 0;
    for (int k = 0; k < 4; k++) {
        if (z[i] == 'h') i += 2;
        else if (z[i] == 'j') i += 5;
        else return 0;
    }
    return 1;
}

/* The run remembered whose bytes z holds (nAvail > RUN_KEY readable) with no further fetch after them (or with
 * RUN_MAX fetches), of at most nRoom fetches; NULL when none. *pBucket: z's bucket, for vt__pk_runs_put. */
struct pkrun *vt__pk_runs_find(struct pkruns *r, const uint8_t *z, size_t nAvail, size_t nRoom, size_t *pBucket);

/* The bytes of the run at z (whole fetches among the nAvail bytes, at most RUN_MAX and nRoom of them; their count
 * in *pn), or 0 when it is not one to remember: shorter than RUN_KEY, or cut by the buffer's end or nRoom. */
size_t vt__pk_runs_extent(const uint8_t *z, size_t nAvail, size_t nRoom, size_t *pn);

/* Remember run z[0..nByte) of n fetches (and the n values a, unless NULL), first in bucket k. Returns it, or NULL
 * when it is not remembered (out of memory, or past the bounds: 16,384 runs, 8 in a bucket, 4 MiB). */
struct pkrun *vt__pk_runs_put(struct pkruns *r, size_t k, const uint8_t *z, size_t nByte, const struct vt_pkval *a,
                              size_t n);

/* The runs remembered: how many, and the i-th (in the order remembered). */
uint32_t vt__pk_runs_count(const struct pkruns *r);
struct pkrun *vt__pk_runs_at(struct pkruns *r, uint32_t i);

/*
 * At a MARK followed by a memo fetch: when the fetches that follow are bytes met before, each naming an entry
 * that held an immortal object kept to the end, push the values they pushed then, by one copy, and move past
 * them; the first time, push them as the fetches would and remember them. Returns 1 when it pushed a run, 0
 * when it did nothing (the opcode loop runs the fetches).
 */
int vt__pk_run_cached(struct vt_pk *p);

/* Record an error (the first one wins) with the offset of the opcode being run; returns rc. */
int vt__pk_fail(struct vt_pk *p, int rc, const char *zFmt, ...) __attribute__((format(printf, 3, 4)));

/* vt__pk_need's slow path: move the unread bytes down and read more. Returns 0, VT_PK_ETRUNC or VT_PK_EIO. */
int vt__pk_refill(struct vt_pk *p, size_t n);

/* Copy the next n bytes of input (any n) into dst, or pass over them when dst is NULL. Returns 0 or an error. */
int vt__pk_take(struct vt_pk *p, char *dst, uint64_t n);

/* Make at least n bytes available at aBuf[iPos] (n <= BUF_SIZE). Returns 0, VT_PK_ETRUNC or VT_PK_EIO. */
static inline int vt__pk_need(struct vt_pk *p, size_t n)
{
    return p->nBuf - p->iPos >= n ? 0 : vt__pk_refill(p, n);
}

/* The n-byte little-endian unsigned integer at b. */
static inline uint64_t vt__pk_le(const uint8_t *b, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

/* The 4-byte little-endian unsigned integer at b (one load where the compiler sees it). */
static inline uint64_t vt__pk_le4(const uint8_t *b)
{
    return (uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 | (uint64_t)b[3] << 24;
}

/* The 8-byte little-endian unsigned integer at b (one load where the compiler sees it: vt__pk_le's loop is
 * eight loads and shifts). */
static inline uint64_t vt__pk_le8(const uint8_t *b)
{
    return (uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 | (uint64_t)b[3] << 24 |
           (uint64_t)b[4] << 32 | (uint64_t)b[5] << 40 | (uint64_t)b[6] << 48 | (uint64_t)b[7] << 56;
}

/* The integer held in the n (1 to 8) little-endian two's-complement bytes at q, with 8 bytes readable there:
 * eight bytes loaded, those past the n masked off, the sign extended (LONG1). */
static inline int64_t vt__pk_long_le8(const uint8_t *q, uint64_t n)
{
    uint64_t u = vt__pk_le8(q);
    if (n < 8) {
        u &= ((uint64_t)1 << (8 * n)) - 1;
        if (q[n - 1] & 0x80) u |= ~(uint64_t)0 << (8 * n);
    }
    return (int64_t)u;
}

#endif
