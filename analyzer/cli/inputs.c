/* The inputs a command is given: directories to the traces in them, standard input and pipes read into files. */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import.h"
#include "util/text.h"

/* The traces of one directory argument: its files' paths ("DIR/NAME", malloc'd), in name order. */
struct dirlist {
    char **az;
    size_t n;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether directory entry zName names a trace: NAME.db (not a journal beside one), vramtrace-NAME.db if bRecord. */
static int is_trace_name(const char *zName, int bRecord)
{
    size_t len = strlen(zName);
    if (len < 4 || strcmp(zName + len - 3, ".db") != 0) return 0;
    return !bRecord || (len > 13 && strncmp(zName, "vramtrace-", 10) == 0);
}

/*
 * The trace files in directory zDir, into *pList (emptied first): the traces `record -o DIR/` writes
 * (vramtrace-*.db), or, where there is none, every *.db file (as `import -o DIR/` writes them);
 * regular files only, in name order. Names are read, never matched as a pattern, so a directory
 * named with glob characters ('run[1]', 'a*') is itself. Returns VT_EXIT_OK (none found:
 * pList->n 0), VT_EXIT_NOFILE after one line (not readable) or VT_EXIT_INTERNAL (out of memory, not said).
 */
static int dir_traces(const char *zDir, struct dirlist *pList)
{
    DIR *pDir;
    struct dirent *e;
    int rc = VT_EXIT_OK, nDir = (int)strlen(zDir);
    while (nDir > 1 && zDir[nDir - 1] == '/') nDir--; /* "DIR/" names its files DIR/NAME */
    memset(pList, 0, sizeof *pList);
    for (int bRecord = 1; rc == VT_EXIT_OK && pList->n == 0 && bRecord >= 0; bRecord--) {
        if (!(pDir = opendir(zDir))) {
            vt__errorf("%s: cannot read the directory: %s", zDir, strerror(errno));
            return VT_EXIT_NOFILE;
        }
        while (rc == VT_EXIT_OK && (e = readdir(pDir)) != NULL) {
            struct stat st;
            char **az, *zPath;
            if (!is_trace_name(e->d_name, bRecord)) continue;
            if (!(zPath = vt__strdupf("%.*s/%s", nDir, zDir, e->d_name))) {
                rc = VT_EXIT_INTERNAL;
                break;
            }
            if (lstat(zPath, &st) != 0 || !S_ISREG(st.st_mode)) {
                free(zPath);
                continue;
            }
            if (!(az = realloc(pList->az, sizeof *az * (pList->n + 1)))) {
                free(zPath);
                rc = VT_EXIT_INTERNAL;
                break;
            }
            pList->az = az;
            az[pList->n++] = zPath;
        }
        closedir(pDir);
    }
    if (pList->n > 1) qsort(pList->az, pList->n, sizeof *pList->az, cmp_str);
    return rc;
}

static void dirlist_free(struct dirlist *pList)
{
    for (size_t j = 0; j < pList->n; j++) free(pList->az[j]);
    free(pList->az);
    memset(pList, 0, sizeof *pList);
}

int vt__inputs(const char *zCmd, char ***pazArg, int *pnArg, int nTail)
{
    char **azIn = *pazArg, **azOut = NULL;
    const int nIn = *pnArg;
    size_t nOut = 0, nBytes = 0;
    struct dirlist *aDir = calloc((size_t)nIn + 1, sizeof *aDir);
    int rc = aDir ? VT_EXIT_OK : VT_EXIT_INTERNAL, bOom = !aDir, i;
    /* directories to their traces, in name order; the rest as given, standard input and pipes read into
     * files first */
    for (i = 0; rc == VT_EXIT_OK && i < nIn; i++) {
        struct stat st;
        if (i >= nIn - nTail) { /* not an input (the SQL of `sql`) */
            nOut++;
            continue;
        }
        if (!strcmp(azIn[i], "-") || stat(azIn[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            rc = vt__import_spool(azIn[i]);
            nOut++;
            continue;
        }
        rc = dir_traces(azIn[i], &aDir[i]);
        bOom = rc == VT_EXIT_INTERNAL;
        if (rc == VT_EXIT_OK && aDir[i].n == 0) {
            vt__errorf("%s: a directory without traces (no *.db file, such as the vramtrace-HOST-PID.db that "
                       "'vramtrace record -o DIR/' writes): name the files to read", azIn[i]);
            if (nIn - nTail == 1) rc = VT_EXIT_NOFILE;
            else { /* one input of several not read, as a missing file; named above, not again by its reader */
                vt__input_said(azIn[i]);
                nOut++;
            }
            continue;
        }
        for (size_t j = 0; j < aDir[i].n; j++) nBytes += strlen(aDir[i].az[j]) + 1;
        nOut += aDir[i].n;
    }
    if (rc == VT_EXIT_OK && !(azOut = malloc((nOut + 1) * sizeof *azOut + nBytes))) { /* the list, then its names */
        rc = VT_EXIT_INTERNAL;
        bOom = 1;
    }
    if (bOom) vt__errorf("%s: out of memory", zCmd);
    if (rc == VT_EXIT_OK) {
        char *z = (char *)(azOut + nOut + 1);
        nOut = 0;
        for (i = 0; i < nIn; i++) {
            if (!aDir[i].n) { /* not a directory, or one without traces */
                azOut[nOut++] = azIn[i];
                continue;
            }
            for (size_t j = 0; j < aDir[i].n; j++) {
                azOut[nOut++] = strcpy(z, aDir[i].az[j]);
                z += strlen(z) + 1;
            }
        }
        azOut[nOut] = NULL;
        free(azIn); /* the caller frees the new list as it would have freed the one given */
        *pazArg = azOut;
        *pnArg = (int)nOut;
    }
    for (i = 0; aDir && i < nIn; i++) dirlist_free(&aDir[i]);
    free(aDir);
    return rc;
}

int vt__output_not_input(const char *zCmd, const char *zOut, char *const *azPath, int n)
{
    struct stat stOut, stIn;
    int bOut;
    if (!zOut || !strcmp(zOut, "-")) return VT_EXIT_OK;
    bOut = stat(zOut, &stOut) == 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(zOut, azPath[i]) != 0 && !(bOut && stat(azPath[i], &stIn) == 0 && stIn.st_dev == stOut.st_dev &&
                                               stIn.st_ino == stOut.st_ino))
            continue;
        vt__errorf("%s: the output %s is the trace %s: writing it would replace the trace; choose another file", zCmd,
                   zOut, azPath[i]);
        return VT_EXIT_USAGE;
    }
    return VT_EXIT_OK;
}
