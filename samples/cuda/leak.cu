/* leak: allocates device buffers it never frees, beside buffers it frees correctly. */
/*
 * Known answer (asserted by tests/gpu_verify.c, sample "leak"):
 *   - 8 device allocations (cudaMalloc) of 3 MiB + 4096 * i bytes, i = 0..7,
 *     25,280,512 bytes in all, never freed;
 *   - 4 device allocations of 5 MiB + 4096 * j bytes, j = 0..3, each freed
 *     with cudaFree;
 *   - 12 launches of the kernel vt_sample_fill, one per buffer.
 * vramtrace analyze reports one leak finding: 8 allocations, 25,280,512 bytes,
 * all from the call site in main() below.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define SAMPLE_NAME "leak"
#include "sample.cuh"

#define N_LEAKED 8
#define N_FREED 4
#define MIB (1024ull * 1024ull)

/* Launch vt_sample_fill over a buffer of nByte bytes and check the launch. */
static void fill(void *p, size_t nByte, float v)
{
    vt_sample_fill<<<256, 256>>>((float *)p, nByte / sizeof(float), v);
    CHECK(cudaGetLastError());
}

int main(void)
{
    void *apLeak[N_LEAKED];
    unsigned long long nLeaked = 0;
    int i;

    CHECK(cudaSetDevice(0));
    for (i = 0; i < N_LEAKED; i++) {
        size_t nByte = 3 * MIB + 4096ull * i;
        CHECK(cudaMalloc(&apLeak[i], nByte));
        fill(apLeak[i], nByte, (float)i);
        nLeaked += nByte;
    }
    for (i = 0; i < N_FREED; i++) {
        size_t nByte = 5 * MIB + 4096ull * i;
        void *p = NULL;
        CHECK(cudaMalloc(&p, nByte));
        fill(p, nByte, (float)i);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaFree(p));
    }
    CHECK(cudaDeviceSynchronize());
    printf("leak: %d buffers x (3 MiB + 4096*i) never freed, %llu bytes; %d buffers freed\n",
           N_LEAKED, nLeaked, N_FREED);
    return 0; /* apLeak[] is never freed: that is the point of this sample */
}
