/* A stand-in CUDA runtime library (built as libcudart.so.12): its version, as a CUDA 12.6 job's libcudart reports it. */
int cudaRuntimeGetVersion(int *pVersion);

/* CUDA 12.6's runtime version. Returns 0 (cudaSuccess). */
__attribute__((visibility("default"))) int cudaRuntimeGetVersion(int *pVersion)
{
    *pVersion = 12060;
    return 0;
}
