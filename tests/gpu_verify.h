/* Internal: the known answer of each CUDA sample, checked with SQL against its trace. */
#ifndef VT_TESTS_GPU_VERIFY_H
#define VT_TESTS_GPU_VERIFY_H

#include <sqlite3.h>
#include <stdio.h>

/*
 * Facts a sample learns only at run time (addresses, device memory size,
 * allocation granularity). A sample prints each as one stdout line
 * "vt-fact: KEY=VALUE" (VALUE decimal or 0x-hex); the checker parses them.
 */
#define VT_GPU_MAX_FACTS 16
struct vt_gpu_facts {
    int nFact;
    struct {
        char zKey[32];
        unsigned long long value;
    } aFact[VT_GPU_MAX_FACTS];
};

/*
 * Parse every "vt-fact: KEY=VALUE" line of zText into *pFacts (previous
 * content replaced). Returns the number of facts read, or -1 if a fact line is
 * malformed or there are more than VT_GPU_MAX_FACTS.
 */
int vt__gpu_facts_parse(const char *zText, struct vt_gpu_facts *pFacts);

/* Look up fact zKey: returns 0 and sets *pValue, or -1 if absent. */
int vt__gpu_fact(const struct vt_gpu_facts *pFacts, const char *zKey, unsigned long long *pValue);

/* 1 if zSample names a sample this module knows the answer of, else 0. */
int vt__gpu_sample_known(const char *zSample);

/* The signal a run of zSample ends with (the sample kills itself), or 0: it exits with status 0. */
int vt__gpu_sample_signal(const char *zSample);

/* A setting ("NAME=VALUE") zSample must run with, or NULL. */
const char *vt__gpu_sample_env(const char *zSample);

/*
 * Print what a launcher of zSample must know, one "KEY VALUE" line each:
 * "signal N" (the signal the run ends with, 0: exit status 0), "env NAME=VALUE"
 * when it needs a setting, "leaked BYTES ALLOCATIONS" when it leaks on purpose
 * (the ground truth of a leak checker such as compute-sanitizer's).
 */
void vt__gpu_sample_info(const char *zSample, FILE *pOut);

/*
 * Check the trace db of one run of sample zSample: the meta, device and
 * dropped rows every trace must hold (meta.pid must equal pid), then the
 * sample's known answer (exact counts, bytes, kinds, addresses). One line per
 * check goes to pOut ("ok" or "FAIL" with what was expected and found); on a
 * failure, an overview of what the trace does hold follows.
 * Returns the number of failed checks (0: the known answer holds), or -1 for
 * an unknown sample.
 */
int vt__gpu_verify(sqlite3 *db, const char *zSample, long long pid,
                   const struct vt_gpu_facts *pFacts, FILE *pOut);

#endif
