/* The import driver: one input to one trace (meta rows, notes and errors printed), and temporary traces for the readers. */
#include "import.h"

#include <pthread.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/errors.h"

/* The meta rows every import writes, and the notes as import_note.N. Returns 0 or -1. */
static int import_meta(struct vt__imp *x, int fmt, int64_t pid)
{
    char zKey[32];
    char *zAbs = realpath(x->zIn, NULL);
    int rc = vt__tb_meta(x->tb, "source_format", vt__import_format_name(fmt));
    if (!rc) rc = vt__tb_meta(x->tb, "source_file", zAbs ? zAbs : x->zIn);
    free(zAbs);
    if (!rc) rc = vt__tb_meta(x->tb, "importer_version", VT_VERSION);
    if (!rc && pid >= 0) rc = vt__tb_metaf(x->tb, "pid", "%lld", (long long)pid);
    /* the source was read to its end: nothing is missing at the end as after a killed process */
    if (!rc) rc = vt__tb_meta(x->tb, "closed_cleanly", "1");
    for (int i = 0; !rc && i < x->nNote; i++) {
        snprintf(zKey, sizeof zKey, "import_note.%d", i + 1);
        rc = vt__tb_meta(x->tb, zKey, x->azNote[i]);
    }
    return rc;
}

int vt__import_one(const char *zIn, int fmt, int64_t pid, const char *zOut, const struct vt_import_opts *o,
                   int64_t *pnEvents)
{
    struct vt__imp x;
    char zErr[512];
    int rc;
    memset(&x, 0, sizeof x);
    x.zIn = zIn;
    if (vt__tb_open(zOut, o->bForce, &x.tb, zErr, sizeof zErr) != 0) {
        vt__errorf("%s", zErr);
        return VT_EXIT_NOFILE;
    }
    switch (fmt) {
    case VT_IMPORT_SNAPSHOT: rc = vt__import_snapshot(&x); break;
    case VT_IMPORT_KINETO: rc = vt__import_kineto(&x); break;
    case VT_IMPORT_NSYS: rc = vt__import_nsys(&x, pid); break;
    default: rc = vt__imp_fail(&x, VT_EXIT_NOT_TRACE, "not a format vramtrace imports"); break;
    }
    if (rc == VT_EXIT_OK && import_meta(&x, fmt, pid) != 0) rc = vt__imp_tb_fail(&x);
    if (rc == VT_EXIT_OK && vt__tb_close(x.tb, 1, zErr, sizeof zErr) != 0) {
        vt__errorf("%s: %s", zOut, zErr);
        rc = VT_EXIT_INTERNAL;
    } else if (rc != VT_EXIT_OK) {
        vt__tb_close(x.tb, 0, NULL, 0);
        vt__errorf("%s: %s", zIn, x.zErr[0] ? x.zErr : "import failed");
    }
    if (!o->bQuiet)
        for (int i = 0; i < x.nNote; i++) vt__errorf("%s: note: %s", zIn, x.azNote[i]);
    for (int i = 0; i < x.nNote; i++) free(x.azNote[i]);
    free(x.azNote);
    if (pnEvents) *pnEvents = x.nEvents;
    return rc;
}

/* ---- temporary traces for the readers ---- */

/* The temporary traces made in this process: source path and trace path, removed at exit. */
static struct temp {
    char *zSrc, *zTrace;
} *g_aTemp;
static int g_nTemp;
static pthread_mutex_t g_muTemp = PTHREAD_MUTEX_INITIALIZER; /* readers import on several threads (analyze -j) */

/* At exit: remove every temporary trace vt__import_to_temp made. */
static void remove_temps(void)
{
    for (int i = 0; i < g_nTemp; i++) {
        unlink(g_aTemp[i].zTrace);
        free(g_aTemp[i].zSrc);
        free(g_aTemp[i].zTrace);
    }
    free(g_aTemp);
    g_aTemp = NULL;
    g_nTemp = 0;
}

const char *vt__import_temp_path(const char *zPath)
{
    const char *z = zPath;
    pthread_mutex_lock(&g_muTemp);
    for (int i = g_nTemp; i-- > 0;)
        if (!strcmp(g_aTemp[i].zSrc, zPath)) {
            z = g_aTemp[i].zTrace;
            break;
        }
    pthread_mutex_unlock(&g_muTemp);
    return z;
}

int vt__import_temp_new(const char *zPath, char **pzTemp)
{
    const char *zDir = getenv("TMPDIR");
    char *zTemp, *zSrc;
    int fd, i;
    *pzTemp = NULL;
    if (!zDir || !zDir[0]) zDir = "/tmp";
    zTemp = malloc(strlen(zDir) + 40);
    zSrc = strdup(zPath);
    if (!zTemp || !zSrc) {
        free(zTemp);
        free(zSrc);
        vt__errorf("%s: out of memory", zPath);
        return VT_EXIT_INTERNAL;
    }
    sprintf(zTemp, "%s/vramtrace-import-XXXXXX", zDir);
    if ((fd = vt__cleanup_mkstemp(zTemp)) < 0) { /* removed on a fatal signal too */
        vt__errorf("%s: cannot create a temporary trace in %s (set TMPDIR to a writable directory): %s", zPath,
                   zDir, strerror(errno));
        free(zTemp);
        free(zSrc);
        return VT_EXIT_NOFILE; /* an output that cannot be written */
    }
    close(fd);
    /* one temporary trace per source: a new import of the same path replaces the last one */
    pthread_mutex_lock(&g_muTemp);
    for (i = 0; i < g_nTemp && strcmp(g_aTemp[i].zSrc, zPath); i++) {}
    if (i == g_nTemp) {
        struct temp *a = realloc(g_aTemp, (size_t)(g_nTemp + 1) * sizeof *a);
        if (!a) {
            pthread_mutex_unlock(&g_muTemp);
            vt__cleanup_forget(zTemp);
            unlink(zTemp);
            free(zTemp);
            free(zSrc);
            vt__errorf("%s: out of memory", zPath);
            return VT_EXIT_INTERNAL;
        }
        if (g_nTemp == 0) atexit(remove_temps);
        g_aTemp = a;
        g_nTemp++;
    } else {
        vt__cleanup_forget(g_aTemp[i].zTrace);
        unlink(g_aTemp[i].zTrace);
        free(g_aTemp[i].zSrc);
        free(g_aTemp[i].zTrace);
    }
    g_aTemp[i].zSrc = zSrc;
    g_aTemp[i].zTrace = zTemp;
    pthread_mutex_unlock(&g_muTemp);
    *pzTemp = zTemp;
    return VT_EXIT_OK;
}

int vt__import_to_temp(const char *zPath, char **pzTrace)
{
    struct vt_import_opts o = {1, 0};
    char zErr[256], *zTemp;
    int fmt, rc;
    int64_t pid = -1;
    *pzTrace = NULL;
    rc = vt__import_detect(zPath, &fmt, zErr, sizeof zErr);
    if (rc == VT_EXIT_NOT_TRACE) { /* recognized as something no reader takes (a compressed file) */
        vt__errorf("%s: %s", zPath, zErr);
        return rc;
    }
    if (rc != VT_EXIT_OK || fmt == VT_IMPORT_UNKNOWN || fmt == VT_IMPORT_TRACE) return VT_EXIT_OK; /* the reader says why */
    if (fmt == VT_IMPORT_NSYS) {
        int64_t *aPid = NULL, *aEv = NULL;
        int n = 0;
        rc = vt__nsys_pids(zPath, &aPid, &aEv, &n, zErr, sizeof zErr);
        if (rc != VT_EXIT_OK) {
            vt__errorf("%s: %s", zPath, zErr);
            return rc;
        }
        if (n > 0) pid = aPid[0];
        if (n > 1)
            vt__errorf("%s: note: the export holds %d processes with CUDA activity; this reads process %lld (the "
                       "most events); 'vramtrace import %s -o DIR/' writes one trace per process",
                       zPath, n, (long long)pid, zPath);
        free(aPid);
        free(aEv);
    }
    if ((rc = vt__import_temp_new(zPath, &zTemp)) != VT_EXIT_OK) return rc;
    rc = vt__import_one(zPath, fmt, pid, zTemp, &o, NULL);
    if (rc != VT_EXIT_OK) return rc;
    *pzTrace = zTemp;
    return VT_EXIT_OK;
}
