/* Kernel parameter blocks -> live allocations: parameter sizes cached per kernel, words looked up. */
#include "kparams.h"

#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct param_entry {
    uintptr_t h; /* kernel handle, 0 = empty slot */
    int kind;    /* enum vt__kp_handle */
    int nParam;
    uint32_t aSize[VT_KPARAMS_MAX];
};

struct vt__kparams {
    struct vt__kparams_config cfg;
    pthread_mutex_t mu; /* guards aEntry and gen */
    uint64_t gen;       /* bumped by vt__kparams_forget: a layout asked before it is not cached */
    struct param_entry aEntry[VT_KPARAMS_SLOTS];
};

struct vt__kparams *vt__kparams_open(const struct vt__kparams_config *cfg)
{
    struct vt__kparams *kp;
    if (!cfg->ivl) return NULL;
    kp = calloc(1, sizeof *kp);
    if (!kp) return NULL;
    kp->cfg = *cfg;
    pthread_mutex_init(&kp->mu, NULL);
    return kp;
}

void vt__kparams_close(struct vt__kparams *kp)
{
    if (!kp) return;
    pthread_mutex_destroy(&kp->mu);
    free(kp);
}

/* Ask xInfo for the sizes of h's parameters, index by index. Returns how many (<= VT_KPARAMS_MAX). */
static int query_sizes(vt__param_info_fn xInfo, const void *h, size_t *aSize)
{
    size_t i, off, sz;
    int n = 0;
    for (i = 0; xInfo && i < VT_KPARAMS_MAX; i++) {
        if (xInfo(h, i, &off, &sz) != 0) break;
        aSize[n++] = sz;
    }
    return n;
}

int vt__kparams_sizes(struct vt__kparams *kp, int kind, const void *h, size_t *aSize)
{
    size_t iSlot = (size_t)(((uintptr_t)h >> 4) * 0x9e3779b97f4a7c15ull) % VT_KPARAMS_SLOTS;
    size_t i, k;
    int n = 0;
    uint64_t gen;

    pthread_mutex_lock(&kp->mu);
    gen = kp->gen;
    for (k = 0; k < 8; k++) {
        struct param_entry *e = &kp->aEntry[(iSlot + k) % VT_KPARAMS_SLOTS];
        if (e->h != (uintptr_t)h || e->kind != kind) continue;
        for (i = 0; i < (size_t)e->nParam; i++) aSize[i] = e->aSize[i];
        n = e->nParam;
        pthread_mutex_unlock(&kp->mu);
        return n;
    }
    pthread_mutex_unlock(&kp->mu);

    if (kind == VT_KP_STUB) {
        n = query_sizes(kp->cfg.xStubParamInfo, h, aSize);
    } else {
        n = query_sizes(kp->cfg.xFuncParamInfo, h, aSize);
        if (n == 0) n = query_sizes(kp->cfg.xKernelParamInfo, h, aSize);
    }

    pthread_mutex_lock(&kp->mu);
    for (k = 0; k < 8 && kp->gen == gen; k++) { /* a module unloaded meanwhile: not cached */
        struct param_entry *e = &kp->aEntry[(iSlot + k) % VT_KPARAMS_SLOTS];
        if (e->h != 0 && (e->h != (uintptr_t)h || e->kind != kind)) continue;
        e->h = (uintptr_t)h;
        e->kind = kind;
        e->nParam = n;
        for (i = 0; i < (size_t)n; i++) e->aSize[i] = (uint32_t)aSize[i];
        break;
    }
    pthread_mutex_unlock(&kp->mu);
    return n;
}

void vt__kparams_forget(struct vt__kparams *kp)
{
    if (!kp) return;
    pthread_mutex_lock(&kp->mu);
    memset(kp->aEntry, 0, sizeof kp->aEntry);
    kp->gen++;
    pthread_mutex_unlock(&kp->mu);
}

/* The argument buffer of a launch made through `extra` (CU_LAUNCH_PARAM_BUFFER_*), or NULL. */
static const void *extra_buffer(void *const *extra, size_t *pSize)
{
    const void *pBuf = NULL;
    int i;
    *pSize = 0;
    for (i = 0; extra && i < 32 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) pBuf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1]) *pSize = *(size_t *)extra[i + 1];
    }
    return *pSize ? pBuf : NULL;
}

int vt__kparams_scan(struct vt__kparams *kp, int kind, const void *h, void *const *apParam,
                     void *const *extra, uint64_t *aBase, int nMax)
{
    size_t aSize[VT_KPARAMS_MAX];
    const void *pBlock;
    size_t nBlock;
    int nParam;

    if (apParam) {
        nParam = vt__kparams_sizes(kp, kind, h, aSize);
        return nParam > 0 ? vt__ivl_scan_params(kp->cfg.ivl, apParam, aSize, nParam, aBase, nMax) : -1;
    }
    if ((pBlock = extra_buffer(extra, &nBlock)) != NULL)
        return vt__ivl_scan(kp->cfg.ivl, pBlock, nBlock, aBase, nMax);
    return -1;
}
