/* Internal: push/pop nesting depth of NVTX ranges per thread and domain, in a bounded map. */
#ifndef VT_TRACER_NVTXDEPTH_H
#define VT_TRACER_NVTXDEPTH_H

#include <stdint.h>

#include "boundmap.h"

/*
 * Push/pop nesting depth of one thread in one domain (as NVTX nests), kept
 * only while ranges are open there: a thread that ended its ranges (or
 * exited) takes no room, so the bounded map serves any number of threads over
 * a run (VT_DEPTH_ENTRIES at once; the oldest is forgotten past that).
 */
#define VT_DEPTH_ENTRIES 4096
struct vt__depth_val {
    int64_t thread;
    int64_t domain_id; /* -1: the default domain */
    int32_t depth;
    int32_t pad;
};

/* A push/pop range opens on thread in domain (map m of struct vt__depth_val): its depth (ranges open there before it), or -1. */
int vt__depth_push(struct vt__boundmap *m, int64_t thread, int64_t domain);

/* A push/pop range of thread in domain closed: one less open; the entry goes when none is. */
void vt__depth_pop(struct vt__boundmap *m, int64_t thread, int64_t domain);

#endif
