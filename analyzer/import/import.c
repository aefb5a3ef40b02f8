/* The import driver: one input to one trace (meta rows, notes and errors printed), and temporary traces for the readers. */
#include "import.h"

#include <pthread.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "source.h"
#include "util/cleanup.h"
#include "util/errors.h"

static const char *name_of(const char *zFile);

/* The meta rows every import writes, and the notes as import_note.N. Returns 0 or -1. */
static int import_meta(struct vt__imp *x, int fmt, int64_t pid)
{
    char zKey[32];
    const char *zName = name_of(x->zIn); /* standard input or a pipe: as it was named */
    char *zAbs = strcmp(zName, "-") ? realpath(zName, NULL) : NULL;
    int rc = vt__tb_meta(x->tb, "source_format", vt__import_format_name(fmt));
    if (!rc) rc = vt__tb_meta(x->tb, "source_file", zAbs ? zAbs : !strcmp(zName, "-") ? "standard input" : zName);
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
    char zErr[PATH_MAX + 512], zWho[64] = ""; /* the output's path, then the reason */
    int rc;
    memset(&x, 0, sizeof x);
    /* one process of an Nsight export: its notes and error say which (import -o DIR/ writes several) */
    if (pid >= 0) snprintf(zWho, sizeof zWho, ": process %lld", (long long)pid);
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
        vt__errorf("%s%s: %s", name_of(zIn), zWho, x.zErr[0] ? x.zErr : "import failed");
    }
    if (!o->bQuiet)
        for (int i = 0; i < x.nNote; i++) vt__errorf("%s%s: note: %s", name_of(zIn), zWho, x.azNote[i]);
    for (int i = 0; i < x.nNote; i++) free(x.azNote[i]);
    free(x.azNote);
    if (pnEvents) *pnEvents = x.nEvents;
    return rc;
}

/* ---- temporary files for the readers: inputs read into files, traces imported ---- */

/*
 * The files that stand for a name given on the command line in this process: standard input
 * or a pipe read into a file (vt__import_spool), the temporary trace another tool's file was
 * imported into (vt__import_input), a copy of a trace with PyTorch's history merged in (merge.c).
 * The newest entry of a name is its file; every file is removed at exit (util/cleanup.c).
 */
static struct temp {
    char *zSrc, *zTrace;
} *g_aTemp;
static int g_nTemp;
static pthread_mutex_t g_muTemp = PTHREAD_MUTEX_INITIALIZER; /* readers import on several threads (analyze -j) */

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

/* The name given on the command line that file zFile stands for (vt__import_temp_path's inverse), else zFile. */
static const char *name_of(const char *zFile)
{
    const char *z = zFile;
    pthread_mutex_lock(&g_muTemp);
    for (int i = g_nTemp; i-- > 0;)
        if (!strcmp(g_aTemp[i].zTrace, z)) z = g_aTemp[i].zSrc; /* a file made from a file made for a name */
    pthread_mutex_unlock(&g_muTemp);
    return z;
}

int vt__import_temp_new(const char *zPath, char **pzTemp)
{
    char *zTemp = NULL, *zSrc = strdup(zPath);
    struct temp *a;
    *pzTemp = NULL;
    if (!zSrc) {
        vt__errorf("%s: out of memory", zPath);
        return VT_EXIT_INTERNAL;
    }
    if (vt__cleanup_tempfile("import", &zTemp) != 0) { /* removed on a fatal signal and at exit too */
        if (errno == ENOMEM) vt__errorf("%s: out of memory", zPath);
        else
            vt__errorf("%s: cannot create a temporary file in %s (set TMPDIR to a writable directory): %s", zPath,
                       vt__cleanup_tempdir(), strerror(errno));
        free(zSrc);
        return errno == ENOMEM ? VT_EXIT_INTERNAL : VT_EXIT_NOFILE; /* an output that cannot be written */
    }
    pthread_mutex_lock(&g_muTemp);
    a = realloc(g_aTemp, (size_t)(g_nTemp + 1) * sizeof *a);
    if (a) {
        g_aTemp = a;
        g_aTemp[g_nTemp].zSrc = zSrc;
        g_aTemp[g_nTemp++].zTrace = zTemp;
    }
    pthread_mutex_unlock(&g_muTemp);
    if (!a) {
        free(zSrc);
        free(zTemp);
        vt__errorf("%s: out of memory", zPath);
        return VT_EXIT_INTERNAL;
    }
    *pzTemp = zTemp;
    return VT_EXIT_OK;
}

/*
 * Whether the file system of descriptor out can take nMore bytes and keep the spool's margin free:
 * a twentieth of its size, at least 16 MiB. An endless stream that looks like an input (blanks,
 * or text that never ends) stops there instead of filling the disk. A file system that says
 * nothing of its space is taken to have room.
 */
static int spool_room(int out, int64_t nMore, int64_t *pnFree, int64_t *pnMargin)
{
    struct statvfs v;
    if (fstatvfs(out, &v) != 0 || v.f_frsize == 0 || v.f_blocks == 0) return 1;
    *pnFree = (int64_t)v.f_bavail * (int64_t)v.f_frsize;
    *pnMargin = (int64_t)v.f_blocks * (int64_t)v.f_frsize / 20;
    if (*pnMargin < VT_SPOOL_MARGIN_MIN) *pnMargin = VT_SPOOL_MARGIN_MIN;
    return *pnFree - nMore >= *pnMargin;
}

/*
 * Copy what descriptor fd gives until its end into a new temporary file registered for zName.
 * A FIFO that nobody writes to within VT_SPOOL_WAIT_S seconds is refused (nothing would ever
 * come), and so is a stream whose first 4 KiB begin no input (vt__import_head_plausible): /dev/zero
 * would fill the disk. A stream that goes on past what TMPDIR's file system can spare
 * (spool_room, judged every VT_SPOOL_CHECK bytes) is stopped there. Returns an enum vt_exit
 * code after one line on failure.
 */
static int spool_fd(const char *zName, int fd, int bFifo)
{
    char *zTemp = NULL, aBuf[65536];
    unsigned char aHead[4096]; /* judged once full: a stream that begins no input is not read to its end */
    int out = -1, rc = vt__import_temp_new(zName, &zTemp);
    int64_t n = 0, nFree = 0, nMargin = 0;
    if (rc != VT_EXIT_OK) return rc;
    if (bFifo) { /* opened without blocking: wait for a writer's first bytes (or its end) a bounded time */
        struct pollfd pfd = {fd, POLLIN, 0};
        int k = poll(&pfd, 1, VT_SPOOL_WAIT_S * 1000);
        if (k == 0) {
            vt__errorf("%s: a FIFO with nothing written to it in %d s: nothing to read (start the writer first, "
                       "or pass a file)", zName, VT_SPOOL_WAIT_S);
            return VT_EXIT_NOFILE;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    }
    if ((out = open(zTemp, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0) {
        vt__errorf("%s: cannot copy it into %s: %s", zName, zTemp, strerror(errno));
        rc = VT_EXIT_NOFILE;
    }
    while (rc == VT_EXIT_OK) {
        ssize_t k = read(fd, aBuf, sizeof aBuf);
        if (k == 0) break;
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            vt__errorf("%s: cannot read: %s", zName, strerror(errno));
            rc = VT_EXIT_NOFILE;
            break;
        }
        if (n < (int64_t)sizeof aHead) {
            size_t m = (size_t)k < sizeof aHead - (size_t)n ? (size_t)k : sizeof aHead - (size_t)n;
            memcpy(aHead + n, aBuf, m);
            if (n + (int64_t)m == (int64_t)sizeof aHead && !vt__import_head_plausible(aHead, sizeof aHead)) {
                if (vt__src_gzip_magic(aHead, sizeof aHead) && !vt__src_can_gunzip())
                    vt__errorf("%s: %s: not read further", zName, VT__SRC_NO_GUNZIP);
                else
                    vt__errorf("%s: not a format vramtrace reads (its first bytes begin no trace, Nsight export, "
                               "PyTorch snapshot or JSON trace): not read further", zName);
                rc = VT_EXIT_NOT_TRACE;
                break;
            }
        }
        if ((n == 0 || n / VT_SPOOL_CHECK != (n + k) / VT_SPOOL_CHECK) && !spool_room(out, VT_SPOOL_CHECK, &nFree, &nMargin)) {
            vt__errorf("%s: stopped after %.1f MiB: copying more would leave %s (TMPDIR) less than %.1f MiB free "
                       "(%.1f MiB now); pass the input as a file, or set TMPDIR to a larger file system",
                       zName, (double)n / 1048576.0, vt__cleanup_tempdir(), (double)nMargin / 1048576.0,
                       (double)nFree / 1048576.0);
            rc = VT_EXIT_NOFILE;
            break;
        }
        for (ssize_t w = 0; w < k && rc == VT_EXIT_OK;) {
            ssize_t m = write(out, aBuf + w, (size_t)(k - w));
            if (m < 0 && errno == EINTR) continue;
            if (m < 0) {
                vt__errorf("%s: cannot copy it into %s: %s", zName, zTemp, strerror(errno));
                rc = VT_EXIT_NOFILE;
            }
            w += m > 0 ? m : 0;
        }
        n += k;
    }
    if (out >= 0 && close(out) != 0 && rc == VT_EXIT_OK) {
        vt__errorf("%s: cannot copy it into %s: %s", zName, zTemp, strerror(errno));
        rc = VT_EXIT_NOFILE;
    }
    if (rc == VT_EXIT_OK && n == 0) {
        vt__errorf("%s: nothing to read (an empty pipe or standard input)", zName);
        rc = VT_EXIT_NOT_TRACE;
    }
    return rc;
}

int vt__import_spool(const char *zName)
{
    struct stat st;
    int fd, rc, bStdin = !strcmp(zName, "-");
    if (strcmp(vt__import_temp_path(zName), zName) != 0) return VT_EXIT_OK; /* read already */
    if (bStdin) {
        if (fstat(0, &st) != 0) {
            vt__errorf("-: standard input: %s", strerror(errno));
            return VT_EXIT_NOFILE;
        }
        if (isatty(0)) {
            vt__errorf("-: standard input is a terminal: pipe a trace or another tool's file into it");
            return VT_EXIT_USAGE;
        }
        return spool_fd(zName, 0, 0); /* a pipe, or a file read from where it stands */
    }
    if (stat(zName, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return VT_EXIT_OK; /* the reader says */
    if (S_ISBLK(st.st_mode) || (S_ISCHR(st.st_mode) && !strncmp(zName, "/dev/tty", 8))) {
        vt__errorf("%s: a device, not a file", zName);
        return VT_EXIT_NOFILE;
    }
    /* a pipe (/dev/fd/N of a shell's <(...)), a FIFO, a socket or a character device: read it once into a
     * file, since every reader (SQLite, the importers) reads its input more than once */
    fd = open(zName, O_RDONLY | O_CLOEXEC | (S_ISFIFO(st.st_mode) ? O_NONBLOCK : 0));
    if (fd < 0) {
        vt__errorf("%s: %s", zName, strerror(errno));
        return VT_EXIT_NOFILE;
    }
    rc = spool_fd(zName, fd, S_ISFIFO(st.st_mode));
    close(fd);
    return rc;
}

int vt__import_input(const char *zName, struct vt_input *pIn)
{
    struct vt_import_opts o = {1, 0};
    char zErr[256], *zTemp;
    const char *zFile = vt__import_temp_path(zName); /* a file read from a pipe, a merged copy, an import */
    int rc;
    int64_t pid = -1;
    struct stat st;
    memset(pIn, 0, sizeof *pIn);
    pIn->zFile = zFile;
    if (stat(zFile, &st) == 0 && S_ISDIR(st.st_mode)) { /* a reader given one (redact): not "a file to import" */
        if (!vt__input_was_said(zName)) vt__errorf("%s: is a directory, not a trace", zName);
        return VT_EXIT_NOFILE;
    }
    rc = vt__import_detect(zFile, &pIn->fmt, zErr, sizeof zErr);
    if (rc != VT_EXIT_OK) {
        vt__errorf("%s: %s", zName, zErr);
        return rc;
    }
    if (pIn->fmt == VT_IMPORT_UNKNOWN || pIn->fmt == VT_IMPORT_TRACE) return VT_EXIT_OK; /* the reader says why */
    if (pIn->fmt == VT_IMPORT_NSYS) {
        int64_t *aPid = NULL, *aEv = NULL;
        int n = 0;
        rc = vt__nsys_pids(zFile, &aPid, &aEv, &n, zErr, sizeof zErr);
        if (rc != VT_EXIT_OK) {
            vt__errorf("%s: %s", zName, zErr);
            return rc;
        }
        if (n > 0) pid = aPid[0];
        if (n > 1)
            vt__errorf("%s: note: the export holds %d processes with CUDA activity; this reads process %lld (the "
                       "most events); 'vramtrace import %s -o DIR/' writes one trace per process",
                       zName, n, (long long)pid, zName);
        free(aPid);
        free(aEv);
    }
    if ((rc = vt__import_temp_new(zName, &zTemp)) != VT_EXIT_OK) return rc;
    if ((rc = vt__import_one(zFile, pIn->fmt, pid, zTemp, &o, NULL)) != VT_EXIT_OK) return rc;
    pIn->zFile = zTemp;
    pIn->bImported = 1;
    return VT_EXIT_OK;
}
