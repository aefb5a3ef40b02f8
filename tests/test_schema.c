/* Tests for the trace schema module: creation, version stamps and validation of bad input. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "v4_util.h"
#include "vramtrace/schema.h"
#include "vt_test.h"

static sqlite3 *open_mem(void)
{
    sqlite3 *db = NULL;
    ASSERT_EQ(SQLITE_OK, sqlite3_open(":memory:", &db));
    return db;
}

TEST(create_and_check)
{
    sqlite3 *db = open_mem();
    char zMsg[256] = "", zVal[32];
    int version = -1;
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(VT_SCHEMA_OK, vt__schema_check(db, &version, zMsg, sizeof zMsg));
    ASSERT_EQ(VT_SCHEMA_VERSION, version);
    ASSERT_EQ(1, vt__meta_get(db, "schema_version", zVal, sizeof zVal));
    ASSERT_EQ(VT_SCHEMA_VERSION, atoi(zVal));
    ASSERT_EQ(0, vt__meta_get(db, "absent", zVal, sizeof zVal));
    ASSERT_EQ(SQLITE_OK, vt__schema_index(db));
    sqlite3_close(db);
}

TEST(enum_api_rows)
{
    sqlite3 *db = open_mem();
    sqlite3_stmt *pStmt;
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(db, "SELECT name FROM enum_api WHERE id = 40", -1,
                                            &pStmt, NULL));
    ASSERT_EQ(SQLITE_ROW, sqlite3_step(pStmt));
    ASSERT_STREQ("cuMemCreate", (const char *)sqlite3_column_text(pStmt, 0));
    sqlite3_finalize(pStmt);
    sqlite3_close(db);
}

TEST(memory_timeline_view)
{
    sqlite3 *db = open_mem();
    sqlite3_stmt *pStmt;
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(SQLITE_OK,
              sqlite3_exec(db,
                           "INSERT INTO memory_event(t,op,mem_kind,address,bytes,device) VALUES"
                           "(10,1,3,4096,100,0),(20,1,3,8192,50,0),(30,2,3,4096,100,0)",
                           NULL, NULL, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(db, "SELECT live_bytes FROM memory_timeline ORDER BY ts",
                                            -1, &pStmt, NULL));
    ASSERT_EQ(SQLITE_ROW, sqlite3_step(pStmt));
    ASSERT_EQ(100, sqlite3_column_int64(pStmt, 0));
    ASSERT_EQ(SQLITE_ROW, sqlite3_step(pStmt));
    ASSERT_EQ(150, sqlite3_column_int64(pStmt, 0));
    ASSERT_EQ(SQLITE_ROW, sqlite3_step(pStmt));
    ASSERT_EQ(50, sqlite3_column_int64(pStmt, 0));
    sqlite3_finalize(pStmt);
    sqlite3_close(db);
}

/* The integer result of zSql on db (one row, one column), or INT64_MIN for NULL. */
static sqlite3_int64 q_int(sqlite3 *db, const char *zSql)
{
    sqlite3_stmt *pStmt = NULL;
    sqlite3_int64 v;
    ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL));
    ASSERT_EQ(SQLITE_ROW, sqlite3_step(pStmt));
    v = sqlite3_column_type(pStmt, 0) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(pStmt, 0);
    sqlite3_finalize(pStmt);
    return v;
}

/* Every enum_* table holds its list's rows, with the names vt_*_name gives. */
TEST(enum_tables_from_lists)
{
    sqlite3 *db = open_mem();
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(8, q_int(db, "SELECT count(*) FROM enum_mem_kind"));
    ASSERT_EQ(11, q_int(db, "SELECT count(*) FROM enum_copy_kind"));
    ASSERT_EQ(8, q_int(db, "SELECT count(*) FROM enum_memory_op"));
    ASSERT_EQ(3, q_int(db, "SELECT count(*) FROM enum_tensor_op"));
    ASSERT_EQ(1, q_int(db, "SELECT name = 'pinned' FROM enum_mem_kind WHERE id = 2"));
    ASSERT_EQ(1, q_int(db, "SELECT name = 'import' FROM enum_memory_op WHERE id = 7"));
    ASSERT_EQ(1, q_int(db, "SELECT name = 'free_requested' FROM enum_tensor_op WHERE id = 3"));
    ASSERT_STREQ("pinned", vt_mem_kind_name(VT_MEMKIND_PINNED));
    ASSERT_STREQ("HtoD", vt_copy_kind_name(VT_COPY_HTOD));
    ASSERT_STREQ("import_close", vt_memop_name(VT_MEMOP_IMPORT_CLOSE));
    ASSERT(vt_mem_kind_name(99) == NULL);
    sqlite3_close(db);
}

/* Indexes are built for the tables a trace has: an older trace without tensor_event gets the others; the
 * compacted tables of schema 5 are views, which have none. */
TEST(index_older_trace)
{
    sqlite3 *db = open_mem();
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(SQLITE_OK, vt__schema_index(db));
    ASSERT_EQ(1, q_int(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'memory_event_ts'"));
    ASSERT_EQ(0, q_int(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'kernel_start'"));
    ASSERT_EQ(1, vt__schema_has_table(db, "kernel"));
    ASSERT_EQ(0, vt__schema_is_table(db, "kernel"));
    sqlite3_close(db);
    db = open_mem();
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(SQLITE_OK, vt_test_make_v4(db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP TABLE tensor_event", NULL, NULL, NULL));
    ASSERT_EQ(SQLITE_OK, vt__schema_index(db));
    ASSERT_EQ(1, q_int(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'kernel_start'"));
    ASSERT_EQ(0, q_int(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'tensor_event_ts'"));
    ASSERT_EQ(0, vt__schema_has_table(db, "tensor_event"));
    ASSERT_EQ(1, vt__schema_has_table(db, "kernel"));
    ASSERT_EQ(1, vt__schema_is_table(db, "kernel"));
    sqlite3_close(db);
}

TEST(time_base_round_trip)
{
    static const sqlite3_int64 aBase[] = {0, 1763750000000000000LL, -5};
    for (size_t i = 0; i < sizeof aBase / sizeof aBase[0]; i++) {
        sqlite3 *db = open_mem();
        char zSql[256], zVal[32];
        sqlite3_int64 b = aBase[i];
        ASSERT_EQ(SQLITE_OK, vt__schema_create_at(db, b, NULL));
        ASSERT_EQ(1, vt__meta_get(db, "time_base_ns", zVal, sizeof zVal));
        ASSERT_EQ(b, atoll(zVal));
        /* stored t and dur; start, end and ts read back absolute */
        snprintf(zSql, sizeof zSql,
                 "INSERT INTO kernel(t, dur) VALUES(%lld, 2500);"
                 "INSERT INTO nvtx_range(t, dur, kind) VALUES(7, NULL, 0);"
                 "INSERT INTO memory_event(t, op, mem_kind, address, bytes) VALUES(-3, 1, 3, 4096, 1);",
                 1700000000000000000LL - b);
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, zSql, NULL, NULL, NULL));
        ASSERT_EQ(1700000000000000000LL, q_int(db, "SELECT start FROM kernel"));
        ASSERT_EQ(1700000000000002500LL, q_int(db, "SELECT end FROM kernel"));
        ASSERT_EQ(7 + b, q_int(db, "SELECT start FROM nvtx_range"));
        ASSERT_EQ(INT64_MIN, q_int(db, "SELECT end FROM nvtx_range")); /* open range */
        ASSERT_EQ(b - 3, q_int(db, "SELECT ts FROM memory_event"));
        /* generated columns are read-only (computed by the view of a compacted table) */
        ASSERT_EQ(SQLITE_ERROR, sqlite3_exec(db, "UPDATE memory_event SET ts = 0", NULL, NULL, NULL));
        ASSERT_EQ(SQLITE_CONSTRAINT, sqlite3_exec(db, "UPDATE kernel SET start = 0", NULL, NULL, NULL));
        ASSERT_EQ(SQLITE_CONSTRAINT, sqlite3_exec(db, "INSERT INTO kernel(start) VALUES(5)", NULL, NULL, NULL));
        ASSERT_EQ(1700000000000000000LL, q_int(db, "SELECT start FROM kernel"));
        sqlite3_close(db);
    }
}

TEST(impossible_stored_times_read_null)
{
    sqlite3 *db = open_mem();
    ASSERT_EQ(SQLITE_OK, vt__schema_create_at(db, 1000, NULL));
    /* text would read as 0 in arithmetic, a huge value would overflow: both give NULL times */
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db,
                                      "INSERT INTO kernel(id, t, dur) VALUES(1, 'later', 5),"
                                      " (2, 9223372036854775807, 5), (3, 5, 'soon'), (4, 1e300, 1),"
                                      " (5, 4611686018427387903, 4611686018427387903)",
                                      NULL, NULL, NULL));
    ASSERT_EQ(INT64_MIN, q_int(db, "SELECT start FROM kernel WHERE id = 1"));
    ASSERT_EQ(INT64_MIN, q_int(db, "SELECT start FROM kernel WHERE id = 2"));
    ASSERT_EQ(1005, q_int(db, "SELECT start FROM kernel WHERE id = 3"));
    ASSERT_EQ(INT64_MIN, q_int(db, "SELECT end FROM kernel WHERE id = 3"));
    ASSERT_EQ(INT64_MIN, q_int(db, "SELECT start FROM kernel WHERE id = 4"));
    /* in range but the sum passes 2^63: a real number, never a wrapped integer */
    ASSERT_EQ(1, q_int(db, "SELECT typeof(end) = 'real' FROM kernel WHERE id = 5"));
    sqlite3_close(db);
}

TEST(stored_time_base)
{
    static const char *const azT[] = {"memory_event", "kernel", "buffer_use"};
    sqlite3 *db = open_mem();
    int64_t base = 0;
    ASSERT_EQ(SQLITE_OK, vt__schema_create_at(db, 1763750000123456789LL, NULL));
    ASSERT_EQ(1, vt__schema_time_base(db, azT, 3, &base));
    ASSERT_EQ(1763750000123456789LL, base);
    /* a base in meta that the DDL does not hold: the stored times cannot be trusted */
    ASSERT_EQ(SQLITE_OK, vt__meta_set(db, "time_base_ns", "5"));
    ASSERT_EQ(0, vt__schema_time_base(db, azT, 3, &base));
    ASSERT_EQ(SQLITE_OK, vt__meta_set(db, "time_base_ns", "17x"));
    ASSERT_EQ(0, vt__schema_time_base(db, azT, 3, &base));
    sqlite3_close(db);

    /* a table altered by hand, and a version-1 trace (no time base) */
    db = open_mem();
    ASSERT_EQ(SQLITE_OK, vt__schema_create_at(db, -5, NULL));
    ASSERT_EQ(1, vt__schema_time_base(db, azT, 3, &base));
    ASSERT_EQ(-5, base);
    /* a column added by hand leaves the time columns as they were */
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "ALTER TABLE memory_event ADD COLUMN note TEXT", NULL, NULL, NULL));
    ASSERT_EQ(1, vt__schema_time_base(db, azT, 3, &base));
    /* a compacted table's view made by hand: its t and dur cannot be trusted */
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP VIEW kernel; CREATE VIEW kernel AS SELECT id, dt AS t, dur, dt AS start,"
                                          " dt + dur AS \"end\" FROM kernel_row",
                                      NULL, NULL, NULL));
    ASSERT_EQ(0, vt__schema_time_base(db, azT, 3, &base));
    /* a table made by hand with other time columns: its stored times cannot be trusted */
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP VIEW kernel; CREATE TABLE kernel(t INTEGER, dur INTEGER,"
                                          " start INTEGER GENERATED ALWAYS AS (t) VIRTUAL,"
                                          " end INTEGER GENERATED ALWAYS AS (t + dur) VIRTUAL)",
                                      NULL, NULL, NULL));
    ASSERT_EQ(0, vt__schema_time_base(db, azT, 3, &base));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DELETE FROM meta WHERE key = 'time_base_ns'", NULL, NULL, NULL));
    ASSERT_EQ(0, vt__schema_time_base(db, azT, 3, &base));
    sqlite3_close(db);
}

TEST(older_version_accepted)
{
    sqlite3 *db = open_mem();
    char zMsg[256] = "";
    int version = -1;
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(SQLITE_OK, vt_test_make_v4(db));
    ASSERT_EQ(VT_SCHEMA_OK, vt__schema_check(db, &version, zMsg, sizeof zMsg));
    ASSERT_EQ(4, version);
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "PRAGMA user_version = 1;"
                                          " UPDATE meta SET value = '1' WHERE key = 'schema_version'",
                                      NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_OK, vt__schema_check(db, &version, zMsg, sizeof zMsg));
    ASSERT_EQ(1, version);
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "PRAGMA user_version = 0;"
                                          " UPDATE meta SET value = '0' WHERE key = 'schema_version'",
                                      NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_CORRUPT, vt__schema_check(db, &version, zMsg, sizeof zMsg));
    sqlite3_close(db);
}

TEST(foreign_database)
{
    sqlite3 *db = open_mem();
    char zMsg[256] = "";
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_FOREIGN, vt__schema_check(db, NULL, zMsg, sizeof zMsg));
    ASSERT_CONTAINS(zMsg, "not a vramtrace trace");
    sqlite3_close(db);
}

TEST(newer_version)
{
    sqlite3 *db = open_mem();
    char zMsg[256] = "";
    int version = 0;
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    /* a newer vramtrace stamps both places, like this one */
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "PRAGMA user_version=99;"
                                          " UPDATE meta SET value = '99' WHERE key = 'schema_version'",
                                      NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_NEWER, vt__schema_check(db, &version, zMsg, sizeof zMsg));
    ASSERT_EQ(99, version);
    ASSERT_CONTAINS(zMsg, "newer");
    sqlite3_close(db);
}

/*
 * Both version stamps are checked: PRAGMA user_version and meta 'schema_version'.
 * Each row: the user_version set, the SQL that sets meta's stamp (NULL: left as
 * created), the expected status and a word of the message.
 */
TEST(version_stamps_checked)
{
    static const struct {
        int userVersion;
        const char *zMeta;
        enum vt_schema_status want;
        const char *zWord;
    } aCase[] = {
        {VT_SCHEMA_VERSION, NULL, VT_SCHEMA_OK, ""},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = '999' WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT,
         "disagree (PRAGMA user_version 6, meta schema_version 999)"},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = '-1' WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT,
         "disagree"},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = '1' WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT,
         "disagree"},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = 'abc' WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT,
         "is 'abc', not a version number"},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = '02' WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT,
         "not a version number"},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = ' 2' WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT,
         "not a version number"},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = 2.0 WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT,
         "not a version number"},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = 99999999999999999999 WHERE key = 'schema_version'",
         VT_SCHEMA_CORRUPT, "not a version number"},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = NULL WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT,
         "is 'NULL', not a version number"},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = X'32' WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT,
         "not a version number"},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = '2' || char(0) || 'x' WHERE key = 'schema_version'",
         VT_SCHEMA_CORRUPT, "not a version number"},
        {VT_SCHEMA_VERSION, "UPDATE meta SET value = char(10) || '2' WHERE key = 'schema_version'",
         VT_SCHEMA_CORRUPT, "is '?2'"},
        {VT_SCHEMA_VERSION, "DELETE FROM meta WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT,
         "meta has no schema_version"},
        /* a hand-made meta without its primary key, holding the stamp twice */
        {VT_SCHEMA_VERSION,
         "DROP TABLE meta; CREATE TABLE meta(key, value);"
         " INSERT INTO meta VALUES('schema_version', '2'), ('schema_version', '3')",
         VT_SCHEMA_CORRUPT, "more than once"},
        {999, NULL, VT_SCHEMA_CORRUPT, "disagree (PRAGMA user_version 999, meta schema_version 6)"},
        {999, "UPDATE meta SET value = '999' WHERE key = 'schema_version'", VT_SCHEMA_NEWER, "newer"},
        /* a newer layout may keep its stamp elsewhere: not this build's to judge */
        {999, "DELETE FROM meta WHERE key = 'schema_version'", VT_SCHEMA_NEWER, "newer"},
        {999, "DROP TABLE meta", VT_SCHEMA_NEWER, "newer"},
        {-1, NULL, VT_SCHEMA_CORRUPT, "disagree"},
        {-1, "UPDATE meta SET value = '-1' WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT,
         "no schema version"},
        {0, "DELETE FROM meta WHERE key = 'schema_version'", VT_SCHEMA_CORRUPT, "no schema version"},
    };
    size_t i;
    for (i = 0; i < sizeof aCase / sizeof aCase[0]; i++) {
        sqlite3 *db = open_mem();
        char zMsg[256] = "", zSql[64];
        enum vt_schema_status got;
        ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
        snprintf(zSql, sizeof zSql, "PRAGMA user_version = %d", aCase[i].userVersion);
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, zSql, NULL, NULL, NULL));
        if (aCase[i].zMeta) ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, aCase[i].zMeta, NULL, NULL, NULL));
        got = vt__schema_check(db, NULL, zMsg, sizeof zMsg);
        if (got != aCase[i].want)
            VT__FAIL("case %zu (user_version %d, %s): expected status %d, got %d (%s)", i, aCase[i].userVersion,
                     aCase[i].zMeta ? aCase[i].zMeta : "meta as created", aCase[i].want, got, zMsg);
        ASSERT_CONTAINS(zMsg, aCase[i].zWord);
        sqlite3_close(db);
    }
}

TEST(missing_table)
{
    sqlite3 *db = open_mem();
    char zMsg[256] = "";
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP VIEW kernel", NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_CORRUPT, vt__schema_check(db, NULL, zMsg, sizeof zMsg));
    ASSERT_CONTAINS(zMsg, "kernel");
    sqlite3_close(db);
    db = open_mem();
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP VIEW memcpy", NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_CORRUPT, vt__schema_check(db, NULL, zMsg, sizeof zMsg));
    ASSERT_CONTAINS(zMsg, "view 'memcpy' is missing");
    sqlite3_close(db);
    db = open_mem(); /* version 4: the tables themselves */
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(SQLITE_OK, vt_test_make_v4(db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP TABLE kernel", NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_CORRUPT, vt__schema_check(db, NULL, zMsg, sizeof zMsg));
    ASSERT_CONTAINS(zMsg, "table 'kernel' is missing");
    sqlite3_close(db);
    /* a table every version has beyond the ten above, and a column: each named */
    db = open_mem();
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP TABLE buffer_use", NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_CORRUPT, vt__schema_check(db, NULL, zMsg, sizeof zMsg));
    ASSERT_STREQ("trace is damaged: table 'buffer_use' is missing", zMsg);
    sqlite3_close(db);
    db = open_mem();
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP VIEW memory_timeline; DROP VIEW CUDA_GPU_MEMORY_USAGE_EVENTS;"
                                          " ALTER TABLE memory_event DROP COLUMN stack_id", NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_CORRUPT, vt__schema_check(db, NULL, zMsg, sizeof zMsg));
    ASSERT_STREQ("trace is damaged: column 'stack_id' of table 'memory_event' is missing", zMsg);
    sqlite3_close(db);
}

TEST(not_sqlite)
{
    char zPath[] = "/tmp/vt_schema_XXXXXX";
    int fd = mkstemp(zPath);
    sqlite3 *db = NULL;
    char zMsg[256] = "";
    ASSERT(fd >= 0);
    ASSERT(write(fd, "this is not a database, just text padding it out to a header....", 64) == 64);
    close(fd);
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    ASSERT_EQ(VT_SCHEMA_NOT_SQLITE, vt__schema_check(db, NULL, zMsg, sizeof zMsg));
    sqlite3_close(db);
    unlink(zPath);
}

/* A trace locked by its writer (still being recorded): "locked", not "not a trace". */
TEST(locked_by_writer)
{
    char zPath[] = "/tmp/vt_schema_XXXXXX";
    int fd = mkstemp(zPath);
    sqlite3 *dbW = NULL, *dbR = NULL;
    char zMsg[256] = "";
    ASSERT(fd >= 0);
    close(fd);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &dbW));
    ASSERT_EQ(SQLITE_OK, vt__schema_create(dbW, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(dbW, "BEGIN EXCLUSIVE", NULL, NULL, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &dbR, SQLITE_OPEN_READONLY, NULL));
    ASSERT_EQ(VT_SCHEMA_BUSY, vt__schema_check(dbR, NULL, zMsg, sizeof zMsg));
    ASSERT_CONTAINS(zMsg, "locked by another process");
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(dbW, "COMMIT", NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_OK, vt__schema_check(dbR, NULL, zMsg, sizeof zMsg));
    sqlite3_close(dbR);
    sqlite3_close(dbW);
    unlink(zPath);
}

VT_TEST_LIST(T(create_and_check) T(enum_api_rows) T(memory_timeline_view) T(enum_tables_from_lists)
                 T(index_older_trace) T(time_base_round_trip)
                 T(impossible_stored_times_read_null) T(stored_time_base) T(older_version_accepted) T(foreign_database)
                 T(newer_version) T(version_stamps_checked) T(missing_table) T(not_sqlite)
                 T(locked_by_writer))
