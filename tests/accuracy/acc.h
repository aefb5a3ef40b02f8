/* The accuracy suite: scenarios, their variants and their ground truth. */
#ifndef VT_ACC_ACC_H
#define VT_ACC_ACC_H

#include "jobsim.h"

enum acc_nvtx { ACC_NVTX_NAMES = 0, ACC_NVTX_NONE, ACC_NVTX_PROFILER };

/* One way of recording a scenario. */
struct acc_variant {
    int mode;     /* JS_SEGMENTS or JS_TENSORS */
    int nvtx;     /* enum acc_nvtx */
    int ranks;    /* processes (trace files) */
    int bLong;    /* thousands of iterations */
    int bWindows; /* frames of a Windows build */
};

/*
 * One expected finding. Strings with alternatives separate them with '|'; NULL means
 * "anything". A finding matches when its kind is zKind, its site contains one of zSite,
 * its phase one of zPhase, its title one of zTitle and its rank is one of zRanks; it is
 * found (recall) when its severity is also one of zSev. Optional expectations (bRequired
 * 0) count as true findings when reported but are not required.
 */
struct acc_exp {
    const char *zCause;  /* root cause (findings of one cause are one list) */
    const char *zKind;
    const char *zSite;
    const char *zSev;
    const char *zPhase;
    const char *zTitle;
    const char *zRanks;
    int bRequired;
    const char *zClass;  /* the defect class this expectation exercises */
};

struct acc;

/* Scenario API (accgen.c). */
const struct acc_variant *acc_variant(const struct acc *a);
/* Open rank r's process of the run with the scenario's settings (path, seed, ranks filled in). */
struct js *acc_process(struct acc *a, int rank, struct js_cfg *c);
/* End it (js_close); a failure stops the run. */
void acc_end(struct acc *a, struct js *j, int bTeardown, int bClean);
void acc_expect(struct acc *a, const struct acc_exp *e);
/* Describe what a real job of this shape looks like and the verdict expected (truth.json). */
void acc_describe(struct acc *a, const char *zText);

/* A scenario: generates every process of one run and declares its truth. */
struct acc_scenario {
    const char *zName;
    const char *zGroup;   /* "healthy" or "planted" */
    void (*xRun)(struct acc *a);
    const char *zVariants; /* which variants: see accgen.c */
};
extern const struct acc_scenario acc_aScenario[];
extern const int acc_nScenario;

#endif
