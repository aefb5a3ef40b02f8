/* String interning: value -> id of its row in the `string` table, with a bounded cache. */
#include "strintern.h"

#include "vramtrace/strhash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct intern_slot {
    uint64_t hash; /* 0: empty */
    int64_t id;
    char *z;
};

/* vt__str_hash of z; its length into *pLen. */
static uint64_t hash_str(const char *z, size_t *pLen)
{
    *pLen = strlen(z);
    return vt__str_hash(z, *pLen);
}

int vt__intern_init(struct vt__intern *p, size_t nMax, size_t maxBytes)
{
    memset(p, 0, sizeof *p);
    if (nMax < 1) nMax = 1;
    p->nMax = nMax;
    p->maxBytes = maxBytes;
    p->iNext = 1;
    p->nSlot = 16;
    while (p->nSlot < 2 * nMax) p->nSlot *= 2;
    p->aSlot = calloc(p->nSlot, sizeof *p->aSlot);
    return p->aSlot ? 0 : -ENOMEM;
}

void vt__intern_free(struct vt__intern *p)
{
    size_t i;
    if (!p->aSlot) return;
    for (i = 0; i < p->nSlot; i++) free(p->aSlot[i].z);
    free(p->aSlot);
    p->aSlot = NULL;
}

int64_t vt__intern(struct vt__intern *p, const char *zValue, int *pIsNew)
{
    size_t len = 0;
    uint64_t h = hash_str(zValue, &len);
    size_t i = (size_t)h & (p->nSlot - 1);
    struct intern_slot *s;
    for (;;) {
        s = &p->aSlot[i];
        if (s->hash == 0) break;
        if (s->hash == h && strcmp(s->z, zValue) == 0) {
            *pIsNew = 0;
            return s->id;
        }
        i = (i + 1) & (p->nSlot - 1);
    }
    *pIsNew = 1;
    if (p->nUsed < p->nMax && p->nBytes + len + 1 <= p->maxBytes) {
        char *zCopy = malloc(len + 1);
        if (zCopy) {
            memcpy(zCopy, zValue, len + 1);
            s->hash = h;
            s->id = p->iNext;
            s->z = zCopy;
            p->nUsed++;
            p->nBytes += len + 1;
        }
    }
    return p->iNext++;
}
