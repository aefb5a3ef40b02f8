#!/usr/bin/env python3
"""Write the hand-made seed inputs of the structure-aware fuzz target (tests/fuzz/fuzz_common.c format).

Input layout: one flags byte, then operations. Operation byte % 16: 0/1 memory_event row,
2 kernel, 3 buffer_use, 4 memcpy, 5 nvtx_range, 6 oom_event, 7 api_call, 8-11 any table,
12 meta row, 13 drop a table, 14 drop a view, 15 schema tweaks. Each column value is a tag
byte % 16 and its payload: 0 NULL, 5 byte, 7 int64, 8 short text, 12 address slot,
13 size in MiB, ... (see bind_value).
usage: make_seeds.py OUTDIR
"""
import os
import struct
import sys

NULL = bytes([0])


def i64(v):
    return bytes([7]) + struct.pack('<q', v)


def small(v):
    return bytes([5, v])


def addr(k):
    return bytes([12, k])


def mib(k):
    return bytes([13, k - 1])


def text(s):
    b = s.encode()
    return bytes([8, len(b)]) + b


def mem(ts, op, kind, a, size, dev=0):
    # id ts op mem_kind address bytes device, context stream correlation api, is_async, 9 more
    return (bytes([0]) + NULL + i64(ts) + small(op) + small(kind) + a + size + small(dev) + NULL * 4 +
            small(0) + NULL * 9)


def kernel(start, end, corr):
    return bytes([2]) + NULL + i64(start) + i64(end) + small(0) + small(1) + small(7) + small(corr) + NULL * 11


def use(corr, a, ts):
    return bytes([3]) + small(corr) + small(0) + a + i64(ts) + small(0)


def memcpy(start, end, copy_kind, src_kind, dst_kind, size):
    return (bytes([4]) + NULL + i64(start) + i64(end) + small(0) + NULL * 3 + small(copy_kind) +
            small(src_kind) + small(dst_kind) + size + small(0) + NULL * 5)


def nvtx(start, end):
    return bytes([5]) + NULL + i64(start) + (i64(end) if end is not None else NULL) + small(0) + NULL * 4


def oom(ts, size, free, total):
    return bytes([6]) + NULL + i64(ts) + small(1) + NULL + small(0) + size + small(2) + free + total + NULL * 2


def meta(key_index, value):
    return bytes([12, key_index]) + value


MS = 1000000
seeds = {
    # a leak, a freed buffer used by a kernel, a pageable copy, an OOM, a clean close
    'leak_use_oom': bytes([0]) + meta(0, text('1')) +
        mem(1 * MS, 1, 3, addr(1), mib(8)) + mem(2 * MS, 1, 3, addr(2), mib(16)) +
        kernel(3 * MS, 4 * MS, 9) + use(9, addr(1), 3 * MS) +
        memcpy(5 * MS, 9 * MS, 1, 1, 3, mib(4)) + mem(6 * MS, 2, 3, addr(1), mib(8)) +
        oom(7 * MS, mib(40), mib(1), mib(40)),
    # free before alloc, double free, the same address allocated twice, time going backwards
    'pairing_disorder': bytes([1]) +
        mem(5 * MS, 2, 3, addr(3), mib(2)) + mem(6 * MS, 1, 3, addr(3), mib(2)) +
        mem(7 * MS, 2, 3, addr(3), mib(2)) + mem(8 * MS, 2, 3, addr(3), mib(2)) +
        mem(9 * MS, 1, 3, addr(4), mib(2)) + mem(3 * MS, 1, 3, addr(4), mib(4)) +
        mem(-5, 1, 3, addr(5), i64(-1)) + mem(10 * MS, 1, 3, addr(6), i64(2 ** 62)),
    # phases from NVTX ranges with allocations inside and one range never closed
    'nvtx_phases': bytes([0]) + nvtx(1 * MS, 50 * MS) + nvtx(60 * MS, None) +
        mem(2 * MS, 1, 3, addr(7), mib(10)) + mem(61 * MS, 1, 3, addr(8), mib(30)) +
        mem(62 * MS, 1, 2, addr(9), mib(1)) + mem(63 * MS, 1, 5, addr(10), mib(3)),
    # an unclean trace with drops, a VMM map and a pool allocation
    'unclean_vmm': bytes([0]) + meta(0, text('0')) + meta(20, small(200)) +
        mem(1 * MS, 3, 3, addr(11), mib(2)) + mem(2 * MS, 5, 3, addr(12), mib(2)) +
        mem(3 * MS, 6, 3, addr(12), mib(2)) + mem(4 * MS, 4, 3, addr(11), mib(2)),
    # missing tables and views
    'missing_tables': bytes([0]) + mem(1 * MS, 1, 3, addr(1), mib(1)) + bytes([13, 3, 13, 9, 14, 0, 14, 1]),
}

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)
print('%d seeds written to %s' % (len(seeds), out))
