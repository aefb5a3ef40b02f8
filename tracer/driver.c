/* The driver (and runtime) functions the CUPTI glue calls: found in the libraries the process already loaded, never traced. */
#include "driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "vramtrace/schema.h"

_Thread_local int vt__t_inTracer;

/* Driver entry points, found with dlsym in the already-loaded libcuda (never linked). */
static struct {
    CUresult (*xMemGetInfo)(size_t *, size_t *);
    CUresult (*xDriverGetVersion)(int *);
    CUresult (*xDeviceGet)(CUdevice *, int);
    CUresult (*xDeviceGetName)(char *, int, CUdevice);
    CUresult (*xDeviceTotalMem)(size_t *, CUdevice);
    CUresult (*xDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*xDeviceGetUuid)(CUuuid *, CUdevice);
    CUresult (*xFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
    CUresult (*xKernelGetParamInfo)(CUkernel, size_t, size_t *, size_t *);
    CUresult (*xMemGetAddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
    CUresult (*xMemGetAllocationPropertiesFromHandle)(CUmemAllocationProp *, CUmemGenericAllocationHandle);
    /* the CUDA runtime's, for runtime launches (a host stub's layout), when the process has one */
    int (*xRtFuncGetParamInfo)(const void *, size_t, size_t *, size_t *);
} g_drv;

/* Resolve the driver (and runtime) functions from the libraries already in the process (nothing is loaded). */
void vt__driver_load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    void *hSym = h ? h : RTLD_DEFAULT;
#define SYM(field, name) *(void **)&g_drv.field = dlsym(hSym, name)
    SYM(xMemGetInfo, "cuMemGetInfo_v2");
    SYM(xDriverGetVersion, "cuDriverGetVersion");
    SYM(xDeviceGet, "cuDeviceGet");
    SYM(xDeviceGetName, "cuDeviceGetName");
    SYM(xDeviceTotalMem, "cuDeviceTotalMem_v2");
    SYM(xDeviceGetAttribute, "cuDeviceGetAttribute");
    SYM(xDeviceGetUuid, "cuDeviceGetUuid_v2");
    SYM(xFuncGetParamInfo, "cuFuncGetParamInfo");
    SYM(xKernelGetParamInfo, "cuKernelGetParamInfo");
    SYM(xMemGetAddressRange, "cuMemGetAddressRange_v2");
    SYM(xMemGetAllocationPropertiesFromHandle, "cuMemGetAllocationPropertiesFromHandle");
    /* The handle stays open for the life of the process: libcuda is never unloaded anyway. */

    /* cudaFuncGetParamInfo: global, or in a libcudart loaded locally (a Python extension's).
     * Looked up here only, at start: dlsym inside a callback could wait on the loader lock. */
    hSym = RTLD_DEFAULT;
    SYM(xRtFuncGetParamInfo, "cudaFuncGetParamInfo");
    if (!g_drv.xRtFuncGetParamInfo && (h = dlopen("libcudart.so.13", RTLD_LAZY | RTLD_NOLOAD)) != NULL) {
        hSym = h;
        SYM(xRtFuncGetParamInfo, "cudaFuncGetParamInfo");
        /* the reference is kept, as libcuda's: the function must not be unloaded under us */
    }
#undef SYM
}

int vt__driver_version(int *pVersion)
{
    return g_drv.xDriverGetVersion && g_drv.xDriverGetVersion(pVersion) == CUDA_SUCCESS ? 0 : -1;
}

/* cuFuncGetParamInfo for the kernel-argument scanner (kparams.h), never traced. */
static int func_param_info(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    CUresult r;
    vt__t_inTracer++;
    r = g_drv.xFuncGetParamInfo((CUfunction)(uintptr_t)h, i, pOff, pSize);
    vt__t_inTracer--;
    return r == CUDA_SUCCESS ? 0 : -1;
}

/* cuKernelGetParamInfo for the kernel-argument scanner (kparams.h), never traced. */
static int kernel_param_info(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    CUresult r;
    vt__t_inTracer++;
    r = g_drv.xKernelGetParamInfo((CUkernel)(uintptr_t)h, i, pOff, pSize);
    vt__t_inTracer--;
    return r == CUDA_SUCCESS ? 0 : -1;
}

/* cudaFuncGetParamInfo for the kernel-argument scanner (kparams.h), never traced. */
static int stub_param_info(const void *h, size_t i, size_t *pOff, size_t *pSize)
{
    int r;
    vt__t_inTracer++;
    r = g_drv.xRtFuncGetParamInfo(h, i, pOff, pSize);
    vt__t_inTracer--;
    return r == 0 ? 0 : -1; /* cudaSuccess */
}

/* Query free/total device memory through the driver, never traced. Returns 0 or -1. */
int vt__driver_mem_info(uint64_t *pFree, uint64_t *pTotal)
{
    size_t nFree = 0, nTotal = 0;
    CUresult r;
    if (!g_drv.xMemGetInfo) return -1;
    vt__t_inTracer++;
    r = g_drv.xMemGetInfo(&nFree, &nTotal);
    vt__t_inTracer--;
    if (r != CUDA_SUCCESS) return -1;
    *pFree = nFree;
    *pTotal = nTotal;
    return 0;
}

/* The allocation containing ptr (cuMemGetAddressRange), never traced. Returns 0 or -1. */
int vt__driver_address_range(uint64_t ptr, uint64_t *pBase, uint64_t *pSize)
{
    CUdeviceptr base = 0;
    size_t size = 0;
    CUresult r;
    if (!g_drv.xMemGetAddressRange) return -1;
    vt__t_inTracer++;
    r = g_drv.xMemGetAddressRange(&base, &size, (CUdeviceptr)ptr);
    vt__t_inTracer--;
    if (r != CUDA_SUCCESS) return -1;
    *pBase = base;
    *pSize = size;
    return 0;
}

/* Where an allocation handle's memory lives (its properties), never traced. Returns 0 or -1. */
int vt__driver_handle_location(uint64_t handle, int *pMemKind, int *pDevice)
{
    CUmemAllocationProp prop;
    CUresult r;
    if (!g_drv.xMemGetAllocationPropertiesFromHandle) return -1;
    memset(&prop, 0, sizeof prop);
    vt__t_inTracer++;
    r = g_drv.xMemGetAllocationPropertiesFromHandle(&prop, (CUmemGenericAllocationHandle)handle);
    vt__t_inTracer--;
    if (r != CUDA_SUCCESS) return -1;
    switch (prop.location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        *pMemKind = VT_MEMKIND_DEVICE;
        *pDevice = prop.location.id;
        return 0;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
        *pMemKind = VT_MEMKIND_PINNED;
        *pDevice = -1;
        return 0;
    default: return -1;
    }
}

void vt__driver_param_infos(struct vt__kparams_config *pKc)
{
    pKc->xFuncParamInfo = g_drv.xFuncGetParamInfo ? func_param_info : NULL;
    pKc->xKernelParamInfo = g_drv.xKernelGetParamInfo ? kernel_param_info : NULL;
    pKc->xStubParamInfo = g_drv.xRtFuncGetParamInfo ? stub_param_info : NULL;
}

void vt__driver_device_row(int dev, struct vt_hrec *pRec)
{
    CUdevice d;
    CUuuid uuid;
    size_t total = 0;
    int v = 0, clock = 0, width = 0;
    memset(pRec, 0, sizeof *pRec);
    pRec->type = VT_HREC_DEVICE;
    pRec->u.device.id = dev;
    pRec->u.device.pci_bus = pRec->u.device.pci_device = -1;
    vt__t_inTracer++;
    if (g_drv.xDeviceGet && g_drv.xDeviceGet(&d, dev) == CUDA_SUCCESS) {
        if (g_drv.xDeviceGetName &&
            g_drv.xDeviceGetName(pRec->u.device.zName, (int)sizeof pRec->u.device.zName - 1, d) != CUDA_SUCCESS)
            pRec->u.device.zName[0] = '\0';
        if (g_drv.xDeviceTotalMem && g_drv.xDeviceTotalMem(&total, d) == CUDA_SUCCESS)
            pRec->u.device.total_bytes = total;
        if (g_drv.xDeviceGetUuid && g_drv.xDeviceGetUuid(&uuid, d) == CUDA_SUCCESS) {
            /* nvidia-smi's form, GPU-8-4-4-4-12, as the DEVICE activity record path writes it */
            const unsigned char *b = (const unsigned char *)uuid.bytes;
            snprintf(pRec->u.device.zUuid, sizeof pRec->u.device.zUuid,
                     "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                     b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                     b[13], b[14], b[15]);
        }
        if (g_drv.xDeviceGetAttribute) {
#define ATTR(a, field) if (g_drv.xDeviceGetAttribute(&v, a, d) == CUDA_SUCCESS) pRec->u.device.field = v
            ATTR(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cc_major);
            ATTR(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cc_minor);
            ATTR(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, sm_count);
            ATTR(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, pci_bus);
            ATTR(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, pci_device);
#undef ATTR
            /* peak bandwidth, KB/s: clock (kHz) x 2 (double data rate) x bus width (bytes) */
            if (g_drv.xDeviceGetAttribute(&clock, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, d) == CUDA_SUCCESS &&
                g_drv.xDeviceGetAttribute(&width, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, d) == CUDA_SUCCESS &&
                clock > 0 && width > 0)
                pRec->u.device.bandwidth_kbps = (uint64_t)clock * 2 * (uint64_t)(width / 8);
        }
    }
    vt__t_inTracer--;
}
