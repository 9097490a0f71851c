"""Runs one module's docstring examples: for tests/test_doctests.py, in its process or, for a module
mypyc compiled (it keeps no docstrings), in a pure Python one:

    CROUPIER_PURE=1 python -m tests.doctest_runner croupier.engine.cards    # prints [tries, failures]
"""

from __future__ import annotations

import doctest
import importlib
import json
import sys
from types import ModuleType

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def examples(module: ModuleType) -> list[doctest.DocTest]:
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, module.__name__)
    return [t for t in tests if t.examples]  # the finder keeps to objects defined in the module


def run(module: ModuleType) -> tuple[int, str]:
    """Run the module's doctests: how many examples ran, and the report of those that failed."""
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    for test in examples(module):
        runner.run(test, out=report.append)
    return runner.tries, "".join(report)


if __name__ == "__main__":
    print(json.dumps(run(importlib.import_module(sys.argv[1]))))
