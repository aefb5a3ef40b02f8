/* What `vramtrace info` reports, read through the read layer: meta, devices, counts, peaks (the figure source), OOMs, losses. */
#include "info.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vramtrace/schema.h"

const char *const vt__info_tables[VT_INFO_NTABLE] = {
    "memory_event", "api_call", "memcpy", "memset", "kernel",       "buffer_use",  "nvtx_range", "sync_event",
    "pool_event",   "oom_event", "dropped", "overhead", "device",   "string",      "stack",      "frame",
    "lifetime",     "phase",     "finding", "tensor_event", "module", "kernel_name"};

static char *dup_text(sqlite3_stmt *p, int i)
{
    const unsigned char *z = sqlite3_column_text(p, i);
    return z ? strdup((const char *)z) : NULL;
}

static int64_t col_int(sqlite3_stmt *p, int i)
{
    return sqlite3_column_type(p, i) == SQLITE_INTEGER ? sqlite3_column_int64(p, i) : VT_INFO_NUL;
}

/* Grow *pa (element size sz) to hold n+1 elements. 0 or -1 (out of memory). */
static int grow(void **pa, int n, size_t sz)
{
    void *p;
    if (n & (n - 1) && n > 8) return 0; /* capacity is the next power of two above 8 */
    p = realloc(*pa, (size_t)(n < 8 ? 8 : 2 * n) * sz);
    if (!p) return -1;
    *pa = p;
    return 0;
}

/* Run zSql and call xRow(p, pStmt) for each row. An SQLite code (SQLITE_NOMEM when xRow fails). */
static int each_row(sqlite3 *db, const char *zSql, struct trace_info *p, int (*xRow)(struct trace_info *, sqlite3_stmt *))
{
    sqlite3_stmt *pStmt = NULL;
    int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
    while (rc == SQLITE_OK) {
        int step = sqlite3_step(pStmt);
        if (step == SQLITE_DONE) break;
        if (step != SQLITE_ROW) rc = step;
        else if (xRow(p, pStmt) != 0) rc = SQLITE_NOMEM;
    }
    sqlite3_finalize(pStmt);
    return rc;
}

static int row_dev(struct trace_info *p, sqlite3_stmt *s)
{
    struct info_dev *d;
    if (grow((void **)&p->aDev, p->nDev, sizeof *p->aDev)) return -1;
    d = &p->aDev[p->nDev++];
    d->id = col_int(s, 0);
    d->zName = dup_text(s, 1);
    d->zUuid = dup_text(s, 2);
    d->total = col_int(s, 3);
    d->ccMajor = col_int(s, 4);
    d->ccMinor = col_int(s, 5);
    d->sm = col_int(s, 6);
    d->pciBus = col_int(s, 7);
    d->pciDev = col_int(s, 8);
    d->bw = col_int(s, 9);
    return 0;
}

static int row_oom(struct trace_info *p, sqlite3_stmt *s)
{
    struct info_oom *o;
    if (grow((void **)&p->aOom, p->nOom, sizeof *p->aOom)) return -1;
    o = &p->aOom[p->nOom++];
    o->ts = col_int(s, 0);
    o->api = col_int(s, 1);
    o->device = col_int(s, 2);
    o->bytes = col_int(s, 3);
    o->status = col_int(s, 4);
    o->freeBytes = col_int(s, 5);
    o->totalBytes = col_int(s, 6);
    return 0;
}

static int row_drop(struct trace_info *p, sqlite3_stmt *s)
{
    struct info_drop *d;
    if (grow((void **)&p->aDrop, p->nDrop, sizeof *p->aDrop)) return -1;
    d = &p->aDrop[p->nDrop++];
    d->source = col_int(s, 0);
    d->zWhat = dup_text(s, 1);
    d->count = col_int(s, 2);
    d->cls = vt__read_drop_class(d->source, d->zWhat);
    if (d->count != VT_INFO_NUL) *(d->cls == VT_DROPCLASS_OMITTED ? &p->nOmitted : &p->nDropTotal) += d->count;
    return 0;
}

static int row_ovh(struct trace_info *p, sqlite3_stmt *s)
{
    struct info_ovh *o;
    if (grow((void **)&p->aOvh, p->nOvh, sizeof *p->aOvh)) return -1;
    o = &p->aOvh[p->nOvh++];
    o->zSource = dup_text(s, 0);
    o->zKind = dup_text(s, 1);
    o->rows = col_int(s, 2);
    o->events = col_int(s, 3);
    o->ns = col_int(s, 4);
    return 0;
}

/* Rows of each table info counts: the scan's for the large ones, count(*) through the guard for the rest. */
static int load_counts(struct trace_info *p)
{
    int rc = SQLITE_OK;
    for (int i = 0; rc == SQLITE_OK && i < VT_INFO_NTABLE; i++) {
        sqlite3_stmt *pStmt = NULL;
        char *zSql;
        int k;
        p->aCount[i] = -1;
        if (!vt__read_has(&p->f, vt__info_tables[i])) continue;
        for (k = 0; k < VT_T_N && strcmp(vt__tbl_name(k), vt__info_tables[i]); k++) {
        }
        if (k < VT_T_N) {
            p->aCount[i] = p->f.aT[k].nRow;
            continue;
        }
        zSql = sqlite3_mprintf("SELECT count(*) FROM \"%w\"", vt__info_tables[i]);
        rc = zSql ? sqlite3_prepare_v2(p->f.db, zSql, -1, &pStmt, NULL) : SQLITE_NOMEM;
        if (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
            p->aCount[i] = sqlite3_column_int64(pStmt, 0);
            rc = SQLITE_OK;
        }
        sqlite3_finalize(pStmt);
        sqlite3_free(zSql);
    }
    return rc;
}

int vt__info_load(struct trace_info *p, const char *zPath, int bFull)
{
    char zSql[256];
    struct stat st;
    int rc;
    memset(p, 0, sizeof *p);
    rc = vt__read_open(&p->f, zPath, 0, NULL);
    if (rc != VT_EXIT_OK) return rc;
    /* the file as named; standard input or a pipe: the file it was read into */
    if (stat(zPath, &st) != 0 || !S_ISREG(st.st_mode)) zPath = p->f.zOpened;
    p->fileBytes = stat(zPath, &st) == 0 ? (int64_t)st.st_size : -1;
    zPath = p->f.zPath;
    if (p->f.nHidden > 0)
        vt__errorf("%s: %lld rows with impossible values were ignored (damaged trace)", zPath, (long long)p->f.nHidden);
    rc = each_row(p->f.db,
                      "SELECT id, name, uuid, total_bytes, cc_major, cc_minor, sm_count, pci_bus, pci_device,"
                      " global_memory_bandwidth_kbps FROM device ORDER BY id",
                      p, row_dev);
    if (rc == SQLITE_OK) rc = load_counts(p);
    if (rc == SQLITE_OK)
        rc = each_row(p->f.db,
                      "SELECT source, coalesce(what, ''), sum(count) FROM dropped GROUP BY source, what"
                      " ORDER BY source, what",
                      p, row_drop);
    if (rc == SQLITE_OK && bFull) {
        snprintf(zSql, sizeof zSql,
                 "SELECT ts, api, device, bytes, status, free_bytes, total_bytes FROM oom_event"
                 " ORDER BY ts IS NULL, ts, id LIMIT %d",
                 VT_INFO_MAX_OOM);
        rc = each_row(p->f.db, zSql, p, row_oom);
    }
    if (rc == SQLITE_OK && bFull && vt__read_has(&p->f, "overhead"))
        rc = each_row(p->f.db,
                      "SELECT source, kind, count(*), sum(count), sum(CASE WHEN \"end\" >= start THEN \"end\" - start END)"
                      " FROM overhead GROUP BY source, kind ORDER BY 5 DESC, source, kind",
                      p, row_ovh);
    if (rc != SQLITE_OK) {
        /* the connection's message when it is about this error (it names the column or table) */
        const char *zWhy = (sqlite3_errcode(p->f.db) & 0xff) == (rc & 0xff) ? sqlite3_errmsg(p->f.db) : sqlite3_errstr(rc);
        int xc = vt__exit_for_sqlite(rc);
        vt__errorf("%s: cannot read%s: %s", zPath, xc == VT_EXIT_CORRUPT ? " (damaged trace)" : "", zWhy);
        return xc;
    }
    /* the writer's closing counters: trusted when they count more losses than the rows do */
    if (p->f.nLost > p->nDropTotal) p->nDropTotal = p->f.nLost;
    if (p->f.nOmitted > p->nOmitted) p->nOmitted = p->f.nOmitted;
    /* counts, level and peaks: the figure source's pass, as analyze makes them (read/figures.h) */
    return vt__figures_pass(&p->f);
}

void vt__info_free(struct trace_info *p)
{
    for (int i = 0; i < p->nDev; i++) {
        free(p->aDev[i].zName);
        free(p->aDev[i].zUuid);
    }
    for (int i = 0; i < p->nDrop; i++) free(p->aDrop[i].zWhat);
    for (int i = 0; i < p->nOvh; i++) {
        free(p->aOvh[i].zSource);
        free(p->aOvh[i].zKind);
    }
    free(p->aDev);
    free(p->aOom);
    free(p->aDrop);
    free(p->aOvh);
    vt__read_close(&p->f);
    memset(p, 0, sizeof *p);
}

const char *vt__info_meta(const struct trace_info *p, const char *zKey)
{
    return vt__read_meta_value(&p->f, zKey);
}

int64_t vt__info_meta_int(const struct trace_info *p, const char *zKey)
{
    const char *z = vt__info_meta(p, zKey);
    char *zEnd;
    long long v;
    if (!z || !*z) return VT_INFO_NUL;
    v = strtoll(z, &zEnd, 10);
    return *zEnd ? VT_INFO_NUL : v;
}

int64_t vt__info_count(const struct trace_info *p, const char *zName)
{
    for (int i = 0; i < VT_INFO_NTABLE; i++)
        if (!strcmp(vt__info_tables[i], zName)) return p->aCount[i];
    return -1;
}

int64_t vt__info_kernels(const struct trace_info *p, int64_t *pnSummarized)
{
    int64_t nRows = vt__info_count(p, "kernel");
    *pnSummarized = p->f.nKernelSummarized > 0 ? p->f.nKernelSummarized : 0;
    return (nRows > 0 ? nRows : 0) + *pnSummarized;
}

int vt__info_meta_known(const char *zKey)
{
    static const char *const azKnown[] = {
        "schema_version", "tracer_version", "pid", "ppid", "hostname", "exe", "executable", "cmdline", "rank",
        "local_rank", "world_size", "cuda_driver_version", "cuda_runtime_version", "cupti_version",
        "clock_anchor_cupti_ns", "clock_anchor_wall_ns", "start_ns", "end_ns", "closed_cleanly", "records_decoded",
        "records_unknown", "rows_written", "commits", "dropped_queue", "dropped_writer", "dropped_map",
        "time_base_ns", "cupti_library", "cupti_other_library", "cuda_runtime_library", "cupti_layout",
        "cupti_layout_table", "cupti_kinds_reduced", "records_not_decoded", "cupti_subscription"};
    if (!strncmp(zKey, "config.", 7) || !strncmp(zKey, "env.", 4)) return 1;
    for (size_t i = 0; i < sizeof azKnown / sizeof azKnown[0]; i++)
        if (!strcmp(zKey, azKnown[i])) return 1;
    return 0;
}
