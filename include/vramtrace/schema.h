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
 *   - addresses and byte counts are integers; an address is unsigned 64-bit and
 *     stored as its 64-bit pattern in SQLite's signed integer (an address of 2^63
 *     or more reads negative; printf('0x%x', address) shows it as it was);
 *   - interned strings (kernel names, NVTX text, frame names) live in `string`;
 *   - enum columns hold CUPTI's own numeric values where CUPTI defines them, and
 *     each enum has a small lookup table (enum_*) created with the schema.
 */

#define VT_SCHEMA_VERSION 6
#define VT_SCHEMA_VERSION_OLDEST 1 /* the oldest version readers accept (v1: times stored absolute) */
#define VT_SCHEMA_APPLICATION_ID 0x76726d74 /* 'vrmt': PRAGMA application_id of every trace */

/*
 * Enumerations. Each list is X(value, CONSTANT, "name"): the C constants
 * (VT_<ENUM>_<CONSTANT>), the enum_* lookup tables created with every trace and
 * the names every report prints all come from it (vt_<enum>_name below).
 * Values are stable: append only.
 */

/* memory_event.op: what CUDA saw happen to memory (docs/schema.md, "Live bytes") */
#define VT_MEMOP_LIST(X)                                                                       \
    X(1, ALLOC, "alloc")              /* allocation (CUPTI MEMORY2 ALLOCATION, or API callback) */ \
    X(2, FREE, "free")                /* release */                                            \
    X(3, VMM_CREATE, "vmm_create")    /* cuMemCreate: physical memory created (address = handle) */ \
    X(4, VMM_RELEASE, "vmm_release")  /* cuMemRelease: handle released (address = handle) */   \
    X(5, VMM_MAP, "vmm_map")          /* cuMemMap: bytes mapped at address (handle in pool_address) */ \
    X(6, VMM_UNMAP, "vmm_unmap")      /* cuMemUnmap: bytes unmapped at address */              \
    X(7, IMPORT, "import")            /* memory owned elsewhere made usable here (IPC, shareable handle) */ \
    X(8, IMPORT_CLOSE, "import_close") /* an IPC mapping closed (cudaIpcCloseMemHandle) */

/* memory kinds: CUpti_ActivityMemoryKind values */
#define VT_MEMKIND_LIST(X)                      \
    X(0, UNKNOWN, "unknown")                    \
    X(1, PAGEABLE, "pageable")                  \
    X(2, PINNED, "pinned")                      \
    X(3, DEVICE, "device")                      \
    X(4, ARRAY, "array")                        \
    X(5, MANAGED, "managed")                    \
    X(6, DEVICE_STATIC, "device_static")        \
    X(7, MANAGED_STATIC, "managed_static")

/* copy kinds: CUpti_ActivityMemcpyKind values (same numbers as Nsight's ENUM_CUDA_MEMCPY_OPER) */
#define VT_COPY_LIST(X) \
    X(0, UNKNOWN, "unknown") X(1, HTOD, "HtoD") X(2, DTOH, "DtoH") X(3, HTOA, "HtoA") X(4, ATOH, "AtoH") \
    X(5, ATOA, "AtoA") X(6, ATOD, "AtoD") X(7, DTOA, "DtoA") X(8, DTOD, "DtoD") X(9, HTOH, "HtoH")     \
    X(10, PTOP, "PtoP")

/* nvtx_range.kind */
#define VT_NVTX_LIST(X)                                     \
    X(0, PUSHPOP, "push_pop")   /* nvtxRangePush/Pop */      \
    X(1, STARTEND, "start_end") /* nvtxRangeStart/End */     \
    X(2, MARK, "mark")          /* nvtxMark: start == end */

/* pool_event.op: CUpti_ActivityMemoryPoolOperationType values */
#define VT_POOLOP_LIST(X) X(1, CREATED, "created") X(2, DESTROYED, "destroyed") X(3, TRIMMED, "trimmed")

/* dropped.source */
#define VT_DROP_LIST(X)                                                                              \
    X(0, CUPTI, "cupti")   /* CUPTI reported records dropped (cuptiActivityGetNumDroppedRecords) */     \
    X(1, QUEUE, "queue")   /* the writer fell behind: records discarded at the bounded queue */        \
    X(2, WRITER, "writer") /* a row failed to insert (SQLite error) */                                 \
    X(3, MAP, "map")       /* an auxiliary bounded map overflowed (correlation args, open NVTX ranges) */

/*
 * dropped.what of the writer's rows (source writer) that readers tell apart: rows lost because a
 * write failed (a full disk, an I/O error) or the file reached the largest size allowed, and rows
 * the size bound (VRAMTRACE_MAX_BYTES, record --max-size) left out as asked, which are not lost.
 */
#define VT_DROP_WHAT_WRITE_FAILED "rows (write failed: disk full, I/O or SQLite error)"
#define VT_DROP_WHAT_FSIZE_OFF "records not written: the trace reached the largest file size allowed (tracing off)"
#define VT_DROP_WHAT_LIMIT_OFF "records not written: the trace reached VRAMTRACE_MAX_BYTES (tracing off)"
#define VT_DROP_WHAT_LIMIT_THIN                                                                                        \
    "rows not written near VRAMTRACE_MAX_BYTES (kernels, uses, copies, sets, API calls, NVTX, syncs; allocations, " \
    "frees, pools and OOMs kept)"

/* buffer_use.kind */
#define VT_USE_LIST(X)                                                                     \
    X(0, KERNEL_ARG, "kernel_arg") /* a kernel parameter word pointed into the allocation */ \
    X(1, MEMCPY_SRC, "memcpy_src")                                                         \
    X(2, MEMCPY_DST, "memcpy_dst")                                                         \
    X(3, MEMSET, "memset")

/* frame.kind */
#define VT_FRAME_LIST(X) X(0, NATIVE, "native") X(1, PYTHON, "python")

/* tensor_event.op: blocks a framework's allocator hands out inside its segments */
#define VT_TENSOROP_LIST(X)                                                                        \
    X(1, ALLOC, "alloc")                   /* a block handed out (PyTorch history: alloc) */         \
    X(2, FREE, "free")                     /* its memory back in the allocator's cache (free_completed) */ \
    X(3, FREE_REQUESTED, "free_requested") /* the tensor died; memory pending on stream work */

/* tensor_event.source */
#define VT_TENSORSRC_LIST(X)                                                             \
    X(1, PYTORCH_HISTORY, "pytorch_history") /* torch.cuda.memory history: a snapshot */   \
    X(2, PROFILER, "profiler")               /* torch.profiler [memory] events */

#define VT__ENUM(prefix, LIST) enum { LIST(VT__ENUM_##prefix) }
#define VT__ENUM_VT_MEMOP_(v, c, n) VT_MEMOP_##c = v,
#define VT__ENUM_VT_MEMKIND_(v, c, n) VT_MEMKIND_##c = v,
#define VT__ENUM_VT_COPY_(v, c, n) VT_COPY_##c = v,
#define VT__ENUM_VT_NVTX_(v, c, n) VT_NVTX_##c = v,
#define VT__ENUM_VT_POOLOP_(v, c, n) VT_POOLOP_##c = v,
#define VT__ENUM_VT_DROP_(v, c, n) VT_DROP_##c = v,
#define VT__ENUM_VT_USE_(v, c, n) VT_USE_##c = v,
#define VT__ENUM_VT_FRAME_(v, c, n) VT_FRAME_##c = v,
#define VT__ENUM_VT_TENSOROP_(v, c, n) VT_TENSOROP_##c = v,
#define VT__ENUM_VT_TENSORSRC_(v, c, n) VT_TENSORSRC_##c = v,
VT__ENUM(VT_MEMOP_, VT_MEMOP_LIST);
VT__ENUM(VT_MEMKIND_, VT_MEMKIND_LIST);
VT__ENUM(VT_COPY_, VT_COPY_LIST);
VT__ENUM(VT_NVTX_, VT_NVTX_LIST);
VT__ENUM(VT_POOLOP_, VT_POOLOP_LIST);
VT__ENUM(VT_DROP_, VT_DROP_LIST);
VT__ENUM(VT_USE_, VT_USE_LIST);
VT__ENUM(VT_FRAME_, VT_FRAME_LIST);
VT__ENUM(VT_TENSOROP_, VT_TENSOROP_LIST);
VT__ENUM(VT_TENSORSRC_, VT_TENSORSRC_LIST);

/* The name of each value (the enum_* tables' name column), NULL for a value the list lacks. */
#define VT__NAME_CASE(v, c, n) \
    case v: return n;
#define VT__NAME_FN(fn, LIST)                   \
    static inline const char *fn(long long v)   \
    {                                           \
        switch (v) {                            \
            LIST(VT__NAME_CASE)                 \
        }                                       \
        return (const char *)0;                 \
    }
VT__NAME_FN(vt_memop_name, VT_MEMOP_LIST)
VT__NAME_FN(vt_mem_kind_name, VT_MEMKIND_LIST)
VT__NAME_FN(vt_copy_kind_name, VT_COPY_LIST)
VT__NAME_FN(vt_nvtx_kind_name, VT_NVTX_LIST)
VT__NAME_FN(vt_pool_op_name, VT_POOLOP_LIST)
VT__NAME_FN(vt_drop_source_name, VT_DROP_LIST)
VT__NAME_FN(vt_use_kind_name, VT_USE_LIST)
VT__NAME_FN(vt_frame_kind_name, VT_FRAME_LIST)
VT__NAME_FN(vt_tensor_op_name, VT_TENSOROP_LIST)
VT__NAME_FN(vt_tensor_source_name, VT_TENSORSRC_LIST)

/* The lookup tables created with every trace: X(table, LIST), rows (value, name) from the list. */
#define VT_ENUM_TABLES(X)                       \
    X("enum_memory_op", VT_MEMOP_LIST)          \
    X("enum_mem_kind", VT_MEMKIND_LIST)         \
    X("enum_copy_kind", VT_COPY_LIST)           \
    X("enum_nvtx_kind", VT_NVTX_LIST)           \
    X("enum_pool_op", VT_POOLOP_LIST)           \
    X("enum_drop_source", VT_DROP_LIST)         \
    X("enum_use_kind", VT_USE_LIST)             \
    X("enum_frame_kind", VT_FRAME_LIST)         \
    X("enum_tensor_op", VT_TENSOROP_LIST)       \
    X("enum_tensor_source", VT_TENSORSRC_LIST)

/*
 * Host API ids (api_call.api, memory_event.api, oom_event.api). Stable numbers:
 * append only. X(id, name, family) where family is one of
 * alloc, free, vmm, import, memcpy, memset, launch, sync.
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
    X(191, "cuMemsetD2D32Async", "memset")                     \
    X(14, "cudaIpcOpenMemHandle", "import")                    \
    X(15, "cudaIpcCloseMemHandle", "import")                   \
    X(46, "cuMemSetAccess", "vmm")                             \
    X(47, "cuMemImportFromShareableHandle", "import")          \
    X(48, "cuMulticastCreate", "vmm")                          \
    X(49, "cuMulticastAddDevice", "vmm")                       \
    X(50, "cuMulticastBindMem", "vmm")                         \
    X(51, "cuMulticastBindAddr", "vmm")                        \
    X(52, "cuMulticastUnbind", "vmm")                          \
    X(53, "cuIpcOpenMemHandle", "import")                      \
    X(54, "cuIpcCloseMemHandle", "import")

enum vt_api {
#define VT__API_ENUM(id, name, family) VT_API_ID_##id = id,
    VT_API_LIST(VT__API_ENUM)
#undef VT__API_ENUM
    VT_API_NONE = 0
};

/* An API id's name and family (enum_api), NULL for an id the list lacks. */
static inline const char *vt_api_name(long long id)
{
#define VT__API_NAME(v, name, family) \
    case v: return name;
    switch (id) {
        VT_API_LIST(VT__API_NAME)
    }
#undef VT__API_NAME
    return (const char *)0;
}
static inline const char *vt_api_family(long long id)
{
#define VT__API_FAMILY(v, name, family) \
    case v: return family;
    switch (id) {
        VT_API_LIST(VT__API_FAMILY)
    }
#undef VT__API_FAMILY
    return (const char *)0;
}

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
 * NULL `t` means the time is unknown (CUPTI reported 0), NULL `dur` that the end
 * is (an NVTX range never closed, a record CUPTI could not complete): schema 3;
 * versions 1 and 2 stored 0, which readers also take as unknown.
 * A stored value outside +-2^62 or not an integer (only a damaged or hand-made
 * trace holds one: text would otherwise read as 0) gives a NULL time, which
 * the analyzer's guard counts like any impossible row. In range, t + base cannot
 * overflow for a base below 2^62; an end beyond 2^63 becomes a real number,
 * which the guard rejects too.
 */
#define VT__RANGE(c) c " BETWEEN -4611686018427387904 AND 4611686018427387903"
#define VT__START "CASE WHEN " VT__RANGE("t") " THEN t + @base END"
#define VT__END "CASE WHEN " VT__RANGE("t") " AND " VT__RANGE("dur") " THEN t + dur + @base END"
/* the generated column definitions, exactly as the DDL writes them (vt__schema_time_base looks for them) */
#define VT__GEN_TS "ts INTEGER GENERATED ALWAYS AS (" VT__START ") VIRTUAL"
#define VT__GEN_START "start INTEGER GENERATED ALWAYS AS (" VT__START ") VIRTUAL"
#define VT__GEN_END "end INTEGER GENERATED ALWAYS AS (" VT__END ") VIRTUAL"
#define VT__INSTANT "t INTEGER,\n  " VT__GEN_TS ",\n  "
#define VT__INTERVAL "t INTEGER, dur INTEGER,\n  " VT__GEN_START ",\n  " VT__GEN_END ",\n  "

/*
 * Compact rows (schema 5). Kernels, API calls, copies and sets repeat: the same kernel with the
 * same grid, block, shared memory and registers on the same stream thousands of times, the same
 * call from the same thread and site. Each of these tables is stored as three parts and read
 * through a view of the version-4 name and columns (kernel, api_call, memcpy, memset):
 *
 *   <name>_sig   what repeats, once per distinct combination: the signature columns below;
 *   <name>_row   per event only what changes: dt, dur, sig (the <name>_sig row), dc, and the
 *                table's own columns below; its id is the event's id (1, 2, ... as in version 4);
 *   <name>_block anchors: every VT_BLOCK_ROWS consecutive ids (block id = id >> VT_BLOCK_SHIFT)
 *                share one block row (t, correlation); an event stores its time as
 *                dt = t - block.t and its correlation as dc = correlation - block.correlation,
 *                a few bytes where the absolute values take six.
 *
 * The view gives back id, t (= block.t + dt), dur, start, end (as VT__START/VT__END on that t),
 * and every other column of version 4, in version 4's order, so queries read what they read
 * before. INSTEAD OF triggers make the views writable (INSERT, UPDATE, DELETE): a row inserted
 * through a view finds or adds its signature and block. The tracer and the importers write the
 * three parts directly (tracer/compact.c). NULL dt is an unknown time, NULL dc an unknown
 * correlation; a signature may be stored more than once (a writer whose signature cache is full),
 * which changes nothing a view shows. docs/schema.md, "Compact rows".
 *
 * Lists: X(column, constraint); the constraint as the version-4 DDL had it.
 */
/*
 * Folded calls (schema 6): the API call of a copy, a set, an allocation or a free shares its
 * correlation id with its activity row (memcpy_row, memset_row, memory_event) and repeats its
 * values (bytes, addresses). Where the activity row holds exactly what the call stored, the call
 * is not stored as an api_call_row: these columns of the activity row hold its own values, and
 * the api_call view gives it back (a UNION ALL of api_call_row and the folded calls):
 *   call_dt   the call's t less the activity row's t (NULL: the call's time is not known)
 *   call_dur  the call's dur
 *   call_sig  its api_call_sig row (NULL: no call folded into this row)
 *   call_id   its id in the api_call view (ids are shared with api_call_row's)
 * Of a copy the call is bytes, src and dst (ptr NULL); of a set bytes and dst; of an allocation
 * (op 1) bytes and ptr = address; of a free (op 2) ptr = address, bytes NULL. They are own
 * columns of the compacted tables that their views do not show. docs/schema.md, "Folded calls".
 */
#define VT_CALL_FOLD(X) X(call_dt, "") X(call_dur, "") X(call_sig, "") X(call_id, "")
#define VT_CALL_FOLD_NCOL 4
#define VT_BLOCK_SHIFT 6
#define VT_BLOCK_ROWS (1 << VT_BLOCK_SHIFT)
#define VT_KERNEL_SIG(X)                                                                       \
    X(device, "") X(context, "") X(stream, "") X(name_id, "") X(grid_x, "") X(grid_y, "")     \
    X(grid_z, "") X(block_x, "") X(block_y, "") X(block_z, "") X(static_smem, "")             \
    X(dynamic_smem, "") X(registers, "") X(graph_id, "") X(graph_node_id, "") X(args_scanned, "")
#define VT_KERNEL_OWN(X)
#define VT_API_CALL_SIG(X) \
    X(api, " NOT NULL") X(thread, "") X(device, "") X(status, " NOT NULL DEFAULT 0") X(stream, "") X(stack_id, "")
#define VT_API_CALL_OWN(X) X(bytes, "") X(ptr, "") X(src, "") X(dst, "")
#define VT_MEMCPY_SIG(X)                                                                        \
    X(device, "") X(context, "") X(stream, "") X(copy_kind, " NOT NULL") X(src_kind, " NOT NULL") \
    X(dst_kind, " NOT NULL") X(is_async, " NOT NULL DEFAULT 0") X(src_device, "") X(dst_device, "") \
    X(graph_id, "") X(graph_node_id, "")
#define VT_MEMCPY_OWN(X) X(bytes, " NOT NULL") X(src, "") X(dst, "") VT_CALL_FOLD(X)
#define VT_MEMSET_SIG(X)                                                                    \
    X(device, "") X(context, "") X(stream, "") X(value, "") X(mem_kind, "")                 \
    X(is_async, " NOT NULL DEFAULT 0") X(graph_id, "") X(graph_node_id, "")
#define VT_MEMSET_OWN(X) X(bytes, " NOT NULL") X(dst, "") VT_CALL_FOLD(X)

/*
 * The compacted tables: X(name, signature list, own list, the view's columns after id, t, dur,
 * start and end, in version 4's order; "correlation" is block.correlation + dc).
 */
#define VT_COMPACT_TABLES(X)                                                                                \
    X(kernel, VT_KERNEL_SIG, VT_KERNEL_OWN,                                                                 \
      "device, context, stream, correlation, name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, "  \
      "static_smem, dynamic_smem, registers, graph_id, graph_node_id, args_scanned")                        \
    X(api_call, VT_API_CALL_SIG, VT_API_CALL_OWN,                                                           \
      "api, correlation, thread, device, status, bytes, ptr, src, dst, stream, stack_id")                   \
    X(memcpy, VT_MEMCPY_SIG, VT_MEMCPY_OWN,                                                                 \
      "device, context, stream, correlation, copy_kind, src_kind, dst_kind, bytes, is_async, src_device, "  \
      "dst_device, src, dst, graph_id, graph_node_id")                                                      \
    X(memset, VT_MEMSET_SIG, VT_MEMSET_OWN,                                                                 \
      "device, context, stream, correlation, bytes, value, mem_kind, is_async, dst, graph_id, graph_node_id")

/* Per compacted table: its DDL and INSERT statements, and column counts (compile-time). */
#define VT__COLDEF(c, k) ", " #c " INTEGER" k
#define VT__COLNAME(c, k) ", " #c
#define VT__COLQ(c, k) ",?"
#define VT__COLONE(c, k) "x"
#define VT__SIG_DDL(name, SIG) "CREATE TABLE " #name "_sig(id INTEGER PRIMARY KEY" SIG(VT__COLDEF) ");\n"
#define VT__ROW_DDL(name, OWN)                                                                  \
    "CREATE TABLE " #name "_row(id INTEGER PRIMARY KEY, dt INTEGER, dur INTEGER, sig INTEGER NOT NULL, " \
    "dc INTEGER" OWN(VT__COLDEF) ");\n"                                                          \
    "CREATE TABLE " #name "_block(id INTEGER PRIMARY KEY, t INTEGER NOT NULL, correlation INTEGER NOT NULL);\n"
#define VT__BLOCK_INSERT(name) "INSERT INTO " #name "_block(id, t, correlation) VALUES(?,?,?)"
#define VT__SIG_INSERT(name, SIG) "INSERT INTO " #name "_sig(id" SIG(VT__COLNAME) ") VALUES(?" SIG(VT__COLQ) ")"
#define VT__ROW_INSERT(name, OWN) \
    "INSERT INTO " #name "_row(id, dt, dur, sig, dc" OWN(VT__COLNAME) ") VALUES(?,?,?,?,?" OWN(VT__COLQ) ")"
#define VT__NCOL(LIST) ((int)sizeof("" LIST(VT__COLONE)) - 1)
#define VT__COMPACT_DDL(name, SIG, OWN, zCols) VT__SIG_DDL(name, SIG) VT__ROW_DDL(name, OWN)

/* The compacted tables by number. */
enum vt_compact_table {
#define VT__CT_ENUM(name, SIG, OWN, zCols) VT_CT_##name,
    VT_COMPACT_TABLES(VT__CT_ENUM)
#undef VT__CT_ENUM
    VT_CT__COUNT
};

/*
 * kernel_summary (schema 5): with `record --kernels summary`, kernels after the warm-up as one
 * row per period, device and kernel name (tracer/ksummary.h): t and dur span the first start to
 * the last end; count kernels, busy_ns the sum of their durations, min_ns and max_ns the least
 * and largest (NULL when none had a known duration).
 */
#define VT_KERNEL_SUMMARY_DDL \
"CREATE TABLE kernel_summary(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL "device INTEGER, name_id INTEGER,\n" \
"  count INTEGER NOT NULL, busy_ns INTEGER, min_ns INTEGER, max_ns INTEGER);\n"

/*
 * The trace tables. Executed once when a trace is created (with `@base`
 * replaced, see above), inside one transaction, after which the enum_* rows are
 * inserted from the lists above and PRAGMA user_version = VT_SCHEMA_VERSION and
 * PRAGMA application_id = VT_SCHEMA_APPLICATION_ID are set.
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
"CREATE TABLE module(\n" \
"  path_id INTEGER PRIMARY KEY, build_id TEXT, file_bytes INTEGER, mtime_ns INTEGER);\n" \
"CREATE TABLE kernel_name(\n" \
"  name_id INTEGER PRIMARY KEY, demangled_id INTEGER, short_id INTEGER);\n" \
VT_COMPACT_TABLES(VT__COMPACT_DDL) \
VT_KERNEL_SUMMARY_DDL \
"CREATE TABLE memory_event(\n" \
"  id INTEGER PRIMARY KEY, " VT__INSTANT "op INTEGER NOT NULL,\n" \
"  mem_kind INTEGER NOT NULL, address INTEGER NOT NULL, bytes INTEGER,\n" \
"  device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER,\n" \
"  api INTEGER, is_async INTEGER NOT NULL DEFAULT 0, pool_type INTEGER,\n" \
"  pool_address INTEGER, pool_threshold INTEGER, pool_size INTEGER,\n" \
"  pool_used INTEGER, pc INTEGER, thread INTEGER, stack_id INTEGER,\n" \
"  source_id INTEGER" VT_CALL_FOLD(VT__COLDEF) ");\n" \
"CREATE TABLE tensor_event(\n" \
"  id INTEGER PRIMARY KEY, " VT__INSTANT "op INTEGER NOT NULL,\n" \
"  device INTEGER, address INTEGER NOT NULL, bytes INTEGER, stream INTEGER,\n" \
"  stack_id INTEGER, source INTEGER);\n" \
"CREATE TABLE oom_event(\n" \
"  id INTEGER PRIMARY KEY, " VT__INSTANT "api INTEGER,\n" \
"  correlation INTEGER, device INTEGER, bytes INTEGER,\n" \
"  status INTEGER, free_bytes INTEGER, total_bytes INTEGER,\n" \
"  thread INTEGER, stack_id INTEGER);\n" \
"CREATE TABLE buffer_use(\n" \
"  correlation INTEGER NOT NULL, kind INTEGER NOT NULL, address INTEGER NOT NULL,\n" \
"  t INTEGER, " VT__GEN_TS ", device INTEGER);\n" \
"CREATE TABLE nvtx_range(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL \
"kind INTEGER NOT NULL, name_id INTEGER, domain_id INTEGER,\n" \
"  thread INTEGER, depth INTEGER, end_thread INTEGER);\n" \
"CREATE TABLE sync_event(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL \
"type INTEGER NOT NULL, device INTEGER, context INTEGER, stream INTEGER,\n" \
"  correlation INTEGER, event INTEGER, status INTEGER);\n" \
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
"CREATE TABLE enum_nvtx_kind(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" \
"CREATE TABLE enum_pool_op(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" \
"CREATE TABLE enum_drop_source(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" \
"CREATE TABLE enum_use_kind(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" \
"CREATE TABLE enum_frame_kind(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" \
"CREATE TABLE enum_tensor_op(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" \
"CREATE TABLE enum_tensor_source(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n" \
"CREATE VIEW memory_timeline AS SELECT id, ts, device, mem_kind, op, bytes,\n" \
"  SUM(CASE op WHEN 1 THEN bytes WHEN 2 THEN -bytes ELSE 0 END)\n" \
"    OVER (PARTITION BY device, mem_kind ORDER BY ts, id) AS live_bytes\n" \
"  FROM memory_event WHERE op IN (1, 2);\n"

/*
 * Version 4's layout of the compacted tables (one plain table each): what `vramtrace upgrade`
 * converts from (tracer/migrate.c), and what tests build older traces with.
 */
#define VT_SCHEMA_V4_COMPACTED_DDL \
"CREATE TABLE api_call(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL "api INTEGER NOT NULL,\n" \
"  correlation INTEGER, thread INTEGER, device INTEGER,\n" \
"  status INTEGER NOT NULL DEFAULT 0, bytes INTEGER, ptr INTEGER,\n" \
"  src INTEGER, dst INTEGER, stream INTEGER, stack_id INTEGER);\n" \
"CREATE TABLE memcpy(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL \
"device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER,\n" \
"  copy_kind INTEGER NOT NULL, src_kind INTEGER NOT NULL, dst_kind INTEGER NOT NULL,\n" \
"  bytes INTEGER NOT NULL, is_async INTEGER NOT NULL DEFAULT 0,\n" \
"  src_device INTEGER, dst_device INTEGER, src INTEGER, dst INTEGER,\n" \
"  graph_id INTEGER, graph_node_id INTEGER);\n" \
"CREATE TABLE memset(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL \
"device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER,\n" \
"  bytes INTEGER NOT NULL, value INTEGER, mem_kind INTEGER,\n" \
"  is_async INTEGER NOT NULL DEFAULT 0, dst INTEGER, graph_id INTEGER,\n" \
"  graph_node_id INTEGER);\n" \
"CREATE TABLE kernel(\n" \
"  id INTEGER PRIMARY KEY, " VT__INTERVAL \
"device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER,\n" \
"  name_id INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,\n" \
"  block_x INTEGER, block_y INTEGER, block_z INTEGER,\n" \
"  static_smem INTEGER, dynamic_smem INTEGER, registers INTEGER,\n" \
"  graph_id INTEGER, graph_node_id INTEGER, args_scanned INTEGER);\n"

/*
 * What a trace can legally hold: the value domain of every column a reader does
 * arithmetic on, for the guard that hides impossible rows from every reader
 * (one guard: analyze, info, export and sql read through it). X(table, column,
 * domain) with domain one of
 *   TIME  NULL (unknown) or an absolute CUPTI time in [0, 2^62) ns; 0 also reads
 *         as unknown (schema 1 and 2 stored it for times CUPTI did not give)
 *   SIZE  a byte count in [0, 2^50] (1 PiB), NOT NULL
 *   SIZEN the same or NULL (unknown)
 *   ADDR  an address, NOT NULL: any integer (the 64-bit pattern of an unsigned
 *         address; readers compare and offset addresses as unsigned values)
 *   ADDRN the same or NULL
 *   U64   any integer or NULL: a 64-bit unsigned CUDA value stored as SQLite's
 *         signed integer (a pool release threshold of UINT64_MAX, which PyTorch's
 *         cudaMallocAsync backend sets, reads -1)
 * The bounds of times and sizes leave room to add or subtract any two values
 * without overflow; addresses are offset in unsigned arithmetic.
 * Every other column may hold any value its declared type allows.
 */
#define VT_DOMAIN_LIST(X)                                                             \
    X("memory_event", "ts", TIME) X("memory_event", "bytes", SIZEN)                      \
    X("memory_event", "address", ADDR) X("memory_event", "pool_size", SIZEN)             \
    X("memory_event", "pool_used", SIZEN) X("memory_event", "pool_threshold", U64)       \
    X("tensor_event", "ts", TIME) X("tensor_event", "bytes", SIZEN)                      \
    X("tensor_event", "address", ADDR)                                                   \
    X("oom_event", "ts", TIME) X("oom_event", "bytes", SIZEN)                            \
    X("oom_event", "free_bytes", SIZEN) X("oom_event", "total_bytes", SIZEN)             \
    X("memcpy", "start", TIME) X("memcpy", "end", TIME) X("memcpy", "bytes", SIZE)       \
    X("memcpy", "src", ADDRN) X("memcpy", "dst", ADDRN)                                  \
    X("memset", "start", TIME) X("memset", "end", TIME) X("memset", "bytes", SIZE)       \
    X("memset", "dst", ADDRN)                                                            \
    X("kernel", "start", TIME) X("kernel", "end", TIME)                                  \
    X("kernel_summary", "start", TIME) X("kernel_summary", "end", TIME)                  \
    X("buffer_use", "ts", TIME) X("buffer_use", "address", ADDR)                         \
    X("nvtx_range", "start", TIME) X("nvtx_range", "end", TIME)                          \
    X("api_call", "start", TIME) X("api_call", "end", TIME) X("api_call", "bytes", SIZEN) \
    X("sync_event", "start", TIME) X("sync_event", "end", TIME)                          \
    X("pool_event", "ts", TIME) X("pool_event", "size", SIZEN)                           \
    X("pool_event", "used", SIZEN) X("pool_event", "threshold", U64)                     \
    X("device", "total_bytes", SIZEN)

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
"CREATE INDEX IF NOT EXISTS tensor_event_ts ON tensor_event(ts);\n" \
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
"  phase_id INTEGER, status TEXT NOT NULL, tensor INTEGER NOT NULL DEFAULT 0);\n" \
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

/*
 * Functions on trace files, shared by the tracer (which creates traces) and every
 * reader (tracer/schema.c, library vttrace; SQLite linked by the caller).
 */
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The compacted table named zName (enum vt_compact_table: a view of version 5), or -1. A lookup
 * in VT_COMPACT_TABLES itself, so every reader and writer asks the schema, not the compactor.
 */
static inline int vt__compact_find(const char *zName)
{
#define VT__CT_NAME(name, SIG, OWN, zCols) #name,
    static const char *const azName[VT_CT__COUNT] = {VT_COMPACT_TABLES(VT__CT_NAME)};
#undef VT__CT_NAME
    for (int i = 0; i < VT_CT__COUNT; i++)
        if (!strcmp(zName, azName[i])) return i;
    return -1;
}

/* Result of vt__schema_check, also the analyzer's exit-code basis (see docs/cli.md). */
enum vt_schema_status {
    VT_SCHEMA_OK = 0,
    VT_SCHEMA_NOT_SQLITE = 1, /* not an SQLite database (or unreadable/truncated header) */
    VT_SCHEMA_FOREIGN = 2,    /* SQLite, but not a vramtrace trace */
    VT_SCHEMA_NEWER = 3,      /* a trace written by a newer vramtrace */
    VT_SCHEMA_CORRUPT = 4,    /* a trace, but tables missing or database malformed */
    VT_SCHEMA_EMPTY = 5,      /* zero-length file */
    VT_SCHEMA_BUSY = 6,       /* locked by a writer past the connection's busy timeout */
};

/*
 * Create the trace tables, enum rows and version stamps in an empty database.
 * Runs in one transaction. Returns SQLITE_OK or an SQLite error code; on error
 * *zErr (if non-NULL) receives a static or sqlite3_malloc'd message that the
 * caller frees with sqlite3_free.
 */
int vt__schema_create(sqlite3 *db, char **zErr);

/*
 * vt__schema_create with time base `base` (CUPTI-clock nanoseconds): rows store
 * times as t = time - base, and meta 'time_base_ns' records it. Any base gives
 * the same absolute times back; one near the trace's times stores them in
 * fewer bytes. vt__schema_create uses base 0 (stored times are absolute).
 */
int vt__schema_create_at(sqlite3 *db, int64_t base, char **zErr);

/* zText (DDL of this file) with every `@base` replaced by base (sqlite3_malloc'd; NULL when out of memory). */
char *vt__schema_sql_at(const char *zText, int64_t base);

/*
 * Check that db holds a vramtrace trace this build can read. Writes a one-line
 * human explanation into zMsg (size nMsg) when the result is not VT_SCHEMA_OK.
 * *pVersion receives the trace's schema version (0 if unknown); may be NULL.
 * The version is stamped twice (PRAGMA user_version, meta 'schema_version'):
 * stamps that differ, a meta stamp missing or not a decimal integer, or a
 * version below VT_SCHEMA_VERSION_OLDEST give VT_SCHEMA_CORRUPT; a newer
 * user_version gives VT_SCHEMA_NEWER unless meta's stamp is a different number.
 */
enum vt_schema_status vt__schema_check(sqlite3 *db, int *pVersion, char *zMsg, size_t nMsg);

/*
 * Whether readers may read the stored times of tables azTable[0..nTable) and add
 * the base themselves instead of reading the generated columns: returns 1 and
 * sets *pBase when meta 'time_base_ns' holds an integer and each table's CREATE
 * statement defines its generated time columns (ts, or start and end) exactly as
 * vt__schema_create_at does for that base (versions 2 to 4 alike), or, for a compacted
 * table of version 5, its view is exactly the one written for that base; 0 when not
 * (a version-1 trace, or a table made by hand with other time columns: read the
 * generated columns); -1 on an SQLite error.
 */
int vt__schema_time_base(sqlite3 *db, const char *const *azTable, int nTable, int64_t *pBase);

/* 1 if db has a table or view named zTable (version 5's compacted tables are views), 0 if not, -1 on an SQLite error. */
int vt__schema_has_table(sqlite3 *db, const char *zTable);
/* 1 if db's zTable is a table (not a view), 0 if not, -1 on an SQLite error. */
int vt__schema_is_table(sqlite3 *db, const char *zTable);

/* Create the read-side indexes (VT_SCHEMA_INDEXES) of the tables db has. Returns an SQLite code. */
int vt__schema_index(sqlite3 *db);

/* Set meta(key) = value (insert or replace). Returns an SQLite code. */
int vt__meta_set(sqlite3 *db, const char *zKey, const char *zValue);

/* Set meta(key) = v as a decimal integer. Returns an SQLite code. */
int vt__meta_set_i64(sqlite3 *db, const char *zKey, int64_t v);

/* Sets one meta row for vt__meta_commit's producer: returns 0, or nonzero to stop it. */
typedef int (*vt_meta_set_fn)(void *pSet, const char *zKey, const char *zValue);

/*
 * Write the meta rows xRows produces (it calls xSet(pSet, key, value) for each and returns 0, or
 * the nonzero value xSet returned) in one transaction: all of them are committed, or none.
 * Returns an SQLite code; *pnRow (pnRow may be NULL) gets the number of rows committed.
 */
int vt__meta_commit(sqlite3 *db, int (*xRows)(void *pCtx, vt_meta_set_fn xSet, void *pSet), void *pCtx,
                    size_t *pnRow);

/* Read meta(key) into zOut (size nOut); returns 1 if found, 0 if absent, -1 on error. */
int vt__meta_get(sqlite3 *db, const char *zKey, char *zOut, size_t nOut);

#endif /* VRAMTRACE_SCHEMA_H */
