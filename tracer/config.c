/* Reading the tracer's configuration from VRAMTRACE_* environment variables. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vramtrace/outname.h"
#include "vramtrace/units.h"
#include "writer.h"

#define DEFAULT_BUFFER_SIZE ((size_t)4 << 20)
#define DEFAULT_MAX_MEMORY ((size_t)256 << 20)
#define DEFAULT_FLUSH_MS 500u
#define DEFAULT_BACKTRACE 16

#define MIN_BUFFER_SIZE ((size_t)64 << 10)
#define MAX_BUFFER_SIZE ((size_t)256 << 20)
#define MIN_FLUSH_MS 10u
#define MAX_FLUSH_MS 1000u

/* Append one formatted warning line to cfg->zWarn (truncated silently when full). */
static void warn(struct vt_config *cfg, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct vt_config *cfg, const char *zFmt, ...)
{
    size_t n = strlen(cfg->zWarn);
    va_list ap;
    int k;
    if (n + 2 >= sizeof cfg->zWarn) return;
    k = snprintf(cfg->zWarn + n, sizeof cfg->zWarn - n, "vramtrace: ");
    if (k < 0 || (size_t)k >= sizeof cfg->zWarn - n) goto truncated;
    n += (size_t)k;
    va_start(ap, zFmt);
    k = vsnprintf(cfg->zWarn + n, sizeof cfg->zWarn - n, zFmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof cfg->zWarn - n - 1) goto truncated;
    n += (size_t)k;
    cfg->zWarn[n] = '\n';
    cfg->zWarn[n + 1] = '\0';
    cfg->nWarn++;
    return;
truncated:
    /* keep whole lines only: end the buffer after the last complete line */
    {
        char *zNl = strrchr(cfg->zWarn, '\n');
        if (zNl) zNl[1] = '\0';
        else cfg->zWarn[0] = '\0';
    }
}

/* Parse a non-negative decimal integer no larger than iMax. Returns 0 or -1. */
static int parse_uint(const char *z, long iMax, long *pOut)
{
    char *zEnd = NULL;
    long v;
    while (isspace((unsigned char)*z)) z++;
    if (!isdigit((unsigned char)*z)) return -1;
    errno = 0;
    v = strtol(z, &zEnd, 10);
    if (errno || zEnd == z) return -1;
    while (isspace((unsigned char)*zEnd)) zEnd++;
    if (*zEnd || v < 0 || v > iMax) return -1;
    *pOut = v;
    return 0;
}

/* Check an output pattern: non-empty, fits, only %p %r %h %% escapes. Returns NULL or a reason. */
static const char *check_output(const char *z, size_t nMax)
{
    if (!*z) return "is empty";
    if (strlen(z) >= nMax) return "is too long";
    if (vt__outname_bad_escape(z)) return "has an unknown %-escape (known: %p pid, %r rank, %h host, %% percent)";
    return NULL;
}

/* Read one boolean variable into *pOut (unchanged if unset or malformed). */
static void load_bool(struct vt_config *cfg, const char *(*xGetenv)(const char *), const char *zName,
                      int *pOut)
{
    const char *z = xGetenv(zName);
    int b;
    if (!z) return;
    b = vt__parse_bool(z);
    if (b < 0) {
        warn(cfg, "%s='%.64s' is not 0 or 1; using %d", zName, z, *pOut);
        return;
    }
    *pOut = b;
}

void vt__config_load(struct vt_config *cfg, const char *(*xGetenv)(const char *zName))
{
    const char *z;
    const char *zWhy;
    struct vt_writer_config wcfg;
    size_t n, nMin;
    long v;

    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->zOutput, sizeof cfg->zOutput, "%s", VT_CONFIG_DEFAULT_OUTPUT);
    cfg->buffer_size = DEFAULT_BUFFER_SIZE;
    cfg->max_memory = DEFAULT_MAX_MEMORY;
    cfg->flush_ms = DEFAULT_FLUSH_MS;
    cfg->backtrace = DEFAULT_BACKTRACE;
    cfg->python_stacks = 1;
    cfg->kernel_args = 1;

    load_bool(cfg, xGetenv, "VRAMTRACE_DISABLE", &cfg->disabled);
    load_bool(cfg, xGetenv, "VRAMTRACE_QUIET", &cfg->quiet);
    load_bool(cfg, xGetenv, "VRAMTRACE_PYTHON_STACKS", &cfg->python_stacks);
    load_bool(cfg, xGetenv, "VRAMTRACE_KERNEL_ARGS", &cfg->kernel_args);
    load_bool(cfg, xGetenv, "VRAMTRACE_TENSORS", &cfg->tensors);

    z = xGetenv("VRAMTRACE_OUTPUT");
    if (z) {
        zWhy = check_output(z, sizeof cfg->zOutput);
        if (zWhy) warn(cfg, "VRAMTRACE_OUTPUT='%.200s' %s; using %s", z, zWhy, cfg->zOutput);
        else snprintf(cfg->zOutput, sizeof cfg->zOutput, "%s", z);
    }

    z = xGetenv("VRAMTRACE_BUFFER_SIZE");
    if (z) {
        if (vt__parse_size(z, &n) || n < MIN_BUFFER_SIZE || n > MAX_BUFFER_SIZE)
            warn(cfg, "VRAMTRACE_BUFFER_SIZE='%.64s' is not a size from 64K to 256M; using %zu", z,
                 cfg->buffer_size);
        else cfg->buffer_size = (n + 7) & ~(size_t)7;
    }

    /* the bound must hold the writer's host-record ring plus two activity buffers */
    vt__writer_config_default(&wcfg);
    nMin = wcfg.host_ring_records * sizeof(struct vt_hrec) + 2 * cfg->buffer_size;
    z = xGetenv("VRAMTRACE_MAX_MEMORY");
    if (z) {
        if (vt__parse_size(z, &n))
            warn(cfg, "VRAMTRACE_MAX_MEMORY='%.64s' is not a size; using %zu", z, cfg->max_memory);
        else cfg->max_memory = n;
    }
    if (cfg->max_memory < nMin) {
        warn(cfg, "VRAMTRACE_MAX_MEMORY=%zu is below the minimum for this buffer size; using %zu",
             cfg->max_memory, nMin);
        cfg->max_memory = nMin;
    }

    /* long jobs: a size bound (at least 1 MiB: the schema and the closing rows need room) and a window */
    z = xGetenv("VRAMTRACE_MAX_BYTES");
    if (z) {
        if (vt__parse_size(z, &n) || (n != 0 && n < ((size_t)1 << 20)))
            warn(cfg, "VRAMTRACE_MAX_BYTES='%.64s' is not a size of at least 1M (or 0 for none); the trace's size "
                      "is not bounded", z);
        else cfg->max_bytes = n;
    }
    z = xGetenv("VRAMTRACE_START_AFTER");
    if (z && vt__parse_duration(z, &cfg->start_after_ns)) {
        warn(cfg, "VRAMTRACE_START_AFTER='%.64s' is not a duration (seconds, or with s, m, h); recording from the "
                  "start", z);
        cfg->start_after_ns = 0;
    }
    z = xGetenv("VRAMTRACE_STOP_AFTER");
    if (z && vt__parse_duration(z, &cfg->stop_after_ns)) {
        warn(cfg, "VRAMTRACE_STOP_AFTER='%.64s' is not a duration (seconds, or with s, m, h); recording to the end",
             z);
        cfg->stop_after_ns = 0;
    }
    if (cfg->stop_after_ns && cfg->stop_after_ns <= cfg->start_after_ns) {
        warn(cfg, "VRAMTRACE_STOP_AFTER is not after VRAMTRACE_START_AFTER; recording to the end");
        cfg->stop_after_ns = 0;
    }

    load_bool(cfg, xGetenv, "VRAMTRACE_LEND_CUPTI", &cfg->lend_cupti);
    z = xGetenv("VRAMTRACE_SUBSCRIBERS");
    if (z && !strcmp(z, "several")) cfg->subscribers = 1;
    else if (z && !strcmp(z, "one")) cfg->subscribers = 2;
    else if (z && strcmp(z, "auto") != 0)
        warn(cfg, "VRAMTRACE_SUBSCRIBERS='%.64s' is not 'auto', 'several' or 'one'; using auto", z);

    cfg->kernel_warmup_ns = 30000000000ll;
    cfg->kernel_period_ns = 1000000000ll;
    z = xGetenv("VRAMTRACE_KERNELS");
    if (z && (!strcmp(z, "summary") || !strcmp(z, "full"))) cfg->kernels_summary = !strcmp(z, "summary");
    else if (z) warn(cfg, "VRAMTRACE_KERNELS='%.64s' is neither 'full' nor 'summary'; every kernel is written", z);
    z = xGetenv("VRAMTRACE_KERNEL_WARMUP");
    if (z && vt__parse_duration(z, &cfg->kernel_warmup_ns)) {
        warn(cfg, "VRAMTRACE_KERNEL_WARMUP='%.64s' is not a duration (seconds, or with s, m, h); using 30 s", z);
        cfg->kernel_warmup_ns = 30000000000ll;
    }
    z = xGetenv("VRAMTRACE_KERNEL_PERIOD");
    if (z && (vt__parse_duration(z, &cfg->kernel_period_ns) || cfg->kernel_period_ns < 1000000)) {
        warn(cfg, "VRAMTRACE_KERNEL_PERIOD='%.64s' is not a duration of at least 1 ms; using 1 s", z);
        cfg->kernel_period_ns = 1000000000ll;
    }

    z = xGetenv("VRAMTRACE_FLUSH_MS");
    if (z) {
        if (parse_uint(z, MAX_FLUSH_MS, &v) || v < (long)MIN_FLUSH_MS)
            warn(cfg, "VRAMTRACE_FLUSH_MS='%.64s' is not a number from %u to %u; using %u", z,
                 MIN_FLUSH_MS, MAX_FLUSH_MS, cfg->flush_ms);
        else cfg->flush_ms = (unsigned)v;
    }

    z = xGetenv("VRAMTRACE_BACKTRACE");
    if (z) {
        if (parse_uint(z, VT_CONFIG_MAX_BACKTRACE, &v))
            warn(cfg, "VRAMTRACE_BACKTRACE='%.64s' is not a depth from 0 to %d; using %d", z,
                 VT_CONFIG_MAX_BACKTRACE, cfg->backtrace);
        else cfg->backtrace = (int)v;
    }
}

int vt__config_meta(const struct vt_config *cfg, int (*xMeta)(void *pCtx, const char *zKey,
                                                             const char *zValue),
                    void *pCtx)
{
    char z[64];
    int rc = xMeta(pCtx, "config.output", cfg->zOutput);
    if (rc == 0) {
        snprintf(z, sizeof z, "%zu", cfg->buffer_size);
        rc = xMeta(pCtx, "config.buffer_size", z);
    }
    if (rc == 0) {
        snprintf(z, sizeof z, "%zu", cfg->max_memory);
        rc = xMeta(pCtx, "config.max_memory", z);
    }
    if (rc == 0) {
        snprintf(z, sizeof z, "%u", cfg->flush_ms);
        rc = xMeta(pCtx, "config.flush_ms", z);
    }
    if (rc == 0) {
        snprintf(z, sizeof z, "%d", cfg->backtrace);
        rc = xMeta(pCtx, "config.backtrace", z);
    }
    if (rc == 0) rc = xMeta(pCtx, "config.python_stacks", cfg->python_stacks ? "1" : "0");
    if (rc == 0) rc = xMeta(pCtx, "config.kernel_args", cfg->kernel_args ? "1" : "0");
    if (rc == 0) rc = xMeta(pCtx, "config.quiet", cfg->quiet ? "1" : "0");
    if (rc == 0) rc = xMeta(pCtx, "config.tensors", cfg->tensors ? "1" : "0");
    /* the long-job bounds only when set: their absence means "none" */
    if (rc == 0 && cfg->max_bytes) {
        snprintf(z, sizeof z, "%zu", cfg->max_bytes);
        rc = xMeta(pCtx, "config.max_bytes", z);
    }
    if (rc == 0 && cfg->start_after_ns) {
        snprintf(z, sizeof z, "%lld", cfg->start_after_ns);
        rc = xMeta(pCtx, "config.start_after_ns", z);
    }
    if (rc == 0) rc = xMeta(pCtx, "config.kernels", cfg->kernels_summary ? "summary" : "full");
    if (rc == 0)
        rc = xMeta(pCtx, "config.subscribers",
                   cfg->subscribers == 1 ? "several" : cfg->subscribers == 2 ? "one" : "auto");
    if (rc == 0 && cfg->kernels_summary) {
        snprintf(z, sizeof z, "%lld", cfg->kernel_warmup_ns);
        rc = xMeta(pCtx, "config.kernel_warmup_ns", z);
        if (rc == 0) {
            snprintf(z, sizeof z, "%lld", cfg->kernel_period_ns);
            rc = xMeta(pCtx, "config.kernel_period_ns", z);
        }
    }
    if (rc == 0 && cfg->stop_after_ns) {
        snprintf(z, sizeof z, "%lld", cfg->stop_after_ns);
        rc = xMeta(pCtx, "config.stop_after_ns", z);
    }
    return rc;
}

const char *vt__config_getenv(const char *zName)
{
    return getenv(zName);
}
