/* The trace writer: one thread that decodes CUPTI buffers and host records into SQLite in batches. */
#include "writer.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <sqlite3.h>

#include "bufpool.h"
#include "decode.h"
#include "fsize.h"
#include "monoclock.h"
#include "ksummary.h"
#include "limit.h"
#include "ring.h"
#include "vramtrace/compact.h"
#include "vramtrace/schema.h"

#define HOST_BATCH 256        /* host records taken from the ring per lock */
#define N_DROP_KIND 9         /* loss counters written as `dropped` rows (see write_drops) */
#define MULTI_ROWS 16         /* rows per multi-row INSERT (tables without text columns) */
#define TIME_CHECK_EVERY 4096 /* activity records between two looks at the clock */

struct queued_buf {
    uint8_t *p;
    size_t n;
};

struct vt_writer {
    struct vt_writer_config cfg;
    sqlite3 *db;
    sqlite3_stmt *aStmt[VT_T__COUNT];
    sqlite3_stmt *aStmtN[VT_T__COUNT]; /* MULTI_ROWS-row INSERT; NULL for tables with text */
    struct vt__row *aHeld;             /* per table, up to MULTI_ROWS rows awaiting aStmtN */
    int64_t *aBoundVal;                /* per table, row slot, column: value bound to aStmtN */
    uint8_t *aBoundState;              /* same layout: 0 unknown, 1 NULL bound, 2 aBoundVal bound */
    unsigned anHeld[VT_T__COUNT];
    unsigned nHeld;                    /* sum of anHeld */
    struct vt__decoder dec;
    struct vt_compact cmp;                    /* compacted tables: signatures, blocks, event ids */
    struct vt__ksum ksum;                     /* always-on mode: kernels folded per period (bKsum) */
    int bKsum;
    struct vt_compact_map aCmpMap[VT_CT__COUNT]; /* a compacted table's row columns -> its parts */
    struct vt__modres *modres; /* resolves call sites' raw return addresses (writer thread) */
    struct vt__ring ring;

    /* Everything below up to the thread state is under mu. */
    pthread_mutex_t mu;
    pthread_cond_t wake; /* the writer thread waits here */
    pthread_cond_t done; /* close waits here */
    struct vt__bufpool *pool; /* the activity buffers (bufpool.h) */
    size_t nBufMax;      /* the most buffers the pool can have */
    struct queued_buf *aQueue; /* completed buffers, FIFO, capacity nBufMax */
    size_t iQueue, nQueue;
    int bWakeRing;       /* the ring is filling up */
    int bStop;           /* close asked: drain and finish */
    int bDone;           /* the thread has closed the database */
    int bOrphaned;       /* close gave up waiting: the thread frees w itself */

    pthread_t thread;
    int bStarted;
    atomic_int bAbort;   /* close is out of patience: stop decoding, finish quickly */

    /* Writer-thread state. */
    int bInTxn;
    unsigned nPending;        /* rows in the open transaction */
    uint64_t tFirstPendingMs; /* when the open transaction got its first row */
    uint64_t nMalformed;      /* buffers cut short by xNextRecord */
    uint64_t nAbandonedBufs;  /* buffers not decoded because close ran out of time */
    uint64_t nAbandonedRecs;  /* host records not decoded for the same reason */
    uint64_t aWritten[N_DROP_KIND]; /* drop counts already written as `dropped` rows (see write_drops) */
    uint64_t nReported;       /* bit per SQLite primary error code already reported on stderr */
    atomic_int bOff;          /* the file reached its size limit: nothing more is written (go_off) */
    int bOffLimit;            /* ... the limit was VRAMTRACE_MAX_BYTES (a choice, not a failure) */
    struct vt__limit lim;     /* the size bound and the recording window (limit.h) */
    sqlite3_stmt *pPageCount; /* PRAGMA page_count, when there is a size bound */
    int64_t pageSize;
    atomic_uint_fast64_t nOffRecords; /* records released unwritten since then */
    int bClosedCleanly;

    /* Statistics, readable from any thread. */
    atomic_uint_fast64_t nRecordsDecoded, nRecordsUnknown, nRowsWritten, nCommits, nDroppedWriter,
        nBuffersRefused;
};

void vt__writer_config_default(struct vt_writer_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->cbSize = sizeof *cfg;
    cfg->buffer_size = 4u << 20;
    cfg->max_memory = 256u << 20;
    cfg->host_ring_records = 65536;
    cfg->flush_ms = 500;
    cfg->batch_rows = 50000;
    cfg->corr_map_entries = 65536;
    cfg->nvtx_map_entries = 16384;
}

/* The open transaction was rolled back: its rows count as dropped, its compacted blocks and signatures are forgotten. */
static void drop_txn(struct vt_writer *w)
{
    vt__compact_forget(&w->cmp);
    if (w->bInTxn) {
        atomic_fetch_add(&w->nDroppedWriter, w->nPending);
        atomic_fetch_sub(&w->nRowsWritten, w->nPending);
        w->bInTxn = 0;
        w->nPending = 0;
    }
}

/*
 * Tracing off for good: the trace file cannot grow. One "vramtrace:" line;
 * the held rows and the open transaction are given up (counted as dropped, the
 * trace keeps every committed transaction), and from now on records are
 * released unwritten and counted (nOffRecords). Nothing more is reported.
 */
static void go_off(struct vt_writer *w)
{
    struct rlimit rl;
    char zLimit[64] = "";
    int t;
    if (w->bOff) return;
    atomic_store(&w->bOff, 1);
    if (w->bOffLimit)
        snprintf(zLimit, sizeof zLimit, " (VRAMTRACE_MAX_BYTES, %llu bytes)", (unsigned long long)w->lim.maxBytes);
    else if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(zLimit, sizeof zLimit, " (ulimit -f: %llu bytes)", (unsigned long long)rl.rlim_cur);
    fprintf(stderr,
            "vramtrace: the trace reached the largest file size allowed%s: tracing is off; %s keeps "
            "what was written until now\n",
            zLimit, sqlite3_db_filename(w->db, "main"));
    for (t = 0; t < VT_T__COUNT; t++) {
        if (vt__row_is_event(t)) atomic_fetch_add(&w->nDroppedWriter, w->anHeld[t]);
        w->anHeld[t] = 0;
    }
    w->nHeld = 0;
    if (w->bInTxn && !sqlite3_get_autocommit(w->db)) sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
    drop_txn(w);
}

/*
 * An SQLite error rc while doing zWhat: when a file reached its largest size,
 * tracing goes off (go_off); otherwise one "vramtrace:" line the first time
 * rc's primary code is met. Silent once tracing is off.
 */
static void report(struct vt_writer *w, int rc, const char *zWhat)
{
    int bit = rc & 0x3f;
    if (w->bOff) return;
    if (((rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_FULL) && vt__file_too_big(w->db)) {
        go_off(w);
        return;
    }
    if (w->nReported & (1ull << bit)) return;
    w->nReported |= 1ull << bit;
    fprintf(stderr, "vramtrace: trace write failed (%s: %s); rows not written are counted as dropped\n",
            zWhat, w->db ? sqlite3_errmsg(w->db) : sqlite3_errstr(rc));
}

/*
 * A failed statement may have rolled the open transaction back (disk full, I/O
 * error): then every row of it is lost. Count them and forget the transaction.
 */
static void check_rollback(struct vt_writer *w)
{
    if (w->bInTxn && sqlite3_get_autocommit(w->db)) drop_txn(w);
}

/* Open a transaction if none is open. Returns an SQLite code. */
static int ensure_txn(struct vt_writer *w)
{
    int rc;
    if (w->bInTxn) return SQLITE_OK;
    rc = sqlite3_exec(w->db, "BEGIN", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        report(w, rc, "begin");
        return rc;
    }
    w->bInTxn = 1;
    w->tFirstPendingMs = vt__now_ms();
    return SQLITE_OK;
}

/* Step s, which inserts nRow rows of table t; account for them. Returns an SQLite code. */
static int step_rows(struct vt_writer *w, sqlite3_stmt *s, unsigned nRow, int t)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (!vt__row_is_event(t)) nRow = 0;
    if (rc == SQLITE_DONE) {
        w->nPending += nRow;
        atomic_fetch_add_explicit(&w->nRowsWritten, nRow, memory_order_relaxed);
        return SQLITE_OK;
    }
    report(w, rc, vt__aTable[t].zName);
    atomic_fetch_add(&w->nDroppedWriter, nRow);
    vt__compact_forget(&w->cmp); /* a block or signature may be among the rows lost: later rows store theirs again */
    check_rollback(w);
    return rc;
}

/* Insert one row, already in stored form, now (opening a transaction if none is open). Returns an SQLite code. */
static int insert_row(struct vt_writer *w, const struct vt__row *pRow)
{
    sqlite3_stmt *s = w->aStmt[pRow->table];
    int rc = ensure_txn(w);
    if (rc != SQLITE_OK) {
        atomic_fetch_add(&w->nDroppedWriter, vt__row_is_event(pRow->table));
        return rc;
    }
    vt__row_bind(s, 0, pRow);
    return step_rows(w, s, 1, pRow->table);
}

/* Insert the rows held for table t: one multi-row INSERT when full, else one by one. */
static void flush_table(struct vt_writer *w, int t)
{
    const struct vt__row *aRow = &w->aHeld[(size_t)t * MULTI_ROWS];
    unsigned n = w->anHeld[t], i;
    w->anHeld[t] = 0;
    w->nHeld -= n;
    if (n == MULTI_ROWS) {
        sqlite3_stmt *s = w->aStmtN[t];
        if (ensure_txn(w) != SQLITE_OK) {
            atomic_fetch_add(&w->nDroppedWriter, vt__row_is_event(t) ? n : 0);
            return;
        }
        for (i = 0; i < n; i++) {
            size_t base = ((size_t)t * MULTI_ROWS + i) * VT__ROW_MAXCOL;
            vt__row_bind_changed(s, (int)i * vt__aTable[t].nCol, &aRow[i], &w->aBoundVal[base], &w->aBoundState[base]);
        }
        step_rows(w, s, n, t);
        return;
    }
    for (i = 0; i < n && !w->bOff; i++) insert_row(w, &aRow[i]);
    if (i < n && vt__row_is_event(t)) atomic_fetch_add(&w->nDroppedWriter, n - i); /* tracing went off on the way */
}

/* Insert every held row (before a commit). */
static void flush_held(struct vt_writer *w)
{
    int t;
    for (t = 0; t < VT_T__COUNT && w->nHeld > 0; t++)
        if (w->anHeld[t]) flush_table(w, t);
}

/* Insert one `dropped` row. */
static void insert_dropped(struct vt_writer *w, int source, const char *zWhat, uint64_t count)
{
    struct vt__row r;
    memset(&r, 0, sizeof r);
    r.table = VT_T_DROPPED;
    r.nullMask = (1u << 4) | (1u << 5) | (1u << 6) | (w->dec.lastTs ? 0 : 1u << 0);
    r.v[0].i = (int64_t)w->dec.lastTs;
    r.v[1].i = source;
    r.v[2].z = zWhat;
    r.v[3].i = (int64_t)count;
    vt__row_to_stored(&r, w->cfg.time_base_ns);
    insert_row(w, &r);
}

/*
 * Write a `dropped` row for every loss counter that grew since the last call.
 * bWithWriter also writes rows lost to SQLite errors (only at close: writing
 * them is itself an insert that may fail).
 */
static void write_drops(struct vt_writer *w, int bWithWriter)
{
    static const struct {
        int source;
        const char *zWhat;
    } aKind[N_DROP_KIND] = {
        {VT_DROP_QUEUE, "host records (queue full)"},
        {VT_DROP_MAP, "correlation map (API call evicted before its activity record)"},
        {VT_DROP_MAP, "open NVTX ranges (evicted, written without end)"},
        {VT_DROP_CUPTI, "malformed activity buffers"},
        {VT_DROP_QUEUE, "activity buffers not or only partly decoded at close (timeout)"},
        {VT_DROP_WRITER, VT_DROP_WHAT_WRITE_FAILED},
        {VT_DROP_WRITER, VT_DROP_WHAT_FSIZE_OFF},
        {VT_DROP_WRITER, VT_DROP_WHAT_LIMIT_OFF},
        {VT_DROP_WRITER, VT_DROP_WHAT_LIMIT_THIN},
    };
    uint64_t aNow[N_DROP_KIND];
    int i;
    aNow[0] = vt__ring_dropped(&w->ring) + w->nAbandonedRecs;
    aNow[1] = w->dec.nDroppedCorr;
    aNow[2] = w->dec.nDroppedNvtx;
    aNow[3] = w->nMalformed;
    aNow[4] = w->nAbandonedBufs;
    aNow[5] = bWithWriter ? atomic_load(&w->nDroppedWriter) : w->aWritten[5];
    aNow[6] = w->bOffLimit ? 0 : atomic_load(&w->nOffRecords);
    aNow[7] = w->bOffLimit ? atomic_load(&w->nOffRecords) : 0;
    aNow[8] = w->lim.nThinned;
    for (i = 0; i < N_DROP_KIND; i++) {
        if (aNow[i] > w->aWritten[i]) {
            insert_dropped(w, aKind[i].source, aKind[i].zWhat, aNow[i] - w->aWritten[i]);
            w->aWritten[i] = aNow[i];
        }
    }
}

/*
 * After a commit, with a size bound: past its mark, detail rows stop (meta size_limit_thin_ns and
 * one line); at the bound itself tracing goes off (meta size_limit_reached_ns), as at a file-size
 * limit but as a choice: the trace still closes cleanly.
 */
static void check_size(struct vt_writer *w)
{
    char z[32];
    int64_t nPages = 0;
    enum vt__limit_step step;
    if (!w->pPageCount) return;
    if (sqlite3_step(w->pPageCount) == SQLITE_ROW) nPages = sqlite3_column_int64(w->pPageCount, 0);
    sqlite3_reset(w->pPageCount);
    step = vt__limit_size(&w->lim, (uint64_t)(nPages * w->pageSize));
    if (step == VT_LIMIT_SAME) return;
    snprintf(z, sizeof z, "%llu", (unsigned long long)w->dec.lastTs);
    if (vt__meta_get(w->db, "size_limit_thin_ns", NULL, 0) != 1) {
        vt__meta_set(w->db, "size_limit_thin_ns", z);
        if (step == VT_LIMIT_THIN_NOW)
            fprintf(stderr,
                    "vramtrace: the trace reached %d%% of VRAMTRACE_MAX_BYTES (%llu bytes): from now on only "
                    "allocations, frees, pool events and OOMs are written to %s\n",
                    VT_LIMIT_THIN_PERCENT, (unsigned long long)w->lim.maxBytes, sqlite3_db_filename(w->db, "main"));
    }
    if (step == VT_LIMIT_FULL_NOW) {
        vt__meta_set(w->db, "size_limit_reached_ns", z);
        w->bOffLimit = 1;
        go_off(w);
    }
}

/* Commit the open transaction (after recording new losses in it). Returns an SQLite code. */
static int commit(struct vt_writer *w)
{
    uint64_t aSaved[N_DROP_KIND];
    int rc;
    if (w->bOff) return SQLITE_OK;
    flush_held(w);
    if (!w->bInTxn) return SQLITE_OK;
    memcpy(aSaved, w->aWritten, sizeof aSaved);
    write_drops(w, 0);
    if (!w->bInTxn) { /* rolled back while writing them: they are still to be written */
        memcpy(w->aWritten, aSaved, sizeof aSaved);
        return SQLITE_OK;
    }
    vt__meta_set_i64(w->db, VT_FOLD_NEXT_KEY, w->cmp.aSeq[VT_CT_api_call].nextId); /* ids folded calls took */
    rc = sqlite3_exec(w->db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK) {
        if (w->nPending > 0) atomic_fetch_add(&w->nCommits, 1);
        w->bInTxn = 0;
        w->nPending = 0;
        check_size(w);
    } else {
        memcpy(w->aWritten, aSaved, sizeof aSaved);
        report(w, rc, "commit");
        if (!sqlite3_get_autocommit(w->db)) sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
        vt__compact_forget(&w->cmp);
        atomic_fetch_add(&w->nDroppedWriter, w->nPending);
        atomic_fetch_sub(&w->nRowsWritten, w->nPending);
    }
    w->bInTxn = 0;
    w->nPending = 0;
    return rc;
}

/* Commit if the open transaction is older than flush_ms. */
static void commit_if_due(struct vt_writer *w)
{
    if (w->bInTxn && vt__now_ms() - w->tFirstPendingMs >= w->cfg.flush_ms) commit(w);
}

/*
 * Write one row in stored form: rows without text are held and inserted
 * MULTI_ROWS at a time (text may point into a buffer about to be recycled, so
 * those rows go in at once).
 */
static void store_row(struct vt_writer *w, const struct vt__row *pRow)
{
    int t = pRow->table;
    if (w->aStmtN[t]) {
        if (ensure_txn(w) != SQLITE_OK) {
            atomic_fetch_add(&w->nDroppedWriter, vt__row_is_event(t));
            return;
        }
        w->aHeld[(size_t)t * MULTI_ROWS + w->anHeld[t]++] = *pRow;
        w->nHeld++;
        if (w->anHeld[t] == MULTI_ROWS) flush_table(w, t);
    } else {
        insert_row(w, pRow);
    }
}

/* Write a row of a compacted table (stored form) as its parts: a new block, a new signature, the event. */
static void store_compact(struct vt_writer *w, const struct vt__row *pRow)
{
    struct vt__row aPart[3];
    int n = vt__row_compact(&w->cmp, &w->aCmpMap[vt__aTable[pRow->table].compact - 1], pRow, aPart);
    for (int p = 0; p < n; p++) store_row(w, &aPart[p]);
}

/* Write event row r (stored form), a compacted table's as its parts. Commits when the batch is full. */
static void store_event(struct vt_writer *w, const struct vt__row *r)
{
    if (vt__aTable[r->table].compact) store_compact(w, r);
    else store_row(w, r);
    if (w->nPending + w->nHeld >= w->cfg.batch_rows) commit(w);
}

/* Write row pRow (absolute times) if the size bound and the recording window keep it. */
static void keep_row(void *pCtx, const struct vt__row *pRow)
{
    struct vt_writer *w = pCtx;
    struct vt__row r;
    if (!vt__limit_keep(&w->lim, pRow)) return;
    r = *pRow;
    vt__row_to_stored(&r, w->cfg.time_base_ns);
    store_event(w, &r);
}

/* Decoder emit callback: a row for keep_row, unless the always-on mode folds it. */
static void emit_row(void *pCtx, const struct vt__row *pRow)
{
    struct vt_writer *w = pCtx;
    if (w->bOff) { /* the rest of a record that was being decoded when tracing went off */
        if (w->bOffLimit) atomic_fetch_add_explicit(&w->nOffRecords, 1, memory_order_relaxed);
        else atomic_fetch_add(&w->nDroppedWriter, 1);
        return;
    }
    if (w->bKsum && vt__ksum_take(&w->ksum, pRow)) return;
    keep_row(w, pRow);
}

/*
 * Decoder fold callback (schema 6): call pCall stored folded into its activity row pAct when the
 * always-on mode, the size bound and the recording window keep both; else each as emit_row takes it.
 */
static void emit_fold(void *pCtx, const struct vt__row *pAct, const struct vt__row *pCall)
{
    struct vt_writer *w = pCtx;
    struct vt__row a = *pAct, c = *pCall, sig;
    int bCall, bAct;
    if (w->bOff) {
        emit_row(w, pCall);
        emit_row(w, pAct);
        return;
    }
    /* the always-on mode takes no row of these (launch calls, kernels): a free's makes it write its uses first */
    if (w->bKsum) (void)vt__ksum_take(&w->ksum, pCall);
    bCall = vt__limit_keep(&w->lim, pCall);
    bAct = vt__limit_keep(&w->lim, pAct);
    vt__row_to_stored(&c, w->cfg.time_base_ns);
    vt__row_to_stored(&a, w->cfg.time_base_ns);
    if (bCall && bAct) {
        if (vt__row_fold(&w->cmp, &w->aCmpMap[VT_CT_api_call], &a, &c, &sig)) store_row(w, &sig);
        store_event(w, &a);
        return;
    }
    if (bCall) store_event(w, &c);
    if (bAct) store_event(w, &a);
}

/* Publish the decoder's counters to the statistics. */
static void publish_stats(struct vt_writer *w)
{
    atomic_store(&w->nRecordsDecoded, w->dec.nDecoded);
    atomic_store(&w->nRecordsUnknown, w->dec.nUnknown);
}

/* Decode every record of one completed buffer. */
static void decode_buffer(struct vt_writer *w, uint8_t *pBuf, size_t n)
{
    void *pRec = NULL;
    unsigned nSince = 0;
    int rc;
    if (!w->cfg.xNextRecord) return;
    while ((rc = w->cfg.xNextRecord(pBuf, n, &pRec)) == 0 && pRec) {
        if (atomic_load_explicit(&w->bAbort, memory_order_relaxed)) {
            w->nAbandonedBufs++; /* close is out of time: the rest of this buffer is lost */
            break;
        }
        if (w->bOff) { /* counted, not decoded: nothing can be written */
            atomic_fetch_add_explicit(&w->nOffRecords, 1, memory_order_relaxed);
            continue;
        }
        vt__decode_activity(&w->dec, (const CUpti_Activity *)pRec);
        if (++nSince == TIME_CHECK_EVERY) {
            nSince = 0;
            commit_if_due(w);
        }
    }
    if (rc < 0) w->nMalformed++;
    publish_stats(w);
}

/* Drain the host ring. bAbandon: release records without decoding them (counted). */
static size_t drain_ring(struct vt_writer *w, int bAbandon)
{
    struct vt_hrec aRec[HOST_BATCH];
    size_t n, i, nTotal = 0;
    /* Bounded per call: producers may keep adding while we decode. */
    while (nTotal < w->ring.nCap && (n = vt__ring_pop(&w->ring, aRec, HOST_BATCH)) > 0) {
        for (i = 0; i < n; i++) {
            if (bAbandon) {
                vt__hrec_release(&aRec[i]);
                w->nAbandonedRecs++;
            } else if (w->bOff) {
                vt__hrec_release(&aRec[i]);
                atomic_fetch_add_explicit(&w->nOffRecords, 1, memory_order_relaxed);
            } else {
                vt__decode_host(&w->dec, &aRec[i]);
            }
        }
        nTotal += n;
        commit_if_due(w);
    }
    return nTotal;
}

/* Return a decoded buffer to the pool (caller holds mu). */
static void recycle_locked(struct vt_writer *w, uint8_t *p)
{
    vt__bufpool_recycle(w->pool, p);
}

/*
 * One writer cycle: take the queued buffers first, then drain the host ring,
 * then decode the buffers. Host records submitted before a buffer are thus
 * always decoded before it (the correlation join depends on it).
 */
static int cycle(struct vt_writer *w, struct queued_buf *aTake)
{
    size_t nTake = 0, i, nHost;
    int bAbort = atomic_load(&w->bAbort);
    pthread_mutex_lock(&w->mu);
    while (w->nQueue > 0) {
        aTake[nTake++] = w->aQueue[w->iQueue];
        w->iQueue = (w->iQueue + 1) % w->nBufMax;
        w->nQueue--;
    }
    w->bWakeRing = 0;
    pthread_mutex_unlock(&w->mu);

    vt__decoder_age(&w->dec, vt__now_ms(), 4 * (uint64_t)w->cfg.flush_ms); /* late records: their calls written alone */
    nHost = drain_ring(w, bAbort);
    for (i = 0; i < nTake; i++) {
        if (!bAbort) bAbort = atomic_load(&w->bAbort);
        if (bAbort) w->nAbandonedBufs++;
        else decode_buffer(w, aTake[i].p, aTake[i].n);
        commit_if_due(w);
    }
    if (nTake) {
        pthread_mutex_lock(&w->mu);
        for (i = 0; i < nTake; i++) recycle_locked(w, aTake[i].p);
        pthread_mutex_unlock(&w->mu);
    }
    commit_if_due(w);
    return nTake > 0 || nHost > 0;
}

/* Meta value from an unsigned counter. */
static void meta_u64(struct vt_writer *w, const char *zKey, uint64_t v)
{
    char z[32];
    snprintf(z, sizeof z, "%llu", (unsigned long long)v);
    vt__meta_set(w->db, zKey, z);
}

/*
 * Close the trace: open NVTX ranges, losses, commit; then the closing meta rows
 * and (unless close ran out of time) a WAL checkpoint so the trace is a single
 * file; then close the connection. No index: the analyzer builds them (schema.h).
 * With tracing off (go_off), the closing rows are tried after a checkpoint that
 * may make room in the WAL; they may still not fit, silently.
 */
static void finish_db(struct vt_writer *w)
{
    int bAbort = atomic_load(&w->bAbort), rc, i;
    size_t nAtCupti;
    vt__decoder_finish(&w->dec);
    if (w->bKsum && !w->bOff) vt__ksum_finish(&w->ksum);
    publish_stats(w);
    commit(w);
    if (w->bOff) sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    rc = sqlite3_exec(w->db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK) {
        w->bInTxn = 1;
        write_drops(w, 1);
        {
            /* The glue's end_ns (the clock at exit) wins; else the latest timestamp seen. */
            char z[32];
            if (vt__meta_get(w->db, "end_ns", z, sizeof z) != 1) meta_u64(w, "end_ns", w->dec.lastTs);
        }
        meta_u64(w, "records_decoded", w->dec.nDecoded);
        meta_u64(w, "records_unknown", w->dec.nUnknown);
        meta_u64(w, "records_time_unknown", w->dec.nTimeUnknown);
        meta_u64(w, "memory_records_superseded", w->dec.nMemSuperseded);
        if (w->dec.nNotDecoded) meta_u64(w, "records_not_decoded", w->dec.nNotDecoded);
        meta_u64(w, "rows_written", atomic_load(&w->nRowsWritten));
        meta_u64(w, "commits", atomic_load(&w->nCommits));
        meta_u64(w, "dropped_queue", vt__ring_dropped(&w->ring) + w->nAbandonedRecs);
        meta_u64(w, "dropped_writer", atomic_load(&w->nDroppedWriter) + atomic_load(&w->nOffRecords));
        meta_u64(w, "dropped_map", w->dec.nDroppedCorr + w->dec.nDroppedNvtx);
        if (w->cmp.nSigReset) meta_u64(w, "compact_signatures_restored", w->cmp.nSigReset);
        if (w->bKsum) {
            meta_u64(w, "kernel_summary_from_ns", (uint64_t)w->ksum.startNs);
            meta_u64(w, "kernel_summary_kernels", w->ksum.nKernels);
            meta_u64(w, "kernel_summary_launches", w->ksum.nLaunches);
            meta_u64(w, "kernel_summary_uses", w->ksum.nUses);
        }
        if (w->lim.startNs != INT64_MIN || w->lim.stopNs != INT64_MAX)
            meta_u64(w, "window_rows_skipped", w->lim.nOutside);
        pthread_mutex_lock(&w->mu);
        nAtCupti = vt__bufpool_at_cupti(w->pool);
        pthread_mutex_unlock(&w->mu);
        /* buffers CUPTI never returned: their records are not in the trace (and they are not freed) */
        meta_u64(w, "activity_buffers_not_returned", nAtCupti);
        vt__meta_set(w->db, "closed_cleanly", bAbort || (w->bOff && !w->bOffLimit) ? "0" : "1");
        rc = sqlite3_exec(w->db, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            report(w, rc, "closing commit");
            sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
        }
        w->bInTxn = 0;
        w->nPending = 0;
    }
    /* Clean: everything drained and written, nothing lost to SQLite errors. */
    w->bClosedCleanly = !bAbort && (!w->bOff || w->bOffLimit) && rc == SQLITE_OK && atomic_load(&w->nDroppedWriter) == 0;
    for (i = 0; i < VT_T__COUNT; i++) {
        sqlite3_finalize(w->aStmt[i]);
        sqlite3_finalize(w->aStmtN[i]);
        w->aStmt[i] = w->aStmtN[i] = NULL;
    }
    sqlite3_finalize(w->pPageCount);
    w->pPageCount = NULL;
    if (!bAbort) sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    /* A whole trace leaves WAL mode: one file, which readers open without making -wal, -shm beside it.
     * Through MEMORY: no journal file, so a process ending during the switch (an exit racing a close on
     * another thread) leaves no hot journal for read-only readers. A reader now keeps WAL: harmless. */
    if (w->bClosedCleanly) sqlite3_exec(w->db, "PRAGMA journal_mode=MEMORY", NULL, NULL, NULL);
    /* The last connection to close a WAL database checkpoints and removes the -wal file. */
    sqlite3_close_v2(w->db);
    w->db = NULL;
}

/* vt__writer_close's result once the thread is done (see writer.h). */
static int close_result(struct vt_writer *w)
{
    return w->bClosedCleanly ? 0 : atomic_load(&w->bOff) ? -EFBIG : -EIO;
}

/* Free everything w owns (the database must already be closed). */
static void free_writer(struct vt_writer *w)
{
    int t;
    for (t = 0; t < VT_T__COUNT; t++) {
        sqlite3_finalize(w->aStmt[t]);
        sqlite3_finalize(w->aStmtN[t]);
    }
    sqlite3_finalize(w->pPageCount);
    free(w->aHeld);
    free(w->aBoundVal);
    free(w->aBoundState);
    if (w->db) sqlite3_close_v2(w->db);
    vt__decoder_free(&w->dec);
    vt__compact_free(&w->cmp);
    if (w->bKsum) vt__ksum_free(&w->ksum);
    vt__modres_close(w->modres);
    vt__ring_free(&w->ring);
    vt__bufpool_close(w->pool); /* a buffer CUPTI still holds is never freed */
    free(w->aQueue);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->wake);
    pthread_cond_destroy(&w->done);
    free(w);
}

/* Drain everything queued: loop cycles until the queue and ring are empty. */
static void drain_all(struct vt_writer *w, struct queued_buf *aTake)
{
    for (;;) {
        int bEmpty;
        cycle(w, aTake);
        pthread_mutex_lock(&w->mu);
        bEmpty = w->nQueue == 0;
        pthread_mutex_unlock(&w->mu);
        if (bEmpty && vt__ring_count(&w->ring) == 0) break;
    }
}

/* The writer thread: cycles until close asks it to stop, then drains and closes the trace. */
static void *writer_main(void *pArg)
{
    struct vt_writer *w = pArg;
    struct queued_buf *aTake = malloc((w->nBufMax ? w->nBufMax : 1) * sizeof *aTake);
    unsigned tick = w->cfg.flush_ms / 4;
    int bOrphaned;
    if (tick < 2) tick = 2;
    if (tick > 100) tick = 100;
    if (aTake) {
        for (;;) {
            int bStop;
            struct timespec until;
            pthread_mutex_lock(&w->mu);
            until = vt__deadline_in(tick);
            while (!w->bStop && w->nQueue == 0 && !w->bWakeRing) {
                if (pthread_cond_timedwait(&w->wake, &w->mu, &until) == ETIMEDOUT) break;
            }
            bStop = w->bStop;
            pthread_mutex_unlock(&w->mu);
            if (bStop) break;
            cycle(w, aTake);
        }
        drain_all(w, aTake);
    } else {
        report(w, SQLITE_NOMEM, "writer start");
        atomic_store(&w->bAbort, 1);
        drain_ring(w, 1);
    }
    finish_db(w);
    free(aTake);
    pthread_mutex_lock(&w->mu);
    w->bDone = 1;
    bOrphaned = w->bOrphaned;
    pthread_cond_broadcast(&w->done);
    pthread_mutex_unlock(&w->mu);
    if (bOrphaned) free_writer(w);
    return NULL;
}

struct vt_writer *vt__writer_open(const char *zPath, const struct vt_writer_config *cfg, char *zErr,
                                  size_t nErr)
{
    struct vt_writer *w = NULL;
    struct vt__decoder_config dc;
    struct vt__xfsz_guard xg;
    pthread_condattr_t ca;
    struct stat st;
    char *zMsg = NULL;
    size_t ringBytes, nMeta = 0;
    int rc, i, bGuard = 0;

    w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(zErr, nErr, "out of memory");
        return NULL;
    }
    vt__writer_config_default(&w->cfg);
    if (cfg) memcpy(&w->cfg, cfg, cfg->cbSize < sizeof w->cfg ? cfg->cbSize : sizeof w->cfg);
    w->cfg.cbSize = sizeof w->cfg;
    if (!w->cfg.buffer_size) w->cfg.buffer_size = 4u << 20;
    w->cfg.buffer_size = (w->cfg.buffer_size + 7) & ~(size_t)7;
    if (!w->cfg.host_ring_records) w->cfg.host_ring_records = 65536;
    if (!w->cfg.flush_ms || w->cfg.flush_ms > 1000) w->cfg.flush_ms = w->cfg.flush_ms ? 1000 : 500;
    if (!w->cfg.batch_rows) w->cfg.batch_rows = 50000;
    w->cfg.batch_rows = vt__limit_batch_rows(w->cfg.max_bytes, w->cfg.batch_rows);
    vt__limit_init(&w->lim, w->cfg.max_bytes, w->cfg.time_base_ns,
                   w->cfg.start_after_ns > 0 ? w->cfg.start_after_ns : -1,
                   w->cfg.stop_after_ns > 0 ? w->cfg.stop_after_ns : -1);
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->wake, &ca);
    pthread_cond_init(&w->done, &ca);
    pthread_condattr_destroy(&ca);

    ringBytes = w->cfg.host_ring_records * sizeof(struct vt_hrec);
    if (w->cfg.max_memory < ringBytes + w->cfg.buffer_size) {
        snprintf(zErr, nErr, "memory bound %zu bytes is below one buffer plus the host ring (%zu)",
                 w->cfg.max_memory, ringBytes + w->cfg.buffer_size);
        goto fail;
    }
    w->pool = vt__bufpool_open(w->cfg.max_memory - ringBytes, w->cfg.buffer_size);
    w->nBufMax = w->pool ? vt__bufpool_capacity(w->pool) : 0;
    w->aQueue = w->nBufMax ? calloc(w->nBufMax, sizeof *w->aQueue) : NULL;
    memset(&dc, 0, sizeof dc);
    dc.corr_entries = w->cfg.corr_map_entries;
    dc.nvtx_entries = w->cfg.nvtx_map_entries;
    dc.modres = w->modres = vt__modres_open(0);
    w->aHeld = calloc((size_t)VT_T__COUNT * MULTI_ROWS, sizeof *w->aHeld);
    w->aBoundVal = calloc((size_t)VT_T__COUNT * MULTI_ROWS * VT__ROW_MAXCOL, sizeof *w->aBoundVal);
    w->aBoundState = calloc((size_t)VT_T__COUNT * MULTI_ROWS * VT__ROW_MAXCOL, sizeof *w->aBoundState);
    if (!w->pool || !w->aQueue || !w->modres || !w->aHeld || !w->aBoundVal || !w->aBoundState ||
        vt__compact_init(&w->cmp, 0, NULL) || vt__ring_init(&w->ring, w->cfg.host_ring_records) ||
        (w->cfg.kernel_period_ns > 0 &&
         (w->bKsum = vt__ksum_init(&w->ksum, w->cfg.time_base_ns + (w->cfg.kernel_warmup_ns > 0 ? w->cfg.kernel_warmup_ns : 0),
                                   w->cfg.kernel_period_ns, keep_row, w) == 0) == 0) ||
        vt__decoder_init(&w->dec, &dc, emit_row, w)) {
        snprintf(zErr, nErr, "out of memory");
        goto fail;
    }
    w->dec.xEmitFold = emit_fold; /* calls folded into their activity rows (schema 6) */

    if (stat(zPath, &st) == 0 && st.st_size > 0) {
        snprintf(zErr, nErr, "%s: not empty: a new trace needs an empty file", zPath);
        goto fail;
    }
    /* One thread at a time uses the connection (open, then the writer thread): no SQLite mutexes. */
    vt__xfsz_begin(&xg);
    bGuard = 1;
    rc = sqlite3_open_v2(zPath, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                         NULL);
    /* a reader opening the new file at this moment (`vramtrace info` on a starting job) holds a
     * shared lock: wait for it a little instead of failing to start */
    if (rc == SQLITE_OK) sqlite3_busy_timeout(w->db, 1000);
    if (rc == SQLITE_OK) rc = sqlite3_exec(w->db, "PRAGMA journal_mode=WAL", NULL, NULL, &zMsg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(w->db,
                          "PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16384;"
                          " PRAGMA wal_autocheckpoint=4096;",
                          NULL, NULL, &zMsg);
    if (rc == SQLITE_OK) rc = vt__schema_create_at(w->db, w->cfg.time_base_ns, &zMsg);
    if (rc == SQLITE_OK && w->cfg.xMeta && (rc = vt__meta_commit(w->db, w->cfg.xMeta, w->cfg.pMetaCtx, &nMeta)) == 0)
        atomic_store(&w->nRowsWritten, nMeta); /* rows written, as when meta rows came through the ring */
    for (i = 0; rc == SQLITE_OK && i < VT_T__COUNT; i++) {
        if (vt__aTable[i].compact) { /* written as its parts */
            if (vt__row_compact_map(i, &w->aCmpMap[vt__aTable[i].compact - 1])) rc = SQLITE_INTERNAL;
            continue;
        }
        rc = sqlite3_prepare_v3(w->db, vt__aTable[i].zInsert, -1, SQLITE_PREPARE_PERSISTENT,
                                &w->aStmt[i], NULL);
        if (rc == SQLITE_OK && vt__aTable[i].textMask == 0)
            rc = vt__row_prepare_multi(w->db, &vt__aTable[i], &w->aStmtN[i], MULTI_ROWS);
    }
    if (rc == SQLITE_OK && w->cfg.max_bytes) {
        sqlite3_stmt *p = NULL;
        rc = sqlite3_prepare_v2(w->db, "PRAGMA page_size", -1, &p, NULL);
        if (rc == SQLITE_OK && sqlite3_step(p) == SQLITE_ROW) w->pageSize = sqlite3_column_int64(p, 0);
        sqlite3_finalize(p);
        if (rc == SQLITE_OK)
            rc = sqlite3_prepare_v3(w->db, "PRAGMA page_count", -1, SQLITE_PREPARE_PERSISTENT, &w->pPageCount, NULL);
    }
    if (rc != SQLITE_OK && vt__file_too_big(w->db)) {
        struct rlimit rl;
        unsigned long long lim = getrlimit(RLIMIT_FSIZE, &rl) == 0 ? (unsigned long long)rl.rlim_cur : 0;
        snprintf(zErr, nErr, "%s: the largest file size allowed (ulimit -f: %llu bytes) is too small for a trace",
                 zPath, lim);
        goto fail;
    }
    if (rc != SQLITE_OK) {
        snprintf(zErr, nErr, "%s: %s", zPath,
                 zMsg ? zMsg : w->db ? sqlite3_errmsg(w->db) : sqlite3_errstr(rc));
        goto fail;
    }
    vt__xfsz_end(&xg);
    return w;

fail:
    sqlite3_free(zMsg);
    free_writer(w); /* closing the connection may write too: still under the guard */
    if (bGuard) vt__xfsz_end(&xg);
    return NULL;
}

int vt__writer_start(struct vt_writer *w)
{
    sigset_t all, old;
    int rc;
    if (!w || w->bStarted) return -EINVAL;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits the mask: all blocked */
    rc = pthread_create(&w->thread, NULL, writer_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) return -rc;
    w->bStarted = 1;
    return 0;
}

uint8_t *vt__writer_buffer_alloc(struct vt_writer *w, size_t *pSize)
{
    uint8_t *p;
    pthread_mutex_lock(&w->mu);
    p = vt__bufpool_get(w->pool, pSize);
    pthread_mutex_unlock(&w->mu);
    if (!p) atomic_fetch_add(&w->nBuffersRefused, 1);
    return p;
}

void vt__writer_buffer_submit(struct vt_writer *w, uint8_t *pBuf, size_t validSize)
{
    size_t size;
    if (!pBuf) return;
    pthread_mutex_lock(&w->mu);
    size = vt__bufpool_returned(w->pool, pBuf); /* 0: not one of ours handed out: ignored */
    if (size && validSize == 0) {
        recycle_locked(w, pBuf);
    } else if (size) {
        /* Never full: the queue has room for every buffer that exists. */
        w->aQueue[(w->iQueue + w->nQueue) % w->nBufMax].p = pBuf;
        w->aQueue[(w->iQueue + w->nQueue) % w->nBufMax].n = validSize < size ? validSize : size;
        w->nQueue++;
        pthread_cond_signal(&w->wake);
    }
    pthread_mutex_unlock(&w->mu);
}

int vt__writer_submit(struct vt_writer *w, const struct vt_hrec *rec)
{
    long n = vt__ring_push(&w->ring, rec);
    if (n < 0) return -1;
    if ((size_t)n == (w->ring.nCap + 1) / 2) {
        pthread_mutex_lock(&w->mu);
        w->bWakeRing = 1;
        pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->mu);
    }
    return 0;
}

uint64_t vt__writer_dropped(const struct vt_writer *w)
{
    return vt__ring_dropped((struct vt__ring *)&w->ring);
}

int vt__writer_close(struct vt_writer *w, unsigned timeout_ms)
{
    struct timespec until;
    int rc = 0;
    if (!w) return -EINVAL;
    if (!w->bStarted) {
        /* Never started: drain and close on the caller's thread. */
        struct queued_buf *aTake = malloc((w->nBufMax ? w->nBufMax : 1) * sizeof *aTake);
        struct vt__xfsz_guard xg;
        vt__xfsz_begin(&xg);
        if (aTake) drain_all(w, aTake);
        else drain_ring(w, 1);
        free(aTake);
        finish_db(w);
        rc = close_result(w);
        free_writer(w);
        vt__xfsz_end(&xg);
        return rc;
    }
    pthread_mutex_lock(&w->mu);
    w->bStop = 1;
    pthread_cond_signal(&w->wake);
    until = vt__deadline_in(timeout_ms - timeout_ms / 4);
    while (!w->bDone && pthread_cond_timedwait(&w->done, &w->mu, &until) != ETIMEDOUT) {
    }
    if (!w->bDone) {
        /* Out of patience: stop decoding, close what is written. */
        atomic_store(&w->bAbort, 1);
        until = vt__deadline_in(timeout_ms / 4);
        while (!w->bDone && pthread_cond_timedwait(&w->done, &w->mu, &until) != ETIMEDOUT) {
        }
    }
    if (!w->bDone) {
        w->bOrphaned = 1; /* the thread frees w when it gets there */
        pthread_mutex_unlock(&w->mu);
        pthread_detach(w->thread);
        return -ETIMEDOUT;
    }
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    rc = close_result(w);
    free_writer(w);
    return rc;
}

void vt__writer_abandon(struct vt_writer *w)
{
    (void)w; /* the parent's: its memory, locks and connection are left exactly as they are */
}

void vt__writer_fork_prepare(struct vt_writer *w)
{
    if (!w) return;
    pthread_mutex_lock(&w->ring.mu);
    pthread_mutex_lock(&w->mu);
}

void vt__writer_fork_parent(struct vt_writer *w)
{
    if (!w) return;
    pthread_mutex_unlock(&w->mu);
    pthread_mutex_unlock(&w->ring.mu);
}

void vt__writer_stats(const struct vt_writer *w, struct vt_writer_stats *pStats)
{
    struct vt_writer *m = (struct vt_writer *)w;
    memset(pStats, 0, sizeof *pStats);
    pStats->records_decoded = atomic_load(&m->nRecordsDecoded);
    pStats->records_unknown = atomic_load(&m->nRecordsUnknown);
    pStats->rows_written = atomic_load(&m->nRowsWritten);
    pStats->commits = atomic_load(&m->nCommits);
    pStats->dropped_queue = vt__ring_dropped(&m->ring);
    pStats->dropped_writer = atomic_load(&m->nDroppedWriter);
    pStats->buffers_refused = atomic_load(&m->nBuffersRefused);
    pStats->dropped_off = atomic_load(&m->nOffRecords);
    pStats->tracing_off = atomic_load(&m->bOff);
}
