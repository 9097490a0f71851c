"""Tournament bots in containers (``image = ...``): the bundled bots run from croupier's image,
leftovers are reaped, and a bot that attacks its sandbox is stopped by it and forfeits while
the referee and the other bots play on."""

from __future__ import annotations

import contextlib
import io
import ipaddress
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from croupier.clients.isolation import containers
from tests.docker.images import IMAGE, LABEL

if TYPE_CHECKING:
    import docker

pytestmark = pytest.mark.timeout(900)  # the first test may build the base image: minutes, once

BOTS_IMAGE = IMAGE.replace("croupier:", "croupier-sandboxed:")
SANDBOX_CLOCK = """
[clock]
decision_ms = 1000
bank_ms = 3000
max_timeouts = 1
grace_ms = 2000
"""
"""A bot stuck or dead forfeits at its first timeout, a few seconds; a live one has time to spare."""


def tournament(tmp_path: Path, bots: str, extra: str = "") -> Path:
    """A short platinum fish tournament file of these [[bots]]."""
    path = tmp_path / "t.toml"
    path.write_text(
        f'name = "boxed"\nconcurrency = 6\n{extra}\n[[games]]\ngame = "platinum_fish"\nseats = 2\n{bots}'
    )
    return path


def boxed(name: str, image: str, strategy: str, limits: str = "") -> str:
    """A [[bots]] entry of a bot in a container of ``image``, playing ``croupier bot``."""
    return f'[[bots]]\nname = "{name}"\nimage = "{image}"\ncommand = "bot --strategy {strategy}"\n{limits}\n'


PLAIN = '[[bots]]\nname = "plain"\ncommand = "croupier bot --strategy random"\n'
"""A bot run as a process, beside those in containers."""


def play(tmp_path: Path, file: Path, *options: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "croupier.clients.cli", "tournament", str(file),
        "--data", str(tmp_path / "data"), "--plain", "--samples", "50", *options,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def per_bot(tmp_path: Path) -> dict[str, tuple[int, int, int]]:
    """Each bot's (matches, forfeits, timeouts), from the results database."""
    with sqlite3.connect(tmp_path / "data" / "results.db") as db:
        rows = db.execute(
            "SELECT bot, count(*), sum(forfeited), sum(timeouts) FROM results GROUP BY bot"
        ).fetchall()
    return {bot: (matches, forfeits, timeouts) for bot, matches, forfeits, timeouts in rows}


def logs_of(tmp_path: Path) -> Path:
    return tmp_path / "data" / "logs" / "boxed-1"


def left_behind(client: docker.DockerClient, tmp_path: Path) -> list[str]:
    label = f"{containers.LABEL}={logs_of(tmp_path).absolute()}"
    return [c.name for c in client.containers.list(all=True, filters={"label": label})]


def test_the_bundled_bots_play_from_the_image_and_leave_no_container(
    docker_client: docker.DockerClient, croupier_image: str, tmp_path: Path
) -> None:
    # a container an earlier, killed run of this tournament left behind
    leftover = docker_client.containers.run(
        croupier_image,
        entrypoint=["sleep", "600"],
        labels={containers.LABEL: str(logs_of(tmp_path).absolute()), LABEL: "leftover"},
        network_mode="none",
        detach=True,
    )
    file = tournament(tmp_path, boxed("boxed", croupier_image, "heuristic") + PLAIN)
    played = play(tmp_path, file)
    assert played.returncode == 0, played.stdout + played.stderr
    assert "removed 1 bot container(s) left by an earlier run of this tournament" in played.stdout
    assert per_bot(tmp_path) == {"boxed": (2, 0, 0), "plain": (2, 0, 0)}
    log = (logs_of(tmp_path) / "boxed.log").read_text()
    assert "connected to unix:/run/croupier/referee.sock as boxed" in log
    assert log.count("over: place") == 2
    assert left_behind(docker_client, tmp_path) == []
    with contextlib.suppress(Exception):
        leftover.remove(force=True)


def test_a_missing_image_stops_the_tournament_at_the_start_naming_it(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    file = tournament(tmp_path, boxed("boxed", "croupier-no-such-image:0", "random") + PLAIN)
    played = play(tmp_path, file)
    assert played.returncode == 1
    assert "bot boxed: image croupier-no-such-image:0 is not on the Docker engine" in played.stderr


def test_on_a_served_referee_the_bots_in_containers_dial_its_unix_socket(
    docker_client: docker.DockerClient, croupier_image: str, tmp_path: Path
) -> None:
    socket_path = tmp_path / "socket" / "referee.sock"
    socket_path.parent.mkdir()
    serve = [
        sys.executable, "-m", "croupier.clients.cli", "serve", "--address", "127.0.0.1:0",
        "--data", str(tmp_path / "referee"), "--metrics-address", "off",
        "--admin-token", "admin-of-the-served", "--unix-socket", str(socket_path),
    ]  # fmt: skip
    referee = subprocess.Popen(serve, stdout=subprocess.PIPE, text=True)
    try:
        assert referee.stdout is not None
        port = referee.stdout.readline().strip().rpartition(":")[2]
        file = tournament(tmp_path, boxed("boxed", croupier_image, "random") + PLAIN)
        on_server = ["--server", f"127.0.0.1:{port}", "--admin-token", "admin-of-the-served"]
        refused = play(tmp_path, file, *on_server)
        assert refused.returncode == 1
        assert "bot boxed runs in a container" in refused.stderr + refused.stdout
        assert "give --unix-socket with --server" in refused.stderr + refused.stdout
        played = play(tmp_path, file, *on_server, "--unix-socket", str(socket_path))
        assert played.returncode == 0, played.stdout + played.stderr
        assert per_bot(tmp_path) == {"boxed": (2, 0, 0), "plain": (2, 0, 0)}
    finally:
        referee.terminate()
        referee.wait(30)


def test_a_killed_runner_leaves_no_container(
    docker_client: docker.DockerClient, croupier_image: str, tmp_path: Path
) -> None:
    away = '[[bots]]\nname = "away"\nexternal = true\n'  # keeps the tournament waiting
    # an external bot cannot be isolated from its duplicate set: the runner refuses duplicate deals
    file = tournament(tmp_path, boxed("boxed", croupier_image, "random") + away, 'deals = "fresh"')
    command = [sys.executable, "-m", "croupier.clients.cli", "tournament", str(file)]
    runner = subprocess.Popen(
        [*command, "--data", str(tmp_path / "data"), "--plain"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not left_behind(docker_client, tmp_path):  # the bot's container is up
            assert runner.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        # croupier's image checks a referee's health: a bot's container runs no such check
        (name,) = left_behind(docker_client, tmp_path)
        bot = docker_client.containers.get(name)
        assert bot.attrs["Config"]["Healthcheck"]["Test"] == ["NONE"]  # the image's check is off
        assert "Health" not in bot.attrs["State"]
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    deadline = time.monotonic() + 30  # the watchdogs stop the launchers, which remove their containers
    while left_behind(docker_client, tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left_behind(docker_client, tmp_path) == []


@pytest.fixture(scope="session")
def listener(docker_client: docker.DockerClient) -> Iterator[tuple[str, list[str]]]:
    """HOST:PORT on the Docker bridge's side of this machine, and who connected to it: a bot
    that reached it had a network (and nothing left the machine to find out)."""
    bridge = docker_client.networks.get("bridge").attrs["IPAM"]["Config"][0]
    gateway = bridge.get("Gateway") or str(next(ipaddress.ip_network(bridge["Subnet"]).hosts()))
    server = socket.create_server((gateway, 0))
    callers: list[str] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, peer = server.accept()
                callers.append(peer[0])
                connection.close()

    threading.Thread(target=accept, daemon=True).start()
    yield f"{gateway}:{server.getsockname()[1]}", callers
    server.close()


@pytest.fixture(scope="session")
def bots_image(
    docker_client: docker.DockerClient, croupier_image: str, listener: tuple[str, list[str]]
) -> str:
    """An image of the misbehaving bots, built FROM croupier's as docs/tournaments.md shows."""
    dockerfile = (
        "ARG BASE\nFROM ${BASE}\nCOPY sandboxed.py /bots/\nENV PYTHONPATH=/bots\nUSER root\n"
        "ARG TARGET\nENV CROUPIER_TEST_TARGET=${TARGET}\n"
    )
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, data in (("Dockerfile", dockerfile.encode()), ("sandboxed.py", None)):
            if data is None:
                tar.add(Path(__file__).with_name(name), arcname=name)
            else:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    docker_client.images.build(
        fileobj=context,
        custom_context=True,
        tag=BOTS_IMAGE,
        buildargs={"BASE": croupier_image, "TARGET": listener[0]},
        rm=True,
    )
    return BOTS_IMAGE


ATTACKS = {
    "network": ("NetworkBot", "", "Network is unreachable"),
    "write": ("WriterBot", "", "writing /dev/escaped: [Errno 13] Permission denied"),
    # refused to the bomb's forks, or to grpc's threads in the processes it copied
    "fork": ("ForkBot", "sandbox = { pids = 32, cpus = 0.5 }", "Resource temporarily unavailable"),
    "memory": ("HogBot", 'sandbox = { memory = "128m" }', "the bot was killed: it used more than its memory"),
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_bot_attacking_its_sandbox_is_stopped_and_forfeits(
    docker_client: docker.DockerClient,
    croupier_image: str,
    bots_image: str,
    listener: tuple[str, list[str]],
    tmp_path: Path,
    attack: str,
) -> None:
    bot, limits, stopped = ATTACKS[attack]
    attacker = boxed("attacker", bots_image, f"sandboxed:{bot}", limits)
    file = tournament(tmp_path, attacker + boxed("boxed", croupier_image, "random") + PLAIN, SANDBOX_CLOCK)
    played = play(tmp_path, file)
    assert played.returncode == 0, played.stdout + played.stderr
    results = per_bot(tmp_path)
    assert results["attacker"][:2] == (4, 4), results  # every match forfeited
    assert results["boxed"][:2] == (4, 0) and results["plain"][:2] == (4, 0), results
    log = (logs_of(tmp_path) / "attacker.log").read_text()
    assert stopped in log, log[-3000:]
    assert "WROTE" not in log
    assert listener[1] == []
    assert left_behind(docker_client, tmp_path) == []
    assert os.path.exists(tmp_path / "data" / "results.db")


def test_each_rotation_of_a_set_is_played_by_a_container_of_its_own(
    docker_client: docker.DockerClient, croupier_image: str, tmp_path: Path
) -> None:
    """processes = "per_rotation" with a bot in an image: no container holds two hands of one deal."""
    bots = boxed("boxed", croupier_image, "heuristic") + PLAIN
    played = play(tmp_path, tournament(tmp_path, bots, extra='processes = "per_rotation"'))
    assert played.returncode == 0, played.stdout + played.stderr
    logs = logs_of(tmp_path)
    assert sorted(p.name for p in logs.iterdir()) == [
        "boxed#0.log",
        "boxed#1.log",
        "plain#0.log",
        "plain#1.log",
    ]
    for rotation in (0, 1):
        log = (logs / f"boxed#{rotation}.log").read_text()
        assert f"connected to unix:/run/croupier/referee.sock as boxed#{rotation}" in log, log
        assert log.count("over: place") == 1, log
    assert left_behind(docker_client, tmp_path) == []
