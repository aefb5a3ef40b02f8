/* What PyTorch's own recorders write for a simulated process: memory snapshots and torch.profiler traces. */
#include "ptrec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace/schema.h"

enum { A_ALLOC, A_FREE_REQ, A_FREE_DONE, A_SEG_ALLOC, A_SEG_FREE, A_OOM, A_SEG_MAP, A_SEG_UNMAP };
static const char *const azAction[] = {"alloc",         "free_requested", "free_completed", "segment_alloc",
                                       "segment_free",  "oom",            "segment_map",    "segment_unmap"};

struct ev {       /* one event of the allocation history */
    int64_t ts, addr, size;
    int action, site;
};
struct blk {      /* a live block (tensor) or segment, or a mapped range of an expandable segment */
    int64_t addr, size;
    int64_t page;    /* a mapped range: its pool's page size (2 MiB small, 20 MiB large); 0 otherwise */
    int site;
};
struct rng {      /* a closed record_function range */
    int64_t start, end;
    char zName[96];
};
struct buf {      /* a growing byte buffer */
    char *z;
    size_t n, nAlloc;
    int bOom;
};

struct ptrec {
    struct ptrec_opt o;
    struct js_obs obs;
    char zDir[1024];
    char zSnap[256];
    char zKineto[256];       /* the profiler trace's file name */
    int64_t pid, wallOffset; /* wall ns = CUPTI ns + wallOffset */
    int device;
    char zHost[64];
    char **azSpec;           /* site specs seen (copied: the process is gone when the files are written) */
    int nSpec;
    char **azOp;             /* operator hints per site */
    int nOp;
    struct ev *aEv;          /* the history ring */
    int64_t nEv;             /* events recorded (the ring keeps the last o.maxEntries) */
    int nRing;
    struct blk *aLive, *aSeg, *aMap;  /* aMap: the mapped ranges of the expandable segments (disjoint) */
    int nLive, nLiveAlloc, nSeg, nSegAlloc, nMap, nMapAlloc;
    int bExpandable;         /* the allocator runs with expandable_segments:True */
    struct rng *aRng;
    int nRng, nRngAlloc;
    int nOom;
    /* the profiler */
    int bWindow;
    int64_t winAlloc, winResv;
    struct buf k;            /* trace events written so far */
    int64_t extId;
    char azStack[32][200];   /* python_function spans open on the main thread, outermost first */
    int64_t aStackStart[32], aStackId[32];
    int nStack;
    int64_t lastTs, pyId;
    int bFailed;
};

/* ---- buffers ---- */

static void buf_add(struct buf *b, const void *p, size_t n)
{
    if (b->bOom) return;
    if (b->n + n + 1 > b->nAlloc) {
        size_t nNew = b->nAlloc ? b->nAlloc * 2 : 65536;
        while (nNew < b->n + n + 1) nNew *= 2;
        char *z = realloc(b->z, nNew);
        if (!z) {
            b->bOom = 1;
            return;
        }
        b->z = z;
        b->nAlloc = nNew;
    }
    memcpy(b->z + b->n, p, n);
    b->n += n;
    b->z[b->n] = 0;
}

static void buf_printf(struct buf *b, const char *zFmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
#include <stdarg.h>
static void buf_printf(struct buf *b, const char *zFmt, ...)
{
    char z[4096];
    va_list ap;
    int n;
    va_start(ap, zFmt);
    n = vsnprintf(z, sizeof z, zFmt, ap);
    va_end(ap);
    if (n < 0) return;
    buf_add(b, z, (size_t)n < sizeof z ? (size_t)n : sizeof z - 1);
}

/* A JSON string literal of z. */
static void buf_json(struct buf *b, const char *z)
{
    buf_add(b, "\"", 1);
    for (; *z; z++) {
        if (*z == '"' || *z == '\\') {
            char e[2] = {'\\', *z};
            buf_add(b, e, 2);
        } else if ((unsigned char)*z < 0x20) {
            buf_printf(b, "\\u%04x", *z);
        } else {
            buf_add(b, z, 1);
        }
    }
    buf_add(b, "\"", 1);
}

/* Array a (elements of sz bytes, *pnAlloc allocated) with room for element n; NULL when out of memory. */
static void *grow(void *a, int *pnAlloc, int n, size_t sz)
{
    if (n < *pnAlloc) return a;
    int nNew = *pnAlloc ? *pnAlloc * 2 : 64;
    void *aNew = realloc(a, sz * (size_t)nNew);
    if (aNew) *pnAlloc = nNew;
    return aNew;
}

/* ---- sites ---- */

/* Room for string slot i in *paz (*pn slots, new ones NULL); 0, or -1 when out of memory (r failed). */
static int slot(struct ptrec *r, char ***paz, int *pn, int i)
{
    char **az;
    if (i < *pn) return 0;
    az = realloc(*paz, sizeof(char *) * (size_t)(i + 64));
    if (!az) {
        r->bFailed = 1;
        return -1;
    }
    memset(az + *pn, 0, sizeof(char *) * (size_t)(i + 64 - *pn));
    *paz = az;
    *pn = i + 64;
    return 0;
}

/* Copy site's spec from the process (once). */
static void spec_note(struct ptrec *r, const struct js *j, int site)
{
    if (site < 0 || slot(r, &r->azSpec, &r->nSpec, site) != 0) return;
    if (!r->azSpec[site]) {
        r->azSpec[site] = strdup(js_site_spec(j, site));
        if (!r->azSpec[site]) r->bFailed = 1;
    }
}

static const char *spec_of(const struct ptrec *r, int site)
{
    return site >= 0 && site < r->nSpec && r->azSpec[site] ? r->azSpec[site] : "";
}

/* The innermost frame of a spec ("lib:torch/nn/modules/linear.py:134:Linear.forward") into z; 0 when none. */
static int frame_at(const char *zSpec, int k, char *z, size_t n)
{
    for (int i = 0; i < k && zSpec; i++) {
        zSpec = strchr(zSpec, '|');
        if (zSpec) zSpec++;
    }
    if (!zSpec || !*zSpec) return 0;
    size_t m = strcspn(zSpec, "|");
    snprintf(z, n, "%.*s", (int)m, zSpec);
    return 1;
}

/* The number of frames of a spec. */
static int frame_count(const char *zSpec)
{
    int n = *zSpec ? 1 : 0;
    for (; *zSpec; zSpec++) n += *zSpec == '|';
    return n;
}

/* Split a frame "FILE:LINE:FUNCTION" (FILE may carry a lib:/std:/gen: prefix); 0 on a malformed frame. */
static int frame_split(const char *zFrame, char *zFile, size_t nFile, int *pLine, const char **pzFn)
{
    const char *zLine = strchr(zFrame + 4 < zFrame + strlen(zFrame) ? zFrame + 4 : zFrame, ':'), *zFn;
    if (!zLine) return 0;
    zFn = strchr(zLine + 1, ':');
    if (!zFn) return 0;
    snprintf(zFile, nFile, "%.*s", (int)(zLine - zFrame), zFrame);
    *pLine = atoi(zLine + 1);
    *pzFn = zFn + 1;
    return 1;
}

/* The operator torch.profiler shows around an allocation at site (native chain `native`). */
static const char *op_of(const struct ptrec *r, int site, int native)
{
    static const struct {
        const char *zFn, *zOp;
    } aMap[] = {
        {"_conv_forward", "aten::cudnn_convolution"}, {"batch_norm", "aten::cudnn_batch_norm"},
        {"_max_pool2d", "aten::max_pool2d_with_indices"}, {"Bottleneck.forward", "aten::add"},
        {"Linear.forward", "aten::addmm"}, {"embedding", "aten::embedding"},
        {"multi_head_attention_forward", "aten::_scaled_dot_product_flash_attention"},
        {"scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention"},
        {"layer_norm", "aten::native_layer_norm"}, {"cross_entropy", "aten::_log_softmax"},
        {"Adam._init_group", "aten::zeros_like"}, {"_single_tensor_sgd", "aten::clone"},
        {"Module.to", "aten::_to_copy"}, {"DynamicLayer.update", "aten::cat"},
    };
    char z[512];
    if (site >= 0 && site < r->nOp && r->azOp[site]) return r->azOp[site];
    if (native == JS_NAT_ACCGRAD) return "aten::new_empty_strided";
    if (native == JS_NAT_BACKWARD) return "aten::mm";
    if (native == JS_NAT_CUBLAS) return "aten::addmm";
    if (!frame_at(spec_of(r, site), 0, z, sizeof z)) return "aten::empty";
    for (size_t i = 0; i < sizeof aMap / sizeof aMap[0]; i++)
        if (strstr(z, aMap[i].zFn)) return aMap[i].zOp;
    return "aten::empty";
}

/* ---- the allocation history ---- */

static void ev_add(struct ptrec *r, int64_t ts, int action, int64_t addr, int64_t size, int site)
{
    struct ev *e;
    if (!(r->o.flags & PTREC_HISTORY) || !r->aEv) return;
    e = &r->aEv[r->nEv % r->o.maxEntries];
    e->ts = ts;
    e->action = action;
    e->addr = addr;
    e->size = size;
    e->site = site;
    r->nEv++;
    if (r->nRing < r->o.maxEntries) r->nRing++;
}

/* Add (bAdd) or remove the block at addr in list *pa. */
static void blk_note(struct ptrec *r, struct blk **pa, int *pn, int *pnAlloc, int bAdd, int64_t addr, int64_t size, int site)
{
    if (bAdd) {
        struct blk *a = grow(*pa, pnAlloc, *pn, sizeof **pa);
        if (!a) {
            r->bFailed = 1;
            return;
        }
        *pa = a;
        a[*pn].addr = addr;
        a[*pn].size = size;
        a[*pn].page = 0;
        a[*pn].site = site;
        (*pn)++;
        return;
    }
    for (int i = *pn - 1; i >= 0; i--)
        if ((*pa)[i].addr == addr) {
            (*pa)[i] = (*pa)[--*pn];
            return;
        }
}

/*
 * Note pages of an expandable segment mapped (bMap) or unmapped over [addr, addr + n) in r->aMap,
 * whose ranges stay disjoint: an unmapping cuts what it covers out of the ranges it meets.
 */
static void map_note(struct ptrec *r, int bMap, int64_t addr, int64_t n, int64_t page, int site)
{
    if (bMap) {
        blk_note(r, &r->aMap, &r->nMap, &r->nMapAlloc, 1, addr, n, site);
        if (r->nMap > 0 && r->aMap[r->nMap - 1].addr == addr) r->aMap[r->nMap - 1].page = page;
        return;
    }
    for (int i = 0; i < r->nMap;) {
        struct blk m = r->aMap[i];
        if (m.addr >= addr + n || m.addr + m.size <= addr) {
            i++;
            continue;
        }
        r->aMap[i] = r->aMap[--r->nMap]; /* this range goes; what lies outside the unmapping stays */
        if (m.addr < addr) {
            blk_note(r, &r->aMap, &r->nMap, &r->nMapAlloc, 1, m.addr, addr - m.addr, m.site);
            r->aMap[r->nMap - 1].page = m.page;
        }
        if (m.addr + m.size > addr + n) {
            blk_note(r, &r->aMap, &r->nMap, &r->nMapAlloc, 1, addr + n, m.addr + m.size - addr - n, m.site);
            r->aMap[r->nMap - 1].page = m.page;
        }
    }
}

/* ---- pickles (protocol 4, plain data only, as torch.cuda.memory._dump_snapshot writes them) ---- */

struct pk {
    FILE *f;
    int nMemo;
    int *aMemo;   /* memo index of each site's frames list, -1 none */
    int nSite;
};

static void pk_byte(struct pk *p, int c)
{
    fputc(c, p->f);
}

static void pk_u32(struct pk *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) fputc((int)((v >> (8 * i)) & 0xff), p->f);
}

static void pk_str(struct pk *p, const char *z)
{
    size_t n = strlen(z);
    if (n < 256) {
        pk_byte(p, 0x8c); /* SHORT_BINUNICODE */
        pk_byte(p, (int)n);
    } else {
        pk_byte(p, 'X'); /* BINUNICODE */
        pk_u32(p, (uint32_t)n);
    }
    fwrite(z, 1, n, p->f);
}

static void pk_int(struct pk *p, int64_t v)
{
    if (v >= 0 && v < 256) {
        pk_byte(p, 'K');
        pk_byte(p, (int)v);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        pk_byte(p, 'J');
        pk_u32(p, (uint32_t)(int32_t)v);
    } else {
        pk_byte(p, 0x8a); /* LONG1: 8 bytes little-endian two's complement */
        pk_byte(p, 8);
        for (int i = 0; i < 8; i++) pk_byte(p, (int)(((uint64_t)v >> (8 * i)) & 0xff));
    }
}

static void pk_bool(struct pk *p, int b)
{
    pk_byte(p, b ? 0x88 : 0x89);
}

/* key: value pairs are written between pk_dict_begin and pk_dict_end (one SETITEMS). */
static void pk_dict_begin(struct pk *p)
{
    pk_byte(p, '}');
    pk_byte(p, '(');
}

static void pk_dict_end(struct pk *p)
{
    pk_byte(p, 'u');
}

/* A list of n items written by the caller, in batches of 1000 as Python's pickler does. */
static void pk_list_begin(struct pk *p)
{
    pk_byte(p, ']');
}

static void pk_list_item_start(struct pk *p, int64_t i)
{
    if (i % 1000 == 0) {
        if (i) pk_byte(p, 'e'); /* APPENDS */
        pk_byte(p, '(');
    }
}

static void pk_list_end(struct pk *p, int64_t n)
{
    if (n) pk_byte(p, 'e');
}

/* The Python frames of a site, innermost first ([] for a thread without Python), shared through the memo. */
static void pk_frames(struct pk *p, const struct ptrec *r, int site, const struct js *jPaths)
{
    const char *zSpec = spec_of(r, site);
    int n = frame_count(zSpec);
    if (site >= 0 && site < p->nSite && p->aMemo[site] >= 0) {
        int m = p->aMemo[site];
        if (m < 256) {
            pk_byte(p, 'h');
            pk_byte(p, m);
        } else {
            pk_byte(p, 'j');
            pk_u32(p, (uint32_t)m);
        }
        return;
    }
    pk_list_begin(p);
    for (int i = 0; i < n; i++) {
        char zFrame[600], zFile[300], zPath[400];
        const char *zFn;
        int line;
        if (!frame_at(zSpec, i, zFrame, sizeof zFrame) || !frame_split(zFrame, zFile, sizeof zFile, &line, &zFn)) continue;
        js_py_path(jPaths, zFile, zPath, sizeof zPath);
        pk_list_item_start(p, i);
        pk_dict_begin(p);
        pk_str(p, "filename");
        pk_str(p, zPath);
        pk_str(p, "line");
        pk_int(p, line);
        pk_str(p, "name");
        pk_str(p, zFn);
        pk_dict_end(p);
    }
    pk_list_end(p, n);
    if (site >= 0 && site < p->nSite) {
        pk_byte(p, 0x94); /* MEMOIZE */
        p->aMemo[site] = p->nMemo++;
    }
}

/* The history event e as _snapshot() gives it. */
static void pk_event(struct pk *p, const struct ptrec *r, const struct ev *e, const struct js *jPaths)
{
    pk_dict_begin(p);
    pk_str(p, "action");
    pk_str(p, azAction[e->action]);
    pk_str(p, e->action == A_OOM ? "device_free" : "addr");
    pk_int(p, e->addr);
    pk_str(p, "size");
    pk_int(p, e->size);
    pk_str(p, "stream");
    pk_int(p, 0);
    pk_str(p, "time_us");
    pk_int(p, (e->ts + r->wallOffset) / 1000);
    pk_str(p, "frames");
    pk_frames(p, r, e->action == A_FREE_REQ || e->action == A_FREE_DONE ? -1 : e->site, jPaths);
    pk_dict_end(p);
}

static int cmp_blk(const void *x, const void *y)
{
    const struct blk *a = x, *b = y;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* One segment of the state at the dump, with its blocks (live ones, and the free gaps between them). */
static void pk_segment(struct pk *p, const struct ptrec *r, const struct blk *s, const struct blk *aLive, int nLive,
                       const struct js *jPaths)
{
    int64_t used = 0, at = s->addr;
    int nIn = 0, k = 0;
    for (int i = 0; i < nLive; i++)
        if (aLive[i].addr >= s->addr && aLive[i].addr < s->addr + s->size) used += aLive[i].size, nIn++;
    pk_dict_begin(p);
    pk_str(p, "device");
    pk_int(p, r->device);
    pk_str(p, "address");
    pk_int(p, s->addr);
    pk_str(p, "total_size");
    pk_int(p, s->size);
    pk_str(p, "allocated_size");
    pk_int(p, used);
    pk_str(p, "active_size");
    pk_int(p, used);
    pk_str(p, "requested_size");
    pk_int(p, used);
    pk_str(p, "stream");
    pk_int(p, 0);
    pk_str(p, "segment_type");
    pk_str(p, (s->page ? s->page <= 2 * MiB : s->size <= 2 * MiB) ? "small" : "large");
    pk_str(p, "segment_pool_id");
    pk_int(p, 0);
    pk_int(p, 0);
    pk_byte(p, 0x86); /* TUPLE2 */
    pk_str(p, "is_expandable");
    pk_bool(p, s->page != 0);
    pk_str(p, "frames");
    pk_frames(p, r, s->site, jPaths);
    pk_str(p, "blocks");
    pk_list_begin(p);
    for (int i = 0; i < nLive; i++) {
        const struct blk *b = &aLive[i];
        if (b->addr < s->addr || b->addr >= s->addr + s->size) continue;
        if (b->addr > at) { /* the free gap before it */
            pk_list_item_start(p, k++);
            pk_dict_begin(p);
            pk_str(p, "address"), pk_int(p, at);
            pk_str(p, "size"), pk_int(p, b->addr - at);
            pk_str(p, "requested_size"), pk_int(p, 0);
            pk_str(p, "state"), pk_str(p, "inactive");
            pk_str(p, "frames"), pk_frames(p, r, -1, jPaths);
            pk_dict_end(p);
        }
        pk_list_item_start(p, k++);
        pk_dict_begin(p);
        pk_str(p, "address"), pk_int(p, b->addr);
        pk_str(p, "size"), pk_int(p, b->size);
        pk_str(p, "requested_size"), pk_int(p, b->size);
        pk_str(p, "state"), pk_str(p, "active_allocated");
        pk_str(p, "frames"), pk_frames(p, r, b->site, jPaths);
        pk_dict_end(p);
        at = b->addr + b->size;
    }
    if (at < s->addr + s->size) {
        pk_list_item_start(p, k++);
        pk_dict_begin(p);
        pk_str(p, "address"), pk_int(p, at);
        pk_str(p, "size"), pk_int(p, s->addr + s->size - at);
        pk_str(p, "requested_size"), pk_int(p, 0);
        pk_str(p, "state"), pk_str(p, "inactive");
        pk_str(p, "frames"), pk_frames(p, r, -1, jPaths);
        pk_dict_end(p);
    }
    pk_list_end(p, k);
    (void)nIn;
    pk_dict_end(p);
}

/*
 * Write the snapshot of the state now into the run's folder as zName: the live segments and
 * blocks, the history ring (oldest first), the allocator's settings and the annotations.
 * jPaths: a process for the platform's paths (only its configuration is read). 0 or -1.
 */
static int write_snapshot(struct ptrec *r, const char *zName, const struct js *jPaths)
{
    char zPath[1400];
    struct pk p;
    struct blk *aLive, *aMap;
    int64_t first = r->nEv - r->nRing;
    int rc, nMap = 0;
    snprintf(zPath, sizeof zPath, "%s/%s", r->zDir, zName);
    memset(&p, 0, sizeof p);
    p.f = fopen(zPath, "wb");
    p.nSite = r->nSpec;
    p.aMemo = malloc(sizeof(int) * (size_t)(r->nSpec + 1));
    aLive = malloc(sizeof *aLive * (size_t)(r->nLive + 1));
    aMap = malloc(sizeof *aMap * (size_t)(r->nMap + 1));
    if (!p.f || !p.aMemo || !aLive || !aMap) {
        if (p.f) fclose(p.f);
        free(p.aMemo);
        free(aLive);
        free(aMap);
        return -1;
    }
    /* an expandable segment is dumped as one segment per contiguous mapped range (snapshot()) */
    if (r->nMap) memcpy(aMap, r->aMap, sizeof *aMap * (size_t)r->nMap);
    qsort(aMap, (size_t)r->nMap, sizeof *aMap, cmp_blk);
    for (int i = 0; i < r->nMap; i++) {
        if (nMap && aMap[nMap - 1].page == aMap[i].page && aMap[nMap - 1].addr + aMap[nMap - 1].size == aMap[i].addr)
            aMap[nMap - 1].size += aMap[i].size;
        else
            aMap[nMap++] = aMap[i];
    }
    for (int i = 0; i < r->nSpec; i++) p.aMemo[i] = -1;
    memcpy(aLive, r->aLive, sizeof *aLive * (size_t)r->nLive);
    qsort(aLive, (size_t)r->nLive, sizeof *aLive, cmp_blk);
    pk_byte(&p, 0x80);
    pk_byte(&p, 4);
    pk_dict_begin(&p);
    pk_str(&p, "segments");
    pk_list_begin(&p);
    for (int i = 0; i < r->nSeg + nMap; i++) {
        pk_list_item_start(&p, i);
        pk_segment(&p, r, i < r->nSeg ? &r->aSeg[i] : &aMap[i - r->nSeg], aLive, r->nLive, jPaths);
    }
    pk_list_end(&p, r->nSeg + nMap);
    pk_str(&p, "device_traces");
    pk_list_begin(&p);
    pk_list_item_start(&p, 0);
    pk_list_begin(&p);
    for (int64_t i = 0; i < r->nRing; i++) {
        pk_list_item_start(&p, i);
        pk_event(&p, r, &r->aEv[(first + i) % r->o.maxEntries], jPaths);
    }
    pk_list_end(&p, r->nRing);
    pk_list_end(&p, 1);
    pk_str(&p, "allocator_settings");
    pk_dict_begin(&p);
    pk_str(&p, "PYTORCH_CUDA_ALLOC_CONF"), pk_str(&p, r->bExpandable ? "expandable_segments:True" : "");
    pk_str(&p, "max_split_size"), pk_int(&p, -1);
    pk_str(&p, "garbage_collection_threshold"), pk_byte(&p, 'G');
    for (int i = 0; i < 8; i++) pk_byte(&p, 0); /* 0.0, big-endian double */
    pk_str(&p, "expandable_segments"), pk_bool(&p, r->bExpandable);
    pk_dict_end(&p);
    pk_str(&p, "external_annotations");
    pk_list_begin(&p);
    for (int i = 0; i < r->nRng; i++) {
        for (int e = 0; e < 2; e++) {
            pk_list_item_start(&p, 2 * i + e);
            pk_dict_begin(&p);
            pk_str(&p, "stage"), pk_str(&p, e ? "END" : "START");
            pk_str(&p, "name"), pk_str(&p, r->aRng[i].zName);
            pk_str(&p, "device"), pk_int(&p, r->device);
            pk_str(&p, "time_us"), pk_int(&p, ((e ? r->aRng[i].end : r->aRng[i].start) + r->wallOffset) / 1000);
            pk_dict_end(&p);
        }
    }
    pk_list_end(&p, 2 * r->nRng);
    pk_dict_end(&p);
    pk_byte(&p, '.');
    rc = ferror(p.f) ? -1 : 0;
    if (fclose(p.f) != 0) rc = -1;
    free(p.aMemo);
    free(aLive);
    free(aMap);
    return rc;
}

/* ---- torch.profiler ---- */

/* The profiler's name of a Python frame: "torch/nn/modules/module.py(1786): _call_impl". */
static void py_name(const char *zFrame, char *z, size_t n)
{
    char zFile[300];
    const char *zFn, *zF;
    int line;
    if (!frame_split(zFrame, zFile, sizeof zFile, &line, &zFn)) {
        snprintf(z, n, "%.190s", zFrame);
        return;
    }
    zF = zFile;
    if (!strncmp(zF, "lib:", 4) || !strncmp(zF, "std:", 4) || !strncmp(zF, "gen:", 4)) zF += 4;
    snprintf(z, n, "%.120s(%d): %.60s", zF, line, zFn);
}

/* Close the open python_function spans beyond depth keep, at ts. */
static void py_close(struct ptrec *r, int keep, int64_t ts)
{
    while (r->nStack > keep) {
        int i = --r->nStack;
        buf_printf(&r->k, ",\n{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": ");
        buf_json(&r->k, r->azStack[i]);
        buf_printf(&r->k, ", \"pid\": %lld, \"tid\": %lld, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"Python parent id\": %lld, "
                          "\"Python id\": %lld, \"Python thread\": 0}}",
                   (long long)r->pid, (long long)r->pid, (double)(r->aStackStart[i] + r->wallOffset) / 1000.0,
                   (double)(ts - r->aStackStart[i]) / 1000.0, (long long)(i ? r->aStackId[i - 1] : 0),
                   (long long)r->aStackId[i]);
    }
}

/* The main thread's Python frames become those of site at ts (spans of unchanged outer frames go on). */
static void py_enter(struct ptrec *r, int site, int64_t ts)
{
    const char *zSpec = spec_of(r, site);
    int n = frame_count(zSpec), keep = 0;
    char az[32][200];
    if (n > 32) n = 32;
    for (int i = 0; i < n; i++) { /* outermost first */
        char zFrame[600];
        frame_at(zSpec, n - 1 - i, zFrame, sizeof zFrame);
        py_name(zFrame, az[i], sizeof az[i]);
    }
    while (keep < n && keep < r->nStack && !strcmp(az[keep], r->azStack[keep])) keep++;
    py_close(r, keep, ts - 80);
    for (int i = keep; i < n; i++) {
        snprintf(r->azStack[i], sizeof r->azStack[i], "%s", az[i]);
        r->aStackStart[i] = ts - 70 + i;
        r->aStackId[i] = ++r->pyId;
    }
    r->nStack = n;
}

/* A [memory] instant (and the operator around an allocation) in the profiler's window. */
static void k_memory(struct ptrec *r, const struct js *j, int64_t ts, int64_t addr, int64_t bytes, int site, int native)
{
    int64_t tid = js_native_engine(native) ? r->pid + 31 : r->pid;
    double t = (double)(ts + r->wallOffset) / 1000.0;
    if (bytes > 0) {
        if (r->o.bWithStack && !js_native_engine(native)) py_enter(r, site, ts);
        if (js_native_engine(native)) {
            buf_printf(&r->k, ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"autograd::engine::evaluate_function: "
                              "%s\", \"pid\": %lld, \"tid\": %lld, \"ts\": %.3f, \"dur\": 0.120, \"args\": "
                              "{\"External id\": %lld, \"Fwd thread id\": 1}}",
                       native == JS_NAT_ACCGRAD ? "torch::autograd::AccumulateGrad" : "MmBackward0", (long long)r->pid,
                       (long long)tid, t - 0.06, (long long)++r->extId);
        }
        buf_printf(&r->k, ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": ");
        buf_json(&r->k, op_of(r, site, native));
        buf_printf(&r->k, ", \"pid\": %lld, \"tid\": %lld, \"ts\": %.3f, \"dur\": 0.100, \"args\": {\"External id\": %lld}}",
                   (long long)r->pid, (long long)tid, t - 0.05, (long long)++r->extId);
    }
    buf_printf(&r->k, ",\n{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": %lld, "
                      "\"tid\": %lld, \"ts\": %.3f, \"args\": {\"Device Type\": 1, \"Device Id\": %d",
               (long long)r->pid, (long long)tid, t, r->device);
    if (!r->o.bKinetoNoAddr)
        buf_printf(&r->k, ", \"Addr\": %lld, \"Bytes\": %lld, \"Total Allocated\": %lld, \"Total Reserved\": %lld}}",
                   (long long)addr, (long long)bytes, (long long)js_allocated(j), (long long)js_reserved(j));
    else
        buf_printf(&r->k, ", \"Bytes\": %lld}}", (long long)bytes);
    if (js_allocated(j) > r->winAlloc) r->winAlloc = js_allocated(j);
    if (js_reserved(j) > r->winResv) r->winResv = js_reserved(j);
    r->lastTs = ts;
}

/* ---- hooks ---- */

static void on_block(void *p, const struct js *j, int64_t ts, int bAlloc, int64_t addr, int64_t bytes, int site, int native)
{
    struct ptrec *r = p;
    spec_note(r, j, site);
    if (bAlloc) {
        ev_add(r, ts, A_ALLOC, addr, bytes, site);
        blk_note(r, &r->aLive, &r->nLive, &r->nLiveAlloc, 1, addr, bytes, site);
    } else {
        ev_add(r, ts, A_FREE_REQ, addr, bytes, site);
        ev_add(r, ts, A_FREE_DONE, addr, bytes, site);
        blk_note(r, &r->aLive, &r->nLive, &r->nLiveAlloc, 0, addr, bytes, site);
    }
    if (r->bWindow) k_memory(r, j, ts, addr, bAlloc ? bytes : -bytes, site, native);
}

static void on_segment(void *p, const struct js *j, int64_t ts, int bAlloc, int64_t addr, int64_t bytes, int site, int native)
{
    struct ptrec *r = p;
    (void)native;
    spec_note(r, j, site);
    ev_add(r, ts, bAlloc ? A_SEG_ALLOC : A_SEG_FREE, addr, bytes, site);
    blk_note(r, &r->aSeg, &r->nSeg, &r->nSegAlloc, bAlloc, addr, bytes, site);
}

static void on_map(void *p, const struct js *j, int64_t ts, int bMap, int64_t addr, int64_t bytes, int64_t page, int site,
                   int native)
{
    struct ptrec *r = p;
    (void)native;
    spec_note(r, j, site);
    ev_add(r, ts, bMap ? A_SEG_MAP : A_SEG_UNMAP, addr, bytes, site);
    map_note(r, bMap, addr, bytes, page, site);
}

static void on_oom(void *p, const struct js *j, int64_t ts, int64_t bytes, int64_t freeBytes, int site, int native)
{
    struct ptrec *r = p;
    (void)native;
    spec_note(r, j, site);
    ev_add(r, ts, A_OOM, freeBytes, bytes, site);
    if ((r->o.flags & PTREC_HISTORY) && r->nOom < 3) { /* the hook's out-of-memory observer: the first three */
        char z[300];
        snprintf(z, sizeof z, "vramtrace-%s-%lld.oom-%d.snapshot.pickle", r->zHost, (long long)r->pid, ++r->nOom);
        if (write_snapshot(r, z, j) != 0) r->bFailed = 1;
    }
}

static void on_range(void *p, const struct js *j, int64_t start, int64_t end, const char *zName)
{
    struct ptrec *r = p;
    /* record_function ranges reach the snapshot (the optimizer's are always there); the profiler's
     * own ProfilerStep#N only while it runs; NVTX ranges never */
    int bRecordFunction = strchr(zName, '#') != NULL;
    if ((r->o.flags & PTREC_HISTORY) && bRecordFunction && strncmp(zName, "ProfilerStep#", 13)) {
        struct rng *a = grow(r->aRng, &r->nRngAlloc, r->nRng, sizeof *r->aRng);
        if (!a) {
            r->bFailed = 1;
            return;
        }
        r->aRng = a;
        a[r->nRng].start = start;
        a[r->nRng].end = end;
        snprintf(a[r->nRng].zName, sizeof a[r->nRng].zName, "%s", zName);
        r->nRng++;
    }
    if (r->bWindow && bRecordFunction) {
        buf_printf(&r->k, ",\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": ");
        buf_json(&r->k, zName);
        buf_printf(&r->k, ", \"pid\": %lld, \"tid\": %lld, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": %lld}}",
                   (long long)r->pid, (long long)r->pid, (double)(start + r->wallOffset) / 1000.0,
                   (double)(end - start) / 1000.0, (long long)++r->extId);
    }
    (void)j;
}

static void on_kernel(void *p, const struct js *j, int64_t tCall, int64_t start, int64_t end, const char *zName, int64_t corr)
{
    struct ptrec *r = p;
    (void)j;
    if (!r->bWindow) return;
    buf_printf(&r->k, ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": %lld, \"tid\": "
                      "%lld, \"ts\": %.3f, \"dur\": 4.000, \"args\": {\"External id\": %lld, \"cbid\": 211, \"correlation\": %lld}}",
               (long long)r->pid, (long long)r->pid, (double)(tCall + r->wallOffset) / 1000.0, (long long)corr, (long long)corr);
    buf_printf(&r->k, ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ");
    buf_json(&r->k, zName);
    buf_printf(&r->k, ", \"pid\": %d, \"tid\": 7, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": %lld, \"device\": %d, "
                      "\"stream\": 7, \"correlation\": %lld, \"grid\": [256, 1, 1], \"block\": [256, 1, 1]}}",
               r->device, (double)(start + r->wallOffset) / 1000.0, (double)(end - start) / 1000.0, (long long)corr, r->device,
               (long long)corr);
}

static void on_copy(void *p, const struct js *j, int64_t tCall, int64_t start, int64_t end, int copyKind, int hostKind,
                    int64_t bytes, int64_t corr)
{
    struct ptrec *r = p;
    const char *zName = copyKind == VT_COPY_HTOD ? (hostKind == JS_PINNED ? "Memcpy HtoD (Pinned -> Device)"
                                                                          : "Memcpy HtoD (Pageable -> Device)")
                                                 : "Memcpy DtoH (Device -> Pageable)";
    (void)j;
    if (!r->bWindow) return;
    buf_printf(&r->k, ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": %lld, \"tid\": "
                      "%lld, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": %lld, \"cbid\": 41, \"correlation\": %lld}}",
               (long long)r->pid, (long long)r->pid, (double)(tCall + r->wallOffset) / 1000.0,
               (double)(end - tCall) / 1000.0, (long long)corr, (long long)corr);
    buf_printf(&r->k, ",\n{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"%s\", \"pid\": %d, \"tid\": 7, \"ts\": %.3f, "
                      "\"dur\": %.3f, \"args\": {\"External id\": %lld, \"device\": %d, \"stream\": 7, \"correlation\": %lld, "
                      "\"bytes\": %lld, \"memory bandwidth (GB/s)\": %.3f}}",
               zName, r->device, (double)(start + r->wallOffset) / 1000.0, (double)(end - start) / 1000.0, (long long)corr,
               r->device, (long long)corr, (long long)bytes, end > start ? (double)bytes / (double)(end - start) : 0.0);
}

/* The profiler's trace file: its header, the events of the window, its end. 0 or -1. */
static int write_kineto(struct ptrec *r, const struct js_gpu *pGpu)
{
    char zPath[1400];
    FILE *f;
    int rc;
    snprintf(zPath, sizeof zPath, "%s/%s", r->zDir, r->zKineto);
    f = fopen(zPath, "w");
    if (!f) return -1;
    fprintf(f, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": %d, \"name\": \"%s\", \"totalGlobalMem\": %lld, "
               "\"computeMajor\": %d, \"computeMinor\": %d, \"maxThreadsPerBlock\": 1024, \"numSms\": %d}],\n",
            r->device, pGpu->zName, (long long)pGpu->total, pGpu->ccMajor, pGpu->ccMinor, pGpu->sms);
    fprintf(f, "  \"profile_memory\": 1,\n  \"with_stack\": %d,\n  \"traceName\": \"%s/%s\",\n  \"traceEvents\": [\n",
            r->o.bWithStack, r->zDir, r->zKineto);
    fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": %lld, \"tid\": 0, \"args\": {\"name\": "
               "\"python3.12\"}},\n{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": %d, \"tid\": 0, \"args\": "
               "{\"name\": \"GPU %d\"}}",
            (long long)r->pid, r->device, r->device);
    if (r->k.z) fwrite(r->k.z, 1, r->k.n, f);
    fprintf(f, "\n]}\n");
    rc = ferror(f) || r->k.bOom ? -1 : 0;
    if (fclose(f) != 0) rc = -1;
    return rc;
}

/* The process ends (after main() returned, before it is gone): the exit snapshot, the profiler's trace. */
static void on_close(void *p, const struct js *j)
{
    struct ptrec *r = p;
    if ((r->o.flags & PTREC_HISTORY) && !r->o.bNoExitSnapshot && write_snapshot(r, r->zSnap, j) != 0) r->bFailed = 1;
    if ((r->o.flags & PTREC_KINETO) && write_kineto(r, js_gpu_of(j)) != 0) r->bFailed = 1;
}

/* ---- the recorder ---- */

struct ptrec *ptrec_new(const char *zDir, const struct ptrec_opt *o)
{
    struct ptrec *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->o = *o;
    if (r->o.maxEntries <= 0) r->o.maxEntries = 100000;
    snprintf(r->zDir, sizeof r->zDir, "%s", zDir);
    snprintf(r->zKineto, sizeof r->zKineto, "%s", o->zKinetoName ? o->zKinetoName : "worker0.pt.trace.json");
    r->o.zKinetoName = NULL; /* the caller's string: copied */
    if (r->o.flags & PTREC_HISTORY) {
        r->aEv = malloc(sizeof *r->aEv * (size_t)r->o.maxEntries);
        if (!r->aEv) {
            free(r);
            return NULL;
        }
    }
    r->obs.p = r;
    r->obs.xBlock = on_block;
    r->obs.xSegment = on_segment;
    r->obs.xMap = on_map;
    r->obs.xOom = on_oom;
    r->obs.xRange = on_range;
    r->obs.xKernel = on_kernel;
    r->obs.xCopy = on_copy;
    r->obs.xClose = on_close;
    return r;
}

const struct js_obs *ptrec_obs(struct ptrec *r)
{
    return &r->obs;
}

void ptrec_attach(struct ptrec *r, const struct js *j)
{
    r->pid = js_pid(j);
    r->device = js_device(j);
    r->wallOffset = js_wall_ns(j, 0);
    r->bExpandable = js_expandable(j);
    snprintf(r->zHost, sizeof r->zHost, "%s", js_hostname(j));
    snprintf(r->zSnap, sizeof r->zSnap, "vramtrace-%s-%lld.snapshot.pickle", r->zHost, (long long)r->pid);
}

void ptrec_window(struct ptrec *r, const struct js *j, int bOn)
{
    if (!(r->o.flags & PTREC_KINETO)) return;
    if (bOn && !r->bWindow) {
        r->bWindow = 1;
        r->winAlloc = js_allocated(j);
        r->winResv = js_reserved(j);
        r->lastTs = js_now(j);
    } else if (!bOn && r->bWindow) {
        py_close(r, 0, js_now(j));
        r->lastTs = js_now(j);
        r->bWindow = 0;
    }
}

void ptrec_op_hint(struct ptrec *r, int site, const char *zOp)
{
    if (site < 0 || slot(r, &r->azOp, &r->nOp, site) != 0) return;
    free(r->azOp[site]);
    r->azOp[site] = strdup(zOp);
}

const char *ptrec_snapshot_name(const struct ptrec *r)
{
    return r->zSnap;
}

int64_t ptrec_window_peak_allocated(const struct ptrec *r)
{
    return r->winAlloc;
}

int64_t ptrec_window_peak_reserved(const struct ptrec *r)
{
    return r->winResv;
}

int ptrec_finish(struct ptrec *r)
{
    int rc;
    if (!r) return -1;
    rc = r->bFailed ? -1 : 0;
    free(r->aEv);
    free(r->aLive);
    free(r->aSeg);
    free(r->aMap);
    free(r->aRng);
    for (int i = 0; i < r->nSpec; i++) free(r->azSpec[i]);
    free(r->azSpec);
    for (int i = 0; i < r->nOp; i++) free(r->azOp[i]);
    free(r->azOp);
    free(r->k.z);
    free(r);
    return rc;
}
