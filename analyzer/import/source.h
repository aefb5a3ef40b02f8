/* Internal: one input stream for the importers' readers: a file (plain or gzip, through zlib) or a memory buffer. */
#ifndef VT_IMPORT_SOURCE_H
#define VT_IMPORT_SOURCE_H

#include <stddef.h>
#include <stdint.h>

struct vt__src {
    void *gz;             /* the file being read: a gzFile (a plain descriptor's state without zlib) */
    const uint8_t *pMem;  /* else a memory buffer */
    size_t nMem, iMem;
    int64_t nRead;        /* bytes delivered so far (decompressed) */
    char zErr[128];       /* why the last read failed */
};

/* Open zPath for reading; gzip data is decompressed, anything else read as it is (built without
 * zlib: gzip data fails the first read, with a reason). Returns 0, or -1 with errno set (s zeroed). */
int vt__src_open_file(struct vt__src *s, const char *zPath);

/* Read from the n bytes at p (not copied: they must outlive s). Cannot fail. */
void vt__src_open_mem(struct vt__src *s, const void *p, size_t n);

/* Read up to n bytes into buf: returns the count, 0 at the end, -1 on an error (message in s->zErr;
 * a damaged or truncated gzip stream is an error). */
long vt__src_read(struct vt__src *s, void *buf, size_t n);

/* 1 when this build reads gzip data (it has zlib), else 0; VT__SRC_NO_GUNZIP says why not. */
int vt__src_can_gunzip(void);
#define VT__SRC_NO_GUNZIP "gzip-compressed, and this vramtrace was built without zlib: decompress it first (gunzip)"

/* Whether the n bytes at a begin with gzip's magic (1f 8b). */
static inline int vt__src_gzip_magic(const void *a, size_t n)
{
    const unsigned char *b = a;
    return n >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* Decompress the start of a gzip stream, the n bytes at a (it may be cut anywhere), into up to nOut
 * bytes at out. Returns the bytes written (0 when a holds too little to give any), -1 when a is no
 * gzip data (a bad header or deflate stream), -2 when this build has no zlib. */
long vt__src_gunzip_head(const void *a, size_t n, void *out, size_t nOut);


/* Close (safe on a zeroed or already closed source). */
void vt__src_close(struct vt__src *s);

#endif
