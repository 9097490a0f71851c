"""The layout a newcomer reads: a file under server/ or clients/ over 600 lines says at its top
why it is kept whole (its docstring has "Over 600 lines"), or is split; a module's name says which
room it is in (no two share one); clients/ is rooms, with few modules loose at its top."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LONGEST = 600


def test_a_long_file_says_why_it_is_kept_whole() -> None:
    unexplained = []
    for package in ("wire", "server", "clients"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            text = path.read_text()
            lines = text.count("\n")
            if lines > LONGEST and "Over 600 lines" not in (ast.get_docstring(ast.parse(text)) or ""):
                unexplained.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not unexplained, "split these, or say atop each why not:\n" + "\n".join(unexplained)


def test_the_namespace_is_committed_so_a_static_reader_resolves_it() -> None:
    """An editor or code-navigation tool, given gen/ as a path (pyproject.toml says so for pyright,
    mypy_path for mypy), finds croupier.engine.cards in engine/cards.py with nothing built: the
    links of gen/croupier are in git, each to its top-level folder."""
    import subprocess

    staged = subprocess.run(
        ["git", "ls-files", "-s", "gen/croupier"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    modes = {line.split("\t")[1]: line.split()[0] for line in staged}
    assert modes.get("gen/croupier/__init__.py") == "100644", modes
    for name in ("engine", "wire", "server", "clients"):
        assert modes.get(f"gen/croupier/{name}") == "120000", f"gen/croupier/{name} is not a committed link"
        assert (ROOT / "gen" / "croupier" / name).resolve() == ROOT / name
    assert not [path for path in modes if path.startswith("gen/croupier/v1")], (
        "the stubs are built, not committed"
    )


SHARED_NAMES = {"__init__", "__main__", "cli", "app"}
"""Names every room may use: a package, its ``python -m``, its command line, its web or gRPC app."""


def modules_by_name(root: Path) -> dict[str, list[str]]:
    """Each module and package name under server/, wire/ and clients/ -> where it is."""
    found: dict[str, list[str]] = {}
    for package in ("server", "wire", "clients"):
        for path in sorted((root / package).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            where = path.relative_to(root)
            if path.name == "__init__.py":  # the package, by its folder's name
                found.setdefault(path.parent.name, []).append(f"{where.parent}/")
            else:
                found.setdefault(path.stem, []).append(str(where))
    return found


def test_no_two_modules_share_a_name() -> None:
    """A name says which room it stands in: no match.py in server/ and clients/, no bots.py beside a
    bots/ (the conventional names aside)."""
    shared = {
        name: places
        for name, places in modules_by_name(ROOT).items()
        if len(places) > 1 and name not in SHARED_NAMES
    }
    assert not shared, "rename one of each:\n" + "\n".join(f"{n}: {', '.join(p)}" for n, p in shared.items())


def test_clients_keeps_at_most_six_modules_loose_at_its_top() -> None:
    """clients/ is rooms, one per user: a module loose at its top is the CLI or what rooms share."""
    loose = sorted(path.name for path in (ROOT / "clients").glob("*.py"))
    assert len(loose) <= 6, f"put these in the room of whoever uses them: {loose}"
