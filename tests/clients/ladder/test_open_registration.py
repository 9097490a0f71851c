"""A ladder file's [registration]: strangers register on the ladder's own referee without the
admin token (``croupier register NAME --open``), within its limits, and only when it says so."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from croupier.clients import register
from croupier.clients.ladder import cli as ladder_cli
from croupier.clients.ladder.settings import parse
from tests.clients.terminal import croupier
from tests.clients.test_first_steps import read_until, run, stop

GAME = {"game": "platinum_fish", "seats": 2}


def ladder_args(data: Path) -> argparse.Namespace:
    return argparse.Namespace(server=None, listen="127.0.0.1:0", data=data)


async def test_a_ladder_file_opening_registration_lets_strangers_register_within_its_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = parse({"name": "open", "games": [GAME], "registration": {"open": True, "per_address": 1}})
    async with ladder_cli._referee(ladder_args(tmp_path), config.registration) as (target, _):
        assert await register._register(target, "", "", "stranger", "") == 0
        assert capsys.readouterr().out.startswith("bot_")  # its token, no admin token asked
        assert await register._register(target, "", "", "another", "") == 1
        assert capsys.readouterr().err == (
            f"croupier register: referee at {target}: RegisterBot: RESOURCE_EXHAUSTED: your address "
            "has made 1 open registrations in the last hour, the most this referee takes: try again "
            "in 60 minutes\n"
        )


def test_a_ladder_file_without_it_takes_no_stranger(tmp_path: Path) -> None:
    """A real ``croupier ladder`` (its referee embedded once per process) and ``croupier register --open``."""
    (tmp_path / "ladder.toml").write_text('name = "open"\n[[games]]\ngame = "platinum_fish"\nseats = 2\n')
    ladder = subprocess.Popen(
        croupier("ladder", "ladder.toml", "--listen", "127.0.0.1:0", "--plain"),
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        address = read_until(ladder, "stdout", "on the referee at ").split()[-1]
        done = run("register", "stranger", "--server", address, "--open", cwd=tmp_path)
    finally:
        stop(ladder)
    assert done.returncode == 1
    assert done.stderr == (
        f"croupier register: referee at {address}: RegisterBot: UNAUTHENTICATED: this referee takes no "
        "open registrations: RegisterBot needs the admin token as croupier-token metadata (ask the "
        "arena's organiser)\n"
    )
