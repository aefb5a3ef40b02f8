/* Lending CUPTI to the job's own profiler while it runs: the steps, their lock, and the windows in meta. */
#include "lend.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static const struct vt__lend_glue *_Atomic g_pGlue; /* set at vt__lend_start */
static atomic_int g_lent;          /* from a lend to its return: the activity API is the other client's */
static unsigned g_nLend;           /* windows so far (the meta index) */
static unsigned g_iApiGap;         /* > 0: API calls unrecorded since cupti_lend.<it>.api_from_ns */
static int g_bSubOffered;          /* the subscription was offered (once, at the first lend) */
static int g_bSaidLend, g_bSaidHeld, g_bSaidNoLend; /* each line is printed once */
static uint8_t g_perThreadBuf;     /* CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER at the lend ... */
static int g_bPerThreadKnown;      /* ... when it could be read */
static atomic_uint g_epoch;        /* bumped when the subscription changes */
static atomic_int g_early;         /* a profiler was lent CUPTI before tracing started, and holds it */
static char g_zEarly[48];          /* the last profiler the hook named before tracing started */
static char g_zTaker[48];          /* the first profiler the hook saw start without a lend (under g_mu) ... */
static uint64_t g_tTaker;          /* ... and when (the trace's clock); 0: none */

/* One "vramtrace:" line through the glue. */
static void say(const struct vt__lend_glue *g, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct vt__lend_glue *g, const char *zFmt, ...)
{
    char z[768];
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(z, sizeof z, zFmt, ap);
    va_end(ap);
    g->xSay(z);
}

/* One meta row of lend window i: cupti_lend.I.FIELD = zValue. */
static void meta(const struct vt__lend_glue *g, unsigned i, const char *zField, const char *zValue)
{
    char zKey[64];
    snprintf(zKey, sizeof zKey, "cupti_lend.%u.%s", i, zField);
    g->xMeta(zKey, zValue);
}

/* One time of lend window i (the trace's clock, ns, as every absolute time in meta). */
static void meta_ns(const struct vt__lend_glue *g, unsigned i, const char *zField, uint64_t t)
{
    char z[32];
    snprintf(z, sizeof z, "%llu", (unsigned long long)t);
    meta(g, i, zField, z);
}

/*
 * The subscription, back after a lend gave it up, when the profiler left it
 * free (API callbacks enabled again, the API gap closed); otherwise the other
 * subscriber is named once (meta and one line). Returns 0 when it is back.
 */
static int take_subscription_back(const struct vt__lend_glue *g, const char *zClient)
{
    char zOld[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1], z[160];
    CUptiResult r = g->xSubscribe(zOld, sizeof zOld);
    if (r == CUPTI_SUCCESS) {
        atomic_fetch_add(&g_epoch, 1);
        if (g->xEnableCallbacks() != 0) meta(g, g_iApiGap, "api_note", "some API callbacks could not be enabled again");
        meta_ns(g, g_iApiGap, "api_until_ns", g->xNow());
        g_iApiGap = 0;
        return 0;
    }
    if (g_bSaidHeld) return -1;
    g_bSaidHeld = 1;
    snprintf(z, sizeof z, "%s%s", zOld[0] ? zOld : zClient,
             r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "" : " (or CUPTI refused)");
    meta(g, g_iApiGap, "api_held_by", z);
    say(g, "%s keeps CUPTI's only subscription (%s): API calls (allocations through the CUDA API, OOMs, "
           "call sites) are not recorded in %s from now on, GPU activity (kernels, copies, allocation "
           "records) is recorded again whenever the profiler stops; record with --keep-cupti to keep "
           "the trace whole (the profiler then records no GPU activity)",
        zClient, g->xResultName(r), g->xPath());
    return -1;
}

/*
 * A profiler started while the tracer keeps CUPTI (record --keep-cupti's
 * start mark, or a lend the tracer could not make): it registers its own
 * buffer callbacks, so it is the client a takeover the watch reports went to.
 * The first one is kept: from it on no buffer comes back to the tracer.
 */
static void note_taker(const struct vt__lend_glue *g, const char *zClient)
{
    if (g_tTaker) return;
    snprintf(g_zTaker, sizeof g_zTaker, "%s", zClient);
    g_tTaker = g->xNow();
    if (!g_tTaker) g_tTaker = 1; /* a clock that reads 0 still says "seen" */
}

/* lend:CLIENT: the activity API handed to the profiler about to start. */
static void lend(const struct vt__lend_glue *g, const char *zClient)
{
    size_t n = sizeof g_perThreadBuf;
    uint64_t t;
    if (atomic_load(&g_lent)) return;
    if (!g->bOwnClock) {
        /* CUPTI's timestamps after the profiler could not be put back on the trace's clock */
        if (!g_bSaidNoLend)
            say(g, "cannot lend CUPTI to %s (no timestamp callback of vramtrace's own): the profiler takes "
                   "the activity buffers over, as reported below",
                zClient);
        g_bSaidNoLend = 1;
        note_taker(g, zClient);
        return;
    }
    t = g->xNow();
    g->xDisableKinds();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* every buffer of ours comes back now */
    g->xReportDrops();
    g_bPerThreadKnown = cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &n,
                                                  &g_perThreadBuf) == CUPTI_SUCCESS;
    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT); /* the thread ids Kineto expects */
    atomic_store(&g_lent, 1);
    g_nLend++;
    meta(g, g_nLend, "client", zClient);
    meta_ns(g, g_nLend, "from_ns", t);
    if (!g_bSubOffered) {
        /* Kineto subscribes at its first profile; it profiles without the GPU for good if it cannot */
        g_bSubOffered = 1;
        g->xUnsubscribe();
        atomic_fetch_add(&g_epoch, 1);
        g_iApiGap = g_nLend;
        meta_ns(g, g_iApiGap, "api_from_ns", g->xNow());
    }
    if (!g_bSaidLend && !g->bQuiet)
        say(g, "lending CUPTI to %s while it runs: its GPU activity goes to the profiler, not to %s (meta "
               "cupti_lend.*)",
            zClient, g->xPath());
    g_bSaidLend = 1;
}

/*
 * CUPTI's activity API set up for the tracer again (after a lend, or after
 * the other client finalized CUPTI): its timestamp and buffer callbacks,
 * thread ids, per-thread buffers, the watch, kinds; what CUPTI refused goes
 * into lend window i's note and one line. Returns 0, or -1 when CUPTI refused
 * the callbacks (no GPU activity can be recorded).
 */
static int set_activity_up(const struct vt__lend_glue *g, unsigned i, const char *zClient)
{
    char z[512];
    CUptiResult r = g->xOwnCallbacks(); /* Kineto's TSC clock out, our buffers in */
    if (r != CUPTI_SUCCESS) {
        /* records would go to the profiler's callbacks, or carry its clock: none is taken */
        snprintf(z, sizeof z, "CUPTI refused the tracer's callbacks after the profiler (%s): GPU activity "
                 "is not recorded from then on", g->xResultName(r));
        meta(g, i, "note", z);
        say(g, "%s", z);
        return -1;
    }
    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (g_bPerThreadKnown) {
        size_t n = sizeof g_perThreadBuf;
        cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &n, &g_perThreadBuf);
    }
    g->xRewatch();
    if (g->xEnableKinds(z, sizeof z) != 0) {
        meta(g, i, "note", z);
        say(g, "after lending CUPTI to %s, activity %s could not be enabled again; those events are not "
               "recorded from then on",
            zClient, z);
    }
    return 0;
}

/* return:CLIENT: the profiler stopped and took its records; CUPTI is the tracer's again. */
static void take_back(const struct vt__lend_glue *g, const char *zClient)
{
    uint64_t t;
    if (!atomic_load(&g_lent)) return;
    if (g_iApiGap) take_subscription_back(g, zClient);
    t = g->xNow();
    if (set_activity_up(g, g_nLend, zClient) != 0) return; /* stays lent: the flush thread leaves CUPTI alone */
    meta_ns(g, g_nLend, "until_ns", t);
    atomic_store(&g_lent, 0);
}

void vt__lend_start(const struct vt__lend_glue *pGlue)
{
    atomic_store(&g_pGlue, pGlue);
}

void vt__lend_control(const char *zMsg, int bActive)
{
    static const char *const azOp[] = {"lend:", "lent:", "return:", "start:", "stop:"};
    enum { N_OP = sizeof azOp / sizeof azOp[0] };
    const struct vt__lend_glue *g = atomic_load(&g_pGlue);
    int saved = errno, op;
    char zClient[48];
    size_t i, n = 0;
    for (op = 0; op < N_OP && strncmp(zMsg, azOp[op], strlen(azOp[op])) != 0; op++) {
    }
    if (op == N_OP) goto done;
    for (i = strlen(azOp[op]); zMsg[i] && n < sizeof zClient - 1; i++, n++) /* printable, bounded */
        zClient[n] = zMsg[i] > ' ' && zMsg[i] < 0x7f ? zMsg[i] : '?';
    zClient[n] = '\0';
    if (!n) snprintf(zClient, sizeof zClient, "a profiler");
    if (!g) {
        /* a profiler kept by start: (--keep-cupti) is only named, should it refuse the tracer */
        if (op == 0 || op == 3) snprintf(g_zEarly, sizeof g_zEarly, "%s", zClient);
        if (op == 0 || op == 2) atomic_store(&g_early, op == 0);
        goto done;
    }
    if (!bActive) goto done;
    pthread_mutex_lock(&g_mu);
    if (op == 0) lend(g, zClient);
    else if (op == 1 && atomic_load(&g_lent) && g_iApiGap) take_subscription_back(g, zClient);
    else if (op == 2) take_back(g, zClient);
    else if (op == 3 && !atomic_load(&g_lent)) note_taker(g, zClient);
    pthread_mutex_unlock(&g_mu);
done:
    errno = saved;
}

int vt__lend_early(char *zClient, size_t nClient)
{
    if (!atomic_load(&g_early)) return 0;
    snprintf(zClient, nClient, "%s", g_zEarly);
    return 1;
}

int vt__lend_taker(char *zClient, size_t nClient, uint64_t *pT)
{
    if (!g_tTaker) return 0;
    snprintf(zClient, nClient, "%s", g_zTaker);
    *pT = g_tTaker;
    return 1;
}

const char *vt__lend_early_client(void)
{
    return g_zEarly;
}

void vt__lend_lock(void)
{
    pthread_mutex_lock(&g_mu);
}

void vt__lend_unlock(void)
{
    pthread_mutex_unlock(&g_mu);
}

int vt__lend_lent(void)
{
    return atomic_load(&g_lent);
}

/*
 * Between windows, while a profiler kept the subscription: is it free again?
 * Kineto gives it up only when it finalizes CUPTI (TEARDOWN_CUPTI=1, after a
 * profile), which also wipes the tracer's activity set-up. So, once back, the
 * activity API is set up again, and the last window's GPU activity counts as
 * unknown until then (its until_ns moves; its note says why). Tried every
 * fourth call (flush tick).
 */
void vt__lend_between(void)
{
    static unsigned nTick;
    const struct vt__lend_glue *g = atomic_load(&g_pGlue);
    if (!g || atomic_load(&g_lent) || !g_iApiGap || ++nTick % 4 != 0 ||
        take_subscription_back(g, "the profiler") != 0)
        return;
    if (set_activity_up(g, g_nLend, "the profiler") != 0) {
        atomic_store(&g_lent, 1); /* nothing to record: the flush thread leaves CUPTI alone */
        return;
    }
    meta_ns(g, g_nLend, "until_ns", g->xNow());
    meta(g, g_nLend, "note", "CUPTI's subscription came free after this window (the profiler finalized CUPTI, "
                             "TEARDOWN_CUPTI=1): the tracer set CUPTI up again; GPU activity until then is unknown");
}

unsigned vt__lend_epoch(void)
{
    return atomic_load_explicit(&g_epoch, memory_order_relaxed);
}
