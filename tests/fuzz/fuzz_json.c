/* Fuzz target: the streaming JSON reader on raw bytes: trace events read as trees (whole, or the members
 * the Kineto importer names for odd sizes), everything else as tokens. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "fuzz_common.h"
#include "import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The whole importer on the bytes as a file: a trace is written (or one clear failure), never a crash. */
static void import_all(const uint8_t *data, size_t size)
{
    char zIn[600], zOut[600];
    struct vt_import_opts o = {1, 1};
    FILE *f;
    snprintf(zIn, sizeof zIn, "%s", vt_fuzz_scratch("input")); /* one static buffer: copy each */
    snprintf(zOut, sizeof zOut, "%s", vt_fuzz_scratch("imported.db"));
    f = fopen(zIn, "wb");
    if (!f) return;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return;
    }
    if (fclose(f) == 0) vt__import_one(zIn, VT_IMPORT_KINETO, -1, zOut, &o, NULL);
    vt_fuzz_scratch("input");
    vt_fuzz_scratch("imported.db");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const azTop[] = {"name", "args"}, *const azArg[] = {"Bytes"};
    struct vt_jkeys kTop, kArg;
    int32_t aTop[2], aArg[1];
    const struct vt_jsel selArg = {&kArg, aArg, NULL}, *apSub[2] = {NULL, &selArg};
    const struct vt_jsel selTop = {&kTop, aTop, apSub};
    struct vt__src s;
    struct vt_jtree t = {0};
    struct vt_js *j;
    int tok, n = 0;
    vt__jt_keys(&kTop, azTop, 2);
    vt__jt_keys(&kArg, azArg, 1);
    if (size % 8 == 0) import_all(data, size); /* one input in eight: the whole importer too (slower) */
    vt__src_open_mem(&s, data, size);
    j = vt__js_new(&s);
    if (!j) return 0;
    while ((tok = vt__js_next(j)) > 0) {
        if (tok == VT_JS_OBJECT && vt__js_depth(j) == 3) { /* what the Kineto importer reads as one event */
            double d;
            if (size % 2) { /* odd sizes: read as the importer does, with a selection */
                if (vt__js_read_tree_sel(j, tok, &t, &selTop) != 0) break;
                n += vt__jt_str(&t, aTop[0]) != NULL;
                n += vt__jt_num(&t, aArg[0], &d);
                continue;
            }
            if (vt__js_read_tree(j, tok, &t) != 0) break;
            n += vt__jt_str(&t, vt__jt_get(&t, 0, "name")) != NULL;
            n += vt__jt_num(&t, vt__jt_get(&t, vt__jt_get(&t, 0, "args"), "Bytes"), &d);
        } else if (tok == VT_JS_ARRAY && vt__js_depth(j) == 4) {
            if (vt__js_skip(j) != 0) break;
        } else if (tok == VT_JS_KEY || tok == VT_JS_STRING) {
            size_t len;
            n += strlen(vt__js_text(j, &len)) <= len;
        }
    }
    vt__jtree_free(&t);
    vt__js_free(j);
    return n == -1;
}
