/* Tests for 'vramtrace diff': pairs of runs with a planted change, sets of ranks, different jobs, the CI gate, formats. */
#include <sqlite3.h>

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

/* A root cause in both runs at another severity (a leak of 4 MiB a step, then of 64 MiB) is listed as changed, not
 * hidden under "the same root causes in both"; in every format. */
TEST(severity_change_is_listed)
{
    const char *zDir = cli_tmpdir();
    char zB[512], zN[512], *zOut, *zErr;
    snprintf(zB, sizeof zB, "%s/small.db", zDir);
    snprintf(zN, sizeof zN, "%s/large.db", zDir);
    bd_job(zB, NULL, 256 * MiB, 1, NULL, 4 * MiB);
    bd_job(zN, NULL, 256 * MiB, 1, NULL, 64 * MiB);
    const char *az[] = {zB, zN, NULL};
    ASSERT_EQ(0, diff(az, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "== Findings that appeared, vanished or changed severity ==\n"
                          "  changed: [low -> medium] leak: 256 MiB never freed");
    ASSERT(!strstr(zOut, "none: the same root causes"));
    free(zOut), free(zErr);
    const char *azJ[] = {"--format", "json", zB, zN, NULL};
    ASSERT_EQ(0, diff(azJ, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"appeared\": [], \"vanished\": [], \"severity_changed\": [\n    {\"trace\": 0, \"kind\": "
                          "\"leak\", \"base_trace\": 0, \"base_severity\": \"low\", \"severity\": \"medium\"");
    free(zOut), free(zErr);
    const char *azM[] = {"--format", "markdown", zB, zN, NULL};
    ASSERT_EQ(0, diff(azM, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "- **changed**: [low -> medium] leak: 256 MiB never freed");
    free(zOut), free(zErr);
    const char *azH[] = {"--format", "html", zB, zN, NULL};
    ASSERT_EQ(0, diff(azH, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "<li class=\"changed\">changed: [low -&gt; medium] leak: 256 MiB never freed");
    free(zOut), free(zErr);
    /* the same severities: none */
    const char *azSame[] = {zN, zN, NULL};
    ASSERT_EQ(0, diff(azSame, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "  none: the same root causes at the same severities in both\n");
    free(zOut), free(zErr);
    cli_cleanup();
}

/* Processes paired by rank whose pids differ (a later run of the job) are labelled by both sides' pids, not BASE's
 * alone: "pid 1234 -> 40116, rank 0". */
TEST(pair_labelled_by_both_pids)
{
    const char *zDir = cli_tmpdir();
    char zB[512], zN[512], *zOut, *zErr;
    sqlite3 *db = NULL;
    snprintf(zB, sizeof zB, "%s/r0_old.db", zDir);
    snprintf(zN, sizeof zN, "%s/r0_new.db", zDir);
    bd_job(zB, "0", 256 * MiB, 1, NULL, 0);
    bd_job(zN, "0", 512 * MiB, 1, NULL, 0);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zN, &db));
    ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "UPDATE meta SET value = '40116' WHERE key = 'pid'", NULL, NULL, NULL));
    sqlite3_close(db);
    const char *az[] = {zB, zN, NULL};
    ASSERT_EQ(0, diff(az, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "  pid 1234 -> 40116, rank 0, device 0 (Test GPU): ");
    ASSERT(!strstr(zOut, "  pid 1234, rank 0"));
    free(zOut), free(zErr);
    /* the same pid: said once */
    const char *azSame[] = {zB, zB, NULL};
    ASSERT_EQ(0, diff(azSame, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "  pid 1234, rank 0, device 0 (Test GPU): ");
    free(zOut), free(zErr);
    cli_cleanup();
}

/* --max-growth: exit 1 when a device's peak grew by more than PCT percent, 0 when not; bad values are usage errors. */
TEST(max_growth_gate)
{
    char zB[512], zN[512], *zOut, *zErr;
    pair(zB, zN, sizeof zB);
    const char *azOver[] = {"--max-growth", "10", zB, zN, NULL};
    ASSERT_EQ(1, diff(azOver, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "the peak (reserved) grew by 49.0% to 3.61 GiB, more than --max-growth 10%");
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
    ASSERT_CONTAINS(zErr, "rank 1, device 0: the peak (reserved) grew by 41.3%");
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

/*
 * A torch.profiler trace into zPath: one step, two tensors of 1 and 2 MiB made and freed in it, the process holding
 * 4 MiB allocated before the profiler's window and reserving up to `reserved` bytes (Total Reserved); with
 * bAddr 0 the [memory] events carry only their Bytes, as torch.profiler before 1.11 wrote them (totals only).
 */
static void kineto_job(const char *zPath, int64_t reserved, int bAddr)
{
    static const struct {
        double ts;
        int64_t bytes, allocated, addr;
    } a[] = {{110, 1 * MiB, 5 * MiB, 0x100000}, {120, 2 * MiB, 7 * MiB, 0x400000},
             {130, -1 * MiB, 6 * MiB, 0x100000}, {150, -2 * MiB, 4 * MiB, 0x400000}};
    FILE *f = fopen(zPath, "w");
    ASSERT(f);
    fprintf(f, "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"Test GPU\", "
               "\"totalGlobalMem\": 17179869184}], \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"user_annotation\", "
               "\"name\": \"ProfilerStep#1\", \"pid\": 7, \"tid\": 7, \"ts\": 100.0, \"dur\": 900.0}");
    for (int i = 0; i < 4; i++) {
        fprintf(f, ", {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"pid\": 7, \"tid\": 7, "
                   "\"ts\": %.1f, \"s\": \"t\", \"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": %lld",
                a[i].ts, (long long)a[i].bytes);
        if (bAddr)
            fprintf(f, ", \"Total Allocated\": %lld, \"Total Reserved\": %lld, \"Addr\": %lld", (long long)a[i].allocated,
                    (long long)(i ? reserved : 16 * MiB), (long long)a[i].addr);
        fputs("}}", f);
    }
    fputs(", {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 140.0, "
          "\"dur\": 5.0, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 42}}]}\n", f);
    ASSERT_EQ(0, fclose(f));
}

/* The bytes of every "zKey": N in z before zEnd, summed. */
static int64_t sum_of(const char *z, const char *zKey, const char *zEnd)
{
    const char *pEnd = strstr(z, zEnd);
    int64_t sum = 0;
    for (const char *p = z; (p = strstr(p, zKey)) != NULL && (!pEnd || p < pEnd); p += strlen(zKey))
        sum += strtoll(p + strlen(zKey), NULL, 10);
    return sum;
}

/*
 * An import whose memory began before the profiler's window: diff's device peak is the one analyze and info print
 * (the process's reserved peak, torch.profiler's Total Reserved, with its allocated peak beside it), not the
 * window's own 3 MiB; the breakdown sums to it; --max-growth gates on it.
 */
TEST(process_peaks_of_an_import)
{
    const char *zDir = cli_tmpdir();
    char zB[512], zN[512], *zOut, *zErr;
    snprintf(zB, sizeof zB, "%s/base.json", zDir);
    snprintf(zN, sizeof zN, "%s/new.json", zDir);
    kineto_job(zB, 20 * MiB, 1);
    kineto_job(zN, 40 * MiB, 1);
    const char *az[] = {zB, zN, NULL};
    ASSERT_EQ(0, diff(az, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "device 0 (Test GPU): 20.0 MiB -> 40.0 MiB (+20.0 MiB, +100.0%) reserved by the process "
                          "(torch.profiler's Total Reserved); allocated 7.00 MiB -> 7.00 MiB (+0 B, +0.0%)\n");
    ASSERT_CONTAINS(zOut, "    what it was (process reserved)             20.0 MiB -> 40.0 MiB (+20.0 MiB, +100.0%)\n");
    ASSERT_CONTAINS(zOut, "allocated before the trace                 4.00 MiB -> 4.00 MiB");
    free(zOut), free(zErr);
    const char *azJ[] = {"--format", "json", zB, zN, NULL};
    ASSERT_EQ(0, diff(azJ, &zOut, &zErr));
    ASSERT(tg_json_valid(zOut));
    ASSERT_CONTAINS(zOut, "\"base_peak_bytes\": 20971520, \"new_peak_bytes\": 41943040, \"growth_pct\": 100.00, "
                          "\"base_peak_of\": \"process_reserved\", \"new_peak_of\": \"process_reserved\", "
                          "\"base_allocated_bytes\": 7340032, \"new_allocated_bytes\": 7340032, "
                          "\"base_breakdown_bytes\": 20971520, \"new_breakdown_bytes\": 41943040");
    /* the parts sum to the peak printed */
    ASSERT_EQ(20 * MiB, sum_of(zOut, "\"base_bytes\": ", "\"sites\""));
    ASSERT_EQ(40 * MiB, sum_of(zOut, "\"new_bytes\": ", "\"sites\""));
    free(zOut), free(zErr);
    /* the same figure as analyze's headline */
    char *azA[] = {(char *)cli_vramtrace(), (char *)"analyze", (char *)"--format", (char *)"json", zB, NULL}, zF[600];
    snprintf(zF, sizeof zF, "%s/a.json", zDir);
    ASSERT_EQ(0, cli_run(azA, NULL, zF, NULL));
    zOut = cli_read(zF);
    ASSERT_CONTAINS(zOut, "\"headline_bytes\": 20971520");
    free(zOut);
    const char *azG[] = {"--max-growth", "50", zB, zN, NULL};
    ASSERT_EQ(1, diff(azG, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "device 0: the peak (reserved by the process (torch.profiler's Total Reserved)) grew by "
                          "100.0% to 40.0 MiB, more than --max-growth 50%");
    free(zOut), free(zErr);
    cli_cleanup();
}

/* A trace with totals only (torch.profiler's [memory] events without 'Addr'): its peak is the running sum, in diff
 * as in analyze, never an empty device list or "none". */
TEST(totals_only_peaks)
{
    const char *zDir = cli_tmpdir();
    char zB[512], *zOut, *zErr;
    snprintf(zB, sizeof zB, "%s/noaddr.json", zDir);
    kineto_job(zB, 20 * MiB, 0);
    const char *az[] = {zB, zB, NULL};
    ASSERT_EQ(0, diff(az, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "device 0 (Test GPU): 3.00 MiB -> 3.00 MiB (+0 B, +0.0%) allocated (the running sum of the "
                          "profiler's [memory] Bytes)\n");
    ASSERT(!strstr(zOut, "none -> none"));
    free(zOut), free(zErr);
    const char *azJ[] = {"--format", "json", zB, zB, NULL};
    ASSERT_EQ(0, diff(azJ, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"base_peak_bytes\": 3145728, \"new_peak_bytes\": 3145728, \"growth_pct\": 0.00, "
                          "\"base_peak_of\": \"allocated_running_sum\"");
    free(zOut), free(zErr);
    cli_cleanup();
}

/*
 * A device whose peak is not known (an OOM read the device's memory, no allocation was traced) against one whose
 * peak is: "unknown", never "none" (none is for a device or process the other run has not) nor 0; JSON null with
 * its figure named "unknown", and --max-growth says it could not compare rather than passing in silence.
 */
TEST(unknown_peak_said_unknown)
{
    const char *zDir = cli_tmpdir();
    char zB[512], zN[512], *zOut, *zErr;
    struct tg *g;
    snprintf(zB, sizeof zB, "%s/unknown.db", zDir);
    snprintf(zN, sizeof zN, "%s/known.db", zDir);
    g = tg_open(zB);
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_oom(g, 5 * MS, 0, 2 * GiB, 1 * GiB, 16 * GiB, -1);
    ASSERT_EQ(0, tg_close(g));
    bd_job(zN, NULL, 256 * MiB, 1, NULL, 0);
    const char *az[] = {zB, zN, NULL};
    ASSERT_EQ(0, diff(az, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "device 0 (Test GPU): unknown -> 2.42 GiB reserved; allocated unknown -> 2.42 GiB\n");
    ASSERT_CONTAINS(zOut, "    what it was (allocated)                    unknown -> 2.42 GiB\n");
    ASSERT_CONTAINS(zOut, "    parameters                                 unknown -> 256 MiB\n"); /* not 0 B */
    ASSERT_CONTAINS(zOut, "  new    none -> 256 MiB  train.py:20 in main\n"); /* a site BASE has not: none */
    free(zOut), free(zErr);
    const char *azJ[] = {"--format", "json", zB, zN, NULL};
    ASSERT_EQ(0, diff(azJ, &zOut, &zErr));
    ASSERT(tg_json_valid(zOut));
    ASSERT_CONTAINS(zOut, "\"base_peak_bytes\": null, \"new_peak_bytes\": 2602565632, \"growth_pct\": null, "
                          "\"base_peak_of\": \"unknown\"");
    ASSERT(!strstr(zOut, "\"base_bytes\": -1") && !strstr(zOut, "\"base_bytes\": 0,")); /* no breakdown: not 0 */
    free(zOut), free(zErr);
    const char *azG[] = {"--max-growth", "50", zB, zN, NULL};
    ASSERT_EQ(0, diff(azG, &zOut, &zErr));
    ASSERT_CONTAINS(zErr, "--max-growth: no device peak could be compared");
    free(zOut), free(zErr);
    /* a run that has the device but traced no allocation on it at all (a torch.profiler trace recorded without
     * profile_memory, an Nsight export without memory events): its peak is unknown too, not "none" */
    g = tg_open(zB);
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_nvtx(g, 1 * MS, 9 * MS, "train");
    ASSERT_EQ(0, tg_close(g));
    ASSERT_EQ(0, diff(az, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "device 0 (Test GPU): unknown -> 2.42 GiB reserved; allocated unknown -> 2.42 GiB\n");
    free(zOut), free(zErr);
    ASSERT_EQ(0, diff(azJ, &zOut, &zErr));
    ASSERT_CONTAINS(zOut, "\"base_peak_bytes\": null, \"new_peak_bytes\": 2602565632, \"growth_pct\": null, "
                          "\"base_peak_of\": \"unknown\"");
    free(zOut), free(zErr);
    cli_cleanup();
}

VT_TEST_LIST(T(unknown_peak_said_unknown) T(planted_change_text) T(severity_change_is_listed) T(pair_labelled_by_both_pids) T(max_growth_gate) T(json_markdown_html) T(sets_of_ranks) T(different_jobs_warned)
                 T(process_peaks_of_an_import) T(totals_only_peaks))
