/* Writing traces as CSV tables (one file per table, every trace's rows with trace, pid and rank) for other engines such as DuckDB. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "export.h"
#include "sql.h"
#include "vramtrace/schema.h"

/*
 * The tables written: file name and the SELECT of one trace's rows after the trace, pid and rank
 * columns (names joined in where the table holds ids). Every column the table has, as `vramtrace
 * sql` shows it.
 */
static const struct {
    const char *zFile, *zSelect;
    const char *zTime; /* the time column, from which at_ns (ns from the export's origin) is made; NULL: none */
} aTable[] = {
    {"memory_event", "SELECT x.* FROM memory_event x", "ts"},
    {"tensor_event", "SELECT x.* FROM tensor_event x", "ts"}, /* written only when a trace has tensor rows */
    {"kernel", "SELECT x.*, s.value AS name FROM kernel x LEFT JOIN string s ON s.id = x.name_id", "start"},
    {"memcpy", "SELECT x.* FROM memcpy x", "start"},
    {"memset", "SELECT x.* FROM memset x", "start"},
    {"nvtx_range", "SELECT x.*, s.value AS name FROM nvtx_range x LEFT JOIN string s ON s.id = x.name_id", "start"},
    {"api_call", "SELECT x.*, a.name AS api_name FROM api_call x LEFT JOIN enum_api a ON a.id = x.api", "start"},
    {"oom_event", "SELECT x.* FROM oom_event x", "ts"},
    {"device", "SELECT x.* FROM device x", NULL},
    {"meta", "SELECT x.* FROM meta x", NULL},
};
#define N_TABLE (sizeof aTable / sizeof aTable[0])

int vt__export_csv(const char *zDir, int nTrace, struct vt_tracefile *aF, char **pzErr)
{
    FILE *aOut[N_TABLE] = {NULL};
    int aDone[N_TABLE] = {0}; /* the header line written */
    char **aazCol[N_TABLE] = {NULL}; /* each table's columns: every one a trace's version has (newer ones have more) */
    int anCol[N_TABLE] = {0};
    char zPath[4200];
    int rc = SQLITE_OK, bTensors = 0;
    size_t k;
    for (int i = 0; i < nTrace; i++)
        if (aF[i].aT[VT_T_TENSOR].nRow > 0) bTensors = 1;
    *pzErr = NULL;
    if (mkdir(zDir, 0777) != 0 && errno != EEXIST) {
        *pzErr = sqlite3_mprintf("cannot create %s: %s", zDir, strerror(errno));
        return SQLITE_CANTOPEN;
    }
    for (k = 0; k < N_TABLE && rc == SQLITE_OK; k++) {
        if (!bTensors && !strcmp(aTable[k].zFile, "tensor_event")) { /* no file: as before there were any */
            snprintf(zPath, sizeof zPath, "%s/%s.csv", zDir, aTable[k].zFile);
            if (unlink(zPath) == 0) /* an earlier export's: it would stand beside these tables as theirs */
                fprintf(stderr, "vramtrace: %s of an earlier export removed (no trace here has tensor rows)\n", zPath);
            continue;
        }
        snprintf(zPath, sizeof zPath, "%s/%s.csv", zDir, aTable[k].zFile);
        aOut[k] = fopen(zPath, "w");
        if (!aOut[k]) {
            *pzErr = sqlite3_mprintf("cannot write %s: %s", zPath, strerror(errno));
            rc = SQLITE_CANTOPEN;
        }
    }
    for (int i = 0; i < nTrace && rc == SQLITE_OK; i++) /* one header over traces of different versions */
        for (k = 0; k < N_TABLE && rc == SQLITE_OK; k++) {
            int nHas;
            if (!aOut[k] || !vt__read_has(&aF[i], aTable[k].zFile)) continue;
            rc = vt__sql_columns_union(aF[i].db, aTable[k].zSelect, &aazCol[k], &anCol[k], &nHas);
            if (rc != SQLITE_OK)
                *pzErr = sqlite3_mprintf("%s: %s: %s", aF[i].zPath, aTable[k].zFile, sqlite3_errmsg(aF[i].db));
        }
    for (int i = 0; i < nTrace && rc == SQLITE_OK; i++) {
        for (k = 0; k < N_TABLE && rc == SQLITE_OK; k++) {
            char *zLined = NULL; /* its rows under the header's columns, NULL in those its version has not */
            if (!aOut[k]) continue; /* a table not written */
            /* pid and rank from meta, NULL when absent; the guard's views hide impossible rows */
            /* at_ns: the time from the one origin of the traces exported together (figures.h), NULL unknown */
            char zAt[96] = "";
            if (aTable[k].zTime)
                snprintf(zAt, sizeof zAt, ", CASE WHEN t.\"%s\" > 0 THEN max(t.\"%s\" - %lld, 0) END AS at_ns",
                         aTable[k].zTime, aTable[k].zTime, (long long)aF[i].fig.origin);
            if (!vt__read_has(&aF[i], aTable[k].zFile)) continue; /* an older trace */
            rc = vt__sql_columns_select(aF[i].db, aTable[k].zSelect, aazCol[k], anCol[k], &zLined);
            char *zSql = rc != SQLITE_OK ? NULL
                         : sqlite3_mprintf("SELECT (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'pid') AS pid,"
                                           " (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'rank') AS rank, t.*%s"
                                           " FROM (%s) t",
                                           zAt, zLined);
            sqlite3_free(zLined);
            /* trace: its path as given (a directory's file DIR/NAME, "-" standard input): one file name in several
             * directories (a rank each) stays apart */
            struct vt_sql_print opt = {VT_SQL_CSV, 0, !aDone[k], aF[i].zPath, NULL};
            sqlite3_stmt *p = NULL;
            long long nRow;
            if (rc == SQLITE_OK && !zSql) rc = SQLITE_NOMEM;
            if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(aF[i].db, zSql, -1, &p, NULL);
            if (rc == SQLITE_OK) rc = vt__sql_print(p, aOut[k], &opt, &nRow);
            if (rc == SQLITE_OK) aDone[k] = 1;
            if (rc != SQLITE_OK && !*pzErr)
                *pzErr = sqlite3_mprintf("%s: %s: %s", aF[i].zPath, aTable[k].zFile,
                                         rc == SQLITE_IOERR ? strerror(errno ? errno : EIO) : sqlite3_errmsg(aF[i].db));
            sqlite3_finalize(p);
            sqlite3_free(zSql);
        }
    }
    for (k = 0; k < N_TABLE; k++) vt__sql_columns_free(aazCol[k], anCol[k]);
    for (k = 0; k < N_TABLE; k++)
        if (aOut[k] && fclose(aOut[k]) != 0 && rc == SQLITE_OK) {
            *pzErr = sqlite3_mprintf("cannot write %s/%s.csv: %s", zDir, aTable[k].zFile, strerror(errno));
            rc = SQLITE_IOERR;
        }
    return rc;
}
