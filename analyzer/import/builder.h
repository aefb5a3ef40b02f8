/* Internal: the trace builder: writes a vramtrace trace synchronously (schema, strings, stacks, rows, meta) for the importers. */
#ifndef VT_IMPORT_BUILDER_H
#define VT_IMPORT_BUILDER_H

#include <stddef.h>
#include <stdint.h>

/*
 * A trace is created under a temporary name beside zPath, with the current
 * schema (vt__schema_create_at), filled inside one transaction with prepared
 * inserts, and renamed to zPath by vt__tb_close only when everything was
 * written: a failed import leaves no file behind. The time base is taken from
 * the first vt__tb_base call (or 0 when rows come first).
 *
 * Rows are plain structs of int64_t fields: VT_TB_NULL stores NULL (unknown).
 * Times are absolute nanoseconds; the builder stores them relative to the base.
 * Tables whose rows arrive out of time order are put back in time order at
 * close, so readers that scan in rowid order see time order (NULL times first:
 * what happened before the recorded window; equal times as written). A plain
 * table's rows from the first one out of order on are kept aside in runs, each
 * in time order (runs.h: a snapshot's devices, one after another), and merged
 * into the table at close; with too many runs, or when the table is read or
 * changed before close, they are written to it as they came and SQLite sorts it.
 */

#define VT_TB_NULL INT64_MIN

struct vt__tb;

/* memory_event: what CUDA saw (segments, pool memory, VMM). */
struct vt__tb_memory {
    int64_t ts, op, mem_kind, address, bytes, device, context, stream, correlation, api, is_async, pc, thread,
        stack_id;
};
/* tensor_event: allocations a framework made inside its segments (op 1 alloc, 2 free, 3 free requested). */
struct vt__tb_tensor {
    int64_t ts, op, device, address, bytes, stream, stack_id, source;
};
struct vt__tb_oom {
    int64_t ts, api, correlation, device, bytes, status, free_bytes, total_bytes, thread, stack_id;
};
struct vt__tb_memcpy {
    int64_t start, end, device, context, stream, correlation, copy_kind, src_kind, dst_kind, bytes, is_async,
        src_device, dst_device, src, dst;
};
struct vt__tb_memset {
    int64_t start, end, device, context, stream, correlation, bytes, value, mem_kind, is_async, dst;
};
struct vt__tb_kernel {
    int64_t start, end, device, context, stream, correlation, name_id, grid_x, grid_y, grid_z, block_x, block_y,
        block_z, static_smem, dynamic_smem, registers;
};
struct vt__tb_nvtx {
    int64_t start, end, kind, name_id, domain_id, thread, depth;
};
struct vt__tb_api {
    int64_t start, end, api, correlation, thread, device, status, bytes, ptr, src, dst, stream, stack_id;
};

/* One frame of a call site (strings may be NULL: unknown). */
struct vt__tb_frame {
    int kind; /* VT_FRAME_NATIVE or VT_FRAME_PYTHON */
    const char *zFunction, *zFile, *zModule;
    int64_t line, pc; /* VT_TB_NULL when unknown */
};

/* Set every int64_t field of a row struct to VT_TB_NULL. */
void vt__tb_clear(void *pRow, size_t nBytes);
#define VT_TB_CLEAR(row) vt__tb_clear(&(row), sizeof(row))

/*
 * Start a trace that vt__tb_close will put at zPath. bForce: replace an
 * existing file; otherwise an existing zPath is an error. Returns 0, or -1
 * with a message in zErr (size nErr) and *pp NULL.
 */
int vt__tb_open(const char *zPath, int bForce, struct vt__tb **pp, char *zErr, size_t nErr);

/* Offer a time base (absolute ns): the first call before any row fixes it. Returns 0 or -1. */
int vt__tb_base(struct vt__tb *tb, int64_t base);

/* Whether the schema in use accepts NULL times (schema version 3 and later). */
int vt__tb_null_times(const struct vt__tb *tb);

/* Set meta(key) = value; the f variant formats. Return 0 or -1. */
int vt__tb_meta(struct vt__tb *tb, const char *zKey, const char *zValue);
int vt__tb_metaf(struct vt__tb *tb, const char *zKey, const char *zFmt, ...) __attribute__((format(printf, 3, 4)));

/* Id of text z in `string` (inserted on first sight), or -1 on error. NULL z gives VT_TB_NULL. */
int64_t vt__tb_string(struct vt__tb *tb, const char *z);

/* Id of the stack of frames a[0..n) (innermost first), deduplicated; VT_TB_NULL for n == 0; -1 on error. */
int64_t vt__tb_stack(struct vt__tb *tb, const struct vt__tb_frame *a, int n);

/* The same for frames whose strings are already ids (vt__tb_string): five values per frame in aKey
 * (kind, function, file, module, line; VT_TB_NULL where unknown) and each frame's pc in aPc. */
int64_t vt__tb_stack_keys(struct vt__tb *tb, const int64_t *aKey, const int64_t *aPc, int n);

/* A device row (id required; NULL-able numbers as VT_TB_NULL, strings as NULL). Insert or replace. 0 or -1. */
int vt__tb_device(struct vt__tb *tb, int64_t id, const char *zName, const char *zUuid, int64_t totalBytes,
                  int64_t ccMajor, int64_t ccMinor, int64_t smCount);

/* Insert one row; 0, or -1 with the message kept (vt__tb_errmsg). A row whose time is NULL where the
 * schema needs one is not written and is counted (vt__tb_untimed). */
int vt__tb_memory(struct vt__tb *tb, const struct vt__tb_memory *r);
int vt__tb_tensor(struct vt__tb *tb, const struct vt__tb_tensor *r);
int vt__tb_oom(struct vt__tb *tb, const struct vt__tb_oom *r);
int vt__tb_memcpy(struct vt__tb *tb, const struct vt__tb_memcpy *r);
int vt__tb_memset(struct vt__tb *tb, const struct vt__tb_memset *r);
int vt__tb_kernel(struct vt__tb *tb, const struct vt__tb_kernel *r);
int vt__tb_nvtx(struct vt__tb *tb, const struct vt__tb_nvtx *r);
int vt__tb_api(struct vt__tb *tb, const struct vt__tb_api *r);

/* Rows written so far (all event tables), and rows left out for want of a time the schema requires. */
int64_t vt__tb_rows(const struct vt__tb *tb);
int64_t vt__tb_untimed(const struct vt__tb *tb);

/* The tables rows go to, for vt__tb_next_rowid and vt__tb_set_device. */
enum vt_tb_table { VT_TB_MEMORY, VT_TB_TENSOR, VT_TB_OOM, VT_TB_MEMCPY, VT_TB_MEMSET, VT_TB_KERNEL, VT_TB_NVTX,
                   VT_TB_API, VT_TB_NTABLE };

/* The rowid the next row of table iTable will get (rows are numbered 1, 2, ... as written). */
int64_t vt__tb_next_rowid(const struct vt__tb *tb, int iTable);
/* Set `device` of table iTable's rows whose rowid lies in [first, last] (before vt__tb_close); VT_TB_NULL
 * stores NULL. 0 or -1. */
int vt__tb_set_device(struct vt__tb *tb, int iTable, int64_t first, int64_t last, int64_t device);

/*
 * Say, before table iTable's first row, that its rows will come out of time order (a snapshot's devices, one
 * after another): they are kept in runs from the first row on and written to the table once, merged, at
 * close, instead of the rows before the first one out of order being written, read back and written again.
 * The trace is the same either way. A compacted table, or one with rows already, ignores it.
 */
void vt__tb_spill(struct vt__tb *tb, int iTable);

/* Set `stack_id` of table iTable's row with that rowid (vt__tb_next_rowid before it was written). 0 or -1. */
int vt__tb_set_stack(struct vt__tb *tb, int iTable, int64_t rowid, int64_t stackId);

/*
 * Rows an importer keeps aside until it has read its whole file, to join events that come in any
 * order (five integers and a text each, in a temporary table that never reaches the trace): add one
 * (0 or -1), and hand each to xRow ordered by its integers (a[0], then a[1], ...; xRow returns 0 to
 * go on, else stops the walk with that value, which vt__tb_aside_each returns; -1 on an SQLite error).
 */
int vt__tb_aside(struct vt__tb *tb, const int64_t a[5], const char *z);
int vt__tb_aside_each(struct vt__tb *tb, int (*xRow)(void *pArg, const int64_t *a, const char *z), void *pArg);

/* Run SQL on the trace being built (for an importer's own queries). Returns an SQLite code. */
int vt__tb_exec(struct vt__tb *tb, const char *zSql);

const char *vt__tb_errmsg(const struct vt__tb *tb);

/*
 * Finish: bKeep 1 orders the tables, commits and renames the trace to its
 * path (returns 0, or -1 with the message in zErr); bKeep 0 discards it
 * (returns 0). tb is freed either way.
 */
int vt__tb_close(struct vt__tb *tb, int bKeep, char *zErr, size_t nErr);

#endif
