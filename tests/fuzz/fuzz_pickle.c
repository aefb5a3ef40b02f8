/* Fuzz target: the restricted unpickler on raw bytes, claiming event-like dicts as the snapshot importer does. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pickle.h"
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
    if (fclose(f) == 0) vt__import_one(zIn, VT_IMPORT_SNAPSHOT, -1, zOut, &o, NULL);
    vt_fuzz_scratch("input");
    vt_fuzz_scratch("imported.db");
}

/* Claims dicts added to lists when they hold an "action" key, reading a few fields as an importer would. */
static int claim(void *pArg, struct vt_pkobj *pParent, const struct vt_pkval *pKey, struct vt_pkval *pChild)
{
    int64_t v;
    double d;
    (void)pKey;
    if (pParent->type != VT_PK_LIST || pChild->type != VT_PK_DICT || !vt__pk_get(pChild, "action")) return VT_PK_KEEP;
    *(int64_t *)pArg += vt__pk_int(vt__pk_get(pChild, "addr"), &v) + vt__pk_num(vt__pk_get(pChild, "time_us"), &d) +
                        (vt__pk_str(vt__pk_get(pChild, "action")) != NULL) + (int64_t)vt__pk_len(vt__pk_get(pChild, "frames"));
    return VT_PK_CLAIM;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vt__src s;
    struct vt_pkval root;
    int64_t n = 0;
    struct vt_pk *p;
    if (size % 8 == 0) import_all(data, size); /* one input in eight: the whole importer too (slower) */
    vt__src_open_mem(&s, data, size);
    p = vt__pk_new(&s, size && (data[size - 1] & 1) ? claim : NULL, &n);
    if (!p) return 0;
    if (size && (data[size - 1] & 2)) { /* half the inputs through the memo-use index pass first */
        struct vt__src pre;
        vt__src_open_mem(&pre, data, size);
        if (vt__pk_index(p, &pre) != VT_PK_OK) {
            vt__pk_free(p);
            return 0;
        }
    }
    if (vt__pk_run(p, &root) == VT_PK_OK) {
        const struct vt_pkval *k, *v;
        for (size_t i = 0; vt__pk_pair(&root, i, &k, &v); i++) n += (int64_t)vt__pk_len(v);
    }
    vt__pk_free(p);
    return n == -1;
}
