/* The vramtrace trace schema: the one source of truth for the SQLite DDL and its enums. */
#ifndef VRAMTRACE_SCHEMA_H
#define VRAMTRACE_SCHEMA_H

/*
 * A trace is one SQLite file per traced process. Every column is documented in
 * docs/schema.md; change this file and that one together, and bump
 * VT_SCHEMA_VERSION on any incompatible change (readers refuse newer versions).
 *
 * Conventions
 *   - timestamps are integer nanoseconds on the CUPTI clock; meta rows
 *     'clock_anchor_cupti_ns' and 'clock_anchor_wall_ns' give one instant on both
 *     clocks so traces of several processes line up; they are stored relative
 *     to a per-trace base and read through generated columns (see VT__INSTANT);
 *   - addresses and byte counts are integers (SQLite stores them as signed 64-bit;
 *     device addresses are below 2^63 on every platform CUDA supports);
 *   - interned strings (kernel names, NVTX text, frame names) live in `string`;
 *   - enum columns hold CUPTI's own numeric values where CUPTI defines them, and
 *     each enum has a small lookup table (enum_*) created with the schema.
 */

#define VT_SCHEMA_VERSION 2
#define VT_SCHEMA_VERSION_OLDEST 1 /* the oldest version readers accept (v1: times stored absolute) */
#define VT_SCHEMA_APPLICATION_ID 0x76726d74 /* 'vrmt': PRAGMA application_id of every trace */

/* memory_event.op */
#define VT_MEMOP_ALLOC       1 /* allocation (CUPTI MEMORY2 ALLOCATION, or API callback) */
#define VT_MEMOP_FREE        2 /* release */
#define VT_MEMOP_VMM_CREATE  3 /* cuMemCreate: physical handle created (address = handle) */
#define VT_MEMOP_VMM_RELEASE 4 /* cuMemRelease: physical handle released (address = handle) */
#define VT_MEMOP_VMM_MAP     5 /* cuMemMap: bytes mapped at address (handle in pool_address) */
#define VT_MEMOP_VMM_UNMAP   6 /* cuMemUnmap: bytes unmapped at address */

/* memory kinds: CUpti_ActivityMemoryKind values */
#define VT_MEMKIND_UNKNOWN        0
#define VT_MEMKIND_PAGEABLE       1
#define VT_MEMKIND_PINNED         2
#define VT_MEMKIND_DEVICE         3
#define VT_MEMKIND_ARRAY          4
#define VT_MEMKIND_MANAGED        5
#define VT_MEMKIND_DEVICE_STATIC  6
#define VT_MEMKIND_MANAGED_STATIC 7

/* copy kinds: CUpti_ActivityMemcpyKind values (same numbers as Nsight's ENUM_CUDA_MEMCPY_OPER) */
#define VT_COPY_UNKNOWN 0
#define VT_COPY_HTOD    1
#define VT_COPY_DTOH    2
#define VT_COPY_HTOA    3
#define VT_COPY_ATOH    4
#define VT_COPY_ATOA    5
#define VT_COPY_ATOD    6
#define VT_COPY_DTOA    7
#define VT_COPY_DTOD    8
#define VT_COPY_HTOH    9
#define VT_COPY_PTOP    10

/* nvtx_range.kind */
#define VT_NVTX_PUSHPOP  0 /* nvtxRangePush/Pop */
#define VT_NVTX_STARTEND 1 /* nvtxRangeStart/End */
#define VT_NVTX_MARK     2 /* nvtxMark: start == end */

/* pool_event.op: CUpti_ActivityMemoryPoolOperationType values */
#define VT_POOLOP_CREATED   1
#define VT_POOLOP_DESTROYED 2
#define VT_POOLOP_TRIMMED   3

/* dropped.source */
#define VT_DROP_CUPTI  0 /* CUPTI reported records dropped (cuptiActivityGetNumDroppedRecords) */
#define VT_DROP_QUEUE  1 /* the writer fell behind: records discarded at the bounded queue */
#define VT_DROP_WRITER 2 /* a row failed to insert (SQLite error) */
#define VT_DROP_MAP    3 /* an auxiliary bounded map overflowed (correlation args, open NVTX ranges) */

/* buffer_use.kind */
#define VT_USE_KERNEL_ARG 0 /* a kernel parameter word pointed into the allocation */
#define VT_USE_MEMCPY_SRC 1
#define VT_USE_MEMCPY_DST 2
#define VT_USE_MEMSET     3

/* stack frame kinds */
#define VT_FRAME_NATIVE 0
#define VT_FRAME_PYTHON 1

/*
 * Host API ids (api_call.api, memory_event.api, oom_event.api). Stable numbers:
 * append only. X(id, name, family) where family is one of
 * alloc, free, vmm, memcpy, memset, launch, sync.
 */
#define VT_API_LIST(X)                              \
    X(1, "cudaMalloc", "alloc")                     \
    X(2, "cudaFree", "free")                        \
    X(3, "cudaMallocAsync", "alloc")                \
    X(4, "cudaFreeAsync", "free")                   \
    X(5, "cudaMallocFromPoolAsync", "alloc")        \
    X(6, "cudaMallocHost", "alloc")                 \
    X(7, "cudaHostAlloc", "alloc")                  \
    X(8, "cudaFreeHost", "free")                    \
    X(9, "cudaMallocManaged", "alloc")              \
    X(10, "cudaMallocPitch", "alloc")               \
    X(11, "cudaMalloc3D", "alloc")                  \
    X(12, "cudaHostRegister", "alloc")              \
    X(13, "cudaHostUnregister", "free")             \
    X(20, "cuMemAlloc", "alloc")                    \
    X(21, "cuMemFree", "free")                      \
    X(22, "cuMemAllocAsync", "alloc")               \
    X(23, "cuMemFreeAsync", "free")                 \
    X(24, "cuMemAllocFromPoolAsync", "alloc")       \
    X(25, "cuMemAllocHost", "alloc")                \
    X(26, "cuMemHostAlloc", "alloc")                \
    X(27, "cuMemFreeHost", "free")                  \
    X(28, "cuMemAllocManaged", "alloc")             \
    X(29, "cuMemAllocPitch", "alloc")               \
    X(30, "cuMemHostRegister", "alloc")             \
    X(31, "cuMemHostUnregister", "free")            \
    X(40, "cuMemCreate", "vmm")                     \
    X(41, "cuMemRelease", "vmm")                    \
    X(42, "cuMemMap", "vmm")                        \
    X(43, "cuMemUnmap", "vmm")                      \
    X(44, "cuMemAddressReserve", "vmm")             \
    X(45, "cuMemAddressFree", "vmm")                \
    X(60, "cudaMemcpy", "memcpy")                   \
    X(61, "cudaMemcpyAsync", "memcpy")              \
    X(62, "cudaMemcpy2D", "memcpy")                 \
    X(63, "cudaMemcpy2DAsync", "memcpy")            \
    X(64, "cudaMemcpyPeer", "memcpy")               \
    X(65, "cudaMemcpyPeerAsync", "memcpy")          \
    X(66, "cuMemcpy", "memcpy")                     \
    X(67, "cuMemcpyAsync", "memcpy")                \
    X(68, "cuMemcpyHtoD", "memcpy")                 \
    X(69, "cuMemcpyHtoDAsync", "memcpy")            \
    X(70, "cuMemcpyDtoH", "memcpy")                 \
    X(71, "cuMemcpyDtoHAsync", "memcpy")            \
    X(72, "cuMemcpyDtoD", "memcpy")                 \
    X(73, "cuMemcpyDtoDAsync", "memcpy")            \
    X(80, "cudaMemset", "memset")                   \
    X(81, "cudaMemsetAsync", "memset")              \
    X(82, "cuMemsetD8", "memset")                   \
    X(83, "cuMemsetD8Async", "memset")              \
    X(84, "cuMemsetD32", "memset")                  \
    X(85, "cuMemsetD32Async", "memset")             \
    X(100, "cudaLaunchKernel", "launch")            \
    X(101, "cudaLaunchKernelExC", "launch")         \
    X(102, "cuLaunchKernel", "launch")              \
    X(103, "cuLaunchKernelEx", "launch")            \
    X(120, "cudaDeviceSynchronize", "sync")         \
    X(121, "cudaStreamSynchronize", "sync")         \
    X(122, "cuCtxSynchronize", "sync")              \
    X(123, "cuStreamSynchronize", "sync")           \
    X(104, "__cudaLaunchKernel", "launch")                     \
    X(105, "cudaLaunchCooperativeKernel", "launch")            \
    X(106, "cudaLaunchCooperativeKernelMultiDevice", "launch") \
    X(107, "cudaGraphLaunch", "launch")                        \
    X(108, "cudaLaunch", "launch")                             \
    X(109, "cuLaunchCooperativeKernel", "launch")              \
    X(110, "cuLaunchCooperativeKernelMultiDevice", "launch")   \
    X(111, "cuGraphLaunch", "launch")                          \
    X(112, "cuLaunch", "launch")                               \
    X(113, "cuLaunchGrid", "launch")                           \
    X(114, "cuLaunchGridAsync", "launch")                      \
    X(140, "cudaMemcpyToArray", "memcpy")                      \
    X(141, "cudaMemcpyToArrayAsync", "memcpy")                 \
    X(142, "cudaMemcpyFromArray", "memcpy")                    \
    X(143, "cudaMemcpyFromArrayAsync", "memcpy")               \
    X(144, "cudaMemcpyArrayToArray", "memcpy")                 \
    X(145, "cudaMemcpy2DToArray", "memcpy")                    \
    X(146, "cudaMemcpy2DToArrayAsync", "memcpy")               \
    X(147, "cudaMemcpy2DFromArray", "memcpy")                  \
    X(148, "cudaMemcpy2DFromArrayAsync", "memcpy")             \
    X(149, "cudaMemcpy2DArrayToArray", "memcpy")               \
    X(150, "cudaMemcpyToSymbol", "memcpy")                     \
    X(151, "cudaMemcpyToSymbolAsync", "memcpy")                \
    X(152, "cudaMemcpyFromSymbol", "memcpy")                   \
    X(153, "cudaMemcpyFromSymbolAsync", "memcpy")              \
    X(154, "cudaMemcpy3D", "memcpy")                           \
    X(155, "cudaMemcpy3DAsync", "memcpy")                      \
    X(156, "cudaMemcpy3DPeer", "memcpy")                       \
    X(157, "cudaMemcpy3DPeerAsync", "memcpy")                  \
    X(158, "cudaMemcpyBatchAsync", "memcpy")                   \
    X(159, "cudaMemcpy3DBatchAsync", "memcpy")                 \
    X(160, "cuMemcpyDtoA", "memcpy")                           \
    X(161, "cuMemcpyAtoD", "memcpy")                           \
    X(162, "cuMemcpyHtoA", "memcpy")                           \
    X(163, "cuMemcpyHtoAAsync", "memcpy")                      \
    X(164, "cuMemcpyAtoH", "memcpy")                           \
    X(165, "cuMemcpyAtoHAsync", "memcpy")                      \
    X(166, "cuMemcpyAtoA", "memcpy")                           \
    X(167, "cuMemcpy2D", "memcpy")                             \
    X(168, "cuMemcpy2DUnaligned", "memcpy")                    \
    X(169, "cuMemcpy2DAsync", "memcpy")                        \
    X(170, "cuMemcpy3D", "memcpy")                             \
    X(171, "cuMemcpy3DAsync", "memcpy")                        \
    X(172, "cuMemcpyPeer", "memcpy")                           \
    X(173, "cuMemcpyPeerAsync", "memcpy")                      \
    X(174, "cuMemcpy3DPeer", "memcpy")                         \
    X(175, "cuMemcpy3DPeerAsync", "memcpy")                    \
    X(176, "cuMemcpyBatchAsync", "memcpy")                     \
    X(177, "cuMemcpy3DBatchAsync", "memcpy")                   \
    X(180, "cudaMemset2D", "memset")                           \
    X(181, "cudaMemset2DAsync", "memset")                      \
    X(182, "cudaMemset3D", "memset")                           \
    X(183, "cudaMemset3DAsync", "memset")                      \
    X(184, "cuMemsetD16", "memset")                            \
    X(185, "cuMemsetD16Async", "memset")                       \
    X(186, "cuMemsetD2D8", "memset")                           \
    X(187, "cuMemsetD2D8Async", "memset")                      \
    X(188, "cuMemsetD2D16", "memset")                          \
    X(189, "cuMemsetD2D16Async", "memset")                     \
    X(190, "cuMemsetD2D32", "memset")                          \
    X(191, "cuMemsetD2D32Async", "memset")

enum vt_api {
#define VT__API_ENUM(id, name, family) VT_API_ID_##id = id,
    VT_API_LIST(VT__API_ENUM)
#undef VT__API_ENUM
    VT_API_NONE = 0
};

/*
 * Time columns. Each timed table stores its time as `t`, nanoseconds since the
 * trace's time base (meta 'time_base_ns', the CUPTI clock when tracing began),
 * and an interval's length as `dur` (end - start); `ts` (instants) or `start`
 * and `end` (intervals) are virtual generated columns holding the absolute
 * CUPTI-clock times. They take no space in the file and read like the plain
 * columns of schema version 1, so queries never see the difference. What it
 * saves: an absolute time needs SQLite's 8-byte integer, a time within 39 hours
 * of the base 6 bytes and a kernel's duration 2 or 3 (docs/performance.md).
 * `@base` is replaced by the base's decimal value when the trace is created
 * (vt__schema_create_at): a generated column may only refer to its own row.
 * A stored value outside +-2^62 or not an integer (only a damaged or hand-made
 * trace holds one: text would otherwise read as 0) gives a NULL time, which
 * the analyzer's guard hides like any impossible row. In range, t + base cannot
 * overflow for a base below 2^62; an end beyond 2^63 becomes a real number,
 * which the guard rejects too.
 */
#define VT__RANGE(c) c " BETWEEN -4611686018427387904 AND 4611686018427387903"
#define VT__START "CASE WHEN " VT__RANGE("t") " THEN t + @base END"
#define VT__END "CASE WHEN " VT__RANGE("t") " AND " VT__RANGE("dur") " THEN t + dur + @base END"
#define VT__INSTANT \
    "t INTEGER NOT NULL,\n  ts INTEGER GENERATED ALWAYS AS (" VT__START ") VIRTUAL,\n  "
#define VT__INTERVAL \
    "t INTEGER NOT NULL, dur INTEGER NOT NULL,\n" \
    "  start INTEGER GENERATED ALWAYS AS (" VT__START ") VIRTUAL,\n" \
    "  end INTEGER GENERATED ALWAYS AS (" VT__END ") VIRTUAL,\n  "
#define VT__INTERVAL_NULL_END /* dur NULL: the end is unknown (an open NVTX range) */ \
    "t INTEGER NOT NULL, dur INTEGER,\n" \
    "  start INTEGER GENERATED ALWAYS AS (" VT__START ") VIRTUAL,\n" \
    "  end INTEGER GENERATED ALWAYS AS (" VT__END ") VIRTUAL,\n  "

/*
 * The trace tables. Executed once when a trace is created (with `@base`
 * replaced, see above), inside one transaction, after which PRAGMA
 * user_version = VT_SCHEMA_VERSION and PRAGMA application_id =
 * VT_SCHEMA_APPLICATION_ID are set.
 */
#define VT_SCHEMA_DDL \
"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;\n" \
"CREATE TABLE device(\n" \
"  id INTEGER PRIMARY KEY, name TEXT, uuid TEXT, total_bytes INTEGER,\n" \
"  cc_major INTEGER, cc_minor INTEGER, sm_count INTEGER, pci_bus INTEGER,\n" \
"  pci_device INTEGER, global_memory_bandwidth_kbps INTEGER);\n" \
"CREATE TABLE string(id INTEGER PRIMARY KEY, value TEXT NOT NULL);\n" \
"CREATE TABLE stack(id INTEGER PRIMARY KEY, hash INTEGER NOT NULL, depth INTEGER NOT NULL);\n" \
"CREATE TABLE frame(\n" \
"  stack_id INTEGER NOT NULL, idx INTEGER NOT NULL, kind INTEGER NOT NULL,\n" \
"  pc INTEGER, function_id INTEGER, file_id INTEGER, line INTEGER,\n" \
"  module_id INTEGER, PRIMARY KEY(stack_id, idx)) WITHOUT ROWID;\n" \
"CREATE TABLE api_call(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL_NULL_END "api INTEGER NOT NULL,\n" \
"  correlation INTEGER, thread INTEGER, device INTEGER,\n" \
"  status INTEGER NOT NULL DEFAULT 0, bytes INTEGER, ptr INTEGER,\n" \
"  src INTEGER, dst INTEGER, stream INTEGER, stack_id INTEGER);\n" \
"CREATE TABLE memory_event(\n" \
"  id INTEGER PRIMARY KEY, " VT__INSTANT "op INTEGER NOT NULL,\n" \
"  mem_kind INTEGER NOT NULL, address INTEGER NOT NULL, bytes INTEGER NOT NULL,\n" \
"  device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER,\n" \
"  api INTEGER, is_async INTEGER NOT NULL DEFAULT 0, pool_type INTEGER,\n" \
"  pool_address INTEGER, pool_threshold INTEGER, pool_size INTEGER,\n" \
"  pool_used INTEGER, pc INTEGER, thread INTEGER, stack_id INTEGER,\n" \
"  source_id INTEGER);\n" \
"CREATE TABLE oom_event(\n" \
"  id INTEGER PRIMARY KEY, " VT__INSTANT "api INTEGER NOT NULL,\n" \
"  correlation INTEGER, device INTEGER, bytes INTEGER NOT NULL,\n" \
"  status INTEGER NOT NULL, free_bytes INTEGER, total_bytes INTEGER,\n" \
"  thread INTEGER, stack_id INTEGER);\n" \
"CREATE TABLE memcpy(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL \
"device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER,\n" \
"  copy_kind INTEGER NOT NULL, src_kind INTEGER NOT NULL, dst_kind INTEGER NOT NULL,\n" \
"  bytes INTEGER NOT NULL, is_async INTEGER NOT NULL DEFAULT 0,\n" \
"  src_device INTEGER, dst_device INTEGER, src INTEGER, dst INTEGER,\n" \
"  graph_id INTEGER);\n" \
"CREATE TABLE memset(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL \
"device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER,\n" \
"  bytes INTEGER NOT NULL, value INTEGER, mem_kind INTEGER,\n" \
"  is_async INTEGER NOT NULL DEFAULT 0, dst INTEGER, graph_id INTEGER);\n" \
"CREATE TABLE kernel(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL \
"device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER,\n" \
"  name_id INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,\n" \
"  block_x INTEGER, block_y INTEGER, block_z INTEGER,\n" \
"  static_smem INTEGER, dynamic_smem INTEGER, registers INTEGER,\n" \
"  graph_id INTEGER);\n" \
"CREATE TABLE buffer_use(\n" \
"  correlation INTEGER NOT NULL, kind INTEGER NOT NULL, address INTEGER NOT NULL,\n" \
"  t INTEGER, ts INTEGER GENERATED ALWAYS AS (" VT__START ") VIRTUAL, device INTEGER);\n" \
"CREATE TABLE nvtx_range(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL_NULL_END \
"kind INTEGER NOT NULL, name_id INTEGER, domain_id INTEGER,\n" \
"  thread INTEGER, depth INTEGER);\n" \
"CREATE TABLE sync_event(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL \
"type INTEGER NOT NULL, device INTEGER, context INTEGER, stream INTEGER,\n" \
"  correlation INTEGER, event INTEGER);\n" \
"CREATE TABLE pool_event(\n" \
"  id INTEGER PRIMARY KEY, " VT__INSTANT "op INTEGER NOT NULL,\n" \
"  device INTEGER, pool_type INTEGER, address INTEGER, threshold INTEGER,\n" \
"  size INTEGER, used INTEGER, correlation INTEGER);\n" \
"CREATE TABLE dropped(\n" \
"  id INTEGER PRIMARY KEY, " VT__INSTANT "source INTEGER NOT NULL,\n" \
"  what TEXT, count INTEGER NOT NULL, device INTEGER, context INTEGER,\n" \
"  stream INTEGER);\n" \
"CREATE TABLE overhead(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL "source TEXT NOT NULL,\n" \
"  kind TEXT NOT NULL, object_kind INTEGER,\n" \
"  object_id INTEGER, count INTEGER NOT NULL DEFAULT 1);\n" \
"CREATE TABLE enum_api(id INTEGER PRIMARY KEY, name TEXT NOT NULL, family TEXT NOT NULL);\n" \
"CREATE TABLE enum_mem_kind(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" \
"CREATE TABLE enum_copy_kind(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" \
"CREATE TABLE enum_memory_op(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" \
"INSERT INTO enum_mem_kind VALUES(0,'unknown'),(1,'pageable'),(2,'pinned'),(3,'device'),\n" \
"  (4,'array'),(5,'managed'),(6,'device_static'),(7,'managed_static');\n" \
"INSERT INTO enum_copy_kind VALUES(0,'unknown'),(1,'HtoD'),(2,'DtoH'),(3,'HtoA'),(4,'AtoH'),\n" \
"  (5,'AtoA'),(6,'AtoD'),(7,'DtoA'),(8,'DtoD'),(9,'HtoH'),(10,'PtoP');\n" \
"INSERT INTO enum_memory_op VALUES(1,'alloc'),(2,'free'),(3,'vmm_create'),\n" \
"  (4,'vmm_release'),(5,'vmm_map'),(6,'vmm_unmap');\n" \
"CREATE VIEW memory_timeline AS SELECT id, ts, device, mem_kind, op, bytes,\n" \
"  SUM(CASE op WHEN 1 THEN bytes WHEN 2 THEN -bytes ELSE 0 END)\n" \
"    OVER (PARTITION BY device, mem_kind ORDER BY ts, id) AS live_bytes\n" \
"  FROM memory_event WHERE op IN (1, 2);\n"

/*
 * Indexes, created by the analyzer on its first writable open (all of them,
 * IF NOT EXISTS), never by the tracer: building them would slow the hot path,
 * and at close they cost the traced process a third of the writer's CPU time
 * and the file 12-17 bytes per indexed row (docs/performance.md). Readers that
 * run without them (`analyze --no-write`, `info`, `export`) read tables in rowid
 * order, which is time order or close to it.
 */
#define VT_SCHEMA_INDEXES \
"CREATE INDEX IF NOT EXISTS memory_event_ts ON memory_event(ts);\n" \
"CREATE INDEX IF NOT EXISTS api_call_correlation ON api_call(correlation);\n" \
"CREATE INDEX IF NOT EXISTS kernel_start ON kernel(start);\n" \
"CREATE INDEX IF NOT EXISTS kernel_correlation ON kernel(correlation);\n" \
"CREATE INDEX IF NOT EXISTS memcpy_start ON memcpy(start);\n" \
"CREATE INDEX IF NOT EXISTS buffer_use_address ON buffer_use(address);\n" \
"CREATE INDEX IF NOT EXISTS buffer_use_correlation ON buffer_use(correlation);\n"

/*
 * Tables the analyzer writes back (dropped and re-created on each analyze run).
 * lifetime: one row per reconstructed allocation lifetime.
 * phase: training / evaluation phases and iterations found.
 * finding: every finding of every detector.
 */
#define VT_ANALYSIS_DDL \
"DROP VIEW IF EXISTS allocation;\n" \
"DROP TABLE IF EXISTS lifetime;\n" \
"DROP TABLE IF EXISTS phase;\n" \
"DROP TABLE IF EXISTS finding;\n" \
"CREATE TABLE lifetime(\n" \
"  id INTEGER PRIMARY KEY, device INTEGER, mem_kind INTEGER NOT NULL,\n" \
"  address INTEGER NOT NULL, bytes INTEGER NOT NULL, alloc_ts INTEGER,\n" \
"  free_ts INTEGER, first_use_ts INTEGER, last_use_ts INTEGER,\n" \
"  use_count INTEGER NOT NULL DEFAULT 0, alloc_api INTEGER, free_api INTEGER,\n" \
"  alloc_event_id INTEGER, free_event_id INTEGER, stack_id INTEGER,\n" \
"  phase_id INTEGER, status TEXT NOT NULL);\n" \
"CREATE TABLE phase(\n" \
"  id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT, start INTEGER NOT NULL,\n" \
"  end INTEGER NOT NULL, source TEXT NOT NULL, iteration INTEGER,\n" \
"  peak_bytes INTEGER, peak_ts INTEGER, device INTEGER);\n" \
"CREATE TABLE finding(\n" \
"  id INTEGER PRIMARY KEY, kind TEXT NOT NULL, severity TEXT NOT NULL,\n" \
"  title TEXT NOT NULL, bytes INTEGER, count INTEGER, first_ts INTEGER,\n" \
"  last_ts INTEGER, device INTEGER, phase TEXT, stack_id INTEGER,\n" \
"  site TEXT, evidence TEXT, fix TEXT);\n" \
"CREATE VIEW allocation AS SELECT l.*, l.free_ts - l.alloc_ts AS duration,\n" \
"  k.name AS mem_kind_name FROM lifetime l\n" \
"  LEFT JOIN enum_mem_kind k ON k.id = l.mem_kind;\n"

#endif /* VRAMTRACE_SCHEMA_H */
