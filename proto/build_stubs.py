"""Generate the ``croupier`` package root and its ``croupier.v1`` gRPC stubs from proto/.

One recipe for both builds: ``make stubs`` (the development tree, with mypy stubs and links
that map engine/, server/ and clients/ into the namespace) and the wheel (setup.py). Usage:
``python proto/build_stubs.py OUT_DIR [--links]``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"
MAPPED = ("engine", "wire", "server", "clients")  # top-level folders that are croupier.<name>

PACKAGE_INIT = '''"""Croupier: a referee service for card-game bots.

The rules are ``croupier.engine``, the referee ``croupier.server``, the SDK, bundled bots,
spectators and CLI ``croupier.clients``; ``croupier.v1`` holds the generated gRPC stubs.
"""

# First of all: it picks the compiled build of the hot path or its pure Python.
from croupier.wire import native as _native  # noqa: F401
'''


def _plugin(name: str) -> str | None:
    """A protoc plugin installed beside this Python, or on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def build(out: Path, links: bool = False) -> None:
    """Write OUT/croupier/__init__.py and OUT/croupier/v1/*, replacing what was there."""
    from grpc_tools import protoc  # a build dependency, imported only when building

    package = out / "croupier"
    shutil.rmtree(package, ignore_errors=True)
    (package / "v1").mkdir(parents=True)
    (package / "__init__.py").write_text(PACKAGE_INIT)
    (package / "py.typed").touch()
    (package / "v1" / "__init__.py").touch()
    protos = sorted(str(p.relative_to(PROTO)) for p in (PROTO / "croupier" / "v1").glob("*.proto"))
    args = ["protoc", f"-I{PROTO}", f"--python_out={out}", f"--grpc_python_out={out}"]
    mypy, mypy_grpc = _plugin("protoc-gen-mypy"), _plugin("protoc-gen-mypy_grpc")
    if mypy and mypy_grpc:  # typed stubs (.pyi) where mypy-protobuf is installed
        args += [f"--plugin=protoc-gen-mypy={mypy}", f"--plugin=protoc-gen-mypy_grpc={mypy_grpc}"]
        args += [f"--mypy_out=quiet:{out}", f"--mypy_grpc_out=quiet:{out}"]
    proto_include = Path(protoc.__file__).parent / "_proto"
    if protoc.main([*args, f"-I{proto_include}", *protos]) != 0:
        raise SystemExit("protoc failed on proto/croupier/v1/*.proto")
    if links:  # the development tree: croupier.engine is ../../engine, and so on
        for name in MAPPED:
            (package / name).symlink_to(os.path.relpath(ROOT / name, package), target_is_directory=True)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--links"]):
        raise SystemExit("usage: python proto/build_stubs.py OUT_DIR [--links]")
    build(Path(sys.argv[1]), links=sys.argv[2:] == ["--links"])
