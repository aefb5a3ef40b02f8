/* Internal: what one API call asked for, read from its parameter struct (apiparams.c). */
#ifndef VT_TRACER_APIPARAMS_H
#define VT_TRACER_APIPARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "apitable.h"

/* What one API call asked for, read from its parameters at exit. */
struct vt__call {
    uint64_t bytes, ptr, src, dst, handle;
    const void *hStream;
    int bStream;  /* hStream is meaningful */
    int device;   /* from the parameters (cuMemCreate's device location), else -1 */
    int memKind;  /* for memory_event rows (VMM, imports) */
    int bHost;    /* cuMemCreate: the memory lives in host memory (device NULL) */
    /* a batch copy's operations, read again for its buffer uses: */
    size_t nOp;
    const void *pOpDst, *pOpSrc; /* VT_SH_COPY_BATCH: arrays of nOp 8-byte addresses, or NULL */
    const void *pOps;            /* VT_SH_COPY3D_BATCH, VT_SH_CU_COPY3D_BATCH: the operation list */
};

/* Fill *c from the parameters pv of a call of API e; ok: the call succeeded. */
void vt__apicall_read(const struct vt__api *e, const void *pv, int ok, struct vt__call *c);

/* Element i of an array of 8-byte addresses or sizes (a batch's), 0 when the array is NULL. */
uint64_t vt__apicall_array_at(const void *pArray, size_t i);

/* Source and destination address of operation i of a 3D batch (0 for an array operand). */
void vt__apicall_op3d_sides(int shape, const void *pOps, size_t i, uint64_t *pSrc, uint64_t *pDst);

#endif
