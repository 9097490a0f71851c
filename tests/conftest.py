"""How `make test` shares the suite between pytest-xdist's workers (--dist loadgroup): a test file
stays on one worker, so its module fixtures are built once; the Docker tests share one worker, since
a session's end reaps every container the tests labelled, the other worker's too."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent
SHARED = {"docker": "docker"}
"""Folders under tests/ whose files must run on one worker, with their group's name."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(item.path).relative_to(TESTS)
        group = SHARED.get(path.parts[0], path.as_posix())
        item.add_marker(pytest.mark.xdist_group(group))
