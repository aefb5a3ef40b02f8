#!/usr/bin/env python3
"""Writes the importers' small test fixtures (tests/data/import/*): PyTorch memory snapshots,
torch.profiler traces and Nsight Systems exports made here by hand, following each format's
documented layout. Run from anywhere; the files are committed, tests never run this script.
The pickles hold plain data only, as PyTorch writes them; snap_hostile.pickle names a class."""
import collections, gzip, json, os, pickle, sqlite3

D = os.path.dirname(os.path.abspath(__file__))
T0 = 1_700_000_000_000_000  # time_us of the first event
A = 0x7F00_0000_0000  # a segment's address


def frames(line):
    # PyTorch's mixed traceback: capture frames, allocator, Python, interpreter (innermost first)
    return [{'name': 'torch::unwind::unwind()', 'filename': '??', 'line': 0},
            {'name': 'torch::CapturedTraceback::gather(bool, bool, bool)', 'filename': '??', 'line': 0},
            {'name': 'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc', 'filename':
             'CUDACachingAllocator.cpp', 'line': 0},
            {'name': 'forward', 'filename': '/src/model.py', 'line': line},
            {'name': '_PyEval_EvalFrameDefault', 'filename': 'Python/bytecodes.c', 'line': 2715},
            {'name': '<module>', 'filename': '/src/train.py', 'line': 3}]


def ev(action, addr, size, dt, fr, **kw):
    e = {'action': action, 'addr': addr, 'size': size, 'stream': 0, 'time_us': T0 + dt, 'frames': fr}
    e.update(kw)
    return e


def snapshots():
    f1, f2 = frames(10), frames(20)  # each list shared by several events (memoized, as PyTorch does)
    trace = [ev('segment_alloc', A, 20 << 20, 0, f1),
             ev('alloc', A, 1 << 20, 1, f1),
             ev('alloc', A + (1 << 20), 2 << 20, 2, f2),
             ev('free_requested', A, 1 << 20, 3, f1),
             ev('free_completed', A, 1 << 20, 4, f1),
             ev('future_action', A, 1, 5, f1),  # a newer PyTorch: ignored with a note
             ev('alloc', A + (3 << 20), 4 << 20, 6, f2, new_key=1)]
    oom = {'action': 'oom', 'device_free': 123 << 20, 'size': 64 << 30, 'stream': 0, 'time_us': T0 + 7,
           'frames': f2}
    trace.append(oom)
    seg_trace = {'device': 1, 'address': A, 'total_size': 20 << 20, 'allocated_size': 6 << 20,
                 'active_size': 6 << 20, 'requested_size': 6 << 20, 'stream': 0, 'segment_type': 'large',
                 'segment_pool_id': (0, 0), 'is_expandable': False, 'frames': f1,
                 'blocks': [{'address': A, 'size': 1 << 20, 'requested_size': 1 << 20, 'state': 'inactive',
                             'frames': []},
                            {'address': A + (1 << 20), 'size': 2 << 20, 'requested_size': 2 << 20,
                             'state': 'active_allocated', 'frames': f2},
                            {'address': A + (3 << 20), 'size': 4 << 20, 'requested_size': 4 << 20,
                             'state': 'active_allocated', 'frames': f2},
                            {'address': A + (7 << 20), 'size': 13 << 20, 'requested_size': 0, 'state': 'inactive',
                             'frames': []}]}
    # a segment from before the first event, with one live block: the history starts late
    B = A + (1 << 30)
    seg_before = {'device': 1, 'address': B, 'total_size': 2 << 20, 'allocated_size': 512,
                  'active_size': 512, 'requested_size': 500, 'stream': 0, 'segment_type': 'small',
                  'segment_pool_id': (0, 0), 'is_expandable': False, 'frames': f1,
                  'blocks': [{'address': B, 'size': 512, 'requested_size': 500, 'state': 'active_allocated',
                              'frames': f1},
                             {'address': B + 512, 'size': (2 << 20) - 512, 'requested_size': 0,
                              'state': 'inactive', 'frames': []}]}
    snap = {'segments': [seg_trace, seg_before], 'device_traces': [[], trace],
            'allocator_settings': {'PYTORCH_CUDA_ALLOC_CONF': 'max_split_size_mb:128', 'max_split_size': 134217728,
                                   'expandable_segments': False, 'garbage_collection_threshold': 0.0},
            'external_annotations': [{'stage': 'START', 'name': 'train_step', 'device': 1, 'time_us': T0},
                                     {'stage': 'END', 'name': 'train_step', 'device': 1, 'time_us': T0 + 7}],
            'new_root_key': {'x': 1}}
    with open(os.path.join(D, 'snap_small.pickle'), 'wb') as f:
        pickle.dump(snap, f, protocol=4)
    # a full ring buffer: frees of blocks allocated before its first event, nothing else
    ring = {'segments': [], 'device_traces': [[ev('free_requested', A, 512, 0, f1),
                                               ev('free_completed', A, 512, 1, f1),
                                               ev('alloc', A, 1024, 2, f1)]]}
    with open(os.path.join(D, 'snap_ring_full.pickle'), 'wb') as f:
        pickle.dump(ring, f, protocol=5)
    # PyTorch 2.0: blocks without addresses, with 'history'; no times; a 'snapshot' event only
    h = [{'addr': A, 'real_size': 1000, 'frames': frames(5)}, {'addr': A, 'real_size': 1024, 'frames': frames(6)}]
    v1 = {'segments': [{'device': 0, 'address': A, 'total_size': 2 << 20, 'allocated_size': 1024,
                        'active_size': 1024, 'requested_size': 1024, 'stream': 0, 'segment_type': 'small',
                        'blocks': [{'size': 1024, 'requested_size': 1024, 'state': 'active_allocated', 'history': h},
                                   {'size': (2 << 20) - 1024, 'requested_size': 0, 'state': 'inactive'}]}],
          'device_traces': [[{'action': 'snapshot', 'addr': 0, 'size': 1024, 'stream': 0}]]}
    with open(os.path.join(D, 'snap_v1.pickle'), 'wb') as f:
        pickle.dump(v1, f, protocol=4)
    # a pickle that names a class: refused, never run
    with open(os.path.join(D, 'snap_hostile.pickle'), 'wb') as f:
        pickle.dump({'segments': collections.OrderedDict(a=1)}, f, protocol=4)


def kineto():
    mem = lambda ts, addr, b, dev=0, typ=1: {'ph': 'i', 'cat': 'cpu_instant_event', 'name': '[memory]', 'pid': 7,
                                             'tid': 7, 'ts': ts, 's': 't',
                                             'args': dict({'Device Type': typ, 'Device Id': dev, 'Bytes': b,
                                                           'Total Allocated': 0, 'Total Reserved': 0},
                                                          **({'Addr': addr} if addr is not None else {}))}
    ev = [{'ph': 'X', 'cat': 'user_annotation', 'name': 'ProfilerStep#3', 'pid': 7, 'tid': 7, 'ts': 100.0,
           'dur': 900.0},
          mem(110.5, 0x7000, 4096), mem(120.25, 0x8000, 8192), mem(130.0, 0x7000, -4096),
          mem(131.0, 0x9000, 64, dev=-1, typ=0),  # CPU: counted, not imported
          {'ph': 'X', 'cat': 'kernel', 'name': 'void sgemm_kernel<128>(float*)', 'pid': 0, 'tid': 'stream 7',
           'ts': 140.0, 'dur': 10.5, 'args': {'device': 0, 'stream': 7, 'correlation': 42, 'context': 1,
                                             'registers per thread': 32, 'grid': [4, 2, 1], 'block': [128, 1, 1]}},
          {'ph': 'X', 'cat': 'gpu_memcpy', 'name': 'Memcpy HtoD (Pageable -> Device)', 'pid': 0, 'tid': 7,
           'ts': 105.0, 'dur': 4.0, 'args': {'device': 0, 'stream': 7, 'correlation': 41, 'bytes': 1 << 20}},
          {'ph': 'X', 'cat': 'gpu_memset', 'name': 'Memset (Device)', 'pid': 0, 'tid': 7, 'ts': 150.0, 'dur': 1.0,
           'args': {'device': 0, 'stream': 7, 'correlation': 43, 'bytes': 256}}]
    doc = {'schemaVersion': 1, 'deviceProperties': [{'id': 0, 'name': 'Test GPU', 'totalGlobalMem': 16 << 30,
                                                     'computeMajor': 8, 'computeMinor': 0, 'numSms': 108}],
           'distributedInfo': {'backend': 'nccl', 'rank': 3, 'world_size': 8},
           'baseTimeNanoseconds': 1_700_000_000_000_000_000, 'futureKey': [1, 2], 'traceEvents': ev}
    with open(os.path.join(D, 'kineto_small.json'), 'w') as f:
        json.dump(doc, f)
    old = {'schemaVersion': 1, 'traceEvents': [mem(1623142623460121, None, 4096), mem(1623142623460122, None, 8192),
                                               mem(1623142623460123, None, -4096)]}
    with gzip.open(os.path.join(D, 'kineto_noaddr.json.gz'), 'wt') as f:
        json.dump(old, f)


def nsys(name, enums, two):
    p = os.path.join(D, name)
    if os.path.exists(p):
        os.unlink(p)
    db = sqlite3.connect(p)
    g = lambda pid, tid=0: (1 << 56) | (pid << 24) | tid  # serialized global ids
    db.executescript('''
      CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE TARGET_INFO_GPU(vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, totalMemory INTEGER,
        smCount INTEGER, uuid TEXT);
      CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS(start INTEGER NOT NULL, globalPid INTEGER, deviceId INTEGER,
        contextId INTEGER, address INTEGER, pc INTEGER, bytes INTEGER, memKind INTEGER,
        memoryOperationType INTEGER, name TEXT, correlationId INTEGER);
      CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER,
        globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
      CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
        contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
        shortName INTEGER, registersPerThread INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER,
        blockX INTEGER, blockY INTEGER, blockZ INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);
      CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
        contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER,
        copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);
      CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
        globalTid INTEGER, textId INTEGER, domainId INTEGER);''')
    db.executemany('INSERT INTO StringIds VALUES(?,?)', [(1, 'cudaMalloc_v3020'), (2, 'cudaFree_v3020'),
                                                       (3, 'gemm_kernel(float*)'), (4, 'gemm_kernel'),
                                                       (5, 'cudaMemcpyAsync_v3020'), (6, 'epoch 1')])
    db.execute("INSERT INTO TARGET_INFO_GPU VALUES(?, 0, 'Fixture GPU', ?, 80, 'GPU-1234')", (1 << 56, 40 << 30))
    pids = [100, 200] if two else [100]
    for k, pid in enumerate(pids):
        b = 1000 * (k + 1)
        db.executemany('INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,?,?,?,?,?)', [
            (b + 10, b + 20, 1, g(pid, pid), 1, 1, 0),      # cudaMalloc ok
            (b + 30, b + 40, 1, g(pid, pid), 2, 1, 2),      # cudaMalloc out of memory
            (b + 50, b + 60, 1, g(pid, pid), 3, 5, 0),      # cudaMemcpyAsync
            (b + 70, b + 80, 1, g(pid, pid), 4, 2, 0)])     # cudaFree
        db.executemany('INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES(?,?,?,?,?,?,?,?,?,?,?)', [
            (b + 15, g(pid), 0, 1, 0x7000000 * (k + 1), 0, 1 << 20, 2, 0, None, 1),  # device alloc
            (b + 75, g(pid), 0, 1, 0x7000000 * (k + 1), 0, 1 << 20, 2, 1, None, 4)])  # its free
        db.execute('INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,0,1,7,9,?,3,4,32,4,2,1,128,1,1,0,1024)',
                   (b + 100, b + 150, g(pid)))
        db.execute('INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(?,?,0,1,7,3,?,4096,1,0,2)',
                   (b + 55, b + 58, g(pid)))  # HtoD, Nsight kinds 0 pageable -> 2 device
        db.executemany('INSERT INTO NVTX_EVENTS VALUES(?,?,?,?,?,?,?)', [
            (b + 1, b + 200, 59, 'train', g(pid, pid), None, 0),
            (b + 2, b + 100, 59, None, g(pid, pid), 6, 0),   # nested, registered string
            (b + 3, b + 3, 34, 'mark', g(pid, pid), None, 0)])
    if enums:
        db.executescript('''
          CREATE TABLE ENUM_CUDA_MEM_KIND(id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
          INSERT INTO ENUM_CUDA_MEM_KIND VALUES(0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),
            (1,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),(2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),
            (3,'CUDA_MEMOPR_MEMORY_KIND_ARRAY','Array'),(4,'CUDA_MEMOPR_MEMORY_KIND_MANAGED','Managed'),
            (5,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device Static'),
            (6,'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC','Managed Static'),(7,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown');
          CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
          INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES(1700000000000000000, '', '');''')
    db.commit()
    db.close()


snapshots()
kineto()
nsys('nsys2022_two_processes.sqlite', enums=False, two=True)
nsys('nsys2024_enums.sqlite', enums=True, two=False)
