/* Tests for the transfer detector: pageable copies, copies without overlap, pinned growth. */
#include <string.h>

#include "analysis.h"
#include "tracegen.h"
#include "vt_test.h"

#define DEV 0x100000000LL
#define HOST 0x7f0000000000LL

static void run(const char *zPath, struct vt_result *r)
{
    struct vt_opts o;
    const char *az[1] = {zPath};
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, r));
}

static const struct vt_finding *find(const struct vt_result *r, const char *zTitle)
{
    for (int i = 0; i < r->nFind; i++)
        if (strstr(r->aFind[i].zTitle, zTitle)) return &r->aFind[i];
    return NULL;
}

/* 20 pageable 8 MiB copies of 4 ms (2.1 GB/s), 5 pinned ones of 0.7 ms, no kernel during any
 * copy; a pinned host buffer of 16 MiB allocated every 10 ms and kept. */
TEST(pageable_serialized_and_pinned_growth)
{
    const char *zPath = tg_path("xfer.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    const struct vt_finding *f;
    ASSERT(g);
    tg_alloc(g, 0, 0, 3, DEV, 8 * MiB, -1);
    for (int i = 0; i < 20; i++) {
        int64_t t0 = 1 * MS + i * 10 * MS;
        tg_memcpy(g, t0, t0 + 4 * MS, 1, 1, 3, 8 * MiB, HOST, DEV);
        tg_kernel(g, t0 + 5 * MS, t0 + 9 * MS, "gemm");
        tg_alloc(g, t0 + 9 * MS, -1, 2, HOST + 0x100000000LL + i * 0x1000000LL, 16 * MiB, -1);
    }
    for (int i = 0; i < 5; i++) tg_memcpy(g, 201 * MS + i * MS, 201 * MS + i * MS + 700000, 1, 2, 3, 8 * MiB, -1, DEV);
    tg_free(g, 207 * MS, 0, 3, DEV, 8 * MiB);
    ASSERT_EQ(0, tg_close(g));
    run(zPath, &r);
    ASSERT_EQ(3, r.nFind);
    f = find(&r, "from pageable host memory");
    ASSERT(f);
    ASSERT_EQ(VT_SEV_HIGH, f->severity);
    ASSERT_EQ(160 * MiB, f->bytes);
    ASSERT_EQ(20, f->count);
    ASSERT_CONTAINS(f->zTitle, "20 host-to-device copies");
    ASSERT_CONTAINS(f->zEvidence, "at 2.10 GB/s");
    ASSERT_CONTAINS(f->zEvidence, "reached 11.98 GB/s");
    ASSERT_CONTAINS(f->zFix, "pin_memory=True");
    f = find(&r, "serialized with compute");
    ASSERT(f);
    ASSERT_EQ(VT_SEV_MEDIUM, f->severity);
    ASSERT_EQ(80 * MS + 5 * 700000, r.aTrace[0].copySerialNs);
    ASSERT_EQ(80 * MS, r.aTrace[0].kernelBusyNs);
    f = find(&r, "Pinned host memory keeps growing");
    ASSERT(f);
    ASSERT_EQ(VT_SEV_MEDIUM, f->severity);
    ASSERT_CONTAINS(f->zFix, "prefetch_factor");
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
    ASSERT_EQ(20, r.aTrace[0].xfer[1].pageCount); /* counted, but 80 bytes is below --min-bytes */
    ASSERT_EQ(20 * 2000, r.aTrace[0].copySerialNs); /* the DtoH reads run after the kernel */
    vt__result_free(&r);
    tg_cleanup();
}

VT_TEST_LIST(T(pageable_serialized_and_pinned_growth) T(pinned_overlapped_copies_are_fine))
