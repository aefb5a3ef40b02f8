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

static PyMethodDef aMethod[] = {
    {"kineto_prepare", h_kineto_prepare, METH_NOARGS, NULL},
    {"kineto_stop", h_kineto_stop, METH_NOARGS, NULL},
    {"nvtx_mark", h_nvtx_mark, METH_VARARGS, NULL},
    {"alloc", h_alloc, METH_VARARGS, NULL},
    {"kernel", h_kernel, METH_VARARGS, NULL},
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

static void python_job(void)
{
    g_bGateKinds = 1;
    setenv("PYTHONPATH", VT_PYHOOK_DIR ":" VT_FAKE_TORCH_DIR, 1);
    setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
    setenv("VRAMTRACE_LEND_CUPTI", "1", 1);
    unsetenv("VRAMTRACE_PYTORCH_HISTORY");
    if (PyImport_AppendInittab("_vt_harness", init_harness) != 0) _exit(80);
    Py_InitializeEx(0);
    if (PyRun_SimpleString(zJob) != 0) _exit(81);
    kineto_report();
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

VT_TEST_LIST(T(python_job_profiler_and_trace) T(python_job_profiler_that_subscribes))
