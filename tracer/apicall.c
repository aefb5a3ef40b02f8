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
 * the per-thread-stream variants (_ptsz, _ptds) share their base layout.
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
    S_MEMCPY,         /* cudaMemcpy: dst, src, count, kind */
    S_MEMCPY_ASYNC,   /* + stream */
    S_MEMCPY2D,       /* cudaMemcpy2D */
    S_MEMCPY2D_ASYNC, /* + stream */
    S_MEMCPY_PEER,    /* cudaMemcpyPeer */
    S_MEMCPY_PEER_ASYNC,
    S_CU_MEMCPY,       /* cuMemcpy: dst, src, ByteCount */
    S_CU_MEMCPY_ASYNC, /* + hStream */
    S_CU_HTOD, S_CU_HTOD_ASYNC, S_CU_DTOH, S_CU_DTOH_ASYNC, S_CU_DTOD, S_CU_DTOD_ASYNC,
    S_MEMSET, S_MEMSET_ASYNC,
    S_CU_MEMSET8, S_CU_MEMSET8_ASYNC, S_CU_MEMSET32, S_CU_MEMSET32_ASYNC,
    /* launches (no call site from here on) */
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

#define RT(name, api, shape, pt) {CUPTI_RUNTIME_TRACE_CBID_##name, api, shape, pt},
#define DRV(name, api, shape, pt) {CUPTI_DRIVER_TRACE_CBID_##name, api, shape, pt},

static const struct vt__api aRuntime[] = {
    RT(cudaMalloc_v3020, 1, S_MALLOC, 0)
    RT(cudaFree_v3020, 2, S_FREE, 0)
    RT(cudaMallocAsync_v11020, 3, S_MALLOC_STREAM, 0)
    RT(cudaMallocAsync_ptsz_v11020, 3, S_MALLOC_STREAM, 1)
    RT(cudaFreeAsync_v11020, 4, S_FREE_STREAM, 0)
    RT(cudaFreeAsync_ptsz_v11020, 4, S_FREE_STREAM, 1)
    RT(cudaMallocFromPoolAsync_v11020, 5, S_MALLOC_POOL, 0)
    RT(cudaMallocFromPoolAsync_ptsz_v11020, 5, S_MALLOC_POOL, 1)
    RT(cudaMallocHost_v3020, 6, S_MALLOC, 0)
    RT(cudaHostAlloc_v3020, 7, S_MALLOC, 0)
    RT(cudaFreeHost_v3020, 8, S_FREE, 0)
    RT(cudaMallocManaged_v6000, 9, S_MALLOC, 0)
    RT(cudaMallocPitch_v3020, 10, S_MALLOC_PITCH, 0)
    RT(cudaMalloc3D_v3020, 11, S_MALLOC_3D, 0)
    RT(cudaHostRegister_v4000, 12, S_HOST_REGISTER, 0)
    RT(cudaHostUnregister_v4000, 13, S_FREE, 0)
    RT(cudaMemcpy_v3020, 60, S_MEMCPY, 0)
    RT(cudaMemcpy_ptds_v7000, 60, S_MEMCPY, 1)
    RT(cudaMemcpyAsync_v3020, 61, S_MEMCPY_ASYNC, 0)
    RT(cudaMemcpyAsync_ptsz_v7000, 61, S_MEMCPY_ASYNC, 1)
    RT(cudaMemcpy2D_v3020, 62, S_MEMCPY2D, 0)
    RT(cudaMemcpy2D_ptds_v7000, 62, S_MEMCPY2D, 1)
    RT(cudaMemcpy2DAsync_v3020, 63, S_MEMCPY2D_ASYNC, 0)
    RT(cudaMemcpy2DAsync_ptsz_v7000, 63, S_MEMCPY2D_ASYNC, 1)
    RT(cudaMemcpyPeer_v4000, 64, S_MEMCPY_PEER, 0)
    RT(cudaMemcpyPeerAsync_v4000, 65, S_MEMCPY_PEER_ASYNC, 0)
    RT(cudaMemset_v3020, 80, S_MEMSET, 0)
    RT(cudaMemset_ptds_v7000, 80, S_MEMSET, 1)
    RT(cudaMemsetAsync_v3020, 81, S_MEMSET_ASYNC, 0)
    RT(cudaMemsetAsync_ptsz_v7000, 81, S_MEMSET_ASYNC, 1)
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
    DRV(cuMemcpy, 66, S_CU_MEMCPY, 0)
    DRV(cuMemcpy_ptds, 66, S_CU_MEMCPY, 1)
    DRV(cuMemcpyAsync, 67, S_CU_MEMCPY_ASYNC, 0)
    DRV(cuMemcpyAsync_ptsz, 67, S_CU_MEMCPY_ASYNC, 1)
    DRV(cuMemcpyHtoD_v2, 68, S_CU_HTOD, 0)
    DRV(cuMemcpyHtoD_v2_ptds, 68, S_CU_HTOD, 1)
    DRV(cuMemcpyHtoDAsync_v2, 69, S_CU_HTOD_ASYNC, 0)
    DRV(cuMemcpyHtoDAsync_v2_ptsz, 69, S_CU_HTOD_ASYNC, 1)
    DRV(cuMemcpyDtoH_v2, 70, S_CU_DTOH, 0)
    DRV(cuMemcpyDtoH_v2_ptds, 70, S_CU_DTOH, 1)
    DRV(cuMemcpyDtoHAsync_v2, 71, S_CU_DTOH_ASYNC, 0)
    DRV(cuMemcpyDtoHAsync_v2_ptsz, 71, S_CU_DTOH_ASYNC, 1)
    DRV(cuMemcpyDtoD_v2, 72, S_CU_DTOD, 0)
    DRV(cuMemcpyDtoD_v2_ptds, 72, S_CU_DTOD, 1)
    DRV(cuMemcpyDtoDAsync_v2, 73, S_CU_DTOD_ASYNC, 0)
    DRV(cuMemcpyDtoDAsync_v2_ptsz, 73, S_CU_DTOD_ASYNC, 1)
    DRV(cuMemsetD8_v2, 82, S_CU_MEMSET8, 0)
    DRV(cuMemsetD8_v2_ptds, 82, S_CU_MEMSET8, 1)
    DRV(cuMemsetD8Async, 83, S_CU_MEMSET8_ASYNC, 0)
    DRV(cuMemsetD8Async_ptsz, 83, S_CU_MEMSET8_ASYNC, 1)
    DRV(cuMemsetD32_v2, 84, S_CU_MEMSET32, 0)
    DRV(cuMemsetD32_v2_ptds, 84, S_CU_MEMSET32, 1)
    DRV(cuMemsetD32Async, 85, S_CU_MEMSET32_ASYNC, 0)
    DRV(cuMemsetD32Async_ptsz, 85, S_CU_MEMSET32_ASYNC, 1)
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
    int device;   /* from the parameters (cuMemCreate), else -1 */
    int memKind;  /* for VMM rows */
};

/* Pointer value at p if p is not NULL and the call succeeded, else 0. */
#define OUT_PTR(p, ok) ((ok) && (p) ? (uint64_t)(uintptr_t) * (p) : 0)

/* Fill *c from the parameters of a call of the given shape; ok: the call succeeded. */
static void read_params(int shape, const void *pv, int ok, struct call *c)
{
    memset(c, 0, sizeof *c);
    c->device = -1;
    switch (shape) {
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
            if (p->prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) c->device = p->prop->location.id;
            else if (p->prop->location.type != CU_MEM_LOCATION_TYPE_INVALID) c->memKind = VT_MEMKIND_PINNED;
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
    case S_MEMCPY: {
        const cudaMemcpy_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = p->count;
        break;
    }
    case S_MEMCPY_ASYNC: {
        const cudaMemcpyAsync_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = p->count;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_MEMCPY2D: {
        const cudaMemcpy2D_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = (uint64_t)p->width * p->height;
        break;
    }
    case S_MEMCPY2D_ASYNC: {
        const cudaMemcpy2DAsync_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = (uint64_t)p->width * p->height;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_MEMCPY_PEER: {
        const cudaMemcpyPeer_v4000_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = p->count;
        break;
    }
    case S_MEMCPY_PEER_ASYNC: {
        const cudaMemcpyPeerAsync_v4000_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dst;
        c->src = (uint64_t)(uintptr_t)p->src;
        c->bytes = p->count;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_CU_MEMCPY: {
        const cuMemcpy_params *p = pv;
        c->dst = p->dst;
        c->src = p->src;
        c->bytes = p->ByteCount;
        break;
    }
    case S_CU_MEMCPY_ASYNC: {
        const cuMemcpyAsync_params *p = pv;
        c->dst = p->dst;
        c->src = p->src;
        c->bytes = p->ByteCount;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_HTOD: {
        const cuMemcpyHtoD_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->src = (uint64_t)(uintptr_t)p->srcHost;
        c->bytes = p->ByteCount;
        break;
    }
    case S_CU_HTOD_ASYNC: {
        const cuMemcpyHtoDAsync_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->src = (uint64_t)(uintptr_t)p->srcHost;
        c->bytes = p->ByteCount;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_DTOH: {
        const cuMemcpyDtoH_v2_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dstHost;
        c->src = p->srcDevice;
        c->bytes = p->ByteCount;
        break;
    }
    case S_CU_DTOH_ASYNC: {
        const cuMemcpyDtoHAsync_v2_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->dstHost;
        c->src = p->srcDevice;
        c->bytes = p->ByteCount;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_DTOD: {
        const cuMemcpyDtoD_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->src = p->srcDevice;
        c->bytes = p->ByteCount;
        break;
    }
    case S_CU_DTOD_ASYNC: {
        const cuMemcpyDtoDAsync_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->src = p->srcDevice;
        c->bytes = p->ByteCount;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_MEMSET: {
        const cudaMemset_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->devPtr;
        c->bytes = p->count;
        break;
    }
    case S_MEMSET_ASYNC: {
        const cudaMemsetAsync_v3020_params *p = pv;
        c->dst = (uint64_t)(uintptr_t)p->devPtr;
        c->bytes = p->count;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case S_CU_MEMSET8: {
        const cuMemsetD8_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->bytes = p->N;
        break;
    }
    case S_CU_MEMSET8_ASYNC: {
        const cuMemsetD8Async_params *p = pv;
        c->dst = p->dstDevice;
        c->bytes = p->N;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case S_CU_MEMSET32: {
        const cuMemsetD32_v2_params *p = pv;
        c->dst = p->dstDevice;
        c->bytes = (uint64_t)p->N * 4;
        break;
    }
    case S_CU_MEMSET32_ASYNC: {
        const cuMemsetD32Async_params *p = pv;
        c->dst = p->dstDevice;
        c->bytes = (uint64_t)p->N * 4;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
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
        if (p->launchParamsList && p->numDevices == 1) { /* several devices: several streams */
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
    if (shape == S_VMM_MAP || (is_alloc_shape(shape) && shape != S_VMM_CREATE)) {
        if (c->ptr) vt__ivl_insert(ivl, c->ptr, c->bytes);
    } else if (shape == S_VMM_UNMAP || is_free_shape(shape)) {
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
 * Submit n buffer uses (bases aBase[0..n)) of one call, keyed by `correlation`,
 * with the time now, and a dropped row for nLost more that did not fit.
 */
static void submit_uses(const struct vt__apicall_env *env, uint32_t correlation, int kind,
                        const uint64_t *aBase, int n, uint64_t nLost, int device)
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
        rec.u.use.kind = kind;
        rec.u.use.address = aBase[i];
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
 * so it joins the kernel record).
 */
static void scan_launch(const struct vt__apicall_env *env, int shape, const void *pParams,
                        uint32_t correlation, int device)
{
    uint64_t aBase[USES_MAX], nLost = 0;
    struct launch aLaunch[MULTI_MAX];
    int nLaunch, i, nUse = 0;

    if (!env->kp) return;
    nLaunch = launch_kernels(shape, pParams, aLaunch, MULTI_MAX);
    for (i = 0; i < nLaunch; i++) {
        const struct launch *l = &aLaunch[i];
        int nRoom = USES_MAX - nUse;
        int n = vt__kparams_scan(env->kp, l->kind, l->h, l->apParam, l->extra, aBase + nUse, nRoom);
        if (n > nRoom) {
            nLost += (uint64_t)(n - nRoom);
            n = nRoom;
        }
        if (n > 0) nUse += n;
    }
    submit_uses(env, correlation, VT_USE_KERNEL_ARG, aBase, nUse, nLost, device);
}

/*
 * Record one API call at its exit: api_call row, plus oom_event / VMM
 * memory_event / buffer_use rows. bScan: a successful kernel launch's arguments
 * are to be scanned here (not yet scanned at a driver launch inside it).
 */
static void record_exit(const struct vt__apicall_env *env, struct vt__apithread *t,
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

    read_params(e->shape, cb->functionParams, ok, &c);
    if (c.device >= 0 && device < 0) device = c.device;
    if (wants_site(e->shape)) stack = env->xSite();

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
    env->xSubmit(&rec);

    if (!ok && is_alloc_shape(e->shape)) {
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

    if (ok && e->shape >= S_VMM_CREATE && e->shape <= S_VMM_UNMAP) {
        static const int aOp[] = {VT_MEMOP_VMM_CREATE, VT_MEMOP_VMM_RELEASE, VT_MEMOP_VMM_MAP,
                                  VT_MEMOP_VMM_UNMAP};
        memset(&rec, 0, sizeof rec);
        rec.type = VT_HREC_MEMORY;
        rec.u.mem.ts = end;
        rec.u.mem.op = aOp[e->shape - S_VMM_CREATE];
        rec.u.mem.mem_kind = c.memKind;
        /* create/release: the address column holds the physical handle */
        rec.u.mem.address = e->shape <= S_VMM_RELEASE ? c.handle : c.ptr;
        rec.u.mem.bytes = c.bytes;
        rec.u.mem.device = device;
        rec.u.mem.correlation = cb->correlationId;
        rec.u.mem.api = e->api;
        rec.u.mem.handle = c.handle;
        rec.u.mem.thread = thread_id(t);
        rec.u.mem.stack_id = stack;
        env->xSubmit(&rec);
    }

    if (ok) track_live(env->ivl, e->shape, &c);
    if (ok && bScan) scan_launch(env, e->shape, cb->functionParams, cb->correlationId, device);
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
            if (cb->correlationData) *cb->correlationData = env->xNow();
            return;
        }
        if (t->depth > 0) t->depth--;
        /* a runtime launch is scanned here only when no driver launch inside it was */
        if (env->xActive()) record_exit(env, t, e, cb, is_runtime_kernel_launch(e->shape) && !t->bScanned);
        return;
    }
    if (t->depth > 0) {
        /* A runtime call already recorded covers the driver calls it makes; only its
         * launch is looked at here, where the kernel's parameter layout is known, and
         * scanned under the runtime call's correlation id (so each launch is scanned once). */
        if (cb->callbackSite == CUPTI_API_EXIT && env->xActive() && is_driver_kernel_launch(e->shape) &&
            cb->functionReturnValue && *(const int *)cb->functionReturnValue == 0) {
            scan_launch(env, e->shape, cb->functionParams, t->correlation, env->xDevice(cb->context));
            t->bScanned = 1;
        }
        return;
    }
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (cb->correlationData) *cb->correlationData = env->xNow();
        return;
    }
    if (env->xActive()) record_exit(env, t, e, cb, is_driver_kernel_launch(e->shape));
}
