/* Synthetic trace builder for the analyzer tests: writes traces through the schema module. */
#ifndef VT_TRACEGEN_H
#define VT_TRACEGEN_H

#include <sqlite3.h>
#include <stdint.h>

#define MiB ((int64_t)1 << 20)
#define GiB ((int64_t)1 << 30)
#define MS ((int64_t)1000000)

struct tg {
    sqlite3 *db;
    int64_t nextCorr;
    int64_t base; /* the trace's time base: the tg_* functions take absolute times and store t = time - base */
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
