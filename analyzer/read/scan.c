/* The scan: one pass over each large event table in rowid order, judging every row and collecting what readers need. */
#include "read.h"

#include <stdlib.h>
#include <string.h>

#include "rowcheck.h"
#include "util/text.h"
#include "vramtrace/schema.h"
#include "vramtrace/sqlints.h"

/*
 * Each large table is read once, by an SQL function called per row of a table scan
 * (no row is output): the guard's check of every value (rowcheck.h, the same bounds as
 * guard.c's SQL), the rows kept and those with unknown times, their time bounds, how far
 * the rows the readers take lie from time order (the reorder window of rows.c), the
 * figures of info and the analysis (allocations by kind, copies by kind, segment sizes,
 * whether uses and addresses exist), and for kernels the feed to a consumer in start
 * order. A value only SQL compares exactly (a real number) makes the table "irregular":
 * SQL then counts and sums it instead.
 */

/* The time columns and the extra columns of each large table (enum vt_tbl order). */
static const struct {
    const char *zTable;
    int nTime;           /* 1: an instant (ts), 2: an interval (start, end) */
    const char *zExtra;  /* columns after the guarded ones */
    int nExtra;
} aLarge[VT_T_N] = {
    {"memory_event", 1, "op, mem_kind", 2},
    {"tensor_event", 1, "op", 1},
    {"buffer_use", 1, "kind", 1},
    {"memcpy", 2, "copy_kind, src_kind, dst_kind, src, dst", 5},
    {"memset", 2, "dst", 1},
    {"kernel", 2, "args_scanned", 1}, /* "NULL" where the trace has no such column (unscanned_column) */
};


#define MAX_GUARD 8 /* guarded columns of one large table besides its times */

/* The columns the replay takes of the rows kept (VT_READ_KEEP), by table: its SELECTs (replay.c), the
 * time first (the scan passes the others to vt_scan_row), and how many. */
static const char *const azKeep[VT_T_N] = {VT_MEMROW_COLS, VT_TENSORROW_COLS, "ts, address", NULL, NULL, NULL};
static const int anKeep[VT_T_N] = {VT_MEMROW_NCOL, VT_TENSORROW_NCOL, 2, 0, 0, 0};
_Static_assert(VT_MEMROW_NCOL <= VT_ROW_MAXCOL && VT_TENSORROW_NCOL <= VT_ROW_MAXCOL &&
                   sizeof ((struct vt_kept *)0)->aLast >= VT_ROW_MAXCOL * sizeof(int64_t),
               "a kept row fits a reader's row");

/* Bytes of kept rows beyond which a table's rows are not kept (the replay reads it): 32 M rows of uses. */
#define KEEP_MAX ((size_t)256 << 20)
/* ... and beyond which no trace of the process keeps more (read.h): two tables at their bound. */
atomic_size_t vt__kept_held;
size_t vt__kept_budget = 2 * KEEP_MAX;

/* What the pass over one table found: the state of vt_scan_row. */
struct scan {
    int k;                  /* VT_T_* */
    struct vt_tracefile *f;
    struct vt_tblfacts *t;  /* f->aT[k] */
    int bStored;            /* the time arguments are the stored t (and dur): computed here */
    int64_t base;
    int nGuard;             /* guarded arguments after the times */
    int iBytes;             /* the guarded argument "bytes", -1 none */
    unsigned char aDom[MAX_GUARD];
    const char *azGuard[MAX_GUARD];
    int64_t aReject[MAX_GUARD + 1]; /* rows rejected by each guarded argument; the last: by their times */
    int bIrregular;         /* a value only SQL can judge exactly: SQL decides instead */
    struct vt_kept *pKeep;  /* the rows the replay takes, kept here (NULL: not kept) */
    int aKeepArg[VT_ROW_MAXCOL]; /* the argument holding each of their columns after the time */
    int nArg;               /* arguments of vt_scan_row */
    int iFold;              /* memory_event: the arguments call_dt, call_dur, call_sig from here (f->fold), 0 none */
    /* order (see order_row) */
    int w;                  /* reorder window so far, -1 beyond VT_REORDER_CAP */
    int64_t nRow;           /* rows checked for order so far */
    struct pt { int64_t i, ts; } *aPt; /* ring: the rows that raised the running maximum time, last ones */
    int64_t nPush, maxTs;   /* entries ever put in the ring (the newest is the running maximum) */
    int64_t tsDropped;      /* time of the last entry dropped from the full ring (INT64_MIN: none) */
    int64_t iFar;           /* the newest entry lying more than w rows back, as of the last row out of order */
    /* kernels fed to a consumer in (start, rowid) order */
    struct vt_kernel_feed *pFeed;
    int rcFeed;
    struct kent { int64_t start, end; } *aKer; /* kernels held, in (start, rowid) order */
    int64_t iKer, nKer, nKerAlloc; /* the first held, how many, room */
    int64_t lastKer;        /* start of the last kernel fed (INT64_MIN: none yet) */
    int bKerLost;           /* a kernel sorts before one fed already: the consumer reads them itself */
};

#define RING VT_REORDER_CAP /* ring entries (a power of two) */

static void order_late(struct scan *s, int64_t i, int64_t ts);

/*
 * Note the time ts of the next row the readers take, in rowid order: s->w becomes the
 * largest distance from a row back to the first (oldest) earlier row with a later time
 * (time and rowid key: an earlier row with the same time sorts before it). No row has
 * more rows before it that sort after it than that distance, so a heap of w + 1 rows
 * restores the order. The first such row is the first that raised the running maximum
 * above ts: the ring holds those rows (times increasing), the last RING of them (1 MiB);
 * a row older than one dropped from it lies more than VT_REORDER_CAP rows back. w grows
 * only when the newest ring entry lying more than w rows back (s->iFar, a cursor moving
 * forward with the rows) has a later time: only then is the ring searched.
 */
static inline void order_row(struct scan *s, int64_t ts)
{
    int64_t i = s->nRow++;
    if (ts > s->maxTs) { /* a new maximum: the common case */
        struct pt *p = &s->aPt[s->nPush & (RING - 1)];
        if (s->nPush++ >= RING) s->tsDropped = p->ts;
        p->i = i;
        p->ts = s->maxTs = ts;
        return;
    }
    if (ts == s->maxTs || s->w < 0) return; /* equal to the maximum: nothing before it sorts after it */
    order_late(s, i, ts);
}

/* order_row for row i (time ts) below the running maximum. */
static void order_late(struct scan *s, int64_t i, int64_t ts)
{
    int64_t lo, hi;
    struct pt *p;
    if (ts < s->tsDropped) { /* the first later row was dropped: over RING rows back */
        s->w = -1;
        return;
    }
    lo = s->nPush < RING ? 0 : s->nPush - RING; /* the oldest entry in the ring */
    if (s->iFar < lo - 1) s->iFar = lo - 1;     /* dropped: no entry in the ring lies that far back */
    while (s->iFar + 1 < s->nPush && i - s->aPt[(s->iFar + 1) & (RING - 1)].i > s->w) s->iFar++;
    if (s->iFar < lo || s->aPt[s->iFar & (RING - 1)].ts <= ts) return; /* the first later row is within w */
    for (hi = s->iFar; lo < hi;) { /* the first entry with a time over ts (iFar has one) */
        int64_t mid = lo + (hi - lo) / 2;
        if (s->aPt[mid & (RING - 1)].ts > ts) hi = mid;
        else lo = mid + 1;
    }
    p = &s->aPt[lo & (RING - 1)];
    if (i - p->i > VT_REORDER_CAP) {
        s->w = -1;
    } else {
        s->w = (int)(i - p->i);
        s->iFar = lo - 1; /* the entries before it lie more than the new w back */
    }
}

/* Kernels held back from the consumer beyond twice the window found so far. */
#define KER_HOLD 1024

/* Feed the first held kernel to the consumer (errors in s->rcFeed). */
static void ker_feed(struct scan *s)
{
    const struct kent *e = &s->aKer[s->iKer++];
    s->nKer--;
    s->lastKer = e->start;
    if (s->rcFeed == SQLITE_OK) s->rcFeed = s->pFeed->xKernel(s->pFeed->pArg, e->start, e->end);
}

static void ker_hold(struct scan *s, int64_t start, int64_t end);

/*
 * Take the next kernel in rowid order for the transfer pass, which needs them in (start,
 * rowid) order: held, in that order, until more than KER_HOLD + 2w kernels (w: the window
 * found so far) are held, then fed. Rows stored in start order pass straight through the
 * hold; a kernel that sorts before one already fed (it lies further back than the hold
 * reached) gives the feeding up (s->bKerLost): vt__transfers reads the kernels again.
 * Errors in s->rcFeed.
 */
static inline void ker_take(struct scan *s, int64_t start, int64_t end)
{
    int64_t n = s->iKer + s->nKer;
    if (n < s->nKerAlloc && s->w >= 0 && !s->bKerLost && start >= s->lastKer &&
        (s->nKer == 0 || s->aKer[n - 1].start <= start)) {
        /* in order, room at the end: the common case (the hold only grows: one kernel out at most) */
        s->aKer[n].start = start;
        s->aKer[n].end = end;
        if (++s->nKer > KER_HOLD + 2 * (int64_t)s->w) ker_feed(s);
        return;
    }
    ker_hold(s, start, end);
}

/* ker_take for a kernel out of order or without room at the end. */
static void ker_hold(struct scan *s, int64_t start, int64_t end)
{
    int64_t lo, hi;
    if (s->bKerLost || s->rcFeed != SQLITE_OK) return;
    if (s->w < 0 || start < s->lastKer) {
        s->bKerLost = 1;
        return;
    }
    if (s->iKer + s->nKer == s->nKerAlloc) { /* no room at the end: move to the front, or grow */
        if (s->iKer > 0 && s->iKer >= s->nKerAlloc / 2) {
            memmove(s->aKer, s->aKer + s->iKer, sizeof *s->aKer * (size_t)s->nKer);
            s->iKer = 0;
        } else {
            int64_t nNew = s->nKerAlloc ? 2 * s->nKerAlloc : 2 * KER_HOLD;
            struct kent *aNew = realloc(s->aKer, sizeof *aNew * (size_t)nNew);
            if (!aNew) {
                s->rcFeed = SQLITE_NOMEM;
                return;
            }
            s->aKer = aNew;
            s->nKerAlloc = nNew;
        }
    }
    lo = hi = s->iKer + s->nKer; /* in order: at the end */
    if (s->nKer > 0 && s->aKer[hi - 1].start > start) { /* out of order: after the held ones with start <= it */
        lo = s->iKer;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (s->aKer[mid].start > start) hi = mid;
            else lo = mid + 1;
        }
        memmove(s->aKer + lo + 1, s->aKer + lo, sizeof *s->aKer * (size_t)(s->iKer + s->nKer - lo));
    }
    s->aKer[lo].start = start;
    s->aKer[lo].end = end;
    s->nKer++;
    while (s->nKer > KER_HOLD + 2 * (int64_t)s->w) ker_feed(s);
}


/* The slot of kind k in a VT_KIND_SLOTS table: itself, or the last slot for any other. */
static int kind_slot(int64_t k)
{
    return k >= 0 && k < VT_KIND_SLOTS - 1 ? (int)k : VT_KIND_SLOTS - 1;
}

/* Extra argument i (after the times and the guarded columns). */
static sqlite3_value *extra(const struct scan *s, sqlite3_value **argv, int i)
{
    return argv[aLarge[s->k].nTime + s->nGuard + i];
}

/* Integer extra argument i, or -1 marking the pass irregular (any other type). */
static int64_t extra_int(struct scan *s, sqlite3_value **argv, int i)
{
    sqlite3_value *v = extra(s, argv, i);
    if (sqlite3_value_type(v) == SQLITE_INTEGER) return sqlite3_value_int64(v);
    s->bIrregular = 1;
    return -1;
}

/* The guarded column "bytes" as an integer (it passed its domain: an integer, or NULL read as 0). */
static int64_t row_bytes(const struct scan *s, sqlite3_value **argv)
{
    return s->iBytes >= 0 ? sqlite3_value_int64(argv[aLarge[s->k].nTime + s->iBytes]) : 0;
}

/* Append unsigned v to chunk x as a varint (7 bits a byte, low first): room for 10 bytes made. */
static inline void keep_varint(struct vt_keptchunk *x, uint64_t v)
{
    while (v >= 0x80) {
        x->a[x->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    x->a[x->n++] = (unsigned char)v;
}

/* A new chunk for p's kept rows, counted in vt__kept_held; NULL past the table's bound (KEEP_MAX), the
 * process's (vt__kept_budget) or out of memory. */
static struct vt_keptchunk *kept_chunk(const struct vt_kept *p)
{
    struct vt_keptchunk *x = NULL;
    if (p->nBytes + VT_KEEP_CHUNK > KEEP_MAX) return NULL;
    if (atomic_fetch_add(&vt__kept_held, VT_KEEP_CHUNK) + VT_KEEP_CHUNK <= vt__kept_budget)
        x = malloc(sizeof *x + VT_KEEP_CHUNK);
    if (!x) atomic_fetch_sub(&vt__kept_held, VT_KEEP_CHUNK);
    return x;
}

/*
 * Keep a row the replay takes (vt_kept): its time ts, then the other columns of the replay's SELECT
 * from their arguments, as it reads them (sqlite3_column_int64: NULL reads 0). Out of room (kept_chunk)
 * or memory, nothing of the table is kept any more: the replay reads it.
 */
static void keep_row(struct scan *s, int64_t ts, sqlite3_value **argv)
{
    struct vt_kept *p = s->pKeep;
    struct vt_keptchunk *x = p->pLast;
    uint64_t mNull = 0;
    int64_t av[VT_ROW_MAXCOL];
    if (!x || x->n + 10 * ((size_t)p->nCol + 1) > VT_KEEP_CHUNK) { /* no room for the longest row: a chunk more */
        x = kept_chunk(p);
        if (!x) {
            vt__kept_drop(p);
            s->pKeep = NULL;
            return;
        }
        x->pNext = NULL;
        x->n = 0;
        if (p->pLast) p->pLast->pNext = x;
        else p->pFirst = x;
        p->pLast = x;
        p->nBytes += VT_KEEP_CHUNK;
    }
    av[0] = ts;
    for (int i = 1; i < p->nCol; i++) { /* NULL reads as 0: only a 0 may be NULL */
        av[i] = sqlite3_value_int64(argv[s->aKeepArg[i]]);
        if (av[i] == 0 && sqlite3_value_type(argv[s->aKeepArg[i]]) == SQLITE_NULL) mNull |= (uint64_t)1 << i;
    }
    keep_varint(x, mNull);
    for (int i = 0; i < p->nCol; i++) {
        uint64_t d = (uint64_t)av[i] - (uint64_t)p->aLast[i];
        if (mNull >> i & 1) continue;
        p->aLast[i] = av[i];
        keep_varint(x, d << 1 ^ (uint64_t)-(int64_t)(d >> 63)); /* zigzag: small either way */
    }
    p->nRow++;
}

/*
 * The figures of one kept row of table k (times already judged; bKnown: start known and after 0).
 * Returns whether the replay takes such a row (buffer_use: kernel-argument uses only), 1 or 0.
 */
static int row_figures(struct scan *s, sqlite3_value **argv, int64_t start, int64_t end, int bKnown)
{
    struct vt_tracefile *f = s->f;
    int64_t op, kind, bytes;
    switch (s->k) {
    case VT_T_MEM:
        op = extra_int(s, argv, 0);
        kind = extra_int(s, argv, 1);
        bytes = row_bytes(s, argv);
        f->aMemOp[op >= 0 && op < 16 ? op : 0]++;
        if (op == VT_MEMOP_ALLOC) {
            struct vt_kindcount *c = &f->aAllocKind[kind_slot(kind)];
            c->n++;
            c->bytes += bytes;
            f->allocBytes += bytes;
        }
        /* caching-allocator segments: 2 MiB small-pool segments, and large ones (20 MiB for requests up
         * to 10 MiB, larger requests rounded to 2 MiB) */
        if ((op == VT_MEMOP_ALLOC || op == VT_MEMOP_VMM_MAP) && (kind == VT_MEMKIND_UNKNOWN || kind == VT_MEMKIND_DEVICE)) {
            f->nDevAlloc++;
            f->nSegmentLike += bytes == 2097152 || (bytes >= 10485760 && bytes % 2097152 == 0);
        }
        break;
    case VT_T_USE:
        if (extra_int(s, argv, 0) != VT_USE_KERNEL_ARG) return 0; /* readers take kernel uses only */
        s->t->bAny = 1;
        break;
    case VT_T_COPY: {
        int64_t ck = extra_int(s, argv, 0), sk = extra_int(s, argv, 1), dk = extra_int(s, argv, 2);
        struct vt_kindcount *c = &f->aCopyKind[kind_slot(ck)];
        c->n++;
        c->bytes += row_bytes(s, argv);
        c->pageable += sk == VT_MEMKIND_PAGEABLE || dk == VT_MEMKIND_PAGEABLE;
        s->t->bAny |= sqlite3_value_type(extra(s, argv, 3)) != SQLITE_NULL ||
                      sqlite3_value_type(extra(s, argv, 4)) != SQLITE_NULL;
        break;
    }
    case VT_T_SET: s->t->bAny |= sqlite3_value_type(extra(s, argv, 0)) != SQLITE_NULL; break;
    case VT_T_KER:
        if (sqlite3_value_type(extra(s, argv, 0)) == SQLITE_INTEGER && sqlite3_value_int64(extra(s, argv, 0)) == 0)
            s->t->bAny = 1; /* a launch whose arguments were not scanned */
        if (bKnown && s->pFeed) ker_take(s, start, end);
        break;
    default: break;
    }
    if (bKnown) order_row(s, start);
    return 1;
}

/*
 * SQL function vt_scan_row(time columns, guarded columns, extras) (aLarge), called once per
 * row of a table scan in rowid order (scan_table). Returns NULL: no row is output.
 */
static void scan_row(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct scan *s = sqlite3_user_data(ctx);
    struct vt_tblfacts *t = s->t;
    int nTime = aLarge[s->k].nTime, aKnown[2] = {0, 0}, ok, bKnown;
    int64_t aTime[2] = {0, 0}, end;
    (void)argc;
    if (s->bIrregular) return;
    /* before the guard: the view of calls reads every row of memory_event that holds a call (call_sig) */
    if (s->iFold && sqlite3_value_type(argv[s->iFold + 2]) != SQLITE_NULL)
        vt__guard_fold_row(&s->f->fold, argv[0], argv[s->iFold], argv[s->iFold + 1], argv[s->iFold + 2],
                           extra(s, argv, 0), argv[nTime + s->iBytes]);
    if (s->bStored) {
        ok = vt__stored_times(argv, nTime, s->base, aTime, aKnown);
    } else {
        ok = 1;
        for (int i = 0; ok > 0 && i < nTime; i++) {
            ok = vt__dom_value(argv[i], VT_DOM_TIME);
            aKnown[i] = sqlite3_value_type(argv[i]) == SQLITE_INTEGER;
            aTime[i] = aKnown[i] ? sqlite3_value_int64(argv[i]) : 0;
        }
    }
    if (ok == 0) s->aReject[MAX_GUARD]++;
    for (int i = 0; ok > 0 && i < s->nGuard; i++)
        if ((ok = vt__dom_value(argv[nTime + i], s->aDom[i])) == 0) s->aReject[i]++;
    if (ok < 0) {
        s->bIrregular = 1;
        return;
    }
    if (!ok) {
        t->nHidden++;
        return;
    }
    t->nRow++;
    /* 0 is an unknown time too (schema 1 and 2 stored it); an end before its start is unknown */
    bKnown = aKnown[0] && aTime[0] > 0;
    end = nTime > 1 && aKnown[1] && aTime[1] >= aTime[0] ? aTime[1] : aTime[0];
    if (!bKnown) {
        t->nNoTime++;
    } else {
        if (t->t0 < 0 || aTime[0] < t->t0) t->t0 = aTime[0];
        if (end > t->t1) t->t1 = end;
    }
    if (row_figures(s, argv, aTime[0], end, bKnown) && bKnown && s->pKeep) keep_row(s, aTime[0], argv);
}

/* Reset the figures of table k in f (before the pass, and before SQL redoes them). */
static void figures_reset(struct vt_tracefile *f, int k)
{
    struct vt_tblfacts *t = &f->aT[k];
    int bPresent = t->bPresent;
    char *zGuard = t->zGuard;
    memset(t, 0, sizeof *t);
    t->bPresent = bPresent;
    t->zGuard = zGuard;
    t->t0 = t->t1 = -1;
    if (k == VT_T_MEM) {
        memset(f->aMemOp, 0, sizeof f->aMemOp);
        memset(f->aAllocKind, 0, sizeof f->aAllocKind);
        f->allocBytes = f->nDevAlloc = f->nSegmentLike = 0;
    } else if (k == VT_T_COPY) {
        memset(f->aCopyKind, 0, sizeof f->aCopyKind);
    }
}

/* Each row of zSql (group, count, bytes[, pageable]) added into a[kind_slot(group)]. An SQLite code. */
static int query_kinds(sqlite3 *db, const char *zSql, struct vt_kindcount *a, int64_t *aOp)
{
    sqlite3_stmt *p = NULL;
    int rc = sqlite3_prepare_v2(db, zSql, -1, &p, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        int64_t k = sqlite3_column_int64(p, 0);
        rc = SQLITE_OK;
        if (aOp) {
            aOp[k >= 0 && k < 16 ? k : 0] += sqlite3_column_int64(p, 1);
            continue;
        }
        a[kind_slot(k)].n += sqlite3_column_int64(p, 1);
        a[kind_slot(k)].bytes += sqlite3_column_int64(p, 2);
        if (sqlite3_column_count(p) > 3) a[kind_slot(k)].pageable += sqlite3_column_int64(p, 3);
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(p);
    return rc;
}

/*
 * The kernel table's args_scanned as the scan reads it: the column, or "NULL" in a trace without it
 * (older than schema 3, where a kernel's arguments were never said to be scanned). *pz receives
 * it; an SQLite code.
 */
static int unscanned_column(const struct vt_tracefile *f, const char **pz)
{
    int64_t n = 0;
    int rc = f->version >= 3 ? vt__sql_ints(f->db,
                                          "SELECT count(*) FROM pragma_table_xinfo('kernel', 'main')"
                                          " WHERE name = 'args_scanned'",
                                          &n, 1, -1)
                             : SQLITE_OK;
    *pz = n > 0 ? aLarge[VT_T_KER].zExtra : "NULL";
    return rc;
}

/*
 * The facts of table k by SQL through the guard's view (a table the pass could not judge):
 * the same figures, with rows read through an ORDER BY (w = -1). An SQLite code.
 */
static int scan_sql(struct vt_tracefile *f, int k)
{
    const char *zT = aLarge[k].zTable, *zStart = aLarge[k].nTime == 1 ? "ts" : "start";
    const char *zEnd = aLarge[k].nTime == 1 ? "ts" : "CASE WHEN \"end\" >= start THEN \"end\" ELSE start END";
    struct vt_tblfacts *t = &f->aT[k];
    int64_t a[4];
    char *zSql;
    int rc;
    int64_t nHidden = t->nHidden;
    figures_reset(f, k);
    t->nHidden = nHidden;
    t->w = -1;
    zSql = vt__strdupf("SELECT count(*), sum(NOT coalesce(%s > 0, 0)), min(CASE WHEN %s > 0 THEN %s END),"
                       " max(CASE WHEN %s > 0 THEN %s END) FROM \"%s\"",
                       zStart, zStart, zStart, zStart, zEnd, zT);
    rc = vt__sql_ints(f->db, zSql, a, 4, -1);
    free(zSql);
    t->nRow = a[0];
    t->nNoTime = a[1] > 0 ? a[1] : 0;
    t->t0 = a[2];
    t->t1 = a[3];
    if (rc == SQLITE_OK && k == VT_T_MEM) {
        rc = query_kinds(f->db, "SELECT op, count(*) FROM memory_event GROUP BY op", NULL, f->aMemOp);
        if (rc == SQLITE_OK)
            rc = query_kinds(f->db,
                             "SELECT mem_kind, count(*), total(bytes) FROM memory_event WHERE op = 1 GROUP BY mem_kind",
                             f->aAllocKind, NULL);
        for (int i = 0; i < VT_KIND_SLOTS; i++) f->allocBytes += f->aAllocKind[i].bytes;
        if (rc == SQLITE_OK)
            rc = vt__sql_ints(f->db,
                            "SELECT count(*), total(bytes = 2097152 OR (bytes >= 10485760 AND bytes % 2097152 = 0))"
                            " FROM memory_event WHERE op IN (1, 5) AND mem_kind IN (0, 3)",
                            a, 2, -1);
        f->nDevAlloc = a[0] > 0 ? a[0] : 0;
        f->nSegmentLike = a[1] > 0 ? a[1] : 0;
    } else if (rc == SQLITE_OK && k == VT_T_COPY) {
        rc = query_kinds(f->db,
                         "SELECT copy_kind, count(*), total(bytes), total(src_kind = 1 OR dst_kind = 1) FROM memcpy"
                         " GROUP BY copy_kind",
                         f->aCopyKind, NULL);
    }
    if (rc == SQLITE_OK && k == VT_T_KER) {
        const char *zCol;
        rc = unscanned_column(f, &zCol);
        if (rc == SQLITE_OK && strcmp(zCol, "NULL") != 0)
            rc = vt__sql_ints(f->db, "SELECT EXISTS(SELECT 1 FROM kernel WHERE args_scanned = 0)", a, 1, -1);
        else a[0] = 0;
        t->bAny = a[0] > 0;
    }
    /* existence only: EXISTS stops at the first row */
    if (rc == SQLITE_OK && (k == VT_T_USE || k == VT_T_COPY || k == VT_T_SET)) {
        rc = vt__sql_ints(f->db,
                        k == VT_T_USE ? "SELECT EXISTS(SELECT 1 FROM buffer_use WHERE kind = 0)"
                        : k == VT_T_COPY ? "SELECT EXISTS(SELECT 1 FROM memcpy WHERE src IS NOT NULL OR dst IS NOT NULL)"
                                         : "SELECT EXISTS(SELECT 1 FROM memset WHERE dst IS NOT NULL)",
                        a, 1, -1);
        t->bAny = a[0] > 0;
    }
    return rc;
}

/* The guarded non-time columns of table k that it has, into s (from VT_DOMAIN_LIST). An SQLite code. */
static int guard_columns(sqlite3 *db, int k, struct scan *s)
{
    struct vt_columns cols;
    int rc = vt__columns_read(db, aLarge[k].zTable, &cols);
    s->nGuard = 0;
    s->iBytes = -1;
#define VT__DOM_ARG(zTab, zCol, DOM)                                                                  \
    if (rc == SQLITE_OK && !strcmp(zTab, aLarge[k].zTable) && strcmp(zCol, "ts") && strcmp(zCol, "start") && \
        strcmp(zCol, "end") && s->nGuard < MAX_GUARD && vt__columns_has(&cols, zCol)) {                \
        if (!strcmp(zCol, "bytes")) s->iBytes = s->nGuard;                                            \
        s->azGuard[s->nGuard] = zCol;                                                                 \
        s->aDom[s->nGuard++] = VT_DOM_##DOM;                                                          \
    }
    VT_DOMAIN_LIST(VT__DOM_ARG)
#undef VT__DOM_ARG
    vt__columns_free(&cols);
    return rc;
}

/*
 * The anchors of a compacted table's blocks (schema 5: <name>_block), sorted by block id, so
 * that the pass over its rows reads <name>_row itself instead of the view, whose join looks
 * the block up with a B-tree search per row (a third of the scan of the kernel table).
 */
struct anchors {
    int64_t *aId, *aT;
    int64_t n, iLast; /* the block found last: rows come in id order */
};

/* Load the anchors of zTable (a compacted table) into a. An SQLite code. */
static int anchors_load(sqlite3 *db, const char *zTable, struct anchors *a)
{
    sqlite3_stmt *p = NULL;
    char *zSql = vt__strdupf("SELECT id, t FROM main.\"%s_block\" ORDER BY id", zTable);
    int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &p, NULL) : SQLITE_NOMEM;
    int64_t nAlloc = 0;
    memset(a, 0, sizeof *a);
    while (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        if (sqlite3_column_type(p, 1) != SQLITE_INTEGER) continue; /* the view reads NULL + dt: a NULL time */
        if (a->n == nAlloc) {
            int64_t *aId, *aT;
            nAlloc = nAlloc ? 2 * nAlloc : 1024;
            aId = realloc(a->aId, sizeof *aId * (size_t)nAlloc);
            if (aId) a->aId = aId;
            aT = realloc(a->aT, sizeof *aT * (size_t)nAlloc);
            if (aT) a->aT = aT;
            if (!aId || !aT) rc = SQLITE_NOMEM;
            if (rc != SQLITE_OK) break;
        }
        a->aId[a->n] = sqlite3_column_int64(p, 0);
        a->aT[a->n++] = sqlite3_column_int64(p, 1);
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(p);
    free(zSql);
    return rc;
}

/*
 * SQL function vt_block_t(id, dt): the row's t exactly as the compacted table's view gives it
 * (vt__compact_view_sql): its block's t plus dt when dt is an integer (a sum beyond int64 is a
 * real number, as SQLite makes it), NULL when the block is missing, dt itself otherwise.
 */
static void block_t(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct anchors *a = sqlite3_user_data(ctx);
    int64_t blk, dt, t;
    (void)argc;
    if (sqlite3_value_type(argv[1]) != SQLITE_INTEGER) {
        sqlite3_result_value(ctx, argv[1]);
        return;
    }
    blk = sqlite3_value_int64(argv[0]) >> VT_BLOCK_SHIFT;
    dt = sqlite3_value_int64(argv[1]);
    if (a->iLast >= a->n || a->aId[a->iLast] != blk) { /* not the block before: search */
        int64_t lo = 0, hi = a->n;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (a->aId[mid] < blk) lo = mid + 1;
            else hi = mid;
        }
        if (lo >= a->n || a->aId[lo] != blk) {
            sqlite3_result_null(ctx);
            return;
        }
        a->iLast = lo;
    }
    if (__builtin_add_overflow(a->aT[a->iLast], dt, &t)) sqlite3_result_double(ctx, (double)a->aT[a->iLast] + (double)dt);
    else sqlite3_result_int64(ctx, t);
}

/*
 * Where vt_scan_row finds each column of zKeep (the replay's SELECT) after the time: a guarded or extra
 * argument of the same name (zExtra the extras), else one appended to zArgs (n bytes of nArgs used) here.
 * A column the table lacks (cols) keeps nothing (s->pKeep NULL): the replay's own SELECT says so.
 * Returns the bytes of zArgs used (nArgs or more: out of room).
 */
static size_t keep_args(struct scan *s, const char *zKeep, const char *zExtra, const struct vt_columns *cols, char *zArgs,
                        size_t n, size_t nArgs)
{
    int iCol = 0;
    for (const char *p = zKeep; *p && n < nArgs; iCol++) {
        size_t nName = strcspn(p, ","), nE;
        int iArg = -1, iE = 0;
        for (int i = 0; iCol > 0 && i < s->nGuard && iArg < 0; i++)
            if (strlen(s->azGuard[i]) == nName && !strncmp(s->azGuard[i], p, nName)) iArg = aLarge[s->k].nTime + i;
        for (const char *e = zExtra; iCol > 0 && *e && iArg < 0; e += nE + (e[nE] == ','), iE++) {
            e += strspn(e, " ");
            nE = strcspn(e, ",");
            if (nE == nName && !strncmp(e, p, nName)) iArg = aLarge[s->k].nTime + s->nGuard + iE;
        }
        if (iCol > 0 && iArg < 0) { /* not an argument yet: a column (or a number) */
            char zName[32];
            snprintf(zName, sizeof zName, "%.*s", (int)nName, p);
            if (!(zName[0] >= '0' && zName[0] <= '9') && !vt__columns_has(cols, zName)) {
                s->pKeep = NULL;
                return n;
            }
            n += (size_t)snprintf(zArgs + n, nArgs - n, ", %s", zName);
            iArg = s->nArg++;
        }
        s->aKeepArg[iCol] = iArg; /* the time's (column 0) is the scan's own */
        p += nName;
        p += strspn(p, ", ");
    }
    return n;
}

/*
 * One pass over table k in rowid order (a table scan visits rows in rowid order) through
 * vt_scan_row, or by SQL when a value only SQL can judge is met. Fills f->aT[k] and the
 * table's figures; hides the impossible rows behind the guard's view. An SQLite code.
 */
static int scan_table(struct vt_tracefile *f, int k, struct vt_kernel_feed *pFeed)
{
    struct scan s;
    struct anchors anchors;
    sqlite3_stmt *pStmt = NULL;
    char *zSql = NULL, zArgs[512];
    const char *zExtra = aLarge[k].zExtra;
    size_t n;
    int rc, bParts;

    memset(&s, 0, sizeof s);
    memset(&anchors, 0, sizeof anchors);
    figures_reset(f, k);
    s.k = k;
    s.f = f;
    s.t = &f->aT[k];
    s.bStored = f->bStored;
    s.base = f->timeBase;
    s.tsDropped = s.maxTs = s.lastKer = INT64_MIN;
    s.iFar = -1;
    s.pFeed = k == VT_T_KER && pFeed && pFeed->xKernel ? pFeed : NULL;
    if (s.pFeed && s.pFeed->xStart && s.pFeed->xStart(s.pFeed->pArg) != SQLITE_OK) s.pFeed = NULL;
    rc = guard_columns(f->db, k, &s);
    if (rc == SQLITE_OK && k == VT_T_KER) rc = unscanned_column(f, &zExtra);
    if (rc != SQLITE_OK) return rc;
    if (f->bKeep && azKeep[k]) {
        s.pKeep = &s.t->keep;
        s.pKeep->nCol = anKeep[k];
    }
    n = (size_t)snprintf(zArgs, sizeof zArgs, "%s",
                         s.bStored ? (aLarge[k].nTime == 1 ? "t" : "t, dur")
                                   : (aLarge[k].nTime == 1 ? "ts" : "start, \"end\""));
    for (int i = 0; i < s.nGuard && n < sizeof zArgs; i++) n += (size_t)snprintf(zArgs + n, sizeof zArgs - n, ", \"%s\"", s.azGuard[i]);
    if (n < sizeof zArgs) n += (size_t)snprintf(zArgs + n, sizeof zArgs - n, ", %s", zExtra);
    s.nArg = aLarge[k].nTime + s.nGuard + aLarge[k].nExtra;
    if (s.pKeep) {
        struct vt_columns cols;
        memset(&cols, 0, sizeof cols);
        rc = vt__columns_read(f->db, aLarge[k].zTable, &cols);
        if (rc == SQLITE_OK) n = keep_args(&s, azKeep[k], zExtra, &cols, zArgs, n, sizeof zArgs);
        vt__columns_free(&cols);
        if (rc != SQLITE_OK) return rc;
    }
    /* api_call's calls folded into memory_event, taken in this pass (guard.c) */
    if (k == VT_T_MEM && s.bStored && s.iBytes >= 0 && (rc = vt__guard_fold_begin(f)) != SQLITE_OK) return rc;
    if (k == VT_T_MEM && f->fold.bOn && f->fold.nSig > 0) { /* else no call is folded: nothing to take */
        if (n < sizeof zArgs) n += (size_t)snprintf(zArgs + n, sizeof zArgs - n, ", call_dt, call_dur, call_sig");
        s.iFold = s.nArg;
        s.nArg += 3;
    }
    s.aPt = malloc(sizeof *s.aPt * RING); /* its pages are touched only as far as it fills */
    /* the kernels of schema 5 (a view over kernel_row: the pass reads only t and dur) straight from their rows,
     * whose order is the view's (its id) */
    bParts = k == VT_T_KER && s.bStored && s.nGuard == 0 && f->version >= 5 && vt__compact_find(aLarge[k].zTable) >= 0 &&
             vt__read_has(f, "kernel_row");
    if (bParts) {
        rc = anchors_load(f->db, aLarge[k].zTable, &anchors);
        if (rc == SQLITE_OK)
            rc = sqlite3_create_function(f->db, "vt_block_t", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, &anchors, block_t, NULL,
                                         NULL);
        if (rc != SQLITE_OK) {
            free(anchors.aId);
            free(anchors.aT);
            free(s.aPt);
            return rc;
        }
        /* args_scanned lives in the signatures: whether any launch went unscanned is asked of them after the pass */
        zSql = vt__strdupf("SELECT count(*) FROM main.kernel_row NOT INDEXED WHERE vt_scan_row(vt_block_t(id, dt), dur, NULL)");
    } else {
        zSql = vt__strdupf("SELECT count(*) FROM main.\"%s\" NOT INDEXED WHERE vt_scan_row(%s)", aLarge[k].zTable, zArgs);
    }
    rc = !s.aPt || !zSql || n >= sizeof zArgs ? SQLITE_NOMEM
                                              : sqlite3_create_function(f->db, "vt_scan_row", -1,
                                                                        SQLITE_UTF8 | SQLITE_DIRECTONLY, &s, scan_row,
                                                                        NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(f->db, zSql, -1, &pStmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(pStmt);
    if (rc == SQLITE_ROW) rc = SQLITE_OK;
    sqlite3_finalize(pStmt);
    /* remove the functions: their state lives in this frame */
    sqlite3_create_function(f->db, "vt_scan_row", -1, SQLITE_UTF8, NULL, NULL, NULL, NULL);
    if (bParts) sqlite3_create_function(f->db, "vt_block_t", 2, SQLITE_UTF8, NULL, NULL, NULL, NULL);
    free(anchors.aId);
    free(anchors.aT);
    if (rc == SQLITE_OK && bParts) {
        int64_t a = 0;
        rc = vt__sql_ints(f->db, "SELECT EXISTS(SELECT 1 FROM main.kernel_sig WHERE args_scanned = 0)", &a, 1, -1);
        s.t->bAny = a > 0;
    }
    /* the rows kept are the replay's when every row was judged here and lies within the reorder window */
    if (s.pKeep && rc == SQLITE_OK && !s.bIrregular && s.w >= 0) s.pKeep->bOk = 1;
    else vt__kept_drop(&s.t->keep);
    while (rc == SQLITE_OK && s.pFeed && !s.bIrregular && !s.bKerLost && s.nKer > 0) ker_feed(&s);
    if (s.pFeed) s.pFeed->bDone = rc == SQLITE_OK && !s.bIrregular && !s.bKerLost && s.rcFeed == SQLITE_OK;
    if (s.iFold && s.bIrregular) f->fold.bBad = 1; /* rows after the irregular one were not judged */
    if (rc == SQLITE_OK && s.bIrregular) s.t->nHidden = 0;
    if (rc == SQLITE_OK) rc = vt__guard_table(f->db, aLarge[k].zTable, s.bIrregular, &s.t->nHidden, &s.t->zGuard);
    if (rc == SQLITE_OK && s.bIrregular) rc = scan_sql(f, k);
    if (rc == SQLITE_OK && !s.bIrregular) {
        int iWorst = -1;
        s.t->bScanned = 1;
        s.t->w = s.w;
        for (int i = 0; i <= MAX_GUARD; i++)
            if (s.aReject[i] > 0 && (iWorst < 0 || s.aReject[i] > s.aReject[iWorst])) iWorst = i;
        if (iWorst >= 0) {
            s.t->zWorstCol = iWorst == MAX_GUARD ? (aLarge[k].nTime == 1 ? "ts" : "start/end") : s.azGuard[iWorst];
            s.t->nWorst = s.aReject[iWorst];
        }
    }
    free(s.aPt);
    free(s.aKer);
    free(zSql);
    return rc;
}

int vt__scan(struct vt_tracefile *f, struct vt_kernel_feed *pFeed)
{
    int rc = SQLITE_OK;
    f->nHidden = 0;
    vt__guard_bounds_reset(f);
    if (pFeed) pFeed->bDone = 0;
    for (int k = 0; rc == SQLITE_OK && k < VT_T_N; k++) {
        figures_reset(f, k);
        if (!f->aT[k].bPresent) continue;
        rc = scan_table(f, k, pFeed);
        f->nHidden += f->aT[k].nHidden;
    }
    /* the small tables: the guard's own count, a view where it hides rows, and the timed ones' bounds */
    for (int i = 0; rc == SQLITE_OK && vt__guard_tables[i]; i++) {
        int64_t nHidden = 0;
        int bLarge = 0;
        for (int k = 0; k < VT_T_N; k++) bLarge |= !strcmp(vt__guard_tables[i], aLarge[k].zTable);
        if (bLarge) continue;
        if (vt__read_has(f, vt__guard_tables[i])) rc = vt__guard_bounds(f, vt__guard_tables[i], &nHidden);
        f->nHidden += nHidden;
    }
    vt__guard_fold_end(&f->fold);
    return rc;
}
