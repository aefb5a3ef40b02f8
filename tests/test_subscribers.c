/* Tests of libvramtrace.so as one of several CUPTI subscribers (CUPTI 13.3+), against a scripted CUPTI with V2 API. */
#define VT_HARNESS_V2 1
#include "cupti_harness.h"

/*
 * Another CUPTI tool in the job (a profiler on CUPTI's multi-subscriber API):
 * it subscribes with allowMultipleSubscribers, registers its own buffer
 * callbacks, enables kernels, and counts the API callbacks and kernel records
 * it got. Its figures go to DIR/other.txt for the parent.
 */
static struct {
    CUpti_SubscriberHandle h;
    int nCallbacks, nKernels, nRecords;
    CUptiResult rSubscribe;
} g_other;

static void CUPTIAPI other_callback(void *pUser, CUpti_CallbackDomain d, CUpti_CallbackId cbid, const void *p)
{
    (void)pUser;
    (void)cbid;
    (void)p;
    if (d == RT) g_other.nCallbacks++;
}

static void CUPTIAPI other_request(uint8_t **ppBuf, size_t *pSize, size_t *pMax, void *pInfo)
{
    (void)pInfo;
    *pSize = 1 << 16;
    *ppBuf = aligned_alloc(8, *pSize);
    *pMax = 0;
}

static void CUPTIAPI other_complete(uint8_t *pBuf, size_t size, size_t valid, void *pInfo)
{
    CUpti_Activity *pRec = NULL;
    (void)size;
    (void)pInfo;
    while (cuptiActivityGetNextRecord_v2(g_other.h, pBuf, valid, &pRec) == CUPTI_SUCCESS) {
        g_other.nRecords++;
        if (pRec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) g_other.nKernels++;
    }
    free(pBuf);
}

/* The other tool starts: one more subscriber, its buffers, its kernels. */
static void other_tool_starts(void)
{
    char zOld[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = "";
    struct {
        size_t structSize;
        const char *subscriberName;
        char *oldSubscriberName;
        size_t oldSubscriberSize;
        uint8_t allowMultipleSubscribers, padding[7];
    } params = {SUBS_PARAMS_SIZE_V2, "another tool", zOld, sizeof zOld - 1, 1, {0}};
    g_other.rSubscribe = cuptiSubscribe_v2(&g_other.h, other_callback, NULL, (CUpti_SubscriberParams *)&params);
    if (g_other.rSubscribe != CUPTI_SUCCESS) return;
    JOB_CHECK(cuptiActivityRegisterCallbacks_v2(g_other.h, other_request, other_complete) == CUPTI_SUCCESS);
    JOB_CHECK(cuptiActivityEnable_v2(g_other.h, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, NULL) == CUPTI_SUCCESS);
}

static int g_bMarks; /* the record hook marks a torch.profiler's start and stop around the job's work */

/* The job: the other tool (unless it started first), an allocation and a kernel. */
static void job(void)
{
    char z[300];
    const char *zOut = getenv("VRAMTRACE_OUTPUT");
    FILE *f;
    g_bGateKinds = 1; /* CUPTI writes records of the kinds someone enabled only */
    if (!g_other.h) other_tool_starts();
    if (g_bMarks) {
        harness_nvtx_init();
        harness_nvtx_mark(VT_NVTXCTL_PREFIX "lend:torch.profiler");
        harness_nvtx_mark(VT_NVTXCTL_PREFIX "lent:torch.profiler");
    }
    harness_alloc(0x7000000, 801);
    harness_kernel(802, "gemm");
    if (g_bMarks) harness_nvtx_mark(VT_NVTXCTL_PREFIX "return:torch.profiler");
    cuptiActivityFlushAll(0); /* the other tool takes its buffers (everyone's come back) */
    snprintf(z, sizeof z, "%.*s/other.txt", (int)(strrchr(zOut, '/') - zOut), zOut);
    if (!(f = fopen(z, "w"))) _exit(72);
    fprintf(f, "subscribe %d callbacks %d kernels %d records %d mixed %d\n%s\n", (int)g_other.rSubscribe,
            g_other.nCallbacks, g_other.nKernels, g_other.nRecords, atomic_load(&g_nMixed),
            g_zJobFailed ? g_zJobFailed : "job checks ok");
    fclose(f);
}

/*
 * Run the job under a CUPTI of API version v (a driver older than r610 when
 * bOldDriver) with VRAMTRACE_SUBSCRIBERS zPolicy (NULL: unset) and
 * VRAMTRACE_LEND_CUPTI zLend; the other tool subscribes before the tracer
 * when bOtherFirst. stderr into zErr, the other tool's figures into zOther,
 * the trace (or NULL) returned.
 */
static sqlite3 *run_job(uint32_t v, int bOldDriver, const char *zPolicy, const char *zLend, int bOtherFirst,
                        char *zDir, char *zErr, size_t nErr, char *zOther, size_t nOther)
{
    sqlite3 *db;
    setenv("VRAMTRACE_QUIET", "1", 1);
    if (zPolicy) setenv("VRAMTRACE_SUBSCRIBERS", zPolicy, 1);
    if (zLend) setenv("VRAMTRACE_LEND_CUPTI", zLend, 1);
    g_cuptiVersion = v;
    g_bOldDriver = bOldDriver;
    g_xBeforeInit = bOtherFirst ? other_tool_starts : NULL;
    db = harness_run_traced("vt_subs", job, zDir, zErr, nErr, "other.txt", zOther, nOther);
    g_cuptiVersion = CUPTI_API_VERSION;
    g_bOldDriver = 0;
    g_xBeforeInit = NULL;
    unsetenv("VRAMTRACE_QUIET");
    unsetenv("VRAMTRACE_SUBSCRIBERS");
    unsetenv("VRAMTRACE_LEND_CUPTI");
    return db;
}

/* Close the trace and remove its directory. */
static void done(sqlite3 *db, const char *zDir)
{
    static const char *const azSuffix[] = {"", "-wal", "-shm"};
    char z[160];
    sqlite3_close(db);
    for (size_t i = 0; i < 3; i++) {
        snprintf(z, sizeof z, "%s/trace.db%s", zDir, azSuffix[i]);
        unlink(z);
    }
    ASSERT_EQ(0, rmdir(zDir));
}

/*
 * Run the job (run_job's arguments) and check what it left: one line on
 * stderr (the scripted CUPTI refuses MEMORY_POOL, as a driver without it
 * does), the other tool's figures starting with zWantOther, the job's
 * allocation (call and record) and kernel in the trace with no lend window or
 * takeover, and meta cupti_subscription zWantSub (its start, when that ends
 * with "...").
 */
static void expect_run(uint32_t v, int bOldDriver, const char *zPolicy, const char *zLend, int bOtherFirst,
                       const char *zWantOther, const char *zWantSub)
{
    char zDir[64], z[4096], zOther[512];
    size_t nSub = strlen(zWantSub);
    sqlite3 *db = run_job(v, bOldDriver, zPolicy, zLend, bOtherFirst, zDir, z, sizeof z, zOther, sizeof zOther);
    ASSERT_EQ(1, count_lines(z));
    ASSERT_CONTAINS(z, "cannot enable CUPTI activity MEMORY_POOL");
    ASSERT(!strncmp(zOther, zWantOther, strlen(zWantOther)));
    ASSERT(db != NULL);
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM kernel"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM memory_event WHERE address = 117440512 AND bytes = 1048576"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM api_call WHERE correlation = 801"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key = 'cupti_takeover_ns' OR key GLOB 'cupti_lend.*'"));
    qtext(db, "SELECT value FROM meta WHERE key = 'config.subscribers'", z, sizeof z);
    ASSERT_STREQ(zPolicy ? zPolicy : "auto", z);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_subscription'", z, sizeof z);
    if (nSub > 3 && !strcmp(zWantSub + nSub - 3, "...")) ASSERT(!strncmp(z, zWantSub, nSub - 3));
    else ASSERT_STREQ(zWantSub, z);
    done(db, zDir);
}

/* What the other tool got when it is one of several subscribers beside the tracer: everything. */
#define OTHER_GOT_ALL "subscribe 0 callbacks 2 kernels 1 records 1 mixed 0\njob checks ok"

/*
 * CUPTI 13.3 Update 1 with the multi-subscriber API: the tracer asks for
 * several subscribers and uses only the per-subscriber functions; another
 * tool that subscribes later gets every API callback and its own kernel
 * records, and the trace has everything too.
 */
TEST(several_subscribers_both_get_everything)
{
    expect_run(130301, 0, NULL, NULL, 0, OTHER_GOT_ALL,
               "several: one of several CUPTI subscribers (CUPTI API version 130301, multi-subscriber mode asked for "
               "by the tracer)");
}

/*
 * The other tool subscribed first and chose several subscribers: the tracer
 * joins it, even with the record hook lending CUPTI (the profiler is shut out
 * by that choice anyway).
 */
TEST(several_joins_a_subscriber_already_there)
{
    expect_run(130400, 0, NULL, "1", 1, OTHER_GOT_ALL,
               "several: one of several CUPTI subscribers (CUPTI API version 130400, multi-subscriber mode already "
               "on: another subscriber asked for it)");
}

/*
 * CUPTI 13.2 declares the first V2 functions but serves one subscriber (and
 * 13.3.0's notes list a crash in multi-subscriber mode): the tracer stays the
 * single subscriber, and a tool asking for several later is refused by CUPTI.
 */
TEST(cupti_13_2_one_subscriber)
{
    expect_run(130201, 0, NULL, NULL, 0, "subscribe 39 callbacks 0 kernels 0 records 0 mixed 0",
               "one: CUPTI API version 130201 serves one subscriber per process here (several from 13.3 Update 1, API "
               "version 130301, with a driver r610 or newer)");
    expect_run(130300, 0, NULL, NULL, 0, "subscribe 39 ", "one: CUPTI API version 130300 serves one subscriber...");
}

/*
 * A driver older than r610 under CUPTI 13.3: CUPTI takes the subscription but
 * not the mode; the tracer leaves it and subscribes as on CUPTI 13.0.
 */
TEST(old_driver_one_subscriber)
{
    expect_run(130301, 1, NULL, NULL, 0, "subscribe 39 ",
               "one: CUPTI API version 130301 did not enter multi-subscriber mode (a driver older than r610?)");
}

/*
 * The record hook lends CUPTI to torch.profiler (record without --keep-cupti):
 * by default the tracer stays the single subscriber, so that the profiler's
 * Kineto (single-subscriber API) keeps working; VRAMTRACE_SUBSCRIBERS=several
 * overrides it (and the hook's lend marks then change nothing), =one keeps
 * one subscriber everywhere.
 */
TEST(policy_lend_one_several)
{
    expect_run(130301, 0, NULL, "1", 0, "subscribe 39 ",
               "one: the record hook lends CUPTI to the job's torch.profiler, whose Kineto uses CUPTI's "
               "single-subscriber API...");
    g_bMarks = 1;
    expect_run(130301, 0, "several", "1", 0, OTHER_GOT_ALL, "several: ...");
    g_bMarks = 0;
    expect_run(130301, 0, "one", NULL, 0, "subscribe 39 ", "one: VRAMTRACE_SUBSCRIBERS=one");
}

VT_TEST_LIST(T(several_subscribers_both_get_everything) T(several_joins_a_subscriber_already_there)
             T(cupti_13_2_one_subscriber) T(old_driver_one_subscriber) T(policy_lend_one_several))
