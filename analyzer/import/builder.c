/* The trace builder: one synchronous writer of vramtrace traces for the importers (schema, strings, stacks, rows). */
#include "builder.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "runs.h"
#include "util/cleanup.h"
#include "util/errors.h"
#include "vramtrace/compact.h"
#include "vramtrace/schema.h"
#include "vramtrace/strhash.h"

/* Rows of a table inserted by one statement: about twice SQLite's speed for one row per statement at 64
 * rows, and 3 % fewer instructions per row of a snapshot's import again at 256 (the statement's own cost
 * spread over more rows; 1,024 gains little more and costs more to prepare). */
#define BATCH 256
#define MAXCOL 16 /* columns of the widest row struct (kernel) */
_Static_assert(sizeof(struct vt__tb_kernel) <= MAXCOL * sizeof(int64_t), "MAXCOL");
_Static_assert(sizeof(struct vt__tb_memcpy) <= MAXCOL * sizeof(int64_t), "MAXCOL");
_Static_assert(sizeof(struct vt__tb_memory) <= MAXCOL * sizeof(int64_t), "MAXCOL");
_Static_assert(sizeof(struct vt__tb_api) <= MAXCOL * sizeof(int64_t), "MAXCOL");

/* Column flags: the absolute time (stored as t), the end of an interval (stored as dur), 0 when NULL, never
 * NULL (an address: every 64-bit pattern is a value, VT_TB_NULL's too, the address 2^63; a row without one is
 * the importer's to leave out). */
#define C_TIME 1
#define C_END 2
#define C_DEF0 4
#define C_VALUE 8

struct col {
    const char *zName;
    size_t off;
    int flags;
};
struct tdesc {
    const char *zTable;
    const struct col *aCol;
    int nCol;
};

#define COL(s, f, fl) {#f, offsetof(struct s, f), fl}
static const struct col aMemCol[] = {
    COL(vt__tb_memory, ts, C_TIME), COL(vt__tb_memory, op, 0), COL(vt__tb_memory, mem_kind, 0),
    COL(vt__tb_memory, address, C_VALUE), COL(vt__tb_memory, bytes, 0), COL(vt__tb_memory, device, 0),
    COL(vt__tb_memory, context, 0), COL(vt__tb_memory, stream, 0), COL(vt__tb_memory, correlation, 0),
    COL(vt__tb_memory, api, 0), COL(vt__tb_memory, is_async, C_DEF0), COL(vt__tb_memory, pc, 0),
    COL(vt__tb_memory, thread, 0), COL(vt__tb_memory, stack_id, 0)};
static const struct col aTensorCol[] = {
    COL(vt__tb_tensor, ts, C_TIME), COL(vt__tb_tensor, op, 0), COL(vt__tb_tensor, device, 0),
    COL(vt__tb_tensor, address, C_VALUE), COL(vt__tb_tensor, bytes, 0), COL(vt__tb_tensor, stream, 0),
    COL(vt__tb_tensor, stack_id, 0), COL(vt__tb_tensor, source, 0)};
static const struct col aOomCol[] = {
    COL(vt__tb_oom, ts, C_TIME), COL(vt__tb_oom, api, 0), COL(vt__tb_oom, correlation, 0),
    COL(vt__tb_oom, device, 0), COL(vt__tb_oom, bytes, 0), COL(vt__tb_oom, status, 0),
    COL(vt__tb_oom, free_bytes, 0), COL(vt__tb_oom, total_bytes, 0), COL(vt__tb_oom, thread, 0),
    COL(vt__tb_oom, stack_id, 0)};
static const struct col aCopyCol[] = {
    COL(vt__tb_memcpy, start, C_TIME), COL(vt__tb_memcpy, end, C_END), COL(vt__tb_memcpy, device, 0),
    COL(vt__tb_memcpy, context, 0), COL(vt__tb_memcpy, stream, 0), COL(vt__tb_memcpy, correlation, 0),
    COL(vt__tb_memcpy, copy_kind, C_DEF0), COL(vt__tb_memcpy, src_kind, C_DEF0),
    COL(vt__tb_memcpy, dst_kind, C_DEF0), COL(vt__tb_memcpy, bytes, 0), COL(vt__tb_memcpy, is_async, C_DEF0),
    COL(vt__tb_memcpy, src_device, 0), COL(vt__tb_memcpy, dst_device, 0), COL(vt__tb_memcpy, src, 0),
    COL(vt__tb_memcpy, dst, 0)};
static const struct col aSetCol[] = {
    COL(vt__tb_memset, start, C_TIME), COL(vt__tb_memset, end, C_END), COL(vt__tb_memset, device, 0),
    COL(vt__tb_memset, context, 0), COL(vt__tb_memset, stream, 0), COL(vt__tb_memset, correlation, 0),
    COL(vt__tb_memset, bytes, 0), COL(vt__tb_memset, value, 0), COL(vt__tb_memset, mem_kind, 0),
    COL(vt__tb_memset, is_async, C_DEF0), COL(vt__tb_memset, dst, 0)};
static const struct col aKerCol[] = {
    COL(vt__tb_kernel, start, C_TIME), COL(vt__tb_kernel, end, C_END), COL(vt__tb_kernel, device, 0),
    COL(vt__tb_kernel, context, 0), COL(vt__tb_kernel, stream, 0), COL(vt__tb_kernel, correlation, 0),
    COL(vt__tb_kernel, name_id, 0), COL(vt__tb_kernel, grid_x, 0), COL(vt__tb_kernel, grid_y, 0),
    COL(vt__tb_kernel, grid_z, 0), COL(vt__tb_kernel, block_x, 0), COL(vt__tb_kernel, block_y, 0),
    COL(vt__tb_kernel, block_z, 0), COL(vt__tb_kernel, static_smem, 0), COL(vt__tb_kernel, dynamic_smem, 0),
    COL(vt__tb_kernel, registers, 0)};
static const struct col aNvtxCol[] = {
    COL(vt__tb_nvtx, start, C_TIME), COL(vt__tb_nvtx, end, C_END), COL(vt__tb_nvtx, kind, 0),
    COL(vt__tb_nvtx, name_id, 0), COL(vt__tb_nvtx, domain_id, 0), COL(vt__tb_nvtx, thread, 0),
    COL(vt__tb_nvtx, depth, 0)};
static const struct col aApiCol[] = {
    COL(vt__tb_api, start, C_TIME), COL(vt__tb_api, end, C_END), COL(vt__tb_api, api, 0),
    COL(vt__tb_api, correlation, 0), COL(vt__tb_api, thread, 0), COL(vt__tb_api, device, 0),
    COL(vt__tb_api, status, C_DEF0), COL(vt__tb_api, bytes, 0), COL(vt__tb_api, ptr, 0), COL(vt__tb_api, src, 0),
    COL(vt__tb_api, dst, 0), COL(vt__tb_api, stream, 0), COL(vt__tb_api, stack_id, 0)};
#undef COL

#define N(a) (int)(sizeof a / sizeof a[0])
static const struct tdesc aTable[VT_TB_NTABLE] = {
    [VT_TB_MEMORY] = {"memory_event", aMemCol, N(aMemCol)}, [VT_TB_TENSOR] = {"tensor_event", aTensorCol, N(aTensorCol)},
    [VT_TB_OOM] = {"oom_event", aOomCol, N(aOomCol)},       [VT_TB_MEMCPY] = {"memcpy", aCopyCol, N(aCopyCol)},
    [VT_TB_MEMSET] = {"memset", aSetCol, N(aSetCol)},       [VT_TB_KERNEL] = {"kernel", aKerCol, N(aKerCol)},
    [VT_TB_NVTX] = {"nvtx_range", aNvtxCol, N(aNvtxCol)},   [VT_TB_API] = {"api_call", aApiCol, N(aApiCol)},
};
#undef N

/* An interned string: its hash, id, length and copy. */
struct str_ent {
    uint64_t hash; /* 0: empty */
    int64_t id;
    size_t n;
    char *z;
};

struct stack_ent {
    uint64_t hash; /* 0: empty */
    int64_t id;
    int n;
    int64_t *aKey; /* 5 values per frame */
};

struct vt__tb {
    sqlite3 *db;
    char *zPath, *zTmp;
    int bForce;
    int bSchema;      /* the schema exists (created at the first vt__tb_base or row) */
    int64_t base;
    int bNullTime;    /* the schema accepts NULL times */
    sqlite3_stmt *aIns[VT_TB_NTABLE];   /* one row */
    sqlite3_stmt *aMulti[VT_TB_NTABLE]; /* BATCH rows in one statement */
    int64_t *aBuf[VT_TB_NTABLE];        /* rows converted and waiting: BATCH * nCol values */
    int64_t *aBound[VT_TB_NTABLE];      /* what aMulti's parameters hold now (kept across resets) */
    int anBuf[VT_TB_NTABLE];
    sqlite3_stmt *pString, *pStack, *pFrame;
    sqlite3_stmt *pAside, *apSetStack[VT_TB_NTABLE]; /* prepared on first use */
    int64_t aRows[VT_TB_NTABLE];
    int64_t aLastT[VT_TB_NTABLE];
    int aUnordered[VT_TB_NTABLE];
    /* plain tables whose rows came out of time order: the rows before the first such row stay in the table
     * (run 0), every later one goes to apRuns, a new run at each row whose stored time is below the row
     * before's (aLastKey); merged into the table at close. aNoRuns: too many runs, or the table was read or
     * changed meanwhile: the runs were written to the table as they came, and it is sorted at close */
    struct vt__runs *apRuns[VT_TB_NTABLE];
    int64_t aLastKey[VT_TB_NTABLE];
    int aNoRuns[VT_TB_NTABLE];
    int aSpill[VT_TB_NTABLE]; /* vt__tb_spill: runs from the first row on (the rows before it go to run 0) */
    int64_t nUntimed;
    struct str_ent *aStr; /* interned strings: open addressing, load <= 1/2 */
    size_t nStr, nStrSlot;
    int64_t iNextStr;
    struct stack_ent *aStack;
    size_t nStack, nStackSlot;
    int64_t iNextStack;
    /* compacted tables (kernel, api_call, memcpy, memset): written as their parts */
    int aCompact[VT_TB_NTABLE];                   /* 1 + the compacted table, 0: a plain table */
    struct vt_compact_map aCmpMap[VT_TB_NTABLE];
    struct vt_compact cmp;
    struct vt_compact_sink sink;
    int bCmp;                                     /* cmp and sink are open */
    char zErr[256];
};

static int tb_fail(struct vt__tb *tb, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
static int tb_fail(struct vt__tb *tb, const char *zFmt, ...)
{
    va_list ap;
    if (tb->zErr[0]) return -1;
    va_start(ap, zFmt);
    vsnprintf(tb->zErr, sizeof tb->zErr, zFmt, ap);
    va_end(ap);
    return -1;
}

/* Record SQLite's current error as the builder's (what was being written). Returns -1. */
static int sql_fail(struct vt__tb *tb, const char *zWhat)
{
    return tb_fail(tb, "cannot write the trace (%s): %s", zWhat, sqlite3_errmsg(tb->db));
}

void vt__tb_clear(void *pRow, size_t nBytes)
{
    int64_t *a = pRow;
    for (size_t i = 0; i < nBytes / sizeof *a; i++) a[i] = VT_TB_NULL;
}

int vt__tb_open(const char *zPath, int bForce, struct vt__tb **pp, char *zErr, size_t nErr)
{
    struct vt__tb *tb = calloc(1, sizeof *tb);
    struct stat st;
    size_t n = strlen(zPath);
    int fd, rc;
    *pp = NULL;
    if (!tb) goto nomem;
    tb->bForce = bForce;
    if (!bForce && lstat(zPath, &st) == 0) {
        snprintf(zErr, nErr, "%s: exists (remove it, or pass --force to replace it)", zPath);
        free(tb);
        return -1;
    }
    tb->zPath = strdup(zPath);
    tb->zTmp = malloc(n + 32);
    if (!tb->zPath || !tb->zTmp) goto nomem;
    snprintf(tb->zTmp, n + 32, "%s.importing-XXXXXX", zPath);
    fd = vt__cleanup_mkstemp(tb->zTmp); /* mode 0600, never follows a symlink; removed if the command is killed */
    if (fd < 0 && errno == ENOENT && strrchr(zPath, '/') && strrchr(zPath, '/') != zPath) /* which part is missing */
        snprintf(zErr, nErr, "%s: cannot create: no directory %.*s (an -o ending in '/' is created when missing)", zPath,
                 (int)(strrchr(zPath, '/') - zPath), zPath);
    else if (fd < 0)
        snprintf(zErr, nErr, "%s: cannot create: %s", zPath, strerror(errno));
    if (fd < 0) {
        free(tb->zTmp);
        tb->zTmp = NULL;
        vt__tb_close(tb, 0, NULL, 0);
        return -1;
    }
    close(fd);
    /* secure_delete off: SQLite built with SECURE_DELETE (Debian's) zeroes the free space of every page it
     * makes, 64 KiB a page; nothing the import deletes holds data the trace does not hold again */
    if ((rc = sqlite3_open_v2(tb->zTmp, &tb->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL)) != SQLITE_OK ||
        sqlite3_exec(tb->db,
                     "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                     " PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-8192; PRAGMA secure_delete=OFF;",
                     NULL, NULL, NULL) != SQLITE_OK) {
        char zWhy[512];
        snprintf(zErr, nErr, "%s: cannot create: %s", zPath,
                 vt__sqlite_open_error(tb->db, rc, tb->zTmp, zWhy, sizeof zWhy));
        vt__tb_close(tb, 0, NULL, 0);
        return -1;
    }
    tb->iNextStack = tb->iNextStr = 1;
    for (int i = 0; i < VT_TB_NTABLE; i++) tb->aLastT[i] = tb->aLastKey[i] = INT64_MIN;
    *pp = tb;
    return 0;
nomem:
    snprintf(zErr, nErr, "out of memory");
    if (tb) vt__tb_close(tb, 0, NULL, 0);
    return -1;
}

/* The column a descriptor's column is stored as: t for the time, dur for the end, else its name. */
static const char *stored_name(const struct col *c)
{
    return c->flags & C_TIME ? "t" : c->flags & C_END ? "dur" : c->zName;
}

/* Prepare the inserts of one table from its descriptor (one row, and BATCH rows). Returns 0 or -1. */
static int prepare_insert(struct vt__tb *tb, int i)
{
    const struct tdesc *d = &aTable[i];
    sqlite3_str *s;
    char *zSql;
    int rc, iCt = vt__compact_find(d->zTable);
    if (iCt >= 0) { /* written as its parts: where each column goes */
        const char *azCol[MAXCOL], *zWhat = NULL;
        for (int c = 0; c < d->nCol; c++) azCol[c] = stored_name(&d->aCol[c]);
        tb->aCompact[i] = 1 + iCt;
        if (vt__compact_map(iCt, azCol, d->nCol, &tb->aCmpMap[i], &zWhat))
            return tb_fail(tb, "%s: no column %s", d->zTable, zWhat);
        return 0;
    }
    /* OR FAIL: a row refused (a NULL in a NOT NULL column) ends the import and the trace is removed, so
     * the statement's earlier rows need not be undone: no statement journal, whose bookkeeping each page
     * write of a multi-row statement would pay (OR ABORT, the default) */
    s = sqlite3_str_new(tb->db);
    sqlite3_str_appendf(s, "INSERT OR FAIL INTO %s(", d->zTable);
    for (int c = 0; c < d->nCol; c++) sqlite3_str_appendf(s, "%s%s", c ? ", " : "", stored_name(&d->aCol[c]));
    sqlite3_str_appendall(s, ") VALUES");
    for (int r = 0; r < BATCH; r++) {
        sqlite3_str_appendall(s, r ? ", (" : "(");
        for (int c = 0; c < d->nCol; c++) sqlite3_str_appendall(s, c ? ", ?" : "?");
        sqlite3_str_appendall(s, ")");
        if (r == 0) { /* the one-row statement is the text so far */
            zSql = sqlite3_str_value(s);
            if (!zSql || sqlite3_prepare_v3(tb->db, zSql, -1, SQLITE_PREPARE_PERSISTENT, &tb->aIns[i], NULL) != SQLITE_OK) {
                sqlite3_free(sqlite3_str_finish(s));
                return sql_fail(tb, d->zTable);
            }
        }
    }
    zSql = sqlite3_str_finish(s);
    rc = zSql ? sqlite3_prepare_v3(tb->db, zSql, -1, SQLITE_PREPARE_PERSISTENT, &tb->aMulti[i], NULL) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if (rc != SQLITE_OK) return sql_fail(tb, d->zTable);
    if (!(tb->aBuf[i] = malloc(sizeof(int64_t) * BATCH * MAXCOL)) ||
        !(tb->aBound[i] = malloc(sizeof(int64_t) * BATCH * MAXCOL)))
        return tb_fail(tb, "out of memory");
    for (int k = 0; k < BATCH * MAXCOL; k++) tb->aBound[i][k] = VT_TB_NULL; /* a new statement's parameters are NULL */
    return 0;
}

/* Create the schema with the base chosen (once), the tensor table where the schema lacks it, the inserts. */
static int ensure_schema(struct vt__tb *tb)
{
    char *zMsg = NULL;
    sqlite3_stmt *pStmt = NULL;
    if (tb->bSchema) return 0;
    if (vt__schema_create_at(tb->db, tb->base, &zMsg) != SQLITE_OK) {
        tb_fail(tb, "cannot create the trace schema: %s", zMsg ? zMsg : sqlite3_errmsg(tb->db));
        sqlite3_free(zMsg);
        return -1;
    }
    tb->bSchema = 1;
    if (sqlite3_exec(tb->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) return sql_fail(tb, "begin");
    /* NULL times: allowed when memory_event.t is nullable */
    if (sqlite3_prepare_v2(tb->db, "SELECT \"notnull\" FROM pragma_table_info('memory_event') WHERE name = 't'", -1,
                           &pStmt, NULL) != SQLITE_OK)
        return sql_fail(tb, "schema");
    tb->bNullTime = sqlite3_step(pStmt) == SQLITE_ROW && sqlite3_column_int(pStmt, 0) == 0;
    sqlite3_finalize(pStmt);
    if (vt__compact_init(&tb->cmp, 0, NULL)) return tb_fail(tb, "out of memory");
    if (vt__compact_sink_open(&tb->sink, tb->db) != SQLITE_OK) {
        vt__compact_free(&tb->cmp);
        return sql_fail(tb, "prepare");
    }
    tb->bCmp = 1;
    for (int i = 0; i < VT_TB_NTABLE; i++)
        if (prepare_insert(tb, i)) return -1;
    if (sqlite3_prepare_v3(tb->db, "INSERT INTO string(id, value) VALUES(?, ?)", -1, SQLITE_PREPARE_PERSISTENT,
                           &tb->pString, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(tb->db, "INSERT INTO stack(id, hash, depth) VALUES(?, ?, ?)", -1,
                           SQLITE_PREPARE_PERSISTENT, &tb->pStack, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(tb->db,
                           "INSERT INTO frame(stack_id, idx, kind, pc, function_id, file_id, line, module_id)"
                           " VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
                           -1, SQLITE_PREPARE_PERSISTENT, &tb->pFrame, NULL) != SQLITE_OK)
        return sql_fail(tb, "prepare");
    return 0;
}

int vt__tb_base(struct vt__tb *tb, int64_t base)
{
    if (!tb->bSchema && base != VT_TB_NULL) tb->base = base;
    return ensure_schema(tb);
}

int vt__tb_null_times(const struct vt__tb *tb)
{
    return tb->bNullTime;
}

int vt__tb_meta(struct vt__tb *tb, const char *zKey, const char *zValue)
{
    if (ensure_schema(tb)) return -1;
    if (vt__meta_set(tb->db, zKey, zValue) != SQLITE_OK) return sql_fail(tb, "meta");
    return 0;
}

int vt__tb_metaf(struct vt__tb *tb, const char *zKey, const char *zFmt, ...)
{
    va_list ap;
    char z[1024];
    va_start(ap, zFmt);
    vsnprintf(z, sizeof z, zFmt, ap);
    va_end(ap);
    return vt__tb_meta(tb, zKey, z);
}


/* Double the string table. Returns 0 or -1. */
static int str_grow(struct vt__tb *tb)
{
    size_t nNew = tb->nStrSlot ? tb->nStrSlot * 2 : 4096;
    struct str_ent *a = calloc(nNew, sizeof *a);
    if (!a) return tb_fail(tb, "out of memory");
    for (size_t i = 0; i < tb->nStrSlot; i++) {
        size_t k;
        if (!tb->aStr[i].hash) continue;
        for (k = (size_t)tb->aStr[i].hash & (nNew - 1); a[k].hash; k = (k + 1) & (nNew - 1)) {}
        a[k] = tb->aStr[i];
    }
    free(tb->aStr);
    tb->aStr = a;
    tb->nStrSlot = nNew;
    return 0;
}

int64_t vt__tb_string(struct vt__tb *tb, const char *z)
{
    uint64_t h;
    size_t k, n;
    char *zCopy;
    int64_t id;
    if (!z) return VT_TB_NULL;
    if (ensure_schema(tb)) return -1;
    if ((tb->nStr + 1) * 2 > tb->nStrSlot && str_grow(tb)) return -1;
    n = strlen(z);
    h = vt__str_hash(z, n);
    for (k = (size_t)h & (tb->nStrSlot - 1); tb->aStr[k].hash; k = (k + 1) & (tb->nStrSlot - 1))
        if (tb->aStr[k].hash == h && tb->aStr[k].n == n && !memcmp(tb->aStr[k].z, z, n)) return tb->aStr[k].id;
    if (!(zCopy = malloc(n + 1))) return tb_fail(tb, "out of memory");
    memcpy(zCopy, z, n + 1);
    id = tb->iNextStr++;
    tb->aStr[k] = (struct str_ent){h, id, n, zCopy};
    tb->nStr++;
    sqlite3_bind_int64(tb->pString, 1, id);
    sqlite3_bind_text(tb->pString, 2, z, -1, SQLITE_STATIC);
    if (sqlite3_step(tb->pString) != SQLITE_DONE) {
        sqlite3_reset(tb->pString);
        return sql_fail(tb, "string");
    }
    sqlite3_reset(tb->pString);
    return id;
}

/* Bind v to parameter i of p, NULL for VT_TB_NULL. */
static void bind_null_or(sqlite3_stmt *p, int i, int64_t v)
{
    if (v == VT_TB_NULL) sqlite3_bind_null(p, i);
    else sqlite3_bind_int64(p, i, v);
}

/* Grow the stack table (open addressing, load <= 1/2). Returns 0 or -1. */
static int stack_grow(struct vt__tb *tb)
{
    size_t nNew = tb->nStackSlot ? tb->nStackSlot * 2 : 1024;
    struct stack_ent *a = calloc(nNew, sizeof *a);
    if (!a) return tb_fail(tb, "out of memory");
    for (size_t i = 0; i < tb->nStackSlot; i++) {
        struct stack_ent *e = &tb->aStack[i];
        size_t k;
        if (!e->hash) continue;
        for (k = (size_t)e->hash & (nNew - 1); a[k].hash; k = (k + 1) & (nNew - 1)) {}
        a[k] = *e;
    }
    free(tb->aStack);
    tb->aStack = a;
    tb->nStackSlot = nNew;
    return 0;
}

int64_t vt__tb_stack(struct vt__tb *tb, const struct vt__tb_frame *a, int n)
{
    int64_t aKey[5 * 64], aPc[64], *pKey = aKey, *pPc = aPc, id = -1;
    int i;
    if (n <= 0) return VT_TB_NULL;
    if (n > 64) {
        pKey = malloc((size_t)n * 5 * sizeof *pKey);
        pPc = malloc((size_t)n * sizeof *pPc);
        if (!pKey || !pPc) {
            tb_fail(tb, "out of memory");
            goto done;
        }
    }
    for (i = 0; i < n; i++) {
        int64_t *p = pKey + 5 * i;
        p[0] = a[i].kind;
        if ((p[1] = vt__tb_string(tb, a[i].zFunction)) == -1 || (p[2] = vt__tb_string(tb, a[i].zFile)) == -1 ||
            (p[3] = vt__tb_string(tb, a[i].zModule)) == -1)
            goto done;
        p[4] = a[i].line;
        pPc[i] = a[i].pc;
    }
    id = vt__tb_stack_keys(tb, pKey, pPc, n);
done:
    if (pKey != aKey) free(pKey);
    if (pPc != aPc) free(pPc);
    return id;
}

int64_t vt__tb_stack_keys(struct vt__tb *tb, const int64_t *aKeyIn, const int64_t *aPc, int n)
{
    int64_t *aKey, id;
    uint64_t h = 1469598103934665603ull;
    size_t k;
    int i;
    if (n <= 0) return VT_TB_NULL;
    if (ensure_schema(tb)) return -1;
    for (i = 0; i < n; i++) {
        for (int j = 0; j < 5; j++) h = (h ^ (uint64_t)aKeyIn[5 * i + j]) * 1099511628211ull;
        h = (h ^ (uint64_t)aPc[i]) * 1099511628211ull;
    }
    if (!h) h = 1;
    if (tb->nStack * 2 >= tb->nStackSlot && stack_grow(tb)) return -1;
    for (k = (size_t)h & (tb->nStackSlot - 1); tb->aStack[k].hash; k = (k + 1) & (tb->nStackSlot - 1)) {
        struct stack_ent *e = &tb->aStack[k];
        if (e->hash == h && e->n == n && !memcmp(e->aKey, aKeyIn, (size_t)n * 5 * sizeof *aKeyIn)) return e->id;
    }
    if (!(aKey = malloc((size_t)n * 5 * sizeof *aKey))) return tb_fail(tb, "out of memory");
    memcpy(aKey, aKeyIn, (size_t)n * 5 * sizeof *aKey);
    id = tb->iNextStack++;
    tb->aStack[k] = (struct stack_ent){h, id, n, aKey};
    tb->nStack++;
    sqlite3_bind_int64(tb->pStack, 1, id);
    sqlite3_bind_int64(tb->pStack, 2, (int64_t)h);
    sqlite3_bind_int(tb->pStack, 3, n);
    if (sqlite3_step(tb->pStack) != SQLITE_DONE) {
        sqlite3_reset(tb->pStack);
        return sql_fail(tb, "stack");
    }
    sqlite3_reset(tb->pStack);
    for (i = 0; i < n; i++) {
        const int64_t *p = aKey + 5 * i;
        sqlite3_bind_int64(tb->pFrame, 1, id);
        sqlite3_bind_int(tb->pFrame, 2, i);
        sqlite3_bind_int64(tb->pFrame, 3, p[0]);
        bind_null_or(tb->pFrame, 4, aPc[i]);
        bind_null_or(tb->pFrame, 5, p[1]);
        bind_null_or(tb->pFrame, 6, p[2]);
        bind_null_or(tb->pFrame, 7, p[4]);
        bind_null_or(tb->pFrame, 8, p[3]);
        if (sqlite3_step(tb->pFrame) != SQLITE_DONE) {
            sqlite3_reset(tb->pFrame);
            return sql_fail(tb, "frame");
        }
        sqlite3_reset(tb->pFrame);
    }
    return id;
}

int vt__tb_device(struct vt__tb *tb, int64_t id, const char *zName, const char *zUuid, int64_t totalBytes,
                  int64_t ccMajor, int64_t ccMinor, int64_t smCount)
{
    sqlite3_stmt *p = NULL;
    int rc;
    if (ensure_schema(tb)) return -1;
    if (sqlite3_prepare_v2(tb->db,
                           "INSERT OR REPLACE INTO device(id, name, uuid, total_bytes, cc_major, cc_minor, sm_count)"
                           " VALUES(?, ?, ?, ?, ?, ?, ?)",
                           -1, &p, NULL) != SQLITE_OK)
        return sql_fail(tb, "device");
    sqlite3_bind_int64(p, 1, id);
    sqlite3_bind_text(p, 2, zName, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 3, zUuid, -1, SQLITE_STATIC);
    bind_null_or(p, 4, totalBytes);
    bind_null_or(p, 5, ccMajor);
    bind_null_or(p, 6, ccMinor);
    bind_null_or(p, 7, smCount);
    rc = sqlite3_step(p);
    sqlite3_finalize(p);
    return rc == SQLITE_DONE ? 0 : sql_fail(tb, "device");
}

/* Write the rows waiting for table i (a BATCH-row statement when full, else one statement per row). */
static int flush_table(struct vt__tb *tb, int i)
{
    int nCol = aTable[i].nCol, n = tb->anBuf[i];
    const int64_t *a = tb->aBuf[i];
    for (int r = 0; r < n;) {
        sqlite3_stmt *p = n - r == BATCH ? tb->aMulti[i] : tb->aIns[i];
        int nRow = p == tb->aMulti[i] ? BATCH : 1;
        if (nRow == BATCH) { /* parameters keep their values across resets: bind only those that change */
            int64_t *aOld = tb->aBound[i];
            for (int iRow = 0, k = 0; iRow < BATCH; iRow++) {
                for (int c = 0; c < nCol; c++, k++) {
                    int64_t v = a[r * nCol + k];
                    if (aOld[k] == v && v != VT_TB_NULL) continue; /* the common case: unchanged */
                    if (aTable[i].aCol[c].flags & C_VALUE) sqlite3_bind_int64(p, k + 1, aOld[k] = v);
                    else if (aOld[k] != v) bind_null_or(p, k + 1, aOld[k] = v);
                }
            }
        } else {
            for (int k = 0; k < nCol; k++) {
                if (aTable[i].aCol[k].flags & C_VALUE) sqlite3_bind_int64(p, k + 1, a[r * nCol + k]);
                else bind_null_or(p, k + 1, a[r * nCol + k]);
            }
        }
        if (sqlite3_step(p) != SQLITE_DONE) {
            sqlite3_reset(p);
            tb->anBuf[i] = 0;
            return sql_fail(tb, aTable[i].zTable);
        }
        sqlite3_reset(p);
        r += nRow;
    }
    tb->anBuf[i] = 0;
    return 0;
}

/* Add one row of table i, its values as stored, to the rows waiting (written BATCH at a time). Returns 0 or -1. */
static int buffer_row(struct vt__tb *tb, int i, const int64_t *aRow)
{
    int nCol = aTable[i].nCol;
    memcpy(tb->aBuf[i] + tb->anBuf[i] * nCol, aRow, (size_t)nCol * sizeof *aRow);
    if (++tb->anBuf[i] == BATCH) return flush_table(tb, i);
    return 0;
}

/* A table's rows handed over from its runs (vt__runs_each's callback). */
struct runs_to {
    struct vt__tb *tb;
    int i;
};

static int run_row(void *pArg, const int64_t *aRow)
{
    const struct runs_to *t = pArg;
    /* a snapshot's tensor rows, the many, through the code made for that table's constant columns */
    return t->i == VT_TB_TENSOR ? buffer_row(t->tb, VT_TB_TENSOR, aRow) : buffer_row(t->tb, t->i, aRow);
}

/* The runs' failure (errno) as the builder's, unless a write already said why. Returns -1. */
static int runs_fail(struct vt__tb *tb)
{
    return tb_fail(tb, "cannot write the trace (rows out of time order): %s", strerror(errno));
}

/* Write table i's runs into it as they came, after the rows already there, and keep its later rows there
 * too: it is sorted at close (reorder). For anything that reads or changes the table before. 0 or -1. */
static int runs_write_back(struct vt__tb *tb, int i)
{
    struct runs_to t = {tb, i};
    int rc = flush_table(tb, i);
    if (rc == 0 && (rc = vt__runs_each(tb->apRuns[i], 0, run_row, &t)) != 0 && !tb->zErr[0]) runs_fail(tb);
    vt__runs_close(tb->apRuns[i]);
    tb->apRuns[i] = NULL;
    tb->aNoRuns[i] = 1;
    return rc == 0 ? flush_table(tb, i) : -1;
}

/*
 * Put table i in time order from its runs, at close: its rows so far (those before the first row out of
 * order, in time order) join the runs as run 0, the table is emptied and refilled with every row merged by
 * (time, rowid as written): what ORDER BY t, id gives (reorder), without sorting. Returns 0 or -1.
 */
static int runs_merge(struct vt__tb *tb, int i)
{
    const struct tdesc *d = &aTable[i];
    struct vt__runs *r = tb->apRuns[i];
    struct runs_to t = {tb, i};
    sqlite3_stmt *p = NULL;
    sqlite3_str *q;
    char *zSql;
    int rc = 0, src;
    if (flush_table(tb, i)) return -1;
    q = sqlite3_str_new(tb->db);
    sqlite3_str_appendall(q, "SELECT ");
    for (int c = 0; c < d->nCol; c++) sqlite3_str_appendf(q, "%s%s", c ? ", " : "", stored_name(&d->aCol[c]));
    sqlite3_str_appendf(q, " FROM main.%s ORDER BY rowid", d->zTable);
    zSql = sqlite3_str_finish(q);
    if (!zSql || sqlite3_prepare_v2(tb->db, zSql, -1, &p, NULL) != SQLITE_OK) rc = sql_fail(tb, "reorder");
    sqlite3_free(zSql);
    /* run 0's rows have the lowest rowids: ordinal 1 puts them first among equal times */
    if (rc == 0 && vt__runs_begin(r, 1)) rc = tb_fail(tb, "cannot write the trace (reorder): too many runs");
    while (rc == 0 && (src = sqlite3_step(p)) == SQLITE_ROW) {
        int64_t aRow[MAXCOL];
        for (int c = 0; c < d->nCol; c++)
            aRow[c] = sqlite3_column_type(p, c) == SQLITE_NULL ? VT_TB_NULL : sqlite3_column_int64(p, c);
        if (vt__runs_put(r, aRow)) rc = runs_fail(tb);
    }
    if (rc == 0 && src != SQLITE_DONE) rc = sql_fail(tb, "reorder");
    sqlite3_finalize(p);
    if (rc == 0) {
        char zDel[96];
        snprintf(zDel, sizeof zDel, "DELETE FROM main.%s", d->zTable);
        if (sqlite3_exec(tb->db, zDel, NULL, NULL, NULL) != SQLITE_OK) rc = sql_fail(tb, "reorder");
    }
    if (rc == 0 && (rc = vt__runs_each(r, 1, run_row, &t)) != 0 && !tb->zErr[0]) runs_fail(tb);
    if (rc == 0) rc = flush_table(tb, i);
    vt__runs_close(r);
    tb->apRuns[i] = NULL;
    tb->aUnordered[i] = 0;
    return rc ? -1 : 0;
}

/* Write every table's waiting rows, runs included (before anything reads or changes the tables). 0 or -1. */
static int flush_all(struct vt__tb *tb)
{
    for (int i = 0; i < VT_TB_NTABLE; i++) {
        if (tb->apRuns[i] && runs_write_back(tb, i)) return -1;
        if (tb->anBuf[i] && flush_table(tb, i)) return -1;
    }
    return 0;
}

/*
 * Add one row of table i from the struct at pRow: a compacted table's at once, a plain table's to the rows
 * waiting (written BATCH at a time), or to its runs once a row came out of time order. Returns 0 or -1.
 */
static int insert_row(struct vt__tb *tb, int i, const void *pRow)
{
    const struct tdesc *d = &aTable[i];
    int64_t t = VT_TB_NULL, key = VT_TB_NULL, *pOut, aOne[MAXCOL];
    if (ensure_schema(tb)) return -1;
    pOut = aOne;
    for (int c = 0; c < d->nCol; c++) {
        int64_t v = *(const int64_t *)((const char *)pRow + d->aCol[c].off), t0 = v;
        if (d->aCol[c].flags & C_TIME) {
            if (v == VT_TB_NULL && !tb->bNullTime) {
                tb->nUntimed++;
                return 0;
            }
            /* a time too far from the base to store (only a damaged source has one) is unknown */
            if (v != VT_TB_NULL && __builtin_sub_overflow(v, tb->base, &v)) v = VT_TB_NULL;
            t = v == VT_TB_NULL ? VT_TB_NULL : t0;
            key = v;
        } else if (d->aCol[c].flags & C_END) {
            if (v == VT_TB_NULL || t == VT_TB_NULL || __builtin_sub_overflow(v, t, &v)) v = VT_TB_NULL;
        } else if (v == VT_TB_NULL && (d->aCol[c].flags & C_DEF0)) {
            v = 0;
        }
        pOut[c] = v;
    }
    tb->aRows[i]++;
    if (t != VT_TB_NULL) {
        if (t < tb->aLastT[i]) tb->aUnordered[i] = 1;
        else tb->aLastT[i] = t;
    } else if (tb->aLastT[i] != INT64_MIN) {
        tb->aUnordered[i] = 1; /* unknown times sort first */
    }
    if (tb->aCompact[i]) { /* its parts, now */
        struct vt_compact_part aPart[3];
        uint32_t mNull = 0;
        for (int c = 0; c < d->nCol; c++) mNull |= (uint32_t)(pOut[c] == VT_TB_NULL) << c;
        if (vt__compact_sink_put(&tb->sink, aPart, vt__compact_add(&tb->cmp, &tb->aCmpMap[i], pOut, mNull, aPart)))
            return sql_fail(tb, d->zTable);
        return 0;
    }
    if (!tb->aNoRuns[i]) { /* a new run where the stored time goes back (NULL times are the least) */
        int bBack = key < tb->aLastKey[i] || (tb->aSpill[i] && !tb->apRuns[i]);
        tb->aLastKey[i] = key;
        if (bBack) {
            if (!tb->apRuns[i] && vt__runs_open(&tb->apRuns[i], tb->zTmp, d->nCol)) return runs_fail(tb);
            /* one run is kept for run 0 (runs_merge); past the last, the table is sorted at close */
            if (vt__runs_count(tb->apRuns[i]) == VT_RUNS_MAX - 1) {
                if (runs_write_back(tb, i)) return -1;
            } else if (vt__runs_begin(tb->apRuns[i], tb->aRows[i])) {
                return tb_fail(tb, "cannot write the trace (rows out of time order): too many runs");
            }
        }
        if (tb->apRuns[i]) return vt__runs_put(tb->apRuns[i], pOut) ? runs_fail(tb) : 0;
    }
    return buffer_row(tb, i, pOut);
}

int vt__tb_memory(struct vt__tb *tb, const struct vt__tb_memory *r) { return insert_row(tb, VT_TB_MEMORY, r); }
int vt__tb_tensor(struct vt__tb *tb, const struct vt__tb_tensor *r) { return insert_row(tb, VT_TB_TENSOR, r); }
int vt__tb_memcpy(struct vt__tb *tb, const struct vt__tb_memcpy *r) { return insert_row(tb, VT_TB_MEMCPY, r); }
int vt__tb_memset(struct vt__tb *tb, const struct vt__tb_memset *r) { return insert_row(tb, VT_TB_MEMSET, r); }
int vt__tb_kernel(struct vt__tb *tb, const struct vt__tb_kernel *r) { return insert_row(tb, VT_TB_KERNEL, r); }
int vt__tb_nvtx(struct vt__tb *tb, const struct vt__tb_nvtx *r) { return insert_row(tb, VT_TB_NVTX, r); }
int vt__tb_api(struct vt__tb *tb, const struct vt__tb_api *r) { return insert_row(tb, VT_TB_API, r); }

int vt__tb_oom(struct vt__tb *tb, const struct vt__tb_oom *r) { return insert_row(tb, VT_TB_OOM, r); }

int64_t vt__tb_rows(const struct vt__tb *tb)
{
    int64_t n = 0;
    for (int i = 0; i < VT_TB_NTABLE; i++) n += tb->aRows[i];
    return n;
}

int64_t vt__tb_untimed(const struct vt__tb *tb)
{
    return tb->nUntimed;
}

int64_t vt__tb_next_rowid(const struct vt__tb *tb, int iTable)
{
    return tb->aRows[iTable] + 1;
}

int vt__tb_set_device(struct vt__tb *tb, int iTable, int64_t first, int64_t last, int64_t device)
{
    char zSql[256], zDev[24] = "NULL";
    if (first > last) return 0;
    if (flush_all(tb)) return -1;
    if (device != VT_TB_NULL) snprintf(zDev, sizeof zDev, "%lld", (long long)device);
    snprintf(zSql, sizeof zSql, "UPDATE %s SET device = %s WHERE rowid BETWEEN %lld AND %lld",
             aTable[iTable].zTable, zDev, (long long)first, (long long)last);
    return sqlite3_exec(tb->db, zSql, NULL, NULL, NULL) == SQLITE_OK ? 0 : sql_fail(tb, "device update");
}

void vt__tb_spill(struct vt__tb *tb, int iTable)
{
    if (tb->aRows[iTable] == 0) tb->aSpill[iTable] = 1;
}

int vt__tb_set_stack(struct vt__tb *tb, int iTable, int64_t rowid, int64_t stackId)
{
    sqlite3_stmt *p;
    if (iTable < 0 || iTable >= VT_TB_NTABLE) return tb_fail(tb, "no table %d", iTable);
    if (flush_all(tb)) return -1;
    if (!tb->apSetStack[iTable]) {
        char zSql[160];
        snprintf(zSql, sizeof zSql, "UPDATE %s SET stack_id = ? WHERE rowid = ?", aTable[iTable].zTable);
        if (sqlite3_prepare_v3(tb->db, zSql, -1, SQLITE_PREPARE_PERSISTENT, &tb->apSetStack[iTable], NULL) != SQLITE_OK)
            return sql_fail(tb, "prepare");
    }
    p = tb->apSetStack[iTable];
    bind_null_or(p, 1, stackId);
    sqlite3_bind_int64(p, 2, rowid);
    if (sqlite3_step(p) != SQLITE_DONE) {
        sqlite3_reset(p);
        return sql_fail(tb, "stack update");
    }
    sqlite3_reset(p);
    return 0;
}

int vt__tb_aside(struct vt__tb *tb, const int64_t a[5], const char *z)
{
    if (ensure_schema(tb)) return -1;
    if (!tb->pAside) {
        if (sqlite3_exec(tb->db, "CREATE TEMP TABLE IF NOT EXISTS vt_aside(a0, a1, a2, a3, a4, z)", NULL, NULL, NULL) !=
                SQLITE_OK ||
            sqlite3_prepare_v3(tb->db, "INSERT INTO temp.vt_aside VALUES(?, ?, ?, ?, ?, ?)", -1,
                               SQLITE_PREPARE_PERSISTENT, &tb->pAside, NULL) != SQLITE_OK)
            return sql_fail(tb, "set aside");
    }
    for (int i = 0; i < 5; i++) sqlite3_bind_int64(tb->pAside, i + 1, a[i]);
    sqlite3_bind_text(tb->pAside, 6, z, -1, SQLITE_STATIC);
    if (sqlite3_step(tb->pAside) != SQLITE_DONE) {
        sqlite3_reset(tb->pAside);
        return sql_fail(tb, "set aside");
    }
    sqlite3_reset(tb->pAside);
    return 0;
}

int vt__tb_aside_each(struct vt__tb *tb, int (*xRow)(void *pArg, const int64_t *a, const char *z), void *pArg)
{
    sqlite3_stmt *p = NULL;
    int rc = 0, src;
    if (!tb->pAside) return 0; /* nothing set aside */
    if (sqlite3_prepare_v2(tb->db, "SELECT a0, a1, a2, a3, a4, z FROM temp.vt_aside ORDER BY a0, a1, a2, a3", -1, &p,
                           NULL) != SQLITE_OK)
        return sql_fail(tb, "read aside");
    while (rc == 0 && (src = sqlite3_step(p)) == SQLITE_ROW) {
        int64_t a[5];
        for (int i = 0; i < 5; i++) a[i] = sqlite3_column_int64(p, i);
        rc = xRow(pArg, a, (const char *)sqlite3_column_text(p, 5));
    }
    if (rc == 0 && src != SQLITE_DONE) rc = sql_fail(tb, "read aside");
    sqlite3_finalize(p);
    return rc;
}

int vt__tb_exec(struct vt__tb *tb, const char *zSql)
{
    if (ensure_schema(tb) || flush_all(tb)) return SQLITE_ERROR;
    return sqlite3_exec(tb->db, zSql, NULL, NULL, NULL);
}

const char *vt__tb_errmsg(const struct vt__tb *tb)
{
    return tb->zErr;
}

/* Rewrite table i in time order (NULL times first, then as written). Returns 0 or -1. */
static int reorder(struct vt__tb *tb, int i)
{
    const struct tdesc *d = &aTable[i];
    char zCols[512], zSql[2400];
    size_t n = 0;
    if (tb->aCompact[i]) { /* a compacted table: its rows again, sorted, as new parts */
        const struct vt_compact_spec *p = &vt__aCompact[tb->aCompact[i] - 1];
        char *zErr = NULL;
        int rc;
        snprintf(zSql, sizeof zSql,
                 "CREATE TEMP TABLE vt_sorted AS SELECT NULL AS id, t, dur, %s FROM main.\"%s\" ORDER BY t, id;"
                 " DELETE FROM main.\"%s_row\"; DELETE FROM main.\"%s_block\";",
                 p->zCols, p->zName, p->zName, p->zName);
        rc = sqlite3_exec(tb->db, zSql, NULL, NULL, NULL);
        if (rc == SQLITE_OK) rc = vt__compact_insert_select(tb->db, tb->aCompact[i] - 1, "SELECT * FROM vt_sorted ORDER BY rowid", 0, &zErr);
        if (rc == SQLITE_OK) rc = sqlite3_exec(tb->db, "DROP TABLE vt_sorted", NULL, NULL, NULL);
        if (rc != SQLITE_OK) tb_fail(tb, "cannot write the trace (reorder): %s", zErr ? zErr : sqlite3_errmsg(tb->db));
        sqlite3_free(zErr);
        return rc == SQLITE_OK ? 0 : -1;
    }
    for (int c = 0; c < d->nCol; c++) n += (size_t)snprintf(zCols + n, sizeof zCols - n, "%s%s", c ? ", " : "", stored_name(&d->aCol[c]));
    snprintf(zSql, sizeof zSql,
             "CREATE TEMP TABLE vt_sorted AS SELECT %s FROM main.%s ORDER BY t, id;"
             "DELETE FROM main.%s; INSERT INTO main.%s(%s) SELECT %s FROM vt_sorted; DROP TABLE vt_sorted;",
             zCols, d->zTable, d->zTable, d->zTable, zCols, zCols);
    return sqlite3_exec(tb->db, zSql, NULL, NULL, NULL) == SQLITE_OK ? 0 : sql_fail(tb, "reorder");
}

int vt__tb_close(struct vt__tb *tb, int bKeep, char *zErr, size_t nErr)
{
    int rc = 0;
    if (bKeep && !tb->zErr[0]) {
        for (int i = 0; i < VT_TB_NTABLE && rc == 0; i++)
            if (tb->apRuns[i]) rc = runs_merge(tb, i);
        if (rc == 0 && ensure_schema(tb) == 0 && flush_all(tb) == 0) {
            for (int i = 0; i < VT_TB_NTABLE && rc == 0; i++)
                if (tb->aUnordered[i]) rc = reorder(tb, i);
            if (rc == 0 && sqlite3_get_autocommit(tb->db) == 0 && sqlite3_exec(tb->db, "COMMIT", NULL, NULL, NULL))
                rc = sql_fail(tb, "commit");
        } else {
            rc = -1;
        }
    } else if (bKeep) {
        rc = -1;
    }
    for (int i = 0; i < VT_TB_NTABLE; i++) {
        vt__runs_close(tb->apRuns[i]);
        sqlite3_finalize(tb->aIns[i]);
        sqlite3_finalize(tb->aMulti[i]);
        free(tb->aBuf[i]);
        free(tb->aBound[i]);
    }
    sqlite3_finalize(tb->pString);
    sqlite3_finalize(tb->pStack);
    sqlite3_finalize(tb->pFrame);
    if (tb->bCmp) {
        vt__compact_sink_close(&tb->sink);
        vt__compact_free(&tb->cmp);
    }
    sqlite3_finalize(tb->pAside);
    for (int i = 0; i < VT_TB_NTABLE; i++) sqlite3_finalize(tb->apSetStack[i]);
    if (tb->db && rc == 0 && bKeep &&
        sqlite3_exec(tb->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK)
        rc = sql_fail(tb, "journal mode");
    if (tb->db && sqlite3_close(tb->db) != SQLITE_OK && rc == 0 && bKeep) rc = tb_fail(tb, "cannot close the trace");
    if (tb->zTmp) vt__cleanup_forget(tb->zTmp);
    if (rc == 0 && bKeep && tb->zTmp) {
        /* no-clobber unless forced: link fails when the path appeared meanwhile */
        if (tb->bForce ? rename(tb->zTmp, tb->zPath) != 0 : link(tb->zTmp, tb->zPath) != 0)
            rc = tb_fail(tb, "%s: cannot create: %s", tb->zPath, strerror(errno));
        else if (!tb->bForce)
            unlink(tb->zTmp);
    }
    if ((rc != 0 || !bKeep) && tb->zTmp) unlink(tb->zTmp);
    if (rc != 0 && zErr) snprintf(zErr, nErr, "%s", tb->zErr[0] ? tb->zErr : "cannot write the trace");
    for (size_t i = 0; i < tb->nStrSlot; i++) free(tb->aStr[i].z);
    free(tb->aStr);
    for (size_t i = 0; i < tb->nStackSlot; i++) free(tb->aStack[i].aKey);
    free(tb->aStack);
    free(tb->zPath);
    free(tb->zTmp);
    free(tb);
    return bKeep ? rc : 0;
}
