/* Format detection for the importers: from a file's first bytes (through gzip) and, for SQLite files, their tables. */
#include "import.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "util/errors.h"
#include "pickle.h"
#include "source.h"
#include "vramtrace/schema.h"

const char *vt__import_format_name(int fmt)
{
    switch (fmt) {
    case VT_IMPORT_TRACE: return "cupti";
    case VT_IMPORT_SNAPSHOT: return "pytorch_snapshot";
    case VT_IMPORT_NSYS: return "nsys_sqlite";
    case VT_IMPORT_KINETO: return "kineto_json";
    default: return "unknown";
    }
}

/* An SQLite file: a vramtrace trace (application id), an Nsight Systems export (its tables), or neither (*pFmt).
 * Returns an exit code: VT_EXIT_CORRUPT (zErr says why) when its schema cannot be read, as in a file cut short,
 * VT_EXIT_NOFILE when SQLite cannot open it (a path longer than it opens). */
static int sqlite_kind(const char *zPath, int *pFmt, char *zErr, size_t nErr)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *p = NULL;
    int rc = VT_EXIT_OK, src;
    *pFmt = VT_IMPORT_UNKNOWN;
    if ((src = sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL)) != SQLITE_OK) {
        char zWhy[512];
        snprintf(zErr, nErr, "cannot open: %s", vt__sqlite_open_error(db, src, zPath, zWhy, sizeof zWhy));
        rc = VT_EXIT_NOFILE;
        goto done;
    }
    if (sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &p, NULL) == SQLITE_OK && sqlite3_step(p) == SQLITE_ROW &&
        sqlite3_column_int64(p, 0) == VT_SCHEMA_APPLICATION_ID)
        *pFmt = VT_IMPORT_TRACE;
    sqlite3_finalize(p);
    p = NULL;
    if (*pFmt != VT_IMPORT_UNKNOWN) goto done; /* a damaged trace: the trace reader says so */
    /* every Nsight export has StringIds and at least one of these */
    src = sqlite3_prepare_v2(db,
                             "SELECT (SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'StringIds'),"
                             " (SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN"
                             " ('TARGET_INFO_SESSION_START_TIME', 'CUPTI_ACTIVITY_KIND_RUNTIME',"
                             " 'CUPTI_ACTIVITY_KIND_KERNEL', 'CUDA_GPU_MEMORY_USAGE_EVENTS', 'NVTX_EVENTS',"
                             " 'CUPTI_ACTIVITY_KIND_MEMCPY', 'TARGET_INFO_GPU'))",
                             -1, &p, NULL);
    if (src == SQLITE_OK) src = sqlite3_step(p);
    if (src == SQLITE_ROW) {
        if (sqlite3_column_int(p, 0) == 1 && sqlite3_column_int(p, 1) > 0) *pFmt = VT_IMPORT_NSYS;
    } else if (vt__exit_for_sqlite(src) == VT_EXIT_CORRUPT) { /* its schema is unreadable: damaged, not foreign */
        snprintf(zErr, nErr, "cannot read database: %s", sqlite3_errstr(src));
        rc = VT_EXIT_CORRUPT;
    }
done:
    sqlite3_finalize(p);
    sqlite3_close(db);
    return rc;
}

/* Whether byte c is JSON's blank (RFC 8259: space, tab, line feed, carriage return). */
static int blank(unsigned c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* What the first n bytes a of an input begin, gzip undone: VT_IMPORT_SNAPSHOT (a pickle's PROTO opcode),
 * VT_IMPORT_KINETO (JSON: an object or array after blanks and a UTF-8 byte order mark) or VT_IMPORT_UNKNOWN.
 * *pbBlank: only blanks. */
static int head_format(const unsigned char *a, long n, int *pbBlank)
{
    long k;
    *pbBlank = 0;
    if (n >= 2 && a[0] == 0x80) return VT_IMPORT_SNAPSHOT; /* pickle: PROTO opcode (protocol 2 and later) */
    for (k = n >= 3 && a[0] == 0xef && a[1] == 0xbb && a[2] == 0xbf ? 3 : 0; k < n; k++) {
        if (blank(a[k])) continue;
        return a[k] == '{' || a[k] == '[' ? VT_IMPORT_KINETO : VT_IMPORT_UNKNOWN;
    }
    *pbBlank = 1;
    return VT_IMPORT_UNKNOWN;
}

/* Whether a[0..n) could be the start of JSON text: UTF-8 without control bytes but blanks (JSON
 * writes them as escapes); a character cut at the end of the window counts as whole. */
static int head_text(const unsigned char *a, size_t n)
{
    size_t k = 0;
    while (k < n) {
        unsigned c = a[k];
        size_t m = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 && c >= 0xc2 ? 1 : (c & 0xf0) == 0xe0 ? 2
                 : (c & 0xf8) == 0xf0 && c <= 0xf4 ? 3 : 4;
        if (m == 4 || c == 0x7f || (c < 0x20 && !blank(c))) return 0;
        for (k++; m > 0 && k < n; m--, k++)
            if ((a[k] & 0xc0) != 0x80) return 0;
    }
    return 1;
}

/* Whether a[0..n) could begin a PyTorch snapshot as Python's pickler writes one: PROTO 2 to 5; from
 * protocol 4 on, a FRAME of less than 4 GiB (it frames every pickle of 4 bytes and more, 64 KiB at a
 * time); EMPTY_DICT (the snapshot is a dict) and its memo entry (MEMOIZE, or BINPUT 0 before protocol
 * 4); then opcodes the reader takes up to the end of the window (which cuts it: VT_PK_ETRUNC). */
static int head_pickle(const unsigned char *a, size_t n)
{
    struct vt__src s;
    struct vt_pkval root;
    struct vt_pk *p;
    size_t k = n > 2 && a[1] >= 4 ? 11 : 2; /* after FRAME and its 8-byte length */
    int rc;
    if (n <= k + 2 || a[1] < 2 || a[1] > 5 || a[k] != '}') return 0;
    if (k == 11 && (a[2] != 0x95 || a[7] || a[8] || a[9] || a[10] || a[12] != 0x94)) return 0;
    if (k == 2 && (a[3] != 'q' || a[4] != 0)) return 0;
    vt__src_open_mem(&s, a, n);
    if (!(p = vt__pk_new(&s, NULL, NULL))) return 1; /* out of memory: undecided, read on */
    rc = vt__pk_run(p, &root);
    vt__pk_free(p);
    vt__src_close(&s);
    return rc == VT_PK_ETRUNC || rc == VT_PK_OK || rc == VT_PK_ENOMEM;
}

/* vt__import_head_plausible of what is not gzip: an SQLite file, a snapshot or JSON text. */
static int head_plain(const unsigned char *a, size_t n)
{
    int bBlank, fmt = head_format(a, (long)n, &bBlank);
    if (n >= 16 && !memcmp(a, "SQLite format 3", 16)) return 1;
    if (fmt == VT_IMPORT_SNAPSHOT) return head_pickle(a, n);
    return (fmt == VT_IMPORT_KINETO || bBlank) && head_text(a, n);
}

int vt__import_head_plausible(const unsigned char *a, size_t n)
{
    unsigned char aOut[4096];
    long k;
    if (!vt__src_gzip_magic(a, n)) return head_plain(a, n);
    /* gzip: what its first bytes give is judged as a plain input is (a gzip'd SQLite file is read to its end,
     * and the reader then says to decompress it) */
    k = vt__src_gunzip_head(a, n, aOut, sizeof aOut); /* -2: no zlib here, so nothing gzip'd is read */
    return k > 0 && head_plain(aOut, (size_t)k);
}

int vt__import_detect(const char *zPath, int *pFmt, char *zErr, size_t nErr)
{
    struct vt__src s;
    unsigned char a[64];
    long n = 0, k;
    int bGzip, bBlank;
    FILE *f;
    struct stat st;
    *pFmt = VT_IMPORT_UNKNOWN;
    if (stat(zPath, &st) == 0 && S_ISDIR(st.st_mode)) { /* fopen opens it; its read would fail */
        snprintf(zErr, nErr, "is a directory, not a file to import");
        return VT_EXIT_NOFILE;
    }
    if (stat(zPath, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
        snprintf(zErr, nErr, "empty file, not a format vramtrace imports");
        return VT_EXIT_NOT_TRACE;
    }
    /* SQLite files are judged raw (never compressed) */
    if (!(f = fopen(zPath, "rb"))) {
        snprintf(zErr, nErr, "%s", strerror(errno));
        return VT_EXIT_NOFILE;
    }
    n = (long)fread(a, 1, 16, f);
    fclose(f);
    if (n == 16 && !memcmp(a, "SQLite format 3", 16)) {
        return sqlite_kind(zPath, pFmt, zErr, nErr);
    }
    bGzip = vt__src_gzip_magic(a, (size_t)n);
    if (bGzip && !vt__src_can_gunzip()) {
        snprintf(zErr, nErr, "%s", VT__SRC_NO_GUNZIP);
        return VT_EXIT_NOT_TRACE;
    }
    if (vt__src_open_file(&s, zPath) != 0) {
        snprintf(zErr, nErr, "%s", strerror(errno));
        return VT_EXIT_NOFILE;
    }
    for (n = 0; n < (long)sizeof a && (k = vt__src_read(&s, a + n, sizeof a - (size_t)n)) > 0;) n += k;
    vt__src_close(&s);
    *pFmt = head_format(a, n, &bBlank);
    if (*pFmt == VT_IMPORT_SNAPSHOT) return VT_EXIT_OK;
    if (bGzip && *pFmt == VT_IMPORT_UNKNOWN) { /* SQLite reads no compressed file: say what it is */
        if (n >= 16 && !memcmp(a, "SQLite format 3", 16))
            snprintf(zErr, nErr, "a gzip-compressed SQLite file (a trace or an export?): decompress it first (gunzip)");
        else
            snprintf(zErr, nErr, "gzip-compressed, but what it holds is not a PyTorch memory snapshot or a "
                                 "torch.profiler JSON trace");
        return VT_EXIT_NOT_TRACE;
    }
    return VT_EXIT_OK;
}
