/* Tests of 'vramtrace upgrade': older traces gain the stored views; nothing else changes; bad input is refused. */
#include "cli_util.h"
#include "v4_util.h"
#include "util/errors.h"
#include "vramtrace/schema.h"

static char zOut[PATH_MAX + 16], zErr[PATH_MAX + 16];

/* Run `vramtrace upgrade ARGS...`; returns the exit code (stdout, stderr files in zOut, zErr). */
static int upgrade(char **azArg)
{
    char *azArgv[8];
    int n = 0;
    azArgv[n++] = (char *)cli_vramtrace();
    azArgv[n++] = "upgrade";
    for (; *azArg && n < 7; azArg++) azArgv[n++] = *azArg;
    azArgv[n] = NULL;
    snprintf(zOut, sizeof zOut, "%s/out.txt", cli_tmpdir());
    snprintf(zErr, sizeof zErr, "%s/err.txt", cli_tmpdir());
    return cli_run(azArgv, NULL, zOut, zErr);
}

/* One integer from a query on the trace at zPath (-1 when the query fails). */
static long long q(const char *zPath, const char *zSql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *p = NULL;
    long long v = -1;
    if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, zSql, -1, &p, NULL) == SQLITE_OK && sqlite3_step(p) == SQLITE_ROW)
        v = sqlite3_column_int64(p, 0);
    sqlite3_finalize(p);
    sqlite3_close(db);
    return v;
}

/* A trace as version 4 wrote it: the compacted tables as plain tables. */
static void make_v4(const char *zPath)
{
    sqlite3 *db = NULL;
    cli_make_trace(zPath, 1);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    ASSERT_EQ(SQLITE_OK, vt_test_make_v4(db));
    sqlite3_close(db);
}

/* A trace as version 3 wrote it: version 4's tables, no stored views. */
static void make_v3(const char *zPath)
{
    sqlite3 *db = NULL;
    make_v4(zPath);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    {
        sqlite3_stmt *p = NULL;
        char zSql[256];
        ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'view' AND name NOT IN"
                                                    " ('memory_timeline', 'allocation')", -1, &p, NULL));
        while (sqlite3_step(p) == SQLITE_ROW) {
            snprintf(zSql, sizeof zSql, "DROP VIEW \"%s\"", (const char *)sqlite3_column_text(p, 0));
            sqlite3_finalize(p);
            cli_exec(db, zSql);
            ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'view' AND name"
                                                        " NOT IN ('memory_timeline', 'allocation')", -1, &p, NULL));
        }
        sqlite3_finalize(p);
    }
    cli_exec(db, "PRAGMA user_version = 3; UPDATE meta SET value = '3' WHERE key = 'schema_version'");
    sqlite3_close(db);
}

/* Every row of the compacted tables, as text (ids, times, every column): equal before and after an upgrade. */
static char *rows_text(const char *zPath)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *p = NULL;
    char *z = NULL;
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    ASSERT_EQ(SQLITE_OK,
              sqlite3_prepare_v2(db,
                                 "SELECT coalesce((SELECT group_concat(x, ';') FROM (SELECT quote(id) || ',' || quote(start) || ','"
                                 " || quote(\"end\") || ',' || quote(name_id) || ',' || quote(correlation) || ',' ||"
                                 " quote(grid_x) || ',' || quote(stream) AS x FROM kernel ORDER BY id)), '') || '|' ||"
                                 " coalesce((SELECT group_concat(x, ';') FROM (SELECT quote(id) || ',' || quote(start) || ',' ||"
                                 " quote(api) || ',' || quote(correlation) || ',' || quote(ptr) || ',' || quote(bytes) ||"
                                 " ',' || quote(stack_id) AS x FROM api_call ORDER BY id)), '') || '|' ||"
                                 " coalesce((SELECT group_concat(x, ';') FROM (SELECT quote(id) || ',' || quote(start) || ','"
                                 " || quote(\"end\") || ',' || quote(bytes) || ',' || quote(src) || ',' || quote(dst)"
                                 " || ',' || quote(copy_kind) AS x FROM memcpy ORDER BY id)), '')",
                                 -1, &p, NULL));
    ASSERT_EQ(SQLITE_ROW, sqlite3_step(p));
    z = strdup(sqlite3_column_text(p, 0) ? (const char *)sqlite3_column_text(p, 0) : "");
    sqlite3_finalize(p);
    sqlite3_close(db);
    return z;
}

TEST(upgrade_v3_and_v4_to_v5)
{
    char zTrace[PATH_MAX + 16], *z, *zBefore, *zAfter;
    char *azArg[] = {zTrace, NULL};
    snprintf(zTrace, sizeof zTrace, "%s/t.db", cli_tmpdir());
    make_v3(zTrace);
    zBefore = rows_text(zTrace);
    ASSERT(strlen(zBefore) > 20);
    ASSERT_EQ(0, q(zTrace, "SELECT count(*) FROM sqlite_schema WHERE name = 'StringIds'"));
    ASSERT_EQ(VT_EXIT_OK, upgrade(azArg));
    z = cli_read(zOut);
    ASSERT_CONTAINS(z, "schema 3 -> 6 (views added, rows compacted, calls folded)");
    free(z);
    ASSERT_EQ(VT_SCHEMA_VERSION, q(zTrace, "PRAGMA user_version"));
    ASSERT_EQ(VT_SCHEMA_VERSION, q(zTrace, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'schema_version'"));
    ASSERT_EQ(4, q(zTrace, "SELECT count(*) FROM sqlite_schema WHERE type = 'view' AND name IN ('kernel', 'api_call',"
                           " 'memcpy', 'memset')"));
    ASSERT_EQ(0, q(zTrace, "SELECT count(*) FROM sqlite_schema WHERE name GLOB 'vt_v4_*'"));
    /* the always-on mode's table, empty, with the generated times of a fresh trace */
    ASSERT_EQ(0, q(zTrace, "SELECT count(*) FROM kernel_summary"));
    ASSERT_EQ(1, q(zTrace, "SELECT count(*) FROM pragma_table_xinfo('kernel_summary') WHERE name = 'start'"));
    /* the same rows, ids and values, now read through the views */
    zAfter = rows_text(zTrace);
    ASSERT_STREQ(zBefore, zAfter);
    free(zAfter);
    /* the views read the trace's own rows */
    ASSERT_EQ(q(zTrace, "SELECT count(*) FROM kernel"), q(zTrace, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    ASSERT_EQ(q(zTrace, "SELECT count(*) FROM device"), q(zTrace, "SELECT count(*) FROM TARGET_INFO_GPU"));
    ASSERT_EQ(VT_EXIT_OK, upgrade(azArg)); /* again: nothing to do */
    z = cli_read(zOut);
    ASSERT_CONTAINS(z, "schema 6, already current");
    free(z);
    /* a schema 4 trace whose kernel view predates kernel_name (names as stored): compacted, that view replaced */
    make_v4(zTrace);
    {
        sqlite3 *db = NULL;
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
        cli_exec(db, "DROP VIEW CUPTI_ACTIVITY_KIND_KERNEL; CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS"
                     " SELECT k.start, k.end, s.value AS demangledName FROM kernel k JOIN string s ON s.id = k.name_id");
        sqlite3_close(db);
    }
    ASSERT_EQ(VT_EXIT_OK, upgrade(azArg));
    z = cli_read(zOut);
    ASSERT_CONTAINS(z, "schema 4 -> 6 (rows compacted, calls folded)");
    free(z);
    ASSERT_EQ(1, q(zTrace, "SELECT count(*) FROM sqlite_schema WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'"
                           " AND sql LIKE '%kernel_name%'"));
    ASSERT_EQ(q(zTrace, "SELECT count(*) FROM kernel"), q(zTrace, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    zAfter = rows_text(zTrace);
    ASSERT_STREQ(zBefore, zAfter);
    free(zAfter);
    free(zBefore);
    cli_cleanup();
}

/* Copy file zFrom to zTo. */
static void copy_file(const char *zFrom, const char *zTo)
{
    FILE *fi = fopen(zFrom, "rb"), *fo = fopen(zTo, "wb");
    char buf[65536];
    size_t k;
    ASSERT(fi && fo);
    while ((k = fread(buf, 1, sizeof buf, fi)) > 0) ASSERT_EQ(k, fwrite(buf, 1, k, fo));
    fclose(fi);
    fclose(fo);
}

/* Rows of zView (columns zCols) in the trace at zPath and not in the one at zOther, and the reverse, summed. */
static long long differ(const char *zPath, const char *zOther, const char *zView, const char *zCols)
{
    char zSql[1024];
    sqlite3 *db = NULL;
    sqlite3_stmt *p = NULL;
    long long n = -1;
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    snprintf(zSql, sizeof zSql, "ATTACH '%s' AS o", zOther);
    cli_exec(db, zSql);
    snprintf(zSql, sizeof zSql,
             "SELECT (SELECT count(*) FROM (SELECT %s FROM main.%s EXCEPT SELECT %s FROM o.%s))"
             " + (SELECT count(*) FROM (SELECT %s FROM o.%s EXCEPT SELECT %s FROM main.%s))"
             " + abs((SELECT count(*) FROM main.%s) - (SELECT count(*) FROM o.%s))",
             zCols, zView, zCols, zView, zCols, zView, zCols, zView, zView, zView);
    if (sqlite3_prepare_v2(db, zSql, -1, &p, NULL) == SQLITE_OK && sqlite3_step(p) == SQLITE_ROW) n = sqlite3_column_int64(p, 0);
    sqlite3_finalize(p);
    sqlite3_close(db);
    return n;
}

#define MEMORY_EVENT_V5_COLS                                                                                          \
    "id, t, op, mem_kind, address, bytes, device, context, stream, correlation, api, is_async, pool_type, pool_address," \
    " pool_threshold, pool_size, pool_used, pc, thread, stack_id, source_id"

/*
 * Version 5 to 6 on a trace of the writer benchmark's mix (tests/data/bench-v5.db): the calls of
 * copies, sets, allocations and frees are folded into their activity rows where these hold the
 * calls' values; every view shows what version 5 showed (rows, ids, values); a call whose values
 * differ stays a row of its own; edits through the views keep every call.
 */
TEST(upgrade_v5_folds_calls)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zSrc[PATH_MAX], zV5[PATH_MAX + 16], zTrace[PATH_MAX + 16], *z;
    char *azArg[] = {zTrace, NULL};
    sqlite3 *db = NULL;
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zSrc, sizeof zSrc, "%s/bench-v5.db", zData);
    snprintf(zV5, sizeof zV5, "%s/v5.db", cli_tmpdir());
    snprintf(zTrace, sizeof zTrace, "%s/v6.db", cli_tmpdir());
    copy_file(zSrc, zV5);
    ASSERT_EQ(5, q(zV5, "PRAGMA user_version"));
    ASSERT_EQ(600, q(zV5, "SELECT count(*) FROM api_call"));
    /* one copy's call that no longer holds its copy's bytes: it cannot fold (edited through version 5's view) */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zV5, &db));
    cli_exec(db, "UPDATE api_call SET bytes = bytes + 1 WHERE correlation = (SELECT min(correlation) FROM memcpy)");
    sqlite3_close(db);
    copy_file(zV5, zTrace);
    ASSERT_EQ(VT_EXIT_OK, upgrade(azArg));
    z = cli_read(zOut);
    ASSERT_CONTAINS(z, "schema 5 -> 6 (calls folded)");
    free(z);
    ASSERT_EQ(6, q(zTrace, "PRAGMA user_version"));
    ASSERT_EQ(1, q(zTrace, "SELECT count(*) FROM api_call_row")); /* the edited call alone */
    ASSERT_EQ(299, q(zTrace, "SELECT count(*) FROM memcpy_row WHERE call_sig IS NOT NULL"));
    ASSERT_EQ(100, q(zTrace, "SELECT count(*) FROM memset_row WHERE call_sig IS NOT NULL"));
    ASSERT_EQ(200, q(zTrace, "SELECT count(*) FROM memory_event WHERE call_sig IS NOT NULL"));
    /* what every view shows is version 5's */
    ASSERT_EQ(0, differ(zTrace, zV5, "api_call", "*"));
    ASSERT_EQ(0, differ(zTrace, zV5, "memcpy", "*"));
    ASSERT_EQ(0, differ(zTrace, zV5, "memset", "*"));
    ASSERT_EQ(0, differ(zTrace, zV5, "kernel", "*"));
    ASSERT_EQ(0, differ(zTrace, zV5, "memory_event", MEMORY_EVENT_V5_COLS));
    ASSERT_EQ(0, differ(zTrace, zV5, "CUPTI_ACTIVITY_KIND_RUNTIME", "*"));
    ASSERT_EQ(0, differ(zTrace, zV5, "CUPTI_ACTIVITY_KIND_DRIVER", "*"));
    /* a copy, a set and allocations changed or deleted keep their calls (stored as rows of their own) */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "UPDATE memcpy SET bytes = bytes + 1 WHERE id = 2; DELETE FROM memset WHERE id = 1;"
                 " DELETE FROM memory_event WHERE id = 1; UPDATE memory_event SET address = 5 WHERE id = 2;"
                 " UPDATE memory_event SET stack_id = 7 WHERE id = 3");
    sqlite3_close(db);
    ASSERT_EQ(5, q(zTrace, "SELECT count(*) FROM api_call_row"));
    ASSERT_EQ(0, differ(zTrace, zV5, "api_call", "*"));
    /* a folded call changed and another deleted through the api_call view */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "UPDATE api_call SET status = 5 WHERE id = (SELECT call_id FROM memcpy_row WHERE id = 3);"
                 " DELETE FROM api_call WHERE id = (SELECT call_id FROM memset_row WHERE id = 2);"
                 " INSERT INTO api_call(api, t, dur, correlation) VALUES(1, 100, 5, 999999)");
    sqlite3_close(db);
    ASSERT_EQ(600, q(zTrace, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(1, q(zTrace, "SELECT count(*) FROM api_call WHERE status = 5"));
    ASSERT_EQ(0, q(zTrace, "SELECT count(*) FROM memcpy_row WHERE id = 3 AND call_sig IS NOT NULL"));
    ASSERT_EQ(q(zV5, "SELECT max(id) FROM api_call") + 1, q(zTrace, "SELECT id FROM api_call WHERE correlation = 999999"));
    /* the changed call both ways (2), the deleted one and the new one: 4 rows differ, the counts are equal */
    ASSERT_EQ(4, differ(zTrace, zV5, "api_call", "*"));
    ASSERT_EQ(VT_EXIT_OK, upgrade(azArg)); /* again: nothing to do */
    z = cli_read(zOut);
    ASSERT_CONTAINS(z, "schema 6, already current");
    free(z);
    cli_cleanup();
}

TEST(upgrade_v1_keeps_its_number_and_copy)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zSrc[PATH_MAX], zCopy[PATH_MAX + 16], zNew[PATH_MAX + 16], *z;
    char *azCopy[] = {"-o", zNew, zCopy, NULL};
    char *azAgain[] = {"--output", zNew, zCopy, NULL};
    FILE *fi, *fo;
    char buf[65536];
    size_t k;
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zSrc, sizeof zSrc, "%s/example-train-v1.db", zData);
    snprintf(zCopy, sizeof zCopy, "%s/v1.db", cli_tmpdir());
    snprintf(zNew, sizeof zNew, "%s/v1-views.db", cli_tmpdir());
    fi = fopen(zSrc, "rb");
    fo = fopen(zCopy, "wb");
    ASSERT(fi && fo);
    while ((k = fread(buf, 1, sizeof buf, fi)) > 0) ASSERT_EQ(k, fwrite(buf, 1, k, fo));
    fclose(fi);
    fclose(fo);
    ASSERT_EQ(VT_EXIT_OK, upgrade(azCopy));
    z = cli_read(zOut);
    ASSERT_CONTAINS(z, "schema 1, views added");
    free(z);
    ASSERT_EQ(0, q(zCopy, "SELECT count(*) FROM sqlite_schema WHERE name = 'StringIds'")); /* -o: untouched */
    ASSERT_EQ(1, q(zNew, "PRAGMA user_version")); /* other tables: the number stays */
    ASSERT_EQ(q(zNew, "SELECT count(*) FROM kernel"), q(zNew, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    ASSERT(q(zNew, "SELECT count(*) FROM site") > 0);
    ASSERT_EQ(VT_EXIT_NOFILE, upgrade(azAgain)); /* -o never overwrites */
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "exists; choose a new file");
    free(z);
    cli_cleanup();
}

TEST(upgrade_bad_input)
{
    char zText[PATH_MAX + 16], zNewer[PATH_MAX + 16], zGood[PATH_MAX + 16], zMissing[PATH_MAX + 16], *z;
    char *azNone[] = {NULL};
    char *azText[] = {zText, NULL};
    char *azNewer[] = {zNewer, NULL};
    char *azMixed[] = {zGood, zMissing, NULL};
    char *azTwoOut[] = {"-o", zText, zGood, zNewer, NULL};
    char *azHelp[] = {"--help", NULL};
    sqlite3 *db = NULL;
    snprintf(zText, sizeof zText, "%s/notes.txt", cli_tmpdir());
    snprintf(zNewer, sizeof zNewer, "%s/newer.db", cli_tmpdir());
    snprintf(zGood, sizeof zGood, "%s/good.db", cli_tmpdir());
    snprintf(zMissing, sizeof zMissing, "%s/missing.db", cli_tmpdir());
    cli_write(zText, "not a database, just text long enough to be read as a header\n");
    make_v3(zGood);
    cli_make_trace(zNewer, 1);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zNewer, &db));
    cli_exec(db, "PRAGMA user_version = 999; UPDATE meta SET value = '999' WHERE key = 'schema_version'");
    sqlite3_close(db);
    ASSERT_EQ(VT_EXIT_USAGE, upgrade(azNone));
    ASSERT_EQ(VT_EXIT_USAGE, upgrade(azTwoOut));
    ASSERT_EQ(VT_EXIT_NOT_TRACE, upgrade(azText));
    ASSERT_EQ(VT_EXIT_TOO_NEW, upgrade(azNewer));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "newer");
    free(z);
    ASSERT_EQ(999, q(zNewer, "PRAGMA user_version")); /* untouched */
    ASSERT_EQ(VT_EXIT_PARTIAL, upgrade(azMixed));      /* the good one is upgraded, the missing one named */
    ASSERT_EQ(VT_SCHEMA_VERSION, q(zGood, "PRAGMA user_version"));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "missing.db: No such file or directory"); /* said as every reader says it */
    free(z);
    {
        char *azDir[] = {(char *)cli_tmpdir(), NULL};
        char zNew[PATH_MAX + 16];
        char *azCopyMissing[] = {"-o", zNew, zMissing, NULL};
        snprintf(zNew, sizeof zNew, "%s/new.db", cli_tmpdir());
        ASSERT_EQ(VT_EXIT_NOFILE, upgrade(azDir));
        z = cli_read(zErr);
        ASSERT_CONTAINS(z, "is a directory, not a trace");
        free(z);
        ASSERT_EQ(VT_EXIT_NOFILE, upgrade(azCopyMissing));
        z = cli_read(zErr);
        ASSERT_CONTAINS(z, "missing.db: No such file or directory");
        free(z);
    }
    ASSERT_EQ(VT_EXIT_OK, upgrade(azHelp));
    z = cli_read(zOut);
    ASSERT_CONTAINS(z, "usage: vramtrace upgrade [-o OUT] TRACE...");
    free(z);
    cli_cleanup();
}

/* A trace the user may read but not write: exit 3 (not writable) with SQLite's reason, not 7 (internal). As root,
 * whom no mode stops, the command runs as user nobody through setpriv (util-linux). */
TEST(upgrade_read_only_trace)
{
    const char *zDir = cli_tmpdir();
    char zPath[PATH_MAX + 16], *z;
    char *azArgv[10];
    int n = 0;
    snprintf(zPath, sizeof zPath, "%s/ro.db", zDir);
    make_v3(zPath); /* old: the upgrade has to write */
    ASSERT_EQ(0, chmod(zPath, 0444));
    if (geteuid() == 0) {
        char *azProbe[] = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           (char *)cli_vramtrace(), "info", zPath, NULL};
        if (access(azProbe[0], X_OK) != 0) SKIP("running as root, whom no file mode stops: needs setpriv (util-linux)");
        chmod(zDir, 0755); /* nobody reads the trace; the directories above must let it through */
        if (cli_run(azProbe, NULL, NULL, NULL) != 0)
            SKIP("running as root, and user nobody cannot reach TMPDIR: run as a user, or with TMPDIR under /tmp");
        for (int i = 0; i < 4; i++) azArgv[n++] = azProbe[i];
    }
    azArgv[n++] = (char *)cli_vramtrace();
    azArgv[n++] = "upgrade";
    azArgv[n++] = zPath;
    azArgv[n] = NULL;
    snprintf(zErr, sizeof zErr, "%s/err.txt", cli_tmpdir());
    ASSERT_EQ(VT_EXIT_NOFILE, cli_run(azArgv, NULL, NULL, zErr));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "ro.db: cannot upgrade: attempt to write a readonly database");
    free(z);
    ASSERT_EQ(3, q(zPath, "PRAGMA user_version")); /* untouched */
    cli_cleanup();
}

VT_TEST_LIST(T(upgrade_v3_and_v4_to_v5) T(upgrade_v5_folds_calls) T(upgrade_v1_keeps_its_number_and_copy) T(upgrade_bad_input)
                 T(upgrade_read_only_trace))
