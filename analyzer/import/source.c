/* Input streams for the importers: files through zlib's gzread (plain and gzip alike) or memory buffers. */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

int vt__src_open_file(struct vt__src *s, const char *zPath)
{
    int fd;
    gzFile gz;
    memset(s, 0, sizeof *s);
    fd = open(zPath, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    gz = gzdopen(fd, "rb");
    if (!gz) {
        int e = errno ? errno : ENOMEM;
        close(fd);
        errno = e;
        return -1;
    }
    gzbuffer(gz, 256 * 1024);
    s->gz = gz;
    return 0;
}

void vt__src_open_mem(struct vt__src *s, const void *p, size_t n)
{
    memset(s, 0, sizeof *s);
    s->pMem = p;
    s->nMem = n;
}

long vt__src_read(struct vt__src *s, void *buf, size_t n)
{
    if (n > (size_t)INT_MAX / 2) n = (size_t)INT_MAX / 2;
    if (s->gz) {
        int errnum = 0, k = gzread((gzFile)s->gz, buf, (unsigned)n);
        const char *zMsg;
        if (k > 0) {
            s->nRead += k;
            return k;
        }
        zMsg = gzerror((gzFile)s->gz, &errnum);
        if (k < 0 || (errnum != Z_OK && errnum != Z_BUF_ERROR)) {
            snprintf(s->zErr, sizeof s->zErr, "%s", errnum == Z_ERRNO ? strerror(errno) : zMsg);
            return -1;
        }
        if (errnum == Z_BUF_ERROR) { /* the gzip stream ended in the middle */
            snprintf(s->zErr, sizeof s->zErr, "gzip data truncated");
            return -1;
        }
        return 0;
    }
    if (!s->pMem) return 0;
    if (n > s->nMem - s->iMem) n = s->nMem - s->iMem;
    memcpy(buf, s->pMem + s->iMem, n);
    s->iMem += n;
    s->nRead += (int64_t)n;
    return (long)n;
}

void vt__src_close(struct vt__src *s)
{
    if (s->gz) gzclose((gzFile)s->gz);
    s->gz = NULL;
    s->pMem = NULL;
}
