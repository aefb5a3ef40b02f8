/* Fuzz targets' shared parts: a trace built from fuzz bytes, and every reader of a trace run on it. */
#ifndef VT_TESTS_FUZZ_COMMON_H
#define VT_TESTS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/*
 * Build a trace at zPath from data: the real schema (vt__schema_create), then
 * a program of operations decoded from the bytes — rows for any table with
 * any column values (NULL, 0, -1, INT64_MIN/MAX, huge sizes, reused
 * addresses, timestamps forwards and backwards, huge and hostile strings,
 * blobs, doubles), meta rows, dropped tables and views, a changed
 * user_version. Invalid rows (constraint failures) are skipped. pageSize 0
 * keeps SQLite's default. Returns 0, or -1 if the file could not be created.
 */
int vt_fuzz_build(const uint8_t *data, size_t size, const char *zPath, int pageSize);

/*
 * Run what reads traces, on zPath, the way a user runs them: `analyze`
 * (format, --by-site and writing results back chosen by flags; then a
 * read-only run in another format), `info` (text or --json), `export
 * --perfetto`, and `sql` over the compatibility and analysis views. Output
 * goes to /dev/null. Exit codes are not checked: a hostile trace may be
 * refused; it must never crash, hang or leak.
 */
void vt_fuzz_read_all(const char *zPath, unsigned flags);

/* A per-process scratch path for the trace (under $TMPDIR or /dev/shm), with companions removed. */
const char *vt_fuzz_scratch(const char *zName);

#endif
