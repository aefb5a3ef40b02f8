#!/usr/bin/env python3
"""The source layout holds: sizes, purpose lines, the module map, no include circle, layers downward.

Checks, over tracer/, analyzer/ and include/ (docs/design.md, "Module map"):
  1. no source file over 1000 lines;
  2. every .c file opens with a one-line purpose comment;
  3. every .c file is named in docs/design.md's module map;
  4. no include circle between modules (a module is x.c with its x.h), found with Tarjan's
     strongly connected components over the include graph, not by eye;
  5. dependencies point downward: a file includes only headers of its own layer or of layers
     below it (see LAYERS).
Prints every violation and exits 1 if there is one; --graph prints the module graph as DOT.
"""
import os
import re
import sys

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
