/* Nsight Systems-compatible and multi-trace views over vramtrace traces: SQL templates. */
#ifndef VRAMTRACE_NSIGHT_H
#define VRAMTRACE_NSIGHT_H

/*
 * Every trace of schema 4 carries the per-trace and static views below as ordinary views
 * (vramtrace/views.h, created with the schema; `vramtrace upgrade` adds them to older traces),
 * so the sqlite3 shell, DuckDB or pandas see them. `vramtrace sql` over several traces creates
 * TEMP views of the same names on its connection, each the UNION ALL of one SELECT per trace.
 * Templates, in which
 *
 *   $S  is replaced by the schema the trace is read from ("main" or "t0", "t1", ... when
 *       several traces are attached; nothing, with its dot, in a view stored in the trace),
 *   $T  by the trace's index (0, 1, ...; 0 in a stored view),
 *   $F  by the trace's file path as a quoted SQL string literal,
 *   $K  by the trace's kernel_name table ("$S.kernel_name"), or by an empty table of its
 *       columns for traces older than schema 3, which have none.
 *
 * Nsight Systems' layout (docs/nsight.md lists what is and is not offered):
 *   - integer ns `start`/`end` on the CUPTI clock, exactly as stored;
 *   - `globalPid` = pid * 0x1000000 and `globalTid` = globalPid + (thread & 0xFFFFFF),
 *     Nsight's encoding, so `globalPid / 0x1000000 % 0x1000000` is the pid;
 *   - string ids: string N of a trace with pid P appears in StringIds as P * 2^32 + N
 *     (the trace's index instead of P when it records no pid), in its stored views and in
 *     `sql`'s union alike, so ids of traces attached together do not collide; host API names
 *     appear as 2^62 + api id;
 *   - memory kinds use Nsight's numbering (0 Pageable ... 6 Managed Static,
 *     7 Unknown), converted from CUPTI's (1 pageable ... 7 managed static,
 *     0 unknown) by VT_NSIGHT_MEMKIND below; copy kinds are the same in both.
 */

/* SQL expression: the pid / rank / host of the trace read from $S (NULL when absent). */
#define VT_NSIGHT_PID "(SELECT CAST(value AS INTEGER) FROM $S.meta WHERE key = 'pid')"
#define VT_NSIGHT_RANK "(SELECT CAST(value AS INTEGER) FROM $S.meta WHERE key = 'rank')"
#define VT_NSIGHT_HOST "(SELECT value FROM $S.meta WHERE key = 'hostname')"
#define VT_NSIGHT_GPID "(" VT_NSIGHT_PID " * 16777216)"
#define VT_NSIGHT_UID "coalesce(" VT_NSIGHT_PID ", $T)"
#define VT_NSIGHT_STRID(col) "(" VT_NSIGHT_UID " * 4294967296 + " col ")"
/* CUPTI memory kind column -> Nsight's ENUM_CUDA_MEM_KIND id. */
#define VT_NSIGHT_MEMKIND(col) "(CASE WHEN " col " BETWEEN 1 AND 7 THEN " col " - 1 ELSE 7 END)"

/*
 * Per-trace view templates: X(view name, SELECT template). The view is
 * "CREATE TEMP VIEW name AS <template for trace 0> UNION ALL <trace 1> ...".
 */
#define VT_NSIGHT_TRACE_VIEWS(X)                                                              \
    X("StringIds",                                                                            \
      "SELECT " VT_NSIGHT_STRID("id") " AS id, value FROM $S.string")                          \
    X("CUPTI_ACTIVITY_KIND_MEMCPY",                                                           \
      "SELECT start, end, device AS deviceId, context AS contextId, stream AS streamId,"      \
      " correlation AS correlationId, " VT_NSIGHT_GPID " AS globalPid, bytes,"                \
      " copy_kind AS copyKind, " VT_NSIGHT_MEMKIND("src_kind") " AS srcKind, "                 \
      VT_NSIGHT_MEMKIND("dst_kind") " AS dstKind, src_device AS srcDeviceId,"                 \
      " dst_device AS dstDeviceId, graph_id AS graphId FROM $S.memcpy")                      \
    X("CUPTI_ACTIVITY_KIND_MEMSET",                                                           \
      "SELECT start, end, device AS deviceId, context AS contextId, stream AS streamId,"      \
      " correlation AS correlationId, " VT_NSIGHT_GPID " AS globalPid, value, bytes, "        \
      VT_NSIGHT_MEMKIND("mem_kind") " AS memKind, graph_id AS graphId FROM $S.memset")       \
    X("CUPTI_ACTIVITY_KIND_KERNEL",                                                           \
      "SELECT start, end, device AS deviceId, context AS contextId, stream AS streamId,"      \
      " correlation AS correlationId, " VT_NSIGHT_GPID " AS globalPid, "                      \
      VT_NSIGHT_STRID("coalesce(n.demangled_id, k.name_id)") " AS demangledName, "            \
      VT_NSIGHT_STRID("coalesce(n.short_id, k.name_id)") " AS shortName, "                    \
      VT_NSIGHT_STRID("k.name_id") " AS mangledName,"                                         \
      " grid_x AS gridX, grid_y AS gridY, grid_z AS gridZ,"                                   \
      " block_x AS blockX, block_y AS blockY, block_z AS blockZ,"                             \
      " static_smem AS staticSharedMemory, dynamic_smem AS dynamicSharedMemory,"              \
      " registers AS registersPerThread, graph_id AS graphId"                                 \
      " FROM $S.kernel k LEFT JOIN $K n ON n.name_id = k.name_id")                            \
    X("CUDA_GPU_MEMORY_USAGE_EVENTS",                                                         \
      "SELECT ts AS start, " VT_NSIGHT_GPID " AS globalPid, device AS deviceId,"              \
      " context AS contextId, address, pc, bytes, " VT_NSIGHT_MEMKIND("mem_kind")            \
      " AS memKind, CASE op WHEN 1 THEN 0 ELSE 1 END AS memoryOperationType,"                 \
      " NULL AS name, correlation AS correlationId, stream AS streamId,"                      \
      " pool_address AS localMemoryPoolAddress,"                                              \
      " pool_threshold AS localMemoryPoolReleaseThreshold,"                                   \
      " pool_size AS localMemoryPoolSize, pool_used AS localMemoryPoolUtilizedSize"           \
      " FROM $S.memory_event WHERE op IN (1, 2)")                                             \
    X("NVTX_EVENTS",                                                                          \
      "SELECT " VT_NSIGHT_STRID("n.id") " AS rowid, n.start, n.end,"                         \
      " CASE n.kind WHEN 0 THEN 59 WHEN 1 THEN 60 ELSE 34 END"                                \
      " AS eventType, n.id AS rangeId, NULL AS category, NULL AS color, s.value AS text,"     \
      " " VT_NSIGHT_GPID " + (n.thread & 16777215) AS globalTid,"                             \
      " " VT_NSIGHT_GPID " + (n.thread & 16777215) AS endGlobalTid,"                          \
      " " VT_NSIGHT_STRID("n.name_id") " AS textId, n.domain_id AS domainId"                  \
      " FROM $S.nvtx_range n LEFT JOIN $S.string s ON s.id = n.name_id")                     \
    X("CUPTI_ACTIVITY_KIND_RUNTIME",                                                          \
      "SELECT c.start, c.end, 1 AS eventClass,"                                               \
      " " VT_NSIGHT_GPID " + (c.thread & 16777215) AS globalTid,"                             \
      " c.correlation AS correlationId, 4611686018427387904 + c.api AS nameId,"               \
      " c.status AS returnValue, NULL AS callchainId"                                         \
      " FROM $S.api_call c JOIN $S.enum_api a ON a.id = c.api WHERE a.name GLOB 'cuda*'")    \
    X("CUPTI_ACTIVITY_KIND_DRIVER",                                                           \
      "SELECT c.start, c.end, 1 AS eventClass,"                                               \
      " " VT_NSIGHT_GPID " + (c.thread & 16777215) AS globalTid,"                             \
      " c.correlation AS correlationId, 4611686018427387904 + c.api AS nameId,"               \
      " c.status AS returnValue, NULL AS callchainId"                                         \
      " FROM $S.api_call c JOIN $S.enum_api a ON a.id = c.api WHERE a.name NOT GLOB 'cuda*'")    \
    X("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",                                                  \
      "SELECT start, end, device AS deviceId, context AS contextId, stream AS streamId,"      \
      " correlation AS correlationId, " VT_NSIGHT_GPID " AS globalPid, type AS syncType,"     \
      " event AS eventId FROM $S.sync_event")                                                 \
    X("TARGET_INFO_GPU",                                                                      \
      "SELECT id, name, uuid, total_bytes AS totalMemory, sm_count AS smCount,"               \
      " cc_major AS computeMajor, cc_minor AS computeMinor,"                                  \
      " global_memory_bandwidth_kbps * 1000 AS memoryBandwidth, id AS cuDevice FROM $S.device") \
    X("PROCESSES",                                                                            \
      "SELECT " VT_NSIGHT_GPID " AS globalPid, " VT_NSIGHT_PID " AS pid,"                     \
      " (SELECT value FROM $S.meta WHERE key = 'exe') AS name")

/*
 * vramtrace's own multi-trace views: every row of the table in every trace,
 * prefixed with the trace index, pid and rank. Same template rules.
 */
#define VT_UNION_COLS "$T AS trace, " VT_NSIGHT_PID " AS pid, " VT_NSIGHT_RANK " AS rank"
/*
 * The call site of a stack, described as `vramtrace analyze` does: the innermost
 * Python frame outside library code ("file:line in function"), else the innermost
 * Python frame, else the innermost native frame outside runtime libraries, else
 * the innermost native frame ("function (module)", "0xPC (module)").
 */
#define VT_SITE_LIBFILE(f)                                                                    \
    "(" f " GLOB '*site-packages/*' OR " f " GLOB '*dist-packages/*' OR " f " GLOB '*/torch/*'" \
    " OR " f " GLOB 'torch/*' OR " f " GLOB '*<frozen*' OR " f " GLOB '*/lib/python3*')"
#define VT_SITE_LIBMOD(m)                                                                     \
    "(" m " GLOB '*libc10*' OR " m " GLOB '*libtorch*' OR " m " GLOB '*libpython*' OR " m      \
    " GLOB '*libc.so*' OR " m " GLOB '*libstdc++*' OR " m " GLOB '*libnccl*' OR " m            \
    " GLOB '*libcublas*' OR " m " GLOB '*libcudnn*' OR " m " GLOB '*ld-linux*')"
#define VT_SITE_BASE "coalesce(substr(mo.value, length(rtrim(mo.value, replace(mo.value, '/', ''))) + 1), '?')"
#define VT_SITE_SELECT                                                                        \
    "SELECT $T AS trace, s.id AS stack_id, coalesce((SELECT CASE"                             \
    " WHEN f.kind = 1 OR (fn.value IS NOT NULL AND fi.value IS NOT NULL AND f.line > 0)"      \
    " THEN coalesce(fi.value, '?') || ':' || coalesce(f.line, 0) || ' in ' || coalesce(fn.value, '?')" \
    " WHEN fn.value IS NOT NULL THEN fn.value || ' (' || " VT_SITE_BASE " || ')'"             \
    " ELSE printf('0x%x (%s)', f.pc, " VT_SITE_BASE ") END"                                   \
    " FROM $S.frame f LEFT JOIN $S.string fn ON fn.id = f.function_id"                        \
    " LEFT JOIN $S.string fi ON fi.id = f.file_id LEFT JOIN $S.string mo ON mo.id = f.module_id" \
    " WHERE f.stack_id = s.id ORDER BY CASE WHEN f.kind = 1 THEN"                             \
    " (CASE WHEN fi.value IS NOT NULL AND NOT " VT_SITE_LIBFILE("fi.value") " THEN 0 ELSE 1 END)" \
    " ELSE (CASE WHEN mo.value IS NOT NULL AND " VT_SITE_LIBMOD("mo.value") " THEN 3 ELSE 2 END)" \
    " END, f.idx LIMIT 1), 'stack ' || s.id || ' (no frames recorded)') AS site FROM $S.stack s"

#define VT_UNION_TRACE_VIEWS(X)                                                               \
    X("site", VT_SITE_SELECT)                                                                 \
    X("process",                                                                              \
      "SELECT $T AS trace, '$S' AS schema_name, $F AS path, " VT_NSIGHT_PID " AS pid, "       \
      VT_NSIGHT_RANK " AS rank, " VT_NSIGHT_HOST " AS host")                                  \
    X("all_meta", "SELECT " VT_UNION_COLS ", x.* FROM $S.meta x")                             \
    X("all_device", "SELECT " VT_UNION_COLS ", x.* FROM $S.device x")                         \
    X("all_memory_event", "SELECT " VT_UNION_COLS ", x.* FROM $S.memory_event x")             \
    X("all_oom_event", "SELECT " VT_UNION_COLS ", x.* FROM $S.oom_event x")                   \
    X("all_memcpy", "SELECT " VT_UNION_COLS ", x.* FROM $S.memcpy x")                         \
    X("all_memset", "SELECT " VT_UNION_COLS ", x.* FROM $S.memset x")                         \
    X("all_kernel",                                                                           \
      "SELECT " VT_UNION_COLS ", x.*, s.value AS name FROM $S.kernel x"                       \
      " LEFT JOIN $S.string s ON s.id = x.name_id")                                           \
    X("all_nvtx_range",                                                                       \
      "SELECT " VT_UNION_COLS ", x.*, s.value AS name FROM $S.nvtx_range x"                   \
      " LEFT JOIN $S.string s ON s.id = x.name_id")                                           \
    X("all_api_call",                                                                         \
      "SELECT " VT_UNION_COLS ", x.*, a.name AS api_name FROM $S.api_call x"                  \
      " LEFT JOIN $S.enum_api a ON a.id = x.api")                                             \
    X("all_buffer_use", "SELECT " VT_UNION_COLS ", x.* FROM $S.buffer_use x")                 \
    X("all_dropped", "SELECT " VT_UNION_COLS ", x.* FROM $S.dropped x")                       \
    X("all_sync_event", "SELECT " VT_UNION_COLS ", x.* FROM $S.sync_event x")                 \
    X("all_pool_event", "SELECT " VT_UNION_COLS ", x.* FROM $S.pool_event x")

/*
 * Union views over the tables `vramtrace analyze` writes back: X(view, table).
 * Created only when every trace holds the table (all were analyzed).
 */
#define VT_UNION_ANALYSIS_VIEWS(X)                                                            \
    X("all_finding", "finding")                                                               \
    X("all_lifetime", "lifetime")                                                             \
    X("all_phase", "phase")

/*
 * Views that do not depend on a trace (created once). The API names in
 * StringIds come from the first trace's enum_api: "$S" is that trace's schema.
 */
#define VT_NSIGHT_STATIC_VIEWS(X)                                                             \
    X("ENUM_CUDA_MEMCPY_OPER",                                                                \
      "SELECT column1 AS id, column2 AS name, column3 AS label FROM (VALUES"                  \
      " (0,'CUDA_MEMCPY_KIND_UNKNOWN','Unknown'),"                                            \
      " (1,'CUDA_MEMCPY_KIND_HTOD','Host-to-Device'),"                                        \
      " (2,'CUDA_MEMCPY_KIND_DTOH','Device-to-Host'),"                                        \
      " (3,'CUDA_MEMCPY_KIND_HTOA','Host-to-Array'),"                                         \
      " (4,'CUDA_MEMCPY_KIND_ATOH','Array-to-Host'),"                                         \
      " (5,'CUDA_MEMCPY_KIND_ATOA','Array-to-Array'),"                                        \
      " (6,'CUDA_MEMCPY_KIND_ATOD','Array-to-Device'),"                                       \
      " (7,'CUDA_MEMCPY_KIND_DTOA','Device-to-Array'),"                                       \
      " (8,'CUDA_MEMCPY_KIND_DTOD','Device-to-Device'),"                                      \
      " (9,'CUDA_MEMCPY_KIND_HTOH','Host-to-Host'),"                                          \
      " (10,'CUDA_MEMCPY_KIND_PTOP','Peer-to-Peer'))")                                        \
    X("ENUM_CUDA_MEM_KIND",                                                                   \
      "SELECT column1 AS id, column2 AS name, column3 AS label FROM (VALUES"                  \
      " (0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),"                                   \
      " (1,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),"                                       \
      " (2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),"                                       \
      " (3,'CUDA_MEMOPR_MEMORY_KIND_ARRAY','Array'),"                                         \
      " (4,'CUDA_MEMOPR_MEMORY_KIND_MANAGED','Managed'),"                                     \
      " (5,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device Static'),"                         \
      " (6,'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC','Managed Static'),"                       \
      " (7,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown'))")                                    \
    X("ENUM_CUDA_DEV_MEM_EVENT_OPER",                                                         \
      "SELECT column1 AS id, column2 AS name, column3 AS label FROM (VALUES"                  \
      " (0,'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION','Allocation'),"                                \
      " (1,'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION','Deallocation'))")                           \
    X("ENUM_CUPTI_SYNC_TYPE",                                                                 \
      "SELECT column1 AS id, column2 AS name, column3 AS label FROM (VALUES"                  \
      " (0,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN','Unknown'),"                         \
      " (1,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE','Event sync'),"            \
      " (2,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT','Stream wait event'),"     \
      " (3,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE','Stream sync'),"          \
      " (4,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE','Context sync'))")       \
    X("ENUM_NSYS_EVENT_TYPE",                                                                 \
      "SELECT column1 AS id, column2 AS name, column3 AS label FROM (VALUES"                  \
      " (34,'NvtxMark','NVTX Mark'),"                                                         \
      " (59,'NvtxPushPopRange','NVTX PushPop Range'),"                                        \
      " (60,'NvtxStartEndRange','NVTX StartEnd Range'))")

/* Rows appended to StringIds (after the per-trace rows): host API names. */
#define VT_NSIGHT_API_STRINGS "SELECT 4611686018427387904 + id AS id, name AS value FROM $S.enum_api"

#endif /* VRAMTRACE_NSIGHT_H */
