/* torch.profiler inside a traced Python job, end to end: the record hook, a stand-in torch, the tracer, a scripted CUPTI and Kineto. */
#include <Python.h>

#include "cupti_harness.h"

#ifndef VT_PYHOOK_DIR
#error "VT_PYHOOK_DIR must name analyzer/pyhook, VT_FAKE_TORCH_DIR the stand-in torch"
#endif

/*
 * The job runs in an embedded CPython started the way `vramtrace record` starts
 * a Python job (the hook first on PYTHONPATH, VRAMTRACE_LEND_CUPTI=1), with the
 * stand-in torch of tests/pyhook/fake_torch: its torch.profiler calls Kineto's
 * entry points, which drive the harness's Kineto, and its torch.cuda.nvtx.mark
 * goes through the harness's NVTX instance, into which the library attached.
 * The built-in module _vt_harness is that glue, plus the job's CUDA work.
 */
static int g_bNvtxUp;

static PyObject *h_kineto_prepare(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    kineto_prepare();
    Py_RETURN_NONE;
}

static PyObject *h_kineto_stop(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    kineto_stop();
    Py_RETURN_NONE;
}

/* nvtxMarkA: NVTX initializes its injection (the library) at its first call. */
static PyObject *h_nvtx_mark(PyObject *self, PyObject *args)
{
    const char *z;
    (void)self;
    if (!PyArg_ParseTuple(args, "s", &z)) return NULL;
    if (!g_bNvtxUp) harness_nvtx_init();
    g_bNvtxUp = 1;
    harness_nvtx_mark(z);
    Py_RETURN_NONE;
}

static PyObject *h_alloc(PyObject *self, PyObject *args)
{
    unsigned long long a;
    unsigned int corr;
    (void)self;
    if (!PyArg_ParseTuple(args, "KI", &a, &corr)) return NULL;
    harness_alloc(a, corr);
    Py_RETURN_NONE;
}

static PyObject *h_kernel(PyObject *self, PyObject *args)
{
    unsigned int corr;
    (void)self;
    if (!PyArg_ParseTuple(args, "I", &corr)) return NULL;
    harness_kernel(corr, "k");
    Py_RETURN_NONE;
}

/*
 * Whether the trace says it was taken over yet; read from a forked process
 * (its own SQLite, its own file locks), never by the traced one.
 */
static PyObject *h_taken_over(PyObject *self, PyObject *args)
{
    const char *zOut = getenv("VRAMTRACE_OUTPUT");
    int status = -1;
    pid_t pid;
    (void)self, (void)args;
    if (!zOut || (pid = fork()) < 0) Py_RETURN_FALSE;
    if (pid == 0) _exit(trace_count(zOut, "SELECT count(*) FROM meta WHERE key = 'cupti_takeover_ns'") == 1 ? 0 : 1);
    while (waitpid(pid, &status, 0) < 0) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) Py_RETURN_TRUE;
    Py_RETURN_FALSE;
}

static PyMethodDef aMethod[] = {
    {"kineto_prepare", h_kineto_prepare, METH_NOARGS, NULL},
    {"kineto_stop", h_kineto_stop, METH_NOARGS, NULL},
    {"nvtx_mark", h_nvtx_mark, METH_VARARGS, NULL},
    {"alloc", h_alloc, METH_VARARGS, NULL},
    {"kernel", h_kernel, METH_VARARGS, NULL},
    {"taken_over", h_taken_over, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "_vt_harness", NULL, -1, aMethod,
                                      NULL, NULL, NULL, NULL};

static PyObject *init_harness(void)
{
    return PyModule_Create(&g_module);
}

/* The Python job: an allocation and a kernel before, inside and after one torch.profiler profile. */
static const char zJob[] =
    "import torch\n"
    "from torch.profiler import profile, ProfilerActivity\n"
    "import _vt_harness as cuda\n"
    "cuda.alloc(0x7000000, 1001)\n"
    "cuda.kernel(1002)\n"
    "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):\n"
    "    cuda.alloc(0x8000000, 1003)\n"
    "    cuda.kernel(1004)\n"
    "    cuda.kernel(1005)\n"
    "cuda.alloc(0x9000000, 1006)\n"
    "cuda.kernel(1007)\n";

/*
 * The same job after the profile, under record --keep-cupti: it goes on
 * allocating (the watch needs calls whose records do not come) until the
 * tracer saw the takeover, at most 60 s on a loaded machine.
 */
static const char zKeepJob[] =
    "import time\n"
    "for i in range(3000):\n"
    "    cuda.alloc(0xa000000 + i * 0x100000, 2000 + i)\n"
    "    if cuda.taken_over():\n"
    "        break\n"
    "    time.sleep(0.02)\n"
    "else:\n"
    "    raise SystemExit('no takeover seen')\n";

/* Run zJob, then zMore (or nothing), in the embedded Python, VRAMTRACE_LEND_CUPTI=zLend. */
static void run_python(const char *zLend, const char *zMore)
{
    g_bGateKinds = 1;
    setenv("PYTHONPATH", VT_PYHOOK_DIR ":" VT_FAKE_TORCH_DIR, 1);
    setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
    setenv("VRAMTRACE_LEND_CUPTI", zLend, 1);
    unsetenv("VRAMTRACE_PYTORCH_HISTORY");
    if (PyImport_AppendInittab("_vt_harness", init_harness) != 0) _exit(80);
    Py_InitializeEx(0);
    if (PyRun_SimpleString(zJob) != 0) _exit(81);
    if (zMore && PyRun_SimpleString(zMore) != 0) _exit(82);
    kineto_report();
}

static void python_job(void)
{
    run_python("1", NULL);
}

static void python_job_keep_cupti(void)
{
    run_python("0", zKeepJob);
}

/*
 * A Kineto that does not subscribe: the job's torch.profiler gets its two
 * kernels and nothing of the tracer's; the trace has its records before and
 * after, the window in meta, and all three allocations' API calls.
 */
TEST(python_job_profiler_and_trace)
{
    char zDir[64], z[4096], zK[256];
    sqlite3 *db = harness_run_profiled(0, python_job, zDir, z, sizeof z, zK, sizeof zK);
    ASSERT_STREQ("kernels 2 memory 0 foreign 0 cpu_only 0 own_clock 1\njob checks ok\n", zK);
    ASSERT_CONTAINS(z, "vramtrace: lending CUPTI to torch.profiler while it runs");
    harness_check_window(db);
    ASSERT_EQ(3, q(db, "SELECT count(*) FROM api_call"));
    sqlite3_close(db);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/* The Kineto of earlier wheels (it subscribes): it profiles the GPU; the trace says from when API calls are missing. */
TEST(python_job_profiler_that_subscribes)
{
    char zDir[64], z[4096], zK[256];
    sqlite3 *db = harness_run_profiled(1, python_job, zDir, z, sizeof z, zK, sizeof zK);
    ASSERT_STREQ("kernels 2 memory 0 foreign 0 cpu_only 0 own_clock 1\njob checks ok\n", zK);
    ASSERT_CONTAINS(z, "vramtrace: torch.profiler keeps CUPTI's only subscription");
    harness_check_window(db);
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM api_call"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM meta WHERE key = 'cupti_lend.1.api_held_by'"));
    sqlite3_close(db);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

/*
 * record --keep-cupti: nothing is lent, so the profiler (a Kineto that does
 * not subscribe) takes the activity buffers over; the hook's start mark lets
 * the trace name it and say when it started. API calls are all recorded.
 */
TEST(python_job_keep_cupti_names_the_profiler)
{
    char zDir[64], z[4096], zK[256];
    sqlite3 *db;
    setenv("VRAMTRACE_FLUSH_MS", "50", 1);
    db = harness_run_profiled(0, python_job_keep_cupti, zDir, z, sizeof z, zK, sizeof zK);
    unsetenv("VRAMTRACE_FLUSH_MS");
    /* the profiler ran with the GPU, on buffers it took from the tracer (what the watch saw) */
    ASSERT_CONTAINS(zK, " cpu_only 0 ");
    ASSERT_CONTAINS(zK, "job checks ok\n");
    ASSERT(!strstr(z, "lending CUPTI"));
    ASSERT_CONTAINS(z, "vramtrace: CUPTI no longer hands this tracer its activity buffers: torch.profiler, started ");
    ASSERT_EQ(0, q(db, "SELECT count(*) FROM meta WHERE key GLOB 'cupti_lend.*'"));
    ASSERT_EQ(1, q(db, "SELECT count(*) FROM meta WHERE key = 'cupti_takeover_by' AND value = 'torch.profiler'"));
    /* the profile started after the first allocation's call, before the second's */
    ASSERT_EQ(1, q(db, "SELECT CAST(value AS INTEGER) >= (SELECT start FROM api_call WHERE correlation = 1001)"
                       " AND CAST(value AS INTEGER) <= (SELECT start FROM api_call WHERE correlation = 1003)"
                       " FROM meta WHERE key = 'cupti_takeover_by_ns'"));
    ASSERT_EQ(1, q(db, "SELECT count(*) >= 4 AND count(*) = count(DISTINCT correlation) FROM api_call"));
    ASSERT_EQ(4, q(db, "SELECT count(*) FROM api_call WHERE correlation IN (1001, 1003, 1006, 2000)"));
    sqlite3_close(db);
    snprintf(z, sizeof z, "rm -rf %s", zDir);
    ASSERT_EQ(0, system(z));
}

VT_TEST_LIST(T(python_job_profiler_and_trace) T(python_job_profiler_that_subscribes)
                 T(python_job_keep_cupti_names_the_profiler))
