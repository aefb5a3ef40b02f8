/* The guard: what a trace can legally hold (schema.h VT_DOMAIN_LIST) as SQL, the views hiding the rest, and the small timed tables' bounds read with the count. */
#include "read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowcheck.h"
#include "util/sqlnames.h"
#include "vramtrace/schema.h"

/* Every table VT_DOMAIN_LIST names, once, in its order. */
const char *const vt__guard_tables[] = {"memory_event", "tensor_event",   "oom_event",  "memcpy",   "memset",
                                        "kernel",       "kernel_summary", "buffer_use", "nvtx_range", "api_call",
                                        "sync_event",   "pool_event",     "device",     NULL};

int vt__columns_read(sqlite3 *db, const char *zTable, struct vt_columns *c)
{
    sqlite3_stmt *p = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1, 'main')", -1, &p, NULL);
    memset(c, 0, sizeof *c);
    if (rc == SQLITE_OK) sqlite3_bind_text(p, 1, zTable, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = vt__sql_names(p, &c->az, &c->n);
    sqlite3_finalize(p);
    if (rc != SQLITE_OK) vt__columns_free(c);
    return rc;
}

int vt__columns_has(const struct vt_columns *c, const char *zCol)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->az[i], zCol)) return 1;
    return 0;
}

void vt__columns_free(struct vt_columns *c)
{
    for (int i = 0; i < c->n; i++) free(c->az[i]);
    free(c->az);
    memset(c, 0, sizeof *c);
}

/*
 * The SQL condition of one column's domain into pOut. A time read through a generated column
 * (schema 2+: the table stores t, and dur for an end) is judged with its stored parts, so that
 * a stored value the generated column reads as NULL (text, beyond +-2^62) is impossible while
 * a NULL part is an unknown time.
 */
static void domain_sql(sqlite3_str *pOut, const char *zCol, int dom, int bStoredT, int bStoredDur)
{
    static const char zLim[] = "4611686018427387903";
    switch (dom) {
    case VT_DOM_TIME:
        if (bStoredT && !strcmp(zCol, "end"))
            sqlite3_str_appendf(pOut, "(t IS NULL OR %s OR \"end\" BETWEEN 0 AND %s)",
                                bStoredDur ? "dur IS NULL" : "0", zLim);
        else if (bStoredT)
            sqlite3_str_appendf(pOut, "(t IS NULL OR \"%w\" BETWEEN 0 AND %s)", zCol, zLim);
        else
            sqlite3_str_appendf(pOut, "(\"%w\" IS NULL OR \"%w\" BETWEEN 0 AND %s)", zCol, zCol, zLim);
        return;
    case VT_DOM_SIZE: sqlite3_str_appendf(pOut, "(\"%w\" BETWEEN 0 AND %lld)", zCol, VT__SIZE_MAX); return;
    case VT_DOM_SIZEN:
        sqlite3_str_appendf(pOut, "(\"%w\" IS NULL OR \"%w\" BETWEEN 0 AND %lld)", zCol, zCol, VT__SIZE_MAX);
        return;
    case VT_DOM_ADDR: sqlite3_str_appendf(pOut, "(typeof(\"%w\") = 'integer')", zCol); return;
    default: sqlite3_str_appendf(pOut, "(\"%w\" IS NULL OR typeof(\"%w\") = 'integer')", zCol, zCol); return;
    }
}

int vt__guard_where(sqlite3 *db, const char *zTable, char **pz)
{
    struct vt_columns cols;
    sqlite3_str *pOut = sqlite3_str_new(db);
    int nTerm = 0, bT, bDur, rc = vt__columns_read(db, zTable, &cols); /* one question for every column */
    *pz = NULL;
    bT = vt__columns_has(&cols, "t");
    bDur = vt__columns_has(&cols, "dur");
#define VT__DOM_TERM(zTab, zCol, DOM)                                                  \
    if (rc == SQLITE_OK && !strcmp(zTab, zTable) && vt__columns_has(&cols, zCol)) {    \
        if (nTerm++) sqlite3_str_appendall(pOut, " AND ");                             \
        domain_sql(pOut, zCol, VT_DOM_##DOM, bT, bDur);                                \
    }
    VT_DOMAIN_LIST(VT__DOM_TERM)
#undef VT__DOM_TERM
    vt__columns_free(&cols);
    if (rc == SQLITE_OK && nTerm) {
        *pz = sqlite3_str_finish(pOut);
        return *pz ? SQLITE_OK : SQLITE_NOMEM;
    }
    sqlite3_free(sqlite3_str_finish(pOut));
    return rc == SQLITE_OK ? SQLITE_OK : SQLITE_ERROR;
}

int vt__guard_table(sqlite3 *db, const char *zTable, int bCount, int64_t *pnHidden, char **pzWhere)
{
    char *zWhere = NULL, *zSql = NULL;
    sqlite3_stmt *pStmt = NULL;
    int rc = vt__guard_where(db, zTable, &zWhere);
    if (rc == SQLITE_OK && zWhere && bCount) {
        zSql = sqlite3_mprintf("SELECT count(*) FROM main.\"%w\" WHERE NOT coalesce(%s, 0)", zTable, zWhere);
        rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) : SQLITE_NOMEM;
        if (rc == SQLITE_OK && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
            *pnHidden += sqlite3_column_int64(pStmt, 0);
            rc = SQLITE_OK;
        }
        sqlite3_finalize(pStmt);
        sqlite3_free(zSql);
    }
    if (rc == SQLITE_OK && zWhere && *pnHidden > 0) {
        zSql = sqlite3_mprintf("CREATE TEMP VIEW IF NOT EXISTS \"%w\" AS SELECT * FROM main.\"%w\" WHERE %s", zTable,
                               zTable, zWhere);
        rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(zSql);
    }
    if (rc == SQLITE_OK && pzWhere) *pzWhere = zWhere;
    else sqlite3_free(zWhere);
    return rc;
}

/* ---- the small timed tables: the guard's count and the time bounds in one read ---- */

/*
 * The trace's time range takes every timed table's rows with known times through the guard's
 * views (meta.c). The large tables' come from the scan's pass; the small ones' (VT_SMALL_N of
 * them, f->aSmall in this order) from one query each, which also counts the rows the guard
 * hides: the bounds are those of the rows it lets through, exactly what a query of the table
 * through its guard view, after the count, would give (a view of main reads main's tables, so
 * no guard view of another table changes what it shows).
 */
static const struct {
    const char *zTable, *zStart, *zEnd; /* the table, and its start and end as the bounds take them */
} aSmall[VT_SMALL_N] = {
    {"oom_event", "ts", "ts"},
    {"nvtx_range", "start", "CASE WHEN \"end\" >= start THEN \"end\" ELSE start END"},
    {"api_call", "start", "CASE WHEN \"end\" >= start THEN \"end\" ELSE start END"},
    {"sync_event", "start", "CASE WHEN \"end\" >= start THEN \"end\" ELSE start END"},
    {"pool_event", "ts", "ts"},
};

void vt__guard_bounds_reset(struct vt_tracefile *f)
{
    for (int i = 0; i < VT_SMALL_N; i++) {
        f->aSmall[i].t0 = f->aSmall[i].t1 = -1;
        f->aSmall[i].nNoTime = 0;
    }
    f->bCallsPassed = 0;
}

/*
 * Table i of aSmall read once from zFrom (its rows: main's table, or a subquery of the same
 * columns): its impossible rows (the guard's condition zWhere, NULL: none) added to *pnHidden,
 * and min(start), max(end, or start where the end is before it) and the rows with no time after
 * 0 of the others into f->aSmall[i]. The subquery's LIMIT keeps it a co-routine, so that the
 * condition is computed once a row. An SQLite code.
 */
static int small_read(struct vt_tracefile *f, int i, const char *zFrom, const char *zWhere, int64_t *pnHidden)
{
    sqlite3_stmt *p = NULL;
    char *zSql = sqlite3_mprintf("SELECT sum(NOT ok), min(CASE WHEN ok THEN s END), max(CASE WHEN ok THEN e END),"
                                 " sum(CASE WHEN ok THEN NOT coalesce(s > 0, 0) ELSE 0 END)"
                                 " FROM (SELECT coalesce(%s, 0) AS ok, %s AS s, %s AS e FROM %s LIMIT -1)",
                                 zWhere ? zWhere : "1", aSmall[i].zStart, aSmall[i].zEnd, zFrom);
    int rc = zSql ? sqlite3_prepare_v2(f->db, zSql, -1, &p, NULL) : SQLITE_NOMEM;
    if (rc == SQLITE_OK && (rc = sqlite3_step(p)) == SQLITE_ROW) {
        /* a real number the guard let through (in range) counts as its integer part */
        *pnHidden += sqlite3_column_int64(p, 0);
        f->aSmall[i].t0 = sqlite3_column_type(p, 1) != SQLITE_NULL ? sqlite3_column_int64(p, 1) : -1;
        f->aSmall[i].t1 = sqlite3_column_type(p, 2) != SQLITE_NULL ? sqlite3_column_int64(p, 2) : -1;
        f->aSmall[i].nNoTime = sqlite3_column_int64(p, 3);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(p);
    sqlite3_free(zSql);
    return rc;
}

/* Fold the pass's share of api_call (p->b, p->nHidden) into the bounds of the view's other arms, *pS. */
static void fold_add(const struct vt_fold *p, struct vt_smallfacts *pS, int64_t *pnHidden)
{
    /* the arms' min and max through sqlite3_column_int64 (a real's integer part, which keeps the order) */
    if (p->b.t0 >= 0 && (pS->t0 < 0 || p->b.t0 < pS->t0)) pS->t0 = p->b.t0;
    if (p->b.t1 > pS->t1) pS->t1 = p->b.t1;
    pS->nNoTime += p->b.nNoTime;
    *pnHidden += p->nHidden;
}

int vt__guard_bounds(struct vt_tracefile *f, const char *zTable, int64_t *pnHidden)
{
    char *zWhere = NULL, *zFrom = NULL;
    int i = 0, rc, bFold;
    while (i < VT_SMALL_N && strcmp(aSmall[i].zTable, zTable) != 0) i++;
    if (i == VT_SMALL_N) return vt__guard_table(f->db, zTable, 1, pnHidden, NULL); /* not timed: the count alone */
    bFold = !strcmp(zTable, "api_call") && f->fold.bOn && !f->fold.bBad;
    rc = vt__guard_where(f->db, zTable, &zWhere);
    if (rc == SQLITE_OK) {
        zFrom = bFold ? sqlite3_mprintf("(%s)", f->fold.zArms) : sqlite3_mprintf("main.\"%w\"", zTable);
        if (!zFrom) rc = SQLITE_NOMEM;
    }
    if (rc == SQLITE_OK) rc = small_read(f, i, zFrom, zWhere, pnHidden);
    if (rc == SQLITE_OK && bFold) fold_add(&f->fold, &f->aSmall[i], pnHidden);
    if (rc == SQLITE_OK && bFold) f->bCallsPassed = 1;
    sqlite3_free(zWhere);
    sqlite3_free(zFrom);
    /* the guard's view, where the count found impossible rows */
    if (rc == SQLITE_OK) rc = vt__guard_table(f->db, zTable, 0, pnHidden, NULL);
    return rc;
}

/* ---- api_call's calls folded into memory_event ---- */

/* The memory_event columns the view's arm of folded calls reads. */
static const char *const azFoldCol[] = {"t", "op", "address", "bytes", "correlation", "call_dt", "call_dur", "call_sig",
                                       "call_id", NULL};
/* How the view's text ends: its arm of the calls folded into memory_event (compact.c, vt__fold_view_arms). */
static const char zMemArm[] = " FROM \"memory_event\" r JOIN api_call_sig s ON s.id = r.call_sig WHERE r.call_sig IS NOT NULL";

/*
 * p->zArms: the api_call view's text zView (f->zCallView) less its "CREATE VIEW ... AS" and its last
 * arm, memory_event's, or with bFirst its first arm alone (api_call_row's: with no api_call_sig row, the
 * arms of folded calls, joined to it, are empty); left NULL when the text is not laid out so. An SQLite
 * code.
 */
static int fold_arms(struct vt_fold *p, const char *zView, int bFirst)
{
    static const char zHead[] = "CREATE VIEW \"api_call\" AS ";
    const char *zLast = NULL, *z;
    size_t n = strlen(zView), nArm = sizeof zMemArm - 1;
    if (strncmp(zView, zHead, sizeof zHead - 1) != 0 || n < nArm || strcmp(zView + n - nArm, zMemArm) != 0) return SQLITE_OK;
    for (z = zView; (z = strstr(z, " UNION ALL SELECT ")) != NULL && (!bFirst || !zLast); z++) zLast = z;
    if (!zLast) return SQLITE_OK;
    p->zArms = sqlite3_mprintf("%.*s", (int)(zLast - zView - (sizeof zHead - 1)), zView + sizeof zHead - 1);
    return p->zArms ? SQLITE_OK : SQLITE_NOMEM;
}

/* api_call_sig's ids into p->aSig, ascending (rowid order). An SQLite code. */
static int fold_sigs(sqlite3 *db, struct vt_fold *p)
{
    sqlite3_stmt *q = NULL;
    int64_t nAlloc = 0;
    int rc = sqlite3_prepare_v2(db, "SELECT id FROM main.api_call_sig", -1, &q, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        if (p->nSig == nAlloc) {
            int64_t *a = realloc(p->aSig, sizeof *a * (size_t)(nAlloc = nAlloc ? 2 * nAlloc : 256));
            if (!a) {
                rc = SQLITE_NOMEM;
                break;
            }
            p->aSig = a;
        }
        p->aSig[p->nSig++] = sqlite3_column_int64(q, 0);
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int vt__guard_fold_begin(struct vt_tracefile *f)
{
    struct vt_fold *p = &f->fold;
    struct vt_columns cols;
    int rc, bCols = 1;
    vt__guard_fold_end(p);
    if (!f->zCallView || !f->bStored || !vt__read_has(f, "api_call_sig")) return SQLITE_OK;
    rc = vt__columns_read(f->db, "memory_event", &cols);
    for (int i = 0; rc == SQLITE_OK && azFoldCol[i]; i++) bCols &= vt__columns_has(&cols, azFoldCol[i]);
    vt__columns_free(&cols);
    if (rc == SQLITE_OK && bCols) rc = fold_sigs(f->db, p);
    if (rc == SQLITE_OK && bCols) rc = fold_arms(p, f->zCallView, p->nSig == 0);
    if (rc == SQLITE_OK && p->zArms) {
        p->bOn = 1;
        p->base = f->timeBase;
        p->b.t0 = p->b.t1 = -1;
    } else {
        vt__guard_fold_end(p);
    }
    return rc;
}

/* Whether api_call_sig has id (the view's join keeps the call). */
static int fold_sig(struct vt_fold *p, int64_t id)
{
    int64_t lo = 0, hi = p->nSig;
    if (p->iLast < p->nSig && p->aSig[p->iLast] == id) return 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (p->aSig[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo == p->nSig || p->aSig[lo] != id) return 0;
    p->iLast = lo;
    return 1;
}

/*
 * The view's arm gives a row for every memory_event row whose call_sig is an api_call_sig id: t = r.t +
 * r.call_dt, dur = r.call_dur, start and end from them as for every compacted table, bytes = r.bytes
 * where r.op = 1 (else NULL). The guard takes it when start and end are possible times and bytes a
 * possible size (rowcheck.h, as for a stored row); the bounds take the calls it lets through. A value
 * that SQL would convert or compare in its own way (a real number, text, a sum beyond int64) leaves the
 * whole view to SQL (p->bBad).
 */
void vt__guard_fold_row(struct vt_fold *p, sqlite3_value *pT, sqlite3_value *pDt, sqlite3_value *pDur,
                        sqlite3_value *pSig, sqlite3_value *pOp, sqlite3_value *pBytes)
{
    int tyT, tyDt, tyOp, sT = VT_TIME_UNKNOWN, sD, ok, aKnown[2];
    int64_t t = 0, dur = 0, aTime[2] = {0, 0}, e;
    int tySig = sqlite3_value_type(pSig);
    if (tySig == SQLITE_NULL || p->bBad) return; /* no call folded into this row */
    tyT = sqlite3_value_type(pT);
    tyDt = sqlite3_value_type(pDt);
    tyOp = sqlite3_value_type(pOp);
    if (tySig != SQLITE_INTEGER || (tyT != SQLITE_INTEGER && tyT != SQLITE_NULL) ||
        (tyDt != SQLITE_INTEGER && tyDt != SQLITE_NULL) || (tyOp != SQLITE_INTEGER && tyOp != SQLITE_NULL)) {
        p->bBad = 1;
        return;
    }
    if (!fold_sig(p, sqlite3_value_int64(pSig))) return;
    if (tyT == SQLITE_INTEGER && tyDt == SQLITE_INTEGER) {
        if (__builtin_add_overflow(sqlite3_value_int64(pT), sqlite3_value_int64(pDt), &t)) {
            p->bBad = 1;
            return;
        }
        sT = t < -VT__LIM62 - 1 || t > VT__LIM62 ? VT_TIME_BAD : VT_TIME_KNOWN;
    }
    sD = vt__stored_part(pDur, &dur);
    ok = vt__part_times(sT, t, sD, dur, p->base, aTime, aKnown);
    if (ok > 0 && tyOp == SQLITE_INTEGER && sqlite3_value_int64(pOp) == 1) ok = vt__dom_value(pBytes, VT_DOM_SIZEN);
    if (ok < 0) {
        p->bBad = 1;
        return;
    }
    if (!ok) {
        p->nHidden++;
        return;
    }
    if (!aKnown[0] || aTime[0] <= 0) p->b.nNoTime++;
    if (!aKnown[0]) return;
    if (p->b.t0 < 0 || aTime[0] < p->b.t0) p->b.t0 = aTime[0];
    e = aKnown[1] && aTime[1] >= aTime[0] ? aTime[1] : aTime[0];
    if (e > p->b.t1) p->b.t1 = e;
}

void vt__guard_fold_end(struct vt_fold *p)
{
    free(p->aSig);
    sqlite3_free(p->zArms);
    memset(p, 0, sizeof *p);
}
