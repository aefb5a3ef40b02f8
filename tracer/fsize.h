/* Internal: the file-size limit (RLIMIT_FSIZE): SIGXFSZ held off while a host thread writes the trace. */
#ifndef VT_TRACER_FSIZE_H
#define VT_TRACER_FSIZE_H

#include <signal.h>

/*
 * SIGXFSZ while a host thread writes the trace (open; close when the writer
 * thread never started): the kernel sends it to the thread whose write passed
 * the file-size limit, and its default action ends the process. vt__xfsz_begin
 * blocks it in the calling thread (the writer thread blocks every signal from
 * its start); vt__xfsz_end takes the one these writes raised, unless one was
 * pending before, and restores the thread's mask and errno.
 */
struct vt__xfsz_guard {
    sigset_t old;
    int bWasPending;
};

/* Block SIGXFSZ in the calling thread, noting whether one was already pending. */
void vt__xfsz_begin(struct vt__xfsz_guard *g);

/* Take the SIGXFSZ the writes since vt__xfsz_begin raised (not one pending before); restore the mask and errno. */
void vt__xfsz_end(struct vt__xfsz_guard *g);

#endif
