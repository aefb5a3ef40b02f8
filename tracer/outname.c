/* Trace file names: expanding and checking the output pattern (%p, %r, %h, %%). */
#include "vramtrace/outname.h"

#include <string.h>

const char *vt__outname_bad_escape(const char *zPattern)
{
    for (const char *p = zPattern; *p; p++) {
        if (*p != '%') continue;
        if (p[1] != 'p' && p[1] != 'r' && p[1] != 'h' && p[1] != '%') return p;
        p++;
    }
    return NULL;
}

/* Append z[0..n) to zOut (size nOut, length *pLen), escaping glob metacharacters when bGlob; 0 or -1 (full). */
static int put(char *zOut, size_t nOut, size_t *pLen, const char *z, size_t n, int bGlob)
{
    for (size_t i = 0; i < n; i++) {
        int bEsc = bGlob && strchr("*?[]\\", z[i]) != NULL;
        if (*pLen + (size_t)bEsc + 1 >= nOut) return -1;
        if (bEsc) zOut[(*pLen)++] = '\\';
        zOut[(*pLen)++] = z[i];
    }
    zOut[*pLen] = '\0';
    return 0;
}

int vt__outname_expand(const char *zPattern, const char *const azVal[3], int bGlob, char *zOut, size_t nOut)
{
    size_t n = 0;
    int rc = 0;
    if (nOut == 0) return -2;
    zOut[0] = '\0';
    if (!zPattern[0] || vt__outname_bad_escape(zPattern)) return -1;
    for (const char *p = zPattern; *p && rc == 0; p++) {
        const char *zVal;
        if (*p != '%') {
            rc = put(zOut, nOut, &n, p, 1, bGlob);
            continue;
        }
        switch (*++p) {
        case 'p': zVal = azVal[0]; break;
        case 'r': zVal = azVal[1]; break;
        case 'h': zVal = azVal[2]; break;
        default: rc = put(zOut, nOut, &n, "%", 1, 0); continue;
        }
        rc = put(zOut, nOut, &n, zVal, strlen(zVal), 0);
    }
    if (rc == 0) return 0;
    zOut[0] = '\0';
    return -2;
}
