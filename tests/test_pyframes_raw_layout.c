/* The raw Python reader's layout table against offsetof() in the CPython headers it is built with. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>

/* Versions with a table; any other builds a program that only reports the skip. */
#define VT_HAVE_TABLE (PY_VERSION_HEX >= 0x03090000 && PY_VERSION_HEX < 0x030e0000)

#if VT_HAVE_TABLE && PY_VERSION_HEX >= 0x030b0000
#include "internal/pycore_frame.h"
#elif VT_HAVE_TABLE
#include <frameobject.h>
#endif

/* The module itself, so its static table can be read (this program does not link vtcore). */
#include "pyframes_raw.c"

#include "vt_test.h"

#if VT_HAVE_TABLE

/* The table entry for the version these headers are from. */
static const struct layout *table_entry(void)
{
    size_t i;
    for (i = 0; i < sizeof aLayout / sizeof aLayout[0]; i++)
        if (aLayout[i].version == (PY_MAJOR_VERSION << 8 | PY_MINOR_VERSION)) return &aLayout[i];
    return NULL;
}

/* Every offset and size the reader uses equals the compiler's answer for these headers. */
TEST(offsets_match_headers)
{
    const struct layout *L = table_entry();
    ASSERT(L);
    ASSERT_EQ((int)offsetof(PyObject, ob_type), OB_TYPE);
    ASSERT_EQ((int)offsetof(PyVarObject, ob_size), OB_SIZE);
    ASSERT_EQ((int)offsetof(PyTypeObject, tp_basicsize), TP_BASICSIZE);
    ASSERT_EQ((int)offsetof(PyBytesObject, ob_sval), BYTES_DATA);
    ASSERT_EQ((int)offsetof(PyASCIIObject, length), UNI_LENGTH);
    ASSERT_EQ((int)offsetof(PyASCIIObject, state), UNI_STATE);
    ASSERT_EQ((int)sizeof(PyASCIIObject), L->uniAscii);
    ASSERT_EQ((int)sizeof(PyCompactUnicodeObject), L->uniCompact);
    ASSERT_EQ((int)sizeof(PyUnicodeObject), L->uniSize);
    ASSERT_EQ((int)offsetof(PyCodeObject, co_filename), L->coFilename);
    ASSERT_EQ((int)offsetof(PyCodeObject, co_name), L->coName);
    ASSERT_EQ((int)offsetof(PyCodeObject, co_firstlineno), L->coFirstlineno);
#if PY_VERSION_HEX >= 0x030b0000
    ASSERT_EQ(CHAIN_FRAMEOBJ != L->chain, 1);
    ASSERT_EQ((int)offsetof(PyCodeObject, co_qualname), L->coQualname);
    ASSERT_EQ((int)offsetof(PyCodeObject, co_linetable), L->coLinetable);
    ASSERT_EQ((int)offsetof(PyCodeObject, _co_firsttraceable), L->coFirstTraceable);
    ASSERT_EQ((int)offsetof(PyCodeObject, co_code_adaptive), L->coSize);
    ASSERT_EQ((int)sizeof(_Py_CODEUNIT), 2);
    ASSERT_EQ((int)offsetof(_PyInterpreterFrame, previous), L->ifPrevious);
    ASSERT_EQ((int)offsetof(_PyInterpreterFrame, owner), L->ifOwner);
    ASSERT_EQ(FRAME_OWNED_BY_GENERATOR, OWNER_GENERATOR);
#if PY_VERSION_HEX >= 0x030d0000
    ASSERT_EQ(CHAIN_DIRECT, L->chain);
    ASSERT_EQ((int)offsetof(PyThreadState, current_frame), L->tsFrame);
    ASSERT_EQ((int)offsetof(_PyInterpreterFrame, f_executable), L->ifCode);
    ASSERT_EQ((int)offsetof(_PyInterpreterFrame, instr_ptr), L->ifInstr);
#else
    ASSERT_EQ(CHAIN_CFRAME, L->chain);
    ASSERT_EQ((int)offsetof(PyThreadState, cframe), L->tsFrame);
    ASSERT_EQ((int)offsetof(_PyCFrame, current_frame), L->cfCurrent);
    ASSERT_EQ((int)offsetof(_PyInterpreterFrame, f_code), L->ifCode);
    ASSERT_EQ((int)offsetof(_PyInterpreterFrame, prev_instr), L->ifInstr);
#endif
#if PY_VERSION_HEX >= 0x030c0000
    ASSERT_EQ(FRAME_OWNED_BY_CSTACK, L->ownerCstack);
#else
    ASSERT_EQ(-1, L->ownerCstack);
#endif
#else
    ASSERT_EQ(CHAIN_FRAMEOBJ, L->chain);
    ASSERT_EQ((int)offsetof(PyThreadState, frame), L->tsFrame);
    ASSERT_EQ((int)offsetof(PyFrameObject, f_back), L->foBack);
    ASSERT_EQ((int)offsetof(PyFrameObject, f_code), L->foCode);
    ASSERT_EQ((int)offsetof(PyFrameObject, f_lasti), L->foLasti);
    ASSERT_EQ((int)offsetof(PyFrameObject, f_lineno), L->foLineno);
    ASSERT_EQ((int)offsetof(PyFrameObject, f_trace), L->foTrace);
    ASSERT_EQ((int)sizeof(PyFrameObject), L->foSize);
    ASSERT_EQ((int)sizeof(PyCodeObject), L->coSize);
    ASSERT_EQ(-1, L->coQualname);
#if PY_VERSION_HEX >= 0x030a0000
    ASSERT_EQ(LINES_310, L->lines);
    ASSERT_EQ((int)offsetof(PyCodeObject, co_linetable), L->coLinetable);
#else
    ASSERT_EQ(LINES_LNOTAB, L->lines);
    ASSERT_EQ((int)offsetof(PyCodeObject, co_lnotab), L->coLinetable);
#endif
#endif
}

/* The str state bits the reader decodes (kind, compact, ascii) agree with the header's macros. */
TEST(string_state_bits)
{
    static const char *const az[] = {"abc", "caf\xc3\xa9", "\xe5\x90\x8d", "\xf0\x9f\x98\x80"};
    size_t i;
    Py_InitializeEx(0);
    for (i = 0; i < sizeof az / sizeof az[0]; i++) {
        PyObject *p = PyUnicode_FromString(az[i]);
        unsigned st;
        ASSERT(p);
        memcpy(&st, (const char *)p + UNI_STATE, sizeof st);
        ASSERT_EQ((int)PyUnicode_KIND(p), (int)((st >> 2) & 7));
        ASSERT_EQ(1, (int)((st >> 5) & 1)); /* compact */
        ASSERT_EQ((int)PyUnicode_IS_ASCII(p), (int)((st >> 6) & 1));
        ASSERT_EQ((int)PyUnicode_GET_LENGTH(p), (int)rd_i64(p, UNI_LENGTH));
        ASSERT((const char *)PyUnicode_DATA(p) ==
               (const char *)p + (PyUnicode_IS_ASCII(p) ? table_entry()->uniAscii : table_entry()->uniCompact));
        Py_DECREF(p);
    }
    ASSERT_EQ(0, Py_FinalizeEx());
}

#else
TEST(offsets_match_headers)
{
    SKIP("the raw reader has no table for this CPython version");
}

TEST(string_state_bits)
{
    SKIP("the raw reader has no table for this CPython version");
}
#endif

VT_TEST_LIST(T(offsets_match_headers) T(string_state_bits))
