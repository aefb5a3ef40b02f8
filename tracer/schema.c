/* Trace schema creation, version stamping and validation, shared by the tracer and the analyzer. */
#include "vramtrace/schema.h"
#include "vramtrace/compact.h"
#include "vramtrace/views.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Insert one enum_api row per VT_API_LIST entry. */
static int insert_api_enum(sqlite3 *db)
{
    sqlite3_stmt *pStmt = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT INTO enum_api(id, name, family) VALUES(?,?,?)", -1,
                                &pStmt, NULL);
    if (rc != SQLITE_OK) return rc;
#define VT__API_ROW(id, name, family)                                  \
    if (rc == SQLITE_OK) {                                             \
        sqlite3_bind_int(pStmt, 1, id);                                \
        sqlite3_bind_text(pStmt, 2, name, -1, SQLITE_STATIC);          \
        sqlite3_bind_text(pStmt, 3, family, -1, SQLITE_STATIC);        \
        rc = sqlite3_step(pStmt) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR; \
        sqlite3_reset(pStmt);                                          \
    }
    VT_API_LIST(VT__API_ROW)
#undef VT__API_ROW
    sqlite3_finalize(pStmt);
    return rc;
}

/* Insert the rows (value, name) of every enum_* table of VT_ENUM_TABLES. Returns an SQLite code. */
static int insert_enums(sqlite3 *db)
{
    sqlite3_str *pSql = sqlite3_str_new(db);
    char *zSql;
    int rc;
#define VT__ENUM_ROW(v, c, n) sqlite3_str_appendf(pSql, "%s(%d, '%s')", nRow++ ? ", " : "", v, n);
#define VT__ENUM_TABLE(zTable, LIST)                                      \
    {                                                                     \
        int nRow = 0;                                                     \
        sqlite3_str_appendf(pSql, "INSERT INTO %s(id, name) VALUES ", zTable); \
        LIST(VT__ENUM_ROW)                                                \
        sqlite3_str_appendall(pSql, ";\n");                              \
    }
    VT_ENUM_TABLES(VT__ENUM_TABLE)
#undef VT__ENUM_TABLE
#undef VT__ENUM_ROW
    zSql = sqlite3_str_finish(pSql);
    rc = zSql ? sqlite3_exec(db, zSql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    return rc == SQLITE_OK ? insert_api_enum(db) : rc;
}

static char *with_base(const char *zText, int64_t base);

char *vt__schema_sql_at(const char *zText, int64_t base)
{
    return with_base(zText, base);
}

int vt__schema_create(sqlite3 *db, char **zErr)
{
    return vt__schema_create_at(db, 0, zErr);
}

int vt__schema_create_at(sqlite3 *db, int64_t base, char **zErr)
{
    char zPragma[128], zNum[24];
    char *zDdl = with_base(VT_SCHEMA_DDL, base);
    int rc;
    if (!zDdl) return SQLITE_NOMEM;
    rc = sqlite3_exec(db, "BEGIN", NULL, NULL, zErr);
    if (rc != SQLITE_OK) goto done;
    rc = sqlite3_exec(db, zDdl, NULL, NULL, zErr);
    if (rc == SQLITE_OK) rc = vt__compact_create(db, base, zErr);
    if (rc == SQLITE_OK) rc = insert_enums(db);
    if (rc == SQLITE_OK) rc = vt__views_create(db, zErr);
    if (rc == SQLITE_OK) {
        snprintf(zPragma, sizeof zPragma, "PRAGMA user_version=%d; PRAGMA application_id=%d;",
                 VT_SCHEMA_VERSION, VT_SCHEMA_APPLICATION_ID);
        rc = sqlite3_exec(db, zPragma, NULL, NULL, zErr);
    }
    if (rc == SQLITE_OK) {
        snprintf(zNum, sizeof zNum, "%d", VT_SCHEMA_VERSION);
        rc = vt__meta_set(db, "schema_version", zNum);
    }
    if (rc == SQLITE_OK) {
        snprintf(zNum, sizeof zNum, "%lld", (long long)base);
        rc = vt__meta_set(db, "time_base_ns", zNum);
    }
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, zErr);
    else sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
done:
    sqlite3_free(zDdl);
    return rc;
}

/* Run a single-integer query; returns SQLite code, value in *pOut. */
static int query_int(sqlite3 *db, const char *zSql, long long *pOut)
{
    sqlite3_stmt *pStmt = NULL;
    int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(pStmt);
    if (rc == SQLITE_ROW) {
        *pOut = sqlite3_column_int64(pStmt, 0);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        *pOut = 0;
        rc = SQLITE_OK;
    }
    sqlite3_finalize(pStmt);
    return rc;
}

/*
 * Read meta 'schema_version' and, when it is a decimal integer written the way
 * vt__schema_create writes it ("2", not "02", " 2" or "2.0"), store it in *pOut.
 * zText (size nText) receives what was found for a message: the value (cut,
 * control characters as '?') or SQLite's error. Returns 1 for an integer, 2 for
 * a row holding anything else (text, a real, a blob, NULL), 3 for several rows
 * (a hand-made meta without its primary key), 0 when there is no such row, -1
 * when meta cannot be read.
 */
static int meta_version(sqlite3 *db, long long *pOut, char *zText, size_t nText)
{
    sqlite3_stmt *pStmt = NULL;
    int rc, found = -1;
    char *p;
    zText[0] = '\0';
    rc = sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &pStmt, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(pStmt);
    if (rc == SQLITE_DONE) {
        found = 0;
    } else if (rc == SQLITE_ROW) {
        int type = sqlite3_column_type(pStmt, 0); /* before column_text, which may convert it */
        const char *z = (const char *)sqlite3_column_text(pStmt, 0);
        char zCanon[24];
        long long v = 0;
        snprintf(zText, nText, "%s", type == SQLITE_NULL ? "NULL" : z ? z : "");
        if (z && (type == SQLITE_TEXT || type == SQLITE_INTEGER) &&
            (size_t)sqlite3_column_bytes(pStmt, 0) == strlen(z)) {
            errno = 0;
            v = strtoll(z, NULL, 10);
            snprintf(zCanon, sizeof zCanon, "%lld", v);
            found = !errno && !strcmp(z, zCanon) ? 1 : 2;
        } else {
            found = 2;
        }
        if (found == 1) *pOut = v;
        rc = sqlite3_step(pStmt);
        if (rc == SQLITE_ROW) found = 3;
        else if (rc != SQLITE_DONE) found = -1;
    }
    if (found < 0) snprintf(zText, nText, "%s", sqlite3_errmsg(db));
    for (p = zText; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    sqlite3_finalize(pStmt);
    return found;
}

/*
 * What a trace of every version has (version 1's layout; later versions add tables and columns,
 * never take one away): each table the readers read, with its columns, space-separated.
 */
static const struct required {
    const char *zTable, *zCols;
} aRequired[] = {
    {"meta", "key value"},
    {"device", "id name uuid total_bytes cc_major cc_minor sm_count pci_bus pci_device global_memory_bandwidth_kbps"},
    {"string", "id value"},
    {"memory_event", "id ts op mem_kind address bytes device context stream correlation api is_async pool_type "
                     "pool_address pool_threshold pool_size pool_used pc thread stack_id source_id"},
    {"memcpy", "id start end device context stream correlation copy_kind src_kind dst_kind bytes is_async "
               "src_device dst_device src dst graph_id"},
    {"memset", "id start end device context stream correlation bytes value mem_kind is_async dst graph_id"},
    {"kernel", "id start end device context stream correlation name_id grid_x grid_y grid_z block_x block_y "
               "block_z static_smem dynamic_smem registers graph_id"},
    {"nvtx_range", "id start end kind name_id domain_id thread depth"},
    {"oom_event", "id ts api correlation device bytes status free_bytes total_bytes thread stack_id"},
    {"dropped", "id ts source what count device context stream"},
    {"api_call", "id api correlation start end thread device status bytes ptr src dst stream stack_id"},
    {"buffer_use", "correlation kind address ts device"},
    {"sync_event", "id start end type device context stream correlation event"},
    {"pool_event", "id ts op device pool_type address threshold size used correlation"},
    {"stack", "id hash depth"},
    {"frame", "stack_id idx kind pc function_id file_id line module_id"},
};
#define N_REQUIRED (sizeof aRequired / sizeof aRequired[0])

/*
 * The first table of aRequired that a trace of schema `version` lacks (or that cannot be asked
 * about), its index, N_REQUIRED when every one is there once; else, with *pzCol set (to a
 * sqlite3_malloc'd name; NULL when none), the first table that lacks one of its columns. Version
 * 5 reads the compacted tables through views of their names (a table of that name reads too).
 */
static size_t tables_missing(sqlite3 *db, int version, char **pzCol)
{
    sqlite3_stmt *pStmt = NULL, *pCol = NULL;
    size_t i = 0;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT count(*) FROM sqlite_schema WHERE (type = 'table' OR (?2 AND type = 'view'))"
                                " AND name = ?1",
                                -1, &pStmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_xinfo(?1, 'main') WHERE name = ?2", -1, &pCol,
                                NULL);
    *pzCol = NULL;
    for (; rc == SQLITE_OK && i < N_REQUIRED; i++) {
        sqlite3_bind_text(pStmt, 1, aRequired[i].zTable, -1, SQLITE_STATIC);
        sqlite3_bind_int(pStmt, 2, version >= 5 && vt__compact_find(aRequired[i].zTable) >= 0);
        rc = sqlite3_step(pStmt) == SQLITE_ROW && sqlite3_column_int64(pStmt, 0) == 1 ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(pStmt);
        if (rc != SQLITE_OK) break;
        for (const char *z = aRequired[i].zCols; *z && rc == SQLITE_OK;) {
            int n = (int)strcspn(z, " ");
            sqlite3_bind_text(pCol, 1, aRequired[i].zTable, -1, SQLITE_STATIC);
            sqlite3_bind_text(pCol, 2, z, n, SQLITE_STATIC);
            if (sqlite3_step(pCol) != SQLITE_ROW || sqlite3_column_int64(pCol, 0) != 1) {
                *pzCol = sqlite3_mprintf("%.*s", n, z);
                rc = SQLITE_ERROR;
            }
            sqlite3_reset(pCol);
            z += n;
            while (*z == ' ') z++;
        }
        if (rc != SQLITE_OK) break;
    }
    sqlite3_finalize(pStmt);
    sqlite3_finalize(pCol);
    return i;
}

enum vt_schema_status vt__schema_check(sqlite3 *db, int *pVersion, char *zMsg, size_t nMsg)
{
    long long appId = 0, version = 0, nTables = 0, metaVersion = 0;
    char zMeta[64], *zCol = NULL;
    int rc, bMeta;
    size_t i;

    if (pVersion) *pVersion = 0;
    rc = query_int(db, "PRAGMA application_id", &appId);
    if (rc == SQLITE_NOTADB) {
        snprintf(zMsg, nMsg, "not an SQLite database");
        return VT_SCHEMA_NOT_SQLITE;
    }
    if ((rc & 0xff) == SQLITE_BUSY) {
        snprintf(zMsg, nMsg, "locked by another process (a trace still being written: try again when it is done)");
        return VT_SCHEMA_BUSY;
    }
    if (rc != SQLITE_OK) {
        snprintf(zMsg, nMsg, "cannot read database: %s", sqlite3_errstr(rc));
        return rc == SQLITE_CORRUPT ? VT_SCHEMA_CORRUPT : VT_SCHEMA_NOT_SQLITE;
    }
    rc = query_int(db, "SELECT count(*) FROM sqlite_schema", &nTables);
    if (rc != SQLITE_OK) {
        snprintf(zMsg, nMsg, "database is damaged: %s", sqlite3_errstr(rc));
        return rc == SQLITE_NOTADB ? VT_SCHEMA_NOT_SQLITE : VT_SCHEMA_CORRUPT;
    }
    if (appId != VT_SCHEMA_APPLICATION_ID) {
        snprintf(zMsg, nMsg, nTables ? "an SQLite database, but not a vramtrace trace"
                                     : "an empty SQLite database, not a vramtrace trace");
        return VT_SCHEMA_FOREIGN;
    }
    rc = query_int(db, "PRAGMA user_version", &version);
    if (rc != SQLITE_OK) {
        snprintf(zMsg, nMsg, "cannot read schema version: %s", sqlite3_errstr(rc));
        return VT_SCHEMA_CORRUPT;
    }
    if (pVersion) *pVersion = (int)version;
    /*
     * The version is stamped twice, in one transaction: PRAGMA user_version and
     * meta 'schema_version'. Two numbers that differ are damage, whatever they
     * are. A newer trace is refused as newer when its meta stamp agrees or cannot
     * be read (its layout is not this build's to judge); a trace of a version this
     * build reads must carry both stamps.
     */
    bMeta = meta_version(db, &metaVersion, zMeta, sizeof zMeta);
    if (bMeta == 1 && metaVersion != version) {
        snprintf(zMsg, nMsg,
                 "trace is damaged: its two schema version stamps disagree (PRAGMA user_version %lld, "
                 "meta schema_version %lld)",
                 version, metaVersion);
        return VT_SCHEMA_CORRUPT;
    }
    if (version > VT_SCHEMA_VERSION) {
        snprintf(zMsg, nMsg,
                 "trace schema version %lld is newer than this vramtrace reads (%d): upgrade "
                 "vramtrace",
                 version, VT_SCHEMA_VERSION);
        return VT_SCHEMA_NEWER;
    }
    if (version < VT_SCHEMA_VERSION_OLDEST) {
        snprintf(zMsg, nMsg, "trace has no schema version: incomplete or damaged");
        return VT_SCHEMA_CORRUPT;
    }
    i = tables_missing(db, (int)version, &zCol);
    if (i < N_REQUIRED) {
        int bView = version >= 5 && vt__compact_find(aRequired[i].zTable) >= 0;
        if (zCol)
            snprintf(zMsg, nMsg, "trace is damaged: column '%s' of %s '%s' is missing", zCol, bView ? "view" : "table",
                     aRequired[i].zTable);
        else
            snprintf(zMsg, nMsg, "trace is damaged: %s '%s' is missing", bView ? "view" : "table", aRequired[i].zTable);
        sqlite3_free(zCol);
        return VT_SCHEMA_CORRUPT;
    }
    if (bMeta != 1) {
        if (bMeta == 2)
            snprintf(zMsg, nMsg, "trace is damaged: meta schema_version is '%s', not a version number", zMeta);
        else if (bMeta == 3)
            snprintf(zMsg, nMsg, "trace is damaged: meta holds schema_version more than once");
        else if (bMeta == 0)
            snprintf(zMsg, nMsg, "trace is damaged: meta has no schema_version (PRAGMA user_version %lld)",
                     version);
        else
            snprintf(zMsg, nMsg, "trace is damaged: cannot read meta schema_version: %s", zMeta);
        return VT_SCHEMA_CORRUPT;
    }
    return VT_SCHEMA_OK;
}

/* Replace every `@base` in zText by base in decimal; a sqlite3_malloc'd string, NULL when out of memory. */
static char *with_base(const char *zText, int64_t base)
{
    static const char zTok[] = "@base";
    char zBase[24];
    sqlite3_str *pOut = sqlite3_str_new(NULL);
    const char *z = zText, *zHit;
    snprintf(zBase, sizeof zBase, "%lld", (long long)base);
    while ((zHit = strstr(z, zTok)) != NULL) {
        sqlite3_str_append(pOut, z, (int)(zHit - z));
        /* a negative base is parenthesised: "t + (-5)" */
        if (base < 0) sqlite3_str_appendf(pOut, "(%s)", zBase);
        else sqlite3_str_appendall(pOut, zBase);
        z = zHit + sizeof zTok - 1;
    }
    sqlite3_str_appendall(pOut, z);
    return sqlite3_str_finish(pOut);
}

int vt__schema_time_base(sqlite3 *db, const char *const *azTable, int nTable, int64_t *pBase)
{
    char zVal[32], *zEnd = NULL, *zTs = NULL, *zStart = NULL, *zStop = NULL;
    sqlite3_stmt *pStmt = NULL;
    long long base;
    int rc, bSame = 1;
    *pBase = 0;
    rc = vt__meta_get(db, "time_base_ns", zVal, sizeof zVal);
    if (rc != 1) return rc; /* absent (version 1) or unreadable */
    errno = 0;
    base = strtoll(zVal, &zEnd, 10);
    if (!zVal[0] || *zEnd || errno) return 0;
    zTs = with_base(VT__GEN_TS, (int64_t)base);
    zStart = with_base(VT__GEN_START, (int64_t)base);
    zStop = with_base(VT__GEN_END, (int64_t)base);
    if (!zTs || !zStart || !zStop ||
        sqlite3_prepare_v2(db, "SELECT sql, type FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ?", -1,
                           &pStmt, NULL) != SQLITE_OK) {
        bSame = -1;
        goto done;
    }
    for (int i = 0; bSame == 1 && i < nTable; i++) {
        /* the generated time columns defined exactly as the schema defines them, for this base: they are
         * then t + base and t + dur + base (versions 2 and 3 alike) */
        const char *zHave;
        sqlite3_bind_text(pStmt, 1, azTable[i], -1, SQLITE_STATIC);
        rc = sqlite3_step(pStmt);
        zHave = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(pStmt, 0) : NULL;
        if (zHave && !strcmp((const char *)sqlite3_column_text(pStmt, 1), "view")) {
            /* a compacted table (version 5): its view as vt__compact_create writes it for this base, whose t and
             * dur are the stored time and duration */
            int iTab = vt__compact_find(azTable[i]);
            char *zView = iTab >= 0 ? vt__compact_view_sql(iTab, (int64_t)base) : NULL;
            bSame = zView && !strcmp(zHave, zView);
            if (iTab >= 0 && !zView) bSame = -1;
            sqlite3_free(zView);
            if (bSame == 0 && iTab >= 0) { /* or as version 5 wrote it (api_call without folded calls) */
                zView = vt__compact_view_sql_version(iTab, (int64_t)base, 5);
                bSame = zView ? !strcmp(zHave, zView) : -1;
                sqlite3_free(zView);
            }
        } else {
            bSame = zHave && (strstr(zHave, zTs) || (strstr(zHave, zStart) && strstr(zHave, zStop)));
        }
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) bSame = -1;
        sqlite3_reset(pStmt);
    }
done:
    sqlite3_finalize(pStmt);
    sqlite3_free(zTs);
    sqlite3_free(zStart);
    sqlite3_free(zStop);
    if (bSame == 1) *pBase = (int64_t)base;
    return bSame;
}

int vt__schema_is_table(sqlite3 *db, const char *zTable)
{
    sqlite3_stmt *pStmt = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", -1, &pStmt, NULL);
    if (rc != SQLITE_OK) return -1;
    sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
    rc = sqlite3_step(pStmt);
    sqlite3_finalize(pStmt);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int vt__schema_has_table(sqlite3 *db, const char *zTable)
{
    sqlite3_stmt *pStmt = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ?", -1, &pStmt,
                                NULL);
    if (rc != SQLITE_OK) return -1;
    sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
    rc = sqlite3_step(pStmt);
    sqlite3_finalize(pStmt);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int vt__schema_index(sqlite3 *db)
{
    static const char zAll[] = VT_SCHEMA_INDEXES;
    const char *z = zAll;
    int rc = SQLITE_OK;
    /* one statement per line: "CREATE INDEX IF NOT EXISTS name ON table(columns);" */
    while (rc == SQLITE_OK && *z) {
        const char *zEol = strchr(z, '\n'), *zOn = strstr(z, " ON "), *zParen = zOn ? strchr(zOn, '(') : NULL;
        char zTable[64], zStmt[256];
        size_t nLine = zEol ? (size_t)(zEol - z) : strlen(z);
        if (!zOn || !zParen || zParen > z + nLine || (size_t)(zParen - zOn - 4) >= sizeof zTable ||
            nLine >= sizeof zStmt)
            return SQLITE_INTERNAL;
        snprintf(zTable, sizeof zTable, "%.*s", (int)(zParen - zOn - 4), zOn + 4);
        snprintf(zStmt, sizeof zStmt, "%.*s", (int)nLine, z);
        /* a table of a later schema version than the trace's has no index to build, nor a view (version 5's
         * compacted tables) */
        switch (vt__schema_is_table(db, zTable)) {
        case 1: rc = sqlite3_exec(db, zStmt, NULL, NULL, NULL); break;
        case 0: break;
        default: rc = sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errcode(db) : SQLITE_ERROR; break;
        }
        z += nLine + (zEol ? 1 : 0);
    }
    return rc;
}

/* The state of one vt__meta_commit: its connection and the first failure. */
struct meta_commit {
    sqlite3 *db;
    int rc;
    size_t nRow; /* rows set */
};

int vt__meta_set(sqlite3 *db, const char *zKey, const char *zValue)
{
    sqlite3_stmt *pStmt = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", -1,
                                &pStmt, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, zValue, -1, SQLITE_STATIC);
    rc = sqlite3_step(pStmt);
    sqlite3_finalize(pStmt);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int vt__meta_set_i64(sqlite3 *db, const char *zKey, int64_t v)
{
    char z[32];
    snprintf(z, sizeof z, "%lld", (long long)v);
    return vt__meta_set(db, zKey, z);
}

/* vt__meta_commit's setter: the SQLite code of the first failure stays in *pSet. */
static int commit_one(void *pSet, const char *zKey, const char *zValue)
{
    struct meta_commit *c = pSet;
    c->rc = vt__meta_set(c->db, zKey, zValue);
    c->nRow += c->rc == SQLITE_OK;
    return c->rc != SQLITE_OK;
}

int vt__meta_commit(sqlite3 *db, int (*xRows)(void *pCtx, vt_meta_set_fn xSet, void *pSet), void *pCtx,
                    size_t *pnRow)
{
    struct meta_commit c = {db, SQLITE_OK, 0};
    int rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    if (xRows(pCtx, commit_one, &c) != 0 && c.rc == SQLITE_OK) c.rc = SQLITE_ABORT; /* the producer failed */
    rc = c.rc == SQLITE_OK ? sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) : c.rc;
    if (rc != SQLITE_OK) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    if (pnRow) *pnRow = rc == SQLITE_OK ? c.nRow : 0;
    return rc;
}

int vt__meta_get(sqlite3 *db, const char *zKey, char *zOut, size_t nOut)
{
    sqlite3_stmt *pStmt = NULL;
    int found = -1;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &pStmt, NULL) !=
        SQLITE_OK)
        return -1;
    sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_STATIC);
    switch (sqlite3_step(pStmt)) {
    case SQLITE_ROW: {
        const unsigned char *z = sqlite3_column_text(pStmt, 0);
        snprintf(zOut, nOut, "%s", z ? (const char *)z : "");
        found = 1;
        break;
    }
    case SQLITE_DONE: found = 0; break;
    default: found = -1; break;
    }
    sqlite3_finalize(pStmt);
    return found;
}
