/* The takeover watch: expected activity with no buffer event for a while, a probe, then a verdict. */
#include "watch.h"

#include <string.h>

enum { S_WATCH = 0, S_PROBED = 1, S_TAKEN = 2 };

void vt__watch_init(struct vt__watch *w, unsigned quiet_ms)
{
    memset(w, 0, sizeof *w);
    w->quiet_ms = w->quiet0_ms = quiet_ms ? quiet_ms : 1;
}

int vt__watch_tick(struct vt__watch *w, uint64_t nowMs, uint64_t nBuf, uint64_t nExpect)
{
    if (w->state == S_TAKEN) return VT_WATCH_NONE;
    if (nBuf != w->nBuf) { /* CUPTI hands us buffers: all is well */
        if (w->state == S_PROBED && w->quiet_ms < 8 * w->quiet0_ms) w->quiet_ms *= 2;
        w->nBuf = nBuf;
        w->nExpect = nExpect;
        w->tQuietMs = 0;
        w->state = S_WATCH;
        return VT_WATCH_NONE;
    }
    if (nExpect == w->nExpect) return VT_WATCH_NONE; /* nothing is waiting for a record */
    if (w->state == S_PROBED) {                       /* even a forced flush brought nothing */
        w->state = S_TAKEN;
        return VT_WATCH_TAKEN;
    }
    if (!w->tQuietMs) {
        w->tQuietMs = nowMs ? nowMs : 1;
        return VT_WATCH_NONE;
    }
    if (nowMs - w->tQuietMs < w->quiet_ms) return VT_WATCH_NONE;
    w->state = S_PROBED;
    return VT_WATCH_PROBE;
}
