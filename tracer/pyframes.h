/* Internal: read the Python stack of the calling thread through the CPython C API found at run time. */
#ifndef VT_TRACER_PYFRAMES_H
#define VT_TRACER_PYFRAMES_H

/*
 * No build-time dependency on Python: every entry point is looked up with
 * dlsym(RTLD_DEFAULT) in whatever the process has loaded. Only functions that
 * are exported, documented and unchanged from CPython 3.9 to 3.13 are used:
 *
 *   Py_IsInitialized, PyGILState_Check, PyEval_GetFrame (borrowed),
 *   PyFrame_GetBack (new reference, 3.9+), PyFrame_GetCode (new reference,
 *   3.9+), PyFrame_GetLineNumber, PyCode_Addr2Line, PyObject_GetAttrString,
 *   PyUnicode_AsUTF8,
 *   Py_IncRef, Py_DecRef, PyErr_Fetch, PyErr_Restore, PyErr_Clear; and, when
 *   present, PyThreadState_GetUnchecked (3.13) or _PyThreadState_UncheckedGet
 *   (3.9-3.12) as an extra "a thread state is attached" check, and
 *   PyFrame_GetLasti (3.11+) for cheap line lookups.
 *
 * A process without Python (or with CPython older than 3.9, which lacks
 * PyFrame_GetCode) simply yields no Python frames. Frames are read only when
 * the interpreter is initialized, the calling thread has a thread state, and
 * PyGILState_Check() says that thread holds the GIL: code that never holds the
 * GIL (a CUDA callback on a driver thread, C++ code after releasing the GIL)
 * gets no Python frames and never touches the interpreter.
 *
 * Libraries loaded after the first lookup are noticed: while CPython has not
 * been found, the lookup is retried every VT_PY_RETRY captures.
 */

#define VT_PY_RETRY 4096

/*
 * One Python frame as captured: the code object (borrowed) and where it is.
 * On 3.11+ the position is the byte offset of the current instruction
 * (PyFrame_GetLasti) and the line is left for vt__py_code_line, which the
 * caller can cache per (code, offset): PyFrame_GetLineNumber scans the code's
 * line table from its start, so its cost grows with the line's position in the
 * function (tens of µs deep inside a long module). Before 3.11 lasti is -1 and
 * line comes from PyFrame_GetLineNumber.
 */
struct vt__pyframe {
    const void *pCode; /* PyCodeObject *, valid while the GIL is held and the frame runs */
    int lasti;         /* byte offset of the current instruction, or -1 */
    int line;          /* line when lasti is -1 (0 if unknown); 0 otherwise */
};

/*
 * Look up the CPython entry points if not done yet. Returns 1 if a usable
 * CPython (3.9 or newer) is in the process, 0 if not. Thread-safe.
 */
int vt__py_resolve(void);

/*
 * Capture the calling thread's Python stack, innermost frame first, into
 * aFrame (at most nMax frames). Returns the number of frames written: 0 when
 * Python is absent, not initialized, or this thread does not hold the GIL.
 * Leaves the interpreter's error indicator and reference counts as it found
 * them.
 */
int vt__py_capture(struct vt__pyframe *aFrame, int nMax);

/*
 * Names of a code object returned by vt__py_capture in the same, still
 * GIL-holding call: *pzFile gets co_filename and *pzFunction co_qualname
 * (co_name before 3.11), both malloc'd (the caller frees). A name that cannot
 * be read becomes "?". Returns 0, or -ENOMEM (both outputs NULL). Must be
 * called with the GIL held (that is, only after vt__py_capture returned frames
 * and before returning to the caller's caller).
 */
int vt__py_code_names(const void *pCode, char **pzFile, char **pzFunction);

/* Line of byte offset lasti in a code object (PyCode_Addr2Line). GIL held. */
int vt__py_code_line(const void *pCode, int lasti);

/* Returns 1 if CPython is initialized and the calling thread holds its GIL, else 0. */
int vt__py_holds_gil(void);

/* fork() support: hold the lookup lock (prepare), release it (parent), re-initialize it (child). */
void vt__py_fork_prepare(void);
void vt__py_fork_parent(void);
void vt__py_fork_child(void);

/* Take (1) or drop (-1) a strong reference to a code object. GIL held. */
void vt__py_code_ref(const void *pCode, int delta);

#endif
