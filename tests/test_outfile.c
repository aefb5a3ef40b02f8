/* Tests of tracer/outfile.c: pattern expansion, 0600 creation, symlink refusal, safe replacement. */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "outfile.h"
#include "vramtrace/outname.h"
#include "vramtrace/schema.h"
#include "vt_test.h"

/* A fresh private directory for one test. */
static void make_dir(char *zDir, size_t n)
{
    snprintf(zDir, n, "/tmp/vt_outfile_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
}

static void write_file(const char *zPath, const char *zText)
{
    int fd = open(zPath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT(fd >= 0);
    ASSERT_EQ((long)strlen(zText), write(fd, zText, strlen(zText)));
    close(fd);
}

/* Make a complete trace at zPath (schema created, header written) with the given meta rows
 * (NULL: row absent). */
static void make_trace_meta(const char *zPath, const char *zPid, const char *zHost, const char *zEnd)
{
    sqlite3 *db = NULL;
    char zSql[512];
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    ASSERT_EQ(SQLITE_OK, vt__schema_create(db, NULL));
    if (zPid) {
        snprintf(zSql, sizeof zSql, "INSERT INTO meta VALUES('pid','%s')", zPid);
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, zSql, NULL, NULL, NULL));
    }
    if (zHost) {
        snprintf(zSql, sizeof zSql, "INSERT INTO meta VALUES('hostname','%s')", zHost);
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, zSql, NULL, NULL, NULL));
    }
    if (zEnd) {
        snprintf(zSql, sizeof zSql, "INSERT INTO meta VALUES('end_ns','%s')", zEnd);
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, zSql, NULL, NULL, NULL));
    }
    sqlite3_close(db);
}

/* A finished trace (end_ns written by its closing process). */
static void make_trace(const char *zPath)
{
    make_trace_meta(zPath, "1", NULL, "12345");
}

static void my_host(char *z, size_t n)
{
    ASSERT_EQ(0, gethostname(z, n - 1));
    z[n - 1] = '\0';
}

TEST(expand_patterns)
{
    char z[64];
    ASSERT_EQ(0, vt__outfile_expand("vramtrace-%h-%p.db", 4242, "3", "node7", z, sizeof z));
    ASSERT_STREQ("vramtrace-node7-4242.db", z);
    ASSERT_EQ(0, vt__outfile_expand("/out/r%r/%p%%.db", 17, "12", "h", z, sizeof z));
    ASSERT_STREQ("/out/r12/17%.db", z);
    ASSERT_EQ(0, vt__outfile_expand("t-%r.db", 1, NULL, "h", z, sizeof z));
    ASSERT_STREQ("t-0.db", z); /* no rank variable: rank 0 */
    ASSERT_EQ(0, vt__outfile_expand("plain.db", 1, "", "", z, sizeof z));
    ASSERT_STREQ("plain.db", z);
    ASSERT_EQ(-1, vt__outfile_expand("bad-%q.db", 1, "0", "h", z, sizeof z));
    ASSERT_STREQ("", z);
    ASSERT_EQ(-1, vt__outfile_expand("trailing-%", 1, "0", "h", z, sizeof z));
    ASSERT_EQ(-1, vt__outfile_expand("", 1, "0", "h", z, sizeof z));
    ASSERT_EQ(-1, vt__outfile_expand("%h%h%h%h%h%h%h%h%h", 1, "0", "abcdefghij", z, sizeof z));
    ASSERT_STREQ("", z);
}

TEST(create_mode_0600)
{
    char zDir[64], zPath[128], zErr[256];
    struct vt_outfile f;
    struct stat st;
    mode_t old = umask(0);
    make_dir(zDir, sizeof zDir);
    snprintf(zPath, sizeof zPath, "%s/t.db", zDir);
    ASSERT_EQ(0, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    umask(old);
    ASSERT_EQ(0, lstat(zPath, &st));
    ASSERT(S_ISREG(st.st_mode));
    ASSERT_EQ(0600, st.st_mode & 07777);
    ASSERT_EQ(0, st.st_size);
    ASSERT_EQ(st.st_ino, f.ino);
    ASSERT_STREQ(zPath, f.zPath);
    ASSERT_EQ(0, vt__outfile_verify(&f, zErr, sizeof zErr));
    vt__outfile_remove(&f);
    ASSERT_EQ(-1, lstat(zPath, &st));
    rmdir(zDir);
}

TEST(refuse_symlink)
{
    char zDir[64], zPath[128], zTarget[128], zErr[256], zBuf[64];
    struct vt_outfile f;
    struct stat st;
    make_dir(zDir, sizeof zDir);
    snprintf(zPath, sizeof zPath, "%s/t.db", zDir);
    snprintf(zTarget, sizeof zTarget, "%s/victim", zDir);
    write_file(zTarget, "precious");
    ASSERT_EQ(0, symlink(zTarget, zPath));
    ASSERT_EQ(-1, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "symbolic link");
    ASSERT(vt_read_file(zTarget, zBuf, sizeof zBuf) >= 0);
    ASSERT_STREQ("precious", zBuf);
    ASSERT_EQ(0, lstat(zPath, &st));
    ASSERT(S_ISLNK(st.st_mode));
    /* a dangling symlink is refused too, and nothing is created at its target */
    unlink(zTarget);
    ASSERT_EQ(-1, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    ASSERT_EQ(-1, stat(zTarget, &st));
    unlink(zPath);
    rmdir(zDir);
}

TEST(refuse_foreign_files)
{
    char zDir[64], zPath[128], zErr[256], zBuf[64];
    struct vt_outfile f;
    sqlite3 *db = NULL;
    make_dir(zDir, sizeof zDir);
    snprintf(zPath, sizeof zPath, "%s/t.db", zDir);
    /* a text file */
    write_file(zPath, "my notes");
    ASSERT_EQ(-1, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "not a vramtrace trace");
    ASSERT(vt_read_file(zPath, zBuf, sizeof zBuf) >= 0);
    ASSERT_STREQ("my notes", zBuf);
    /* an empty file */
    write_file(zPath, "");
    ASSERT_EQ(-1, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "not a vramtrace trace");
    /* someone else's SQLite database */
    unlink(zPath);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(42);", NULL,
                                      NULL, NULL));
    sqlite3_close(db);
    ASSERT_EQ(0, vt__outname_is_trace(zPath));
    ASSERT_EQ(-1, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "not a vramtrace trace");
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "SELECT x FROM t", NULL, NULL, NULL));
    sqlite3_close(db);
    unlink(zPath);
    /* a directory */
    ASSERT_EQ(0, mkdir(zPath, 0700));
    ASSERT_EQ(-1, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "not a regular file");
    rmdir(zPath);
    rmdir(zDir);
}

TEST(replace_old_trace)
{
    char zDir[64], zPath[128], zWal[160], zErr[256];
    struct vt_outfile f;
    struct stat st;
    make_dir(zDir, sizeof zDir);
    snprintf(zPath, sizeof zPath, "%s/t.db", zDir);
    snprintf(zWal, sizeof zWal, "%s-wal", zPath);
    make_trace(zPath);
    write_file(zWal, "stale log");
    ASSERT_EQ(1, vt__outname_is_trace(zPath));
    ASSERT_EQ(0, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    ASSERT_EQ(0, lstat(zPath, &st));
    ASSERT_EQ(0, st.st_size); /* a fresh empty file */
    ASSERT_EQ(0600, st.st_mode & 07777);
    ASSERT_EQ(-1, lstat(zWal, &st)); /* the old log went with it */
    vt__outfile_remove(&f);
    rmdir(zDir);
}

/* An unfinished trace is replaced only when its writer is gone. */
TEST(unfinished_trace_of_live_process_refused)
{
    char zDir[64], zPath[128], zErr[512], zHost[256], zPid[32];
    struct vt_outfile f;
    struct stat st;
    pid_t pid;
    int status;
    make_dir(zDir, sizeof zDir);
    snprintf(zPath, sizeof zPath, "%s/t.db", zDir);
    my_host(zHost, sizeof zHost);

    /* writer still running here (our parent) */
    snprintf(zPid, sizeof zPid, "%ld", (long)getppid());
    make_trace_meta(zPath, zPid, zHost, NULL);
    ASSERT_EQ(-1, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "the trace of running process");
    ASSERT_CONTAINS(zErr, "use %p in VRAMTRACE_OUTPUT");
    ASSERT_EQ(0, stat(zPath, &st));
    ASSERT(st.st_size > 0);
    unlink(zPath);

    /* written on another host: cannot tell, refused */
    make_trace_meta(zPath, zPid, "some-other-node", NULL);
    ASSERT_EQ(-1, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "on host some-other-node");
    unlink(zPath);

    /* writer gone (a reaped child): replaced */
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) _exit(0);
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    snprintf(zPid, sizeof zPid, "%ld", (long)pid);
    make_trace_meta(zPath, zPid, zHost, NULL);
    ASSERT_EQ(0, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    ASSERT_EQ(0, stat(zPath, &st));
    ASSERT_EQ(0, st.st_size);
    unlink(zPath);

    /* finished trace of a live process: replaced */
    snprintf(zPid, sizeof zPid, "%ld", (long)getppid());
    make_trace_meta(zPath, zPid, "some-other-node", "999");
    ASSERT_EQ(0, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    vt__outfile_remove(&f);
    rmdir(zDir);
}

TEST(missing_directory)
{
    char zErr[256];
    struct vt_outfile f;
    ASSERT_EQ(-1, vt__outfile_create("/tmp/vt-no-such-dir-4711/x/t.db", &f, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "directory /tmp/vt-no-such-dir-4711/x does not exist");
}

TEST(verify_detects_swap)
{
    char zDir[64], zPath[128], zErr[256];
    struct vt_outfile f;
    make_dir(zDir, sizeof zDir);
    snprintf(zPath, sizeof zPath, "%s/t.db", zDir);
    ASSERT_EQ(0, vt__outfile_create(zPath, &f, zErr, sizeof zErr));
    unlink(zPath);
    ASSERT_EQ(-1, vt__outfile_verify(&f, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "vanished");
    ASSERT_EQ(0, symlink("/etc/passwd", zPath));
    ASSERT_EQ(-1, vt__outfile_verify(&f, zErr, sizeof zErr));
    ASSERT_CONTAINS(zErr, "replaced");
    unlink(zPath);
    rmdir(zDir);
}

VT_TEST_LIST(T(expand_patterns) T(create_mode_0600) T(refuse_symlink) T(refuse_foreign_files)
             T(replace_old_trace) T(unfinished_trace_of_live_process_refused) T(missing_directory)
             T(verify_detects_swap))
