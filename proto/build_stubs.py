"""Generate the ``croupier.v1`` gRPC stubs from proto/ into the committed namespace, gen/croupier/.

One recipe for both builds: ``make stubs`` (the development tree, with mypy stubs where
mypy-protobuf is installed) and the wheel (setup.py). Usage: ``python proto/build_stubs.py``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"
PACKAGE = ROOT / "gen" / "croupier"
"""The namespace, committed so that an editor or any static reader resolves ``croupier.*`` without
a build: its root module, and links that make engine/, wire/, server/ and clients/ its subpackages
(croupier.engine and so on). Only v1/ (the stubs) and the compiled build are generated into it."""
MAPPED = ("engine", "wire", "server", "clients")  # top-level folders that are croupier.<name>


def _plugin(name: str) -> str | None:
    """A protoc plugin installed beside this Python, or on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def build() -> None:
    """Write gen/croupier/v1/*, replacing what was there."""
    from grpc_tools import protoc  # a build dependency, imported only when building

    out = PACKAGE.parent
    shutil.rmtree(PACKAGE / "v1", ignore_errors=True)
    (PACKAGE / "v1").mkdir()
    (PACKAGE / "v1" / "__init__.py").touch()
    protos = sorted(str(p.relative_to(PROTO)) for p in (PROTO / "croupier" / "v1").glob("*.proto"))
    args = ["protoc", f"-I{PROTO}", f"--python_out={out}", f"--grpc_python_out={out}"]
    mypy, mypy_grpc = _plugin("protoc-gen-mypy"), _plugin("protoc-gen-mypy_grpc")
    if mypy and mypy_grpc:  # typed stubs (.pyi) where mypy-protobuf is installed
        args += [f"--plugin=protoc-gen-mypy={mypy}", f"--plugin=protoc-gen-mypy_grpc={mypy_grpc}"]
        args += [f"--mypy_out=quiet:{out}", f"--mypy_grpc_out=quiet:{out}"]
    proto_include = Path(protoc.__file__).parent / "_proto"
    if protoc.main([*args, f"-I{proto_include}", *protos]) != 0:
        raise SystemExit("protoc failed on proto/croupier/v1/*.proto")


if __name__ == "__main__":
    if len(sys.argv) != 1:
        raise SystemExit("usage: python proto/build_stubs.py")
    build()
