/* Internal: the trace writer — one thread that decodes CUPTI buffers and host records into SQLite. */
#ifndef VT_TRACER_WRITER_H
#define VT_TRACER_WRITER_H

/*
 * Contract between the CUPTI glue (inject.c) and the core (writer.c, decode.c).
 * The glue never touches SQLite; the writer never calls CUPTI. Everything here is
 * exercised by tests without a GPU by feeding real CUPTI record structs.
 *
 * Threading: every vt__writer_* function except open/start/close/abandon may be
 * called from any thread, including CUPTI callbacks, concurrently. They never
 * block on I/O: records go into bounded queues; when a queue is full the record
 * is dropped and counted (written later as a `dropped` row, source VT_DROP_QUEUE).
 *
 * Memory bound: activity buffers handed out by vt__writer_buffer_alloc plus the
 * host-record ring never exceed cfg.max_memory bytes, however many threads
 * hold a buffer at once (bufpool.h). A buffer CUPTI has not returned when the
 * writer closes is never freed.
 *
 * File-size limit (`ulimit -f`, RLIMIT_FSIZE): a write past it fails with EFBIG
 * and the kernel sends SIGXFSZ, whose default action ends the process, to the
 * thread that wrote. The writer thread blocks every signal, and the calling
 * thread blocks SIGXFSZ while open (and close of a writer never started) write,
 * then takes the signal those writes raised. When the trace reaches the limit,
 * tracing goes off: one "vramtrace:" line, the uncommitted rows are given up,
 * later records are counted (stats dropped_off) and not written, and the trace
 * keeps every committed transaction. At close a checkpoint may make room for
 * the closing rows (a `dropped` row for what was lost, closed_cleanly = 0).
 */
#include <stddef.h>
#include <stdint.h>

#include "hrec.h"

struct vt_writer;

struct vt_writer_config {
    size_t cbSize;            /* sizeof(struct vt_writer_config): lets the struct grow */
    size_t buffer_size;       /* bytes per CUPTI activity buffer (default 4 MiB) */
    size_t max_memory;        /* bound on buffers + host ring, bytes (default 256 MiB) */
    size_t host_ring_records; /* capacity of the host-record ring (default 65536) */
    unsigned flush_ms;        /* commit at least this often (default 500 ms; <= 1000) */
    unsigned batch_rows;      /* commit after this many rows (default 50000) */
    /*
     * Iterator over the records of a completed activity buffer: the .so passes a
     * wrapper of cuptiActivityGetNextRecord; tests pass their own over records
     * they laid out. Sets *ppRecord to the next record (NULL to start: pass the
     * previous record back in). Returns 0 for a record, 1 at the end, -1 on a
     * malformed buffer (the rest of the buffer is counted as dropped).
     */
    int (*xNextRecord)(uint8_t *pBuf, size_t validSize, void **ppRecord);
    /* Added fields (0 takes the default; callers that fill cbSize are unaffected): */
    size_t corr_map_entries;  /* API calls awaiting their activity record (default 65536) */
    size_t nvtx_map_entries;  /* NVTX ranges open at once (default 16384) */
    /*
     * The trace's time base, CUPTI-clock ns (the glue passes the clock at
     * start): rows store times relative to it (schema.h, VT__INSTANT). 0 keeps
     * them absolute, which is correct but costs 2 more bytes per time.
     */
    int64_t time_base_ns;
    /*
     * Long jobs (limit.h): a bound on the database's size, bytes (0: none), and a
     * recording window relative to time_base_ns: detail rows before start_after_ns
     * or from stop_after_ns on are skipped (0: no such edge).
     */
    uint64_t max_bytes;
    int64_t start_after_ns, stop_after_ns;
    /*
     * Always-on mode (ksummary.h): with kernel_period_ns > 0, kernels, their launch calls and
     * their argument uses are folded per period of that length from kernel_warmup_ns after
     * time_base_ns on; 0: every kernel written (the default).
     */
    int64_t kernel_warmup_ns, kernel_period_ns;
    /*
     * The trace's first meta rows (whose trace it is): vt__writer_open commits them on the calling
     * thread right after the schema, in one small transaction, so a process killed before the
     * writer's first commit still leaves a trace that names it. xMeta(pMetaCtx, xSet, pSet) calls
     * xSet for each row (vt__meta_commit); NULL: none. Open fails when they cannot be written.
     */
    int (*xMeta)(void *pCtx, int (*xSet)(void *pSet, const char *zKey, const char *zValue), void *pSet);
    void *pMetaCtx;
};

/* Fill *cfg with defaults. */
void vt__writer_config_default(struct vt_writer_config *cfg);

/*
 * Create the trace file at zPath (already opened securely by the caller as fd,
 * mode 0600, see outfile.h) and its schema. Does not start the thread.
 * Returns NULL and writes a one-line reason into zErr on failure.
 */
struct vt_writer *vt__writer_open(const char *zPath, const struct vt_writer_config *cfg,
                                  char *zErr, size_t nErr);

/* Start the writer thread (all signals blocked in it). Returns 0 or -errno. */
int vt__writer_start(struct vt_writer *w);

/*
 * Hand out one activity buffer for CUPTI (8-byte aligned, *pSize bytes).
 * Returns NULL when the memory bound is reached: CUPTI then drops records and
 * counts them itself (the glue reports that count with VT_HREC_DROPPED).
 */
uint8_t *vt__writer_buffer_alloc(struct vt_writer *w, size_t *pSize);

/*
 * Give a completed CUPTI buffer to the writer (ownership passes; validSize bytes
 * of records). A buffer with validSize == 0 is just returned to the pool.
 */
void vt__writer_buffer_submit(struct vt_writer *w, uint8_t *pBuf, size_t validSize);

/* Queue one host record (copied; heap pointers inside pass to the writer). Returns 0, or -1 if dropped. */
int vt__writer_submit(struct vt_writer *w, const struct vt_hrec *rec);

/* Records dropped so far at the queue (for tests and the exit summary). */
uint64_t vt__writer_dropped(const struct vt_writer *w);

/*
 * Drain everything queued, commit, create read indexes, write the closing meta
 * rows (end time, counts), close the database and free w. Waits at most
 * timeout_ms for the thread; past it, abandons what is left (counted). Returns 0
 * when everything was written; -EFBIG when tracing went off at the file-size
 * limit (already said on stderr); -ETIMEDOUT past timeout_ms; -EIO for other
 * losses or errors.
 */
int vt__writer_close(struct vt_writer *w, unsigned timeout_ms);

/*
 * In a forked child: forget w without touching its database, thread or locks
 * (they belong to the parent). Memory is leaked on purpose: it may be in an
 * inconsistent state.
 */
void vt__writer_abandon(struct vt_writer *w);

/* pthread_atfork support: the glue calls these from its prepare/parent handlers. */
void vt__writer_fork_prepare(struct vt_writer *w);
void vt__writer_fork_parent(struct vt_writer *w);

/* Decoding statistics, for tests and `info`. */
struct vt_writer_stats {
    uint64_t records_decoded; /* CUPTI activity records seen */
    uint64_t records_unknown; /* activity kinds we do not store */
    uint64_t rows_written;
    uint64_t commits;
    uint64_t dropped_queue;
    uint64_t dropped_writer;
    uint64_t buffers_refused; /* vt__writer_buffer_alloc calls answered NULL (memory bound) */
    uint64_t dropped_off;     /* records released unwritten once tracing went off (file size limit) */
    int tracing_off;          /* 1 once the trace reached the largest file size allowed */
};
void vt__writer_stats(const struct vt_writer *w, struct vt_writer_stats *pStats);

#endif
