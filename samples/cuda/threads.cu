/* threads: a pin-memory-like helper thread, NVTX ranges across threads, then the job is killed. */
/*
 * Known answer (asserted by tests/gpu_verify.c, sample "threads"):
 *   - the main thread allocates X and Y (4 MiB + 4096 each: 4,198,400 bytes),
 *     opens NVTX push/pop range "step" and inside it "forward", in which it
 *     launches vt_sample_fill(X) and vt_sample_axpy(X, Y) with kernel<<<...>>>
 *     (nvcc 13: __cudaLaunchKernel); it closes "forward", starts the
 *     start/end range "prefetch" and hands it to the helper thread;
 *   - the helper thread (like PyTorch's pin-memory thread) allocates 8 MiB +
 *     4096 (8,392,704 bytes) of pinned memory with cudaHostAlloc, copies 4 MiB
 *     + 4096 of it into Y (cudaMemcpy, HtoD), ends "prefetch" and then idles:
 *     it makes no other CUDA call, so its activity buffer never fills;
 *   - the main thread closes "step", synchronizes, prints its facts, sleeps
 *     3 s and kills itself with SIGKILL: no exit handler runs.
 * The trace (written while the job ran, every VRAMTRACE_FLUSH_MS) still holds
 * the helper thread's allocation and copy, joined to its calls by thread id;
 * "step" at depth 0, "forward" at depth 1, "prefetch" a start/end range that
 * ended on the helper thread; the buffer uses of both launches (X; X and Y).
 * Facts: main_tid, helper_tid, x, y, pinned.
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SAMPLE_NAME "threads"
#include "sample.cuh"

#define MIB (1024ull * 1024ull)
#define XY_BYTES (4 * MIB + 4096)
#define PINNED_BYTES (8 * MIB + 4096)

/* y = a x + y over n floats. */
__global__ void vt_sample_axpy(const float *x, float *y, size_t n, float a)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

struct helper {
    nvtxRangeId_t prefetch; /* the range the helper ends */
    float *y;
    void *pinned;
    long tid;
    int done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* The pin-memory-like thread: one pinned allocation and one copy, then nothing. */
static void *helper_main(void *pArg)
{
    struct helper *h = (struct helper *)pArg;
    h->tid = (long)gettid();
    CHECK(cudaHostAlloc(&h->pinned, PINNED_BYTES, cudaHostAllocDefault));
    CHECK(cudaMemcpy(h->y, h->pinned, XY_BYTES, cudaMemcpyHostToDevice));
    nvtxRangeEnd(h->prefetch);
    pthread_mutex_lock(&h->mu);
    h->done = 1;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
    for (;;) pause(); /* idle until the process dies */
    return NULL;
}

int main(void)
{
    struct helper h;
    pthread_t th;
    float *x = NULL, *y = NULL;
    size_t n = XY_BYTES / sizeof(float);

    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    CHECK(cudaMalloc((void **)&x, XY_BYTES));
    CHECK(cudaMalloc((void **)&y, XY_BYTES));
    nvtxRangePushA("step");
    nvtxRangePushA("forward");
    vt_sample_fill<<<256, 256>>>(x, n, 1.0f);
    vt_sample_axpy<<<256, 256>>>(x, y, n, 2.0f);
    CHECK(cudaGetLastError());
    nvtxRangePop();
    h.prefetch = nvtxRangeStartA("prefetch");
    h.y = y;
    h.pinned = NULL;
    h.done = 0;
    pthread_mutex_init(&h.mu, NULL);
    pthread_cond_init(&h.cv, NULL);
    if (pthread_create(&th, NULL, helper_main, &h) != 0) {
        fprintf(stderr, "threads: cannot start the helper thread\n");
        return 1;
    }
    pthread_mutex_lock(&h.mu);
    while (!h.done) pthread_cond_wait(&h.cv, &h.mu);
    pthread_mutex_unlock(&h.mu);
    nvtxRangePop();
    CHECK(cudaDeviceSynchronize());

    printf("vt-fact: main_tid=%ld\n", (long)gettid());
    printf("vt-fact: helper_tid=%ld\n", h.tid);
    printf("vt-fact: x=0x%llx\n", (unsigned long long)(uintptr_t)x);
    printf("vt-fact: y=0x%llx\n", (unsigned long long)(uintptr_t)y);
    printf("vt-fact: pinned=0x%llx\n", (unsigned long long)(uintptr_t)h.pinned);
    printf("threads: helper thread idle, killing the job in 3 s\n");
    fflush(stdout);
    sleep(3); /* the tracer's flush thread delivers every thread's records meanwhile */
    kill(getpid(), SIGKILL);
    return 1; /* not reached */
}
