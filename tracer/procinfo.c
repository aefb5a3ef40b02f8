/* Gathering the traced process's metadata: pid, host, command line, ranks, allowed environment. */
#include "procinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Environment variables copied into meta as 'env.NAME'; nothing else is read. */
static const char *const azEnvAllow[] = {
    "CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING", "CUDA_LAUNCH_BLOCKING",
    "RANK", "LOCAL_RANK", "WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
    "PMI_RANK", "PMI_SIZE",
    "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_SIZE",
    "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",
};

/* Rank variables in order of preference (launchers set several; the first set wins). */
static const char *const azRank[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                     "MV2_COMM_WORLD_RANK", "SLURM_PROCID"};
static const char *const azLocalRank[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                          "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"};
static const char *const azWorldSize[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                          "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS"};

/* True if z is a non-empty string of decimal digits (what a rank variable must be). */
static int is_number(const char *z)
{
    if (!z || !*z) return 0;
    for (; *z; z++)
        if (*z < '0' || *z > '9') return 0;
    return 1;
}

/* Copy the first numeric value among azName into zOut (size nOut), or "" if none. */
static void resolve(const char *(*xGetenv)(const char *), const char *const *azName, size_t nName,
                    char *zOut, size_t nOut)
{
    size_t i;
    zOut[0] = '\0';
    for (i = 0; i < nName; i++) {
        const char *z = xGetenv(azName[i]);
        if (is_number(z) && strlen(z) < nOut) {
            snprintf(zOut, nOut, "%s", z);
            return;
        }
    }
}

int vt__procinfo_read_cmdline(const char *zPath, char *zOut, size_t nOut)
{
    int fd;
    size_t n = 0;
    int rc = -1;
    zOut[0] = '\0';
    if (nOut == 0) return -1;
    fd = open(zPath, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    while (n + 1 < nOut) {
        ssize_t k = read(fd, zOut + n, nOut - 1 - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) goto done;
        if (k == 0) break;
        n += (size_t)k;
    }
    /* drop the trailing NUL(s) of the last argument, turn separators into spaces */
    while (n > 0 && zOut[n - 1] == '\0') n--;
    for (size_t i = 0; i < n; i++)
        if (zOut[i] == '\0') zOut[i] = ' ';
    zOut[n] = '\0';
    rc = (int)n;
done:
    if (rc < 0) zOut[0] = '\0';
    close(fd);
    return rc;
}

void vt__procinfo_load(struct vt_procinfo *pi, const char *(*xGetenv)(const char *zName))
{
    ssize_t n;
    memset(pi, 0, sizeof *pi);
    pi->pid = (long)getpid();
    pi->ppid = (long)getppid();
    if (gethostname(pi->zHost, sizeof pi->zHost - 1) != 0) pi->zHost[0] = '\0';
    pi->zHost[sizeof pi->zHost - 1] = '\0';
    n = readlink("/proc/self/exe", pi->zExe, sizeof pi->zExe - 1);
    pi->zExe[n > 0 ? n : 0] = '\0';
    vt__procinfo_read_cmdline("/proc/self/cmdline", pi->zCmdline, sizeof pi->zCmdline);
    resolve(xGetenv, azRank, sizeof azRank / sizeof azRank[0], pi->zRank, sizeof pi->zRank);
    resolve(xGetenv, azLocalRank, sizeof azLocalRank / sizeof azLocalRank[0], pi->zLocalRank,
            sizeof pi->zLocalRank);
    resolve(xGetenv, azWorldSize, sizeof azWorldSize / sizeof azWorldSize[0], pi->zWorldSize,
            sizeof pi->zWorldSize);
}

int vt__procinfo_meta(const struct vt_procinfo *pi, const char *(*xGetenv)(const char *zName),
                      int (*xMeta)(void *pCtx, const char *zKey, const char *zValue), void *pCtx)
{
    char z[32];
    char zKey[64];
    size_t i;
    int rc;
    snprintf(z, sizeof z, "%ld", pi->pid);
    rc = xMeta(pCtx, "pid", z);
    if (rc == 0) {
        snprintf(z, sizeof z, "%ld", pi->ppid);
        rc = xMeta(pCtx, "ppid", z);
    }
    if (rc == 0 && pi->zHost[0]) rc = xMeta(pCtx, "hostname", pi->zHost);
    if (rc == 0 && pi->zExe[0]) rc = xMeta(pCtx, "exe", pi->zExe);
    if (rc == 0 && pi->zCmdline[0]) rc = xMeta(pCtx, "cmdline", pi->zCmdline);
    if (rc == 0 && pi->zRank[0]) rc = xMeta(pCtx, "rank", pi->zRank);
    if (rc == 0 && pi->zLocalRank[0]) rc = xMeta(pCtx, "local_rank", pi->zLocalRank);
    if (rc == 0 && pi->zWorldSize[0]) rc = xMeta(pCtx, "world_size", pi->zWorldSize);
    {
        /* which `vramtrace record` run started the process (record lists only its own traces) */
        const char *zId = xGetenv("VRAMTRACE_RECORD_ID");
        if (rc == 0 && zId && *zId && strlen(zId) <= 64 && strspn(zId, "0123456789abcdefghijklmnopqrstuvwxyz-.") == strlen(zId))
            rc = xMeta(pCtx, "record_id", zId);
    }
    for (i = 0; rc == 0 && i < sizeof azEnvAllow / sizeof azEnvAllow[0]; i++) {
        const char *zVal = xGetenv(azEnvAllow[i]);
        if (!zVal) continue;
        snprintf(zKey, sizeof zKey, "env.%s", azEnvAllow[i]);
        rc = xMeta(pCtx, zKey, zVal);
    }
    return rc;
}
