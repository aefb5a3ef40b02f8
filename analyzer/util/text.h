/* Internal: text shared by every output of the command: numbers for people, escapers, UTF-8, caps. */
#ifndef VT_ANALYZER_TEXT_H
#define VT_ANALYZER_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Every string a report or an export prints comes from a trace, and a trace may
 * hold anything (a damaged file, a hostile name): each writer here emits valid
 * UTF-8 whatever the input (malformed sequences become U+FFFD) and cuts strings
 * longer than VT_TEXT_CAP bytes, ending them with a marker that says how much was cut.
 */
#define VT_TEXT_CAP 4096    /* bytes of one string kept in reports and exports */
#define VT_TEXT_NOCAP ((size_t)-1)

/* z, or zElse when z is NULL (names of enumeration values a trace may not know: vt_*_name in schema.h). */
static inline const char *vt__or(const char *z, const char *zElse)
{
    return z ? z : zElse;
}

/* printf into a new malloc'd string; NULL when out of memory. */
char *vt__strdupf(const char *zFmt, ...) __attribute__((format(printf, 1, 2)));

/* A byte count for people into z: "512 B", "1.50 MiB", "12.3 GiB", "-4.00 KiB"; returns z. */
const char *vt__fmt_bytes(int64_t n, char *z, size_t nZ);
/* A duration for people into z: "850 ns", "12.5 us", "1.25 ms"... "3.20 s"; "?" when negative; returns z. */
const char *vt__fmt_ns(int64_t ns, char *z, size_t nZ);
/* vt__fmt_ns with the value rounded down (dir < 0) or up (dir > 0) to the last digit shown, not to the nearest:
 * the ends of a window, widened so that a window read back from the text holds it. */
const char *vt__fmt_ns_dir(int64_t ns, int dir, char *z, size_t nZ);
/* A wall-clock time (ns since the epoch) as "YYYY-MM-DD HH:MM:SS.mmm UTC" into z; returns z. */
const char *vt__fmt_wall(int64_t wallNs, char *z, size_t nZ);

/*
 * PyTorch's names as its profiler writes them: an autograd node ("SumBackward0",
 * "CompiledFunctionBackward": an identifier, "Backward", digits), or an operator of a known
 * namespace ("aten::mm", "c10d::allreduce_": one "::", no parenthesis). 1 or 0.
 */
int vt__torch_node_name(const char *z);
int vt__torch_op_name(const char *z);

/*
 * Length of the well-formed UTF-8 sequence at p (n bytes available): 1 to 4, or 0
 * when the bytes there are not one (truncated, overlong, a surrogate, past
 * U+10FFFF, a stray continuation byte). *pCp receives the code point when not NULL.
 */
int vt__utf8_len(const unsigned char *p, size_t n, unsigned *pCp);
/* Characters z[0..n) shows in a terminal: one per well-formed sequence or stray byte. */
size_t vt__utf8_chars(const char *z, size_t n);
/* Bytes of the longest prefix of z[0..n) that holds at most nChar characters, never cutting a sequence. */
size_t vt__utf8_prefix(const char *z, size_t n, size_t nChar);

/* Where a string is written, and how its special characters are escaped. */
enum vt_esc {
    VT_ESC_TEXT = 0, /* plain text: control characters (C0 but newline and tab, DEL, C1) become '?' */
    VT_ESC_LINE,     /* one line of plain text: every control character, newline and tab too, becomes '?' */
    VT_ESC_JSON,     /* the inside of a JSON string literal */
    VT_ESC_HTML,     /* HTML text and attribute values */
    VT_ESC_MD,       /* Markdown, a table cell or a line: '|' escaped, newlines and tabs as spaces, other
                        control characters (DEL and C1 too) as '?' */
    VT_ESC_CSV,      /* the inside of a CSV field in double quotes: '"' doubled */
    VT_ESC_JSON_SCRIPT /* the inside of a JSON string literal in an HTML <script> element: '<' as \u003c too */
};

/*
 * Write z[0..n) escaped for esc, as valid UTF-8, cut after cap bytes (VT_TEXT_NOCAP:
 * never) with the marker " [... N more bytes]". Returns 0, or -1 on a write error.
 */
int vt__put_esc(FILE *f, const char *z, size_t n, enum vt_esc esc, size_t cap);
/* The same for a NUL-terminated string, capped at VT_TEXT_CAP; NULL writes nothing. */
int vt__put_text(FILE *f, const char *z, enum vt_esc esc);
/*
 * z escaped for esc in at most nChar characters (nChar >= 6): whole when it fits, else its first
 * third and its last two thirds around "..." (a site's file at the start, its line and function or
 * its backward node at the end: what tells two apart). Never cuts a UTF-8 sequence; NULL writes
 * nothing. Returns 0, or -1 on a write error.
 */
int vt__put_mid(FILE *f, const char *z, size_t nChar, enum vt_esc esc);
/* A JSON string literal of z (quotes included), capped at VT_TEXT_CAP; NULL writes null. */
int vt__json_str(FILE *f, const char *z);
/* A JSON string literal of z[0..n) with the given cap. */
int vt__json_strn(FILE *f, const char *z, size_t n, size_t cap);
/* A JSON number: finite doubles in the shortest exact form, NaN and infinities as null. */
int vt__json_double(FILE *f, double r);

#endif
