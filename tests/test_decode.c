/* Decoding tests: real CUPTI record structs through the writer into SQLite, checked column by column. */
#include <cupti_activity.h>
#include <dlfcn.h>
#include <unistd.h>

#include "core_util.h"
#include "vramtrace/demangle.h"
#include "vramtrace/schema.h"

#define ADDR_A 0x7f0000000000ull /* 139637976727552 */
#define ADDR_B 0x7f0000100000ull /* 139637977776128 */
#define ADDR_P 0x7f1000000000ull /* 139706696204288 */

/* One activity buffer being filled by a test. */
struct batch {
    struct vt_writer *w;
    uint8_t *buf;
    size_t cap, off;
};

static void b_begin(struct batch *b, struct vt_writer *w)
{
    b->w = w;
    b->off = 0;
    b->buf = vt__writer_buffer_alloc(w, &b->cap);
    ASSERT(b->buf != NULL);
}

static void b_add(struct batch *b, const void *rec, size_t size)
{
    ASSERT_EQ(0, core_lay(b->buf, b->cap, &b->off, rec, size));
}

static void b_submit(struct batch *b)
{
    vt__writer_buffer_submit(b->w, b->buf, b->off);
}

/* Queue an API_CALL host record. */
static void api_call(struct vt_writer *w, int api, uint32_t corr, int64_t thread, int64_t stack,
                     uint64_t ptr, uint64_t src, uint64_t dst, uint64_t bytes)
{
    struct vt_hrec h;
    memset(&h, 0, sizeof h);
    h.type = VT_HREC_API_CALL;
    h.u.api.api = api;
    h.u.api.correlation = corr;
    h.u.api.start = 1000 + corr;
    h.u.api.end = 1010 + corr;
    h.u.api.thread = thread;
    h.u.api.device = 0;
    h.u.api.bytes = bytes;
    h.u.api.ptr = ptr;
    h.u.api.src = src;
    h.u.api.dst = dst;
    h.u.api.stack_id = stack;
    ASSERT_EQ(0, vt__writer_submit(w, &h));
}

/* Close w and open its trace read-only. */
static sqlite3 *close_and_open(struct vt_writer *w, const char *zPath)
{
    ASSERT_EQ(0, vt__writer_close(w, 10000));
    return core_open_ro(zPath);
}

TEST(decode_memory)
{
    char zPath[128], zWant[512];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMemory4 m;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    api_call(w, VT_API_ID_1, 7, 4242, 5, ADDR_A, 0, 0, 1048576);   /* cudaMalloc */
    api_call(w, VT_API_ID_4, 8, 4243, 0, ADDR_B, 0, 0, 0);         /* cudaFreeAsync */
    b_begin(&b, w);
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = 7;
    m.address = ADDR_A;
    m.bytes = 1048576;
    m.timestamp = 1050;
    m.PC = 0x4005d0;
    m.processId = 99;
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = CUPTI_INVALID_STREAM_ID;
    m.source = "torch.cuda";
    b_add(&b, &m, sizeof m);
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = 8;
    m.address = ADDR_B;
    m.bytes = 4096;
    m.timestamp = 2000;
    m.deviceId = 1;
    m.contextId = 2;
    m.streamId = 13;
    m.isAsync = 1;
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    m.memoryPoolConfig.address = ADDR_A;
    m.memoryPoolConfig.releaseThreshold = 1ull << 30;
    m.memoryPoolConfig.pool.size = 2u << 20;
    m.memoryPoolConfig.utilizedSize = 8192;
    m.source = "torch.cuda";
    b_add(&b, &m, sizeof m);
    /* An allocation no API call explains: api, thread and stack stay NULL. */
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.correlationId = 99;
    m.timestamp = 2100;
    m.isAsync = 0;
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
    m.source = NULL;
    b_add(&b, &m, sizeof m);
    b_submit(&b);
    db = close_and_open(w, zPath);
    snprintf(zWant, sizeof zWant,
             "1050|1|3|%llu|1048576|0|1|NULL|7|1|0|NULL|NULL|NULL|NULL|NULL|4195792|4242|5|1;"
             "2000|2|3|%llu|4096|1|2|13|8|4|1|1|%llu|1073741824|2097152|8192|NULL|4243|NULL|1;"
             "2100|1|3|%llu|4096|1|2|13|99|NULL|0|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
             ADDR_A, ADDR_B, ADDR_A, ADDR_B);
    ASSERT_STREQ(zWant, core_q_rows(db, "SELECT ts, op, mem_kind, address, bytes, device, context,"
                                        " stream, correlation, api, is_async, pool_type,"
                                        " pool_address, pool_threshold, pool_size, pool_used, pc,"
                                        " thread, stack_id, source_id FROM memory_event ORDER BY id"));
    ASSERT_STREQ("1|torch.cuda", core_q_rows(db, "SELECT id, value FROM string"));
    snprintf(zWant, sizeof zWant,
             "1|7|1007|1017|4242|0|0|1048576|%llu|NULL|NULL|NULL|5;"
             "4|8|1008|1018|4243|0|0|NULL|%llu|NULL|NULL|NULL|NULL",
             ADDR_A, ADDR_B);
    ASSERT_STREQ(zWant, core_q_rows(db, "SELECT api, correlation, start, end, thread, device, status,"
                                        " bytes, ptr, src, dst, stream, stack_id FROM api_call"
                                        " ORDER BY id"));
    ASSERT_STREQ("3", core_q_rows(db, "SELECT value FROM meta WHERE key='records_decoded'"));
    ASSERT_STREQ("0", core_q_rows(db, "SELECT value FROM meta WHERE key='records_unknown'"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(decode_memory_pool)
{
    char zPath[128], zWant[256];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMemoryPool3 p;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    b_begin(&b, w);
    memset(&p, 0, sizeof p);
    p.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
    p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
    p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    p.correlationId = 21;
    p.processId = 99;
    p.deviceId = 0;
    p.address = ADDR_P;
    p.size = 33554432;
    p.releaseThreshold = 1ull << 30;
    p.timestamp = 3000;
    p.utilizedSize = 0;
    b_add(&b, &p, sizeof p);
    p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
    p.correlationId = 0;
    p.timestamp = 3500;
    p.size = 16777216;
    p.utilizedSize = 4096;
    b_add(&b, &p, sizeof p);
    b_submit(&b);
    db = close_and_open(w, zPath);
    snprintf(zWant, sizeof zWant,
             "3000|1|0|1|%llu|1073741824|33554432|0|21;3500|3|0|1|%llu|1073741824|16777216|4096|NULL",
             ADDR_P, ADDR_P);
    ASSERT_STREQ(zWant, core_q_rows(db, "SELECT ts, op, device, pool_type, address, threshold, size,"
                                        " used, correlation FROM pool_event ORDER BY id"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/* Queue a VT_HREC_MEMORY host record (a VMM or import call's row). */
static void host_mem(struct vt_writer *w, uint64_t ts, int op, int kind, uint64_t address, uint64_t bytes,
                     int device, uint32_t corr, int api, uint64_t handle)
{
    struct vt_hrec h;
    memset(&h, 0, sizeof h);
    h.type = VT_HREC_MEMORY;
    h.u.mem.ts = ts;
    h.u.mem.op = op;
    h.u.mem.mem_kind = kind;
    h.u.mem.address = address;
    h.u.mem.bytes = bytes;
    h.u.mem.device = device;
    h.u.mem.correlation = corr;
    h.u.mem.api = api;
    h.u.mem.handle = handle;
    h.u.mem.thread = 1;
    ASSERT_EQ(0, vt__writer_submit(w, &h));
}

/*
 * Memory counted once where it lives: a release takes its create's kind,
 * device and bytes; an imported handle's release is an import_close; a map
 * takes its handle's kind and an unmap its map's handle; an IPC close gets
 * the bytes of its open; a MEMORY2 record of a VMM or import call is not
 * stored (the call's own row is), and one of an imported pool is an import.
 */
TEST(decode_vmm_and_imports)
{
    char zPath[128], zWant[1024];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMemory4 m;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    /* host memory created with cuMemCreate (no device), mapped, unmapped, released */
    api_call(w, VT_API_ID_40, 1, 1, 0, 0xa1, 0, 0, 4u << 20);
    host_mem(w, 100, VT_MEMOP_VMM_CREATE, VT_MEMKIND_PINNED, 0xa1, 4u << 20, -1, 1, VT_API_ID_40, 0xa1);
    api_call(w, VT_API_ID_42, 2, 1, 0, ADDR_A, 0, 0, 4u << 20);
    host_mem(w, 110, VT_MEMOP_VMM_MAP, VT_MEMKIND_DEVICE, ADDR_A, 4u << 20, 0, 2, VT_API_ID_42, 0xa1);
    host_mem(w, 120, VT_MEMOP_VMM_UNMAP, VT_MEMKIND_DEVICE, ADDR_A, 4u << 20, 0, 3, VT_API_ID_43, 0);
    host_mem(w, 130, VT_MEMOP_VMM_RELEASE, VT_MEMKIND_DEVICE, 0xa1, 0, 0, 4, VT_API_ID_41, 0xa1);
    /* a handle imported from another process (device 1), mapped, released */
    host_mem(w, 200, VT_MEMOP_IMPORT, VT_MEMKIND_DEVICE, 0xb2, 0, 1, 5, VT_API_ID_47, 0xb2);
    host_mem(w, 210, VT_MEMOP_VMM_MAP, VT_MEMKIND_DEVICE, ADDR_B, 2u << 20, 0, 6, VT_API_ID_42, 0xb2);
    host_mem(w, 220, VT_MEMOP_VMM_RELEASE, VT_MEMKIND_DEVICE, 0xb2, 0, 0, 7, VT_API_ID_41, 0xb2);
    /* an IPC mapping opened and closed */
    api_call(w, VT_API_ID_14, 8, 1, 0, ADDR_P, 0, 0, 1u << 20);
    host_mem(w, 300, VT_MEMOP_IMPORT, VT_MEMKIND_DEVICE, ADDR_P, 1u << 20, 0, 8, VT_API_ID_14, 0);
    host_mem(w, 310, VT_MEMOP_IMPORT_CLOSE, VT_MEMKIND_DEVICE, ADDR_P, 0, 0, 9, VT_API_ID_15, 0);
    /* MEMORY2 records: of the cuMemMap call (superseded), of the IPC open (superseded), and an
     * allocation from an imported pool */
    b_begin(&b, w);
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = 2;
    m.address = ADDR_A;
    m.bytes = 4u << 20;
    m.timestamp = 111;
    m.streamId = CUPTI_INVALID_STREAM_ID;
    b_add(&b, &m, sizeof m);
    m.correlationId = 8;
    m.address = ADDR_P;
    m.timestamp = 301;
    b_add(&b, &m, sizeof m);
    m.correlationId = 0;
    m.address = ADDR_P + 4096;
    m.bytes = 8192;
    m.timestamp = 400;
    m.isAsync = 1;
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED;
    m.memoryPoolConfig.address = ADDR_P;
    m.memoryPoolConfig.releaseThreshold = 77; /* not valid for an imported pool: not read */
    m.memoryPoolConfig.pool.processId = 4321;
    m.memoryPoolConfig.utilizedSize = 99;
    b_add(&b, &m, sizeof m);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    m.timestamp = 410;
    b_add(&b, &m, sizeof m);
    b_submit(&b);
    db = close_and_open(w, zPath);
    snprintf(zWant, sizeof zWant,
             "100|3|2|161|4194304|NULL|161;"
             "110|5|2|%llu|4194304|0|161;"
             "120|6|2|%llu|4194304|0|161;"
             "130|4|2|161|4194304|NULL|161;"
             "200|7|3|178|NULL|1|178;"
             "210|5|3|%llu|2097152|0|178;"
             "220|8|3|178|NULL|1|178;"
             "300|7|3|%llu|1048576|0|NULL;"
             "310|8|3|%llu|1048576|0|NULL;"
             "400|7|3|%llu|8192|0|%llu;"
             "410|8|3|%llu|8192|0|%llu",
             ADDR_A, ADDR_A, ADDR_B, ADDR_P, ADDR_P, ADDR_P + 4096, ADDR_P, ADDR_P + 4096, ADDR_P);
    ASSERT_STREQ(zWant, core_q_rows(db, "SELECT ts, op, mem_kind, address, bytes, device, pool_address"
                                        " FROM memory_event ORDER BY ts"));
    ASSERT_STREQ("2|NULL|NULL|NULL", core_q_rows(db, "SELECT DISTINCT pool_type, pool_threshold, pool_size,"
                                                    " pool_used FROM memory_event WHERE ts >= 400"));
    ASSERT_STREQ("2", core_q_rows(db, "SELECT value FROM meta WHERE key = 'memory_records_superseded'"));
    /* the VMM and import calls that had no MEMORY2 record are no loss */
    ASSERT_STREQ("0", core_q_rows(db, "SELECT value FROM meta WHERE key = 'dropped_map'"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/*
 * Pool fields are read only for the pool types that carry them; PyTorch's
 * release threshold UINT64_MAX is stored as its 64-bit pattern (reads -1).
 */
TEST(decode_pool_fields_by_type)
{
    char zPath[128], zWant[256];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMemoryPool3 p;
    CUpti_ActivityMemory4 m;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    b_begin(&b, w);
    memset(&p, 0, sizeof p);
    p.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
    p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
    p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    p.address = ADDR_P;
    p.size = 1u << 20;
    p.releaseThreshold = UINT64_MAX;
    p.timestamp = 100;
    b_add(&b, &p, sizeof p);
    p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED;
    p.address = ADDR_B;
    p.timestamp = 200;
    b_add(&b, &p, sizeof p);
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.address = ADDR_A;
    m.bytes = 4096;
    m.timestamp = 300;
    m.isAsync = 1;
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    m.memoryPoolConfig.address = ADDR_P;
    m.memoryPoolConfig.releaseThreshold = UINT64_MAX;
    m.memoryPoolConfig.pool.size = 1u << 20;
    m.memoryPoolConfig.utilizedSize = 4096;
    b_add(&b, &m, sizeof m);
    b_submit(&b);
    db = close_and_open(w, zPath);
    snprintf(zWant, sizeof zWant, "1|%llu|-1|1048576|0;2|%llu|NULL|NULL|NULL", ADDR_P, ADDR_B);
    ASSERT_STREQ(zWant, core_q_rows(db, "SELECT pool_type, address, threshold, size, used FROM pool_event"
                                        " ORDER BY ts"));
    snprintf(zWant, sizeof zWant, "1|1|%llu|-1|1048576|4096", ADDR_P);
    ASSERT_STREQ(zWant, core_q_rows(db, "SELECT op, pool_type, pool_address, pool_threshold, pool_size,"
                                        " pool_used FROM memory_event"));
    ASSERT_EQ(1, core_q_int(db, "SELECT pool_threshold = -1 AND printf('%llx', pool_threshold) ="
                                " 'ffffffffffffffff' FROM memory_event"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/*
 * CUDA graphs: the kernels, copies and sets a graph launch runs carry their
 * graph and graph node ids; a graph kernel's buffer uses are unknown
 * (args_scanned 0). Another kernel's args_scanned comes from its launch call:
 * 1 scanned, 0 not scanned, NULL when the call is not known.
 */
TEST(decode_graphs_and_scans)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    struct vt_hrec h;
    CUpti_ActivityKernel10 k;
    CUpti_ActivityMemset4 ms;
    CUpti_ActivityMemcpy6 c;
    sqlite3 *db;
    int i;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    for (i = 0; i < 3; i++) { /* launches 1 (scanned), 2 (not scanned), 3 (a graph launch) */
        memset(&h, 0, sizeof h);
        h.type = VT_HREC_API_CALL;
        h.u.api.api = i == 2 ? VT_API_ID_107 : VT_API_ID_104;
        h.u.api.correlation = (uint32_t)(i + 1);
        h.u.api.start = 100 * (i + 1);
        h.u.api.end = h.u.api.start + 5;
        h.u.api.scan = i == 0 ? VT_SCAN_DONE : i == 1 ? VT_SCAN_NOT_DONE : VT_SCAN_NONE;
        ASSERT_EQ(0, vt__writer_submit(w, &h));
    }
    b_begin(&b, w);
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = "k";
    for (i = 1; i <= 4; i++) { /* the kernels of launches 1 and 2, then one nothing explains */
        k.correlationId = (uint32_t)(i == 3 ? 9 : i);
        k.start = 1000 * (uint64_t)i;
        k.end = k.start + 10;
        if (i == 4) { /* and two kernels of the graph launch 3 */
            k.correlationId = 3;
            k.graphId = 5;
            k.graphNodeId = 77;
        }
        b_add(&b, &k, sizeof k);
    }
    k.graphNodeId = 78;
    k.start = 5000;
    k.end = 5010;
    b_add(&b, &k, sizeof k);
    memset(&ms, 0, sizeof ms);
    ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    ms.correlationId = 3;
    ms.start = 6000;
    ms.end = 6010;
    ms.bytes = 4096;
    ms.graphId = 5;
    ms.graphNodeId = 79;
    b_add(&b, &ms, sizeof ms);
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    c.correlationId = 3;
    c.start = 7000;
    c.end = 7010;
    c.bytes = 64;
    c.graphId = 5;
    c.graphNodeId = 80;
    b_add(&b, &c, sizeof c);
    b_submit(&b);
    db = close_and_open(w, zPath);
    ASSERT_STREQ("1|NULL|NULL|1;2|NULL|NULL|0;9|NULL|NULL|NULL;3|5|77|0;3|5|78|0",
                 core_q_rows(db, "SELECT correlation, graph_id, graph_node_id, args_scanned FROM kernel"
                                 " ORDER BY start"));
    ASSERT_STREQ("3|5|79", core_q_rows(db, "SELECT correlation, graph_id, graph_node_id FROM memset"));
    ASSERT_STREQ("3|5|80", core_q_rows(db, "SELECT correlation, graph_id, graph_node_id FROM memcpy"));
    ASSERT_STREQ("0", core_q_rows(db, "SELECT value FROM meta WHERE key = 'dropped_map'"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/*
 * Call sites come from the callbacks as raw return addresses: the writer
 * resolves them to module and module-relative address and writes one
 * `module` row per module (build id, size, mtime); an address no module holds
 * stays absolute, without a module.
 */
TEST(decode_raw_frames_resolved)
{
    char zPath[128], zExe[1024];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct vt_hrec h;
    struct vt_frame *aFrame = calloc(3, sizeof *aFrame);
    uint64_t pcHere = (uint64_t)(uintptr_t)&test_decode_raw_frames_resolved + 8;
    Dl_info info;
    sqlite3 *db;
    ssize_t n = readlink("/proc/self/exe", zExe, sizeof zExe - 1);
    ASSERT(n > 0 && aFrame != NULL);
    zExe[n] = '\0';
    ASSERT(dladdr((void *)(uintptr_t)pcHere, &info));
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    aFrame[0].kind = VT_FRAME_NATIVE;
    aFrame[0].pc = pcHere;
    aFrame[1].kind = VT_FRAME_NATIVE;
    aFrame[1].pc = 0x10; /* nothing is loaded there */
    aFrame[2].kind = VT_FRAME_NATIVE;
    aFrame[2].pc = pcHere + 16; /* the same module: one module row */
    memset(&h, 0, sizeof h);
    h.type = VT_HREC_STACK;
    h.u.stack.id = 1;
    h.u.stack.hash = 99;
    h.u.stack.nFrame = 3;
    h.u.stack.aFrame = aFrame; /* owned by the writer from here */
    ASSERT_EQ(0, vt__writer_submit(w, &h));
    db = close_and_open(w, zPath);
    ASSERT_EQ((long long)(pcHere - (uint64_t)(uintptr_t)info.dli_fbase),
              core_q_int(db, "SELECT pc FROM frame WHERE idx = 0"));
    ASSERT_STREQ(zExe, core_q_rows(db, "SELECT s.value FROM frame f JOIN string s ON s.id = f.module_id"
                                      " WHERE f.idx = 0"));
    ASSERT_STREQ("16|NULL", core_q_rows(db, "SELECT pc, module_id FROM frame WHERE idx = 1"));
    ASSERT_EQ(1, core_q_int(db, "SELECT count(*) FROM module"));
    ASSERT_EQ(1, core_q_int(db, "SELECT m.path_id = f.module_id AND length(m.build_id) >= 16 AND"
                                " m.file_bytes > 0 AND m.mtime_ns > 0 FROM module m, frame f WHERE f.idx = 2"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(decode_memcpy_join)
{
    char zPath[128], zWant[512];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMemcpy6 c;
    CUpti_ActivityMemcpyPtoP4 p;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    /* The API records come first, as they do from the callbacks. */
    api_call(w, VT_API_ID_61, 11, 1, 0, 0, 0x10000, ADDR_A, 4096);   /* cudaMemcpyAsync */
    api_call(w, VT_API_ID_60, 13, 1, 0, 0, ADDR_A, 0x20000, 8192);   /* runtime correlation */
    api_call(w, VT_API_ID_65, 14, 1, 0, 0, ADDR_A, ADDR_P, 1u << 20); /* cudaMemcpyPeerAsync */
    b_begin(&b, w);
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    c.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    c.bytes = 4096;
    c.start = 5000;
    c.end = 5100;
    c.deviceId = 0;
    c.contextId = 1;
    c.streamId = 7;
    c.correlationId = 11;
    b_add(&b, &c, sizeof c);
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    c.bytes = 8192;
    c.start = 6000;
    c.end = 6400;
    c.deviceId = 0;
    c.contextId = 1;
    c.streamId = 7;
    c.correlationId = 12;
    c.runtimeCorrelationId = 13;
    c.graphId = 9;
    b_add(&b, &c, sizeof c);
    /* No API record at all: addresses NULL. */
    c.correlationId = 30;
    c.runtimeCorrelationId = 0;
    c.graphId = 0;
    c.start = 6500;
    c.end = 6600;
    b_add(&b, &c, sizeof c);
    memset(&p, 0, sizeof p);
    p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    p.bytes = 1u << 20;
    p.start = 7000;
    p.end = 7500;
    p.deviceId = 0;
    p.contextId = 1;
    p.streamId = 7;
    p.srcDeviceId = 0;
    p.srcContextId = 1;
    p.dstDeviceId = 1;
    p.dstContextId = 2;
    p.correlationId = 14;
    b_add(&b, &p, sizeof p);
    b_submit(&b);
    db = close_and_open(w, zPath);
    snprintf(zWant, sizeof zWant,
             "5000|5100|0|1|7|11|1|2|3|4096|1|NULL|NULL|65536|%llu|NULL;"
             "6000|6400|0|1|7|12|2|3|1|8192|0|NULL|NULL|%llu|131072|9;"
             "6500|6600|0|1|7|30|2|3|1|8192|0|NULL|NULL|NULL|NULL|NULL;"
             "7000|7500|0|1|7|14|10|3|3|1048576|1|0|1|%llu|%llu|NULL",
             ADDR_A, ADDR_A, ADDR_A, ADDR_P);
    ASSERT_STREQ(zWant, core_q_rows(db, "SELECT start, end, device, context, stream, correlation,"
                                        " copy_kind, src_kind, dst_kind, bytes, is_async, src_device,"
                                        " dst_device, src, dst, graph_id FROM memcpy ORDER BY id"));
    ASSERT_EQ(3, core_q_int(db, "SELECT count(*) FROM api_call"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(decode_memset_join)
{
    char zPath[128], zWant[512];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMemset4 s;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    api_call(w, VT_API_ID_81, 15, 1, 0, 0, 0, ADDR_A, 256);          /* cudaMemsetAsync: dst */
    api_call(w, VT_API_ID_80, 16, 1, 0, ADDR_A + 256, 0, 0, 64);     /* cudaMemset: ptr only */
    b_begin(&b, w);
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.value = 0xab;
    s.bytes = 256;
    s.start = 8000;
    s.end = 8010;
    s.deviceId = 0;
    s.contextId = 1;
    s.streamId = 7;
    s.correlationId = 15;
    s.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    b_add(&b, &s, sizeof s);
    s.value = 0;
    s.bytes = 64;
    s.start = 8100;
    s.end = 8105;
    s.streamId = CUPTI_INVALID_STREAM_ID;
    s.correlationId = 16;
    s.flags = 0;
    s.graphId = 4;
    b_add(&b, &s, sizeof s);
    b_submit(&b);
    db = close_and_open(w, zPath);
    snprintf(zWant, sizeof zWant,
             "8000|8010|0|1|7|15|256|171|3|1|%llu|NULL;8100|8105|0|1|NULL|16|64|0|3|0|%llu|4",
             ADDR_A, ADDR_A + 256);
    ASSERT_STREQ(zWant, core_q_rows(db, "SELECT start, end, device, context, stream, correlation,"
                                        " bytes, value, mem_kind, is_async, dst, graph_id FROM memset"
                                        " ORDER BY id"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/* Fill a kernel record. */
static void kernel(CUpti_ActivityKernel10 *k, CUpti_ActivityKind kind, const char *zName,
                   uint64_t start, uint64_t end, uint32_t corr, int gx, int gy, uint32_t graph)
{
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->name = zName;
    k->start = start;
    k->end = end;
    k->completed = end;
    k->deviceId = 0;
    k->contextId = 1;
    k->streamId = 7;
    k->correlationId = corr;
    k->gridX = gx;
    k->gridY = gy;
    k->gridZ = 1;
    k->blockX = 256;
    k->blockY = 1;
    k->blockZ = 1;
    k->staticSharedMemory = 1024;
    k->dynamicSharedMemory = 2048;
    k->registersPerThread = 32;
    k->graphId = graph;
}

TEST(decode_kernel_interning)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityKernel10 k;
    char zName[32];
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    b_begin(&b, w);
    kernel(&k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "_Z6vecAddPfS_S_i", 9000, 9500, 17, 128, 1, 0);
    b_add(&b, &k, sizeof k);
    /* Same name from another buffer address: still one string row. */
    strcpy(zName, "_Z6vecAddPfS_S_i");
    kernel(&k, CUPTI_ACTIVITY_KIND_KERNEL, zName, 9600, 9700, 18, 64, 2, 3);
    b_add(&b, &k, sizeof k);
    kernel(&k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "gemm", 9800, 9900, 19, 8, 8, 0);
    b_add(&b, &k, sizeof k);
    b_submit(&b);
    db = close_and_open(w, zPath);
    /* (the ids of names: the demangled forms, where the process has a demangler, take ids too) */
    ASSERT_STREQ("9000|9500|0|1|7|17|_Z6vecAddPfS_S_i|128|1|1|256|1|1|1024|2048|32|NULL;"
                 "9600|9700|0|1|7|18|_Z6vecAddPfS_S_i|64|2|1|256|1|1|1024|2048|32|3;"
                 "9800|9900|0|1|7|19|gemm|8|8|1|256|1|1|1024|2048|32|NULL",
                 core_q_rows(db, "SELECT start, end, device, context, stream, correlation,"
                                 " (SELECT value FROM string s WHERE s.id = name_id),"
                                 " grid_x, grid_y, grid_z, block_x, block_y, block_z, static_smem,"
                                 " dynamic_smem, registers, graph_id FROM kernel ORDER BY id"));
    ASSERT_STREQ("1|_Z6vecAddPfS_S_i;1|gemm",
                 core_q_rows(db, "SELECT count(*), value FROM string WHERE value IN ('_Z6vecAddPfS_S_i', 'gemm')"
                                 " GROUP BY value ORDER BY value"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/*
 * With VT_TEST_CXX set (ctest test_decode_cxx, test_decode_cxx_local), the C++ runtime is in the
 * process before any test runs, as in a PyTorch process; without it, the process has no demangler
 * (a C program).
 */
static int g_bCxxLoaded; /* libstdc++.so.6 is in the process */

__attribute__((constructor)) static void load_cxx_runtime(void)
{
    const char *z = getenv("VT_TEST_CXX");
    /* "local": loaded privately, as a Python extension module's dependency is */
    if (z) g_bCxxLoaded = dlopen("libstdc++.so.6", RTLD_NOW | (strcmp(z, "local") == 0 ? RTLD_LOCAL : RTLD_GLOBAL)) != NULL;
}

/* kernel_name rows: each distinct kernel name once, demangled in the writer when the process can. */
TEST(decode_kernel_names)
{
    char zPath[128], *zLong;
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityKernel10 k;
    sqlite3 *db;
    size_t i, nLong = 6000;
    int bCxx, bBefore = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD) != NULL;
    if (getenv("VT_TEST_CXX") && !g_bCxxLoaded) SKIP("no C++ runtime (libstdc++.so.6) installed");
    /* found wherever the process loaded it (here, or by the sanitizers' runtime); never loaded by
     * the tracer itself */
    bCxx = vt__demangle_available(VT_DEMANGLE_PROCESS);
    if (g_bCxxLoaded) ASSERT(bCxx);
    zLong = malloc(nLong + 1);
    ASSERT(zLong != NULL);
    memcpy(zLong, "_ZN", 3);
    for (i = 3; i < nLong; i++) zLong[i] = "1a"[i & 1]; /* a hostile name, over the bound */
    zLong[nLong] = 0;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    b_begin(&b, w);
    kernel(&k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "_Z6vecAddPfS_S_i", 9000, 9500, 17, 128, 1, 0);
    b_add(&b, &k, sizeof k);
    kernel(&k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "ampere_sgemm_128x64_nn", 9600, 9700, 18, 8, 8, 0);
    b_add(&b, &k, sizeof k);
    kernel(&k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "_Z6vecAddPfS_S_i", 9800, 9900, 19, 128, 1, 0);
    b_add(&b, &k, sizeof k);
    kernel(&k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "_ZN2at6native18elementwise_kernelILi128ELi2EEEviPf", 9950,
           9990, 20, 8, 8, 0);
    b_add(&b, &k, sizeof k);
    b_submit(&b);
    b_begin(&b, w);
    kernel(&k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, zLong, 10000, 10100, 21, 8, 8, 0);
    b_add(&b, &k, sizeof k);
    b_submit(&b);
    db = close_and_open(w, zPath);
    free(zLong);
    ASSERT_EQ(bBefore, dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD) != NULL);
    /* one row per distinct name; a plain name is its own demangled and short form */
    ASSERT_STREQ("4", core_q_rows(db, "SELECT count(*) FROM kernel_name"));
    ASSERT_STREQ("ampere_sgemm_128x64_nn|ampere_sgemm_128x64_nn",
                 core_q_rows(db, "SELECT d.value, s.value FROM kernel_name n JOIN string m ON m.id = n.name_id"
                                 " JOIN string d ON d.id = n.demangled_id JOIN string s ON s.id = n.short_id"
                                 " WHERE m.value = 'ampere_sgemm_128x64_nn'"));
    /* over the bound: never demangled, never shown as its mangled self */
    ASSERT_STREQ("NULL|NULL", core_q_rows(db, "SELECT demangled_id, short_id FROM kernel_name n JOIN string m"
                                              " ON m.id = n.name_id WHERE length(m.value) = 6000"));
    if (bCxx) {
        ASSERT_STREQ("vecAdd(float*, float*, float*, int)|vecAdd;"
                     "void at::native::elementwise_kernel<128, 2>(int, float*)|elementwise_kernel",
                     core_q_rows(db, "SELECT d.value, s.value FROM kernel_name n JOIN string m ON m.id = n.name_id"
                                     " JOIN string d ON d.id = n.demangled_id JOIN string s ON s.id = n.short_id"
                                     " WHERE m.value GLOB '_Z*' ORDER BY n.name_id"));
        ASSERT_STREQ("", core_q_rows(db, "SELECT value FROM meta WHERE key = 'kernel_names_demangled'"));
    } else {
        ASSERT_STREQ("NULL|NULL;NULL|NULL;NULL|NULL",
                     core_q_rows(db, "SELECT demangled_id, short_id FROM kernel_name n JOIN string m"
                                     " ON m.id = n.name_id WHERE m.value GLOB '_Z*' ORDER BY n.name_id"));
        ASSERT_STREQ("0: no __cxa_demangle in the process",
                     core_q_rows(db, "SELECT value FROM meta WHERE key = 'kernel_names_demangled'"));
    }
    /* the stored Nsight view reads them, falling back to the stored name */
    ASSERT_STREQ(bCxx ? "vecAdd|_Z6vecAddPfS_S_i;ampere_sgemm_128x64_nn|ampere_sgemm_128x64_nn;vecAdd|_Z6vecAddPfS_S_i"
                      : "_Z6vecAddPfS_S_i|_Z6vecAddPfS_S_i;ampere_sgemm_128x64_nn|ampere_sgemm_128x64_nn;"
                        "_Z6vecAddPfS_S_i|_Z6vecAddPfS_S_i",
                 core_q_rows(db, "SELECT s.value, m.value FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                                 " JOIN StringIds s ON s.id = k.shortName JOIN StringIds m ON m.id = k.mangledName"
                                 " WHERE k.correlationId IN (17, 18, 19) ORDER BY k.start"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/* Fill a marker record on thread 77 (objectKind THREAD) or the process (PROCESS). */
static void marker(CUpti_ActivityMarker2 *m, CUpti_ActivityFlag flags, uint32_t id, uint64_t ts,
                   int bThread, const char *zName, const char *zDomain)
{
    memset(m, 0, sizeof *m);
    m->kind = CUPTI_ACTIVITY_KIND_MARKER;
    m->flags = flags;
    m->timestamp = ts;
    m->id = id;
    m->objectKind = bThread ? CUPTI_ACTIVITY_OBJECT_THREAD : CUPTI_ACTIVITY_OBJECT_PROCESS;
    m->objectId.pt.processId = 99;
    m->objectId.pt.threadId = bThread ? 77 : 0;
    m->name = zName;
    m->domain = zDomain;
}

#define NVTX_ROWS_END                                                                         \
    "SELECT start, end, kind, (SELECT value FROM string WHERE id = name_id),"                \
    " (SELECT value FROM string WHERE id = domain_id), thread, depth, end_thread FROM nvtx_range"   \
    " ORDER BY id"
#define NVTX_ROWS                                                                             \
    "SELECT start, end, kind, (SELECT value FROM string WHERE id = name_id),"                \
    " (SELECT value FROM string WHERE id = domain_id), thread, depth FROM nvtx_range ORDER BY id"

TEST(decode_nvtx_pairing)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMarker2 m;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    b_begin(&b, w);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, 1, "epoch", NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 110, 1, "forward", NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 120, 1, NULL, NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 4, 125, 1, "checkpoint", NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 130, 1, NULL, NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 200, 0, "load", "io");
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 3, 300, 0, NULL, "io");
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 5, 400, 1, "unclosed", NULL);
    b_add(&b, &m, sizeof m);
    b_submit(&b);
    db = close_and_open(w, zPath);
    ASSERT_STREQ("110|120|0|forward|NULL|77|1;"
                 "125|125|2|checkpoint|NULL|77|NULL;"
                 "100|130|0|epoch|NULL|77|0;"
                 "200|300|1|load|io|NULL|NULL;"
                 "400|NULL|0|unclosed|NULL|77|0",
                 core_q_rows(db, NVTX_ROWS));
    ASSERT_EQ(6, core_q_int(db, "SELECT count(*) FROM string"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM dropped"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/* Queue a VT_HREC_NVTX host record: start/end range id, named at its start (bEnd 0) or end (1). */
static void nvtx_id(struct vt_writer *w, uint64_t id, int bEnd)
{
    struct vt_hrec h;
    memset(&h, 0, sizeof h);
    h.type = VT_HREC_NVTX;
    h.u.nvtx.id = id;
    h.u.nvtx.bEnd = bEnd;
    ASSERT_EQ(0, vt__writer_submit(w, &h));
}

/*
 * Push/pop and start/end ranges are both thread markers: the kind comes from
 * the NVTX callbacks (ids of start/end ranges, at their start or only at their
 * end), so push/pop nesting depth counts push/pop ranges only, per thread and
 * domain; a range ended on another thread keeps both threads.
 */
TEST(decode_nvtx_kinds_from_callbacks)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMarker2 m;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    nvtx_id(w, 0x100000011ull, 0); /* the start/end range 0x...11, named at its start (64-bit id) */
    nvtx_id(w, 12, 1);             /* the start/end range 12, named only by nvtxRangeEnd */
    b_begin(&b, w);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, 1, "step", NULL);   /* push, depth 0 */
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 0x11, 105, 1, "prefetch", NULL); /* start/end */
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 110, 1, "forward", NULL); /* push, depth 1 */
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 112, 1, "other domain", "lib"); /* depth 0 there */
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 3, 113, 1, NULL, "lib");
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 120, 1, NULL, NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 130, 1, NULL, NULL);
    b_add(&b, &m, sizeof m);
    /* the start/end range ends on another thread (88) */
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 0x11, 140, 1, NULL, NULL);
    m.objectId.pt.threadId = 88;
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 12, 150, 1, "late", NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 13, 155, 1, "after late", NULL); /* push: depth 1 */
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 13, 158, 1, NULL, NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 12, 160, 1, NULL, NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 14, 170, 1, "again", NULL); /* push: depth 0 again */
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 14, 171, 1, NULL, NULL);
    b_add(&b, &m, sizeof m);
    b_submit(&b);
    db = close_and_open(w, zPath);
    ASSERT_STREQ("112|113|0|other domain|lib|77|0|NULL;"
                 "110|120|0|forward|NULL|77|1|NULL;"
                 "100|130|0|step|NULL|77|0|NULL;"
                 "105|140|1|prefetch|NULL|77|NULL|88;"
                 "155|158|0|after late|NULL|77|1|NULL;"
                 "150|160|1|late|NULL|77|NULL|NULL;"
                 "170|171|0|again|NULL|77|0|NULL",
                 core_q_rows(db, NVTX_ROWS_END));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/*
 * The nesting state of a thread is kept only while it has ranges open: after
 * 10000 short-lived threads (more than the 4096 kept at once) a new thread's
 * ranges still get their depth.
 */
TEST(decode_nvtx_many_threads)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMarker2 m;
    sqlite3 *db;
    uint32_t t, id = 1;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    for (t = 0; t < 10001; t++) {
        if (t % 200 == 0) b_begin(&b, w);
        marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, id, 1000 + 10 * (uint64_t)t, 1, "work", NULL);
        m.objectId.pt.threadId = 1000 + t;
        b_add(&b, &m, sizeof m);
        marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, id + 1, 1001 + 10 * (uint64_t)t, 1, "inner", NULL);
        m.objectId.pt.threadId = 1000 + t;
        b_add(&b, &m, sizeof m);
        marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, id + 1, 1002 + 10 * (uint64_t)t, 1, NULL, NULL);
        m.objectId.pt.threadId = 1000 + t;
        b_add(&b, &m, sizeof m);
        marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, id, 1003 + 10 * (uint64_t)t, 1, NULL, NULL);
        m.objectId.pt.threadId = 1000 + t;
        b_add(&b, &m, sizeof m);
        id += 2;
        if (t % 200 == 199 || t == 10000) b_submit(&b);
    }
    db = close_and_open(w, zPath);
    ASSERT_EQ(20002, core_q_int(db, "SELECT count(*) FROM nvtx_range"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM nvtx_range WHERE depth IS NULL"));
    ASSERT_EQ(10001, core_q_int(db, "SELECT count(*) FROM nvtx_range WHERE depth = 1"));
    ASSERT_STREQ("0|1", core_q_rows(db, "SELECT min(depth), max(depth) FROM nvtx_range WHERE thread = 11000"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(decode_nvtx_map_overflow)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMarker2 m;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.nvtx_map_entries = 2;
    w = core_open(zPath, &cfg);
    b_begin(&b, w);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, 1, "a", NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 110, 1, "b", NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 120, 1, "c", NULL); /* evicts range 1 */
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 3, 130, 1, NULL, NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 140, 1, NULL, NULL);
    b_add(&b, &m, sizeof m);
    marker(&m, CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 150, 1, NULL, NULL); /* its start is gone */
    b_add(&b, &m, sizeof m);
    b_submit(&b);
    db = close_and_open(w, zPath);
    ASSERT_STREQ("100|NULL|0|a|NULL|77|0;120|130|0|c|NULL|77|2;110|140|0|b|NULL|77|1",
                 core_q_rows(db, NVTX_ROWS));
    ASSERT_STREQ("3|1", core_q_rows(db, "SELECT source, sum(count) FROM dropped GROUP BY source"));
    ASSERT_STREQ("1", core_q_rows(db, "SELECT value FROM meta WHERE key='dropped_map'"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(decode_correlation_map_overflow)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMemory4 m;
    uint32_t c;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    cfg.corr_map_entries = 4;
    w = core_open(zPath, &cfg);
    for (c = 1; c <= 6; c++) api_call(w, VT_API_ID_1, c, 100 + c, 0, ADDR_A + c * 4096, 0, 0, 4096);
    b_begin(&b, w);
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 4096;
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = 7;
    for (c = 1; c <= 6; c++) {
        m.correlationId = c;
        m.address = ADDR_A + c * 4096;
        m.timestamp = 5000 + c;
        b_add(&b, &m, sizeof m);
    }
    b_submit(&b);
    db = close_and_open(w, zPath);
    ASSERT_STREQ("1|NULL|NULL;2|NULL|NULL;3|1|103;4|1|104;5|1|105;6|1|106",
                 core_q_rows(db, "SELECT correlation, api, thread FROM memory_event ORDER BY id"));
    ASSERT_STREQ("3|2", core_q_rows(db, "SELECT source, sum(count) FROM dropped GROUP BY source"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(decode_sync_overhead_device)
{
    char zPath[128], zWant[256];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivitySynchronization2 s;
    CUpti_ActivityOverhead3 o;
    CUpti_ActivityDevice5 dv;
    sqlite3 *db;
    int i;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    b_begin(&b, w);
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    s.start = 10000;
    s.end = 10200;
    s.correlationId = 20;
    s.contextId = 1;
    s.streamId = 7;
    s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    b_add(&b, &s, sizeof s);
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
    s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    s.cudaEventId = 3;
    s.start = 10300;
    s.end = 10400;
    s.correlationId = 22;
    b_add(&b, &s, sizeof s);
    /* an event query that found work pending: kept, with its return value */
    s.start = 10500;
    s.end = 10501;
    s.correlationId = 23;
    s.returnValue = CUDA_ERROR_NOT_READY;
    b_add(&b, &s, sizeof s);
    memset(&o, 0, sizeof o);
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.processId = 99;
    o.objectId.pt.threadId = 77;
    o.start = 11000;
    o.end = 11050;
    b_add(&b, &o, sizeof o);
    memset(&dv, 0, sizeof dv);
    dv.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    dv.globalMemoryBandwidth = 3352320000ull;
    dv.globalMemorySize = 85899345920ull;
    dv.numMultiprocessors = 132;
    dv.computeCapabilityMajor = 9;
    dv.computeCapabilityMinor = 0;
    dv.id = 0;
    for (i = 0; i < 16; i++) dv.uuid.bytes[i] = (char)i;
    dv.name = "NVIDIA H100 80GB HBM3";
    b_add(&b, &dv, sizeof dv);
    dv.name = "second description of the same device";
    b_add(&b, &dv, sizeof dv);
    b_submit(&b);
    db = close_and_open(w, zPath);
    snprintf(zWant, sizeof zWant,
             "10000|10200|%d|NULL|1|7|20|NULL|0;10300|10400|%d|NULL|1|NULL|22|3|0;"
             "10500|10501|%d|NULL|1|NULL|23|3|600",
             (int)CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
             (int)CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE,
             (int)CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE);
    ASSERT_STREQ(zWant, core_q_rows(db, "SELECT start, end, type, device, context, stream,"
                                        " correlation, event, status FROM sync_event ORDER BY id"));
    ASSERT_STREQ("cupti|cupti_buffer_flush|11000|11050|2|77|1",
                 core_q_rows(db, "SELECT source, kind, start, end, object_kind, object_id, count"
                                 " FROM overhead"));
    ASSERT_STREQ("0|NVIDIA H100 80GB HBM3|GPU-00010203-0405-0607-0809-0a0b0c0d0e0f|85899345920|9|0|132|"
                 "NULL|NULL|3352320000",
                 core_q_rows(db, "SELECT id, name, uuid, total_bytes, cc_major, cc_minor, sm_count,"
                                 " pci_bus, pci_device, global_memory_bandwidth_kbps FROM device"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

/*
 * CUPTI reports 0 for a time it could not take: such times are stored NULL
 * (never 0), no duration is stored from one, the row is kept, and every
 * record with an unknown time is counted in meta records_time_unknown.
 */
TEST(decode_zero_times)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityMemcpy6 c;
    CUpti_ActivityKernel10 k;
    CUpti_ActivityMemory4 m;
    CUpti_ActivityMarker2 mk;
    struct vt_hrec h;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    b_begin(&b, w);
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    c.bytes = 64;
    c.start = 0; /* neither time known */
    c.end = 0;
    c.correlationId = 1;
    b_add(&b, &c, sizeof c);
    c.start = 5000; /* start known, end not */
    c.correlationId = 2;
    b_add(&b, &c, sizeof c);
    c.start = 0; /* end known, start not: no duration either */
    c.end = 7000;
    c.correlationId = 3;
    b_add(&b, &c, sizeof c);
    c.start = 8000; /* both known */
    c.end = 8100;
    c.correlationId = 4;
    b_add(&b, &c, sizeof c);
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 9000;
    k.end = 0;
    k.correlationId = 5;
    k.name = "kern";
    b_add(&b, &k, sizeof k);
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.address = ADDR_A;
    m.bytes = 4096;
    m.timestamp = 0;
    b_add(&b, &m, sizeof m);
    memset(&mk, 0, sizeof mk);
    mk.kind = CUPTI_ACTIVITY_KIND_MARKER;
    mk.flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
    mk.timestamp = 0;
    mk.id = 1;
    mk.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    mk.name = "mark";
    b_add(&b, &mk, sizeof mk);
    b_submit(&b);
    /* a host record whose clock read failed at exit */
    memset(&h, 0, sizeof h);
    h.type = VT_HREC_API_CALL;
    h.u.api.api = VT_API_ID_1;
    h.u.api.correlation = 6;
    h.u.api.start = 100;
    h.u.api.end = 0;
    ASSERT_EQ(0, vt__writer_submit(w, &h));
    db = close_and_open(w, zPath);
    ASSERT_STREQ("1|NULL|NULL|NULL|NULL;2|5000|NULL|NULL|NULL;3|NULL|NULL|NULL|NULL;4|8000|8100|100|8100",
                 core_q_rows(db, "SELECT correlation, start, end, dur, t + dur + CAST((SELECT value FROM"
                                 " meta WHERE key = 'time_base_ns') AS INTEGER) FROM memcpy ORDER BY correlation"));
    ASSERT_STREQ("9000|NULL|NULL", core_q_rows(db, "SELECT start, end, dur FROM kernel"));
    ASSERT_STREQ("NULL|NULL|4096", core_q_rows(db, "SELECT ts, t, bytes FROM memory_event"));
    ASSERT_STREQ("NULL|NULL|2", core_q_rows(db, "SELECT start, end, kind FROM nvtx_range"));
    ASSERT_STREQ("100|NULL|NULL", core_q_rows(db, "SELECT start, end, dur FROM api_call"));
    ASSERT_EQ(0, core_q_int(db, "SELECT count(*) FROM memcpy WHERE t = 0 OR dur < 0"));
    /* memcpy 1, 2, 3, the kernel, the allocation, the mark, the API call */
    ASSERT_STREQ("7", core_q_rows(db, "SELECT value FROM meta WHERE key = 'records_time_unknown'"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(decode_unknown_kinds)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct batch b;
    CUpti_ActivityAPI a;
    CUpti_ActivityKernel10 k;
    struct vt_writer_stats st;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);
    b_begin(&b, w);
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = 20;
    a.start = 1;
    a.end = 2;
    a.correlationId = 5;
    b_add(&b, &a, sizeof a);
    a.kind = (CUpti_ActivityKind)9999; /* a kind from some future CUPTI */
    b_add(&b, &a, sizeof a);
    kernel(&k, CUPTI_ACTIVITY_KIND_KERNEL, "k", 10, 20, 5, 1, 1, 0);
    b_add(&b, &k, sizeof k);
    b_submit(&b);
    vt__writer_stats(w, &st);
    ASSERT_EQ(0, st.records_decoded); /* not started: nothing decoded yet */
    db = close_and_open(w, zPath);
    ASSERT_STREQ("3", core_q_rows(db, "SELECT value FROM meta WHERE key='records_decoded'"));
    ASSERT_STREQ("2", core_q_rows(db, "SELECT value FROM meta WHERE key='records_unknown'"));
    ASSERT_EQ(1, core_q_int(db, "SELECT count(*) FROM kernel"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

TEST(decode_host_records)
{
    char zPath[128];
    struct vt_writer_config cfg;
    struct vt_writer *w;
    struct vt_hrec h;
    sqlite3 *db;
    core_tmp_path(zPath, sizeof zPath, "t.db");
    core_config(&cfg);
    w = core_open(zPath, &cfg);

    memset(&h, 0, sizeof h);
    h.type = VT_HREC_STACK;
    h.u.stack.id = 1;
    h.u.stack.hash = 0xabc;
    h.u.stack.nFrame = 2;
    h.u.stack.aFrame = calloc(2, sizeof(struct vt_frame));
    h.u.stack.aFrame[0].kind = VT_FRAME_NATIVE;
    h.u.stack.aFrame[0].pc = 0x401000;
    h.u.stack.aFrame[0].zFunction = strdup("main");
    h.u.stack.aFrame[0].zModule = strdup("/bin/app");
    h.u.stack.aFrame[1].kind = VT_FRAME_PYTHON;
    h.u.stack.aFrame[1].zFunction = strdup("train");
    h.u.stack.aFrame[1].zFile = strdup("train.py");
    h.u.stack.aFrame[1].line = 42;
    ASSERT_EQ(0, vt__writer_submit(w, &h));

    memset(&h, 0, sizeof h);
    h.type = VT_HREC_OOM;
    h.u.oom.ts = 500;
    h.u.oom.api = VT_API_ID_1;
    h.u.oom.correlation = 40;
    h.u.oom.device = 0;
    h.u.oom.status = 2;
    h.u.oom.bytes = 1ull << 34;
    h.u.oom.free_bytes = 1ull << 30;
    h.u.oom.total_bytes = 85899345920ull;
    h.u.oom.thread = 4242;
    h.u.oom.stack_id = 1;
    ASSERT_EQ(0, vt__writer_submit(w, &h));

    memset(&h, 0, sizeof h);
    h.type = VT_HREC_MEMORY;
    h.u.mem.ts = 600;
    h.u.mem.op = VT_MEMOP_VMM_MAP;
    h.u.mem.mem_kind = VT_MEMKIND_DEVICE;
    h.u.mem.address = ADDR_P;
    h.u.mem.bytes = 2u << 20;
    h.u.mem.device = 0;
    h.u.mem.correlation = 41;
    h.u.mem.api = VT_API_ID_42;
    h.u.mem.handle = 0x55;
    h.u.mem.thread = 4242;
    h.u.mem.stack_id = 1;
    ASSERT_EQ(0, vt__writer_submit(w, &h));

    memset(&h, 0, sizeof h);
    h.type = VT_HREC_BUFFER_USE;
    h.u.use.correlation = 17;
    h.u.use.kind = VT_USE_KERNEL_ARG;
    h.u.use.address = ADDR_A;
    h.u.use.ts = 700;
    h.u.use.device = 0;
    ASSERT_EQ(0, vt__writer_submit(w, &h));

    memset(&h, 0, sizeof h);
    h.type = VT_HREC_DROPPED;
    h.u.dropped.ts = 800;
    h.u.dropped.source = VT_DROP_CUPTI;
    h.u.dropped.zWhat = "activity records";
    h.u.dropped.count = 17;
    ASSERT_EQ(0, vt__writer_submit(w, &h));

    memset(&h, 0, sizeof h);
    h.type = VT_HREC_OVERHEAD;
    h.u.overhead.zKind = "stack_capture";
    h.u.overhead.start = 900;
    h.u.overhead.end = 950;
    h.u.overhead.count = 3;
    ASSERT_EQ(0, vt__writer_submit(w, &h));

    memset(&h, 0, sizeof h);
    h.type = VT_HREC_DEVICE;
    h.u.device.id = 0;
    strcpy(h.u.device.zName, "GPU0");
    strcpy(h.u.device.zUuid, "GPU-1234");
    h.u.device.total_bytes = 1ull << 34;
    h.u.device.cc_major = 8;
    h.u.device.cc_minor = 6;
    h.u.device.sm_count = 84;
    h.u.device.pci_bus = 23;
    h.u.device.pci_device = 0;
    h.u.device.bandwidth_kbps = 0;
    ASSERT_EQ(0, vt__writer_submit(w, &h));

    memset(&h, 0, sizeof h);
    h.type = VT_HREC_META;
    strcpy(h.u.meta.zKey, "pid");
    h.u.meta.zValue = strdup("4242");
    ASSERT_EQ(0, vt__writer_submit(w, &h));

    db = close_and_open(w, zPath);
    ASSERT_STREQ("1|2748|2", core_q_rows(db, "SELECT id, hash, depth FROM stack"));
    ASSERT_STREQ("1|0|0|4198400|main|NULL|NULL|/bin/app;1|1|1|NULL|train|train.py|42|NULL",
                 core_q_rows(db, "SELECT stack_id, idx, kind, pc,"
                                 " (SELECT value FROM string WHERE id = function_id),"
                                 " (SELECT value FROM string WHERE id = file_id), line,"
                                 " (SELECT value FROM string WHERE id = module_id)"
                                 " FROM frame ORDER BY idx"));
    ASSERT_STREQ("500|1|40|0|17179869184|2|1073741824|85899345920|4242|1",
                 core_q_rows(db, "SELECT ts, api, correlation, device, bytes, status, free_bytes,"
                                 " total_bytes, thread, stack_id FROM oom_event"));
    ASSERT_STREQ("600|5|3|139706696204288|2097152|0|41|42|0|85|4242|1",
                 core_q_rows(db, "SELECT ts, op, mem_kind, address, bytes, device, correlation, api,"
                                 " is_async, pool_address, thread, stack_id FROM memory_event"));
    ASSERT_STREQ("17|0|139637976727552|700|0",
                 core_q_rows(db, "SELECT correlation, kind, address, ts, device FROM buffer_use"));
    ASSERT_STREQ("800|0|activity records|17",
                 core_q_rows(db, "SELECT ts, source, what, count FROM dropped"));
    ASSERT_STREQ("vramtrace|stack_capture|900|950|NULL|NULL|3",
                 core_q_rows(db, "SELECT source, kind, start, end, object_kind, object_id, count"
                                 " FROM overhead"));
    ASSERT_STREQ("0|GPU0|GPU-1234|17179869184|8|6|84|23|0|NULL",
                 core_q_rows(db, "SELECT id, name, uuid, total_bytes, cc_major, cc_minor, sm_count,"
                                 " pci_bus, pci_device, global_memory_bandwidth_kbps FROM device"));
    ASSERT_STREQ("4242", core_q_rows(db, "SELECT value FROM meta WHERE key='pid'"));
    sqlite3_close(db);
    CORE_LEAK_CHECK();
}

VT_TEST_LIST(T(decode_zero_times) T(decode_raw_frames_resolved) T(decode_graphs_and_scans) T(decode_vmm_and_imports) T(decode_pool_fields_by_type) T(decode_memory) T(decode_memory_pool) T(decode_memcpy_join) T(decode_memset_join)
                 T(decode_kernel_interning) T(decode_kernel_names) T(decode_nvtx_pairing) T(decode_nvtx_kinds_from_callbacks) T(decode_nvtx_many_threads)
                 T(decode_nvtx_map_overflow)
                     T(decode_correlation_map_overflow) T(decode_sync_overhead_device)
                         T(decode_unknown_kinds) T(decode_host_records))
