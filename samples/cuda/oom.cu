/* oom: asks cudaMalloc for more than the device has, clears the error, and carries on. */
/*
 * Known answer (asserted by tests/gpu_verify.c, sample "oom"):
 *   - exactly one failed allocation: cudaMalloc of (total device memory + 1 GiB)
 *     bytes, returning cudaErrorMemoryAllocation (2); the request and the total
 *     are printed as "vt-fact:" lines;
 *   - no memory is allocated by that call;
 *   - afterwards 4 device allocations of 7 MiB + 4096 * i bytes, i = 0..3, each
 *     filled by one vt_sample_fill launch and freed.
 * vramtrace analyze reports one OOM finding with the requested bytes, the free
 * and total bytes at that moment, and what was live then (nothing of the
 * sample's own: the request alone exceeds the device).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define SAMPLE_NAME "oom"
#include "sample.cuh"

#define N_AFTER 4
#define MIB (1024ull * 1024ull)
#define GIB (1024ull * MIB)

int main(void)
{
    size_t nFree = 0, nTotal = 0, nRequest;
    void *p = NULL;
    cudaError_t rc;
    int i;

    CHECK(cudaSetDevice(0));
    CHECK(cudaMemGetInfo(&nFree, &nTotal));
    nRequest = nTotal + GIB;
    printf("vt-fact: total=%llu\n", (unsigned long long)nTotal);
    printf("vt-fact: request=%llu\n", (unsigned long long)nRequest);

    rc = cudaMalloc(&p, nRequest);
    if (rc != cudaErrorMemoryAllocation) {
        fprintf(stderr,
                "oom: cudaMalloc(%llu) returned %d (%s), expected cudaErrorMemoryAllocation\n",
                (unsigned long long)nRequest, (int)rc, cudaGetErrorString(rc));
        if (rc == cudaSuccess) cudaFree(p);
        return 1;
    }
    /* An allocation failure is not sticky: reading it clears it, and the context stays usable. */
    rc = cudaGetLastError();
    if (rc != cudaErrorMemoryAllocation) {
        fprintf(stderr, "oom: cudaGetLastError returned %d, expected %d\n", (int)rc,
                (int)cudaErrorMemoryAllocation);
        return 1;
    }
    CHECK(cudaGetLastError());

    for (i = 0; i < N_AFTER; i++) {
        size_t nByte = 7 * MIB + 4096ull * i;
        CHECK(cudaMalloc(&p, nByte));
        vt_sample_fill<<<256, 256>>>((float *)p, nByte / sizeof(float), 1.0f);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaFree(p));
    }
    printf("oom: 1 failed cudaMalloc of %llu bytes (device has %llu, %llu free), then %d "
           "allocations that succeeded and were freed\n",
           (unsigned long long)nRequest, (unsigned long long)nTotal, (unsigned long long)nFree,
           N_AFTER);
    return 0;
}
