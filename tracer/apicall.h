/* Internal: CUPTI API callbacks (runtime and driver parameters) -> host records. */
#ifndef VT_TRACER_APICALL_H
#define VT_TRACER_APICALL_H

/*
 * The decoder of the API calls the tracer records. It knows, per callback id,
 * which API it is (VT_API_LIST id) and how to read its parameter struct (the
 * `*_params` structs of generated_cuda_runtime_api_meta.h and
 * generated_cuda_meta.h); from each call's enter and exit callbacks it makes the
 * host records the writer stores: one api_call per call, an oom_event when an
 * allocation fails (with the device's free/total memory then), memory_event
 * rows for the VMM calls, buffer_use rows for kernel arguments and for the
 * addresses copies and sets name. It keeps the index of live allocations
 * current for the kernel-argument scan.
 *
 * It never calls CUPTI or the driver: everything it needs from them comes
 * through struct vt__apicall_env (the glue passes CUPTI's and the driver's
 * functions behind its re-entry guard; tests pass fakes) and through the
 * CUpti_CallbackData CUPTI hands every callback.
 *
 * Nesting: a runtime call makes driver calls of its own (cudaMalloc ->
 * cuMemAlloc, a runtime launch -> a driver launch). The runtime call is
 * recorded and the driver calls made inside it are not, so each call appears
 * once; only a driver launch inside a runtime call is looked at, to scan its
 * arguments (where the kernel's layout is known from the driver) under the
 * runtime call's correlation id, which the kernel record carries. A runtime
 * launch inside which no driver launch was seen is scanned at its own exit,
 * so each launch is scanned once either way. The per-thread state this needs
 * is the caller's (struct vt__apithread, one per thread, zero-initialised).
 *
 * Threading: any thread, concurrently; the tables are constant, the
 * per-thread state is the caller's, env is read only.
 */
#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

#include "apitable.h"
#include "intervals.h"
#include "kparams.h"
#include "writer.h"

/* What the decoder needs from outside; set once, then read only. */
struct vt__apicall_env {
    uint64_t (*xNow)(void);              /* CUPTI clock now, ns (0: unknown) */
    int (*xDevice)(CUcontext ctx);       /* device ordinal of a context, or -1 */
    /* CUPTI's stream id for a stream handle of ctx (perThread: a _ptsz/_ptds call), 0 if unknown */
    uint64_t (*xStream)(CUcontext ctx, const void *hStream, int perThread);
    int (*xMemInfo)(uint64_t *pFree, uint64_t *pTotal); /* device free/total memory: 0, or -1 */
    int64_t (*xSite)(void);              /* capture the calling thread's site: stack id, 0 none */
    int (*xActive)(void);                /* 1 while records are wanted (the session is active) */
    int (*xSubmit)(const struct vt_hrec *rec); /* queue one record: 0, or -1 (dropped) */
    struct vt__ivl *ivl;                 /* live allocations kept current, or NULL */
    struct vt__kparams *kp;              /* kernel-argument scanner, or NULL: no scans */
    /* Optional (NULL: not known): the allocation containing address ptr (cuMemGetAddressRange),
     * 0 or -1; and where the memory of an allocation handle lives (its allocation properties:
     * VT_MEMKIND_DEVICE on device *pDevice, or VT_MEMKIND_PINNED with *pDevice -1), 0 or -1. */
    int (*xAddressRange)(uint64_t ptr, uint64_t *pBase, uint64_t *pSize);
    int (*xHandleLocation)(uint64_t handle, int *pMemKind, int *pDevice);
    /* Optional: a successful call whose MEMORY2 record CUPTI writes at once (an allocation or
     * free, host registration aside) has just returned (the takeover watch counts them). */
    void (*xExpect)(void);
};

/* One thread's state between callbacks; zero-initialised, owned by the caller. */
struct vt__apithread {
    int depth;            /* > 0 inside a recorded runtime API call */
    uint32_t correlation; /* correlation id of that runtime call */
    int bScanned;         /* a driver launch inside it had its arguments scanned */
    int bScanRead;        /* ... and they could be read (layout known) */
    int64_t tid;          /* cached gettid(), 0 until known */
};

/*
 * NVTX's parameters of nvtxRangeEnd and nvtxDomainRangeEnd as CUPTI passes
 * them (generated_nvtx_meta.h: nvtxRangeEnd_params, nvtxDomainRangeEnd_params),
 * declared here so the tracer includes no NVTX header (NVTX's headers define
 * functions); tests/test_apicall.c checks they match.
 */
typedef struct {
    uint64_t id; /* nvtxRangeId_t */
} vt__nvtxRangeEnd_params;
typedef struct {
    void *domain; /* nvtxDomainHandle_t */
    vt__nvtxRangeEnd_params core;
} vt__nvtxDomainRangeEnd_params;

/* The NVTX callback ids vt__nvtx_callback reads (the start/end range calls): *pn of them. */
const CUpti_CallbackId *vt__nvtx_cbids(size_t *pn);

/*
 * Decode one NVTX callback (CUPTI_CB_DOMAIN_NVTX; d: what CUPTI passes): for
 * a start/end range, submit a VT_HREC_NVTX record with its id, the one
 * nvtxRangeStart* returned (when CUPTI passes the return value) or the one
 * nvtxRangeEnd was given, so the decoder can tell the range from a push/pop
 * range. Other ids are ignored.
 */
void vt__nvtx_callback(const struct vt__apicall_env *env, CUpti_CallbackId cbid, const CUpti_NvtxData *d);

/*
 * Decode one runtime or driver API callback (cb: what CUPTI passes as cbdata;
 * its functionParams, functionReturnValue and correlationData are read, the
 * latter written at enter to hold the start time) and submit the records it
 * makes through env->xSubmit. Callbacks of other domains and untraced ids are
 * ignored. t is the calling thread's state.
 */
void vt__apicall_callback(const struct vt__apicall_env *env, struct vt__apithread *t,
                          CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const CUpti_CallbackData *cb);

#endif
