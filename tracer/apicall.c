/* API callbacks -> host records: what each traced call records (rows, call sites, buffer uses, OOMs). */
#include "apicall.h"
#include "apiparams.h"

#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "vramtrace/schema.h"

#define USES_MAX 512 /* buffer_use rows per call: a 4 KB parameter block holds at most 512
                      * pointers (PyTorch's fused multi-tensor kernels pass hundreds) */
#define MULTI_MAX 64 /* kernels read from one multi-device launch */

/* True for calls whose failure is an out-of-memory moment worth an oom_event row. */
static int is_alloc_shape(int shape)
{
    switch (shape) {
    case VT_SH_MALLOC: case VT_SH_MALLOC_STREAM: case VT_SH_MALLOC_POOL: case VT_SH_MALLOC_PITCH: case VT_SH_MALLOC_3D:
    case VT_SH_HOST_REGISTER: case VT_SH_CU_ALLOC: case VT_SH_CU_ALLOC_STREAM: case VT_SH_CU_ALLOC_POOL:
    case VT_SH_CU_ALLOC_PITCH: case VT_SH_CU_HOST_ALLOC: case VT_SH_CU_HOST_REGISTER: case VT_SH_VMM_CREATE:
        return 1;
    default: return 0;
    }
}

/*
 * True for a return code that means out of memory: cudaErrorMemoryAllocation
 * (runtime) or CUDA_ERROR_OUT_OF_MEMORY (driver). Any other failure of an
 * allocation (invalid value, not initialized, a sticky launch failure) is a
 * failed API call, not an OOM.
 */
static int is_oom_status(CUpti_CallbackDomain domain, int status)
{
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return status == (int)cudaErrorMemoryAllocation;
    return status == (int)CUDA_ERROR_OUT_OF_MEMORY;
}

/* True for the calls that end an allocation's life. */
static int is_free_shape(int shape)
{
    switch (shape) {
    case VT_SH_FREE: case VT_SH_FREE_STREAM: case VT_SH_CU_FREE: case VT_SH_CU_FREE_STREAM: case VT_SH_CU_HOST_FREE:
        return 1;
    default: return 0;
    }
}

/* Keep the index of live allocations current after a successful call (for argument scans). */
static void track_live(struct vt__ivl *ivl, int shape, const struct vt__call *c)
{
    if (!ivl) return;
    if (shape == VT_SH_VMM_MAP || shape == VT_SH_IPC_OPEN || (is_alloc_shape(shape) && shape != VT_SH_VMM_CREATE)) {
        if (c->ptr && c->bytes) vt__ivl_insert(ivl, c->ptr, c->bytes);
    } else if (shape == VT_SH_VMM_UNMAP || shape == VT_SH_IPC_CLOSE || is_free_shape(shape)) {
        if (c->ptr) vt__ivl_remove(ivl, c->ptr);
    }
}

/* True for the calls that carry a call site (allocation, free, VMM, copy, set). */
static int wants_site(int shape)
{
    return shape != VT_SH_NONE && shape < VT_SH_LAUNCH;
}

/* The calling thread's id (gettid), cached in its state. */
static int64_t thread_id(struct vt__apithread *t)
{
    if (!t->tid) t->tid = (int64_t)gettid();
    return t->tid;
}

/* One kernel a launch call starts: how it is named, and its arguments as the call passed them. */
struct launch {
    int kind;             /* enum vt__kp_handle */
    const void *h;        /* CUfunction, CUkernel or runtime stub */
    void *const *apParam; /* pointers to each argument, or NULL */
    void *const *extra;   /* cuLaunchKernel's `extra`, or NULL */
};

/*
 * The kernels a call of a launch shape starts, read from its parameters: writes
 * at most nMax into a and returns how many; 0 for calls whose arguments cannot
 * be read (graph launches, legacy launches, shapes that are not launches).
 */
static int launch_kernels(int shape, const void *pv, struct launch *a, int nMax)
{
    int i, n = 0;
    if (nMax < 1) return 0;
    switch (shape) {
    case VT_SH_LAUNCH: {
        const cudaLaunchKernel_v7000_params *p = pv; /* cudaLaunchCooperativeKernel: same layout */
        a[n++] = (struct launch){VT_KP_STUB, p->func, p->args, NULL};
        break;
    }
    case VT_SH_LAUNCH_KERNEL: {
        const vt__cudaLaunchKernel_v13000_params *p = pv;
        a[n++] = (struct launch){VT_KP_DRIVER, p->kernel, p->args, NULL};
        break;
    }
    case VT_SH_LAUNCH_EXC: {
        const cudaLaunchKernelExC_v11060_params *p = pv;
        a[n++] = (struct launch){VT_KP_STUB, p->func, p->args, NULL};
        break;
    }
    case VT_SH_CU_LAUNCH: {
        const cuLaunchKernel_params *p = pv;
        a[n++] = (struct launch){VT_KP_DRIVER, p->f, p->kernelParams, p->extra};
        break;
    }
    case VT_SH_CU_LAUNCH_EX: {
        const cuLaunchKernelEx_params *p = pv;
        a[n++] = (struct launch){VT_KP_DRIVER, p->f, p->kernelParams, p->extra};
        break;
    }
    case VT_SH_CU_LAUNCH_COOP: {
        const cuLaunchCooperativeKernel_params *p = pv;
        a[n++] = (struct launch){VT_KP_DRIVER, p->f, p->kernelParams, NULL};
        break;
    }
    case VT_SH_CU_LAUNCH_MULTI: {
        const cuLaunchCooperativeKernelMultiDevice_params *p = pv;
        for (i = 0; p->launchParamsList && i < (int)p->numDevices && n < nMax; i++)
            a[n++] = (struct launch){VT_KP_DRIVER, p->launchParamsList[i].function,
                                     p->launchParamsList[i].kernelParams, NULL};
        break;
    }
    default: break;
    }
    return n;
}

/*
 * True for the calls that launch kernels of their own (not graph launches,
 * whose kernels arrive with a graph id): their api_call says whether their
 * arguments were scanned. The legacy launches (cuLaunch, cuLaunchGrid*,
 * cudaLaunch, the multi-device runtime launch) are never scanned.
 */
static int is_kernel_launch(const struct vt__api *e)
{
    const char *zFamily = vt_api_family(e->api);
    return zFamily && !strcmp(zFamily, "launch") && e->shape != VT_SH_GRAPH_LAUNCH && e->shape != VT_SH_CU_GRAPH_LAUNCH;
}

/* True for the runtime launch shapes whose arguments can be scanned at the runtime call. */
static int is_runtime_kernel_launch(int shape)
{
    return shape == VT_SH_LAUNCH || shape == VT_SH_LAUNCH_KERNEL || shape == VT_SH_LAUNCH_EXC;
}

/* True for the driver launch shapes (scanned at the call, or under the runtime launch around it). */
static int is_driver_kernel_launch(int shape)
{
    return shape >= VT_SH_CU_LAUNCH && shape <= VT_SH_CU_LAUNCH_MULTI;
}

/*
 * Submit n buffer uses of one call, keyed by `correlation`, with the time now:
 * addresses aAddr[0..n), of kind aKind[i] (or `kind` for all when aKind is
 * NULL); and a dropped row for nLost more that did not fit.
 */
static void submit_uses(const struct vt__apicall_env *env, uint32_t correlation, int kind,
                        const uint8_t *aKind, const uint64_t *aAddr, int n, uint64_t nLost, int device)
{
    struct vt_hrec rec;
    uint64_t ts;
    int i;
    if (n <= 0 && nLost == 0) return;
    ts = env->xNow();
    for (i = 0; i < n; i++) {
        memset(&rec, 0, sizeof rec);
        rec.type = VT_HREC_BUFFER_USE;
        rec.u.use.correlation = correlation;
        rec.u.use.kind = aKind ? aKind[i] : kind;
        rec.u.use.address = aAddr[i];
        rec.u.use.ts = ts;
        rec.u.use.device = device;
        env->xSubmit(&rec);
    }
    if (nLost) {
        memset(&rec, 0, sizeof rec);
        rec.type = VT_HREC_DROPPED;
        rec.u.dropped.ts = ts;
        rec.u.dropped.source = VT_DROP_MAP;
        rec.u.dropped.zWhat = "buffer uses of one call beyond 512";
        rec.u.dropped.count = nLost;
        env->xSubmit(&rec);
    }
}

/*
 * Kernel-argument scanning: look up every 8-byte word of the arguments of each
 * kernel a launch starts in the index of live allocations and submit one
 * VT_HREC_BUFFER_USE per allocation found (at most USES_MAX per call), keyed by
 * `correlation` (the runtime call's when the launch came through the runtime,
 * so it joins the kernel record). pCall, when not NULL, is the launch's own
 * api_call record: its scan field is set (VT_SCAN_DONE when every kernel's
 * arguments could be read, so its uses are complete, else VT_SCAN_NOT_DONE)
 * and it is submitted before the uses. Returns 1 when the arguments could be
 * read, 0 when not (layout unknown, no scanner).
 */
static int scan_launch(const struct vt__apicall_env *env, int shape, const void *pParams,
                       uint32_t correlation, int device, struct vt_hrec *pCall)
{
    uint64_t aBase[USES_MAX], nLost = 0;
    struct launch aLaunch[MULTI_MAX];
    int nLaunch, i, nUse = 0, bRead;

    nLaunch = env->kp ? launch_kernels(shape, pParams, aLaunch, MULTI_MAX) : 0;
    bRead = nLaunch > 0;
    for (i = 0; i < nLaunch; i++) {
        const struct launch *l = &aLaunch[i];
        int nRoom = USES_MAX - nUse;
        int n = vt__kparams_scan(env->kp, l->kind, l->h, l->apParam, l->extra, aBase + nUse, nRoom);
        if (n < 0) bRead = 0;
        if (n > nRoom) {
            nLost += (uint64_t)(n - nRoom);
            n = nRoom;
        }
        if (n > 0) nUse += n;
    }
    if (pCall) {
        pCall->u.api.scan = bRead ? VT_SCAN_DONE : VT_SCAN_NOT_DONE;
        env->xSubmit(pCall);
    }
    submit_uses(env, correlation, VT_USE_KERNEL_ARG, NULL, aBase, nUse, nLost, device);
    return bRead;
}

/* True for the copies and sets whose addresses are read (all but the opaque ones). */
static int is_copy_or_set(int shape)
{
    return shape >= VT_SH_COPY && shape < VT_SH_COPY_OPAQUE;
}

/* The uses of one call being collected: at most USES_MAX, the rest counted. */
struct uses {
    uint64_t aAddr[USES_MAX];
    uint8_t aKind[USES_MAX];
    int n;
    uint64_t nLost;
};

/* Add a use of address a (none for 0: no address, an array or a symbol). */
static void add_use(struct uses *u, int kind, uint64_t a)
{
    if (!a) return;
    if (u->n < USES_MAX) {
        u->aKind[u->n] = (uint8_t)kind;
        u->aAddr[u->n++] = a;
    } else {
        u->nLost++;
    }
}

/*
 * The buffer uses of a successful copy or set c of API e: the source and
 * destination addresses as the call gives them (a 2D/3D copy's base address,
 * every operation's of a batch), kinds VT_USE_MEMCPY_SRC / _DST, and a set's
 * destination, VT_USE_MEMSET.
 */
static void copy_uses(const struct vt__apicall_env *env, const struct vt__api *e, const struct vt__call *c,
                      uint32_t correlation, int device)
{
    struct uses u;
    uint64_t src, dst;
    size_t i;
    u.n = 0;
    u.nLost = 0;
    if (e->shape == VT_SH_SET) {
        add_use(&u, VT_USE_MEMSET, c->dst);
    } else if (e->shape == VT_SH_COPY_BATCH) {
        for (i = 0; i < c->nOp; i++) {
            add_use(&u, VT_USE_MEMCPY_SRC, vt__apicall_array_at(c->pOpSrc, i));
            add_use(&u, VT_USE_MEMCPY_DST, vt__apicall_array_at(c->pOpDst, i));
        }
    } else if (e->shape == VT_SH_COPY3D_BATCH || e->shape == VT_SH_CU_COPY3D_BATCH) {
        for (i = 0; i < c->nOp; i++) {
            vt__apicall_op3d_sides(e->shape, c->pOps, i, &src, &dst);
            add_use(&u, VT_USE_MEMCPY_SRC, src);
            add_use(&u, VT_USE_MEMCPY_DST, dst);
        }
    } else {
        add_use(&u, VT_USE_MEMCPY_SRC, c->src);
        add_use(&u, VT_USE_MEMCPY_DST, c->dst);
    }
    submit_uses(env, correlation, 0, u.aKind, u.aAddr, u.n, u.nLost, device);
}

/*
 * True for the calls CUPTI writes a MEMORY2 record of as the call happens:
 * allocations and frees (host registrations aside: they allocate nothing).
 */
static int writes_memory_record(const struct vt__api *e)
{
    const char *z = vt_api_family(e->api);
    return z && (!strcmp(z, "alloc") || !strcmp(z, "free")) && e->shape != VT_SH_HOST_REGISTER &&
           e->shape != VT_SH_CU_HOST_REGISTER && e->api != VT_API_ID_13 && e->api != VT_API_ID_31;
}

/* The memory_event op a successful call of this shape writes, or 0 for none. */
static int memory_op(int shape)
{
    switch (shape) {
    case VT_SH_VMM_CREATE: return VT_MEMOP_VMM_CREATE;
    case VT_SH_VMM_RELEASE: return VT_MEMOP_VMM_RELEASE;
    case VT_SH_VMM_MAP: return VT_MEMOP_VMM_MAP;
    case VT_SH_VMM_UNMAP: return VT_MEMOP_VMM_UNMAP;
    case VT_SH_VMM_IMPORT: case VT_SH_IPC_OPEN: return VT_MEMOP_IMPORT;
    case VT_SH_IPC_CLOSE: return VT_MEMOP_IMPORT_CLOSE;
    default: return 0;
    }
}

/*
 * What an import call's parameters do not say, asked of the driver (env):
 * the size of an IPC mapping from its address range, the kind and device of
 * an imported handle from its allocation properties. Left unknown (0, -1)
 * when the environment cannot tell.
 */
static void complete_import(const struct vt__apicall_env *env, int shape, struct vt__call *c)
{
    uint64_t base = 0, size = 0;
    int kind = VT_MEMKIND_UNKNOWN, dev = -1;
    if (shape == VT_SH_IPC_OPEN && c->ptr && env->xAddressRange &&
        env->xAddressRange(c->ptr, &base, &size) == 0 && base <= c->ptr && c->ptr - base < size)
        c->bytes = size - (c->ptr - base);
    if (shape == VT_SH_VMM_IMPORT && c->handle && env->xHandleLocation &&
        env->xHandleLocation(c->handle, &kind, &dev) == 0) {
        c->memKind = kind;
        c->device = dev;
        c->bHost = kind == VT_MEMKIND_PINNED;
    }
}

/*
 * Record one API call at its exit: api_call row, plus oom_event / VMM
 * memory_event / buffer_use rows. bScan: a successful kernel launch's arguments
 * are to be scanned here (not yet scanned at a driver launch inside it).
 */
static void record_exit(const struct vt__apicall_env *env, struct vt__apithread *t, CUpti_CallbackDomain domain,
                        const struct vt__api *e, const CUpti_CallbackData *cb, int bScan)
{
    struct vt_hrec rec;
    struct vt__call c;
    int status = cb->functionReturnValue ? *(const int *)cb->functionReturnValue : 0;
    int ok = status == 0;
    uint64_t end = env->xNow();
    uint64_t start = cb->correlationData && *cb->correlationData ? *cb->correlationData : end;
    int device = env->xDevice(cb->context);
    int64_t stack = 0;

    int op, memDevice;

    vt__apicall_read(e, cb->functionParams, ok, &c);
    if (c.device >= 0 && device < 0) device = c.device;
    if (wants_site(e->shape)) stack = env->xSite();
    if (ok) complete_import(env, e->shape, &c);

    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_API_CALL;
    rec.u.api.api = e->api;
    rec.u.api.correlation = cb->correlationId;
    rec.u.api.start = start;
    rec.u.api.end = end;
    rec.u.api.thread = thread_id(t);
    rec.u.api.device = device;
    rec.u.api.status = status;
    rec.u.api.bytes = c.bytes;
    rec.u.api.ptr = c.ptr ? c.ptr : c.handle;
    rec.u.api.src = c.src;
    rec.u.api.dst = c.dst;
    rec.u.api.stream = c.bStream ? env->xStream(cb->context, c.hStream, e->perThread) : 0;
    rec.u.api.stack_id = stack;
    if (ok && bScan) {
        scan_launch(env, e->shape, cb->functionParams, cb->correlationId, device, &rec); /* submits rec */
    } else {
        /* a launch scanned at the driver launch inside it, or not scanned */
        if (ok && is_kernel_launch(e)) rec.u.api.scan = t->bScanned && t->bScanRead ? VT_SCAN_DONE : VT_SCAN_NOT_DONE;
        env->xSubmit(&rec);
    }

    if (!ok && is_alloc_shape(e->shape) && is_oom_status(domain, status)) {
        memset(&rec, 0, sizeof rec);
        rec.type = VT_HREC_OOM;
        rec.u.oom.ts = end;
        rec.u.oom.api = e->api;
        rec.u.oom.correlation = cb->correlationId;
        rec.u.oom.device = device;
        rec.u.oom.status = status;
        rec.u.oom.bytes = c.bytes;
        if (env->xMemInfo(&rec.u.oom.free_bytes, &rec.u.oom.total_bytes) != 0)
            rec.u.oom.free_bytes = rec.u.oom.total_bytes = 0;
        rec.u.oom.thread = thread_id(t);
        rec.u.oom.stack_id = stack;
        env->xSubmit(&rec);
    }

    if (ok && (op = memory_op(e->shape)) != 0) {
        /* where the memory lives: cuMemCreate's location (no device for host memory), else the
         * call's device */
        memDevice = device;
        if (e->shape == VT_SH_VMM_CREATE || e->shape == VT_SH_VMM_IMPORT) memDevice = c.bHost ? -1 : c.device >= 0 ? c.device : device;
        memset(&rec, 0, sizeof rec);
        rec.type = VT_HREC_MEMORY;
        rec.u.mem.ts = end;
        rec.u.mem.op = op;
        rec.u.mem.mem_kind = c.memKind;
        /* create/release/handle import: the address column holds the physical handle */
        rec.u.mem.address = c.ptr ? c.ptr : c.handle;
        rec.u.mem.bytes = c.bytes;
        rec.u.mem.device = memDevice;
        rec.u.mem.correlation = cb->correlationId;
        rec.u.mem.api = e->api;
        rec.u.mem.handle = c.handle;
        rec.u.mem.thread = thread_id(t);
        rec.u.mem.stack_id = stack;
        env->xSubmit(&rec);
    }

    if (ok) track_live(env->ivl, e->shape, &c);
    if (ok && is_copy_or_set(e->shape)) copy_uses(env, e, &c, cb->correlationId, device);
    if (ok && env->xExpect && writes_memory_record(e)) env->xExpect();
}


void vt__apicall_callback(const struct vt__apicall_env *env, struct vt__apithread *t,
                          CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const CUpti_CallbackData *cb)
{
    const struct vt__api *e = vt__api_find(domain, cbid);
    if (!e) return;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (cb->callbackSite == CUPTI_API_ENTER) {
            t->depth++;
            t->correlation = cb->correlationId;
            t->bScanned = 0;
            t->bScanRead = 0;
            if (cb->correlationData) *cb->correlationData = env->xNow();
            return;
        }
        if (t->depth > 0) t->depth--;
        /* a runtime launch is scanned here only when no driver launch inside it was */
        if (env->xActive())
            record_exit(env, t, domain, e, cb, is_runtime_kernel_launch(e->shape) && !t->bScanned);
        return;
    }
    if (t->depth > 0) {
        /* A runtime call already recorded covers the driver calls it makes; only its
         * launch is looked at here, where the kernel's parameter layout is known, and
         * scanned under the runtime call's correlation id (so each launch is scanned once). */
        if (cb->callbackSite == CUPTI_API_EXIT && env->xActive() && is_driver_kernel_launch(e->shape) &&
            cb->functionReturnValue && *(const int *)cb->functionReturnValue == 0) {
            t->bScanRead = scan_launch(env, e->shape, cb->functionParams, t->correlation,
                                       env->xDevice(cb->context), NULL);
            t->bScanned = 1;
        }
        return;
    }
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (cb->correlationData) *cb->correlationData = env->xNow();
        return;
    }
    if (env->xActive()) record_exit(env, t, domain, e, cb, is_driver_kernel_launch(e->shape));
}

static const CUpti_CallbackId aNvtx[] = {
    CUPTI_CBID_NVTX_nvtxRangeStartA, CUPTI_CBID_NVTX_nvtxRangeStartW, CUPTI_CBID_NVTX_nvtxRangeStartEx,
    CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd, CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
};

const CUpti_CallbackId *vt__nvtx_cbids(size_t *pn)
{
    *pn = sizeof aNvtx / sizeof aNvtx[0];
    return aNvtx;
}

void vt__nvtx_callback(const struct vt__apicall_env *env, CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
    struct vt_hrec rec;
    uint64_t id = 0;
    if (!d) return;
    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_NVTX;
    switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
        if (d->functionReturnValue) memcpy(&id, d->functionReturnValue, sizeof id); /* nvtxRangeId_t */
        break;
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
        if (d->functionParams) id = ((const vt__nvtxRangeEnd_params *)d->functionParams)->id;
        rec.u.nvtx.bEnd = 1;
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
        if (d->functionParams) id = ((const vt__nvtxDomainRangeEnd_params *)d->functionParams)->core.id;
        rec.u.nvtx.bEnd = 1;
        break;
    default: return;
    }
    rec.u.nvtx.id = id;
    if (id && env->xActive()) env->xSubmit(&rec);
}
