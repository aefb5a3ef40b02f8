/* Which CUDA runtime and CUPTI libraries the traced process has loaded, and their versions. */
#include "jobcuda.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The soname major of a library file named "<zStem>N..." (libcudart.so.12.6.77 -> 12), or -1. */
static int soname_major(const char *zPath, const char *zStem)
{
    const char *zBase = strrchr(zPath, '/');
    size_t n = strlen(zStem);
    char *zEnd;
    long v;
    zBase = zBase ? zBase + 1 : zPath;
    if (strncmp(zBase, zStem, n) != 0) return -1;
    v = strtol(zBase + n, &zEnd, 10);
    if (zEnd == zBase + n || (*zEnd && *zEnd != '.') || v <= 0 || v > 999) return -1;
    return (int)v;
}

/* dl_iterate_phdr visitor: note the first libcudart, and a libcupti other than the one in use. */
static int visit(struct dl_phdr_info *pInfo, size_t size, void *pArg)
{
    struct vt__jobcuda *p = pArg;
    const char *z = pInfo->dlpi_name;
    (void)size;
    if (!z || !*z) return 0;
    if (!p->zRuntime[0] && soname_major(z, "libcudart.so.") > 0) {
        snprintf(p->zRuntime, sizeof p->zRuntime, "%s", z);
        p->runtimeMajor = soname_major(z, "libcudart.so.");
    } else if (!p->zOtherCupti[0] && soname_major(z, "libcupti.so.") > 0 && strcmp(z, p->zCupti) != 0) {
        char zReal[PATH_MAX];
        /* the same file under another name (a symbolic link) is the same copy */
        if (!p->zCupti[0] || !realpath(z, zReal) || strcmp(zReal, p->zCupti) != 0)
            snprintf(p->zOtherCupti, sizeof p->zOtherCupti, "%s", z);
    }
    return 0;
}

void vt__jobcuda_probe(struct vt__jobcuda *p, const void *pCuptiSym)
{
    Dl_info di;
    memset(p, 0, sizeof *p);
    p->runtimeMajor = -1;
    p->runtimeVersion = -1;
    if (pCuptiSym && dladdr(pCuptiSym, &di) && di.dli_fname) {
        char zReal[PATH_MAX];
        snprintf(p->zCupti, sizeof p->zCupti, "%s", realpath(di.dli_fname, zReal) ? zReal : di.dli_fname);
    }
    dl_iterate_phdr(visit, p);
    if (p->zRuntime[0]) {
        /* already loaded (RTLD_NOLOAD): only a reference is taken, and dropped */
        void *h = dlopen(p->zRuntime, RTLD_LAZY | RTLD_NOLOAD);
        int (*xVersion)(int *) = NULL;
        int v = 0;
        if (h) *(void **)&xVersion = dlsym(h, "cudaRuntimeGetVersion");
        if (xVersion && xVersion(&v) == 0 && v > 0) p->runtimeVersion = v;
        if (h) dlclose(h);
    }
}

int vt__cuda_major(long v)
{
    if (v >= 10000) return (int)(v >= 100000 ? v / 10000 : v / 1000); /* 130401 -> 13; 12060 -> 12 */
    if (v >= 19) return 12; /* CUPTI API versions 19..28 are CUDA 12.0..12.9 */
    if (v >= 13) return 11;
    return v > 0 ? 10 : -1;
}

void vt__cupti_version_text(unsigned v, char *z, size_t n)
{
    /* before 13.0 the CUPTI API version was a counter (cupti_version.h) */
    static const struct {
        unsigned v;
        const char *z;
    } aOld[] = {{13, "11.0"}, {14, "11.1"}, {15, "11.2-11.4"}, {16, "11.5"}, {17, "11.6"}, {18, "11.8"},
                {19, "12.0"}, {20, "12.2"}, {21, "12.3"}, {22, "12.4"}, {23, "12.5"}, {24, "12.6"},
                {26, "12.8"}, {27, "12.9"}, {28, "12.9 Update 1"}};
    size_t i;
    if (v >= 130000) {
        unsigned upd = v % 100;
        if (upd) snprintf(z, n, "%u.%u Update %u", v / 10000, v / 100 % 100, upd);
        else snprintf(z, n, "%u.%u", v / 10000, v / 100 % 100);
        return;
    }
    for (i = 0; i < sizeof aOld / sizeof aOld[0]; i++)
        if (aOld[i].v == v) {
            snprintf(z, n, "%s", aOld[i].z);
            return;
        }
    snprintf(z, n, "%s", v < 13 ? "10.x or older" : v < 19 ? "11.x" : "12.x");
}
