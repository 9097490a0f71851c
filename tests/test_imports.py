"""The import graph of engine/, server/ and clients/: no module reaches itself through its imports
(counting imports inside functions and under TYPE_CHECKING too, since each is a circle a reader
must untangle), and engine/ imports nothing from server/ or clients/ (the rules stay pure)."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "server", "clients")


def module_files() -> dict[str, Path]:
    """Every module of ours by its dotted name (``croupier.server.match``), packages included."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(("croupier", *parts))] = path
    return modules


def imported(path: Path, name: str, modules: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """(module of ours, line) for every import statement anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:  # ``from package import module``
                    yield f"{base}.{alias.name}", node.lineno
                elif base in modules:
                    yield base, node.lineno


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {module it imports: the line of its first such import}."""
    modules = module_files()
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, {})
        for target, line in imported(path, name, modules):
            if target != name:
                edges.setdefault(target, line)
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One circle per strongly connected group of modules (Tarjan), each as the path around it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_path_around(graph, group) for group in groups]


def _path_around(graph: dict[str, dict[str, int]], group: set[str]) -> list[str]:
    """The shortest way from the group's first module back to itself, inside the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node]):
                if target == start:
                    return [*paths[node], start]
                if target in group and target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError(f"no circle through {start}")


def spelled_out(graph: dict[str, dict[str, int]], circle: list[str]) -> str:
    steps = [circle[0]]
    for source, target in itertools.pairwise(circle):
        path = module_files()[source].relative_to(ROOT)
        steps.append(f"-> {target} ({path}:{graph[source][target]})")
    return " ".join(steps)


def test_no_module_imports_itself_around_a_circle() -> None:
    graph = import_graph()
    assert graph["croupier.server.match"], "the graph sees our imports"
    found = [spelled_out(graph, circle) for circle in circles(graph)]
    assert not found, "import circles:\n" + "\n".join(found)


def test_the_engine_imports_nothing_from_the_server_or_clients() -> None:
    graph = import_graph()
    found = [
        f"{source} -> {target} ({module_files()[source].relative_to(ROOT)}:{line})"
        for source, edges in graph.items()
        if source.startswith("croupier.engine")
        for target, line in edges.items()
        if not target.startswith("croupier.engine")
    ]
    assert not found, "engine/ reaches outside itself:\n" + "\n".join(found)


def test_the_check_finds_a_circle_and_names_its_lines() -> None:
    """The check itself: a made-up graph with a circle of three and a tail is reported as one circle."""
    graph = {"a": {"b": 3}, "b": {"c": 7}, "c": {"a": 9, "d": 1}, "d": {}}
    assert circles(graph) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b": 1}, "b": {}}) == []
