/* Test tool: a full trace rewritten as the always-on mode would have written it (ksummary.c over its rows, in time order). */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksummary.h"
#include "vramtrace/schema.h"

/*
 * usage: ksum_convert TRACE WARMUP_FRACTION PERIODS
 * In place (on a copy the caller made): the kernels, kernel launch calls and kernel-argument
 * uses of TRACE are taken through vt__ksum in time order (with the free calls, which write an
 * address's held uses out), from the time WARMUP_FRACTION of the trace's kernel span on, in
 * PERIODS periods over the rest; the rows it takes are deleted, the rows it gives back
 * (kernel_summary rows, the uses kept) inserted, and meta says the mode as the tracer does.
 * Exit 0, or 1 with a message.
 */
struct ev {
    int64_t ts;
    int table; /* VT_T_KERNEL, VT_T_API_CALL, VT_T_BUFFER_USE */
    int64_t rowid;
    struct vt__row r;
};

static struct ev *g_a;
static size_t g_n, g_cap;
static sqlite3 *g_db;
static int g_rc;
static sqlite3_stmt *g_pSum, *g_pUse;

static void add(const struct ev *e)
{
    if (g_n == g_cap) {
        g_cap = g_cap ? 2 * g_cap : 4096;
        g_a = realloc(g_a, g_cap * sizeof *g_a);
        if (!g_a) exit(1);
    }
    g_a[g_n++] = *e;
}

static int by_time(const void *pa, const void *pb)
{
    const struct ev *a = pa, *b = pb;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    if (a->table != b->table) return a->table < b->table ? -1 : 1; /* the call before its uses and kernel */
    return a->rowid < b->rowid ? -1 : a->rowid > b->rowid;
}

/* Rows ksummary gives back: summaries and uses, into the trace (stored times). */
static void give_back(void *pCtx, const struct vt__row *r)
{
    int64_t base = *(const int64_t *)pCtx;
    sqlite3_stmt *p = r->table == VT_T_KERNEL_SUMMARY ? g_pSum : g_pUse;
    int n = r->table == VT_T_KERNEL_SUMMARY ? 8 : 5;
    for (int i = 0; i < n; i++) {
        int64_t v = r->v[i].i;
        if (r->nullMask >> i & 1) {
            sqlite3_bind_null(p, i + 1);
            continue;
        }
        if (r->table == VT_T_KERNEL_SUMMARY && i == 1) v -= r->v[0].i; /* the end as dur */
        if ((r->table == VT_T_KERNEL_SUMMARY && i == 0) || (r->table == VT_T_BUFFER_USE && i == 3)) v -= base;
        sqlite3_bind_int64(p, i + 1, v);
    }
    if (sqlite3_step(p) != SQLITE_DONE && g_rc == SQLITE_OK) g_rc = sqlite3_errcode(g_db);
    sqlite3_reset(p);
}

static int64_t one(const char *zSql)
{
    sqlite3_stmt *p = NULL;
    int64_t v = 0;
    if (sqlite3_prepare_v2(g_db, zSql, -1, &p, NULL) == SQLITE_OK && sqlite3_step(p) == SQLITE_ROW)
        v = sqlite3_column_int64(p, 0);
    sqlite3_finalize(p);
    return v;
}

int main(int argc, char **argv)
{
    struct vt__ksum k;
    sqlite3_stmt *p = NULL;
    int64_t base, t0, t1, start, period;
    char zSql[256], *zDdl;
    if (argc != 4 || sqlite3_open(argv[1], &g_db) != SQLITE_OK) {
        fprintf(stderr, "usage: ksum_convert TRACE WARMUP_FRACTION PERIODS\n");
        return 1;
    }
    base = one("SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'time_base_ns'), 0)");
    t0 = one("SELECT min(start) FROM kernel WHERE start > 0");
    t1 = one("SELECT max(\"end\") FROM kernel WHERE start > 0");
    start = t0 + (int64_t)((double)(t1 - t0) * atof(argv[2]));
    period = (t1 - start) / (atoi(argv[3]) > 0 ? atoi(argv[3]) : 1) + 1;
    /* every kernel, launch or free call and kernel use with its row as the decoder emits it (absolute times) */
    if (sqlite3_prepare_v2(g_db,
                           "SELECT 0, id, start, \"end\", device, name_id FROM kernel WHERE start > 0 UNION ALL"
                           " SELECT 1, c.id, c.start, c.api, c.ptr, NULL FROM api_call c JOIN enum_api a ON a.id = c.api"
                           " WHERE a.family IN ('launch', 'free') AND c.start > 0 UNION ALL"
                           " SELECT 2, rowid, ts, address, kind, correlation FROM buffer_use WHERE kind = 0 AND ts > 0",
                           -1, &p, NULL) != SQLITE_OK) {
        fprintf(stderr, "ksum_convert: %s\n", sqlite3_errmsg(g_db));
        return 1;
    }
    while (sqlite3_step(p) == SQLITE_ROW) {
        struct ev e;
        int kind = sqlite3_column_int(p, 0);
        memset(&e, 0, sizeof e);
        e.rowid = sqlite3_column_int64(p, 1);
        e.ts = sqlite3_column_int64(p, 2);
        if (kind == 0) {
            e.table = e.r.table = VT_T_KERNEL;
            e.r.v[0].i = e.ts;
            e.r.v[1].i = sqlite3_column_int64(p, 3);
            e.r.v[2].i = sqlite3_column_int64(p, 4);
            e.r.v[6].i = sqlite3_column_int64(p, 5);
            e.r.nullMask = (sqlite3_column_type(p, 3) == SQLITE_NULL ? 1u << 1 : 0) |
                           (sqlite3_column_type(p, 4) == SQLITE_NULL ? 1u << 2 : 0) |
                           (sqlite3_column_type(p, 5) == SQLITE_NULL ? 1u << 6 : 0);
        } else if (kind == 1) {
            e.table = e.r.table = VT_T_API_CALL;
            e.r.v[0].i = sqlite3_column_int64(p, 3);
            e.r.v[2].i = e.ts;
            e.r.v[8].i = sqlite3_column_int64(p, 4);
            e.r.nullMask = sqlite3_column_type(p, 4) == SQLITE_NULL ? 1u << 8 : 0;
        } else {
            e.table = e.r.table = VT_T_BUFFER_USE;
            e.r.v[0].i = sqlite3_column_int64(p, 5);
            e.r.v[1].i = sqlite3_column_int64(p, 4);
            e.r.v[2].i = sqlite3_column_int64(p, 3);
            e.r.v[3].i = e.ts;
            e.r.v[4].i = 0;
        }
        add(&e);
    }
    sqlite3_finalize(p);
    qsort(g_a, g_n, sizeof *g_a, by_time);
    zDdl = vt__schema_has_table(g_db, "kernel_summary") == 1 ? sqlite3_mprintf("SELECT 1")
                                                               : vt__schema_sql_at(VT_KERNEL_SUMMARY_DDL, base);
    if (!zDdl || sqlite3_exec(g_db, "BEGIN; CREATE TEMP TABLE taken(tbl INTEGER, id INTEGER)", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(g_db, zDdl, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(g_db,
                           "INSERT INTO kernel_summary(t, dur, device, name_id, count, busy_ns, min_ns, max_ns)"
                           " VALUES(?,?,?,?,?,?,?,?)",
                           -1, &g_pSum, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(g_db, "INSERT INTO buffer_use(correlation, kind, address, t, device) VALUES(?,?,?,?,?)", -1,
                           &g_pUse, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(g_db, "INSERT INTO taken VALUES(?, ?)", -1, &p, NULL) != SQLITE_OK ||
        vt__ksum_init(&k, start, period, give_back, &base) != 0) {
        fprintf(stderr, "ksum_convert: %s\n", sqlite3_errmsg(g_db));
        return 1;
    }
    for (size_t i = 0; i < g_n && g_rc == SQLITE_OK; i++) {
        if (!vt__ksum_take(&k, &g_a[i].r)) continue;
        sqlite3_bind_int(p, 1, g_a[i].table);
        sqlite3_bind_int64(p, 2, g_a[i].rowid);
        sqlite3_step(p);
        sqlite3_reset(p);
    }
    vt__ksum_finish(&k);
    sqlite3_finalize(p);
    snprintf(zSql, sizeof zSql,
             "DELETE FROM kernel WHERE id IN (SELECT id FROM taken WHERE tbl = %d);"
             " DELETE FROM api_call WHERE id IN (SELECT id FROM taken WHERE tbl = %d);",
             VT_T_KERNEL, VT_T_API_CALL);
    if (g_rc == SQLITE_OK) g_rc = sqlite3_exec(g_db, zSql, NULL, NULL, NULL);
    snprintf(zSql, sizeof zSql, "DELETE FROM buffer_use WHERE rowid IN (SELECT id FROM taken WHERE tbl = %d)",
             VT_T_BUFFER_USE);
    /* the uses given back were inserted after the ones taken were listed: only the old rowids go */
    if (g_rc == SQLITE_OK) g_rc = sqlite3_exec(g_db, zSql, NULL, NULL, NULL);
    if (g_rc == SQLITE_OK) {
        snprintf(zSql, sizeof zSql,
                 "INSERT OR REPLACE INTO meta VALUES('config.kernels', 'summary'), ('kernel_summary_from_ns', '%lld'),"
                 " ('kernel_summary_kernels', '%llu'), ('config.kernel_period_ns', '%lld'); COMMIT",
                 (long long)start, (unsigned long long)k.nKernels, (long long)period);
        g_rc = sqlite3_exec(g_db, zSql, NULL, NULL, NULL);
    }
    sqlite3_finalize(g_pSum);
    sqlite3_finalize(g_pUse);
    sqlite3_free(zDdl);
    vt__ksum_free(&k);
    if (g_rc != SQLITE_OK) {
        fprintf(stderr, "ksum_convert: %s\n", sqlite3_errmsg(g_db));
        return 1;
    }
    sqlite3_close(g_db);
    printf("%llu kernels summarized from %lld\n", (unsigned long long)k.nKernels, (long long)start);
    return 0;
}
