/* Write-back: the lifetime, phase and finding tables written into the trace, in the read's own transaction. */
#include "analysis.h"

#include <stdlib.h>

/* The write-back of one trace: the statement lifetimes go through. */
struct vt_writeback {
    sqlite3_stmt *pLife;
};

/*
 * Replace earlier results (VT_ANALYSIS_DDL), add the kernel_name rows the trace lacks
 * (vt__knames_store) and prepare the lifetime insert, inside the
 * write transaction the read layer opened (vt__read_open VT_READ_WRITE), which
 * vt__writeback_end commits. Returns a VT_EXIT code.
 */
int vt__writeback_begin(struct vt_trace *t)
{
    int rc = SQLITE_NOMEM;
    t->pWb = calloc(1, sizeof *t->pWb);
    if (t->pWb) rc = sqlite3_exec(t->f.db, VT_ANALYSIS_DDL, NULL, NULL, NULL);
    /* readable kernel names (kernel_name) for every reader after this one, the views included */
    if (rc == SQLITE_OK) rc = vt__knames_load(t->f.db);
    if (rc == SQLITE_OK) rc = vt__knames_store(t->f.db);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(t->f.db,
                                "INSERT INTO lifetime(device, mem_kind, address, bytes, alloc_ts, free_ts,"
                                " first_use_ts, last_use_ts, use_count, alloc_api, free_api, alloc_event_id,"
                                " free_event_id, stack_id, phase_id, status, tensor)"
                                " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                                -1, &t->pWb->pLife, NULL);
    if (rc == SQLITE_OK) return VT_EXIT_OK;
    vt__errorf("%s: cannot write analysis results: %s", t->f.zPath,
               rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(t->f.db));
    vt__writeback_free(t);
    return vt__exit_for_sqlite(rc);
}

void vt__writeback_free(struct vt_trace *t)
{
    if (!t->pWb) return;
    sqlite3_finalize(t->pWb->pLife);
    free(t->pWb);
    t->pWb = NULL;
}

static void bind_opt(sqlite3_stmt *p, int i, int64_t v)
{
    if (v < 0) sqlite3_bind_null(p, i);
    else sqlite3_bind_int64(p, i, v);
}

/* Insert one lifetime row. Returns an SQLite code. */
int vt__writeback_life(struct vt_trace *t, const struct vt_life *l)
{
    sqlite3_stmt *p = t->pWb->pLife;
    int rc;
    if (l->device < 0) sqlite3_bind_null(p, 1);
    else sqlite3_bind_int(p, 1, l->device);
    sqlite3_bind_int(p, 2, l->memKind);
    sqlite3_bind_int64(p, 3, l->address);
    sqlite3_bind_int64(p, 4, l->bytes);
    bind_opt(p, 5, l->allocTs);
    bind_opt(p, 6, l->freeTs);
    bind_opt(p, 7, l->firstUse);
    bind_opt(p, 8, l->lastUse);
    sqlite3_bind_int64(p, 9, l->useCount);
    bind_opt(p, 10, l->allocApi > 0 ? l->allocApi : -1);
    bind_opt(p, 11, l->freeApi > 0 ? l->freeApi : -1);
    bind_opt(p, 12, l->allocEventId);
    bind_opt(p, 13, l->freeEventId);
    bind_opt(p, 14, l->stackId);
    bind_opt(p, 15, l->phase >= 0 ? l->phase + 1 : -1); /* phase.id = index + 1 */
    sqlite3_bind_text(p, 16, vt__life_status_name(l->status), -1, SQLITE_STATIC);
    sqlite3_bind_int(p, 17, l->bTensor);
    rc = sqlite3_step(p);
    sqlite3_reset(p);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Insert phases and findings of trace i, then commit. Returns a VT_EXIT code. */
int vt__writeback_end(struct vt_result *r, int iTrace)
{
    struct vt_trace *t = &r->aTrace[iTrace];
    sqlite3_stmt *p = NULL;
    int rc, i;
    rc = sqlite3_prepare_v2(t->f.db,
                            "INSERT INTO phase(id, kind, name, start, end, source, iteration, peak_bytes,"
                            " peak_ts, device) VALUES(?,?,?,?,?,?,?,?,?,NULL)",
                            -1, &p, NULL);
    for (i = 0; rc == SQLITE_OK && i < t->ph.n; i++) {
        const struct vt_phase *ph = &t->ph.a[i];
        sqlite3_bind_int(p, 1, i + 1);
        sqlite3_bind_text(p, 2, vt__phase_kind_name(ph->kind), -1, SQLITE_STATIC);
        sqlite3_bind_text(p, 3, ph->zName, -1, SQLITE_STATIC);
        sqlite3_bind_int64(p, 4, ph->start);
        sqlite3_bind_int64(p, 5, ph->end);
        sqlite3_bind_text(p, 6, ph->zSource, -1, SQLITE_STATIC);
        sqlite3_bind_int(p, 7, ph->nIter);
        bind_opt(p, 8, ph->peak);
        bind_opt(p, 9, ph->peakTs);
        rc = sqlite3_step(p) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(t->f.db);
        sqlite3_reset(p);
    }
    sqlite3_finalize(p);
    p = NULL;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(t->f.db,
                                "INSERT INTO finding(kind, severity, title, bytes, count, first_ts, last_ts,"
                                " device, phase, stack_id, site, evidence, fix)"
                                " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                                -1, &p, NULL);
    for (i = 0; rc == SQLITE_OK && i < r->nFind; i++) {
        const struct vt_finding *f = &r->aFind[i];
        if (f->trace != iTrace) continue;
        sqlite3_bind_text(p, 1, f->zKind, -1, SQLITE_STATIC);
        sqlite3_bind_text(p, 2, vt__sev_name(f->severity), -1, SQLITE_STATIC);
        sqlite3_bind_text(p, 3, f->zTitle ? f->zTitle : "", -1, SQLITE_STATIC);
        bind_opt(p, 4, f->bytes);
        bind_opt(p, 5, f->count);
        bind_opt(p, 6, f->firstTs);
        bind_opt(p, 7, f->lastTs);
        bind_opt(p, 8, f->device);
        if (f->zPhase[0]) sqlite3_bind_text(p, 9, f->zPhase, -1, SQLITE_STATIC);
        else sqlite3_bind_null(p, 9);
        bind_opt(p, 10, f->stackId);
        sqlite3_bind_text(p, 11, f->zSite, -1, SQLITE_STATIC);
        sqlite3_bind_text(p, 12, f->zEvidence, -1, SQLITE_STATIC);
        sqlite3_bind_text(p, 13, f->zFix, -1, SQLITE_STATIC);
        rc = sqlite3_step(p) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(t->f.db);
        sqlite3_reset(p);
    }
    sqlite3_finalize(p);
    if (rc == SQLITE_OK) rc = sqlite3_exec(t->f.db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK) return VT_EXIT_OK;
    vt__errorf("%s: cannot write analysis results: %s", t->f.zPath, sqlite3_errstr(rc));
    return VT_EXIT_INTERNAL;
}
