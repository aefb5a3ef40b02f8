/* Tests of 'vramtrace record': the job's environment, exit status, signals, trace discovery and summary, installation. */
#include <dlfcn.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>

#include "cli_util.h"
#include "cli.h"
#include "record.h"

/* Value of NAME in an `env` dump (static buffer), or NULL when absent. */
static const char *env_value(const char *zDump, const char *zName)
{
    static char zVal[4096];
    size_t n = strlen(zName);
    const char *p = zDump;
    while (p && *p) {
        const char *zEol = strchr(p, '\n');
        size_t len = zEol ? (size_t)(zEol - p) : strlen(p);
        if (len > n && !strncmp(p, zName, n) && p[n] == '=') {
            snprintf(zVal, sizeof zVal, "%.*s", (int)(len - n - 1), p + n + 1);
            return zVal;
        }
        p = zEol ? zEol + 1 : NULL;
    }
    return NULL;
}

/* Canonical path of the tracer library in the build tree (static buffer); skips if not built. */
static const char *built_lib(void)
{
    static char zReal[PATH_MAX];
    char zPath[PATH_MAX];
    snprintf(zPath, sizeof zPath, "%s/tracer/libvramtrace.so", getenv("VT_BUILD_DIR"));
    if (realpath(zPath, zReal)) return zReal;
    snprintf(zPath, sizeof zPath, "%s/libvramtrace.so", getenv("VT_BUILD_DIR"));
    if (realpath(zPath, zReal)) return zReal;
    SKIP("libvramtrace.so is not built in this tree");
}

/*
 * Run `vramtrace record OPTS... -- /bin/sh -c 'env > DIR/env.txt; exit 3'`
 * and return the env dump (heap); *pRc gets the exit status, stderr goes to
 * DIR/err.txt.
 */
static char *record_env(const char *zDir, const char *const *azOpt, const char *const *azEnv, int *pRc)
{
    char zScript[PATH_MAX + 64], zEnvFile[PATH_MAX], zErr[PATH_MAX];
    char *azArgv[32];
    int n = 0;
    snprintf(zEnvFile, sizeof zEnvFile, "%s/env.txt", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    snprintf(zScript, sizeof zScript, "env > '%s'; exit 3", zEnvFile);
    azArgv[n++] = (char *)cli_vramtrace();
    azArgv[n++] = "record";
    for (; azOpt && *azOpt; azOpt++) azArgv[n++] = (char *)*azOpt;
    azArgv[n++] = "--";
    azArgv[n++] = "/bin/sh";
    azArgv[n++] = "-c";
    azArgv[n++] = zScript;
    azArgv[n] = NULL;
    *pRc = cli_run(azArgv, azEnv, NULL, zErr);
    return cli_read(zEnvFile);
}

TEST(record_sets_environment)
{
    const char *zLib = built_lib();
    const char *zDir = cli_tmpdir();
    const char *azOpt[] = {"-o", zDir, NULL};
    const char *azEnv[] = {"VRAMTRACE_TENSORS=1", "PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF",
                           "VRAMTRACE_OUTPUT=/elsewhere/x.db", "PYTHONPATH=/job/site", NULL};
    char zWant[PATH_MAX + 32];
    const char *zCupti;
    struct stat st;
    int rc;
    char *zDump = record_env(zDir, azOpt, azEnv, &rc);

    ASSERT_EQ(3, rc); /* the job's exit status passes through */
    ASSERT_STREQ(zLib, env_value(zDump, "CUDA_INJECTION64_PATH"));
    /* NVTX loads the tracer itself, which forwards to its own libcupti */
    ASSERT_STREQ(zLib, env_value(zDump, "NVTX_INJECTION64_PATH"));
    /* the libcupti found for the job leads the library path */
    zCupti = env_value(zDump, "LD_LIBRARY_PATH");
    ASSERT(zCupti != NULL);
    ASSERT(zCupti[0] == '/');
    {
        char zFile[PATH_MAX + 32];
        const char *zColon = strchr(zCupti, ':');
        int n = zColon ? (int)(zColon - zCupti) : (int)strlen(zCupti);
        snprintf(zFile, sizeof zFile, "%.*s/libcupti.so.13", n, zCupti);
        ASSERT(stat(zFile, &st) == 0 && S_ISREG(st.st_mode));
    }
    snprintf(zWant, sizeof zWant, "%s/vramtrace-%%h-%%p.db", zDir); /* -o beats VRAMTRACE_OUTPUT */
    ASSERT_STREQ(zWant, env_value(zDump, "VRAMTRACE_OUTPUT"));
    ASSERT(env_value(zDump, "VRAMTRACE_TENSORS") == NULL); /* only --tensors turns that mode on */
    ASSERT(env_value(zDump, "PYTORCH_ALLOC_CONF") == NULL);
    ASSERT(env_value(zDump, "PYTORCH_CUDA_ALLOC_CONF") == NULL);
    ASSERT(env_value(zDump, "VRAMTRACE_BACKTRACE") == NULL);
    /* PyTorch's history: the hook first on PYTHONPATH (the job's own path after it), snapshots
     * beside the traces */
    {
        const char *zPy = env_value(zDump, "PYTHONPATH");
        char zHook[PATH_MAX + 64];
        ASSERT(zPy != NULL);
        ASSERT(strstr(zPy, "/analyzer/pyhook:/job/site") != NULL);
        snprintf(zHook, sizeof zHook, "%.*s/sitecustomize.py", (int)(strchr(zPy, ':') - zPy), zPy);
        ASSERT(stat(zHook, &st) == 0 && S_ISREG(st.st_mode));
        ASSERT_STREQ("1", env_value(zDump, "VRAMTRACE_PYTORCH_HISTORY"));
        ASSERT_STREQ(zDir, env_value(zDump, "VRAMTRACE_SNAPSHOT_DIR"));
        /* the job's torch.profiler is lent CUPTI */
        ASSERT_STREQ("1", env_value(zDump, "VRAMTRACE_LEND_CUPTI"));
    }
    free(zDump);
    cli_cleanup();
}

TEST(record_tensors_merges_alloc_conf)
{
    const char *zDir = cli_tmpdir();
    const char *azOpt[] = {"--tensors", "--backtrace", "12", "--no-python-stacks", "--no-kernel-args",
                           "--max-size", "64M", "--start-after=1.5m", "--stop-after", "2h", "--kernels", "summary",
                           "--kernel-warmup=5m", "-o", zDir, NULL};
    const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", "PYTORCH_ALLOC_CONF",
                           "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, max_split_size_mb:128,"
                           "roundup_power2_divisions:[256:1,512:2,>:4]",
                           NULL};
    const char *zWant = "backend:cudaMallocAsync,max_split_size_mb:128,"
                        "roundup_power2_divisions:[256:1,512:2,>:4]";
    char zErrFile[PATH_MAX], zSh[PATH_MAX], *zErr;
    int rc;
    char *zDump = record_env(zDir, azOpt, azEnv, &rc);

    ASSERT_EQ(3, rc);
    ASSERT(realpath("/bin/sh", zSh) != NULL);
    ASSERT_STREQ(zSh, env_value(zDump, "CUDA_INJECTION64_PATH")); /* VRAMTRACE_LIB wins, canonical */
    ASSERT_STREQ(zWant, env_value(zDump, "PYTORCH_ALLOC_CONF"));
    ASSERT_STREQ(zWant, env_value(zDump, "PYTORCH_CUDA_ALLOC_CONF"));
    ASSERT_STREQ("1", env_value(zDump, "VRAMTRACE_TENSORS"));
    ASSERT_STREQ("12", env_value(zDump, "VRAMTRACE_BACKTRACE"));
    ASSERT_STREQ("0", env_value(zDump, "VRAMTRACE_PYTHON_STACKS"));
    ASSERT_STREQ("0", env_value(zDump, "VRAMTRACE_KERNEL_ARGS"));
    ASSERT_STREQ("64M", env_value(zDump, "VRAMTRACE_MAX_BYTES"));
    ASSERT_STREQ("1.5m", env_value(zDump, "VRAMTRACE_START_AFTER"));
    ASSERT_STREQ("2h", env_value(zDump, "VRAMTRACE_STOP_AFTER"));
    ASSERT_STREQ("summary", env_value(zDump, "VRAMTRACE_KERNELS"));
    ASSERT_STREQ("5m", env_value(zDump, "VRAMTRACE_KERNEL_WARMUP"));
    /* --tensors: the cudaMallocAsync backend keeps no history, so it is not asked for; the hook
     * still lends CUPTI to torch.profiler */
    ASSERT(env_value(zDump, "VRAMTRACE_PYTORCH_HISTORY") == NULL);
    ASSERT_STREQ("1", env_value(zDump, "VRAMTRACE_LEND_CUPTI"));
    snprintf(zErrFile, sizeof zErrFile, "%s/err.txt", zDir);
    zErr = cli_read(zErrFile);
    ASSERT_CONTAINS(zErr, "dropped expandable_segments");
    ASSERT_CONTAINS(zErr, "the job exited with status 3");
    free(zErr);
    free(zDump);
    cli_cleanup();
}

/*
 * PyTorch's history: its options reach the hook; --no-pytorch-history turns it off (the hook
 * still lends CUPTI to torch.profiler), and with --keep-cupti too the hook only marks the
 * profiler's start and stop (VRAMTRACE_LEND_CUPTI=0).
 */
TEST(record_history_options)
{
    const char *zDir = cli_tmpdir();
    const char *azOn[] = {"--history-entries", "5000", "--history-stacks=all", "-o", zDir, NULL};
    const char *azOff[] = {"--no-pytorch-history", "-o", zDir, NULL};
    const char *azBoth[] = {"--no-pytorch-history", "--keep-cupti", "-o", zDir, NULL};
    const char *azKeep[] = {"--keep-cupti", "-o", zDir, NULL};
    const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", "PYTHONPATH=/job/site", "VRAMTRACE_PYTORCH_HISTORY=1",
                           "VRAMTRACE_LEND_CUPTI=1", NULL};
    int rc;
    char *zDump = record_env(zDir, azOn, azEnv, &rc);
    ASSERT_STREQ("5000", env_value(zDump, "VRAMTRACE_HISTORY_ENTRIES"));
    ASSERT_STREQ("all", env_value(zDump, "VRAMTRACE_HISTORY_STACKS"));
    ASSERT_STREQ("1", env_value(zDump, "VRAMTRACE_PYTORCH_HISTORY"));
    free(zDump);
    zDump = record_env(zDir, azOff, azEnv, &rc);
    ASSERT(strstr(env_value(zDump, "PYTHONPATH"), "/analyzer/pyhook:/job/site") != NULL);
    ASSERT(env_value(zDump, "VRAMTRACE_PYTORCH_HISTORY") == NULL); /* an inherited one is cleared */
    ASSERT(env_value(zDump, "VRAMTRACE_SNAPSHOT_DIR") == NULL);
    ASSERT_STREQ("1", env_value(zDump, "VRAMTRACE_LEND_CUPTI"));
    free(zDump);
    zDump = record_env(zDir, azKeep, azEnv, &rc);
    ASSERT_STREQ("1", env_value(zDump, "VRAMTRACE_PYTORCH_HISTORY"));
    ASSERT_STREQ("0", env_value(zDump, "VRAMTRACE_LEND_CUPTI")); /* an inherited 1 is replaced */
    free(zDump);
    zDump = record_env(zDir, azBoth, azEnv, &rc);
    ASSERT(strstr(env_value(zDump, "PYTHONPATH"), "/analyzer/pyhook:/job/site") != NULL);
    ASSERT(env_value(zDump, "VRAMTRACE_PYTORCH_HISTORY") == NULL);
    ASSERT_STREQ("0", env_value(zDump, "VRAMTRACE_LEND_CUPTI"));
    free(zDump);
    cli_cleanup();
}

TEST(record_tensors_replaces_backend)
{
    const char *zDir = cli_tmpdir();
    const char *azOpt[] = {"--tensors", "-o", zDir, NULL};
    const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh",
                           "PYTORCH_ALLOC_CONF=backend:native,garbage_collection_threshold:0.6",
                           "PYTORCH_CUDA_ALLOC_CONF=ignored:1", NULL};
    int rc;
    char *zDump = record_env(zDir, azOpt, azEnv, &rc);
    ASSERT_EQ(3, rc);
    ASSERT_STREQ("backend:cudaMallocAsync,garbage_collection_threshold:0.6",
                 env_value(zDump, "PYTORCH_ALLOC_CONF"));
    ASSERT_STREQ("backend:cudaMallocAsync,garbage_collection_threshold:0.6",
                 env_value(zDump, "PYTORCH_CUDA_ALLOC_CONF"));
    free(zDump);
    cli_cleanup();
}

/* The first LD_LIBRARY_PATH entry in the dumped environment is zFile's directory. */
#define ASSERT_LIBDIR(zFile, zDump)                                                    \
    do {                                                                               \
        const char *zLd = env_value(zDump, "LD_LIBRARY_PATH");                        \
        size_t nDir = (size_t)(strrchr(zFile, '/') - zFile);                           \
        ASSERT(zLd != NULL);                                                           \
        ASSERT(!strncmp(zLd, zFile, nDir) && (zLd[nDir] == ':' || zLd[nDir] == 0));    \
    } while (0)

TEST(record_nvtx_follows_python_env)
{
    const char *zDir = cli_tmpdir();
    char zPy[PATH_MAX + 32], zCupti[PATH_MAX + 96], zOther[PATH_MAX + 32], zReal[PATH_MAX];
    char zScript[3 * PATH_MAX], zEnvFile[PATH_MAX + 16], zVenv[PATH_MAX + 16], zPath[2 * PATH_MAX];
    char *zDump;
    snprintf(zVenv, sizeof zVenv, "%s/venv", zDir);
    snprintf(zScript, sizeof zScript, "mkdir -p '%s/bin' '%s/lib/python3.12/site-packages/nvidia/cu13/lib'",
             zVenv, zVenv);
    ASSERT_EQ(0, system(zScript));
    snprintf(zCupti, sizeof zCupti, "%s/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13", zVenv);
    cli_write(zCupti, "not loaded, only named");
    ASSERT(realpath(zCupti, zReal) != NULL);
    snprintf(zEnvFile, sizeof zEnvFile, "%s/env.txt", zDir);
    snprintf(zPy, sizeof zPy, "%s/bin/python", zVenv);
    snprintf(zScript, sizeof zScript, "#!/bin/sh\nenv > '%s'\n", zEnvFile);
    cli_write(zPy, zScript);
    ASSERT_EQ(0, chmod(zPy, 0755));
    {
        /* the job is the environment's python, by path */
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", (char *)zDir, "--", zPy, NULL};
        const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", "VRAMTRACE_CUPTI", "VIRTUAL_ENV", "CONDA_PREFIX", NULL};
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, NULL));
        zDump = cli_read(zEnvFile);
        ASSERT_LIBDIR(zReal, zDump);
        free(zDump);
    }
    {
        /* found through PATH */
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", (char *)zDir, "--", "python", NULL};
        const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", "VRAMTRACE_CUPTI", "VIRTUAL_ENV", "CONDA_PREFIX", zPath,
                               NULL};
        snprintf(zPath, sizeof zPath, "PATH=%s/bin:/usr/bin:/bin", zVenv);
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, NULL));
        zDump = cli_read(zEnvFile);
        ASSERT_LIBDIR(zReal, zDump);
        free(zDump);
    }
    {
        /* an activated environment, another command; VRAMTRACE_CUPTI beats everything */
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", (char *)zDir, "--", "/bin/sh", "-c",
                          zScript, NULL};
        const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", "VRAMTRACE_CUPTI", zPath, "CONDA_PREFIX", NULL};
        snprintf(zScript, sizeof zScript, "env > '%s'", zEnvFile);
        snprintf(zPath, sizeof zPath, "VIRTUAL_ENV=%s", zVenv);
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, NULL));
        zDump = cli_read(zEnvFile);
        ASSERT_LIBDIR(zReal, zDump);
        free(zDump);
        snprintf(zOther, sizeof zOther, "%s/mycupti.so", zDir);
        cli_write(zOther, "x");
        ASSERT(realpath(zOther, zReal) != NULL);
        snprintf(zCupti, sizeof zCupti, "VRAMTRACE_CUPTI=%s", zOther);
        azEnv[1] = zCupti;
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, NULL));
        zDump = cli_read(zEnvFile);
        ASSERT_LIBDIR(zReal, zDump);
        free(zDump);
    }
    cli_cleanup();
}

TEST(alloc_conf_merge)
{
    char z[256];
    int bDropped = -1;
    ASSERT_EQ(0, vt__alloc_conf_merge(NULL, z, sizeof z, &bDropped));
    ASSERT_STREQ("backend:cudaMallocAsync", z);
    ASSERT_EQ(0, bDropped);
    ASSERT_EQ(0, vt__alloc_conf_merge(" , ", z, sizeof z, &bDropped));
    ASSERT_STREQ("backend:cudaMallocAsync", z);
    ASSERT_EQ(0, vt__alloc_conf_merge("backend:cudaMallocAsync", z, sizeof z, &bDropped));
    ASSERT_STREQ("backend:cudaMallocAsync", z);
    ASSERT_EQ(0, vt__alloc_conf_merge("max_split_size_mb:64,expandable_segments:False", z, sizeof z,
                                      &bDropped));
    ASSERT_STREQ("backend:cudaMallocAsync,max_split_size_mb:64", z);
    ASSERT_EQ(0, bDropped); /* it was off: nothing to warn about */
    ASSERT_EQ(0, vt__alloc_conf_merge("a:1,backend : native,b:[1:2,3:4],backend:x,expandable_segments:true",
                                      z, sizeof z, &bDropped));
    ASSERT_STREQ("a:1,backend:cudaMallocAsync,b:[1:2,3:4]", z);
    ASSERT_EQ(1, bDropped);
    ASSERT_EQ(-1, vt__alloc_conf_merge("max_split_size_mb:64", z, 30, &bDropped));
    cli_cleanup();
}

TEST(record_output_pattern)
{
    const char *zDir = cli_tmpdir();
    char zOut[PATH_MAX], zWhy[PATH_MAX + 256], zWant[PATH_MAX + 64], zCwd[PATH_MAX];
    struct stat st;
    ASSERT(getcwd(zCwd, sizeof zCwd) != NULL);
    ASSERT_EQ(0, vt__record_output(NULL, NULL, zOut, sizeof zOut, zWhy, sizeof zWhy));
    snprintf(zWant, sizeof zWant, "%s/vramtrace-%%h-%%p.db", zCwd);
    ASSERT_STREQ(zWant, zOut);
    ASSERT_EQ(0, vt__record_output(NULL, "./t-%r.db", zOut, sizeof zOut, zWhy, sizeof zWhy));
    snprintf(zWant, sizeof zWant, "%s/t-%%r.db", zCwd);
    ASSERT_STREQ(zWant, zOut);
    ASSERT_EQ(0, vt__record_output(zDir, "ignored.db", zOut, sizeof zOut, zWhy, sizeof zWhy));
    snprintf(zWant, sizeof zWant, "%s/vramtrace-%%h-%%p.db", zDir);
    ASSERT_STREQ(zWant, zOut);
    snprintf(zWant, sizeof zWant, "%s/new/sub/", zDir); /* a trailing slash: created */
    ASSERT_EQ(0, vt__record_output(zWant, NULL, zOut, sizeof zOut, zWhy, sizeof zWhy));
    ASSERT(stat(zWant, &st) == 0 && S_ISDIR(st.st_mode));
    snprintf(zWant, sizeof zWant, "%s/new/sub/vramtrace-%%h-%%p.db", zDir);
    ASSERT_STREQ(zWant, zOut);
    ASSERT_EQ(VT_EXIT_USAGE, vt__record_output("t-%x.db", NULL, zOut, sizeof zOut, zWhy, sizeof zWhy));
    ASSERT_CONTAINS(zWhy, "unknown escape '%x'");
    ASSERT_EQ(VT_EXIT_USAGE, vt__record_output("t-%", NULL, zOut, sizeof zOut, zWhy, sizeof zWhy));
    ASSERT_STREQ("output 't-%' ends in a lone '%' (write %% for a percent sign)", zWhy);
    { /* %h in the directory is this host's name: that directory is created and checked */
        char zHost[256] = "";
        ASSERT_EQ(0, gethostname(zHost, sizeof zHost - 1));
        snprintf(zWant, sizeof zWant, "%s/by-host/%%h/", zDir);
        ASSERT_EQ(0, vt__record_output(zWant, NULL, zOut, sizeof zOut, zWhy, sizeof zWhy));
        snprintf(zWant, sizeof zWant, "%s/by-host/%s", zDir, zHost);
        ASSERT(stat(zWant, &st) == 0 && S_ISDIR(st.st_mode));
        snprintf(zWant, sizeof zWant, "%s/by-host/%%h/vramtrace-%%h-%%p.db", zDir);
        ASSERT_STREQ(zWant, zOut);
        { /* PyTorch's snapshots go there too (they went to the current directory) */
            char zSide[PATH_MAX];
            vt__record_side_dir(zOut, zSide, sizeof zSide);
            snprintf(zWant, sizeof zWant, "%s/by-host/%s", zDir, zHost);
            ASSERT_STREQ(zWant, zSide);
            vt__record_side_dir("/runs/%p/t.db", zSide, sizeof zSide); /* each process's own: the current one */
            ASSERT_STREQ(zCwd, zSide);
        }
        snprintf(zWant, sizeof zWant, "%s/gone-%%h/t-%%p.db", zDir); /* no trailing '/': must exist */
        ASSERT_EQ(VT_EXIT_NOFILE, vt__record_output(zWant, NULL, zOut, sizeof zOut, zWhy, sizeof zWhy));
        snprintf(zWant, sizeof zWant, "output directory %s/gone-%s does not exist", zDir, zHost);
        ASSERT_STREQ(zWant, zWhy);
        snprintf(zWant, sizeof zWant, "%s/run-%%p/", zDir); /* each process's own: left to the tracer */
        ASSERT_EQ(0, vt__record_output(zWant, NULL, zOut, sizeof zOut, zWhy, sizeof zWhy));
    }
    snprintf(zWant, sizeof zWant, "%s/missing/t.db", zDir);
    ASSERT_EQ(VT_EXIT_NOFILE, vt__record_output(zWant, NULL, zOut, sizeof zOut, zWhy, sizeof zWhy));
    ASSERT_CONTAINS(zWhy, "does not exist");
    { /* a fixed name taken by something the tracer would refuse inside the job: refused before it starts */
        char zFile[PATH_MAX + 32], zLink[PATH_MAX + 32], zMsg[2 * PATH_MAX + 128];
        FILE *f;
        snprintf(zFile, sizeof zFile, "%s/train.py", zDir);
        ASSERT((f = fopen(zFile, "w")) != NULL);
        fputs("print('the job itself')\n", f);
        fclose(f);
        ASSERT_EQ(VT_EXIT_NOFILE, vt__record_output(zFile, NULL, zOut, sizeof zOut, zWhy, sizeof zWhy));
        snprintf(zMsg, sizeof zMsg, "output %s exists and is not a vramtrace trace, which the tracer would not "
                 "replace: choose another -o", zFile);
        ASSERT_STREQ(zMsg, zWhy);
        snprintf(zLink, sizeof zLink, "%s/link.db", zDir);
        ASSERT_EQ(0, symlink(zFile, zLink));
        ASSERT_EQ(VT_EXIT_NOFILE, vt__record_output(zLink, NULL, zOut, sizeof zOut, zWhy, sizeof zWhy));
        ASSERT_CONTAINS(zWhy, "is a symbolic link, which the tracer does not write through");
        snprintf(zFile, sizeof zFile, "%s/trace.db", zDir); /* a trace (of an earlier run) is replaced */
        cli_make_trace(zFile, 1);
        ASSERT_EQ(0, vt__record_output(zFile, NULL, zOut, sizeof zOut, zWhy, sizeof zWhy));
    }
    cli_cleanup();
}

TEST(trace_set_matches_pattern)
{
    const char *zDir = cli_tmpdir();
    static const char *const azName[] = {"t-h1-10.db", "t-h1-11.db", "t-h1-11.db-wal", "t-h1-12.db-shm",
                                         "other.db", "t-[x]-1.db", "t-h1-9.dbx"};
    char zPath[PATH_MAX + 64], zPattern[PATH_MAX + 64];
    struct vt_trace_set before, after;
    size_t i;
    for (i = 0; i < sizeof azName / sizeof azName[0]; i++) {
        snprintf(zPath, sizeof zPath, "%s/%s", zDir, azName[i]);
        cli_write(zPath, "x");
    }
    snprintf(zPattern, sizeof zPattern, "%s/t-%%h-%%p.db", zDir);
    ASSERT_EQ(0, vt__trace_set_list(zPattern, &before));
    ASSERT_EQ(3, before.nFile);
    ASSERT_CONTAINS(before.aFile[0].zPath, "/t-[x]-1.db");
    ASSERT_CONTAINS(before.aFile[1].zPath, "/t-h1-10.db");
    ASSERT_CONTAINS(before.aFile[2].zPath, "/t-h1-11.db");
    /* a new file, and an old one rewritten, count as new; the untouched one does not */
    snprintf(zPath, sizeof zPath, "%s/t-h2-13.db", zDir);
    cli_write(zPath, "y");
    snprintf(zPath, sizeof zPath, "%s/t-h1-11.db", zDir);
    unlink(zPath);
    cli_write(zPath, "longer");
    ASSERT_EQ(0, vt__trace_set_list(zPattern, &after));
    ASSERT_EQ(4, after.nFile);
    ASSERT_EQ(0, vt__trace_set_is_new(&before, &after.aFile[0]));
    ASSERT_EQ(0, vt__trace_set_is_new(&before, &after.aFile[1]));
    ASSERT_EQ(1, vt__trace_set_is_new(&before, &after.aFile[2]));
    ASSERT_EQ(1, vt__trace_set_is_new(&before, &after.aFile[3]));
    /* %% is a literal percent sign */
    snprintf(zPath, sizeof zPath, "%s/p%%1.db", zDir);
    cli_write(zPath, "z");
    vt__trace_set_free(&after);
    snprintf(zPattern, sizeof zPattern, "%s/p%%%%%%p.db", zDir);
    ASSERT_EQ(0, vt__trace_set_list(zPattern, &after));
    ASSERT_EQ(1, after.nFile);
    vt__trace_set_free(&after);
    /* with no extension in the pattern, SQLite's companion files must still be left out */
    static const char *const azBare[] = {"q-5", "q-5-wal", "q-5-shm", "q-5-journal"};
    for (i = 0; i < sizeof azBare / sizeof azBare[0]; i++) {
        snprintf(zPath, sizeof zPath, "%s/%s", zDir, azBare[i]);
        cli_write(zPath, "q");
    }
    snprintf(zPattern, sizeof zPattern, "%s/q-%%p", zDir);
    ASSERT_EQ(0, vt__trace_set_list(zPattern, &after));
    ASSERT_EQ(1, after.nFile);
    ASSERT_CONTAINS(after.aFile[0].zPath, "/q-5");
    vt__trace_set_free(&after);
    vt__trace_set_free(&before);
    cli_cleanup();
}

TEST(record_exit_by_signal)
{
    const char *zDir = cli_tmpdir();
    char zErr[PATH_MAX + 16], *z;
    char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", (char *)zDir, "--", "/bin/sh", "-c",
                      "kill -TERM $$", NULL};
    const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", NULL};
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    ASSERT_EQ(128 + SIGTERM, cli_run(azArgv, azEnv, NULL, zErr));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "vramtrace: record: the job was killed by signal 15");
    ASSERT_CONTAINS(z, "vramtrace: no trace was written");
    free(z);
    cli_cleanup();
}

TEST(record_forwards_sigterm)
{
    const char *zDir = cli_tmpdir();
    char zReady[PATH_MAX + 16], zScript[PATH_MAX + 128];
    int status = 0, i;
    pid_t pid;
    const char *zVramtrace = cli_vramtrace();
    snprintf(zReady, sizeof zReady, "%s/ready", zDir);
    snprintf(zScript, sizeof zScript, "trap 'exit 42' TERM; : > '%s'; while :; do sleep 0.05; done", zReady);
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        char *azArgv[] = {(char *)zVramtrace, "record", "-o", (char *)zDir, "--", "/bin/sh", "-c", zScript,
                          NULL};
        setenv("VRAMTRACE_LIB", "/bin/sh", 1);
        freopen("/dev/null", "w", stderr);
        execv(azArgv[0], azArgv);
        _exit(121);
    }
    for (i = 0; i < 400 && access(zReady, F_OK) != 0; i++) usleep(10000);
    ASSERT(access(zReady, F_OK) == 0);
    ASSERT_EQ(0, kill(pid, SIGTERM)); /* to vramtrace only: it must pass it on */
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT(WIFEXITED(status));
    ASSERT_EQ(42, WEXITSTATUS(status));
    cli_cleanup();
}

/*
 * Run `vramtrace record -- /bin/sh -c SCRIPT` on a new pseudo-terminal, wait
 * for DIR/ready, type Ctrl-C, and return the exit status. SCRIPT counts the
 * SIGINTs it gets in DIR/ints.
 */
static int record_on_terminal(const char *zDir, const char *zPrefix, int *pnInt)
{
    const char *zVramtrace = cli_vramtrace();
    char zReady[PATH_MAX + 16], zInts[PATH_MAX + 16], zScript[3 * PATH_MAX], *zCount;
    int fdMaster, status = 0, i;
    pid_t pid;
    snprintf(zReady, sizeof zReady, "%s/ready", zDir);
    snprintf(zInts, sizeof zInts, "%s/ints", zDir);
    snprintf(zScript, sizeof zScript,
             "exec %s sh -c \"trap 'echo int >> %s' INT; : > %s; i=0; "
             "while [ \\$i -lt 20 ]; do sleep 0.05; i=\\$((i+1)); done; exit 5\"",
             zPrefix, zInts, zReady);
    cli_write(zInts, "");
    fdMaster = posix_openpt(O_RDWR | O_NOCTTY);
    ASSERT(fdMaster >= 0 && grantpt(fdMaster) == 0 && unlockpt(fdMaster) == 0);
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        /* a session of its own whose controlling terminal is the new pty */
        char *azArgv[] = {(char *)zVramtrace, "record", "-o", (char *)zDir, "--", "/bin/sh", "-c", zScript, NULL};
        int fdSlave;
        setsid();
        fdSlave = open(ptsname(fdMaster), O_RDWR);
        if (fdSlave < 0) _exit(120);
        dup2(fdSlave, 0);
        dup2(fdSlave, 1);
        dup2(fdSlave, 2);
        close(fdMaster);
        setenv("VRAMTRACE_LIB", "/bin/sh", 1);
        execv(azArgv[0], azArgv);
        _exit(121);
    }
    for (i = 0; i < 500 && access(zReady, F_OK) != 0; i++) usleep(10000);
    ASSERT(access(zReady, F_OK) == 0);
    ASSERT_EQ(1, write(fdMaster, "\003", 1)); /* Ctrl-C: the terminal signals its foreground group */
    for (;;) { /* drain the terminal so the job never blocks on output */
        char aBuf[256];
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        ASSERT(done == 0);
        {
            struct timeval tv = {0, 20000};
            fd_set set;
            FD_ZERO(&set);
            FD_SET(fdMaster, &set);
            if (select(fdMaster + 1, &set, NULL, NULL, &tv) > 0 && read(fdMaster, aBuf, sizeof aBuf) < 0) {
                /* EIO once the slave side is closed */
            }
        }
    }
    close(fdMaster);
    zCount = cli_read(zInts);
    *pnInt = 0;
    for (i = 0; zCount[i]; i++) *pnInt += zCount[i] == '\n';
    free(zCount);
    ASSERT(WIFEXITED(status));
    return WEXITSTATUS(status);
}

TEST(record_terminal_interrupt_once)
{
    int nInt = -1;
    /*
     * The job shares vramtrace's process group: the terminal's SIGINT reaches it
     * directly, its trap runs once and it finishes with its own status.
     * (vramtrace does not forward this one; a forwarded copy would usually
     * coalesce with the pending signal, so that part is not observable here.)
     */
    ASSERT_EQ(5, record_on_terminal(cli_tmpdir(), "", &nInt));
    ASSERT_EQ(1, nInt);
    /* a job in a process group of its own gets the terminal's SIGINT from vramtrace */
    if (access("/usr/bin/setsid", X_OK) == 0) {
        ASSERT_EQ(5, record_on_terminal(cli_tmpdir(), "/usr/bin/setsid", &nInt));
        ASSERT_EQ(1, nInt);
    }
    cli_cleanup();
}

TEST(record_missing_command)
{
    const char *zDir = cli_tmpdir();
    char zErr[PATH_MAX + 16], *z;
    char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", (char *)zDir, "--",
                      "vt-no-such-command-xyz", "arg", NULL};
    const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", NULL};
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    ASSERT_EQ(127, cli_run(azArgv, azEnv, NULL, zErr));
    z = cli_read(zErr);
    ASSERT_STREQ("vramtrace: record: cannot run 'vt-no-such-command-xyz': No such file or directory\n", z);
    free(z);
    cli_cleanup();
}

/* A command that exists but cannot be run: 126, as a shell gives (was 127, which says "not found"). */
TEST(record_command_not_executable)
{
    const char *zDir = cli_tmpdir();
    char zErr[PATH_MAX + 16], zCmd[PATH_MAX + 16], zWant[2 * PATH_MAX], *z;
    char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", (char *)zDir, "--", zCmd, NULL};
    const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", NULL};
    FILE *f;
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    snprintf(zCmd, sizeof zCmd, "%s/job.sh", zDir);
    f = fopen(zCmd, "w");
    ASSERT(f != NULL);
    fputs("#!/bin/sh\nexit 0\n", f);
    fclose(f);
    ASSERT_EQ(0, chmod(zCmd, 0644)); /* no execute bit: refused even to root */
    ASSERT_EQ(126, cli_run(azArgv, azEnv, NULL, zErr));
    z = cli_read(zErr);
    snprintf(zWant, sizeof zWant, "vramtrace: record: cannot run '%s': Permission denied\n", zCmd);
    ASSERT_STREQ(zWant, z);
    free(z);
    /* the shell agrees */
    snprintf(zWant, sizeof zWant, "'%s' 2>/dev/null", zCmd);
    {
        int st = system(zWant);
        ASSERT(WIFEXITED(st));
        ASSERT_EQ(126, WEXITSTATUS(st));
    }
    cli_cleanup();
}

TEST(record_usage_errors)
{
    const char *zDir = cli_tmpdir();
    char zErr[PATH_MAX + 16], *z;
    char *azNone[] = {(char *)cli_vramtrace(), "record", NULL};
    char *azOnlyOpt[] = {(char *)cli_vramtrace(), "record", "-o", (char *)zDir, NULL};
    char *azEmpty[] = {(char *)cli_vramtrace(), "record", "--tensors", "--", NULL};
    char *azBad[] = {(char *)cli_vramtrace(), "record", "--bogus", "--", "true", NULL};
    char *azDepth[] = {(char *)cli_vramtrace(), "record", "--backtrace", "65", "--", "true", NULL};
    char *azHelp[] = {(char *)cli_vramtrace(), "record", "--help", NULL};
    const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", NULL};
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    ASSERT_EQ(VT_EXIT_USAGE, cli_run(azNone, azEnv, NULL, zErr));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "record: no command given");
    free(z);
    ASSERT_EQ(VT_EXIT_USAGE, cli_run(azOnlyOpt, azEnv, NULL, NULL));
    ASSERT_EQ(VT_EXIT_USAGE, cli_run(azEmpty, azEnv, NULL, NULL));
    ASSERT_EQ(VT_EXIT_USAGE, cli_run(azBad, azEnv, NULL, zErr));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "unknown option '--bogus'");
    free(z);
    ASSERT_EQ(VT_EXIT_USAGE, cli_run(azDepth, azEnv, NULL, NULL));
    {
        char *azSize[] = {(char *)cli_vramtrace(), "record", "--max-size", "512K", "--", "true", NULL};
        char *azWhen[] = {(char *)cli_vramtrace(), "record", "--start-after", "soon", "--", "true", NULL};
        char *azOrder[] = {(char *)cli_vramtrace(), "record", "--start-after", "60", "--stop-after", "1m", "--",
                           "true", NULL};
        ASSERT_EQ(VT_EXIT_USAGE, cli_run(azSize, azEnv, NULL, zErr));
        z = cli_read(zErr);
        ASSERT_CONTAINS(z, "--max-size '512K' is not a size of at least 1M");
        free(z);
        ASSERT_EQ(VT_EXIT_USAGE, cli_run(azWhen, azEnv, NULL, zErr));
        z = cli_read(zErr);
        ASSERT_CONTAINS(z, "--start-after 'soon' is not a duration");
        free(z);
        ASSERT_EQ(VT_EXIT_USAGE, cli_run(azOrder, azEnv, NULL, zErr));
        z = cli_read(zErr);
        ASSERT_CONTAINS(z, "--stop-after must be later than --start-after");
        free(z);
        /* alone: compared with the start, not with an option never given */
        char *azStop[] = {(char *)cli_vramtrace(), "record", "--stop-after", "0", "--", "true", NULL};
        ASSERT_EQ(VT_EXIT_USAGE, cli_run(azStop, azEnv, NULL, zErr));
        z = cli_read(zErr);
        ASSERT_STREQ("vramtrace: record: --stop-after '0' must be later than the start\n", z);
        free(z);
    }
    {
        char *azMode[] = {(char *)cli_vramtrace(), "record", "--kernels", "some", "--", "true", NULL};
        char *azWarm[] = {(char *)cli_vramtrace(), "record", "--kernel-warmup", "soon", "--", "true", NULL};
        ASSERT_EQ(VT_EXIT_USAGE, cli_run(azMode, azEnv, NULL, zErr));
        z = cli_read(zErr);
        ASSERT_CONTAINS(z, "some");
        free(z);
        ASSERT_EQ(VT_EXIT_USAGE, cli_run(azWarm, azEnv, NULL, zErr));
        z = cli_read(zErr);
        ASSERT_CONTAINS(z, "--kernel-warmup 'soon' is not a duration");
        free(z);
        { /* a warm-up without the mode it belongs to was ignored in silence */
            char *azAlone[] = {(char *)cli_vramtrace(), "record", "--kernel-warmup", "5s", "--", "true", NULL};
            char *azFull[] = {(char *)cli_vramtrace(), "record", "--kernels", "full", "--kernel-warmup", "5s", "--",
                              "true", NULL};
            char *azSum[] = {(char *)cli_vramtrace(), "record", "--kernels", "summary", "--kernel-warmup", "5s", "--",
                             "true", NULL};
            const char *azSumEnv[] = {"VRAMTRACE_LIB=/bin/sh", "VRAMTRACE_KERNELS=summary", NULL};
            ASSERT_EQ(VT_EXIT_USAGE, cli_run(azAlone, azEnv, NULL, zErr));
            z = cli_read(zErr);
            ASSERT_STREQ("vramtrace: record: --kernel-warmup needs --kernels summary (in full mode every kernel is "
                         "written)\n", z);
            free(z);
            ASSERT_EQ(VT_EXIT_USAGE, cli_run(azFull, azEnv, NULL, NULL));
            ASSERT_EQ(VT_EXIT_OK, cli_run(azSum, azEnv, NULL, NULL));
            ASSERT_EQ(VT_EXIT_OK, cli_run(azAlone, azSumEnv, NULL, NULL)); /* the mode from the environment */
        }
    }
    ASSERT_EQ(VT_EXIT_OK, cli_run(azHelp, azEnv, zErr, NULL));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "usage: vramtrace record [OPTIONS] [--] COMMAND [ARG...]");
    ASSERT_CONTAINS(z, "--no-kernel-args");
    ASSERT_CONTAINS(z, "--max-size SIZE");
    ASSERT_CONTAINS(z, "--start-after T");
    ASSERT_CONTAINS(z, "--kernels MODE");
    ASSERT_CONTAINS(z, "--kernel-warmup T");
    free(z);
    cli_cleanup();
}

TEST(record_library_not_found)
{
    const char *zDir = cli_tmpdir();
    char zErr[PATH_MAX + 16], zCopy[PATH_MAX + 16], zCmd[4 * PATH_MAX], *z;
    char *azArgv[] = {(char *)cli_vramtrace(), "record", "--", "true", NULL};
    const char *azEnv[] = {"VRAMTRACE_LIB=/nonexistent/libvramtrace.so", NULL};
    const char *azNoEnv[] = {"VRAMTRACE_LIB", NULL};
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    ASSERT_EQ(VT_EXIT_NOLIB, cli_run(azArgv, azEnv, NULL, zErr));
    z = cli_read(zErr);
    ASSERT_STREQ("vramtrace: record: VRAMTRACE_LIB=/nonexistent/libvramtrace.so does not name a file\n", z);
    free(z);
    /* a copy of the command in a directory with no library beside it */
    snprintf(zCopy, sizeof zCopy, "%s/bin/vramtrace", zDir);
    snprintf(zCmd, sizeof zCmd, "mkdir -p '%s/bin' && cp '%s' '%s'", zDir, cli_vramtrace(), zCopy);
    ASSERT_EQ(0, system(zCmd));
    azArgv[0] = zCopy;
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    ASSERT_EQ(VT_EXIT_NOLIB, cli_run(azArgv, azNoEnv, NULL, zErr));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "libvramtrace.so not found in");
    ASSERT_CONTAINS(z, "set VRAMTRACE_LIB");
    free(z);
    cli_cleanup();
}

/* 2 if the trace's meta has config.tensors = '1', 1 if it lacks the key. */
static int tensors_stamped(const char *zPath)
{
    sqlite3 *db = NULL;
    char zVal[16];
    int found;
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    found = vt__meta_get(db, "config.tensors", zVal, sizeof zVal);
    sqlite3_close(db);
    ASSERT(found >= 0);
    return found == 0 ? 1 : !strcmp(zVal, "1") ? 2 : 0;
}

TEST(record_finds_and_summarizes_traces)
{
    const char *zDir = cli_tmpdir();
    char zFix[PATH_MAX + 16], zOut[PATH_MAX + 16], zOld[PATH_MAX + 64], zErr[PATH_MAX + 16];
    char zScript[4 * PATH_MAX], zWant[3 * PATH_MAX], *z;
    const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", NULL};
    snprintf(zFix, sizeof zFix, "%s/fixture.db", zDir);
    snprintf(zOut, sizeof zOut, "%s/out", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    ASSERT_EQ(0, mkdir(zOut, 0755));
    cli_make_trace(zFix, 1);
    {
        sqlite3 *db = NULL;
        ASSERT_EQ(SQLITE_OK, sqlite3_open(zFix, &db));
        cli_exec(db, "DELETE FROM meta WHERE key = 'config.tensors'"); /* record adds it */
        sqlite3_close(db);
    }
    snprintf(zOld, sizeof zOld, "%s/vramtrace-old-1.db", zOut); /* from an earlier run: not reported */
    snprintf(zScript, sizeof zScript, "cp '%s' '%s'", zFix, zOld);
    ASSERT_EQ(0, system(zScript));
    /* two traced processes of one job, as the tracer names them, plus a WAL companion */
    snprintf(zScript, sizeof zScript,
             "cp '%s' \"$(dirname \"$VRAMTRACE_OUTPUT\")/vramtrace-testhost-4242.db\" && "
             "cp '%s' \"$(dirname \"$VRAMTRACE_OUTPUT\")/vramtrace-testhost-4343.db\" && "
             ": > \"$(dirname \"$VRAMTRACE_OUTPUT\")/vramtrace-testhost-4343.db-wal\"",
             zFix, zFix);
    {
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "--tensors", "-o", zOut, "--", "/bin/sh", "-c",
                          zScript, NULL};
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, zErr));
    }
    ASSERT_EQ(1, tensors_stamped(zOld)); /* not this run's trace: untouched */
    snprintf(zWant, sizeof zWant, "%s/vramtrace-testhost-4242.db", zOut);
    ASSERT_EQ(2, tensors_stamped(zWant));
    snprintf(zWant, sizeof zWant, "%s/vramtrace-testhost-4343.db", zOut);
    ASSERT_EQ(2, tensors_stamped(zWant));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "vramtrace: 2 traces written:\n");
    snprintf(zWant, sizeof zWant, "\n  %s/vramtrace-testhost-4242.db\n", zOut);
    ASSERT_CONTAINS(z, zWant);
    snprintf(zWant, sizeof zWant, "\n  %s/vramtrace-testhost-4343.db\n", zOut);
    ASSERT_CONTAINS(z, zWant);
    ASSERT(strstr(z, "vramtrace-old-1.db") == NULL);
    ASSERT(strstr(z, ".db-wal") == NULL);
    ASSERT_CONTAINS(z, "\n    process     pid 4242 (parent 4200), rank 1 of 4 (local 1), host gpu-node-7\n");
    ASSERT_CONTAINS(z, "\n    devices     0  NVIDIA H100 80GB HBM3 (79.6 GiB)\n");
    ASSERT_CONTAINS(z, "\n    duration    2.50 s (first to last event), started 2025-11-21 18:40:01.123 UTC\n");
    ASSERT_CONTAINS(z, "\n    memory      4 allocations (3.50 MiB), 1 free; level: allocations\n");
    ASSERT_CONTAINS(z, "\n                device 0: peak 3.00 MiB allocated at 100.0 ms (= reserved: one CUDA allocation "
                       "per buffer); 78.6 GiB in use on the device (every process and the CUDA context) at 900.0 ms\n");
    ASSERT_CONTAINS(z, "\n    activity    2 copies (1.00 MiB), 3 kernels, 1 OOM\n");
    ASSERT_CONTAINS(z, "\n    dropped     WARNING: 150 records lost; counts, peaks and findings are incomplete\n");
    snprintf(zWant, sizeof zWant, "  next: vramtrace analyze %s/vramtrace-testhost-4242.db %s/vramtrace-testhost-4343.db\n",
             zOut, zOut);
    ASSERT_CONTAINS(z, zWant);
    free(z);
    cli_cleanup();
}

TEST(record_reports_missing_trace)
{
    const char *zDir = cli_tmpdir();
    char zErr[PATH_MAX + 16], zWant[PATH_MAX + 128], *z;
    char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", (char *)zDir, "--", "true", NULL};
    const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", NULL};
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, zErr));
    z = cli_read(zErr);
    snprintf(zWant, sizeof zWant, "vramtrace: no trace was written (pattern %s/vramtrace-%%h-%%p.db).\n", zDir);
    ASSERT_CONTAINS(z, zWant);
    ASSERT_CONTAINS(z, "look for a\n  'vramtrace:' line in the job's output above");
    ASSERT(strstr(z, "has no %p") == NULL);
    { /* without a driver (as on a machine with no GPU) that is said; with one, nothing of it */
        void *pLib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
        if (!pLib) ASSERT_CONTAINS(z, "\n  This machine has no CUDA driver that loads: no process can use a GPU here\n"
                                      "  (libcuda.so.1: ");
        else ASSERT(strstr(z, "no CUDA driver") == NULL);
        if (pLib) dlclose(pLib);
    }
    free(z);
    { /* no trace, but PyTorch's own history (the hook's snapshots): named, with what reads them */
        char zJob[PATH_MAX + 128];
        char *azSnap[] = {(char *)cli_vramtrace(), "record", "-o", (char *)zDir, "--", "/bin/sh", "-c", zJob, NULL};
        snprintf(zJob, sizeof zJob, ": > \"$VRAMTRACE_SNAPSHOT_DIR/vramtrace-node7-4242.snapshot.pickle\"");
        ASSERT_EQ(0, cli_run(azSnap, azEnv, NULL, zErr));
        z = cli_read(zErr);
        snprintf(zWant, sizeof zWant,
                 "  PyTorch's own allocation history was written (1 snapshot), which analyze reads:\n"
                 "    %s/vramtrace-node7-4242.snapshot.pickle\n", zDir);
        ASSERT_CONTAINS(z, zWant);
        free(z);
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, zErr)); /* an earlier run's snapshot, untouched: not this run's */
        z = cli_read(zErr);
        ASSERT(strstr(z, "snapshot") == NULL);
        free(z);
    }
    { /* VRAMTRACE_DISABLE inherited: said before the job and as the reason, not "never used CUDA" */
        const char *azOff[] = {"VRAMTRACE_LIB=/bin/sh", "VRAMTRACE_DISABLE=yes", NULL};
        ASSERT_EQ(0, cli_run(azArgv, azOff, NULL, zErr));
        z = cli_read(zErr);
        ASSERT_CONTAINS(z, "vramtrace: record: VRAMTRACE_DISABLE=yes is set: the tracer will record nothing (unset it to "
                           "trace)\n");
        ASSERT_CONTAINS(z, "\n  VRAMTRACE_DISABLE=yes is set in the environment: the tracer records nothing; unset it.\n");
        ASSERT(strstr(z, "never used CUDA") == NULL);
        free(z);
    }
    /* a single file name: a note that several processes would overwrite each other */
    snprintf(zWant, sizeof zWant, "%s/one.db", zDir);
    azArgv[3] = zWant;
    ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, zErr));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "one.db has no %p: if the job starts several CUDA processes");
    ASSERT_CONTAINS(z, "one.db).\n");
    free(z);
    cli_cleanup();
}


/* How many times zNeedle occurs in z. */
static int count_of(const char *z, const char *zNeedle)
{
    int n = 0;
    for (const char *p = strstr(z, zNeedle); p; p = strstr(p + 1, zNeedle)) n++;
    return n;
}

/* Meta value zKey of the trace at zPath (static buffer), or NULL when absent. */
static const char *trace_meta(const char *zPath, const char *zKey)
{
    static char zVal[512];
    sqlite3 *db = NULL;
    int found;
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    found = vt__meta_get(db, zKey, zVal, sizeof zVal);
    sqlite3_close(db);
    ASSERT(found >= 0);
    return found == 1 ? zVal : NULL;
}

/* Meta rows of the trace at zPath whose key starts with zPrefix. */
static int trace_meta_count(const char *zPath, const char *zPrefix)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *pStmt = NULL;
    int n;
    ASSERT_EQ(SQLITE_OK, sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, NULL));
    ASSERT_EQ(SQLITE_OK, sqlite3_prepare_v2(db, "SELECT count(*) FROM meta WHERE substr(key, 1, length(?1)) = ?1", -1,
                                            &pStmt, NULL));
    sqlite3_bind_text(pStmt, 1, zPrefix, -1, SQLITE_STATIC);
    ASSERT_EQ(SQLITE_ROW, sqlite3_step(pStmt));
    n = sqlite3_column_int(pStmt, 0);
    sqlite3_finalize(pStmt);
    sqlite3_close(db);
    return n;
}

/*
 * Run `vramtrace record` (NVML from zNvml, scripted by zScript: VT_FAKE_NVML) on a CUDA-free job
 * that writes the fixture trace, with its clock anchor at about now and a device-memory sample
 * near its peak (so the peak's figure is device used), as pid 4242's trace; with bWait the job
 * waits until record read NVML's process lists while it ran. Returns the trace's path (static
 * buffer); record's stderr goes to DIR/err.txt, its exit status must be 0.
 */
static const char *record_nvml(const char *zDir, const char *zNvml, const char *zScript, int bWait)
{
    static char zTrace[PATH_MAX + 32];
    char zFix[PATH_MAX + 16], zErr[PATH_MAX + 16], zPolled[PATH_MAX + 16], zJob[4 * PATH_MAX], zSql[256];
    char zFake[PATH_MAX + 512], zLib[PATH_MAX + 32];
    struct timespec now;
    sqlite3 *db = NULL;
    snprintf(zFix, sizeof zFix, "%s/fixture.db", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    snprintf(zPolled, sizeof zPolled, "%s/polled", zDir);
    snprintf(zTrace, sizeof zTrace, "%s/vramtrace-testhost-4242.db", zDir);
    unlink(zPolled); /* an earlier run's */
    cli_make_trace(zFix, 1);
    clock_gettime(CLOCK_REALTIME, &now);
    ASSERT_EQ(SQLITE_OK, sqlite3_open(zFix, &db));
    snprintf(zSql, sizeof zSql, "UPDATE meta SET value = '%lld' WHERE key = 'clock_anchor_wall_ns'",
             (long long)now.tv_sec * 1000000000 + now.tv_nsec - 2000000000);
    cli_exec(db, zSql);
    /* 9.65 GiB in use at 1.25 s, when 3 MiB were traced */
    cli_exec(db, "INSERT INTO meta VALUES('device.0.mem_sample.0', '1250000000 75161059328 85520809984'),"
                 "('device.0.used_at_context_bytes', '1610612736')");
    sqlite3_close(db);
    snprintf(zJob, sizeof zJob,
             "cp '%s' '%s' && if [ %d = 1 ]; then i=0; while [ ! -e '%s' ] && [ $i -lt 1200 ]; do sleep 0.05; "
             "i=$((i+1)); done; fi",
             zFix, zTrace, bWait, zPolled);
    snprintf(zFake, sizeof zFake, "VT_FAKE_NVML=%s,polled=%s", zScript, zPolled);
    snprintf(zLib, sizeof zLib, "VRAMTRACE_NVML=%s", zNvml);
    {
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", (char *)zDir, "--", "/bin/sh", "-c", zJob, NULL};
        const char *azEnv[] = {"VRAMTRACE_LIB=/bin/sh", zLib, zFake, NULL};
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, zErr));
    }
    return zTrace;
}

/* `vramtrace analyze --format FORMAT zTrace` (stdout, heap). */
static char *analyze_out(const char *zDir, const char *zTrace, const char *zFormat)
{
    char zOut[PATH_MAX + 16];
    char *azArgv[] = {(char *)cli_vramtrace(), "analyze", "--format", (char *)zFormat, (char *)zTrace, NULL};
    snprintf(zOut, sizeof zOut, "%s/analyze.out", zDir);
    ASSERT(cli_run(azArgv, NULL, zOut, NULL) <= 1); /* 1: findings */
    return cli_read(zOut);
}

TEST(record_reads_other_processes)
{
    const char *zDir = cli_tmpdir(), *zTrace, *z;
    char zErr[PATH_MAX + 16], *zOut;
    long long ts, bytes;
    int n;
    /* NVML's device 1 is the trace's device 0 (same UUID): another process held 1 GiB before the
     * job and 2 GiB while it ran; device 0 (5 GiB of a third process) must not be taken */
    zTrace = record_nvml(zDir, VT_FAKE_NVML,
                         "uuid=GPU-1234,bus=27,dev=0,used=1207959552,launch=1073741824,later=2147483648,job=4242,"
                         "jobbytes=3221225472",
                         1);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    zOut = cli_read(zErr);
    /* record's summary: the readings, and nothing else about NVML */
    ASSERT_CONTAINS(zOut, "\n    others      device 0: other processes 1.00 GiB before launch, at most 2.00 GiB while it "
                          "ran (");
    ASSERT_EQ(1, count_of(zOut, "NVML"));
    ASSERT(strstr(zOut, "nvml") == NULL);
    free(zOut);
    ASSERT_STREQ("ok", trace_meta(zTrace, "nvml.status"));
    ASSERT_STREQ("uuid GPU-1234", trace_meta(zTrace, "nvml.device.0.match"));
    ASSERT_STREQ("1207959552", trace_meta(zTrace, "nvml.device.0.used_at_launch_bytes"));
    ASSERT_STREQ("1073741824 1", trace_meta(zTrace, "nvml.device.0.others_at_launch"));
    ASSERT(trace_meta(zTrace, "nvml.device.0.launch_ns") != NULL);
    ASSERT(trace_meta(zTrace, "nvml.device.0.others_note") == NULL);
    ASSERT(trace_meta(zTrace, "nvml.device.1.match") == NULL);
    z = trace_meta(zTrace, "nvml.device.0.others_sample.0");
    ASSERT(z != NULL);
    ASSERT_EQ(3, sscanf(z, "%lld %lld %d", &ts, &bytes, &n));
    ASSERT_EQ(2147483648LL, bytes); /* pid 4242 is this trace's own process: not another's */
    ASSERT_EQ(1, n);
    ASSERT(ts > 3000000000LL); /* on the trace's clock: after the job started, 2 s after the anchor */
    /* the processes by pid, bytes and name (/proc/PID/comm, read by record: the fake pid has none) */
    z = trace_meta(zTrace, "nvml.device.0.others_procs.0");
    ASSERT(z != NULL && !strncmp(z, "999991 2147483648 ", 18) && !strchr(z, ';'));
    z = trace_meta(zTrace, "nvml.device.0.others_procs_at_launch");
    ASSERT(z != NULL && !strncmp(z, "999991 1073741824 ", 18));
    ASSERT(trace_meta(zTrace, "nvml.device.0.others_procs.1") == NULL); /* the same list later: not written again */
    /* the peak and the OOM: other processes are a part of 2 GiB, out of the CUDA context's share */
    zOut = analyze_out(zDir, zTrace, "json");
    {
        const char *p = strstr(zOut, "\"breakdown_other_processes\": {\"bytes\": 2147483648, ");
        ASSERT(p != NULL);
        ASSERT(strstr(p + 1, "\"breakdown_other_processes\": {\"bytes\": 2147483648, ") != NULL); /* the OOM's */
        ASSERT_CONTAINS(zOut, "{\"category\": \"other_processes\", \"bytes\": 2147483648, ");
        ASSERT_CONTAINS(zOut, "\"breakdown_basis\": \"device used\", \"breakdown_bytes\": 10359750656, ");
        /* the rest of the device used: 9.65 GiB less 2 GiB (the traced 3 MiB are the runtime's own, in it too) */
        ASSERT_CONTAINS(zOut, "{\"category\": \"cuda_context\", \"bytes\": 8212267008, ");
        ASSERT_CONTAINS(zOut, "at its reading nearest the moment");
    }
    free(zOut);
    zOut = analyze_out(zDir, zTrace, "text");
    ASSERT_CONTAINS(zOut, "2.00 GiB");
    ASSERT_CONTAINS(zOut, "other processes: every process on the device but this one");
    ASSERT(strstr(zOut, "other processes: in the CUDA context part") == NULL);
    free(zOut);
    cli_cleanup();
}

/*
 * The trace at zTrace has no samples of other processes but a note containing zNote, the launch
 * reading zLaunch (NULL: none), and its analysis in JSON contains zWant.
 */
static void no_samples(const char *zDir, const char *zTrace, const char *zLaunch, const char *zNote, const char *zWant)
{
    const char *z = trace_meta(zTrace, "nvml.device.0.others_at_launch");
    char *zOut;
    if (zLaunch) ASSERT_STREQ(zLaunch, z);
    else ASSERT(z == NULL);
    ASSERT_EQ(0, trace_meta_count(zTrace, "nvml.device.0.others_sample."));
    z = trace_meta(zTrace, "nvml.device.0.others_note");
    ASSERT(z != NULL);
    ASSERT_CONTAINS(z, zNote);
    zOut = analyze_out(zDir, zTrace, "json");
    ASSERT_CONTAINS(zOut, zWant);
    free(zOut);
}

TEST(record_nvml_other_pid_namespace)
{
    const char *zDir = cli_tmpdir(), *zTrace;
    char zErr[PATH_MAX + 16], *zOut;
    /* the lists never name the trace's pid (a container's NVML gives host PIDs): launch only */
    zTrace = record_nvml(zDir, VT_FAKE_NVML, "uuid=GPU-1234,launch=1073741824,later=2147483648,job=0", 1);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    zOut = cli_read(zErr);
    ASSERT_CONTAINS(zOut, "\n    others      device 0: other processes 1.00 GiB before launch, not read while it ran "
                          "(meta nvml.device.0.others_note says why) (NVML, read by record)\n");
    free(zOut);
    no_samples(zDir, zTrace, "1073741824 1", "this process (pid 4242) is in none of NVML's",
               "\"breakdown_other_processes\": {\"bytes\": 1073741824, ");
    zOut = analyze_out(zDir, zTrace, "json");
    ASSERT_CONTAINS(zOut, "before the job was launched");
    free(zOut);
    /* lists that show no process at all, not even the job's own: their 0 is not taken */
    zTrace = record_nvml(zDir, VT_FAKE_NVML, "uuid=GPU-1234,used=1207959552,launch=1073741824,job=4242,hide=1", 1);
    no_samples(zDir, zTrace, NULL, "showed no process at all (before launch nor while the job ran",
               "\"breakdown_other_processes\": {\"bytes\": null, \"at_context_at_most_bytes\": 1207959552, ");
    cli_cleanup();
}

TEST(record_without_nvml)
{
    const char *zDir = cli_tmpdir(), *zTrace, *z;
    char zErr[PATH_MAX + 16], zMissing[PATH_MAX + 32], *zOut;
    /* no library, then a library whose init fails (no driver), then lists it may not read */
    snprintf(zMissing, sizeof zMissing, "%s/none/libnvidia-ml.so.1", zDir);
    zTrace = record_nvml(zDir, zMissing, "", 0);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    zOut = cli_read(zErr);
    ASSERT(strstr(zOut, "NVML") == NULL && strstr(zOut, "nvml") == NULL);
    ASSERT_CONTAINS(zOut, "1 trace written");
    free(zOut);
    z = trace_meta(zTrace, "nvml.status");
    ASSERT(z != NULL);
    ASSERT_CONTAINS(z, "unavailable: ");
    ASSERT_EQ(0, trace_meta_count(zTrace, "nvml.device."));
    zOut = analyze_out(zDir, zTrace, "json");
    ASSERT_CONTAINS(zOut, "\"breakdown_other_processes\": {\"bytes\": null, \"at_context_at_most_bytes\": 1610612736, ");
    ASSERT(strstr(zOut, "\"other_processes\"") == NULL);
    free(zOut);
    zTrace = record_nvml(zDir, VT_FAKE_NVML, "fail=init", 0);
    ASSERT_STREQ("unavailable: nvmlInit_v2 returned 9", trace_meta(zTrace, "nvml.status"));
    ASSERT_EQ(0, trace_meta_count(zTrace, "nvml.device."));
    /* lists refused: the device's use before launch bounds the others, their bytes stay unknown */
    zTrace = record_nvml(zDir, VT_FAKE_NVML, "uuid=GPU-1234,used=1207959552,fail=procs", 0);
    ASSERT_STREQ("1207959552", trace_meta(zTrace, "nvml.device.0.used_at_launch_bytes"));
    ASSERT(trace_meta(zTrace, "nvml.device.0.others_at_launch") == NULL);
    zOut = analyze_out(zDir, zTrace, "json");
    ASSERT_CONTAINS(zOut, "\"breakdown_other_processes\": {\"bytes\": null, \"at_context_at_most_bytes\": 1207959552, ");
    ASSERT_CONTAINS(zOut, "before the job was launched the device had 1.12 GiB in use (NVML");
    free(zOut);
    cli_cleanup();
}

#ifndef VT_CMAKE_COMMAND
#define VT_CMAKE_COMMAND "cmake"
#endif

TEST(record_from_installed_tree)
{
    const char *zLibBuilt = built_lib();
    const char *zDir = cli_tmpdir();
    char zCmd[4 * PATH_MAX], zPath[PATH_MAX + 64], zLib[PATH_MAX], zEnvFile[PATH_MAX + 16];
    char zScript[PATH_MAX + 64], zInstLib[PATH_MAX + 64], *zDump;
    struct stat st;
    int rc;
    (void)zLibBuilt;
    snprintf(zCmd, sizeof zCmd, "'%s' --install '%s' --prefix '%s/inst' > '%s/install.log' 2>&1",
             VT_CMAKE_COMMAND, getenv("VT_BUILD_DIR"), zDir, zDir);
    ASSERT_EQ(0, system(zCmd));
    snprintf(zPath, sizeof zPath, "%s/inst/bin/vramtrace", zDir);
    ASSERT(access(zPath, X_OK) == 0);
    snprintf(zPath, sizeof zPath, "%s/inst/share/man/man1/vramtrace.1", zDir);
    ASSERT(stat(zPath, &st) == 0 && st.st_size > 1000);
    snprintf(zPath, sizeof zPath, "%s/inst/include/vramtrace/schema.h", zDir);
    ASSERT(access(zPath, R_OK) == 0);
    snprintf(zCmd, sizeof zCmd, "ls '%s'/inst/lib*/vramtrace/libvramtrace.so > '%s/lib.txt' 2>/dev/null", zDir, zDir);
    ASSERT_EQ(0, system(zCmd)); /* the tracer library is installed, in its own directory */
    snprintf(zPath, sizeof zPath, "%s/lib.txt", zDir);
    zDump = cli_read(zPath);
    *strchr(zDump, '\n') = 0;
    ASSERT(realpath(zDump, zInstLib) != NULL);
    free(zDump);
    /* the installed command finds the installed library, not the build tree's */
    snprintf(zEnvFile, sizeof zEnvFile, "%s/env.txt", zDir);
    snprintf(zScript, sizeof zScript, "env > '%s'", zEnvFile);
    snprintf(zPath, sizeof zPath, "%s/inst/bin/vramtrace", zDir);
    {
        char *azArgv[] = {zPath, "record", "-o", (char *)zDir, "--", "/bin/sh", "-c", zScript, NULL};
        const char *azEnv[] = {"VRAMTRACE_LIB", NULL};
        rc = cli_run(azArgv, azEnv, NULL, NULL);
    }
    ASSERT_EQ(0, rc);
    zDump = cli_read(zEnvFile);
    snprintf(zLib, sizeof zLib, "%s", env_value(zDump, "CUDA_INJECTION64_PATH"));
    ASSERT_STREQ(zInstLib, zLib);
    free(zDump);
    cli_cleanup();
}

/* Path of the scripted CUDA job (tests/fake_job.c); skips where the tracer is not built. */
static const char *fake_job(void)
{
#ifdef VT_FAKE_JOB
    return VT_FAKE_JOB;
#else
    SKIP("the tracer and its scripted CUDA job are not built in this tree");
#endif
}

/*
 * `vramtrace record -o DIR/ -- fake_job STEPS` with DIR a tmpfs of zSize in a mount namespace of
 * its own (unshare -r -m), the built tracer, then `info` of what it wrote, stderr of both to zErr. Returns record's exit status; skips
 * where no private tmpfs can be mounted (no user namespaces: unshare itself refused, or the mount).
 */
static int record_on_tmpfs(const char *zDir, const char *zSize, const char *zSteps, const char *zErr)
{
    char zCmd[4 * PATH_MAX];
    int rc;
    snprintf(zCmd, sizeof zCmd,
             "mkdir -p '%s/mnt' && { unshare -r -m true 2>/dev/null || exit 77; } && unshare -r -m sh -c 'mount -t tmpfs -o size=%s tmpfs \"$1\" || exit 77; "
             "VRAMTRACE_LIB=\"$2\" \"$3\" record -o \"$1\"/ -- \"$4\" %s; rc=$?; \"$3\" info \"$1\"/*.db >&2; exit $rc' "
             "sh '%s/mnt' '%s' '%s' '%s' 2>'%s'",
             zDir, zSize, zSteps, zDir, built_lib(), cli_vramtrace(), fake_job(), zErr);
    rc = system(zCmd);
    rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
    if (rc == 77) SKIP("no private tmpfs can be mounted here (unshare -r -m)");
    return rc;
}

/* A disk that fills while the job runs: the job lives and exits 0, and the tracer says what happened in words. */
TEST(record_full_disk)
{
    const char *zDir = cli_tmpdir();
    char zErr[PATH_MAX + 16], *z;
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    ASSERT_EQ(0, record_on_tmpfs(zDir, "1m", "leak pairs=100000 leak", zErr));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "vramtrace: trace write failed (");
    ASSERT_CONTAINS(z, ": database or disk is full); rows not written are counted as dropped\n");
    ASSERT_CONTAINS(z, ".db is incomplete: rows could not be written (a full disk or an I/O error, said above); "
                       "they are counted in its 'dropped' table\n");
    ASSERT(strstr(z, "closing failed") == NULL); /* was "(closing failed: -5)" */
    /* rows lost to the full disk: the trace is not called closed cleanly (info said so, record's summary was silent) */
    ASSERT(strstr(z, "\nstatus      closed cleanly\n") == NULL);
    ASSERT(strstr(z, "rows could not be written (a full disk, an I/O error or the file-size limit)") != NULL);
    if (strstr(z, "writer  rows (")) { /* the closing rows fit: the exit handler closed it, and info says how it is */
        ASSERT_CONTAINS(z, "\nstatus      WARNING: closed, but incomplete: ");
        ASSERT_CONTAINS(z, "; WARNING: closed, but incomplete: ");
    }
    /* info: the losses' row says why (was "rows (SQLite error)"), where the closing rows still fit on the disk */
    ASSERT(strstr(z, "rows (SQLite error)") == NULL);
    if (strstr(z, "writer  rows (")) ASSERT_CONTAINS(z, "writer  rows (write failed: disk full, I/O or SQLite error)");
    free(z);
    cli_cleanup();
}

/*
 * CUPTI's fatal error while the flush thread closes the trace for it, on a disk that filled: the close's
 * outcome is said all the same (it was said only when the exit handler closed the trace, and the flush
 * thread's close raced the job's exit), and the job exits as it would.
 */
TEST(record_fatal_error_then_full_disk)
{
    const char *zDir = cli_tmpdir();
    char zErr[PATH_MAX + 16], *z;
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    ASSERT_EQ(0, record_on_tmpfs(zDir, "1m", "leak pairs=100000 fatal sleep=500 leak", zErr));
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "vramtrace: CUPTI reported a fatal error (CUPTI_ERROR_UNKNOWN: device lost); tracing stops");
    ASSERT_CONTAINS(z, ".db is incomplete: rows could not be written (a full disk or an I/O error, said above); "
                       "they are counted in its 'dropped' table\n");
    ASSERT_EQ(1, count_of(z, "is incomplete: rows could not be written")); /* said once, by whoever closed it */
    ASSERT(strstr(z, "called after its fatal error") == NULL);
    free(z);
    cli_cleanup();
}

/*
 * CUPTI's fatal error inside the forced flush at exit (a device lost while the trace is being closed):
 * no CUPTI call after it (the rest of the final flush called CUPTI again), one line, and the trace
 * closed with what it holds and the error in meta (the activity buffers CUPTI held then never come
 * back: their records are missing, as the trace's partial note says).
 */
TEST(record_fatal_error_while_closing)
{
    const char *zDir = cli_tmpdir();
    char zOut[PATH_MAX + 16], zErr[PATH_MAX + 16], zTrace[PATH_MAX + 64], zLib[PATH_MAX + 32], *z, *p;
    const char *azEnv[] = {zLib, NULL};
    snprintf(zOut, sizeof zOut, "%s/out/", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    snprintf(zLib, sizeof zLib, "VRAMTRACE_LIB=%s", built_lib());
    {
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", zOut, "--", (char *)fake_job(), "pairs=10", "leak",
                          "fatal-at-close", NULL};
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, zErr));
    }
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "vramtrace: CUPTI reported a fatal error (CUPTI_ERROR_UNKNOWN: device lost during the flush); "
                       "tracing stops");
    ASSERT(strstr(z, "called after its fatal error") == NULL);
    ASSERT(strstr(z, "did not finish within") == NULL); /* no final flush said to hang */
    ASSERT(strstr(z, "may be incomplete") == NULL);
    ASSERT_CONTAINS(z, "vramtrace: 1 trace written:\n");
    ASSERT(strstr(z, "WARNING: trace not closed cleanly") == NULL);
    p = strstr(z, "\n  /"); /* the trace's path, on its own line */
    ASSERT(p != NULL);
    snprintf(zTrace, sizeof zTrace, "%.*s", (int)strcspn(p + 3, "\n"), p + 3);
    free(z);
    ASSERT_STREQ("CUPTI_ERROR_UNKNOWN: device lost during the flush", trace_meta(zTrace, "cupti_fatal_error"));
    ASSERT_STREQ("1", trace_meta(zTrace, "closed_cleanly"));
    cli_cleanup();
}

/* The scripted job recorded, then read by record's summary and by analyze: its trace is one file (no -wal, -shm beside it). */
TEST(record_trace_is_one_file)
{
    const char *zDir = cli_tmpdir();
    char zOut[PATH_MAX + 16], zErr[PATH_MAX + 16], zCmd[3 * PATH_MAX], zList[PATH_MAX + 16], *z;
    const char *azEnv[] = {NULL, NULL};
    char zLib[PATH_MAX + 32];
    snprintf(zOut, sizeof zOut, "%s/out 'a' [1]/", zDir); /* the next step's command is quoted for the shell */
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    snprintf(zLib, sizeof zLib, "VRAMTRACE_LIB=%s", built_lib());
    azEnv[0] = zLib;
    {
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", zOut, "--", (char *)fake_job(), "leak", "pairs=10",
                          NULL};
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, zErr));
    }
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "vramtrace: 1 trace written:\n");
    ASSERT_CONTAINS(z, "    memory      11 allocations (1.04 MiB), 10 frees; level: allocations\n");
    { /* run the next step as printed, in a shell */
        char *zNext = strstr(z, "  next: "), zScript[PATH_MAX + 256];
        ASSERT(zNext != NULL);
        zNext += 8;
        zNext[strcspn(zNext, "\n")] = 0;
        ASSERT(strncmp(zNext, "vramtrace analyze '", 19) == 0);
        ASSERT_CONTAINS(zNext, "/out '\\''a'\\'' [1]/vramtrace-");
        snprintf(zScript, sizeof zScript, "'%s' %s > /dev/null", cli_vramtrace(), zNext + 10);
        ASSERT_EQ(0, system(zScript));
    }
    free(z);
    snprintf(zCmd, sizeof zCmd, "ls -A \"%s\" > '%s/ls.txt'", zOut, zDir);
    ASSERT_EQ(0, system(zCmd));
    snprintf(zList, sizeof zList, "%s/ls.txt", zDir);
    z = cli_read(zList);
    ASSERT_EQ(1, count_of(z, "\n"));
    ASSERT(strstr(z, "-wal") == NULL && strstr(z, "-shm") == NULL);
    free(z);
    cli_cleanup();
}

/* The always-on mode: record's summary, info and info --json count the kernels the summaries hold (they said 0). */
TEST(record_counts_summarized_kernels)
{
    const char *zDir = cli_tmpdir();
    char zOut[PATH_MAX + 16], zErr[PATH_MAX + 16], zInfo[PATH_MAX + 16], zTrace[PATH_MAX + 64], zLib[PATH_MAX + 32];
    char *z, *p;
    const char *azEnv[] = {zLib, NULL};
    snprintf(zOut, sizeof zOut, "%s/out/", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    snprintf(zInfo, sizeof zInfo, "%s/info.txt", zDir);
    snprintf(zLib, sizeof zLib, "VRAMTRACE_LIB=%s", built_lib());
    {
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "--kernels", "summary", "--kernel-warmup", "0", "-o", zOut,
                          "--", (char *)fake_job(), "leak", "kernels=100", NULL};
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, zErr));
    }
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "    activity    0 copies (0 B), 100 kernels (100 summarized), 0 OOMs\n");
    p = strstr(z, "\n  /"); /* the trace's path, on its own line */
    ASSERT(p != NULL);
    snprintf(zTrace, sizeof zTrace, "%.*s", (int)strcspn(p + 3, "\n"), p + 3);
    free(z);
    {
        char *azInfo[] = {(char *)cli_vramtrace(), "info", zTrace, NULL};
        char *azJson[] = {(char *)cli_vramtrace(), "info", "--json", zTrace, NULL};
        ASSERT_EQ(0, cli_run(azInfo, NULL, zInfo, NULL));
        z = cli_read(zInfo);
        ASSERT_CONTAINS(z, "\nkernels     100 (100 of them in kernel_summary rows)\n");
        free(z);
        ASSERT_EQ(0, cli_run(azJson, NULL, zInfo, NULL));
        z = cli_read(zInfo);
        ASSERT_CONTAINS(z, "\"kernels\":100,\"kernels_summarized\":100");
        free(z);
    }
    cli_cleanup();
}

/* The number after zKey ("\"key\":") in JSON text z; INT64_MIN when absent or null. */
static long long json_int_at(const char *z, const char *zKey)
{
    const char *p = strstr(z, zKey);
    if (!p || !strncmp(p + strlen(zKey), "null", 4)) return INT64_MIN;
    return atoll(p + strlen(zKey));
}

/*
 * record --max-size: the records the bound left out as asked are reported apart, not as lost (they
 * were "N records lost"), and the trace is partial from a time inside it: its last event when the
 * bound was marked later (the writer's clock runs ahead of rows that wait for their activity
 * records; "partial from 126.9 ms" was printed for a trace that ended at 32.3 ms).
 */
TEST(record_max_size_omits_not_loses)
{
    const char *zDir = cli_tmpdir();
    char zOut[PATH_MAX + 16], zErr[PATH_MAX + 16], zJson[PATH_MAX + 16], zTrace[PATH_MAX + 64], zLib[PATH_MAX + 32];
    char *z, *p;
    const char *azEnv[] = {zLib, NULL};
    long long from, last;
    snprintf(zOut, sizeof zOut, "%s/out/", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    snprintf(zJson, sizeof zJson, "%s/info.json", zDir);
    snprintf(zLib, sizeof zLib, "VRAMTRACE_LIB=%s", built_lib());
    {
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "--max-size", "1M", "-o", zOut, "--", (char *)fake_job(),
                          "leak", "kernels=30000", "leak", "pairs=20000", "kernels=20000", "leak", NULL};
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, zErr));
    }
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "vramtrace: the trace reached 90% of VRAMTRACE_MAX_BYTES");
    ASSERT_CONTAINS(z, "\n    dropped     none\n");
    ASSERT_CONTAINS(z, " records left out by the size bound, as asked (--max-size): not lost\n");
    ASSERT(strstr(z, "lost;") == NULL);
    p = strstr(z, "\n  /"); /* the trace's path, on its own line */
    ASSERT(p != NULL);
    snprintf(zTrace, sizeof zTrace, "%.*s", (int)strcspn(p + 3, "\n"), p + 3);
    free(z);
    {
        char *azJson[] = {(char *)cli_vramtrace(), "info", "--json", zTrace, NULL};
        ASSERT_EQ(0, cli_run(azJson, NULL, zJson, NULL));
    }
    z = cli_read(zJson);
    ASSERT_CONTAINS(z, "\"dropped\":{\"total\":0,\"write_failed\":0,\"omitted\":");
    ASSERT(json_int_at(z, "\"omitted\":") > 0);
    from = json_int_at(z, "\"from_ns\":");
    last = json_int_at(z, "\"last_ns\":");
    ASSERT(from != INT64_MIN && last != INT64_MIN);
    ASSERT(from <= last);                                  /* inside the trace */
    ASSERT(json_int_at(z, "\"marked_ns\":") >= from);     /* the cause's own mark, never earlier */
    free(z);
    cli_cleanup();
}

/*
 * Two record runs writing into one directory at once: each lists only its own job's traces. Here
 * the job itself runs another `vramtrace record` into the same directory first (whose trace is new
 * to the outer run too: it listed both before), then a CUDA process of its own.
 */
TEST(record_lists_only_its_own_traces)
{
    const char *zDir = cli_tmpdir();
    char zOut[PATH_MAX + 16], zErr[PATH_MAX + 16], zLib[PATH_MAX + 32], zScript[4 * PATH_MAX], *z, *p;
    const char *azEnv[] = {zLib, NULL};
    snprintf(zOut, sizeof zOut, "%s/out/", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    snprintf(zLib, sizeof zLib, "VRAMTRACE_LIB=%s", built_lib());
    snprintf(zScript, sizeof zScript, "'%s' record -o '%s' -- '%s' leak pairs=3 2>'%s/inner.txt' && exec '%s' leak",
             cli_vramtrace(), zOut, fake_job(), zDir, fake_job());
    {
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", zOut, "--", "/bin/sh", "-c", zScript, NULL};
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, zErr));
    }
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "vramtrace: 1 trace written:\n"); /* was 2: the other run's too */
    ASSERT_CONTAINS(z, "    memory      1 allocation (1.00 MiB), 0 frees; level: allocations\n");
    ASSERT(strstr(z, "3 frees") == NULL);
    p = strstr(z, "  next: vramtrace analyze ");
    ASSERT(p != NULL && count_of(p, ".db") == 1);
    free(z);
    snprintf(zScript, sizeof zScript, "%s/inner.txt", zDir);
    z = cli_read(zScript);
    ASSERT_CONTAINS(z, "vramtrace: 1 trace written:\n");
    ASSERT_CONTAINS(z, "    memory      4 allocations (1.01 MiB), 3 frees; level: allocations\n");
    free(z);
    cli_cleanup();
}

/*
 * More kernels than one activity buffer holds (4 MiB: about 18,700 kernel records): CUPTI hands a
 * full buffer back and takes the next, so every kernel is in the trace and none is counted lost
 * (the scripted CUPTI kept the first buffer's 18,723 and dropped the rest without a word).
 */
TEST(record_kernels_beyond_one_buffer)
{
    const char *zDir = cli_tmpdir();
    char zOut[PATH_MAX + 16], zErr[PATH_MAX + 16], zLib[PATH_MAX + 32], *z;
    const char *azEnv[] = {zLib, NULL};
    snprintf(zOut, sizeof zOut, "%s/out/", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    snprintf(zLib, sizeof zLib, "VRAMTRACE_LIB=%s", built_lib());
    {
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", zOut, "--", (char *)fake_job(), "kernels=50000",
                          "leak", NULL};
        ASSERT_EQ(0, cli_run(azArgv, azEnv, NULL, zErr));
    }
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "    activity    0 copies (0 B), 50000 kernels, 0 OOMs\n");
    ASSERT_CONTAINS(z, "    memory      1 allocation (1.00 MiB), 0 frees; level: allocations\n");
    ASSERT_CONTAINS(z, "    dropped     none\n");
    free(z);
    cli_cleanup();
}

/*
 * A job killed with SIGKILL (as by the OOM killer) right after CUDA loaded the tracer, before the
 * writer's first commit: its trace names the process (pid, command line, host, tracer version)
 * all the same, in meta and in info, and info and analyze say it was not closed and recorded nothing.
 */
TEST(record_killed_at_once_names_the_job)
{
    const char *zDir = cli_tmpdir();
    char zOut[PATH_MAX + 16], zErr[PATH_MAX + 16], zInfo[PATH_MAX + 16], zTrace[PATH_MAX + 64], zLib[PATH_MAX + 32];
    char zWant[2 * PATH_MAX], zPidLine[64], *z, *p;
    const char *azEnv[] = {zLib, NULL}, *zPid;
    snprintf(zOut, sizeof zOut, "%s/out/", zDir);
    snprintf(zErr, sizeof zErr, "%s/err.txt", zDir);
    snprintf(zInfo, sizeof zInfo, "%s/info.txt", zDir);
    snprintf(zLib, sizeof zLib, "VRAMTRACE_LIB=%s", built_lib());
    {
        char *azArgv[] = {(char *)cli_vramtrace(), "record", "-o", zOut, "--", (char *)fake_job(), "kill=9", NULL};
        ASSERT_EQ(128 + SIGKILL, cli_run(azArgv, azEnv, NULL, zErr));
    }
    z = cli_read(zErr);
    ASSERT_CONTAINS(z, "vramtrace: record: the job was killed by signal 9");
    p = strstr(z, "\n  /"); /* the trace's path, on its own line */
    ASSERT(p != NULL);
    snprintf(zTrace, sizeof zTrace, "%.*s", (int)strcspn(p + 3, "\n"), p + 3);
    ASSERT_CONTAINS(z, "; WARNING: trace not closed cleanly\n");
    ASSERT(strstr(z, "    process     pid ") != NULL);
    free(z);
    /* meta: whose trace it is, though the process never reached the writer's first commit */
    zPid = trace_meta(zTrace, "pid");
    ASSERT(zPid != NULL && atol(zPid) > 0);
    snprintf(zWant, sizeof zWant, "-%s.db", zPid); /* the file is named after the same pid */
    ASSERT(strlen(zTrace) > strlen(zWant) && !strcmp(zTrace + strlen(zTrace) - strlen(zWant), zWant));
    snprintf(zPidLine, sizeof zPidLine, "\nprocess     pid %s (parent ", zPid);
    snprintf(zWant, sizeof zWant, "%s kill=9", fake_job());
    ASSERT_STREQ(zWant, trace_meta(zTrace, "cmdline"));
    ASSERT(trace_meta(zTrace, "hostname") != NULL && trace_meta(zTrace, "tracer_version") != NULL);
    ASSERT_EQ(0, trace_meta_count(zTrace, "closed_cleanly"));
    /* ... and when it started, on both clocks (written at the first commit before, so missing here) */
    {
        char zBase[32];
        const char *z0 = trace_meta(zTrace, "time_base_ns");
        ASSERT(z0 != NULL);
        snprintf(zBase, sizeof zBase, "%s", z0);
        ASSERT_STREQ(zBase, trace_meta(zTrace, "start_ns"));
        ASSERT_STREQ(zBase, trace_meta(zTrace, "clock_anchor_cupti_ns"));
        ASSERT(trace_meta(zTrace, "clock_anchor_wall_ns") != NULL &&
               atoll(trace_meta(zTrace, "clock_anchor_wall_ns")) > 1700000000LL * 1000000000LL);
    }
    {
        char *azInfo[] = {(char *)cli_vramtrace(), "info", zTrace, NULL};
        char *azAnalyze[] = {(char *)cli_vramtrace(), "analyze", zTrace, NULL};
        ASSERT_EQ(0, cli_run(azInfo, NULL, zInfo, NULL));
        z = cli_read(zInfo);
        ASSERT_CONTAINS(z, zPidLine);
        snprintf(zWant, sizeof zWant, "\ncommand     %s kill=9\n", fake_job());
        ASSERT_CONTAINS(z, zWant);
        ASSERT_CONTAINS(z, "\nversions    tracer " VT_VERSION ", CUDA driver ?");
        ASSERT_CONTAINS(z, "\nstatus      WARNING: not closed cleanly (the process was killed, crashed or is still "
                           "running)");
        ASSERT_CONTAINS(z, "\nduration    unknown (no event with a known time); tracing started 20"); /* the year */
        ASSERT(strstr(z, "\nprocess     vramtrace-") == NULL); /* was the file's name */
        ASSERT_CONTAINS(z, "\nnotes       the trace was not closed cleanly and holds only whose it is: the process "
                           "was killed (or is still running) before the tracer's first commit");
        ASSERT(strstr(z, "allocations live at the end include") == NULL); /* there are none */
        free(z);
        ASSERT_EQ(0, cli_run(azAnalyze, NULL, zInfo, NULL));
        z = cli_read(zInfo);
        { /* the report's wrapped lines joined: a line break and the indent after it become one space */
            char *q = z;
            for (p = z; *p; p++) {
                *q++ = *p == '\n' ? ' ' : *p;
                while (*p == '\n' && p[1] == ' ') p++;
            }
            *q = '\0';
        }
        ASSERT_CONTAINS(z, "== Process pid ");
        snprintf(zWant, sizeof zWant, "command: %s kill=9 ", fake_job());
        ASSERT_CONTAINS(z, zWant);
        ASSERT(strstr(z, "holds only whose it is") != NULL);
        ASSERT(strstr(z, "was the process's") == NULL); /* the no-allocation guesses do not apply */
        free(z);
    }
    cli_cleanup();
}

VT_TEST_LIST(T(record_sets_environment) T(record_tensors_merges_alloc_conf) T(record_history_options) T(record_tensors_replaces_backend)
             T(record_nvtx_follows_python_env) T(alloc_conf_merge) T(record_output_pattern)
             T(trace_set_matches_pattern) T(record_exit_by_signal) T(record_forwards_sigterm) T(record_terminal_interrupt_once)
             T(record_missing_command) T(record_command_not_executable) T(record_usage_errors) T(record_library_not_found)
             T(record_finds_and_summarizes_traces) T(record_reports_missing_trace)
             T(record_from_installed_tree) T(record_reads_other_processes) T(record_nvml_other_pid_namespace)
             T(record_without_nvml) T(record_full_disk) T(record_fatal_error_then_full_disk) T(record_fatal_error_while_closing)
             T(record_trace_is_one_file) T(record_lists_only_its_own_traces)
             T(record_counts_summarized_kernels) T(record_kernels_beyond_one_buffer) T(record_max_size_omits_not_loses) T(record_killed_at_once_names_the_job))
