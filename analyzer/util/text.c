/* Text for people and for other programs: byte and time formats, UTF-8, escaping and caps. */
#include "text.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *vt__strdupf(const char *zFmt, ...)
{
    va_list ap;
    char *z;
    int n;
    va_start(ap, zFmt);
    n = vsnprintf(NULL, 0, zFmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    z = malloc((size_t)n + 1);
    if (!z) return NULL;
    va_start(ap, zFmt);
    vsnprintf(z, (size_t)n + 1, zFmt, ap);
    va_end(ap);
    return z;
}

const char *vt__fmt_bytes(int64_t n, char *z, size_t nZ)
{
    static const char *const azUnit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    uint64_t u = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n; /* INT64_MIN too */
    double v = (double)u;
    int k = 0;
    while (v >= 1024.0 && k < 6) {
        v /= 1024.0;
        k++;
    }
    if (k == 0) snprintf(z, nZ, "%s%llu B", n < 0 ? "-" : "", (unsigned long long)u);
    else snprintf(z, nZ, "%s%.*f %s", n < 0 ? "-" : "", v >= 100 ? 0 : v >= 10 ? 1 : 2, v, azUnit[k]);
    return z;
}

const char *vt__fmt_ns(int64_t ns, char *z, size_t nZ)
{
    double v = (double)ns;
    if (ns < 0) snprintf(z, nZ, "?");
    else if (ns < 1000) snprintf(z, nZ, "%lld ns", (long long)ns);
    else if (ns < 1000000) snprintf(z, nZ, "%.1f us", v / 1e3);
    else if (ns < 1000000000) snprintf(z, nZ, "%.1f ms", v / 1e6);
    else snprintf(z, nZ, "%.2f s", v / 1e9);
    return z;
}

const char *vt__fmt_ns_dir(int64_t ns, int dir, char *z, size_t nZ)
{
    /* the step of the last digit vt__fmt_ns shows at each magnitude: exact ns, 0.1 us, 0.1 ms, 0.01 s */
    int64_t step = ns < 1000 ? 1 : ns < 1000000 ? 100 : ns < 1000000000 ? 100000 : 10000000, r;
    if (ns < 0 || step == 1) return vt__fmt_ns(ns, z, nZ);
    r = ns % step;
    if (r && dir < 0) ns -= r;
    else if (r && dir > 0 && ns <= INT64_MAX - step) ns += step - r;
    return vt__fmt_ns(ns, z, nZ);
}

int vt__torch_node_name(const char *z)
{
    const char *p = z ? strstr(z, "Backward") : NULL;
    if (!p || p == z) return 0;
    for (const char *q = z; q < p; q++)
        if (!isalnum((unsigned char)*q) && *q != '_') return 0;
    for (p += 8; *p; p++)
        if (!isdigit((unsigned char)*p)) return 0;
    return 1;
}

int vt__torch_op_name(const char *z)
{
    static const char *const azNs[] = {"aten::", "c10d::", "_c10d_functional::", "prim::", "quantized::",
                                       "torchvision::", "fbgemm::"};
    const char *zRest;
    for (size_t i = 0; z && i < sizeof azNs / sizeof azNs[0]; i++) {
        if (strncmp(z, azNs[i], strlen(azNs[i]))) continue;
        zRest = z + strlen(azNs[i]);
        return *zRest && !strchr(zRest, ':') && !strchr(zRest, '(') && !strchr(zRest, ' ');
    }
    return 0;
}

const char *vt__fmt_wall(int64_t wallNs, char *z, size_t nZ)
{
    time_t t = (time_t)(wallNs / 1000000000LL);
    struct tm tm;
    char zDate[32];
    if (wallNs < 0 || !gmtime_r(&t, &tm) || !strftime(zDate, sizeof zDate, "%Y-%m-%d %H:%M:%S", &tm)) {
        snprintf(z, nZ, "?");
        return z;
    }
    snprintf(z, nZ, "%s.%03lld UTC", zDate, (long long)(wallNs % 1000000000LL) / 1000000LL);
    return z;
}

int vt__utf8_len(const unsigned char *p, size_t n, unsigned *pCp)
{
    unsigned c = p[0], cp;
    int need, k;
    if (c < 0x80) need = 0, cp = c;
    else if (c >= 0xC2 && c <= 0xDF) need = 1, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) need = 2, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) need = 3, cp = c & 0x07;
    else return 0; /* a continuation byte, an overlong lead (C0, C1) or past F4 */
    if ((size_t)need >= n) return 0;
    for (k = 1; k <= need; k++) {
        if ((p[k] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (p[k] & 0x3F);
    }
    /* overlong forms, surrogates and values past U+10FFFF */
    if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    if (pCp) *pCp = cp;
    return need + 1;
}

size_t vt__utf8_chars(const char *z, size_t n)
{
    const unsigned char *p = (const unsigned char *)z;
    size_t i = 0, nChar = 0;
    while (i < n) {
        int k = vt__utf8_len(p + i, n - i, NULL);
        i += k > 0 ? (size_t)k : 1;
        nChar++;
    }
    return nChar;
}

size_t vt__utf8_prefix(const char *z, size_t n, size_t nChar)
{
    const unsigned char *p = (const unsigned char *)z;
    size_t i = 0;
    while (i < n && nChar-- > 0) {
        int k = vt__utf8_len(p + i, n - i, NULL);
        i += k > 0 ? (size_t)k : 1;
    }
    return i;
}

/*
 * How ASCII character c (c < 0x80) is written escaped for esc: NULL where it stands for itself,
 * else the text written instead (in zBuf, 8 bytes, where it is made).
 */
static const char *ascii_esc(unsigned c, enum vt_esc esc, char *zBuf)
{
    switch (esc) {
    case VT_ESC_JSON_SCRIPT:
        if (c == '<') return "\\u003c";
        /* fall through */
    case VT_ESC_JSON:
        if (c == '"') return "\\\"";
        if (c == '\\') return "\\\\";
        if (c == '\n') return "\\n";
        if (c == '\t') return "\\t";
        if (c == '\r') return "\\r";
        if (c < 0x20 || c == 0x7F) {
            snprintf(zBuf, 8, "\\u%04x", c);
            return zBuf;
        }
        return NULL;
    case VT_ESC_HTML:
        if (c == '<') return "&lt;";
        if (c == '>') return "&gt;";
        if (c == '&') return "&amp;";
        if (c == '"') return "&quot;";
        if (c == '\'') return "&#39;";
        return c < 0x20 && c != '\n' && c != '\t' ? "?" : NULL;
    case VT_ESC_MD:
        if (c == '|') return "\\|";
        if (c == '\n' || c == '\r' || c == '\t') return " ";
        return c < 0x20 || c == 0x7F ? "?" : NULL;
    case VT_ESC_CSV:
        return c == '"' ? "\"\"" : NULL;
    case VT_ESC_LINE:
        return c < 0x20 || c == 0x7F ? "?" : NULL;
    default:
        return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7F ? "?" : NULL;
    }
}

/* Does ASCII character c stand for itself whatever the escaping (ascii_esc gives NULL for every esc)? */
static int plain_everywhere(unsigned c)
{
    return c >= 0x20 && c < 0x7F && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c != '\'' && c != '|';
}

int vt__put_esc(FILE *f, const char *z, size_t n, enum vt_esc esc, size_t cap)
{
    const unsigned char *p = (const unsigned char *)z;
    size_t i = 0, end = n;
    unsigned cp = 0;
    char zBuf[8];
    if (cap != VT_TEXT_NOCAP && n > cap) end = cap;
    flockfile(f); /* once for the string, not once a byte */
    while (i < end) {
        int k;
        if (p[i] < 0x80) { /* a run of characters that stand for themselves, written at once, then one escaped */
            const char *zEsc = NULL;
            size_t j = i;
            while (j < end && (plain_everywhere(p[j]) || (p[j] < 0x80 && !(zEsc = ascii_esc(p[j], esc, zBuf))))) j++;
            if (j - i >= 16) fwrite(p + i, 1, j - i, f), i = j;
            for (; i < j; i++) putc_unlocked(p[i], f); /* a short run: a call to fwrite costs more */
            if (zEsc) fputs(zEsc, f), i++;
            continue;
        }
        k = vt__utf8_len(p + i, n - i, &cp);
        if (k > 0 && i + (size_t)k <= end) {
            /* C1: a terminal obeys them (Markdown is read in one too) */
            if ((esc == VT_ESC_TEXT || esc == VT_ESC_LINE || esc == VT_ESC_MD) && cp < 0xA0) fputc('?', f);
            else fwrite(p + i, 1, (size_t)k, f);
            i += (size_t)k;
        } else if (k > 0) { /* a sequence across the cap: cut before it */
            end = i;
        } else {
            fputs(esc == VT_ESC_JSON || esc == VT_ESC_JSON_SCRIPT ? "\\ufffd" : "\xEF\xBF\xBD", f); /* U+FFFD */
            i++;
        }
    }
    if (end < n) fprintf(f, " [... %zu more bytes]", n - end);
    funlockfile(f);
    return ferror(f) ? -1 : 0;
}

int vt__put_mid(FILE *f, const char *z, size_t nChar, enum vt_esc esc)
{
    size_t n = z ? strlen(z) : 0, nAll = vt__utf8_chars(z, n), nHead, iTail;
    if (nAll <= nChar || nChar < 6) return z ? vt__put_esc(f, z, n, esc, VT_TEXT_CAP) : 0;
    nHead = (nChar - 3) / 3;
    vt__put_esc(f, z, vt__utf8_prefix(z, n, nHead), esc, VT_TEXT_NOCAP);
    fputs("...", f);
    iTail = vt__utf8_prefix(z, n, nAll - (nChar - 3 - nHead));
    return vt__put_esc(f, z + iTail, n - iTail, esc, VT_TEXT_NOCAP);
}

int vt__put_text(FILE *f, const char *z, enum vt_esc esc)
{
    return z ? vt__put_esc(f, z, strlen(z), esc, VT_TEXT_CAP) : 0;
}

int vt__json_strn(FILE *f, const char *z, size_t n, size_t cap)
{
    fputc('"', f);
    vt__put_esc(f, z, n, VT_ESC_JSON, cap);
    fputc('"', f);
    return ferror(f) ? -1 : 0;
}

int vt__json_str(FILE *f, const char *z)
{
    if (!z) {
        fputs("null", f);
        return ferror(f) ? -1 : 0;
    }
    return vt__json_strn(f, z, strlen(z), VT_TEXT_CAP);
}

int vt__json_double(FILE *f, double r)
{
    if (isnan(r) || isinf(r)) fputs("null", f);
    else fprintf(f, "%.17g", r); /* never a JSON-invalid form for finite values ("1e+20", "-0.5") */
    return ferror(f) ? -1 : 0;
}
