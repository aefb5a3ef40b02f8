/* Internal: the tracer's configuration, read once from the environment at injection time. */
#ifndef VT_TRACER_CONFIG_H
#define VT_TRACER_CONFIG_H

#include <stddef.h>

#define VT_CONFIG_DEFAULT_OUTPUT "vramtrace-%h-%p.db"
#define VT_CONFIG_MAX_BACKTRACE 64

struct vt_config {
    char zOutput[1024];  /* VRAMTRACE_OUTPUT pattern (%p %r %h %%), not yet expanded */
    size_t buffer_size;  /* VRAMTRACE_BUFFER_SIZE: bytes per CUPTI activity buffer */
    size_t max_memory;   /* VRAMTRACE_MAX_MEMORY: bound on buffers + host ring, bytes */
    unsigned flush_ms;   /* VRAMTRACE_FLUSH_MS: commit interval, 10..1000 */
    int backtrace;       /* VRAMTRACE_BACKTRACE: native stack depth, 0 = off */
    int python_stacks;   /* VRAMTRACE_PYTHON_STACKS: 0/1 */
    int kernel_args;     /* VRAMTRACE_KERNEL_ARGS: 0/1 */
    int quiet;           /* VRAMTRACE_QUIET: 0/1, suppresses the start line */
    int tensors;         /* VRAMTRACE_TENSORS: 0/1, set by `record --tensors` (PyTorch per-tensor
                          * allocations); stored so the analyzer knows the trace's level */
    int disabled;        /* VRAMTRACE_DISABLE: 0/1, tracing off entirely */
    size_t max_bytes;    /* VRAMTRACE_MAX_BYTES: bound on the trace's size (limit.h), 0 = none */
    long long start_after_ns; /* VRAMTRACE_START_AFTER: detail recorded from this long after the start, 0 = from it */
    long long stop_after_ns;  /* VRAMTRACE_STOP_AFTER: ... until this long after the start, 0 = to the end */
    int kernels_summary;      /* VRAMTRACE_KERNELS=summary (always-on mode, ksummary.h); full (0) by default */
    long long kernel_warmup_ns; /* VRAMTRACE_KERNEL_WARMUP: every kernel written this long after the start (30 s) */
    long long kernel_period_ns; /* VRAMTRACE_KERNEL_PERIOD: then one summary per kernel name this often (1 s) */
    int subscribers;     /* VRAMTRACE_SUBSCRIBERS: auto (0), several (1), one (2); enum vt__subs_policy */
    int lend_cupti;      /* VRAMTRACE_LEND_CUPTI (set by `record`): the record hook lends CUPTI to torch.profiler */
    long long time_base_ns; /* not from the environment: the caller sets it before
                             * vt__session_start (the CUPTI clock at start; 0 if unknown) */
    long long anchor_wall_ns; /* ... and CLOCK_REALTIME read right after it (the clock anchor); 0 if unknown */
    int nWarn;           /* number of warnings in zWarn */
    char zWarn[2048];    /* warning lines ("vramtrace: ...\n" each), for the caller to print */
};

/*
 * Fill *cfg from an environment lookup function (getenv in the library, a table
 * in tests). Never fails: a malformed value produces one warning line in
 * cfg->zWarn and the default is used. Sizes accept a plain byte count or a
 * K/M/G suffix (binary units); flags accept 0/1, true/false, yes/no, on/off.
 */
void vt__config_load(struct vt_config *cfg, const char *(*xGetenv)(const char *zName));

/*
 * Call xMeta(pCtx, key, value) once per configuration key ('config.output',
 * 'config.buffer_size', ...), values as text. Returns the first non-zero value
 * xMeta returned, or 0.
 */
int vt__config_meta(const struct vt_config *cfg, int (*xMeta)(void *pCtx, const char *zKey,
                                                             const char *zValue),
                    void *pCtx);

/* getenv with the signature vt__config_load and vt__procinfo_load expect. */
const char *vt__config_getenv(const char *zName);

#endif
