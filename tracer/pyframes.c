/* Python stack reader: CPython C API entry points looked up with dlsym, used only while the GIL is held. */
#include "pyframes.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The CPython functions used, as opaque-pointer signatures (PyObject * is void * here). */
struct pyapi {
    int (*xIsInitialized)(void);
    int (*xGILStateCheck)(void);
    void *(*xThreadStateUnchecked)(void); /* optional */
    void *(*xEvalGetFrame)(void);
    void *(*xFrameGetBack)(void *);
    void *(*xFrameGetCode)(void *);
    int (*xFrameGetLineNumber)(void *);
    int (*xFrameGetLasti)(void *);         /* optional (3.11+) */
    int (*xCodeAddr2Line)(void *, int);
    void *(*xGetAttrString)(void *, const char *);
    const char *(*xUnicodeAsUTF8)(void *);
    void (*xIncRef)(void *);
    void (*xDecRef)(void *);
    void (*xErrFetch)(void **, void **, void **);
    void (*xErrRestore)(void *, void *, void *);
    void (*xErrClear)(void);
};

static struct pyapi api;                 /* written once under resolveLock, before state = FOUND */
static pthread_mutex_t resolveLock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int state;                /* 0 not looked up, 1 found, 2 absent */
static _Atomic unsigned nSinceLookup;    /* captures since the last failed lookup */

enum { PY_UNKNOWN = 0, PY_FOUND = 1, PY_ABSENT = 2 };

/* dlsym into a function pointer without the object/function pointer cast warning. */
static void lookup(void *pTarget, const char *zName)
{
    void *p = dlsym(RTLD_DEFAULT, zName);
    memcpy(pTarget, &p, sizeof p);
}

/* Look the API up once; on success publish it. Returns PY_FOUND or PY_ABSENT. */
static int resolve_locked(void)
{
    struct pyapi a;
    memset(&a, 0, sizeof a);
    lookup(&a.xIsInitialized, "Py_IsInitialized");
    lookup(&a.xGILStateCheck, "PyGILState_Check");
    lookup(&a.xThreadStateUnchecked, "PyThreadState_GetUnchecked");
    if (!a.xThreadStateUnchecked) lookup(&a.xThreadStateUnchecked, "_PyThreadState_UncheckedGet");
    lookup(&a.xEvalGetFrame, "PyEval_GetFrame");
    lookup(&a.xFrameGetBack, "PyFrame_GetBack");
    lookup(&a.xFrameGetCode, "PyFrame_GetCode");
    lookup(&a.xFrameGetLineNumber, "PyFrame_GetLineNumber");
    lookup(&a.xFrameGetLasti, "PyFrame_GetLasti");
    lookup(&a.xCodeAddr2Line, "PyCode_Addr2Line");
    lookup(&a.xGetAttrString, "PyObject_GetAttrString");
    lookup(&a.xUnicodeAsUTF8, "PyUnicode_AsUTF8");
    lookup(&a.xIncRef, "Py_IncRef");
    lookup(&a.xDecRef, "Py_DecRef");
    lookup(&a.xErrFetch, "PyErr_Fetch");
    lookup(&a.xErrRestore, "PyErr_Restore");
    lookup(&a.xErrClear, "PyErr_Clear");
    if (!a.xIsInitialized || !a.xGILStateCheck || !a.xEvalGetFrame || !a.xFrameGetBack ||
        !a.xFrameGetCode || !a.xFrameGetLineNumber || !a.xCodeAddr2Line || !a.xGetAttrString ||
        !a.xUnicodeAsUTF8 ||
        !a.xIncRef || !a.xDecRef || !a.xErrFetch || !a.xErrRestore || !a.xErrClear)
        return PY_ABSENT;
    api = a;
    return PY_FOUND;
}

int vt__py_resolve(void)
{
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s == PY_FOUND) return 1;
    if (s == PY_ABSENT &&
        atomic_fetch_add_explicit(&nSinceLookup, 1, memory_order_relaxed) % VT_PY_RETRY != VT_PY_RETRY - 1)
        return 0;
    pthread_mutex_lock(&resolveLock);
    s = atomic_load_explicit(&state, memory_order_acquire);
    if (s != PY_FOUND) {
        s = resolve_locked();
        atomic_store_explicit(&state, s, memory_order_release);
    }
    pthread_mutex_unlock(&resolveLock);
    return s == PY_FOUND;
}

int vt__py_holds_gil(void)
{
    if (!vt__py_resolve()) return 0;
    /* PyGILState_Check answers 1 before initialization and when its check is disabled: guard both. */
    if (!api.xIsInitialized()) return 0;
    if (api.xThreadStateUnchecked && !api.xThreadStateUnchecked()) return 0;
    return api.xGILStateCheck() == 1;
}

int vt__py_capture(struct vt__pyframe *aFrame, int nMax)
{
    void *pFrame, *pHeld = NULL;
    int n = 0;
    if (nMax <= 0 || !vt__py_holds_gil()) return 0;
    pFrame = api.xEvalGetFrame(); /* borrowed */
    while (pFrame && n < nMax) {
        void *pCode = api.xFrameGetCode(pFrame), *pBack;
        aFrame[n].pCode = pCode;
        aFrame[n].lasti = api.xFrameGetLasti ? api.xFrameGetLasti(pFrame) : -1;
        aFrame[n].line = 0;
        if (aFrame[n].lasti < 0) { /* before 3.11, or a frame that has not started */
            aFrame[n].lasti = -1;
            aFrame[n].line = api.xFrameGetLineNumber(pFrame);
            if (aFrame[n].line < 0) aFrame[n].line = 0;
        }
        n++;
        /* The running frame keeps its code object alive, so the pointer stays valid. */
        if (pCode) api.xDecRef(pCode);
        pBack = api.xFrameGetBack(pFrame); /* new reference or NULL */
        if (pHeld) api.xDecRef(pHeld);
        pHeld = pBack;
        pFrame = pBack;
    }
    if (pHeld) api.xDecRef(pHeld);
    return n;
}

/* Read attribute zAttr of pObj as a malloc'd UTF-8 string, or NULL if it cannot be read. */
static char *attr_utf8(void *pObj, const char *zAttr)
{
    void *pStr = api.xGetAttrString(pObj, zAttr);
    const char *z;
    char *zOut = NULL;
    if (!pStr) {
        api.xErrClear();
        return NULL;
    }
    z = api.xUnicodeAsUTF8(pStr); /* fails (NULL) for a non-str */
    if (z) zOut = strdup(z);
    else api.xErrClear();
    api.xDecRef(pStr);
    return zOut;
}

int vt__py_code_names(const void *pCode, char **pzFile, char **pzFunction)
{
    void *pType = NULL, *pValue = NULL, *pTrace = NULL, *pObj = (void *)pCode;
    char *zFile = NULL, *zFunction = NULL;
    int rc = 0;
    *pzFile = *pzFunction = NULL;
    if (atomic_load_explicit(&state, memory_order_acquire) != PY_FOUND || !pCode) return -EINVAL;
    api.xErrFetch(&pType, &pValue, &pTrace); /* keep any pending exception out of our way */
    zFile = attr_utf8(pObj, "co_filename");
    zFunction = attr_utf8(pObj, "co_qualname"); /* 3.11+ */
    if (!zFunction) zFunction = attr_utf8(pObj, "co_name");
    api.xErrRestore(pType, pValue, pTrace);
    if (!zFile) zFile = strdup("?");
    if (!zFunction) zFunction = strdup("?");
    if (!zFile || !zFunction) {
        free(zFile);
        free(zFunction);
        rc = -ENOMEM;
    } else {
        *pzFile = zFile;
        *pzFunction = zFunction;
    }
    return rc;
}

int vt__py_code_line(const void *pCode, int lasti)
{
    int line;
    if (atomic_load_explicit(&state, memory_order_acquire) != PY_FOUND || !pCode) return 0;
    line = api.xCodeAddr2Line((void *)pCode, lasti);
    return line < 0 ? 0 : line;
}

void vt__py_fork_prepare(void)
{
    pthread_mutex_lock(&resolveLock);
}

void vt__py_fork_parent(void)
{
    pthread_mutex_unlock(&resolveLock);
}

void vt__py_fork_child(void)
{
    pthread_mutex_init(&resolveLock, NULL);
}

void vt__py_code_ref(const void *pCode, int delta)
{
    if (atomic_load_explicit(&state, memory_order_acquire) != PY_FOUND || !pCode) return;
    if (delta > 0) api.xIncRef((void *)pCode);
    else api.xDecRef((void *)pCode);
}
