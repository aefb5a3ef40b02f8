/* Internal: a statement's names (its rows' first column, as text) collected into an array. */
#ifndef VT_ANALYZER_SQLNAMES_H
#define VT_ANALYZER_SQLNAMES_H

#include <sqlite3.h>

/* Each row's first column of statement p (run to its end), as text, appended to *paz (*pn of them; each
 * string and the array are the caller's to free, also after a failure). SQLITE_OK or the SQLite code met. */
int vt__sql_names(sqlite3_stmt *p, char ***paz, int *pn);

#endif
