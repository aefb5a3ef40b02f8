/* Readable C++ names: demangling through the C++ runtime's __cxa_demangle, loaded on demand, and short names. */
#include "demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangle_fn)(const char *zMangled, char *zBuf, size_t *pnBuf, int *pStatus);

static demangle_fn g_xDemangle;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Look the demangler up once (analyze reads several traces on several threads). */
static void look_up(void)
{
    g_xDemangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!g_xDemangle) {
        void *pLib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (pLib) g_xDemangle = (demangle_fn)dlsym(pLib, "__cxa_demangle"); /* kept open: used until exit */
    }
}

/* The C++ runtime's demangler: the process's own (a C++ program or library loaded it), else libstdc++'s. */
static demangle_fn demangler(void)
{
    pthread_once(&g_once, look_up);
    return g_xDemangle;
}

int vt__demangle(const char *zName, char **pzOut)
{
    demangle_fn xDemangle;
    int status = 0;
    char *z;
    *pzOut = NULL;
    if (!zName || strncmp(zName, "_Z", 2) != 0 || !(xDemangle = demangler())) return 0;
    z = xDemangle(zName, NULL, NULL, &status);
    if (status == -1) return -1; /* the demangler ran out of memory */
    if (!z || status != 0) {
        free(z);
        return 0;
    }
    *pzOut = z;
    return 1;
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
