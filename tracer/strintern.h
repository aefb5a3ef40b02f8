/* Internal: string interning — maps a string value to its row id in the trace's `string` table. */
#ifndef VT_TRACER_STRINTERN_H
#define VT_TRACER_STRINTERN_H

#include <stddef.h>
#include <stdint.h>

/*
 * Single-threaded (the writer thread). Ids are assigned 1, 2, 3, ... in order
 * of first sight. The cache holds at most nMax strings (or maxBytes of text):
 * past that, vt__intern still returns a fresh id for every unseen value (the
 * caller writes a row for it) — the trace stays correct, only deduplication of
 * strings first seen after the bound is lost.
 */
struct vt__intern {
    struct intern_slot *aSlot;
    size_t nSlot;     /* power of two, >= 2 * nMax */
    size_t nUsed;
    size_t nMax;
    size_t nBytes;    /* text held */
    size_t maxBytes;
    int64_t iNext;    /* next id to hand out */
};

/* Initialise for at most nMax cached strings holding at most maxBytes. Returns 0 or -ENOMEM. */
int vt__intern_init(struct vt__intern *p, size_t nMax, size_t maxBytes);

/* Free every cached copy. */
void vt__intern_free(struct vt__intern *p);

/*
 * Id of zValue (non-NULL). *pIsNew is set to 1 when the id was just assigned:
 * the caller must then insert the `string` row (id, zValue).
 */
int64_t vt__intern(struct vt__intern *p, const char *zValue, int *pIsNew);

#endif
