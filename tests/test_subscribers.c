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
    char zErrFile[128], zPath[160], zOtherFile[160];
    sqlite3 *db = NULL;
    int status;
    snprintf(zDir, 64, "/tmp/vt_subs_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    snprintf(zOtherFile, sizeof zOtherFile, "%s/other.txt", zDir);
    setenv("VRAMTRACE_QUIET", "1", 1);
    if (zPolicy) setenv("VRAMTRACE_SUBSCRIBERS", zPolicy, 1);
    if (zLend) setenv("VRAMTRACE_LEND_CUPTI", zLend, 1);
    g_cuptiVersion = v;
    g_bOldDriver = bOldDriver;
    g_xBeforeInit = bOtherFirst ? other_tool_starts : NULL;
    status = run_child(zDir, zErrFile, MODE_OK, job);
    g_cuptiVersion = CUPTI_API_VERSION;
    g_bOldDriver = 0;
    g_xBeforeInit = NULL;
    unsetenv("VRAMTRACE_QUIET");
    unsetenv("VRAMTRACE_SUBSCRIBERS");
    unsetenv("VRAMTRACE_LEND_CUPTI");
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    vt_read_file(zErrFile, zErr, nErr);
    unlink(zErrFile);
    vt_read_file(zOtherFile, zOther, nOther);
    unlink(zOtherFile);
    if (access(zPath, F_OK) == 0) ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
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

/* The trace holds the job's allocation (call and record) and its kernel. */
static void assert_job_recorded(sqlite3 *db)
{
    ASSERT(db != NULL);
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM kernel"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM memory_event WHERE address = 117440512 AND bytes = 1048576"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM api_call WHERE correlation = 801"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key = 'cupti_takeover_ns' OR key GLOB 'cupti_lend.*'"));
}

/*
 * CUPTI 13.3 with the multi-subscriber API: the tracer asks for several
 * subscribers and uses only the per-subscriber functions; another tool that
 * subscribes later gets every API callback and its own kernel records, and
 * the trace has everything too.
 */
TEST(several_subscribers_both_get_everything)
{
    char zDir[64], z[4096], zOther[512];
    sqlite3 *db = run_job(130301, 0, NULL, NULL, 0, zDir, z, sizeof z, zOther, sizeof zOther);
    /* the scripted CUPTI refuses MEMORY_POOL, as a driver without it does: that line only */
    ASSERT_EQ(1, count_lines(z));
    ASSERT_CONTAINS(z, "cannot enable CUPTI activity MEMORY_POOL");
    ASSERT_CONTAINS(zOther, "subscribe 0 callbacks 2 kernels 1 records 1 mixed 0\njob checks ok");
    assert_job_recorded(db);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_subscription'", z, sizeof z);
    ASSERT_STREQ("several: one of several CUPTI subscribers (CUPTI API version 130301, multi-subscriber mode asked "
                 "for by the tracer)", z);
    done(db, zDir);
}

/* The other tool subscribed first and chose several subscribers: the tracer joins it. */
TEST(several_joins_a_subscriber_already_there)
{
    char zDir[64], z[4096], zOther[512];
    /* with the record hook lending CUPTI: the mode is already several, a lend would help nobody */
    sqlite3 *db = run_job(130400, 0, NULL, "1", 1, zDir, z, sizeof z, zOther, sizeof zOther);
    ASSERT_EQ(1, count_lines(z));
    ASSERT_CONTAINS(zOther, "subscribe 0 callbacks 2 kernels 1 records 1 mixed 0\njob checks ok");
    assert_job_recorded(db);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_subscription'", z, sizeof z);
    ASSERT_STREQ("several: one of several CUPTI subscribers (CUPTI API version 130400, multi-subscriber mode "
                 "already on: another subscriber asked for it)", z);
    done(db, zDir);
}

/*
 * CUPTI 13.2 has the V2 functions as a beta only: the tracer stays the single
 * subscriber (as on 13.0), and a tool asking for several subscribers later is
 * refused by CUPTI, as before.
 */
TEST(cupti_13_2_one_subscriber)
{
    char zDir[64], z[4096], zOther[512];
    sqlite3 *db = run_job(130201, 0, NULL, NULL, 0, zDir, z, sizeof z, zOther, sizeof zOther);
    ASSERT_EQ(1, count_lines(z));
    ASSERT_CONTAINS(zOther, "subscribe 39 callbacks 0 kernels 0 records 0 mixed 0");
    assert_job_recorded(db);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_subscription'", z, sizeof z);
    ASSERT_STREQ("one: CUPTI API version 130201 serves one subscriber per process here (several from 13.3 Update 1, "
                 "API version 130301, with a driver r610 or newer)", z);
    done(db, zDir);
}

/*
 * A driver older than r610 under CUPTI 13.3: CUPTI takes the subscription but
 * not the mode; the tracer leaves it and subscribes as on CUPTI 13.0.
 */
TEST(old_driver_one_subscriber)
{
    char zDir[64], z[4096], zOther[512];
    sqlite3 *db = run_job(130301, 1, NULL, NULL, 0, zDir, z, sizeof z, zOther, sizeof zOther);
    ASSERT_EQ(1, count_lines(z));
    assert_job_recorded(db);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_subscription'", z, sizeof z);
    ASSERT_STREQ("one: CUPTI API version 130301 did not enter multi-subscriber mode (a driver older than r610?)", z);
    done(db, zDir);
}

/*
 * The record hook lends CUPTI to torch.profiler (record without --keep-cupti):
 * by default the tracer stays the single subscriber, so that the profiler's
 * Kineto (single-subscriber API) keeps working; VRAMTRACE_SUBSCRIBERS=several
 * overrides it, =one keeps one subscriber everywhere.
 */
TEST(policy_lend_one_several)
{
    char zDir[64], z[4096], zOther[512];
    sqlite3 *db = run_job(130301, 0, NULL, "1", 0, zDir, z, sizeof z, zOther, sizeof zOther);
    assert_job_recorded(db);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_subscription'", z, sizeof z);
    ASSERT_CONTAINS(z, "one: the record hook lends CUPTI to the job's torch.profiler, whose Kineto uses CUPTI's "
                       "single-subscriber API");
    qtext(db, "SELECT value FROM meta WHERE key = 'config.subscribers'", z, sizeof z);
    ASSERT_STREQ("auto", z);
    done(db, zDir);

    /* one of several subscribers, the hook's lend marks change nothing: no window, every record kept */
    g_bMarks = 1;
    db = run_job(130301, 0, "several", "1", 0, zDir, z, sizeof z, zOther, sizeof zOther);
    g_bMarks = 0;
    ASSERT_CONTAINS(zOther, "subscribe 0 callbacks 2 kernels 1 records 1 mixed 0");
    assert_job_recorded(db);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_subscription'", z, sizeof z);
    ASSERT_CONTAINS(z, "several: ");
    done(db, zDir);

    db = run_job(130301, 0, "one", NULL, 0, zDir, z, sizeof z, zOther, sizeof zOther);
    ASSERT_CONTAINS(zOther, "subscribe 39 ");
    assert_job_recorded(db);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_subscription'", z, sizeof z);
    ASSERT_STREQ("one: VRAMTRACE_SUBSCRIBERS=one", z);
    qtext(db, "SELECT value FROM meta WHERE key = 'config.subscribers'", z, sizeof z);
    ASSERT_STREQ("one", z);
    done(db, zDir);
}

VT_TEST_LIST(T(several_subscribers_both_get_everything) T(several_joins_a_subscriber_already_there)
             T(cupti_13_2_one_subscriber) T(old_driver_one_subscriber) T(policy_lend_one_several))
