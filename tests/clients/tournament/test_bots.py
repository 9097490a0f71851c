"""Launched bots: placeholders filled, restarted when they exit, never outliving the runner."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from croupier.clients.tournament.launch import BotProcess, bot_environment, expand


def test_placeholders_are_filled_in() -> None:
    values = {"server": "127.0.0.1:5", "name": "ann"}
    assert expand(["bot", "--server={server}", "{name}-x"], values) == [
        "bot",
        "--server=127.0.0.1:5",
        "ann-x",
    ]


def test_an_unknown_placeholder_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown placeholder \{port\}.*known: \{server\}, \{name\}"):
        expand(["bot", "{port}"], {"server": "s", "name": "n"})


def test_the_token_is_no_placeholder_since_every_local_user_reads_a_command_line() -> None:
    with pytest.raises(ValueError, match=r"\{token\} would put the bot's token on its command line"):
        expand(["bot", "--token", "{token}"], {"server": "s", "name": "n"})


def test_the_environment_carries_the_settings_and_this_python_first_but_not_the_admin_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CROUPIER_ADMIN_TOKEN", "admin-secret")
    env = bot_environment("ann", "127.0.0.1:5", "t0k")
    assert "CROUPIER_ADMIN_TOKEN" not in env
    assert (env["CROUPIER_SERVER"], env["CROUPIER_TOKEN"], env["CROUPIER_BOT_NAME"]) == (
        "127.0.0.1:5",
        "t0k",
        "ann",
    )
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_watchdog_stops_the_bot_when_the_runner_is_gone(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    bot = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    watchdog = subprocess.Popen(
        [sys.executable, "-m", "croupier.clients.isolation.watchdog", sys.executable, "-c", bot],
        stdin=subprocess.PIPE,
    )
    while not pid_file.exists() or not pid_file.read_text():
        assert watchdog.poll() is None
    bot_pid = int(pid_file.read_text())
    assert alive(bot_pid)
    assert watchdog.stdin is not None
    watchdog.stdin.close()  # what the runner's death looks like from the watchdog
    watchdog.wait(30)
    for _ in range(3000):
        if not alive(bot_pid):
            break
        time.sleep(0.01)
    assert not alive(bot_pid)


async def test_a_bot_that_exits_is_restarted_and_logged(tmp_path: Path) -> None:
    notes: list[str] = []
    log = tmp_path / "logs" / "ann.log"
    bot = BotProcess(
        "ann",
        [sys.executable, "-c", "print('hello from ann'); raise SystemExit(3)"],
        os.environ,
        log,
        notes.append,
    )
    bot.start()
    while bot.starts < 2:
        await asyncio.sleep(0.05)
    await bot.stop()
    assert bot.exits[0] == 3
    assert notes[0].startswith("bot ann exited with code 3; restarting in 0.5s (log: ")
    assert log.read_text().count("hello from ann") >= 1
    assert "starting: " in log.read_text()


def test_a_command_whose_watchdog_died_while_starting_it_never_runs(tmp_path: Path) -> None:
    """Killed between its fork and the command's exec, a watchdog's request to kill the command
    with it comes too late to be kept: the command must see that and not start (it would be left
    running with nobody to stop it)."""
    from croupier.clients.isolation import watchdog

    ran = tmp_path / "ran"
    command = [sys.executable, "-c", f"open({str(ran)!r}, 'w').close()"]
    gone = subprocess.run(
        command, preexec_fn=lambda: watchdog._die_with(os.getpid()), timeout=60
    )  # in the child
    assert gone.returncode == 1 and not ran.exists()  # its parent is not the watchdog named
    parent = os.getpid()
    alive = subprocess.run(command, preexec_fn=lambda: watchdog._die_with(parent), timeout=60)
    assert alive.returncode == 0 and ran.exists()
