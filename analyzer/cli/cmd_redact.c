/* The 'redact' subcommand: a copy of a trace safe to share (host, user, command line, paths replaced by stable placeholders). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "import.h"
#include "read/read.h"
#include "util/cleanup.h"
#include "util/opts.h"
#include "util/text.h"

static const char zRedactUsage[] =
    "usage: vramtrace redact [--root DIR] TRACE -o OUT\n"
    "\n"
    "Write a copy of TRACE that is safe to share: the command line, the host name,\n"
    "user names, device UUIDs and paths are replaced by stable placeholders (the\n"
    "same value gives the same placeholder): <cmdline>, <host-1>, <user>, <gpu-N>\n"
    "(the device table), <gpu-uuid-N> (GPU-/MIG- UUIDs in text such as\n"
    "CUDA_VISIBLE_DEVICES), <home>/..., <tmp>/..., <path-N>/FILE; library paths\n"
    "keep only what follows site-packages/ (<env>/site-packages/torch/...); the\n"
    "program's own source paths become relative to the project root. System paths\n"
    "(/usr, /lib, /opt...) are kept. The copy analyzes to the same findings. TRACE\n"
    "may be any file vramtrace reads (PyTorch snapshots and other imports too), - for\n"
    "standard input, or a pipe.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT  the copy to write (must not exist; never TRACE itself)\n"
    "  --root DIR        project root for source paths (default: the longest common\n"
    "                    directory of the program's own source files in the trace)\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 ok, 2 usage, 3 missing or unreadable trace, OUT exists (TRACE\n"
    "itself above all) or is not writable, 4 not a trace, 5 trace from a newer\n"
    "vramtrace, 6 damaged trace, 7 internal error.\n";

/* A growable string. */
struct buf {
    char *z;
    size_t n, cap;
    int bOom;
};

static void buf_add(struct buf *b, const char *z, size_t n)
{
    if (b->bOom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *zNew = realloc(b->z, cap);
        if (!zNew) {
            b->bOom = 1;
            return;
        }
        b->z = zNew;
        b->cap = cap;
    }
    memcpy(b->z + b->n, z, n);
    b->n += n;
    b->z[b->n] = 0;
}

static void buf_str(struct buf *b, const char *z)
{
    buf_add(b, z, strlen(z));
}

/* What is replaced: gathered from the trace before any change. */
struct redactor {
    char *zRoot;        /* project root without a trailing '/', or NULL */
    char *zHost;        /* the recorded host name (>= 3 bytes), or NULL */
    char **azUser;      /* user names seen in home directories (>= 3 bytes each) */
    int nUser;
    char **azDir;       /* directories given <path-N>, N = index + 1, in the order met */
    int nDir;
    char **azUuid;      /* GPU and MIG UUIDs given <gpu-uuid-N>, N = index + 1, in the order met */
    int nUuid;
    int bOom;
};

/* The index of z[0..n) in the list *paz (*pn entries), appended when absent; -1 on OOM. */
static int list_add(char ***paz, int *pn, const char *z, size_t n)
{
    char **az;
    int i;
    for (i = 0; i < *pn; i++)
        if (strlen((*paz)[i]) == n && !memcmp((*paz)[i], z, n)) return i;
    az = realloc(*paz, sizeof *az * (size_t)(*pn + 1));
    if (!az) return -1;
    *paz = az;
    if (!(az[*pn] = strndup(z, n))) return -1;
    return (*pn)++;
}

/* Length of the home-directory prefix of path z (/home/NAME, /Users/NAME, /root), 0 when none;
 * *pUser, *pnUser: the user name within it. */
static size_t home_prefix(const char *z, const char **pUser, size_t *pnUser)
{
    static const char *const azHome[] = {"/home/", "/Users/"};
    size_t i, k;
    *pUser = NULL;
    *pnUser = 0;
    for (i = 0; i < 2; i++) {
        size_t n = strlen(azHome[i]);
        if (strncmp(z, azHome[i], n)) continue;
        for (k = n; z[k] && z[k] != '/'; k++) {
        }
        if (k == n) return 0;
        *pUser = z + n;
        *pnUser = k - n;
        return k;
    }
    if (!strncmp(z, "/root", 5) && (z[5] == '/' || !z[5])) return 5;
    return 0;
}

/* Does path z start with directory zDir (whole components)? */
static int under(const char *z, const char *zDir)
{
    size_t n = strlen(zDir);
    return !strncmp(z, zDir, n) && (z[n] == '/' || !z[n]);
}

/* Is path z kept as it is (system directories name nothing about the person or the project)? */
static int is_system(const char *z)
{
    static const char *const az[] = {"/usr", "/lib", "/lib32", "/lib64", "/opt", "/bin", "/sbin",
                                     "/etc", "/proc", "/sys", "/dev", "/var/lib", "/run"};
    size_t i;
    if (under(z, "/dev/shm")) return 0;
    for (i = 0; i < sizeof az / sizeof az[0]; i++)
        if (under(z, az[i])) return 1;
    return 0;
}

/*
 * Length of the GPU or MIG UUID at z[0..n) as nvidia-smi and CUDA_VISIBLE_DEVICES write them
 * (GPU-8f3a0c1e-..., MIG-GPU-.../1/0, MIG-...), 0 when none: the prefix and at least 8 of hex
 * digits, '-' and '/' after it.
 */
static size_t uuid_len(const char *z, size_t n)
{
    size_t k0, k;
    if (n < 4 || (strncmp(z, "GPU-", 4) && strncmp(z, "MIG-", 4))) return 0;
    k0 = (n >= 8 && !strncmp(z, "MIG-GPU-", 8)) ? 8 : 4;
    for (k = k0; k < n && z[k] && strchr("0123456789abcdefABCDEF-/", z[k]); k++) {
    }
    return k - k0 >= 8 ? k : 0;
}

/* Append text z[0..n) with the host and user names and GPU UUIDs replaced. */
static void add_names(struct redactor *r, struct buf *b, const char *z, size_t n)
{
    size_t i = 0, k;
    int u;
    while (i < n) {
        size_t nHost = r->zHost ? strlen(r->zHost) : 0;
        if ((k = uuid_len(z + i, n - i)) > 0) {
            int d = list_add(&r->azUuid, &r->nUuid, z + i, k);
            char zPh[32];
            if (d < 0) {
                b->bOom = 1;
                return;
            }
            snprintf(zPh, sizeof zPh, "<gpu-uuid-%d>", d + 1);
            buf_str(b, zPh);
            i += k;
            continue;
        }
        if (nHost && n - i >= nHost && !strncasecmp(z + i, r->zHost, nHost)) {
            buf_str(b, "<host-1>");
            i += nHost;
            continue;
        }
        for (u = 0; u < r->nUser; u++) {
            k = strlen(r->azUser[u]);
            if (n - i >= k && !memcmp(z + i, r->azUser[u], k)) break;
        }
        if (u < r->nUser) {
            buf_str(b, "<user>");
            i += strlen(r->azUser[u]);
            continue;
        }
        buf_add(b, z + i, 1);
        i++;
    }
}

/* Append the redacted form of the absolute path z[0..n). */
static void add_path(struct redactor *r, struct buf *b, const char *z, size_t n)
{
    char *zPath = strndup(z, n);
    const char *zUser, *zPkg, *zBase;
    size_t nUser, nHome;
    int d;

    if (!zPath) {
        b->bOom = 1;
        return;
    }
    if ((zPkg = strstr(zPath, "/site-packages/")) || (zPkg = strstr(zPath, "/dist-packages/"))) {
        buf_str(b, "<env>");
        add_names(r, b, zPkg, strlen(zPkg));
    } else if (r->zRoot && under(zPath, r->zRoot)) {
        size_t nRoot = strlen(r->zRoot);
        add_names(r, b, zPath + nRoot + (zPath[nRoot] == '/'), strlen(zPath + nRoot) - (zPath[nRoot] == '/'));
    } else if ((nHome = home_prefix(zPath, &zUser, &nUser)) > 0) {
        buf_str(b, "<home>");
        add_names(r, b, zPath + nHome, strlen(zPath + nHome));
    } else if (under(zPath, "/tmp") || under(zPath, "/var/tmp") || under(zPath, "/dev/shm")) {
        const char *zRest = zPath + (zPath[1] == 't' ? 4 : 8);
        buf_str(b, "<tmp>");
        add_names(r, b, zRest, strlen(zRest));
    } else if (is_system(zPath)) {
        add_names(r, b, zPath, strlen(zPath));
    } else {
        zBase = strrchr(zPath, '/');
        d = list_add(&r->azDir, &r->nDir, zPath, (size_t)(zBase - zPath));
        if (d < 0) {
            b->bOom = 1;
        } else {
            char zPh[32];
            snprintf(zPh, sizeof zPh, "<path-%d>", d + 1);
            buf_str(b, zPh);
            add_names(r, b, zBase, strlen(zBase));
        }
    }
    free(zPath);
}

/* May a path start after character c (start of text, blanks, quotes, brackets, '=', ':', ',')? */
static int path_may_follow(char c)
{
    return strchr(" \t\n\"'(=:,[{<", c) != NULL;
}

/* Does a path end at character c? */
static int path_ends(char c)
{
    return !c || strchr(" \t\n\"'),:;]}>", c) != NULL;
}

/*
 * The redacted form of z: every absolute path in it rewritten (add_path), host and user
 * names replaced elsewhere. A malloc'd string, or NULL on OOM.
 */
static char *redact_text(struct redactor *r, const char *z)
{
    struct buf b = {0};
    size_t i = 0, j, n = strlen(z);
    buf_add(&b, "", 0);
    while (i < n) {
        j = i;
        while (j < n && !(z[j] == '/' && (j == 0 || path_may_follow(z[j - 1])))) j++;
        add_names(r, &b, z + i, j - i);
        if (j >= n) break;
        for (i = j; !path_ends(z[i]); i++) {
        }
        add_path(r, &b, z + j, i - j);
    }
    if (b.bOom) {
        free(b.z);
        r->bOom = 1;
        return NULL;
    }
    return b.z;
}

/* SQL function vt_redact(X): X redacted when text, else X unchanged. */
static void sql_redact(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct redactor *r = sqlite3_user_data(ctx);
    char *z;
    (void)argc;
    if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
        sqlite3_result_value(ctx, argv[0]);
        return;
    }
    z = redact_text(r, (const char *)sqlite3_value_text(argv[0]));
    if (!z) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_text(ctx, z, -1, free);
}

/* Is zTable.zCol a column of db? */
static int has_column(sqlite3 *db, const char *zTable, const char *zCol)
{
    return sqlite3_table_column_metadata(db, NULL, zTable, zCol, NULL, NULL, NULL, NULL, NULL) == SQLITE_OK;
}

/*
 * Gather from db what is replaced: the host name, the user names of home directories
 * in any string, and (zRoot NULL) the project root: the longest common directory of the
 * absolute source paths of Python frames that are not library, system or temporary paths.
 * An SQLite code.
 */
static int gather(struct redactor *r, sqlite3 *db, const char *zRoot)
{
    sqlite3_stmt *st = NULL;
    char *zCommon = NULL;
    int rc = SQLITE_OK;

    if (has_column(db, "meta", "value")) {
        rc = sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='hostname' AND length(value)>=3", -1, &st, NULL);
        if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
            !(r->zHost = strdup((const char *)sqlite3_column_text(st, 0))))
            rc = SQLITE_NOMEM;
        sqlite3_finalize(st);
        st = NULL;
    }
    if (rc == SQLITE_OK && has_column(db, "string", "value"))
        rc = sqlite3_prepare_v2(db,
                                "SELECT value FROM string WHERE value LIKE '%/home/%' OR value LIKE '%/Users/%' "
                                "UNION ALL SELECT value FROM meta WHERE value LIKE '%/home/%' OR value LIKE '%/Users/%'",
                                -1, &st, NULL);
    while (rc == SQLITE_OK && st && sqlite3_step(st) == SQLITE_ROW) {
        const char *z = (const char *)sqlite3_column_text(st, 0), *zUser, *p;
        size_t nUser;
        for (p = z; p && (p = strchr(p, '/')); p++) {
            if (home_prefix(p, &zUser, &nUser) && nUser >= 3 && list_add(&r->azUser, &r->nUser, zUser, nUser) < 0)
                rc = SQLITE_NOMEM;
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    if (zRoot) {
        size_t n = strlen(zRoot);
        while (n > 1 && zRoot[n - 1] == '/') n--;
        if (!(r->zRoot = strndup(zRoot, n))) rc = SQLITE_NOMEM;
        return rc;
    }
    if (rc == SQLITE_OK && has_column(db, "frame", "file_id"))
        rc = sqlite3_prepare_v2(db,
                                "SELECT DISTINCT s.value FROM frame f JOIN string s ON s.id = f.file_id "
                                "WHERE f.kind = 1 /* python: C sources name their build tree */ "
                                "AND s.value LIKE '/%' AND s.value NOT LIKE '%/site-packages/%' "
                                "AND s.value NOT LIKE '%/dist-packages/%' AND s.value NOT LIKE '%/lib/python3%' "
                                "ORDER BY 1",
                                -1, &st, NULL);
    while (rc == SQLITE_OK && st && sqlite3_step(st) == SQLITE_ROW) {
        const char *z = (const char *)sqlite3_column_text(st, 0);
        size_t k = 0;
        if (is_system(z) || under(z, "/tmp") || under(z, "/var/tmp") || under(z, "/dev/shm")) continue;
        if (!zCommon) {
            const char *zSlash = strrchr(z, '/');
            if (!(zCommon = strndup(z, (size_t)(zSlash - z)))) rc = SQLITE_NOMEM;
            continue;
        }
        while (zCommon[k] && zCommon[k] == z[k]) k++;
        if (!((!zCommon[k] || zCommon[k] == '/') && z[k] == '/')) {
            while (k > 0 && zCommon[k - 1] != '/') k--; /* back to a whole directory */
            if (k > 0) k--;
        }
        zCommon[k] = 0;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_OK && zCommon && zCommon[0]) {
        r->zRoot = zCommon;
        zCommon = NULL;
    }
    free(zCommon);
    return rc;
}

/* Rewrite every string-holding table of the copy db. An SQLite code (message in *pzErr). */
static int rewrite(struct redactor *r, sqlite3 *db, char **pzErr)
{
    static const char *const azSql[] = {
        "UPDATE string SET value = vt_redact(value)",
        "UPDATE meta SET value = '<cmdline>' WHERE key = 'cmdline'",
        "UPDATE meta SET value = '<host-1>' WHERE key = 'hostname'",
        "UPDATE meta SET value = vt_redact(value) WHERE key NOT IN ('cmdline', 'hostname')",
        "UPDATE device SET uuid = '<gpu-' || id || '>' WHERE uuid IS NOT NULL",
        "UPDATE dropped SET what = vt_redact(what)",
        "UPDATE overhead SET source = vt_redact(source), kind = vt_redact(kind)",
    };
    static const char *const azTable[] = {"string", "meta", "meta", "meta", "device", "dropped", "overhead"};
    size_t i;
    int rc = sqlite3_create_function(db, "vt_redact", 1, SQLITE_UTF8, r, sql_redact, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "BEGIN", NULL, NULL, pzErr);
    for (i = 0; rc == SQLITE_OK && i < sizeof azSql / sizeof azSql[0]; i++) {
        /* a table this trace's schema version lacks is nothing to redact */
        if (sqlite3_table_column_metadata(db, NULL, azTable[i], NULL, NULL, NULL, NULL, NULL, NULL) != SQLITE_OK)
            continue;
        rc = sqlite3_exec(db, azSql[i], NULL, NULL, pzErr);
    }
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, pzErr);
    /* the old values stay in free pages until a VACUUM */
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "VACUUM", NULL, NULL, pzErr);
    return rc;
}

/*
 * Copy zIn (validated, read-only) to zTmp with VACUUM INTO, gather what to replace and
 * rewrite the copy (messages name zOut, what zTmp becomes). A VT_EXIT code; the message printed.
 */
static int redact_into(const char *zIn, const char *zTmp, const char *zOut, const char *zRoot)
{
    struct vt_tracefile f;
    struct redactor r = {0};
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    char *zErr = NULL, *zSrc = NULL;
    int rc, i, xc = VT_EXIT_OK;

    xc = vt__read_open(&f, zIn, VT_READ_NOSCAN, NULL);
    if (xc != VT_EXIT_OK) return xc;
    zSrc = strdup(f.zImported ? f.zImported : vt__import_temp_path(zIn)); /* "-" or a pipe: the file read from it */
    vt__read_close(&f);
    if (!zSrc) {
        xc = VT_EXIT_INTERNAL;
        vt__errorf("redact: out of memory");
        goto done;
    }
    rc = sqlite3_open_v2(zSrc, &db, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "VACUUM INTO ?1", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, zTmp, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_DONE) rc = SQLITE_OK;
    if (rc != SQLITE_OK) {
        char zWhy[512];
        vt__errorf("redact: cannot write %s: %s", zOut, vt__sqlite_open_error(db, rc, zTmp, zWhy, sizeof zWhy));
        xc = rc == SQLITE_CANTOPEN ? VT_EXIT_NOFILE : vt__exit_for_sqlite(rc);
        goto done;
    }
    sqlite3_finalize(st);
    st = NULL;
    sqlite3_close(db);
    db = NULL;
    if (chmod(zTmp, 0600) != 0 || (rc = sqlite3_open_v2(zTmp, &db, SQLITE_OPEN_READWRITE, NULL)) != SQLITE_OK) {
        vt__errorf("redact: cannot open %s: %s", zOut, strerror(errno));
        xc = VT_EXIT_NOFILE;
        goto done;
    }
    rc = gather(&r, db, zRoot);
    if (rc == SQLITE_OK) rc = rewrite(&r, db, &zErr);
    if (rc != SQLITE_OK) {
        vt__errorf("redact: %s: %s", zIn, r.bOom ? "out of memory" : zErr ? zErr : sqlite3_errmsg(db));
        xc = r.bOom ? VT_EXIT_INTERNAL : vt__exit_for_sqlite(rc);
    }
done:
    sqlite3_finalize(st);
    sqlite3_close(db);
    sqlite3_free(zErr);
    free(zSrc);
    free(r.zRoot);
    free(r.zHost);
    for (i = 0; i < r.nUser; i++) free(r.azUser[i]);
    for (i = 0; i < r.nDir; i++) free(r.azDir[i]);
    for (i = 0; i < r.nUuid; i++) free(r.azUuid[i]);
    free(r.azUser);
    free(r.azDir);
    free(r.azUuid);
    return xc;
}

int vt__cmd_redact(int argc, char **argv)
{
    enum { O_OUT = 1, O_ROOT };
    static const struct vt_opt aOpt[] = {{"output", 'o', 1, O_OUT}, {"root", 0, 1, O_ROOT}, {NULL, 0, 0, 0}};
    struct vt_optparse p = {0};
    const char *zOut = NULL, *zRoot = NULL;
    char *zTmp = NULL;
    struct stat stIn, stOut;
    int c, xc = VT_EXIT_OK;

    if (vt__opt_begin(&p, "redact", argc, argv, aOpt, 0) != 0) {
        xc = VT_EXIT_INTERNAL;
        goto done;
    }
    while ((c = vt__opt_next(&p)) > 0) {
        if (c == O_OUT) zOut = p.zVal;
        if (c == O_ROOT) zRoot = p.zVal;
    }
    if (c == VT_OPT_HELP) {
        fputs(zRedactUsage, stdout);
        goto done;
    }
    xc = VT_EXIT_USAGE;
    if (c == VT_OPT_ERROR) goto done;
    if (p.nArg != 1 || !zOut || !zOut[0]) {
        vt__errorf("redact: one trace and -o OUT needed (usage: vramtrace redact [--root DIR] TRACE -o OUT)");
        goto done;
    }
    if (zRoot && zRoot[0] != '/') {
        vt__errorf("redact: --root: '%s' is not an absolute path", zRoot);
        goto done;
    }
    /* standard input and pipes read into a file first, as every reader reads them */
    if ((xc = vt__import_spool(p.azArg[0])) != VT_EXIT_OK) goto done;
    /* an existing output, the trace itself above all, is never replaced (exit 3, as import) */
    xc = VT_EXIT_NOFILE;
    if (stat(p.azArg[0], &stIn) == 0 && stat(zOut, &stOut) == 0 && stIn.st_dev == stOut.st_dev &&
        stIn.st_ino == stOut.st_ino) {
        vt__errorf("redact: %s: the output is the trace itself; refusing to overwrite it", zOut);
        goto done;
    }
    if (lstat(zOut, &stOut) == 0) {
        vt__errorf("redact: %s exists; refusing to overwrite it (remove it first)", zOut);
        goto done;
    }
    if (!(zTmp = vt__strdupf("%s.partial-%ld", zOut, (long)getpid()))) {
        xc = VT_EXIT_INTERNAL;
        goto done;
    }
    vt__cleanup_add(zTmp); /* the partial copy goes if the command is killed */
    xc = redact_into(p.azArg[0], zTmp, zOut, zRoot);
    if (xc == VT_EXIT_OK && link(zTmp, zOut) != 0) {
        vt__errorf("redact: cannot create %s: %s", zOut, strerror(errno));
        xc = VT_EXIT_NOFILE;
    }
    vt__cleanup_forget(zTmp);
    unlink(zTmp);
done:
    free(zTmp);
    vt__opt_end(&p);
    return xc;
}
