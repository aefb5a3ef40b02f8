/* graphs: a captured CUDA graph with kernels, a memset and an allocation node, launched 3 times. */
/*
 * Known answer (asserted by tests/gpu_verify.c, sample "graphs"):
 *   - A (6 MiB + 4096: 6,295,552 bytes) allocated with cudaMalloc;
 *   - a stream capture records: vt_sample_fill(A), cudaMemsetAsync(A) of its
 *     6,295,552 bytes, cudaMallocAsync of T (5 MiB + 4096: 5,246,976 bytes,
 *     an allocation node), vt_sample_fill(T), cudaFreeAsync(T) (a free node);
 *   - the graph is instantiated and launched 3 times (cudaGraphLaunch), the
 *     stream synchronized after each; then one ordinary vt_sample_fill(A)
 *     launch outside the graph.
 * The trace holds 3 graph launches; 6 graph kernels (2 per launch) with
 * graph_id and graph_node_id, carrying their launch's correlation id, their
 * buffer uses unknown (args_scanned 0); 3 graph memsets with graph ids; the
 * allocation node's memory (MEMORY2 allocations of 5,246,976 bytes); and the
 * ordinary launch with args_scanned 1 and a use of A.
 * Facts: a.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SAMPLE_NAME "graphs"
#include "sample.cuh"

#define MIB (1024ull * 1024ull)
#define A_BYTES (6 * MIB + 4096)
#define T_BYTES (5 * MIB + 4096)
#define N_LAUNCH 3

int main(void)
{
    cudaStream_t s;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    float *a = NULL, *t = NULL;
    int i;

    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    CHECK(cudaMalloc((void **)&a, A_BYTES));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    vt_sample_fill<<<128, 256, 0, s>>>(a, A_BYTES / sizeof(float), 1.0f);
    CHECK(cudaMemsetAsync(a, 0, A_BYTES, s));
    CHECK(cudaMallocAsync((void **)&t, T_BYTES, s));
    vt_sample_fill<<<128, 256, 0, s>>>(t, T_BYTES / sizeof(float), 2.0f);
    CHECK(cudaFreeAsync(t, s));
    CHECK(cudaStreamEndCapture(s, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (i = 0; i < N_LAUNCH; i++) {
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaStreamSynchronize(s));
    }
    vt_sample_fill<<<128, 256>>>(a, A_BYTES / sizeof(float), 3.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaStreamDestroy(s));
    printf("vt-fact: a=0x%llx\n", (unsigned long long)(uintptr_t)a);
    CHECK(cudaFree(a));
    printf("graphs: one graph (2 kernels, a memset, an allocation and a free node) launched %d "
           "times, then one ordinary launch\n",
           N_LAUNCH);
    return 0;
}
