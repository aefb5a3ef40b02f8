/* Tests for 'vramtrace diff': pairs of runs with a planted change, sets of ranks, different jobs, the CI gate, formats. */
#include "bdjob.h"
#include "cli_util.h"

/* Run 'vramtrace diff' with the arguments az (NULL-terminated); its standard output and error in *pzOut, *pzErr. */
static int diff(const char *const *az, char **pzOut, char **pzErr)
{
    char *azArgv[32];
    const char *zDir = cli_tmpdir();
    char zOut[512], zErr[512];
    int n = 0, rc;
    azArgv[n++] = (char *)cli_vramtrace();
    azArgv[n++] = (char *)"diff";
    for (int i = 0; az[i] && n < 31; i++) azArgv[n++] = (char *)az[i];
    azArgv[n] = NULL;
    snprintf(zOut, sizeof zOut, "%s/out", zDir);
    snprintf(zErr, sizeof zErr, "%s/err", zDir);
    rc = cli_run(azArgv, NULL, zOut, zErr);
    *pzOut = cli_read(zOut);
    *pzErr = cli_read(zErr);
    return rc;
}

/* BASE and NEW of one job: NEW's activations twice as large and a leak of 64 MiB a step planted. */
static void pair(char *zBase, char *zNew, size_t n)
{
    const char *zDir = cli_tmpdir();
    snprintf(zBase, n, "%s/base.db", zDir);
    snprintf(zNew, n, "%s/new.db", zDir);
    bd_job(zBase, NULL, 256 * MiB, 1, NULL, 0);
    bd_job(zNew, NULL, 512 * MiB, 1, NULL, 64 * MiB);
}

TEST(planted_change_text)
{
    char zB[512], zN[512], *zOut, *zErr;
    pair(zB, zN, sizeof zB);
    const char *az[] = {zB, zN, NULL};
    ASSERT_EQ(0, diff(az, &zOut, &zErr));
    /* the peak and its categories: activations doubled, the leak new; parameters unchanged */
    ASSERT_CONTAINS(zOut, "device 0 (Test GPU): 2.42 GiB -> 3.61 GiB (+1.19 GiB, +49.0%)");
    ASSERT_CONTAINS(zOut, "activations kept for backward              1.00 GiB -> 2.00 GiB (+1.00 GiB, +100.0%)");
    ASSERT_CONTAINS(zOut, "parameters                                 256 MiB -> 256 MiB (+0 B, +0.0%)");
    ASSERT_CONTAINS(zOut, "other memory kept across steps             0 B -> 192 MiB");
    /* sites: the forward's grew, the leak's line is new */
    ASSERT_CONTAINS(zOut, "grew   1.16 GiB -> 2.16 GiB (+1.00 GiB, +86.5%)  train.py:66 in train");
    ASSERT_CONTAINS(zOut, "new    none -> 256 MiB  metrics.py:12 in Meter.update");
    /* phases (NVTX steps are iterations, not phases: none), findings: the leak appeared */
    ASSERT_CONTAINS(zOut, "appeared: [medium] leak: 256 MiB never freed");
    ASSERT_CONTAINS(zOut, "largest change of a device peak: +49.0%");
    ASSERT(!strstr(zOut, "warning"));
    free(zOut);
    free(zErr);
    /* the other way round: the leak vanished, the peak shrank */
    const char *az2[] = {zN, zB, NULL};
    ASSERT_EQ(0, diff(az2, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "vanished: [");
    ASSERT_CONTAINS(zOut, "gone   256 MiB -> none  metrics.py:12 in Meter.update");
    free(zOut);
    free(zErr);
    cli_cleanup();
}

/* --max-growth: exit 1 when a device's peak grew by more than PCT percent, 0 when not; bad values are usage errors. */
TEST(max_growth_gate)
{
    char zB[512], zN[512], *zOut, *zErr;
    pair(zB, zN, sizeof zB);
    const char *azOver[] = {"--max-growth", "10", zB, zN, NULL};
    ASSERT_EQ(1, diff(azOver, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "the peak grew by 49.0% to 3.61 GiB, more than --max-growth 10%");
    ASSERT_CONTAINS(zOut, "== Device peaks"); /* the comparison is written all the same */
    free(zOut), free(zErr);
    const char *azUnder[] = {"--max-growth=50%", zB, zN, NULL};
    ASSERT_EQ(0, diff(azUnder, &zOut, &zErr));
    free(zOut), free(zErr);
    const char *azShrink[] = {"--max-growth", "0", zN, zB, NULL}; /* a peak that shrank passes any gate */
    ASSERT_EQ(0, diff(azShrink, &zOut, &zErr));
    free(zOut), free(zErr);
    const char *azBad[] = {"--max-growth", "ten", zB, zN, NULL};
    ASSERT_EQ(2, diff(azBad, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "is not a percentage");
    free(zOut), free(zErr);
    const char *azOne[] = {zB, NULL};
    ASSERT_EQ(2, diff(azOne, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "give BASE and NEW");
    free(zOut), free(zErr);
    const char *azMissing[] = {zB, "/nonexistent/new.db", NULL};
    ASSERT_EQ(3, diff(azMissing, &zOut, &zErr));
    free(zOut), free(zErr);
    cli_cleanup();
}

/* JSON: versioned, valid, each device with both peaks, its growth and the categories side by side. */
TEST(json_markdown_html)
{
    char zB[512], zN[512], *zOut, *zErr;
    pair(zB, zN, sizeof zB);
    const char *az[] = {"--format", "json", zB, zN, NULL};
    ASSERT_EQ(0, diff(az, &zOut, &zErr));
    ASSERT(tg_json_valid(zOut));
    ASSERT_CONTAINS(zOut, "\"vramtrace_diff_version\": 1");
    ASSERT_CONTAINS(zOut, "\"base_peak_bytes\": 2602565632, \"new_peak_bytes\": 3877634048, \"growth_pct\": 48.99");
    ASSERT_CONTAINS(zOut, "{\"category\": \"activations\", \"owner\": null, \"base_bytes\": 1073741824, \"new_bytes\": "
                          "2147483648, \"delta_bytes\": 1073741824}");
    ASSERT_CONTAINS(zOut, "\"change\": \"new\"");
    ASSERT_CONTAINS(zOut, "\"appeared\": [\n    {");
    ASSERT_CONTAINS(zOut, "\"warning\": null");
    free(zOut), free(zErr);
    const char *azMd[] = {"--format", "markdown", zB, zN, NULL};
    ASSERT_EQ(0, diff(azMd, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "| device | category | base -> new |");
    ASSERT_CONTAINS(zOut, "- **appeared**: ");
    free(zOut), free(zErr);
    const char *azHtml[] = {"--format", "html", zB, zN, NULL};
    ASSERT_EQ(0, diff(azHtml, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "<!DOCTYPE html>");
    ASSERT_CONTAINS(zOut, "aria-label=\"base\"");
    ASSERT_CONTAINS(zOut, "aria-label=\"new\"");
    ASSERT(!strstr(zOut, "<script"));
    free(zOut), free(zErr);
    cli_cleanup();
}

/* Two sets of ranks (directories), paired by rank whatever the order; only rank 1 changed. */
TEST(sets_of_ranks)
{
    const char *zBase = cli_tmpdir(), *zNew = cli_tmpdir();
    char z[512], *zOut, *zErr;
    snprintf(z, sizeof z, "%s/a.db", zBase);
    bd_job(z, "0", 256 * MiB, 1, NULL, 0);
    snprintf(z, sizeof z, "%s/b.db", zBase);
    bd_job(z, "1", 256 * MiB, 1, NULL, 0);
    snprintf(z, sizeof z, "%s/a.db", zNew); /* rank 1 first by name */
    bd_job(z, "1", 512 * MiB, 1, NULL, 0);
    snprintf(z, sizeof z, "%s/b.db", zNew);
    bd_job(z, "0", 256 * MiB, 1, NULL, 0);
    const char *az[] = {"--format", "json", zBase, zNew, NULL};
    ASSERT_EQ(0, diff(az, &zOut, &zErr));
    ASSERT(tg_json_valid(zOut));
    ASSERT_CONTAINS(zOut, "\"process\": \"pid 1234, rank 0\", \"base_trace\": 0, \"new_trace\": 1, \"device\": 0");
    ASSERT_CONTAINS(zOut, "\"process\": \"pid 1234, rank 1\", \"base_trace\": 1, \"new_trace\": 0, \"device\": 0");
    ASSERT_CONTAINS(zOut, "\"base_peak_bytes\": 2602565632, \"new_peak_bytes\": 2602565632, \"growth_pct\": 0.00");
    ASSERT_CONTAINS(zOut, "\"base_peak_bytes\": 2602565632, \"new_peak_bytes\": 3676307456, \"growth_pct\": 41.26");
    free(zOut), free(zErr);
    /* --base/--new lists give the same pairing */
    char zB0[512], zB1[512], zN0[512], zN1[512];
    snprintf(zB0, sizeof zB0, "%s/a.db", zBase);
    snprintf(zB1, sizeof zB1, "%s/b.db", zBase);
    snprintf(zN0, sizeof zN0, "%s/a.db", zNew);
    snprintf(zN1, sizeof zN1, "%s/b.db", zNew);
    const char *az2[] = {"--base", zB0, "--base", zB1, "--new", zN0, "--new", zN1, "--max-growth", "40", NULL};
    ASSERT_EQ(1, diff(az2, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "rank 1, device 0: the peak grew by 41.3%");
    free(zOut), free(zErr);
    cli_cleanup();
}

/* Traces of different jobs are compared, with a warning in the comparison and on standard error. */
TEST(different_jobs_warned)
{
    const char *zDir = cli_tmpdir();
    char zB[512], zN[512], *zOut, *zErr;
    snprintf(zB, sizeof zB, "%s/base.db", zDir);
    snprintf(zN, sizeof zN, "%s/new.db", zDir);
    bd_job(zB, NULL, 256 * MiB, 1, "python train.py --batch-size 8", 0);
    bd_job(zN, NULL, 256 * MiB, 1, "python serve.py", 0);
    const char *az[] = {zB, zN, NULL};
    ASSERT_EQ(0, diff(az, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "warning: BASE and NEW look like different jobs (command 'python train.py --batch-size 8' "
                          "against 'python serve.py'): compared anyway");
    ASSERT_CONTAINS(zErr, "different jobs");
    ASSERT_CONTAINS(zOut, "+0.0%");
    free(zOut), free(zErr);
    cli_cleanup();
}

VT_TEST_LIST(T(planted_change_text) T(max_growth_gate) T(json_markdown_html) T(sets_of_ranks) T(different_jobs_warned))
