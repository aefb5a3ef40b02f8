/* Runs a fuzz target over stored inputs (seed corpus and regressions) without libFuzzer: a plain test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feed one file to the target. Returns 0, or -1 if it cannot be read. */
static int run_file(const char *zPath)
{
    FILE *f = fopen(zPath, "rb");
    uint8_t *p = NULL;
    long n;
    int rc = -1;
    if (!f) goto done;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) goto done;
    p = malloc((size_t)n + 1);
    if (!p || (n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n)) goto done;
    fprintf(stderr, "  %s (%ld bytes)\n", zPath, n);
    LLVMFuzzerTestOneInput(p, (size_t)n);
    rc = 0;
done:
    if (f) fclose(f);
    free(p);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * usage: fuzz_replay [DIR|FILE...] — every regular file in each directory, in
 * name order (without arguments: the directories built in as VT_FUZZ_DIRS). Exits 0 when all inputs ran (a crash or sanitizer report ends
 * the process with its own failure), 1 when an input cannot be read or none
 * was found.
 */
int main(int argc, char **argv)
{
    int i, nRun = 0, nBad = 0;
#ifdef VT_FUZZ_DIRS
    static char zDirs[] = VT_FUZZ_DIRS; /* built-in corpus directories, ':'-separated */
    char *azDefault[8], *zSave = NULL, *z;
    if (argc < 2) {
        azDefault[0] = argv[0];
        argc = 1;
        for (z = strtok_r(zDirs, ":", &zSave); z && argc < 8; z = strtok_r(NULL, ":", &zSave))
            azDefault[argc++] = z;
        argv = azDefault;
    }
#endif
    for (i = 1; i < argc; i++) {
        struct stat st;
        DIR *d;
        struct dirent *e;
        char **az = NULL;
        size_t n = 0, cap = 0, k;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz_replay: %s: missing\n", argv[i]);
            nBad++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) == 0) nRun++;
            else nBad++;
            continue;
        }
        d = opendir(argv[i]);
        while (d && (e = readdir(d)) != NULL) {
            char z[4096];
            if (e->d_name[0] == '.') continue;
            snprintf(z, sizeof z, "%s/%s", argv[i], e->d_name);
            if (stat(z, &st) != 0 || !S_ISREG(st.st_mode)) continue;
            if (n == cap) {
                char **azNew = realloc(az, (cap = cap ? cap * 2 : 64) * sizeof *az);
                if (!azNew) break;
                az = azNew;
            }
            az[n++] = strdup(z);
        }
        if (d) closedir(d);
        if (n) qsort(az, n, sizeof *az, cmp_str);
        for (k = 0; k < n; k++) {
            if (az[k] && run_file(az[k]) == 0) nRun++;
            else nBad++;
            free(az[k]);
        }
        free(az);
    }
    fprintf(stderr, "fuzz_replay: %d inputs replayed, %d unreadable\n", nRun, nBad); /* stdout is /dev/null */
    return nBad || nRun == 0 ? 1 : 0;
}
