/* Compact rows (schema 5) and folded calls (schema 6): the views and triggers of the compacted tables, and turning events into their stored parts. */
#ifndef VRAMTRACE_COMPACT_H
#define VRAMTRACE_COMPACT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "vramtrace/schema.h"

/*
 * schema.h ("Compact rows") describes the layout: per compacted table a signature table
 * (<name>_sig), a row table (<name>_row) and its anchors (<name>_block), read through a view of
 * the table's version-4 name. Shared by the tracer's writer and the importers' builder
 * (both write the parts directly) and by every reader (the views' text, for the read layer's
 * check that a trace's views are the ones this build writes).
 */

#define VT_COMPACT_MAXSIG 16 /* signature columns of the widest table (kernel) */
#define VT_COMPACT_MAXOWN 7  /* own columns of the widest table (memcpy: bytes, src, dst and the folded call's) */

/* One compacted table's columns (from VT_COMPACT_TABLES). */
struct vt_compact_spec {
    const char *zName;                 /* the view: "kernel" */
    const char *const *azSig;          /* signature columns, nSig of them */
    const char *const *azSigCons;      /* their constraints as version 4 declared them ("", " NOT NULL", ...) */
    int nSig;
    const char *const *azOwn;          /* own columns besides dt, dur, sig, dc */
    const char *const *azOwnCons;
    int nOwn;
    const char *zCols;                 /* the view's columns after id, t, dur, start, end */
    const char *zSigInsert, *zRowInsert; /* INSERT INTO <name>_sig(id, sig...), <name>_row(id, dt, dur, sig, dc, own...) */
    const char *zBlockInsert;          /* INSERT INTO <name>_block(id, t, correlation) */
    const char *zDdl;                  /* CREATE TABLE <name>_sig, <name>_row, <name>_block */
};
extern const struct vt_compact_spec vt__aCompact[VT_CT__COUNT];

/*
 * The CREATE VIEW statement of compacted table iTab for time base `base`, exactly as
 * vt__compact_create writes it (sqlite3_malloc'd; NULL when out of memory).
 */
char *vt__compact_view_sql(int iTab, int64_t base);

/* The same as schema `version` (5 or later) wrote it: version 5's api_call view has no folded calls. */
char *vt__compact_view_sql_version(int iTab, int64_t base, int version);

/*
 * Create the views and their INSTEAD OF triggers of every compacted table, and memory_event's
 * triggers of folded calls (the tables exist). SQLite code.
 */
int vt__compact_create(sqlite3 *db, int64_t base, char **pzErr);
/* The view and triggers of compacted table iTab alone, as schema `version` (5 or later) has them. SQLite code. */
int vt__compact_create_one(sqlite3 *db, int iTab, int64_t base, int version, char **pzErr);

/*
 * Folded calls (schema 6, schema.h VT_CALL_FOLD; tracer/compact.c). The api_call view is api_call_row's
 * rows and, UNION ALL, the calls folded into memcpy_row, memset_row and memory_event.
 */
/*
 * meta key: the api_call ids below its value are taken (by calls stored alone or folded); kept by
 * every writer that folds (the tracer's writer at each commit, the upgrade), so that an id given
 * through the view needs no scan of the folded calls' tables.
 */
#define VT_FOLD_NEXT_KEY "api_call_next_id"
/* Append to s the view's folded part (" UNION ALL SELECT ..." per table), times offset by zBase. */
void vt__fold_view_arms(sqlite3_str *s, const char *zBase);
/* Append to s the statement of a trigger on the view of iTab (memcpy or memset) that stores the call folded into row OLD as a row of its own. */
void vt__fold_unfold_sql(sqlite3_str *s, int iTab);
/* Append to s the statements that clear the folded call columns of the rows matching zWhere (over call_id). */
void vt__fold_clear_sql(sqlite3_str *s, const char *zWhere);
/* Create memory_event's triggers that store a folded call as a row of its own before its row is deleted or changed. SQLite code. */
int vt__fold_create(sqlite3 *db, char **pzErr);
/* Add the folded call columns to memcpy_row, memset_row and memory_event where they lack them (a version-5 trace). SQLite code. */
int vt__fold_columns_add(sqlite3 *db, char **pzErr);
/*
 * Fold the calls stored as rows (api_call_row) into their activity rows where these hold exactly
 * the call's values and both correlation ids are unique; their rows are deleted. The api_call
 * view shows the same rows, ids and values before and after. SQLite code.
 */
int vt__fold_stored(sqlite3 *db, char **pzErr);

/*
 * Where each column of a caller's row of compacted table iTab goes: built once from the
 * caller's column names (vt__compact_map), used per row (vt__compact_add).
 */
struct vt_compact_map {
    int iTab;
    int iT, iDur, iCorr;               /* the caller's columns of t, dur and correlation; -1: none (NULL) */
    signed char aSig[VT_COMPACT_MAXSIG]; /* the caller's column of each signature column; -1: none (NULL) */
    signed char aOwn[VT_COMPACT_MAXOWN]; /* the same for the own columns */
};

/*
 * Map the caller's columns azCol[0..nCol) of compacted table iTab. The time column is named
 * "t" (stored form: ns since the time base) and the end "dur"; columns not named are NULL; a
 * name the table lacks is an error. 0, or -1 with *pzWhat set to the offending name (static or
 * from azCol).
 */
int vt__compact_map(int iTab, const char *const *azCol, int nCol, struct vt_compact_map *pMap, const char **pzWhat);

/* What a compacted event is stored as: up to three rows, each for one table. */
enum { VT_CP_BLOCK = 0, VT_CP_SIG, VT_CP_ROW };
struct vt_compact_part {
    int kind;            /* VT_CP_*: <table>_block, <table>_sig, <table>_row */
    int bNext;           /* ROW: its id follows the id of the table's row given before, which the writer stored: an
                          * INSERT may leave the id to SQLite (rowid = max + 1), which appends without a search */
    int iTab;            /* the compacted table */
    int nCol;            /* values, in the order of zBlockInsert, zSigInsert, zRowInsert */
    uint32_t nullMask;   /* bit i: value i is NULL */
    int64_t a[1 + VT_COMPACT_MAXSIG + 4];
};

/* The compactor of one trace being written. */
struct vt_compact_sigmap {
    uint64_t *aHash;  /* 0: an empty slot */
    int64_t *aId;
    int64_t *aKey;    /* nSig values per slot */
    uint32_t *aNull;
    size_t nSlot, nUsed;
};
struct vt_compact_seq {
    int64_t nextId;    /* the next event id */
    int64_t lastId;    /* the id of the row given before, when stored for sure (-1: unknown) */
    int64_t block;     /* the block of the last event (-1: none yet in this session) */
    int64_t blockT, blockCorr;
    int64_t lastT, lastCorr; /* the last known values: anchors of a block whose first event lacks its own */
    int64_t nextSig;
};
struct vt_compact {
    struct vt_compact_seq aSeq[VT_CT__COUNT];
    struct vt_compact_sigmap aMap[VT_CT__COUNT];
    uint64_t nSigReset; /* times a full signature cache was emptied (its signatures are then stored again) */
};

/*
 * Prepare c for an empty trace, or, with db not NULL, for appending to db's compacted tables
 * (ids and signature ids after those stored). nSigSlots: signature cache slots per table (a
 * power of two; 0 takes 4096), bounding memory. 0 or -ENOMEM (or an SQLite error as -1).
 */
int vt__compact_init(struct vt_compact *c, size_t nSigSlots, sqlite3 *db);
void vt__compact_free(struct vt_compact *c);

/*
 * Store one event of compacted table pMap->iTab given as the caller's row (aVal, with its NULL
 * mask): writes into aOut (3 parts at most) the rows to insert, in order (a new block, a new
 * signature, the event row), and returns how many.
 */
int vt__compact_add(struct vt_compact *c, const struct vt_compact_map *pMap, const int64_t *aVal, uint32_t nullMask,
                    struct vt_compact_part *aOut);
/* vt__compact_add with the event's own id (> every id given before: ids only grow). */
int vt__compact_add_id(struct vt_compact *c, const struct vt_compact_map *pMap, int64_t id, const int64_t *aVal,
                       uint32_t nullMask, struct vt_compact_part *aOut);

/*
 * An API call of pMap (api_call) folded into another table's row (schema 6): its signature id
 * (*pSig) and its event id (*pId, the next of api_call's ids: the id sequence is shared with the
 * calls stored alone). Returns 1 with the new signature's row in *pOut, or 0 when it is stored.
 */
int vt__compact_fold(struct vt_compact *c, const struct vt_compact_map *pMap, const int64_t *aVal, uint32_t nullMask,
                     int64_t *pSig, int64_t *pId, struct vt_compact_part *pOut);

/*
 * The rows last given may not be stored (a transaction rolled back): forget the signatures and
 * the current block, so that later events store theirs again (in a new block).
 */
void vt__compact_forget(struct vt_compact *c);

/* Inserting parts one row per statement, for writers without batches of their own (upgrade, importers). */
struct vt_compact_sink {
    sqlite3 *db;
    sqlite3_stmt *aBlock[VT_CT__COUNT], *aSig[VT_CT__COUNT], *aRow[VT_CT__COUNT];
};
/* Ready k for inserting parts into db (statements prepared at first use). SQLite code. */
int vt__compact_sink_open(struct vt_compact_sink *k, sqlite3 *db);
/* Insert the n parts of aPart (vt__compact_add's). SQLite code. */
int vt__compact_sink_put(struct vt_compact_sink *k, const struct vt_compact_part *aPart, int n);
void vt__compact_sink_close(struct vt_compact_sink *k);

/*
 * Append the rows of zSelect, whose columns are id, t, dur and then the columns of compacted
 * table iTab's view in its order (spec zCols), to that table (its parts and view exist), in the
 * order zSelect gives: with their id when bKeepIds (ids must grow, and lie beyond every stored
 * one), else new ids after every stored one. A row holding a value that is not an
 * integer or NULL (only a damaged or hand-made trace has one) goes in through the view as it is.
 * SQLite code; *pzErr (may be NULL) an sqlite3_malloc'd message.
 */
int vt__compact_insert_select(sqlite3 *db, int iTab, const char *zSelect, int bKeepIds, char **pzErr);

#endif
