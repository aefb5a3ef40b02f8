/* Internal: the file-size limit (RLIMIT_FSIZE): SIGXFSZ held off while a host thread writes the trace. */
#ifndef VT_TRACER_FSIZE_H
#define VT_TRACER_FSIZE_H

#include <signal.h>

#include <sqlite3.h>

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

/*
 * Whether the thread's last write to db (may be NULL) failed because a file reached its largest
 * size: the file-size limit (RLIMIT_FSIZE, `ulimit -f`), for which the kernel also sends SIGXFSZ
 * to the writing thread (kept pending: every thread that writes the trace blocks it, see
 * vt__xfsz_begin and the writer thread's start), or the file system's largest file (EFBIG without
 * a signal). SQLite reports both as an I/O error and does not always keep the errno, hence the
 * pending signal.
 */
int vt__file_too_big(sqlite3 *db);

#endif
