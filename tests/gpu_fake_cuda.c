/* Test double of the CUDA driver (libcuda.so.1) for gpu_check's probe: cuInit, cuDeviceGetCount. */
#include <stdlib.h>

/* CUDA_SUCCESS, or CUDA_ERROR_NO_DEVICE (100) when VT_FAKE_CUINIT_FAIL is set. */
int cuInit(unsigned int flags)
{
    (void)flags;
    return getenv("VT_FAKE_CUINIT_FAIL") ? 100 : 0;
}

/* VT_FAKE_DEVICES devices (default 1). */
int cuDeviceGetCount(int *pCount)
{
    const char *z = getenv("VT_FAKE_DEVICES");
    *pCount = z ? atoi(z) : 1;
    return 0;
}
