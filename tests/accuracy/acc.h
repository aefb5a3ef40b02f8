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
    int bHistory; /* segment mode with PyTorch's allocation history: a snapshot beside each trace */
    int bExpandable; /* segment mode with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (pages, not segments) */
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
    int nMax;            /* findings that may match it in one process (0: any number); more are duplicates */
    const char *zTitleNot; /* titles containing one of these do not match ('|'-separated, NULL none) */
};

/*
 * A fact of the report, not a finding, that a correct analysis gets right (score.py reads it):
 * "iterations" (trace `trace` has `value` iterations, give or take tol), "peak_allocated" and
 * "peak_reserved" (one of the peak figures of trace `trace`'s device is `value` bytes within the
 * relative tolerance tol), "phase_peak_known" (every phase of the trace has a peak),
 * "counted_once" (the summary's sum of device peaks counts each process once).
 */
struct acc_fact {
    const char *zFact;
    int trace;
    int64_t value;
    double tol;
    const char *zClass;
};

struct acc;
struct ptrec;

/* Scenario API (accgen.c). */
const struct acc_variant *acc_variant(const struct acc *a);
/* Open rank r's process of the run with the scenario's settings (path, seed, ranks filled in). */
struct js *acc_process(struct acc *a, int rank, struct js_cfg *c);
/* End it (js_close); a failure stops the run. */
void acc_end(struct acc *a, struct js *j, int bTeardown, int bClean);
void acc_expect(struct acc *a, const struct acc_exp *e);
/* Describe what a real job of this shape looks like and the verdict expected (truth.json). */
void acc_describe(struct acc *a, const char *zText);

/*
 * Families (fam.c): jobs whose shape is drawn at random (model, batch, accumulation, phases
 * marked or inferred, tensor or segment level, allocation history, evaluation batch, OOM mode,
 * ranks, ...), each with the truth its plan implies. A run is one draw: FAMILY/dNNN.
 */
/* A number from the run's own draws: uniform in [0, n); in [lo, hi); 1 with probability pct %. */
uint64_t acc_draw(struct acc *a, uint64_t n);
double acc_drawf(struct acc *a, double lo, double hi);
int acc_chance(struct acc *a, int pct);
/* How the run records its processes (before the first acc_process). */
void acc_set_variant(struct acc *a, const struct acc_variant *v);
/* One entry of the drawn shape (truth.json "shape"), printf-style. */
void acc_shape(struct acc *a, const char *zKey, const char *zFmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void acc_fact(struct acc *a, const struct acc_fact *f);
/* The files analyzed together ('|'-separated, relative to the run's folder); default: each rank's trace. */
void acc_inputs(struct acc *a, const char *zList);
/* Which process each analyzed file is (the same process given twice: 0, 0). */
void acc_same_process(struct acc *a, const int *aProc, int n);
/* The run's folder. */
const char *acc_dir(const struct acc *a);
/* Recorders of PyTorch's own formats for rank r's next process (ptrec.h flags), or 0. */
void acc_record(struct acc *a, int flags);
struct ptrec *acc_recorder(struct acc *a, int rank);

struct acc_family {
    const char *zName;
    const char *zGroup;  /* "healthy" (a look-alike of a problem) or "planted" */
    const char *zTests;  /* what it tests: "look-alike: leak, retained" or the class of defect */
    void (*xDraw)(struct acc *a);
};
extern const struct acc_family acc_aFamily[];
extern const int acc_nFamily;

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
