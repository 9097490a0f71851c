"""A bot registered on a running referee gets matches: ``croupier register mybot``, the bot
connected with that token, then a tournament (or ``croupier match --server``) that seats it by name
with ``registered = true`` (``--bot registered:mybot``), as the README tells a newcomer."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.clients.terminal import croupier
from tests.clients.test_first_steps import WAIT, free_port, no_referee, read_until, run, serve, stop
from tests.e2e.test_wheel import readme_bot

__all__ = ["serve"]  # the fixture

TOURNAMENT = """\
name = "registered"
deals = "fresh"
[clock]
decision_ms = 2000
[[games]]
game = "platinum_fish"
seats = 2
[[bots]]
name = "mybot"
registered = true
[[bots]]
name = "random"
command = "croupier bot --strategy random"
"""


def connected_bot(tmp_path: Path, address: str) -> tuple[subprocess.Popen[str], str]:
    """The README's bot, registered as mybot and connected with its token; and the token."""
    registered = run("register", "mybot", "--server", address, cwd=tmp_path)  # the admin token: found
    assert registered.returncode == 0, registered.stderr
    [token] = registered.stdout.splitlines()
    (tmp_path / "mybot.py").write_text(readme_bot())
    bot = subprocess.Popen(
        [sys.executable, "mybot.py", "--server", address, "--token", token],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    read_until(bot, "stderr", "connected to")
    return bot, token


def test_a_tournament_seats_a_registered_bot_by_name_and_it_plays_with_its_own_token(
    serve: tuple[str, Path], tmp_path: Path
) -> None:
    address, _ = serve
    bot, _ = connected_bot(tmp_path, address)
    try:
        (tmp_path / "t.toml").write_text(TOURNAMENT)
        # no --admin-token: the runner finds the local referee's, as register did
        runner = subprocess.run(
            croupier("tournament", "t.toml", "--server", address, "--plain"),
            cwd=tmp_path, capture_output=True, text=True, timeout=4 * WAIT,
        )  # fmt: skip
        assert runner.returncode == 0, runner.stdout + runner.stderr
        assert re.search(r"│ mybot +│", runner.stdout), runner.stdout
        listed = run("matches", "--tournament", "registered", cwd=tmp_path)
        assert listed.returncode == 0 and listed.stdout.count("mybot") == 2, listed.stdout  # both rotations
    finally:
        stop(bot)
    assert bot.stderr is not None
    log = bot.stderr.read()
    assert len(re.findall(r"match \S+ over: place", log)) == 2, log  # its stream, its token, its matches


def test_croupier_match_seats_a_registered_bot_on_the_server_it_names(
    serve: tuple[str, Path], tmp_path: Path
) -> None:
    address, _ = serve
    bot, _ = connected_bot(tmp_path, address)
    try:
        played = run(
            "match", "platinum_fish", "--server", address, "--bot", "registered:mybot", "--bot", "random",
            "--games", "1", "--plain", cwd=tmp_path,
        )  # fmt: skip
        assert played.returncode == 0, played.stdout + played.stderr
        assert re.search(r"│ mybot +│ +2 +│", played.stdout), played.stdout
    finally:
        stop(bot)


def test_a_registered_bot_is_one_line_when_it_cannot_be_seated(
    serve: tuple[str, Path], tmp_path: Path
) -> None:
    address, _ = serve
    (tmp_path / "t.toml").write_text(TOURNAMENT)
    alone = run("tournament", "t.toml", "--plain", cwd=tmp_path)
    assert (alone.returncode, alone.stderr.splitlines()) == (
        2,
        ["mybot: registered = true seats a bot registered on a running referee: give that referee, "
         "--server HOST:PORT"],
    )  # fmt: skip
    unknown = run("tournament", "t.toml", "--server", address, "--plain", cwd=tmp_path)
    assert (unknown.returncode, unknown.stderr.splitlines()) == (
        1,
        [f"no bot is registered as mybot on {address}: croupier register mybot --server {address}"],
    )
    matched = run("match", "platinum_fish", "--bot", "registered:mybot", "--bot", "random", cwd=tmp_path)
    assert matched.returncode == 2 and "give that referee, --server HOST:PORT" in matched.stderr


def test_without_a_referee_register_and_the_runner_say_so_not_that_the_token_is_missing(
    tmp_path: Path,
) -> None:
    address = f"127.0.0.1:{free_port()}"
    register = run("register", "mybot", "--server", address, cwd=tmp_path)
    assert (register.returncode, register.stderr.splitlines()) == (
        2,
        [f"croupier register: {no_referee(address)}"],
    )
    (tmp_path / "t.toml").write_text(TOURNAMENT)
    runner = run("tournament", "t.toml", "--server", address, cwd=tmp_path)
    assert (runner.returncode, runner.stderr.splitlines()) == (2, [f"--server: {no_referee(address)}"])
