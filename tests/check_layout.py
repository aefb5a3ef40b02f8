#!/usr/bin/env python3
"""The source layout holds: sizes, purpose lines, the module map, no include circle, layers downward.

Checks, over tracer/, analyzer/ and include/ (docs/design.md, "Module map"):
  1. no source file over 1000 lines;
  2. every .c file opens with a one-line purpose comment;
  3. every .c file is named in docs/design.md's module map;
  4. no include circle between modules (a module is x.c with its x.h), found with Tarjan's
     strongly connected components over the include graph, not by eye;
  5. dependencies point downward: a file includes only headers of its own layer or of layers
     below it (see LAYERS);
  6. with --objects BUILD (the ctest passes the build tree): the same two rules for calls, read
     from the compiled objects' defined and undefined symbols (nm), so a call no include shows
     is seen too: no circle of calls between modules, and no call into a higher layer;
  7. the way into a trace stays straight: the trip from `info`'s load entry (WALK_START) through
     the files it enters, read from the sources (tests/callgraph.py says how it is counted),
     takes at most WALK_MAX_STEPS steps with at most WALK_MAX_RETURNS returns to a file already left.
Prints every violation and exits 1 if there is one; --graph prints the module graph as DOT,
--walk [FUNCTION] prints the trip (from WALK_START by default) call by call.
"""
import os
import re
import sys

import subprocess

import callgraph

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_LINES = 1000

# Layers, lowest first. A file may include headers of its own layer or of a lower one.
LAYERS = [
    ("include/vramtrace", 0),  # the schema and the output-name grammar: shared by both halves
    ("tracer", 1),
    ("analyzer/util", 1),
    ("analyzer/import", 2),
    ("analyzer/read", 3),
    ("analyzer/analysis", 4),
    ("analyzer/report", 5),
    ("analyzer/cli", 6),
]
# The two halves share only include/vramtrace: the tracer never includes the analyzer and
# the analyzer includes only the tracer headers named here (the command runs the tracer's
# core in `record` and in its tests of the output name).
CROSS_ALLOWED = set()

# The trip into a trace (rule 7): helpers every stage shares (error lines, text formats, the
# temporary-file list) are not steps; an importer's format reader is entered, not followed (it is
# the way in for another tool's file, counted on its own).
WALK_START = "vt__info_load"
WALK_SKIP = ("analyzer/util/",)
WALK_STOP = ("vt__import_one",)
WALK_MAX_STEPS = 15
WALK_MAX_RETURNS = 5

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(rel):
    best = None
    for prefix, rank in LAYERS:
        if rel == prefix or rel.startswith(prefix + "/"):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, rank)
    return best


def sources():
    out = []
    for top in ("tracer", "analyzer", "include"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(d, f), ROOT))
    return sorted(out)


def resolve(rel, name, by_base):
    """The file a quoted include names: beside the includer, under a layer root, or by a unique base name."""
    here = os.path.normpath(os.path.join(os.path.dirname(rel), name))
    if os.path.exists(os.path.join(ROOT, here)):
        return here
    for root in ("analyzer", "include", "tracer"):
        cand = os.path.normpath(os.path.join(root, name))
        if os.path.exists(os.path.join(ROOT, cand)):
            return cand
    hits = by_base.get(os.path.basename(name), [])
    return hits[0] if len(hits) == 1 else None


def module(rel):
    return os.path.splitext(rel)[0]


def tarjan(graph):
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def arg_value(name):
    """The value after option name on the command line ("" when it has none, None when absent)."""
    if name not in sys.argv:
        return None
    i = sys.argv.index(name)
    return sys.argv[i + 1] if i + 1 < len(sys.argv) and not sys.argv[i + 1].startswith("--") else ""


def call_violations(build):
    """Rule 6 over the objects of build tree build: circles of calls between modules, calls into a higher layer."""
    if not os.path.isdir(build):
        return [f"--objects {build}: not a directory"]
    try:
        edges, why = callgraph.link_edges(ROOT, build)
    except (OSError, subprocess.CalledProcessError) as e:
        return [f"--objects {build}: cannot read the objects' symbols with nm: {e}"]
    if not edges:
        return [f"--objects {build}: no compiled analyzer or tracer object found (build first)"]
    errors, graph = [], {}
    for src in sorted(edges):
        for dst in sorted(edges[src]):
            if module(src) != module(dst):
                graph.setdefault(module(src), set()).add(module(dst))
            mine, theirs = layer_of(src), layer_of(dst)
            if mine and theirs and theirs[1] > mine[1]:
                errors.append(f"{src}: calls {', '.join(why[(src, dst)][:3])} of {dst}, a higher layer "
                              f"({theirs[0]} over {mine[0]})")
    for comp in tarjan(graph):
        if len(comp) > 1:
            cycle = sorted(comp)
            detail = "; ".join(f"{a} uses {', '.join(why[(a + '.c', b + '.c')][:2])} of {b}"
                               for a in cycle for b in cycle
                               if (a + ".c", b + ".c") in why)
            errors.append("call circle: " + " <-> ".join(cycle) + (f" ({detail})" if detail else ""))
    return errors


def main():
    files = sources()
    by_base = {}
    for rel in files:
        by_base.setdefault(os.path.basename(rel), []).append(rel)
    with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as fh:
        design = fh.read()
    start = design.find("## Module map")
    modmap = design[start:] if start >= 0 else ""
    errors = []
    graph = {}
    for rel in files:
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        lines = text.count("\n")
        if lines > MAX_LINES:
            errors.append(f"{rel}: {lines} lines (at most {MAX_LINES})")
        if rel.endswith(".c"):
            first = text.split("\n", 1)[0]
            if not (first.startswith("/*") and first.rstrip().endswith("*/") and len(first) > 10):
                errors.append(f"{rel}: the first line is not a one-line purpose comment")
            if start < 0 or ("`" + rel + "`") not in modmap and ("`" + os.path.basename(rel) + "`") not in modmap:
                errors.append(f"{rel}: not in docs/design.md's module map")
        mine = layer_of(rel)
        for name in INCLUDE.findall(text):
            target = resolve(rel, name, by_base)
            if target is None:
                continue  # a system or generated header
            m, n = module(rel), module(target)
            if m != n:
                graph.setdefault(m, set()).add(n)
            theirs = layer_of(target)
            if mine and theirs and theirs[1] > mine[1]:
                errors.append(f"{rel}: includes {target}, a higher layer ({theirs[0]} over {mine[0]})")
            if mine and theirs and (mine[0] == "tracer") != (theirs[0] == "tracer") \
                    and theirs[0] != "include/vramtrace" and (rel, target) not in CROSS_ALLOWED:
                errors.append(f"{rel}: includes {target} across the tracer/analyzer line")
    for comp in tarjan(graph):
        if len(comp) > 1:
            errors.append("include circle: " + " <-> ".join(sorted(comp)))
    build = arg_value("--objects")
    if build:
        errors += call_violations(build)
    sources_c = [rel for rel in files if rel.endswith(".c")]
    calls = []
    trip = callgraph.walk(ROOT, sources_c, arg_value("--walk") or WALK_START, WALK_SKIP, WALK_STOP, calls)
    steps, nfiles, returns = callgraph.trip_counts(trip)
    if "--walk" in sys.argv:
        for depth, src, dst, fn in calls:
            print("  " * depth + f"{src} -> {dst}: {fn}")
        print(" -> ".join(os.path.basename(t) for t in trip))
        print(f"{steps} steps through {nfiles} files, {returns} returns to a file already left")
    elif not trip:
        errors.append(f"the trip from {WALK_START} was not found (renamed? update WALK_START)")
    elif steps > WALK_MAX_STEPS or returns > WALK_MAX_RETURNS:
        errors.append(f"the trip from {WALK_START} takes {steps} steps with {returns} returns to a file already "
                      f"left (at most {WALK_MAX_STEPS} and {WALK_MAX_RETURNS}): " +
                      " -> ".join(os.path.basename(t) for t in trip))
    if "--graph" in sys.argv:
        print("digraph modules {")
        for m in sorted(graph):
            for n in sorted(graph[m]):
                print(f'  "{m}" -> "{n}";')
        print("}")
    for e in errors:
        print(e)
    print(f"{len(files)} files, {sum(len(v) for v in graph.values())} module dependencies, "
          f"{len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
