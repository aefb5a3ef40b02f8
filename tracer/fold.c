/* Folded calls (schema 6): the api_call view's folded part, the triggers that keep folded calls, and folding stored calls. */
#include "vramtrace/compact.h"

#include "vramtrace/schema.h"
#include "vramtrace/sqlints.h"

#include <stdio.h>
#include <string.h>

#define RANGE_LO "-4611686018427387904"
#define RANGE_HI "4611686018427387903"

/*
 * The activity tables a call folds into (schema.h, VT_CALL_FOLD): the expressions, over the
 * activity row r (its block b for a compacted table), of the call's t and of the api_call
 * columns the row holds; every other column comes from the call's signature s.
 */
static const struct fold_table {
    const char *zRow;    /* the stored table */
    const char *zBlock;  /* its anchors, or NULL (memory_event stores t and correlation) */
    const char *zT;      /* the activity row's t */
    const char *zCorr;   /* its correlation */
    const char *zBytes, *zPtr, *zSrc, *zDst; /* what the call stored */
    const char *zMatch;  /* the call a (api_call view) holds exactly these values (over the row k, its view) */
} aFold[] = {
    {"memcpy_row", "memcpy_block", "(CASE WHEN typeof(r.dt) = 'integer' THEN b.t + r.dt ELSE r.dt END)",
     "(CASE WHEN typeof(r.dc) = 'integer' THEN b.correlation + r.dc ELSE r.dc END)", "r.bytes", "NULL", "r.src", "r.dst",
     "a.bytes IS k.bytes AND a.ptr IS NULL AND a.src IS k.src AND a.dst IS k.dst"},
    {"memset_row", "memset_block", "(CASE WHEN typeof(r.dt) = 'integer' THEN b.t + r.dt ELSE r.dt END)",
     "(CASE WHEN typeof(r.dc) = 'integer' THEN b.correlation + r.dc ELSE r.dc END)", "r.bytes", "NULL", "NULL", "r.dst",
     "a.bytes IS k.bytes AND a.ptr IS NULL AND a.src IS NULL AND a.dst IS k.dst"},
    {"memory_event", NULL, "r.t", "r.correlation", "(CASE WHEN r.op = 1 THEN r.bytes END)", "r.address", "NULL", "NULL",
     "a.src IS NULL AND a.dst IS NULL AND a.ptr IS k.address AND"
     " ((k.op = 1 AND a.bytes IS k.bytes) OR (k.op = 2 AND a.bytes IS NULL))"},
};
#define NFOLD ((int)(sizeof aFold / sizeof aFold[0]))

/*
 * Append the columns of a folded call as the api_call view has them (id, t, dur[, start, end], then
 * VT_COMPACT_TABLES' api_call columns), with zT the activity row's t, zR the row holding call_*,
 * and the other expressions from fold table f; zBase NULL leaves out start and end.
 */
static void call_columns(sqlite3_str *s, const struct fold_table *f, const char *zR, const char *zT, const char *zCorr,
                         const char *zBase)
{
    char zCt[256];
    const char *az[4] = {f->zBytes, f->zPtr, f->zSrc, f->zDst};
    snprintf(zCt, sizeof zCt, "(%s + %s.call_dt)", zT, zR);
    sqlite3_str_appendf(s, "%s.call_id AS id, %s AS t, %s.call_dur AS dur", zR, zCt, zR);
    if (zBase)
        sqlite3_str_appendf(s,
                            ", CASE WHEN %s BETWEEN " RANGE_LO " AND " RANGE_HI " THEN %s + %s END AS start,"
                            " CASE WHEN %s BETWEEN " RANGE_LO " AND " RANGE_HI " AND %s.call_dur BETWEEN " RANGE_LO
                            " AND " RANGE_HI " THEN %s + %s.call_dur + %s END AS \"end\"",
                            zCt, zCt, zBase, zCt, zR, zCt, zR, zBase);
    sqlite3_str_appendf(s, ", s.api AS api, %s AS correlation, s.thread AS thread, s.device AS device, s.status AS status", zCorr);
    sqlite3_str_appendf(s, ", %s AS bytes, %s AS ptr, %s AS src, %s AS dst", az[0], az[1], az[2], az[3]);
    sqlite3_str_appendall(s, ", s.stream AS stream, s.stack_id AS stack_id");
}

void vt__fold_view_arms(sqlite3_str *s, const char *zBase)
{
    for (int i = 0; i < NFOLD; i++) {
        const struct fold_table *f = &aFold[i];
        sqlite3_str_appendall(s, " UNION ALL SELECT ");
        call_columns(s, f, "r", f->zT, f->zCorr, zBase);
        sqlite3_str_appendf(s, " FROM \"%w\" r", f->zRow);
        if (f->zBlock) sqlite3_str_appendf(s, " LEFT JOIN \"%w\" b ON b.id = r.id >> %d", f->zBlock, VT_BLOCK_SHIFT);
        sqlite3_str_appendall(s, " JOIN api_call_sig s ON s.id = r.call_sig WHERE r.call_sig IS NOT NULL");
    }
}

/* The api_call columns a trigger inserts through the view: id, t, dur and the view's columns. */
#define CALL_INSERT "INSERT INTO api_call(id, t, dur, api, correlation, thread, device, status, bytes, ptr, src, dst, stream, stack_id) SELECT "

void vt__fold_unfold_sql(sqlite3_str *s, int iTab)
{
    const struct fold_table *f = &aFold[iTab == VT_CT_memcpy ? 0 : 1];
    char zRow[64];
    /* the view's row OLD: its t, correlation and own columns are the call's (OLD.x for r.x) */
    snprintf(zRow, sizeof zRow, "\"%s\"", f->zRow);
    sqlite3_str_appendall(s, " " CALL_INSERT);
    {
        struct fold_table g = *f;
        g.zBytes = "OLD.bytes";
        g.zDst = "OLD.dst";
        if (iTab == VT_CT_memcpy) g.zSrc = "OLD.src";
        call_columns(s, &g, "c", "OLD.t", "OLD.correlation", NULL);
    }
    sqlite3_str_appendf(s, " FROM %s c JOIN api_call_sig s ON s.id = c.call_sig WHERE c.id = OLD.id;\n", zRow);
}

void vt__fold_clear_sql(sqlite3_str *s, const char *zWhere)
{
    for (int i = 0; i < NFOLD; i++)
        sqlite3_str_appendf(s, " UPDATE \"%w\" SET call_dt = NULL, call_dur = NULL, call_sig = NULL, call_id = NULL WHERE %s;\n",
                            aFold[i].zRow, zWhere);
}

int vt__fold_create(sqlite3 *db, char **pzErr)
{
    const struct fold_table *f = &aFold[NFOLD - 1]; /* memory_event, a table: its own triggers */
    sqlite3_str *s = sqlite3_str_new(db);
    char *zSql;
    int rc;
    struct fold_table g = *f;
    g.zBytes = "(CASE WHEN OLD.op = 1 THEN OLD.bytes END)";
    g.zPtr = "OLD.address";
    /* a row deleted, or changed where the call's values are, first stores its call as a row of its own */
    sqlite3_str_appendall(s, "CREATE TRIGGER memory_event_call_delete BEFORE DELETE ON memory_event"
                             " WHEN OLD.call_sig IS NOT NULL BEGIN\n " CALL_INSERT);
    call_columns(s, &g, "OLD", "OLD.t", "OLD.correlation", NULL);
    sqlite3_str_appendall(s, " FROM api_call_sig s WHERE s.id = OLD.call_sig;\nEND;\n"
                             "CREATE TRIGGER memory_event_call_update AFTER UPDATE OF t, op, address, bytes, correlation"
                             " ON memory_event WHEN OLD.call_sig IS NOT NULL AND NEW.call_sig IS OLD.call_sig BEGIN\n " CALL_INSERT);
    call_columns(s, &g, "OLD", "OLD.t", "OLD.correlation", NULL);
    sqlite3_str_appendall(s, " FROM api_call_sig s WHERE s.id = OLD.call_sig;\n"
                             " UPDATE memory_event SET call_dt = NULL, call_dur = NULL, call_sig = NULL, call_id = NULL"
                             " WHERE id = NEW.id;\nEND;\n");
    zSql = sqlite3_str_finish(s);
    rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, pzErr) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    return rc;
}

int vt__fold_columns_add(sqlite3 *db, char **pzErr)
{
    int rc = SQLITE_OK;
#define FOLD_ADD(c, k) #c,
    static const char *const azCol[] = {VT_CALL_FOLD(FOLD_ADD)};
#undef FOLD_ADD
    for (int i = 0; rc == SQLITE_OK && i < NFOLD; i++)
        for (int c = 0; rc == SQLITE_OK && c < VT_CALL_FOLD_NCOL; c++) {
            /* a table the step from version 4 made has them (built from schema.h's lists) */
            char *zSql = sqlite3_mprintf("SELECT count(*) FROM pragma_table_info('%q') WHERE name = '%q'", aFold[i].zRow, azCol[c]);
            int64_t n = 0;
            rc = zSql ? vt__sql_ints(db, zSql, &n, 1, 0) : SQLITE_NOMEM;
            sqlite3_free(zSql);
            if (rc != SQLITE_OK || n) continue;
            zSql = sqlite3_mprintf("ALTER TABLE \"%w\" ADD COLUMN %s INTEGER", aFold[i].zRow, azCol[c]);
            rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, pzErr) : SQLITE_NOMEM;
            sqlite3_free(zSql);
        }
    return rc;
}

int vt__fold_mark(sqlite3 *db, int64_t next)
{
    char z[32];
    snprintf(z, sizeof z, "%lld", (long long)next);
    return vt__meta_set(db, VT_FOLD_NEXT_KEY, z);
}

int vt__fold_stored(sqlite3 *db, char **pzErr)
{
    static const char *const azView[] = {"memcpy", "memset", "memory_event"};
    int rc = sqlite3_exec(db,
                          /* the calls stored as rows whose correlation no other stored call has, with their signature */
                          "CREATE TEMP TABLE vt_fold_call AS SELECT a.*, r.sig AS sig FROM api_call a"
                          " JOIN api_call_row r ON r.id = a.id WHERE a.correlation IN"
                          " (SELECT correlation FROM api_call WHERE correlation IS NOT NULL GROUP BY correlation HAVING count(*) = 1)"
                          " AND (typeof(a.t) = 'integer' AND a.t BETWEEN " RANGE_LO " AND " RANGE_HI " OR a.t IS NULL)"
                          " AND (typeof(a.dur) = 'integer' OR a.dur IS NULL);"
                          "CREATE INDEX temp.vt_fold_call_c ON vt_fold_call(correlation);",
                          NULL, NULL, pzErr);
    for (int i = 0; rc == SQLITE_OK && i < NFOLD; i++) {
        /* a row of the activity table whose correlation no other row of it has: where the call holds
         * exactly its values, the call is folded into it and its own row deleted */
        char *zSql = sqlite3_mprintf(
            "CREATE TEMP TABLE vt_fold AS SELECT k.id AS kid, a.id AS aid, a.t - k.t AS dt, a.dur AS dur, a.sig AS sig"
            " FROM \"%w\" k JOIN vt_fold_call a ON a.correlation = k.correlation"
            " WHERE typeof(k.t) = 'integer' AND k.t BETWEEN " RANGE_LO " AND " RANGE_HI " AND k.correlation IN"
            " (SELECT correlation FROM \"%w\" WHERE correlation IS NOT NULL GROUP BY correlation HAVING count(*) = 1)"
            " AND %s;"
            "UPDATE \"%w\" SET call_dt = f.dt, call_dur = f.dur, call_sig = f.sig, call_id = f.aid FROM vt_fold f WHERE id = f.kid;"
            "DELETE FROM api_call_row WHERE id IN (SELECT aid FROM vt_fold);"
            "DELETE FROM vt_fold_call WHERE id IN (SELECT aid FROM vt_fold);"
            "DROP TABLE vt_fold;",
            azView[i], azView[i], aFold[i].zMatch, aFold[i].zRow);
        rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, pzErr) : SQLITE_NOMEM;
        sqlite3_free(zSql);
    }
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "DROP TABLE vt_fold_call", NULL, NULL, pzErr);
    if (rc == SQLITE_OK) {
        int64_t next = 1;
        sqlite3_stmt *p = NULL;
        rc = sqlite3_prepare_v2(db, "SELECT coalesce(max(id), 0) + 1 FROM api_call", -1, &p, NULL);
        if (rc == SQLITE_OK && sqlite3_step(p) == SQLITE_ROW) next = sqlite3_column_int64(p, 0);
        sqlite3_finalize(p);
        if (rc == SQLITE_OK) rc = vt__fold_mark(db, next);
    }
    return rc;
}
