/* pool: stream-ordered allocations from the device's default pool and from an explicit pool. */
/*
 * Known answer (asserted by tests/gpu_verify.c, sample "pool"):
 *   - 6 cudaMallocAsync allocations of 9 MiB + 4096 * i bytes (i = 0..5) from the
 *     device's default pool on one stream, each filled once, then 6 cudaFreeAsync;
 *   - one explicit pool created with cudaMemPoolCreate on device 0, its release
 *     threshold set to 64 MiB (67,108,864 bytes), 4 cudaMallocFromPoolAsync
 *     allocations of 11 MiB + 4096 * j bytes (j = 0..3) from it on the same
 *     stream, filled, then 4 cudaFreeAsync; the pool is then trimmed to 0 bytes
 *     and destroyed;
 *   - all 10 allocations are stream-ordered (is_async = 1) device memory, freed.
 * vramtrace analyze reports no leak for this sample; its memory timeline shows
 * the two bursts, 54 MiB + 61,440 bytes then 44 MiB + 24,576 bytes live.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_NAME "pool"
#include "sample.cuh"

#define N_DEFAULT 6
#define N_EXPLICIT 4
#define MIB (1024ull * 1024ull)
#define RELEASE_THRESHOLD (64ull * MIB)

/* Launch vt_sample_fill on stream s over nByte bytes at p and check the launch. */
static void fill(void *p, size_t nByte, cudaStream_t s)
{
    vt_sample_fill<<<256, 256, 0, s>>>((float *)p, nByte / sizeof(float), 3.0f);
    CHECK(cudaGetLastError());
}

int main(void)
{
    void *apDefault[N_DEFAULT], *apExplicit[N_EXPLICIT];
    cudaStream_t stream;
    cudaMemPool_t pool;
    cudaMemPoolProps props;
    uint64_t threshold = RELEASE_THRESHOLD, readBack = 0; /* the attribute is a cuuint64_t */
    int supported = 0, i;

    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0));
    if (!supported) {
        fprintf(stderr, "pool: device 0 does not support stream-ordered memory pools\n");
        return 1;
    }
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    /* Burst 1: the default pool. */
    for (i = 0; i < N_DEFAULT; i++) {
        size_t nByte = 9 * MIB + 4096ull * i;
        CHECK(cudaMallocAsync(&apDefault[i], nByte, stream));
        fill(apDefault[i], nByte, stream);
    }
    for (i = 0; i < N_DEFAULT; i++) CHECK(cudaFreeAsync(apDefault[i], stream));
    CHECK(cudaStreamSynchronize(stream));

    /* Burst 2: an explicit pool with a release threshold. */
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    CHECK(cudaMemPoolCreate(&pool, &props));
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &readBack));
    if (readBack != threshold) {
        fprintf(stderr, "pool: release threshold reads back as %llu\n",
                (unsigned long long)readBack);
        return 1;
    }
    for (i = 0; i < N_EXPLICIT; i++) {
        size_t nByte = 11 * MIB + 4096ull * i;
        CHECK(cudaMallocFromPoolAsync(&apExplicit[i], nByte, pool, stream));
        fill(apExplicit[i], nByte, stream);
    }
    for (i = 0; i < N_EXPLICIT; i++) CHECK(cudaFreeAsync(apExplicit[i], stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaMemPoolTrimTo(pool, 0));
    CHECK(cudaMemPoolDestroy(pool));
    CHECK(cudaStreamDestroy(stream));

    printf("pool: %d async allocations (9 MiB + 4096*i) from the default pool, %d (11 MiB + "
           "4096*j) from an explicit pool with a %llu-byte release threshold, all freed\n",
           N_DEFAULT, N_EXPLICIT, RELEASE_THRESHOLD);
    return 0;
}
