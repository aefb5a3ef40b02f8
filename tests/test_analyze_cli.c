/* Tests for 'vramtrace analyze' as a user runs it: bad input, options, formats, exit codes. */
#include <dirent.h>
#include <sqlite3.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracegen.h"
#include "vt_test.h"

static char zOut[1 << 16], zErr[4096];

/* Run vramtrace analyze with up to 6 arguments; stdout/stderr land in zOut/zErr. Returns the exit code. */
static int run6(const char *a1, const char *a2, const char *a3, const char *a4, const char *a5, const char *a6)
{
    const char *zDir = getenv("VT_BUILD_DIR");
    char zBin[1024], zO[600], zE[600];
    const char *argv[9] = {"vramtrace", "analyze", a1, a2, a3, a4, a5, a6, NULL};
    int status = 0;
    pid_t pid;
    if (!zDir) SKIP("VT_BUILD_DIR not set (run under ctest)");
    snprintf(zBin, sizeof zBin, "%s/analyzer/vramtrace", zDir);
    snprintf(zO, sizeof zO, "%s/stdout.txt", tg_tmpdir());
    snprintf(zE, sizeof zE, "%s/stderr.txt", tg_tmpdir());
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        int fo = open(zO, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(zE, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(zBin, (char **)argv);
        _exit(126);
    }
    waitpid(pid, &status, 0);
    vt_read_file(zO, zOut, sizeof zOut);
    vt_read_file(zE, zErr, sizeof zErr);
    ASSERT(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* run6 with up to 5 arguments. */
static int run(const char *a1, const char *a2, const char *a3, const char *a4, const char *a5)
{
    return run6(a1, a2, a3, a4, a5, NULL);
}

static void write_file(const char *zPath, const void *p, size_t n)
{
    FILE *f = fopen(zPath, "wb");
    ASSERT(f);
    ASSERT_EQ(n, fwrite(p, 1, n, f));
    fclose(f);
}

/* A small trace with a planted leak (high) growing over 6 NVTX steps. */
static void build_leaky(const char *zPath)
{
    struct tg *g = tg_open(zPath);
    ASSERT(g);
    for (int i = 0; i < 6; i++) {
        tg_nvtx(g, i * 10 * MS, (i + 1) * 10 * MS, "train_step");
        tg_alloc(g, i * 10 * MS + 1, 0, 3, 0x100000000LL + i * 0x10000000LL, 64 * MiB, -1);
    }
    ASSERT_EQ(0, tg_close(g));
}

TEST(usage_errors)
{
    ASSERT_EQ(2, run(NULL, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zErr, "no trace given");
    ASSERT_EQ(2, run("--bogus", "x.db", NULL, NULL, NULL));
    ASSERT_CONTAINS(zErr, "unknown option '--bogus'");
    ASSERT_EQ(2, run("--format", "pdf", "x.db", NULL, NULL));
    ASSERT_EQ(2, run("--fail-on", "severe", "x.db", NULL, NULL));
    ASSERT_EQ(2, run("--min-bytes", "12Q", "x.db", NULL, NULL));
    ASSERT_EQ(2, run("x.db", "--top", NULL, NULL, NULL));
    ASSERT_CONTAINS(zErr, "needs a value");
    ASSERT_EQ(2, run("--fit-memory", "0", "x.db", NULL, NULL)); /* not "the device's own size" in silence */
    ASSERT_CONTAINS(zErr, "--fit-memory: expected a size above 0, not '0'");
    ASSERT_EQ(0, run("--help", NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zOut, "--fail-on SEV");
    ASSERT_CONTAINS(zOut, "exit codes:");
    tg_cleanup();
}

TEST(bad_input_files)
{
    const char *zMissing = tg_path("missing.db"), *zEmpty = tg_path("empty.db"), *zText = tg_path("notes.txt");
    const char *zForeign = tg_path("foreign.db"), *zNewer = tg_path("newer.db");
    char zText200[200];
    sqlite3 *db;
    ASSERT_EQ(3, run(zMissing, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zErr, "No such file");
    ASSERT_EQ(3, run(tg_tmpdir(), NULL, NULL, NULL, NULL));
    write_file(zEmpty, "", 0);
    ASSERT_EQ(4, run(zEmpty, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zErr, "empty file");
    memset(zText200, 'x', sizeof zText200);
    write_file(zText, zText200, sizeof zText200);
    ASSERT_EQ(4, run(zText, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zErr, "neither a vramtrace trace nor a file it imports (a PyTorch memory snapshot pickle");
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zForeign, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", NULL, NULL, NULL));
    sqlite3_close(db);
    ASSERT_EQ(4, run(zForeign, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zErr, "not a vramtrace trace");
    build_leaky(zNewer);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zNewer, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "PRAGMA user_version = 99;"
                                          " UPDATE meta SET value = '99' WHERE key = 'schema_version'",
                                      NULL, NULL, NULL));
    sqlite3_close(db);
    ASSERT_EQ(5, run(zNewer, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zErr, "newer");
    ASSERT_EQ(0, zOut[0]); /* never a silent empty report: nothing on stdout, one line on stderr */
    ASSERT(strchr(zErr, '\n') == zErr + strlen(zErr) - 1);
    {   /* a valid trace with no event at all: a report that says so, not an empty one */
        const char *zBare = tg_path("bare.db");
        struct tg *g = tg_open(zBare);
        ASSERT(g);
        ASSERT_EQ(0, tg_close(g));
        ASSERT_EQ(0, run("--no-write", zBare, NULL, NULL, NULL));
        /* nothing could be judged: said so, not "No problems found." */
        ASSERT_CONTAINS(zOut, "Nothing could be judged: no allocation and no host-device copy was recorded");
        ASSERT(!strstr(zOut, "No problems found."));
        ASSERT_CONTAINS(zOut, "the trace holds no allocation");
    }
    ASSERT_EQ(5, run(zNewer, NULL, NULL, NULL, NULL));
    ASSERT(strchr(zErr, '\n') == zErr + strlen(zErr) - 1);
    tg_cleanup();
}

TEST(truncated_trace)
{
    const char *zPath = tg_path("trunc.db");
    struct tg *g = tg_open(zPath);
    struct stat st;
    ASSERT(g);
    for (int i = 0; i < 20000; i++) tg_alloc(g, i * 1000, 0, 3, 0x100000000LL + i * 4096LL, 4096, -1);
    ASSERT_EQ(0, tg_close(g));
    ASSERT_EQ(0, stat(zPath, &st));
    ASSERT_EQ(0, truncate(zPath, st.st_size / 2));
    int rc = run(zPath, NULL, NULL, NULL, NULL);
    ASSERT_EQ(6, rc);
    ASSERT_CONTAINS(zErr, "vramtrace: ");
    ASSERT_EQ(0, zOut[0]);
    rc = run("--no-write", zPath, NULL, NULL, NULL);
    ASSERT_EQ(6, rc);
    tg_cleanup();
}

/* A trace whose table or column was removed by hand: exit 6, and the message names what is missing. */
TEST(missing_table_or_column)
{
    const char *zPath = tg_path("cut.db");
    sqlite3 *db = NULL;
    build_leaky(zPath);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zPath, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP VIEW memory_timeline; DROP VIEW CUDA_GPU_MEMORY_USAGE_EVENTS;"
                                          " ALTER TABLE memory_event DROP COLUMN stack_id", NULL, NULL, NULL));
    sqlite3_close(db);
    ASSERT_EQ(6, run(zPath, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zErr, "cut.db: trace is damaged: column 'stack_id' of table 'memory_event' is missing\n");
    ASSERT_EQ(0, zOut[0]);
    tg_cleanup();
}

TEST(formats_output_file_and_fail_on)
{
    const char *zPath = tg_path("leaky.db"), *zReport = tg_path("report.html");
    char zHtml[1 << 16];
    build_leaky(zPath);
    ASSERT_EQ(0, run(zPath, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zOut, "[HIGH] leak: 384 MiB never freed: 6 allocations");
    ASSERT_EQ(0, run("--format", "json", zPath, NULL, NULL));
    ASSERT(tg_json_valid(zOut));
    ASSERT_CONTAINS(zOut, "\"vramtrace_report_version\": 1");
    ASSERT_EQ(0, run("--format", "markdown", zPath, NULL, NULL));
    ASSERT_CONTAINS(zOut, "# vramtrace analysis");
    ASSERT_EQ(0, run("--format", "html", "-o", zReport, zPath));
    ASSERT_EQ(0, zOut[0]);
    vt_read_file(zReport, zHtml, sizeof zHtml);
    ASSERT_CONTAINS(zHtml, "<svg");
    ASSERT_EQ(2, run("-o", zPath, zPath, NULL, NULL)); /* the report would overwrite the trace */
    ASSERT_CONTAINS(zErr, "writing it would replace the trace");
    ASSERT_EQ(1, tg_query(zPath, "SELECT count(*) > 0 FROM memory_event"));
    ASSERT_EQ(3, run("-o", "/nonexistent-dir/r.txt", zPath, NULL, NULL));
    ASSERT_CONTAINS(zErr, "cannot write report");
    ASSERT_EQ(1, run("--fail-on", "high", zPath, NULL, NULL));
    ASSERT_EQ(0, tg_query(zPath, "SELECT count(*) FROM sqlite_schema WHERE name = 'finding'")); /* not saved */
    ASSERT_EQ(1, run("--save", "--fail-on", "high", zPath, NULL));
    ASSERT_EQ(2, tg_query(zPath, "SELECT count(*) FROM finding WHERE severity = 'high'"));
    ASSERT_EQ(0, run6("--save", "--fail-on", "high", "--min-bytes", "1G", zPath));
    ASSERT_EQ(0, tg_query(zPath, "SELECT count(*) FROM finding")); /* results replaced */
    tg_cleanup();
}

TEST(read_only_trace_and_several_processes)
{
    const char *zA = tg_path("a.db"), *zB = tg_path("b.db");
    build_leaky(zA);
    build_leaky(zB);
    ASSERT_EQ(0, run("--no-write", zA, zB, NULL, NULL));
    ASSERT_CONTAINS(zOut, "2 traces");
    ASSERT_CONTAINS(zOut, "== All processes ==");
    ASSERT(!strstr(zOut, "imbalance:")); /* the same work, the same peak */
    {
        const char *zSmall = tg_path("small.db");
        struct tg *g = tg_open(zSmall);
        ASSERT(g);
        tg_meta(g, "pid", "77");
        tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, 64 * MiB, -1);
        tg_free(g, 2 * MS, 0, 3, 0x100000000LL, 64 * MiB);
        ASSERT_EQ(0, tg_close(g));
        ASSERT_EQ(0, run("--no-write", zA, zSmall, NULL, NULL));
        ASSERT_CONTAINS(zOut, "imbalance: pid 1234 peaks at 384 MiB, 500% above the lowest process (64.0 MiB)");
        { /* two programs (their command lines differ, no ranks): their peaks need not be alike */
            static const char *const azCmd[] = {"python3 serve.py", "python3 train.py"};
            const char *azPath[2] = {tg_path("serve.db"), tg_path("train.db")};
            for (int i = 0; i < 2; i++) {
                g = tg_open(azPath[i]);
                ASSERT(g);
                tg_meta(g, "pid", i ? "79" : "78");
                tg_meta(g, "cmdline", azCmd[i]);
                tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, (i ? 64 : 384) * MiB, -1);
                tg_free(g, 2 * MS, 0, 3, 0x100000000LL, (i ? 64 : 384) * MiB);
                ASSERT_EQ(0, tg_close(g));
            }
            ASSERT_EQ(0, run("--no-write", azPath[0], azPath[1], NULL, NULL));
            if (!strstr(zOut, "== All processes ==") || strstr(zOut, "imbalance:")) VT__FAIL("%s", zOut);
            ASSERT_EQ(0, run("--no-write", azPath[0], zSmall, NULL, NULL)); /* one program unknown: maybe one job */
            ASSERT_CONTAINS(zOut, "imbalance: pid 78 peaks at 384 MiB");
        }
        { /* in parallel or one after the other: the same report, in the order given */
            static char zSerial[sizeof zOut];
            ASSERT_EQ(0, run6("-j", "1", "--format", "json", zSmall, zA));
            memcpy(zSerial, zOut, sizeof zSerial);
            ASSERT_EQ(0, run6("--jobs=3", "--format=json", zSmall, zA, zB, NULL));
            ASSERT(strstr(zOut, "\"pid\": \"77\"") && strstr(zOut, "\"pid\": \"77\"") < strstr(zOut, "\"pid\": \"1234\""));
            ASSERT_EQ(0, run6("-j", "2", "--format", "json", zSmall, zA));
            ASSERT_STREQ(zSerial, zOut);
            ASSERT_EQ(2, run("-j", "0", zA, NULL, NULL));
            ASSERT_CONTAINS(zErr, "-j");
        }
    }
    ASSERT_EQ(0, tg_query(zA, "SELECT count(*) FROM sqlite_schema WHERE name = 'finding'"));
    { /* a trace locked by its writer (still being recorded) is analyzed without writing back */
        sqlite3 *db = NULL;
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zB, &db));
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "BEGIN IMMEDIATE; INSERT INTO meta VALUES('lock', '1')", NULL, NULL, NULL));
        ASSERT_EQ(0, run("--save", zB, NULL, NULL, NULL));
        ASSERT_CONTAINS(zOut, "locked by another process");
        ASSERT_CONTAINS(zOut, "[HIGH] leak");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        ASSERT_EQ(0, tg_query(zB, "SELECT count(*) FROM sqlite_schema WHERE name = 'finding'"));
    }
    if (geteuid() != 0) { /* root may write anything: the read-only path cannot be shown */
        ASSERT_EQ(0, chmod(zA, 0444));
        ASSERT_EQ(0, run("--save", zA, NULL, NULL, NULL));
        ASSERT_CONTAINS(zOut, "read-only: results were not written back");
        chmod(zA, 0644);
    }
    tg_cleanup();
}

/* Every real trace kept in tests/data (recorded on a GPU) must analyze cleanly in every format. */
TEST(real_traces_in_test_data)
{
    const char *zData = getenv("VT_TEST_DATA");
    DIR *d = zData ? opendir(zData) : NULL;
    struct dirent *e;
    int n = 0;
    if (!d) SKIP("no tests/data directory");
    while ((e = readdir(d)) != NULL) {
        char zPath[1024], zCopy[1024];
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".db")) continue;
        snprintf(zPath, sizeof zPath, "%s/%s", zData, e->d_name);
        snprintf(zCopy, sizeof zCopy, "%s/copy.db", tg_tmpdir());
        ASSERT_EQ(0, run("--no-write", "--format", "json", zPath, NULL));
        ASSERT(tg_json_valid(zOut));
        ASSERT_CONTAINS(zOut, "\"vramtrace_report_version\": 1");
        ASSERT_EQ(0, run("--no-write", zPath, NULL, NULL, NULL));
        ASSERT_CONTAINS(zOut, "vramtrace analyze: 1 trace");
        /* write-back works on a copy (the checked-in file stays untouched) */
        {
            FILE *fi = fopen(zPath, "rb"), *fo = fopen(zCopy, "wb");
            char buf[65536];
            size_t k;
            ASSERT(fi && fo);
            while ((k = fread(buf, 1, sizeof buf, fi)) > 0) ASSERT_EQ(k, fwrite(buf, 1, k, fo));
            fclose(fi);
            fclose(fo);
        }
        ASSERT_EQ(0, run6("--save", "--format", "html", "-o", tg_path("real.html"), zCopy));
        ASSERT_EQ(tg_query(zCopy, "SELECT count(*) FROM memory_event WHERE op IN (1, 5)"),
                  tg_query(zCopy, "SELECT count(*) FROM lifetime WHERE alloc_ts IS NOT NULL"));
        n++;
    }
    closedir(d);
    if (n == 0) SKIP("no real traces in tests/data yet");
    tg_cleanup();
}

/* A directory without traces among other inputs is one input not read, as a missing file is: named on standard
 * error, the others analyzed, exit 9; alone it is exit 3. */
TEST(directory_without_traces_among_others)
{
    char zDir[600], zT[600];
    snprintf(zDir, sizeof zDir, "%s", tg_path("nothing_here"));
    snprintf(zT, sizeof zT, "%s", tg_path("leaky.db"));
    ASSERT_EQ(0, mkdir(zDir, 0700));
    build_leaky(zT);
    ASSERT_EQ(3, run(zDir, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zErr, "a directory without traces");
    ASSERT_EQ(0, zOut[0]);
    ASSERT_EQ(9, run("--no-write", zDir, zT, NULL, NULL));
    ASSERT_CONTAINS(zErr, "nothing_here: a directory without traces");
    /* said once: not again by the reader ("is a directory, not a trace") */
    ASSERT(!strstr(zErr, "is a directory"));
    ASSERT(!strchr(strchr(zErr, '\n') + 1, '\n'));
    ASSERT_CONTAINS(zOut, "vramtrace analyze: 1 trace");
    ASSERT_EQ(9, run("--no-write", zT, zDir, NULL, NULL));
    ASSERT_CONTAINS(zOut, "vramtrace analyze: 1 trace");
    ASSERT_EQ(3, run("--no-write", zDir, zDir, NULL, NULL)); /* none read: the first failure's code */
    rmdir(zDir);
    tg_cleanup();
}

/* A finding of an imported file without call stacks says that the file records none, not how to set up vramtrace's
 * tracer (which did not record it). */
TEST(imported_file_without_sites_is_not_told_to_set_the_tracer)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zPath[1024];
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zPath, sizeof zPath, "%s/import/nsys2022_two_processes.sqlite", zData);
    ASSERT_EQ(0, run(zPath, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zOut, "where:    site not recorded (the imported file records no call stack for it)");
    ASSERT(!strstr(zOut, "VRAMTRACE_BACKTRACE"));
}

/* Counts of one are said in the singular: "1 allocation", "1 iteration" (a one-step torch.profiler trace). */
TEST(counts_of_one_in_the_singular)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zPath[1024];
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zPath, sizeof zPath, "%s/import/nsys2022_two_processes.sqlite", zData);
    ASSERT_EQ(0, run(zPath, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zOut, "duration 199 ns; 1 allocation, 1 freed, 0 live at exit (0 B)");
    ASSERT_EQ(0, run("--format", "markdown", zPath, NULL, NULL));
    ASSERT_CONTAINS(zOut, "- duration 199 ns; 1 allocation, 1 freed, 0 live at exit (0 B)");
    snprintf(zPath, sizeof zPath, "%s/real/param_dlrm_v100_rank0_step.pt.trace.json", zData);
    ASSERT_EQ(0, run(zPath, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zOut, "  phases (from kernels, 1 iteration):\n");
    ASSERT_CONTAINS(zOut, ", peak unknown, 1 iteration\n");
    ASSERT(!strstr(zOut, " 1 iterations") && !strstr(zOut, " 1 allocations"));
}

/* --phase choosing some NVTX ranges: the phases' header says the iterations they hold, not the trace's (8 train and 6
 * validation iterations twice: --phase valid keeps 12 of 28); without it, every iteration is in a phase. */
TEST(phase_choice_counts_its_iterations)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zPath[1024];
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zPath, sizeof zPath, "%s/example-train.db", zData);
    ASSERT_EQ(0, run("--phase", "valid", zPath, NULL, NULL));
    ASSERT_CONTAINS(zOut, "  phases (from nvtx, 12 of the trace's 28 iterations):\n");
    ASSERT_EQ(0, run("--format", "markdown", "--phase", "valid", zPath));
    ASSERT_CONTAINS(zOut, "- phases from nvtx (2 phases, 12 of the trace's 28 iterations)\n");
    ASSERT_EQ(0, run(zPath, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zOut, "  phases (from nvtx, 28 iterations):\n");
}

/* Segment level, a device too small for the peak (--fit-memory 16G, 8 GiB short): scaling every growing segment down
 * is the most the batch can be, an upper bound, not "at least ... (no upper bound can be told)"; on the traced device
 * the same trace's figure is the least, with the upper estimate. */
TEST(fit_too_small_at_segment_level_is_an_upper_bound)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zPath[1024];
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zPath, sizeof zPath, "%s/example-train.db", zData);
    ASSERT_EQ(0, run("--format", "json", "--fit-memory", "16G", zPath));
    ASSERT_CONTAINS(zOut, "\"max_is_lower_bound\": false, \"max_is_upper_bound\": true, ");
    ASSERT_EQ(0, run("--fit-memory", "16G", zPath, NULL, NULL));
    ASSERT(!strstr(zOut, "no upper bound can be told"));
    ASSERT_EQ(0, run("--format", "json", zPath, NULL, NULL));
    ASSERT_CONTAINS(zOut, "\"max_is_lower_bound\": true, \"max_is_upper_bound\": false, ");
}

/* A file whose allocations and frees are unknown (a torch.profiler trace without profile_memory) is not said to have
 * "every free matched its allocation" in Markdown, as the text report does not say it either. */
TEST(unknown_counts_claim_no_matched_frees)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zPath[1024];
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zPath, sizeof zPath, "%s/real/param_dlrm_v100_rank0_step.pt.trace.json", zData);
    ASSERT_EQ(0, run("--format", "markdown", zPath, NULL, NULL));
    ASSERT_CONTAINS(zOut, "allocations and frees unknown (the imported file records none with its address and size)");
    ASSERT(!strstr(zOut, "every free matched"));
    ASSERT_EQ(0, run(zPath, NULL, NULL, NULL, NULL));
    ASSERT(!strstr(zOut, "every free matched"));
}

/* The HTML report of a torch.profiler trace whose [memory] events carry no address (totals only) says why it has no
 * chart as it is: its events have sizes but no addresses, so only their running sum is known; not that the file
 * records no allocation with its size (a file without memory events). */
TEST(html_chart_missing_for_totals_says_why)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zPath[1024];
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    if (VT_HAVE_ZLIB) { /* the fixture is gzip'd: a build without zlib refuses it, as test_import checks */
        snprintf(zPath, sizeof zPath, "%s/import/kineto_noaddr.json.gz", zData);
        ASSERT_EQ(0, run("--format", "html", zPath, NULL, NULL));
        ASSERT_CONTAINS(zOut, "No memory chart: this trace's memory events carry no address");
        ASSERT(!strstr(zOut, "records no allocation with its size"));
    }
    snprintf(zPath, sizeof zPath, "%s/real/param_dlrm_v100_rank0_step.pt.trace.json", zData); /* no memory events */
    ASSERT_EQ(0, run("--format", "html", zPath, NULL, NULL));
    ASSERT_CONTAINS(zOut, "No memory chart: this trace records no allocation with its size");
}

/* Findings left out by a --min-bytes above the default: "No problems found" says of what size, not that there are
 * none (the example's 12.9 GiB validation spike is below 100 GiB). */
TEST(no_findings_above_min_bytes_says_the_bound)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zPath[1024];
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zPath, sizeof zPath, "%s/example-train.db", zData);
    ASSERT_EQ(0, run("--min-bytes", "100G", zPath, NULL, NULL));
    ASSERT_CONTAINS(zOut, "\nNo problems found of at least 100 GiB (--min-bytes).\n");
    ASSERT_EQ(0, run("--min-bytes", "100G", "--format", "markdown", zPath));
    ASSERT_CONTAINS(zOut, "No problems found of at least 100 GiB (--min-bytes).");
}

/* A PyTorch snapshot of the allocator's blocks alone (no segment rows: its ring buffer full, tests/data/import)
 * knows allocated memory, not reserved: its breakdown sums the allocated bytes and says so, as its peak line does. */
TEST(snapshot_of_blocks_alone_is_broken_down_as_allocated)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zPath[1024];
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zPath, sizeof zPath, "%s/import/snap_ring_full.pickle", zData);
    ASSERT_EQ(0, run(zPath, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zOut, "peak 1.00 KiB allocated at 2.0 us (reserved not known)");
    ASSERT_CONTAINS(zOut, "what it was at 2.0 us (allocated, 1.00 KiB)");
    ASSERT_EQ(0, run("--format", "json", zPath, NULL, NULL));
    ASSERT_CONTAINS(zOut, "\"breakdown_basis\": \"allocated\"");
}

/* An OOM whose request size the file does not record (an Nsight export's failed cudaMalloc) says "unknown
 * size" in every format, never "-1 B"; JSON gives null for each of its byte figures. */
TEST(oom_of_unknown_size)
{
    const char *zData = getenv("VT_TEST_DATA");
    char zPath[1024];
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zPath, sizeof zPath, "%s/import/nsys2022_two_processes.sqlite", zData);
    ASSERT_EQ(0, run(zPath, NULL, NULL, NULL, NULL));
    ASSERT_CONTAINS(zOut, "Out of memory: cudaMalloc of unknown size failed on device 0");
    ASSERT_CONTAINS(zOut, "    size unknown, 1 event, 39 ns .. 39 ns");
    ASSERT_CONTAINS(zOut, "a request of unknown size failed with");
    ASSERT_CONTAINS(zOut, "  at the OOM at 39 ns (device 0, size requested unknown):");
    ASSERT(!strstr(zOut, "-1 B"));
    ASSERT_EQ(0, run("--format", "markdown", zPath, NULL, NULL));
    ASSERT_CONTAINS(zOut, "| size unknown |");
    ASSERT(!strstr(zOut, "-1 B"));
    /* the free memory is unknown, the device's total known: said so, not "unknown free of 40.0 GiB" */
    ASSERT_CONTAINS(zOut, "failed with free memory unknown (the device has 40.0 GiB); this process held");
    ASSERT(!strstr(zOut, "unknown free"));
    ASSERT_EQ(0, run("--format", "html", zPath, NULL, NULL));
    ASSERT_CONTAINS(zOut, "; size unknown; 1 event; ");
    ASSERT(!strstr(zOut, "-1 B"));
    ASSERT_EQ(0, run("--format", "json", zPath, NULL, NULL));
    ASSERT(tg_json_valid(zOut));
    ASSERT_CONTAINS(zOut, "\"occurrences\": 1, \"bytes_min\": null, \"bytes_median\": null, \"bytes_max\": null");
    ASSERT(!strstr(zOut, "-1 B"));
    ASSERT(!strstr(zOut, ": -1"));
}

VT_TEST_LIST(T(usage_errors) T(fit_too_small_at_segment_level_is_an_upper_bound) T(phase_choice_counts_its_iterations) T(bad_input_files) T(truncated_trace) T(missing_table_or_column) T(formats_output_file_and_fail_on)
                 T(read_only_trace_and_several_processes) T(real_traces_in_test_data)
                 T(oom_of_unknown_size) T(directory_without_traces_among_others)
                 T(snapshot_of_blocks_alone_is_broken_down_as_allocated)
                 T(imported_file_without_sites_is_not_told_to_set_the_tracer)
                 T(counts_of_one_in_the_singular)
                 T(unknown_counts_claim_no_matched_frees)
                 T(html_chart_missing_for_totals_says_why)
                 T(no_findings_above_min_bytes_says_the_bound))
