/* Call sites: a recorded stack as the line a person should look at, deduplicated into a table. */
#include "read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

/* Does path z contain part (written with '/') with either separator ('\\' on Windows)? */
static int has_part(const char *z, const char *zPart)
{
    size_t n = strlen(zPart);
    for (; *z; z++) {
        size_t i = 0;
        while (i < n && z[i] && (z[i] == zPart[i] || (zPart[i] == '/' && z[i] == '\\'))) i++;
        if (i == n) return 1;
    }
    return 0;
}

/* Is a Python file path library code (torch, site-packages, the interpreter), '/' or '\\' separated? */
static int is_library_file(const char *z)
{
    return has_part(z, "site-packages/") || has_part(z, "dist-packages/") || has_part(z, "/torch/") ||
           (!strncmp(z, "torch", 5) && (z[5] == '/' || z[5] == '\\')) || strstr(z, "<frozen") ||
           has_part(z, "/lib/python3") || strstr(z, "\\Lib\\");
}

/* Is a native module a runtime library (PyTorch, Python, C/C++ runtime) rather than the program? */
static int is_library_module(const char *z)
{
    static const char *az[] = {"libc10", "libtorch", "libpython", "libc.so", "libstdc++", "libnccl",
                               "libcublas", "libcudnn", "ld-linux"};
    if (!z) return 0;
    for (size_t i = 0; i < sizeof az / sizeof az[0]; i++)
        if (strstr(z, az[i])) return 1;
    return 0;
}

/*
 * Describe a stack (*pbNccl set when a native frame is in NCCL): the top Python frame outside library code as "file:line in
 * function", else the top Python frame, else the top native frame. Returns a
 * malloc'd string, or NULL on OOM / SQLite error (*pRc set).
 */
static char *describe_stack(sqlite3 *db, int64_t stackId, int *pRc, int *pbNccl)
{
    /* the module's recorded build id (traces before schema version 3 have no module table) */
#define SITE_FRAME_SQL(zBuildId)                                                                                       \
    "SELECT f.kind, fn.value, fi.value, f.line, mo.value, f.pc, " zBuildId " FROM frame f"                             \
    " LEFT JOIN string fn ON fn.id = f.function_id LEFT JOIN string fi ON fi.id = f.file_id"                           \
    " LEFT JOIN string mo ON mo.id = f.module_id WHERE f.stack_id = ? ORDER BY f.idx"
    sqlite3_stmt *pStmt = NULL;
    char *zPy = NULL, *zPyAny = NULL, *zNative = NULL, *zRet = NULL;
    int bNativeLib = 0;
    int rc = sqlite3_prepare_v2(db, SITE_FRAME_SQL("(SELECT build_id FROM module WHERE path_id = f.module_id)"), -1,
                                &pStmt, NULL);
    if (rc != SQLITE_OK) rc = sqlite3_prepare_v2(db, SITE_FRAME_SQL("NULL"), -1, &pStmt, NULL);
    if (rc != SQLITE_OK) goto done;
    sqlite3_bind_int64(pStmt, 1, stackId);
    while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        int kind = sqlite3_column_int(pStmt, 0);
        const char *zFn = (const char *)sqlite3_column_text(pStmt, 1);
        const char *zFile = (const char *)sqlite3_column_text(pStmt, 2);
        int line = sqlite3_column_int(pStmt, 3);
        const char *zMod = (const char *)sqlite3_column_text(pStmt, 4);
        if (kind != 1 && zMod && strstr(zMod, "libnccl")) *pbNccl = 1;
        if (kind == 1 /* VT_FRAME_PYTHON */) {
            char *z = vt__strdupf("%s:%d in %s", zFile ? zFile : "?", line, zFn ? zFn : "?");
            if (!z) { rc = SQLITE_NOMEM; goto done; }
            if (!zPy && zFile && !is_library_file(zFile)) zPy = z;
            else if (!zPyAny) zPyAny = z;
            else free(z);
        } else if (!zNative || (bNativeLib && !is_library_module(zMod))) {
            const char *zBase = zMod ? strrchr(zMod, '/') : NULL;
            struct vt_symbol sy;
            int sr = VT_SYM_UNKNOWN;
            free(zNative);
            bNativeLib = is_library_module(zMod);
            zBase = zBase ? zBase + 1 : zMod;
            /* not resolved when recorded: symbolized now from the module file, unless it changed since */
            if (!(zFn && zFile && line > 0) && sqlite3_column_type(pStmt, 5) != SQLITE_NULL)
                sr = vt__sym_resolve(zMod, (const char *)sqlite3_column_text(pStmt, 6),
                                     (uint64_t)sqlite3_column_int64(pStmt, 5), &sy);
            if (sr < 0) { rc = SQLITE_NOMEM; goto done; }
            if (sr == VT_SYM_OK && sy.zFile && sy.line > 0)
                zNative = vt__strdupf("%s:%d in %s", sy.zFile, sy.line, sy.zFunction ? sy.zFunction : zFn ? zFn : "?");
            else if (sr == VT_SYM_OK && !zFn)
                zNative = vt__strdupf("%s (%s)", sy.zFunction, zBase ? zBase : "?");
            else if (sr == VT_SYM_MISMATCH)
                zNative = vt__strdupf("%s%s0x%llx (%s: not the recorded build, not symbolized)", zFn ? zFn : "",
                                      zFn ? " " : "", (unsigned long long)sqlite3_column_int64(pStmt, 5),
                                      zBase ? zBase : "?");
            else if (zFn && zFile && line > 0)
                zNative = vt__strdupf("%s:%d in %s", zFile, line, zFn);
            else if (zFn)
                zNative = vt__strdupf("%s (%s)", zFn, zBase ? zBase : "?");
            else
                zNative = vt__strdupf("0x%llx (%s)", (unsigned long long)sqlite3_column_int64(pStmt, 5),
                                      zBase ? zBase : "?");
            if (!zNative) { rc = SQLITE_NOMEM; goto done; }
        }
    }
    if (rc != SQLITE_DONE) goto done;
    rc = SQLITE_OK;
    if (zPy) { zRet = zPy; zPy = NULL; }
    else if (zPyAny) { zRet = zPyAny; zPyAny = NULL; }
    else if (zNative) { zRet = zNative; zNative = NULL; }
    else zRet = vt__strdupf("stack %lld (no frames recorded)", (long long)stackId);
    if (!zRet) rc = SQLITE_NOMEM;
done:
    free(zPy);
    free(zPyAny);
    free(zNative);
    sqlite3_finalize(pStmt);
    *pRc = rc;
    return zRet;
}

char *vt__stack_describe(sqlite3 *db, int64_t stackId, int *pRc)
{
    int bNccl = 0;
    return describe_stack(db, stackId, pRc, &bNccl);
}

int vt__site_get(struct vt_sites *ss, sqlite3 *db, int64_t stackId, int64_t bytes)
{
    int64_t key = stackId >= 0 ? stackId : -bytes - 1;
    int i, rc = SQLITE_OK;
    uint64_t h;
    struct vt_site *s;

    if (ss->nHash == 0 || ss->n * 2 >= ss->nHash) {
        int nNew = ss->nHash ? ss->nHash * 2 : 256;
        int *aNew = malloc(sizeof(int) * (size_t)nNew);
        if (!aNew) return -1;
        for (i = 0; i < nNew; i++) aNew[i] = -1;
        for (i = 0; i < ss->n; i++) {
            h = (uint64_t)ss->a[i].key * 0x9E3779B97F4A7C15ull;
            int j = (int)(h >> 40) & (nNew - 1);
            while (aNew[j] >= 0) j = (j + 1) & (nNew - 1);
            aNew[j] = i;
        }
        free(ss->aHash);
        ss->aHash = aNew;
        ss->nHash = nNew;
    }
    h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    i = (int)(h >> 40) & (ss->nHash - 1);
    while (ss->aHash[i] >= 0) {
        if (ss->a[ss->aHash[i]].key == key) return ss->aHash[i];
        i = (i + 1) & (ss->nHash - 1);
    }
    if (ss->n == ss->nAlloc) {
        int nNew = ss->nAlloc ? ss->nAlloc * 2 : 64;
        struct vt_site *aNew = realloc(ss->a, sizeof *aNew * (size_t)nNew);
        if (!aNew) return -1;
        ss->a = aNew;
        ss->nAlloc = nNew;
    }
    s = &ss->a[ss->n];
    memset(s, 0, sizeof *s);
    s->key = key;
    s->stackId = stackId;
    if (stackId >= 0) {
        s->zSite = describe_stack(db, stackId, &rc, &s->bNccl);
        if (rc != SQLITE_OK) {
            ss->rcErr = rc; /* the caller tells damage (no frame table) from memory */
            snprintf(ss->zErr, sizeof ss->zErr, "%s", sqlite3_errmsg(db));
            return -1;
        }
    } else {
        char zB[32];
        vt__fmt_bytes(bytes, zB, sizeof zB);
        s->zSite = vt__strdupf("site not recorded (allocations of %s)", zB);
        if (!s->zSite) return -1;
    }
    ss->aHash[i] = ss->n;
    return ss->n++;
}

void vt__sites_free(struct vt_sites *s)
{
    for (int i = 0; i < s->n; i++) free(s->a[i].zSite);
    free(s->a);
    free(s->aHash);
    memset(s, 0, sizeof *s);
}
