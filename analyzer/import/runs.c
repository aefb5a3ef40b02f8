/* Sorted runs of fixed-width rows in an unlinked file, read back merged (k-way, by key then ordinal) or as written. */
#include "runs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WBUF_ROWS 1024 /* rows buffered before a write */
#define RBUF_ROWS 256  /* rows read at a time per run while merging */

struct run {
    int64_t iFirst;  /* its first row's index in the file */
    int64_t nRow;
    int64_t ordinal;
};

struct vt__runs {
    int fd;
    int nCol;
    size_t nRowBytes;
    int64_t *aW;           /* rows not yet written: the file's rows nFile.. */
    int nW;
    int64_t nFile;         /* rows in the file */
    struct run aRun[VT_RUNS_MAX];
    int nRun;
};

int vt__runs_open(struct vt__runs **pp, const char *zNear, int nCol)
{
    struct vt__runs *r = calloc(1, sizeof *r);
    size_t n = strlen(zNear) + 16;
    char *zPath = malloc(n);
    *pp = NULL;
    if (!r || !zPath || !(r->aW = malloc((size_t)WBUF_ROWS * (size_t)nCol * sizeof *r->aW))) goto nomem;
    snprintf(zPath, n, "%s-runs-XXXXXX", zNear);
    if ((r->fd = mkstemp(zPath)) < 0) goto fail;
    unlink(zPath); /* the open descriptor keeps it until vt__runs_close */
    free(zPath);
    r->nCol = nCol;
    r->nRowBytes = (size_t)nCol * sizeof(int64_t);
    *pp = r;
    return 0;
nomem:
    errno = ENOMEM;
fail:
    if (r) free(r->aW);
    free(r);
    free(zPath);
    return -1;
}

int vt__runs_begin(struct vt__runs *r, int64_t ordinal)
{
    if (r->nRun == VT_RUNS_MAX) return -1;
    r->aRun[r->nRun++] = (struct run){r->nFile + r->nW, 0, ordinal};
    return 0;
}

int vt__runs_count(const struct vt__runs *r)
{
    return r->nRun;
}

/* Write the buffered rows at the file's end. Returns 0, or -1 with errno set. */
static int flush_w(struct vt__runs *r)
{
    size_t nByte = (size_t)r->nW * r->nRowBytes, done = 0;
    while (done < nByte) {
        ssize_t k = pwrite(r->fd, (const char *)r->aW + done, nByte - done, (off_t)(r->nFile * (int64_t)r->nRowBytes) + (off_t)done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (k == 0) errno = EIO;
            return -1;
        }
        done += (size_t)k;
    }
    r->nFile += r->nW;
    r->nW = 0;
    return 0;
}

int vt__runs_put(struct vt__runs *r, const int64_t *aRow)
{
    if (r->nW == WBUF_ROWS && flush_w(r)) return -1;
    memcpy(r->aW + (size_t)r->nW * (size_t)r->nCol, aRow, r->nRowBytes);
    r->nW++;
    r->aRun[r->nRun - 1].nRow++;
    return 0;
}

/* A run being read: its rows aBuf[iBuf..nBuf) read, and nLeft more in the file from iNext. */
struct cursor {
    int64_t *aBuf;
    int iBuf, nBuf;
    int64_t iNext, nLeft;
};

/* Refill c's buffer from the file. Returns 0, or -1 with errno set. */
static int refill(struct vt__runs *r, struct cursor *c)
{
    int n = c->nLeft < RBUF_ROWS ? (int)c->nLeft : RBUF_ROWS;
    size_t nByte = (size_t)n * r->nRowBytes, done = 0;
    while (done < nByte) {
        ssize_t k = pread(r->fd, (char *)c->aBuf + done, nByte - done, (off_t)(c->iNext * (int64_t)r->nRowBytes) + (off_t)done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (k == 0) errno = EIO;
            return -1;
        }
        done += (size_t)k;
    }
    c->iBuf = 0;
    c->nBuf = n;
    c->iNext += n;
    c->nLeft -= n;
    return 0;
}

int vt__runs_each(struct vt__runs *r, int bMerge, int (*xRow)(void *pArg, const int64_t *aRow), void *pArg)
{
    struct cursor aCur[VT_RUNS_MAX];
    int64_t *aAll = NULL;
    int rc = 0, nCur = bMerge ? r->nRun : 1;
    if (r->nW && flush_w(r)) return -1;
    if (nCur == 0) return 0;
    if (!(aAll = malloc((size_t)nCur * RBUF_ROWS * r->nRowBytes))) {
        errno = ENOMEM;
        return -1;
    }
    for (int i = 0; i < nCur; i++) { /* merged: a cursor per run; as written: one over the whole file */
        aCur[i] = (struct cursor){aAll + (size_t)i * RBUF_ROWS * (size_t)r->nCol, 0, 0, bMerge ? r->aRun[i].iFirst : 0,
                                  bMerge ? r->aRun[i].nRow : r->nFile};
        if (aCur[i].nLeft && refill(r, &aCur[i])) {
            rc = -1;
            goto done;
        }
    }
    for (;;) {
        const int64_t *pBest = NULL;
        int iBest = -1;
        /* the least key; among equal keys the run begun with the lowest ordinal */
        for (int i = 0; i < nCur; i++) {
            const int64_t *p;
            if (aCur[i].iBuf == aCur[i].nBuf) continue;
            p = aCur[i].aBuf + (size_t)aCur[i].iBuf * (size_t)r->nCol;
            if (!pBest || p[0] < pBest[0] || (p[0] == pBest[0] && r->aRun[i].ordinal < r->aRun[iBest].ordinal)) {
                pBest = p;
                iBest = i;
            }
        }
        if (!pBest) break;
        if ((rc = xRow(pArg, pBest)) != 0) break;
        if (++aCur[iBest].iBuf == aCur[iBest].nBuf && aCur[iBest].nLeft && refill(r, &aCur[iBest])) {
            rc = -1;
            break;
        }
    }
done:
    free(aAll);
    return rc;
}

void vt__runs_close(struct vt__runs *r)
{
    if (!r) return;
    close(r->fd);
    free(r->aW);
    free(r);
}
