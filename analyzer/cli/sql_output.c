/* Printing SQL results as an aligned table, RFC 4180 CSV or JSON, and JSON text helpers. */
#include "sql.h"
#include "util/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_SAMPLE_ROWS 1000 /* table: rows measured before the widths are fixed */

/* Hex text of a blob, sqlite3_malloc'd. */
static char *blob_hex(const unsigned char *p, int n)
{
    char *z = sqlite3_malloc64((sqlite3_uint64)n * 2 + 1);
    int i;
    if (!z) return NULL;
    for (i = 0; i < n; i++) snprintf(z + 2 * i, 3, "%02x", p[i]);
    z[2 * n] = 0;
    return z;
}

/* Text of column i for table and csv output: sqlite3_malloc'd, or NULL for SQL NULL. */
static char *cell_text(sqlite3_stmt *pStmt, int i)
{
    switch (sqlite3_column_type(pStmt, i)) {
    case SQLITE_NULL: return NULL;
    case SQLITE_INTEGER: return sqlite3_mprintf("%lld", (long long)sqlite3_column_int64(pStmt, i));
    case SQLITE_FLOAT: return sqlite3_mprintf("%!.15g", sqlite3_column_double(pStmt, i));
    case SQLITE_BLOB:
        return blob_hex(sqlite3_column_blob(pStmt, i), sqlite3_column_bytes(pStmt, i));
    default: return sqlite3_mprintf("%s", (const char *)sqlite3_column_text(pStmt, i));
    }
}

/* Characters z shows in a terminal. */
static int width(const char *z)
{
    return (int)vt__utf8_chars(z, strlen(z));
}

/* One table cell: text shown (control characters as spaces), NULL shown as "NULL". */
struct cell {
    char *z;
    int bNum;
};

struct table {
    int nCol, maxWidth, *aWidth, *aNum;
    long long nTrunc;
};

/* Print one cell padded to width w; truncated (counted) when longer. */
static void table_cell(FILE *f, struct table *t, int iCol, const char *z, int bLast)
{
    int w = t->aWidth[iCol], len = width(z), pad;
    size_t nByte = strlen(z);
    if (w >= 4 && len > w) {
        nByte = vt__utf8_prefix(z, nByte, (size_t)(w - 3));
        t->nTrunc++;
        fwrite(z, 1, nByte, f);
        fputs("...", f);
        pad = 0;
    } else {
        pad = w > len ? w - len : 0;
        if (t->aNum[iCol]) fprintf(f, "%*s", pad, "");
        fwrite(z, 1, nByte, f);
        if (t->aNum[iCol]) pad = 0;
    }
    if (!bLast) fprintf(f, "%*s  ", pad, "");
}

/* Print one row of cells (NULL as "NULL"), padded to the fixed widths. */
static void table_row(FILE *f, struct table *t, struct cell *aCell)
{
    int i;
    for (i = 0; i < t->nCol; i++) table_cell(f, t, i, aCell[i].z ? aCell[i].z : "NULL", i == t->nCol - 1);
    fputc('\n', f);
}

/* Read the current row into aCell (sqlite3_malloc'd strings, control characters blanked). */
static int table_read(sqlite3_stmt *pStmt, int nCol, struct cell *aCell)
{
    int i;
    for (i = 0; i < nCol; i++) {
        int type = sqlite3_column_type(pStmt, i);
        char *z = cell_text(pStmt, i), *p;
        if (!z && type != SQLITE_NULL) return SQLITE_NOMEM;
        for (p = z; p && *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
        aCell[i].z = z;
        aCell[i].bNum = type == SQLITE_INTEGER || type == SQLITE_FLOAT;
    }
    return SQLITE_OK;
}

/* Free the strings of n cells. */
static void cells_free(struct cell *aCell, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) sqlite3_free(aCell[i].z);
}

/* Table output: sample rows, fix widths, print, stream the rest. */
static int print_table(sqlite3_stmt *pStmt, FILE *f, const struct vt_sql_print *opt,
                       long long *pnRow)
{
    int nCol = sqlite3_column_count(pStmt), rc = SQLITE_OK, i, step = SQLITE_ROW;
    struct table t = {nCol, opt->maxWidth, NULL, NULL, 0};
    struct cell *aSample = NULL, *aRow = NULL;
    size_t nSample = 0, j;
    long long nRow = 0;

    t.aWidth = calloc((size_t)nCol, sizeof(int));
    t.aNum = calloc((size_t)nCol, sizeof(int));
    aSample = calloc((size_t)nCol * TABLE_SAMPLE_ROWS, sizeof(struct cell));
    aRow = calloc((size_t)nCol, sizeof(struct cell));
    if (!t.aWidth || !t.aNum || !aSample || !aRow) {
        rc = SQLITE_NOMEM;
        goto done;
    }
    for (i = 0; i < nCol; i++) {
        t.aWidth[i] = opt->bHeader ? width(sqlite3_column_name(pStmt, i)) : 0;
        t.aNum[i] = -1; /* unknown until a non-NULL value is seen */
    }
    while (nSample < TABLE_SAMPLE_ROWS && (step = sqlite3_step(pStmt)) == SQLITE_ROW) {
        struct cell *a = aSample + nSample * (size_t)nCol;
        rc = table_read(pStmt, nCol, a);
        nSample++;
        if (rc != SQLITE_OK) goto done;
        for (i = 0; i < nCol; i++) {
            int w = width(a[i].z ? a[i].z : "NULL");
            if (w > t.aWidth[i]) t.aWidth[i] = w;
            if (a[i].z) t.aNum[i] = (t.aNum[i] != 0) && a[i].bNum;
        }
    }
    for (i = 0; i < nCol; i++) {
        if (t.aNum[i] < 0) t.aNum[i] = 0;
        if (opt->maxWidth > 0 && t.aWidth[i] > opt->maxWidth) t.aWidth[i] = opt->maxWidth;
    }
    if (opt->bHeader && nCol > 0) {
        for (i = 0; i < nCol; i++)
            table_cell(f, &t, i, sqlite3_column_name(pStmt, i), i == nCol - 1);
        fputc('\n', f);
        for (i = 0; i < nCol; i++) {
            int k;
            for (k = 0; k < t.aWidth[i]; k++) fputc('-', f);
            if (i < nCol - 1) fputs("  ", f);
        }
        fputc('\n', f);
    }
    for (j = 0; j < nSample; j++) table_row(f, &t, aSample + j * (size_t)nCol);
    nRow = (long long)nSample;
    if (step == SQLITE_ROW) {
        while ((step = sqlite3_step(pStmt)) == SQLITE_ROW) {
            rc = table_read(pStmt, nCol, aRow);
            if (rc == SQLITE_OK) table_row(f, &t, aRow);
            cells_free(aRow, (size_t)nCol);
            memset(aRow, 0, sizeof(struct cell) * (size_t)nCol);
            if (rc != SQLITE_OK) goto done;
            nRow++;
        }
    }
    if (step != SQLITE_DONE) {
        rc = step;
        goto done;
    }
    if (nCol > 0) {
        fprintf(f, "(%lld row%s)\n", nRow, nRow == 1 ? "" : "s");
        if (t.nTrunc)
            fprintf(f, "(%lld cell%s cut to %d characters: use --max-width 0 or --format csv for "
                       "full values)\n",
                    t.nTrunc, t.nTrunc == 1 ? "" : "s", opt->maxWidth);
    }
done:
    if (aSample) cells_free(aSample, nSample * (size_t)nCol);
    free(aSample);
    free(aRow);
    free(t.aWidth);
    free(t.aNum);
    *pnRow = nRow;
    return rc;
}

/*
 * Output names of CSV headers and JSON keys: the column names, a repeated name gets ":2",
 * ":3"... so that no object holds a duplicate key and no header names two columns alike.
 * With bTrace the first column `trace` (per-trace output) counts as met before the query's.
 * Returns an array of sqlite3_malloc'd strings (col_keys_free), or NULL when out of memory.
 */
static char **col_keys(sqlite3_stmt *pStmt, int nCol, int bTrace)
{
    char **azKey = calloc((size_t)(nCol ? nCol : 1), sizeof(char *));
    int i, j;
    if (!azKey) return NULL;
    for (i = 0; i < nCol; i++) {
        const char *zName = sqlite3_column_name(pStmt, i);
        int nSame = 1 + (bTrace && strcmp(zName, "trace") == 0);
        for (j = 0; j < i; j++)
            if (strcmp(sqlite3_column_name(pStmt, j), zName) == 0) nSame++;
        azKey[i] = nSame > 1 ? sqlite3_mprintf("%s:%d", zName, nSame) : sqlite3_mprintf("%s", zName);
        if (!azKey[i]) {
            for (j = 0; j < i; j++) sqlite3_free(azKey[j]);
            free(azKey);
            return NULL;
        }
    }
    return azKey;
}

/* Frees what col_keys returned for nCol columns. */
static void col_keys_free(char **azKey, int nCol)
{
    if (!azKey) return;
    for (int i = 0; i < nCol; i++) sqlite3_free(azKey[i]);
    free(azKey);
}

/* One CSV field, quoted when it holds a comma, quote, CR or LF (RFC 4180); always valid UTF-8. */
static void csv_field(FILE *f, const char *z)
{
    int bQuote;
    if (!z) return;
    bQuote = strpbrk(z, ",\"\r\n") != NULL;
    if (bQuote) fputc('"', f);
    vt__put_esc(f, z, strlen(z), VT_ESC_CSV, VT_TEXT_NOCAP);
    if (bQuote) fputc('"', f);
}

/* CSV output, streamed. Returns SQLITE_OK at the end of the rows or the step's error code. */
static int print_csv(sqlite3_stmt *pStmt, FILE *f, const struct vt_sql_print *opt, long long *pnRow)
{
    int nCol = sqlite3_column_count(pStmt), i, step;
    long long nRow = 0;
    if (opt->bHeader && nCol > 0) {
        char **azKey = col_keys(pStmt, nCol, opt->zTrace != NULL);
        if (!azKey) return SQLITE_NOMEM;
        if (opt->zTrace) fputs("trace,", f);
        for (i = 0; i < nCol; i++) {
            if (i) fputc(',', f);
            csv_field(f, azKey[i]);
        }
        fputc('\n', f);
        col_keys_free(azKey, nCol);
    }
    while ((step = sqlite3_step(pStmt)) == SQLITE_ROW) {
        if (opt->zTrace) {
            csv_field(f, opt->zTrace);
            fputc(',', f);
        }
        for (i = 0; i < nCol; i++) {
            char *z = cell_text(pStmt, i);
            if (!z && sqlite3_column_type(pStmt, i) != SQLITE_NULL) {
                *pnRow = nRow;
                return SQLITE_NOMEM;
            }
            if (i) fputc(',', f);
            csv_field(f, z);
            sqlite3_free(z);
        }
        fputc('\n', f);
        nRow++;
    }
    *pnRow = nRow;
    return step == SQLITE_DONE ? SQLITE_OK : step;
}

/* JSON output: an array of row objects, streamed. Returns like print_csv. */
static int print_json(sqlite3_stmt *pStmt, FILE *f, const struct vt_sql_print *opt, long long *pnRow)
{
    int nCol = sqlite3_column_count(pStmt), i, step;
    long long nRow = 0, *pnAll = opt->pnJsonRows;
    char **azKey = col_keys(pStmt, nCol, opt->zTrace != NULL);
    if (!azKey) return SQLITE_NOMEM;
    if (!pnAll) fputc('[', f);
    while ((step = sqlite3_step(pStmt)) == SQLITE_ROW) {
        fputs((pnAll ? *pnAll : nRow) ? ",\n{" : "\n{", f);
        if (opt->zTrace) {
            fputs("\"trace\":", f);
            vt__json_str(f, opt->zTrace);
            if (nCol) fputc(',', f);
        }
        for (i = 0; i < nCol; i++) {
            if (i) fputc(',', f);
            vt__json_str(f, azKey[i]);
            fputc(':', f);
            switch (sqlite3_column_type(pStmt, i)) {
            case SQLITE_NULL: fputs("null", f); break;
            case SQLITE_INTEGER: fprintf(f, "%lld", (long long)sqlite3_column_int64(pStmt, i)); break;
            case SQLITE_FLOAT: vt__json_double(f, sqlite3_column_double(pStmt, i)); break;
            case SQLITE_BLOB: {
                char *z = blob_hex(sqlite3_column_blob(pStmt, i), sqlite3_column_bytes(pStmt, i));
                vt__json_strn(f, z ? z : "", z ? strlen(z) : 0, VT_TEXT_NOCAP);
                sqlite3_free(z);
                break;
            }
            default:
                vt__json_strn(f, (const char *)sqlite3_column_text(pStmt, i), (size_t)sqlite3_column_bytes(pStmt, i),
                              VT_TEXT_NOCAP);
                break;
            }
        }
        fputc('}', f);
        nRow++;
        if (pnAll) ++*pnAll;
    }
    if (!pnAll) fputs(nRow ? "\n]\n" : "]\n", f);
    col_keys_free(azKey, nCol);
    *pnRow = nRow;
    return step == SQLITE_DONE ? SQLITE_OK : step;
}

int vt__sql_print(sqlite3_stmt *pStmt, FILE *f, const struct vt_sql_print *opt, long long *pnRow)
{
    int rc;
    *pnRow = 0;
    if (sqlite3_column_count(pStmt) == 0) { /* BEGIN, COMMIT, ...: run, print nothing */
        while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
        }
        return rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    switch (opt->format) {
    case VT_SQL_CSV: rc = print_csv(pStmt, f, opt, pnRow); break;
    case VT_SQL_JSON: rc = print_json(pStmt, f, opt, pnRow); break;
    default: rc = print_table(pStmt, f, opt, pnRow); break;
    }
    if (rc == SQLITE_OK && ferror(f)) rc = SQLITE_IOERR;
    return rc;
}
