/* Internal: host records, what the CUPTI callbacks hand the writer (API calls, OOMs, memory events, stacks, meta). */
#ifndef VT_TRACER_HREC_H
#define VT_TRACER_HREC_H

#include <stdint.h>

/* Host-side record types (from CUPTI callbacks), see struct vt_hrec. */
enum vt_hrec_type {
    VT_HREC_API_CALL = 1, /* -> api_call */
    VT_HREC_OOM,          /* -> oom_event */
    VT_HREC_MEMORY,       /* -> memory_event (VMM and other events seen only in callbacks) */
    VT_HREC_BUFFER_USE,   /* -> buffer_use */
    VT_HREC_DROPPED,      /* -> dropped */
    VT_HREC_OVERHEAD,     /* -> overhead (source 'vramtrace') */
    VT_HREC_STACK,        /* -> stack + frame (one new deduplicated stack) */
    VT_HREC_DEVICE,       /* -> device */
    VT_HREC_META,         /* -> meta */
    VT_HREC_NVTX,         /* no row: an NVTX start/end range's id, for the MARKER decoder */
};

/* What a kernel launch's api_call says of its arguments (kernel.args_scanned). */
enum vt_scan {
    VT_SCAN_NONE = 0,     /* not a kernel launch (or a graph launch: its kernels say) */
    VT_SCAN_NOT_DONE = 1, /* a launch whose arguments were not scanned (scanning off, layout unknown) */
    VT_SCAN_DONE = 2      /* a launch whose arguments were scanned: its buffer uses are complete */
};

/*
 * A native frame without zModule is a raw return address (what captures in
 * callbacks record): the writer resolves it to module, module-relative pc and
 * exported name (modres.h). One with zModule is stored as given (pc relative).
 */
struct vt_frame {
    int kind;          /* VT_FRAME_NATIVE or VT_FRAME_PYTHON */
    uint64_t pc;       /* native: return address (absolute when raw); python: 0 */
    char *zFunction;   /* heap strings, owned by the writer after submit; may be NULL */
    char *zFile;
    char *zModule;
    int line;          /* 0 if unknown */
};

struct vt_hrec {
    int type; /* enum vt_hrec_type */
    union {
        struct { /* VT_HREC_API_CALL; scan: enum vt_scan, for kernel launches */
            int api; uint32_t correlation; uint64_t start, end; int64_t thread;
            int device; int status; uint64_t bytes, ptr, src, dst, stream; int64_t stack_id;
            int scan;
        } api;
        struct { /* VT_HREC_OOM */
            uint64_t ts; int api; uint32_t correlation; int device; int status;
            uint64_t bytes, free_bytes, total_bytes; int64_t thread; int64_t stack_id;
        } oom;
        struct vt_hrec_mem { /* VT_HREC_MEMORY; bytes 0: unknown */
            uint64_t ts; int op, mem_kind; uint64_t address, bytes; int device;
            uint32_t correlation; int api; uint64_t handle; int64_t thread; int64_t stack_id;
        } mem;
        struct { /* VT_HREC_BUFFER_USE */
            uint32_t correlation; int kind; uint64_t address, ts; int device;
        } use;
        struct { /* VT_HREC_DROPPED; zWhat is a static string */
            uint64_t ts; int source; const char *zWhat; uint64_t count;
        } dropped;
        struct { /* VT_HREC_OVERHEAD; zKind is a static string */
            const char *zKind; uint64_t start, end, count;
        } overhead;
        struct { /* VT_HREC_STACK; aFrame is heap, owned by the writer after submit */
            int64_t id; uint64_t hash; int nFrame; struct vt_frame *aFrame;
        } stack;
        struct { /* VT_HREC_DEVICE */
            int id; char zName[128]; char zUuid[48]; uint64_t total_bytes;
            int cc_major, cc_minor, sm_count, pci_bus, pci_device; uint64_t bandwidth_kbps;
        } device;
        struct { /* VT_HREC_META; zValue is heap, owned by the writer after submit */
            char zKey[64]; char *zValue;
        } meta;
        struct { /* VT_HREC_NVTX: nvtxRangeStart* returned id (bEnd 0), nvtxRangeEnd was given id (1) */
            uint64_t id; int bEnd;
        } nvtx;
    } u;
};

#endif
