/* Readable C++ names: demangling through the C++ runtime's __cxa_demangle, found at run time, and short names. */
#include "vramtrace/demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangle_fn)(const char *zMangled, char *zBuf, size_t *pnBuf, int *pStatus);

static demangle_fn g_xInProcess, g_xLoaded;
static pthread_once_t g_onceProcess = PTHREAD_ONCE_INIT, g_onceLoad = PTHREAD_ONCE_INIT;

/*
 * The process's own demangler: a C++ program or library (libstdc++, as in every PyTorch process)
 * has it, in the global scope or loaded privately (Python extension modules are RTLD_LOCAL): a
 * C++ runtime already loaded is found with RTLD_NOLOAD, which never loads one. Its handle is
 * kept (the demangler is used until exit).
 */
static void look_up_process(void)
{
    static const char *const azRuntime[] = {"libstdc++.so.6", "libc++abi.so.1"};
    g_xInProcess = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    for (size_t i = 0; !g_xInProcess && i < sizeof azRuntime / sizeof azRuntime[0]; i++) {
        void *pLib = dlopen(azRuntime[i], RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
        if (pLib) g_xInProcess = (demangle_fn)dlsym(pLib, "__cxa_demangle");
    }
}

/* The process's own, else libstdc++.so.6's, opened once and kept open until exit. */
static void look_up_load(void)
{
    pthread_once(&g_onceProcess, look_up_process);
    g_xLoaded = g_xInProcess;
    if (!g_xLoaded) {
        void *pLib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (pLib) g_xLoaded = (demangle_fn)dlsym(pLib, "__cxa_demangle");
    }
}

/* The C++ runtime's demangler where eWhere says, or NULL. */
static demangle_fn demangler(enum vt_demangle_where eWhere)
{
    if (eWhere == VT_DEMANGLE_LOAD) {
        pthread_once(&g_onceLoad, look_up_load);
        return g_xLoaded;
    }
    pthread_once(&g_onceProcess, look_up_process);
    return g_xInProcess;
}

int vt__demangle_available(enum vt_demangle_where eWhere)
{
    return demangler(eWhere) != NULL;
}

int vt__demangle(const char *zName, enum vt_demangle_where eWhere, char **pzOut)
{
    demangle_fn xDemangle;
    int status = 0;
    char *z;
    *pzOut = NULL;
    if (!zName || strncmp(zName, "_Z", 2) != 0) return VT_DEMANGLE_NOT;
    if (strnlen(zName, VT_DEMANGLE_MAX_NAME + 1) > VT_DEMANGLE_MAX_NAME || !(xDemangle = demangler(eWhere)))
        return VT_DEMANGLE_NONE;
    z = xDemangle(zName, NULL, NULL, &status);
    if (status == -1) return VT_DEMANGLE_NOMEM; /* the demangler ran out of memory */
    if (z && status == 0 && strnlen(z, VT_DEMANGLE_MAX_OUT + 1) > VT_DEMANGLE_MAX_OUT) {
        free(z);
        return VT_DEMANGLE_NONE;
    }
    if (!z || status != 0) {
        free(z);
        return VT_DEMANGLE_NOT;
    }
    *pzOut = z;
    return VT_DEMANGLE_OK;
}

/* The bracket that closes c ('<', '(', '[', '{'), or 0. */
static char closer(char c)
{
    return c == '<' ? '>' : c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : 0;
}

size_t vt__short_name(const char *zName, char *zOut, size_t nOut)
{
    static const char zAnon[] = "(anonymous namespace)";
    size_t n = strlen(zName), i, iEnd = n, iStart = 0, iCut, nShort;
    int depth = 0;
    /* the parameters: the first '(' outside brackets that is not "(anonymous namespace)" */
    for (i = 0; i < n; i++) {
        char c = zName[i];
        if (depth == 0 && c == '(' && strncmp(zName + i, zAnon, sizeof zAnon - 1) == 0) {
            i += sizeof zAnon - 2;
        } else if (depth == 0 && c == '(' && i > 0) {
            iEnd = i;
            break;
        } else if (closer(c)) {
            depth++;
        } else if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    /* the last component outside brackets: after the last "::" or space (the return type) */
    depth = 0;
    for (i = 0; i < iEnd; i++) {
        char c = zName[i];
        if (depth == 0 && c == '(' && strncmp(zName + i, zAnon, sizeof zAnon - 1) == 0) i += sizeof zAnon - 2;
        else if (closer(c)) depth++;
        else if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) depth--;
        else if (depth == 0 && c == ' ') iStart = i + 1;
        else if (depth == 0 && c == ':' && zName[i + 1] == ':') iStart = ++i + 1;
    }
    /* without its template arguments */
    for (iCut = iStart; iCut < iEnd && zName[iCut] != '<'; iCut++) {}
    if (iCut == iStart) iCut = iEnd; /* "operator<" and the like: keep it whole */
    if (iCut <= iStart) iStart = 0, iCut = n; /* nothing left: the name as it is */
    nShort = iCut - iStart;
    i = nShort < nOut ? nShort : nOut - 1;
    memcpy(zOut, zName + iStart, i);
    zOut[i] = 0;
    return nShort;
}
