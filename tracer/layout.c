/* CUPTI activity record layouts per CUPTI release (offsets of the fields read) and the reader into version-neutral form. */
#include "layout.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cupti_activity.h>
#include <cupti_version.h>

/*
 * The record structs, each with the offset and width of every field the tracer
 * reads. CUpti_Activity*10/Memcpy6/MemcpyPtoP4/Memset4/Memory4/MemoryPool3/
 * Marker2/Synchronization2/Overhead3/Device5 are those of the CUDA 13.0 headers
 * the tracer is built with; Kernel11/12/13, Memcpy7, Memset5 and Device6 come
 * from the headers of CUDA 13.1 to 13.4 (provenance: docs/tracer.md,
 * "Versions"). tests/test_layout.c checks every entry against the built-with
 * header and against tests/data/cupti_layouts.tsv. A struct's layout never
 * changes: NVIDIA adds a new numbered struct instead.
 */
static const struct vt__recfmt aStruct[] = {
#include "layout_table.inc"
};

/*
 * The record struct of each kind in each CUPTI release the table lists: the
 * CUPTI API versions first..last (xxyyzz: CUDA xx.yy, CUPTI update zz) use
 * the structs named. The updates listed are those whose release notes were
 * read: none changed a record the tracer reads.
 */
static const struct {
    uint32_t first, last;
    const char *zName;
    const char *azStruct[VT_LK_N];
} aRelease[] = {
    {130000, 130001, "13.0",
     {"CUpti_ActivityKernel10", "CUpti_ActivityMemcpy6", "CUpti_ActivityMemcpyPtoP4", "CUpti_ActivityMemset4",
      "CUpti_ActivityMemory4", "CUpti_ActivityMemoryPool3", "CUpti_ActivityMarker2",
      "CUpti_ActivitySynchronization2", "CUpti_ActivityOverhead3", "CUpti_ActivityDevice5"}},
    {130100, 130101, "13.1",
     {"CUpti_ActivityKernel11", "CUpti_ActivityMemcpy6", "CUpti_ActivityMemcpyPtoP4", "CUpti_ActivityMemset4",
      "CUpti_ActivityMemory4", "CUpti_ActivityMemoryPool3", "CUpti_ActivityMarker2",
      "CUpti_ActivitySynchronization2", "CUpti_ActivityOverhead3", "CUpti_ActivityDevice5"}},
    {130200, 130201, "13.2",
     {"CUpti_ActivityKernel11", "CUpti_ActivityMemcpy6", "CUpti_ActivityMemcpyPtoP4", "CUpti_ActivityMemset4",
      "CUpti_ActivityMemory4", "CUpti_ActivityMemoryPool3", "CUpti_ActivityMarker2",
      "CUpti_ActivitySynchronization2", "CUpti_ActivityOverhead3", "CUpti_ActivityDevice6"}},
    {130300, 130301, "13.3",
     {"CUpti_ActivityKernel12", "CUpti_ActivityMemcpy6", "CUpti_ActivityMemcpyPtoP4", "CUpti_ActivityMemset4",
      "CUpti_ActivityMemory4", "CUpti_ActivityMemoryPool3", "CUpti_ActivityMarker2",
      "CUpti_ActivitySynchronization2", "CUpti_ActivityOverhead3", "CUpti_ActivityDevice6"}},
    {130400, 130401, "13.4",
     {"CUpti_ActivityKernel13", "CUpti_ActivityMemcpy7", "CUpti_ActivityMemcpyPtoP4", "CUpti_ActivityMemset5",
      "CUpti_ActivityMemory4", "CUpti_ActivityMemoryPool3", "CUpti_ActivityMarker2",
      "CUpti_ActivitySynchronization2", "CUpti_ActivityOverhead3", "CUpti_ActivityDevice6"}},
};
#define N_RELEASE (sizeof aRelease / sizeof aRelease[0])

/* CUPTI's name of each kind (the first, for KERNEL, is the one the tracer enables). */
static const char *const azKindName[VT_LK_N] = {"CONCURRENT_KERNEL", "MEMCPY", "MEMCPY2", "MEMSET", "MEMORY2",
                                                "MEMORY_POOL", "MARKER", "SYNCHRONIZATION", "OVERHEAD", "DEVICE"};

const struct vt__recfmt *vt__layout_structs(size_t *pN)
{
    *pN = sizeof aStruct / sizeof aStruct[0];
    return aStruct;
}

static void plans_ready(void);

/* The table's struct named z, or NULL. */
static const struct vt__recfmt *find_struct(const char *z)
{
    size_t i;
    for (i = 0; i < sizeof aStruct / sizeof aStruct[0]; i++)
        if (!strcmp(aStruct[i].zStruct, z)) return &aStruct[i];
    return NULL;
}

uint32_t vt__layout_newest(const char **pzName)
{
    if (pzName) *pzName = aRelease[N_RELEASE - 1].zName;
    return aRelease[N_RELEASE - 1].last;
}

void vt__layout_select(uint32_t v, struct vt__layout *pOut)
{
    size_t i, k;
    plans_ready(); /* vt__layout_read's */
    memset(pOut, 0, sizeof *pOut);
    pOut->version = v;
    if (v < aRelease[0].first) {
        pOut->status = VT_LAYOUT_OLDER;
        return;
    }
    for (i = 0; i < N_RELEASE; i++) {
        if (v >= aRelease[i].first && v <= aRelease[i].last) {
            pOut->status = VT_LAYOUT_KNOWN;
            pOut->zRelease = aRelease[i].zName;
            for (k = 0; k < VT_LK_N; k++) pOut->aFmt[k] = find_struct(aRelease[i].azStruct[k]);
            return;
        }
        if (i + 1 < N_RELEASE && v > aRelease[i].last && v < aRelease[i + 1].first) {
            /* an update the table does not list: a kind whose struct is the same before and
             * after it cannot differ in between (struct numbers only grow) */
            pOut->status = VT_LAYOUT_GAP;
            for (k = 0; k < VT_LK_N; k++)
                if (!strcmp(aRelease[i].azStruct[k], aRelease[i + 1].azStruct[k]))
                    pOut->aFmt[k] = find_struct(aRelease[i].azStruct[k]);
            return;
        }
    }
    pOut->status = VT_LAYOUT_NEWER; /* every kind reduced: nothing is read at a guessed offset */
}

static struct vt__layout g_builtin;

/* Fill g_builtin (once). */
static void init_builtin(void)
{
    vt__layout_select(CUPTI_API_VERSION, &g_builtin);
}

const struct vt__layout *vt__layout_builtin(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_builtin);
    return &g_builtin;
}

static const struct vt__layout *g_active;

const struct vt__layout *vt__layout_active(void)
{
    return g_active ? g_active : vt__layout_builtin();
}

void vt__layout_use(const struct vt__layout *l)
{
    g_active = l;
}

void vt__layout_reduced_names(const struct vt__layout *l, char *zOut, size_t nOut)
{
    size_t k, n = 0;
    if (nOut) zOut[0] = '\0';
    for (k = 0; k < VT_LK_N && n < nOut; k++)
        if (!l->aFmt[k]) n += (size_t)snprintf(zOut + n, nOut - n, "%s%s", n ? "," : "", azKindName[k]);
}

enum vt__lkind vt__layout_kind(uint32_t cuptiKind)
{
    switch (cuptiKind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return VT_LK_KERNEL;
    case CUPTI_ACTIVITY_KIND_MEMCPY: return VT_LK_MEMCPY;
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return VT_LK_MEMCPY_P2P;
    case CUPTI_ACTIVITY_KIND_MEMSET: return VT_LK_MEMSET;
    case CUPTI_ACTIVITY_KIND_MEMORY2: return VT_LK_MEMORY;
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return VT_LK_POOL;
    case CUPTI_ACTIVITY_KIND_MARKER: return VT_LK_MARKER;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return VT_LK_SYNC;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return VT_LK_OVERHEAD;
    case CUPTI_ACTIVITY_KIND_DEVICE: return VT_LK_DEVICE;
    default: return VT_LK_N;
    }
}

/* One field a record struct has: where vt__act keeps it, and its offset. */
struct fldread {
    uint16_t fld, off;
};

/*
 * The fields each struct of aStruct has (width not 0), by width: 8-byte ones first, then 4, 2
 * and 1 (an[0..3] of each), what vt__layout_read reads; the uuid's offset, or -1.
 */
static struct {
    unsigned an[4];
    int uuidOff;
    struct fldread a[VT_F_N];
} aPlan[sizeof aStruct / sizeof aStruct[0]];

/* Fill aPlan (once: plans_ready). */
static void init_plans(void)
{
    static const uint8_t aWidth[4] = {8, 4, 2, 1};
    for (size_t s = 0; s < sizeof aStruct / sizeof aStruct[0]; s++) {
        unsigned n = 0;
        aPlan[s].uuidOff = -1;
        for (int w = 0; w < 4; w++)
            for (int i = 0; i < VT_F_N; i++)
                if (aStruct[s].a[i].width == aWidth[w]) {
                    aPlan[s].a[n++] = (struct fldread){(uint16_t)i, aStruct[s].a[i].off};
                    aPlan[s].an[w]++;
                }
        if (aStruct[s].a[VT_F_UUID].width == 16) aPlan[s].uuidOff = aStruct[s].a[VT_F_UUID].off;
    }
}

/*
 * aPlan filled. vt__layout_select calls it too, so a tracer has its plans when it selects its
 * layouts at start, before its writer thread reads a record or the host forks.
 */
static void plans_ready(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_plans);
}

int vt__layout_read(const struct vt__layout *l, const void *pRec, struct vt__act *pOut)
{
    const unsigned char *p = pRec;
    const struct fldread *q, *e;
    const struct vt__recfmt *f;
    uint32_t kind;
    size_t s;
    memcpy(&kind, p, sizeof kind); /* CUpti_Activity.kind: offset 0 in every record */
    memset(pOut, 0, sizeof *pOut);
    pOut->cuptiKind = kind;
    pOut->kind = vt__layout_kind(kind);
    if (pOut->kind == VT_LK_N) return 1;
    f = l->aFmt[pOut->kind];
    if (!f) return 2;
    plans_ready();
    /* only the fields the struct has (a fifth to a third of VT_F_N), a loop per width: the others stay 0 */
    s = (size_t)(f - aStruct);
    q = aPlan[s].a;
    for (e = q + aPlan[s].an[0]; q < e; q++) memcpy(&pOut->v[q->fld], p + q->off, 8);
    for (e = q + aPlan[s].an[1]; q < e; q++) {
        uint32_t x;
        memcpy(&x, p + q->off, 4);
        pOut->v[q->fld] = x;
    }
    for (e = q + aPlan[s].an[2]; q < e; q++) {
        uint16_t x;
        memcpy(&x, p + q->off, 2);
        pOut->v[q->fld] = x;
    }
    for (e = q + aPlan[s].an[3]; q < e; q++) pOut->v[q->fld] = p[q->off];
    if (aPlan[s].uuidOff >= 0) memcpy(pOut->uuid, p + aPlan[s].uuidOff, 16);
    return 0;
}
