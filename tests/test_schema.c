/* Tests for the trace schema module: creation, version stamps and validation of bad input. */
#include <sqlite3.h>

#include "schema.h"
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
                           "INSERT INTO memory_event(ts,op,mem_kind,address,bytes,device) VALUES"
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
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_NEWER, vt__schema_check(db, &version, zMsg, sizeof zMsg));
    ASSERT_EQ(99, version);
    ASSERT_CONTAINS(zMsg, "newer");
    sqlite3_close(db);
}

TEST(missing_table)
{
    sqlite3 *db = open_mem();
    char zMsg[256] = "";
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP TABLE kernel", NULL, NULL, NULL));
    ASSERT_EQ(VT_SCHEMA_CORRUPT, vt__schema_check(db, NULL, zMsg, sizeof zMsg));
    ASSERT_CONTAINS(zMsg, "kernel");
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

VT_TEST_LIST(T(create_and_check) T(enum_api_rows) T(memory_timeline_view) T(foreign_database)
                 T(newer_version) T(missing_table) T(not_sqlite))
