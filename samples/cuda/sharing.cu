/* sharing: physical memory mapped twice through an exported and re-imported handle, IPC, host VMM. */
/*
 * Known answer (asserted by tests/gpu_verify.c, sample "sharing"):
 *   with G the device's minimum allocation granularity,
 *   - one cuMemCreate of 2 G bytes on device 0, exportable as a POSIX file
 *     descriptor; a 4 G virtual range reserved; the handle mapped at its
 *     start and made read-write (cuMemSetAccess); filled by one launch;
 *   - the handle exported (cuMemExportToShareableHandle) and imported again
 *     (cuMemImportFromShareableHandle: a second handle to the same memory),
 *     mapped at the range's second half, made read-write, filled;
 *   - both mappings unmapped, both handles released, the range freed;
 *   - B (3 MiB + 4096: 3,149,824 bytes) allocated with cudaMalloc, its IPC
 *     handle taken and opened in this same process (cudaIpcOpenMemHandle:
 *     CUDA may refuse that; the status is printed) and closed if it opened;
 *   - where the device supports host-NUMA VMM locations, one cuMemCreate of
 *     G bytes in host memory (NUMA node of the device), released.
 * The physical memory is counted once: one vmm_create of 2 G on device 0
 * (pinned with device NULL for the host one), the import row of the second
 * handle (address = that handle, bytes unknown) and its release an
 * import_close; maps carry their handle; cuMemSetAccess twice as api_call
 * rows; the IPC open an import row with B's bytes and its close an
 * import_close, or (refused) a failed api_call with no import and no OOM.
 * Facts: granularity, va, handle, imported, b, ipc_status, ipc_ptr, host_vmm, host_handle.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAMPLE_NAME "sharing"
#include "sample.cuh"

#define MIB (1024ull * 1024ull)
#define B_BYTES (3 * MIB + 4096)

/* Abort the sample with the failing driver call and its error name unless rc is CUDA_SUCCESS. */
#define CHECK_CU(call)                                                                     \
    do {                                                                                   \
        CUresult rc_ = (call);                                                             \
        if (rc_ != CUDA_SUCCESS) {                                                         \
            const char *zName_ = NULL;                                                     \
            cuGetErrorName(rc_, &zName_);                                                  \
            fprintf(stderr, "sharing: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,  \
                    zName_ ? zName_ : "unknown error");                                    \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* Make [va, va + n) read-write on device 0. */
static void grant(CUdeviceptr va, size_t n)
{
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK_CU(cuMemSetAccess(va, n, &access, 1));
}

int main(void)
{
    CUmemAllocationProp prop;
    CUmemGenericAllocationHandle h = 0, hImported = 0, hHost = 0;
    CUdeviceptr va = 0;
    cudaIpcMemHandle_t ipc;
    size_t gran = 0;
    void *b = NULL, *pIpc = NULL;
    int ok = 0, fd = -1, hostVmm = 0;
    cudaError_t ipcStatus;

    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    CHECK_CU(cuDeviceGetAttribute(&ok, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0));
    if (!ok) {
        fprintf(stderr, "sharing: device 0 cannot export VMM memory as a file descriptor\n");
        return 1;
    }
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CHECK_CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));

    CHECK_CU(cuMemCreate(&h, 2 * gran, &prop, 0));
    CHECK_CU(cuMemAddressReserve(&va, 4 * gran, 0, 0, 0));
    CHECK_CU(cuMemMap(va, 2 * gran, 0, h, 0));
    grant(va, 2 * gran);
    vt_sample_fill<<<128, 256>>>((float *)va, 2 * gran / sizeof(float), 1.0f);
    CHECK(cudaGetLastError());

    /* the same memory, through a handle exported and imported again */
    CHECK_CU(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CHECK_CU(cuMemImportFromShareableHandle(&hImported, (void *)(uintptr_t)fd,
                                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    CHECK_CU(cuMemMap(va + 2 * gran, 2 * gran, 0, hImported, 0));
    grant(va + 2 * gran, 2 * gran);
    vt_sample_fill<<<128, 256>>>((float *)(va + 2 * gran), 2 * gran / sizeof(float), 2.0f);
    CHECK(cudaDeviceSynchronize());
    CHECK_CU(cuMemUnmap(va, 2 * gran));
    CHECK_CU(cuMemUnmap(va + 2 * gran, 2 * gran));
    CHECK_CU(cuMemRelease(hImported));
    CHECK_CU(cuMemRelease(h));
    CHECK_CU(cuMemAddressFree(va, 4 * gran));
    close(fd);

    /* IPC within one process */
    CHECK(cudaMalloc(&b, B_BYTES));
    CHECK(cudaIpcGetMemHandle(&ipc, b));
    ipcStatus = cudaIpcOpenMemHandle(&pIpc, ipc, cudaIpcMemLazyEnablePeerAccess);
    if (ipcStatus == cudaSuccess) CHECK(cudaIpcCloseMemHandle(pIpc));
    else (void)cudaGetLastError(); /* not sticky: clear it */
    CHECK(cudaFree(b));

    /* physical memory in host memory, where supported */
    CHECK_CU(cuDeviceGetAttribute(&hostVmm, CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
    if (hostVmm) {
        int numa = 0;
        CHECK_CU(cuDeviceGetAttribute(&numa, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0));
        prop.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
        prop.location.id = numa < 0 ? 0 : numa;
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
        if (cuMemCreate(&hHost, gran, &prop, 0) == CUDA_SUCCESS) CHECK_CU(cuMemRelease(hHost));
        else hostVmm = 0;
    }

    printf("vt-fact: granularity=%llu\n", (unsigned long long)gran);
    printf("vt-fact: va=0x%llx\n", (unsigned long long)va);
    printf("vt-fact: handle=0x%llx\n", (unsigned long long)h);
    printf("vt-fact: imported=0x%llx\n", (unsigned long long)hImported);
    printf("vt-fact: b=0x%llx\n", (unsigned long long)(uintptr_t)b);
    printf("vt-fact: ipc_status=%d\n", (int)ipcStatus);
    printf("vt-fact: ipc_ptr=0x%llx\n", (unsigned long long)(uintptr_t)pIpc);
    printf("vt-fact: host_vmm=%d\n", hostVmm);
    printf("vt-fact: host_handle=0x%llx\n", (unsigned long long)hHost);
    printf("sharing: 2G created once, mapped twice (directly and re-imported), IPC status %d, "
           "host VMM %s\n",
           (int)ipcStatus, hostVmm ? "tried" : "not supported");
    return 0;
}
