/* The streaming JSON reader: a pull tokenizer with an explicit nesting stack, and one value at a time as a tree. */
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE (1 << 20)

enum state { S_VALUE, S_VALUE_OR_END, S_KEY_OR_END, S_KEY, S_COLON, S_AFTER, S_DONE };

struct vt_js {
    struct vt__src *in;
    uint8_t *aBuf;
    size_t iPos, nBuf;
    int64_t nBase; /* input offset of aBuf[0] */
    int bEof;
    int64_t nLine;
    int state;
    char aNest[VT_JS_DEPTH_MAX]; /* '{' or '[' per open container */
    int nNest;
    char *zStr; /* the last string or key */
    size_t nStr, nStrAlloc;
    double num;
    int64_t numI;
    int bNumInt; /* 1: an integer that fits int64 (numI); 2: one in [2^63, 2^64) (numI holds its 64-bit pattern) */
    char zErr[200];
};

static int fail(struct vt_js *j, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct vt_js *j, const char *zFmt, ...)
{
    va_list ap;
    char z[140];
    if (j->zErr[0]) return VT_JS_ERROR;
    va_start(ap, zFmt);
    vsnprintf(z, sizeof z, zFmt, ap);
    va_end(ap);
    snprintf(j->zErr, sizeof j->zErr, "%s (line %lld, byte %lld)", z, (long long)j->nLine,
             (long long)(j->nBase + (int64_t)j->iPos));
    j->state = S_DONE;
    return VT_JS_ERROR;
}

/* Refill so that at least one byte is available. Returns 1, 0 at the end, VT_JS_ERROR on a read error. */
static int fill(struct vt_js *j)
{
    long k;
    if (j->iPos < j->nBuf) return 1;
    if (j->bEof) return 0;
    j->nBase += (int64_t)j->nBuf;
    j->iPos = j->nBuf = 0;
    k = vt__src_read(j->in, j->aBuf, BUF_SIZE);
    if (k < 0) return fail(j, "cannot read input: %s", j->in->zErr);
    if (k == 0) {
        j->bEof = 1;
        return 0;
    }
    j->nBuf = (size_t)k;
    j->aBuf[k] = 0; /* a sentinel: no byte the scans below look for */
    return 1;
}

/* The next byte without consuming it, -1 at the end, VT_JS_ERROR (-2 below -1) on a read error. */
static int peek(struct vt_js *j)
{
    int r = fill(j);
    if (r == 1) return j->aBuf[j->iPos];
    return r == 0 ? -1 : -2;
}

/* skip_ws's loop: whitespace across buffer refills. */
static int skip_ws_slow(struct vt_js *j)
{
    for (;;) {
        while (j->iPos < j->nBuf) {
            uint8_t c = j->aBuf[j->iPos];
            if (c == '\n') j->nLine++;
            else if (c != ' ' && c != '\t' && c != '\r') return c;
            j->iPos++;
        }
        int r = fill(j);
        if (r != 1) return r == 0 ? -1 : -2;
    }
}

/* Skip whitespace; returns the next byte (not consumed), -1 at the end, -2 on a read error. The common
 * cases (no whitespace, or one space) without a call. */
static inline int skip_ws(struct vt_js *j)
{
    size_t i = j->iPos;
    if (i < j->nBuf && j->aBuf[i] > ' ') return j->aBuf[i];
    if (i + 1 < j->nBuf && j->aBuf[i] == ' ' && j->aBuf[i + 1] > ' ') {
        j->iPos = i + 1;
        return j->aBuf[i + 1];
    }
    return skip_ws_slow(j);
}

/*
 * The common form of a separator: sep at the read position, then no whitespace or one space,
 * then a byte that is not whitespace, all in the buffer. Consumes sep and the space and returns
 * that byte (not consumed), as skip_ws would after sep; -3, consuming nothing, for any other form.
 */
static inline int after_sep(struct vt_js *j, uint8_t sep)
{
    size_t i = j->iPos;
    const uint8_t *b = j->aBuf;
    if (i + 2 >= j->nBuf || b[i] != sep) return -3;
    if (b[i + 1] > ' ') {
        j->iPos = i + 1;
        return b[i + 1];
    }
    if (b[i + 1] == ' ' && b[i + 2] > ' ') {
        j->iPos = i + 2;
        return b[i + 2];
    }
    return -3;
}

/* Where a string's bytes go: the tokenizer's buffer, or a tree's text (offsets must fit 32 bits). */
struct sink {
    char **pz;
    size_t *pn, *pnAlloc; /* bytes used (the string is appended there), bytes allocated */
    size_t nStart;        /* where this string began */
    size_t nMax;          /* bound on *pn */
};

/* Append n bytes to sink k, within its bounds. Returns 0 or VT_JS_ERROR. */
static int str_append(struct vt_js *j, struct sink *k, const void *p, size_t n)
{
    size_t need = *k->pn + n + 1;
    if (need - k->nStart > VT_JS_STR_MAX) return fail(j, "string longer than %d bytes", VT_JS_STR_MAX);
    if (need > k->nMax) return fail(j, "a value with too much text");
    if (need > *k->pnAlloc) {
        size_t want = *k->pnAlloc ? *k->pnAlloc : 256;
        char *z;
        while (want < need) want *= 2;
        z = realloc(*k->pz, want);
        if (!z) return fail(j, "out of memory");
        *k->pz = z;
        *k->pnAlloc = want;
    }
    memcpy(*k->pz + *k->pn, p, n);
    *k->pn += n;
    return 0;
}

/* Four hex digits of a \u escape into *pu. Returns 0 or VT_JS_ERROR. */
static int hex4(struct vt_js *j, unsigned *pu)
{
    unsigned u = 0;
    for (int i = 0; i < 4; i++) {
        int c = peek(j);
        if (c < 0) return c == -2 ? VT_JS_ERROR : fail(j, "truncated: input ends inside a string");
        j->iPos++;
        if (c >= '0' && c <= '9') u = u * 16 + (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') u = u * 16 + (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') u = u * 16 + (unsigned)(c - 'A' + 10);
        else return fail(j, "bad \\u escape in a string");
    }
    *pu = u;
    return 0;
}

/* The first '"' or '\\' in [p, e), or e: eight bytes per step (a zero byte of x ^ c marks a c). */
static inline const uint8_t *quote_or_backslash(const uint8_t *p, const uint8_t *e)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    for (; e - p >= 8; p += 8) {
        uint64_t x, q, s, m;
        memcpy(&x, p, 8);
        q = x ^ (ones * '"');
        s = x ^ (ones * '\\');
        m = ((q - ones) & ~q & highs) | ((s - ones) & ~s & highs);
        if (m) return p + (__builtin_ctzll(m) >> 3); /* the lowest flag is exact (little-endian) */
    }
#endif
    while (p < e && *p != '"' && *p != '\\') p++;
    return p;
}

static int read_into_slow(struct vt_js *j, struct sink *k);

/*
 * Read a string body (the opening quote consumed), appending it and a NUL to k. Returns 0 or
 * VT_JS_ERROR. Inline for the common case: the whole string in the buffer, without escapes,
 * into room already there; anything else goes to read_into_slow.
 */
static inline __attribute__((always_inline)) int read_into(struct vt_js *j, struct sink *k)
{
    /* the sink's fields in locals: the copy's char stores could otherwise alias them */
    char *z = *k->pz;
    size_t nz = *k->pn, nAlloc = *k->pnAlloc, iPos = j->iPos, nBuf = j->nBuf;
    const uint8_t *b = j->aBuf, *p = quote_or_backslash(b + iPos, b + nBuf);
    k->nStart = nz;
    if (p < b + nBuf && *p == '"') {
        size_t n = (size_t)(p - (b + iPos)), nWide = (n + 16) & ~(size_t)15;
        if (nz + n + 1 <= nAlloc && n + 2 <= VT_JS_STR_MAX && nz + n + 2 <= k->nMax) {
            /* sixteen bytes at a time where both sides have room (bytes past the NUL are free) */
            if (nz + nWide <= nAlloc && iPos + nWide <= nBuf)
                for (size_t i = 0; i < n; i += 16) memcpy(z + nz + i, b + iPos + i, 16);
            else
                memcpy(z + nz, b + iPos, n);
            z[nz + n] = 0;
            *k->pn = nz + n + 1;
            j->iPos = iPos + n + 1;
            return 0;
        }
    }
    return read_into_slow(j, k);
}

/* read_into's general path: escapes, strings across buffer refills, growing the sink. */
static int read_into_slow(struct vt_js *j, struct sink *k)
{
    for (;;) {
        size_t i = j->iPos;
        const uint8_t *b = j->aBuf, *q = memchr(b + i, '"', j->nBuf - i), *e;
        /* the span up to the closing quote (or the buffer's end), cut at its first backslash */
        i = q ? (size_t)(q - b) : j->nBuf;
        if ((e = memchr(b + j->iPos, '\\', i - j->iPos)) != NULL) i = (size_t)(e - b);
        if (i > j->iPos && str_append(j, k, b + j->iPos, i - j->iPos)) return VT_JS_ERROR;
        j->iPos = i;
        if (i == j->nBuf) {
            int r = fill(j);
            if (r == 1) continue;
            return r == 0 ? fail(j, "truncated: input ends inside a string") : VT_JS_ERROR;
        }
        j->iPos++;
        if (b[i] == '"') break;
        /* an escape */
        int c = peek(j);
        char out[4];
        size_t nOut = 1;
        if (c < 0) return c == -2 ? VT_JS_ERROR : fail(j, "truncated: input ends inside a string");
        j->iPos++;
        switch (c) {
        case '"': case '\\': case '/': out[0] = (char)c; break;
        case 'b': out[0] = '\b'; break;
        case 'f': out[0] = '\f'; break;
        case 'n': out[0] = '\n'; break;
        case 'r': out[0] = '\r'; break;
        case 't': out[0] = '\t'; break;
        case 'u': {
            unsigned u, lo;
            if (hex4(j, &u)) return VT_JS_ERROR;
            if (u >= 0xd800 && u < 0xdc00) { /* a surrogate pair, or U+FFFD for a lone half */
                if (peek(j) == '\\' && j->iPos + 1 < j->nBuf && j->aBuf[j->iPos + 1] == 'u') {
                    j->iPos += 2;
                    if (hex4(j, &lo)) return VT_JS_ERROR;
                    u = lo >= 0xdc00 && lo < 0xe000 ? 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00) : 0xfffd;
                } else {
                    u = 0xfffd;
                }
            } else if (u >= 0xdc00 && u < 0xe000) {
                u = 0xfffd;
            }
            if (u < 0x80) out[0] = (char)u;
            else if (u < 0x800) {
                out[0] = (char)(0xc0 | u >> 6);
                out[1] = (char)(0x80 | (u & 0x3f));
                nOut = 2;
            } else if (u < 0x10000) {
                out[0] = (char)(0xe0 | u >> 12);
                out[1] = (char)(0x80 | (u >> 6 & 0x3f));
                out[2] = (char)(0x80 | (u & 0x3f));
                nOut = 3;
            } else {
                out[0] = (char)(0xf0 | u >> 18);
                out[1] = (char)(0x80 | (u >> 12 & 0x3f));
                out[2] = (char)(0x80 | (u >> 6 & 0x3f));
                out[3] = (char)(0x80 | (u & 0x3f));
                nOut = 4;
            }
            break;
        }
        default: return fail(j, "bad escape '\\%c' in a string", c);
        }
        if (str_append(j, k, out, nOut)) return VT_JS_ERROR;
    }
    if (str_append(j, k, "", 1)) return VT_JS_ERROR; /* the NUL */
    return 0;
}

/* Read a string body into the tokenizer's buffer (zStr, nStr without the NUL). */
static int read_string(struct vt_js *j)
{
    size_t n = 0;
    struct sink k = {&j->zStr, &n, &j->nStrAlloc, 0, (size_t)VT_JS_STR_MAX + 2};
    int rc = read_into(j, &k);
    j->nStr = n ? n - 1 : 0;
    return rc;
}

/* Consume the literal z (its first byte already checked). Returns 0 or VT_JS_ERROR. */
static int literal(struct vt_js *j, const char *z)
{
    for (; *z; z++) {
        int c = peek(j);
        if (c == -2) return VT_JS_ERROR;
        if (c != (unsigned char)*z)
            return c < 0 ? fail(j, "truncated: input ends inside a literal") : fail(j, "invalid literal");
        j->iPos++;
    }
    return 0;
}

/* Read a number (or NaN / Infinity / -Infinity). Returns 0 or VT_JS_ERROR. */
static int read_number_slow(struct vt_js *j);

/*
 * The decimal digits at p appended to m (mod 2^64), eight at a time while eight are there, then
 * one by one; returns where they end. The buffer's NUL sentinel (fill) ends them in the buffer.
 */
static inline const uint8_t *digits(const uint8_t *p, uint64_t *pm)
{
    uint64_t m = *pm, v;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while ((unsigned)(p[7] - '0') < 10) { /* cheap first test: the eighth byte is a digit */
        memcpy(&v, p, 8); /* the buffer has eight bytes to spare */
        /* all eight '0'..'9': high nibbles 3, and adding 6 carries out of none */
        if (((v & 0xf0f0f0f0f0f0f0f0ull) | (((v + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) >> 4)) !=
            0x3333333333333333ull)
            break;
        v -= 0x3030303030303030ull; /* digits, first one lowest: pairs, then fours, then eight */
        v = (v * 10 + (v >> 8)) & 0x00ff00ff00ff00ffull;
        v = (v * 100 + (v >> 16)) & 0x0000ffff0000ffffull;
        v = (v * 10000 + (v >> 32)) & 0xffffffffull;
        m = m * 100000000 + v;
        p += 8;
    }
#endif
    while ((unsigned)(*p - '0') < 10) m = m * 10 + (uint64_t)(*p++ - '0');
    *pm = m;
    return p;
}

/*
 * Read a number (or NaN / Infinity / -Infinity). Returns 0 or VT_JS_ERROR. The common forms,
 * -?(0|[1-9][0-9]*)(\.[0-9]+)? of at most 18 (integers) or 19 (with a fraction) characters ended
 * inside the buffer, are converted in place, to the values the general path gives them.
 */
static inline __attribute__((always_inline)) int read_number(struct vt_js *j)
{
    static const double aPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                    1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
    /* no bounds checks: the sentinel after the buffer's bytes is none of the bytes looked for */
    const uint8_t *b = j->aBuf + j->iPos, *p = b, *e = j->aBuf + j->nBuf, *pDot = NULL;
    uint64_t m = 0;
    int bNeg = 0;
    if (*p == '-') bNeg = 1, p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') p = digits(p, &m);
    else return read_number_slow(j);
    if (p - b > 18) return read_number_slow(j);
    if (*p == '.') {
        pDot = ++p;
        p = digits(p, &m);
        if (p == pDot || p - b > 19) return read_number_slow(j);
    }
    /* ended inside the buffer by a byte that cannot continue a number */
    if (p == e || (*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-')
        return read_number_slow(j);
    if (!pDot) {
        j->numI = bNeg ? -(int64_t)m : (int64_t)m;
        j->num = (double)j->numI;
        j->bNumInt = 1;
    } else {
        if (m >= (1ull << 53) || p - pDot > 18) return read_number_slow(j);
        j->num = (double)m / aPow10[p - pDot];
        if (bNeg) j->num = -j->num;
        j->bNumInt = 0;
    }
    j->iPos += (size_t)(p - b);
    return 0;
}

/* read_number's general path: any number, across buffer refills. */
static int read_number_slow(struct vt_js *j)
{
    char z[72];
    size_t n = 0;
    int c, bFrac = 0, bDigits = 0;
    char *zEnd;
    for (;;) {
        /* the bytes in the buffer at once; one refill when the number crosses its end */
        const uint8_t *b = j->aBuf;
        size_t i = j->iPos;
        while (i < j->nBuf) {
            uint8_t u = b[i];
            if (u >= '0' && u <= '9') bDigits = 1;
            else if (u == '.' || u == 'e' || u == 'E') bFrac = 1;
            else if (u != '-' && u != '+') break;
            if (n + 1 >= sizeof z) return fail(j, "number too long");
            z[n++] = (char)u;
            i++;
        }
        j->iPos = i;
        if (i < j->nBuf) {
            c = b[i];
            break;
        }
        c = peek(j); /* refill */
        if (c == -2) return VT_JS_ERROR;
        if (c == -1) break;
    }
    z[n] = 0;
    if (n == 1 && z[0] == '-' && c == 'I') {
        if (literal(j, "Infinity")) return VT_JS_ERROR;
        j->num = -INFINITY;
        j->bNumInt = 0;
        return 0;
    }
    /* JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
    {
        const char *p = z;
        if (*p == '-') p++;
        if (*p == '0') p++;
        else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
        else p = NULL;
        if (p && *p == '.') {
            p++;
            if (*p < '0' || *p > '9') p = NULL;
            else while (*p >= '0' && *p <= '9') p++;
        }
        if (p && (*p == 'e' || *p == 'E')) {
            p++;
            if (*p == '+' || *p == '-') p++;
            if (*p < '0' || *p > '9') p = NULL;
            else while (*p >= '0' && *p <= '9') p++;
        }
        if (!p || *p || !bDigits) return c < 0 && !n ? fail(j, "truncated") : fail(j, "invalid number '%s'", z);
    }
    j->bNumInt = 0;
    if (!bFrac && n <= 18) { /* an integer of at most 18 characters fits int64: no strtod needed */
        int64_t v = 0;
        for (const char *p = z[0] == '-' ? z + 1 : z; *p; p++) v = v * 10 + (*p - '0');
        j->numI = z[0] == '-' ? -v : v;
        j->num = (double)j->numI;
        j->bNumInt = 1;
        return 0;
    }
    if (bFrac && n <= 19 && !strpbrk(z, "eE")) {
        /* d+.d+ with a mantissa below 2^53: mantissa / 10^k is exactly what strtod gives (one
         * rounding of two exact doubles) */
        static const double aPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                        1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
        uint64_t m = 0;
        int k = -1;
        for (const char *p = z[0] == '-' ? z + 1 : z; *p; p++) {
            if (*p == '.') k = 0;
            else {
                m = m * 10 + (uint64_t)(*p - '0');
                if (k >= 0) k++;
            }
        }
        if (m < (1ull << 53) && k >= 0 && k <= 18) {
            j->num = (double)m / aPow10[k];
            if (z[0] == '-') j->num = -j->num;
            return 0;
        }
    }
    errno = 0;
    j->num = strtod(z, &zEnd);
    if (!bFrac) {
        long long v;
        errno = 0;
        v = strtoll(z, &zEnd, 10);
        if (errno == 0 && !*zEnd) {
            j->bNumInt = 1;
            j->numI = v;
        } else if (z[0] != '-') { /* an unsigned 64-bit value (an address): its pattern */
            unsigned long long u = (errno = 0, strtoull(z, &zEnd, 10));
            if (errno == 0 && !*zEnd) j->bNumInt = 2, j->numI = (int64_t)u;
        }
    }
    return 0;
}

struct vt_js *vt__js_new(struct vt__src *in)
{
    struct vt_js *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    /* zeroed, and eight bytes longer than used: a NUL after the bytes read (fill), and room for
     * eight-byte loads (member names, digits) that may read past their end */
    j->aBuf = calloc(1, BUF_SIZE + 8);
    if (!j->aBuf) {
        free(j);
        return NULL;
    }
    j->in = in;
    j->nLine = 1;
    j->state = S_VALUE;
    return j;
}

void vt__js_free(struct vt_js *j)
{
    if (!j) return;
    free(j->aBuf);
    free(j->zStr);
    free(j);
}

/* The state after a complete value: at the top level the document is done. */
static void after_value(struct vt_js *j)
{
    j->state = j->nNest ? S_AFTER : S_DONE;
}

int vt__js_next(struct vt_js *j)
{
    int c;
    if (j->zErr[0]) return VT_JS_ERROR;
again:
    c = skip_ws(j);
    if (c == -2) return VT_JS_ERROR;
    switch (j->state) {
    case S_DONE:
        if (c == -1) return VT_JS_EOF;
        return fail(j, "text after the end of the JSON document");
    case S_COLON:
        if (c != ':') return c == -1 ? fail(j, "truncated: input ends after a member name") : fail(j, "expected ':'");
        j->iPos++;
        j->state = S_VALUE;
        goto again;
    case S_AFTER:
        if (c == ',') {
            j->iPos++;
            j->state = j->aNest[j->nNest - 1] == '{' ? S_KEY : S_VALUE;
            goto again;
        }
        if (c == '}' || c == ']') {
            if (j->aNest[j->nNest - 1] != (c == '}' ? '{' : '['))
                return fail(j, "'%c' closes a%s", c, c == '}' ? "n array" : "n object");
            j->iPos++;
            j->nNest--;
            after_value(j);
            return c == '}' ? VT_JS_OBJECT_END : VT_JS_ARRAY_END;
        }
        return c == -1 ? fail(j, "truncated: input ends inside %s", j->aNest[j->nNest - 1] == '{' ? "an object" : "an array")
                       : fail(j, "expected ',' or '%c'", j->aNest[j->nNest - 1] == '{' ? '}' : ']');
    case S_KEY_OR_END:
    case S_KEY:
        if (c == '}' && j->state == S_KEY_OR_END) {
            j->iPos++;
            j->nNest--;
            after_value(j);
            return VT_JS_OBJECT_END;
        }
        if (c != '"') return c == -1 ? fail(j, "truncated: input ends inside an object") : fail(j, "expected a member name");
        j->iPos++;
        if (read_string(j)) return VT_JS_ERROR;
        j->state = S_COLON;
        return VT_JS_KEY;
    case S_VALUE_OR_END:
        if (c == ']') {
            j->iPos++;
            j->nNest--;
            after_value(j);
            return VT_JS_ARRAY_END;
        }
        /* fall through */
    case S_VALUE:
        if (c == -1)
            return j->nNest || j->nBase + (int64_t)j->nBuf > 0 ? fail(j, "truncated: input ends where a value belongs")
                                                              : fail(j, "empty input");
        if (c == '{' || c == '[') {
            if (j->nNest == VT_JS_DEPTH_MAX) return fail(j, "nested deeper than %d", VT_JS_DEPTH_MAX);
            j->aNest[j->nNest++] = (char)c;
            j->iPos++;
            j->state = c == '{' ? S_KEY_OR_END : S_VALUE_OR_END;
            return c == '{' ? VT_JS_OBJECT : VT_JS_ARRAY;
        }
        if (c == '"') {
            j->iPos++;
            if (read_string(j)) return VT_JS_ERROR;
            after_value(j);
            return VT_JS_STRING;
        }
        if (c == 't' || c == 'f' || c == 'n') {
            if (literal(j, c == 't' ? "true" : c == 'f' ? "false" : "null")) return VT_JS_ERROR;
            after_value(j);
            return c == 't' ? VT_JS_TRUE : c == 'f' ? VT_JS_FALSE : VT_JS_NULL;
        }
        if (c == 'N' || c == 'I') {
            if (literal(j, c == 'N' ? "NaN" : "Infinity")) return VT_JS_ERROR;
            j->num = c == 'N' ? NAN : INFINITY;
            j->bNumInt = 0;
            after_value(j);
            return VT_JS_NUMBER;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            if (read_number(j)) return VT_JS_ERROR;
            after_value(j);
            return VT_JS_NUMBER;
        }
        return fail(j, "unexpected character '%c'", c >= 0x20 && c < 0x7f ? c : '?');
    }
    return fail(j, "internal state");
}

const char *vt__js_text(const struct vt_js *j, size_t *pn)
{
    if (pn) *pn = j->nStr;
    return j->zStr ? j->zStr : "";
}

double vt__js_number(const struct vt_js *j, int *pbInt, int64_t *pi)
{
    if (pbInt) *pbInt = j->bNumInt == 1;
    if (pi) *pi = j->bNumInt == 1 ? j->numI : 0;
    return j->num;
}

int vt__js_skip(struct vt_js *j)
{
    int depth = j->nNest - 1;
    while (j->nNest > depth) {
        int tok = vt__js_next(j);
        if (tok == VT_JS_ERROR) return VT_JS_ERROR;
        if (tok == VT_JS_EOF) return fail(j, "truncated");
    }
    return 0;
}

int vt__js_depth(const struct vt_js *j)
{
    return j->nNest;
}

const char *vt__js_errmsg(const struct vt_js *j)
{
    return j->zErr;
}

/* ---- member names ---- */

/* The bucket of a name by its first byte and its length. */
static inline unsigned key_bucket(const char *z, size_t n)
{
    return ((unsigned)(unsigned char)z[0] + (unsigned)n * 7u) & 63u;
}

/*
 * Whether the n bytes at z (n < 0xffff, z + 8 within the buffer that holds them) are name m of k.
 * Eight bytes are loaded at once and masked to the name's length; names of up to 16 bytes need
 * no call.
 */
static inline int key_is(const struct vt_jkeys *k, int m, const char *z, size_t n)
{
    uint64_t w;
    if (k->anLen[m] != n) return 0;
    memcpy(&w, z, 8);
    if ((w & k->aMask[m]) != k->aHead[m]) return 0;
    if (n <= 8) return 1;
    memcpy(&w, z + n - 8, 8);
    if (w != k->aTail[m]) return 0;
    return n <= 16 || !memcmp(z + 8, k->az[m] + 8, n - 16);
}

/*
 * The index of the name of k that the n bytes at z are, or -1; as vt__jt_pick compares them.
 * bWide: eight bytes can be loaded at z. Names of 0xffff bytes or more are compared as C
 * strings (z NUL-terminated then, or holding a NUL within its n bytes).
 */
static inline __attribute__((always_inline)) int key_find(const struct vt_jkeys *k, const char *z, size_t n, int bWide)
{
    if (n >= 0xffff) {
        for (int m = 0; m < k->n; m++) {
            size_t len = strlen(k->az[m]);
            if (len <= n && !memcmp(z, k->az[m], len) && (len == n || !z[len])) return m;
        }
        return -1;
    }
    for (uint64_t b = k->aBucket[key_bucket(n ? z : "", n)]; b; b &= b - 1) {
        int m = __builtin_ctzll(b);
        /* az[m] has no NUL in its n bytes */
        if (bWide ? key_is(k, m, z, n) : k->anLen[m] == n && !memcmp(z, k->az[m], n)) return m;
    }
    return -1;
}

/* ---- trees ---- */

static inline int32_t tree_node(struct vt_js *j, struct vt_jtree *t, int type)
{
    if (t->n == t->nAlloc) {
        int32_t n = t->nAlloc ? t->nAlloc * 2 : 64;
        struct vt_jnode *a;
        if (t->n >= VT_JS_TREE_MAX) return fail(j, "a value with more than %d parts", VT_JS_TREE_MAX);
        a = realloc(t->a, (size_t)n * sizeof *a);
        if (!a) return fail(j, "out of memory");
        t->a = a;
        t->nAlloc = n;
    }
    t->a[t->n] = (struct vt_jnode){.type = (uint8_t)type, .next = -1, .child = -1};
    return t->n++;
}

/* Link node x under the innermost open container (aOpen/aLast, nOpen of them). */
static void tree_link(struct vt_jtree *t, const int32_t *aOpen, int32_t *aLast, int nOpen, int32_t x)
{
    if (nOpen == 0) return;
    if (aLast[nOpen - 1] < 0) t->a[aOpen[nOpen - 1]].child = x;
    else t->a[aLast[nOpen - 1]].next = x;
    aLast[nOpen - 1] = x;
}

/*
 * A scalar value starting at byte c (not consumed) as a node of t. Returns the node or VT_JS_ERROR.
 * With t NULL the value is read and checked but dropped (a string through the tokenizer's buffer);
 * then 0 on success.
 */
static int32_t tree_scalar(struct vt_js *j, struct vt_jtree *t, int c)
{
    int32_t x;
    if (c == '"') {
        struct sink k = {t ? &t->z : NULL, t ? &t->nz : NULL, t ? &t->nzAlloc : NULL, 0, UINT32_MAX - 1};
        size_t off = t ? t->nz : 0;
        j->iPos++;
        if (!t) return read_string(j);
        if (read_into(j, &k) || (x = tree_node(j, t, VT_JN_STR)) < 0) return VT_JS_ERROR;
        t->a[x].iStr = (uint32_t)off;
        t->a[x].nStr = (uint32_t)(t->nz - off - 1);
        return x;
    }
    if (c == 't' || c == 'f' || c == 'n') {
        if (literal(j, c == 't' ? "true" : c == 'f' ? "false" : "null")) return VT_JS_ERROR;
        if (!t) return 0;
        if ((x = tree_node(j, t, c == 'n' ? VT_JN_NULL : VT_JN_BOOL)) < 0) return VT_JS_ERROR;
        t->a[x].i = c == 't';
        return x;
    }
    if (c == 'N' || c == 'I') {
        if (literal(j, c == 'N' ? "NaN" : "Infinity")) return VT_JS_ERROR;
        if (!t) return 0;
        if ((x = tree_node(j, t, VT_JN_NUM)) < 0) return VT_JS_ERROR;
        t->a[x].d = c == 'N' ? NAN : INFINITY;
        return x;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        if (read_number(j)) return VT_JS_ERROR;
        if (!t) return 0;
        if ((x = tree_node(j, t, VT_JN_NUM)) < 0) return VT_JS_ERROR;
        t->a[x].d = j->num;
        t->a[x].bInt = (uint8_t)j->bNumInt;
        t->a[x].i = j->bNumInt ? j->numI : 0;
        return x;
    }
    if (c == -1) return fail(j, "truncated: input ends where a value belongs");
    return c == -2 ? VT_JS_ERROR : fail(j, "unexpected character '%c'", c >= 0x20 && c < 0x7f ? c : '?');
}

/*
 * A member name (its opening quote consumed) looked up in k (NULL: none), without keeping it:
 * *pm is its index in k or -1. First, for the names of k that begin with its first byte, whether
 * the name and a closing quote lie there (k's names hold no quote or backslash, so that is the
 * whole name, without escapes); else the common form (no escape, ended in the buffer) is compared
 * where it lies; any other through the tokenizer's buffer. Returns 0 or VT_JS_ERROR.
 */
static inline __attribute__((always_inline)) int read_key(struct vt_js *j, const struct vt_jkeys *k, int *pm)
{
    const uint8_t *b = j->aBuf + j->iPos, *e = j->aBuf + j->nBuf, *p;
    if (k && b < e) {
        for (uint64_t w = k->aFirst[*b]; w; w &= w - 1) {
            int m = __builtin_ctzll(w);
            size_t n = k->anLen[m];
            /* n < 0xffff: key_is's bound; aBuf has eight bytes to spare for its loads */
            if (n < (size_t)(e - b) && b[n] == '"' && n < 0xffff && key_is(k, m, (const char *)b, n)) {
                *pm = m;
                j->iPos += n + 1;
                return 0;
            }
        }
    }
    p = quote_or_backslash(b, e);
    if (p < e && *p == '"') {
        size_t n = (size_t)(p - b);
        *pm = k ? key_find(k, (const char *)b, n, 1) : -1; /* aBuf has eight bytes to spare */
        j->iPos += n + 1;
        return 0;
    }
    if (read_string(j)) return VT_JS_ERROR;
    *pm = k ? key_find(k, j->zStr, j->nStr, j->nStrAlloc >= 8) : -1;
    return 0;
}

/* Every aOut of s and of its sub-selections to -1 (nothing found yet). */
static void sel_reset(const struct vt_jsel *s)
{
    memset(s->aOut, 0xff, (size_t)s->k->n * sizeof *s->aOut); /* -1 */
    if (s->apSub)
        for (int m = 0; m < s->k->n; m++)
            if (s->apSub[m]) sel_reset(s->apSub[m]);
}

/*
 * The tree of a value. A scalar token is copied as it is; a container is parsed
 * here directly (the same grammar and bounds as vt__js_next, without a token per
 * call), its strings read straight into the tree's text. The tokenizer's nesting
 * stack and state follow, so reading goes on after the value as if it had been
 * read token by token.
 */
int vt__js_read_tree(struct vt_js *j, int tok, struct vt_jtree *t)
{
    return vt__js_read_tree_sel(j, tok, t, NULL);
}

/*
 * vt__js_read_tree with a selection s (NULL: none). Each open container has on the stack its node
 * (-1 when dropped: a member not selected, or inside one) and the selection of its members (NULL
 * when all are kept).
 */
int vt__js_read_tree_sel(struct vt_js *j, int tok, struct vt_jtree *t, const struct vt_jsel *s)
{
    /* an explicit stack of the open containers' nodes, their last child, their selection */
    int32_t aOpen[VT_JS_DEPTH_MAX], aLast[VT_JS_DEPTH_MAX], x;
    const struct vt_jsel *aSel[VT_JS_DEPTH_MAX];
    int nOpen = 0, bFirst = 1, c;
    uint32_t iKey = 0;
    uint16_t nKey = 0;
    t->n = 0;
    t->nz = 0;
    if (s) sel_reset(s);
    if (tok == VT_JS_ERROR) return VT_JS_ERROR;
    if (tok != VT_JS_OBJECT && tok != VT_JS_ARRAY) { /* a scalar: what the tokenizer just read */
        int type = tok == VT_JS_STRING ? VT_JN_STR : tok == VT_JS_NUMBER ? VT_JN_NUM
                   : tok == VT_JS_TRUE || tok == VT_JS_FALSE ? VT_JN_BOOL : VT_JN_NULL;
        if (tok != VT_JS_STRING && tok != VT_JS_NUMBER && tok != VT_JS_TRUE && tok != VT_JS_FALSE &&
            tok != VT_JS_NULL)
            return fail(j, "a value was expected");
        if ((x = tree_node(j, t, type)) < 0) return VT_JS_ERROR;
        if (type == VT_JN_STR) {
            struct sink k = {&t->z, &t->nz, &t->nzAlloc, 0, UINT32_MAX - 1};
            if (str_append(j, &k, j->zStr ? j->zStr : "", j->nStr) || str_append(j, &k, "", 1)) return VT_JS_ERROR;
            t->a[x].nStr = (uint32_t)j->nStr;
        } else if (type == VT_JN_NUM) {
            t->a[x].d = j->num;
            t->a[x].bInt = (uint8_t)j->bNumInt;
            t->a[x].i = j->bNumInt ? j->numI : 0;
        } else {
            t->a[x].i = tok == VT_JS_TRUE;
        }
        return 0;
    }
    /* the container the tokenizer just opened (its '{' or '[' consumed and on aNest) */
    if ((x = tree_node(j, t, tok == VT_JS_OBJECT ? VT_JN_OBJ : VT_JN_ARR)) < 0) return VT_JS_ERROR;
    if (s) { /* names not kept point at an empty one, at offset 0 */
        struct sink k = {&t->z, &t->nz, &t->nzAlloc, 0, UINT32_MAX - 1};
        if (str_append(j, &k, "", 1)) return VT_JS_ERROR;
    }
    aOpen[0] = x;
    aLast[0] = -1;
    aSel[0] = tok == VT_JS_OBJECT ? s : NULL;
    nOpen = 1;
    /* the innermost open container: an object?, dropped?, its selection (kept from push to close) */
    int bObj = tok == VT_JS_OBJECT, bIn = 0;
    const struct vt_jsel *sel = aSel[0];
    for (;;) {
        /* the value is dropped inside a dropped container, or as a member not selected; m >= 0
         * (a member found in sel) only where there is a selection */
        int m = -1, bDrop = bIn, bKey = 0;
        const struct vt_jsel *sub = NULL;
        c = bFirst ? -3 : after_sep(j, ',');
        if (c == -3) {
            c = skip_ws(j);
            if (c == -2) return VT_JS_ERROR;
            if (bFirst && c == (bObj ? '}' : ']')) goto close;
            if (!bFirst) { /* after a value: ',' or the end of the container */
                if (c == (bObj ? '}' : ']')) goto close;
                if (c != ',')
                    return c == -1 ? fail(j, "truncated: input ends inside %s", bObj ? "an object" : "an array")
                                   : fail(j, "expected ',' or '%c'", bObj ? '}' : ']');
                j->iPos++;
                c = skip_ws(j);
                if (c == -2) return VT_JS_ERROR;
            }
        }
        bFirst = 0;
        if (bObj) { /* a member name and its ':' */
            if (c != '"') return c == -1 ? fail(j, "truncated: input ends inside an object") : fail(j, "expected a member name");
            j->iPos++;
            if (sel || bDrop) { /* looked up, or dropped, not kept */
                if (read_key(j, sel ? sel->k : NULL, &m)) return VT_JS_ERROR;
                bDrop = bDrop || m < 0;
            } else {
                struct sink k = {&t->z, &t->nz, &t->nzAlloc, 0, UINT32_MAX - 1};
                bKey = 1;
                iKey = (uint32_t)t->nz;
                if (read_into(j, &k)) return VT_JS_ERROR;
                nKey = t->nz - iKey - 1 < 0xffff ? (uint16_t)(t->nz - iKey - 1) : 0xffff;
            }
            if ((c = after_sep(j, ':')) == -3) {
                c = skip_ws(j);
                if (c != ':')
                    return c == -2   ? VT_JS_ERROR
                           : c == -1 ? fail(j, "truncated: input ends after a member name")
                                     : fail(j, "expected ':'");
                j->iPos++;
                c = skip_ws(j);
                if (c == -2) return VT_JS_ERROR;
            }
        }
        if (m >= 0 && sel->apSub && sel->apSub[m]) {
            if (sel->aOut[m] >= 0) sel_reset(sel->apSub[m]); /* found again: only the last one counts */
            if (c == '{') sub = sel->apSub[m];
        }
        if (c == '{' || c == '[') {
            if (j->nNest == VT_JS_DEPTH_MAX) return fail(j, "nested deeper than %d", VT_JS_DEPTH_MAX);
            x = -1;
            if (!bDrop) {
                if ((x = tree_node(j, t, c == '{' ? VT_JN_OBJ : VT_JN_ARR)) < 0) return VT_JS_ERROR;
                if (bKey) t->a[x].iKey = iKey, t->a[x].nKey = nKey; /* else 0, 0 from tree_node */
                tree_link(t, aOpen, aLast, nOpen, x);
                if (m >= 0) sel->aOut[m] = x;
            }
            j->aNest[j->nNest++] = (char)c;
            j->iPos++;
            aOpen[nOpen] = x;
            aLast[nOpen] = -1;
            aSel[nOpen] = sub;
            nOpen++;
            bObj = c == '{', bIn = x < 0, sel = sub;
            bFirst = 1;
            continue;
        }
        if ((x = tree_scalar(j, bDrop ? NULL : t, c)) < 0) return VT_JS_ERROR;
        if (bDrop) continue;
        if (bKey) t->a[x].iKey = iKey, t->a[x].nKey = nKey;
        tree_link(t, aOpen, aLast, nOpen, x);
        if (m >= 0) sel->aOut[m] = x;
        continue;
    close:
        j->iPos++;
        j->nNest--;
        bFirst = 0;
        if (--nOpen == 0) {
            after_value(j);
            return 0;
        }
        bObj = j->aNest[j->nNest - 1] == '{', bIn = aOpen[nOpen - 1] < 0, sel = aSel[nOpen - 1];
    }
}

void vt__jtree_free(struct vt_jtree *t)
{
    free(t->a);
    free(t->z);
    memset(t, 0, sizeof *t);
}

int32_t vt__jt_get(const struct vt_jtree *t, int32_t i, const char *zKey)
{
    int32_t hit = -1;
    if (i < 0 || i >= t->n || t->a[i].type != VT_JN_OBJ) return -1;
    for (int32_t c = t->a[i].child; c >= 0; c = t->a[c].next)
        if (!strcmp(t->z + t->a[c].iKey, zKey)) hit = c;
    return hit;
}

int vt__jt_keys(struct vt_jkeys *k, const char *const *az, int n)
{
    memset(k, 0, sizeof *k);
    if (n < 0 || n > VT_JT_PICK_MAX) return -1;
    k->n = n;
    k->az = az;
    for (int m = 0; m < n; m++) {
        size_t len = strlen(az[m]);
        unsigned char aMask[8] = {0};
        k->anLen[m] = len < 0xffff ? (uint16_t)len : 0xffff;
        k->aBucket[key_bucket(az[m], k->anLen[m])] |= 1ull << m;
        k->aFirst[(unsigned char)az[m][0]] |= 1ull << m;
        memcpy(&k->aHead[m], az[m], len < 8 ? len : 8); /* aHead was zeroed */
        memset(aMask, 0xff, len < 8 ? len : 8);
        memcpy(&k->aMask[m], aMask, 8);
        if (len > 8) memcpy(&k->aTail[m], az[m] + len - 8, 8);
    }
    return 0;
}

void vt__jt_pick(const struct vt_jtree *t, int32_t i, const struct vt_jkeys *k, int32_t *aOut)
{
    for (int m = 0; m < k->n; m++) aOut[m] = -1;
    if (i < 0 || i >= t->n || t->a[i].type != VT_JN_OBJ) return;
    for (int32_t c = t->a[i].child; c >= 0; c = t->a[c].next) {
        /* nKey 0xffff: a name of 64 KiB or more, compared as a C string */
        int m = key_find(k, t->z + t->a[c].iKey, t->a[c].nKey, t->a[c].iKey + (size_t)8 <= t->nzAlloc);
        if (m >= 0) aOut[m] = c;
    }
}
