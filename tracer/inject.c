/* The CUPTI glue of libvramtrace.so: injection entry, API callbacks, activity buffers, exit. */
#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "apicall.h"
#include "config.h"
#include "driver.h"
#include "flusher.h"
#include "footprint.h"
#include "memsample.h"
#include "intervals.h"
#include "jobcuda.h"
#include "layout.h"
#include "kparams.h"
#include "lend.h"
#include "nvtxctl.h"
#include "session.h"
#include "subscribers.h"
#include "watch.h"
#include "stack.h"
#include "vramtrace/schema.h"
#include "writer.h"

#define VT_EXPORT __attribute__((visibility("default")))
#define EXIT_TIMEOUT_MS 5000u   /* the writer's drain and close at exit */
#define FINAL_FLUSH_MS 3000u    /* CUPTI's forced flush at exit (a hung device never hangs the exit) */

/* Activity kinds recorded; CONCURRENT_KERNEL first (it instruments modules as they load). */
static const struct {
    CUpti_ActivityKind kind;
    const char *zName;
} aKind[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2"},
    {CUPTI_ACTIVITY_KIND_MEMORY_POOL, "MEMORY_POOL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {CUPTI_ACTIVITY_KIND_MARKER, "MARKER"},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD"},
    {CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE"},
};

static atomic_int g_init;                  /* InitializeInjection ran (double init is a no-op) */
static CUpti_SubscriberHandle g_subscriber; /* valid when g_subscribed */
static int g_subscribed;
static struct vt_config g_cfg;             /* read once in InitializeInjection */
static struct vt__flusher *g_flusher;      /* the periodic flush thread, or NULL (under g_flusherMu) */
static pthread_mutex_t g_flusherMu = PTHREAD_MUTEX_INITIALIZER; /* a kick from another thread vs the exit's stop */
static atomic_int g_fatal;                 /* CUPTI reported a fatal error: no CUPTI call any more */
static atomic_int g_closeState;            /* the trace's close (close_trace): 0 not begun, 1 under way, 2 done */
static long g_pid;                         /* the process that started tracing (a forked child's exit is not its) */

/*
 * The takeover watch (watch.h): buffer events and the calls whose MEMORY2
 * record must follow, counted by the callbacks, judged by the flush thread.
 */
static atomic_uint_fast64_t g_nBufEvents, g_nExpect;
static atomic_uint_fast64_t g_tLastBufNs; /* CUPTI clock at the last buffer event */
static int g_bWatchMemory;                /* MEMORY2 is enabled: allocations must bring records */
static struct vt__watch g_watch;          /* the flush thread's, and a lend's return (both under vt__lend_lock) */
static atomic_uint_fast64_t g_devSeen;     /* bit d: device d's row was written */

/*
 * Attribution (tracer/stack.c, tracer/intervals.c, tracer/kparams.c), opened at
 * start when configured. None needs fork handlers here: a forked child never
 * calls into them (its session is inactive, so every callback returns early).
 */
static struct vt__sites *g_sites; /* call-site capture, or NULL */
static struct vt__ivl *g_ivl;     /* live allocations for kernel-argument scanning, or NULL */
static struct vt__kparams *g_kp;  /* kernel-argument scanner over g_ivl, or NULL */

/* The CUDA the process runs and the record layouts of its CUPTI (tracer/jobcuda.c, tracer/layout.c): set at start. */
static struct vt__jobcuda g_job;
static struct vt__layout g_layout;

/* What the API-call decoder (tracer/apicall.c) uses; filled before callbacks are enabled. */
static struct vt__apicall_env g_env;

static _Thread_local struct vt__apithread t_api; /* the decoder's per-thread state */
static _Thread_local unsigned t_epoch;   /* vt__lend_epoch() when t_api was last valid */

/* Print one "vramtrace: ..." line on stderr, keeping errno. */
static void say(const char *zFmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *zFmt, ...)
{
    char z[768];
    int saved = errno;
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(z, sizeof z, zFmt, ap);
    va_end(ap);
    fprintf(stderr, "vramtrace: %s\n", z);
    errno = saved;
}

/* CUPTI's name for a result code (never NULL). */
static const char *result_name(CUptiResult r)
{
    const char *z = NULL;
    if (cuptiGetResultString(r, &z) != CUPTI_SUCCESS || !z) z = "unknown CUPTI error";
    return z;
}

/*
 * The trace's clock. CUPTI stamps records with a host clock (cupti_activity.h,
 * cuptiActivityRegisterTimestampCallback: CLOCK_REALTIME on Linux,
 * CLOCK_MONOTONIC_RAW on WSL) unless a client registers a timestamp callback,
 * as Kineto does at every torch.profiler start (TSC ticks on x86). At start the
 * tracer finds the host clock CUPTI's timestamps follow and registers a
 * callback that reads it (again when a lend ends), and reads that clock itself:
 * records and the tracer's own times agree whatever another client registered.
 */
static clockid_t g_clockId = CLOCK_REALTIME;
static int g_bOwnClock; /* the callback is registered: now_cupti reads the host clock (set once, at start) */

/* The host clock CUPTI's timestamps are on, ns; 0 if unreadable. */
static uint64_t host_clock_ns(void)
{
    struct timespec ts;
    if (clock_gettime(g_clockId, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t CUPTIAPI clock_callback(void)
{
    return host_clock_ns();
}

static uint64_t now_cupti(void)
{
    uint64_t ts = 0;
    if (g_bOwnClock) return host_clock_ns();
    if (vt__cupti_timestamp(&ts) != CUPTI_SUCCESS) ts = 0;
    return ts;
}

/*
 * At start: which host clock CUPTI's timestamps follow (the one within a
 * second of cuptiGetTimestamp; CLOCK_REALTIME, CUPTI's Linux default, when
 * none is: another client's callback was in force), then the callback that
 * keeps CUPTI on it. Sets g_bOwnClock; returns CUPTI's result.
 */
static CUptiResult own_clock(void)
{
    static const clockid_t aId[] = {CLOCK_REALTIME, CLOCK_MONOTONIC_RAW};
    uint64_t c = 0, h;
    size_t i;
    CUptiResult r;
    if (vt__cupti_timestamp(&c) != CUPTI_SUCCESS) c = 0;
    for (i = 0; i < sizeof aId / sizeof aId[0]; i++) {
        g_clockId = aId[i];
        h = host_clock_ns();
        if (c && h && (h > c ? h - c : c - h) < 1000000000u) break;
    }
    if (i == sizeof aId / sizeof aId[0]) g_clockId = CLOCK_REALTIME;
    r = vt__cupti_timestamp_callback(clock_callback);
    g_bOwnClock = r == CUPTI_SUCCESS;
    return r;
}

/* Device ordinal of a context, or -1. */
static int context_device(CUcontext ctx)
{
    uint32_t id = 0;
    if (!ctx || cuptiGetDeviceId(ctx, &id) != CUPTI_SUCCESS) return -1;
    return (int)id;
}

/* CUPTI's stream id (the one activity records carry) for a stream handle, or 0 if unknown. */
static uint64_t stream_id(CUcontext ctx, const void *hStream, int perThread)
{
    uint32_t id = 0;
    if (!ctx) return 0;
    if (cuptiGetStreamIdEx(ctx, (CUstream)(uintptr_t)hStream, (uint8_t)perThread, &id) !=
        CUPTI_SUCCESS)
        return 0;
    return id;
}

/*
 * Call-site capture: the calling thread's native stack (VRAMTRACE_BACKTRACE
 * frames) and Python stack (VRAMTRACE_PYTHON_STACKS), deduplicated by
 * stack.c. A site seen for the first time is submitted as a VT_HREC_STACK
 * record; if the writer drops it, the next capture of that site re-sends it.
 * Returns the stack id, or 0 (no capture configured, or nothing captured).
 */
static int64_t capture_site(void)
{
    struct vt_hrec rec;
    int64_t id;
    if (!g_sites) return 0;
    memset(&rec, 0, sizeof rec);
    vt__t_inTracer++;
    id = vt__site_capture(g_sites, g_cfg.backtrace, g_cfg.python_stacks, &rec);
    vt__t_inTracer--;
    if (rec.type == VT_HREC_STACK && vt__session_submit(&rec) != 0) vt__site_lost(g_sites, &rec);
    return id > 0 ? id : 0;
}

/* Write a device row the first time a context on device `dev` appears. */
static void record_device(int dev)
{
    struct vt_hrec rec;
    uint_fast64_t bit;
    if (dev < 0 || dev >= VT__MAX_DEVICES) return;
    bit = (uint_fast64_t)1 << dev;
    if (atomic_fetch_or(&g_devSeen, bit) & bit) return;
    vt__driver_device_row(dev, &rec);
    vt__session_submit(&rec);
}

/*
 * CUPTI_CBID_STATE_FATAL_ERROR: CUPTI finalizes itself after this callback
 * (cupti_callbacks.h). Record what it said (one meta row, one line), make
 * every later path leave CUPTI alone, and have the flush thread close the
 * trace with what it holds (not here: a callback must not wait on the writer).
 */
static void on_fatal(const CUpti_StateData *sd)
{
    char z[600];
    CUptiResult r = sd ? sd->notification.result : CUPTI_ERROR_UNKNOWN;
    const char *zMsg = sd && sd->notification.message ? sd->notification.message : "";
    if (atomic_exchange(&g_fatal, 1)) return;
    snprintf(z, sizeof z, "%s%s%.400s", result_name(r), zMsg[0] ? ": " : "", zMsg);
    vt__session_meta("cupti_fatal_error", z);
    snprintf(z, sizeof z, "%llu", (unsigned long long)now_cupti());
    vt__session_meta("cupti_fatal_error_ns", z);
    say("CUPTI reported a fatal error (%s%s%.300s); tracing stops, the trace %s keeps what was recorded",
        result_name(r), zMsg[0] ? ": " : "", zMsg, vt__session_path());
    pthread_mutex_lock(&g_flusherMu); /* the exit may be stopping the thread: kick it only while it is there */
    vt__flusher_kick(g_flusher);
    pthread_mutex_unlock(&g_flusherMu);
}

/* The one CUPTI callback: runtime and driver API enter/exit, resource events. */
static void CUPTIAPI on_callback(void *pUser, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *pData)
{
    int saved = errno;
    (void)pUser;

    if (vt__t_inTracer) goto done;
    if (t_epoch != vt__lend_epoch()) {
        /* the subscription changed since this thread's last call: an API entry it saw may have
         * no exit (a runtime call still "open" would hide the thread's driver calls) */
        memset(&t_api, 0, sizeof t_api);
        t_epoch = vt__lend_epoch();
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        vt__apicall_callback(&g_env, &t_api, domain, cbid, pData);
        vt__memsample_api(domain, cbid, pData);
    } else if (domain == CUPTI_CB_DOMAIN_STATE && cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
        if (vt__session_active()) on_fatal(pData);
    } else if (domain == CUPTI_CB_DOMAIN_NVTX) {
        vt__nvtx_callback(&g_env, cbid, pData);
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING) {
        vt__kparams_forget(g_kp); /* its functions' handles may name another module's next */
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        const CUpti_ResourceData *rd = pData;
        if (vt__session_active()) {
            int dev = context_device(rd->context);
            record_device(dev);
            vt__footprint_context(rd->context, dev);
            vt__memsample_context(dev);
        }
    }
done:
    errno = saved;
}

/* A buffer was requested or returned: CUPTI still hands this tracer its buffers (the watch's count). */
static void note_buffer_event(void)
{
    atomic_fetch_add(&g_nBufEvents, 1);
    if (!atomic_load(&g_fatal)) atomic_store(&g_tLastBufNs, now_cupti()); /* CUPTI is finalizing otherwise */
}

/* CUPTI asks for an activity buffer: one from the writer, or none (CUPTI then counts drops). */
static void CUPTIAPI buffer_requested(uint8_t **ppBuf, size_t *pSize, size_t *pMaxRecords)
{
    int saved = errno;
    note_buffer_event();
    *pMaxRecords = 0;
    *ppBuf = vt__session_buffer_alloc(pSize);
    if (!*ppBuf) *pSize = 0;
    errno = saved;
}

/* Report records CUPTI dropped (no buffer available) since the last query. */
static void report_cupti_drops(CUcontext ctx, uint32_t streamId)
{
    size_t n = 0;
    struct vt_hrec rec;
    if (atomic_load(&g_fatal)) return; /* CUPTI is finalizing itself: not asked any more */
    if (vt__cupti_dropped(ctx, streamId, &n) != CUPTI_SUCCESS || n == 0) return;
    memset(&rec, 0, sizeof rec);
    rec.type = VT_HREC_DROPPED;
    rec.u.dropped.ts = now_cupti();
    rec.u.dropped.source = VT_DROP_CUPTI;
    rec.u.dropped.zWhat = "activity records (no buffer: VRAMTRACE_MAX_MEMORY reached)";
    rec.u.dropped.count = n;
    vt__session_submit(&rec);
}

/* CUPTI returns a filled buffer: count CUPTI's drops, hand the buffer to the writer. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t streamId, uint8_t *pBuf, size_t size,
                                     size_t validSize)
{
    int saved = errno;
    (void)size;
    note_buffer_event();
    report_cupti_drops(ctx, streamId);
    if (pBuf) vt__session_buffer_submit(pBuf, validSize);
    errno = saved;
}

/* The writer's record iterator: cuptiActivityGetNextRecord(_v2) with writer.h's return codes. */
static int next_record(uint8_t *pBuf, size_t validSize, void **ppRecord)
{
    CUpti_Activity *pRec = *ppRecord;
    CUptiResult r = vt__cupti_next_record(pBuf, validSize, &pRec);
    if (r == CUPTI_SUCCESS) {
        *ppRecord = pRec;
        return 0;
    }
    return r == CUPTI_ERROR_MAX_LIMIT_REACHED ? 1 : -1;
}

/* Milliseconds on the monotonic clock. */
static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A successful allocation or free returned: its MEMORY2 record must follow (the watch counts). */
static void expect_record(void)
{
    if (g_bWatchMemory) atomic_fetch_add(&g_nExpect, 1);
}

/*
 * The watch's verdict: CUPTI hands the activity buffers to someone else.
 * The trace says from when (the last buffer event: nothing after it reached
 * us) and, when the record hook saw it start, who (a profiler it did not lend
 * CUPTI to: meta cupti_takeover_by, _by_ns); one line says it, and GPU
 * activity is missing from then on.
 */
static void report_takeover(void)
{
    char z[32], zWho[48], zBy[128];
    uint64_t t = atomic_load(&g_tLastBufNs), tWho = 0;
    int bWho = vt__lend_taker(zWho, sizeof zWho, &tWho); /* under the lend lock (flush_tick) */
    snprintf(z, sizeof z, "%llu", (unsigned long long)(t ? t : (uint64_t)g_cfg.time_base_ns));
    vt__session_meta("cupti_takeover_ns", z);
    snprintf(z, sizeof z, "%llu", (unsigned long long)now_cupti());
    vt__session_meta("cupti_takeover_detected_ns", z);
    if (bWho) {
        vt__session_meta("cupti_takeover_by", zWho);
        snprintf(z, sizeof z, "%llu", (unsigned long long)tWho);
        vt__session_meta("cupti_takeover_by_ns", z);
        snprintf(zBy, sizeof zBy, "%s, started %.3f s into the trace,", zWho,
                 tWho > (uint64_t)g_cfg.time_base_ns ? (double)(tWho - (uint64_t)g_cfg.time_base_ns) / 1e9 : 0.0);
    } else {
        snprintf(zBy, sizeof zBy, "another CUPTI client, not one the record hook saw (Nsight, a profiler started "
                                  "otherwise),");
    }
    say("CUPTI no longer hands this tracer its activity buffers: %s took them over; GPU activity is missing "
        "from %s from then on (meta cupti_takeover_ns), API calls are still recorded",
        zBy, vt__session_path());
}

/*
 * Close the trace, once, whoever comes first: the exit handler, or the flush thread after CUPTI's fatal
 * error (bAtExit 0). The closer writes end_ns (the clock now, unless CUPTI reported a fatal error: then
 * the writer's latest time) and says how the close went, in one line when it did not go well. A caller
 * that finds the close under way returns, except the exit handler: it waits for that close to end (at
 * most EXIT_TIMEOUT_MS and a second), so that the process never ends in the middle of it and its
 * outcome is said.
 */
static void close_trace(int bAtExit)
{
    int expected = 0, rc;
    uint64_t nDropped;
    char z[32];
    const char *zWhen = bAtExit ? "at exit" : "after CUPTI's fatal error";
    struct timespec ms = {0, 1000000};
    if (!atomic_compare_exchange_strong(&g_closeState, &expected, 1)) {
        for (unsigned i = 0; bAtExit && i < EXIT_TIMEOUT_MS + 1000 && atomic_load(&g_closeState) != 2; i++)
            nanosleep(&ms, NULL);
        return;
    }
    if (vt__session_active()) {
        if (!atomic_load(&g_fatal)) {
            snprintf(z, sizeof z, "%llu", (unsigned long long)now_cupti());
            vt__session_meta("end_ns", z);
        }
        nDropped = vt__session_dropped();
        rc = vt__session_close(EXIT_TIMEOUT_MS);
        if (rc == -EFBIG) {
            /* tracing went off at the file-size limit: the writer said so then, once */
        } else if (rc == -ETIMEDOUT)
            say("trace %s may be incomplete: its last rows were not written within %u ms %s; everything "
                "committed before is in it", vt__session_path(), EXIT_TIMEOUT_MS, zWhen);
        else if (rc == -EIO)
            say("trace %s is incomplete: rows could not be written (a full disk or an I/O error, said above); "
                "they are counted in its 'dropped' table", vt__session_path());
        else if (rc != 0)
            say("trace %s may be incomplete (closing failed: %s)", vt__session_path(), strerror(-rc));
        else if (nDropped)
            say("%llu records were dropped (writer behind; see the 'dropped' table of %s)",
                (unsigned long long)nDropped, vt__session_path());
    }
    atomic_store(&g_closeState, 2);
}

/*
 * The flush thread's periodic task: a non-forced flush hands the writer every
 * activity buffer whose records are complete, full or not, so the records of
 * a thread that makes few CUDA calls (CUPTI 13 keeps one buffer per thread)
 * reach the trace within about a flush interval instead of at exit. While
 * CUPTI is lent to another client it leaves CUPTI alone (the buffers are that
 * client's). After a fatal CUPTI error it closes the trace instead, once, and
 * calls CUPTI no more.
 */
static void flush_tick(void *pArg)
{
    (void)pArg;
    if (atomic_load(&g_fatal)) {
        close_trace(0);
        return;
    }
    if (!vt__session_active()) return;
    if (vt__subs_several()) {
        /* one of several subscribers: CUPTI hands every subscriber its own buffers, nothing to lend or watch */
        cuptiActivityFlushAll(0);
        return;
    }
    vt__lend_lock();
    vt__lend_between();
    if (!vt__lend_lent()) {
        cuptiActivityFlushAll(0);
        switch (vt__watch_tick(&g_watch, mono_ms(), atomic_load(&g_nBufEvents), atomic_load(&g_nExpect))) {
        case VT_WATCH_PROBE: cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); break;
        case VT_WATCH_TAKEN: report_takeover(); break;
        default: break;
        }
    }
    vt__lend_unlock();
}

/* Disable what was enabled: callbacks and activity kinds. Errors are irrelevant at this point. */
static void disable_all(void)
{
    size_t i;
    if (g_subscribed) {
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE);
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_NVTX);
        cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_STATE);
    }
    for (i = 0; i < sizeof aKind / sizeof aKind[0]; i++) vt__cupti_disable(aKind[i].kind);
}

/*
 * The final task (on the flush thread): forced flush, stop CUPTI, forced flush
 * of what was left. Lent to a profiler that never stopped, the buffers are
 * that client's: only the callbacks and kinds are turned off. A fatal CUPTI
 * error met on the way (CUPTI finalizes itself, even inside the flush) ends it:
 * CUPTI is not called after it.
 */
static void final_flush(void *pArg)
{
    int bOurs;
    (void)pArg;
    vt__lend_lock();
    bOurs = !vt__lend_lent();
    if (bOurs && !atomic_load(&g_fatal)) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (!atomic_load(&g_fatal)) disable_all();
    if (bOurs && !atomic_load(&g_fatal)) {
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        if (!atomic_load(&g_fatal)) report_cupti_drops(NULL, 0);
    }
    vt__lend_unlock();
}

/*
 * atexit: the final flush, waited for at most FINAL_FLUSH_MS (it runs on the
 * flush thread: a flush stuck on a hung device is left behind), then drain
 * and close the trace within EXIT_TIMEOUT_MS (close_trace). After a fatal
 * CUPTI error no CUPTI function is called, and the flush thread may be closing
 * the trace already: the exit waits for that close, which says its outcome.
 */
static void at_exit(void)
{
    int saved = errno, rcStop = 0;
    struct vt__flusher *f;
    if ((long)getpid() != g_pid) goto done; /* a forked child: the trace and the flush thread are the parent's */
    if (!vt__session_active() && atomic_load(&g_closeState) != 1) goto done; /* never started, or closed */
    pthread_mutex_lock(&g_flusherMu);
    f = g_flusher;
    g_flusher = NULL;
    pthread_mutex_unlock(&g_flusherMu);
    if (atomic_load(&g_fatal) || atomic_load(&g_closeState))
        rcStop = vt__flusher_stop(f, NULL, FINAL_FLUSH_MS + EXIT_TIMEOUT_MS); /* it may be closing the trace */
    else if (!f)
        final_flush(NULL); /* no flush thread could be started: unbounded, as before */
    else
        rcStop = vt__flusher_stop(f, final_flush, FINAL_FLUSH_MS);
    if (rcStop != 0 && !atomic_load(&g_fatal) && !atomic_load(&g_closeState)) {
        say("CUPTI's final flush did not finish within %u ms (a hung device?); activity records "
            "not delivered by then are missing from %s",
            FINAL_FLUSH_MS, vt__session_path());
        vt__session_meta("final_flush", "timeout");
    }
    close_trace(1);
done:
    errno = saved;
}

/*
 * What recorded the trace: the libcupti file and the CUDA runtime of the job
 * (file, version), the layout table and the release whose layouts decode the
 * records, and the kinds reduced (with why). Unknown facts get no row.
 */
static void record_versions_meta(void)
{
    char z[PATH_MAX + 64], zRed[256], zNewest[32];
    const char *zNewestName;
    if (g_job.zCupti[0]) vt__session_meta("cupti_library", g_job.zCupti);
    if (g_job.zOtherCupti[0]) vt__session_meta("cupti_other_library", g_job.zOtherCupti);
    if (g_job.zRuntime[0]) vt__session_meta("cuda_runtime_library", g_job.zRuntime);
    if (g_job.runtimeVersion > 0) {
        snprintf(z, sizeof z, "%d", g_job.runtimeVersion);
        vt__session_meta("cuda_runtime_version", z);
    }
    vt__cupti_version_text(vt__layout_newest(&zNewestName), zNewest, sizeof zNewest);
    snprintf(z, sizeof z, "%d: CUPTI 13.0 to %s", VT_LAYOUT_TABLE_VERSION, zNewest);
    vt__session_meta("cupti_layout_table", z);
    vt__layout_reduced_names(&g_layout, zRed, sizeof zRed);
    if (g_layout.status == VT_LAYOUT_KNOWN) snprintf(z, sizeof z, "%s", g_layout.zRelease);
    else snprintf(z, sizeof z, "unknown: CUPTI API version %u is %s", (unsigned)g_layout.version,
                  g_layout.status == VT_LAYOUT_NEWER ? "newer than the table" : "an update the table does not list");
    vt__session_meta("cupti_layout", z);
    if (zRed[0]) {
        snprintf(z, sizeof z, "%s: record layout unknown for CUPTI API version %u (the table knows 13.0 to %s); "
                 "their records are not read", zRed, (unsigned)g_layout.version, zNewest);
        vt__session_meta("cupti_kinds_reduced", z);
    }
}

/*
 * Decide whether this process can be traced with its CUPTI and CUDA runtime:
 * the job's runtime must be CUDA 13 or later (when one is loaded), the
 * libcupti a CUDA 13 one; the layouts of its version are selected (and made
 * the decoders'); reduced kinds are said in one line. Calls no CUPTI function
 * but cuptiGetVersion. Returns 0, or -1 with the one line printed.
 */
static int check_versions(void)
{
    char zV[32], zWheel[32], zNewest[32], zRed[256];
    uint32_t v = 0;
    vt__jobcuda_probe(&g_job, (const void *)cuptiGetVersion);
    if (g_job.runtimeMajor > 0 && g_job.runtimeMajor < 13) {
        if (g_job.runtimeVersion > 0) {
            snprintf(zV, sizeof zV, "%d.%d", g_job.runtimeVersion / 1000, g_job.runtimeVersion % 1000 / 10);
            snprintf(zWheel, sizeof zWheel, "cu%d%d", g_job.runtimeVersion / 1000, g_job.runtimeVersion % 1000 / 10);
        } else {
            snprintf(zV, sizeof zV, "%d", g_job.runtimeMajor);
            snprintf(zWheel, sizeof zWheel, "cu%dx", g_job.runtimeMajor);
        }
        say("tracing off: this job runs CUDA %s (%s) and vramtrace records CUDA 13 jobs only (it reads CUPTI "
            "13's records and CUDA 13's API parameters, and does not build against CUDA %d); to trace it, run the "
            "job's CUDA 13 build (e.g. a cu130 PyTorch wheel instead of %s); the program runs untraced",
            zV, g_job.zRuntime, g_job.runtimeMajor, zWheel);
        return -1;
    }
    if (cuptiGetVersion(&v) != CUPTI_SUCCESS) v = 0;
    vt__layout_select(v, &g_layout);
    vt__cupti_version_text(v, zV, sizeof zV);
    if (g_layout.status == VT_LAYOUT_OLDER) {
        say("tracing off: the libcupti loaded (%s) is CUPTI %s (API version %u), and this vramtrace reads "
            "CUPTI 13's records only; make libcupti.so.13 of CUDA 13 the one loaded (VRAMTRACE_CUPTI, "
            "LD_LIBRARY_PATH); the program runs untraced",
            g_job.zCupti[0] ? g_job.zCupti : "unknown file", zV, (unsigned)v);
        return -1;
    }
    vt__layout_use(&g_layout);
    vt__layout_reduced_names(&g_layout, zRed, sizeof zRed);
    if (zRed[0]) {
        vt__cupti_version_text(vt__layout_newest(NULL), zNewest, sizeof zNewest);
        say("the record layouts of CUPTI %s (API version %u) are unknown to this vramtrace (it knows 13.0 to %s%s): "
            "%s are not recorded (read at a guessed offset they could be garbage), API calls are; use a "
            "vramtrace that knows CUPTI %s, or a CUPTI it knows (VRAMTRACE_CUPTI)",
            zV, (unsigned)v, zNewest, g_layout.status == VT_LAYOUT_NEWER ? "" : ", not this update", zRed, zV);
    }
    return 0;
}

/* Write the process-level meta rows only the glue knows (versions, clock); start and anchor go with the file. */
static void record_glue_meta(void)
{
    char z[64];
    uint32_t v = 0;
    int iDrv = 0;
    if (cuptiGetVersion(&v) == CUPTI_SUCCESS) {
        snprintf(z, sizeof z, "%u", v);
        vt__session_meta("cupti_version", z);
    }
    record_versions_meta();
    vt__session_meta("cupti_subscription", vt__subs_text());
    /* the clock of every time in the trace (see own_clock) */
    vt__session_meta("cupti_clock", !g_bOwnClock ? "CUPTI's own (cuptiGetTimestamp)"
                                    : g_clockId == CLOCK_REALTIME ? "CLOCK_REALTIME" : "CLOCK_MONOTONIC_RAW");
    if (vt__driver_version(&iDrv) == 0) {
        snprintf(z, sizeof z, "%d", iDrv);
        vt__session_meta("cuda_driver_version", z);
    }
}

/* Open call-site capture and the kernel-argument scanner as configured; warn when one cannot. */
static void open_attribution(void)
{
    static const char *const azSkip[] = {"libvramtrace", "libcupti", "libcuda.so", "libcudart",
                                         NULL};
    struct vt_sites_config sc;
    if (g_cfg.backtrace > 0 || g_cfg.python_stacks) {
        vt__sites_config_default(&sc);
        sc.azSkipModule = azSkip;
        g_sites = vt__sites_open(&sc);
        if (!g_sites) say("call sites are not recorded: cannot set up site capture");
    }
    if (g_cfg.kernel_args) {
        struct vt__kparams_config kc;
        memset(&kc, 0, sizeof kc);
        vt__driver_param_infos(&kc);
        kc.ivl = g_ivl = vt__ivl_open();
        g_kp = g_ivl ? vt__kparams_open(&kc) : NULL;
        if (!g_kp) {
            say("kernel arguments are not scanned: out of memory");
            vt__ivl_close(g_ivl);
            g_ivl = NULL;
        }
    }
}

/* Hand the API-call decoder the clock, CUPTI's lookups, the driver and the session. */
static void setup_env(void)
{
    g_env.xNow = now_cupti;
    g_env.xDevice = context_device;
    g_env.xStream = stream_id;
    g_env.xMemInfo = vt__driver_mem_info;
    g_env.xSite = capture_site;
    g_env.xActive = vt__session_active;
    g_env.xSubmit = vt__session_submit;
    g_env.ivl = g_ivl;
    g_env.kp = g_kp;
    g_env.xAddressRange = vt__driver_address_range;
    g_env.xHandleLocation = vt__driver_handle_location;
    g_env.xExpect = expect_record;
    vt__memsample_start(now_cupti, context_device);
}

/* Enable the API callbacks we record; returns how many could not be enabled. */
static int enable_callbacks(void)
{
    int nFail = 0;
    static const CUpti_CallbackDomain aDomain[] = {CUPTI_CB_DOMAIN_RUNTIME_API,
                                                   CUPTI_CB_DOMAIN_DRIVER_API};
    const CUpti_CallbackId *aNvtx;
    size_t d, i, n;
    for (d = 0; d < sizeof aDomain / sizeof aDomain[0]; d++) {
        const struct vt__api *a = vt__api_table(aDomain[d], &n);
        for (i = 0; i < n; i++)
            if (cuptiEnableCallback(1, g_subscriber, aDomain[d], a[i].cbid) != CUPTI_SUCCESS) nFail++;
    }
    if (cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                            CUPTI_CBID_RESOURCE_CONTEXT_CREATED) != CUPTI_SUCCESS)
        nFail++;
    if (g_kp && cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING) != CUPTI_SUCCESS)
        nFail++;
    /* CUPTI's fatal errors (it finalizes itself after telling): close the trace cleanly */
    if (cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR) !=
        CUPTI_SUCCESS)
        nFail++;
    /* the start/end range calls of NVTX, to tell their markers from push/pop ones */
    aNvtx = vt__nvtx_cbids(&n);
    for (i = 0; i < n; i++)
        if (cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_NVTX, aNvtx[i]) != CUPTI_SUCCESS) nFail++;
    return nFail;
}

/*
 * Enable the activity kinds (at start every kind whose layout is known, after
 * a lend those enabled at start): the kinds that failed are listed in zFailed
 * (empty when none). Returns how many failed.
 */
static int enable_activities(char *zFailed, size_t nFailed)
{
    static int abOn[sizeof aKind / sizeof aKind[0]]; /* enabled at start */
    static int bStarted;
    size_t i, n = 0;
    int nFail = 0;
    zFailed[0] = '\0';
    for (i = 0; i < sizeof aKind / sizeof aKind[0]; i++) {
        CUptiResult r;
        if (!g_layout.aFmt[vt__layout_kind(aKind[i].kind)]) continue; /* reduced: said at start */
        if (bStarted && !abOn[i]) continue;
        r = vt__cupti_enable(aKind[i].kind);
        if (r == CUPTI_SUCCESS && aKind[i].kind == CUPTI_ACTIVITY_KIND_MEMORY2) g_bWatchMemory = 1;
        if (!bStarted) abOn[i] = r == CUPTI_SUCCESS;
        if (r == CUPTI_SUCCESS) continue;
        nFail++;
        if (n < nFailed)
            n += (size_t)snprintf(zFailed + n, nFailed - n, "%s%s (%s)", n ? ", " : "", aKind[i].zName,
                                  result_name(r));
    }
    bStarted = 1;
    return nFail;
}

/* Disable the activity kinds the tracer reads (every kind whose layout is known). */
static void disable_activities(void)
{
    size_t i;
    for (i = 0; i < sizeof aKind / sizeof aKind[0]; i++)
        if (g_layout.aFmt[vt__layout_kind(aKind[i].kind)]) vt__cupti_disable(aKind[i].kind);
}

/*
 * Subscribe (subscribers.h: one of several subscribers where CUPTI allows it
 * and VRAMTRACE_SUBSCRIBERS does, else the single subscriber; the other
 * subscriber named into zOld, nOld > CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN, "" when
 * unnamed). Sets g_subscriber and g_subscribed on success. Returns CUPTI's result.
 */
static CUptiResult subscribe_cupti(char *zOld, size_t nOld)
{
    CUptiResult r = vt__subs_subscribe((enum vt__subs_policy)g_cfg.subscribers, g_cfg.lend_cupti,
                                       (CUpti_CallbackFunc)on_callback, &g_subscriber, zOld, nOld);
    if (r == CUPTI_SUCCESS) g_subscribed = 1;
    return r;
}

/* Subscribe to CUPTI at start; on failure print the one explanatory line and return -1. */
static int subscribe(void)
{
    char zOld[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1];
    CUptiResult r = subscribe_cupti(zOld, sizeof zOld);
    if (r == CUPTI_SUCCESS) return 0;
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        /* Kineto subscribes without a name: a profiler the record hook saw start is the likely one */
        if (!zOld[0] && vt__lend_early_client()[0]) snprintf(zOld, sizeof zOld, "%s", vt__lend_early_client());
        say("tracing off: another CUPTI tool already profiles this process%s%s%s and CUPTI allows "
            "only one (%s; e.g. Nsight Systems, Nsight Compute, compute-sanitizer, cuda-gdb, "
            "PyTorch's profiler); run without the other profiler, or use it alone",
            zOld[0] ? " (" : "", zOld, zOld[0] ? ")" : "", result_name(r));
    } else {
        say("tracing off: CUPTI cannot attach (cuptiSubscribe: %s); the program runs untraced",
            result_name(r));
    }
    return -1;
}

/* The lend's (lend.h) view of the glue: a line, meta rows, the subscription, callbacks and kinds. */
static void glue_say(const char *zLine)
{
    say("%s", zLine);
}

static void glue_meta(const char *zKey, const char *zValue)
{
    vt__session_meta(zKey, zValue);
}

static void glue_unsubscribe(void)
{
    if (!g_subscribed) return;
    cuptiUnsubscribe(g_subscriber);
    g_subscribed = 0;
}

static void glue_report_drops(void)
{
    report_cupti_drops(NULL, 0);
}

static CUptiResult glue_own_callbacks(void)
{
    CUptiResult r = vt__cupti_timestamp_callback(clock_callback);
    return r != CUPTI_SUCCESS ? r : vt__cupti_register_buffers(buffer_requested, buffer_completed);
}

static void glue_rewatch(void)
{
    vt__watch_init(&g_watch, 20 * (g_cfg.flush_ms ? g_cfg.flush_ms : 500));
}

/* nvtxctl's control handler: a lend step, when this process traces (never in a forked child). */
static void on_control(const char *zMsg)
{
    vt__lend_control(zMsg, vt__session_active() && !atomic_load(&g_fatal));
}

/* Hand the lend what it needs, once tracing runs (before any callback is enabled). */
static void start_lend(void)
{
    static struct vt__lend_glue glue;
    glue.xSay = glue_say;
    glue.xNow = now_cupti;
    glue.xMeta = glue_meta;
    glue.xPath = vt__session_path;
    glue.xResultName = result_name;
    glue.xSubscribe = subscribe_cupti;
    glue.xUnsubscribe = glue_unsubscribe;
    glue.xEnableCallbacks = enable_callbacks;
    glue.xEnableKinds = enable_activities;
    glue.xDisableKinds = disable_activities;
    glue.xReportDrops = glue_report_drops;
    glue.xOwnCallbacks = glue_own_callbacks;
    glue.xRewatch = glue_rewatch;
    glue.bOwnClock = g_bOwnClock;
    glue.bQuiet = g_cfg.quiet;
    vt__lend_start(&glue);
}

/*
 * The CUDA driver calls this once when CUDA_INJECTION64_PATH names this library.
 * Never fails the host: on any problem one "vramtrace:" line is printed and
 * tracing stays off. Returns 1 (the driver treats the injection as loaded).
 */
VT_EXPORT int InitializeInjection(void)
{
    int saved = errno;
    char zErr[600];
    CUptiResult r;
    int nFail;

    if (atomic_exchange(&g_init, 1)) goto done;
    vt__config_load(&g_cfg, vt__config_getenv);
    if (g_cfg.zWarn[0]) fputs(g_cfg.zWarn, stderr);
    if (g_cfg.disabled) goto done;
    vt__driver_load();
    if (check_versions() != 0) goto done;
    if (vt__lend_early(zErr, sizeof zErr)) {
        say("tracing off: %s was started before the job's first CUDA call and holds CUPTI, which the tracer "
            "does not take from it; start the profiler after CUDA is initialized (e.g. after moving the "
            "model to the GPU) to trace the job beside it",
            zErr);
        goto done;
    }

    /* Subscribe before creating anything: if CUPTI is unavailable nothing is left on disk. */
    if (subscribe() != 0) goto done;
    own_clock(); /* CUPTI's timestamps on a host clock the tracer reads itself (no lending without) */
    zErr[0] = '\0';
    {
        /* rows store times relative to it; it is start_ns and, with the wall clock read right after
         * it, the clock anchor: all three committed with the trace's first rows (vt__session_start) */
        struct timespec ts;
        g_cfg.time_base_ns = (long long)now_cupti();
        clock_gettime(CLOCK_REALTIME, &ts);
        g_cfg.anchor_wall_ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    }
    if (vt__session_start(&g_cfg, next_record, zErr, sizeof zErr) != 0) {
        say("tracing off: %s", zErr);
        goto fail;
    }
    r = vt__cupti_register_buffers(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        say("tracing off: cannot register CUPTI activity buffers (%s)", result_name(r));
        vt__session_abort();
        goto fail;
    }
    open_attribution();
    setup_env();
    /* thread ids in activity records (markers, overhead) as gettid gives them, the same as
     * api_call.thread, so ranges and calls of one thread join (the default is pthread_self) */
    r = vt__cupti_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (r != CUPTI_SUCCESS)
        say("NVTX ranges keep CUPTI's own thread ids (cuptiSetThreadIdType: %s): they may not join API "
            "calls by thread", result_name(r));
    if (enable_activities(zErr, sizeof zErr) != 0)
        say("cannot enable CUPTI activity %s; those events are not recorded", zErr);
    nFail = enable_callbacks();
    if (nFail) say("%d CUPTI API callbacks could not be enabled; those calls are not recorded", nFail);
    record_glue_meta();
    vt__footprint_start();
    /* allocations waiting 20 flush intervals (10 s by default) for a buffer event: probe */
    glue_rewatch();
    if (!vt__subs_several()) start_lend(); /* one of several: nothing to lend, the profiler subscribes itself */
    g_pid = (long)getpid();
    pthread_mutex_lock(&g_flusherMu);
    g_flusher = vt__flusher_start(g_cfg.flush_ms, flush_tick, NULL);
    pthread_mutex_unlock(&g_flusherMu);
    if (!g_flusher)
        say("cannot start the flush thread: records of threads that make few CUDA calls reach the "
            "trace only when their buffer fills or at exit");
    if (atexit(at_exit) != 0) {
        struct vt__flusher *f;
        say("tracing off: cannot register the exit handler");
        pthread_mutex_lock(&g_flusherMu);
        f = g_flusher;
        g_flusher = NULL;
        pthread_mutex_unlock(&g_flusherMu);
        vt__flusher_stop(f, NULL, FINAL_FLUSH_MS);
        disable_all();
        vt__session_abort();
        goto fail;
    }
    if (!g_cfg.quiet) say("tracing process %ld to %s", (long)getpid(), vt__session_path());
    goto done;
fail:
    if (g_subscribed) {
        cuptiUnsubscribe(g_subscriber);
        g_subscribed = 0;
    }
done:
    errno = saved;
    return 1;
}

/* CUPTI's NVTX injection entry, looked up in the libcupti this library is linked against (once; NVTX
 * instances may initialize on several threads at once). */
static _Atomic(int (*)(const void *)) g_xCuptiNvtxInit;

/* Stands in for CUPTI's NVTX entry when the libcupti has none: NVTX stays injected for the control marks. */
static int nvtx_init_without_cupti(const void *pGetExportTable)
{
    (void)pGetExportTable;
    return 1;
}

/*
 * NVTX's injection entry, called by each NVTX instance in the traced process
 * when NVTX_INJECTION64_PATH names this library. Forwards to the libcupti this
 * library is linked against (already loaded, by soname), so NVTX ranges reach
 * the very CUPTI instance that records everything else — pointing
 * NVTX_INJECTION64_PATH at a libcupti file instead can load a second, different
 * copy — through the control-mark proxy (nvtxctl.h), which keeps nvtxMarkA for
 * the record hook's marks. Returns what CUPTI returns (0 refuses the injection:
 * NVTX then stays a no-op); 1 when the libcupti lacks the entry (NVTX ranges
 * are then not recorded, the control marks still arrive).
 */
VT_EXPORT int InitializeInjectionNvtx2(const void *pGetExportTable)
{
    int saved = errno, ok;
    int (*xInit)(const void *) = atomic_load(&g_xCuptiNvtxInit);
    if (!xInit) {
        void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
        if (h) *(void **)&xInit = dlsym(h, "InitializeInjectionNvtx2");
        if (h) dlclose(h); /* drops only the reference RTLD_NOLOAD took */
        if (!xInit) {
            say("NVTX ranges are not recorded: libcupti has no InitializeInjectionNvtx2");
            xInit = nvtx_init_without_cupti;
        }
        atomic_store(&g_xCuptiNvtxInit, xInit);
    }
    ok = vt__nvtxctl_attach(pGetExportTable, xInit, on_control);
    errno = saved;
    return ok;
}
