/* Internal test fixture: traces shaped like real runs of each CUDA sample (no GPU needed). */
#ifndef VT_TESTS_GPU_FAKE_TRACE_H
#define VT_TESTS_GPU_FAKE_TRACE_H

#include <sqlite3.h>

/* Addresses and sizes the fixture uses, for tests that alter a built trace. */
#define VT_FAKE_COPY_BYTES (24LL * 1024 * 1024 + 12288)
#define VT_FAKE_PAGEABLE 0x5600a0000000LL
#define VT_FAKE_PINNED 0x7f5000000000LL
#define VT_FAKE_DEVICE 0x7f2000000000LL
#define VT_FAKE_TOTAL 85029158912LL /* device 0's total bytes */
#define VT_FAKE_POOL_DEFAULT 0x7f4000000000LL
#define VT_FAKE_POOL_EXPLICIT 0x7f6000000000LL
#define VT_FAKE_GRAN (2LL * 1024 * 1024)
#define VT_FAKE_VA 0x7fb000000000LL

/* A trace under construction: the database and a CUPTI-like clock and correlation counter. */
struct vt_fake {
    sqlite3 *db;
    long long ts;
    long long corr;
};

/*
 * Every function below runs SQL on f->db and, being a test fixture, ends the
 * process with status 1 (after printing the SQL error) if a statement fails.
 */

/* Run one statement built with sqlite3_mprintf (%lld, %Q, ...). */
void vt__fake_sql(sqlite3 *db, const char *zFmt, ...);

/*
 * Start a trace in the empty database db: the schema, and what the tracer
 * writes for every process (meta with this pid and a clean close, device 0,
 * the kernel name strings), plus a 2 MiB allocation and a kernel of the CUDA
 * runtime's own that the checks must tolerate.
 */
void vt__fake_open(struct vt_fake *f, sqlite3 *db, long long pid);

/* Write the events of one real run of zSample. Returns 0, or -1 for an unknown sample. */
int vt__fake_build(struct vt_fake *f, const char *zSample);

/* phases; bKeepOutputs = 0 builds the fixed program instead (each batch frees its output). */
void vt__fake_build_phases(struct vt_fake *f, int bKeepOutputs);

/* One synchronous allocation or free (as from a MEMORY2 record) with its api_call row. */
void vt__fake_mem(struct vt_fake *f, int op, int kind, long long address, long long bytes);

/* The "vt-fact:" lines the real zSample prints for these events ("" if it prints none). */
const char *vt__fake_stdout(const char *zSample);

#endif
