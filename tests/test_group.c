/* Tests for one finding per root cause: generated code as one site at the caller's line, findings grouped across ranks, the text report's first screen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "tracegen.h"
#include "vt_test.h"

#define WEIGHTS 0x100000000LL
#define KEPT 0x300000000LL

/* Analyze the traces into r; r->pOpts points at options that outlive the call (the reports read them). */
static void run(const char **azPath, int nPath, struct vt_result *r)
{
    static struct vt_opts o;
    vt__opts_default(&o);
    o.nJobs = 1;
    ASSERT_EQ(0, vt__analyze(azPath, nPath, &o, r));
}

/*
 * A stack of a torch.compile'd forward (bWin: Windows paths): the generated module's line
 * `line`, Inductor's and Dynamo's frames, the model's forward that Dynamo compiled, Dynamo's
 * entry, then the user's call (train.py:66) and main.
 */
static int64_t compiled_stack(struct tg *g, int line, int bWin)
{
    const char *zGen = bWin ? "C:\\Users\\al\\AppData\\Local\\Temp\\torchinductor_al\\q7\\cq7x.py"
                            : "/tmp/torchinductor_al/q7/cq7x.py";
    const char *zInd = bWin ? "C:\\Users\\al\\venv\\Lib\\site-packages\\torch\\_inductor\\output_code.py"
                            : "/usr/lib/python3.12/site-packages/torch/_inductor/output_code.py";
    const char *zDyn = bWin ? "C:\\Users\\al\\venv\\Lib\\site-packages\\torch\\_dynamo\\eval_frame.py"
                            : "/usr/lib/python3.12/site-packages/torch/_dynamo/eval_frame.py";
    const char *zModel = bWin ? "C:\\Users\\al\\proj\\model.py" : "/home/al/proj/model.py";
    const char *zTrain = bWin ? "C:\\Users\\al\\proj\\train.py" : "/home/al/proj/train.py";
    const struct tg_frame a[] = {
        {VT_FRAME_PYTHON, 0, "call", zGen, NULL, line},
        {VT_FRAME_PYTHON, 0, "CompiledFxGraph.__call__", zInd, NULL, 584},
        {VT_FRAME_PYTHON, 0, "DisableContext.__call__.<locals>._fn", zDyn, NULL, 929},
        {VT_FRAME_PYTHON, 0, "GPT.forward", zModel, NULL, 140},
        {VT_FRAME_PYTHON, 0, "OptimizedModule.__call__", zDyn, NULL, 414},
        {VT_FRAME_PYTHON, 0, "train_one_epoch", zTrain, NULL, 66},
        {VT_FRAME_PYTHON, 0, "main", zTrain, NULL, 212}};
    return tg_stack_frames(g, a, (int)(sizeof a / sizeof a[0]), 0x5000 + line + (bWin ? 0x100000 : 0));
}

/* The generated backward: no user frame under it (the autograd engine's thread). */
static int64_t backward_stack(struct tg *g, int line)
{
    const struct tg_frame a[] = {
        {VT_FRAME_PYTHON, 0, "call", "/tmp/torchinductor_al/ue/cue4.py", NULL, line},
        {VT_FRAME_PYTHON, 0, "CompiledFxGraph.__call__",
         "/usr/lib/python3.12/site-packages/torch/_inductor/output_code.py", NULL, 584},
        {VT_FRAME_PYTHON, 0, "BackwardCFunction.apply", "/usr/lib/python3.12/site-packages/torch/autograd/function.py",
         NULL, 311}};
    return tg_stack_frames(g, a, (int)(sizeof a / sizeof a[0]), 0x9000 + line);
}

/* Ten steps of a compiled model whose loop keeps the 12 hidden states (4 MiB each, one generated line each) every step. */
static void build_compiled(const char *zPath, int bWin)
{
    struct tg *g = tg_open(zPath);
    int64_t aS[12], aB[3], sW;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sW = tg_stack(g, "train.py", 188, "main");
    for (int k = 0; k < 12; k++) aS[k] = compiled_stack(g, 275 + 72 * k, bWin);
    for (int k = 0; k < 3; k++) aB[k] = backward_stack(g, 1012 + 40 * k);
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, 200 * MiB, sW);
    tg_nvtx(g, 5 * MS, 106 * MS, "train_epoch");
    for (int i = 0; i < 10; i++) {
        int64_t t0 = 5 * MS + i * 10 * MS, k;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        k = tg_kernel(g, t0 + 2 * MS, t0 + 3 * MS, "triton_poi_fused_gelu_4");
        tg_use(g, t0 + 2 * MS, k, WEIGHTS);
        for (int h = 0; h < 12; h++) {
            int64_t a = KEPT + (int64_t)(i * 12 + h) * 0x1000000;
            tg_alloc(g, t0 + 2 * MS + h * 10000, 0, 3, a, 4 * MiB, aS[h]);
            tg_use(g, t0 + 2 * MS + h * 10000, k, a);
        }
        for (int b = 0; b < 3; b++) { /* backward buffers, freed within the step */
            int64_t a = 0x500000000LL + b * 0x1000000;
            tg_alloc(g, t0 + 5 * MS, 0, 3, a, 8 * MiB, aB[b]);
            tg_use(g, t0 + 5 * MS, k, a);
            tg_free(g, t0 + 6 * MS, 0, 3, a, 8 * MiB);
        }
    }
    ASSERT_EQ(0, tg_close(g));
}

/* Count the sites of trace t whose description contains zPart. */
static int count_sites(const struct vt_trace *t, const char *zPart)
{
    int n = 0;
    for (int i = 0; i < t->sites.n; i++)
        if (strstr(t->sites.a[i].zSite, zPart)) n++;
    return n;
}

/* Twelve generated lines called from one user line: one site there, one leak finding, Linux and Windows paths. */
TEST(generated_code_is_one_site_at_the_callers_line)
{
    for (int bWin = 0; bWin < 2; bWin++) {
        const char *zPath = tg_path(bWin ? "compiled_win.db" : "compiled.db");
        const char *zWant = bWin ? "C:\\Users\\al\\proj\\train.py:66 in train_one_epoch (via generated code)"
                                 : "/home/al/proj/train.py:66 in train_one_epoch (via generated code)";
        struct vt_result r;
        int nLeak = 0;
        build_compiled(zPath, bWin);
        run(&zPath, 1, &r);
        ASSERT_EQ(1, count_sites(&r.aTrace[0], "train.py:66 in train_one_epoch (via generated code)"));
        ASSERT_EQ(0, count_sites(&r.aTrace[0], "model.py:140"));
        ASSERT_EQ(0, count_sites(&r.aTrace[0], "q7"));
        /* the backward module: one site for its three lines, named by the file */
        ASSERT_EQ(1, count_sites(&r.aTrace[0], "/tmp/torchinductor_al/ue/cue4.py (generated code, all its lines)"));
        ASSERT_EQ(0, count_sites(&r.aTrace[0], "cue4.py:"));
        for (int i = 0; i < r.nFind; i++) {
            if (strcmp(r.aFind[i].zKind, "leak") || r.aFind[i].severity < VT_SEV_LOW) continue;
            nLeak++;
            ASSERT_STREQ(zWant, r.aFind[i].zSite);
        }
        ASSERT(nLeak >= 1 && nLeak <= 2); /* growth, and never freed: not one per generated line */
        vt__result_free(&r);
    }
    tg_cleanup();
}

/*
 * One rank of a job: a 64 MiB buffer from train.py:20 never freed on every rank; on rank 2,
 * 8 MiB more per step from train.py:88 (a leak on that rank only); nSites more buffers of 2 MiB
 * never freed, each from a line of its own (distinct findings).
 */
static void build_rank(const char *zPath, int rank, int nSites)
{
    struct tg *g = tg_open(zPath);
    char zRank[16];
    int64_t sB, sL;
    ASSERT(g);
    snprintf(zRank, sizeof zRank, "%d", rank);
    tg_meta(g, "rank", zRank);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sB = tg_stack(g, "train.py", 20, "main");
    sL = tg_stack(g, "train.py", 88, "train_step");
    tg_alloc(g, 1 * MS, 0, 3, WEIGHTS, (64 + 4 * rank) * MiB, sB);
    /* kernel uses are known (the weights once, early): memory never freed is then a leak, not state */
    tg_use(g, 2 * MS, tg_kernel(g, 2 * MS, 3 * MS, "fill"), WEIGHTS);
    tg_nvtx(g, 5 * MS, 106 * MS, "train_epoch");
    for (int i = 0; i < 10; i++) {
        int64_t t0 = 5 * MS + i * 10 * MS;
        tg_nvtx(g, t0, t0 + 10 * MS, "step");
        if (rank == 2) tg_alloc(g, t0 + 3 * MS, 0, 3, KEPT + i * 0x1000000LL, 8 * MiB, sL);
    }
    for (int k = 0; k < nSites; k++) /* a site that keeps 2 MiB every step: a leak of its own */
        for (int i = 0; i < 10; i++)
            tg_alloc(g, 5 * MS + i * 10 * MS + 5 * MS, 0, 3, 0x700000000LL + (k * 16 + i) * 0x1000000LL, 2 * MiB,
                     tg_stack(g, "data.py", 100 + k, "load"));
    ASSERT_EQ(0, tg_close(g));
}

/* Find the finding of kind zKind whose site contains zSite, or NULL. */
static const struct vt_finding *find(const struct vt_result *r, const char *zKind, const char *zSite)
{
    for (int i = 0; i < r->nFind; i++)
        if (!strcmp(r->aFind[i].zKind, zKind) && r->aFind[i].zSite && strstr(r->aFind[i].zSite, zSite))
            return &r->aFind[i];
    return NULL;
}

/* Four ranks: what all of them do is one finding "all 4 ranks" with its spread; rank 2's leak "rank 2 only". */
TEST(findings_grouped_across_ranks)
{
    const char *az[4];
    char azPath[4][64], z[256];
    struct vt_result r;
    const struct vt_finding *x;
    for (int k = 0; k < 4; k++) {
        snprintf(azPath[k], sizeof azPath[k], "rank%d.db", k);
        az[k] = strdup(tg_path(azPath[k]));
        build_rank(az[k], k, 0);
    }
    run(az, 4, &r);
    x = find(&r, "leak", "train.py:20 in main");
    ASSERT(x);
    ASSERT_EQ(4, x->nSame);
    ASSERT_EQ(4, x->nTraces);
    ASSERT_EQ(3, x->trace); /* the worst (76 MiB) stands for them */
    ASSERT_EQ(76 * MiB, x->bytes);
    ASSERT_EQ(64 * MiB, x->bytesMin);
    ASSERT_EQ(68 * MiB, x->bytesMed);
    ASSERT_EQ(76 * MiB, x->bytesMax);
    vt__fmt_ranks(&r, x, z, sizeof z);
    ASSERT_STREQ("all 4 ranks", z);
    vt__fmt_spread(x, z, sizeof z);
    ASSERT_STREQ("once in each of 4 processes: 64.0 MiB min, 68.0 MiB median, 76.0 MiB max", z);
    for (int i = 0; i < r.nFind; i++) { /* every finding of train.py:88 is rank 2's only */
        if (!r.aFind[i].zSite || !strstr(r.aFind[i].zSite, "train.py:88")) continue;
        ASSERT_EQ(2, r.aFind[i].trace);
        vt__fmt_ranks(&r, &r.aFind[i], z, sizeof z);
        ASSERT_STREQ("rank 2 only", z);
    }
    ASSERT(find(&r, "leak", "train.py:88"));
    {
        int worst, n = vt__trace_findings(&r, 0, &worst);
        ASSERT(n >= 1); /* rank 0 counts the grouped finding it is part of */
        ASSERT(vt__finding_on(x, 0) && vt__finding_on(x, 2));
    }
    {
        char *zJson = NULL;
        size_t nJson = 0;
        FILE *f = open_memstream(&zJson, &nJson);
        ASSERT(f);
        ASSERT_EQ(0, vt__report_json(f, &r));
        fclose(f);
        ASSERT(tg_json_valid(zJson));
        ASSERT_CONTAINS(zJson, "\"traces\": [0, 1, 2, 3], \"ranks\": [\"0\", \"1\", \"2\", \"3\"], \"where\": \"all 4 ranks\", "
                               "\"occurrences\": 4, \"bytes_min\": 67108864, \"bytes_median\": 71303168, \"bytes_max\": 79691776}");
        ASSERT_CONTAINS(zJson, "\"traces\": [2], \"ranks\": [\"2\"], \"where\": \"rank 2 only\", \"occurrences\": 1");
        free(zJson);
    }
    vt__result_free(&r);
    for (int k = 0; k < 4; k++) free((char *)az[k]);
    tg_cleanup();
}

/* Rank lists: ranges of consecutive ranks, the count beside them. */
TEST(rank_list_wording)
{
    struct vt_result r;
    struct vt_trace aT[12];
    struct vt_finding x;
    int aIdx[] = {0, 1, 2, 3, 5, 7, 8, 11};
    char z[256];
    memset(&r, 0, sizeof r);
    memset(aT, 0, sizeof aT);
    memset(&x, 0, sizeof x);
    for (int k = 0; k < 12; k++) snprintf(aT[k].f.zRank, sizeof aT[k].f.zRank, "%d", k);
    r.aTrace = aT;
    r.nTrace = 12;
    x.aTraces = aIdx;
    x.nTraces = 8;
    x.nSame = 8;
    vt__fmt_ranks(&r, &x, z, sizeof z);
    ASSERT_STREQ("ranks 0-3, 5, 7-8, 11 (8 of 12)", z);
    aT[4].f.zRank[0] = 0; /* a process without a rank: counted as processes */
    vt__fmt_ranks(&r, &x, z, sizeof z);
    ASSERT_STREQ("8 of 12 processes", z);
    r.nTrace = 1;
    vt__fmt_ranks(&r, &x, z, sizeof z);
    ASSERT_STREQ("", z);
}

/* Render the text report of r with --all or not, into a malloc'd string. */
static char *text_of(struct vt_result *r, int bAll)
{
    struct vt_opts o = *r->pOpts;
    const struct vt_opts *pOld = r->pOpts;
    char *z = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&z, &n);
    ASSERT(f);
    o.bAll = bAll;
    r->pOpts = &o;
    ASSERT_EQ(0, vt__report_text(f, r));
    fclose(f);
    r->pOpts = pOld;
    return z;
}

static int count_of(const char *z, const char *zPart)
{
    int n = 0;
    for (const char *p = z; (p = strstr(p, zPart)); p += strlen(zPart)) n++;
    return n;
}

/* More findings than a screen, and many processes: the worst ten, then what is left, counted; --all shows all. */
TEST(text_first_screen)
{
    const char *az[10];
    char azPath[10][64];
    struct vt_result r;
    char *z;
    for (int k = 0; k < 10; k++) {
        snprintf(azPath[k], sizeof azPath[k], "screen%d.db", k);
        az[k] = strdup(tg_path(azPath[k]));
        build_rank(az[k], k, k == 0 ? 14 : 0);
    }
    run(az, 10, &r);
    ASSERT(r.nFind > 12);
    z = text_of(&r, 0);
    ASSERT_EQ(10, count_of(z, "\n[")); /* findings begin a line with their severity */
    ASSERT_CONTAINS(z, "more findings (");
    ASSERT_CONTAINS(z, "--all shows them");
    ASSERT_EQ(0, count_of(z, "== Process "));
    ASSERT_CONTAINS(z, "(the sections of each of the 10 processes: --all shows them)");
    ASSERT_CONTAINS(z, "  ... 2 more processes (--all shows them)");
    ASSERT_CONTAINS(z, "rank 0 only");
    free(z);
    z = text_of(&r, 1);
    ASSERT_EQ(r.nFind, count_of(z, "\n["));
    ASSERT_CONTAINS(z, "all 10 ranks"); /* the weights every rank holds: one finding, however far down */
    ASSERT_EQ(10, count_of(z, "== Process "));
    ASSERT(!strstr(z, "more findings ("));
    free(z);
    vt__result_free(&r);
    for (int k = 0; k < 10; k++) free((char *)az[k]);
    tg_cleanup();
}

/*
 * Stacks with native frames only, as PyTorch's snapshots record the autograd engine's thread (no
 * module, demangled names) and as the tracer records it (mangled names, libtorch modules): named
 * by the autograd node, else by the operator, never by the allocator's own frame.
 */
TEST(native_only_stacks_named_by_node_or_operator)
{
    const char *zPath = tg_path("native.db");
    struct tg *g = tg_open(zPath);
    struct vt_result r;
    static const struct tg_frame aBwd[] = {
        {VT_FRAME_NATIVE, 0, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, "
                             "unsigned long, CUstream_st*)", "CUDACachingAllocator.cpp", NULL, 0},
        {VT_FRAME_NATIVE, 0, "at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>)", NULL, NULL, 0},
        {VT_FRAME_NATIVE, 0, "void at::meta::common_checks_baddbmm_bmm<at::meta::structured_bmm>()", NULL, NULL, 0},
        {VT_FRAME_NATIVE, 0, "at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)", NULL, NULL, 0},
        {VT_FRAME_NATIVE, 0, "torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor>&&)", NULL, NULL, 0},
        {VT_FRAME_NATIVE, 0, "torch::autograd::Engine::thread_main()", NULL, NULL, 0},
        {VT_FRAME_NATIVE, 0, "execute_native_thread_routine", "thread48.o", NULL, 0},
        {VT_FRAME_NATIVE, 0, "clone", NULL, NULL, 0}};
    static const struct tg_frame aBwdMangled[] = {
        {VT_FRAME_NATIVE, 0x1000, "_ZN3c104cuda29CUDACachingAllocator6Native22DeviceCachingAllocator6mallocEamP11CUstream_st",
         NULL, "/venv/lib/python3.12/site-packages/torch/lib/libc10_cuda.so", 0},
        {VT_FRAME_NATIVE, 0x2000, "_ZN5torch8autograd9generated12DivBackward05applyEOSt6vectorIN2at6TensorESaIS5_EE",
         NULL, "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so", 0}};
    /* a derivative formula (generated::details::, no node) runs before the node that calls it */
    static const struct tg_frame aFormula[] = {
        {VT_FRAME_NATIVE, 0, "at::_ops::div_Tensor::call(at::Tensor const&, at::Tensor const&)", NULL, NULL, 0},
        {VT_FRAME_NATIVE, 0, "torch::autograd::generated::details::div_tensor_other_backward(at::Tensor const&, "
                             "at::Tensor const&, at::Tensor const&)", NULL, NULL, 0},
        {VT_FRAME_NATIVE, 0, "torch::autograd::generated::MulBackward0::apply(std::vector<at::Tensor>&&)", NULL, NULL, 0},
        {VT_FRAME_NATIVE, 0, "torch::autograd::Engine::thread_main()", NULL, NULL, 0},
        /* the thread's start, as PyTorch's unwinder names libc's frames */
        {VT_FRAME_NATIVE, 0, "pthread_condattr_setpshared", NULL, NULL, 0},
        {VT_FRAME_NATIVE, 0, "__xmknodat", NULL, NULL, 0}};
    static const struct tg_frame aOp[] = {
        {VT_FRAME_NATIVE, 0, "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)",
         NULL, NULL, 0},
        {VT_FRAME_NATIVE, 0, "at::_ops::empty_memory_format::call(c10::ArrayRef<c10::SymInt>)", NULL, NULL, 0},
        {VT_FRAME_NATIVE, 0, "clone", NULL, NULL, 0}};
    int64_t s1, s2, s3, s4;
    ASSERT(g);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    s1 = tg_stack_frames(g, aBwd, (int)(sizeof aBwd / sizeof aBwd[0]), 0x71);
    s2 = tg_stack_frames(g, aBwdMangled, (int)(sizeof aBwdMangled / sizeof aBwdMangled[0]), 0x72);
    s3 = tg_stack_frames(g, aOp, (int)(sizeof aOp / sizeof aOp[0]), 0x73);
    s4 = tg_stack_frames(g, aFormula, (int)(sizeof aFormula / sizeof aFormula[0]), 0x74);
    tg_alloc(g, 1 * MS, 0, 3, KEPT, 8 * MiB, s1);
    tg_alloc(g, 2 * MS, 0, 3, KEPT + 0x1000000, 8 * MiB, s2);
    tg_alloc(g, 3 * MS, 0, 3, KEPT + 0x2000000, 8 * MiB, s3);
    tg_alloc(g, 4 * MS, 0, 3, KEPT + 0x3000000, 8 * MiB, s4);
    ASSERT_EQ(0, tg_close(g));
    run(&zPath, 1, &r);
    ASSERT_EQ(1, count_sites(&r.aTrace[0], "BmmBackward0 (backward pass: autograd thread, no Python frame)"));
    ASSERT_EQ(1, count_sites(&r.aTrace[0], "DivBackward0 (backward pass: autograd thread, no Python frame)"));
    ASSERT_EQ(1, count_sites(&r.aTrace[0], "torch operator empty_memory_format (no Python frame recorded)"));
    ASSERT_EQ(1, count_sites(&r.aTrace[0], "MulBackward0 (backward pass: autograd thread, no Python frame)"));
    ASSERT_EQ(0, count_sites(&r.aTrace[0], "details"));
    ASSERT_EQ(0, count_sites(&r.aTrace[0], "CachingAllocator"));
    vt__result_free(&r);
    tg_cleanup();
}

/* Add to r a leak finding of trace `trace` at site zSite: bytes, one event at ts. */
static void add_leak(struct vt_result *r, int trace, const char *zSite, int64_t bytes, int64_t ts)
{
    struct vt_finding *f = vt__finding_add(r, trace, "leak", VT_SEV_MEDIUM);
    ASSERT(f);
    f->zTitle = vt__strdupf("%lld B never freed", (long long)bytes);
    f->zSite = strdup(zSite);
    f->bytes = bytes;
    f->count = 1;
    f->firstTs = f->lastTs = ts;
}

/* Six findings of one root cause on three traces (two, one, three of them), and one elsewhere. */
static void add_six(struct vt_result *r, int iFrom, int iTo)
{
    static const struct {
        int trace;
        int64_t bytes, ts;
    } a[] = {{0, 10, 500}, {0, 30, 200}, {1, 20, 900}, {2, 40, 700}, {2, 60, 800}, {2, 50, 300}};
    for (int k = 0; k < 6; k++)
        if (a[k].trace >= iFrom && a[k].trace <= iTo) add_leak(r, a[k].trace - iFrom, "x.py:1 in f", a[k].bytes, a[k].ts);
    if (iFrom <= 1 && 1 <= iTo) add_leak(r, 1 - iFrom, "y.py:2 in g", 5, 100);
}

/*
 * Grouping each trace's findings first (as they are written back), then all traces together,
 * gives what grouping them all at once gives: the same number, spread, traces and first times.
 */
TEST(grouping_twice_is_grouping_once)
{
    struct vt_result rAll, rTwo, aOne[3];
    const struct vt_finding *x, *y;
    memset(&rAll, 0, sizeof rAll);
    memset(&rTwo, 0, sizeof rTwo);
    add_six(&rAll, 0, 2);
    ASSERT_EQ(0, vt__findings_group(&rAll));
    for (int t = 0; t < 3; t++) { /* per trace, as the pipeline's workers do (each its trace 0) */
        memset(&aOne[t], 0, sizeof aOne[t]);
        add_six(&aOne[t], t, t);
        ASSERT_EQ(0, vt__findings_group(&aOne[t]));
        for (int k = 0; k < aOne[t].nFind; k++) { /* then moved into one result as trace t */
            struct vt_finding *f = vt__finding_add(&rTwo, t, "", 0);
            ASSERT(f);
            *f = aOne[t].aFind[k];
            f->trace = t;
            for (int m = 0; f->aTraces && m < f->nTraces; m++) f->aTraces[m] = t;
        }
        free(aOne[t].aFind);
    }
    ASSERT_EQ(0, vt__findings_group(&rTwo));
    ASSERT_EQ(2, rAll.nFind);
    ASSERT_EQ(2, rTwo.nFind);
    x = find(&rAll, "leak", "x.py:1");
    y = find(&rTwo, "leak", "x.py:1");
    ASSERT(x && y);
    for (int k = 0; k < 2; k++, x = y) {
        ASSERT_EQ(6, x->nSame);
        ASSERT_EQ(2, x->trace); /* the worst, 60 B */
        ASSERT_EQ(60, x->bytes);
        ASSERT_EQ(10, x->bytesMin);
        ASSERT_EQ(30, x->bytesMed);
        ASSERT_EQ(60, x->bytesMax);
        ASSERT_EQ(3, x->count);    /* the three events of the worst's process */
        ASSERT_EQ(300, x->firstTs); /* its first and last times take in its repeats */
        ASSERT_EQ(800, x->lastTs);
        ASSERT_EQ(3, x->nTraces);
        ASSERT_EQ(200, vt__finding_first_on(x, 0)); /* each process's own first time */
        ASSERT_EQ(900, vt__finding_first_on(x, 1));
        ASSERT_EQ(300, vt__finding_first_on(x, 2));
    }
    x = find(&rTwo, "leak", "y.py:2");
    ASSERT(x && x->nSame == 1 && x->trace == 1);
    ASSERT_EQ(100, vt__finding_first_on(x, 1));
    ASSERT_EQ(-1, vt__finding_first_on(x, 0));
    vt__result_free(&rAll);
    vt__result_free(&rTwo);
}

/*
 * A rank of a job whose 64 MiB buffer from train.py:20 is never freed, allocated at `at`; with
 * nOom > 0, an OOM at train.py:30 caught and skipped nOom times, 3 s apart (a larger request each
 * time), the run then lasting 6.2 s instead of 0.2 s.
 */
static void build_late(const char *zPath, int rank, int64_t at, int nOom)
{
    struct tg *g = tg_open(zPath);
    char zRank[16];
    int64_t sB, sO;
    ASSERT(g);
    snprintf(zRank, sizeof zRank, "%d", rank);
    tg_meta(g, "rank", zRank);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    sB = tg_stack(g, "train.py", 20, "main");
    sO = tg_stack(g, "train.py", 30, "main");
    tg_alloc(g, 1 * MS, 0, 3, KEPT, 1 * MiB, sB); /* the runs start alike */
    tg_free(g, 2 * MS, 0, 3, KEPT, 1 * MiB);
    tg_alloc(g, at, 0, 3, WEIGHTS, 64 * MiB, sB);
    tg_use(g, at + 1 * MS, tg_kernel(g, at + 1 * MS, at + 2 * MS, "fill"), WEIGHTS);
    for (int k = 0; k < nOom; k++) /* three failures seconds apart: each request skipped */
        tg_oom(g, 100 * MS + k * 3000 * MS, 0, (20 + 4 * k) * GiB, 1 * GiB, 16 * GiB, sO);
    tg_alloc(g, (nOom ? 6200 : 200) * MS, 0, 3, KEPT, 1 * MiB, sB);
    tg_free(g, (nOom ? 6201 : 201) * MS, 0, 3, KEPT, 1 * MiB);
    ASSERT_EQ(0, tg_close(g));
}

/*
 * Where the HTML report's figures put the first finding of kind zKind whose site holds zSite: its
 * first time on traces 0 and 1 (the JSON "on" list: trace, time from that trace's start, ...) into
 * a[0] and a[1] (-1 when not there). 0, or -1 when the finding is not found.
 */
static int finding_on(const char *zH, const char *zKind, const char *zSite, long long a[2])
{
    char zK[64];
    const char *p = strstr(zH, "\"finds\":[");
    snprintf(zK, sizeof zK, "\"kind\":\"%s\"", zKind);
    a[0] = a[1] = -1;
    for (; p && (p = strstr(p, zK)) != NULL; p++) {
        const char *zOn = strstr(p, "\"on\":["), *zS = strstr(p, zSite);
        int t;
        long long v;
        if (!zOn || !zS || zS > zOn) continue;
        for (zOn += 6; sscanf(zOn, "%d,%lld", &t, &v) == 2; ) {
            if (t == 0 || t == 1) a[t] = v;
            if (!(zOn = strchr(strchr(zOn, ',') + 1, ','))) break;
            zOn++;
        }
        return 0;
    }
    return -1;
}

/*
 * A finding on two ranks at different times is drawn on each rank's timeline at its own time
 * there; a finding of one rank only on that rank's. The OOM skipped three times is one finding,
 * and --save writes each trace's findings as the report groups them (one row for the three).
 */
TEST(grouped_findings_drawn_and_saved_per_process)
{
    const char *az[2];
    struct vt_result r;
    struct vt_opts o;
    char *zH = NULL;
    size_t nH = 0;
    FILE *f;
    const char *zS0, *zS1;
    const struct vt_finding *x;
    long long aOn[2];
    az[0] = strdup(tg_path("late0.db"));
    az[1] = strdup(tg_path("late1.db"));
    build_late(az[0], 0, 1 * MS, 3);
    build_late(az[1], 1, 150 * MS, 0);
    vt__opts_default(&o);
    o.nJobs = 1;
    o.bNoWrite = 0; /* --save */
    ASSERT_EQ(0, vt__analyze(az, 2, &o, &r));
    x = find(&r, "leak", "train.py:20");
    ASSERT(x && x->nTraces == 2);
    ASSERT(vt__finding_first_on(x, 0) >= 0 && vt__finding_first_on(x, 1) > vt__finding_first_on(x, 0));
    x = find(&r, "oom", "train.py:30");
    ASSERT(x && x->nSame == 3 && x->nTraces == 1 && x->trace == 0);
    ASSERT_EQ(1, tg_query(az[0], "SELECT count(*) FROM finding WHERE kind = 'oom'"));
    ASSERT_EQ(3, tg_query(az[0], "SELECT count FROM finding WHERE kind = 'oom'"));
    ASSERT_EQ(1, tg_query(az[0], "SELECT count(*) FROM finding WHERE kind = 'leak' AND site LIKE '%train.py:20%'"));
    ASSERT_EQ(0, tg_query(az[1], "SELECT count(*) FROM finding WHERE kind = 'oom'"));
    ASSERT_EQ(1, tg_query(az[1], "SELECT count(*) FROM finding WHERE kind = 'leak' AND site LIKE '%train.py:20%'"));
    f = open_memstream(&zH, &nH);
    ASSERT(f);
    ASSERT_EQ(0, vt__report_html(f, &r));
    fclose(f);
    zS0 = strstr(zH, "<h2>Process pid 1234, rank 0</h2>");
    zS1 = strstr(zH, "<h2>Process pid 1234, rank 1</h2>");
    ASSERT(zS0 && zS1);
    /* the leak's marker on each rank's chart at its own time there: rank 0's near the start of its run, rank 1's at
     * three quarters of it */
    x = find(&r, "leak", "train.py:20");
    ASSERT_EQ(0, finding_on(zH, "leak", "train.py:20", aOn));
    ASSERT_EQ(vt__finding_first_on(x, 0) - r.aTrace[0].f.t0, aOn[0]);
    ASSERT_EQ(vt__finding_first_on(x, 1) - r.aTrace[1].f.t0, aOn[1]);
    ASSERT(aOn[0] < (r.aTrace[0].f.t1 - r.aTrace[0].f.t0) / 8);
    ASSERT(aOn[1] > (r.aTrace[1].f.t1 - r.aTrace[1].f.t0) * 6 / 10);
    free(zH);
    vt__result_free(&r);
    free((char *)az[0]);
    free((char *)az[1]);
    tg_cleanup();
}

/* A process of pid zPid on host-a whose clock anchor puts its start at wall-clock second `wall`, with one pinned-growth
 * free leak: 64 MiB kept, never freed, from train.py:77 (enough for a finding per process). */
static void build_process(const char *zPath, const char *zPid, int64_t wall)
{
    struct tg *g = tg_open(zPath);
    int64_t s;
    char zW[32];
    ASSERT(g);
    tg_meta(g, "pid", zPid);
    tg_meta(g, "hostname", "host-a");
    tg_meta(g, "clock_anchor_cupti_ns", "1000000");
    snprintf(zW, sizeof zW, "%lld", (long long)(wall * 1000000000LL + 1000000));
    tg_meta(g, "clock_anchor_wall_ns", zW);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    s = tg_stack(g, "train.py", 77, "train_one_epoch");
    for (int i = 0; i < 8; i++) tg_alloc(g, (1 + i) * 100 * MS, 0, 3, KEPT + i * 0x10000000LL, 64 * MiB + 4096, s);
    ASSERT_EQ(0, tg_close(g));
}

/*
 * The same process twice, as one file given twice or as a copy of it (same host, pid and start), is one process:
 * said once in a note, counted once; another process (another pid, or the same pid started later) stays apart.
 */
TEST(same_process_twice_is_one_process)
{
    char zA[512], zCopy[512], zOther[512], zLater[512], zCmd[1200];
    const char *az[3];
    struct vt_result r;
    snprintf(zA, sizeof zA, "%s", tg_path("a.db"));
    snprintf(zCopy, sizeof zCopy, "%s", tg_path("copy.db"));
    snprintf(zOther, sizeof zOther, "%s", tg_path("other.db"));
    snprintf(zLater, sizeof zLater, "%s", tg_path("later.db"));
    build_process(zA, "4242", 1700000000);
    build_process(zOther, "4243", 1700000000);
    build_process(zLater, "4242", 1700003600);
    snprintf(zCmd, sizeof zCmd, "cp '%s' '%s'", zA, zCopy);
    ASSERT_EQ(0, system(zCmd));
    /* one file given twice */
    az[0] = az[1] = zA;
    run(az, 2, &r);
    ASSERT_EQ(1, r.nTrace);
    ASSERT_EQ(0, r.nFailed);
    {
        int bNote = 0;
        for (int k = 0; k < r.aTrace[0].f.nNote; k++)
            bNote |= strstr(r.aTrace[0].f.azNote[k], "the same file, analyzed and counted once") != NULL;
        ASSERT(bNote);
    }
    for (int i = 0; i < r.nFind; i++) ASSERT_EQ(1, r.aFind[i].aTraces ? r.aFind[i].nTraces : 1);
    vt__result_free(&r);
    /* a copy: the same host, pid and start */
    az[0] = zA;
    az[1] = zCopy;
    az[2] = zOther;
    run(az, 3, &r);
    ASSERT_EQ(2, r.nTrace);
    ASSERT_STREQ("4242", r.aTrace[0].f.zPid);
    ASSERT_STREQ("4243", r.aTrace[1].f.zPid);
    {
        int bNote = 0;
        for (int k = 0; k < r.aTrace[0].f.nNote; k++)
            bNote |= strstr(r.aTrace[0].f.azNote[k], "is a trace of this same process") != NULL;
        ASSERT(bNote);
    }
    vt__result_free(&r);
    /* the same pid started an hour later is another process */
    az[0] = zA;
    az[1] = zLater;
    run(az, 2, &r);
    ASSERT_EQ(2, r.nTrace);
    vt__result_free(&r);
    tg_cleanup();
}

/*
 * Traces of one run share the wall clock (times from the first one's start); traces of runs an hour apart do not: on
 * one clock every time of the later would read as an hour and more, so each counts from its own first event, said.
 */
TEST(runs_apart_count_from_their_own_start)
{
    char zA[512], zOther[512], zLater[512];
    const char *az[2];
    struct vt_result r;
    snprintf(zA, sizeof zA, "%s", tg_path("a.db"));
    snprintf(zOther, sizeof zOther, "%s", tg_path("other.db"));
    snprintf(zLater, sizeof zLater, "%s", tg_path("later.db"));
    build_process(zA, "4242", 1700000000);
    build_process(zOther, "4243", 1700000030); /* a second rank, 30 s later */
    build_process(zLater, "4244", 1700003600);
    az[0] = zA;
    az[1] = zOther;
    run(az, 2, &r);
    ASSERT_EQ(2, r.nTrace);
    ASSERT(r.aTrace[0].f.fig.bWall && r.aTrace[1].f.fig.bWall);
    ASSERT_EQ(30 * 1000000000LL, vt__fig_at(&r.aTrace[1].f, r.aTrace[1].f.t0)); /* on one clock */
    ASSERT(vt__result_one_job(&r));
    vt__result_free(&r);
    { /* a trace with no known time (a snapshot without history) has no anchors and nothing to place: still one clock */
        char zNone[512];
        const char *az3[3] = {zA, zOther, zNone};
        struct tg *g;
        snprintf(zNone, sizeof zNone, "%s", tg_path("none.db"));
        ASSERT((g = tg_open(zNone)) != NULL);
        tg_meta(g, "pid", "4245");
        tg_alloc(g, -1, 0, 3, KEPT, 64 * MiB, -1);
        ASSERT_EQ(0, tg_close(g));
        run(az3, 3, &r);
        ASSERT_EQ(3, r.nTrace);
        ASSERT(!r.aTrace[2].f.bTimes);
        ASSERT_EQ(30 * 1000000000LL, vt__fig_at(&r.aTrace[1].f, r.aTrace[1].f.t0));
        vt__result_free(&r);
    }
    az[1] = zLater;
    run(az, 2, &r);
    ASSERT_EQ(2, r.nTrace);
    ASSERT(!vt__result_one_job(&r)); /* runs an hour apart: no imbalance between ranks is told */
    for (int i = 0; i < 2; i++) {
        int bNote = 0;
        ASSERT(!r.aTrace[i].f.fig.bWall);
        ASSERT_EQ(0, vt__fig_at(&r.aTrace[i].f, r.aTrace[i].f.t0)); /* each from its own first event */
        for (int k = 0; k < r.aTrace[i].f.nNote; k++)
            bNote |= strstr(r.aTrace[i].f.azNote[k], "its times count from its own first event") != NULL;
        ASSERT(bNote);
    }
    vt__result_free(&r);
    tg_cleanup();
}

/* A process of pid zPid without clock anchors (an older tracer's, or an import's trace) whose first event is at
 * `start` ns on its own clock, with the same kept growth as build_process. */
static void build_unanchored(const char *zPath, const char *zPid, int64_t start)
{
    struct tg *g = tg_open(zPath);
    int64_t s;
    ASSERT(g);
    tg_meta(g, "pid", zPid);
    tg_device(g, 0, "Test GPU", 16 * GiB);
    s = tg_stack(g, "train.py", 77, "train_one_epoch");
    for (int i = 0; i < 8; i++) tg_alloc(g, start + i * 100 * MS, 0, 3, KEPT + i * 0x10000000LL, 64 * MiB + 4096, s);
    ASSERT_EQ(0, tg_close(g));
}

/*
 * Where not every trace has clock anchors, the traces stay on their own clocks: those that meet there (one run's
 * processes, on one machine's clock) share its origin, and one that lies a year from the others (another run) counts
 * from its own first event, said, instead of printing its times as a year and more.
 */
TEST(unanchored_runs_apart_count_from_their_own_start)
{
    char zA[512], zB[512], zC[512];
    const char *az[2];
    struct vt_result r;
    const int64_t year = 365LL * 86400 * 1000000000LL;
    snprintf(zA, sizeof zA, "%s", tg_path("a.db"));
    snprintf(zB, sizeof zB, "%s", tg_path("b.db"));
    snprintf(zC, sizeof zC, "%s", tg_path("c.db"));
    build_process(zA, "4242", 1700000000);          /* anchored */
    build_unanchored(zB, "4243", 100 * MS + year);   /* a year later on its own clock */
    build_unanchored(zC, "4244", 100 * MS + 30 * 1000000000LL); /* 30 s later: the same run */
    az[0] = zA;
    az[1] = zB;
    run(az, 2, &r);
    ASSERT_EQ(2, r.nTrace);
    for (int i = 0; i < 2; i++) {
        int bNote = 0;
        ASSERT_EQ(0, vt__fig_at(&r.aTrace[i].f, r.aTrace[i].f.t0)); /* each from its own first event */
        for (int k = 0; k < r.aTrace[i].f.nNote; k++)
            bNote |= strstr(r.aTrace[i].f.azNote[k], "its times count from its own first event") != NULL;
        ASSERT(bNote);
    }
    vt__result_free(&r);
    az[1] = zC;
    run(az, 2, &r);
    ASSERT_EQ(2, r.nTrace);
    ASSERT_EQ(30 * 1000000000LL, vt__fig_at(&r.aTrace[1].f, r.aTrace[1].f.t0)); /* one clock: the same run */
    for (int k = 0; k < r.aTrace[1].f.nNote; k++) ASSERT(!strstr(r.aTrace[1].f.azNote[k], "its own first event"));
    vt__result_free(&r);
    tg_cleanup();
}

VT_TEST_LIST(T(generated_code_is_one_site_at_the_callers_line) T(findings_grouped_across_ranks) T(rank_list_wording)
             T(text_first_screen) T(native_only_stacks_named_by_node_or_operator) T(grouping_twice_is_grouping_once)
             T(grouped_findings_drawn_and_saved_per_process) T(same_process_twice_is_one_process)
             T(runs_apart_count_from_their_own_start)
             T(unanchored_runs_apart_count_from_their_own_start))
