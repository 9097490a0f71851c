"""Optional toolchains (Node.js, tmux, openssl, C++, Go, Chromium, Docker): a test that needs one
skips where it is missing, saying why, and fails under CI (``CI=true``), where .ci/run installs
every one of them, so a green CI has proved every such test."""

from __future__ import annotations

import os
import shutil

import pytest

UNDER_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(why: str) -> None:
    """Skip the calling test because ``why`` (a missing tool); under CI, fail it instead."""
    if UNDER_CI:
        pytest.fail(f"under CI every toolchain must be there, but: {why}", pytrace=False)
    pytest.skip(why)


def need(command: str, why: str) -> str:
    """The path of ``command`` on PATH; a skip (a failure under CI) saying ``why`` without it."""
    path = shutil.which(command)
    if path is None:
        missing(f"{command} not found: {why}")
    assert path is not None
    return path
