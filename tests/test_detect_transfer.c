/* Tests for the transfer detector: pageable copies, copies without overlap, pinned growth. */
#include <string.h>

#include "report/report.h"
#include "tracegen.h"
#include "vt_test.h"

#define DEV 0x100000000LL
#define HOST 0x7f0000000000LL

static void run(const char *zPath, struct vt_result *r)
{
    struct vt_opts o;
    const char *az[1] = {zPath};
    vt__opts_default(&o);
    o.bNoWrite = 0; /* --save: the tests read what is written back */
    ASSERT_EQ(0, vt__analyze(az, 1, &o, r));
}

static const struct vt_finding *find(const struct vt_result *r, const char *zTitle)
{
    for (int i = 0; i < r->nFind; i++)
        if (strstr(r->aFind[i].zTitle, zTitle)) return &r->aFind[i];
    return NULL;
}

/* 20 pageable 8 MiB copies of 4 ms (2.1 GB/s), 5 pinned ones of 0.7 ms, no kernel during any
 * copy; a pinned host buffer of 16 MiB allocated every 10 ms and kept. The first copy ends before
 * the first kernel, but its size is copied in every later step: the first step's input, not
 * start-up; all 20 are judged, 80 ms against the 201 ms from the first kernel on. The serialized
 * copy time is mostly the pageable copies': said in their finding, not as a second one. */
TEST(pageable_serialized_and_pinned_growth)
{
    const char *zPath = tg_path("xfer.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const struct vt_finding *f;
    int64_t sPin;
    ASSERT(g);
    sPin = tg_stack(g, "loader.py", 40, "pin");
    tg_alloc(g, 0, 0, 3, DEV, 8 * MiB, -1);
    for (int i = 0; i < 20; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS;
        tg_memcpy(g, t0, t0 + 4 * MS, 1, 1, 3, 8 * MiB, HOST, DEV);
        tg_kernel(g, t0 + 5 * MS, t0 + 9 * MS, "gemm");
        tg_alloc(g, t0 + 9 * MS, -1, 2, HOST + 0x100000000LL + i * 0x1000000LL, 16 * MiB, sPin);
    }
    for (int i = 0; i < 5; i++) tg_memcpy(g, 201 * MS + i * MS, 201 * MS + i * MS + 700000, 1, 2, 3, 8 * MiB, -1, DEV);
    tg_free(g, 207 * MS, 0, 3, DEV, 8 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(2, r.nFind);
    f = find(&r, "from pageable host memory");
    ASSERT(f);
    ASSERT_EQ(VT_SEV_HIGH, f->severity);
    ASSERT_EQ(160 * MiB, f->bytes);
    ASSERT_EQ(20, f->count);
    ASSERT_CONTAINS(f->zTitle, "20 host-to-device copies (160 MiB) from pageable host memory: 39.8% of the run after "
                               "start-up");
    ASSERT_CONTAINS(f->zEvidence, "Host to device: 20 pageable copies, 160 MiB in 80.0 ms at 2.10 GB/s");
    ASSERT_CONTAINS(f->zEvidence, "reached 11.98 GB/s");
    ASSERT_CONTAINS(f->zFix, "pin_memory=True");
    ASSERT_CONTAINS(f->zEvidence, "From the first kernel (at 5.0 ms) on, with the first step's input copied before "
                                  "it, they blocked the host thread for 80.0 ms, 39.8% of that time; 80.0 ms of it "
                                  "with no kernel running (the GPU waited for the data): overlaps no compute. The copy "
                                  "(8.00 MiB, 4.0 ms) before the first kernel, of sizes copied again in later steps, "
                                  "is the first step's input and counted.");
    ASSERT(!strstr(f->zEvidence, "start-up (moved once"));
    ASSERT_CONTAINS(f->zEvidence, "expected saving 80.0 ms (39.8% of the run after start-up)");
    ASSERT_CONTAINS(f->zEvidence, "Host-device copies ran for 83.5 ms (41.5% of the run after start-up) while no "
                                  "kernel was running");
    /* its span holds the 20 copies it counts (1 ms to 195 ms), the first step's input before the first kernel
     * with them: a window pasted from it into export --from/--to shows what it counts */
    ASSERT_EQ(1 * MS, f->firstTs);
    ASSERT_EQ(195 * MS, f->lastTs);
    ASSERT_EQ(6 * MS, r.aTrace[0].xf.firstKernelTs);
    ASSERT_EQ(4 * MS, r.aTrace[0].xf.x[0].prePageNs + r.aTrace[0].xf.x[1].prePageNs);
    ASSERT(!find(&r, "serialized with compute"));
    ASSERT_EQ(80 * MS + 5 * 700000, r.aTrace[0].xf.copySerialNs);
    ASSERT_EQ(80 * MS, r.aTrace[0].xf.kernelBusyNs);
    f = find(&r, "Pinned host memory keeps growing");
    ASSERT(f);
    ASSERT_EQ(VT_SEV_MEDIUM, f->severity);
    ASSERT_CONTAINS(f->zFix, "prefetch_factor");
    ASSERT_STREQ("loader.py:40 in pin", f->zSite);
    ASSERT_CONTAINS(f->zEvidence, "At the peak 20 pinned allocations (320 MiB) were live from loader.py:40 in pin.");
    f = find(&r, "from pageable host memory");
    ASSERT_STREQ("host-device copies", f->zSite); /* no copy's call site recorded */
    vt__result_free(&r);
    tg_cleanup();
}

/* The same pinned growth with PyTorch's allocation history merged (blocks inside the device's one segment):
 * pinned host memory is CUDA's own allocations, not the allocator's blocks, so its finding still names the
 * pinned allocations' site. */
TEST(pinned_growth_site_with_allocation_history)
{
    const char *zPath = tg_path("xfer_hist.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const struct vt_finding *f;
    int64_t sPin, sAct;
    ASSERT(g);
    sPin = tg_stack(g, "pin_memory.py", 90, "pin_memory");
    sAct = tg_stack(g, "model.py", 12, "forward");
    tg_alloc(g, 0, 0, 3, DEV, 512 * MiB, sAct);
    for (int i = 0; i < 20; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS;
        tg_alloc(g, t0, -1, 2, HOST + i * 0x1000000LL, 16 * MiB, sPin);
        tg_memcpy(g, t0 + 1 * MS, t0 + 2 * MS, 1, 2, 3, 16 * MiB, HOST + i * 0x1000000LL, DEV);
        tg_block(g, t0 + 2 * MS, 1, DEV, 16 * MiB, sAct);
        tg_kernel(g, t0 + 2 * MS, t0 + 9 * MS, "gemm");
        tg_block(g, t0 + 9 * MS, 2, DEV, 16 * MiB, sAct);
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    f = find(&r, "Pinned host memory keeps growing");
    ASSERT(f);
    ASSERT_STREQ("pin_memory.py:90 in pin_memory", f->zSite);
    ASSERT_CONTAINS(f->zEvidence, "At the peak 20 pinned allocations (320 MiB) were live from pin_memory.py:90 in "
                                  "pin_memory.");
    vt__result_free(&r);
    tg_cleanup();
}

/* A short run whose loader's pinned ring fills: 20 batches of 128 KiB, each in a new pinned block (2.5 MiB
 * in all). It rises like pinned growth, but so little page-locked memory is said at info (it was medium). */
TEST(small_pinned_ring_filling_is_info)
{
    const char *zPath = tg_path("xfer_ring.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const struct vt_finding *f;
    int64_t sPin = 0;
    ASSERT(g);
    sPin = tg_stack(g, "pin_memory.py", 90, "pin_memory");
    tg_alloc(g, 0, 0, 3, DEV, 8 * MiB, -1);
    for (int i = 0; i < 20; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS;
        tg_alloc(g, t0, -1, 2, HOST + i * 0x1000000LL, 128 * 1024, sPin);
        tg_memcpy(g, t0 + 1 * MS, t0 + 1 * MS + 20000, 1, 2, 3, 128 * 1024, HOST + i * 0x1000000LL, DEV);
        tg_kernel(g, t0 + 2 * MS, t0 + 9 * MS, "gemm");
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    f = find(&r, "Pinned host memory keeps growing");
    ASSERT(f);
    ASSERT_EQ(VT_SEV_INFO, f->severity);
    ASSERT_CONTAINS(f->zEvidence, "Under 64 MiB");
    vt__result_free(&r);
    tg_cleanup();
}

/* Pinned copies overlapped with kernels, a few tiny pageable .item() reads: nothing to report. */
TEST(pinned_overlapped_copies_are_fine)
{
    const char *zPath = tg_path("xfer_ok.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    ASSERT(g);
    tg_alloc(g, 0, 0, 3, DEV, 8 * MiB, -1);
    tg_alloc(g, 0, -1, 2, HOST, 64 * MiB, -1);
    for (int i = 0; i < 20; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS;
        tg_kernel(g, t0, t0 + 9 * MS, "gemm");
        tg_memcpy(g, t0 + 1 * MS, t0 + 2 * MS, 1, 2, 3, 8 * MiB, HOST, DEV);
        tg_memcpy(g, t0 + 9 * MS, t0 + 9 * MS + 2000, 2, 3, 1, 4, DEV, -1);
    }
    tg_free(g, 205 * MS, -1, 2, HOST, 64 * MiB);
    tg_free(g, 205 * MS, 0, 3, DEV, 8 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(0, r.nFind);
    ASSERT_EQ(20, r.aTrace[0].xf.x[1].pageCount); /* counted, but 80 bytes is below --min-bytes */
    ASSERT_EQ(20 * 2000, r.aTrace[0].xf.copySerialNs); /* the DtoH reads run after the kernel */
    vt__result_free(&r);
    tg_cleanup();
}

/* The 'copies' sample: one buffer of 25,178,112 bytes copied 5 times each way from pageable
 * memory, then 5 times each way from pinned memory; no kernels. One transfer finding. */
TEST(copies_sample_shape)
{
    const char *zPath = tg_path("copies.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const int64_t n = 25178112;
    int64_t ts = 1 * MS;
    ASSERT(g);
    tg_meta(g, "config.tensors", "0");
    tg_alloc(g, 0, 0, 3, DEV, n, -1);
    tg_alloc(g, 1, 0, 2, HOST, n, -1);
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 5; i++) {
            int bPinned = k >= 2, bHtoD = k % 2 == 0;
            int64_t dur = bPinned ? 2 * MS : 5 * MS;
            tg_memcpy(g, ts, ts + dur, bHtoD ? 1 : 2, bHtoD ? (bPinned ? 2 : 1) : 3, bHtoD ? 3 : (bPinned ? 2 : 1), n,
                      bHtoD ? (bPinned ? HOST : 0x5000) : DEV, bHtoD ? DEV : (bPinned ? HOST : 0x5000));
            ts += dur + 100000;
        }
    tg_free(g, ts, 0, 3, DEV, n);
    tg_free(g, ts + 1, 0, 2, HOST, n);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(1, r.nFind);
    ASSERT_STREQ("transfer", r.aFind[0].zKind);
    ASSERT_EQ(10, r.aFind[0].count);
    ASSERT_EQ(251781120, r.aFind[0].bytes);
    ASSERT_EQ(VT_SEV_HIGH, r.aFind[0].severity);
    ASSERT_CONTAINS(r.aFind[0].zTitle, "10 copies (240 MiB) to and from pageable host memory");
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "at 5.04 GB/s; the fastest host-to-device copy of 64 KiB or more reached 12.59 GB/s");
    ASSERT_CONTAINS(r.aFind[0].zFix, "cudaMallocHost");
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "With no kernel in the trace, they blocked the host thread for 50.0 ms");
    vt__result_free(&r);
    tg_cleanup();
}

/* Pinned copies of 4 ms each with no kernel running meanwhile: the serialized finding stands on its own. */
TEST(pinned_copies_serialized)
{
    const char *zPath = tg_path("serial.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const struct vt_finding *f;
    ASSERT(g);
    tg_alloc(g, 0, 0, 3, DEV, 8 * MiB, -1);
    tg_alloc(g, 0, -1, 2, HOST, 8 * MiB, -1);
    for (int i = 0; i < 20; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS;
        tg_memcpy(g, t0, t0 + 4 * MS, 1, 2, 3, 8 * MiB, HOST, DEV);
        tg_kernel(g, t0 + 5 * MS, t0 + 9 * MS, "gemm");
    }
    tg_free(g, 205 * MS, -1, 2, HOST, 8 * MiB);
    tg_free(g, 205 * MS, 0, 3, DEV, 8 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(1, r.nFind);
    f = find(&r, "Copies serialized with compute: 76.0 ms"); /* the first ended before the first kernel */
    ASSERT(f);
    ASSERT_EQ(VT_SEV_MEDIUM, f->severity);
    /* it counts the copies its time is of, those after start-up, all in its span from the first kernel */
    ASSERT_EQ(19, f->count);
    ASSERT_EQ(152 * MiB, f->bytes);
    ASSERT_EQ(6 * MS, f->firstTs);
    ASSERT_CONTAINS(f->zEvidence, "Host-device copies ran for 76.0 ms (38.2% of the run after start-up) while no "
                                  "kernel was running "
                                  "(kernels were busy 80.0 ms in total). The GPU waits for data");
    vt__result_free(&r);
    tg_cleanup();
}

/* Weights moved once from pageable memory at the start of a long run (0.2 % of it): info, whatever
 * the bandwidth. */
TEST(one_off_pageable_copy_is_info)
{
    const char *zPath = tg_path("once.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    ASSERT(g);
    tg_alloc(g, 0, 0, 3, DEV, 8 * MiB, -1);
    tg_memcpy(g, 1 * MS, 2 * MS, 1, 1, 3, 8 * MiB, HOST, DEV);              /* 8.4 GB/s, pageable */
    for (int i = 0; i < 100; i++) {
        int64_t t0 = 5 * MS + i * 5 * MS;
        tg_kernel(g, t0, t0 + 4 * MS, "gemm");
        tg_memcpy(g, t0 + 1 * MS, t0 + 1 * MS + 100000, 1, 2, 3, 4 * MiB, HOST, DEV); /* 42 GB/s, pinned */
    }
    tg_free(g, 505 * MS, 0, 3, DEV, 8 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(1, r.nFind);
    ASSERT_EQ(VT_SEV_INFO, r.aFind[0].severity);
    /* one copy: said in the singular */
    ASSERT_CONTAINS(r.aFind[0].zTitle, "1 host-to-device copy (8.00 MiB) from pageable host memory at start-up");
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "Host to device: 1 pageable copy, 8.00 MiB in 1.0 ms");
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "It ended before the first kernel started:");
    vt__result_free(&r);
    tg_cleanup();
}

/* A long run: 3000 pageable copies among 123,000 API calls, read without writing (no index is
 * built). Their call site is found by one scan of the API calls: a join of the copies with the
 * calls on their correlation ids read every call once per copy (hours of CPU here; the harness
 * stops a case at 120 s of CPU). */
TEST(pageable_copies_site_among_many_calls)
{
    const char *zPath = tg_path("many.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    struct vt_opts o;
    const char *az[1] = {zPath};
    const struct vt_finding *f;
    int64_t sBatch, corr = 1000;
    ASSERT(g);
    sBatch = tg_stack(g, "train.py", 61, "load_batch");
    tg_alloc(g, 0, 0, 3, DEV, 64 * MiB, -1);
    for (int i = 0; i < 3000; i++) {
        int64_t t0 = 1 * MS + i * 2 * MS;
        struct tg_apirow api = {60, corr, t0, t0 + MS / 2, 1, 0, 0, MiB, TG_NULL, HOST, DEV, TG_NULL, sBatch};
        struct tg_copyrow c = {t0, t0 + MS / 2, 0, 1, 7, corr++, 1, 1, 3, MiB, 0, HOST, DEV};
        tg_api_row(g, &api);
        tg_copy_row(g, &c);
        for (int k = 0; k < 40; k++) { /* the step's other calls, each a few microseconds */
            struct tg_apirow call = {211, corr++, t0 + MS / 2 + k * 20000, t0 + MS / 2 + k * 20000 + 5000, 1, 0, 0,
                                     TG_NULL, TG_NULL, TG_NULL, TG_NULL, 7, TG_NULL};
            tg_api_row(g, &call);
        }
        tg_kernel(g, t0 + MS / 2 + 900000, t0 + 2 * MS - 100000, "gemm");
    }
    tg_free(g, 6002 * MS, 0, 3, DEV, 64 * MiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.bNoWrite = 1;
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    f = find(&r, "from pageable host memory");
    ASSERT(f);
    ASSERT_STREQ("train.py:61 in load_batch", f->zSite);
    ASSERT_EQ(sBatch, f->stackId);
    vt__result_free(&r);
    tg_cleanup();
}

/* Pageable batch copies issued through torch on Windows (backslash paths): the finding points at
 * the user's line that issued most of the copy time, past the frames inside site-packages\\torch. */
TEST(pageable_copies_at_their_call_site)
{
    const char *zPath = tg_path("site.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const struct vt_finding *f;
    int64_t sBatch, sLabel;
    ASSERT(g);
    {
        const struct tg_frame aB[] = {
            {VT_FRAME_PYTHON, 0, "to", "C:\\Users\\al\\venv\\Lib\\site-packages\\torch\\_tensor.py", NULL, 1200},
            {VT_FRAME_PYTHON, 0, "train_one_epoch", "C:\\Users\\al\\proj\\train.py", NULL, 61}};
        const struct tg_frame aL[] = {
            {VT_FRAME_PYTHON, 0, "train_one_epoch", "C:\\Users\\al\\proj\\train.py", NULL, 62}};
        sBatch = tg_stack_frames(g, aB, 2, 0x1111);
        sLabel = tg_stack_frames(g, aL, 1, 0x2222);
    }
    tg_alloc(g, 0, 0, 3, DEV, 64 * MiB, -1);
    for (int i = 0; i < 20; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS;
        for (int k = 0; k < 2; k++) {
            int64_t a = k ? t0 + 4 * MS : t0, b = k ? t0 + 4 * MS + 100000 : t0 + 4 * MS;
            struct tg_apirow api = {60, 1000 + 2 * i + k, a, b, 1, 0, 0, k ? 4096 : 32 * MiB, TG_NULL, HOST, DEV,
                                    TG_NULL, k ? sLabel : sBatch};
            struct tg_copyrow c = {a, b, 0, 1, 7, 1000 + 2 * i + k, 1, 1, 3, k ? 4096 : 32 * MiB, 0, HOST, DEV};
            tg_api_row(g, &api);
            tg_copy_row(g, &c);
        }
        tg_kernel(g, t0 + 5 * MS, t0 + 9 * MS, "gemm");
    }
    tg_free(g, 205 * MS, 0, 3, DEV, 64 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    f = find(&r, "from pageable host memory");
    ASSERT(f);
    ASSERT_EQ(VT_SEV_HIGH, f->severity);
    ASSERT_STREQ("C:\\Users\\al\\proj\\train.py:61 in train_one_epoch", f->zSite);
    ASSERT_EQ(sBatch, f->stackId);
    ASSERT_CONTAINS(f->zEvidence, "Most of that time (19 copies, 76.0 ms) was issued from "
                                  "C:\\Users\\al\\proj\\train.py:61 in train_one_epoch.");
    vt__result_free(&r);
    tg_cleanup();
}

/* Pageable copies of 1 ms in each 10 ms step while another stream's kernels run through them:
 * 10 % of the run after start-up, but the GPU kept computing: what pinning saves is their time beyond
 * the host link's rate (a device not in the table: PCIe Gen3, 12 GB/s): 0.3 ms each, 3 %: low. */
TEST(overlapped_pageable_copies_judged_by_the_link)
{
    const char *zPath = tg_path("xfer_overlap.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const struct vt_finding *f;
    ASSERT(g);
    tg_alloc(g, 0, 0, 3, DEV, 8 * MiB, -1);
    tg_kernel(g, 0, 1 * MS, "init");
    for (int i = 0; i < 40; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS;
        tg_kernel(g, t0, t0 + 10 * MS, "gemm");
        tg_memcpy(g, t0 + 2 * MS, t0 + 3 * MS, 1, 1, 3, 8 * MiB, HOST, DEV);
    }
    tg_free(g, 401 * MS, 0, 3, DEV, 8 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(1, r.nFind);
    f = &r.aFind[0];
    ASSERT_EQ(VT_SEV_LOW, f->severity);
    ASSERT_CONTAINS(f->zTitle, "40 host-to-device copies (320 MiB) from pageable host memory: 10.0% of the run after "
                               "start-up");
    ASSERT_CONTAINS(f->zEvidence, "0 ns of it with no kernel running (the GPU waited for the data), while kernels "
                                  "ran: 40.0 ms.");
    ASSERT_CONTAINS(f->zEvidence, "over the host link (PCIe Gen3 x16 (device not in the table: the slowest link "
                                  "assumed), unknown device: about 12 GB/s from pinned memory) they would take 28.0 ms");
    ASSERT_CONTAINS(f->zEvidence, "expected saving 12.0 ms (3.0% of the run after start-up)");
    vt__result_free(&r);
    tg_cleanup();
}

/* A batch copied from pageable memory in each 100 ms step, 1 ms each (1 % of the run, the
 * torch.profiler ResNet-50 sample's share), and weights copied once before the first kernel
 * (30 % of the run): negligible, info; the start-up copies are said, not counted. */
TEST(light_pageable_batches_are_info)
{
    const char *zPath = tg_path("xfer_light.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const struct vt_finding *f;
    ASSERT(g);
    tg_alloc(g, 0, 0, 3, DEV, 512 * MiB, -1);
    for (int i = 1; i <= 60; i++) tg_memcpy(g, i * MS, i * MS + 1 * MS - 1000, 1, 1, 3, 8 * MiB, HOST, DEV);
    for (int i = 0; i < 20; i++) {
        int64_t t0 = 61 * MS + i * 100 * MS;
        tg_memcpy(g, t0, t0 + 1 * MS, 1, 1, 3, 8 * MiB, HOST, DEV);
        tg_kernel(g, t0 + 1 * MS, t0 + 100 * MS, "gemm");
    }
    tg_free(g, 2061 * MS, 0, 3, DEV, 512 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(1, r.nFind);
    f = &r.aFind[0];
    ASSERT_EQ(VT_SEV_INFO, f->severity);
    /* the first batch ended before the first kernel too: of the 61 copies of its size before it, the
     * last (one step's worth) is the first step's input, the 60 weights before it start-up */
    ASSERT_EQ(20, f->count);
    ASSERT_CONTAINS(f->zTitle, "20 host-to-device copies (160 MiB) from pageable host memory: 1.0% of the run after "
                               "start-up");
    ASSERT_CONTAINS(f->zEvidence, "The copy (8.00 MiB, 1.0 ms) before the first kernel, of sizes copied again in later "
                                  "steps, is the first step's input and counted. The 60 copies (480 MiB, 59.9 ms) that "
                                  "ended before the first kernel are start-up");
    vt__result_free(&r);
    tg_cleanup();
}

/* Only start-up copies (weights loaded from pageable memory, then serving with pinned copies and a
 * 4-byte loss.item() per step): one info finding at start-up, whatever its share of a short run,
 * about the start-up copies only (their direction, their span); no serialized-copies finding. */
TEST(startup_only_pageable_copies_are_info)
{
    const char *zPath = tg_path("xfer_startup.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    ASSERT(g);
    tg_alloc(g, 0, 0, 3, DEV, 512 * MiB, -1);
    for (int i = 1; i <= 64; i++) tg_memcpy(g, i * MS, i * MS + 1 * MS - 1000, 1, 1, 3, 8 * MiB, HOST, DEV);
    for (int i = 0; i < 20; i++) {
        int64_t t0 = 65 * MS + i * 5 * MS;
        tg_kernel(g, t0, t0 + 5 * MS, "gemm");
        tg_memcpy(g, t0 + 1 * MS, t0 + 1 * MS + 100000, 1, 2, 3, 4 * MiB, HOST, DEV);
        tg_memcpy(g, t0 + 4 * MS, t0 + 4 * MS + 2000, 2, 3, 1, 4, DEV, HOST);
    }
    tg_free(g, 166 * MS, 0, 3, DEV, 512 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(1, r.nFind);
    ASSERT_EQ(VT_SEV_INFO, r.aFind[0].severity);
    ASSERT_EQ(64, r.aFind[0].count);
    ASSERT_CONTAINS(r.aFind[0].zTitle, "64 host-to-device copies (512 MiB) from pageable host memory at start-up");
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "They ended before the first kernel started");
    ASSERT_CONTAINS(r.aFind[0].zEvidence, "Host to device: 64 pageable copies, 512 MiB");
    ASSERT(!strstr(r.aFind[0].zEvidence, "evice to host")); /* the loss copies are not start-up */
    ASSERT(!strstr(r.aFind[0].zEvidence, "0.00 GB/s"));
    ASSERT_EQ(65 * MS - 1000, r.aFind[0].lastTs);
    ASSERT_CONTAINS(r.aFind[0].zFix, "map_location='cuda'");
    vt__result_free(&r);
    tg_cleanup();
}

/* One pageable copy with its API call at call site stack (correlation corr). */
static void site_copy(struct tg *g, int64_t a, int64_t b, int64_t bytes, int64_t corr, int64_t stack)
{
    struct tg_apirow api = {60, corr, a, b, 1, 0, 0, bytes, TG_NULL, HOST, DEV, TG_NULL, stack};
    struct tg_copyrow c = {a, b, 0, 1, 7, corr, 1, 1, 3, bytes, 0, HOST, DEV};
    tg_api_row(g, &api);
    tg_copy_row(g, &c);
}

/* Weights loaded from pageable memory after an initialization kernel (38 ms from model.py:20,
 * 15 % of a 250 ms run without iterations), then batches from train.py:61 (0.1 ms per 10 ms
 * step): the weights' site copied only in the first quarter of the run, so it is start-up; the
 * batches are 1 % of the run after start-up: info, at the batches' site. */
TEST(startup_site_after_first_kernel)
{
    const char *zPath = tg_path("xfer_init.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const struct vt_finding *f;
    int64_t sW, sB;
    ASSERT(g);
    sW = tg_stack(g, "model.py", 20, "load");
    sB = tg_stack(g, "train.py", 61, "train_one_epoch");
    tg_alloc(g, 1 * MS, 0, 3, DEV, 512 * MiB, -1);
    tg_kernel(g, 1 * MS, 2 * MS, "normal_kernel");
    for (int i = 0; i < 38; i++) site_copy(g, 2 * MS + i * MS, 3 * MS + i * MS - 1000, 8 * MiB, 100 + i, sW);
    for (int i = 0; i < 20; i++) {
        int64_t t0 = 50 * MS + i * 10 * MS;
        site_copy(g, t0, t0 + 100000, 1 * MiB, 200 + i, sB);
        tg_kernel(g, t0 + 100000, t0 + 10 * MS, "gemm");
    }
    tg_free(g, 251 * MS, 0, 3, DEV, 512 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(1, r.nFind);
    f = &r.aFind[0];
    ASSERT_EQ(VT_SEV_INFO, f->severity);
    ASSERT_EQ(20, f->count);
    ASSERT_STREQ("train.py:61 in train_one_epoch", f->zSite);
    ASSERT_CONTAINS(f->zTitle, "20 host-to-device copies (20.0 MiB) from pageable host memory: 0.8% of the run");
    ASSERT_CONTAINS(f->zEvidence, "The 38 copies (304 MiB, 38.0 ms) that ended before the first kernel or came from "
                                  "call sites that copied only at start-up are start-up");
    /* its span: the batches' copies (50 ms to 240.1 ms), not the weights' after the first kernel (2 ms on) */
    ASSERT_EQ(50 * MS, f->firstTs);
    ASSERT_EQ(240 * MS + 100000, f->lastTs);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * A training job on an A100 (PCIe Gen4 x16: about 25 GB/s from pinned memory) fed 100 pageable 154 MB
 * batches at 9.5 GB/s (16.2 ms each, 1.62 s in all) while the previous step's kernels still run: the
 * host waits 4 % of the run, nothing pinned to compare with. Over the link the bytes take 0.62 s:
 * pinning saves about 1.0 s, 2.5 %: low. The same job with pinned batches has no such finding.
 */
static void build_fed(const char *zPath, int bPinned)
{
    struct tg *g = tg_open(zPath);
    const int64_t batch = 154 * 1000 * 1000, copyNs = batch * 1000 / 9500; /* 9.5 GB/s */
    ASSERT(g);
    tg_device(g, 0, "NVIDIA A100-SXM4-80GB", 80 * GiB);
    tg_alloc(g, 0, 0, 3, DEV, batch, -1);
    tg_kernel(g, 1 * MS, 2 * MS, "init");
    for (int i = 0; i < 100; i++) {
        int64_t t0 = 10 * MS + i * 400 * MS;
        tg_memcpy(g, t0, t0 + (bPinned ? batch * 1000 / 24000 : copyNs), 1, bPinned ? 2 : 1, 3, batch, HOST, DEV);
        tg_kernel(g, t0 + 17 * MS, t0 + 430 * MS, "sm80_xmma_gemm_f16f16_f16f32");
    }
    ASSERT_EQ(0, tg_close(g));
}

TEST(pageable_copies_judged_against_the_host_link)
{
    const char *zPath = tg_path("xfer_link.db");
    struct vt_result r;
    const struct vt_finding *f;
    build_fed(zPath, 0);
    run(zPath, &r);
    f = find(&r, "pageable host memory");
    ASSERT(f);
    ASSERT_EQ(VT_SEV_LOW, f->severity);
    ASSERT_EQ(100, f->count);
    ASSERT_CONTAINS(f->zEvidence, "at 9.50 GB/s");
    ASSERT_CONTAINS(f->zEvidence, "No copy in the trace is pinned to compare with; over the host link (PCIe Gen4 x16, "
                                  "NVIDIA A100-SXM4-80GB: about 25 GB/s from pinned memory) they would take 616.0 ms");
    ASSERT_CONTAINS(f->zEvidence, "expected saving 1.01 s (2.5% of the run after start-up)");
    vt__result_free(&r);
    zPath = tg_path("xfer_link_pinned.db");
    build_fed(zPath, 1);
    run(zPath, &r);
    ASSERT(!find(&r, "pageable host memory"));
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * A batch-size finder's pinned memory (bStop): 28 steps of 10 ms whose batch doubles every second step, each
 * new size pinned in a larger block than the caching host allocator holds (64 KiB to 512 MiB, all kept), then
 * 12 steps of training at one size copying from the block it holds: a cache that reached its size, said at
 * info (it was a medium "keeps growing"). Control (!bStop): the batch doubling to the end keeps growing.
 */
static void pinned_cache(int bStop)
{
    const char *zPath = tg_path("xfer_finder.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const struct vt_finding *f;
    int64_t sPin, bytes = 64 * 1024;
    int nBlock = 0;
    ASSERT(g);
    sPin = tg_stack(g, "pin_memory.py", 90, "pin_memory");
    tg_alloc(g, 0, 0, 3, DEV, 8 * MiB, -1);
    for (int i = 0; i < 40; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS;
        if (i % 2 == 0 && (i < 28 || !bStop)) {
            if (i > 0) bytes *= 2;
            tg_alloc(g, t0, -1, 2, HOST + (nBlock++) * 0x1000000000LL, bytes, sPin);
        }
        tg_memcpy(g, t0 + 1 * MS, t0 + 1 * MS + 20000, 1, 2, 3, 128 * 1024, HOST + (nBlock - 1) * 0x1000000000LL, DEV);
        tg_kernel(g, t0 + 2 * MS, t0 + 9 * MS, "gemm");
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    f = find(&r, bStop ? "Pinned host memory grew" : "Pinned host memory keeps growing");
    ASSERT(f);
    ASSERT_EQ(bStop ? VT_SEV_INFO : VT_SEV_MEDIUM, f->severity);
    if (bStop) ASSERT_CONTAINS(f->zTitle, "then stopped");
    vt__result_free(&r);
    tg_cleanup();
}

TEST(pinned_cache_that_stopped_growing_is_info) { pinned_cache(1); }
TEST(pinned_memory_growing_to_the_end_is_medium) { pinned_cache(0); }

/*
 * An evaluation with a DataLoader of its own (pin_memory=True, 16 batches in flight) ends the run: training's
 * loader pins a ring of 4 blocks of 16 MiB over its first 13 steps and reuses them over 24; the evaluation's
 * 15 batches, 4 times training's, are each pinned in a block of 64 MiB the caching host allocator keeps. Its
 * ring filling in the one pass that ends the run is said at info ("in the final evaluation"; it was a medium
 * "keeps growing"). Control (bKeep): training keeps every batch's pinned block, a rise before the evaluation:
 * medium.
 */
static void pinned_eval_loader(int bKeep)
{
    const char *zPath = tg_path("xfer_eval_loader.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const struct vt_finding *f;
    int64_t sPin;
    int nBlock = 0;
    ASSERT(g);
    sPin = tg_stack(g, "pin_memory.py", 90, "pin_memory");
    tg_alloc(g, 0, 0, 3, DEV, 8 * MiB, -1);
    tg_nvtx(g, 10 * MS, 250 * MS, "train");
    for (int i = 0; i < 24; i++) {
        int64_t t0 = 10 * MS + i * 10 * MS, host;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        if ((i % 4 == 0 && i < 16) || bKeep) tg_alloc(g, t0, -1, 2, HOST + (nBlock++) * 0x1000000000LL, 16 * MiB, sPin);
        host = HOST + (int64_t)(bKeep ? nBlock - 1 : i < 16 ? nBlock - 1 : i % 4) * 0x1000000000LL;
        tg_memcpy(g, t0 + 1 * MS, t0 + 1 * MS + 400000, 1, 2, 3, 16 * MiB, host, DEV);
        tg_kernel(g, t0 + 2 * MS, t0 + 9 * MS, "gemm");
    }
    tg_nvtx(g, 250 * MS, 400 * MS, "validation");
    for (int b = 0; b < 15; b++) {
        int64_t t0 = 250 * MS + b * 10 * MS, host = HOST + (int64_t)(nBlock++) * 0x1000000000LL;
        tg_alloc(g, t0, -1, 2, host, 64 * MiB, sPin);
        tg_memcpy(g, t0 + 1 * MS, t0 + 1 * MS + 2 * MS, 1, 2, 3, 64 * MiB, host, DEV);
        tg_kernel(g, t0 + 4 * MS, t0 + 9 * MS, "gemm");
    }
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    f = find(&r, "Pinned host memory");
    ASSERT(f);
    ASSERT_EQ(bKeep ? VT_SEV_MEDIUM : VT_SEV_INFO, f->severity);
    ASSERT_CONTAINS(f->zTitle, bKeep ? "keeps growing" : "in the final evaluation");
    vt__result_free(&r);
    tg_cleanup();
}

TEST(pinned_ring_of_a_final_evaluation_is_info) { pinned_eval_loader(0); }
TEST(pinned_batches_kept_in_training_before_it_are_medium) { pinned_eval_loader(1); }

VT_TEST_LIST(T(small_pinned_ring_filling_is_info) T(startup_site_after_first_kernel) T(overlapped_pageable_copies_judged_by_the_link)
             T(light_pageable_batches_are_info) T(startup_only_pageable_copies_are_info)
             T(pageable_copies_at_their_call_site) T(pageable_copies_site_among_many_calls) T(one_off_pageable_copy_is_info)
             T(pinned_copies_serialized)
             T(copies_sample_shape) T(pageable_serialized_and_pinned_growth) T(pinned_overlapped_copies_are_fine)
             T(pinned_growth_site_with_allocation_history) T(pageable_copies_judged_against_the_host_link)
             T(pinned_cache_that_stopped_growing_is_info) T(pinned_memory_growing_to_the_end_is_medium)
             T(pinned_ring_of_a_final_evaluation_is_info) T(pinned_batches_kept_in_training_before_it_are_medium))
