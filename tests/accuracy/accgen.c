/* accgen: writes the accuracy suite's traces (one folder per scenario and variant) with their ground truth. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "acc.h"
#include "ptrec.h"

/*
 * accgen [--kernels FILE] [--suite full|quick] [--only NAME] [--seed N] [--list] OUTDIR
 * accgen --key KEY --draws N [--only FAMILY] [--pick FAMILY/dNNN]... [--list-families] OUTDIR
 *
 * Scenarios (the recorded suite): for each scenario and each of its variants, writes
 * OUTDIR/SCENARIO/VARIANT/rankN.db (one trace per process) and truth.json (what a correct
 * analysis reports), and lists every run in OUTDIR/manifest.json. Deterministic: the same
 * build and seed write the same traces; seed 0 (the default) is the recorded suite, any other
 * draws every run's randomness anew (kernel choices, batch lengths, timings).
 *
 * Families (--key): draws 0 to N-1 of each family (fam.c), OUTDIR/FAMILY/dNNN, each run's
 * shape and randomness drawn from KEY, the family and the draw's number; --pick names single
 * draws instead. A split (score.py: dev, blind) is a key and a number of draws.
 * Exit codes: 0 done, 1 a trace could not be written, 2 bad arguments.
 */

#define MAX_EXP 16
#define MAX_FACT 8
#define MAX_RANK 64

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
    /* families */
    const struct acc_family *f;
    int draw;                 /* the draw's number */
    uint64_t rngDraw;         /* the shape's draws */
    char zShape[4096];        /* JSON members */
    struct acc_fact aFact[MAX_FACT];
    int nFact;
    char zInputs[1024];       /* '|'-separated; "" each rank's trace */
    int aProc[MAX_RANK], nProc;
    int recFlags;             /* ptrec flags for the next process */
    struct ptrec *apRec[MAX_RANK];
    struct js *apJs[MAX_RANK];
    char *azKept[MAX_EXP * 9];  /* the expectations' strings (keep_str) */
    int nKept;
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

/* A copy of z owned by the run (the caller's string may be gone when the truth is written); NULL stays NULL. */
static const char *keep_str(struct acc *a, const char *z)
{
    char *zCopy;
    if (!z || a->nKept >= (int)(sizeof a->azKept / sizeof a->azKept[0])) return z;
    zCopy = strdup(z);
    if (!zCopy) {
        a->bFailed = 1;
        return z;
    }
    a->azKept[a->nKept++] = zCopy;
    return zCopy;
}

void acc_expect(struct acc *a, const struct acc_exp *e)
{
    struct acc_exp *p;
    if (a->nExp >= MAX_EXP) {
        fprintf(stderr, "accgen: more than %d expectations\n", MAX_EXP);
        a->bFailed = 1;
        return;
    }
    p = &a->aExp[a->nExp++];
    *p = *e;
    p->zCause = keep_str(a, e->zCause);
    p->zKind = keep_str(a, e->zKind);
    p->zSite = keep_str(a, e->zSite);
    p->zSev = keep_str(a, e->zSev);
    p->zPhase = keep_str(a, e->zPhase);
    p->zTitle = keep_str(a, e->zTitle);
    p->zRanks = keep_str(a, e->zRanks);
    p->zClass = keep_str(a, e->zClass);
    p->zTitleNot = keep_str(a, e->zTitleNot);
}

/* Free a run and the strings it kept. */
static void acc_free(struct acc *a)
{
    for (int i = 0; i < a->nKept; i++) free(a->azKept[i]);
    free(a);
}

void acc_describe(struct acc *a, const char *zText)
{
    snprintf(a->zDesc, sizeof a->zDesc, "%s", zText);
}

/* splitmix64 step of *p */
static uint64_t mix(uint64_t *p)
{
    uint64_t z = (*p += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* FNV-1a of a string. */
static uint64_t hash_str(const char *z)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (; *z; z++) h = (h ^ (unsigned char)*z) * 0x100000001B3ull;
    return h;
}

uint64_t acc_draw(struct acc *a, uint64_t n)
{
    uint64_t z = mix(&a->rngDraw);
    return n ? z % n : z;
}

double acc_drawf(struct acc *a, double lo, double hi)
{
    return lo + (hi - lo) * (double)(mix(&a->rngDraw) >> 11) / 9007199254740992.0;
}

int acc_chance(struct acc *a, int pct)
{
    return (int)acc_draw(a, 100) < pct;
}

void acc_set_variant(struct acc *a, const struct acc_variant *v)
{
    a->v = *v;
    snprintf(a->zCode, sizeof a->zCode, "%c%c%d%s", v->mode == JS_TENSORS ? 'T' : v->bHistory ? 'H' : 'S',
             v->nvtx == ACC_NVTX_NAMES ? 'N' : v->nvtx == ACC_NVTX_NONE ? 'X' : 'P', v->ranks, v->bLong ? "l" : "s");
}

void acc_shape(struct acc *a, const char *zKey, const char *zFmt, ...)
{
    char z[512];
    size_t n = strlen(a->zShape);
    va_list ap;
    va_start(ap, zFmt);
    vsnprintf(z, sizeof z, zFmt, ap);
    va_end(ap);
    snprintf(a->zShape + n, sizeof a->zShape - n, "%s\"%s\": \"%s\"", n ? ", " : "", zKey, z);
}

void acc_fact(struct acc *a, const struct acc_fact *f)
{
    if (a->nFact < MAX_FACT) a->aFact[a->nFact++] = *f;
}

void acc_inputs(struct acc *a, const char *zList)
{
    snprintf(a->zInputs, sizeof a->zInputs, "%s", zList);
}

void acc_same_process(struct acc *a, const int *aProc, int n)
{
    a->nProc = n < MAX_RANK ? n : MAX_RANK;
    memcpy(a->aProc, aProc, sizeof(int) * (size_t)a->nProc);
}

const char *acc_dir(const struct acc *a)
{
    return a->zDir;
}

void acc_record(struct acc *a, int flags)
{
    a->recFlags = flags;
}

struct js *acc_process(struct acc *a, int rank, struct js_cfg *c)
{
    char zPath[1200];
    struct js *j;
    struct ptrec *r = NULL;
    int flags = a->recFlags | (a->v.bHistory ? PTREC_HISTORY : 0);
    snprintf(zPath, sizeof zPath, "%s/rank%d.db", a->zDir, rank);
    c->zPath = zPath;
    c->mode = a->v.mode;
    c->rank = rank;
    c->world = a->v.ranks > 1 ? a->v.ranks : 0;
    c->bWindows = a->v.bWindows;
    c->bExpandable = a->v.bExpandable;
    c->seed = a->seed * 1000003u + (uint64_t)rank;
    if (flags && rank >= 0 && rank < MAX_RANK) {
        struct ptrec_opt o;
        char zName[64];
        memset(&o, 0, sizeof o);
        o.flags = flags;
        o.bWithStack = !(flags & PTREC_NO_STACK);
        o.bKinetoNoAddr = (flags & PTREC_NO_ADDR) != 0;
        snprintf(zName, sizeof zName, "rank%d.pt.trace.json", rank);
        o.zKinetoName = zName;
        r = ptrec_new(a->zDir, &o);
        if (!r) {
            a->bFailed = 1;
            return NULL;
        }
        c->pObs = ptrec_obs(r);
    }
    j = js_open(c);
    if (!j) {
        a->bFailed = 1;
        ptrec_finish(r);
        return NULL;
    }
    if (r) ptrec_attach(r, j);
    if (rank >= 0 && rank < MAX_RANK) {
        a->apRec[rank] = r;
        a->apJs[rank] = j;
    }
    return j;
}

struct ptrec *acc_recorder(struct acc *a, int rank)
{
    return rank >= 0 && rank < MAX_RANK ? a->apRec[rank] : NULL;
}

void acc_end(struct acc *a, struct js *j, int bTeardown, int bClean)
{
    int rank = -1;
    for (int r = 0; r < MAX_RANK && rank < 0; r++)
        if (a->apJs[r] == j) rank = r;
    if (js_close(j, bTeardown, bClean) != 0) a->bFailed = 1;
    if (rank >= 0) { /* the process's recorder has written its files */
        if (a->apRec[rank] && ptrec_finish(a->apRec[rank]) != 0) a->bFailed = 1;
        a->apRec[rank] = NULL;
        a->apJs[rank] = NULL;
    }
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
    if (a->f) {
        fprintf(f, "{\n  \"scenario\": \"%s\", \"group\": \"%s\", \"variant\": \"d%03d\", \"code\": \"%s\",\n",
                a->f->zName, a->f->zGroup, a->draw, a->zCode);
        fputs("  \"family\": ", f);
        json_str(f, a->f->zName);
        fputs(", \"tests\": ", f);
        json_str(f, a->f->zTests);
        fprintf(f, ", \"draw\": %d, \"cause_max\": 2,\n  \"shape\": {%s},\n", a->draw, a->zShape);
    } else {
        fprintf(f, "{\n  \"scenario\": \"%s\", \"group\": \"%s\", \"variant\": \"%s\",\n", a->s->zName, a->s->zGroup,
                a->zCode);
    }
    fprintf(f, "  \"mode\": \"%s\", \"nvtx\": \"%s\", \"ranks\": %d, \"length\": \"%s\", \"paths\": \"%s\",\n",
            strstr(a->zInputs, ".json") ? "profiler-trace"
            : strstr(a->zInputs, ".pickle") && !strstr(a->zInputs, ".db") ? "snapshot"
            : a->v.mode == JS_TENSORS ? "tensors" : a->v.bHistory ? "history" : "segments",
            azNvtx[a->v.nvtx], a->v.ranks, a->v.bLong ? "long" : "short", a->v.bWindows ? "windows" : "linux");
    fputs("  \"description\": ", f);
    json_str(f, a->zDesc);
    fputs(",\n  \"traces\": ", f);
    if (a->zInputs[0]) {
        json_list(f, a->zInputs);
    } else {
        fputc('[', f);
        for (int r = 0; r < a->v.ranks; r++) fprintf(f, "%s\"rank%d.db\"", r ? ", " : "", r);
        fputc(']', f);
    }
    fputs(",\n", f);
    if (a->nProc) {
        fputs("  \"process_of\": [", f);
        for (int i = 0; i < a->nProc; i++) fprintf(f, "%s%d", i ? ", " : "", a->aProc[i]);
        fputs("],\n", f);
    }
    if (a->f) {
        fputs("  \"facts\": [", f);
        for (int i = 0; i < a->nFact; i++) {
            fprintf(f, "%s\n    {\"fact\": ", i ? "," : "");
            json_str(f, a->aFact[i].zFact);
            fprintf(f, ", \"trace\": %d, \"value\": %lld, \"tol\": %g, \"class\": ", a->aFact[i].trace,
                    (long long)a->aFact[i].value, a->aFact[i].tol);
            json_str(f, a->aFact[i].zClass);
            fputc('}', f);
        }
        fputs("],\n", f);
    }
    fputs("  \"expect\": [", f);
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
        if (a->f) {
            fprintf(f, ", \"max\": %d, \"title_not\": ", e->nMax);
            json_list(f, e->zTitleNot);
        }
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

/* A run generated: its truth written and listed in the manifest as NAME/RUN, a freed; 0 or -1. */
static int finish_run(struct acc *a, const char *zName, const char *zRun, FILE *pManifest, int *pnRun)
{
    int rc = 0;
    if (a->bFailed || write_truth(a) != 0) {
        fprintf(stderr, "accgen: %s/%s failed\n", zName, zRun);
        rc = -1;
    } else {
        fprintf(pManifest, "%s\n    \"%s/%s\"", (*pnRun)++ ? "," : "", zName, zRun);
    }
    acc_free(a);
    return rc;
}

/* Generate one run; 0 or -1. */
static int run_one(const char *zOut, const struct acc_scenario *s, const char *zCode, int idx, uint64_t salt,
                   FILE *pManifest, int *pnRun)
{
    struct acc *a = calloc(1, sizeof *a);
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
    return finish_run(a, s->zName, a->zCode, pManifest, pnRun);
}

/* Generate draw `draw` of family f with the split's key; 0 or -1. */
static int run_family(const char *zOut, const struct acc_family *f, int draw, uint64_t key, FILE *pManifest, int *pnRun)
{
    struct acc *a = calloc(1, sizeof *a);
    uint64_t h;
    if (!a) return -1;
    a->f = f;
    a->draw = draw;
    a->v.ranks = 1;
    h = key ^ hash_str(f->zName) ^ (0xD1B54A32D192ED03ull * (uint64_t)(draw + 1));
    a->seed = mix(&h);
    a->rngDraw = mix(&h);
    snprintf(a->zDir, sizeof a->zDir, "%s/%s/d%03d", zOut, f->zName, draw);
    if (mkdir_p(a->zDir) != 0) {
        fprintf(stderr, "accgen: cannot create %s: %s\n", a->zDir, strerror(errno));
        free(a);
        return -1;
    }
    f->xDraw(a);
    for (int r = 0; r < MAX_RANK; r++) /* a process the family left open: a defect of the family */
        if (a->apJs[r]) {
            fprintf(stderr, "accgen: %s/d%03d left rank %d open\n", f->zName, draw, r);
            acc_end(a, a->apJs[r], 1, 1);
            a->bFailed = 1;
        }
    {
        char zRun[16];
        snprintf(zRun, sizeof zRun, "d%03d", draw);
        return finish_run(a, f->zName, zRun, pManifest, pnRun);
    }
}

/* Whether FAMILY/dNNN is among the picks (none given: every draw). */
static int picked(char **azPick, int nPick, const char *zFamily, int draw)
{
    char z[160];
    if (nPick == 0) return 1;
    snprintf(z, sizeof z, "%s/d%03d", zFamily, draw);
    for (int i = 0; i < nPick; i++)
        if (!strcmp(azPick[i], z)) return 1;
    return 0;
}

/* Whether zName is one of the comma-separated names of zList. */
static int in_list(const char *zList, const char *zName)
{
    size_t n = strlen(zName);
    for (const char *z = zList; *z;) {
        size_t m = strcspn(z, ",");
        if (m == n && !strncmp(z, zName, n)) return 1;
        z += m;
        if (*z == ',') z++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *zKernels = NULL, *zOut = NULL, *zOnly = NULL, *zSuite = "full", *zKey = NULL;
    int bList = 0, bListFam = 0, nRun = 0, rc = 0, nDraw = 0, nPick = 0, firstDraw = 0;
    char *azPick[512];
    uint64_t salt = 0;
    char zPath[1200];
    FILE *pManifest;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kernels") && i + 1 < argc) zKernels = argv[++i];
        else if (!strcmp(argv[i], "--suite") && i + 1 < argc) zSuite = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) zOnly = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) salt = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--list")) bList = 1;
        else if (!strcmp(argv[i], "--list-families")) bListFam = 1;
        else if (!strcmp(argv[i], "--key") && i + 1 < argc) zKey = argv[++i];
        else if (!strcmp(argv[i], "--draws") && i + 1 < argc) nDraw = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--from") && i + 1 < argc) firstDraw = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pick") && i + 1 < argc && nPick < 512) azPick[nPick++] = argv[++i];
        else if (argv[i][0] != '-' && !zOut) zOut = argv[i];
        else {
            fprintf(stderr, "usage: accgen [--kernels FILE] [--suite full|quick] [--only NAME] [--seed N] [--list] OUTDIR\n"
                            "       accgen --key KEY --draws N [--from N] [--only FAMILY[,FAMILY]...] [--pick FAMILY/dNNN]... [--list-families] OUTDIR\n");
            return 2;
        }
    }
    if (strcmp(zSuite, "full") && strcmp(zSuite, "quick")) {
        fprintf(stderr, "accgen: --suite is full or quick\n");
        return 2;
    }
    if (bListFam) {
        for (int i = 0; i < acc_nFamily; i++)
            printf("%-22s %-8s %s\n", acc_aFamily[i].zName, acc_aFamily[i].zGroup, acc_aFamily[i].zTests);
        return 0;
    }
    if (zKey && (nDraw < 1 || nDraw > 1000)) {
        fprintf(stderr, "accgen: --draws is 1 to 1000\n");
        return 2;
    }
    if (firstDraw < 0 || (zKey && firstDraw >= nDraw)) {
        fprintf(stderr, "accgen: --from is 0 to the number of draws less one\n");
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
    fprintf(pManifest, "{\"suite\": \"%s\", \"runs\": [", zKey ? "families" : zSuite);
    for (int i = 0; zKey && i < acc_nFamily; i++) {
        if (zOnly && !in_list(zOnly, acc_aFamily[i].zName)) continue;
        for (int d = firstDraw; d < nDraw; d++)
            if (picked(azPick, nPick, acc_aFamily[i].zName, d) &&
                run_family(zOut, &acc_aFamily[i], d, hash_str(zKey), pManifest, &nRun) != 0)
                rc = 1;
    }
    for (int i = 0; !zKey && i < acc_nScenario; i++) {
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
