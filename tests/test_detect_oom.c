/* Tests for the OOM detector: the three verdicts, over three traces analyzed together. */
#include <string.h>

#include "report/report.h"
#include "tracegen.h"
#include "vt_test.h"

/* live: what this process holds; then an OOM of 2 GiB with freeBytes free of 16 GiB. */
static void build(const char *zPath, const char *zPid, int64_t live, int64_t freeBytes)
{
    struct tg *g = tg_open(zPath);
    int64_t s = tg_stack(g, "train.py", 120, "forward");
    ASSERT(g);
    tg_meta(g, "pid", zPid);
    tg_meta(g, "rank", zPid + 3);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, live - 1 * GiB, s);
    tg_alloc(g, 2 * MS, 0, 3, 0x900000000LL, 1 * GiB, -1);
    tg_oom(g, 3 * MS, 0, 2 * GiB, freeBytes, 16 * GiB, s);
    ASSERT_EQ(0, tg_close(g));
}

TEST(three_verdicts_three_processes)
{
    const char *az[3];
    struct vt_opts o;
    struct vt_result r;
    char zP[3][512];
    snprintf(zP[0], sizeof zP[0], "%s", tg_path("frag.db"));
    snprintf(zP[1], sizeof zP[1], "%s", tg_path("other.db"));
    snprintf(zP[2], sizeof zP[2], "%s", tg_path("real.db"));
    build(zP[0], "1000", 10 * GiB, 3 * GiB);         /* 3 GiB free >= 2 GiB asked */
    build(zP[1], "1001", 4 * GiB, GiB / 2);          /* 11.5 GiB used by someone else */
    build(zP[2], "1002", 15 * GiB, 6 * GiB / 10);    /* ~0.4 GiB others: context only */
    for (int i = 0; i < 3; i++) az[i] = zP[i];
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 3, &o, &r));
    ASSERT_EQ(3, r.nTrace);
    int nOom = 0;
    for (int i = 0; i < r.nFind; i++) {
        const struct vt_finding *f = &r.aFind[i];
        if (strcmp(f->zKind, "oom")) continue;
        nOom++;
        ASSERT_EQ(VT_SEV_HIGH, f->severity);
        ASSERT_EQ(2 * GiB, f->bytes);
        ASSERT_EQ(1, f->count);
        ASSERT_EQ(0, f->device);
        ASSERT_STREQ("train.py:120 in forward", f->zSite);
        ASSERT_CONTAINS(f->zEvidence, "from train.py:120 in forward");
        if (f->trace == 0) {
            ASSERT_CONTAINS(f->zTitle, "(fragmentation/caching)");
            ASSERT_CONTAINS(f->zFix, "expandable_segments:True");
        } else if (f->trace == 1) {
            ASSERT_CONTAINS(f->zTitle, "(another process)");
            ASSERT_CONTAINS(f->zEvidence, "11.5 GiB was in use by something else");
            ASSERT_CONTAINS(f->zFix, "nvidia-smi");
        } else {
            ASSERT_CONTAINS(f->zTitle, "(real demand)");
            ASSERT_CONTAINS(f->zFix, "gradient accumulation");
            ASSERT_CONTAINS(f->zFix, "AMP");
        }
    }
    ASSERT_EQ(3, nOom);
    ASSERT_STREQ("another process", r.aTrace[1].aOom[0].zVerdict);
    ASSERT_EQ(4 * GiB, r.aTrace[1].aOom[0].held);
    ASSERT_EQ(2, r.aTrace[1].aOom[0].nTop);
    ASSERT_EQ(3 * GiB, r.aTrace[1].aOom[0].aTop[0].bytes);
    ASSERT_STREQ("1001", r.aTrace[1].f.zPid);
    ASSERT_STREQ("1", r.aTrace[1].f.zRank);
    vt__result_free(&r);
    ASSERT_EQ(1, tg_query(zP[2], "SELECT count(*) FROM finding WHERE kind = 'oom' AND bytes = 2147483648"));
    tg_cleanup();
}

/*
 * Other processes as NVML told `vramtrace record` (meta nvml.device.0.*). The device's use less
 * what this process held is 11.5 GiB in each trace (4 GiB held, 0.5 GiB free of 16, a 2 GiB
 * request), which alone makes "another process". Where NVML's reading nearest the failure lists
 * 200 MiB in one process, the rest is this process's own (context, untraced memory): real
 * demand, NVML's figure named as what was judged. Where it lists 11 GiB in two processes: another
 * process, with NVML's figure. A sample far from the failure loses to a near one; with the launch
 * reading only, that reading is used and said to be it.
 */
TEST(others_by_nvml_readings)
{
    static const struct {
        const char *zName, *aKV[4][2];
        const char *zVerdict, *zEvidence;
        int64_t nvml;
        int nProc;
    } aCase[] = {
        {"few.db",
         {{"nvml.device.0.others_sample.0", "2000000 209715200 1"},
          {"nvml.device.0.others_procs.0", "99 209715200 notebook"},
          {"nvml.device.0.others_sample.1", "900000000 11811160064 2"},
          {"nvml.status", "ok"}},
         "real demand",
         "Other processes: 200 MiB in 1 process by NVML's per-process memory (read by vramtrace record, its reading "
         "nearest the failure, at ",
         200 * MiB, 1},
        {"many.db",
         {{"nvml.device.0.others_sample.0", "2500000 11811160064 2"},
          {"nvml.device.0.others_procs.0", "4242 8589934592 python;777 3221225472 jupyter-lab"},
          {"nvml.status", "ok"},
          {NULL, NULL}},
         "another process",
         "Other processes: 11.0 GiB in 2 processes by NVML's per-process memory (read by vramtrace record, its "
         "reading nearest the failure, at 1.5 ms; pid 4242 (python, 8.00 GiB), pid 777 (jupyter-lab, 3.00 GiB))",
         11 * GiB, 2},
        {"launch.db",
         {{"nvml.device.0.others_at_launch", "104857600 1"}, {"nvml.status", "ok"}, {NULL, NULL}, {NULL, NULL}},
         "real demand", "its reading before the job was launched; pids and names are not recorded)", 100 * MiB, 1},
        {"none.db", {{"nvml.status", "ok"}, {NULL, NULL}, {NULL, NULL}, {NULL, NULL}}, "another process",
         "Other processes were not read through NVML", -1, 0},
    };
    for (size_t c = 0; c < sizeof aCase / sizeof aCase[0]; c++) {
        const char *zPath = tg_path(aCase[c].zName);
        const char *az[1] = {zPath};
        struct tg *g = tg_open(zPath);
        struct vt_opts o;
        struct vt_result r;
        int64_t s;
        int nOom = 0;
        ASSERT(g);
        s = tg_stack(g, "train.py", 120, "forward");
        tg_meta(g, "pid", "1001");
        for (int k = 0; k < 4 && aCase[c].aKV[k][0]; k++) tg_meta(g, aCase[c].aKV[k][0], aCase[c].aKV[k][1]);
        tg_device(g, 0, "Test GPU", 16 * GiB);
        tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, 3 * GiB, s);
        tg_alloc(g, 2 * MS, 0, 3, 0x900000000LL, 1 * GiB, -1);
        tg_oom(g, 3 * MS, 0, 2 * GiB, GiB / 2, 16 * GiB, s);
        ASSERT_EQ(0, tg_close(g));
        vt__opts_default(&o);
        o.bNoWrite = 1;
        ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
        ASSERT_EQ(1, r.aTrace[0].nOom);
        ASSERT_STREQ(aCase[c].zVerdict, r.aTrace[0].aOom[0].zVerdict);
        ASSERT_EQ(aCase[c].nvml, r.aTrace[0].aOom[0].othersNvml);
        ASSERT_EQ(23 * GiB / 2, r.aTrace[0].aOom[0].others); /* device used less held, as before */
        if (aCase[c].nvml >= 0) ASSERT_EQ(aCase[c].nProc, r.aTrace[0].aOom[0].othersNvmlProcs);
        for (int i = 0; i < r.nFind; i++) {
            if (strcmp(r.aFind[i].zKind, "oom")) continue;
            nOom++;
            ASSERT_CONTAINS(r.aFind[i].zTitle, aCase[c].zVerdict);
            ASSERT_CONTAINS(r.aFind[i].zEvidence, aCase[c].zEvidence);
        }
        ASSERT_EQ(1, nOom);
        vt__result_free(&r);
    }
    tg_cleanup();
}

/*
 * Live tensors fill the device: 15.6 GiB of 16 GiB live, a 256 MiB request fails with 300 MiB free
 * (the driver's own reserve and holes). Free memory covers the request, but free plus cached is under
 * 5 % of the device: serving it would only have moved the failure to the next allocation of the step.
 * Real demand, not fragmentation.
 */
TEST(device_full_of_live_tensors_is_real_demand)
{
    const char *zPath = tg_path("full.db");
    const char *az[1] = {zPath};
    struct tg *g = tg_open(zPath);
    struct vt_opts o;
    struct vt_result r;
    int64_t s;
    ASSERT(g);
    s = tg_stack(g, "train.py", 66, "train_one_epoch");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, 15 * GiB + 600 * MiB, s);
    tg_oom(g, 3 * MS, 0, 256 * MiB, 300 * MiB, 16 * GiB, s);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.aTrace[0].nOom);
    ASSERT_STREQ("real demand", r.aTrace[0].aOom[0].zVerdict);
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "oom")) ASSERT_CONTAINS(r.aFind[i].zTitle, "(real demand)");
    vt__result_free(&r);
    tg_cleanup();
}

/* The 'oom' sample: cudaMalloc of total + 1 GiB fails with nothing of its own live, then 4
 * buffers of 7 MiB + 4096 i are allocated and freed. */
TEST(oom_sample_shape)
{
    const char *zPath = tg_path("oom.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    struct vt_opts o;
    const char *az[1] = {zPath};
    const int64_t total = 80 * GiB;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_device(g, 0, "H100", total);
    tg_oom(g, 1 * MS, 0, total + GiB, total - GiB / 2, total, -1);
    for (int i = 0; i < 4; i++) {
        tg_alloc(g, (2 + i) * MS, 0, 3, 0x100000000LL, 7 * MiB + 4096 * i, -1);
        tg_free(g, (2 + i) * MS + 500000, 0, 3, 0x100000000LL, 7 * MiB + 4096 * i);
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.nFind);
    ASSERT_STREQ("oom", r.aFind[0].zKind);
    ASSERT_EQ(total + GiB, r.aFind[0].bytes);
    ASSERT_CONTAINS(r.aFind[0].zTitle, "(real demand)");
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "with 79.5 GiB free of 80.0 GiB; this process held 0 B");
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "Largest live: none recorded.");
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "larger than the device's total memory");
    ASSERT_EQ(0, r.aTrace[0].aOom[0].nTop);
    vt__result_free(&r);
    tg_cleanup();
}

/* PyTorch's retry: the first cudaMalloc fails, the caching allocator frees its cached segments,
 * the retry fails too. One finding, judged on the last attempt. */
TEST(retried_request_is_one_finding)
{
    const char *zPath = tg_path("retry.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    struct vt_opts o;
    const char *az[1] = {zPath};
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, 12 * GiB, -1);
    tg_alloc(g, 2 * MS, 0, 3, 0x900000000LL, 2 * GiB, -1);
    tg_oom(g, 10 * MS, 0, 4 * GiB, 1 * GiB, 16 * GiB, -1);
    tg_free(g, 10 * MS + 1000, 0, 3, 0x900000000LL, 2 * GiB); /* cache released */
    tg_oom(g, 10 * MS + 2000, 0, 4 * GiB, 3 * GiB, 16 * GiB, -1);
    tg_oom(g, 5000 * MS, 0, 4 * GiB, 3 * GiB, 16 * GiB, -1); /* much later: a new request */
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    int nOom = 0;
    /* two findings (the retried request, the later one), alike: one finding standing for both (group.c) */
    for (int i = 0; i < r.nFind; i++) {
        if (strcmp(r.aFind[i].zKind, "oom")) continue;
        nOom++;
        ASSERT_EQ(2, r.aFind[i].nSame);
        ASSERT_EQ(3, r.aFind[i].count); /* 2 attempts + 1 */
        ASSERT_EQ(10 * MS, r.aFind[i].firstTs);
        ASSERT_EQ(5000 * MS, r.aFind[i].lastTs);
        ASSERT_CONTAINS(r.aFind[i].zEvidence, "this process held 12.0 GiB in live allocations");
        ASSERT_CONTAINS(r.aFind[i].zEvidence, "The request failed 2 times (4.00 GiB at 9.0 ms, 4.00 GiB at 9.0 ms); at "
                                              "the first attempt this process held 14.0 GiB.");
    }
    ASSERT_EQ(1, nOom);
    ASSERT_STREQ(r.aTrace[0].aOom[1].zVerdict, r.aTrace[0].aOom[0].zVerdict);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * What was live at an OOM, grouped by call site and memory kind: on device 0, 3 device
 * allocations (1 + 2 + 1 GiB) and a 512 MiB array from train.py:88, 3 GiB from train.py:20;
 * not counted: an allocation of train.py:88 freed before the OOM, one on device 1, pinned
 * host memory.
 */
TEST(live_grouped_by_site_and_kind)
{
    const char *zPath = tg_path("groups.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    struct vt_opts o;
    const char *az[1] = {zPath};
    int64_t sVal, sMain;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    tg_device(g, 1, "Test GPU", 16 * GiB);
    sVal = tg_stack(g, "train.py", 88, "validate");
    sMain = tg_stack(g, "train.py", 20, "main");
    tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, 1 * GiB, sVal);
    tg_alloc(g, 2 * MS, 0, 3, 0x200000000LL, 2 * GiB, sVal);
    tg_alloc(g, 3 * MS, 0, 3, 0x300000000LL, 1 * GiB, sVal);
    tg_free(g, 4 * MS, 0, 3, 0x300000000LL, 1 * GiB);
    tg_alloc(g, 5 * MS, 0, 3, 0x400000000LL, 1 * GiB, sVal);
    tg_alloc(g, 6 * MS, 0, 4, 0x500000000LL, 512 * MiB, sVal);
    tg_alloc(g, 7 * MS, 0, 3, 0x600000000LL, 3 * GiB, sMain);
    tg_alloc(g, 8 * MS, 1, 3, 0x700000000LL, 1 * GiB, sVal);
    tg_alloc(g, 9 * MS, -1, 2, 0x7f0000000000LL, 1 * GiB, sVal);
    tg_oom(g, 10 * MS, 0, 12 * GiB, 8 * GiB, 16 * GiB, sVal);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    const struct vt_trace *t = &r.aTrace[0];
    const struct vt_oom *m = &t->aOom[0];
    ASSERT_EQ(7 * GiB + 512 * MiB, m->held);
    ASSERT_EQ(3, m->nGroup);
    ASSERT_EQ(3, m->aGroup[0].count);
    ASSERT_EQ(4 * GiB, m->aGroup[0].bytes);
    ASSERT_EQ(3, m->aGroup[0].memKind);
    ASSERT_STREQ("train.py:88 in validate", t->sites.a[m->aGroup[0].site].zSite);
    ASSERT_EQ(2 * GiB, m->aGroup[0].largest.bytes);
    ASSERT_EQ(0x200000000LL, m->aGroup[0].largest.address);
    ASSERT_EQ(2 * MS, m->aGroup[0].largest.allocTs);
    ASSERT_EQ(1, m->aGroup[1].count);
    ASSERT_EQ(3 * GiB, m->aGroup[1].bytes);
    ASSERT_STREQ("train.py:20 in main", t->sites.a[m->aGroup[1].site].zSite);
    ASSERT_EQ(1, m->aGroup[2].count);
    ASSERT_EQ(512 * MiB, m->aGroup[2].bytes);
    ASSERT_EQ(4, m->aGroup[2].memKind);
    ASSERT_EQ(m->aGroup[0].site, m->aGroup[2].site);
    /* the per-allocation list is unchanged: largest single allocations */
    ASSERT_EQ(5, m->nTop);
    ASSERT_EQ(3 * GiB, m->aTop[0].bytes);
    const struct vt_finding *f = NULL;
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "oom")) f = &r.aFind[i];
    ASSERT(f);
    ASSERT_CONTAINS(f->zEvidence,
                    "Largest live: 3 allocations, 4.00 GiB from train.py:88 in validate (device), largest 2.00 "
                    "GiB; 1 allocation, 3.00 GiB from train.py:20 in main (device); 1 allocation, 512 MiB from "
                    "train.py:88 in validate (array).");
    /* the device peak (at the end) holds the same groups */
    for (int d = 0; d < t->tl.nDev; d++) {
        if (t->tl.aDev[d].id != 0) continue;
        ASSERT_EQ(3, t->tl.aDev[d].nGroup);
        ASSERT_EQ(4 * GiB, t->tl.aDev[d].aGroup[0].bytes);
        ASSERT_EQ(3, t->tl.aDev[d].aGroup[0].count);
    }
    vt__result_free(&r);
    tg_cleanup();
}

/* Caching-allocator segments only (31 of 2 GiB on a 72 GiB device): a 12 GiB request fails with
 * 9.5 GiB free. The holes inside the segments are invisible, so full segments (real demand) and
 * holed ones (fragmentation) cannot be told apart; a 100 GiB request is demand whatever the holes. */
TEST(segment_level_cannot_tell_fragmentation)
{
    const char *az[1];
    struct vt_opts o;
    struct vt_result r;
    for (int k = 0; k < 2; k++) {
        const char *zPath = tg_path(k ? "seg_huge.db" : "seg.db");
        struct tg *g = tg_open(zPath);
        int64_t s;
        ASSERT(g);
        tg_meta(g, "config.tensors", "0");
        s = tg_stack(g, "model.py", 149, "forward");
        tg_device(g, 0, "Test GPU", 72 * GiB);
        for (int i = 0; i < 31; i++) tg_alloc(g, (1 + i) * MS, 0, 3, 0x100000000LL + i * 2 * GiB, 2 * GiB, s);
        tg_oom(g, 40 * MS, 0, k ? 100 * GiB : 12 * GiB, 9 * GiB + GiB / 2, 72 * GiB, s);
        ASSERT_EQ(0, tg_close(g));
        az[0] = zPath;
        vt__opts_default(&o);
        o.bNoWrite = 1;
        ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
        ASSERT(r.aTrace[0].f.bSegments);
        ASSERT_EQ(1, r.aTrace[0].nOom);
        const struct vt_finding *f = NULL;
        for (int i = 0; i < r.nFind; i++)
            if (!strcmp(r.aFind[i].zKind, "oom")) f = &r.aFind[i];
        ASSERT(f);
        ASSERT_EQ(VT_SEV_HIGH, f->severity);
        if (k == 0) {
            ASSERT_STREQ("real demand or fragmentation: cannot tell at segment level", r.aTrace[0].aOom[0].zVerdict);
            ASSERT_CONTAINS(f->zTitle, "(real demand or fragmentation: cannot tell at segment level)");
            ASSERT_CONTAINS(f->zFix, "reserved by PyTorch but unallocated");
            ASSERT_CONTAINS(f->zFix, "expandable_segments:True");
            ASSERT_CONTAINS(f->zFix, "analyze --snapshot");
        } else {
            ASSERT_STREQ("real demand", r.aTrace[0].aOom[0].zVerdict);
            ASSERT_CONTAINS(f->zEvidence, "larger than the device's total memory");
        }
        vt__result_free(&r);
    }
    tg_cleanup();
}

/* The leak findings of r (any severity). */
static int count_kind(const struct vt_result *r, const char *zKind)
{
    int n = 0;
    for (int i = 0; i < r->nFind; i++) n += !strcmp(r->aFind[i].zKind, zKind);
    return n;
}

/*
 * A tensor-level training job (kernel uses recorded, no iteration marked): 6 steps each make
 * 4 layers' activations (1 GiB each, used by kernels, freed at the step's end) beside 2 GiB of
 * weights; the 7th step's activations are live when its 12 GiB request fails, and the job dies:
 * nothing is allocated afterwards, the interpreter takes 1.5 s to exit. What is live at the end
 * was live at the crash: the OOM finding holds it, no leak finding does.
 * bRecover: the job catches the error, frees the step and trains 3 more steps instead.
 */
static void build_crash(const char *zPath, int bRecover)
{
    struct tg *g = tg_open(zPath);
    int64_t sW, aS[4], w = 0x700000000LL;
    int nStep = bRecover == 1 ? 10 : 7;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "train.py", 20, "main");
    for (int k = 0; k < 4; k++) aS[k] = tg_stack(g, "model.py", 30 + k, "forward");
    tg_alloc(g, 1 * MS, 0, 3, w, 2 * GiB + 4096, sW);
    for (int i = 0; i < nStep; i++) {
        int64_t ts = 100 * MS + i * 200 * MS;
        int bCrash = i == 6;
        for (int k = 0; k < 4; k++) {
            int64_t a = 0x100000000LL + k * 0x80000000LL, c;
            tg_alloc(g, ts + k * 10 * MS, 0, 3, a, GiB + 4096 * (k + 1), aS[k]);
            c = tg_kernel(g, ts + k * 10 * MS + 1000, ts + k * 10 * MS + 5 * MS, "sgemm_128x64_nn");
            tg_use(g, ts + k * 10 * MS + 500, c, a);
            tg_use(g, ts + k * 10 * MS + 500, c, w);
        }
        if (bCrash) {
            tg_oom(g, ts + 60 * MS, 0, 12 * GiB, 9 * GiB + GiB / 2, 16 * GiB, aS[3]);
            if (bRecover == 2) /* the loader's pin-memory thread fills its queue as the main thread dies */
                tg_alloc(g, ts + 160 * MS, 0, 2 /* pinned */, 0xA00000000LL, GiB, -1);
            if (bRecover != 1) break;
        }
        for (int k = 0; k < 4; k++)
            tg_free(g, ts + 150 * MS + k * 1000, 0, 3, 0x100000000LL + k * 0x80000000LL, GiB + 4096 * (k + 1));
    }
    /* the interpreter's exit, 1.5 s after the last step (an NVTX range its atexit handler marks) */
    tg_nvtx(g, 100 * MS + (nStep - 1) * 200 * MS + 1500 * MS, 100 * MS + (nStep - 1) * 200 * MS + 1501 * MS,
            "atexit");
    ASSERT_EQ(0, tg_close(g));
}

TEST(job_ended_at_oom_is_no_leak)
{
    const char *zPath = tg_path("crash.db");
    const char *az[1] = {zPath};
    struct vt_result r;
    struct vt_opts o;
    const struct vt_finding *f = NULL;
    build_crash(zPath, 0);
    vt__opts_default(&o);
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    /* the weights and the 4 activations live at the end were live at the crash */
    ASSERT_EQ(0, count_kind(&r, "leak"));
    ASSERT_EQ(0, count_kind(&r, "retained"));
    ASSERT_EQ(1, count_kind(&r, "oom"));
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "oom")) f = &r.aFind[i];
    ASSERT_EQ(1, r.aTrace[0].nFail);
    ASSERT(r.aTrace[0].aFail[0].bFatal);
    ASSERT_EQ(r.aTrace[0].aOom[0].ts, r.aTrace[0].crashTs);
    ASSERT_EQ(5, r.aTrace[0].aFail[0].liveEndCount);
    ASSERT_EQ(6 * GiB + 4096 * 11, r.aTrace[0].aFail[0].liveEndBytes);
    ASSERT_CONTAINS(f->zEvidence, "The job ended at this failure");
    ASSERT_CONTAINS(f->zEvidence, "the 6.00 GiB in 5 allocations still live on device 0 when the trace ends was live "
                                  "at the crash");
    ASSERT_CONTAINS(f->zEvidence, "from model.py:30 in forward");
    vt__result_free(&r);

    /* a pinned batch the loader's thread allocates after the failure: the job still ended there */
    zPath = tg_path("crash_pinned.db");
    az[0] = zPath;
    build_crash(zPath, 2);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.aTrace[0].nFail);
    ASSERT(r.aTrace[0].aFail[0].bFatal);
    ASSERT_EQ(r.aTrace[0].aOom[0].ts, r.aTrace[0].crashTs);
    ASSERT_EQ(0, count_kind(&r, "leak"));
    vt__result_free(&r);

    /* the look-alike: the error is caught and training goes on; then the job did not end there */
    zPath = tg_path("recover.db");
    az[0] = zPath;
    build_crash(zPath, 1);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.aTrace[0].nFail);
    ASSERT(!r.aTrace[0].aFail[0].bFatal);
    ASSERT_EQ(-1, r.aTrace[0].crashTs);
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "oom")) ASSERT(!strstr(r.aFind[i].zEvidence, "The job ended"));
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * One failed request, three attempts: 4 GiB from model.py:67 fails, the allocator frees a cached
 * 1 GiB block and tries again, the caller's handler (train.py:83) catches the error and asks for
 * 3 GiB: one failure. Two steps later another request fails once: a second failure.
 */
TEST(attempts_of_one_failure_are_one_finding)
{
    const char *zPath = tg_path("attempts.db");
    const char *az[1] = {zPath};
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    struct vt_opts o;
    int64_t sA, sB, sH;
    int nOom = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sA = tg_stack(g, "train.py", 20, "main");
    sB = tg_stack(g, "model.py", 67, "CausalSelfAttention.forward");
    sH = tg_stack(g, "train.py", 83, "train_one_epoch");
    tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, 10 * GiB + 4096, sA);
    tg_alloc(g, 2 * MS, 0, 3, 0x900000000LL, 1 * GiB + 4096, sA);
    for (int i = 0; i < 8; i++) {
        char zName[32];
        snprintf(zName, sizeof zName, "step %d", i);
        tg_nvtx(g, 100 * MS * (i + 1), 100 * MS * (i + 2), zName);
    }
    tg_oom(g, 410 * MS, 0, 4 * GiB, GiB + GiB / 2, 16 * GiB, sB);
    tg_free(g, 410 * MS + 1000, 0, 3, 0x900000000LL, 1 * GiB + 4096);
    tg_oom(g, 410 * MS + 2000, 0, 4 * GiB, 2 * GiB + GiB / 2, 16 * GiB, sB);
    tg_oom(g, 411 * MS, 0, 3 * GiB, 2 * GiB + GiB / 2, 16 * GiB, sH);
    tg_alloc(g, 520 * MS, 0, 3, 0xa00000000LL, 1 * GiB + 8192, sA); /* the next steps go on */
    tg_free(g, 590 * MS, 0, 3, 0xa00000000LL, 1 * GiB + 8192);
    tg_oom(g, 710 * MS, 0, 4 * GiB, 2 * GiB + GiB / 2, 16 * GiB, sB);
    tg_kernel(g, 880 * MS, 890 * MS, "elementwise_kernel");
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(4, r.aTrace[0].nOom);
    ASSERT_EQ(2, r.aTrace[0].nFail);
    ASSERT_EQ(3, r.aTrace[0].aFail[0].nAttempt);
    ASSERT_EQ(4 * GiB, r.aTrace[0].aFail[0].requested);
    ASSERT_EQ(1, r.aTrace[0].aFail[0].iJudged); /* the retry after the cache was released */
    ASSERT_EQ(1, r.aTrace[0].aFail[1].nAttempt);
    ASSERT(!r.aTrace[0].aFail[0].bFatal);
    /* the two failures read alike: one finding standing for both (group.c), the first's evidence */
    for (int i = 0; i < r.nFind; i++) {
        const struct vt_finding *f = &r.aFind[i];
        if (strcmp(f->zKind, "oom")) continue;
        nOom++;
        ASSERT_STREQ("model.py:67 in CausalSelfAttention.forward", f->zSite);
        ASSERT_EQ(2, f->nSame);
        ASSERT_EQ(4, f->count); /* 3 attempts + 1 */
        ASSERT_EQ(4 * GiB, f->bytes);
        ASSERT_EQ(410 * MS, f->firstTs);
        ASSERT_EQ(710 * MS, f->lastTs);
        ASSERT_CONTAINS(f->zEvidence, "The request failed 3 times (4.00 GiB at 409.0 ms, 4.00 GiB at 409.0 ms, "
                                      "3.00 GiB at 410.0 ms); at the first attempt this process held 11.0 GiB.");
    }
    ASSERT_EQ(1, nOom);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * No error reaches the program: a confusion matrix's 6 GiB cudaMalloc fails, the allocator releases a
 * cached 2 GiB segment and the same request succeeds at once; at a convolution cuDNN asks for two
 * workspaces larger than the device (both fail) and takes a 64 MiB one. Each is said at info
 * ("recovered"), not as an OOM of the job; training goes on.
 */
TEST(recovered_requests_are_info)
{
    const char *zPath = tg_path("recovered.db");
    const char *az[1] = {zPath};
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    struct vt_opts o;
    int64_t sW, sM, sC;
    int nInfo = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "train.py", 20, "main");
    sM = tg_stack(g, "metrics.py", 60, "confusion");
    sC = tg_stack(g, "train.py", 66, "train_one_epoch");
    tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, 8 * GiB + 4096, sW);
    tg_alloc(g, 2 * MS, 0, 3, 0x900000000LL, 2 * GiB + 4096, sW);
    for (int i = 0; i < 8; i++) {
        char zName[32];
        snprintf(zName, sizeof zName, "iter %d", i);
        tg_nvtx(g, 100 * MS * (i + 1), 100 * MS * (i + 2), zName);
    }
    tg_oom(g, 310 * MS, 0, 6 * GiB, 5 * GiB, 16 * GiB, sM);
    tg_free(g, 310 * MS + 1000, 0, 3, 0x900000000LL, 2 * GiB + 4096); /* the cache released */
    tg_alloc(g, 310 * MS + 2000, 0, 3, 0xa00000000LL, 6 * GiB, sM);   /* the retry succeeds */
    tg_free(g, 350 * MS, 0, 3, 0xa00000000LL, 6 * GiB);
    tg_oom(g, 410 * MS, 0, 40 * GiB, 7 * GiB, 16 * GiB, sC);           /* cuDNN's workspaces */
    tg_oom(g, 410 * MS + 1000, 0, 39 * GiB, 7 * GiB, 16 * GiB, sC);
    tg_alloc(g, 410 * MS + 2000, 0, 3, 0xa00000000LL, 64 * MiB, sC);
    tg_free(g, 420 * MS, 0, 3, 0xa00000000LL, 64 * MiB);
    for (int i = 5; i < 8; i++) { /* the next steps go on */
        tg_alloc(g, 100 * MS * (i + 1) + MS, 0, 3, 0xb00000000LL, GiB, sC);
        tg_free(g, 100 * MS * (i + 1) + 50 * MS, 0, 3, 0xb00000000LL, GiB);
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(2, r.aTrace[0].nFail);
    ASSERT(r.aTrace[0].aFail[0].bRecovered && r.aTrace[0].aFail[1].bRecovered);
    ASSERT_EQ(2, r.aTrace[0].aFail[1].nAttempt);
    for (int i = 0; i < r.nFind; i++) {
        ASSERT(r.aFind[i].severity < VT_SEV_LOW);
        if (!strcmp(r.aFind[i].zKind, "oom")) {
            nInfo += r.aFind[i].nSame;
            ASSERT_CONTAINS(r.aFind[i].zTitle, "Out of memory, recovered:");
            ASSERT_CONTAINS(r.aFind[i].zFix, "Nothing to fix");
        }
    }
    ASSERT_EQ(2, nInfo);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * A loop that catches the error and retries the step with half the batch (the step's range begun
 * again): the first attempt fails at the attention (396 MiB), the retry's forward gets its first
 * layers and fails at the MLP (198 MiB); then the next steps go on. One failure of two attempts,
 * an error the program saw (high).
 */
TEST(retry_with_a_smaller_batch_is_one_failure)
{
    const char *zPath = tg_path("halve.db");
    const char *az[1] = {zPath};
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    struct vt_opts o;
    int64_t sW, sL, sA, sM;
    int nOom = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "train.py", 20, "main");
    sL = tg_stack(g, "model.py", 30, "Block.forward");
    sA = tg_stack(g, "model.py", 61, "CausalSelfAttention.forward");
    sM = tg_stack(g, "model.py", 94, "MLP.forward");
    tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, 15 * GiB, sW);
    for (int i = 0; i < 5; i++) tg_nvtx(g, 100 * MS * (i + 1), 100 * MS * (i + 2), "iter");
    tg_nvtx(g, 600 * MS, 650 * MS, "iter"); /* the failing step, closed as the error unwinds it */
    tg_alloc(g, 610 * MS, 0, 3, 0x500000000LL, 300 * MiB, sL);
    tg_oom(g, 640 * MS, 0, 396 * MiB, 200 * MiB, 16 * GiB, sA);
    tg_free(g, 645 * MS, 0, 3, 0x500000000LL, 300 * MiB);
    tg_nvtx(g, 660 * MS, 720 * MS, "iter"); /* the same step again, half the batch */
    tg_alloc(g, 670 * MS, 0, 3, 0x500000000LL, 150 * MiB, sL);
    tg_alloc(g, 680 * MS, 0, 3, 0x600000000LL, 198 * MiB, sA);
    tg_oom(g, 700 * MS, 0, 198 * MiB, 100 * MiB, 16 * GiB, sM);
    tg_free(g, 705 * MS, 0, 3, 0x500000000LL, 150 * MiB);
    tg_free(g, 705 * MS, 0, 3, 0x600000000LL, 198 * MiB);
    for (int i = 0; i < 3; i++) { /* the next steps, at the usual batch */
        int64_t t0 = 730 * MS + i * 100 * MS;
        tg_nvtx(g, t0, t0 + 100 * MS, "iter");
        tg_alloc(g, t0 + 10 * MS, 0, 3, 0x500000000LL, 100 * MiB, sL);
        tg_free(g, t0 + 60 * MS, 0, 3, 0x500000000LL, 100 * MiB);
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.aTrace[0].nFail);
    ASSERT_EQ(2, r.aTrace[0].aFail[0].nAttempt);
    ASSERT(!r.aTrace[0].aFail[0].bRecovered && !r.aTrace[0].aFail[0].bFatal);
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "oom")) {
            nOom++;
            ASSERT_EQ(VT_SEV_HIGH, r.aFind[i].severity);
            ASSERT_EQ(1, r.aFind[i].nSame);
            ASSERT_EQ(2, r.aFind[i].count);
            ASSERT_EQ(396 * MiB, r.aFind[i].bytes);
            ASSERT_STREQ("model.py:61 in CausalSelfAttention.forward", r.aFind[i].zSite);
        }
    ASSERT_EQ(1, nOom);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * cudnn.benchmark at the first forward of a new shape: as the step begins, before its range opens,
 * cuDNN asks for two workspaces larger than the device could ever give (free plus all the process
 * held), both fail; the forward's first layers get their activations (another line), then the
 * convolution's own 6 GiB output fails twice (the allocator's retry) and the error reaches the
 * program, which skips the step; training goes on. One failure, judged on the convolution's request,
 * not on the probes (it was two findings, the probes' "40.0 GiB ... fragmentation" beside it).
 * bLater, the control: the convolution fails a step later, after a whole step went on: two failures.
 */
static void probes_then_failure(int bLater)
{
    const char *zPath = tg_path("probes.db");
    const char *az[1] = {zPath};
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    struct vt_opts o;
    int64_t sW, sL, sC, tFail = bLater ? 550 * MS : 450 * MS;
    int nOom = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "train.py", 20, "main");
    sL = tg_stack(g, "model.py", 30, "Block.forward");
    sC = tg_stack(g, "train.py", 66, "train_one_epoch");
    tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, 8 * GiB, sW);
    for (int i = 0; i < 8; i++) tg_nvtx(g, 100 * MS * (i + 1) + 2 * MS, 100 * MS * (i + 2), "iter");
    tg_oom(g, 401 * MS, 0, 40 * GiB, 7 * GiB, 16 * GiB, sC); /* in the gap before the 4th step opens */
    tg_oom(g, 401 * MS + 1000, 0, 39 * GiB, 7 * GiB, 16 * GiB, sC);
    for (int i = 0; i < 8; i++) { /* every step's activations, the failing step's up to its failure */
        int64_t t0 = 100 * MS * (i + 1) + 10 * MS;
        tg_alloc(g, t0, 0, 3, 0x300000000LL, 6 * GiB, sL);
        tg_free(g, t0 + 60 * MS, 0, 3, 0x300000000LL, 6 * GiB);
    }
    tg_oom(g, tFail, 0, 6 * GiB, 1 * GiB, 16 * GiB, sC);
    tg_oom(g, tFail + 1000, 0, 6 * GiB, 1 * GiB, 16 * GiB, sC);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(4, r.aTrace[0].nOom);
    ASSERT_EQ(bLater ? 2 : 1, r.aTrace[0].nFail);
    if (!bLater) {
        ASSERT_EQ(4, r.aTrace[0].aFail[0].nAttempt);
        ASSERT_EQ(6 * GiB, r.aTrace[0].aFail[0].requested);
        ASSERT_EQ(3, r.aTrace[0].aFail[0].iJudged); /* the convolution's retry, not a probe */
    }
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "oom") && r.aFind[i].severity >= VT_SEV_LOW) {
            nOom += r.aFind[i].nSame; /* failures that read alike are one finding standing for each (group.c) */
            if (!bLater) ASSERT_EQ(6 * GiB, r.aFind[i].bytes);
        }
    ASSERT_EQ(bLater ? 2 : 1, nOom);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(probes_before_a_step_and_its_failure_are_one) { probes_then_failure(0); }
TEST(probes_and_a_failure_a_step_later_are_two) { probes_then_failure(1); }

/*
 * PyTorch's history merged, its ring reaching back only to 500 ms: at 410 ms cuDNN asks for a
 * workspace larger than the device could ever give (twice: the allocator's retry) and takes a 64 MiB
 * one at once, a cudaMalloc of the same call site; no block of the history is that early. A failed
 * cudaMalloc is followed at CUDA's level, so the request was recovered (info); it was a HIGH OOM,
 * judged on the history's first block (another site, 90 ms later). bSmaller, the control: the
 * request could have fit and the next cudaMalloc of its site gets half of it (a caller retrying a
 * smaller batch): an error the program saw, high, at either level.
 */
static void history_failure_followed_by_cuda(int bSmaller)
{
    const char *zPath = tg_path("history_oom.db");
    const char *az[1] = {zPath};
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    struct vt_opts o;
    int64_t sW, sL, sC, ask = bSmaller ? 6 * GiB : 40 * GiB, got = bSmaller ? 3 * GiB : 64 * MiB;
    int nOom = 0;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "train.py", 20, "main");
    sL = tg_stack(g, "model.py", 30, "Block.forward");
    sC = tg_stack(g, "train.py", 66, "train_one_epoch");
    tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, 8 * GiB, sW);
    tg_alloc(g, 2 * MS, 0, 3, 0x400000000LL, 4 * GiB, sL);
    for (int i = 0; i < 8; i++) tg_nvtx(g, 100 * MS * (i + 1), 100 * MS * (i + 2), "iter");
    tg_oom(g, 410 * MS, 0, ask, 3 * GiB, 16 * GiB, sC);
    tg_oom(g, 410 * MS + 1000, 0, ask, 3 * GiB, 16 * GiB, sC);
    tg_alloc(g, 410 * MS + 2000, 0, 3, 0x600000000LL, got, sC);
    tg_free(g, 420 * MS, 0, 3, 0x600000000LL, got);
    for (int i = 4; i < 8; i++) { /* the history's ring: the blocks of the last steps only */
        int64_t t0 = 100 * MS * (i + 1) + 10 * MS;
        tg_block(g, t0, 1, 0x400000000LL, 2 * GiB, sL);
        tg_block(g, t0 + 50 * MS, 2, 0x400000000LL, 2 * GiB, -1);
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.aTrace[0].nFail);
    ASSERT_EQ(2, r.aTrace[0].aFail[0].nAttempt);
    ASSERT_EQ(!bSmaller, r.aTrace[0].aFail[0].bRecovered);
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "oom")) {
            nOom++;
            ASSERT_EQ(bSmaller ? VT_SEV_HIGH : VT_SEV_INFO, r.aFind[i].severity);
            ASSERT_STREQ("train.py:66 in train_one_epoch", r.aFind[i].zSite);
        }
    ASSERT_EQ(1, nOom);
    vt__result_free(&r);
    tg_cleanup();
}

TEST(history_failure_recovered_at_cuda_level_is_info) { history_failure_followed_by_cuda(0); }
TEST(history_failure_retried_smaller_stays_high) { history_failure_followed_by_cuda(1); }

/*
 * Tensor level: four steps each allocate 4 tensors of 1 GiB at model.py:94 over 1 GiB of weights (a peak
 * of 5 GiB); the fifth, at four times the batch (bLarger: a batch-size finder's doubling twice), gets two
 * of 4 GiB and its third fails with 6.5 GiB free. The memory for the request was there, but the step at
 * its shape needs about 1 + 4 x 4 = 17 GiB, more than the 15.5 GiB the process could have had: real
 * demand (it was "fragmentation/caching", whose fix, expandable segments, cannot help). Control
 * (!bLarger): the fifth step at the usual shape fails at a 1 GiB request with 6.5 GiB free: fragmentation.
 */
static void larger_shape_than_before(int bLarger)
{
    const char *zPath = tg_path("larger.db");
    const char *az[1] = {zPath};
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    struct vt_opts o;
    int64_t sW, sM, unit = bLarger ? 4 * GiB : 1 * GiB;
    ASSERT(g);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "train.py", 20, "main");
    sM = tg_stack(g, "model.py", 94, "MLP.forward");
    tg_alloc(g, 1 * MS, 0, 3, 0x100000000LL, 1 * GiB, sW);
    for (int i = 0; i < 5; i++) tg_nvtx(g, 100 * MS * (i + 1), 100 * MS * (i + 2) - MS, "iter");
    for (int i = 0; i < 4; i++) {
        int64_t t0 = 100 * MS * (i + 1);
        for (int k = 0; k < 4; k++) tg_alloc(g, t0 + (k + 1) * MS, 0, 3, 0x200000000LL + k * 0x100000000LL, 1 * GiB, sM);
        for (int k = 0; k < 4; k++) tg_free(g, t0 + 50 * MS, 0, 3, 0x200000000LL + k * 0x100000000LL, 1 * GiB);
    }
    for (int k = 0; k < 2; k++) tg_alloc(g, 501 * MS + k * MS, 0, 3, 0x800000000LL + k * 0x200000000LL, unit, sM);
    tg_oom(g, 510 * MS, 0, unit, 6 * GiB + 512 * MiB, 16 * GiB, sM);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    ASSERT_EQ(1, r.aTrace[0].nOom);
    ASSERT_STREQ(bLarger ? "real demand" : "fragmentation/caching", r.aTrace[0].aOom[0].zVerdict);
    for (int i = 0; i < r.nFind; i++)
        if (!strcmp(r.aFind[i].zKind, "oom") && bLarger)
            ASSERT_CONTAINS(r.aFind[i].zEvidence, "The request is 4.0x the largest its call site made before");
    vt__result_free(&r);
    tg_cleanup();
}

TEST(step_at_a_larger_shape_than_before_is_real_demand) { larger_shape_than_before(1); }
TEST(step_at_the_usual_shape_with_memory_free_is_fragmentation) { larger_shape_than_before(0); }

VT_TEST_LIST(T(segment_level_cannot_tell_fragmentation) T(three_verdicts_three_processes) T(oom_sample_shape) T(retried_request_is_one_finding)
                 T(live_grouped_by_site_and_kind) T(job_ended_at_oom_is_no_leak) T(attempts_of_one_failure_are_one_finding)
                 T(recovered_requests_are_info) T(retry_with_a_smaller_batch_is_one_failure) T(device_full_of_live_tensors_is_real_demand)
                 T(others_by_nvml_readings) T(probes_before_a_step_and_its_failure_are_one)
                 T(probes_and_a_failure_a_step_later_are_two) T(history_failure_recovered_at_cuda_level_is_info)
                 T(history_failure_retried_smaller_stays_high)
                 T(step_at_a_larger_shape_than_before_is_real_demand) T(step_at_the_usual_shape_with_memory_free_is_fragmentation))
