/* Activity buffers laid out like CUPTI's, for the tests and benchmarks that feed the writer without CUPTI. */
#ifndef VT_TESTS_CORE_REC_H
#define VT_TESTS_CORE_REC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Test buffer layout: each record is preceded by an 8-byte header
 * {uint32 size, uint32 magic} and starts 8-byte aligned, like CUPTI's own
 * records. core_next_record walks it the way cuptiActivityGetNextRecord walks a
 * real buffer.
 */
#define CORE_REC_MAGIC 0x76747263u

/* Append record rec (size bytes) to buf at *pOff; returns 0, or -1 if it does not fit. */
static inline int core_lay(uint8_t *buf, size_t cap, size_t *pOff, const void *rec, size_t size)
{
    size_t need = 8 + ((size + 7) & ~(size_t)7);
    uint32_t hdr[2] = {(uint32_t)size, CORE_REC_MAGIC};
    if (*pOff + need > cap) return -1;
    memcpy(buf + *pOff, hdr, 8);
    memcpy(buf + *pOff + 8, rec, size);
    *pOff += need;
    return 0;
}

/* xNextRecord over core_lay buffers: 0 with a record, 1 at the end, -1 on a bad header. */
static inline int core_next_record(uint8_t *pBuf, size_t validSize, void **ppRecord)
{
    size_t off = 0;
    uint32_t hdr[2];
    if (*ppRecord) {
        uint8_t *p = (uint8_t *)*ppRecord;
        memcpy(hdr, p - 8, 8);
        off = (size_t)(p - pBuf) + ((hdr[0] + 7) & ~(size_t)7);
    }
    if (off + 8 > validSize) return 1;
    memcpy(hdr, pBuf + off, 8);
    if (hdr[1] != CORE_REC_MAGIC || off + 8 + hdr[0] > validSize) return -1;
    *ppRecord = pBuf + off + 8;
    return 0;
}

#endif
