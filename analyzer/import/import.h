/* Internal: the importers' shared face: formats, the per-import context, each format's entry, the driver. */
#ifndef VT_IMPORT_IMPORT_H
#define VT_IMPORT_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "builder.h"

/* What a file holds, judged from its content (detect.c). */
enum vt_import_format {
    VT_IMPORT_UNKNOWN = 0,
    VT_IMPORT_TRACE,    /* already a vramtrace trace */
    VT_IMPORT_SNAPSHOT, /* PyTorch memory snapshot (pickle, maybe gzip'd) */
    VT_IMPORT_NSYS,     /* Nsight Systems SQLite export */
    VT_IMPORT_KINETO    /* torch.profiler / Kineto trace-event JSON (plain or gzip) */
};

/* The formats import reads, as every message that names them says them. */
#define VT_IMPORT_FORMATS                                                                                            \
    "a PyTorch memory snapshot pickle, an Nsight Systems SQLite export or a torch.profiler JSON trace"

/* The meta value source_format names for a format ("pytorch_snapshot", "nsys_sqlite", "kineto_json"). */
const char *vt__import_format_name(int fmt);

/*
 * Judge zPath's format from its first bytes (gzip is looked through) and, for
 * SQLite files, their tables. Returns an enum vt_exit code: VT_EXIT_OK with
 * *pFmt set (VT_IMPORT_UNKNOWN included), VT_EXIT_NOT_TRACE with the reason in
 * zErr for a gzip file holding neither format (nothing else reads a compressed
 * file), or VT_EXIT_NOFILE with the reason in zErr when the file cannot be read.
 */
int vt__import_detect(const char *zPath, int *pFmt, char *zErr, size_t nErr);

/*
 * Whether the first n bytes a of a stream (as read, gzip not undone) can begin an input a reader
 * takes: an SQLite file (a trace, an Nsight export); a snapshot's pickle (PROTO 2 to 5, a dict, and
 * opcodes the unpickler takes up to the end of the n bytes); JSON (an object or array after blanks,
 * and all of the n bytes UTF-8 text without raw control characters; blanks alone: undecided, 1); or
 * gzip whose first bytes decompress to one of these (never without zlib). 0 for what can be none of them (/dev/zero,
 * /dev/urandom, which began '{' once in about 128 reads), which is then not read to its end.
 */
int vt__import_head_plausible(const unsigned char *a, size_t n);

/* One import in progress: the input, the trace being built, the first error, the notes. */
struct vt__imp {
    const char *zIn;   /* the input path, for messages */
    struct vt__tb *tb;
    int rc;            /* enum vt_exit of the first failure, VT_EXIT_OK so far */
    char zErr[320];    /* its message */
    char **azNote;     /* notes for the user (each also a meta row import_note.N) */
    int nNote;
    int64_t nEvents;   /* source events read (what the speed goal counts) */
};

/* Record a note once (formatted; a note already recorded is not repeated). */
void vt__imp_note(struct vt__imp *x, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
/* Record the first failure (exit code and message); returns rc. */
int vt__imp_fail(struct vt__imp *x, int rc, const char *zFmt, ...) __attribute__((format(printf, 3, 4)));
/* A builder failure as an import failure (VT_EXIT_INTERNAL with the builder's message). */
int vt__imp_tb_fail(struct vt__imp *x);

/* Each format: read x->zIn into x->tb. Return an enum vt_exit code (x->rc/zErr set on failure). */
int vt__import_snapshot(struct vt__imp *x);
int vt__import_kineto(struct vt__imp *x);
int vt__import_nsys(struct vt__imp *x, int64_t pid);

/*
 * The processes of an Nsight export that hold CUDA activity (memory events,
 * runtime calls, kernels, copies, memsets), most events first, in *paPid
 * (malloc'd, *pn entries; pid -1 stands for an export without process ids).
 * Returns an enum vt_exit code, the reason in zErr.
 */
int vt__nsys_pids(const char *zIn, int64_t **paPid, int64_t **paEvents, int *pn, char *zErr, size_t nErr);

/* ---- the driver (import.c: it prints with vt__errorf) ---- */

struct vt_import_opts {
    int bForce; /* replace existing outputs */
    int bQuiet; /* no notes on stderr */
};

/*
 * Import zIn (format fmt; for an Nsight export the process pid, or -1 when it
 * has one process) into a new trace at zOut. Prints one "vramtrace: ..." line
 * per note (unless quiet) and per failure. Returns an enum vt_exit code; on
 * success *pnEvents (may be NULL) receives the source events read.
 */
int vt__import_one(const char *zIn, int fmt, int64_t pid, const char *zOut, const struct vt_import_opts *o,
                   int64_t *pnEvents);

/* How long a FIFO may stay silent before a reader gives up on it (vt__import_spool). */
#define VT_SPOOL_WAIT_S 5

/* A spool (vt__import_spool) checks its file system's free space every VT_SPOOL_CHECK bytes and
 * stops short of its last twentieth, and of its last VT_SPOOL_MARGIN_MIN bytes on a small one. */
#define VT_SPOOL_CHECK ((int64_t)16 << 20)
#define VT_SPOOL_MARGIN_MIN ((int64_t)16 << 20)

/*
 * Read input zName into a temporary file when it cannot be read like a file: "-" (standard
 * input) or a pipe, FIFO, socket or character device (a shell's <(...) gives /dev/fd/N).
 * Readers then read that file wherever zName is named (vt__import_temp_path, vt__import_input);
 * a FIFO nobody writes to is refused after VT_SPOOL_WAIT_S seconds, a terminal or block device
 * at once. A regular file, a directory or a missing path is left as it is (the reader names
 * what is wrong). Returns an enum vt_exit code after one line on failure.
 */
int vt__import_spool(const char *zName);

/* What a reader opens for a name given on the command line (vt__import_input). */
struct vt_input {
    const char *zFile;  /* the file to open as a trace: zName itself, the file a pipe was read into, a
                         * merged copy, or the temporary trace another tool's file was imported into */
    int fmt;            /* the format of the input (enum vt_import_format): VT_IMPORT_UNKNOWN for a file
                         * none reads (the trace reader says why) */
    int bImported;      /* zFile is a temporary import of another tool's file */
};

/*
 * The import stage of every reader: the file zName stands for (vt__import_temp_path), its
 * format judged from its content (vt__import_detect), and another tool's file (snapshot,
 * Nsight export, Kineto trace) imported into a temporary trace removed at exit (an Nsight
 * export with several processes: the one with the most CUDA activity, the others named in a
 * note). Returns an enum vt_exit code after printing one line on failure (a directory, an
 * unreadable file, a compressed file no reader takes, a failed import).
 */
int vt__import_input(const char *zName, struct vt_input *pIn);

/*
 * A new empty temporary file, removed at exit, registered as the file standing for zPath
 * (vt__import_temp_path then answers it). *pzTemp stays owned by the list. Returns an enum
 * vt_exit code after printing one line on failure.
 */
int vt__import_temp_new(const char *zPath, char **pzTemp);

/* The file standing for zPath in this process (the newest of: a pipe read into a file, a merged copy, an
 * import; see vt__import_input), or zPath itself when there is none. */
const char *vt__import_temp_path(const char *zPath);

/* ---- PyTorch's allocation history merged into a trace of the same process (merge.c) ---- */

/*
 * The snapshot 'vramtrace record' wrote beside trace zTrace: DIR/vramtrace-HOST-PID.snapshot.pickle
 * with HOST and PID from the trace's meta. *pzSnap is a malloc'd path when that file exists, else
 * NULL. Returns VT_EXIT_OK (found or not; an unreadable trace is left to the reader) or
 * VT_EXIT_INTERNAL (out of memory).
 */
int vt__snapshot_find(const char *zTrace, char **pzSnap);

/*
 * The time range of trace zTrace as the reports print it (the reader's): its first and last event, ns on
 * the trace's clock, into *pFirst, *pLast. 0, or -1 when it has no timed event or cannot be read. Given by
 * the command to the merge, which says where a refused history lies in these times.
 */
typedef int (*vt_trace_window_fn)(const char *zTrace, int64_t *pFirst, int64_t *pLast);

/*
 * Merge the allocation history of PyTorch snapshot zSnap into trace zTrace for the readers:
 * bInPlace 0 into a temporary copy registered as zTrace's temporary trace (read layer reads it
 * instead; zTrace untouched), 1 into zTrace itself. Tensor rows (source 1) with their call sites,
 * times moved onto the trace's clock through both wall-clock anchors. Refused (VT_EXIT_USAGE, one
 * line) when the snapshot's name names another host or process, when its history lies outside
 * the trace's time, when it has no timed history, or when the trace has no clock anchor. A trace
 * that already holds a merged history is left as it is when bQuietSkip (found automatically),
 * refused otherwise; a history outside the trace is placed in xWindow's times (NULL: not placed).
 * Returns an enum vt_exit code after printing one line on failure.
 */
int vt__snapshot_merge(const char *zTrace, const char *zSnap, int bInPlace, int bQuietSkip, vt_trace_window_fn xWindow);

#endif
