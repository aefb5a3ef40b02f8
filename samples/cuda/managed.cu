/* managed: unified memory (cudaMallocManaged) touched by the host and by a kernel, then freed. */
/*
 * Known answer (asserted by tests/gpu_verify.c, sample "managed"):
 *   - 3 managed allocations (cudaMallocManaged, cudaMemAttachGlobal) of
 *     13 MiB + 4096 * i bytes, i = 0..2, each written by the host, filled by
 *     one vt_sample_fill launch, read back by the host, and freed;
 *   - no device (non-managed) allocation is made by the sample.
 * vramtrace analyze reports no leak; the managed bytes appear on the managed
 * memory timeline (39 MiB + 12,288 bytes at the peak).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define SAMPLE_NAME "managed"
#include "sample.cuh"

#define N_MANAGED 3
#define MIB (1024ull * 1024ull)

int main(void)
{
    float *ap[N_MANAGED];
    int managedOk = 0, i;

    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceGetAttribute(&managedOk, cudaDevAttrManagedMemory, 0));
    if (!managedOk) {
        fprintf(stderr, "managed: device 0 does not support managed memory\n");
        return 1;
    }
    for (i = 0; i < N_MANAGED; i++) {
        size_t nByte = 13 * MIB + 4096ull * i, n = nByte / sizeof(float);
        CHECK(cudaMallocManaged((void **)&ap[i], nByte, cudaMemAttachGlobal));
        ap[i][0] = -1.0f; /* first touch on the host */
        vt_sample_fill<<<256, 256>>>(ap[i], n, (float)(i + 1));
        CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());
    for (i = 0; i < N_MANAGED; i++) {
        size_t n = (13 * MIB + 4096ull * i) / sizeof(float);
        if (ap[i][0] != (float)(i + 1) || ap[i][n - 1] != (float)(i + 1)) {
            fprintf(stderr, "managed: buffer %d holds %g, expected %d\n", i, ap[i][0], i + 1);
            return 1;
        }
        CHECK(cudaFree(ap[i]));
    }
    printf("managed: %d managed allocations (13 MiB + 4096*i) used by host and device, all "
           "freed\n",
           N_MANAGED);
    return 0;
}
