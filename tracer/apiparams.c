/* API parameters -> what a call asked for: each shape's parameter struct read into a struct vt__call. */
#include "apiparams.h"

#include <string.h>

#include "vramtrace/schema.h"

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
uint64_t vt__apicall_array_at(const void *pArray, size_t i)
{
    uint64_t v = 0;
    if (pArray) memcpy(&v, (const unsigned char *)pArray + 8 * i, 8);
    return v;
}

/* Source and destination address of operation i of a 3D batch (0 for an array operand). */
void vt__apicall_op3d_sides(int shape, const void *pOps, size_t i, uint64_t *pSrc, uint64_t *pDst)
{
    *pSrc = *pDst = 0;
    if (!pOps) return;
    if (shape == VT_SH_COPY3D_BATCH) {
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
void vt__apicall_read(const struct vt__api *e, const void *pv, int ok, struct vt__call *c)
{
    memset(c, 0, sizeof *c);
    c->device = -1;
    if (!pv) return;
    if (e->stream.off1) {
        c->hStream = (const void *)(uintptr_t)field(pv, e->stream);
        c->bStream = 1;
    }
    switch (e->shape) {
    case VT_SH_MALLOC: {
        const cudaMalloc_v3020_params *p = pv; /* cudaMallocHost/HostAlloc/Managed: same head */
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->devPtr, ok);
        break;
    }
    case VT_SH_MALLOC_STREAM: {
        const cudaMallocAsync_v11020_params *p = pv;
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->devPtr, ok);
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case VT_SH_MALLOC_POOL: {
        const cudaMallocFromPoolAsync_v11020_params *p = pv;
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->ptr, ok);
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case VT_SH_MALLOC_PITCH: {
        const cudaMallocPitch_v3020_params *p = pv;
        size_t pitch = ok && p->pitch ? *p->pitch : p->width;
        c->bytes = (uint64_t)pitch * p->height;
        c->ptr = OUT_PTR(p->devPtr, ok);
        break;
    }
    case VT_SH_MALLOC_3D: {
        const cudaMalloc3D_v3020_params *p = pv;
        size_t pitch = ok && p->pitchedDevPtr ? p->pitchedDevPtr->pitch : p->extent.width;
        c->bytes = (uint64_t)pitch * p->extent.height * (p->extent.depth ? p->extent.depth : 1);
        c->ptr = ok && p->pitchedDevPtr ? (uint64_t)(uintptr_t)p->pitchedDevPtr->ptr : 0;
        break;
    }
    case VT_SH_HOST_REGISTER: {
        const cudaHostRegister_v4000_params *p = pv;
        c->bytes = p->size;
        c->ptr = (uint64_t)(uintptr_t)p->ptr;
        break;
    }
    case VT_SH_FREE: {
        const cudaFree_v3020_params *p = pv; /* cudaFreeHost/HostUnregister: same layout */
        c->ptr = (uint64_t)(uintptr_t)p->devPtr;
        break;
    }
    case VT_SH_FREE_STREAM: {
        const cudaFreeAsync_v11020_params *p = pv;
        c->ptr = (uint64_t)(uintptr_t)p->devPtr;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case VT_SH_CU_ALLOC: {
        const cuMemAlloc_v2_params *p = pv; /* cuMemAllocManaged: same head */
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->dptr, ok);
        break;
    }
    case VT_SH_CU_ALLOC_STREAM: {
        const cuMemAllocAsync_params *p = pv;
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->dptr, ok);
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case VT_SH_CU_ALLOC_POOL: {
        const cuMemAllocFromPoolAsync_params *p = pv;
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->dptr, ok);
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case VT_SH_CU_ALLOC_PITCH: {
        const cuMemAllocPitch_v2_params *p = pv;
        size_t pitch = ok && p->pPitch ? *p->pPitch : p->WidthInBytes;
        c->bytes = (uint64_t)pitch * p->Height;
        c->ptr = OUT_PTR(p->dptr, ok);
        break;
    }
    case VT_SH_CU_HOST_ALLOC: {
        const cuMemAllocHost_v2_params *p = pv; /* cuMemHostAlloc: same head */
        c->bytes = p->bytesize;
        c->ptr = OUT_PTR(p->pp, ok);
        break;
    }
    case VT_SH_CU_HOST_REGISTER: {
        const cuMemHostRegister_v2_params *p = pv;
        c->bytes = p->bytesize;
        c->ptr = (uint64_t)(uintptr_t)p->p;
        break;
    }
    case VT_SH_CU_FREE: {
        const cuMemFree_v2_params *p = pv;
        c->ptr = p->dptr;
        break;
    }
    case VT_SH_CU_FREE_STREAM: {
        const cuMemFreeAsync_params *p = pv;
        c->ptr = p->dptr;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case VT_SH_CU_HOST_FREE: {
        const cuMemFreeHost_params *p = pv; /* cuMemHostUnregister: same layout */
        c->ptr = (uint64_t)(uintptr_t)p->p;
        break;
    }
    case VT_SH_VMM_CREATE: {
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
    case VT_SH_VMM_RELEASE: {
        const cuMemRelease_params *p = pv;
        c->handle = (uint64_t)p->handle;
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case VT_SH_VMM_MAP: {
        const cuMemMap_params *p = pv;
        c->ptr = p->ptr;
        c->bytes = p->size;
        c->handle = (uint64_t)p->handle;
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case VT_SH_VMM_UNMAP: {
        const cuMemUnmap_params *p = pv;
        c->ptr = p->ptr;
        c->bytes = p->size;
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case VT_SH_VMM_SET_ACCESS: {
        const cuMemSetAccess_params *p = pv;
        c->ptr = p->ptr;
        c->bytes = p->size;
        break;
    }
    case VT_SH_VMM_IMPORT: {
        const cuMemImportFromShareableHandle_params *p = pv;
        c->handle = ok && p->handle ? (uint64_t)*p->handle : 0;
        c->memKind = VT_MEMKIND_UNKNOWN;
        break;
    }
    case VT_SH_MC_CREATE: {
        const cuMulticastCreate_params *p = pv;
        c->handle = ok && p->mcHandle ? (uint64_t)*p->mcHandle : 0;
        if (p->prop) c->bytes = p->prop->size;
        break;
    }
    case VT_SH_MC_ADD: {
        const cuMulticastAddDevice_params *p = pv;
        c->handle = (uint64_t)p->mcHandle;
        c->device = p->dev;
        break;
    }
    case VT_SH_MC_BIND_MEM: {
        const cuMulticastBindMem_params *p = pv;
        c->handle = (uint64_t)p->mcHandle;
        c->src = (uint64_t)p->memHandle; /* the bound allocation's handle */
        c->bytes = p->size;
        break;
    }
    case VT_SH_MC_BIND_ADDR: {
        const cuMulticastBindAddr_params *p = pv;
        c->handle = (uint64_t)p->mcHandle;
        c->src = p->memptr; /* the bound memory */
        c->bytes = p->size;
        break;
    }
    case VT_SH_MC_UNBIND: {
        const cuMulticastUnbind_params *p = pv;
        c->handle = (uint64_t)p->mcHandle;
        c->device = p->dev;
        c->bytes = p->size;
        break;
    }
    case VT_SH_IPC_OPEN: {
        const cuIpcOpenMemHandle_v2_params *p = pv; /* cudaIpcOpenMemHandle and _v1: same head */
        c->ptr = OUT_PTR(p->pdptr, ok);
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case VT_SH_IPC_CLOSE: {
        const cuIpcCloseMemHandle_params *p = pv; /* cudaIpcCloseMemHandle: same layout */
        c->ptr = p->dptr;
        c->memKind = VT_MEMKIND_DEVICE;
        break;
    }
    case VT_SH_VMM_RESERVE: {
        const cuMemAddressReserve_params *p = pv;
        c->bytes = p->size;
        c->ptr = OUT_PTR(p->ptr, ok);
        break;
    }
    case VT_SH_VMM_ADDR_FREE: {
        const cuMemAddressFree_params *p = pv;
        c->ptr = p->ptr;
        c->bytes = p->size;
        break;
    }
    case VT_SH_COPY:
        c->dst = field(pv, e->dst);
        c->src = field(pv, e->src);
        c->bytes = field_bytes(pv, e);
        break;
    case VT_SH_SET:
        c->dst = field(pv, e->dst);
        c->bytes = field_bytes(pv, e);
        break;
    /* The shapes below follow pointers out of the parameter struct: only for a call the
     * driver accepted (a failed call may name a count its arrays do not have). */
    case VT_SH_COPY3D: {
        const struct cudaMemcpy3DParms *p = (const void *)(uintptr_t)field(pv, e->arg);
        if (!ok || !p) break;
        if (!p->srcArray) c->src = (uint64_t)(uintptr_t)p->srcPtr.ptr;
        if (!p->dstArray) c->dst = (uint64_t)(uintptr_t)p->dstPtr.ptr;
        if (!p->srcArray && !p->dstArray) /* the extent is in elements when an array takes part */
            c->bytes = (uint64_t)p->extent.width * p->extent.height * p->extent.depth;
        break;
    }
    case VT_SH_COPY3D_PEER: {
        const struct cudaMemcpy3DPeerParms *p = (const void *)(uintptr_t)field(pv, e->arg);
        if (!ok || !p) break;
        if (!p->srcArray) c->src = (uint64_t)(uintptr_t)p->srcPtr.ptr;
        if (!p->dstArray) c->dst = (uint64_t)(uintptr_t)p->dstPtr.ptr;
        if (!p->srcArray && !p->dstArray)
            c->bytes = (uint64_t)p->extent.width * p->extent.height * p->extent.depth;
        break;
    }
    case VT_SH_CU_COPY2D: {
        const CUDA_MEMCPY2D *p = (const void *)(uintptr_t)field(pv, e->arg);
        if (!ok || !p) break;
        c->src = cu_side(p->srcMemoryType, p->srcHost, p->srcDevice);
        c->dst = cu_side(p->dstMemoryType, p->dstHost, p->dstDevice);
        c->bytes = (uint64_t)p->WidthInBytes * p->Height;
        break;
    }
    case VT_SH_CU_COPY3D: {
        const CUDA_MEMCPY3D *p = (const void *)(uintptr_t)field(pv, e->arg);
        if (!ok || !p) break;
        c->src = cu_side(p->srcMemoryType, p->srcHost, p->srcDevice);
        c->dst = cu_side(p->dstMemoryType, p->dstHost, p->dstDevice);
        c->bytes = (uint64_t)p->WidthInBytes * p->Height * p->Depth;
        break;
    }
    case VT_SH_CU_COPY3D_PEER: {
        const CUDA_MEMCPY3D_PEER *p = (const void *)(uintptr_t)field(pv, e->arg);
        if (!ok || !p) break;
        c->src = cu_side(p->srcMemoryType, p->srcHost, p->srcDevice);
        c->dst = cu_side(p->dstMemoryType, p->dstHost, p->dstDevice);
        c->bytes = (uint64_t)p->WidthInBytes * p->Height * p->Depth;
        break;
    }
    case VT_SH_COPY_BATCH: {
        const void *pSizes = (const void *)(uintptr_t)field(pv, e->n);
        size_t i;
        if (!ok) break;
        c->nOp = (size_t)field(pv, e->n2);
        c->pOpDst = (const void *)(uintptr_t)field(pv, e->dst);
        c->pOpSrc = (const void *)(uintptr_t)field(pv, e->src);
        for (i = 0; pSizes && i < c->nOp; i++) c->bytes += vt__apicall_array_at(pSizes, i);
        if (c->nOp == 1) { /* one copy: its addresses fit the row */
            c->dst = vt__apicall_array_at(c->pOpDst, 0);
            c->src = vt__apicall_array_at(c->pOpSrc, 0);
        }
        break;
    }
    case VT_SH_COPY3D_BATCH:
    case VT_SH_CU_COPY3D_BATCH:
        /* the bytes are unknown: the extents count elements */
        if (!ok) break;
        c->nOp = (size_t)field(pv, e->n2);
        c->pOps = (const void *)(uintptr_t)field(pv, e->arg);
        if (c->nOp == 1) vt__apicall_op3d_sides(e->shape, c->pOps, 0, &c->src, &c->dst);
        break;
    case VT_SH_LAUNCH: {
        const cudaLaunchKernel_v7000_params *p = pv;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case VT_SH_LAUNCH_KERNEL: {
        const vt__cudaLaunchKernel_v13000_params *p = pv;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case VT_SH_LAUNCH_EXC: {
        const cudaLaunchKernelExC_v11060_params *p = pv;
        if (p->config) {
            c->hStream = p->config->stream;
            c->bStream = 1;
        }
        break;
    }
    case VT_SH_CU_LAUNCH: {
        const cuLaunchKernel_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case VT_SH_CU_LAUNCH_EX: {
        const cuLaunchKernelEx_params *p = pv;
        if (p->config) {
            c->hStream = p->config->hStream;
            c->bStream = 1;
        }
        break;
    }
    case VT_SH_CU_LAUNCH_COOP: {
        const cuLaunchCooperativeKernel_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case VT_SH_CU_LAUNCH_MULTI: {
        const cuLaunchCooperativeKernelMultiDevice_params *p = pv;
        /* one device: its stream (several: several streams); the list only of an accepted call */
        if (ok && p->launchParamsList && p->numDevices == 1) {
            c->hStream = p->launchParamsList[0].hStream;
            c->bStream = 1;
        }
        break;
    }
    case VT_SH_GRAPH_LAUNCH: {
        const cudaGraphLaunch_v10000_params *p = pv;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case VT_SH_CU_GRAPH_LAUNCH: {
        const cuGraphLaunch_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case VT_SH_CU_LAUNCH_GRID_ASYNC: {
        const cuLaunchGridAsync_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    case VT_SH_STREAM_SYNC: {
        const cudaStreamSynchronize_v3020_params *p = pv;
        c->hStream = p->stream;
        c->bStream = 1;
        break;
    }
    case VT_SH_CU_STREAM_SYNC: {
        const cuStreamSynchronize_params *p = pv;
        c->hStream = p->hStream;
        c->bStream = 1;
        break;
    }
    default: break;
    }
}
