/* Test helper: start an embedded CPython with a test extension module and import a module written from source. */
#ifndef VT_PY_EMBED_H
#define VT_PY_EMBED_H

#include <Python.h>
#include <stdio.h>
#include <stdlib.h>

#include "vt_test.h"

/*
 * Write zSource (nSource bytes) as <new dir under VT_TEST_TMP>/<zModule>.py (its path
 * into zPathOut), register the built-in extension zExt created by xInit, start
 * Python with the directory first on sys.path and import zModule. Returns the
 * module (a new reference); any failure fails the test.
 */
static inline PyObject *py_embed_start(const char *zModule, const char *zSource, size_t nSource,
                                       const char *zExt, PyObject *(*xInit)(void), char *zPathOut,
                                       size_t nPathOut)
{
    const char *zTmp = getenv("VT_TEST_TMP");
    char zDir[128];
    FILE *f;
    PyObject *pSys, *pPath, *pDir, *pMod;
    snprintf(zDir, sizeof zDir, "%.80s/py_XXXXXX", zTmp ? zTmp : "/tmp");
    ASSERT(mkdtemp(zDir));
    snprintf(zPathOut, nPathOut, "%s/%s.py", zDir, zModule);
    f = fopen(zPathOut, "w");
    ASSERT(f);
    ASSERT_EQ(1, fwrite(zSource, nSource, 1, f));
    ASSERT_EQ(0, fclose(f));
    ASSERT_EQ(0, PyImport_AppendInittab(zExt, xInit));
    Py_InitializeEx(0);
    pSys = PyImport_ImportModule("sys");
    pPath = PyObject_GetAttrString(pSys, "path");
    pDir = PyUnicode_FromString(zDir);
    ASSERT_EQ(0, PyList_Insert(pPath, 0, pDir));
    Py_DECREF(pDir);
    Py_DECREF(pPath);
    Py_DECREF(pSys);
    pMod = PyImport_ImportModule(zModule);
    if (!pMod) PyErr_Print();
    ASSERT(pMod);
    return pMod;
}

/* Call pMod.<zName>() and return its integer result; a Python error fails the test. */
static inline long long py_embed_call(PyObject *pMod, const char *zName)
{
    PyObject *pRes = PyObject_CallMethod(pMod, zName, NULL);
    long long v;
    if (!pRes) PyErr_Print();
    ASSERT(pRes);
    v = PyLong_AsLongLong(pRes);
    Py_DECREF(pRes);
    return v;
}

#endif
