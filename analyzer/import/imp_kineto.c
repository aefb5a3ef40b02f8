/* torch.profiler / Kineto trace-event JSON (plain or gzip) to traces: memory events, kernels, copies, steps. */
#include "import.h"

#include <stdio.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/errors.h"
#include "util/text.h"
#include "json.h"
#include "vramtrace/schema.h"

/*
 * The document is read token by token; each element of traceEvents is read
 * as a small tree (json.h), turned into at most one row and dropped. Kineto
 * times are microseconds (integers in older traces, floats in newer ones),
 * relative to baseTimeNanoseconds when the trace has one; both give wall-clock
 * nanoseconds. Only GPU memory events (Device Type 1 CUDA, 6 HIP) are
 * imported; CPU ones are counted.
 */

#define KINETO_DEVICE_CUDA 1
#define KINETO_DEVICE_HIP 6 /* ROCm builds of PyTorch: the GPU is device type 6 */

/* The members of an event read, and those of its args. */
static const char *const azTop[] = {"name", "cat", "ph", "ts", "dur", "args", "tid", "pid"};
enum { T_NAME, T_CAT, T_PH, T_TS, T_DUR, T_ARGS, T_TID, T_PID, T_N };
static const char *const azArg[] = {"Device Type", "Device Id", "Bytes", "Addr", "Total Allocated",
                                    "Total Reserved", "device", "context", "stream", "correlation",
                                    "registers per thread", "grid", "block", "bytes"};
enum { A_TYPE, A_DEVID, A_BYTES, A_ADDR, A_TOTAL, A_RESERVED, A_DEVICE, A_CONTEXT, A_STREAM, A_CORR, A_REGS,
       A_GRID, A_BLOCK, A_NBYTES, A_N };
_Static_assert(sizeof azArg / sizeof azArg[0] == A_N, "azArg");
_Static_assert(sizeof azTop / sizeof azTop[0] == T_N, "azTop");
_Static_assert(A_N <= VT_JT_PICK_MAX && T_N <= VT_JT_PICK_MAX, "vt__jt_keys");

struct kin {
    struct vt__imp *x;
    struct vt_jtree t;
    struct vt_jkeys top, arg; /* azTop, azArg */
    /* an event's members read (the others are dropped as it is parsed): aTop, and aArg in args */
    int32_t aTop[T_N], aArg[A_N];
    struct vt_jsel selTop, selArg;
    const struct vt_jsel *apTopSub[T_N];
    int64_t baseNs;  /* baseTimeNanoseconds, 0 when absent */
    int64_t baseLate; /* baseTimeNanoseconds given after traceEvents (as Kineto writes it), 0 when not */
    int bBase;
    int64_t tFirst, tLast;
    int64_t nMem, nMemCpu, nMemNoAddr, nKernel, nCopy, nSet, nStep, nStepGpu, nOther;
    int64_t nMemBadBytes, nMemBadAddr; /* CUDA [memory] events left out: Bytes or Addr out of range */
    int64_t aPeakTotal[64], aPeakReserved[64]; /* per device: peaks of Total Allocated / Reserved */
    int64_t aPeakTotalTs[64], aPeakTs[64];     /* when Total Allocated peaked; when the running sum did */
    int bTotals;
    /* per device: the running sum of Bytes in file order and its peak (used where Total Allocated
     * is missing), and the earliest event's time and Total Allocated less its own Bytes (what was
     * allocated before the trace; VT_TB_NULL unknown) */
    int64_t aLive[64], aPeak[64], aFirstTs[64], aBefore[64];
    struct vt_jtree dev;   /* deviceProperties, written after the events fix the time base */
    int64_t rank, worldSize;
    int64_t pid;           /* the profiled process: the pid of its CPU-side events */
    int64_t pidOp;         /* the pid of the first CPU operator, for a trace without memory events or steps */
    int64_t nOp, nPy, nAside, nSited; /* CPU operators, Python functions, allocations set aside; those given a site */
};

/*
 * Call sites. A [memory] event lies inside the CPU operators (cpu_op) and, where the trace was
 * recorded with_stack, the Python functions (python_function) running on its thread then; both
 * are complete events ("X": a start and a duration) that Kineto writes apart from the memory
 * events, in any order. Each is set aside (vt__tb_aside: thread, start, 0, -end, kind) as it
 * streams by, each GPU allocation too (thread, time, 1, 0, its tensor_event rowid); at the end
 * one walk in (thread, time) order keeps the spans open at each moment on two stacks, and gives
 * each allocation the stack of its innermost operator (with the nearest autograd node under it,
 * as "CompiledFunctionBackward") below its Python frames, innermost first. Memory: the spans
 * open at once (SITE_DEPTH per stack at most; deeper ones are left out).
 */
#define SITE_DEPTH 256  /* spans kept open per stack */
#define SITE_PYFRAMES 32 /* Python frames in one call site, innermost first */
enum { SPAN_OP = 0, SPAN_PY = 1 };

struct span {
    int64_t end;
    char *zName;       /* an operator's name; a Python function's name */
    char *zFile;       /* a Python function's file, NULL for operators */
    int64_t line;
};

struct sitewalk {
    struct kin *k;
    int64_t tid;
    struct span aOp[SITE_DEPTH], aPy[SITE_DEPTH];
    int nOp, nPy, nOpDeep, nPyDeep; /* kept; and open but not kept (too deep) */
};

/* Close the spans of stack a (*pn kept; *pnDeep open inside the innermost kept, not kept) that ended before ts. */
static void spans_close(struct span *a, int *pn, int *pnDeep, int64_t ts)
{
    while (*pn > 0 && a[*pn - 1].end < ts) {
        *pnDeep = 0; /* spans inside it ended with it */
        (*pn)--;
        free(a[*pn].zName);
        free(a[*pn].zFile);
    }
}

/* Close every span (a new thread begins). */
static void spans_clear(struct sitewalk *w)
{
    spans_close(w->aOp, &w->nOp, &w->nOpDeep, INT64_MAX);
    spans_close(w->aPy, &w->nPy, &w->nPyDeep, INT64_MAX);
}

/* One row set aside, in (thread, time) order: open a span, or give an allocation its call site. 0 or an exit code. */
static int site_row(void *pArg, const int64_t *a, const char *z)
{
    struct sitewalk *w = pArg;
    struct vt__tb *tb = w->k->x->tb;
    struct vt__tb_frame aF[SITE_PYFRAMES + 2];
    int n = 0;
    if (a[0] != w->tid) {
        spans_clear(w);
        w->tid = a[0];
    }
    spans_close(w->aOp, &w->nOp, &w->nOpDeep, a[1]);
    spans_close(w->aPy, &w->nPy, &w->nPyDeep, a[1]);
    if (a[2] == 0) { /* a span opens */
        int bPy = a[4] == SPAN_PY;
        struct span *pS = bPy ? w->aPy : w->aOp;
        int *pn = bPy ? &w->nPy : &w->nOp;
        const char *zParen, *zColon;
        if (*pn == SITE_DEPTH) {
            (*(bPy ? &w->nPyDeep : &w->nOpDeep))++;
            return 0;
        }
        pS[*pn].end = -a[3];
        pS[*pn].zFile = NULL;
        pS[*pn].line = VT_TB_NULL;
        if (bPy && z && (zColon = strstr(z, "): ")) != NULL) { /* "torch/nn/modules/module.py(1743): _call_impl" */
            for (zParen = zColon; zParen > z && *zParen != '('; zParen--) {}
            if (zParen > z && (pS[*pn].zFile = vt__strdupf("%.*s", (int)(zParen - z), z)) == NULL)
                return vt__imp_fail(w->k->x, VT_EXIT_INTERNAL, "out of memory");
            if (zParen > z) pS[*pn].line = strtoll(zParen + 1, NULL, 10);
            z = zColon + 3;
        }
        if ((pS[*pn].zName = vt__strdupf("%s", z ? z : "?")) == NULL) {
            free(pS[*pn].zFile);
            return vt__imp_fail(w->k->x, VT_EXIT_INTERNAL, "out of memory");
        }
        (*pn)++;
        return 0;
    }
    /* an allocation: its Python frames (those naming a file: not "nn.Module: X" or built-ins), innermost first */
    for (int i = w->nPy - 1; i >= 0 && n < SITE_PYFRAMES; i--) {
        if (!w->aPy[i].zFile) continue;
        memset(&aF[n], 0, sizeof aF[n]);
        aF[n].kind = VT_FRAME_PYTHON;
        aF[n].zFunction = w->aPy[i].zName;
        aF[n].zFile = w->aPy[i].zFile;
        aF[n].line = w->aPy[i].line;
        aF[n].pc = VT_TB_NULL;
        n++;
    }
    /* then its innermost operator and the autograd node it runs under, if any */
    for (int i = w->nOp - 1; i >= 0; i--) {
        int bNode = vt__torch_node_name(w->aOp[i].zName);
        if (i < w->nOp - 1 && !bNode) continue;
        memset(&aF[n], 0, sizeof aF[n]);
        aF[n].kind = VT_FRAME_NATIVE;
        aF[n].zFunction = w->aOp[i].zName;
        aF[n].line = aF[n].pc = VT_TB_NULL;
        n++;
        if (bNode) break;
    }
    if (n > 0) {
        int64_t id = vt__tb_stack(tb, aF, n);
        if (id == -1 || vt__tb_set_stack(tb, VT_TB_TENSOR, a[4], id)) return vt__imp_tb_fail(w->k->x);
        w->k->nSited++;
    }
    return 0;
}

/* Give the allocations set aside their call sites (see above). 0 or an exit code. */
static int sites(struct kin *k)
{
    struct sitewalk *w;
    int rc;
    if (k->nOp + k->nPy == 0 || k->nAside == 0) return 0;
    if (!(w = calloc(1, sizeof *w))) return vt__imp_fail(k->x, VT_EXIT_INTERNAL, "out of memory");
    w->k = k;
    w->tid = INT64_MIN;
    rc = vt__tb_aside_each(k->x->tb, site_row, w);
    spans_clear(w);
    free(w);
    if (rc == -1) return vt__imp_tb_fail(k->x);
    if (rc == 0 && k->nSited)
        vt__imp_note(k->x, "%lld GPU allocations take their call site from the CPU operator they ran in%s",
                     (long long)k->nSited, k->nPy ? " and the Python functions around it (with_stack)" : "");
    return rc;
}

/* Set span or allocation a aside for the call sites (see above). 0 or an exit code. */
static int aside(struct kin *k, int64_t tid, int64_t ts, int bPoint, int64_t end, int64_t kindOrRow, const char *z)
{
    int64_t a[5] = {tid, ts, bPoint, bPoint ? 0 : -end, kindOrRow};
    return vt__tb_aside(k->x->tb, a, z) ? vt__imp_tb_fail(k->x) : 0;
}

/* ts (µs) of a member as absolute ns, or VT_TB_NULL. */
static int64_t time_ns(struct kin *k, int32_t i)
{
    double d;
    int64_t v;
    if (vt__jt_int(&k->t, i, &v)) {
        if (v < 0 || __builtin_mul_overflow(v, 1000, &v) || __builtin_add_overflow(v, k->baseNs, &v)) return VT_TB_NULL;
        return v;
    }
    if (!vt__jt_num(&k->t, i, &d) || !(d >= 0 && d < 9.2e15)) return VT_TB_NULL;
    if (__builtin_add_overflow(llround(d * 1000.0), k->baseNs, &v)) return VT_TB_NULL;
    return v;
}

/* Node i as an integer (a float only when whole), or VT_TB_NULL. */
static int64_t int_of(struct kin *k, int32_t i)
{
    int64_t v;
    double d;
    if (vt__jt_int(&k->t, i, &v)) return v;
    if (vt__jt_num(&k->t, i, &d) && d > -9.2e18 && d < 9.2e18 && d == floor(d)) return (int64_t)d;
    return VT_TB_NULL;
}

/* Memory kind of a copy side as Kineto names it ("Pageable", "Pinned", "Device", "Array", "Managed"). */
static int64_t mem_kind(const char *z, size_t n)
{
    static const struct {
        const char *z;
        int k;
    } a[] = {{"Pageable", VT_MEMKIND_PAGEABLE}, {"Pinned", VT_MEMKIND_PINNED}, {"Device", VT_MEMKIND_DEVICE},
             {"Array", VT_MEMKIND_ARRAY},       {"Managed", VT_MEMKIND_MANAGED}};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        if (strlen(a[i].z) == n && !strncmp(z, a[i].z, n)) return a[i].k;
    return VT_MEMKIND_UNKNOWN;
}

/* "Memcpy HtoD (Pageable -> Device)": copy kind and the two memory kinds. */
static void copy_kinds(const char *zName, struct vt__tb_memcpy *r)
{
    static const char *const azKind[] = {"", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
    const char *zOpen = strchr(zName, '('), *zArrow = zOpen ? strstr(zOpen, " -> ") : NULL;
    r->copy_kind = VT_COPY_UNKNOWN;
    for (int i = 1; i < (int)(sizeof azKind / sizeof azKind[0]); i++)
        if (strstr(zName, azKind[i])) {
            r->copy_kind = i;
            break;
        }
    r->src_kind = r->dst_kind = VT_MEMKIND_UNKNOWN;
    if (zArrow) {
        const char *zClose = strchr(zArrow, ')');
        r->src_kind = mem_kind(zOpen + 1, (size_t)(zArrow - zOpen - 1));
        if (zClose) r->dst_kind = mem_kind(zArrow + 4, (size_t)(zClose - zArrow - 4));
    }
}

/* Fix the trace's time base at the first timed event (t, or 0 when VT_TB_NULL). Returns 0 or an exit code. */
static int base_at(struct kin *k, int64_t t)
{
    if (k->bBase) return 0;
    k->bBase = 1;
    return vt__tb_base(k->x->tb, t) ? vt__imp_tb_fail(k->x) : 0;
}

/* One trace event (tree node 0, read with k->selTop). Returns 0 or an exit code. */
static int event(struct kin *k)
{
    struct vt_jtree *t = &k->t;
    struct vt__tb *tb = k->x->tb;
    const int32_t *aTop = k->aTop, *aArg = k->aArg;
    const char *zName, *zCat, *zPh;
    int64_t ts, dur = VT_TB_NULL, end = VT_TB_NULL;
    double d;
    int rc;
    zName = vt__jt_str(t, aTop[T_NAME]);
    zCat = vt__jt_str(t, aTop[T_CAT]);
    zPh = vt__jt_str(t, aTop[T_PH]);
    ts = time_ns(k, aTop[T_TS]);
    k->x->nEvents++;
    if (!zName || !zPh || ts == VT_TB_NULL) {
        k->nOther++;
        return 0;
    }
    if (vt__jt_num(t, aTop[T_DUR], &d) && d >= 0 && d < 9.2e15) dur = llround(d * 1000.0);
    if (dur != VT_TB_NULL && __builtin_add_overflow(ts, dur, &end)) end = VT_TB_NULL;
    if ((rc = base_at(k, ts)) != 0) return rc;
    /* CPU-side events (memory instants, steps) carry the process id; GPU ones a device number */
    if (k->pid == VT_TB_NULL && (!strcmp(zName, "[memory]") || !strncmp(zName, "ProfilerStep#", 13))) {
        int64_t pid;
        if (vt__jt_int(t, aTop[T_PID], &pid) && pid > 0) k->pid = pid;
    }
    if (k->pidOp == VT_TB_NULL && zCat && !strcmp(zCat, "cpu_op")) {
        int64_t pid;
        if (vt__jt_int(t, aTop[7], &pid) && pid > 0) k->pidOp = pid;
    }
    if (zCat && end != VT_TB_NULL && (!strcmp(zCat, "cpu_op") || !strcmp(zCat, "python_function"))) {
        int64_t tid;
        int bPy = zCat[0] == 'p';
        if (!vt__jt_int(t, aTop[T_TID], &tid)) return 0;
        bPy ? k->nPy++ : k->nOp++;
        return aside(k, tid, ts, 0, end, bPy ? SPAN_PY : SPAN_OP, zName);
    }
    if (!strcmp(zName, "[memory]")) {
        struct vt__tb_tensor r;
        int64_t type = int_of(k, aArg[A_TYPE]), dev = int_of(k, aArg[A_DEVID]);
        int64_t bytes = int_of(k, aArg[A_BYTES]), addr = 0;
        int64_t total = int_of(k, aArg[A_TOTAL]), reserved = int_of(k, aArg[A_RESERVED]);
        uint64_t uAddr;
        int bAddr = 0;
        if (type != KINETO_DEVICE_CUDA && type != KINETO_DEVICE_HIP) {
            k->nMemCpu++;
            return 0;
        }
        if (aArg[A_BYTES] < 0) { /* no size: not an allocation or a free */
            k->nOther++;
            return 0;
        }
        if (bytes == VT_TB_NULL || bytes == 0 || bytes > (1LL << 50) || bytes < -(1LL << 50)) { /* impossible */
            k->nMemBadBytes++;
            return 0;
        }
        /* an address is an integer in [0, 2^64), kept as its 64-bit pattern (docs/schema.md, "Addresses") */
        if (aArg[A_ADDR] >= 0 && t->a[aArg[A_ADDR]].type != VT_JN_NULL) {
            if (!vt__jt_u64(t, aArg[A_ADDR], &uAddr)) {
                k->nMemBadAddr++;
                return 0;
            }
            addr = (int64_t)uAddr;
            bAddr = 1;
        }
        k->nMem++;
        VT_TB_CLEAR(r);
        r.ts = ts;
        r.op = bytes > 0 ? VT_TENSOROP_ALLOC : VT_TENSOROP_FREE;
        r.bytes = bytes > 0 ? bytes : -bytes;
        r.address = addr;
        r.device = dev;
        r.source = VT_TENSORSRC_PROFILER;
        if (dev >= 0 && dev < 64) {
            if (k->aLive[dev] > -(1LL << 61) && k->aLive[dev] < (1LL << 61)) k->aLive[dev] += bytes;
            if (k->aLive[dev] > k->aPeak[dev]) k->aPeak[dev] = k->aLive[dev], k->aPeakTs[dev] = ts;
            if (ts != VT_TB_NULL && ts < k->aFirstTs[dev]) { /* the earliest so far (the first in the file among equal times) */
                k->aFirstTs[dev] = ts;
                if (total == VT_TB_NULL || __builtin_sub_overflow(total, bytes, &k->aBefore[dev]))
                    k->aBefore[dev] = VT_TB_NULL; /* missing or damaged Total Allocated: unknown */
            }
            if (total != VT_TB_NULL && total > k->aPeakTotal[dev])
                k->aPeakTotal[dev] = total, k->aPeakTotalTs[dev] = ts, k->bTotals = 1;
            if (reserved != VT_TB_NULL && reserved > k->aPeakReserved[dev]) k->aPeakReserved[dev] = reserved, k->bTotals = 1;
        }
        if (ts < k->tFirst) k->tFirst = ts;
        if (ts > k->tLast) k->tLast = ts;
        if (!bAddr) { /* no address: only the totals above, no row */
            k->nMemNoAddr++;
            return 0;
        }
        if (r.op == VT_TENSOROP_ALLOC) { /* its call site: the operators around it (sites) */
            int64_t tid;
            if (vt__jt_int(t, aTop[T_TID], &tid) &&
                (rc = aside(k, tid, ts, 1, ts, vt__tb_next_rowid(tb, VT_TB_TENSOR), NULL)) != 0)
                return rc;
            k->nAside++;
        }
        return vt__tb_tensor(tb, &r) ? vt__imp_tb_fail(k->x) : 0;
    }
    if (!zCat) {
        k->nOther++;
        return 0;
    }
    if (ts < k->tFirst) k->tFirst = ts;
    if ((end != VT_TB_NULL ? end : ts) > k->tLast) k->tLast = end != VT_TB_NULL ? end : ts;
    if (!strcasecmp(zCat, "kernel")) {
        struct vt__tb_kernel r;
        int32_t g = aArg[A_GRID], b = aArg[A_BLOCK];
        int64_t *apG[3], *apB[3];
        VT_TB_CLEAR(r);
        r.start = ts;
        r.end = end == VT_TB_NULL ? ts : end;
        r.device = int_of(k, aArg[A_DEVICE]);
        r.context = int_of(k, aArg[A_CONTEXT]);
        r.stream = int_of(k, aArg[A_STREAM]);
        r.correlation = int_of(k, aArg[A_CORR]);
        r.registers = int_of(k, aArg[A_REGS]);
        if ((r.name_id = vt__tb_string(tb, zName)) == -1) return vt__imp_tb_fail(k->x);
        apG[0] = &r.grid_x, apG[1] = &r.grid_y, apG[2] = &r.grid_z;
        apB[0] = &r.block_x, apB[1] = &r.block_y, apB[2] = &r.block_z;
        for (int pass = 0; pass < 2; pass++) {
            int32_t c = pass ? (b >= 0 && t->a[b].type == VT_JN_ARR ? t->a[b].child : -1)
                             : (g >= 0 && t->a[g].type == VT_JN_ARR ? t->a[g].child : -1);
            for (int i = 0; i < 3 && c >= 0; i++, c = t->a[c].next) {
                int64_t v;
                if (vt__jt_int(t, c, &v)) *(pass ? apB : apG)[i] = v;
            }
        }
        k->nKernel++;
        return vt__tb_kernel(tb, &r) ? vt__imp_tb_fail(k->x) : 0;
    }
    if (!strcasecmp(zCat, "gpu_memcpy") || !strcasecmp(zCat, "memcpy")) {
        struct vt__tb_memcpy r;
        VT_TB_CLEAR(r);
        r.start = ts;
        r.end = end == VT_TB_NULL ? ts : end;
        r.device = int_of(k, aArg[A_DEVICE]);
        r.context = int_of(k, aArg[A_CONTEXT]);
        r.stream = int_of(k, aArg[A_STREAM]);
        r.correlation = int_of(k, aArg[A_CORR]);
        r.bytes = int_of(k, aArg[A_NBYTES]);
        copy_kinds(zName, &r);
        if (r.bytes == VT_TB_NULL || r.bytes < 0) {
            k->nOther++;
            return 0;
        }
        k->nCopy++;
        return vt__tb_memcpy(tb, &r) ? vt__imp_tb_fail(k->x) : 0;
    }
    if (!strcasecmp(zCat, "gpu_memset") || !strcasecmp(zCat, "memset")) {
        struct vt__tb_memset r;
        const char *zOpen = strchr(zName, '('), *zClose = zOpen ? strchr(zOpen, ')') : NULL;
        VT_TB_CLEAR(r);
        r.start = ts;
        r.end = end == VT_TB_NULL ? ts : end;
        r.device = int_of(k, aArg[A_DEVICE]);
        r.context = int_of(k, aArg[A_CONTEXT]);
        r.stream = int_of(k, aArg[A_STREAM]);
        r.correlation = int_of(k, aArg[A_CORR]);
        r.bytes = int_of(k, aArg[A_NBYTES]);
        if (zClose) r.mem_kind = mem_kind(zOpen + 1, (size_t)(zClose - zOpen - 1));
        if (r.bytes == VT_TB_NULL || r.bytes < 0) {
            k->nOther++;
            return 0;
        }
        k->nSet++;
        return vt__tb_memset(tb, &r) ? vt__imp_tb_fail(k->x) : 0;
    }
    /* the GPU-timeline copy of a step (a stream's span of its kernels): the CPU-side range is the step */
    if (!strncmp(zName, "ProfilerStep#", 13) && !strcasecmp(zCat, "gpu_user_annotation")) {
        k->nStepGpu++;
        return 0;
    }
    if (!strncmp(zName, "ProfilerStep#", 13) && end != VT_TB_NULL) {
        struct vt__tb_nvtx r;
        int64_t tid = VT_TB_NULL;
        VT_TB_CLEAR(r);
        r.start = ts;
        r.end = end;
        r.kind = VT_NVTX_PUSHPOP;
        r.depth = 0;
        if (vt__jt_int(t, aTop[T_TID], &tid)) r.thread = tid;
        if ((r.name_id = vt__tb_string(tb, zName)) == -1) return vt__imp_tb_fail(k->x);
        k->nStep++;
        return vt__tb_nvtx(tb, &r) ? vt__imp_tb_fail(k->x) : 0;
    }
    k->nOther++;
    return 0;
}

/*
 * The per-device totals of the GPU memory events: the peak of the running sum of Bytes in time
 * order (meta kineto.device.N.peak_sum_bytes: Total Allocated's peak less what was allocated
 * before the trace; Kineto writes each thread's events together, so a sum in file order is
 * wrong; where Total Allocated is missing, the file order's), Total Allocated's and Total
 * Reserved's peaks, and what was allocated before the first event (its Total Allocated less
 * its own Bytes), with a note when that is more than nothing. O(1) memory per device.
 * Returns 0 or an exit code.
 */
static int memory_totals(struct kin *k)
{
    int64_t aPeak[64], aStart[64];
    struct vt__tb *tb = k->x->tb;
    for (int dv = 0; dv < 64; dv++) {
        aStart[dv] = k->aFirstTs[dv] == INT64_MAX ? VT_TB_NULL : k->aBefore[dv];
        aPeak[dv] = k->aPeakTotal[dv] > 0 && aStart[dv] != VT_TB_NULL && aStart[dv] >= 0 ? k->aPeakTotal[dv] - aStart[dv]
                                                                                         : k->aPeak[dv];
    }
    for (int dv = 0; dv < 64; dv++) {
        char zKey[80];
        if (aPeak[dv] <= 0 && k->aPeakTotal[dv] <= 0) continue;
        snprintf(zKey, sizeof zKey, "kineto.device.%d.peak_sum_bytes", dv);
        if (vt__tb_metaf(tb, zKey, "%lld", (long long)aPeak[dv])) return vt__imp_tb_fail(k->x);
        /* when: Total Allocated's peak, else the running sum's (in file order) */
        snprintf(zKey, sizeof zKey, "kineto.device.%d.peak_ns", dv);
        if (vt__tb_metaf(tb, zKey, "%lld", (long long)(aPeak[dv] == k->aPeak[dv] ? k->aPeakTs[dv] : k->aPeakTotalTs[dv])))
            return vt__imp_tb_fail(k->x);
        if (k->aPeakTotal[dv] > 0) {
            snprintf(zKey, sizeof zKey, "kineto.device.%d.peak_total_allocated", dv);
            if (vt__tb_metaf(tb, zKey, "%lld", (long long)k->aPeakTotal[dv])) return vt__imp_tb_fail(k->x);
        }
        if (k->aPeakReserved[dv] > 0) {
            snprintf(zKey, sizeof zKey, "kineto.device.%d.peak_total_reserved", dv);
            if (vt__tb_metaf(tb, zKey, "%lld", (long long)k->aPeakReserved[dv])) return vt__imp_tb_fail(k->x);
        }
        if (aStart[dv] > 0 && aStart[dv] < (1LL << 55)) {
            char zA[32], zB[32], zC[32];
            snprintf(zKey, sizeof zKey, "kineto.device.%d.allocated_before_trace", dv);
            if (vt__tb_metaf(tb, zKey, "%lld", (long long)aStart[dv])) return vt__imp_tb_fail(k->x);
            vt__imp_note(k->x,
                         "device %d: %s was already allocated when the trace begins (the first [memory] event's "
                         "Total Allocated less its own Bytes) and is not in the trace's allocations; Total "
                         "Allocated peaks at %s (the process's peak), the trace's own allocations at %s",
                         dv, vt__fmt_bytes(aStart[dv], zA, sizeof zA),
                         vt__fmt_bytes(k->aPeakTotal[dv], zB, sizeof zB), vt__fmt_bytes(aPeak[dv], zC, sizeof zC));
        }
    }
    return 0;
}

/* deviceProperties: one device row each. */
static int devices(struct kin *k)
{
    struct vt_jtree *t = &k->dev;
    if (!t->n) return 0;
    for (int32_t c = t->a[0].type == VT_JN_ARR ? t->a[0].child : -1; c >= 0; c = t->a[c].next) {
        int64_t id, total = VT_TB_NULL, ma = VT_TB_NULL, mi = VT_TB_NULL, sm = VT_TB_NULL;
        if (!vt__jt_int(t, vt__jt_get(t, c, "id"), &id)) continue;
        vt__jt_int(t, vt__jt_get(t, c, "totalGlobalMem"), &total);
        vt__jt_int(t, vt__jt_get(t, c, "computeMajor"), &ma);
        vt__jt_int(t, vt__jt_get(t, c, "computeMinor"), &mi);
        vt__jt_int(t, vt__jt_get(t, c, "numSms"), &sm);
        if (vt__tb_device(k->x->tb, id, vt__jt_str(t, vt__jt_get(t, c, "name")), NULL, total, ma, mi, sm))
            return vt__imp_tb_fail(k->x);
    }
    return 0;
}

/* The JSON reader's failure as an exit code and message. */
static int json_fail(struct kin *k, struct vt_js *j)
{
    const char *z = vt__js_errmsg(j);
    if (strstr(z, "out of memory")) return vt__imp_fail(k->x, VT_EXIT_INTERNAL, "%s", z);
    return vt__imp_fail(k->x, VT_EXIT_CORRUPT, "damaged torch.profiler trace: %s", z);
}

/* Read the elements of the traceEvents array (its '[' just read). */
static int events(struct kin *k, struct vt_js *j)
{
    int tok, rc;
    while ((tok = vt__js_next(j)) != VT_JS_ARRAY_END) {
        if (tok == VT_JS_ERROR) return json_fail(k, j);
        if (vt__js_read_tree_sel(j, tok, &k->t, &k->selTop) != 0) return json_fail(k, j);
        if (k->t.a[0].type != VT_JN_OBJ) continue;
        if ((rc = event(k)) != 0) return rc;
    }
    return 0;
}

int vt__import_kineto(struct vt__imp *x)
{
    static const char *const azKnown[] = {"traceEvents", "deviceProperties", "baseTimeNanoseconds",
                                          "distributedInfo", "schemaVersion", "traceName", "displayTimeUnit",
                                          "profile_memory", "with_stack", "record_shapes", "with_flops",
                                          "with_modules", "cupti_version", "cuda_runtime_version",
                                          "cuda_driver_version", "trace_id", "documents", "ns_resolution",
                                          "hostname", "pid", "roctracer_version", "hip_runtime_version"};
    struct kin k;
    struct vt__src in;
    struct vt_js *j = NULL;
    int tok, rc = 0, bEvents = 0;
    memset(&k, 0, sizeof k);
    k.x = x;
    k.tFirst = INT64_MAX;
    k.tLast = INT64_MIN;
    k.rank = k.worldSize = k.pid = k.pidOp = VT_TB_NULL;
    for (int dv = 0; dv < 64; dv++) k.aFirstTs[dv] = INT64_MAX;
    (void)vt__jt_keys(&k.top, azTop, (int)(sizeof azTop / sizeof azTop[0])); /* cannot fail: sizes asserted above */
    (void)vt__jt_keys(&k.arg, azArg, A_N);
    k.selArg = (struct vt_jsel){&k.arg, k.aArg, NULL};
    k.apTopSub[T_ARGS] = &k.selArg;
    k.selTop = (struct vt_jsel){&k.top, k.aTop, k.apTopSub};
    if (vt__src_open_file(&in, x->zIn) != 0) return vt__imp_fail(x, VT_EXIT_NOFILE, "cannot open: %s", strerror(errno));
    if (!(j = vt__js_new(&in))) {
        rc = vt__imp_fail(x, VT_EXIT_INTERNAL, "out of memory");
        goto done;
    }
    tok = vt__js_next(j);
    if (tok == VT_JS_ARRAY) { /* the bare-array form of the trace-event format */
        bEvents = 1;
        rc = events(&k, j);
    } else if (tok == VT_JS_OBJECT) {
        while (rc == 0 && (tok = vt__js_next(j)) == VT_JS_KEY) {
            char zKey[64];
            size_t n;
            const char *z = vt__js_text(j, &n);
            snprintf(zKey, sizeof zKey, "%s", z);
            tok = vt__js_next(j);
            if (tok == VT_JS_ERROR) break;
            if (!strcmp(zKey, "traceEvents") && tok == VT_JS_ARRAY) {
                bEvents = 1;
                rc = events(&k, j);
            } else if (!strcmp(zKey, "baseTimeNanoseconds") && tok == VT_JS_NUMBER) {
                int bInt;
                int64_t v;
                vt__js_number(j, &bInt, &v);
                if (bInt && v > 0) {
                    if (bEvents) /* after the events: the rows keep their times, the clock anchor gets it */
                        k.baseLate = v;
                    else
                        k.baseNs = v;
                }
            } else if (!strcmp(zKey, "deviceProperties") && tok == VT_JS_ARRAY) {
                if (vt__js_read_tree(j, tok, &k.dev) != 0) break;
            } else if (!strcmp(zKey, "distributedInfo") && tok == VT_JS_OBJECT) {
                if (vt__js_read_tree(j, tok, &k.t) != 0) break;
                vt__jt_int(&k.t, vt__jt_get(&k.t, 0, "rank"), &k.rank);
                vt__jt_int(&k.t, vt__jt_get(&k.t, 0, "world_size"), &k.worldSize);
            } else {
                size_t i;
                for (i = 0; i < sizeof azKnown / sizeof azKnown[0] && strcmp(zKey, azKnown[i]); i++) {}
                if (i == sizeof azKnown / sizeof azKnown[0])
                    vt__imp_note(x, "top-level key '%s' is not known to this vramtrace and was ignored", zKey);
                if ((tok == VT_JS_OBJECT || tok == VT_JS_ARRAY) && vt__js_skip(j) != 0) break;
            }
        }
        if (rc == 0 && tok != VT_JS_OBJECT_END) rc = json_fail(&k, j);
    } else if (tok == VT_JS_ERROR) {
        rc = json_fail(&k, j);
    }
    if (rc == 0 && (tok = vt__js_next(j)) != VT_JS_EOF) rc = json_fail(&k, j);
    if (rc) goto done;
    if (!bEvents) {
        rc = vt__imp_fail(x, VT_EXIT_NOT_TRACE, "JSON, but not a torch.profiler trace (no traceEvents)");
        goto done;
    }
    if ((rc = base_at(&k, VT_TB_NULL)) != 0 || (rc = devices(&k)) != 0 || (rc = sites(&k)) != 0) goto done;
    if (k.rank != VT_TB_NULL) vt__tb_metaf(x->tb, "rank", "%lld", (long long)k.rank);
    if (k.pid == VT_TB_NULL) k.pid = k.pidOp;
    if (k.pid != VT_TB_NULL) vt__tb_metaf(x->tb, "pid", "%lld", (long long)k.pid);
    if (k.worldSize != VT_TB_NULL) vt__tb_metaf(x->tb, "world_size", "%lld", (long long)k.worldSize);
    if (k.tFirst <= k.tLast) {
        /* Kineto's clock is the wall clock, less baseTimeNanoseconds when it came after the events
         * (the rows were written by then): one instant on both clocks */
        int64_t wall = k.tFirst;
        if (k.baseLate && __builtin_add_overflow(k.tFirst, k.baseLate, &wall)) wall = k.tFirst;
        vt__tb_metaf(x->tb, "clock_anchor_cupti_ns", "%lld", (long long)k.tFirst);
        vt__tb_metaf(x->tb, "clock_anchor_wall_ns", "%lld", (long long)wall);
        vt__tb_metaf(x->tb, "start_ns", "%lld", (long long)k.tFirst);
        vt__tb_metaf(x->tb, "end_ns", "%lld", (long long)k.tLast);
    }
    vt__tb_metaf(x->tb, "kineto.memory_events", "%lld", (long long)k.nMem);
    if (k.nMemBadBytes + k.nMemBadAddr)
        vt__tb_metaf(x->tb, "kineto.memory_events_out_of_range", "%lld", (long long)(k.nMemBadBytes + k.nMemBadAddr));
    vt__tb_metaf(x->tb, "kineto.cpu_memory_events", "%lld", (long long)k.nMemCpu);
    if ((rc = memory_totals(&k)) != 0) goto done;
    if (k.baseLate)
        vt__imp_note(x, "baseTimeNanoseconds follows traceEvents: times are stored as written (from the trace's "
                        "own origin) and meta clock_anchor_wall_ns adds the base, so wall-clock times are right");
    if (k.nMemNoAddr)
        vt__imp_note(x,
                     "%lld of %lld CUDA [memory] events have no 'Addr' (torch.profiler before 1.11): allocations "
                     "cannot be paired with their frees, so no lifetimes exist; only totals are known (running "
                     "sum of Bytes per device, in meta kineto.device.N.peak_sum_bytes)",
                     (long long)k.nMemNoAddr, (long long)k.nMem);
    if (k.nMemBadBytes || k.nMemBadAddr)
        vt__imp_note(x, "%lld CUDA [memory] event%s left out for values out of range: %lld with a 'Bytes' of 0, "
                        "beyond 1 PiB or not a whole number, %lld with an 'Addr' that is not an address (a whole "
                        "number in [0, 2^64))",
                     (long long)(k.nMemBadBytes + k.nMemBadAddr), k.nMemBadBytes + k.nMemBadAddr == 1 ? "" : "s",
                     (long long)k.nMemBadBytes, (long long)k.nMemBadAddr);
    if (!k.nMem && !k.nMemBadBytes && !k.nMemBadAddr)
        vt__imp_note(x, "no CUDA [memory] events: the trace was recorded without profile_memory=True, so "
                        "no allocations are known");
    if (k.nStep && !k.nStepGpu)
        vt__imp_note(x, "%lld ProfilerStep#N ranges imported as NVTX ranges (analyze takes them as iterations)",
                     (long long)k.nStep);
    else if (k.nStep || k.nStepGpu)
        vt__imp_note(x, "%lld ProfilerStep#N ranges imported as NVTX ranges (analyze takes them as iterations); "
                        "their %lld GPU-timeline copies (gpu_user_annotation) are left out",
                     (long long)k.nStep, (long long)k.nStepGpu);
    rc = VT_EXIT_OK;
done:
    vt__jtree_free(&k.t);
    vt__jtree_free(&k.dev);
    vt__js_free(j);
    vt__src_close(&in);
    return rc;
}
