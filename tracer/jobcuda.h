/* Internal: which CUDA runtime and CUPTI libraries the traced process has loaded, and their versions. */
#ifndef VT_TRACER_JOBCUDA_H
#define VT_TRACER_JOBCUDA_H

#include <limits.h>
#include <stddef.h>

/* What the process has loaded, found at start (InitializeInjection). */
struct vt__jobcuda {
    char zRuntime[PATH_MAX]; /* the first libcudart.so.N loaded, "" when none (static runtime, or none yet) */
    int runtimeMajor;        /* N of its soname, -1 unknown */
    int runtimeVersion;      /* cudaRuntimeGetVersion (e.g. 12060), -1 unknown */
    char zCupti[PATH_MAX];   /* the file that holds pCuptiSym (the libcupti the tracer uses), "" unknown */
    char zOtherCupti[PATH_MAX]; /* a libcupti.so.N loaded besides it (another CUPTI copy), "" none */
};

/*
 * Fill *p from the process's loaded objects (dl_iterate_phdr): the CUDA
 * runtime's file and soname major, its version from its own
 * cudaRuntimeGetVersion (which reads a constant and initializes nothing), and
 * the libcupti that holds pCuptiSym (dladdr), plus any other libcupti file.
 * Loads nothing. Safe inside cuInit.
 */
void vt__jobcuda_probe(struct vt__jobcuda *p, const void *pCuptiSym);

/* The major version in a CUDA version number (12060 -> 12), a CUPTI API version included (130401 -> 13, 24 -> 12). */
int vt__cuda_major(long v);

/* "12.6" / "13.4 Update 1" style text of a CUPTI API version (24 -> "12.6"), into z. */
void vt__cupti_version_text(unsigned v, char *z, size_t n);

#endif
