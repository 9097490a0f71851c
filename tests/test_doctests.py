"""The examples in docstrings (``deal_from``, ``Card.parse``, ``play_offline``...) run as doctests,
so none goes stale: every module of croupier.engine, .server and .clients is searched for them.
mypyc keeps no docstrings, so a module running compiled has its examples run on its pure Python,
in a process of its own (the compiled build is held to the same behaviour by tests/test_native.py)."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import croupier.clients
import croupier.engine
import croupier.server
from croupier.wire import native
from tests.doctest_runner import examples, run

REPO = Path(__file__).resolve().parents[1]

EXAMPLED = {
    "croupier.clients.results.sets",
    "croupier.clients.results.sprt",
    "croupier.clients.sdk.bot",
    "croupier.engine.cards",
    "croupier.engine.games.chinese_ten",
    "croupier.engine.games.pair_battle",
    "croupier.engine.games.platinum_fish",
    "croupier.engine.games.spoil_five",
}
"""Modules whose docstrings must keep examples: the SDK and what a bot author builds deals with."""


def modules() -> list[str]:
    names = []
    for package in (croupier.engine, croupier.server, croupier.clients):
        names.append(package.__name__)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]
    return sorted(names)


def run_pure(name: str) -> tuple[int, str]:
    """``run`` on a compiled module's pure Python, in a process that runs pure Python."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.doctest_runner", name], cwd=REPO,
        env={**os.environ, native.PURE: "1"}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    tries, failures = json.loads(done.stdout)
    return tries, failures


COMPILED = native.compiled_modules()
WITH_EXAMPLES = sorted(
    {name for name in modules() if name not in COMPILED and examples(importlib.import_module(name))}
    | {name for name in COMPILED if ">>>" in native.source(name).read_text(encoding="utf-8")}
)


def test_the_modules_that_must_keep_examples_have_them() -> None:
    assert sorted(EXAMPLED - set(WITH_EXAMPLES)) == []


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_the_docstring_examples_of_the_module_hold(name: str) -> None:
    tries, failures = run_pure(name) if name in COMPILED else run(importlib.import_module(name))
    assert tries and not failures, failures


def test_an_example_that_no_longer_holds_fails() -> None:
    module = ModuleType(
        "stale",
        """A module with a stale example.

    >>> 1 + 1
    3
    """,
    )
    tries, failures = run(module)
    assert tries == 1 and "Expected:\n    3\nGot:\n    2" in failures
