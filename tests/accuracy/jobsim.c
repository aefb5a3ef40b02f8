/* A CUDA process as the tracer sees it: allocator, copies, launches and NVTX written as trace rows. */
#include "jobsim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace/schema.h"

#define KiB ((int64_t)1 << 10)
#define H100_TOTAL 85029158912LL  /* NVIDIA H100 80GB HBM3, as cuMemGetInfo reports it */
#define NPOOL 4                   /* small, large; the same in a CUDA graph's private pool */
#define CTX_BYTES (512 * MiB)     /* a CUDA context's own memory: never an allocation record */
#define USES_MAX 64               /* buffer uses stored per launch (tracer/inject.c) */
#define STREAM 7                  /* CUPTI's id of the legacy default stream */
#define POOL_SMALL 0
#define POOL_LARGE 1
#define LAUNCH_CPU_NS 9000        /* eager PyTorch: Python, dispatcher and launch per operator */
#define NVTX_MAX 16

/* ---- GPUs ---- */

/*
 * Host links as PyTorch jobs measure them (torch.cuda copy benchmarks, NVIDIA's bandwidthTest):
 * pinned host-to-device copies reach most of the link (PCIe 3 x16 about 12 GB/s, PCIe 4 x16
 * about 25, PCIe 5 x16 about 50); pageable ones are staged through a pinned bounce buffer by the
 * driver and reach a third to a half of that, depending on the host's memory.
 */
const struct js_gpu js_aGpu[] = {
    {"NVIDIA H100 80GB HBM3", H100_TOTAL, 9, 0, 132, 3352320000LL, 45.0, 12.0},
    {"NVIDIA A100-SXM4-80GB", 85097971712LL, 8, 0, 108, 2039000000LL, 24.0, 10.0},
    {"NVIDIA A100-PCIE-40GB", 42298834944LL, 8, 0, 108, 1555000000LL, 24.0, 9.5},
    {"NVIDIA L4", 23580639232LL, 8, 9, 58, 300000000LL, 24.0, 9.0},
    {"NVIDIA GeForce RTX 4090", 25386352640LL, 8, 9, 128, 1008000000LL, 24.0, 11.0},
    {"Tesla V100-SXM2-32GB", 34089730048LL, 7, 0, 80, 898000000LL, 12.0, 6.5},
};
const int js_nGpu = (int)(sizeof js_aGpu / sizeof js_aGpu[0]);

/* ---- kernel sequences of real steps (kernels.tsv) ---- */

struct kseq {
    char zTag[32];
    int n, nAlloc;
    char *aRole;
    int *aDur, *aGrid, *aBlock, *aName;
};
static char **azName;  /* 1-based */
static int nName;
static struct kseq aSeq[8];
static int nSeq;

/* Append one step entry to the sequence tagged zTag. Returns 0 or -1 (out of memory or too many). */
static int seq_add(const char *zTag, char role, int dur, int grid, int block, int name)
{
    struct kseq *s = NULL;
    for (int i = 0; i < nSeq; i++)
        if (!strcmp(aSeq[i].zTag, zTag)) s = &aSeq[i];
    if (!s) {
        if (nSeq == (int)(sizeof aSeq / sizeof aSeq[0])) return -1;
        s = &aSeq[nSeq++];
        snprintf(s->zTag, sizeof s->zTag, "%.31s", zTag);
    }
    if (s->n == s->nAlloc) {
        int nNew = s->nAlloc ? 2 * s->nAlloc : 1024;
        char *aRole = realloc(s->aRole, (size_t)nNew);
        if (aRole) s->aRole = aRole;
        int *a1 = realloc(s->aDur, sizeof(int) * (size_t)nNew);
        if (a1) s->aDur = a1;
        int *a2 = realloc(s->aGrid, sizeof(int) * (size_t)nNew);
        if (a2) s->aGrid = a2;
        int *a3 = realloc(s->aBlock, sizeof(int) * (size_t)nNew);
        if (a3) s->aBlock = a3;
        int *a4 = realloc(s->aName, sizeof(int) * (size_t)nNew);
        if (a4) s->aName = a4;
        if (!aRole || !a1 || !a2 || !a3 || !a4) return -1;
        s->nAlloc = nNew;
    }
    s->aRole[s->n] = role;
    s->aDur[s->n] = dur;
    s->aGrid[s->n] = grid;
    s->aBlock[s->n] = block;
    s->aName[s->n] = name;
    s->n++;
    return 0;
}

int js_load_kernels(const char *zPath)
{
    FILE *f = fopen(zPath, "r");
    char zLine[8192];
    int rc = 0;
    if (!f) {
        fprintf(stderr, "accgen: cannot open %s\n", zPath);
        return -1;
    }
    while (rc == 0 && fgets(zLine, sizeof zLine, f)) {
        char *z = zLine, *zTag, *zEnd;
        size_t n = strlen(zLine);
        if (n && zLine[n - 1] == '\n') zLine[--n] = 0;
        if (zLine[0] == 'N' && zLine[1] == '\t') {
            int id = (int)strtol(z + 2, &zEnd, 10);
            if (*zEnd != '\t' || id != nName + 1) { rc = -1; break; }
            char **azNew = realloc(azName, sizeof(char *) * (size_t)(id + 1));
            if (!azNew) { rc = -1; break; }
            azName = azNew;
            azName[id] = strdup(zEnd + 1);
            if (!azName[id]) { rc = -1; break; }
            nName = id;
        } else if (zLine[0] == 'S' && zLine[1] == '\t') {
            int v[4];
            char role;
            zTag = z + 2;
            z = strchr(zTag, '\t');
            if (!z || !z[1] || z[2] != '\t') { rc = -1; break; }
            *z = 0;
            role = z[1];
            z += 3;
            for (int k = 0; k < 4; k++) {
                v[k] = (int)strtol(z, &zEnd, 10);
                if (zEnd == z || (k < 3 && *zEnd != '\t')) { rc = -1; break; }
                z = zEnd + 1;
            }
            if (rc == 0 && (v[3] < 1 || v[3] > nName)) rc = -1;
            if (rc == 0) rc = seq_add(zTag, role, v[0], v[1], v[2], v[3]);
        }
    }
    fclose(f);
    if (rc != 0 || nSeq == 0) {
        fprintf(stderr, "accgen: %s: malformed kernel sequences\n", zPath);
        return -1;
    }
    return 0;
}

/* ---- the process ---- */

struct blk {        /* a piece of a segment (segment mode) or of a pool chunk (tensor mode) */
    int64_t addr, size;
    int seg, prev, next; /* neighbours in address order within the segment, -1 none */
    int bFree, pool;
    int bUnmapped;       /* an expandable segment's address range with no pages mapped (never free) */
};
struct seg {        /* a cudaMalloc'd segment, or a chunk of the cudaMallocAsync pool */
    int64_t addr, size;
    int pool, first, bLive;
    int64_t stack;  /* stack of the call that made it */
    int64_t page;   /* an expandable segment: its page size (0: a cudaMalloc'd segment) */
    int64_t *aHandle; /* an expandable segment: the cuMemCreate handle mapped at each page, 0 none */
};
struct ten {
    int64_t addr, bytes;
    int blk, site, bLive;
};
struct pin {
    int64_t addr, size;
    int bFree;
};
struct site {
    char *zSpec;
    int64_t aStack[JS_NAT_N]; /* stack id per native chain, 0 until written */
    int64_t aResv[JS_NAT_N];  /* segment bytes its allocations made the allocator reserve since js_resv_mark */
};
struct va {         /* a free range of the simulated address space */
    int64_t addr, size;
};

struct js {
    struct js_cfg c;
    struct tg *g;
    int64_t cpu, gpu, corr, pid, tidMain, tidAutograd, tidPin, tidNccl;
    int device;
    int64_t total, internalBytes, ncclBytes, reserved, allocated, poolAddr;
    int64_t nFailed;        /* allocations that failed after the allocator's retry */
    struct blk *aBlk;
    int nBlk, nBlkAlloc, *aBlkFree, nBlkFree;
    int *aFree[NPOOL], nFree[NPOOL], nFreeAlloc[NPOOL]; /* free blocks per pool */
    int bGraph;                       /* capturing a CUDA graph: allocations from its private pool */
    int bGraphLaunched;               /* some kernels came from graph launches */
    int64_t peakAllocated, peakReserved;
    int64_t anchorCupti, anchorWall;  /* the clock anchors (meta) */
    int64_t lastOomBytes, lastOomFree, lastOomAllocated, lastOomReserved;
    int64_t allocatedBlocks;          /* the live tensors' blocks (PyTorch's "allocated": rounded, unsplit remainders) */
    int64_t pageableNs, copyNs, firstKernel; /* copy time after the first kernel's launch */
    const struct js_gpu *pGpu;
    char zHost[64];
    struct seg *aSeg;
    int nSeg, nSegAlloc;
    struct ten *aTen;
    int nTen, nTenAlloc;
    struct pin *aPin;
    int nPin, nPinAlloc;
    struct site *aSite;
    int nSite, nSiteAlloc, here;
    struct va *aVa;
    int nVa, nVaAlloc;
    int64_t vaNext, hostNext;
    const struct kseq *seq;
    int *aPos[5], nPos[5];            /* template positions per role after the stride */
    int64_t *aNameId;                 /* string id of each template name, 0 until interned */
    char azNvtx[NVTX_MAX][96];
    int64_t aNvtxStart[NVTX_MAX];
    int nNvtx;
    uint64_t rng;
    int bFailed;                      /* out of memory while building the trace */
    int aExp[2];                      /* the expandable segment of the small and large pool, + 1 (0 none) */
    int64_t nextHandle;               /* the next cuMemCreate handle */
    int reqSite, reqNative;           /* the request being served (its pages' site for the recorders) */
};

static const char zRoles[] = "FBOZC";

/* Array a (elements of sz bytes, *pnAlloc allocated) with room for element n; aborts when out of memory. */
static void *grow(void *a, int *pnAlloc, int n, size_t sz)
{
    if (n < *pnAlloc) return a;
    int nNew = *pnAlloc ? *pnAlloc * 2 : 64;
    void *aNew = realloc(a, sz * (size_t)nNew);
    if (!aNew) {
        fprintf(stderr, "accgen: out of memory\n");
        abort();
    }
    *pnAlloc = nNew;
    return aNew;
}

uint64_t js_rand(struct js *j, uint64_t n)
{
    /* splitmix64 */
    uint64_t z = (j->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return n ? z % n : z;
}

int64_t js_now(const struct js *j)
{
    return j->cpu;
}

void js_cpu(struct js *j, int64_t ns)
{
    j->cpu += ns;
}

/* The next CUPTI correlation id of the process. */
static int64_t next_corr(struct js *j)
{
    return ++j->corr;
}

/* meta row zKey = v formatted with zFmt. */
static void meta(struct js *j, const char *zKey, const char *zFmt, long long v)
{
    char z[64];
    snprintf(z, sizeof z, zFmt, v);
    tg_meta(j->g, zKey, z);
}

/* ---- call sites: Python frames from a spec, native frames by chain ---- */

/* Native frames (innermost first) of each chain: mangled symbol (NULL: not exported) and module. */
struct nat {
    const char *zFn, *zMod;
};
static const struct nat aNatAlloc[] = {
    {"_ZN3c104cuda29CUDACachingAllocator6Native22DeviceCachingAllocator6mallocEamP11CUstream_st", "libc10_cuda.so"},
    {"_ZN3c104cuda29CUDACachingAllocator6Native22NativeCachingAllocator6mallocEPPvamP11CUstream_st", "libc10_cuda.so"},
    {"_ZN3c104cuda29CUDACachingAllocator6Native22NativeCachingAllocator8allocateEm", "libc10_cuda.so"},
    {"_ZN2at6detail13empty_genericEN3c108ArrayRefIlEEPNS1_9AllocatorENS1_14DispatchKeySetENS1_10ScalarTypeESt8optionalINS1_12MemoryFormatEE", "libtorch_cpu.so"},
    {"_ZN2at6detail10empty_cudaEN3c108ArrayRefIlEENS1_10ScalarTypeESt8optionalINS1_6DeviceEESt8optionalINS1_12MemoryFormatEE", "libtorch_cuda.so"},
    {"_ZN2at6native10empty_cudaEN3c108ArrayRefIlEESt8optionalINS1_10ScalarTypeEES4_INS1_6LayoutEES4_INS1_6DeviceEES4_IbES4_INS1_12MemoryFormatEE", "libtorch_cuda.so"},
    {NULL, "libtorch_cuda.so"},
    {"_ZN2at4_ops5empty4callEN3c108ArrayRefINS2_6SymIntEEESt8optionalINS2_10ScalarTypeEES6_INS2_6LayoutEES6_INS2_6DeviceEES6_IbES6_INS2_12MemoryFormatEE", "libtorch_cpu.so"},
    {NULL, "libtorch_python.so"},
    {"cfunction_call", "libpython3.12.so.1.0"},
    {"_PyEval_EvalFrameDefault", "libpython3.12.so.1.0"},
    {"PyEval_EvalCode", "libpython3.12.so.1.0"},
};
static const struct nat aNatAsync[] = {
    {"_ZN3c104cuda29CUDACachingAllocator15CudaMallocAsync10mallocAsyncEPPvamP11CUstream_st", "libc10_cuda.so"},
    {"_ZN3c104cuda29CUDACachingAllocator15CudaMallocAsync24CudaMallocAsyncAllocator8allocateEm", "libc10_cuda.so"},
    {"_ZN2at6detail13empty_genericEN3c108ArrayRefIlEEPNS1_9AllocatorENS1_14DispatchKeySetENS1_10ScalarTypeESt8optionalINS1_12MemoryFormatEE", "libtorch_cpu.so"},
    {"_ZN2at6detail10empty_cudaEN3c108ArrayRefIlEENS1_10ScalarTypeESt8optionalINS1_6DeviceEESt8optionalINS1_12MemoryFormatEE", "libtorch_cuda.so"},
    {NULL, "libtorch_cuda.so"},
    {"_ZN2at4_ops5empty4callEN3c108ArrayRefINS2_6SymIntEEESt8optionalINS2_10ScalarTypeEES6_INS2_6LayoutEES6_INS2_6DeviceEES6_IbES6_INS2_12MemoryFormatEE", "libtorch_cpu.so"},
    {NULL, "libtorch_python.so"},
    {"cfunction_call", "libpython3.12.so.1.0"},
    {"_PyEval_EvalFrameDefault", "libpython3.12.so.1.0"},
};
/* Node::operator() and the autograd engine's thread, under every allocation of the backward pass */
#define NAT_ENGINE                                                                                                            \
    {"_ZN5torch8autograd4NodeclEOSt6vectorIN2at6TensorESaIS4_EE", "libtorch_cpu.so"},                                       \
    {"_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE", \
     "libtorch_cpu.so"},                                                                                                     \
    {"_ZN5torch8autograd6Engine11thread_mainERKSt10shared_ptrINS0_9GraphTaskEE", "libtorch_cpu.so"},                        \
    {"_ZN5torch8autograd6Engine11thread_initEiRKSt10shared_ptrINS0_10ReadyQueueEEb", "libtorch_cpu.so"},                    \
    {"_ZN5torch8autograd6python12PythonEngine11thread_initEiRKSt10shared_ptrINS0_10ReadyQueueEEb", "libtorch_python.so"},  \
    {NULL, "libstdc++.so.6"}, {NULL, "libc.so.6"}
static const struct nat aNatBackward[] = {
    {NULL, "libtorch_cuda.so"},
    {NULL, "libtorch_cuda.so"},
    {"_ZN2at4_ops20convolution_backward4callERKNS_6TensorES4_S4_N3c1016OptionalArrayRefINS5_6SymIntEEENS5_8ArrayRefIS7_EESA_SA_bSA_S7_St5arrayIbLm3EE", "libtorch_cpu.so"},
    {NULL, "libtorch_cpu.so"},
    NAT_ENGINE,
};
/* a gradient as real snapshots show it: clone_obey_contract under AccumulateGrad::accumulateGrad (a template,
 * no exported symbol) and AccumulateGrad::apply, on the engine's thread */
static const struct nat aNatAccGrad[] = {
    {"_ZN2at4_ops17new_empty_strided4callERKNS_6TensorEN3c108ArrayRefINS5_6SymIntEEES8_St8optionalINS5_10ScalarTypeEES9_INS5_6LayoutEES9_INS5_6DeviceEES9_IbE", "libtorch_cpu.so"},
    {"_ZN5torch8autograd5utils19clone_obey_contractERKN2at6TensorES5_", "libtorch_cpu.so"},
    {NULL, "libtorch_cpu.so"},
    {"_ZN5torch8autograd14AccumulateGrad5applyEOSt6vectorIN2at6TensorESaIS4_EE", "libtorch_cpu.so"},
    NAT_ENGINE,
};
static const struct nat aNatCublas[] = {
    {"_ZN2at4cuda25getCurrentCUDABlasHandleEv", "libtorch_cuda.so"},
    {"_ZN2at4cuda4blas4gemmIfEEvcclllN3c1020OpMathTypeERKT_PKS4_lS8_lS6_PS4_l", "libtorch_cuda.so"},
    {NULL, "libtorch_cuda.so"},
    {"_ZN2at6native18addmm_out_cuda_implERNS_6TensorERKS1_S4_S4_RKN3c106ScalarES8_NS0_10ActivationE", "libtorch_cuda.so"},
    {NULL, "libtorch_cuda.so"},
    {"_ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_RKN3c106ScalarES8_", "libtorch_cpu.so"},
    {NULL, "libtorch_python.so"},
    {"_PyEval_EvalFrameDefault", "libpython3.12.so.1.0"},
};
static const struct nat aNatPin[] = {
    {NULL, "libtorch_cuda.so"},
    {"_ZN2at4cuda22getCachingHostAllocatorEv", "libtorch_cuda.so"},
    {"_ZN2at6native15_pin_memory_cudaERKNS_6TensorESt8optionalIN3c106DeviceEE", "libtorch_cuda.so"},
    {NULL, "libtorch_cuda.so"},
    {"_ZN2at4_ops11_pin_memory4callERKNS_6TensorESt8optionalIN3c106DeviceEE", "libtorch_cpu.so"},
    {"_ZN2at6native10pin_memoryERKNS_6TensorESt8optionalIN3c106DeviceEE", "libtorch_cpu.so"},
    {NULL, "libtorch_python.so"},
    {"_PyEval_EvalFrameDefault", "libpython3.12.so.1.0"},
};
static const struct nat aNatCopy[] = {
    {NULL, "libtorch_cuda.so"},
    {"_ZN2at6native15copy_kernel_cudaERNS_18TensorIteratorBaseEb", "libtorch_cuda.so"},
    {NULL, "libtorch_cpu.so"},
    {"_ZN2at6native5copy_ERNS_6TensorERKS1_b", "libtorch_cpu.so"},
    {"_ZN2at4_ops5copy_4callERNS_6TensorERKS2_b", "libtorch_cpu.so"},
    {"_ZN2at6native9_to_copyERKNS_6TensorESt8optionalIN3c1010ScalarTypeEES3_INS4_6LayoutEES3_INS4_6DeviceEES3_IbEbS3_INS4_12MemoryFormatEE", "libtorch_cpu.so"},
    {NULL, "libtorch_python.so"},
    {"_PyEval_EvalFrameDefault", "libpython3.12.so.1.0"},
};
static const struct nat aNatNccl[] = {
    {NULL, "libnccl.so.2"},
    {NULL, "libnccl.so.2"},
    {NULL, "libnccl.so.2"},
    {"ncclCommInitRankConfig", "libnccl.so.2"},
    {"_ZN4c10d16ProcessGroupNCCL11initNCCLCommERKSsRKN3c106DeviceENS_6OpTypeEii", "libtorch_cuda.so"},
    {"_ZN4c10d16ProcessGroupNCCL11getNCCLCommERKSsRKN3c106DeviceENS_6OpTypeEii", "libtorch_cuda.so"},
    {NULL, "libtorch_cuda.so"},
    {NULL, "libtorch_python.so"},
    {"_PyEval_EvalFrameDefault", "libpython3.12.so.1.0"},
};
static const struct nat aNatFree[] = {
    {"_ZN3c104cuda29CUDACachingAllocator15CudaMallocAsync9freeAsyncEPvb", "libc10_cuda.so"},
    {"_ZN3c104cuda29CUDACachingAllocator15CudaMallocAsync10raw_deleteEPv", "libc10_cuda.so"},
    {"_ZN3c1011StorageImpl17release_resourcesEv", "libc10.so"},
    {"_ZN3c1010TensorImplD1Ev", "libc10.so"},
    {NULL, "libtorch_python.so"},
    {"_PyEval_EvalFrameDefault", "libpython3.12.so.1.0"},
};
static const struct nat aNatFreeSeg[] = {
    {"_ZN3c104cuda29CUDACachingAllocator6Native22DeviceCachingAllocator13release_blockEPNS2_5BlockERKSt10shared_ptrINS_14GatheredContextEE", "libc10_cuda.so"},
    {"_ZN3c104cuda29CUDACachingAllocator6Native22DeviceCachingAllocator14release_blocksERNS2_9BlockPoolERKSt10shared_ptrINS_14GatheredContextEE", "libc10_cuda.so"},
    {"_ZN3c104cuda29CUDACachingAllocator6Native22DeviceCachingAllocator21release_cached_blocksERKSt10shared_ptrINS_14GatheredContextEE", "libc10_cuda.so"},
    {"_ZN3c104cuda29CUDACachingAllocator6Native22DeviceCachingAllocator6mallocEamP11CUstream_st", "libc10_cuda.so"},
    {"_ZN3c104cuda29CUDACachingAllocator6Native22NativeCachingAllocator8allocateEm", "libc10_cuda.so"},
    {NULL, "libtorch_cuda.so"},
    {NULL, "libtorch_python.so"},
    {"_PyEval_EvalFrameDefault", "libpython3.12.so.1.0"},
};

int js_native_engine(int native)
{
    return native == JS_NAT_BACKWARD || native == JS_NAT_ACCGRAD;
}

/* The native chain of kind `native` in the current mode. */
static const struct nat *nat_chain(const struct js *j, int native, int *pn)
{
#define N(a) (*pn = (int)(sizeof a / sizeof a[0]), a)
    switch (native) {
    case JS_NAT_BACKWARD: return N(aNatBackward);
    case JS_NAT_ACCGRAD: return N(aNatAccGrad);
    case JS_NAT_CUBLAS: return N(aNatCublas);
    case JS_NAT_PIN: return N(aNatPin);
    case JS_NAT_COPY: return N(aNatCopy);
    case JS_NAT_NCCL: return N(aNatNccl);
    case JS_NAT_FREE: return j->c.mode == JS_TENSORS ? N(aNatFree) : N(aNatFreeSeg);
    default: return j->c.mode == JS_TENSORS ? N(aNatAsync) : N(aNatAlloc);
    }
#undef N
}

void js_py_path(const struct js *j, const char *zFile, char *z, size_t n)
{
    const char *zPre;
    size_t k;
    if (!strncmp(zFile, "lib:", 4)) {
        zPre = j->c.bWindows ? "C:\\Users\\alice\\miniconda3\\envs\\torch\\Lib\\site-packages\\"
                             : "/usr/local/lib/python3.12/site-packages/";
        zFile += 4;
    } else if (!strncmp(zFile, "std:", 4)) {
        zPre = j->c.bWindows ? "C:\\Users\\alice\\miniconda3\\envs\\torch\\Lib\\" : "/usr/lib/python3.12/";
        zFile += 4;
    } else if (!strncmp(zFile, "gen:", 4)) {
        zPre = j->c.bWindows ? "C:\\Users\\alice\\AppData\\Local\\Temp\\torchinductor_alice\\" : "/tmp/torchinductor_alice/";
        zFile += 4;
    } else {
        zPre = j->c.bWindows ? "C:\\Users\\alice\\projects\\trainer\\" : "/home/alice/projects/trainer/";
    }
    snprintf(z, n, "%s%s", zPre, zFile);
    for (k = strlen(zPre); j->c.bWindows && z[k]; k++)
        if (z[k] == '/') z[k] = '\\';
}

/* Full path of a native module. */
static void mod_path(const struct js *j, const char *zMod, char *z, size_t n)
{
    if (j->c.bWindows) {
        /* PyTorch's Windows wheels: c10_cuda.dll, torch_cuda.dll, ... in torch\lib */
        char zBase[64];
        snprintf(zBase, sizeof zBase, "%s", zMod + (strncmp(zMod, "lib", 3) ? 0 : 3));
        char *zDot = strstr(zBase, ".so");
        if (zDot) strcpy(zDot, ".dll");
        if (strstr(zMod, "python")) snprintf(z, n, "C:\\Users\\alice\\miniconda3\\envs\\torch\\python312.dll");
        else if (strstr(zMod, "libc.so") || strstr(zMod, "stdc++")) snprintf(z, n, "C:\\Windows\\System32\\ucrtbase.dll");
        else snprintf(z, n, "C:\\Users\\alice\\miniconda3\\envs\\torch\\Lib\\site-packages\\torch\\lib\\%s", zBase);
    } else if (strstr(zMod, "python") || !strcmp(zMod, "libc.so.6") || !strcmp(zMod, "libstdc++.so.6")) {
        snprintf(z, n, "/usr/lib/x86_64-linux-gnu/%s", zMod);
    } else if (strstr(zMod, "nccl")) {
        snprintf(z, n, "/usr/local/lib/python3.12/site-packages/nvidia/nccl/lib/%s", zMod);
    } else {
        snprintf(z, n, "/usr/local/lib/python3.12/site-packages/torch/lib/%s", zMod);
    }
}

int js_site(struct js *j, const char *zSpec)
{
    for (int i = 0; i < j->nSite; i++)
        if (!strcmp(j->aSite[i].zSpec, zSpec)) return i;
    j->aSite = grow(j->aSite, &j->nSiteAlloc, j->nSite, sizeof *j->aSite);
    memset(&j->aSite[j->nSite], 0, sizeof j->aSite[0]);
    j->aSite[j->nSite].zSpec = strdup(zSpec);
    if (!j->aSite[j->nSite].zSpec) abort();
    return j->nSite++;
}

void js_resv_mark(struct js *j)
{
    for (int i = 0; i < j->nSite; i++) memset(j->aSite[i].aResv, 0, sizeof j->aSite[i].aResv);
}

int64_t js_resv_since_mark(const struct js *j, const char *zFrame, int native)
{
    int64_t n = 0;
    if (native < 0 || native >= JS_NAT_N) return 0;
    for (int i = 0; i < j->nSite; i++)
        if (!zFrame || strstr(j->aSite[i].zSpec, zFrame)) n += j->aSite[i].aResv[native];
    return n;
}

void js_here(struct js *j, int site)
{
    j->here = site;
}

#define MAX_FRAMES 80

/* FNV-1a over a string, folded into h. */
static uint64_t fnv(uint64_t h, const char *z)
{
    for (; z && *z; z++) h = (h ^ (unsigned char)*z) * 0x100000001B3ull;
    return h * 0x100000001B3ull;
}

/* The stack id of (site, native chain), written on first use. */
static int64_t stack_of(struct js *j, int site, int native)
{
    struct site *s;
    struct tg_frame a[MAX_FRAMES];
    char azFile[MAX_FRAMES][300], azFn[MAX_FRAMES][96], azMod[MAX_FRAMES][200];
    int n = 0, nNat;
    const struct nat *pNat;
    uint64_t h = 0xCBF29CE484222325ull;
    char *zCopy, *zPart, *zSave = NULL;
    if (site < 0 || site >= j->nSite) return TG_NULL;
    s = &j->aSite[site];
    if (s->aStack[native]) return s->aStack[native];
    zCopy = strdup(s->zSpec);
    if (!zCopy) abort();
    /* Python frames first, innermost first (the autograd thread has none) */
    for (zPart = js_native_engine(native) || !*zCopy ? NULL : strtok_r(zCopy, "|", &zSave); zPart && n < MAX_FRAMES - 20;
         zPart = strtok_r(NULL, "|", &zSave)) {
        char *zLine = strchr(zPart + 4, ':'), *zFn = zLine ? strchr(zLine + 1, ':') : NULL;
        if (!zLine || !zFn) {
            fprintf(stderr, "accgen: bad frame '%s' in site '%s'\n", zPart, s->zSpec);
            abort();
        }
        *zLine = 0;
        js_py_path(j, zPart, azFile[n], sizeof azFile[n]);
        snprintf(azFn[n], sizeof azFn[n], "%s", zFn + 1);
        memset(&a[n], 0, sizeof a[n]);
        a[n].kind = VT_FRAME_PYTHON;
        a[n].zFile = azFile[n];
        a[n].zFunction = azFn[n];
        a[n].line = atoi(zLine + 1);
        h = fnv(fnv(h, azFile[n]), azFn[n]) + (uint64_t)a[n].line;
        n++;
    }
    free(zCopy);
    pNat = nat_chain(j, native, &nNat);
    for (int i = 0; i < nNat && i < 16; i++, n++) { /* VRAMTRACE_BACKTRACE=16 */
        memset(&a[n], 0, sizeof a[n]);
        mod_path(j, pNat[i].zMod, azMod[n], sizeof azMod[n]);
        a[n].kind = VT_FRAME_NATIVE;
        a[n].zModule = azMod[n];
        a[n].zFunction = pNat[i].zFn;
        /* a return address relative to its module, stable per (chain, frame) */
        a[n].pc = 0x1a2b00 + (int64_t)(fnv(fnv(0, pNat[i].zMod), pNat[i].zFn ? pNat[i].zFn : "?") % 0x2000000) +
                  16 * native + i;
        h = fnv(h, pNat[i].zMod) + (uint64_t)a[n].pc;
    }
    s->aStack[native] = tg_stack_frames(j->g, a, n, (int64_t)(h >> 1));
    return s->aStack[native];
}

/* ---- address space ---- */

/* A 2 MiB-aligned device range of `size` bytes (freed ranges reused first fit). */
static int64_t va_take(struct js *j, int64_t size)
{
    for (int i = 0; i < j->nVa; i++)
        if (j->aVa[i].size >= size) {
            int64_t a = j->aVa[i].addr;
            j->aVa[i].addr += size;
            j->aVa[i].size -= size;
            if (j->aVa[i].size == 0) j->aVa[i] = j->aVa[--j->nVa];
            return a;
        }
    int64_t a = j->vaNext;
    j->vaNext += (size + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
    return a;
}

/* Give a device range back for reuse. */
static void va_give(struct js *j, int64_t addr, int64_t size)
{
    j->aVa = grow(j->aVa, &j->nVaAlloc, j->nVa, sizeof *j->aVa);
    j->aVa[j->nVa].addr = addr;
    j->aVa[j->nVa].size = (size + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
    j->nVa++;
}

/* ---- trace rows ---- */

static void api_row(struct js *j, int api, int64_t corr, int64_t start, int64_t end, int64_t thread, int status,
                    int64_t bytes, int64_t ptr, int64_t src, int64_t dst, int64_t stream, int64_t stack)
{
    struct tg_apirow a = {api, corr, start, end, thread, j->device, status, bytes ? bytes : TG_NULL,
                          ptr ? ptr : TG_NULL, src ? src : TG_NULL, dst ? dst : TG_NULL, stream, stack};
    tg_api_row(j->g, &a);
}

/* A memory_event row as decode_memory writes a MEMORY2 record (pool fields for async pool allocations). */
static void mem_row(struct js *j, int64_t ts, int op, int kind, int64_t addr, int64_t bytes, int64_t corr, int api,
                    int64_t thread, int64_t stack, int bAsync)
{
    struct tg_memrow m = {ts, op, kind, addr, bytes, j->device, 1, bAsync ? STREAM : TG_NULL,
                          corr ? corr : TG_NULL, api ? api : TG_NULL, bAsync, TG_NULL, TG_NULL, TG_NULL,
                          TG_NULL, TG_NULL, corr ? 0x7f2e1c4a0000 + (stack == TG_NULL ? 0 : stack % 4096) * 16 : TG_NULL,
                          corr ? thread : TG_NULL, stack};
    if (bAsync) {
        /* PyTorch's cudaMallocAsync backend: the device's default pool, release threshold UINT64_MAX */
        m.poolType = 1;
        m.poolAddress = j->poolAddr;
        m.poolThreshold = -1;
        m.poolSize = j->reserved;
        m.poolUsed = j->allocated;
    }
    tg_memory_row(j->g, &m);
}

/* Bytes of device memory free now, as cuMemGetInfo would say. */
static int64_t dev_free(const struct js *j)
{
    int64_t used = CTX_BYTES + j->internalBytes + j->ncclBytes + j->reserved + j->c.otherBytes;
    return used < j->total ? j->total - used : 0;
}

/* A failed allocation call: api_call with status 2 and the oom_event row. */
static void oom_call(struct js *j, int api, int64_t bytes, int64_t stack)
{
    int64_t corr = next_corr(j), t = j->cpu;
    struct tg_oomrow o = {t + 40000, api, corr, j->device, bytes, 2,
                          j->c.unknownMemInfo ? TG_NULL : dev_free(j), j->c.unknownMemInfo ? TG_NULL : j->total,
                          j->tidMain, stack};
    api_row(j, api, corr, t, t + 40000, j->tidMain, 2, bytes, 0, 0, 0, api == 3 ? STREAM : TG_NULL, stack);
    tg_oom_row(j->g, &o);
    j->cpu = t + 45000;
}

/* ---- blocks of segments (both modes) ---- */

/* Forget block b (merged into a neighbour or its segment released): its slot is reused. */
static void blk_dispose(struct js *j, int b)
{
    int *aNew = realloc(j->aBlkFree, sizeof(int) * (size_t)(j->nBlkFree + 1));
    if (!aNew) abort();
    j->aBlkFree = aNew;
    j->aBlkFree[j->nBlkFree++] = b;
}

/* A block slot, reused or new (its fields are the caller's to set). */
static int blk_new(struct js *j)
{
    if (j->nBlkFree) return j->aBlkFree[--j->nBlkFree];
    j->aBlk = grow(j->aBlk, &j->nBlkAlloc, j->nBlk, sizeof *j->aBlk);
    return j->nBlk++;
}

/* Mark block b free and list it in its pool. */
static void free_add(struct js *j, int b)
{
    int p = j->aBlk[b].pool;
    j->aFree[p] = grow(j->aFree[p], &j->nFreeAlloc[p], j->nFree[p], sizeof(int));
    j->aFree[p][j->nFree[p]++] = b;
    j->aBlk[b].bFree = 1;
}

/* Take block b off its pool's free list (it is then in use or gone). */
static void free_remove(struct js *j, int b)
{
    int p = j->aBlk[b].pool;
    for (int i = 0; i < j->nFree[p]; i++)
        if (j->aFree[p][i] == b) {
            j->aFree[p][i] = j->aFree[p][--j->nFree[p]];
            break;
        }
    j->aBlk[b].bFree = 0;
}

/* Best fit among the free blocks of pool p (smallest, then lowest address); -1 none. */
static int best_fit(const struct js *j, int p, int64_t size)
{
    int best = -1;
    for (int i = 0; i < j->nFree[p]; i++) {
        const struct blk *b = &j->aBlk[j->aFree[p][i]];
        if (b->size < size) continue;
        if (best < 0 || b->size < j->aBlk[best].size || (b->size == j->aBlk[best].size && b->addr < j->aBlk[best].addr))
            best = j->aFree[p][i];
    }
    return best;
}

/*
 * Split block b at offset off (0 < off < its size): b keeps [addr, addr + off), the block returned
 * holds the rest with b's state (free lists are the caller's to update).
 */
static int blk_split(struct js *j, int b, int64_t off)
{
    int r = blk_new(j);
    j->aBlk[r] = j->aBlk[b];
    j->aBlk[r].addr += off;
    j->aBlk[r].size -= off;
    j->aBlk[r].prev = b;
    if (j->aBlk[b].next >= 0) j->aBlk[j->aBlk[b].next].prev = r;
    j->aBlk[b].next = r;
    j->aBlk[b].size = off;
    return r;
}

/* Merge block n, the next of block b, into b (n's slot is reused; free lists are the caller's). */
static void blk_absorb(struct js *j, int b, int n)
{
    j->aBlk[b].size += j->aBlk[n].size;
    j->aBlk[b].next = j->aBlk[n].next;
    if (j->aBlk[n].next >= 0) j->aBlk[j->aBlk[n].next].prev = b;
    blk_dispose(j, n);
}

/* Take `size` bytes from the start of free block b (split when the rest is worth keeping). */
static void blk_take(struct js *j, int b, int64_t size)
{
    int64_t rest = j->aBlk[b].size - size;
    int bSplit = (j->aBlk[b].pool & 1) == POOL_SMALL ? rest >= 512 : rest > MiB;
    if (j->c.mode == JS_TENSORS || j->c.bExpandable) bSplit = rest >= 512; /* should_split with expandable segments */
    free_remove(j, b);
    if (bSplit) free_add(j, blk_split(j, b, size));
}

/* Return block b to its pool, merged with free neighbours; returns the free block it is now part of. */
static int blk_release(struct js *j, int b)
{
    int n = j->aBlk[b].next, p = j->aBlk[b].prev;
    if (n >= 0 && j->aBlk[n].bFree) {
        free_remove(j, n);
        blk_absorb(j, b, n);
    }
    if (p >= 0 && j->aBlk[p].bFree) {
        free_remove(j, p);
        blk_absorb(j, p, b);
        b = p;
    }
    free_add(j, b);
    return b;
}

/* Segment size the caching allocator asks cudaMalloc for (CUDACachingAllocator.cpp: get_allocation_size). */
static int64_t seg_size(const struct js *j, int pool, int64_t size)
{
    if (j->c.mode == JS_TENSORS) { /* the driver pool grows in chunks */
        int64_t c = (size + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
        return c < 32 * MiB ? 32 * MiB : c;
    }
    if ((pool & 1) == POOL_SMALL) return 2 * MiB; /* kSmallBuffer */
    if (size < 10 * MiB) return 20 * MiB;          /* kMinLargeAlloc -> kLargeBuffer */
    return (size + 2 * MiB - 1) / (2 * MiB) * (2 * MiB); /* kRoundLarge */
}

/* A new segment of `size` in pool p, recorded as cudaMalloc (segment mode) or silently (pool chunk). */
static int seg_new(struct js *j, int pool, int64_t size, int64_t stack, int site, int native)
{
    int s, b;
    j->aSeg = grow(j->aSeg, &j->nSegAlloc, j->nSeg, sizeof *j->aSeg);
    s = j->nSeg++;
    memset(&j->aSeg[s], 0, sizeof j->aSeg[s]);
    j->aSeg[s].addr = va_take(j, size);
    j->aSeg[s].size = size;
    j->aSeg[s].pool = pool;
    j->aSeg[s].bLive = 1;
    j->aSeg[s].stack = stack;
    b = blk_new(j);
    memset(&j->aBlk[b], 0, sizeof j->aBlk[b]);
    j->aBlk[b].addr = j->aSeg[s].addr;
    j->aBlk[b].size = size;
    j->aBlk[b].seg = s;
    j->aBlk[b].pool = pool;
    j->aBlk[b].prev = j->aBlk[b].next = -1;
    j->aSeg[s].first = b;
    free_add(j, b);
    j->reserved += size;
    if (j->c.mode == JS_SEGMENTS) {
        int64_t corr = next_corr(j), t = j->cpu, d = 30000 + size / (64 * MiB) * 8000;
        api_row(j, 1, corr, t, t + d, j->tidMain, 0, size, j->aSeg[s].addr, 0, 0, TG_NULL, stack);
        mem_row(j, t + d / 2, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, j->aSeg[s].addr, size, corr, 1, j->tidMain, stack, 0);
        j->cpu = t + d + 1000;
        if (j->c.pObs && j->c.pObs->xSegment) j->c.pObs->xSegment(j->c.pObs->p, j, t + d / 2, 1, j->aSeg[s].addr, size, site, native);
    }
    if (j->reserved > j->peakReserved) j->peakReserved = j->reserved;
    return s;
}

/* Whether a new segment of `size` fits on the device. */
static int fits(const struct js *j, int64_t size)
{
    return dev_free(j) >= size;
}

/* ---- expandable segments (expandable_segments:True) ---- */

/* Page sizes of an expandable segment: PyTorch's kSmallBuffer (small pool) and kLargeBuffer. */
#define EXP_PAGE_SMALL (2 * MiB)
#define EXP_PAGE_LARGE (20 * MiB)

/* A VMM memory_event row as the tracer writes it for cuMemCreate/cuMemMap/cuMemUnmap/cuMemRelease. */
static void vmm_row(struct js *j, int64_t ts, int op, int64_t addr, int64_t bytes, int64_t corr, int api,
                    int64_t handle, int64_t thread, int64_t stack)
{
    struct tg_memrow m = {ts, op, VT_MEMKIND_DEVICE, addr, bytes, j->device, TG_NULL, TG_NULL, corr, api, 0,
                          TG_NULL, handle, TG_NULL, TG_NULL, TG_NULL, TG_NULL, thread, stack};
    tg_memory_row(j->g, &m);
}

/*
 * A cuMemCreate of `bytes` as `handle` called at t[0] and returning at t[1], then its cuMemMap at
 * addr from t[2] to t[3], by thread: api_call and memory_event rows (the create's pool_address
 * hCreate: the handle, or TG_NULL as NCCL's rows have it).
 */
static void vmm_create_map(struct js *j, const int64_t *t, int64_t handle, int64_t hCreate, int64_t addr, int64_t bytes,
                           int64_t thread, int64_t stack)
{
    int64_t corr = next_corr(j);
    api_row(j, 40, corr, t[0], t[1], thread, 0, bytes, handle, 0, 0, TG_NULL, stack);
    vmm_row(j, t[1], VT_MEMOP_VMM_CREATE, handle, bytes, corr, 40, hCreate, thread, stack);
    corr = next_corr(j);
    api_row(j, 42, corr, t[2], t[3], thread, 0, bytes, addr, 0, 0, TG_NULL, stack);
    vmm_row(j, t[3], VT_MEMOP_VMM_MAP, addr, bytes, corr, 42, handle, thread, stack);
}

/*
 * The expandable segment of pool p (POOL_SMALL or POOL_LARGE), made on first use: address space
 * for 1 1/8 of the device (CUDACachingAllocator.cpp, ExpandableSegment), one unmapped block over
 * it. Returns its index.
 */
static int exp_seg(struct js *j, int pool)
{
    int64_t page = pool == POOL_SMALL ? EXP_PAGE_SMALL : EXP_PAGE_LARGE, n = (j->total + j->total / 8 + page - 1) / page;
    int s, b;
    if (j->aExp[pool]) return j->aExp[pool] - 1;
    j->aSeg = grow(j->aSeg, &j->nSegAlloc, j->nSeg, sizeof *j->aSeg);
    s = j->nSeg++;
    memset(&j->aSeg[s], 0, sizeof j->aSeg[s]);
    j->aSeg[s].addr = va_take(j, n * page);
    j->aSeg[s].size = n * page;
    j->aSeg[s].pool = pool;
    j->aSeg[s].bLive = 1;
    j->aSeg[s].stack = TG_NULL;
    j->aSeg[s].page = page;
    if (!(j->aSeg[s].aHandle = calloc((size_t)n, sizeof(int64_t)))) abort();
    b = blk_new(j);
    memset(&j->aBlk[b], 0, sizeof j->aBlk[b]);
    j->aBlk[b].addr = j->aSeg[s].addr;
    j->aBlk[b].size = n * page;
    j->aBlk[b].seg = s;
    j->aBlk[b].pool = pool;
    j->aBlk[b].prev = j->aBlk[b].next = -1;
    j->aBlk[b].bUnmapped = 1;
    j->aSeg[s].first = b;
    j->aExp[pool] = s + 1;
    return s;
}

/* Map segment s's pages over [addr, addr + n) (page-aligned): a cuMemCreate and a cuMemMap each, then one cuMemSetAccess. */
static void exp_map(struct js *j, int s, int64_t addr, int64_t n, int64_t stack)
{
    int64_t page = j->aSeg[s].page, c;
    for (int64_t a = addr; a < addr + n; a += page) {
        int64_t h = 0x6b00000001LL + 16 * j->nextHandle++, aT[4];
        c = j->cpu;
        aT[0] = c, aT[1] = c + 20000, aT[2] = c + 22000, aT[3] = c + 30000;
        vmm_create_map(j, aT, h, h, a, page, j->tidMain, stack);
        j->aSeg[s].aHandle[(a - j->aSeg[s].addr) / page] = h;
        j->reserved += page;
        j->cpu = c + 32000;
    }
    c = j->cpu;
    api_row(j, 46, next_corr(j), c, c + 8000, j->tidMain, 0, n, addr, 0, 0, TG_NULL, stack);
    j->cpu = c + 9000;
    if (j->reserved > j->peakReserved) j->peakReserved = j->reserved;
    if (j->c.pObs && j->c.pObs->xMap) j->c.pObs->xMap(j->c.pObs->p, j, c, 1, addr, n, page, j->reqSite, j->reqNative);
}

/* Unmap segment s's pages over [addr, addr + n) (page-aligned): the stream synchronized, a cuMemUnmap and a cuMemRelease each. */
static void exp_unmap(struct js *j, int s, int64_t addr, int64_t n, int64_t stack)
{
    int64_t page = j->aSeg[s].page;
    if (j->gpu > j->cpu) j->cpu = j->gpu;
    if (j->c.pObs && j->c.pObs->xMap) j->c.pObs->xMap(j->c.pObs->p, j, j->cpu, 0, addr, n, page, j->reqSite, JS_NAT_FREE);
    for (int64_t a = addr; a < addr + n; a += page) {
        int64_t *pH = &j->aSeg[s].aHandle[(a - j->aSeg[s].addr) / page], c = j->cpu, corr = next_corr(j);
        api_row(j, 43, corr, c, c + 15000, j->tidMain, 0, page, a, 0, 0, TG_NULL, stack);
        vmm_row(j, c + 15000, VT_MEMOP_VMM_UNMAP, a, page, corr, 43, *pH, j->tidMain, stack);
        corr = next_corr(j);
        api_row(j, 41, corr, c + 16000, c + 30000, j->tidMain, 0, 0, *pH, 0, 0, TG_NULL, stack);
        vmm_row(j, c + 30000, VT_MEMOP_VMM_RELEASE, *pH, page, corr, 41, *pH, j->tidMain, stack);
        *pH = 0;
        j->reserved -= page;
        j->cpu = c + 31000;
    }
}

/*
 * Unmap the whole pages inside segment s's free blocks (release_cached_blocks with expandable
 * segments: a free block's partial pages at either end stay mapped); the unmapped ranges join
 * their unmapped neighbours. Returns the bytes unmapped.
 */
static int64_t exp_unmap_free(struct js *j, int s, int64_t stack)
{
    int64_t n = 0, page = j->aSeg[s].page, base = j->aSeg[s].addr;
    for (int b = j->aSeg[s].first; b >= 0; b = j->aBlk[b].next) {
        int64_t start = j->aBlk[b].addr, end = start + j->aBlk[b].size;
        int64_t lo = base + (start - base + page - 1) / page * page, hi = base + (end - base) / page * page;
        if (!j->aBlk[b].bFree || hi <= lo) continue;
        exp_unmap(j, s, lo, hi - lo, stack);
        n += hi - lo;
        free_remove(j, b);
        if (lo > start) {
            int m = blk_split(j, b, lo - start);
            free_add(j, b);
            b = m;
        }
        if (hi < end) free_add(j, blk_split(j, b, hi - lo));
        j->aBlk[b].bUnmapped = 1;
        if (j->aBlk[b].next >= 0 && j->aBlk[j->aBlk[b].next].bUnmapped) blk_absorb(j, b, j->aBlk[b].next);
        if (j->aBlk[b].prev >= 0 && j->aBlk[j->aBlk[b].prev].bUnmapped) {
            int p = j->aBlk[b].prev;
            blk_absorb(j, p, b);
            b = p;
        }
    }
    return n;
}

/* Map the first n bytes of unmapped block u of segment s (rounded up to pages); returns the free block they joined. */
static int exp_map_block(struct js *j, int s, int u, int64_t n, int64_t stack)
{
    int64_t page = j->aSeg[s].page, len = (n + page - 1) / page * page;
    exp_map(j, s, j->aBlk[u].addr, len, stack);
    if (len < j->aBlk[u].size) blk_split(j, u, len); /* the rest stays unmapped */
    j->aBlk[u].bUnmapped = 0;
    return blk_release(j, u);
}

/*
 * A free block of at least `size` bytes in pool p's expandable segment, its pages mapped as
 * needed (try_allocate_expandable_block): the lowest run of free and unmapped blocks that holds
 * `size`, starting at an unmapped block or the free block before it. *pNeed: the bytes of pages
 * it maps. -1 when they do not fit on the device (nothing mapped then).
 */
static int exp_alloc(struct js *j, int pool, int64_t size, int64_t stack, int64_t *pNeed)
{
    int s = exp_seg(j, pool), c = -1;
    int64_t page = j->aSeg[s].page, have = 0;
    for (int u = j->aSeg[s].first; u >= 0 && c < 0; u = j->aBlk[u].next) {
        int x = j->aBlk[u].prev >= 0 && j->aBlk[j->aBlk[u].prev].bFree ? j->aBlk[u].prev : u;
        int64_t bytes = 0;
        if (!j->aBlk[u].bUnmapped) continue;
        for (int y = x; y >= 0 && bytes < size && (j->aBlk[y].bFree || j->aBlk[y].bUnmapped); y = j->aBlk[y].next)
            bytes += j->aBlk[y].size;
        if (bytes >= size) c = x;
    }
    *pNeed = 0;
    if (c < 0) return *pNeed = size, -1; /* the address space is used up */
    for (int y = c; have < size; y = j->aBlk[y].next) { /* the pages the walk below maps */
        int64_t r = j->aBlk[y].size;
        if (j->aBlk[y].bUnmapped) {
            r = size - have < r ? (size - have + page - 1) / page * page : r;
            *pNeed += r;
        }
        have += r;
    }
    if (!fits(j, *pNeed)) return -1;
    if (j->aBlk[c].bUnmapped) c = exp_map_block(j, s, c, size < j->aBlk[c].size ? size : j->aBlk[c].size, stack);
    while (j->aBlk[c].size < size) { /* free, then unmapped: map what the request still needs */
        int u = j->aBlk[c].next;
        int64_t rest = size - j->aBlk[c].size;
        c = exp_map_block(j, s, u, rest < j->aBlk[u].size ? rest : j->aBlk[u].size, stack);
    }
    return c;
}

/* Give every completely free segment of the mode back (cudaFree, or a pool trim). Returns bytes released. */
static int64_t release_cached(struct js *j, int64_t stack)
{
    int64_t n = 0;
    for (int s = 0; s < j->nSeg; s++) {
        struct seg *pS = &j->aSeg[s];
        int b = pS->first;
        if (pS->page) { /* an expandable segment: its free pages unmapped */
            n += exp_unmap_free(j, s, stack);
            continue;
        }
        if (!pS->bLive || pS->pool >= 2 || !j->aBlk[b].bFree || j->aBlk[b].size != pS->size) continue;
        free_remove(j, b);
        blk_dispose(j, b);
        pS->bLive = 0;
        j->reserved -= pS->size;
        n += pS->size;
        if (j->c.mode == JS_SEGMENTS) {
            /* cudaFree synchronizes the device */
            int64_t corr = next_corr(j), t = j->cpu > j->gpu ? j->cpu : j->gpu;
            api_row(j, 2, corr, j->cpu, t + 20000, j->tidMain, 0, 0, pS->addr, 0, 0, TG_NULL, stack);
            mem_row(j, t + 10000, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, pS->addr, pS->size, corr, 2, j->tidMain, stack, 0);
            j->cpu = t + 21000;
            if (j->c.pObs && j->c.pObs->xSegment)
                j->c.pObs->xSegment(j->c.pObs->p, j, t + 10000, 0, pS->addr, pS->size, j->here, JS_NAT_FREE);
        }
        va_give(j, pS->addr, pS->size);
    }
    if (n && j->c.mode == JS_TENSORS) tg_pool_row(j->g, j->cpu, VT_POOLOP_TRIMMED, j->device, 1, j->poolAddr, -1, j->reserved, j->allocated);
    return n;
}

int js_alloc(struct js *j, int64_t bytes, int site, int native)
{
    int64_t size = bytes < 512 ? 512 : (bytes + 511) / 512 * 512, stack = stack_of(j, site, native);
    int pool = (j->c.mode == JS_TENSORS ? POOL_LARGE : size <= MiB ? POOL_SMALL : POOL_LARGE) + (j->bGraph ? 2 : 0);
    int b = best_fit(j, pool, size), t;
    int64_t seg = seg_size(j, pool, size), need = seg;
    int64_t thread = js_native_engine(native) ? j->tidAutograd : j->tidMain;
    int bExp = j->c.bExpandable && j->c.mode == JS_SEGMENTS && pool < 2; /* graph pools keep segments */
    j->reqSite = site;
    j->reqNative = native;
    if (b < 0) {
        int api = j->c.mode == JS_TENSORS ? 3 : bExp ? 40 : 1;
        /* the request a failing call names: the tensor (cudaMallocAsync), the segment, or one page (cuMemCreate) */
        int64_t ask = j->c.mode == JS_TENSORS ? bytes : bExp ? (pool == POOL_SMALL ? EXP_PAGE_SMALL : EXP_PAGE_LARGE) : seg;
        if (bExp ? (b = exp_alloc(j, pool, size, stack, &need)) < 0 : !fits(j, seg)) {
            /* CUDACachingAllocator::malloc: cudaMalloc (or an expandable segment's cuMemCreate) fails,
             * cached segments are released (free pages unmapped), one retry.
             * PyTorch's cudaMallocAsync backend does not retry (CUDAMallocAsyncAllocator.cpp raises at
             * the first failure); the pool's wholly free chunks given back before the failure stands
             * is taken as the driver's doing, which is not documented */
            oom_call(j, api, ask, stack);
            release_cached(j, stack_of(j, site, JS_NAT_FREE));
            if (bExp ? (b = exp_alloc(j, pool, size, stack, &need)) < 0 : !fits(j, seg)) {
                oom_call(j, api, ask, stack);
                j->nFailed++;
                if (j->c.pObs && j->c.pObs->xOom) j->c.pObs->xOom(j->c.pObs->p, j, j->cpu, size, dev_free(j), site, native);
                j->lastOomBytes = size;
                j->lastOomFree = dev_free(j);
                j->lastOomAllocated = j->allocatedBlocks;
                j->lastOomReserved = j->reserved;
                return -1;
            }
        }
        if (!bExp) {
            seg_new(j, pool, seg, stack, site, native);
            b = best_fit(j, pool, size);
        }
        if (site >= 0 && site < j->nSite) j->aSite[site].aResv[native] += need;
    }
    blk_take(j, b, size);
    j->aTen = grow(j->aTen, &j->nTenAlloc, j->nTen, sizeof *j->aTen);
    t = j->nTen++;
    j->aTen[t].addr = j->aBlk[b].addr;
    j->aTen[t].bytes = bytes;
    j->aTen[t].blk = b;
    j->aTen[t].site = site;
    j->aTen[t].bLive = 1;
    j->allocated += bytes;
    j->allocatedBlocks += j->aBlk[b].size;
    if (j->allocated > j->peakAllocated) j->peakAllocated = j->allocated;
    if (j->c.pObs && j->c.pObs->xBlock) j->c.pObs->xBlock(j->c.pObs->p, j, j->cpu, 1, j->aTen[t].addr, size, site, native);
    if (j->c.mode == JS_TENSORS) {
        int64_t corr = next_corr(j), t0 = j->cpu;
        api_row(j, 3, corr, t0, t0 + 2500, thread, 0, bytes, j->aTen[t].addr, 0, 0, STREAM, stack);
        mem_row(j, t0 + 1200, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, j->aTen[t].addr, bytes, corr, 3, thread, stack, 1);
        j->cpu = t0 + 3000;
    } else {
        j->cpu += 400;
    }
    return t;
}

void js_free(struct js *j, int t)
{
    struct ten *p;
    if (t < 0 || t >= j->nTen || !j->aTen[t].bLive) return;
    p = &j->aTen[t];
    p->bLive = 0;
    j->allocated -= p->bytes;
    j->allocatedBlocks -= j->aBlk[p->blk].size;
    blk_release(j, p->blk);
    if (j->c.pObs && j->c.pObs->xBlock)
        j->c.pObs->xBlock(j->c.pObs->p, j, j->cpu, 0, p->addr, p->bytes < 512 ? 512 : (p->bytes + 511) / 512 * 512, j->here,
                          JS_NAT_FREE);
    if (j->c.mode == JS_TENSORS) {
        int64_t corr = next_corr(j), t0 = j->cpu, stack = stack_of(j, j->here, JS_NAT_FREE);
        api_row(j, 4, corr, t0, t0 + 1800, j->tidMain, 0, 0, p->addr, 0, 0, STREAM, stack);
        mem_row(j, t0 + 900, VT_MEMOP_FREE, VT_MEMKIND_DEVICE, p->addr, p->bytes, corr, 4, j->tidMain, stack, 1);
        j->cpu = t0 + 2000;
    } else {
        j->cpu += 300;
    }
}

int64_t js_tensor_bytes(const struct js *j, int t)
{
    return t >= 0 && t < j->nTen ? j->aTen[t].bytes : 0;
}

void js_empty_cache(struct js *j)
{
    j->reqSite = j->here;
    release_cached(j, stack_of(j, j->here, JS_NAT_FREE));
}

int64_t js_failed(const struct js *j)
{
    return j->nFailed;
}

int64_t js_reserved(const struct js *j)
{
    return j->reserved;
}

int64_t js_device_free(const struct js *j)
{
    return dev_free(j);
}

int64_t js_allocated(const struct js *j)
{
    return j->allocated;
}

int64_t js_allocated_blocks(const struct js *j)
{
    return j->allocatedBlocks;
}

/* ---- pinned host memory ---- */

int js_pin_alloc(struct js *j, int64_t bytes, int site)
{
    int64_t size = 4096;
    while (size < bytes) size *= 2; /* CachingHostAllocator: power-of-two blocks */
    for (int i = 0; i < j->nPin; i++)
        if (j->aPin[i].bFree && j->aPin[i].size == size) {
            j->aPin[i].bFree = 0;
            return i;
        }
    j->aPin = grow(j->aPin, &j->nPinAlloc, j->nPin, sizeof *j->aPin);
    j->aPin[j->nPin].addr = j->hostNext;
    j->aPin[j->nPin].size = size;
    j->aPin[j->nPin].bFree = 0;
    j->hostNext += (size + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
    {
        /* on the pin-memory thread; page-locking costs about 0.25 ms per MiB */
        int64_t corr = next_corr(j), t = j->cpu, d = 20000 + size / MiB * 250000, stack = stack_of(j, site, JS_NAT_PIN);
        api_row(j, 7, corr, t, t + d, j->tidPin, 0, size, j->aPin[j->nPin].addr, 0, 0, TG_NULL, stack);
        mem_row(j, t + d / 2, VT_MEMOP_ALLOC, VT_MEMKIND_PINNED, j->aPin[j->nPin].addr, size, corr, 7, j->tidPin, stack, 0);
    }
    return j->nPin++;
}

void js_pin_free(struct js *j, int h)
{
    if (h >= 0 && h < j->nPin) j->aPin[h].bFree = 1; /* cached for reuse, never cudaFreeHost'd */
}

int64_t js_pin_addr(const struct js *j, int h)
{
    return h >= 0 && h < j->nPin ? j->aPin[h].addr : 0;
}

/* ---- copies and kernels ---- */

void js_h2d(struct js *j, int t, int64_t bytes, int hostKind, int64_t hostAddr, int site)
{
    /* the GPU's host link (js_aGpu): pinned copies at the link's speed, pageable ones staged by the driver */
    double gbps = hostKind == JS_PINNED ? j->pGpu->pinnedGBps : j->c.pageableGBps > 0 ? j->c.pageableGBps : j->pGpu->pageableGBps;
    int64_t corr = next_corr(j), c = j->cpu, start, end, stack = stack_of(j, site, JS_NAT_COPY);
    int64_t dst = t >= 0 && t < j->nTen ? j->aTen[t].addr : 0;
    struct tg_copyrow r;
    start = (c + 3000 > j->gpu ? c + 3000 : j->gpu);
    end = start + 2000 + (int64_t)((double)bytes / gbps);
    j->gpu = end;
    int64_t src = hostAddr ? hostAddr : 0x7f4c3a000000 + (int64_t)js_rand(j, 1 << 16) * 4096;
    api_row(j, 61, corr, c, hostKind == JS_PINNED ? c + 6000 : end + 4000, j->tidMain, 0, bytes, 0, src, dst, STREAM,
            stack);
    /* the addresses the call named, as the tracer records them for every copy */
    tg_use_row(j->g, corr, VT_USE_MEMCPY_SRC, src, c, j->device);
    if (dst) tg_use_row(j->g, corr, VT_USE_MEMCPY_DST, dst, c, j->device);
    r = (struct tg_copyrow){start, end, j->device, 1, STREAM, corr, VT_COPY_HTOD, hostKind, VT_MEMKIND_DEVICE, bytes,
                            1, hostAddr ? hostAddr : TG_NULL, dst ? dst : TG_NULL};
    if (!hostAddr) r.src = TG_NULL;
    tg_copy_row(j->g, &r);
    if (j->firstKernel) {
        j->copyNs += end - start;
        if (hostKind != JS_PINNED) j->pageableNs += end - start;
    }
    if (j->c.pObs && j->c.pObs->xCopy) j->c.pObs->xCopy(j->c.pObs->p, j, c, start, end, VT_COPY_HTOD, hostKind, bytes, corr);
    /* a pageable source is staged by the driver: the call returns when the copy is done */
    j->cpu = hostKind == JS_PINNED ? c + 8000 : end + 5000;
}

void js_d2h(struct js *j, int t, int64_t bytes, int site)
{
    int64_t corr = next_corr(j), c = j->cpu, start, end, stack = stack_of(j, site, JS_NAT_COPY);
    int64_t src = t >= 0 && t < j->nTen ? j->aTen[t].addr : 0, host = 0x7ffd5e000000 + (int64_t)js_rand(j, 1 << 12) * 64;
    struct tg_copyrow r;
    start = c + 3000 > j->gpu ? c + 3000 : j->gpu;
    end = start + 1500 + bytes / 10;
    j->gpu = end;
    api_row(j, 61, corr, c, end + 3000, j->tidMain, 0, bytes, 0, src, host, STREAM, stack);
    if (src) tg_use_row(j->g, corr, VT_USE_MEMCPY_SRC, src, c, j->device);
    tg_use_row(j->g, corr, VT_USE_MEMCPY_DST, host, c, j->device);
    r = (struct tg_copyrow){start, end, j->device, 1, STREAM, corr, VT_COPY_DTOH, VT_MEMKIND_DEVICE, VT_MEMKIND_PAGEABLE,
                            bytes, 1, src ? src : TG_NULL, host};
    tg_copy_row(j->g, &r);
    if (j->firstKernel) {
        j->copyNs += end - start;
        j->pageableNs += end - start;
    }
    if (j->c.pObs && j->c.pObs->xCopy) j->c.pObs->xCopy(j->c.pObs->p, j, c, start, end, VT_COPY_DTOH, JS_PAGEABLE, bytes, corr);
    tg_sync_row(j->g, end, end + 2000, 3, STREAM, corr + 0); /* the wait for the copy */
    j->cpu = end + 5000;
}

/* The string id of template name n. */
static int64_t name_id(struct js *j, int n)
{
    if (!j->aNameId[n]) j->aNameId[n] = tg_string(j->g, azName[n]);
    return j->aNameId[n];
}

/* Launch one kernel (string id nameId) lasting dur on the GPU, using the allocations of the tensors. */
static void launch(struct js *j, int64_t nameId, const char *zName, int64_t dur, int grid, int block, const int *aT, int nT)
{
    int64_t corr = next_corr(j), c = j->cpu, start, aBase[256];
    int nBase = 0, nSeen = 0;
    struct tg_kernelrow k;
    /* kernel-argument scanning: one use per distinct allocation a parameter points into (the tensor, its
     * segment, or the page of an expandable segment its start lies in: each page is a cuMemMap of its own) */
    for (int i = 0; i < nT; i++) {
        int64_t base, addr;
        const struct seg *pS;
        if (aT[i] < 0 || aT[i] >= j->nTen || !j->aTen[aT[i]].bLive) continue;
        addr = j->aTen[aT[i]].addr;
        pS = &j->aSeg[j->aBlk[j->aTen[aT[i]].blk].seg];
        base = j->c.mode == JS_TENSORS ? addr : pS->page ? pS->addr + (addr - pS->addr) / pS->page * pS->page : pS->addr;
        int bDup = 0;
        for (int k2 = 0; k2 < nBase && !bDup; k2++) bDup = aBase[k2] == base;
        if (bDup) continue;
        nSeen++;
        if (nBase < (int)(sizeof aBase / sizeof aBase[0])) aBase[nBase++] = base;
    }
    api_row(j, 102, corr, c, c + 4000, j->tidMain, 0, 0, 0, 0, 0, STREAM, TG_NULL);
    if (j->bGraph) { /* captured into a graph: launched later by cudaGraphLaunch, no kernel runs now */
        for (int i = 0; i < nBase && i < USES_MAX; i++) tg_use_row(j->g, corr, VT_USE_KERNEL_ARG, aBase[i], c + 2000, j->device);
        j->cpu = c + LAUNCH_CPU_NS;
        return;
    }
    for (int i = 0; i < nBase && i < USES_MAX; i++) tg_use_row(j->g, corr, VT_USE_KERNEL_ARG, aBase[i], c + 2000, j->device);
    if (nSeen > USES_MAX) tg_dropped_row(j->g, c + 2000, VT_DROP_MAP, "buffer uses of one launch beyond 64", nSeen - USES_MAX);
    start = c + 5000 > j->gpu ? c + 5000 : j->gpu;
    k = (struct tg_kernelrow){start, start + (dur > 1000 ? dur : 1000), j->device, 1, STREAM, corr, nameId,
                              grid > 0 ? grid : 1, 1, 1, block > 0 ? block : 128, 1, 1, 0, 0, 32};
    tg_kernel_row(j->g, &k);
    if (!j->firstKernel) j->firstKernel = c;
    if (j->c.pObs && j->c.pObs->xKernel) j->c.pObs->xKernel(j->c.pObs->p, j, c, k.start, k.end, zName, corr);
    j->gpu = k.end;
    j->cpu = c + LAUNCH_CPU_NS;
}

void js_launch(struct js *j, int idx, const int *aT, int nT)
{
    const struct kseq *s = j->seq;
    if (!s || idx < 0 || idx >= s->n) return;
    launch(j, name_id(j, s->aName[idx]), azName[s->aName[idx]], (int64_t)(s->aDur[idx] * j->c.timeScale), s->aGrid[idx],
           s->aBlock[idx], aT, nT);
}

void js_launch_named(struct js *j, const char *zName, int64_t durNs, const int *aT, int nT)
{
    launch(j, tg_string(j->g, zName), zName, durNs, 1024, 256, aT, nT);
}

void js_play(struct js *j, char role, int k, int n, const int *aT, int nT)
{
    const char *p = strchr(zRoles, role);
    int r = p ? (int)(p - zRoles) : 0, a, b;
    if (j->nPos[r] == 0) r = 0; /* a role the step lacks: its work runs as elementwise kernels */
    if (j->nPos[r] == 0 || n <= 0) return;
    a = (int)((int64_t)k * j->nPos[r] / n);
    b = (int)((int64_t)(k + 1) * j->nPos[r] / n);
    if (b <= a) b = a + 1;
    for (int i = a; i < b && i < j->nPos[r]; i++) js_launch(j, j->aPos[r][i], aT, nT);
}

void js_sync(struct js *j)
{
    int64_t corr = next_corr(j), c = j->cpu, e = j->gpu > c ? j->gpu : c;
    api_row(j, 121, corr, c, e + 3000, j->tidMain, 0, 0, 0, 0, 0, STREAM, TG_NULL);
    tg_sync_row(j->g, c, e + 2000, 3, STREAM, corr);
    j->cpu = e + 4000;
}

/* ---- NVTX ---- */

void js_push(struct js *j, const char *zName)
{
    if (j->nNvtx >= NVTX_MAX) abort();
    snprintf(j->azNvtx[j->nNvtx], sizeof j->azNvtx[0], "%s", zName);
    j->aNvtxStart[j->nNvtx++] = j->cpu;
    j->cpu += 1500;
}

void js_pop(struct js *j)
{
    if (j->nNvtx == 0) abort();
    j->nNvtx--;
    tg_nvtx_row(j->g, j->aNvtxStart[j->nNvtx], j->cpu, VT_NVTX_PUSHPOP, tg_string(j->g, j->azNvtx[j->nNvtx]), j->tidMain,
                j->nNvtx);
    if (j->c.pObs && j->c.pObs->xRange) j->c.pObs->xRange(j->c.pObs->p, j, j->aNvtxStart[j->nNvtx], j->cpu, j->azNvtx[j->nNvtx]);
    j->cpu += 1500;
}

/* ---- CUDA graphs ---- */

void js_graph_capture(struct js *j, int bOn)
{
    j->bGraph = bOn != 0;
}

void js_graph_launch(struct js *j, const char *zWhich)
{
    int64_t corr = next_corr(j), c = j->cpu, t;
    api_row(j, 107, corr, c, c + 12000, j->tidMain, 0, 0, 0, 0, 0, STREAM, TG_NULL);
    t = c + 15000 > j->gpu ? c + 15000 : j->gpu;
    for (int r = 0; r < 5; r++) {
        if (!strchr(zWhich, zRoles[r])) continue;
        for (int i = 0; i < j->nPos[r]; i++) {
            int idx = j->aPos[r][i];
            int64_t dur = (int64_t)(j->seq->aDur[idx] * j->c.timeScale);
            struct tg_kernelrow k = {t, t + (dur > 1000 ? dur : 1000), j->device, 1, STREAM, corr,
                                     name_id(j, j->seq->aName[idx]), j->seq->aGrid[idx] > 0 ? j->seq->aGrid[idx] : 1, 1, 1,
                                     j->seq->aBlock[idx] > 0 ? j->seq->aBlock[idx] : 128, 1, 1, 0, 0, 32};
            tg_kernel_row(j->g, &k);
            if (j->c.pObs && j->c.pObs->xKernel)
                j->c.pObs->xKernel(j->c.pObs->p, j, c, k.start, k.end, azName[j->seq->aName[idx]], corr);
            t = k.end + 300;
        }
    }
    j->bGraphLaunched = 1;
    j->gpu = t;
    j->cpu = c + 14000;
}

/* ---- the process seen from outside ---- */

int64_t js_template_ns(const char *zTag, const char *zRoles)
{
    int64_t n = 0;
    for (int i = 0; i < nSeq; i++) {
        if (strcmp(aSeq[i].zTag, zTag)) continue;
        for (int k = 0; k < aSeq[i].n; k++)
            if (strchr(zRoles, aSeq[i].aRole[k])) n += aSeq[i].aDur[k];
    }
    return n;
}

void js_last_oom(const struct js *j, int64_t *pBytes, int64_t *pFree, int64_t *pAllocated, int64_t *pReserved)
{
    *pBytes = j->lastOomBytes;
    *pFree = j->lastOomFree;
    *pAllocated = j->lastOomAllocated;
    *pReserved = j->lastOomReserved;
}

int64_t js_pageable_ns(const struct js *j)
{
    return j->pageableNs;
}

int64_t js_copy_ns(const struct js *j)
{
    return j->copyNs;
}

int64_t js_first_kernel(const struct js *j)
{
    return j->firstKernel;
}

int64_t js_other_bytes(const struct js *j)
{
    return j->c.otherBytes;
}

int64_t js_pid(const struct js *j)
{
    return j->pid;
}

int js_device(const struct js *j)
{
    return j->device;
}

int js_expandable(const struct js *j)
{
    return j->c.bExpandable && j->c.mode == JS_SEGMENTS;
}

int64_t js_wall_ns(const struct js *j, int64_t ts)
{
    return ts - j->anchorCupti + j->anchorWall;
}

const char *js_site_spec(const struct js *j, int site)
{
    return site >= 0 && site < j->nSite ? j->aSite[site].zSpec : "";
}

const char *js_hostname(const struct js *j)
{
    return j->zHost;
}

const struct js_gpu *js_gpu_of(const struct js *j)
{
    return j->pGpu;
}

int64_t js_peak_allocated(const struct js *j)
{
    return j->peakAllocated;
}

int64_t js_peak_reserved(const struct js *j)
{
    return j->peakReserved;
}

void js_peak_reset(struct js *j)
{
    j->peakAllocated = j->allocated;
    j->peakReserved = j->reserved;
}

void js_range_note(struct js *j, const char *zName, int64_t start)
{
    if (j->c.pObs && j->c.pObs->xRange) j->c.pObs->xRange(j->c.pObs->p, j, start, j->cpu, zName);
}

int js_depth(const struct js *j)
{
    return j->nNvtx;
}

/* ---- NCCL ---- */

void js_nccl_init(struct js *j, int n, int64_t bytes)
{
    int64_t stack = stack_of(j, j->here, JS_NAT_NCCL);
    for (int i = 0; i < n; i++) {
        int64_t handle = 0x5a0000 + 16 * (int64_t)i + 1, addr = va_take(j, bytes), c = j->cpu;
        int64_t aT[4] = {c, c + 60000, c + 70000, c + 90000};
        if (!fits(j, bytes)) return;
        vmm_create_map(j, aT, handle, TG_NULL, addr, bytes, j->tidNccl, stack);
        j->ncclBytes += bytes;
        j->cpu = c + 100000;
    }
}

/* ---- the process ---- */

/* Free j and everything it owns (the trace must be closed or never opened). */
static void js_release(struct js *j)
{
    for (int i = 0; i < j->nSite; i++) free(j->aSite[i].zSpec);
    for (int r = 0; r < 5; r++) free(j->aPos[r]);
    free(j->aSite);
    free(j->aBlk);
    free(j->aBlkFree);
    for (int p = 0; p < NPOOL; p++) free(j->aFree[p]);
    for (int s = 0; s < j->nSeg; s++) free(j->aSeg[s].aHandle);
    free(j->aSeg);
    free(j->aTen);
    free(j->aPin);
    free(j->aVa);
    free(j->aNameId);
    free(j);
}

struct js *js_open(const struct js_cfg *c)
{
    struct js *j = calloc(1, sizeof *j);
    char z[256];
    if (!j) return NULL;
    j->c = *c;
    j->rng = c->seed * 0x2545F4914F6CDD1Dull + 0x1234567u;
    j->pGpu = c->pGpu ? c->pGpu : &js_aGpu[0];
    j->total = c->deviceTotal ? c->deviceTotal : j->pGpu->total;
    j->device = c->world > 0 ? c->rank % 8 : 0;
    j->pid = 40000 + 211 * (int64_t)c->rank + (int64_t)js_rand(j, 150);
    j->tidMain = j->pid;
    j->tidAutograd = j->pid + 31;
    j->tidPin = j->pid + 44;
    j->tidNccl = j->pid + 57;
    j->here = -1;
    /* the CUPTI clock in ns, near the wall clock */
    j->cpu = (c->startWall ? c->startWall : 1763700000000000000LL) + (int64_t)js_rand(j, 5000000);
    j->gpu = j->cpu;
    j->vaNext = 0x7f3c00000000LL + (int64_t)c->rank * 0x10000000000LL;
    j->hostNext = 0x7f1a00000000LL;
    j->poolAddr = 0x7f3bf0000000LL + (int64_t)c->rank * 0x10000000000LL;
    for (int i = 0; i < nSeq; i++)
        if (c->zTemplate && !strcmp(aSeq[i].zTag, c->zTemplate)) j->seq = &aSeq[i];
    if (!j->seq) {
        fprintf(stderr, "accgen: no kernel sequence '%s'\n", c->zTemplate ? c->zTemplate : "");
        js_release(j);
        return NULL;
    }
    j->aNameId = calloc((size_t)nName + 1, sizeof(int64_t));
    for (int r = 0; r < 5 && j->aNameId; r++) {
        int stride = c->kernelStride > 0 ? c->kernelStride : 1, nRole = 0;
        j->aPos[r] = malloc(sizeof(int) * (size_t)(j->seq->n + 1));
        if (!j->aPos[r]) break;
        for (int i = 0; i < j->seq->n; i++)
            if (j->seq->aRole[i] == zRoles[r] && nRole++ % stride == 0) j->aPos[r][j->nPos[r]++] = i;
    }
    j->g = j->aNameId && j->aPos[4] ? tg_open_at(c->zPath, j->cpu - 2000000) : NULL;
    if (!j->g) {
        fprintf(stderr, "accgen: cannot create %s\n", c->zPath);
        js_release(j);
        return NULL;
    }
    meta(j, "pid", "%lld", j->pid);
    meta(j, "ppid", "%lld", c->world > 0 ? 39000 + c->rank / 8 : j->pid - 7);
    tg_meta(j->g, "tracer_version", "0.1.0");
    if (c->zHost) snprintf(j->zHost, sizeof j->zHost, "%s", c->zHost);
    else snprintf(j->zHost, sizeof j->zHost, "gpu-node-%02d", c->world > 0 ? c->rank / 8 : 0);
    tg_meta(j->g, "hostname", j->zHost);
    tg_meta(j->g, "exe", c->bWindows ? "C:\\Users\\alice\\miniconda3\\envs\\torch\\python.exe" : "/usr/bin/python3.12");
    tg_meta(j->g, "cmdline", c->zCmd ? c->zCmd : "python train.py");
    if (c->world > 0) {
        meta(j, "rank", "%lld", c->rank);
        meta(j, "local_rank", "%lld", c->rank % 8);
        meta(j, "world_size", "%lld", c->world);
        meta(j, "env.RANK", "%lld", c->rank);
        meta(j, "env.LOCAL_RANK", "%lld", c->rank % 8);
        meta(j, "env.WORLD_SIZE", "%lld", c->world);
    }
    tg_meta(j->g, "env.CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7");
    if (c->mode == JS_TENSORS) tg_meta(j->g, "env.PYTORCH_ALLOC_CONF", "backend:cudaMallocAsync");
    else if (c->bExpandable) tg_meta(j->g, "env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
    tg_meta(j->g, "cuda_driver_version", "13000");
    tg_meta(j->g, "cupti_version", "130001");
    j->anchorCupti = j->cpu - 2000000;
    j->anchorWall = j->cpu - 2000000 + 371000;
    meta(j, "clock_anchor_cupti_ns", "%lld", j->anchorCupti);
    meta(j, "start_ns", "%lld", j->anchorCupti);
    meta(j, "clock_anchor_wall_ns", "%lld", j->anchorWall);
    tg_meta(j->g, "config.output", "/scratch/alice/vramtrace-%h-%p.db");
    tg_meta(j->g, "config.buffer_size", "4194304");
    tg_meta(j->g, "config.max_memory", "268435456");
    tg_meta(j->g, "config.flush_ms", "500");
    tg_meta(j->g, "config.backtrace", "16");
    tg_meta(j->g, "config.python_stacks", "1");
    tg_meta(j->g, "config.kernel_args", "1");
    tg_meta(j->g, "config.quiet", "0");
    tg_meta(j->g, "config.tensors", c->mode == JS_TENSORS ? "1" : "0");
    tg_exec(j->g, "DELETE FROM meta WHERE key = 'closed_cleanly'");
    snprintf(z, sizeof z,
             "INSERT INTO device(id, name, uuid, total_bytes, cc_major, cc_minor, sm_count, pci_bus, pci_device,"
             " global_memory_bandwidth_kbps) VALUES(%d, '%s', 'GPU-5d1f0e8a-3c7b-4e2a-9f61-0b8c%08x',"
             " %lld, %d, %d, %d, %d, 0, %lld)",
             j->device, j->pGpu->zName, (unsigned)(c->seed * 2654435761u + (unsigned)c->rank), (long long)j->total,
             j->pGpu->ccMajor, j->pGpu->ccMinor, j->pGpu->sms, 0x18 + j->device * 0x10, (long long)j->pGpu->memBwKbps);
    tg_exec(j->g, z);
    /* the CUDA runtime's own allocations at context creation: MEMORY2 records with no API call behind them */
    j->cpu += 180000000; /* import torch, CUDA initialisation */
    {
        int64_t a = va_take(j, 2 * MiB);
        mem_row(j, j->cpu, VT_MEMOP_ALLOC, VT_MEMKIND_DEVICE, a, 2 * MiB, 0, 0, 0, TG_NULL, 0);
        j->internalBytes += 2 * MiB;
    }
    j->gpu = j->cpu;
    return j;
}

int js_close(struct js *j, int bTeardown, int bClean)
{
    int rc;
    char z[32];
    while (j->nNvtx > 0) { /* ranges open at the end: written with their end NULL when killed */
        if (bClean) js_pop(j);
        else {
            j->nNvtx--;
            tg_nvtx_row(j->g, j->aNvtxStart[j->nNvtx], TG_NULL, VT_NVTX_PUSHPOP,
                        tg_string(j->g, j->azNvtx[j->nNvtx]), j->tidMain, j->nNvtx);
        }
    }
    if (bTeardown)
        for (int t = j->nTen - 1; t >= 0; t--) js_free(j, t);
    if (j->bGraphLaunched) /* graph kernels: their arguments were not scanned, and they carry the graph's id */
        tg_exec(j->g, "UPDATE kernel SET graph_id = 1, graph_node_id = rowid, args_scanned = 0"
                      " WHERE correlation IN (SELECT correlation FROM api_call WHERE api = 107)");
    if (j->gpu > j->cpu) j->cpu = j->gpu;
    if (j->c.pObs && j->c.pObs->xClose) j->c.pObs->xClose(j->c.pObs->p, j);
    j->cpu += 3000000;
    if (bClean) {
        snprintf(z, sizeof z, "%lld", (long long)j->cpu);
        tg_meta(j->g, "end_ns", z);
        tg_meta(j->g, "dropped_queue", "0");
        tg_meta(j->g, "dropped_writer", "0");
        tg_meta(j->g, "dropped_map", "0");
        tg_meta(j->g, "closed_cleanly", "1");
    }
    rc = tg_close(j->g);
    js_release(j);
    return rc;
}
