"""Which build of the hot path runs: the engine compiled by mypyc, or its pure Python.

``make compiled`` (and a wheel built where a C compiler is: setup.py) compiles ``COMPILED`` with
mypyc into extension modules beside their sources, and writes ``MANIFEST`` beside the package
root: each source's digest, and each class's annotations as written. The ``croupier`` package
imports this module before anything else, and its finder loads each of ``COMPILED``:
- from its source when ``CROUPIER_PURE=1`` asks for pure Python (the tests run both), or when
  the build is stale (a source changed since it was compiled, as in a development tree after
  an edit: old code must never run), or absent;
- else from its extension module, whose classes are then given back their annotations (mypyc
  keeps only the erased types: ``tuple`` for ``tuple[Card, ...]``), so that
  ``typing.get_type_hints`` reads the same on both paths (the options and the proto codecs are
  built from it).
``build()`` says which path is live: ``croupier --version`` and the referee's start line show it.
No other import of the package: this runs before the rest of it exists.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

COMPILED = (
    "croupier.engine.cards",
    "croupier.engine.core",
    "croupier.engine.draws",
    "croupier.engine.games.chinese_ten",
    "croupier.engine.games.pair_battle",
    "croupier.engine.games.platinum_fish",
    "croupier.engine.games.spoil_five",
)
"""What mypyc compiles, in one group (calls between them stay native): the engine, whose rules
run at every decision. Not engine/rng.py: a wrapper whose cost is random.Random's, and which tests
subclass (an interpreted class cannot inherit a compiled one); its shuffle and die are drawn by
engine/draws.py, compiled. Not wire/convert.py: measured,
its codecs ran 5-15% slower compiled (its encoders are Python it generates at start, which mypyc
never sees, and the compiled module only adds conversions at their calls; docs/benchmarks.md)."""

MANIFEST = "compiled.json"
GROUP = "croupier_compiled"
"""The shared library holding every compiled module: croupier_compiled__mypyc.*.so, at the top
level (mypyc finds its modules' files from the library's folder)."""
PURE = "CROUPIER_PURE"

ROOT = Path(__file__).parent.parent
"""The croupier package's folder (gen/croupier in a development tree, through its links)."""

Annotations = dict[str, dict[str, str]]  # class qualname -> field -> annotation as written


def source(module: str, root: Path = ROOT) -> Path:
    """The .py file of one of ``COMPILED``."""
    return root.joinpath(*module.split(".")[1:]).with_suffix(".py")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def annotations_as_written(path: Path) -> Annotations:
    """Every class's own annotations in a source file, as text (what ``from __future__ import
    annotations`` leaves in ``__annotations__``), by qualified name."""
    found: Annotations = {}

    def visit(body: Sequence[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = f"{prefix}{node.name}"
                fields = {
                    item.target.id: ast.unparse(item.annotation)
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                }
                if fields:
                    found[name] = fields
                visit(node.body, f"{name}.")

    visit(ast.parse(path.read_text(encoding="utf-8")).body, "")
    return found


def manifest(root: Path = ROOT) -> dict[str, Any]:
    """What a build records of the sources it compiled (setup.py writes it after the build)."""
    return {
        "sources": {module: digest(source(module, root)) for module in COMPILED},
        "annotations": {module: annotations_as_written(source(module, root)) for module in COMPILED},
    }


def compiled_build(root: Path = ROOT) -> tuple[dict[str, Annotations] | None, str]:
    """If the compiled build under ``root`` is live, the annotations it recorded by module, else
    None; and what runs, in words ("compiled (mypyc)", "pure Python (why)")."""
    if os.environ.get(PURE, "") not in ("", "0"):
        return None, f"pure Python ({PURE}={os.environ[PURE]})"
    try:
        recorded = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, "pure Python (not compiled: make compiled)"
    paths = {module: source(module, root) for module in COMPILED}
    changed = [
        module
        for module, path in paths.items()
        if not path.exists() or digest(path) != recorded["sources"].get(module)
    ]
    if changed:
        names = ", ".join(str(paths[m].relative_to(root)) for m in changed)
        warnings.warn(
            f"croupier: the compiled build is stale ({names} changed since): running pure Python; "
            "make compiled rebuilds it",
            stacklevel=2,
        )
        return None, f"pure Python (the compiled build is stale: {names} changed)"
    annotations: dict[str, Annotations] = recorded["annotations"]
    return annotations, "compiled (mypyc)"


class _Finder(importlib.abc.MetaPathFinder):
    """Finds each of ``COMPILED`` as the live build says: its extension module or its source."""

    def __init__(self, annotations: dict[str, Annotations] | None) -> None:
        self.annotations = annotations
        kind = (
            (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES)
            if annotations is None
            else (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES)
        )
        self.kind = kind

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in COMPILED or path is None:
            return None
        for entry in path:
            spec = importlib.machinery.FileFinder(entry, self.kind).find_spec(fullname)
            if spec is not None and spec.loader is not None:
                if self.annotations is not None:
                    spec.loader = _Annotating(spec.loader, self.annotations)
                return spec
        if self.annotations is not None:
            raise ImportError(f"{fullname}: the compiled build has no extension module for it: make compiled")
        return None


class _Annotating(importlib.abc.Loader):
    """Loads an extension module, then gives the classes of every compiled module imported by now
    their annotations as written: a compiled module imports the others of its group directly, not
    through importlib, so this loader sees only the first of them."""

    def __init__(self, loader: importlib.abc.Loader, annotations: dict[str, Annotations]) -> None:
        self.loader = loader
        self.annotations = annotations

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        done = [name for name in self.annotations if name == module.__name__ or _initialized(name)]
        for name in done:
            for qualname, fields in self.annotations.pop(name).items():
                cls: Any = sys.modules[name]
                for part in qualname.split("."):
                    cls = getattr(cls, part)
                cls.__annotations__ = dict(fields)


def _initialized(name: str) -> bool:
    """Whether module ``name`` is imported and done (not one whose import is under way)."""
    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


_ANNOTATIONS, _WHY = compiled_build()
if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _Finder(_ANNOTATIONS))


def compiled_modules() -> list[str]:
    """Which of ``COMPILED`` are running as extension modules (imports them)."""
    import importlib

    return [
        name
        for name in COMPILED
        if str(importlib.import_module(name).__file__).endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    ]


def build() -> str:
    """Which path is live, from the modules really imported: "compiled (mypyc)" or "pure Python
    (why)"."""
    native = compiled_modules()
    if len(native) == len(COMPILED):
        return _WHY
    if native:  # the finder loads all or none: this would be a bug
        return f"mixed: {', '.join(native)} compiled, the rest pure Python"
    return _WHY if _ANNOTATIONS is None else "pure Python"
