/* Synthetic trace builder for the analyzer tests: writes traces through the schema module. */
#include "tracegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "vramtrace/schema.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

static void exec(struct tg *g, sqlite3_stmt *p)
{
    if (sqlite3_step(p) != SQLITE_DONE) {
        fprintf(stderr, "tracegen: %s\n", sqlite3_errmsg(g->db));
        abort();
    }
    sqlite3_finalize(p);
}

static sqlite3_stmt *prep(struct tg *g, const char *zSql)
{
    sqlite3_stmt *p = NULL;
    if (sqlite3_prepare_v2(g->db, zSql, -1, &p, NULL) != SQLITE_OK) {
        fprintf(stderr, "tracegen: %s: %s\n", zSql, sqlite3_errmsg(g->db));
        abort();
    }
    return p;
}

static void bind_opt(sqlite3_stmt *p, int i, int64_t v)
{
    if (v < 0) sqlite3_bind_null(p, i);
    else sqlite3_bind_int64(p, i, v);
}

struct tg *tg_open(const char *zPath)
{
    return tg_open_at(zPath, 0);
}

struct tg *tg_open_at(const char *zPath, int64_t base)
{
    struct tg *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    unlink(zPath);
    g->base = base;
    if (sqlite3_open(zPath, &g->db) != SQLITE_OK || vt__schema_create_at(g->db, base, NULL) != SQLITE_OK) {
        sqlite3_close(g->db);
        free(g);
        return NULL;
    }
    g->nextCorr = 1;
    sqlite3_exec(g->db, "BEGIN", NULL, NULL, NULL);
    tg_meta(g, "pid", "1234");
    tg_meta(g, "closed_cleanly", "1");
    tg_meta(g, "config.tensors", "1");
    return g;
}

int tg_close(struct tg *g)
{
    int rc;
    for (int i = 0; i < TG_NSTMT; i++) sqlite3_finalize(g->apStmt[i]);
    rc = sqlite3_exec(g->db, "COMMIT", NULL, NULL, NULL);
    rc |= sqlite3_close(g->db);
    free(g);
    return rc == SQLITE_OK ? 0 : -1;
}

void tg_meta(struct tg *g, const char *zKey, const char *zValue)
{
    vt__meta_set(g->db, zKey, zValue);
}

void tg_device(struct tg *g, int id, const char *zName, int64_t totalBytes)
{
    sqlite3_stmt *p = prep(g, "INSERT INTO device(id, name, total_bytes) VALUES(?,?,?)");
    sqlite3_bind_int(p, 1, id);
    sqlite3_bind_text(p, 2, zName, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(p, 3, totalBytes);
    exec(g, p);
}

int64_t tg_string(struct tg *g, const char *z)
{
    sqlite3_stmt *p = prep(g, "SELECT id FROM string WHERE value = ?");
    int64_t id = -1;
    sqlite3_bind_text(p, 1, z, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(p) == SQLITE_ROW) id = sqlite3_column_int64(p, 0);
    sqlite3_finalize(p);
    if (id >= 0) return id;
    p = prep(g, "INSERT INTO string(value) VALUES(?)");
    sqlite3_bind_text(p, 1, z, -1, SQLITE_TRANSIENT);
    exec(g, p);
    return sqlite3_last_insert_rowid(g->db);
}

int64_t tg_stack(struct tg *g, const char *zFile, int line, const char *zFunc)
{
    int64_t fn = tg_string(g, zFunc), fi = tg_string(g, zFile), lib = tg_string(g, "/usr/lib/python3/site-packages/torch/nn/modules/module.py");
    int64_t fwd = tg_string(g, "_call_impl"), mod = tg_string(g, "libc10_cuda.so"), nat = tg_string(g, "c10::cuda::CUDACachingAllocator::malloc");
    sqlite3_stmt *p = prep(g, "INSERT INTO stack(hash, depth) VALUES(abs(random()), 3)");
    int64_t id;
    exec(g, p);
    id = sqlite3_last_insert_rowid(g->db);
    /* innermost first: a library Python frame, the user's frame, then a native frame */
    p = prep(g, "INSERT INTO frame(stack_id, idx, kind, pc, function_id, file_id, line, module_id) VALUES"
                "(?1, 0, 1, NULL, ?2, ?3, 1501, NULL), (?1, 1, 1, NULL, ?4, ?5, ?6, NULL),"
                "(?1, 2, 0, 4096, ?7, NULL, NULL, ?8)");
    sqlite3_bind_int64(p, 1, id);
    sqlite3_bind_int64(p, 2, fwd);
    sqlite3_bind_int64(p, 3, lib);
    sqlite3_bind_int64(p, 4, fn);
    sqlite3_bind_int64(p, 5, fi);
    sqlite3_bind_int(p, 6, line);
    sqlite3_bind_int64(p, 7, nat);
    sqlite3_bind_int64(p, 8, mod);
    exec(g, p);
    return id;
}

void tg_memop(struct tg *g, int64_t ts, int op, int device, int kind, int64_t addr, int64_t bytes, int64_t stack,
              int64_t poolSize, int64_t poolUsed)
{
    sqlite3_stmt *p = prep(g, "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, correlation, api,"
                              " stack_id, pool_size, pool_used) VALUES(?,?,?,?,?,?,?,?,?,?,?)");
    sqlite3_bind_int64(p, 1, ts - g->base);
    sqlite3_bind_int(p, 2, op);
    sqlite3_bind_int(p, 3, kind);
    sqlite3_bind_int64(p, 4, addr);
    sqlite3_bind_int64(p, 5, bytes);
    bind_opt(p, 6, device);
    sqlite3_bind_int64(p, 7, g->nextCorr++);
    sqlite3_bind_int(p, 8, op == 1 ? (kind == 2 ? 6 : 1) : op == 2 ? (kind == 2 ? 8 : 2) : op == 5 ? 42 : 43);
    bind_opt(p, 9, stack);
    bind_opt(p, 10, poolSize);
    bind_opt(p, 11, poolUsed);
    exec(g, p);
}

void tg_alloc(struct tg *g, int64_t ts, int device, int kind, int64_t addr, int64_t bytes, int64_t stack)
{
    tg_memop(g, ts, 1, device, kind, addr, bytes, stack, -1, -1);
}

void tg_free(struct tg *g, int64_t ts, int device, int kind, int64_t addr, int64_t bytes)
{
    tg_memop(g, ts, 2, device, kind, addr, bytes, -1, -1, -1);
}

void tg_block(struct tg *g, int64_t ts, int op, int64_t addr, int64_t bytes, int64_t stack)
{
    char z[256];
    snprintf(z, sizeof z,
             "INSERT INTO tensor_event(t, op, device, address, bytes, stack_id, source) VALUES(%lld, %d, 0, %lld, "
             "%lld, NULLIF(%lld, -1), 1)",
             (long long)(ts - g->base), op, (long long)addr, (long long)bytes, (long long)stack);
    tg_exec(g, z);
}

int64_t tg_kernel(struct tg *g, int64_t start, int64_t end, const char *zName)
{
    int64_t name = tg_string(g, zName), corr = g->nextCorr++;
    sqlite3_stmt *p = prep(g, "INSERT INTO kernel(t, dur, device, stream, correlation, name_id) VALUES(?,?2 - ?1,0,7,?,?)");
    sqlite3_bind_int64(p, 1, start - g->base);
    sqlite3_bind_int64(p, 2, end - g->base);
    sqlite3_bind_int64(p, 3, corr);
    sqlite3_bind_int64(p, 4, name);
    exec(g, p);
    return corr;
}

void tg_use(struct tg *g, int64_t ts, int64_t corr, int64_t addr)
{
    sqlite3_stmt *p = prep(g, "INSERT INTO buffer_use(correlation, kind, address, t, device) VALUES(?,0,?,?,0)");
    sqlite3_bind_int64(p, 1, corr);
    sqlite3_bind_int64(p, 2, addr);
    sqlite3_bind_int64(p, 3, ts - g->base);
    exec(g, p);
}

void tg_memcpy(struct tg *g, int64_t start, int64_t end, int copyKind, int srcKind, int dstKind, int64_t bytes,
               int64_t src, int64_t dst)
{
    sqlite3_stmt *p = prep(g, "INSERT INTO memcpy(t, dur, device, stream, correlation, copy_kind, src_kind,"
                              " dst_kind, bytes, src, dst) VALUES(?,?2 - ?1,0,7,?,?,?,?,?,?,?)");
    sqlite3_bind_int64(p, 1, start - g->base);
    sqlite3_bind_int64(p, 2, end - g->base);
    sqlite3_bind_int64(p, 3, g->nextCorr++);
    sqlite3_bind_int(p, 4, copyKind);
    sqlite3_bind_int(p, 5, srcKind);
    sqlite3_bind_int(p, 6, dstKind);
    sqlite3_bind_int64(p, 7, bytes);
    bind_opt(p, 8, src);
    bind_opt(p, 9, dst);
    exec(g, p);
}

void tg_nvtx(struct tg *g, int64_t start, int64_t end, const char *zName)
{
    int64_t name = tg_string(g, zName);
    sqlite3_stmt *p = prep(g, "INSERT INTO nvtx_range(t, dur, kind, name_id, thread, depth) VALUES(?,?2 - ?1,0,?,1,0)");
    sqlite3_bind_int64(p, 1, start - g->base);
    sqlite3_bind_int64(p, 2, end - g->base);
    sqlite3_bind_int64(p, 3, name);
    exec(g, p);
}

void tg_oom(struct tg *g, int64_t ts, int device, int64_t bytes, int64_t freeBytes, int64_t totalBytes, int64_t stack)
{
    sqlite3_stmt *p = prep(g, "INSERT INTO oom_event(t, api, device, bytes, status, free_bytes, total_bytes, stack_id)"
                              " VALUES(?,1,?,?,2,?,?,?)");
    sqlite3_bind_int64(p, 1, ts - g->base);
    sqlite3_bind_int(p, 2, device);
    sqlite3_bind_int64(p, 3, bytes);
    bind_opt(p, 4, freeBytes);
    bind_opt(p, 5, totalBytes);
    bind_opt(p, 6, stack);
    exec(g, p);
}

/* The full-row writers' statements, by index into g->apStmt. */
enum { S_MEM, S_API, S_KERNEL, S_COPY, S_OOM, S_USE, S_NVTX, S_SYNC, S_DROPPED, S_POOL, S_STACK, S_FRAME };

static const char *const azRowSql[TG_NSTMT] = {
    [S_MEM] = "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device, context, stream, correlation, api,"
              " is_async, pool_type, pool_address, pool_threshold, pool_size, pool_used, pc, thread, stack_id)"
              " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_API] = "INSERT INTO api_call(t, dur, api, correlation, thread, device, status, bytes, ptr, src, dst, stream,"
              " stack_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_KERNEL] = "INSERT INTO kernel(t, dur, device, context, stream, correlation, name_id, grid_x, grid_y, grid_z,"
                 " block_x, block_y, block_z, static_smem, dynamic_smem, registers) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_COPY] = "INSERT INTO memcpy(t, dur, device, context, stream, correlation, copy_kind, src_kind, dst_kind, bytes,"
               " is_async, src, dst) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_OOM] = "INSERT INTO oom_event(t, api, correlation, device, bytes, status, free_bytes, total_bytes, thread,"
              " stack_id) VALUES(?,?,?,?,?,?,?,?,?,?)",
    [S_USE] = "INSERT INTO buffer_use(correlation, kind, address, t, device) VALUES(?,?,?,?,?)",
    [S_NVTX] = "INSERT INTO nvtx_range(t, dur, kind, name_id, thread, depth) VALUES(?,?,?,?,?,?)",
    [S_SYNC] = "INSERT INTO sync_event(t, dur, type, device, context, stream, correlation) VALUES(?,?,?,NULL,1,?,?)",
    [S_DROPPED] = "INSERT INTO dropped(t, source, what, count) VALUES(?,?,?,?)",
    [S_POOL] = "INSERT INTO pool_event(t, op, device, pool_type, address, threshold, size, used) VALUES(?,?,?,?,?,?,?,?)",
    [S_STACK] = "INSERT INTO stack(hash, depth) VALUES(?,?)",
    [S_FRAME] = "INSERT INTO frame(stack_id, idx, kind, pc, function_id, file_id, line, module_id)"
                " VALUES(?,?,?,?,?,?,?,?)",
};

/* Statement i, prepared on first use; reset and unbound for the next row. */
static sqlite3_stmt *row_stmt(struct tg *g, int i)
{
    if (!g->apStmt[i]) g->apStmt[i] = prep(g, azRowSql[i]);
    return g->apStmt[i];
}

/* Bind v (TG_NULL: NULL) to parameter i. */
static void bind_v(sqlite3_stmt *p, int i, int64_t v)
{
    if (v == TG_NULL) sqlite3_bind_null(p, i);
    else sqlite3_bind_int64(p, i, v);
}

/* A time relative to the base, or TG_NULL. */
static int64_t rel(const struct tg *g, int64_t ts)
{
    return ts == TG_NULL ? TG_NULL : ts - g->base;
}

/* Step a cached statement (aborting on error) and make it ready for the next row. */
static void row_done(struct tg *g, sqlite3_stmt *p)
{
    if (sqlite3_step(p) != SQLITE_DONE) {
        fprintf(stderr, "tracegen: %s\n", sqlite3_errmsg(g->db));
        abort();
    }
    sqlite3_reset(p);
    sqlite3_clear_bindings(p);
}

/* Bind n values starting at parameter 1 and insert the row. */
static void row_insert(struct tg *g, int iStmt, const int64_t *a, int n)
{
    sqlite3_stmt *p = row_stmt(g, iStmt);
    for (int i = 0; i < n; i++) bind_v(p, i + 1, a[i]);
    row_done(g, p);
}

void tg_memory_row(struct tg *g, const struct tg_memrow *m)
{
    int64_t a[] = {rel(g, m->ts), m->op, m->memKind, m->address, m->bytes, m->device, m->context, m->stream,
                   m->correlation, m->api, m->isAsync, m->poolType, m->poolAddress, m->poolThreshold, m->poolSize,
                   m->poolUsed, m->pc, m->thread, m->stack};
    row_insert(g, S_MEM, a, (int)(sizeof a / sizeof a[0]));
}

void tg_api_row(struct tg *g, const struct tg_apirow *r)
{
    int64_t a[] = {rel(g, r->start), r->end == TG_NULL ? TG_NULL : r->end - r->start, r->api, r->correlation,
                   r->thread, r->device, r->status, r->bytes, r->ptr, r->src, r->dst, r->stream, r->stack};
    row_insert(g, S_API, a, (int)(sizeof a / sizeof a[0]));
}

void tg_kernel_row(struct tg *g, const struct tg_kernelrow *k)
{
    int64_t a[] = {rel(g, k->start), k->end - k->start, k->device, k->context, k->stream, k->correlation,
                   k->nameId, k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ, k->staticSmem,
                   k->dynamicSmem, k->registers};
    row_insert(g, S_KERNEL, a, (int)(sizeof a / sizeof a[0]));
}

void tg_copy_row(struct tg *g, const struct tg_copyrow *c)
{
    int64_t a[] = {rel(g, c->start), c->end - c->start, c->device, c->context, c->stream, c->correlation,
                   c->copyKind, c->srcKind, c->dstKind, c->bytes, c->isAsync, c->src, c->dst};
    row_insert(g, S_COPY, a, (int)(sizeof a / sizeof a[0]));
}

void tg_oom_row(struct tg *g, const struct tg_oomrow *o)
{
    int64_t a[] = {rel(g, o->ts), o->api, o->correlation, o->device, o->bytes, o->status, o->freeBytes,
                   o->totalBytes, o->thread, o->stack};
    row_insert(g, S_OOM, a, (int)(sizeof a / sizeof a[0]));
}

void tg_use_row(struct tg *g, int64_t corr, int kind, int64_t addr, int64_t ts, int64_t device)
{
    int64_t a[] = {corr, kind, addr, rel(g, ts), device};
    row_insert(g, S_USE, a, 5);
}

void tg_nvtx_row(struct tg *g, int64_t start, int64_t end, int kind, int64_t nameId, int64_t thread, int64_t depth)
{
    int64_t a[] = {rel(g, start), end == TG_NULL ? TG_NULL : end - start, kind, nameId, thread, depth};
    row_insert(g, S_NVTX, a, 6);
}

void tg_sync_row(struct tg *g, int64_t start, int64_t end, int type, int64_t stream, int64_t correlation)
{
    int64_t a[] = {rel(g, start), end - start, type, stream, correlation};
    row_insert(g, S_SYNC, a, 5);
}

void tg_dropped_row(struct tg *g, int64_t ts, int source, const char *zWhat, int64_t count)
{
    sqlite3_stmt *p = row_stmt(g, S_DROPPED);
    sqlite3_bind_int64(p, 1, ts - g->base);
    sqlite3_bind_int(p, 2, source);
    sqlite3_bind_text(p, 3, zWhat, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(p, 4, count);
    row_done(g, p);
}

void tg_pool_row(struct tg *g, int64_t ts, int op, int64_t device, int64_t poolType, int64_t address,
                 int64_t threshold, int64_t size, int64_t used)
{
    int64_t a[] = {rel(g, ts), op, device, poolType, address, threshold, size, used};
    row_insert(g, S_POOL, a, 8);
}

int64_t tg_stack_frames(struct tg *g, const struct tg_frame *a, int n, int64_t hash)
{
    sqlite3_stmt *p = row_stmt(g, S_STACK);
    int64_t id;
    sqlite3_bind_int64(p, 1, hash);
    sqlite3_bind_int(p, 2, n);
    row_done(g, p);
    id = sqlite3_last_insert_rowid(g->db);
    for (int i = 0; i < n; i++) {
        int64_t v[] = {id, i, a[i].kind, a[i].pc ? a[i].pc : TG_NULL,
                       a[i].zFunction ? tg_string(g, a[i].zFunction) : TG_NULL,
                       a[i].zFile ? tg_string(g, a[i].zFile) : TG_NULL, a[i].line > 0 ? a[i].line : TG_NULL,
                       a[i].zModule ? tg_string(g, a[i].zModule) : TG_NULL};
        row_insert(g, S_FRAME, v, 8);
    }
    return id;
}

void tg_exec(struct tg *g, const char *zSql)
{
    char *zErr = NULL;
    if (sqlite3_exec(g->db, zSql, NULL, NULL, &zErr) != SQLITE_OK) {
        fprintf(stderr, "tracegen: %s: %s\n", zSql, zErr ? zErr : "?");
        abort();
    }
}

int64_t tg_query(const char *zPath, const char *zSql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *p = NULL;
    int64_t v = -1;
    if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, zSql, -1, &p, NULL) == SQLITE_OK && sqlite3_step(p) == SQLITE_ROW)
        v = sqlite3_column_int64(p, 0);
    else
        fprintf(stderr, "tg_query: %s: %s\n", zSql, sqlite3_errmsg(db));
    sqlite3_finalize(p);
    sqlite3_close(db);
    return v;
}

static char zDir[256];

const char *tg_tmpdir(void)
{
    if (!zDir[0]) {
        snprintf(zDir, sizeof zDir, "/tmp/vt_analyzer_XXXXXX");
        if (!mkdtemp(zDir)) abort();
    }
    return zDir;
}

const char *tg_path(const char *zName)
{
    static char zPath[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(zPath[i], sizeof zPath[i], "%s/%s", tg_tmpdir(), zName);
    return zPath[i];
}

void tg_cleanup(void)
{
    DIR *d;
    struct dirent *e;
#if defined(__SANITIZE_ADDRESS__)
    /* each test ends with _exit in its own process, where LeakSanitizer would not run: check now */
    if (__lsan_do_recoverable_leak_check()) {
        fprintf(stderr, "  LeakSanitizer found leaks\n");
        _exit(1);
    }
#endif
    if (getenv("VT_TEST_KEEP")) { /* keep the traces for a closer look */
        fprintf(stderr, "  traces kept in %s\n", zDir);
        return;
    }
    if (!zDir[0] || !(d = opendir(zDir))) return;
    while ((e = readdir(d)) != NULL) {
        char zPath[600];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(zPath, sizeof zPath, "%s/%s", zDir, e->d_name);
        unlink(zPath);
    }
    closedir(d);
    rmdir(zDir);
    zDir[0] = 0;
}

/* Recursive-descent JSON syntax check; returns the end of the value or NULL. */
static const char *json_value(const char *z, int depth);

static const char *json_ws(const char *z)
{
    while (*z == ' ' || *z == '\n' || *z == '\t' || *z == '\r') z++;
    return z;
}

static const char *json_string(const char *z)
{
    if (*z++ != '"') return NULL;
    while (*z && *z != '"') {
        if ((unsigned char)*z < 0x20) return NULL;
        if (*z == '\\') {
            z++;
            if (*z == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", z[i]) || !z[i]) return NULL;
                z += 4;
            } else if (!*z || !strchr("\"\\/bfnrt", *z)) {
                return NULL;
            }
        }
        z++;
    }
    return *z == '"' ? z + 1 : NULL;
}

static const char *json_value(const char *z, int depth)
{
    if (depth > 64) return NULL;
    z = json_ws(z);
    if (*z == '{' || *z == '[') {
        char close = *z == '{' ? '}' : ']';
        int bObj = *z == '{';
        z = json_ws(z + 1);
        if (*z == close) return z + 1;
        for (;;) {
            if (bObj) {
                z = json_string(json_ws(z));
                if (!z) return NULL;
                z = json_ws(z);
                if (*z++ != ':') return NULL;
            }
            z = json_value(z, depth + 1);
            if (!z) return NULL;
            z = json_ws(z);
            if (*z == ',') { z++; continue; }
            return *z == close ? z + 1 : NULL;
        }
    }
    if (*z == '"') return json_string(z);
    if (!strncmp(z, "true", 4)) return z + 4;
    if (!strncmp(z, "false", 5)) return z + 5;
    if (!strncmp(z, "null", 4)) return z + 4;
    if (*z == '-' || (*z >= '0' && *z <= '9')) {
        char *zEnd;
        strtod(z, &zEnd);
        return zEnd > z ? zEnd : NULL;
    }
    return NULL;
}

int tg_json_valid(const char *z)
{
    const char *zEnd = json_value(z, 0);
    return zEnd && *json_ws(zEnd) == 0;
}
