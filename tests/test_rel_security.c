/* Reliability: security of the trace — mode 0600, no symlinks or foreign files, no secrets recorded, `sql` cannot write. */
#include <sys/stat.h>

#include "cli_util.h"
#include "config.h"
#include "core_util.h"
#include "session.h"

/*
 * Through the real lifecycle (tracer/session.c: output file, writer, process
 * metadata) and the built command:
 *  - the trace and its -wal/-shm companions are 0600 even under umask 000;
 *  - the output path refuses a symbolic link (to a file, or dangling) and an
 *    existing file that is not a trace, leaving both untouched, and creates
 *    nothing;
 *  - no environment value outside the documented allow-list reaches the file:
 *    the raw bytes of the closed trace (and of its WAL while running) never
 *    contain the secrets set in the environment;
 *  - `vramtrace sql` refuses statements that write: to the trace, to another
 *    file (ATTACH, VACUUM INTO), or to settings; the trace's bytes are the same
 *    after each attempt and no file appears;
 *  - `vramtrace sql` is a sandbox for the files it reads: fts3_tokenizer()
 *    neither shows a process address nor takes one, a trace's own views cannot
 *    call unsafe functions, and a query is bounded in string length, memory
 *    and time (exit 10 with one line saying which).
 */

#define SECRET "s3cr3t-9f8e7d6c"

static const char *const azSecretEnv[] = {
    "AWS_SECRET_ACCESS_KEY=" SECRET "-aws", "HF_TOKEN=" SECRET "-hf",
    "WANDB_API_KEY=" SECRET "-wandb", "DATABASE_URL=postgres://u:" SECRET "@db/x",
    "MY_RANK_TOKEN=" SECRET "-rank", "VRAMTRACE_SECRET=" SECRET "-vt", "LD_PRELOAD=/" SECRET ".so"};
static const char *const azAllowedEnv[] = {
    "CUDA_VISIBLE_DEVICES=1,3", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    "PYTORCH_ALLOC_CONF=max_split_size_mb:128", "RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=8"};

static const char *no_env(const char *zName)
{
    (void)zName;
    return NULL;
}

static void put_env(const char *const *az, size_t n)
{
    for (size_t i = 0; i < n; i++) ASSERT_EQ(0, putenv((char *)az[i]));
}

/* 1 if the file at zPath contains the bytes of zNeedle. */
static int file_contains(const char *zPath, const char *zNeedle)
{
    FILE *f = fopen(zPath, "rb");
    static char aBuf[1 << 22];
    size_t n, nNeedle = strlen(zNeedle);
    int bFound = 0;
    if (!f) return 0;
    n = fread(aBuf, 1, sizeof aBuf, f);
    fclose(f);
    for (size_t i = 0; i + nNeedle <= n && !bFound; i++) bFound = memcmp(aBuf + i, zNeedle, nNeedle) == 0;
    return bFound;
}

/* Start a session writing to zPath (no pattern escapes). Returns vt__session_start's result. */
static int start_at(const char *zPath, char *zErr, size_t nErr)
{
    struct vt_config cfg;
    vt__config_load(&cfg, no_env);
    if (strlen(zPath) >= sizeof cfg.zOutput) VT__FAIL("path too long: %s", zPath);
    memcpy(cfg.zOutput, zPath, strlen(zPath) + 1);
    cfg.quiet = 1;
    cfg.flush_ms = 50;
    return vt__session_start(&cfg, core_next_record, zErr, nErr);
}

TEST(mode_0600_under_umask_000)
{
    const char *zDir = cli_tmpdir();
    char zPath[PATH_MAX], zSide[PATH_MAX + 8], zErr[512];
    struct stat st;
    struct vt_hrec rec;
    snprintf(zPath, sizeof zPath, "%s/t.db", zDir);
    umask(0);
    ASSERT_EQ(0, start_at(zPath, zErr, sizeof zErr));
    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_API_CALL;
    rec.u.api.api = 1;
    ASSERT_EQ(0, vt__session_submit(&rec));
    usleep(300000); /* committed: the WAL and shared-memory files exist now */
    ASSERT_EQ(0, stat(zPath, &st));
    ASSERT_EQ(0600, st.st_mode & 0777);
    snprintf(zSide, sizeof zSide, "%s-wal", zPath);
    ASSERT_EQ(0, stat(zSide, &st));
    ASSERT_EQ(0600, st.st_mode & 0777);
    snprintf(zSide, sizeof zSide, "%s-shm", zPath);
    ASSERT_EQ(0, stat(zSide, &st));
    ASSERT_EQ(0600, st.st_mode & 0777);
    ASSERT_EQ(0, vt__session_close(5000));
    ASSERT_EQ(0, stat(zPath, &st));
    ASSERT_EQ(0600, st.st_mode & 0777);
    cli_cleanup();
}

TEST(refuses_symlinks_and_foreign_files)
{
    const char *zDir = cli_tmpdir();
    char zLink[PATH_MAX], zTarget[PATH_MAX], zDangling[PATH_MAX], zForeign[PATH_MAX], zErr[512];
    struct stat st;
    char *z;
    snprintf(zTarget, sizeof zTarget, "%s/victim.txt", zDir);
    snprintf(zLink, sizeof zLink, "%s/link.db", zDir);
    snprintf(zDangling, sizeof zDangling, "%s/dangling.db", zDir);
    snprintf(zForeign, sizeof zForeign, "%s/notes.db", zDir);
    cli_write(zTarget, "precious\n");
    ASSERT_EQ(0, symlink(zTarget, zLink));
    ASSERT_EQ(-1, start_at(zLink, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "symbolic link");
    ASSERT_EQ(0, vt__session_active());
    z = cli_read(zTarget);
    ASSERT_STREQ("precious\n", z);
    free(z);
    ASSERT_EQ(0, lstat(zLink, &st));
    ASSERT(S_ISLNK(st.st_mode));

    /* A dangling link would otherwise create the file it names, anywhere. */
    snprintf(zTarget, sizeof zTarget, "%s/created-through-link.db", zDir);
    ASSERT_EQ(0, symlink(zTarget, zDangling));
    ASSERT_EQ(-1, start_at(zDangling, zErr, sizeof zErr));
    ASSERT(stat(zTarget, &st) != 0);

    /* An SQLite database that is not a trace, and a text file: both refused, untouched. */
    {
        sqlite3 *db = NULL;
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zForeign, &db));
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "CREATE TABLE notes(x); INSERT INTO notes VALUES('keep me')", NULL,
                                          NULL, NULL));
        sqlite3_close(db);
    }
    ASSERT_EQ(-1, start_at(zForeign, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "refusing");
    ASSERT(file_contains(zForeign, "keep me"));
    cli_cleanup();
}

TEST(environment_allow_list_only)
{
    const char *zDir = cli_tmpdir();
    char zPath[PATH_MAX], zWal[PATH_MAX + 8], zErr[512];
    sqlite3 *db;
    put_env(azSecretEnv, sizeof azSecretEnv / sizeof azSecretEnv[0]);
    put_env(azAllowedEnv, sizeof azAllowedEnv / sizeof azAllowedEnv[0]);
    snprintf(zPath, sizeof zPath, "%s/env.db", zDir);
    snprintf(zWal, sizeof zWal, "%s-wal", zPath);
    ASSERT_EQ(0, start_at(zPath, zErr, sizeof zErr));
    usleep(300000); /* the start-up meta rows are committed into the WAL */
    ASSERT(!file_contains(zWal, SECRET));
    ASSERT(file_contains(zWal, "expandable_segments:True")); /* the scan does see committed text */
    ASSERT_EQ(0, vt__session_close(5000));
    ASSERT(!file_contains(zPath, SECRET));

    db = core_open_ro(zPath);
    ASSERT_STREQ("env.CUDA_VISIBLE_DEVICES|1,3;env.LOCAL_RANK|1;"
                 "env.PYTORCH_ALLOC_CONF|max_split_size_mb:128;"
                 "env.PYTORCH_CUDA_ALLOC_CONF|expandable_segments:True;env.RANK|3;env.WORLD_SIZE|8",
                 core_q_rows(db, "SELECT key, value FROM meta WHERE key LIKE 'env.%' ORDER BY key"));
    ASSERT_STREQ("3", core_q_rows(db, "SELECT value FROM meta WHERE key = 'rank'"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM meta WHERE value LIKE '%" SECRET "%'"));
    sqlite3_close(db);
    cli_cleanup();
}

TEST(sql_cannot_write)
{
    static const char *const azWrite[] = {
        "DELETE FROM meta",
        "UPDATE meta SET value = 'x'",
        "INSERT INTO meta VALUES('k', 'v')",
        "DROP TABLE kernel",
        "CREATE TABLE evil(x)",
        "ATTACH DATABASE '%s/attached.db' AS a",
        "VACUUM INTO '%s/copy.db'",
        "PRAGMA journal_mode=DELETE",
        "PRAGMA user_version=99",
        "SELECT 1; DELETE FROM meta",
        "SELECT load_extension('/nonexistent')",
    };
    const char *zExe = cli_vramtrace(), *zDir = cli_tmpdir();
    char zTrace[PATH_MAX], zOut[PATH_MAX], zErrF[PATH_MAX], zSql[PATH_MAX + 64];
    char *zBefore, *zAfter;
    struct stat st;
    size_t nBefore, i;
    snprintf(zTrace, sizeof zTrace, "%s/t.db", zDir);
    snprintf(zOut, sizeof zOut, "%s/out.txt", zDir);
    snprintf(zErrF, sizeof zErrF, "%s/err.txt", zDir);
    cli_make_trace(zTrace, 1);
    ASSERT_EQ(0, stat(zTrace, &st));
    nBefore = (size_t)st.st_size;
    zBefore = malloc(nBefore);
    {
        FILE *f = fopen(zTrace, "rb");
        ASSERT(f && fread(zBefore, 1, nBefore, f) == nBefore);
        fclose(f);
    }
    for (i = 0; i < sizeof azWrite / sizeof azWrite[0]; i++) {
        char *argv[] = {(char *)zExe, "sql", zTrace, zSql, NULL};
        int rc;
        snprintf(zSql, sizeof zSql, azWrite[i], zDir);
        rc = cli_run(argv, NULL, zOut, zErrF);
        if (rc == 0) VT__FAIL("sql accepted a writing statement: %s", zSql);
        ASSERT(rc < 128); /* refused, not crashed */
    }
    snprintf(zSql, sizeof zSql, "%s/attached.db", zDir);
    ASSERT(stat(zSql, &st) != 0);
    snprintf(zSql, sizeof zSql, "%s/copy.db", zDir);
    ASSERT(stat(zSql, &st) != 0);
    ASSERT_EQ(0, stat(zTrace, &st));
    ASSERT_EQ(nBefore, st.st_size);
    {
        FILE *f = fopen(zTrace, "rb");
        zAfter = malloc(nBefore);
        ASSERT(f && fread(zAfter, 1, nBefore, f) == nBefore);
        fclose(f);
    }
    ASSERT(memcmp(zBefore, zAfter, nBefore) == 0);
    free(zBefore);
    free(zAfter);
    /* Reading still works (the refusals are about writing, not a broken command). */
    {
        char *argv[] = {(char *)zExe, "sql", zTrace, "SELECT count(*) FROM meta WHERE key = 'pid'", NULL};
        char *z;
        ASSERT_EQ(0, cli_run(argv, NULL, zOut, zErrF));
        z = cli_read(zOut);
        ASSERT_CONTAINS(z, "1");
        free(z);
    }
    cli_cleanup();
}

/* Run `vramtrace sql [zOpt] zTrace zSql` (zOpt may be NULL); *pzOut and *pzErr get its output (heap). */
static int sql_run(const char *zOpt, const char *zTrace, const char *zSql, char **pzOut, char **pzErr)
{
    const char *zDir = cli_tmpdir();
    char zOut[PATH_MAX], zErr[PATH_MAX];
    char *argv[] = {(char *)cli_vramtrace(), "sql", "--format", "csv", "--no-header", (char *)zOpt,
                    (char *)zTrace, (char *)zSql, NULL};
    int rc;
    if (!zOpt) argv[5] = (char *)zTrace, argv[6] = (char *)zSql, argv[7] = NULL;
    snprintf(zOut, sizeof zOut, "%s/out.txt", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    rc = cli_run(argv, NULL, zOut, zErr);
    *pzOut = cli_read(zOut);
    *pzErr = cli_read(zErr);
    return rc;
}

/* A query's error: exactly one "vramtrace:" line on stderr. */
static void assert_one_line(const char *zErr)
{
    ASSERT(strncmp(zErr, "vramtrace: ", 11) == 0);
    ASSERT(strchr(zErr, '\n') == zErr + strlen(zErr) - 1);
}

TEST(sql_sandbox)
{
    const char *zDir = cli_tmpdir();
    char zTrace[PATH_MAX], zSql[1024], *zOut, *zErr;
    sqlite3 *db;
    int i, n;
    snprintf(zTrace, sizeof zTrace, "%s/t.db", zDir);
    cli_make_trace(zTrace, 1);
    /* A hostile trace: views of its own that call unsafe functions when a query reads them. */
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "CREATE VIEW leak AS SELECT hex(fts3_tokenizer('simple')) AS p;"
                 "CREATE VIEW plant AS SELECT fts3_tokenizer('evil', x'4141414141414141') AS p;");
    sqlite3_close(db);

    /* fts3_tokenizer(): no process address out (NULL), none in (refused). */
    ASSERT_EQ(0, sql_run(NULL, zTrace, "SELECT fts3_tokenizer('simple') IS NULL", &zOut, &zErr));
    ASSERT_STREQ("1\n", zOut);
    free(zOut), free(zErr);
    ASSERT_EQ(2, sql_run(NULL, zTrace, "SELECT fts3_tokenizer('evil', x'4141414141414141')", &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "fts3tokenize disabled");
    assert_one_line(zErr);
    free(zOut), free(zErr);
    /* Unsafe functions in the file's own views (trusted_schema off). */
    ASSERT_EQ(2, sql_run(NULL, zTrace, "SELECT * FROM leak", &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "unsafe use of fts3_tokenizer()");
    ASSERT_STREQ("", zOut);
    free(zOut), free(zErr);
    ASSERT_EQ(2, sql_run(NULL, zTrace, "SELECT * FROM plant", &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "unsafe use of fts3_tokenizer()");
    free(zOut), free(zErr);
    /* The settings are in force, and a query cannot lift them. */
    ASSERT_EQ(0, sql_run(NULL, zTrace, "PRAGMA trusted_schema; PRAGMA hard_heap_limit", &zOut, &zErr));
    ASSERT_STREQ("0\n\n1073741824\n", zOut);
    free(zOut), free(zErr);
    ASSERT_EQ(2, sql_run(NULL, zTrace, "PRAGMA hard_heap_limit = 0", &zOut, &zErr));
    free(zOut), free(zErr);
    ASSERT_EQ(2, sql_run(NULL, zTrace, "PRAGMA trusted_schema = 1", &zOut, &zErr));
    free(zOut), free(zErr);

    /* String length: 64 MiB at most, made or read. */
    ASSERT_EQ(0, sql_run(NULL, zTrace, "SELECT length(zeroblob(67108864))", &zOut, &zErr));
    ASSERT_STREQ("67108864\n", zOut);
    free(zOut), free(zErr);
    ASSERT_EQ(10, sql_run(NULL, zTrace, "SELECT length(zeroblob(67108865))", &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "longer than the 64 MiB");
    assert_one_line(zErr);
    free(zOut), free(zErr);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zTrace, &db));
    cli_exec(db, "INSERT INTO meta VALUES('huge', zeroblob(70000000))");
    sqlite3_close(db);
    ASSERT_EQ(10, sql_run(NULL, zTrace, "SELECT substr(value, 1, 3) FROM meta WHERE key = 'huge'", &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "longer than the 64 MiB");
    free(zOut), free(zErr);

    /* Memory: 18 values of 60 MB held at once pass the 1 GiB bound. */
    n = snprintf(zSql, sizeof zSql, "SELECT 1");
    for (i = 0; i < 18; i++) n += snprintf(zSql + n, sizeof zSql - (size_t)n, ", zeroblob(60000000) || x'%02x'", i);
    ASSERT_EQ(10, sql_run(NULL, zTrace, zSql, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "out of memory: the query needs more than the 1024 MiB");
    assert_one_line(zErr);
    free(zOut), free(zErr);

    /* Time: a query that never ends stops at --timeout (no assertion on how long it took). */
    ASSERT_EQ(10, sql_run("--timeout=0.5", zTrace,
                         "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
                         &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "ran longer than --timeout 0.5 s and was stopped");
    assert_one_line(zErr);
    free(zOut), free(zErr);
    /* instr() of a 30 MB needle almost everywhere in a 60 MB haystack runs on inside one call (a naive
     * search), where no progress handler can stop it: the watchdog does */
    ASSERT_EQ(10, sql_run("--timeout=0.5", zTrace,
                          "SELECT instr(printf('%.*c', 60000000, 'a'), printf('%.*c', 30000000, 'a') || 'b')", &zOut,
                          &zErr));
    ASSERT_CONTAINS(zErr, "ran longer than --timeout 0.5 s and was stopped");
    assert_one_line(zErr);
    free(zOut), free(zErr);
    /* printf('%.*c', 2000000000, 'x') would pad past the length bound: refused at once, no 2e9 appends */
    ASSERT_EQ(10, sql_run("--timeout=0", zTrace, "SELECT printf('%.*c', 2000000000, 'x') IS NULL", &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "longer than the 64 MiB vramtrace sql allows");
    assert_one_line(zErr);
    free(zOut), free(zErr);
    ASSERT_EQ(0, sql_run("--timeout=0", zTrace, "SELECT count(*) FROM kernel", &zOut, &zErr));
    ASSERT_STREQ("3\n", zOut);
    free(zOut), free(zErr);
    ASSERT_EQ(2, sql_run("--timeout=-1", zTrace, "SELECT 1", &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "--timeout: '-1' is not a number of seconds");
    free(zOut), free(zErr);
    ASSERT_EQ(2, sql_run("--timeout=1e9", zTrace, "SELECT 1", &zOut, &zErr));
    free(zOut), free(zErr);
    cli_cleanup();
}

VT_TEST_LIST(T(mode_0600_under_umask_000) T(refuses_symlinks_and_foreign_files) T(environment_allow_list_only)
             T(sql_cannot_write) T(sql_sandbox))
