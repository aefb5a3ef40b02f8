/* Internal: a streaming JSON reader (pull tokens, or one value at a time as a small tree) over a vt__src. */
#ifndef VT_IMPORT_JSON_H
#define VT_IMPORT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "source.h"

/*
 * RFC 8259 JSON, read in chunks: memory is the reader's buffer, the current
 * string and the tree of the value being read, never the whole document. Also
 * accepted, as Python's and some C++ writers emit them: NaN, Infinity and
 * -Infinity as numbers. Nesting is bounded (VT_JS_DEPTH_MAX) and kept on an
 * explicit stack; a string may hold at most VT_JS_STR_MAX bytes; a tree at
 * most VT_JS_TREE_MAX nodes. Errors carry the line and byte offset.
 */

#define VT_JS_DEPTH_MAX 512
#define VT_JS_STR_MAX (256 << 20)
#define VT_JS_TREE_MAX (1 << 22)

enum vt_js_tok {
    VT_JS_ERROR = -1,
    VT_JS_EOF = 0, /* the document ended (after its one top value) */
    VT_JS_OBJECT,  /* '{' */
    VT_JS_OBJECT_END,
    VT_JS_ARRAY,   /* '[' */
    VT_JS_ARRAY_END,
    VT_JS_KEY,     /* a member name: vt__js_text */
    VT_JS_STRING,  /* vt__js_text */
    VT_JS_NUMBER,  /* vt__js_number */
    VT_JS_TRUE,
    VT_JS_FALSE,
    VT_JS_NULL
};

struct vt_js;

/* A reader over in (not owned); NULL when out of memory. */
struct vt_js *vt__js_new(struct vt__src *in);
void vt__js_free(struct vt_js *j);

/* The next token (enum vt_js_tok); VT_JS_ERROR with vt__js_errmsg set on malformed or unreadable input. */
int vt__js_next(struct vt_js *j);

/* Text of the last KEY or STRING token (UTF-8, NUL-terminated; valid until the next call); *pn its length. */
const char *vt__js_text(const struct vt_js *j, size_t *pn);

/* The last NUMBER: its value; *pbInt set when it was written as an integer that fits int64 (then *pi holds it). */
double vt__js_number(const struct vt_js *j, int *pbInt, int64_t *pi);

/* After a token that opened a value (OBJECT or ARRAY), skip to its end. Returns 0 or VT_JS_ERROR. */
int vt__js_skip(struct vt_js *j);

/* Depth of the containers now open (1 inside the top value). */
int vt__js_depth(const struct vt_js *j);

const char *vt__js_errmsg(const struct vt_js *j);

/* ---- one value as a tree ---- */

enum vt_jn_type { VT_JN_NULL, VT_JN_BOOL, VT_JN_NUM, VT_JN_STR, VT_JN_ARR, VT_JN_OBJ };

struct vt_jnode {
    uint8_t type;   /* enum vt_jn_type */
    uint8_t bInt;   /* NUM written as an integer: 1 that fits int64 (i), 2 in [2^63, 2^64) (i: its 64-bit pattern) */
    uint16_t nKey;  /* length of the member name, 0xffff when that long or longer */
    int32_t next;   /* next sibling, -1 at the end */
    int32_t child;  /* first child of ARR/OBJ, -1 when empty */
    uint32_t iKey;  /* member name (offset in the tree's text) when the parent is an OBJ */
    uint32_t iStr, nStr; /* STR: offset and length in the tree's text */
    int64_t i;      /* NUM (when bInt), BOOL */
    double d;       /* NUM */
};

struct vt_jtree {
    struct vt_jnode *a;
    int32_t n, nAlloc;
    char *z; /* text: NUL-terminated strings */
    size_t nz, nzAlloc;
};

/*
 * Read the value whose first token tok was just returned by vt__js_next into
 * t (emptied first; node 0 is the value). Returns 0, or VT_JS_ERROR (too large
 * a tree, or malformed input). t is reused across calls; free with vt__jtree_free.
 */
int vt__js_read_tree(struct vt_js *j, int tok, struct vt_jtree *t);
void vt__jtree_free(struct vt_jtree *t);

/* Member zKey of OBJ node i (the last one when repeated), or -1. */
int32_t vt__jt_get(const struct vt_jtree *t, int32_t i, const char *zKey);
/* A set of member names looked up together (vt__jt_pick): built once by vt__jt_keys, read only after. */
#define VT_JT_PICK_MAX 64
struct vt_jkeys {
    int n;
    const char *const *az;
    uint16_t anLen[VT_JT_PICK_MAX];
    uint64_t aBucket[64]; /* by first byte and length: the names that may match */
    uint64_t aFirst[256]; /* by first byte alone */
    uint64_t aHead[VT_JT_PICK_MAX], aMask[VT_JT_PICK_MAX]; /* first 8 bytes (zero past the name), their mask */
    uint64_t aTail[VT_JT_PICK_MAX];                         /* last 8 bytes of a name longer than 8 */
};
/* The set of names az[0..n) (n at most VT_JT_PICK_MAX; az is kept, not copied). Returns 0, -1 when n is too large. */
int vt__jt_keys(struct vt_jkeys *k, const char *const *az, int n);
/*
 * Members k->az[0..k->n) of OBJ node i in one pass: aOut[m] is the member named k->az[m] (the
 * last one when repeated) or -1. Cheaper than n calls of vt__jt_get on objects of many members.
 */
void vt__jt_pick(const struct vt_jtree *t, int32_t i, const struct vt_jkeys *k, int32_t *aOut);
/*
 * A selection of members to read from an object (vt__js_read_tree_sel): the names k, the
 * member found per name in aOut (k->n entries), and per name optionally the selection for
 * the members of its value when that value is an object (apSub NULL, or k->n entries of
 * which some NULL). Selections form a tree, not a cycle.
 */
struct vt_jsel {
    const struct vt_jkeys *k;
    int32_t *aOut;
    const struct vt_jsel *const *apSub;
};
/*
 * vt__js_read_tree, reading only the members named by s: when the value is an object, s->aOut
 * is filled as vt__jt_pick(t, 0, s->k, s->aOut) would fill it, and each sub-selection's aOut as
 * vt__jt_pick on the member it belongs to would (all -1 where that member is absent or not an
 * object). The other members of the selected objects are parsed and checked as ever but leave no
 * node and no text, and the member names of selected objects are not kept (vt__jt_get and
 * vt__jt_pick find nothing there); values of selected members are whole trees. The same input,
 * the same errors, but for the bounds on a tree's nodes and text (VT_JS_TREE_MAX, 4 GiB), which
 * count only what is kept.
 */
int vt__js_read_tree_sel(struct vt_js *j, int tok, struct vt_jtree *t, const struct vt_jsel *s);

/* STR node text or NULL (these three accessors are inline: importers call them per member). */
static inline const char *vt__jt_str(const struct vt_jtree *t, int32_t i)
{
    return i >= 0 && i < t->n && t->a[i].type == VT_JN_STR ? t->z + t->a[i].iStr : NULL;
}
/* NUM node value: returns 1 and sets *pd, else 0 (also for i < 0). */
static inline int vt__jt_num(const struct vt_jtree *t, int32_t i, double *pd)
{
    if (i < 0 || i >= t->n || t->a[i].type != VT_JN_NUM) return 0;
    *pd = t->a[i].d;
    return 1;
}
/* NUM node written as an int64: returns 1 and sets *pi, else 0. */
static inline int vt__jt_int(const struct vt_jtree *t, int32_t i, int64_t *pi)
{
    if (i < 0 || i >= t->n || t->a[i].type != VT_JN_NUM || t->a[i].bInt != 1) return 0;
    *pi = t->a[i].i;
    return 1;
}
/* NUM node written as an integer in [0, 2^64) (an address): returns 1 and sets *pu, else 0. */
static inline int vt__jt_u64(const struct vt_jtree *t, int32_t i, uint64_t *pu)
{
    if (i < 0 || i >= t->n || t->a[i].type != VT_JN_NUM || !t->a[i].bInt || (t->a[i].bInt == 1 && t->a[i].i < 0))
        return 0;
    *pu = (uint64_t)t->a[i].i;
    return 1;
}

#endif
