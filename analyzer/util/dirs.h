/* Output directories: created with their parents when a command is told to write into one that is missing. */
#ifndef VT_UTIL_DIRS_H
#define VT_UTIL_DIRS_H

/* mkdir -p zDir (mode 0777 less umask). Returns 0, or -1 with errno set. */
int vt__make_dirs(const char *zDir);

#endif
