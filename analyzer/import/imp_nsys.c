/* Nsight Systems SQLite exports (2022 to 2025 versions) to traces, one per process. */
#include "import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "util/errors.h"
#include "vramtrace/schema.h"

/*
 * Nsight's layout: integer nanosecond times relative to the session start
 * (TARGET_INFO_SESSION_START_TIME holds its wall-clock time), strings in
 * StringIds, processes and threads as serialized global ids (pid in bits
 * 24-47, thread id in bits 0-23). Tables exist only when they have rows, and
 * columns and enum tables differ between versions: every query names only the
 * columns the table has (NULL for the others), and enum values are mapped by
 * their names when the enum table exists, by the documented numbers when not.
 */

#define PID_OF(c) "((" c " >> 24) & 16777215)"

/* NVTX: push/pop nesting depth per thread (rows come ordered by thread and start). */
struct nvtx_state {
    int64_t thread;
    int64_t aEnd[256];
    int nOpen;
};

/*
 * Reads of another tool's SQLite file are bounded by work, not left to run as long as the file's
 * views say: at most VT_BUDGET_BASE plus VT_BUDGET_PER_BYTE per byte of the file steps of
 * SQLite's virtual machine on its connection, counted every VT_BUDGET_EVERY steps by a progress
 * handler (a real export takes less than one per byte; a recursive view makes rows without
 * end), and no value longer than VT_BUDGET_MAX_VALUE bytes.
 */
#define VT_BUDGET_EVERY 10000
#define VT_BUDGET_BASE ((int64_t)10 * 1000 * 1000)
#define VT_BUDGET_PER_BYTE 100
#define VT_BUDGET_MAX_VALUE (64 << 20)
struct vt__sqlbudget {
    int64_t nSteps, nMax;
    int bStopped; /* the budget ran out: the statement was interrupted */
};

struct nsys {
    struct vt__imp *x;
    struct vt__sqlbudget budget;
    struct nvtx_state nvtx;
    sqlite3 *db;
    int64_t pid; /* -1: every row */
    int aMemKind[16]; /* Nsight memory kind -> CUPTI's */
    int64_t nRows;
    int64_t aCalls[256]; /* successful allocation and free calls of the process, by API id */
};

/* 1 when table zTable exists. */
static int has_table(sqlite3 *db, const char *zTable)
{
    sqlite3_stmt *p = NULL;
    int b = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ?", -1, &p,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_text(p, 1, zTable, -1, SQLITE_STATIC);
        b = sqlite3_step(p) == SQLITE_ROW;
    }
    sqlite3_finalize(p);
    return b;
}

/* 1 when zTable has column zCol. */
static int has_col(sqlite3 *db, const char *zTable, const char *zCol)
{
    sqlite3_stmt *p = NULL;
    int b = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &p, NULL) == SQLITE_OK) {
        sqlite3_bind_text(p, 1, zTable, -1, SQLITE_STATIC);
        sqlite3_bind_text(p, 2, zCol, -1, SQLITE_STATIC);
        b = sqlite3_step(p) == SQLITE_ROW;
    }
    sqlite3_finalize(p);
    return b;
}

/*
 * Expand a query template: "{c}" is column c of table zTable when it has it,
 * else NULL; "{pid:c}" is the filter on column c for the process (1 when the
 * import takes every row or the column is missing). sqlite3_malloc'd.
 */
static char *query(struct nsys *n, const char *zTable, const char *zTmpl)
{
    sqlite3_str *s = sqlite3_str_new(n->db);
    const char *p = zTmpl;
    while (*p) {
        const char *zOpen = strchr(p, '{'), *zClose;
        char zCol[64];
        int bPid;
        if (!zOpen || !(zClose = strchr(zOpen, '}'))) {
            sqlite3_str_appendall(s, p);
            break;
        }
        sqlite3_str_append(s, p, (int)(zOpen - p));
        bPid = !strncmp(zOpen + 1, "pid:", 4);
        snprintf(zCol, sizeof zCol, "%.*s", (int)(zClose - zOpen - 1 - (bPid ? 4 : 0)), zOpen + 1 + (bPid ? 4 : 0));
        if (bPid) {
            if (n->pid >= 0 && has_col(n->db, zTable, zCol))
                sqlite3_str_appendf(s, PID_OF("t.\"%w\"") " = %lld", zCol, (long long)n->pid);
            else
                sqlite3_str_appendall(s, "1");
        } else if (has_col(n->db, zTable, zCol)) {
            sqlite3_str_appendf(s, "t.\"%w\"", zCol);
        } else {
            sqlite3_str_appendall(s, "NULL");
        }
        p = zClose + 1;
    }
    return sqlite3_str_finish(s);
}

/* Column i of the current row as an integer, VT_TB_NULL when it is NULL or not an integer. */
static int64_t col_or_null(sqlite3_stmt *p, int i)
{
    return sqlite3_column_type(p, i) == SQLITE_INTEGER ? sqlite3_column_int64(p, i) : VT_TB_NULL;
}

/* The failure of a read stopped by budget b (while reading zWhat). Returns the exit code. */
static int budget_fail(struct vt__imp *x, const struct vt__sqlbudget *b, const char *zWhat)
{
    return vt__imp_fail(x, VT_EXIT_CORRUPT,
                        "reading the export's %s was stopped after %lld steps of SQLite's virtual machine, more than a "
                        "file of its size can need (a view that never ends, or a hostile file): not imported",
                        zWhat, (long long)b->nSteps);
}

/* The export's SQLite error as the import's failure: damaged (6) or internal (7). */
static int nsys_fail(struct nsys *n, const char *zWhat)
{
    if (n->budget.bStopped) return budget_fail(n->x, &n->budget, zWhat);
    return vt__imp_fail(n->x, sqlite3_errcode(n->db) == SQLITE_CORRUPT || sqlite3_errcode(n->db) == SQLITE_NOTADB
                                  ? VT_EXIT_CORRUPT : VT_EXIT_INTERNAL,
                        "cannot read the export's %s: %s", zWhat, sqlite3_errmsg(n->db));
}

/* Nsight memory kinds to CUPTI's: by ENUM_CUDA_MEM_KIND names, else Nsight's documented numbers (CUPTI's - 1). */
static void map_mem_kinds(struct nsys *n)
{
    static const struct {
        const char *zName;
        int k;
    } a[] = {{"MANAGED_STATIC", VT_MEMKIND_MANAGED_STATIC}, {"DEVICE_STATIC", VT_MEMKIND_DEVICE_STATIC},
             {"PAGEABLE", VT_MEMKIND_PAGEABLE}, {"PINNED", VT_MEMKIND_PINNED}, {"DEVICE", VT_MEMKIND_DEVICE},
             {"ARRAY", VT_MEMKIND_ARRAY}, {"MANAGED", VT_MEMKIND_MANAGED}};
    sqlite3_stmt *p = NULL;
    for (int i = 0; i < 16; i++) n->aMemKind[i] = i < 7 ? i + 1 : VT_MEMKIND_UNKNOWN;
    if (!has_table(n->db, "ENUM_CUDA_MEM_KIND") ||
        sqlite3_prepare_v2(n->db, "SELECT id, name FROM ENUM_CUDA_MEM_KIND", -1, &p, NULL) != SQLITE_OK) {
        sqlite3_finalize(p);
        return;
    }
    while (sqlite3_step(p) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(p, 0);
        const char *z = (const char *)sqlite3_column_text(p, 1);
        if (id < 0 || id >= 16 || !z) continue;
        n->aMemKind[id] = VT_MEMKIND_UNKNOWN;
        for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
            if (strstr(z, a[i].zName)) {
                n->aMemKind[id] = a[i].k;
                break;
            }
    }
    sqlite3_finalize(p);
}

/* CUPTI's memory kind of Nsight's value v (unknown when out of range). */
static int64_t mem_kind(struct nsys *n, int64_t v)
{
    return v >= 0 && v < 16 ? n->aMemKind[v] : VT_MEMKIND_UNKNOWN;
}

/* vramtrace's API id of an Nsight function name ("cudaMalloc_v3020", "cuMemAlloc_v2", "cudaMemcpyAsync_ptsz"). */
static int api_id(const char *z)
{
    static const struct {
        int id;
        const char *zName;
    } a[] = {
#define VT__API_NAME(id, name, family) {id, name},
        VT_API_LIST(VT__API_NAME)
#undef VT__API_NAME
    };
    size_t len;
    if (!z) return 0;
    len = strcspn(z, "_");
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        if (strlen(a[i].zName) == len && !strncmp(z, a[i].zName, len)) return a[i].id;
    return 0;
}

/* Run one import query; xRow gets each row. Returns 0 or an exit code. */
static int each_row(struct nsys *n, const char *zTable, const char *zTmpl, int (*xRow)(struct nsys *, sqlite3_stmt *))
{
    char *zSql;
    sqlite3_stmt *p = NULL;
    int rc = 0, src;
    if (!has_table(n->db, zTable)) return 0;
    if (!(zSql = query(n, zTable, zTmpl))) return vt__imp_fail(n->x, VT_EXIT_INTERNAL, "out of memory");
    if (sqlite3_prepare_v2(n->db, zSql, -1, &p, NULL) != SQLITE_OK) {
        rc = nsys_fail(n, zTable);
        goto done;
    }
    while ((src = sqlite3_step(p)) == SQLITE_ROW) {
        n->x->nEvents++;
        if ((rc = xRow(n, p)) != 0) goto done;
    }
    if (src != SQLITE_DONE) rc = nsys_fail(n, zTable);
done:
    sqlite3_finalize(p);
    sqlite3_free(zSql);
    return rc;
}

/* ---- one row per table ---- */

static int row_memory(struct nsys *n, sqlite3_stmt *p)
{
    struct vt__tb_memory r;
    int64_t op = col_or_null(p, 7);
    VT_TB_CLEAR(r);
    r.ts = col_or_null(p, 0);
    r.device = col_or_null(p, 1);
    r.context = col_or_null(p, 2);
    r.address = sqlite3_column_int64(p, 3); /* any 64-bit pattern is an address (docs/schema.md); NULL: none */
    r.pc = col_or_null(p, 4);
    r.bytes = col_or_null(p, 5);
    r.mem_kind = mem_kind(n, col_or_null(p, 6));
    r.op = op == 0 ? VT_MEMOP_ALLOC : op == 1 ? VT_MEMOP_FREE : VT_TB_NULL;
    r.correlation = col_or_null(p, 8);
    r.stream = col_or_null(p, 9);
    r.api = api_id((const char *)sqlite3_column_text(p, 10));
    if (!r.api) r.api = VT_TB_NULL;
    r.thread = col_or_null(p, 11);
    if (r.ts == VT_TB_NULL || r.op == VT_TB_NULL || sqlite3_column_type(p, 3) != SQLITE_INTEGER || r.bytes == VT_TB_NULL) {
        vt__imp_note(n->x, "CUDA_GPU_MEMORY_USAGE_EVENTS rows without time, operation, address or size were left out");
        return 0;
    }
    return vt__tb_memory(n->x->tb, &r) ? vt__imp_tb_fail(n->x) : 0;
}

/* A runtime call vramtrace knows: an api_call row, and an OOM event when an allocation ran out of memory. */
static int row_runtime(struct nsys *n, sqlite3_stmt *p)
{
    const char *zName = (const char *)sqlite3_column_text(p, 6);
    int api = api_id(zName);
    int64_t status = col_or_null(p, 3);
    struct vt__tb_api r;
    const char *zFamily = NULL;
    if (!api || col_or_null(p, 0) == VT_TB_NULL) return 0;
#define VT__API_FAMILY(id, name, family) if (api == id) zFamily = family;
    VT_API_LIST(VT__API_FAMILY)
#undef VT__API_FAMILY
    VT_TB_CLEAR(r);
    r.start = col_or_null(p, 0);
    r.end = col_or_null(p, 1);
    r.api = api;
    r.correlation = col_or_null(p, 2);
    r.status = status == VT_TB_NULL ? 0 : status;
    r.thread = col_or_null(p, 4);
    if (vt__tb_api(n->x->tb, &r)) return vt__imp_tb_fail(n->x);
    if (r.status == 0 && zFamily && (!strcmp(zFamily, "alloc") || !strcmp(zFamily, "free")) && api > 0 && api < 256)
        n->aCalls[api]++;
    /* a failed allocation: out of memory is cudaErrorMemoryAllocation / CUDA_ERROR_OUT_OF_MEMORY, both 2 */
    if (status == 2 && zFamily && (!strcmp(zFamily, "alloc") || api == 40)) {
        struct vt__tb_oom o;
        VT_TB_CLEAR(o);
        o.ts = r.end != VT_TB_NULL ? r.end : r.start;
        o.api = api;
        o.correlation = r.correlation;
        o.status = status;
        o.thread = r.thread;
        /* the export has no request size: unknown */
        if (vt__tb_oom(n->x->tb, &o)) return vt__imp_tb_fail(n->x);
        vt__imp_note(n->x, "failed allocation calls become OOM events of unknown size (the export records no "
                           "request sizes)");
    }
    return 0;
}

/*
 * The note on an export without CUDA_GPU_MEMORY_USAGE_EVENTS: what is not
 * known, and the allocation and free calls it has in their place ("10
 * cudaMalloc, 1 cudaHostAlloc" and "1 cudaFree"), whose sizes were not
 * recorded.
 */
static void note_no_memory_events(struct nsys *n)
{
    static const struct {
        int id;
        const char *zName, *zFamily;
    } a[] = {
#define VT__API_ROW(id, name, family) {id, name, family},
        VT_API_LIST(VT__API_ROW)
#undef VT__API_ROW
    };
    static const char *const azFamily[2] = {"alloc", "free"};
    char azList[2][512];
    int64_t anCalls[2] = {0, 0};
    for (int f = 0; f < 2; f++) {
        size_t used = 0;
        azList[f][0] = 0;
        for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
            int64_t c = a[i].id > 0 && a[i].id < 256 ? n->aCalls[a[i].id] : 0;
            if (c <= 0 || strcmp(a[i].zFamily, azFamily[f]) != 0) continue;
            anCalls[f] += c;
            if (used < sizeof azList[f])
                used += (size_t)snprintf(azList[f] + used, sizeof azList[f] - used, "%s%lld %s", used ? ", " : "",
                                         (long long)c, a[i].zName);
        }
    }
    if (!anCalls[0] && !anCalls[1])
        vt__imp_note(n->x, "the export has no CUDA_GPU_MEMORY_USAGE_EVENTS (recorded without "
                           "--cuda-memory-usage=true): no allocation sizes or addresses are known, so there are no "
                           "lifetimes, leaks or peaks; no allocation or free call was traced either");
    else
        vt__imp_note(n->x, "the export has no CUDA_GPU_MEMORY_USAGE_EVENTS (recorded without "
                           "--cuda-memory-usage=true): no allocation sizes or addresses are known, so there are no "
                           "lifetimes, leaks or peaks; allocation calls without sizes (in api_call): %lld allocation%s "
                           "(%s), %lld free%s%s%s%s, sizes unknown%s",
                     (long long)anCalls[0], anCalls[0] == 1 ? "" : "s", anCalls[0] ? azList[0] : "none",
                     (long long)anCalls[1], anCalls[1] == 1 ? "" : "s", anCalls[1] ? " (" : "",
                     anCalls[1] ? azList[1] : "", anCalls[1] ? ")" : "",
                     anCalls[0] != anCalls[1] ? " (not balanced within the recorded window)" : "");
}

/* One kernel row (rows without both times are left out). */
static int row_kernel(struct nsys *n, sqlite3_stmt *p)
{
    struct vt__tb_kernel r;
    const char *zName = (const char *)sqlite3_column_text(p, 16);
    VT_TB_CLEAR(r);
    r.start = col_or_null(p, 0);
    r.end = col_or_null(p, 1);
    r.device = col_or_null(p, 2);
    r.context = col_or_null(p, 3);
    r.stream = col_or_null(p, 4);
    r.correlation = col_or_null(p, 5);
    r.grid_x = col_or_null(p, 6);
    r.grid_y = col_or_null(p, 7);
    r.grid_z = col_or_null(p, 8);
    r.block_x = col_or_null(p, 9);
    r.block_y = col_or_null(p, 10);
    r.block_z = col_or_null(p, 11);
    r.static_smem = col_or_null(p, 12);
    r.dynamic_smem = col_or_null(p, 13);
    r.registers = col_or_null(p, 14);
    if (r.start == VT_TB_NULL || r.end == VT_TB_NULL) return 0;
    if (zName && (r.name_id = vt__tb_string(n->x->tb, zName)) == -1) return vt__imp_tb_fail(n->x);
    return vt__tb_kernel(n->x->tb, &r) ? vt__imp_tb_fail(n->x) : 0;
}

/*
 * The kernel_name rows of the imported kernels: each demangled name (the name the kernel rows
 * got) with Nsight's short name. Kernels without both keep their name as it is. 0 or an exit code.
 */
static int kernel_names(struct nsys *n)
{
    char *zSql, *zIns;
    sqlite3_stmt *p = NULL;
    int rc = 0, src;
    if (!has_table(n->db, "CUPTI_ACTIVITY_KIND_KERNEL")) return 0;
    zSql = query(n, "CUPTI_ACTIVITY_KIND_KERNEL",
                 "SELECT DISTINCT d.value, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL t"
                 " JOIN StringIds d ON d.id = {demangledName} JOIN StringIds s ON s.id = {shortName}"
                 " WHERE {pid:globalPid}");
    if (!zSql) return vt__imp_fail(n->x, VT_EXIT_INTERNAL, "out of memory");
    if (sqlite3_prepare_v2(n->db, zSql, -1, &p, NULL) != SQLITE_OK) {
        rc = nsys_fail(n, "CUPTI_ACTIVITY_KIND_KERNEL");
        goto done;
    }
    while ((src = sqlite3_step(p)) == SQLITE_ROW) {
        int64_t idName = vt__tb_string(n->x->tb, (const char *)sqlite3_column_text(p, 0));
        int64_t idShort = vt__tb_string(n->x->tb, (const char *)sqlite3_column_text(p, 1));
        if (idName < 0 || idShort < 0) {
            rc = vt__imp_tb_fail(n->x);
            goto done;
        }
        zIns = sqlite3_mprintf("INSERT OR IGNORE INTO kernel_name VALUES(%lld, %lld, %lld)", (long long)idName,
                               (long long)idName, (long long)idShort);
        src = zIns ? vt__tb_exec(n->x->tb, zIns) : SQLITE_NOMEM;
        sqlite3_free(zIns);
        if (src != SQLITE_OK) {
            rc = vt__imp_tb_fail(n->x);
            goto done;
        }
    }
    if (src != SQLITE_DONE) rc = nsys_fail(n, "CUPTI_ACTIVITY_KIND_KERNEL");
done:
    sqlite3_finalize(p);
    sqlite3_free(zSql);
    return rc;
}

/* One copy row: Nsight's copy kinds are CUPTI's, its memory kinds mapped. */
static int row_memcpy(struct nsys *n, sqlite3_stmt *p)
{
    struct vt__tb_memcpy r;
    int64_t k;
    VT_TB_CLEAR(r);
    r.start = col_or_null(p, 0);
    r.end = col_or_null(p, 1);
    r.device = col_or_null(p, 2);
    r.context = col_or_null(p, 3);
    r.stream = col_or_null(p, 4);
    r.correlation = col_or_null(p, 5);
    r.bytes = col_or_null(p, 6);
    k = col_or_null(p, 7);
    r.copy_kind = k >= 0 && k <= VT_COPY_PTOP ? k : VT_COPY_UNKNOWN; /* Nsight's numbers are CUPTI's */
    r.src_kind = mem_kind(n, col_or_null(p, 8));
    r.dst_kind = mem_kind(n, col_or_null(p, 9));
    r.src_device = col_or_null(p, 10);
    r.dst_device = col_or_null(p, 11);
    if (r.start == VT_TB_NULL || r.end == VT_TB_NULL || r.bytes == VT_TB_NULL) return 0;
    return vt__tb_memcpy(n->x->tb, &r) ? vt__imp_tb_fail(n->x) : 0;
}

/* One memset row. */
static int row_memset(struct nsys *n, sqlite3_stmt *p)
{
    struct vt__tb_memset r;
    VT_TB_CLEAR(r);
    r.start = col_or_null(p, 0);
    r.end = col_or_null(p, 1);
    r.device = col_or_null(p, 2);
    r.context = col_or_null(p, 3);
    r.stream = col_or_null(p, 4);
    r.correlation = col_or_null(p, 5);
    r.bytes = col_or_null(p, 6);
    r.value = col_or_null(p, 7);
    if (col_or_null(p, 8) != VT_TB_NULL) r.mem_kind = mem_kind(n, col_or_null(p, 8));
    if (r.start == VT_TB_NULL || r.end == VT_TB_NULL || r.bytes == VT_TB_NULL) return 0;
    return vt__tb_memset(n->x->tb, &r) ? vt__imp_tb_fail(n->x) : 0;
}

/* One NVTX range or mark; push/pop ranges get their nesting depth on their thread. */
static int row_nvtx(struct nsys *n, sqlite3_stmt *p)
{
    struct vt__tb_nvtx r;
    struct nvtx_state *st = &n->nvtx;
    int64_t type = col_or_null(p, 2);
    const char *zText = (const char *)sqlite3_column_text(p, 3);
    VT_TB_CLEAR(r);
    r.start = col_or_null(p, 0);
    r.end = col_or_null(p, 1);
    r.thread = col_or_null(p, 4);
    /* NvtxPushPopRange 59, NvtxStartEndRange 60, NvtxMark 34 (ENUM_NSYS_EVENT_TYPE) */
    r.kind = type == 59 ? VT_NVTX_PUSHPOP : type == 60 ? VT_NVTX_STARTEND : type == 34 ? VT_NVTX_MARK : VT_TB_NULL;
    if (r.kind == VT_TB_NULL || r.start == VT_TB_NULL) return 0;
    if (r.kind == VT_NVTX_MARK) r.end = r.start;
    if (r.kind == VT_NVTX_PUSHPOP) {
        if (st->thread != r.thread) {
            st->thread = r.thread;
            st->nOpen = 0;
        }
        while (st->nOpen > 0 && st->aEnd[st->nOpen - 1] != VT_TB_NULL && st->aEnd[st->nOpen - 1] <= r.start) st->nOpen--;
        r.depth = st->nOpen;
        if (st->nOpen < 256) st->aEnd[st->nOpen++] = r.end;
    }
    if (zText && (r.name_id = vt__tb_string(n->x->tb, zText)) == -1) return vt__imp_tb_fail(n->x);
    if (col_or_null(p, 5) > 0) {
        char z[32];
        snprintf(z, sizeof z, "domain %lld", (long long)col_or_null(p, 5));
        if ((r.domain_id = vt__tb_string(n->x->tb, z)) == -1) return vt__imp_tb_fail(n->x);
    }
    return vt__tb_nvtx(n->x->tb, &r) ? vt__imp_tb_fail(n->x) : 0;
}

/* Devices (TARGET_INFO_GPU) and process metadata. */
static int describe(struct nsys *n)
{
    sqlite3_stmt *p = NULL;
    char *zSql;
    int rc = 0;
    if (has_table(n->db, "TARGET_INFO_GPU")) {
        zSql = query(n, "TARGET_INFO_GPU",
                     "SELECT coalesce({cuDevice}, {id}), {name}, {uuid}, {totalMemory}, {computeMajor},"
                     " {computeMinor}, {smCount} FROM TARGET_INFO_GPU t");
        if (!zSql || sqlite3_prepare_v2(n->db, zSql, -1, &p, NULL) != SQLITE_OK) rc = nsys_fail(n, "GPUs");
        while (rc == 0 && sqlite3_step(p) == SQLITE_ROW)
            if (vt__tb_device(n->x->tb, sqlite3_column_int64(p, 0), (const char *)sqlite3_column_text(p, 1),
                              (const char *)sqlite3_column_text(p, 2), col_or_null(p, 3), col_or_null(p, 4),
                              col_or_null(p, 5), col_or_null(p, 6)))
                rc = vt__imp_tb_fail(n->x);
        sqlite3_finalize(p);
        sqlite3_free(zSql);
        p = NULL;
    }
    if (rc == 0 && has_table(n->db, "TARGET_INFO_SESSION_START_TIME") &&
        sqlite3_prepare_v2(n->db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", -1, &p, NULL) == SQLITE_OK &&
        sqlite3_step(p) == SQLITE_ROW && sqlite3_column_type(p, 0) == SQLITE_INTEGER) {
        /* times are relative to the session start, whose wall-clock time this is */
        if (vt__tb_meta(n->x->tb, "clock_anchor_cupti_ns", "0") ||
            vt__tb_metaf(n->x->tb, "clock_anchor_wall_ns", "%lld", (long long)sqlite3_column_int64(p, 0)))
            rc = vt__imp_tb_fail(n->x);
    }
    sqlite3_finalize(p);
    p = NULL;
    if (rc == 0 && n->pid >= 0 && has_table(n->db, "PROCESSES") &&
        sqlite3_prepare_v2(n->db, "SELECT name FROM PROCESSES WHERE pid = ? AND name IS NOT NULL", -1, &p, NULL) ==
            SQLITE_OK) {
        sqlite3_bind_int64(p, 1, n->pid);
        if (sqlite3_step(p) == SQLITE_ROW && vt__tb_meta(n->x->tb, "exe", (const char *)sqlite3_column_text(p, 0)))
            rc = vt__imp_tb_fail(n->x);
    }
    sqlite3_finalize(p);
    p = NULL;
    if (rc == 0 && has_table(n->db, "META_DATA_EXPORT") &&
        sqlite3_prepare_v2(n->db, "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_PRODUCT_VERSION'", -1, &p,
                           NULL) == SQLITE_OK &&
        sqlite3_step(p) == SQLITE_ROW && sqlite3_column_text(p, 0)) {
        if (vt__tb_meta(n->x->tb, "nsys.version", (const char *)sqlite3_column_text(p, 0))) rc = vt__imp_tb_fail(n->x);
    }
    sqlite3_finalize(p);
    return rc;
}

/* The progress handler's budget: SQLite virtual machine steps of every statement on one export's connection. */
static int budget_step(void *pArg)
{
    struct vt__sqlbudget *b = pArg;
    b->nSteps += VT_BUDGET_EVERY;
    if (b->nSteps > b->nMax) b->bStopped = 1;
    return b->bStopped;
}

/*
 * Open the export read-only, every read on it bounded by budget b (a view that never ends, or
 * one that makes far more rows than a file of its size can hold, is stopped: b->bStopped).
 * Returns an exit code.
 */
static int open_export(const char *zIn, sqlite3 **pDb, struct vt__sqlbudget *b, char *zErr, size_t nErr)
{
    struct stat st;
    int rc = sqlite3_open_v2(zIn, pDb, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        char zWhy[512];
        snprintf(zErr, nErr, "cannot open: %s", vt__sqlite_open_error(*pDb, rc, zIn, zWhy, sizeof zWhy));
        sqlite3_close(*pDb);
        *pDb = NULL;
        return VT_EXIT_NOFILE;
    }
    sqlite3_busy_timeout(*pDb, 2000);
    memset(b, 0, sizeof *b);
    b->nMax = VT_BUDGET_BASE + VT_BUDGET_PER_BYTE * (stat(zIn, &st) == 0 ? (int64_t)st.st_size : 0);
    sqlite3_progress_handler(*pDb, VT_BUDGET_EVERY, budget_step, b);
    sqlite3_limit(*pDb, SQLITE_LIMIT_LENGTH, VT_BUDGET_MAX_VALUE);
    return VT_EXIT_OK;
}

int vt__nsys_pids(const char *zIn, int64_t **paPid, int64_t **paEvents, int *pn, char *zErr, size_t nErr)
{
    static const struct {
        const char *zTable, *zCol;
    } a[] = {{"CUDA_GPU_MEMORY_USAGE_EVENTS", "globalPid"}, {"CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid"},
             {"CUPTI_ACTIVITY_KIND_KERNEL", "globalPid"},   {"CUPTI_ACTIVITY_KIND_MEMCPY", "globalPid"},
             {"CUPTI_ACTIVITY_KIND_MEMSET", "globalPid"}};
    sqlite3 *db = NULL;
    sqlite3_stmt *p = NULL;
    sqlite3_str *s;
    struct vt__sqlbudget budget;
    char *zSql;
    int rc, nUnion = 0, nAlloc = 0, src = SQLITE_ROW;
    *paPid = *paEvents = NULL;
    *pn = 0;
    if ((rc = open_export(zIn, &db, &budget, zErr, nErr)) != VT_EXIT_OK) return rc;
    s = sqlite3_str_new(db);
    sqlite3_str_appendall(s, "SELECT pid, count(*) FROM (");
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        if (!has_table(db, a[i].zTable)) continue;
        if (has_col(db, a[i].zTable, a[i].zCol))
            sqlite3_str_appendf(s, "%sSELECT " PID_OF("\"%w\"") " AS pid FROM \"%w\"", nUnion ? " UNION ALL " : "",
                                a[i].zCol, a[i].zTable);
        else
            sqlite3_str_appendf(s, "%sSELECT -1 AS pid FROM \"%w\"", nUnion ? " UNION ALL " : "", a[i].zTable);
        nUnion++;
    }
    sqlite3_str_appendall(s, ") GROUP BY pid ORDER BY 2 DESC, 1");
    zSql = sqlite3_str_finish(s);
    rc = VT_EXIT_OK;
    if (!zSql) {
        snprintf(zErr, nErr, "out of memory");
        rc = VT_EXIT_INTERNAL;
    } else if (nUnion && sqlite3_prepare_v2(db, zSql, -1, &p, NULL) != SQLITE_OK) {
        snprintf(zErr, nErr, "cannot read the export: %s", sqlite3_errmsg(db));
        rc = sqlite3_errcode(db) == SQLITE_CORRUPT || sqlite3_errcode(db) == SQLITE_NOTADB ? VT_EXIT_CORRUPT
                                                                                           : VT_EXIT_INTERNAL;
    }
    while (rc == VT_EXIT_OK && p && (src = sqlite3_step(p)) == SQLITE_ROW) {
        if (*pn == nAlloc) {
            int64_t *a1, *a2;
            nAlloc = nAlloc ? nAlloc * 2 : 8;
            a1 = realloc(*paPid, (size_t)nAlloc * sizeof *a1);
            if (a1) *paPid = a1;
            a2 = realloc(*paEvents, (size_t)nAlloc * sizeof *a2);
            if (a2) *paEvents = a2;
            if (!a1 || !a2) {
                snprintf(zErr, nErr, "out of memory");
                rc = VT_EXIT_INTERNAL;
                break;
            }
        }
        (*paPid)[*pn] = sqlite3_column_int64(p, 0);
        (*paEvents)[*pn] = sqlite3_column_int64(p, 1);
        ++*pn;
    }
    if (rc == VT_EXIT_OK && p && src != SQLITE_DONE) {
        if (budget.bStopped)
            snprintf(zErr, nErr, "counting the export's processes was stopped after %lld steps of SQLite's virtual "
                                 "machine, more than a file of its size can need (a view that never ends, or a "
                                 "hostile file): not imported", (long long)budget.nSteps);
        else
            snprintf(zErr, nErr, "cannot read the export: %s", sqlite3_errmsg(db));
        rc = budget.bStopped || src == SQLITE_CORRUPT || src == SQLITE_NOTADB ? VT_EXIT_CORRUPT : VT_EXIT_INTERNAL;
    }
    if (rc == VT_EXIT_OK && *pn == 0) { /* no CUDA activity: one trace of what there is (NVTX, devices) */
        int64_t *a1 = malloc(sizeof *a1), *a2 = malloc(sizeof *a2);
        if (!a1 || !a2) {
            free(a1);
            free(a2);
            snprintf(zErr, nErr, "out of memory");
            rc = VT_EXIT_INTERNAL;
        } else {
            a1[0] = -1;
            a2[0] = 0;
            *paPid = a1;
            *paEvents = a2;
            *pn = 1;
        }
    }
    sqlite3_finalize(p);
    sqlite3_free(zSql);
    sqlite3_close(db);
    return rc;
}

int vt__import_nsys(struct vt__imp *x, int64_t pid)
{
    struct nsys n;
    char zErr[256];
    int rc;
    memset(&n, 0, sizeof n);
    n.x = x;
    n.pid = pid;
    if ((rc = open_export(x->zIn, &n.db, &n.budget, zErr, sizeof zErr)) != VT_EXIT_OK)
        return vt__imp_fail(x, rc, "%s", zErr);
    if (vt__tb_base(x->tb, 0)) {
        rc = vt__imp_tb_fail(x);
        goto done;
    }
    map_mem_kinds(&n);
    if ((rc = describe(&n)) != 0) goto done;
    /* the API call behind each allocation, by correlation id (an index the export lacks, in temp) */
    if (has_table(n.db, "CUDA_GPU_MEMORY_USAGE_EVENTS") && has_table(n.db, "CUPTI_ACTIVITY_KIND_RUNTIME")) {
        char *zSql = query(&n, "CUPTI_ACTIVITY_KIND_RUNTIME",
                           "CREATE TEMP TABLE vt_rt(corr INTEGER PRIMARY KEY, name TEXT, tid INTEGER);"
                           "INSERT OR IGNORE INTO vt_rt SELECT {correlationId}, (SELECT value FROM StringIds"
                           " WHERE id = t.nameId), ({globalTid} & 16777215) FROM CUPTI_ACTIVITY_KIND_RUNTIME t"
                           " WHERE {correlationId} IS NOT NULL AND {pid:globalTid}");
        if (!zSql || sqlite3_exec(n.db, zSql, NULL, NULL, NULL) != SQLITE_OK) rc = nsys_fail(&n, "runtime calls");
        sqlite3_free(zSql);
    } else if (sqlite3_exec(n.db, "CREATE TEMP TABLE vt_rt(corr INTEGER PRIMARY KEY, name TEXT, tid INTEGER)", NULL,
                            NULL, NULL) != SQLITE_OK) {
        rc = nsys_fail(&n, "runtime calls");
    }
    if (rc == 0)
        rc = each_row(&n, "CUDA_GPU_MEMORY_USAGE_EVENTS",
                  "SELECT {start}, {deviceId}, {contextId}, {address}, {pc}, {bytes}, {memKind},"
                  " {memoryOperationType}, {correlationId}, {streamId}, rt.name, rt.tid"
                  " FROM CUDA_GPU_MEMORY_USAGE_EVENTS t LEFT JOIN vt_rt rt ON rt.corr = {correlationId}"
                  " WHERE {pid:globalPid} ORDER BY {start}",
                  row_memory);
    if (rc == 0)
        rc = each_row(&n, "CUPTI_ACTIVITY_KIND_RUNTIME",
                      "SELECT {start}, {end}, {correlationId}, {returnValue}, ({globalTid} & 16777215), NULL,"
                      " (SELECT value FROM StringIds WHERE id = t.nameId)"
                      " FROM CUPTI_ACTIVITY_KIND_RUNTIME t WHERE {pid:globalTid} ORDER BY {start}",
                      row_runtime);
    if (rc == 0)
        rc = each_row(&n, "CUPTI_ACTIVITY_KIND_KERNEL",
                      "SELECT {start}, {end}, {deviceId}, {contextId}, {streamId}, {correlationId}, {gridX}, {gridY},"
                      " {gridZ}, {blockX}, {blockY}, {blockZ}, {staticSharedMemory}, {dynamicSharedMemory},"
                      " {registersPerThread}, NULL,"
                      " (SELECT value FROM StringIds WHERE id = coalesce({demangledName}, {shortName}, {mangledName}))"
                      " FROM CUPTI_ACTIVITY_KIND_KERNEL t WHERE {pid:globalPid} ORDER BY {start}",
                      row_kernel);
    if (rc == 0 && !has_table(n.db, "CUDA_GPU_MEMORY_USAGE_EVENTS")) {
        static const char *const azCuda[] = {"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL",
                                             "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"};
        int bCuda = 0;
        for (size_t i = 0; i < sizeof azCuda / sizeof azCuda[0]; i++) bCuda |= has_table(n.db, azCuda[i]);
        if (bCuda) {
            note_no_memory_events(&n);
        } else {
            vt__imp_note(x, "the export holds no CUDA trace (no CUDA API calls, kernels, copies or GPU memory "
                            "events: recorded without CUDA tracing, nsys --trace without cuda): nothing about GPU "
                            "memory is known");
            if (vt__tb_meta(x->tb, "nsys.cuda_trace", "0")) rc = vt__imp_tb_fail(x);
        }
    }
    if (rc == 0) rc = kernel_names(&n);
    if (rc == 0)
        rc = each_row(&n, "CUPTI_ACTIVITY_KIND_MEMCPY",
                      "SELECT {start}, {end}, {deviceId}, {contextId}, {streamId}, {correlationId}, {bytes},"
                      " {copyKind}, {srcKind}, {dstKind}, {srcDeviceId}, {dstDeviceId}"
                      " FROM CUPTI_ACTIVITY_KIND_MEMCPY t WHERE {pid:globalPid} ORDER BY {start}",
                      row_memcpy);
    if (rc == 0)
        rc = each_row(&n, "CUPTI_ACTIVITY_KIND_MEMSET",
                      "SELECT {start}, {end}, {deviceId}, {contextId}, {streamId}, {correlationId}, {bytes}, {value},"
                      " {memKind} FROM CUPTI_ACTIVITY_KIND_MEMSET t WHERE {pid:globalPid} ORDER BY {start}",
                      row_memset);
    if (rc == 0) {
        n.nvtx.thread = VT_TB_NULL;
        rc = each_row(&n, "NVTX_EVENTS",
                      "SELECT {start}, {end}, {eventType}, coalesce({text}, (SELECT value FROM StringIds WHERE id ="
                      " {textId})), ({globalTid} & 16777215), {domainId}"
                      " FROM NVTX_EVENTS t WHERE {pid:globalTid} ORDER BY 5, {start}",
                      row_nvtx);
    }
    if (rc == 0 && n.pid < 0 && has_table(n.db, "CUPTI_ACTIVITY_KIND_KERNEL") &&
        !has_col(n.db, "CUPTI_ACTIVITY_KIND_KERNEL", "globalPid"))
        vt__imp_note(x, "the export names no processes: every row is in this one trace");
    if (rc == 0 && vt__tb_untimed(x->tb))
        vt__imp_note(x, "%lld rows could not be stored: this trace schema needs values the export does not have",
                     (long long)vt__tb_untimed(x->tb));
done:
    sqlite3_close(n.db);
    return rc;
}
