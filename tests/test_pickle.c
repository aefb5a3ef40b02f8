/* Tests of the restricted streaming unpickler: every opcode read, hostile ones refused, truncation, claiming, bounds. */
#include "vt_test.h"

#include "pickle.h"

/* A canonical text of a value: N T F ints BIG floats s<len>:text b<len>:bytes [list] (tuple) {k:v}. */
static void dump(FILE *f, const struct vt_pkval *v)
{
    size_t i;
    const struct vt_pkval *k, *x;
    switch (v->type) {
    case VT_PK_NONE: fputc('N', f); break;
    case VT_PK_BOOL: fputc(v->u.i ? 'T' : 'F', f); break;
    case VT_PK_INT: fprintf(f, "%lld", (long long)v->u.i); break;
    case VT_PK_BIGINT: fputs("BIG", f); break;
    case VT_PK_FLOAT: fprintf(f, "%.17g", v->u.f); break;
    case VT_PK_STR:
    case VT_PK_BYTES:
        fprintf(f, "%c%zu:", v->type == VT_PK_STR ? 's' : 'b', v->u.p->n);
        fwrite(v->u.p->u.z, 1, v->u.p->n, f);
        break;
    case VT_PK_LIST:
    case VT_PK_TUPLE:
        fputc(v->type == VT_PK_LIST ? '[' : '(', f);
        for (i = 0; (x = vt__pk_item(v, i)) != NULL; i++) {
            if (i) fputc(',', f);
            dump(f, x);
        }
        fputc(v->type == VT_PK_LIST ? ']' : ')', f);
        break;
    case VT_PK_DICT:
        fputc('{', f);
        for (i = 0; vt__pk_pair(v, i, &k, &x); i++) {
            if (i) fputc(',', f);
            dump(f, k);
            fputc(':', f);
            dump(f, x);
        }
        fputc('}', f);
        break;
    }
}

static char g_zOut[8192];
static char g_zErr[256];

/* Read n bytes with callback x, after a memo-use index pass when bIndex; the canonical text in g_zOut,
 * the message in g_zErr. Returns vt__pk_run's code. */
static int parse_one(const void *pData, size_t n, vt_pk_child_fn x, void *pArg, int bIndex)
{
    struct vt__src s, pre;
    struct vt_pkval root;
    struct vt_pk *p;
    int rc;
    vt__src_open_mem(&s, pData, n);
    p = vt__pk_new(&s, x, pArg);
    ASSERT(p != NULL);
    if (bIndex) {
        vt__src_open_mem(&pre, pData, n);
        ASSERT_EQ(VT_PK_OK, vt__pk_index(p, &pre));
    }
    rc = vt__pk_run(p, &root);
    g_zOut[0] = 0;
    snprintf(g_zErr, sizeof g_zErr, "%s", vt__pk_errmsg(p));
    if (rc == VT_PK_OK) {
        FILE *f = fmemopen(g_zOut, sizeof g_zOut, "w");
        ASSERT(f != NULL);
        dump(f, &root);
        fclose(f);
    }
    vt__pk_free(p);
    return rc;
}

static int parse_cb(const void *pData, size_t n, vt_pk_child_fn x, void *pArg)
{
    return parse_one(pData, n, x, pArg, 0);
}

/* Read n bytes without a callback, with and without the memo-use index: both must give the same
 * value, code and message (the index changes what is kept, never what is read). */
static int parse(const void *pData, size_t n)
{
    static char zOut[sizeof g_zOut], zErr[sizeof g_zErr];
    int rc = parse_one(pData, n, NULL, NULL, 1);
    memcpy(zOut, g_zOut, sizeof zOut);
    memcpy(zErr, g_zErr, sizeof zErr);
    ASSERT_EQ(rc, parse_one(pData, n, NULL, NULL, 0));
    ASSERT_STREQ(g_zOut, zOut);
    ASSERT_STREQ(g_zErr, zErr);
    return rc;
}

#define PARSE(lit) parse(lit, sizeof(lit) - 1)

/* pickle.dumps(obj, protocol=3) of the value in EXPECT_MIX: BINUNICODE, BINPUT, MARK, BININT/1/2, LONG1 (small,
 * negative, beyond int64), NEWTRUE/FALSE, NONE, BINFLOAT, SHORT_BINBYTES, TUPLE1/2/3, TUPLE, EMPTY_TUPLE,
 * APPENDS, SETITEM, SETITEMS, EMPTY_DICT, EMPTY_LIST, STOP. */
static const char P3_MIX[] =
    "\x80\x03\x7d\x71\x00\x28\x58\x01\x00\x00\x00\x61\x71\x01\x5d\x71\x02\x28\x4b\x01\x4a\xfe\xff\xff\xff\x4d\x2c"
    "\x01\x4a\x70\x11\x01\x00\x4a\x90\xee\xfe\xff\x8a\x06\x00\x00\x00\x00\x00\x01\x8a\x06\x00\x00\x00\x00\x00\xff"
    "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01\x88\x89\x4e\x47\x3f\xf8\x00\x00\x00\x00\x00\x00\x58\x03\x00\x00"
    "\x00\x78\x78\x78\x71\x03\x43\x02\x79\x7a\x71\x04\x4b\x01\x85\x71\x05\x4b\x01\x4b\x02\x86\x71\x06\x4b\x01\x4b"
    "\x02\x4b\x03\x87\x71\x07\x28\x4b\x01\x4b\x02\x4b\x03\x4b\x04\x74\x71\x08\x29\x65\x58\x01\x00\x00\x00\x62\x71"
    "\x09\x7d\x71\x0a\x58\x01\x00\x00\x00\x6b\x71\x0b\x58\x01\x00\x00\x00\x76\x71\x0c\x73\x75\x2e";
/* The same value with protocol 5: FRAME, MEMOIZE, SHORT_BINUNICODE. */
static const char P5_MIX[] =
    "\x80\x05\x95\x80\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x01\x61\x94\x5d\x94\x28\x4b\x01\x4a\xfe\xff\xff\xff\x4d\x2c\x01\x4a\x70\x11\x01\x00"
    "\x4a\x90\xee\xfe\xff\x8a\x06\x00\x00\x00\x00\x00\x01\x8a\x06\x00\x00\x00\x00\x00\xff\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01\x88\x89\x4e\x47"
    "\x3f\xf8\x00\x00\x00\x00\x00\x00\x8c\x03\x78\x78\x78\x94\x43\x02\x79\x7a\x94\x4b\x01\x85\x94\x4b\x01\x4b\x02\x86\x94\x4b\x01\x4b\x02\x4b\x03\x87"
    "\x94\x28\x4b\x01\x4b\x02\x4b\x03\x4b\x04\x74\x94\x29\x65\x8c\x01\x62\x94\x7d\x94\x8c\x01\x6b\x94\x8c\x01\x76\x94\x73\x75\x2e";
#define EXPECT_MIX                                                                                                 \
    "{s1:a:[1,-2,300,70000,-70000,1099511627776,-1099511627776,BIG,T,F,N,1.5,s3:xxx,b2:yz,(1),(1,2),(1,2,3),(1,2," \
    "3,4),()],s1:b:{s1:k:s1:v}}"

TEST(python_protocols_3_and_5)
{
    ASSERT_EQ(VT_PK_OK, parse(P3_MIX, sizeof P3_MIX - 1));
    ASSERT_STREQ(EXPECT_MIX, g_zOut);
    ASSERT_EQ(VT_PK_OK, parse(P5_MIX, sizeof P5_MIX - 1));
    ASSERT_STREQ(EXPECT_MIX, g_zOut);
}

TEST(remaining_opcodes)
{
    /* protocol 2 with LONG_BINPUT, LONG_BINGET, BINGET, DUP, POP, POP_MARK, APPEND */
    ASSERT_EQ(VT_PK_OK, parse("\x80\x02\x5d\x72\x00\x00\x00\x00\x4b\x07\x71\x01\x61\x28\x4b\x01\x4b\x02\x31\x68\x01\x32\x30\x61\x6a\x00\x00\x00\x00\x30\x2e", 31));
    ASSERT_STREQ("[7,7]", g_zOut);
    /* LONG4, BINUNICODE8, BINBYTES8, BYTEARRAY8 + READONLY_BUFFER, BINBYTES, SHORT_BINSTRING, BINSTRING */
    ASSERT_EQ(VT_PK_OK, PARSE("\x80\x05(\x8b\x02\x00\x00\x00\xff\x7f"
                              "\x8d\x02\x00\x00\x00\x00\x00\x00\x00hi"
                              "\x8e\x01\x00\x00\x00\x00\x00\x00\x00Z"
                              "\x96\x01\x00\x00\x00\x00\x00\x00\x00W\x98"
                              "B\x02\x00\x00\x00" "ab"
                              "U\x02op"
                              "T\x01\x00\x00\x00qt."));
    ASSERT_STREQ("(32767,s2:hi,b1:Z,b1:W,b2:ab,s2:op,s1:q)", g_zOut);
    /* EMPTY_SET + ADDITEMS, FROZENSET, DICT, LIST, SETITEM on an empty dict */
    ASSERT_EQ(VT_PK_OK, PARSE("\x80\x04(\x8f(K\x01K\x02\x90(K\x03\x91(K\x04K\x05" "d(K\x06l}K\x07K\x08st."));
    ASSERT_STREQ("([1,2],[3],{4:5},[6],{7:8})", g_zOut);
    /* LONG1 of zero length is 0; 8 bytes hold INT64_MIN; 9 bytes of sign extension still fit */
    ASSERT_EQ(VT_PK_OK, PARSE("\x80\x02(\x8a\x00\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80"
                              "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xfft."));
    ASSERT_STREQ("(0,-9223372036854775808,-1)", g_zOut);
}

TEST(hostile_opcodes_refused)
{
    static const struct {
        const char *z;
        size_t n;
        const char *zName;
    } a[] = {
#define H(lit, name) {lit, sizeof(lit) - 1, name}
        H("\x80\x02""c__builtin__\neval\n(X\x04\x00\x00\x00" "exitq\x00tR.", "GLOBAL"),
        H("\x80\x04\x8c\x08""builtins\x94\x8c\x04""eval\x94\x93\x94.", "STACK_GLOBAL"),
        H("\x80\x02NNR.", "REDUCE"),
        H("\x80\x02}Nb.", "BUILD"),
        H("\x80\x02(i__main__\nC\n.", "INST"),
        H("\x80\x02(No.", "OBJ"),
        H("\x80\x02N)\x81.", "NEWOBJ"),
        H("\x80\x04N)}\x92.", "NEWOBJ_EX"),
        H("\x80\x02Pid\n.", "PERSID"),
        H("\x80\x02NQ.", "BINPERSID"),
        H("\x80\x02\x82\x01.", "EXT1"),
        H("\x80\x02\x83\x01\x00.", "EXT2"),
        H("\x80\x02\x84\x01\x00\x00\x00.", "EXT4"),
#undef H
    };
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        int rc = parse(a[i].z, a[i].n);
        if (rc != VT_PK_EHOSTILE) VT__FAIL("%s: expected refusal, got %d (%s)", a[i].zName, rc, g_zErr);
        ASSERT_CONTAINS(g_zErr, a[i].zName);
        ASSERT_CONTAINS(g_zErr, "refused");
    }
}

TEST(unsupported_and_malformed)
{
    ASSERT_EQ(VT_PK_ENEWER, PARSE("\x80\x06N."));
    ASSERT_CONTAINS(g_zErr, "protocol 6");
    ASSERT_EQ(VT_PK_EUNSUPPORTED, PARSE("\x80\x05\x97."));      /* NEXT_BUFFER */
    ASSERT_EQ(VT_PK_EUNSUPPORTED, PARSE("\x80\x02I1\n."));      /* protocol 0 INT */
    ASSERT_EQ(VT_PK_ECORRUPT, PARSE("\x80\x02\xff."));          /* no such opcode */
    ASSERT_CONTAINS(g_zErr, "invalid opcode 0xff");
    ASSERT_CONTAINS(g_zErr, "offset 2");
    ASSERT_EQ(VT_PK_ECORRUPT, PARSE("\x80\x02."));              /* STOP on an empty stack */
    ASSERT_EQ(VT_PK_ECORRUPT, PARSE("\x80\x02NN."));            /* two values left */
    ASSERT_EQ(VT_PK_ECORRUPT, PARSE("\x80\x02" "e."));             /* APPENDS without MARK */
    ASSERT_EQ(VT_PK_ECORRUPT, PARSE("\x80\x02N(Ne."));          /* APPENDS on None */
    ASSERT_EQ(VT_PK_ECORRUPT, PARSE("\x80\x02}(Nu."));          /* SETITEMS, odd */
    ASSERT_EQ(VT_PK_ECORRUPT, PARSE("\x80\x02](Na."));          /* APPEND across a mark */
    ASSERT_EQ(VT_PK_ECORRUPT, PARSE("\x80\x02h\x00."));         /* BINGET of nothing */
    ASSERT_EQ(VT_PK_ECORRUPT, PARSE("\x80\x02Nq\x05."));        /* memo index out of order */
    ASSERT_CONTAINS(g_zErr, "out of order");
    ASSERT_EQ(VT_PK_ECORRUPT, PARSE("\x80\x02\x8b\xff\xff\xff\xff.")); /* LONG4, negative length */
    ASSERT_EQ(VT_PK_ECORRUPT, PARSE("\x80\x02K\x01\x98."));     /* READONLY_BUFFER on an int */
    ASSERT_EQ(VT_PK_ETRUNC, parse("", 0));
    ASSERT_CONTAINS(g_zErr, "empty input");
    /* a 2^60-byte string in a 20-byte input fails as truncated, without reserving the memory */
    ASSERT_EQ(VT_PK_EUNSUPPORTED, PARSE("\x80\x04\x8d\x00\x00\x00\x00\x00\x00\x00\x10xx."));
    ASSERT_EQ(VT_PK_ETRUNC, PARSE("\x80\x04\x8d\x00\x00\x00\x30\x00\x00\x00\x00xx."));
}

TEST(truncation_at_every_byte)
{
    for (size_t n = 0; n < sizeof P5_MIX - 1; n++) {
        int rc = parse(P5_MIX, n);
        if (rc != VT_PK_ETRUNC) VT__FAIL("prefix of %zu bytes: expected truncation, got %d (%s)", n, rc, g_zErr);
    }
    for (size_t n = 0; n < sizeof P3_MIX - 1; n++) ASSERT_EQ(VT_PK_ETRUNC, parse(P3_MIX, n));
    ASSERT_EQ(VT_PK_OK, parse(P5_MIX, sizeof P5_MIX - 1));
}

TEST(cycles_and_deep_nesting_are_freed)
{
    /* a list appended to itself (BINGET of the list under construction), then a deep chain */
    static char a[600000];
    size_t n = 0;
    {
        static const char z[] = "\x80\x04]\x94h\x00" "a.";
        struct vt__src s;
        struct vt_pkval root;
        struct vt_pk *p;
        vt__src_open_mem(&s, z, sizeof z - 1);
        p = vt__pk_new(&s, NULL, NULL);
        ASSERT_EQ(VT_PK_OK, vt__pk_run(p, &root));
        ASSERT_EQ(VT_PK_LIST, root.type);
        ASSERT(vt__pk_item(&root, 0)->u.p == root.u.p); /* it holds itself */
        vt__pk_free(p);
    }
    /* 100000 nested lists: [[[...]]] built by EMPTY_LIST x N then APPEND x N (freed without recursion) */
    a[n++] = '\x80';
    a[n++] = 4;
    for (int i = 0; i < 100000; i++) a[n++] = ']';
    for (int i = 0; i < 99999; i++) a[n++] = 'a';
    a[n++] = '.';
    {
        struct vt__src s;
        struct vt_pkval root;
        struct vt_pk *p;
        vt__src_open_mem(&s, a, n);
        p = vt__pk_new(&s, NULL, NULL);
        ASSERT_EQ(VT_PK_OK, vt__pk_run(p, &root));
        ASSERT_EQ(VT_PK_LIST, root.type);
        ASSERT_EQ(1, vt__pk_len(&root));
        vt__pk_free(p);
    }
}

/* Claims every dict added to a list; counts them and the sum of their "v". */
struct claim {
    int n;
    int64_t sum;
};
static int claim_dicts(void *pArg, struct vt_pkobj *pParent, const struct vt_pkval *pKey, struct vt_pkval *pChild)
{
    struct claim *c = pArg;
    int64_t v = 0;
    (void)pKey;
    if (pParent->type != VT_PK_LIST || pChild->type != VT_PK_DICT) return VT_PK_KEEP;
    if (vt__pk_int(vt__pk_get(pChild, "v"), &v)) c->sum += v;
    c->n++;
    return VT_PK_CLAIM;
}

static int stop_at_second(void *pArg, struct vt_pkobj *pParent, const struct vt_pkval *pKey, struct vt_pkval *pChild)
{
    (void)pParent, (void)pKey, (void)pChild;
    return ++*(int *)pArg == 2 ? -1 : VT_PK_KEEP;
}

TEST(claimed_children_leave_container_and_memo)
{
    struct claim c = {0, 0};
    int n = 0;
    /* [{'v': 1}, {'v': 2}, 5] with the dicts memoized */
    static const char z[] = "\x80\x04]\x94(}\x94\x8c\x01v\x94K\x01s}\x94h\x02K\x02sK\x05" "e.";
    ASSERT_EQ(VT_PK_OK, parse_cb(z, sizeof z - 1, claim_dicts, &c));
    ASSERT_EQ(2, c.n);
    ASSERT_EQ(3, c.sum);
    ASSERT_STREQ("[5]", g_zOut);
    /* a later reference to a claimed dict is a clear error, not a read of freed memory */
    static const char zAgain[] = "\x80\x04](}\x94\x8c\x01v\x94K\x01se(h\x00" "e.";
    c.n = 0;
    ASSERT_EQ(VT_PK_EUNSUPPORTED, parse_cb(zAgain, sizeof zAgain - 1, claim_dicts, &c));
    ASSERT_CONTAINS(g_zErr, "already consumed");
    /* the callback can stop the reader */
    ASSERT_EQ(VT_PK_ECALLBACK, parse_cb(P5_MIX, sizeof P5_MIX - 1, stop_at_second, &n));
}

/* Streaming: 200000 claimed event dicts sharing one memoized frames list keep the live set small. */
TEST(streaming_keeps_little_alive)
{
    size_t cap = 200000 * 24 + 4096, n = 0;
    char *a = malloc(cap);
    struct claim c = {0, 0};
    struct vt__src s;
    struct vt_pkval root;
    struct vt_pk *p;
    ASSERT(a != NULL);
    memcpy(a + n, "\x80\x04]\x94(", 5); /* list, memo 0 */
    n += 5;
    /* memo 1 'v', memo 2 frames list ['f'] (memo 3 'f') */
    static const char zHead[] = "\x8c\x01v\x94" "0]\x94\x8c\x01" "f\x94" "a0";
    memcpy(a + n, zHead, sizeof zHead - 1);
    n += sizeof zHead - 1;
    for (int i = 0; i < 200000; i++) {
        if (i && i % 1000 == 0) { /* batches of 1000, as Python writes them */
            memcpy(a + n, "e(", 2);
            n += 2;
        }
        /* {'v': 1}: EMPTY_DICT MEMOIZE MARK BINGET 1 BININT1 1 SETITEMS */
        memcpy(a + n, "}\x94(h\x01K\x01u", 8);
        n += 8;
    }
    memcpy(a + n, "e.", 2);
    n += 2;
    vt__src_open_mem(&s, a, n);
    p = vt__pk_new(&s, claim_dicts, &c);
    ASSERT_EQ(VT_PK_OK, vt__pk_run(p, &root));
    ASSERT_EQ(200000, c.n);
    ASSERT_EQ(200000, c.sum);
    ASSERT_EQ(0, vt__pk_len(&root));
    ASSERT(vt__pk_live(p) < 10); /* the list, 'v', the frames list and 'f' */
    vt__pk_free(p);
    free(a);
}

/*
 * The memo-use index: 100000 claimed event dicts, each with its own memoized frames list that the
 * next one fetches once (free_completed sharing free_requested's list, as PyTorch writes them).
 * Without the index the memo keeps every list to the end; with it each list past the first 256 memo
 * entries goes after its one fetch, and entries nothing fetches are not kept at all.
 */
TEST(index_releases_after_last_fetch)
{
    size_t cap = 100000 * 48 + 4096, n = 0;
    char *a = malloc(cap);
    ASSERT(a != NULL);
    memcpy(a + n, "\x80\x04]\x94(", 5); /* the events' list, memo 0 */
    n += 5;
    /* memo 1 'frames', memo 2 'f' (a frame) */
    memcpy(a + n, "\x8c\x06" "frames\x94" "0\x8c\x01" "f\x94" "0", 15);
    n += 15;
    for (uint32_t i = 0, memo = 3; i < 100000; i++) {
        if (i && i % 1000 == 0) {
            memcpy(a + n, "e(", 2);
            n += 2;
        }
        /* {'frames': LIST}: a new list ['f'] on even events (memo m+1), the previous event's on odd ones */
        memcpy(a + n, "}\x94h\x01", 4); /* dict (memo m), 'frames' */
        n += 4;
        if (i % 2 == 0) {
            memcpy(a + n, "]\x94h\x02" "a", 5);
            n += 5;
            memo += 2;
        } else {
            a[n++] = 'j';
            for (int k = 0; k < 4; k++) a[n++] = (char)((memo - 1) >> (8 * k));
            memo += 1;
        }
        a[n++] = 's';
    }
    memcpy(a + n, "e.", 2);
    n += 2;
    for (int bIndex = 0; bIndex < 2; bIndex++) {
        struct vt__src s, pre;
        struct vt_pkval root;
        struct claim c = {0, 0};
        struct vt_pk *p;
        vt__src_open_mem(&s, a, n);
        p = vt__pk_new(&s, claim_dicts, &c);
        if (bIndex) {
            vt__src_open_mem(&pre, a, n);
            ASSERT_EQ(VT_PK_OK, vt__pk_index(p, &pre));
        }
        ASSERT_EQ(VT_PK_OK, vt__pk_run(p, &root));
        ASSERT_EQ(100000, c.n);
        /* the events' list, 'frames', 'f', and what the first 256 entries hold (kept to the end) */
        if (bIndex) ASSERT(vt__pk_live(p) < 10 + 256);
        else ASSERT(vt__pk_live(p) > 50000);          /* every frames list, kept by the memo */
        vt__pk_free(p);
    }
    free(a);
}

/* The callback of immortal_entries_follow_the_memo: every dict added is made immortal (the reader in *pArg). */
static int keep_dicts(void *pArg, struct vt_pkobj *pParent, const struct vt_pkval *pKey, struct vt_pkval *pChild)
{
    (void)pParent;
    (void)pKey;
    if (pChild->type == VT_PK_DICT) ASSERT_EQ(1, vt__pk_keep(*(struct vt_pk **)pArg, pChild->u.p));
    return VT_PK_KEEP;
}

/* A fetch of an immortal object takes the short way (the table of immortal entries) only while the memo
 * entry still holds it: a store to the entry (here BINPUT of a new list) is what a later fetch gives. */
TEST(immortal_entries_follow_the_memo)
{
    /* [D] ; memo 0 = D ; D made immortal ; fetched twice ; memo 0 = [] ; fetched */
    static const char z[] = "\x80\x04]}\x94" "ah\x00" "ah\x00" "a]q\x00" "0h\x00" "a.";
    struct vt__src s;
    struct vt_pkval root;
    struct vt_pk *p;
    FILE *f;
    vt__src_open_mem(&s, z, sizeof z - 1);
    p = vt__pk_new(&s, keep_dicts, &p);
    ASSERT(p != NULL);
    ASSERT_EQ(VT_PK_OK, vt__pk_run(p, &root));
    f = fmemopen(g_zOut, sizeof g_zOut, "w");
    ASSERT(f != NULL);
    dump(f, &root);
    fclose(f);
    ASSERT_STREQ("[{},{},{},[]]", g_zOut);
    vt__pk_free(p);
}

/* A run of fetches met before is pushed from memory (pkrun.c): the lists it fills hold the same objects and say
 * so (the same run), and a store over one of its entries (here BINPUT of a new list) is what the next run gives. */
TEST(fetch_runs_follow_the_memo)
{
    char z[1024], zWant[1024];
    size_t n = 0, w = 0;
    struct vt__src s, pre;
    struct vt_pkval root;
    struct vt_pk *p;
    FILE *f;
    /* [D1 .. D40 (memo 1..40, made immortal), A, B, C]: A, B and C each MARK, BINGET 1 .. 40, APPENDS; between B
     * and C, memo 5 = [] */
    memcpy(z + n, "\x80\x04]\x94(", 5);
    n += 5;
    for (int i = 0; i < 40; i++) z[n++] = '}', z[n++] = (char)0x94;
    z[n++] = 'e';
    for (int k = 0; k < 3; k++) {
        if (k == 2) memcpy(z + n, "]q\x05" "0", 4), n += 4;
        memcpy(z + n, "]\x94(", 3);
        n += 3;
        for (int i = 1; i <= 40; i++) z[n++] = 'h', z[n++] = (char)i;
        z[n++] = 'e';
        z[n++] = 'a';
    }
    z[n++] = '.';
    w += (size_t)snprintf(zWant + w, sizeof zWant - w, "[");
    for (int i = 0; i < 40; i++) w += (size_t)snprintf(zWant + w, sizeof zWant - w, "{},");
    for (int k = 0; k < 3; k++) {
        w += (size_t)snprintf(zWant + w, sizeof zWant - w, "[");
        for (int i = 1; i <= 40; i++) w += (size_t)snprintf(zWant + w, sizeof zWant - w, "%s%s", k == 2 && i == 5 ? "[]" : "{}", i < 40 ? "," : "");
        w += (size_t)snprintf(zWant + w, sizeof zWant - w, "]%s", k < 2 ? "," : "]");
    }
    vt__src_open_mem(&s, z, n);
    vt__src_open_mem(&pre, z, n);
    p = vt__pk_new(&s, keep_dicts, &p);
    ASSERT(p != NULL);
    ASSERT_EQ(VT_PK_OK, vt__pk_index(p, &pre));
    ASSERT_EQ(VT_PK_OK, vt__pk_run(p, &root));
    f = fmemopen(g_zOut, sizeof g_zOut, "w");
    ASSERT(f != NULL);
    dump(f, &root);
    fclose(f);
    ASSERT_STREQ(zWant, g_zOut);
    ASSERT(vt__pk_item(&root, 40)->u.p->run != 0);
    ASSERT_EQ(vt__pk_item(&root, 40)->u.p->run, vt__pk_item(&root, 41)->u.p->run);
    ASSERT_EQ(0, vt__pk_item(&root, 42)->u.p->run);
    vt__pk_free(p);
}

/* The memo-count pass counts a run of fetches met before once and adds its later times at the end (pkindex.c):
 * entries past 255 fetched only by such runs stay until the last one (here three runs of 16 LONG_BINGETs). */
TEST(index_counts_repeated_runs)
{
    static char z[4096];
    size_t n = 0;
    memcpy(z + n, "\x80\x04]\x94(", 5);
    n += 5;
    for (int i = 0; i < 300; i++) z[n++] = ']', z[n++] = (char)0x94; /* memo 1 .. 300 */
    z[n++] = 'e';
    for (int k = 0; k < 3; k++) {
        z[n++] = ']';
        z[n++] = '(';
        for (uint32_t m = 256; m < 272; m++) {
            z[n++] = 'j';
            for (int b = 0; b < 4; b++) z[n++] = (char)(m >> (8 * b));
        }
        z[n++] = 'e';
        z[n++] = 'a';
    }
    z[n++] = '.';
    ASSERT_EQ(VT_PK_OK, parse(z, n)); /* with the index and without: the same */
    ASSERT(strstr(g_zOut, "[[],[],[],[],[],[],[],[],[],[],[],[],[],[],[],[]],[[],[],[],[],[],[],[],[],[],[],[],[],[],[],[],[]],"
                          "[[],[],[],[],[],[],[],[],[],[],[],[],[],[],[],[]]]") != NULL);
}

/* The real snapshots, when present: read whole, root keys as PyTorch writes them. */
TEST(real_snapshots)
{
    static const struct {
        const char *zFile;
        int nSeg;
    } a[] = {{"cs336_niu_fwd_bwd_200.pickle", 83},
             {"cs336_silmont2000_mem_snapshot_small.pickle", 9},
             {"flexgen_yiyi_oom_snapshot_v1format.pickle", 176}};
    const char *zDir = getenv("VT_REAL_DATA");
    int nRead = 0;
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        char zPath[4096];
        struct vt__src s;
        struct vt_pkval root;
        struct vt_pk *p;
        snprintf(zPath, sizeof zPath, "%s/%s", zDir ? zDir : "", a[i].zFile);
        if (!zDir || vt__src_open_file(&s, zPath) != 0) continue;
        p = vt__pk_new(&s, NULL, NULL);
        ASSERT_EQ(VT_PK_OK, vt__pk_run(p, &root));
        ASSERT_EQ(a[i].nSeg, vt__pk_len(vt__pk_get(&root, "segments")));
        ASSERT_EQ(1, vt__pk_len(vt__pk_get(&root, "device_traces")));
        vt__pk_free(p);
        vt__src_close(&s);
        nRead++;
    }
    if (!nRead) SKIP("the real files are not here: configure with -DVT_REAL_DATA=DIR (README.md, Tests)");
}

VT_TEST_LIST(T(python_protocols_3_and_5) T(immortal_entries_follow_the_memo) T(fetch_runs_follow_the_memo) T(index_counts_repeated_runs) T(index_releases_after_last_fetch) T(remaining_opcodes) T(hostile_opcodes_refused)
                 T(unsupported_and_malformed) T(truncation_at_every_byte) T(cycles_and_deep_nesting_are_freed)
                     T(claimed_children_leave_container_and_memo) T(streaming_keeps_little_alive) T(real_snapshots))
