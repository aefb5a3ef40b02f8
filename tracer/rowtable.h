/* Internal: the trace tables rows are written to, each one's INSERT statement, and binding rows to them. */
#ifndef VT_TRACER_ROWTABLE_H
#define VT_TRACER_ROWTABLE_H

#include <stdint.h>

#include <sqlite3.h>

#include "vramtrace/compact.h"
#include "vramtrace/schema.h"

/* The tables rows are written to; vt__aTable gives each one's INSERT statement. */
enum vt__table {
    VT_T_STRING,
    VT_T_DEVICE,      /* from CUPTI: INSERT OR IGNORE (first description wins) */
    VT_T_DEVICE_HOST, /* from the glue: INSERT OR REPLACE (it knows the PCI location) */
    VT_T_STACK,
    VT_T_FRAME,
    VT_T_API_CALL,
    VT_T_MEMORY_EVENT,
    VT_T_OOM_EVENT,
    VT_T_MEMCPY,
    VT_T_MEMSET,
    VT_T_KERNEL,
    VT_T_BUFFER_USE,
    VT_T_NVTX_RANGE,
    VT_T_SYNC_EVENT,
    VT_T_POOL_EVENT,
    VT_T_DROPPED,
    VT_T_OVERHEAD,
    VT_T_META,
    VT_T_MODULE,      /* INSERT OR IGNORE: one row per module frames name */
    VT_T_KERNEL_NAME, /* one row per kernel name string: demangled and short forms */
    VT_T_KERNEL_SUMMARY, /* kernels folded per period (ksummary.h) */
    /* the stored parts of the compacted tables (vramtrace/compact.h): the writer turns every row of
     * VT_T_API_CALL, VT_T_MEMCPY, VT_T_MEMSET and VT_T_KERNEL into them */
#define VT__T_PARTS(name, SIG, OWN, zCols) VT_T_BLOCK_##name, VT_T_SIG_##name, VT_T_ROW_##name,
    VT_COMPACT_TABLES(VT__T_PARTS)
#undef VT__T_PARTS
    VT_T__COUNT
};

/* The parts of compacted table i: VT_T_BLOCK_kernel + 3i + VT_CP_* (block, signature, row). */
#define VT__T_PART(iTab, kind) (VT_T_BLOCK_kernel + 3 * (iTab) + (kind))
_Static_assert(VT__T_PART(VT_CT_api_call, VT_CP_SIG) == VT_T_SIG_api_call && VT__T_PART(VT_CT_memset, VT_CP_ROW) == VT_T_ROW_memset,
               "the parts of compacted table i are VT__T_PART(i, VT_CP_*)");

#define VT__ROW_MAXCOL 24

/* One row: values in the column order of the table's INSERT statement. */
struct vt__row {
    int table;         /* enum vt__table */
    uint32_t nullMask; /* bit i set: column i is NULL */
    union {
        int64_t i;
        const char *z; /* text columns (see vt__table_spec.textMask); valid during emit only */
    } v[VT__ROW_MAXCOL];
};

struct vt__table_spec {
    const char *zName;
    const char *zInsert; /* parameters ?1..?nCol in column order */
    int nCol;
    uint32_t textMask;   /* bit i set: column i is text */
    /*
     * Time columns, as 1 + column index (0: none). The decoder emits absolute
     * CUPTI times; the writer stores column timeCol - 1 as t = time - base and
     * column endCol - 1 as dur = end - start (schema.h, VT__INSTANT).
     */
    uint8_t timeCol, endCol;
    /* 1 + the compacted table (enum vt_compact_table) whose rows this table's are stored as; 0: stored
     * as they are. Compacted rows are decoded with absolute times like the others. */
    uint8_t compact;
    /* 1 + the column of call_dt, followed by call_dur, call_sig and call_id: a call folded into this
     * row (schema 6, VT_CALL_FOLD); 0: none. A decoded row has none (the columns NULL). */
    uint8_t foldCol;
};
extern const struct vt__table_spec vt__aTable[VT_T__COUNT];

/* The NULL mask of a new row of table t: its folded call's columns (none yet). */
static inline uint32_t vt__row_null_init(int t)
{
    return vt__aTable[t].foldCol ? (uint32_t)((1u << VT_CALL_FOLD_NCOL) - 1) << (vt__aTable[t].foldCol - 1) : 0;
}

/* Bind row pRow's values to parameters iFirst+1.. of s (text bound SQLITE_STATIC: valid until the step). */
void vt__row_bind(sqlite3_stmt *s, int iFirst, const struct vt__row *pRow);

/*
 * Bind row pRow (no text) to parameters iFirst+1.. of s, skipping those that already hold its
 * value: bindings survive sqlite3_reset, and most columns (device, context, stream, launch
 * shape, NULLs) repeat from one multi-row batch to the next, so about half the bind calls are
 * saved. aVal and aState (per column: 0 unknown, 1 NULL bound, 2 aVal bound) remember what the
 * parameters hold.
 */
void vt__row_bind_changed(sqlite3_stmt *s, int iFirst, const struct vt__row *pRow, int64_t *aVal, uint8_t *aState);

/*
 * Prepare table t's INSERT for nRows rows at once: its column list, then nRows
 * groups of nCol anonymous parameters (persistent statement). Returns an SQLite code.
 */
int vt__row_prepare_multi(sqlite3 *db, const struct vt__table_spec *t, sqlite3_stmt **ppStmt, int nRows);

/*
 * Turn row pRow's absolute times into the stored form (schema.h, VT__INSTANT):
 * dur = end - start, then t = time - base. Arithmetic wraps like the unsigned
 * CUPTI clock, so SQLite's t + dur + base gives the decoded values back exactly
 * for every time below 2^63 (a difference that wraps only comes from a
 * nonsensical time, which readers reject either way).
 */
void vt__row_to_stored(struct vt__row *pRow, int64_t base);

/* Where each column of compacted table t's rows goes in its stored parts (vt__compact_map). 0, or -1. */
int vt__row_compact_map(int t, struct vt_compact_map *pMap);

/* Row pRow (stored form) of a compacted table as its parts' rows into aOut (3 at most); returns how many. */
int vt__row_compact(struct vt_compact *c, const struct vt_compact_map *pMap, const struct vt__row *pRow, struct vt__row *aOut);

/*
 * Whether API call row pCall (VT_T_API_CALL, as decoded) can be stored folded into activity row
 * pAct (a memcpy, memset or memory_event row, as decoded): the same correlation id, pAct's time
 * known, and pAct holding exactly the call's bytes and addresses as the api_call view gives them
 * back (schema.h, VT_CALL_FOLD).
 */
int vt__fold_match(const struct vt__row *pAct, const struct vt__row *pCall);

/*
 * Fold call row pCall into activity row pAct (both in stored form, vt__fold_match true): pAct's
 * folded call columns set, the call's id taken from api_call's ids and its signature found or
 * added (pCallMap: the api_call map). Returns 1 with the new signature's row in *pSig, else 0.
 */
int vt__row_fold(struct vt_compact *c, const struct vt_compact_map *pCallMap, struct vt__row *pAct, const struct vt__row *pCall,
                 struct vt__row *pSig);

/* Whether rows of table t are events (counted as rows written or lost), not a compacted table's block or signature. */
int vt__row_is_event(int t);

#endif
