/* Internal: helpers of the record subcommand: the job environment and the traces it wrote. */
#ifndef VT_ANALYZER_RECORD_H
#define VT_ANALYZER_RECORD_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <sqlite3.h>

#define VT_RECORD_DEFAULT_NAME "vramtrace-%h-%p.db" /* file name used when -o is a directory */
#define VT_RECORD_MAX_BACKTRACE 64                  /* the tracer's native stack depth limit */

/*
 * Path of the running vramtrace command, resolved through /proc/self/exe.
 * Returns 0, or -1 (zOut is then "").
 */
int vt__record_self_exe(char *zOut, size_t nOut);

/*
 * Find libvramtrace.so for a vramtrace command installed at zExe: the
 * VRAMTRACE_LIB variable if set (it must name a file), else, relative to the
 * command's directory: ../tracer and .. (build tree), ../<libdir>, ../lib,
 * ../lib64, ../lib*, and the directory itself. Writes the canonical absolute path into
 * zOut. Returns 0, or -1 with a one-line reason (the places searched) in zWhy.
 */
int vt__record_find_lib(const char *zExe, char *zOut, size_t nOut, char *zWhy, size_t nWhy);

/*
 * Find the directory of the PyTorch history hook (sitecustomize.py) for a vramtrace command
 * installed at zExe: <dir>/pyhook (build tree), then <dir>/../<datadir>/vramtrace/pyhook and
 * <dir>/../share/vramtrace/pyhook. Writes the canonical absolute directory into zOut.
 * Returns 0, or -1 with a one-line reason (the places searched) in zWhy.
 */
int vt__record_find_pyhook(const char *zExe, char *zOut, size_t nOut, char *zWhy, size_t nWhy);

/*
 * The directory a trace pattern writes into, for the files that go beside the traces (the
 * PyTorch snapshots): the pattern's directory (%h in it this host's name) when it has no %p or
 * %r, else the current directory ("." when it cannot be read). zPattern is absolute (vt__record_output).
 */
void vt__record_side_dir(const char *zPattern, char *zOut, size_t nOut);

/*
 * Find the libcupti the tracer loads (its directory goes first on LD_LIBRARY_PATH): the VRAMTRACE_CUPTI variable if set
 * (it must name a file); else, when the job's command zCmd (as given, resolved
 * through PATH) lives in <prefix>/bin of a Python environment, or $VIRTUAL_ENV
 * or $CONDA_PREFIX is set, the copy its CUDA wheels bring
 * (lib/python3.X/site-packages/nvidia/cu13/lib: PyTorch loads that copy, and
 * NVTX must use the same one); else the CUDA toolkit library directory
 * recorded at build time; else the copy the dynamic loader resolves for the
 * libcupti soname. Writes the canonical absolute path into zOut. Returns 0, or
 * -1 with a one-line reason in zWhy.
 */
int vt__record_find_cupti(const char *zCmd, char *zOut, size_t nOut, char *zWhy, size_t nWhy);

/*
 * Turn the output option (zOpt, from -o; may be NULL) or else the inherited
 * VRAMTRACE_OUTPUT (zEnv; may be NULL) or else the default into the absolute
 * output pattern the tracer gets. A value naming an existing directory, or
 * ending in '/', means "traces go in this directory" (created if missing)
 * under the default file name. Checks the escapes (%p %r %h %%), that the
 * directory exists and that a trace's path is one SQLite opens (vt__sqlite_path_max).
 * Returns 0, or an enum vt_exit code (VT_EXIT_USAGE for a bad pattern,
 * VT_EXIT_NOFILE for a missing or unwritable directory or too long a path) with a
 * one-line reason in zWhy.
 */
int vt__record_output(const char *zOpt, const char *zEnv, char *zOut, size_t nOut, char *zWhy,
                      size_t nWhy);

/*
 * Merge "backend:cudaMallocAsync" into a PyTorch allocator configuration
 * (comma-separated key:value options; commas inside [...] belong to the
 * value). An existing backend entry is replaced in place, otherwise the backend
 * comes first; other options are kept in order; expandable_segments is
 * removed (the cudaMallocAsync backend does not support it) and *pbDropped set
 * to 1 when it was enabled. zUser may be NULL or empty. Returns 0, or -1 if
 * the result does not fit in nOut bytes.
 */
int vt__alloc_conf_merge(const char *zUser, char *zOut, size_t nOut, int *pbDropped);

/* One file matching the output pattern, with what identifies this version of it. */
struct vt_trace_file {
    char *zPath;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

/* A list of files matching the output pattern. */
struct vt_trace_set {
    struct vt_trace_file *aFile;
    size_t nFile;
};

/*
 * List the regular files matching an output pattern (each %p, %r, %h escape
 * matches any text; SQLite's -wal, -shm and -journal companions are skipped),
 * sorted by name. Returns 0, or -1 on an allocation failure (the set is then
 * empty). Free with vt__trace_set_free.
 */
int vt__trace_set_list(const char *zPattern, struct vt_trace_set *pSet);

/*
 * This record run's id for the traces of its job (VRAMTRACE_RECORD_ID; the tracer stores it as meta
 * record_id): record's pid and the wall clock's ns, "PID-NS", into z.
 */
void vt__record_make_id(char *z, size_t n);

/*
 * 1 if the trace at zPath is another record run's: its meta record_id is there and is not zId. A
 * file without one (a trace of a tracer that does not write it, one not readable) is not called another's.
 */
int vt__trace_is_others(const char *zPath, const char *zId);

/* 1 if pFile is absent from pBefore or was replaced or written since (other inode, size or mtime). */
int vt__trace_set_is_new(const struct vt_trace_set *pBefore, const struct vt_trace_file *pFile);

void vt__trace_set_free(struct vt_trace_set *pSet);

/* ---- record_nvml.c: other processes' memory, read through NVML in record's own process ---- */
struct vt_nvml;
/*
 * Load NVML (the file VRAMTRACE_NVML names, else libnvidia-ml.so.1) into this process, never the
 * job's, and read each device's used memory and processes before the job starts: then no process
 * of the job exists, so every process listed is another's. What NVML opened is close-on-exec.
 * Missing NVML, no permission or an error leave the handle without devices and its status saying
 * why (no message). NULL only when out of memory. Free with vt__nvml_close.
 */
struct vt_nvml *vt__nvml_open(void);
/*
 * Start reading every device's processes in a thread of its own (all signals blocked), at most
 * once a second, the gap doubling every 256 readings, at most 2048 per device. Call after the job
 * was started. Nothing happens without devices or when the thread cannot start.
 */
void vt__nvml_watch(struct vt_nvml *p);
/* Stop the readings (once the job ended); p may be NULL. */
void vt__nvml_stop(struct vt_nvml *p);
/* Stop the readings, shut NVML down and free p (may be NULL). */
void vt__nvml_close(struct vt_nvml *p);
/*
 * Write p's readings into an open trace as meta rows (docs/schema.md, nvml.*): nvml.status, and
 * for each trace device matched to an NVML device by UUID (or, without a UUID in the trace, by
 * PCI bus and device; never by index), the launch reading and the samples of the other processes
 * (every process listed but the trace's own pid) placed on the trace's clock through its anchor.
 * Samples are kept only where the trace's pid is in some list (the same PID namespace). An
 * SQLite code; p may be NULL (nothing written).
 */
int vt__nvml_stamp(const struct vt_nvml *p, sqlite3 *db);


#endif
