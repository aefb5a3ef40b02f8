/* The in-memory string hash the tracer's and the importer's interning caches share. */
#ifndef VRAMTRACE_STRHASH_H
#define VRAMTRACE_STRHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * A hash of the n bytes at z, eight bytes at a time (kernel names, hashed once per launch, run to
 * hundreds of bytes). Never 0 (0 marks an empty slot). Only in memory: nothing stored depends on it.
 */
static inline uint64_t vt__str_hash(const char *z, size_t n)
{
    uint64_t h = 1469598103934665603ull ^ n, w = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, z + i, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, z + i, n - i);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 32;
    return h ? h : 1;
}

#endif
