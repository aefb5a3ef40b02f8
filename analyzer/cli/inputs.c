/* The inputs a command is given: directories to the traces in them, standard input and pipes read into files. */
#include "cli.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import.h"

/* Whether glob result zPath is a trace file to read: a regular file, not a journal beside one. */
static int is_trace_file(const char *zPath)
{
    struct stat st;
    return lstat(zPath, &st) == 0 && S_ISREG(st.st_mode);
}

int vt__inputs(const char *zCmd, char ***pazArg, int *pnArg, int nTail)
{
    char **azIn = *pazArg, **azOut = NULL;
    const int nIn = *pnArg;
    size_t nOut = 0, nBytes = 0;
    glob_t *aGlob = calloc((size_t)nIn + 1, sizeof *aGlob);
    int rc = VT_EXIT_OK, i;
    /* directories: the traces `record -o DIR` writes there (vramtrace-HOST-PID.db), in name order; the rest
     * as given, standard input and pipes read into files first */
    for (i = 0; aGlob && rc == VT_EXIT_OK && i < nIn; i++) {
        struct stat st;
        size_t nFound = 0;
        char *zPat;
        int g;
        if (i >= nIn - nTail) { /* not an input (the SQL of `sql`) */
            nOut++;
            continue;
        }
        if (!strcmp(azIn[i], "-") || stat(azIn[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            rc = vt__import_spool(azIn[i]);
            nOut++;
            continue;
        }
        if (!(zPat = malloc(strlen(azIn[i]) + 32))) break;
        sprintf(zPat, "%s/vramtrace-*.db", azIn[i]);
        g = glob(zPat, 0, NULL, &aGlob[i]);
        free(zPat);
        if (g == GLOB_NOSPACE) break;
        for (size_t j = 0; g == 0 && j < aGlob[i].gl_pathc; j++)
            if (is_trace_file(aGlob[i].gl_pathv[j])) nFound++, nBytes += strlen(aGlob[i].gl_pathv[j]) + 1;
        if (nFound == 0) {
            vt__errorf("%s: a directory without traces (vramtrace-HOST-PID.db, as 'vramtrace record -o %s' writes "
                       "them): name the files to read", azIn[i], azIn[i]);
            rc = VT_EXIT_NOFILE;
        }
        nOut += nFound;
    }
    if (rc == VT_EXIT_OK && i == nIn)
        azOut = malloc((nOut + 1) * sizeof *azOut + nBytes); /* the list, then the names it holds: one block */
    if (rc == VT_EXIT_OK && !azOut) {
        vt__errorf("%s: out of memory", zCmd);
        rc = VT_EXIT_INTERNAL;
    }
    if (rc == VT_EXIT_OK) {
        char *z = (char *)(azOut + nOut + 1);
        nOut = 0;
        for (i = 0; i < nIn; i++) {
            if (!aGlob[i].gl_pathv) { /* not a directory */
                azOut[nOut++] = azIn[i];
                continue;
            }
            for (size_t j = 0; j < aGlob[i].gl_pathc; j++) {
                if (!is_trace_file(aGlob[i].gl_pathv[j])) continue;
                azOut[nOut++] = strcpy(z, aGlob[i].gl_pathv[j]);
                z += strlen(z) + 1;
            }
        }
        azOut[nOut] = NULL;
        free(azIn); /* the caller frees the new list as it would have freed the one given */
        *pazArg = azOut;
        *pnArg = (int)nOut;
    }
    for (i = 0; aGlob && i < nIn; i++)
        if (aGlob[i].gl_pathv) globfree(&aGlob[i]);
    free(aGlob);
    return rc;
}
