/* The per-import context of the importers: notes for the user and the first failure, nothing printed. */
#include "import.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/errors.h"

void vt__imp_note(struct vt__imp *x, const char *zFmt, ...)
{
    va_list ap;
    char z[512], **az;
    va_start(ap, zFmt);
    vsnprintf(z, sizeof z, zFmt, ap);
    va_end(ap);
    for (int i = 0; i < x->nNote; i++)
        if (!strcmp(x->azNote[i], z)) return;
    if (x->nNote >= 64) return; /* a hostile file cannot flood the notes */
    az = realloc(x->azNote, (size_t)(x->nNote + 1) * sizeof *az);
    if (!az) return;
    x->azNote = az;
    if ((az[x->nNote] = strdup(z)) != NULL) x->nNote++;
}

int vt__imp_fail(struct vt__imp *x, int rc, const char *zFmt, ...)
{
    va_list ap;
    if (x->rc != VT_EXIT_OK) return x->rc;
    va_start(ap, zFmt);
    vsnprintf(x->zErr, sizeof x->zErr, zFmt, ap);
    va_end(ap);
    x->rc = rc;
    return rc;
}

int vt__imp_tb_fail(struct vt__imp *x)
{
    return vt__imp_fail(x, VT_EXIT_INTERNAL, "%s", vt__tb_errmsg(x->tb)[0] ? vt__tb_errmsg(x->tb) : "cannot write the trace");
}

