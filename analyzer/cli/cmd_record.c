/* The 'record' subcommand: run a command with the tracer injected, then say where its traces are and summarize them. */
#include "cli.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "info.h"
#include "record.h"
#include "util/opts.h"
#include "vramtrace/schema.h"
#include "vramtrace/units.h"

/* Options of one record run. */
struct record_opts {
    const char *zOutput; /* -o, or NULL */
    int bTensors;
    int bNoPython;
    int bNoKernelArgs;
    int backtrace; /* -1: not given */
    const char *zMaxSize, *zStartAfter, *zStopAfter; /* long-job bounds as given, or NULL */
    int bNoHistory;         /* --no-pytorch-history */
    int bKeepCupti;         /* --keep-cupti */
    long long historyEntries; /* --history-entries, 0: the hook's default */
    const char *zStacks;    /* --history-stacks, or NULL */
    const char *zKernels, *zWarmup; /* --kernels (full, summary) and --kernel-warmup as given, or NULL */
    long long stopNs;
    char **azCmd;  /* the job's argv, NULL-terminated */
};

static const char zUsage[] =
    "usage: vramtrace record [OPTIONS] [--] COMMAND [ARG...]\n"
    "\n"
    "Run COMMAND with the vramtrace tracer attached to every CUDA process it starts\n"
    "(one SQLite trace per process), then print where the traces are and a summary.\n"
    "Needs a GPU and its NVIDIA driver where the job runs (without them no process\n"
    "uses CUDA, no trace is written, and record says so); the other commands read\n"
    "traces anywhere.\n"
    "\n"
    "options:\n"
    "  -o, --output PATH     trace file pattern, or a directory to put traces in\n"
    "                        (default vramtrace-%h-%p.db in the current directory;\n"
    "                        %p pid, %r rank, %h host name, %% a percent sign)\n"
    "      --tensors         make PyTorch allocate each tensor with its own CUDA call\n"
    "                        (backend:cudaMallocAsync in PYTORCH_ALLOC_CONF), so the\n"
    "                        trace shows tensors, not allocator segments\n"
    "      --no-python-stacks  do not record Python call stacks at allocations\n"
    "      --no-kernel-args  do not scan kernel arguments for buffer uses\n"
    "      --backtrace N     native call-stack depth at allocations (0-64, 0 = off;\n"
    "                        default 16)\n"
    "PyTorch (Python jobs; see docs/cli.md, \"PyTorch's own history\"):\n"
    "      --no-pytorch-history  do not ask PyTorch for its allocation history (by default\n"
    "                        a Python job that initializes CUDA through torch records it\n"
    "                        and dumps snapshots at OOMs and at exit beside the traces)\n"
    "      --history-entries N  allocation events PyTorch keeps (default 100000)\n"
    "      --history-stacks S   stacks PyTorch records: python (default) or all (with C++)\n"
    "      --keep-cupti      do not lend CUPTI to the job's own torch.profiler: by default\n"
    "                        the profiler gets its GPU activity and the trace has a\n"
    "                        stated gap (docs/tracer.md, \"Beside torch.profiler\");\n"
    "                        with it, a profiler that takes CUPTI over is named\n"
    "long jobs (allocations, frees, pool events and OOMs are always recorded):\n"
    "      --max-size SIZE   bound each trace's size (64M, 2G; at least 1M): at 90 %\n"
    "                        kernels, copies, sets, API calls and NVTX stop being\n"
    "                        written, at SIZE tracing stops (the trace says when);\n"
    "                        what it leaves out is counted as omitted, not lost\n"
    "      --start-after T   record kernels, copies, sets, API calls and NVTX only\n"
    "                        from T after the start (seconds, or 90s, 5m, 1h)\n"
    "      --stop-after T    ... and only until T after the start\n"
    "      --kernels MODE    full (default): every kernel; summary (always-on mode):\n"
    "                        after a warm-up, kernels as one row per second and kernel\n"
    "                        name (count, times), their launch calls counted, each\n"
    "                        allocation's first and last use kept; copies, sets, NVTX,\n"
    "                        syncs and other calls in full (docs/cli.md, \"Always on\")\n"
    "      --kernel-warmup T with --kernels summary: every kernel written for T after\n"
    "                        the start (default 30s)\n"
    "  -h, --help            show this help\n"
    "\n"
    "environment: VRAMTRACE_LIB (tracer library), VRAMTRACE_CUPTI (the libcupti the\n"
    "tracer loads, put first on LD_LIBRARY_PATH: the copy the job loads itself; found\n"
    "in the job's Python environment by default), VRAMTRACE_OUTPUT (default pattern),\n"
    "VRAMTRACE_NVML (the NVML library record reads other processes' memory with, in\n"
    "its own process; default libnvidia-ml.so.1); see docs/cli.md for the tracer's variables.\n"
    "\n"
    "exit status: the job's own (128+N if killed by signal N); 2 bad arguments,\n"
    "3 output directory missing or unwritable, 8 tracer library not found,\n"
    "126 the command was found but could not be run (permission, not an executable),\n"
    "127 the command was not found (as a shell says).\n";

/* The job's pid, for the signal forwarder (0 when no job runs). */
static volatile sig_atomic_t g_child;

/*
 * Forward a termination signal to the job. A signal the terminal sent to the
 * whole foreground process group (si_code SI_KERNEL) already reached the job
 * when the job is still in vramtrace's process group, so it is not sent twice
 * then; a job that moved to a group of its own gets it forwarded.
 */
static void forward_signal(int sig, siginfo_t *pInfo, void *pCtx)
{
    int saved = errno;
    pid_t child = (pid_t)g_child;
    (void)pCtx;
    if (child > 0 && (!pInfo || pInfo->si_code != SI_KERNEL || getpgid(child) != getpgrp()))
        kill(child, sig);
    errno = saved;
}

static const int aForward[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_FORWARD (sizeof aForward / sizeof aForward[0])

/*
 * Parse record's arguments into *pOpts. Returns VT_EXIT_OK, VT_EXIT_USAGE
 * (message printed), or -1 for --help (help printed).
 */
static int parse_args(int argc, char **argv, struct record_opts *pOpts)
{
    enum { O_TENSORS = 1, O_NOPY, O_NOARGS, O_OUT, O_BT, O_MAXSIZE, O_START, O_STOP, O_NOHIST, O_HENTRIES, O_HSTACKS,
           O_KERNELS, O_WARMUP, O_KEEP };
    static const struct vt_opt aOpt[] = {
        {"tensors", 0, 0, O_TENSORS},      {"no-python-stacks", 0, 0, O_NOPY}, {"no-kernel-args", 0, 0, O_NOARGS},
        {"output", 'o', 1, O_OUT},          {"backtrace", 0, 1, O_BT},          {"max-size", 0, 1, O_MAXSIZE},
        {"start-after", 0, 1, O_START},     {"stop-after", 0, 1, O_STOP},      {"no-pytorch-history", 0, 0, O_NOHIST},
        {"history-entries", 0, 1, O_HENTRIES}, {"history-stacks", 0, 1, O_HSTACKS}, {"kernels", 0, 1, O_KERNELS},
        {"kernel-warmup", 0, 1, O_WARMUP},  {"keep-cupti", 0, 0, O_KEEP},        {NULL, 0, 0, 0}};
    static const char *const azStacks[] = {"python", "all", NULL};
    static const char *const azKernels[] = {"full", "summary", NULL};
    int k;
    size_t nBytes;
    long long ns, startNs = 0;
    struct vt_optparse p;
    long long n;
    int c = 0, rc = VT_EXIT_OK;
    memset(pOpts, 0, sizeof *pOpts);
    pOpts->backtrace = -1;
    /* options end where the command starts: its own options are its own */
    if (vt__opt_begin(&p, "record", argc, argv, aOpt, VT_OPT_STOP) != 0) rc = VT_EXIT_INTERNAL;
    while (rc == VT_EXIT_OK && (c = vt__opt_next(&p)) > 0) {
        switch (c) {
        case O_TENSORS: pOpts->bTensors = 1; break;
        case O_NOPY: pOpts->bNoPython = 1; break;
        case O_NOARGS: pOpts->bNoKernelArgs = 1; break;
        case O_OUT:
            if (!*p.zVal) {
                vt__errorf("record: %s needs a path", p.zOpt);
                rc = VT_EXIT_USAGE;
            }
            pOpts->zOutput = p.zVal;
            break;
        case O_BT:
            if (vt__opt_int(&p, 0, VT_RECORD_MAX_BACKTRACE, &n) != 0) rc = VT_EXIT_USAGE;
            pOpts->backtrace = (int)n;
            break;
        /* the tracer reads these from its environment with the same parser (vramtrace/units.h) */
        case O_MAXSIZE:
            if (vt__parse_size(p.zVal, &nBytes) != 0 || nBytes < ((size_t)1 << 20)) {
                vt__errorf("record: %s '%s' is not a size of at least 1M (like 64M or 2G)", p.zOpt, p.zVal);
                rc = VT_EXIT_USAGE;
            }
            pOpts->zMaxSize = p.zVal;
            break;
        case O_NOHIST: pOpts->bNoHistory = 1; break;
        case O_KEEP: pOpts->bKeepCupti = 1; break;
        case O_HENTRIES:
            if (vt__opt_int(&p, 1, 100000000, &n) != 0) rc = VT_EXIT_USAGE;
            pOpts->historyEntries = n;
            break;
        case O_HSTACKS:
            if (vt__opt_choice(&p, azStacks, &k) != 0) rc = VT_EXIT_USAGE;
            else pOpts->zStacks = azStacks[k];
            break;
        case O_KERNELS:
            if (vt__opt_choice(&p, azKernels, &k) != 0) rc = VT_EXIT_USAGE;
            else pOpts->zKernels = azKernels[k];
            break;
        case O_WARMUP:
            if (vt__parse_duration(p.zVal, &ns) != 0) {
                vt__errorf("record: %s '%s' is not a duration (seconds, or like 90s, 5m, 1h)", p.zOpt, p.zVal);
                rc = VT_EXIT_USAGE;
            }
            pOpts->zWarmup = p.zVal;
            break;
        case O_START:
        case O_STOP:
            if (vt__parse_duration(p.zVal, &ns) != 0) {
                vt__errorf("record: %s '%s' is not a duration (seconds, or like 90s, 5m, 1h)", p.zOpt, p.zVal);
                rc = VT_EXIT_USAGE;
            }
            if (c == O_START) pOpts->zStartAfter = p.zVal, startNs = ns;
            else pOpts->zStopAfter = p.zVal, pOpts->stopNs = ns;
            break;
        }
    }
    if (rc == VT_EXIT_OK && pOpts->zWarmup &&
        strcmp(pOpts->zKernels ? pOpts->zKernels : getenv("VRAMTRACE_KERNELS") ? getenv("VRAMTRACE_KERNELS") : "",
               "summary") != 0) {
        /* the tracer reads the warm-up only in the always-on mode: it would be ignored in silence */
        vt__errorf("record: --kernel-warmup needs --kernels summary (in full mode every kernel is written)");
        rc = VT_EXIT_USAGE;
    }
    if (rc == VT_EXIT_OK && pOpts->zStopAfter && pOpts->stopNs <= startNs) {
        if (pOpts->zStartAfter) vt__errorf("record: --stop-after must be later than --start-after");
        else vt__errorf("record: --stop-after '%s' must be later than the start", pOpts->zStopAfter);
        rc = VT_EXIT_USAGE;
    }
    if (rc == VT_EXIT_OK && c == VT_OPT_HELP) {
        fputs(zUsage, stdout);
        rc = -1;
    } else if (rc == VT_EXIT_OK && c == VT_OPT_ERROR) {
        rc = VT_EXIT_USAGE;
    } else if (rc == VT_EXIT_OK && p.nArg == 0) {
        vt__errorf("record: no command given (usage: vramtrace record [OPTIONS] -- COMMAND [ARG...])");
        rc = VT_EXIT_USAGE;
    }
    /* the command is the tail of argv, which ends in NULL as execvp needs */
    if (rc == VT_EXIT_OK) pOpts->azCmd = argv + argc - p.nArg;
    vt__opt_end(&p);
    return rc;
}

/* setenv that reports failure (only ENOMEM is possible with valid names). */
static int set_var(const char *zName, const char *zValue)
{
    if (setenv(zName, zValue, 1) == 0) return 0;
    vt__errorf("record: cannot set %s: %s", zName, strerror(errno));
    return -1;
}

/* Set PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF for --tensors. Returns 0 or VT_EXIT_USAGE. */
static int set_tensor_mode(void)
{
    const char *zUser = getenv("PYTORCH_ALLOC_CONF");
    char zMerged[4096];
    int bDropped = 0;
    /* PyTorch reads PYTORCH_ALLOC_CONF and falls back to the older name: merge with what it would use. */
    if (!zUser || !*zUser) zUser = getenv("PYTORCH_CUDA_ALLOC_CONF");
    if (vt__alloc_conf_merge(zUser, zMerged, sizeof zMerged, &bDropped) != 0) {
        vt__errorf("record: --tensors: PYTORCH_ALLOC_CONF is too long to extend");
        return VT_EXIT_USAGE;
    }
    if (bDropped)
        vt__errorf("record: --tensors: dropped expandable_segments from the PyTorch allocator "
                   "configuration (the cudaMallocAsync backend does not support it)");
    if (set_var("PYTORCH_ALLOC_CONF", zMerged) || set_var("PYTORCH_CUDA_ALLOC_CONF", zMerged) ||
        set_var("VRAMTRACE_TENSORS", "1"))
        return VT_EXIT_INTERNAL;
    return 0;
}

/*
 * Put the directory of the file zFile first on LD_LIBRARY_PATH (unless it is already
 * first). Returns VT_EXIT_OK or VT_EXIT_INTERNAL.
 */
static int prepend_library_dir(const char *zFile)
{
    const char *zSlash = strrchr(zFile, '/'), *zOld = getenv("LD_LIBRARY_PATH");
    size_t nDir = zSlash ? (size_t)(zSlash - zFile) : 0;
    char *zNew;
    int rc;

    if (nDir == 0) return VT_EXIT_OK;
    if (zOld && !strncmp(zOld, zFile, nDir) && (zOld[nDir] == ':' || zOld[nDir] == 0)) return VT_EXIT_OK;
    zNew = malloc(nDir + 2 + (zOld ? strlen(zOld) : 0));
    if (!zNew) return VT_EXIT_INTERNAL;
    memcpy(zNew, zFile, nDir);
    zNew[nDir] = 0;
    if (zOld && *zOld) {
        zNew[nDir] = ':';
        strcpy(zNew + nDir + 1, zOld);
    }
    rc = set_var("LD_LIBRARY_PATH", zNew) ? VT_EXIT_INTERNAL : VT_EXIT_OK;
    free(zNew);
    return rc;
}

/*
 * The record hook (a sitecustomize that chains to the job's own), first on PYTHONPATH, and its
 * settings: PyTorch's own allocation history, unless --no-pytorch-history or --tensors (the
 * cudaMallocAsync backend keeps no history); CUPTI lent to the job's torch.profiler, or with
 * --keep-cupti only its start marked (the tracer then names it should it take CUPTI over).
 * A missing hook is one line, not a failure. Returns VT_EXIT_OK or VT_EXIT_INTERNAL.
 */
static int set_history(const struct record_opts *pOpts, const char *zExe, const char *zPattern)
{
    char zHook[PATH_MAX], zWhy[PATH_MAX + 256], zDir[PATH_MAX], zNum[24], *zNew;
    const char *zOld = getenv("PYTHONPATH");
    int bHistory = !pOpts->bNoHistory && !pOpts->bTensors, rc;
    unsetenv("VRAMTRACE_PYTORCH_HISTORY"); /* only record turns these on, for this run */
    unsetenv("VRAMTRACE_LEND_CUPTI");
    if (vt__record_find_pyhook(zExe[0] ? zExe : NULL, zHook, sizeof zHook, zWhy, sizeof zWhy) != 0) {
        vt__errorf("record: %s; %s", zWhy,
                   !bHistory && pOpts->bKeepCupti ? "a torch.profiler that takes CUPTI over is not named"
                   : !bHistory ? "torch.profiler is not lent CUPTI"
                   : pOpts->bKeepCupti ? "PyTorch's allocation history is not recorded"
                                        : "PyTorch's allocation history is not recorded and torch.profiler is not "
                                          "lent CUPTI");
        return VT_EXIT_OK;
    }
    zNew = malloc(strlen(zHook) + 2 + (zOld ? strlen(zOld) : 0));
    if (!zNew) return VT_EXIT_INTERNAL;
    if (zOld && *zOld) sprintf(zNew, "%s:%s", zHook, zOld);
    else strcpy(zNew, zHook);
    rc = set_var("PYTHONPATH", zNew);
    free(zNew);
    if (rc == 0) rc = set_var("VRAMTRACE_LEND_CUPTI", pOpts->bKeepCupti ? "0" : "1");
    if (rc != 0 || !bHistory) return rc == 0 ? VT_EXIT_OK : VT_EXIT_INTERNAL;
    vt__record_side_dir(zPattern, zDir, sizeof zDir);
    if (rc == 0) rc = set_var("VRAMTRACE_SNAPSHOT_DIR", zDir);
    if (rc == 0 && pOpts->historyEntries > 0) {
        snprintf(zNum, sizeof zNum, "%lld", pOpts->historyEntries);
        rc = set_var("VRAMTRACE_HISTORY_ENTRIES", zNum);
    }
    if (rc == 0 && pOpts->zStacks) rc = set_var("VRAMTRACE_HISTORY_STACKS", pOpts->zStacks);
    if (rc == 0) rc = set_var("VRAMTRACE_PYTORCH_HISTORY", "1");
    return rc == 0 ? VT_EXIT_OK : VT_EXIT_INTERNAL;
}

/*
 * Set every variable the job needs: injection paths, output pattern, tracer
 * options. Returns VT_EXIT_OK or an exit code (message printed).
 */
/* 1 if the inherited VRAMTRACE_DISABLE turns the tracer off (read as the tracer reads it). */
static int tracing_disabled(void)
{
    const char *z = getenv("VRAMTRACE_DISABLE");
    return z && vt__parse_bool(z) == 1;
}

static int set_environment(const struct record_opts *pOpts, char *zPattern, size_t nPattern, const char *zRecordId)
{
    char zExe[PATH_MAX], zLib[PATH_MAX], zCupti[PATH_MAX], zWhy[PATH_MAX + 256], zNum[16];
    const char *zOld;
    int rc;

    if (vt__record_self_exe(zExe, sizeof zExe) != 0) zExe[0] = 0;
    if (vt__record_find_lib(zExe[0] ? zExe : NULL, zLib, sizeof zLib, zWhy, sizeof zWhy) != 0) {
        vt__errorf("record: %s", zWhy);
        return VT_EXIT_NOLIB;
    }
    rc = vt__record_output(pOpts->zOutput, getenv("VRAMTRACE_OUTPUT"), zPattern, nPattern, zWhy,
                           sizeof zWhy);
    if (rc != 0) {
        vt__errorf("record: %s", zWhy);
        return rc;
    }
    if (!strstr(zPattern, "%p"))
        vt__errorf("record: the output pattern %s has no %%p: if the job starts several CUDA "
                   "processes, each replaces the previous one's trace",
                   zPattern);
    zOld = getenv("CUDA_INJECTION64_PATH");
    if (zOld && *zOld && strcmp(zOld, zLib) != 0)
        vt__errorf("record: replacing CUDA_INJECTION64_PATH=%s (only one injection library can be loaded)",
                   zOld);
    if (set_var("CUDA_INJECTION64_PATH", zLib)) return VT_EXIT_INTERNAL;
    /* NVTX loads the tracer too: its InitializeInjectionNvtx2 forwards to the libcupti
     * the tracer itself uses, so there is never a second CUPTI in the process. */
    if (set_var("NVTX_INJECTION64_PATH", zLib)) return VT_EXIT_INTERNAL;
    if (vt__record_find_cupti(pOpts->azCmd[0], zCupti, sizeof zCupti, zWhy, sizeof zWhy) == 0) {
        /* Make the tracer's libcupti dependency resolve to the copy the job's own
         * environment loads (PyTorch's wheel), not to another one. */
        rc = prepend_library_dir(zCupti);
        if (rc != VT_EXIT_OK) return rc;
    } else {
        vt__errorf("record: %s; the tracer will use the libcupti the system resolves", zWhy);
    }
    if (set_var("VRAMTRACE_OUTPUT", zPattern)) return VT_EXIT_INTERNAL;
    if (set_var("VRAMTRACE_RECORD_ID", zRecordId)) return VT_EXIT_INTERNAL; /* whose traces they are */
    if (pOpts->backtrace >= 0) {
        snprintf(zNum, sizeof zNum, "%d", pOpts->backtrace);
        if (set_var("VRAMTRACE_BACKTRACE", zNum)) return VT_EXIT_INTERNAL;
    }
    if (pOpts->bNoPython && set_var("VRAMTRACE_PYTHON_STACKS", "0")) return VT_EXIT_INTERNAL;
    if (pOpts->bNoKernelArgs && set_var("VRAMTRACE_KERNEL_ARGS", "0")) return VT_EXIT_INTERNAL;
    if (pOpts->zMaxSize && set_var("VRAMTRACE_MAX_BYTES", pOpts->zMaxSize)) return VT_EXIT_INTERNAL;
    if (pOpts->zStartAfter && set_var("VRAMTRACE_START_AFTER", pOpts->zStartAfter)) return VT_EXIT_INTERNAL;
    if (pOpts->zStopAfter && set_var("VRAMTRACE_STOP_AFTER", pOpts->zStopAfter)) return VT_EXIT_INTERNAL;
    if (pOpts->zKernels && set_var("VRAMTRACE_KERNELS", pOpts->zKernels)) return VT_EXIT_INTERNAL;
    if (pOpts->zWarmup && set_var("VRAMTRACE_KERNEL_WARMUP", pOpts->zWarmup)) return VT_EXIT_INTERNAL;
    rc = set_history(pOpts, zExe, zPattern);
    if (rc != VT_EXIT_OK) return rc;
    if (pOpts->bTensors) return set_tensor_mode();
    unsetenv("VRAMTRACE_TENSORS"); /* only record's --tensors sets up that mode */
    return VT_EXIT_OK;
}

/*
 * The status for a command that could not be started with errno err, as a shell gives it: 127 when
 * no such command exists (ENOENT, ENOTDIR: a path part is not a directory), 126 when it was found
 * but could not be run (permission, not an executable, a directory, too long arguments) or no
 * process could be made for it.
 */
static int exec_status(int err)
{
    return err == ENOENT || err == ENOTDIR ? VT_EXIT_EXEC : VT_EXIT_NOEXEC;
}

/*
 * Start azCmd with inherited stdio and environment, forward termination
 * signals to it, and wait, NVML's readings (pNvml, may be NULL) running while
 * it runs. Returns the job's exit status (128+N when killed by signal N), or
 * exec_status's 126 or 127 if it could not be started (message printed);
 * *pbStarted tells which.
 */
static int run_job(char **azCmd, struct vt_nvml *pNvml, int *pbStarted)
{
    struct sigaction sa, aOld[N_FORWARD];
    sigset_t block, saved;
    int aPipe[2], err = 0, status = 0, rc;
    ssize_t n;
    pid_t pid;
    size_t i;

    *pbStarted = 0;
    if (pipe2(aPipe, O_CLOEXEC) != 0) {
        err = errno;
        vt__errorf("record: cannot start '%s': %s", azCmd[0], strerror(err));
        return exec_status(err);
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigemptyset(&block);
    for (i = 0; i < N_FORWARD; i++) sigaddset(&block, aForward[i]);
    sigprocmask(SIG_BLOCK, &block, &saved);
    for (i = 0; i < N_FORWARD; i++) {
        sigaction(aForward[i], &sa, &aOld[i]);
        /* A signal ignored from the start (nohup, a background job) stays ignored. */
        if (!(aOld[i].sa_flags & SA_SIGINFO) && aOld[i].sa_handler == SIG_IGN) sigaction(aForward[i], &aOld[i], NULL);
    }

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        /* The job gets the dispositions and mask vramtrace itself started with. */
        for (i = 0; i < N_FORWARD; i++) sigaction(aForward[i], &aOld[i], NULL);
        sigprocmask(SIG_SETMASK, &saved, NULL);
        execvp(azCmd[0], azCmd);
        err = errno;
        n = write(aPipe[1], &err, sizeof err);
        (void)n;
        _exit(VT_EXIT_EXEC);
    }
    if (pid > 0) g_child = pid;
    else err = errno;
    sigprocmask(SIG_SETMASK, &saved, NULL);
    close(aPipe[1]);

    if (pid > 0) {
        do n = read(aPipe[0], &err, sizeof err);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof err) err = 0; /* EOF: exec succeeded */
        if (!err) vt__nvml_watch(pNvml);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        vt__nvml_stop(pNvml);
    }
    close(aPipe[0]);
    g_child = 0;
    for (i = 0; i < N_FORWARD; i++) sigaction(aForward[i], &aOld[i], NULL);

    if (pid < 0 || err) {
        vt__errorf("record: cannot run '%s': %s", azCmd[0], strerror(err));
        return exec_status(err);
    }
    *pbStarted = 1;
    if (WIFEXITED(status)) {
        if (WEXITSTATUS(status) != 0) vt__errorf("record: the job exited with status %d", WEXITSTATUS(status));
        return WEXITSTATUS(status);
    }
    if (WIFSIGNALED(status)) {
        rc = 128 + WTERMSIG(status);
        vt__errorf("record: the job was killed by signal %d (%s)", WTERMSIG(status),
                   strsignal(WTERMSIG(status)));
        return rc;
    }
    return VT_EXIT_INTERNAL;
}

/*
 * Write what record knows beside the tracer into a trace the job wrote: config.tensors=1 under
 * --tensors (unless the tracer already stored the key), and NVML's readings (pNvml, may be NULL).
 * Returns 0, or -1 (message printed).
 */
static int stamp_trace(const char *zPath, int bTensors, const struct vt_nvml *pNvml)
{
    sqlite3 *db = NULL;
    char zMsg[256];
    int rc = sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(db, 2000);
        if (vt__schema_check(db, NULL, zMsg, sizeof zMsg) != VT_SCHEMA_OK) rc = SQLITE_NOTADB;
    }
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK && bTensors)
        rc = sqlite3_exec(db, "INSERT OR IGNORE INTO meta(key, value) VALUES('config.tensors', '1')",
                          NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = vt__nvml_stamp(pNvml, db);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK && rc != SQLITE_NOTADB)
        vt__errorf("%s: cannot record %s: %s", zPath, bTensors ? "config.tensors" : "the device readings",
                   sqlite3_errstr(rc));
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/*
 * Whether this process loads the CUDA driver's library, as a job in the same environment would: 1, or 0 with
 * the loader's reason in zWhy (a machine without an NVIDIA driver: no process of the job could use CUDA).
 */
static int driver_loads(char *zWhy, size_t nWhy)
{
    void *pLib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    const char *zErr;
    if (pLib) {
        dlclose(pLib);
        return 1;
    }
    zErr = dlerror();
    snprintf(zWhy, nWhy, "%s", zErr ? zErr : "not found");
    return 0;
}

/*
 * The pattern of the snapshots the PyTorch hook writes at exit and at OOMs (vramtrace-HOST-PID*.snapshot.pickle
 * in VRAMTRACE_SNAPSHOT_DIR) into zOut, or "" when record did not turn the history on.
 */
static void snapshot_pattern(char *zOut, size_t nOut)
{
    const char *zOn = getenv("VRAMTRACE_PYTORCH_HISTORY"), *zDir = getenv("VRAMTRACE_SNAPSHOT_DIR");
    size_t n = 0;
    zOut[0] = 0;
    if (!zOn || strcmp(zOn, "1") != 0 || !zDir) return;
    for (; *zDir && n + 3 < nOut; zDir++) { /* the directory's own '%' signs are literal */
        if (*zDir == '%') zOut[n++] = '%';
        zOut[n++] = *zDir;
    }
    if ((size_t)snprintf(zOut + n, nOut - n, "/vramtrace-%%h-%%p.snapshot.pickle") >= nOut - n) zOut[0] = 0;
}

/*
 * With no trace written: the snapshots of PyTorch's own history the job wrote (matching zSnapPattern,
 * not in pSnapBefore), which analyze reads on their own. Prints to stderr.
 */
static void report_snapshots(const char *zSnapPattern, const struct vt_trace_set *pSnapBefore)
{
    struct vt_trace_set after = {NULL, 0};
    size_t i, nNew = 0;
    if (!zSnapPattern[0] || vt__trace_set_list(zSnapPattern, &after) != 0) return;
    for (i = 0; i < after.nFile; i++) nNew += vt__trace_set_is_new(pSnapBefore, &after.aFile[i]);
    if (nNew) {
        fprintf(stderr, "  PyTorch's own allocation history was written (%zu snapshot%s), which analyze reads:\n", nNew,
                nNew == 1 ? "" : "s");
        for (i = 0; i < after.nFile; i++)
            if (vt__trace_set_is_new(pSnapBefore, &after.aFile[i])) fprintf(stderr, "    %s\n", after.aFile[i].zPath);
    }
    vt__trace_set_free(&after);
}

/* Print " z" as a shell reads it back: as it is when every byte is plain, else in single quotes. */
static void put_shell_word(FILE *f, const char *z)
{
    static const char zPlain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+-,:=@%";
    if (z[0] && strspn(z, zPlain) == strlen(z)) {
        fprintf(f, " %s", z);
    } else {
        fputs(" '", f);
        for (; *z; z++) {
            if (*z == '\'') fputs("'\\''", f);
            else fputc(*z, f);
        }
        fputc('\'', f);
    }
}

/*
 * Report the traces matching zPattern that the job produced (not in pBefore, and not another record
 * run's: a run writing into the same place at the same time, told by the trace's record_id),
 * stamping them (stamp_trace) first; with none, the snapshots of PyTorch's history it wrote
 * (report_snapshots). Prints to stderr; never changes the exit status.
 */
static void report_traces(const char *zPattern, const struct vt_trace_set *pBefore, const char *zRecordId,
                          const char *zSnapPattern, const struct vt_trace_set *pSnapBefore, int bTensors,
                          const struct vt_nvml *pNvml)
{
    struct vt_trace_set after;
    size_t i, j, nNew = 0;

    if (vt__trace_set_list(zPattern, &after) != 0) {
        vt__errorf("record: out of memory while listing traces matching %s", zPattern);
        return;
    }
    /* this run's traces: new ones that are not another run's, kept in place (free the rest) */
    for (i = j = 0; i < after.nFile; i++) {
        if (vt__trace_set_is_new(pBefore, &after.aFile[i]) && !vt__trace_is_others(after.aFile[i].zPath, zRecordId))
            after.aFile[j++] = after.aFile[i];
        else
            free(after.aFile[i].zPath);
    }
    after.nFile = nNew = j;
    if (nNew == 0) {
        char zWhy[512];
        vt__errorf("no trace was written (pattern %s).", zPattern);
        if (tracing_disabled()) {
            fprintf(stderr, "  VRAMTRACE_DISABLE=%s is set in the environment: the tracer records nothing; unset it.\n",
                    getenv("VRAMTRACE_DISABLE"));
        } else {
            if (!driver_loads(zWhy, sizeof zWhy))
                fprintf(stderr, "  This machine has no CUDA driver that loads: no process can use a GPU here\n  (%s).\n",
                        zWhy);
            fprintf(stderr, "  Either the job never used CUDA (the tracer is loaded by the CUDA driver when a\n"
                            "  process initializes CUDA), or the tracer could not attach: look for a\n"
                            "  'vramtrace:' line in the job's output above.\n");
        }
        report_snapshots(zSnapPattern, pSnapBefore);
    } else {
        size_t nLen = 0;
        vt__errorf("%zu trace%s written:", nNew, nNew == 1 ? "" : "s");
        for (i = 0; i < after.nFile; i++) {
            stamp_trace(after.aFile[i].zPath, bTensors, pNvml);
            vt__info_summary(stderr, after.aFile[i].zPath);
            nLen += strlen(after.aFile[i].zPath) + 1;
        }
        /* The next step, spelled out when it fits on a line. */
        fprintf(stderr, "  next: vramtrace analyze");
        for (i = 0; i < after.nFile && nLen <= 160; i++) put_shell_word(stderr, after.aFile[i].zPath);
        fprintf(stderr, "%s\n", nLen <= 160 ? "" : " TRACE... (the paths above)");
    }
    vt__trace_set_free(&after);
}

int vt__cmd_record(int argc, char **argv)
{
    struct record_opts opts;
    struct vt_trace_set before = {NULL, 0}, snapBefore = {NULL, 0};
    struct vt_nvml *pNvml;
    char zPattern[PATH_MAX], zSnapPattern[2 * PATH_MAX], zRecordId[48];
    int rc, bStarted = 0;

    rc = parse_args(argc, argv, &opts);
    if (rc == -1) return VT_EXIT_OK;
    if (rc != VT_EXIT_OK) return rc;
    vt__record_make_id(zRecordId, sizeof zRecordId);
    rc = set_environment(&opts, zPattern, sizeof zPattern, zRecordId);
    if (rc != VT_EXIT_OK) return rc;
    snapshot_pattern(zSnapPattern, sizeof zSnapPattern);
    if (vt__trace_set_list(zPattern, &before) != 0 ||
        (zSnapPattern[0] && vt__trace_set_list(zSnapPattern, &snapBefore) != 0)) {
        vt__errorf("record: out of memory");
        vt__trace_set_free(&before);
        return VT_EXIT_INTERNAL;
    }
    /* before the job starts: every process NVML lists then is another's */
    pNvml = vt__nvml_open();
    if (tracing_disabled())
        vt__errorf("record: VRAMTRACE_DISABLE=%s is set: the tracer will record nothing (unset it to trace)",
                   getenv("VRAMTRACE_DISABLE"));
    rc = run_job(opts.azCmd, pNvml, &bStarted);
    if (bStarted) report_traces(zPattern, &before, zRecordId, zSnapPattern, &snapBefore, opts.bTensors, pNvml);
    vt__nvml_close(pNvml);
    vt__trace_set_free(&before);
    vt__trace_set_free(&snapBefore);
    return rc;
}
