/* Tests of libvramtrace.so's CUPTI glue against a scripted CUPTI and driver interposed by this program. */
#include "cupti_harness.h"

/* Kernel launches while 0x7000000 (1 MiB) and 0x9000000 (2 MiB, mapped) are live. */
static void launches(void)
{
    /* cudaLaunchKernel: recorded once (the runtime call), its arguments scanned at the driver
     * launch it makes, under the runtime call's correlation id */
    {
        uint64_t a = 0x7000010, b = 0x5555;
        int i32 = 7, st = 0;
        void *apArg[] = {&a, &i32, &b};
        cudaLaunchKernel_v7000_params rp;
        cuLaunchKernel_params lp = {(CUfunction)(uintptr_t)0x1234, 1, 1, 1, 32, 1, 1, 0, NULL, apArg, NULL};
        memset(&rp, 0, sizeof rp);
        rp.args = apArg;
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER, &rp, &st, 30);
        g_depth++;
        call(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &lp, 0, 31);
        g_depth--;
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT, &rp, &st, 30);
    }
    /* cuLaunchKernel with an argument buffer in `extra`: two allocations used */
    {
        uint64_t aBuf[3] = {7, 0x9000100, 0x7000008};
        size_t nBuf = sizeof aBuf;
        void *aExtra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, aBuf, CU_LAUNCH_PARAM_BUFFER_SIZE, &nBuf,
                          CU_LAUNCH_PARAM_END};
        cuLaunchKernel_params lp = {(CUfunction)(uintptr_t)0x99, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, aExtra};
        call(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &lp, 0, 32);
    }
}

static char g_host[64]; /* host memory the scripted copy reads */

/* The scripted CUDA session the main test replays. */
static void script(void)
{
    CUpti_ResourceData rd;
    void *pDev = NULL;
    int saved;

    /* activity records name threads as gettid does, like api_call.thread */
    if (g_threadIdType != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) _exit(32);
    /* a context on device 0 is created (twice: one device row) */
    memset(&rd, 0, sizeof rd);
    rd.context = CTX0;
    g_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &rd);
    g_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &rd);

    /* cudaMalloc(1 MiB) succeeds; the driver's cuMemAlloc inside it is not recorded again */
    {
        cudaMalloc_v3020_params rp = {&pDev, 1 << 20};
        CUdeviceptr dptr = 0;
        cuMemAlloc_v2_params dp = {&dptr, 1 << 20};
        int st = 0;
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &rp, &st, 10);
        g_depth++;
        dptr = 0x7000000;
        call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &dp, 0, 10);
        g_depth--;
        pDev = (void *)(uintptr_t)0x7000000;
        saved = 4321;
        errno = saved;
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &rp, &st, 10);
        if (errno != saved) _exit(30); /* callbacks keep errno */
    }
    /* cudaMalloc(1 TiB) fails with cudaErrorMemoryAllocation (2): an OOM event */
    {
        void *p2 = NULL;
        cudaMalloc_v3020_params rp = {&p2, (size_t)1 << 40};
        call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &rp, 2, 11);
    }
    /* a driver-only copy and an async memset on a per-thread stream */
    {
        cuMemcpyHtoD_v2_params cp = {0x7000000, g_host, sizeof g_host};
        cudaMemsetAsync_v3020_params mp = {(void *)(uintptr_t)0x7000100, 0, 256,
                                           (cudaStream_t)(uintptr_t)7};
        call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, &cp, 0, 12);
        call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000, &mp, 0, 13);
    }
    /* expandable segments: create, map, unmap, release */
    {
        CUmemGenericAllocationHandle hMem = 0;
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 0;
        cuMemCreate_params cp = {&hMem, 2 << 20, &prop, 0};
        int st = 0;
        api(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, CUPTI_API_ENTER, &cp, &st, 14);
        hMem = 0xabc;
        api(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, CUPTI_API_EXIT, &cp, &st, 14);
        cuMemMap_params mp = {0x9000000, 2 << 20, 0, 0xabc, 0};
        call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemMap, &mp, 0, 15);
        launches();
        cuMemUnmap_params up = {0x9000000, 2 << 20};
        call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, &up, 0, 16);
        cuMemRelease_params rp = {0xabc};
        call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemRelease, &rp, 0, 17);
        /* a failed cuMemCreate is an OOM too */
        cuMemCreate_params cp2 = {&hMem, (size_t)64 << 30, &prop, 0};
        call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &cp2, CUDA_ERROR_OUT_OF_MEMORY, 18);
    }
    /* cudaFree */
    {
        cudaFree_v3020_params fp = {(void *)(uintptr_t)0x7000000};
        call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &fp, 0, 19);
    }
    /* another process's memory opened through IPC (sized by the driver) and closed */
    {
        void *p = NULL;
        cudaIpcMemHandle_t h;
        cudaIpcOpenMemHandle_v4010_params op;
        cudaIpcCloseMemHandle_v4010_params cp = {(void *)(uintptr_t)0x30000000};
        int st = 0;
        memset(&h, 0, sizeof h);
        op.devPtr = &p;
        op.handle = h;
        op.flags = 0;
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaIpcOpenMemHandle_v4010, CUPTI_API_ENTER, &op, &st, 21);
        p = (void *)(uintptr_t)0x30000000;
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaIpcOpenMemHandle_v4010, CUPTI_API_EXIT, &op, &st, 21);
        call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaIpcCloseMemHandle_v4010, &cp, 0, 22);
    }
    /* after the free, a pointer into the old allocation is no longer a use */
    {
        uint64_t a = 0x7000010, b = 0;
        int i32 = 3;
        void *apArg[] = {&a, &i32, &b};
        cuLaunchKernel_params lp = {(CUfunction)(uintptr_t)0x1234, 1, 1, 1, 32, 1, 1, 0, NULL, apArg, NULL};
        call(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &lp, 0, 33);
    }
    /* an API this library does not record is ignored */
    {
        int st = 0;
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, CUPTI_API_ENTER, NULL, &st, 20);
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, CUPTI_API_EXIT, NULL, &st, 20);
    }
    /* an activity buffer goes round; CUPTI reports 5 records it had to drop */
    {
        uint8_t *pBuf = NULL;
        size_t n = 0, nMax = 99;
        g_request(&pBuf, &n, &nMax);
        if (!pBuf || n != ((size_t)4 << 20) || nMax != 0) _exit(31);
        g_nDropped = 5;
        g_complete(NULL, 0, pBuf, n, 0);
    }
}

TEST(scripted_session_records_exactly)
{
    char zDir[64], zErrFile[128], zPath[128], z[4096], zLine[256];
    sqlite3 *db = NULL;
    struct stat st;
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    status = run_child(zDir, zErrFile, MODE_OK, script);
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, z);
    /* one warning for the activity kind that failed, one start line */
    ASSERT_EQ(2, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: cannot enable CUPTI activity MEMORY_POOL (CUPTI_ERROR_NOT_SUPPORTED)");
    snprintf(zLine, sizeof zLine, "to %s\n", zPath);
    ASSERT_CONTAINS(z, "vramtrace: tracing process ");
    ASSERT_CONTAINS(z, zLine);
    ASSERT_EQ(0, stat(zPath, &st));
    ASSERT_EQ(0600, st.st_mode & 07777);

    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    /* api_call: 2 cudaMalloc, copy, memset, 5 VMM, cudaFree, 2 IPC, 3 launches; the nested
     * cuMemAlloc and cuLaunchKernel are not there */
    ASSERT_EQ(15, q(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM api_call WHERE api = 20"));
    ASSERT_EQ(2, q(db, "SELECT count(*) FROM api_call WHERE api = 1"));
    ASSERT_EQ(0x7000000, q(db, "SELECT ptr FROM api_call WHERE correlation = 10"));
    ASSERT_EQ(1 << 20, q(db, "SELECT bytes FROM api_call WHERE correlation = 10"));
    ASSERT_EQ(0, q(db, "SELECT status FROM api_call WHERE correlation = 10"));
    ASSERT_EQ(0, q(db, "SELECT device FROM api_call WHERE correlation = 10"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM api_call WHERE correlation = 10 AND end >= start AND start > 0"));
    ASSERT_EQ(2, q(db, "SELECT status FROM api_call WHERE correlation = 11"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM api_call WHERE correlation = 11 AND ptr IS NOT NULL"));
    ASSERT_EQ(68, q(db, "SELECT api FROM api_call WHERE correlation = 12"));
    ASSERT_EQ(0x7000000, q(db, "SELECT dst FROM api_call WHERE correlation = 12"));
    ASSERT_EQ(64, q(db, "SELECT bytes FROM api_call WHERE correlation = 12"));
    ASSERT_EQ(81, q(db, "SELECT api FROM api_call WHERE correlation = 13"));
    ASSERT_EQ(0x7000100, q(db, "SELECT dst FROM api_call WHERE correlation = 13"));
    ASSERT_EQ(1007, q(db, "SELECT stream FROM api_call WHERE correlation = 13"));
    ASSERT_EQ(2, q(db, "SELECT api FROM api_call WHERE correlation = 19"));
    ASSERT_EQ(0x7000000, q(db, "SELECT ptr FROM api_call WHERE correlation = 19"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM api_call WHERE correlation = 20"));
    ASSERT_EQ(1, q(db, "SELECT count(DISTINCT thread) FROM api_call"));

    /* launches: the runtime one once, the direct driver ones; uses found by argument scans */
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM api_call WHERE api = 100"));
    ASSERT_EQ(2, q(db, "SELECT count(*) FROM api_call WHERE api = 102"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM api_call WHERE correlation = 31"));
    ASSERT_EQ(6, q(db, "SELECT count(*) FROM buffer_use"));
    ASSERT_EQ(3, q(db, "SELECT count(*) FROM buffer_use WHERE kind = 0 AND device = 0"));
    /* the copy's host source and device destination, the set's destination, as the calls gave them */
    {
        char zWant[160];
        snprintf(zWant, sizeof zWant, "12:1:%llx 12:2:7000000 13:3:7000100",
                 (unsigned long long)(uintptr_t)g_host);
        qtext(db, "SELECT group_concat(correlation || ':' || kind || ':' || printf('%x', address), ' ')"
                  " FROM (SELECT * FROM buffer_use WHERE kind > 0 AND device = 0 AND ts IS NOT NULL"
                  " ORDER BY correlation, kind)", zLine, sizeof zLine);
        ASSERT_STREQ(zWant, zLine);
    }
    ASSERT_EQ(0x7000000, q(db, "SELECT address FROM buffer_use WHERE correlation = 30"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM buffer_use WHERE correlation = 30"));
    ASSERT_EQ(0x9000000 + 0x7000000, q(db, "SELECT sum(address) FROM buffer_use WHERE correlation = 32"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM buffer_use WHERE correlation = 33"));

    /* call sites: every allocation, free, VMM, copy and set call has one; launches do not */
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM api_call WHERE api < 100 AND stack_id IS NULL"));
    ASSERT_EQ(3, q(db, "SELECT count(*) FROM api_call WHERE api >= 100 AND stack_id IS NULL"));
    ASSERT(q(db, "SELECT count(*) FROM stack") >= 2);
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM api_call a WHERE stack_id IS NOT NULL AND"
                       " NOT EXISTS (SELECT 1 FROM stack s WHERE s.id = a.stack_id)"));
    /* innermost frame: this program's code, not the tracer's */
    qtext(db, "SELECT s.value FROM api_call a JOIN frame f ON f.stack_id = a.stack_id AND f.idx = 0"
              " JOIN string s ON s.id = f.module_id WHERE a.correlation = 10", zLine, sizeof zLine);
    ASSERT_CONTAINS(zLine, "test_inject_cupti");
    ASSERT_EQ(1, q(db, "SELECT stack_id = (SELECT stack_id FROM oom_event WHERE api = 1) FROM api_call"
                       " WHERE correlation = 11"));

    /* oom_event: the failed cudaMalloc and the failed cuMemCreate, with free/total then */
    ASSERT_EQ(2, q(db, "SELECT count(*) FROM oom_event"));
    ASSERT_EQ(1ll << 40, q(db, "SELECT bytes FROM oom_event WHERE api = 1"));
    ASSERT_EQ(2, q(db, "SELECT status FROM oom_event WHERE api = 1"));
    ASSERT_EQ(1ll << 30, q(db, "SELECT free_bytes FROM oom_event WHERE api = 1"));
    ASSERT_EQ(80ll << 30, q(db, "SELECT total_bytes FROM oom_event WHERE api = 1"));
    ASSERT_EQ(11, q(db, "SELECT correlation FROM oom_event WHERE api = 1"));
    ASSERT_EQ(64ll << 30, q(db, "SELECT bytes FROM oom_event WHERE api = 40"));
    ASSERT_EQ(CUDA_ERROR_OUT_OF_MEMORY, q(db, "SELECT status FROM oom_event WHERE api = 40"));

    /* memory_event from the VMM and IPC calls (the host records; no activity records were fed) */
    ASSERT_EQ(6, q(db, "SELECT count(*) FROM memory_event"));
    ASSERT_EQ(16 << 20, q(db, "SELECT bytes FROM memory_event WHERE op = 7 AND address = 0x30000000"));
    ASSERT_EQ(16 << 20, q(db, "SELECT bytes FROM memory_event WHERE op = 8 AND address = 0x30000000"));
    ASSERT_EQ(2 << 20, q(db, "SELECT bytes FROM memory_event WHERE op = 4")); /* from its create */
    ASSERT_EQ(0xabc, q(db, "SELECT address FROM memory_event WHERE op = 3"));
    ASSERT_EQ(2 << 20, q(db, "SELECT bytes FROM memory_event WHERE op = 3"));
    ASSERT_EQ(0, q(db, "SELECT device FROM memory_event WHERE op = 3"));
    ASSERT_EQ(3, q(db, "SELECT mem_kind FROM memory_event WHERE op = 3"));
    ASSERT_EQ(0x9000000, q(db, "SELECT address FROM memory_event WHERE op = 5"));
    ASSERT_EQ(0xabc, q(db, "SELECT pool_address FROM memory_event WHERE op = 5"));
    ASSERT_EQ(0x9000000, q(db, "SELECT address FROM memory_event WHERE op = 6"));
    ASSERT_EQ(0xabc, q(db, "SELECT address FROM memory_event WHERE op = 4"));

    /* CUPTI's own VRAM: 3 buffers of 3.2 MB pre-allocated in the one context of device 0 */
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti.device_bytes.0'", zLine, sizeof zLine);
    ASSERT_STREQ("9600000", zLine);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti.device_bytes_max.0'", zLine, sizeof zLine);
    ASSERT_STREQ("800000000", zLine);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti.device_buffer_size'", zLine, sizeof zLine);
    ASSERT_STREQ("3200000", zLine);
    ASSERT_EQ(4, q(db, "SELECT count(*) FROM meta WHERE key LIKE 'cupti.device_buffer_%'"));
    /* device row: once, from the driver queries */
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM device"));
    qtext(db, "SELECT name FROM device WHERE id = 0", zLine, sizeof zLine);
    ASSERT_STREQ("Fake GPU 0", zLine);
    qtext(db, "SELECT uuid FROM device WHERE id = 0", zLine, sizeof zLine);
    ASSERT_STREQ("GPU-10111213-1415-1617-1819-1a1b1c1d1e1f", zLine);
    ASSERT_EQ(80ll << 30, q(db, "SELECT total_bytes FROM device"));
    ASSERT_EQ(9, q(db, "SELECT cc_major FROM device"));
    ASSERT_EQ(132, q(db, "SELECT sm_count FROM device"));
    ASSERT_EQ(27, q(db, "SELECT pci_bus FROM device"));
    ASSERT_EQ(2619000ll * 2 * 640, q(db, "SELECT global_memory_bandwidth_kbps FROM device"));

    /* CUPTI's own drop count */
    ASSERT_EQ(5, q(db, "SELECT sum(count) FROM dropped WHERE source = 0"));

    /* meta written by the glue */
    qtext(db, "SELECT value FROM meta WHERE key = 'cuda_driver_version'", zLine, sizeof zLine);
    ASSERT_STREQ("13000", zLine);
    ASSERT(q(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'cupti_version'") >= 130000);
    ASSERT(q(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'clock_anchor_wall_ns'") >
           1600000000ll * 1000000000ll);
    ASSERT(q(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'clock_anchor_cupti_ns'") > 0);
    ASSERT(q(db, "SELECT (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'end_ns') -"
                 " (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns')") >= 0);
    /* config.kernels and config.subscribers among them */
    ASSERT_EQ(11, q(db, "SELECT count(*) FROM meta WHERE key LIKE 'config.%'"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM meta WHERE key = 'tracer_version'"));
    sqlite3_close(db);
    {
        char zCmd[160];
        snprintf(zCmd, sizeof zCmd, "rm -rf %s", zDir);
        ASSERT_EQ(0, system(zCmd));
    }
}

/* Another profiler holds CUPTI: one line naming it and what to do; nothing on disk. */
TEST(multiple_subscribers_named)
{
    char zDir[64], zErrFile[128], z[4096];
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    status = run_child(zDir, zErrFile, MODE_MULTIPLE, NULL);
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(0, WEXITSTATUS(status));
    ASSERT_EQ(1, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: tracing off: another CUPTI tool already profiles this process "
                       "(CUPTI for Nsight Systems)");
    ASSERT_CONTAINS(z, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
    ASSERT_CONTAINS(z, "PyTorch's profiler");
    ASSERT_CONTAINS(z, "run without the other profiler, or use it alone");
    ASSERT_EQ(0, rmdir(zDir)); /* empty: no trace left behind */
}

/* CUPTI refuses the buffer callbacks after the trace was created: the file is removed again. */
TEST(late_failure_removes_trace)
{
    char zDir[64], zErrFile[128], z[4096];
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    status = run_child(zDir, zErrFile, MODE_REGISTER_FAILS, NULL);
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(0, WEXITSTATUS(status));
    ASSERT_EQ(1, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: tracing off: cannot register CUPTI activity buffers "
                       "(CUPTI_ERROR_INVALID_OPERATION)");
    ASSERT_EQ(0, rmdir(zDir));
}

/* Threads keep calling cudaMalloc/cudaFree while the process exits. */
static atomic_long g_nCalls;

static void *hammer(void *pArg)
{
    uint32_t corr = (uint32_t)(uintptr_t)pArg;
    for (;;) {
        void *p = NULL;
        cudaMalloc_v3020_params mp = {&p, 4096};
        cudaFree_v3020_params fp = {NULL};
        int st = 0;
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &mp, &st, corr);
        p = (void *)(uintptr_t)(0x100000000ull + (uint64_t)corr * 4096);
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &mp, &st, corr);
        fp.devPtr = p;
        call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &fp, 0, corr + 1);
        corr += 2;
        atomic_fetch_add(&g_nCalls, 2);
    }
    return NULL;
}

static void exit_under_load(void)
{
    pthread_t aTh[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&aTh[i], NULL, hammer, (void *)(uintptr_t)(1000000u * (i + 1))) != 0) _exit(40);
    while (atomic_load(&g_nCalls) < 20000) usleep(1000);
    /* return: run_child calls exit(0) with the threads still inside the callbacks */
}

TEST(exit_while_threads_call_cuda)
{
    char zDir[64], zErrFile[128], zPath[128], z[4096], zErr[4096];
    sqlite3 *db = NULL;
    int status;
    sqlite3_int64 nCalls;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    status = run_child(zDir, zErrFile, MODE_OK, exit_under_load);
    vt_read_file(zErrFile, zErr, sizeof zErr);
    unlink(zErrFile);
    /* the exit neither hangs nor crashes (a hang ends in the harness's time limit) */
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, zErr);
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    qtext(db, "PRAGMA integrity_check", z, sizeof z);
    ASSERT_STREQ("ok", z);
    ASSERT_EQ(q(db, "SELECT count(*) FROM api_call WHERE api = 1") > 0, 1);
    qtext(db, "SELECT value FROM meta WHERE key = 'closed_cleanly'", z, sizeof z);
    if (strcmp(z, "1") == 0) {
        /* closed in time: every call is in the trace or counted as dropped */
        nCalls = q(db, "SELECT count(*) FROM api_call") +
                 q(db, "SELECT coalesce(sum(count), 0) FROM dropped WHERE source = 1");
        ASSERT(nCalls >= 20000);
    } else {
        /* the bounded close ran out of time (a loaded machine, a sanitizer build, four threads
         * spinning): that is said in one line, and what was committed is readable (above) */
        ASSERT_CONTAINS(zErr, "may be incomplete: its last rows were not written within 5000 ms at exit");
    }
    sqlite3_close(db);
    {
        char zCmd[160];
        snprintf(zCmd, sizeof zCmd, "rm -rf %s", zDir);
        ASSERT_EQ(0, system(zCmd));
    }
}

/* The CUDA C program: two allocations, then the launches of both nvcc-compiled libraries. */
static void nvcc_program(void)
{
#if defined(VT_NVCC_LAUNCHES_SO) && defined(VT_NVCC_LAUNCHES_PTSZ_SO)
    static const char *const azLib[] = {VT_NVCC_LAUNCHES_SO, VT_NVCC_LAUNCHES_PTSZ_SO};
    void *pX = NULL, *pY = NULL;
    cudaMalloc_v3020_params mx = {&pX, 1 << 20}, my = {&pY, 1 << 20};
    int st = 0;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &mx, &st, 10);
    pX = (void *)(uintptr_t)0x7000000;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &mx, &st, 10);
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &my, &st, 11);
    pY = (void *)(uintptr_t)0x9000000;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &my, &st, 11);
    for (int i = 0; i < 2; i++) {
        void (*xRun)(float *, float *, cudaStream_t);
        void *h = dlopen(azLib[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            _exit(50);
        }
        *(void **)&xRun = dlsym(h, "vt_nvcc_launch_all");
        if (!xRun) _exit(51);
        g_nextCorr = 700 + 100 * (uint32_t)i * 2; /* legacy: 700.., per-thread: 900.. */
        xRun(pX, pY, (cudaStream_t)(uintptr_t)5);
    }
#endif
}

/*
 * kernel<<<...>>> compiled by nvcc 13 calls __cudaLaunchKernel: each launch of
 * tests/nvcc_launches.cu is recorded once, with the buffer uses of its
 * arguments under its own correlation id, whether or not the runtime's driver
 * launch inside it is seen.
 */
TEST(nvcc_launches_yield_buffer_uses)
{
    char zDir[64], zErrFile[128], zPath[128], z[4096];
    sqlite3 *db = NULL;
    int status;
#if !defined(VT_NVCC_LAUNCHES_SO) || !defined(VT_NVCC_LAUNCHES_PTSZ_SO)
    SKIP(VT_NVCC_LAUNCHES_WHY);
#endif
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    status = run_child(zDir, zErrFile, MODE_OK, nvcc_program);
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, z);
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    /* three launches per library, each recorded once as __cudaLaunchKernel; the driver launches
     * inside the per-thread ones are not recorded */
    ASSERT_EQ(3, q(db, "SELECT count(*) FROM api_call WHERE api = 104 AND correlation BETWEEN 700 AND 702"));
    ASSERT_EQ(3, q(db, "SELECT count(*) FROM api_call WHERE api = 104 AND correlation BETWEEN 900 AND 902"));
    ASSERT_EQ(6, q(db, "SELECT count(*) FROM api_call WHERE api = 104 AND status = 0"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM api_call WHERE api <> 104 AND api <> 1"));
    /* streams: the default stream, and fill's stream 5 (per-thread calls: + 1000 in this fake) */
    ASSERT_EQ(5, q(db, "SELECT stream FROM api_call WHERE correlation = 701"));
    ASSERT_EQ(1005, q(db, "SELECT stream FROM api_call WHERE correlation = 901"));
    ASSERT_EQ(1000, q(db, "SELECT stream FROM api_call WHERE correlation = 900"));
    /* axpy(2, x, y, 64) used x and y; fill({y + 16, 4}, 1) used y; spin(3) used nothing */
    qtext(db, "SELECT group_concat(correlation || ':' || printf('%x', address), ' ') FROM"
              " (SELECT * FROM buffer_use ORDER BY correlation, address)", z, sizeof z);
    ASSERT_STREQ("700:7000000 700:9000000 701:9000000 900:7000000 900:9000000 901:9000000", z);
    ASSERT_EQ(6, q(db, "SELECT count(*) FROM buffer_use WHERE kind = 0 AND device = 0 AND ts IS NOT NULL"));
    sqlite3_close(db);
    {
        char zCmd[160];
        snprintf(zCmd, sizeof zCmd, "rm -rf %s", zDir);
        ASSERT_EQ(0, system(zCmd));
    }
}

/* A pin-memory-like thread: one pinned allocation, then it idles (its buffer never fills). */
static void *pin_memory_thread(void *pArg)
{
    void *p = NULL;
    cudaHostAlloc_v3020_params hp = {&p, 1 << 20, 0};
    CUpti_ActivityMemory4 m = memory_record(0x7f4000000000ull, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 801);
    int st = 0;
    (void)pArg;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, CUPTI_API_ENTER, &hp, &st, 801);
    p = (void *)(uintptr_t)0x7f4000000000ull;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, CUPTI_API_EXIT, &hp, &st, 801);
    fake_record(&m, sizeof m);
    for (;;) pause();
    return NULL;
}

/* The job: the helper thread and one device allocation on the main thread, then it runs on. */
static void job_with_helper_thread(void)
{
    pthread_t th;
    void *p = NULL;
    cudaMalloc_v3020_params mp = {&p, 1 << 20};
    CUpti_ActivityMemory4 m = memory_record(0x7000000, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 802);
    int st = 0;
    if (pthread_create(&th, NULL, pin_memory_thread, NULL) != 0) _exit(60);
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &mp, &st, 802);
    p = (void *)(uintptr_t)0x7000000;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &mp, &st, 802);
    fake_record(&m, sizeof m);
    for (;;) pause(); /* until killed */
}

/*
 * Item: every thread's records reach the trace while the job runs. The
 * periodic flush hands back the idle helper thread's buffer (and the main
 * thread's) long before exit: the rows are in the trace while the job still
 * runs, and a SIGTERM (no exit handler) keeps them.
 */
TEST(periodic_flush_every_thread_before_sigterm)
{
    char zDir[64], zErrFile[128], zPath[128], z[4096];
    sqlite3 *db = NULL;
    int status = -1, i;
    long long n = -1;
    pid_t pid;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    setenv("VRAMTRACE_FLUSH_MS", "50", 1);
    pid = start_child(zDir, zErrFile, MODE_OK, job_with_helper_thread);
    ASSERT(pid > 0);
    /* wait (at most 60 s: a loaded machine) for both threads' records, while the job runs */
    for (i = 0; i < 3000 && n != 2; i++) {
        usleep(20000);
        n = trace_count(zPath, "SELECT count(*) FROM memory_event WHERE op = 1");
    }
    kill(pid, SIGTERM);
    while (waitpid(pid, &status, 0) < 0) {
    }
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    if (n != 2) VT__FAIL("memory_event rows while the job ran: %lld; stderr: %s", n, z);
    ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    /* after the SIGTERM: both rows, each joined to its thread's call, and no clean close */
    ASSERT_EQ(2, q(db, "SELECT count(*) FROM memory_event m JOIN api_call a ON a.correlation = m.correlation"
                       " WHERE m.thread = a.thread"));
    ASSERT_EQ(2, q(db, "SELECT count(DISTINCT thread) FROM memory_event"));
    ASSERT_EQ(2, q(db, "SELECT mem_kind FROM memory_event WHERE correlation = 801"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key = 'closed_cleanly'"));
    sqlite3_close(db);
    unsetenv("VRAMTRACE_FLUSH_MS");
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/* CUPTI's fatal-error notification, then more calls, then a normal exit. */
static void job_with_fatal_error(void)
{
    char zWal[160];
    void *p = NULL;
    cudaMalloc_v3020_params mp = {&p, 4096};
    CUpti_StateData sd;
    const char *zOut = getenv("VRAMTRACE_OUTPUT");
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &mp, 0, 901);
    memset(&sd, 0, sizeof sd);
    sd.notification.result = CUPTI_ERROR_UNKNOWN;
    sd.notification.message = "device lost";
    atomic_store(&g_bFatalSent, 1);
    g_callback(NULL, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR, &sd);
    g_callback(NULL, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR, &sd); /* told once */
    /* the flush thread closes the trace: its write-ahead log goes away (at most 60 s) */
    snprintf(zWal, sizeof zWal, "%s-wal", zOut ? zOut : "");
    for (int i = 0; i < 3000 && access(zWal, F_OK) == 0; i++) usleep(20000);
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &mp, 0, 902); /* not recorded, no crash */
}

/*
 * A fatal CUPTI error: one line, the trace closed cleanly with what it held
 * and the error in meta, no CUPTI call after it (CUPTI finalizes itself),
 * and the program runs on and exits normally.
 */
TEST(fatal_error_closes_trace)
{
    char zDir[64], zErrFile[128], zPath[128], z[4096], zLine[256];
    sqlite3 *db = NULL;
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    setenv("VRAMTRACE_QUIET", "1", 1);
    status = run_child(zDir, zErrFile, MODE_OK, job_with_fatal_error);
    unsetenv("VRAMTRACE_QUIET");
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, z);
    /* the MEMORY_POOL warning, and one line for the fatal error */
    ASSERT_EQ(2, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: CUPTI reported a fatal error (CUPTI_ERROR_UNKNOWN: device lost); tracing stops");
    ASSERT(strstr(z, "called after its fatal error") == NULL);
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_fatal_error'", zLine, sizeof zLine);
    ASSERT_STREQ("CUPTI_ERROR_UNKNOWN: device lost", zLine);
    qtext(db, "SELECT value FROM meta WHERE key = 'closed_cleanly'", zLine, sizeof zLine);
    ASSERT_STREQ("1", zLine);
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(901, q(db, "SELECT correlation FROM api_call"));
    sqlite3_close(db);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/* A job whose device hangs: CUPTI's forced flush never returns. */
static void job_on_hung_device(void)
{
    void *p = NULL;
    cudaMalloc_v3020_params mp = {&p, 4096};
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &mp, 0, 950);
    atomic_store(&g_bHangForced, 1);
}

/* The exit never hangs on CUPTI's final flush: bounded, one line, the trace closed with what it has. */
TEST(final_flush_bounded)
{
    char zDir[64], zErrFile[128], zPath[128], z[4096], zLine[256];
    sqlite3 *db = NULL;
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    status = run_child(zDir, zErrFile, MODE_OK, job_on_hung_device); /* returns: the exit did not hang */
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, z);
    ASSERT_CONTAINS(z, "vramtrace: CUPTI's final flush did not finish within 3000 ms (a hung device?)");
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    qtext(db, "SELECT value FROM meta WHERE key = 'final_flush'", zLine, sizeof zLine);
    ASSERT_STREQ("timeout", zLine);
    qtext(db, "SELECT value FROM meta WHERE key = 'closed_cleanly'", zLine, sizeof zLine);
    ASSERT_STREQ("1", zLine);
    ASSERT_EQ(950, q(db, "SELECT correlation FROM api_call"));
    sqlite3_close(db);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/*
 * A job in which another CUPTI client takes the activity buffers over after
 * the first allocation; with bMarked, the record hook (record --keep-cupti)
 * said the job's torch.profiler started just before.
 */
static void job_taken_over_by(int bMarked)
{
    void *p = NULL;
    cudaMalloc_v3020_params mp = {&p, 1 << 20};
    CUpti_ActivityMemory4 m = memory_record(0x7000000, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 701);
    int st = 0;
    if (bMarked) harness_nvtx_init();
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &mp, &st, 701);
    p = (void *)(uintptr_t)0x7000000;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &mp, &st, 701);
    fake_record(&m, sizeof m);
    while (atomic_load(&g_nFlushNormal) < 3) usleep(1000); /* delivered */
    if (bMarked) harness_nvtx_mark(VT_NVTXCTL_PREFIX "start:torch.profiler");
    atomic_store(&g_bTakenOver, 1); /* e.g. torch.profiler starts: cuptiActivityRegisterCallbacks */
    for (uint32_t c = 702; c < 705; c++) {
        m = memory_record(0x8000000 + (c - 702) * 0x100000ull, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, c);
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &mp, &st, c);
        p = (void *)(uintptr_t)m.address;
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &mp, &st, c);
        fake_record(&m, sizeof m);
    }
    for (;;) pause(); /* until killed */
}

static void job_taken_over(void)
{
    job_taken_over_by(0);
}

static void job_taken_over_by_profiler(void)
{
    job_taken_over_by(1);
}

/*
 * Run xBody until the trace says it was taken over (at most 60 s, on a loaded
 * machine); its stderr into z. Returns the trace, open read-only (the caller
 * closes it and removes zDir), or fails the test.
 */
static sqlite3 *run_taken_over(void (*xBody)(void), char *zDir, size_t nDir, char *z, size_t n)
{
    char zErrFile[128], zPath[128];
    sqlite3 *db = NULL;
    int status = -1, i;
    long long nTaken = -1;
    pid_t pid;
    snprintf(zDir, nDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    setenv("VRAMTRACE_FLUSH_MS", "50", 1);
    setenv("VRAMTRACE_QUIET", "1", 1);
    pid = start_child(zDir, zErrFile, MODE_OK, xBody);
    ASSERT(pid > 0);
    for (i = 0; i < 3000 && nTaken != 1; i++) {
        usleep(20000);
        nTaken = trace_count(zPath, "SELECT count(*) FROM meta WHERE key = 'cupti_takeover_ns'");
    }
    kill(pid, SIGTERM);
    while (waitpid(pid, &status, 0) < 0) {
    }
    unsetenv("VRAMTRACE_FLUSH_MS");
    unsetenv("VRAMTRACE_QUIET");
    vt_read_file(zErrFile, z, n);
    unlink(zErrFile);
    if (nTaken != 1) VT__FAIL("no takeover recorded; stderr: %s", z);
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    /* the API calls go on; partial from the last buffer event on: after the first allocation, before the others */
    ASSERT_EQ(4, q(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM memory_event"));
    ASSERT_EQ(1, q(db, "SELECT CAST(t.value AS INTEGER) >= (SELECT start FROM api_call WHERE correlation = 701)"
                       " AND CAST(t.value AS INTEGER) <= (SELECT start FROM api_call WHERE correlation = 702)"
                       " AND CAST(d.value AS INTEGER) > CAST(t.value AS INTEGER)"
                       " FROM meta t, meta d WHERE t.key = 'cupti_takeover_ns'"
                       " AND d.key = 'cupti_takeover_detected_ns'"));
    return db;
}

/*
 * Another CUPTI client takes the activity buffers over: the allocations go on
 * but no buffer comes back, not even to a forced flush. The trace says so
 * (meta cupti_takeover_ns: from when), one line says so, and the API calls
 * are still recorded. Who it was is not known: no meta names it.
 */
TEST(takeover_detected)
{
    char zDir[64], z[4096];
    sqlite3 *db = run_taken_over(job_taken_over, zDir, sizeof zDir, z, sizeof z);
    ASSERT_EQ(2, count_lines(z)); /* the MEMORY_POOL warning, and this */
    ASSERT_CONTAINS(z, "vramtrace: CUPTI no longer hands this tracer its activity buffers: another CUPTI "
                       "client, not one the record hook saw (Nsight, a profiler started otherwise), took them over");
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key LIKE 'cupti_takeover_by%'"));
    sqlite3_close(db);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/*
 * The same with record --keep-cupti, whose hook marks the job's torch.profiler
 * starting: the takeover names it (cupti_takeover_by) and when it started
 * (cupti_takeover_by_ns, between the first allocation and the second).
 */
TEST(takeover_names_the_profiler)
{
    char zDir[64], z[4096];
    sqlite3 *db = run_taken_over(job_taken_over_by_profiler, zDir, sizeof zDir, z, sizeof z);
    ASSERT_EQ(2, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: CUPTI no longer hands this tracer its activity buffers: torch.profiler, started ");
    ASSERT_CONTAINS(z, " s into the trace, took them over");
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM meta WHERE key = 'cupti_takeover_by' AND value = 'torch.profiler'"));
    ASSERT_EQ(1, q(db, "SELECT CAST(b.value AS INTEGER) >= (SELECT start FROM api_call WHERE correlation = 701)"
                       " AND CAST(b.value AS INTEGER) <= (SELECT start FROM api_call WHERE correlation = 702)"
                       " FROM meta b WHERE b.key = 'cupti_takeover_by_ns'"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM nvtx_range")); /* the mark was the tracer's, not recorded */
    sqlite3_close(db);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/*
 * A job that runs torch.profiler once, as the record hook tells the tracer
 * (NVTX control marks) and as Kineto sets CUPTI up: an allocation and a kernel
 * before, during and after the profiler; with bTeardown, Kineto finalizes CUPTI
 * after the profile (TEARDOWN_CUPTI=1) and the job waits until the tracer has
 * its subscription back. Checks in the child what only it can see (thread ids,
 * per-thread buffers, the clock in force): JOB_CHECK.
 */
static void profiled_job(int bTeardown)
{
    g_bGateKinds = 1; /* CUPTI writes records of the kinds someone enabled only */
    harness_nvtx_init();
    harness_alloc(0x7000000, 1001);
    harness_kernel(1002, "before");
    harness_nvtx_mark(VT_NVTXCTL_PREFIX "lend:torch.profiler");
    JOB_CHECK(g_threadIdType == CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT); /* Kineto's thread ids */
    kineto_prepare();
    harness_nvtx_mark(VT_NVTXCTL_PREFIX "lent:torch.profiler");
    harness_alloc(0x8000000, 1003);
    harness_kernel(1004, "profiled");
    harness_kernel(1005, "profiled");
    kineto_stop();
    harness_nvtx_mark(VT_NVTXCTL_PREFIX "return:torch.profiler");
    if (bTeardown) {
        kineto_teardown();
        /* the tracer notices the free subscription on its flush thread (at most 60 s on a loaded machine) */
        for (int i = 0; i < 3000 && !(g_callback && !strcmp(g_zHolder, "vramtrace")); i++) usleep(20000);
        JOB_CHECK(g_callback && !strcmp(g_zHolder, "vramtrace"));
    }
    JOB_CHECK(g_threadIdType == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    JOB_CHECK(g_perThreadBuf == 1);
    JOB_CHECK(g_xTimestamp && g_xTimestamp != kineto_tsc); /* the trace's clock is CUPTI's again */
    harness_alloc(0x9000000, 1006);
    harness_kernel(1007, "after");
    kineto_report();
}

static void job_with_profiler(void)
{
    profiled_job(0);
}

static void job_with_profiler_teardown(void)
{
    profiled_job(1);
}

/*
 * torch.profiler inside a traced job, with a Kineto that does not subscribe
 * (CUPTI's subscription is lent during its prepare only): the profiler gets
 * its kernels, and nothing of the tracer's; the trace has its own records
 * before and after the window, the window in meta, and every API call.
 */
TEST(lend_to_profiler)
{
    char zDir[64], z[4096], zK[256];
    sqlite3 *db = harness_run_profiled(0, job_with_profiler, zDir, z, sizeof z, zK, sizeof zK);
    ASSERT_STREQ("kernels 2 memory 0 foreign 0 cpu_only 0 own_clock 1\njob checks ok\n", zK);
    /* the start line, MEMORY_POOL's, and the lend, once */
    ASSERT_EQ(3, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: lending CUPTI to torch.profiler while it runs: its GPU activity goes to the "
                       "profiler");
    harness_check_window(db);
    ASSERT_EQ(3, q(db, "SELECT count(*) FROM api_call"));
    /* the subscription was away during the prepare only */
    ASSERT_EQ(1, q(db, "SELECT CAST(f.value AS INTEGER) <= CAST(a.value AS INTEGER) AND CAST(a.value AS INTEGER)"
                       " <= CAST(b.value AS INTEGER) AND CAST(b.value AS INTEGER) <= CAST(u.value AS INTEGER)"
                       " FROM meta f, meta a, meta b, meta u WHERE f.key = 'cupti_lend.1.from_ns'"
                       " AND a.key = 'cupti_lend.1.api_from_ns' AND b.key = 'cupti_lend.1.api_until_ns'"
                       " AND u.key = 'cupti_lend.1.until_ns'"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key = 'cupti_lend.1.api_held_by'"));
    sqlite3_close(db);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/*
 * The same with the Kineto of earlier PyTorch wheels, which subscribes at its
 * first profile (and would profile without the GPU if it could not): it keeps
 * the subscription, so API calls are not recorded from the window on (said in
 * meta and one line); GPU activity is recorded again after the window.
 */
TEST(lend_to_profiler_that_subscribes)
{
    char zDir[64], z[4096], zK[256];
    sqlite3 *db = harness_run_profiled(1, job_with_profiler, zDir, z, sizeof z, zK, sizeof zK);
    ASSERT_STREQ("kernels 2 memory 0 foreign 0 cpu_only 0 own_clock 1\njob checks ok\n", zK);
    ASSERT_EQ(4, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: torch.profiler keeps CUPTI's only subscription (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS"
                       "_NOT_SUPPORTED): API calls (allocations through the CUDA API, OOMs, call sites) are not "
                       "recorded in ");
    harness_check_window(db);
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(1001, q(db, "SELECT correlation FROM api_call"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM meta WHERE key = 'cupti_lend.1.api_from_ns'"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key = 'cupti_lend.1.api_until_ns'"));
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_lend.1.api_held_by'", z, sizeof z);
    ASSERT_STREQ("torch.profiler", z);
    sqlite3_close(db);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/*
 * A Kineto that kept the subscription and finalizes CUPTI after its profile
 * (TEARDOWN_CUPTI=1): the tracer notices the free subscription, sets CUPTI up
 * again and records on, API calls included; the window's unknown GPU activity
 * reaches to then.
 */
TEST(profiler_finalizes_cupti_tracer_resumes)
{
    char zDir[64], z[4096], zK[256];
    sqlite3 *db;
    setenv("VRAMTRACE_FLUSH_MS", "50", 1);
    db = harness_run_profiled(1, job_with_profiler_teardown, zDir, z, sizeof z, zK, sizeof zK);
    unsetenv("VRAMTRACE_FLUSH_MS");
    ASSERT_STREQ("kernels 2 memory 0 foreign 0 cpu_only 0 own_clock 1\njob checks ok\n", zK);
    harness_check_window(db);
    /* API calls before the window and after the subscription came back */
    ASSERT_EQ(2, q(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM api_call WHERE correlation = 1006"));
    ASSERT_EQ(1, q(db, "SELECT CAST(a.value AS INTEGER) <= CAST(u.value AS INTEGER) FROM meta a, meta u"
                       " WHERE a.key = 'cupti_lend.1.api_until_ns' AND u.key = 'cupti_lend.1.until_ns'"));
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_lend.1.note'", z, sizeof z);
    ASSERT_CONTAINS(z, "CUPTI's subscription came free after this window");
    sqlite3_close(db);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/* torch.profiler set up before the job's first CUDA call (so before the tracer). */
static void profiler_before_cuda(void)
{
    g_bGateKinds = 1;
    harness_nvtx_init();
    harness_nvtx_mark(VT_NVTXCTL_PREFIX "lend:torch.profiler");
    kineto_prepare();
    harness_nvtx_mark(VT_NVTXCTL_PREFIX "lent:torch.profiler");
}

/* ... and its job: kernels for the profiler, which then stops. */
static void job_profiled_from_start(void)
{
    harness_alloc(0x7000000, 1001);
    harness_kernel(1002, "profiled");
    kineto_stop();
    harness_nvtx_mark(VT_NVTXCTL_PREFIX "return:torch.profiler");
    kineto_report();
}

/* A profiler that holds CUPTI when the tracer starts keeps it: tracing off, one line, no file; it gets its data. */
TEST(profiler_first_keeps_cupti)
{
    char zDir[64], zErrFile[128], zPath[160], z[4096], zK[256];
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    g_xAfterLoad = profiler_before_cuda;
    status = run_child(zDir, zErrFile, MODE_OK, job_profiled_from_start);
    g_xAfterLoad = NULL;
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, z);
    ASSERT_EQ(1, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: tracing off: torch.profiler was started before the job's first CUDA call and "
                       "holds CUPTI, which the tracer does not take from it");
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    ASSERT(access(zPath, F_OK) != 0);
    snprintf(zPath, sizeof zPath, "%s/kineto.txt", zDir);
    vt_read_file(zPath, zK, sizeof zK);
    ASSERT_STREQ("kernels 1 memory 0 foreign 0 cpu_only 0 own_clock 1\njob checks ok\n", zK);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/* Launches of kernel 0x1234 around a module unload: the layout is asked again after it. */
static void job_module_unload(void)
{
    uint64_t a = 0x7000010, b = 0;
    int i32 = 1, st = 0, nAfterTwo;
    void *apArg[] = {&a, &i32, &b};
    cuLaunchKernel_params lp = {(CUfunction)(uintptr_t)0x1234, 1, 1, 1, 32, 1, 1, 0, NULL, apArg, NULL};
    CUpti_ResourceData rd;
    (void)st;
    call(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &lp, 0, 61);
    call(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &lp, 0, 62);
    nAfterTwo = atomic_load(&g_nFuncInfo);
    if (nAfterTwo != 4) _exit(70); /* 3 parameters and the end, asked once: cached */
    memset(&rd, 0, sizeof rd);
    rd.context = CTX0;
    g_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, &rd);
    call(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &lp, 0, 63);
    if (atomic_load(&g_nFuncInfo) != 2 * nAfterTwo) _exit(71); /* asked again after the unload */
}

/* The glue forgets the kernel-parameter layouts when a module unloads (its handles may be reused). */
TEST(module_unload_forgets_layouts)
{
    char zDir[64], zErrFile[128], z[4096];
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    status = run_child(zDir, zErrFile, MODE_OK, job_module_unload);
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, z);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/*
 * Sanitizer defaults for this program (ASan reads them at start; ASAN_OPTIONS
 * adds to them). intercept_tls_get_addr=0 works around a bug of the sanitizer
 * runtimes of GCC up to 13 and LLVM up to 16 (google/sanitizers#1322): their
 * __tls_get_addr interceptor takes a dynamic TLS block whose address is 16
 * bytes past a 4096-byte boundary for a glibc-2.19 block with a header, and
 * records the two words before it as the block's range; LeakSanitizer's
 * at-exit scan then reads that bogus range and its stop-the-world tracer dies
 * of SIGSEGV ("Tracer caught signal 11"). This program dlopens the library,
 * which brings libcupti.so.13 (40 bytes of TLS) and libstdc++ (32): their
 * per-thread blocks are small heap allocations, and whether one lands 16
 * bytes past a page depends on what the heap held before, down to the length
 * of the build's paths: the exit tests failed from some checkouts and not
 * others. Dynamic TLS is then not scanned for leaks, which loses nothing here:
 * no TLS variable of the library or of this program holds a heap pointer.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "intercept_tls_get_addr=0";
}

/*
 * LeakSanitizer hook (sanitizer/lsan_interface.h), consulted when the at-exit
 * leak check runs: off in the forked worker only. The worker is forked while
 * the parent's writer thread runs; that thread does not exist in the worker,
 * so LeakSanitizer cannot scan its stack ("Running thread ... was not
 * suspended. False leaks are possible") and reports the writer thread's own
 * buffer (writer_main's aTake, referenced only from that stack) as leaked.
 * The memory is the parent's, left untouched on purpose (vt__writer_abandon),
 * and the parent frees it: every other process of these tests, the traced
 * parent included, keeps the leak check.
 */
static volatile sig_atomic_t g_bForkedWorker;
__attribute__((used)) int __lsan_is_turned_off(void);
__attribute__((used)) int __lsan_is_turned_off(void)
{
    return g_bForkedWorker;
}

/* A forked worker calls CUDA and exits normally: nothing of it reaches the parent's trace. */
static void fork_worker(void)
{
    void *p = NULL;
    cudaMalloc_v3020_params mp = {&p, 8192};
    pid_t pid;
    int status = -1;
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &mp, 0, 500);
    pid = fork();
    if (pid < 0) _exit(41);
    if (pid == 0) {
        g_bForkedWorker = 1;
        call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &mp, 0, 600);
        exit(0); /* runs the library's exit handler in the child: it must do nothing */
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) _exit(42);
    call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &mp, 0, 501);
}

TEST(forked_worker_not_traced)
{
    char zDir[64], zErrFile[128], zPath[128], z[4096];
    sqlite3 *db = NULL;
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    status = run_child(zDir, zErrFile, MODE_OK, fork_worker);
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, z);
    ASSERT_EQ(2, count_lines(z)); /* the MEMORY_POOL warning and the start line, from the parent only */
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    ASSERT_EQ(2, q(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(500 + 501, q(db, "SELECT sum(correlation) FROM api_call"));
    qtext(db, "SELECT value FROM meta WHERE key = 'closed_cleanly'", z, sizeof z);
    ASSERT_STREQ("1", z);
    sqlite3_close(db);
    {
        char zCmd[160];
        snprintf(zCmd, sizeof zCmd, "rm -rf %s", zDir);
        ASSERT_EQ(0, system(zCmd));
    }
}

/*
 * The job runs under a file-size limit (`ulimit -f`) with SIGXFSZ at its default action: once
 * the trace is created, its files may grow 256 KiB more, then 100000 cudaMalloc/cudaFree pairs.
 * The host ring alone holds 65536 records, about 2.5 MB of rows, which the writer writes by
 * the time it closes at the latest: the limit is reached however the threads are scheduled.
 */
static void calls_past_file_size_limit(void)
{
    char zWal[300];
    struct stat st;
    struct rlimit rl;
    snprintf(zWal, sizeof zWal, "%s-wal", getenv("VRAMTRACE_OUTPUT"));
    if (stat(zWal, &st) != 0) _exit(50);
    signal(SIGXFSZ, SIG_DFL);
    rl.rlim_cur = rl.rlim_max = (rlim_t)st.st_size + (256u << 10);
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(51);
    for (uint32_t corr = 2000000; corr < 2200000; corr += 2) {
        void *p = NULL;
        cudaMalloc_v3020_params mp = {&p, 4096};
        cudaFree_v3020_params fp = {NULL};
        int st = 0;
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &mp, &st, corr);
        p = (void *)(uintptr_t)(0x100000000ull + (uint64_t)corr * 4096);
        api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &mp, &st, corr);
        fp.devPtr = p;
        call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &fp, 0, corr + 1);
    }
}

/* The trace reaches the file-size limit: the job lives and exits 0, one line says tracing went off (none
 * more at exit), and the trace is intact (how much was committed first depends on the timing:
 * tests/test_rel_fsize.c checks that exactly). */
TEST(file_size_limit_tracing_off)
{
    char zDir[64], zErrFile[128], zPath[128], z[4096];
    sqlite3 *db = NULL;
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    status = run_child(zDir, zErrFile, MODE_OK, calls_past_file_size_limit);
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    if (WIFSIGNALED(status)) VT__FAIL("the job was killed by signal %d: %s", WTERMSIG(status), z);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, z);
    /* the MEMORY_POOL warning, the start line, and one line for the limit: nothing at exit */
    if (count_lines(z) != 3) VT__FAIL("expected 3 lines on stderr: %s", z);
    ASSERT_CONTAINS(z, "vramtrace: the trace reached the largest file size allowed (ulimit -f: ");
    ASSERT_CONTAINS(z, "tracing is off");
    ASSERT(strstr(z, "may be incomplete") == NULL);
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    qtext(db, "PRAGMA integrity_check", z, sizeof z);
    ASSERT_STREQ("ok", z);
    ASSERT(q(db, "SELECT count(*) FROM api_call") < 200000);
    sqlite3_close(db);
    {
        char zCmd[160];
        snprintf(zCmd, sizeof zCmd, "rm -rf %s", zDir);
        ASSERT_EQ(0, system(zCmd));
    }
}

/* Allocations, frees and a kernel, with their activity records (laid out as CUPTI 13.0 writes them). */
static void job_versions(void)
{
    void *p = NULL;
    cudaMalloc_v3020_params mp = {&p, 1 << 20};
    CUpti_ActivityMemory4 m = memory_record(0x7000000, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 801);
    CUpti_ActivityKernel10 k;
    int st = 0;
    if (!g_callback) return; /* tracing off: the library never subscribed */
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_ENTER, &mp, &st, 801);
    p = (void *)(uintptr_t)0x7000000;
    api(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT, &mp, &st, 801);
    fake_record(&m, sizeof m);
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = "gemm";
    k.start = 5000;
    k.end = 5100;
    k.correlationId = 802;
    k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
    fake_record(&k, sizeof k);
}

/* Run job_versions under a CUPTI of API version v; stderr into z, the trace (or NULL) returned. */
static sqlite3 *run_versions(uint32_t v, char *zDir, char *z, size_t n, int *pStatus)
{
    char zErrFile[128], zPath[160];
    sqlite3 *db = NULL;
    snprintf(zDir, 64, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    setenv("VRAMTRACE_QUIET", "1", 1);
    g_cuptiVersion = v;
    *pStatus = run_child(zDir, zErrFile, MODE_OK, job_versions);
    g_cuptiVersion = CUPTI_API_VERSION;
    g_xBeforeInit = NULL;
    unsetenv("VRAMTRACE_QUIET");
    vt_read_file(zErrFile, z, n);
    unlink(zErrFile);
    if (access(zPath, F_OK) == 0) ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    return db;
}

/* Remove the trace directory of run_versions. */
static void remove_dir(const char *zDir)
{
    static const char *const azSuffix[] = {"", "-wal", "-shm"};
    char z[160];
    size_t i;
    for (i = 0; i < 3; i++) {
        snprintf(z, sizeof z, "%s/trace.db%s", zDir, azSuffix[i]);
        unlink(z);
    }
    ASSERT_EQ(0, rmdir(zDir));
}

/*
 * CUPTI 13.4 Update 1, the newest release the layout table lists: the records are read (with its
 * structs), and the trace says what recorded it and how it subscribed.
 */
TEST(cupti_listed_release_recorded)
{
    char zDir[64], z[4096];
    int status;
    sqlite3 *db = run_versions(130401, zDir, z, sizeof z, &status);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the scripted CUPTI refuses MEMORY_POOL, as a driver without it does: that line only */
    ASSERT_EQ(1, count_lines(z));
    ASSERT_CONTAINS(z, "cannot enable CUPTI activity MEMORY_POOL");
    ASSERT(db != NULL);
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM kernel"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM memory_event WHERE address = 117440512 AND bytes = 1048576"));
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_layout'", z, sizeof z);
    ASSERT_STREQ("13.4", z);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_layout_table'", z, sizeof z);
    ASSERT_STREQ("1: CUPTI 13.0 to 13.4 Update 1", z);
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key IN ('cupti_kinds_reduced', 'records_not_decoded')"));
    /* the file that answered cuptiGetVersion: this program here */
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM meta WHERE key = 'cupti_library' AND value LIKE '%test_inject_cupti'"));
    /* a 13.4 library without the per-subscriber functions (this program exports none): the single subscriber */
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_subscription'", z, sizeof z);
    ASSERT_STREQ("one: the libcupti (API version 130401) has no cuptiActivityEnable_v2, needed to be one of several "
                 "subscribers", z);
    sqlite3_close(db);
    remove_dir(zDir);
}

/*
 * A CUPTI newer than the table (13.5): its records are not read at all (their layout is not known
 * for sure); one line and the trace say which kinds and why; API calls are still recorded.
 */
TEST(cupti_newer_than_table_reduced)
{
    char zDir[64], z[4096];
    int status;
    sqlite3 *db = run_versions(130500, zDir, z, sizeof z, &status);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_EQ(1, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: the record layouts of CUPTI 13.5 (API version 130500) are unknown to this "
                       "vramtrace (it knows 13.0 to 13.4 Update 1): CONCURRENT_KERNEL,MEMCPY,MEMCPY2,MEMSET,"
                       "MEMORY2,MEMORY_POOL,MARKER,SYNCHRONIZATION,OVERHEAD,DEVICE are not recorded");
    ASSERT(db != NULL);
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM kernel"));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM memory_event"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM api_call WHERE correlation = 801"));
    ASSERT_EQ(2, q(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'records_not_decoded'"));
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_layout'", z, sizeof z);
    ASSERT_STREQ("unknown: CUPTI API version 130500 is newer than the table", z);
    qtext(db, "SELECT value FROM meta WHERE key = 'cupti_kinds_reduced'", z, sizeof z);
    ASSERT_CONTAINS(z, "CONCURRENT_KERNEL,MEMCPY,");
    ASSERT_CONTAINS(z, "record layout unknown for CUPTI API version 130500");
    sqlite3_close(db);
    remove_dir(zDir);
}

/* CUDA 12's CUPTI (API version 24, 12.6): tracing stays off with one line; nothing is written. */
TEST(cupti_12_refused)
{
    char zDir[64], z[4096];
    int status;
    sqlite3 *db = run_versions(24, zDir, z, sizeof z, &status);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT(db == NULL);
    ASSERT_EQ(1, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: tracing off: the libcupti loaded (");
    ASSERT_CONTAINS(z, ") is CUPTI 12.6 (API version 24), and this vramtrace reads CUPTI 13's records only");
    ASSERT_CONTAINS(z, "the program runs untraced");
    ASSERT_EQ(0, rmdir(zDir));
}

/* The job loaded its CUDA runtime before CUDA started the tracer. */
static void load_cuda12_runtime(void)
{
    if (!dlopen(VT_FAKE_CUDART12, RTLD_NOW | RTLD_LOCAL)) _exit(40);
}

/* A job on the CUDA 12.6 runtime (a cu126 PyTorch wheel): refused with one line naming it; nothing written. */
TEST(cuda12_runtime_refused)
{
    char zDir[64], z[4096];
    int status;
    sqlite3 *db;
    g_xBeforeInit = load_cuda12_runtime;
    db = run_versions(CUPTI_API_VERSION, zDir, z, sizeof z, &status);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT(db == NULL);
    ASSERT_EQ(1, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: tracing off: this job runs CUDA 12.6 (");
    ASSERT_CONTAINS(z, "libcudart.so.12) and vramtrace records CUDA 13 jobs only (it reads CUPTI 13's records and "
                       "CUDA 13's API parameters, and does not build against CUDA 12); to trace it, run the job's "
                       "CUDA 13 build (e.g. a cu130 PyTorch wheel instead of cu126); the program runs untraced\n");
    ASSERT_EQ(0, rmdir(zDir));
}

/*
 * Device memory sampled: device 0 has 10 GiB used when its context is created, read at the first
 * driver call in it (the creation callback calls nothing); device 1's context likewise (30 GiB
 * used); after a second, a cuCtxSynchronize samples device 0 again (12 GiB used); a burst of
 * syncs and allocations adds at most one sample per second.
 */
static void sampled_session(void)
{
    CUpti_ResourceData rd;
    struct timespec t0, t1, pause = {1, 100000000};
    cuCtxGetDevice_params gp;
    CUdevice dv;
    gp.device = &dv;
    atomic_store(&g_aFakeFree[0], (size_t)70 << 30);
    atomic_store(&g_aFakeFree[1], (size_t)50 << 30);
    memset(&rd, 0, sizeof rd);
    rd.context = CTX0;
    g_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &rd);
    t_fakeCurrent = CTX0; /* the runtime makes it current, then calls the driver in it */
    call(DRV, CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice, &gp, 0, 698);
    rd.context = (CUcontext)(uintptr_t)0x101;
    g_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &rd);
    t_fakeCurrent = rd.context;
    call(DRV, CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice, &gp, 0, 699);
    t_fakeCurrent = CTX0;
    atomic_store(&g_aFakeFree[0], (size_t)68 << 30);
    nanosleep(&pause, NULL);
    call(DRV, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, NULL, 0, 700);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t i = 0; i < 2000; i++) {
        CUdeviceptr dptr = 0;
        cuMemAlloc_v2_params dp = {&dptr, 1 << 20};
        call(DRV, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, NULL, 0, 701 + 2 * i);
        call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &dp, 0, 702 + 2 * i);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    {
        /* the burst's length goes to the parent through a file beside the trace */
        char zFile[300];
        FILE *f;
        snprintf(zFile, sizeof zFile, "%s.burst", getenv("VRAMTRACE_OUTPUT"));
        f = fopen(zFile, "w");
        if (!f) _exit(62);
        fprintf(f, "%lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec));
        fclose(f);
    }
}

/* Sample K of device D ("T FREE TOTAL"): its free bytes, or -1. */
static long long sample_free(sqlite3 *db, int d, int k)
{
    char zSql[160], z[128];
    long long t = 0, f = -1, n = 0;
    snprintf(zSql, sizeof zSql, "SELECT value FROM meta WHERE key = 'device.%d.mem_sample.%d'", d, k);
    qtext(db, zSql, z, sizeof z);
    if (sscanf(z, "%lld %lld %lld", &t, &f, &n) != 3 || t <= 0 || n != (long long)FAKE_TOTAL) return -1;
    return f;
}

TEST(device_memory_sampled)
{
    char zDir[64], zErrFile[128], zPath[128], zBurst[160], z[4096];
    sqlite3 *db = NULL;
    long long nSample, tBurst;
    int status;
    FILE *f;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    status = run_child(zDir, zErrFile, MODE_OK, sampled_session);
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, z);
    ASSERT_EQ(2, count_lines(z)); /* the MEMORY_POOL warning and the start line: no sampling error */
    snprintf(zBurst, sizeof zBurst, "%s.burst", zPath);
    f = fopen(zBurst, "r");
    ASSERT(f != NULL);
    ASSERT_EQ(1, fscanf(f, "%lld", &tBurst));
    fclose(f);
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    ASSERT_EQ(10ll << 30, q(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'device.0.used_at_context_bytes'"));
    ASSERT_EQ(30ll << 30, q(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'device.1.used_at_context_bytes'"));
    ASSERT_EQ(70ll << 30, sample_free(db, 0, 0));
    ASSERT_EQ(50ll << 30, sample_free(db, 1, 0));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM meta WHERE key LIKE 'device.1.mem_sample.%'"));
    ASSERT_EQ(68ll << 30, sample_free(db, 0, 1)); /* the sync a second later */
    /* at most one more per second of the burst (and one for a second begun before it) */
    nSample = q(db, "SELECT count(*) FROM meta WHERE key LIKE 'device.0.mem_sample.%'");
    ASSERT(nSample >= 2);
    ASSERT(nSample <= 3 + tBurst / 1000000000);
    /* times rise with K */
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta a, meta b WHERE a.key = 'device.0.mem_sample.0' AND"
                       " b.key = 'device.0.mem_sample.1' AND CAST(b.value AS INTEGER) - CAST(a.value AS INTEGER)"
                       " < 1000000000"));
    sqlite3_close(db);
    {
        char zCmd[160];
        snprintf(zCmd, sizeof zCmd, "rm -rf %s", zDir);
        ASSERT_EQ(0, system(zCmd));
    }
}

/* cuMemGetInfo fails: one line says the device memory is not sampled, no sample is written, the job runs on. */
static void unsampled_session(void)
{
    CUpti_ResourceData rd;
    atomic_store(&g_bFakeMemInfoFails, 1);
    memset(&rd, 0, sizeof rd);
    rd.context = CTX0;
    g_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &rd);
    for (uint32_t i = 0; i < 10; i++) call(DRV, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, NULL, 0, 800 + i);
}

TEST(device_memory_unsampled_one_line)
{
    char zDir[64], zErrFile[128], zPath[128], z[4096];
    sqlite3 *db = NULL;
    int status;
    snprintf(zDir, sizeof zDir, "/tmp/vt_cupti_XXXXXX");
    ASSERT(mkdtemp(zDir) != NULL);
    snprintf(zErrFile, sizeof zErrFile, "%s.err", zDir);
    snprintf(zPath, sizeof zPath, "%s/trace.db", zDir);
    status = run_child(zDir, zErrFile, MODE_OK, unsampled_session);
    vt_read_file(zErrFile, z, sizeof z);
    unlink(zErrFile);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) VT__FAIL("child status %d: %s", status, z);
    ASSERT_EQ(3, count_lines(z));
    ASSERT_CONTAINS(z, "vramtrace: device memory is not sampled: cuMemGetInfo failed or is missing (device 0)\n");
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key LIKE 'device.%'"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM meta WHERE key = 'device_mem_sample_error'"));
    sqlite3_close(db);
    {
        char zCmd[160];
        snprintf(zCmd, sizeof zCmd, "rm -rf %s", zDir);
        ASSERT_EQ(0, system(zCmd));
    }
}

VT_TEST_LIST(T(scripted_session_records_exactly) T(multiple_subscribers_named) T(cupti_listed_release_recorded)
             T(cupti_newer_than_table_reduced) T(cupti_12_refused) T(cuda12_runtime_refused)
             T(late_failure_removes_trace) T(exit_while_threads_call_cuda)
             T(forked_worker_not_traced) T(nvcc_launches_yield_buffer_uses) T(file_size_limit_tracing_off)
             T(periodic_flush_every_thread_before_sigterm) T(fatal_error_closes_trace) T(final_flush_bounded)
             T(takeover_detected) T(takeover_names_the_profiler) T(lend_to_profiler) T(lend_to_profiler_that_subscribes)
             T(profiler_first_keeps_cupti) T(profiler_finalizes_cupti_tracer_resumes) T(module_unload_forgets_layouts)
             T(device_memory_sampled) T(device_memory_unsampled_one_line))
