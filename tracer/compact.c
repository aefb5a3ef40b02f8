/* Compact rows (schema 5) and folded calls (schema 6): the compacted tables' views and triggers, the compactor that splits events into their parts, folding stored calls. */
#include "vramtrace/compact.h"

#include "vramtrace/schema.h"
#include "vramtrace/sqlints.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME(c, k) #c,
#define CONS(c, k) k,
#define SPEC_ARRAYS(name, SIG, OWN, zCols)                                    \
    static const char *const aSig_##name[] = {SIG(NAME) NULL};              \
    static const char *const aSigK_##name[] = {SIG(CONS) NULL};             \
    static const char *const aOwn_##name[] = {OWN(NAME) NULL};              \
    static const char *const aOwnK_##name[] = {OWN(CONS) NULL};
VT_COMPACT_TABLES(SPEC_ARRAYS)
#define SPEC_ENTRY(name, SIG, OWN, zCols)                                                                 \
    [VT_CT_##name] = {#name, aSig_##name, aSigK_##name, VT__NCOL(SIG), aOwn_##name, aOwnK_##name, VT__NCOL(OWN), \
                      zCols, VT__SIG_INSERT(name, SIG), VT__ROW_INSERT(name, OWN), VT__BLOCK_INSERT(name),          \
                      VT__COMPACT_DDL(name, SIG, OWN, zCols)},
const struct vt_compact_spec vt__aCompact[VT_CT__COUNT] = {VT_COMPACT_TABLES(SPEC_ENTRY)};
#undef SPEC_ENTRY
#undef SPEC_ARRAYS
#undef NAME
#undef CONS

_Static_assert(VT__NCOL(VT_KERNEL_SIG) <= VT_COMPACT_MAXSIG, "VT_COMPACT_MAXSIG");
_Static_assert(VT__NCOL(VT_API_CALL_OWN) <= VT_COMPACT_MAXOWN && VT__NCOL(VT_MEMCPY_OWN) <= VT_COMPACT_MAXOWN &&
                   VT__NCOL(VT_MEMSET_OWN) <= VT_COMPACT_MAXOWN, "VT_COMPACT_MAXOWN");

/* The index of zCol in the NULL-terminated list az, or -1. */
static int list_find(const char *const *az, const char *zCol, size_t n)
{
    for (int i = 0; az[i]; i++)
        if (strlen(az[i]) == n && !memcmp(az[i], zCol, n)) return i;
    return -1;
}

/* The value a trigger stores for column zCol of constraint zCons: NEW.col, or its default when NULL. */
static void new_value(sqlite3_str *s, const char *zCol, const char *zCons)
{
    const char *zDef = strstr(zCons, "DEFAULT ");
    if (zDef) sqlite3_str_appendf(s, "coalesce(NEW.\"%w\", %s)", zCol, zDef + 8);
    else sqlite3_str_appendf(s, "NEW.\"%w\"", zCol);
}

/* Append "c1 IS v1 AND c2 IS v2 ..." matching a signature row to the NEW row's signature. */
static void sig_match(sqlite3_str *s, const struct vt_compact_spec *p)
{
    for (int i = 0; i < p->nSig; i++) {
        sqlite3_str_appendf(s, "%s\"%w\" IS ", i ? " AND " : "", p->azSig[i]);
        new_value(s, p->azSig[i], p->azSigCons[i]);
    }
}

#define RANGE_LO "-4611686018427387904"
#define RANGE_HI "4611686018427387903"

/* The next name of the column list *pz ("a, b, c"): its start, its length in *pn, *pz moved past it; NULL at the end. */
static const char *next_col(const char **pz, size_t *pn)
{
    const char *z = *pz + strspn(*pz, ", ");
    *pn = strcspn(z, ", ");
    *pz = z + *pn;
    return *pn ? z : NULL;
}

/* Whether column zCol (n bytes) is among the view's columns zCols. */
static int in_cols(const char *zCols, const char *zCol, size_t n)
{
    size_t k;
    for (const char *z; (z = next_col(&zCols, &k)) != NULL;)
        if (k == n && !memcmp(z, zCol, n)) return 1;
    return 0;
}

char *vt__compact_view_sql(int iTab, int64_t base)
{
    return vt__compact_view_sql_version(iTab, base, VT_SCHEMA_VERSION);
}

char *vt__compact_view_sql_version(int iTab, int64_t base, int version)
{
    const struct vt_compact_spec *p = &vt__aCompact[iTab];
    sqlite3_str *s = sqlite3_str_new(NULL);
    char zBase[32];
    const char *zList = p->zCols, *z;
    size_t n;
    if (base < 0) snprintf(zBase, sizeof zBase, "(%lld)", (long long)base);
    else snprintf(zBase, sizeof zBase, "%lld", (long long)base);
    /* t: the anchor plus the integer difference; a value that is not an integer (only a row written through
     * the view by hand holds one) is kept as it was written, as version 4 kept it */
#define T_EXPR "(CASE WHEN typeof(r.dt) = 'integer' THEN b.t + r.dt ELSE r.dt END)"
    sqlite3_str_appendf(s,
                        "CREATE VIEW \"%w\" AS SELECT r.id AS id, " T_EXPR " AS t, r.dur AS dur,"
                        " CASE WHEN " T_EXPR " BETWEEN " RANGE_LO " AND " RANGE_HI " THEN " T_EXPR " + %s END AS start,"
                        " CASE WHEN " T_EXPR " BETWEEN " RANGE_LO " AND " RANGE_HI " AND r.dur BETWEEN " RANGE_LO
                        " AND " RANGE_HI " THEN " T_EXPR " + r.dur + %s END AS \"end\"",
                        p->zName, zBase, zBase);
#undef T_EXPR
    while ((z = next_col(&zList, &n)) != NULL) {
        int k;
        if (n == 11 && !memcmp(z, "correlation", 11))
            sqlite3_str_appendall(s, ", CASE WHEN typeof(r.dc) = 'integer' THEN b.correlation + r.dc ELSE r.dc END"
                                     " AS correlation");
        else if ((k = list_find(p->azSig, z, n)) >= 0) sqlite3_str_appendf(s, ", s.\"%w\" AS \"%w\"", p->azSig[k], p->azSig[k]);
        else if ((k = list_find(p->azOwn, z, n)) >= 0) sqlite3_str_appendf(s, ", r.\"%w\" AS \"%w\"", p->azOwn[k], p->azOwn[k]);
    }
    sqlite3_str_appendf(s,
                        " FROM \"%w_row\" r LEFT JOIN \"%w_block\" b ON b.id = r.id >> %d"
                        " LEFT JOIN \"%w_sig\" s ON s.id = r.sig",
                        p->zName, p->zName, VT_BLOCK_SHIFT, p->zName);
    if (iTab == VT_CT_api_call && version >= 6) vt__fold_view_arms(s, zBase);
    return sqlite3_str_finish(s);
}

/*
 * The id a trigger gives a row of table zName inserted without one: after the largest stored, as a
 * rowid (api_call with folded calls: also at or after meta api_call_next_id).
 */
static void next_id(sqlite3_str *s, const char *zName, int bFold)
{
    if (bFold) /* the ids given to folded calls end before meta api_call_next_id (without a scan of their tables) */
        sqlite3_str_appendf(s,
                            "coalesce(NEW.id, max((SELECT coalesce(max(id), 0) + 1 FROM \"%w_row\"),"
                            " coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = '" VT_FOLD_NEXT_KEY "'), 1)))",
                            zName);
    else sqlite3_str_appendf(s, "coalesce(NEW.id, (SELECT coalesce(max(id), 0) + 1 FROM \"%w_row\"))", zName);
}

/*
 * What the UPDATE and DELETE triggers of compacted table iTab do first with folded calls (schema 6):
 * a copy's or set's call is stored as a row of its own; a call's folded form is cleared (the row
 * written after it, if any, is its own).
 */
static void fold_first(sqlite3_str *s, int iTab, int version)
{
    if (version < 6) return;
    if (iTab == VT_CT_memcpy || iTab == VT_CT_memset) vt__fold_unfold_sql(s, iTab);
    else if (iTab == VT_CT_api_call) vt__fold_clear_sql(s, "call_id = OLD.id");
}

/* The INSTEAD OF triggers of compacted table iTab: INSERT, UPDATE and DELETE through its view. */
static char *trigger_sql(int iTab, int version)
{
    const struct vt_compact_spec *p = &vt__aCompact[iTab];
    sqlite3_str *s = sqlite3_str_new(NULL);
    const char *zN = p->zName;
    int bFold = iTab == VT_CT_api_call && version >= 6;
    size_t n;
    /* INSERT: the signature (unless stored), the block (unless stored), the row */
    sqlite3_str_appendf(s,
                        "CREATE TRIGGER \"%w_insert\" INSTEAD OF INSERT ON \"%w\" BEGIN\n"
                        " SELECT RAISE(ABORT, 'start and end of %q are computed: write t and dur')"
                        " WHERE NEW.start IS NOT NULL OR NEW.\"end\" IS NOT NULL;\n"
                        " INSERT INTO \"%w_sig\"(",
                        zN, zN, zN, zN);
    for (int i = 0; i < p->nSig; i++) sqlite3_str_appendf(s, "%s\"%w\"", i ? ", " : "", p->azSig[i]);
    sqlite3_str_appendall(s, ") SELECT ");
    for (int i = 0; i < p->nSig; i++) {
        if (i) sqlite3_str_appendall(s, ", ");
        new_value(s, p->azSig[i], p->azSigCons[i]);
    }
    sqlite3_str_appendf(s, " WHERE NOT EXISTS (SELECT 1 FROM \"%w_sig\" WHERE ", zN);
    sig_match(s, p);
    sqlite3_str_appendf(s, ");\n INSERT OR IGNORE INTO \"%w_block\"(id, t, correlation) VALUES(", zN);
    next_id(s, zN, bFold);
    sqlite3_str_appendf(s,
                        " >> %d, CASE WHEN typeof(NEW.t) = 'integer' THEN NEW.t ELSE 0 END,"
                        " CASE WHEN typeof(NEW.correlation) = 'integer' THEN NEW.correlation ELSE 0 END);\n"
                        " INSERT INTO \"%w_row\"(id, dt, dur, sig, dc",
                        VT_BLOCK_SHIFT, zN);
    /* own columns the view does not show (a folded call's) are NULL: a row inserted holds no call */
    for (int i = 0; i < p->nOwn; i++)
        if (in_cols(p->zCols, p->azOwn[i], strlen(p->azOwn[i]))) sqlite3_str_appendf(s, ", \"%w\"", p->azOwn[i]);
    sqlite3_str_appendall(s, ") VALUES(");
    next_id(s, zN, bFold);
    /* an integer is stored as its difference from the block's anchor, anything else as it is (see the view) */
    sqlite3_str_appendf(s, ", CASE WHEN typeof(NEW.t) = 'integer' THEN NEW.t - (SELECT t FROM \"%w_block\" WHERE id = ", zN);
    next_id(s, zN, bFold);
    sqlite3_str_appendf(s, " >> %d) ELSE NEW.t END, NEW.dur, (SELECT id FROM \"%w_sig\" WHERE ", VT_BLOCK_SHIFT, zN);
    sig_match(s, p);
    sqlite3_str_appendf(s, " ORDER BY id LIMIT 1), CASE WHEN typeof(NEW.correlation) = 'integer' THEN"
                           " NEW.correlation - (SELECT correlation FROM \"%w_block\" WHERE id = ", zN);
    next_id(s, zN, bFold);
    sqlite3_str_appendf(s, " >> %d) ELSE NEW.correlation END", VT_BLOCK_SHIFT);
    for (int i = 0; i < p->nOwn; i++) {
        if (!in_cols(p->zCols, p->azOwn[i], strlen(p->azOwn[i]))) continue;
        sqlite3_str_appendall(s, ", ");
        new_value(s, p->azOwn[i], p->azOwnCons[i]);
    }
    sqlite3_str_appendall(s, ");\nEND;\n");
    /* UPDATE: the row again, as an insert with its id (a changed signature or block is found or added) */
    sqlite3_str_appendf(s,
                        "CREATE TRIGGER \"%w_update\" INSTEAD OF UPDATE ON \"%w\" BEGIN\n"
                        " SELECT RAISE(ABORT, 'start and end of %q are computed: write t and dur')"
                        " WHERE NEW.start IS NOT OLD.start OR NEW.\"end\" IS NOT OLD.\"end\";\n",
                        zN, zN, zN);
    fold_first(s, iTab, version);
    sqlite3_str_appendf(s,
                        " DELETE FROM \"%w_row\" WHERE id = OLD.id;\n"
                        " INSERT INTO \"%w\"(id, t, dur, %s) VALUES(NEW.id, NEW.t, NEW.dur",
                        zN, zN, p->zCols);
    for (const char *zList = p->zCols, *z; (z = next_col(&zList, &n)) != NULL;)
        sqlite3_str_appendf(s, ", NEW.\"%.*w\"", (int)n, z);
    sqlite3_str_appendf(s,
                        ");\nEND;\n"
                        "CREATE TRIGGER \"%w_delete\" INSTEAD OF DELETE ON \"%w\" BEGIN\n",
                        zN, zN);
    fold_first(s, iTab, version);
    sqlite3_str_appendf(s, " DELETE FROM \"%w_row\" WHERE id = OLD.id;\nEND;\n", zN);
    return sqlite3_str_finish(s);
}

int vt__compact_create_one(sqlite3 *db, int iTab, int64_t base, int version, char **pzErr)
{
    char *zView = vt__compact_view_sql_version(iTab, base, version), *zTrig = trigger_sql(iTab, version);
    int rc = zView && zTrig ? sqlite3_exec(db, zView, NULL, NULL, pzErr) : SQLITE_NOMEM;
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, zTrig, NULL, NULL, pzErr);
    sqlite3_free(zView);
    sqlite3_free(zTrig);
    return rc;
}

int vt__compact_create(sqlite3 *db, int64_t base, char **pzErr)
{
    int rc = SQLITE_OK;
    for (int i = 0; rc == SQLITE_OK && i < VT_CT__COUNT; i++) rc = vt__compact_create_one(db, i, base, VT_SCHEMA_VERSION, pzErr);
    if (rc == SQLITE_OK) rc = vt__fold_create(db, pzErr);
    return rc;
}

int vt__compact_map(int iTab, const char *const *azCol, int nCol, struct vt_compact_map *pMap, const char **pzWhat)
{
    const struct vt_compact_spec *p = &vt__aCompact[iTab];
    memset(pMap, -1, sizeof *pMap); /* columns not named are NULL */
    pMap->iTab = iTab;
    if (nCol > 127) {
        *pzWhat = "too many columns";
        return -1;
    }
    for (int c = 0; c < nCol; c++) {
        const char *z = azCol[c];
        size_t n = strlen(z);
        int k;
        if (!strcmp(z, "t")) pMap->iT = c;
        else if (!strcmp(z, "dur")) pMap->iDur = c;
        else if (!strcmp(z, "correlation")) pMap->iCorr = c;
        else if ((k = list_find(p->azSig, z, n)) >= 0) pMap->aSig[k] = (signed char)c;
        else if ((k = list_find(p->azOwn, z, n)) >= 0) pMap->aOwn[k] = (signed char)c;
        else {
            *pzWhat = z;
            return -1;
        }
    }
    return 0;
}

/*
 * Continue after what db stores: event and signature ids after the largest stored, the next event
 * in a block of its own (the stored blocks' anchors are not known here), no signature cached.
 * SQLite code.
 */
static int resume(struct vt_compact *c, sqlite3 *db)
{
    int rc = SQLITE_OK;
    vt__compact_forget(c);
    for (int i = 0; rc == SQLITE_OK && i < VT_CT__COUNT; i++) {
        struct vt_compact_seq *q = &c->aSeq[i];
        char *zSql = sqlite3_mprintf("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '%q_row'",
                                     vt__aCompact[i].zName);
        int64_t n = 0;
        rc = vt__sql_ints(db, zSql, &n, 1, 0);
        sqlite3_free(zSql);
        if (rc != SQLITE_OK || n == 0) continue; /* a table not (yet) compacted: nothing stored */
        zSql = sqlite3_mprintf("SELECT max(id) FROM \"%w_row\"", vt__aCompact[i].zName);
        rc = vt__sql_ints(db, zSql, &n, 1, 0);
        sqlite3_free(zSql);
        if (rc == SQLITE_OK && n >= q->nextId) q->nextId = ((n >> VT_BLOCK_SHIFT) + 1) << VT_BLOCK_SHIFT;
        if (rc == SQLITE_OK) { /* and after every stored block (rows deleted leave theirs) */
            zSql = sqlite3_mprintf("SELECT coalesce(max(id), -1) FROM \"%w_block\"", vt__aCompact[i].zName);
            rc = vt__sql_ints(db, zSql, &n, 1, 0);
            sqlite3_free(zSql);
            if (rc == SQLITE_OK && n >= q->nextId >> VT_BLOCK_SHIFT) q->nextId = (n + 1) << VT_BLOCK_SHIFT;
        }
        if (rc == SQLITE_OK && i == VT_CT_api_call) { /* and after every folded call's (schema 6: the view shows them) */
            rc = vt__sql_ints(db, "SELECT coalesce((SELECT max(id) FROM api_call), 0)", &n, 1, 0);
            if (rc == SQLITE_OK && n >= q->nextId) q->nextId = ((n >> VT_BLOCK_SHIFT) + 1) << VT_BLOCK_SHIFT;
        }
        if (rc == SQLITE_OK) {
            zSql = sqlite3_mprintf("SELECT max(id) FROM \"%w_sig\"", vt__aCompact[i].zName);
            rc = vt__sql_ints(db, zSql, &n, 1, 0);
            sqlite3_free(zSql);
            if (n + 1 > q->nextSig) q->nextSig = n + 1;
        }
    }
    return rc;
}

int vt__compact_init(struct vt_compact *c, size_t nSigSlots, sqlite3 *db)
{
    memset(c, 0, sizeof *c);
    if (!nSigSlots) nSigSlots = 4096;
    if (nSigSlots & (nSigSlots - 1)) return -EINVAL;
    for (int i = 0; i < VT_CT__COUNT; i++) {
        struct vt_compact_sigmap *m = &c->aMap[i];
        size_t nSig = (size_t)(vt__aCompact[i].nSig ? vt__aCompact[i].nSig : 1);
        c->aSeq[i].nextId = c->aSeq[i].nextSig = 1;
        c->aSeq[i].block = -1;
        c->aSeq[i].lastId = 0; /* an empty table: the first id, 1, follows it (vt__compact_init with db: -1) */
        m->nSlot = nSigSlots;
        m->aHash = calloc(nSigSlots, sizeof *m->aHash);
        m->aId = malloc(nSigSlots * sizeof *m->aId);
        m->aKey = malloc(nSigSlots * nSig * sizeof *m->aKey);
        m->aNull = malloc(nSigSlots * sizeof *m->aNull);
        if (!m->aHash || !m->aId || !m->aKey || !m->aNull) {
            vt__compact_free(c);
            return -ENOMEM;
        }
    }
    if (db && resume(c, db) != SQLITE_OK) {
        vt__compact_free(c);
        return -1;
    }
    return 0;
}

void vt__compact_free(struct vt_compact *c)
{
    for (int i = 0; i < VT_CT__COUNT; i++) {
        free(c->aMap[i].aHash);
        free(c->aMap[i].aId);
        free(c->aMap[i].aKey);
        free(c->aMap[i].aNull);
    }
    memset(c, 0, sizeof *c);
}

void vt__compact_forget(struct vt_compact *c)
{
    for (int i = 0; i < VT_CT__COUNT; i++) {
        memset(c->aMap[i].aHash, 0, c->aMap[i].nSlot * sizeof *c->aMap[i].aHash);
        c->aMap[i].nUsed = 0;
    }
    /* the current block's row may be lost: later events go to the next block, which they store */
    for (int i = 0; i < VT_CT__COUNT; i++) {
        struct vt_compact_seq *q = &c->aSeq[i];
        /* after the ids given (folded calls take ids without rows: they may pass the block) */
        if (q->block >= 0) {
            int64_t next = (q->block + 1) << VT_BLOCK_SHIFT;
            if (q->nextId > next) next = (((q->nextId - 1) >> VT_BLOCK_SHIFT) + 1) << VT_BLOCK_SHIFT;
            q->nextId = next;
        }
        q->block = q->lastId = -1;
    }
}

/* The signature id of (aKey, mNull), whose hash is h (gather's), in table iTab: from the cache, or a new one (*pbNew set). */
static int64_t sig_id(struct vt_compact *c, int iTab, const int64_t *aKey, uint32_t mNull, uint64_t h, int *pbNew)
{
    struct vt_compact_sigmap *m = &c->aMap[iTab];
    int nSig = vt__aCompact[iTab].nSig;
    size_t k;
    for (k = (size_t)h & (m->nSlot - 1); m->aHash[k]; k = (k + 1) & (m->nSlot - 1))
        if (m->aHash[k] == h && m->aNull[k] == mNull && !memcmp(&m->aKey[k * (size_t)nSig], aKey, (size_t)nSig * sizeof *aKey))
            return m->aId[k];
    if ((m->nUsed + 1) * 2 > m->nSlot) { /* full: start again (signatures met later are stored again) */
        memset(m->aHash, 0, m->nSlot * sizeof *m->aHash);
        m->nUsed = 0;
        c->nSigReset++;
        for (k = (size_t)h & (m->nSlot - 1); m->aHash[k]; k = (k + 1) & (m->nSlot - 1)) {}
    }
    m->aHash[k] = h;
    m->aNull[k] = mNull;
    m->aId[k] = c->aSeq[iTab].nextSig++;
    memcpy(&m->aKey[k * (size_t)nSig], aKey, (size_t)nSig * sizeof *aKey);
    m->nUsed++;
    *pbNew = 1;
    return m->aId[k];
}

/*
 * The values of the caller's columns aCol[0..n) (-1: none) of row (aVal, nullMask) into aOut: a
 * value, or 0 and its bit in the NULL mask returned. Their hash with the mask into *pHash (never 0:
 * sig_id's empty slot), in the same pass.
 */
static uint32_t gather(const signed char *aCol, int n, const int64_t *aVal, uint32_t nullMask, int64_t *aOut, uint64_t *pHash)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    uint32_t m = 0;
    for (int k = 0; k < n; k++) {
        int c = aCol[k];
        uint32_t bNull = c < 0 || (nullMask >> c & 1);
        int64_t v = bNull ? 0 : aVal[c];
        aOut[k] = v;
        h = (h ^ (uint64_t)v) * 0x9e3779b97f4a7c15ull;
        m |= bNull << k;
    }
    h = (h ^ m) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    *pHash = h ? h : 1;
    return m;
}

/* The signature values of a caller's row (aVal, nullMask) into aSig and their hash into *pHash; returns their NULL mask. */
static uint32_t sig_values(const struct vt_compact_map *pMap, const int64_t *aVal, uint32_t nullMask, int64_t *aSig, uint64_t *pHash)
{
    return gather(pMap->aSig, vt__aCompact[pMap->iTab].nSig, aVal, nullMask, aSig, pHash);
}

/* Part r: the signature row sig of table iTab with values aSig (NULL mask mSig). */
static void sig_part(struct vt_compact_part *r, int iTab, int64_t sig, const int64_t *aSig, uint32_t mSig)
{
    r->kind = VT_CP_SIG;
    r->bNext = 0;
    r->iTab = iTab;
    r->nCol = 1 + vt__aCompact[iTab].nSig;
    r->nullMask = mSig << 1;
    r->a[0] = sig;
    memcpy(&r->a[1], aSig, (size_t)vt__aCompact[iTab].nSig * sizeof *aSig);
}

int vt__compact_fold(struct vt_compact *c, const struct vt_compact_map *pMap, const int64_t *aVal, uint32_t nullMask,
                     int64_t *pSig, int64_t *pId, struct vt_compact_part *pOut)
{
    int64_t aSig[VT_COMPACT_MAXSIG];
    uint64_t h;
    uint32_t mSig = sig_values(pMap, aVal, nullMask, aSig, &h);
    int bNew = 0;
    *pSig = sig_id(c, pMap->iTab, aSig, mSig, h, &bNew);
    *pId = c->aSeq[pMap->iTab].nextId++;
    if (bNew) sig_part(pOut, pMap->iTab, *pSig, aSig, mSig);
    return bNew;
}

int vt__compact_add(struct vt_compact *c, const struct vt_compact_map *pMap, const int64_t *aVal, uint32_t nullMask,
                    struct vt_compact_part *aOut)
{
    return vt__compact_add_id(c, pMap, c->aSeq[pMap->iTab].nextId, aVal, nullMask, aOut);
}

int vt__compact_add_id(struct vt_compact *c, const struct vt_compact_map *pMap, int64_t id, const int64_t *aVal,
                       uint32_t nullMask, struct vt_compact_part *aOut)
{
    struct vt_compact_seq *q = &c->aSeq[pMap->iTab];
    const struct vt_compact_spec *p = &vt__aCompact[pMap->iTab];
    int64_t aSig[VT_COMPACT_MAXSIG], t = 0, dur = 0, corr = 0, block, sig;
    uint64_t h, hOwn;
    uint32_t mSig = sig_values(pMap, aVal, nullMask, aSig, &h), mOwn;
    int bT = pMap->iT >= 0 && !(nullMask >> pMap->iT & 1), bDur = pMap->iDur >= 0 && !(nullMask >> pMap->iDur & 1);
    int bCorr = pMap->iCorr >= 0 && !(nullMask >> pMap->iCorr & 1), bNew = 0, n = 0;
    struct vt_compact_part *r;
    if (bT) t = aVal[pMap->iT];
    if (bDur) dur = aVal[pMap->iDur];
    if (bCorr) corr = aVal[pMap->iCorr];
    q->nextId = id + 1;
    block = id >> VT_BLOCK_SHIFT;
    if (block != q->block) { /* a new block: anchored at this event, or the last known values */
        q->block = block;
        q->blockT = bT ? t : q->lastT;
        q->blockCorr = bCorr ? corr : q->lastCorr;
        r = &aOut[n++];
        r->kind = VT_CP_BLOCK;
        r->bNext = 0;
        r->iTab = pMap->iTab;
        r->nCol = 3;
        r->nullMask = 0;
        r->a[0] = block;
        r->a[1] = q->blockT;
        r->a[2] = q->blockCorr;
    }
    if (bT) q->lastT = t;
    if (bCorr) q->lastCorr = corr;
    sig = sig_id(c, pMap->iTab, aSig, mSig, h, &bNew);
    if (bNew) sig_part(&aOut[n++], pMap->iTab, sig, aSig, mSig);
    r = &aOut[n++];
    r->kind = VT_CP_ROW;
    r->bNext = q->lastId >= 0 && id == q->lastId + 1;
    q->lastId = id;
    r->iTab = pMap->iTab;
    r->nCol = 5 + p->nOwn;
    r->a[0] = id;
    /* differences wrap like the unsigned clock: block.t + dt gives t back for every t within 2^63 of the
     * anchor (a farther one, only from a damaged clock, reads as a real number, which readers reject) */
    r->a[1] = (int64_t)((uint64_t)t - (uint64_t)q->blockT);
    r->a[2] = dur;
    r->a[3] = sig;
    r->a[4] = (int64_t)((uint64_t)corr - (uint64_t)q->blockCorr);
    mOwn = gather(pMap->aOwn, p->nOwn, aVal, nullMask, &r->a[5], &hOwn); /* the hash unused */
    r->nullMask = (bT ? 0 : 1u << 1) | (bDur ? 0 : 1u << 2) | (bCorr ? 0 : 1u << 4) | mOwn << 5;
    return n;
}

int vt__compact_sink_open(struct vt_compact_sink *k, sqlite3 *db)
{
    memset(k, 0, sizeof *k);
    k->db = db;
    return SQLITE_OK; /* statements are prepared when first needed: a table may not be compacted yet */
}

int vt__compact_sink_put(struct vt_compact_sink *k, const struct vt_compact_part *aPart, int n)
{
    int rc = SQLITE_OK;
    for (int p = 0; rc == SQLITE_OK && p < n; p++) {
        const struct vt_compact_part *r = &aPart[p];
        const struct vt_compact_spec *spec = &vt__aCompact[r->iTab];
        sqlite3_stmt **ps = r->kind == VT_CP_BLOCK ? &k->aBlock[r->iTab] : r->kind == VT_CP_SIG ? &k->aSig[r->iTab] : &k->aRow[r->iTab];
        sqlite3_stmt *s;
        if (!*ps &&
            (rc = sqlite3_prepare_v3(k->db, r->kind == VT_CP_BLOCK ? spec->zBlockInsert : r->kind == VT_CP_SIG ? spec->zSigInsert : spec->zRowInsert,
                                     -1, SQLITE_PREPARE_PERSISTENT, ps, NULL)) != SQLITE_OK)
            break;
        s = *ps;
        for (int i = 0; i < r->nCol; i++) {
            if ((r->nullMask >> i & 1) || (i == 0 && r->bNext)) sqlite3_bind_null(s, i + 1); /* bNext: SQLite's rowid */
            else sqlite3_bind_int64(s, i + 1, r->a[i]);
        }
        rc = sqlite3_step(s);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
        sqlite3_reset(s);
    }
    return rc;
}

void vt__compact_sink_close(struct vt_compact_sink *k)
{
    for (int i = 0; i < VT_CT__COUNT; i++) {
        sqlite3_finalize(k->aBlock[i]);
        sqlite3_finalize(k->aSig[i]);
        sqlite3_finalize(k->aRow[i]);
    }
    memset(k, 0, sizeof *k);
}

/*
 * Event id of table iTab went in through the view (its trigger found or stored its block and
 * signature): continue after it in its block, with the block's stored anchors, and with
 * signature ids after the stored ones. SQLite code.
 */
static int after_view_insert(struct vt_compact *c, sqlite3 *db, int iTab, int64_t id)
{
    struct vt_compact_seq *q = &c->aSeq[iTab];
    sqlite3_stmt *p = NULL;
    char *zSql = sqlite3_mprintf("SELECT t, correlation, (SELECT max(id) FROM \"%w_sig\") FROM \"%w_block\" WHERE id = %lld",
                                 vt__aCompact[iTab].zName, vt__aCompact[iTab].zName, (long long)(id >> VT_BLOCK_SHIFT));
    int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &p, NULL) : SQLITE_NOMEM;
    if (rc == SQLITE_OK && sqlite3_step(p) == SQLITE_ROW) {
        q->block = id >> VT_BLOCK_SHIFT;
        q->blockT = sqlite3_column_int64(p, 0);
        q->blockCorr = sqlite3_column_int64(p, 1);
        if (sqlite3_column_int64(p, 2) >= q->nextSig) q->nextSig = sqlite3_column_int64(p, 2) + 1;
        q->nextId = id + 1;
        q->lastId = id;
    } else if (rc == SQLITE_OK) {
        rc = SQLITE_CORRUPT; /* the trigger stores the block */
    }
    sqlite3_finalize(p);
    sqlite3_free(zSql);
    return rc;
}

int vt__compact_insert_select(sqlite3 *db, int iTab, const char *zSelect, int bKeepIds, char **pzErr)
{
    const struct vt_compact_spec *spec = &vt__aCompact[iTab];
    struct vt_compact c;
    struct vt_compact_sink k;
    struct vt_compact_map map;
    struct vt_compact_part aPart[3];
    sqlite3_stmt *pSel = NULL, *pView = NULL;
    const char *azCol[32], *zWhat = NULL;
    int64_t aVal[32];
    int rc, bInit = 0, bSink = 0, nCol = 0;
    char *zIns = NULL;
    memset(&k, 0, sizeof k);
    rc = sqlite3_prepare_v2(db, zSelect, -1, &pSel, NULL);
    if (rc != SQLITE_OK) goto done;
    nCol = sqlite3_column_count(pSel);
    if (nCol > 32) {
        rc = SQLITE_ERROR;
        goto done;
    }
    if (nCol < 3) {
        rc = SQLITE_ERROR;
        goto done;
    }
    /* after the id: t, dur, the view's columns */
    for (int i = 1; i < nCol; i++) azCol[i - 1] = i == 1 ? "t" : i == 2 ? "dur" : sqlite3_column_name(pSel, i);
    if (vt__compact_map(iTab, azCol, nCol - 1, &map, &zWhat) != 0) {
        if (pzErr) *pzErr = sqlite3_mprintf("%s: cannot store column %s", spec->zName, zWhat);
        rc = SQLITE_ERROR;
        goto done;
    }
    {
        sqlite3_str *s = sqlite3_str_new(db);
        sqlite3_str_appendf(s, "INSERT INTO \"%w\"(id, t, dur, %s) VALUES(?", spec->zName, spec->zCols);
        for (int i = 1; i < nCol; i++) sqlite3_str_appendall(s, ", ?");
        sqlite3_str_appendall(s, ")");
        zIns = sqlite3_str_finish(s);
    }
    if (!zIns || vt__compact_init(&c, 0, db) != 0) {
        rc = zIns ? SQLITE_ERROR : SQLITE_NOMEM;
        goto done;
    }
    bInit = 1;
    rc = vt__compact_sink_open(&k, db);
    if (rc != SQLITE_OK) goto done;
    bSink = 1;
    while ((rc = sqlite3_step(pSel)) == SQLITE_ROW) {
        uint32_t mNull = 0;
        int bOdd = 0;
        int64_t id = bKeepIds ? sqlite3_column_int64(pSel, 0) : c.aSeq[iTab].nextId;
        for (int i = 1; i < nCol; i++) {
            int type = sqlite3_column_type(pSel, i);
            if (type == SQLITE_NULL) mNull |= 1u << (i - 1);
            else if (type != SQLITE_INTEGER) bOdd = 1;
            aVal[i - 1] = sqlite3_column_int64(pSel, i);
        }
        if (!bOdd) {
            rc = vt__compact_sink_put(&k, aPart, vt__compact_add_id(&c, &map, id, aVal, mNull, aPart));
        } else { /* as it is, through the view */
            if (!pView && (rc = sqlite3_prepare_v2(db, zIns, -1, &pView, NULL)) != SQLITE_OK) break;
            sqlite3_bind_int64(pView, 1, id);
            for (int i = 1; i < nCol; i++) sqlite3_bind_value(pView, i + 1, sqlite3_column_value(pSel, i));
            rc = sqlite3_step(pView);
            rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
            sqlite3_reset(pView);
            if (rc == SQLITE_OK) rc = after_view_insert(&c, db, iTab, id);
        }
        if (rc != SQLITE_OK) break;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
done:
    if (rc != SQLITE_OK && pzErr && !*pzErr) *pzErr = sqlite3_mprintf("%s: %s", spec->zName, sqlite3_errmsg(db));
    if (bSink) vt__compact_sink_close(&k);
    if (bInit) vt__compact_free(&c);
    sqlite3_finalize(pSel);
    sqlite3_finalize(pView);
    sqlite3_free(zIns);
    return rc;
}

/* Folded calls (schema 6, schema.h VT_CALL_FOLD). */
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
    return rc;
}
