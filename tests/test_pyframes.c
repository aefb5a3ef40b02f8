/* Tests of the Python stack reader: an embedded CPython calls a C extension that captures its site. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "pyframes.h"
#include "stack.h"
#include "unwind.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>

#include "py_embed.h"
#include "vt_test.h"
#include "vramtrace/schema.h"

/* The module the tests import: line numbers below are asserted exactly. */
static const char zModuleSource[] =
    "import vtcap\n"                                  /* 1 */
    "def inner(depth):\n"                             /* 2 */
    "    return vtcap.capture(depth)\n"               /* 3 */
    "def outer():\n"                                  /* 4 */
    "    return inner(8)\n"                           /* 5 */
    "def twice():\n"                                  /* 6 */
    "    return [inner(8) for _ in range(2)]\n"       /* 7 */
    "class Model:\n"                                  /* 8 */
    "    def forward(self):\n"                        /* 9 */
    "        return vtcap.capture(4)\n"               /* 10 */
    "def nogil():\n"                                  /* 11 */
    "    return vtcap.capture_nogil(8)\n"             /* 12 */
    "def pending():\n"                                /* 13 */
    "    return vtcap.capture_with_error(8)\n";       /* 14 */

static struct vt__sites *pSites;
static struct vt_hrec aRec[16]; /* records emitted by the captures, in order */
static int nRec;
static char zModulePath[PATH_MAX];

/* Keep an emitted record for the test to inspect. */
static void keep(const struct vt_hrec *rec)
{
    if (rec->type != VT_HREC_STACK) return;
    if (nRec < 16) aRec[nRec++] = *rec;
    else vt__frames_free(rec->u.stack.aFrame, rec->u.stack.nFrame);
}

/* vtcap.capture(depth) -> stack id, captured with the GIL held. */
static PyObject *vtcap_capture(PyObject *self, PyObject *args)
{
    struct vt_hrec rec;
    int depth;
    int64_t id;
    (void)self;
    if (!PyArg_ParseTuple(args, "i", &depth)) return NULL;
    id = vt__site_capture(pSites, depth, 1, &rec);
    keep(&rec);
    return PyLong_FromLongLong(id);
}

/* vtcap.capture_nogil(depth): the same, with the GIL released around the capture. */
static PyObject *vtcap_capture_nogil(PyObject *self, PyObject *args)
{
    struct vt_hrec rec;
    int depth;
    int64_t id;
    (void)self;
    if (!PyArg_ParseTuple(args, "i", &depth)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    id = vt__site_capture(pSites, depth, 1, &rec);
    Py_END_ALLOW_THREADS
    keep(&rec);
    return PyLong_FromLongLong(id);
}

/* vtcap.capture_with_error(depth): capture while an exception is pending; it must survive. */
static PyObject *vtcap_capture_with_error(PyObject *self, PyObject *args)
{
    struct vt_hrec rec;
    int depth, bSame;
    int64_t id;
    PyObject *pType, *pValue, *pTrace;
    (void)self;
    if (!PyArg_ParseTuple(args, "i", &depth)) return NULL;
    PyErr_SetString(PyExc_KeyError, "pending");
    id = vt__site_capture(pSites, depth, 1, &rec);
    keep(&rec);
    bSame = PyErr_ExceptionMatches(PyExc_KeyError);
    PyErr_Fetch(&pType, &pValue, &pTrace);
    Py_XDECREF(pType);
    Py_XDECREF(pValue);
    Py_XDECREF(pTrace);
    return PyLong_FromLongLong(bSame ? id : -1);
}

/*
 * vtcap.compare_unwind() -> number of frames: the cached unwinder and
 * backtrace() walk the whole stack through the interpreter (libpython's own
 * CFI); -1 if they differ anywhere.
 */
static PyObject *vtcap_compare_unwind(PyObject *self, PyObject *args)
{
    void *a[2][256];
    int an[2], k, i;
    static volatile int nWalk = 2; /* one call site for both walks */
    (void)self;
    (void)args;
    for (k = 0; k < nWalk; k++) an[k] = vt__unwind(a[k], 256, k == 0);
    if (an[0] != an[1]) return PyLong_FromLong(-1);
    for (i = 0; i < an[0]; i++)
        if (a[0][i] != a[1][i]) return PyLong_FromLong(-1);
    return PyLong_FromLong(an[0]);
}

static PyMethodDef aMethod[] = {
    {"compare_unwind", vtcap_compare_unwind, METH_NOARGS, NULL},
    {"capture", vtcap_capture, METH_VARARGS, NULL},
    {"capture_nogil", vtcap_capture_nogil, METH_VARARGS, NULL},
    {"capture_with_error", vtcap_capture_with_error, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef vtcapModule = {PyModuleDef_HEAD_INIT, "vtcap", NULL, -1, aMethod,
                                         NULL, NULL, NULL, NULL};

static PyObject *vtcap_init(void)
{
    return PyModule_Create(&vtcapModule);
}

/* Write the module into the scratch directory, start Python with it on sys.path, import it. */
static PyObject *start_python(void)
{
    pSites = vt__sites_open(NULL);
    ASSERT(pSites);
    return py_embed_start("vtsite", zModuleSource, sizeof zModuleSource - 1, "vtcap", vtcap_init, zModulePath,
                          sizeof zModulePath);
}

static void stop_python(PyObject *pMod)
{
    int i;
    Py_DECREF(pMod);
    vt__sites_close(pSites); /* GIL held: drops its references to code objects */
    ASSERT_EQ(0, Py_FinalizeEx());
    for (i = 0; i < nRec; i++) vt__frames_free(aRec[i].u.stack.aFrame, aRec[i].u.stack.nFrame);
    unlink(zModulePath);
    *strrchr(zModulePath, '/') = '\0';
    rmdir(zModulePath);
}

/* Python frames come first, innermost first, with exact file, line and function; then native. */
TEST(file_line_function)
{
    PyObject *pMod = start_python();
    const struct vt_frame *a;
    long long id = py_embed_call(pMod, "outer");
    int i, nPy = 0;
    ASSERT(id >= 1);
    ASSERT_EQ(1, nRec);
    ASSERT_EQ(id, aRec[0].u.stack.id);
    a = aRec[0].u.stack.aFrame;
    ASSERT_EQ(VT_FRAME_PYTHON, a[0].kind);
    ASSERT_STREQ(zModulePath, a[0].zFile);
    ASSERT_EQ(3, a[0].line);
    ASSERT_STREQ("inner", a[0].zFunction);
    ASSERT_EQ(0, a[0].pc);
    ASSERT(a[0].zModule == NULL);
    ASSERT_EQ(VT_FRAME_PYTHON, a[1].kind);
    ASSERT_STREQ(zModulePath, a[1].zFile);
    ASSERT_EQ(5, a[1].line);
    ASSERT_STREQ("outer", a[1].zFunction);
    for (i = 0; i < aRec[0].u.stack.nFrame; i++) {
        if (a[i].kind == VT_FRAME_PYTHON) {
            ASSERT_EQ(nPy, i); /* all Python frames before the native ones */
            nPy++;
        }
    }
    ASSERT_EQ(2, nPy);                      /* outer was called from C: no frame above it */
    ASSERT(aRec[0].u.stack.nFrame == 2 + 8); /* plus depth 8 native frames */
    ASSERT_EQ(VT_FRAME_NATIVE, a[2].kind);
    ASSERT(a[2].zModule == NULL && a[2].pc != 0); /* raw: the writer resolves it */
    stop_python(pMod);
}

/* Same Python line and same native stack: deduplicated; a different line: a new stack. */
TEST(dedup_and_lines)
{
    PyObject *pMod = start_python();
    struct vt_sites_stats st;
    long long idA, idB;
    PyObject *pList;
    pList = PyObject_CallMethod(pMod, "twice", NULL);
    ASSERT(pList && PyList_Size(pList) == 2);
    idA = PyLong_AsLongLong(PyList_GetItem(pList, 0));
    idB = PyLong_AsLongLong(PyList_GetItem(pList, 1));
    Py_DECREF(pList);
    ASSERT(idA >= 1);
    ASSERT_EQ(idA, idB);
    ASSERT_EQ(1, nRec);
    ASSERT_EQ(7, aRec[0].u.stack.aFrame[1].line);
    ASSERT_EQ(3, aRec[0].u.stack.aFrame[0].line);
    /* The comprehension is its own frame on 3.11, inlined from 3.12: accept both. */
    if (strcmp(aRec[0].u.stack.aFrame[1].zFunction, "twice") != 0)
        ASSERT_CONTAINS(aRec[0].u.stack.aFrame[1].zFunction, "listcomp");
    ASSERT_NE(idA, py_embed_call(pMod, "outer")); /* same inner line, different caller line */
    ASSERT_EQ(2, nRec);
    vt__sites_stats(pSites, &st);
    ASSERT_EQ(3, st.captures);
    ASSERT_EQ(3, st.python);
    ASSERT_EQ(2, st.stacks);
    ASSERT(st.codes >= 2);
    stop_python(pMod);
}

/* Methods carry their qualified name (co_qualname, 3.11+). */
TEST(method_qualname)
{
    PyObject *pMod = start_python(), *pRes;
    const struct vt_frame *a;
    pRes = PyRun_String("import vtsite\nvtsite.Model().forward()\n", Py_file_input,
                        PyModule_GetDict(pMod), PyModule_GetDict(pMod));
    if (!pRes) PyErr_Print();
    ASSERT(pRes);
    Py_DECREF(pRes);
    ASSERT_EQ(1, nRec);
    a = aRec[0].u.stack.aFrame;
    ASSERT_EQ(10, a[0].line);
    ASSERT_STREQ(zModulePath, a[0].zFile);
#if PY_VERSION_HEX >= 0x030B0000
    ASSERT_STREQ("Model.forward", a[0].zFunction);
#else
    ASSERT_STREQ("forward", a[0].zFunction);
#endif
    ASSERT_EQ(VT_FRAME_PYTHON, a[1].kind); /* the <module> frame of the PyRun_String code */
    ASSERT_STREQ("<string>", a[1].zFile);
    ASSERT_EQ(2, a[1].line);
    ASSERT_STREQ("<module>", a[1].zFunction);
    stop_python(pMod);
}

/*
 * Without the GIL the C API is never called: the raw reader (pyframes_raw.h)
 * supplies the same Python frame, then the 8 native ones.
 */
TEST(no_gil_raw_python_frames)
{
    PyObject *pMod = start_python();
    struct vt_sites_stats st;
    ASSERT(py_embed_call(pMod, "nogil") >= 1);
    ASSERT_EQ(1, nRec);
    if (PY_VERSION_HEX >= 0x030e0000) { /* no raw-reader table yet: native frames only */
        ASSERT_EQ(8, aRec[0].u.stack.nFrame);
        ASSERT_EQ(VT_FRAME_NATIVE, aRec[0].u.stack.aFrame[0].kind);
        stop_python(pMod);
        return;
    }
    ASSERT_EQ(9, aRec[0].u.stack.nFrame);
    ASSERT_EQ(VT_FRAME_PYTHON, aRec[0].u.stack.aFrame[0].kind);
    ASSERT_STREQ(zModulePath, aRec[0].u.stack.aFrame[0].zFile);
    ASSERT_EQ(12, aRec[0].u.stack.aFrame[0].line);
    ASSERT_STREQ("nogil", aRec[0].u.stack.aFrame[0].zFunction);
    ASSERT_EQ(VT_FRAME_NATIVE, aRec[0].u.stack.aFrame[1].kind);
    vt__sites_stats(pSites, &st);
    ASSERT_EQ(1, st.python);
    stop_python(pMod);
}

/* A pending exception survives a capture that reads code-object names. */
TEST(pending_exception_kept)
{
    PyObject *pMod = start_python();
    long long id = py_embed_call(pMod, "pending");
    ASSERT(id >= 1);
    ASSERT_EQ(1, nRec);
    ASSERT_EQ(14, aRec[0].u.stack.aFrame[0].line);
    ASSERT_STREQ("pending", aRec[0].u.stack.aFrame[0].zFunction);
    stop_python(pMod);
}

/* The cache keeps each code object alive with one reference, dropped at close. */
TEST(code_objects_retained)
{
    PyObject *pMod = start_python(), *pInner, *pCode;
    Py_ssize_t nBefore, nAfter;
    pInner = PyObject_GetAttrString(pMod, "inner");
    pCode = PyObject_GetAttrString(pInner, "__code__");
    nBefore = Py_REFCNT(pCode);
    ASSERT(py_embed_call(pMod, "outer") >= 1);
    nAfter = Py_REFCNT(pCode);
    ASSERT_EQ(nBefore + 1, nAfter);
    ASSERT(py_embed_call(pMod, "outer") >= 1); /* a known site takes no further reference */
    ASSERT_EQ(nAfter, Py_REFCNT(pCode));
    vt__sites_close(pSites);
    pSites = vt__sites_open(NULL);
    ASSERT_EQ(nBefore, Py_REFCNT(pCode));
    Py_DECREF(pCode);
    Py_DECREF(pInner);
    stop_python(pMod);
}

/* Python not yet initialized (library loaded, interpreter not started): no frames, no crash. */
TEST(not_initialized)
{
    struct vt__pyframe a[4];
    ASSERT_EQ(1, vt__py_resolve()); /* libpython is linked in: the API is found */
    ASSERT_EQ(0, Py_IsInitialized());
    ASSERT_EQ(0, vt__py_holds_gil());
    ASSERT_EQ(0, vt__py_capture(a, 4));
}

/*
 * A real `python3` process (not an embedded interpreter) loads a library
 * holding the reader through ctypes: PyDLL calls keep the GIL, so the Python
 * frames are read with exact file and line through the C API; CDLL calls
 * release the GIL, so the raw reader reads the same frames. Shows
 * dlsym(RTLD_DEFAULT) finds the API in the interpreter executable.
 */
TEST(real_interpreter_ctypes)
{
#if !defined(VT_TEST_PYTHON_EXE) || !defined(VT_TEST_PROBE_LIB)
    SKIP("python3 or the probe library not built");
#elif defined(__SANITIZE_ADDRESS__)
    SKIP("a sanitized library cannot be loaded into an unsanitized python3");
#else
    static const char zScript[] =
        "import ctypes, sys\n"                                        /* 1 */
        "buf = ctypes.create_string_buffer(8192)\n"                   /* 2 */
        "gil = ctypes.PyDLL(sys.argv[1]).vt_probe_capture\n"          /* 3 */
        "nogil = ctypes.CDLL(sys.argv[1]).vt_probe_capture\n"         /* 4 */
        "def leaf(f):\n"                                              /* 5 */
        "    return f(buf, 8192)\n"                                   /* 6 */
        "def mid(f):\n"                                               /* 7 */
        "    return leaf(f)\n"                                        /* 8 */
        "print('id', mid(gil)); print(buf.value.decode(), end='')\n"  /* 9 */
        "print('id', mid(gil)); print(buf.value.decode(), end='')\n"  /* 10 */
        "print('id', mid(nogil)); print(buf.value.decode(), end='')\n"; /* 11 */
    char zDir[] = "/tmp/vt_pyctypes_XXXXXX", zPath[PATH_MAX], zCmd[2 * PATH_MAX + 64], zOut[8192];
    char zWant[4 * PATH_MAX];
    FILE *f;
    size_t n;
    ASSERT(mkdtemp(zDir));
    snprintf(zPath, sizeof zPath, "%s/probe.py", zDir);
    f = fopen(zPath, "w");
    ASSERT(f);
    ASSERT_EQ(1, fwrite(zScript, sizeof zScript - 1, 1, f));
    ASSERT_EQ(0, fclose(f));
    snprintf(zCmd, sizeof zCmd, "'%s' '%s' '%s' 2>&1", VT_TEST_PYTHON_EXE, zPath, VT_TEST_PROBE_LIB);
    f = popen(zCmd, "r");
    ASSERT(f);
    n = fread(zOut, 1, sizeof zOut - 1, f);
    zOut[n] = '\0';
    ASSERT_EQ(0, pclose(f));
    unlink(zPath);
    rmdir(zDir);
    /* First call: new site with leaf (line 6), mid (line 8), <module> (line 9), then 4 native. */
    snprintf(zWant, sizeof zWant, "id 1\npy %s:6:leaf\npy %s:8:mid\npy %s:9:<module>\nnative 4\n",
             zPath, zPath, zPath);
    ASSERT_CONTAINS(zOut, zWant);
    /* Second call from another line: a new site. Third: no GIL, the same frames read raw. */
    snprintf(zWant, sizeof zWant, "id 2\npy %s:6:leaf\npy %s:8:mid\npy %s:10:<module>\nnative 4\n",
             zPath, zPath, zPath);
    ASSERT_CONTAINS(zOut, zWant);
    snprintf(zWant, sizeof zWant, "id 3\npy %s:6:leaf\npy %s:8:mid\npy %s:11:<module>\nnative 4\n",
             zPath, zPath, zPath);
    ASSERT_CONTAINS(zOut, zWant);
#endif
}

/*
 * Lines deep inside a long function (where PyFrame_GetLineNumber would scan
 * hundreds of entries): exact, per call instruction, and repeated sites
 * deduplicated through the per-code line cache.
 */
TEST(lines_in_long_function)
{
    PyObject *pMod = start_python(), *pRes, *pA, *pB;
    pRes = PyRun_String("import vtcap\n"
                        "src = 'def big():\\n' + '    x = 0\\n' * 300 + "
                        "'    a = vtcap.capture(4)\\n    b = vtcap.capture(4)\\n    return a, b\\n'\n"
                        "exec(compile(src, 'gen.py', 'exec'))\n"
                        "r1, r2 = [big() for _ in range(2)]\n",
                        Py_file_input, PyModule_GetDict(pMod), PyModule_GetDict(pMod));
    if (!pRes) PyErr_Print();
    ASSERT(pRes);
    Py_DECREF(pRes);
    pA = PyObject_GetAttrString(pMod, "r1");
    pB = PyObject_GetAttrString(pMod, "r2");
    ASSERT(pA && pB);
    ASSERT_EQ(1, PyObject_RichCompareBool(pA, pB, Py_EQ)); /* same two sites on the second call */
    ASSERT_NE(PyLong_AsLongLong(PyTuple_GetItem(pA, 0)), PyLong_AsLongLong(PyTuple_GetItem(pA, 1)));
    Py_DECREF(pA);
    Py_DECREF(pB);
    ASSERT_EQ(2, nRec);
    ASSERT_STREQ("gen.py", aRec[0].u.stack.aFrame[0].zFile);
    ASSERT_STREQ("big", aRec[0].u.stack.aFrame[0].zFunction);
    ASSERT_EQ(302, aRec[0].u.stack.aFrame[0].line);
    ASSERT_EQ(303, aRec[1].u.stack.aFrame[0].line);
    ASSERT_EQ(4, aRec[0].u.stack.aFrame[1].line); /* the comprehension line of the <string> code */
    stop_python(pMod);
}

/* The cached unwinder agrees with backtrace() through the interpreter's frames, to the end. */
TEST(unwind_through_interpreter)
{
    PyObject *pMod = start_python(), *pRes;
    struct vt_unwind_stats st0, st1;
    long n;
    vt__unwind_stats(&st0);
    pRes = PyRun_String("import vtcap\n"
                        "def f(k):\n"
                        "    return f(k - 1) if k else vtcap.compare_unwind()\n"
                        "n = min(f(k) for k in range(12))\n",
                        Py_file_input, PyModule_GetDict(pMod), PyModule_GetDict(pMod));
    if (!pRes) PyErr_Print();
    ASSERT(pRes);
    Py_DECREF(pRes);
    pRes = PyObject_GetAttrString(pMod, "n");
    ASSERT(pRes);
    n = PyLong_AsLong(pRes);
    Py_DECREF(pRes);
    ASSERT(n > 10); /* equal walks (a difference gives -1), through many interpreter frames */
#if defined(__x86_64__) && defined(__linux__)
    vt__unwind_stats(&st1);
    ASSERT_EQ(12, st1.fast - st0.fast);         /* every fast walk finished on its own */
    ASSERT_EQ(12, st1.fallback - st0.fallback); /* only the forced reference walks */
#else
    (void)st0;
    (void)st1;
#endif
    stop_python(pMod);
}

VT_TEST_LIST(T(file_line_function) T(dedup_and_lines) T(method_qualname)
             T(no_gil_raw_python_frames) T(pending_exception_kept) T(code_objects_retained)
             T(not_initialized) T(real_interpreter_ctypes)
             T(unwind_through_interpreter) T(lines_in_long_function))
