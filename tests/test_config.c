/* Tests of tracer/config.c and tracer/procinfo.c: environment parsing (the size bound and window too), warnings, metadata rows. */
#include <string.h>

#include "config.h"
#include "procinfo.h"
#include "writer.h"
#include "vt_test.h"

/* A fake environment: NULL-terminated name/value pairs. */
static const char *const *g_env;

static const char *fake_getenv(const char *zName)
{
    for (const char *const *p = g_env; p && p[0]; p += 2)
        if (strcmp(p[0], zName) == 0) return p[1];
    return NULL;
}

static int count_lines(const char *z)
{
    int n = 0;
    for (; *z; z++) n += *z == '\n';
    return n;
}

/* Collected meta rows. */
struct meta {
    int n;
    char aKey[64][64];
    char aVal[64][256];
};

static int collect(void *pCtx, const char *zKey, const char *zValue)
{
    struct meta *m = pCtx;
    if (m->n >= 64) return 1;
    snprintf(m->aKey[m->n], sizeof m->aKey[0], "%s", zKey);
    snprintf(m->aVal[m->n], sizeof m->aVal[0], "%s", zValue);
    m->n++;
    return 0;
}

static const char *lookup(const struct meta *m, const char *zKey)
{
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->aKey[i], zKey) == 0) return m->aVal[i];
    return NULL;
}

TEST(defaults)
{
    static const char *const env[] = {NULL};
    struct vt_config cfg;
    g_env = env;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_STREQ("vramtrace-%h-%p.db", cfg.zOutput);
    ASSERT_EQ(4 << 20, cfg.buffer_size);
    ASSERT_EQ(256 << 20, cfg.max_memory);
    ASSERT_EQ(500, cfg.flush_ms);
    ASSERT_EQ(16, cfg.backtrace);
    ASSERT_EQ(1, cfg.python_stacks);
    ASSERT_EQ(1, cfg.kernel_args);
    ASSERT_EQ(0, cfg.quiet);
    ASSERT_EQ(0, cfg.disabled);
    ASSERT_EQ(0, cfg.nWarn);
    ASSERT_STREQ("", cfg.zWarn);
}

TEST(valid_values)
{
    static const char *const env[] = {
        "VRAMTRACE_OUTPUT", "/tmp/run-%r-%p-%h-%%.db", "VRAMTRACE_BUFFER_SIZE", "1M",
        "VRAMTRACE_MAX_MEMORY", "1GiB", "VRAMTRACE_FLUSH_MS", "250", "VRAMTRACE_BACKTRACE", "0",
        "VRAMTRACE_PYTHON_STACKS", "off", "VRAMTRACE_KERNEL_ARGS", "FALSE", "VRAMTRACE_QUIET", "yes",
        "VRAMTRACE_DISABLE", "0", "VRAMTRACE_TENSORS", "1", NULL};
    struct vt_config cfg;
    g_env = env;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_STREQ("/tmp/run-%r-%p-%h-%%.db", cfg.zOutput);
    ASSERT_EQ(1, cfg.tensors);
    ASSERT_EQ(1 << 20, cfg.buffer_size);
    ASSERT_EQ(1ull << 30, cfg.max_memory);
    ASSERT_EQ(250, cfg.flush_ms);
    ASSERT_EQ(0, cfg.backtrace);
    ASSERT_EQ(0, cfg.python_stacks);
    ASSERT_EQ(0, cfg.kernel_args);
    ASSERT_EQ(1, cfg.quiet);
    ASSERT_EQ(0, cfg.disabled);
    ASSERT_EQ(0, cfg.nWarn);
}

TEST(sizes_plain_and_suffixed)
{
    static const char *const env[] = {"VRAMTRACE_BUFFER_SIZE", "65537", "VRAMTRACE_MAX_MEMORY",
                                      "512m", NULL};
    struct vt_config cfg;
    g_env = env;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(65544, cfg.buffer_size); /* rounded up to 8 bytes */
    ASSERT_EQ(512ull << 20, cfg.max_memory);
    ASSERT_EQ(0, cfg.nWarn);
}

/* Each malformed value: exactly one warning line naming it, and the default kept. */
TEST(bad_values_warn_once_each)
{
    static const char *const env[] = {
        "VRAMTRACE_OUTPUT", "trace-%x.db", "VRAMTRACE_BUFFER_SIZE", "lots",
        "VRAMTRACE_MAX_MEMORY", "12Q", "VRAMTRACE_FLUSH_MS", "5000", "VRAMTRACE_BACKTRACE", "-3",
        "VRAMTRACE_PYTHON_STACKS", "maybe", "VRAMTRACE_KERNEL_ARGS", "2", "VRAMTRACE_QUIET", "",
        "VRAMTRACE_DISABLE", "please", NULL};
    struct vt_config cfg;
    g_env = env;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(9, cfg.nWarn);
    ASSERT_EQ(9, count_lines(cfg.zWarn));
    ASSERT_CONTAINS(cfg.zWarn, "vramtrace: VRAMTRACE_OUTPUT='trace-%x.db' has an unknown %-escape");
    ASSERT_CONTAINS(cfg.zWarn, "vramtrace: VRAMTRACE_BUFFER_SIZE='lots'");
    ASSERT_CONTAINS(cfg.zWarn, "vramtrace: VRAMTRACE_MAX_MEMORY='12Q' is not a size");
    ASSERT_CONTAINS(cfg.zWarn, "vramtrace: VRAMTRACE_FLUSH_MS='5000'");
    ASSERT_CONTAINS(cfg.zWarn, "vramtrace: VRAMTRACE_BACKTRACE='-3'");
    ASSERT_CONTAINS(cfg.zWarn, "vramtrace: VRAMTRACE_PYTHON_STACKS='maybe' is not 0 or 1; using 1");
    ASSERT_CONTAINS(cfg.zWarn, "vramtrace: VRAMTRACE_KERNEL_ARGS='2'");
    ASSERT_CONTAINS(cfg.zWarn, "vramtrace: VRAMTRACE_QUIET=''");
    ASSERT_CONTAINS(cfg.zWarn, "vramtrace: VRAMTRACE_DISABLE='please'");
    ASSERT_STREQ("vramtrace-%h-%p.db", cfg.zOutput);
    ASSERT_EQ(4 << 20, cfg.buffer_size);
    ASSERT_EQ(256 << 20, cfg.max_memory);
    ASSERT_EQ(500, cfg.flush_ms);
    ASSERT_EQ(16, cfg.backtrace);
    ASSERT_EQ(1, cfg.python_stacks);
    ASSERT_EQ(1, cfg.kernel_args);
    ASSERT_EQ(0, cfg.quiet);
    ASSERT_EQ(0, cfg.disabled);
}

TEST(out_of_range_values)
{
    static const char *const env[] = {"VRAMTRACE_BUFFER_SIZE", "1K", "VRAMTRACE_FLUSH_MS", "0",
                                      "VRAMTRACE_BACKTRACE", "65", "VRAMTRACE_OUTPUT", "", NULL};
    struct vt_config cfg;
    g_env = env;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(4, cfg.nWarn);
    ASSERT_EQ(4 << 20, cfg.buffer_size);
    ASSERT_EQ(500, cfg.flush_ms);
    ASSERT_EQ(16, cfg.backtrace);
    ASSERT_STREQ("vramtrace-%h-%p.db", cfg.zOutput);
    ASSERT_CONTAINS(cfg.zWarn, "VRAMTRACE_OUTPUT='' is empty");
}

/* A memory bound too small for the writer's ring plus two buffers is raised, with a warning. */
TEST(max_memory_floor)
{
    static const char *const env[] = {"VRAMTRACE_MAX_MEMORY", "1M", NULL};
    struct vt_config cfg;
    struct vt_writer_config w;
    g_env = env;
    vt__config_load(&cfg, fake_getenv);
    vt__writer_config_default(&w);
    ASSERT_EQ(1, cfg.nWarn);
    ASSERT_EQ(w.host_ring_records * sizeof(struct vt_hrec) + 2 * cfg.buffer_size, cfg.max_memory);
    ASSERT_CONTAINS(cfg.zWarn, "VRAMTRACE_MAX_MEMORY=1048576 is below the minimum");
}

TEST(disable_flag)
{
    static const char *const env[] = {"VRAMTRACE_DISABLE", "1", NULL};
    struct vt_config cfg;
    g_env = env;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(1, cfg.disabled);
    ASSERT_EQ(0, cfg.nWarn);
}

TEST(config_meta_rows)
{
    static const char *const env[] = {"VRAMTRACE_FLUSH_MS", "100", "VRAMTRACE_KERNEL_ARGS", "0",
                                      NULL};
    struct vt_config cfg;
    static struct meta m;
    g_env = env;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(0, vt__config_meta(&cfg, collect, &m));
    ASSERT_EQ(11, m.n);
    ASSERT_STREQ("full", lookup(&m, "config.kernels")); /* the warm-up and period only with summary */
    ASSERT_STREQ("auto", lookup(&m, "config.subscribers"));
    ASSERT_STREQ("vramtrace-%h-%p.db", lookup(&m, "config.output"));
    ASSERT_STREQ("4194304", lookup(&m, "config.buffer_size"));
    ASSERT_STREQ("268435456", lookup(&m, "config.max_memory"));
    ASSERT_STREQ("100", lookup(&m, "config.flush_ms"));
    ASSERT_STREQ("16", lookup(&m, "config.backtrace"));
    ASSERT_STREQ("1", lookup(&m, "config.python_stacks"));
    ASSERT_STREQ("0", lookup(&m, "config.kernel_args"));
    ASSERT_STREQ("0", lookup(&m, "config.quiet"));
    ASSERT_STREQ("0", lookup(&m, "config.tensors"));
}

/* The always-on mode: VRAMTRACE_KERNELS=summary with its warm-up and period; bad values warn and take the defaults. */
TEST(kernels_summary_mode)
{
    static const char *const env[] = {"VRAMTRACE_KERNELS", "summary", "VRAMTRACE_KERNEL_WARMUP", "2m",
                                      "VRAMTRACE_KERNEL_PERIOD", "0.25", NULL};
    static const char *const bad[] = {"VRAMTRACE_KERNELS", "some", "VRAMTRACE_KERNEL_WARMUP", "soon",
                                      "VRAMTRACE_KERNEL_PERIOD", "1us", NULL};
    struct vt_config cfg;
    static struct meta m;
    g_env = env;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(0, cfg.nWarn);
    ASSERT_EQ(1, cfg.kernels_summary);
    ASSERT_EQ(120000000000LL, cfg.kernel_warmup_ns);
    ASSERT_EQ(250000000LL, cfg.kernel_period_ns);
    ASSERT_EQ(0, vt__config_meta(&cfg, collect, &m));
    ASSERT_STREQ("summary", lookup(&m, "config.kernels"));
    ASSERT_STREQ("120000000000", lookup(&m, "config.kernel_warmup_ns"));
    ASSERT_STREQ("250000000", lookup(&m, "config.kernel_period_ns"));
    g_env = bad;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(3, cfg.nWarn);
    ASSERT_EQ(0, cfg.kernels_summary);
    ASSERT_EQ(30000000000LL, cfg.kernel_warmup_ns);
    ASSERT_EQ(1000000000LL, cfg.kernel_period_ns);
}

/* VRAMTRACE_SUBSCRIBERS (auto, several, one; anything else warns: auto) and VRAMTRACE_LEND_CUPTI, set by record. */
TEST(subscribers_policy)
{
    static const char *const several[] = {"VRAMTRACE_SUBSCRIBERS", "several", "VRAMTRACE_LEND_CUPTI", "1", NULL};
    static const char *const one[] = {"VRAMTRACE_SUBSCRIBERS", "one", NULL};
    static const char *const bad[] = {"VRAMTRACE_SUBSCRIBERS", "many", NULL};
    struct vt_config cfg;
    static struct meta m;
    g_env = several;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(0, cfg.nWarn);
    ASSERT_EQ(1, cfg.subscribers);
    ASSERT_EQ(1, cfg.lend_cupti);
    ASSERT_EQ(0, vt__config_meta(&cfg, collect, &m));
    ASSERT_STREQ("several", lookup(&m, "config.subscribers"));
    g_env = one;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(2, cfg.subscribers);
    ASSERT_EQ(0, cfg.lend_cupti);
    g_env = bad;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(1, cfg.nWarn);
    ASSERT_CONTAINS(cfg.zWarn, "VRAMTRACE_SUBSCRIBERS='many' is not 'auto', 'several' or 'one'; using auto");
    ASSERT_EQ(0, cfg.subscribers);
}

/* Rank resolution: torchrun's RANK wins over MPI and SLURM; non-numbers are ignored. */
TEST(procinfo_rank_resolution)
{
    static const char *const env1[] = {"SLURM_PROCID", "7", "OMPI_COMM_WORLD_RANK", "3",
                                       "RANK", "5", "OMPI_COMM_WORLD_LOCAL_RANK", "1",
                                       "SLURM_NTASKS", "16", NULL};
    static const char *const env2[] = {"RANK", "abc", "PMI_RANK", "2", "PMI_SIZE", "4",
                                       "MV2_COMM_WORLD_LOCAL_RANK", "0", NULL};
    static const char *const env3[] = {NULL};
    static struct vt_procinfo pi;
    g_env = env1;
    vt__procinfo_load(&pi, fake_getenv);
    ASSERT_STREQ("5", pi.zRank);
    ASSERT_STREQ("1", pi.zLocalRank);
    ASSERT_STREQ("16", pi.zWorldSize);
    g_env = env2;
    vt__procinfo_load(&pi, fake_getenv);
    ASSERT_STREQ("2", pi.zRank);
    ASSERT_STREQ("0", pi.zLocalRank);
    ASSERT_STREQ("4", pi.zWorldSize);
    g_env = env3;
    vt__procinfo_load(&pi, fake_getenv);
    ASSERT_STREQ("", pi.zRank);
    ASSERT_EQ(getpid(), pi.pid);
    ASSERT_EQ(getppid(), pi.ppid);
}

/* Only allow-listed variables reach meta; identity rows are present. */
TEST(procinfo_meta_allow_list)
{
    static const char *const env[] = {"CUDA_VISIBLE_DEVICES", "1,0", "PYTORCH_ALLOC_CONF",
                                      "expandable_segments:True", "AWS_SECRET_ACCESS_KEY", "hunter2",
                                      "HOME", "/root", "LOCAL_RANK", "3", NULL};
    static struct vt_procinfo pi;
    static struct meta m;
    char zPid[32];
    int nEnv = 0;
    g_env = env;
    vt__procinfo_load(&pi, fake_getenv);
    ASSERT_EQ(0, vt__procinfo_meta(&pi, fake_getenv, collect, &m));
    snprintf(zPid, sizeof zPid, "%ld", (long)getpid());
    ASSERT_STREQ(zPid, lookup(&m, "pid"));
    ASSERT(lookup(&m, "ppid") != NULL);
    ASSERT(lookup(&m, "hostname") != NULL);
    ASSERT_CONTAINS(lookup(&m, "exe"), "test_config");
    ASSERT_CONTAINS(lookup(&m, "cmdline"), "test_config");
    ASSERT_STREQ("3", lookup(&m, "local_rank"));
    ASSERT(lookup(&m, "rank") == NULL);
    ASSERT_STREQ("1,0", lookup(&m, "env.CUDA_VISIBLE_DEVICES"));
    ASSERT_STREQ("expandable_segments:True", lookup(&m, "env.PYTORCH_ALLOC_CONF"));
    ASSERT_STREQ("3", lookup(&m, "env.LOCAL_RANK"));
    for (int i = 0; i < m.n; i++) {
        nEnv += strncmp(m.aKey[i], "env.", 4) == 0;
        ASSERT(strstr(m.aVal[i], "hunter2") == NULL);
        ASSERT(strcmp(m.aVal[i], "/root") != 0);
    }
    ASSERT_EQ(3, nEnv);
}

/* cmdline: NUL separators become spaces, the length is bounded. */
TEST(procinfo_cmdline)
{
    char zPath[] = "/tmp/vt_cmdline_XXXXXX";
    int fd = mkstemp(zPath);
    char z[16];
    ASSERT(fd >= 0);
    ASSERT_EQ(21, write(fd, "python\0train.py\0--x\0\0", 21));
    close(fd);
    ASSERT_EQ(15, vt__procinfo_read_cmdline(zPath, z, sizeof z));
    ASSERT_STREQ("python train.py", z); /* cut to 15 bytes */
    {
        char zBig[64];
        ASSERT_EQ(19, vt__procinfo_read_cmdline(zPath, zBig, sizeof zBig));
        ASSERT_STREQ("python train.py --x", zBig);
    }
    unlink(zPath);
    ASSERT_EQ(-1, vt__procinfo_read_cmdline("/nonexistent/cmdline", z, sizeof z));
    ASSERT_STREQ("", z);
}

/* The size bound and the recording window: sizes and durations as people write them, and their order. */
TEST(limit_settings)
{
    static const char *const good[] = {"VRAMTRACE_MAX_BYTES", "64M", "VRAMTRACE_START_AFTER", "1.5m",
                                       "VRAMTRACE_STOP_AFTER", "2h", NULL};
    static const char *const bad[] = {"VRAMTRACE_MAX_BYTES", "100K", "VRAMTRACE_START_AFTER", "-3",
                                      "VRAMTRACE_STOP_AFTER", "soon", NULL};
    static const char *const order[] = {"VRAMTRACE_START_AFTER", "60", "VRAMTRACE_STOP_AFTER", "30s", NULL};
    struct vt_config cfg;
    g_env = good;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(0, cfg.nWarn);
    ASSERT_EQ((size_t)64 << 20, cfg.max_bytes);
    ASSERT_EQ(90000000000LL, cfg.start_after_ns);
    ASSERT_EQ(7200000000000LL, cfg.stop_after_ns);
    g_env = bad;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(3, cfg.nWarn);
    ASSERT_EQ(0, cfg.max_bytes);
    ASSERT_EQ(0, cfg.start_after_ns);
    ASSERT_EQ(0, cfg.stop_after_ns);
    ASSERT_CONTAINS(cfg.zWarn, "VRAMTRACE_MAX_BYTES='100K' is not a size of at least 1M");
    g_env = order;
    vt__config_load(&cfg, fake_getenv);
    ASSERT_EQ(1, cfg.nWarn);
    ASSERT_CONTAINS(cfg.zWarn, "VRAMTRACE_STOP_AFTER is not after VRAMTRACE_START_AFTER");
    ASSERT_EQ(60000000000LL, cfg.start_after_ns);
    ASSERT_EQ(0, cfg.stop_after_ns);
}

VT_TEST_LIST(T(defaults) T(valid_values) T(sizes_plain_and_suffixed) T(bad_values_warn_once_each)
             T(out_of_range_values) T(max_memory_floor) T(disable_flag) T(config_meta_rows) T(kernels_summary_mode)
             T(subscribers_policy)
             T(procinfo_rank_resolution) T(procinfo_meta_allow_list) T(procinfo_cmdline) T(limit_settings))
