/* Tests for one finding per root cause: generated code as one site at the caller's line, findings grouped across ranks, the text report's first screen. */
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "tracegen.h"
#include "vt_test.h"

#define WEIGHTS 0x100000000LL
#define KEPT 0x300000000LL

static void run(const char **azPath, int nPath, struct vt_result *r)
{
    struct vt_opts o;
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

VT_TEST_LIST(T(generated_code_is_one_site_at_the_callers_line))
