/* The tracer as one of several CUPTI subscribers where CUPTI allows it (13.3+, driver r610+), else its single one. */
#include "subscribers.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Declarations of CUPTI 13.2 to 13.4 that the 13.0 headers lack, transcribed
 * as facts (see docs/tracer.md, "Several subscribers", for the sources: the
 * 13.2.0, 13.3.0 and 13.4 generations of JuliaGPU/CUDA.jl's
 * lib/cupti/src/libcupti.jl, wrappers generated from NVIDIA's headers, and
 * CUPTI's documentation 13.4):
 *
 *   CUpti_SubscriberParams (cupti_callbacks.h, 13.2 on): size_t structSize @0,
 *   const char *subscriberName @8, char *oldSubscriberName @16, size_t
 *   oldSubscriberSize @24, uint8_t allowMultipleSubscribers @32, uint8_t
 *   padding[7] @33; CUpti_SubscriberParams_STRUCT_SIZE covers up to padding:
 *   40 bytes. (13.0's struct ends at oldSubscriberSize: 32 bytes.)
 *
 *   CUpti_ActivityAttribute: CUPTI_ACTIVITY_ATTR_MULTIPLE_SUBSCRIBER_STATE =
 *   12 (uint8_t; 0 single, 1 several, 2 not chosen yet; read-only, through
 *   cuptiActivityGetAttribute_v2), CUPTI_ACTIVITY_ATTR_THREAD_ID_TYPE = 21
 *   (a CUpti_ActivityThreadIdType), CUPTI_ACTIVITY_ATTR_TIMESTAMP_CALLBACK = 22
 *   (a CUpti_TimestampCallbackFunc), both per subscriber.
 *
 *   CUpti_BuffersCallbackRequestFunc_v2(uint8_t **buffer, size_t *size,
 *   size_t *maxNumRecords, CUpti_BufferCallbackRequestInfo *),
 *   CUpti_BuffersCallbackCompleteFunc_v2(uint8_t *buffer, size_t size, size_t
 *   validSize, CUpti_BufferCallbackCompleteInfo *) (no context, no stream).
 *
 *   Functions taking the subscriber first: cuptiActivityEnable_v2,
 *   cuptiActivityDisable_v2 (subscriber, kind, CUpti_ActivityConfig *: NULL
 *   here, every field), cuptiActivityGetAttribute_v2,
 *   cuptiActivitySetAttribute_v2 (subscriber, attr, size_t *, void *),
 *   cuptiActivityRegisterCallbacks_v2 (subscriber, request, complete) from
 *   13.2; cuptiActivityGetNextRecord_v2 (subscriber, buffer, validSize,
 *   CUpti_Activity **), cuptiActivityGetNumDroppedRecords_v2 (subscriber,
 *   context, streamId, size_t *), cuptiGetTimestamp_v2 (subscriber,
 *   uint64_t *) from 13.3.
 */
#define SUBS_PARAMS_SIZE_V2 40u
#define SUBS_ATTR_STATE 12
#define SUBS_ATTR_THREAD_ID_TYPE 21
#define SUBS_ATTR_TIMESTAMP_CALLBACK 22
#define SUBS_STATE_SEVERAL 1
#define SUBS_STATE_UNCHOSEN 2
/* Several subscribers from CUPTI 13.3 (API version 130300); used from 13.3 Update 1 (130301), whose release
 * notes fix "a potential crash caused by simultaneous GPU activity tracing requests in multi-subscriber mode" */
#define SUBS_VERSION_MIN 130301u

struct subs_params2 {
    size_t structSize;
    const char *subscriberName;
    char *oldSubscriberName;
    size_t oldSubscriberSize;
    uint8_t allowMultipleSubscribers;
    uint8_t padding[7];
};
_Static_assert(sizeof(struct subs_params2) == SUBS_PARAMS_SIZE_V2, "CUpti_SubscriberParams of CUPTI 13.2+");

typedef void(CUPTIAPI *request2_fn)(uint8_t **, size_t *, size_t *, void *);
typedef void(CUPTIAPI *complete2_fn)(uint8_t *, size_t, size_t, void *);

/* The V2 entry points, looked up once. */
static struct {
    CUptiResult (*xSubscribe2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *, void *);
    CUptiResult (*xEnable)(CUpti_SubscriberHandle, CUpti_ActivityKind, void *);
    CUptiResult (*xDisable)(CUpti_SubscriberHandle, CUpti_ActivityKind, void *);
    CUptiResult (*xGetAttr)(CUpti_SubscriberHandle, CUpti_ActivityAttribute, size_t *, void *);
    CUptiResult (*xSetAttr)(CUpti_SubscriberHandle, CUpti_ActivityAttribute, size_t *, void *);
    CUptiResult (*xRegister)(CUpti_SubscriberHandle, request2_fn, complete2_fn);
    CUptiResult (*xNext)(CUpti_SubscriberHandle, uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*xDropped)(CUpti_SubscriberHandle, CUcontext, uint32_t, size_t *);
    CUptiResult (*xTimestamp)(CUpti_SubscriberHandle, uint64_t *);
} g_v2;

static const char *const azV2[] = {"cuptiActivityEnable_v2",        "cuptiActivityDisable_v2",
                                   "cuptiActivityGetAttribute_v2",  "cuptiActivitySetAttribute_v2",
                                   "cuptiActivityRegisterCallbacks_v2", "cuptiActivityGetNextRecord_v2",
                                   "cuptiActivityGetNumDroppedRecords_v2", "cuptiGetTimestamp_v2"};

static int g_bChosen;                       /* the mode is decided (at the first subscription) */
static int g_bSeveral;                      /* ... and it is several subscribers */
static CUpti_SubscriberHandle g_handle;     /* the tracer's subscriber in several mode */
static char g_zText[320];                   /* meta cupti_subscription */
static CUpti_BuffersCallbackRequestFunc g_xRequest;
static CUpti_BuffersCallbackCompleteFunc g_xComplete;

/* A CUPTI function by name: in the process's scope, else in a libcupti.so.13 already loaded; NULL if none. */
static void *cupti_symbol(const char *zName)
{
    void *p = dlsym(RTLD_DEFAULT, zName), *h;
    if (!p && (h = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD)) != NULL) {
        p = dlsym(h, zName);
        dlclose(h); /* drops only the reference RTLD_NOLOAD took */
    }
    return p;
}

/* Look up the V2 entry points (once): the name of the first one missing, or NULL when all are there. */
static const char *look_up_v2(void)
{
    static int bLooked;
    static const char *zMissing;
    void **ap[sizeof azV2 / sizeof azV2[0]];
    size_t i;
    if (bLooked) return zMissing;
    bLooked = 1;
    *(void **)&g_v2.xSubscribe2 = cupti_symbol("cuptiSubscribe_v2");
    ap[0] = (void **)&g_v2.xEnable;
    ap[1] = (void **)&g_v2.xDisable;
    ap[2] = (void **)&g_v2.xGetAttr;
    ap[3] = (void **)&g_v2.xSetAttr;
    ap[4] = (void **)&g_v2.xRegister;
    ap[5] = (void **)&g_v2.xNext;
    ap[6] = (void **)&g_v2.xDropped;
    ap[7] = (void **)&g_v2.xTimestamp;
    for (i = 0; i < sizeof azV2 / sizeof azV2[0]; i++) {
        *ap[i] = cupti_symbol(azV2[i]);
        if (!*ap[i] && !zMissing) zMissing = azV2[i];
    }
    if (!g_v2.xSubscribe2) zMissing = "cuptiSubscribe_v2";
    return zMissing;
}

/* CUPTI's multi-subscriber state (1 several, 0 single, 2 not chosen), or -1 when it does not say. */
static int multi_state(CUpti_SubscriberHandle h)
{
    uint8_t v = 0;
    size_t n = sizeof v;
    if (g_v2.xGetAttr(h, (CUpti_ActivityAttribute)SUBS_ATTR_STATE, &n, &v) != CUPTI_SUCCESS || n != sizeof v) return -1;
    return v;
}

/* cuptiSubscribe_v2 with params of `size` bytes (32: CUPTI 13.0's, 40: with allowMultipleSubscribers = bAllow). */
static CUptiResult subscribe_v2(size_t size, int bAllow, CUpti_CallbackFunc xCallback, CUpti_SubscriberHandle *pHandle,
                                char *zOld, size_t nOld)
{
    struct subs_params2 params;
    memset(&params, 0, sizeof params);
    memset(zOld, 0, nOld);
    params.structSize = size;
    params.subscriberName = "vramtrace";
    params.oldSubscriberName = zOld;
    params.oldSubscriberSize = nOld - 1;
    params.allowMultipleSubscribers = (uint8_t)bAllow;
    return g_v2.xSubscribe2(pHandle, xCallback, NULL, &params);
}

/*
 * Try several mode (CUPTI 13.3+, every V2 entry point, the policy): 1 with
 * *pHandle subscribed in it; 0 with the reason in g_zText ("one: ...") and
 * nothing subscribed. bJoinOnly (after CUPTI refused the single subscription
 * the lend policy chose): only join a multi-subscriber mode another
 * subscriber already chose.
 */
static int try_several(enum vt__subs_policy policy, int bLend, int bJoinOnly, CUpti_CallbackFunc xCallback,
                       CUpti_SubscriberHandle *pHandle)
{
    char zOld[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1];
    const char *zMissing;
    uint32_t v = 0;
    int state, bFirst;
    CUptiResult r;

    if (policy == VT_SUBS_ONE) {
        snprintf(g_zText, sizeof g_zText, "one: VRAMTRACE_SUBSCRIBERS=one");
        return 0;
    }
    if (cuptiGetVersion(&v) != CUPTI_SUCCESS || v < SUBS_VERSION_MIN) {
        snprintf(g_zText, sizeof g_zText, "one: CUPTI API version %u serves one subscriber per process here (several "
                 "from 13.3 Update 1, API version %u, with a driver r610 or newer)", (unsigned)v, SUBS_VERSION_MIN);
        return 0;
    }
    if ((zMissing = look_up_v2()) != NULL) {
        snprintf(g_zText, sizeof g_zText, "one: the libcupti (API version %u) has no %s, needed to be one of several "
                 "subscribers", (unsigned)v, zMissing);
        return 0;
    }
    if (policy == VT_SUBS_AUTO && bLend && !bJoinOnly) {
        /* asked before any V2 call: the single-subscriber API must stay usable for the tracer and the profiler */
        snprintf(g_zText, sizeof g_zText, "one: the record hook lends CUPTI to the job's torch.profiler, whose Kineto "
                 "uses CUPTI's single-subscriber API (refused in multi-subscriber mode); VRAMTRACE_SUBSCRIBERS=several "
                 "makes the tracer one of several subscribers instead");
        return 0;
    }
    state = multi_state(NULL);
    if (state == 0) {
        snprintf(g_zText, sizeof g_zText, "one: another CUPTI client put CUPTI in single-subscriber mode before the "
                 "tracer started");
        return 0;
    }
    bFirst = state != SUBS_STATE_SEVERAL;
    if (bFirst && bJoinOnly) return 0;
    r = subscribe_v2(SUBS_PARAMS_SIZE_V2, 1, xCallback, pHandle, zOld, sizeof zOld);
    if (r != CUPTI_SUCCESS) {
        snprintf(g_zText, sizeof g_zText, "one: CUPTI refused a subscriber in multi-subscriber mode (CUPTI result "
                 "%d%s%s)", (int)r, zOld[0] ? "; CUPTI is held by " : "", zOld);
        return 0;
    }
    if (multi_state(*pHandle) != SUBS_STATE_SEVERAL) {
        /* CUPTI took the subscription but not the mode (a driver older than r610): leave, subscribe as on 13.0 */
        cuptiUnsubscribe(*pHandle);
        snprintf(g_zText, sizeof g_zText, "one: CUPTI API version %u did not enter multi-subscriber mode (a driver "
                 "older than r610?)", (unsigned)v);
        return 0;
    }
    snprintf(g_zText, sizeof g_zText, "several: one of several CUPTI subscribers (CUPTI API version %u, "
             "multi-subscriber mode %s)", (unsigned)v, bFirst ? "asked for by the tracer" : "already on: another "
             "subscriber asked for it");
    return 1;
}

/* One subscriber, as on CUPTI 13.0: cuptiSubscribe_v2 names the other subscriber where the library has it. */
static CUptiResult subscribe_one(CUpti_CallbackFunc xCallback, CUpti_SubscriberHandle *pHandle, char *zOld, size_t nOld)
{
    look_up_v2();
    if (g_v2.xSubscribe2) return subscribe_v2(sizeof(CUpti_SubscriberParams), 0, xCallback, pHandle, zOld, nOld);
    memset(zOld, 0, nOld);
    return cuptiSubscribe(pHandle, xCallback, NULL);
}

CUptiResult vt__subs_subscribe(enum vt__subs_policy policy, int bLend, CUpti_CallbackFunc xCallback,
                               CUpti_SubscriberHandle *pHandle, char *zOld, size_t nOld)
{
    char zWhy[sizeof g_zText];
    CUptiResult r;
    int bFirst = !g_bChosen;
    if (bFirst) {
        g_bChosen = 1;
        g_bSeveral = try_several(policy, bLend, 0, xCallback, pHandle);
    }
    if (g_bSeveral) {
        /* several subscribers (at start, or a later subscription, which the tracer does not make today) */
        r = bFirst ? CUPTI_SUCCESS : subscribe_v2(SUBS_PARAMS_SIZE_V2, 1, xCallback, pHandle, zOld, nOld);
        if (bFirst) memset(zOld, 0, nOld);
        if (r == CUPTI_SUCCESS) g_handle = *pHandle;
        return r;
    }
    r = subscribe_one(xCallback, pHandle, zOld, nOld);
    if (bFirst && r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && policy == VT_SUBS_AUTO && bLend) {
        /* kept single for the profiler's sake, but CUPTI refused: another subscriber may have chosen several */
        memcpy(zWhy, g_zText, sizeof zWhy);
        if (try_several(policy, bLend, 1, xCallback, pHandle)) {
            g_bSeveral = 1;
            g_handle = *pHandle;
            memset(zOld, 0, nOld);
            return CUPTI_SUCCESS;
        }
        memcpy(g_zText, zWhy, sizeof g_zText);
    }
    return r;
}

int vt__subs_several(void)
{
    return g_bSeveral;
}

const char *vt__subs_text(void)
{
    return g_zText;
}

/* Several mode: CUPTI's per-subscriber buffer callbacks, handed to the tracer's (no context, no stream). */
static void CUPTIAPI request2(uint8_t **ppBuf, size_t *pSize, size_t *pMaxRecords, void *pInfo)
{
    (void)pInfo;
    g_xRequest(ppBuf, pSize, pMaxRecords);
}

static void CUPTIAPI complete2(uint8_t *pBuf, size_t size, size_t validSize, void *pInfo)
{
    (void)pInfo;
    g_xComplete(NULL, 0, pBuf, size, validSize);
}

CUptiResult vt__cupti_register_buffers(CUpti_BuffersCallbackRequestFunc xRequest,
                                       CUpti_BuffersCallbackCompleteFunc xComplete)
{
    if (!g_bSeveral) return cuptiActivityRegisterCallbacks(xRequest, xComplete);
    g_xRequest = xRequest;
    g_xComplete = xComplete;
    return g_v2.xRegister(g_handle, request2, complete2);
}

CUptiResult vt__cupti_enable(CUpti_ActivityKind kind)
{
    return g_bSeveral ? g_v2.xEnable(g_handle, kind, NULL) : cuptiActivityEnable(kind);
}

CUptiResult vt__cupti_disable(CUpti_ActivityKind kind)
{
    return g_bSeveral ? g_v2.xDisable(g_handle, kind, NULL) : cuptiActivityDisable(kind);
}

CUptiResult vt__cupti_get_attribute(CUpti_ActivityAttribute attr, size_t *pSize, void *pValue)
{
    return g_bSeveral ? g_v2.xGetAttr(g_handle, attr, pSize, pValue) : cuptiActivityGetAttribute(attr, pSize, pValue);
}

CUptiResult vt__cupti_set_attribute(CUpti_ActivityAttribute attr, size_t *pSize, void *pValue)
{
    return g_bSeveral ? g_v2.xSetAttr(g_handle, attr, pSize, pValue) : cuptiActivitySetAttribute(attr, pSize, pValue);
}

CUptiResult vt__cupti_thread_id_type(CUpti_ActivityThreadIdType type)
{
    size_t n = sizeof type;
    if (!g_bSeveral) return cuptiSetThreadIdType(type);
    return g_v2.xSetAttr(g_handle, (CUpti_ActivityAttribute)SUBS_ATTR_THREAD_ID_TYPE, &n, &type);
}

CUptiResult vt__cupti_timestamp_callback(CUpti_TimestampCallbackFunc xTimestamp)
{
    size_t n = sizeof xTimestamp;
    if (!g_bSeveral) return cuptiActivityRegisterTimestampCallback(xTimestamp);
    return g_v2.xSetAttr(g_handle, (CUpti_ActivityAttribute)SUBS_ATTR_TIMESTAMP_CALLBACK, &n, &xTimestamp);
}

CUptiResult vt__cupti_timestamp(uint64_t *pTs)
{
    return g_bSeveral ? g_v2.xTimestamp(g_handle, pTs) : cuptiGetTimestamp(pTs);
}

CUptiResult vt__cupti_next_record(uint8_t *pBuf, size_t validSize, CUpti_Activity **ppRecord)
{
    return g_bSeveral ? g_v2.xNext(g_handle, pBuf, validSize, ppRecord)
                      : cuptiActivityGetNextRecord(pBuf, validSize, ppRecord);
}

CUptiResult vt__cupti_dropped(CUcontext ctx, uint32_t streamId, size_t *pDropped)
{
    return g_bSeveral ? g_v2.xDropped(g_handle, ctx, streamId, pDropped)
                      : cuptiActivityGetNumDroppedRecords(ctx, streamId, pDropped);
}
