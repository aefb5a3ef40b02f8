#!/usr/bin/env python3
"""Candidate trace layouts, measured on a copy of a kept bench_writer trace: rewritten by SQL, VACUUMed, dbstat.

Usage: bench/layout_proto.py [--keep] [--check] TRACE EVENTS STEPS
  TRACE   a trace `VT_BENCH_KEEP=1 bench_writer` kept (schema 5); it is not changed
  EVENTS  the events it was made of (bench_writer's "events :" line)
  STEPS   comma-separated, '' for the trace as it is (VACUUMed):
    a  an API call stops storing bytes/ptr/src/dst where its activity row (same correlation) stores them
    b  a launch call (no bytes/ptr/src/dst) folded into its kernel's row: cdt (call start - kernel t), cdur, csig
    e  as b for the calls of copies, sets, allocations and frees (the activity row holds their values)
    i  with b or e: the folded call's id kept in the row too (cid), so api_call ids stay as they are
    c  buffer_use compacted: a signature (kind, device, address), dt and dc relative to 64-row block anchors
    d  memory_event compacted the same way (op, kinds, device, context, stream, api, pool, thread, stack in the signature)
  --check  with b or e: the api_call view rebuilt as a union over the new layout equals the trace's (EXCEPT both ways)
  --keep   keep the rewritten copy (/tmp/layout_proto_STEPS.db)
Bytes only: no reader of the new layout exists (docs/performance.md, "Where the bytes go (schema 5)").
"""
import os
import shutil
import sqlite3
import sys

args = [a for a in sys.argv[1:] if not a.startswith('--')]
if len(args) != 3:
    sys.exit(__doc__)
src, nev, steps = args[0], int(args[1]), [s for s in args[2].split(',') if s]
dst = '/tmp/layout_proto_%s.db' % ('_'.join(steps) or 'base')
shutil.copy(src, dst)
for ext in ('-wal', '-shm'):
    if os.path.exists(src + ext):
        shutil.copy(src + ext, dst + ext)
db = sqlite3.connect(dst)
x = db.execute
x('PRAGMA journal_mode=DELETE')
x('PRAGMA legacy_alter_table=ON')  # the version-5 views name the tables being replaced
base = int(x("SELECT value FROM meta WHERE key = 'time_base_ns'").fetchone()[0])

x('CREATE TEMP TABLE ac AS SELECT r.id AS id, b.correlation + r.dc AS corr, b.t + r.dt AS t, r.dur AS dur, r.sig AS sig,'
  ' r.bytes AS bytes, r.ptr AS ptr, r.src AS src, r.dst AS dst FROM api_call_row r JOIN api_call_block b ON b.id = r.id >> 6')
x('CREATE INDEX temp.ac_corr ON ac(corr)')

if 'a' in steps:
    x('UPDATE api_call_row SET bytes = NULL, src = NULL, dst = NULL WHERE id IN (SELECT a.id FROM ac a JOIN memcpy m'
      ' ON m.correlation = a.corr WHERE m.bytes IS a.bytes AND m.src IS a.src AND m.dst IS a.dst)')
    x('UPDATE api_call_row SET bytes = NULL, dst = NULL WHERE id IN (SELECT a.id FROM ac a JOIN memset m'
      ' ON m.correlation = a.corr WHERE m.bytes IS a.bytes AND m.dst IS a.dst)')
    x('UPDATE api_call_row SET bytes = NULL, ptr = NULL WHERE id IN (SELECT a.id FROM ac a JOIN memory_event m'
      ' ON m.correlation = a.corr WHERE (a.bytes IS NULL OR m.bytes IS a.bytes) AND m.address IS a.ptr)')

# A call is folded only where the view gives back exactly its values (what a writer would check at the join).
FOLD = {'kernel': 'a.bytes IS NULL AND a.ptr IS NULL AND a.src IS NULL AND a.dst IS NULL',
        'memcpy': 'a.bytes IS k.bytes AND a.ptr IS NULL AND a.src IS k.src AND a.dst IS k.dst',
        'memset': 'a.bytes IS k.bytes AND a.ptr IS NULL AND a.src IS NULL AND a.dst IS k.dst',
        'memory_event': 'a.src IS NULL AND a.dst IS NULL AND a.ptr IS k.address AND'
                        ' ((k.op = 1 AND a.bytes IS k.bytes) OR (k.op = 2 AND a.bytes IS NULL))'}
withid = 'i' in steps
folded = (['kernel'] if 'b' in steps else []) + (['memcpy', 'memset', 'memory_event'] if 'e' in steps else [])
for t in folded:
    x('CREATE TEMP TABLE f_%s AS SELECT k.id AS kid, a.t - k.t AS cdt, a.dur AS cdur, a.sig AS csig, a.id AS aid'
      ' FROM %s k JOIN ac a ON a.corr = k.correlation WHERE %s' % (t, t, FOLD[t]))
    stored = t if t == 'memory_event' else t + '_row'
    cols = [r[1] for r in x('PRAGMA table_info(%s)' % stored)]
    new = cols + ['cdt', 'cdur', 'csig'] + (['cid'] if withid else [])
    x('CREATE TABLE new_%s(%s)' % (stored, ', '.join(c + (' INTEGER PRIMARY KEY' if c == 'id' else ' INTEGER') for c in new)))
    x('INSERT INTO new_%s SELECT %s, f.cdt, f.cdur, f.csig%s FROM %s r LEFT JOIN f_%s f ON f.kid = r.id ORDER BY r.id'
      % (stored, ', '.join('r.' + c for c in cols), ', f.aid' if withid else '', stored, t))
    x('DELETE FROM api_call_row WHERE id IN (SELECT aid FROM f_%s)' % t)
    x('DROP VIEW IF EXISTS memory_timeline')
    x('DROP TABLE %s' % stored)
    x('ALTER TABLE new_%s RENAME TO %s' % (stored, stored))


def compact(table, sigc, source, drop):
    """Store source's rows as table_sig (the columns sigc), table_block (every 64 ids) and table_row (dt, sig, dc, rest)."""
    schema, _, name = source.rpartition('.')
    allc = [r[1] for r in x('PRAGMA %stable_info(%s)' % (schema + '.' if schema else '', name))]
    own = [c for c in allc if c not in sigc and c not in ('id', 't', 'correlation')]
    x('CREATE TABLE %s_sig(id INTEGER PRIMARY KEY, %s)' % (table, ', '.join(sigc)))
    x('INSERT INTO %s_sig(%s) SELECT DISTINCT %s FROM %s' % (table, ', '.join(sigc), ', '.join(sigc), source))
    x('CREATE TABLE %s_block(id INTEGER PRIMARY KEY, t INTEGER, correlation INTEGER)' % table)
    x('INSERT INTO %s_block SELECT id >> 6, t, correlation FROM %s WHERE id IN (SELECT min(id) FROM %s GROUP BY id >> 6)'
      % (table, source, source))
    x('CREATE INDEX proto_sig ON %s_sig(%s)' % (table, ', '.join(sigc)))
    x('CREATE TABLE %s_row(id INTEGER PRIMARY KEY, dt INTEGER, sig INTEGER, dc INTEGER%s)' % (table, ''.join(', ' + c for c in own)))
    x('INSERT INTO %s_row SELECT m.id, m.t - b.t, s.id, m.correlation - b.correlation%s FROM %s m JOIN %s_block b ON b.id = m.id >> 6'
      ' JOIN %s_sig s ON %s ORDER BY m.id' % (table, ''.join(', m.' + c for c in own), source, table, table,
                                             ' AND '.join('s.%s IS m.%s' % (c, c) for c in sigc)))
    x('DROP INDEX proto_sig')
    x('DROP VIEW IF EXISTS memory_timeline')
    x('DROP TABLE %s' % drop)


if 'c' in steps:
    x('CREATE TEMP TABLE bu AS SELECT rowid AS id, correlation, kind, address, t, device FROM buffer_use')
    compact('buffer_use', ['kind', 'device', 'address'], 'temp.bu', 'buffer_use')
if 'd' in steps:
    compact('memory_event', ['op', 'mem_kind', 'device', 'context', 'stream', 'api', 'is_async', 'pool_type', 'pool_address',
                             'pool_threshold', 'thread', 'stack_id', 'source_id'], 'memory_event', 'memory_event')
db.commit()
x('DROP TABLE temp.ac')
db.commit()
x('VACUUM')
total = x('PRAGMA page_count').fetchone()[0] * x('PRAGMA page_size').fetchone()[0]
print('%s, steps %s: %.2f bytes per event (%d bytes, %d events)' % (src, ','.join(steps) or 'none', total / nev, total, nev))
for name, pg, n in x('SELECT name, sum(pgsize), sum(ncell) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 8'):
    print('  %-20s %6.2f bytes per event' % (name, pg / nev))

if '--check' in sys.argv and folded:
    def part(t, stored, blk, tcol, corr, cols):
        return ('SELECT r.cid AS id, {t} + r.cdt AS t, r.cdur AS dur, {t} + r.cdt + {B} AS start,'
                ' {t} + r.cdt + r.cdur + {B} AS "end", cs.api AS api, {corr} AS correlation, cs.thread AS thread,'
                ' cs.device AS device, cs.status AS status, {cols}, cs.stream AS stream, cs.stack_id AS stack_id'
                ' FROM {s} r {blk} JOIN api_call_sig cs ON cs.id = r.csig WHERE r.csig IS NOT NULL').format(
                    t=tcol, B=base, corr=corr, cols=cols, s=stored, blk=blk)
    blk = 'JOIN %s_block b ON b.id = r.id >> 6'
    parts = ['SELECT * FROM api_call']  # the calls still stored alone
    cols = {'kernel': 'NULL, NULL, NULL, NULL', 'memcpy': 'r.bytes, NULL, r.src, r.dst', 'memset': 'r.bytes, NULL, NULL, r.dst',
            'memory_event': 'CASE WHEN r.op = 1 THEN r.bytes END, r.address, NULL, NULL'}
    for t in folded:
        if t == 'memory_event':
            parts.append(part(t, t, '', 'r.t', 'r.correlation', cols[t]))
        else:
            parts.append(part(t, t + '_row', blk % t, '(b.t + r.dt)', 'b.correlation + r.dc', cols[t]))
    if not withid:
        sys.exit('--check needs i (the ids)')
    x('CREATE TEMP VIEW api_call_union AS ' + ' UNION ALL '.join(parts))
    x('ATTACH ? AS o', (src,))
    for a, b in (('api_call_union', 'o.api_call'), ('o.api_call', 'api_call_union')):
        n = x('SELECT count(*) FROM (SELECT * FROM %s EXCEPT SELECT * FROM %s)' % (a, b)).fetchone()[0]
        print('rows of %s not in %s: %d' % (a, b, n))
    print('rows: %d and %d' % (x('SELECT count(*) FROM api_call_union').fetchone()[0],
                               x('SELECT count(*) FROM o.api_call').fetchone()[0]))
db.close()
if '--keep' not in sys.argv:
    os.unlink(dst)
