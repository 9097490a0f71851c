"""The import graph of engine/, wire/, server/ and clients/: no module and no room reaches itself
through its imports (counting imports inside functions and under TYPE_CHECKING too, since each is a
circle a reader must untangle), and every arrow points one way: engine <- wire <- server <- clients
(the rules stay pure, the codec imports neither side, the referee imports none of its clients).
The SDK reaches no module of the referee. Inside clients/, the rooms keep to theirs: the SDK imports
only itself, the engine and the wire (and the connection options it shares with every command), and
nothing builds on the author's loop but the command line (which imports it by name, at run time)."""

from __future__ import annotations

import ast
import itertools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "wire", "server", "clients")


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


FORBIDDEN = {
    "croupier.engine": ("croupier.wire", "croupier.server", "croupier.clients"),  # the rules stay pure
    "croupier.wire": ("croupier.server", "croupier.clients"),  # both sides import it: it imports neither
    "croupier.server": ("croupier.clients",),  # the referee knows nothing of what runs against it
}


def wrong_way(graph: dict[str, dict[str, int]]) -> list[str]:
    """Every import against the house's arrows (FORBIDDEN), with its file and line."""
    return [
        f"{source} -> {target} ({module_files()[source].relative_to(ROOT)}:{line})"
        for source, edges in graph.items()
        for room, banned in FORBIDDEN.items()
        if source == room or source.startswith(room + ".")
        for target, line in edges.items()
        if any(target == b or target.startswith(b + ".") for b in banned)
    ]


def test_every_arrow_points_the_way_the_house_says() -> None:
    found = wrong_way(import_graph())
    assert not found, "imports against the arrows (engine -> wire -> server -> clients):\n" + "\n".join(found)


def room_of(module: str) -> str:
    """A room: a module directly in one of our four packages (croupier.clients.sdk), or a
    package below them as a whole (croupier.clients.web, croupier.engine.games)."""
    return ".".join(module.split(".")[:3])


def room_graph(graph: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    rooms: dict[str, dict[str, int]] = {}
    for source, edges in graph.items():
        into = rooms.setdefault(room_of(source), {})
        for target in edges:
            if room_of(target) != room_of(source):
                into.setdefault(room_of(target), 0)
                rooms.setdefault(room_of(target), {})
    return rooms


def test_no_room_imports_itself_around_a_circle() -> None:
    """Two rooms that import each other (the spectator and the web viewer once did) are one room
    in two places: what both need goes in a room of its own (clients/scenes.py)."""
    rooms = room_graph(import_graph())
    assert "croupier.clients.web" in rooms and "croupier.clients.tournament" in rooms
    found = [" -> ".join(circle) for circle in circles(rooms)]
    assert not found, "rooms in a circle:\n" + "\n".join(found)


def test_a_bot_imports_nothing_of_the_referee() -> None:
    """The SDK (and so every Python bot) reaches the engine, the wire and the stubs only."""
    graph = import_graph()
    reached, todo = set(), ["croupier.clients.sdk"]
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo.extend(graph.get(module, {}))
    assert "croupier.wire.convert" in reached, "the graph follows the SDK's imports"
    server = sorted(m for m in reached if m.startswith(("croupier.server", "croupier.clients.tournament")))
    assert not server, f"the SDK reaches the referee: {server}"


def test_croupier_bot_loads_no_referee_code() -> None:
    """The CLI imports only the command asked for (at run time, which the graph above cannot see):
    a jailed bot is shown no croupier.server (clients/isolation/jail.py)."""
    probe = (
        "import contextlib, sys\n"
        "from croupier.clients import cli\n"
        "with contextlib.suppress(SystemExit):\n"
        "    cli.main(['bot', '--help'])\n"
        "referee = ('croupier.server', 'croupier.clients.tournament')\n"
        "print(sorted(m for m in sys.modules if m.startswith(referee)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "usage: croupier bot" in done.stdout
    assert done.stdout.splitlines()[-1] == "[]", done.stdout.splitlines()[-1]


ROOM_IMPORTS_ONLY = {
    # what a bot installs: tests/e2e/test_wheel.py runs one with croupier.server taken out
    "croupier.clients.sdk": (
        "croupier.clients.sdk",
        "croupier.engine",
        "croupier.wire",
        "croupier.clients.connection",  # --server, --token: the SDK's and every command's
    ),
    "croupier.clients.connection": (),  # below the SDK: nothing of ours
}
"""A room -> all it may import of ours."""
LEAVES = {"croupier.clients.author": ("croupier.clients.author", "croupier.clients.cli")}
"""A room -> the only modules that may import it: the author's loop (match, SPRT, in-process play)
is built on, not built upon; bench/ and the CLI (by name) run it."""


def _inside(module: str, rooms: tuple[str, ...]) -> bool:
    return any(module == room or module.startswith(room + ".") for room in rooms)


def out_of_room(graph: dict[str, dict[str, int]]) -> list[str]:
    """Every import that ROOM_IMPORTS_ONLY or LEAVES forbids, with its file and line (or line alone
    for a module that is not ours: the checks' own tests)."""
    files = module_files()

    def where(source: str, line: int) -> str:
        return f"{files[source].relative_to(ROOT)}:{line}" if source in files else str(line)

    found = []
    for source, edges in graph.items():
        for target, line in edges.items():
            for room, allowed in ROOM_IMPORTS_ONLY.items():
                if _inside(source, (room,)) and not _inside(target, allowed):
                    found.append(
                        f"{source} -> {target} ({where(source, line)}): {room} imports only {allowed}"
                    )
            for room, importers in LEAVES.items():
                if _inside(target, (room,)) and not _inside(source, importers):
                    found.append(
                        f"{source} -> {target} ({where(source, line)}): only {importers} import {room}"
                    )
    return found


def test_each_room_of_clients_imports_only_what_it_may() -> None:
    graph = import_graph()
    assert "croupier.clients.sdk.protocol" in graph["croupier.clients.sdk.bot"], "the graph sees the SDK"
    found = out_of_room(graph)
    assert not found, "imports out of their room:\n" + "\n".join(found)


def test_the_room_check_finds_an_import_out_of_its_room() -> None:
    """The check itself: the SDK importing results, the web viewer building on the author's loop."""
    made_up = {
        "croupier.clients.sdk.bot": {"croupier.clients.results.store": 3, "croupier.wire.errors": 4},
        "croupier.clients.web.app": {"croupier.clients.author.match_run": 5},
        "croupier.clients.author.cli": {"croupier.clients.author.match_run": 6},
        "croupier.clients.cli": {"croupier.clients.author.cli": 7},
    }
    assert [line.split(" (")[0] for line in out_of_room(made_up)] == [
        "croupier.clients.sdk.bot -> croupier.clients.results.store",
        "croupier.clients.web.app -> croupier.clients.author.match_run",
    ]


def test_the_arrow_check_finds_an_arrow_the_wrong_way() -> None:
    """The check itself: an import of the referee by the wire, or of a client by the referee, is named."""
    made_up = {"croupier.wire.convert": {"croupier.server.match": 4}, "croupier.server.app": {}}
    assert wrong_way(made_up) == ["croupier.wire.convert -> croupier.server.match (wire/convert.py:4)"]
    assert room_graph({"croupier.clients.web.hub": {"croupier.clients.terminal.replay_cli": 1},
                       "croupier.clients.terminal.replay_cli": {"croupier.clients.web.html_file": 2}}) == {
        "croupier.clients.web": {"croupier.clients.terminal": 0},
        "croupier.clients.terminal": {"croupier.clients.web": 0},
    }  # fmt: skip


def test_the_check_finds_a_circle_and_names_its_lines() -> None:
    """The check itself: a made-up graph with a circle of three and a tail is reported as one circle."""
    graph = {"a": {"b": 3}, "b": {"c": 7}, "c": {"a": 9, "d": 1}, "d": {}}
    assert circles(graph) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b": 1}, "b": {}}) == []
