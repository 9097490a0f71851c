"""The wheel's layout: engine/, server/ and clients/ become croupier.engine, croupier.server and
croupier.clients; croupier and croupier.v1 (the gRPC stubs) are generated from proto/ into gen/
when missing, so `pip wheel .` and `python -m build` work on a fresh clone. Metadata is in
pyproject.toml."""

import runpy
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent
MAPPED = ("engine", "server", "clients")

if not (ROOT / "gen" / "croupier" / "v1" / "bots_pb2.py").exists():
    runpy.run_path(str(ROOT / "proto" / "build_stubs.py"))["build"](ROOT / "gen")

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
)
