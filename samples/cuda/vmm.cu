/* vmm: virtual memory management through the driver API, as PyTorch's expandable segments do. */
/*
 * Known answer (asserted by tests/gpu_verify.c, sample "vmm"):
 *   with G the device's minimum allocation granularity (2 MiB on current GPUs),
 *   - 2 physical allocations with cuMemCreate: 3 * G and 5 * G bytes;
 *   - one virtual range of 8 * G bytes reserved with cuMemAddressReserve, the
 *     first handle mapped at its start and the second right after it
 *     (2 cuMemMap), made read-write with cuMemSetAccess, filled by one
 *     vt_sample_fill launch over the whole 8 * G bytes;
 *   - then 2 cuMemUnmap (same addresses and sizes), 2 cuMemRelease and one
 *     cuMemAddressFree: nothing is left mapped or allocated.
 * G, the range's address and the two handles are printed as "vt-fact:" lines.
 * vramtrace analyze counts mapped bytes as live between map and unmap (8 * G
 * at the peak) and reports no leak.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_NAME "vmm"
#include "sample.cuh"

/* Abort the sample with the failing driver call and its error name unless rc is CUDA_SUCCESS. */
#define CHECK_CU(call)                                                                     \
    do {                                                                                   \
        CUresult rc_ = (call);                                                             \
        if (rc_ != CUDA_SUCCESS) {                                                         \
            const char *zName_ = NULL;                                                     \
            cuGetErrorName(rc_, &zName_);                                                  \
            fprintf(stderr, "vmm: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,      \
                    zName_ ? zName_ : "unknown error");                                    \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

int main(void)
{
    CUmemAllocationProp prop;
    CUmemAccessDesc access;
    CUmemGenericAllocationHandle hFirst, hSecond;
    CUdeviceptr va = 0;
    size_t gran = 0, nFirst, nSecond;
    int vmmOk = 0;
    float check = 0.0f;

    /* The runtime creates and makes current the primary context the driver calls below use. */
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    CHECK_CU(cuDeviceGetAttribute(&vmmOk, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                                  0));
    if (!vmmOk) {
        fprintf(stderr, "vmm: device 0 does not support virtual memory management\n");
        return 1;
    }

    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CHECK_CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    nFirst = 3 * gran;
    nSecond = 5 * gran;

    CHECK_CU(cuMemCreate(&hFirst, nFirst, &prop, 0));
    CHECK_CU(cuMemCreate(&hSecond, nSecond, &prop, 0));
    CHECK_CU(cuMemAddressReserve(&va, nFirst + nSecond, 0, 0, 0));
    CHECK_CU(cuMemMap(va, nFirst, 0, hFirst, 0));
    CHECK_CU(cuMemMap(va + nFirst, nSecond, 0, hSecond, 0));
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK_CU(cuMemSetAccess(va, nFirst + nSecond, &access, 1));

    vt_sample_fill<<<256, 256>>>((float *)va, (nFirst + nSecond) / sizeof(float), 4.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(&check, (const char *)va + nFirst + nSecond - sizeof(float), sizeof check,
                     cudaMemcpyDeviceToHost));
    if (check != 4.0f) {
        fprintf(stderr, "vmm: mapped memory holds %g, expected 4\n", check);
        return 1;
    }

    printf("vt-fact: granularity=%llu\n", (unsigned long long)gran);
    printf("vt-fact: va=0x%llx\n", (unsigned long long)va);
    printf("vt-fact: handle_first=0x%llx\n", (unsigned long long)hFirst);
    printf("vt-fact: handle_second=0x%llx\n", (unsigned long long)hSecond);

    CHECK_CU(cuMemUnmap(va, nFirst));
    CHECK_CU(cuMemUnmap(va + nFirst, nSecond));
    CHECK_CU(cuMemRelease(hFirst));
    CHECK_CU(cuMemRelease(hSecond));
    CHECK_CU(cuMemAddressFree(va, nFirst + nSecond));
    printf("vmm: 2 cuMemCreate (%llu + %llu bytes) mapped into one %llu-byte range, unmapped "
           "and released\n",
           (unsigned long long)nFirst, (unsigned long long)nSecond,
           (unsigned long long)(nFirst + nSecond));
    return 0;
}
