/* Return addresses -> module, module-relative address, exported name; modules -> build id, size, mtime. */
#include "modres.h"

#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct pcslot {
    uint64_t pc;   /* 0: empty */
    uint64_t rel;
    char *zFunction;
    int iModule;   /* -1: no module */
};

struct vt__modres {
    struct pcslot *aSlot;
    size_t mask;
    int nCached, maxPcs;
    struct vt__modinfo *aModule[VT_MODRES_MAX_MODULES];
    int nModule;
    char zExe[PATH_MAX]; /* the main program's path ("" if unknown) */
};

struct vt__modres *vt__modres_open(int max_pcs)
{
    struct vt__modres *m = calloc(1, sizeof *m);
    size_t nSlot = 16;
    ssize_t n;
    if (!m) return NULL;
    m->maxPcs = max_pcs > 0 ? max_pcs : 65536;
    while (nSlot < 2 * (size_t)m->maxPcs) nSlot *= 2;
    m->aSlot = calloc(nSlot, sizeof *m->aSlot);
    if (!m->aSlot) {
        free(m);
        return NULL;
    }
    m->mask = nSlot - 1;
    n = readlink("/proc/self/exe", m->zExe, sizeof m->zExe - 1);
    m->zExe[n > 0 ? n : 0] = '\0';
    return m;
}

void vt__modres_close(struct vt__modres *m)
{
    size_t i;
    int k;
    if (!m) return;
    for (i = 0; i <= m->mask; i++) free(m->aSlot[i].zFunction);
    for (k = 0; k < m->nModule; k++) {
        free(m->aModule[k]->zPath);
        free(m->aModule[k]);
    }
    free(m->aSlot);
    free(m);
}

/* What find_build_id looks for: the image loaded at base; the id found. */
struct idsearch {
    uintptr_t base;
    char *zHex;
    size_t nHex;
    int bFound;
};

/* dl_iterate_phdr callback: the GNU build id note of the image loaded at base, as hex. */
static int build_id_cb(struct dl_phdr_info *pInfo, size_t nInfo, void *pArg)
{
    struct idsearch *q = pArg;
    int i;
    (void)nInfo;
    if ((uintptr_t)pInfo->dlpi_addr != q->base) return 0;
    for (i = 0; i < pInfo->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &pInfo->dlpi_phdr[i];
        const unsigned char *p, *pEnd;
        if (ph->p_type != PT_NOTE) continue;
        p = (const unsigned char *)(pInfo->dlpi_addr + ph->p_vaddr);
        pEnd = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= pEnd) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
            const unsigned char *zName = p + sizeof *nh;
            const unsigned char *pDesc = zName + ((nh->n_namesz + 3) & ~3u);
            const unsigned char *pNext = pDesc + ((nh->n_descsz + 3) & ~3u);
            if (pNext > pEnd || pNext <= p) break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(zName, "GNU", 4) == 0) {
                size_t k, n = nh->n_descsz;
                if (2 * n + 1 > q->nHex) n = (q->nHex - 1) / 2;
                for (k = 0; k < n; k++) snprintf(q->zHex + 2 * k, 3, "%02x", pDesc[k]);
                q->zHex[2 * n] = '\0';
                q->bFound = 1;
                return 1;
            }
            p = pNext;
        }
    }
    return 1; /* the image is found: no build id */
}

/* The module loaded at base with path zPath: cached, or described and cached now. Index, or -1. */
static int module_index(struct vt__modres *m, uintptr_t base, const char *zPath)
{
    struct vt__modinfo *mi;
    struct idsearch q;
    struct stat st;
    int k;
    for (k = 0; k < m->nModule; k++)
        if (m->aModule[k]->base == base && strcmp(m->aModule[k]->zPath, zPath) == 0) return k;
    if (m->nModule == VT_MODRES_MAX_MODULES) return -1;
    mi = calloc(1, sizeof *mi);
    if (!mi || !(mi->zPath = strdup(zPath))) {
        free(mi);
        return -1;
    }
    mi->base = base;
    mi->fileBytes = mi->mtimeNs = -1;
    memset(&q, 0, sizeof q);
    q.base = base;
    q.zHex = mi->zBuildId;
    q.nHex = sizeof mi->zBuildId;
    dl_iterate_phdr(build_id_cb, &q);
    if (!q.bFound) mi->zBuildId[0] = '\0';
    if (stat(zPath, &st) == 0) {
        mi->fileBytes = (int64_t)st.st_size;
        mi->mtimeNs = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    }
    m->aModule[m->nModule] = mi;
    return m->nModule++;
}

/* Look pc up with the loader: fills *pSlot (function heap-allocated). Returns 0, or -1 out of memory. */
static int lookup(struct vt__modres *m, uint64_t pc, struct pcslot *pSlot)
{
    Dl_info info;
    struct link_map *pMap = NULL;
    memset(pSlot, 0, sizeof *pSlot);
    pSlot->pc = pc;
    pSlot->rel = pc;
    pSlot->iModule = -1;
    if (pc && dladdr1((void *)(uintptr_t)(pc - 1), &info, (void **)&pMap, RTLD_DL_LINKMAP) && pMap) {
        const char *zPath = pMap->l_name && pMap->l_name[0] ? pMap->l_name
                            : m->zExe[0]                     ? m->zExe
                                                             : info.dli_fname;
        if (zPath && zPath[0]) {
            pSlot->iModule = module_index(m, (uintptr_t)pMap->l_addr, zPath);
            pSlot->rel = pc - (uint64_t)pMap->l_addr;
        }
        if (info.dli_sname && !(pSlot->zFunction = strdup(info.dli_sname))) return -1;
    }
    return 0;
}

int vt__modres_resolve(struct vt__modres *m, uint64_t pc, uint64_t *pRel, const char **pzFunction,
                       struct vt__modinfo **ppModule)
{
    size_t i = (size_t)((pc * 0x9E3779B97F4A7C15ull) >> 20) & m->mask;
    struct pcslot *s, tmp;
    if (!pc) return 0;
    for (;; i = (i + 1) & m->mask) {
        s = &m->aSlot[i];
        if (s->pc == pc || s->pc == 0) break;
    }
    if (s->pc == 0) {
        if (lookup(m, pc, &tmp) != 0) return 0;
        if (m->nCached < m->maxPcs) { /* cache it */
            *s = tmp;
            m->nCached++;
        } else { /* past the bound: resolved, not kept (the name is freed below) */
            s = &tmp;
        }
    }
    if (s->iModule < 0) {
        if (s == &tmp) free(tmp.zFunction);
        return 0;
    }
    *pRel = s->rel;
    *ppModule = m->aModule[s->iModule];
    if (s == &tmp) { /* not cached: hand out the module's own path and no name */
        free(tmp.zFunction);
        *pzFunction = NULL;
    } else {
        *pzFunction = s->zFunction;
    }
    return 1;
}
