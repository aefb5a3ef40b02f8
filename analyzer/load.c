/* Analysis stage 1: meta, devices, call-site resolution and time bounds of one trace. */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rowcheck.h"
#include "vramtrace/schema.h"

/* Run a query returning two integers (NULL → -1). Returns an SQLite code. */
static int query2(sqlite3 *db, const char *zSql, int64_t *pA, int64_t *pB)
{
    sqlite3_stmt *pStmt = NULL;
    int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
    *pA = *pB = -1;
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(pStmt);
    if (rc == SQLITE_ROW) {
        if (sqlite3_column_type(pStmt, 0) != SQLITE_NULL) *pA = sqlite3_column_int64(pStmt, 0);
        if (sqlite3_column_type(pStmt, 1) != SQLITE_NULL) *pB = sqlite3_column_int64(pStmt, 1);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_OK;
    }
    sqlite3_finalize(pStmt);
    return rc;
}

/* The large event tables vt__scan reads, and what each pass computes besides the count. */
/* kernels last: the transfer pass they feed reads the copies in the order their own pass found */
enum { S_MEM = 0, S_USE, S_COPY, S_SET, S_KER, S_N };
_Static_assert(S_N == VT_SCAN_N, "vt_trace's per-table arrays");
#define M_ANY (1 << S_USE | 1 << S_COPY | 1 << S_SET) /* the tables of vt_trace.mScanAny */
/* The guard's checks (rowcheck.h) under the short names of the table below. */
enum { G_TS = VT_G_TS, G_TSN = VT_G_TSN, G_SZ = VT_G_SZ, G_SZN = VT_G_SZN, G_AD = VT_G_AD, G_ADN = VT_G_ADN };
static const struct {
    const char *zTable;
    const char *zArgs;           /* vt_scan_row's arguments: the guarded columns (time first), then extras */
    const char *zStored;         /* the same with the stored times (t, and dur for an end) in their places */
    int nTime;                   /* time columns first in zArgs: 1 (ts, start) or 2 (start, end) */
    int nGuard;
    unsigned char aGuard[6];     /* G_* of each guarded column, as in trace_open.c's aGuard */
} aScan[S_N] = {
    {"memory_event", "ts, bytes, address, pool_size, pool_used, pool_threshold, op, mem_kind",
     "t, bytes, address, pool_size, pool_used, pool_threshold, op, mem_kind", 1, 6,
     {G_TS, G_SZ, G_AD, G_SZN, G_SZN, G_SZN}},
    {"buffer_use", "ts, address, kind", "t, address, kind", 1, 2, {G_TSN, G_AD}},
    {"memcpy", "start, end, bytes, src, dst", "t, dur, bytes, src, dst", 2, 5, {G_TS, G_TS, G_SZ, G_ADN, G_ADN}},
    {"memset", "start, end, bytes, dst", "t, dur, bytes, dst", 2, 4, {G_TS, G_TS, G_SZ, G_ADN}},
    {"kernel", "start, end", "t, dur", 2, 2, {G_TS, G_TS}},
};

/*
 * zSql (columns or a condition of one of the large tables) with its time columns ts, start
 * and end read from the stored ones, "(t + base)" and "(t + dur + base)": valid for a table
 * whose every row vt__scan found possible (the sums then cannot overflow, and equal the
 * generated columns). The time columns are the only identifiers named so (no CASE ... END).
 * Returns a malloc'd string, NULL when out of memory.
 */
static char *stored_sql(const char *zSql, int64_t base)
{
    /* the longest replacement, "(t + dur + -9223372036854775808)", is 32 bytes for 3 ("end"), "ts" takes
     * 26: at most 16 bytes out per byte in */
    size_t n = strlen(zSql), cap = n * 16 + 64, o = 0;
    char *zOut = malloc(cap);
    if (!zOut) return NULL;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && (zSql[j] == '_' || (zSql[j] >= 'a' && zSql[j] <= 'z') || (zSql[j] >= 'A' && zSql[j] <= 'Z') ||
                         (j > i && zSql[j] >= '0' && zSql[j] <= '9')))
            j++;
        if (j == i) { /* not an identifier: copy one character */
            zOut[o++] = zSql[i++];
            continue;
        }
        if ((j - i == 2 && !memcmp(zSql + i, "ts", 2)) || (j - i == 5 && !memcmp(zSql + i, "start", 5)))
            o += (size_t)snprintf(zOut + o, cap - o, "(t + %lld)", (long long)base);
        else if (j - i == 3 && !memcmp(zSql + i, "end", 3))
            o += (size_t)snprintf(zOut + o, cap - o, "(t + dur + %lld)", (long long)base);
        else {
            memcpy(zOut + o, zSql + i, j - i);
            o += j - i;
        }
        i = j;
    }
    zOut[o] = '\0';
    return zOut;
}

/*
 * SQL reading zCols of zTable's rows that pass zFilter ("1" for all) in time order: in
 * rowid order straight from the table when w >= 0 says rowid order is that time order
 * within a reorder window w (no index lookups, no sort), under the guard's condition only
 * when vt__scan found impossible rows there; else through the guard's view (if any)
 * ordered by zOrder.
 * Returns a malloc'd string, NULL when out of memory.
 */
char *vt__ordered_sql(const struct vt_trace *t, int w, const char *zCols, const char *zTable, const char *zFilter,
                      const char *zOrder)
{
    int bGuard = 1;
    for (int k = 0; k < S_N; k++)
        if (!strcmp(aScan[k].zTable, zTable)) bGuard = (t->mGuarded >> k) & 1;
    if (w >= 0 && !bGuard && t->bStored) { /* every row possible: the stored times plus the base */
        char *zC = stored_sql(zCols, t->timeBase), *zF = stored_sql(zFilter, t->timeBase), *zSql = NULL;
        if (zC && zF)
            zSql = vt__strdupf("SELECT %s FROM main.\"%s\" NOT INDEXED WHERE %s ORDER BY rowid", zC, zTable, zF);
        free(zC);
        free(zF);
        return zSql;
    }
    if (w >= 0)
        /* NOT INDEXED: a range on the time column would otherwise pick its index, then sort */
        return vt__strdupf("SELECT %s FROM main.\"%s\" NOT INDEXED WHERE (%s) AND (%s) ORDER BY rowid", zCols, zTable,
                           bGuard && vt__trace_guard_where(zTable) ? vt__trace_guard_where(zTable) : "1", zFilter);
    return vt__strdupf("SELECT %s FROM \"%s\" WHERE %s ORDER BY %s", zCols, zTable, zFilter, zOrder);
}

/* Heap entries: the time with its sign bit flipped (signed order as unsigned order), then the row's
 * sequence number (rows read before it: rowid order) above its slot (VT_REORDER_CAP + 1 slots). */
#define SLOT_BITS 17
#define TS_FLIP ((uint64_t)1 << 63)
_Static_assert(VT_REORDER_CAP < 1 << SLOT_BITS, "slots fit their bits");
__extension__ typedef unsigned __int128 ent_key;

/* Is heap entry a before b in (time, rowid) order? One 128-bit compare, no branch: which child is
 * less is a coin toss in a heap. */
static int ent_less(const struct vt_rows_ent *a, const struct vt_rows_ent *b)
{
    return ((ent_key)a->ts << 64 | a->tag) < ((ent_key)b->ts << 64 | b->tag);
}

/* Read the statement's row into a free slot; its heap entry in *pe. */
static void rows_read(struct vt_rows *c, struct vt_rows_ent *pe)
{
    int slot = c->aFree[--c->nFree];
    struct vt_row *r = &c->aSlot[slot];
    r->mNull = 0;
    for (int k = 0; k < c->nCol; k++) {
        int64_t v = sqlite3_column_int64(c->pStmt, k);
        r->a[k] = v;
        /* NULL reads as 0: only a 0 may be NULL */
        if (v == 0 && sqlite3_column_type(c->pStmt, k) == SQLITE_NULL) r->mNull |= 1u << k;
    }
    pe->ts = (uint64_t)r->a[0] ^ TS_FLIP;
    pe->tag = (uint64_t)c->nRead++ << SLOT_BITS | (uint64_t)slot; /* rows come in rowid order */
}

/* Make entry e the current row. */
static void rows_hand_out(struct vt_rows *c, const struct vt_rows_ent *e)
{
    c->lastSlot = (int)(e->tag & ((1u << SLOT_BITS) - 1));
    c->pRow = &c->aSlot[c->lastSlot];
    c->ts = (int64_t)(e->ts ^ TS_FLIP);
    c->bRow = 1;
}

/* Put entry e in the heap's hole at i and sift it up. */
static void rows_sift_up(struct vt_rows *c, int i, const struct vt_rows_ent *e)
{
    while (i > 0 && ent_less(e, &c->aHeap[(i - 1) / 2])) {
        c->aHeap[i] = c->aHeap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    c->aHeap[i] = *e;
}

/* Move the hole at the heap's root down to a leaf along the lesser children; returns its place. */
static int rows_hole_down(struct vt_rows *c)
{
    struct vt_rows_ent *a = c->aHeap;
    int i = 0, n = c->nHeap;
    while (2 * i + 2 < n) { /* two children */
        int j = 2 * i + 1;
        j += ent_less(&a[j + 1], &a[j]);
        a[i] = a[j];
        i = j;
    }
    if (2 * i + 1 < n) { /* one */
        a[i] = a[2 * i + 1];
        i = 2 * i + 1;
    }
    return i;
}

/* Pop the heap's least row into the current row (the heap is not empty). */
static void rows_pop(struct vt_rows *c)
{
    struct vt_rows_ent top = c->aHeap[0];
    int i = rows_hole_down(c);
    /* the last entry fills the hole (a leaf: it sifts up little) */
    if (--c->nHeap > i) rows_sift_up(c, i, &c->aHeap[c->nHeap]);
    rows_hand_out(c, &top);
}

/* Read the statement's row and hand out the least of it and the heap's rows (the heap's least
 * goes, the new row takes its place): one pass down the heap instead of a push and a pop. */
static void rows_push_pop(struct vt_rows *c)
{
    struct vt_rows_ent e, top;
    rows_read(c, &e);
    if (c->nHeap == 0 || !ent_less(&c->aHeap[0], &e)) { /* before every row held: straight out */
        rows_hand_out(c, &e);
        return;
    }
    top = c->aHeap[0];
    rows_sift_up(c, rows_hole_down(c), &e); /* a later row, as most are: it sifts up little */
    rows_hand_out(c, &top);
}

/* Prepare zSql (NULL: out of memory) for reading with window w (analysis.h); SQLite code. */
int vt__rows_open(struct vt_rows *c, sqlite3 *db, const char *zSql, int nCol, int w)
{
    int rc = SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->nCol = nCol;
    c->w = w > 0 && nCol <= VT_ROW_MAXCOL ? w : 0;
    c->lastSlot = -1;
    if (w > 0 && nCol > VT_ROW_MAXCOL) return SQLITE_MISUSE;
    if (c->w > 0) {
        c->aSlot = malloc(sizeof *c->aSlot * (size_t)(c->w + 1));
        c->aHeap = malloc(sizeof *c->aHeap * (size_t)(c->w + 1));
        c->aFree = malloc(sizeof *c->aFree * (size_t)(c->w + 1));
        if (!c->aSlot || !c->aHeap || !c->aFree) return rc;
        for (int i = 0; i <= c->w; i++) c->aFree[c->nFree++] = c->w - i;
    }
    if (zSql) rc = sqlite3_prepare_v2(db, zSql, -1, &c->pStmt, NULL);
    return rc;
}

/* The next row in (time, rowid) order: fill the heap to w rows, read one more, hand out the least; SQLite code. */
int vt__rows_next(struct vt_rows *c)
{
    int rc = SQLITE_OK;
    if (c->w <= 0) {
        rc = sqlite3_step(c->pStmt);
        c->bRow = rc == SQLITE_ROW;
        if (c->bRow) c->ts = sqlite3_column_int64(c->pStmt, 0);
        return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    if (c->lastSlot >= 0) c->aFree[c->nFree++] = c->lastSlot; /* the row handed out last is done with */
    c->lastSlot = -1;
    c->bRow = 0;
    while (!c->bEof && c->nHeap < c->w) { /* fill the heap to w rows */
        struct vt_rows_ent e;
        rc = sqlite3_step(c->pStmt);
        if (rc == SQLITE_DONE) {
            c->bEof = 1;
        } else if (rc != SQLITE_ROW) {
            return rc;
        } else {
            rows_read(c, &e);
            rows_sift_up(c, c->nHeap++, &e);
        }
    }
    if (!c->bEof) { /* the (w + 1)th row: the least of the w + 1 goes */
        rc = sqlite3_step(c->pStmt);
        if (rc == SQLITE_ROW) {
            rows_push_pop(c);
            return SQLITE_OK;
        }
        if (rc != SQLITE_DONE) return rc;
        c->bEof = 1;
    }
    if (c->nHeap > 0) rows_pop(c);
    return SQLITE_OK;
}

void vt__rows_close(struct vt_rows *c)
{
    sqlite3_finalize(c->pStmt);
    free(c->aSlot);
    free(c->aHeap);
    free(c->aFree);
    memset(c, 0, sizeof *c);
}

/* What the pass over one table found: the state of vt_scan_row. */
struct scan {
    int k;                  /* S_* */
    int w;                  /* their reorder window so far (see order_row), -1 beyond VT_REORDER_CAP */
    int64_t nRow;           /* rows checked for order so far */
    struct pt { int64_t i, ts; } *aPt; /* ring: the rows that raised the running maximum time, last ones */
    int64_t nPush, maxTs;   /* entries ever put in the ring (the newest is the running maximum) */
    int64_t tsDropped;      /* time of the last entry dropped from the full ring (INT64_MIN: none) */
    int64_t iFar;           /* the newest entry (counted as nPush) lying more than w rows back, as of the last
                             * row out of order (-1: none) */
    int bIrregular;         /* a value only SQL can judge exactly (a real number): SQL decides instead */
    int bStored;            /* the arguments are aScan's zStored: times are computed here (vt__stored_times) */
    int64_t base;           /* then: the trace's time base */
    int64_t nHidden, nDev, nSeg;
    int64_t t0, t1;         /* time bounds of the rows vt__load's bounds take (-1: none yet) */
    int bAny;               /* a row vt__load's EXISTS looks for: a kernel use, a copy or memset address */
    struct vt_xfer_run *pXfer; /* kernels: the transfer pass, fed in start order (ker_take) */
    int rcXfer;
    struct kent { int64_t start, end; } *aKer; /* kernels held for it, in (start, rowid) order */
    int64_t iKer, nKer, nKerAlloc; /* the first held, how many, room */
    int64_t lastKer;        /* start of the last kernel fed (INT64_MIN: none yet) */
    int bKerLost;           /* a kernel sorts before one fed already: vt__transfers makes the pass */
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

/* Kernels held back from the transfer pass beyond twice the window found so far. */
#define KER_HOLD 1024

/* Feed the first held kernel to the transfer pass (errors in s->rcXfer). */
static void ker_feed(struct scan *s)
{
    const struct kent *e = &s->aKer[s->iKer++];
    s->nKer--;
    s->lastKer = e->start;
    if (s->rcXfer == SQLITE_OK) s->rcXfer = vt__xfer_kernel(s->pXfer, e->start, e->end);
}

static void ker_hold(struct scan *s, int64_t start, int64_t end);

/*
 * Take the next kernel in rowid order for the transfer pass, which needs them in (start,
 * rowid) order: held, in that order, until more than KER_HOLD + 2w kernels (w: the window
 * found so far) are held, then fed. Rows stored in start order pass straight through the
 * hold; a kernel that sorts before one already fed (it lies further back than the hold
 * reached) gives the feeding up (s->bKerLost): vt__transfers reads the kernels again.
 * Errors in s->rcXfer.
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
    if (s->bKerLost || s->rcXfer != SQLITE_OK) return;
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
                s->rcXfer = SQLITE_NOMEM;
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

/* An integer argument of vt_scan_row, or -1 (marking the pass irregular) for any other type. */
static int64_t arg_int(struct scan *s, sqlite3_value *v)
{
    if (sqlite3_value_type(v) == SQLITE_INTEGER) return sqlite3_value_int64(v);
    s->bIrregular = 1;
    return -1;
}

/*
 * SQL function vt_scan_row(guarded columns..., extras...) (aScan), called once per
 * row of a table scan in rowid order (scan_table): counts impossible rows, checks
 * how far the rows the readers take lie from time order (order_row), collects
 * load's segment counts (memory events), time bounds and whether kernel uses and copy
 * or memset addresses exist, and feeds the kernels to the transfer pass (ker_take).
 * Returns NULL: no row is output.
 */
static void scan_row(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct scan *s = sqlite3_user_data(ctx);
    int64_t ts, x, y, aTime[2] = {0, 0};
    int aNull[2] = {0, 0}, nTime = s->bStored ? aScan[s->k].nTime : 0, bOdd = 0;
    (void)argc;
    if (s->bIrregular) return;
    if (nTime && (bOdd = vt__stored_times(argv, nTime, s->base, aTime, aNull)) < 0) {
        s->bIrregular = 1;
        return;
    }
    for (int i = 0; i < aScan[s->k].nGuard; i++) {
        int ok = i < nTime ? vt__guard_time(aTime[i], aNull[i], aScan[s->k].aGuard[i])
                           : vt__guard_value(argv[i], aScan[s->k].aGuard[i]);
        if (ok < 0) {
            s->bIrregular = 1;
            return;
        }
        if (!ok) {
            s->nHidden++;
            return;
        }
    }
    if (bOdd) { /* a possible row with a text time (read as NULL): the readers' sums would not see NULL */
        s->bIrregular = 1;
        return;
    }
    ts = nTime ? aTime[0] : sqlite3_value_int64(argv[0]); /* an integer: it passed its check */
    switch (s->k) {
    case S_MEM:
        if (ts > 0) { /* zero times are placeholders of incomplete records */
            if (s->t0 < 0 || ts < s->t0) s->t0 = ts;
            if (ts > s->t1) s->t1 = ts;
        }
        x = arg_int(s, argv[6]); /* op */
        y = arg_int(s, argv[7]); /* mem_kind */
        if (x != 1 && x != 2 && x != 5 && x != 6) return;
        if ((x == 1 || x == 5) && (y == 0 || y == 3)) {
            int64_t n = sqlite3_value_int64(argv[1]);
            s->nDev++;
            s->nSeg += n == 2097152 || (n >= 10485760 && n % 2097152 == 0);
        }
        break;
    case S_USE:
        if (arg_int(s, argv[2]) != 0) return;
        s->bAny = 1;
        if (nTime ? aNull[0] : sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
        break;
    case S_COPY:
    case S_SET:
    case S_KER:
        x = nTime ? aTime[1] : sqlite3_value_int64(argv[1]); /* end: an integer too */
        if (ts > 0 && x >= ts) {
            if (s->t0 < 0 || ts < s->t0) s->t0 = ts;
            if (x > s->t1) s->t1 = x;
        }
        if (s->k == S_COPY) {
            s->bAny |= sqlite3_value_type(argv[3]) != SQLITE_NULL || sqlite3_value_type(argv[4]) != SQLITE_NULL;
            break;
        }
        if (s->k == S_SET) {
            s->bAny |= sqlite3_value_type(argv[3]) != SQLITE_NULL;
            break;
        }
        order_row(s, ts);
        if (s->pXfer) ker_take(s, ts, x);
        return;
    }
    order_row(s, ts);
}

/*
 * One pass over table k in rowid order (a table scan visits rows in rowid order)
 * through vt_scan_row, state *s reset here: the table's impossible rows, whether the
 * readers' rows come in time order, and what vt__load would otherwise scan for. On
 * a value only SQL can judge, the guard's own count decides and the readers keep
 * their ordered queries. Returns an SQLite code.
 */
static int scan_table(struct vt_trace *t, int k, struct scan *s)
{
    sqlite3_stmt *pStmt = NULL;
    char *zSql = vt__strdupf("SELECT count(*) FROM main.\"%s\" NOT INDEXED WHERE vt_scan_row(%s)", aScan[k].zTable,
                             t->bStored ? aScan[k].zStored : aScan[k].zArgs);
    int rc;

    memset(s, 0, sizeof *s);
    s->k = k;
    s->bStored = t->bStored;
    s->base = t->timeBase;
    s->tsDropped = s->maxTs = INT64_MIN;
    s->iFar = -1;
    s->lastKer = INT64_MIN;
    s->aPt = malloc(sizeof *s->aPt * RING); /* its pages are touched only as far as it fills */
    s->t0 = s->t1 = -1;
    if (!zSql || !s->aPt) {
        free(zSql);
        free(s->aPt);
        s->aPt = NULL;
        return SQLITE_NOMEM;
    }
    /* a failure here only leaves the transfer pass to vt__transfers, which reports it */
    if (k == S_KER && (s->rcXfer = vt__xfer_begin(t, &s->pXfer)) != SQLITE_OK) {
        vt__xfer_end(s->pXfer, 0);
        s->pXfer = NULL;
    }
    rc = sqlite3_prepare_v2(t->db, zSql, -1, &pStmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(pStmt);
    if (rc == SQLITE_ROW) rc = SQLITE_OK;
    free(s->aPt);
    s->aPt = NULL;
    if (s->pXfer) {
        int bDone;
        while (rc == SQLITE_OK && !s->bIrregular && !s->bKerLost && s->nKer > 0) ker_feed(s);
        bDone = rc == SQLITE_OK && !s->bIrregular && !s->bKerLost && s->rcXfer == SQLITE_OK;
        t->bXferDone = vt__xfer_end(s->pXfer, bDone) == SQLITE_OK && bDone;
        s->pXfer = NULL;
    }
    free(s->aKer);
    s->aKer = NULL;
    if (rc == SQLITE_OK && s->bIrregular) {
        s->nHidden = 0;
        s->w = -1;
        rc = vt__trace_guard_count(t->db, aScan[k].zTable, &s->nHidden);
    }
    if (rc == SQLITE_OK) {
        if (!s->bIrregular) t->mScanned |= 1 << k;
        t->aScanT0[k] = s->t0;
        t->aScanT1[k] = s->t1;
        t->mScanAny |= s->bAny << k;
        switch (k) {
        case S_MEM:
            t->wMem = s->w;
            t->bSegKnown = !s->bIrregular;
            t->nDevAlloc = s->nDev;
            t->nSegmentLike = s->nSeg;
            break;
        case S_USE: t->wUse = s->w; break;
        case S_KER: t->wKer = s->w; break;
        case S_COPY: t->wCopy = s->w; break;
        default: t->wSet = s->w; break;
        }
    }
    sqlite3_finalize(pStmt);
    free(zSql);
    return rc;
}

int vt__scan(struct vt_trace *t, int64_t *pnHidden)
{
    /* the small tables keep the guard's own count */
    static const char *azOther[] = {"oom_event", "nvtx_range", "api_call", "sync_event", "pool_event", "device"};
    struct scan s;
    int rc = sqlite3_create_function(t->db, "vt_scan_row", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, &s, scan_row, NULL,
                                     NULL);
    const char *azLarge[S_N];
    *pnHidden = 0;
    t->mGuarded = t->mScanned = t->mScanAny = 0;
    for (int k = 0; k < S_N; k++) azLarge[k] = aScan[k].zTable;
    /* stored times read directly only where every large table is exactly as the tracer makes it */
    t->bStored = vt__schema_time_base(t->db, azLarge, S_N, &t->timeBase) == 1;
    /* a table without impossible rows needs no view: its readers read it as it is */
    for (int k = 0; rc == SQLITE_OK && k < S_N; k++) {
        rc = scan_table(t, k, &s);
        *pnHidden += s.nHidden;
        if (rc == SQLITE_OK && s.nHidden > 0) {
            t->mGuarded |= 1 << k;
            rc = vt__trace_guard_view(t->db, aScan[k].zTable);
        }
    }
    for (size_t k = 0; rc == SQLITE_OK && k < sizeof azOther / sizeof azOther[0]; k++) {
        int64_t n = 0;
        rc = vt__trace_guard_count(t->db, azOther[k], &n);
        *pnHidden += n;
        if (rc == SQLITE_OK && n > 0) rc = vt__trace_guard_view(t->db, azOther[k]);
    }
    /* remove the function: its state lives in this frame */
    sqlite3_create_function(t->db, "vt_scan_row", -1, SQLITE_UTF8, NULL, NULL, NULL, NULL);
    return rc;
}

/* Is a Python file path library code (torch, site-packages, the interpreter)? */
static int is_library_file(const char *z)
{
    return strstr(z, "site-packages/") || strstr(z, "dist-packages/") || strstr(z, "/torch/") ||
           !strncmp(z, "torch/", 6) || strstr(z, "<frozen") || strstr(z, "/lib/python3");
}

/* Is a native module a runtime library (PyTorch, Python, C/C++ runtime) rather than the program? */
static int is_library_module(const char *z)
{
    static const char *az[] = {"libc10", "libtorch", "libpython", "libc.so", "libstdc++", "libnccl",
                               "libcublas", "libcudnn", "ld-linux"};
    if (!z) return 0;
    for (size_t i = 0; i < sizeof az / sizeof az[0]; i++)
        if (strstr(z, az[i])) return 1;
    return 0;
}

/*
 * Describe a stack (*pbNccl set when a native frame is in NCCL): the top Python frame outside library code as "file:line in
 * function", else the top Python frame, else the top native frame. Returns a
 * malloc'd string, or NULL on OOM / SQLite error (*pRc set).
 */
static char *describe_stack(sqlite3 *db, int64_t stackId, int *pRc, int *pbNccl)
{
    static const char *zSql =
        "SELECT f.kind, fn.value, fi.value, f.line, mo.value, f.pc FROM frame f"
        " LEFT JOIN string fn ON fn.id = f.function_id LEFT JOIN string fi ON fi.id = f.file_id"
        " LEFT JOIN string mo ON mo.id = f.module_id WHERE f.stack_id = ? ORDER BY f.idx";
    sqlite3_stmt *pStmt = NULL;
    char *zPy = NULL, *zPyAny = NULL, *zNative = NULL, *zRet = NULL;
    int bNativeLib = 0;
    int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
    if (rc != SQLITE_OK) goto done;
    sqlite3_bind_int64(pStmt, 1, stackId);
    while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        int kind = sqlite3_column_int(pStmt, 0);
        const char *zFn = (const char *)sqlite3_column_text(pStmt, 1);
        const char *zFile = (const char *)sqlite3_column_text(pStmt, 2);
        int line = sqlite3_column_int(pStmt, 3);
        const char *zMod = (const char *)sqlite3_column_text(pStmt, 4);
        if (kind != 1 && zMod && strstr(zMod, "libnccl")) *pbNccl = 1;
        if (kind == 1 /* VT_FRAME_PYTHON */) {
            char *z = vt__strdupf("%s:%d in %s", zFile ? zFile : "?", line, zFn ? zFn : "?");
            if (!z) { rc = SQLITE_NOMEM; goto done; }
            if (!zPy && zFile && !is_library_file(zFile)) zPy = z;
            else if (!zPyAny) zPyAny = z;
            else free(z);
        } else if (!zNative || (bNativeLib && !is_library_module(zMod))) {
            const char *zBase = zMod ? strrchr(zMod, '/') : NULL;
            free(zNative);
            bNativeLib = is_library_module(zMod);
            zBase = zBase ? zBase + 1 : zMod;
            if (zFn && zFile && line > 0)
                zNative = vt__strdupf("%s:%d in %s", zFile, line, zFn);
            else if (zFn)
                zNative = vt__strdupf("%s (%s)", zFn, zBase ? zBase : "?");
            else
                zNative = vt__strdupf("0x%llx (%s)", (unsigned long long)sqlite3_column_int64(pStmt, 5),
                                      zBase ? zBase : "?");
            if (!zNative) { rc = SQLITE_NOMEM; goto done; }
        }
    }
    if (rc != SQLITE_DONE) goto done;
    rc = SQLITE_OK;
    if (zPy) { zRet = zPy; zPy = NULL; }
    else if (zPyAny) { zRet = zPyAny; zPyAny = NULL; }
    else if (zNative) { zRet = zNative; zNative = NULL; }
    else zRet = vt__strdupf("stack %lld (no frames recorded)", (long long)stackId);
    if (!zRet) rc = SQLITE_NOMEM;
done:
    free(zPy);
    free(zPyAny);
    free(zNative);
    sqlite3_finalize(pStmt);
    *pRc = rc;
    return zRet;
}

/*
 * Index of the site of (stackId, bytes) in t->aSite, created (and its stack
 * described) on first sight; without a stack (-1) the size class is the site.
 * Returns -1 when out of memory or on an SQLite error.
 */
int vt__site_get(struct vt_trace *t, int64_t stackId, int64_t bytes)
{
    int64_t key = stackId >= 0 ? stackId : -bytes - 1;
    int i, rc = SQLITE_OK;
    uint64_t h;
    struct vt_site *s;

    if (t->nSiteHash == 0 || t->nSite * 2 >= t->nSiteHash) {
        int nNew = t->nSiteHash ? t->nSiteHash * 2 : 256;
        int *aNew = malloc(sizeof(int) * (size_t)nNew);
        if (!aNew) return -1;
        for (i = 0; i < nNew; i++) aNew[i] = -1;
        for (i = 0; i < t->nSite; i++) {
            h = (uint64_t)t->aSite[i].key * 0x9E3779B97F4A7C15ull;
            int j = (int)(h >> 40) & (nNew - 1);
            while (aNew[j] >= 0) j = (j + 1) & (nNew - 1);
            aNew[j] = i;
        }
        free(t->aSiteHash);
        t->aSiteHash = aNew;
        t->nSiteHash = nNew;
    }
    h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    i = (int)(h >> 40) & (t->nSiteHash - 1);
    while (t->aSiteHash[i] >= 0) {
        if (t->aSite[t->aSiteHash[i]].key == key) return t->aSiteHash[i];
        i = (i + 1) & (t->nSiteHash - 1);
    }
    if (t->nSite == t->nSiteAlloc) {
        int nNew = t->nSiteAlloc ? t->nSiteAlloc * 2 : 64;
        struct vt_site *aNew = realloc(t->aSite, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        t->aSite = aNew;
        t->nSiteAlloc = nNew;
    }
    s = &t->aSite[t->nSite];
    memset(s, 0, sizeof *s);
    s->key = key;
    s->stackId = stackId;
    s->crossPhase = -1;
    s->seenBoundary = t->nBoundaryDone;
    s->endFirstTs = s->idleFirstTs = s->crossFirstTs = -1;
    if (stackId >= 0) {
        s->zSite = describe_stack(t->db, stackId, &rc, &s->bNccl);
        if (rc != SQLITE_OK) return -1;
    } else {
        char zB[32];
        vt__fmt_bytes(bytes, zB, sizeof zB);
        s->zSite = vt__strdupf("site not recorded (allocations of %s)", zB);
        if (!s->zSite) return -1;
    }
    t->aSiteHash[i] = t->nSite;
    return t->nSite++;
}

/* Copy meta(key) into z (size n), empty when absent; *pBad set when the meta table cannot be read. */
static void meta_copy(sqlite3 *db, const char *zKey, char *z, size_t n, int *pBad)
{
    int found = vt__meta_get(db, zKey, z, n);
    if (found != 1) z[0] = 0;
    if (found < 0) *pBad = 1;
}

/*
 * Read meta, devices and the time bounds; decide whether the trace is at
 * segment level (caching allocator without tensor tracing). Returns VT_EXIT_OK
 * or VT_EXIT_CORRUPT / VT_EXIT_INTERNAL after printing one line.
 */
int vt__load(struct vt_trace *t, const struct vt_opts *o)
{
    sqlite3 *db = t->db;
    sqlite3_stmt *pStmt = NULL;
    char zVal[64];
    int64_t a, b;
    int rc, bBadMeta = 0;
    (void)o;

    meta_copy(db, "pid", t->zPid, sizeof t->zPid, &bBadMeta);
    meta_copy(db, "rank", t->zRank, sizeof t->zRank, &bBadMeta);
    meta_copy(db, "hostname", t->zHost, sizeof t->zHost, &bBadMeta);
    meta_copy(db, "cmdline", t->zCmd, sizeof t->zCmd, &bBadMeta);
    meta_copy(db, "config.tensors", zVal, sizeof zVal, &bBadMeta);
    t->bTensors = !strcmp(zVal, "1");
    meta_copy(db, "closed_cleanly", zVal, sizeof zVal, &bBadMeta);
    t->bCleanClose = !strcmp(zVal, "1");

    if (bBadMeta) {
        vt__errorf("%s: cannot read the trace's meta table: %s", t->zPath, sqlite3_errmsg(db));
        return VT_EXIT_CORRUPT;
    }
    rc = sqlite3_prepare_v2(db, "SELECT id, name, total_bytes FROM device ORDER BY id", -1, &pStmt, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        int i = vt__dev_index(t, sqlite3_column_int(pStmt, 0));
        const char *zName = (const char *)sqlite3_column_text(pStmt, 1);
        if (i < 0) { rc = SQLITE_NOMEM; break; }
        snprintf(t->aDev[i].zName, sizeof t->aDev[i].zName, "%s", zName ? zName : "");
        t->aDev[i].totalBytes = sqlite3_column_int64(pStmt, 2);
        rc = SQLITE_OK;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(pStmt);
    pStmt = NULL;

    /* time bounds over every timed table; the large ones from vt__scan unless it left a table to SQL */
    t->t0 = INT64_MAX;
    t->t1 = INT64_MIN;
    {
        /* zero times are placeholders of incomplete records (a forced flush): not the trace's start */
        static const struct {
            int k;                 /* S_* of a table vt__scan reads, -1 for a small table */
            const char *zSql;
        } aBound[] = {
            /* two subqueries: each min/max alone is one index lookup where the index exists */
            {S_MEM, "SELECT (SELECT min(ts) FROM memory_event WHERE ts > 0), (SELECT max(ts) FROM memory_event WHERE ts > 0)"},
            {S_KER, "SELECT min(start), max(end) FROM kernel WHERE start > 0 AND end >= start"},
            {S_COPY, "SELECT min(start), max(end) FROM memcpy WHERE start > 0 AND end >= start"},
            {S_SET, "SELECT min(start), max(end) FROM memset WHERE start > 0 AND end >= start"},
            {-1, "SELECT min(ts), max(ts) FROM oom_event WHERE ts > 0"},
            {-1, "SELECT min(start), max(coalesce(end, start)) FROM nvtx_range WHERE start > 0"}};
        for (size_t i = 0; rc == SQLITE_OK && i < sizeof aBound / sizeof aBound[0]; i++) {
            int k = aBound[i].k;
            if (k >= 0 && (t->mScanned >> k & 1)) {
                a = t->aScanT0[k];
                b = t->aScanT1[k];
            } else {
                rc = query2(db, aBound[i].zSql, &a, &b);
            }
            if (a >= 0 && a < t->t0) t->t0 = a;
            if (b >= 0 && b > t->t1) t->t1 = b;
        }
    }
    if (t->t0 == INT64_MAX) t->t0 = t->t1 = 0;
    if (t->t1 <= t->t0) t->t1 = t->t0 + 1;

    /* segment-level pattern: the caching allocator's 2 MiB small-pool segments and its large
     * segments (20 MiB for requests up to 10 MiB, larger requests rounded to 2 MiB) */
    if (rc == SQLITE_OK && !t->bSegKnown) /* else found by vt__scan */
        rc = query2(db,
                    "SELECT count(*), sum(bytes = 2097152 OR (bytes >= 10485760 AND bytes % 2097152 = 0))"
                    " FROM memory_event WHERE op IN (1, 5) AND mem_kind IN (0, 3)",
                    &t->nDevAlloc, &t->nSegmentLike);
    if (rc == SQLITE_OK && (t->mScanned & M_ANY) == M_ANY) { /* found by vt__scan */
        a = t->mScanAny >> S_USE & 1;
        b = (t->mScanAny & (M_ANY & ~(1 << S_USE))) != 0;
    } else if (rc == SQLITE_OK) {
        /* existence only: EXISTS stops at the first row instead of counting whole tables */
        rc = query2(db, "SELECT EXISTS(SELECT 1 FROM buffer_use WHERE kind = 0),"
                        " EXISTS(SELECT 1 FROM memcpy WHERE src IS NOT NULL OR dst IS NOT NULL)"
                        " OR EXISTS(SELECT 1 FROM memset WHERE dst IS NOT NULL)",
                    &a, &b);
    }
    if (rc != SQLITE_OK) {
        vt__errorf("%s: cannot read trace: %s", t->zPath, sqlite3_errstr(rc));
        return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? VT_EXIT_CORRUPT : VT_EXIT_INTERNAL;
    }
    t->bHaveKernelUses = a > 0;
    t->bHaveCopyAddr = b > 0;
    if (t->nSegmentLike < 0) t->nSegmentLike = 0;
    t->bSegments = !t->bTensors && t->nDevAlloc >= 2 && t->nSegmentLike * 10 >= t->nDevAlloc * 8;
    if (t->bSegments)
        vt__trace_note(t, "recorded without tensor-level tracing: %lld of %lld device allocations "
                          "look like caching-allocator segments (2 MiB, or >= 20 MiB in 2 MiB "
                          "steps), so findings are at segment level; record with "
                          "'vramtrace record --tensors' to see individual tensors",
                       (long long)t->nSegmentLike, (long long)t->nDevAlloc);
    if (!t->bCleanClose)
        vt__trace_note(t, "the trace was not closed cleanly (process killed or still running): "
                          "its last second of events may be missing and allocations live at the "
                          "end include ones the process would have freed");
    /* Records lost while tracing: the dropped rows, or the writer's closing counters when they
     * count more (the same total `vramtrace info` shows). total() cannot overflow. */
    rc = query2(db, "SELECT CAST(min(total(count), 9e18) AS INTEGER) FROM dropped WHERE count > 0",
                &a, &b);
    if (rc == SQLITE_OK) {
        int64_t nMeta = 0;
        static const char *const azKey[] = {"dropped_queue", "dropped_writer", "dropped_map"};
        for (size_t k = 0; k < sizeof azKey / sizeof azKey[0]; k++) {
            long long v;
            meta_copy(db, azKey[k], zVal, sizeof zVal, &bBadMeta);
            if (sscanf(zVal, "%lld", &v) == 1 && v > 0 && v < INT64_MAX - nMeta) nMeta += v;
        }
        if (nMeta > a) a = nMeta;
        if (a > 0)
            vt__trace_note(t, "%lld records were lost while tracing (see the 'dropped' table): counts, "
                              "peaks and findings are incomplete",
                           (long long)a);
    } else {
        vt__errorf("%s: cannot read trace: %s", t->zPath, sqlite3_errstr(rc));
        return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? VT_EXIT_CORRUPT : VT_EXIT_INTERNAL;
    }
    meta_copy(db, "config.kernel_args", zVal, sizeof zVal, &bBadMeta);
    if (bBadMeta) {
        vt__errorf("%s: cannot read the trace's meta table: %s", t->zPath, sqlite3_errmsg(db));
        return VT_EXIT_CORRUPT;
    }
    if (!t->bHaveKernelUses)
        vt__trace_note(t, "no kernel buffer uses recorded%s: first/last use come from copies only, "
                          "idle-allocation checks are skipped and allocations live at exit cannot be "
                          "told apart from buffers in use until the end",
                       !strcmp(zVal, "0") ? " (kernel-argument scanning was off: VRAMTRACE_KERNEL_ARGS=0)" : "");
    return VT_EXIT_OK;
}
