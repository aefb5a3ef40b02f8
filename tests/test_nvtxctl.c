/* Tests of the NVTX control channel: control marks reach the tracer, every other NVTX call reaches CUPTI. */
#include "nvtxctl.h"

#include <stddef.h>
#include <string.h>

#define NVTX_NO_IMPL /* the types only: this program is no NVTX instance */
#include <nvtx3/nvToolsExt.h>

#include "vt_test.h"

/* The declarations nvtxctl.h makes of NVTX's export-table types are NVTX's. */
TEST(types_match_nvtx)
{
    ASSERT_EQ(sizeof(NvtxExportTableCallbacks), sizeof(vt__nvtx_callbacks));
    ASSERT_EQ(offsetof(NvtxExportTableCallbacks, struct_size), offsetof(vt__nvtx_callbacks, struct_size));
    ASSERT_EQ(offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable),
              offsetof(vt__nvtx_callbacks, GetModuleFunctionTable));
    ASSERT_EQ(sizeof(NvtxCallbackModule), sizeof(int));
    ASSERT_EQ(sizeof(NvtxFunctionTable), sizeof(vt__nvtx_table));
    ASSERT_EQ(NVTX_ETID_CALLBACKS, VT_NVTX_ETID_CALLBACKS);
    ASSERT_EQ(NVTX_CB_MODULE_CORE, VT_NVTX_CB_MODULE_CORE);
    ASSERT_EQ(NVTX_CBID_CORE_MarkA, VT_NVTX_CBID_CORE_MarkA);
    {
        /* the function types, as NVTX and its injections call them */
        NvtxGetExportTableFunc_t xGet = NULL;
        vt__nvtx_get_table xOurs = xGet;
        int (*xGmt)(NvtxCallbackModule, NvtxFunctionTable *, unsigned int *) = NULL;
        (void)xOurs;
        (void)xGmt;
    }
}

/* ---- fake NVTX instances: each its own core table of slots, as nvtxImpl.h lays them out ---- */

#define N_CORE 12
#define N_FAKE 10
struct fake {
    vt__nvtx_fn aSlot[N_CORE + 1];       /* the instance's function pointers */
    vt__nvtx_fn *apCore[N_CORE + 1];     /* its core table: pointers to them */
    vt__nvtx_fn aCudaSlot[4], *apCuda[4]; /* another module's table */
    vt__nvtx_callbacks cb;
    int bNoCallbacks;                     /* the instance offers no callbacks table */
};
static struct fake g_aFake[N_FAKE];

static int fake_gmt(struct fake *p, int module, vt__nvtx_table *pOut, unsigned int *pSize)
{
    if (module == NVTX_CB_MODULE_CORE) {
        *pOut = p->apCore;
        if (pSize) *pSize = N_CORE;
        return 1;
    }
    if (module == NVTX_CB_MODULE_CUDA) {
        *pOut = p->apCuda;
        if (pSize) *pSize = 3;
        return 1;
    }
    return 0;
}

static const void *fake_get(struct fake *p, uint32_t id)
{
    return id == NVTX_ETID_CALLBACKS && !p->bNoCallbacks ? (const void *)&p->cb : NULL;
}

#define FAKE(i)                                                                                            \
    static int fake_gmt_##i(int m, vt__nvtx_table *pOut, unsigned int *pSize) { return fake_gmt(&g_aFake[i], m, pOut, pSize); } \
    static const void *fake_get_##i(uint32_t id) { return fake_get(&g_aFake[i], id); }
FAKE(0)
FAKE(1)
FAKE(2)
FAKE(3)
FAKE(4)
FAKE(5)
FAKE(6)
FAKE(7)
FAKE(8)
FAKE(9)
#undef FAKE
static const vt__nvtx_get_table aFakeGet[N_FAKE] = {fake_get_0, fake_get_1, fake_get_2, fake_get_3, fake_get_4,
                                                    fake_get_5, fake_get_6, fake_get_7, fake_get_8, fake_get_9};
static int (*const aFakeGmt[N_FAKE])(int, vt__nvtx_table *, unsigned int *) = {
    fake_gmt_0, fake_gmt_1, fake_gmt_2, fake_gmt_3, fake_gmt_4, fake_gmt_5, fake_gmt_6, fake_gmt_7, fake_gmt_8,
    fake_gmt_9};

/* NVTX's own "not initialized yet" stub every slot starts with. */
static void nvtx_stub(void)
{
}

static void fake_init(int i)
{
    struct fake *p = &g_aFake[i];
    memset(p, 0, sizeof *p);
    for (int k = 0; k <= N_CORE; k++) {
        p->aSlot[k] = nvtx_stub;
        p->apCore[k] = k ? &p->aSlot[k] : NULL;
    }
    for (int k = 0; k < 4; k++) p->apCuda[k] = k ? &p->aCudaSlot[k] : NULL;
    p->cb.struct_size = sizeof p->cb;
    p->cb.GetModuleFunctionTable = aFakeGmt[i];
}

static const void *as_ptr(vt__nvtx_get_table x)
{
    const void *p;
    memcpy(&p, &x, sizeof p);
    return p;
}

/* Call instance i's nvtxMarkA as its NVTX implementation does: through its slot. */
static void mark_a(int i, const char *z)
{
    ((void (*)(const char *))g_aFake[i].aSlot[NVTX_CBID_CORE_MarkA])(z);
}

/* ---- a fake CUPTI: keeps the export-table function it is given, attaches later ---- */

static vt__nvtx_get_table g_xCuptiGot;
static int g_cuptiAnswer = 1;
static char g_zCuptiMark[128], g_zControl[128];
static int g_nCuptiMarks, g_nControls, g_nPush;

static void cupti_mark_a(const char *z)
{
    g_nCuptiMarks++;
    snprintf(g_zCuptiMark, sizeof g_zCuptiMark, "%s", z ? z : "(null)");
}

static void cupti_push_a(const char *z)
{
    (void)z;
    g_nPush++;
}

static void control(const char *z)
{
    g_nControls++;
    snprintf(g_zControl, sizeof g_zControl, "%s", z);
}

/* CUPTI's InitializeInjectionNvtx2 as libcupti 13 behaves without a device: accept, write nothing yet. */
static int cupti_init(const void *pGet)
{
    memcpy(&g_xCuptiGot, &pGet, sizeof g_xCuptiGot);
    return g_cuptiAnswer;
}

/* CUPTI attaching later: it writes its handlers into the tables the instance (as it sees it) gives. */
static void cupti_attach(void)
{
    const vt__nvtx_callbacks *pCb = g_xCuptiGot(NVTX_ETID_CALLBACKS);
    vt__nvtx_table t = NULL, tCuda = NULL;
    unsigned int n = 0;
    ASSERT(pCb != NULL);
    ASSERT(pCb->struct_size >= sizeof *pCb);
    ASSERT_EQ(1, pCb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n));
    ASSERT_EQ(N_CORE, n);
    *t[NVTX_CBID_CORE_MarkA] = (vt__nvtx_fn)cupti_mark_a;
    *t[NVTX_CBID_CORE_RangePushA] = (vt__nvtx_fn)cupti_push_a;
    ASSERT_EQ(1, pCb->GetModuleFunctionTable(NVTX_CB_MODULE_CUDA, &tCuda, &n));
    ASSERT_EQ(3, n);
    *tCuda[1] = (vt__nvtx_fn)cupti_push_a;
    ASSERT(g_xCuptiGot(NVTX_ETID_VERSIONINFO) == NULL); /* the instance's other tables, as they are */
}

/*
 * A control mark reaches the tracer (prefix stripped) and never CUPTI, before and
 * after CUPTI attaches; every other mark reaches CUPTI once it attached (nothing,
 * no crash, before); CUPTI's other handlers land in the instance's own slots.
 */
TEST(control_marks_to_tracer_other_calls_to_cupti)
{
    fake_init(0);
    ASSERT_EQ(1, vt__nvtxctl_attach(as_ptr(aFakeGet[0]), cupti_init, control));
    ASSERT(g_xCuptiGot != NULL);
    ASSERT(g_xCuptiGot != aFakeGet[0]); /* CUPTI sees the proxy */
    mark_a(0, "a mark before CUPTI attached");
    ASSERT_EQ(0, g_nCuptiMarks);
    mark_a(0, VT_NVTXCTL_PREFIX "lend:torch.profiler");
    ASSERT_EQ(1, g_nControls);
    ASSERT_STREQ("lend:torch.profiler", g_zControl);

    cupti_attach();
    ASSERT(g_aFake[0].aSlot[NVTX_CBID_CORE_RangePushA] == (vt__nvtx_fn)cupti_push_a);
    ASSERT(g_aFake[0].aCudaSlot[1] == (vt__nvtx_fn)cupti_push_a);
    ASSERT(g_aFake[0].aSlot[NVTX_CBID_CORE_MarkA] != (vt__nvtx_fn)cupti_mark_a); /* still the tracer's */
    mark_a(0, "epoch 3");
    ASSERT_EQ(1, g_nCuptiMarks);
    ASSERT_STREQ("epoch 3", g_zCuptiMark);
    mark_a(0, NULL); /* forwarded as it came */
    ASSERT_EQ(2, g_nCuptiMarks);
    mark_a(0, VT_NVTXCTL_PREFIX "return:torch.profiler");
    ASSERT_EQ(2, g_nControls);
    ASSERT_STREQ("return:torch.profiler", g_zControl);
    ASSERT_EQ(2, g_nCuptiMarks);
    mark_a(0, "vramtrace-cupt"); /* a prefix of the prefix is a mark like any other */
    ASSERT_EQ(3, g_nCuptiMarks);
    ASSERT_EQ(2, g_nControls);
}

/* CUPTI refuses the instance: nothing of it is touched, and the refusal is what NVTX gets. */
TEST(cupti_refuses)
{
    fake_init(0);
    g_cuptiAnswer = 0;
    ASSERT_EQ(0, vt__nvtxctl_attach(as_ptr(aFakeGet[0]), cupti_init, control));
    ASSERT(g_aFake[0].aSlot[NVTX_CBID_CORE_MarkA] == nvtx_stub);
}

/*
 * Every instance gets the channel, each its own CUPTI slot, up to
 * VT_NVTXCTL_MAX_INSTANCES; later instances, and one without a callbacks
 * table, go to CUPTI as they are (their nvtxMarkA is CUPTI's alone).
 */
TEST(instances)
{
    int i;
    for (i = 0; i < N_FAKE; i++) fake_init(i);
    g_aFake[0].bNoCallbacks = 1;
    ASSERT_EQ(1, vt__nvtxctl_attach(as_ptr(aFakeGet[0]), cupti_init, control));
    ASSERT(g_xCuptiGot == aFakeGet[0]);
    ASSERT(g_aFake[0].aSlot[NVTX_CBID_CORE_MarkA] == nvtx_stub);
    for (i = 1; i < N_FAKE; i++) {
        ASSERT_EQ(1, vt__nvtxctl_attach(as_ptr(aFakeGet[i]), cupti_init, control));
        if (i <= VT_NVTXCTL_MAX_INSTANCES) {
            ASSERT(g_xCuptiGot != aFakeGet[i]);
            cupti_attach();
            mark_a(i, VT_NVTXCTL_PREFIX "lent:x");
            ASSERT_EQ(i, g_nControls);
            mark_a(i, "job");
            ASSERT_EQ(i, g_nCuptiMarks);
        } else {
            ASSERT(g_xCuptiGot == aFakeGet[i]);
            ASSERT(g_aFake[i].aSlot[NVTX_CBID_CORE_MarkA] == nvtx_stub);
        }
    }
}

VT_TEST_LIST(T(types_match_nvtx) T(control_marks_to_tracer_other_calls_to_cupti) T(cupti_refuses) T(instances))
