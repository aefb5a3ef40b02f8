/* Reading one table in time order: straight in rowid order, through a reorder window, or sorted. */
#include "read.h"

#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "vramtrace/schema.h"

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

char *vt__ordered_sql(const struct vt_tracefile *f, int k, const char *zCols, const char *zFilter, const char *zOrder)
{
    const char *zTable = vt__tbl_name(k), *zTime = k <= VT_T_USE ? "ts" : "start";
    /* a compacted table of schema 5 is a view, read in its rows' order (id); a view has no rowid */
    const char *zRowid = f->version >= 5 && vt__compact_find(zTable) >= 0 ? "id" : "rowid";
    int w = f->aT[k].w, bGuard = f->aT[k].nHidden > 0, bStored = w >= 0 && !bGuard && f->bStored;
    char *zSql = NULL, *zF;
    /* rows whose time is unknown are not on the timeline: no reader takes them in time order; when
     * every row is possible and the pass met no unknown time, each row's time is known and after 0,
     * and the test is left out (a column read, a sum and a compare per row: 4 % of analyze) */
    if (bStored && f->aT[k].nNoTime == 0) zF = vt__strdupf("(%s)", zFilter);
    else zF = vt__strdupf("(%s) AND %s > 0", zFilter, zTime);
    if (!zF) return NULL;
    if (bStored) { /* every row possible: the stored times plus the base */
        char *zC = stored_sql(zCols, f->timeBase), *zS = stored_sql(zF, f->timeBase);
        if (zC && zS)
            zSql = vt__strdupf("SELECT %s FROM main.\"%s\" NOT INDEXED WHERE %s ORDER BY %s", zC, zTable, zS, zRowid);
        free(zC);
        free(zS);
    } else if (w >= 0) {
        /* NOT INDEXED: a range on the time column would otherwise pick its index, then sort; the guard's
         * condition (kept by the scan) hides the impossible rows the view would */
        zSql = vt__strdupf("SELECT %s FROM main.\"%s\" NOT INDEXED WHERE (%s) AND %s ORDER BY %s", zCols, zTable,
                           bGuard && f->aT[k].zGuard ? f->aT[k].zGuard : "1", zF, zRowid);
    } else {
        zSql = vt__strdupf("SELECT %s FROM \"%s\" WHERE %s ORDER BY %s", zCols, zTable, zF, zOrder);
    }
    free(zF);
    return zSql;
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

/* The varint at *pp (7 bits a byte, low first); *pp moves past it. */
static inline uint64_t kept_varint(const unsigned char **pp)
{
    const unsigned char *p = *pp;
    uint64_t v = *p & 0x7f;
    for (int sh = 7; *p++ & 0x80; sh += 7) v |= (uint64_t)(*p & 0x7f) << sh;
    *pp = p;
    return v;
}

/* The next of the kept rows into r, as scan.c's keep_row wrote it: the NULL columns' mask, then each other
 * column's difference from its last value (zigzag). */
static void kept_read(struct vt_rows *c, struct vt_row *r)
{
    struct vt_kept *pK = c->pKept;
    const unsigned char *p;
    if (c->iKept == c->pChunk->n) { /* this chunk read: the next one (this one released, unless only peeking) */
        struct vt_keptchunk *x = c->pChunk;
        c->pChunk = x->pNext;
        if (!c->bPeek) {
            pK->pFirst = x->pNext;
            if (!pK->pFirst) pK->pLast = NULL;
            vt__kept_chunk_free(x);
        }
        c->iKept = 0;
    }
    p = c->pChunk->a + c->iKept;
    uint64_t m = kept_varint(&p);
    r->mNull = (uint32_t)m;
    for (int k = 0; k < c->nCol; k++) {
        uint64_t z;
        if (m >> k & 1) {
            r->a[k] = 0; /* NULL reads as 0 */
            continue;
        }
        z = kept_varint(&p);
        r->a[k] = c->aLast[k] = (int64_t)((uint64_t)c->aLast[k] + (z >> 1 ^ (uint64_t)-(int64_t)(z & 1)));
    }
    c->iKept = (size_t)(p - c->pChunk->a);
}

/* Step the rows' source: SQLITE_ROW (a row to read), SQLITE_DONE, or an error. */
static int rows_step(struct vt_rows *c)
{
    if (!c->pKept) return sqlite3_step(c->pStmt);
    if (c->nKeptLeft == 0) return SQLITE_DONE;
    c->nKeptLeft--;
    return SQLITE_ROW;
}

/* Read the source's row into a free slot; its heap entry in *pe. */
static void rows_read(struct vt_rows *c, struct vt_rows_ent *pe)
{
    int slot = c->aFree[--c->nFree];
    struct vt_row *r = &c->aSlot[slot];
    r->mNull = 0;
    if (c->pKept) {
        kept_read(c, r);
    } else {
        for (int k = 0; k < c->nCol; k++) {
            int64_t v = sqlite3_column_int64(c->pStmt, k);
            r->a[k] = v;
            /* NULL reads as 0: only a 0 may be NULL */
            if (v == 0 && sqlite3_column_type(c->pStmt, k) == SQLITE_NULL) r->mNull |= 1u << k;
        }
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

/* c zeroed for nCol columns read with window w (the slots and heap it needs; rows from pKept when not NULL, which
 * needs a slot even for w 0); SQLite code. */
static int rows_init(struct vt_rows *c, int nCol, int w, struct vt_kept *pKept)
{
    memset(c, 0, sizeof *c);
    c->nCol = nCol;
    c->w = w > 0 && nCol <= VT_ROW_MAXCOL ? w : 0;
    c->lastSlot = -1;
    c->pKept = pKept;
    c->pChunk = pKept ? pKept->pFirst : NULL;
    if ((w > 0 || pKept) && nCol > VT_ROW_MAXCOL) return SQLITE_MISUSE;
    if (c->w > 0 || pKept) {
        c->aSlot = malloc(sizeof *c->aSlot * (size_t)(c->w + 1));
        c->aHeap = malloc(sizeof *c->aHeap * (size_t)(c->w + 1));
        c->aFree = malloc(sizeof *c->aFree * (size_t)(c->w + 1));
        if (!c->aSlot || !c->aHeap || !c->aFree) return SQLITE_NOMEM;
        for (int i = 0; i <= c->w; i++) c->aFree[c->nFree++] = c->w - i;
    }
    return SQLITE_OK;
}

/* Prepare zSql (NULL: out of memory) for reading with window w (analysis.h); SQLite code. */
int vt__rows_open(struct vt_rows *c, sqlite3 *db, const char *zSql, int nCol, int w)
{
    int rc = rows_init(c, nCol, w, NULL);
    if (rc == SQLITE_OK) rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &c->pStmt, NULL) : SQLITE_NOMEM;
    return rc;
}

int vt__rows_open_kept(struct vt_rows *c, struct vt_kept *p, int w)
{
    int rc = rows_init(c, p->nCol, w, p);
    c->nKeptLeft = p->nRow;
    return rc;
}

int vt__rows_open_kept_peek(struct vt_rows *c, struct vt_kept *p, int w)
{
    int rc = vt__rows_open_kept(c, p, w);
    c->bPeek = 1;
    return rc;
}

/* The next row in (time, rowid) order: fill the heap to w rows, read one more, hand out the least; SQLite code. */
int vt__rows_next(struct vt_rows *c)
{
    int rc = SQLITE_OK;
    if (c->w <= 0 && c->pKept) { /* in order: each row straight from the kept ones */
        c->bRow = rows_step(c) == SQLITE_ROW;
        if (c->bRow) {
            kept_read(c, &c->aSlot[0]);
            c->pRow = &c->aSlot[0];
            c->ts = c->pRow->a[0];
        }
        return SQLITE_OK;
    }
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
        rc = rows_step(c);
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
        rc = rows_step(c);
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

