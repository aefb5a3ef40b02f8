/* Internal: the correlation join's API calls, parked until their activity record comes (decode.c's helpers). */
#ifndef VT_TRACER_CORRJOIN_H
#define VT_TRACER_CORRJOIN_H

#include <stdint.h>

#include "decode.h"

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

#endif
