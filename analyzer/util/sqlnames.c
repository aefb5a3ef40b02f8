/* A statement's names (its rows' first column, as text) collected into an array: tables, columns. */
#include "sqlnames.h"

#include <stdlib.h>
#include <string.h>

int vt__sql_names(sqlite3_stmt *p, char ***paz, int *pn)
{
    int rc;
    while ((rc = sqlite3_step(p)) == SQLITE_ROW) {
        const char *zName = (const char *)sqlite3_column_text(p, 0);
        char **az = realloc(*paz, sizeof *az * (size_t)(*pn + 1));
        rc = az && zName && (az[*pn] = strdup(zName)) != NULL ? SQLITE_OK : SQLITE_NOMEM;
        if (az) *paz = az;
        if (rc != SQLITE_OK) return rc;
        (*pn)++;
    }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}
