/* The scripted CUPTI harness: a CUPTI, driver and CUDA runtime that a test program exports to libvramtrace.so. */
#ifndef VT_TESTS_CUPTI_HARNESS_H
#define VT_TESTS_CUPTI_HARNESS_H
#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "apicall.h"
#include "core_rec.h"
#include "nvtxctl.h"
#include "vt_test.h"

#ifndef VT_INJECT_SO
#error "VT_INJECT_SO must name the built libvramtrace.so"
#endif

/*
 * This program is linked with -rdynamic: the CUPTI and driver functions below
 * are found before libcupti's own by the library's symbol lookup (and the
 * driver ones by its dlsym), so the tests can drive InitializeInjection and
 * the callbacks exactly as CUDA would, on a machine without a GPU.
 */
enum { MODE_OK, MODE_MULTIPLE, MODE_REGISTER_FAILS };
static int g_mode;
static CUpti_CallbackFunc g_callback;
static CUpti_BuffersCallbackRequestFunc g_request;
static CUpti_BuffersCallbackCompleteFunc g_complete;
static int g_nEnabledCallbacks, g_nEnabledKinds, g_nUnsubscribed;
static size_t g_nDropped;

#define FAKE_FREE ((size_t)1 << 30)
#define FAKE_TOTAL ((size_t)80 << 30)

/*
 * One subscriber at a time, as CUPTI 13.0 to 13.2 allow: g_callback is the
 * holder's callback (NULL: none), handed out as handle g_nextHandle++.
 */
static CUpti_SubscriberHandle g_holder;
static char g_zHolder[64];
static uintptr_t g_nextHandle = 0x5b;

/*
 * CUPTI 13.3's several subscribers (docs/tracer.md, "Several subscribers"):
 * CUPTI_ACTIVITY_ATTR_MULTIPLE_SUBSCRIBER_STATE (2: not chosen, 0: single, 1:
 * several), chosen by the first cuptiSubscribe_v2; in several mode each
 * subscriber of g_aSub has its callback, buffer callbacks (V2 signatures),
 * kinds and one buffer, and the unversioned activity functions are refused
 * (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, counted in g_nMixed). Only
 * a program that defines VT_HARNESS_V2 exports the V2 entry points.
 */
#define MAX_SUBS 4
#define SUBS_PARAMS_SIZE_V2 40u
typedef void(CUPTIAPI *harness_request2)(uint8_t **, size_t *, size_t *, void *);
typedef void(CUPTIAPI *harness_complete2)(uint8_t *, size_t, size_t, void *);
static uint8_t g_multiState = 2;
static int g_bOldDriver; /* a driver older than r610: several subscribers are asked for, never granted */
static atomic_int g_nMixed;
static struct {
    CUpti_SubscriberHandle h;
    CUpti_CallbackFunc cb;
    harness_request2 xRequest;
    harness_complete2 xComplete;
    uint64_t kinds;
    uint8_t *p;
    size_t cap, off;
    int nCallbacks;
} g_aSub[MAX_SUBS];
static int g_nSub;

/* An unversioned activity function called in several mode: CUPTI refuses to mix the two APIs. */
#define REFUSE_IF_SEVERAL()                                                                                          \
    do {                                                                                                             \
        if (g_multiState == 1) {                                                                                     \
            atomic_fetch_add(&g_nMixed, 1);                                                                          \
            return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;                                                   \
        }                                                                                                            \
    } while (0)

/* The subscriber slot of handle h, or -1. */
static int sub_of(CUpti_SubscriberHandle h)
{
    for (int i = 0; i < g_nSub; i++)
        if (g_aSub[i].h == h) return i;
    return -1;
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                              void *userdata, CUpti_SubscriberParams *pParams)
{
    (void)userdata;
    if (pParams && pParams->structSize >= SUBS_PARAMS_SIZE_V2 && ((const uint8_t *)pParams)[32] &&
        g_mode != MODE_MULTIPLE && !g_callback && g_multiState != 0 && !g_bOldDriver) {
        /* allowMultipleSubscribers (offset 32 of CUPTI 13.2+'s struct): one more subscriber */
        if (g_nSub == MAX_SUBS) return CUPTI_ERROR_MAX_LIMIT_REACHED;
        g_multiState = 1;
        if (pParams->oldSubscriberName && g_nSub)
            snprintf(pParams->oldSubscriberName, pParams->oldSubscriberSize, "CUPTI for another tool");
        g_aSub[g_nSub].h = (CUpti_SubscriberHandle)g_nextHandle++;
        g_aSub[g_nSub].cb = callback;
        *subscriber = g_aSub[g_nSub++].h;
        return CUPTI_SUCCESS;
    }
    if (g_mode == MODE_MULTIPLE || g_callback || g_multiState == 1) {
        if (pParams && pParams->oldSubscriberName)
            snprintf(pParams->oldSubscriberName, pParams->oldSubscriberSize, "%s",
                     g_mode == MODE_MULTIPLE ? "CUPTI for Nsight Systems" : g_zHolder);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    g_callback = callback;
    if (g_multiState == 2) g_multiState = 0; /* the first subscriber chose one */
    snprintf(g_zHolder, sizeof g_zHolder, "%s", pParams && pParams->subscriberName ? pParams->subscriberName : "");
    *subscriber = g_holder = (CUpti_SubscriberHandle)g_nextHandle++;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
    return cuptiSubscribe_v2(subscriber, callback, userdata, NULL);
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    int i = sub_of(subscriber);
    g_nUnsubscribed++;
    if (i >= 0) {
        memmove(&g_aSub[i], &g_aSub[i + 1], (size_t)(g_nSub - i - 1) * sizeof g_aSub[0]);
        g_nSub--;
        return CUPTI_SUCCESS;
    }
    if (!g_callback || subscriber != g_holder) return CUPTI_ERROR_INVALID_PARAMETER;
    g_callback = NULL;
    g_holder = NULL;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                           CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
    if (g_mode == MODE_REGISTER_FAILS) return CUPTI_ERROR_INVALID_OPERATION;
    REFUSE_IF_SEVERAL();
    g_request = funcBufferRequested;
    g_complete = funcBufferCompleted;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    (void)subscriber;
    (void)domain;
    (void)cbid;
    g_nEnabledCallbacks += enable ? 1 : 0;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                              CUpti_CallbackDomain domain)
{
    (void)enable;
    (void)subscriber;
    (void)domain;
    return CUPTI_SUCCESS;
}

/* The kinds enabled, by anyone (bit k: kind k); records of other kinds are not taken when g_bGateKinds. */
static atomic_uint_fast64_t g_kindsOn;
static int g_bGateKinds;

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    REFUSE_IF_SEVERAL();
    /* one kind fails, as on a driver without it */
    if (kind == CUPTI_ACTIVITY_KIND_MEMORY_POOL) return CUPTI_ERROR_NOT_SUPPORTED;
    g_nEnabledKinds++;
    if ((unsigned)kind < 64) atomic_fetch_or(&g_kindsOn, (uint_fast64_t)1 << kind);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    REFUSE_IF_SEVERAL();
    if ((unsigned)kind < 64) atomic_fetch_and(&g_kindsOn, ~((uint_fast64_t)1 << kind));
    return CUPTI_SUCCESS;
}

/* CUPTI's clock: the registered timestamp callback's, else CLOCK_REALTIME (Linux's default). */
static CUpti_TimestampCallbackFunc g_xTimestamp;
static int g_nTimestampCallbacks;

static uint64_t harness_now(void)
{
    struct timespec ts;
    if (g_xTimestamp) return g_xTimestamp();
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
    REFUSE_IF_SEVERAL();
    if (!funcTimestamp) return CUPTI_ERROR_INVALID_PARAMETER;
    g_xTimestamp = funcTimestamp;
    g_nTimestampCallbacks++;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    REFUSE_IF_SEVERAL();
    *timestamp = harness_now();
    return CUPTI_SUCCESS;
}

/* cuptiFinalize: CUPTI detaches; every client's callbacks, kinds and timestamp source are gone. */
CUptiResult cuptiFinalize(void)
{
    g_callback = NULL;
    g_holder = NULL;
    g_request = NULL;
    g_complete = NULL;
    atomic_store(&g_kindsOn, 0);
    g_xTimestamp = NULL;
    return CUPTI_SUCCESS;
}

static uint8_t g_perThreadBuf = 1; /* CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, default 1 in CUPTI 13 */

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *pValueSize, void *pValue)
{
    REFUSE_IF_SEVERAL();
    if (attr != CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER || *pValueSize != 1) return CUPTI_ERROR_INVALID_PARAMETER;
    g_perThreadBuf = *(uint8_t *)pValue;
    return CUPTI_SUCCESS;
}

/* CUPTI's device-buffer settings: its defaults (cupti_activity.h), as the library reads them. */
static CUptiResult attribute_get(CUpti_ActivityAttribute attr, size_t *pValueSize, void *pValue)
{
    size_t v;
    switch (attr) {
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE: v = 3200000; break;
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE: v = 3; break;
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT: v = 250; break;
    case CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED:
        if (*pValueSize != 1) return CUPTI_ERROR_INVALID_PARAMETER;
        *(uint8_t *)pValue = 0;
        return CUPTI_SUCCESS;
    case CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER:
        if (*pValueSize != 1) return CUPTI_ERROR_INVALID_PARAMETER;
        *(uint8_t *)pValue = g_perThreadBuf;
        return CUPTI_SUCCESS;
    default: return CUPTI_ERROR_INVALID_PARAMETER;
    }
    if (*pValueSize != sizeof v) return CUPTI_ERROR_INVALID_PARAMETER;
    memcpy(pValue, &v, sizeof v);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t *pValueSize, void *pValue)
{
    REFUSE_IF_SEVERAL();
    return attribute_get(attr, pValueSize, pValue);
}

/* The CUPTI API version this CUPTI reports (cupti_version.h): the built-with header's unless a test says. */
static uint32_t g_cuptiVersion = CUPTI_API_VERSION;
CUptiResult cuptiGetVersion(uint32_t *version)
{
    *version = g_cuptiVersion;
    return CUPTI_SUCCESS;
}

static int g_threadIdType = -1;
CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    REFUSE_IF_SEVERAL();
    g_threadIdType = (int)type;
    return CUPTI_SUCCESS;
}

/*
 * CUPTI's activity buffers, as CUPTI 13 keeps them: one per thread that
 * records activity, requested from the library when that thread's first
 * record comes, handed back at a flush, or as soon as it is full (a real
 * CUPTI completes a full buffer and asks for the next one: a job of many
 * records loses none while the library gives buffers). A record that finds
 * no buffer (the library gave none) is dropped and counted, as
 * cuptiActivityGetNumDroppedRecords then says. Records are laid out as
 * tests/core_rec.h lays them (cuptiActivityGetNextRecord below walks them).
 */
#define MAX_HELD 16
static pthread_mutex_t g_heldMu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint8_t *p;
    size_t cap, off;
} g_aHeld[MAX_HELD];
static int g_nHeld;
static _Thread_local int t_iHeld = -1;
static atomic_int g_nFlushNormal, g_nFlushForced;
static atomic_int g_nFullBuffers; /* buffers handed back because they were full */
static atomic_int g_bHangForced; /* a forced flush never returns (a hung device) */
static atomic_int g_bFatalSent;  /* CUPTI said it is finalizing: it must not be called any more */
static atomic_int g_bTakenOver;  /* another client registered its buffer callbacks: ours get nothing */

/* CUpti_BufferCallbackCompleteInfo of the V2 completion callback: structSize, threadId, ppRecordLayouts, numRecordLayouts. */
struct harness_complete_info {
    size_t structSize;
    uint64_t threadId;
    void *ppRecordLayouts;
    size_t numRecordLayouts;
};

/*
 * Lay rec into the buffer *pp (capacity *pCap, filled to *pOff), as CUPTI fills a buffer: a full
 * buffer goes back through xDone(pDoneArg, buffer, cap, used) and the next is asked for with
 * xNew(pNewArg, &p, &cap); a record no buffer takes is counted in g_nDropped. Caller holds g_heldMu.
 */
static void harness_lay(uint8_t **pp, size_t *pCap, size_t *pOff, const void *rec, size_t size,
                        void (*xNew)(void *, uint8_t **, size_t *), void *pNewArg,
                        void (*xDone)(void *, uint8_t *, size_t, size_t), void *pDoneArg)
{
    for (int iTry = 0; iTry < 2; iTry++) {
        if (!*pp) {
            *pCap = 0;
            xNew(pNewArg, pp, pCap);
            *pOff = 0;
        }
        if (!*pp) break;
        if (core_lay(*pp, *pCap, pOff, rec, size) == 0) return;
        if (*pOff == 0) break; /* larger than a whole buffer */
        atomic_fetch_add(&g_nFullBuffers, 1);
        xDone(pDoneArg, *pp, *pCap, *pOff);
        *pp = NULL;
    }
    g_nDropped++;
}

static void held_new(void *pArg, uint8_t **pp, size_t *pCap)
{
    size_t nMax = 0;
    (void)pArg;
    if (g_request) g_request(pp, pCap, &nMax);
}

static void held_done(void *pArg, uint8_t *p, size_t cap, size_t used)
{
    (void)pArg;
    if (g_complete) g_complete(NULL, 0, p, cap, used);
}

/* pArg: the subscriber's index in g_aSub. */
static void sub_new(void *pArg, uint8_t **pp, size_t *pCap)
{
    size_t nMax = 0;
    g_aSub[(intptr_t)pArg].xRequest(pp, pCap, &nMax, NULL);
}

static void sub_done(void *pArg, uint8_t *p, size_t cap, size_t used)
{
    struct harness_complete_info info = {32, 0, NULL, 0};
    if (g_aSub[(intptr_t)pArg].xComplete) g_aSub[(intptr_t)pArg].xComplete(p, cap, used, &info);
}

/* CUPTI records an activity record of the calling thread into that thread's buffer. */
static void fake_record(const void *rec, size_t size)
{
    CUpti_ActivityKind kind;
    if (atomic_load(&g_bTakenOver)) return; /* into the other client's buffers */
    memcpy(&kind, rec, sizeof kind);
    if (g_multiState == 1) {
        /* several subscribers: into the buffer of each that enabled the kind */
        pthread_mutex_lock(&g_heldMu);
        for (int i = 0; i < g_nSub; i++) {
            if ((unsigned)kind >= 64 || !(g_aSub[i].kinds & ((uint64_t)1 << kind)) || !g_aSub[i].xRequest) continue;
            harness_lay(&g_aSub[i].p, &g_aSub[i].cap, &g_aSub[i].off, rec, size, sub_new, (void *)(intptr_t)i, sub_done,
                        (void *)(intptr_t)i);
        }
        pthread_mutex_unlock(&g_heldMu);
        return;
    }
    if (g_bGateKinds && ((unsigned)kind >= 64 || !(atomic_load(&g_kindsOn) & ((uint_fast64_t)1 << kind)))) return;
    pthread_mutex_lock(&g_heldMu);
    if (t_iHeld < 0 && g_nHeld < MAX_HELD) t_iHeld = g_nHeld++;
    if (t_iHeld >= 0 && g_request)
        harness_lay(&g_aHeld[t_iHeld].p, &g_aHeld[t_iHeld].cap, &g_aHeld[t_iHeld].off, rec, size, held_new, NULL,
                    held_done, NULL);
    pthread_mutex_unlock(&g_heldMu);
}

/* The next forced flush brings CUPTI's fatal error first (a device lost while the trace is being closed). */
static atomic_int g_bFatalInForced;

/* CUPTI's fatal-error notification to the subscriber (CUPTI_CBID_STATE_FATAL_ERROR): CUPTI finalizes itself after it. */
static void harness_fatal(const char *zMsg)
{
    CUpti_StateData sd;
    memset(&sd, 0, sizeof sd);
    sd.notification.result = CUPTI_ERROR_UNKNOWN;
    sd.notification.message = zMsg;
    atomic_store(&g_bFatalSent, 1);
    if (g_callback) g_callback(NULL, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR, &sd);
}

/* Every buffer holding records goes back to the library (the records here are all complete). */
CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    if (atomic_load(&g_bFatalSent)) fprintf(stderr, "fake CUPTI: called after its fatal error\n");
    if ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) && atomic_exchange(&g_bFatalInForced, 0)) {
        harness_fatal("device lost during the flush");
        return CUPTI_ERROR_UNKNOWN; /* finalizing: no buffer comes back */
    }
    if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
        atomic_fetch_add(&g_nFlushForced, 1);
        while (atomic_load(&g_bHangForced)) usleep(1000);
    } else {
        atomic_fetch_add(&g_nFlushNormal, 1);
    }
    pthread_mutex_lock(&g_heldMu);
    for (int i = 0; i < g_nSub; i++) {
        struct harness_complete_info info = {32, 0, NULL, 0};
        if (!g_aSub[i].p || !g_aSub[i].off || !g_aSub[i].xComplete) continue;
        g_aSub[i].xComplete(g_aSub[i].p, g_aSub[i].cap, g_aSub[i].off, &info);
        g_aSub[i].p = NULL;
    }
    for (int i = 0; i < g_nHeld; i++) {
        if (!g_aHeld[i].p || !g_aHeld[i].off) continue;
        if (!atomic_load(&g_bTakenOver) && g_complete) g_complete(NULL, 0, g_aHeld[i].p, g_aHeld[i].cap, g_aHeld[i].off);
        g_aHeld[i].p = NULL; /* taken over: the other client got it */
    }
    pthread_mutex_unlock(&g_heldMu);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes, CUpti_Activity **record)
{
    REFUSE_IF_SEVERAL();
    void *p = *record;
    int r = core_next_record(buffer, validBufferSizeBytes, &p);
    if (r == 0) *record = p;
    return r == 0 ? CUPTI_SUCCESS : r == 1 ? CUPTI_ERROR_MAX_LIMIT_REACHED : CUPTI_ERROR_INVALID_KIND;
}

CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *deviceId)
{
    if (!context) return CUPTI_ERROR_INVALID_CONTEXT;
    *deviceId = (uint32_t)((uintptr_t)context - 0x100); /* context 0x100 + d is on device d */
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t perThreadStream,
                               uint32_t *streamId)
{
    (void)context;
    *streamId = (uint32_t)(uintptr_t)stream + (perThreadStream ? 1000 : 0);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *dropped)
{
    REFUSE_IF_SEVERAL();
    (void)context;
    (void)streamId;
    *dropped = g_nDropped;
    g_nDropped = 0;
    return CUPTI_SUCCESS;
}

#ifdef VT_HARNESS_V2
/* CUPTI 13.3's per-subscriber ("V2") activity functions (subscribers.c transcribes their declarations). */
CUptiResult cuptiActivityEnable_v2(CUpti_SubscriberHandle h, CUpti_ActivityKind kind, void *pConfig)
{
    int i = sub_of(h);
    (void)pConfig;
    if (i < 0) return CUPTI_ERROR_INVALID_PARAMETER;
    if (kind == CUPTI_ACTIVITY_KIND_MEMORY_POOL) return CUPTI_ERROR_NOT_SUPPORTED; /* as cuptiActivityEnable */
    if ((unsigned)kind < 64) g_aSub[i].kinds |= (uint64_t)1 << kind;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable_v2(CUpti_SubscriberHandle h, CUpti_ActivityKind kind, void *pConfig)
{
    int i = sub_of(h);
    (void)pConfig;
    if (i < 0) return CUPTI_ERROR_INVALID_PARAMETER;
    if ((unsigned)kind < 64) g_aSub[i].kinds &= ~((uint64_t)1 << kind);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks_v2(CUpti_SubscriberHandle h, harness_request2 xRequest,
                                              harness_complete2 xComplete)
{
    int i = sub_of(h);
    if (i < 0 || !xRequest || !xComplete) return CUPTI_ERROR_INVALID_PARAMETER;
    g_aSub[i].xRequest = xRequest;
    g_aSub[i].xComplete = xComplete;
    return CUPTI_SUCCESS;
}

/* CUPTI_ACTIVITY_ATTR_MULTIPLE_SUBSCRIBER_STATE (12), any handle; the others as the unversioned function. */
CUptiResult cuptiActivityGetAttribute_v2(CUpti_SubscriberHandle h, CUpti_ActivityAttribute attr, size_t *pValueSize,
                                         void *pValue)
{
    (void)h;
    if ((int)attr == 12) {
        if (*pValueSize != 1) return CUPTI_ERROR_INVALID_PARAMETER;
        *(uint8_t *)pValue = g_multiState;
        return CUPTI_SUCCESS;
    }
    return attribute_get(attr, pValueSize, pValue);
}

/* The thread-id type (21) and the timestamp callback (22) per subscriber, per-thread buffers. */
CUptiResult cuptiActivitySetAttribute_v2(CUpti_SubscriberHandle h, CUpti_ActivityAttribute attr, size_t *pValueSize,
                                         void *pValue)
{
    if (sub_of(h) < 0) return CUPTI_ERROR_INVALID_PARAMETER;
    if ((int)attr == 21 && *pValueSize == sizeof(CUpti_ActivityThreadIdType)) {
        g_threadIdType = (int)*(CUpti_ActivityThreadIdType *)pValue;
        return CUPTI_SUCCESS;
    }
    if ((int)attr == 22 && *pValueSize == sizeof(CUpti_TimestampCallbackFunc)) {
        memcpy(&g_xTimestamp, pValue, sizeof g_xTimestamp);
        g_nTimestampCallbacks++;
        return CUPTI_SUCCESS;
    }
    if (attr == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER && *pValueSize == 1) {
        g_perThreadBuf = *(uint8_t *)pValue;
        return CUPTI_SUCCESS;
    }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiActivityGetNextRecord_v2(CUpti_SubscriberHandle h, uint8_t *buffer, size_t validBufferSizeBytes,
                                          CUpti_Activity **record)
{
    void *p = *record;
    int r;
    if (sub_of(h) < 0) return CUPTI_ERROR_INVALID_PARAMETER;
    r = core_next_record(buffer, validBufferSizeBytes, &p);
    if (r == 0) *record = p;
    return r == 0 ? CUPTI_SUCCESS : r == 1 ? CUPTI_ERROR_MAX_LIMIT_REACHED : CUPTI_ERROR_INVALID_KIND;
}

CUptiResult cuptiActivityGetNumDroppedRecords_v2(CUpti_SubscriberHandle h, CUcontext context, uint32_t streamId,
                                                 size_t *dropped)
{
    (void)context;
    (void)streamId;
    if (sub_of(h) < 0) return CUPTI_ERROR_INVALID_PARAMETER;
    *dropped = g_nDropped;
    g_nDropped = 0;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp_v2(CUpti_SubscriberHandle h, uint64_t *timestamp)
{
    if (sub_of(h) < 0) return CUPTI_ERROR_INVALID_PARAMETER;
    *timestamp = harness_now();
    return CUPTI_SUCCESS;
}
#endif

/*
 * The driver, as the library finds it with dlsym. Free memory is scripted per
 * device (g_aFakeFree[d], FAKE_FREE where 0) for the context current on the
 * calling thread (t_fakeCurrent; device 0 when none); g_bFakeMemInfoFails makes
 * the query fail.
 */
static atomic_size_t g_aFakeFree[4];
static atomic_int g_bFakeMemInfoFails;
static _Thread_local CUcontext t_fakeCurrent;

CUresult cuMemGetInfo_v2(size_t *pFree, size_t *pTotal)
{
    unsigned d = t_fakeCurrent ? (unsigned)((uintptr_t)t_fakeCurrent - 0x100) & 3 : 0;
    size_t f = atomic_load(&g_aFakeFree[d]);
    if (atomic_load(&g_bFakeMemInfoFails)) return CUDA_ERROR_INVALID_CONTEXT;
    *pFree = f ? f : FAKE_FREE;
    *pTotal = FAKE_TOTAL;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    *d = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *z, int n, CUdevice d)
{
    snprintf(z, (size_t)n, "Fake GPU %d", d);
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *p, CUdevice d)
{
    (void)d;
    *p = FAKE_TOTAL;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = 27; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d)
{
    (void)d;
    for (int i = 0; i < 16; i++) u->bytes[i] = (char)(0x10 + i);
    return CUDA_SUCCESS;
}

/* The IPC mapping the script opens at 0x30000000 spans 16 MiB. */
CUresult cuMemGetAddressRange_v2(CUdeviceptr *pBase, size_t *pSize, CUdeviceptr p)
{
    if (p < 0x30000000 || p >= 0x31000000) return CUDA_ERROR_NOT_FOUND;
    *pBase = 0x30000000;
    *pSize = 16u << 20;
    return CUDA_SUCCESS;
}

/* Kernel 0x1234 takes (pointer, int, pointer); no other function is known. Queries are counted. */
static atomic_int g_nFuncInfo;
CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    static const size_t aOff[] = {0, 8, 16}, aSize[] = {8, 4, 8};
    atomic_fetch_add(&g_nFuncInfo, 1);
    if ((uintptr_t)func != 0x1234 || paramIndex >= 3) return CUDA_ERROR_INVALID_VALUE;
    *paramOffset = aOff[paramIndex];
    *paramSize = aSize[paramIndex];
    return CUDA_SUCCESS;
}

/* ---- a CUDA runtime for the kernel launches nvcc compiled (tests/nvcc_launches.cu) ---- */

/*
 * Those libraries link no CUDA runtime: their registration calls and their
 * launch stubs' calls land here. Each registered kernel gets the handle
 * 0x5000 + 16 i; its parameter sizes, from its (mangled) name, are what
 * cuKernelGetParamInfo answers. Each __cudaLaunchKernel is delivered to the
 * library as CUPTI would: the runtime callbacks with correlation ids from
 * g_nextCorr, and for __cudaLaunchKernel_ptsz also the driver launch the
 * runtime makes inside it (correlation id + 100).
 */
static struct {
    const void *hostFun;
    const char *zName;
} g_aKernel[16];
static int g_nKernel;
static uint32_t g_nextCorr = 700;
static _Thread_local struct {
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
} t_config;

static const struct {
    const char *zName;
    int nParam;
    size_t aSize[4];
} aKernelLayout[] = {
    {"_Z4axpyfPKfPfi", 4, {4, 8, 8, 4}}, /* axpy(float, const float *, float *, int) */
    {"_Z4fill4Spanf", 2, {16, 4}},       /* fill(Span {float *, long}, float) */
    {"_Z4spini", 1, {4}},                /* spin(int) */
};

void **__cudaRegisterFatBinary(void *fatCubin)
{
    static void *aHandle[8];
    static int n;
    (void)fatCubin;
    return &aHandle[n++ % 8];
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    (void)fatCubinHandle;
}

void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    (void)fatCubinHandle;
}

char __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    return 1;
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                            const char *deviceName, int threadLimit, void *tid, void *bid, void *bDim,
                            void *gDim, int *wSize)
{
    (void)fatCubinHandle, (void)deviceFun, (void)threadLimit, (void)tid, (void)bid, (void)bDim;
    (void)gDim, (void)wSize;
    if (g_nKernel < 16) {
        g_aKernel[g_nKernel].hostFun = hostFun;
        g_aKernel[g_nKernel++].zName = deviceName;
    }
}

cudaError_t __cudaGetKernel(cudaKernel_t *pKernel, const void *hostFun)
{
    for (int i = 0; i < g_nKernel; i++)
        if (g_aKernel[i].hostFun == hostFun) {
            *pKernel = (cudaKernel_t)(uintptr_t)(0x5000 + 16 * i);
            return cudaSuccess;
        }
    return cudaErrorInvalidDeviceFunction;
}

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, struct CUstream_st *stream)
{
    t_config.grid = grid;
    t_config.block = block;
    t_config.shmem = shmem;
    t_config.stream = stream;
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, void *stream)
{
    *grid = t_config.grid;
    *block = t_config.block;
    *shmem = t_config.shmem;
    *(cudaStream_t *)stream = t_config.stream;
    return cudaSuccess;
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    uintptr_t i = ((uintptr_t)kernel - 0x5000) / 16;
    size_t k, off = 0;
    if ((uintptr_t)kernel < 0x5000 || i >= (uintptr_t)g_nKernel) return CUDA_ERROR_INVALID_HANDLE;
    for (k = 0; k < sizeof aKernelLayout / sizeof aKernelLayout[0]; k++) {
        if (strcmp(aKernelLayout[k].zName, g_aKernel[i].zName) != 0) continue;
        if (paramIndex >= (size_t)aKernelLayout[k].nParam) return CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < paramIndex; j++) off += aKernelLayout[k].aSize[j];
        *paramOffset = off;
        *paramSize = aKernelLayout[k].aSize[paramIndex];
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_HANDLE;
}

static void api(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
                const void *params, int *pStatus, uint32_t correlation);

/* One runtime launch as CUPTI reports it; bNested: with the driver launch made inside it. */
static cudaError_t launch(CUpti_CallbackId cbid, cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                          size_t shmem, cudaStream_t stream, int bNested)
{
    vt__cudaLaunchKernel_v13000_params rp = {kernel, grid, block, args, shmem, stream};
    cuLaunchKernel_params lp = {(CUfunction)kernel, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                (unsigned)shmem, (CUstream)stream, args, NULL};
    uint32_t corr = g_nextCorr++;
    int st = 0;
    api(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, CUPTI_API_ENTER, &rp, &st, corr);
    if (bNested) {
        api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, CUPTI_API_ENTER, &lp, &st,
            corr + 100);
        api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, CUPTI_API_EXIT, &lp, &st,
            corr + 100);
    }
    api(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, CUPTI_API_EXIT, &rp, &st, corr);
    return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shmem,
                               cudaStream_t stream)
{
    return launch(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, kernel, grid, block, args, shmem,
                  stream, 0);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shmem,
                                    cudaStream_t stream)
{
    return launch(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000, kernel, grid, block, args,
                  shmem, stream, 1);
}

/* ---- driving the callbacks ---- */

#define CTX0 ((CUcontext)(uintptr_t)0x100)

static _Thread_local uint64_t g_corrData[64];
static _Thread_local int g_depth;

/* Deliver one API callback (enter or exit) as CUPTI does. */
static void api(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
                const void *params, int *pStatus, uint32_t correlation)
{
    CUpti_CallbackData cb;
    memset(&cb, 0, sizeof cb);
    cb.callbackSite = site;
    cb.functionName = "fake";
    cb.functionParams = params;
    cb.functionReturnValue = pStatus;
    cb.context = t_fakeCurrent ? t_fakeCurrent : CTX0; /* the context current on the thread */
    cb.correlationData = &g_corrData[g_depth];
    cb.correlationId = correlation;
    if (g_callback) g_callback(NULL, dom, cbid, &cb); /* whoever subscribed (nobody: no callback) */
    for (int i = 0; i < g_nSub; i++) /* several subscribers: each gets every callback */
        if (g_aSub[i].cb) {
            g_aSub[i].nCallbacks++;
            g_aSub[i].cb(NULL, dom, cbid, &cb);
        }
}

/* A whole call: enter, then exit with the given status. */
static inline void call(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *params, int status,
                        uint32_t correlation)
{
    api(dom, cbid, CUPTI_API_ENTER, params, &status, correlation);
    api(dom, cbid, CUPTI_API_EXIT, params, &status, correlation);
}

#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API

static void (*g_xBeforeInit)(void); /* run in the child before the library initializes */
static void (*g_xAfterLoad)(void);  /* run in the child once the library is loaded, before it initializes */
static void *g_hLib;                /* the library, in the child */

/* Rows of zSql in the trace at zPath (read by this process, not the traced one), or -1. */
static inline long long trace_count(const char *zPath, const char *zSql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *pStmt = NULL;
    long long n = -1;
    if (sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW)
        n = sqlite3_column_int64(pStmt, 0);
    sqlite3_finalize(pStmt);
    sqlite3_close(db);
    return n;
}

/* A child that sets up, dlopens, inits, runs xBody and calls exit(0); stderr to zErrFile. Returns its pid. */
static pid_t start_child(const char *zDir, const char *zErrFile, int mode, void (*xBody)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        char zOut[256];
        void *h;
        int (*xInit)(void);
        int fd = open(zErrFile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0) _exit(20);
        close(fd);
        g_mode = mode;
        if (g_xBeforeInit) g_xBeforeInit();
        snprintf(zOut, sizeof zOut, "%s/trace.db", zDir);
        setenv("VRAMTRACE_OUTPUT", zOut, 1);
        h = dlopen(VT_INJECT_SO, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            _exit(22);
        }
        g_hLib = h;
        if (g_xAfterLoad) g_xAfterLoad();
        *(void **)&xInit = dlsym(h, "InitializeInjection");
        if (!xInit || xInit() != 1) _exit(23);
        if (xBody) xBody();
        exit(0); /* runs the library's exit handler: flush, close the trace */
    }
    return pid;
}

/* start_child, then wait for it. Returns its wait status, or -1. */
static int run_child(const char *zDir, const char *zErrFile, int mode, void (*xBody)(void))
{
    int status = -1;
    pid_t pid = start_child(zDir, zErrFile, mode, xBody);
    if (pid < 0) return -1;
    while (waitpid(pid, &status, 0) < 0) {
    }
    return status;
}

static inline int count_lines(const char *z)
{
    int n = 0;
    for (; *z; z++) n += *z == '\n';
    return n;
}

static inline sqlite3_int64 q(sqlite3 *db, const char *zSql)
{
    sqlite3_stmt *pStmt = NULL;
    sqlite3_int64 v = -1;
    if (sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) != SQLITE_OK)
        VT__FAIL("%s: %s", zSql, sqlite3_errmsg(db));
    if (sqlite3_step(pStmt) == SQLITE_ROW) v = sqlite3_column_int64(pStmt, 0);
    sqlite3_finalize(pStmt);
    return v;
}

static inline void qtext(sqlite3 *db, const char *zSql, char *z, size_t n)
{
    sqlite3_stmt *pStmt = NULL;
    z[0] = '\0';
    if (sqlite3_prepare_v2(db, zSql, -1, &pStmt, NULL) != SQLITE_OK)
        VT__FAIL("%s: %s", zSql, sqlite3_errmsg(db));
    if (sqlite3_step(pStmt) == SQLITE_ROW && sqlite3_column_text(pStmt, 0))
        snprintf(z, n, "%s", (const char *)sqlite3_column_text(pStmt, 0));
    sqlite3_finalize(pStmt);
}

/* ---- an NVTX instance of the job (as NVTX's header-only implementation lays one out) ---- */

#define NVTX_NO_IMPL /* the types only */
#include <nvtx3/nvToolsExt.h>

static NvtxFunctionPointer g_aNvtxSlot[NVTX_CBID_CORE_SIZE + 1];
static NvtxFunctionPointer *g_apNvtxCore[NVTX_CBID_CORE_SIZE + 1];

static int NVTX_API harness_nvtx_table(NvtxCallbackModule m, NvtxFunctionTable *pOut, unsigned int *pSize)
{
    if (m != NVTX_CB_MODULE_CORE) return 0;
    for (int i = 1; i <= NVTX_CBID_CORE_SIZE; i++) g_apNvtxCore[i] = &g_aNvtxSlot[i];
    *pOut = g_apNvtxCore;
    if (pSize) *pSize = NVTX_CBID_CORE_SIZE;
    return 1;
}

static const void *NVTX_API harness_nvtx_export(uint32_t id)
{
    static const NvtxExportTableCallbacks cb = {sizeof cb, harness_nvtx_table};
    return id == NVTX_ETID_CALLBACKS ? (const void *)&cb : NULL;
}

/* NVTX's first call in the job: the injection named by NVTX_INJECTION64_PATH (the library) attaches. */
static inline void harness_nvtx_init(void)
{
    int (*xInit)(NvtxGetExportTableFunc_t);
    *(void **)&xInit = dlsym(g_hLib, "InitializeInjectionNvtx2");
    if (!xInit || xInit(harness_nvtx_export) != 1) _exit(70);
}

/* nvtxMarkA as the job calls it (torch.cuda.nvtx.mark): through the instance's slot. */
static inline void harness_nvtx_mark(const char *zMsg)
{
    if (g_aNvtxSlot[NVTX_CBID_CORE_MarkA]) ((void (*)(const char *))g_aNvtxSlot[NVTX_CBID_CORE_MarkA])(zMsg);
}

/* ---- a second CUPTI client: torch.profiler's Kineto, as libkineto/src/CuptiActivityApi.cpp uses CUPTI ---- */

/*
 * At prepare it registers its own timestamp callback (TSC ticks, far from the
 * trace's clock: here CLOCK_REALTIME / 4), its buffer callbacks, and enables its
 * kinds; at stop it disables them, takes every buffer back (forced flush) and
 * turns per-thread buffers off. The Kineto of earlier PyTorch wheels (bEager)
 * also subscribes at its first prepare and profiles without the GPU for good
 * when that fails. It counts the records it got, and buffers not its own.
 */
static struct {
    int bEager, bInit, bCpuOnly;
    CUpti_SubscriberHandle h;
    uint8_t *apBuf[64]; /* buffers handed to CUPTI and not yet back */
    int nBuf;
    int nRecords, nKernels, nMemory, nForeign;
    uint64_t tFirst, tLast; /* record times seen (its own clock) */
} g_kineto;

static uint64_t CUPTIAPI kineto_tsc(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) / 4;
}

static void CUPTIAPI kineto_request(uint8_t **ppBuf, size_t *pSize, size_t *pMax)
{
    *ppBuf = NULL;
    *pSize = 0;
    *pMax = 0;
    if (g_kineto.nBuf >= 64) return;
    *ppBuf = g_kineto.apBuf[g_kineto.nBuf++] = malloc(1 << 16);
    *pSize = *ppBuf ? 1 << 16 : 0;
}

static void CUPTIAPI kineto_complete(CUcontext ctx, uint32_t streamId, uint8_t *pBuf, size_t size, size_t valid)
{
    void *pRec = NULL;
    int i;
    (void)ctx, (void)streamId, (void)size;
    for (i = 0; i < g_kineto.nBuf && g_kineto.apBuf[i] != pBuf; i++) {
    }
    if (i == g_kineto.nBuf) { /* "bufferCompleted called with unknown buffer" */
        g_kineto.nForeign++;
        return;
    }
    g_kineto.apBuf[i] = g_kineto.apBuf[--g_kineto.nBuf]; /* no longer outstanding */
    while (core_next_record(pBuf, valid, &pRec) == 0) {
        CUpti_ActivityKind kind;
        memcpy(&kind, pRec, sizeof kind);
        g_kineto.nRecords++;
        if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const CUpti_ActivityKernel10 *k = pRec;
            g_kineto.nKernels++;
            if (!g_kineto.tFirst || k->start < g_kineto.tFirst) g_kineto.tFirst = k->start;
            if (k->end > g_kineto.tLast) g_kineto.tLast = k->end;
        }
        g_kineto.nMemory += kind == CUPTI_ACTIVITY_KIND_MEMORY2;
    }
    free(pBuf);
}

static void CUPTIAPI kineto_switchboard(void *pUser, CUpti_CallbackDomain d, CUpti_CallbackId cbid, const void *p)
{
    (void)pUser, (void)d, (void)cbid, (void)p;
}

static const CUpti_ActivityKind aKinetoKind[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                                 CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                 CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                                 CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                                                 CUPTI_ACTIVITY_KIND_OVERHEAD};

/* torch.profiler's prepare (_prepare_profiler): Kineto sets CUPTI up for itself. */
static inline void kineto_prepare(void)
{
    if (!g_kineto.bInit) {
        g_kineto.bInit = 1;
        if (g_kineto.bEager && cuptiSubscribe(&g_kineto.h, kineto_switchboard, NULL) != CUPTI_SUCCESS)
            g_kineto.bCpuOnly = 1; /* "CUPTI initialization failed - CUDA profiler activities will be missing" */
    }
    if (g_kineto.bCpuOnly) return;
    cuptiActivityRegisterTimestampCallback(kineto_tsc);
    cuptiActivityRegisterCallbacks(kineto_request, kineto_complete);
    for (size_t i = 0; i < sizeof aKinetoKind / sizeof aKinetoKind[0]; i++) cuptiActivityEnable(aKinetoKind[i]);
}

/* torch.profiler's stop (_disable_profiler): its kinds off, every buffer to it, per-thread buffers off. */
static inline void kineto_stop(void)
{
    uint8_t zero = 0;
    size_t n = 1;
    if (g_kineto.bCpuOnly) return;
    for (size_t i = 0; i < sizeof aKinetoKind / sizeof aKinetoKind[0]; i++) cuptiActivityDisable(aKinetoKind[i]);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &n, &zero);
}

/* A MEMORY2 record of an allocation at address a (kind k) with correlation id corr, on CUPTI's clock now. */
static inline CUpti_ActivityMemory4 memory_record(uint64_t a, int k, uint32_t corr)
{
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = (CUpti_ActivityMemoryKind)k;
    m.correlationId = corr;
    m.address = a;
    m.bytes = 1 << 20;
    m.timestamp = harness_now();
    m.streamId = CUPTI_INVALID_STREAM_ID;
    return m;
}

/*
 * Kineto's teardown (TEARDOWN_CUPTI=1), which it runs after a profile when it holds a subscription:
 * a forced flush, then cuptiUnsubscribe and cuptiFinalize (libkineto/src/CuptiCallbackApi.cpp).
 */
static inline void kineto_teardown(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cuptiUnsubscribe(g_kineto.h);
    cuptiFinalize();
}

/* A kernel's activity record, as CUPTI writes it: on CUPTI's clock now, lasting 1 us. */
static inline void harness_kernel(uint32_t corr, const char *zName)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = zName;
    k.start = harness_now();
    k.end = k.start + 1000;
    k.correlationId = corr;
    k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
    fake_record(&k, sizeof k);
}

/* cudaMalloc of 1 MiB at address a, as CUPTI reports it: the API callbacks and the MEMORY2 record. */
static inline void harness_alloc(uint64_t a, uint32_t corr)
{
    void *p = NULL;
    cudaMalloc_v3020_params mp = {&p, 1 << 20};
    CUpti_ActivityMemory4 m = memory_record(a, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, corr);
    int st = 0;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &mp, &st, corr);
    p = (void *)(uintptr_t)a;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &mp, &st, corr);
    fake_record(&m, sizeof m);
}

/* The first check a job made in the child that failed (NULL: none), reported with Kineto's figures. */
static const char *g_zJobFailed;
#define JOB_CHECK(cond) ((cond) || g_zJobFailed ? (void)0 : (void)(g_zJobFailed = "job check failed: " #cond))

/* What Kineto got, into DIR/kineto.txt beside the trace DIR/trace.db (VRAMTRACE_OUTPUT): for the parent. */
static inline void kineto_report(void)
{
    char z[300];
    const char *zOut = getenv("VRAMTRACE_OUTPUT");
    FILE *f;
    snprintf(z, sizeof z, "%.*s/kineto.txt", zOut ? (int)(strrchr(zOut, '/') - zOut) : 1, zOut ? zOut : ".");
    if (!(f = fopen(z, "w"))) _exit(72);
    fprintf(f, "kernels %d memory %d foreign %d cpu_only %d own_clock %d\n%s\n", g_kineto.nKernels,
            g_kineto.nMemory, g_kineto.nForeign, g_kineto.bCpuOnly,
            g_kineto.tFirst > 0 && g_kineto.tFirst < kineto_tsc() + 1000000000u,
            g_zJobFailed ? g_zJobFailed : "job checks ok");
    fclose(f);
}

/*
 * The trace of a job that ran one profile (harness_alloc and harness_kernel with correlation ids
 * 1001-1002 before, 1003-1005 during, 1006-1007 after it): its GPU activity before and after the
 * window, none inside, the window in meta.
 */
static inline void harness_check_window(sqlite3 *db)
{
    char z[256];
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key = 'cupti_takeover_ns'"));
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_lend.1.client'", z, sizeof z);
    ASSERT_STREQ("torch.profiler", z);
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key GLOB 'cupti_lend.2.*'"));
    /* kernels and allocation records of before and after, none of the profiler's window */
    ASSERT_EQ(2, q(db, "SELECT count(*) FROM kernel"));
    ASSERT_EQ(2, q(db, "SELECT count(*) FROM memory_event WHERE op = 1"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM memory_event WHERE address = 134217728"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM kernel WHERE correlation = 1002 AND start <= (SELECT CAST(value AS"
                       " INTEGER) FROM meta WHERE key = 'cupti_lend.1.from_ns')"));
    /* after the window, on the trace's clock again (Kineto's ticks would be far before the start) */
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM kernel WHERE correlation = 1007 AND start >= (SELECT CAST(value AS"
                       " INTEGER) FROM meta WHERE key = 'cupti_lend.1.until_ns') AND start < (SELECT CAST(value"
                       " AS INTEGER) FROM meta WHERE key = 'cupti_lend.1.until_ns') + 60000000000"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM memory_event WHERE address = 150994944 AND ts >= (SELECT CAST(value"
                       " AS INTEGER) FROM meta WHERE key = 'cupti_lend.1.until_ns')"));
}

/*
 * Run xBody in a traced child that exits 0, its trace in a new folder /tmp/PREFIX_XXXXXX (into
 * zDir, 64 bytes, for the caller to remove): stderr into z, the file zReport of that folder the
 * job wrote (NULL: none) into zR, the trace (open, read-only; NULL when none was written) returned.
 */
static inline sqlite3 *harness_run_traced(const char *zPrefix, void (*xBody)(void), char *zDir, char *z, size_t n,
                                          const char *zReport, char *zR, size_t nR)
{
    char zErrFile[128], zPath[160];
    sqlite3 *db = NULL;
    int status;
    snprintf(zDir, 64, "/tmp/%s_XXXXXX", zPrefix);
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    status = run_child(zDir, zErrFile, MODE_OK, xBody);
    vt_read_file(zErrFile, z, n);
    unlink(zErrFile);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, z);
    if (zReport) {
        snprintf(zErrFile, sizeof zErrFile, "%s/%s", zDir, zReport);
        vt_read_file(zErrFile, zR, nR);
        unlink(zErrFile);
    }
    if (access(zPath, F_OK) == 0) ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    return db;
}

/*
 * Run xBody (a job that runs a profile and calls kineto_report) in a traced child, Kineto
 * subscribing at its first profile or not (bEager): stderr into z, Kineto's report into zK, the
 * trace (open, read-only) returned; the trace's folder into zDir (64 bytes) for the caller to remove.
 */
static inline sqlite3 *harness_run_profiled(int bEager, void (*xBody)(void), char *zDir, char *z, size_t n,
                                            char *zK, size_t nK)
{
    sqlite3 *db;
    g_kineto.bEager = bEager;
    db = harness_run_traced("vt_lend", xBody, zDir, z, n, "kineto.txt", zK, nK);
    ASSERT(db != NULL);
    return db;
}

#endif
