/* Tests for the shared text module: byte and time formats, UTF-8, every escaper, caps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "vt_test.h"

/* What the writer fn produced for z with escaping esc and cap (malloc'd). */
static char *esc(const char *z, size_t n, enum vt_esc e, size_t cap)
{
    char *zOut = NULL;
    size_t nOut = 0;
    FILE *f = open_memstream(&zOut, &nOut);
    ASSERT(f != NULL);
    ASSERT_EQ(0, vt__put_esc(f, z, n, e, cap));
    fclose(f);
    return zOut;
}

TEST(bytes_and_times)
{
    char z[32];
    ASSERT_STREQ("0 B", vt__fmt_bytes(0, z, sizeof z));
    ASSERT_STREQ("1023 B", vt__fmt_bytes(1023, z, sizeof z));
    ASSERT_STREQ("1.00 KiB", vt__fmt_bytes(1024, z, sizeof z));
    ASSERT_STREQ("1.50 MiB", vt__fmt_bytes(3 << 19, z, sizeof z));
    ASSERT_STREQ("12.5 GiB", vt__fmt_bytes((int64_t)25 << 29, z, sizeof z));
    ASSERT_STREQ("-4.00 KiB", vt__fmt_bytes(-4096, z, sizeof z));
    ASSERT_STREQ("-8.00 EiB", vt__fmt_bytes(INT64_MIN, z, sizeof z));
    ASSERT_STREQ("850 ns", vt__fmt_ns(850, z, sizeof z));
    ASSERT_STREQ("12.5 us", vt__fmt_ns(12500, z, sizeof z));
    ASSERT_STREQ("1.2 ms", vt__fmt_ns(1250000, z, sizeof z));
    ASSERT_STREQ("3.20 s", vt__fmt_ns(3200000000LL, z, sizeof z));
    ASSERT_STREQ("?", vt__fmt_ns(-1, z, sizeof z));
    ASSERT_STREQ("2025-11-21 18:40:01.123 UTC", vt__fmt_wall(1763750401123000000LL, z, sizeof z));
    ASSERT_STREQ("?", vt__fmt_wall(-5, z, sizeof z));
}

TEST(utf8)
{
    unsigned cp = 0;
    ASSERT_EQ(1, vt__utf8_len((const unsigned char *)"a", 1, &cp));
    ASSERT_EQ(2, vt__utf8_len((const unsigned char *)"\xc3\xa9", 2, &cp));
    ASSERT_EQ(0xe9, cp);
    ASSERT_EQ(4, vt__utf8_len((const unsigned char *)"\xf0\x9f\x98\x80", 4, &cp));
    ASSERT_EQ(0x1f600, cp);
    ASSERT_EQ(0, vt__utf8_len((const unsigned char *)"\xc0\x80", 2, NULL));       /* overlong NUL */
    ASSERT_EQ(0, vt__utf8_len((const unsigned char *)"\xed\xa0\x80", 3, NULL));   /* a surrogate */
    ASSERT_EQ(0, vt__utf8_len((const unsigned char *)"\xf4\x90\x80\x80", 4, NULL)); /* past U+10FFFF */
    ASSERT_EQ(0, vt__utf8_len((const unsigned char *)"\xe2\x82", 2, NULL));       /* truncated */
    ASSERT_EQ(0, vt__utf8_len((const unsigned char *)"\x80", 1, NULL));           /* continuation */
    ASSERT_EQ(4, vt__utf8_chars("a\xc3\xa9\xff" "b", 5));
    ASSERT_EQ(3, vt__utf8_prefix("a\xc3\xa9" "bc", 5, 2));
    ASSERT_EQ(5, vt__utf8_prefix("a\xc3\xa9" "bc", 5, 9));
}

TEST(json_escaping)
{
    char *z = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&z, &n);
    ASSERT(f != NULL);
    vt__json_str(f, "a\"b\\c\n\t\x01\x1f \xc3\xa9 \xff \xe2\x82 \xf0\x9f\x98\x80");
    vt__json_double(f, 0.0 / 0.0);
    fputc(' ', f);
    vt__json_double(f, 2.5);
    fputc(' ', f);
    vt__json_str(f, NULL);
    fclose(f);
    ASSERT_STREQ("\"a\\\"b\\\\c\\n\\t\\u0001\\u001f \xc3\xa9 \\ufffd \\ufffd\\ufffd "
                 "\xf0\x9f\x98\x80\"null 2.5 null",
                 z);
    free(z);
}

TEST(other_escapers)
{
    char *z = esc("<a href=\"x\">&'\x01", 15, VT_ESC_HTML, VT_TEXT_NOCAP);
    ASSERT_STREQ("&lt;a href=&quot;x&quot;&gt;&amp;&#39;?", z);
    free(z);
    z = esc("a|b\nc", 5, VT_ESC_MD, VT_TEXT_NOCAP);
    ASSERT_STREQ("a\\|b c", z);
    free(z);
    /* Markdown is read in a terminal too: ESC, BEL, DEL and the C1 controls each one '?' */
    z = esc("a\x1b[2J\x07\x7f\xc2\x9b" "1m\n\xc3\xa9", 14, VT_ESC_MD, VT_TEXT_NOCAP);
    ASSERT_STREQ("a?[2J???1m \xc3\xa9", z);
    free(z);
    z = esc("say \"hi\"", 8, VT_ESC_CSV, VT_TEXT_NOCAP);
    ASSERT_STREQ("say \"\"hi\"\"", z);
    free(z);
    z = esc("bell\x07 \xff", 7, VT_ESC_TEXT, VT_TEXT_NOCAP);
    ASSERT_STREQ("bell? \xef\xbf\xbd", z);
    free(z);
    /* a terminal obeys ESC, DEL and the C1 controls (U+009B is CSI): each one '?'; text keeps its lines */
    z = esc("a\x1b[2J\x7f\xc2\x9b" "1m\n\t\xc3\xa9", 14, VT_ESC_TEXT, VT_TEXT_NOCAP);
    ASSERT_STREQ("a?[2J??1m\n\t\xc3\xa9", z);
    free(z);
    /* one line: newlines and tabs too */
    z = esc("a\x1b[2J\x7f\xc2\x9b" "1m\n\t\xc3\xa9", 14, VT_ESC_LINE, VT_TEXT_NOCAP);
    ASSERT_STREQ("a?[2J??1m??\xc3\xa9", z);
    free(z);
}

/* Long strings are cut at the cap, never inside a UTF-8 sequence, with a marker saying how much. */
TEST(caps)
{
    char *zIn = malloc(1 << 20), *z;
    memset(zIn, 'x', 1 << 20);
    z = esc(zIn, 1 << 20, VT_ESC_JSON, VT_TEXT_CAP);
    ASSERT_EQ(VT_TEXT_CAP + strlen(" [... 1044480 more bytes]"), strlen(z));
    ASSERT(strstr(z, " [... 1044480 more bytes]") != NULL);
    free(z);
    /* a 2-byte character across the cap goes whole to the cut part */
    memcpy(zIn + VT_TEXT_CAP - 1, "\xc3\xa9", 2);
    z = esc(zIn, VT_TEXT_CAP + 1, VT_ESC_JSON, VT_TEXT_CAP);
    ASSERT_EQ(VT_TEXT_CAP - 1 + strlen(" [... 2 more bytes]"), strlen(z));
    free(z);
    free(zIn);
}

VT_TEST_LIST(T(bytes_and_times) T(utf8) T(json_escaping) T(other_escapers) T(caps))
