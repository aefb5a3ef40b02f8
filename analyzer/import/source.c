/* Input streams for the importers: files through zlib's gzread (plain and gzip alike; plain only without zlib) or memory buffers. */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if VT_HAVE_ZLIB
#include <zlib.h>
#endif

int vt__src_can_gunzip(void)
{
    return VT_HAVE_ZLIB;
}

long vt__src_gunzip_head(const void *a, size_t n, void *out, size_t nOut)
{
#if VT_HAVE_ZLIB
    z_stream z;
    long nGot;
    int rc;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return 0; /* out of memory: nothing decompressed */
    z.next_in = (Bytef *)(uintptr_t)a;
    z.avail_in = (uInt)(n < UINT_MAX ? n : UINT_MAX);
    z.next_out = out;
    z.avail_out = (uInt)(nOut < UINT_MAX ? nOut : UINT_MAX);
    rc = inflate(&z, Z_SYNC_FLUSH);
    nGot = (long)(nOut - z.avail_out);
    inflateEnd(&z);
    return rc == Z_DATA_ERROR || rc == Z_STREAM_ERROR || rc == Z_NEED_DICT ? -1 : nGot;
#else
    (void)a, (void)n, (void)out, (void)nOut;
    return -2;
#endif
}

#if VT_HAVE_ZLIB
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

/* Read from the file: returns the count, 0 at the end, -1 on an error (s->zErr). */
static long read_file(struct vt__src *s, void *buf, size_t n)
{
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

/* Close the file. */
static void close_file(struct vt__src *s)
{
    gzclose((gzFile)s->gz);
}
#else
/* Without zlib: the file is read as it is, and gzip data is refused with a reason. */
struct plain_file {
    int fd;
    int bFirst; /* nothing read yet: the first bytes are checked for gzip's magic */
};

int vt__src_open_file(struct vt__src *s, const char *zPath)
{
    struct plain_file *p;
    memset(s, 0, sizeof *s);
    p = malloc(sizeof *p);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    p->fd = open(zPath, O_RDONLY | O_CLOEXEC);
    if (p->fd < 0) {
        int e = errno;
        free(p);
        errno = e;
        return -1;
    }
    p->bFirst = 1;
    s->gz = p;
    return 0;
}

/* Read from the file: returns the count, 0 at the end, -1 on an error (s->zErr). */
static long read_file(struct vt__src *s, void *buf, size_t n)
{
    struct plain_file *p = s->gz;
    ssize_t k;
    do {
        k = read(p->fd, buf, n);
    } while (k < 0 && errno == EINTR);
    if (k < 0) {
        snprintf(s->zErr, sizeof s->zErr, "%s", strerror(errno));
        return -1;
    }
    if (p->bFirst && k > 0) {
        const unsigned char *a = buf;
        unsigned char b = 0;
        p->bFirst = 0;
        /* a one-byte first read: look at the second byte without losing it */
        if (k == 1 && a[0] == 0x1f && pread(p->fd, &b, 1, 1) == 1 && b == 0x8b) k = -1;
        if (vt__src_gzip_magic(a, (size_t)k)) k = -1;
        if (k < 0) {
            snprintf(s->zErr, sizeof s->zErr, "%s", VT__SRC_NO_GUNZIP);
            return -1;
        }
    }
    s->nRead += k;
    return (long)k;
}

/* Close the file. */
static void close_file(struct vt__src *s)
{
    struct plain_file *p = s->gz;
    close(p->fd);
    free(p);
}
#endif

void vt__src_open_mem(struct vt__src *s, const void *p, size_t n)
{
    memset(s, 0, sizeof *s);
    s->pMem = p;
    s->nMem = n;
}

long vt__src_read(struct vt__src *s, void *buf, size_t n)
{
    if (n > (size_t)INT_MAX / 2) n = (size_t)INT_MAX / 2;
    if (s->gz) return read_file(s, buf, n);
    if (!s->pMem) return 0;
    if (n > s->nMem - s->iMem) n = s->nMem - s->iMem;
    memcpy(buf, s->pMem + s->iMem, n);
    s->iMem += n;
    s->nRead += (int64_t)n;
    return (long)n;
}

void vt__src_close(struct vt__src *s)
{
    if (s->gz) close_file(s);
    s->gz = NULL;
    s->pMem = NULL;
}
