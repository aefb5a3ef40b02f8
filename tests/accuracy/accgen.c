/* accgen: writes the accuracy suite's traces (one folder per scenario and variant) with their ground truth. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "acc.h"

/*
 * accgen [--kernels FILE] [--suite full|quick] [--only NAME] [--seed N] [--list] OUTDIR
 *
 * For each scenario and each of its variants, writes OUTDIR/SCENARIO/VARIANT/rankN.db (one
 * trace per process) and truth.json (what a correct analysis reports), and lists every run
 * in OUTDIR/manifest.json. Deterministic: the same build and seed write the same traces; seed
 * 0 (the default) is the recorded suite, any other draws every run's randomness anew (kernel
 * choices, batch lengths, timings) for a held-out check.
 * Exit codes: 0 done, 1 a trace could not be written, 2 bad arguments.
 */

#define MAX_EXP 16

struct acc {
    const struct acc_scenario *s;
    struct acc_variant v;
    char zCode[16];
    char zDir[1024];
    uint64_t seed;
    struct acc_exp aExp[MAX_EXP];
    int nExp;
    char zDesc[2048];
    int bFailed;
};

/* Quick suite (ctest): these scenario/variant pairs only. */
static const char *const azQuick[] = {
    "cnn_train_val/SN1s", "cnn_train_val/TN1s", "cnn_train_val/SX1s", "leak_outputs/SN1s", "leak_outputs/TN1s",
    "val_no_grad/SN1s", "val_outputs_list/SN1s", "transfer_pageable/SN1s", "pinned_growth/SN1s",
    "oom_real_demand/SN1s", "oom_other_process/TN1s", "oom_fragmentation/SN1s", "retained_val/TN1s", NULL,
};

const struct acc_variant *acc_variant(const struct acc *a)
{
    return &a->v;
}

void acc_expect(struct acc *a, const struct acc_exp *e)
{
    if (a->nExp < MAX_EXP) a->aExp[a->nExp++] = *e;
}

void acc_describe(struct acc *a, const char *zText)
{
    snprintf(a->zDesc, sizeof a->zDesc, "%s", zText);
}

struct js *acc_process(struct acc *a, int rank, struct js_cfg *c)
{
    char zPath[1200];
    struct js *j;
    snprintf(zPath, sizeof zPath, "%s/rank%d.db", a->zDir, rank);
    c->zPath = zPath;
    c->mode = a->v.mode;
    c->rank = rank;
    c->world = a->v.ranks > 1 ? a->v.ranks : 0;
    c->bWindows = a->v.bWindows;
    c->seed = a->seed * 1000003u + (uint64_t)rank;
    j = js_open(c);
    if (!j) a->bFailed = 1;
    return j;
}

void acc_end(struct acc *a, struct js *j, int bTeardown, int bClean)
{
    if (js_close(j, bTeardown, bClean) != 0) a->bFailed = 1;
}

/* Parse a variant code (see scen.c); 0 or -1. */
static int parse_variant(const char *z, struct acc_variant *v)
{
    char *zEnd;
    memset(v, 0, sizeof *v);
    if (z[0] != 'S' && z[0] != 'T') return -1;
    v->mode = z[0] == 'T' ? JS_TENSORS : JS_SEGMENTS;
    if (z[1] == 'N') v->nvtx = ACC_NVTX_NAMES;
    else if (z[1] == 'X') v->nvtx = ACC_NVTX_NONE;
    else if (z[1] == 'P') v->nvtx = ACC_NVTX_PROFILER;
    else return -1;
    v->ranks = (int)strtol(z + 2, &zEnd, 10);
    if (zEnd == z + 2 || v->ranks < 1 || v->ranks > 256) return -1;
    if (*zEnd != 's' && *zEnd != 'l') return -1;
    v->bLong = *zEnd == 'l';
    zEnd++;
    if (*zEnd == 'w') v->bWindows = 1, zEnd++;
    return *zEnd ? -1 : 0;
}

static void json_str(FILE *f, const char *z)
{
    if (!z) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *z; z++) {
        if (*z == '"' || *z == '\\') fprintf(f, "\\%c", *z);
        else if ((unsigned char)*z < 0x20) fprintf(f, "\\u%04x", *z);
        else fputc(*z, f);
    }
    fputc('"', f);
}

/* A '|'-separated list as a JSON array (null for NULL). */
static void json_list(FILE *f, const char *z)
{
    if (!z) {
        fputs("null", f);
        return;
    }
    fputc('[', f);
    for (int first = 1; *z; first = 0) {
        const char *zBar = strchr(z, '|');
        size_t n = zBar ? (size_t)(zBar - z) : strlen(z);
        char zPart[512];
        snprintf(zPart, sizeof zPart, "%.*s", (int)n, z);
        if (!first) fputs(", ", f);
        json_str(f, zPart);
        z += n;
        if (*z == '|') z++;
    }
    fputc(']', f);
}

/* truth.json of the run in a->zDir; 0 or -1. */
static int write_truth(const struct acc *a)
{
    char zPath[1200];
    FILE *f;
    static const char *azNvtx[] = {"names", "none", "profiler"};
    snprintf(zPath, sizeof zPath, "%s/truth.json", a->zDir);
    f = fopen(zPath, "w");
    if (!f) return -1;
    fprintf(f, "{\n  \"scenario\": \"%s\", \"group\": \"%s\", \"variant\": \"%s\",\n", a->s->zName, a->s->zGroup, a->zCode);
    fprintf(f, "  \"mode\": \"%s\", \"nvtx\": \"%s\", \"ranks\": %d, \"length\": \"%s\", \"paths\": \"%s\",\n",
            a->v.mode == JS_TENSORS ? "tensors" : "segments", azNvtx[a->v.nvtx], a->v.ranks, a->v.bLong ? "long" : "short",
            a->v.bWindows ? "windows" : "linux");
    fputs("  \"description\": ", f);
    json_str(f, a->zDesc);
    fputs(",\n  \"traces\": [", f);
    for (int r = 0; r < a->v.ranks; r++) fprintf(f, "%s\"rank%d.db\"", r ? ", " : "", r);
    fputs("],\n  \"expect\": [", f);
    for (int i = 0; i < a->nExp; i++) {
        const struct acc_exp *e = &a->aExp[i];
        fprintf(f, "%s\n    {\"cause\": ", i ? "," : "");
        json_str(f, e->zCause);
        fputs(", \"kind\": ", f);
        json_str(f, e->zKind);
        fputs(", \"site\": ", f);
        json_list(f, e->zSite);
        fputs(", \"severity\": ", f);
        json_list(f, e->zSev);
        fputs(", \"phase\": ", f);
        json_list(f, e->zPhase);
        fputs(", \"title\": ", f);
        json_list(f, e->zTitle);
        fputs(", \"ranks\": ", f);
        json_list(f, e->zRanks);
        fprintf(f, ", \"required\": %s, \"class\": ", e->bRequired ? "true" : "false");
        json_str(f, e->zClass);
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

static int mkdir_p(const char *z)
{
    char zBuf[1200];
    snprintf(zBuf, sizeof zBuf, "%s", z);
    for (char *p = zBuf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(zBuf, 0755) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(zBuf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int is_quick(const char *zScen, const char *zCode)
{
    char z[160];
    snprintf(z, sizeof z, "%s/%s", zScen, zCode);
    for (int i = 0; azQuick[i]; i++)
        if (!strcmp(azQuick[i], z)) return 1;
    return 0;
}

/* Generate one run; 0 or -1. */
static int run_one(const char *zOut, const struct acc_scenario *s, const char *zCode, int idx, uint64_t salt,
                   FILE *pManifest, int *pnRun)
{
    struct acc *a = calloc(1, sizeof *a);
    int rc = 0;
    if (!a) return -1;
    a->s = s;
    snprintf(a->zCode, sizeof a->zCode, "%s", zCode);
    if (parse_variant(zCode, &a->v) != 0) {
        fprintf(stderr, "accgen: %s: bad variant '%s'\n", s->zName, zCode);
        free(a);
        return -1;
    }
    snprintf(a->zDir, sizeof a->zDir, "%s/%s/%s", zOut, s->zName, zCode);
    a->seed = 7919u * (uint64_t)(idx + 1) + (uint64_t)(a->v.mode * 31 + a->v.nvtx * 7 + a->v.bLong * 3) +
              salt * 0x9E3779B97F4A7C15ull;
    if (mkdir_p(a->zDir) != 0) {
        fprintf(stderr, "accgen: cannot create %s: %s\n", a->zDir, strerror(errno));
        free(a);
        return -1;
    }
    s->xRun(a);
    if (a->bFailed || write_truth(a) != 0) {
        fprintf(stderr, "accgen: %s/%s failed\n", s->zName, zCode);
        rc = -1;
    } else {
        fprintf(pManifest, "%s\n    \"%s/%s\"", (*pnRun)++ ? "," : "", s->zName, zCode);
    }
    free(a);
    return rc;
}

int main(int argc, char **argv)
{
    const char *zKernels = NULL, *zOut = NULL, *zOnly = NULL, *zSuite = "full";
    int bList = 0, nRun = 0, rc = 0;
    uint64_t salt = 0;
    char zPath[1200];
    FILE *pManifest;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kernels") && i + 1 < argc) zKernels = argv[++i];
        else if (!strcmp(argv[i], "--suite") && i + 1 < argc) zSuite = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) zOnly = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) salt = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--list")) bList = 1;
        else if (argv[i][0] != '-' && !zOut) zOut = argv[i];
        else {
            fprintf(stderr, "usage: accgen [--kernels FILE] [--suite full|quick] [--only NAME] [--seed N] [--list] OUTDIR\n");
            return 2;
        }
    }
    if (strcmp(zSuite, "full") && strcmp(zSuite, "quick")) {
        fprintf(stderr, "accgen: --suite is full or quick\n");
        return 2;
    }
    if (bList) {
        for (int i = 0; i < acc_nScenario; i++)
            printf("%-20s %-8s %s\n", acc_aScenario[i].zName, acc_aScenario[i].zGroup, acc_aScenario[i].zVariants);
        return 0;
    }
    if (!zOut) {
        fprintf(stderr, "accgen: no output folder\n");
        return 2;
    }
    if (!zKernels) zKernels = VT_ACC_KERNELS;
    if (js_load_kernels(zKernels) != 0) return 1;
    if (mkdir_p(zOut) != 0) {
        fprintf(stderr, "accgen: cannot create %s: %s\n", zOut, strerror(errno));
        return 1;
    }
    snprintf(zPath, sizeof zPath, "%s/manifest.json", zOut);
    pManifest = fopen(zPath, "w");
    if (!pManifest) {
        fprintf(stderr, "accgen: cannot write %s\n", zPath);
        return 1;
    }
    fprintf(pManifest, "{\"suite\": \"%s\", \"runs\": [", zSuite);
    for (int i = 0; i < acc_nScenario; i++) {
        const struct acc_scenario *s = &acc_aScenario[i];
        char zList[512], *zSave = NULL;
        if (zOnly && strcmp(zOnly, s->zName)) continue;
        snprintf(zList, sizeof zList, "%s", s->zVariants);
        for (char *z = strtok_r(zList, " ", &zSave); z; z = strtok_r(NULL, " ", &zSave)) {
            static const char *azBase[] = {"SN1s", "TN1s", "SX1s", "TX1s"};
            int bBase = !strcmp(z, "base");
            for (int k = 0; k < (bBase ? 4 : 1); k++) {
                const char *zCode = bBase ? azBase[k] : z;
                if (!strcmp(zSuite, "quick") && !is_quick(s->zName, zCode)) continue;
                if (run_one(zOut, s, zCode, i, salt, pManifest, &nRun) != 0) rc = 1;
            }
        }
    }
    fputs("\n]}\n", pManifest);
    if (fclose(pManifest) != 0) rc = 1;
    return rc;
}
