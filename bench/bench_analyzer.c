/* Analyzer benchmark: `vramtrace analyze` end to end on generated 1 M / 10 M event traces, against a raw SQLite scan. */
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace/compact.h"
#include "vramtrace/schema.h"
#include "bench_util.h"

/*
 * The trace models a training job in per-tensor allocation mode (what
 * `vramtrace record --tensors` produces): NPARAM weights and NPARAM optimizer
 * states allocated up front, then iterations of a LAYERS-layer network.
 * One training iteration: two pinned host-to-device batch copies, a forward
 * pass (per layer: one activation allocated, 3 kernels), a backward pass (per
 * layer: a temporary gradient buffer allocated and freed, 4 kernels, the
 * layer's activation freed), an optimizer step (10 kernels), a memset of the
 * gradients, a device-to-host copy of the loss, the batch freed. Every
 * TRAIN_PER_EPOCH training iterations, EVAL_PER_EPOCH evaluation iterations
 * (forward only, each activation freed once the next layer consumed it).
 * Each kernel reads one or two live buffers (buffer_use rows, as kernel
 * argument scanning records them). Freed addresses are reused per size class,
 * as a caching allocator would. NVTX ranges mark the phases ("train",
 * "validation") and iterations ("step"). The live set stays bounded
 * (~2 * NPARAM + LAYERS allocations) whatever the trace length, so the
 * analyzer's memory should not grow with the event count.
 *
 * Events counted: rows of memory_event, kernel, buffer_use, memcpy and
 * memset (what the analysis replays). Traces are cached in DIR (default /tmp)
 * under a name holding the generator version and the event count.
 *
 * Usage: bench_analyzer [-r RUNS] [-d DIR] [-j] [EVENTS...]   (default 1000000 10000000, 3 runs)
 *        bench_analyzer -s TRACE: the raw scan (the ceiling) of TRACE alone, once, in this process
 *        (its instruction count beside analyze's: valgrind --tool=callgrind, docs/performance.md)
 * -j also measures a copy of each trace whose large tables store their rows out of
 * time order (jitter_copy; cached beside it with a _j2ms suffix): the analyzer's
 * path for traces where rowid order is not time order.
 * The vramtrace command used is the one built beside this benchmark
 * (VT_BENCH_VRAMTRACE), or $VRAMTRACE_BIN.
 */
#define GEN_VERSION 4
#define NPARAM 200
#define LAYERS 40
#define TRAIN_PER_EPOCH 50
#define EVAL_PER_EPOCH 10
#define NSTACK 48
#define NKNAME 24
#define BASE_TS 1700000000000000000ll
/* the trace's time base (meta time_base_ns): tracing began a minute before the first row */
#define TIME_BASE "1699999940000000000"
#define DEV_BASE 0x7f0000000000ll

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* ---------------------------------------------------------------- generator */

struct gen {
    sqlite3 *db;
    sqlite3_stmt *pMem, *pUse, *pNvtx;
    struct vt_compact cmp;             /* kernels, copies and sets: stored compacted, as the tracer stores them */
    struct vt_compact_sink sink;
    struct vt_compact_map mapKer, mapCpy, mapSet;
    int64_t ts, corr, nEvents, target;
    int64_t nMem, nKer, nUse, nCpy, nSet;
    int64_t bump;                    /* next never-used device address */
    int64_t aFree[LAYERS + 4][64];   /* per size class: freed addresses ready for reuse */
    int nFree[LAYERS + 4];
    int64_t aStack[NSTACK], aKName[NKNAME], nameTrain, nameVal, nameStep;
    int live, maxLive;
    int rc;                          /* first SQLite error, else SQLITE_OK */
};

static const char *azKernel[NKNAME] = {
    "void at::native::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false, true>",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>",
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar>",
    "ampere_sgemm_128x64_nn",
    "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>>>",
    "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>",
    "void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>",
    "void cudnn::detail::dgrad_engine<float, 128, 6, 7, 3, 3, 5, false>",
    "void at::native::vectorized_elementwise_kernel<4, at::native::threshold_backward_kernel>",
    "ampere_sgemm_64x64_tn",
    "void at::native::(anonymous namespace)::softmax_warp_backward<float, float, float, 10, false>",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor>>>",
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>>",
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>",
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::ZeroFunctor<float>>",
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda>",
    "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>",
    "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>",
    "void at::native::(anonymous namespace)::max_pool_forward_nchw<float>",
    "void at::native::(anonymous namespace)::max_pool_backward_nchw<float>",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
    "void at::native::(anonymous namespace)::layer_norm_kernel<float>",
    "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<float>",
};

static void step(struct gen *g, sqlite3_stmt *p)
{
    int rc = sqlite3_step(p);
    if (rc != SQLITE_DONE && g->rc == SQLITE_OK) g->rc = rc;
    sqlite3_reset(p);
}

/* Size of size class c: activations of layer c, or the batch / temporary classes above LAYERS. */
static int64_t class_bytes(int c)
{
    if (c < LAYERS) return ((int64_t)4 << 20) + (int64_t)(c % 8) * (1 << 20);
    if (c == LAYERS) return (int64_t)12 << 20;     /* input batch */
    if (c == LAYERS + 1) return (int64_t)64 << 10; /* labels */
    return (int64_t)(2 + (c - LAYERS - 2)) << 20;  /* gradient temporaries */
}

static void mem_row(struct gen *g, int op, int64_t addr, int64_t bytes, int64_t stack)
{
    sqlite3_stmt *p = g->pMem;
    g->ts += 300;
    sqlite3_bind_int64(p, 1, g->ts);
    sqlite3_bind_int(p, 2, op);
    sqlite3_bind_int64(p, 3, addr);
    sqlite3_bind_int64(p, 4, bytes);
    sqlite3_bind_int64(p, 5, g->corr++);
    sqlite3_bind_int(p, 6, op == VT_MEMOP_ALLOC ? 3 : 4); /* cudaMallocAsync / cudaFreeAsync */
    if (stack >= 0) sqlite3_bind_int64(p, 7, stack);
    else sqlite3_bind_null(p, 7);
    step(g, p);
    g->nMem++;
    g->nEvents++;
}

/* Allocate from size class c (reusing a freed address when one is ready); returns the address. */
static int64_t gen_alloc(struct gen *g, int c, int64_t stack)
{
    int64_t bytes = class_bytes(c), addr;
    if (g->nFree[c] > 0) addr = g->aFree[c][--g->nFree[c]];
    else {
        addr = g->bump;
        g->bump += (bytes + 0x1fffff) & ~(int64_t)0x1fffff;
    }
    mem_row(g, VT_MEMOP_ALLOC, addr, bytes, stack);
    if (++g->live > g->maxLive) g->maxLive = g->live;
    return addr;
}

static void gen_free(struct gen *g, int c, int64_t addr)
{
    mem_row(g, VT_MEMOP_FREE, addr, class_bytes(c), -1);
    if (g->nFree[c] < 64) g->aFree[c][g->nFree[c]++] = addr;
    g->live--;
}

/* The columns the generator gives the compacted tables (vt__compact_map), in its value order. */
static const char *const azKerCol[] = {"t", "dur", "device", "context", "stream", "correlation", "name_id", "grid_x",
                                       "grid_y", "grid_z", "block_x", "block_y", "block_z", "static_smem", "dynamic_smem",
                                       "registers"};
static const char *const azCpyCol[] = {"t",     "dur",      "device", "context", "stream", "correlation", "copy_kind",
                                       "src_kind", "dst_kind", "bytes", "is_async", "src",  "dst"};
static const char *const azSetCol[] = {"t", "dur", "device", "context", "stream", "correlation", "bytes", "value",
                                       "mem_kind", "is_async", "dst"};

/* One row of a compacted table (absolute times in aVal[0], end in aVal[1]) stored as its parts. */
static void gen_compact(struct gen *g, const struct vt_compact_map *pMap, int64_t *aVal)
{
    struct vt_compact_part aPart[3];
    int rc;
    aVal[1] -= aVal[0]; /* stored form: t since the base, dur */
    aVal[0] -= strtoll(TIME_BASE, NULL, 10);
    rc = vt__compact_sink_put(&g->sink, aPart, vt__compact_add(&g->cmp, pMap, aVal, 0, aPart));
    if (rc != SQLITE_OK && g->rc == SQLITE_OK) g->rc = rc;
}

/* One kernel of name index iName reading buffers a (and b when >= 0). */
static void gen_kernel(struct gen *g, int iName, int64_t a, int64_t b)
{
    int64_t start = g->ts + 2000, dur = 8000 + (int64_t)(iName * 977 % 23000), corr = g->corr++;
    int64_t aVal[] = {start, start + dur, 0, 1, 7, corr, g->aKName[iName], 64 + iName * 8, 1, 1, 256, 1, 1, 0, 0, 32 + iName};
    gen_compact(g, &g->mapKer, aVal);
    g->nKer++;
    g->nEvents++;
    for (int i = 0; i < 2; i++) {
        int64_t addr = i == 0 ? a : b;
        if (addr < 0) continue;
        sqlite3_bind_int64(g->pUse, 1, corr);
        sqlite3_bind_int64(g->pUse, 2, addr + 4096 * (iName % 4));
        sqlite3_bind_int64(g->pUse, 3, start);
        step(g, g->pUse);
        g->nUse++;
        g->nEvents++;
    }
    g->ts = start + dur;
}

static void gen_copy(struct gen *g, int kind, int64_t bytes, int64_t src, int64_t dst)
{
    int64_t start = g->ts + 1000, dur = bytes / 20 + 2000; /* ~20 GB/s */
    int64_t aVal[] = {start, start + dur, 0, 1, 7, g->corr++, kind, kind == VT_COPY_HTOD ? VT_MEMKIND_PINNED : VT_MEMKIND_DEVICE,
                      kind == VT_COPY_HTOD ? VT_MEMKIND_DEVICE : VT_MEMKIND_PAGEABLE, bytes, 1, src, dst};
    gen_compact(g, &g->mapCpy, aVal);
    g->nCpy++;
    g->nEvents++;
    g->ts = start + dur;
}

static void gen_memset(struct gen *g, int64_t dst, int64_t bytes)
{
    int64_t start = g->ts + 1000;
    int64_t aVal[] = {start, start + 3000, 0, 1, 7, g->corr++, bytes, 0, 3, 1, dst};
    gen_compact(g, &g->mapSet, aVal);
    g->nSet++;
    g->nEvents++;
    g->ts = start + 3000;
}

static void gen_nvtx(struct gen *g, int64_t start, int64_t end, int64_t nameId, int depth)
{
    sqlite3_bind_int64(g->pNvtx, 1, start);
    sqlite3_bind_int64(g->pNvtx, 2, end);
    sqlite3_bind_int64(g->pNvtx, 3, nameId);
    sqlite3_bind_int(g->pNvtx, 4, depth);
    step(g, g->pNvtx);
}

/* One iteration; bTrain: forward + backward + optimizer, else forward only. */
static void gen_iteration(struct gen *g, const int64_t *aParam, int bTrain)
{
    int64_t aAct[LAYERS], in, lab, t0 = g->ts, pinned = 0x7e0000000000ll;
    in = gen_alloc(g, LAYERS, g->aStack[0]);
    lab = gen_alloc(g, LAYERS + 1, g->aStack[1]);
    gen_copy(g, VT_COPY_HTOD, class_bytes(LAYERS), pinned, in);
    gen_copy(g, VT_COPY_HTOD, class_bytes(LAYERS + 1), pinned + (16 << 20), lab);
    for (int l = 0; l < LAYERS; l++) {
        int64_t prev = l ? aAct[l - 1] : in;
        aAct[l] = gen_alloc(g, l, g->aStack[2 + l % (NSTACK - 4)]);
        gen_kernel(g, l % 2 ? 3 : 0, prev, aParam[l % NPARAM]);
        gen_kernel(g, bTrain ? 1 : 22, aAct[l], -1);
        gen_kernel(g, 2, aAct[l], -1);
        if (!bTrain && l) gen_free(g, l - 1, aAct[l - 1]);
    }
    gen_kernel(g, 17, aAct[LAYERS - 1], lab);
    gen_copy(g, VT_COPY_DTOH, 4, lab, pinned + (32 << 20)); /* the loss */
    if (bTrain) {
        for (int l = LAYERS - 1; l >= 0; l--) {
            int c = LAYERS + 2 + l % 2;
            int64_t tmp = gen_alloc(g, c, g->aStack[NSTACK - 2]);
            gen_kernel(g, 9, aAct[l], tmp);
            gen_kernel(g, l % 2 ? 10 : 8, tmp, aParam[l % NPARAM]);
            gen_kernel(g, l % 2 ? 12 : 7, tmp, aParam[NPARAM + l % NPARAM]);
            gen_kernel(g, 6, aAct[l], -1);
            gen_free(g, c, tmp);
            gen_free(g, l, aAct[l]);
        }
        for (int k = 0; k < 10; k++) gen_kernel(g, 14, aParam[(k * 20) % NPARAM], aParam[NPARAM + (k * 20) % NPARAM]);
        gen_memset(g, aParam[NPARAM + 1], (int64_t)8 << 20);
    } else {
        gen_free(g, LAYERS - 1, aAct[LAYERS - 1]);
    }
    gen_free(g, LAYERS + 1, lab);
    gen_free(g, LAYERS, in);
    gen_nvtx(g, t0, g->ts, g->nameStep, 1);
}

static int64_t intern(struct gen *g, const char *z)
{
    sqlite3_stmt *p = NULL;
    int64_t id = -1;
    if (sqlite3_prepare_v2(g->db, "INSERT INTO string(value) VALUES(?)", -1, &p, NULL) == SQLITE_OK) {
        sqlite3_bind_text(p, 1, z, -1, SQLITE_STATIC);
        step(g, p);
        id = sqlite3_last_insert_rowid(g->db);
    } else if (g->rc == SQLITE_OK) g->rc = SQLITE_ERROR;
    sqlite3_finalize(p);
    return id;
}

/* NSTACK call sites: a user Python frame over a library frame over a native frame. */
static void gen_stacks(struct gen *g)
{
    char z[128];
    int64_t fnLib = intern(g, "_call_impl"), fiLib = intern(g, "/usr/lib/python3/site-packages/torch/nn/modules/module.py");
    int64_t fnNat = intern(g, "c10::cuda::CUDACachingAllocator::malloc"), mod = intern(g, "libc10_cuda.so");
    int64_t fiUser = intern(g, "/home/user/train.py");
    sqlite3_stmt *pStack = NULL, *pFrame = NULL;
    sqlite3_prepare_v2(g->db, "INSERT INTO stack(id, hash, depth) VALUES(?, ?, 3)", -1, &pStack, NULL);
    sqlite3_prepare_v2(g->db,
                       "INSERT INTO frame(stack_id, idx, kind, pc, function_id, file_id, line, module_id) VALUES"
                       "(?1, 0, 1, NULL, ?2, ?3, 1501, NULL), (?1, 1, 1, NULL, ?4, ?5, ?6, NULL),"
                       "(?1, 2, 0, 4096, ?7, NULL, NULL, ?8)",
                       -1, &pFrame, NULL);
    if (!pStack || !pFrame) {
        if (g->rc == SQLITE_OK) g->rc = SQLITE_ERROR;
    } else {
        for (int i = 0; i < NSTACK; i++) {
            snprintf(z, sizeof z, "layer%d_forward", i);
            g->aStack[i] = i + 1;
            sqlite3_bind_int64(pStack, 1, i + 1);
            sqlite3_bind_int64(pStack, 2, (int64_t)((0x9e3779b97f4a7c15ull * (uint64_t)(i + 1)) >> 1));
            step(g, pStack);
            sqlite3_bind_int64(pFrame, 1, i + 1);
            sqlite3_bind_int64(pFrame, 2, fnLib);
            sqlite3_bind_int64(pFrame, 3, fiLib);
            sqlite3_bind_int64(pFrame, 4, intern(g, z));
            sqlite3_bind_int64(pFrame, 5, fiUser);
            sqlite3_bind_int(pFrame, 6, 100 + i * 7);
            sqlite3_bind_int64(pFrame, 7, fnNat);
            sqlite3_bind_int64(pFrame, 8, mod);
            step(g, pFrame);
        }
    }
    sqlite3_finalize(pStack);
    sqlite3_finalize(pFrame);
}

static int prep(struct gen *g, sqlite3_stmt **pp, const char *zSql)
{
    int rc = sqlite3_prepare_v2(g->db, zSql, -1, pp, NULL);
    if (rc != SQLITE_OK) fprintf(stderr, "bench_analyzer: %s: %s\n", zSql, sqlite3_errmsg(g->db));
    return rc;
}

/*
 * Write a trace of about nTarget events at zPath (replaced), without indexes,
 * as the tracer leaves it. Returns 0 or -1 (message printed); fills
 * *pg's counters.
 */
static int generate(const char *zPath, int64_t nTarget, struct gen *g)
{
    int64_t aParam[2 * NPARAM], tEpoch;
    char *zErr = NULL;
    int rc;
    memset(g, 0, sizeof *g);
    g->ts = BASE_TS;
    g->corr = 1;
    g->bump = DEV_BASE;
    g->target = nTarget;
    unlink(zPath);
    rc = sqlite3_open(zPath, &g->db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(g->db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536;", NULL,
                          NULL, NULL);
    if (rc == SQLITE_OK) rc = vt__schema_create_at(g->db, strtoll(TIME_BASE, NULL, 10), &zErr);
    if (rc == SQLITE_OK) rc = sqlite3_exec(g->db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = prep(g, &g->pMem,
                  "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, stream, correlation, api,"
                  " is_async, thread, stack_id) VALUES(?1 - " TIME_BASE ", ?2, 3, ?3, ?4, 0, 7, ?5, ?6, 1, 4242, ?7)");
    if (rc == SQLITE_OK) {
        const char *zWhat = NULL;
        if (vt__compact_init(&g->cmp, 0, NULL) || vt__compact_sink_open(&g->sink, g->db) ||
            vt__compact_map(VT_CT_kernel, azKerCol, sizeof azKerCol / sizeof *azKerCol, &g->mapKer, &zWhat) ||
            vt__compact_map(VT_CT_memcpy, azCpyCol, sizeof azCpyCol / sizeof *azCpyCol, &g->mapCpy, &zWhat) ||
            vt__compact_map(VT_CT_memset, azSetCol, sizeof azSetCol / sizeof *azSetCol, &g->mapSet, &zWhat))
            rc = SQLITE_ERROR;
    }
    if (rc == SQLITE_OK)
        rc = prep(g, &g->pUse, "INSERT INTO buffer_use(correlation, kind, address, t, device)"
                 " VALUES(?1, 0, ?2, ?3 - " TIME_BASE ", 0)");
    if (rc == SQLITE_OK)
        rc = prep(g, &g->pNvtx,
                  "INSERT INTO nvtx_range(t, dur, kind, name_id, thread, depth)"
                  " VALUES(?1 - " TIME_BASE ", ?2 - ?1, 0, ?3, 4242, ?4)");
    if (rc == SQLITE_OK) {
        char zTs[32];
        snprintf(zTs, sizeof zTs, "%lld", (long long)BASE_TS);
        vt__meta_set(g->db, "pid", "4242");
        vt__meta_set(g->db, "closed_cleanly", "1");
        vt__meta_set(g->db, "config.tensors", "1");
        vt__meta_set(g->db, "start_ns", zTs);
        sqlite3_exec(g->db,
                     "INSERT INTO device(id, name, total_bytes, cc_major, cc_minor, sm_count)"
                     " VALUES(0, 'NVIDIA H100 80GB HBM3', 85045231616, 9, 0, 132)",
                     NULL, NULL, NULL);
        for (int i = 0; i < NKNAME; i++) g->aKName[i] = intern(g, azKernel[i]);
        g->nameTrain = intern(g, "train");
        g->nameVal = intern(g, "validation");
        g->nameStep = intern(g, "step");
        gen_stacks(g);
        for (int i = 0; i < 2 * NPARAM; i++) {
            int64_t bytes = ((int64_t)1 << 18) << (i % 7);
            aParam[i] = g->bump;
            g->bump += (bytes + 0x1fffff) & ~(int64_t)0x1fffff;
            mem_row(g, VT_MEMOP_ALLOC, aParam[i], bytes, g->aStack[NSTACK - 1]);
            g->live++;
        }
        while (g->rc == SQLITE_OK && g->nEvents < nTarget) {
            tEpoch = g->ts;
            for (int i = 0; i < TRAIN_PER_EPOCH && g->nEvents < nTarget; i++) gen_iteration(g, aParam, 1);
            gen_nvtx(g, tEpoch, g->ts, g->nameTrain, 0);
            tEpoch = g->ts;
            for (int i = 0; i < EVAL_PER_EPOCH && g->nEvents < nTarget; i++) gen_iteration(g, aParam, 0);
            gen_nvtx(g, tEpoch, g->ts, g->nameVal, 0);
        }
        for (int i = 0; i < 2 * NPARAM; i++) mem_row(g, VT_MEMOP_FREE, aParam[i], ((int64_t)1 << 18) << (i % 7), -1);
        if (g->rc == SQLITE_OK) {
            char zEnd[32];
            snprintf(zEnd, sizeof zEnd, "%lld", (long long)g->ts);
            vt__meta_set(g->db, "end_ns", zEnd);
        }
        rc = g->rc;
    }
    sqlite3_finalize(g->pMem);
    sqlite3_finalize(g->pUse);
    sqlite3_finalize(g->pNvtx);
    vt__compact_sink_close(&g->sink);
    vt__compact_free(&g->cmp);
    if (rc == SQLITE_OK) rc = sqlite3_exec(g->db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        fprintf(stderr, "bench_analyzer: generating %s: %s\n", zPath, zErr ? zErr : sqlite3_errmsg(g->db));
    sqlite3_free(zErr);
    if (sqlite3_close(g->db) != SQLITE_OK && rc == SQLITE_OK) rc = SQLITE_ERROR;
    g->db = NULL;
    if (rc != SQLITE_OK) unlink(zPath);
    return rc == SQLITE_OK ? 0 : -1;
}

/* ---------------------------------------------------------------- measurements */

struct counts {
    int64_t mem, ker, use, cpy, set, total;
};

/* Row counts of the event tables; returns 0 or -1. */
static int count_rows(const char *zPath, struct counts *c)
{
    static const char *azSql[] = {"SELECT count(*) FROM memory_event", "SELECT count(*) FROM kernel",
                                  "SELECT count(*) FROM buffer_use", "SELECT count(*) FROM memcpy",
                                  "SELECT count(*) FROM memset"};
    int64_t *ap[] = {&c->mem, &c->ker, &c->use, &c->cpy, &c->set};
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL);
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 5 && rc == SQLITE_OK; i++) {
        sqlite3_stmt *p = NULL;
        rc = sqlite3_prepare_v2(db, azSql[i], -1, &p, NULL);
        if (rc == SQLITE_OK && sqlite3_step(p) == SQLITE_ROW) *ap[i] = sqlite3_column_int64(p, 0);
        else if (rc == SQLITE_OK) rc = SQLITE_ERROR;
        sqlite3_finalize(p);
        c->total += *ap[i];
    }
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/*
 * Read every row of the event tables with the columns the analysis reads,
 * bOrdered = 0: in table order (the raw full-scan ceiling); 1: with the
 * analysis' own ORDER BY (a sort, or the time indexes where the trace has them). *pWall and *pCpu
 * receive seconds of wall and CPU time (user + system, like the analyzer's
 * rusage). Returns 0, or -1 on an SQLite error.
 */
static int raw_scan(const char *zPath, int bOrdered, int64_t *pRows, double *pWall, double *pCpu)
{
    /* the stored columns (t and dur, not the generated ts, start, end; schema 5: the compacted tables' rows, with
     * their signatures and blocks (small tables) not read): the least a reader reads; of memory_event and
     * buffer_use every column the analysis takes (VT_MEMROW_COLS; a use's kind tells a kernel argument) */
    static const char *azPlain[] = {
        "SELECT t, id, op, mem_kind, address, device, bytes, api, stack_id, pool_size, pool_used, correlation,"
        " pool_address FROM memory_event",
        "SELECT t, address, kind FROM buffer_use", "SELECT dt, dur, sig FROM kernel_row",
        "SELECT dt, dur, sig, bytes, src, dst FROM memcpy_row", "SELECT dt, dst FROM memset_row"};
    static const char *azOrdered[] = {
        ("SELECT ts, id, op, mem_kind, address, device, bytes, api, stack_id, pool_size, pool_used, correlation,"
         " pool_address FROM memory_event WHERE op IN (1, 2, 5, 6) ORDER BY ts, id"),
        "SELECT ts, address FROM buffer_use WHERE kind = 0 AND ts IS NOT NULL ORDER BY ts",
        "SELECT start, end, name_id FROM kernel ORDER BY start",
        "SELECT start, end, copy_kind, src_kind, dst_kind, bytes, src, dst FROM memcpy ORDER BY start",
        "SELECT start, dst FROM memset WHERE dst IS NOT NULL ORDER BY start"};
    const char **az = bOrdered ? azOrdered : azPlain;
    sqlite3 *db = NULL;
    uint64_t sum = 0; /* wraps: only keeps the reads from being optimized away */
    int64_t n = 0;
    double t0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    /* without SQLite's per-call mutexes, as the analyzer opens a trace (read/open.c): with them a
     * quarter of the scan's instructions were mutex calls the analyzer does not make */
    int rc = sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    for (int i = 0; i < 5 && rc == SQLITE_OK; i++) {
        sqlite3_stmt *p = NULL;
        rc = sqlite3_prepare_v2(db, az[i], -1, &p, NULL);
        while (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
            int nCol = sqlite3_column_count(p);
            for (int j = 0; j < nCol; j++) sum += (uint64_t)sqlite3_column_int64(p, j);
            n++;
            rc = SQLITE_OK;
        }
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
        sqlite3_finalize(p);
    }
    sqlite3_close(db);
    *pRows = n + (sum == 42); /* keeps the column reads */
    *pWall = now_s() - t0;
    *pCpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    return rc == SQLITE_OK ? 0 : -1;
}

/* This process's resident set (KiB) from /proc/self/status, 0 if unknown: a forked child starts with it. */
static long self_rss_kib(void)
{
    char z[256];
    long n = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    while (fgets(z, sizeof z, f))
        if (sscanf(z, "VmRSS: %ld", &n) == 1) break;
    fclose(f);
    return n;
}

struct run {
    double wall, cpu;
    long maxrssKiB;
    int status;
};

/* Run the NULL-terminated argv (azArgv[0] the binary) in a child; wall, CPU, RSS, status into *r. 0 or -1. */
static int run_argv(char **azArgv, struct run *r)
{
    const char *zBin = azArgv[0];
    struct rusage ru;
    int status = 0;
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execv(zBin, azArgv);
        _exit(127);
    }
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) return -1;
    r->wall = now_s() - t0;
    r->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
             (double)ru.ru_stime.tv_usec * 1e-6;
    r->maxrssKiB = ru.ru_maxrss;
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return 0;
}

/* Run `vramtrace analyze --no-write --format json -o /dev/null zPath`; returns 0 or -1 (start failure). */
static int run_analyze(const char *zBin, const char *zPath, struct run *r)
{
    char *azArgv[] = {(char *)zBin, "analyze", "--no-write", "--format", "json", "-o", "/dev/null", (char *)zPath, NULL};
    return run_argv(azArgv, r);
}

/* Copy file zFrom to zTo. 0 or -1. */
static int copy_file(const char *zFrom, const char *zTo)
{
    FILE *fi = fopen(zFrom, "rb"), *fo = fopen(zTo, "wb");
    char buf[1 << 16];
    size_t n;
    int rc = fi && fo ? 0 : -1;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, fi)) > 0)
        if (fwrite(buf, 1, n, fo) != n) rc = -1;
    if (fi) fclose(fi);
    if (fo && fclose(fo) != 0) rc = -1;
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *a, int n)
{
    qsort(a, (size_t)n, sizeof *a, cmp_double);
    return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

#define MAX_RUNS 15

/*
 * Beside the single-trace figures: what --save costs against reading alone (a fresh copy each
 * run), and 4 copies of the trace analyzed with -j 1 against -j (one per online CPU), wall time.
 */
static int measure_save_and_jobs(const char *zBin, const char *zPath, int nRuns)
{
    char aCopy[4][4200], zJobs[24];
    double aSave[MAX_RUNS], aRead[MAX_RUNS], aOne[MAX_RUNS], aAll[MAX_RUNS];
    long nCpu = sysconf(_SC_NPROCESSORS_ONLN);
    for (int k = 0; k < 4; k++) snprintf(aCopy[k], sizeof aCopy[k], "%s.copy%d", zPath, k);
    snprintf(zJobs, sizeof zJobs, "%ld", nCpu > 0 ? nCpu : 1);
    for (int i = 0; i < nRuns; i++) {
        struct run r = {0, 0, 0, -1};
        char *azSave[] = {(char *)zBin, "analyze", "--save", "--format", "json", "-o", "/dev/null", aCopy[0], NULL};
        char *azRead[] = {(char *)zBin, "analyze", "--format", "json", "-o", "/dev/null", aCopy[0], NULL};
        char *azOne[] = {(char *)zBin, "analyze", "-j", "1", "--format", "json", "-o", "/dev/null",
                         aCopy[0], aCopy[1], aCopy[2], aCopy[3], NULL};
        char *azAll[] = {(char *)zBin, "analyze", "-j", zJobs, "--format", "json", "-o", "/dev/null",
                         aCopy[0], aCopy[1], aCopy[2], aCopy[3], NULL};
        for (int k = 0; k < 4; k++)
            if (copy_file(zPath, aCopy[k]) != 0) return -1;
        if (run_argv(azRead, &r) != 0 || r.status != 0) return -1;
        aRead[i] = r.wall;
        if (run_argv(azSave, &r) != 0 || r.status != 0) return -1;
        aSave[i] = r.wall;
        if (copy_file(zPath, aCopy[0]) != 0) return -1; /* unsaved again: the same input for every run */
        if (run_argv(azOne, &r) != 0 || r.status != 0) return -1;
        aOne[i] = r.wall;
        if (run_argv(azAll, &r) != 0 || r.status != 0) return -1;
        aAll[i] = r.wall;
    }
    for (int k = 0; k < 4; k++) unlink(aCopy[k]);
    {
        double save = median(aSave, nRuns), read = median(aRead, nRuns), one = median(aOne, nRuns),
               all = median(aAll, nRuns);
        printf("  --save (write-back) %.2f s wall against %.2f s reading alone: %.2fx (opt-in; goal <= 1.3x or opt-in)\n",
               save, read, save / read);
        printf("  4 copies: -j 1 %.2f s wall, -j %s %.2f s wall: %.2fx faster on %ld online CPUs\n", one, zJobs, all,
               one / all, nCpu);
    }
    return 0;
}


/*
 * Measure one trace: analyze, raw scan and ordered scan, interleaved nRuns times;
 * prints one block, *pRss receives the analyzer's peak RSS (KiB). Returns 0 or -1.
 */
static int measure(const char *zBin, const char *zPath, int nRuns, long *pRss)
{
    struct stat st;
    struct counts c;
    double aWall[MAX_RUNS], aCpu[MAX_RUNS], aRaw[MAX_RUNS], aRawCpu[MAX_RUNS], aOrd[MAX_RUNS], aOrdCpu[MAX_RUNS];
    double wall, cpu, raw, rawCpu, ord, ordCpu;
    long rss = 0;
    int64_t nRaw = 0, nOrd = 0;

    if (stat(zPath, &st) != 0 || count_rows(zPath, &c) != 0 || c.total <= 0) return -1;
    printf("\ntrace %s: %lld events (%.1f MB, %.1f bytes/event)\n", zPath, (long long)c.total, st.st_size / 1e6,
           (double)st.st_size / (double)c.total);
    printf("  mix: %.1f %% kernel, %.1f %% buffer_use, %.1f %% memory_event, %.2f %% memcpy, %.2f %% memset\n",
           100.0 * c.ker / c.total, 100.0 * c.use / c.total, 100.0 * c.mem / c.total, 100.0 * c.cpy / c.total,
           100.0 * c.set / c.total);
    for (int i = 0; i < nRuns; i++) { /* interleaved: analyze, raw scan, ordered scan */
        struct run r = {0, 0, 0, -1};
        if (run_analyze(zBin, zPath, &r) != 0 || r.status != 0) {
            fprintf(stderr, "bench_analyzer: %s analyze %s failed (status %d)\n", zBin, zPath, r.status);
            return -1;
        }
        aWall[i] = r.wall;
        aCpu[i] = r.cpu;
        if (r.maxrssKiB > rss) rss = r.maxrssKiB;
        if (raw_scan(zPath, 0, &nRaw, &aRaw[i], &aRawCpu[i]) != 0 ||
            raw_scan(zPath, 1, &nOrd, &aOrd[i], &aOrdCpu[i]) != 0) {
            fprintf(stderr, "bench_analyzer: raw scan of %s failed\n", zPath);
            return -1;
        }
    }
    char zLoad[16];
    wall = median(aWall, nRuns);
    cpu = median(aCpu, nRuns);
    raw = median(aRaw, nRuns);
    rawCpu = median(aRawCpu, nRuns);
    ord = median(aOrd, nRuns);
    ordCpu = median(aOrdCpu, nRuns);
    printf("  vramtrace analyze (end to end, %d runs, median): %.2f s wall, %.2f s CPU   [load %s]\n", nRuns, wall, cpu,
           vt_bench_load_avg(zLoad, sizeof zLoad));
    printf("    %.2f M events/s (wall), %.2f M events/s per core (CPU)   goal >= 3.0 M/s\n", c.total / wall / 1e6,
           c.total / cpu / 1e6);
    printf("    peak RSS %.1f MiB (of which this benchmark's own pages at fork: %.1f MiB)\n", rss / 1024.0,
           self_rss_kib() / 1024.0);
    printf("  raw SQLite full scan of the same tables and columns (ceiling): %.2f s wall, %.2f s CPU,"
           " %.2f M rows/s per core   [load %s]\n", raw, rawCpu, (double)nRaw / rawCpu / 1e6, zLoad);
    printf("  raw SQLite scan in the analysis' order (ORDER BY: sorted, or through time indexes if present): %.2f s wall, %.2f s CPU,"
           " %.2f M rows/s per core   [load %s]\n", ord, ordCpu, (double)nOrd / ordCpu / 1e6, zLoad);
    printf("  analyze / raw full scan: %.0f %% by CPU time, %.0f %% by wall time (goal >= 90 %%);"
           " analyze / ordered scan: %.0f %% by CPU time   [load %s]\n",
           100.0 * rawCpu / cpu, 100.0 * raw / wall, 100.0 * ordCpu / cpu, zLoad);
    *pRss = rss;
    return 0;
}

/*
 * Copy the trace zSrc to zDst with the rows of each large event table stored out
 * of time order, as a writer receiving records late would store them: reinserted
 * in the order of their time plus a random delay of up to 2 ms (new ids and rowids
 * in that order). Returns 0, or -1 on an SQLite error.
 */
static int jitter_copy(const char *zSrc, const char *zDst)
{
    static const char *azTable[][2] = {
        {"memory_event", "ts"}, {"buffer_use", "coalesce(ts, 0)"}, {"kernel", "start"}, {"memcpy", "start"},
        {"memset", "start"}};
    sqlite3 *pFrom = NULL, *db = NULL;
    sqlite3_backup *pBak;
    char zSql[1024];
    int rc;

    unlink(zDst);
    rc = sqlite3_open_v2(zSrc, &pFrom, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_open(zDst, &db);
    if (rc == SQLITE_OK) {
        pBak = sqlite3_backup_init(db, "main", pFrom, "main");
        rc = pBak ? sqlite3_backup_step(pBak, -1) : sqlite3_errcode(db);
        if (pBak) sqlite3_backup_finish(pBak);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN", NULL, NULL, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof azTable / sizeof azTable[0]; i++) {
        const char *zT = azTable[i][0];
        char *zCols = NULL;
        sqlite3_stmt *pCols = NULL;
        int iCt = vt__compact_find(zT);
        if (iCt >= 0) { /* a compacted table: its rows again in the new order, as new parts with new ids */
            char *zErr = NULL;
            snprintf(zSql, sizeof zSql,
                     "CREATE TEMP TABLE x AS SELECT NULL AS id, t, dur, %s FROM main.%s ORDER BY %s + abs(random() %% 2000000);"
                     " DELETE FROM main.%s_row; DELETE FROM main.%s_block;",
                     vt__aCompact[iCt].zCols, zT, azTable[i][1], zT, zT);
            rc = sqlite3_exec(db, zSql, NULL, NULL, NULL);
            if (rc == SQLITE_OK) rc = vt__compact_insert_select(db, iCt, "SELECT * FROM x ORDER BY rowid", 0, &zErr);
            if (rc == SQLITE_OK) rc = sqlite3_exec(db, "DROP TABLE x", NULL, NULL, NULL);
            sqlite3_free(zErr);
            continue;
        }
        /* the stored columns (table_info leaves out the generated ones, which cannot be inserted) */
        snprintf(zSql, sizeof zSql, "SELECT group_concat(name, ',') FROM pragma_table_info('%s')", zT);
        rc = sqlite3_prepare_v2(db, zSql, -1, &pCols, NULL);
        if (rc == SQLITE_OK && sqlite3_step(pCols) == SQLITE_ROW)
            zCols = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(pCols, 0));
        sqlite3_finalize(pCols);
        if (rc == SQLITE_OK && !zCols) rc = SQLITE_NOMEM;
        /* the ids (where the table has them) are renumbered in the new order */
        if (rc == SQLITE_OK) {
            snprintf(zSql, sizeof zSql,
                     "CREATE TEMP TABLE x AS SELECT %s FROM main.%s ORDER BY %s + abs(random() %% 2000000);"
                     "%s DELETE FROM main.%s; INSERT INTO main.%s(%s) SELECT * FROM x ORDER BY rowid;"
                     " DROP TABLE x;",
                     zCols, zT, azTable[i][1], strcmp(zT, "buffer_use") ? "UPDATE x SET id = NULL;" : "", zT,
                     zT, zCols);
            rc = sqlite3_exec(db, zSql, NULL, NULL, NULL);
        }
        sqlite3_free(zCols);
    }
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) fprintf(stderr, "bench_analyzer: %s: %s\n", zDst, sqlite3_errmsg(db));
    sqlite3_close(db);
    sqlite3_close(pFrom);
    if (rc != SQLITE_OK) unlink(zDst);
    return rc == SQLITE_OK ? 0 : -1;
}

/*
 * Generate (or reuse) the trace for nEvents, then measure it; with bJitter, the
 * same for its copy stored out of time order (jitter_copy). Returns 0 or -1.
 */
static int bench_size(const char *zBin, const char *zDir, int64_t nEvents, int nRuns, int bJitter, long *pRss)
{
    char zPath[4096], zJit[4096];
    struct stat st;
    struct counts c;
    struct gen g;
    long rss = 0;

    snprintf(zPath, sizeof zPath, "%s/vt_bench_analyzer_v%d_l%d_p%d_e%lld.db", zDir, GEN_VERSION, LAYERS, NPARAM,
             (long long)nEvents);
    if (stat(zPath, &st) != 0 || count_rows(zPath, &c) != 0 || c.total < nEvents) {
        double t0 = now_s();
        int status = 0;
        pid_t pid;
        printf("generating %s ...\n", zPath);
        fflush(stdout);
        /* in a child, so that the generator's page cache never counts in the analyzer's RSS
         * (a forked child starts with its parent's resident pages) */
        pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            int rcGen = generate(zPath, nEvents, &g);
            if (rcGen == 0) printf("  generated in %.1f s (largest live set %d allocations)\n", now_s() - t0, g.maxLive);
            fflush(stdout);
            _exit(rcGen == 0 ? 0 : 1);
        }
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) return -1;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
        if (count_rows(zPath, &c) != 0 || stat(zPath, &st) != 0) return -1;
    }
    if (measure(zBin, zPath, nRuns, pRss) != 0) return -1;
    if (nEvents <= 2000000 && measure_save_and_jobs(zBin, zPath, nRuns) != 0) {
        fprintf(stderr, "bench_analyzer: --save / -j runs of %s failed\n", zPath);
        return -1;
    }
    if (!bJitter) return 0;
    snprintf(zJit, sizeof zJit, "%s/vt_bench_analyzer_v%d_l%d_p%d_e%lld_j2ms.db", zDir, GEN_VERSION, LAYERS, NPARAM,
             (long long)nEvents);
    if (stat(zJit, &st) != 0 || count_rows(zJit, &c) != 0 || c.total < nEvents) {
        double t0 = now_s();
        int status = 0;
        pid_t pid;
        printf("\nwriting %s: the same rows, each large table stored out of time order ...\n", zJit);
        fflush(stdout);
        pid = fork(); /* in a child, like the generator */
        if (pid < 0) return -1;
        if (pid == 0) {
            int rcJit = jitter_copy(zPath, zJit);
            if (rcJit == 0) printf("  written in %.1f s\n", now_s() - t0);
            fflush(stdout);
            _exit(rcJit == 0 ? 0 : 1);
        }
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) return -1;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    }
    return measure(zBin, zJit, nRuns, &rss);
}

int main(int argc, char **argv)
{
    const char *zBin = getenv("VRAMTRACE_BIN"), *zDir = "/tmp";
    int64_t aSize[8];
    long aRss[8];
    int nSize = 0, nRuns = 3, bJitter = 0, rc = 0;
#ifdef VT_BENCH_VRAMTRACE
    if (!zBin || !*zBin) zBin = VT_BENCH_VRAMTRACE;
#endif
    if (argc == 3 && !strcmp(argv[1], "-s")) { /* the raw scan alone */
        int64_t nRows = 0;
        double wall = 0, cpu = 0;
        char zLoad[64];
        if (raw_scan(argv[2], 0, &nRows, &wall, &cpu) != 0) {
            fprintf(stderr, "bench_analyzer: raw scan of %s failed\n", argv[2]);
            return 1;
        }
        vt_bench_load_avg(zLoad, sizeof zLoad);
        printf("raw scan: %lld rows, %.2f s wall, %.2f s CPU   [load %s]\n", (long long)nRows, wall, cpu, zLoad);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-r") && i + 1 < argc) nRuns = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-d") && i + 1 < argc) zDir = argv[++i];
        else if (!strcmp(argv[i], "-j")) bJitter = 1;
        else if (argv[i][0] != '-' && nSize < 8 && atoll(argv[i]) > 0) aSize[nSize++] = atoll(argv[i]);
        else {
            fprintf(stderr, "usage: bench_analyzer [-r RUNS] [-d DIR] [-j] [EVENTS...] | -s TRACE\n");
            return 2;
        }
    }
    if (nRuns < 1 || nRuns > MAX_RUNS) nRuns = 3;
    if (!zBin || access(zBin, X_OK) != 0) {
        fprintf(stderr, "bench_analyzer: vramtrace command not found (set VRAMTRACE_BIN)\n");
        return 1;
    }
    if (nSize == 0) {
        aSize[nSize++] = 1000000;
        aSize[nSize++] = 10000000;
    }
    printf("bench_analyzer: %s analyze --no-write --format json -o /dev/null TRACE\n", zBin);
    for (int i = 0; i < nSize && rc == 0; i++) rc = bench_size(zBin, zDir, aSize[i], nRuns, bJitter, &aRss[i]);
    if (rc == 0 && nSize > 1) {
        printf("\npeak RSS by trace size (live set is the same in every trace):\n");
        for (int i = 0; i < nSize; i++)
            printf("  %10lld events: %.1f MiB (%.2fx the first)\n", (long long)aSize[i], aRss[i] / 1024.0,
                   (double)aRss[i] / (double)aRss[0]);
    }
    return rc == 0 ? 0 : 1;
}
