"""The wheel's layout: engine/, wire/, server/ and clients/ become croupier.engine, croupier.wire,
croupier.server and croupier.clients; croupier is gen/croupier (committed), whose croupier.v1 (the
gRPC stubs) is generated from proto/ when missing, so `pip wheel .` and `python -m build` work on a
fresh clone. Metadata is in pyproject.toml.

The hot path (croupier.wire.native.COMPILED) is compiled by mypyc where a C compiler and
Python's headers are, and stays pure Python elsewhere or with CROUPIER_PURE=1 (the development
tree's editable install: there `make compiled` builds it in place, `setup.py build_ext --inplace`).
"""

import json
import os
import runpy
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
STUBS = runpy.run_path(str(ROOT / "proto" / "build_stubs.py"))
MAPPED: tuple[str, ...] = STUBS["MAPPED"]
GEN: Path = STUBS["PACKAGE"]
"""gen/croupier: the committed namespace (its links name each module by its path for mypyc:
gen/croupier/engine/core.py), the stubs generated into it when missing."""
if not (GEN / "v1" / "bots_pb2.py").exists():
    STUBS["build"]()

sys.path.insert(0, str(ROOT / "gen"))
from croupier.wire import native  # noqa: E402  (from the tree being built)


def cannot_compile() -> str | None:
    """Why the hot path stays pure Python here, or None."""
    if os.environ.get(native.PURE, "") not in ("", "0"):
        return f"{native.PURE}={os.environ[native.PURE]}"
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler}; Debian: apt-get install gcc)"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python headers (Python.h; Debian: apt-get install python3-dev)"
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "no mypyc (it comes with mypy)"
    return None


class BuildCompiled(build_ext):
    """build_ext running mypyc first (only when building: metadata commands need no compiler),
    then writing the manifest that says the build matches its sources (native.MANIFEST)."""

    def finalize_options(self) -> None:
        if self.distribution.ext_modules:
            from mypyc.build import mypycify

            paths = [str(native.source(module, Path("gen/croupier"))) for module in native.COMPILED]
            self.distribution.ext_modules = mypycify(paths, group_name=native.GROUP, target_dir="build/mypyc")
        super().finalize_options()

    def run(self) -> None:
        if self.inplace:  # a module no longer compiled would still be imported from an old build's file
            compiled = {native.source(module, ROOT).with_suffix("") for module in native.COMPILED}
            for name in MAPPED:
                for stale in (ROOT / name).rglob("*.so"):
                    if stale.with_name(stale.name.split(".")[0]) not in compiled:
                        stale.unlink()
        super().run()
        if self.extensions:
            if self.inplace:  # mypyc's library is top-level: beside the croupier package, on the path
                for library in ROOT.glob(f"{native.GROUP}__mypyc.*"):
                    library.replace(GEN.parent / library.name)
            folder = GEN if self.inplace else Path(self.build_lib) / "croupier"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / native.MANIFEST).write_text(json.dumps(native.manifest(GEN)))


WHY_PURE = cannot_compile()
if WHY_PURE is not None:
    print(f"croupier: the hot path stays pure Python ({WHY_PURE})")

setup(
    packages=["croupier", "croupier.v1"]
    + [f"croupier.{name}" for name in find_packages(include=[f"{m}*" for m in MAPPED])],
    package_dir={"croupier": "gen/croupier", **{f"croupier.{m}": m for m in MAPPED}},
    package_data={
        "croupier": ["py.typed"],
        "croupier.v1": ["*.pyi", "py.typed"],
        "croupier.engine": ["py.typed"],
        "croupier.clients.web": ["static/*"],
    },
    # a stand-in that makes the wheel a platform one; BuildCompiled puts mypyc's modules in its place
    ext_modules=[] if WHY_PURE else [Extension(f"{native.GROUP}__mypyc", sources=[])],
    cmdclass={"build_ext": BuildCompiled},
)
