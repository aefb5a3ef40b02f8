/* Output directories: created with their parents when a command is told to write into one that is missing. */
#include "dirs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

int vt__make_dirs(const char *zDir)
{
    char zPath[PATH_MAX];
    char *p;
    if ((size_t)snprintf(zPath, sizeof zPath, "%s", zDir) >= sizeof zPath) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (p = zPath + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(zPath, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(zPath, 0777) != 0 && errno != EEXIST) return -1;
    return 0;
}
