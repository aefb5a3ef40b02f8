"""Calls between source files, for tests/check_layout.py: from the objects' symbols and from the sources.

Two views of who calls whom:
  * link_edges(): from the compiled objects (nm): a file uses another when one of its undefined
    symbols is defined by the other's object. This is what the linker sees, so a call the
    includes hide (a prototype written twice, a macro) is still found.
  * walk(): the trip a call takes through the files, from the sources: the functions each
    function calls, in the order they are written, followed depth first from one entry, each
    function expanded at its first call. Every call into another file is a file entered; the
    trip is the sequence of files entered (consecutive calls inside one file are one step), and
    a step into a file entered before is a return to a file already left.
"""
import os
import re
import subprocess

KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case", "goto",
            "_Alignof", "alignof", "__attribute__", "defined", "_Static_assert", "typeof", "__typeof__"}
TOKEN = re.compile(r"[A-Za-z_]\w*|\S")


def strip_c(text):
    """C source with comments, string and character literals and preprocessor lines blanked."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":  # a directive, with its continuation lines
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
            continue
        if c in " \t\r":
            out.append(c)
            i += 1
            continue
        at_line_start = False
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """The functions defined in C file path: {name: (is_static, [called names in written order])}."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        toks = TOKEN.findall(strip_c(fh.read()))
    defs = {}
    depth, i, n = 0, 0, len(toks)
    since = 0  # index of the first token of the current top-level declaration
    while i < n:
        t = toks[i]
        if depth == 0 and t in (";", "}"):
            since = i + 1
        if t == "{":
            # a function body: NAME ( ... ) { at file level
            if depth == 0 and i > 0 and toks[i - 1] == ")":
                k, d = i - 1, 0
                while k >= 0:
                    if toks[k] == ")":
                        d += 1
                    elif toks[k] == "(":
                        d -= 1
                        if d == 0:
                            break
                    k -= 1
                name = toks[k - 1] if k > 0 else ""
                if re.match(r"[A-Za-z_]\w*$", name) and name not in KEYWORDS and "=" not in toks[since:k]:
                    calls, d, j = [], 1, i + 1
                    while j < n and d > 0:
                        if toks[j] == "{":
                            d += 1
                        elif toks[j] == "}":
                            d -= 1
                        elif (re.match(r"[A-Za-z_]\w*$", toks[j]) and j + 1 < n and toks[j + 1] == "("
                              and toks[j] not in KEYWORDS and toks[j - 1] not in (".", "->")):
                            calls.append(toks[j])
                        j += 1
                    defs[name] = ("static" in toks[since:k], calls)
                    i = j
                    since = j
                    continue
            depth += 1
        elif t == "}":
            depth -= 1
        i += 1
    return defs


def walk(root, sources, start, skip_prefixes=(), stop_at=(), calls=None):
    """The files entered from function start (see the module comment), as a list of file paths.

    calls, when a list, receives (depth, caller file, callee file, callee) for every call into another file.

    sources: the C files (relative to root) whose functions are known; calls into files under
    skip_prefixes (helpers every stage shares, such as text formats and error lines) are not
    steps and are not followed; a function named in stop_at is entered but not followed (the
    start of another path, such as an importer's format reader).
    """
    by_file = {rel: functions(os.path.join(root, rel)) for rel in sources if rel.endswith(".c")}
    glob = {}
    for rel, defs in by_file.items():
        for name, (is_static, _) in defs.items():
            if not is_static:
                glob.setdefault(name, []).append(rel)

    def resolve(rel, name):
        d = by_file[rel].get(name)
        if d is not None:
            return rel
        hits = glob.get(name, [])
        return hits[0] if len(hits) == 1 else None

    start_file = resolve(next(iter(by_file)), start) if start in glob else None
    if start_file is None:
        return []
    trip = [start_file]
    seen = set()

    def visit(rel, name, depth):
        seen.add((rel, name))
        for callee in by_file[rel][name][1]:
            target = resolve(rel, callee)
            if target is None or target.startswith(tuple(skip_prefixes)):
                continue
            if target != rel:  # a call into another file: a file entered
                if trip[-1] != target:
                    trip.append(target)
                if calls is not None:
                    calls.append((depth, rel, target, callee))
            if (target, callee) not in seen and callee not in stop_at:
                visit(target, callee, depth + (target != rel))

    visit(start_file, start, 0)
    return trip


def trip_counts(trip):
    """(steps, files, returns) of a trip: every file entered, the distinct ones, and entries of one seen before."""
    return len(trip), len(set(trip)), len(trip) - len(set(trip))


def object_source(build, obj):
    """The source file (relative to the source root) an object of the build tree was compiled from, or None."""
    rel = os.path.relpath(obj, build)
    parts = rel.split(os.sep)
    if "CMakeFiles" not in parts:
        return None
    k = parts.index("CMakeFiles")
    src = os.path.join(*(parts[:k] + parts[k + 2:]))
    return src[:-2] if src.endswith(".o") else None


def link_edges(root, build, tops=("analyzer", "tracer")):
    """{source file: {source file it uses}} from the objects under build/tops (nm), and the symbols behind each edge.

    Returns (edges, why) where why[(a, b)] lists a few symbols a takes from b. Raises OSError when nm cannot run.
    """
    defined, undefined = {}, {}
    objects = {}
    for top in tops:
        for d, _, files in os.walk(os.path.join(build, top)):
            for f in files:
                if f.endswith(".c.o"):
                    src = object_source(build, os.path.join(d, f))
                    if src is not None and os.path.exists(os.path.join(root, src)):
                        objects[os.path.join(d, f)] = src
    names = sorted(objects)
    for i in range(0, len(names), 200):  # one nm per 200 objects: "OBJECT: SYMBOL TYPE ..." lines
        out = subprocess.run(["nm", "-A", "-P"] + names[i:i + 200], check=True, capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            head, _, rest = line.partition(": ")
            fields = rest.split()
            if head not in objects or len(fields) < 2:
                continue
            src, sym, kind = objects[head], fields[0], fields[1]
            if kind == "U":
                undefined.setdefault(src, set()).add(sym)
            elif kind.isupper() and kind not in "UVW":
                defined.setdefault(sym, set()).add(src)
    edges, why = {}, {}
    for src, syms in undefined.items():
        for sym in sorted(syms):
            owners = defined.get(sym, set()) - {src}
            if len(owners) != 1:
                continue  # the C library, SQLite, CUPTI, or a symbol defined by several files
            dst = next(iter(owners))
            edges.setdefault(src, set()).add(dst)
            why.setdefault((src, dst), []).append(sym)
    return edges, why
