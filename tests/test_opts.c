/* Tests for the option parser every subcommand uses: value forms, positionals, errors, stop mode. */
#include <stdio.h>
#include <string.h>

#include "util/opts.h"
#include "vt_test.h"

enum { O_FORMAT = 1, O_OUT, O_FLAG, O_TOP };
static const struct vt_opt aOpt[] = {
    {"format", 0, 1, O_FORMAT}, {"output", 'o', 1, O_OUT}, {"flag", 0, 0, O_FLAG}, {"top", 0, 1, O_TOP}, {NULL, 0, 0, 0}};

/* Parse argv (NULL-terminated, argv[0] the subcommand) into a summary string of what came back. */
static void parse(char **argv, int flags, char *z, size_t n)
{
    struct vt_optparse p;
    int argc = 0, c;
    size_t k = 0;
    while (argv[argc]) argc++;
    ASSERT_EQ(0, vt__opt_begin(&p, "test", argc, argv, aOpt, flags));
    while ((c = vt__opt_next(&p)) > 0) k += (size_t)snprintf(z + k, n - k, "%d=%s ", c, p.zVal ? p.zVal : "-");
    k += (size_t)snprintf(z + k, n - k, "[%d]", c);
    for (int i = 0; i < p.nArg; i++) k += (size_t)snprintf(z + k, n - k, " %s", p.azArg[i]);
    vt__opt_end(&p);
}

TEST(value_forms)
{
    char z[256];
    char *a1[] = {"analyze", "--format", "json", "t.db", "--format=html", "-o", "r.html", "-or2", "--flag", "u.db", NULL};
    parse(a1, 0, z, sizeof z);
    ASSERT_STREQ("1=json 1=html 2=r.html 2=r2 3=- [0] t.db u.db", z);
    /* "--" ends the options: what follows is positional even when it looks like one */
    char *a2[] = {"analyze", "--flag", "--", "--format", "x", NULL};
    parse(a2, 0, z, sizeof z);
    ASSERT_STREQ("3=- [0] --format x", z);
    char *a3[] = {"analyze", "-h", NULL};
    parse(a3, 0, z, sizeof z);
    ASSERT_STREQ("[-1]", z);
    char *a4[] = {"analyze", "t.db", "--help", NULL};
    parse(a4, 0, z, sizeof z);
    ASSERT_STREQ("[-1] t.db", z);
}

TEST(errors)
{
    char z[256];
    char *a1[] = {"analyze", "--nope", NULL};
    parse(a1, 0, z, sizeof z);
    ASSERT_STREQ("[-2]", z);
    char *a2[] = {"analyze", "--format", NULL};
    parse(a2, 0, z, sizeof z);
    ASSERT_STREQ("[-2]", z);
    char *a3[] = {"analyze", "-x", NULL};
    parse(a3, 0, z, sizeof z);
    ASSERT_STREQ("[-2]", z);
    char *a4[] = {"analyze", "--flag=1", NULL};
    parse(a4, 0, z, sizeof z);
    ASSERT_STREQ("[-2]", z);
}

/* With VT_OPT_STOP the first positional argument ends the options (record's command and its options). */
TEST(stop_at_command)
{
    char z[256];
    char *a1[] = {"record", "-o", "x.db", "python", "train.py", "--flag", NULL};
    parse(a1, VT_OPT_STOP, z, sizeof z);
    ASSERT_STREQ("2=x.db [0] python train.py --flag", z);
    char *a2[] = {"record", "--flag", "--", "nvcc", "-o", "a", NULL};
    parse(a2, VT_OPT_STOP, z, sizeof z);
    ASSERT_STREQ("3=- [0] nvcc -o a", z);
}

TEST(value_parsers)
{
    struct vt_optparse p;
    char *argv[] = {"analyze", "--top", "12", "--top", "99", "--top", "1x", NULL};
    long long n = 0;
    int64_t b = 0, ns = 0;
    int k = -1;
    static const char *const az[] = {"text", "json", NULL};
    ASSERT_EQ(0, vt__opt_begin(&p, "test", 7, argv, aOpt, 0));
    ASSERT_EQ(O_TOP, vt__opt_next(&p));
    ASSERT_EQ(0, vt__opt_int(&p, 1, 32, &n));
    ASSERT_EQ(12, n);
    ASSERT_EQ(O_TOP, vt__opt_next(&p));
    ASSERT_EQ(-1, vt__opt_int(&p, 1, 32, &n));
    ASSERT_EQ(O_TOP, vt__opt_next(&p));
    ASSERT_EQ(-1, vt__opt_int(&p, 1, 32, &n));
    p.zVal = "1.5G";
    ASSERT_EQ(0, vt__opt_bytes(&p, &b));
    ASSERT_EQ((int64_t)3 << 29, b);
    p.zVal = "64KiB";
    ASSERT_EQ(0, vt__opt_bytes(&p, &b));
    ASSERT_EQ(65536, b);
    p.zVal = "12Q";
    ASSERT_EQ(-1, vt__opt_bytes(&p, &b));
    p.zVal = "2.5";
    ASSERT_EQ(0, vt__opt_seconds(&p, &ns));
    ASSERT_EQ(2500000000LL, ns);
    p.zVal = "-1";
    ASSERT_EQ(-1, vt__opt_seconds(&p, &ns));
    p.zVal = "2.5";
    ASSERT_EQ(0, vt__opt_time(&p, &ns));
    ASSERT_EQ(2500000000LL, ns);
    p.zVal = "250ms";
    ASSERT_EQ(0, vt__opt_time(&p, &ns));
    ASSERT_EQ(250000000LL, ns);
    p.zVal = "40us";
    ASSERT_EQ(0, vt__opt_time(&p, &ns));
    ASSERT_EQ(40000LL, ns);
    p.zVal = "7ns";
    ASSERT_EQ(0, vt__opt_time(&p, &ns));
    ASSERT_EQ(7LL, ns);
    p.zVal = "1.5min";
    ASSERT_EQ(0, vt__opt_time(&p, &ns));
    ASSERT_EQ(90000000000LL, ns);
    p.zVal = "3h";
    ASSERT_EQ(-1, vt__opt_time(&p, &ns));
    p.zVal = "-1ms";
    ASSERT_EQ(-1, vt__opt_time(&p, &ns));
    p.zVal = "1e20s";
    ASSERT_EQ(-1, vt__opt_time(&p, &ns));
    p.zVal = "json";
    ASSERT_EQ(0, vt__opt_choice(&p, az, &k));
    ASSERT_EQ(1, k);
    p.zVal = "xml";
    ASSERT_EQ(-1, vt__opt_choice(&p, az, &k));
    vt__opt_end(&p);
}

VT_TEST_LIST(T(value_forms) T(errors) T(stop_at_command) T(value_parsers))
