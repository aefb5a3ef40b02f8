/* Shared by the CUDA samples: the runtime error check and the fill kernel. */
#ifndef VT_SAMPLE_CUH
#define VT_SAMPLE_CUH

/* Each sample defines SAMPLE_NAME (its name, a string literal) before including this. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

/* Abort the sample with the failing runtime call and CUDA's message unless rc is cudaSuccess. */
#define CHECK(call)                                                                         \
    do {                                                                                    \
        cudaError_t rc_ = (call);                                                           \
        if (rc_ != cudaSuccess) {                                                           \
            fprintf(stderr, SAMPLE_NAME ": %s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(rc_));                                               \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

/* Write v into n floats at p (grid-stride loop). */
__global__ void vt_sample_fill(float *p, size_t n, float v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

#endif
