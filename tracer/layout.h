/* Internal: CUPTI activity record layouts per CUPTI version, and records read into version-neutral form. */
#ifndef VT_TRACER_LAYOUT_H
#define VT_TRACER_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/*
 * CUPTI writes each activity record in the layout of the libcupti that runs,
 * not of the header a client was built with (docs/tracer.md, "Versions"). The
 * tracer therefore reads every field it uses at the offset the running
 * CUPTI's record struct has, from a table of the record structs of each known
 * CUPTI release, into a version-neutral struct vt__act. A kind whose layout is
 * not known for sure (a CUPTI newer than the table, or an update the table
 * does not list where the struct may differ) is reduced: none of its fields is
 * read.
 */

/* The record kinds the tracer reads. */
enum vt__lkind {
    VT_LK_KERNEL,     /* KERNEL and CONCURRENT_KERNEL */
    VT_LK_MEMCPY,     /* MEMCPY */
    VT_LK_MEMCPY_P2P, /* MEMCPY2 */
    VT_LK_MEMSET,
    VT_LK_MEMORY,     /* MEMORY2 */
    VT_LK_POOL,       /* MEMORY_POOL */
    VT_LK_MARKER,
    VT_LK_SYNC,       /* SYNCHRONIZATION */
    VT_LK_OVERHEAD,
    VT_LK_DEVICE,
    VT_LK_N
};

/* The fields read, across kinds (a kind's record has a subset; see layout.c's field lists). */
enum vt__fld {
    VT_F_START, VT_F_END, VT_F_TIMESTAMP, VT_F_DEVICE, VT_F_CONTEXT, VT_F_STREAM, VT_F_CORR,
    VT_F_RUNTIME_CORR, VT_F_NAME, VT_F_DOMAIN, VT_F_SOURCE, VT_F_GRID_X, VT_F_GRID_Y, VT_F_GRID_Z,
    VT_F_BLOCK_X, VT_F_BLOCK_Y, VT_F_BLOCK_Z, VT_F_SHARED_STATIC, VT_F_SHARED_DYNAMIC, VT_F_REGISTERS,
    VT_F_GRAPH, VT_F_GRAPH_NODE, VT_F_COPY_KIND, VT_F_SRC_KIND, VT_F_DST_KIND, VT_F_FLAGS, VT_F_BYTES,
    VT_F_SRC_DEVICE, VT_F_DST_DEVICE, VT_F_VALUE, VT_F_MEM_KIND, VT_F_OP, VT_F_ADDRESS, VT_F_PC,
    VT_F_ASYNC, VT_F_POOL_TYPE, VT_F_POOL_ADDRESS, VT_F_POOL_THRESHOLD, VT_F_POOL_SIZE,
    VT_F_POOL_UTILIZED, VT_F_ID, VT_F_OBJ_KIND, VT_F_OBJ_PROCESS, VT_F_OBJ_THREAD, VT_F_OBJ_DEVICE,
    VT_F_OBJ_CONTEXT, VT_F_OBJ_STREAM, VT_F_SYNC_TYPE, VT_F_CUDA_EVENT, VT_F_RETURN,
    VT_F_OVERHEAD_KIND, VT_F_BANDWIDTH, VT_F_GLOBAL_MEMORY, VT_F_SM_COUNT, VT_F_CC_MAJOR,
    VT_F_CC_MINOR, VT_F_UUID, VT_F_N
};

/* Where one field lies in a record struct: byte offset and width (0: the struct has no such field). */
struct vt__fldpos {
    uint16_t off;
    uint8_t width;
};

/* One CUPTI activity record struct (e.g. CUpti_ActivityKernel13): its size and its fields. */
struct vt__recfmt {
    const char *zStruct;
    enum vt__lkind kind;
    uint16_t size;
    struct vt__fldpos a[VT_F_N];
};

/* How the running CUPTI's version relates to the table. */
enum vt__lstatus {
    VT_LAYOUT_KNOWN, /* a release the table lists: every kind known */
    VT_LAYOUT_GAP,   /* between two listed releases: kinds whose struct is the same on both sides known */
    VT_LAYOUT_NEWER, /* newer than the newest listed: every kind reduced */
    VT_LAYOUT_OLDER  /* before CUDA 13 (CUPTI API version < 130000): not supported, tracing stays off */
};

/* The layouts in force for one CUPTI version. */
struct vt__layout {
    uint32_t version;                        /* cuptiGetVersion()'s answer */
    enum vt__lstatus status;
    const char *zRelease;                    /* "13.2": the listed release (KNOWN), else NULL */
    const struct vt__recfmt *aFmt[VT_LK_N];  /* the table's structs (vt__layout_structs); NULL: the kind is reduced (its layout is unknown) */
};

/* One activity record in version-neutral form. */
struct vt__act {
    enum vt__lkind kind;
    uint32_t cuptiKind;       /* the record's CUpti_ActivityKind */
    uint64_t v[VT_F_N];       /* integer fields, zero-extended from their width; 0 when absent */
    unsigned char uuid[16];   /* VT_F_UUID (all zero when absent) */
};

/* Field f of a as a string pointer (names, domains, sources: owned by CUPTI's buffer), or NULL. */
#define VT_ACT_STR(a, f) ((const char *)(uintptr_t)(a)->v[f])

/* The table's version: bumped whenever a release or struct is added. */
#define VT_LAYOUT_TABLE_VERSION 1

/* The newest CUPTI API version the table knows, and a readable name of it. */
uint32_t vt__layout_newest(const char **pzName);

/*
 * The layouts for CUPTI API version v (cuptiGetVersion): fills *pOut. A
 * version of the table's releases is KNOWN; one between two releases is a GAP
 * (a kind is known only when both neighbours use the same struct: CUPTI never
 * goes back to an older struct, and a struct's layout never changes); a newer
 * one is NEWER (all kinds reduced); one below 130000 is OLDER (nothing known).
 */
void vt__layout_select(uint32_t v, struct vt__layout *pOut);

/* The layouts of the header the tracer was built with (CUPTI 13.0), for decoders given none. */
const struct vt__layout *vt__layout_builtin(void);

/*
 * The layouts decoders use when given none: those set with vt__layout_use (the
 * running CUPTI's, set at start before the writer starts), else the builtin.
 */
const struct vt__layout *vt__layout_active(void);

/* Make l (which must stay valid) the layouts of decoders created from now on. */
void vt__layout_use(const struct vt__layout *l);

/* The CUPTI activity kind names (e.g. "CONCURRENT_KERNEL") of the reduced kinds, comma separated. */
void vt__layout_reduced_names(const struct vt__layout *l, char *zOut, size_t nOut);

/* The layout kind of a CUpti_ActivityKind value, or VT_LK_N when the tracer does not read it. */
enum vt__lkind vt__layout_kind(uint32_t cuptiKind);

/*
 * Read the record at pRec (whose first 4 bytes are its CUpti_ActivityKind) into
 * *pOut with the layouts of l. Returns 0 when read, 1 when the tracer does not
 * read its kind, 2 when the kind is reduced (nothing but the kind read).
 */
int vt__layout_read(const struct vt__layout *l, const void *pRec, struct vt__act *pOut);

/* The record structs the table knows (for tests and documentation), and their count. */
const struct vt__recfmt *vt__layout_structs(size_t *pN);

#endif
