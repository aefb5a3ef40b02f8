/* The tracing session: output file, writer lifecycle, fork safety; no CUPTI here. */
#include "session.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "outfile.h"
#include "procinfo.h"

#ifndef VT_VERSION
#define VT_VERSION "unknown"
#endif

/* Lifecycle lock: start, close, abort and the fork handlers hold it; submitters never do. */
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct vt_writer *g_writer; /* valid while g_active (and g_inflight keeps it alive) */
static atomic_int g_active;        /* 1: records are accepted */
static atomic_int g_inflight;      /* submitters currently inside the writer */
static struct vt_outfile g_file;
static int g_atfork_done;

/* Free the heap pointers a host record carries (for records that never reach the writer). */
static void free_hrec_heap(const struct vt_hrec *rec)
{
    int i;
    if (rec->type == VT_HREC_META) {
        free(rec->u.meta.zValue);
    } else if (rec->type == VT_HREC_STACK && rec->u.stack.aFrame) {
        for (i = 0; i < rec->u.stack.nFrame; i++) {
            free(rec->u.stack.aFrame[i].zFunction);
            free(rec->u.stack.aFrame[i].zFile);
            free(rec->u.stack.aFrame[i].zModule);
        }
        free(rec->u.stack.aFrame);
    }
}

/* Enter the writer: returns it with g_inflight held, or NULL (nothing held) when inactive. */
static struct vt_writer *enter(void)
{
    atomic_fetch_add(&g_inflight, 1);
    if (!atomic_load(&g_active)) {
        atomic_fetch_sub(&g_inflight, 1);
        return NULL;
    }
    return g_writer;
}

static void leave(void)
{
    atomic_fetch_sub(&g_inflight, 1);
}

/* pthread_atfork prepare: keep the writer's state consistent across fork. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&g_mutex);
    if (atomic_load(&g_active) && g_writer) vt__writer_fork_prepare(g_writer);
}

/* pthread_atfork parent: release what prepare took. */
static void fork_parent(void)
{
    if (atomic_load(&g_active) && g_writer) vt__writer_fork_parent(g_writer);
    pthread_mutex_unlock(&g_mutex);
}

/* pthread_atfork child: forget the parent's writer without touching it; tracing stays off. */
static void fork_child(void)
{
    struct vt_writer *w = g_writer;
    int bActive = atomic_load(&g_active);
    atomic_store(&g_active, 0);
    atomic_store(&g_inflight, 0); /* the threads that were inside do not exist here */
    g_writer = NULL;
    memset(&g_file, 0, sizeof g_file); /* the file is the parent's: never remove it from here */
    if (bActive && w) vt__writer_abandon(w);
    pthread_mutex_unlock(&g_mutex);
}

/* What the trace's first meta rows are made of (start_meta). */
struct start_meta_ctx {
    const struct vt_config *cfg;
    const struct vt_procinfo *pi;
};

/*
 * The rows that say whose trace it is (tracer version, config.*, pid, command line, host, ranks,
 * allowed environment) and when it started (start_ns and the clock anchor, from the time base and
 * the wall clock read with it, when the caller set them), for the writer to commit when it creates
 * the file: a job killed before the first commit still has them. Returns 0 or what xSet returned.
 */
static int start_meta(void *pCtx, int (*xSet)(void *pSet, const char *zKey, const char *zValue), void *pSet)
{
    const struct start_meta_ctx *c = pCtx;
    char z[32];
    int rc = xSet(pSet, "tracer_version", VT_VERSION);
    if (rc == 0) rc = vt__config_meta(c->cfg, xSet, pSet);
    if (rc == 0) rc = vt__procinfo_meta(c->pi, vt__config_getenv, xSet, pSet);
    if (rc == 0 && c->cfg->time_base_ns > 0) {
        snprintf(z, sizeof z, "%lld", c->cfg->time_base_ns);
        rc = xSet(pSet, "start_ns", z);
        if (rc == 0 && c->cfg->anchor_wall_ns > 0) {
            rc = xSet(pSet, "clock_anchor_cupti_ns", z);
            snprintf(z, sizeof z, "%lld", c->cfg->anchor_wall_ns);
            if (rc == 0) rc = xSet(pSet, "clock_anchor_wall_ns", z);
        }
    }
    return rc;
}

/* Wait until no submitter is inside the writer, at most nMs milliseconds. Returns 0 or -1. */
static int drain_inflight(unsigned nMs)
{
    struct timespec ts = {0, 1000000};
    unsigned i;
    for (i = 0; i <= nMs; i++) {
        if (atomic_load(&g_inflight) == 0) return 0;
        nanosleep(&ts, NULL);
    }
    return -1;
}

int vt__session_start(const struct vt_config *cfg,
                      int (*xNextRecord)(uint8_t *pBuf, size_t validSize, void **ppRecord),
                      char *zErr, size_t nErr)
{
    static struct vt_procinfo pi; /* large: keep it off the host thread's stack */
    struct vt_writer_config wcfg;
    struct start_meta_ctx meta = {cfg, &pi};
    struct vt_writer *w = NULL;
    char zPath[sizeof g_file.zPath];
    char zWhy[512];
    int rc = -1, bFile = 0;

    pthread_mutex_lock(&g_mutex);
    if (atomic_load(&g_active)) {
        snprintf(zErr, nErr, "tracing already started (trace %s)", g_file.zPath);
        goto done;
    }
    vt__procinfo_load(&pi, vt__config_getenv);
    if (vt__outfile_expand(cfg->zOutput, pi.pid, pi.zRank, pi.zHost, zPath, sizeof zPath) != 0) {
        snprintf(zErr, nErr, "VRAMTRACE_OUTPUT='%.200s' does not expand to a usable path",
                 cfg->zOutput);
        goto done;
    }
    if (vt__outfile_create(zPath, &g_file, zErr, nErr) != 0) goto done;
    bFile = 1;

    vt__writer_config_default(&wcfg);
    wcfg.buffer_size = cfg->buffer_size;
    wcfg.max_memory = cfg->max_memory;
    wcfg.flush_ms = cfg->flush_ms;
    wcfg.time_base_ns = cfg->time_base_ns;
    wcfg.max_bytes = cfg->max_bytes;
    wcfg.start_after_ns = cfg->start_after_ns;
    wcfg.stop_after_ns = cfg->stop_after_ns;
    if (cfg->kernels_summary) {
        wcfg.kernel_warmup_ns = cfg->kernel_warmup_ns;
        wcfg.kernel_period_ns = cfg->kernel_period_ns;
    }
    wcfg.xNextRecord = xNextRecord;
    wcfg.xMeta = start_meta; /* committed with the file: a job killed at once still says whose trace it is */
    wcfg.pMetaCtx = &meta;
    zWhy[0] = '\0';
    w = vt__writer_open(g_file.zPath, &wcfg, zWhy, sizeof zWhy);
    if (!w) {
        size_t nPath = strlen(g_file.zPath);
        const char *zReason = zWhy[0] ? zWhy : "unknown error";
        if (!strncmp(zReason, g_file.zPath, nPath) && !strncmp(zReason + nPath, ": ", 2)) zReason += nPath + 2;
        snprintf(zErr, nErr, "cannot open trace %s: %s", g_file.zPath, zReason); /* the path said once */
        goto done;
    }
    if (vt__outfile_verify(&g_file, zErr, nErr) != 0) goto done;
    rc = vt__writer_start(w);
    if (rc != 0) {
        snprintf(zErr, nErr, "cannot start the trace writer: %s", strerror(-rc));
        rc = -1;
        goto done;
    }
    if (!g_atfork_done) {
        if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0) {
            snprintf(zErr, nErr, "cannot register fork handlers");
            goto done;
        }
        g_atfork_done = 1;
    }
    g_writer = w;
    w = NULL;
    atomic_store(&g_active, 1);
    rc = 0;
done:
    if (w) vt__writer_close(w, 1000); /* set-up failed after the writer existed */
    if (rc != 0 && bFile) vt__outfile_remove(&g_file);
    if (rc != 0) memset(&g_file, 0, sizeof g_file);
    pthread_mutex_unlock(&g_mutex);
    return rc;
}

int vt__session_active(void)
{
    return atomic_load(&g_active);
}

const char *vt__session_path(void)
{
    return g_file.zPath;
}

int vt__session_submit(const struct vt_hrec *rec)
{
    struct vt_writer *w = enter();
    int rc;
    if (!w) {
        free_hrec_heap(rec);
        return -1;
    }
    rc = vt__writer_submit(w, rec);
    leave();
    return rc;
}

int vt__session_meta(const char *zKey, const char *zValue)
{
    struct vt_hrec rec;
    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_META;
    snprintf(rec.u.meta.zKey, sizeof rec.u.meta.zKey, "%s", zKey);
    rec.u.meta.zValue = strdup(zValue ? zValue : "");
    if (!rec.u.meta.zValue) return -1;
    return vt__session_submit(&rec);
}

uint8_t *vt__session_buffer_alloc(size_t *pSize)
{
    struct vt_writer *w = enter();
    uint8_t *pBuf;
    if (!w) {
        *pSize = 0;
        return NULL;
    }
    pBuf = vt__writer_buffer_alloc(w, pSize);
    if (!pBuf) *pSize = 0;
    leave();
    return pBuf;
}

void vt__session_buffer_submit(uint8_t *pBuf, size_t validSize)
{
    struct vt_writer *w = enter();
    if (!w) return; /* inactive: the buffer belongs to a writer that is gone or the parent's */
    vt__writer_buffer_submit(w, pBuf, validSize);
    leave();
}

uint64_t vt__session_dropped(void)
{
    struct vt_writer *w = enter();
    uint64_t n;
    if (!w) return 0;
    n = vt__writer_dropped(w);
    leave();
    return n;
}

/* Close the active session; bRemove also deletes the trace file. Caller holds no lock. */
static int end_session(unsigned timeout_ms, int bRemove)
{
    struct vt_writer *w;
    int rc = -1;
    pthread_mutex_lock(&g_mutex);
    if (!atomic_load(&g_active)) goto done;
    atomic_store(&g_active, 0);
    if (drain_inflight(timeout_ms < 1000 ? timeout_ms : 1000) != 0) {
        /* A submitter is stuck inside the writer: freeing it now could crash the host. The
         * trace keeps everything committed so far. */
        fprintf(stderr, "vramtrace: trace %s not closed: a recording thread did not finish\n",
                g_file.zPath);
        rc = -EBUSY;
        goto done;
    }
    w = g_writer;
    g_writer = NULL;
    rc = vt__writer_close(w, timeout_ms);
    if (bRemove) vt__outfile_remove(&g_file);
done:
    pthread_mutex_unlock(&g_mutex);
    return rc;
}

int vt__session_close(unsigned timeout_ms)
{
    return end_session(timeout_ms, 0);
}

void vt__session_abort(void)
{
    end_session(1000, 1);
    memset(&g_file, 0, sizeof g_file);
}
