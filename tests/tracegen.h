/* Synthetic trace builder for the analyzer tests: writes traces through the schema module. */
#ifndef VT_TRACEGEN_H
#define VT_TRACEGEN_H

#include <sqlite3.h>
#include <stdint.h>

#define MiB ((int64_t)1 << 20)
#define GiB ((int64_t)1 << 30)
#define MS ((int64_t)1000000)

#define TG_NSTMT 12 /* statements the full-row writers prepare once per trace */

struct tg {
    sqlite3 *db;
    int64_t nextCorr;
    int64_t base; /* the trace's time base: the tg_* functions take absolute times and store t = time - base */
    sqlite3_stmt *apStmt[TG_NSTMT]; /* the full-row writers' statements (tg_close finalizes them) */
};

/* Create a trace at zPath (replacing any file) with the schema, pid 1234, clean close. NULL on error.
 * Time base 0: rows inserted by hand store absolute times in t. */
struct tg *tg_open(const char *zPath);
/* tg_open with time base `base` (schema.h): the tg_* functions still take absolute times. */
struct tg *tg_open_at(const char *zPath, int64_t base);
/* Commit and close; returns 0 or -1. */
int tg_close(struct tg *g);

void tg_meta(struct tg *g, const char *zKey, const char *zValue);
void tg_device(struct tg *g, int id, const char *zName, int64_t totalBytes);
int64_t tg_string(struct tg *g, const char *z);
/* A stack of one Python frame (file:line in function) over one native frame; returns its id. */
int64_t tg_stack(struct tg *g, const char *zFile, int line, const char *zFunc);

/* memory_event rows (api cudaMalloc / cudaFree, or as given); stack -1 = none */
void tg_alloc(struct tg *g, int64_t ts, int device, int kind, int64_t addr, int64_t bytes, int64_t stack);
void tg_free(struct tg *g, int64_t ts, int device, int kind, int64_t addr, int64_t bytes);
/* A block of PyTorch's allocation history (tensor_event, source 1: op 1 alloc, 2 free) on device 0 at ts;
 * stack -1: none. */
void tg_block(struct tg *g, int64_t ts, int op, int64_t addr, int64_t bytes, int64_t stack);
void tg_memop(struct tg *g, int64_t ts, int op, int device, int kind, int64_t addr, int64_t bytes,
              int64_t stack, int64_t poolSize, int64_t poolUsed);
/* a kernel [start, end) named zName; returns its correlation id */
int64_t tg_kernel(struct tg *g, int64_t start, int64_t end, const char *zName);
/* a kernel argument use of the allocation at addr, launched at ts */
void tg_use(struct tg *g, int64_t ts, int64_t corr, int64_t addr);
void tg_memcpy(struct tg *g, int64_t start, int64_t end, int copyKind, int srcKind, int dstKind, int64_t bytes,
               int64_t src, int64_t dst);
void tg_nvtx(struct tg *g, int64_t start, int64_t end, const char *zName);
void tg_oom(struct tg *g, int64_t ts, int device, int64_t bytes, int64_t freeBytes, int64_t totalBytes, int64_t stack);

/*
 * Full rows, every column as the tracer writes it (tracer/decode.c), for generators that
 * shape traces like real jobs (tests/accuracy). Times are absolute (stored as t = time - base);
 * TG_NULL stores NULL. Unlike the writers above, a negative value is stored as it is (a pool
 * release threshold of UINT64_MAX is -1 in SQLite). Statements are prepared once per trace.
 */
#define TG_NULL INT64_MIN
struct tg_memrow {
    int64_t ts, op, memKind, address, bytes, device, context, stream, correlation, api, isAsync;
    int64_t poolType, poolAddress, poolThreshold, poolSize, poolUsed, pc, thread, stack;
};
struct tg_apirow {
    int64_t api, correlation, start, end, thread, device, status, bytes, ptr, src, dst, stream, stack;
};
struct tg_kernelrow {
    int64_t start, end, device, context, stream, correlation, nameId, gridX, gridY, gridZ;
    int64_t blockX, blockY, blockZ, staticSmem, dynamicSmem, registers;
};
struct tg_copyrow {
    int64_t start, end, device, context, stream, correlation, copyKind, srcKind, dstKind, bytes, isAsync;
    int64_t src, dst;
};
struct tg_oomrow {
    int64_t ts, api, correlation, device, bytes, status, freeBytes, totalBytes, thread, stack;
};
/* One frame of a stack: kind VT_FRAME_NATIVE (pc, function, module) or VT_FRAME_PYTHON (function, file, line). */
struct tg_frame {
    int kind;
    int64_t pc;
    const char *zFunction, *zFile, *zModule; /* NULL: not known */
    int line;
};
void tg_memory_row(struct tg *g, const struct tg_memrow *m);
void tg_api_row(struct tg *g, const struct tg_apirow *a);
void tg_kernel_row(struct tg *g, const struct tg_kernelrow *k);
void tg_copy_row(struct tg *g, const struct tg_copyrow *c);
void tg_oom_row(struct tg *g, const struct tg_oomrow *o);
/* buffer_use(correlation, kind, address, t, device) */
void tg_use_row(struct tg *g, int64_t corr, int kind, int64_t addr, int64_t ts, int64_t device);
/* nvtx_range: end TG_NULL for a range never closed, depth TG_NULL when not a push/pop range */
void tg_nvtx_row(struct tg *g, int64_t start, int64_t end, int kind, int64_t nameId, int64_t thread, int64_t depth);
/* sync_event(start, end, type, device, context, stream, correlation, event) */
void tg_sync_row(struct tg *g, int64_t start, int64_t end, int type, int64_t stream, int64_t correlation);
/* dropped(t, source, what, count) */
void tg_dropped_row(struct tg *g, int64_t ts, int source, const char *zWhat, int64_t count);
/* pool_event(t, op, device, pool_type, address, threshold, size, used, correlation) */
void tg_pool_row(struct tg *g, int64_t ts, int op, int64_t device, int64_t poolType, int64_t address,
                 int64_t threshold, int64_t size, int64_t used);
/* A stack of n frames (innermost first: Python frames, then native ones) with its hash; returns its id. */
int64_t tg_stack_frames(struct tg *g, const struct tg_frame *a, int n, int64_t hash);
/* Run SQL on the trace (no result rows); aborts on error. */
void tg_exec(struct tg *g, const char *zSql);

/* Run a one-integer query on the trace at zPath (-1 on error). */
int64_t tg_query(const char *zPath, const char *zSql);

/* A fresh temporary directory for a test's traces (static buffer), and a path inside it. */
const char *tg_tmpdir(void);
const char *tg_path(const char *zName);
/* 1 if z is one syntactically valid JSON value (RFC 8259), else 0. */
int tg_json_valid(const char *z);

/* End of a test: under ASan, run LeakSanitizer now; then remove the temporary directory and
 * every file in it (kept when VT_TEST_KEEP is set). */
void tg_cleanup(void);

#endif
