"""The wheel's layout: engine/, wire/, server/ and clients/ become croupier.engine, croupier.wire,
croupier.server and croupier.clients; croupier is gen/croupier (committed), whose croupier.v1 (the
gRPC stubs) is generated from proto/ when missing, so `pip wheel .` and `python -m build` work on a
fresh clone. Metadata is in pyproject.toml.

The hot path (croupier.wire.native.COMPILED) is compiled by mypyc where a C compiler and
Python's headers are, and stays pure Python elsewhere or with CROUPIER_PURE=1 (the development
tree's editable install: there `make compiled` builds it in place, `setup.py build_ext --inplace`).
"""

import concurrent.futures
import json
import os
import runpy
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Any

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


def compile_side_by_side(compiler: Any) -> None:
    """The compiler's C sources compiled one per core at once (distutils compiles them in turn).
    Same objects, same flags: only the order of the work changes."""

    def compile(sources: list[str], output_dir: str | None = None, macros: Any = None,
                include_dirs: Any = None, debug: bool = False, extra_preargs: Any = None,
                extra_postargs: Any = None, depends: Any = None) -> list[str]:  # fmt: skip
        macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(  # type: ignore[attr-defined]
            output_dir, macros, include_dirs, sources, depends, extra_postargs
        )
        cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)  # type: ignore[attr-defined]

        def one(obj: str) -> None:
            source, ext = build[obj]
            compiler._compile(obj, source, ext, cc_args, extra_postargs, pp_opts)  # type: ignore[attr-defined]

        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
            list(pool.map(one, objects))  # list(): the first error is raised here
        return list(objects)

    compiler.compile = compile  # type: ignore[method-assign]


class BuildCompiled(build_ext):
    """build_ext running mypyc first (only when building: metadata commands need no compiler),
    then writing the manifest that says the build matches its sources (native.MANIFEST).

    mypyc writes one C file per module (multi_file), compiled side by side: the one 6 MB file of a
    single-file build kept one core busy for most of the build while the other waited; measured,
    the split costs the compiled engine no speed (docs/benchmarks.md, "make wheel")."""

    def finalize_options(self) -> None:
        if self.distribution.ext_modules:
            from mypyc.build import mypycify

            paths = [str(native.source(module, Path("gen/croupier"))) for module in native.COMPILED]
            self.distribution.ext_modules = mypycify(
                paths, group_name=native.GROUP, target_dir="build/mypyc", multi_file=True
            )
        super().finalize_options()

    def build_extensions(self) -> None:
        compile_side_by_side(self.compiler)
        super().build_extensions()

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
