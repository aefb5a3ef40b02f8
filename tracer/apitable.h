/* Internal: the traced API entry points, and where each one's parameters are (the tables of apitable.c). */
#ifndef VT_TRACER_APITABLE_H
#define VT_TRACER_APITABLE_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The parameters of __cudaLaunchKernel and __cudaLaunchKernel_ptsz (runtime
 * CBIDs 505/506, the _v13000 entries of cupti_runtime_cbid.h): the function
 * nvcc 13 compiles `kernel<<<...>>>` to (crt/host_runtime.h; declared in
 * crt/device_functions.h). CUDA 13.0's generated_cuda_runtime_api_meta.h has
 * no struct for it; CUPTI lays out every API's parameters as a struct of the
 * function's parameters in order, which is this (the layout of
 * cudaLaunchKernel_v7000_params, with the kernel handle for the stub).
 */
typedef struct {
    cudaKernel_t kernel; /* = CUkernel: the kernel's layout comes from cuKernelGetParamInfo */
    dim3 gridDim;
    dim3 blockDim;
    void **args;
    size_t sharedMem;
    cudaStream_t stream;
} vt__cudaLaunchKernel_v13000_params;

/*
 * How each traced API's parameters are read. One shape per parameter layout;
 * the per-thread-stream variants (_ptsz, _ptds) share their base layout. The
 * copies and sets are read field by field where each table entry says the
 * fields are (struct vt__field, from offsetof on the API's own params struct):
 * VT_SH_COPY and VT_SH_SET need nothing more; the other copy shapes read the struct an
 * entry's `arg` field points to, or the arrays of a batch.
 */
enum vt__shape {
    VT_SH_NONE = 0,
    VT_SH_MALLOC,        /* void **ptr; size_t size [; stream] */
    VT_SH_MALLOC_STREAM, /* cudaMallocAsync: void **ptr; size_t size; cudaStream_t */
    VT_SH_MALLOC_POOL,   /* cudaMallocFromPoolAsync: void **ptr; size_t; pool; stream */
    VT_SH_MALLOC_PITCH,  /* cudaMallocPitch: void **ptr; size_t *pitch; width; height */
    VT_SH_MALLOC_3D,     /* cudaMalloc3D */
    VT_SH_HOST_REGISTER, /* cudaHostRegister: void *ptr; size_t size; flags */
    VT_SH_FREE,          /* void *ptr */
    VT_SH_FREE_STREAM,   /* cudaFreeAsync: void *ptr; stream */
    VT_SH_CU_ALLOC,      /* CUdeviceptr *dptr; size_t bytesize */
    VT_SH_CU_ALLOC_STREAM, /* cuMemAllocAsync: CUdeviceptr *; size_t; CUstream */
    VT_SH_CU_ALLOC_POOL,   /* cuMemAllocFromPoolAsync: CUdeviceptr *; size_t; pool; CUstream */
    VT_SH_CU_ALLOC_PITCH,  /* cuMemAllocPitch_v2 */
    VT_SH_CU_HOST_ALLOC,   /* void **pp; size_t bytesize */
    VT_SH_CU_HOST_REGISTER, /* void *p; size_t bytesize */
    VT_SH_CU_FREE,          /* CUdeviceptr */
    VT_SH_CU_FREE_STREAM,   /* CUdeviceptr; CUstream */
    VT_SH_CU_HOST_FREE,     /* void *p */
    VT_SH_VMM_CREATE, VT_SH_VMM_RELEASE, VT_SH_VMM_MAP, VT_SH_VMM_UNMAP, VT_SH_VMM_RESERVE, VT_SH_VMM_ADDR_FREE,
    VT_SH_VMM_SET_ACCESS, /* cuMemSetAccess: ptr, size, desc, count (row only) */
    VT_SH_VMM_IMPORT,     /* cuMemImportFromShareableHandle: handle out (memory owned elsewhere) */
    VT_SH_MC_CREATE,      /* cuMulticastCreate: handle out, prop (size) */
    VT_SH_MC_ADD,         /* cuMulticastAddDevice: handle, device */
    VT_SH_MC_BIND_MEM,    /* cuMulticastBindMem: handle, offset, memHandle, offset, size */
    VT_SH_MC_BIND_ADDR,   /* cuMulticastBindAddr: handle, offset, memptr, size */
    VT_SH_MC_UNBIND,      /* cuMulticastUnbind: handle, device, offset, size */
    VT_SH_IPC_OPEN,       /* cudaIpcOpenMemHandle / cuIpcOpenMemHandle: pointer out (another process's) */
    VT_SH_IPC_CLOSE,      /* cudaIpcCloseMemHandle / cuIpcCloseMemHandle: pointer */
    /* copies and sets */
    VT_SH_COPY,           /* fields dst, src (either may be absent: an array or a symbol), bytes = n x n2 */
    VT_SH_SET,            /* fields dst, bytes = n x n2 x n3 x mul */
    VT_SH_COPY3D,         /* arg: const struct cudaMemcpy3DParms * */
    VT_SH_COPY3D_PEER,    /* arg: const struct cudaMemcpy3DPeerParms * */
    VT_SH_CU_COPY2D,      /* arg: const CUDA_MEMCPY2D * */
    VT_SH_CU_COPY3D,      /* arg: const CUDA_MEMCPY3D * */
    VT_SH_CU_COPY3D_PEER, /* arg: const CUDA_MEMCPY3D_PEER * */
    VT_SH_COPY_BATCH,     /* fields dst, src, n: arrays of addresses and sizes (8 bytes each), n2: count */
    VT_SH_COPY3D_BATCH,   /* arg: struct cudaMemcpy3DBatchOp list, n2: count */
    VT_SH_CU_COPY3D_BATCH, /* arg: CUDA_MEMCPY3D_BATCH_OP list, n2: count */
    VT_SH_COPY_OPAQUE,    /* a copy whose parameters CUDA 13 publishes no layout for (removed runtime
                       * batches; the 32-bit-era cuMemcpy2D/3D, whose descriptor cupti.h declares
                       * only as a placeholder): row only */
    /* launches and synchronizations (no call site from here on) */
    VT_SH_LAUNCH,         /* cudaLaunchKernel, cudaLaunchCooperativeKernel: func (stub), args, stream */
    VT_SH_LAUNCH_KERNEL,  /* __cudaLaunchKernel: kernel (cudaKernel_t), args, stream */
    VT_SH_LAUNCH_EXC,     /* cudaLaunchKernelExC: config (stream), func (stub), args */
    VT_SH_CU_LAUNCH,      /* cuLaunchKernel: f, hStream, kernelParams, extra */
    VT_SH_CU_LAUNCH_EX,   /* cuLaunchKernelEx: config (hStream), f, kernelParams, extra */
    VT_SH_CU_LAUNCH_COOP, /* cuLaunchCooperativeKernel: f, hStream, kernelParams */
    VT_SH_CU_LAUNCH_MULTI, /* cuLaunchCooperativeKernelMultiDevice: CUDA_LAUNCH_PARAMS list */
    VT_SH_GRAPH_LAUNCH,   /* cudaGraphLaunch: graphExec, stream */
    VT_SH_CU_GRAPH_LAUNCH, /* cuGraphLaunch: hGraph, hStream */
    VT_SH_CU_LAUNCH_GRID_ASYNC, /* cuLaunchGridAsync: f, grid, hStream (arguments set by cuParamSet*) */
    VT_SH_SYNC,           /* no parameters of interest (cuLaunch, cuLaunchGrid: f only; removed runtime
                       * launches, whose parameter structs CUDA 13 no longer publishes) */
    VT_SH_STREAM_SYNC,    /* cudaStreamSynchronize: stream */
    VT_SH_CU_STREAM_SYNC, /* cuStreamSynchronize: hStream */
};

/* Where one value is in an API's parameter struct. */
struct vt__field {
    uint16_t off1; /* offset + 1; 0: the API has no such value */
    uint8_t size;  /* bytes: 1, 2, 4 or 8 */
};

/* One traced API callback id. */
struct vt__api {
    CUpti_CallbackId cbid;
    int api;       /* VT_API_LIST id */
    int shape;     /* how its parameters are read (enum vt__shape) */
    int perThread; /* 1 for the _ptsz/_ptds variants (per-thread default stream) */
    /* the values read by position (copies and sets; meaning per shape, see enum vt__shape): */
    struct vt__field dst, src, n, n2, n3, stream, arg;
    int mul;       /* bytes per element counted by n (16/32-bit sets), 0 or 1 for bytes */
};

/* The traced callback ids of a domain (runtime or driver API): *pn entries; NULL for other domains. */
const struct vt__api *vt__api_table(CUpti_CallbackDomain domain, size_t *pn);

/* The entry of cbid in domain's table, or NULL when that callback is not traced. */
const struct vt__api *vt__api_find(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

#endif
