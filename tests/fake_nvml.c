/* A scripted libnvidia-ml for the record tests: two devices and their processes as VT_FAKE_NVML says, no driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * VT_FAKE_NVML is a comma-separated list of key=value (numbers in bytes):
 *   uuid      the UUID of NVML device 1 (device 0 is always GPU-decoy-0000, with 5 GiB of another
 *             process: a reader that matches by index takes it)
 *   bus, dev  device 1's PCI bus and device numbers
 *   total, used  device 1's memory
 *   launch    bytes of process 999991 at device 1's first process list (before the job)
 *   later     its bytes in every later list
 *   job, jobbytes  a pid listed with jobbytes in the later lists (0: none, as when the lists use
 *             another PID namespace)
 *   polled    a file created once a later list was returned (the job waits for it)
 *   fail      init: nvmlInit_v2 fails (as without a driver); procs: the process lists fail (no permission)
 *   hide      1: every list is empty (as a container's NVML that shows no process of the host)
 */

typedef struct {
    unsigned long long total, free, used;
} memory_t;
typedef struct {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} pci_t;
typedef struct {
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId, computeInstanceId;
} proc_t;

static int g_nCalls[2];

/* The value of key zKey in VT_FAKE_NVML into z (size n); 1 found, 0 not. */
static int opt(const char *zKey, char *z, size_t n)
{
    const char *zAll = getenv("VT_FAKE_NVML"), *p = zAll;
    size_t nKey = strlen(zKey);
    while (p && *p) {
        size_t nItem = strcspn(p, ",");
        if (nItem > nKey && !strncmp(p, zKey, nKey) && p[nKey] == '=') {
            snprintf(z, n, "%.*s", (int)(nItem - nKey - 1), p + nKey + 1);
            return 1;
        }
        p += nItem + (p[nItem] == ',');
    }
    return 0;
}

static unsigned long long num(const char *zKey, unsigned long long dflt)
{
    char z[64];
    return opt(zKey, z, sizeof z) ? strtoull(z, NULL, 10) : dflt;
}

int nvmlInit_v2(void)
{
    char z[32];
    return opt("fail", z, sizeof z) && !strcmp(z, "init") ? 9 : 0;
}

int nvmlShutdown(void)
{
    return 0;
}

int nvmlDeviceGetCount_v2(unsigned *pn)
{
    *pn = 2;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **ph)
{
    if (i > 1) return 2;
    *ph = (void *)(unsigned long)(i + 1);
    return 0;
}

/* The index of handle h. */
static int index_of(void *h)
{
    return (int)(unsigned long)h - 1;
}

int nvmlDeviceGetUUID(void *h, char *z, unsigned n)
{
    char zU[96];
    if (index_of(h) == 0 || !opt("uuid", zU, sizeof zU)) snprintf(zU, sizeof zU, "GPU-decoy-0000");
    snprintf(z, n, "%s", zU);
    return 0;
}

int nvmlDeviceGetPciInfo_v3(void *h, pci_t *p)
{
    memset(p, 0, sizeof *p);
    p->bus = index_of(h) == 0 ? 200 : (unsigned)num("bus", 27);
    p->device = index_of(h) == 0 ? 0 : (unsigned)num("dev", 0);
    snprintf(p->busId, sizeof p->busId, "00000000:%02X:%02X.0", p->bus, p->device);
    return 0;
}

int nvmlDeviceGetMemoryInfo(void *h, memory_t *m)
{
    m->total = index_of(h) == 0 ? 85520809984ull : num("total", 85520809984ull);
    m->used = index_of(h) == 0 ? 5368709120ull : num("used", 1073741824ull);
    m->free = m->total - m->used;
    return 0;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned *pn, proc_t *a)
{
    char z[4096];
    proc_t aList[2];
    unsigned n = 0;
    int i = index_of(h), bLater = g_nCalls[i]++ > 0;
    if (opt("fail", z, sizeof z) && !strcmp(z, "procs")) return 4;
    memset(aList, 0, sizeof aList);
    aList[n].pid = i == 0 ? 999992 : 999991;
    aList[n++].usedGpuMemory = i == 0 ? 5368709120ull : num(bLater ? "later" : "launch", 0);
    if (i == 1 && bLater && num("job", 0) > 0) {
        aList[n].pid = (unsigned)num("job", 0);
        aList[n++].usedGpuMemory = num("jobbytes", 0);
    }
    if (num("hide", 0)) n = 0;
    if (*pn < n) {
        *pn = n;
        return 7;
    }
    memcpy(a, aList, sizeof aList[0] * n);
    *pn = n;
    if (i == 1 && bLater && opt("polled", z, sizeof z)) {
        FILE *f = fopen(z, "w");
        if (f) fclose(f);
    }
    return 0;
}

int nvmlDeviceGetGraphicsRunningProcesses_v3(void *h, unsigned *pn, proc_t *a)
{
    (void)h, (void)pn, (void)a;
    return 3; /* not supported, as on a compute GPU */
}
