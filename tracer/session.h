/* Internal: the tracing session of this process — config, output file, writer, fork handling. */
#ifndef VT_TRACER_SESSION_H
#define VT_TRACER_SESSION_H

/*
 * The non-CUPTI lifecycle of the injection library, testable without a GPU:
 *
 *   vt__session_start  expand VRAMTRACE_OUTPUT, create the file (outfile.h),
 *                      open the writer, which commits the tracer version,
 *                      config.* and process metadata in meta with the
 *                      schema (before any record: a process killed at once
 *                      still leaves a trace that names it), start it,
 *                      register fork handlers;
 *   vt__session_*      forward records and activity buffers to the writer,
 *                      from any thread, only while the session is active;
 *   vt__session_close  stop accepting records, close the writer (bounded);
 *   vt__session_abort  the same, and remove the trace file (set-up failed).
 *
 * There is one session per process. After fork() the child's session is
 * inactive: it never touches the parent's database, thread or locks
 * (vt__writer_abandon), and everything submitted in the child is discarded.
 */
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "writer.h"

/*
 * Start the session with configuration cfg (copied). xNextRecord is the
 * activity-buffer iterator handed to the writer (see writer.h). Returns 0, or
 * -1 with a one-line reason (no "vramtrace:" prefix) in zErr; nothing is left
 * on disk after a failure. A second start while a session is active fails.
 */
int vt__session_start(const struct vt_config *cfg,
                      int (*xNextRecord)(uint8_t *pBuf, size_t validSize, void **ppRecord),
                      char *zErr, size_t nErr);

/* 1 while a session is active in this process (0 before start, after close, in a forked child). */
int vt__session_active(void);

/* The trace file's path ("" when no session was started). */
const char *vt__session_path(void);

/*
 * Queue one host record (see vt__writer_submit). Returns 0, or -1 if it was
 * not queued (session inactive, or the writer's queue is full); heap pointers
 * inside rec are freed in every case.
 */
int vt__session_submit(const struct vt_hrec *rec);

/* Queue a meta row key = value (value copied). Returns 0 or -1 like vt__session_submit. */
int vt__session_meta(const char *zKey, const char *zValue);

/* An activity buffer from the writer (NULL, *pSize = 0 when inactive or over the memory bound). */
uint8_t *vt__session_buffer_alloc(size_t *pSize);

/* Hand a completed activity buffer to the writer; dropped when the session is inactive. */
void vt__session_buffer_submit(uint8_t *pBuf, size_t validSize);

/* Records the writer dropped so far at its queue (0 when inactive). */
uint64_t vt__session_dropped(void);

/*
 * End the session: refuse new records, wait (bounded) for submitters in
 * progress, then vt__writer_close(timeout_ms). Returns 0, a negative code from
 * the writer, or -1 if no session is active.
 */
int vt__session_close(unsigned timeout_ms);

/* End the session and delete its trace file (used when CUPTI set-up fails after start). */
void vt__session_abort(void);

#endif
