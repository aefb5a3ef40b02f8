/* Internal: decode CUPTI activity records and host records into trace rows. */
#ifndef VT_TRACER_DECODE_H
#define VT_TRACER_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include <cupti_activity.h>

#include "boundmap.h"
#include "modres.h"
#include "strintern.h"
#include "hrec.h"
#include "layout.h"
#include "rowtable.h"

/*
 * The decoder is pure with respect to SQLite: it turns one record into zero or
 * more rows and hands each to an emit callback (the writer binds and inserts
 * it; tests may collect rows directly). It keeps the bounded state a correct
 * trace needs across records: the string table, the correlation join (API call
 * arguments waiting for their activity record) and NVTX ranges still open.
 * Single-threaded: only the writer thread uses a decoder.
 */

/* Bounds of the decoder's maps; zero fields take the defaults named. */
struct vt__decoder_config {
    size_t corr_entries;   /* pending API calls for the correlation join (65536) */
    size_t nvtx_entries;   /* NVTX ranges open at once (16384) */
    size_t intern_entries; /* distinct strings cached (262144) */
    size_t intern_bytes;   /* text cached (32 MiB) */
    size_t mem_entries;    /* VMM handles, and mappings, remembered for their release/unmap (65536 each) */
    /* Resolver of raw native return addresses in call sites (module, relative address, name), or
     * NULL: native frames without a module are stored as they come (absolute pc). Not owned. */
    struct vt__modres *modres;
    /* Record layouts of the CUPTI that delivers the records (layout.h), or NULL: vt__layout_active(). */
    const struct vt__layout *layout;
};

struct vt__decoder {
    void (*xEmit)(void *pCtx, const struct vt__row *pRow);
    /*
     * Folded calls (schema 6): NULL, each API call's row is emitted when the call arrives (xEmit).
     * Set (after init), a call whose activity record follows (a copy's, set's, allocation's or
     * free's) waits in the correlation map for it; then an activity row that holds the call's
     * values (vt__fold_match) is emitted here with the call's row, to be stored as one row, and
     * otherwise (values differ, the call left the bounded map, the trace closes) the call's row
     * is emitted alone, before its activity row if there is one.
     */
    void (*xEmitFold)(void *pCtx, const struct vt__row *pAct, const struct vt__row *pCall);
    void *pCtx;
    struct vt__intern intern;
    struct vt__boundmap corr;
    struct vt__boundmap nvtx;
    struct vt__boundmap nvtxStart; /* ids of start/end ranges named at their start (NVTX callbacks) */
    struct vt__boundmap nvtxEnd;   /* ... named at their end */
    struct vt__boundmap handles; /* VMM handle -> how it was created or imported */
    struct vt__boundmap maps;    /* mapped or IPC-opened address -> handle, kind, bytes */
    struct vt__boundmap depths;  /* push/pop nesting of (thread, domain) with ranges open */
    struct vt__modres *modres;   /* see vt__decoder_config */
    const struct vt__layout *layout; /* see vt__decoder_config; never NULL */
    struct vt__modinfo *pPendingModule; /* a module met whose `module` row is still to write */
    uint64_t lastTs;           /* latest timestamp seen, for rows that have no time of their own */
    uint64_t nowMs;            /* the writer's clock at the last vt__decoder_age: when calls were parked */
    uint64_t ageMs;            /* vt__decoder_age's bound */
    uint32_t agedSeq;          /* the correlation map's entries up to this one are aged (vt__decoder_age) */
    uint64_t nDecoded;         /* activity records seen */
    uint64_t nUnknown;         /* activity records of kinds not stored */
    uint64_t nNotDecoded;      /* activity records of reduced kinds (layout unknown): not read */
    uint64_t nDroppedCorr;     /* API calls evicted from the correlation map unmatched */
    uint64_t nDroppedNvtx;     /* open NVTX ranges evicted (written with end NULL) */
    uint64_t nJoined;          /* activity records completed from an API call */
    uint64_t nTimeUnknown;     /* rows written with a time CUPTI could not take (0: stored NULL) */
    uint64_t nMemSuperseded;   /* MEMORY2 records of VMM/import calls, not stored (the call's row is) */
    int bNoDemanglerNoted;     /* the meta row saying kernel names are not demangled is written */
};

/* Initialise d. Returns 0 or -ENOMEM. */
int vt__decoder_init(struct vt__decoder *d, const struct vt__decoder_config *cfg,
                     void (*xEmit)(void *, const struct vt__row *), void *pCtx);

/* Free d's memory. Does not emit anything: call vt__decoder_finish first to keep open ranges. */
void vt__decoder_free(struct vt__decoder *d);

/*
 * Decode one CUPTI activity record into rows, reading it with the decoder's
 * layouts. Returns 0 when the record's kind is stored, 1 when it is not
 * (counted in nUnknown; a record of a reduced kind also in nNotDecoded).
 */
int vt__decode_activity(struct vt__decoder *d, const CUpti_Activity *pRec);

/*
 * Decode one host record into rows and release the heap memory it owns.
 * API calls of the alloc, free, memcpy and memset families that succeeded are
 * also remembered for the correlation join with their activity record.
 */
void vt__decode_host(struct vt__decoder *d, struct vt_hrec *pRec);

/*
 * Calls parked longer than maxAgeMs before nowMs (a monotonic clock in ms) are written alone,
 * so that a call whose activity record is late (or never comes) is in the trace as soon as it
 * would have been without folding, give or take maxAgeMs; they stay in the map for the join.
 * The writer calls it every cycle.
 */
void vt__decoder_age(struct vt__decoder *d, uint64_t nowMs, uint64_t maxAgeMs);

/*
 * The correlation join's API calls (corrjoin.c): parked until their activity record comes,
 * then folded into its row or written alone.
 */
/* The api_call row's columns (rowtable.c): api, correlation, start, end, thread, device, status, bytes, ptr, src, dst, stream, stack_id. */
enum { VT_AC_API = 0, VT_AC_CORR, VT_AC_T, VT_AC_END, VT_AC_THREAD, VT_AC_DEVICE, VT_AC_STATUS, VT_AC_BYTES, VT_AC_PTR, VT_AC_SRC, VT_AC_DST, VT_AC_STREAM, VT_AC_STACK, VT_AC_N };

/*
 * What the correlation join keeps of an API call: its api_call row (absolute times), and whether
 * that row is still to be written (parked: the decoder emits it with its activity row, folded
 * into it when that row holds its values, else alone; or alone when it leaves the map unmatched).
 */
struct vt__corr_val {
    int64_t aCall[VT_AC_N];
    uint32_t callNull; /* the row's NULL mask */
    uint32_t parkMs;   /* when it was parked: the low 32 bits of vt__decoder_age's clock */
    uint64_t dst;      /* the address the activity row takes: dst, or a memset's ptr */
    int16_t bExpected; /* an activity record always follows: eviction before it is a loss */
    int16_t scan;      /* a kernel launch's enum vt_scan */
    int16_t bParked;   /* the call's row is not written yet */
};

/* Write the row of call cv if it is still to be written (parked), alone. */
void vt__join_alone(struct vt__decoder *d, const struct vt__corr_val *cv);

/*
 * Write activity row pAct and, when joined, the row of its call cv if still to be written: folded
 * into pAct where pAct holds the call's values (vt__fold_match) and the emitter folds, else alone
 * before it.
 */
void vt__join_emit(struct vt__decoder *d, struct vt__row *pAct, int joined, const struct vt__corr_val *cv);

/* Write the calls still parked, alone, and empty the map (at close). */
void vt__join_finish(struct vt__decoder *d);

/* Write the NVTX ranges still open (end NULL) and the calls still waiting for their activity record. Call once, at close. */
void vt__decoder_finish(struct vt__decoder *d);

#endif
