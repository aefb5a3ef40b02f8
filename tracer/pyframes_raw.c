/* GIL-free Python stack reader: walks the calling thread's CPython frames through per-version layout tables. */
#include "pyframes_raw.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* How a version chains its frames and encodes its line table. */
enum { CHAIN_FRAMEOBJ = 1, CHAIN_CFRAME = 2, CHAIN_DIRECT = 3 };
enum { LINES_LNOTAB = 1, LINES_310 = 2, LINES_LOCATIONS = 3 };

/* Byte offsets of the fields read, for one CPython minor version (LP64 ABI). */
struct layout {
    int version;         /* 0x0309 .. 0x030d */
    int chain;           /* CHAIN_* */
    int lines;           /* LINES_* */
    int tsFrame;         /* PyThreadState: frame (3.9/3.10), cframe (3.11/3.12), current_frame (3.13) */
    int cfCurrent;       /* _PyCFrame.current_frame (3.11/3.12) */
    int ifCode;          /* _PyInterpreterFrame: f_code / f_executable */
    int ifPrevious;      /* _PyInterpreterFrame.previous */
    int ifInstr;         /* _PyInterpreterFrame: prev_instr / instr_ptr */
    int ifOwner;         /* _PyInterpreterFrame.owner (char) */
    int ownerCstack;     /* FRAME_OWNED_BY_CSTACK, or -1 when the version has none */
    int foBack, foCode, foLasti, foLineno, foTrace; /* PyFrameObject (3.9/3.10) */
    int foSize;          /* sizeof(PyFrameObject) (3.9/3.10) */
    int coFilename, coName, coQualname, coFirstlineno, coLinetable; /* PyCodeObject */
    int coFirstTraceable; /* _co_firsttraceable (int, 3.11+) */
    int coSize;          /* PyCode_Type.tp_basicsize: co_code_adaptive (3.11+) or sizeof */
    int uniAscii;        /* sizeof(PyASCIIObject): compact ASCII data follows */
    int uniCompact;      /* sizeof(PyCompactUnicodeObject): compact non-ASCII data follows */
    int uniSize;         /* sizeof(PyUnicodeObject) */
};

enum { OWNER_GENERATOR = 1 }; /* FRAME_OWNED_BY_GENERATOR, 3.11 to 3.13 */

static const struct layout aLayout[] = {
    {0x0309, CHAIN_FRAMEOBJ, LINES_LNOTAB, 24, -1, -1, -1, -1, -1, -1,
     24, 32, 104, 108, 80, 368, 104, 112, -1, 40, 120, -1, 176, 48, 72, 80},
    {0x030a, CHAIN_FRAMEOBJ, LINES_310, 24, -1, -1, -1, -1, -1, -1,
     24, 32, 96, 100, 72, 360, 104, 112, -1, 40, 120, -1, 176, 48, 72, 80},
    {0x030b, CHAIN_CFRAME, LINES_LOCATIONS, 56, 8, 32, 48, 56, 69, -1,
     -1, -1, -1, -1, -1, -1, 112, 120, 128, 72, 136, 168, 184, 48, 72, 80},
    {0x030c, CHAIN_CFRAME, LINES_LOCATIONS, 56, 0, 0, 8, 56, 70, 3,
     -1, -1, -1, -1, -1, -1, 112, 120, 128, 68, 136, 176, 192, 40, 56, 64},
    {0x030d, CHAIN_DIRECT, LINES_LOCATIONS, 72, -1, 0, 8, 56, 70, 3,
     -1, -1, -1, -1, -1, -1, 112, 120, 128, 68, 136, 184, 200, 40, 56, 64},
};

/* Fixed by the object header and PyTypeObject/PyBytesObject, the same in every version covered. */
#define OB_TYPE 8           /* PyObject.ob_type */
#define OB_SIZE 16          /* PyVarObject.ob_size */
#define TP_BASICSIZE 32     /* PyTypeObject.tp_basicsize */
#define BYTES_DATA 32       /* PyBytesObject.ob_sval */
#define UNI_LENGTH 16       /* PyASCIIObject.length */
#define UNI_STATE 32        /* PyASCIIObject.state */
#define MAX_STRING (1 << 16) /* longer names are not read */
#define MAX_TABLE (1 << 24)  /* longer line tables are not read */

enum { RAW_UNKNOWN = 0, RAW_ON = 1, RAW_OFF = 2 };

/*
 * Resolved once. Racing first callers store identical values, so every field
 * is an atomic word; `state` is published last with release order.
 */
static _Atomic int state;
static _Atomic(const struct layout *) pLayout;
static _Atomic uintptr_t xThisThreadState, xIsInitialized; /* function addresses */
static _Atomic uintptr_t pCodeType, pUnicodeType, pBytesType, pFrameType;
static _Atomic int nConfirm; /* cross-checks started (may pass VT_PYRAW_CONFIRMATIONS) */
static _Atomic int nAgreed;  /* cross-checks that agreed */

/* Read a pointer-sized word at p + off. */
static inline const void *rd_ptr(const void *p, int off)
{
    const void *v;
    memcpy(&v, (const char *)p + off, sizeof v);
    return v;
}

static inline int rd_int(const void *p, int off)
{
    int v;
    memcpy(&v, (const char *)p + off, sizeof v);
    return v;
}

static inline int64_t rd_i64(const void *p, int off)
{
    int64_t v;
    memcpy(&v, (const char *)p + off, sizeof v);
    return v;
}

/* Non-NULL and aligned for a pointer-sized read. */
static inline int plausible(const void *p)
{
    return p && ((uintptr_t)p & (sizeof(void *) - 1)) == 0;
}

/* 1 if p looks like an object whose ob_type is exactly pType. */
static inline int is_type(const void *p, uintptr_t pType)
{
    return plausible(p) && pType && (uintptr_t)rd_ptr(p, OB_TYPE) == pType;
}

/* Data address of symbol zName in the process, or 0. */
static uintptr_t sym(const char *zName)
{
    return (uintptr_t)dlsym(RTLD_DEFAULT, zName);
}

/* The running CPython's minor version as 0x03NN, or 0 if it cannot be told. */
static int running_version(void)
{
    uintptr_t pVersion = sym("Py_Version"); /* const unsigned long, 3.11+ */
    const char *(*xGetVersion)(void);
    const char *z;
    void *p;
    int major = 0, minor = 0;
    if (pVersion) {
        unsigned long v;
        memcpy(&v, (const void *)pVersion, sizeof v);
        return (int)((v >> 16) & 0xffff);
    }
    p = dlsym(RTLD_DEFAULT, "Py_GetVersion");
    if (!p) return 0;
    memcpy(&xGetVersion, &p, sizeof p);
    z = xGetVersion(); /* "3.10.13 (main, ...": formatted from build-time constants */
    while (*z >= '0' && *z <= '9') major = major * 10 + (*z++ - '0');
    if (*z++ != '.') return 0;
    while (*z >= '0' && *z <= '9') minor = minor * 10 + (*z++ - '0');
    return major > 0 && major < 256 && minor < 256 ? (major << 8 | minor) : 0;
}

/* tp_basicsize of the type object at pType. */
static int64_t basicsize(uintptr_t pType)
{
    return rd_i64((const void *)pType, TP_BASICSIZE);
}

/* Find the entry points and confirm the layout with the running interpreter. Returns RAW_ON or RAW_OFF. */
static int resolve_now(void)
{
    const struct layout *L = NULL;
    uintptr_t code = sym("PyCode_Type"), uni = sym("PyUnicode_Type"), bytes = sym("PyBytes_Type");
    uintptr_t frame = sym("PyFrame_Type"), xTs = sym("PyGILState_GetThisThreadState");
    uintptr_t xInit = sym("Py_IsInitialized");
    const char *zOff = getenv("VRAMTRACE_PYTHON_RAW");
    int v;
    size_t i;
    if (zOff && strcmp(zOff, "0") == 0) return RAW_OFF; /* the user's way out: GIL path only */
    /* The tables are for LP64 little-endian ABIs (the str state bit-field order depends on it). */
    if (sizeof(void *) != 8 || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) return RAW_OFF;
    v = running_version();
    for (i = 0; i < sizeof aLayout / sizeof aLayout[0]; i++)
        if (aLayout[i].version == v) L = &aLayout[i];
    if (!L || !code || !uni || !bytes || !xTs || !xInit) return RAW_OFF;
    /* The sizes the interpreter itself was built with must match the table's. */
    if (basicsize(code) != L->coSize || basicsize(uni) != L->uniSize) return RAW_OFF;
    if (L->chain == CHAIN_FRAMEOBJ && (!frame || basicsize(frame) != L->foSize)) return RAW_OFF;
    atomic_store_explicit(&pCodeType, code, memory_order_relaxed);
    atomic_store_explicit(&pUnicodeType, uni, memory_order_relaxed);
    atomic_store_explicit(&pBytesType, bytes, memory_order_relaxed);
    atomic_store_explicit(&pFrameType, frame, memory_order_relaxed);
    atomic_store_explicit(&xThisThreadState, xTs, memory_order_relaxed);
    atomic_store_explicit(&xIsInitialized, xInit, memory_order_relaxed);
    atomic_store_explicit(&pLayout, L, memory_order_relaxed);
    return RAW_ON;
}

int vt__pyraw_resolve(void)
{
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s == RAW_UNKNOWN) {
        s = resolve_now();
        atomic_store_explicit(&state, s, memory_order_release);
    }
    return s == RAW_ON;
}

int vt__pyraw_version(void)
{
    return vt__pyraw_resolve() ? atomic_load_explicit(&pLayout, memory_order_relaxed)->version : 0;
}

/* The layout when the reader is on (already resolved), else NULL. */
static inline const struct layout *layout_on(void)
{
    if (atomic_load_explicit(&state, memory_order_acquire) != RAW_ON) return NULL;
    return atomic_load_explicit(&pLayout, memory_order_relaxed);
}

/* Call a resolved function address of type void *(void) / int (void). */
static void *call_ptr(uintptr_t x)
{
    void *(*f)(void);
    void *p = (void *)x;
    memcpy(&f, &p, sizeof p);
    return f();
}

static int call_int(uintptr_t x)
{
    int (*f)(void);
    void *p = (void *)x;
    memcpy(&f, &p, sizeof p);
    return f();
}

/* Address of the first instruction of a code object (3.11+: co_code_adaptive). */
static inline uintptr_t code_start(const struct layout *L, const void *pCode)
{
    return (uintptr_t)pCode + (uintptr_t)L->coSize;
}

/*
 * Walk 3.11+ interpreter frames from pFrame. Returns the number written;
 * stops at a frame that fails a check.
 */
static int walk_interp(const struct layout *L, const void *pFrame, struct vt__pyraw_frame *aFrame,
                       int nMax)
{
    uintptr_t code = atomic_load_explicit(&pCodeType, memory_order_relaxed);
    int n = 0, nSeen = 0;
    while (pFrame && n < nMax && nSeen++ < VT_PYRAW_MAX_WALK) {
        const void *pCode;
        uintptr_t instr, start;
        int owner;
        if (!plausible(pFrame)) break;
        owner = *((const signed char *)pFrame + L->ifOwner);
        if (owner == L->ownerCstack) goto next; /* a shim frame of the C stack */
        pCode = rd_ptr(pFrame, L->ifCode);
        if (!is_type(pCode, code)) break;
        instr = (uintptr_t)rd_ptr(pFrame, L->ifInstr);
        start = code_start(L, pCode);
        /* Not started yet (before its first traceable instruction): hidden by the C API too. */
        if (owner != OWNER_GENERATOR &&
            instr < start + 2 * (uintptr_t)(unsigned)rd_int(pCode, L->coFirstTraceable))
            goto next;
        aFrame[n].pCode = pCode;
        aFrame[n].fp = vt__pyraw_code_fp(pCode);
        aFrame[n].lasti = instr >= start && instr - start < (uintptr_t)1 << 30 ? (int)(instr - start) & ~1 : -1;
        aFrame[n].line = 0;
        if (aFrame[n].lasti < 0) aFrame[n].line = vt__pyraw_code_line(pCode, -1);
        n++;
    next:
        pFrame = rd_ptr(pFrame, L->ifPrevious);
    }
    return n;
}

/* Walk 3.9/3.10 frame objects from pFrame (f_back chain). Returns the number written. */
static int walk_frameobj(const struct layout *L, const void *pFrame, struct vt__pyraw_frame *aFrame,
                         int nMax)
{
    uintptr_t code = atomic_load_explicit(&pCodeType, memory_order_relaxed);
    uintptr_t frame = atomic_load_explicit(&pFrameType, memory_order_relaxed);
    int n = 0;
    while (pFrame && n < nMax) {
        const void *pCode;
        int lasti, line;
        if (!is_type(pFrame, frame)) break;
        pCode = rd_ptr(pFrame, L->foCode);
        if (!is_type(pCode, code)) break;
        lasti = rd_int(pFrame, L->foLasti);
        line = rd_int(pFrame, L->foLineno);
        /* PyFrame_GetLineNumber: f_lineno while traced (3.9: f_trace set; 3.10: f_lineno set). */
        if (L->version == 0x0309 ? rd_ptr(pFrame, L->foTrace) == NULL : line == 0)
            line = vt__pyraw_code_line(pCode, L->version == 0x030a ? lasti * 2 : lasti);
        aFrame[n].pCode = pCode;
        aFrame[n].fp = vt__pyraw_code_fp(pCode);
        aFrame[n].lasti = -1;
        aFrame[n].line = line < 0 ? 0 : line;
        n++;
        pFrame = rd_ptr(pFrame, L->foBack);
    }
    return n;
}

int vt__pyraw_capture(struct vt__pyraw_frame *aFrame, int nMax)
{
    const struct layout *L;
    const void *pTs, *pFrame;
    if (nMax <= 0 || !vt__pyraw_resolve()) return 0;
    L = atomic_load_explicit(&pLayout, memory_order_relaxed);
    if (!call_int(atomic_load_explicit(&xIsInitialized, memory_order_relaxed))) return 0;
    pTs = call_ptr(atomic_load_explicit(&xThisThreadState, memory_order_relaxed));
    if (!plausible(pTs)) return 0;
    pFrame = rd_ptr(pTs, L->tsFrame);
    if (L->chain == CHAIN_FRAMEOBJ) return walk_frameobj(L, pFrame, aFrame, nMax);
    if (L->chain == CHAIN_CFRAME) {
        if (!plausible(pFrame)) return 0;
        pFrame = rd_ptr(pFrame, L->cfCurrent);
    }
    return walk_interp(L, pFrame, aFrame, nMax);
}

int vt__pyraw_confirm(const void *const *apCode, int n)
{
    struct vt__pyraw_frame aFrame[64];
    int nRaw, i, bSame;
    if (!layout_on()) return 0;
    if (n <= 0 || atomic_load_explicit(&nConfirm, memory_order_relaxed) >= VT_PYRAW_CONFIRMATIONS)
        return 1;
    if (atomic_fetch_add_explicit(&nConfirm, 1, memory_order_relaxed) >= VT_PYRAW_CONFIRMATIONS)
        return 1;
    if (n > 64) n = 64;
    nRaw = vt__pyraw_capture(aFrame, n);
    bSame = nRaw == n;
    for (i = 0; bSame && i < n; i++) bSame = aFrame[i].pCode == apCode[i];
    if (!bSame) {
        atomic_store_explicit(&state, RAW_OFF, memory_order_release);
        return 0;
    }
    atomic_fetch_add_explicit(&nAgreed, 1, memory_order_relaxed);
    return 1;
}

int vt__pyraw_confirmed(void)
{
    return atomic_load_explicit(&nAgreed, memory_order_relaxed);
}

uint32_t vt__pyraw_code_fp(const void *pCode)
{
    const struct layout *L = layout_on();
    uint64_t h;
    if (!L || !is_type(pCode, atomic_load_explicit(&pCodeType, memory_order_relaxed))) return 0;
    h = (uint64_t)(uintptr_t)rd_ptr(pCode, L->coFilename) * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(uintptr_t)rd_ptr(pCode, L->coQualname >= 0 ? L->coQualname : L->coName);
    h *= 0xff51afd7ed558ccdull;
    h ^= (uint64_t)(uint32_t)rd_int(pCode, L->coFirstlineno);
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 32;
    return (uint32_t)h ? (uint32_t)h : 1u;
}

/* Append code point c as UTF-8 to z at *pn. */
static void put_utf8(char *z, size_t *pn, uint32_t c)
{
    size_t n = *pn;
    if (c < 0x80) {
        z[n++] = (char)c;
    } else if (c < 0x800) {
        z[n++] = (char)(0xc0 | (c >> 6));
        z[n++] = (char)(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        z[n++] = (char)(0xe0 | (c >> 12));
        z[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
        z[n++] = (char)(0x80 | (c & 0x3f));
    } else {
        z[n++] = (char)(0xf0 | (c >> 18));
        z[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
        z[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
        z[n++] = (char)(0x80 | (c & 0x3f));
    }
    *pn = n;
}

/*
 * A str object's text as malloc'd UTF-8, read from its compact representation.
 * Returns NULL (with *pbNoMem set when out of memory) when pStr is not a
 * compact, ready str, is too long, or holds a lone surrogate (which
 * PyUnicode_AsUTF8 refuses too).
 */
static char *read_str(const struct layout *L, const void *pStr, int *pbNoMem)
{
    const char *pData;
    char *z;
    unsigned st;
    int64_t len;
    int kind;
    size_t n = 0, i;
    if (!is_type(pStr, atomic_load_explicit(&pUnicodeType, memory_order_relaxed))) return NULL;
    len = rd_i64(pStr, UNI_LENGTH);
    st = (unsigned)rd_int(pStr, UNI_STATE);
    kind = (int)((st >> 2) & 7);
    if (!((st >> 5) & 1) || len < 0 || len > MAX_STRING) return NULL; /* not compact */
    if ((st >> 6) & 1) { /* compact ASCII: the characters follow PyASCIIObject */
        if (kind != 1) return NULL;
        z = malloc((size_t)len + 1);
        if (!z) goto nomem;
        memcpy(z, (const char *)pStr + L->uniAscii, (size_t)len);
        z[len] = '\0';
        return z;
    }
    if (kind != 1 && kind != 2 && kind != 4) return NULL;
    pData = (const char *)pStr + L->uniCompact;
    z = malloc((size_t)len * 4 + 1);
    if (!z) goto nomem;
    for (i = 0; i < (size_t)len; i++) {
        uint32_t c;
        if (kind == 1) {
            c = (unsigned char)pData[i];
        } else if (kind == 2) {
            uint16_t u;
            memcpy(&u, pData + 2 * i, 2);
            c = u;
        } else {
            memcpy(&c, pData + 4 * i, 4);
        }
        if ((c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff) {
            free(z);
            return NULL;
        }
        put_utf8(z, &n, c);
    }
    z[n] = '\0';
    return z;
nomem:
    *pbNoMem = 1;
    return NULL;
}

int vt__pyraw_code_names(const void *pCode, char **pzFile, char **pzFunction)
{
    const struct layout *L = layout_on();
    char *zFile = NULL, *zFunction = NULL;
    int bNoMem = 0, rc = 0;
    *pzFile = *pzFunction = NULL;
    if (!L || !is_type(pCode, atomic_load_explicit(&pCodeType, memory_order_relaxed))) return -EINVAL;
    zFile = read_str(L, rd_ptr(pCode, L->coFilename), &bNoMem);
    if (L->coQualname >= 0) zFunction = read_str(L, rd_ptr(pCode, L->coQualname), &bNoMem);
    if (!zFunction) zFunction = read_str(L, rd_ptr(pCode, L->coName), &bNoMem);
    if (!zFile && !bNoMem) zFile = strdup("?");
    if (!zFunction && !bNoMem) zFunction = strdup("?");
    if (bNoMem || !zFile || !zFunction) {
        free(zFile);
        free(zFunction);
        rc = -ENOMEM;
    } else {
        *pzFile = zFile;
        *pzFunction = zFunction;
    }
    return rc;
}

/* Unsigned varint of the 3.11+ location table (6 bits a byte, 0x40 = more). *pp advances. */
static unsigned loc_varint(const uint8_t **pp, const uint8_t *pEnd)
{
    const uint8_t *p = *pp;
    unsigned v = 0, shift = 0, b;
    do {
        if (p >= pEnd || shift > 24) break;
        b = *p++;
        v |= (b & 63u) << shift;
        shift += 6;
    } while (b & 64);
    *pp = p;
    return v;
}

/* Line of byte offset lasti in a 3.11+ location table starting at line first (-1: none). */
static int lines_locations(const uint8_t *p, const uint8_t *pEnd, int first, int lasti)
{
    int computed = first, end = 0;
    while (p < pEnd) {
        unsigned b = *p, code = (b >> 3) & 15;
        int start = end, line;
        const uint8_t *q = p + 1;
        if (code == 13 || code == 14) { /* no columns / long form: signed varint line delta */
            unsigned u = loc_varint(&q, pEnd);
            computed += (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
        } else if (code == 11 || code == 12) { /* one-line forms 1 and 2 */
            computed += (int)code - 10;
        }
        line = code == 15 ? -1 : computed;
        end += (int)((b & 7) + 1) * 2;
        if (start <= lasti && lasti < end) return line;
        do p++; while (p < pEnd && !(*p & 128));
    }
    return -1;
}

/* Line of byte offset lasti in a 3.10 line table (address delta, line delta pairs; -128: none). */
static int lines_310(const uint8_t *p, const uint8_t *pEnd, int first, int lasti)
{
    int computed = first, start = -1, end = 0, line = -1;
    while (end <= lasti) {
        if (pEnd - p < 2) return -1;
        do { /* ranges of zero length are passed over */
            int ldelta = (signed char)p[1];
            start = end;
            end += p[0];
            p += 2;
            if (ldelta == -128) {
                line = -1;
            } else {
                computed += ldelta;
                line = computed;
            }
        } while (start == end && pEnd - p >= 2);
    }
    return line;
}

/* Line of byte offset lasti in a 3.9 lnotab. */
static int lines_lnotab(const uint8_t *p, const uint8_t *pEnd, int first, int lasti)
{
    int line = first, addr = 0;
    while (pEnd - p >= 2) {
        addr += p[0];
        if (addr > lasti) break;
        line += (signed char)p[1];
        p += 2;
    }
    return line;
}

int vt__pyraw_code_line(const void *pCode, int lasti)
{
    const struct layout *L = layout_on();
    const void *pTable;
    const uint8_t *p;
    int64_t len;
    int first, line;
    if (!L || !is_type(pCode, atomic_load_explicit(&pCodeType, memory_order_relaxed))) return 0;
    first = rd_int(pCode, L->coFirstlineno);
    if (lasti < 0 && L->lines != LINES_LNOTAB) return first < 0 ? 0 : first;
    pTable = rd_ptr(pCode, L->coLinetable);
    if (!is_type(pTable, atomic_load_explicit(&pBytesType, memory_order_relaxed))) return 0;
    len = rd_i64(pTable, OB_SIZE);
    if (len < 0 || len > MAX_TABLE) return 0;
    p = (const uint8_t *)pTable + BYTES_DATA;
    if (L->lines == LINES_LOCATIONS) line = lines_locations(p, p + len, first, lasti);
    else if (L->lines == LINES_310) line = lines_310(p, p + len, first, lasti);
    else line = lines_lnotab(p, p + len, first, lasti);
    return line < 0 ? 0 : line;
}
