/* The environment of a recorded job: where the tracer and libcupti are, the output pattern, PyTorch allocator settings. */
#include "record.h"

#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "util/dirs.h"
#include "vramtrace/outname.h"

#ifndef VT_INSTALL_LIBDIR
#define VT_INSTALL_LIBDIR "lib"
#endif
#ifndef VT_CUPTI_SONAME
#define VT_CUPTI_SONAME "libcupti.so.13"
#endif

/* If zPath names a regular file (following links), write its canonical path to zOut: 1, else 0. */
static int take_file(const char *zPath, char *zOut, size_t nOut)
{
    struct stat st;
    char zReal[PATH_MAX];
    if (stat(zPath, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    if (!realpath(zPath, zReal)) return 0;
    if ((size_t)snprintf(zOut, nOut, "%s", zReal) >= nOut) return 0;
    return 1;
}

int vt__record_self_exe(char *zOut, size_t nOut)
{
    ssize_t n;
    if (nOut == 0) return -1;
    n = readlink("/proc/self/exe", zOut, nOut - 1);
    if (n <= 0 || (size_t)n >= nOut - 1) {
        zOut[0] = 0;
        return -1;
    }
    zOut[n] = 0;
    return 0;
}

int vt__record_find_lib(const char *zExe, char *zOut, size_t nOut, char *zWhy, size_t nWhy)
{
    /* the build tree (build/analyzer/vramtrace, build/libvramtrace.so), then an installed tree
     * (bin/vramtrace, lib/vramtrace/libvramtrace.so), then older installed layouts */
    static const char *const azRel[] = {"../tracer", "..", ("../" VT_INSTALL_LIBDIR "/vramtrace"), "../lib/vramtrace",
                                        ("../" VT_INSTALL_LIBDIR), "../lib", "../lib64"};
    const char *zEnv = getenv("VRAMTRACE_LIB");
    char zDir[PATH_MAX], zTry[PATH_MAX + 64];
    const char *zSlash;
    glob_t g;
    size_t i;
    int found = 0;

    if (zEnv && *zEnv) {
        if (take_file(zEnv, zOut, nOut)) return 0;
        snprintf(zWhy, nWhy, "VRAMTRACE_LIB=%s does not name a file", zEnv);
        return -1;
    }
    zSlash = zExe ? strrchr(zExe, '/') : NULL;
    if (!zSlash) {
        snprintf(zWhy, nWhy, "cannot tell where the vramtrace command is installed; set VRAMTRACE_LIB");
        return -1;
    }
    snprintf(zDir, sizeof zDir, "%.*s", (int)(zSlash - zExe), zExe);
    for (i = 0; i < sizeof azRel / sizeof azRel[0] && !found; i++) {
        snprintf(zTry, sizeof zTry, "%s/%s/libvramtrace.so", zDir, azRel[i]);
        found = take_file(zTry, zOut, nOut);
    }
    if (!found) {
        snprintf(zTry, sizeof zTry, "%s/../lib*/vramtrace/libvramtrace.so", zDir);
        if (glob(zTry, 0, NULL, &g) == 0) {
            for (i = 0; i < g.gl_pathc && !found; i++) found = take_file(g.gl_pathv[i], zOut, nOut);
            globfree(&g);
        }
    }
    if (!found) {
        snprintf(zTry, sizeof zTry, "%s/libvramtrace.so", zDir);
        found = take_file(zTry, zOut, nOut);
    }
    if (found) return 0;
    snprintf(zWhy, nWhy,
             "libvramtrace.so not found in %s/../tracer, %s/.., %s/../lib*/vramtrace, %s/../lib* or %s; set "
             "VRAMTRACE_LIB to its path",
             zDir, zDir, zDir, zDir, zDir);
    return -1;
}

int vt__record_find_pyhook(const char *zExe, char *zOut, size_t nOut, char *zWhy, size_t nWhy)
{
    static const char *const azRel[] = {"pyhook", ("../" VT_INSTALL_DATADIR "/vramtrace/pyhook"),
                                        "../share/vramtrace/pyhook"};
    const char *zSlash = zExe ? strrchr(zExe, '/') : NULL;
    char zTry[PATH_MAX + 96], zFile[PATH_MAX];
    if (!zSlash) {
        snprintf(zWhy, nWhy, "cannot tell where the vramtrace command is installed");
        return -1;
    }
    for (size_t i = 0; i < sizeof azRel / sizeof azRel[0]; i++) {
        snprintf(zTry, sizeof zTry, "%.*s/%s/sitecustomize.py", (int)(zSlash - zExe), zExe, azRel[i]);
        if (take_file(zTry, zFile, sizeof zFile)) {
            char *zEnd = strrchr(zFile, '/');
            snprintf(zOut, nOut, "%.*s", (int)(zEnd - zFile), zFile);
            return 0;
        }
    }
    snprintf(zWhy, nWhy, "the PyTorch history hook (sitecustomize.py) is not in %.*s/pyhook or %.*s/../share/vramtrace/pyhook",
             (int)(zSlash - zExe), zExe, (int)(zSlash - zExe), zExe);
    return -1;
}

/*
 * The directory of the absolute pattern zPattern as the job's processes on this host will name it
 * (%h is this host's name) into zDir: 1, or 0 when it is each process's own (%p, %r) or cannot be
 * said (no directory part, too long).
 */
static int host_dir(const char *zPattern, char *zDir, size_t nDir)
{
    char zHost[256] = "", zDirPat[PATH_MAX];
    const char *azVal[3] = {"\x01", "\x01", zHost}; /* a byte no path holds: marks %p and %r */
    const char *zSlash = strrchr(zPattern, '/');
    if (!zSlash || (size_t)(zSlash - zPattern) >= sizeof zDirPat) return 0;
    if (gethostname(zHost, sizeof zHost - 1) != 0) zHost[0] = 0;
    snprintf(zDirPat, sizeof zDirPat, "%.*s", (int)(zSlash == zPattern ? 1 : zSlash - zPattern), zPattern);
    return vt__outname_expand(zDirPat, azVal, 0, zDir, nDir) == 0 && !strchr(zDir, '\x01');
}

void vt__record_side_dir(const char *zPattern, char *zOut, size_t nOut)
{
    if (!host_dir(zPattern, zOut, nOut) && !getcwd(zOut, nOut)) snprintf(zOut, nOut, ".");
}

/* Ask the dynamic loader which file the libcupti soname resolves to: 1 and zOut set, or 0. */
static int cupti_from_loader(char *zOut, size_t nOut)
{
    struct link_map *pMap = NULL;
    int found = 0;
    void *pLib = dlopen(VT_CUPTI_SONAME, RTLD_LAZY | RTLD_LOCAL);
    if (!pLib) return 0;
    if (dlinfo(pLib, RTLD_DI_LINKMAP, &pMap) == 0 && pMap && pMap->l_name)
        found = take_file(pMap->l_name, zOut, nOut);
    dlclose(pLib);
    return found;
}

/*
 * Resolve a command name the way execvp does (names with a '/' as they are,
 * others through PATH) into zOut, without resolving symbolic links: a Python
 * virtual environment's bin/python is a link, and its environment is where
 * the link is. Returns 1 if found, 0 if not.
 */
static int which(const char *zCmd, char *zOut, size_t nOut)
{
    const char *zPath = getenv("PATH"), *p, *zEnd;
    if (!zCmd || !*zCmd) return 0;
    if (strchr(zCmd, '/')) return (size_t)snprintf(zOut, nOut, "%s", zCmd) < nOut && access(zOut, X_OK) == 0;
    for (p = zPath && *zPath ? zPath : "/usr/local/bin:/usr/bin:/bin"; *p; p = *zEnd ? zEnd + 1 : zEnd) {
        zEnd = strchr(p, ':');
        if (!zEnd) zEnd = p + strlen(p);
        if (zEnd == p) {
            if ((size_t)snprintf(zOut, nOut, "./%s", zCmd) >= nOut) continue; /* empty entry: . */
        } else if ((size_t)snprintf(zOut, nOut, "%.*s/%s", (int)(zEnd - p), p, zCmd) >= nOut) {
            continue;
        }
        if (access(zOut, X_OK) == 0) return 1;
    }
    return 0;
}

/* First libcupti of a CUDA wheel (nvidia/cu13 or nvidia/cuda_cupti) under the Python prefix zPrefix. */
static int cupti_in_prefix(const char *zPrefix, char *zOut, size_t nOut)
{
    static const char *const azSub[] = {"site-packages/nvidia/cu*/lib/", "dist-packages/nvidia/cu*/lib/",
                                        "site-packages/nvidia/cuda_cupti/lib/",
                                        "dist-packages/nvidia/cuda_cupti/lib/"};
    char zGlob[PATH_MAX + 128];
    glob_t g;
    size_t i, j;
    int found = 0;
    for (i = 0; i < sizeof azSub / sizeof azSub[0] && !found; i++) {
        snprintf(zGlob, sizeof zGlob, "%s/lib/python3*/%s%s", zPrefix, azSub[i], VT_CUPTI_SONAME);
        if (glob(zGlob, 0, NULL, &g) != 0) continue;
        for (j = g.gl_pathc; j > 0 && !found; j--) found = take_file(g.gl_pathv[j - 1], zOut, nOut);
        globfree(&g);
    }
    return found;
}

/*
 * The libcupti a Python job's CUDA wheels bring (PyTorch loads that copy when
 * imported, before CUDA starts the tracer): looked for in the environment the
 * command runs from (<prefix>/bin/CMD; for /usr/bin also /usr/local and
 * ~/.local, where pip installs for the system Python), $VIRTUAL_ENV and
 * $CONDA_PREFIX.
 * Returns 1 and zOut set, or 0.
 */
static int cupti_from_python_env(const char *zCmd, char *zOut, size_t nOut)
{
    const char *azEnv[] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX")};
    char zExe[PATH_MAX], *zSlash;
    size_t i;
    if (which(zCmd, zExe, sizeof zExe) && (zSlash = strrchr(zExe, '/')) != NULL) {
        *zSlash = 0; /* .../bin */
        zSlash = strrchr(zExe, '/');
        if (zSlash && !strcmp(zSlash, "/bin")) {
            *zSlash = 0; /* the prefix */
            if (cupti_in_prefix(zExe[0] ? zExe : "/", zOut, nOut)) return 1;
            if (!strcmp(zExe, "/usr")) {
                /* the system Python: pip puts packages under /usr/local or ~/.local */
                const char *zHome = getenv("HOME");
                char zUser[PATH_MAX];
                if (cupti_in_prefix("/usr/local", zOut, nOut)) return 1;
                if (zHome && *zHome && (size_t)snprintf(zUser, sizeof zUser, "%s/.local", zHome) < sizeof zUser &&
                    cupti_in_prefix(zUser, zOut, nOut))
                    return 1;
            }
        }
    }
    for (i = 0; i < sizeof azEnv / sizeof azEnv[0]; i++)
        if (azEnv[i] && *azEnv[i] && cupti_in_prefix(azEnv[i], zOut, nOut)) return 1;
    return 0;
}

int vt__record_find_cupti(const char *zCmd, char *zOut, size_t nOut, char *zWhy, size_t nWhy)
{
    static const char *const azDir[] = {
#ifdef VT_CUPTI_DIR
        VT_CUPTI_DIR,
#endif
#ifdef VT_TOOLKIT_LIBDIR
        VT_TOOLKIT_LIBDIR,
#endif
        ""};
    const char *zEnv = getenv("VRAMTRACE_CUPTI");
    char zTry[PATH_MAX + 64];
    size_t i;

    if (zEnv && *zEnv) {
        if (take_file(zEnv, zOut, nOut)) return 0;
        snprintf(zWhy, nWhy, "VRAMTRACE_CUPTI=%s does not name a file", zEnv);
        return -1;
    }
    if (cupti_from_python_env(zCmd, zOut, nOut)) return 0;
    for (i = 0; i < sizeof azDir / sizeof azDir[0]; i++) {
        if (!azDir[i][0]) continue;
        snprintf(zTry, sizeof zTry, "%s/%s", azDir[i], VT_CUPTI_SONAME);
        if (take_file(zTry, zOut, nOut)) return 0;
    }
    if (cupti_from_loader(zOut, nOut)) return 0;
    snprintf(zWhy, nWhy,
             "%s not found in the job's Python environment, the CUDA toolkit or the loader's "
             "search path; set VRAMTRACE_CUPTI to its path",
             VT_CUPTI_SONAME);
    return -1;
}

int vt__record_output(const char *zOpt, const char *zEnv, char *zOut, size_t nOut, char *zWhy,
                      size_t nWhy)
{
    const char *zVal = zOpt ? zOpt : (zEnv && *zEnv) ? zEnv : VT_RECORD_DEFAULT_NAME;
    char zPat[PATH_MAX], zCwd[PATH_MAX], zHost[256] = "";
    size_t n = strlen(zVal);
    struct stat st;
    const char *p, *zSlash;
    int bDir;

    if (n == 0) {
        snprintf(zWhy, nWhy, "the output path is empty");
        return VT_EXIT_USAGE;
    }
    if ((p = vt__outname_bad_escape(zVal)) != NULL) {
        if (p[1])
            snprintf(zWhy, nWhy, "output '%s': unknown escape '%%%c' (use %%p pid, %%r rank, %%h host, %%%% percent)",
                     zVal, p[1]);
        else
            snprintf(zWhy, nWhy, "output '%s' ends in a lone '%%' (write %%%% for a percent sign)", zVal);
        return VT_EXIT_USAGE;
    }
    bDir = zVal[n - 1] == '/' || (stat(zVal, &st) == 0 && S_ISDIR(st.st_mode));
    if ((size_t)snprintf(zPat, sizeof zPat, "%s%s%s", zVal, bDir && zVal[n - 1] != '/' ? "/" : "",
                         bDir ? VT_RECORD_DEFAULT_NAME : "") >= sizeof zPat) {
        snprintf(zWhy, nWhy, "output path too long");
        return VT_EXIT_USAGE;
    }
    if (zPat[0] == '/') {
        if ((size_t)snprintf(zOut, nOut, "%s", zPat) >= nOut) goto too_long;
    } else {
        if (!getcwd(zCwd, sizeof zCwd)) {
            snprintf(zWhy, nWhy, "cannot read the current directory: %s", strerror(errno));
            return VT_EXIT_NOFILE;
        }
        if ((size_t)snprintf(zOut, nOut, "%s/%s", zCwd, zPat[0] == '.' && zPat[1] == '/' ? zPat + 2 : zPat) >= nOut)
            goto too_long;
    }
    if (gethostname(zHost, sizeof zHost - 1) != 0) zHost[0] = 0;
    { /* SQLite opens no file at a longer path: the tracer could write no trace there (said only inside the job) */
        char zPid[24], zName[2 * PATH_MAX];
        const char *azVal[3] = {zPid, "0", zHost};
        snprintf(zPid, sizeof zPid, "%ld", (long)getpid());
        if (vt__outname_expand(zOut, azVal, 0, zName, sizeof zName) == 0 &&
            strlen(zName) > (size_t)vt__sqlite_path_max()) {
            snprintf(zWhy, nWhy, "output %s: a trace's path would be %zu bytes long, and SQLite opens no file at a path "
                     "over about %d bytes: use a shorter -o", zVal, strlen(zName), vt__sqlite_path_max());
            return VT_EXIT_NOFILE;
        }
    }
    if (!strchr(zOut, '%') && lstat(zOut, &st) == 0) {
        /* one fixed name, taken: the tracer replaces only a trace (it would refuse inside the job, which
         * then runs untraced) */
        int bTrace = S_ISREG(st.st_mode) && (st.st_size == 0 || vt__outname_is_trace(zOut) == 1);
        if (!bTrace) {
            snprintf(zWhy, nWhy, "output %s %s: choose another -o", zOut,
                     S_ISLNK(st.st_mode)   ? "is a symbolic link, which the tracer does not write through"
                     : S_ISREG(st.st_mode) ? "exists and is not a vramtrace trace, which the tracer would not replace"
                                           : "exists and is not a regular file");
            return VT_EXIT_NOFILE;
        }
    }
    /* The directory part must exist now (created first when the value ends in '/'), unless it names
     * each process's own (%p, %r); %h is this host's name, as the job's processes here will expand it. */
    zSlash = strrchr(zOut, '/');
    if (zSlash && zSlash != zOut) {
        char zDir[PATH_MAX];
        if (host_dir(zOut, zDir, sizeof zDir)) {
            if (bDir && zVal[n - 1] == '/' && vt__make_dirs(zDir) != 0) {
                snprintf(zWhy, nWhy, "cannot create output directory %s: %s", zDir, strerror(errno));
                return VT_EXIT_NOFILE;
            }
            if (stat(zDir, &st) != 0 || !S_ISDIR(st.st_mode)) {
                snprintf(zWhy, nWhy, "output directory %s does not exist", zDir);
                return VT_EXIT_NOFILE;
            }
            if (access(zDir, W_OK | X_OK) != 0) {
                snprintf(zWhy, nWhy, "output directory %s is not writable", zDir);
                return VT_EXIT_NOFILE;
            }
            /* a directory that takes no new file though its mode says it does (/proc, /sys, a read-only
             * mount seen by root): the job would run for nothing, its traces failing one by one */
            char zProbe[PATH_MAX + 32];
            int fd;
            snprintf(zProbe, sizeof zProbe, "%s/.vramtrace-probe-XXXXXX", zDir);
            if ((fd = mkstemp(zProbe)) < 0) {
                snprintf(zWhy, nWhy, "output directory %s takes no new file: %s", zDir, strerror(errno));
                return VT_EXIT_NOFILE;
            }
            close(fd);
            unlink(zProbe);
        }
    }
    return 0;
too_long:
    snprintf(zWhy, nWhy, "output path too long");
    return VT_EXIT_USAGE;
}

/* Append z[0..n) to the buffer zOut (size nOut, current length *pLen). Returns 0 or -1 if full. */
static int append(char *zOut, size_t nOut, size_t *pLen, const char *z, size_t n)
{
    if (*pLen + n + 1 > nOut) return -1;
    memcpy(zOut + *pLen, z, n);
    *pLen += n;
    zOut[*pLen] = 0;
    return 0;
}

/* 1 if the option value z[0..n) turns a flag on (PyTorch accepts True/true/1). */
static int value_is_true(const char *z, size_t n)
{
    return (n == 4 && (!strncmp(z, "True", 4) || !strncmp(z, "true", 4))) || (n == 1 && z[0] == '1');
}

int vt__alloc_conf_merge(const char *zUser, char *zOut, size_t nOut, int *pbDropped)
{
    static const char zBackend[] = "backend:cudaMallocAsync";
    const char *p = zUser ? zUser : "";
    size_t len = 0;
    int bHaveBackend = 0, bFirst = 1, rc = 0;

    *pbDropped = 0;
    if (nOut == 0) return -1;
    zOut[0] = 0;
    while (*p && rc == 0) {
        const char *zStart = p, *zEnd, *zColon;
        int depth = 0;
        size_t nKey;
        while (*p && (depth > 0 || *p != ',')) {
            if (*p == '[') depth++;
            else if (*p == ']' && depth > 0) depth--;
            p++;
        }
        zEnd = p;
        if (*p == ',') p++;
        while (zStart < zEnd && (*zStart == ' ' || *zStart == '\t')) zStart++;
        while (zEnd > zStart && (zEnd[-1] == ' ' || zEnd[-1] == '\t')) zEnd--;
        if (zStart == zEnd) continue;
        zColon = memchr(zStart, ':', (size_t)(zEnd - zStart));
        nKey = (size_t)((zColon ? zColon : zEnd) - zStart);
        while (nKey > 0 && (zStart[nKey - 1] == ' ' || zStart[nKey - 1] == '\t')) nKey--;
        if (nKey == 19 && !strncmp(zStart, "expandable_segments", 19)) {
            const char *zVal = zColon ? zColon + 1 : zEnd;
            while (zVal < zEnd && *zVal == ' ') zVal++;
            if (value_is_true(zVal, (size_t)(zEnd - zVal))) *pbDropped = 1;
            continue;
        }
        if (nKey == 7 && !strncmp(zStart, "backend", 7)) {
            if (bHaveBackend) continue; /* a repeated backend entry: keep only ours */
            bHaveBackend = 1;
            zStart = zBackend;
            zEnd = zBackend + sizeof zBackend - 1;
        }
        if (!bFirst) rc = append(zOut, nOut, &len, ",", 1);
        if (rc == 0) rc = append(zOut, nOut, &len, zStart, (size_t)(zEnd - zStart));
        bFirst = 0;
    }
    if (rc == 0 && !bHaveBackend) {
        /* No backend given: ours goes first, the user's options follow. */
        size_t nRest = len;
        if (len + sizeof zBackend + 1 > nOut) return -1;
        memmove(zOut + sizeof zBackend - 1 + (nRest ? 1 : 0), zOut, nRest + 1);
        memcpy(zOut, zBackend, sizeof zBackend - 1);
        if (nRest) zOut[sizeof zBackend - 1] = ',';
    }
    return rc;
}
