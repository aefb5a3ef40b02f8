/* Control marks through NVTX: each NVTX instance handed to CUPTI behind a proxy that keeps nvtxMarkA for the tracer. */
#include "nvtxctl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define MAX_CORE_SLOTS 64 /* NVTX 3 has 12 core functions; a table this size leaves room for growth */

typedef void (*mark_fn)(const char *);

/* One attached instance: its own tables, the proxy CUPTI sees, the slot CUPTI writes its nvtxMarkA into. */
struct inst {
    vt__nvtx_get_table xGet;                 /* the instance's export-table function */
    const vt__nvtx_callbacks *pReal;         /* its callbacks table */
    vt__nvtx_callbacks proxy;                /* what CUPTI gets instead */
    vt__nvtx_fn *apCore[MAX_CORE_SLOTS + 1]; /* the instance's core slots, nvtxMarkA's replaced */
    unsigned nCore;
    _Atomic(vt__nvtx_fn) xCuptiMarkA;        /* CUPTI's nvtxMarkA handler (NULL: none yet) */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct inst g_aInst[VT_NVTXCTL_MAX_INSTANCES];
static int g_nInst;
static void (*_Atomic g_xControl)(const char *);

/* The instance's nvtxMarkA: a control mark to the tracer, any other to CUPTI's handler. */
static void mark(struct inst *p, const char *zMsg)
{
    static const size_t nPrefix = sizeof VT_NVTXCTL_PREFIX - 1;
    vt__nvtx_fn x;
    if (zMsg && strncmp(zMsg, VT_NVTXCTL_PREFIX, nPrefix) == 0) {
        void (*xControl)(const char *) = atomic_load(&g_xControl);
        if (xControl) xControl(zMsg + nPrefix);
        return;
    }
    x = atomic_load_explicit(&p->xCuptiMarkA, memory_order_acquire);
    if (x) ((mark_fn)x)(zMsg);
}

/* The proxy's GetModuleFunctionTable: the core table with nvtxMarkA's slot ours, the others the instance's. */
static int module_table(struct inst *p, int module, vt__nvtx_table *pOut, unsigned int *pSize)
{
    if (module != VT_NVTX_CB_MODULE_CORE) return p->pReal->GetModuleFunctionTable(module, pOut, pSize);
    if (pOut) *pOut = p->apCore;
    if (pSize) *pSize = p->nCore;
    return 1;
}

/* The proxy's export-table function: our callbacks table, the instance's other tables. */
static const void *export_table(struct inst *p, uint32_t id)
{
    return id == VT_NVTX_ETID_CALLBACKS ? (const void *)&p->proxy : p->xGet(id);
}

/* One set of entry points per instance slot: NVTX and CUPTI call plain functions, without a context. */
#define INSTANCE(i)                                                                                      \
    static void mark_##i(const char *z) { mark(&g_aInst[i], z); }                                        \
    static int module_table_##i(int m, vt__nvtx_table *pOut, unsigned int *pSize)                        \
    {                                                                                                    \
        return module_table(&g_aInst[i], m, pOut, pSize);                                               \
    }                                                                                                    \
    static const void *export_table_##i(uint32_t id) { return export_table(&g_aInst[i], id); }
INSTANCE(0)
INSTANCE(1)
INSTANCE(2)
INSTANCE(3)
INSTANCE(4)
INSTANCE(5)
INSTANCE(6)
INSTANCE(7)
#undef INSTANCE

static const struct {
    mark_fn xMark;
    int (*xModuleTable)(int, vt__nvtx_table *, unsigned int *);
    vt__nvtx_get_table xExport;
} aEntry[VT_NVTXCTL_MAX_INSTANCES] = {
#define ENTRY(i) {mark_##i, module_table_##i, export_table_##i}
    ENTRY(0), ENTRY(1), ENTRY(2), ENTRY(3), ENTRY(4), ENTRY(5), ENTRY(6), ENTRY(7),
#undef ENTRY
};

/*
 * Prepare instance slot i for the instance behind xGet: its core table copied
 * with nvtxMarkA's slot replaced. Returns the real nvtxMarkA slot, or NULL
 * when the instance cannot be proxied (no callbacks table, no core table, or
 * one larger than MAX_CORE_SLOTS).
 */
static vt__nvtx_fn *prepare(int i, vt__nvtx_get_table xGet)
{
    struct inst *p = &g_aInst[i];
    vt__nvtx_table aReal = NULL;
    unsigned int n = 0;
    p->xGet = xGet;
    p->pReal = xGet(VT_NVTX_ETID_CALLBACKS);
    if (!p->pReal || p->pReal->struct_size < sizeof(vt__nvtx_callbacks) || !p->pReal->GetModuleFunctionTable ||
        !p->pReal->GetModuleFunctionTable(VT_NVTX_CB_MODULE_CORE, &aReal, &n) || !aReal ||
        n < VT_NVTX_CBID_CORE_MarkA || n > MAX_CORE_SLOTS || !aReal[VT_NVTX_CBID_CORE_MarkA])
        return NULL;
    memcpy(p->apCore, aReal, (n + 1) * sizeof aReal[0]);
    p->apCore[VT_NVTX_CBID_CORE_MarkA] = (vt__nvtx_fn *)&p->xCuptiMarkA;
    p->nCore = n;
    p->proxy.struct_size = sizeof p->proxy;
    p->proxy.GetModuleFunctionTable = aEntry[i].xModuleTable;
    atomic_store(&p->xCuptiMarkA, NULL);
    return aReal[VT_NVTX_CBID_CORE_MarkA];
}

int vt__nvtxctl_attach(const void *pGetExportTable, int (*xInit)(const void *pGetExportTable),
                       void (*xControl)(const char *zMessage))
{
    vt__nvtx_get_table xGet;
    vt__nvtx_fn *pSlot = NULL;
    int i = -1, ok;
    memcpy(&xGet, &pGetExportTable, sizeof xGet); /* NVTX passes a function as const void * */
    atomic_store(&g_xControl, xControl);
    pthread_mutex_lock(&g_mu);
    if (xGet && g_nInst < VT_NVTXCTL_MAX_INSTANCES && (pSlot = prepare(g_nInst, xGet)) != NULL) i = g_nInst++;
    pthread_mutex_unlock(&g_mu);
    if (i < 0) return xInit(pGetExportTable); /* no channel for this instance: CUPTI gets it as it is */
    {
        const void *pProxy;
        vt__nvtx_get_table xProxy = aEntry[i].xExport;
        memcpy(&pProxy, &xProxy, sizeof pProxy);
        ok = xInit(pProxy);
    }
    /* NVTX reads its slots only after the injection returned: no call can race this store */
    if (ok) *pSlot = (vt__nvtx_fn)aEntry[i].xMark;
    return ok;
}
