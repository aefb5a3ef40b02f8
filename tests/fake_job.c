/* A CUDA job without a GPU: loads CUDA_INJECTION64_PATH as the driver would and makes scripted CUDA calls. */
/*
 * Linked with -rdynamic over the scripted CUPTI of cupti_harness.h, so that `vramtrace record --
 * fake_job STEP...` runs the real libvramtrace.so end to end: the tracer finds this program's
 * CUPTI and driver functions, writes its trace where VRAMTRACE_OUTPUT says, and the job ends
 * as its steps say. Steps, in order:
 *   leak            a 1 MiB cudaMalloc never freed
 *   pairs=N         N cudaMalloc/cudaFree pairs of 4 KiB
 *   kernels=N       N kernels' activity records
 *   sleep=MS        sleep MS milliseconds
 *   exit=N          exit(N)
 *   kill=N          raise signal N
 *   fatal           CUPTI's fatal error now (CUPTI finalizes itself: the tracer must not call it again)
 *   fatal-at-close  CUPTI's fatal error inside the next forced flush (the one at exit: while the trace closes)
 * Exit status 90 when the library does not load or does not initialize, 91 for an unknown step.
 */
#define VT_INJECT_SO getenv("CUDA_INJECTION64_PATH")
#include "cupti_harness.h"

/* A cudaMalloc of nBytes at address a as CUPTI reports it (callbacks, MEMORY2 record); with bFree its cudaFree. */
static void alloc(uint64_t a, uint32_t corr, size_t nBytes, int bFree)
{
    CUpti_ActivityMemory4 m = memory_record(a, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, corr);
    void *p = NULL;
    cudaMalloc_v3020_params mp = {&p, nBytes};
    int st = 0;
    m.bytes = nBytes;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &mp, &st, corr);
    p = (void *)(uintptr_t)a;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &mp, &st, corr);
    fake_record(&m, sizeof m);
    if (bFree) {
        cudaFree_v3020_params fp = {p};
        call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &fp, 0, corr + 1);
        m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
        m.correlationId = corr + 1;
        m.timestamp = harness_now();
        fake_record(&m, sizeof m);
    }
}

int main(int argc, char **argv)
{
    uint32_t corr = 1000;
    uint64_t a = 0x700000000ull;
    int (*xInit)(void);
    const char *zLib = VT_INJECT_SO;
    (void)vt__test_main; /* the header's test runner: not this program's */
    if (!zLib || !(g_hLib = dlopen(zLib, RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "fake_job: cannot load the tracer: %s\n", zLib ? dlerror() : "CUDA_INJECTION64_PATH unset");
        return 90;
    }
    *(void **)&xInit = dlsym(g_hLib, "InitializeInjection");
    if (!xInit || xInit() != 1) return 90;
    for (int i = 1; i < argc; i++) {
        const char *z = argv[i];
        long n = strchr(z, '=') ? atol(strchr(z, '=') + 1) : 0;
        if (!strcmp(z, "leak")) {
            alloc(a, corr, 1 << 20, 0);
            a += 1 << 20;
            corr += 2;
        } else if (!strncmp(z, "pairs=", 6)) {
            for (long k = 0; k < n; k++, a += 4096, corr += 2) alloc(a, corr, 4096, 1);
        } else if (!strncmp(z, "kernels=", 8)) {
            for (long k = 0; k < n; k++) harness_kernel(corr++, "_Z6kernelPf");
        } else if (!strncmp(z, "sleep=", 6)) {
            usleep((useconds_t)n * 1000);
        } else if (!strncmp(z, "exit=", 5)) {
            exit((int)n);
        } else if (!strncmp(z, "kill=", 5)) {
            raise((int)n);
        } else if (!strcmp(z, "fatal")) {
            harness_fatal("device lost");
        } else if (!strcmp(z, "fatal-at-close")) {
            atomic_store(&g_bFatalInForced, 1);
        } else {
            fprintf(stderr, "fake_job: unknown step '%s'\n", z);
            return 91;
        }
    }
    return 0;
}
