/* Reliability: regression tests for the classes of hostile trace contents the fuzzers found. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report.h"
#include "cli.h"
#include "tracegen.h"
#include "vt_test.h"

/*
 * Each class below crashed a reader (UndefinedBehaviorSanitizer: signed
 * overflow, float-to-integer conversion out of range) before it was fixed.
 * Under the ASan+UBSan build these tests fail loudly if a class comes back.
 *
 *  1. Values no trace can hold (INT64_MIN/MAX timestamps, sizes near 2^63,
 *     text in number columns): every reader now hides such rows
 *     (vt__trace_guard) and says how many.
 *  2. Extreme but possible values (1 PiB allocations, timestamps near 2^62,
 *     iterations 2^60 ns long): arithmetic saturates instead of overflowing.
 *  3. An absurd device id (2^24) in the Perfetto export's track ordering.
 */

#define ADDR 0x7f0000000000LL
#define PiB ((int64_t)1 << 50) /* the largest size a reader accepts */
#define BIG ((int64_t)1 << 48)

/* Read a whole file into a static buffer. */
static const char *slurp(const char *zPath)
{
    static char z[1 << 20];
    ASSERT(vt_read_file(zPath, z, sizeof z) >= 0);
    return z;
}

/* Analyze zPath with default options; every report format must write. */
static void analyze(const char *zPath, struct vt_result *r)
{
    struct vt_opts o;
    const char *az[1] = {zPath};
    FILE *f = fopen("/dev/null", "w");
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, r));
    ASSERT(f != NULL);
    ASSERT_EQ(0, vt__report_text(f, r));
    ASSERT_EQ(0, vt__report_json(f, r));
    ASSERT_EQ(0, vt__report_markdown(f, r));
    ASSERT_EQ(0, vt__report_html(f, r));
    fclose(f);
}

static const char *find_note(const struct vt_trace *t, const char *zNeedle)
{
    for (int i = 0; i < t->f.nNote; i++)
        if (strstr(t->f.azNote[i], zNeedle)) return t->f.azNote[i];
    return NULL;
}

/* Three real allocations (one never freed) plus 9 rows no trace can hold. */
static void build_impossible(const char *zPath)
{
    struct tg *g = tg_open(zPath);
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, ADDR, 8 * MiB, -1);
    tg_alloc(g, 2 * MS, 0, 3, ADDR + 0x1000000, 4 * MiB, -1);
    tg_free(g, 3 * MS, 0, 3, ADDR, 8 * MiB);
    tg_alloc(g, 4 * MS, 0, 3, ADDR + 0x2000000, 2 * MiB, -1);
    tg_kernel(g, 5 * MS, 6 * MS, "gemm");
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(g->db,
        "INSERT INTO memory_event(t, op, mem_kind, address, bytes, device) VALUES"
        " (-9223372036854775808, 1, 3, 4096, 1024, 0),"          /* timestamp INT64_MIN */
        " (9223372036854775807, 1, 3, 8192, 1024, 0),"           /* timestamp INT64_MAX */
        " (7000000, 1, 3, 12288, 9223372036854775807, 0),"       /* size INT64_MAX */
        " (7000000, 1, 3, 16384, -5, 0),"                        /* negative size */
        " (7000000, 1, 3, X'00ff', 1048576, 0),"                  /* address a blob (any integer is one) */
        " ('later', 1, 3, 20480, 1024, 0);"                      /* text timestamp */
        "INSERT INTO kernel(t, dur, device) VALUES (-9223372036854775808, 5, 0);"
        "INSERT INTO memcpy(t, dur, copy_kind, src_kind, dst_kind, bytes) VALUES"
        " (1000000, 1000000, 1, 1, 3, 4611686018427387904);"     /* 2^62 bytes */
        "INSERT INTO oom_event(t, api, device, bytes, status, free_bytes) VALUES"
        " (8000000, 1, 0, 1048576, 2, -1);",                     /* negative free bytes */
        NULL, NULL, NULL));
    ASSERT_EQ(0, tg_close(g));
}

TEST(impossible_values_hidden_and_counted)
{
    const char *zPath = tg_path("impossible.db");
    struct vt_result r;
    const char *zNote;
    build_impossible(zPath);
    analyze(zPath, &r);
    ASSERT_EQ(1, r.nTrace);
    ASSERT_EQ(3, r.aTrace[0].lc.nAlloc);
    ASSERT_EQ(1, r.aTrace[0].lc.nFree);
    ASSERT_EQ(2, r.aTrace[0].lc.nLiveEnd);
    ASSERT_EQ(6 * MiB, r.aTrace[0].lc.liveEndBytes);
    ASSERT_EQ(12 * MiB, r.aTrace[0].tl.aDev[0].peak);
    zNote = find_note(&r.aTrace[0], "rows with impossible values");
    if (!zNote) VT__FAIL("no note about the 9 impossible rows");
    ASSERT(strncmp(zNote, "9 rows", 6) == 0);
    /* The rows are still in the file: only the readers skip them. */
    ASSERT_EQ(9, tg_query(zPath, "SELECT (SELECT count(*) FROM memory_event) - 4"
                                 " + (SELECT count(*) FROM kernel) - 1 + (SELECT count(*) FROM memcpy)"
                                 " + (SELECT count(*) FROM oom_event)"));
    vt__result_free(&r);
    tg_cleanup();
}

/* info counts only possible rows and shows a sane duration; the export leaves the rows out. */
TEST(info_and_export_skip_impossible_rows)
{
    const char *zPath = tg_path("impossible.db"), *zOut = tg_path("info.txt");
    const char *zJson = tg_path("export.json");
    char *argvInfo[] = {"info", (char *)zPath, NULL};
    char *argvExport[] = {"export", "--perfetto", (char *)zJson, (char *)zPath, NULL};
    const char *z;
    build_impossible(zPath);
    fflush(stdout);
    ASSERT(freopen(zOut, "w", stdout) != NULL);
    ASSERT_EQ(0, vt__cmd_info(2, argvInfo));
    fflush(stdout);
    z = slurp(zOut);
    ASSERT_CONTAINS(z, "duration    5.0 ms (first to last event)");
    ASSERT_CONTAINS(z, "memory      3 allocations (14.0 MiB), 1 free");
    ASSERT_EQ(0, vt__cmd_export(4, argvExport));
    z = slurp(zJson);
    ASSERT(strstr(z, "9223372036854775") == NULL);
    ASSERT(strstr(z, "-9223372036") == NULL);
    tg_cleanup();
}

/* Possible but extreme: 256 TiB allocations on a 1 PiB device, timestamps near 2^62, iterations 2^60 ns long
 * (ten times the median iteration, the idle threshold, once overflowed). */
TEST(extreme_possible_values)
{
    const char *zPath = tg_path("extreme.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    int64_t t0 = (int64_t)1 << 58, step = (int64_t)1 << 60;
    ASSERT(g);
    tg_device(g, 0, "Huge GPU", PiB);
    tg_nvtx(g, t0, t0 + 3 * step, "train");
    for (int i = 0; i < 3; i++) {
        int64_t s = t0 + i * step;
        tg_nvtx(g, s, s + step, "step");
        tg_alloc(g, s + 1, 0, 3, ADDR + (int64_t)i * BIG, BIG, -1);
        tg_kernel(g, s + 2, s + 3, "backward_gemm");
    }
    tg_free(g, t0 + 3 * step - 1, 0, 3, ADDR, BIG);
    tg_memcpy(g, t0 + 5, t0 + 6, 1, 1, 3, PiB, 0, ADDR);
    tg_oom(g, t0 + 3 * step, 0, PiB, 0, PiB, -1);
    ASSERT_EQ(0, tg_close(g));
    analyze(zPath, &r);
    ASSERT_EQ(3, r.aTrace[0].lc.nAlloc);
    ASSERT_EQ(3 * BIG, r.aTrace[0].tl.aDev[0].peak);
    ASSERT_EQ(2 * BIG, r.aTrace[0].lc.liveEndBytes);
    ASSERT_EQ(3, r.aTrace[0].ph.nIter);
    ASSERT(find_note(&r.aTrace[0], "impossible values") == NULL);
    vt__result_free(&r);
    tg_cleanup();
}

/* A device id of 2^24 on a kernel: the export's track order once overflowed an int. */
TEST(export_absurd_device_id)
{
    const char *zPath = tg_path("device.db"), *zJson = tg_path("export.json");
    char *argv[] = {"export", "--perfetto", (char *)zJson, (char *)zPath, NULL};
    struct tg *g = tg_open(zPath);
    ASSERT(g);
    tg_kernel(g, 1 * MS, 2 * MS, "k");
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(g->db, "UPDATE kernel SET device = 16777216, stream = 7", NULL, NULL, NULL));
    ASSERT_EQ(0, tg_close(g));
    ASSERT_EQ(0, vt__cmd_export(4, argv));
    ASSERT_CONTAINS(slurp(zJson), "\"sort_index\":16777217007");
    tg_cleanup();
}

/*
 * The schema version is stamped twice (PRAGMA user_version, meta schema_version); every reader
 * refuses a trace whose stamps are unknown or disagree, with one line and the documented exit
 * code (5 newer, 6 damaged), instead of reading it as the current version.
 */
TEST(version_stamps_refused_by_every_reader)
{
    static const struct {
        const char *zSql; /* applied to a good trace */
        int want;         /* exit code of every reader */
        const char *zWord;
    } aCase[] = {
        {"SELECT 1", 0, ""},
        {"UPDATE meta SET value = '999' WHERE key = 'schema_version'", 6, "disagree"},
        {"UPDATE meta SET value = '-1' WHERE key = 'schema_version'", 6, "disagree"},
        {"UPDATE meta SET value = 'abc' WHERE key = 'schema_version'", 6, "not a version number"},
        {"DELETE FROM meta WHERE key = 'schema_version'", 6, "no schema_version"},
        {"PRAGMA user_version = -1", 6, "disagree"},
        {"PRAGMA user_version = 999", 6, "disagree"},
        {"PRAGMA user_version = 999; UPDATE meta SET value = '999' WHERE key = 'schema_version'", 5, "newer"},
    };
    const char *zPath = tg_path("stamps.db"), *zErr = tg_path("stderr.txt"), *zOut = tg_path("stdout.txt");
    const char *zJson = tg_path("export.json");
    char *argvAnalyze[] = {"analyze", "--no-write", (char *)zPath, NULL};
    char *argvInfo[] = {"info", (char *)zPath, NULL};
    char *argvSql[] = {"sql", (char *)zPath, "SELECT count(*) FROM memory_event", NULL};
    char *argvExport[] = {"export", "--perfetto", (char *)zJson, (char *)zPath, NULL};
    int saveErr = dup(2), saveOut = dup(1);
    size_t i;
    ASSERT(saveErr >= 0 && saveOut >= 0);
    for (i = 0; i < sizeof aCase / sizeof aCase[0]; i++) {
        struct tg *g = tg_open(zPath);
        int aRc[4], k;
        const char *z;
        ASSERT(g);
        tg_alloc(g, 1 * MS, 0, 3, ADDR, 8 * MiB, -1);
        ASSERT_EQ(SQLITE_OK, sqlite3_exec(g->db, aCase[i].zSql, NULL, NULL, NULL));
        ASSERT_EQ(0, tg_close(g));
        fflush(stdout);
        fflush(stderr);
        ASSERT(freopen(zOut, "w", stdout) != NULL);
        ASSERT(freopen(zErr, "w", stderr) != NULL);
        aRc[0] = vt__cmd_analyze(3, argvAnalyze);
        aRc[1] = vt__cmd_info(2, argvInfo);
        aRc[2] = vt__cmd_sql(3, argvSql);
        aRc[3] = vt__cmd_export(4, argvExport);
        fflush(stdout);
        fflush(stderr);
        ASSERT(dup2(saveOut, 1) == 1 && dup2(saveErr, 2) == 2);
        z = slurp(zErr);
        for (k = 0; k < 4; k++)
            if (aRc[k] != aCase[i].want)
                VT__FAIL("case %zu (%s): reader %d exited %d, expected %d; stderr: %s", i, aCase[i].zSql, k,
                         aRc[k], aCase[i].want, z);
        if (aCase[i].want) {
            /* one line per reader, each naming the file and the reason */
            int nLine = 0, nPrefix = 0;
            for (const char *p = z; (p = strstr(p, "vramtrace: ")) != NULL; p++) nPrefix++;
            for (const char *p = z; (p = strchr(p, '\n')) != NULL; p++) nLine++;
            ASSERT_EQ(4, nPrefix);
            ASSERT_EQ(4, nLine);
            ASSERT_CONTAINS(z, zPath);
            ASSERT_CONTAINS(z, aCase[i].zWord);
        }
    }
    close(saveErr);
    close(saveOut);
    tg_cleanup();
}

VT_TEST_LIST(T(impossible_values_hidden_and_counted) T(info_and_export_skip_impossible_rows)
             T(extreme_possible_values) T(export_absurd_device_id) T(version_stamps_refused_by_every_reader))
