/* Runs every query of docs/queries.md against the fixture traces and checks the stated result. */
#include "sql_fixture.h"
#include "sql_run.h"
#include "vt_test.h"

/* One ```sql block and the ```csv block that follows it. */
struct query {
    char *zSql, *zExpect;
    int bRanks; /* "```sql ranks": run against both fixture traces */
    int line;   /* line of the ```sql fence, for messages */
};

/* Append line [z, z+n) plus '\n' to a malloc'd string. */
static char *append(char *zAcc, const char *z, size_t n)
{
    size_t m = zAcc ? strlen(zAcc) : 0;
    char *zNew = realloc(zAcc, m + n + 2);
    ASSERT(zNew != NULL);
    memcpy(zNew + m, z, n);
    zNew[m + n] = '\n';
    zNew[m + n + 1] = 0;
    return zNew;
}

/*
 * Parse the markdown: every ```sql block must be followed by a ```csv block
 * before the next ```sql. Returns the number of queries (at most nMax).
 */
static int parse_doc(const char *zDoc, struct query *aQ, int nMax)
{
    const char *z = zDoc;
    int nQ = 0, line = 0, mode = 0; /* 0 prose, 1 in sql, 2 in csv, 3 in another fence */
    while (*z) {
        const char *zEnd = strchr(z, '\n');
        size_t n = zEnd ? (size_t)(zEnd - z) : strlen(z);
        line++;
        if (mode == 0 && n >= 6 && !strncmp(z, "```sql", 6)) {
            if (nQ > 0 && !aQ[nQ - 1].zExpect)
                VT__FAIL("docs/queries.md:%d: the query at line %d has no ```csv result", line,
                         aQ[nQ - 1].line);
            ASSERT(nQ < nMax);
            memset(&aQ[nQ], 0, sizeof aQ[nQ]);
            aQ[nQ].bRanks = n > 7 && strstr(z + 6, "ranks") != NULL && strstr(z + 6, "ranks") < z + n;
            aQ[nQ].line = line;
            aQ[nQ].zSql = calloc(1, 1);
            nQ++;
            mode = 1;
        } else if (mode == 0 && n >= 6 && !strncmp(z, "```csv", 6)) {
            if (nQ == 0 || aQ[nQ - 1].zExpect)
                VT__FAIL("docs/queries.md:%d: a ```csv block without its query", line);
            aQ[nQ - 1].zExpect = calloc(1, 1);
            mode = 2;
        } else if (mode == 0 && n >= 3 && !strncmp(z, "```", 3)) {
            mode = 3;
        } else if (mode != 0 && n == 3 && !strncmp(z, "```", 3)) {
            mode = 0;
        } else if (mode == 1) {
            aQ[nQ - 1].zSql = append(aQ[nQ - 1].zSql, z, n);
        } else if (mode == 2) {
            aQ[nQ - 1].zExpect = append(aQ[nQ - 1].zExpect, z, n);
        }
        z += n + (zEnd ? 1 : 0);
    }
    ASSERT_EQ(0, mode);
    if (nQ > 0 && !aQ[nQ - 1].zExpect)
        VT__FAIL("docs/queries.md:%d: the last query has no ```csv result", aQ[nQ - 1].line);
    return nQ;
}

static char *doc_text(void)
{
    char zPath[1024];
    const char *zData = getenv("VT_TEST_DATA");
    if (!zData) SKIP("VT_TEST_DATA not set (run under ctest)");
    snprintf(zPath, sizeof zPath, "%s/../../docs/queries.md", zData);
    return vt_slurp(zPath);
}

TEST(cookbook_queries)
{
    struct query aQ[64];
    const char *zDir = vt_tmpdir();
    char zT0[256], zT1[256], zFile[300], zArgs[2048], *zDoc = doc_text(), *zOut, *zErr;
    int nQ, i, nFail = 0;

    snprintf(zT0, sizeof zT0, "%s/rank0.db", zDir);
    snprintf(zT1, sizeof zT1, "%s/rank1.db", zDir);
    ASSERT_EQ(0, vt_fixture_write(zT0, 0));
    ASSERT_EQ(0, vt_fixture_write(zT1, 1));
    nQ = parse_doc(zDoc, aQ, 64);
    if (nQ < 15) VT__FAIL("docs/queries.md has %d queries, at least 15 expected", nQ);
    for (i = 0; i < nQ; i++) {
        FILE *f;
        int rc;
        snprintf(zFile, sizeof zFile, "%s/q%02d.sql", zDir, i + 1);
        f = fopen(zFile, "w");
        ASSERT(f != NULL);
        fputs(aQ[i].zSql, f);
        fclose(f);
        snprintf(zArgs, sizeof zArgs, "sql --format csv -f %s %s %s", zFile, zT0,
                 aQ[i].bRanks ? zT1 : "");
        rc = vt_run(zDir, zArgs, &zOut, &zErr);
        if (rc != 0 || strcmp(zOut, aQ[i].zExpect) != 0) {
            fprintf(stderr, "  docs/queries.md:%d: exit %d\n  expected:\n%s  got:\n%s  stderr: %s\n",
                    aQ[i].line, rc, aQ[i].zExpect, zOut, zErr);
            nFail++;
        }
        free(zOut);
        free(zErr);
        free(aQ[i].zSql);
        free(aQ[i].zExpect);
    }
    free(zDoc);
    ASSERT_EQ(0, nFail);
    vt_cleanup(zDir);
}

/*
 * The same single-trace queries in the plain sqlite3 shell, on the trace file alone: every trace
 * carries the views they use (schema 4), so they run unchanged and give the same rows.
 */
TEST(cookbook_queries_sqlite3_shell)
{
    struct query aQ[64];
    const char *zDir = vt_tmpdir();
    char zT0[256], zFile[300], zCmd[1024], *zDoc;
    int nQ, i, nFail = 0, nRun = 0;

    if (system("sqlite3 -version >/dev/null 2>&1") != 0) SKIP("no sqlite3 shell on PATH");
    zDoc = doc_text();
    snprintf(zT0, sizeof zT0, "%s/rank0.db", zDir);
    ASSERT_EQ(0, vt_fixture_write(zT0, 0));
    nQ = parse_doc(zDoc, aQ, 64);
    for (i = 0; i < nQ; i++) {
        FILE *f;
        char zOut[1 << 15];
        size_t n = 0;
        if (!aQ[i].bRanks) {
            snprintf(zFile, sizeof zFile, "%s/q%02d.sql", zDir, i + 1);
            f = fopen(zFile, "w");
            ASSERT(f != NULL);
            fputs(aQ[i].zSql, f);
            fclose(f);
            snprintf(zCmd, sizeof zCmd, "sqlite3 -bail -csv -header %s < %s 2>&1", zT0, zFile);
            f = popen(zCmd, "r");
            ASSERT(f != NULL);
            n = fread(zOut, 1, sizeof zOut - 1, f);
            zOut[n] = 0;
            /* the shell ends CSV rows with CRLF, quotes text with spaces (the fixture's text has no
             * quote of its own) and prints no header for no rows */
            for (char *p = zOut, *q = zOut;; p++) {
                if (*p != '\r' && *p != '"') *q++ = *p;
                if (!*p) break;
            }
            if (pclose(f) != 0 ||
                (strcmp(zOut, aQ[i].zExpect) != 0 && !(zOut[0] == 0 && strchr(aQ[i].zExpect, '\n') &&
                                                      strchr(aQ[i].zExpect, '\n')[1] == 0))) {
                fprintf(stderr, "  docs/queries.md:%d in the sqlite3 shell:\n  expected:\n%s  got:\n%s", aQ[i].line,
                        aQ[i].zExpect, zOut);
                nFail++;
            }
            nRun++;
        }
        free(aQ[i].zSql);
        free(aQ[i].zExpect);
    }
    free(zDoc);
    printf("       %d single-trace queries run in the sqlite3 shell\n", nRun);
    ASSERT(nRun >= 10);
    ASSERT_EQ(0, nFail);
    vt_cleanup(zDir);
}

/* The parser itself: a query without its result is an error, fences of other kinds are skipped. */
TEST(doc_parser)
{
    struct query aQ[4];
    const char *zDoc = "# t\n```sh\nvramtrace sql x\n```\n```sql ranks\nSELECT 1;\n```\ntext\n"
                       "```csv\n1\n```\n```sql\nSELECT 2\n  AS two;\n```\n```csv\ntwo\n2\n```\n";
    ASSERT_EQ(2, parse_doc(zDoc, aQ, 4));
    ASSERT_EQ(1, aQ[0].bRanks);
    ASSERT_EQ(0, aQ[1].bRanks);
    ASSERT_STREQ("SELECT 1;\n", aQ[0].zSql);
    ASSERT_STREQ("1\n", aQ[0].zExpect);
    ASSERT_STREQ("SELECT 2\n  AS two;\n", aQ[1].zSql);
    ASSERT_STREQ("two\n2\n", aQ[1].zExpect);
    ASSERT_EQ(5, aQ[0].line);
}

VT_TEST_LIST(T(doc_parser) T(cookbook_queries) T(cookbook_queries_sqlite3_shell))
