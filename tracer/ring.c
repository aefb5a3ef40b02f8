/* The bounded multi-producer ring of host records: copy in under a short lock, refuse when full. */
#include "ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int vt__ring_init(struct vt__ring *r, size_t nCap)
{
    memset(r, 0, sizeof *r);
    if (nCap < 1) nCap = 1;
    r->aRec = calloc(nCap, sizeof *r->aRec);
    if (!r->aRec) return -ENOMEM;
    r->nCap = nCap;
    pthread_mutex_init(&r->mu, NULL);
    return 0;
}

void vt__ring_free(struct vt__ring *r)
{
    if (!r->aRec) return;
    while (r->nRec > 0) {
        vt__hrec_release(&r->aRec[r->iHead]);
        r->iHead = (r->iHead + 1) % r->nCap;
        r->nRec--;
    }
    free(r->aRec);
    r->aRec = NULL;
    pthread_mutex_destroy(&r->mu);
}

long vt__ring_push(struct vt__ring *r, const struct vt_hrec *rec)
{
    long n = -1;
    pthread_mutex_lock(&r->mu);
    if (r->nRec < r->nCap) {
        r->aRec[(r->iHead + r->nRec) % r->nCap] = *rec;
        n = (long)++r->nRec;
    } else {
        r->nDropped++;
    }
    pthread_mutex_unlock(&r->mu);
    if (n < 0) {
        struct vt_hrec copy = *rec; /* the caller passed ownership of the heap parts */
        vt__hrec_release(&copy);
    }
    return n;
}

size_t vt__ring_pop(struct vt__ring *r, struct vt_hrec *aOut, size_t nMax)
{
    size_t n, i;
    pthread_mutex_lock(&r->mu);
    n = r->nRec < nMax ? r->nRec : nMax;
    for (i = 0; i < n; i++) {
        aOut[i] = r->aRec[r->iHead];
        r->iHead = (r->iHead + 1) % r->nCap;
    }
    r->nRec -= n;
    pthread_mutex_unlock(&r->mu);
    return n;
}

uint64_t vt__ring_dropped(struct vt__ring *r)
{
    uint64_t n;
    pthread_mutex_lock(&r->mu);
    n = r->nDropped;
    pthread_mutex_unlock(&r->mu);
    return n;
}

size_t vt__ring_count(struct vt__ring *r)
{
    size_t n;
    pthread_mutex_lock(&r->mu);
    n = r->nRec;
    pthread_mutex_unlock(&r->mu);
    return n;
}

void vt__hrec_release(struct vt_hrec *rec)
{
    int i;
    switch (rec->type) {
    case VT_HREC_STACK:
        for (i = 0; rec->u.stack.aFrame && i < rec->u.stack.nFrame; i++) {
            free(rec->u.stack.aFrame[i].zFunction);
            free(rec->u.stack.aFrame[i].zFile);
            free(rec->u.stack.aFrame[i].zModule);
        }
        free(rec->u.stack.aFrame);
        rec->u.stack.aFrame = NULL;
        rec->u.stack.nFrame = 0;
        break;
    case VT_HREC_META:
        free(rec->u.meta.zValue);
        rec->u.meta.zValue = NULL;
        break;
    default:
        break;
    }
}
