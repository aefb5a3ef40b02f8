/* Tests for the breakdown of a peak by category and what would fit: synthetic jobs of known make-up. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"
#include "bdjob.h"
#include "tracegen.h"
#include "vramtrace/schema.h"
#include "vt_test.h"

/* The part of category cat at device 0's peak of trace i, and that the parts sum to the peak. */
static int64_t part(const struct vt_result *r, int i, int cat)
{
    const struct vt_device *d = NULL;
    int64_t sum = 0, v = 0;
    for (int k = 0; k < r->aTrace[i].tl.nDev; k++)
        if (r->aTrace[i].tl.aDev[k].id == 0) d = &r->aTrace[i].tl.aDev[k];
    ASSERT(d && d->bd.n > 0);
    for (int k = 0; k < d->bd.n; k++) {
        sum += d->bd.a[k].bytes;
        if (d->bd.a[k].cat == cat) v += d->bd.a[k].bytes;
    }
    ASSERT_EQ(d->bd.total, sum);
    return v;
}

static const struct vt_device *dev0(const struct vt_result *r, int i)
{
    for (int k = 0; k < r->aTrace[i].tl.nDev; k++)
        if (r->aTrace[i].tl.aDev[k].id == 0) return &r->aTrace[i].tl.aDev[k];
    return NULL;
}

/* Device d's saving of key zKey, NULL when its fit offers none. */
static const struct vt_fitsave *saving_of(const struct vt_device *d, const char *zKey)
{
    for (int k = 0; k < d->fit.nSave; k++)
        if (!strcmp(d->fit.aSave[k].zKey, zKey)) return &d->fit.aSave[k];
    return NULL;
}

/* d's expandable_segments saving is of `bytes` and its assumption says zText. */
static void expect_expandable(const struct vt_device *d, int64_t bytes, const char *zText)
{
    const struct vt_fitsave *v = saving_of(d, "expandable_segments");
    ASSERT(v);
    ASSERT_EQ(bytes, v->bytes);
    ASSERT_CONTAINS(v->zAssume, zText);
}

/* A trace at zPath with the job's stacks in *s and device 0 of `total` bytes. */
static struct tg *open_trace(const char *zPath, struct bd_stacks *s, int64_t total)
{
    struct tg *g = tg_open(zPath);
    ASSERT(g);
    bd_stacks(g, s);
    tg_device(g, 0, "Test GPU", total);
    return g;
}

/* Close g, analyze its trace zPath with the default options into *r; device 0's entry. */
static const struct vt_device *close_analyze(struct tg *g, const char *zPath, struct vt_result *r)
{
    static struct vt_opts o; /* r keeps a pointer to its options (the reports read them): they outlive this call */
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, r));
    return dev0(r, 0);
}

/* The job's make-up at its peak, with and without NVTX ranges (steps then told from the stacks). */
static void check_job(int bNvtx)
{
    const char *zPath = tg_path(bNvtx ? "job_nvtx.db" : "job.db");
    struct vt_opts o;
    struct vt_result r;
    const struct vt_device *d;
    bd_job(zPath, NULL, 256 * MiB, bNvtx, NULL, 0);
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    d = dev0(&r, 0);
    ASSERT(d);
    ASSERT_EQ(2 * MiB + 256 * MiB + 32 * MiB + 128 * MiB + 16 * MiB + 512 * MiB + 1024 * MiB + 256 * MiB + 256 * MiB, d->peak);
    ASSERT_EQ(d->peak, d->bd.total);
    ASSERT_STREQ("allocated", d->bd.zBasis);
    ASSERT_EQ(256 * MiB, part(&r, 0, VT_CAT_PARAM));
    ASSERT_EQ(512 * MiB, part(&r, 0, VT_CAT_OPT));
    ASSERT_EQ(1024 * MiB, part(&r, 0, VT_CAT_ACT));
    ASSERT_EQ(256 * MiB, part(&r, 0, VT_CAT_GRAD));
    ASSERT_EQ(256 * MiB, part(&r, 0, VT_CAT_TEMP));
    ASSERT_EQ(32 * MiB, part(&r, 0, VT_CAT_CUBLAS));
    ASSERT_EQ(128 * MiB, part(&r, 0, VT_CAT_NCCL));
    ASSERT_EQ(16 * MiB, part(&r, 0, VT_CAT_LIB));
    ASSERT_EQ(2 * MiB, part(&r, 0, VT_CAT_CONTEXT));
    ASSERT_EQ(0, part(&r, 0, VT_CAT_UNKNOWN));
    ASSERT_EQ(0, part(&r, 0, VT_CAT_STATE));
    ASSERT_STREQ("libfoo.so.1", vt__bd_part(&d->bd, VT_CAT_LIB)->zOwner);
    /* the evidence names the rule that decided */
    ASSERT_CONTAINS(vt__bd_part(&d->bd, VT_CAT_ACT)->zEvidence, "freed by the autograd engine: 4 allocations");
    ASSERT_CONTAINS(vt__bd_part(&d->bd, VT_CAT_GRAD)->zEvidence, "freed by zero_grad");
    ASSERT_CONTAINS(vt__bd_part(&d->bd, VT_CAT_OPT)->zEvidence, "torch/optim/");
    ASSERT_CONTAINS(vt__bd_part(&d->bd, VT_CAT_NCCL)->zEvidence, "NCCL");
    ASSERT_EQ(4, vt__bd_part(&d->bd, VT_CAT_ACT)->count);
    vt__result_free(&r);
}

TEST(categories_tensor_level_nvtx)
{
    check_job(1);
}

TEST(categories_tensor_level_steps_from_stacks)
{
    check_job(0);
}

/* Two ranks analyzed together: each its own breakdown, summing to its own peak. */
TEST(categories_two_ranks)
{
    char z0[512], z1[512];
    const char *az[2] = {z0, z1};
    struct vt_opts o;
    struct vt_result r;
    snprintf(z0, sizeof z0, "%s", tg_path("rank0.db"));
    snprintf(z1, sizeof z1, "%s", tg_path("rank1.db"));
    bd_job(z0, "0", 256 * MiB, 1, NULL, 0);
    bd_job(z1, "1", 512 * MiB, 1, NULL, 0);
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 2, &o, &r));
    ASSERT_EQ(2, r.nTrace);
    ASSERT_EQ(1024 * MiB, part(&r, 0, VT_CAT_ACT));
    ASSERT_EQ(2048 * MiB, part(&r, 1, VT_CAT_ACT));
    ASSERT_EQ(512 * MiB, part(&r, 1, VT_CAT_OPT));
    vt__result_free(&r);
}

/*
 * What would fit: the job at batch 8 on a 40 GiB device (given as 8 GiB with --fit-memory): the
 * activations and temporaries grow with the batch, the rest does not; the CUDA context is assumed.
 */
TEST(fit_largest_batch)
{
    const char *zPath = tg_path("fit.db");
    struct vt_opts o;
    struct vt_result r;
    const struct vt_device *d;
    int64_t grow = 1024 * MiB + 256 * MiB, fixed, cap = 8 * GiB;
    bd_job(zPath, "0", 256 * MiB, 1, NULL, 0);
    vt__opts_default(&o);
    o.batch = 8;
    o.fitMemory = cap;
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    d = dev0(&r, 0);
    fixed = d->peak - grow + VT_FIT_CONTEXT;
    ASSERT_EQ(1, d->fit.bDone);
    ASSERT_EQ(cap, d->fit.capacity);
    ASSERT_EQ(grow, d->fit.scaling);
    ASSERT_EQ(fixed, d->fit.fixed);
    ASSERT_EQ(1, d->fit.bContextAssumed);
    ASSERT_EQ(cap - d->peak - VT_FIT_CONTEXT, d->fit.headroom);
    ASSERT_EQ((int64_t)(8.0 * (double)(cap - fixed) / (double)grow), d->fit.maxBatch);
    /* the savings that apply: bf16 activations, checkpointing; gradients are freed by zero_grad, one rank
     * of two keeps half the optimizer state when sharded */
    int bBf16 = 0, bShard = 0, bZero = 0;
    for (int k = 0; k < d->fit.nSave; k++) {
        if (!strcmp(d->fit.aSave[k].zKey, "bf16_activations")) {
            bBf16 = 1;
            ASSERT_EQ(512 * MiB, d->fit.aSave[k].bytes);
        }
        if (!strcmp(d->fit.aSave[k].zKey, "shard_optimizer_state")) {
            bShard = 1;
            ASSERT_EQ(256 * MiB, d->fit.aSave[k].bytes);
        }
        if (!strcmp(d->fit.aSave[k].zKey, "zero_grad_set_to_none")) bZero = 1;
        ASSERT(d->fit.aSave[k].zAssume && d->fit.aSave[k].zAssume[0]);
    }
    ASSERT(bBf16 && bShard && !bZero);
    vt__result_free(&r);
}

/*
 * The activation-checkpointing saving says the plan its figure is of: 8 activations of 64 MiB kept for the
 * backward pass; a checkpoint every 3 (sqrt(8) = 2.8, rounded) keeps 6 of the 8 (the 3 checkpoints and the 3 of
 * one stretch recomputed at a time): it saves 2 of 8, 128 MiB. (It said "a checkpoint every 2 of them keeps about
 * 2 in every 2", nothing saved, beside 150 MiB.) With 4 alike, a checkpoint every 2 keeps all 4: no such saving.
 * The bf16 saving names the bytes it halves.
 */
static void ckpt_job(const char *zPath, int nAct)
{
    struct tg *g = tg_open(zPath);
    struct bd_stacks s;
    int64_t a = 0x7f1000000000LL;
    ASSERT(g);
    bd_stacks(g, &s);
    tg_meta(g, "config.tensors", "1");
    tg_device(g, 0, "Test GPU", 40 * GiB);
    for (int i = 0; i < 4; i++) bd_mem(g, 2 * MS + i, 1, a + (int64_t)i * GiB, 64 * MiB, s.param);
    for (int k = 0; k < 3; k++) {
        int64_t t0 = 100 * MS * (k + 1), b = a + 100 * GiB * (k + 1);
        for (int i = 0; i < nAct; i++) bd_mem(g, t0 + 10 * MS + i, 1, b + i * GiB, 64 * MiB, s.fwd);
        bd_mem(g, t0 + 20 * MS, 1, b + 90 * GiB, 16 * MiB, s.eng);
        for (int i = 0; i < nAct; i++) bd_mem(g, t0 + 25 * MS + i, 2, b + i * GiB, 64 * MiB, s.eng);
        bd_mem(g, t0 + 29 * MS, 2, b + 90 * GiB, 16 * MiB, s.eng);
        tg_nvtx(g, t0, t0 + 90 * MS, "step");
    }
    ASSERT_EQ(0, tg_close(g));
}

TEST(fit_checkpointing_saving_says_its_figure)
{
    const char *zPath = tg_path("ckpt.db");
    struct vt_opts o;
    struct vt_result r;
    const struct vt_fitsave *sv;
    char z[600];
    ckpt_job(zPath, 8);
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    ASSERT_EQ(512 * MiB, part(&r, 0, VT_CAT_ACT));
    sv = saving_of(dev0(&r, 0), "activation_checkpointing");
    ASSERT(sv);
    ASSERT_EQ(128 * MiB, sv->bytes);
    sv = saving_of(dev0(&r, 0), "bf16_activations"); /* half of the bytes it names */
    ASSERT(sv);
    ASSERT_EQ(256 * MiB, sv->bytes);
    ASSERT_CONTAINS(sv->zAssume, "the 512 MiB of activations are 32-bit floats now");
    sv = saving_of(dev0(&r, 0), "activation_checkpointing");
    ASSERT_STREQ("activation checkpointing: 128 MiB (if the 8 activations kept at the peak are alike in size and a "
                 "checkpoint every 3 of them keeps 6 of the 8 (the 3 checkpoints and the 3 of one stretch recomputed "
                 "at a time; the forward pass runs a second time: about a third more compute))",
                 vt__fmt_saving(sv, z, sizeof z));
    vt__result_free(&r);
    ckpt_job(zPath, 4);
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    ASSERT_EQ(256 * MiB, part(&r, 0, VT_CAT_ACT));
    ASSERT(!saving_of(dev0(&r, 0), "activation_checkpointing"));
    vt__result_free(&r);
}

/*
 * A cudaMallocAsync pool's OOM judged fragmentation (6 GiB live, the pool reserving 10 GiB; 3 GiB asked with
 * 1 GiB free): expandable segments are a setting of PyTorch's caching allocator, not of the pool, so no
 * expandable saving is offered (no caching-allocator segment was there to fragment).
 */
TEST(fit_no_expandable_saving_for_the_pool)
{
    const char *zPath = tg_path("frag.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_device *d;
    g = open_trace(zPath, &s, 16 * GiB);
    tg_memop(g, 1 * MS, 1, 0, VT_MEMKIND_DEVICE, 0x7f6000000000LL, 6 * GiB, s.fwd, 10 * GiB, 6 * GiB);
    tg_oom(g, 2 * MS, 0, 3 * GiB, 1 * GiB, 16 * GiB, s.fwd);
    tg_memop(g, 3 * MS, 2, 0, VT_MEMKIND_DEVICE, 0x7f6000000000LL, 6 * GiB, s.fwd, 10 * GiB, 0);
    d = close_analyze(g, zPath, &r);
    ASSERT(d);
    ASSERT_STREQ("fragmentation/caching", r.aTrace[0].aOom[0].zVerdict);
    ASSERT(d->bd.poolCache > 0 || d->bd.n > 0);
    ASSERT(!saving_of(d, "expandable_segments"));
    vt__result_free(&r);
}

/*
 * The caching allocator's segments with its blocks inside (no OOM, device size unknown: not replayed).
 * Three 20 MiB segments at the peak: A holds a 2 MiB parameter (an 18 MiB free piece beside it), B is
 * wholly free (cached: the allocator releases it under pressure), C holds a 19 MiB activation (a 1 MiB
 * piece), the request at the peak being that 19 MiB. Fragmentation seen: the 19 MiB of pieces too small
 * for it beside live blocks, not the 39 MiB cache. With B's cache alone (A and C full) none is seen.
 */
static const struct vt_device *holes_job(const char *zPath, int bHoles, struct vt_result *r)
{
    struct tg *g;
    struct bd_stacks s;
    int64_t a = 0x7f3000000000LL, b = a + GiB, c = a + 2 * GiB;
    char zSql[700];
    g = open_trace(zPath, &s, 0);
    bd_mem(g, 1 * MS, 1, a, 20 * MiB, s.param);
    bd_mem(g, 5 * MS, 1, b, 20 * MiB, s.fwd);
    bd_mem(g, 9 * MS, 1, c, 20 * MiB, s.fwd);
    snprintf(zSql, sizeof zSql, "INSERT INTO tensor_event(t, op, device, address, bytes, stack_id) VALUES"
                                "(%lld, 1, 0, %lld, %lld, %lld), (%lld, 1, 0, %lld, %lld, %lld), (%lld, 2, 0, %lld, %lld, %lld)",
             (long long)(2 * MS), (long long)a, (long long)(bHoles ? 2 * MiB : 20 * MiB), (long long)s.param,
             (long long)(10 * MS), (long long)c, (long long)(bHoles ? 19 * MiB : 20 * MiB), (long long)s.fwd,
             (long long)(20 * MS), (long long)c, (long long)(bHoles ? 19 * MiB : 20 * MiB), (long long)s.eng);
    tg_exec(g, zSql);
    tg_exec(g, "INSERT INTO stack(hash, depth) VALUES(99, 0)"); /* keeps the ids above taken */
    return close_analyze(g, zPath, r);
}

TEST(fit_expandable_only_where_fragmentation_seen)
{
    struct vt_result r;
    const struct vt_device *d = holes_job(tg_path("holes1.db"), 1, &r);
    int bSeen = 0;
    ASSERT(d);
    ASSERT_EQ(39 * MiB, part(&r, 0, VT_CAT_CACHE));
    ASSERT_EQ(19 * MiB, d->bd.fragBytes);
    ASSERT_EQ(19 * MiB, d->bd.fragReq);
    ASSERT_EQ(2, d->bd.fragSegs);
    for (int k = 0; k < d->fit.nSave; k++)
        if (!strcmp(d->fit.aSave[k].zKey, "expandable_segments")) {
            bSeen = 1;
            ASSERT_EQ(19 * MiB, d->fit.aSave[k].bytes);
            ASSERT_CONTAINS(d->fit.aSave[k].zAssume, "lay free in 2 pieces inside 2 segments");
            ASSERT_CONTAINS(d->fit.aSave[k].zAssume, "smaller than the request then (19.0 MiB)");
        }
    ASSERT(bSeen);
    vt__result_free(&r);
    /* the cache is a wholly free segment only: no fragmentation seen, no saving */
    d = holes_job(tg_path("holes0.db"), 0, &r);
    ASSERT(d);
    ASSERT_EQ(20 * MiB, part(&r, 0, VT_CAT_CACHE));
    ASSERT_EQ(0, d->bd.fragBytes);
    ASSERT(!saving_of(d, "expandable_segments"));
    vt__result_free(&r);
}

/* Blocks (t, op 1 alloc / 2 free, address, bytes, stack) into g's tensor rows, n of them. */
static void blocks(struct tg *g, const int64_t (*aB)[5], int n)
{
    char zSql[200];
    for (int i = 0; i < n; i++) {
        snprintf(zSql, sizeof zSql, "INSERT INTO tensor_event(t, op, device, address, bytes, stack_id) VALUES"
                                    "(%lld, %lld, 0, %lld, %lld, %lld)",
                 (long long)aB[i][0], (long long)aB[i][1], (long long)aB[i][2], (long long)aB[i][3], (long long)aB[i][4]);
        tg_exec(g, zSql);
    }
}

/*
 * The small pool's holes are never a large request's: a 2 MiB segment (the small pool's) holding a
 * 512 KiB block has a 1.5 MiB hole, which the 19 MiB request at the peak could not have had even
 * without fragmentation. Fragmentation seen: the large pool's 18 MiB and 1 MiB pieces only.
 */
TEST(fit_fragmentation_same_pool_only)
{
    const char *zPath = tg_path("holes_pool.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_device *d;
    int64_t a = 0x7f3000000000LL, sm = a + GiB, c = a + 2 * GiB;
    g = open_trace(zPath, &s, 0);
    bd_mem(g, 1 * MS, 1, a, 20 * MiB, s.param);
    bd_mem(g, 3 * MS, 1, sm, 2 * MiB, s.fwd);
    bd_mem(g, 9 * MS, 1, c, 20 * MiB, s.fwd);
    {
        const int64_t aB[][5] = {{2 * MS, 1, a, 2 * MiB, s.param}, {4 * MS, 1, sm, 512 * 1024, s.fwd},
                                 {10 * MS, 1, c, 19 * MiB, s.fwd}, {20 * MS, 2, c, 19 * MiB, s.eng}};
        blocks(g, aB, 4);
    }
    tg_exec(g, "INSERT INTO stack(hash, depth) VALUES(99, 0)"); /* keeps the ids above taken */
    d = close_analyze(g, zPath, &r);
    ASSERT(d);
    ASSERT_EQ(19 * MiB, d->bd.fragReq);
    ASSERT_EQ(19 * MiB, d->bd.fragBytes); /* not 20.5 MiB: the small segment's hole is not the request's */
    ASSERT_EQ(2, d->bd.fragSegs);
    expect_expandable(d, 19 * MiB, "at the peak 19.0 MiB lay free in 2 pieces inside 2 segments of the request's pool");
    vt__result_free(&r);
}

/*
 * Fragmentation seen at an OOM, not at the peak: two 20 MiB segments full at the peak (40 MiB of
 * blocks, no hole); then the first block is freed and a 2 MiB one takes its place, and 19 MiB is
 * asked for and fails: the 18 MiB hole could not serve it, nor be released. The OOM's breakdown
 * tells the pieces; the saving is offered from them, said to be at an OOM.
 */
TEST(fit_fragmentation_at_an_oom)
{
    const char *zPath = tg_path("holes_oom.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_device *d;
    int64_t a = 0x7f3000000000LL, c = a + GiB;
    g = open_trace(zPath, &s, 0);
    bd_mem(g, 1 * MS, 1, a, 20 * MiB, s.fwd);
    bd_mem(g, 3 * MS, 1, c, 20 * MiB, s.fwd);
    {
        const int64_t aB[][5] = {{2 * MS, 1, a, 20 * MiB, s.fwd}, {4 * MS, 1, c, 20 * MiB, s.fwd},
                                 {5 * MS, 2, a, 20 * MiB, s.fwd}, {6 * MS, 1, a, 2 * MiB, s.fwd}};
        blocks(g, aB, 4);
    }
    tg_oom(g, 7 * MS, 0, 19 * MiB, -1, -1, s.fwd);
    tg_exec(g, "INSERT INTO stack(hash, depth) VALUES(99, 0)"); /* keeps the ids above taken */
    d = close_analyze(g, zPath, &r);
    ASSERT(d);
    ASSERT_EQ(0, d->bd.fragBytes); /* at the peak both segments are full */
    ASSERT_EQ(1, r.aTrace[0].nOom);
    ASSERT_EQ(18 * MiB, r.aTrace[0].aOom[0].bd.fragBytes);
    ASSERT_EQ(19 * MiB, r.aTrace[0].aOom[0].bd.fragReq);
    expect_expandable(d, 18 * MiB, "at an OOM 18.0 MiB lay free in 1 piece inside 1 segment");
    vt__result_free(&r);
}

/*
 * The caching allocator's segments with its blocks inside, and an OOM judged fragmentation: an 8 GiB
 * segment holding one 1 GiB block (7 GiB free inside it) when 2 GiB is asked with 3 GiB of the device
 * free. The saving is offered on that evidence (the peak's piece, larger than the 1 GiB request then,
 * is not fragmentation), said as an OOM judged so.
 */
TEST(fit_expandable_from_an_oom_judged_fragmentation)
{
    const char *zPath = tg_path("fragoom.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_device *d;
    int64_t a = 0x7f3000000000LL;
    char zSql[400];
    int bSeen = 0;
    g = open_trace(zPath, &s, 16 * GiB);
    bd_mem(g, 1 * MS, 1, a, 8 * GiB, s.fwd);
    snprintf(zSql, sizeof zSql, "INSERT INTO tensor_event(t, op, device, address, bytes, stack_id) VALUES"
                                "(%lld, 1, 0, %lld, %lld, %lld)",
             (long long)(2 * MS), (long long)a, (long long)(1 * GiB), (long long)s.fwd);
    tg_exec(g, zSql);
    tg_oom(g, 3 * MS, 0, 2 * GiB, 3 * GiB, 16 * GiB, s.fwd);
    tg_exec(g, "INSERT INTO stack(hash, depth) VALUES(99, 0)"); /* keeps the ids above taken */
    d = close_analyze(g, zPath, &r);
    ASSERT(d);
    ASSERT_STREQ("fragmentation/caching", r.aTrace[0].aOom[0].zVerdict);
    ASSERT_EQ(0, d->bd.fragBytes);
    for (int k = 0; k < d->fit.nSave; k++)
        if (!strcmp(d->fit.aSave[k].zKey, "expandable_segments")) {
            bSeen = 1;
            ASSERT_EQ(7 * GiB, d->fit.aSave[k].bytes);
            ASSERT_CONTAINS(d->fit.aSave[k].zAssume, "an OOM here was fragmentation");
        }
    ASSERT(bSeen);
    vt__result_free(&r);
}

/*
 * Segment level (the caching allocator's segments only): each segment in the category of the
 * allocation that made the allocator reserve it, and the breakdown says it is at segment level.
 * A segment AccumulateGrad reserved (a parameter's first gradient) is gradients, not a backward
 * temporary. A segment a hand-written optimizer's step reserved is optimizer state, with evidence
 * that says it may be parameters the step writes anew (p.data = ...).
 */
TEST(categories_segment_level)
{
    const char *zPath = tg_path("seg.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_device *d;
    int64_t a = 0x7f2000000000LL;
    g = open_trace(zPath, &s, 40 * GiB);
    tg_meta(g, "config.tensors", "0"); /* the default mode: the allocator's segments */
    bd_mem(g, 1 * MS, 1, a, 256 * MiB, s.param);
    for (int k = 0; k < 3; k++) { /* step 0 reserves; the later steps reuse the cache */
        int64_t t0 = 100 * MS * (k + 1);
        if (k == 0) {
            for (int i = 0; i < 4; i++) bd_mem(g, t0 + 10 * MS + i, 1, a + (i + 1) * GiB, 20 * MiB * 10, s.fwd);
            bd_mem(g, t0 + 20 * MS, 1, a + 6 * GiB, 20 * MiB * 20, s.eng);
            bd_mem(g, t0 + 30 * MS, 1, a + 6 * GiB + 512 * MiB, 256 * MiB, s.acc);
            bd_mem(g, t0 + 40 * MS, 1, a + 7 * GiB, 512 * MiB, s.opt);
            bd_mem(g, t0 + 50 * MS, 1, a + 8 * GiB, 64 * MiB, s.ownopt);
        }
        char z[32];
        snprintf(z, sizeof z, "step %d", k);
        tg_nvtx(g, t0, t0 + 90 * MS, z);
    }
    d = close_analyze(g, zPath, &r);
    ASSERT(r.aTrace[0].f.bSegments);
    ASSERT_EQ(1, d->bd.bSegment);
    ASSERT_STREQ("reserved", d->bd.zBasis);
    ASSERT_EQ(256 * MiB, part(&r, 0, VT_CAT_PARAM));
    ASSERT_EQ(512 * MiB + 64 * MiB, part(&r, 0, VT_CAT_OPT));
    /* a hand-written optimizer's segment: state or parameters written anew, and the evidence says it cannot tell */
    ASSERT_CONTAINS(vt__bd_part(&d->bd, VT_CAT_OPT)->zEvidence, "which a segment cannot tell apart");
    ASSERT_EQ(800 * MiB + 400 * MiB, part(&r, 0, VT_CAT_TRANSIENT));
    ASSERT_CONTAINS(vt__bd_part(&d->bd, VT_CAT_TRANSIENT)->zEvidence, "segments reserved in the backward pass");
    ASSERT_EQ(256 * MiB, part(&r, 0, VT_CAT_GRAD));
    ASSERT_CONTAINS(vt__bd_part(&d->bd, VT_CAT_GRAD)->zEvidence, "segments reserved by AccumulateGrad");
    ASSERT_EQ(0, d->bd.bPages);
    vt__result_free(&r);
}

/*
 * A hand-written optimizer at tensor level, with NVTX steps (bNvtx) or steps told from the stacks:
 * 4 parameters of 64 MiB made by Module.to; each of 4 steps reads them in its forward pass (a
 * kernel's arguments), makes activations (1 GiB in step 1, where the peak is; 256 MiB otherwise),
 * a backward temporary and 4 gradients, then its step (torch.optim's wrapper over HandSGD.step)
 * writes each parameter anew (p.data = p.data - lr * buf) beside a new momentum buffer, both read by
 * the step's kernel, and frees the old ones. The parameters a step wrote are read by the next
 * step's forward pass: parameters; the momentum buffers are read only by the optimizer: its state.
 */
static void check_own_optimizer(int bNvtx)
{
    const char *zPath = tg_path(bNvtx ? "ownopt_nvtx.db" : "ownopt.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_device *d;
    int64_t a = 0x7f2000000000LL, aP[4], aM[4];
    g = open_trace(zPath, &s, 40 * GiB);
    for (int i = 0; i < 4; i++) bd_mem(g, 1 * MS + i, 1, aP[i] = a + i * GiB, 64 * MiB, s.param), aM[i] = -1;
    for (int k = 0; k < 4; k++) {
        int64_t t0 = 100 * MS * (k + 1), x = a + 100 * GiB * (k + 1), kr;
        char z[32];
        bd_mem(g, t0 + 10 * MS, 1, x, k == 1 ? GiB : 256 * MiB, s.fwd);
        kr = tg_kernel(g, t0 + 12 * MS, t0 + 13 * MS, "sgemm_fwd");
        for (int i = 0; i < 4; i++) tg_use(g, t0 + 12 * MS, kr, aP[i]);
        tg_use(g, t0 + 12 * MS, kr, x);
        bd_mem(g, t0 + 20 * MS, 1, x + GiB, 256 * MiB, s.eng);
        for (int i = 0; i < 4; i++) bd_mem(g, t0 + 30 * MS + i, 1, x + 2 * GiB + i * 64 * MiB, 64 * MiB, s.acc);
        bd_mem(g, t0 + 35 * MS, 2, x + GiB, 256 * MiB, -1);
        bd_mem(g, t0 + 36 * MS, 2, x, k == 1 ? GiB : 256 * MiB, -1);
        for (int i = 0; i < 4; i++) {
            int64_t p = x + 4 * GiB + i * 128 * MiB, m = p + 64 * MiB;
            bd_mem(g, t0 + 40 * MS + 4 * i, 1, m, 64 * MiB, s.ownopt);
            bd_mem(g, t0 + 40 * MS + 4 * i + 1, 1, p, 64 * MiB, s.ownopt);
            kr = tg_kernel(g, t0 + 40 * MS + 4 * i + 2, t0 + 40 * MS + 4 * i + 3, "sgd_step");
            tg_use(g, t0 + 40 * MS + 4 * i + 2, kr, p);
            tg_use(g, t0 + 40 * MS + 4 * i + 2, kr, m);
            tg_use(g, t0 + 40 * MS + 4 * i + 2, kr, aP[i]);
            bd_mem(g, t0 + 40 * MS + 4 * i + 3, 2, aP[i], 64 * MiB, -1);
            if (aM[i] >= 0) bd_mem(g, t0 + 40 * MS + 4 * i + 3, 2, aM[i], 64 * MiB, -1);
            aP[i] = p, aM[i] = m;
        }
        for (int i = 0; i < 4; i++) bd_mem(g, t0 + 60 * MS + i, 2, x + 2 * GiB + i * 64 * MiB, 64 * MiB, s.zero);
        snprintf(z, sizeof z, "step %d", k);
        if (bNvtx) tg_nvtx(g, t0, t0 + 90 * MS, z);
    }
    d = close_analyze(g, zPath, &r);
    /* the peak: step 1's backward, before its step (1 GiB + 256 MiB + 4 gradients beside 4 parameters and buffers) */
    ASSERT_EQ(GiB + 256 * MiB + 256 * MiB + 256 * MiB + 256 * MiB, d->bd.total);
    ASSERT_EQ(256 * MiB, part(&r, 0, VT_CAT_PARAM));
    ASSERT_CONTAINS(vt__bd_part(&d->bd, VT_CAT_PARAM)->zEvidence, "read by a kernel of a later step's forward pass");
    ASSERT_EQ(256 * MiB, part(&r, 0, VT_CAT_OPT));
    ASSERT_CONTAINS(vt__bd_part(&d->bd, VT_CAT_OPT)->zEvidence, "which the stack cannot tell apart");
    vt__result_free(&r);
}

TEST(categories_own_optimizer_tensor_level)
{
    check_own_optimizer(1);
    check_own_optimizer(0);
}

/* An expandable segment's page as the tracer records it: cuMemCreate (the bytes) and cuMemMap (the address). */
static void vmm_page(struct tg *g, int64_t ts, int64_t handle, int64_t addr, int64_t bytes, int64_t stack)
{
    struct tg_memrow m = {ts, VT_MEMOP_VMM_CREATE, VT_MEMKIND_DEVICE, handle, bytes, 0, TG_NULL, TG_NULL, TG_NULL,
                          40, 0, TG_NULL, handle, TG_NULL, TG_NULL, TG_NULL, TG_NULL, TG_NULL, stack};
    tg_memory_row(g, &m);
    m.ts = ts + 1;
    m.op = VT_MEMOP_VMM_MAP;
    m.address = addr;
    m.api = 42;
    tg_memory_row(g, &m);
}

/*
 * Segment level with expandable_segments:True: the allocator maps 20 MiB pages (cuMemCreate +
 * cuMemMap with its frames) instead of reserving segments; each page counts as a segment would,
 * in the category of the allocation that mapped it, and the breakdown says "each page".
 */
TEST(categories_segment_level_pages)
{
    const char *zPath = tg_path("pages.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_device *d;
    char z[400];
    int64_t a = 0x7f2000000000LL, h = 0x6b00000001LL;
    int n = 0;
    g = open_trace(zPath, &s, 40 * GiB);
    tg_meta(g, "config.tensors", "0");
    tg_meta(g, "env.PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
    for (int i = 0; i < 2; i++, n++) vmm_page(g, 1 * MS + 2 * i, h + 16 * n, a + n * 20 * MiB, 20 * MiB, s.param);
    for (int k = 0; k < 3; k++) {
        int64_t t0 = 100 * MS * (k + 1);
        if (k == 0) {
            for (int i = 0; i < 10; i++, n++) vmm_page(g, t0 + 10 * MS + 2 * i, h + 16 * n, a + n * 20 * MiB, 20 * MiB, s.fwd);
            for (int i = 0; i < 2; i++, n++) vmm_page(g, t0 + 20 * MS + 2 * i, h + 16 * n, a + n * 20 * MiB, 20 * MiB, s.eng);
            for (int i = 0; i < 3; i++, n++) vmm_page(g, t0 + 30 * MS + 2 * i, h + 16 * n, a + n * 20 * MiB, 20 * MiB, s.acc);
            vmm_page(g, t0 + 40 * MS, h + 16 * n, a + n * 20 * MiB, 20 * MiB, s.opt), n++;
        }
        snprintf(z, sizeof z, "step %d", k);
        tg_nvtx(g, t0, t0 + 90 * MS, z);
    }
    d = close_analyze(g, zPath, &r);
    ASSERT(r.aTrace[0].f.bSegments);
    ASSERT_EQ(1, d->bd.bSegment);
    ASSERT_EQ(1, d->bd.bPages);
    ASSERT_EQ(18 * 20 * MiB, d->bd.total);
    ASSERT_EQ(40 * MiB, part(&r, 0, VT_CAT_PARAM));
    ASSERT_EQ(12 * 20 * MiB, part(&r, 0, VT_CAT_TRANSIENT));
    ASSERT_EQ(60 * MiB, part(&r, 0, VT_CAT_GRAD));
    ASSERT_EQ(20 * MiB, part(&r, 0, VT_CAT_OPT));
    ASSERT_CONTAINS(vt__fmt_bdhead(&r.aTrace[0], &d->bd, z, sizeof z), "expandable segments: each page");
    vt__result_free(&r);
}

/*
 * What would fit at segment level, on a job whose make-up is known: parameters P = 1 GiB, their
 * gradients (1 GiB, in a segment the backward pass reserves), Adam's state (2 GiB, made at the
 * first step inside the segments the forward pass reserved and cached, so the second step's forward
 * pass reserves 2 GiB more) and 4 GiB of activations at batch 8. The true largest batch on 24 GiB
 * (with the assumed 512 MiB context): 4.5 GiB fixed + 0.5 GiB a sample: 39. The trace cannot tell
 * the state from the activations: the estimate is a lower bound (25, scaling everything the steps
 * reserved), said to be one, and an upper estimate (39: only the 4 GiB the first step's forward pass
 * reserved grow) that holds the truth. A trace whose first forward pass reserved nothing (its
 * segments made before the steps) gives no upper estimate.
 */
TEST(fit_segment_level_lower_bound)
{
    const char *zPath = tg_path("segfit.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    struct vt_opts o;
    const struct vt_device *d;
    int64_t a = 0x7f2000000000LL, truth = 8 * (24 * GiB - 4 * GiB - VT_FIT_CONTEXT) / (4 * GiB);
    g = open_trace(zPath, &s, 40 * GiB);
    tg_meta(g, "config.tensors", "0");
    bd_mem(g, 1 * MS, 1, a, GiB, s.param);
    for (int k = 0; k < 3; k++) {
        int64_t t0 = 100 * MS * (k + 1);
        char z[32];
        if (k == 0) {
            for (int i = 0; i < 4; i++) bd_mem(g, t0 + 10 * MS + i, 1, a + (i + 1) * GiB, GiB, s.fwd);
            bd_mem(g, t0 + 20 * MS, 1, a + 6 * GiB, GiB, s.eng);
        } else if (k == 1) {
            for (int i = 0; i < 2; i++) bd_mem(g, t0 + 10 * MS + i, 1, a + (i + 8) * GiB, GiB, s.fwd);
        }
        snprintf(z, sizeof z, "step %d", k);
        tg_nvtx(g, t0, t0 + 90 * MS, z);
    }
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.batch = 8;
    o.fitMemory = 24 * GiB;
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    d = dev0(&r, 0);
    ASSERT_EQ(8 * GiB, d->peak);
    ASSERT_EQ(39, truth);
    ASSERT_EQ(1, d->fit.bLowerBound);
    ASSERT_EQ(25, d->fit.maxBatch); /* as a point: 36 % short; as what it is, a lower bound: right */
    ASSERT(d->fit.maxBatch <= truth);
    ASSERT_CONTAINS(d->fit.azAssume[d->fit.nAssume - 1], "the largest batch is at least this");
    ASSERT_EQ(4 * GiB, d->bd.segFirstFwd);
    ASSERT_EQ(39, d->fit.upBatch);
    ASSERT(d->fit.upBatch >= truth);
    ASSERT_CONTAINS(d->fit.azAssume[d->fit.nAssume - 1], "at most about batch 39 if only the 4.00 GiB");
    vt__result_free(&r);

    /* the activations' segments reserved before the first step (a trace begun in steady state): no upper estimate */
    g = open_trace(zPath, &s, 40 * GiB);
    tg_meta(g, "config.tensors", "0");
    bd_mem(g, 1 * MS, 1, a, GiB, s.param);
    for (int i = 0; i < 4; i++) bd_mem(g, 2 * MS + i, 1, a + (i + 1) * GiB, GiB, s.fwd);
    for (int k = 0; k < 3; k++) {
        int64_t t0 = 100 * MS * (k + 1);
        char z[32];
        if (k == 0) bd_mem(g, t0 + 20 * MS, 1, a + 6 * GiB, GiB, s.eng);
        snprintf(z, sizeof z, "step %d", k);
        tg_nvtx(g, t0, t0 + 90 * MS, z);
    }
    ASSERT_EQ(0, tg_close(g));
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    d = dev0(&r, 0);
    ASSERT_EQ(1, d->fit.bLowerBound);
    ASSERT_EQ(0, d->bd.segFirstFwd);
    ASSERT_EQ(-1, d->fit.upBatch);
    ASSERT_CONTAINS(d->fit.azAssume[d->fit.nAssume - 1], "no first forward pass in the trace to bound it above");
    vt__result_free(&r);

    /* at tensor level the same job is a point, not a range */
    bd_job(zPath, NULL, 256 * MiB, 1, NULL, 0);
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    ASSERT_EQ(0, dev0(&r, 0)->fit.bLowerBound);
    vt__result_free(&r);
}

/*
 * Tensor rows inside segments (PyTorch's history merged): the blocks are categorized, the
 * segments less the blocks live in them are the allocator's cache.
 */
/* A trace at zPath with one 1 GiB segment (never freed) holding a 512 MiB parameter block (kept) and a
 * 256 MiB activation block (freed in the backward pass); the segment was made at the parameter's site. */
static struct tg *blocks_trace(const char *zPath, struct bd_stacks *ps)
{
    struct bd_stacks s;
    int64_t a = 0x7f3000000000LL;
    char zSql[512];
    struct tg *g = open_trace(zPath, &s, 40 * GiB);
    bd_mem(g, 1 * MS, 1, a, 1 * GiB, s.param); /* one segment: 512 MiB of parameters and 256 MiB of activations in it */
    snprintf(zSql, sizeof zSql, "INSERT INTO tensor_event(t, op, device, address, bytes, stack_id) VALUES"
                                "(%lld, 1, 0, %lld, %lld, %lld), (%lld, 1, 0, %lld, %lld, %lld), (%lld, 2, 0, %lld, %lld, %lld)",
             (long long)(2 * MS), (long long)a, (long long)(512 * MiB), (long long)s.param, (long long)(10 * MS),
             (long long)(a + 512 * MiB), (long long)(256 * MiB), (long long)s.fwd, (long long)(20 * MS),
             (long long)(a + 512 * MiB), (long long)(256 * MiB), (long long)s.eng);
    tg_exec(g, zSql);
    tg_exec(g, "INSERT INTO stack(hash, depth) VALUES(99, 0)"); /* keeps the ids above taken */
    *ps = s;
    return g;
}

TEST(categories_blocks_in_segments_cache)
{
    const char *zPath = tg_path("blocks.db");
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_device *d = close_analyze(blocks_trace(zPath, &s), zPath, &r);
    ASSERT_EQ(1 * GiB, d->peak);
    ASSERT_EQ(512 * MiB, part(&r, 0, VT_CAT_PARAM));
    ASSERT_EQ(256 * MiB, part(&r, 0, VT_CAT_ACT) + part(&r, 0, VT_CAT_TRANSIENT) + part(&r, 0, VT_CAT_TEMP));
    ASSERT_EQ(256 * MiB, part(&r, 0, VT_CAT_CACHE));
    ASSERT_EQ(0, d->bd.bSegment);
    vt__result_free(&r);
}

/* The bytes of the live-at-peak groups of device d from the site of stack stackId (0 when none). */
static int64_t group_bytes(const struct vt_trace *t, const struct vt_device *d, int64_t stackId)
{
    int64_t v = 0;
    for (int k = 0; k < d->nGroup; k++)
        if (d->aGroup[k].site >= 0 && t->sites.a[d->aGroup[k].site].stackId == stackId) v += d->aGroup[k].bytes;
    return v;
}

/*
 * The live-at-peak list and the peak's breakdown are of one moment, the one the report states: with
 * blocks inside segments, the moment at the reserved peak where the most tensor bytes were live; the
 * list sums to the breakdown's parts less the allocator's cache. Two shapes where a snapshot taken at
 * the first free after the peak rose described another moment: more blocks at the same reserved level
 * later, and a segment freed at the peak (no block freed then).
 */
TEST(live_at_peak_is_the_breakdowns_moment)
{
    const char *zPath = tg_path("moment.db");
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_device *d;
    const struct vt_trace *t;
    int64_t a = 0x7f3000000000LL, sum = 0;
    char zSql[600], *z = NULL;
    size_t n = 0;
    FILE *f;
    struct tg *g = open_trace(zPath, &s, 40 * GiB);
    bd_mem(g, 1 * MS, 1, a, 1 * GiB, s.param); /* the reserved peak from 1 ms to the end */
    snprintf(zSql, sizeof zSql, "INSERT INTO tensor_event(t, op, device, address, bytes, stack_id) VALUES"
                                "(%lld, 1, 0, %lld, %lld, %lld), (%lld, 2, 0, %lld, %lld, %lld),"
                                "(%lld, 1, 0, %lld, %lld, %lld), (%lld, 2, 0, %lld, %lld, %lld)",
             (long long)(2 * MS), (long long)a, (long long)(512 * MiB), (long long)s.param, (long long)(5 * MS),
             (long long)a, (long long)(512 * MiB), (long long)s.param, (long long)(10 * MS), (long long)a,
             (long long)(768 * MiB), (long long)s.fwd, (long long)(20 * MS), (long long)a, (long long)(768 * MiB),
             (long long)s.eng);
    tg_exec(g, zSql);
    tg_exec(g, "INSERT INTO stack(hash, depth) VALUES(99, 0)");
    d = close_analyze(g, zPath, &r);
    t = &r.aTrace[0];
    ASSERT_EQ(1 * GiB, d->peak);
    ASSERT_EQ(256 * MiB, part(&r, 0, VT_CAT_CACHE)); /* the moment of 768 MiB of blocks, not of 512 MiB */
    ASSERT_EQ(10 * MS, d->bd.ts);
    ASSERT_EQ(10 * MS, d->atPeakTs);
    ASSERT_EQ(768 * MiB, group_bytes(t, d, s.fwd)); /* the list: that moment's block */
    ASSERT_EQ(0, group_bytes(t, d, s.param));
    for (int k = 0; k < d->nGroup; k++) sum += d->aGroup[k].bytes;
    ASSERT_EQ(d->bd.total - part(&r, 0, VT_CAT_CACHE), sum);
    ASSERT(d->nTop == 1 && d->aTop[0].bytes == 768 * MiB);
    f = open_memstream(&z, &n); /* the report says when (from the first event, at 1 ms) */
    ASSERT(f);
    ASSERT_EQ(0, vt__report_text(f, &r));
    fclose(f);
    ASSERT_CONTAINS(z, "what it was at 9.0 ms (reserved, 1.00 GiB)");
    ASSERT_CONTAINS(z, "live at peak (at 9.0 ms): 1 allocation, 768 MiB");
    free(z);
    z = NULL;
    vt__result_free(&r);

    /* a second segment raises the peak and is freed with no block freed at it; a block is made after */
    g = open_trace(zPath, &s, 40 * GiB);
    bd_mem(g, 1 * MS, 1, a, 1 * GiB, s.param);
    bd_mem(g, 3 * MS, 1, a + 2 * GiB, 512 * MiB, s.fwd); /* peak 1.5 GiB from 3 ms */
    bd_mem(g, 6 * MS, 2, a + 2 * GiB, 512 * MiB, -1);    /* to 6 ms */
    snprintf(zSql, sizeof zSql, "INSERT INTO tensor_event(t, op, device, address, bytes, stack_id) VALUES"
                                "(%lld, 1, 0, %lld, %lld, %lld), (%lld, 1, 0, %lld, %lld, %lld), (%lld, 2, 0, %lld, %lld, %lld)",
             (long long)(2 * MS), (long long)a, (long long)(256 * MiB), (long long)s.param, (long long)(8 * MS),
             (long long)(a + 256 * MiB), (long long)(512 * MiB), (long long)s.fwd, (long long)(9 * MS),
             (long long)(a + 256 * MiB), (long long)(512 * MiB), (long long)s.eng);
    tg_exec(g, zSql);
    tg_exec(g, "INSERT INTO stack(hash, depth) VALUES(99, 0)");
    d = close_analyze(g, zPath, &r);
    t = &r.aTrace[0];
    ASSERT_EQ(1 * GiB + 512 * MiB, d->peak);
    ASSERT_EQ(3 * MS, d->bd.ts);
    ASSERT_EQ(3 * MS, d->atPeakTs);
    ASSERT_EQ(256 * MiB, group_bytes(t, d, s.param)); /* at 3 ms: the parameter block only */
    ASSERT_EQ(0, group_bytes(t, d, s.fwd));            /* the block of 8 ms was not live at the peak */
    vt__result_free(&r);
}

/* The per-site figures (--by-site) of blocks inside segments count the blocks, not also the segment holding
 * them: each byte once, the site's peak no higher than the device's allocated peak. */
TEST(sites_count_blocks_not_their_segments)
{
    const char *zPath = tg_path("blocks_sites.db");
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_site *pParam = NULL, *pFwd = NULL;
    const struct vt_trace *t;
    close_analyze(blocks_trace(zPath, &s), zPath, &r);
    t = &r.aTrace[0];
    for (int i = 0; i < t->sites.n; i++) {
        if (t->sites.a[i].stackId == s.param) pParam = &t->sites.a[i];
        if (t->sites.a[i].stackId == s.fwd) pFwd = &t->sites.a[i];
    }
    ASSERT(pParam && pFwd);
    ASSERT_EQ(1, pParam->nAlloc); /* the block; its segment is the allocator's (the breakdown's cache) */
    ASSERT_EQ(512 * MiB, pParam->totalBytes);
    ASSERT_EQ(512 * MiB, pParam->peakLiveBytes);
    ASSERT_EQ(1, pParam->nLive);
    ASSERT_EQ(512 * MiB, pParam->liveBytes);
    ASSERT_EQ(1, pFwd->nAlloc);
    ASSERT_EQ(256 * MiB, pFwd->peakLiveBytes);
    ASSERT_EQ(0, pFwd->liveBytes);
    vt__result_free(&r);
}

/*
 * At an OOM whose free memory was read: the parts sum to what the device had in use, the CUDA
 * context and driver taking what the trace does not hold; a failed step's memory is said to be so.
 */
TEST(categories_at_oom_device_used)
{
    const char *zPath = tg_path("oom.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_oom *m;
    int64_t a = 0x7f4000000000LL, sum = 0;
    g = open_trace(zPath, &s, 16 * GiB);
    bd_mem(g, 1 * MS, 1, a, 4 * GiB, s.param);
    bd_mem(g, 10 * MS, 1, a + 8 * GiB, 8 * GiB, s.fwd);
    tg_oom(g, 11 * MS, 0, 4 * GiB, 3 * GiB + 512 * MiB, 16 * GiB, s.fwd);
    bd_mem(g, 12 * MS, 2, a + 8 * GiB, 8 * GiB, s.fwd);
    close_analyze(g, zPath, &r);
    ASSERT_EQ(1, r.aTrace[0].nOom);
    m = &r.aTrace[0].aOom[0];
    ASSERT_STREQ("device used", m->bd.zBasis);
    ASSERT_EQ(16 * GiB - (3 * GiB + 512 * MiB), m->bd.total);
    for (int k = 0; k < m->bd.n; k++) sum += m->bd.a[k].bytes;
    ASSERT_EQ(m->bd.total, sum);
    ASSERT_EQ(512 * MiB, vt__bd_part(&m->bd, VT_CAT_CONTEXT)->bytes);
    ASSERT_EQ(512 * MiB, m->bd.untraced);
    ASSERT_EQ(4 * GiB, vt__bd_part(&m->bd, VT_CAT_PARAM)->bytes);
    ASSERT_EQ(8 * GiB, vt__bd_part(&m->bd, VT_CAT_TRANSIENT)->bytes);
    ASSERT_CONTAINS(vt__bd_part(&m->bd, VT_CAT_TRANSIENT)->zEvidence, "failed (OOM)");
    vt__result_free(&r);
}

/*
 * A job that ran out of memory and ended there: the request that failed was demand it had then
 * (12.5 GiB in use, 4 GiB asked for on a 16 GiB device: 16.5 GiB), so the traced batch does not
 * fit and the largest batch is below it; the assumption says the request was counted. A recovered
 * failure (the retry served, as the allocations after it show) adds nothing.
 */
TEST(fit_counts_failed_request)
{
    const char *zPath = tg_path("oomfit.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    struct vt_opts o;
    const struct vt_device *d;
    int64_t a = 0x7f4000000000LL, grow, fixed;
    int bSaid = 0;
    g = open_trace(zPath, &s, 16 * GiB);
    bd_mem(g, 1 * MS, 1, a, 4 * GiB, s.param);
    bd_mem(g, 10 * MS, 1, a + 8 * GiB, 8 * GiB, s.fwd);
    tg_oom(g, 11 * MS, 0, 4 * GiB, 3 * GiB + 512 * MiB, 16 * GiB, s.fwd);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.batch = 100;
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    d = dev0(&r, 0);
    ASSERT_EQ(1, r.aTrace[0].nFail);
    ASSERT_EQ(0, r.aTrace[0].aFail[0].bRecovered);
    ASSERT_EQ(16 * GiB + 512 * MiB, d->fit.need); /* in use then, and the request */
    ASSERT_EQ(-512 * MiB, d->fit.headroom);
    grow = d->fit.scaling;
    fixed = d->fit.fixed;
    ASSERT_EQ(8 * GiB + 4 * GiB, grow); /* the forward pass's memory and the request */
    ASSERT_EQ(16 * GiB + 512 * MiB - grow, fixed);
    ASSERT(d->fit.maxScale > 0 && d->fit.maxScale < 1);
    ASSERT_EQ(1, d->fit.bReplayed); /* the request replayed at the moment it failed; the bound agrees */
    ASSERT_EQ((int64_t)floor(100.0 * (double)(16 * GiB - fixed) / (double)grow + 1e-9), d->fit.maxBatch);
    for (int k = 0; k < d->fit.nAssume; k++)
        bSaid |= strstr(d->fit.azAssume[k], "the request that failed (4.00 GiB, with 12.5 GiB in use) is counted") != 0;
    ASSERT(bSaid);
    vt__result_free(&r);

    /* recovered: the forward pass's memory given back and the request retried at once, served: nothing more */
    g = open_trace(zPath, &s, 16 * GiB);
    bd_mem(g, 1 * MS, 1, a, 4 * GiB, s.param);
    bd_mem(g, 10 * MS, 1, a + 8 * GiB, 8 * GiB, s.fwd);
    tg_oom(g, 11 * MS, 0, 4 * GiB, 3 * GiB + 512 * MiB, 16 * GiB, s.fwd);
    bd_mem(g, 11 * MS + 1000, 2, a + 8 * GiB, 8 * GiB, s.fwd);
    bd_mem(g, 11 * MS + 2000, 1, a + 4 * GiB, 4 * GiB, s.fwd);
    ASSERT_EQ(0, tg_close(g));
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    d = dev0(&r, 0);
    ASSERT_EQ(1, r.aTrace[0].nFail);
    ASSERT_EQ(1, r.aTrace[0].aFail[0].bRecovered);
    ASSERT_EQ(12 * GiB + 512 * MiB, d->fit.need); /* the peak and the context measured at the OOM */
    ASSERT(d->fit.maxScale > 1);
    for (int k = 0; k < d->fit.nAssume; k++) ASSERT(strstr(d->fit.azAssume[k], "the request that failed") == NULL);
    vt__result_free(&r);
}

/*
 * Without NVML's readings, device use beyond the traced memory far larger than a CUDA context
 * takes (3.5 GiB, more than VT_CONTEXT_MAX) is not called the context: its part says the context,
 * the driver and other processes, and the fit does not count it as the job's (an assumed context
 * in its place), which its assumption says.
 */
TEST(untraced_beyond_a_context)
{
    const char *zPath = tg_path("oomothers.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_device *d;
    const struct vt_oom *m;
    int64_t a = 0x7f4000000000LL;
    int bSaid = 0;
    g = open_trace(zPath, &s, 16 * GiB);
    bd_mem(g, 1 * MS, 1, a, 4 * GiB, s.param);
    bd_mem(g, 10 * MS, 1, a + 8 * GiB, 8 * GiB, s.fwd);
    tg_oom(g, 11 * MS, 0, 4 * GiB, 512 * MiB, 16 * GiB, s.fwd);
    d = close_analyze(g, zPath, &r);
    m = &r.aTrace[0].aOom[0];
    ASSERT_EQ(16 * GiB - 512 * MiB, m->bd.total);
    ASSERT(vt__bd_part(&m->bd, VT_CAT_CTXOTHERS));
    ASSERT_EQ(3 * GiB + 512 * MiB, vt__bd_part(&m->bd, VT_CAT_CTXOTHERS)->bytes);
    ASSERT(vt__bd_part(&m->bd, VT_CAT_CONTEXT) == NULL);
    ASSERT_STREQ("CUDA context, driver and other processes", vt__cat_name(VT_CAT_CTXOTHERS));
    ASSERT_CONTAINS(vt__bd_part(&m->bd, VT_CAT_CTXOTHERS)->zEvidence, "more than a CUDA context and the driver take");
    ASSERT_EQ(1, d->fit.bContextAssumed);
    ASSERT_EQ(VT_FIT_CONTEXT, d->fit.context);
    ASSERT_EQ(12 * GiB + VT_FIT_CONTEXT + 4 * GiB, d->fit.need); /* traced, a context, the request */
    for (int k = 0; k < d->fit.nAssume; k++) bSaid |= strstr(d->fit.azAssume[k], "most likely other processes'") != 0;
    ASSERT(bSaid);
    vt__result_free(&r);
}

/*
 * At a peak on a device the tracer sampled: the parts sum to what the device had in use then, the
 * traced peak plus what the device used beyond the traced memory at the sample nearest the peak
 * (1.25 GiB: the CUDA context and driver, other processes not told apart); the fit counts it, not
 * an assumed context. Samples that contradict the trace (less in use than traced) are not used.
 */
static void sampled_job(const char *zPath, int64_t beyondAt5ms, struct vt_result *r)
{
    static struct vt_opts o; /* the result keeps a pointer to its options */
    struct tg *g;
    struct bd_stacks s;
    char z[96];
    int64_t a = 0x7f4000000000LL;
    g = open_trace(zPath, &s, 16 * GiB);
    tg_meta(g, "device.0.used_at_context_bytes", "1073741824");
    snprintf(z, sizeof z, "%lld %lld %lld", (long long)(MS / 2), (long long)(15 * GiB), (long long)(16 * GiB));
    tg_meta(g, "device.0.mem_sample.0", z);
    bd_mem(g, 1 * MS, 1, a, 4 * GiB, s.param);
    snprintf(z, sizeof z, "%lld %lld %lld", (long long)(5 * MS), (long long)(12 * GiB - beyondAt5ms),
             (long long)(16 * GiB));
    tg_meta(g, "device.0.mem_sample.1", z);
    bd_mem(g, 10 * MS, 1, a + 8 * GiB, 8 * GiB, s.fwd);
    bd_mem(g, 20 * MS, 2, a + 8 * GiB, 8 * GiB, s.fwd);
    snprintf(z, sizeof z, "%lld %lld %lld", (long long)(30 * MS), (long long)(10 * GiB), (long long)(16 * GiB));
    tg_meta(g, "device.0.mem_sample.2", z);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.batch = 10;
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, r));
}

TEST(categories_at_peak_device_sampled)
{
    const char *zPath = tg_path("sampled.db");
    struct vt_result r;
    const struct vt_device *d;
    const struct vt_bdpart *c;
    sampled_job(zPath, GiB + GiB / 4, &r);
    d = dev0(&r, 0);
    ASSERT(d);
    ASSERT_EQ(12 * GiB, d->peak);
    ASSERT_STREQ("device used", d->bd.zBasis);
    ASSERT_EQ(12 * GiB + GiB + GiB / 4, d->bd.total);
    ASSERT_EQ(GiB + GiB / 4, part(&r, 0, VT_CAT_CONTEXT)); /* part() checks the parts sum to the total */
    ASSERT_EQ(GiB + GiB / 4, d->bd.untraced);
    ASSERT_EQ(4 * GiB, part(&r, 0, VT_CAT_PARAM));
    ASSERT_EQ(0, part(&r, 0, VT_CAT_UNKNOWN));
    ASSERT(vt__bd_part(&d->bd, VT_CAT_OTHERS) == NULL); /* never a 0 for what is not known */
    c = vt__bd_part(&d->bd, VT_CAT_CONTEXT);
    ASSERT_CONTAINS(c->zEvidence, "sample nearest the peak");
    ASSERT_CONTAINS(c->zEvidence, "not told apart: see other processes");
    ASSERT_EQ(0, d->fit.bContextAssumed);
    ASSERT_EQ(0, d->fit.context);
    ASSERT_EQ(d->bd.total, d->fit.need);
    /* other processes: not a part (never a 0), unknown, with what they held at most at context creation */
    ASSERT_EQ(GiB, d->bd.othersAtMost);
    ASSERT_CONTAINS(d->bd.zOthers, "the device had 1.00 GiB in use");
    /* the device-used figure: the highest sample (15 GiB free of 16 at the first, 10 GiB at the last) */
    ASSERT_EQ(6 * GiB, r.aTrace[0].f.fig.aDev[0].used);
    for (int fmt = 0; fmt < 4; fmt++) { /* every format shows both */
        char *z = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&z, &n);
        ASSERT(f);
        ASSERT_EQ(0, fmt == 0 ? vt__report_text(f, &r) : fmt == 1 ? vt__report_json(f, &r)
                     : fmt == 2 ? vt__report_markdown(f, &r) : vt__report_html(f, &r));
        fclose(f);
        ASSERT_CONTAINS(z, fmt == 1 ? "\"category\": \"cuda_context\", \"bytes\": 1342177280"
                        : fmt == 0  ? "what it was at 9.0 ms (device used, 13.2 GiB)"
                                    : "at its sample nearest the peak");
        if (fmt == 0) ASSERT_CONTAINS(z, "unknown       other processes: in the CUDA context part");
        if (fmt == 0) ASSERT_CONTAINS(z, "(with the CUDA context measured in it)");
        if (fmt == 1) {
            ASSERT(tg_json_valid(z));
            ASSERT_CONTAINS(z, "\"breakdown_basis\": \"device used\", \"breakdown_bytes\": 14227079168");
            ASSERT_CONTAINS(z, "\"breakdown_other_processes\": {\"bytes\": null, \"at_context_at_most_bytes\": "
                               "1073741824, ");
        }
        if (fmt == 2) ASSERT_CONTAINS(z, "| other processes | unknown | | in the CUDA context part");
        if (fmt == 3) ASSERT_CONTAINS(z, "<td>other processes</td><td>unknown</td>");
        free(z);
    }
    vt__result_free(&r);

    /* a sample saying less in use than the trace holds: the peak keeps its traced figure */
    sampled_job(zPath, -GiB, &r);
    d = dev0(&r, 0);
    ASSERT_STREQ("allocated", d->bd.zBasis);
    ASSERT_EQ(12 * GiB, d->bd.total);
    ASSERT_EQ(-1, d->bd.untraced);
    ASSERT(d->bd.zOthers == NULL); /* the device's use is not in the figure: nothing to say of others */
    ASSERT_EQ(1, d->fit.bContextAssumed);
    vt__result_free(&r);
}

/*
 * At an OOM of a cudaMallocAsync pool whose free memory was read: the pool's reserved bytes beyond
 * its live allocations are the allocator's cache, not the CUDA context (which is what is left).
 */
TEST(categories_at_oom_pool_cache)
{
    const char *zPath = tg_path("oompool.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_oom *m;
    int64_t a = 0x7f4000000000LL;
    g = open_trace(zPath, &s, 16 * GiB);
    tg_memop(g, 1 * MS, 1, 0, VT_MEMKIND_DEVICE, a, 4 * GiB, s.param, 4 * GiB, 4 * GiB);
    tg_memop(g, 10 * MS, 1, 0, VT_MEMKIND_DEVICE, a + 8 * GiB, 8 * GiB, s.fwd, 12 * GiB, 12 * GiB);
    tg_memop(g, 11 * MS, 2, 0, VT_MEMKIND_DEVICE, a + 8 * GiB, 8 * GiB, s.fwd, 12 * GiB, 4 * GiB);
    tg_oom(g, 12 * MS, 0, 10 * GiB, 3 * GiB + 512 * MiB, 16 * GiB, s.fwd);
    close_analyze(g, zPath, &r);
    ASSERT_EQ(1, r.aTrace[0].nOom);
    m = &r.aTrace[0].aOom[0];
    ASSERT_STREQ("device used", m->bd.zBasis);
    ASSERT_EQ(12 * GiB + 512 * MiB, m->bd.total);
    ASSERT_EQ(8 * GiB, vt__bd_part(&m->bd, VT_CAT_CACHE)->bytes);
    ASSERT_EQ(512 * MiB, vt__bd_part(&m->bd, VT_CAT_CONTEXT)->bytes);
    ASSERT_EQ(512 * MiB, m->bd.untraced);
    ASSERT_EQ(4 * GiB, vt__bd_part(&m->bd, VT_CAT_PARAM)->bytes);
    vt__result_free(&r);
}

/* A cudaMallocAsync (op 1) or cudaFreeAsync (op 2) row of device 0 with the pool's sizes after it. */
static void pool_row(struct tg *g, int64_t ts, int op, int64_t addr, int64_t bytes, int64_t stack, int64_t poolSize,
                     int64_t poolUsed)
{
    struct tg_memrow m = {ts, op, VT_MEMKIND_DEVICE, addr, bytes, 0, TG_NULL, 7, ts, op == 1 ? 3 : 4, 1,
                          1, 0x7f0000000000LL, -1, poolSize, poolUsed, TG_NULL, TG_NULL, stack};
    tg_memory_row(g, &m);
}

/*
 * What would fit at tensor level replays the allocator. Through the cudaMallocAsync pool, 4 GiB of
 * parameters stay; a 2 GiB temporary is freed before a 3 GiB one, so at the peak the pool holds
 * 2 GiB cached beside 7 GiB live. Scaled in proportion, that cache grows with the temporaries:
 * growing 3 + 2 x 3/7 GiB, fixed 9.5 GiB less that, (16 - fixed) / growing = 2.68, batch 268 of
 * 100. Replayed, the pool gives back its free 2 GiB chunk before the larger request fails, so the
 * 3 GiB temporary may grow to the 15.5 GiB beside the assumed context less the parameters:
 * 3 GiB x 3.83 rounded up to 2 MiB is 11,768 MiB of 11,776: batch 383 (3.84 needs 11,798).
 */
TEST(fit_tensor_level_replays_the_pool)
{
    const char *zPath = tg_path("fitpool.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_opts o;
    struct vt_result r;
    const struct vt_device *d;
    int64_t a = 0x7f0000000000LL;
    g = open_trace(zPath, &s, 16 * GiB);
    pool_row(g, 1 * MS, 1, a, 4 * GiB, s.param, 4 * GiB, 4 * GiB);
    pool_row(g, 10 * MS, 1, a + 4 * GiB, 2 * GiB, s.fwd, 6 * GiB, 6 * GiB);
    pool_row(g, 11 * MS, 2, a + 4 * GiB, 2 * GiB, s.fwd, 6 * GiB, 4 * GiB);
    pool_row(g, 12 * MS, 1, a + 6 * GiB, 3 * GiB, s.fwd, 9 * GiB, 7 * GiB);
    pool_row(g, 13 * MS, 2, a + 6 * GiB, 3 * GiB, s.fwd, 9 * GiB, 4 * GiB);
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.batch = 100;
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    d = dev0(&r, 0);
    ASSERT(d);
    ASSERT_EQ(2 * GiB, d->bd.poolCache);
    ASSERT_EQ(3 * GiB, part(&r, 0, VT_CAT_TEMP));
    ASSERT_EQ(1, d->fit.bReplayed);
    ASSERT_EQ(383, d->fit.maxBatch);
    ASSERT_CONTAINS(d->fit.azAssume[d->fit.nAssume - 1], "replayed through the cudaMallocAsync pool");
    ASSERT_EQ(0, d->fit.bLowerBound);
    vt__result_free(&r);
    /* the replays bounded in work (3 replays of the stream): in 7,788 MiB (7,276 beside the context) the
     * 3 GiB temporary may grow to 3,180 MiB, batch 103 (104 needs 3,196); the climb in 2.5 % steps runs
     * 100 and 102, fails 104, and may not bisect further: a range, at least 102 and at most 103, said so */
    o.fitMemory = (int64_t)7788 * MiB;
    o.fitWork = 9;
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    d = dev0(&r, 0);
    ASSERT(d);
    ASSERT_EQ(102, d->fit.maxBatch);
    ASSERT_EQ(1, d->fit.bLowerBound);
    ASSERT_EQ(103, d->fit.upBatch);
    ASSERT_CONTAINS(d->fit.azAssume[d->fit.nAssume - 1], "the first batch that fails is at most 104");
    ASSERT_CONTAINS(d->fit.azAssume[d->fit.nAssume - 1], "bounded at 9 lifetimes replayed in all");
    {
        char z[2000];
        ASSERT(vt__fmt_fit(d, z, sizeof z) >= 0);
        ASSERT_CONTAINS(z, "at least, and at most batch 103: the replays were bounded, a range");
    }
    vt__result_free(&r);
}

/*
 * The caching allocator's blocks (PyTorch's history merged into a 20 MiB and a 38 MiB segment): a
 * 2 MiB parameter and a 37 MiB activation, at batch 10, in 64 MiB beside the assumed context.
 * Replayed with segments the activation cannot use the parameter's 18 MiB hole: the largest batch
 * is 11 (20 + 37k rounded to 2 MiB <= 64). With expandable segments (the trace's
 * PYTORCH_CUDA_ALLOC_CONF, or as the saving replayed) only the 20 MiB pages of what is live count:
 * 15 (2 + 37k <= 60), and the traced batch needs 18 MiB less (58 MiB of segments, 40 MiB of
 * pages; with 2 MiB pages it would have been 16 and 18 MiB).
 */
static const struct vt_device *expandable_job(const char *zPath, const char *zConf, struct vt_result *r)
{
    struct tg *g;
    struct bd_stacks s;
    struct vt_opts o;
    int64_t a = 0x7f3000000000LL, b = a + GiB;
    char zSql[600];
    g = open_trace(zPath, &s, 16 * GiB);
    if (zConf) tg_meta(g, "env.PYTORCH_CUDA_ALLOC_CONF", zConf);
    bd_mem(g, 1 * MS, 1, a, 20 * MiB, s.param);
    bd_mem(g, 9 * MS, 1, b, 38 * MiB, s.fwd);
    snprintf(zSql, sizeof zSql, "INSERT INTO tensor_event(t, op, device, address, bytes, stack_id) VALUES"
                                "(%lld, 1, 0, %lld, %lld, %lld), (%lld, 1, 0, %lld, %lld, %lld), (%lld, 2, 0, %lld, %lld, %lld)",
             (long long)(2 * MS), (long long)a, (long long)(2 * MiB), (long long)s.param, (long long)(10 * MS),
             (long long)b, (long long)(37 * MiB), (long long)s.fwd, (long long)(20 * MS), (long long)b,
             (long long)(37 * MiB), (long long)s.eng);
    tg_exec(g, zSql);
    tg_exec(g, "INSERT INTO stack(hash, depth) VALUES(99, 0)"); /* keeps the ids above taken */
    ASSERT_EQ(0, tg_close(g));
    vt__opts_default(&o);
    o.batch = 10;
    o.fitMemory = 64 * MiB + VT_FIT_CONTEXT;
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, r));
    return dev0(r, 0);
}

TEST(fit_expandable_segments_replayed)
{
    struct vt_result r;
    const struct vt_device *d = expandable_job(tg_path("blocks_exp0.db"), NULL, &r);
    int bSeen = 0;
    ASSERT(d);
    ASSERT_EQ(1, d->fit.bReplayed);
    ASSERT_EQ(11, d->fit.maxBatch);
    ASSERT_EQ(15, d->fit.expandBatch);
    for (int k = 0; k < d->fit.nSave; k++)
        if (!strcmp(d->fit.aSave[k].zKey, "expandable_segments")) {
            bSeen = 1;
            ASSERT(d->fit.aSave[k].bytes >= 17 * MiB && d->fit.aSave[k].bytes <= 19 * MiB); /* bisected to 1 MiB */
            ASSERT_CONTAINS(d->fit.aSave[k].zAssume, "batch 15 instead of 11");
        }
    ASSERT(bSeen);
    vt__result_free(&r);
    /* run with expandable segments: replayed so, and no saving offered */
    d = expandable_job(tg_path("blocks_exp1.db"), "garbage_collection_threshold:0.8,expandable_segments:True", &r);
    ASSERT(d);
    ASSERT_EQ(1, d->fit.bReplayed);
    ASSERT_EQ(15, d->fit.maxBatch);
    ASSERT_CONTAINS(d->fit.azAssume[d->fit.nAssume - 1], "with expandable_segments:True");
    ASSERT(!saving_of(d, "expandable_segments"));
    vt__result_free(&r);
}

/* An import whose memory began before its window: that part is "allocated before the trace". */
TEST(categories_before_the_trace)
{
    const char *zPath = tg_path("before.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    const struct vt_device *d;
    g = open_trace(zPath, &s, 16 * GiB);
    tg_meta(g, "source_format", "kineto_json");
    tg_meta(g, "kineto.device.0.allocated_before_trace", "1073741824");
    bd_mem(g, 1 * MS, 1, 0x7f5000000000LL, 2 * GiB, s.fwd);
    bd_mem(g, 2 * MS, 2, 0x7f5000000000LL, 2 * GiB, s.fwd);
    d = close_analyze(g, zPath, &r);
    ASSERT_STREQ("process", d->bd.zBasis);
    ASSERT_EQ(3 * GiB, d->bd.total);
    ASSERT_EQ(1 * GiB, part(&r, 0, VT_CAT_BEFORE));
    vt__result_free(&r);
}

/* Every format prints the same list: text, Markdown and HTML tables, JSON "breakdown" summing to "breakdown_bytes". */
TEST(breakdown_in_every_format)
{
    const char *zPath = tg_path("fmt.db");
    struct vt_opts o;
    struct vt_result r;
    char *z = NULL;
    size_t n = 0;
    bd_job(zPath, NULL, 256 * MiB, 1, NULL, 0);
    vt__opts_default(&o);
    o.batch = 8;
    ASSERT_EQ(0, vt__analyze(&zPath, 1, &o, &r));
    for (int fmt = 0; fmt < 4; fmt++) {
        FILE *f = open_memstream(&z, &n);
        ASSERT(f);
        ASSERT_EQ(0, fmt == 0 ? vt__report_text(f, &r) : fmt == 1 ? vt__report_json(f, &r)
                     : fmt == 2 ? vt__report_markdown(f, &r) : vt__report_html(f, &r));
        fclose(f);
        ASSERT_CONTAINS(z, fmt == 1 ? "\"category\": \"activations\"" : "activations kept for backward");
        if (fmt == 0) ASSERT_CONTAINS(z, "what it was at 220.0 ms (allocated, 2.42 GiB)");
        if (fmt == 0) ASSERT_CONTAINS(z, "what would fit:");
        if (fmt == 0) ASSERT_CONTAINS(z, "1.25 GiB grows with the batch (activations kept for backward,");
        if (fmt == 1) {
            ASSERT(tg_json_valid(z));
            ASSERT_CONTAINS(z, "\"breakdown_bytes\": 2602565632");
            ASSERT_CONTAINS(z, "\"max_batch\": ");
        }
        if (fmt == 2) ASSERT_CONTAINS(z, "| category | bytes | share | evidence |");
        if (fmt == 3) ASSERT_CONTAINS(z, "class=\"bdbar\"");
        free(z);
        z = NULL;
    }
    vt__result_free(&r);
}

/* How often z holds zPart. */
static int count_of(const char *z, const char *zPart)
{
    int n = 0;
    for (const char *p = z; (p = strstr(p, zPart)) != NULL; p += strlen(zPart)) n++;
    return n;
}

/* One failed request tried twice (the allocator's retry): one breakdown in every format, not one per attempt. */
TEST(oom_breakdown_once_per_failure)
{
    const char *zPath = tg_path("retry.db");
    struct tg *g;
    struct bd_stacks s;
    struct vt_result r;
    char *z = NULL;
    size_t n = 0;
    g = open_trace(zPath, &s, 16 * GiB);
    bd_mem(g, 1 * MS, 1, 0x7f6000000000LL, 6 * GiB, s.fwd);
    tg_oom(g, 2 * MS, 0, 12 * GiB, 9 * GiB, 16 * GiB, s.fwd);
    tg_oom(g, 2 * MS + 5000, 0, 12 * GiB, 9 * GiB, 16 * GiB, s.fwd);
    ASSERT(close_analyze(g, zPath, &r));
    ASSERT_EQ(2, r.aTrace[0].nOom);
    ASSERT_EQ(1, r.aTrace[0].nFail);
    for (int fmt = 0; fmt < 3; fmt++) {
        FILE *f = open_memstream(&z, &n);
        ASSERT(f);
        ASSERT_EQ(0, fmt == 0 ? vt__report_text(f, &r) : fmt == 1 ? vt__report_markdown(f, &r) : vt__report_html(f, &r));
        fclose(f);
        ASSERT_EQ(1, count_of(z, "at the OOM at "));
        free(z);
        z = NULL;
    }
    vt__result_free(&r);
}

/* What would fit when nothing at the peak grows with the batch (weights and the cache only): no empty list. */
TEST(fit_text_nothing_grows)
{
    static struct vt_device d;
    struct vt_bdpart a[2] = {{VT_CAT_PARAM, 11 * GiB, 460, NULL, ""}, {VT_CAT_CACHE, 4 * MiB, 0, NULL, ""}};
    char z[2048];
    memset(&d, 0, sizeof d);
    d.bd.total = 11 * GiB + 4 * MiB;
    d.bd.a = a;
    d.bd.n = 2;
    d.fit.bDone = 1;
    d.fit.capacity = -1;
    d.fit.context = 512 * MiB;
    d.fit.bContextAssumed = 1;
    d.fit.need = d.fit.fixed = d.bd.total + d.fit.context;
    d.fit.maxScale = -1;
    d.fit.batch = d.fit.maxBatch = -1;
    ASSERT_EQ(1, vt__fmt_fit(&d, z, sizeof z));
    ASSERT_CONTAINS(z, "0 B grows with the batch, 11.5 GiB does not: nothing at the peak grows with the batch");
    ASSERT(!strstr(z, "( and"));
    ASSERT(!strstr(z, "()"));
}

/* One real file's expected breakdown: its basis, its total and the bytes of a few categories. */
struct real_case {
    const char *zName, *zBasis;
    int64_t total;
    struct { int cat; int64_t bytes; } aPart[4];
    const char *zEvidence; /* in some part's evidence: the frames or lifetime that decided */
};

/*
 * Analyze file zDir/c->zName (skipped when absent and bOptional): its one device's breakdown
 * sums to the peak (plus what came before the trace), leaves nothing unknown and has c's parts.
 */
static int check_real(const char *zDir, const struct real_case *c, int bOptional)
{
    char zPath[4096];
    const char *az[1] = {zPath};
    struct vt_opts o;
    struct vt_result r;
    const struct vt_device *d = NULL;
    int64_t sum = 0;
    int bEvidence = 0;
    size_t nName = strlen(c->zName);
    snprintf(zPath, sizeof zPath, "%s/%s", zDir, c->zName);
    if (bOptional && access(zPath, R_OK) != 0) return 0;
    if (!VT_HAVE_ZLIB && nName > 3 && strcmp(c->zName + nName - 3, ".gz") == 0) return 0; /* cannot be read here */
    vt__opts_default(&o);
    ASSERT_EQ(0, vt__analyze(az, 1, &o, &r));
    for (int k = 0; k < r.aTrace[0].tl.nDev; k++)
        if (r.aTrace[0].tl.aDev[k].bd.n > 0) d = &r.aTrace[0].tl.aDev[k];
    ASSERT(d);
    ASSERT_STREQ(c->zBasis, d->bd.zBasis);
    ASSERT_EQ(c->total, d->bd.total);
    for (int k = 0; k < d->bd.n; k++) {
        sum += d->bd.a[k].bytes;
        if (d->bd.a[k].zEvidence && strstr(d->bd.a[k].zEvidence, c->zEvidence)) bEvidence = 1;
    }
    ASSERT_EQ(d->bd.total, sum);
    ASSERT(!vt__bd_part(&d->bd, VT_CAT_UNKNOWN)); /* docs/analysis.md: 0 % unknown on each real file */
    for (int k = 0; k < 4 && c->aPart[k].bytes; k++) {
        const struct vt_bdpart *p = vt__bd_part(&d->bd, c->aPart[k].cat);
        ASSERT(p);
        ASSERT_EQ(c->aPart[k].bytes, p->bytes);
    }
    ASSERT(bEvidence);
    vt__result_free(&r);
    return 1;
}

/* The real file shipped with the tests (a torch.profiler trace of inference that began mid-run). */
TEST(real_shipped_file)
{
    /* the parts sum to the process's reserved peak (torch.profiler's Total Reserved): the cache beside the rest */
    static const struct real_case c = {"tracelens_h100_qwen05b_inference_memory.json.gz", "process reserved", 2629828608LL,
                                       {{VT_CAT_BEFORE, 984742400}, {VT_CAT_TEMP, 1103766016}, {VT_CAT_CACHE, 541320192}},
                                       "made and freed within a step without a backward pass"};
    if (!VT_HAVE_ZLIB) SKIP("built without zlib: the shipped real trace is gzip'd");
    ASSERT_EQ(1, check_real(VT_REAL_TESTS, &c, 0));
}

/* The real files of ../shared/real-data: snapshots whose stacks name backward nodes and optimizer steps, a DDP profile. */
TEST(real_shared_files)
{
    static const struct real_case ac[] = {
        {"cs336_niu_fwd_bwd_200.pickle", "reserved", 1390411776,
         {{VT_CAT_ACT, 700340816}, {VT_CAT_OPT, 272357376}, {VT_CAT_CACHE, 160658136}, {VT_CAT_CUBLAS, 17039360}},
         "freed by the autograd engine"},
        {"cs336_silmont2000_mem_snapshot_small.pickle", "reserved", 3781165056LL,
         {{VT_CAT_TEMP, 2684354564LL}, {VT_CAT_ACT, 545652740}, {VT_CAT_CACHE, 532021240}, {VT_CAT_GRAD, 2097152}},
         "made by the autograd engine, freed within its step"},
        {"flexgen_yiyi_oom_snapshot_v1format.pickle", "reserved", 11844714496LL,
         {{VT_CAT_PARAM, 11840159744LL}, {VT_CAT_CACHE, 4554752}}, "reserved by the caching allocator"},
        {"hta_df_index_resolver_v100_ddp_memory.json.gz", "process reserved", 12782141440LL,
         {{VT_CAT_BEFORE, 4096614400LL}, {VT_CAT_ACT, 1333781504LL}, {VT_CAT_TEMP, 1199112192LL}, {VT_CAT_CACHE, 6152633344LL}},
         "Total Reserved"},
    };
    const char *zDir = getenv("VT_REAL_DATA");
    int n = 0;
    if (!zDir || !zDir[0]) SKIP("real data not found (VT_REAL_DATA)");
    for (size_t k = 0; k < sizeof ac / sizeof ac[0]; k++) n += check_real(zDir, &ac[k], 1);
    if (n == 0) SKIP("none of the real files found in VT_REAL_DATA (or, without zlib, none that is not gzip'd)");
}

VT_TEST_LIST(T(live_at_peak_is_the_breakdowns_moment) T(categories_tensor_level_nvtx) T(categories_tensor_level_steps_from_stacks) T(categories_two_ranks)
                 T(fit_largest_batch) T(fit_checkpointing_saving_says_its_figure) T(fit_no_expandable_saving_for_the_pool) T(fit_expandable_only_where_fragmentation_seen) T(fit_expandable_from_an_oom_judged_fragmentation)
                 T(fit_fragmentation_same_pool_only) T(fit_fragmentation_at_an_oom) T(categories_segment_level) T(categories_own_optimizer_tensor_level) T(categories_segment_level_pages) T(categories_blocks_in_segments_cache) T(sites_count_blocks_not_their_segments)
                     T(categories_at_oom_device_used) T(fit_counts_failed_request) T(untraced_beyond_a_context) T(categories_at_oom_pool_cache) T(fit_tensor_level_replays_the_pool) T(fit_expandable_segments_replayed) T(categories_at_peak_device_sampled) T(fit_segment_level_lower_bound) T(categories_before_the_trace) T(breakdown_in_every_format) T(fit_text_nothing_grows) T(oom_breakdown_once_per_failure)
                         T(real_shipped_file) T(real_shared_files))
