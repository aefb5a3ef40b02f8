/* The unpickler's accessors: typed reads of the plain data it built (pickle.h, "Value helpers"), and its state. */
#include "pickle.h"

#include <string.h>

const struct vt_pkval *vt__pk_get(const struct vt_pkval *pDict, const char *zKey)
{
    const struct vt_pkobj *o;
    size_t n = strlen(zKey);
    if (!pDict || pDict->type != VT_PK_DICT) return NULL;
    o = pDict->u.p;
    for (size_t i = o->n; i-- > 0;) {
        const struct vt_pkval *k = &o->u.a[2 * i];
        if (k->type == VT_PK_STR && k->u.p->n == n && !memcmp(k->u.p->u.z, zKey, n)) return &o->u.a[2 * i + 1];
    }
    return NULL;
}

const char *vt__pk_str(const struct vt_pkval *v)
{
    return v && v->type == VT_PK_STR ? v->u.p->u.z : NULL;
}

int vt__pk_int(const struct vt_pkval *v, int64_t *pOut)
{
    if (!v || (v->type != VT_PK_INT && v->type != VT_PK_BOOL)) return 0;
    *pOut = v->u.i;
    return 1;
}

int vt__pk_u64(const struct vt_pkval *v, uint64_t *pOut)
{
    if (!v || !((v->type == VT_PK_INT && v->u.i >= 0) || v->type == VT_PK_U64)) return 0;
    *pOut = (uint64_t)v->u.i;
    return 1;
}

int vt__pk_num(const struct vt_pkval *v, double *pOut)
{
    if (v && v->type == VT_PK_FLOAT) {
        *pOut = v->u.f;
        return 1;
    }
    if (v && (v->type == VT_PK_INT || v->type == VT_PK_BOOL)) {
        *pOut = (double)v->u.i;
        return 1;
    }
    return 0;
}

size_t vt__pk_len(const struct vt_pkval *v)
{
    return v && v->type >= VT_PK_LIST && v->type <= VT_PK_DICT ? v->u.p->n : 0;
}

const struct vt_pkval *vt__pk_item(const struct vt_pkval *v, size_t i)
{
    if (!v || (v->type != VT_PK_LIST && v->type != VT_PK_TUPLE) || i >= v->u.p->n) return NULL;
    return &v->u.p->u.a[i];
}

int vt__pk_pair(const struct vt_pkval *v, size_t i, const struct vt_pkval **ppKey, const struct vt_pkval **ppVal)
{
    if (!v || v->type != VT_PK_DICT || i >= v->u.p->n) return 0;
    *ppKey = &v->u.p->u.a[2 * i];
    *ppVal = &v->u.p->u.a[2 * i + 1];
    return 1;
}

const char *vt__pk_errmsg(const struct vt_pk *p)
{
    return p->zErr;
}

int64_t vt__pk_offset(const struct vt_pk *p)
{
    return p->nBase + (int64_t)p->iPos;
}

int64_t vt__pk_live(const struct vt_pk *p)
{
    return p->nLive;
}

void vt__pk_lists_only(struct vt_pk *p)
{
    p->bListsOnly = 1;
}
