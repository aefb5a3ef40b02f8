/* Internal: read the calling thread's Python stack without the GIL, from CPython's structures directly. */
#ifndef VT_TRACER_PYFRAMES_RAW_H
#define VT_TRACER_PYFRAMES_RAW_H

/*
 * Why: PyTorch releases the GIL around every ATen operator, so a CUDA
 * allocation reaches the tracer on a thread that does not hold the GIL and the
 * C-API reader (pyframes.h) sees no Python frames. Taking the GIL there would
 * deadlock (the callback runs under PyTorch's allocator lock, which a thread
 * holding the GIL may be waiting for).
 *
 * How: the calling thread's own frame chain cannot change or be freed while
 * that thread runs our code (it is executing C code called from the innermost
 * frame), so it is read directly, like an out-of-process profiler does but for
 * the current thread only. No CPython function that allocates, raises or
 * touches a reference count is called; the only calls are
 * PyGILState_GetThisThreadState (a thread-local read) and Py_IsInitialized.
 *
 * Layouts: one table per CPython minor version, 3.9 to 3.13 (offsets checked
 * with offsetof against the headers of 3.9.18, 3.10.13, 3.11.7, 3.12.1 and
 * 3.13.0, for LP64 little-endian ABIs such as x86-64 and aarch64; off
 * elsewhere). The running version comes from
 * Py_Version (3.11+) or Py_GetVersion(). Before the table is trusted, the
 * running interpreter must confirm it: PyCode_Type.tp_basicsize,
 * PyUnicode_Type.tp_basicsize (and PyFrame_Type's before 3.11) must equal the
 * sizes the table implies. A debug (Py_TRACE_REFS) or free-threaded build, an
 * unknown version, or any mismatch leaves the raw reader off: it then yields
 * no frames and the caller keeps only the GIL path. VRAMTRACE_PYTHON_RAW=0 in
 * the environment (read at resolution) turns it off too.
 *
 * Every object reached is checked before it is used: code objects by ob_type
 * == &PyCode_Type, strings by &PyUnicode_Type (compact, ready), line tables by
 * &PyBytes_Type, 3.9/3.10 frame objects by &PyFrame_Type; pointers must be
 * non-NULL and aligned, lengths bounded, the walk stops at the depth limit and
 * at VT_PYRAW_MAX_WALK interpreter frames. A failed check ends the walk with
 * the frames read so far (or none), never a crash for a valid frame chain.
 *
 * Positions are reported exactly as the C-API path reports them: lasti is the
 * byte offset PyFrame_GetLasti would give (3.11+; -1 when unknown), or the
 * line PyFrame_GetLineNumber would give before 3.11 (f_lasti and the line
 * table, f_lineno when the frame is traced); vt__pyraw_code_line decodes the
 * line table as PyCode_Addr2Line does. Frames that PyEval_GetFrame and
 * PyFrame_GetBack hide are skipped too: 3.12+ shim frames owned by the C
 * stack and frames that have not reached their first traceable instruction.
 */
#include <stdint.h>

#define VT_PYRAW_MAX_WALK 4096 /* interpreter frames visited per capture, at most */
#define VT_PYRAW_CONFIRMATIONS 64 /* GIL-held captures cross-checked against the C API */

/* One Python frame read without the GIL. */
struct vt__pyraw_frame {
    const void *pCode; /* PyCodeObject *, alive while the capturing thread runs below its frame */
    uint32_t fp;       /* vt__pyraw_code_fp(pCode) */
    int lasti;         /* byte offset of the current instruction (3.11+), or -1 */
    int line;          /* line when lasti is -1 (0 if unknown), else 0 */
};

/*
 * Look up the raw reader's entry points and check the layout table against
 * the running interpreter, once; later calls answer from the first result.
 * Call only once vt__py_resolve() has found CPython. Returns 1 if the raw
 * reader is usable, 0 if not. Thread-safe, lock-free.
 */
int vt__pyraw_resolve(void);

/* CPython minor version the raw reader found (e.g. 0x030c), or 0 if none/unsupported. */
int vt__pyraw_version(void);

/*
 * Capture the calling thread's Python stack, innermost frame first, into
 * aFrame (at most nMax frames), whether or not the thread holds the GIL.
 * Returns the number of frames written: 0 when the raw reader is off, Python
 * is not initialized, or the thread has no Python thread state or frames.
 * Allocates nothing; takes no lock once resolved (vt__sites_open resolves it).
 */
int vt__pyraw_capture(struct vt__pyraw_frame *aFrame, int nMax);

/*
 * Cross-check: apCode[0..n) are the code objects the C API has just read on
 * the calling thread (GIL held, innermost first, all of its frames or the
 * first n). The raw reader reads the same stack; if it finds other code
 * objects, its layout is wrong for this interpreter and it is turned off for
 * the rest of the process. Only the first VT_PYRAW_CONFIRMATIONS calls with
 * frames compare anything; later ones return at once. Returns 1 when the raw
 * reader is (still) on, 0 when it is off.
 */
int vt__pyraw_confirm(const void *const *apCode, int n);

/* How many cross-checks agreed so far (at most VT_PYRAW_CONFIRMATIONS). */
int vt__pyraw_confirmed(void);

/*
 * A 32-bit fingerprint of a code object's identity (the addresses of its
 * co_filename and co_qualname/co_name and its co_firstlineno), never 0 for a
 * valid code object; 0 when the reader is off or pCode is not a code object.
 * Lets a cache keyed by code-object address notice that the address now
 * holds another function.
 */
uint32_t vt__pyraw_code_fp(const void *pCode);

/*
 * Names of a code object as vt__py_code_names gives them: *pzFile gets
 * co_filename and *pzFunction co_qualname (co_name before 3.11), both
 * malloc'd UTF-8 (the caller frees); a name that cannot be read becomes "?".
 * Needs no GIL but the code object must be alive (on the calling thread's
 * stack). Returns 0, or -ENOMEM (both outputs NULL), or -EINVAL when the
 * reader is off or pCode is not a code object.
 */
int vt__pyraw_code_names(const void *pCode, char **pzFile, char **pzFunction);

/*
 * Line of byte offset lasti in a code object, decoding its line table as
 * PyCode_Addr2Line does (co_firstlineno when lasti < 0), mapped to 0 when
 * there is none. Needs no GIL; the code object must be alive.
 */
int vt__pyraw_code_line(const void *pCode, int lasti);

#endif
