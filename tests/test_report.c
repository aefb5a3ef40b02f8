/* Tests for the report formats: text leads with the worst, JSON is valid and versioned, HTML is self-contained. */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "tracegen.h"
#include "vt_test.h"

/* A trace with one OOM (high), one leak, NVTX phases, and a call site with HTML-special text. */
static void build(const char *zPath)
{
    struct tg *g = tg_open(zPath);
    int64_t s;
    ASSERT(g);
    tg_device(g, 0, "Test \"GPU\" <1>", 16 * GiB);
    s = tg_stack(g, "train<&>.py", 9, "main");
    tg_nvtx(g, 1 * MS, 50 * MS, "train");
    tg_nvtx(g, 50 * MS, 90 * MS, "eval");
    tg_alloc(g, 2 * MS, 0, 3, 0x100000000LL, 3 * GiB, s);
    /* kernel uses are known (the 3 GiB once, early): never-freed memory is then a leak, not state */
    tg_use(g, 3 * MS, tg_kernel(g, 3 * MS, 4 * MS, "fill"), 0x100000000LL);
    tg_alloc(g, 60 * MS, 0, 3, 0x300000000LL, 64 * MiB, -1);
    tg_oom(g, 70 * MS, 0, 14 * GiB, 1 * GiB, 16 * GiB, s);
    tg_nvtx(g, 75 * MS, 85 * MS, "val_step"); /* the job goes on after its OOM: what is live at exit is judged */
    tg_alloc(g, 80 * MS, -1, 2, 0x7f0000000000LL, 8 * MiB, -1);
    ASSERT_EQ(0, tg_close(g));
}

/* Render r in format fmt into a malloc'd string. */
static char *render(const struct vt_result *r, int fmt)
{
    char *z = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&z, &n);
    ASSERT(f);
    switch (fmt) {
    case VT_FMT_JSON: ASSERT_EQ(0, vt__report_json(f, r)); break;
    case VT_FMT_MARKDOWN: ASSERT_EQ(0, vt__report_markdown(f, r)); break;
    case VT_FMT_HTML: ASSERT_EQ(0, vt__report_html(f, r)); break;
    default: ASSERT_EQ(0, vt__report_text(f, r)); break;
    }
    fclose(f);
    return z;
}

static void analyze(struct vt_result *r, struct vt_opts *o, int n)
{
    const char *az[2];
    az[0] = tg_path("r.db");
    az[1] = tg_path("r2.db");
    build(az[0]);
    if (n > 1) build(az[1]);
    vt__opts_default(o);
    o->bNoWrite = 0; /* --save: the tests read what is written back */
    o->bBySite = 1;
    ASSERT_EQ(0, vt__analyze(az, n, o, r));
}

TEST(text_leads_with_worst)
{
    struct vt_opts o;
    struct vt_result r;
    analyze(&r, &o, 1);
    ASSERT_EQ(3, r.nFind);
    char *z = render(&r, VT_FMT_TEXT);
    ASSERT_CONTAINS(z, "vramtrace analyze: 1 trace, 3 findings (2 high, 1 medium, 0 low, 0 info)");
    /* the 14 GiB OOM, then the 3 GiB leak, then the 64 MiB one */
    char *zOom = strstr(z, "[HIGH] oom:"), *zLeak = strstr(z, "[HIGH] leak: 3.00 GiB never freed");
    ASSERT(zLeak && strstr(z, "[MEDIUM] leak: 64.0 MiB") > zLeak);
    ASSERT(zOom && zLeak && zOom < zLeak);
    ASSERT_CONTAINS(z, "(real demand)");
    ASSERT_CONTAINS(z, "allocation sites (by peak live bytes)");
    ASSERT_CONTAINS(z, "live at peak (at 59.0 ms): 1 allocation, 3.00 GiB from train<&>.py:9 in main (device)\n");
    ASSERT_CONTAINS(z, "what it was at 59.0 ms (allocated, 3.06 GiB)"); /* the same moment, said in both */
    /* every line fits a terminal */
    for (char *p = z, *q; (q = strchr(p, '\n')); p = q + 1) ASSERT((q - p) <= 100);
    free(z);
    /* --by-site: a site too long for the line keeps both ends (the backward node, the frame), not the path alone */
    {
        static char zLong[] = "DivBackward0 (backward pass: autograd thread, no Python frame, a long-winded name)";
        char *zOld = r.aTrace[0].sites.a[0].zSite;
        ASSERT(r.aTrace[0].sites.n > 0);
        r.aTrace[0].sites.a[0].zSite = zLong;
        z = render(&r, VT_FMT_TEXT);
        r.aTrace[0].sites.a[0].zSite = zOld;
        ASSERT_CONTAINS(z, "  DivBackward0 (ba...Python frame, a long-winded name)\n");
        for (char *p = z, *q; (q = strchr(p, '\n')); p = q + 1) ASSERT((q - p) <= 100);
        free(z);
    }
    vt__result_free(&r);
    tg_cleanup();
}

TEST(json_valid_versioned)
{
    struct vt_opts o;
    struct vt_result r;
    analyze(&r, &o, 2);
    char *z = render(&r, VT_FMT_JSON);
    ASSERT(tg_json_valid(z));
    ASSERT(!strncmp(z, "{\n  \"vramtrace_report_version\": 1,", strlen("{\n  \"vramtrace_report_version\": 1,")));
    ASSERT_CONTAINS(z, "\"traces\": [");
    ASSERT_CONTAINS(z, "\"findings\": [");
    ASSERT_CONTAINS(z, "\"verdict\": \"real demand\"");
    ASSERT_CONTAINS(z, "\"name\": \"Test \\\"GPU\\\" <1>\"");
    /* the two processes' findings alike: one each, on both (group.c) */
    ASSERT_CONTAINS(z, "\"summary\": {\"traces\": 2, \"findings\": 3, \"high\": 2, \"medium\": 1");
    ASSERT_CONTAINS(z, "\"traces\": [0, 1], \"ranks\": [null, null], \"where\": \"all 2 processes\", \"occurrences\": 2, "
                       "\"bytes_min\": 15032385536, \"bytes_median\": 15032385536, \"bytes_max\": 15032385536}");
    ASSERT_CONTAINS(z, "\"sites\": [");
    /* what was live at the OOM and at the device peak, by site and kind, next to the allocations */
    ASSERT_CONTAINS(z, "\"live_groups\": [{\"count\": 1, \"bytes\": 3221225472, \"site\": \"train<&>.py:9 in main\", "
                       "\"stack_id\": 1, \"mem_kind\": 3, \"largest\": {\"address\": 4294967296, \"bytes\": 3221225472, "
                       "\"alloc_ts\": 2000000, \"last_use_ts\": 3000000}}, {\"count\": 1, \"bytes\": 67108864, \"site\": \"site "
                       "not recorded (allocations of 64.0 MiB)\", \"stack_id\": null, \"mem_kind\": 3, ");
    ASSERT_CONTAINS(z, "\"live_at_peak_groups\": [{\"count\": 1, \"bytes\": 3221225472, ");
    ASSERT_CONTAINS(z, "\"max_device_peak_bytes\": 3288334336, \"min_device_peak_bytes\": 3288334336, "
                       "\"judged\": {\"memory\": true, \"copies\": false}}");
    ASSERT(!tg_json_valid("{\"a\": [1, 2,]}"));
    free(z);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(html_self_contained_with_timeline)
{
    struct vt_opts o;
    struct vt_result r;
    analyze(&r, &o, 1);
    char *z = render(&r, VT_FMT_HTML);
    ASSERT(!strncmp(z, "<!DOCTYPE html>", 15));
    /* findings first, each anchored; the chart's figures as JSON for the inlined script */
    ASSERT(strstr(z, "id=\"f1\"") && strstr(z, "<section class=\"proc\"") &&
           strstr(z, "id=\"f1\"") < strstr(z, "<section class=\"proc\""));
    ASSERT_CONTAINS(z, "<div class=\"chart\" data-tr=\"0\"></div>");
    ASSERT_CONTAINS(z, "<script type=\"application/json\" id=\"vt-data\">{\"v\":1,");
    ASSERT_CONTAINS(z, "\"cap\":17179869184,\"peak\":3288334336,\"peakT\":59000000,\"n\":400,"); /* capacity, peak */
    ASSERT_CONTAINS(z, "\"ooms\":[{\"t\":69000000,\"req\":15032385536,\"dev\":0,\"f\":0}]"); /* the OOM, its finding */
    ASSERT_CONTAINS(z, "{\"name\":\"eval\",\"kind\":\"evaluation\",\"t0\":49000000,\"t1\":89000000}");
    ASSERT_CONTAINS(z, "{\"n\":2,\"sev\":\"high\",\"kind\":\"leak\""); /* the leak: its marker's finding */
    ASSERT_CONTAINS(z, "\"label\":\"train\\u003c&>.py:9 in main\",\"bytes\":3221225472"); /* breakdown; '<' escaped */
    ASSERT_CONTAINS(z, "duration 89.0 ms;");
    ASSERT_CONTAINS(z, "train&lt;&amp;&gt;.py:9 in main");
    ASSERT_CONTAINS(z, "<tr><td><code>train&lt;&amp;&gt;.py:9 in main</code></td><td>1</td><td>3.00 GiB</td>");
    /* what the text report lists under the timeline too: each peak with what was live, the phases */
    ASSERT_CONTAINS(z, "<table class=\"peaks\">");
    ASSERT_CONTAINS(z, "<tr><td>device 0 (Test &quot;GPU&quot; &lt;1&gt;, 16.0 GiB)</td><td>3.06 GiB allocated at 59.0 ms "
                       "(= reserved: one CUDA allocation per buffer); 15.0 GiB in use on the device (every process and "
                       "the CUDA context) at 69.0 ms</td><td>at 59.0 ms:<br>1 allocation, 3.00 GiB from train&lt;&amp;&gt;.py:9 in main "
                       "(device)<br>1 allocation, 64.0 MiB from site not recorded (allocations of 64.0 MiB) (device)</td>"
                       "</tr>");
    ASSERT_CONTAINS(z, "<tr><td>pinned host memory</td><td>8.00 MiB at 79.0 ms</td>");
    ASSERT_CONTAINS(z, "<table class=\"phases\">");
    ASSERT_CONTAINS(z, "<tr><td>train</td><td>training</td><td>");
    ASSERT_CONTAINS(z, "<tr><td>eval</td><td>evaluation</td><td>");
    { /* sites in the text report's order: largest peak live bytes first */
        const char *zSites = strstr(z, "<table class=\"sites\">");
        ASSERT(zSites);
        const char *zBig = strstr(zSites, "train&lt;&amp;&gt;.py:9"), *zSmall = strstr(zSites, "site not recorded");
        ASSERT(zBig && zSmall && zBig < zSmall);
    }
    ASSERT(!strstr(z, "src="));
    { /* two scripts, both inline: the figures and the code that draws them */
        int n = 0;
        for (const char *q = z; (q = strstr(q, "<script")) != NULL; q++) n++;
        ASSERT_EQ(2, n);
    }
    ASSERT(!strstr(z, "<link"));
    ASSERT(!strstr(z, "train<&>"));
    free(z);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(markdown_tables)
{
    struct vt_opts o;
    struct vt_result r;
    analyze(&r, &o, 2);
    char *z = render(&r, VT_FMT_MARKDOWN);
    ASSERT_CONTAINS(z, "# vramtrace analysis");
    ASSERT_CONTAINS(z, "| 1 | high | oom | all 2 processes |");
    ASSERT_CONTAINS(z, "- **occurrences**: once in each of 2 processes, 14.0 GiB each\n");
    ASSERT_CONTAINS(z, "| eval | evaluation |");
    ASSERT_CONTAINS(z, "| 3.06 GiB allocated at 59.0 ms (= reserved: one CUDA allocation per buffer); 15.0 GiB in use on "
                       "the device (every process and the CUDA context) at 69.0 ms | at 59.0 ms: 1 allocation, 3.00 GiB from "
                       "train<&>.py:9 in main (device); 1 allocation, 64.0 MiB from site not recorded (allocations of "
                       "64.0 MiB) (device) |");
    ASSERT_CONTAINS(z, "- **fix**: ");
    ASSERT_CONTAINS(z, "## All processes");
    ASSERT_CONTAINS(z, "| pid 1234 | 3.06 GiB | 3 | high |");
    free(z);
    /* the groups not listed (--top 1) are said, as in text, so the list sums to the peak */
    o.nTop = 1;
    z = render(&r, VT_FMT_MARKDOWN);
    ASSERT_CONTAINS(z, " | at 59.0 ms: 1 allocation, 3.00 GiB from train<&>.py:9 in main (device); and 1 more allocation, "
                       "64.0 MiB, from 1 other site or kind (--format json lists up to --top of them) |");
    free(z);
    z = render(&r, VT_FMT_TEXT);
    ASSERT_CONTAINS(z, "\n                               and 1 more allocation, 64.0 MiB, from 1 other site or kind");
    free(z);
    vt__result_free(&r);
    tg_cleanup();
}

/* Why a trace has no phases: the same sentence in every format. */
TEST(no_phases_sentence)
{
    struct vt_trace t;
    char z[600];
    memset(&t, 0, sizeof t);
    vt__fmt_no_phases(&t, z, sizeof z);
    ASSERT_STREQ("none found (no NVTX ranges matching the phase pattern, no backward/optimizer kernels)", z);
    t.ph.zDoubt = "a single training step recognized";
    vt__fmt_no_phases(&t, z, sizeof z);
    ASSERT_STREQ("not inferred with confidence from kernel names (a single training step recognized); no finding "
                 "depends on phases (NVTX ranges named train/validation would give them)", z);
}

/* A trace that records no pid (an imported snapshot) is named by its file in every format, never "pid ?". */
TEST(process_without_pid_named_by_file)
{
    struct vt_opts o;
    struct vt_result r;
    struct vt_finding x;
    char z[300], *zT, *zM, *zH;
    analyze(&r, &o, 2);
    r.aTrace[1].f.zPid[0] = 0;
    ASSERT_STREQ("pid 1234", vt__fmt_process(&r.aTrace[0], z, sizeof z));
    ASSERT_STREQ("r2.db", vt__fmt_process(&r.aTrace[1], z, sizeof z));
    snprintf(r.aTrace[1].f.zRank, sizeof r.aTrace[1].f.zRank, "x");
    ASSERT_STREQ("r2.db, rank x", vt__fmt_process(&r.aTrace[1], z, sizeof z));
    r.aTrace[1].f.zRank[0] = 0;
    memset(&x, 0, sizeof x);
    x.trace = 1;
    vt__fmt_ranks(&r, &x, z, sizeof z);
    ASSERT_STREQ("r2.db only", z);
    zT = render(&r, VT_FMT_TEXT);
    zM = render(&r, VT_FMT_MARKDOWN);
    zH = render(&r, VT_FMT_HTML);
    ASSERT_CONTAINS(zT, "== Process r2.db: ");
    ASSERT_CONTAINS(zT, "\n  r2.db                    peak ");
    ASSERT_CONTAINS(zM, "## Process r2.db: `");
    ASSERT_CONTAINS(zM, "| r2.db | 3.06 GiB | 3 | high |");
    ASSERT_CONTAINS(zH, "<h2>Process r2.db</h2>");
    ASSERT_CONTAINS(zH, "<tr><td>r2.db</td>");
    ASSERT(!strstr(zT, "pid ?") && !strstr(zM, "| ? |") && !strstr(zM, "Process ?") && !strstr(zH, ">?<"));
    free(zT);
    free(zM);
    free(zH);
    /* a long file name: on a line of its own in the table of processes, its columns kept */
    r.aTrace[1].f.zPath = "/runs/a_snapshot_with_a_rather_long_name.pickle";
    zT = render(&r, VT_FMT_TEXT);
    ASSERT_CONTAINS(zT, "\n  a_snapshot_with_a_rather_long_name.pickle\n                           peak   3.06 GiB  3 findings");
    ASSERT_CONTAINS(zT, "\n  pid 1234                 peak   3.06 GiB  3 findings");
    free(zT);
    vt__result_free(&r);
    tg_cleanup();
}


/* Strings a trace supplies (pid, path, command) reach the terminal escaped: no escape sequence, no line of their own. */
TEST(text_escapes_trace_strings)
{
    struct vt_opts o;
    struct vt_result r;
    char *zT;
    analyze(&r, &o, 2);
    snprintf(r.aTrace[1].f.zPid, sizeof r.aTrace[1].f.zPid, "7\x1b[2J");
    snprintf(r.aTrace[1].f.zCmd, sizeof r.aTrace[1].f.zCmd, "python \x1b]0;owned\x07train.py\nrm -rf x");
    r.aTrace[1].f.zPath = "/runs/a\x1b[31mred\nb.db";
    ASSERT(r.aTrace[1].tl.nDev > 0 && r.aTrace[1].ph.n > 0);
    ASSERT(r.aTrace[1].f.nDev > 0);
    snprintf(r.aTrace[1].f.aDev[0].zName, sizeof r.aTrace[1].f.aDev[0].zName, "GPU\x1b[8m");
    snprintf(r.aTrace[1].ph.a[0].zName, sizeof r.aTrace[1].ph.a[0].zName, "tr\x1b[Kain\n");
    zT = render(&r, VT_FMT_TEXT);
    ASSERT_CONTAINS(zT, "\n  device 0 (GPU?[8m, 16.0 GiB): peak ");
    ASSERT_CONTAINS(zT, "\n    training   tr?[Kain?            0 s .. ");
    ASSERT(!strchr(zT, '\x1b') && !strchr(zT, '\x07'));
    ASSERT_CONTAINS(zT, "\n== Process pid 7?[2J: /runs/a?[31mred?b.db ==\n");
    ASSERT_CONTAINS(zT, "\n  command: python ?]0;owned?train.py?rm -rf x\n");
    ASSERT_CONTAINS(zT, "\n  pid 7?[2J                peak   3.06 GiB  3 findings"); /* the columns kept */
    ASSERT(!strstr(zT, "\nb.db") && !strstr(zT, "\nrm -rf"));
    free(zT);
    /* Markdown: a finding's title, where, evidence and fix escaped as the tables are (ESC, BEL as '?') */
    {
        static char zSite[] = "tr\x1b[31mAIN\x07\nX.py:97 in validate", zEv[] = "from tr\x1b[31mAIN\x07\nX.py";
        char *zOldSite = r.aFind[0].zSite, *zOldEv = r.aFind[0].zEvidence, *zM;
        r.aFind[0].zSite = zSite, r.aFind[0].zEvidence = zEv;
        zM = render(&r, VT_FMT_MARKDOWN);
        r.aFind[0].zSite = zOldSite, r.aFind[0].zEvidence = zOldEv;
        ASSERT_CONTAINS(zM, "\n- **where**: `tr?[31mAIN? X.py:97 in validate`\n");
        ASSERT_CONTAINS(zM, "\n- **evidence**: from tr?[31mAIN? X.py\n");
        ASSERT(!strchr(zM, '\x1b') && !strchr(zM, '\x07'));
        free(zM);
    }
    /* a process named by its file (no pid): the name escaped in the table of processes too */
    r.aTrace[1].f.zPid[0] = 0;
    r.aTrace[1].f.zPath = "/runs/x\x1b[1m\ny.db";
    zT = render(&r, VT_FMT_TEXT);
    ASSERT(!strchr(zT, '\x1b'));
    ASSERT_CONTAINS(zT, "\n  x?[1m?y.db               peak   3.06 GiB  3 findings");
    free(zT);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * What a trace does not know is shown as unknown (text) and null (JSON), never 0: a peak where
 * the trace has no memory data (an import without allocations), times where it has none (a
 * snapshot of the state at its dump).
 */
TEST(unknown_peaks_and_times)
{
    struct vt_opts o;
    struct vt_result r;
    char *zT, *zJ;
    int nDev1, nOom1, nOom0; /* put back before the free: what the devices and OOMs own is released with them */
    analyze(&r, &o, 2);
    nDev1 = r.aTrace[1].tl.nDev, nOom1 = r.aTrace[1].nOom, nOom0 = r.aTrace[0].nOom;
    ASSERT_EQ(1, vt__memory_known(&r.aTrace[1]));
    /* trace 1: imported from a torch.profiler trace that records no allocation */
    snprintf(r.aTrace[1].f.zSource, sizeof r.aTrace[1].f.zSource, "kineto_json");
    r.aTrace[1].lc.nAlloc = r.aTrace[1].lc.nTensorAlloc = 0;
    r.aTrace[1].f.fig.lc.nAlloc = r.aTrace[1].f.fig.lc.nTensorAlloc = 0; /* the figure source's counts */
    r.aTrace[1].nOom = 0;
    r.aTrace[1].tl.nDev = 0;
    r.aTrace[1].f.fig.nDev = 0; /* the figure source's: no peak known */
    r.aTrace[1].f.fig.level = VT_LEVEL_NONE;
    ASSERT_EQ(0, vt__memory_known(&r.aTrace[1]));
    /* trace 0: no event with a known time (the figure source's duration unknown with it) */
    r.aTrace[0].f.bTimes = 0;
    r.aTrace[0].f.fig.duration = -1;
    zT = render(&r, VT_FMT_TEXT);
    zJ = render(&r, VT_FMT_JSON);
    ASSERT_CONTAINS(zT, "\n  pid 1234                 peak    unknown  ");
    ASSERT_CONTAINS(zT, "\n  sum of per-process device peaks: 3.06 GiB, without the 1 process whose peak is unknown\n");
    ASSERT_CONTAINS(zT, ", peak unknown, ");             /* the phases of trace 1 */
    ASSERT_CONTAINS(zT, "\n  duration unknown; ");       /* trace 0 */
    ASSERT_CONTAINS(zT, ": peak 3.06 GiB allocated at an unknown time");
    ASSERT(!strstr(zT, "peak 0 B") && !strstr(zT, "duration 0 ns"));
    ASSERT_CONTAINS(zT, "1 event, time unknown");  /* a finding of trace 0: its window unknown, not "? .. ?" */
    ASSERT(!strstr(zT, "? .. ?"));
    /* trace 1's counts: unknown, not "0 allocations, 0 freed" */
    ASSERT_CONTAINS(zT, "duration 89.0 ms; allocations and frees unknown (the imported file records none");
    ASSERT_CONTAINS(zJ, "\"lifetimes\": {\"allocations\": null, \"allocated_bytes\": null, \"freed\": null");
    ASSERT_CONTAINS(zJ, "\"start_ns\": null, \"end_ns\": null, \"duration_ns\": null");
    ASSERT_CONTAINS(zJ, "\"peak_bytes\": null, \"peak_ts\": null, \"start_live_bytes\": null, "
                        "\"carried_from_training_bytes\": null");
    ASSERT_CONTAINS(zJ, "\"sum_of_device_peaks_bytes\": 3288334336, \"max_device_peak_bytes\": 3288334336");
    free(zT);
    free(zJ);
    /* no trace with a known peak: the sums are unknown too */
    snprintf(r.aTrace[0].f.zSource, sizeof r.aTrace[0].f.zSource, "nsys_sqlite");
    r.aTrace[0].lc.nAlloc = r.aTrace[0].lc.nTensorAlloc = 0;
    r.aTrace[0].nOom = 0;
    r.aTrace[0].f.fig.nDev = 0;
    zT = render(&r, VT_FMT_TEXT);
    zJ = render(&r, VT_FMT_JSON);
    ASSERT_CONTAINS(zT, "\n  sum of per-process device peaks: unknown\n");
    ASSERT_CONTAINS(zJ, "\"sum_of_device_peaks_bytes\": null, \"max_device_peak_bytes\": null, "
                        "\"min_device_peak_bytes\": null");
    free(zT);
    free(zJ);
    /* the tracer's own trace that allocated nothing: a real 0 */
    r.aTrace[0].f.zSource[0] = 0;
    ASSERT_EQ(1, vt__memory_known(&r.aTrace[0]));
    r.aTrace[1].tl.nDev = nDev1, r.aTrace[1].nOom = nOom1, r.aTrace[0].nOom = nOom0;
    vt__result_free(&r);
    tg_cleanup();
}

/* The level names what the rows are; the state fix gives training advice only where the trace shows training. */
TEST(level_and_state_fix)
{
    struct vt_trace t;
    struct vt_phase ph;
    struct vt_site site;
    memset(&t, 0, sizeof t);
    /* the level itself is the figure source's (each real file's in tests/check_agreement.py) */
    ASSERT_STREQ("allocations", vt__level_key(VT_LEVEL_ALLOCATIONS));
    ASSERT_STREQ("segments_and_tensors", vt__level_key(VT_LEVEL_BOTH));
    ASSERT_STREQ("segments (caching allocator)", vt__level_name(VT_LEVEL_SEGMENTS));
    ASSERT_STREQ("tensors (the allocator's blocks)", vt__level_name(VT_LEVEL_TENSORS));
    /* no phase, sites of inference code: no training advice */
    memset(&site, 0, sizeof site);
    site.zSite = "/srv/flexgen/pytorch_backend.py:190 in allocate";
    t.sites.a = &site;
    t.sites.n = 1;
    ASSERT_EQ(0, vt__shows_training(&t));
    ASSERT(!strstr(vt__fix_state(&t), "zero_grad") && strstr(vt__fix_state(&t), "inference_mode"));
    /* an optimizer's allocation site, or a training phase: training advice */
    site.zSite = "/src/optimizer/optimizer.py:51 in step";
    ASSERT_EQ(1, vt__shows_training(&t));
    ASSERT(strstr(vt__fix_state(&t), "optimizer.zero_grad(set_to_none=True)") != NULL);
    site.zSite = "main.py:3 in serve";
    memset(&ph, 0, sizeof ph);
    ph.kind = VT_PHASE_TRAIN;
    t.ph.a = &ph;
    t.ph.n = 1;
    ASSERT_EQ(1, vt__shows_training(&t));
}

VT_TEST_LIST(T(text_leads_with_worst) T(json_valid_versioned) T(html_self_contained_with_timeline) T(markdown_tables)
             T(process_without_pid_named_by_file) T(no_phases_sentence) T(text_escapes_trace_strings)
             T(unknown_peaks_and_times) T(level_and_state_fix))
