/* copies: equal host<->device copies from pageable (malloc) and pinned (cudaMallocHost) memory. */
/*
 * Known answer (asserted by tests/gpu_verify.c, sample "copies"):
 *   - one device buffer (cudaMalloc) and one pinned host buffer (cudaMallocHost)
 *     of COPY_BYTES = 24 MiB + 12288 = 25,178,112 bytes each, both freed;
 *   - one pageable host buffer (malloc) of the same size;
 *   - 5 cudaMemcpy HtoD from the pageable buffer, then 5 DtoH into it,
 *     then 5 HtoD from the pinned buffer, then 5 DtoH into it:
 *     20 copies of exactly COPY_BYTES, 10 with a pageable host side.
 * The sample prints the buffer addresses as "vt-fact:" lines and the bandwidth
 * it measured for each of the four groups (pinned is usually 2-3x faster).
 * vramtrace analyze reports a transfer finding: 10 pageable copies,
 * 251,781,120 bytes, with the bandwidth achieved against the pinned copies.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_NAME "copies"
#include "sample.cuh"

#define COPY_BYTES (24ull * 1024ull * 1024ull + 12288ull)
#define N_REPEAT 5

/*
 * Copy COPY_BYTES from pSrc to pDst N_REPEAT times with cudaMemcpy of the given
 * kind; returns the bandwidth achieved in GB/s (timed with CUDA events).
 */
static double timed_copies(void *pDst, const void *pSrc, cudaMemcpyKind kind)
{
    cudaEvent_t evStart, evEnd;
    float ms = 0.0f;
    int i;
    CHECK(cudaEventCreate(&evStart));
    CHECK(cudaEventCreate(&evEnd));
    CHECK(cudaEventRecord(evStart, 0));
    for (i = 0; i < N_REPEAT; i++) CHECK(cudaMemcpy(pDst, pSrc, COPY_BYTES, kind));
    CHECK(cudaEventRecord(evEnd, 0));
    CHECK(cudaEventSynchronize(evEnd));
    CHECK(cudaEventElapsedTime(&ms, evStart, evEnd));
    CHECK(cudaEventDestroy(evStart));
    CHECK(cudaEventDestroy(evEnd));
    return ms > 0.0f ? (double)COPY_BYTES * N_REPEAT / (ms * 1e6) : 0.0;
}

int main(void)
{
    void *pDevice = NULL, *pPinned = NULL;
    void *pPageable;
    double gbPageableHtoD, gbPageableDtoH, gbPinnedHtoD, gbPinnedDtoH;

    CHECK(cudaSetDevice(0));
    pPageable = malloc(COPY_BYTES);
    if (!pPageable) {
        fprintf(stderr, "copies: out of host memory\n");
        return 1;
    }
    memset(pPageable, 1, COPY_BYTES);
    CHECK(cudaMallocHost(&pPinned, COPY_BYTES));
    memset(pPinned, 2, COPY_BYTES);
    CHECK(cudaMalloc(&pDevice, COPY_BYTES));

    gbPageableHtoD = timed_copies(pDevice, pPageable, cudaMemcpyHostToDevice);
    gbPageableDtoH = timed_copies(pPageable, pDevice, cudaMemcpyDeviceToHost);
    gbPinnedHtoD = timed_copies(pDevice, pPinned, cudaMemcpyHostToDevice);
    gbPinnedDtoH = timed_copies(pPinned, pDevice, cudaMemcpyDeviceToHost);
    if (((unsigned char *)pPinned)[COPY_BYTES - 1] != 2) {
        fprintf(stderr, "copies: data did not survive the round trip\n");
        return 1;
    }

    printf("vt-fact: pageable=0x%llx\n", (unsigned long long)(uintptr_t)pPageable);
    printf("vt-fact: pinned=0x%llx\n", (unsigned long long)(uintptr_t)pPinned);
    printf("vt-fact: device=0x%llx\n", (unsigned long long)(uintptr_t)pDevice);
    printf("bandwidth GB/s: pageable HtoD %.2f, DtoH %.2f; pinned HtoD %.2f, DtoH %.2f\n",
           gbPageableHtoD, gbPageableDtoH, gbPinnedHtoD, gbPinnedDtoH);

    CHECK(cudaFree(pDevice));
    CHECK(cudaFreeHost(pPinned));
    free(pPageable);
    printf("copies: %d HtoD + %d DtoH of %llu bytes from pageable, the same from pinned\n",
           N_REPEAT, N_REPEAT, COPY_BYTES);
    return 0;
}
