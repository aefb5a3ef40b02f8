/* Internal: the tracer as one of several CUPTI subscribers where CUPTI allows it, else its single subscriber. */
#ifndef VT_TRACER_SUBSCRIBERS_H
#define VT_TRACER_SUBSCRIBERS_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

/*
 * CUPTI 13.3 and later, with a driver r610 or newer, serve several subscribers
 * at once (CUPTI documentation 13.4, "2.4 Multiple Subscribers"): the first
 * subscriber asks for it (CUpti_SubscriberParams.allowMultipleSubscribers = 1
 * in cuptiSubscribe_v2), the choice is global, and every subscriber then uses
 * the per-subscriber ("V2") activity functions, which take its handle; the
 * unversioned ones cannot be mixed with them in one process (CUPTI answers
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED). Each subscriber gets its own
 * buffers, kinds, thread-id type and timestamp callback.
 *
 * At start vt__subs_subscribe decides, once, which API the tracer uses (the
 * "several" mode or the single-subscriber one) and subscribes; every activity
 * call of the tracer then goes through the functions below, which call the
 * API of that mode. The V2 entry points are looked up with dlsym (the tracer
 * is built against the 13.0 headers, which do not declare them); their
 * declarations are transcribed in subscribers.c with their sources.
 */

/* VRAMTRACE_SUBSCRIBERS (config.h): when to be one of several subscribers. */
enum vt__subs_policy {
    VT_SUBS_AUTO = 0, /* where CUPTI offers it, unless the record hook lends CUPTI to torch.profiler */
    VT_SUBS_SEVERAL,  /* wherever CUPTI offers it */
    VT_SUBS_ONE       /* never: the single-subscriber API, lend and takeover watch as on CUPTI 13.0 */
};

/*
 * Subscribe to CUPTI with callback xCallback, choosing the mode at the first
 * call (later calls, a lend taking its subscription back, subscribe in the
 * mode chosen then): several where CUPTI is 13.3 Update 1 or later (API
 * version 130301: 13.3.0's notes list a crash in multi-subscriber mode fixed
 * in Update 1), its library has every V2 entry point, CUPTI is not already in
 * single-subscriber mode, the policy allows it and CUPTI confirms the mode
 * after subscribing; otherwise cuptiSubscribe_v2 as on CUPTI 13.0 (the other
 * subscriber's name into zOld on CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
 * "" when unnamed). Policy auto with bLend (the record hook lends CUPTI to a
 * torch.profiler, whose Kineto uses the single-subscriber API) subscribes as
 * the single subscriber first, and joins several subscribers only when CUPTI
 * refuses that because another subscriber chose them. Sets *pHandle on
 * success. Returns CUPTI's result.
 */
CUptiResult vt__subs_subscribe(enum vt__subs_policy policy, int bLend, CUpti_CallbackFunc xCallback,
                               CUpti_SubscriberHandle *pHandle, char *zOld, size_t nOld);

/* 1: the tracer is one of several subscribers (no lend, no takeover possible); 0: the single-subscriber API. */
int vt__subs_several(void);

/* The mode chosen and why, as meta cupti_subscription says it ("several: ...", "one: ..."); "" before. */
const char *vt__subs_text(void);

/* The activity functions of the mode chosen (the tracer's own subscriber's in several mode). */
CUptiResult vt__cupti_enable(CUpti_ActivityKind kind);
CUptiResult vt__cupti_disable(CUpti_ActivityKind kind);
CUptiResult vt__cupti_get_attribute(CUpti_ActivityAttribute attr, size_t *pSize, void *pValue);
CUptiResult vt__cupti_set_attribute(CUpti_ActivityAttribute attr, size_t *pSize, void *pValue);
CUptiResult vt__cupti_thread_id_type(CUpti_ActivityThreadIdType type);
CUptiResult vt__cupti_timestamp_callback(CUpti_TimestampCallbackFunc xTimestamp);
CUptiResult vt__cupti_timestamp(uint64_t *pTs);
CUptiResult vt__cupti_next_record(uint8_t *pBuf, size_t validSize, CUpti_Activity **ppRecord);
CUptiResult vt__cupti_dropped(CUcontext ctx, uint32_t streamId, size_t *pDropped);

/*
 * Register the buffer callbacks (the single-subscriber signatures; in several
 * mode CUPTI calls adapters that hand xComplete a NULL context and stream 0,
 * which the per-subscriber completion does not report).
 */
CUptiResult vt__cupti_register_buffers(CUpti_BuffersCallbackRequestFunc xRequest,
                                       CUpti_BuffersCallbackCompleteFunc xComplete);

#endif
