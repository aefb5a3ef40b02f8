/* Internal: readable C++ names: demangling (the C++ runtime's demangler, loaded on demand) and short names. */
#ifndef VT_ANALYZER_DEMANGLE_H
#define VT_ANALYZER_DEMANGLE_H

#include <stddef.h>

/*
 * The demangled form of a mangled C++ name (Itanium ABI, "_Z..."), as the C++ runtime's
 * __cxa_demangle writes it: "_Z5scaleIfEvPT_i" -> "void scale<float>(float*, int)".
 * The demangler is looked up in the process, else in libstdc++.so.6 (opened once, on the
 * first mangled name); the command itself never links a C++ runtime. Returns 1 with *pzOut
 * malloc'd, 0 when zName is not a mangled name, not valid, or no demangler is installed
 * (*pzOut NULL: show the name as stored), -1 when out of memory. Not thread-safe before the
 * first call returns.
 */
int vt__demangle(const char *zName, char **pzOut);

/*
 * The short name of a function name, demangled or not, like Nsight Systems' shortName: the
 * function's own name without return type, namespaces or classes, template arguments and
 * parameters ("void at::native::(anonymous namespace)::fill<float>(float*, int)" -> "fill").
 * Names it cannot take apart are returned whole. Writes at most nOut - 1 bytes and a NUL into
 * zOut (nOut > 0); returns the short name's full length.
 */
size_t vt__short_name(const char *zName, char *zOut, size_t nOut);

#endif
