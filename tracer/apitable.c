/* The traced API entry points (runtime and driver CBIDs of the 13.0 headers) and how each one's parameters are laid out. */
#include "apitable.h"

#include <stddef.h>

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
    RT(cudaMalloc_v3020, 1, VT_SH_MALLOC, 0)
    RT(cudaFree_v3020, 2, VT_SH_FREE, 0)
    RT(cudaMallocAsync_v11020, 3, VT_SH_MALLOC_STREAM, 0)
    RT(cudaMallocAsync_ptsz_v11020, 3, VT_SH_MALLOC_STREAM, 1)
    RT(cudaFreeAsync_v11020, 4, VT_SH_FREE_STREAM, 0)
    RT(cudaFreeAsync_ptsz_v11020, 4, VT_SH_FREE_STREAM, 1)
    RT(cudaMallocFromPoolAsync_v11020, 5, VT_SH_MALLOC_POOL, 0)
    RT(cudaMallocFromPoolAsync_ptsz_v11020, 5, VT_SH_MALLOC_POOL, 1)
    RT(cudaIpcOpenMemHandle_v4010, 14, VT_SH_IPC_OPEN, 0)
    RT(cudaIpcCloseMemHandle_v4010, 15, VT_SH_IPC_CLOSE, 0)
    RT(cudaMallocHost_v3020, 6, VT_SH_MALLOC, 0)
    RT(cudaHostAlloc_v3020, 7, VT_SH_MALLOC, 0)
    RT(cudaFreeHost_v3020, 8, VT_SH_FREE, 0)
    RT(cudaMallocManaged_v6000, 9, VT_SH_MALLOC, 0)
    RT(cudaMallocPitch_v3020, 10, VT_SH_MALLOC_PITCH, 0)
    RT(cudaMalloc3D_v3020, 11, VT_SH_MALLOC_3D, 0)
    RT(cudaHostRegister_v4000, 12, VT_SH_HOST_REGISTER, 0)
    RT(cudaHostUnregister_v4000, 13, VT_SH_FREE, 0)
    /* copies: every entry point of cupti_runtime_cbid.h in 13.0 but the graph-node ones */
    RTF(cudaMemcpy_v3020, 60, VT_SH_COPY, 0, CPY, dst, src, count)
    RTF(cudaMemcpy_ptds_v7000, 60, VT_SH_COPY, 1, CPY, dst, src, count)
    RTF(cudaMemcpyAsync_v3020, 61, VT_SH_COPY, 0, CPY_S, dst, src, count, stream)
    RTF(cudaMemcpyAsync_ptsz_v7000, 61, VT_SH_COPY, 1, CPY_S, dst, src, count, stream)
    RTF(cudaMemcpy2D_v3020, 62, VT_SH_COPY, 0, CPY2, dst, src, width, height)
    RTF(cudaMemcpy2D_ptds_v7000, 62, VT_SH_COPY, 1, CPY2, dst, src, width, height)
    RTF(cudaMemcpy2DAsync_v3020, 63, VT_SH_COPY, 0, CPY2_S, dst, src, width, height, stream)
    RTF(cudaMemcpy2DAsync_ptsz_v7000, 63, VT_SH_COPY, 1, CPY2_S, dst, src, width, height, stream)
    RTF(cudaMemcpyPeer_v4000, 64, VT_SH_COPY, 0, CPY, dst, src, count)
    RTF(cudaMemcpyPeerAsync_v4000, 65, VT_SH_COPY, 0, CPY_S, dst, src, count, stream)
    RTF(cudaMemcpyToArray_v3020, 140, VT_SH_COPY, 0, TO, src, count)
    RTF(cudaMemcpyToArray_ptds_v7000, 140, VT_SH_COPY, 1, TO, src, count)
    RTF(cudaMemcpyToArrayAsync_v3020, 141, VT_SH_COPY, 0, TO_S, src, count, stream)
    RTF(cudaMemcpyToArrayAsync_ptsz_v7000, 141, VT_SH_COPY, 1, TO_S, src, count, stream)
    RTF(cudaMemcpyFromArray_v3020, 142, VT_SH_COPY, 0, FROM, dst, count)
    RTF(cudaMemcpyFromArray_ptds_v7000, 142, VT_SH_COPY, 1, FROM, dst, count)
    RTF(cudaMemcpyFromArrayAsync_v3020, 143, VT_SH_COPY, 0, FROM_S, dst, count, stream)
    RTF(cudaMemcpyFromArrayAsync_ptsz_v7000, 143, VT_SH_COPY, 1, FROM_S, dst, count, stream)
    RTF(cudaMemcpyArrayToArray_v3020, 144, VT_SH_COPY, 0, BYTES, count)
    RTF(cudaMemcpyArrayToArray_ptds_v7000, 144, VT_SH_COPY, 1, BYTES, count)
    RTF(cudaMemcpy2DToArray_v3020, 145, VT_SH_COPY, 0, TO2, src, width, height)
    RTF(cudaMemcpy2DToArray_ptds_v7000, 145, VT_SH_COPY, 1, TO2, src, width, height)
    RTF(cudaMemcpy2DToArrayAsync_v3020, 146, VT_SH_COPY, 0, TO2_S, src, width, height, stream)
    RTF(cudaMemcpy2DToArrayAsync_ptsz_v7000, 146, VT_SH_COPY, 1, TO2_S, src, width, height, stream)
    RTF(cudaMemcpy2DFromArray_v3020, 147, VT_SH_COPY, 0, FROM2, dst, width, height)
    RTF(cudaMemcpy2DFromArray_ptds_v7000, 147, VT_SH_COPY, 1, FROM2, dst, width, height)
    RTF(cudaMemcpy2DFromArrayAsync_v3020, 148, VT_SH_COPY, 0, FROM2_S, dst, width, height, stream)
    RTF(cudaMemcpy2DFromArrayAsync_ptsz_v7000, 148, VT_SH_COPY, 1, FROM2_S, dst, width, height, stream)
    RTF(cudaMemcpy2DArrayToArray_v3020, 149, VT_SH_COPY, 0, BYTES2, width, height)
    RTF(cudaMemcpy2DArrayToArray_ptds_v7000, 149, VT_SH_COPY, 1, BYTES2, width, height)
    RTF(cudaMemcpyToSymbol_v3020, 150, VT_SH_COPY, 0, TO, src, count)
    RTF(cudaMemcpyToSymbol_ptds_v7000, 150, VT_SH_COPY, 1, TO, src, count)
    RTF(cudaMemcpyToSymbolAsync_v3020, 151, VT_SH_COPY, 0, TO_S, src, count, stream)
    RTF(cudaMemcpyToSymbolAsync_ptsz_v7000, 151, VT_SH_COPY, 1, TO_S, src, count, stream)
    RTF(cudaMemcpyFromSymbol_v3020, 152, VT_SH_COPY, 0, FROM, dst, count)
    RTF(cudaMemcpyFromSymbol_ptds_v7000, 152, VT_SH_COPY, 1, FROM, dst, count)
    RTF(cudaMemcpyFromSymbolAsync_v3020, 153, VT_SH_COPY, 0, FROM_S, dst, count, stream)
    RTF(cudaMemcpyFromSymbolAsync_ptsz_v7000, 153, VT_SH_COPY, 1, FROM_S, dst, count, stream)
    RTF(cudaMemcpy3D_v3020, 154, VT_SH_COPY3D, 0, ARG, p)
    RTF(cudaMemcpy3D_ptds_v7000, 154, VT_SH_COPY3D, 1, ARG, p)
    RTF(cudaMemcpy3DAsync_v3020, 155, VT_SH_COPY3D, 0, ARG_S, p, stream)
    RTF(cudaMemcpy3DAsync_ptsz_v7000, 155, VT_SH_COPY3D, 1, ARG_S, p, stream)
    RTF(cudaMemcpy3DPeer_v4000, 156, VT_SH_COPY3D_PEER, 0, ARG, p)
    RTF(cudaMemcpy3DPeer_ptds_v7000, 156, VT_SH_COPY3D_PEER, 1, ARG, p)
    RTF(cudaMemcpy3DPeerAsync_v4000, 157, VT_SH_COPY3D_PEER, 0, ARG_S, p, stream)
    RTF(cudaMemcpy3DPeerAsync_ptsz_v7000, 157, VT_SH_COPY3D_PEER, 1, ARG_S, p, stream)
    RTF(cudaMemcpyBatchAsync_v13000, 158, VT_SH_COPY_BATCH, 0, BATCH, dsts, srcs, sizes, count, stream)
    RTF(cudaMemcpyBatchAsync_ptsz_v13000, 158, VT_SH_COPY_BATCH, 1, BATCH, dsts, srcs, sizes, count, stream)
    RT(cudaMemcpyBatchAsync_v12080, 158, VT_SH_COPY_OPAQUE, 0)
    RT(cudaMemcpyBatchAsync_ptsz_v12080, 158, VT_SH_COPY_OPAQUE, 1)
    RTF(cudaMemcpy3DBatchAsync_v13000, 159, VT_SH_COPY3D_BATCH, 0, OPS, opList, numOps, stream)
    RTF(cudaMemcpy3DBatchAsync_ptsz_v13000, 159, VT_SH_COPY3D_BATCH, 1, OPS, opList, numOps, stream)
    RT(cudaMemcpy3DBatchAsync_v12080, 159, VT_SH_COPY_OPAQUE, 0)
    RT(cudaMemcpy3DBatchAsync_ptsz_v12080, 159, VT_SH_COPY_OPAQUE, 1)
    /* sets */
    RTF(cudaMemset_v3020, 80, VT_SH_SET, 0, SET, 1, devPtr, count)
    RTF(cudaMemset_ptds_v7000, 80, VT_SH_SET, 1, SET, 1, devPtr, count)
    RTF(cudaMemsetAsync_v3020, 81, VT_SH_SET, 0, SET_S, 1, devPtr, count, stream)
    RTF(cudaMemsetAsync_ptsz_v7000, 81, VT_SH_SET, 1, SET_S, 1, devPtr, count, stream)
    RTF(cudaMemset2D_v3020, 180, VT_SH_SET, 0, SET2, 1, devPtr, width, height)
    RTF(cudaMemset2D_ptds_v7000, 180, VT_SH_SET, 1, SET2, 1, devPtr, width, height)
    RTF(cudaMemset2DAsync_v3020, 181, VT_SH_SET, 0, SET2_S, 1, devPtr, width, height, stream)
    RTF(cudaMemset2DAsync_ptsz_v7000, 181, VT_SH_SET, 1, SET2_S, 1, devPtr, width, height, stream)
    RTF(cudaMemset3D_v3020, 182, VT_SH_SET, 0, SET3, pitchedDevPtr.ptr, extent.width, extent.height, extent.depth)
    RTF(cudaMemset3D_ptds_v7000, 182, VT_SH_SET, 1, SET3, pitchedDevPtr.ptr, extent.width, extent.height,
        extent.depth)
    RTF(cudaMemset3DAsync_v3020, 183, VT_SH_SET, 0, SET3_S, pitchedDevPtr.ptr, extent.width, extent.height,
        extent.depth, stream)
    RTF(cudaMemset3DAsync_ptsz_v7000, 183, VT_SH_SET, 1, SET3_S, pitchedDevPtr.ptr, extent.width,
        extent.height, extent.depth, stream)
    /* launches */
    RT(cudaLaunchKernel_v7000, 100, VT_SH_LAUNCH, 0)
    RT(cudaLaunchKernel_ptsz_v7000, 100, VT_SH_LAUNCH, 1)
    RT(cudaLaunchKernelExC_v11060, 101, VT_SH_LAUNCH_EXC, 0)
    RT(cudaLaunchKernelExC_ptsz_v11060, 101, VT_SH_LAUNCH_EXC, 1)
    RT(__cudaLaunchKernel_v13000, 104, VT_SH_LAUNCH_KERNEL, 0)
    RT(__cudaLaunchKernel_ptsz_v13000, 104, VT_SH_LAUNCH_KERNEL, 1)
    RT(cudaLaunchCooperativeKernel_v9000, 105, VT_SH_LAUNCH, 0)
    RT(cudaLaunchCooperativeKernel_ptsz_v9000, 105, VT_SH_LAUNCH, 1)
    RT(cudaLaunchCooperativeKernelMultiDevice_v9000, 106, VT_SH_SYNC, 0)
    RT(cudaGraphLaunch_v10000, 107, VT_SH_GRAPH_LAUNCH, 0)
    RT(cudaGraphLaunch_ptsz_v10000, 107, VT_SH_GRAPH_LAUNCH, 1)
    RT(cudaLaunch_v3020, 108, VT_SH_SYNC, 0)
    RT(cudaLaunch_ptsz_v7000, 108, VT_SH_SYNC, 1)
    RT(cudaDeviceSynchronize_v3020, 120, VT_SH_SYNC, 0)
    RT(cudaStreamSynchronize_v3020, 121, VT_SH_STREAM_SYNC, 0)
    RT(cudaStreamSynchronize_ptsz_v7000, 121, VT_SH_STREAM_SYNC, 1)
};

static const struct vt__api aDriver[] = {
    DRV(cuMemAlloc_v2, 20, VT_SH_CU_ALLOC, 0)
    DRV(cuMemFree_v2, 21, VT_SH_CU_FREE, 0)
    DRV(cuMemAllocAsync, 22, VT_SH_CU_ALLOC_STREAM, 0)
    DRV(cuMemAllocAsync_ptsz, 22, VT_SH_CU_ALLOC_STREAM, 1)
    DRV(cuMemFreeAsync, 23, VT_SH_CU_FREE_STREAM, 0)
    DRV(cuMemFreeAsync_ptsz, 23, VT_SH_CU_FREE_STREAM, 1)
    DRV(cuMemAllocFromPoolAsync, 24, VT_SH_CU_ALLOC_POOL, 0)
    DRV(cuMemAllocFromPoolAsync_ptsz, 24, VT_SH_CU_ALLOC_POOL, 1)
    DRV(cuMemAllocHost_v2, 25, VT_SH_CU_HOST_ALLOC, 0)
    DRV(cuMemHostAlloc, 26, VT_SH_CU_HOST_ALLOC, 0)
    DRV(cuMemFreeHost, 27, VT_SH_CU_HOST_FREE, 0)
    DRV(cuMemAllocManaged, 28, VT_SH_CU_ALLOC, 0)
    DRV(cuMemAllocPitch_v2, 29, VT_SH_CU_ALLOC_PITCH, 0)
    DRV(cuMemHostRegister_v2, 30, VT_SH_CU_HOST_REGISTER, 0)
    DRV(cuMemHostUnregister, 31, VT_SH_CU_HOST_FREE, 0)
    DRV(cuMemCreate, 40, VT_SH_VMM_CREATE, 0)
    DRV(cuMemRelease, 41, VT_SH_VMM_RELEASE, 0)
    DRV(cuMemMap, 42, VT_SH_VMM_MAP, 0)
    DRV(cuMemUnmap, 43, VT_SH_VMM_UNMAP, 0)
    DRV(cuMemAddressReserve, 44, VT_SH_VMM_RESERVE, 0)
    DRV(cuMemAddressFree, 45, VT_SH_VMM_ADDR_FREE, 0)
    DRV(cuMemSetAccess, 46, VT_SH_VMM_SET_ACCESS, 0)
    DRV(cuMemImportFromShareableHandle, 47, VT_SH_VMM_IMPORT, 0)
    DRV(cuMulticastCreate, 48, VT_SH_MC_CREATE, 0)
    DRV(cuMulticastAddDevice, 49, VT_SH_MC_ADD, 0)
    DRV(cuMulticastBindMem, 50, VT_SH_MC_BIND_MEM, 0)
    DRV(cuMulticastBindAddr, 51, VT_SH_MC_BIND_ADDR, 0)
    DRV(cuMulticastUnbind, 52, VT_SH_MC_UNBIND, 0)
    DRV(cuIpcOpenMemHandle, 53, VT_SH_IPC_OPEN, 0)
    DRV(cuIpcOpenMemHandle_v2, 53, VT_SH_IPC_OPEN, 0)
    DRV(cuIpcCloseMemHandle, 54, VT_SH_IPC_CLOSE, 0)
    /* copies: every entry point of cupti_driver_cbid.h in 13.0 with a parameter struct, but the
     * graph-node ones (the pre-3.2 forms, 32-bit device pointers, included) */
    DRVF(cuMemcpy, 66, VT_SH_COPY, 0, CPY, dst, src, ByteCount)
    DRVF(cuMemcpy_ptds, 66, VT_SH_COPY, 1, CPY, dst, src, ByteCount)
    DRVF(cuMemcpyAsync, 67, VT_SH_COPY, 0, CPY_S, dst, src, ByteCount, hStream)
    DRVF(cuMemcpyAsync_ptsz, 67, VT_SH_COPY, 1, CPY_S, dst, src, ByteCount, hStream)
    DRVF(cuMemcpyHtoD, 68, VT_SH_COPY, 0, CPY, dstDevice, srcHost, ByteCount)
    DRVF(cuMemcpyHtoD_v2, 68, VT_SH_COPY, 0, CPY, dstDevice, srcHost, ByteCount)
    DRVF(cuMemcpyHtoD_v2_ptds, 68, VT_SH_COPY, 1, CPY, dstDevice, srcHost, ByteCount)
    DRVF(cuMemcpyHtoDAsync, 69, VT_SH_COPY, 0, CPY_S, dstDevice, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyHtoDAsync_v2, 69, VT_SH_COPY, 0, CPY_S, dstDevice, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyHtoDAsync_v2_ptsz, 69, VT_SH_COPY, 1, CPY_S, dstDevice, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyDtoH, 70, VT_SH_COPY, 0, CPY, dstHost, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoH_v2, 70, VT_SH_COPY, 0, CPY, dstHost, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoH_v2_ptds, 70, VT_SH_COPY, 1, CPY, dstHost, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoHAsync, 71, VT_SH_COPY, 0, CPY_S, dstHost, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoHAsync_v2, 71, VT_SH_COPY, 0, CPY_S, dstHost, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoHAsync_v2_ptsz, 71, VT_SH_COPY, 1, CPY_S, dstHost, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoD, 72, VT_SH_COPY, 0, CPY, dstDevice, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoD_v2, 72, VT_SH_COPY, 0, CPY, dstDevice, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoD_v2_ptds, 72, VT_SH_COPY, 1, CPY, dstDevice, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoDAsync, 73, VT_SH_COPY, 0, CPY_S, dstDevice, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoDAsync_v2, 73, VT_SH_COPY, 0, CPY_S, dstDevice, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoDAsync_v2_ptsz, 73, VT_SH_COPY, 1, CPY_S, dstDevice, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyDtoA, 160, VT_SH_COPY, 0, TO, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoA_v2, 160, VT_SH_COPY, 0, TO, srcDevice, ByteCount)
    DRVF(cuMemcpyDtoA_v2_ptds, 160, VT_SH_COPY, 1, TO, srcDevice, ByteCount)
    DRVF(cuMemcpyAtoD, 161, VT_SH_COPY, 0, FROM, dstDevice, ByteCount)
    DRVF(cuMemcpyAtoD_v2, 161, VT_SH_COPY, 0, FROM, dstDevice, ByteCount)
    DRVF(cuMemcpyAtoD_v2_ptds, 161, VT_SH_COPY, 1, FROM, dstDevice, ByteCount)
    DRVF(cuMemcpyHtoA, 162, VT_SH_COPY, 0, TO, srcHost, ByteCount)
    DRVF(cuMemcpyHtoA_v2, 162, VT_SH_COPY, 0, TO, srcHost, ByteCount)
    DRVF(cuMemcpyHtoA_v2_ptds, 162, VT_SH_COPY, 1, TO, srcHost, ByteCount)
    DRVF(cuMemcpyHtoAAsync, 163, VT_SH_COPY, 0, TO_S, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyHtoAAsync_v2, 163, VT_SH_COPY, 0, TO_S, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyHtoAAsync_v2_ptsz, 163, VT_SH_COPY, 1, TO_S, srcHost, ByteCount, hStream)
    DRVF(cuMemcpyAtoH, 164, VT_SH_COPY, 0, FROM, dstHost, ByteCount)
    DRVF(cuMemcpyAtoH_v2, 164, VT_SH_COPY, 0, FROM, dstHost, ByteCount)
    DRVF(cuMemcpyAtoH_v2_ptds, 164, VT_SH_COPY, 1, FROM, dstHost, ByteCount)
    DRVF(cuMemcpyAtoHAsync, 165, VT_SH_COPY, 0, FROM_S, dstHost, ByteCount, hStream)
    DRVF(cuMemcpyAtoHAsync_v2, 165, VT_SH_COPY, 0, FROM_S, dstHost, ByteCount, hStream)
    DRVF(cuMemcpyAtoHAsync_v2_ptsz, 165, VT_SH_COPY, 1, FROM_S, dstHost, ByteCount, hStream)
    DRVF(cuMemcpyAtoA, 166, VT_SH_COPY, 0, BYTES, ByteCount)
    DRVF(cuMemcpyAtoA_v2, 166, VT_SH_COPY, 0, BYTES, ByteCount)
    DRVF(cuMemcpyAtoA_v2_ptds, 166, VT_SH_COPY, 1, BYTES, ByteCount)
    DRV(cuMemcpy2D, 167, VT_SH_COPY_OPAQUE, 0)
    DRVF(cuMemcpy2D_v2, 167, VT_SH_CU_COPY2D, 0, ARG, pCopy)
    DRVF(cuMemcpy2D_v2_ptds, 167, VT_SH_CU_COPY2D, 1, ARG, pCopy)
    DRV(cuMemcpy2DUnaligned, 168, VT_SH_COPY_OPAQUE, 0)
    DRVF(cuMemcpy2DUnaligned_v2, 168, VT_SH_CU_COPY2D, 0, ARG, pCopy)
    DRVF(cuMemcpy2DUnaligned_v2_ptds, 168, VT_SH_CU_COPY2D, 1, ARG, pCopy)
    DRVF(cuMemcpy2DAsync, 169, VT_SH_COPY_OPAQUE, 0, STREAM, hStream)
    DRVF(cuMemcpy2DAsync_v2, 169, VT_SH_CU_COPY2D, 0, ARG_S, pCopy, hStream)
    DRVF(cuMemcpy2DAsync_v2_ptsz, 169, VT_SH_CU_COPY2D, 1, ARG_S, pCopy, hStream)
    DRV(cuMemcpy3D, 170, VT_SH_COPY_OPAQUE, 0)
    DRVF(cuMemcpy3D_v2, 170, VT_SH_CU_COPY3D, 0, ARG, pCopy)
    DRVF(cuMemcpy3D_v2_ptds, 170, VT_SH_CU_COPY3D, 1, ARG, pCopy)
    DRVF(cuMemcpy3DAsync, 171, VT_SH_COPY_OPAQUE, 0, STREAM, hStream)
    DRVF(cuMemcpy3DAsync_v2, 171, VT_SH_CU_COPY3D, 0, ARG_S, pCopy, hStream)
    DRVF(cuMemcpy3DAsync_v2_ptsz, 171, VT_SH_CU_COPY3D, 1, ARG_S, pCopy, hStream)
    DRVF(cuMemcpyPeer, 172, VT_SH_COPY, 0, CPY, dstDevice, srcDevice, ByteCount)
    DRVF(cuMemcpyPeer_ptds, 172, VT_SH_COPY, 1, CPY, dstDevice, srcDevice, ByteCount)
    DRVF(cuMemcpyPeerAsync, 173, VT_SH_COPY, 0, CPY_S, dstDevice, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpyPeerAsync_ptsz, 173, VT_SH_COPY, 1, CPY_S, dstDevice, srcDevice, ByteCount, hStream)
    DRVF(cuMemcpy3DPeer, 174, VT_SH_CU_COPY3D_PEER, 0, ARG, pCopy)
    DRVF(cuMemcpy3DPeer_ptds, 174, VT_SH_CU_COPY3D_PEER, 1, ARG, pCopy)
    DRVF(cuMemcpy3DPeerAsync, 175, VT_SH_CU_COPY3D_PEER, 0, ARG_S, pCopy, hStream)
    DRVF(cuMemcpy3DPeerAsync_ptsz, 175, VT_SH_CU_COPY3D_PEER, 1, ARG_S, pCopy, hStream)
    DRVF(cuMemcpyBatchAsync, 176, VT_SH_COPY_BATCH, 0, BATCH, dsts, srcs, sizes, count, hStream)
    DRVF(cuMemcpyBatchAsync_ptsz, 176, VT_SH_COPY_BATCH, 1, BATCH, dsts, srcs, sizes, count, hStream)
    DRVF(cuMemcpyBatchAsync_v2, 176, VT_SH_COPY_BATCH, 0, BATCH, dsts, srcs, sizes, count, hStream)
    DRVF(cuMemcpyBatchAsync_v2_ptsz, 176, VT_SH_COPY_BATCH, 1, BATCH, dsts, srcs, sizes, count, hStream)
    DRVF(cuMemcpy3DBatchAsync, 177, VT_SH_CU_COPY3D_BATCH, 0, OPS, opList, numOps, hStream)
    DRVF(cuMemcpy3DBatchAsync_ptsz, 177, VT_SH_CU_COPY3D_BATCH, 1, OPS, opList, numOps, hStream)
    DRVF(cuMemcpy3DBatchAsync_v2, 177, VT_SH_CU_COPY3D_BATCH, 0, OPS, opList, numOps, hStream)
    DRVF(cuMemcpy3DBatchAsync_v2_ptsz, 177, VT_SH_CU_COPY3D_BATCH, 1, OPS, opList, numOps, hStream)
    /* sets (the pre-3.2 forms included) */
    DRVF(cuMemsetD8, 82, VT_SH_SET, 0, SET, 1, dstDevice, N)
    DRVF(cuMemsetD8_v2, 82, VT_SH_SET, 0, SET, 1, dstDevice, N)
    DRVF(cuMemsetD8_v2_ptds, 82, VT_SH_SET, 1, SET, 1, dstDevice, N)
    DRVF(cuMemsetD8Async, 83, VT_SH_SET, 0, SET_S, 1, dstDevice, N, hStream)
    DRVF(cuMemsetD8Async_ptsz, 83, VT_SH_SET, 1, SET_S, 1, dstDevice, N, hStream)
    DRVF(cuMemsetD32, 84, VT_SH_SET, 0, SET, 4, dstDevice, N)
    DRVF(cuMemsetD32_v2, 84, VT_SH_SET, 0, SET, 4, dstDevice, N)
    DRVF(cuMemsetD32_v2_ptds, 84, VT_SH_SET, 1, SET, 4, dstDevice, N)
    DRVF(cuMemsetD32Async, 85, VT_SH_SET, 0, SET_S, 4, dstDevice, N, hStream)
    DRVF(cuMemsetD32Async_ptsz, 85, VT_SH_SET, 1, SET_S, 4, dstDevice, N, hStream)
    DRVF(cuMemsetD16, 184, VT_SH_SET, 0, SET, 2, dstDevice, N)
    DRVF(cuMemsetD16_v2, 184, VT_SH_SET, 0, SET, 2, dstDevice, N)
    DRVF(cuMemsetD16_v2_ptds, 184, VT_SH_SET, 1, SET, 2, dstDevice, N)
    DRVF(cuMemsetD16Async, 185, VT_SH_SET, 0, SET_S, 2, dstDevice, N, hStream)
    DRVF(cuMemsetD16Async_ptsz, 185, VT_SH_SET, 1, SET_S, 2, dstDevice, N, hStream)
    DRVF(cuMemsetD2D8, 186, VT_SH_SET, 0, SET2, 1, dstDevice, Width, Height)
    DRVF(cuMemsetD2D8_v2, 186, VT_SH_SET, 0, SET2, 1, dstDevice, Width, Height)
    DRVF(cuMemsetD2D8_v2_ptds, 186, VT_SH_SET, 1, SET2, 1, dstDevice, Width, Height)
    DRVF(cuMemsetD2D8Async, 187, VT_SH_SET, 0, SET2_S, 1, dstDevice, Width, Height, hStream)
    DRVF(cuMemsetD2D8Async_ptsz, 187, VT_SH_SET, 1, SET2_S, 1, dstDevice, Width, Height, hStream)
    DRVF(cuMemsetD2D16, 188, VT_SH_SET, 0, SET2, 2, dstDevice, Width, Height)
    DRVF(cuMemsetD2D16_v2, 188, VT_SH_SET, 0, SET2, 2, dstDevice, Width, Height)
    DRVF(cuMemsetD2D16_v2_ptds, 188, VT_SH_SET, 1, SET2, 2, dstDevice, Width, Height)
    DRVF(cuMemsetD2D16Async, 189, VT_SH_SET, 0, SET2_S, 2, dstDevice, Width, Height, hStream)
    DRVF(cuMemsetD2D16Async_ptsz, 189, VT_SH_SET, 1, SET2_S, 2, dstDevice, Width, Height, hStream)
    DRVF(cuMemsetD2D32, 190, VT_SH_SET, 0, SET2, 4, dstDevice, Width, Height)
    DRVF(cuMemsetD2D32_v2, 190, VT_SH_SET, 0, SET2, 4, dstDevice, Width, Height)
    DRVF(cuMemsetD2D32_v2_ptds, 190, VT_SH_SET, 1, SET2, 4, dstDevice, Width, Height)
    DRVF(cuMemsetD2D32Async, 191, VT_SH_SET, 0, SET2_S, 4, dstDevice, Width, Height, hStream)
    DRVF(cuMemsetD2D32Async_ptsz, 191, VT_SH_SET, 1, SET2_S, 4, dstDevice, Width, Height, hStream)
    /* launches */
    DRV(cuLaunchKernel, 102, VT_SH_CU_LAUNCH, 0)
    DRV(cuLaunchKernel_ptsz, 102, VT_SH_CU_LAUNCH, 1)
    DRV(cuLaunchKernelEx, 103, VT_SH_CU_LAUNCH_EX, 0)
    DRV(cuLaunchKernelEx_ptsz, 103, VT_SH_CU_LAUNCH_EX, 1)
    DRV(cuLaunchCooperativeKernel, 109, VT_SH_CU_LAUNCH_COOP, 0)
    DRV(cuLaunchCooperativeKernel_ptsz, 109, VT_SH_CU_LAUNCH_COOP, 1)
    DRV(cuLaunchCooperativeKernelMultiDevice, 110, VT_SH_CU_LAUNCH_MULTI, 0)
    DRV(cuGraphLaunch, 111, VT_SH_CU_GRAPH_LAUNCH, 0)
    DRV(cuGraphLaunch_ptsz, 111, VT_SH_CU_GRAPH_LAUNCH, 1)
    DRV(cuLaunch, 112, VT_SH_SYNC, 0)
    DRV(cuLaunchGrid, 113, VT_SH_SYNC, 0)
    DRV(cuLaunchGridAsync, 114, VT_SH_CU_LAUNCH_GRID_ASYNC, 0)
    DRV(cuCtxSynchronize, 122, VT_SH_SYNC, 0)
    DRV(cuCtxSynchronize_v2, 122, VT_SH_SYNC, 0)
    DRV(cuStreamSynchronize, 123, VT_SH_CU_STREAM_SYNC, 0)
    DRV(cuStreamSynchronize_ptsz, 123, VT_SH_CU_STREAM_SYNC, 1)
};

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
