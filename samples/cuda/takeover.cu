/* takeover: another CUPTI client registers its own activity buffers in the middle of the job. */
/*
 * Known answer (asserted by tests/gpu_verify.c, sample "takeover"; run with
 * VRAMTRACE_FLUSH_MS=100, as tests/gpu_verify.c asks gpu_check to):
 *   - one cudaMalloc of 2 MiB + 4096 (2,101,248 bytes), filled, freed; then
 *     2 s of nothing, so the tracer receives its records;
 *   - then the program does what torch.profiler (Kineto) does when it starts:
 *     cuptiActivityRegisterCallbacks with callbacks of its own, in the
 *     libcupti.so.13 already loaded (the tracer's);
 *   - then 40 rounds, 100 ms apart, of cudaMalloc of 1 MiB + 4096 i bytes
 *     (i = 0..39), a fill, cudaFree.
 * The trace holds the first allocation (a MEMORY2 row) and all 41 cudaMalloc
 * API calls; it says the buffers were taken over (meta cupti_takeover_ns,
 * after the first allocation), and hardly any of the 40 later allocations has
 * its MEMORY2 row (those were handed to the other client).
 * Facts: other_records (activity records the program's own callbacks got).
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SAMPLE_NAME "takeover"
#include "sample.cuh"

#define MIB (1024ull * 1024ull)
#define N_ROUND 40

typedef void (*request_fn)(uint8_t **, size_t *, size_t *);
typedef void (*complete_fn)(void *, uint32_t, uint8_t *, size_t, size_t);
typedef int (*register_fn)(request_fn, complete_fn);
typedef int (*next_fn)(uint8_t *, size_t, void **);

static next_fn xNext;
static unsigned long nOtherRecords;

/* The other client's buffer callbacks, as a profiler's would be. */
static void other_request(uint8_t **ppBuf, size_t *pSize, size_t *pMax)
{
    *pSize = 1 << 20;
    *ppBuf = (uint8_t *)aligned_alloc(8, *pSize);
    *pMax = 0;
}

static void other_complete(void *ctx, uint32_t stream, uint8_t *pBuf, size_t size, size_t valid)
{
    void *pRec = NULL;
    (void)ctx, (void)stream, (void)size;
    while (xNext && xNext(pBuf, valid, &pRec) == 0) nOtherRecords++;
    free(pBuf);
}

/* Allocate, fill and free nByte bytes. */
static void round_trip(size_t nByte)
{
    float *p = NULL;
    CHECK(cudaMalloc((void **)&p, nByte));
    vt_sample_fill<<<64, 256>>>(p, nByte / sizeof(float), 1.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(p));
}

int main(void)
{
    void *hCupti;
    register_fn xRegister;
    int i;

    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    round_trip(2 * MIB + 4096);
    sleep(2);
    hCupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    xRegister = hCupti ? (register_fn)dlsym(hCupti, "cuptiActivityRegisterCallbacks") : NULL;
    xNext = hCupti ? (next_fn)dlsym(hCupti, "cuptiActivityGetNextRecord") : NULL;
    if (!xRegister || !xNext || xRegister(other_request, other_complete) != 0) {
        fprintf(stderr, "takeover: no libcupti.so.13 loaded in this process to register with\n");
        return 1;
    }
    for (i = 0; i < N_ROUND; i++) {
        round_trip(MIB + 4096 * (size_t)i);
        usleep(100 * 1000);
    }
    printf("vt-fact: other_records=%lu\n", nOtherRecords);
    printf("takeover: %d rounds after another client registered its activity buffers\n", N_ROUND);
    return 0;
}
