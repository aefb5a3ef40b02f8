/* Tests of the streaming JSON reader: tokens, trees, escapes, errors at every truncation, bounds, gzip input. */
#include "vt_test.h"

#include <math.h>
#if VT_HAVE_ZLIB
#include <zlib.h>
#endif

#include "json.h"

static char g_zOut[8192];
static char g_zErr[256];

/* Tokenize n bytes into g_zOut (one letter per token, strings and numbers spelled out). Returns 0 or VT_JS_ERROR. */
static int tokens(const char *z, size_t n)
{
    struct vt__src s;
    struct vt_js *j;
    FILE *f = fmemopen(g_zOut, sizeof g_zOut, "w");
    int tok, rc = 0;
    ASSERT(f != NULL);
    vt__src_open_mem(&s, z, n);
    j = vt__js_new(&s);
    ASSERT(j != NULL);
    while ((tok = vt__js_next(j)) > 0) {
        int bInt;
        int64_t i;
        double d;
        switch (tok) {
        case VT_JS_OBJECT: fputc('{', f); break;
        case VT_JS_OBJECT_END: fputc('}', f); break;
        case VT_JS_ARRAY: fputc('[', f); break;
        case VT_JS_ARRAY_END: fputc(']', f); break;
        case VT_JS_KEY: fprintf(f, "k<%s>", vt__js_text(j, NULL)); break;
        case VT_JS_STRING: fprintf(f, "s<%s>", vt__js_text(j, NULL)); break;
        case VT_JS_NUMBER:
            d = vt__js_number(j, &bInt, &i);
            if (bInt) fprintf(f, "i<%lld>", (long long)i);
            else fprintf(f, "d<%g>", d);
            break;
        case VT_JS_TRUE: fputc('T', f); break;
        case VT_JS_FALSE: fputc('F', f); break;
        case VT_JS_NULL: fputc('N', f); break;
        }
    }
    if (tok == VT_JS_ERROR) rc = VT_JS_ERROR;
    snprintf(g_zErr, sizeof g_zErr, "%s", vt__js_errmsg(j));
    fclose(f);
    vt__js_free(j);
    return rc;
}

#define TOKENS(lit) tokens(lit, sizeof(lit) - 1)

TEST(tokens_of_every_kind)
{
    ASSERT_EQ(0, TOKENS(" {\"a\": [1, -2.5, 3e2, true, false, null, \"x\"], \"b\": {}, \"c\": []}\n"));
    ASSERT_STREQ("{k<a>[i<1>d<-2.5>d<300>TFNs<x>]k<b>{}k<c>[]}", g_zOut);
    ASSERT_EQ(0, TOKENS("[9223372036854775807, 9223372036854775808, -0, 0.0, NaN, Infinity, -Infinity]"));
    ASSERT_STREQ("[i<9223372036854775807>d<9.22337e+18>i<0>d<0>d<nan>d<inf>d<-inf>]", g_zOut);
    ASSERT_EQ(0, TOKENS("\"top\""));
    ASSERT_STREQ("s<top>", g_zOut);
}

TEST(string_escapes)
{
    ASSERT_EQ(0, TOKENS("[\"q\\\"b\\\\s\\/n\\n t\\t\", \"\\u00e9\\u20ac\", \"\\ud83d\\ude00\", \"\\ud800x\", \"\\udc00\"]"));
    ASSERT_STREQ("[s<q\"b\\s/n\n t\t>s<\xc3\xa9\xe2\x82\xac>s<\xf0\x9f\x98\x80>s<\xef\xbf\xbdx>s<\xef\xbf\xbd>]",
                 g_zOut);
}

TEST(malformed_documents)
{
    static const char *const az[] = {
        "{\"a\" 1}", "{\"a\": 1,}", "[1 2]", "[1,]", "{1: 2}", "[01]", "[1.]", "[.5]", "[1e]", "[-]", "[+1]",
        "[tru]", "[nul]", "{\"a\": 1]", "[1}", "\"a\\x\"", "[\"\\u12g4\"]", "[1] [2]", "@", "{\"a\":1}}", "",
        "   ", "[\"a\"", "{", "[1,", "{\"a\"", "{\"a\":",
    };
    for (size_t i = 0; i < sizeof az / sizeof az[0]; i++) {
        if (tokens(az[i], strlen(az[i])) != VT_JS_ERROR) VT__FAIL("accepted: %s", az[i]);
        ASSERT_CONTAINS(g_zErr, "line 1");
    }
    ASSERT_EQ(VT_JS_ERROR, TOKENS("[1,\n2,\n@]"));
    ASSERT_CONTAINS(g_zErr, "line 3");
    ASSERT_CONTAINS(g_zErr, "unexpected character '@'");
}

/* Read n bytes as one tree then tokens to the end: 0, or VT_JS_ERROR with g_zErr set. */
static int tree_then_tokens(const char *z, size_t n)
{
    struct vt__src s;
    struct vt_js *j;
    struct vt_jtree t = {0};
    int tok, rc = 0;
    vt__src_open_mem(&s, z, n);
    j = vt__js_new(&s);
    ASSERT(j != NULL);
    tok = vt__js_next(j);
    if (tok == VT_JS_ERROR || vt__js_read_tree(j, tok, &t) != 0) rc = VT_JS_ERROR;
    while (rc == 0 && (tok = vt__js_next(j)) > 0) {}
    if (tok == VT_JS_ERROR) rc = VT_JS_ERROR;
    snprintf(g_zErr, sizeof g_zErr, "%s", vt__js_errmsg(j));
    vt__jtree_free(&t);
    vt__js_free(j);
    return rc;
}

/* The tree parser (containers read without the tokenizer) accepts and refuses what the tokenizer does. */
TEST(trees_agree_with_tokens)
{
    static const char *const az[] = {
        "{\"a\" 1}", "{\"a\": 1,}", "[1 2]", "[1,]", "{1: 2}", "[01]", "[1.]", "[.5]", "[1e]", "[-]", "[+1]",
        "[tru]", "[nul]", "{\"a\": 1]", "[1}", "[\"a\\x\"]", "[\"\\u12g4\"]", "[1] [2]", "{\"a\":1}}", "[\"a\"",
        "{", "[1,", "{\"a\"", "{\"a\":", "{\"a\": [1, {\"b\": }]}", "[[[[]]]", "{\"a\": {\"b\": [1, 2}}",
    };
    static const char zOk[] = "{\"a\": [1, -2.5, {\"b\": \"\\u00e9x\", \"c\": []}, true, null, NaN], \"d\": {}} ";
    struct vt__src s;
    struct vt_js *j;
    struct vt_jtree t = {0};
    for (size_t i = 0; i < sizeof az / sizeof az[0]; i++)
        if (tree_then_tokens(az[i], strlen(az[i])) != VT_JS_ERROR) VT__FAIL("tree accepted: %s", az[i]);
    for (size_t n = 0; n < sizeof zOk - 2; n++)
        if (tree_then_tokens(zOk, n) != VT_JS_ERROR) VT__FAIL("prefix of %zu bytes accepted as a tree", n);
    ASSERT_EQ(0, tree_then_tokens(zOk, sizeof zOk - 1));
    vt__src_open_mem(&s, zOk, sizeof zOk - 1);
    j = vt__js_new(&s);
    ASSERT_EQ(0, vt__js_read_tree(j, vt__js_next(j), &t));
    ASSERT_STREQ("\xc3\xa9x", vt__jt_str(&t, vt__jt_get(&t, t.a[vt__jt_get(&t, 0, "a")].child + 2, "b")));
    ASSERT_EQ(0, vt__js_depth(j));
    ASSERT_EQ(VT_JS_EOF, vt__js_next(j));
    vt__jtree_free(&t);
    vt__js_free(j);
}

TEST(truncation_at_every_byte)
{
    static const char z[] = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1.5, \"args\": {\"Addr\": 42, \"s\": \"\\u00e9\"}},"
                            " null, true, false, -7e-3]}";
    for (size_t n = 0; n < sizeof z - 1; n++) {
        if (tokens(z, n) != VT_JS_ERROR) VT__FAIL("prefix of %zu bytes accepted", n);
        if (!strstr(g_zErr, "truncated") && !strstr(g_zErr, "empty input") && !strstr(g_zErr, "invalid number"))
            VT__FAIL("prefix of %zu bytes: %s", n, g_zErr);
    }
    ASSERT_EQ(0, tokens(z, sizeof z - 1));
}

TEST(nesting_bound)
{
    char *z = malloc(2 * VT_JS_DEPTH_MAX + 8);
    size_t n = 0;
    ASSERT(z != NULL);
    for (int i = 0; i < VT_JS_DEPTH_MAX; i++) z[n++] = '[';
    for (int i = 0; i < VT_JS_DEPTH_MAX; i++) z[n++] = ']';
    ASSERT_EQ(0, tokens(z, n)); /* exactly the bound */
    n = 0;
    for (int i = 0; i <= VT_JS_DEPTH_MAX; i++) z[n++] = '[';
    ASSERT_EQ(VT_JS_ERROR, tokens(z, n));
    ASSERT_CONTAINS(g_zErr, "nested deeper");
    free(z);
}

TEST(trees_and_skip)
{
    static const char z[] = "{\"skip\": {\"x\": [1, {\"y\": 2}]}, \"traceEvents\": [{\"name\": \"[memory]\", \"ts\": 10.25,"
                            " \"args\": {\"Addr\": 140000000000000, \"Bytes\": -512, \"Bytes\": 512}}, {\"ph\": \"i\"}]}";
    struct vt__src s;
    struct vt_js *j;
    struct vt_jtree t = {0};
    int tok, nEv = 0;
    int64_t i;
    double d;
    vt__src_open_mem(&s, z, sizeof z - 1);
    j = vt__js_new(&s);
    ASSERT_EQ(VT_JS_OBJECT, vt__js_next(j));
    ASSERT_EQ(VT_JS_KEY, vt__js_next(j));
    ASSERT_STREQ("skip", vt__js_text(j, NULL));
    ASSERT_EQ(VT_JS_OBJECT, vt__js_next(j));
    ASSERT_EQ(0, vt__js_skip(j));
    ASSERT_EQ(VT_JS_KEY, vt__js_next(j));
    ASSERT_STREQ("traceEvents", vt__js_text(j, NULL));
    ASSERT_EQ(VT_JS_ARRAY, vt__js_next(j));
    while ((tok = vt__js_next(j)) == VT_JS_OBJECT) {
        ASSERT_EQ(0, vt__js_read_tree(j, tok, &t));
        if (nEv++ == 0) {
            int32_t a = vt__jt_get(&t, 0, "args");
            ASSERT_STREQ("[memory]", vt__jt_str(&t, vt__jt_get(&t, 0, "name")));
            ASSERT(vt__jt_num(&t, vt__jt_get(&t, 0, "ts"), &d) && d == 10.25);
            ASSERT(vt__jt_int(&t, vt__jt_get(&t, a, "Addr"), &i) && i == 140000000000000LL);
            ASSERT(vt__jt_int(&t, vt__jt_get(&t, a, "Bytes"), &i) && i == 512); /* the last of a repeated key */
            ASSERT_EQ(-1, vt__jt_get(&t, a, "Total Allocated"));
            ASSERT(!vt__jt_int(&t, vt__jt_get(&t, 0, "ts"), &i)); /* 10.25 is not an integer */
        } else {
            ASSERT_STREQ("i", vt__jt_str(&t, vt__jt_get(&t, 0, "ph")));
        }
    }
    ASSERT_EQ(VT_JS_ARRAY_END, tok);
    ASSERT_EQ(2, nEv);
    ASSERT_EQ(VT_JS_OBJECT_END, vt__js_next(j));
    ASSERT_EQ(VT_JS_EOF, vt__js_next(j));
    vt__jtree_free(&t);
    vt__js_free(j);
}

/* vt__jt_pick finds what vt__jt_get finds, for names of every length up to 24 among names that differ
 * from them in one byte only (first, middle, last) or in length, and for names that are not members. */
TEST(pick_agrees_with_get)
{
    static const char zAlpha[] = "abcdefghijklmnopqrstuvwx";
    static char azName[24][32];
    const char *az[26];
    char zDoc[8192];
    size_t n = 0;
    struct vt__src s;
    struct vt_js *j;
    struct vt_jtree t = {0};
    struct vt_jkeys k;
    int32_t aOut[26];
    int v = 0;
    n += (size_t)snprintf(zDoc + n, sizeof zDoc - n, "{");
    for (int len = 1; len <= 24; len++) {
        char zVar[32];
        snprintf(azName[len - 1], sizeof azName[0], "%.*s", len, zAlpha);
        az[len - 1] = azName[len - 1];
        for (int var = 0; var < 4; var++) { /* the name, then one byte changed at 0, len/2, len - 1 */
            snprintf(zVar, sizeof zVar, "%s", azName[len - 1]);
            if (var > 0) zVar[var == 1 ? 0 : var == 2 ? len / 2 : len - 1] = 'Z';
            n += (size_t)snprintf(zDoc + n, sizeof zDoc - n, "%s\"%s\": %d", v ? ", " : "", zVar, v);
            v++;
        }
    }
    n += (size_t)snprintf(zDoc + n, sizeof zDoc - n, ", \"abc\": -1}"); /* repeated: the last one counts */
    az[24] = "abcdefghijklmnopqrstuvwxy"; /* longer than every member */
    az[25] = "Zb";
    ASSERT_EQ(0, vt__jt_keys(&k, az, 26));
    vt__src_open_mem(&s, zDoc, n);
    j = vt__js_new(&s);
    ASSERT_EQ(0, vt__js_read_tree(j, vt__js_next(j), &t));
    vt__jt_pick(&t, 0, &k, aOut);
    for (int m = 0; m < 26; m++) {
        int64_t i;
        ASSERT_EQ(vt__jt_get(&t, 0, az[m]), aOut[m]);
        if (m < 24) ASSERT(vt__jt_int(&t, aOut[m], &i) && i == (m == 2 ? -1 : 4 * m));
    }
    ASSERT_EQ(-1, aOut[24]);
    ASSERT(aOut[25] >= 0); /* "Zb": the first byte of "ab" changed */
    vt__jtree_free(&t);
    vt__js_free(j);
}

/* Node i of t written out (type and value, members and elements in order) into f. */
static void describe(FILE *f, const struct vt_jtree *t, int32_t i)
{
    if (i < 0) {
        fputs("-", f);
        return;
    }
    switch (t->a[i].type) {
    case VT_JN_NULL: fputs("N", f); break;
    case VT_JN_BOOL: fputs(t->a[i].i ? "T" : "F", f); break;
    case VT_JN_NUM: fprintf(f, "%d<%.17g,%lld>", t->a[i].bInt, t->a[i].d, (long long)t->a[i].i); break;
    case VT_JN_STR: fprintf(f, "s%u<%s>", t->a[i].nStr, vt__jt_str(t, i)); break;
    default:
        fputc(t->a[i].type == VT_JN_OBJ ? '{' : '[', f);
        for (int32_t c = t->a[i].child; c >= 0; c = t->a[c].next) describe(f, t, c);
        fputc(t->a[i].type == VT_JN_OBJ ? '}' : ']', f);
    }
}

/*
 * Read z (n bytes: an array of values) twice, each element as a tree: picked from the whole tree
 * (vt__jt_pick on the element, then on its member "args"), and read with the same names as a
 * selection. The members found, written out, go to g_zPick (first reading) and g_zSel (second);
 * returns 0 or VT_JS_ERROR, the errors of both readings in g_zErr and g_zSelErr.
 */
static char g_zPick[4 << 20], g_zSel[4 << 20], g_zSelErr[256];
static int pick_and_select(const char *z, size_t n)
{
    static const char *const azTop[] = {"name", "args", "ts", "Total", "a\"b"};
    static const char *const azArg[] = {"Addr", "Total Allocated", "Total", "name"};
    struct vt_jkeys kTop, kArg;
    int32_t aTop[5], aArg[4];
    const struct vt_jsel *apSub[5] = {NULL, NULL, NULL, NULL, NULL};
    struct vt_jsel selArg = {&kArg, aArg, NULL}, selTop = {&kTop, aTop, apSub};
    int rc[2] = {0, 0};
    ASSERT_EQ(0, vt__jt_keys(&kTop, azTop, 5));
    ASSERT_EQ(0, vt__jt_keys(&kArg, azArg, 4));
    apSub[1] = &selArg;
    for (int pass = 0; pass < 2; pass++) {
        struct vt__src s;
        struct vt_js *j;
        struct vt_jtree t = {0};
        FILE *f = pass ? fmemopen(g_zSel, sizeof g_zSel, "w") : fmemopen(g_zPick, sizeof g_zPick, "w");
        int tok;
        ASSERT(f != NULL);
        vt__src_open_mem(&s, z, n);
        j = vt__js_new(&s);
        ASSERT(j != NULL);
        tok = vt__js_next(j);
        if (tok != VT_JS_ARRAY) rc[pass] = VT_JS_ERROR;
        while (rc[pass] == 0 && (tok = vt__js_next(j)) != VT_JS_ARRAY_END) {
            if (tok == VT_JS_ERROR || (pass ? vt__js_read_tree_sel(j, tok, &t, &selTop) : vt__js_read_tree(j, tok, &t))) {
                rc[pass] = VT_JS_ERROR;
                break;
            }
            if (!pass) {
                vt__jt_pick(&t, 0, &kTop, aTop);
                vt__jt_pick(&t, aTop[1], &kArg, aArg);
            }
            for (int m = 0; m < 5; m++) /* args: its type (a selection keeps only the members selected) */
                if (m == 1 && aTop[m] >= 0) fprintf(f, "<%d>", t.a[aTop[m]].type);
                else describe(f, &t, aTop[m]);
            fputc('|', f);
            for (int m = 0; m < 4; m++) describe(f, &t, aArg[m]);
            fputc('\n', f);
        }
        if (rc[pass] == 0 && vt__js_next(j) != VT_JS_EOF) rc[pass] = VT_JS_ERROR;
        snprintf(pass ? g_zSelErr : g_zErr, sizeof g_zErr, "%s", vt__js_errmsg(j));
        fclose(f);
        vt__jtree_free(&t);
        vt__js_free(j);
    }
    ASSERT_EQ(rc[0], rc[1]);
    return rc[0];
}

/* A selection finds what vt__jt_pick finds on the whole tree, and refuses what the whole tree refuses
 * with the same message: repeated members, escaped names, args not an object or repeated, members
 * dropped with containers and escapes inside, names that begin other names, values across refills. */
TEST(selection_agrees_with_pick)
{
    static const char zDoc[] =
        "[{\"name\": \"k\", \"ts\": 1.5, \"args\": {\"Addr\": 7, \"Total\": 3, \"Total Allocated\": 9}},"
        " {\"na\\u006de\": \"esc\", \"nameX\": 1, \"nam\": 2, \"args\": 5},"
        " {\"args\": {\"Addr\": 1}, \"args\": \"s\"},"
        " {\"args\": {\"Addr\": 1}, \"args\": {\"Total\": [1, {\"a\": 2}]}, \"x\": {\"y\": [\"\\n\", {\"z\": null}]}},"
        " {\"a\\\"b\": true, \"name\": \"a\", \"name\": \"b\", \"skip\": \"q\\\"\\u00e9\", \"args\": {}},"
        " {}, [1, {\"name\": 2}], \"top\", 42, null,"
        " {\"\": 1, \"Total\": {\"args\": {\"Addr\": 3}}, \"args\": {\"name\": {\"k\": [true, false, NaN]}}}]";
    static const char *const azBad[] = {
        "[{\"skip\": [1, 2}]", "[{\"skip\": {\"a\" 1}}]", "[{\"name\": 1,}]", "[{\"skip\": \"a\\x\"}]",
        "[{\"args\": {\"Addr\": 01}}]", "[{\"zz\": tru}]", "[{\"zz\": 1 2}]", "[{\"na\\q\": 1}]",
    };
    char *zBig;
    size_t n = 0;
    ASSERT_EQ(0, pick_and_select(zDoc, sizeof zDoc - 1));
    ASSERT_STREQ(g_zPick, g_zSel);
    ASSERT_CONTAINS(g_zSel, "s3<esc>");
    for (size_t i = 0; i < sizeof azBad / sizeof azBad[0]; i++) {
        if (pick_and_select(azBad[i], strlen(azBad[i])) != VT_JS_ERROR) VT__FAIL("accepted: %s", azBad[i]);
        ASSERT_STREQ(g_zErr, g_zSelErr);
    }
    for (size_t k = 0; k < sizeof zDoc - 2; k++) { /* every prefix: the same error */
        if (pick_and_select(zDoc, k) != VT_JS_ERROR) VT__FAIL("prefix of %zu bytes accepted", k);
        ASSERT_STREQ(g_zErr, g_zSelErr);
    }
    /* 3 MiB of events whose names and values cross the reader's 1 MiB refills at every offset */
    zBig = malloc(3 << 20);
    ASSERT(zBig != NULL);
    n += (size_t)sprintf(zBig, "[");
    for (int e = 0; n < (3 << 20) - 400; e++)
        n += (size_t)sprintf(zBig + n, "%s{\"skip%.*s\": \"%.*s\\u00e9\", \"name\": \"n%d\", \"args\": {\"Total Allocated\": %d, "
                             "\"Addr\": %d.5, \"pad\": [%d]}, \"ts\": %d}", e ? "," : "", e % 7, "abcdefg", e % 13,
                             "xxxxxxxxxxxxx", e, e, e, e, e);
    n += (size_t)sprintf(zBig + n, "]");
    if (pick_and_select(zBig, n) != 0) VT__FAIL("%s", g_zErr);
    ASSERT(strlen(g_zSel) > (1 << 20) && strlen(g_zSel) < sizeof g_zSel - 1); /* all of it written */
    ASSERT_STREQ(g_zPick, g_zSel);
    free(zBig);
}

#if VT_HAVE_ZLIB
/* A gzip file and the same file cut short: the first reads, the second fails as truncated gzip data. */
TEST(gzip_files)
{
    char zPath[4096], *zBuf;
    const char *zTmp = getenv("VT_TEST_TMP");
    gzFile gz;
    FILE *f;
    long n;
    struct vt__src s;
    struct vt_js *j;
    int tok, nNum = 0;
    snprintf(zPath, sizeof zPath, "%s/t.json.gz", zTmp ? zTmp : "/tmp");
    gz = gzopen(zPath, "wb");
    ASSERT(gz != NULL);
    gzputs(gz, "[");
    for (int i = 0; i < 100000; i++) gzprintf(gz, "%s%d", i ? "," : "", i);
    gzputs(gz, "]");
    ASSERT_EQ(Z_OK, gzclose(gz));
    ASSERT_EQ(0, vt__src_open_file(&s, zPath));
    j = vt__js_new(&s);
    while ((tok = vt__js_next(j)) > 0) nNum += tok == VT_JS_NUMBER;
    ASSERT_EQ(VT_JS_EOF, tok);
    ASSERT_EQ(100000, nNum);
    vt__js_free(j);
    vt__src_close(&s);
    /* cut the file in half */
    f = fopen(zPath, "rb");
    ASSERT(f != NULL);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    zBuf = malloc((size_t)n);
    fseek(f, 0, SEEK_SET);
    ASSERT_EQ(n, (long)fread(zBuf, 1, (size_t)n, f));
    fclose(f);
    f = fopen(zPath, "wb");
    fwrite(zBuf, 1, (size_t)n / 2, f);
    fclose(f);
    free(zBuf);
    ASSERT_EQ(0, vt__src_open_file(&s, zPath));
    j = vt__js_new(&s);
    while ((tok = vt__js_next(j)) > 0) {}
    ASSERT_EQ(VT_JS_ERROR, tok);
    ASSERT_CONTAINS(vt__js_errmsg(j), "cannot read input");
    vt__js_free(j);
    vt__src_close(&s);
}
#else
/* Built without zlib: a gzip file (its first bytes) is refused with the reason, a plain one read. */
TEST(gzip_files)
{
    static const unsigned char aGz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, '[', ']'};
    char zPath[4096];
    const char *zTmp = getenv("VT_TEST_TMP");
    FILE *f;
    struct vt__src s;
    struct vt_js *j;
    snprintf(zPath, sizeof zPath, "%s/t.json.gz", zTmp ? zTmp : "/tmp");
    f = fopen(zPath, "wb");
    ASSERT(f != NULL);
    ASSERT_EQ(sizeof aGz, fwrite(aGz, 1, sizeof aGz, f));
    fclose(f);
    ASSERT_EQ(0, vt__src_can_gunzip());
    ASSERT_EQ(0, vt__src_open_file(&s, zPath));
    j = vt__js_new(&s);
    ASSERT_EQ(VT_JS_ERROR, vt__js_next(j));
    ASSERT_CONTAINS(vt__js_errmsg(j), "built without zlib");
    vt__js_free(j);
    vt__src_close(&s);
    f = fopen(zPath, "wb");
    ASSERT(f != NULL);
    fputs(" [1, 2]", f);
    fclose(f);
    ASSERT_EQ(0, vt__src_open_file(&s, zPath));
    j = vt__js_new(&s);
    ASSERT_EQ(VT_JS_ARRAY, vt__js_next(j));
    vt__js_free(j);
    vt__src_close(&s);
}
#endif

/* The real torch.profiler traces, when present: every trace event read as a tree (counts from Python's json). */
TEST(real_kineto_traces)
{
    static const struct {
        const char *zFile;
        int nEvents, nMemory;
    } a[] = {{"hta_df_index_resolver_v100_ddp_memory.json.gz", 216092, 28010},
             {"kineto_tbplugin_resnet50_v100_memory_noaddr.pt.trace.json.gz", 75718, 12838}};
    const char *zDir = getenv("VT_REAL_DATA");
    int nRead = 0;
    if (!vt__src_can_gunzip()) SKIP("built without zlib: the real traces are gzip'd");
    for (size_t k = 0; k < sizeof a / sizeof a[0]; k++) {
        char zPath[4096];
        struct vt__src s;
        struct vt_js *j;
        struct vt_jtree t = {0};
        int tok, nEv = 0, nMem = 0;
        snprintf(zPath, sizeof zPath, "%s/%s", zDir ? zDir : "", a[k].zFile);
        if (!zDir || !zDir[0] || vt__src_open_file(&s, zPath) != 0) continue;
        j = vt__js_new(&s);
        ASSERT_EQ(VT_JS_OBJECT, vt__js_next(j));
        while ((tok = vt__js_next(j)) == VT_JS_KEY) {
            int bEvents = !strcmp(vt__js_text(j, NULL), "traceEvents");
            tok = vt__js_next(j);
            if (bEvents) {
                ASSERT_EQ(VT_JS_ARRAY, tok);
                while ((tok = vt__js_next(j)) == VT_JS_OBJECT) {
                    const char *zName;
                    ASSERT_EQ(0, vt__js_read_tree(j, tok, &t));
                    zName = vt__jt_str(&t, vt__jt_get(&t, 0, "name"));
                    nEv++;
                    nMem += zName && !strcmp(zName, "[memory]");
                }
                ASSERT_EQ(VT_JS_ARRAY_END, tok);
            } else if (tok == VT_JS_OBJECT || tok == VT_JS_ARRAY) {
                ASSERT_EQ(0, vt__js_skip(j));
            }
        }
        ASSERT_EQ(VT_JS_OBJECT_END, tok);
        ASSERT_EQ(VT_JS_EOF, vt__js_next(j));
        ASSERT_EQ(a[k].nEvents, nEv);
        ASSERT_EQ(a[k].nMemory, nMem);
        vt__jtree_free(&t);
        vt__js_free(j);
        vt__src_close(&s);
        nRead++;
    }
    if (!nRead) SKIP("the real files are not here: configure with -DVT_REAL_DATA=DIR (README.md, Tests)");
}

VT_TEST_LIST(T(tokens_of_every_kind) T(string_escapes) T(malformed_documents) T(trees_agree_with_tokens)
                 T(truncation_at_every_byte)
                 T(nesting_bound) T(trees_and_skip) T(pick_agrees_with_get) T(selection_agrees_with_pick)
                 T(gzip_files) T(real_kineto_traces))
