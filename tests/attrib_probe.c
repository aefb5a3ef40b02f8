/* Test helper library: captures its caller's site for test_pyframes' real-interpreter check (loaded by ctypes). */
#include <stdio.h>
#include <string.h>

#include "stack.h"
#include "vramtrace/schema.h"

/*
 * Capture the calling thread's site (its Python frames, with or without the GIL,
 * then 4 native frames) and describe it in zOut: one line per Python frame,
 * "py FILE:LINE:FUNCTION", then "native N". Returns the stack id, or -1 when
 * the site table cannot be created. Called by Python through ctypes.
 */
__attribute__((visibility("default"))) long long vt_probe_capture(char *zOut, int nOut)
{
    static struct vt__sites *s;
    struct vt_hrec rec;
    int64_t id;
    int i, nNative = 0, off = 0;
    if (!s) s = vt__sites_open(NULL);
    if (!s || nOut < 1) return -1;
    zOut[0] = '\0';
    id = vt__site_capture(s, 4, 1, &rec);
    if (rec.type != VT_HREC_STACK) return id;
    for (i = 0; i < rec.u.stack.nFrame; i++) {
        const struct vt_frame *f = &rec.u.stack.aFrame[i];
        if (f->kind != VT_FRAME_PYTHON) {
            nNative++;
        } else if (off < nOut) {
            off += snprintf(zOut + off, (size_t)(nOut - off), "py %s:%d:%s\n", f->zFile, f->line,
                            f->zFunction);
        }
    }
    if (off < nOut) snprintf(zOut + off, (size_t)(nOut - off), "native %d\n", nNative);
    vt__frames_free(rec.u.stack.aFrame, rec.u.stack.nFrame);
    return id;
}
