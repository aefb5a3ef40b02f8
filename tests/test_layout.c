/* Record layouts per CUPTI release: the table against the headers, the choice per version, and records of each layout decoded. */
#include <cupti.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "layout.h"
#include "vt_test.h"

#ifndef VT_LAYOUTS_TSV
#error "VT_LAYOUTS_TSV must name tests/data/cupti_layouts.tsv"
#endif

/* The header field each table field is, per kind (the names tests/data/cupti_layouts.tsv uses). */
static const struct {
    enum vt__lkind kind;
    enum vt__fld f;
    const char *zPath;
} aPath[] = {
    {VT_LK_KERNEL, VT_F_START, "start"}, {VT_LK_KERNEL, VT_F_END, "end"},
    {VT_LK_KERNEL, VT_F_DEVICE, "deviceId"}, {VT_LK_KERNEL, VT_F_CONTEXT, "contextId"},
    {VT_LK_KERNEL, VT_F_STREAM, "streamId"}, {VT_LK_KERNEL, VT_F_CORR, "correlationId"},
    {VT_LK_KERNEL, VT_F_NAME, "name"}, {VT_LK_KERNEL, VT_F_GRID_X, "gridX"},
    {VT_LK_KERNEL, VT_F_GRID_Y, "gridY"}, {VT_LK_KERNEL, VT_F_GRID_Z, "gridZ"},
    {VT_LK_KERNEL, VT_F_BLOCK_X, "blockX"}, {VT_LK_KERNEL, VT_F_BLOCK_Y, "blockY"},
    {VT_LK_KERNEL, VT_F_BLOCK_Z, "blockZ"}, {VT_LK_KERNEL, VT_F_SHARED_STATIC, "staticSharedMemory"},
    {VT_LK_KERNEL, VT_F_SHARED_DYNAMIC, "dynamicSharedMemory"},
    {VT_LK_KERNEL, VT_F_REGISTERS, "registersPerThread"}, {VT_LK_KERNEL, VT_F_GRAPH, "graphId"},
    {VT_LK_KERNEL, VT_F_GRAPH_NODE, "graphNodeId"},
    {VT_LK_MEMCPY, VT_F_COPY_KIND, "copyKind"}, {VT_LK_MEMCPY, VT_F_SRC_KIND, "srcKind"},
    {VT_LK_MEMCPY, VT_F_DST_KIND, "dstKind"}, {VT_LK_MEMCPY, VT_F_FLAGS, "flags"},
    {VT_LK_MEMCPY, VT_F_BYTES, "bytes"}, {VT_LK_MEMCPY, VT_F_START, "start"},
    {VT_LK_MEMCPY, VT_F_END, "end"}, {VT_LK_MEMCPY, VT_F_DEVICE, "deviceId"},
    {VT_LK_MEMCPY, VT_F_CONTEXT, "contextId"}, {VT_LK_MEMCPY, VT_F_STREAM, "streamId"},
    {VT_LK_MEMCPY, VT_F_CORR, "correlationId"}, {VT_LK_MEMCPY, VT_F_RUNTIME_CORR, "runtimeCorrelationId"},
    {VT_LK_MEMCPY, VT_F_GRAPH_NODE, "graphNodeId"}, {VT_LK_MEMCPY, VT_F_GRAPH, "graphId"},
    {VT_LK_MEMCPY_P2P, VT_F_COPY_KIND, "copyKind"}, {VT_LK_MEMCPY_P2P, VT_F_SRC_KIND, "srcKind"},
    {VT_LK_MEMCPY_P2P, VT_F_DST_KIND, "dstKind"}, {VT_LK_MEMCPY_P2P, VT_F_FLAGS, "flags"},
    {VT_LK_MEMCPY_P2P, VT_F_BYTES, "bytes"}, {VT_LK_MEMCPY_P2P, VT_F_START, "start"},
    {VT_LK_MEMCPY_P2P, VT_F_END, "end"}, {VT_LK_MEMCPY_P2P, VT_F_DEVICE, "deviceId"},
    {VT_LK_MEMCPY_P2P, VT_F_CONTEXT, "contextId"}, {VT_LK_MEMCPY_P2P, VT_F_STREAM, "streamId"},
    {VT_LK_MEMCPY_P2P, VT_F_SRC_DEVICE, "srcDeviceId"}, {VT_LK_MEMCPY_P2P, VT_F_DST_DEVICE, "dstDeviceId"},
    {VT_LK_MEMCPY_P2P, VT_F_CORR, "correlationId"}, {VT_LK_MEMCPY_P2P, VT_F_GRAPH_NODE, "graphNodeId"},
    {VT_LK_MEMCPY_P2P, VT_F_GRAPH, "graphId"},
    {VT_LK_MEMSET, VT_F_VALUE, "value"}, {VT_LK_MEMSET, VT_F_BYTES, "bytes"},
    {VT_LK_MEMSET, VT_F_START, "start"}, {VT_LK_MEMSET, VT_F_END, "end"},
    {VT_LK_MEMSET, VT_F_DEVICE, "deviceId"}, {VT_LK_MEMSET, VT_F_CONTEXT, "contextId"},
    {VT_LK_MEMSET, VT_F_STREAM, "streamId"}, {VT_LK_MEMSET, VT_F_CORR, "correlationId"},
    {VT_LK_MEMSET, VT_F_FLAGS, "flags"}, {VT_LK_MEMSET, VT_F_MEM_KIND, "memoryKind"},
    {VT_LK_MEMSET, VT_F_GRAPH_NODE, "graphNodeId"}, {VT_LK_MEMSET, VT_F_GRAPH, "graphId"},
    {VT_LK_MEMORY, VT_F_OP, "memoryOperationType"}, {VT_LK_MEMORY, VT_F_MEM_KIND, "memoryKind"},
    {VT_LK_MEMORY, VT_F_CORR, "correlationId"}, {VT_LK_MEMORY, VT_F_ADDRESS, "address"},
    {VT_LK_MEMORY, VT_F_BYTES, "bytes"}, {VT_LK_MEMORY, VT_F_TIMESTAMP, "timestamp"},
    {VT_LK_MEMORY, VT_F_PC, "PC"}, {VT_LK_MEMORY, VT_F_DEVICE, "deviceId"},
    {VT_LK_MEMORY, VT_F_CONTEXT, "contextId"}, {VT_LK_MEMORY, VT_F_STREAM, "streamId"},
    {VT_LK_MEMORY, VT_F_ASYNC, "isAsync"},
    {VT_LK_MEMORY, VT_F_POOL_TYPE, "memoryPoolConfig.memoryPoolType"},
    {VT_LK_MEMORY, VT_F_POOL_ADDRESS, "memoryPoolConfig.address"},
    {VT_LK_MEMORY, VT_F_POOL_THRESHOLD, "memoryPoolConfig.releaseThreshold"},
    {VT_LK_MEMORY, VT_F_POOL_SIZE, "memoryPoolConfig.pool.size"},
    {VT_LK_MEMORY, VT_F_POOL_UTILIZED, "memoryPoolConfig.utilizedSize"},
    {VT_LK_MEMORY, VT_F_SOURCE, "source"},
    {VT_LK_POOL, VT_F_OP, "memoryPoolOperationType"}, {VT_LK_POOL, VT_F_POOL_TYPE, "memoryPoolType"},
    {VT_LK_POOL, VT_F_CORR, "correlationId"}, {VT_LK_POOL, VT_F_DEVICE, "deviceId"},
    {VT_LK_POOL, VT_F_ADDRESS, "address"}, {VT_LK_POOL, VT_F_POOL_THRESHOLD, "releaseThreshold"},
    {VT_LK_POOL, VT_F_POOL_SIZE, "size"}, {VT_LK_POOL, VT_F_POOL_UTILIZED, "utilizedSize"},
    {VT_LK_POOL, VT_F_TIMESTAMP, "timestamp"},
    {VT_LK_MARKER, VT_F_FLAGS, "flags"}, {VT_LK_MARKER, VT_F_TIMESTAMP, "timestamp"},
    {VT_LK_MARKER, VT_F_ID, "id"}, {VT_LK_MARKER, VT_F_OBJ_KIND, "objectKind"},
    {VT_LK_MARKER, VT_F_OBJ_PROCESS, "objectId.pt.processId"},
    {VT_LK_MARKER, VT_F_OBJ_THREAD, "objectId.pt.threadId"},
    {VT_LK_MARKER, VT_F_OBJ_DEVICE, "objectId.dcs.deviceId"},
    {VT_LK_MARKER, VT_F_OBJ_CONTEXT, "objectId.dcs.contextId"},
    {VT_LK_MARKER, VT_F_OBJ_STREAM, "objectId.dcs.streamId"}, {VT_LK_MARKER, VT_F_NAME, "name"},
    {VT_LK_MARKER, VT_F_DOMAIN, "domain"},
    {VT_LK_SYNC, VT_F_SYNC_TYPE, "type"}, {VT_LK_SYNC, VT_F_START, "start"}, {VT_LK_SYNC, VT_F_END, "end"},
    {VT_LK_SYNC, VT_F_CORR, "correlationId"}, {VT_LK_SYNC, VT_F_CONTEXT, "contextId"},
    {VT_LK_SYNC, VT_F_STREAM, "streamId"}, {VT_LK_SYNC, VT_F_CUDA_EVENT, "cudaEventId"},
    {VT_LK_SYNC, VT_F_RETURN, "returnValue"},
    {VT_LK_OVERHEAD, VT_F_OVERHEAD_KIND, "overheadKind"}, {VT_LK_OVERHEAD, VT_F_OBJ_KIND, "objectKind"},
    {VT_LK_OVERHEAD, VT_F_OBJ_PROCESS, "objectId.pt.processId"},
    {VT_LK_OVERHEAD, VT_F_OBJ_THREAD, "objectId.pt.threadId"},
    {VT_LK_OVERHEAD, VT_F_OBJ_DEVICE, "objectId.dcs.deviceId"},
    {VT_LK_OVERHEAD, VT_F_OBJ_CONTEXT, "objectId.dcs.contextId"},
    {VT_LK_OVERHEAD, VT_F_OBJ_STREAM, "objectId.dcs.streamId"}, {VT_LK_OVERHEAD, VT_F_START, "start"},
    {VT_LK_OVERHEAD, VT_F_END, "end"},
    {VT_LK_DEVICE, VT_F_BANDWIDTH, "globalMemoryBandwidth"},
    {VT_LK_DEVICE, VT_F_GLOBAL_MEMORY, "globalMemorySize"},
    {VT_LK_DEVICE, VT_F_SM_COUNT, "numMultiprocessors"},
    {VT_LK_DEVICE, VT_F_CC_MAJOR, "computeCapabilityMajor"},
    {VT_LK_DEVICE, VT_F_CC_MINOR, "computeCapabilityMinor"}, {VT_LK_DEVICE, VT_F_ID, "id"},
    {VT_LK_DEVICE, VT_F_UUID, "uuid"}, {VT_LK_DEVICE, VT_F_NAME, "name"},
};

/* Size and field positions of the record structs of the header built with, by the compiler. */
#define POS(T, f) {#T, sizeof(T), #f, offsetof(T, f), sizeof(((T *)0)->f)}
static const struct {
    const char *zStruct;
    size_t size;
    const char *zPath;
    size_t off, width;
} aHeader[] = {
    POS(CUpti_ActivityKernel10, start), POS(CUpti_ActivityKernel10, end),
    POS(CUpti_ActivityKernel10, deviceId), POS(CUpti_ActivityKernel10, contextId),
    POS(CUpti_ActivityKernel10, streamId), POS(CUpti_ActivityKernel10, correlationId),
    POS(CUpti_ActivityKernel10, name), POS(CUpti_ActivityKernel10, gridX),
    POS(CUpti_ActivityKernel10, gridY), POS(CUpti_ActivityKernel10, gridZ),
    POS(CUpti_ActivityKernel10, blockX), POS(CUpti_ActivityKernel10, blockY),
    POS(CUpti_ActivityKernel10, blockZ), POS(CUpti_ActivityKernel10, staticSharedMemory),
    POS(CUpti_ActivityKernel10, dynamicSharedMemory), POS(CUpti_ActivityKernel10, registersPerThread),
    POS(CUpti_ActivityKernel10, graphId), POS(CUpti_ActivityKernel10, graphNodeId),
    POS(CUpti_ActivityMemcpy6, copyKind), POS(CUpti_ActivityMemcpy6, srcKind),
    POS(CUpti_ActivityMemcpy6, dstKind), POS(CUpti_ActivityMemcpy6, flags),
    POS(CUpti_ActivityMemcpy6, bytes), POS(CUpti_ActivityMemcpy6, start), POS(CUpti_ActivityMemcpy6, end),
    POS(CUpti_ActivityMemcpy6, deviceId), POS(CUpti_ActivityMemcpy6, contextId),
    POS(CUpti_ActivityMemcpy6, streamId), POS(CUpti_ActivityMemcpy6, correlationId),
    POS(CUpti_ActivityMemcpy6, runtimeCorrelationId), POS(CUpti_ActivityMemcpy6, graphNodeId),
    POS(CUpti_ActivityMemcpy6, graphId),
    POS(CUpti_ActivityMemcpyPtoP4, copyKind), POS(CUpti_ActivityMemcpyPtoP4, srcKind),
    POS(CUpti_ActivityMemcpyPtoP4, dstKind), POS(CUpti_ActivityMemcpyPtoP4, flags),
    POS(CUpti_ActivityMemcpyPtoP4, bytes), POS(CUpti_ActivityMemcpyPtoP4, start),
    POS(CUpti_ActivityMemcpyPtoP4, end), POS(CUpti_ActivityMemcpyPtoP4, deviceId),
    POS(CUpti_ActivityMemcpyPtoP4, contextId), POS(CUpti_ActivityMemcpyPtoP4, streamId),
    POS(CUpti_ActivityMemcpyPtoP4, srcDeviceId), POS(CUpti_ActivityMemcpyPtoP4, dstDeviceId),
    POS(CUpti_ActivityMemcpyPtoP4, correlationId), POS(CUpti_ActivityMemcpyPtoP4, graphNodeId),
    POS(CUpti_ActivityMemcpyPtoP4, graphId),
    POS(CUpti_ActivityMemset4, value), POS(CUpti_ActivityMemset4, bytes), POS(CUpti_ActivityMemset4, start),
    POS(CUpti_ActivityMemset4, end), POS(CUpti_ActivityMemset4, deviceId),
    POS(CUpti_ActivityMemset4, contextId), POS(CUpti_ActivityMemset4, streamId),
    POS(CUpti_ActivityMemset4, correlationId), POS(CUpti_ActivityMemset4, flags),
    POS(CUpti_ActivityMemset4, memoryKind), POS(CUpti_ActivityMemset4, graphNodeId),
    POS(CUpti_ActivityMemset4, graphId),
    POS(CUpti_ActivityMemory4, memoryOperationType), POS(CUpti_ActivityMemory4, memoryKind),
    POS(CUpti_ActivityMemory4, correlationId), POS(CUpti_ActivityMemory4, address),
    POS(CUpti_ActivityMemory4, bytes), POS(CUpti_ActivityMemory4, timestamp),
    POS(CUpti_ActivityMemory4, PC), POS(CUpti_ActivityMemory4, deviceId),
    POS(CUpti_ActivityMemory4, contextId), POS(CUpti_ActivityMemory4, streamId),
    POS(CUpti_ActivityMemory4, isAsync), POS(CUpti_ActivityMemory4, memoryPoolConfig.memoryPoolType),
    POS(CUpti_ActivityMemory4, memoryPoolConfig.address),
    POS(CUpti_ActivityMemory4, memoryPoolConfig.releaseThreshold),
    POS(CUpti_ActivityMemory4, memoryPoolConfig.pool.size),
    POS(CUpti_ActivityMemory4, memoryPoolConfig.utilizedSize), POS(CUpti_ActivityMemory4, source),
    POS(CUpti_ActivityMemoryPool3, memoryPoolOperationType), POS(CUpti_ActivityMemoryPool3, memoryPoolType),
    POS(CUpti_ActivityMemoryPool3, correlationId), POS(CUpti_ActivityMemoryPool3, deviceId),
    POS(CUpti_ActivityMemoryPool3, address), POS(CUpti_ActivityMemoryPool3, releaseThreshold),
    POS(CUpti_ActivityMemoryPool3, size), POS(CUpti_ActivityMemoryPool3, utilizedSize),
    POS(CUpti_ActivityMemoryPool3, timestamp),
    POS(CUpti_ActivityMarker2, flags), POS(CUpti_ActivityMarker2, timestamp),
    POS(CUpti_ActivityMarker2, id), POS(CUpti_ActivityMarker2, objectKind),
    POS(CUpti_ActivityMarker2, objectId.pt.processId), POS(CUpti_ActivityMarker2, objectId.pt.threadId),
    POS(CUpti_ActivityMarker2, objectId.dcs.deviceId), POS(CUpti_ActivityMarker2, objectId.dcs.contextId),
    POS(CUpti_ActivityMarker2, objectId.dcs.streamId), POS(CUpti_ActivityMarker2, name),
    POS(CUpti_ActivityMarker2, domain),
    POS(CUpti_ActivitySynchronization2, type), POS(CUpti_ActivitySynchronization2, start),
    POS(CUpti_ActivitySynchronization2, end), POS(CUpti_ActivitySynchronization2, correlationId),
    POS(CUpti_ActivitySynchronization2, contextId), POS(CUpti_ActivitySynchronization2, streamId),
    POS(CUpti_ActivitySynchronization2, cudaEventId), POS(CUpti_ActivitySynchronization2, returnValue),
    POS(CUpti_ActivityOverhead3, overheadKind), POS(CUpti_ActivityOverhead3, objectKind),
    POS(CUpti_ActivityOverhead3, objectId.pt.processId), POS(CUpti_ActivityOverhead3, objectId.pt.threadId),
    POS(CUpti_ActivityOverhead3, objectId.dcs.deviceId),
    POS(CUpti_ActivityOverhead3, objectId.dcs.contextId),
    POS(CUpti_ActivityOverhead3, objectId.dcs.streamId), POS(CUpti_ActivityOverhead3, start),
    POS(CUpti_ActivityOverhead3, end),
    POS(CUpti_ActivityDevice5, globalMemoryBandwidth), POS(CUpti_ActivityDevice5, globalMemorySize),
    POS(CUpti_ActivityDevice5, numMultiprocessors), POS(CUpti_ActivityDevice5, computeCapabilityMajor),
    POS(CUpti_ActivityDevice5, computeCapabilityMinor), POS(CUpti_ActivityDevice5, id),
    POS(CUpti_ActivityDevice5, uuid), POS(CUpti_ActivityDevice5, name),
};

/* The table's struct named z, or NULL. */
static const struct vt__recfmt *table_struct(const char *z)
{
    size_t i, n;
    const struct vt__recfmt *a = vt__layout_structs(&n);
    for (i = 0; i < n; i++)
        if (!strcmp(a[i].zStruct, z)) return &a[i];
    return NULL;
}

/* The field of kind k whose header path is z, or VT_F_N. */
static enum vt__fld field_of(enum vt__lkind k, const char *z)
{
    size_t i;
    for (i = 0; i < sizeof aPath / sizeof aPath[0]; i++)
        if (aPath[i].kind == k && !strcmp(aPath[i].zPath, z)) return aPath[i].f;
    return VT_F_N;
}

/* The number of fields struct s has in the table. */
static int n_fields(const struct vt__recfmt *s)
{
    int i, n = 0;
    for (i = 0; i < VT_F_N; i++) n += s->a[i].width != 0;
    return n;
}

/* Every struct of the header built with: the table has its size and each field's offset and width. */
TEST(layout_table_matches_header)
{
    size_t i, nStruct = 0;
    const char *zLast = "";
    for (i = 0; i < sizeof aHeader / sizeof aHeader[0]; i++) {
        const struct vt__recfmt *s = table_struct(aHeader[i].zStruct);
        enum vt__fld f;
        ASSERT(s != NULL);
        ASSERT_EQ(aHeader[i].size, s->size);
        f = field_of(s->kind, aHeader[i].zPath);
        ASSERT(f != VT_F_N);
        if (s->a[f].off != aHeader[i].off || s->a[f].width != aHeader[i].width)
            VT__FAIL("%s.%s: table %u/%u, header %zu/%zu", s->zStruct, aHeader[i].zPath, s->a[f].off,
                     s->a[f].width, aHeader[i].off, aHeader[i].width);
        if (strcmp(zLast, aHeader[i].zStruct) != 0) {
            size_t j, n = 0;
            for (j = i; j < sizeof aHeader / sizeof aHeader[0] && !strcmp(aHeader[j].zStruct, aHeader[i].zStruct); j++)
                n++;
            ASSERT_EQ(n_fields(s), (int)n); /* no field of the table left unchecked */
            zLast = aHeader[i].zStruct;
            nStruct++;
        }
    }
    ASSERT_EQ(10, (int)nStruct);
}

/* Every struct of the table, those of newer headers included, against the checked-in extract. */
TEST(layout_table_matches_extract)
{
    FILE *fp = fopen(VT_LAYOUTS_TSV, "r");
    char zLine[512];
    size_t i, n, nRows = 0, nSize = 0;
    const struct vt__recfmt *a = vt__layout_structs(&n);
    int aSeen[64] = {0};
    ASSERT(fp != NULL);
    ASSERT(n <= 64);
    while (fgets(zLine, sizeof zLine, fp)) {
        char zStruct[64], zPath[64], zSrc[32];
        unsigned off, width;
        const struct vt__recfmt *s;
        if (zLine[0] == '#' || zLine[0] == '\n') continue;
        if (sscanf(zLine, "%63[^\t]\t\t%u\t\t%31s", zStruct, &off, zSrc) == 3) { /* a size row */
            s = table_struct(zStruct);
            if (!s) VT__FAIL("%s: in the extract, not in the table", zStruct);
            ASSERT_EQ(off, s->size);
            nSize++;
            continue;
        }
        ASSERT_EQ(5, sscanf(zLine, "%63[^\t]\t%63[^\t]\t%u\t%u\t%31s", zStruct, zPath, &off, &width, zSrc));
        s = table_struct(zStruct);
        ASSERT(s != NULL);
        {
            enum vt__fld f = field_of(s->kind, zPath);
            ASSERT(f != VT_F_N);
            if (s->a[f].off != off || s->a[f].width != width)
                VT__FAIL("%s.%s: table %u/%u, extract %u/%u", zStruct, zPath, s->a[f].off, s->a[f].width, off, width);
        }
        aSeen[s - a]++;
        nRows++;
    }
    fclose(fp);
    ASSERT_EQ(n, nSize);
    for (i = 0; i < n; i++) ASSERT_EQ(n_fields(&a[i]), aSeen[i]);
    ASSERT(nRows > 200);
}

/* The struct decoding kind k under CUPTI API version v, "-" when reduced. */
static const char *struct_for(uint32_t v, enum vt__lkind k)
{
    struct vt__layout l;
    vt__layout_select(v, &l);
    return l.aFmt[k] ? l.aFmt[k]->zStruct : "-";
}

TEST(layout_select_releases)
{
    struct vt__layout l;
    char z[256];
    const char *zNewest;
    vt__layout_select(130001, &l);
    ASSERT_EQ(VT_LAYOUT_KNOWN, l.status);
    ASSERT_STREQ("13.0", l.zRelease);
    ASSERT_STREQ("CUpti_ActivityKernel10", struct_for(130000, VT_LK_KERNEL));
    ASSERT_STREQ("CUpti_ActivityKernel11", struct_for(130100, VT_LK_KERNEL));
    ASSERT_STREQ("CUpti_ActivityDevice5", struct_for(130101, VT_LK_DEVICE));
    ASSERT_STREQ("CUpti_ActivityDevice6", struct_for(130200, VT_LK_DEVICE));
    ASSERT_STREQ("CUpti_ActivityKernel12", struct_for(130301, VT_LK_KERNEL));
    ASSERT_STREQ("CUpti_ActivityKernel13", struct_for(130400, VT_LK_KERNEL));
    ASSERT_STREQ("CUpti_ActivityMemcpy7", struct_for(130401, VT_LK_MEMCPY));
    ASSERT_STREQ("CUpti_ActivityMemset5", struct_for(130401, VT_LK_MEMSET));
    ASSERT_STREQ("CUpti_ActivityMemset4", struct_for(130301, VT_LK_MEMSET));
    ASSERT_STREQ("CUpti_ActivityMemory4", struct_for(130401, VT_LK_MEMORY));
    /* an update the table does not list: what both neighbours share is known, the rest reduced */
    vt__layout_select(130002, &l);
    ASSERT_EQ(VT_LAYOUT_GAP, l.status);
    ASSERT(l.zRelease == NULL);
    ASSERT_STREQ("-", struct_for(130002, VT_LK_KERNEL)); /* Kernel10 before, Kernel11 after */
    ASSERT_STREQ("CUpti_ActivityMemory4", struct_for(130002, VT_LK_MEMORY));
    ASSERT_STREQ("-", struct_for(130302, VT_LK_MEMCPY)); /* Memcpy6, then Memcpy7 */
    vt__layout_reduced_names(&l, z, sizeof z);
    ASSERT_STREQ("CONCURRENT_KERNEL", z);
    /* newer than the table: every kind reduced */
    ASSERT_EQ(130401u, vt__layout_newest(&zNewest));
    ASSERT_STREQ("13.4", zNewest);
    vt__layout_select(130402, &l);
    ASSERT_EQ(VT_LAYOUT_NEWER, l.status);
    vt__layout_select(130500, &l);
    ASSERT_EQ(VT_LAYOUT_NEWER, l.status);
    vt__layout_reduced_names(&l, z, sizeof z);
    ASSERT_STREQ("CONCURRENT_KERNEL,MEMCPY,MEMCPY2,MEMSET,MEMORY2,MEMORY_POOL,MARKER,SYNCHRONIZATION,OVERHEAD,DEVICE", z);
    /* CUDA 12's CUPTI (API version 24 is 12.6): nothing known */
    vt__layout_select(24, &l);
    ASSERT_EQ(VT_LAYOUT_OLDER, l.status);
    ASSERT_STREQ("-", struct_for(24, VT_LK_MEMORY));
    /* the header built with is a listed release */
    ASSERT_EQ(VT_LAYOUT_KNOWN, vt__layout_builtin()->status);
    ASSERT_EQ(CUPTI_API_VERSION, (int)vt__layout_builtin()->version);
}

/* Rows the decoder emitted, by table. */
static struct {
    int n[64];
    struct vt__row last[64];
    char zName[64];
} g_rows;

static void collect(void *pCtx, const struct vt__row *r)
{
    (void)pCtx;
    if (r->table < 0 || r->table >= 64) return;
    g_rows.n[r->table]++;
    g_rows.last[r->table] = *r;
}

/* Write value x into the record buffer p at field f of struct s (its width). */
static void put(unsigned char *p, const struct vt__recfmt *s, enum vt__fld f, uint64_t x)
{
    ASSERT(s->a[f].width > 0 && s->a[f].width <= 8);
    memcpy(p + s->a[f].off, &x, s->a[f].width); /* little-endian: the low bytes */
}

/*
 * A kernel, a copy, a set, an allocation and a device record laid out in the
 * structs of CUPTI API version v (bytes the tracer does not read: 0xA5), decoded.
 * Returns the records not decoded.
 */
static uint64_t decode_release(uint32_t v)
{
    struct vt__layout l;
    struct vt__decoder d;
    struct vt__decoder_config cfg;
    static const char zName[] = "gemm_kernel";
    static const uint32_t aKind[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                     CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMORY2,
                                     CUPTI_ACTIVITY_KIND_DEVICE};
    const struct vt__layout *pNewest;
    struct vt__layout newest;
    size_t i;
    uint64_t n;
    vt__layout_select(v, &l);
    vt__layout_select(vt__layout_newest(NULL), &newest); /* lays out the records of a reduced kind */
    pNewest = &newest;
    memset(&g_rows, 0, sizeof g_rows);
    memset(&cfg, 0, sizeof cfg);
    cfg.layout = &l;
    ASSERT_EQ(0, vt__decoder_init(&d, &cfg, collect, NULL));
    for (i = 0; i < sizeof aKind / sizeof aKind[0]; i++) {
        unsigned char rec[512];
        enum vt__lkind k = vt__layout_kind(aKind[i]);
        const struct vt__recfmt *s = l.aFmt[k] ? l.aFmt[k] : pNewest->aFmt[k];
        memset(rec, 0xA5, sizeof rec);
        memcpy(rec, &aKind[i], 4);
        switch (k) {
        case VT_LK_KERNEL:
            put(rec, s, VT_F_START, 1000);
            put(rec, s, VT_F_END, 1500);
            put(rec, s, VT_F_DEVICE, 0);
            put(rec, s, VT_F_CONTEXT, 1);
            put(rec, s, VT_F_STREAM, 7);
            put(rec, s, VT_F_CORR, 0);
            put(rec, s, VT_F_NAME, (uint64_t)(uintptr_t)zName);
            put(rec, s, VT_F_GRID_X, 128);
            put(rec, s, VT_F_GRID_Y, 2);
            put(rec, s, VT_F_GRID_Z, 1);
            put(rec, s, VT_F_BLOCK_X, 256);
            put(rec, s, VT_F_BLOCK_Y, 1);
            put(rec, s, VT_F_BLOCK_Z, 1);
            put(rec, s, VT_F_SHARED_STATIC, 0);
            put(rec, s, VT_F_SHARED_DYNAMIC, 4096);
            put(rec, s, VT_F_REGISTERS, 40);
            put(rec, s, VT_F_GRAPH, 0);
            put(rec, s, VT_F_GRAPH_NODE, 0);
            break;
        case VT_LK_MEMCPY:
            put(rec, s, VT_F_COPY_KIND, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
            put(rec, s, VT_F_SRC_KIND, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
            put(rec, s, VT_F_DST_KIND, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
            put(rec, s, VT_F_FLAGS, CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
            put(rec, s, VT_F_BYTES, 1u << 20);
            put(rec, s, VT_F_START, 2000);
            put(rec, s, VT_F_END, 2100);
            put(rec, s, VT_F_DEVICE, 0);
            put(rec, s, VT_F_CONTEXT, 1);
            put(rec, s, VT_F_STREAM, 7);
            put(rec, s, VT_F_CORR, 0);
            put(rec, s, VT_F_RUNTIME_CORR, 0);
            put(rec, s, VT_F_GRAPH, 0);
            put(rec, s, VT_F_GRAPH_NODE, 0);
            break;
        case VT_LK_MEMSET:
            put(rec, s, VT_F_VALUE, 0);
            put(rec, s, VT_F_BYTES, 4096);
            put(rec, s, VT_F_START, 3000);
            put(rec, s, VT_F_END, 3010);
            put(rec, s, VT_F_DEVICE, 0);
            put(rec, s, VT_F_CONTEXT, 1);
            put(rec, s, VT_F_STREAM, 7);
            put(rec, s, VT_F_CORR, 0);
            put(rec, s, VT_F_FLAGS, 0);
            put(rec, s, VT_F_MEM_KIND, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
            put(rec, s, VT_F_GRAPH, 0);
            put(rec, s, VT_F_GRAPH_NODE, 0);
            break;
        case VT_LK_MEMORY:
            put(rec, s, VT_F_OP, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
            put(rec, s, VT_F_MEM_KIND, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
            put(rec, s, VT_F_CORR, 0);
            put(rec, s, VT_F_ADDRESS, 0x7f0000000000ull);
            put(rec, s, VT_F_BYTES, 3u << 20);
            put(rec, s, VT_F_TIMESTAMP, 4000);
            put(rec, s, VT_F_PC, 0);
            put(rec, s, VT_F_DEVICE, 0);
            put(rec, s, VT_F_CONTEXT, 1);
            put(rec, s, VT_F_STREAM, 7);
            put(rec, s, VT_F_ASYNC, 0);
            put(rec, s, VT_F_POOL_TYPE, CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID);
            put(rec, s, VT_F_SOURCE, 0);
            break;
        case VT_LK_DEVICE:
            put(rec, s, VT_F_ID, 0);
            put(rec, s, VT_F_NAME, (uint64_t)(uintptr_t)"NVIDIA H200");
            memset(rec + s->a[VT_F_UUID].off, 0x11, 16);
            put(rec, s, VT_F_GLOBAL_MEMORY, 150ull << 30);
            put(rec, s, VT_F_CC_MAJOR, 9);
            put(rec, s, VT_F_CC_MINOR, 0);
            put(rec, s, VT_F_SM_COUNT, 132);
            put(rec, s, VT_F_BANDWIDTH, 4800000000ull);
            break;
        default: break;
        }
        vt__decode_activity(&d, (const CUpti_Activity *)rec);
    }
    n = d.nNotDecoded;
    vt__decoder_free(&d);
    return n;
}

/* Records of every listed release's structs decode to the same rows. */
TEST(layout_each_release_decoded)
{
    static const uint32_t aV[] = {130000, 130001, 130100, 130101, 130200, 130201, 130300, 130301, 130400, 130401};
    size_t i;
    for (i = 0; i < sizeof aV / sizeof aV[0]; i++) {
        struct vt__row *r;
        ASSERT_EQ(0, (int)decode_release(aV[i]));
        ASSERT_EQ(1, g_rows.n[VT_T_KERNEL]);
        r = &g_rows.last[VT_T_KERNEL];
        ASSERT_EQ(1000, r->v[0].i);
        ASSERT_EQ(1500, r->v[1].i);
        ASSERT_EQ(7, r->v[4].i);
        ASSERT_EQ(128, r->v[7].i);
        ASSERT_EQ(2, r->v[8].i);
        ASSERT_EQ(256, r->v[10].i);
        ASSERT_EQ(4096, r->v[14].i);
        ASSERT_EQ(40, r->v[15].i);
        ASSERT_EQ(1, g_rows.n[VT_T_MEMCPY]);
        r = &g_rows.last[VT_T_MEMCPY];
        ASSERT_EQ(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, r->v[6].i);
        ASSERT_EQ(CUPTI_ACTIVITY_MEMORY_KIND_PINNED, r->v[7].i);
        ASSERT_EQ(1 << 20, r->v[9].i);
        ASSERT_EQ(1, r->v[10].i);
        ASSERT_EQ(1, g_rows.n[VT_T_MEMSET]);
        ASSERT_EQ(4096, g_rows.last[VT_T_MEMSET].v[6].i);
        ASSERT_EQ(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, g_rows.last[VT_T_MEMSET].v[8].i);
        ASSERT_EQ(1, g_rows.n[VT_T_MEMORY_EVENT]);
        r = &g_rows.last[VT_T_MEMORY_EVENT];
        ASSERT_EQ(4000, r->v[0].i);
        ASSERT_EQ((int64_t)0x7f0000000000ll, r->v[3].i);
        ASSERT_EQ(3 << 20, r->v[4].i);
        ASSERT_EQ(1, g_rows.n[VT_T_DEVICE]);
        ASSERT_EQ(132, g_rows.last[VT_T_DEVICE].v[6].i);
        ASSERT_EQ(150ll << 30, g_rows.last[VT_T_DEVICE].v[3].i);
    }
}

/*
 * Every struct of the table read from a record whose byte i is (i * 7 + 3) & 0xff: each field
 * the struct has holds the bytes at its offset (little-endian, its width; the uuid its 16),
 * each field it lacks 0, whatever kind the struct is.
 */
TEST(layout_read_every_field)
{
    size_t nStruct, s;
    const struct vt__recfmt *a = vt__layout_structs(&nStruct);
    ASSERT(nStruct > 10);
    for (s = 0; s < nStruct; s++) {
        static const uint32_t aCupti[VT_LK_N] = {
            CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
            CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY_POOL,
            CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
            CUPTI_ACTIVITY_KIND_DEVICE};
        unsigned char rec[512], zero[16] = {0};
        struct vt__layout l;
        struct vt__act act;
        int f, nRead = 0;
        for (size_t i = 0; i < sizeof rec; i++) rec[i] = (unsigned char)((i * 7 + 3) & 0xff);
        memcpy(rec, &aCupti[a[s].kind], 4);
        memset(&l, 0, sizeof l);
        l.aFmt[a[s].kind] = &a[s];
        ASSERT_EQ(0, vt__layout_read(&l, rec, &act));
        ASSERT_EQ((int)a[s].kind, (int)act.kind);
        for (f = 0; f < VT_F_N; f++) {
            uint64_t x = 0;
            unsigned w = a[s].a[f].width;
            if (f == VT_F_UUID) {
                ASSERT(w == 0 || w == 16);
                ASSERT_EQ(0, memcmp(act.uuid, w ? rec + a[s].a[f].off : zero, 16));
                nRead += w != 0;
                continue;
            }
            ASSERT(w <= 8);
            if (w) memcpy(&x, rec + a[s].a[f].off, w); /* little-endian: the low bytes */
            if (act.v[f] != x) VT__FAIL("%s field %d (width %u): read %llx, expected %llx", a[s].zStruct, f, w,
                                        (unsigned long long)act.v[f], (unsigned long long)x);
            nRead += w != 0;
        }
        ASSERT(nRead >= 3);
    }
}

/* A CUPTI newer than the table: no record of a reduced kind becomes a row (nothing read at a guessed offset). */
TEST(layout_newer_cupti_not_read)
{
    ASSERT_EQ(5, (int)decode_release(130500));
    ASSERT_EQ(0, g_rows.n[VT_T_KERNEL]);
    ASSERT_EQ(0, g_rows.n[VT_T_MEMCPY]);
    ASSERT_EQ(0, g_rows.n[VT_T_MEMSET]);
    ASSERT_EQ(0, g_rows.n[VT_T_MEMORY_EVENT]);
    ASSERT_EQ(0, g_rows.n[VT_T_DEVICE]);
    /* an unlisted update: the kernel (Kernel10 or Kernel11) is not read, the rest is */
    ASSERT_EQ(1, (int)decode_release(130002));
    ASSERT_EQ(0, g_rows.n[VT_T_KERNEL]);
    ASSERT_EQ(1, g_rows.n[VT_T_MEMORY_EVENT]);
    ASSERT_EQ(1, g_rows.n[VT_T_MEMCPY]);
}

VT_TEST_LIST(T(layout_table_matches_header) T(layout_table_matches_extract) T(layout_select_releases)
             T(layout_each_release_decoded) T(layout_newer_cupti_not_read) T(layout_read_every_field))
