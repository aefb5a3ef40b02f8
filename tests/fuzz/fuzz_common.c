/* Fuzz targets' shared parts: a trace built from fuzz bytes, and every reader of a trace run on it. */
#include "fuzz_common.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "vramtrace/schema.h"

#define MAX_TABLES 48
#define MAX_COLS 40
#define HUGE_TEXT_MAX (256 << 10)

/* The trace's tables and views with their column counts, read once from a schema in memory. */
static struct {
    int bInit;
    int nTable, nView;
    char azTable[MAX_TABLES][48];
    int anCol[MAX_TABLES];
    char azView[MAX_TABLES][48];
} g_schema;

/* Meta keys the readers interpret. */
static const char *const azMetaKey[] = {
    "closed_cleanly", "pid", "ppid", "rank", "local_rank", "world_size", "hostname", "cmdline", "exe",
    "start_ns", "end_ns", "clock_anchor_cupti_ns", "clock_anchor_wall_ns", "schema_version",
    "tracer_version", "config.output", "config.flush_ms", "config.kernel_args", "config.tensors",
    "config.buffer_size", "dropped_queue", "dropped_writer", "dropped_map", "records_decoded",
    "commits", "rows_written", "cupti_version", "cuda_driver_version", "env.CUDA_VISIBLE_DEVICES"};

/* A cursor over the fuzz bytes; reads past the end give zeros. */
struct cursor {
    const uint8_t *p;
    size_t n, i;
    int64_t clock;
    int64_t aRecent[8];
    unsigned iRecent;
};

static unsigned next_u8(struct cursor *c)
{
    return c->i < c->n ? c->p[c->i++] : 0;
}

static uint64_t next_bytes(struct cursor *c, int n)
{
    uint64_t v = 0;
    int k;
    for (k = 0; k < n; k++) v |= (uint64_t)next_u8(c) << (8 * k);
    return v;
}

/* Load the table and view names of the real schema (once). Returns 0 or -1. */
static int schema_init(void)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    int rc = -1, i;
    if (g_schema.bInit) return 0;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK || vt__schema_create(db, NULL) != SQLITE_OK) goto done;
    if (sqlite3_prepare_v2(db, "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view')"
                               " AND name NOT LIKE 'sqlite_%' ORDER BY type, name",
                           -1, &s, NULL) != SQLITE_OK)
        goto done;
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *zType = (const char *)sqlite3_column_text(s, 0);
        const char *zName = (const char *)sqlite3_column_text(s, 1);
        if (!strcmp(zType, "table") && g_schema.nTable < MAX_TABLES)
            snprintf(g_schema.azTable[g_schema.nTable++], sizeof g_schema.azTable[0], "%s", zName);
        else if (!strcmp(zType, "view") && g_schema.nView < MAX_TABLES)
            snprintf(g_schema.azView[g_schema.nView++], sizeof g_schema.azView[0], "%s", zName);
    }
    sqlite3_finalize(s);
    s = NULL;
    for (i = 0; i < g_schema.nTable; i++) {
        char zSql[128];
        snprintf(zSql, sizeof zSql, "SELECT count(*) FROM pragma_table_info('%s')", g_schema.azTable[i]);
        if (sqlite3_prepare_v2(db, zSql, -1, &s, NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) goto done;
        g_schema.anCol[i] = sqlite3_column_int(s, 0);
        if (g_schema.anCol[i] > MAX_COLS) g_schema.anCol[i] = MAX_COLS;
        sqlite3_finalize(s);
        s = NULL;
    }
    g_schema.bInit = 1;
    rc = 0;
done:
    sqlite3_finalize(s);
    sqlite3_close(db);
    return rc;
}

static void remember(struct cursor *c, int64_t v)
{
    c->aRecent[c->iRecent++ % 8] = v;
}

/* Bind parameter iCol of s to a value chosen by the next bytes. */
static void bind_value(struct cursor *c, sqlite3_stmt *s, int iCol)
{
    unsigned tag = next_u8(c) % 16, n, k;
    int64_t v;
    switch (tag) {
    case 0: sqlite3_bind_null(s, iCol); return;
    case 1: v = 0; break;
    case 2: v = -1; break;
    case 3: v = INT64_MAX; break;
    case 4: v = INT64_MIN; break;
    case 5: v = next_u8(c); break;
    case 6: v = (int64_t)next_bytes(c, 2); break;
    case 7: v = (int64_t)next_bytes(c, 8); break;
    case 8: { /* a short string of the input's own bytes */
        char z[32];
        n = next_u8(c) % 32;
        for (k = 0; k < n; k++) z[k] = (char)next_u8(c);
        sqlite3_bind_text(s, iCol, z, (int)n, SQLITE_TRANSIENT);
        return;
    }
    case 9: { /* a huge string full of characters reports must escape */
        static const char zHostile[] = "<script>\"'\\&%s%n\n\t";
        char *z;
        n = (next_u8(c) + 1) * (HUGE_TEXT_MAX / 256);
        z = malloc(n);
        if (!z) {
            sqlite3_bind_null(s, iCol);
            return;
        }
        for (k = 0; k < n; k++) z[k] = zHostile[k % (sizeof zHostile - 1)];
        sqlite3_bind_text(s, iCol, z, (int)n, free);
        return;
    }
    case 10: {
        uint64_t u = next_bytes(c, 8);
        double d;
        memcpy(&d, &u, sizeof d);
        sqlite3_bind_double(s, iCol, d);
        return;
    }
    case 11: c->clock += (int64_t)next_u8(c) * 1000 - 20000; v = c->clock; break; /* mostly forwards */
    case 12: v = 0x7f0000000000ll + (int64_t)(next_u8(c) % 16) * 0x100000; break; /* colliding addresses */
    case 13: v = ((int64_t)(next_u8(c) % 40) + 1) << 20; break;                   /* plausible sizes */
    case 14: v = c->aRecent[next_u8(c) % 8]; break;                                /* repeat a value */
    default: {
        uint8_t a[16];
        n = next_u8(c) % 16;
        for (k = 0; k < n; k++) a[k] = (uint8_t)next_u8(c);
        sqlite3_bind_blob(s, iCol, a, (int)n, SQLITE_TRANSIENT);
        return;
    }
    }
    remember(c, v);
    sqlite3_bind_int64(s, iCol, v);
}

/* Insert one row into table iTable with fuzzed values (a failed insert is skipped). */
static void op_insert(sqlite3 *db, struct cursor *c, int iTable)
{
    char zSql[512];
    size_t off;
    sqlite3_stmt *s = NULL;
    int i, nCol = g_schema.anCol[iTable];
    off = (size_t)snprintf(zSql, sizeof zSql, "INSERT INTO \"%s\" VALUES(", g_schema.azTable[iTable]);
    for (i = 0; i < nCol && off < sizeof zSql; i++) off += (size_t)snprintf(zSql + off, sizeof zSql - off, i ? ",?" : "?");
    if (off < sizeof zSql) snprintf(zSql + off, sizeof zSql - off, ")");
    if (sqlite3_prepare_v2(db, zSql, -1, &s, NULL) != SQLITE_OK) return; /* the table was dropped */
    for (i = 1; i <= nCol; i++) bind_value(c, s, i);
    sqlite3_step(s);
    sqlite3_finalize(s);
}

/*
 * The empty trace (the schema alone) for page size pageSize (0: SQLite's default), made once per
 * process and page size and kept in memory: each input's trace starts as a copy of it, the same
 * file vt__schema_create makes, for a fifth of a replay's time. Writes it to zPath; 0 or -1.
 */
static int write_empty_trace(const char *zPath, int pageSize)
{
    static struct {
        int pageSize;
        unsigned char *p;
        long n;
    } aKept[4];
    static int nKept;
    int i, rc = -1;
    FILE *f = NULL;
    for (i = 0; i < nKept && aKept[i].pageSize != pageSize; i++) {}
    if (i == nKept) { /* made in zPath itself, then read back */
        sqlite3 *db = NULL;
        char zSql[64];
        unsigned char *p = NULL;
        long n = -1;
        if (nKept == (int)(sizeof aKept / sizeof aKept[0])) return -1;
        if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) == SQLITE_OK) {
            snprintf(zSql, sizeof zSql, "PRAGMA page_size=%d", pageSize);
            if (pageSize) sqlite3_exec(db, zSql, NULL, NULL, NULL);
            sqlite3_exec(db, "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF", NULL, NULL, NULL);
            rc = vt__schema_create(db, NULL) == SQLITE_OK ? 0 : -1;
        }
        sqlite3_close(db);
        if (rc == 0 && (f = fopen(zPath, "rb")) != NULL && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
            fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n)) != NULL && fread(p, 1, (size_t)n, f) == (size_t)n) {
            aKept[nKept].pageSize = pageSize;
            aKept[nKept].p = p;
            aKept[nKept++].n = n;
            p = NULL;
        }
        if (f) fclose(f);
        free(p);
        return i < nKept ? 0 : -1;
    }
    f = fopen(zPath, "wb");
    if (f && fwrite(aKept[i].p, 1, (size_t)aKept[i].n, f) == (size_t)aKept[i].n) rc = 0;
    if (f && fclose(f) != 0) rc = -1;
    return rc;
}

int vt_fuzz_build(const uint8_t *data, size_t size, const char *zPath, int pageSize)
{
    struct cursor c;
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    char zSql[256];
    int rc = -1, nOps = 0;
    if (schema_init() != 0) return -1;
    memset(&c, 0, sizeof c);
    c.p = data;
    c.n = size;
    c.clock = 1000000000;
    if (write_empty_trace(zPath, pageSize) != 0) goto done;
    if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) goto done;
    /* A scratch file: no durability needed, and fsyncs would dominate the run time. */
    sqlite3_exec(db, "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF", NULL, NULL, NULL);
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    while (c.i < c.n && nOps++ < 4096) {
        unsigned op = next_u8(&c) % 16;
        if (op < 8) { /* the tables the analysis reads most, by weight */
            static const char *const azHot[] = {"memory_event", "memory_event", "kernel", "buffer_use",
                                                "memcpy", "nvtx_range", "oom_event", "api_call"};
            int i;
            for (i = 0; i < g_schema.nTable; i++)
                if (!strcmp(g_schema.azTable[i], azHot[op])) op_insert(db, &c, i);
        } else if (op < 12) {
            op_insert(db, &c, (int)(next_u8(&c) % (unsigned)g_schema.nTable));
        } else if (op == 12) {
            if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", -1, &s, NULL) ==
                SQLITE_OK) {
                sqlite3_bind_text(s, 1, azMetaKey[next_u8(&c) % (sizeof azMetaKey / sizeof azMetaKey[0])], -1,
                                  SQLITE_STATIC);
                bind_value(&c, s, 2);
                sqlite3_step(s);
            }
            sqlite3_finalize(s);
            s = NULL;
        } else if (op == 13) { /* a missing table */
            snprintf(zSql, sizeof zSql, "DROP TABLE IF EXISTS \"%s\"",
                     g_schema.azTable[next_u8(&c) % (unsigned)g_schema.nTable]);
            sqlite3_exec(db, zSql, NULL, NULL, NULL);
        } else if (op == 14) { /* a missing view */
            if (g_schema.nView) {
                snprintf(zSql, sizeof zSql, "DROP VIEW IF EXISTS \"%s\"",
                         g_schema.azView[next_u8(&c) % (unsigned)g_schema.nView]);
                sqlite3_exec(db, zSql, NULL, NULL, NULL);
            }
        } else { /* another schema version, application id or an odd column added */
            unsigned k = next_u8(&c) % 3;
            if (k == 0) snprintf(zSql, sizeof zSql, "PRAGMA user_version=%d", (int)(int8_t)next_u8(&c));
            else if (k == 1) snprintf(zSql, sizeof zSql, "PRAGMA application_id=%d", (int)next_bytes(&c, 4));
            else snprintf(zSql, sizeof zSql, "ALTER TABLE \"%s\" ADD COLUMN extra_%u",
                          g_schema.azTable[next_u8(&c) % (unsigned)g_schema.nTable], next_u8(&c));
            sqlite3_exec(db, zSql, NULL, NULL, NULL);
        }
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    rc = 0;
done:
    sqlite3_finalize(s);
    sqlite3_close(db);
    return rc;
}

const char *vt_fuzz_scratch(const char *zName)
{
    static char zPath[512];
    char z[560];
    const char *zDir = getenv("TMPDIR");
    static const char *const azSuffix[] = {"", "-wal", "-shm", "-journal", ".json"};
    size_t i;
    if (!zDir || !*zDir) zDir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(zPath, sizeof zPath, "%s/vt-fuzz-%d-%s", zDir, (int)getpid(), zName);
    for (i = 0; i < sizeof azSuffix / sizeof azSuffix[0]; i++) {
        snprintf(z, sizeof z, "%s%s", zPath, azSuffix[i]);
        unlink(z);
    }
    return zPath;
}

void vt_fuzz_read_all(const char *zPath, unsigned flags)
{
    static const char *const azFmt[] = {"text", "json", "markdown", "html"};
    static int bQuiet;
    char zJson[600];
    if (!bQuiet) { /* the readers print reports on standard output: not wanted here */
        if (!freopen("/dev/null", "w", stdout)) return;
        bQuiet = 1;
    }
    {
        /* Written back into the trace unless flags & 1; a second, read-only run reads the results. */
        char *argv[] = {"analyze", "--save", "--format", (char *)azFmt[(flags >> 1) & 3], "-o", "/dev/null",
                        (flags & 8) ? "--by-site" : "--top", (flags & 8) ? "--no-write" : "3",
                        (char *)zPath, NULL};
        char *argvRo[] = {"analyze", "--no-write", "--format", (char *)azFmt[((flags >> 1) + 1) & 3],
                          "-o", "/dev/null", (char *)zPath, NULL};
        vt__cmd_analyze((flags & 1) ? 7 : 9, (flags & 1) ? argvRo : argv);
        if (!(flags & 1)) vt__cmd_analyze(7, argvRo);
    }
    {
        char *argv[] = {"info", (flags & 16) ? "--json" : "--", (char *)zPath, NULL};
        vt__cmd_info(3, argv);
    }
    snprintf(zJson, sizeof zJson, "%s.json", zPath);
    {
        char *argv[] = {"export", "--perfetto", zJson, (char *)zPath, NULL};
        vt__cmd_export(4, argv);
        unlink(zJson);
    }
    {
        char *argv[] = {"sql", (char *)zPath,
                        "SELECT (SELECT count(*) FROM allocation), (SELECT count(*) FROM memory_timeline),"
                        " (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL),"
                        " (SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS)",
                        NULL};
        vt__cmd_sql(3, argv);
    }
    fflush(stdout);
}
