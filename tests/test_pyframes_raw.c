/* Tests of the GIL-free Python stack reader against the C-API reader, inside an embedded CPython. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "pyframes.h"
#include "pyframes_raw.h"
#include "stack.h"

#include <limits.h>
#include <pthread.h>

#include "py_embed.h"
#include "vt_test.h"
#include "vramtrace/schema.h"

/* Versions the raw reader has a table for; under any other the tests are skipped. */
#define VT_HAVE_TABLE (PY_VERSION_HEX >= 0x03090000 && PY_VERSION_HEX < 0x030e0000)

/* The module the tests import: line numbers below are asserted exactly. */
static const char zModuleSource[] =
    "import threading, vtraw\n"                       /* 1 */
    "def leaf(tag):\n"                                /* 2 */
    "    return vtraw.both(tag)\n"                    /* 3 */
    "def middle(tag):\n"                              /* 4 */
    "    x = 1\n"                                     /* 5 */
    "    return leaf(tag) + x - 1\n"                  /* 6 */
    "def outer():\n"                                  /* 7 */
    "    return middle('outer')\n"                    /* 8 */
    "def nested():\n"                                 /* 9 */
    "    def inner_fn():\n"                           /* 10 */
    "        return vtraw.both('nested')\n"           /* 11 */
    "    return inner_fn()\n"                         /* 12 */
    "def gen():\n"                                    /* 13 */
    "    yield vtraw.both('gen')\n"                   /* 14 */
    "def use_gen():\n"                                /* 15 */
    "    return next(gen())\n"                        /* 16 */
    "async def coro():\n"                             /* 17 */
    "    return vtraw.both('coro')\n"                 /* 18 */
    "def use_coro():\n"                               /* 19 */
    "    c = coro()\n"                                /* 20 */
    "    try:\n"                                      /* 21 */
    "        c.send(None)\n"                          /* 22 */
    "    except StopIteration as e:\n"                /* 23 */
    "        return e.value\n"                        /* 24 */
    "def use_lambda():\n"                             /* 25 */
    "    f = lambda: vtraw.both('lambda')\n"          /* 26 */
    "    return f()\n"                                /* 27 */
    "def recurse(n):\n"                               /* 28 */
    "    if n == 0:\n"                                /* 29 */
    "        return vtraw.both('deep')\n"             /* 30 */
    "    return recurse(n - 1)\n"                     /* 31 */
    "def deep():\n"                                   /* 32 */
    "    return recurse(300)\n"                       /* 33 */
    "class Model:\n"                                  /* 34 */
    "    def forward(self):\n"                        /* 35 */
    "        return vtraw.both('method')\n"           /* 36 */
    "def use_method():\n"                             /* 37 */
    "    return Model().forward()\n"                  /* 38 */
    "def caf\xc3\xa9_\xe5\x90\x8d\xe5\x89\x8d():\n"   /* 39: non-ASCII name (UCS-2) */
    "    return vtraw.both('unicode')\n"              /* 40 */
    "def caf\xc3\xa9():\n"                            /* 41: non-ASCII name (Latin-1) */
    "    return vtraw.both('latin1')\n"               /* 42 */
    "def in_thread():\n"                              /* 43 */
    "    r = []\n"                                    /* 44 */
    "    t = threading.Thread(target=lambda: r.append(middle('thread')))\n" /* 45 */
    "    t.start(); t.join()\n"                       /* 46 */
    "    return r[0]\n"                               /* 47 */
    "def sites():\n"                                  /* 48 */
    "    return vtraw.sites()\n"                      /* 49 */
    "def raw_count():\n"                              /* 50 */
    "    return vtraw.raw_count()\n"                  /* 51 */
    "def spin(n):\n"                                  /* 52 */
    "    return sum(middle2(i) for i in range(n))\n"  /* 53 */
    "def middle2(i):\n"                               /* 54 */
    "    return vtraw.check(i % 7) if i % 3 else busy(i)\n" /* 55 */
    "def busy(i):\n"                                  /* 56 */
    "    return 0 * sum(range(i % 50))\n"             /* 57 */
    "def contended():\n"                              /* 58 */
    "    r = []\n"                                    /* 59 */
    "    ts = [threading.Thread(target=lambda: r.append(spin(3000))) for _ in range(4)]\n" /* 60 */
    "    for t in ts: t.start()\n"                    /* 61 */
    "    for t in ts: t.join()\n"                     /* 62 */
    "    return len(r) * 1000000 + sum(r)\n"          /* 63 */
    "def confirm(bad=False):\n"                       /* 64 */
    "    return vtraw.confirm(bad)\n";                /* 65 */

#define MAX_FRAMES VT_SITE_MAX_PYDEPTH
#define LINE_MAX_ 512

/* The frames of the last raw capture, as "file:line:function" relative to the module's directory. */
static char aLast[MAX_FRAMES][LINE_MAX_];
static int nLast = -1;
static int nDepth = 32; /* frames asked of both readers */
static char zModulePath[PATH_MAX];

/* Describe a frame as "file:line:function" into z, with the module's path shortened to "M". */
static void describe(char *z, const char *zFile, int line, const char *zFunction)
{
    const char *zShown = strcmp(zFile, zModulePath) == 0 ? "M" : zFile;
    snprintf(z, LINE_MAX_, "%s:%d:%s", zShown, line, zFunction);
}

/* The calling thread's frames through the C API (GIL held). Returns the count. */
static int read_api(char a[][LINE_MAX_], int nMax)
{
    struct vt__pyframe aF[MAX_FRAMES];
    int n = vt__py_capture(aF, nMax), i;
    for (i = 0; i < n; i++) {
        char *zFile, *zFunction;
        int line = aF[i].lasti >= 0 ? vt__py_code_line(aF[i].pCode, aF[i].lasti) : aF[i].line;
        ASSERT_EQ(0, vt__py_code_names(aF[i].pCode, &zFile, &zFunction));
        describe(a[i], zFile, line, zFunction);
        free(zFile);
        free(zFunction);
    }
    return n;
}

/* The calling thread's frames through the raw reader (GIL held or not). Returns the count. */
static int read_raw(char a[][LINE_MAX_], int nMax)
{
    struct vt__pyraw_frame aF[MAX_FRAMES];
    int n = vt__pyraw_capture(aF, nMax), i;
    for (i = 0; i < n; i++) {
        char *zFile, *zFunction;
        int line = aF[i].lasti >= 0 ? vt__pyraw_code_line(aF[i].pCode, aF[i].lasti) : aF[i].line;
        ASSERT_EQ(0, vt__pyraw_code_names(aF[i].pCode, &zFile, &zFunction));
        ASSERT(aF[i].fp != 0);
        ASSERT_EQ(aF[i].fp, vt__pyraw_code_fp(aF[i].pCode));
        describe(a[i], zFile, line, zFunction);
        free(zFile);
        free(zFunction);
    }
    return n;
}

/*
 * vtraw.both(tag): read the stack through the C API with the GIL, then without
 * the GIL through the raw reader; they must agree frame for frame. Returns the
 * frame count, or -1 (after printing both) if they differ.
 */
static PyObject *vtraw_both(PyObject *self, PyObject *args)
{
    static char aApi[MAX_FRAMES][LINE_MAX_];
    const char *zTag;
    int nApi, nRaw = 0, i, bSame, bGilInside = -1;
    (void)self;
    if (!PyArg_ParseTuple(args, "s", &zTag)) return NULL;
    nApi = read_api(aApi, nDepth);
    Py_BEGIN_ALLOW_THREADS
    bGilInside = PyGILState_Check();
    nRaw = read_raw(aLast, nDepth);
    Py_END_ALLOW_THREADS
    nLast = nRaw;
    bSame = nApi == nRaw && bGilInside == 0;
    for (i = 0; bSame && i < nRaw; i++) bSame = strcmp(aApi[i], aLast[i]) == 0;
    if (!bSame) {
        fprintf(stderr, "  [%s] gil inside %d; api %d frames, raw %d frames\n", zTag, bGilInside,
                nApi, nRaw);
        for (i = 0; i < nApi || i < nRaw; i++)
            fprintf(stderr, "    %-50s | %s\n", i < nApi ? aApi[i] : "", i < nRaw ? aLast[i] : "");
        return PyLong_FromLong(-1);
    }
    return PyLong_FromLong(nRaw);
}

static struct vt__sites *pSites;

/* One GIL-free site capture, from a single call site whichever caller. */
static __attribute__((noinline)) int64_t capture_nogil(struct vt_hrec *pRec)
{
    int64_t id;
    Py_BEGIN_ALLOW_THREADS
    id = vt__site_capture(pSites, 1, 1, pRec); /* its own frame only: one native pc */
    Py_END_ALLOW_THREADS
    return id;
}

/* Python frames of a site record, as "file:line:function" lines into a; returns their count. */
static int site_python(const struct vt_hrec *rec, char a[][LINE_MAX_])
{
    int i, n = 0;
    for (i = 0; i < rec->u.stack.nFrame; i++) {
        const struct vt_frame *f = &rec->u.stack.aFrame[i];
        if (f->kind == VT_FRAME_PYTHON) describe(a[n++], f->zFile, f->line, f->zFunction);
    }
    return n;
}

/*
 * vtraw.sites(): the site table captures this call site with the GIL, then
 * twice without it: the Python frames of all three must be equal, the two
 * GIL-free captures must share one stack id. Returns the number of Python
 * frames, or -1.
 */
static PyObject *vtraw_sites(PyObject *self, PyObject *args)
{
    static char a[3][MAX_FRAMES][LINE_MAX_];
    struct vt_hrec rec[3];
    int64_t id[3];
    int n[3], k, i, bSame = 1;
    struct vt_sites_stats st;
    (void)self;
    (void)args;
    id[0] = vt__site_capture(pSites, 2, 1, &rec[0]);
    for (k = 1; k < 3; k++) id[k] = capture_nogil(&rec[k]);
    ASSERT(id[0] >= 1 && id[1] >= 1);
    ASSERT_EQ(id[1], id[2]);
    ASSERT_EQ(VT_HREC_STACK, rec[0].type);
    ASSERT_EQ(VT_HREC_STACK, rec[1].type);
    ASSERT_EQ(0, rec[2].type); /* a known site: no new record */
    for (k = 0; k < 2; k++) n[k] = site_python(&rec[k], a[k]);
    bSame = n[0] == n[1] && n[0] > 0;
    for (i = 0; bSame && i < n[0]; i++) bSame = strcmp(a[0][i], a[1][i]) == 0;
    if (bSame) memcpy(aLast, a[1], sizeof aLast);
    nLast = n[1];
    vt__sites_stats(pSites, &st);
    ASSERT_EQ(3, st.python);
    for (k = 0; k < 2; k++) vt__frames_free(rec[k].u.stack.aFrame, rec[k].u.stack.nFrame);
    return PyLong_FromLong(bSame ? n[0] : -1);
}

/* vtraw.raw_count(): frames the raw reader sees with the GIL released. */
static PyObject *vtraw_raw_count(PyObject *self, PyObject *args)
{
    struct vt__pyraw_frame a[8];
    int n;
    (void)self;
    (void)args;
    Py_BEGIN_ALLOW_THREADS
    n = vt__pyraw_capture(a, 8);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(n);
}

/*
 * vtraw.check(k): on any thread, at once with others: read the stack through
 * the C API, then k times raw without the GIL (other threads run Python
 * meanwhile); every raw read must equal the C API's. Returns 0, or fails the test.
 */
static PyObject *vtraw_check(PyObject *self, PyObject *args)
{
    char aApi[16][LINE_MAX_], aRaw[16][LINE_MAX_];
    int k, nApi, nRaw = 0, i, r, bSame = 1;
    (void)self;
    if (!PyArg_ParseTuple(args, "i", &k)) return NULL;
    nApi = read_api(aApi, 16);
    for (r = 0; r < k && bSame; r++) {
        Py_BEGIN_ALLOW_THREADS
        nRaw = read_raw(aRaw, 16);
        Py_END_ALLOW_THREADS
        bSame = nApi == nRaw;
        for (i = 0; bSame && i < nRaw; i++) bSame = strcmp(aApi[i], aRaw[i]) == 0;
    }
    if (!bSame) VT__FAIL("concurrent raw read differs: api %d frames, raw %d", nApi, nRaw);
    return PyLong_FromLong(0);
}

/*
 * vtraw.confirm(bad): cross-check the raw reader with the C API's frames, as
 * the site table does with the GIL; with bad, one code object is replaced by
 * another. Returns vt__pyraw_confirm's answer.
 */
static PyObject *vtraw_confirm(PyObject *self, PyObject *args)
{
    struct vt__pyframe aF[8];
    const void *apCode[8];
    int bBad, n, i;
    (void)self;
    if (!PyArg_ParseTuple(args, "p", &bBad)) return NULL;
    n = vt__py_capture(aF, 8);
    ASSERT(n >= 1);
    for (i = 0; i < n; i++) apCode[i] = aF[i].pCode;
    if (bBad) apCode[n - 1] = apCode[0] == apCode[n - 1] ? NULL : apCode[0];
    return PyLong_FromLong(vt__pyraw_confirm(apCode, n));
}

static PyMethodDef aMethod[] = {
    {"confirm", vtraw_confirm, METH_VARARGS, NULL},
    {"check", vtraw_check, METH_VARARGS, NULL},
    {"raw_count", vtraw_raw_count, METH_NOARGS, NULL},
    {"both", vtraw_both, METH_VARARGS, NULL},
    {"sites", vtraw_sites, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef vtrawModule = {PyModuleDef_HEAD_INIT, "vtraw", NULL, -1, aMethod,
                                         NULL, NULL, NULL, NULL};

static PyObject *vtraw_init(void)
{
    return PyModule_Create(&vtrawModule);
}

/* Write the module into the scratch directory, start Python with it on sys.path, import it. */
static PyObject *start_python(void)
{
    if (!VT_HAVE_TABLE) SKIP("the raw reader has no table for this CPython version");
    pSites = vt__sites_open(NULL);
    ASSERT(pSites);
    return py_embed_start("vtrawsite", zModuleSource, sizeof zModuleSource - 1, "vtraw", vtraw_init,
                          zModulePath, sizeof zModulePath);
}

static void stop_python(PyObject *pMod)
{
    Py_DECREF(pMod);
    vt__sites_close(pSites);
    ASSERT_EQ(0, Py_FinalizeEx());
}

/* The running version is one the raw reader knows, confirmed by the interpreter's own type sizes. */
TEST(version_supported)
{
    if (!VT_HAVE_TABLE) SKIP("the raw reader has no table for this CPython version");
    ASSERT_EQ(1, vt__py_resolve());
    ASSERT_EQ(1, vt__pyraw_resolve());
    ASSERT_EQ(PY_MAJOR_VERSION << 8 | PY_MINOR_VERSION, vt__pyraw_version());
}

/* Plain nested calls: exact file, line and function, innermost first, equal to the C API's. */
TEST(nested_calls)
{
    PyObject *pMod = start_python();
    ASSERT_EQ(3, py_embed_call(pMod, "outer"));
    ASSERT_EQ(3, nLast);
    ASSERT_STREQ("M:3:leaf", aLast[0]);
    ASSERT_STREQ("M:6:middle", aLast[1]);
    ASSERT_STREQ("M:8:outer", aLast[2]);
    stop_python(pMod);
}

/* A closure, a method, a lambda: qualified names on 3.11+, plain names before. */
TEST(closure_method_lambda)
{
    PyObject *pMod = start_python();
    int bQual = PY_VERSION_HEX >= 0x030b0000;
    ASSERT_EQ(2, py_embed_call(pMod, "nested"));
    ASSERT_STREQ(bQual ? "M:11:nested.<locals>.inner_fn" : "M:11:inner_fn", aLast[0]);
    ASSERT_STREQ("M:12:nested", aLast[1]);
    ASSERT_EQ(2, py_embed_call(pMod, "use_method"));
    ASSERT_STREQ(bQual ? "M:36:Model.forward" : "M:36:forward", aLast[0]);
    ASSERT_STREQ("M:38:use_method", aLast[1]);
    ASSERT_EQ(2, py_embed_call(pMod, "use_lambda"));
    ASSERT_STREQ(bQual ? "M:26:use_lambda.<locals>.<lambda>" : "M:26:<lambda>", aLast[0]);
    ASSERT_STREQ("M:27:use_lambda", aLast[1]);
    stop_python(pMod);
}

/* Generator and coroutine frames (owned by their objects) chain to their callers. */
TEST(generator_and_coroutine)
{
    PyObject *pMod = start_python();
    ASSERT_EQ(2, py_embed_call(pMod, "use_gen"));
    ASSERT_STREQ("M:14:gen", aLast[0]);
    ASSERT_STREQ("M:16:use_gen", aLast[1]);
    ASSERT_EQ(2, py_embed_call(pMod, "use_coro"));
    ASSERT_STREQ("M:18:coro", aLast[0]);
    ASSERT_STREQ("M:22:use_coro", aLast[1]);
    stop_python(pMod);
}

/* Non-ASCII function names (Latin-1 and UCS-2 strings) come out as the same UTF-8 as the C API's. */
TEST(non_ascii_names)
{
    PyObject *pMod = start_python();
    ASSERT_EQ(1, py_embed_call(pMod, "caf\xc3\xa9_\xe5\x90\x8d\xe5\x89\x8d"));
    ASSERT_STREQ("M:40:caf\xc3\xa9_\xe5\x90\x8d\xe5\x89\x8d", aLast[0]);
    ASSERT_EQ(1, py_embed_call(pMod, "caf\xc3\xa9"));
    ASSERT_STREQ("M:42:caf\xc3\xa9", aLast[0]);
    stop_python(pMod);
}

/* Recursion deeper than the limit: exactly the limit, innermost first, for 32 and for the maximum. */
TEST(deep_recursion)
{
    PyObject *pMod = start_python();
    int i;
    ASSERT_EQ(32, py_embed_call(pMod, "deep"));
    ASSERT_STREQ("M:30:recurse", aLast[0]);
    for (i = 1; i < 32; i++) ASSERT_STREQ("M:31:recurse", aLast[i]);
    nDepth = MAX_FRAMES;
    ASSERT_EQ(MAX_FRAMES, py_embed_call(pMod, "deep"));
    ASSERT_STREQ("M:31:recurse", aLast[MAX_FRAMES - 1]);
    stop_python(pMod);
}

/* A Python thread sees its own frames only (its target, then threading's bootstrap). */
TEST(python_thread)
{
    PyObject *pMod = start_python();
    long long n = py_embed_call(pMod, "in_thread");
    ASSERT(n >= 4);
    ASSERT_EQ(n, nLast);
    ASSERT_STREQ("M:3:leaf", aLast[0]);
    ASSERT_STREQ("M:6:middle", aLast[1]);
    ASSERT_STREQ(PY_VERSION_HEX >= 0x030b0000 ? "M:45:in_thread.<locals>.<lambda>" : "M:45:<lambda>",
                 aLast[2]);
    ASSERT_CONTAINS(aLast[3], "threading.py:");
    stop_python(pMod);
}

/* Capture on a thread that never ran Python. */
static void *no_python_thread(void *pArg)
{
    struct vt__pyraw_frame a[8];
    *(int *)pArg = vt__pyraw_capture(a, 8);
    return NULL;
}

/* A thread without a Python thread state gets no frames while Python runs elsewhere. */
TEST(thread_without_thread_state)
{
    PyObject *pMod = start_python();
    pthread_t t;
    int n = -1;
    Py_BEGIN_ALLOW_THREADS
    ASSERT_EQ(0, pthread_create(&t, NULL, no_python_thread, &n));
    ASSERT_EQ(0, pthread_join(t, NULL));
    Py_END_ALLOW_THREADS
    ASSERT_EQ(0, n);
    stop_python(pMod);
}

/* Before Py_Initialize and after Py_FinalizeEx: no frames, no crash. */
TEST(not_initialized)
{
    struct vt__pyraw_frame a[4];
    PyObject *pMod;
    ASSERT_EQ(1, vt__py_resolve());
    ASSERT_EQ(0, Py_IsInitialized());
    ASSERT_EQ(0, vt__pyraw_capture(a, 4));
    pMod = start_python();
    ASSERT_EQ(3, py_embed_call(pMod, "outer"));
    stop_python(pMod);
    ASSERT_EQ(0, Py_IsInitialized());
    ASSERT_EQ(0, vt__pyraw_capture(a, 4));
}

/* Non-code and NULL objects are refused by every entry point. */
TEST(bad_objects_refused)
{
    PyObject *pMod = start_python(), *pStr = PyUnicode_FromString("not code");
    char *zFile = (char *)1, *zFunction = (char *)1;
    ASSERT_EQ(0, vt__pyraw_code_fp(pStr));
    ASSERT_EQ(0, vt__pyraw_code_fp(NULL));
    ASSERT_EQ(0, vt__pyraw_code_line(pStr, 0));
    ASSERT_EQ(-EINVAL, vt__pyraw_code_names(pStr, &zFile, &zFunction));
    ASSERT(zFile == NULL && zFunction == NULL);
    Py_DECREF(pStr);
    stop_python(pMod);
}

/*
 * Every instruction offset of every code object in a large standard module
 * maps to the same line through the raw decoder as through PyCode_Addr2Line.
 */
TEST(line_table_matches_addr2line)
{
    PyObject *pMod = start_python(), *pRes;
    static const char zWalk[] =
        "import types, inspect, ast, vtrawsite\n"
        "codes = []\n"
        "def walk(c):\n"
        "    codes.append(c)\n"
        "    for k in c.co_consts:\n"
        "        if isinstance(k, types.CodeType): walk(k)\n"
        "for m in (inspect, ast, vtrawsite):\n"
        "    walk(compile(open(m.__file__).read(), m.__file__, 'exec'))\n";
    PyObject *pMain = PyImport_AddModule("__main__"), *pGlobals = PyModule_GetDict(pMain), *pCodes;
    Py_ssize_t i, nCode;
    long nChecked = 0;
    pRes = PyRun_String(zWalk, Py_file_input, pGlobals, pGlobals);
    if (!pRes) PyErr_Print();
    ASSERT(pRes);
    Py_DECREF(pRes);
    pCodes = PyDict_GetItemString(pGlobals, "codes");
    ASSERT(pCodes);
    nCode = PyList_Size(pCodes);
    ASSERT(nCode > 100);
    for (i = 0; i < nCode; i++) {
        PyObject *pCode = PyList_GetItem(pCodes, i), *pBytes = PyObject_GetAttrString(pCode, "co_code");
        Py_ssize_t cb = PyBytes_Size(pBytes), off;
        Py_DECREF(pBytes);
        for (off = -2; off < cb + 4; off += 2, nChecked++) {
            int want = PyCode_Addr2Line((PyCodeObject *)pCode, (int)off);
            if (want < 0) want = 0;
            if (want != vt__pyraw_code_line(pCode, (int)off))
                VT__FAIL("code %zd offset %zd: Addr2Line %d, raw %d", i, off, want,
                         vt__pyraw_code_line(pCode, (int)off));
        }
    }
    ASSERT(nChecked > 10000);
    stop_python(pMod);
}

/* Through the site table: GIL-free captures carry the same Python frames as a GIL capture. */
TEST(site_capture_without_gil)
{
    PyObject *pMod = start_python();
    ASSERT_EQ(1, py_embed_call(pMod, "sites"));
    ASSERT_EQ(1, nLast);
    ASSERT_STREQ("M:49:sites", aLast[0]);
    stop_python(pMod);
}

/*
 * Four Python threads read their own stacks raw, each while the others run
 * Python (and switch the GIL among themselves): every read is exact.
 */
TEST(concurrent_threads)
{
    PyObject *pMod = start_python();
    ASSERT_EQ(4 * 1000000, py_embed_call(pMod, "contended"));
    stop_python(pMod);
}

/*
 * A real interpreter executable of the same version (not an embedding
 * program) loads the probe library through ctypes.CDLL, which releases the
 * GIL around the call: the frames come from the raw reader, exact.
 */
TEST(real_interpreter_without_gil)
{
#if !defined(VT_TEST_PYRAW_EXE) || !defined(VT_TEST_PROBE_LIB)
    SKIP("no interpreter executable or probe library configured");
#elif defined(__SANITIZE_ADDRESS__)
    SKIP("a sanitized library cannot be loaded into an unsanitized interpreter");
#else
    static const char zScript[] =
        "import ctypes, sys\n"                                     /* 1 */
        "buf = ctypes.create_string_buffer(8192)\n"                /* 2 */
        "nogil = ctypes.CDLL(sys.argv[1]).vt_probe_capture\n"      /* 3 */
        "def leaf(f):\n"                                           /* 4 */
        "    return f(buf, 8192)\n"                                /* 5 */
        "class K:\n"                                               /* 6 */
        "    def mid(self, f):\n"                                  /* 7 */
        "        return leaf(f)\n"                                 /* 8 */
        "print('id', K().mid(nogil)); print(buf.value.decode(), end='')\n"; /* 9 */
    char zPath[PATH_MAX], zCmd[3 * PATH_MAX], zOut[8192], zWant[4 * PATH_MAX];
    const char *zTmp = getenv("VT_TEST_TMP");
    FILE *f;
    size_t n;
    snprintf(zPath, sizeof zPath, "%s/probe_raw.py", zTmp ? zTmp : "/tmp");
    f = fopen(zPath, "w");
    ASSERT(f);
    ASSERT_EQ(1, fwrite(zScript, sizeof zScript - 1, 1, f));
    ASSERT_EQ(0, fclose(f));
    snprintf(zCmd, sizeof zCmd, "'%s' '%s' '%s' 2>&1", VT_TEST_PYRAW_EXE, zPath, VT_TEST_PROBE_LIB);
    f = popen(zCmd, "r");
    ASSERT(f);
    n = fread(zOut, 1, sizeof zOut - 1, f);
    zOut[n] = '\0';
    ASSERT_EQ(0, pclose(f));
    unlink(zPath);
    snprintf(zWant, sizeof zWant, "id 1\npy %s:5:leaf\npy %s:8:%s\npy %s:9:<module>\nnative 4\n", zPath,
             zPath, PY_VERSION_HEX >= 0x030b0000 ? "K.mid" : "mid", zPath);
    ASSERT_STREQ(zWant, zOut);
#endif
}

/* GIL-held site captures cross-check the raw reader: they agree, and only the first ones are compared. */
TEST(gil_captures_confirm)
{
    PyObject *pMod = start_python();
    int i;
    ASSERT_EQ(0, vt__pyraw_confirmed());
    ASSERT_EQ(1, py_embed_call(pMod, "sites")); /* one GIL-held capture */
    ASSERT_EQ(1, vt__pyraw_confirmed());
    for (i = 0; i < VT_PYRAW_CONFIRMATIONS + 10; i++) ASSERT_EQ(1, py_embed_call(pMod, "confirm"));
    ASSERT_EQ(VT_PYRAW_CONFIRMATIONS, vt__pyraw_confirmed());
    ASSERT_EQ(1, py_embed_call(pMod, "raw_count"));
    stop_python(pMod);
}

/* A cross-check that disagrees turns the raw reader off for good: no frames without the GIL. */
TEST(disagreement_turns_off)
{
    PyObject *pMod = start_python(), *pRes;
    ASSERT_EQ(1, py_embed_call(pMod, "raw_count"));
    pRes = PyObject_CallMethod(pMod, "confirm", "i", 1);
    ASSERT(pRes);
    ASSERT_EQ(0, PyLong_AsLong(pRes));
    Py_DECREF(pRes);
    ASSERT_EQ(0, vt__pyraw_resolve());
    ASSERT_EQ(0, py_embed_call(pMod, "raw_count"));
    stop_python(pMod);
}

/* VRAMTRACE_PYTHON_RAW=0 turns the raw reader off: no frames without the GIL. */
TEST(disabled_by_environment)
{
    PyObject *pMod;
    ASSERT_EQ(0, setenv("VRAMTRACE_PYTHON_RAW", "0", 1));
    pMod = start_python();
    ASSERT_EQ(0, vt__pyraw_resolve());
    ASSERT_EQ(0, vt__pyraw_version());
    ASSERT_EQ(0, py_embed_call(pMod, "raw_count"));
    stop_python(pMod);
}

/* The same call with the reader on: one frame. */
TEST(raw_count_enabled)
{
    PyObject *pMod = start_python();
    ASSERT_EQ(1, py_embed_call(pMod, "raw_count"));
    stop_python(pMod);
}

VT_TEST_LIST(T(version_supported) T(nested_calls) T(closure_method_lambda) T(generator_and_coroutine)
             T(non_ascii_names) T(deep_recursion) T(python_thread) T(thread_without_thread_state)
             T(not_initialized) T(bad_objects_refused) T(line_table_matches_addr2line)
             T(site_capture_without_gil) T(concurrent_threads)
             T(gil_captures_confirm) T(disagreement_turns_off) T(real_interpreter_without_gil)
             T(disabled_by_environment) T(raw_count_enabled))
