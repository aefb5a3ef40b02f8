/* The devices' memory and processes as NVML tells them to record's own process (never the job's), for the traces' meta rows. */
#include "record.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace/schema.h"

/*
 * NVML's ABI, as nvml.h declares it, for the few calls used here: declared, not included, so the
 * command builds and runs without the CUDA toolkit or the driver. nvmlReturn_t is a C enum (int).
 */
typedef int nvml_ret;
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ull) /* usedGpuMemory when the driver cannot tell (WDDM, some MIG setups) */
#define NVML_UUID_SIZE 96                /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
typedef struct nvmlDevice_st *nvml_device;
typedef struct {                         /* nvmlMemory_t (v1) */
    unsigned long long total, free, used;
} nvml_memory;
typedef struct {                         /* nvmlPciInfo_t, as nvmlDeviceGetPciInfo_v3 fills it */
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvml_pci;
typedef struct {                         /* nvmlProcessInfo_t (v2 layout), for the _v3 process lists */
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId, computeInstanceId;
} nvml_process;
typedef nvml_ret (*nvml_plist_fn)(nvml_device, unsigned *, nvml_process *);

#define DEV_MAX 64          /* NVML devices read */
#define PROC_MAX 1024       /* processes in one list */
#define SAMPLE_MAX 2048     /* samples per device ... */
#define FIRST_GAP_MS 1000   /* ... at most one a second, */
#define DOUBLE_EVERY 256    /* the gap doubling every 256 samples */
#define POOL_MAX (1 << 20)  /* process entries kept over all samples */

/* One process on a device at a reading: its pid and bytes (-1: NVML could not tell). */
struct nvproc {
    unsigned pid;
    int64_t bytes;
};

/* A reading of one device's processes: when (CLOCK_REALTIME ns) and its entries in the pool; bOk: the list was read. */
struct nvsample {
    int64_t wallNs;
    int iProc, nProc, bOk;
};

struct nvdev {
    nvml_device h;
    char zUuid[NVML_UUID_SIZE];
    unsigned bus, device;
    int bPci;
    int64_t usedAtLaunch, totalBytes; /* -1 unknown */
    struct nvsample launch;           /* the processes before the job started */
    struct nvsample *aSample;
    int nSample;
};

struct vt_nvml {
    void *pLib;
    nvml_ret (*xShutdown)(void);
    nvml_ret (*xMemory)(nvml_device, nvml_memory *);
    nvml_plist_fn xCompute, xGraphics; /* xGraphics may be NULL */
    char zStatus[200];                 /* "ok", or why nothing was read */
    struct nvdev aDev[DEV_MAX];
    int nDev;
    struct nvproc *aPool;
    int nPool, nPoolAlloc, bPoolFull;
    nvml_process aBuf[PROC_MAX];
    pthread_t thread;
    int bThread, bStop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* CLOCK_REALTIME in ns. */
static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Mark every open descriptor not set in aBefore (fds below 1024) close-on-exec: what NVML opened stays out of the job. */
static void cloexec_new_fds(const unsigned char *aBefore)
{
    DIR *pDir = opendir("/proc/self/fd");
    struct dirent *e;
    if (!pDir) return;
    while ((e = readdir(pDir)) != NULL) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(pDir)) continue;
        if (fd >= 1024 || !aBefore[fd]) fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
    }
    closedir(pDir);
}

/* Set aOpen[fd] for each descriptor open now below 1024. */
static void open_fds(unsigned char *aOpen)
{
    DIR *pDir = opendir("/proc/self/fd");
    struct dirent *e;
    memset(aOpen, 0, 1024);
    if (!pDir) return;
    while ((e = readdir(pDir)) != NULL) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd < 1024 && fd != dirfd(pDir)) aOpen[fd] = 1;
    }
    closedir(pDir);
}

/*
 * Read device d's processes (compute and graphics lists, one entry per pid, the larger figure
 * where both list it) into the pool as *pS, taken now. A failed compute list leaves bOk 0. 0, or
 * -1 when the pool is full (bOk 0; nothing more is kept).
 */
static int read_procs(struct vt_nvml *p, struct nvdev *d, struct nvsample *pS)
{
    nvml_plist_fn axList[2] = {p->xCompute, p->xGraphics};
    pS->wallNs = wall_ns();
    pS->iProc = p->nPool;
    pS->nProc = 0;
    pS->bOk = 1;
    for (int l = 0; l < 2 && axList[l]; l++) {
        unsigned n = PROC_MAX;
        nvml_ret rc = axList[l](d->h, &n, p->aBuf);
        if (rc != NVML_SUCCESS) {
            if (l == 0) pS->bOk = 0; /* the graphics list is often not supported on compute GPUs */
            continue;
        }
        for (unsigned i = 0; i < n && i < PROC_MAX; i++) {
            int64_t b = p->aBuf[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE ? -1 : (int64_t)p->aBuf[i].usedGpuMemory;
            int k;
            for (k = 0; k < pS->nProc && p->aPool[pS->iProc + k].pid != p->aBuf[i].pid; k++) {
            }
            if (k < pS->nProc) {
                struct nvproc *q = &p->aPool[pS->iProc + k];
                if (q->bytes >= 0 && (b < 0 || b > q->bytes)) q->bytes = b;
                continue;
            }
            if (p->nPool == p->nPoolAlloc) {
                int nNew = p->nPoolAlloc ? 2 * p->nPoolAlloc : 256;
                struct nvproc *aNew = nNew > POOL_MAX ? NULL : realloc(p->aPool, sizeof *aNew * (size_t)nNew);
                if (!aNew) { /* a partial list would understate the others */
                    p->bPoolFull = 1;
                    pS->bOk = 0;
                    return -1;
                }
                p->aPool = aNew;
                p->nPoolAlloc = nNew;
            }
            p->aPool[p->nPool].pid = p->aBuf[i].pid;
            p->aPool[p->nPool++].bytes = b;
            pS->nProc++;
        }
    }
    return 0;
}

/* Load libnvidia-ml (zLib), initialize it and read the devices and their processes before the job. 0, or -1 (zStatus says why). */
static int load(struct vt_nvml *p, const char *zLib)
{
    nvml_ret (*xInit)(void), (*xCount)(unsigned *), (*xHandle)(unsigned, nvml_device *);
    nvml_ret (*xUuid)(nvml_device, char *, unsigned), (*xPci)(nvml_device, nvml_pci *);
    unsigned char aBefore[1024];
    unsigned n = 0;
    nvml_ret rc;
    open_fds(aBefore);
    p->pLib = dlopen(zLib, RTLD_NOW | RTLD_LOCAL);
    if (!p->pLib) {
        snprintf(p->zStatus, sizeof p->zStatus, "unavailable: %s not loaded", zLib);
        return -1;
    }
    *(void **)&xInit = dlsym(p->pLib, "nvmlInit_v2");
    *(void **)&p->xShutdown = dlsym(p->pLib, "nvmlShutdown");
    *(void **)&xCount = dlsym(p->pLib, "nvmlDeviceGetCount_v2");
    *(void **)&xHandle = dlsym(p->pLib, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&xUuid = dlsym(p->pLib, "nvmlDeviceGetUUID");
    *(void **)&xPci = dlsym(p->pLib, "nvmlDeviceGetPciInfo_v3");
    *(void **)&p->xMemory = dlsym(p->pLib, "nvmlDeviceGetMemoryInfo");
    *(void **)&p->xCompute = dlsym(p->pLib, "nvmlDeviceGetComputeRunningProcesses_v3");
    *(void **)&p->xGraphics = dlsym(p->pLib, "nvmlDeviceGetGraphicsRunningProcesses_v3");
    if (!xInit || !p->xShutdown || !xCount || !xHandle || !xUuid || !p->xMemory || !p->xCompute) {
        p->xShutdown = NULL; /* never initialized: nothing to shut down */
        snprintf(p->zStatus, sizeof p->zStatus, "unavailable: %s lacks the functions used (an older NVML)",
                 zLib);
        return -1;
    }
    if ((rc = xInit()) != NVML_SUCCESS) {
        p->xShutdown = NULL;
        snprintf(p->zStatus, sizeof p->zStatus, "unavailable: nvmlInit_v2 returned %d", rc);
        return -1;
    }
    if ((rc = xCount(&n)) != NVML_SUCCESS) {
        snprintf(p->zStatus, sizeof p->zStatus, "unavailable: nvmlDeviceGetCount_v2 returned %d", rc);
        return -1;
    }
    for (unsigned i = 0; i < n && p->nDev < DEV_MAX; i++) {
        struct nvdev *d = &p->aDev[p->nDev];
        nvml_memory m;
        nvml_pci pci;
        memset(d, 0, sizeof *d);
        if (xHandle(i, &d->h) != NVML_SUCCESS) continue;
        if (xUuid(d->h, d->zUuid, sizeof d->zUuid) != NVML_SUCCESS) d->zUuid[0] = 0;
        d->zUuid[sizeof d->zUuid - 1] = 0;
        if (xPci && xPci(d->h, &pci) == NVML_SUCCESS) d->bPci = 1, d->bus = pci.bus, d->device = pci.device;
        d->usedAtLaunch = d->totalBytes = -1;
        if (p->xMemory(d->h, &m) == NVML_SUCCESS && m.total > 0)
            d->usedAtLaunch = (int64_t)m.used, d->totalBytes = (int64_t)m.total;
        p->nDev++;
        read_procs(p, d, &d->launch);
    }
    cloexec_new_fds(aBefore);
    snprintf(p->zStatus, sizeof p->zStatus, "ok");
    return 0;
}

struct vt_nvml *vt__nvml_open(void)
{
    const char *zLib = getenv("VRAMTRACE_NVML");
    struct vt_nvml *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->mu, NULL);
    {
        pthread_condattr_t a;
        pthread_condattr_init(&a);
        pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
        pthread_cond_init(&p->cv, &a);
        pthread_condattr_destroy(&a);
    }
    if (load(p, zLib && *zLib ? zLib : "libnvidia-ml.so.1") != 0) p->nDev = 0;
    return p;
}

/* The sampler thread: every device's processes, at most once a second, the gap doubling every 256 samples, until stopped. */
static void *watch(void *pArg)
{
    struct vt_nvml *p = pArg;
    struct timespec due;
    int64_t gapMs = FIRST_GAP_MS;
    int k = 0;
    clock_gettime(CLOCK_MONOTONIC, &due);
    pthread_mutex_lock(&p->mu);
    while (!p->bStop && k < SAMPLE_MAX && !p->bPoolFull) {
        due.tv_sec += gapMs / 1000;
        due.tv_nsec += (gapMs % 1000) * 1000000;
        if (due.tv_nsec >= 1000000000) due.tv_sec++, due.tv_nsec -= 1000000000;
        while (!p->bStop && pthread_cond_timedwait(&p->cv, &p->mu, &due) == 0) {
        }
        if (p->bStop) break;
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < p->nDev; i++) {
            struct nvdev *d = &p->aDev[i];
            struct nvsample *aNew;
            if (d->nSample % 64 == 0) {
                aNew = realloc(d->aSample, sizeof *aNew * (size_t)(d->nSample + 64));
                if (!aNew) break;
                d->aSample = aNew;
            }
            if (read_procs(p, d, &d->aSample[d->nSample]) == 0) d->nSample++;
        }
        if (++k % DOUBLE_EVERY == 0) gapMs *= 2;
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void vt__nvml_watch(struct vt_nvml *p)
{
    sigset_t all, saved;
    if (!p || p->nDev == 0 || p->bThread) return;
    sigfillset(&all); /* the job's signals go to record's main thread, which forwards them */
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    p->bThread = pthread_create(&p->thread, NULL, watch, p) == 0;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

void vt__nvml_stop(struct vt_nvml *p)
{
    if (!p || !p->bThread) return;
    pthread_mutex_lock(&p->mu);
    p->bStop = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    p->bThread = 0;
}

void vt__nvml_close(struct vt_nvml *p)
{
    if (!p) return;
    vt__nvml_stop(p);
    if (p->xShutdown) p->xShutdown();
    if (p->pLib) dlclose(p->pLib);
    for (int i = 0; i < p->nDev; i++) free(p->aDev[i].aSample);
    free(p->aPool);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* Write meta row (zKey formatted from the device id and zWhat, zValue). An SQLite code. */
static int put(sqlite3_stmt *pIns, int dev, const char *zWhat, const char *zValue)
{
    char zKey[96];
    int rc;
    if (dev >= 0) snprintf(zKey, sizeof zKey, "nvml.device.%d.%s", dev, zWhat);
    else snprintf(zKey, sizeof zKey, "nvml.%s", zWhat);
    sqlite3_bind_text(pIns, 1, zKey, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(pIns, 2, zValue, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(pIns);
    sqlite3_reset(pIns);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * The NVML device for trace device (zUuid, pci bus, pci device; NULL / -1 when unknown): the one of
 * the same UUID, else (the trace has no UUID) the only one at that PCI bus and device. The match
 * is said in zHow. NULL when none.
 */
static const struct nvdev *match(const struct vt_nvml *p, const char *zUuid, int bus, int device, char *zHow,
                                 size_t nHow)
{
    const struct nvdev *pHit = NULL;
    int nHit = 0;
    for (int i = 0; i < p->nDev; i++) {
        if (zUuid && *zUuid) {
            if (!strcasecmp(zUuid, p->aDev[i].zUuid)) {
                snprintf(zHow, nHow, "uuid %s", p->aDev[i].zUuid);
                return &p->aDev[i];
            }
        } else if (bus >= 0 && device >= 0 && p->aDev[i].bPci && p->aDev[i].bus == (unsigned)bus &&
                   p->aDev[i].device == (unsigned)device) {
            pHit = &p->aDev[i];
            nHit++;
        }
    }
    if (nHit != 1) return NULL;
    snprintf(zHow, nHow, "pci bus %d device %d (the trace has no UUID)", bus, device);
    return pHit;
}

/*
 * Other processes' bytes in sample s for the process pid: every process listed but pid, their
 * count in *pn; -1 when the list was not read or one of them had no figure. *pbSeen is set when
 * pid is listed.
 */
static int64_t others_in(const struct vt_nvml *p, const struct nvsample *s, int64_t pid, int *pn, int *pbSeen)
{
    int64_t sum = 0;
    *pn = 0;
    if (!s->bOk) return -1;
    for (int i = 0; i < s->nProc; i++) {
        const struct nvproc *q = &p->aPool[s->iProc + i];
        if ((int64_t)q->pid == pid) {
            *pbSeen = 1;
            continue;
        }
        if (q->bytes < 0) sum = -1;
        else if (sum >= 0) sum += q->bytes;
        ++*pn;
    }
    return sum;
}

#define PROCS_MAX 16 /* processes named in one others_procs row */

/*
 * The processes of sample s but pid into z (size n) as "PID BYTES NAME;..." (at most PROCS_MAX,
 * the name from /proc/PID/comm now, in record's PID namespace, "unknown" when it cannot be read,
 * blanks and ';' made '_'). Empty when there are none.
 */
static void procs_in(const struct vt_nvml *p, const struct nvsample *s, int64_t pid, char *z, size_t n)
{
    size_t k = 0;
    int nOut = 0;
    z[0] = 0;
    for (int i = 0; i < s->nProc && nOut < PROCS_MAX && k + 64 < n; i++) {
        const struct nvproc *q = &p->aPool[s->iProc + i];
        char zPath[48], zName[32] = "unknown";
        FILE *f;
        int m;
        if ((int64_t)q->pid == pid) continue;
        snprintf(zPath, sizeof zPath, "/proc/%u/comm", q->pid);
        if ((f = fopen(zPath, "re"))) {
            if (fgets(zName, sizeof zName, f)) zName[strcspn(zName, "\n")] = 0;
            fclose(f);
            if (!zName[0]) snprintf(zName, sizeof zName, "%s", "unknown");
            for (char *c = zName; *c; c++)
                if (*c == ';' || *c == ' ' || *c == '\t') *c = '_';
        }
        m = snprintf(z + k, n - k, "%s%u %" PRId64 " %s", nOut ? ";" : "", q->pid, q->bytes, zName);
        if (m < 0 || (size_t)m >= n - k) break;
        k += (size_t)m;
        nOut++;
    }
}

/* Whether samples a and b list the same processes but pid (in the same order). */
static int same_procs(const struct vt_nvml *p, const struct nvsample *a, const struct nvsample *b, int64_t pid)
{
    int i = 0, j = 0;
    for (;;) {
        while (i < a->nProc && (int64_t)p->aPool[a->iProc + i].pid == pid) i++;
        while (j < b->nProc && (int64_t)p->aPool[b->iProc + j].pid == pid) j++;
        if (i == a->nProc || j == b->nProc) return i == a->nProc && j == b->nProc;
        if (p->aPool[a->iProc + i].pid != p->aPool[b->iProc + j].pid) return 0;
        i++, j++;
    }
}

/*
 * Trace device dev's readings from NVML device d as meta rows, times on the trace's clock where it
 * has an anchor. The samples are kept only where some list names the trace's pid (the same PID
 * namespace); the reading before launch only where some list showed any process at all (a list
 * that shows none may be blind to the processes outside a container: its 0 would be a guess).
 * An SQLite code.
 */
static int put_device(const struct vt_nvml *p, const struct nvdev *d, sqlite3_stmt *pIns, int dev, const char *zHow,
                      int64_t pid, int bAnchor, int64_t anchorCupti, int64_t anchorWall)
{
    char z[300], zWhat[48], zProcs[PROCS_MAX * 64];
    int n, bSeen = 0, nSeenIn = 0, bVisible = d->launch.bOk && d->launch.nProc > 0, rc;
    int64_t others = others_in(p, &d->launch, -1, &n, &bSeen);
    for (int i = 0; i < d->nSample; i++) { /* is this process in NVML's lists (same PID namespace)? */
        int bHere = 0, nHere;
        others_in(p, &d->aSample[i], pid, &nHere, &bHere);
        nSeenIn += bHere;
        bVisible |= d->aSample[i].bOk && d->aSample[i].nProc > 0;
    }
    rc = put(pIns, dev, "match", zHow);
    if (rc == SQLITE_OK && d->totalBytes > 0) {
        snprintf(z, sizeof z, "%" PRId64, d->usedAtLaunch);
        rc = put(pIns, dev, "used_at_launch_bytes", z);
    }
    if (rc == SQLITE_OK && others >= 0 && bVisible) {
        snprintf(z, sizeof z, "%" PRId64 " %d", others, n);
        rc = put(pIns, dev, "others_at_launch", z);
        procs_in(p, &d->launch, -1, zProcs, sizeof zProcs);
        if (rc == SQLITE_OK && zProcs[0]) rc = put(pIns, dev, "others_procs_at_launch", zProcs);
    }
    if (rc == SQLITE_OK && bAnchor) {
        snprintf(z, sizeof z, "%" PRId64, anchorCupti + (d->launch.wallNs - anchorWall));
        rc = put(pIns, dev, "launch_ns", z);
    }
    if (rc == SQLITE_OK && others >= 0 && !bVisible) {
        snprintf(z, sizeof z,
                 "NVML's process lists of the device showed no process at all (before launch%s): they may not show "
                 "the processes outside this PID namespace (a container); other processes are not known",
                 d->nSample > 0 ? " nor while the job ran, this process included" : "; no reading while the job ran");
        rc = put(pIns, dev, "others_note", z);
    } else if (rc == SQLITE_OK && nSeenIn == 0 && d->nSample > 0 && pid < 0) {
        rc = put(pIns, dev, "others_note", "the trace records no pid: only the launch reading is kept");
    } else if (rc == SQLITE_OK && nSeenIn == 0 && d->nSample > 0) {
        snprintf(z, sizeof z,
                 "this process (pid %" PRId64 ") is in none of NVML's %d process lists of the device: NVML's "
                 "PIDs may be of another PID namespace (a container), or it used the device between them; only the "
                 "launch reading is kept",
                 pid, d->nSample);
        rc = put(pIns, dev, "others_note", z);
    } else if (rc == SQLITE_OK && nSeenIn > 0 && !bAnchor) {
        rc = put(pIns, dev, "others_note", "the trace has no clock anchor: the samples cannot be placed in time");
    }
    for (int i = 0, k = 0, iLast = -1; rc == SQLITE_OK && nSeenIn > 0 && bAnchor && i < d->nSample; i++) {
        int bHere = 0;
        if ((others = others_in(p, &d->aSample[i], pid, &n, &bHere)) < 0) continue;
        snprintf(z, sizeof z, "%" PRId64 " %" PRId64 " %d", anchorCupti + (d->aSample[i].wallNs - anchorWall), others, n);
        snprintf(zWhat, sizeof zWhat, "others_sample.%d", k);
        rc = put(pIns, dev, zWhat, z);
        if (rc == SQLITE_OK && (iLast < 0 || !same_procs(p, &d->aSample[iLast], &d->aSample[i], pid))) {
            procs_in(p, &d->aSample[i], pid, zProcs, sizeof zProcs); /* the processes, when they changed */
            snprintf(zWhat, sizeof zWhat, "others_procs.%d", k);
            rc = put(pIns, dev, zWhat, zProcs);
        }
        iLast = i;
        k++;
    }
    return rc;
}

int vt__nvml_stamp(const struct vt_nvml *p, sqlite3 *db)
{
    sqlite3_stmt *pIns = NULL, *pDev = NULL;
    char zV[64];
    int64_t pid = -1, anchorCupti = 0, anchorWall = 0;
    int bAnchor = 0, rc;
    if (!p) return SQLITE_OK;
    if (vt__meta_get(db, "pid", zV, sizeof zV) == 1) pid = strtoll(zV, NULL, 10);
    if (vt__meta_get(db, "clock_anchor_cupti_ns", zV, sizeof zV) == 1) {
        anchorCupti = strtoll(zV, NULL, 10);
        if (vt__meta_get(db, "clock_anchor_wall_ns", zV, sizeof zV) == 1) anchorWall = strtoll(zV, NULL, 10), bAnchor = 1;
    }
    rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)", -1, &pIns, NULL);
    if (rc == SQLITE_OK) rc = put(pIns, -1, "status", p->zStatus);
    if (rc == SQLITE_OK && p->nDev > 0)
        rc = sqlite3_prepare_v2(db, "SELECT id, uuid, pci_bus, pci_device FROM device ORDER BY id", -1, &pDev, NULL);
    while (rc == SQLITE_OK && pDev && (rc = sqlite3_step(pDev)) == SQLITE_ROW) {
        char zHow[160];
        const struct nvdev *d;
        int dev = sqlite3_column_int(pDev, 0);
        d = match(p, (const char *)sqlite3_column_text(pDev, 1),
                  sqlite3_column_type(pDev, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(pDev, 2),
                  sqlite3_column_type(pDev, 3) == SQLITE_NULL ? -1 : sqlite3_column_int(pDev, 3), zHow, sizeof zHow);
        rc = d ? put_device(p, d, pIns, dev, zHow, pid, bAnchor, anchorCupti, anchorWall) : SQLITE_OK;
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(pDev);
    sqlite3_finalize(pIns);
    return rc;
}
