/* phases: NVTX-marked train and validation phases; validation keeps its outputs, peaks higher. */
/*
 * Known answer (asserted by tests/gpu_verify.c, sample "phases"):
 *   - one "weights" buffer of 17 MiB (17,825,792 bytes), allocated first and
 *     freed last;
 *   - NVTX range "train" holding 5 nested ranges "iter 0" .. "iter 4"; each
 *     iteration allocates 3 activations of 8 MiB + 4096 * j bytes (j = 0..2),
 *     fills each with one vt_sample_fill launch, and frees them before its
 *     range ends: 15 allocations, 15 frees, 15 launches inside "train";
 *   - then NVTX range "validation" holding 6 nested ranges "batch 0" ..
 *     "batch 5"; each batch allocates one output of 10 MiB + 4096 * b bytes
 *     (b = 0..5), fills it, and keeps it alive until validation ends:
 *     6 allocations, 6 launches inside "validation", freed after it;
 *   - peak of the sample's own live device bytes: 43,003,904 during "train"
 *     (weights + 3 activations) and 80,801,792 during "validation" (weights
 *     + 6 outputs): validation exceeds training by 37,797,888 bytes.
 * vramtrace analyze finds the two phases from the NVTX ranges and reports a
 * validation spike: outputs accumulating batch by batch (kept alive, as a
 * missing torch.no_grad() or a list of outputs would do).
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

#define SAMPLE_NAME "phases"
#include "sample.cuh"

#define N_ITER 5
#define N_ACT 3
#define N_BATCH 6
#define MIB (1024ull * 1024ull)
#define WEIGHT_BYTES (17ull * MIB)

/* Allocate nByte device bytes, fill them with one kernel launch, return the buffer. */
static void *alloc_filled(size_t nByte, float v)
{
    void *p = NULL;
    CHECK(cudaMalloc(&p, nByte));
    vt_sample_fill<<<256, 256>>>((float *)p, nByte / sizeof(float), v);
    CHECK(cudaGetLastError());
    return p;
}

int main(void)
{
    void *pWeights, *apAct[N_ACT], *apOut[N_BATCH];
    unsigned long long nTrainPeak = WEIGHT_BYTES, nValPeak = WEIGHT_BYTES;
    char zName[32];
    int it, j, b;

    CHECK(cudaSetDevice(0));
    pWeights = alloc_filled(WEIGHT_BYTES, 0.5f);
    CHECK(cudaDeviceSynchronize());

    nvtxRangePushA("train");
    for (it = 0; it < N_ITER; it++) {
        snprintf(zName, sizeof zName, "iter %d", it);
        nvtxRangePushA(zName);
        for (j = 0; j < N_ACT; j++) apAct[j] = alloc_filled(8 * MIB + 4096ull * j, (float)it);
        /* Synchronize inside the range so the iteration's kernels run within it. */
        CHECK(cudaDeviceSynchronize());
        for (j = 0; j < N_ACT; j++) CHECK(cudaFree(apAct[j]));
        nvtxRangePop();
    }
    nvtxRangePop();
    for (j = 0; j < N_ACT; j++) nTrainPeak += 8 * MIB + 4096ull * j;

    nvtxRangePushA("validation");
    for (b = 0; b < N_BATCH; b++) {
        snprintf(zName, sizeof zName, "batch %d", b);
        nvtxRangePushA(zName);
        apOut[b] = alloc_filled(10 * MIB + 4096ull * b, (float)b); /* kept: the spike */
        nValPeak += 10 * MIB + 4096ull * b;
        CHECK(cudaDeviceSynchronize());
        nvtxRangePop();
    }
    nvtxRangePop();

    for (b = 0; b < N_BATCH; b++) CHECK(cudaFree(apOut[b]));
    CHECK(cudaFree(pWeights));
    printf("phases: train peak %llu bytes, validation peak %llu bytes (+%llu)\n", nTrainPeak,
           nValPeak, nValPeak - nTrainPeak);
    return 0;
}
