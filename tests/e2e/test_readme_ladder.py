"""The README's bot path ends with a ladder: its four commands run as written (the referee of
``make serve`` on a free port here, and the viewer too), and the leaderboard it names shows the
README's bot rated."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.clients.terminal import REPO, croupier
from tests.clients.test_first_steps import WAIT, free_port, read_until, serve, stop
from tests.e2e.test_wheel import readme_bot

__all__ = ["serve"]  # the fixture


def ladder_steps() -> tuple[list[str], str]:
    """The README's ladder block, line by line, and the leaderboard address it gives."""
    readme = (REPO / "README.md").read_text()
    found = re.search(r"connect it to a ladder.*?```sh\n(.*?)```\n\n(.*?)\n\n", readme, re.S | re.I)
    assert found, "the README's bot path ends with connecting the bot to a ladder"
    lines = [line.partition("  #")[0].strip() for line in found.group(1).splitlines()]
    url = re.search(r"http://127\.0\.0\.1:8080/ladders/\w+", found.group(2))
    assert url, "the README says where the leaderboard is"
    return lines, url.group(0)


def command(line: str, address: str, web: str) -> list[str]:
    """A README line as run here: the test's referee and viewer addresses, the venv's croupier."""
    line = line.replace("127.0.0.1:50051", address).replace("127.0.0.1:8080", web)
    words = shlex.split(line)
    if words[0] == ".venv/bin/croupier":
        return croupier(*words[1:])
    assert words[0] == ".venv/bin/python", line
    return [sys.executable, *words[1:]]


def test_the_readme_ladder_seats_the_readme_bot_and_its_leaderboard_shows_it(
    serve: tuple[str, Path], tmp_path: Path
) -> None:
    address, _ = serve
    web = f"127.0.0.1:{free_port()}"
    (ladder, register, bot, house), leaderboard = ladder_steps()
    assert ladder.startswith(".venv/bin/croupier ladder tournaments/ladder.toml")
    assert register.startswith(".venv/bin/croupier register mybot")
    assert bot == ".venv/bin/python mybot.py --server 127.0.0.1:50051 --token TOKEN --max-matches 2"
    (tmp_path / "tournaments").mkdir()
    (tmp_path / "tournaments" / "ladder.toml").write_text((REPO / "tournaments" / "ladder.toml").read_text())
    (tmp_path / "mybot.py").write_text(readme_bot())
    running: list[subprocess.Popen[str]] = []
    env = {**os.environ, "CROUPIER_SERVER": address}  # the README's referee is on the default address

    def once(line: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command(line, address, web), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=WAIT
        )

    def start(line: str, **extra: str) -> subprocess.Popen[str]:
        pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        process = subprocess.Popen(
            command(line, address, web), cwd=tmp_path, env={**env, **extra}, text=True, **pipes
        )
        running.append(process)
        return process

    try:
        start(ladder)
        registered = once(register)
        assert registered.returncode == 0, registered.stderr
        read_until(start(bot.replace("TOKEN", registered.stdout.strip())), "stderr", "connected to")
        inner = re.fullmatch(r'CROUPIER_TOKEN="\$\((.*)\)" (.*)', house)
        assert inner, house  # the token in the environment: never on a command line
        house_token = once(inner.group(1)).stdout.strip()
        start(inner.group(2), CROUPIER_TOKEN=house_token)
        api = leaderboard.replace("127.0.0.1:8080", web).replace("/ladders/", "/api/ladders/")
        deadline = time.monotonic() + 3 * WAIT
        rated: list[str] = []
        while time.monotonic() < deadline and "mybot@1" not in rated:
            time.sleep(0.5)
            try:
                with urllib.request.urlopen(api, timeout=10) as response:
                    board = json.load(response)
            except OSError:
                continue  # the viewer is starting, or no set is over yet
            rated = [row["bot"] for game in board["games"] for row in game["ratings"]]
        assert "mybot@1" in rated and "house@1" in rated, rated
        with urllib.request.urlopen(leaderboard.replace("127.0.0.1:8080", web), timeout=10) as response:
            assert response.status == 200 and "ladder.js" in response.read().decode()
    finally:
        for process in reversed(running):
            stop(process)
