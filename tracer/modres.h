/* Internal: return addresses -> module, module-relative address and exported name, outside any CUPTI callback. */
#ifndef VT_TRACER_MODRES_H
#define VT_TRACER_MODRES_H

/*
 * Call sites are captured inside CUPTI callbacks as raw return addresses
 * only (stack.h): resolving an address to its shared object takes the dynamic
 * loader's lock (dladdr, dl_iterate_phdr), which a callback must not wait
 * for (another thread may hold it inside dlopen while it waits for CUPTI).
 * The writer thread, which holds no CUPTI lock, resolves them here:
 *
 *   address -> the module containing it (path; the main program as
 *              /proc/self/exe names it), the address minus the module's load
 *              bias (the ELF virtual address `addr2line -e MODULE` takes), and
 *              the nearest exported symbol when dladdr names one (static
 *              functions have none: symbolize offline);
 *   module  -> its GNU build id (read from the loaded image's PT_NOTE
 *              segments), the file's size and modification time (stat), so
 *              frames can be symbolized offline against the same file.
 *
 * An address that was unloaded since it was captured (dlclose) resolves to
 * nothing, or to what is mapped there now: captures and resolutions are at
 * most a writer cycle apart.
 *
 * Bounded: at most max_pcs addresses and VT_MODRES_MAX_MODULES modules are
 * cached; past that, addresses are resolved anew each time (modules past the
 * bound are not described). Single-threaded: the writer thread only.
 */
#include <stdint.h>

#define VT_MODRES_MAX_MODULES 4096

/* One module, as the trace's `module` table describes it. */
struct vt__modinfo {
    char *zPath;          /* heap, owned by the resolver */
    char zBuildId[129];   /* GNU build id, hex; "" when the image has none */
    int64_t fileBytes;    /* -1: unknown (stat failed) */
    int64_t mtimeNs;      /* -1: unknown */
    uintptr_t base;       /* load bias */
    int bRowWritten;      /* for the caller: its `module` row was written */
};

struct vt__modres;

/* A resolver caching up to max_pcs addresses (0: the default, 65536). NULL when out of memory. */
struct vt__modres *vt__modres_open(int max_pcs);

/* Free the resolver and every string it handed out. NULL is a no-op. */
void vt__modres_close(struct vt__modres *m);

/*
 * Resolve return address pc (pc - 1 is looked up: a call that never returns
 * may end its function). Returns 1 with *pRel (pc minus the load bias),
 * *pzFunction (exported name or NULL) and *ppModule filled (pointers owned
 * by the resolver, valid until close); 0 when no loaded module contains it
 * (JIT code, an unloaded library) or on out of memory.
 */
int vt__modres_resolve(struct vt__modres *m, uint64_t pc, uint64_t *pRel, const char **pzFunction,
                       struct vt__modinfo **ppModule);

#endif
