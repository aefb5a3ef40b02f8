/* Push/pop nesting depth of NVTX ranges per thread and domain, in a bounded map. */
#include "nvtxdepth.h"

#include <string.h>

/* The depth map's key of (thread, domain). */
static uint32_t depth_key(int64_t thread, int64_t domain)
{
    return (uint32_t)((((uint64_t)thread ^ ((uint64_t)(domain + 1) << 40)) * 0x9E3779B97F4A7C15ull) >> 32);
}

int vt__depth_push(struct vt__boundmap *m, int64_t thread, int64_t domain)
{
    uint32_t key = depth_key(thread, domain);
    struct vt__depth_val *v = vt__boundmap_get(m, key), nv;
    if (v && v->thread == thread && v->domain_id == domain) return v->depth++;
    if (v) return -1; /* another thread's entry under the same key: depth unknown */
    memset(&nv, 0, sizeof nv);
    nv.thread = thread;
    nv.domain_id = domain;
    nv.depth = 1;
    vt__boundmap_put(m, key, &nv, NULL, NULL);
    return 0;
}

void vt__depth_pop(struct vt__boundmap *m, int64_t thread, int64_t domain)
{
    uint32_t key = depth_key(thread, domain);
    struct vt__depth_val *v = vt__boundmap_get(m, key);
    if (!v || v->thread != thread || v->domain_id != domain) return;
    if (--v->depth <= 0) vt__boundmap_remove(m, key, NULL);
}
