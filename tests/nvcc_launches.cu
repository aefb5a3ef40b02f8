// Kernels launched with <<<...>>>, compiled by the toolkit's nvcc for test_inject_cupti.
// nvcc 13 turns each launch into a host stub that calls __cudaLaunchKernel (or
// __cudaLaunchKernel_ptsz with --default-stream per-thread); the test links no CUDA
// runtime (-cudart none) and answers those calls itself, as CUPTI callbacks.

struct Span {
    float *p;
    long n;
};

__global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}

__global__ void fill(Span s, float v)
{
    if (threadIdx.x < s.n) s.p[threadIdx.x] = v;
}

__global__ void spin(int n)
{
    for (volatile int i = 0; i < n; i++) {
    }
}

// Three launches: axpy uses x and y, fill uses y (through a struct, on stream s),
// spin uses no allocation.
extern "C" void vt_nvcc_launch_all(float *x, float *y, cudaStream_t s)
{
    axpy<<<1, 32>>>(2.0f, x, y, 64);
    Span span = {y + 16, 4};
    fill<<<2, 64, 0, s>>>(span, 1.0f);
    spin<<<1, 1>>>(3);
}
