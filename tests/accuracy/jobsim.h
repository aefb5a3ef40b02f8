/* A CUDA process as the tracer sees it: allocator, copies, launches and NVTX written as trace rows. */
#ifndef VT_ACC_JOBSIM_H
#define VT_ACC_JOBSIM_H

#include <stddef.h>
#include <stdint.h>

#include "tracegen.h"

/*
 * One simulated process writes one trace, row for row what libvramtrace.so would
 * write for it (tracer/decode.c, docs/tracer.md): an api_call row per traced call with
 * its correlation id, memory_event rows from MEMORY2 records (pool fields for
 * cudaMallocAsync, the release threshold UINT64_MAX stored as -1), buffer_use rows from
 * kernel-argument scanning (allocation base addresses, at most 64 per launch, the rest
 * counted in `dropped`) and from copies (the addresses each names), kernel and memcpy
 * rows on a GPU clock that runs behind the CPU clock, NVTX ranges written when they close, and stacks of Python frames over native
 * frames. What PyTorch does in between is modelled here too: the native caching
 * allocator (segment mode: only its cudaMalloc/cudaFree of segments are visible; with
 * expandable segments its cuMemCreate + cuMemMap of pages and cuMemUnmap + cuMemRelease) or the
 * cudaMallocAsync backend (tensor mode: one call per tensor), the caching host allocator
 * for pinned memory, NCCL's cuMem allocations and the CUDA runtime's own allocations.
 *
 * Times are nanoseconds on the CUPTI clock. Tensors are handles (>= 0); js_alloc returns
 * -1 when the allocation failed with an out-of-memory error (after PyTorch's retry).
 */

enum js_mode { JS_SEGMENTS = 0, JS_TENSORS = 1 };
enum js_hostkind { JS_PAGEABLE = 1, JS_PINNED = 2 };
/* native frames under the Python ones, by what made the call */
enum js_native {
    JS_NAT_ALLOC = 0, /* an ATen operator allocating through the CUDA allocator */
    JS_NAT_BACKWARD,  /* the autograd engine's thread (no Python frames) */
    JS_NAT_CUBLAS,    /* cuBLAS workspace through the CUDA allocator */
    JS_NAT_PIN,       /* the caching host allocator (cudaHostAlloc) */
    JS_NAT_COPY,      /* Tensor.to / copy_ */
    JS_NAT_NCCL,      /* NCCL communicator buffers (cuMemCreate/cuMemMap) */
    JS_NAT_FREE,      /* a tensor released (cudaFreeAsync) or the allocator emptying its cache */
    JS_NAT_ACCGRAD,   /* a parameter's gradient made by AccumulateGrad on the autograd engine's thread */
    JS_NAT_N
};
/* Whether chain `native` runs on the autograd engine's thread (no Python frames). */
int js_native_engine(int native);

/* A GPU model as the trace's device row shows it, and its host link as PyTorch jobs see it. */
struct js_gpu {
    const char *zName;      /* as CUDA names it */
    int64_t total;          /* bytes, as cuMemGetInfo reports them */
    int ccMajor, ccMinor, sms;
    int64_t memBwKbps;      /* device memory bandwidth (CUPTI's figure) */
    double pinnedGBps;      /* host-to-device copies from pinned memory */
    double pageableGBps;    /* from pageable memory (staged by the driver) */
};
extern const struct js_gpu js_aGpu[];
extern const int js_nGpu;

struct js;
/*
 * What PyTorch's own recorders (its allocation history, torch.profiler) see of the process, as
 * it happens: the caching allocator's blocks and segments, its out-of-memory errors, the ranges
 * closed, kernels and copies. Times are on the process's CUPTI clock (js_wall_ns converts).
 * Every callback may be NULL.
 */
struct js_obs {
    void *p;
    /* a tensor allocated (bAlloc) or freed; site and native chain of the call */
    void (*xBlock)(void *p, const struct js *j, int64_t ts, int bAlloc, int64_t addr, int64_t bytes, int site, int native);
    /* a segment reserved (bAlloc) or released by the caching allocator */
    void (*xSegment)(void *p, const struct js *j, int64_t ts, int bAlloc, int64_t addr, int64_t bytes, int site, int native);
    /* pages of an expandable segment mapped (bMap) or unmapped over [addr, addr + bytes), one call per
     * range as PyTorch records them (map_block, unmap_block); page: the pool's page size (2 MiB small,
     * 20 MiB large); site and native chain of the request that mapped them (JS_NAT_FREE: unmapped) */
    void (*xMap)(void *p, const struct js *j, int64_t ts, int bMap, int64_t addr, int64_t bytes, int64_t page, int site,
                 int native);
    /* an allocation failed after the allocator's retries: the request and the device's free memory */
    void (*xOom)(void *p, const struct js *j, int64_t ts, int64_t bytes, int64_t freeBytes, int site, int native);
    /* an NVTX range of the main thread closed */
    void (*xRange)(void *p, const struct js *j, int64_t start, int64_t end, const char *zName);
    /* a kernel launched at tCall by the host ran [start, end) on the GPU */
    void (*xKernel)(void *p, const struct js *j, int64_t tCall, int64_t start, int64_t end, const char *zName, int64_t corr);
    /* a copy (VT_COPY_*) called at tCall ran [start, end); hostKind JS_PAGEABLE or JS_PINNED */
    void (*xCopy)(void *p, const struct js *j, int64_t tCall, int64_t start, int64_t end, int copyKind, int hostKind,
                  int64_t bytes, int64_t corr);
    /* the process ends (js_close, after the teardown) */
    void (*xClose)(void *p, const struct js *j);
};

struct js_cfg {
    const char *zPath;      /* the trace file */
    int mode;               /* enum js_mode */
    int rank, world;        /* world 0: no rank variables */
    int bWindows;           /* frames as a Windows build of PyTorch writes them */
    uint64_t seed;
    int64_t deviceTotal;    /* bytes; 0: an H100 80GB */
    int64_t otherBytes;     /* device memory held by other processes */
    int64_t unknownMemInfo; /* 1: cuMemGetInfo fails at OOMs (free/total unknown) */
    const char *zCmd;       /* command line (meta) */
    const char *zTemplate;  /* kernel sequence of one real step (kernels.tsv): resnet50, ddp, nsys, nsys_mangled */
    int kernelStride;       /* play every k-th kernel of the template (>= 1) */
    double timeScale;       /* multiplies the template's kernel durations */
    int64_t startWall;      /* wall-clock ns of the process start (meta clock anchor) */
    const struct js_gpu *pGpu; /* NULL: an H100 80GB on PCIe 5 (deviceTotal, when set, overrides its memory) */
    double pageableGBps;    /* > 0: this host's pageable copy speed instead of the GPU's typical one */
    const struct js_obs *pObs; /* PyTorch's recorders, or NULL */
    const char *zHost;      /* hostname (meta); NULL: gpu-node-NN */
    int bExpandable;        /* segment mode: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (pages
                             * cuMemCreate'd and cuMemMap'ped into one growing segment per pool) */
};

/* Load the kernel sequences (kernels.tsv); 0 or -1 with a message. Call once. */
int js_load_kernels(const char *zPath);

/* Open a process writing the trace c->zPath; NULL on error (message printed). */
struct js *js_open(const struct js_cfg *c);
/*
 * End the process: with bTeardown, free every live tensor in reverse order (a script whose
 * main() returns; segments stay cached); bClean 0 leaves the trace as a killed process's
 * (no closed_cleanly). Writes and closes the trace; returns 0 or -1. Frees j.
 */
int js_close(struct js *j, int bTeardown, int bClean);

/*
 * A Python call site: frames innermost first separated by '|', each "FILE:LINE:FUNCTION";
 * FILE prefixed "lib:" is under site-packages, "std:" the standard library, "gen:" the
 * torch.compile cache (/tmp/torchinductor_<user>), otherwise the user's project. "" for
 * none (a C++ thread). Returns a site handle.
 */
int js_site(struct js *j, const char *zSpec);
/*
 * Segment bytes the allocator reserved, since the last js_resv_mark (or the start), for
 * allocations made through native chain `native` from sites whose spec contains zFrame (every
 * site: NULL): the call sites a segment-level trace can attribute growth to.
 */
void js_resv_mark(struct js *j);
int64_t js_resv_since_mark(const struct js *j, const char *zFrame, int native);
/* The site whose frames are used for frees, copies and NCCL calls made from now on. */
void js_here(struct js *j, int site);

/* Tensors on the device. */
int js_alloc(struct js *j, int64_t bytes, int site, int native);
void js_free(struct js *j, int t);
int64_t js_tensor_bytes(const struct js *j, int t);
void js_empty_cache(struct js *j);
/* The device memory held by the process (segments or pool), and its live tensor bytes. */
int64_t js_reserved(const struct js *j);
/* Device memory free now (what cuMemGetInfo would say). */
int64_t js_device_free(const struct js *j);
int64_t js_allocated(const struct js *j);
/* Allocations that failed after the allocator's retry (js_alloc returned -1) so far. */
int64_t js_failed(const struct js *j);
/* The live tensors' blocks, as PyTorch counts allocated memory (rounded sizes, unsplit remainders). */
int64_t js_allocated_blocks(const struct js *j);

/* Pinned host blocks (PyTorch's caching host allocator: power-of-two sizes, cached). */
int js_pin_alloc(struct js *j, int64_t bytes, int site);
void js_pin_free(struct js *j, int h);
int64_t js_pin_addr(const struct js *j, int h);

/* A host-to-device copy into tensor t (pageable copies block the CPU); site: the line that copies. */
void js_h2d(struct js *j, int t, int64_t bytes, int hostKind, int64_t hostAddr, int site);
/* A device-to-host copy of tensor t into pageable memory, waited for (tensor.item(), .cpu()). */
void js_d2h(struct js *j, int t, int64_t bytes, int site);

/* Kernels: slice k of n of the template's kernels of role ('F', 'B', 'O', 'Z', 'C'), each using the tensors. */
void js_play(struct js *j, char role, int k, int n, const int *aTensor, int nTensor);
/* One launch of kernel idx of the template (for names outside the step's flow). */
void js_launch(struct js *j, int idx, const int *aTensor, int nTensor);
/* Launch a kernel named zName (not from a template), lasting durNs on the GPU. */
void js_launch_named(struct js *j, const char *zName, int64_t durNs, const int *aTensor, int nTensor);
/* The CPU waits for the GPU (loss.item(), torch.cuda.synchronize()). */
void js_sync(struct js *j);
/* CPU time passes (Python, data loading). */
void js_cpu(struct js *j, int64_t ns);
int64_t js_now(const struct js *j);

/* NVTX push/pop ranges on the main thread (rows written when they close). */
void js_push(struct js *j, const char *zName);
void js_pop(struct js *j);
/* NVTX ranges open now. */
int js_depth(const struct js *j);

/* A record_function range [start, now) that is no NVTX range: only PyTorch's recorders see it. */
void js_range_note(struct js *j, const char *zName, int64_t start);

/* NCCL communicator buffers: n cuMemCreate + cuMemMap of `bytes` each, from libnccl. */
void js_nccl_init(struct js *j, int n, int64_t bytes);

/* CUDA graphs. Allocations between js_graph_capture(j, 1) and js_graph_capture(j, 0) come from the
 * graph's private pool (segment mode: segments of their own, kept while the graph lives, never
 * given back by empty_cache), and kernels launched are captured (their launch calls are traced, no
 * kernel runs). js_graph_launch replays the step's kernels of the roles in zRoles ("FBO") as one
 * cudaGraphLaunch whose kernels carry no scanned arguments (the tracer cannot read graph nodes). */
void js_graph_capture(struct js *j, int bOn);
void js_graph_launch(struct js *j, const char *zRoles);

/* GPU time of one step of template zTag: the durations of its kernels of the roles in zRoles ("FBOZC"). */
int64_t js_template_ns(const char *zTag, const char *zRoles);
/* The last allocation that ran out of memory: its request, the device's free memory after the
 * allocator's retry, and what the process had allocated (its tensors' blocks, as PyTorch counts
 * allocated memory) and reserved then (all 0 before any). */
void js_last_oom(const struct js *j, int64_t *pBytes, int64_t *pFree, int64_t *pAllocated, int64_t *pReserved);
/* Host-device copy time (ns) from pageable memory, and all copy time, that started after the first
 * kernel; the first kernel's launch time (0: none yet). */
int64_t js_pageable_ns(const struct js *j);
int64_t js_copy_ns(const struct js *j);
int64_t js_first_kernel(const struct js *j);
/* Device memory other processes hold. */
int64_t js_other_bytes(const struct js *j);

/* The process: its pid, its device, the wall-clock ns of CUPTI time ts, the spec of a site. */
int64_t js_pid(const struct js *j);
int js_device(const struct js *j);
/* Whether the caching allocator runs with expandable_segments:True (segment mode with js_cfg.bExpandable). */
int js_expandable(const struct js *j);
int64_t js_wall_ns(const struct js *j, int64_t ts);
const char *js_site_spec(const struct js *j, int site);
const char *js_hostname(const struct js *j);
const struct js_gpu *js_gpu_of(const struct js *j);
/* The full path of a spec's Python file entry ("lib:torch/x.py"), as this platform writes it, into z. */
void js_py_path(const struct js *j, const char *zFile, char *z, size_t n);
/* The highest live tensor bytes and reservation so far (js_peak_reset starts over). */
int64_t js_peak_allocated(const struct js *j);
int64_t js_peak_reserved(const struct js *j);
void js_peak_reset(struct js *j);

/* A deterministic random number in [0, n). */
uint64_t js_rand(struct js *j, uint64_t n);

#endif
