/* Readable C++ names, shared by both halves: demangling (the C++ runtime's demangler, found at run time) and short names. */
#ifndef VRAMTRACE_DEMANGLE_H
#define VRAMTRACE_DEMANGLE_H

#include <stddef.h>

/*
 * The tracer writes kernel_name rows in its writer thread; the analyzer fills the ones a trace
 * lacks. One implementation for both (tracer/demangle.c, library vttrace); neither links a C++
 * runtime: __cxa_demangle is looked up with dlsym.
 */

/* Longest name handed to the demangler: its stack use and time grow with the name (a hostile
 * name must not take the host process down); longer names are not demangled. */
#define VT_DEMANGLE_MAX_NAME 4096
/* Longest demangled form kept: substitutions can make it much longer than the mangled name. */
#define VT_DEMANGLE_MAX_OUT 65536

/* Where the demangler is looked for (vt__demangle's eWhere). */
enum vt_demangle_where {
    VT_DEMANGLE_PROCESS = 0, /* only in a C++ runtime the process has loaded (the tracer: never loads one) */
    VT_DEMANGLE_LOAD = 1     /* in the process, else in libstdc++.so.6, opened once (the command) */
};

/* vt__demangle's results. */
#define VT_DEMANGLE_OK 1        /* *pzOut: the demangled form */
#define VT_DEMANGLE_NOT 0       /* not a mangled name, or not a valid one: show it as stored */
#define VT_DEMANGLE_NOMEM (-1)  /* out of memory */
#define VT_DEMANGLE_NONE (-2)   /* a mangled name not tried: no demangler, or longer than the bounds */

/*
 * The demangled form of a mangled C++ name (Itanium ABI, "_Z..."), as the C++ runtime's
 * __cxa_demangle writes it: "_Z5scaleIfEvPT_i" -> "void scale<float>(float*, int)".
 * Returns VT_DEMANGLE_OK with *pzOut malloc'd, else one of the other results above with *pzOut
 * NULL. Thread-safe (the lookup is done once per eWhere).
 */
int vt__demangle(const char *zName, enum vt_demangle_where eWhere, char **pzOut);

/* Whether a demangler is found where eWhere says (looking it up if not done yet). */
int vt__demangle_available(enum vt_demangle_where eWhere);

/*
 * The short name of a function name, demangled or not, like Nsight Systems' shortName: the
 * function's own name without return type, namespaces or classes, template arguments and
 * parameters ("void at::native::(anonymous namespace)::fill<float>(float*, int)" -> "fill").
 * Names it cannot take apart are returned whole. Writes at most nOut - 1 bytes and a NUL into
 * zOut (nOut > 0); returns the short name's full length.
 */
size_t vt__short_name(const char *zName, char *zOut, size_t nOut);

#endif
