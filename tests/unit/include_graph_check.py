#!/usr/bin/env python3
"""The #include graph of librmcp's modules (src/core/<module>/).

Fails (exit 1) when the modules include each other in a cycle, or when a module includes
another module's private header: one whose name says detail/private/internal, or that opens
a `detail` namespace. Prints every module's dependencies, which ARCHITECTURE.md records.

    tests/unit/include_graph_check.py [SOURCE_DIR]    (default: the checkout holding this file)
"""
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.MULTILINE)
DETAIL_NAMESPACE = re.compile(r"^[ \t]*namespace\s+[\w:]*\bdetail\b", re.MULTILINE)
PRIVATE_NAME = re.compile(r"(^|[/_])(detail|private|internal)([/_.]|$)")


def read_graph(core):
    """module -> {module it includes -> [(file:line, header)]}, and the private headers."""
    modules = sorted(p.name for p in core.iterdir() if p.is_dir())
    private = set()
    for module in modules:
        for header in (core / module).rglob("*.hpp"):
            rel = header.relative_to(core).as_posix()
            if PRIVATE_NAME.search(rel) or DETAIL_NAMESPACE.search(header.read_text(errors="replace")):
                private.add(rel)
    graph = {m: {} for m in modules}
    for module in modules:
        for source in sorted((core / module).rglob("*")):
            if source.suffix not in (".hpp", ".cpp", ".h", ".inc"):
                continue
            text = source.read_text(errors="replace")
            for match in INCLUDE.finditer(text):
                target = match.group(1)
                first = target.split("/", 1)[0]
                if "/" not in target or first not in graph or first == module:
                    continue  # the module's own files, or not part of librmcp
                where = f"{source.relative_to(core.parent.parent).as_posix()}:{text.count(chr(10), 0, match.start()) + 1}"
                graph[module].setdefault(first, []).append((where, target))
    return graph, private


def cycles(graph):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def layers(graph):
    """Each module's layer: 0 for none, else one above its highest dependency (graph acyclic)."""
    layer = {}

    def depth(v):
        if v not in layer:
            layer[v] = 0  # a placeholder; only reached again through a cycle
            layer[v] = 1 + max((depth(w) for w in graph[v]), default=-1)
        return layer[v]

    for v in graph:
        depth(v)
    return layer


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    core = root / "src" / "core"
    graph, private = read_graph(core)
    problems = []
    for module, deps in graph.items():
        for dep, sites in deps.items():
            for where, target in sites:
                if target in private:
                    problems.append(f"{where}: {module} includes {target}, a private header of {dep}")
    for component in cycles(graph):
        problems.append("modules in a cycle: " + " ".join(component))
        for module in component:
            for dep in sorted(set(graph[module]) & set(component)):
                where, target = graph[module][dep][0]
                problems.append(f"  {module} -> {dep} ({where} includes {target})")

    print("librmcp module dependencies (src/core/<module> -> the modules it includes):")
    order = layers(graph) if not any(p.startswith("modules in a cycle") for p in problems) else {m: 0 for m in graph}
    for module in sorted(graph, key=lambda m: (order[m], m)):
        deps = " ".join(sorted(graph[module])) or "-"
        print(f"  {module:<9} {deps}")
    for problem in problems:
        print(f"include-graph-check: error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
