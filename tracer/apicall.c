/* API callbacks -> host records: the traced calls, how their parameters are read, what each records. */
#include "apicall.h"

#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "vramtrace/schema.h"

#define USES_MAX 512 /* buffer_use rows per call: a 4 KB parameter block holds at most 512
                      * pointers (PyTorch's fused multi-tensor kernels pass hundreds) */
#define MULTI_MAX 64 /* kernels read from one multi-device launch */

/*
 * How each traced API's parameters are read. One shape per parameter layout;
 * the per-thread-stream variants (_ptsz, _ptds) share their base layout. The
 * copies and sets are read field by field where each table entry says the
 * fields are (struct vt__field, from offsetof on the API's own params struct):
 * S_COPY and S_SET need nothing more; the other copy shapes read the struct an
 * entry's `arg` field points to, or the arrays of a batch.
 */
enum shape {
    S_NONE = 0,
    S_MALLOC,        /* void **ptr; size_t size [; stream] */
    S_MALLOC_STREAM, /* cudaMallocAsync: void **ptr; size_t size; cudaStream_t */
    S_MALLOC_POOL,   /* cudaMallocFromPoolAsync: void **ptr; size_t; pool; stream */
    S_MALLOC_PITCH,  /* cudaMallocPitch: void **ptr; size_t *pitch; width; height */
    S_MALLOC_3D,     /* cudaMalloc3D */
    S_HOST_REGISTER, /* cudaHostRegister: void *ptr; size_t size; flags */
    S_FREE,          /* void *ptr */
    S_FREE_STREAM,   /* cudaFreeAsync: void *ptr; stream */
    S_CU_ALLOC,      /* CUdeviceptr *dptr; size_t bytesize */
    S_CU_ALLOC_STREAM, /* cuMemAllocAsync: CUdeviceptr *; size_t; CUstream */
    S_CU_ALLOC_POOL,   /* cuMemAllocFromPoolAsync: CUdeviceptr *; size_t; pool; CUstream */
    S_CU_ALLOC_PITCH,  /* cuMemAllocPitch_v2 */
    S_CU_HOST_ALLOC,   /* void **pp; size_t bytesize */
    S_CU_HOST_REGISTER, /* void *p; size_t bytesize */
    S_CU_FREE,          /* CUdeviceptr */
    S_CU_FREE_STREAM,   /* CUdeviceptr; CUstream */
    S_CU_HOST_FREE,     /* void *p */
    S_VMM_CREATE, S_VMM_RELEASE, S_VMM_MAP, S_VMM_UNMAP, S_VMM_RESERVE, S_VMM_ADDR_FREE,
    S_VMM_SET_ACCESS, /* cuMemSetAccess: ptr, size, desc, count (row only) */
    S_VMM_IMPORT,     /* cuMemImportFromShareableHandle: handle out (memory owned elsewhere) */
    S_MC_CREATE,      /* cuMulticastCreate: handle out, prop (size) */
    S_MC_ADD,         /* cuMulticastAddDevice: handle, device */
    S_MC_BIND_MEM,    /* cuMulticastBindMem: handle, offset, memHandle, offset, size */
    S_MC_BIND_ADDR,   /* cuMulticastBindAddr: handle, offset, memptr, size */
    S_MC_UNBIND,      /* cuMulticastUnbind: handle, device, offset, size */
    S_IPC_OPEN,       /* cudaIpcOpenMemHandle / cuIpcOpenMemHandle: pointer out (another process's) */
    S_IPC_CLOSE,      /* cudaIpcCloseMemHandle / cuIpcCloseMemHandle: pointer */
    /* copies and sets */
    S_COPY,           /* fields dst, src (either may be absent: an array or a symbol), bytes = n x n2 */
    S_SET,            /* fields dst, bytes = n x n2 x n3 x mul */
    S_COPY3D,         /* arg: const struct cudaMemcpy3DParms * */
    S_COPY3D_PEER,    /* arg: const struct cudaMemcpy3DPeerParms * */
    S_CU_COPY2D,      /* arg: const CUDA_MEMCPY2D * */
    S_CU_COPY3D,      /* arg: const CUDA_MEMCPY3D * */
    S_CU_COPY3D_PEER, /* arg: const CUDA_MEMCPY3D_PEER * */
    S_COPY_BATCH,     /* fields dst, src, n: arrays of addresses and sizes (8 bytes each), n2: count */
    S_COPY3D_BATCH,   /* arg: struct cudaMemcpy3DBatchOp list, n2: count */
    S_CU_COPY3D_BATCH, /* arg: CUDA_MEMCPY3D_BATCH_OP list, n2: count */
    S_COPY_OPAQUE,    /* a copy whose parameters CUDA 13 publishes no layout for (removed runtime
                       * batches; the 32-bit-era cuMemcpy2D/3D, whose descriptor cupti.h declares
                       * only as a placeholder): row only */
    /* launches and synchronizations (no call site from here on) */
    S_LAUNCH,         /* cudaLaunchKernel, cudaLaunchCooperativeKernel: func (stub), args, stream */
    S_LAUNCH_KERNEL,  /* __cudaLaunchKernel: kernel (cudaKernel_t), args, stream */
    S_LAUNCH_EXC,     /* cudaLaunchKernelExC: config (stream), func (stub), args */
    S_CU_LAUNCH,      /* cuLaunchKernel: f, hStream, kernelParams, extra */
    S_CU_LAUNCH_EX,   /* cuLaunchKernelEx: config (hStream), f, kernelParams, extra */
    S_CU_LAUNCH_COOP, /* cuLaunchCooperativeKernel: f, hStream, kernelParams */
    S_CU_LAUNCH_MULTI, /* cuLaunchCooperativeKernelMultiDevice: CUDA_LAUNCH_PARAMS list */
    S_GRAPH_LAUNCH,   /* cudaGraphLaunch: graphExec, stream */
    S_CU_GRAPH_LAUNCH, /* cuGraphLaunch: hGraph, hStream */
    S_CU_LAUNCH_GRID_ASYNC, /* cuLaunchGridAsync: f, grid, hStream (arguments set by cuParamSet*) */
    S_SYNC,           /* no parameters of interest (cuLaunch, cuLaunchGrid: f only; removed runtime
                       * launches, whose parameter structs CUDA 13 no longer publishes) */
    S_STREAM_SYNC,    /* cudaStreamSynchronize: stream */
    S_CU_STREAM_SYNC, /* cuStreamSynchronize: hStream */
};

/* Shapes that read several APIs through one struct rely on the layouts agreeing. */
#define SAME_FIELD(T1, T2, f) (offsetof(T1, f) == offsetof(T2, f))
_Static_assert(SAME_FIELD(cudaLaunchCooperativeKernel_v9000_params, cudaLaunchKernel_v7000_params, func) &&
                   SAME_FIELD(cudaLaunchCooperativeKernel_v9000_params, cudaLaunchKernel_v7000_params, args) &&
                   SAME_FIELD(cudaLaunchCooperativeKernel_v9000_params, cudaLaunchKernel_v7000_params, stream),
               "cudaLaunchCooperativeKernel is read as cudaLaunchKernel");
_Static_assert(offsetof(vt__cudaLaunchKernel_v13000_params, kernel) == offsetof(cudaLaunchKernel_v7000_params, func) &&
                   SAME_FIELD(vt__cudaLaunchKernel_v13000_params, cudaLaunchKernel_v7000_params, args) &&
                   SAME_FIELD(vt__cudaLaunchKernel_v13000_params, cudaLaunchKernel_v7000_params, stream),
               "__cudaLaunchKernel takes cudaLaunchKernel's parameters");
_Static_assert(offsetof(cudaIpcOpenMemHandle_v4010_params, devPtr) == offsetof(cuIpcOpenMemHandle_v2_params, pdptr) &&
                   sizeof(void *) == sizeof(CUdeviceptr) &&
                   offsetof(cudaIpcCloseMemHandle_v4010_params, devPtr) == offsetof(cuIpcCloseMemHandle_params, dptr),
               "the runtime's and the driver's IPC calls are read alike");
/* batch arrays are read 8 bytes per address */
_Static_assert(sizeof(void *) == 8 && sizeof(CUdeviceptr) == 8 && sizeof(size_t) == 8,
               "a 64-bit platform");

/* Entries without fields read (their shape reads typed structs), runtime and driver. */
#define RT(name, id, sh, pt) {.cbid = CUPTI_RUNTIME_TRACE_CBID_##name, .api = id, .shape = sh, .perThread = pt},
#define DRV(name, id, sh, pt) {.cbid = CUPTI_DRIVER_TRACE_CBID_##name, .api = id, .shape = sh, .perThread = pt},

/*
 * Entries with fields: FIELDS(T, member...) names them in T = name##_params. The
 * type is pasted here, before `name` could be expanded: cuda.h defines many
 * driver names as macros of their current version (cuMemcpyHtoD -> cuMemcpyHtoD_v2),
 * and the pre-3.2 entries must read their own structs.
 */
#define RTF(name, id, sh, pt, FIELDS, ...) \
    {.cbid = CUPTI_RUNTIME_TRACE_CBID_##name, .api = id, .shape = sh, .perThread = pt, \
     FIELDS(name##_params, __VA_ARGS__)},
#define DRVF(name, id, sh, pt, FIELDS, ...) \
    {.cbid = CUPTI_DRIVER_TRACE_CBID_##name, .api = id, .shape = sh, .perThread = pt, \
     FIELDS(name##_params, __VA_ARGS__)},

/* Where member m is in parameter struct T. */
#define FLD(T, m) {offsetof(T, m) + 1, sizeof(((T *)0)->m)}

/* Field sets, by role: d_ destination, s_ source, n_ bytes (or elements of mul_ bytes), w_ x h_
 * (x z_), st_ stream; a batch names its arrays of destinations, sources, sizes and their count. */
#define CPY(T, d_, s_, n_) .dst = FLD(T, d_), .src = FLD(T, s_), .n = FLD(T, n_)
#define CPY_S(T, d_, s_, n_, st_) CPY(T, d_, s_, n_), .stream = FLD(T, st_)
#define CPY2(T, d_, s_, w_, h_) CPY(T, d_, s_, w_), .n2 = FLD(T, h_)
#define CPY2_S(T, d_, s_, w_, h_, st_) CPY2(T, d_, s_, w_, h_), .stream = FLD(T, st_)
#define TO(T, s_, n_) .src = FLD(T, s_), .n = FLD(T, n_) /* into an array or symbol */
#define TO_S(T, s_, n_, st_) TO(T, s_, n_), .stream = FLD(T, st_)
#define TO2(T, s_, w_, h_) TO(T, s_, w_), .n2 = FLD(T, h_)
#define TO2_S(T, s_, w_, h_, st_) TO2(T, s_, w_, h_), .stream = FLD(T, st_)
#define FROM(T, d_, n_) .dst = FLD(T, d_), .n = FLD(T, n_) /* out of an array or symbol */
#define FROM_S(T, d_, n_, st_) FROM(T, d_, n_), .stream = FLD(T, st_)
#define FROM2(T, d_, w_, h_) FROM(T, d_, w_), .n2 = FLD(T, h_)
#define FROM2_S(T, d_, w_, h_, st_) FROM2(T, d_, w_, h_), .stream = FLD(T, st_)
#define BYTES(T, n_) .n = FLD(T, n_) /* array to array */
#define BYTES2(T, w_, h_) BYTES(T, w_), .n2 = FLD(T, h_)
#define SET(T, mul_, d_, n_) .dst = FLD(T, d_), .n = FLD(T, n_), .mul = mul_
#define SET_S(T, mul_, d_, n_, st_) SET(T, mul_, d_, n_), .stream = FLD(T, st_)
#define SET2(T, mul_, d_, w_, h_) SET(T, mul_, d_, w_), .n2 = FLD(T, h_)
#define SET2_S(T, mul_, d_, w_, h_, st_) SET2(T, mul_, d_, w_, h_), .stream = FLD(T, st_)
#define SET3(T, d_, w_, h_, z_) .dst = FLD(T, d_), .n = FLD(T, w_), .n2 = FLD(T, h_), .n3 = FLD(T, z_)
#define SET3_S(T, d_, w_, h_, z_, st_) SET3(T, d_, w_, h_, z_), .stream = FLD(T, st_)
#define ARG(T, a_) .arg = FLD(T, a_) /* the struct describing the copy */
#define ARG_S(T, a_, st_) ARG(T, a_), .stream = FLD(T, st_)
#define BATCH(T, ds_, ss_, ns_, count_, st_) \
    .dst = FLD(T, ds_), .src = FLD(T, ss_), .n = FLD(T, ns_), .n2 = FLD(T, count_), .stream = FLD(T, st_)
#define OPS(T, list_, count_, st_) .arg = FLD(T, list_), .n2 = FLD(T, count_), .stream = FLD(T, st_)
#define STREAM(T, st_) .stream = FLD(T, st_)

static const struct vt__api aRuntime[] = {
    RT(cudaMalloc_v3020, 1, S_MALLOC, 0)
    RT(cudaFree_v3020, 2, S_FREE, 0)
    RT(cudaMallocAsync_v11020, 3, S_MALLOC_STREAM, 0)
    RT(cudaMallocAsync_ptsz_v11020, 3, S_MALLOC_STREAM, 1)
    RT(cudaFreeAsync_v11020, 4, S_FREE_STREAM, 0)
    RT(cudaFreeAsync_ptsz_v11020, 4, S_FREE_STREAM, 1)
    RT(cudaMallocFromPoolAsync_v11020, 5, S_MALLOC_POOL, 0)
    RT(cudaMallocFromPoolAsync_ptsz_v11020, 5, S_MALLOC_POOL, 1)
    RT(cudaIpcOpenMemHandle_v4010, 14, S_IPC_OPEN, 0)
    RT(cudaIpcCloseMemHandle_v4010, 15, S_IPC_CLOSE, 0)
    RT(cudaMallocHost_v3020, 6, S_MALLOC, 0)
    RT(cudaHostAlloc_v3020, 7, S_MALLOC, 0)
    RT(cudaFreeHost_v3020, 8, S_FREE, 0)
    RT(cudaMallocManaged_v6000, 9, S_MALLOC, 0)
    RT(cudaMallocPitch_v3020, 10, S_MALLOC_PITCH, 0)
    RT(cudaMalloc3D_v3020, 11, S_MALLOC_3D, 0)
    RT(cudaHostRegister_v4000, 12, S_HOST_REGISTER, 0)
    RT(cudaHostUnregister_v4000, 13, S_FREE, 0)
    /* copies: every entry point of cupti_runtime_cbid.h in 13.0 but the graph-node ones */
    RTF(cudaMemcpy_v3020, 60, S_COPY, 0, CPY, dst, src, count)
    RTF(cudaMemcpy_ptds_v7000, 60, S_COPY, 1, CPY, dst, src, count)
    RTF(cudaMemcpyAsync_v3020, 61, S_COPY, 0, CPY_S, dst, src, count, stream)
    RTF(cudaMemcpyAsync_ptsz_v7000, 61, S_COPY, 1, CPY_S, dst, src, count, stream)
    RTF(cudaMemcpy2D_v3020, 62, S_COPY, 0, CPY2, dst, src, width, height)
    RTF(cudaMemcpy2D_ptds_v7000, 62, S_COPY, 1, CPY2, dst, src, width, height)
    RTF(cudaMemcpy2DAsync_v3020, 63, S_COPY, 0, CPY2_S, dst, src, width, height, stream)
    RTF(cudaMemcpy2DAsync_ptsz_v7000, 63, S_COPY, 1, CPY2_S, dst, src, width, height, stream)
    RTF(cudaMemcpyPeer_v4000, 64, S_COPY, 0, CPY, dst, src, count)
    RTF(cudaMemcpyPeerAsync_v4000, 65, S_COPY, 0, CPY_S, dst, src, count, stream)
    RTF(cudaMemcpyToArray_v3020, 140, S_COPY, 0, TO, src, count)
    RTF(cudaMemcpyToArray_ptds_v7000, 140, S_COPY, 1, TO, src, count)
    RTF(cudaMemcpyToArrayAsync_v3020, 141, S_COPY, 0, TO_S, src, count, stream)
    RTF(cudaMemcpyToArrayAsync_ptsz_v7000, 141, S_COPY, 1, TO_S, src, count, stream)
    RTF(cudaMemcpyFromArray_v3020, 142, S_COPY, 0, FROM, dst, count)
    RTF(cudaMemcpyFromArray_ptds_v7000, 142, S_COPY, 1, FROM, dst, count)
    RTF(cudaMemcpyFromArrayAsync_v3020, 143, S_COPY, 0, FROM_S, dst, count, stream)
    RTF(cudaMemcpyFromArrayAsync_ptsz_v7000, 143, S_COPY, 1, FROM_S, dst, count, stream)
    RTF(cudaMemcpyArrayToArray_v3020, 144, S_COPY, 0, BYTES, count)
    RTF(cudaMemcpyArrayToArray_ptds_v7000, 144, S_COPY, 1, BYTES, count)
    RTF(cudaMemcpy2DToArray_v3020, 145, S_COPY, 0, TO2, src, width, height)
    RTF(cudaMemcpy2DToArray_ptds_v7000, 145, S_COPY, 1, TO2, src, width, height)
    RTF(cudaMemcpy2DToArrayAsync_v3020, 146, S_COPY, 0, TO2_S, src, width, height, stream)
    RTF(cudaMemcpy2DToArrayAsync_ptsz_v7000, 146, S_COPY, 1, TO2_S, src, width, height, stream)
    RTF(cudaMemcpy2DFromArray_v3020, 147, S_COPY, 0, FROM2, dst, width, height)
    RTF(cudaMemcpy2DFromArray_ptds_v7000, 147, S_COPY, 1, FROM2, dst, width, height)
    RTF(cudaMemcpy2DFromArrayAsync_v3020, 148, S_COPY, 0, FROM2_S, dst, width, height, stream)
    RTF(cudaMemcpy2DFromArrayAsync_ptsz_v7000, 148, S_COPY, 1, FROM2_S, dst, width, height, stream)
    RTF(cudaMemcpy2DArrayToArray_v3020, 149, S_COPY, 0, BYTES2, width, height)
    RTF(cudaMemcpy2DArrayToArray_ptds_v7000, 149, S_COPY, 1, BYTES2, width, height)
    RTF(cudaMemcpyToSymbol_v3020, 150, S_COPY, 0, TO, src, count)
    RTF(cudaMemcpyToSymbol_ptds_v7000, 150, S_COPY, 1, TO, src, count)
    RTF(cudaMemcpyToSymbolAsync_v3020, 151, S_COPY, 0, TO_S, src, count, stream)
    RTF(cudaMemcpyToSymbolAsync_ptsz_v7000, 151, S_COPY, 1, TO_S, src, count, stream)
    RTF(cudaMemcpyFromSymbol_v3020, 152, S_COPY, 0, FROM, dst, count)
    RTF(cudaMemcpyFromSymbol_ptds_v7000, 152, S_COPY, 1, FROM, dst, count)
    RTF(cudaMemcpyFromSymbolAsync_v3020, 153, S_COPY, 0, FROM_S, dst, count, stream)
    RTF(cudaMemcpyFromSymbolAsync_ptsz_v7000, 153, S_COPY, 1, FROM_S, dst, count, stream)
    RTF(cudaMemcpy3D_v3020, 154, S_COPY3D, 0, ARG, p)
    RTF(cudaMemcpy3D_ptds_v7000, 154, S_COPY3D, 1, ARG, p)
    RTF(cudaMemcpy3DAsync_v3020, 155, S_COPY3D, 0, ARG_S, p, stream)
    RTF(cudaMemcpy3DAsync_ptsz_v7000, 155, S_COPY3D, 1, ARG_S, p, stream)
    RTF(cudaMemcpy3DPeer_v4000, 156, S_COPY3D_PEER, 0, ARG, p)
    RTF(cudaMemcpy3DPeer_ptds_v7000, 156, S_COPY3D_PEER, 1, ARG, p)
    RTF(cudaMemcpy3DPeerAsync_v4000, 157, S_COPY3D_PEER, 0, ARG_S, p, stream)
    RTF(cudaMemcpy3DPeerAsync_ptsz_v7000, 157, S_COPY3D_PEER, 1, ARG_S, p, stream)
    RTF(cudaMemcpyBatchAsync_v13000, 158, S_COPY_BATCH, 0, BATCH, dsts, srcs, sizes, count, stream)
    RTF(cudaMemcpyBatchAsync_ptsz_v13000, 158, S_COPY_BATCH, 1, BATCH, dsts, srcs, sizes, count, stream)
    RT(cudaMemcpyBatchAsync_v12080, 158, S_COPY_OPAQUE, 0)
    RT(cudaMemcpyBatchAsync_ptsz_v12080, 158, S_COPY_OPAQUE, 1)
    RTF(cudaMemcpy3DBatchAsync_v13000, 159, S_COPY3D_BATCH, 0, OPS, opList, numOps, stream)
    RTF(cudaMemcpy3DBatchAsync_ptsz_v13000, 159, S_COPY3D_BATCH, 1, OPS, opList, numOps, stream)
    RT(cudaMemcpy3DBatchAsync_v12080, 159, S_COPY_OPAQUE, 0)
    RT(cudaMemcpy3DBatchAsync_ptsz_v12080, 159, S_COPY_OPAQUE, 1)
    /* sets */
    RTF(cudaMemset_v3020, 80, S_SET, 0, SET, 1, devPtr, count)
    RTF(cudaMemset_ptds_v7000, 80, S_SET, 1, SET, 1, devPtr, count)
    RTF(cudaMemsetAsync_v3020, 81, S_SET, 0, SET_S, 1, devPtr, count, stream)
    RTF(cudaMemsetAsync_ptsz_v7000, 81, S_SET, 1, SET_S, 1, devPtr, count, stream)
    RTF(cudaMemset2D_v3020, 180, S_SET, 0, SET2, 1, devPtr, width, height)
    RTF(cudaMemset2D_ptds_v7000, 180, S_SET, 1, SET2, 1, devPtr, width, height)
    RTF(cudaMemset2DAsync_v3020, 181, S_SET, 0, SET2_S, 1, devPtr, width, height, stream)
    RTF(cudaMemset2DAsync_ptsz_v7000, 181, S_SET, 1, SET2_S, 1, devPtr, width, height, stream)
    RTF(cudaMemset3D_v3020, 182, S_SET, 0, SET3, pitchedDevPtr.ptr, extent.width, extent.height, extent.depth)
    RTF(cudaMemset3D_ptds_v7000, 182, S_SET, 1, SET3, pitchedDevPtr.ptr, extent.width, extent.height,
        extent.depth)
    RTF(cudaMemset3DAsync_v3020, 183, S_SET, 0, SET3_S, pitchedDevPtr.ptr, extent.width, extent.height,
        extent.depth, stream)
    RTF(cudaMemset3DAsync_ptsz_v7000, 183, S_SET, 1, SET3_S, pitchedDevPtr.ptr, extent.width,
        extent.height, extent.depth, stream)
    /* launches */
    RT(cudaLaunchKernel_v7000, 100, S_LAUNCH, 0)
    RT(cudaLaunchKernel_ptsz_v7000, 100, S_LAUNCH, 1)
    RT(cudaLaunchKernelExC_v11060, 101, S_LAUNCH_EXC, 0)
    RT(cudaLaunchKernelExC_ptsz_v11060, 101, S_LAUNCH_EXC, 1)
    RT(__cudaLaunchKernel_v13000, 104, S_LAUNCH_KERNEL, 0)
    RT(__cudaLaunchKernel_ptsz_v13000, 104, S_LAUNCH_KERNEL, 1)
    RT(cudaLaunchCooperativeKernel_v9000, 105, S_LAUNCH, 0)
    RT(cudaLaunchCooperativeKernel_ptsz_v9000, 105, S_LAUNCH, 1)
    RT(cudaLaunchCooperativeKernelMultiDevice_v9000, 106, S_SYNC, 0)
    RT(cudaGraphLaunch_v10000, 107, S_GRAPH_LAUNCH, 0)
    RT(cudaGraphLaunch_ptsz_v10000, 107, S_GRAPH_LAUNCH, 1)
    RT(cudaLaunch_v3020, 108, S_SYNC, 0)
    RT(cudaLaunch_ptsz_v7000, 108, S_SYNC, 1)
    RT(cudaDeviceSynchronize_v3020, 120, S_SYNC, 0)
    RT(cudaStreamSynchronize_v3020, 121, S_STREAM_SYNC, 0)
    RT(cudaStreamSynchronize_ptsz_v7000, 121, S_STREAM_SYNC, 1)
};

static const struct vt__api aDriver[] = {
    DRV(cuMemAlloc_v2, 20, S_CU_ALLOC, 0)
    DRV(cuMemFree_v2, 21, S_CU_FREE, 0)
    DRV(cuMemAllocAsync, 22, S_CU_ALLOC_STREAM, 0)
    DRV(cuMemAllocAsync_ptsz, 22, S_CU_ALLOC_STREAM, 1)
    DRV(cuMemFreeAsync, 23, S_CU_FREE_STREAM, 0)
    DRV(cuMemFreeAsync_ptsz, 23, S_CU_FREE_STREAM, 1)
    DRV(cuMemAllocFromPoolAsync, 24, S_CU_ALLOC_POOL, 0)
    DRV(cuMemAllocFromPoolAsync_ptsz, 24, S_CU_ALLOC_POOL, 1)
    DRV(cuMemAllocHost_v2, 25, S_CU_HOST_ALLOC, 0)
    DRV(cuMemHostAlloc, 26, S_CU_HOST_ALLOC, 0)
    DRV(cuMemFreeHost, 27, S_CU_HOST_FREE, 0)
    DRV(cuMemAllocManaged, 28, S_CU_ALLOC, 0)
    DRV(cuMemAllocPitch_v2, 29, S_CU_ALLOC_PITCH, 0)
    DRV(cuMemHostRegister_v2, 30, S_CU_HOST_REGISTER, 0)
    DRV(cuMemHostUnregister, 31, S_CU_HOST_FREE, 0)
    DRV(cuMemCreate, 40, S_VMM_CREATE, 0)
    DRV(cuMemRelease, 41, S_VMM_RELEASE, 0)
    DRV(cuMemMap, 42, S_VMM_MAP, 0)
    DRV(cuMemUnmap, 43, S_VMM_UNMAP, 0)
    DRV(cuMemAddressReserve, 44, S_VMM_RESERVE, 0)
    DRV(cuMemAddressFree, 45, S_VMM_ADDR_FREE, 0)
    DRV(cuMemSetAccess, 46, S_VMM_SET_ACCESS, 0)
    DRV(cuMemImportFromShareableHandle, 47, S_VMM_IMPORT, 0)
    DRV(cuMulticastCreate, 48, S_MC_CREATE, 0)
    DRV(cuMulticastAddDevice, 49, S_MC_ADD, 0)
    DRV(cuMulticastBindMem, 50, S_MC_BIND_MEM, 0)
    DRV(cuMulticastBindAddr, 51, S_MC_BIND_ADDR, 0)
    DRV(cuMulticastUnbind, 52, S_MC_UNBIND, 0)
    DRV(cuIpcOpenMemHandle, 53, S_IPC_OPEN, 0)
    DRV(cuIpcOpenMemHandle_v2, 53, S_IPC_OPEN, 0)
    DRV(cuIpcCloseMemHandle, 54, S_IPC_CLOSE, 0)
    /* copies: every entry point of cupti_driver_cbid.h in 13.0 with a parameter struct, but the
     * graph-node ones (the pre-3.2 forms, 32-bit device pointers, included) */
    DRVF(cuMemcpy, 66, S_COPY, 0, CPY, dst, src, ByteCount)
    DRVF(cuMemcpy_ptds, 66, S_COPY, 1, CPY, dst, src, ByteCount)
    DRVF(cuMemcpyAsync, 67, S_COPY, 0, CPY_S, dst, src, ByteCount, hStream)
    DRVF(cuMemcpyAsync_ptsz, 67, S_COPY, 1, CPY_S, dst, src, ByteCount, hStream)
    DRVF(cuMemcpyHtoD, 68, S_COPY, 0, CPY, dstDevice, srcHost, ByteCount)
    DRVF(cuMemcpyHtoD_v2, 68, S_COPY, 0, CPY, dstDevice, srcHost, ByteCount)
    DRVF(cuMemcpyHtoD_v2_ptds, 68, S_COPY, 1, CPY, dstDevice, srcHost, ByteCount)
    DRVF(cuMemcpyHtoDAsync, 69, S_COPY, 0, CPY_S, dstDevice, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyHtoDAsync_v2, 69, S_COPY, 0, CPY_S, dstDevice, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyHtoDAsync_v2_ptsz, 69, S_COPY, 1, CPY_S, dstDevice, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyDtoH, 70, S_COPY, 0, CPY, dstHost, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoH_v2, 70, S_COPY, 0, CPY, dstHost, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoH_v2_ptds, 70, S_COPY, 1, CPY, dstHost, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoHAsync, 71, S_COPY, 0, CPY_S, dstHost, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoHAsync_v2, 71, S_COPY, 0, CPY_S, dstHost, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoHAsync_v2_ptsz, 71, S_COPY, 1, CPY_S, dstHost, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoD, 72, S_COPY, 0, CPY, dstDevice, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoD_v2, 72, S_COPY, 0, CPY, dstDevice, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoD_v2_ptds, 72, S_COPY, 1, CPY, dstDevice, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoDAsync, 73, S_COPY, 0, CPY_S, dstDevice, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoDAsync_v2, 73, S_COPY, 0, CPY_S, dstDevice, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoDAsync_v2_ptsz, 73, S_COPY, 1, CPY_S, dstDevice, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoA, 160, S_COPY, 0, TO, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoA_v2, 160, S_COPY, 0, TO, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoA_v2_ptds, 160, S_COPY, 1, TO, srcDevice, ByteCount)
    DRVF(cuMemcpyAtoD, 161, S_COPY, 0, FROM, dstDevice, ByteCount)
    DRVF(cuMemcpyAtoD_v2, 161, S_COPY, 0, FROM, dstDevice, ByteCount)
    DRVF(cuMemcpyAtoD_v2_ptds, 161, S_COPY, 1, FROM, dstDevice, ByteCount)
    DRVF(cuMemcpyHtoA, 162, S_COPY, 0, TO, srcHost, ByteCount)
    DRVF(cuMemcpyHtoA_v2, 162, S_COPY, 0, TO, srcHost, ByteCount)
    DRVF(cuMemcpyHtoA_v2_ptds, 162, S_COPY, 1, TO, srcHost, ByteCount)
    DRVF(cuMemcpyHtoAAsync, 163, S_COPY, 0, TO_S, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyHtoAAsync_v2, 163, S_COPY, 0, TO_S, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyHtoAAsync_v2_ptsz, 163, S_COPY, 1, TO_S, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyAtoH, 164, S_COPY, 0, FROM, dstHost, ByteCount)
    DRVF(cuMemcpyAtoH_v2, 164, S_COPY, 0, FROM, dstHost, ByteCount)
    DRVF(cuMemcpyAtoH_v2_ptds, 164, S_COPY, 1, FROM, dstHost, ByteCount)
    DRVF(cuMemcpyAtoHAsync, 165, S_COPY, 0, FROM_S, dstHost, ByteCount, hStream)
    DRVF(cuMemcpyAtoHAsync_v2, 165, S_COPY, 0, FROM_S, dstHost, ByteCount, hStream)
    DRVF(cuMemcpyAtoHAsync_v2_ptsz, 165, S_COPY, 1, FROM_S, dstHost, ByteCount, hStream)
    DRVF(cuMemcpyAtoA, 166, S_COPY, 0, BYTES, ByteCount)
    DRVF(cuMemcpyAtoA_v2, 166, S_COPY, 0, BYTES, ByteCount)
    DRVF(cuMemcpyAtoA_v2_ptds, 166, S_COPY, 1, BYTES, ByteCount)
    DRV(cuMemcpy2D, 167, S_COPY_OPAQUE, 0)
    DRVF(cuMemcpy2D_v2, 167, S_CU_COPY2D, 0, ARG, pCopy)
    DRVF(cuMemcpy2D_v2_ptds, 167, S_CU_COPY2D, 1, ARG, pCopy)
    DRV(cuMemcpy2DUnaligned, 168, S_COPY_OPAQUE, 0)
    DRVF(cuMemcpy2DUnaligned_v2, 168, S_CU_COPY2D, 0, ARG, pCopy)
    DRVF(cuMemcpy2DUnaligned_v2_ptds, 168, S_CU_COPY2D, 1, ARG, pCopy)
    DRVF(cuMemcpy2DAsync, 169, S_COPY_OPAQUE, 0, STREAM, hStream)
    DRVF(cuMemcpy2DAsync_v2, 169, S_CU_COPY2D, 0, ARG_S, pCopy, hStream)
    DRVF(cuMemcpy2DAsync_v2_ptsz, 169, S_CU_COPY2D, 1, ARG_S, pCopy, hStream)
    DRV(cuMemcpy3D, 170, S_COPY_OPAQUE, 0)
    DRVF(cuMemcpy3D_v2, 170, S_CU_COPY3D, 0, ARG, pCopy)
    DRVF(cuMemcpy3D_v2_ptds, 170, S_CU_COPY3D, 1, ARG, pCopy)
    DRVF(cuMemcpy3DAsync, 171, S_COPY_OPAQUE, 0, STREAM, hStream)
    DRVF(cuMemcpy3DAsync_v2, 171, S_CU_COPY3D, 0, ARG_S, pCopy, hStream)
    DRVF(cuMemcpy3DAsync_v2_ptsz, 171, S_CU_COPY3D, 1, ARG_S, pCopy, hStream)
    DRVF(cuMemcpyPeer, 172, S_COPY, 0, CPY, dstDevice, srcDevice, ByteCount)
    DRVF(cuMemcpyPeer_ptds, 172, S_COPY, 1, CPY, dstDevice, srcDevice, ByteCount)
    DRVF(cuMemcpyPeerAsync, 173, S_COPY, 0, CPY_S, dstDevice, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyPeerAsync_ptsz, 173, S_COPY, 1, CPY_S, dstDevice, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpy3DPeer, 174, S_CU_COPY3D_PEER, 0, ARG, pCopy)
    DRVF(cuMemcpy3DPeer_ptds, 174, S_CU_COPY3D_PEER, 1, ARG, pCopy)
    DRVF(cuMemcpy3DPeerAsync, 175, S_CU_COPY3D_PEER, 0, ARG_S, pCopy, hStream)
    DRVF(cuMemcpy3DPeerAsync_ptsz, 175, S_CU_COPY3D_PEER, 1, ARG_S, pCopy, hStream)
    DRVF(cuMemcpyBatchAsync, 176, S_COPY_BATCH, 0, BATCH, dsts, srcs, sizes, count, hStream)
    DRVF(cuMemcpyBatchAsync_ptsz, 176, S_COPY_BATCH, 1, BATCH, dsts, srcs, sizes, count, hStream)
    DRVF(cuMemcpyBatchAsync_v2, 176, S_COPY_BATCH, 0, BATCH, dsts, srcs, sizes, count, hStream)
    DRVF(cuMemcpyBatchAsync_v2_ptsz, 176, S_COPY_BATCH, 1, BATCH, dsts, srcs, sizes, count, hStream)
    DRVF(cuMemcpy3DBatchAsync, 177, S_CU_COPY3D_BATCH, 0, OPS, opList, numOps, hStream)
    DRVF(cuMemcpy3DBatchAsync_ptsz, 177, S_CU_COPY3D_BATCH, 1, OPS, opList, numOps, hStream)
    DRVF(cuMemcpy3DBatchAsync_v2, 177, S_CU_COPY3D_BATCH, 0, OPS, opList, numOps, hStream)
    DRVF(cuMemcpy3DBatchAsync_v2_ptsz, 177, S_CU_COPY3D_BATCH, 1, OPS, opList, numOps, hStream)
    /* sets (the pre-3.2 forms included) */
    DRVF(cuMemsetD8, 82, S_SET, 0, SET, 1, dstDevice, N)
    DRVF(cuMemsetD8_v2, 82, S_SET, 0, SET, 1, dstDevice, N)
    DRVF(cuMemsetD8_v2_ptds, 82, S_SET, 1, SET, 1, dstDevice, N)
    DRVF(cuMemsetD8Async, 83, S_SET, 0, SET_S, 1, dstDevice, N, hStream)
    DRVF(cuMemsetD8Async_ptsz, 83, S_SET, 1, SET_S, 1, dstDevice, N, hStream)
    DRVF(cuMemsetD32, 84, S_SET, 0, SET, 4, dstDevice, N)
    DRVF(cuMemsetD32_v2, 84, S_SET, 0, SET, 4, dstDevice, N)
    DRVF(cuMemsetD32_v2_ptds, 84, S_SET, 1, SET, 4, dstDevice, N)
    DRVF(cuMemsetD32Async, 85, S_SET, 0, SET_S, 4, dstDevice, N, hStream)
    DRVF(cuMemsetD32Async_ptsz, 85, S_SET, 1, SET_S, 4, dstDevice, N, hStream)
    DRVF(cuMemsetD16, 184, S_SET, 0, SET, 2, dstDevice, N)
    DRVF(cuMemsetD16_v2, 184, S_SET, 0, SET, 2, dstDevice, N)
    DRVF(cuMemsetD16_v2_ptds, 184, S_SET, 1, SET, 2, dstDevice, N)
    DRVF(cuMemsetD16Async, 185, S_SET, 0, SET_S, 2, dstDevice, N, hStream)
    DRVF(cuMemsetD16Async_ptsz, 185, S_SET, 1, SET_S, 2, dstDevice, N, hStream)
    DRVF(cuMemsetD2D8, 186, S_SET, 0, SET2, 1, dstDevice, Width, Height)
    DRVF(cuMemsetD2D8_v2, 186, S_SET, 0, SET2, 1, dstDevice, Width, Height)
    DRVF(cuMemsetD2D8_v2_ptds, 186, S_SET, 1, SET2, 1, dstDevice, Width, Height)
    DRVF(cuMemsetD2D8Async, 187, S_SET, 0, SET2_S, 1, dstDevice, Width, Height, hStream)
    DRVF(cuMemsetD2D8Async_ptsz, 187, S_SET, 1, SET2_S, 1, dstDevice, Width, Height, hStream)
    DRVF(cuMemsetD2D16, 188, S_SET, 0, SET2, 2, dstDevice, Width, Height)
    DRVF(cuMemsetD2D16_v2, 188, S_SET, 0, SET2, 2, dstDevice, Width, Height)
    DRVF(cuMemsetD2D16_v2_ptds, 188, S_SET, 1, SET2, 2, dstDevice, Width, Height)
    DRVF(cuMemsetD2D16Async, 189, S_SET, 0, SET2_S, 2, dstDevice, Width, Height, hStream)
    DRVF(cuMemsetD2D16Async_ptsz, 189, S_SET, 1, SET2_S, 2, dstDevice, Width, Height, hStream)
    DRVF(cuMemsetD2D32, 190, S_SET, 0, SET2, 4, dstDevice, Width, Height)
    DRVF(cuMemsetD2D32_v2, 190, S_SET, 0, SET2, 4, dstDevice, Width, Height)
    DRVF(cuMemsetD2D32_v2_ptds, 190, S_SET, 1, SET2, 4, dstDevice, Width, Height)
    DRVF(cuMemsetD2D32Async, 191, S_SET, 0, SET2_S, 4, dstDevice, Width, Height, hStream)
    DRVF(cuMemsetD2D32Async_ptsz, 191, S_SET, 1, SET2_S, 4, dstDevice, Width, Height, hStream)
    /* launches */
    DRV(cuLaunchKernel, 102, S_CU_LAUNCH, 0)
    DRV(cuLaunchKernel_ptsz, 102, S_CU_LAUNCH, 1)
    DRV(cuLaunchKernelEx, 103, S_CU_LAUNCH_EX, 0)
    DRV(cuLaunchKernelEx_ptsz, 103, S_CU_LAUNCH_EX, 1)
    DRV(cuLaunchCooperativeKernel, 109, S_CU_LAUNCH_COOP, 0)
    DRV(cuLaunchCooperativeKernel_ptsz, 109, S_CU_LAUNCH_COOP, 1)
    DRV(cuLaunchCooperativeKernelMultiDevice, 110, S_CU_LAUNCH_MULTI, 0)
    DRV(cuGraphLaunch, 111, S_CU_GRAPH_LAUNCH, 0)
    DRV(cuGraphLaunch_ptsz, 111, S_CU_GRAPH_LAUNCH, 1)
    DRV(cuLaunch, 112, S_SYNC, 0)
    DRV(cuLaunchGrid, 113, S_SYNC, 0)
    DRV(cuLaunchGridAsync, 114, S_CU_LAUNCH_GRID_ASYNC, 0)
    DRV(cuCtxSynchronize, 122, S_SYNC, 0)
    DRV(cuCtxSynchronize_v2, 122, S_SYNC, 0)
    DRV(cuStreamSynchronize, 123, S_CU_STREAM_SYNC, 0)
    DRV(cuStreamSynchronize_ptsz, 123, S_CU_STREAM_SYNC, 1)
};

/* What one API call asked for, read from its parameters at exit. */
struct call {
    uint64_t bytes, ptr, src, dst, handle;
    const void *hStream;
    int bStream;  /* hStream is meaningful */
    int device;   /* from the parameters (cuMemCreate's device location), else -1 */
    int memKind;  /* for memory_event rows (VMM, imports) */
    int bHost;    /* cuMemCreate: the memory lives in host memory (device NULL) */
    /* a batch copy's operations, read again for its buffer uses: */
    size_t nOp;
    const void *pOpDst, *pOpSrc; /* S_COPY_BATCH: arrays of nOp 8-byte addresses, or NULL */
    const void *pOps;            /* S_COPY3D_BATCH, S_CU_COPY3D_BATCH: the operation list */
};

/* The value of field f in parameter struct pv, zero-extended; 0 when the API has no such value. */
static uint64_t field(const void *pv, struct vt__field f)
{
    const unsigned char *p;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;
    if (!f.off1) return 0;
    p = (const unsigned char *)pv + (f.off1 - 1);
    switch (f.size) {
    case 1: return *p;
    case 2: memcpy(&v16, p, 2); return v16;
    case 4: memcpy(&v32, p, 4); return v32;
    case 8: memcpy(&v64, p, 8); return v64;
    default: return 0;
    }
}

/* Bytes a copy or set touches by its fields: n x n2 x n3 (absent factors are 1) x mul. */
static uint64_t field_bytes(const void *pv, const struct vt__api *e)
{
    uint64_t n = field(pv, e->n);
    if (e->n2.off1) n *= field(pv, e->n2);
    if (e->n3.off1) n *= field(pv, e->n3);
    return n * (uint64_t)(e->mul > 1 ? e->mul : 1);
}

/* The address a CUDA_MEMCPY2D/3D side names: host or device (unified) pointer, 0 for an array. */
static uint64_t cu_side(CUmemorytype type, const void *pHost, CUdeviceptr dev)
{
    if (type == CU_MEMORYTYPE_HOST) return (uint64_t)(uintptr_t)pHost;
    if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED) return dev;
    return 0;
}

/* Element i of an array of 8-byte addresses or sizes (a batch's), 0 when the array is NULL. */
static uint64_t array_at(const void *pArray, size_t i)
{
    uint64_t v = 0;
    if (pArray) memcpy(&v, (const unsigned char *)pArray + 8 * i, 8);
    return v;
}

/* Source and destination address of operation i of a 3D batch (0 for an array operand). */
static void op3d_sides(int shape, const void *pOps, size_t i, uint64_t *pSrc, uint64_t *pDst)
{
    *pSrc = *pDst = 0;
    if (!pOps) return;
    if (shape == S_COPY3D_BATCH) {
        const struct cudaMemcpy3DBatchOp *o = (const struct cudaMemcpy3DBatchOp *)pOps + i;
        if (o->src.type == cudaMemcpyOperandTypePointer) *pSrc = (uint64_t)(uintptr_t)o->src.op.ptr.ptr;
        if (o->dst.type == cudaMemcpyOperandTypePointer) *pDst = (uint64_t)(uintptr_t)o->dst.op.ptr.ptr;
    } else {
        const CUDA_MEMCPY3D_BATCH_OP *o = (const CUDA_MEMCPY3D_BATCH_OP *)pOps + i;
        if (o->src.type == CU_MEMCPY_OPERAND_TYPE_POINTER) *pSrc = o->src.op.ptr.ptr;
        if (o->dst.type == CU_MEMCPY_OPERAND_TYPE_POINTER) *pDst = o->dst.op.ptr.ptr;
    }
}

/* Pointer value at p if p is not NULL and the call succeeded, else 0. */
#define OUT_PTR(p, ok) ((ok) && (p) ? (uint64_t)(uintptr_t) * (p) : 0)

/* Fill *c from the parameters pv of a call of API e; ok: the call succeeded. */
static void read_params(const struct vt__api *e, const void *pv, int ok, struct call *c)
{
    memset(c, 0, sizeof *c);
    c->device = -1;
    if (!pv) return;
    if (e->stream.off1) {
        c->hStream = (const void *)(uintptr_t)field(pv, e->stream);
        c->bStream = 1;
    }
    switch (e->shape) {
    case S_MALLOC: {
        const cudaMalloc_v3020_params *p = pv; /* cudaMallocHost/HostAlloc/Managed: same head */
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->devPtr, ok);
        break;
    }
    case S_MALLOC_STREAM: {
        const cudaMallocAsync_v11020_params *p = pv;
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->devPtr, ok);
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_MALLOC_POOL: {
        const cudaMallocFromPoolAsync_v11020_params *p = pv;
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->ptr, ok);
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_MALLOC_PITCH: {
        const cudaMallocPitch_v3020_params *p = pv;
        size_t pitch = ok && p->pitch ? *p->pitch : p->width;
        c->bytes = (uint64_t)pitch * p->height;
        c->ptr = OUT_PTR(p->devPtr, ok);
        break;
    }
    case S_MALLOC_3D: {
        const cudaMalloc3D_v3020_params *p = pv;
        size_t pitch = ok && p->pitchedDevPtr ? p->pitchedDevPtr->pitch : p->extent.width;
        c->bytes = (uint64_t)pitch * p->extent.height * (p->extent.depth ? p->extent.depth : 1);
        c->ptr = ok && p->pitchedDevPtr ? (uint64_t)(uintptr_t)p->pitchedDevPtr->ptr : 0;
        break;
    }
    case S_HOST_REGISTER: {
        const cudaHostRegister_v4000_params *p = pv;
        c->bytes = p->size;
        c->ptr = (uint64_t)(uintptr_t)p->ptr;
        break;
    }
    case S_FREE: {
        const cudaFree_v3020_params *p = pv; /* cudaFreeHost/HostUnregister: same layout */
        c->ptr = (uint64_t)(uintptr_t)p->devPtr;
        break;
    }
    case S_FREE_STREAM: {
        const cudaFreeAsync_v11020_params *p = pv;
        c->ptr = (uint64_t)(uintptr_t)p->devPtr;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_ALLOC: {
        const cuMemAlloc_v2_params *p = pv; /* cuMemAllocManaged: same head */
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->dptr, ok);
        break;
    }
    case S_CU_ALLOC_STREAM: {
        const cuMemAllocAsync_params *p = pv;
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->dptr, ok);
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_ALLOC_POOL: {
        const cuMemAllocFromPoolAsync_params *p = pv;
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->dptr, ok);
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_ALLOC_PITCH: {
        const cuMemAllocPitch_v2_params *p = pv;
        size_t pitch = ok && p->pPitch ? *p->pPitch : p->WidthInBytes;
        c->bytes = (uint64_t)pitch * p->Height;
        c->ptr = OUT_PTR(p->dptr, ok);
        break;
    }
    case S_CU_HOST_ALLOC: {
        const cuMemAllocHost_v2_params *p = pv; /* cuMemHostAlloc: same head */
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->pp, ok);
        break;
    }
    case S_CU_HOST_REGISTER: {
        const cuMemHostRegister_v2_params *p = pv;
        c->bytes = p->bytesize;
        c->ptr = (uint64_t)(uintptr_t)p->p;
        break;
    }
    case S_CU_FREE: {
        const cuMemFree_v2_params *p = pv;
        c->ptr = p->dptr;
        break;
    }
    case S_CU_FREE_STREAM: {
        const cuMemFreeAsync_params *p = pv;
        c->ptr = p->dptr;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_HOST_FREE: {
        const cuMemFreeHost_params *p = pv; /* cuMemHostUnregister: same layout */
        c->ptr = (uint64_t)(uintptr_t)p->p;
        break;
    }
    case S_VMM_CREATE: {
        const cuMemCreate_params *p = pv;
        c->bytes = p->size;
        c->handle = ok && p->handle ? (uint64_t)*p->handle : 0;
        c->memKind = VT_MEMKIND_DEVICE;
        if (p->prop) {
            switch (p->prop->location.type) {
            case CU_MEM_LOCATION_TYPE_DEVICE: c->device = p->prop->location.id; break;
            case CU_MEM_LOCATION_TYPE_HOST:
            case CU_MEM_LOCATION_TYPE_HOST_NUMA:
            case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
                c->memKind = VT_MEMKIND_PINNED; /* page-locked host memory, on no device */
                c->bHost = 1;
                break;
            default: break; /* unspecified: the call fails, or the driver picks the device */
            }
        }
        break;
    }
    case S_VMM_RELEASE: {
        const cuMemRelease_params *p = pv;
        c->handle = (uint64_t)p->handle;
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case S_VMM_MAP: {
        const cuMemMap_params *p = pv;
        c->ptr = p->ptr;
        c->bytes = p->size;
        c->handle = (uint64_t)p->handle;
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case S_VMM_UNMAP: {
        const cuMemUnmap_params *p = pv;
        c->ptr = p->ptr;
        c->bytes = p->size;
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case S_VMM_SET_ACCESS: {
        const cuMemSetAccess_params *p = pv;
        c->ptr = p->ptr;
        c->bytes = p->size;
        break;
    }
    case S_VMM_IMPORT: {
        const cuMemImportFromShareableHandle_params *p = pv;
        c->handle = ok && p->handle ? (uint64_t)*p->handle : 0;
        c->memKind = VT_MEMKIND_UNKNOWN;
        break;
    }
    case S_MC_CREATE: {
        const cuMulticastCreate_params *p = pv;
        c->handle = ok && p->mcHandle ? (uint64_t)*p->mcHandle : 0;
        if (p->prop) c->bytes = p->prop->size;
        break;
    }
    case S_MC_ADD: {
        const cuMulticastAddDevice_params *p = pv;
        c->handle = (uint64_t)p->mcHandle;
        c->device = p->dev;
        break;
    }
    case S_MC_BIND_MEM: {
        const cuMulticastBindMem_params *p = pv;
        c->handle = (uint64_t)p->mcHandle;
        c->src = (uint64_t)p->memHandle; /* the bound allocation's handle */
        c->bytes = p->size;
        break;
    }
    case S_MC_BIND_ADDR: {
        const cuMulticastBindAddr_params *p = pv;
        c->handle = (uint64_t)p->mcHandle;
        c->src = p->memptr; /* the bound memory */
        c->bytes = p->size;
        break;
    }
    case S_MC_UNBIND: {
        const cuMulticastUnbind_params *p = pv;
        c->handle = (uint64_t)p->mcHandle;
        c->device = p->dev;
        c->bytes = p->size;
        break;
    }
    case S_IPC_OPEN: {
        const cuIpcOpenMemHandle_v2_params *p = pv; /* cudaIpcOpenMemHandle and _v1: same head */
        c->ptr = OUT_PTR(p->pdptr, ok);
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case S_IPC_CLOSE: {
        const cuIpcCloseMemHandle_params *p = pv; /* cudaIpcCloseMemHandle: same layout */
        c->ptr = p->dptr;
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case S_VMM_RESERVE: {
        const cuMemAddressReserve_params *p = pv;
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->ptr, ok);
        break;
    }
    case S_VMM_ADDR_FREE: {
        const cuMemAddressFree_params *p = pv;
        c->ptr = p->ptr;
        c->bytes = p->size;
        break;
    }
    case S_COPY:
        c->dst = field(pv, e->dst);
        c->src = field(pv, e->src);
        c->bytes = field_bytes(pv, e);
        break;
    case S_SET:
        c->dst = field(pv, e->dst);
        c->bytes = field_bytes(pv, e);
        break;
    /* The shapes below follow pointers out of the parameter struct: only for a call the
     * driver accepted (a failed call may name a count its arrays do not have). */
    case S_COPY3D: {
        const struct cudaMemcpy3DParms *p = (const void *)(uintptr_t)field(pv, e->arg);
        if (!ok || !p) break;
        if (!p->srcArray) c->src = (uint64_t)(uintptr_t)p->srcPtr.ptr;
        if (!p->dstArray) c->dst = (uint64_t)(uintptr_t)p->dstPtr.ptr;
        if (!p->srcArray && !p->dstArray) /* the extent is in elements when an array takes part */
            c->bytes = (uint64_t)p->extent.width * p->extent.height * p->extent.depth;
        break;
    }
    case S_COPY3D_PEER: {
        const struct cudaMemcpy3DPeerParms *p = (const void *)(uintptr_t)field(pv, e->arg);
        if (!ok || !p) break;
        if (!p->srcArray) c->src = (uint64_t)(uintptr_t)p->srcPtr.ptr;
        if (!p->dstArray) c->dst = (uint64_t)(uintptr_t)p->dstPtr.ptr;
        if (!p->srcArray && !p->dstArray)
            c->bytes = (uint64_t)p->extent.width * p->extent.height * p->extent.depth;
        break;
    }
    case S_CU_COPY2D: {
        const CUDA_MEMCPY2D *p = (const void *)(uintptr_t)field(pv, e->arg);
        if (!ok || !p) break;
        c->src = cu_side(p->srcMemoryType, p->srcHost, p->srcDevice);
        c->dst = cu_side(p->dstMemoryType, p->dstHost, p->dstDevice);
        c->bytes = (uint64_t)p->WidthInBytes * p->Height;
        break;
    }
    case S_CU_COPY3D: {
        const CUDA_MEMCPY3D *p = (const void *)(uintptr_t)field(pv, e->arg);
        if (!ok || !p) break;
        c->src = cu_side(p->srcMemoryType, p->srcHost, p->srcDevice);
        c->dst = cu_side(p->dstMemoryType, p->dstHost, p->dstDevice);
        c->bytes = (uint64_t)p->WidthInBytes * p->Height * p->Depth;
        break;
    }
    case S_CU_COPY3D_PEER: {
        const CUDA_MEMCPY3D_PEER *p = (const void *)(uintptr_t)field(pv, e->arg);
        if (!ok || !p) break;
        c->src = cu_side(p->srcMemoryType, p->srcHost, p->srcDevice);
        c->dst = cu_side(p->dstMemoryType, p->dstHost, p->dstDevice);
        c->bytes = (uint64_t)p->WidthInBytes * p->Height * p->Depth;
        break;
    }
    case S_COPY_BATCH: {
        const void *pSizes = (const void *)(uintptr_t)field(pv, e->n);
        size_t i;
        if (!ok) break;
        c->nOp = (size_t)field(pv, e->n2);
        c->pOpDst = (const void *)(uintptr_t)field(pv, e->dst);
        c->pOpSrc = (const void *)(uintptr_t)field(pv, e->src);
        for (i = 0; pSizes && i < c->nOp; i++) c->bytes += array_at(pSizes, i);
        if (c->nOp == 1) { /* one copy: its addresses fit the row */
            c->dst = array_at(c->pOpDst, 0);
            c->src = array_at(c->pOpSrc, 0);
        }
        break;
    }
    case S_COPY3D_BATCH:
    case S_CU_COPY3D_BATCH:
        /* the bytes are unknown: the extents count elements */
        if (!ok) break;
        c->nOp = (size_t)field(pv, e->n2);
        c->pOps = (const void *)(uintptr_t)field(pv, e->arg);
        if (c->nOp == 1) op3d_sides(e->shape, c->pOps, 0, &c->src, &c->dst);
        break;
    case S_LAUNCH: {
        const cudaLaunchKernel_v7000_params *p = pv;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_LAUNCH_KERNEL: {
        const vt__cudaLaunchKernel_v13000_params *p = pv;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_LAUNCH_EXC: {
        const cudaLaunchKernelExC_v11060_params *p = pv;
        if (p->config) {
            c->hStream = p->config->stream;
            c->bStream = 1;
        }
        break;
    }
    case S_CU_LAUNCH: {
        const cuLaunchKernel_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_LAUNCH_EX: {
        const cuLaunchKernelEx_params *p = pv;
        if (p->config) {
            c->hStream = p->config->hStream;
            c->bStream = 1;
        }
        break;
    }
    case S_CU_LAUNCH_COOP: {
        const cuLaunchCooperativeKernel_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_LAUNCH_MULTI: {
        const cuLaunchCooperativeKernelMultiDevice_params *p = pv;
        /* one device: its stream (several: several streams); the list only of an accepted call */
        if (ok && p->launchParamsList && p->numDevices == 1) {
            c->hStream = p->launchParamsList[0].hStream;
            c->bStream = 1;
        }
        break;
    }
    case S_GRAPH_LAUNCH: {
        const cudaGraphLaunch_v10000_params *p = pv;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_CU_GRAPH_LAUNCH: {
        const cuGraphLaunch_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_LAUNCH_GRID_ASYNC: {
        const cuLaunchGridAsync_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_STREAM_SYNC: {
        const cudaStreamSynchronize_v3020_params *p = pv;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_CU_STREAM_SYNC: {
        const cuStreamSynchronize_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    default: break;
    }
}

/* True for calls whose failure is an out-of-memory moment worth an oom_event row. */
static int is_alloc_shape(int shape)
{
    switch (shape) {
    case S_MALLOC: case S_MALLOC_STREAM: case S_MALLOC_POOL: case S_MALLOC_PITCH: case S_MALLOC_3D:
    case S_HOST_REGISTER: case S_CU_ALLOC: case S_CU_ALLOC_STREAM: case S_CU_ALLOC_POOL:
    case S_CU_ALLOC_PITCH: case S_CU_HOST_ALLOC: case S_CU_HOST_REGISTER: case S_VMM_CREATE:
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
    case S_FREE: case S_FREE_STREAM: case S_CU_FREE: case S_CU_FREE_STREAM: case S_CU_HOST_FREE:
        return 1;
    default: return 0;
    }
}

/* Keep the index of live allocations current after a successful call (for argument scans). */
static void track_live(struct vt__ivl *ivl, int shape, const struct call *c)
{
    if (!ivl) return;
    if (shape == S_VMM_MAP || shape == S_IPC_OPEN || (is_alloc_shape(shape) && shape != S_VMM_CREATE)) {
        if (c->ptr && c->bytes) vt__ivl_insert(ivl, c->ptr, c->bytes);
    } else if (shape == S_VMM_UNMAP || shape == S_IPC_CLOSE || is_free_shape(shape)) {
        if (c->ptr) vt__ivl_remove(ivl, c->ptr);
    }
}

/* True for the calls that carry a call site (allocation, free, VMM, copy, set). */
static int wants_site(int shape)
{
    return shape != S_NONE && shape < S_LAUNCH;
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
    case S_LAUNCH: {
        const cudaLaunchKernel_v7000_params *p = pv; /* cudaLaunchCooperativeKernel: same layout */
        a[n++] = (struct launch){VT_KP_STUB, p->func, p->args, NULL};
        break;
    }
    case S_LAUNCH_KERNEL: {
        const vt__cudaLaunchKernel_v13000_params *p = pv;
        a[n++] = (struct launch){VT_KP_DRIVER, p->kernel, p->args, NULL};
        break;
    }
    case S_LAUNCH_EXC: {
        const cudaLaunchKernelExC_v11060_params *p = pv;
        a[n++] = (struct launch){VT_KP_STUB, p->func, p->args, NULL};
        break;
    }
    case S_CU_LAUNCH: {
        const cuLaunchKernel_params *p = pv;
        a[n++] = (struct launch){VT_KP_DRIVER, p->f, p->kernelParams, p->extra};
        break;
    }
    case S_CU_LAUNCH_EX: {
        const cuLaunchKernelEx_params *p = pv;
        a[n++] = (struct launch){VT_KP_DRIVER, p->f, p->kernelParams, p->extra};
        break;
    }
    case S_CU_LAUNCH_COOP: {
        const cuLaunchCooperativeKernel_params *p = pv;
        a[n++] = (struct launch){VT_KP_DRIVER, p->f, p->kernelParams, NULL};
        break;
    }
    case S_CU_LAUNCH_MULTI: {
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
    return zFamily && !strcmp(zFamily, "launch") && e->shape != S_GRAPH_LAUNCH && e->shape != S_CU_GRAPH_LAUNCH;
}

/* True for the runtime launch shapes whose arguments can be scanned at the runtime call. */
static int is_runtime_kernel_launch(int shape)
{
    return shape == S_LAUNCH || shape == S_LAUNCH_KERNEL || shape == S_LAUNCH_EXC;
}

/* True for the driver launch shapes (scanned at the call, or under the runtime launch around it). */
static int is_driver_kernel_launch(int shape)
{
    return shape >= S_CU_LAUNCH && shape <= S_CU_LAUNCH_MULTI;
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
    return shape >= S_COPY && shape < S_COPY_OPAQUE;
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
static void copy_uses(const struct vt__apicall_env *env, const struct vt__api *e, const struct call *c,
                      uint32_t correlation, int device)
{
    struct uses u;
    uint64_t src, dst;
    size_t i;
    u.n = 0;
    u.nLost = 0;
    if (e->shape == S_SET) {
        add_use(&u, VT_USE_MEMSET, c->dst);
    } else if (e->shape == S_COPY_BATCH) {
        for (i = 0; i < c->nOp; i++) {
            add_use(&u, VT_USE_MEMCPY_SRC, array_at(c->pOpSrc, i));
            add_use(&u, VT_USE_MEMCPY_DST, array_at(c->pOpDst, i));
        }
    } else if (e->shape == S_COPY3D_BATCH || e->shape == S_CU_COPY3D_BATCH) {
        for (i = 0; i < c->nOp; i++) {
            op3d_sides(e->shape, c->pOps, i, &src, &dst);
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
    return z && (!strcmp(z, "alloc") || !strcmp(z, "free")) && e->shape != S_HOST_REGISTER &&
           e->shape != S_CU_HOST_REGISTER && e->api != VT_API_ID_13 && e->api != VT_API_ID_31;
}

/* The memory_event op a successful call of this shape writes, or 0 for none. */
static int memory_op(int shape)
{
    switch (shape) {
    case S_VMM_CREATE: return VT_MEMOP_VMM_CREATE;
    case S_VMM_RELEASE: return VT_MEMOP_VMM_RELEASE;
    case S_VMM_MAP: return VT_MEMOP_VMM_MAP;
    case S_VMM_UNMAP: return VT_MEMOP_VMM_UNMAP;
    case S_VMM_IMPORT: case S_IPC_OPEN: return VT_MEMOP_IMPORT;
    case S_IPC_CLOSE: return VT_MEMOP_IMPORT_CLOSE;
    default: return 0;
    }
}

/*
 * What an import call's parameters do not say, asked of the driver (env):
 * the size of an IPC mapping from its address range, the kind and device of
 * an imported handle from its allocation properties. Left unknown (0, -1)
 * when the environment cannot tell.
 */
static void complete_import(const struct vt__apicall_env *env, int shape, struct call *c)
{
    uint64_t base = 0, size = 0;
    int kind = VT_MEMKIND_UNKNOWN, dev = -1;
    if (shape == S_IPC_OPEN && c->ptr && env->xAddressRange &&
        env->xAddressRange(c->ptr, &base, &size) == 0 && base <= c->ptr && c->ptr - base < size)
        c->bytes = size - (c->ptr - base);
    if (shape == S_VMM_IMPORT && c->handle && env->xHandleLocation &&
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
    struct call c;
    int status = cb->functionReturnValue ? *(const int *)cb->functionReturnValue : 0;
    int ok = status == 0;
    uint64_t end = env->xNow();
    uint64_t start = cb->correlationData && *cb->correlationData ? *cb->correlationData : end;
    int device = env->xDevice(cb->context);
    int64_t stack = 0;

    int op, memDevice;

    read_params(e, cb->functionParams, ok, &c);
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
        if (e->shape == S_VMM_CREATE || e->shape == S_VMM_IMPORT) memDevice = c.bHost ? -1 : c.device >= 0 ? c.device : device;
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

const struct vt__api *vt__api_table(CUpti_CallbackDomain domain, size_t *pn)
{
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        *pn = sizeof aRuntime / sizeof aRuntime[0];
        return aRuntime;
    }
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        *pn = sizeof aDriver / sizeof aDriver[0];
        return aDriver;
    }
    *pn = 0;
    return NULL;
}

/* Linear scan of the domain's table (small, in no particular order). */
const struct vt__api *vt__api_find(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    size_t i, n;
    const struct vt__api *a = vt__api_table(domain, &n);
    for (i = 0; i < n; i++)
        if (a[i].cbid == cbid) return &a[i];
    return NULL;
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
