/* Internal: metadata about the traced process (identity, command line, rank, allowed environment). */
#ifndef VT_TRACER_PROCINFO_H
#define VT_TRACER_PROCINFO_H

#include <stddef.h>

#define VT_PROCINFO_CMDLINE_MAX 4096 /* command lines are cut to this many bytes */

struct vt_procinfo {
    long pid, ppid;
    char zHost[256];
    char zExe[1024];
    char zCmdline[VT_PROCINFO_CMDLINE_MAX]; /* NULs between arguments become spaces */
    char zRank[32];       /* resolved global rank, "" when no rank variable is set */
    char zLocalRank[32];  /* resolved local rank, or "" */
    char zWorldSize[32];  /* resolved world size, or "" */
};

/*
 * Gather the process's metadata. xGetenv reads the environment (getenv, or a
 * table in tests). Fields that cannot be read are left empty. Never fails.
 */
void vt__procinfo_load(struct vt_procinfo *pi, const char *(*xGetenv)(const char *zName));

/*
 * Call xMeta(pCtx, key, value) for each meta row: pid, ppid, hostname, exe,
 * cmdline, rank, local_rank, world_size (when known), record_id (the
 * VRAMTRACE_RECORD_ID `vramtrace record` sets, when set and made of [0-9a-z.-],
 * at most 64 bytes), and 'env.NAME' for each allow-listed variable that is set.
 * Nothing outside the allow-list is ever read into the trace. Returns the first
 * non-zero xMeta result, or 0.
 */
int vt__procinfo_meta(const struct vt_procinfo *pi, const char *(*xGetenv)(const char *zName),
                      int (*xMeta)(void *pCtx, const char *zKey, const char *zValue), void *pCtx);

/*
 * Read the process's command line from zPath (normally /proc/self/cmdline) into
 * zOut, arguments separated by single spaces, cut to nOut-1 bytes. Returns the
 * length written, or -1 if the file cannot be read (zOut is then "").
 */
int vt__procinfo_read_cmdline(const char *zPath, char *zOut, size_t nOut);

#endif
